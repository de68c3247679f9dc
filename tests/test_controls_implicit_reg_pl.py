"""Negative controls of the ``implicit-reg`` PL checks (each control breaks the claim and asserts that the check rejects it).

Each control feeds a check's own predicate a setting that breaks the claim: m < n for Lemma 21, the
identity activation (rank <= d < n) for the transition, the factor L of Definition 1 dropped for
Prop. 5 and Thm 6. The predicate must answer ``fail`` with the measured figure outside tolerance.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.experiments.implicit_reg import pl as chk
from theory.claims import erratum_verdict, frequency_verdict, identity_verdict, qualitative_verdict, rate_verdict
from theory.pl import hermite_coefficient
from theory.rates import fit_rate, frequency, identity_error


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_lemma21_rejects_width_below_n():
    """m = n/2 violates m >= c1 n: sigma(WX) has rank m < n and the event fails on every draw."""
    viol, _ = chk.lemma21_violations(ratios=(0.5,), seeds=range(50))
    result = frequency(viol, delta=chk.EXPECTED_L21["delta"])
    _assert_fails(frequency_verdict(result, chk.EXPECTED_L21))
    assert result.freq > 0.9


def test_lemma21_transition_rejects_identity_activation():
    """sigma = identity (eta_r = 0 for r >= 2) with d = 8 < n: lambda_min(G/m) = 0 at every width."""
    ratios = (0.5, 1.0, 2.0, 4.0, 64.0)
    lam, lim = chk.transition_table(ratios=ratios, seeds=range(3), d=8, activation="identity")
    eta = abs(float(hermite_coefficient("sin", chk.R_ORDER)))
    ok, msg = chk.transition_predicate(ratios, lam, lim, eta)
    assert not ok, msg
    assert np.max(lam[:, -1]) < 1e-10


def test_prop5_rejects_missing_depth_factor():
    """Without the factor L of Definition 1 the ratio at init shrinks with L and misses the closed form."""
    got, ref = chk.p5_ratios(seeds=range(2), depth_factor=False)
    result = identity_error(got, ref)
    _assert_fails(identity_verdict(result, chk.EXPECTED_P5))
    assert result.max_rel_err > 1e-3


def test_thm6_rejects_missing_depth_factor():
    """G computed without the factor L is not the flow's dissipation: the residual is O(1) at every lr."""
    fit = fit_rate(chk.T6_LRS, chk.t6_residuals(seeds=range(1), depth_factor=False))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_T6_IDENTITY))
    assert abs(fit.slope) < 0.1


def test_thm6_exponential_rejects_missing_depth_factor():
    """Same swap in the long run: the log-loss slope is L times the mis-scaled ratio G/l."""
    t, losses, _ = chk.gd_run(**chk.T6_LONG)
    _, _, G1 = chk.gd_run(**chk.T6_LONG, depth_factor=False)
    ok, msg = chk.exponential_predicate(chk.exponential_phase(t, losses, G1))
    assert not ok, msg


# ---------------------------------------------------------------- Prop. 5 against width and sample size, ball; Thm 6 limits


def test_prop5_width_rejects_identity_activation():
    """sigma = identity with d = 8 < n = 16: the features have rank <= 8 < n at every width, so the smallest
    eigenvalue of S S^T stays at float64 noise level from m = 2n on (measured, not clipped)."""
    ratios = (0.5, 2.0, 4.0)
    init, noise, cmin, chain = chk.width_table(ratios=ratios, seeds=range(1), d=8, activation="identity")
    c = chk.prop5_constants("sin", chk.R_ORDER)
    ok, msg = chk.width_predicate(ratios, init, noise, cmin, chain, chk.P5W_N, c.mu(chk.P5W_N, 10), chk.ETA3)
    assert not ok, msg
    assert np.max(noise) < chk.EXPECTED_P5W["below_n_noise_max"]


def test_prop5_width_rank_measure_sees_full_rank():
    """The rank measurement can fail: with m = n/2 but the predicate told the widths are 2n (ratios relabelled)
    the full-rank threshold is missed, and with m = 2n relabelled as n/2 the noise bound is missed."""
    init, noise, cmin, chain = chk.width_table(ratios=(0.5, 2.0), seeds=range(1))
    c = chk.prop5_constants("sin", chk.R_ORDER)
    mu = c.mu(chk.P5W_N, chk.P5W_Q)
    assert chk.width_predicate((0.5, 2.0), init, noise, cmin, chain, chk.P5W_N, mu, chk.ETA3)[0]
    swapped = noise[:, ::-1]
    ok, msg = chk.width_predicate((0.5, 2.0), init, swapped, cmin, chain, chk.P5W_N, mu, chk.ETA3)
    assert not ok and "rank deficient" in msg


def test_prop5_samples_rejects_fixed_input_dimension():
    """d = 8 fixed while n grows (Lemma 21 needs d >~ n^{2/r} log n: its delta -> 1): the worst-case PL
    constant at init falls like n^-2, outside the predicted n^-1."""
    cert, _ = chk.samples_table(sizes=(8, 12, 16, 24, 32), seeds=range(2), d_of_n=lambda n: 8)
    fit = fit_rate((8, 12, 16, 24, 32), cert)
    _assert_fails(rate_verdict(fit, chk.EXPECTED_P5N))
    assert fit.slope < -1.5


def _small_ball_config(E):
    return dataclasses.replace(E.PRESETS["check"]["prop5_ball"], restarts=4, steps=5, radii=(1.0,))


def test_prop5_ball_rejects_a_stationary_centre(monkeypatch):
    """x_2 = x_1 with y_2 = -y_1, other targets 0: the initialisation is a stationary point of positive loss, so
    the PL constant of the ball is 0 < mu; the registered measurement, rerun on these data, reports it."""
    from theory.experiments.implicit_reg import supplement as E

    sample = E.sphere_sample

    def conflicting(n, d, d_out, q, rng, **kw):
        X, Y = sample(n, d, d_out, q, rng, **kw)
        X[1], Y[1] = X[0], -Y[0]
        Y[2:] = 0.0
        return X, Y

    monkeypatch.setattr(E, "sphere_sample", conflicting)
    result = E.prop5_ball(_small_ball_config(E))
    assert result.rows[0]["mu_min"] < 1e-25
    _assert_fails(E.prop5_ball_verdict(result))


def test_prop5_ball_rejects_a_powerless_search(monkeypatch):
    """The power half of the verdict: a search whose descent never moves from its starting points (a projected
    gradient step that returns its input) fails, whatever it finds on the statement's ball."""
    from theory.experiments.implicit_reg import supplement as E

    monkeypatch.setattr(E, "_spg", lambda ratio, w, project, steps: (w, ratio.value(w)[0]))
    _assert_fails(E.prop5_ball_verdict(E.prop5_ball(_small_ball_config(E))))


def test_thm6_long_time_rejects_conflicting_labels():
    """x_2 = x_1 with y_2 = -y_1: no parameter interpolates the data; the loss stalls at a positive value."""
    runs = chk.t6_runs(depths=(2,), data="conflict")
    t, snaps, losses, G, X, Y = runs[2]
    ok, msg = chk.long_time_predicate(chk.long_time_stats(t, snaps, losses, G, Y))
    assert not ok, msg


def test_thm6_depth_limit_rejects_iid_init():
    """i.i.d. layers are no discretisation of a path: depth L and 2L stay O(1) apart."""
    runs = chk.t6_runs(kind="iid", chunks=2)
    par, hid, _ = chk.depth_distances(runs)
    _assert_fails(rate_verdict(fit_rate(chk.T6L_DEPTHS, par), chk.EXPECTED_T6_DEPTH))
    _assert_fails(rate_verdict(fit_rate(chk.T6L_DEPTHS, hid), chk.EXPECTED_T6_DEPTH))


def test_thm6_smoothness_rejects_iid_init():
    """i.i.d. layers: ||Z_{k+1} - Z_k|| ~ sqrt(2 q m) at every L, no 1/L."""
    fit = fit_rate(chk.T6L_DEPTHS, chk.smoothness(chk.t6_runs(kind="iid", chunks=2)))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_T6_DEPTH))
    assert abs(fit.slope) < 0.2


def test_prop5_erratum_rejects_a_positive_order():
    """With r = 5 for sin (eta_5 = e^{-1/2}/sqrt(120) > 0) the printed constants are positive: the record fails
    as it must when the printed form holds; and it fails when the corrected half fails (mu above the ratio)."""
    v = chk.printed_prop5_constants("sin", r=5)
    printed_holds = qualitative_verdict(v["c2"] > 0 and v["c3"] > 0 and v["c4"] > 0, "r = 5")
    corrected_holds = qualitative_verdict(True, "corrected constants positive, mu below the ratio")
    _assert_fails(erratum_verdict(printed_holds, corrected_holds))
    w = chk.printed_prop5_constants("sin", r=3)
    printed_fails = qualitative_verdict(w["c4"] > 0, "r = 3")
    got, _ = chk.p5_ratios(seeds=range(1))
    too_big_mu = 10.0 * got.max()  # a "corrected" mu that is not a lower bound of the measured ratio
    _assert_fails(erratum_verdict(printed_fails, qualitative_verdict(bool(too_big_mu < got.min()), "mu too big")))
