"""Fuzzing of the claim machinery (theory.rates, theory.claims, theory.report) over its whole input domain.

Every public function either answers (finite where the documentation says so, JSON-safe where it
goes into the report) or raises our ValueError/TypeError naming an argument; inputs are never
mutated. Magnitudes from 1e-300 to 1e300, single points, NaN and inf, wrong types.
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import claims, rates, report, worst_case
from theory.claims import (
    ClaimRecord,
    Verdict,
    bound_verdict,
    erratum_verdict,
    frequency_verdict,
    identity_verdict,
    parse_claim_id,
    qualitative_verdict,
    rate_verdict,
)
from theory.rates import BoundTracker, bound_ratio, fit_rate, frequency, identity_error, to_plain

FUZZ = settings(max_examples=60, deadline=None)

extreme = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-300, -1e-300, 1e300, -1e300, 5e-324, 0.0, -0.0, 1.0]),
)
positive = st.floats(1e-300, 1e300)
vectors = st.lists(extreme, min_size=0, max_size=8)
junk = st.one_of(st.none(), st.text(max_size=3), st.lists(st.text(max_size=2), max_size=3), st.just(object()),
                 st.booleans(), st.complex_numbers(allow_nan=False, max_magnitude=10))


def _named(exc, names):
    text = str(exc)
    assert any(f"`{n}" in text or n in text for n in names), text


def _snapshot(*arrays):
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in arrays]


def _json_safe(measured):
    json.dumps(to_plain(measured), allow_nan=False)


# --------------------------------------------------------------------------- theory.rates


@FUZZ
@given(grid=st.one_of(vectors, st.lists(positive, min_size=1, max_size=8)), errors=vectors,
       floor=st.one_of(extreme, junk), n_boot=st.one_of(st.integers(-3, 50), junk),
       level=st.one_of(extreme, junk), seed=st.one_of(st.integers(-2, 2**70), junk))
def test_fit_rate_answers_or_names_the_argument(grid, errors, floor, n_boot, level, seed):
    g, e = np.array(grid), np.array(errors)
    before = _snapshot(g, e)
    try:
        fit = fit_rate(g, e, floor=floor, n_boot=n_boot, level=level, seed=seed)
    except (ValueError, TypeError) as exc:
        _named(exc, ["grid", "errors", "floor", "n_boot", "level", "seed", "grid sizes", "point"])
    else:
        assert math.isfinite(fit.slope) and all(math.isfinite(c) for c in fit.ci)
        assert fit.ci[0] <= fit.slope + 1e-9 * abs(fit.slope) + 1e-12 or fit.ci[0] <= fit.ci[1]
        _json_safe(fit.to_measured())
    np.testing.assert_array_equal(g, before[0])
    np.testing.assert_array_equal(e, before[1])


@FUZZ
@given(scale=st.sampled_from([1e-300, 1e-150, 1.0, 1e150, 1e300]), slope=st.floats(-4, 2))
def test_fit_rate_is_scale_covariant_at_the_extremes(scale, slope):
    grid = np.array([8.0, 16, 32, 64, 128])
    errors = grid**slope
    base = fit_rate(grid, errors, n_boot=50)
    scaled_errors = errors * scale
    if not np.all(np.isfinite(scaled_errors) & (scaled_errors > 0)):
        return
    fit = fit_rate(grid, scaled_errors, n_boot=50)
    assert fit.slope == pytest.approx(base.slope, abs=1e-9)


@FUZZ
@given(lhs=vectors, rhs=vectors)
def test_bound_ratio_answers_or_names_the_argument(lhs, rhs):
    try:
        result = bound_ratio(lhs, rhs)
    except (ValueError, TypeError) as exc:
        _named(exc, ["lhs", "rhs"])
    else:
        assert result.n_instances >= 1
        _json_safe(result.to_measured())


@FUZZ
@given(pairs=st.lists(st.tuples(extreme, extreme), min_size=0, max_size=6))
def test_bound_tracker(pairs):
    tracker = BoundTracker()
    added = 0
    for lhs, rhs in pairs:
        try:
            tracker.add(lhs, rhs, {"lhs": lhs})
            added += 1
        except (ValueError, TypeError) as exc:
            _named(exc, ["lhs", "rhs"])
    if added:
        _json_safe(tracker.result().to_measured())
    else:
        with pytest.raises(ValueError, match="no instance"):
            tracker.result()


@FUZZ
@given(violations=st.one_of(st.lists(st.booleans(), max_size=20), st.lists(st.integers(-1, 2), max_size=5), junk),
       delta=st.one_of(st.none(), extreme), level=st.one_of(extreme, junk))
def test_frequency(violations, delta, level):
    try:
        result = frequency(violations, delta=delta, level=level)
    except (ValueError, TypeError) as exc:
        _named(exc, ["violations", "delta", "level"])
    else:
        assert 0 <= result.freq <= 1 and 0 <= result.ci[0] <= result.ci[1] <= 1
        _json_safe(result.to_measured())


@FUZZ
@given(computed=st.one_of(vectors, junk), reference=st.one_of(vectors, junk))
def test_identity_error(computed, reference):
    try:
        result = identity_error(computed, reference)
    except (ValueError, TypeError) as exc:
        _named(exc, ["computed", "reference"])
    else:
        assert result.max_abs_err >= 0 or math.isnan(result.max_abs_err)
        # inf only where the quotient truly exceeds 1e308 (a reference below 1e-308), never for a zero reference
        ref = np.abs(np.asarray(reference, dtype=complex)).ravel()
        if result.max_rel_err == math.inf and math.isfinite(result.max_abs_err):
            assert np.any((ref > 0) & (ref < 1e-290))
        _json_safe(result.to_measured())


@FUZZ
@given(x=st.one_of(extreme, st.lists(extreme, max_size=3), junk,
                   st.dictionaries(st.text(max_size=2), extreme, max_size=3)))
def test_to_plain_is_always_json_safe(x):
    json.dumps(to_plain(x), allow_nan=False)


# --------------------------------------------------------------------------- theory.claims


@FUZZ
@given(text=st.one_of(st.text(max_size=30), junk,
                      st.builds("/".join, st.lists(st.sampled_from(claims.PAPER_KEYS + ("prop-3", "erratum", "x", "")),
                                                    max_size=4))))
def test_parse_claim_id(text):
    try:
        paper, local = parse_claim_id(text)
    except ValueError as exc:
        assert "claim ID" in str(exc)
    else:
        assert paper in claims.PAPER_KEYS and local


expected_values = st.one_of(extreme, junk)


@FUZZ
@given(expected=st.dictionaries(st.sampled_from(["slope", "tol", "slope_max", "ratio_max", "delta", "atol", "rtol",
                                                 "nope"]), expected_values, max_size=3))
def test_verdicts_validate_expected(expected):
    fit = fit_rate(np.array([8, 16, 32, 64]), np.array([8, 16, 32, 64]) ** -1.0, n_boot=20)
    inputs = [
        (rate_verdict, fit),
        (bound_verdict, bound_ratio([1.0], [2.0])),
        (frequency_verdict, frequency([False, True])),
        (identity_verdict, identity_error([1.0], [1.0])),
    ]
    for verdict_of, result in inputs:
        try:
            verdict = verdict_of(result, expected)
        except (ValueError, TypeError) as exc:
            assert "`expected" in str(exc)
        else:
            assert verdict.status in ("pass", "fail") and verdict.message


@FUZZ
@given(ok=st.one_of(st.booleans(), junk), message=st.one_of(st.text(max_size=5), junk))
def test_qualitative_and_erratum_verdicts(ok, message):
    try:
        verdict = qualitative_verdict(ok, message)
    except ValueError as exc:
        _named(exc, ["ok", "message"])
    else:
        both = erratum_verdict(Verdict("fail", "printed"), verdict)
        assert both.status == verdict.status


@FUZZ
@given(measured=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.one_of(extreme, junk), max_size=3),
       expected=st.dictionaries(st.sampled_from(["a_max", "b_min", "c_max", "d_min", "a", "_max"]),
                                st.one_of(extreme, junk), max_size=3),
       kind=st.one_of(st.sampled_from(claims.KINDS), junk))
def test_threshold_verdict(measured, expected, kind):
    try:
        verdict = claims.threshold_verdict(kind, measured, expected)
    except ValueError as exc:
        assert "theory.claims.threshold_verdict" in str(exc) or "`expected" in str(exc)
    else:
        assert verdict.kind == kind and verdict.expected == expected and verdict.status in ("pass", "fail")
        for key, bound in expected.items():
            value = float(measured[key[:-4]])
            holds = value <= bound if key.endswith("_max") else value >= bound
            if not (math.isfinite(value) and holds):
                assert verdict.status == "fail"


@FUZZ
@given(ratio=extreme, random=extreme, ratio_max=st.one_of(extreme, junk, st.none()),
       kind=st.sampled_from(["bound", "identity"]), passed=st.booleans())
def test_worst_case_verdict(ratio, random, ratio_max, kind, passed):
    """Any searched ratio, random ratio and allowed maximum: a verdict that passes only if both hold, or a
    refusal naming its argument."""
    base = Verdict("pass" if passed else "fail", "random", kind, {"ratio_max": 1.0}, {"ratio": random})
    search = worst_case.WorstCase(ratio=ratio, instance={"x": 1.0}, lhs=ratio, rhs=1.0, evaluations=1, budget=1,
                                  seed=0, method="m")
    try:
        verdict = claims.worst_case_verdict(base, search, ratio_max=ratio_max)
    except (ValueError, TypeError) as exc:
        _named(exc, ["verdict", "search", "ratio_max"])
        return
    json.dumps(to_plain(verdict.measured))
    limit = 1.0 if ratio_max is None else float(ratio_max)
    if verdict.status == "pass":
        assert passed and math.isfinite(ratio) and ratio <= limit
    assert verdict.measured["search"]["ratio"] == to_plain(ratio)


@FUZZ
@given(records=st.lists(st.fixed_dictionaries(
    {"id": st.sampled_from(["topk/prop-7.2", "scaling/cor-4", "implicit-reg/thm-6"]),
     "status": st.sampled_from(["pass", "fail", "skip"])},
    optional={"kind": st.sampled_from(claims.KINDS),
              "measured": st.dictionaries(st.sampled_from(["ratio", "search", "output_search", "part"]),
                                          st.one_of(extreme, junk, st.dictionaries(
                                              st.sampled_from(["ratio", "evaluations", "budget", "search",
                                                               "constant"]),
                                              st.one_of(extreme, junk), max_size=3)), max_size=3),
              "expected": st.dictionaries(st.sampled_from(["ratio_max", "search"]), st.one_of(extreme, junk),
                                          max_size=2),
              "step_of": st.lists(st.sampled_from(["implicit-reg/thm-6", "topk/prop-7.2"]), max_size=2)}),
    max_size=5))
def test_worst_cases_and_proof_chains_never_crash(records):
    """The report's bounds table and proof chains read any record (missing, malformed or non-finite fields)."""
    doc = {"claims": records}
    for row in report.worst_cases(doc):
        assert row["id"] in {r["id"] for r in records}
    assert len(report.worst_case_table(doc)) == 2 + len(report.worst_cases(doc))
    chains = report.proof_chains(doc)
    for entry in chains.values():
        assert 0 <= entry["passed"] <= len(entry["steps"])


# --------------------------------------------------------------------------- theory.report


record_dicts = st.fixed_dictionaries(
    {"id": st.sampled_from(["topk/prop-7.2", "scaling/cor-4", "resnet-node/prop-3/erratum"]),
     "status": st.sampled_from(["pass", "fail", "skip"])},
    optional={"measured": st.dictionaries(st.sampled_from(["slope", "ratio", "max_abs_err", "freq", "ci", "grid"]),
                                          st.one_of(extreme, st.lists(extreme, max_size=3)), max_size=3),
              "expected": st.dictionaries(st.sampled_from(["slope", "tol", "ratio_max", "atol"]), extreme, max_size=2),
              "proxy": st.one_of(st.none(), st.text(min_size=1, max_size=5)),
              "commit": st.one_of(st.none(), st.sampled_from(["a", "b"])),
              "kind": st.sampled_from(claims.KINDS),
              "experiment": st.one_of(st.none(), st.sampled_from(["topk.prop72", ""])),
              "parameters": st.lists(st.sampled_from(["n", "seed", "depth"]), max_size=3)},
)


@FUZZ
@given(records=st.lists(record_dicts, max_size=5), head=st.one_of(st.none(), st.sampled_from(["a", "b"])))
def test_report_rendering_never_crashes(records, head):
    unique = list({r["id"]: r for r in records}.values())
    doc = report.build_report(unique, generated="2026-01-01T00:00:00+00:00", version="0", environment={})
    json.dumps(doc, allow_nan=False)
    report.render_markdown(doc)
    for line in report.render_table(doc).splitlines():
        assert len(line) <= 100
    report.freshness({**doc, "last_run": {"claims": [r["id"] for r in unique[:1]]}}, head)
    merged, dropped = report.merge_with_previous(unique[:1], doc, lambda rec: rec["id"] != "scaling/cor-4")
    assert [c["id"] for c in merged] == sorted(c["id"] for c in merged)


@FUZZ
@given(content=st.one_of(st.text(max_size=20), st.builds(json.dumps, st.one_of(
    st.lists(st.integers(), max_size=3),
    st.fixed_dictionaries({"claims": st.lists(st.one_of(st.integers(), st.dictionaries(
        st.sampled_from(["id", "status"]), st.one_of(st.text(max_size=4), st.integers()), max_size=2)), max_size=3)}),
))))
def test_load_report_rejects_malformed_files_with_valueerror(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("r") / "claims.json"
    path.write_text(content)
    try:
        loaded = report.load_report(path)
    except ValueError as exc:
        assert str(path) in str(exc)
    else:
        report.render_markdown({**loaded, "claims": loaded["claims"]})
        report.render_table(loaded)


def test_every_public_function_of_the_machinery_is_fuzzed():
    fuzzed = {
        rates: {"fit_rate", "bound_ratio", "BoundTracker", "frequency", "identity_error", "to_plain",
                "RateFit", "BoundResult", "FrequencyResult", "IdentityResult"},
        claims: {"parse_claim_id", "rate_verdict", "bound_verdict", "frequency_verdict", "identity_verdict",
                 "qualitative_verdict", "threshold_verdict", "erratum_verdict", "Verdict", "ClaimRecord",
                 "merge_records", "PAPER_KEYS", "MIN_RATE_SIZES",
                 "KINDS", "STATUSES", "WRONG_IN", "worst_case_verdict", "LOOSE_RATIO", "THRESHOLDS"},
        report: {"build_report", "render_markdown", "render_table", "freshness", "merge_with_previous",
                 "load_report", "claim_line", "summary_line", "count_statuses", "count_proxies",
                 "collect_environment", "write_report", "predicted_text", "measured_text", "git_commit",
                 "decisive", "rerun_command", "worst_cases", "worst_case_table", "searches_of", "proof_chains"},
        worst_case: {"Dim", "WorstCase", "search_worst_case", "SCALES"},
    }
    for module, names in fuzzed.items():
        assert set(module.__all__) <= names, (module.__name__, set(module.__all__) - names)


@FUZZ
@given(records=st.lists(st.sampled_from(["pass", "fail", "skip"]), min_size=1, max_size=4))
def test_merge_records_keeps_the_worst_status(records):
    group = [ClaimRecord("topk/prop-7.2", "topk", (), "t", "rate", s, {}, {"slope": -1.0}) for s in records]
    (merged,) = claims.merge_records(group)
    assert merged.status == min(records, key={"fail": 0, "pass": 1, "skip": 2}.get)


any_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                                  st.text(max_size=4)),
                        lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                        max_leaves=6)


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["title", "aliases", "kind", "expected", "measured", "figure",
                                               "message", "notes", "proxy", "wrong_in", "test", "commit",
                                               "measured_at", "seconds"]), any_json, max_size=6),
       extra=st.dictionaries(st.sampled_from(["generated", "environment", "last_run", "version"]), any_json,
                             max_size=3),
       form=st.sampled_from(["table", "markdown", "json"]))
def test_theory_report_never_tracebacks_on_odd_fields(tmp_path_factory, fields, extra, form):
    import contextlib
    import io

    from theory.cli import main

    directory = tmp_path_factory.mktemp("r")
    claim = {**fields, "id": "topk/prop-7.2", "status": "pass"}
    (directory / "claims.json").write_text(json.dumps({**extra, "claims": [claim]}))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["report", "--dir", str(directory), "--format", form])
    assert code in (0, 2)
