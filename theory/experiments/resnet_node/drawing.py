"""The figures and tables of ``resnet-node`` drawn in the documents' layout from the experiments' results.

Each ``*_figure(result, claim_id=...)`` draws one figure of the paper (Figs. 1-4, Tables 1-2; thesis Figs.
2.1-2.4, Tables 2.1-2.2) with the document's panels, axes and legend entries, saves it with
:func:`theory.plots.save_figure` (``theory reproduce`` chooses the folder; the checks write to ``figures/out``)
and returns the path.
"""

from __future__ import annotations

import numpy as np

from theory.plots import STYLE, save_figure, subplots

__all__ = ["fig1_figure", "fig2_figure", "fig3a_figure", "fig3b_figure", "fig3c_figure", "fig4_figure",
           "table1_figure", "table2_figure"]


def fig1_figure(result, claim_id: str = "resnet-node/fig-1") -> str:
    """Fig. 1: trajectories of the 1-D ResNets over depth; left x -> x/2, right x -> -x/2."""
    mpl, fig, axes = subplots(2, (9.0, 3.4))
    N = result.N
    layers = np.arange(N + 1)
    colors = mpl.colormaps["viridis"](np.linspace(0.0, 1.0, result.x0.size))
    with mpl.rc_context(STYLE):
        for ax, fit, label in ((axes[0], result.pos, r"$x \mapsto x/2$"), (axes[1], result.neg, r"$x \mapsto -x/2$")):
            for i in range(result.x0.size):
                ax.plot(layers, fit.trajectory[:, i], "-", color=colors[i], lw=0.9)
            ax.set_title(f"learn {label}: {fit.crossings} crossing pairs", fontsize=10)
            ax.set_xlabel("depth (layer n)")
            ax.set_xlim(0, N)
        axes[0].set_ylabel(r"$x_n$")
        fig.suptitle(f"Trajectories of ResNets with {N} layers ({claim_id})", fontsize=11)
    return save_figure(fig, claim_id)


def fig2_figure(result, claim_id: str = "resnet-node/fig-2") -> str:
    """Fig. 2: heatmap of ||Psi_N(t, .) - Psi(t, .)||_2, training iterations t horizontally, depth N vertically."""
    mpl, fig, (ax,) = subplots(1, (6.4, 3.6))
    depths, t = result.config.depths, result.t
    with mpl.rc_context(STYLE):
        im = ax.imshow(result.dist[:, 1:], aspect="auto", origin="lower", cmap="viridis",
                       norm=mpl.colors.LogNorm(), extent=(t[1], t[-1], -0.5, len(depths) - 0.5))
        ax.set_yticks(range(len(depths)), [str(N) for N in depths])
        ax.set_xlabel("training iteration t")
        ax.set_ylabel("depth N")
        ax.set_title(r"$\|\Psi_N(t,\cdot) - \Psi(t,\cdot)\|_2$" + f" ({claim_id})", fontsize=10)
        fig.colorbar(im, ax=ax)
    return save_figure(fig, claim_id)


def fig3a_figure(result, claim_id: str = "resnet-node/fig-3a") -> str:
    """Fig. 3(a): test accuracy against the blocks per layer (tied weights), with and without the step 1/N;
    mean and standard deviation over the runs."""
    mpl, fig, (ax,) = subplots(1, (4.8, 3.6))
    c = result.config
    xs = np.asarray(getattr(c, "blocks", None) or c.depths, dtype=float)
    labels = {"1/N": r"with $\frac{1}{N}$", "classical": r"without $\frac{1}{N}$"}
    with mpl.rc_context(STYLE):
        for scaling, color in (("1/N", "C0"), ("classical", "C3")):
            a = 100 * result.accuracy[scaling]
            m, s = a.mean(axis=1), a.std(axis=1)
            ax.plot(xs, m, "o-", color=color, label=labels[scaling])
            ax.fill_between(xs, m - s, m + s, color=color, alpha=0.2, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{int(round(v))}"))
        ax.set_xlabel("blocks per layer" if hasattr(c, "blocks") else "depth N (tied weights)")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{claim_id}: {len(c.seeds)} runs", fontsize=10)
        ax.legend(frameon=False)
    return save_figure(fig, claim_id)


def fig3b_figure(result, claim_id: str = "resnet-node/fig-3b") -> str:
    """Fig. 3(b): test accuracy over the epochs of the ResNet-101 trained with exact and with adjoint gradients."""
    mpl, fig, (ax,) = subplots(1, (4.8, 3.6))
    epochs = np.arange(1, result.config.epochs + 1)
    with mpl.rc_context(STYLE):
        for method, color, label in (("backprop", "C0", "backprop"), ("adjoint", "C3", "adjoint (third layer)")):
            ax.plot(epochs, 100 * np.median(result.history[method], axis=0), "-", color=color, label=label)
        ax.set_xlabel("epoch")
        ax.set_ylabel("top-1 test accuracy (%)")
        ax.set_title(f"{claim_id}: ResNet-101 on ImageNet", fontsize=10)
        ax.legend(frameon=False)
    return save_figure(fig, claim_id)


def fig3c_figure(result, claim_id: str = "resnet-node/fig-3c") -> str:
    """Fig. 3(c): relative error of the adjoint gradient of every parameter against depth, ResNet and HeunNet
    (one point per parameter tensor), log-log."""
    mpl, fig, (ax,) = subplots(1, (4.8, 3.6))
    depths = np.asarray(result.config.depths, dtype=float)
    with mpl.rc_context(STYLE):
        for scheme, color, shift, label in (("euler", "C0", 0.93, "ResNet"), ("heun", "C3", 1.07, "HeunNet")):
            for row in result.errors[scheme]:
                for N, errs in zip(depths, row):
                    ax.plot(np.full(np.size(errs), N * shift), errs, ".", color=color, ms=2.5, alpha=0.3)
            ax.plot(depths, np.exp(np.log(result.medians[scheme]).mean(axis=0)), "-", color=color, lw=1.2,
                    label=f"{label} (median)")
        ax.set_xscale("log", base=2)
        if all(np.all(np.concatenate([np.ravel(e) for row in result.errors[s] for e in row]) > 0)
               for s in ("euler", "heun")):
            ax.set_yscale("log")
        ax.set_xticks(depths)
        ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{int(round(v))}"))
        ax.set_xlabel("depth N")
        ax.set_ylabel("relative error")
        ax.set_title(claim_id, fontsize=10)
        ax.legend(frameon=False)
    return save_figure(fig, claim_id)


_FIG4_LABELS = {"euler-backprop": ("ResNet", "C0", "-", "o"), "euler-adjoint": ("ResNet adjoint", "C0", "--", "s"),
                "heun-backprop": ("HeunNet", "C3", "-", "^"), "heun-adjoint": ("HeunNet adjoint", "C3", "--", "D")}


def fig4_figure(result, claim_id: str = "resnet-node/fig-4") -> str:
    """Fig. 4: test error against depth for ResNet / HeunNet, backprop / adjoint (median over the runs)."""
    mpl, fig, (ax,) = subplots(1, (4.8, 3.6))
    if hasattr(result, "table"):  # the two-moons result of resnet_node.fig4
        depths, errors = np.asarray(result.table.depths), result.table.errors
    else:
        depths, errors = np.asarray(result.config.depths), result.errors
    with mpl.rc_context(STYLE):
        for key, (label, color, ls, marker) in _FIG4_LABELS.items():
            ax.plot(depths, 100 * np.median(errors[key], axis=1), ls=ls, marker=marker, color=color, ms=4,
                    label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths)
        ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{int(round(v))}"))
        if all(np.all(np.median(e, axis=1) > 0) for e in errors.values()):
            ax.set_yscale("log")
            for set_formatter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
                set_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
        ax.set_xlabel("depth")
        ax.set_ylabel("test error (%)")
        ax.set_title(claim_id, fontsize=10)
        ax.legend(frameon=False)
    return save_figure(fig, claim_id)


def _table(rows, columns, title, claim_id):
    mpl, fig, (ax,) = subplots(1, (5.4, 1.0 + 0.35 * len(rows)))
    with mpl.rc_context(STYLE):
        ax.axis("off")
        tab = ax.table(cellText=[r[1:] for r in rows], rowLabels=[r[0] for r in rows], colLabels=columns,
                       loc="center", cellLoc="center")
        tab.scale(1.0, 1.4)
        ax.set_title(title, fontsize=10)
    return save_figure(fig, claim_id)


def table1_figure(result, claim_id: str = "resnet-node/table-1") -> str:
    """Table 1: test accuracy of the ResNet-101, classical rule ("ResNet-101") and step 1/N ("Ours")."""
    a = result.accuracy
    cell = [f"{100 * a[s].mean():.1f} ± {100 * a[s].std():.1f}%" for s in ("classical", "1/N")]
    return _table([(result.config.dataset, *cell)], ["ResNet-101", "Ours"],
                  f"Test accuracy (ResNet-101), measured ({claim_id})", claim_id)


def table2_figure(result, claim_id: str = "resnet-node/table-2") -> str:
    """Table 2: test accuracy before and after fine-tuning the untied deeper ResNet (median over the runs)."""
    cell = [f"{100 * np.median(v):.2f}%" for v in (result.before, result.after)]
    return _table([(result.config.dataset, *cell)], ["Before F.T.", "After F.T."],
                  f"Test accuracy (ResNet), measured ({claim_id})", claim_id)
