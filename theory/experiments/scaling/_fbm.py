"""The fBm paths of Figure 6 of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in
the Large-depth Regime"; Figure 2.6 of P. Marion's thesis): the empirical variogram whose log-log slope
is 2H for a fractional Brownian motion of Hurst index H.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from statistics import NormalDist

import numpy as np

from theory.claims import Verdict, rate_verdict
from theory.experiments._registry import register
from theory.experiments.config import Config, Int, Ints, OrNone, Real, Reals, Seed, field
from theory.fbm import fbm
from theory.rates import fit_rate

#: the three Hurst indices of Figure 6 (rough, Brownian, smooth)
FIG6 = {"rough": 0.2, "brownian": 0.5, "smooth": 0.8}


def variogram(paths, lags):
    """Empirical E|B_{t + tau} - B_t|^2 over paths and start times, for integer step lags."""
    return np.array([np.mean((paths[..., lag:] - paths[..., :-lag]) ** 2) for lag in lags])


@dataclass(frozen=True)
class Fig6Config(Config):
    """Variograms of fBm paths (Figure 6)."""

    hurst: tuple = field(Reals(0, 1, closed="neither"), tuple(FIG6.values()), "Hurst indices; one rate fit each.")
    n: int = field(Int(low=2), 1000, "Steps per path on [0, 1] (tau = lag / n).")
    paths: int = field(Int(low=2), 400, "Paths per Hurst index.")
    lags: tuple = field(Ints(low=1, min_len=3, increasing=True), tuple(2 ** k for k in range(9)), "Step lags of "
                        "the variogram (below n).")
    seed: int = field(Seed(), 6, "Seed of the Generator; each Hurst index starts a fresh Generator from it.")
    path_hurst_shift: float = field(Real(), 0.0, "Paths are drawn at H + path_hurst_shift while the statement's "
                                    "slope is 2H (0 for the claim; the negative controls mis-specify the sampler "
                                    "with it); every H + shift must lie in (0, 1).")
    tol: float | None = field(OrNone(Real(0, closed="neither"), "the window from the scatter"), None,
                              "Fixed half-width of the acceptance window around 2H, or None (the default): the "
                              "window is then derived from the scatter, ``z * se`` with ``se`` the bootstrap "
                              "standard error of the slope over paths (resampled whole) and ``z`` the normal "
                              "quantile at the Bonferroni level 1 - (1 - ci_level)/(2 n_H). The sampler is exact, "
                              "so the expected slope is exactly 2H; the only finite-size bias is that of the log "
                              "of a mean, below 1e-3 here.")
    ci_level: float = field(Real(0, 1, closed="neither"), 0.99, "Family-wise level of the derived windows over "
                            "the Hurst indices.")
    n_boot: int = field(Int(low=50), 200, "Bootstrap resamples of the paths.")

    def check(self):
        if any(not 0.0 < h + self.path_hurst_shift < 1.0 for h in self.hurst):
            raise self.invalid("path_hurst_shift", "keep every H + shift in (0, 1)")
        if self.lags[-1] >= self.n:
            raise self.invalid("lags", f"stay below n = {self.n}")


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
    one path (for the figure's inset); ``slope_se[i]`` the bootstrap standard error of the slope over
    paths."""

    config: Fig6Config
    fits: tuple
    first_path: tuple
    slope_se: tuple = ()


def _ls_slope(x, Y):
    """Least-squares slopes of the rows of log Y against log x."""
    lx = np.log(x) - np.mean(np.log(x))
    ly = np.log(Y)
    return (ly - ly.mean(axis=-1, keepdims=True)) @ lx / np.dot(lx, lx)


def fig6(config: Fig6Config) -> Fig6Result:
    """Sample the paths (exact Davies-Harte sampler, :func:`theory.fbm.fbm`) and fit each variogram."""
    lags = np.asarray(config.lags)
    fits, first, ses = [], [], []
    boot = np.random.default_rng([config.seed, 1])
    idx = boot.integers(0, config.paths, size=(config.n_boot, config.paths))
    for h in config.hurst:
        paths = fbm(config.n, h + config.path_hurst_shift, size=config.paths, rng=np.random.default_rng(config.seed))
        fits.append(fit_rate(lags / config.n, variogram(paths, lags)))
        first.append(paths[0])
        per_path = np.stack([np.mean((paths[:, lag:] - paths[:, :-lag]) ** 2, axis=1) for lag in lags], axis=1)
        slopes = _ls_slope(lags / config.n, per_path[idx].mean(axis=1))
        ses.append(float(np.std(slopes, ddof=1)))
    return Fig6Result(config, tuple(fits), tuple(first), tuple(ses))


def fig6_expected(result: Fig6Result) -> list:
    """The statement's slope 2H with its window per Hurst index: the config's fixed ``tol``, or (None)
    the Bonferroni normal quantile times the bootstrap standard error over paths."""
    c = result.config
    if c.tol is not None:
        return [{"slope": 2 * h, "tol": c.tol} for h in c.hurst]
    z = float(NormalDist().inv_cdf(1.0 - (1.0 - c.ci_level) / (2.0 * len(c.hurst))))
    return [{"slope": 2 * h, "tol": z * se} for h, se in zip(c.hurst, result.slope_se)]


def fig6_verdict(result: Fig6Result, index: int | None = None) -> Verdict:
    """A rate (:func:`theory.claims.rate_verdict`, slope 2H +- tol of :func:`fig6_expected`) at Hurst index
    ``config.hurst[index]``; with ``index=None`` the Hurst index farthest from its window (so that the
    verdict passes iff every one does)."""
    expected = fig6_expected(result)
    if index is None:
        excess = [abs(f.slope - e["slope"]) - e["tol"] for f, e in zip(result.fits, expected)]
        index = int(np.argmax(excess))
    return rate_verdict(result.fits[index], expected[index], grid_label="tau")


def fig6_case(result: Fig6Result, name: str) -> Fig6Result:
    """The part of ``result`` at the Hurst index ``FIG6[name]`` of Figure 6, as the result of a config with that
    Hurst index alone: each Hurst index draws its paths from a fresh Generator of the same seed and the bootstrap
    indices are shared, so the fit and the standard error are those of ``replace(config, hurst=(H,))``, and the
    derived window (:func:`fig6_expected`) is the one of a single Hurst index (a claim per Hurst index)."""
    if name not in FIG6:
        raise ValueError(f"`name` of theory.experiments.scaling.fig6_case must be one of {tuple(FIG6)}; got {name!r}")
    hurst = FIG6[name]
    if hurst not in result.config.hurst:
        raise ValueError(f"`result` of theory.experiments.scaling.fig6_case has no Hurst index {hurst} ({name}); "
                         f"its Hurst indices: {result.config.hurst}")
    i = result.config.hurst.index(hurst)
    return Fig6Result(replace(result.config, hurst=(hurst,)), (result.fits[i],), (result.first_path[i],),
                      (result.slope_se[i],))


def fig6_claim_verdict(result: Fig6Result, name: str) -> Verdict:
    """The record of ``scaling/fig-6/<name>``: :func:`fig6_verdict` of :func:`fig6_case`."""
    return fig6_verdict(fig6_case(result, name))


register("scaling.fig6", config=Fig6Config, presets=FIG6_PRESETS, measure=fig6, verdict=fig6_verdict,
         claims={f"scaling/fig-6/{k}": partial(fig6_claim_verdict, name=k) for k in FIG6},
         summary=lambda r: {**{f"slope_H{h:g}": f.slope for h, f in zip(r.config.hurst, r.fits)},
                            **{f"slope_se_H{h:g}": se for h, se in zip(r.config.hurst, r.slope_se)}})
