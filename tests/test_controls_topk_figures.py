"""Negative controls of checks/test_topk_figures.py: each reruns the claim's measurement with one ingredient broken
and asserts that the claim's verdict fails.

* Fig. 7.2 (vertices of P(w)): the isotonic step of the projection replaced by the identity (no pooling), so that
  every point, inside P(w) or not, is sent to a vertex.
* Fig. 7.4 (PAV scales like the sort, n log n): PAV's cost made quadratic (a busy wait proportional to n²).
* Figs. 7.5 (relaxed pruning beats hard pruning): the relaxed top-k in magnitude replaced by the hard one, so the
  "relaxed" runs are the hard run (no gain).
* Figs. 7.6 (smooth top-3 at least as accurate as the cross-entropy): the top-k runs trained on shuffled targets.
* Figs. 7.7 (relaxed router beats hard router): the relaxed router replaced by the hard one.

The data claims run on the synthetic arrays of tests/test_topk_figures.py (theory.datasets.load monkeypatched).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("torch")

import theory.datasets  # noqa: E402
from theory.experiments import experiment  # noqa: E402
from theory.experiments.topk import moe, permutohedron, pruning, runtime, smooth_loss  # noqa: E402

from test_topk_figures import TINY, fake_load  # noqa: E402


@pytest.fixture
def fake_data(monkeypatch):
    monkeypatch.setattr(theory.datasets, "load", fake_load)


def _verdict(name, claim, **overrides):
    exp = experiment(name)
    return exp.verdict_for(claim)(exp.run("check", **overrides))


def test_fig72_without_pooling_fails(monkeypatch):
    monkeypatch.setattr(permutohedron, "isotonic_regression", lambda y, **kw: (np.asarray(y, dtype=float),))
    v = _verdict("topk.fig72", "topk/fig-7.2", directions=40, inside=20)
    assert v.status == "fail", v.message
    assert v.measured["inside_err"] > 1e-3


def test_fig74_quadratic_pav_fails(monkeypatch):
    real = runtime.pav_topk_mask

    def quadratic(x, k, reg, iterations):
        # a busy wait proportional to n² (time.sleep has a floor of ~0.1-1 ms, which flattens the small n)
        end = time.perf_counter() + 1e-10 * x.shape[0] ** 2
        while time.perf_counter() < end:
            pass
        return real(x, k, reg, iterations)

    monkeypatch.setattr(runtime, "pav_topk_mask", quadratic)
    v = _verdict("topk.fig74", "topk/fig-7.4", n_grid=(2000, 4000, 8000, 16000, 32000), fit_from=2000, repeats=2)
    assert v.status == "fail", v.message
    assert v.measured["slope_pav"] > 1.5
    assert v.measured["slope_pav_over_sort"] > 0.5


def _hard_only(monkeypatch):
    real = pruning.topkmag_torch
    monkeypatch.setattr(pruning, "topkmag_torch", lambda w, keep, reg, method: real(w, keep, reg, "hard"))


def test_fig75_digits_hard_for_relaxed_fails(monkeypatch):
    _hard_only(monkeypatch)
    v = _verdict("topk.fig75_digits", "topk/fig-7.5/digits", epochs=10, methods=("hard", "p=2", "p=4/3"))
    assert v.status == "fail", v.message
    assert v.measured["mean_error_gain.p=2"] == 0.0


def test_fig75_mnist_hard_for_relaxed_fails(monkeypatch, fake_data):
    _hard_only(monkeypatch)
    v = _verdict("topk.fig75", "topk/fig-7.5", **{**TINY["topk.fig75"], "methods": ("hard", "p=2", "p=4/3")})
    assert v.status == "fail", v.message


def _shuffled_targets(monkeypatch):
    real = smooth_loss.smooth_topk_loss_torch
    gen = np.random.default_rng(0)

    def shuffled(logits, target, k, reg, p):
        import torch

        return real(logits, torch.from_numpy(gen.permutation(target.numpy())), k, reg, p)

    monkeypatch.setattr(smooth_loss, "smooth_topk_loss_torch", shuffled)


def test_fig76_digits_shuffled_targets_fails(monkeypatch):
    _shuffled_targets(monkeypatch)
    # the cross-entropy run at the top-k runs' learning rate, so that only the targets differ
    v = _verdict("topk.fig76_digits", "topk/fig-7.6/digits", lr_ce=5e-3)
    assert v.status == "fail", v.message


def test_fig76_cifar_shuffled_targets_fails(monkeypatch, fake_data):
    _shuffled_targets(monkeypatch)
    v = _verdict("topk.fig76", "topk/fig-7.6",
                 **{**TINY["topk.fig76"], "steps": 60, "lr_ce": 0.05, "lr_topk": 0.05, "ks": (1, 3, 5)})
    assert v.status == "fail", v.message


def _hard_router(monkeypatch):
    real = moe.router_mask_torch
    monkeypatch.setattr(moe, "router_mask_torch", lambda gates, k, reg, router: real(gates, k, reg, "hard"))


def test_fig77_synthetic_hard_for_relaxed_fails(monkeypatch):
    _hard_router(monkeypatch)
    v = _verdict("topk.fig77_synthetic", "topk/fig-7.7/synthetic", steps=40, eval_every=10)
    assert v.status == "fail", v.message
    assert v.measured["last_quarter_gain"] == 0.0


def test_fig77_jft_hard_for_relaxed_fails(monkeypatch, fake_data):
    _hard_router(monkeypatch)
    v = _verdict("topk.fig77", "topk/fig-7.7", **TINY["topk.fig77"])
    assert v.status == "fail", v.message
