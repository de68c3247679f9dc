"""Reduced CPU reproductions of the experiments of ``resnet-node`` (Figures 1, 3(c) and 4).

Figure 1: a 1-D ResNet trained on x -> -x/2 must have crossing trajectories (an ODE flow cannot
reverse orientation), one trained on x -> x/2 need not. Figure 4: on two moons, training with the
adjoint's approximate gradients fails at small depth and matches backprop at large depth, and
Heun needs fewer layers than Euler. Figure 3(c): the relative error of the adjoint gradients
falls with depth, faster for the HeunNet. The experiments, their presets and verdicts are in
:mod:`theory.experiments.resnet_node` (the training code in :mod:`theory.resnet.training`); a test
runs the registered experiment at its ``"check"`` preset (``experiment(name).run("check")``, what
``theory run CLAIM-ID`` reruns), records ``verdict_for(claim_id)`` of the result and draws the figure.
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments import resnet_node as rn
from theory.plots import STYLE, plot_rate, save_figure, subplots


# --------------------------------------------------------------------------- Figure 1


def _fig1_figure(result):
    mpl, fig, axes = subplots(2, (9.0, 3.6))
    N = result.N
    layers = np.arange(N + 1)
    colors = mpl.colormaps["coolwarm"](np.linspace(0.0, 1.0, result.x0.size))
    with mpl.rc_context(STYLE):
        for ax, fit, label in ((axes[0], result.pos, r"$x \mapsto x/2$"), (axes[1], result.neg, r"$x \mapsto -x/2$")):
            for i in range(result.x0.size):
                ax.plot(layers, fit.trajectory[:, i], "-", color=colors[i], lw=0.9)
            # the interpolating neural ODE of the same weights, every fourth input, for contrast
            s = np.linspace(0.0, N, fit.ode_trajectory.shape[0])
            for i in range(0, result.x0.size, 4):
                ax.plot(s, fit.ode_trajectory[:, i], "-", color="k", lw=0.6, alpha=0.45,
                        label="interpolating neural ODE" if i == 0 else None, zorder=3)
            if fit.first_crossing is not None:
                ax.axvline(fit.first_crossing, color="0.35", ls=":", lw=1.0)
                ax.annotate(f"first crossing\n(layer {fit.first_crossing})", (fit.first_crossing, 0.02),
                            xycoords=("data", "axes fraction"), xytext=(-4, 0), textcoords="offset points",
                            ha="right", va="bottom", fontsize=8.5, color="0.3")
            ax.legend(frameon=False, loc="upper right", handlelength=1.2)
            ax.set_title(f"learn {label}: {fit.crossings} of {result.x0.size - 1} adjacent pairs cross\n"
                         f"MSE {fit.mse:.1e}, max$_n$ |f$_n'$|/N = {fit.max_abs_fprime_over_N:.2g}", fontsize=10)
            ax.set_xlabel("layer n")
            ax.set_xlim(0, N)
            ax.grid(True, color="0.9", lw=0.6)
            ax.set_axisbelow(True)
        axes[0].set_ylabel(r"activation $x_n$")
        fig.suptitle(f"1-D ResNets of depth N = {N} (resnet-node Fig. 1); colour: input $x_0$", fontsize=11)
    return fig


@pytest.mark.claim("resnet-node/fig-1", kind="qualitative", aliases=("sander-thesis/fig-2.1",),
                   title="Neural ODE trajectories never cross; a deep 1-D ResNet trained on x -> -x/2 must cross")
def test_fig1_crossing_trajectories(claim):
    """Criterion (:func:`theory.experiments.resnet_node.fig1_measured_verdict`): both fits reach MSE < 1e-3; the
    -x/2 network crosses and has a layer with f'_n <= -N (a layer map 1 + f'_n/N that reverses
    orientation); the x/2 network and both
    interpolating ODEs do not cross, and the ODE of the -x/2 network stays above the least MSE of
    any increasing map (it cannot reverse orientation)."""
    exp = experiment("resnet_node.fig1")
    result = exp.run("check")
    figure = save_figure(_fig1_figure(result), "resnet-node/fig-1")
    claim.record(exp.verdict_for("resnet-node/fig-1")(result), figure=figure, measured=result.to_measured())


# --------------------------------------------------------------------------- Figure 4

_LABELS = {"euler-backprop": "ResNet, backprop", "euler-adjoint": "ResNet, adjoint",
           "heun-backprop": "HeunNet, backprop", "heun-adjoint": "HeunNet, adjoint"}
_STYLES = {"euler-backprop": ("C0", "-", "o"), "euler-adjoint": ("C0", "--", "s"),
           "heun-backprop": ("C3", "-", "^"), "heun-adjoint": ("C3", "--", "D")}


def _fig4_figure(table):
    mpl, fig, (ax,) = subplots(1, (5.4, 3.8))
    depths = np.asarray(table.depths)
    with mpl.rc_context(STYLE):
        for scheme, method in rn.VARIANTS:
            key = f"{scheme}-{method}"
            color, ls, marker = _STYLES[key]
            errs = 100 * table.errors[key]
            ax.fill_between(depths, errs.min(axis=1), errs.max(axis=1), color=color, alpha=0.08 if ls == "-" else 0.15,
                            lw=0)
            ax.plot(depths, 100 * table.median(key), ls=ls, marker=marker, color=color, ms=5, label=_LABELS[key])
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths)
        ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{int(round(v))}"))
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}%"))
        ax.set_xlabel("depth N")
        ax.set_ylabel("test error (median, min-max band)")
        ax.set_title(f"Two moons, {len(next(iter(table.errors.values()))[0])} seeds (resnet-node Fig. 4, reduced)")
        ax.grid(True, which="both", color="0.9", lw=0.6)
        ax.set_axisbelow(True)
        ax.legend(frameon=False)
    return fig


@pytest.mark.slow
@pytest.mark.claim("resnet-node/fig-4", kind="qualitative", aliases=("sander-thesis/fig-2.4",),
                   proxy="two moons (512 synthetic 2-D points lifted to R^6) and a perceptron residual V tanh(W x + b) "
                         "of width 16 stand in for CIFAR-10 and the paper's convolutional ResNet (5x5 convolution, "
                         "pre-activation basic blocks), trained 300 full-batch Adam steps: a substitute for the "
                         "document's data and architecture",
                   title="Adjoint training fails at small depth, matches backprop at large depth; "
                         "Heun needs fewer layers")
def test_fig4_depth_experiment(claim):
    """Two moons lifted to R^6, residual V tanh(W x + b) (width 16, V = 0 at init), linear head,
    logistic loss, full-batch Adam lr 0.02, 300 steps, depths 2..16, median over 3 seeds, for
    {Euler, Heun} x {backprop, adjoint}. Criterion: :func:`theory.experiments.resnet_node.fig4_table_verdict`."""
    exp = experiment("resnet_node.fig4")
    result = exp.run("check")
    figure = save_figure(_fig4_figure(result.table), "resnet-node/fig-4")
    claim.record(exp.verdict_for("resnet-node/fig-4")(result), figure=figure, measured=result.to_measured())


# --------------------------------------------------------------------------- Figure 3(c)


def _fig3c_figure(result):
    mpl, fig, (ax,) = subplots(1, (6.4, 4.6))
    depths = np.asarray(result.config.depths, dtype=float)
    styles = {"euler": ("C0", 0.9, "ResNet (Euler)", rn.FIG3C_EXPECTED["euler_slope"], "slope -1, predicted (Prop. 4)"),
              "heun": ("C3", 1.1, "HeunNet", rn.FIG3C_EXPECTED["heun_proved"],
                       "slope -2, predicted (bound of Prop. 6)")}
    with mpl.rc_context(STYLE):
        for scheme, (color, shift, label, slope, guide) in styles.items():
            # every parameter tensor of every seed, shifted sideways so that the two clouds separate
            for row in result.errors[scheme]:
                for N, errs in zip(depths, row):
                    ax.plot(np.full(errs.size, N * shift), errs, ".", color=color, ms=2.5, alpha=0.18, zorder=1)
            plot_rate(result.fits[scheme], ax=ax, expected_slope=slope, expected_label=guide, color=color,
                      label=f"{label}: median over parameters (one point per seed)")
        ax.plot([], [], ".", color="0.5", alpha=0.5, label="one parameter tensor ($V_n$, $W_n$ or $b_n$)")
        ax.set_xlabel("depth N")
        ax.set_ylabel(r"relative error $\|\tilde g - g\|_F / \|g\|_F$")
        ax.set_title("resnet-node/fig-3c (reduced): adjoint vs true gradient,\n"
                     f"$V\\tanh(Wx+b)$, d = {result.config.d}, m = {result.config.width}, {result.config.weights} weights",
                     fontsize=10)
        ax.legend(fontsize=7, frameon=False, loc="lower left")
    return fig


@pytest.mark.claim("resnet-node/fig-3c", kind="rate", aliases=("sander-thesis/fig-2.3c",),
                   proxy="a perceptron residual V tanh(W x + b) with weights on a smooth random path in depth and "
                         "one random batch stand in for the paper's convolutional ResNet trained on CIFAR-10: a "
                         "substitute for the document's data and architecture",
                   title="Relative error of the adjoint gradients falls with depth (ResNet O(1/N), HeunNet "
                         "O(1/N^2) or better) and the HeunNet's is below the ResNet's")
def test_fig3c_adjoint_gradient_errors(claim):
    """Reduced Figure 3(c): every parameter tensor's relative error between the adjoint and the
    exact gradient, depths 4 ... 128, three weight paths smooth in depth. Criterion:
    :func:`theory.experiments.resnet_node.fig3c_verdict`."""
    exp = experiment("resnet_node.fig3c")
    result = exp.run("check")
    figure = save_figure(_fig3c_figure(result), "resnet-node/fig-3c")
    claim.record(exp.verdict_for("resnet-node/fig-3c")(result), figure=figure, measured=result.to_measured())
