"""Verdicts the oracle cannot decide (``inconclusive``) and the rounding diagnosis of a failure.

A case whose tolerance exceeds ``INCONCLUSIVE_FRACTION`` of an output's scale max|ref| cannot tell a 1 %
error from rounding: it is ``inconclusive``, never ``pass``, unless the error exceeds the tolerance (a
decisive ``FAIL``). A FAIL says which rounding (float32's, float64's, neither) its error is consistent with.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import oracle
from theory.cli import main
from theory.oracle._core import (EPS, INCONCLUSIVE_FRACTION, ROUNDING_BAND, VERDICTS, Argument, Case, CaseRow, Kernel,
                                 OracleInputError, VerifyResult, _compare, _diagnose)

ROOT = Path(__file__).resolve().parents[1]
EPS32, EPS64 = EPS["float32"], EPS["float64"]
INVERSE = "momentum_inverse"
#: the case of the issue: gamma = 0.9, N = 100 (linear residual)
ISSUE_CASE = "linear_gamma0.9_N100"
#: the package's own momentum inverse, importable by the command line
OWN_INVERSE = "theory.oracle._kernels.momentum:_momentum_inverse_ref"


def _own(name):
    return oracle.kernel(name).implementation


def _scaled(name, factor):
    own = _own(name)

    def fn(**inputs):
        return tuple(np.asarray(o) * factor for o in own(**inputs))
    return fn


def _row(result, case):
    return next(r for r in result.rows if r.case == case)


# ----------------------------------------------------------------------------------------------
# the declarations


def test_constants_are_declared_and_documented():
    assert INCONCLUSIVE_FRACTION == 1e-2
    assert ROUNDING_BAND[0] < 1 < ROUNDING_BAND[1]
    assert VERDICTS == ("pass", "FAIL", "inconclusive", "ERROR", "skip")
    doc = (ROOT / "docs" / "howto" / "oracle.md").read_text(encoding="utf-8")
    assert "INCONCLUSIVE_FRACTION" in doc and f"= {INCONCLUSIVE_FRACTION:g}" in doc
    assert "ROUNDING_BAND" in doc and f"[{ROUNDING_BAND[0]:g}, {ROUNDING_BAND[1]:g}]" in doc
    assert "inconclusive" in oracle.verify.__doc__


# ----------------------------------------------------------------------------------------------
# the issue: momentum_inverse at gamma = 0.9, N = 100 in float32 mode


def test_issue_case_is_the_one_described():
    case = next(c for c in oracle.kernel(INVERSE).cases() if c.name == ISSUE_CASE)
    assert case.params["gamma"] == 0.9 and case.params["N"] == 100


def test_off_by_5_percent_is_inconclusive_not_pass_in_float32():
    result = oracle.verify(INVERSE, _scaled(INVERSE, 1.05), dtype="float32", cases=[ISSUE_CASE])
    row = result.rows[0]
    assert row.verdict == "inconclusive", result.report()
    # the tolerance (about 58) dwarfs outputs of size 1: it cannot see 5 %
    assert row.tol > 50 and row.scale < 10 and row.tol > INCONCLUSIVE_FRACTION * row.scale
    assert row.max_abs <= row.tol
    for needle in (f"{row.tol:.2e}", f"{row.scale:.2e}", f"{row.tol / row.scale:.3g}", row.output):
        assert needle in row.message
    assert not result.ok and result.exit_code == 2 and "nothing was decided" in result.summary()


def test_correct_inverse_is_inconclusive_in_float32_and_passes_in_float64():
    r32 = oracle.verify(INVERSE, _own(INVERSE), dtype="float32", cases=[ISSUE_CASE])
    r64 = oracle.verify(INVERSE, _own(INVERSE), dtype="float64", cases=[ISSUE_CASE])
    assert r32.rows[0].verdict == "inconclusive" and r64.rows[0].verdict == "pass"
    assert r64.rows[0].tol < INCONCLUSIVE_FRACTION * r64.rows[0].scale
    assert r64.ok and r64.exit_code == 0


def test_off_by_5_percent_fails_in_float64_on_every_case():
    """5 % is 4e5 eps32: a wrong constant, unless the case's own float32 rule allows that much (at gamma = 0.9,
    N = 100 it allows 58 for outputs of size 1, so float32 arithmetic cannot be ruled out there)."""
    result = oracle.verify(INVERSE, _scaled(INVERSE, 1.05))
    assert result.counts["FAIL"] == len(result.rows) and result.exit_code == 1
    assert all(r.diagnosis in ("not precision", "float32 arithmetic or formula") for r in result.rows)
    assert _row(result, "linear_gamma0.5_N1").diagnosis == "not precision"
    assert _row(result, ISSUE_CASE).diagnosis == "float32 arithmetic or formula"


def test_an_error_above_a_wide_tolerance_still_fails():
    """Inconclusive is only for errors within the tolerance: beyond it a disagreement is decisive."""
    own = _own(INVERSE)

    def far_off(**inputs):
        xs, vs = own(**inputs)
        return xs, vs + 1e3
    result = oracle.verify(INVERSE, far_off, dtype="float32", cases=[ISSUE_CASE])
    row = result.rows[0]
    assert row.verdict == "FAIL" and row.max_abs > row.tol > INCONCLUSIVE_FRACTION * row.scale
    assert result.exit_code == 1 and row.diagnosis == "not precision"


# ----------------------------------------------------------------------------------------------
# counts: summary, table, JSON, exit codes


def test_summary_table_and_json_count_inconclusive_apart():
    result = oracle.verify(INVERSE, _own(INVERSE), dtype="float32")
    counts = result.counts
    assert counts["inconclusive"] > 0 and counts["pass"] > 0 and counts["FAIL"] == counts["ERROR"] == 0
    assert sum(counts.values()) == len(result.rows)
    assert result.ok and result.exit_code == 0  # inconclusive alone never gives exit 1
    assert result.compared == counts["pass"] + counts["inconclusive"] and result.decided == counts["pass"]
    assert f"{counts['pass']} of {len(result.rows)} cases pass, {counts['inconclusive']} inconclusive" in \
        result.summary()
    lines = result.table().splitlines()[1:]
    assert sum(" inconclusive " in line for line in lines) == counts["inconclusive"]
    data = json.loads(json.dumps(result.to_json()))
    assert data["counts"] == counts and data["inconclusive_fraction"] == INCONCLUSIVE_FRACTION
    assert [r["verdict"] for r in data["rows"]] == [r.verdict for r in result.rows]
    inconclusive = [r for r in data["rows"] if r["verdict"] == "inconclusive"]
    assert all(r["tol"] > INCONCLUSIVE_FRACTION * r["scale"] for r in inconclusive)
    assert {r.case for r in result.inconclusive} == {r["case"] for r in inconclusive}


def test_every_case_inconclusive_decides_nothing_exit_2():
    every = [r.case for r in oracle.verify(INVERSE, _own(INVERSE), dtype="float32").inconclusive]
    result = oracle.verify(INVERSE, _own(INVERSE), dtype="float32", cases=every)
    assert result.counts["inconclusive"] == len(every) == result.compared and result.decided == 0
    assert not result.ok and result.exit_code == 2
    assert "nothing was decided" in result.summary() and "which is not a success" in result.summary()


def test_count_refuses_an_unknown_verdict():
    result = VerifyResult("isotonic_regression", "float64", [CaseRow("a", "pass")])
    assert result.count("pass") == 1 and result.count("inconclusive") == 0
    for bad in ("Pass", "inconclusve", "", None):
        with pytest.raises(OracleInputError, match="verdict"):
            result.count(bad)


def test_result_extremes():
    """No rows; only skips; only ERRORs; FAIL among inconclusive rows."""
    k = "isotonic_regression"
    empty = VerifyResult(k, "float64", [])
    assert not empty.ok and empty.exit_code == 2 and empty.decided == 0
    assert VerifyResult(k, "float64", [CaseRow("a", "skip")]).exit_code == 2
    assert VerifyResult(k, "float64", [CaseRow("a", "ERROR"), CaseRow("b", "pass")]).exit_code == 2
    mixed = VerifyResult(k, "float64", [CaseRow("a", "inconclusive"), CaseRow("b", "FAIL")])
    assert not mixed.ok and mixed.exit_code == 1 and "1 disagree" in mixed.summary()
    assert "nothing was decided" not in mixed.summary()


def test_command_exit_codes(capsys, tmp_path):
    every = [r.case for r in oracle.verify(INVERSE, _own(INVERSE), dtype="float32").inconclusive]
    args = ["oracle", "verify", INVERSE, OWN_INVERSE, "--dtype", "float32"]
    out = tmp_path / "r.json"
    assert main(args + ["--json", str(out)]) == 0
    assert "inconclusive" in capsys.readouterr().out
    assert json.loads(out.read_text())["counts"]["inconclusive"] == len(every)
    assert main(args + [arg for case in every for arg in ("--case", case)]) == 2
    assert "nothing was decided" in capsys.readouterr().out
    assert main(["oracle", "verify", INVERSE, OWN_INVERSE, "--case", ISSUE_CASE]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["oracle", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0 and "inconclusive" in help_text and "nothing was decided" in help_text
    assert f"{100 * INCONCLUSIVE_FRACTION:g} % of the output" in help_text  # the declared fraction, not another


# ----------------------------------------------------------------------------------------------
# the rounding diagnosis of a FAIL


def _isotonic(y, w, increasing):
    from theory.isotonic import isotonic_regression

    return isotonic_regression(y, w, increasing=increasing)[0]


#: the isotonic cases within float32's range (the float32-returning implementations cannot hold 1e+-300)
def _in_float32_range():
    return [c.name for c in oracle.kernel("isotonic_regression").cases() if "1e" not in c.name]


def test_float32_constant_inside_float64_is_diagnosed_as_float32_rounding():
    c32 = float(np.float32(0.1))  # 0.1 + 1.5e-9: relative error 1.5e-8, an eighth of eps32

    def with_float32_constant(y, w, increasing):
        return _isotonic(y, w, increasing) * c32 / 0.1
    result = oracle.verify("isotonic_regression", with_float32_constant, cases=_in_float32_range())
    assert result.counts["FAIL"] == len(result.rows) and result.exit_code == 1
    rel = abs(c32 / 0.1 - 1.0)
    for r in result.rows:
        assert r.diagnosis == "float32 rounding", r.message
        assert r.max_rel == pytest.approx(rel, rel=1e-3)
        assert "consistent with float32 rounding" in r.message and f"{r.max_rel / EPS32:.2g} eps32" in r.message
        assert "returned float32" not in r.message
    assert "consistent with float32 rounding" in result.first_failure["message"]
    assert "consistent with float32 rounding" in result.report()


def test_returned_float32_names_the_dtype():
    def returns_float32(y, w, increasing):
        return _isotonic(y, w, increasing).astype(np.float32)
    result = oracle.verify("isotonic_regression", returns_float32, cases=_in_float32_range())
    failing = result.failures
    assert failing and all("returned float32 in float64 mode" in r.message for r in failing)
    assert all(r.diagnosis == "float32 rounding" for r in failing)  # one rounding of the output


def test_wrong_constant_500_eps32_is_not_precision():
    factor = 1.0 + 500 * EPS32
    result = oracle.verify("isotonic_regression", lambda y, w, increasing: _isotonic(y, w, increasing) * factor,
                           cases=_in_float32_range())
    k = oracle.kernel("isotonic_regression")
    assert result.counts["FAIL"] == len(result.rows)
    seen = set()
    for r in result.rows:
        case = next(c for c in k.cases() if c.name == r.case)
        tol32 = k.tolerance(case.inputs, oracle.reference_outputs(k, case.inputs), EPS32)[0]
        # beyond the case's own float32 rule: not precision; within it (long inputs), float32 arithmetic could do
        expected = "not precision" if r.max_abs > tol32 else "float32 arithmetic or formula"
        assert r.diagnosis == expected, (r.case, r.message)
        seen.add(r.diagnosis)
    assert "not precision" in seen
    small = _row(result, "random_n10")
    assert small.diagnosis == "not precision" and "a wrong constant or formula, not precision" in small.message
    assert f"{500:.2g} eps32" in small.message


def test_slightly_less_accurate_float64_is_diagnosed_as_float64_rounding():
    result = oracle.verify("isotonic_regression", lambda y, w, increasing: _isotonic(y, w, increasing) * (1 + 2e-14),
                           cases=["random_n10", "decreasing_n10"])
    assert [r.verdict for r in result.rows] == ["FAIL", "FAIL"]
    assert all(r.diagnosis == "float64 rounding" and "not float32" in r.message for r in result.rows)


def test_a_planted_1e_9_is_neither_precision():
    result = oracle.verify("isotonic_regression", lambda y, w, increasing: _isotonic(y, w, increasing) * (1 + 1e-9),
                           cases=["random_n10"])
    assert result.rows[0].diagnosis == "neither precision"


def test_a_structural_zero_output_is_judged_by_its_tolerance_alone():
    """At gamma = 0 the loss does not depend on v0: dv0 is exactly 0, which has no scale; the case passes."""
    name, case = "momentum_gradient", "linear_gamma0_N10"
    own = _own(name)
    result = oracle.verify(name, own, cases=[case])
    assert result.rows[0].verdict == "pass", result.report()

    def nonzero_dv0(**inputs):
        loss, dtheta, dx0, dv0 = own(**inputs)
        return loss, dtheta, dx0, np.asarray(dv0) + 1e-3
    row = oracle.verify(name, nonzero_dv0, cases=[case]).rows[0]
    assert row.verdict == "FAIL" and row.output == "dv0" and row.diagnosis == "zero reference"
    assert row.scale == 0.0 and "0 everywhere" in row.message


def test_statistical_kernels_are_not_affected():
    k = oracle.kernel("fgn")
    result = oracle.verify("fgn", k.implementation, cases=[k.cases()[0].name])
    assert [r.verdict for r in result.rows] == ["pass"] and result.exit_code == 0


# ----------------------------------------------------------------------------------------------
# the diagnosis and the comparison on their own


#: (error in eps32 relative, key) for an output of scale 1 whose float64 rule allows 1e-12 (relative) and whose
#: float32 rule allows 2^29 times that (4.5e3 eps32)
BANDS = [(1e-12 * 5 / EPS32, "float64 rounding"), (1e-10 / EPS32, "neither precision"),
         (ROUNDING_BAND[0], "float32 rounding"), (0.5, "float32 rounding"), (ROUNDING_BAND[1], "float32 rounding"),
         (2 * ROUNDING_BAND[1], "float32 arithmetic or formula"), (1e4, "not precision"), (math.inf, "not precision")]


@pytest.mark.parametrize("rel_eps32, key", BANDS)
def test_diagnosis_bands(rel_eps32, key):
    tol64 = 1e-12
    tol32 = tol64 * EPS32 / EPS64
    got, text = _diagnose(rel_eps32 * EPS32, 1.0, tol32, tol64, "float64")
    assert got == key, text
    if key != "float64 rounding":
        assert "float64 rounding" not in text


def test_diagnosis_extremes():
    key, text = _diagnose(1.0, 0.0, 1e-7, 1e-16, "float64")
    assert key == "zero reference" and "0 everywhere" in text
    key, text = _diagnose(1e-8, 1.0, 5e-9, math.nan, "float32", ("float16",))
    assert key == "float32 rounding" and "above the float32 rule" in text and "returned float16 in float32 mode" in text
    key, _ = _diagnose(1e-300, 1.0, 1e-310, math.nan, "float32")
    assert key == "neither precision"


def _kernel(tols):
    return Kernel(name="synthetic", signature="fn() -> (a, b)", make_cases=list,
                  returns=(Argument("a", "scalar", "float64", "a"), Argument("b", "scalar", "float64", "b")),
                  reference=lambda: None, tolerance=lambda inputs, ref, eps: tuple(t if eps == EPS64 else t * (eps / EPS64)
                                                                           for t in tols),
                  rule="synthetic", why="a test")


finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(finite, finite, finite), min_size=2, max_size=2))
def test_compare_verdict_follows_the_declared_rule(outputs):
    """FAIL iff an error exceeds its tolerance; else inconclusive iff a tolerance exceeds the fraction of a
    nonzero scale; else pass. The row names the output it reports, with that output's own figures."""
    ref = tuple(np.array([scale, -0.5 * scale]) for scale, _, _ in outputs)
    got = tuple(r + np.array([0.0, err]) for r, (_, err, _) in zip(ref, outputs))
    tols = [tol for _, _, tol in outputs]
    row = _compare(_kernel(tols), Case("c", {}, {}), got, ref, EPS64, {})
    errs = [float(np.max(np.abs(g - r))) for g, r in zip(got, ref)]
    fails = [e > t for e, t in zip(errs, tols)]
    wide = [s > 0 and t > INCONCLUSIVE_FRACTION * s for (s, _, _), t in zip(outputs, tols)]
    expected = "FAIL" if any(fails) else "inconclusive" if any(wide) else "pass"
    assert row.verdict == expected
    i = ("a", "b").index(row.output)
    assert row.max_abs == errs[i] and row.tol == tols[i] and row.scale == outputs[i][0]
    if expected == "inconclusive":
        assert wide[i] and str(INCONCLUSIVE_FRACTION) in row.message
    if expected == "FAIL":
        assert fails[i] and row.diagnosis and row.message
    else:
        assert row.diagnosis == ""
