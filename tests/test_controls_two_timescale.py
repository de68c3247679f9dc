"""Negative controls of the two-timescale claim checks: each reruns a measurement with a broken input (a constant
wrong, a hypothesis violated, a kernel broken by monkeypatching) and asserts that the verdict fails. For the
searched bounds the control also asserts, where the random instances stay within the mutated bound, that the
violation was found by the worst-case search alone."""

import dataclasses
import math

import numpy as np
import pytest

import theory.experiments.two_timescale as ex
import theory.two_timescale as T
from theory.experiments.two_timescale._approach import d_good_positions


def test_envelope_control_wrong_weights_fails():
    cfg = dataclasses.replace(ex.ENVELOPE_PRESETS["check"], use_partial=False, trials=2)
    assert ex.envelope_verdict(ex.measure_envelope(cfg)).status == "fail"
    ok = dataclasses.replace(ex.ENVELOPE_PRESETS["check"], trials=2)
    assert ex.envelope_verdict(ex.measure_envelope(ok)).status == "pass"


def _failed_by_search(verdict, result):
    """The verdict fails, its random instances stay within the bound: the search found the violation."""
    assert verdict.status == "fail"
    assert result.search.ratio > 1.0
    return True


def test_hessian_control_constant_divided_by_4_fails():
    # Delta(u)/2 <= lambda_min: the printed 8 divided by 4
    cfg = dataclasses.replace(ex.HESSIAN_PRESETS["check"], bound_factor=4.0, m_values=(3, 12), trials=5)
    assert ex.hessian_verdict(ex.measure_hessian(cfg)).status == "fail"


def test_hessian_control_found_by_the_search():
    # Delta(u)/4.4 <= lambda_min holds on the random draws (ratio 0.86 there) and fails where the search goes (m = 100,
    # the smallest gap at 2 eta, the slack on one gap)
    cfg = dataclasses.replace(ex.HESSIAN_PRESETS["check"], bound_factor=1.8)
    r = ex.measure_hessian(cfg)
    assert r.ratio <= 1.0 and _failed_by_search(ex.hessian_verdict(r), r)


def test_heaviside_control_loss_without_half_fails():
    # closed forms with the jumps counted twice (a loss without its 1/2) no longer match
    cfg = dataclasses.replace(ex.HEAVISIDE_PRESETS["check"], jump_scale=2.0, trials=1)
    r = ex.measure_heaviside(cfg)
    assert ex.heaviside_loss_verdict(r).status == "fail"
    assert ex.heaviside_velocity_verdict(r).status == "fail"


def test_heaviside_invariant_control_wrong_invariant_fails(monkeypatch):
    cfg = dataclasses.replace(ex.HEAVISIDE_PRESETS["check"], trials=1)
    assert ex.heaviside_invariant_verdict(ex.measure_heaviside(cfg)).status == "pass"
    # the squares instead of the cubes are not conserved along (6.7)
    monkeypatch.setattr(T, "heaviside_invariant",
                        lambda ul, ur, v: (np.asarray(ur) - v) ** 2 - (v - np.asarray(ul)) ** 2)
    assert ex.heaviside_invariant_verdict(ex.measure_heaviside(cfg)).status == "fail"


def test_heaviside_invariant_control_wrong_hitting_time_fails(monkeypatch):
    cfg = dataclasses.replace(ex.HEAVISIDE_PRESETS["check"], trials=1)
    true = T.heaviside_hitting_time
    monkeypatch.setattr(T, "heaviside_hitting_time", lambda *a: (1.001 * true(*a)[0], true(*a)[1]))
    assert ex.heaviside_invariant_verdict(ex.measure_heaviside(cfg)).status == "fail"


def test_tracking_control_constant_divided_by_4_found_by_the_search():
    # Prop. 6.9's bound divided by 4: the run at the threshold stays below it (ratio 0.22), the search does not
    cfg = dataclasses.replace(ex.TRACKING_PRESETS["check"], bound_scale=0.25, lag_eps=(1e-5,), t_end=600.0)
    r = ex.measure_tracking(cfg)
    assert r.ratio <= 1.0 and _failed_by_search(ex.tracking_bound_verdict(r), r)


def test_tracking_lag_control_lag_measured_in_the_transient_fails():
    # over a horizon shorter than the decay of a - a*(u) the "lag" is the transient, the same for every eps
    r = ex.measure_tracking(dataclasses.replace(ex.TRACKING_PRESETS["check"], t_end=300.0, lag_t_end=4.0))
    assert ex.tracking_lag_verdict(r).status == "fail"


def test_eps_limit_control_large_eps_fails():
    # far from the limit (eps up to 1e-2, transient of a = 0 dominates) the distance is not O(eps)
    cfg = dataclasses.replace(ex.EPS_LIMIT_PRESETS["check"], eps_values=(1e-2, 5e-3, 2.5e-3, 1.25e-3, 6.25e-4))
    assert ex.eps_limit_verdict(ex.measure_eps_limit(cfg)).status == "fail"


def test_dgood_control_too_few_neurons_fails():
    cfg = dataclasses.replace(ex.DGOOD_PRESETS["check"], m_offset=-240, draws=400)
    assert ex.dgood_verdict(ex.measure_dgood(cfg)).status == "fail"


def test_fig64_control_swapped_regimes_fails():
    # eps = 1 run as the "small" eps and 1e-3 as the large one: the shapes of Figs 6.4-6.5 are reversed
    cfg = dataclasses.replace(ex.FIG64_PRESETS["check"], seeds=(0,), eps_values=(1.0, 1e-3))
    assert ex.fig64_verdict(ex.measure_fig64(cfg)).status == "fail"


def test_recovery_control_short_horizon_fails():
    cfg = dataclasses.replace(ex.RECOVERY_PRESETS["check"], horizon_scale=0.01, search_budget=50)
    assert ex.recovery_verdict(ex.measure_recovery(cfg)).status == "fail"


def test_recovery_control_quarter_horizon_found_by_the_search():
    # T/4: every random initialisation (ratio 0.29) still reaches its jumps, the searched wide symmetric pairs do not
    r = ex.measure_recovery(dataclasses.replace(ex.RECOVERY_PRESETS["check"], horizon_scale=0.25))
    assert r.max_ratio <= 1.0 and _failed_by_search(ex.recovery_verdict(r), r)


@pytest.mark.parametrize("scale, fails", [(0.64, True), (0.69, False)])
def test_recovery_search_is_sharp_at_the_supremum(scale, fails):
    # the supremum of tau* / (6 / Delta f^2) over the class is 2/3: a horizon of 0.64 T is too short somewhere
    # (the search finds it), 0.69 T is long enough everywhere
    r = ex.measure_recovery(dataclasses.replace(ex.RECOVERY_PRESETS["check"], horizon_scale=scale))
    assert r.search.ratio == pytest.approx(2 / 3 / scale, rel=1e-5)
    assert (ex.recovery_verdict(r).status == "fail") is fails


def test_fig67_control_flat_errors_fail():
    # two small eps: no transition, the error does not grow
    cfg = dataclasses.replace(ex.FIG67_PRESETS["check"], seeds=(0,), eps_values=(1e-2, 2e-2))
    assert ex.fig67_verdict(ex.measure_fig64(cfg)).status == "fail"


def test_fig63_control_large_eps_fails():
    # eps = 1 is far from the two-timescale regime: SGD no longer follows the limit
    cfg = dataclasses.replace(ex.FIG63_PRESETS["check"], eps=1.0, h=1e-3, tau_end=0.2, tau_start=0.01)
    assert ex.fig63_verdict(ex.measure_fig63(cfg)).status == "fail"


def test_lemma_identities_control_outside_u_fails():
    ok = ex.measure_lemmas(dataclasses.replace(ex.LEMMAS_PRESETS["check"], trials=2))
    assert ex.lemma_identity_verdict(ok, "lemma-6.11").status == "pass"
    assert ex.lemma_identity_verdict(ok, "lemma-6.13").status == "pass"
    # a neuron at eta/2 of a flanking one: their features overlap (u outside U_eta), H_eta != H_0 + D_eta
    bad = ex.measure_lemmas(dataclasses.replace(ex.LEMMAS_PRESETS["check"], trials=2, min_gap=0.5))
    assert ex.lemma_identity_verdict(bad, "lemma-6.11").status == "fail"
    # a flanking neuron at eta/4 of its jump (Lemma 6.13 asks eta/2): the jump enters sigma_eta's support
    bad = ex.measure_lemmas(dataclasses.replace(ex.LEMMAS_PRESETS["check"], trials=2, flank_offset=0.25))
    assert ex.lemma_identity_verdict(bad, "lemma-6.13").status == "fail"


_LIP = dataclasses.replace(ex.LIPSCHITZ_PRESETS["check"], trials=2, search_budget=30)


def _blow_up(monkeypatch, factor):
    """G(u) multiplied by factor(Delta(u) / eta - 2): a reduced gradient that is not Lipschitz at the edge of U."""
    true = T.gradient

    def broken(a, u, eta, v, f, *args, **kw):
        ga, gu = true(a, u, eta, v, f, *args, **kw)
        return ga, gu * factor(T.separation(u, eta) / eta - 2.0)

    monkeypatch.setattr(T, "gradient", broken)


def test_lipschitz_control_blow_up_at_edge_fails(monkeypatch):
    assert ex.lipschitz_verdict(ex.measure_lipschitz(_LIP)).status == "pass"
    _blow_up(monkeypatch, lambda s: 1.0 / s)
    assert ex.lipschitz_verdict(ex.measure_lipschitz(_LIP)).status == "fail"


def test_lipschitz_control_slow_blow_up_at_edge_fails(monkeypatch):
    _blow_up(monkeypatch, lambda s: 1.0 + abs(math.log(s)))
    assert ex.lipschitz_verdict(ex.measure_lipschitz(_LIP)).status == "fail"


def test_lipschitz_control_discontinuous_gradient_fails(monkeypatch):
    # a step every 0.05 eta in each coordinate: the pairs 0.2 eta apart see it, the central differences (1e-7) do not
    true = T.gradient

    def broken(a, u, eta, v, f, *args, **kw):
        ga, gu = true(a, u, eta, v, f, *args, **kw)
        return ga, gu + np.floor(np.asarray(u) / (0.05 * eta))

    monkeypatch.setattr(T, "gradient", broken)
    assert ex.lipschitz_verdict(ex.measure_lipschitz(_LIP)).status == "fail"


def test_lipschitz_control_astar_constant_found_by_the_search():
    # ||a*|| <= 0.02 M sqrt(m+1) / Delta(u) (the printed 8 divided by 400): true at the draws (0.22), not where the
    # search goes
    r = ex.measure_lipschitz(dataclasses.replace(ex.LIPSCHITZ_PRESETS["check"], trials=2, astar_constant=0.02))
    assert r.astar_ratio <= 1.0 and _failed_by_search(ex.lipschitz_verdict(r), r)


_FLANK = dataclasses.replace(ex.FLANKING_PRESETS["check"], trials=2)


def _patch_flanking_gradient(monkeypatch, change):
    true = T.gradient

    def broken(a, u, eta, v, f, *args, **kw):
        ga, gu = true(a, u, eta, v, f, *args, **kw)
        return ga, change(np.array(gu), np.asarray(u), np.asarray(v), np.asarray(f))

    monkeypatch.setattr(T, "gradient", broken)


def test_flanking_control_formula_broken_fails(monkeypatch):
    assert ex.flanking_verdict(ex.measure_flanking(_FLANK)).status == "pass"
    _patch_flanking_gradient(monkeypatch, lambda g, u, v, f: g + 1e-6 * np.abs(g).max())
    assert ex.flanking_verdict(ex.measure_flanking(_FLANK)).status == "fail"


def test_flanking_control_hypothesis_blind_fails(monkeypatch):
    # a gradient equal to the Heaviside formulae at every offset would not see the jump enter sigma_eta's support
    _patch_flanking_gradient(monkeypatch, lambda g, u, v, f: -T.heaviside_velocities(u, v, f))
    assert ex.flanking_verdict(ex.measure_flanking(_FLANK)).status == "fail"


def _swap_flanks(g, u, v, f):
    L, R = T.flanking(u, v)
    g = g.copy()
    g[L], g[R] = g[R].copy(), g[L].copy()
    return g


def test_flanking_erratum_control_both_halves(monkeypatch):
    verdict = ex.flanking_erratum_verdict(ex.measure_flanking(_FLANK))
    assert verdict.status == "pass" and verdict.kind == "erratum"
    assert [p.status for p in verdict.parts] == ["fail", "pass"]
    # a gradient with the labels of the printed display (d/du^R where Lemma 6.13's proof has d/du^L): the printed
    # form holds, the erratum record fails
    _patch_flanking_gradient(monkeypatch, _swap_flanks)
    swapped = ex.flanking_erratum_verdict(ex.measure_flanking(_FLANK))
    assert swapped.status == "fail" and swapped.parts[0].status == "pass"


def test_flanking_erratum_control_corrected_form_broken_fails(monkeypatch):
    _patch_flanking_gradient(monkeypatch, lambda g, u, v, f: g + 1e-3 * np.abs(g).max())
    verdict = ex.flanking_erratum_verdict(ex.measure_flanking(_FLANK))
    assert verdict.status == "fail" and verdict.parts[1].status == "fail"


def test_flanking_control_no_offset_outside_the_hypothesis_fails():
    # without an offset below eta/2 the check cannot show that the hypothesis is needed
    r = ex.measure_flanking(dataclasses.replace(ex.FLANKING_PRESETS["check"], trials=1, offsets=(2.0, 1.0, 0.5)))
    assert ex.flanking_verdict(r).status == "fail"


def test_lag_and_eps_limit_are_rates_with_the_slope_in_measured():
    r = ex.measure_tracking(dataclasses.replace(ex.TRACKING_PRESETS["check"], t_end=300.0, search_budget=4))
    verdict = ex.tracking_lag_verdict(r)
    assert verdict.kind == "rate" and isinstance(verdict.measured["slope"], float)
    assert abs(verdict.measured["slope"] - 1) <= verdict.expected["tol"]
    assert len(verdict.measured["grid"]) >= 5


# ------------------------------------------------------------------------------ the searched bounds

#: claim -> (the right-hand side's factor of the control, whether the random instances stay within the mutated
#: bound): the printed constant divided by 4 where the random instances and the search agree; where the search goes
#: further, a factor between the two worst ratios, so that only the search finds the violation
MUTATIONS = {
    "two-timescale/lemma-6.10": (0.02, True),
    "two-timescale/lemma-6.10/norm": (0.73, True),
    "two-timescale/lemma-6.12": (0.007, True),
    "two-timescale/lemma-6.14": (0.25, False),
    "two-timescale/lemma-6.15/weights": (0.6, True),
    "two-timescale/lemma-6.15": (0.31, True),
    "two-timescale/lemma-6.16": (0.005, True),
    "two-timescale/lemma-6.17": (0.25, False),
    "two-timescale/lemma-6.17/grad-a": (0.72, True),
    "two-timescale/lemma-6.17/loss": (0.49, True),
    "two-timescale/lemma-6.18": (0.1, True),
    "two-timescale/eq-6.14": (9e-5, False),
    "two-timescale/prop-6.7/step-sum-decrease": (0.25, False),
    "two-timescale/prop-6.7/step-gap-increase": (0.25, False),
    "two-timescale/eq-6.15": (4e-3, True),
    "two-timescale/eq-6.15/display": (0.25, False),
    "two-timescale/prop-6.7/step-collision": (1.3e-10, True),
    "two-timescale/eq-6.24": (0.25, False),
    "two-timescale/eq-6.19": (0.19, True),
    "two-timescale/thm-6.8/step-separation": (0.25, False),
    "two-timescale/thm-6.8/step-lemma-6-18-applies": (7e-16, True),
    "two-timescale/thm-6.8/step-accuracy": (1e-9, True),
    "two-timescale/eq-6.22": (8e-11, True),
    "two-timescale/thm-6.2/step-eps-threshold": (4e-12, True),
    "two-timescale/thm-6.2/step-first-phase": (3e-14, True),
    "two-timescale/eq-6.25": (7e-24, True),
    "two-timescale/thm-6.2/step-exponential-term": (0.25, False),
    "two-timescale/thm-6.2/step-lag-term": (0.25, False),
    "two-timescale/thm-6.2/step-heaviside-weights": (0.25, False),
    "two-timescale/thm-6.2/step-velocity-constants": (0.25, False),
    "two-timescale/thm-6.2/step-accuracy": (9e-11, True),
    "two-timescale/thm-6.2/step-loss-difference": (1e-3, False),
    "two-timescale/prop-6.7/step-separation": (3e-3, True),
    "two-timescale/prop-6.7/step-velocity-constants": (0.25, False),
    "two-timescale/prop-6.7/step-collision-constants": (0.25, False),
}


def test_every_searched_bound_has_a_mutation_control():
    assert set(MUTATIONS) == set(ex.SPECS)


@pytest.mark.parametrize("claim_id", sorted(MUTATIONS))
def test_searched_bound_control_wrong_constant_fails(claim_id):
    spec = ex.SPECS[claim_id]
    cfg = ex.experiment_presets(claim_id)["check"]
    assert ex.bound_verdict_for(spec, ex.MEASURES[claim_id](cfg)).status == "pass"
    scale, by_search = MUTATIONS[claim_id]
    result = ex.MEASURES[claim_id](dataclasses.replace(cfg, rhs_scale=scale))
    verdict = ex.bound_verdict_for(spec, result)
    assert verdict.status == "fail"
    assert result.search.ratio > spec.ratio_max  # the search finds the violation
    if by_search:  # the random instances stay within the mutated bound: the search alone fails it
        assert result.ratio <= spec.ratio_max, (claim_id, result.ratio)


@pytest.mark.parametrize("claim_id", sorted(ex.ERRATA))
def test_erratum_control_both_halves(claim_id):
    cfg = ex.experiment_presets(claim_id)["check"]
    ok = ex.erratum_verdict_for(ex.MEASURES[claim_id](cfg))
    assert ok.status == "pass" and [p.status for p in ok.parts] == ["fail", "pass"]
    printed = ex.MEASURES[claim_id](cfg).printed.search.ratio
    # a right-hand side large enough for the printed form to hold: the erratum record fails
    holds = ex.erratum_verdict_for(ex.MEASURES[claim_id](dataclasses.replace(cfg, rhs_scale=2.5 * printed)))
    assert holds.status == "fail" and holds.parts[0].status == "pass"
    # a right-hand side too small for the corrected form: the erratum record fails
    broken = ex.erratum_verdict_for(ex.MEASURES[claim_id](dataclasses.replace(cfg, rhs_scale=0.01)))
    assert broken.status == "fail" and broken.parts[1].status == "fail"


def test_prop67_first_phase_control_short_horizon_fails():
    cfg = ex.FLOW_PRESETS["check"]
    assert ex.prop67_flow_verdict(ex.measure_prop67_flow(cfg)).status == "pass"
    r = ex.measure_prop67_flow(dataclasses.replace(cfg, horizon_scale=0.02))
    assert ex.prop67_flow_verdict(r).status == "fail" and r.search.ratio > 1


# ------------------------------------------------------------------------------ Prop. 6.7's second phase

def test_prop67_second_phase_control_drift_reversed_fails():
    # the jump's term of the closer neuron's velocity reversed in the second phase: the neuron is pushed off its
    # jump, and the confinement |u_k - v| <= eta and the conclusion at T fail, on the random instances and over the
    # search
    cfg = dataclasses.replace(ex.SECOND_PHASE_PRESETS["check"], drift_sign=-1.0)
    r = ex.measure_prop67_second_phase(cfg)
    assert ex.prop67_second_phase_verdict(r).status == "fail"
    assert r.search.ratio > 1
    assert r.parts["confinement"] > 1 and r.parts["conclusion"] > 1
    assert r.search_parts["confinement"] > 1


def test_prop67_second_phase_control_printed_display_fails():
    # the display before (6.15) with the printed constant (no 1/2 of Lemma 6.13): it fails at both barriers of
    # every trajectory, about twice the right-hand side
    cfg = dataclasses.replace(ex.SECOND_PHASE_PRESETS["check"], lemma613_factor=1.0)
    r = ex.measure_prop67_second_phase(cfg)
    assert ex.prop67_second_phase_verdict(r).status == "fail"
    assert r.search.ratio > 1.5
    assert r.search_parts["eq615_display_left"] > 1.5 and r.search_parts["eq615_display_right"] > 1.5
    assert r.parts["eq614"] <= 1 and r.parts["confinement"] <= 1  # the other steps still hold
    # the erratum record of the display at u^L = v + eta: its corrected half now fails
    erratum = ex.prop67_second_phase_erratum_verdict(r)
    assert erratum.status == "fail" and erratum.parts[1].status == "fail"


def test_prop67_second_phase_erratum_control_printed_form_holds_fails():
    # the display at u^L = v + eta taken with the 1/2 as "printed": the printed form holds, the erratum record fails
    cfg = dataclasses.replace(ex.SECOND_PHASE_PRESETS["check"], printed_factor=0.5)
    r = ex.measure_prop67_second_phase(cfg)
    erratum = ex.prop67_second_phase_erratum_verdict(r)
    assert erratum.kind == "erratum" and erratum.status == "fail"
    assert [p.status for p in erratum.parts] == ["pass", "pass"]


def test_prop67_second_phase_window_gradient_is_the_quadrature():
    # the closed form of dL/du_k in the offset delta against the exact quadrature where float64 resolves both
    # (eta = 1e-3), on both sides of the jump, inside and outside the window
    from theory.experiments.two_timescale._second_phase import window_gradient

    v, f = np.array([0.43]), np.array([0.3, -1.2])
    u = np.sort(d_good_positions(0.43, 6, 0.06, 0.01))
    eta, k = 1e-3, 5
    for delta in (-0.9, -0.5, -0.3, 0.0, 0.2, 0.49, 0.8):
        w = u.copy()
        w[k] = v[0] + eta * delta
        a = T.optimal_weights(w, eta, v, f)
        assert window_gradient(a, k, delta, 0.3, -1.2) == pytest.approx(T.gradient(a, w, eta, v, f)[1][k],
                                                                         rel=1e-10, abs=1e-12)


def test_prop67_second_phase_agrees_with_lsoda_where_lsoda_works():
    # at eta = 1e-5 LSODA on the positions (tolerances 1e-12, 1e-15) still integrates the second phase: the two
    # formulations end at the same positions, within the first phase's tolerance 1e-3 eta
    from theory.experiments.two_timescale._approach import limit_flow_lsoda
    from theory.experiments.two_timescale._second_phase import second_phase

    v, f = np.array([0.43]), np.array([0.3, -1.2])
    n, dv, df, M = T.target_constants(v, f)
    u0 = np.sort(d_good_positions(0.43, 6, 0.06, 0.01))
    eta = 1e-5
    sp = second_phase(u0, eta, v, f, M, df, 0.02, 6 / df ** 2)
    ref, _, _ = limit_flow_lsoda(u0, 6 / df ** 2, eta, v, f, rtol=1e-12, atol=1e-15)
    assert not sp.stopped and sp.t_first < 6 / df ** 2
    assert np.abs(sp.u_end - ref).max() <= 1e-3 * eta
    assert abs(v[0] + eta * sp.delta_end - ref[sp.k]) <= 1e-3 * eta


def test_first_phase_of_a_neuron_already_on_its_jump_is_empty():
    # the proof's T_i = 0: a flanking neuron within eta/2 of its jump at the start
    from theory.experiments.two_timescale._approach import first_phase_solution

    v, f = np.array([0.5]), np.array([0.0, 1.0])
    u0 = d_good_positions(0.5, 6, 0.07, 2e-5)
    out = first_phase_solution(u0, 1e-4, v, f, 6.0)
    assert out.tau == 0.0 and out.same and out.k == 5


# ------------------------------------------------------------------------------ the approaches

def test_prop67_approach_control_short_horizon_fails(monkeypatch):
    # the limit stopped at T / 1000: the closest neuron has not reached its jump, its distance over eta grows as eta
    # shrinks
    cfg = ex.PROP67_APPROACH_PRESETS["check"]
    assert ex.approach_verdict(ex.measure_prop67_approach(cfg)).status == "pass"
    true = T.recovery_horizon
    monkeypatch.setattr(T, "recovery_horizon", lambda df: true(df) / 1000)
    assert ex.approach_verdict(ex.measure_prop67_approach(cfg)).status == "fail"


def test_thm68_approach_control_short_horizon_fails(monkeypatch):
    # at T / 1000 the error is the initial one, not O(eta): the rate and the record fail
    cfg = dataclasses.replace(ex.THM68_APPROACH_PRESETS["check"])
    true = T.recovery_horizon
    monkeypatch.setattr(T, "recovery_horizon", lambda df: true(df) / 1000)
    r = ex.measure_thm68_approach(cfg)
    assert ex.approach_verdict(r).status == "fail" and ex.thm68_verdict(r).status == "fail"


@pytest.fixture(scope="module")
def thm62_check():
    """The check preset's measurement of Thm 6.2's approach (m = 24), shared by the controls below."""
    return ex.measure_thm62_approach(ex.THM62_APPROACH_PRESETS["check"])


def test_thm62_approach_control_slow_step_not_proportional_to_eps_fails(monkeypatch, thm62_check):
    # the positions' step eps^(1/2) / 10 instead of eps: the distance to the limit is no longer O(eps)
    cfg = ex.THM62_APPROACH_PRESETS["check"]
    assert ex.approach_verdict(thm62_check).status == "pass"
    true = T.gradient_descent

    def broken(a0, u0, eps, h, steps, *args, **kw):
        return true(a0, u0, math.sqrt(eps) / 10, h, steps, *args, **kw)

    monkeypatch.setattr(T, "gradient_descent", broken)
    assert ex.approach_verdict(ex.measure_thm62_approach(cfg)).status == "fail"


def test_thm62_control_short_horizon_fails(monkeypatch, thm62_check):
    # gradient descent stopped at T / 10^4: the error is still about the initial one
    cfg = ex.THM62_APPROACH_PRESETS["check"]
    assert ex.thm62_verdict(thm62_check).status == "pass"
    true = T.recovery_horizon
    monkeypatch.setattr(T, "recovery_horizon", lambda df: true(df) / 1e4)
    assert ex.thm62_verdict(ex.measure_thm62_approach(cfg)).status == "fail"
