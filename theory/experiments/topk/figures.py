r"""The figures of ``topk`` (M. E. Sander's thesis, chapter 7), declared for ``theory reproduce``
(:func:`theory.experiments.register_figure`), with their drawings in the document's layout.

* Fig. 7.1: the relaxed top-2 mask :math:`y_2 + y_3` along :math:`\theta(s) = (3, 1, s-1, s)`: hard, p = 2,
  p = 4/3 (one panel); its smoothness at p = 4/3 as a second declaration (``fig-7.1/smooth``).
* Fig. 7.2: the permutohedra of :math:`\mathbb R^3` for w = (1,0,0), (1/2,1/2,0), (2/3,1/3,0) in the plane
  of the simplex, with the landing points of far-away projections (their vertices).
* Fig. 7.3: :math:`y_1 + y_2` of the top-2 in magnitude of :math:`(x_1, x_2, \frac12, 1)` as surfaces, R = 0,
  p = 2, p = 4/3 (three panels).
* Fig. 7.4: runtime of the hard, PAV and Dykstra top-k against n (log-log), here on a CPU.
* Fig. 7.5: test error against training time of the pruned MLPs on MNIST (and on digits, a proxy).
* Fig. 7.6: validation top-k accuracy against k for the cross-entropy and the smooth top-3 losses on CIFAR-100
  (and on digits, a proxy).
* Fig. 7.7: precision-at-1 along training of the hard and relaxed MoE routers on JFT-300M (not public), with a
  zoom on the last steps (and on a synthetic task, a proxy).
* Fig. 7.8: Fig. 7.1's curve for more values of p (one panel).
* Fig. 7.9: contours of the k-support negentropy on the simplex, n = 3, k = 2.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import Printed, register_figure
from .operators import FIG71_REG

__all__ = ["fig71_figure", "fig71_smooth_figure", "fig72_figure", "fig73_figure", "fig74_figure", "fig75_figure",
           "fig76_figure", "fig77_figure", "fig78_figure", "fig79_figure"]

_KEY = "topk"


def _subplots(n, size, **kw):
    from ...plots import subplots

    _, fig, axes = subplots(n, figsize=size, **kw)
    return fig, np.atleast_1d(axes)


def _save(fig, claim_id):
    from ...plots import save_figure

    return save_figure(fig, claim_id)


def _ternary(pts):
    pts = np.asarray(pts, dtype=float)
    return pts[..., 1] + 0.5 * pts[..., 2], (math.sqrt(3.0) / 2.0) * pts[..., 2]


# ------------------------------------------------------------------------------------------ drawings


def fig71_figure(result, claim_id="topk/fig-7.1"):
    """Fig. 7.1: :math:`y_2 + y_3` of the top-2 mask along θ(s): hard (no regularisation), p = 2, p = 4/3."""
    fig, (ax,) = _subplots(1, (5.6, 3.8))
    ax.plot(result.s, result.hard, color="0.4", ls="--", label="hard (no regularization)")
    ax.plot(result.s, result.curve, color="C3", label="p = 2 (differentiable a.e.)")
    ax.plot(result.s, result.curve_smooth, color="C2", label="p = 4/3 (differentiable)")
    ax.set_xlabel("s")
    ax.set_ylabel(r"topkmask$(\theta(s))_2$ + topkmask$(\theta(s))_3$")
    ax.set_title(rf"{claim_id}: $\theta(s) = (3, 1, s-1, s)$, k = 2, λ = {result.reg:g}", fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, claim_id)


def fig71_smooth_figure(result, claim_id="topk/fig-7.1/smooth"):
    """Fig. 7.1's smoothness: the jump of the difference quotient against the grid step, p = 4/3 and p = 2."""
    fig, (ax,) = _subplots(1, (5.6, 3.8))
    ax.loglog(result.steps, result.jumps_smooth, "o-", color="C2", label=f"p = 4/3: slope {result.fit.slope:.2f} (C¹)")
    ax.loglog(result.steps, result.jumps_p2, "s-", color="C3", label=f"p = 2: kink 1/(2λ) = {1 / (2 * result.reg):.3g}")
    ax.set_xlabel("grid step h")
    ax.set_ylabel("max |jump of the difference quotient|")
    ax.set_title(f"{claim_id}: the curves of Fig. 7.1 at p = 4/3 and p = 2", fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, claim_id)


_FIG72_STYLE = {"simplex": ("#f2e3c6", "w = (1, 0, 0): simplex (top-1)"),
                "capped simplex": ("#9ec3e6", "w = (1/2, 1/2, 0): capped simplex (top-2)"),
                "hexagon": ("#b3b3b3", "w = (2/3, 1/3, 0): hexagon (partial ranking)")}


def fig72_figure(result, claim_id="topk/fig-7.2"):
    """Fig. 7.2: the three permutohedra in the plane of the simplex (filled, simplex below), their vertices (the
    permutations of w) and the landing points of the far-away projections (crosses)."""
    from matplotlib.patches import Polygon

    fig, (ax,) = _subplots(1, (5.6, 5.0))
    for name in ("simplex", "hexagon", "capped simplex"):  # nested: the capped simplex lies inside the hexagon
        verts = result.vertices[name]
        x, y = _ternary(verts)
        order = np.argsort(np.arctan2(y - y.mean(), x - x.mean()))
        colour, label = _FIG72_STYLE[name]
        ax.add_patch(Polygon(np.c_[x[order], y[order]], closed=True, facecolor=colour, edgecolor="k", lw=0.8,
                             label=label, alpha=0.9))
        lx, ly = _ternary(result.landing[name])
        ax.plot(lx, ly, "x", color="k", ms=6, mew=1.2)
    ax.plot([], [], "x", color="k", label="projections of far-away points")
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-0.08, 0.95)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.legend(loc="upper right", fontsize=7, frameon=False)
    ax.set_title(f"{claim_id}: permutohedra P(w) in the plane y₁ + y₂ + y₃ = 1", fontsize=9)
    return _save(fig, claim_id)


def fig73_figure(result, claim_id="topk/fig-7.3"):
    """Fig. 7.3: :math:`y_1 + y_2` of the top-2 in magnitude of :math:`(x_1, x_2, 1/2, 1)` as surfaces over
    :math:`(x_1, x_2)`: R = 0 (left), p = 2 (center), p = 4/3 (right)."""
    from ...plots import subplots

    mpl, fig, _ = subplots(1, figsize=(12.0, 4.2))
    fig.clf()
    xx, yy = np.meshgrid(result.axis, result.axis)
    names = {"hard": "R = 0", result.labels[1]: "R = (λ/2)‖x‖₂²", result.labels[2]: "R = (λ/p)‖x‖ₚᵖ, p = 4/3"}
    for i, label in enumerate(result.labels):
        ax = fig.add_subplot(1, 3, i + 1, projection="3d")
        ax.plot_surface(xx, yy, result.surfaces[label], cmap="viridis", linewidth=0, antialiased=True,
                        rstride=2, cstride=2)
        ax.set_xlabel("$x_1$")
        ax.set_ylabel("$x_2$")
        ax.set_zlabel("$y_1 + y_2$")
        ax.set_title(names[label], fontsize=9)
        ax.view_init(elev=30, azim=-60)
    fig.suptitle(f"{claim_id}: top-2 in magnitude, φ(x) = x²/2, λ = 0.3", fontsize=10)
    return _save(fig, claim_id)


def fig74_figure(result, claim_id="topk/fig-7.4"):
    """Fig. 7.4: runtime against n (log-log), PAV, Dykstra (100 iterations) and the hard top-k, k = ceil(n/10)."""
    fig, (ax,) = _subplots(1, (5.6, 4.0))
    for key, label, colour in (("pav", "PAV", "C0"), ("dykstra", "Dykstra", "C1"), ("hard", "hard top-k", "0.4")):
        ax.loglog(result.n, result.times[key], "o-", color=colour,
                  label=f"{label} (slope {result.slopes[key]:.2f})")
    if "sort" in result.times:
        ax.loglog(result.n, result.times["sort"], "s:", color="0.7",
                  label=f"np.argsort baseline (slope {result.slopes['sort']:.2f})")
    ax.set_xlabel("dimension n")
    ax.set_ylabel("runtime per call (s), CPU")
    title = f"{claim_id}: relaxed top-k (p = 2), k = ⌈n/10⌉"
    if "pav_over_sort" in result.slopes:
        title += (f"\nslopes of time/argsort: PAV {result.slopes['pav_over_sort']:.2f}, "
                  f"Dykstra {result.slopes['dykstra_over_sort']:.2f}")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, claim_id)


_FIG75_STYLE = {"baseline": ("0.55", "baseline (no pruning)"), "p=2": ("C3", "differentiable a.e. (p = 2)"),
                "p=4/3": ("C2", "fully differentiable (p = 4/3)"), "hard": ("C0", "hard top-k")}


def fig75_figure(result, claim_id="topk/fig-7.5"):
    """Fig. 7.5: test error against training time; baseline grey, p = 2 red, p = 4/3 green, hard top-k blue."""
    fig, (ax,) = _subplots(1, (5.6, 4.0))
    for m in ("baseline", "p=2", "p=4/3", "hard"):
        if m in result.test_error:
            colour, label = _FIG75_STYLE[m]
            ax.plot(result.train_time[m], result.test_error[m], color=colour, label=label)
    ax.set_xlabel("training time (s)")
    ax.set_ylabel("test error")
    ax.set_title(f"{claim_id}: MLP on {result.dataset}, 90% of the weights pruned", fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, claim_id)


def fig76_figure(result, claim_id="topk/fig-7.6"):
    """Fig. 7.6: validation top-k accuracy against k for the cross-entropy and the smooth top-3 losses."""
    fig, (ax,) = _subplots(1, (5.6, 4.0))
    style = {"ce": ("C0", "cross-entropy"), "p=2": ("C3", "smooth top-3, p = 2"),
             "p=4/3": ("C2", "smooth top-3, p = 4/3")}
    for loss, acc in result.accuracy.items():
        colour, label = style[loss]
        ax.plot(result.ks, acc, "o-", color=colour, label=label)
    ax.set_xticks(list(result.ks))
    ax.set_xlabel("k")
    ax.set_ylabel("validation top-k accuracy")
    what = "a ViT fine-tuned on CIFAR-100" if result.dataset == "cifar-100" else f"an MLP trained on {result.dataset}"
    steps = len(next(iter(result.curves.values())))
    ax.set_title(f"{claim_id}: {what}, {steps} steps", fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, claim_id)


def fig77_figure(result, claim_id="topk/fig-7.7"):
    """Fig. 7.7: precision-at-1 along training, hard router blue, relaxed router red, with a zoom on the last steps."""
    fig, (ax,) = _subplots(1, (5.6, 4.0))
    style = {"hard": ("C0", "hard top-k (baseline)"), "p=2": ("C3", "differentiable a.e. top-k (p = 2)")}
    for r, prec in result.precision.items():
        ax.plot(result.steps, prec, color=style[r][0], label=style[r][1])
    last = max(2, len(result.steps) // 4)
    inset = ax.inset_axes([0.55, 0.12, 0.4, 0.35])
    for r, prec in result.precision.items():
        inset.plot(result.steps[-last:], prec[-last:], color=style[r][0])
    inset.set_title("last steps", fontsize=7)
    inset.tick_params(labelsize=6)
    ax.set_xlabel("training step")
    ax.set_ylabel("precision-at-1")
    ax.set_title(f"{claim_id}: sparse MoE, expert choice routing ({result.dataset})", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    return _save(fig, claim_id)


def fig78_figure(result, claim_id="topk/fig-7.8"):
    """Fig. 7.8: Fig. 7.1's curve :math:`y_2 + y_3` along θ(s) for several p (one panel)."""
    fig, (ax,) = _subplots(1, (5.6, 3.8))
    for i, (key, curve) in enumerate(result.curves.items()):
        ax.plot(result.s, curve, color=f"C{i}", label=f"p = {key}")
    ax.set_xlabel("s")
    ax.set_ylabel(r"topkmask$(\theta(s))_2$ + topkmask$(\theta(s))_3$")
    ax.set_title(rf"{claim_id}: $\theta(s) = (3, 1, s-1, s)$, k = 2, λ = {result.reg:g}", fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, claim_id)


def fig79_figure(result, claim_id="topk/fig-7.9"):
    """Fig. 7.9: filled contours of the k-support negentropy on the simplex of R^3, k = 2 (lighter: lower)."""
    import matplotlib.tri as mtri

    fig, (ax,) = _subplots(1, (5.0, 4.4))
    x, y = _ternary(result.points)
    tri = mtri.Triangulation(x, y)
    vals = result.values
    lo = float(vals.min())
    levels = np.concatenate(([lo - 1e-12, lo + 1e-9], np.linspace(lo + 0.04, float(vals.max()) + 1e-12, 13)))
    cs = ax.tricontourf(tri, vals, levels=levels, cmap="viridis_r")
    ax.plot([0, 1, 0.5, 0], [0, 0, math.sqrt(3) / 2, 0], "k-", lw=0.8)
    fig.colorbar(cs, ax=ax, shrink=0.8, format="%.2f")
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"{claim_id}: k-support negentropy, n = 3, k = {result.k}", fontsize=9)
    return _save(fig, claim_id)


# ------------------------------------------------------------------------------------------ declarations

_TPU = "the document times JAX on a TPU; here the package's CPU kernels"

register_figure(
    _KEY, "fig-7.1", "The relaxed top-2 mask along θ(s) = (3, 1, s−1, s): hard, p = 2, p = 4/3",
    claims=("topk/fig-7.1",), experiment="topk.fig71", draw=fig71_figure,
    criterion="p = 2 curve piecewise linear with exactly 4 kinks (at s = 1 ± λ, 4 ± λ; second differences ≤ 1e-9 "
              "elsewhere, at most 2 grid cells per kink), values in [0, 1], exactly 0 at one grid point at least",
    printed=(Printed("k", 2, "caption of Fig. 7.1", note="the experiment is the top-2 mask"),
             Printed("p of the differentiable operator", 4 / 3, "caption of Fig. 7.1"),
             Printed("λ", None, "Fig. 7.1", note=f"not printed; the experiment uses λ = {FIG71_REG:g}", measured="config.reg")),
)
register_figure(
    _KEY, "fig-7.1/smooth", "Fig. 7.1 at p = 4/3: the relaxed mask is C¹ (p = 2 keeps kinks)",
    claims=("topk/fig-7.1/smooth",), experiment="topk.fig71_smooth", draw=fig71_smooth_figure,
    criterion="the jump of the p = 4/3 difference quotient vanishes like h (log-log slope 1 ± 0.15); the p = 2 "
              "curve keeps jumps 1/(2λ); exact 0/1 intervals and the threshold oracle to 1e-12",
    printed=(Printed("p of the differentiable operator", 4 / 3, "caption of Fig. 7.1"),),
)
register_figure(
    _KEY, "fig-7.2", "The permutohedra P(w) of R³: simplex, capped simplex, hexagon; vertices = permutations of w",
    claims=("topk/fig-7.2",), experiment="topk.fig72", draw=fig72_figure,
    criterion="for w = (1,0,0), (1/2,1/2,0), (2/3,1/3,0): projections of far-away points t·d land on w_rank(d) "
              "within 1e-12 and on exactly 3, 3, 6 distinct points (the distinct permutations of w); points of "
              "P(w) are their own projection within 1e-12; the support function equals Σ w_i x_[i] within 1e-12",
    printed=(Printed("vertices of the simplex, w = (1, 0, 0)", 3, "caption of Fig. 7.2 (a triangle)",
                     measured="n_landing_simplex"),
             Printed("vertices of the capped simplex, w = (1/2, 1/2, 0)", 3, "caption of Fig. 7.2 (a triangle)",
                     measured="n_landing_capped_simplex"),
             Printed("vertices of the hexagon, w = (2/3, 1/3, 0)", 6, "caption of Fig. 7.2 (a hexagon)",
                     measured="n_landing_hexagon")),
)
register_figure(
    _KEY, "fig-7.3", "y₁ + y₂ of the top-2 in magnitude of (x₁, x₂, 1/2, 1): R = 0, p = 2, p = 4/3",
    claims=("topk/fig-7.3",), experiment="topk.fig73", draw=fig73_figure,
    criterion="R = 0 jumps; p = 2 Lipschitz with kinks; p = 4/3 C¹ (modulus and difference-quotient slopes); both "
              "relaxed maps exactly 0 on the square max|x_i| ≤ g(1/2), g + λg^{p−1} = 1/2 (no grid point "
              "disagrees; slopes within 0.15, half-widths to 1e-9 relative)",
    printed=(Printed("λ", 0.3, "caption of Fig. 7.3", measured="config.reg"), Printed("k", 2, "caption of Fig. 7.3", note="the experiment is the top-2 mask"),
             Printed("p of the right panel", 4 / 3, "caption of Fig. 7.3")),
)
register_figure(
    _KEY, "fig-7.4", "Runtime of the relaxed top-k (p = 2) by PAV and Dykstra, and of the hard top-k, against n",
    claims=("topk/fig-7.4",), experiment="topk.fig74", draw=fig74_figure,
    criterion="on a CPU, n ≥ 1e4, k = ceil(n/10), x ~ N(0, I), λ = 1: the PAV time and the 100-iteration Dykstra "
              "time, each divided by the time of np.argsort of the same x (O(n log n), timed in the same run, round "
              "robin, minimum of the repeats), have log-log slopes in (-0.5, 0.5) against n (O(n log n) and "
              "O(n) per iteration, §7.5; a quadratic PAV gives ~1); Dykstra/PAV time ratio ≥ 1 and PAV/hard ratio "
              "≥ 1 at every n (the document's TPU order, Dykstra faster, is not expected on a CPU)",
    printed=(Printed("Dykstra iterations", 100, "Section 7.5, text", measured="config.iterations"),
             Printed("Dykstra faster than PAV", None, "Section 7.5 and Fig. 7.4",
                     measured="min_ratio_dykstra_over_pav",
                     note="curve only, on a TPU; measured here: the CPU ratio Dykstra/PAV (> 1: PAV faster)"),
             Printed("same output as PAV after 100 Dykstra iterations", None, "Section 7.5, text",
                     measured="max_dykstra_pav_diff", note="λ and inputs not printed; measured at λ = 1, x ~ N(0, I)")),
    substitute="the package's CPU kernels (numba PAV, numba Dykstra) for the document's JAX on a TPU",
    preset_note="the document does not print its grid of n; the paper preset spans 10 to 1e6 by half decades "
                f"({_TPU})",
)
_FIG75_CRIT = ("mean test error over the epochs (area under the curve) of each relaxed run (p = 2, p = 4/3) below "
               "that of the hard top-k run, and at most 10.5% non-zero entries in every relaxed-pruned weight matrix")
_FIG75_PRINTED = (Printed("fraction of the weights kept", 0.1, "Section 7.6, text", measured="nonzero_relaxed"),
                  Printed("λ", 1e-4, "Section 7.6, text", measured="config.reg"),
                  Printed("test error of the entropic straight-through top-k", 0.059, "Section 7.6, text",
                          note="the entropy-regularised operator of Cuturi et al. is not implemented here"),
                  Printed("relaxed operators train faster than the hard one", None, "Section 7.6 and Fig. 7.5",
                          measured="mean_error_gain.p=2", note="curves only; measured: hard minus p = 2 mean error"))
register_figure(
    _KEY, "fig-7.5", "Test error against training time of an MLP on MNIST with 90% of its weights pruned",
    claims=("topk/fig-7.5",), experiment="topk.fig75", draw=fig75_figure, criterion=_FIG75_CRIT,
    printed=_FIG75_PRINTED, data="mnist",
    preset_note="check preset: 6000 training and 2000 test images, 3 epochs; paper preset: the document's "
                "sizes (60000 images, 30 epochs, SGD 1e-2, batch 128)",
)
register_figure(
    _KEY, "fig-7.5/digits", "Fig. 7.5 on scikit-learn's digits: MLP 64-32-32-10 with 90% of its weights pruned",
    claims=("topk/fig-7.5/digits",), experiment="topk.fig75_digits",
    draw=functools.partial(fig75_figure, claim_id="topk/fig-7.5/digits"), criterion=_FIG75_CRIT,
    printed=_FIG75_PRINTED, substitute="scikit-learn's 8 x 8 digits (1347 training, 450 test images) for MNIST",
    preset_note="check preset: 660 SGD steps at a learning rate of 0.1; paper preset: the document's 14070 steps "
                "at 1e-2",
)
_FIG76_CRIT = ("validation top-3 and top-5 accuracies of the smooth top-3 loss, p = 2 and p = 4/3, each at least "
               "those of the cross-entropy")
_FIG76_PRINTED = (Printed("k of the smooth top-k loss", 3, "Section 7.6, text", measured="config.k"),
                  Printed("training steps", 100, "Section 7.6, text", measured="config.steps"),
                  Printed("seconds per step, cross-entropy (TPUv3-8)", 9.5, "caption of Fig. 7.6",
                          note="hardware-specific; not measured"),
                  Printed("seconds per step, p = 2 (TPUv3-8)", 9.7, "caption of Fig. 7.6",
                          note="hardware-specific; not measured"),
                  Printed("seconds per step, p = 4/3 (TPUv3-8)", 10.0, "caption of Fig. 7.6",
                          note="hardware-specific; not measured"),
                  Printed("smooth top-3 beats cross-entropy in top-k accuracy", None, "Section 7.6 and Fig. 7.6",
                          measured="gain_top3.p=2", note="curves only; measured: top-3 accuracy gain of p = 2"))
register_figure(
    _KEY, "fig-7.6", "Validation top-k accuracy of a ViT-B/16 fine-tuned on CIFAR-100: cross-entropy vs smooth top-3",
    claims=("topk/fig-7.6",), experiment="topk.fig76", draw=fig76_figure, criterion=_FIG76_CRIT,
    printed=_FIG76_PRINTED, data="cifar-100",
    preset_note="the ImageNet-21k pre-trained ViT-B/16 is not shipped: pass its weights, converted to a state dict "
                "of theory.experiments.topk.smooth_loss.VisionTransformer, as `weights` (None: random "
                "initialisation). Check preset: a ViT of width 64, depth 2, patch 8 on 32 x 32 images, 5000 "
                "training images, batch 128; paper preset: ViT-B/16 at 224, batch 512, 100 steps",
)
register_figure(
    _KEY, "fig-7.6/digits", "Fig. 7.6 on scikit-learn's digits: MLP from scratch, cross-entropy vs smooth top-3",
    claims=("topk/fig-7.6/digits",), experiment="topk.fig76_digits",
    draw=functools.partial(fig76_figure, claim_id="topk/fig-7.6/digits"), criterion=_FIG76_CRIT,
    printed=_FIG76_PRINTED,
    substitute="scikit-learn's digits and an MLP 64-32-10 trained from scratch for CIFAR-100 and a pre-trained "
               "ViT-B/16",
)
_FIG77_CRIT = ("over the last quarter of the evaluations, the relaxed (p = 2) router's validation precision-at-1 is "
               "above the hard router's on average")
_FIG77_PRINTED = (Printed("experts", 32, "Section 7.6, text", measured="config.experts"), Printed("tokens per expert k", 28, "Section 7.6, text", measured="config.k"),
                  Printed("tokens n", 400, "Section 7.6, text", measured="config.tokens"),
                  Printed("Dykstra iterations of the router", 10, "Appendix 7.C.3"),
                  Printed("runtime of the baseline (hours, TPUv2-128)", 10, "caption of Fig. 7.7",
                          note="hardware-specific; not measured"),
                  Printed("runtime of the relaxed router (hours, TPUv2-128)", 15, "caption of Fig. 7.7",
                          note="hardware-specific; not measured"),
                  Printed("relaxed router better on the last steps", None, "caption of Fig. 7.7",
                          measured="last_quarter_gain", note="curves only"))
register_figure(
    _KEY, "fig-7.7", "Precision-at-1 on JFT-300M of a V-MoE S/32 with a hard or relaxed expert-choice router",
    claims=("topk/fig-7.7",), experiment="topk.fig77", draw=fig77_figure, criterion=_FIG77_CRIT,
    printed=_FIG77_PRINTED, data="jft-300m",
    preset_note="JFT-300M is not public and the V-MoE S/32 is not implemented: the experiment's model is the "
                "one-layer MoE of the synthetic stand-in at the document's 400 tokens, 32 experts, k = 28",
)
register_figure(
    _KEY, "fig-7.7/synthetic", "Fig. 7.7 on a synthetic teacher task: one expert-choice MoE layer, hard vs relaxed",
    claims=("topk/fig-7.7/synthetic",), experiment="topk.fig77_synthetic",
    draw=functools.partial(fig77_figure, claim_id="topk/fig-7.7/synthetic"),
    criterion=_FIG77_CRIT, printed=_FIG77_PRINTED,
    substitute="a synthetic teacher task (check: 20 tokens of dimension 8, 4 MLP experts, k = 11; paper: 50 tokens, "
               "8 experts, k = 14; 10 classes) and one MoE layer for JFT-300M and a V-MoE S/32; PAV for 10 Dykstra "
               "iterations",
)
register_figure(
    _KEY, "fig-7.8", "Fig. 7.1's relaxed top-2 mask for more values of p",
    claims=("topk/fig-7.8",), experiment="topk.fig78", draw=fig78_figure,
    criterion="for every p of {1.25, 4/3, 1.5, 2, 3, 4} the mask is exactly 1 on s ≤ 1 − λ and exactly 0 on "
              "[1 + λ, 4 − λ]; it leaves 1 like h^{1/(p−1)} for p < 2 and linearly for p ≥ 2 (slopes within 2% "
              "relative, kink slopes within 1e-3 relative)",
    printed=(Printed("k", 2, "caption of Fig. 7.1 (same setup)", note="the experiment is the top-2 mask"),),
)
register_figure(
    _KEY, "fig-7.9", "Contours of the k-support negentropy on the simplex, n = 3, k = 2",
    claims=("topk/fig-7.9",), experiment="topk.fig79", draw=fig79_figure,
    criterion="the k-support negentropy is minimal (−log 2, to 1e-14) exactly on the capped simplex {max y ≤ 1/2} "
              "(no grid point disagrees) and depends on max y alone outside it",
    printed=(Printed("n", 3, "caption of Fig. 7.9"), Printed("k", 2, "caption of Fig. 7.9", measured="config.k")),
)
