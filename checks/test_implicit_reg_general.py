r"""Checks of the general-model results of ``implicit-reg`` (Appendix A and the lemmas of Appendix C).

The measurements, and what each record measures, are documented in
:mod:`theory.experiments.implicit_reg.general` (Lemma 18, the bounds of Prop. 11 and of Prop. 7: Hypothesis
searches over instances whose sides the package computes and worst-case searches over boxes of the statements'
hypotheses, in :mod:`theory.experiments.implicit_reg.searches`; every bound record passes only if its worst-case
search stays within the bound);
each check runs its claim's registered experiment at the ``"check"`` preset, records the verdict the registry
gives for the claim (``experiment(name).verdict_for(claim.id)``, what ``theory run CLAIM-ID`` prints) and draws
the figure.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.experiments.implicit_reg import general as E
from theory.plots import new_axes, plot_bound, plot_rate, save_figure, subplots

from . import _implicit_reg as ir


# ============================================================================ Lemma 18


@pytest.mark.claim("implicit-reg/lemma-18", kind="bound", step_of=("implicit-reg/prop-5", "implicit-reg/thm-6"),
                   aliases=ir.aliases("lemma-3.21"),
                   title="s_min(A+A') >= s_min(A) - ||A'||_F; ||AB||_F >= s_min(A)||B||_F (m >= r); "
                         "||AB||_F >= ||A||_F s_min(B) (n >= r)")
def test_lemma18(claim):
    result = ir.run("lemma18_search")
    ax = new_axes()
    plot_bound(result.bound, ax=ax, xlabel="right-hand side", ylabel="left-hand side",
               title="implicit-reg/lemma-18: three inequalities, shapes 1..8")
    claim.record(ir.verdict(claim, "lemma18_search"), figure=save_figure(ax.figure, "implicit-reg/lemma-18"))


# ============================================================================ Lemma 20


@pytest.mark.claim("implicit-reg/lemma-20", kind="bound", step_of=("implicit-reg/prop-5", "implicit-reg/thm-6"),
                   aliases=ir.aliases("lemma-3.23"),
                   title="Gaussian W (q x m), M_W >= sqrt 2: P(||W||_F > M_W sqrt(qm)) <= exp(-(M_W^2 - 1) qm / 16)")
def test_lemma20_exact(claim):
    res = ir.run("lemma20")
    ax = new_axes()
    for j in (0, 15, 30, 59):
        ax.semilogy(res.qm, res.ratios[:, j], label=f"M_W = {res.mw[j]:.2f}")
    ax.axhline(1.0, color="0.2", ls="--", lw=1, label="bound (ratio 1)")
    ax.set_ylim(1e-40, 10.0)
    ax.set_xlabel("q m")
    ax.set_ylabel("exact failure probability / bound")
    ax.set_title("implicit-reg/lemma-20 (chi-square law)")
    ax.legend()
    claim.record(ir.verdict(claim, "lemma20"), figure=save_figure(ax.figure, "implicit-reg/lemma-20"))


@pytest.mark.claim("implicit-reg/lemma-20/monte-carlo", kind="frequency", step_of=("implicit-reg/prop-5", "implicit-reg/thm-6"),
                   aliases=ir.aliases("lemma-3.23"),
                   title="Monte-Carlo: the frequency of ||W||_F > M_W sqrt(qm) is below exp(-(M_W^2 - 1) qm / 16) "
                         "and matches the chi-square tail")
def test_lemma20_monte_carlo(claim):
    verdict = ir.verdict(claim, "lemma20_mc")
    rows = verdict.measured["rows"]
    ax = new_axes()
    y = np.arange(len(rows))
    freq = np.array([r["freq"] for r in rows])
    err = np.array([[r["freq"] - r["ci"][0], r["ci"][1] - r["freq"]] for r in rows]).T
    ax.errorbar(freq, y, xerr=err, fmt="o", capsize=4, label="Monte-Carlo frequency (95% CI)")
    ax.plot([r["exact"] for r in rows], y, "x", ms=8, label="exact chi-square tail")
    ax.plot([r["bound"] for r in rows], y, "|", ms=16, mew=2, color="C3", label="Lemma 20 bound")
    ax.set_yticks(y, [f"q={r['q']}, m={r['m']}, M_W={r['M_W']:.2f}" for r in rows])
    ax.set_xscale("log")
    ax.set_xlabel(r"P($\|W\|_F > M_W\sqrt{qm}$)")
    ax.set_title(f"implicit-reg/lemma-20/monte-carlo ({E.PRESETS['lemma20_mc']['check'].runs} draws each)")
    ax.legend(fontsize=8)
    # the verdict at the point where the bound is tightest relative to the truth (q m = 1, M_W = sqrt 2), and the
    # exact chi-square tail inside every Monte-Carlo CI
    claim.record(verdict, figure=save_figure(ax.figure, "implicit-reg/lemma-20/monte-carlo"))


# ============================================================================ Proposition 11


@pytest.mark.claim("implicit-reg/prop-11", kind="rate", aliases=ir.aliases("prop-3.12"),
                   title="Euler scheme of a parameterised ODE with theta_{k+1} = Theta(k/(L-1)), Theta Lipschitz: "
                         "max_k ||U(k/L) - u_k|| = O(1/L)")
def test_prop11_rate(claim):
    result = ir.run("prop11")
    ax = new_axes()
    plot_rate(E.prop11_fit(result), ax=ax, expected_slope=-1.0, label=r"$g = \theta\tanh(u)$, 3 seeds", xlabel="depth L",
              ylabel=r"$\max_k \|U(k/L) - u_k^L\|$", title="implicit-reg/prop-11")
    claim.record(ir.verdict(claim, "prop11"), figure=save_figure(ax.figure, "implicit-reg/prop-11"))


@pytest.mark.claim("implicit-reg/prop-11/bound", kind="bound", aliases=ir.aliases("prop-3.12"),
                   title="Explicit gaps of Prop. 11: Delta_k <= (||a^L-a|| + sup||Theta-Theta^L|| + C_Theta/L + "
                         "C~/(LC)) e^C (35) and ||U(s) - u_floor(Ls)|| <= C_U/L + Delta_floor(Ls) (36)")
def test_prop11_bound(claim):
    result = ir.run("prop11_bound_search")
    per, rows = result.per, result.rows
    ax = new_axes()
    for name, marker in (("35", "o"), ("36", "s")):
        pts = np.array([(L, r) for L, b, r in rows if b == name])
        ax.loglog(pts[:, 0] * (1.0 if name == "35" else 1.08), pts[:, 1], marker, ls="none", alpha=0.6,
                  label=f"({name}): max ratio {per[name]:.3g}")
    ax.axhline(1.0, color="0.2", ls="--", lw=1, label="bound (ratio 1)")
    ax.set_xlabel("depth L")
    ax.set_ylabel("measured gap / right-hand side")
    ax.set_title(r"implicit-reg/prop-11/bound: $g = \theta\tanh(u)$")
    ax.legend()
    claim.record(ir.verdict(claim, "prop11_bound_search"), figure=save_figure(ax.figure, "implicit-reg/prop-11/bound"))


# ============================================================================ Proposition 7


def _p7_record(claim, cid):
    verdict = ir.verdict(claim, "prop7_search")
    per = verdict.measured["ratio_per_bound"]
    ax = new_axes(figsize=(7.5, 4.2))
    names = list(E.P7_BOUNDS)
    logs = np.array([math.log10(per[k]) if per[k] > 0 else -np.inf for k in names])
    shown = np.maximum(logs, -20.0)
    ax.barh(range(len(names)), shown, color=["C3" if k in E.P7_GROUPS[cid] else "C0" for k in names])
    for i, v in enumerate(logs):
        ax.text(min(shown[i], 0.0) - 0.3, i, "underflow (0)" if v == -np.inf else f"{v:.3g}", va="center",
                ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlim(-24, 1)
    ax.axvline(0.0, color="0.2", ls="--", lw=1)
    ax.set_xlabel("log10 max LHS/RHS over the runs (cut at -20); red: asserted by this record")
    ax.set_title(f"{cid} (clipped GD, tanh)")
    return claim.record(verdict, figure=save_figure(ax.figure, cid))


@pytest.mark.claim("implicit-reg/prop-7", kind="bound", aliases=ir.aliases("prop-3.8"),
                   title="Clipped flow (5): ||A||_F, ||Z_k||, ||B||_F <= M = M_0 + T M_pi on [0, T] (17)")
def test_prop7_norms(claim):
    _p7_record(claim, "implicit-reg/prop-7")


@pytest.mark.claim("implicit-reg/prop-7/displacement", kind="bound", aliases=ir.aliases("prop-3.1"),
                   title="Clipped GD (corollary of Prop. 1/7): each block moves at most t M_pi by time t")
def test_prop7_displacement(claim):
    _p7_record(claim, "implicit-reg/prop-7/displacement")


@pytest.mark.claim("implicit-reg/prop-7/intermediate", kind="bound", aliases=ir.aliases("prop-3.8"),
                   title="Proof of Prop. 7: ||h_k|| <= e^K1 M M_X, ||p_k|| <= 2e^K M(e^K M^2 M_X + M_Y), "
                         "||p_k - p_k-1|| <= K||p_k||/L, ||h_k - h_k-1|| <= K e^K M M_X / L")
def test_prop7_intermediate(claim):
    _p7_record(claim, "implicit-reg/prop-7/intermediate")


@pytest.mark.claim("implicit-reg/prop-7/gronwall", kind="bound", aliases=ir.aliases("prop-3.8"),
                   title="||d(Z_k+1 - Z_k)/dt|| <= alpha||Z_k+1 - Z_k|| + beta/L and "
                         "||Z_k+1(t) - Z_k(t)|| <= (||Z_k+1(0) - Z_k(0)|| + beta T/L) e^{alpha T}")
def test_prop7_gronwall(claim):
    _p7_record(claim, "implicit-reg/prop-7/gronwall")


@pytest.mark.claim("implicit-reg/prop-7/rate", kind="rate", aliases=ir.aliases("prop-3.8"),
                   title="Clipped GD from a Lipschitz Z^init(k/L) (App. A): max_{t<=T} max_k ||Z_{k+1} - Z_k|| "
                         "= O(1/L), growing in t far slower than e^{alpha t}")
def test_prop7_rate(claim):
    result = ir.run("prop7_rate")
    verdict = ir.verdict(claim, "prop7_rate")
    fit, fit_tied = E.prop7_rate_fits(result)
    cfg, grid, Ds, Dt = result.config, result.grid, result.Ds, result.Dt
    T = cfg.lr * cfg.steps
    _, fig, (ax, ax2) = subplots(ncols=2, figsize=(11, 4.2))
    plot_rate(fit, ax=ax, expected_slope=-1.0, label="smooth init", xlabel="depth L",
              ylabel=r"$\max_{t\leq T}\max_k \|Z_{k+1}(t) - Z_k(t)\|$", title=f"implicit-reg/prop-7/rate (T = {T:g})")
    plot_rate(fit_tied, ax=ax, label="weight-tied init (D(0) = 0)", xlabel="depth L",
              ylabel=r"$\max_{t\leq T}\max_k \|Z_{k+1}(t) - Z_k(t)\|$")
    t = cfg.lr * cfg.every * np.arange(len(Ds[0][0]))
    for j, L in enumerate(grid):
        ax2.plot(t, L * Ds[0][j], "-", color=f"C{j}", label=f"L = {L}")
        ax2.plot(t[1:], L * Dt[0][j][1:], ":", color=f"C{j}")
    ax2.set_yscale("log")
    ax2.set_xlabel("flow time t (solid: smooth init, dotted: weight-tied init)")
    ax2.set_ylabel(r"$L \cdot \max_k \|Z_{k+1}(t) - Z_k(t)\|$")
    ax2.set_title(f"seed 0; the printed bound grows like exp(alpha t), "
                  f"log10(alpha T) = {verdict.measured['log10_alpha_T']:.3g}",
                  fontsize=8)
    ax2.legend(fontsize=7)
    claim.record(verdict, figure=save_figure(fig, "implicit-reg/prop-7/rate"))


# ============================================================================ Proposition 8


def assert_p8_hypotheses(claim, result):
    """Assert that the certificate covers the threshold of (22) on every seed; the certificate per seed, for the
    record."""
    if not result.hypotheses_ok:
        raise AssertionError(f"{claim.id}: Prop. 8's hypothesis is not certified on this instance: {result.hyps}")
    return result.hypotheses_measured


@pytest.mark.claim("implicit-reg/prop-8", kind="bound", step_of=("implicit-reg/thm-6",),
                   aliases=ir.aliases("prop-3.9"),
                   title="Unclipped GD, sin, PL certified on Definition 1's whole M-ball (M = 0.1) for every L at "
                         "mu_cert >= mu of (22) (asserted): l(t) <= exp(-mu_cert t) l(0)")
def test_prop8_loss(claim):
    result = ir.run("prop8")
    hypotheses = assert_p8_hypotheses(claim, result)
    grid = result.grid
    ax = new_axes()
    for s, h in zip(result.config.seeds, result.hyps):
        for L in grid:
            t, losses, G, _ = result.runs[s, int(L)]
            ax.semilogy(t, losses, color=f"C{s}", lw=1, label=f"seed {s}, L = {grid[0]}..{grid[-1]}"
                        if L == grid[0] else None)
        ax.semilogy(t, losses[0] * np.exp(-h["mu_cert"] * t), "--", color=f"C{s}", lw=1,
                    label=rf"seed {s}: bound $e^{{-\mu_{{cert}} t}}\ell(0)$, $\mu_{{cert}}$ = {h['mu_cert']:.3f}")
    ax.set_xlabel("flow time t = lr x step")
    ax.set_ylabel("training loss")
    ax.set_title("implicit-reg/prop-8 (sin, PL certified on the M-ball)")
    ax.legend(fontsize=7)
    claim.record(ir.verdict(claim, "prop8"), figure=save_figure(ax.figure, "implicit-reg/prop-8"), measured=hypotheses)


@pytest.mark.claim("implicit-reg/prop-8/bounded", kind="rate", step_of=("implicit-reg/thm-6",),
                   aliases=ir.aliases("prop-3.9"),
                   title="PL certified on the M-ball (M = 0.1) at mu_cert >= mu of (22) (asserted): the parameters stay "
                         "in the ball uniformly in t and L, sup_t max-block ||theta(t) - theta(0)|| does not grow with L")
def test_prop8_bounded(claim):
    result = ir.run("prop8")
    hypotheses = assert_p8_hypotheses(claim, result)
    cfg = result.config
    ax = new_axes()
    plot_rate(E.prop8_bounded_fit(result), ax=ax, expected_slope=0.0, label=f"sup over t <= {cfg.lr * cfg.steps:g}", xlabel="depth L",
              ylabel=r"$\sup_t \max(\|A - A_0\|, \|Z_k - Z_k(0)\|, \|B - B_0\|)$", title="implicit-reg/prop-8/bounded")
    claim.record(ir.verdict(claim, "prop8"), figure=save_figure(ax.figure, "implicit-reg/prop-8/bounded"),
                 measured=hypotheses)


@pytest.mark.claim("implicit-reg/prop-8/differences", kind="rate", step_of=("implicit-reg/thm-6",),
                   aliases=ir.aliases("prop-3.9"),
                   title="PL certified on the M-ball at mu_cert >= mu of (22) (asserted): "
                         "sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| <= K~/L (uniform in t)")
def test_prop8_differences(claim):
    result = ir.run("prop8")
    hypotheses = assert_p8_hypotheses(claim, result)
    cfg = result.config
    ax = new_axes()
    plot_rate(E.prop8_differences_fit(result), ax=ax, expected_slope=-1.0, label=f"sup over t <= {cfg.lr * cfg.steps:g}", xlabel="depth L",
              ylabel=r"$\sup_t \max_k \|Z_{k+1}(t) - Z_k(t)\|$", title="implicit-reg/prop-8/differences")
    claim.record(ir.verdict(claim, "prop8"), figure=save_figure(ax.figure, "implicit-reg/prop-8/differences"),
                 measured=hypotheses)


@pytest.mark.claim("implicit-reg/prop-8/convergence", kind="bound", step_of=("implicit-reg/thm-6",),
                   aliases=ir.aliases("prop-3.9"),
                   title="PL certified on the M-ball at mu_cert >= mu of (22) (asserted): the parameters converge "
                         "exponentially, ||theta_inf - theta(t)|| ~ e^{-mu t/2}, uniformly in L")
def test_prop8_convergence(claim):
    result = ir.run("prop8")
    hypotheses = assert_p8_hypotheses(claim, result)
    results = E.prop8_convergence_runs(result)
    ax = new_axes()
    for L, r in zip(result.grid, results[: len(result.grid)]):
        ax.semilogy(r["ts"], r["dist"], label=f"L = {L}: rate {r['rate']:.4f}")
    r = results[0]
    ax.semilogy(r["ts"], r["dist"][0] * np.exp(-r["half_mu"] * r["ts"]), "k--", label=rf"$e^{{-\hat\mu t/2}}$, "
                rf"$\hat\mu/2$ = {r['half_mu']:.4f}")
    ax.set_xlabel("flow time t")
    ax.set_ylabel(r"$\max$-block $\|\theta(t + \delta t) - \theta(t)\|$, $\delta t$ = 1")
    ax.set_title("implicit-reg/prop-8/convergence (seed 0)")
    ax.legend(fontsize=7)
    claim.record(ir.verdict(claim, "prop8"), figure=save_figure(ax.figure, "implicit-reg/prop-8/convergence"),
                 measured=hypotheses)


# ---------------------------------------------------------------------------- Prop. 8 with a certified PL


@pytest.mark.claim("implicit-reg/prop-8/certified", kind="bound", step_of=("implicit-reg/thm-6",),
                   aliases=ir.aliases("prop-3.9"),
                   title="f = 0 instance (Z^init = 0, Lipschitz), PL certified on Definition 1's whole M-ball for every "
                         "L at a constant >= mu of (22) (asserted), so inside Prop. 8's hypotheses: l <= e^{-mu t} l(0), "
                         "stays within M/2, ||theta_inf - theta(t)|| <= (M/2) e^{-mu t/2}, (i) corrected")
def test_prop8_certified(claim):
    verdict = ir.verdict(claim, "prop8_certified")
    per = verdict.measured["ratio_per_bound"]
    ax = new_axes(figsize=(7.5, 4.2))
    names = list(per)
    ax.barh(range(len(names)), [per[k] for k in names], color="C0")
    ax.axvline(1.0, color="0.2", ls="--", lw=1, label="bound")
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xlabel("max LHS/RHS over t and 3 seeds")
    ax.set_title("implicit-reg/prop-8/certified (f = 0, printed constants)")
    claim.record(verdict, figure=save_figure(ax.figure, "implicit-reg/prop-8/certified"))


@pytest.mark.claim("implicit-reg/prop-8/erratum", kind="erratum", aliases=ir.aliases("prop-3.9"), wrong_in="statement",
                   title="Statement slip: Prop. 8 (i) as printed, ||A(t)||_F <= ||A^init||_2 + M, fails at t = 0 for A^init = (I; 0) "
                         "with M < sqrt(d) - 1 (correct: ||A||_2 <= ||A^init||_2 + M or ||A||_F <= ||A^init||_F + M)")
def test_prop8_erratum(claim):
    claim.record(ir.verdict(claim, "prop8_certified"))
