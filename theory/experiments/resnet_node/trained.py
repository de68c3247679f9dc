r"""The training experiments of ``resnet-node`` (Figures 1 and 4; thesis Figs. 2.1 and 2.4), registered
as library experiments around the training code of :mod:`theory.resnet.training`.

* **Figure 1** (:func:`fig1`, :func:`fig1_verdict`): a 1-D Euler ResNet trained on x -> -x/2 must
  have crossing trajectories (a flow of an ODE cannot reverse orientation); one trained on x -> x/2
  need not, and neither interpolating neural ODE crosses.
* **Figure 4** (:func:`fig4`, :func:`fig4_verdict`): on two moons, training with the adjoint's
  approximate gradients fails at small depth and matches backpropagation at large depth, and the
  HeunNet needs fewer layers than the ResNet.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from theory._validation import check_work
from theory.backends import validate_fields
from theory.claims import Verdict
from theory.experiments._registry import register
from theory.resnet import mlp
from theory.resnet import training as _training

from ._common import _check_float, _check_int, _check_ints, _require

__all__ = ["FIG1_EXPECTED", "FIG1_PRESETS", "FIG4_EXPECTED", "FIG4_PRESETS", "Fig1Config", "Fig4Config",
           "Fig4Result", "fig1", "fig1_verdict", "fig4", "fig4_verdict", "moons_data"]


@dataclass(frozen=True)
class Fig1Config:
    """Setting of the reduced Figure 1 (see :class:`theory.resnet.training.Fig1Setup` for the reasons
    behind each default).

    Attributes
    ----------
    N : int
        Depth.
    width : int
        Hidden width m of the residual V tanh(W x + b).
    n_points : int
        Training inputs, evenly spaced on [-1, 1] (at least 2).
    lr : float
        Adam learning rate after the warm-up.
    warmup : int
        Steps of the linear warm-up of the learning rate (0: none).
    steps : int
        Full-batch Adam steps.
    seed : int
        Seed of the initial W, b (V = 0), shared by both targets.
    ode_refine : int
        The interpolating ODEs are read on the grid s = j / (ode_refine N).
    """

    N: int = 32
    width: int = 16
    n_points: int = 33
    lr: float = 0.1
    warmup: int = 1000
    steps: int = 2000
    seed: int = 0
    ode_refine: int = 4

    def __post_init__(self):
        where = "theory.experiments.resnet_node.Fig1Config"
        _check_int(self.N, "N", where, 1)
        _check_int(self.width, "width", where, 1)
        _check_int(self.n_points, "n_points", where, 2)
        _check_float(self.lr, "lr", where, 0.0, 10.0, closed_low=False)
        _check_int(self.warmup, "warmup", where, 0)
        _check_int(self.steps, "steps", where, 1)
        _check_int(self.seed, "seed", where, 0)
        _check_int(self.ode_refine, "ode_refine", where, 1)

    def setup(self) -> _training.Fig1Setup:
        """The same setting as a :class:`theory.resnet.training.Fig1Setup`."""
        return _training.Fig1Setup(**{f.name: getattr(self, f.name) for f in fields(self)})


FIG1_PRESETS = {
    "check": Fig1Config(),
    # the paper's Figure 1 shows ResNets with 300 layers; it gives no other training detail
    "paper": Fig1Config(N=300),
}

#: what the record of Figure 1 expects (see :func:`theory.resnet.training.fig1_verdict`)
FIG1_EXPECTED = {"mse_max": _training.FIG1_MSE_TOL, "crossings_neg": "> 0", "min_fprime_over_N_neg": "<= -1",
                 "crossings_pos": 0, "ode_crossings": 0, "ode_mse_neg": ">= increasing-fit floor"}


def fig1(config: Fig1Config = FIG1_PRESETS["check"]) -> _training.Fig1Result:
    """Train the x/2 and -x/2 networks and measure crossings, slopes and the ODE limits
    (:func:`theory.resnet.training.fig1_experiment`)."""
    _require(config, Fig1Config, "fig1")
    return _training.fig1_experiment(config.setup())


def fig1_verdict(result: _training.Fig1Result) -> Verdict:
    """:func:`theory.resnet.training.fig1_verdict` on the result's measured numbers."""
    return _training.fig1_verdict(result.to_measured())


_BACKEND_FIELDS = ("backend", "device", "dtype")


@dataclass(frozen=True)
class Fig4Config:
    """Setting of the reduced Figure 4 (see :class:`theory.resnet.training.Fig4Setup`).

    Attributes
    ----------
    depths : tuple of int
        Increasing depths, containing 2 and 4 (criterion (iii) compares them).
    seeds : tuple of int
        Data and initialisation seeds; the medians are over them.
    width : int
        Hidden width of the residual V tanh(W x + b).
    d : int
        Dimension the two moons are lifted to (>= 2).
    noise : float
        Noise of the two moons.
    n_train, n_test : int
        Train and test points.
    lr : float
        Adam learning rate.
    steps : int
        Full-batch Adam steps.
    backend, device, dtype : str
        Array backend of the trainings (:mod:`theory.backends`): ``"numpy"`` (the package's kernels,
        one network at a time; default) or ``"torch"`` on ``"cpu"`` or ``"cuda"``, where the seeds
        of one (scheme, method, depth) train together as one batch of networks
        (:func:`theory.backends.resnet_node.train_moons`). Data and initial weights are the same
        NumPy draws on every backend. float32 is accepted on the torch backend (a test point near
        the decision boundary may then change class: the figures agree with float64 to such flips).
    """

    depths: tuple = (2, 4, 8, 16)
    seeds: tuple = (0, 1, 2)
    width: int = 16
    d: int = 6
    noise: float = 0.15
    n_train: int = 512
    n_test: int = 1024
    lr: float = 0.02
    steps: int = 300
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"

    def __post_init__(self):
        where = "theory.experiments.resnet_node.Fig4Config"
        validate_fields(self, where)
        _check_ints(self.depths, "depths", where, 1, increasing=True, min_len=2)
        if 2 not in self.depths or 4 not in self.depths:
            raise ValueError(f"`depths` of {where} must contain 2 and 4; got {self.depths!r}")
        _check_ints(self.seeds, "seeds", where, 0)
        _check_int(self.width, "width", where, 1)
        _check_int(self.d, "d", where, 2)
        _check_float(self.noise, "noise", where, 0.0, 10.0)
        _check_int(self.n_train, "n_train", where, 1)
        _check_int(self.n_test, "n_test", where, 1)
        _check_float(self.lr, "lr", where, 0.0, 10.0, closed_low=False)
        _check_int(self.steps, "steps", where, 1)

    def setup(self) -> _training.Fig4Setup:
        """The same setting as a :class:`theory.resnet.training.Fig4Setup`."""
        return _training.Fig4Setup(**{f.name: getattr(self, f.name) for f in fields(self)
                                       if f.name not in _BACKEND_FIELDS})


FIG4_PRESETS = {
    "check": Fig4Config(),
    # the depths of the paper's Figure 4 (2 ... 64) and its median over 5 runs; CIFAR-10 and the
    # convolutional blocks are replaced by two moons and a perceptron residual
    "paper": Fig4Config(depths=(2, 4, 8, 16, 32, 64), seeds=(0, 1, 2, 3, 4)),
}

FIG4_EXPECTED = dict(_training.FIG4_THRESHOLDS)


@dataclass(frozen=True)
class Fig4Result:
    """The table of test errors (:class:`theory.resnet.training.Fig4Table`), its setting, and the
    final training loss of every run (``train_loss[variant]``: array (depths, seeds), the logistic
    loss at the last Adam step)."""

    config: Fig4Config
    table: _training.Fig4Table
    train_loss: dict = field(default_factory=dict, repr=False)

    def medians(self) -> dict:
        """Variant -> median test error over the seeds, per depth."""
        return {k: self.table.median(k) for k in self.table.errors}

    def to_measured(self) -> dict:
        c = self.config
        return {**self.table.to_measured(), "seeds": list(c.seeds), "steps": c.steps, "lr": c.lr,
                "n_train": c.n_train, "n_test": c.n_test, "noise": c.noise, "d": c.d, "width": c.width}


def fig4(config: Fig4Config = FIG4_PRESETS["check"]) -> Fig4Result:
    """Train every (scheme, method, depth, seed) (:func:`theory.resnet.training.fig4_table`)."""
    _require(config, Fig4Config, "fig4")
    setup = config.setup()
    if config.backend != "numpy":
        return _fig4_torch(config, setup)
    # the loop of theory.resnet.training.fig4_table (same budget, same trainings), keeping the losses
    ops = len(setup.seeds) * sum(_training._moons_work(N, s, m, setup) for s, m in _training.VARIANTS
                                 for N in setup.depths)
    check_work(ops, "setup.depths", max(setup.depths), func="theory.resnet.training.fig4_table",
               max_work=_training.FIG4_MAX_WORK)
    errors, losses = {}, {}
    for scheme, method in _training.VARIANTS:
        runs = [[_training.train_moons(N, scheme, method, s, setup, max_work=max(ops, 1.0)) for s in setup.seeds]
                for N in setup.depths]
        errors[f"{scheme}-{method}"] = np.array([[r["test_error"] for r in row] for row in runs])
        losses[f"{scheme}-{method}"] = np.array([[r["train_loss"] for r in row] for row in runs])
    return Fig4Result(config, _training.Fig4Table(tuple(setup.depths), errors), losses)


def moons_data(setup, N, scheme, seed):
    """The data and initial point of :func:`theory.resnet.training.train_moons` for one run: X, y,
    Xt, yt (lifted to d), theta (N or N + 1 slices) and the head w (the same NumPy draws)."""
    residual = mlp(setup.width)
    data_rng = np.random.default_rng([seed, 0])
    X, y = _training.two_moons(setup.n_train, setup.noise, data_rng)
    Xt, yt = _training.two_moons(setup.n_test, setup.noise, data_rng)
    X, Xt = _training.lift(X, setup.d), _training.lift(Xt, setup.d)
    init_rng = np.random.default_rng([seed, 1])
    theta = _training.init_mlp(residual, N + 1, setup.d, init_rng)[:N + (1 if scheme == "heun" else 0)]
    w = init_rng.standard_normal(setup.d) / np.sqrt(setup.d)
    return X, y, Xt, yt, theta, w


def _fig4_torch(config, setup):
    import torch

    from theory.backends import resnet_node as tb

    b = validate_fields(config, "theory.experiments.resnet_node.Fig4Config")
    errors, losses = {}, {}
    S = len(setup.seeds)
    for scheme, method in _training.VARIANTS:
        err_rows, loss_rows = [], []
        for N in setup.depths:
            runs = [moons_data(setup, N, scheme, s) for s in setup.seeds]
            X, y, Xt, yt, theta, w = (np.stack([r[i] for r in runs]) for i in range(6))
            tb.check_memory(b, S, theta.shape[1], max(setup.n_train, setup.n_test), setup.d, setup.width,
                            "`depths` of theory.experiments.resnet_node.Fig4Config")
            th, wv, c, loss = tb.train_moons(b, X, y.astype(float), theta, w, setup.steps, setup.lr,
                                             scheme=scheme, method=method, d=setup.d, m=setup.width)
            Xtd = torch.as_tensor(Xt, dtype=b.torch_dtype, device=b.torch_device)
            ytd = torch.as_tensor(yt, device=b.torch_device)
            err_rows.append(tb.to_numpy(tb.test_error_moons(th, wv, c, Xtd, ytd, scheme, setup.d, setup.width)))
            loss_rows.append(tb.to_numpy(loss))
        errors[f"{scheme}-{method}"] = np.array(err_rows)
        losses[f"{scheme}-{method}"] = np.array(loss_rows)
    return Fig4Result(config, _training.Fig4Table(tuple(setup.depths), errors), losses)


def fig4_verdict(result: Fig4Result) -> Verdict:
    """:func:`theory.resnet.training.fig4_verdict` on the medians."""
    return _training.fig4_verdict(result.table.depths, result.medians())


register("resnet_node.fig1", config=Fig1Config, presets=FIG1_PRESETS, measure=fig1, verdict=fig1_verdict,
         claims=("resnet-node/fig-1",),
         summary=lambda r: {k: float(v) for k, v in r.to_measured().items()
                            if isinstance(v, (int, float, np.integer, np.floating)) and v is not None})
register("resnet_node.fig4", config=Fig4Config, presets=FIG4_PRESETS, measure=fig4, verdict=fig4_verdict,
         claims=("resnet-node/fig-4",),
         summary=lambda r: {f"{k}_N{n}": float(e) for k, med in r.medians().items()
                            for n, e in zip(r.table.depths, med)})
