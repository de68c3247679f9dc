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

from dataclasses import dataclass

import numpy as np

from theory.backends import BACKENDS, DRAWS_ON, DTYPES, resolve, validate_fields
from theory.backends.scaling import explicit_res3_ratios, phase_grid
from theory.experiments._registry import register
from theory.experiments.config import Bool, Choice, Config, Custom, Int, Real, Reals, Seed, field

__all__ = ["Fig7GridConfig", "Fig7GridResult", "FIG7_GRID_PRESETS", "fig7_grid", "fig7_grid_summary",
           "Fig2ExplicitConfig", "Fig2ExplicitResult", "FIG2_EXPLICIT_PRESETS", "fig2_explicit",
           "fig2_explicit_summary", "BackendConfig", "backend_field", "device_field", "dtype_field",
           "draws_on_field"]


def _device(value):
    """A device name: ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (availability is checked with the backend)."""
    if not isinstance(value, str):
        raise TypeError("not a string")
    kind, sep, index = value.partition(":")
    if kind not in ("cpu", "cuda") or (sep and (kind != "cuda" or not index.isdigit())):
        raise ValueError("not a device name")
    return value


def backend_field():
    """The ``backend`` field of a scale experiment's config (:mod:`theory.backends`)."""
    return field(Choice(*BACKENDS), "numpy", "Array backend: 'numpy' (the package's kernels) or 'torch' "
                 "(PyTorch, the ``gpu`` extra).")


def device_field():
    """The ``device`` field of a scale experiment's config."""
    return field(Custom(_device, "'cpu', 'cuda' or 'cuda:N'", type_name="str", parse=str.strip,
                        invalid=[(1, TypeError), ("gpu", ValueError), ("cpu:0", ValueError)],
                        boundary=["cpu", "cuda", "cuda:0"]),
                 "cpu", "Device of the torch backend; 'cpu' with the NumPy backend.")


def dtype_field():
    """The ``dtype`` field of a scale experiment's config."""
    return field(Choice(*DTYPES), "float64", "Floating-point type; 'float64' with the NumPy backend (half "
                 "precisions are refused: the measured figures need float32 at least).")


def draws_on_field():
    """The ``draws_on`` field of a scale experiment's config."""
    return field(Choice(*DRAWS_ON), "host", "'host': NumPy draws, identical on every backend; 'device' (torch "
                 "only): drawn by a seeded torch Generator on the device, equal in law.")


class BackendConfig(Config):
    """Mixin of the configs with ``backend``, ``device``, ``dtype`` (and ``draws_on``) fields: their
    combination is checked by :func:`theory.backends.validate_fields` (NumPy needs 'cpu' and 'float64',
    a CUDA device must be visible, 'device' draws need torch)."""

    def check(self) -> None:
        validate_fields(self, f"theory.experiments.scaling.{type(self).__name__}")


def _linspace(a, b, n):
    return tuple(float(x) for x in np.round(np.linspace(a, b, n), 10))


# =========================================================================== Figure 7, the whole grid


@dataclass(frozen=True)
class Fig7GridConfig(BackendConfig):
    """The (H, beta) grid of Figure 7 of ``scaling``."""

    hurst: tuple = field(Reals(0, 1, closed="neither"), (0.2, 0.5, 0.8), "Hurst indices of the fGn weights.")
    beta: tuple = field(Reals(0, 10, closed="neither", increasing=True), (0.3, 0.5, 0.7, 0.9, 1.1),
                        "Scaling exponents (the residual branch is multiplied by L^-beta).")
    L: int = field(Int(low=2), 100, "Depth.")
    d: int = field(Int(low=1), 10, "Width.")
    draws: int = field(Int(low=1), 2, "Weight draws per Hurst index (shared by every beta).")
    n_inputs: int = field(Int(low=1), 4, "Gaussian inputs h_0 (and directions p_L) per draw; a cell averages "
                          "their log ratios.")
    gradients: bool = field(Bool(), True, "Also the gradient panel (doubles the cost; the torch backend then "
                            "keeps one byte per (layer, input, beta, coordinate) of each chunk).")
    seed: int = field(Seed(), 0, "Seed of the NumPy Generator (draws_on='host') or of the torch Generator "
                      "(draws_on='device').")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()
    draws_on: str = draws_on_field()


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
class Fig2ExplicitConfig(BackendConfig):
    """Figure 2 of ``scaling`` with explicit Gaussian matrices."""

    runs: int = field(Int(low=8), 200, "Independent networks.")
    d: int = field(Int(low=1), 20, "Width.")
    L: int = field(Int(low=1), 100, "Depth.")
    beta: float = field(Real(0, closed="neither"), 0.5, "Scaling exponent (the figure: 1/2).")
    seed: int = field(Seed(), 2, "Seed: the inputs of chunk c and the weights of its layer k come from generators "
                      "seeded (seed, c, L) and (seed, c, k).")
    chunk: int = field(Int(low=1), 2500, "Networks run together (device memory: about 2 R d^2 + L R d bytes per "
                       "chunk of R).")
    gradients: bool = field(Bool(), True, "Also the co-state ratio ||p_0||/||p_L|| (a backward pass that draws "
                            "the weights again).")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()
    draws_on: str = draws_on_field()


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


# registered with its claim, scaling/fig-2b, by theory.experiments.scaling.figures (the figure's declaration)
