"""Checks of M. E. Sander's thesis, chapter 6 (in-context autoregressive learning with linear attention, paper key
``icl-ar``), composed from theory.experiments.icl_ar: Prop. 6.4 (one gradient step), Prop. 6.5 (the optimal
step η*, exactly), Prop. 6.8 (the quadratic loss, printed and corrected), Lemma 6.10 and Prop. 6.11 (orthogonal
contexts, rank-δ solution, ratio -1/2), Props. 6.7 and Fig. 6.3 (unitary contexts, trained parameters) and
Prop. 6.12 (the PE-only quadratic form, printed and corrected). Every expectation over the contexts is exact.
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments import icl_ar as ex
from theory.plots import save_figure, subplots


@pytest.mark.claim("icl-ar/prop-6.4", kind="identity", aliases=("sander-thesis/prop-6.4",),
                   title="Prop. 6.4 (thesis ch. 6): with A, B of (6.8) the augmented layer (6.4) outputs "
                         "-η∇_W L(0, e)s_T, one gradient step on (6.5) from W = 0 (convention s_0 = 0)")
def test_prop64(claim):
    claim.record(ex.prop64_verdict(ex.prop64(ex.PROP64_PRESETS["check"])))


def _prop65_figure(result):
    _, fig, (ax0, ax1) = subplots(ncols=2, figsize=(10.0, 4.0))
    ax0.semilogx(result.rate_tmax, result.eta_tmax, "o-", label=r"exact $\eta^* T_{\max}$ ($d = 5$)")
    ax0.axhline(1.5, color="k", ls="--", lw=1, label="3/2, predicted limit")
    ax0.set_xlabel(r"$T_{\max}$")
    ax0.set_ylabel(r"$\eta^* T_{\max}$")
    ax0.legend(fontsize=8)
    ax1.plot(result.curve_T, result.curve_loss, "o", ms=3, label=r"exact loss at $\eta^*$ (merged monomials)")
    ax1.plot(result.curve_T, result.curve_formula, "-", lw=1, label=r"$d(\eta^2(T^2+(d-1)T)-2\eta T+1)$, predicted")
    ax1.set_xlabel("context length T")
    ax1.set_ylabel("population loss at the optimum, per T")
    ax1.legend(fontsize=8)
    fig.suptitle(f"icl-ar/prop-6.5: one GD step is optimal (s0 = {result.s0}, d = 5, T_max = {result.curve_T[-1]})",
                 fontsize=10)
    return save_figure(fig, "icl-ar/prop-6.5")


@pytest.mark.claim("icl-ar/prop-6.5", kind="identity", aliases=("sander-thesis/prop-6.5", "sander-thesis/prop-6.14"),
                   title="Prop. 6.5 (thesis ch. 6), unitary contexts, Assumption 1, s_0 = W^-1 s_1: the loss is minimal at "
                         "a1 + a4 = a2 = b2 = 0, a3 b1 = η* = ΣT / Σ(T² + (d-1)T) (exact fractions), η* T_max → 3/2")
def test_prop65(claim):
    result = ex.prop65(ex.PROP65_PRESETS["check"])
    claim.record(ex.prop65_verdict(result), figure=_prop65_figure(result))


@pytest.mark.claim("icl-ar/prop-6.8", kind="identity", aliases=("sander-thesis/prop-6.8",),
                   title="Prop. 6.8 (thesis ch. 6) as corrected: l(C, p) = ||p||²||C||_F² + p_(T-1)²(S(CᵀC) - ||C||_F²) "
                         "- 2Tr(C)p_T + d equals the exact expectation (unitary contexts, Assumptions 6.2 and 2)")
def test_prop68(claim):
    claim.record(ex.prop68_verdict(ex.prop68(ex.PROP68_PRESETS["check"])))


@pytest.mark.claim("icl-ar/prop-6.8/erratum", kind="erratum", wrong_in="statement", aliases=("sander-thesis/prop-6.8",),
                   title="Prop. 6.8 (thesis ch. 6): the printed l(C, p) = ||p||²||C||_F² + p_(T-1)²S(CᵀC) - 2Tr(C)p_T + d "
                         "counts the terms t = t' = T-1, j = k twice; the exact loss is lower by p_(T-1)²||C||_F²")
def test_prop68_erratum(claim):
    claim.record(ex.prop68_erratum_verdict(ex.prop68(ex.PROP68_PRESETS["check"])))


@pytest.mark.claim("icl-ar/lemma-6.10", kind="identity", aliases=("sander-thesis/lemma-6.10",),
                   title="Lemma 6.10 (thesis ch. 6), orthogonal contexts: P_(T-1,T-1) = -1, P_(T-1,T) = 2, "
                         "C = ½diag(J, ..., J) give zero loss exactly (rational arithmetic), with rank C = δ")
def test_lemma610(claim):
    claim.record(ex.lemma610_verdict(ex.lemma610(ex.LEMMA610_PRESETS["check"])))


@pytest.mark.claim("icl-ar/prop-6.11", kind="identity", aliases=("sander-thesis/prop-6.11",),
                   title="Prop. 6.11 (thesis ch. 6), orthogonal contexts, H < d: gradient flow on the exact loss reaches "
                         "zero loss at parameters satisfying the proposition, rank C = δ, P_(T-1,T-1)/P_(T-1,T) = -1/2")
def test_prop611(claim):
    claim.record(ex.prop611_verdict(ex.prop611(ex.PROP611_PRESETS["check"])))


def _fig63_figure(unitary, orthogonal, tmax_u, tmax_o):
    _, fig, axes = subplots(ncols=3, nrows=2, figsize=(12.0, 7.0))
    (a0, a1, a2), (b0, b1, b2) = axes
    for ax, M, title in ((a0, unitary.C, r"unitary: $\mathbf{B}^\top\mathbf{A}$"),
                         (b0, orthogonal.C, r"orthogonal: $\mathbf{B}^\top\mathbf{A}$")):
        v = np.max(np.abs(M))
        im = ax.imshow(M, cmap="RdBu_r", vmin=-v, vmax=v)
        fig.colorbar(im, ax=ax, fraction=0.046)
        ax.set_title(title, fontsize=9)
    for ax, P, tm, title in ((a1, unitary.P, tmax_u, "unitary: P (rows T-1 used)"),
                             (b1, orthogonal.P, tmax_o, "orthogonal: P (rows T-1 used)")):
        M = np.full((tm - 1, tm), np.nan)
        for T in range(2, tm + 1):
            M[T - 2, :T] = P[T - 2, :T]
        v = np.nanmax(np.abs(M))
        im = ax.imshow(M, cmap="RdBu_r", vmin=-v, vmax=v)
        fig.colorbar(im, ax=ax, fraction=0.046)
        ax.set_title(title, fontsize=9)
    Tu = np.arange(2, tmax_u + 1)
    a2.plot(Tu, [unitary.P[T - 2, T - 1] * np.mean(np.diag(unitary.C)) for T in Tu], "o", label=r"learned $P_{T-1,T}\,\overline{C_{ii}}$")
    a2.axhline(1.0, color="k", ls="--", lw=1, label="1, predicted (Prop. 6.7)")
    a2.set_ylim(0.9, 1.1)
    a2.set_xlabel("T")
    a2.legend(fontsize=8)
    To = np.arange(3, tmax_o + 1)
    b2.plot(To, [orthogonal.P[T - 2, T - 2] / orthogonal.P[T - 2, T - 1] for T in To], "o",
            label=r"learned $P_{T-1,T-1}/P_{T-1,T}$")
    b2.axhline(-0.5, color="k", ls="--", lw=1, label="-1/2, predicted (Prop. 6.11, H < d)")
    b2.set_ylim(-0.7, -0.3)
    b2.set_xlabel("T")
    b2.legend(fontsize=8)
    fig.suptitle(f"icl-ar/fig-6.3: learned vs predicted; unitary d = H = 10, T_max = {tmax_u}; "
                 f"orthogonal d = {2 * orthogonal.delta}, H = {orthogonal.heads}, T_max = {tmax_o}", fontsize=10)
    return save_figure(fig, "icl-ar/fig-6.3")


@pytest.mark.claim("icl-ar/fig-6.3", kind="identity", aliases=("sander-thesis/fig-6.3",),
                   title="Fig. 6.3 (thesis ch. 6): training (6.6) on the exact loss (6.3) from a random start reaches "
                         "arbitrarily small loss at the parameters of Props. 6.7 (unitary, d = H = 10, T = 15) and "
                         "6.11 (orthogonal, reduced: d = 4, H = 3)")
def test_fig63(claim):
    exp = experiment("icl_ar.fig63_panels")
    result = exp.run("check")  # the "check" presets of icl_ar.fig63 (left) and icl_ar.prop611 (right)
    claim.record(exp.verdict_for("icl-ar/fig-6.3")(result),
                 figure=_fig63_figure(result.unitary, result.orthogonal, result.unitary_tmax, result.orthogonal_tmax))


@pytest.mark.claim("icl-ar/prop-6.7", kind="identity", aliases=("sander-thesis/prop-6.7",),
                   title="Prop. 6.7 (thesis ch. 6), unitary contexts: zero-loss parameters reached by gradient flow have "
                         "P_(T-1,t) = 0 for t != T, P_(T-1,T) C_ii = 1 and C_ij = 0 (i != j)")
def test_prop67(claim):
    claim.record(ex.fig63_verdict(ex.fig63(ex.FIG63_PRESETS["check"])))


def _prop612_figure(result, config):
    from theory import icl

    _, fig, (ax0, ax1) = subplots(ncols=2, figsize=(10.0, 4.0))
    mu = 50.0
    k = np.arange(config.T)
    ref = [ex.quad_moment(int(x), mu) for x in k]
    ax0.plot(k, ref, "ko", ms=4, label=r"quadrature of $\mathrm{Re}\,\mathbb{E}[\lambda^{2k}]$")
    ax0.plot(k, icl.pe_hessian(config.T, mu)[0], "C2-", label=r"$\frac{\mu}{4\pi k}\sin\frac{4\pi k}{\mu}$ (corrected)")
    ax0.plot(k, icl.pe_hessian_printed(config.T, mu)[0], "C3--", label=r"printed $\frac{\mu}{4\pi k}\sin(4k)\frac{\pi}{\mu}$")
    ax0.set_xlabel("k = t' - t")
    ax0.set_ylabel(r"$H_{t,t+k}$ at $\mu$ = 50")
    ax0.legend(fontsize=8)
    mus = np.array(result.rate_mus)
    ax1.loglog(mus, result.gap, "o", color="C0", ms=10, mfc="none", mew=1.5,
               label=rf"$T-\sigma_1$ (fit slope {result.fit_gap.slope:.2f})")
    ax1.loglog(mus, result.sigma2, "s", color="C1", label=rf"$\sigma_2$ (fit slope {result.fit_sigma2.slope:.2f})")
    ax1.loglog(mus, result.asymptote, "k--", lw=1, label=r"$4\pi^2T(T^2-1)/(9\mu^2)$, slope -2, predicted")
    from matplotlib.ticker import NullFormatter

    ax1.xaxis.set_minor_formatter(NullFormatter())
    ax1.set_xlabel(r"$\mu$")
    ax1.legend(fontsize=8)
    fig.suptitle(f"icl-ar/prop-6.12: PE-only quadratic form, T = {config.T}", fontsize=10)
    return save_figure(fig, "icl-ar/prop-6.12")


@pytest.mark.claim("icl-ar/prop-6.12", kind="rate", aliases=("sander-thesis/prop-6.12",),
                   title="Prop. 6.12 (thesis ch. 6) with the sine argument corrected: H_tt' = μ sin(4π(t'-t)/μ)/(4π(t'-t)) "
                         "(the Hessian of l is 2H); σ_1 → T and σ_(t>1) → 0 like μ^-2")
def test_prop612(claim):
    config = ex.PROP612_PRESETS["check"]
    result = ex.prop612(config)
    claim.record(ex.prop612_verdict(result), figure=_prop612_figure(result, config))


@pytest.mark.claim("icl-ar/prop-6.12/erratum", kind="erratum", wrong_in="statement", aliases=("sander-thesis/prop-6.12",),
                   title="Prop. 6.12 (thesis ch. 6): the printed H_tt' = μ/(4π(t'-t)) sin(4(t'-t)) π/μ does not depend on μ "
                         "and is not E[λ^{2(t'-t)}]; the sine argument is 4π(t'-t)/μ")
def test_prop612_erratum(claim):
    claim.record(ex.prop612_erratum_verdict(ex.prop612(ex.PROP612_PRESETS["check"])))


@pytest.mark.claim("icl-ar/lemma-6.6", kind="identity", aliases=("sander-thesis/lemma-6.6",),
                   title="Lemma 6.6 (thesis ch. 6): with diagonal heads (Assumption 2) and s_t = λ^(t-1), the layer (6.6) "
                         "outputs Σ_t P_(T-1,t) [BᵀA] λ^(t-T+1) ⊙ λ^(t-1)")
def test_lemma66(claim):
    claim.record(ex.lemma66_verdict(ex.lemma66(ex.LEMMA66_PRESETS["check"])))


@pytest.mark.claim("icl-ar/prop-6.9", kind="identity", aliases=("sander-thesis/prop-6.9",),
                   title="Prop. 6.9 (thesis ch. 6): the gradient flow of ℓ(a, b, p) = (pab - 1)² started with |pab - 1| < 1 "
                         "converges to a global minimum p*a*b* = 1")
def test_prop69(claim):
    claim.record(ex.prop69_verdict(ex.prop69(ex.PROP69_PRESETS["check"])))


def _fig66_figure(result):
    n = len(result.mus)
    _, fig, axes = subplots(ncols=n, nrows=2, figsize=(3.2 * n, 6.2))
    for c, (mu, M) in enumerate(zip(result.mus, result.P)):
        shown = M.copy()
        for r in range(shown.shape[0]):
            shown[r, r + 1] = np.nan  # P_(T-1,T) masked, as in the thesis's figure
        v = np.nanmax(np.abs(shown))
        im = axes[0][c].imshow(shown, cmap="RdBu_r", vmin=-v, vmax=v)
        fig.colorbar(im, ax=axes[0][c], fraction=0.046)
        axes[0][c].set_title(f"μ = {mu:g}: P (P_(T-1,T) masked)", fontsize=9)
        last = M[-1]
        axes[1][c].plot(np.arange(1, last.size + 1), last, "o-", ms=3, label="learned last row")
        target = np.zeros(last.size)
        target[-1] = 1.0
        axes[1][c].plot(np.arange(1, last.size + 1), target, "k--", lw=1, label=r"optimum $e_T$ (Prop. 6.12)")
        axes[1][c].set_xlabel("t'")
        axes[1][c].legend(fontsize=7)
    fig.suptitle("icl-ar/fig-6.6: gradient descent on the exact PE-only loss (6.7), T_max = 30, stopped at mean loss "
                 "1e-3", fontsize=10)
    return save_figure(fig, "icl-ar/fig-6.6")


@pytest.mark.claim("icl-ar/fig-6.6", kind="qualitative", aliases=("sander-thesis/fig-6.6",),
                   proxy="the exact population loss (6.7) stands in for the document's empirical loss on a dataset "
                         "of 10^4 examples (§6.6), so the finite-sample part of the figure is not reproduced",
                   title="Fig. 6.6 and §6.5.3 (thesis ch. 6): gradient descent on the PE-only loss (6.7) from P = 0, stopped "
                         "at loss 1e-3, learns smooth rows far from the optimum e_T (more so for larger μ), largest on "
                         "the most recent token (exact population loss, T_max = 30, μ = 50..300)")
def test_fig66(claim):
    result = ex.fig66(ex.FIG66_PRESETS["check"])
    claim.record(ex.fig66_verdict(result), figure=_fig66_figure(result))
