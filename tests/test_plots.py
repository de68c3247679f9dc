"""Tests of theory.plots: each function draws, returns its axes and saves a PNG (Agg backend)."""

import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display in CI, and no GUI-backend warning

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from theory.plots import new_axes, plot_bound, plot_frequency, plot_rate, save_figure  # noqa: E402
from theory.rates import BoundResult, BoundTracker, bound_ratio, fit_rate, frequency  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
N = 2 ** np.arange(3, 11)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_plot_rate_two_fits_on_one_axes(in_tmp):
    rng = np.random.default_rng(0)
    euler = fit_rate(N, N**-1.0 * np.exp(0.05 * rng.standard_normal((4, N.size))))
    heun_errors = N**-2.0
    heun_errors[-1] = 1e-17  # at the floor: drawn as an open marker
    heun = fit_rate(N, heun_errors, floor=1e-15)
    ax = plot_rate(euler, expected_slope=-1, label="Euler", title="reconstruction error")
    assert plot_rate(heun, ax, expected_slope=-2, label="Heun") is ax
    texts = legend_texts(ax)
    assert "Euler" in texts and "Heun" in texts and "dropped (floor)" in texts
    assert f"fit: slope {euler.slope:.2f} [{euler.ci[0]:.2f}, {euler.ci[1]:.2f}]" in texts
    assert "guide: slope -1, predicted" in texts and "guide: slope -2, predicted" in texts
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "N" and ax.get_ylabel() == "error" and ax.get_title() == "reconstruction error"
    colours = {line.get_color() for line in ax.lines if line.get_label() in ("Euler", "Heun")}
    assert len(colours) == 2
    path = save_figure(ax.figure, "resnet-node/prop-3")
    assert path == "figures/out/resnet-node__prop-3.png"
    data = (in_tmp / path).read_bytes()
    assert data[:8] == PNG_MAGIC
    assert not plt.get_fignums()  # closed


def test_plot_rate_guide_has_the_slope_and_stays_visible_above_the_points():
    fit = fit_rate(N, 5.0 * N**-1.0)
    ax = plot_rate(fit, expected_slope=-1.0, expected_label="slope -1, proved rate (faster is allowed)")
    guide = next(line for line in ax.lines if line.get_label().startswith("guide"))
    fitted = next(line for line in ax.lines if line.get_label().startswith("fit"))
    assert guide.get_label() == "guide: slope -1, proved rate (faster is allowed)"
    # same slope as the data, drawn apart from the fitted line (above every point), never on top of it
    ratio = guide.get_ydata() / fitted.get_ydata()
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-10)
    assert ratio[0] >= 1.9


def test_plot_bound_from_tracker_pairs_and_ratios(in_tmp):
    tracker = BoundTracker()
    rng = np.random.default_rng(1)
    for i in range(50):
        rhs = rng.uniform(0.1, 10.0)
        tracker.add(rhs * rng.uniform(0.1, 0.9), rhs, {"seed": i})
    result = tracker.result()
    ax = plot_bound(result, title="Gronwall bound")
    texts = legend_texts(ax)
    assert "LHS = RHS" in texts and f"worst: ratio {result.ratio:.3g}" in texts
    assert ax.get_xscale() == "log"
    assert save_figure(ax, "scaling/cor-4", directory="plots").endswith("plots/scaling__cor-4.png")
    ax = plot_bound(([0.0, 1.0], [1.0, 2.0]), ratio_max=2.0)  # a zero LHS: linear axes
    assert ax.get_xscale() == "linear" and "LHS = 2·RHS" in legend_texts(ax)
    ax = plot_bound(np.array([0.2, 0.7, 0.4]))
    assert ax.get_ylabel() == "LHS / RHS" and "worst: ratio 0.7" in legend_texts(ax)
    with pytest.raises(ValueError, match="no per-instance lhs/rhs"):
        plot_bound(BoundResult(0.5, 3, 0))
    assert plot_bound(bound_ratio([1.0, 2.0], [3.0, 3.0])).get_xlabel() == "RHS"


def test_plot_frequency_rows_and_delta(in_tmp):
    ax = plot_frequency(frequency(np.arange(500) < 9, delta=0.05), label="d = 4")
    plot_frequency(frequency(np.arange(500) < 30, delta=0.05), ax, label="d = 16")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["d = 4", "d = 16"]
    assert legend_texts(ax).count("δ = 0.05") == 1
    assert ax.get_xlim()[1] > 0.06
    path = save_figure(ax.figure, "icl-ar/thm-2/erratum")
    assert path == "figures/out/icl-ar__thm-2__erratum.png" and os.path.getsize(path) > 1000


def test_save_figure_size_and_validation(in_tmp):
    ax = new_axes()
    path = save_figure(ax.figure, "topk/prop-7.8")
    width, height = matplotlib.image.imread(path).shape[1::-1]
    assert (width, height) == (750, 540)  # 5.0 x 3.6 inches at 150 dpi
    with pytest.raises(ValueError, match="unknown paper key"):
        save_figure(new_axes().figure, "nope/prop-1")
    with pytest.raises(ValueError, match="must be a matplotlib Figure or Axes"):
        save_figure(object(), "topk/prop-7.8")


def test_importing_theory_plots_does_not_import_matplotlib():
    code = "import sys, theory.plots, theory.claims, theory.report; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_save_figure_puts_the_claim_id_in_the_title(in_tmp):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title("Gap between the ResNet and the ODE")
    save_figure(fig, "resnet-node/prop-1")
    assert fig._suptitle.get_text() == "resnet-node/prop-1"
    fig, ax = plt.subplots()
    ax.set_title("scaling/fig-7: critical beta")
    fig.suptitle("overview")
    save_figure(fig, "scaling/fig-7/fine")
    assert fig._suptitle.get_text() == "overview"  # an axes title already names it
