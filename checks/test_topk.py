"""Checks of "Fast, Differentiable and Sparse Top-k: a Convex Analysis Perspective" (paper key ``topk``).

Numbering of M. E. Sander's thesis, chapter 7 (Prop. 7.2, 7.8, Fig. 7.1, §7.5, §7.7); Fig. 7.1 also at
p = 4/3. The measurements are theory.experiments.topk's; each test composes them, records the claim and
draws its figure. The Hypothesis strategies that hunt instances stay here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

from theory.experiments import topk as ex
from theory.plots import new_axes, plot_rate, save_figure


@st.composite
def jacobian_instances(draw):
    n = draw(st.integers(3, 8))
    return {
        "n": n,
        "k": draw(st.integers(1, n - 1)),
        "reg": 10.0 ** draw(st.floats(-2.0, 2.0)),
        "scale": 10.0 ** draw(st.floats(-1.0, 2.0)),
        "mode": draw(st.sampled_from(["mask", "magnitude"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def _draw_x(inst):
    rng = np.random.default_rng(inst["seed"])
    return inst["scale"] * rng.standard_normal(inst["n"])


def hunt_jacobians(max_examples=60):
    """Hypothesis-drawn instances away from kinks: list of (inst, x, h, J, J_fd) (ex.jacobian_case)."""
    found = []

    @settings(max_examples=max_examples)
    @given(jacobian_instances())
    def hunt(inst):
        case = ex.jacobian_case(_draw_x(inst), inst["k"], inst["reg"], inst["mode"], inst)
        assume(case is not None)
        note(f"{inst}: reg*|J - J_fd| = {inst['reg'] * np.max(np.abs(case[3] - case[4])):.2e}")
        found.append(case)

    hunt()
    return found


# --------------------------------------------------------------------------- Proposition 7.8


@pytest.mark.claim("topk/prop-7.8", kind="identity",
                   title="Jacobian of the p=2 top-k mask/magnitude by block averaging (weights 1 + λw_j in the "
                         "magnitude case) equals central finite differences")
def test_prop78_jacobian(claim):
    out = ex.prop78_outcome(hunt_jacobians())
    claim.record(ex.prop78_verdict(out), measured=out.extras)


@pytest.mark.claim("topk/prop-7.8/symmetric-psd", kind="identity",
                   title="The p=2 operator Jacobian (a Hessian of the convex f_{φ,R}) is symmetric positive semi-definite")
def test_prop78_symmetric_psd(claim):
    out = ex.prop78_psd_outcome(hunt_jacobians(max_examples=40))
    claim.record(ex.prop78_psd_verdict(out), measured=out.extras)


@pytest.mark.claim("topk/prop-7.8/erratum", kind="erratum", wrong_in="statement",
                   title="Prop. 7.8 magnitude case: block weight 1/|B| (w dropped) and the printed denominator "
                         "parsed literally (Σ_j(q−1)|γ−s_j|^{q−2} + w, w outside the sum) both fail against "
                         "finite differences; corrected: Σ_j((q−1)|γ−s_j|^{q−2} + λ^{q−1}w_j), the weight inside the sum")
def test_prop78_erratum(claim):
    cases = [c for c in hunt_jacobians() if c[0]["mode"] == "magnitude"]
    out = ex.prop78_erratum_outcome(cases)
    claim.record(ex.erratum_outcome_verdict(out), measured=out)


# --------------------------------------------------------------------------- Proposition 7.2 (reduction)


@pytest.mark.claim("topk/prop-7.2", kind="identity",
                   title="Relaxed top-k mask y* = (x − u*)/λ, u* from isotonic regression (Props. 7.2/7.5), "
                         "equals the regularised LP over the permutahedron (SLSQP, 2^n subset constraints, n ≤ 6)")
def test_prop72_reduction(claim):
    comp, ref = [], []

    @settings(max_examples=30)
    @given(n=st.integers(3, 6), data=st.data(), reg=st.floats(-1.5, 1.5), seed=st.integers(0, 2**16),
           ties=st.booleans())
    def hunt(n, data, reg, seed, ties):
        k = data.draw(st.integers(1, n - 1))
        rng = np.random.default_rng(seed)
        x = rng.integers(-2, 3, n).astype(float) if ties else rng.standard_normal(n)
        reg = 10.0 ** reg
        y, y_ref = ex.prop72_instance(x, k, reg)
        note(f"n={n} k={k} reg={reg:.3g} x={x}: err {np.max(np.abs(y - y_ref)):.2e}")
        comp.append(y)
        ref.append(y_ref)

    hunt()
    claim.record(ex.prop72_verdict(ex.prop72_outcome(list(zip(comp, ref)))))


# --------------------------------------------------------------------------- regimes (p = 2)


@pytest.mark.claim("topk/sec-7.5/hard", kind="identity",
                   title="p=2 relaxed mask equals the hard top-k mask exactly iff λ ≤ x_[k] − x_[k+1] "
                         "(equal at the threshold, different 0.1% beyond)")
def test_hard_regime(claim):
    out = ex.regimes(ex.REGIME_PRESETS["hard"]["check"])
    claim.record(ex.regime_verdict(out), measured=out.extras)


@pytest.mark.claim("topk/sec-7.7/affine", kind="identity",
                   title="p=2 relaxed mask equals k/n + (x − x̄)/λ exactly iff "
                         "λ ≥ max{(x̄ − min x) n/k, (max x − x̄) n/(n−k)} (equal at the threshold, different 0.1% below)")
def test_affine_regime(claim):
    out = ex.regimes(ex.REGIME_PRESETS["affine"]["check"])
    claim.record(ex.regime_verdict(out), measured=out.extras)


# --------------------------------------------------------------------------- Figure 7.1


@pytest.mark.claim("topk/fig-7.1", kind="identity",
                   title="Fig. 7.1, p=2: the relaxed mask y_2 + y_3 along θ(s) = (3, 1, s−1, s) is piecewise linear "
                         "with finitely many kinks and exactly 0 / 1 on intervals")
def test_fig71(claim):
    result = ex.fig71(ex.FIG71_PRESETS["check"])
    ax = new_axes()
    ax.plot(result.s, result.hard, label="hard (λ = 0): jumps", color="0.5", ls="--")
    ax.plot(result.s, result.curve, label=f"p = 2, λ = {result.reg}: kinks")
    ax.plot(result.s, result.curve_smooth, label=f"p = 4/3, λ = {result.reg}: C¹")
    ax.set_xlabel("s")
    ax.set_ylabel(r"topkmask$_R(\theta(s))_2$ + topkmask$_R(\theta(s))_3$")
    ax.set_title(r"Fig. 7.1: $\theta(s) = (3, 1, s-1, s)$, k = 2")
    ax.legend()
    figure = save_figure(ax.figure, "topk/fig-7.1")
    claim.record(ex.fig71_verdict(result), figure=figure)


@pytest.mark.claim("topk/fig-7.1/smooth", kind="rate",
                   title="Fig. 7.1, p = 4/3: the relaxed mask along θ(s) is C¹ (the jump of its difference quotient "
                         "vanishes like the grid step h) and still exactly 0 / 1 on intervals; p = 2 keeps jumps 1/(2λ)")
def test_fig71_smooth(claim):
    result = ex.fig71_smooth(ex.FIG71_PRESETS["check"])
    steps = result.steps
    ax = plot_rate(result.fit, expected_slope=1.0, label="p = 4/3", xlabel="grid step h",
                   ylabel="max |jump of the difference quotient|", title="Fig. 7.1: smoothness, p = 4/3 vs p = 2")
    ax.plot(steps, result.jumps_p2, "s-", color="C3", label=f"p = 2: kink, 1/(2λ) = {1 / (2 * result.reg):.3f}")
    ax.xaxis.set_minor_formatter("")  # the log axis' minor labels overlap at this width
    ax.set_xticks(steps, [f"{h:g}" for h in steps])
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(0.0, 0.92))
    figure = save_figure(ax.figure, "topk/fig-7.1/smooth")
    claim.record(ex.fig71_smooth_verdict(result), figure=figure)
