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

from dataclasses import dataclass, fields

import numpy as np

from theory.claims import Verdict
from theory.experiments._registry import register
from theory.resnet import training as _training

from ._common import _check_float, _check_int, _check_ints, _require

__all__ = ["FIG1_EXPECTED", "FIG1_PRESETS", "FIG4_EXPECTED", "FIG4_PRESETS", "Fig1Config", "Fig4Config",
           "Fig4Result", "fig1", "fig1_verdict", "fig4", "fig4_verdict"]


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

    def __post_init__(self):
        where = "theory.experiments.resnet_node.Fig4Config"
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
        return _training.Fig4Setup(**{f.name: getattr(self, f.name) for f in fields(self)})


FIG4_PRESETS = {
    "check": Fig4Config(),
    # the depths of the paper's Figure 4 (2 ... 64) and its median over 5 runs; CIFAR-10 and the
    # convolutional blocks are replaced by two moons and a perceptron residual
    "paper": Fig4Config(depths=(2, 4, 8, 16, 32, 64), seeds=(0, 1, 2, 3, 4)),
}

FIG4_EXPECTED = dict(_training.FIG4_THRESHOLDS)


@dataclass(frozen=True)
class Fig4Result:
    """The table of test errors (:class:`theory.resnet.training.Fig4Table`) and its setting."""

    config: Fig4Config
    table: _training.Fig4Table

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
    return Fig4Result(config, _training.fig4_table(config.setup()))


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
