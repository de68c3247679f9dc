"""Checks of the PL / long-time results of ``implicit-reg``: Lemma 21, Proposition 5, Theorem 6.

The measurements, and what each record measures and which are proxies, are documented in
:mod:`theory.experiments.implicit_reg.pl` (the ball search in
:mod:`theory.experiments.implicit_reg.supplement`); each check runs its claim's registered experiment at the
``"check"`` preset, records the verdict the registry gives the claim (``experiment(name).verdict_for(claim.id)``,
what ``theory run CLAIM-ID`` prints) and draws the figure.
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments.implicit_reg import pl as E
from theory.experiments.implicit_reg.pl import prop5_proxy, thm6_proxy
from theory.plots import new_axes, plot_rate, save_figure, subplots

from . import _implicit_reg as ir


#: Lemma 21 and the constants of B.5 are steps of the proofs of Prop. 5 and Thm 6 (see checks/test_implicit_reg_proof.py)
_STEP = ("implicit-reg/prop-5", "implicit-reg/thm-6")


def _mean_sq(Y):
    return float(np.mean(np.sum(np.asarray(Y) ** 2, axis=1)))


# --------------------------------------------------------------------------- Lemma 21


@pytest.mark.claim("implicit-reg/lemma-21", kind="frequency", aliases=ir.aliases("lemma-3.24"), step_of=_STEP,
                   title="sigma = sin, m >= 2n: s_min(sigma(WX)) >= sqrt(m) |eta_3| / 4 except with small probability")
def test_lemma21_frequency(claim):
    claim.record(ir.verdict(claim, "lemma21"))


@pytest.mark.claim("implicit-reg/lemma-21/transition", kind="qualitative", aliases=ir.aliases("lemma-3.24"), step_of=_STEP,
                   title="lambda_min(sigma(WX)^T sigma(WX)/m): 0 for m < n, >= eta_3^2/16 from m = 2n, "
                         "-> lambda_min(E K) >= eta_3^2/8 as m grows")
def test_lemma21_transition(claim):
    result = ir.run("transition")
    ratios, lam, lim = result.config.ratios, result.lam, result.lim
    ax = new_axes()
    ax.semilogx(ratios, np.maximum(np.median(lam, axis=0), 1e-18), "o-", label="median lambda_min(G/m)")
    ax.axhline(float(np.median(lim)), ls="--", label="lambda_min(K) (median)")
    ax.axhline(E.ETA3**2 / 16, ls=":", label="eta_3^2/16")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("m / n")
    ax.legend()
    claim.record(ir.verdict(claim, "transition"), figure=save_figure(ax.figure, "implicit-reg/lemma-21/transition"))


# --------------------------------------------------------------------------- Proposition 5


@pytest.mark.claim("implicit-reg/prop-5", kind="identity", aliases=ir.aliases("prop-3.6"),
                   proxy=prop5_proxy(E.P5_N, E.P5_Q, E.P5_M, E.P5_DEPTHS),
                   title="Proxy of Prop. 5 (m = 4n, L <= 64, far below its hypotheses): at the init of Section 3 the PL "
                         "ratio G/l (Def. 1, factor L) by backprop equals its closed form, does not depend on L, and "
                         "lies above mu = c4/(n sqrt(nq)); the PL condition on the ball is not checked here")
def test_prop5_init_ratio(claim):
    claim.record(ir.verdict(claim, "prop5_init"))


# --------------------------------------------------------------------------- Theorem 6


_T6_PROXY = thm6_proxy(E.T6_N, E.T6_D, E.T6_M, E.T6_L,
                       _mean_sq(E.synthetic_data(E.T6_N, E.T6_D, np.random.default_rng(500))[1]),
                       extra="; q = d = d' = 8 < d + d' (A = B = I frozen); sigma = GELU is unbounded (Section 3 "
                             "assumes sigma bounded)")


@pytest.mark.claim("implicit-reg/thm-6", kind="rate", aliases=ir.aliases("thm-3.7"), proxy=_T6_PROXY,
                   title="Along GD of Eq. (4) the flow identity dl/dt = -G (G of Def. 1) holds to first order in lr")
def test_thm6_flow_identity(claim):
    result = ir.run("thm6")
    ax = new_axes()
    plot_rate(E.thm6_fit(result), ax=ax, expected_slope=1.0, label="GELU, L = 8, m = 32", xlabel="learning rate",
              ylabel=r"$\max_t |d\ell/dt + G| / G$", title="implicit-reg/thm-6")
    claim.record(ir.verdict(claim, "thm6"), figure=save_figure(ax.figure, "implicit-reg/thm-6"))


@pytest.mark.claim("implicit-reg/thm-6/exponential", kind="qualitative", aliases=ir.aliases("thm-3.7"), proxy=_T6_PROXY,
                   title="Long-time training: log l decays linearly, with slope -mean(G/l) (the PL rate)")
def test_thm6_exponential(claim):
    claim.record(ir.verdict(claim, "thm6_exponential"))


# --------------------------------------------------------------------------- Prop. 5 against width m and sample size n


@pytest.mark.claim("implicit-reg/prop-5/width", kind="qualitative", aliases=ir.aliases("prop-3.6"),
                   proxy=prop5_proxy(E.P5W_N, E.P5W_Q, tuple(int(r * E.P5W_N) for r in E.P5W_RATIOS), E.P5W_L),
                   title="Proxy of Prop. 5 against width (m/n <= 8, L = 4): the features are rank deficient below "
                         "m = n and full rank from m = 2n, the proof's certificate is >= eta_3^2/(16 n) from m = 2n "
                         "along training; the proposition itself (m >= c1 n) is not reached")
def test_prop5_width(claim):
    result = ir.run("width")
    init, noise, cmin, mu = result.init, result.noise, result.cmin, result.mu
    _, fig, (ax, bx) = subplots(ncols=2, figsize=(11, 4))
    r = np.asarray(result.config.ratios)
    ax.loglog(r, np.median(init, axis=0), "s-", label="PL ratio $G/\\ell$ at init (init_ratio)")
    ok_r = ~np.all(np.isnan(cmin), axis=0)
    ax.loglog(r[ok_r], [np.nanmin(col) for col in cmin.T[ok_r]], "o-", label="certificate, min along training (m >= n)")
    ax.axhline(E.ETA3**2 / (16 * E.P5W_N), ls=":", color="k", label=r"$\eta_3^2/(16n)$ (proof, ball)")
    ax.axhline(mu, ls="--", color="r", label=r"Prop. 5: $\mu = c_4/(n\sqrt{nq})$")
    ax.set_xlabel("m / n   (n = 16, d = 32, sin)")
    ax.set_ylabel("PL ratio")
    ax.set_title("implicit-reg/prop-5/width (proxy)")
    ax.legend(fontsize=7)
    bx.loglog(r, np.max(noise, axis=0), "o-", label=r"$|\lambda_{\min}|/(n\varepsilon\lambda_{\max})$, max")
    bx.axhline(E.EXPECTED_P5W["below_n_noise_max"], ls=":", color="k", label="float64 noise bound (rank deficient)")
    bx.axhline(E.EXPECTED_P5W["from_2n_noise_min"], ls="--", color="g", label="full-rank threshold")
    bx.axvline(1.0, color="grey", lw=0.5)
    bx.set_xlabel("m / n")
    bx.set_title("smallest eigenvalue of S S^T, unclipped")
    bx.legend(fontsize=7)
    claim.record(ir.verdict(claim, "width"), figure=save_figure(ax.figure, "implicit-reg/prop-5/width"))


@pytest.mark.claim("implicit-reg/prop-5/samples", kind="rate", aliases=ir.aliases("prop-3.6"),
                   proxy=prop5_proxy(E.P5N_SIZES[-1], 2 * E.P5N_SIZES[-1] + E.P5N_DOUT,
                                     tuple(4 * n for n in E.P5N_SIZES), 1, what="Prop. 5 (largest n shown)"),
                   title="Proxy of Prop. 5 against n (m = 4n, d = 2n, L = 1; the proposition needs m >= 4.8e6 n): "
                         "the worst-case V-part PL ratio at init ~ n^-1, beating the proof's n^-3/2")
def test_prop5_samples(claim):
    result = ir.run("samples")
    fit = E.samples_fits(result)[0]
    sizes, cert, mus = result.sizes, result.cert, result.mus
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=-1.0, label="certificate at init (worst target)", xlabel="sample size n",
              ylabel="PL constant", title="implicit-reg/prop-5/samples (m = 4n, d = 2n, sin)")
    ax.loglog(sizes, mus * (cert[:, 0].mean() / mus[0]), ":", color="r",
              label="proof's $c_4/(n\\sqrt{nq})$, rescaled to the first point")
    ax.legend(fontsize=7)
    claim.record(ir.verdict(claim, "samples"), figure=save_figure(ax.figure, "implicit-reg/prop-5/samples"))


# --------------------------------------------------------------------------- Prop. 5, ball version (Definition 1)

BALL_CONFIG = experiment("implicit_reg.prop5_ball").presets["check"]


@pytest.mark.claim("implicit-reg/prop-5/ball", kind="bound", aliases=ir.aliases("prop-3.6"),
                   proxy=prop5_proxy(BALL_CONFIG.n, BALL_CONFIG.q, BALL_CONFIG.m, BALL_CONFIG.L),
                   title="Proxy of Prop. 5 on Definition 1's ball (n = 4, m = 8, L = 2): projected-gradient adversary "
                         "(24 restarts) finds no PL ratio below mu = c4/(n sqrt(nq)) on the ball of radius "
                         "M = c3/sqrt(nq), and finds ~0 on a ball where the PL constant is 0")
def test_prop5_ball(claim):
    result = ir.run("prop5_ball")
    measured = {"adversary": f"spectral projected gradient on G/l (gradient by backprop, "
                f"Hessian-vector products by central differences of it) onto Definition 1's block ball, "
                f"{BALL_CONFIG.restarts} starts (centre, random boundary and interior points), "
                f"{BALL_CONFIG.steps} steps each", "mu_min_at_M_over_prop5_mu": result.rows[0]["mu_min"] / result.mu}
    ax = new_axes()
    k = np.array([r["radius_over_M"] for r in result.rows])
    ax.loglog(k, [r["ratio_center"] for r in result.rows], "s-", label="ratio at the centre (init)")
    ax.loglog(k, [r["mu_starts"] for r in result.rows], "^-", label="min over the starting points")
    ax.loglog(k, [r["mu_min"] for r in result.rows], "o-", label="min found by the adversary (upper estimate)")
    ax.axhline(result.mu, ls="--", color="r", label=r"Prop. 5: $\mu = c_4/(n\sqrt{nq})$")
    ax.axhline(max(result.power["mu_min"], 1e-40), ls=":", color="k",
               label="adversary on a ball with PL constant 0 (power test)")
    ax.set_yscale("log")
    ax.set_xlabel("ball radius / M,  M = c3/sqrt(nq)")
    ax.set_ylabel("PL ratio G / l")
    ax.set_title("implicit-reg/prop-5/ball (proxy, n = 4, m = 8, L = 2)")
    ax.legend(fontsize=7)
    claim.record(ir.verdict(claim, "prop5_ball"), figure=save_figure(ax.figure, "implicit-reg/prop-5/ball"),
                 measured=measured)


# --------------------------------------------------------------------------- Theorem 6 (i)-(iv): limits in t and L

_T6L_PROXY = thm6_proxy(E.T6L["n"], E.T6L["q"], E.T6L["m"], E.T6L_DEPTHS + (2 * E.T6L_DEPTHS[-1],),
                        _mean_sq(E.sphere_sample(E.T6L["n"], E.T6L["d"], E.T6L["d_out"], E.T6L["q"], 21)[1]))


@pytest.mark.claim("implicit-reg/thm-6/long-time", kind="qualitative", aliases=ir.aliases("thm-3.7"), proxy=_T6L_PROXY,
                   title="Thm 6 (i)-(iv) in t: parameter increments decay like e^{-mu t/2} with mu the PL ratio, "
                         "and the network interpolates the data (small targets, every L)")
def test_thm6_long_time(claim):
    result = ir.run("thm6_limits")
    results = E.thm6_long_time_stats(result)
    depths, runs = result.config.depths, result.runs
    ax = new_axes()
    for L in depths:
        t, snaps, losses, G, X, Y = runs[L]
        inc = [np.linalg.norm(E.flat_params(b) - E.flat_params(a)) for a, b in zip(snaps[:-1], snaps[1:])]
        ax.semilogy(0.5 * (t[:-1] + t[1:]), inc, "o-", ms=3, label=f"L = {L}: increments")
    t, _, losses, G, _, _ = runs[depths[-1]]
    st = results[f"L={depths[-1]}"]
    ax.semilogy(t, np.exp(st["minus_half_mean_mu"] * (t - t[-1])) * inc[-1], "k--", label="slope -mean(G/l)/2")
    ax.semilogy(t, losses / losses[0], "r:", label="loss l(t)/l(0)")
    ax.set_xlabel("flow time t")
    ax.set_ylabel("||theta(t + 0.4) - theta(t)||, l(t)/l(0)")
    ax.set_title("implicit-reg/thm-6/long-time (n = 8, m = 32, sin)")
    ax.legend(fontsize=7)
    claim.record(ir.verdict(claim, "thm6_limits"), figure=save_figure(ax.figure, "implicit-reg/thm-6/long-time"))


@pytest.mark.claim("implicit-reg/thm-6/depth-limit", kind="rate", aliases=ir.aliases("thm-3.7"), proxy=_T6L_PROXY,
                   title="Thm 6 (i)-(iii) in L: weights (uniformly in t) and hidden states at depth L and 2L differ "
                         "by O(1/L)")
def test_thm6_depth_limit(claim):
    result = ir.run("thm6_limits")
    fit, fit_h, fit_f = E.thm6_depth_fits(result)
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=-1.0, label="weights: sup over t", xlabel="depth L")
    plot_rate(fit_h, ax=ax, label="hidden states: max over k, i at T", xlabel="depth L")
    plot_rate(fit_f, ax=ax, label="outputs: max over i at T", xlabel="depth L", ylabel="distance between depths L and 2L",
              title="implicit-reg/thm-6/depth-limit")
    claim.record(ir.verdict(claim, "thm6_limits"), figure=save_figure(ax.figure, "implicit-reg/thm-6/depth-limit"))


@pytest.mark.claim("implicit-reg/thm-6/smoothness", kind="rate", aliases=ir.aliases("thm-3.7"), proxy=_T6L_PROXY,
                   title="Along the unclipped flow, max_{t,k} ||Z_{k+1} - Z_k|| = O(1/L) uniformly in t (Prop. 8 (ii))")
def test_thm6_smoothness(claim):
    result = ir.run("thm6_limits")
    ax = new_axes()
    plot_rate(E.thm6_smoothness_fit(result), ax=ax, expected_slope=-1.0, label="weight-tied init, sin, A and B trained", xlabel="depth L",
              ylabel=r"$\max_{t,k}\|Z_{k+1}-Z_k\|$", title="implicit-reg/thm-6/smoothness")
    claim.record(ir.verdict(claim, "thm6_limits"), figure=save_figure(ax.figure, "implicit-reg/thm-6/smoothness"))


# --------------------------------------------------------------------------- Prop. 5 constants as printed (signed eta_r)


@pytest.mark.claim("implicit-reg/prop-5/erratum", kind="erratum", aliases=ir.aliases("prop-3.6"), wrong_in="proof",
                   step_of=_STEP,
                   title="Proof slip (the proposition still holds): B.5 writes c2, c3, c4 (and Lemma 21's sqrt(m) eta_r/4) "
                         "with the signed eta_r; for sin and tanh at r = 3, eta_3 < 0 and they come out negative; "
                         "with |eta_r| they are positive and mu is below the PL ratios measured at init")
def test_prop5_constants_erratum(claim):
    claim.record(ir.verdict(claim, "prop5_erratum"))
