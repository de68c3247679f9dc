r"""Figure 9 of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth
Regime", Section 4.2 and Appendix E, Table 4; thesis Figure 2.9) as a library function: accuracy after
training over the (Hurst index, beta) grid.

``scaling.fig9`` (:func:`fig9`, :func:`fig9_verdict`)
    res-1, :math:`h_k = h_{k-1} + L^{-\beta} V_k\,\mathrm{ReLU}(h_{k-1})`, width d = 30, depth L = 1000,
    with weights whose sequences over the layers are unit-variance fractional Gaussian noises of Hurst
    index H (increments of fractional Brownian motion), trained by Adam for 10 epochs with the learning
    rate divided by 10 after 5, on a grid of learning rates (1e-4 to 1); each (H, beta) cell reports the
    best test accuracy over the grid. The paper observes the pattern of Figure 7 shifted downwards:
    cells far below the critical line :math:`\beta^*(H) = \max(H, 1/2)` do not learn (the gradients
    explode), while accuracy is about constant on the identity side.

    The paper trains on MNIST and CIFAR-10, which cannot be downloaded here: this experiment trains on
    scikit-learn's ``digits`` (1797 grey images of 8 x 8 pixels, 10 classes, shipped with the package;
    80% for training, 20% for the test), mapped to the width d by an input layer
    :math:`h_0 = A x` (A uniform of fan-in 64 at initialisation) and read out by a layer B (d x 10,
    Gaussian at initialisation) with the cross-entropy loss; V, A and B are all trained. The weights of one Hurst
    index are drawn once and shared by every beta and learning rate of that index, so a row of the
    grid differs only by the scaling. The training is :func:`theory.backends.scaling_train.train`, the
    code of Figure 8's torch backend, batched over every (H, beta, learning rate) network of a chunk.

    The verdict reads the figure's message with thresholds fixed before any run: every cell with
    :math:`\beta \ge \max(H, 1/2) + 0.1` (identity side) reaches a best test accuracy of at least
    :data:`FIG9_ACCEPT` ``["learned_min"]`` = 0.8 (a linear classifier on these features reaches about
    0.95), and every cell with :math:`\beta \le \max(H, 1/2) - 0.3` (far below the line, where the
    paper's figure is dark) at most ``["failed_max"]`` = 0.5 (chance is 0.1). A cell whose training
    overflowed for a learning rate counts as not learned at that rate. The statement concerns depth
    1000 (at small depth the explosion factor :math:`\exp(c L^{1 - 2\beta})` is mild and every cell
    learns): the ``"check"`` preset is a small instance for tests, not a verification.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.backends import resolve
from theory.claims import threshold_verdict
from theory.experiments._digits import load_digits_arrays
from theory.experiments._registry import register
from theory.experiments.scaling._scale import BackendConfig, backend_field, device_field, dtype_field
from theory.experiments.config import Int, OrNone, Reals, Seed, field
from theory.scaling import weights

__all__ = ["Fig9Config", "Fig9Result", "FIG9_PRESETS", "FIG9_ACCEPT", "fig9", "fig9_verdict", "fig9_plan"]


@dataclass(frozen=True)
class Fig9Config(BackendConfig):
    """Configuration of the Figure 9 experiment (training of res-1 over the (H, beta) grid)."""

    hurst: tuple = field(Reals(0, 1, closed="neither"), (0.2, 0.8), "Hurst indices of the fGn weights at "
                         "initialisation (the paper: 0.05 to 0.97).")
    beta: tuple = field(Reals(0, 10, closed="neither", increasing=True), (0.3, 1.0), "Scaling exponents (the "
                        "paper: 0.2 to 1.3).")
    lrs: tuple = field(Reals(0, 100, closed="neither"), (1e-3, 1e-2), "The grid of Adam learning rates; a cell "
                       "reports its best test accuracy over it (the paper: 1e-4, 1e-3, 1e-2, 1e-1, 1).")
    L: int = field(Int(low=2), 20, "Depth (the paper: 1000).")
    d: int = field(Int(low=2), 12, "Width (the paper: 30).")
    epochs: int = field(Int(low=1), 2, "Passes over the training set (the paper: 10); the learning rate is "
                        "divided by 10 after half of them (rounded down; the paper: after 5).")
    batch: int = field(Int(low=1), 64, "Mini-batch size (the paper does not state it; 128 here).")
    n_train: int = field(Int(10, 1437), 256, "Training images taken from the 80% training part of ``digits``.")
    seed: int = field(Seed(), 9, "Seed of the split, the input and read-out layers, the batches and the weights.")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()
    memory: int | None = field(OrNone(Int(low=1), "half the free CUDA memory, 2 GiB on a CPU"), None,
                               "Bytes a chunk of networks may use on the device (None: half the free CUDA memory, "
                               "2 GiB on a CPU).")


FIG9_PRESETS = {
    # the figure's depth and width (L = 1000, d = 30; at small depth every cell learns): 2 Hurst indices x 2 betas
    # (one identity-side, one far-below cell for each H) x 2 learning rates, 4 epochs of 720 training digits
    # (48 s measured on the shared two-core machine, beside another run)
    "check": Fig9Config(hurst=(0.2, 0.8), beta=(0.2, 1.0), lrs=(1e-3, 1e-2), L=1000, d=30, epochs=4, batch=128,
                        n_train=720),
    # Table 4 of Appendix E: res-1, d = 30, L = 1000, beta from 0.2 to 1.3, H from 0.05 to 0.97, the
    # learning-rate grid 1e-4..1, 10 epochs (learning rate / 10 after 5); the grid's step is not stated:
    # 7 Hurst indices x 12 betas (step 0.1) here, 420 networks
    "paper": Fig9Config(hurst=(0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.97),
                        beta=tuple(float(b) for b in np.round(np.arange(0.2, 1.301, 0.1), 3)),
                        lrs=(1e-4, 1e-3, 1e-2, 1e-1, 1.0), L=1000, d=30, epochs=10, batch=128, n_train=1437),
}

#: Acceptance of Figure 9's message, fixed before any run (module docstring).
FIG9_ACCEPT = {"learned_min": 0.8, "failed_max": 0.5, "identity_margin": 0.1, "explosion_margin": 0.3}


@dataclass(frozen=True)
class Fig9Result:
    """``accuracy`` (nH, nB, nLR) test accuracy of every network (NaN where training overflowed),
    ``train_loss`` (nH, nB, nLR) final training loss (NaN likewise), ``best`` (nH, nB) the best test
    accuracy over the learning rates (NaN when every rate overflowed), ``best_lr`` (nH, nB) the rate
    that reached it, ``chance`` the accuracy of the most frequent test class."""

    config: Fig9Config
    accuracy: np.ndarray
    train_loss: np.ndarray
    best: np.ndarray
    best_lr: np.ndarray
    chance: float


def _data(c: Fig9Config):
    X, y = load_digits_arrays("theory.experiments.scaling.fig9")
    rng = np.random.default_rng([c.seed, 0])
    perm = rng.permutation(len(y))
    n_tr = int(0.8 * len(y))
    tr, te = perm[:n_tr][: c.n_train], perm[n_tr:]
    X = X / 16.0
    mu, sd = X[tr].mean(0), X[tr].std(0) + 1e-3
    X = (X - mu) / sd
    A = rng.uniform(-math.sqrt(3 / 64), math.sqrt(3 / 64), (c.d, 64))
    B = rng.standard_normal((c.d, 10)) / math.sqrt(c.d)
    return X[tr], y[tr], X[te], y[te], A, B, rng


def fig9_plan(config: Fig9Config):
    """(networks per chunk, number of chunks, steps) of :func:`fig9` on its backend."""
    from theory.backends.scaling_train import budget, networks_per_chunk

    c = config
    b = resolve(c.backend, c.device, c.dtype)
    G = len(c.hurst) * len(c.beta) * len(c.lrs)
    per = min(G, networks_per_chunk("res1", c.L, c.d, min(c.batch, c.n_train), dtype=c.dtype,
                                    memory=budget(b, c.memory), n_eval=max(c.n_train, 360)))
    steps = c.epochs * math.ceil(c.n_train / c.batch)
    return per, math.ceil(G / per), steps


def fig9(config: Fig9Config) -> Fig9Result:
    """Run the Figure 9 experiment of ``config`` (pure: no files, no globals)."""
    from theory.backends.scaling_train import train

    if not isinstance(config, Fig9Config):
        raise TypeError(f"`config` of theory.experiments.scaling.fig9 must be a Fig9Config; got {type(config).__name__}")
    c = config
    backend = resolve(c.backend, c.device, c.dtype)
    Xtr, ytr, Xte, yte, A, B, rng = _data(c)
    per_epoch = math.ceil(c.n_train / c.batch)
    batches = []
    for _ in range(c.epochs):
        perm = rng.permutation(c.n_train)
        batches += [perm[i * c.batch:(i + 1) * c.batch] for i in range(per_epoch)]
    steps = len(batches)
    factors = np.where(np.arange(steps) < (c.epochs // 2) * per_epoch, 1.0, 0.1)
    V0 = {H: weights(c.L, c.d, "fbm", H, rng=np.random.default_rng([c.seed, 1, int(round(1e6 * H))]))
          for H in c.hurst}
    cells = [(i, j, k) for i in range(len(c.hurst)) for j in range(len(c.beta)) for k in range(len(c.lrs))]
    per, _, _ = fig9_plan(c)
    shape = (len(c.hurst), len(c.beta), len(c.lrs))
    acc, loss = np.full(shape, np.nan), np.full(shape, np.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(cells), per):
            block = cells[start:start + per]
            V = np.stack([V0[c.hurst[i]] for i, _, _ in block])
            alphas = [float(c.L) ** (-c.beta[j]) for _, j, _ in block]
            lrs = [c.lrs[k] for _, _, k in block]
            (Vt,), losses, [(_, a)] = train("res1", (V,), alphas, lrs, Xtr, B, ytr, steps=steps, backend=backend,
                                            loss="xent", n_classes=10, batches=batches, lr_factors=factors,
                                            evaluate_on=[(Xte, yte)], A=A, train_io=True)
            ok = np.all(np.isfinite(Vt.reshape(len(block), -1)), axis=1) & np.isfinite(losses[-1])
            for n, (i, j, k) in enumerate(block):
                if ok[n]:
                    acc[i, j, k], loss[i, j, k] = a[n], losses[-1, n]
    best = np.full(shape[:2], np.nan)
    best_lr = np.full(shape[:2], np.nan)
    for i in range(shape[0]):
        for j in range(shape[1]):
            if np.any(np.isfinite(acc[i, j])):
                k = int(np.nanargmax(acc[i, j]))
                best[i, j], best_lr[i, j] = acc[i, j, k], c.lrs[k]
    chance = float(np.max(np.bincount(yte, minlength=10)) / len(yte))
    return Fig9Result(c, acc, loss, best, best_lr, chance)


def fig9_verdict(result: Fig9Result, accept=FIG9_ACCEPT):
    """A bound at every cell (module docstring): the lowest best accuracy of the identity-side cells
    (beta >= max(H, 1/2) + ``identity_margin``) is at least ``learned_min``, the highest of the cells far below
    the line (beta <= max(H, 1/2) - ``explosion_margin``) at most ``failed_max``, and both sets are non-empty
    (:func:`theory.claims.threshold_verdict`, kind ``"bound"``)."""
    c = result.config
    line = np.maximum(np.array(c.hurst), 0.5)[:, None]
    beta = np.array(c.beta)[None, :]
    best = np.where(np.isfinite(result.best), result.best, 0.0)
    ident = beta >= line + accept["identity_margin"] - 1e-12
    far = beta <= line - accept["explosion_margin"] + 1e-12
    n_id, n_far = int(ident.sum()), int(far.sum())
    lowest = float(best[ident].min()) if n_id else float("nan")
    highest = float(best[far].max()) if n_far else float("nan")
    context = (f"identity side beta >= max(H, 1/2) + {accept['identity_margin']:g}, far side beta <= max(H, 1/2) - "
               f"{accept['explosion_margin']:g}; chance {result.chance:.3f}; L = {c.L}, d = {c.d}")
    if c.L < 1000:
        context += "; depth below the figure's 1000, where the explosion is mild: not a verification of its message"
    measured = {"lowest_identity_accuracy": lowest, "highest_far_accuracy": highest, "identity_cells": n_id,
                "far_cells": n_far, "hurst": list(c.hurst), "beta": list(c.beta), "lrs": list(c.lrs), "L": c.L,
                "d": c.d, "epochs": c.epochs, "best_accuracy": result.best.tolist(),
                "best_lr": result.best_lr.tolist(), "chance": result.chance}
    return threshold_verdict("bound", measured, {
        "lowest_identity_accuracy_min": accept["learned_min"], "highest_far_accuracy_max": accept["failed_max"],
        "identity_cells_min": 1, "far_cells_min": 1}, context=context)


def _fig9_summary(result: Fig9Result) -> dict:
    c = result.config
    return {f"best_H{H:g}_beta{b:g}": float(result.best[i, j])
            for i, H in enumerate(c.hurst) for j, b in enumerate(c.beta)}


# registered with its claim, scaling/fig-9, by theory.experiments.scaling.figures (the figure's declaration)
