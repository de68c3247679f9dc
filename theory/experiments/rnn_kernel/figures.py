"""The figures of ``rnn-kernel`` (thesis (Marion), chapter 5), declared for ``theory reproduce``
(:func:`theory.experiments.register_figure`).

Fig. 5.1 is the step-N Taylor expansion experiment ``rnn_kernel.prop59`` (claim ``rnn-kernel/fig-5.1``); Figs. 5.2
and 5.3 the adversarial-robustness experiment of :mod:`.robustness` (PyTorch); Fig. 5.4 a diagram of the paths
X~_[j] of the proof of Thm 5.12 (an illustration).
"""

from __future__ import annotations

import math

import numpy as np

from .. import Printed, register_figure
from . import PROP59_RATE, TAYLOR_PRESETS, spiral
from ._search import A_CONST
from .robustness import FIG53_FROBENIUS_RATIO_MAX, fig52_figure, fig53_figure

K = "rnn-kernel"


def _replayed_weights(result):
    """The weights (U, V, b) of the RNNs of a ``rnn_kernel.prop59`` result, drawn again from the seed of the preset
    whose sizes match it (the result does not store them), in the order of ``measure_prop59``; None when no preset
    matches."""
    cfg = next((c for c in TAYLOR_PRESETS.values() if c.n_rnns == result.errors.shape[1]
                and tuple(c.Ns) == tuple(result.Ns) and tuple(c.activations) == tuple(result.activations)), None)
    if cfg is None:
        return None, None
    rng = np.random.default_rng(cfg.seed)
    s = cfg.weight_scale / math.sqrt(cfg.e)
    out = []
    for _ in cfg.activations:
        row = []
        for _ in range(cfg.n_rnns):
            U, V, b = rng.uniform(-s, s, (cfg.e, cfg.e)), rng.uniform(-s, s, (cfg.e, 2)), rng.uniform(-s, s, cfg.e)
            row.append((U, V, b))
            for _ in range(cfg.n_lambda):
                rng.standard_normal(cfg.e + 2)
            for _ in range(cfg.n_lambda):
                rng.uniform()
        out.append(row)
    return cfg, out


def _replay_ok(cfg, weights, result):
    """Whether the replayed weights give the recorded error of the first RNN at the largest N (to 1e-9)."""
    import theory.signature as S

    a = 0
    U, V, b = weights[a][0]
    X = spiral(cfg.n_points, cfg.L)
    Xb = S.time_augment(X, cfg.L)
    N = max(cfg.Ns)
    H = S.cde_solution(Xb, U, V, b, cfg.L, cfg.activations[a], substeps=16)
    P = S.star_products(U, V, b, cfg.L, N + 1, cfg.activations[a])
    err = np.linalg.norm(S.taylor_expansion(S.signature(Xb, N), P) - H[-1])
    return abs(err - result.errors[a, 0, -1]) <= 1e-9 * max(1.0, err)


def fig51_figure(result, claim_id="rnn-kernel/fig-5.1"):
    """(a) ||H_1 - H^N_1|| against N on a log scale, every RNN, both activations; (b) the logistic RNNs' error at the
    largest N against ||W||_F, W = [U V] (weights replayed from the preset's seed)."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(10, 4))
    Ns = np.array(result.Ns)
    for a, act in enumerate(result.activations):
        e = result.errors[a]
        axes[0].semilogy(Ns, e.T, "-", color=f"C{a}", alpha=max(0.02, min(0.4, 8 / e.shape[0])), lw=0.8)
        axes[0].semilogy(Ns, np.median(e, axis=0), "o-", color=f"C{a}", lw=2,
                         label=f"{act}: median over {e.shape[0]} RNNs (log ratio per order "
                               f"{result.fits[a].slope:.2f})")
    axes[0].set_xlabel("N (order of the Taylor expansion)")
    axes[0].set_ylabel("||H_1 - H^N_1||")
    axes[0].set_title(f"{claim_id} (a): error against N", fontsize=9)
    axes[0].legend(fontsize=7)
    cfg, weights = _replayed_weights(result)
    act = "logistic" if "logistic" in result.activations else result.activations[0]
    a = list(result.activations).index(act)
    if cfg is not None and _replay_ok(cfg, weights, result):
        w = [np.linalg.norm(np.hstack([U, V])) for U, V, _ in weights[a]]
        axes[1].semilogy(w, result.errors[a, :, -1], "o", ms=3, alpha=0.6, color=f"C{a}",
                         label=f"{act}, N = {result.Ns[-1]}")
        axes[1].axvline((1 - cfg.L) / (8 * A_CONST[act] ** 2 * 3), color="k", ls=":",
                        label="radius (1 - L) / (8 a^2 (d + 1)) of (5.11)")
        axes[1].set_xlabel("||W||_F, W = [U V]")
        axes[1].legend(fontsize=7)
    else:
        axes[1].text(0.5, 0.5, "weights not recorded for this run's sizes", ha="center", transform=axes[1].transAxes)
    axes[1].set_ylabel("||H_1 - H^N_1||")
    axes[1].set_title(f"{claim_id} (b): error against the norm of the weights", fontsize=9)
    return save_figure(fig, claim_id)


register_figure(
    K, "fig-5.1", "Approximation of the RNN ODE by the step-N Taylor expansion: error against N (a) and against the "
                  "norm of the weights (b)",
    claims=("rnn-kernel/fig-5.1",), experiment="rnn_kernel.prop59", draw=fig51_figure,
    criterion=(f"for every activation (tanh, logistic) the least-squares slope of log ||H_1 - H^N_1|| against N "
               f"over the RNNs is <= {PROP59_RATE['slope_max']:g} (at least a factor e per order: 'converges "
               "exponentially fast in N')"),
    printed=(Printed("random RNNs", 1000, "Section 5.4 and Appendix 5.D (10^3)", measured="config.n_rnns",
                     note="per activation; the check preset has 8"),
             Printed("hidden units", 2, "Section 5.4 and Appendix 5.D", measured="config.e"),
             Printed("radius 1 / (8 a^2 d) of condition (5.11)", 0.01, "Section 5.4, text ('~ 0.01 here')",
                     note="the package's form (1 - L) / (8 a^2 (d + 1)) is drawn in panel (b)"),
             Printed("error against N", None, "Fig. 5.1a", measured="log_ratio_per_order",
                     note="curve only: exponential decay")),
    preset_note=("paper preset: 10^3 RNNs per activation, N = 1..5 (the authors' code goes to order 5), 50 points "
                 "of Lambda sampled per RNN; the reference solution is our RK4 (16 substeps), not LSODA; panel (b) "
                 "is drawn for the logistic RNNs as in the document (its weights replayed from the preset's seed and "
                 "checked against the recorded error of the first RNN). The paper preset ran in 716 s on one of two "
                 "shared cores (results/rnn-kernel/fig-5.1)"))

_PRINTED_52 = (
    Printed("hidden units", 32, "Section 5.4; Appendix 5.D", measured="config.hidden"),
    Printed("training examples", 50, "Section 5.4; Appendix 5.D", measured="config.n_train"),
    Printed("epochs", 200, "Section 5.4; Appendix 5.D", measured="config.epochs"),
    Printed("initial learning rate (Adam)", 0.1, "Appendix 5.D", measured="config.lr"),
    Printed("regularization parameter lambda", 0.1, "Appendix 5.D", measured="config.lam"),
    Printed("truncation N of the RKHS norm", 3, "Appendix 5.D", measured="config.depth"),
    Printed("test examples", 1000, "Appendix 5.D", measured="config.n_test", note="the check preset has 200"),
    Printed("PGD steps", 50, "Appendix 5.D", measured="config.pgd_steps", note="the check preset has 10"),
    Printed("runs", 20, "Appendix 5.D", measured="config.repeats", note="the check preset has 1"),
)

_PAPER_NOTE = ("paper preset: Appendix 5.D (20 runs, 200 epochs, lr 0.1 halved every 40, lambda = 0.1, N = 3, 1000 "
               "test examples, 50 PGD steps); the spirals, the radii eps = 0.2 ... 1 and the halving schedule follow "
               "the authors' code (the text prints no radius); L = 0.05 in the factor 2 / (1 - L) of the field (5.5) "
               "is ours (at L = 0.5 the penalised RNN stays at chance); a single logit psi . h_T + c with the binary "
               "cross-entropy stands for the two-class read-out, and the RKHS norm is the thesis' (5.7) of the "
               "coefficients of Thm 5.11 at hbar_0 = (h_0, 0) (inputs translated to start at 0). On one CPU core the "
               "paper preset takes about 40 minutes (a penalised training about 16 s, each attack at 1000 examples "
               "about 10 s per radius); it was not run here")

register_figure(
    K, "fig-5.2", "Adversarial accuracy against the PGD radius eps (Frobenius norm), RNN and RKHS-penalised RNN, "
                  "rotation direction of spirals",
    claims=("rnn-kernel/fig-5.2",), experiment="rnn_kernel.robustness", draw=fig52_figure,
    criterion=("the penalised RNN's mean adversarial test accuracy over the runs is >= the unpenalised one's at every "
               "eps > 0 of the grid"),
    printed=_PRINTED_52 + (Printed("adversarial accuracy against eps", None, "Fig. 5.2", measured="min_adv_gain",
                                   note="curves only: 'the penalization seems to make the network more stable'"),
                           Printed("training time on a V100, RNN / penalised (s)", 8.5, "Appendix 5.D",
                                   note="12 s for the penalised RNN; not measured (CPU)")),
    preset_note=_PAPER_NOTE)

register_figure(
    K, "fig-5.3", "Frobenius norm of the weights and RKHS norm during training, one run picked at random",
    claims=("rnn-kernel/fig-5.3",), experiment="rnn_kernel.robustness", draw=fig53_figure,
    criterion=(f"in the run shown, at the end of training the penalised RNN's RKHS norm ||xi_alpha||_H (N = 3) is "
               f"below the unpenalised one's while their Frobenius norms ||[U V]||_F are within a factor "
               f"{FIG53_FROBENIUS_RATIO_MAX:g}"),
    printed=(Printed("RKHS norms of the two networks", None, "Section 5.4, text", measured="rkhs_ratio",
                     note="'very different RKHS norms' (penalised / unpenalised)"),
             Printed("Frobenius norms of the two networks", None, "Section 5.4, text", measured="frobenius_ratio",
                     note="'Frobenius norms of similar magnitude' (larger / smaller)")),
    preset_note=_PAPER_NOTE)

register_figure(
    K, "fig-5.4", "A path X and its stopped time-augmented paths X~_[j], j = 1..T",
    illustration=("diagram of the proof of Thm 5.12: the path X~_[j] equal to the time-augmented X-bar on [0, j/T] "
                  "and constant on [j/T, 1]"))
