r"""Figure 3(c) of ``resnet-node`` on networks trained on real images: scikit-learn's digits.

Figure 3(c) of the paper (thesis Fig. 2.3(c)) plots, for each parameter of a ResNet and of a HeunNet
trained on CIFAR-10, the relative error between the gradient computed by the memory-free adjoint
method (Eqs. (6)-(7), (9); thesis Eqs. (2.6)-(2.7), (2.9)) and the true gradient, against depth: the
deeper the network, the smaller the error, and the HeunNet's error is below the ResNet's. The
synthetic reduction of :mod:`~theory.experiments.resnet_node.adjoint` (``resnet_node.fig3c``)
measures it on weights drawn smooth in depth; here the weights are those of a network *trained*
on data, as in the paper:

* data: the 1797 grey-level 8 x 8 images of scikit-learn's digits (``sklearn.datasets.load_digits``;
  CIFAR-10 cannot be downloaded here), 20% held out for testing (a seeded split), standardised
  with the mean and standard deviation of the training pixels; the state is the image itself,
  :math:`x_0 \in \mathbb R^{64}` (the 64 inputs take the place of the paper's convolutional stem);
* network: :math:`x_{n+1} = x_n + \tfrac1N V_n\tanh(W_n x_n + b_n)` (Euler, Eq. (1)) or the HeunNet
  (Eq. (8)), then a linear softmax head on 10 classes; zero residual initialisation as in the
  paper's Section 5 (there: the last batch norm of each block set to zero; here :math:`V_n = 0`),
  :math:`W_n \sim \mathcal N(0, 1/d)` i.i.d. across layers, :math:`b_n = 0`, head
  :math:`\mathcal N(0, 1/d)`;
* training: the recipe of the thesis' Appendix 2.B.1 for this model (the simple ResNet of Fig. 3(c)
  and Fig. 4), scaled to the data set: SGD with momentum 0.9, batch 256, weight decay
  :math:`5\cdot10^{-4}`, learning rate 0.1 divided by 10 every 30 epochs, 90 epochs (the "paper"
  preset; the "check" preset trains fewer epochs with the same schedule shape), exact gradients;
* measure: on one batch of 256 training images, the cross-entropy's gradient in every tensor
  :math:`V_n, W_n, b_n` by backpropagation (g) and by the adjoint method (:math:`\tilde g`), and
  the relative error :math:`\|\tilde g - g\|_F/\|g\|_F` (the paper does not define it further),
  per tensor; per network the median over its tensors; the test error of every trained network.

Verdict (the figure's message, as the text of Section 5 states it): (a) the median relative error
decreases strictly with depth, for both networks and every seed; (b) the HeunNet's median is below
the ResNet's at every depth and for every seed. The slopes of the medians against N are reported,
not asserted: Prop. 4 gives the ResNet a relative error O(1/N); Prop. 6 gives the HeunNet
:math:`O(\Delta_\theta/N + 1/N^2)`, which is O(1/N) when the trained weights keep O(1) differences
between consecutive layers (their initialisation is i.i.d. across layers) and faster when training
makes them smooth in depth.

Measured (float64; the two backends agree to 1e-10). Check preset (width 16, 4 epochs, depths 4 to
32, one seed): slopes ResNet -3.18 [-3.37, -3.02], HeunNet -3.41 [-3.79, -2.89]; HeunNet/ResNet
median 0.22 at N = 4 to 0.16 at N = 32; test error 7.2%. Width 32, 30 epochs, depths 4 to 64, one
seed: ResNet -3.01 [-3.19, -2.86] (median 2.6e-3 at N = 4 to 6.1e-7 at N = 64), HeunNet -3.34
[-3.62, -3.11] (4.2e-4 to 3.7e-8), ratio 0.16 to 0.061, test error 3.3%. Both messages of the
figure hold; the errors fall like N^-3, faster than the O(1/N) of Prop. 4, because the trained
weights are not of order one here: with the step 1/N and a learning rate independent of N, the
gradient of every slice is O(1/N), so SGD moves each V_n by O(1/N) from its zero initialisation
(check preset: the median of N ||V_n||_F is 1.51, 1.56, 1.43, 1.45 at N = 4, 8, 16, 32), the
residuals f_n and their Jacobians are O(1/N), the reconstruction error O(N^-3), and so the
relative gradient error. Prop. 4 bounds the error with depth-independent constants; these shrink
with N, which the bound allows.

Backends: ``"numpy"`` (the package's kernels, :func:`theory.resnet.gradient`, one network at a
time) or ``"torch"`` (:mod:`theory.backends.resnet_node`, the seeds trained together as one batch
of networks); the same data, splits, initial weights and mini-batches on both. float64 only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np

from theory.backends import resolve, validate_fields
from theory.claims import Verdict, threshold_verdict
from theory.experiments._registry import register
from theory.rates import fit_rate
from theory.resnet import final_state, mlp
from theory.resnet.training import loss_gradient

from .._digits import N_CLASSES, load_digits_arrays, sklearn_available
from ..config import Config, Int, Ints, Real, Seeds, field
from ._common import _require, backend_fields, require_float64
from .adjoint import tensor_relative_errors

__all__ = ["FIG3C_DIGITS_PRESETS", "Fig3cDigitsConfig", "Fig3cDigitsResult", "fig3c_digits",
           "fig3c_digits_verdict", "digits_data", "digits_init", "digits_batches", "sklearn_available"]

_SCHEMES = ("euler", "heun")


@dataclass(frozen=True)
class Fig3cDigitsConfig(Config):
    """Configuration of :func:`fig3c_digits`."""

    depths: tuple = field(Ints(low=1, min_len=4, increasing=True), (4, 8, 16, 32), "Increasing depths N (at "
                          "least 4).")
    seeds: tuple = field(Seeds(), (0,), "One split, initialisation and mini-batch order per seed (generators "
                         "seeded ``[seed, 0]``, ``[seed, 1]``, ``[seed, 2]``).")
    width: int = field(Int(low=1), 16, "Hidden width m of the residual V tanh(W x + b).")
    epochs: int = field(Int(low=1), 4, "Training epochs.")
    decay_every: int = field(Int(low=1), 2, "The learning rate is divided by 10 every ``decay_every`` epochs.")
    lr: float = field(Real(0, 10, closed="right"), 0.1, "Initial learning rate of SGD.")
    momentum: float = field(Real(0, 1, closed="left"), 0.9, "Momentum of SGD.")
    weight_decay: float = field(Real(0, 1), 5e-4, "L2 penalty added to every gradient (PyTorch's form).")
    batch: int = field(Int(low=1), 256, "Mini-batch size.")
    eval_batch: int = field(Int(low=1), 256, "Training images on which the gradients are compared (the first of "
                            "the seed's split; at most the 1797 (1 - test_fraction) training images).")
    test_fraction: float = field(Real(0, 0.5, closed="right"), 0.2, "Held-out fraction.")
    backend: str
    device: str
    dtype: str
    backend, device, dtype = backend_fields(
        "``\"numpy\"`` (default) or ``\"torch\"`` on ``\"cpu\"`` or ``\"cuda\"`` (:mod:`theory.backends`).",
        dtype_doc="Floating-point type: float64 only (the rule is in ``check``).")

    def check(self):
        n_train = 1797 - int(round(self.test_fraction * 1797))
        if self.eval_batch > n_train:
            raise self.invalid("eval_batch", f"be at most the {n_train} training images")
        where = "theory.experiments.resnet_node.Fig3cDigitsConfig"
        require_float64(validate_fields(self, where), where)


FIG3C_DIGITS_PRESETS = {
    # four epochs of the same schedule (lr / 10 after two epochs), one seed, depths 4 ... 32
    "check": Fig3cDigitsConfig(),
    # the depths (4 ... 64) and runs (5) of the paper's Figure 3(c); the training recipe of the
    # thesis' Appendix 2.B.1 for this model (90 epochs, lr 0.1 / 10 every 30, batch 256, momentum
    # 0.9, weight decay 5e-4); width 64 = the 64 inputs
    "paper": Fig3cDigitsConfig(depths=(4, 8, 16, 32, 64), seeds=(0, 1, 2, 3, 4), width=64, epochs=90,
                               decay_every=30),
}


def digits_data(config: Fig3cDigitsConfig, seed: int):
    """``(X, y, Xt, yt)``: the seed's training and test images (standardised, shape (n, 64)) and labels."""
    X, y = load_digits_arrays("theory.experiments.resnet_node.fig3c_digits")
    n = X.shape[0]
    n_test = int(round(config.test_fraction * n))
    order = np.random.default_rng([seed, 0]).permutation(n)
    train, test = order[n_test:], order[:n_test]
    mu, sd = X[train].mean(), X[train].std()
    return (X[train] - mu) / sd, y[train], (X[test] - mu) / sd, y[test]


def digits_init(config: Fig3cDigitsConfig, N: int, scheme: str, seed: int, d: int = 64):
    """Initial ``(theta, Wh, ch)``: V = 0, W ~ N(0, 1/d), b = 0 (N + 1 slices drawn, the first N for
    Euler, all for Heun: both networks of a seed start from the same slices), head ~ N(0, 1/d)."""
    rng = np.random.default_rng([seed, 1])
    m = config.width
    W = rng.standard_normal((N + 1, m, d)) / np.sqrt(d)
    theta = mlp(m).pack(np.zeros((N + 1, d, m)), W, np.zeros((N + 1, m)))[: N + (scheme == "heun")]
    Wh = rng.standard_normal((N_CLASSES, d)) / np.sqrt(d)
    return theta, Wh, np.zeros(N_CLASSES)


def digits_batches(config: Fig3cDigitsConfig, n_train: int, seed: int):
    """``(batches, lrs)``: the index arrays of every SGD step (a fresh permutation per epoch) and the
    learning rate of each step (lr 10^-floor(epoch / decay_every))."""
    rng = np.random.default_rng([seed, 2])
    batches, lrs = [], []
    for epoch in range(config.epochs):
        perm = rng.permutation(n_train)
        lr = config.lr * 0.1 ** (epoch // config.decay_every)
        for start in range(0, n_train, config.batch):
            batches.append(perm[start:start + config.batch])
            lrs.append(lr)
    return batches, lrs


def _cross_entropy(xN, Wh, ch, labels):
    """Mean softmax cross-entropy of z = x_N Wh^T + ch and its gradients (NumPy)."""
    B = xN.shape[0]
    z = xN @ Wh.T + ch
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = float(-logp[np.arange(B), labels].mean())
    dz = np.exp(logp)
    dz[np.arange(B), labels] -= 1.0
    dz /= B
    return loss, dz @ Wh, dz.T @ xN, dz.sum(axis=0)


def _train_numpy(config, X, y, theta, Wh, ch, batches, lrs, scheme):
    residual = mlp(config.width)
    params = [theta.copy(), Wh.copy(), ch.copy()]
    bufs = [np.zeros_like(p) for p in params]
    for idx, lr in zip(batches, lrs):
        x0 = X[idx]
        xN = final_state(x0, params[0], residual, scheme)
        _, gx, gW, gc = _cross_entropy(xN, params[1], params[2], y[idx])
        gth, _ = loss_gradient(x0, params[0], gx, residual, scheme, "backprop", xN=xN)
        for p, u, g in zip(params, bufs, (gth, gW, gc)):
            g = g + config.weight_decay * p
            u *= config.momentum
            u += g
            p -= lr * u
    return params


def _measure_numpy(config, runs, scheme, N):
    residual = mlp(config.width)
    out = []
    for (X, y, Xt, yt), (theta, Wh, ch), (batches, lrs) in runs:
        theta, Wh, ch = _train_numpy(config, X, y, theta, Wh, ch, batches, lrs, scheme)
        x0, lab = X[: config.eval_batch], y[: config.eval_batch]
        xN = final_state(x0, theta, residual, scheme)
        loss, gx, _, _ = _cross_entropy(xN, Wh, ch, lab)
        exact, _ = loss_gradient(x0, theta, gx, residual, scheme, "backprop", xN=xN)
        approx, _ = loss_gradient(x0, theta, gx, residual, scheme, "adjoint", xN=xN)
        zt = final_state(Xt, theta, residual, scheme) @ Wh.T + ch
        out.append((exact, approx, float(np.mean(np.argmax(zt, axis=1) != yt)), loss))
    return out


def _measure_torch(config, runs, scheme, N):
    import torch

    from theory.backends import resnet_node as tb

    b = resolve(config.backend, config.device, config.dtype)
    dev, dt = b.torch_device, b.torch_dtype
    d, m, S = 64, config.width, len(runs)
    tb.check_memory(b, S, N + 1, max(config.batch, config.eval_batch), d, m,
                    "`seeds` of theory.experiments.resnet_node.Fig3cDigitsConfig")
    X = np.stack([r[0][0] for r in runs])
    y = np.stack([r[0][1] for r in runs])
    theta, Wh, ch = (np.stack([r[1][i] for r in runs]) for i in range(3))
    n_steps = len(runs[0][2][0])
    batches = [np.stack([r[2][0][t] for r in runs]) for t in range(n_steps)]
    # the training sets of the seeds are different draws: index them per seed on the device
    offsets = (np.arange(S) * X.shape[1])[:, None]
    flatX, flaty = X.reshape(-1, d), y.reshape(-1)
    params = tb.train_digits(b, flatX, flaty, theta, Wh, ch, [idx + offsets for idx in batches], runs[0][2][1],
                             scheme=scheme, d=d, m=m, momentum=config.momentum, weight_decay=config.weight_decay)
    Xd = torch.as_tensor(flatX, dtype=dt, device=dev)
    yd = torch.as_tensor(flaty, device=dev)
    ii = torch.as_tensor(np.arange(config.eval_batch)[None, :] + offsets, device=dev)
    x0 = Xd[ii]
    with torch.no_grad():
        xN = tb.forward_last(x0, params[0], scheme, d, m)
    loss, gx, _, _ = tb.softmax_cross_entropy(xN, params[1], params[2], yd[ii])
    exact, _ = tb.gradient(x0, params[0], gx, scheme, "backprop", d, m)
    approx, _ = tb.gradient(x0, params[0], gx, scheme, "adjoint", d, m, xN=xN)
    Xt = torch.as_tensor(np.stack([r[0][2] for r in runs]), dtype=dt, device=dev)
    with torch.no_grad():
        zt = torch.baddbmm(params[2].unsqueeze(1), tb.forward_last(Xt, params[0], scheme, d, m),
                           params[1].transpose(1, 2))
    wrong = tb.to_numpy((zt.argmax(dim=-1).cpu() != torch.as_tensor(np.stack([r[0][3] for r in runs]))).double())
    ex, ap, ls = tb.to_numpy(exact), tb.to_numpy(approx), tb.to_numpy(loss)
    return [(ex[s], ap[s], float(wrong[s].mean()), float(ls[s])) for s in range(S)]


@dataclass(frozen=True)
class Fig3cDigitsResult:
    """Measured by :func:`fig3c_digits`.

    Attributes
    ----------
    config : Fig3cDigitsConfig
    errors : dict
        ``errors[scheme][i][j]``: per-tensor relative errors (array of 3 K) of seed i at depth j.
    medians : dict
        ``medians[scheme]``: array (seeds, depths), median over the tensors.
    fits : dict
        ``fits[scheme]``: :class:`theory.rates.RateFit` of the medians against N.
    test_error : dict
        ``test_error[scheme]``: array (seeds, depths), test error of the trained network.
    eval_loss : dict
        ``eval_loss[scheme]``: array (seeds, depths), cross-entropy on the evaluation batch.
    """

    config: Fig3cDigitsConfig
    errors: dict = _field(repr=False)
    medians: dict
    fits: dict
    test_error: dict
    eval_loss: dict

    def to_measured(self) -> dict:
        """Plain numbers: slopes with their intervals, geometric-mean medians, Heun/Euler ratios, test errors."""
        c = self.config
        out = {"depths": list(c.depths), "seeds": list(c.seeds), "width": c.width, "epochs": c.epochs}
        for s in _SCHEMES:
            out[f"{s}_slope"] = self.fits[s].slope
            out[f"{s}_ci"] = list(self.fits[s].ci)
            out[f"{s}_median_rel_error"] = np.exp(np.log(self.medians[s]).mean(axis=0)).tolist()
            out[f"{s}_test_error"] = np.median(self.test_error[s], axis=0).tolist()
        ratio = self.medians["heun"] / self.medians["euler"]
        out["heun_over_euler_median"] = np.exp(np.log(ratio).mean(axis=0)).tolist()
        return out


def fig3c_digits(config: Fig3cDigitsConfig = FIG3C_DIGITS_PRESETS["check"]) -> Fig3cDigitsResult:
    """Train a ResNet and a HeunNet on the digits at every depth and seed, and measure the relative
    errors of the adjoint gradients of every parameter tensor (see the module docstring)."""
    _require(config, Fig3cDigitsConfig, "fig3c_digits")
    data = {s: digits_data(config, s) for s in config.seeds}
    errors = {s: [[None] * len(config.depths) for _ in config.seeds] for s in _SCHEMES}
    test_error = {s: np.zeros((len(config.seeds), len(config.depths))) for s in _SCHEMES}
    eval_loss = {s: np.zeros((len(config.seeds), len(config.depths))) for s in _SCHEMES}
    measure = _measure_numpy if config.backend == "numpy" else _measure_torch
    residual = mlp(config.width)
    for scheme in _SCHEMES:
        for j, N in enumerate(config.depths):
            runs = [(data[s], digits_init(config, N, scheme, s), digits_batches(config, data[s][0].shape[0], s))
                    for s in config.seeds]
            K = N + (scheme == "heun")
            for i, (exact, approx, err, loss) in enumerate(measure(config, runs, scheme, N)):
                errors[scheme][i][j] = tensor_relative_errors(residual, exact, approx, 64, K)
                test_error[scheme][i, j] = err
                eval_loss[scheme][i, j] = loss
    medians = {s: np.array([[np.median(e) for e in row] for row in errors[s]]) for s in _SCHEMES}
    fits = {s: fit_rate(np.array(config.depths), medians[s]) for s in _SCHEMES}
    return Fig3cDigitsResult(config, errors, medians, fits, test_error, eval_loss)


def fig3c_digits_verdict(result: Fig3cDigitsResult) -> Verdict:
    """The figure's message: (a) the median relative error decreases strictly with N for both
    networks and every seed; (b) the HeunNet's median is below the ResNet's at every depth and seed.
    The slopes are reported in the message, not asserted (see the module docstring)."""
    med = result.medians
    ratio = med["heun"] / med["euler"]
    gm = np.exp(np.log(ratio).mean(axis=0))
    fe, fh = result.fits["euler"], result.fits["heun"]
    depths = result.config.depths
    measured = {**{f"n_nondecreasing_{s}": int(np.count_nonzero(~(np.diff(med[s], axis=1) < 0))) for s in _SCHEMES},
                "n_heun_not_below": int(np.count_nonzero(~(ratio < 1))),
                "euler_slope": float(fe.slope), "heun_slope": float(fh.slope),
                "heun_over_euler_first": float(gm[0]), "heun_over_euler_last": float(gm[-1]),
                "median_test_error_euler": float(np.median(result.test_error["euler"])),
                "median_test_error_heun": float(np.median(result.test_error["heun"]))}
    # the slopes are only required to be finite (reported, not asserted)
    return threshold_verdict("qualitative", measured, {
        "n_nondecreasing_euler_max": 0, "n_nondecreasing_heun_max": 0, "n_heun_not_below_max": 0,
        "euler_slope_max": math.inf, "heun_slope_max": math.inf},
        context=f"N = {depths[0]}..{depths[-1]}, {len(result.config.seeds)} seeds; HeunNet/ResNet median "
                f"{gm[0]:.2g} to {gm[-1]:.2g}")


# recorded by the claim resnet-node/fig-3c/digits (checks/test_resnet_node_figures.py; a proxy: digits and a
# perceptron residual for CIFAR-10 and the convolutional ResNet); also a scale experiment of the torch backend
# (benchmarks/gpu_scale.py)
register("resnet_node.fig3c_digits", config=Fig3cDigitsConfig, presets=FIG3C_DIGITS_PRESETS, measure=fig3c_digits,
         verdict=fig3c_digits_verdict, claims=("resnet-node/fig-3c/digits",),
         summary=lambda r: {"euler_slope": r.fits["euler"].slope, "heun_slope": r.fits["heun"].slope,
                            "heun_over_euler_last": float(np.exp(np.log(r.medians["heun"][:, -1]
                                                                        / r.medians["euler"][:, -1]).mean()))})
