"""Negative controls of the two-timescale claim checks: broken inputs make each verdict fail."""

import dataclasses
import math

import theory.experiments.two_timescale as ex


def test_envelope_control_wrong_weights_fails():
    cfg = dataclasses.replace(ex.ENVELOPE_PRESETS["check"], use_partial=False, trials=2)
    assert ex.envelope_verdict(ex.measure_envelope(cfg)).status == "fail"
    ok = dataclasses.replace(ex.ENVELOPE_PRESETS["check"], trials=2)
    assert ex.envelope_verdict(ex.measure_envelope(ok)).status == "pass"


def test_hessian_control_inflated_bound_fails():
    cfg = dataclasses.replace(ex.HESSIAN_PRESETS["check"], bound_factor=4.0)
    assert ex.hessian_verdict(ex.measure_hessian(cfg)).status == "fail"


def test_heaviside_control_loss_without_half_fails():
    # closed forms with the jumps counted twice (a loss without its 1/2) no longer match
    cfg = dataclasses.replace(ex.HEAVISIDE_PRESETS["check"], jump_scale=2.0, trials=1)
    r = ex.measure_heaviside(cfg)
    assert ex.heaviside_loss_verdict(r).status == "fail"
    assert ex.heaviside_velocity_verdict(r).status == "fail"


def test_heaviside_invariant_control_fails_on_drift():
    r = ex.measure_heaviside(dataclasses.replace(ex.HEAVISIDE_PRESETS["check"], trials=1))
    assert ex.heaviside_invariant_verdict(r).status == "pass"
    assert ex.heaviside_invariant_verdict(dataclasses.replace(r, invariant_drift=1e-3)).status == "fail"


def test_tracking_control_shrunk_bound_fails():
    cfg = dataclasses.replace(ex.TRACKING_PRESETS["check"], bound_scale=1e-3, lag_eps=(1e-5,), t_end=600.0)
    assert ex.tracking_bound_verdict(ex.measure_tracking(cfg)).status == "fail"


def test_tracking_lag_control_constant_lag_fails():
    r = ex.measure_tracking(dataclasses.replace(ex.TRACKING_PRESETS["check"], t_end=300.0))
    assert ex.tracking_lag_verdict(r).status == "pass"
    flat = dataclasses.replace(r, lag=tuple(r.lag[0] for _ in r.lag))
    assert ex.tracking_lag_verdict(flat).status == "fail"


def test_eps_limit_control_large_eps_fails():
    # far from the limit (eps up to 1e-2, transient of a = 0 dominates) the distance is not O(eps)
    cfg = dataclasses.replace(ex.EPS_LIMIT_PRESETS["check"], eps_values=(1e-2, 5e-3, 2.5e-3, 1.25e-3, 6.25e-4))
    assert ex.eps_limit_verdict(ex.measure_eps_limit(cfg)).status == "fail"


def test_dgood_control_too_few_neurons_fails():
    cfg = dataclasses.replace(ex.DGOOD_PRESETS["check"], m_offset=-240, draws=400)
    assert ex.dgood_verdict(ex.measure_dgood(cfg)).status == "fail"


def test_fig64_control_swapped_regimes_fails():
    cfg = dataclasses.replace(ex.FIG64_PRESETS["check"], seeds=(0,))
    r = ex.measure_fig64(cfg)
    assert ex.fig64_verdict(r).status == "pass"
    swapped = dataclasses.replace(r, l2=r.l2[::-1], moved=r.moved[::-1], covered=r.covered[::-1],
                                  eps_values=r.eps_values[::-1])
    assert ex.fig64_verdict(swapped).status == "fail"


def test_lemmas_control_shrunk_bounds_fail():
    r = ex.measure_lemmas(dataclasses.replace(ex.LEMMAS_PRESETS["check"], trials=2))
    for name in ex.LEMMAS:
        assert ex.lemma_verdict(r, name).status == "pass"
    small = ex.measure_lemmas(dataclasses.replace(ex.LEMMAS_PRESETS["check"], trials=2, bound_scale=1e-4))
    for name in ex.LEMMAS:
        assert ex.lemma_verdict(small, name).status == "fail", name


def test_recovery_control_short_horizon_fails():
    cfg = dataclasses.replace(ex.RECOVERY_PRESETS["check"], horizon_scale=0.01)
    assert ex.recovery_verdict(ex.measure_recovery(cfg)).status == "fail"


def test_fig67_control_flat_errors_fail():
    cfg = dataclasses.replace(ex.FIG67_PRESETS["check"], seeds=(0,), eps_values=(1e-2, 1.0))
    r = ex.measure_fig64(cfg)
    assert ex.fig67_verdict(r).status == "pass"
    flat = dataclasses.replace(r, l2=(r.l2[0], r.l2[0]))
    assert ex.fig67_verdict(flat).status == "fail"


def test_fig63_control_large_eps_fails():
    # eps = 1 is far from the two-timescale regime: SGD no longer follows the limit
    cfg = dataclasses.replace(ex.FIG63_PRESETS["check"], eps=1.0, h=1e-3, tau_end=0.2, tau_start=0.01)
    assert ex.fig63_verdict(ex.measure_fig63(cfg)).status == "fail"


def test_lemma_identities_control():
    r = ex.measure_lemmas(dataclasses.replace(ex.LEMMAS_PRESETS["check"], trials=2))
    assert ex.lemma_identity_verdict(r, "lemma-6.11").status == "pass"
    assert ex.lemma_identity_verdict(r, "lemma-6.13").status == "pass"
    assert ex.lemma_identity_verdict(dataclasses.replace(r, lemma611_error=1e-6), "lemma-6.11").status == "fail"
    assert ex.lemma_identity_verdict(dataclasses.replace(r, lemma613_error=1e-6), "lemma-6.13").status == "fail"


def _lipschitz_result():
    return ex.measure_lipschitz(dataclasses.replace(ex.LIPSCHITZ_PRESETS["check"], trials=2))


def test_lipschitz_control_blow_up_at_edge_fails():
    # a G whose Jacobian blows up like 1 / (gap - 2 eta) at the edge of U is not Lipschitz on U
    r = _lipschitz_result()
    assert ex.lipschitz_verdict(r).status == "pass"
    blown = tuple(tuple(n / (g - 2.0) for n, g in zip(row, r.gaps)) for row in r.jacobian_norms)
    assert ex.lipschitz_verdict(dataclasses.replace(r, jacobian_norms=blown)).status == "fail"
    # a slow (logarithmic) blow-up is caught too
    slow = tuple(tuple(n * (1 + abs(math.log(g - 2.0))) for n, g in zip(row, r.gaps))
                 for row in r.jacobian_norms)
    assert ex.lipschitz_verdict(dataclasses.replace(r, jacobian_norms=slow)).status == "fail"


def test_lipschitz_control_quotient_above_jacobian_fails():
    r = _lipschitz_result()
    bad = tuple(q * 10 for q in r.quotient_ratios)
    assert ex.lipschitz_verdict(dataclasses.replace(r, quotient_ratios=bad)).status == "fail"


def test_lipschitz_control_weights_above_proof_bound_fails():
    r = _lipschitz_result()
    assert ex.lipschitz_verdict(dataclasses.replace(r, astar_ratio=1.5)).status == "fail"


def test_flanking_control_formula_broken_or_hypothesis_blind_fails():
    r = ex.measure_flanking(dataclasses.replace(ex.FLANKING_PRESETS["check"], trials=2))
    assert ex.flanking_verdict(r).status == "pass"
    # a formula off by 1e-6 inside the hypothesis fails
    off = tuple(e + 1e-6 for e in r.flank_error)
    assert ex.flanking_verdict(dataclasses.replace(r, flank_error=off)).status == "fail"
    # formulae that stayed exact below eta/2 would mean the measurement does not see the jump: fail
    blind = dataclasses.replace(r, flank_error=tuple(1e-14 for _ in r.flank_error))
    assert ex.flanking_verdict(blind).status == "fail"


def test_flanking_erratum_control_both_halves():
    r = ex.measure_flanking(dataclasses.replace(ex.FLANKING_PRESETS["check"], trials=2))
    verdict = ex.flanking_erratum_verdict(r)
    assert verdict.status == "pass" and verdict.kind == "erratum"
    assert [p.status for p in verdict.parts] == ["fail", "pass"]
    # if the printed label were right (printed form exact), the erratum record fails
    right = dataclasses.replace(r, printed_error=1e-14)
    assert ex.flanking_erratum_verdict(right).status == "fail"
    # if the corrected form failed too, the erratum record fails
    wrong = dataclasses.replace(r, flank_error=tuple(1e-3 for _ in r.flank_error))
    assert ex.flanking_erratum_verdict(wrong).status == "fail"


def test_flanking_control_no_offset_outside_the_hypothesis_fails():
    # without an offset below eta/2 the check cannot show that the hypothesis is needed
    r = ex.measure_flanking(dataclasses.replace(ex.FLANKING_PRESETS["check"], trials=1, offsets=(2.0, 1.0, 0.5)))
    assert ex.flanking_verdict(r).status == "fail"


def test_lag_and_eps_limit_are_rates_with_the_slope_in_measured():
    r = ex.measure_tracking(dataclasses.replace(ex.TRACKING_PRESETS["check"], t_end=300.0))
    verdict = ex.tracking_lag_verdict(r)
    assert verdict.kind == "rate" and isinstance(verdict.measured["slope"], float)
    assert abs(verdict.measured["slope"] - 1) <= verdict.expected["tol"]
    assert len(verdict.measured["grid"]) >= 5
