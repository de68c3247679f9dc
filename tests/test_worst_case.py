"""Tests of theory.worst_case (the worst-case search of a bound) and of its path into the verdict and the report:
known maxima found, the budget kept exactly, the seed reproduces, a NaN or a counterexample turns the verdict red,
every argument validated by name, and the report's section and decisive figures."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.claims import LOOSE_RATIO, bound_verdict, threshold_verdict, worst_case_verdict
from theory.rates import BoundTracker, bound_ratio
from theory.report import decisive, render_markdown, worst_cases
from theory.worst_case import Dim, WorstCase, search_worst_case


def _quadratic(inst):
    """x (1 - x) <= 1/4 on [0, 1], equality at x = 1/2 only."""
    return inst["x"] * (1.0 - inst["x"]), 0.25


def _peak(inst):
    """exp(-|u - u*|^2) <= 1 over a log and a linear coordinate, the maximum inside the box."""
    return math.exp(-((inst["a"] - 0.37) ** 2 + (math.log10(inst["b"]) - 2.2) ** 2)), 1.0


# ----------------------------------------------------------------------------------- the search


def test_finds_interior_maximum():
    wc = search_worst_case(_peak, [Dim("a", 0.0, 1.0), Dim("b", 1.0, 1e4, "log")], budget=200, seed=1)
    assert wc.ratio == pytest.approx(1.0, abs=1e-4)
    assert wc.instance["a"] == pytest.approx(0.37, abs=0.02)
    assert math.log10(wc.instance["b"]) == pytest.approx(2.2, abs=0.02)
    assert wc.evaluations <= wc.budget == 200


def test_finds_a_counterexample_of_a_wrong_constant():
    """The bound x(1 - x) <= 0.24 is false near x = 1/2 only (|x - 1/2| < 0.1): the search must find it,
    with an explicit count of evaluations."""
    wrong = lambda inst: (inst["x"] * (1.0 - inst["x"]), 0.24)  # noqa: E731
    wc = search_worst_case(wrong, [Dim("x", 0.0, 1.0)], budget=40, seed=0)
    assert wc.ratio > 1.0
    assert abs(wc.instance["x"] - 0.5) < 0.1


def test_integer_and_log_integer_coordinates():
    wc = search_worst_case(lambda i: (i["n"] % 7, 6), [Dim("n", 1, 100, "int")], budget=60)
    assert wc.ratio == 1.0 and wc.instance["n"] % 7 == 6 and isinstance(wc.instance["n"], int)
    wc = search_worst_case(lambda i: (math.log(i["L"]), math.log(1000)), [Dim("L", 1, 1000, "log-int")], budget=30)
    assert wc.instance["L"] == 1000 and wc.ratio == 1.0


def test_budget_is_kept_and_distinct_instances_evaluated_once():
    calls = []

    def f(inst):
        calls.append(inst["n"])
        return inst["n"], 10

    wc = search_worst_case(f, [Dim("n", 1, 10, "int")], budget=500, seed=3)
    assert len(calls) == len(set(calls)) == wc.evaluations <= 10
    assert wc.ratio == 1.0
    for budget in (1, 2, 7, 33):
        seen = []
        search_worst_case(lambda i: (seen.append(1) or i["x"], 1.0), [Dim("x", 0.0, 1.0), Dim("y", 0.0, 1.0)],
                          budget=budget, seed=0)
        assert len(seen) <= budget


def test_seed_reproduces_and_changes_the_draw():
    dims = [Dim("a", 0.0, 1.0), Dim("b", 1.0, 1e4, "log")]
    one = search_worst_case(_peak, dims, budget=50, seed=5)
    two = search_worst_case(_peak, dims, budget=50, seed=5)
    other = search_worst_case(_peak, dims, budget=50, seed=6)
    assert one.instance == two.instance and one.ratio == two.ratio
    assert np.array_equal(one.trace, two.trace)
    assert other.instance != one.instance


def test_trace_is_the_running_best():
    wc = search_worst_case(_peak, [Dim("a", 0.0, 1.0), Dim("b", 1.0, 1e4, "log")], budget=80, seed=2)
    assert wc.trace.shape == (wc.evaluations,)
    assert np.all(np.diff(wc.trace) >= 0) and wc.trace[-1] == wc.ratio


def test_outside_hypotheses_counted_and_all_outside_refused():
    f = lambda i: None if i["x"] < 0.5 else (i["x"], 1.0)  # noqa: E731
    wc = search_worst_case(f, [Dim("x", 0.0, 1.0)], budget=40)
    assert wc.outside > 0 and wc.instance["x"] >= 0.5 and wc.ratio == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="outside the hypotheses"):
        search_worst_case(lambda i: None, [Dim("x", 0.0, 1.0)], budget=5)


def test_nan_is_kept_and_fails_the_verdict():
    f = lambda i: (math.nan if i["x"] > 0.9 else i["x"], 1.0)  # noqa: E731
    wc = search_worst_case(f, [Dim("x", 0.0, 1.0)], budget=64)
    assert math.isnan(wc.ratio)
    v = bound_verdict(bound_ratio([0.1], [1.0]).with_search(wc), {"ratio_max": 1.0})
    assert v.status == "fail"


def test_no_free_parameter_evaluates_the_fixed_instance():
    wc = search_worst_case(lambda i: (i["c"], 2.0), [], budget=10, fixed={"c": 1.0})
    assert (wc.ratio, wc.evaluations, wc.instance) == (0.5, 1, {"c": 1.0})


def test_fixed_parameters_reach_every_instance():
    wc = search_worst_case(lambda i: (i["x"] * i["k"], 3.0), [Dim("x", 0.0, 1.0)], budget=20, fixed={"k": 3})
    assert wc.instance["k"] == 3 and wc.ratio == pytest.approx(1.0, abs=1e-3)


def test_smallest_constant_is_printed_times_ratio():
    wc = search_worst_case(lambda i: (i["x"] * (1 - i["x"]), 4.0 * 0.25), [Dim("x", 0.0, 1.0)], budget=60,
                           constant=("C", 4.0))
    assert wc.smallest_constant == pytest.approx(1.0, rel=1e-3)
    m = wc.to_measured()
    assert m["constant"]["name"] == "C" and m["constant"]["stated"] == 4.0
    json.dumps(m, allow_nan=False)
    assert m["box"] == {"x": [0.0, 1.0, "linear"]}


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"budget": 0}, ValueError, "budget"), ({"budget": 2.5}, TypeError, "budget"), ({"budget": True}, TypeError, "budget"),
    ({"seed": -1}, ValueError, "seed"), ({"starts": -1}, ValueError, "starts"), ({"explore": 0.0}, ValueError, "explore"),
    ({"explore": 1.5}, ValueError, "explore"), ({"constant": ("C", -1.0)}, ValueError, "constant"),
    ({"constant": 2.0}, ValueError, "constant"), ({"fixed": {"x": 1.0}}, ValueError, "fixed"),
])
def test_arguments_refused_by_name(kwargs, exc, name):
    with pytest.raises(exc, match=f"`{name}`"):
        search_worst_case(_quadratic, [Dim("x", 0.0, 1.0)], **kwargs)


def test_ratio_and_dims_refused():
    with pytest.raises(TypeError, match="`ratio`"):
        search_worst_case(3, [Dim("x", 0.0, 1.0)])
    with pytest.raises(TypeError, match="`dims`"):
        search_worst_case(_quadratic, [("x", 0.0, 1.0)])
    with pytest.raises(ValueError, match="distinct"):
        search_worst_case(_quadratic, [Dim("x", 0.0, 1.0), Dim("x", 0.0, 2.0)])
    with pytest.raises(ValueError, match="right-hand side"):
        search_worst_case(lambda i: (1.0, 0.0), [Dim("x", 0.0, 1.0)], budget=3)


@pytest.mark.parametrize("args, match", [
    (("x", 1.0, 0.0), "`low`"), (("x", 0.0, 1.0, "cubic"), "`scale`"), (("x", 0.0, 1.0, "log"), "`low`"),
    (("x", 0.2, 0.8, "int"), "no integer"), (("x", math.nan, 1.0), "`low`"), (("", 0.0, 1.0), "`name`"),
    (("x", 0.0, math.inf), "`high`"),
])
def test_dim_refused(args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Dim(*args)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 4), budget=st.integers(1, 120), seed=st.integers(0, 2**16), starts=st.integers(0, 5),
       explore=st.floats(0.05, 1.0), shift=st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4),
       given_points=st.lists(st.lists(st.floats(-1.0, 2.0), min_size=4, max_size=4), max_size=3))
def test_fuzz_search_contract(k, budget, seed, starts, explore, shift, given_points):
    """Any box, budget, seed and starting instances: evaluations within the budget, the ratio the best seen
    (never below a given instance's), the instance inside the box, and the ratio reproduced by evaluating
    the instance."""
    dims = [Dim(f"u{i}", -1.0, 2.0) for i in range(k)]

    def f(inst):
        return math.exp(-sum((inst[f"u{i}"] - shift[i]) ** 2 for i in range(k))), 1.0

    initial = [{f"u{i}": p[i] for i in range(k)} for p in given_points][:budget]
    wc = search_worst_case(f, dims, budget=budget, seed=seed, starts=starts, explore=explore, initial=initial)
    assert 1 <= wc.evaluations <= budget
    assert all(wc.ratio >= f(inst)[0] for inst in initial)
    assert all(-1.0 <= wc.instance[d.name] <= 2.0 for d in dims)
    lhs, rhs = f(wc.instance)
    assert wc.ratio == lhs / rhs == wc.trace.max()


def _needle(inst):
    """A narrow peak in a 12-dimensional box: exp(-200 |u - 0.83|^2) <= 1, far from every Sobol point of a
    small budget."""
    return math.exp(-200.0 * sum((inst[f"u{i}"] - 0.83) ** 2 for i in range(12))), 1.0


def test_initial_instances_reach_what_exploration_misses():
    dims = [Dim(f"u{i}", 0.0, 1.0) for i in range(12)]
    blind = search_worst_case(_needle, dims, budget=100, seed=0)
    start = {f"u{i}": 0.8 for i in range(12)}
    helped = search_worst_case(_needle, dims, budget=100, seed=0, initial=[start])
    assert blind.ratio < 1e-3
    assert helped.ratio >= _needle(start)[0] > 0.1 and helped.ratio > 100 * blind.ratio
    assert helped.evaluations <= 100 and helped.method.startswith("1 given instance, 49 Sobol points")


def test_initial_instance_is_evaluated_exactly_and_first():
    seen = []

    def f(inst):
        seen.append(dict(inst))
        return _quadratic(inst)

    wc = search_worst_case(f, [Dim("x", 0.0, 1.0), Dim("n", 1, 64, "log-int"), Dim.choice("law", ("a", "b"))],
                           budget=12, seed=3, initial=[{"x": 0.3, "n": 7, "law": "b"}], fixed={"c": 1})
    assert seen[0] == {"x": 0.3, "n": 7, "law": "b", "c": 1}
    assert wc.evaluations <= 12


def test_without_initial_the_search_is_unchanged():
    """``initial=None`` and ``initial=[]`` give the same search, bit for bit."""
    dims = [Dim("a", 0.0, 1.0), Dim("b", 1.0, 1e4, "log")]
    one = search_worst_case(_peak, dims, budget=80, seed=5)
    two = search_worst_case(_peak, dims, budget=80, seed=5, initial=[])
    assert one.ratio == two.ratio and one.instance == two.instance and one.method == two.method
    assert np.array_equal(one.trace, two.trace)


@pytest.mark.parametrize("initial, exc, match", [
    ({"x": 0.5}, TypeError, "sequence of dicts"), ([0.5], TypeError, r"initial\[0\]"),
    ([{"y": 0.5}], ValueError, "exactly the box"), ([{"x": 1.5}], ValueError, "outside"),
    ([{"x": 0.5}] * 4, ValueError, "more than the budget"),
])
def test_initial_refused_by_name(initial, exc, match):
    with pytest.raises(exc, match=match):
        search_worst_case(_quadratic, [Dim("x", 0.0, 1.0)], budget=3, initial=initial)


def test_dim_unit_inverts_value():
    for d, x in [(Dim("a", -2.0, 3.0), 0.7), (Dim("b", 1e-3, 1e3, "log"), 2.5), (Dim("n", 1, 1000, "log-int"), 32),
                 (Dim("k", 0, 9, "int"), 4), (Dim.choice("law", ("g", "u", "r")), "r"), (Dim("c", 2.0, 2.0), 2.0)]:
        assert d.value(d.unit(x)) == (x if isinstance(x, str) else pytest.approx(x, rel=1e-15))
    with pytest.raises(ValueError, match="not an integer"):
        Dim("k", 0, 9, "int").unit(2.5)
    with pytest.raises(ValueError, match="not one of"):
        Dim.choice("law", ("g",)).unit("u")


def test_redraw_measures_the_fluctuation_at_the_worst_instance():
    """A Monte-Carlo ratio: the mean of 20 draws of N(0.5, 0.2^2) over 1. A search over seeds picks the largest
    mean; the fresh seeds at that instance read near 0.5."""

    def mc(inst):
        return float(np.random.default_rng(inst["seed"]).normal(0.5, 0.2, 20).mean()), 1.0

    wc = search_worst_case(mc, [Dim("seed", 0, 2**20, "int")], budget=64, seed=0, redraw=200)
    assert len(wc.redraws) == 200 and wc.redraw_dim == "seed"
    m = wc.to_measured()["redraws"]
    assert m["median"] == pytest.approx(0.5, abs=0.02)
    assert wc.ratio - m["median"] > 0.06  # the winner's curse the redraws expose: > 1.3 standard errors
    assert wc.evaluations <= 64  # the redraws are beyond the budget
    with pytest.raises(ValueError, match="`redraw_dim`"):
        search_worst_case(mc, [Dim("seed", 0, 2**20, "int")], budget=4, redraw=3, redraw_dim="s")
    with pytest.raises(ValueError, match="`redraw_dim`"):
        search_worst_case(_quadratic, [Dim("x", 0.0, 1.0)], budget=4, redraw=3, redraw_dim="x")


# ---------------------------------------------------------------------------- verdict and report


def _search(bound=0.25):
    return search_worst_case(lambda i: (i["x"] * (1 - i["x"]), bound), [Dim("x", 0.0, 1.0)], budget=60,
                             constant=("c", bound))


def test_bound_verdict_with_search_passes_and_reports_both():
    tracker = BoundTracker()
    tracker.add(0.1, 0.25, {"x": 0.1})
    v = bound_verdict(tracker.result().with_search(_search()), {"ratio_max": 1.0})
    assert v.status == "pass"
    assert v.measured["search"]["ratio"] == pytest.approx(1.0, abs=1e-4)
    assert v.expected["search"] == {"ratio_max": 1.0}
    assert "worst-case search" in v.message and "smallest constant c" in v.message


def test_bound_verdict_fails_on_the_search_alone():
    """Random instances within the bound, the search outside it (the printed constant too small)."""
    v = bound_verdict(bound_ratio([0.1], [0.24]).with_search(_search(0.24)), {"ratio_max": 1.0})
    assert v.status == "fail" and v.measured["ratio"] < 1.0 < v.measured["search"]["ratio"]


def test_loose_bound_is_called_loose():
    wc = search_worst_case(lambda i: (i["x"] * 1e-3, 1.0), [Dim("x", 0.0, 1.0)], budget=20)
    v = bound_verdict(bound_ratio([1e-4], [1.0]).with_search(wc), {"ratio_max": 1.0})
    assert v.status == "pass" and "loose" in v.message
    assert wc.ratio < LOOSE_RATIO


def test_threshold_bound_takes_a_search():
    base = threshold_verdict("bound", {"max_ratio": 0.5}, {"max_ratio_max": 1.0})
    v = worst_case_verdict(base, _search(0.24), ratio_max=1.0)
    assert v.status == "fail" and base.status == "pass"
    with pytest.raises(ValueError, match="`ratio_max`"):
        worst_case_verdict(base, _search())
    with pytest.raises(ValueError, match="bound"):
        worst_case_verdict(threshold_verdict("identity", {"e": 0.0}, {"e_max": 1.0}), _search(), ratio_max=1.0)
    with pytest.raises(TypeError, match="`search`"):
        worst_case_verdict(base, 0.5, ratio_max=1.0)


def test_report_shows_the_search():
    v = bound_verdict(bound_ratio([0.1], [0.25]).with_search(_search()), {"ratio_max": 1.0})
    claim = {"id": "gen-bounds/thm-4.4", "kind": "bound", "status": v.status, "expected": v.expected,
             "measured": json.loads(json.dumps(v.measured)), "title": "t", "message": v.message}
    other = {"id": "gen-bounds/thm-4.8", "kind": "bound", "status": "pass", "expected": {"ratio_max": 1.0},
             "measured": {"ratio": 0.5, "n_instances": 3}, "title": "t", "message": "m"}
    measured, predicted = decisive(claim)
    assert "searched worst 1" in measured and predicted == "LHS/RHS ≤ 1"
    rows = worst_cases({"claims": [claim, other]})
    assert rows[0]["searched"] == pytest.approx(1.0, abs=1e-4) and rows[1]["searched"] is None
    text = render_markdown({"claims": [claim, other]})
    assert "## Worst cases of the bounds" in text and "1 of 2 bounds searched" in text and "not searched" in text


def test_choice_coordinate_searches_labels():
    laws = ("gaussian", "uniform", "rademacher")
    worst = {"gaussian": 0.5, "uniform": 0.9, "rademacher": 0.7}
    wc = search_worst_case(lambda i: (worst[i["law"]] * i["x"], 1.0), [Dim.choice("law", laws), Dim("x", 0.0, 1.0)],
                           budget=80, seed=0)
    assert wc.instance["law"] == "uniform" and wc.ratio == pytest.approx(0.9, abs=1e-3)
    assert wc.to_measured()["box"]["law"] == list(laws)
    with pytest.raises(ValueError, match="choices"):
        Dim("law", 0.0, 2.0, "choice")
    with pytest.raises(ValueError, match="at least one"):
        Dim.choice("law", ())


def test_from_trials_keeps_the_worst_and_a_nan():
    wc = WorstCase.from_trials([{"n": 1}, {"n": 2}, {"n": 3}], [0.1, 0.9, 0.5], [1.0, 1.0, 1.0], budget=3, seed=1,
                               method="Hypothesis", constant=("C", 2.0))
    assert (wc.ratio, wc.instance, wc.evaluations) == (0.9, {"n": 2}, 3)
    assert wc.trace.tolist() == [0.1, 0.9, 0.9] and wc.smallest_constant == pytest.approx(1.8)
    nan = WorstCase.from_trials([{"n": 1}, {"n": 2}], [0.1, float("nan")], [1.0, 1.0], budget=2, seed=0, method="m")
    assert math.isnan(nan.ratio) and nan.instance == {"n": 2}
    with pytest.raises(ValueError, match="one entry per trial"):
        WorstCase.from_trials([{"n": 1}], [0.1, 0.2], [1.0, 1.0], budget=2, seed=0, method="m")
    with pytest.raises(ValueError, match="`rhs`"):
        WorstCase.from_trials([{"n": 1}], [0.1], [0.0], budget=1, seed=0, method="m")
    with pytest.raises(ValueError, match="`budget` of theory.worst_case.WorstCase.from_trials"):
        WorstCase.from_trials([{"n": 1}], [0.1], [1.0], budget=0, seed=0, method="m")


def test_report_shows_the_redraws():
    def mc(inst):
        return float(np.random.default_rng(inst["seed"]).normal(0.5, 0.2, 20).mean()), 1.0

    wc = search_worst_case(mc, [Dim("seed", 0, 2**20, "int")], budget=16, seed=0, redraw=10)
    v = worst_case_verdict(threshold_verdict("bound", {"x": 0.1}, {"x_max": 1.0}), wc, ratio_max=1.0)
    doc = {"claims": [{"id": "k/b", "kind": "bound", "status": v.status, "expected": v.expected,
                       "measured": v.measured}]}
    [row] = worst_cases(doc)
    assert row["redrawn"][1] == 10 and row["redrawn"][0] == pytest.approx(np.median(wc.redraws))
    from theory.report import worst_case_table
    assert "over 10 redraws" in worst_case_table(doc)[2]
