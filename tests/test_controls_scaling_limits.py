"""Negative controls of checks/test_scaling_limits.py.

Each control feeds a check's own predicate (the shared verdict function with the check's expected
figure, or the check module's pure predicate) a setting that breaks the claim: Brownian paths that
are not coupled, i.i.d. weights where smoothness (A5) or long-range correlation is assumed, a wrong
scaling exponent beta, a wrong weight variance. The predicate must answer ``fail``, with the
measured figure outside the tolerance. Grids are reduced versions of the checks' (same predicate,
fewer draws) so that the file runs in well under 30 s.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from theory.experiments.scaling import _limits as chk
from theory.claims import bound_verdict, erratum_verdict, identity_verdict, rate_verdict
from theory.rates import BoundTracker, fit_rate, identity_error
from theory.experiments.scaling import (
    FIG7_PRESETS,
    FIG8_ACCEPT,
    E2Config,
    Fig7Config,
    Fig8Config,
    e2,
    e2_closed_form,
    e2_verdict,
    fig7,
    fig7_verdict,
    fig8,
    fig8_verdict,
)

# Prop. 10 at a reduced size: 100 paths (5 groups of 20), reference at 2^12, coarse L <= L_ref / 32.
SMALL_P10 = {"paths": 100, "L_ref": 2**12, "grid": (8, 16, 32, 64, 128)}


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


# --------------------------------------------------------------------------- Proposition 10


def test_prop10_rejects_uncoupled_brownian_paths():
    """The EM reference driven by an independent Brownian path: the 'error' is the distance between
    two independent solutions, flat in L (slope ~ 0), so the strong rate 1/2 is rejected."""
    fit = chk.strong_fit(1.0, 1.0, coupled=False, **SMALL_P10)
    _assert_fails(rate_verdict(fit, chk.P10_EXPECTED))
    assert abs(fit.slope) < 0.1


def test_prop10_rejects_a_wrong_variance():
    """Weights N(0, 1/d) against the SDE of diffusion sqrt(2/d) (the preprint's (12)): no convergence."""
    fit = chk.strong_fit(1.0, 2.0, **SMALL_P10)
    _assert_fails(rate_verdict(fit, chk.P10_EXPECTED))
    assert fit.slope > -0.2


def test_prop10_erratum_rejects_a_consistent_pair():
    """The erratum's predicate fed the consistent pair (1/d, sqrt(1/d)): the printed form then holds
    (rate 1/2, lower bound not significant), so the erratum record would fail, as it must."""
    fit = chk.strong_fit(1.0, 1.0, **SMALL_P10)
    bound, se = chk.coupling_free_bound(1.0, 1.0, **SMALL_P10)
    printed = chk.prop10_printed_verdict(fit, bound, se)
    assert printed.passed, printed.message
    corrected = rate_verdict(fit, chk.P10_EXPECTED, grid_label="L")
    assert corrected.passed, corrected.message
    _assert_fails(erratum_verdict(printed, corrected))
    assert bound < 4 * se


def test_prop10_erratum_fails_when_the_corrected_pair_fails():
    """Printed half as documented (2/d weights against diffusion sqrt(1/d)); corrected half fed uncoupled
    Brownian paths (no strong convergence): the record must fail."""
    fit = chk.strong_fit(2.0, 1.0, **SMALL_P10)
    bound, se = chk.coupling_free_bound(2.0, 1.0, **SMALL_P10)
    printed = chk.prop10_printed_verdict(fit, bound, se)
    assert not printed.passed, printed.message
    corrected = rate_verdict(chk.strong_fit(1.0, 1.0, coupled=False, **SMALL_P10), chk.P10_EXPECTED)
    _assert_fails(erratum_verdict(printed, corrected))


# --------------------------------------------------------------------------- Proposition 11

SMALL_P11 = {"seeds": range(2), "grid": 2 ** np.arange(4, 9)}


def test_prop11_rejects_iid_weights():
    """(A5) broken: every layer's V, W perturbed by i.i.d. N(0, 1/d) noise. The network still tends to the
    ODE of the smooth part (law of large numbers), but at the CLT rate L^-1/2, not 1/L."""
    fit = fit_rate(SMALL_P11["grid"], chk.ode_errors(noise=1.0, **SMALL_P11))
    _assert_fails(rate_verdict(fit, chk.P11_EXPECTED))
    assert fit.slope > -0.75


def test_prop11_rejects_a_wrong_scaling():
    """alpha = L^-1/2 instead of 1/L against the ODE (14): the network leaves the ODE as L grows."""
    fit = fit_rate(SMALL_P11["grid"], chk.ode_errors(beta=0.5, **SMALL_P11))
    _assert_fails(rate_verdict(fit, chk.P11_EXPECTED))
    assert fit.slope > 0.0


def test_prop11_constant_rejects_a_wrong_scaling():
    """The network at beta = 0.9 against the ODE and the proof's constant: the error is O(L^0.1) while the
    bound is O(1/L), so LHS/RHS exceeds 1."""
    tracker = BoundTracker()
    for seed in range(4):
        for L in (10, 100, 1000):
            err, bound = chk.tied_linear_instance(3, 1.0, L, seed, beta=0.9)
            tracker.add(err, bound, instance={"seed": seed, "L": L})
    _assert_fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))
    assert tracker.result().ratio > 2.0


# --------------------------------------------------------------------------- Propositions 12 and 13

SMALL_P12 = {"seeds": range(2), "grid": 2 ** np.arange(6, 11)}


@pytest.mark.parametrize("beta", chk.P12["betas"])
def test_prop12_rejects_iid_weights(beta):
    """i.i.d. Gaussian weights at beta > 1: the ratio decays like L^(1/2 - beta) (martingale, Cor. 4),
    half an order faster than the smooth L^(1 - beta)."""
    fit = fit_rate(SMALL_P12["grid"], chk.smooth_ratios(beta, law="gaussian", **SMALL_P12))
    _assert_fails(rate_verdict(fit, {"slope": 1.0 - beta, "tol": 0.1}))
    assert fit.slope < 1.0 - beta - 0.3


def test_prop12_critical_rejects_iid_weights():
    """i.i.d. weights at beta = 1: the ratio goes to 0 like L^-1/2 instead of staying at the ODE's."""
    net, ode = chk.critical_ratios(seeds=range(2), law="gaussian")
    result = identity_error(net, np.repeat(ode[:, None], net.shape[1], axis=1))
    _assert_fails(identity_verdict(result, {"rtol": chk.P12_CRITICAL_RTOL}))
    assert result.max_rel_err > 0.5


def test_prop13_rejects_iid_weights():
    """i.i.d. N(0, 1/d) layers instead of tied (smooth) ones at beta = 1/4: ln ||h_L|| grows like
    L^(1 - 2 beta) (Cor. 4(ii)), exponent 1/2 instead of 3/4."""
    grid = chk.P13["grid"][:-1]
    logs, _ = chk.tied_log_ratios(0.25, seeds=range(3), grid=grid, law="gaussian")
    fit = fit_rate(grid, logs)
    _assert_fails(rate_verdict(fit, {"slope": 0.75, "tol": 0.1}))
    assert abs(fit.slope - 0.5) < 0.15


@pytest.mark.parametrize("shift", [0.05, -0.05])
@pytest.mark.parametrize("presets", [chk.PROP12_PRESETS, chk.PROP13_PRESETS], ids=["prop-12", "prop-13"])
def test_prop12_13_reject_beta_shifted_by_005(presets, shift):
    """The finite-L prediction at beta +- 0.05 must fall outside the measured slope's interval for some
    beta; the former fixed window |slope - (1 - beta')| <= 0.1 accepted that shift (a regression test of
    the window: it shows the old predicate passing where the new one fails)."""
    result = chk.smooth_rate(replace(presets["check"], beta_shift=shift))
    verdict = chk.smooth_rate_verdict(result)
    measured = verdict.measured
    _assert_fails(verdict)
    assert not any(case["inside"] for case in measured["cases"].values())
    old = [abs(f.slope - (1.0 - (b + shift))) <= 0.1 for b, f in zip(result.config.betas, result.fits)]
    assert all(old)


@pytest.mark.parametrize("presets", [chk.PROP12_PRESETS, chk.PROP13_PRESETS], ids=["prop-12", "prop-13"])
def test_prop12_13_reject_iid_weights_through_the_verdict(presets):
    """i.i.d. Gaussian layers (a broken (A5)) on a shorter ladder: the package verdict fails (for
    Proposition 13 at beta = 1/4 only: at beta = 1/2 the i.i.d. log ratio is O(1) and may be negative)."""
    c = presets["check"]
    result = chk.smooth_rate(replace(c, law="gaussian", grid=c.grid[:5], seeds=c.seeds[:3], betas=c.betas[:1]))
    _assert_fails(chk.smooth_rate_verdict(result))


@pytest.mark.parametrize("field, value", [("grid", (64, 32, 128)), ("grid", (64, 128)), ("seeds", (1,)),
                                          ("betas", ()), ("betas", (0.9,)), ("d", 0), ("law", "fbm"),
                                          ("prop", "14"), ("beta_shift", float("nan"))])
def test_smooth_rate_config_rejects(field, value):
    with pytest.raises(ValueError, match=field):
        replace(chk.PROP12_PRESETS["check"], **{field: value})


def test_prop13_config_rejects_beta_above_one():
    with pytest.raises(ValueError, match="betas"):
        replace(chk.PROP13_PRESETS["check"], betas=(1.5,))


def test_prop12_13_registered():
    from theory.experiments import experiment

    assert experiment("scaling.prop12").presets["check"] == chk.PROP12_PRESETS["check"]
    assert experiment("scaling.prop13").claims == ("scaling/prop-13",)
    for name, claim in (("scaling.fig45", "scaling/fig-4"), ("scaling.fig5", "scaling/fig-5"),
                        ("scaling.fig7", "scaling/fig-7"), ("scaling.fig7_fine", "scaling/fig-7/fine"),
                        ("scaling.fig8", "scaling/fig-8"), ("scaling.e2", "scaling/e-2")):
        assert claim in experiment(name).claims
        assert experiment(name).verdict is not None
    # Figure 5 is Figure 4's experiment on the gradients; fig-7/fine is Figure 7 at its "paper" preset
    assert experiment("scaling.fig5").presets["check"] == replace(chk.FIG45_PRESETS["check"], quantity="gradient")
    assert experiment("scaling.fig7_fine").presets["check"] == FIG7_PRESETS["paper"]


def test_prop13_explosion_rejects_a_wrong_scaling():
    """beta = 1.2 > 1 (identity regime of Prop. 12): max_k ||h_k - h_0|| / ||h_0|| shrinks with L."""
    logs, bound = chk.explosion_table(beta=1.2, grid=np.array([10, 100, 1000, 10_000]))
    _assert_fails(chk.explosion_verdict(logs, bound))
    assert np.all(logs[:, -1] < logs[:, 0])


# --------------------------------------------------------------------------- Figures 4 and 5


@pytest.mark.parametrize("quantity", ["hidden", "gradient"])
def test_fig45_rejects_iid_weights(quantity):
    """Uniform i.i.d. weights (Figures 1, 3) instead of the smooth init: at beta = 1 the ratio decays like
    L^-1/2 (not flat) and at beta = 1/2 it stays O(1) (no explosion)."""
    table = chk.fig45_table(quantity, law="uniform", seeds=range(4))
    verdict = chk.fig45_verdict(table)
    measured = verdict.measured
    _assert_fails(verdict)
    assert measured["slope_beta_1"] < -0.3
    assert measured["median"]["beta=0.5"][-1] < 10.0


# --------------------------------------------------------------------------- Figure 7 and E-2

# Figure 7 at a reduced size (2 Hurst indices, 8 draws): the closed-form crossing must fall outside the
# simultaneous jackknife-t interval when the weights' Hurst index is not the one the prediction uses.
SMALL_FIG7 = Fig7Config(hurst=(0.5, 0.9), draws=8)


def test_fig7_rejects_a_hurst_index_shifted_by_005():
    """Weights of Hurst index H + 0.05 checked against the prediction for H: the identity-side
    crossing moves up by ~0.02 (H = 1/2) and ~0.07 (H = 0.9), outside the draws' interval."""
    verdict = fig7_verdict(fig7(replace(SMALL_FIG7, hurst_shift=0.05)))
    measured = verdict.measured
    _assert_fails(verdict)
    lo, hi = np.array(measured["hidden_level-1_ci"]).T
    pred = np.array(measured["hidden_level-1_closed_form"])
    assert lo[1] > pred[1]


def test_fig7_rejects_iid_weights_where_h_09_is_claimed():
    """The H = 1/2 (i.i.d.) law where H = 0.9 is claimed: the identity-side crossing stays near
    1/2's (0.78), far below the closed form of H = 0.9 (1.13)."""
    cfg = replace(SMALL_FIG7, hurst=(0.9,), hurst_shift=-0.4)
    verdict = fig7_verdict(fig7(cfg))
    measured = verdict.measured
    _assert_fails(verdict)
    assert measured["hidden_level-1_crossing"][0] < measured["hidden_level-1_closed_form"][0] - 0.2


@pytest.mark.parametrize("seed", [1, 4, 5])
def test_fig7_nominal_passes_on_seeds_where_the_unadjusted_bootstrap_failed(seed):
    """Regression: with 10 draws and eight separate 99% percentile-bootstrap intervals the nominal
    kernel failed on seeds 1, 4 and 5 (H = 0.2 hidden, H = 0.5 gradient). The simultaneous
    jackknife-t interval (Bonferroni over the comparisons) holds on them."""
    verdict = fig7_verdict(fig7(replace(SMALL_FIG7, hurst=(0.2, 0.5), draws=12, seed=seed)))
    measured = verdict.measured
    assert verdict.passed, verdict.message
    z = np.abs(measured["hidden_level-1_standardised_deviation"] + measured["gradient_level-1_standardised_deviation"])
    assert np.all(z <= measured["t_quantile_bonferroni"])


def test_fig7_accepts_the_nominal_kernel():
    """The same reduced configuration with the nominal kernel passes (the controls above are not
    failing for lack of draws)."""
    verdict = fig7_verdict(fig7(SMALL_FIG7))
    assert verdict.passed, verdict.message


# E-2 at a reduced size (H = 1/2 and 0.8, 48 draws): the check's predicate (closed-form finite-L slope
# inside the draws' 99% bootstrap interval) must reject weights of the wrong regularity.
SMALL_E2 = E2Config(hurst=(0.5, 0.8), draws=48)


def _e2_case(measured, H):
    return measured["cases"][f"H={H:g},beta={SMALL_E2.beta:g}"]


def test_e2_accepts_the_nominal_kernel():
    """The reduced configuration with fGn weights of the claimed index passes (the controls below do not
    fail for lack of draws)."""
    verdict = e2_verdict(e2(SMALL_E2))
    measured = verdict.measured
    assert verdict.passed, verdict.message
    assert all(c["inside"] for c in measured["cases"].values())


def test_e2_rejects_a_hurst_index_shifted_by_005():
    """Regression (the fixed-margin version accepted this): weights of Hurst index H + 0.05 checked against
    the prediction for H. At H = 0.8 the closed-form slope moves from -0.446 to ~-0.397 on L = 64..1024,
    twice the interval's half-width, so the shifted weights fail; the earlier criterion
    |slope - (max(H, 1/2) - beta)| <= 0.1 accepts them."""
    result = e2(replace(SMALL_E2, hurst_shift=0.05))
    verdict = e2_verdict(result)
    measured, worst = verdict.measured, verdict.measured["worst"]
    _assert_fails(verdict)
    case = _e2_case(measured, 0.8)
    assert not case["inside"] and case["ci"][0] > case["closed_form_slope"]
    assert SMALL_E2.hurst[worst] == 0.8
    fit = result.fits[SMALL_E2.hurst.index(0.8)]
    assert rate_verdict(fit, {"slope": 0.8 - SMALL_E2.beta, "tol": 0.1}).passed  # the old criterion


def test_e2_rejects_iid_weights():
    """i.i.d. Gaussian weights (He) where H = 0.8 is claimed: the slope is 1/2 - beta = -0.7, far from the
    closed form of H = 0.8 (-0.446); at H = 1/2 the i.i.d. law is the claimed one and passes."""
    verdict = e2_verdict(e2(replace(SMALL_E2, law="gaussian")))
    measured = verdict.measured
    _assert_fails(verdict)
    assert _e2_case(measured, 0.8)["slope"] < -0.6
    assert _e2_case(measured, 0.5)["inside"]


def test_e2_closed_form_against_the_double_sum():
    """e2_closed_form against the explicit double sum over layers of rho kappa_1(rho) with rho the fGn
    autocovariance matrix (small L), and its slope at H = 1/2 (S_L = L/2): exactly 1/2 - beta."""
    from theory.fbm import autocovariance

    def kappa1(r):
        r = np.clip(r, -1, 1)
        return (np.sqrt(1 - r * r) + r * (np.pi - np.arccos(r))) / (2 * np.pi)

    grid = (5, 9, 17, 33)
    for H in (0.3, 0.7, 0.9):
        rms, _ = e2_closed_form(grid, H, 1.1)
        for L, r in zip(grid, rms):
            k = np.arange(L)
            R = autocovariance(np.abs(k[:, None] - k[None, :]), H)
            assert r == pytest.approx(L**-1.1 * math.sqrt(np.sum(R * kappa1(R))), rel=1e-12)
    assert e2_closed_form((64, 128, 256, 512, 1024), 0.5, 1.2)[1] == pytest.approx(-0.7, abs=1e-12)


@pytest.mark.parametrize("kw, match", [
    ({"hurst": ()}, "`hurst`"), ({"hurst": (0.5, 1.0)}, "`hurst`"), ({"hurst": ("a",)}, "`hurst`"),
    ({"beta": 0.8}, "`beta`"), ({"beta": float("nan")}, "`beta`"), ({"grid": (64, 128, 256, 512)}, "`grid`"),
    ({"grid": (64, 128, 128, 512, 1024)}, "`grid`"), ({"grid": (64, 128, 256.0, 512, 1024)}, "`grid`"),
    ({"d": 0}, "`d`"), ({"draws": 4}, "`draws`"), ({"inputs": True}, "`inputs`"), ({"n_boot": 10}, "`n_boot`"),
    ({"ci_level": 1.0}, "`ci_level`"), ({"seed": -1}, "`seed`"), ({"law": "smooth"}, "`law`"),
    ({"hurst_shift": 0.15}, "`hurst_shift`"), ({"law": "gaussian", "hurst_shift": 0.05}, "`hurst_shift`"),
])
def test_e2_config_validates_its_fields(kw, match):
    # a value of the wrong kind (a string for a number, a float or a bool for an integer) is a TypeError
    wrong_kind = kw in ({"hurst": ("a",)}, {"grid": (64, 128, 256.0, 512, 1024)}, {"inputs": True})
    with pytest.raises(TypeError if wrong_kind else ValueError, match=match):
        E2Config(**kw)


def test_e2_rejects_a_config_of_another_type():
    with pytest.raises(TypeError, match="`config`"):
        e2(SMALL_E2.__dict__)


def test_worst_rate_records_the_failing_case():
    """A multi-case claim records its worst case: one good and one bad fit -> the bad one."""
    grid = np.array([8, 16, 32, 64, 128])
    good, bad = fit_rate(grid, 1.0 / grid), fit_rate(grid, grid**-0.2)
    exp = {"slope": -1.0, "tol": 0.1}
    assert chk.worst_rate([good, bad], [exp, exp]) == 1
    assert chk.worst_rate([bad, good], [exp, exp]) == 0


# --------------------------------------------------------------------------- Figure 8

SMALL_FIG8 = Fig8Config(L=120, d=8, n=48, steps=50, lr=0.004)


def test_fig8_small_configuration_passes():
    """The reduced configuration of the controls passes with nominal training (so the controls below fail
    for the reason they name)."""
    verdict = fig8_verdict(fig8(SMALL_FIG8))
    assert verdict.passed, verdict.message


def test_fig8_rejects_updates_rough_in_the_layer_index():
    """Every Adam step adds i.i.d. noise (1.5 lr per weight, independent across layers): the smooth
    initialisation leaves the smooth class (variogram exponent below 1.5)."""
    verdict = fig8_verdict(fig8(replace(SMALL_FIG8, update_noise=1.5)))
    measured = verdict.measured
    _assert_fails(verdict)
    assert measured["exponent_trained"][0] < FIG8_ACCEPT["smooth_min"]


def test_fig8_rejects_no_training():
    """Learning rate 0: the weights keep their structure trivially, and the verdict must not accept it."""
    verdict = fig8_verdict(fig8(replace(SMALL_FIG8, lr=0.0)))
    measured = verdict.measured
    _assert_fails(verdict)
    assert max(measured["relative_change"]) == 0.0


@pytest.mark.parametrize("field, value", [("quantity", "both"), ("law", "fbm"), ("betas", (2.0, 1.0)),
                                          ("grid", (10, 30)), ("seeds", (1,)), ("d", 0)])
def test_fig45_config_rejects(field, value):
    with pytest.raises(ValueError, match=field):
        replace(chk.FIG45_PRESETS["check"], **{field: value})


def test_fig45_experiment_rejects_iid_weights():
    """The registered experiment with i.i.d. uniform weights (4 draws) fails its verdict."""
    result = chk.fig45(replace(chk.FIG45_PRESETS["check"], law="uniform", seeds=tuple(range(4))))
    _assert_fails(chk.fig45_result_verdict(result))


def test_prop12_critical_experiment_rejects_iid_weights():
    """The registered experiment with i.i.d. Gaussian layers (2 draws) fails its verdict."""
    result = chk.critical(replace(chk.CRITICAL_PRESETS["check"], law="gaussian", seeds=(0, 1)))
    _assert_fails(chk.critical_verdict(result))


def test_prop13_explosion_experiment_rejects_beta_one():
    """beta = 0.999 (almost the critical 1): the ratio stays bounded, no explosion."""
    result = chk.explosion(replace(chk.EXPLOSION_PRESETS["check"], beta=0.999))
    _assert_fails(chk.explosion_result_verdict(result))


@pytest.mark.parametrize("presets, field, value", [
    (chk.CRITICAL_PRESETS, "rtol", 0.0), (chk.CRITICAL_PRESETS, "law", "fbm"), (chk.CRITICAL_PRESETS, "grid", (256,)),
    (chk.EXPLOSION_PRESETS, "beta", 1.0), (chk.EXPLOSION_PRESETS, "seeds", (0,)), (chk.EXPLOSION_PRESETS, "d", -1)])
def test_critical_and_explosion_configs_reject(presets, field, value):
    with pytest.raises(ValueError, match=field):
        replace(presets["check"], **{field: value})


def test_critical_and_explosion_registered():
    from theory.experiments import experiment

    assert experiment("scaling.prop12_critical").claims == ("scaling/prop-12/critical",)
    assert experiment("scaling.prop13_explosion").claims == ("scaling/prop-13/explosion",)


def test_prop11_window_from_the_draws_rejects_a_rate_off_by_005():
    """The window of scaling/prop-11 is t_9 (99%) times the standard error of the per-draw slopes
    over 10 path draws (0.003 to 0.007 on five disjoint blocks of draws, against the former fixed
    0.1): the nominal rate -1 passes on every block, -1 -/+ 0.05 fails."""
    for start in (0, 10, 20):
        errors = chk.ode_errors(seeds=range(start, start + 10))
        fit = fit_rate(chk.P11["grid"], errors)
        exp = chk.p11_expected(errors)
        assert 0.0 < exp["tol"] < 0.02
        assert rate_verdict(fit, exp).status == "pass"
        for shift in (-0.05, 0.05):
            _assert_fails(rate_verdict(fit, {"slope": -1.0 + shift, "tol": exp["tol"]}))


def test_prop11_expected_rejects_a_single_draw():
    with pytest.raises(ValueError, match="errors"):
        chk.p11_expected(np.ones((1, 7)))


@pytest.mark.parametrize("quantity", ["hidden", "gradient"])
def test_fig45_windows_from_the_draws_reject_rates_off_by_005(quantity):
    """scaling/fig-4 and fig-5: the slope windows are derived from the scatter over 20 independent
    draws (t_19 at the Bonferroni level of 2 slopes, 99%: 0.02 to 0.04, against the former fixed 0.1);
    the nominal rates (-1 at beta = 2, 0 at beta = 1) pass, rates moved by 0.05 fail."""
    table = chk.fig45_table(quantity, seeds=range(20, 40))
    verdict = chk.fig45_verdict(table)
    measured = verdict.measured
    assert verdict.passed, verdict.message
    assert 0.0 < measured["window_beta_2"] < 0.045 and 0.0 < measured["window_beta_1"] < 0.045
    for shift in (-0.05, 0.05):
        _assert_fails(chk.fig45_verdict(table, expected={**chk.FIG45_EXPECTED, "slope_beta_2": -1.0 + shift}))
        _assert_fails(chk.fig45_verdict(table, expected={**chk.FIG45_EXPECTED, "slope_beta_1": shift}))
