"""The fBm paths of Figure 6 of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in
the Large-depth Regime"; Figure 2.6 of P. Marion's thesis): the empirical variogram whose log-log slope
is 2H for a fractional Brownian motion of Hurst index H.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.claims import rate_verdict
from theory.experiments._registry import register
from theory.fbm import fbm
from theory.rates import fit_rate

#: the three Hurst indices of Figure 6 (rough, Brownian, smooth)
FIG6 = {"rough": 0.2, "brownian": 0.5, "smooth": 0.8}


def variogram(paths, lags):
    """Empirical E|B_{t + tau} - B_t|^2 over paths and start times, for integer step lags."""
    return np.array([np.mean((paths[..., lag:] - paths[..., :-lag]) ** 2) for lag in lags])


@dataclass(frozen=True)
class Fig6Config:
    """Variograms of fBm paths (Figure 6).

    Attributes
    ----------
    hurst : tuple of float
        Hurst indices in (0, 1); one rate fit each.
    n : int
        Steps per path on [0, 1] (tau = lag / n), >= 2.
    paths : int
        Paths per Hurst index, >= 2.
    lags : tuple of int
        Step lags of the variogram (increasing, at least 3, below n).
    seed : int
        Seed of the Generator; each Hurst index starts a fresh Generator from it.
    path_hurst_shift : float
        Paths are drawn at H + path_hurst_shift while the statement's slope is 2H (0 for the claim; the
        negative controls mis-specify the sampler with it).
    tol : float
        Half-width of the acceptance window around 2H (> 0): the standard error of the slope over 400
        paths is below 0.01.
    """

    hurst: tuple = tuple(FIG6.values())
    n: int = 1000
    paths: int = 400
    lags: tuple = tuple(2 ** k for k in range(9))
    seed: int = 6
    path_hurst_shift: float = 0.0
    tol: float = 0.05

    def __post_init__(self):
        where = "theory.experiments._scaling_fbm.Fig6Config"
        if not self.hurst or any(not 0.0 < h < 1.0 for h in self.hurst):
            raise ValueError(f"`hurst` of {where} must be a non-empty tuple in (0, 1); got {self.hurst!r}")
        if any(not 0.0 < h + self.path_hurst_shift < 1.0 for h in self.hurst):
            raise ValueError(f"`path_hurst_shift` of {where} must keep H + shift in (0, 1); got {self.path_hurst_shift!r}")
        for name, low in (("n", 2), ("paths", 2)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"`{name}` of {where} must be an int >= {low}; got {v!r}")
        lags = np.asarray(self.lags)
        if lags.size < 3 or np.any(np.diff(lags) <= 0) or lags[0] < 1 or lags[-1] >= self.n:
            raise ValueError(f"`lags` of {where} must be >= 3 increasing lags in [1, n); got {self.lags!r}")
        if not self.tol > 0:
            raise ValueError(f"`tol` of {where} must be positive; got {self.tol!r}")


FIG6_PRESETS = {
    # the check: 400 paths of 1000 steps per Hurst index, lags 1..256
    "check": Fig6Config(),
    # Figure 6 of the paper draws single paths of H = 0.2, 0.5, 0.8 on [0, 1]; the variogram needs many:
    # 10^4 paths of 10^4 steps
    "paper": Fig6Config(n=10_000, paths=10_000, lags=tuple(2 ** k for k in range(12))),
}


@dataclass(frozen=True)
class Fig6Result:
    """``fits[i]`` the rate fit of the variogram against tau at ``config.hurst[i]``; ``first_path[i]``
    one path (for the figure's inset)."""

    config: Fig6Config
    fits: tuple
    first_path: tuple


def fig6(config: Fig6Config) -> Fig6Result:
    """Sample the paths (exact Davies-Harte sampler, :func:`theory.fbm.fbm`) and fit each variogram."""
    lags = np.asarray(config.lags)
    fits, first = [], []
    for h in config.hurst:
        paths = fbm(config.n, h + config.path_hurst_shift, size=config.paths, rng=np.random.default_rng(config.seed))
        fits.append(fit_rate(lags / config.n, variogram(paths, lags)))
        first.append(paths[0])
    return Fig6Result(config, tuple(fits), tuple(first))


def fig6_expected(result: Fig6Result) -> list:
    """The statement's slope 2H with the config's window, per Hurst index."""
    return [{"slope": 2 * h, "tol": result.config.tol} for h in result.config.hurst]


def fig6_verdict(result: Fig6Result) -> list:
    """One :func:`theory.claims.rate_verdict` per Hurst index (slope 2H +- tol)."""
    return [rate_verdict(f, e, grid_label="tau") for f, e in zip(result.fits, fig6_expected(result))]


register("scaling.fig6", config=Fig6Config, presets=FIG6_PRESETS, measure=fig6, verdict=fig6_verdict,
         claims=tuple(f"scaling/fig-6/{k}" for k in FIG6),
         summary=lambda r: {f"slope_H{h:g}": f.slope for h, f in zip(r.config.hurst, r.fits)})
