"""Unit tests of the figure modules of ``topk`` (theory.experiments.topk.figures, permutohedron, runtime, pruning,
smooth_loss, moe): every inventory label is declared, every drawing runs and writes a PNG, the data paths run end to
end on tiny synthetic arrays of the datasets' shapes (theory.datasets.load monkeypatched), and the pieces agree with
independent computations (the projection onto P(w) against a brute-force QP, the MoE router's closed-form vjp against
theory.topk.vjp). Config validation is the generic tests/test_config_fields.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import os

import numpy as np
import pytest

import theory.datasets
from theory.experiments import experiment, figure, figures
from theory.papers import paper
from theory.plots import figure_directory

torch = pytest.importorskip("torch")

#: tiny overrides per experiment: a run of a few seconds that still goes through every code path
TINY = {
    "topk.fig72": dict(directions=12, inside=5),
    "topk.fig74": dict(n_grid=(100, 200, 400, 800, 1600), fit_from=100, repeats=1),
    "topk.fig75": dict(epochs=2, train_size=256, test_size=64, hidden=(8, 8)),
    "topk.fig75_digits": dict(epochs=2, hidden=(8, 8)),
    "topk.fig76": dict(image_size=16, patch=8, width=16, depth=1, heads=2, steps=3, warmup=1, batch=16,
                       train_size=64, test_size=32),
    "topk.fig76_digits": dict(steps=3, warmup=1),
    "topk.fig77": dict(tokens=20, experts=4, k=6, steps=4, eval_every=2, batch=8),
    "topk.fig77_synthetic": dict(steps=4, eval_every=2, batch=8, train_size=64, test_size=32),
}


def fake_load(name, data=None, **options):
    """Synthetic arrays in the formats of theory.datasets.load: MNIST (uint8 (n, 28, 28)), CIFAR-100
    (uint8 (n, 32, 32, 3), 100 classes), and for JFT-300M token arrays (float32 (n, 20, 16)) with 10 labels."""
    rng = np.random.default_rng(0)
    if name == "mnist":
        def split(n):
            y = rng.integers(0, 10, n).astype(np.int64)
            x = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
            x[np.arange(n), 2 * y + 3, :] = 255  # a class-dependent bright row: learnable
            return x, y
        return (*split(512), *split(128))
    if name == "cifar-100":
        def split(n):
            y = rng.integers(0, 100, n).astype(np.int64)
            x = rng.integers(0, 40, (n, 32, 32, 3)).astype(np.uint8)
            x[np.arange(n), y % 32, :, y // 34] = 255
            return x, y
        return (*split(512), *split(128))
    if name == "jft-300m":
        def split(n):
            y = rng.integers(0, 10, n).astype(np.int64)
            x = rng.standard_normal((n, 20, 16)).astype(np.float32)
            x[np.arange(n), :, y] += 2.0
            return x, y
        return (*split(256), *split(64))
    raise AssertionError(name)


@pytest.fixture
def fake_data(monkeypatch):
    monkeypatch.setattr(theory.datasets, "load", fake_load)


def test_every_inventory_label_is_declared():
    labels = {f.base for f in figures("topk")}
    assert set(paper("topk").figures) <= labels


def test_declared_claims_are_the_experiments():
    for f in figures("topk"):
        assert set(f.claims) <= set(experiment(f.experiment).claims), f.id


@pytest.mark.parametrize("name", sorted(TINY))
def test_drawing_writes_png(name, fake_data, tmp_path):
    exp = experiment(name)
    result = exp.run("check", **TINY[name])
    fig = next(f for f in figures("topk") if f.experiment == name)
    with figure_directory(tmp_path):
        path = fig.draw(result)
    assert os.path.exists(path) and path.endswith(".png") and os.path.dirname(path) == str(tmp_path)
    numbers = fig.numbers_of(result, {c: exp.verdict_for(c)(result) for c in fig.claims},
                             exp.config_for("check", **TINY[name]))
    for p in fig.printed:
        if p.measured is not None:
            assert p.measured in numbers, (fig.id, p.measured)


@pytest.mark.parametrize("fid", ["topk/fig-7.1", "topk/fig-7.1/smooth", "topk/fig-7.3", "topk/fig-7.8",
                                 "topk/fig-7.9"])
def test_existing_experiments_draw_in_the_document_layout(fid, tmp_path):
    fig = figure(fid)
    exp = experiment(fig.experiment)
    cfg = exp.config_for("check")
    small = {"topk/fig-7.3": dict(grid=41), "topk/fig-7.9": dict(resolution=20)}.get(fid, {})
    result = exp.measure(dataclasses.replace(cfg, **small))
    with figure_directory(tmp_path):
        path = fig.draw(result)
    assert os.path.exists(path)


def test_projection_onto_permutohedron_against_brute_force():
    from scipy.optimize import minimize

    from theory.experiments.topk.permutohedron import project_permutohedron

    rng = np.random.default_rng(3)
    w = np.array([0.7, 0.2, 0.1, 0.0])
    verts = np.array(list(itertools.permutations(w)))
    for _ in range(5):
        z = rng.standard_normal(4)
        res = minimize(lambda lam: 0.5 * np.sum((lam @ verts - z) ** 2), np.full(len(verts), 1 / len(verts)),
                       jac=lambda lam: verts @ (lam @ verts - z), bounds=[(0, None)] * len(verts),
                       constraints=[{"type": "eq", "fun": lambda lam: lam.sum() - 1}], method="SLSQP",
                       options={"ftol": 1e-15, "maxiter": 1000})
        assert np.max(np.abs(project_permutohedron(z, w) - res.x @ verts)) < 1e-6


def test_projection_rejects_mismatched_shapes():
    from theory.experiments.topk.permutohedron import project_permutohedron

    with pytest.raises(ValueError, match="`z` and `w`"):
        project_permutohedron([1.0, 2.0], [1.0, 0.0, 0.0])


def test_router_vjp_matches_the_package():
    from theory.experiments.topk.moe import _mask_vjp
    from theory.topk import topk_mask, vjp

    rng = np.random.default_rng(1)
    x, c = rng.standard_normal((6, 30)), rng.standard_normal((6, 30))
    for reg in (0.1, 1.0, 5.0):
        y = topk_mask(x, 7, reg)
        ours = _mask_vjp(torch.from_numpy(y), torch.from_numpy(c), reg).numpy()
        assert np.max(np.abs(ours - vjp(x, 7, c, reg))) < 1e-12


def test_pruning_operator_gradient_is_the_package_vjp():
    from theory.experiments.topk.pruning import topkmag_torch
    from theory.topk import topk_magnitude, vjp

    w = torch.randn(5, 8, dtype=torch.float64, requires_grad=True)
    y = topkmag_torch(w, 0.25, 0.1, "p=2")
    g = torch.randn(5, 8, dtype=torch.float64)
    y.backward(g)
    x = w.detach().numpy().ravel()
    assert np.allclose(y.detach().numpy().ravel(), topk_magnitude(x, 10, 0.1, 2.0), atol=0, rtol=0)
    assert np.allclose(w.grad.numpy().ravel(), vjp(x, 10, g.numpy().ravel(), 0.1, 2.0, mode="magnitude"))


def test_smooth_loss_gradient_is_mask_minus_target():
    from theory.experiments.topk.smooth_loss import smooth_topk_loss_torch
    from theory.topk import fenchel_young_loss, topk_mask

    x = torch.randn(4, 7, dtype=torch.float64, requires_grad=True)
    t = torch.tensor([0, 3, 6, 2])
    loss = smooth_topk_loss_torch(x, t, 3, 1.0, 2.0)
    loss.backward()
    xn = x.detach().numpy()
    onehot = np.eye(7)[t.numpy()]
    expect = np.mean([fenchel_young_loss(xn[i], onehot[i], 3, 1.0, 2.0) for i in range(4)])
    assert abs(float(loss.detach()) - expect) < 1e-12
    assert np.allclose(x.grad.numpy(), (topk_mask(xn, 3, 1.0, 2.0) - onehot) / 4, atol=1e-14)


def test_smooth_loss_rejects_k_above_classes():
    exp = experiment("topk.fig76_digits")
    with pytest.raises(ValueError, match="`k`"):
        exp.run("check", k=10, steps=1)


def test_data_claims_read_the_data_root(monkeypatch):
    seen = []

    def spy(name, data=None, **options):
        seen.append((name, data))
        return fake_load(name)

    monkeypatch.setattr(theory.datasets, "load", spy)
    experiment("topk.fig75").run("check", data="/somewhere", **TINY["topk.fig75"])
    assert seen == [("mnist", "/somewhere")]
