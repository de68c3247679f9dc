"""Negative controls of the worst-case searches of the ``scaling`` bounds (theory.experiments.scaling._search).

Each control reruns a bound's registered experiment with one printed constant of its right-hand side broken
(divided by 4, halved, a term dropped, or the printed form of a corrected statement put back), patched into
:data:`theory.experiments.scaling._search.PRINTED`, which only the search reads; the random instances of the
check are left as they are (and reduced in size). The search, under the budget and seed of the check preset,
must find an instance where the broken bound fails by itself, and the experiment's verdict must then fail.
Proposition 11's constant is searched by Hypothesis: its control patches the per-instance function so that the
proof's bound is divided by 4.
"""

from __future__ import annotations

import dataclasses

import pytest

from theory.experiments import experiment
from theory.experiments.scaling import _claims as sc
from theory.experiments.scaling import _limits as lim
from theory.experiments.scaling import _search as srch


def _small(name, **changes):
    """The check preset of experiment ``name`` with the changes (a reduced random part; the search as is)."""
    exp = experiment(name)
    return exp, dataclasses.replace(exp.presets["check"], **changes)


def _search_finds(exp, config, claim):
    """Rerun ``exp`` at ``config``: the search must find LHS/RHS > 1 and the verdict fail."""
    result = exp.measure(config)
    verdict = exp.verdict_for(f"scaling/{claim}")(result)
    found = verdict.measured["search"] if "search" in verdict.measured else verdict.measured["corrected"]["search"]
    assert found["ratio"] > 1.0, found
    assert verdict.status == "fail", verdict.message
    return found


_SMALL = {
    "scaling.prop1": dict(sizes=((4, 200),), laws=("gaussian",)),
    "scaling.prop5": dict(sizes=((4, 200),), laws=("gaussian",)),
    "scaling.lemma15": dict(laws=("gaussian",), n=200, d=4),
    "scaling.lemma16": dict(laws=("gaussian",), n=200, d=4),
    "scaling.lemma17": dict(laws=("gaussian",), n=200, d=4, scales=(1.0,)),
    "scaling.lemma19": dict(laws=("gaussian",), n=200, lambdas=(0.5,)),
    "scaling.lemma20": dict(laws=("gaussian",), n=200, d=4),
    "scaling.lemma21": dict(laws=("gaussian",), sizes=((4, 200),)),
}


#: where each broken bound can only fail: what the instance found must satisfy
_WHERE = {"prop-1": lambda i: i["arch"] == "res1", "lemma-17": lambda i: i["d"] <= 16,
          "lemma-21": lambda i: i["d"] > 126}


@pytest.mark.parametrize("name, claim, broken, why", [
    ("scaling.prop1", "prop-1", {"C": {k: v / 4 for k, v in srch.PRINTED["prop-1"]["C"].items()}},
     "C of (A2) divided by 4: only res-1 with E||g||^2/||h||^2 > 0.71 breaks it (res-2/3 stay below 3457/4)"),
    ("scaling.prop5", "prop-5", {"upper": 0.9},
     "the upper constant 1 of (A4) lowered to 0.9: only slopes of sigma near 1 break it"),
    ("scaling.lemma15", "lemma-15", {"E4": 2.0},
     "the 4 of (E4) halved: attained by res-3 (kappa = 1/2), broken wherever kappa > 1/2"),
    ("scaling.lemma16", "lemma-16", {"lower": 1.0},
     "the 1/2 of the lower bound dropped: broken wherever a slope of sigma is below 1"),
    ("scaling.lemma17", "lemma-17", {"d_offset": 1.0},
     "s^2 (d + 1) ||x||^2 for s^2 d ||x||^2: visible at small widths only"),
    ("scaling.lemma19", "lemma-19", {"proxy": 1.0},
     "the sub-Gaussian diameter s for sqrt(2) s: broken at small lambda"),
    ("scaling.lemma20", "lemma-20", {"denominator": 1.0},
     "the 4 of the exponent divided by 4: broken in the far tail"),
    ("scaling.lemma21", "lemma-21", {"m4": (0.0, 128.0), "m8": (0.0, 384.0, 3072.0)},
     "the '1 +' of both bounds dropped: broken for d > 126 only, beyond the check's widths"),
])
def test_one_layer_searches_find_a_broken_constant(monkeypatch, name, claim, broken, why):
    monkeypatch.setitem(srch.PRINTED, claim, {**srch.PRINTED[claim], **broken})
    exp, config = _small(name, **_SMALL[name])
    found = _search_finds(exp, config, claim)
    assert _WHERE.get(claim, lambda i: True)(found["instance"]), (why, found["instance"])


def test_the_one_layer_controls_pass_unbroken():
    """The reduced configurations of the controls above pass with the printed constants (so the controls fail
    for the constant they break)."""
    for name, changes in _SMALL.items():
        exp, config = _small(name, **changes)
        verdict = exp.verdict(exp.measure(config))
        assert verdict.passed, (name, verdict.message)


_NET = sc.NetConfig(seeds=tuple(range(6)), plan=((0.5, (10, 100)), (1.0, (10, 100))), seed0=31)


def test_lemma14_search_finds_a_lower_bound_raised_to_three_quarters(monkeypatch):
    """(1 + 3 alpha^2/4)^L - 1 for the lower bound: res-3 (exactly (1 + alpha^2/2)^L - 1) breaks it once
    L alpha^2 is large enough for the Monte-Carlo window; res-2 (kappa >= 3/4) never does."""
    monkeypatch.setitem(srch.PRINTED, "lemma-14", {"lower": 0.75, "upper": 1.0})
    exp, config = _small("scaling.lemma14", net=_NET, fast=(("res3", "relu", 0.8, 0.5, 200, 0.5),), fast_depths=(10,))
    _search_finds(exp, config, "lemma-14")


def test_cor4_limit_search_finds_the_finite_depth_gap(monkeypatch):
    """Without the finite-L allowance |(1 + 1/(2L))^L - e^{1/2}| the limit e^{1/2} - 1 fails at small depth."""
    monkeypatch.setitem(srch.PRINTED, "cor-4/limit", {**srch.PRINTED["cor-4/limit"], "finite_L_gap": False})
    exp, config = _small("scaling.cor4_limit", net=_NET, fast=(("res3", "relu", 0.8, 0.5, 200, 0.5),),
                         fast_depths=(100,))
    found = _search_finds(exp, config, "cor-4/limit")
    assert found["instance"]["L"] < 100


def test_prop7_search_finds_a_lower_bound_raised_to_three_quarters(monkeypatch):
    monkeypatch.setitem(srch.PRINTED, "prop-7", {"lower": 0.75, "upper": 1.0})
    exp, config = _small("scaling.prop7", net=_NET, extra=())
    _search_finds(exp, config, "prop-7")


@pytest.mark.parametrize("name", ["scaling.cor8_iii", "scaling.cor8_erratum"])
def test_cor8_iii_search_finds_the_printed_lower_bound(monkeypatch, name):
    """The printed lower bound e^{1/2} - 1 put back into the corrected Corollary 8(iii): res-3 breaks it at small
    depth, which the search finds (the erratum's corrected half then fails too)."""
    monkeypatch.setitem(srch.PRINTED, "cor-8/iii", {**srch.PRINTED["cor-8/iii"], "printed_lower": True})
    exp, config = _small(name, res3_seeds=20, res1_seeds=20, depths=(1, 2))
    found = _search_finds(exp, config, "cor-8/iii" if name.endswith("iii") else "cor-8/erratum")
    assert found["instance"]["L"] <= 16


def test_prop11_constant_search_finds_the_bound_divided_by_4(monkeypatch):
    """The proof's bound e^{K_1}(K_2 + 1)K_1/(2L) divided by 4 (patched into the per-instance function): the
    Hypothesis search, recorded as a WorstCase, finds LHS/RHS > 1."""
    real = lim.tied_linear_instance

    def quartered(*args, **kwargs):
        err, bound = real(*args, **kwargs)
        return err, bound / 4.0

    monkeypatch.setattr(lim, "tied_linear_instance", quartered)
    exp = experiment("scaling.prop11_constant")
    result = exp.run("check", examples=40)
    verdict = exp.verdict(result)
    assert verdict.status == "fail" and verdict.measured["search"]["ratio"] > 1.0, verdict.message
    assert result.search.smallest_constant > 0.5
