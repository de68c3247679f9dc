"""Checks of the proof chains of Proposition 5 and Theorem 6 of ``implicit-reg`` (Appendices B.5, B.6, C).

Both statements need m >= 4.8e6 n and L >= 8.7e3 sqrt(nq): their own records are proxies. Each lemma and
intermediate estimate their proofs chain is a claim here, checked under its own hypotheses at sizes this machine
reaches (``step_of`` in the marker), bounds with a worst-case search over those hypotheses. The measurements are
:mod:`theory.experiments.implicit_reg.proof_b5` (Prop. 5, Lemma 21) and :mod:`...proof_b6` (Thm 6, and the
approach of its hypotheses); each check runs its registered experiment at the ``"check"`` preset and records the
verdict the registry gives the claim (what ``theory run CLAIM-ID`` prints).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.experiments.implicit_reg import proof_b5 as P5
from theory.experiments.implicit_reg import proof_b6 as P6
from theory.plots import new_axes, save_figure

from . import _implicit_reg as ir

STEP_P5 = ("implicit-reg/prop-5", "implicit-reg/thm-6")
STEP_T6 = ("implicit-reg/thm-6",)


# =========================================================================== Proposition 5 (Appendix B.5)


@pytest.mark.claim("implicit-reg/eq-48", kind="bound", aliases=ir.aliases("eq-3.48"), step_of=STEP_P5,
                   title="B.5 (47)-(48): in a ball of radius <= 1/2 around the init (||W_bar||_F <= sqrt(2qm)), "
                         "||A||_2 <= 2, s_min(B) >= 1/2, ||B||_2 <= 3/2, ||V_k||_F <= 1, ||W_k||_F <= 2 sqrt(2qm)")
def test_eq48(claim):
    claim.record(ir.verdict(claim, "eq48"))


@pytest.mark.claim("implicit-reg/eq-50", kind="bound", aliases=ir.aliases("eq-3.50"), step_of=STEP_P5,
                   title="B.5 (49)-(50): under (48), ||x_i|| = sqrt q, sigma K-Lipschitz with sigma(0) = 0: "
                         "||h_k||_F <= 2 e^{2 sqrt2 K} sqrt(qn) for every k")
def test_eq50(claim):
    claim.record(ir.verdict(claim, "eq50"))


@pytest.mark.claim("implicit-reg/eq-51", kind="bound", aliases=ir.aliases("eq-3.51"), step_of=STEP_P5,
                   title="B.5 (51): in the proof's ball (radius M = min(eta/(32 K sqrt(2nq)), 1/2), sin or tanh) "
                         "e^{-2 sqrt2 K} sqrt(l/n) <= ||p_k||_F <= 3 e^{2 sqrt2 K} sqrt(l/n)")
def test_eq51(claim):
    claim.record(ir.verdict(claim, "eq51"))


def _eq51_erratum_figure():
    """The aligned instance of the erratum (n = 1, q = 2, m = 1, K = 1, a nearly linear sigma, B's weakest singular
    value 1/2): min_k ||p_k|| / sqrt(l/n) against L, with the printed bound e^{-2 sqrt2} and the proof's product."""
    Ls = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
    base = dict(n=1, d=1, d_out=1, extra=0, m=1, base=0, K=1.0, a=1e-4, alpha=1.0, fa=1.0, b_min=0.5, fv=1.0, fw=1.0,
                vsign=-1.0, xalign=1.0, ralign=1.0, seed=0)
    got = []
    for L in Ls:
        lhs, rhs = P5.eq51_premise_sides({**base, "L": int(L)}, 0.0)  # exponent 0: rhs = min_k ||p_k||
        got.append(rhs / lhs)
    x = 2 * math.sqrt(2)
    ax = new_axes()
    ax.semilogy(Ls, np.maximum(got, 1e-17), "o", label=r"network: $\min_k\|p_k\|_F/\sqrt{\ell/n}$ (aligned, in (48))")
    ax.semilogy(Ls, np.maximum(np.abs(1 - x / Ls) ** Ls, 1e-17), "-", label=r"$|1 - 2\sqrt{2}K/L|^L$ (the proof's product)")
    ax.axhline(math.exp(-x), ls="--", color="r", label=r"printed (51): $e^{-2\sqrt{2} K}$")
    ax.axhline(math.exp(-2 * x), ls=":", color="g", label=r"corrected, $L \geq 4\sqrt{2}K$: $e^{-4\sqrt{2} K}$")
    ax.axvline(4 * math.sqrt(2), color="grey", lw=0.5)
    ax.set_xscale("log")
    ax.set_xlabel("depth L  (K = 1)")
    ax.set_ylabel(r"$\min_k\|p_k\|_F / \sqrt{\ell/n}$")
    ax.set_title("implicit-reg/eq-51/erratum")
    ax.legend(fontsize=7)
    return save_figure(ax.figure, "implicit-reg/eq-51/erratum")


@pytest.mark.claim("implicit-reg/eq-51/erratum", kind="erratum", aliases=ir.aliases("eq-3.51"), wrong_in="proof",
                   step_of=STEP_P5,
                   title="Proof slip in B.5 (Prop. 5 unaffected): from (48), ||p_k|| >= (1 - 2 sqrt2 K/L)||p_{k+1}|| does "
                         "not give ||p_k|| >= e^{-2 sqrt2 K}||p_L|| ((1 - x/L)^L < e^{-x}); over (48) (51) fails, and "
                         "holds with e^{-4 sqrt2 K} for L >= 4 sqrt2 K")
def test_eq51_erratum(claim):
    claim.record(ir.verdict(claim, "eq51_erratum"), figure=_eq51_erratum_figure())


@pytest.mark.claim("implicit-reg/eq-52", kind="bound", aliases=ir.aliases("eq-3.52"), step_of=STEP_P5,
                   title="B.5 (52), first line: for m >= n, ||dl/dV_{k+1}||_F >= ||p_{k+1}||_F s_min(sigma(W_{k+1} h_k "
                         "/sqrt q)) / (L sqrt m) (backprop against the SVD; equality for n = 1)")
def test_eq52(claim):
    claim.record(ir.verdict(claim, "eq52"))


@pytest.mark.claim("implicit-reg/thm-6/step-feature-perturbation", kind="bound", aliases=ir.aliases("prop-3.6"),
                   step_of=STEP_P5,
                   title="B.5: under (47) with ||A - A_bar||_F <= M, ||W_bar||_F <= sqrt(2qm), ||x_i|| = sqrt q: "
                         "||sigma(W_{k+1} h_k/sqrt q) - sigma(W_bar A_bar x/sqrt q)||_F <= C1 sqrt n + "
                         "C2 sqrt(nqm) k/(16L) + sqrt m eta/32")
def test_feature_perturbation(claim):
    claim.record(ir.verdict(claim, "feature"))


def _chernoff_figure():
    """n = 1, t = 1/2, p = 0.1: the exact P(Bin(m, p) <= mp/2) against the remark's bound and the printed one."""
    from scipy.stats import binom

    m = np.unique(np.round(np.logspace(1, np.log10(4000), 30)).astype(int))
    p = 0.1
    exact = binom.cdf(np.floor(0.5 * m * p), m, p)
    ax = new_axes()
    ax.semilogy(m * p, exact, "o", ms=3, label="exact P(lambda_min <= mu/2) (Bernoulli(0.1) sums, n = 1)")
    ax.semilogy(m * p, np.exp(-0.25 * m * p / 2), "-", label=r"Tropp: $e^{-(1-t)^2\mu/(2R)}$, t = 1/2")
    ax.semilogy(m * p, np.exp(-0.75 * m * p / 2), "--", color="r", label=r"as printed: $e^{-(1-t^2)\mu/(2R)}$")
    ax.set_ylim(top=2.0)
    ax.set_xlabel(r"$\mu_{\min}/R = mp$")
    ax.set_ylabel("probability")
    ax.set_title("implicit-reg/thm-6/step-chernoff/erratum")
    ax.legend(fontsize=7)
    return save_figure(ax.figure, "implicit-reg/thm-6/step-chernoff/erratum")


@pytest.mark.claim("implicit-reg/thm-6/step-chernoff", kind="bound", aliases=ir.aliases("lemma-3.24"),
                   step_of=STEP_P5,
                   title="Lemma 21's proof, matrix Chernoff (Tropp 2012, Remark 5.3): P(lambda_min(sum X_i) <= t mu) <= "
                         "n e^{-(1-t)^2 mu/(2R)}, exact on Bernoulli diagonal sums")
def test_chernoff(claim):
    claim.record(ir.verdict(claim, "chernoff"))


@pytest.mark.claim("implicit-reg/thm-6/step-chernoff/erratum", kind="erratum", aliases=ir.aliases("lemma-3.24"),
                   wrong_in="proof", step_of=STEP_P5,
                   title="Lemma 21's proof writes the Chernoff exponent (1 - t^2) mu/(2R) for (1 - t)^2 mu/(2R): false "
                         "(exact binomial tails); the delta of Lemma 21 and Prop. 5 should read m eta^2/(64 M^2 n)")
def test_chernoff_erratum(claim):
    claim.record(ir.verdict(claim, "chernoff_erratum"), figure=_chernoff_figure())


@pytest.mark.claim("implicit-reg/lemma-21/printed-delta", kind="frequency", aliases=ir.aliases("lemma-3.24"),
                   step_of=STEP_P5,
                   title="Lemma 21 with its printed delta, at a size where delta < 1 (n = 2, m = 2000, d = 64, sin, "
                         "uniform unit columns): P(s_min(sigma(WX)) < sqrt(m) |eta_3|/4) <= delta")
def test_lemma21_printed_delta(claim):
    claim.record(ir.verdict(claim, "lemma21_delta"))


# =========================================================================== Theorem 6 (Appendix B.6)


@pytest.mark.claim("implicit-reg/thm-6/step-zero-output", kind="identity", aliases=ir.aliases("thm-3.7"),
                   step_of=STEP_T6,
                   title="B.6: at the init of Section 3 with q >= d + d', h_L = h_0, F(x) = B_bar A_bar x = 0 and "
                         "l(0) = (1/n) sum ||y_i||^2, for every L and m")
def test_zero_output(claim):
    claim.record(ir.verdict(claim, "zero_output"))


@pytest.mark.claim("implicit-reg/thm-6/step-label-condition", kind="identity", aliases=ir.aliases("thm-3.7"),
                   step_of=STEP_T6,
                   title="B.6: with Prop. 5's M and mu, condition (22) of Prop. 8 holds iff (1/n) sum ||y_i||^2 <= "
                         "c3^2 c4^2 / (64 n^4 q^2 max(M_B K, M_B M_X, M_A M_X)^2 e^{2K})")
def test_label_condition(claim):
    claim.record(ir.verdict(claim, "label"))


@pytest.mark.claim("implicit-reg/thm-6/step-label-condition/erratum", kind="erratum", aliases=ir.aliases("thm-3.7"),
                   wrong_in="proof", step_of=STEP_T6,
                   title="B.6 prints q^3 where the algebra of (22) gives q^2: the printed C is q times the threshold "
                         "(a stronger, still sufficient condition: Thm 6 holds with it)")
def test_label_condition_erratum(claim):
    claim.record(ir.verdict(claim, "label"))


def _approach_figure(result):
    fit = P6.approach_fit(result)
    value, low, high = P6.approach_extrapolation(result, fit)
    x = np.log(result.r)
    xbar, ybar = float(x.mean()), float(np.log(result.ratio).mean())
    ax = new_axes()
    for i in range(result.ratio.shape[0]):
        ax.loglog(result.r, result.ratio[i], "o", color="C0", label="measured decay rate / (10)'s rate" if i == 0 else None)
        ax.loglog(result.r, result.init[i], "s", mfc="none", color="C2",
                  label="PL ratio at init / (10)'s rate" if i == 0 else None)
    rr = np.logspace(np.log10(result.r.min()) - 0.2, 0.05, 50)
    for b, style, lab in ((fit.slope, "-", f"fit: slope {fit.slope:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]"),
                          (fit.ci[0], ":", "slope interval"), (fit.ci[1], ":", None)):
        ax.loglog(rr, np.exp(ybar + b * (np.log(rr) - xbar)), style, color="C1", label=lab)
    ax.errorbar([1.0], [value], yerr=[[value - low], [high - value]], fmt="*", color="C3", ms=10,
                label=f"extrapolated to r = 1: {value:.2g}")
    ax.axhline(1.0, ls="--", color="r", label="Thm 6 (10): ratio >= 1 at r >= 1")
    ax.axvline(1.0, color="grey", lw=0.5)
    ax.set_xlabel(r"r = $m/(c_1 n) = L/(c_2\sqrt{nq})$   (n = 2, q = 3, sin)")
    ax.set_ylabel(r"rate / $(c_4/(n\sqrt{nq}))$")
    ax.set_title("implicit-reg/thm-6/approach")
    ax.legend(fontsize=7)
    return save_figure(ax.figure, "implicit-reg/thm-6/approach")


@pytest.mark.claim("implicit-reg/thm-6/approach", kind="rate", aliases=ir.aliases("thm-3.7"), step_of=STEP_T6,
                   title="Thm 6 (10) toward its hypotheses: the loss-decay rate of GD over the rate c4/(n sqrt(nq)) "
                         "of (10), against r = m/(c1 n) = L/(c2 sqrt(nq)) from 4.7e-5 to 7.5e-4: slope 0 (predicted), "
                         "extrapolated to r = 1 above 1")
def test_thm6_approach(claim):
    result = ir.run("thm6_approach")
    claim.record(ir.verdict(claim, "thm6_approach"), figure=_approach_figure(result))
