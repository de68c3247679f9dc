"""Figure 4.1 of the thesis (Marion), chapter 4, on MNIST: the generalization gap of the 1/L-scaled ResNet (4.10)
against the Lipschitz constant of its weights, and against the weight-difference penalty.

Registered as ``gen_bounds.fig41_mnist`` (claim ``gen-bounds/fig-4.1/mnist``). The setup of Section 4.4.3 and
Appendix 4.B: H_0 = A x (x the vectorized 28 x 28 image), H_(k+1) = H_k + W_(k+1) ReLU(H_k) / L, output B H_L;
d = 30, L = 1000 (Table 4.1); W initialised smooth in depth (RBF Gaussian processes of bandwidth 0.1, divided
by sqrt(d), :func:`theory.generalization.smooth_weights`), A and B i.i.d. N(0, 1 / columns); cross-entropy,
mini-batches of 128, Adam (default betas) at learning rate 0.02, the standard 60k / 10k split.

* Fig. 4.1a: ``repeats_a`` trainings of ``epochs_a`` epochs without penalty, with A and B trained and with A and B
  fixed; after every epoch one dot (max_k ||W_(k+1) - W_k||_inf (entrywise), test - train cross-entropy).
* Fig. 4.1b: A and B fixed, ``repeats_b`` trainings of ``epochs_b`` epochs per lambda of the penalty
  lambda (sum_k ||W_(k+1) - W_k||_F^2)^(1/2); the final gap against lambda.

The data are read through :mod:`theory.datasets` (``mnist``); without them the experiment raises
:class:`theory.datasets.DatasetMissing` (``theory reproduce`` skips the figure, naming the dataset).
:func:`run_fig41` takes the arrays, so that a control runs on any small data set.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.claims import Verdict, threshold_verdict

from .. import register
from ..config import Bool, Config, Int, OrNone, Real, Reals, Seed, field
from ... import datasets as _datasets

__all__ = ["Fig41MnistConfig", "Fig41MnistResult", "run_fig41", "measure_fig41_mnist", "fig41_mnist_verdict",
           "fig41_mnist_figure", "FIG41_MNIST_PRESETS"]


@dataclasses.dataclass(frozen=True)
class Fig41MnistConfig(Config):
    """Figure 4.1 on MNIST (Section 4.4.3, Appendix 4.B); sizes of the paper preset from Table 4.1 and 4.B."""

    data: str | None = _datasets.data_field("MNIST")
    d: int = field(Int(low=1), 30, "Width d (Table 4.1: 30).")
    L: int = field(Int(low=1), 30, "Depth L (Table 4.1: 1000).")
    n_train: int | None = field(OrNone(Int(low=1), "all"), 2000, "Training images used (first ones after a "
                                "seeded shuffle; None: all 60000).")
    n_test: int | None = field(OrNone(Int(low=1), "all"), 1000, "Test images used (None: all 10000).")
    epochs_a: int = field(Int(low=1), 6, "Epochs per training of Fig. 4.1a (Appendix 4.B: 30).")
    repeats_a: int = field(Int(low=1), 2, "Trainings per setup (A, B trained / fixed) of Fig. 4.1a (4.B: 10).")
    epochs_b: int = field(Int(low=1), 6, "Epochs per training of Fig. 4.1b (caption: 50).")
    repeats_b: int = field(Int(low=1), 2, "Trainings per lambda of Fig. 4.1b (caption: 20).")
    lams: tuple = field(Reals(0, min_len=2, increasing=True), (0.0, 0.01, 0.1, 1.0), "Penalty weights lambda, "
                        "strictly increasing, the first 0 (the document does not print its values).")
    batch: int = field(Int(low=1), 128, "Mini-batch size (4.B: 128).")
    lr: float = field(Real(0, closed="neither"), 0.02, "Adam learning rate (4.B: 0.02).")
    bandwidth: float = field(Real(0, closed="neither"), 0.1, "RBF bandwidth of the smooth initialisation (0.1).")
    lam_sign: float = field(Real(-1, 1), 1.0, "Sign of the penalty: 1 for the document; -1 (a control) rewards "
                            "weight differences instead.")
    both_setups: bool = field(Bool(), True, "Fig. 4.1a with A, B trained as well as fixed (False: fixed only).")
    seed: int = field(Seed(), 0, "Seed of the subset, the initialisations (numpy) and the batches (torch).")

    def check(self):
        if self.lams[0] != 0:
            raise self.invalid("lams", "start with 0 (the unpenalised runs)")


@dataclasses.dataclass(frozen=True)
class Fig41MnistResult:
    """``dots[setup]``: the (max difference, gap) pairs of Fig. 4.1a, one per epoch of every training;
    ``spearman[setup]`` their rank correlation; ``gap_b`` / ``test_b`` / ``max_diff_b`` (repeats x lams): final
    gap, test loss and max difference of Fig. 4.1b."""

    setups: tuple
    dots: dict
    spearman: dict
    lams: tuple
    gap_b: tuple
    test_b: tuple
    max_diff_b: tuple

    def mean_gap(self):
        return np.mean(np.array(self.gap_b), axis=0)

    def to_measured(self):
        g = self.mean_gap()
        out = {f"spearman.{s}": float(self.spearman[s]) for s in self.setups}
        out["min_spearman"] = float(min(self.spearman.values()))
        out["mean_gap_by_lambda"] = [float(v) for v in g]
        out["mean_test_loss_by_lambda"] = [float(v) for v in np.mean(np.array(self.test_b), axis=0)]
        out["mean_max_diff_by_lambda"] = [float(v) for v in np.mean(np.array(self.max_diff_b), axis=0)]
        out["gap_drop_largest_lambda"] = float(g[0] - g[-1])
        md = out["mean_max_diff_by_lambda"]
        out["max_diff_drop_largest_lambda"] = float(md[0] - md[-1])
        return out


def _train(torch, cfg, Xtr, ytr, Xte, yte, *, lam, train_maps, rng, gen):
    """One training; returns per epoch (max difference, gap, test loss)."""
    import theory.generalization as G

    p, c = Xtr.shape[1], int(max(ytr.max(), yte.max())) + 1
    W = torch.tensor(G.smooth_weights(cfg.L, cfg.d, cfg.bandwidth, rng), dtype=torch.float32, requires_grad=True)
    A = torch.tensor(rng.normal(size=(cfg.d, p)) / math.sqrt(p), dtype=torch.float32, requires_grad=train_maps)
    B = torch.tensor(rng.normal(size=(c, cfg.d)) / math.sqrt(cfg.d), dtype=torch.float32, requires_grad=train_maps)
    params = [W] + ([A, B] if train_maps else [])
    opt = torch.optim.Adam(params, lr=cfg.lr)
    ce = torch.nn.functional.cross_entropy

    def forward(X):
        H = X @ A.T
        for k in range(cfg.L):
            H = H + torch.relu(H) @ W[k].T / cfg.L
        return H @ B.T

    def loss_on(X, y):
        with torch.no_grad():
            return float(sum(ce(forward(X[i:i + 2000]), y[i:i + 2000], reduction="sum")
                             for i in range(0, len(y), 2000)) / len(y))

    out = []
    n = len(ytr)
    for _ in range(cfg.epochs_a if lam is None else cfg.epochs_b):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, cfg.batch):
            idx = perm[i:i + cfg.batch]
            loss = ce(forward(Xtr[idx]), ytr[idx])
            if lam:
                loss = loss + cfg.lam_sign * lam * torch.sqrt(((W[1:] - W[:-1]) ** 2).sum())
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            md = float((W[1:] - W[:-1]).abs().max()) if cfg.L > 1 else 0.0
        tr, te = loss_on(Xtr, ytr), loss_on(Xte, yte)
        if not (math.isfinite(tr) and math.isfinite(te)):
            raise FloatingPointError("gen_bounds.fig41_mnist: the training diverged (reduce `lr`)")
        out.append((md, te - tr, te))
    return out


def run_fig41(cfg: Fig41MnistConfig, Xtr, ytr, Xte, yte) -> Fig41MnistResult:
    """Figure 4.1 on the arrays given (rows of features, integer labels), with the sizes of ``cfg``."""
    import torch
    from scipy.stats import spearmanr

    torch.set_num_threads(1)
    rng = np.random.default_rng(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    Xtr, Xte = (torch.tensor(np.asarray(x, dtype=np.float32)) for x in (Xtr, Xte))
    ytr, yte = (torch.tensor(np.asarray(y, dtype=np.int64)) for y in (ytr, yte))
    setups = ("trained", "fixed") if cfg.both_setups else ("fixed",)
    dots, rho = {}, {}
    for s in setups:
        dots[s] = []
        for _ in range(cfg.repeats_a):
            rec = _train(torch, cfg, Xtr, ytr, Xte, yte, lam=None, train_maps=(s == "trained"), rng=rng, gen=gen)
            dots[s] += [(md, g) for md, g, _ in rec]
        x, y = np.array(dots[s]).T
        rho[s] = float(spearmanr(x, y)[0]) if np.ptp(x) > 0 and np.ptp(y) > 0 else float("nan")
        dots[s] = tuple(dots[s])
    gap, test, md = [], [], []
    for _ in range(cfg.repeats_b):
        rows = [_train(torch, cfg, Xtr, ytr, Xte, yte, lam=lam, train_maps=False, rng=rng, gen=gen)[-1]
                for lam in cfg.lams]
        md.append(tuple(r[0] for r in rows))
        gap.append(tuple(r[1] for r in rows))
        test.append(tuple(r[2] for r in rows))
    return Fig41MnistResult(setups, dots, rho, tuple(cfg.lams), tuple(gap), tuple(test), tuple(md))


def _subset(x, y, n, rng):
    if n is None or n >= len(y):
        return x, y
    idx = rng.permutation(len(y))[:n]
    return x[idx], y[idx]


def measure_fig41_mnist(cfg: Fig41MnistConfig) -> Fig41MnistResult:
    """MNIST from the data root (``cfg.data`` or ``$THEORY_DATA``), pixels scaled to [0, 1], vectorized (784)."""
    x_tr, y_tr, x_te, y_te = _datasets.load("mnist", cfg.data)
    rng = np.random.default_rng(cfg.seed + 12345)
    x_tr, y_tr = _subset(x_tr, y_tr, cfg.n_train, rng)
    x_te, y_te = _subset(x_te, y_te, cfg.n_test, rng)
    flat = lambda x: x.reshape(len(x), -1).astype(np.float32) / 255.0  # noqa: E731
    return run_fig41(cfg, flat(x_tr), y_tr, flat(x_te), y_te)


#: Fig. 4.1a's "positive correlation": the Spearman rank correlation of its dots above this, in every setup
FIG41_MNIST_SPEARMAN_MIN = 0.0


def fig41_mnist_verdict(result: Fig41MnistResult) -> Verdict:
    """Qualitative (Fig. 4.1, signs with no predicted value): (a) the Spearman rank correlation between
    max_k ||W_(k+1) - W_k||_inf and the gap over the per-epoch dots is > 0 in every setup (A, B trained; fixed);
    (b) at the largest lambda the mean final gap AND the mean final max_k ||W_(k+1) - W_k||_inf are below their
    means at lambda = 0 (both drops > 0: the gap falls together with the Lipschitz constant of the weights; a gap
    that falls while the weight differences grow is not the effect Theorem 4.8 suggests)."""
    m = result.to_measured()
    gaps = ", ".join(f"{g:.4f}" for g in m["mean_gap_by_lambda"])
    return threshold_verdict("qualitative", m, {"min_spearman_above": FIG41_MNIST_SPEARMAN_MIN,
                                                "gap_drop_largest_lambda_above": 0.0,
                                                "max_diff_drop_largest_lambda_above": 0.0},
                             context=f"Spearman of Fig. 4.1a by setup: "
                                     f"{', '.join(f'{s} {result.spearman[s]:.2f}' for s in result.setups)}; mean "
                                     f"final gap for lambda = {list(result.lams)}: {gaps}")


def fig41_mnist_figure(result: Fig41MnistResult, claim_id="gen-bounds/fig-4.1/mnist"):
    """(a) gap against max_k ||W_(k+1) - W_k||_inf, one dot per epoch, both setups; (b) final gap against lambda."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(10, 4))
    for k, s in enumerate(result.setups):
        x, y = np.array(result.dots[s]).T
        axes[0].plot(x, y, "o", ms=4, alpha=0.7, color=f"C{k}",
                     label=f"A, B {s} (Spearman {result.spearman[s]:.2f})")
    axes[0].set_xlabel("max_k ||W_(k+1) - W_k||_inf")
    axes[0].set_ylabel("generalization gap (test - train cross-entropy)")
    axes[0].set_title(f"{claim_id} (a): gap vs Lipschitz constant of the weights", fontsize=9)
    axes[0].legend(fontsize=7)
    lam = np.array([max(v, result.lams[1] / 10) for v in result.lams])
    g = np.array(result.gap_b)
    for row in g:
        axes[1].semilogx(lam, row, ".", color="C0", alpha=0.4)
    axes[1].semilogx(lam, g.mean(axis=0), "o-", color="C0", label="mean final gap (A, B fixed)")
    axes[1].set_xlabel(f"penalty lambda (0 drawn at {result.lams[1] / 10:g})")
    axes[1].set_ylabel("generalization gap")
    axes[1].set_title(f"{claim_id} (b): gap vs penalization factor", fontsize=9)
    axes[1].legend(fontsize=7)
    return save_figure(fig, claim_id)


FIG41_MNIST_PRESETS = {
    "check": Fig41MnistConfig(),
    # Table 4.1 and Appendix 4.B: d = 30, L = 1000, all of MNIST, 10 x 30 epochs (a), 20 x 50 epochs per lambda (b)
    "paper": Fig41MnistConfig(L=1000, n_train=None, n_test=None, epochs_a=30, repeats_a=10, epochs_b=50,
                              repeats_b=20),
}

register("gen_bounds.fig41_mnist", config=Fig41MnistConfig, presets=FIG41_MNIST_PRESETS, measure=measure_fig41_mnist,
         verdict=fig41_mnist_verdict, claims=("gen-bounds/fig-4.1/mnist",), summary=lambda r: r.to_measured())
