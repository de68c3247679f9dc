"""Checks of "Scaling ResNets in the Large-depth Regime" (paper key ``scaling``).

Numbering of the preprint (2022); the thesis numbers (P. Marion's thesis, chapter 2) are recorded
as aliases.
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments.scaling import FIG6, fig6_case
from theory.plots import new_axes, plot_rate, save_figure

# --------------------------------------------------------------------------- Figure 6: fBm paths


@pytest.mark.parametrize("name", [
    pytest.param(name, id=f"scaling/fig-6/{name}", marks=pytest.mark.claim(
        f"scaling/fig-6/{name}", kind="rate", aliases=("marion-thesis/fig-2.6",),
        title=f"fBm paths of Hurst index H = {hurst}: variogram E|B(t+tau) - B(t)|^2 = tau^(2H)"))
    for name, hurst in FIG6.items()
])
def test_fig6_variogram(claim, name):
    """Exact sampler (theory.fbm, Davies-Harte): 400 paths of 1000 steps on [0, 1]; lags of 1 to
    256 steps (tau = lag / 1000). The slope of the log-log variogram must be 2H within the Bonferroni
    99% normal window of its bootstrap standard error over paths (about 0.01 to 0.02)."""
    hurst = FIG6[name]
    exp = experiment("scaling.fig6")
    full = exp.run("check")
    result = fig6_case(full, name)  # this Hurst index alone (its paths, its window)
    fit = result.fits[0]
    n = result.config.n
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=2 * hurst, xlabel=r"$\tau$",
              ylabel=r"$\mathbb{E}|B^H_{t+\tau} - B^H_t|^2$", label=f"H = {hurst}",
              title=f"scaling/fig-6: fBm variogram, H = {hurst}")
    inset = ax.figure.add_axes([0.62, 0.2, 0.3, 0.22])
    inset.plot(np.linspace(0, 1, n + 1), result.first_path[0], lw=0.6)
    inset.set_xticks([])
    inset.set_yticks([])
    claim_id = f"scaling/fig-6/{name}"
    claim.record(exp.verdict_for(claim_id)(full), figure=save_figure(ax.figure, claim_id))
