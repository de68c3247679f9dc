"""scaling.fig7_cell: one cell of the Figure 7 phase diagram, as registered for sweeps."""

import math

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments.scaling import Fig7CellConfig, fig7_cell
from theory.scaling.phase import phase_diagram


def test_cell_is_the_phase_diagram_at_one_point_and_rms_over_draws():
    cfg = Fig7CellConfig(beta=0.6, hurst=0.7, depth=40, width=5, draws=3, seed=3)
    res = fig7_cell(cfg)
    pd = phase_diagram([0.7], [0.6], L=40, d=5, n_seeds=3, rng=np.random.default_rng(3))
    assert np.array_equal(res.hidden_draws, pd.hidden[0, 0]) and np.array_equal(res.gradient_draws, pd.gradient[0, 0])
    assert res.hidden == pytest.approx(math.log10(math.sqrt(np.mean(10.0 ** (2 * pd.hidden[0, 0])))), rel=1e-12)
    # the weights do not depend on beta: the cells of one Hurst index share them, as the figure's columns do
    grid = phase_diagram([0.7], [0.3, 0.6, 1.1], L=40, d=5, n_seeds=3, rng=np.random.default_rng(3))
    for j, beta in enumerate((0.3, 0.6, 1.1)):
        assert np.array_equal(fig7_cell(Fig7CellConfig(beta, 0.7, 40, 5, 3, 3)).hidden_draws, grid.hidden[0, j])


def test_explosion_and_identity_sides():
    exp = experiment("scaling.fig7_cell")
    assert exp.fields == ("beta", "hurst", "depth", "width", "draws", "seed", "backend", "device", "dtype")
    low = exp.summary(exp.run("check", beta=0.2, hurst=0.5, depth=100, width=8))
    high = exp.summary(exp.run("check", beta=1.2, hurst=0.5, depth=100, width=8))
    assert low["hidden"] > 0 > high["hidden"] and low["gradient"] > 0 > high["gradient"]
    assert set(low) == {"hidden", "gradient", "hidden_mean", "gradient_mean", "hidden_std", "gradient_std"}
    assert exp.presets["paper"].depth == 1000 and exp.presets["paper"].width == 40


@pytest.mark.parametrize("kw, message", [
    ({"beta": 0.0}, "`beta` of Fig7CellConfig must be a finite number > 0"),
    ({"beta": float("inf")}, "`beta` of"),
    ({"hurst": 1.0}, "`hurst` of Fig7CellConfig must be a finite number in \\(0, 1\\)"),
    ({"depth": 1}, "`depth` of .* must be an integer >= 2"),
    ({"width": 0}, "`width` of .* must be an integer >= 1"),
    ({"draws": 0}, "`draws` of .* must be an integer >= 1"),
    ({"seed": -1}, "`seed` of .* must be an integer >= 0"),
])
def test_config_validation(kw, message):
    with pytest.raises(ValueError, match=message):
        Fig7CellConfig(**kw)
    with pytest.raises(TypeError, match="`beta` of .* must be a finite number"):
        Fig7CellConfig(beta="0.5")
    with pytest.raises(TypeError, match="`width` of .* must be an integer >= 1"):
        Fig7CellConfig(width=2.5)
    with pytest.raises(TypeError, match="must be a Fig7CellConfig"):
        fig7_cell({"beta": 0.5})
