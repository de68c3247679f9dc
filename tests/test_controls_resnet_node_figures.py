"""Negative controls of the figure claims of ``resnet-node`` (checks/test_resnet_node_figures.py).

Each control reruns a claim's measurement with the figure's defining ingredient broken and asserts that the
claim's verdict fails: the step 1/N replaced by the classical step 1 (Fig. 3(a), Table 2), the adjoint
method replaced by exact backpropagation (Figs. 3(b), 4), the HeunNet replaced by the ResNet (Fig. 3(c)),
the 1/N network trained on shuffled labels (Table 1), the residuals of the digits networks scaled by N (Fig. 3(c) on the
digits). The CIFAR-10 and ImageNet measurements run on small synthetic images through a monkeypatched
:func:`theory.datasets.load` (two classes, dark and bright noise images).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from theory import datasets
from theory.experiments.resnet_node import digits as dg
from theory.experiments.resnet_node import images as im
from theory.experiments.resnet_node import tied_depth as td
from _data import skip_without_digits


def synthetic_images(n=256, n_test=128, side=32, seed=0):
    """Two classes told apart by brightness: dark (0) and bright (1) noise images, uint8 (n, side, side, 3)."""
    rng = np.random.default_rng(seed)
    y, yt = rng.integers(0, 2, n), rng.integers(0, 2, n_test)

    def imgs(lab):
        return (rng.integers(0, 60, (len(lab), side, side, 3)) + 190 * lab[:, None, None, None]).astype(np.uint8)

    return imgs(y), y.astype(np.int64), imgs(yt), yt.astype(np.int64)


@pytest.fixture
def fake_data(monkeypatch):
    monkeypatch.setattr(datasets, "load", lambda name, data=None, **kw: synthetic_images())


def _classical(scaling, n):
    return 1.0


class _Backprop:
    """Stands in for the adjoint's autograd function: plain backpropagation through the layer."""

    @staticmethod
    def apply(x, layer, *params):
        return layer.integrate(x)


def test_fig3a_fails_without_the_step_1_over_N(fake_data, monkeypatch):
    monkeypatch.setattr(im, "_step", _classical)
    cfg = dataclasses.replace(im.FIG3A_PRESETS["check"], blocks=(1, 2), width=4, n_train=64, n_test=64, batch=32)
    assert not im.fig3a_verdict(im.fig3a(cfg)).passed


def test_fig3a_digits_fails_without_the_step_1_over_N(monkeypatch):
    skip_without_digits()
    monkeypatch.setattr(td, "_step", _classical)
    cfg = dataclasses.replace(td.FIG3A_DIGITS_PRESETS["check"], depths=(4, 64), seeds=(0,), epochs=2)
    assert not td.fig3a_digits_verdict(td.fig3a_digits(cfg)).passed


def test_fig3b_fails_when_the_adjoint_is_exact_backprop(fake_data, monkeypatch):
    monkeypatch.setattr(im, "AdjointLayer", _Backprop)
    cfg = dataclasses.replace(im.FIG3B_PRESETS["check"], layers=(1, 1, 2, 1), n_train=64, n_test=64, batch=32)
    assert not im.fig3b_verdict(im.fig3b(cfg)).passed


def test_fig3c_cifar_fails_when_the_heunnet_is_a_resnet(fake_data, monkeypatch):
    model = im._model
    monkeypatch.setattr(im, "_model", lambda **arch: model(**{**arch, "scheme": "euler"}))
    cfg = dataclasses.replace(im.FIG3C_CIFAR_PRESETS["check"], depths=(2, 4, 8), n_train=64, n_test=64, batch=32,
                              eval_batch=32)
    assert not im.fig3c_cifar_verdict(im.fig3c_cifar(cfg)).passed


def test_fig3c_digits_fails_when_the_residuals_are_scaled_by_N(monkeypatch):
    skip_without_digits()
    init = dg.digits_init

    def unscaled(config, N, scheme, seed, d=64):
        """V ~ N(0, N^2 / m) instead of 0: the residual h f is O(1), as without the step 1/N."""
        theta, Wh, ch = init(config, N, scheme, seed, d)
        m = config.width
        _, W, b = dg.mlp(m).unpack(theta, d)
        V = N * np.random.default_rng([seed, 7]).standard_normal((theta.shape[0], d, m)) / np.sqrt(m)
        return dg.mlp(m).pack(V, W, b), Wh, ch

    monkeypatch.setattr(dg, "digits_init", unscaled)
    assert not dg.fig3c_digits_verdict(dg.fig3c_digits(dg.FIG3C_DIGITS_PRESETS["check"])).passed


def test_fig4_cifar_fails_when_the_adjoint_is_exact_backprop(fake_data, monkeypatch):
    monkeypatch.setattr(im, "AdjointLayer", _Backprop)
    cfg = dataclasses.replace(im.FIG4_CIFAR_PRESETS["check"], n_train=64, n_test=64, batch=32)
    assert not im.fig4_cifar_verdict(im.fig4_cifar(cfg)).passed


def test_table1_fails_when_the_1_over_N_network_learns_shuffled_labels(fake_data, monkeypatch):
    train = im.train_image_model

    def shuffled_if_scaled(model, data, recipe, seed, **kw):
        if any(layer.h != 1.0 for layer in model.layers):  # the 1/N network: its training labels permuted
            x, y, xt, yt = data
            data = (x, np.random.default_rng(5).permutation(y), xt, yt)
        return train(model, data, recipe, seed, **kw)

    monkeypatch.setattr(im, "train_image_model", shuffled_if_scaled)
    cfg = dataclasses.replace(im.TABLE1_PRESETS["check"], n_train=256, n_test=128, batch=8, epochs=2, lr=0.05)
    v = im.table1_verdict(im.table1(cfg))
    assert not v.passed, v.measured


def test_table2_fails_without_the_step_1_over_N(fake_data, monkeypatch):
    monkeypatch.setattr(im, "_step", _classical)
    cfg = dataclasses.replace(im.TABLE2_PRESETS["check"], n_train=256, n_test=128, batch=8, epochs=2, lr=0.05,
                              finetune_layers=(1, 1, 16, 1))
    v = im.table2_verdict(im.table2(cfg))
    assert not v.passed, v.measured
