r"""Scale experiments of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in the
Large-depth Regime"; chapter 2 of P. Marion's thesis) at the document's own sizes, on either array
backend (:mod:`theory.backends`): NumPy/Numba on a CPU, or PyTorch on a CPU or a CUDA device.

``scaling.fig7_grid`` (:func:`fig7_grid`)
    The whole phase diagram of Figure 7 (thesis Figure 2.7): res-3 with fractional Gaussian noise
    weights, :math:`\log_{10}\|h_L - h_0\|/\|h_0\|` and :math:`\log_{10}\|p_0 - p_L\|/\|p_L\|` on a
    (Hurst index, beta) grid, averaged over the inputs and the weight draws, and the critical
    exponent :math:`\beta^*(H)` of each panel (zero crossing in beta,
    :func:`theory.scaling.phase.critical_beta`), which Section 4.1 reads as :math:`\max(H, 1/2)`.
    Preset ``"paper"``: the figure's grid (Table 3 of the paper: L = 1000, d = 40, beta from 0.2 to
    1.3, H from 0.05 to 0.97; 70 x 51 points), 5 weight draws per H, 64 inputs per draw.

``scaling.fig2_explicit`` (:func:`fig2_explicit`)
    Figure 2 (thesis Figure 2.2) with explicit i.i.d. Gaussian matrices instead of the exact-in-law
    sampler of the ``scaling/fig-2`` check: :math:`\|h_L\|/\|h_0\|` and :math:`\|p_0\|/\|p_L\|` of res-3
    at beta = 1/2 over many independent networks, and their quartiles (the text prints Q1 = 1.21,
    Q3 = 1.34 for the hidden states). Preset ``"paper"``: 10^4 runs, L = 1000, d = 100 (Section 2.3).

Neither experiment is run by a claim check (the checks run ``scaling.fig7`` and ``scaling.fig2``);
their ``"check"`` presets are small sizes that run in about a second on a CPU, for tests and
benchmarks. At the ``"paper"`` sizes the NumPy backend needs hours; the torch backend on a GPU,
with ``draws_on="device"``, is what they are for (``theory run scaling.fig7_grid --preset paper
--backend torch --device cuda --draws-on device``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.backends import resolve, validate_fields
from theory.backends.scaling import explicit_res3_ratios, phase_grid
from theory.experiments._registry import register

__all__ = ["Fig7GridConfig", "Fig7GridResult", "FIG7_GRID_PRESETS", "fig7_grid", "fig7_grid_summary",
           "Fig2ExplicitConfig", "Fig2ExplicitResult", "FIG2_EXPLICIT_PRESETS", "fig2_explicit",
           "fig2_explicit_summary"]


def _ints(cfg, where, spec):
    for name, low in spec:
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"`{name}` of {where} must be an int >= {low}; got {v!r}")
        object.__setattr__(cfg, name, int(v))


def _floats(cfg, where, name, low, high, increasing):
    v = getattr(cfg, name)
    try:
        t = tuple(float(x) for x in v)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` of {where} must be a tuple of numbers; got {v!r}") from None
    if not t or any(not (low < x < high) for x in t) or (increasing and any(b <= a for a, b in zip(t, t[1:]))):
        order = ", strictly increasing" if increasing else ""
        raise ValueError(f"`{name}` of {where} must be a non-empty tuple of values in ({low}, {high}){order}; "
                         f"got {v!r}")
    object.__setattr__(cfg, name, t)


def _linspace(a, b, n):
    return tuple(float(x) for x in np.round(np.linspace(a, b, n), 10))


# =========================================================================== Figure 7, the whole grid


@dataclass(frozen=True)
class Fig7GridConfig:
    """The (H, beta) grid of Figure 7 of ``scaling``.

    Attributes
    ----------
    hurst : tuple of float
        Hurst indices of the fGn weights, in (0, 1).
    beta : tuple of float
        Scaling exponents, strictly increasing, > 0 (< 10).
    L : int
        Depth, >= 2.
    d : int
        Width, >= 1.
    draws : int
        Weight draws per Hurst index (shared by every beta), >= 1.
    n_inputs : int
        Gaussian inputs h_0 (and directions p_L) per draw, >= 1; a cell averages their log ratios.
    gradients : bool
        Also the gradient panel (doubles the cost; the torch backend then keeps one byte per
        (layer, input, beta, coordinate) of each chunk).
    seed : int
        Seed of the NumPy Generator (``draws_on="host"``) or of the torch Generator
        (``draws_on="device"``), >= 0.
    backend, device, dtype : str
        :mod:`theory.backends`: ``"numpy"`` (default) or ``"torch"``; ``"cpu"`` or ``"cuda"``;
        ``"float64"`` (default) or ``"float32"``.
    draws_on : str
        ``"host"``: NumPy draws, identical on every backend; ``"device"`` (torch only): fGn drawn on
        the device by Davies-Harte, equal in law, no transfer of the weights.
    """

    hurst: tuple = (0.2, 0.5, 0.8)
    beta: tuple = (0.3, 0.5, 0.7, 0.9, 1.1)
    L: int = 100
    d: int = 10
    draws: int = 2
    n_inputs: int = 4
    gradients: bool = True
    seed: int = 0
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"
    draws_on: str = "host"

    def __post_init__(self):
        where = "theory.experiments.scaling.Fig7GridConfig"
        _floats(self, where, "hurst", 0.0, 1.0, False)
        _floats(self, where, "beta", 0.0, 10.0, True)
        _ints(self, where, (("L", 2), ("d", 1), ("draws", 1), ("n_inputs", 1), ("seed", 0)))
        if not isinstance(self.gradients, (bool, np.bool_)):
            raise TypeError(f"`gradients` of {where} must be a bool; got {self.gradients!r}")
        validate_fields(self, where)


FIG7_GRID_PRESETS = {
    # small: 3 H x 5 beta, L = 100, d = 10, 2 draws of 4 inputs (~0.5 s on one core)
    "check": Fig7GridConfig(),
    # the figure's grid and sizes (Table 3: L = 1000, d = 40, beta in [0.2, 1.3], H in [0.05, 0.97]);
    # the paper does not state the draws and inputs per cell: 5 draws of 64 inputs here
    "paper": Fig7GridConfig(hurst=_linspace(0.05, 0.97, 51), beta=_linspace(0.2, 1.3, 70), L=1000, d=40,
                            draws=5, n_inputs=64),
}


@dataclass(frozen=True)
class Fig7GridResult:
    """``hidden`` and ``gradient`` (None without gradients): log10 ratios per draw, shape
    (nH, nB, draws); ``critical_hidden`` / ``critical_gradient``: beta*(H) of the mean over draws,
    shape (nH,) (NaN where the curve does not cross zero on the grid)."""

    config: Fig7GridConfig
    hidden: np.ndarray
    gradient: np.ndarray | None
    critical_hidden: np.ndarray
    critical_gradient: np.ndarray | None


def fig7_grid(config: Fig7GridConfig) -> Fig7GridResult:
    """Run the grid of ``config`` on its backend (pure: no files, no globals)."""
    from theory.scaling.phase import critical_beta

    if not isinstance(config, Fig7GridConfig):
        raise TypeError(f"`config` of theory.experiments.scaling.fig7_grid must be a Fig7GridConfig; "
                        f"got {type(config).__name__}")
    c = config
    b = resolve(c.backend, c.device, c.dtype)
    hidden, gradient = phase_grid(c.hurst, c.beta, L=c.L, d=c.d, n_seeds=c.draws, n_inputs=c.n_inputs,
                                  rng=np.random.default_rng(c.seed), backend=b, gradients=c.gradients,
                                  draws_on=c.draws_on, seed=c.seed)

    def crit(v):
        return np.array([critical_beta(c.beta, row) for row in v.mean(axis=-1)]) if len(c.beta) > 1 \
            else np.full(len(c.hurst), np.nan)

    return Fig7GridResult(c, hidden, gradient, crit(hidden), None if gradient is None else crit(gradient))


def fig7_grid_summary(result: Fig7GridResult) -> dict:
    """beta*(H) of each panel, one entry per Hurst index (``beta_star_hidden_H0.5``, ...)."""
    out = {}
    for q, v in (("hidden", result.critical_hidden), ("gradient", result.critical_gradient)):
        if v is not None:
            out |= {f"beta_star_{q}_H{H:g}": float(x) for H, x in zip(result.config.hurst, v)}
    return out


register("scaling.fig7_grid", config=Fig7GridConfig, presets=FIG7_GRID_PRESETS, measure=fig7_grid,
         summary=fig7_grid_summary)


# =========================================================================== Figure 2, explicit matrices


@dataclass(frozen=True)
class Fig2ExplicitConfig:
    """Figure 2 of ``scaling`` with explicit Gaussian matrices.

    Attributes
    ----------
    runs : int
        Independent networks, >= 8.
    d : int
        Width, >= 1.
    L : int
        Depth, >= 1.
    beta : float
        Scaling exponent, > 0 (the figure: 1/2).
    seed : int
        Seed, >= 0: the inputs of chunk c and the weights of its layer k come from generators seeded
        (seed, c, L) and (seed, c, k).
    chunk : int
        Networks run together, >= 1 (device memory: about 2 R d^2 + L R d bytes per chunk of R).
    gradients : bool
        Also the co-state ratio ||p_0||/||p_L|| (a backward pass that draws the weights again).
    backend, device, dtype : str
        :mod:`theory.backends`.
    draws_on : str
        ``"host"`` (NumPy generators; identical on every backend) or ``"device"`` (torch
        Generators on the device; equal in law).
    """

    runs: int = 200
    d: int = 20
    L: int = 100
    beta: float = 0.5
    seed: int = 2
    chunk: int = 2500
    gradients: bool = True
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"
    draws_on: str = "host"

    def __post_init__(self):
        where = "theory.experiments.scaling.Fig2ExplicitConfig"
        _ints(self, where, (("runs", 8), ("d", 1), ("L", 1), ("seed", 0), ("chunk", 1)))
        if isinstance(self.beta, bool) or not isinstance(self.beta, (int, float, np.integer, np.floating)) \
                or not (math.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"`beta` of {where} must be a finite number > 0; got {self.beta!r}")
        object.__setattr__(self, "beta", float(self.beta))
        if not isinstance(self.gradients, (bool, np.bool_)):
            raise TypeError(f"`gradients` of {where} must be a bool; got {self.gradients!r}")
        validate_fields(self, where)


FIG2_EXPLICIT_PRESETS = {
    # small: 200 networks, d = 20, L = 100 (~0.3 s on one core)
    "check": Fig2ExplicitConfig(),
    # Section 2.3 of the paper: 10^4 runs, L = 1000, d = 100, beta = 1/2
    "paper": Fig2ExplicitConfig(runs=10_000, d=100, L=1000),
}


@dataclass(frozen=True)
class Fig2ExplicitResult:
    """``h``: ||h_L||/||h_0|| per run; ``p``: ||p_0||/||p_L|| per run (None without gradients)."""

    config: Fig2ExplicitConfig
    h: np.ndarray
    p: np.ndarray | None


def fig2_explicit(config: Fig2ExplicitConfig) -> Fig2ExplicitResult:
    """Run the networks of ``config`` on its backend (pure: no files, no globals)."""
    if not isinstance(config, Fig2ExplicitConfig):
        raise TypeError(f"`config` of theory.experiments.scaling.fig2_explicit must be a Fig2ExplicitConfig; "
                        f"got {type(config).__name__}")
    c = config
    b = resolve(c.backend, c.device, c.dtype)
    h, p = explicit_res3_ratios(c.runs, c.d, c.L, c.beta, c.seed, backend=b, draws_on=c.draws_on, chunk=c.chunk,
                                gradients=c.gradients)
    return Fig2ExplicitResult(c, h, p)


def fig2_explicit_summary(result: Fig2ExplicitResult) -> dict:
    """Quartiles of both ratios (``h_q1``, ``h_median``, ``h_q3``, ``p_q1``, ...)."""
    out = {}
    for name, r in (("h", result.h), ("p", result.p)):
        if r is not None:
            q1, med, q3 = np.quantile(r, [0.25, 0.5, 0.75])
            out |= {f"{name}_q1": float(q1), f"{name}_median": float(med), f"{name}_q3": float(q3)}
    return out


register("scaling.fig2_explicit", config=Fig2ExplicitConfig, presets=FIG2_EXPLICIT_PRESETS, measure=fig2_explicit,
         summary=fig2_explicit_summary)
