"""The figures and tables of ``implicit-reg`` (ICLR 2024; chapter 3 of both theses), declared for
``theory reproduce`` (theory.experiments.register_figure).

Figures 1 and 2 are the synthetic experiments of Section 5.1 (Appendix E): their ``paper`` presets are Appendix E's
sizes. Figures 3 and 4 and Table 1 train convolutional ResNets (L = 256, batch normalisation) on CIFAR-10 for 180
epochs (Appendix E); here they run on stand-ins, flagged ``substitute`` (their claims are proxies): the dense
model (3) on synthetic Gaussian data (Figs. 3-4, Table 1) and model (3) on scikit-learn's 8 x 8 digits (Table 1,
``table-1/digits``). No CIFAR-10 run is declared: the convolutional ResNet of Appendix E at L = 256, 180 epochs and
five runs per row is a GPU job (see the report of the figures in ``results/``).
"""

from __future__ import annotations

import numpy as np

from .. import Printed, register_figure
from . import section5 as E
from . import supplement as S
from .table1_digits import plot_table1_digits

KEY = "implicit-reg"

_CIFAR = ("the convolutional ResNet of Appendix E (L = 256, batch normalisation, SGD with cross-entropy for 180 "
          "epochs, 5 runs per row) on CIFAR-10")


# =========================================================================== drawings


def fig1_figure(result, cid="implicit-reg/fig-1"):
    """Figure 1's layout: left, max_{k, t <= T} ||Z_{k+1}(t) - Z_k(t)|| against L; right, the distance to the
    reference depth, one curve per training time T."""
    from theory.plots import save_figure, subplots

    _, fig, (a, b) = subplots(ncols=2, figsize=(11, 4))
    E.plot_fig1_panel(a, E.fig1_fits(result, "left"), r"$\max_{k,\,t\leq T} \|Z_{k+1}(t) - Z_k(t)\|_F$",
                      "left: successive weights", times=result.times)
    E.plot_fig1_panel(b, E.fig1_fits(result, "right"), r"$\|\mathcal{Z}^L(T) - \mathcal{Z}^{L_{ref}}(T)\|$",
                      "right: distance to the large-depth limit", times=result.times)
    for ax in (a, b):
        ax.legend(frameon=False, fontsize=7, loc="lower left")
    fig.suptitle(f"{cid}: GELU, {result.left.shape[1]} seeds, L = {int(result.grid[0])}..{int(result.grid[-1])}")
    return save_figure(fig, cid)


def fig2_figure(result, cid="implicit-reg/fig-2", n_curves=8):
    """Figure 2's layout from a :class:`~.section5.Fig2Result`: one entry of V_k and of W_k against the layer k at
    the recorded training times (lighter = later; the first seed at the larger depth), and the loss."""
    import matplotlib as mpl

    from theory.plots import save_figure, subplots

    c = result.config
    L = c.depths[1]
    states = getattr(result, "states", None)
    if states is None:  # a result cached before the states were kept
        states = E.fig2_run(L, c.m, "paper", c.seeds[0], "gelu", **c.run_kwargs)[1]
    times = c.lr * np.array((0,) + tuple(c.record))
    _, fig, axes = subplots(ncols=3, figsize=(13, 4))
    rng = np.random.default_rng(0)
    iv = (rng.integers(c.d), rng.integers(c.m))
    iw = (rng.integers(c.m), rng.integers(c.d))
    pick = np.arange(1, len(states))[-n_curves:]
    cmap = mpl.colormaps["Blues"]
    k = np.arange(1, L + 1)
    for n, j in enumerate(pick):
        col = cmap(0.95 - 0.7 * n / max(len(pick) - 1, 1))
        axes[0].plot(k, states[j].V[:, iv[0], iv[1]], color=col, label=f"t = {times[j]:g}")
        axes[1].plot(k, states[j].W[:, iw[0], iw[1]], color=col)
    axes[0].set(xlabel="layer k", ylabel=f"V_k[{iv[0]}, {iv[1]}]", title="an entry of V_k")
    axes[1].set(xlabel="layer k", ylabel=f"W_k[{iw[0]}, {iw[1]}]", title="an entry of W_k")
    axes[0].legend(frameon=False, fontsize=7)
    axes[2].semilogy(c.lr * np.arange(result.losses.size), result.losses, color="C3")
    axes[2].set(xlabel="training time t", ylabel="loss", title="loss (log scale)")
    for ax in axes:
        ax.grid(True, color="0.85", linewidth=0.6)
    fig.suptitle(f"{cid}: GELU, n = {c.n}, d = {c.d}, m = {c.m}, L = {L}, {c.record[-1]} steps; lighter = later")
    return save_figure(fig, cid)


def fig3_figure(result, cid="implicit-reg/fig-3"):
    """Figure 3's layout: two entries of the trained inner weights across layers, weight-tied (left) and i.i.d.
    (right) initialisation."""
    from theory.plots import save_figure, subplots

    _, fig, (a, b) = subplots(ncols=2, figsize=(11, 4))
    k = np.arange(1, result.entries["tied"].shape[0] + 1)
    for j in range(2):
        a.plot(k, result.entries["tied"][:, j], label=f"entry {j + 1}")
        b.plot(k, result.entries["iid"][:, j], label=f"entry {j + 1}")
    a.set_title("weight-tied initialisation (smooth)")
    b.set_title("i.i.d. initialisation (rough)")
    for ax in (a, b):
        ax.set(xlabel="layer k", ylabel="trained W entry")
        ax.legend(frameon=False, fontsize=7)
    fig.suptitle(f"{cid} (stand-in: model (3), GELU, synthetic data)")
    return save_figure(fig, cid)


def fig4_figure(result, cid="implicit-reg/fig-4"):
    """Figure 4's layout: the layer-mean of ||Z_{k+1} - Z_k||_F after training, per weight index, smooth against
    i.i.d. initialisation (mean and deviation over the runs)."""
    from theory.plots import save_figure, subplots

    _, fig, (ax,) = subplots()
    x = np.arange(2)
    for off, kind in ((-0.2, "smooth"), (0.2, "iid")):
        v = result.mean_diff[kind]
        ax.bar(x + off, v.mean(axis=0), width=0.4, yerr=v.std(axis=0), label=f"{kind} init")
    ax.set_yscale("log")
    ax.set_xticks(x, ["i = 1 (W)", "i = 2 (V)"])
    ax.set_ylabel(r"mean$_k \|Z_{k+1} - Z_k\|_F$ after training")
    ax.set_title(f"{cid} ({result.mean_diff['iid'].shape[0]} runs; stand-in: model (3), synthetic data)")
    ax.legend(frameon=False)
    return save_figure(fig, cid)


def table1_figure(result, cid="implicit-reg/table-1"):
    """Table 1's smoothness column on the synthetic stand-in: the mean successive difference of each row (activation
    x initialisation) against L (solid: weight-tied, dotted: i.i.d.), and for ReLU the max over layers."""
    from theory.plots import plot_rate, save_figure, subplots

    _, fig, (ax,) = subplots(figsize=(7, 4.5))
    colors = {"identity": "C0", "gelu": "C2", "relu": "C3"}
    ylabel = r"mean$_k$ $\|Z_{k+1}(T) - Z_k(T)\|$"
    for (act, kind), (_, _, fit) in result.rows.items():
        plot_rate(fit, ax=ax, color=colors[act], label=f"{act}, {'tied' if kind == 'paper' else 'i.i.d.'}",
                  xlabel="depth L", ylabel=ylabel)
        ax.lines[-1].set_linestyle("-" if kind == "paper" else ":")
    if result.max_relu is not None:
        plot_rate(result.max_relu, ax=ax, color="C1", label="relu, tied: max over k", expected_slope=-1.0,
                  xlabel="depth L", ylabel=ylabel)
    ax.set_title(f"{cid}: smoothness after training (stand-in: model (3), synthetic data)")
    ax.legend(frameon=False, fontsize=7, ncol=2, loc="center left")
    return save_figure(fig, cid)


def table1_digits_figure(result, cid="implicit-reg/table-1/digits"):
    """Table 1 on the digits: test accuracy per row and the roughness ratio per row."""
    return plot_table1_digits(result, cid, directory=None)


# =========================================================================== declarations

_T1 = "Table 1, row"
_TABLE1_ROWS = (("identity", "tied", 56.5, 59.8), ("identity", "iid", 56.1, 59.6), ("gelu", "tied", 80.5, 79.9),
                ("gelu", "iid", 89.8, 85.7), ("relu", "tied", 97.4, 88.1), ("relu", "iid", 98.4, 88.4))

register_figure(
    KEY, "fig-1", "Large-depth limit: successive weights O(1/L) (left) and uniform convergence to the limit Z (right)",
    claims=("implicit-reg/fig-1", "implicit-reg/fig-1/limit", "implicit-reg/sec-5.1/horizon"),
    experiment="implicit_reg.fig1", draw=fig1_figure,
    criterion=(f"for each panel and at every recorded training time T, the slope against L of the seed-mean "
               f"(left: max_(k, t<=T) ||Z_(k+1)(t) - Z_k(t)||_F; right: ||Z^L(T) - Z^(L_ref)(T)||_(L^2(ds))) is "
               f"{E.EXPECTED_FIG1['slope']:g} +- {E.EXPECTED_FIG1['tol']:g}, and the seed mean increases strictly "
               "with T at every L"),
    printed=(Printed("number of samples n", 100, "App. E, 'Large-depth limit'", measured="config.n"),
             Printed("width d", 16, "App. E, 'Large-depth limit'", measured="config.d"),
             Printed("residual width m", 32, "App. E, 'Large-depth limit'", measured="config.m"),
             Printed("iterations", 500, "App. E, 'Large-depth limit'", measured="config.record",
                     note="the last recorded step"),
             Printed("learning rate / L", 0.01, "App. E, 'Large-depth limit' (L x 1e-2)", measured="config.lr"),
             Printed("reference depth of the limit Z", 2 ** 14, "Sec. 5.1, text", measured="config.ref"),
             Printed("T", 500, "Sec. 5.1, text ('with T = 500')", measured="horizon.flow_time",
                     note="500 is Appendix E's number of steps; the flow time is lr x 500 = 5 (erratum "
                          "implicit-reg/sec-5.1/horizon/erratum)"),
             Printed("rate of the left panel", None, "Sec. 5.1, text", measured="left_slopes",
                     note="'a 1/L convergence rate': slope -1 against L, one slope per training time"),
             Printed("rate of the right panel", None, "caption of Fig. 1", measured="right_slopes",
                     note="'uniform convergence of Z^L to its large-depth limit' (curves only)")),
    numbers=lambda r: {"left_slopes": [float(f.slope) for f in E.fig1_fits(r, "left")],
                       "right_slopes": [float(f.slope) for f in E.fig1_fits(r, "right")],
                       "horizon.flow_time": float(r.times[-1]),
                       "L_times_left_mean_last_T": (r.left[-1].mean(axis=0) * r.grid).tolist()},
    preset_note=("the paper preset is Appendix E's: n = 100, d = 16, m = 32, 500 steps of lr L x 1e-2, reference "
                 "depth 2^14, depths 8..1024, 5 seeds (the document does not print its depths or number of runs); "
                 "about 4 h on one CPU core with the NumPy backend (timed: 5.1 s per step at L = 2^14, 0.75 s per "
                 "step for the eight depths together; x 500 steps x 5 seeds), so it was not run here. The check "
                 "preset is reduced: n = 20, d = 8, m = 16, lr 0.05 (same flow time 5), L = 8..128, reference 1024, "
                 "3 seeds"),
)

register_figure(
    KEY, "fig-2", "Long-time limit: an entry of V_k and of W_k across layers at increasing training times, and the "
    "loss",
    claims=("implicit-reg/fig-2", "implicit-reg/fig-2/loss"), experiment="implicit_reg.fig2", draw=fig2_figure,
    criterion=(f"smooth weights at all times: the roughness rho (second over first differences across layers) at "
               f"the larger depth is <= {E.FIG2_RHO_RATIO_MAX} x that at the smaller depth (C^2 weights: 1/2; "
               f"independent layers: 1), for V and W, every seed and every recorded time; the loss: l(T)/l(0) <= "
               f"{E.FIG2_LOSS_FACTOR:g}, a positive exponential rate over the second half of training with R^2 >= "
               f"{E.FIG2_R2_MIN}"),
    printed=(Printed("number of samples n", 50, "App. E, 'Long-time limit'", measured="config.n"),
             Printed("width d", 16, "App. E, 'Long-time limit'", measured="config.d"),
             Printed("residual width m", 64, "App. E, 'Long-time limit'", measured="config.m"),
             Printed("depth L", 64, "App. E, 'Long-time limit'", measured="config.depths",
                     note="the figure at the larger depth; the smaller one for the roughness ratio"),
             Printed("iterations", 80000, "App. E, 'Long-time limit'", measured="config.record",
                     note="the last recorded step"),
             Printed("learning rate / L", 0.005, "App. E, 'Long-time limit' (5L x 1e-3)", measured="config.lr"),
             Printed("smoothness of the weights", None, "Sec. 5.1, text", measured="rho_ratio_worst",
                     note="'behave as a Lipschitz continuous function for any training time' (curves only)"),
             Printed("loss", None, "caption of Fig. 2 and Sec. 5.1", measured="ratio",
                     note="'the loss decays to zero' (curve only); measured l(T)/l(0)")),
    preset_note=("the paper preset is Appendix E's (n = 50, d = 16, m = 64, L = 64, 80 000 steps of lr 5L x 1e-3) "
                 "with one run (the figure shows one) and L = 32 beside it for the roughness ratio; about 14 min on "
                 "an idle CPU core (timed: 3.3 ms and 7.0 ms per step at L = 32 and 64; 28.6 min on the loaded "
                 "2-core machine of results/). Measured there: smooth at all times (rho ratio 0.504-0.586, passes), "
                 "but the loss falls only from 32.2 to 0.177 by step 80 000 (l(T)/l(0) = 5.5e-3 > 1e-3: fig-2/loss "
                 "fails), exponentially (rate 0.012, R^2 = 1), and the weights still move at t = 400. The check "
                 "preset is reduced: n = 5, d = 8, m = 32, L = 16 and 32, 4000 steps of lr 0.1 (flow time 400, as "
                 "the paper's), 2 seeds"),
)

register_figure(
    KEY, "fig-3", "Random entries of the trained convolutions across layers: weight-tied init (smooth) vs i.i.d. "
    "(rough)",
    claims=("implicit-reg/fig-3",), experiment="implicit_reg.fig3", draw=fig3_figure,
    criterion=(f"every tied entry's path across layers has roughness <= {S.EXPECTED_FIG3['tied_rho_max']} and the "
               f"median i.i.d. one >= {S.EXPECTED_FIG3['iid_rho_min']} (white noise: sqrt 3)"),
    printed=(Printed("depth L", 256, "App. E, 'Real-world data'", measured="config.L"),
             Printed("weight-tied init", None, "caption of Fig. 3", measured="tied_rho",
                     note="'leads to smooth weights' (curves only)"),
             Printed("i.i.d. init", None, "caption of Fig. 3", measured="iid_rho",
                     note="'leads to non-smooth weights' (curves only)")),
    substitute=("the dense model (3) with GELU on synthetic Gaussian data (squared loss, full-batch GD of Eq. (4), "
                "A = B = I not trained) stands in for " + _CIFAR),
    preset_note=("check: n = 20, d = 8, m = 16, L = 32, 200 steps of lr 0.05; paper: n = 100, d = 16, m = 32, "
                 "L = 256 (the document's depth), 500 steps of lr 0.01; the CIFAR-10 ResNet is not run here (a GPU "
                 "job: 180 epochs at L = 256)"),
)

register_figure(
    KEY, "fig-4", "Layer-mean of ||Z_{k+1} - Z_k||_F after training, per convolution index: smooth vs i.i.d. init",
    claims=("implicit-reg/fig-4",), experiment="implicit_reg.fig4", draw=fig4_figure,
    criterion=(f"for both weight indices, the run-averaged mean successive difference from the i.i.d. init is >= "
               f"{S.EXPECTED_FIG4['iid_over_smooth_min']:g} x that from the smooth init"),
    printed=(Printed("i.i.d. / smooth, index 1", 10, "App. E, 'Additional plot' ('an order of magnitude smoother')",
                     measured="iid_over_smooth_W", note="an order of magnitude; read as a ratio >= 10"),
             Printed("i.i.d. / smooth, index 2", 10, "App. E, 'Additional plot'", measured="iid_over_smooth_V",
                     note="an order of magnitude; read as a ratio >= 10"),
             Printed("runs", 5, "App. E, 'Additional plot'", note="5 seeds in both presets")),
    substitute=("the dense model (3) with GELU on synthetic Gaussian data (V = 0, W from a squared-exponential "
                "Gaussian process across layers or i.i.d.) stands in for " + _CIFAR),
    preset_note=("check: n = 20, d = 8, m = 16, L = 64, 100 steps of lr 0.05; paper: n = 100, d = 16, m = 32, L = 256, "
                 "500 steps of lr 0.01; the CIFAR-10 ResNet is not run here"),
)

register_figure(
    KEY, "table-1", "Accuracy and smoothness of the trained weights per activation and initialisation (smoothness "
    "column on synthetic data)",
    claims=("implicit-reg/table-1", "implicit-reg/table-1/relu"), experiment="implicit_reg.table1",
    draw=table1_figure,
    criterion=(f"identity and GELU: from tied init the mean successive difference is O(1/L) (slope "
               f"{E.EXPECTED_TABLE1_SMOOTH['slope']:g} +- {E.EXPECTED_TABLE1_SMOOTH['tol']:g}), from i.i.d. init "
               f"it does not shrink (slope 0 +- {E.EXPECTED_TABLE1_IID['tol']:g}), and i.i.d./tied >= "
               f"{E.TABLE1_ORDER:g} at the largest L; ReLU: from tied init the max over layers is not O(1/L) (CI of "
               "its slope above -0.85), from i.i.d. init the mean does not shrink"),
    printed=tuple(
        Printed(f"{a}/{k}: {what} accuracy (%)", v, f"{_T1} {a}, {k}", measured=None,
                note="CIFAR-10 accuracy: not measured by the synthetic stand-in")
        for a, k, tr, te in _TABLE1_ROWS for what, v in (("train", tr), ("test", te))
    ) + (Printed("identity/tied and gelu/tied: smooth", None, f"{_T1}s 1 and 3", measured="iid_over_tied_gelu",
                 note="check mark; measured i.i.d./tied mean successive difference (GELU)"),
         Printed("relu/tied: not smooth", None, f"{_T1} 5", measured="relu/paper/max_slope_ci_low",
                 note="cross; measured: lower end of the CI of the slope of the max over layers")),
    substitute=("the dense model (3) on synthetic Gaussian data (n = 20, q = 8, m = 16, squared loss, full-batch "
                "clipped GD, clip never active) stands in for " + _CIFAR + "; only the smoothness column is measured"),
    preset_note=("check: L = 8..128, 3 seeds; paper: L = 8..256 (the document's depth), 5 seeds (the table's 5 runs); "
                 "the accuracies need the CIFAR-10 ResNet, not run here"),
)

register_figure(
    KEY, "table-1/digits", "Table 1 on scikit-learn's 8 x 8 digits: accuracy and smoothness per activation and "
    "initialisation",
    claims=("implicit-reg/table-1/digits",), experiment="implicit_reg.table1_digits", draw=table1_digits_figure,
    criterion=("all five parts of Table 1's message: (1) identity/tied and GELU/tied smooth (rho(L') <= 0.7 rho(L) "
               "for V and W in every run), (2) the four other rows not smooth, (3) i.i.d./tied layer-mean "
               "successive difference >= 10 for every activation, (4) GELU/tied test accuracy above both identity "
               "rows, (5) GELU/i.i.d., ReLU/tied and ReLU/i.i.d. above GELU/tied; orderings of medians by more than "
               "the larger interquartile range"),
    printed=tuple(
        Printed(f"{a}/{k}: {what} accuracy (%)", v, f"{_T1} {a}, {k}",
                measured=(f"{a}/{k}/test_acc" if what == "test" else f"rows.{a}/{k}.train_acc_median"),
                note="CIFAR-10 in the document; digits here")
        for a, k, tr, te in _TABLE1_ROWS for what, v in (("train", tr), ("test", te))
    ),
    substitute=("model (3), fully connected (64 pixels, q = 74, 10 outputs, squared loss on one-hot targets, A and B "
                "trained, full-batch GD) on scikit-learn's 8 x 8 digits stands in for " + _CIFAR),
    preset_note=("check: L = 8 and 16, 2 seeds, 200 training images, m = 16, 200 steps; paper: L = 128 and 256 (the "
                 "document's depth), 5 seeds (the table's 5 runs), 1000 training images, m = 64, 2000 steps"),
)

