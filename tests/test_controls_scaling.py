"""Negative controls of checks/test_scaling.py (Figure 6: the fBm variogram)."""

import numpy as np
import pytest

from theory.experiments.scaling import _fbm as chk
from theory.claims import rate_verdict
from theory.fbm import fbm
from theory.rates import fit_rate


@pytest.mark.parametrize("name", sorted(chk.FIG6))
def test_fig6_rejects_brownian_paths_for_another_hurst(name):
    """Paths of H = 1/2 (or of H = 0.8 for the Brownian claim) against the claim's slope 2H."""
    hurst = chk.FIG6[name]
    other = 0.8 if hurst == 0.5 else 0.5
    paths = fbm(1000, other, size=400, rng=np.random.default_rng(6))
    lags = 2 ** np.arange(9)
    fit = fit_rate(lags / 1000, chk.variogram(paths, lags))
    verdict = rate_verdict(fit, {"slope": 2 * hurst, "tol": 0.05})
    assert verdict.status == "fail", verdict.message


def test_fig6_rejects_a_random_walk_of_iid_steps_at_h_08():
    """Cumulative sums of i.i.d. steps (what a sampler that ignored the correlations would give)."""
    rng = np.random.default_rng(1)
    paths = np.concatenate([np.zeros((400, 1)), np.cumsum(rng.standard_normal((400, 1000)), axis=1)], axis=1)
    lags = 2 ** np.arange(9)
    fit = fit_rate(lags / 1000, chk.variogram(paths, lags))
    assert rate_verdict(fit, {"slope": 1.6, "tol": 0.05}).status == "fail"


def test_fig6_verdict_rejects_paths_of_h_shifted_by_005():
    """The package experiment with paths drawn at H + 0.05 (0.2 and 0.8: slope off by 0.1) fails."""
    from dataclasses import replace

    result = chk.fig6(replace(chk.FIG6_PRESETS["check"], hurst=(0.2, 0.8), path_hurst_shift=0.05))
    assert all(chk.fig6_verdict(result, i).status == "fail" for i in range(len(result.fits)))


@pytest.mark.parametrize("field, value", [("hurst", ()), ("hurst", (1.2,)), ("n", 1), ("paths", 0),
                                          ("lags", (1, 2)), ("lags", (1, 4000, 8000)), ("tol", 0.0),
                                          ("path_hurst_shift", 0.9)])
def test_fig6_config_rejects(field, value):
    from dataclasses import replace

    with pytest.raises(ValueError, match=field):
        replace(chk.FIG6_PRESETS["check"], **{field: value})


def test_fig6_window_is_derived_from_the_scatter_and_rejects_slope_2h_plus_005():
    """The window is the Bonferroni normal quantile times the bootstrap standard error over paths
    (0.008 to 0.025 at 400 paths), far below the former fixed 0.05: the statement's slope moved by
    0.05 (an index moved by 0.025) is rejected at every Hurst index and seed, the nominal one accepted."""
    from dataclasses import replace

    for seed in (1, 6):
        result = chk.fig6(replace(chk.FIG6_PRESETS["check"], seed=seed))
        for i, (fit, exp) in enumerate(zip(result.fits, chk.fig6_expected(result))):
            verdict = chk.fig6_verdict(result, i)
            assert verdict.status == "pass", verdict.message
            assert 0.0 < exp["tol"] < 0.03
            for shift in (-0.05, 0.05):
                moved = {"slope": exp["slope"] + shift, "tol": exp["tol"]}
                assert rate_verdict(fit, moved).status == "fail"


def test_fig6_config_rejects_bad_window_settings():
    from dataclasses import replace

    for field, value in (("ci_level", 1.0), ("n_boot", 10), ("tol", -0.1)):
        with pytest.raises(ValueError, match=field):
            replace(chk.FIG6_PRESETS["check"], **{field: value})
