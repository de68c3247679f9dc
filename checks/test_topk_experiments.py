"""Checks of M. E. Sander's thesis, chapter 7 (paper key ``topk``), composed from theory.experiments.topk:
the isotonic reductions (Props. 7.5, 7.6) against a generic solver of Prop. 7.2's primal problem, Figs. 7.3
and 7.8 measured, and the k-support negentropy of App. 7.B.1 with its contours (Fig. 7.9). Each test runs its
claim's registered experiment at its "check" preset, records the verdict the registry gives for the claim
(``theory run CLAIM-ID`` reruns it) and draws its figure.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.experiments import experiment
from theory.plots import new_axes, save_figure


def run_check(name, claim):
    """(result, verdict): experiment ``name`` at its "check" preset and the verdict it gives for ``claim``."""
    exp = experiment(name)
    result = exp.run("check")
    return result, exp.verdict_for(claim.id)(result)


@pytest.mark.claim("topk/prop-7.5", kind="identity",
                   title="Prop. 7.5 (φ(x) = x, R separable): u* = v*_{σ⁻¹} with v* the isotonic solution over the monotone "
                         "cone minimises Prop. 7.2's primal R*(x − u) + f(u, w) (SLSQP over the n! vertices; w sorted, p ∈ {2, 4/3, 1.5})")
def test_prop75(claim):
    result, verdict = run_check("topk.prop75", claim)
    claim.record(verdict, measured=result)


@pytest.mark.claim("topk/prop-7.6", kind="identity",
                   title="Prop. 7.6 (φ even, increasing on ℝ₊: x²/2 and |x|): u* = sign(x)∘v*_{σ⁻¹}, v* over the non-negative "
                         "monotone cone (truncated at 0), minimises Prop. 7.2's primal (SLSQP; w ≥ 0 sorted, p ∈ {2, 4/3, 1.5})")
def test_prop76(claim):
    result, verdict = run_check("topk.prop76", claim)
    claim.record(verdict, measured=result)


def _fig73_figure(result, config):
    import matplotlib.pyplot as plt

    ax0 = new_axes(figsize=(11.0, 3.9))
    fig = ax0.figure
    ax0.remove()
    axes = fig.subplots(1, 3, sharey=True)
    ext = config.extent
    names = {"hard": "R = 0 (hard)", result.labels[1]: f"p = 2, λ = {config.reg:g}",
             result.labels[2]: f"p = 4/3, λ = {config.reg:g}"}
    vmin = min(float(s.min()) for s in result.surfaces.values())
    vmax = max(float(s.max()) for s in result.surfaces.values())
    for ax, label in zip(axes, result.labels):
        im = ax.imshow(result.surfaces[label], origin="lower", extent=(-ext, ext, -ext, ext), cmap="RdBu_r",
                       vmin=-max(abs(vmin), vmax), vmax=max(abs(vmin), vmax))
        if label != "hard":
            g = result.halfwidth[label][1]
            ax.plot([-g, g, g, -g, -g], [-g, -g, g, g, -g], "k--", lw=1.0, label="predicted exact-zero square")
            ax.legend(loc="lower left", fontsize=7, frameon=True)
        ax.axhline(config.cut_x2, color="0.3", lw=0.6, ls=":")
        ax.set_title(names[label], fontsize=10)
        ax.set_xlabel("$x_1$")
    axes[0].set_ylabel("$x_2$")
    fig.colorbar(im, ax=list(axes), shrink=0.85, label="$y_1 + y_2$")
    fig.suptitle("topk/fig-7.3: top-2 in magnitude of $(x_1, x_2, 1/2, 1)$ (dotted: the cut of the rate measurements)",
                 fontsize=10)
    del plt
    return save_figure(fig, "topk/fig-7.3")


@pytest.mark.claim("topk/fig-7.3", kind="identity",
                   title="Fig. 7.3 (φ = x²/2, k = 2, x = (x₁, x₂, ½, 1), λ = 0.3): R = 0 jumps, p = 2 is Lipschitz with kinks, "
                         "p = 4/3 is C¹; both relaxed maps are exactly 0 on the square max|x_i| ≤ g(½), g + λg^{p−1} = ½")
def test_fig73(claim):
    result, verdict = run_check("topk.fig73", claim)
    figure = _fig73_figure(result, experiment("topk.fig73").config_for("check"))
    claim.record(verdict, figure=figure, measured=result)


def _fig78_figure(result):
    ax = new_axes(figsize=(10.0, 4.0))
    fig = ax.figure
    ax.remove()
    left, right = fig.subplots(1, 2)
    for i, (key, curve) in enumerate(result.curves.items()):
        left.plot(result.s, curve, color=f"C{i}", label=f"p = {key}")
        h, inc = result.increments[key]
        right.loglog(h, inc, "o", color=f"C{i}", ms=4)
        a = result.slopes[key][1]
        right.loglog(h, inc[-1] * (h / h[-1]) ** a, "-", color=f"C{i}", lw=0.8,
                     label=f"p = {key}: slope {result.slopes[key][0]:.3f} (predicted {a:.3f})")
    reg = result.reg
    for s0 in (1 - reg, 1 + reg, 4 - reg, 4 + reg):
        left.axvline(s0, color="0.6", lw=0.5, ls=":")
    left.set_xlabel("s")
    left.set_ylabel(r"$y_2 + y_3$ of topkmask$(\theta(s))$")
    left.set_title(f"θ(s) = (3, 1, s−1, s), k = 2, λ = {reg:g} (dotted: 1 ± λ, 4 ± λ)", fontsize=9)
    left.legend(fontsize=7)
    right.set_xlabel("h")
    right.set_ylabel(r"$1 - c(1 - \lambda + h)$")
    right.set_title("leaving 1 at s = 1 − λ: points measured, lines at the predicted slope", fontsize=9)
    right.legend(fontsize=6)
    fig.suptitle("topk/fig-7.8: the relaxed top-k mask for several p", fontsize=10)
    return save_figure(fig, "topk/fig-7.8")


@pytest.mark.claim("topk/fig-7.8", kind="identity",
                   title="Fig. 7.8 (Fig. 7.1's family, p ∈ {1.25, 4/3, 1.5, 2, 3, 4}): for every p the mask is exactly 1 on "
                         "s ≤ 1 − λ and exactly 0 on [1 + λ, 4 − λ]; it leaves 1 like h^{1/(p−1)} for p < 2 (C¹) and linearly "
                         "for p ≥ 2 (a kink)")
def test_fig78(claim):
    result, verdict = run_check("topk.fig78", claim)
    figure = _fig78_figure(result)
    claim.record(verdict, figure=figure, measured=result)


@pytest.mark.claim("topk/app-7.B.1", kind="identity",
                   title="App. 7.B.1: the k-support negentropy min_{z ∈ P(1_k)} Σ y_i log(y_i/z_i) in closed form "
                         "(theory.topk.ksupport_negentropy) equals SLSQP on that program and on the conjugate of Σ_top-k e^{x−1}")
def test_app7b1(claim):
    result, verdict = run_check("topk.app7b1", claim)
    claim.record(verdict, measured=result)


def _ternary(pts):
    return pts[:, 1] + 0.5 * pts[:, 2], (math.sqrt(3.0) / 2.0) * pts[:, 2]


def _fig79_figure(result):
    import matplotlib.tri as mtri

    ax = new_axes(figsize=(9.0, 4.0))
    fig = ax.figure
    ax.remove()
    axes = fig.subplots(1, 2)
    X, Y = _ternary(result.points)
    tri = mtri.Triangulation(X, Y)
    for ax, vals, title in ((axes[0], result.values, f"k-support negentropy, k = {result.k}"),
                            (axes[1], result.negentropy, "negentropy Σ y log y (k = 3)")):
        lo = float(vals.min())
        # the lowest band is the exact minimum (to 1e-9), so a flat minimum shows as one region
        levels = np.concatenate(([lo - 1e-12, lo + 1e-9], np.linspace(lo + 0.04, float(vals.max()) + 1e-12, 13)))
        cs = ax.tricontourf(tri, vals, levels=levels, cmap="viridis_r")
        ax.tricontour(tri, vals, levels=levels[1:], colors="k", linewidths=0.3)
        ax.plot([0, 1, 0.5, 0], [0, 0, math.sqrt(3) / 2, 0], "k-", lw=0.8)
        fig.colorbar(cs, ax=ax, shrink=0.8, format="%.2f")
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title, fontsize=9)
    h = math.sqrt(3) / 2
    mids = np.array([[0.5, 0.0], [0.75, h / 2], [0.25, h / 2], [0.5, 0.0]])  # the capped simplex {max y <= 1/2}
    axes[0].plot(mids[:, 0], mids[:, 1], "r--", lw=1.0, label="{max y ≤ 1/2}: predicted flat minimum −log 2")
    axes[0].legend(loc="lower center", bbox_to_anchor=(0.5, -0.18), fontsize=7, frameon=False)
    fig.suptitle("topk/fig-7.9: contours on the simplex of ℝ³ (lighter = lower)", fontsize=10)
    return save_figure(fig, "topk/fig-7.9")


@pytest.mark.claim("topk/fig-7.9", kind="identity",
                   title="Fig. 7.9 (n = 3, k = 2): the k-support negentropy on the simplex is minimal (−log 2) exactly on the "
                         "capped simplex {max y ≤ 1/2} (a flat region, unlike the negentropy's single minimiser) and depends "
                         "on max y alone outside it")
def test_fig79(claim):
    result, verdict = run_check("topk.fig79", claim)
    figure = _fig79_figure(result)
    claim.record(verdict, figure=figure, measured=result)
