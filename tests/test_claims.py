"""Tests of theory.claims: claim IDs, the verdict functions (the generic negative controls), records."""

import math

import numpy as np
import pytest

from theory.claims import (
    KINDS,
    PAPER_KEYS,
    ClaimRecord,
    Verdict,
    bound_verdict,
    erratum_verdict,
    frequency_verdict,
    identity_verdict,
    is_erratum_id,
    merge_records,
    parse_claim_id,
    qualitative_verdict,
    rate_verdict,
)
from theory.rates import BoundResult, FrequencyResult, IdentityResult, RateFit, bound_ratio, fit_rate, frequency, identity_error

N = np.array([8, 16, 32, 64, 128, 256, 512, 1024])


def make_fit(slope, ci=None, dropped=()):
    """A hand-built fit with the given slope, as a broken check would produce."""
    ci = ci if ci is not None else (slope - 0.02, slope + 0.02)
    return RateFit(slope, 0.0, ci, 0.999, N, N**slope, dropped)


# --------------------------------------------------------------------------- IDs


@pytest.mark.parametrize(
    "claim_id, expected",
    [
        ("resnet-node/prop-3", ("resnet-node", "prop-3")),
        ("resnet-node/thm-1", ("resnet-node", "thm-1")),
        ("scaling/cor-4", ("scaling", "cor-4")),
        ("implicit-reg/lemma-20", ("implicit-reg", "lemma-20")),
        ("topk/prop-7.8", ("topk", "prop-7.8")),
        ("resnet-node/fig-4", ("resnet-node", "fig-4")),
        ("two-timescale/thm-A.2b/erratum", ("two-timescale", "thm-A.2b/erratum")),
        ("resnet-node/prop-3/iid", ("resnet-node", "prop-3/iid")),
        ("resnet-node/sec-3.2/gradient/erratum", ("resnet-node", "sec-3.2/gradient/erratum")),
        ("resnet-node/prop-1/non-smooth", ("resnet-node", "prop-1/non-smooth")),
    ],
)
def test_parse_claim_id_valid(claim_id, expected):
    assert parse_claim_id(claim_id) == expected


@pytest.mark.parametrize(
    "claim_id, message",
    [
        ("resnet/prop-3", r"unknown paper key 'resnet'"),
        ("sander-thesis/prop-2.9", r"unknown paper key"),
        ("resnet-node/prop3", r"'<paper-key>/<label>-<number>'"),
        ("resnet-node/iid/prop-3", r"must be"),
        ("resnet-node/prop-", r"must be"),
        ("resnet-node/Prop-3", r"must be"),
        ("resnet-node/prop-3/erratum/iid", r"a final '/erratum'"),
        ("resnet-node/prop-3/Tight", r"must be"),
        ("resnet-node/prop-3//iid", r"must be"),
        ("resnet-node/prop-3/-iid", r"must be"),
        ("resnet-node/prop-3/", r"must be"),
        ("resnet-node", r"must be"),
        (3, r"must be a string"),
    ],
)
def test_parse_claim_id_invalid(claim_id, message):
    with pytest.raises(ValueError, match=message):
        parse_claim_id(claim_id)


def test_constants_and_erratum_ids():
    assert len(PAPER_KEYS) == 10 and "two-timescale" in PAPER_KEYS
    assert KINDS == ("bound", "rate", "identity", "frequency", "qualitative", "erratum")
    assert is_erratum_id("topk/prop-7.8/erratum") and not is_erratum_id("topk/prop-7.8")
    assert is_erratum_id("resnet-node/sec-3.2/gradient/erratum") and not is_erratum_id("topk/prop-7.8/iid")


# --------------------------------------------------------------------------- rate


def test_rate_verdict_passes_on_a_true_rate_and_formats_the_record():
    verdict = rate_verdict(fit_rate(N, 2.0 / N), {"slope": -1.0, "tol": 0.1})
    assert verdict.status == "pass" and verdict.passed
    assert verdict.message == "slope -1.00 [95% CI -1.00, -1.00], expected -1.00 ± 0.10, N = 8..1024"


def test_rate_verdict_fails_outside_tolerance():
    verdict = rate_verdict(make_fit(-0.62, (-0.66, -0.58)), {"slope": -1.0, "tol": 0.1})
    assert verdict.status == "fail"
    assert verdict.message == "slope -0.62 [95% CI -0.66, -0.58], expected -1.00 ± 0.10, N = 8..1024"
    assert rate_verdict(make_fit(-1.09), {"slope": -1.0, "tol": 0.1}).status == "pass"
    assert rate_verdict(make_fit(-1.11), {"slope": -1.0, "tol": 0.1}).status == "fail"


def test_rate_verdict_slope_max_accepts_faster_rates_only():
    assert rate_verdict(make_fit(-2.0), {"slope_max": -1.0}).status == "pass"
    assert rate_verdict(make_fit(-0.9), {"slope_max": -1.0}).status == "fail"
    both = {"slope": -2.0, "tol": 0.1, "slope_max": -1.0}
    assert rate_verdict(make_fit(-2.05), both).status == "pass"
    assert rate_verdict(make_fit(-1.5), both).status == "fail"
    assert "expected -2.00 ± 0.10 and slope ≤ -1.00" in rate_verdict(make_fit(-1.5), both).message


def test_rate_verdict_nan_fails_and_dropped_listed():
    assert rate_verdict(make_fit(math.nan), {"slope_max": 0.0}).status == "fail"
    verdict = rate_verdict(make_fit(-1.0, dropped=(512, 1024)), {"slope": -1.0, "tol": 0.1}, grid_label="n")
    assert verdict.message.endswith("n = 8..1024 (dropped at floor: 512, 1024)")


@pytest.mark.parametrize(
    "expected, message",
    [
        ({"slope": -1.0}, r"needs both 'slope' and 'tol'"),
        ({"tol": 0.1}, r"needs both"),
        ({}, r"needs 'slope' and 'tol', or 'slope_max'"),
        ({"slope": -1.0, "tol": 0.1, "tolerance": 1}, r"unknown keys \['tolerance'\]"),
        ({"slope": -1.0, "tol": -0.1}, r"non-negative"),
        ({"slope": "x", "tol": 0.1}, r"`expected\['slope'\]` of theory.claims.rate_verdict must be a number"),
        ({"slope_max": np.nan}, r"must be finite"),
        ([("slope", -1)], r"must be a dict"),
    ],
)
def test_rate_verdict_validation(expected, message):
    with pytest.raises(ValueError, match=message):
        rate_verdict(make_fit(-1.0), expected)


# --------------------------------------------------------------------------- bound, frequency, identity


def test_bound_verdict_pass_fail_nan():
    ok = bound_ratio([0.5, 0.99], [1.0, 1.0], instances=[{"d": 2}, {"d": 3}])
    verdict = bound_verdict(ok, {"ratio_max": 1.0})
    assert verdict.status == "pass"
    assert verdict.message == 'max LHS/RHS 0.99 over 2 instances (worst: {"d": 3}), expected ≤ 1'
    assert bound_verdict(bound_ratio([1.01], [1.0]), {"ratio_max": 1.0}).status == "fail"
    assert bound_verdict(BoundResult(math.nan, 3, 0), {"ratio_max": 1.0}).status == "fail"
    assert bound_verdict(BoundResult(math.inf, 3, 0), {"ratio_max": 1.0}).status == "fail"
    with pytest.raises(ValueError, match="needs 'ratio_max'"):
        bound_verdict(ok, {})


def test_frequency_verdict_pass_fail_and_default_delta():
    few = frequency(np.arange(1000) < 12, delta=0.05)
    assert frequency_verdict(few, {"delta": 0.05}).status == "pass"
    assert frequency_verdict(few, {}).status == "pass"  # delta from the result
    assert frequency_verdict(few, {"delta": 0.01}).status == "fail"
    assert "(12 of 1000)" in frequency_verdict(few, {"delta": 0.01}).message
    with pytest.raises(ValueError, match="needs 'delta'"):
        frequency_verdict(FrequencyResult(0.0, 10, 0, None, (0.0, 0.3)), {})


def test_identity_verdict_tolerances():
    result = IdentityResult(1e-14, 1e-9, 5)
    assert identity_verdict(result, {"atol": 1e-12}).status == "pass"
    assert identity_verdict(result, {"rtol": 1e-12}).status == "fail"
    assert identity_verdict(result, {"atol": 1e-12, "rtol": 1e-12}).status == "fail"  # every one must hold
    assert identity_verdict(result, {"atol": 1e-12, "rtol": 1e-8}).status == "pass"
    assert identity_verdict(IdentityResult(math.nan, math.nan, 1), {"atol": 1.0}).status == "fail"
    with pytest.raises(ValueError, match="needs 'atol' and/or 'rtol'"):
        identity_verdict(result, {})


def test_qualitative_verdict():
    assert qualitative_verdict(True, "monotone").status == "pass"
    assert qualitative_verdict(np.bool_(False), "not monotone").status == "fail"
    with pytest.raises(ValueError, match="`ok` .* must be a bool"):
        qualitative_verdict(1, "x")
    with pytest.raises(ValueError, match="`message`"):
        qualitative_verdict(True, "")


def test_erratum_verdict_inverts_the_printed_verdict():
    printed_fails = rate_verdict(make_fit(-1.0), {"slope": -2.0, "tol": 0.1})
    verdict = erratum_verdict(printed_fails)
    assert verdict.status == "pass"
    assert verdict.message.startswith("printed statement fails, as documented: slope -1.00")
    printed_holds = rate_verdict(make_fit(-2.0), {"slope": -2.0, "tol": 0.1})
    verdict = erratum_verdict(printed_holds)
    assert verdict.status == "fail"
    assert "holds numerically" in verdict.message
    with pytest.raises(ValueError, match="must be a Verdict"):
        erratum_verdict("fail")


def test_verdict_status_validated():
    with pytest.raises(ValueError, match="'pass' or 'fail'"):
        Verdict("skip", "x")


# --------------------------------------------------------------------------- records


def record(claim_id="resnet-node/prop-3", status="pass", measured=None, **kwargs):
    return ClaimRecord(
        id=claim_id,
        paper=claim_id.split("/")[0],
        aliases=kwargs.pop("aliases", ()),
        title="Euler reconstruction error is O(1/N)",
        kind=kwargs.pop("kind", "rate"),
        status=status,
        expected={"slope": -1.0, "tol": 0.1},
        measured={"slope": -1.0} if measured is None else measured,
        **kwargs,
    )


def test_record_as_dict_key_order():
    data = record(aliases=["sander-thesis/prop-2.9"], seconds=1.5, figure="figures/out/x.png").as_dict()
    assert list(data)[:10] == ["id", "paper", "aliases", "title", "kind", "status", "expected",
                               "measured", "figure", "seconds"]
    assert list(data)[10:] == ["message", "test", "notes", "proxy", "wrong_in", "measured_at", "commit",
                               "experiment", "preset", "parameters", "step_of"]
    assert data["aliases"] == ["sander-thesis/prop-2.9"] and data["notes"] == []
    assert data["proxy"] is None and data["wrong_in"] is None


def test_record_proxy_and_wrong_in():
    rec = record(proxy="m/n <= 8 where the proposition needs m >= 4.8e6 n")
    assert rec.as_dict()["proxy"].startswith("m/n")
    with pytest.raises(ValueError, match="proxy"):
        record(proxy="  ")
    err = record(claim_id="scaling/cor-4/erratum", kind="erratum")
    assert err.wrong_in == "statement"  # the default for an erratum
    assert record(claim_id="scaling/cor-4/erratum", kind="erratum", wrong_in="proof").wrong_in == "proof"
    with pytest.raises(ValueError, match="wrong_in"):
        record(claim_id="scaling/cor-4/erratum", kind="erratum", wrong_in="typo")
    with pytest.raises(ValueError, match="erratum records only"):
        record(wrong_in="proof")


def test_identity_verdict_relative_only_where_the_reference_is_nonzero():
    zero_ref = identity_error([1e-20, 1.0], [0.0, 1.0])
    atol_only = identity_verdict(zero_ref, {"atol": 1e-12})
    assert atol_only.passed and "inf" not in atol_only.message and "rel" not in atol_only.message.split(",")[0]
    assert identity_verdict(zero_ref, {"rtol": 1e-12}).status == "fail"  # a zero reference must match exactly
    assert identity_verdict(zero_ref, {"rtol": 1e-12, "atol": 1e-18}).passed
    all_zero = identity_verdict(identity_error([0.0, 0.0], [0.0, 0.0]), {"rtol": 1e-12})
    assert all_zero.passed and "n/a (zero reference)" in all_zero.message
    tiny = identity_verdict(identity_error([6.8e-15, 1.0], [0.0, 1.0]), {"atol": 1e-7})
    assert "6.80e-15 of max |reference|" in tiny.message  # normwise, not 'rel 1.00e+00'


def test_erratum_verdict_asserts_both_halves():
    printed_fails, printed_holds = Verdict("fail", "p"), Verdict("pass", "p")
    corrected_holds, corrected_fails = Verdict("pass", "c"), Verdict("fail", "c")
    assert erratum_verdict(printed_fails, corrected_holds).status == "pass"
    assert erratum_verdict(printed_fails, corrected_fails).status == "fail"
    assert "corrected statement FAILS too" in erratum_verdict(printed_fails, corrected_fails).message
    assert erratum_verdict(printed_holds, corrected_holds).status == "fail"
    with pytest.raises(ValueError, match="corrected_verdict"):
        erratum_verdict(printed_fails, "pass")


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"claim_id": "nope/prop-1"}, "unknown paper key"),
        ({"kind": "theorem"}, "unknown kind 'theorem'"),
        ({"status": "error"}, "unknown status 'error'"),
    ],
)
def test_record_validation(changes, message):
    with pytest.raises(ValueError, match=message):
        record(**changes)
    with pytest.raises(ValueError, match="has paper 'scaling'"):
        ClaimRecord("topk/prop-1", "scaling", (), "t", "rate", "pass", {}, {})


def test_merge_records():
    a = record(status="pass", measured={}, seconds=1.0, test="t::a")
    b = record(status="fail", measured={"slope": -0.5}, seconds=2.0, test="t::b", message="slope -0.50")
    c = record(status="skip", seconds=0.5, test="t::c")
    other = record("scaling/cor-4", status="skip")
    merged = merge_records([a, other, b, c])
    assert [r.id for r in merged] == ["resnet-node/prop-3", "scaling/cor-4"]
    m = merged[0]
    assert m.status == "fail" and m.message == "slope -0.50"
    assert m.measured == {"slope": -0.5}  # the first record that measured something
    assert m.seconds == 3.5
    assert "merged from 3 tests" in m.notes[-1] and "t::b (fail)" in m.notes[-1]
    assert merge_records([a, c])[0].status == "pass"
    assert merge_records([c, c])[0].status == "skip"


# --------------------------------------------------------------------------- the typed verdict


def test_every_builder_sets_kind_expected_and_measured():
    from theory.claims import threshold_verdict
    from theory.rates import bound_ratio, fit_rate, frequency, identity_error

    N = np.array([8, 16, 32, 64, 128])
    rate = rate_verdict(fit_rate(N, 1.0 / N), {"slope": -1.0, "tol": 0.1})
    assert (rate.kind, rate.expected, rate.measured["slope"]) == ("rate", {"slope": -1.0, "tol": 0.1},
                                                                  pytest.approx(-1.0))
    bound = bound_verdict(bound_ratio([1.0, 3.0], [2.0, 4.0]), {"ratio_max": 1.0})
    assert (bound.kind, bound.measured["ratio"]) == ("bound", 0.75)
    freq = frequency_verdict(frequency([False] * 9 + [True]), {"delta": 0.2})
    assert (freq.kind, freq.expected, freq.measured["freq"]) == ("frequency", {"delta": 0.2}, 0.1)
    ident = identity_verdict(identity_error([1.0], [1.0]), {"atol": 1e-12})
    assert ident.kind == "identity" and ident.measured["max_abs_err"] == 0.0
    both = erratum_verdict(rate_verdict(fit_rate(N, 1.0 / N), {"slope": -2.0, "tol": 0.1}), rate)
    assert both.kind == "erratum" and both.passed and [p.kind for p in both.parts] == ["rate", "rate"]
    assert both.expected == {"printed": {"slope": -2.0, "tol": 0.1}, "corrected": {"slope": -1.0, "tol": 0.1}}
    th = threshold_verdict("bound", {"a": 1.0, "b": 2.0}, {"a_below": 1.5, "b_above": 2.0})
    assert th.status == "fail" and th.message == "a 1 < 1.5, b 2 > 2"
    assert threshold_verdict("bound", {"a": float("nan")}, {"a_max": 1.0}).status == "fail"
    with pytest.raises(ValueError, match="must end in '_max'"):
        threshold_verdict("bound", {"a": 1.0}, {"a": 1.0})
    with pytest.raises(ValueError, match="lacks"):
        threshold_verdict("bound", {"a": 1.0}, {"b_max": 1.0})


def test_a_rate_needs_five_sizes():
    from theory.claims import MIN_RATE_SIZES
    from theory.rates import fit_rate

    N = np.array([8, 16, 32, 64])
    v = rate_verdict(fit_rate(N, 1.0 / N), {"slope": -1.0, "tol": 0.1})
    assert MIN_RATE_SIZES == 5 and v.status == "fail" and "fitted on 4 sizes" in v.message
    N5 = np.array([8, 16, 32, 64, 128])
    errors = 1.0 / N5
    errors[-1] = 0.0  # dropped at the floor: four sizes left in the fit
    assert rate_verdict(fit_rate(N5, errors), {"slope": -1.0, "tol": 0.1}).status == "fail"


def test_record_step_of_validated():
    rec = record(step_of=["resnet-node/thm-1"])
    assert rec.as_dict()["step_of"] == ["resnet-node/thm-1"]
    with pytest.raises(ValueError, match="unknown paper key"):
        record(step_of=["nokey/thm-1"])
    with pytest.raises(ValueError, match="itself"):
        record(step_of=[record().id])
