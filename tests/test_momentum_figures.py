"""Unit tests of the figure experiments of chapter 4 (rings, LISTA, Fig. 4.2 memory, Prop. 4.15, Table 4.1) and of
their declarations (theory.experiments.momentum.figures)."""

import dataclasses
import os

import numpy as np
import pytest

import theory.experiments.momentum.lista as lista
import theory.experiments.momentum.memory_depth as memory_depth
import theory.experiments.momentum.prop415 as prop415
import theory.experiments.momentum.reversible as reversible
import theory.experiments.momentum.rings as rings
from theory.experiments import figure, figures
from theory.papers import paper

MINE = ("fig-4.1", "fig-4.2", "fig-4.3", "fig-4.4", "fig-4.5", "fig-4.10", "fig-4.11", "table-4.1")


def test_every_label_of_this_module_is_declared():
    declared = {f.label for f in figures("momentum")}
    assert set(MINE) <= declared
    assert set(MINE) <= set(paper("momentum").figures)
    assert figure("momentum/fig-4.3").illustration and not figure("momentum/fig-4.3").claims
    for label in MINE:
        fig = figure(f"momentum/{label}")
        assert fig.illustration or (fig.criterion and fig.claims and fig.experiment)


def test_make_rings_shapes_and_radii():
    x, y = rings.make_rings(50, 4, np.random.default_rng(0))
    assert x.shape == (200, 2) and x.dtype == np.float64 and y.dtype == np.int64
    r = np.hypot(x[:, 0], x[:, 1])
    for k in range(4):
        rk = r[y.size // 4 * k: y.size // 4 * (k + 1)]
        assert rk.min() >= 3 * 0.5 * (k + 1) and rk.max() <= 3 * (0.5 * (k + 1) + 0.2)
    assert list(np.unique(y[:50])) == [0] and list(np.unique(y[50:100])) == [1]


def _png(path):
    assert os.path.exists(path) and path.endswith(".png")
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_rings_tiny_run_and_drawing(tmp_path):
    from theory.plots import figure_directory

    cfg = dataclasses.replace(rings.RINGS_PRESETS["check"], train_per_ring=10, test_per_ring=10, momentum_epochs=2,
                              resnet_epochs=2)
    result = rings.measure_rings(cfg)
    assert result.clouds_momentum.shape == (6, 40, 2) and result.layers == (0, 3, 6, 9, 12, 15)
    assert 0 <= result.momentum <= 1 and rings.rings_verdict(result).status in ("pass", "fail")
    with figure_directory(tmp_path):
        _png(rings.rings_figure(result))


def test_lista_tiny_run_and_drawing(tmp_path):
    from theory.plots import figure_directory

    cfg = dataclasses.replace(lista.LISTA_PRESETS["check"], depths=(1, 2), iterations=2, batch=8, n_test=16)
    result = lista.measure_lista(cfg)
    assert result.loss_opt <= min(result.loss["lista"]) + 1e-12 and result.loss_opt <= result.loss_zero
    with figure_directory(tmp_path):
        _png(lista.lista_figure(result))


def test_lista_zero_iterations_is_ista():
    cfg = dataclasses.replace(lista.LISTA_PRESETS["check"], depths=(3,), iterations=0, n_test=32)
    result = lista.measure_lista(cfg)
    assert result.loss["lista"][0] == pytest.approx(result.loss_ista[0], rel=1e-12)


def test_fig42_tiny_run_and_drawing(tmp_path):
    from theory.plots import figure_directory

    cfg = dataclasses.replace(memory_depth.FIG42_PRESETS["check"], d=8, batch=8, depths=(1, 50))
    result = memory_depth.measure_fig42(cfg)
    assert result.batch_d == 64 and result.depths == (1, 50)
    with figure_directory(tmp_path):
        _png(memory_depth.fig42_figure(result))


def test_prop415_and_reversible_drawings(tmp_path):
    from theory.plots import figure_directory

    r415 = prop415.measure_prop415(prop415.PROP415_PRESETS["check"])
    rrev = reversible.measure_reversible(dataclasses.replace(reversible.REVERSIBLE_PRESETS["check"], depth=3))
    with figure_directory(tmp_path):
        _png(prop415.prop415_figure(r415))
        _png(reversible.reversible_figure(rrev))


def test_reversible_rejects_odd_dimension():
    with pytest.raises(ValueError, match="d"):
        reversible.ReversibleConfig(d=7)
