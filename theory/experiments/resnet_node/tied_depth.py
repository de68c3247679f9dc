r"""Figure 3(a) of ``resnet-node`` on a stand-in: tied-weight residual networks on scikit-learn's digits.

Fig. 3(a) of the paper (thesis Fig. 2.3(a)) trains, on CIFAR-10, ResNets whose weights are tied within each
layer, against the number of blocks per layer: with the step :math:`1/N` of Eq. (1) the accuracy stays,
with the classical rule :math:`x_{n+1} = x_n + f(x_n)` it degrades at large depth. The CIFAR-10 run is
:func:`theory.experiments.resnet_node.fig3a`; this is the same comparison at a CPU's size, on a stand-in
for the data and the architecture:

* data: the 1797 grey-level 8 x 8 digits of scikit-learn, 20% held out (a seeded split), standardised with
  the training pixels' mean and standard deviation; the state is the image, :math:`x_0 \in \mathbb R^{64}`;
* network: one layer of :math:`N` residual steps with **one** parameter set (weights tied across depth),
  :math:`x_{n+1} = x_n + h\, V \tanh(W x_n + b)` with :math:`h = 1/N` or :math:`h = 1`, then a linear head
  on 10 classes; initialisation :math:`W \sim \mathcal N(0, 1/d)`, :math:`V \sim \mathcal N(0, 1/m)` (the
  scale of PyTorch's default initialisation of a linear layer), :math:`b = 0`, head :math:`\mathcal N(0, 1/d)`;
  the same initial weights for both rules;
* training: SGD with momentum 0.9, weight decay 5e-4, batch 128, learning rate 0.1 with a cosine schedule
  (the recipe of the thesis' Appendix 2.B.1 for the CIFAR ResNets), float32; a network whose loss is not
  finite keeps its last weights (its non-finite logits count as errors);
* all (rule, seed) networks of one depth train together as one batch of networks (``torch.bmm``).

With :math:`h = 1` the tied residual adds the same bounded map :math:`N` times: :math:`\|x_N\|` grows like
:math:`N \|V\|`, and so do the logits and the gradients, which SGD at a learning rate independent of
:math:`N` does not survive at large :math:`N`; with :math:`h = 1/N` the network is an Euler scheme of the
ODE :math:`\dot x = V\tanh(Wx + b)` and its accuracy does not depend on :math:`N` to first order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np

from theory.claims import Verdict, threshold_verdict
from theory.experiments._registry import register

from .._digits import N_CLASSES, load_digits_arrays
from ..config import Choices, Config, Int, Ints, Real, Seeds, field
from ._common import _require

__all__ = ["Fig3aDigitsConfig", "Fig3aDigitsResult", "fig3a_digits", "fig3a_digits_verdict", "FIG3A_DIGITS_PRESETS",
           "FIG3A_DIGITS_EXPECTED"]

_SCALINGS = ("1/N", "classical")


@dataclass(frozen=True)
class Fig3aDigitsConfig(Config):
    """Tied-weight residual networks on the digits, step 1/N against step 1, over depth."""

    depths: tuple = field(Ints(low=1, min_len=2, increasing=True), (4, 16, 64, 256), "Depths N, increasing.")
    seeds: tuple = field(Seeds(), (0, 1, 2), "Runs (split, initialisation, mini-batch order per seed).")
    scalings: tuple = field(Choices(*_SCALINGS, distinct=True), _SCALINGS, "Steps compared: '1/N' and "
                            "'classical' (step 1).")
    width: int = field(Int(low=1), 32, "Hidden width m of the residual V tanh(W x + b).")
    epochs: int = field(Int(low=1), 30, "Training epochs.")
    batch: int = field(Int(low=1), 128, "Mini-batch size.")
    lr: float = field(Real(0, 10, closed="right"), 0.1, "Initial learning rate (cosine schedule to 0).")
    momentum: float = field(Real(0, 1, closed="left"), 0.9, "Momentum of SGD.")
    weight_decay: float = field(Real(0, 1), 5e-4, "Weight decay of SGD.")
    test_fraction: float = field(Real(0, 0.5, closed="neither"), 0.2, "Held-out fraction.")

    def check(self):
        if set(self.scalings) != set(_SCALINGS):
            raise self.invalid("scalings", "hold both '1/N' and 'classical' (the figure compares them)")
        if self.batch > 1797 - int(round(self.test_fraction * 1797)):
            raise self.invalid("batch", "be at most the number of training images")


#: The criterion, fixed before any run (mean test accuracy over the seeds): at the largest depth the 1/N
#: network is at least 20 points above the classical one, and it loses at most 3 points from its accuracy
#: at the smallest depth.
FIG3A_DIGITS_EXPECTED = {"gap_at_largest_min": 0.20, "scaled_drop_max": 0.03}

FIG3A_DIGITS_PRESETS = {
    # four epochs (the budget of a check), the depths 4 ... 256 and the three runs of Fig. 3(a)
    "check": Fig3aDigitsConfig(epochs=4),
    # the three runs of Fig. 3(a), 30 epochs, depths up to 1024
    "paper": Fig3aDigitsConfig(depths=(4, 16, 64, 256, 1024)),
}


@dataclass(frozen=True)
class Fig3aDigitsResult:
    """``accuracy[scaling]``: array (depths, seeds) of final test accuracies; ``train_loss[scaling]`` the
    final mean training loss (nan where it diverged)."""

    config: Fig3aDigitsConfig
    accuracy: dict
    train_loss: dict = _field(repr=False)

    def mean(self, scaling):
        return self.accuracy[scaling].mean(axis=1)


def _step(scaling: str, N: int) -> float:
    """The residual step: 1/N (Eq. (1)) or 1 (the classical rule)."""
    return 1.0 / N if scaling == "1/N" else 1.0


def _data(config, seed):
    X, y = load_digits_arrays("theory.experiments.resnet_node.fig3a_digits")
    n = X.shape[0]
    n_test = int(round(config.test_fraction * n))
    order = np.random.default_rng([seed, 0]).permutation(n)
    train, test = order[n_test:], order[:n_test]
    mu, sd = X[train].mean(), X[train].std()
    return (X[train] - mu) / sd, y[train], (X[test] - mu) / sd, y[test]


def _train_depth(config, N, data):
    """Train the (scaling, seed) networks of depth N together; returns accuracies and losses, (scalings, seeds)."""
    import torch

    F = torch.nn.functional
    d, m, S, R = 64, config.width, len(config.seeds), len(config.scalings)
    K = R * S
    dt = torch.float32
    X = torch.as_tensor(np.stack([data[s][0] for s in config.seeds] * R), dtype=dt)       # (K, n, d)
    y = torch.as_tensor(np.stack([data[s][1] for s in config.seeds] * R))                 # (K, n)
    Xt = torch.as_tensor(np.stack([data[s][2] for s in config.seeds] * R), dtype=dt)
    yt = torch.as_tensor(np.stack([data[s][3] for s in config.seeds] * R))
    init = []
    for s in config.seeds:
        rng = np.random.default_rng([s, 1])
        init.append((rng.standard_normal((m, d)) / math.sqrt(d), rng.standard_normal((d, m)) / math.sqrt(m),
                     rng.standard_normal((N_CLASSES, d)) / math.sqrt(d)))
    W = torch.tensor(np.stack([w for w, _, _ in init] * R), dtype=dt, requires_grad=True)
    V = torch.tensor(np.stack([v for _, v, _ in init] * R), dtype=dt, requires_grad=True)
    b = torch.zeros((K, 1, m), dtype=dt, requires_grad=True)
    Wh = torch.tensor(np.stack([h for _, _, h in init] * R), dtype=dt, requires_grad=True)
    ch = torch.zeros((K, 1, N_CLASSES), dtype=dt, requires_grad=True)
    h = torch.tensor([_step(sc, N) for sc in config.scalings for _ in config.seeds],
                     dtype=dt).view(K, 1, 1)
    params = [W, V, b, Wh, ch]
    opt = torch.optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)

    def logits(x):
        Wt, Vt = W.transpose(1, 2), V.transpose(1, 2)
        for _ in range(N):
            x = x + h * torch.bmm(torch.tanh(torch.bmm(x, Wt) + b), Vt)
        return torch.baddbmm(ch, x, Wh.transpose(1, 2))

    n = X.shape[1]
    steps = n // config.batch
    rngs = [np.random.default_rng([s, 2]) for s in config.seeds]
    alive = torch.ones(K, dtype=torch.bool)
    last = torch.full((K,), float("nan"))
    total = config.epochs * steps
    for epoch in range(config.epochs):
        perms = [r.permutation(n) for r in rngs] * R
        for t in range(steps):
            lr = 0.5 * config.lr * (1 + math.cos(math.pi * (epoch * steps + t) / total))
            for g in opt.param_groups:
                g["lr"] = lr
            idx = torch.as_tensor(np.stack([p[t * config.batch:(t + 1) * config.batch] for p in perms]))
            xb = torch.gather(X, 1, idx[..., None].expand(-1, -1, d))
            yb = torch.gather(y, 1, idx)
            z = logits(xb)
            loss = F.cross_entropy(z.reshape(-1, N_CLASSES), yb.reshape(-1), reduction="none").view(K, -1).mean(1)
            alive &= torch.isfinite(loss).detach()
            opt.zero_grad(set_to_none=True)
            torch.where(alive, loss, torch.zeros_like(loss)).sum().backward()
            with torch.no_grad():
                for p in params:  # a diverged network keeps its last weights
                    p.grad[~alive] = 0.0
                    p.grad.nan_to_num_(0.0, 0.0, 0.0)
            opt.step()
            last = torch.where(alive, loss.detach(), torch.full_like(last, float("nan")))
    with torch.no_grad():
        zt = logits(Xt)
        ok = torch.isfinite(zt).all(dim=-1) & (zt.argmax(-1) == yt)
        acc = ok.double().mean(dim=1).numpy()
    return acc.reshape(R, S), last.double().numpy().reshape(R, S)


def fig3a_digits(config: Fig3aDigitsConfig = FIG3A_DIGITS_PRESETS["check"]) -> Fig3aDigitsResult:
    """Train the tied networks of both rules at every depth and seed (see the module docstring)."""
    _require(config, Fig3aDigitsConfig, "fig3a_digits")
    data = {s: _data(config, s) for s in config.seeds}
    acc = {s: np.zeros((len(config.depths), len(config.seeds))) for s in config.scalings}
    loss = {s: np.zeros((len(config.depths), len(config.seeds))) for s in config.scalings}
    for i, N in enumerate(config.depths):
        a, l_ = _train_depth(config, N, data)
        for r, sc in enumerate(config.scalings):
            acc[sc][i], loss[sc][i] = a[r], l_[r]
    return Fig3aDigitsResult(config, acc, loss)


def fig3a_digits_verdict(result: Fig3aDigitsResult) -> Verdict:
    """:data:`FIG3A_DIGITS_EXPECTED` on the mean accuracies over the seeds."""
    s, c = result.mean("1/N"), result.mean("classical")
    measured = {"gap_at_largest": float(s[-1] - c[-1]), "scaled_drop": float(s[0] - s[-1]),
                "scaled_at_largest": float(s[-1]), "classical_at_largest": float(c[-1]),
                "scaled_at_smallest": float(s[0]), "classical_at_smallest": float(c[0])}
    d = result.config.depths
    return threshold_verdict("qualitative", measured, FIG3A_DIGITS_EXPECTED,
                             context=f"N = {d[0]}..{d[-1]}, {len(result.config.seeds)} runs, tied weights")


register("resnet_node.fig3a_digits", config=Fig3aDigitsConfig, presets=FIG3A_DIGITS_PRESETS, measure=fig3a_digits,
         verdict=fig3a_digits_verdict, claims=("resnet-node/fig-3a/digits",),
         summary=lambda r: {f"{s}_N{n}": float(v) for s in r.accuracy for n, v in zip(r.config.depths, r.mean(s))})
