"""Checks of "Fast, Differentiable and Sparse Top-k: a Convex Analysis Perspective" (paper key ``topk``).

Numbering of M. E. Sander's thesis, chapter 7 (Prop. 7.2, 7.8, Fig. 7.1, §7.5, §7.7); Fig. 7.1 also at
p = 4/3. Each test runs its claim's registered experiment (theory.experiments.topk) at its "check" preset, records
the verdict the registry gives for the claim (``theory run CLAIM-ID`` reruns it) and draws its figure. The
Hypothesis hunts over the same families of instances live in tests/test_controls_topk_hunts.py.
"""

from __future__ import annotations

import pytest

from theory.experiments import experiment
from theory.experiments import topk as ex
from theory.plots import new_axes, plot_rate, save_figure


def run_check(name, claim):
    """(result, verdict): experiment ``name`` at its "check" preset and the verdict it gives for ``claim``."""
    exp = experiment(name)
    result = exp.run("check")
    return result, exp.verdict_for(claim.id)(result)


# --------------------------------------------------------------------------- Proposition 7.8


@pytest.mark.claim("topk/prop-7.8", kind="identity",
                   title="Jacobian of the p=2 top-k mask/magnitude by block averaging (weights 1 + λw_j in the "
                         "magnitude case) equals central finite differences")
def test_prop78_jacobian(claim):
    result, verdict = run_check("topk.prop78", claim)
    claim.record(verdict, measured=ex.prop78_outcome(result.cases).extras)


@pytest.mark.claim("topk/prop-7.8/symmetric-psd", kind="identity",
                   title="The p=2 operator Jacobian (a Hessian of the convex f_{φ,R}) is symmetric positive semi-definite")
def test_prop78_symmetric_psd(claim):
    result, verdict = run_check("topk.prop78_psd", claim)
    claim.record(verdict, measured=ex.prop78_psd_outcome(result.cases).extras)


@pytest.mark.claim("topk/prop-7.8/erratum", kind="erratum", wrong_in="statement",
                   title="Prop. 7.8 magnitude case: block weight 1/|B| (w dropped) and the printed denominator "
                         "parsed literally (Σ_j(q−1)|γ−s_j|^{q−2} + w, w outside the sum) both fail against "
                         "finite differences; corrected: Σ_j((q−1)|γ−s_j|^{q−2} + λ^{q−1}w_j), the weight inside the sum")
def test_prop78_erratum(claim):
    result, verdict = run_check("topk.prop78_erratum", claim)
    claim.record(verdict, measured=result)


# --------------------------------------------------------------------------- Proposition 7.2 (reduction)


@pytest.mark.claim("topk/prop-7.2", kind="identity",
                   title="Relaxed top-k mask y* = (x − u*)/λ, u* from isotonic regression (Props. 7.2/7.5), "
                         "equals the regularised LP over the permutahedron (SLSQP, 2^n subset constraints, n ≤ 6)")
def test_prop72_reduction(claim):
    _, verdict = run_check("topk.prop72", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- regimes (p = 2)


@pytest.mark.claim("topk/sec-7.5/hard", kind="identity",
                   title="p=2 relaxed mask equals the hard top-k mask exactly iff λ ≤ x_[k] − x_[k+1] "
                         "(equal at the threshold, different 0.1% beyond)")
def test_hard_regime(claim):
    result, verdict = run_check("topk.sec75_hard", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/sec-7.7/affine", kind="identity",
                   title="p=2 relaxed mask equals k/n + (x − x̄)/λ exactly iff "
                         "λ ≥ max{(x̄ − min x) n/k, (max x − x̄) n/(n−k)} (equal at the threshold, different 0.1% below)")
def test_affine_regime(claim):
    result, verdict = run_check("topk.sec77_affine", claim)
    claim.record(verdict, measured=result.extras)


# --------------------------------------------------------------------------- Figure 7.1


@pytest.mark.claim("topk/fig-7.1", kind="identity",
                   title="Fig. 7.1, p=2: the relaxed mask y_2 + y_3 along θ(s) = (3, 1, s−1, s) is piecewise linear "
                         "with finitely many kinks and exactly 0 / 1 on intervals")
def test_fig71(claim):
    result, verdict = run_check("topk.fig71", claim)
    ax = new_axes()
    ax.plot(result.s, result.hard, label="hard (λ = 0): jumps", color="0.5", ls="--")
    ax.plot(result.s, result.curve, label=f"p = 2, λ = {result.reg}: kinks")
    ax.plot(result.s, result.curve_smooth, label=f"p = 4/3, λ = {result.reg}: C¹")
    ax.set_xlabel("s")
    ax.set_ylabel(r"topkmask$_R(\theta(s))_2$ + topkmask$_R(\theta(s))_3$")
    ax.set_title(r"Fig. 7.1: $\theta(s) = (3, 1, s-1, s)$, k = 2")
    ax.legend()
    figure = save_figure(ax.figure, "topk/fig-7.1")
    claim.record(verdict, figure=figure)


@pytest.mark.claim("topk/fig-7.1/smooth", kind="rate",
                   title="Fig. 7.1, p = 4/3: the relaxed mask along θ(s) is C¹ (the jump of its difference quotient "
                         "vanishes like the grid step h) and still exactly 0 / 1 on intervals; p = 2 keeps jumps 1/(2λ)")
def test_fig71_smooth(claim):
    result, verdict = run_check("topk.fig71_smooth", claim)
    steps = result.steps
    ax = plot_rate(result.fit, expected_slope=1.0, label="p = 4/3", xlabel="grid step h",
                   ylabel="max |jump of the difference quotient|", title="Fig. 7.1: smoothness, p = 4/3 vs p = 2")
    ax.plot(steps, result.jumps_p2, "s-", color="C3", label=f"p = 2: kink, 1/(2λ) = {1 / (2 * result.reg):.3f}")
    ax.xaxis.set_minor_formatter("")  # the log axis' minor labels overlap at this width
    ax.set_xticks(steps, [f"{h:g}" for h in steps])
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(0.0, 0.92))
    figure = save_figure(ax.figure, "topk/fig-7.1/smooth")
    claim.record(verdict, figure=figure)
