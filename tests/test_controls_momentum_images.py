"""Negative controls of the image claims of Momentum ResNets (checks/test_momentum_images.py): each reruns the
measurement with one ingredient broken and asserts that the verdict fails. The data claims run on tiny synthetic
images through a monkeypatched ``theory.datasets.load`` (tests/test_momentum_images.py), as no real data is here."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("torch")

import theory.experiments.momentum._image_models as imm  # noqa: E402
from theory.experiments import experiment  # noqa: E402

from test_momentum_images import TINY, patch_load  # noqa: E402


def _fails(name, claim, config):
    exp = experiment(name)
    verdict = exp.verdict_for(claim)(exp.measure(config))
    assert verdict.status == "fail", verdict.message


def test_fig47_memory_fails_when_the_momentum_resnet_stores_its_activations():
    cfg = experiment("momentum.memory_batch").config_for("check")
    _fails("momentum.memory_batch", "momentum/fig-4.7", dataclasses.replace(cfg, memory_free=False))


def test_fig46_digits_fails_when_gamma_test_drops_the_residual_functions():
    # gamma_test = 1 with v0 = 0 keeps v = 0: every momentum step is the identity, the network loses its residuals
    cfg = experiment("momentum.gamma_digits").config_for("check")
    _fails("momentum.gamma_digits", "momentum/fig-4.6/digits",
           dataclasses.replace(cfg, gammas_test=(0.0, 0.5, 1.0), epochs=4))


def test_fig46_cifar_fails_when_gamma_test_drops_the_residual_functions(monkeypatch):
    patch_load(monkeypatch, digits=True)
    cfg = experiment("momentum.gamma").config_for("check", blocks=(1, 4), width=4, gammas_test=(0.0, 1.0),
                                                   epochs=3, n_train=400, n_test=200)
    _fails("momentum.gamma", "momentum/fig-4.6", cfg)


def test_fig47_accuracy_fails_when_gamma_does_not_set_the_memory(monkeypatch):
    # stored activations and no exact-reversal buffer: the memory no longer decreases with gamma
    patch_load(monkeypatch)
    cfg = experiment("momentum.gamma").config_for("check", blocks=(1, 2), width=4, eval_from=(), memory_free=False,
                                                   buffer=False, **TINY)
    _fails("momentum.gamma", "momentum/fig-4.7/accuracy", cfg)


@pytest.mark.parametrize("name, claim, extra", [
    ("momentum.cifar", "momentum/table-4.2", {}),
    ("momentum.cifar", "momentum/fig-4.12", {}),
    ("momentum.imagenet", "momentum/fig-4.6/imagenet", {"image_size": 16}),
])
def test_accuracy_claims_fail_without_signal_in_the_labels(monkeypatch, name, claim, extra):
    # the test labels permuted: no model beats chance, so the "runs learned" part of the criterion fails
    patch_load(monkeypatch, digits=True, shuffle_test=True)
    cfg = experiment(name).config_for("check", blocks=(1, 2), width=4, **{**TINY, "n_test": 400}, **extra)
    _fails(name, claim, cfg)


def test_fig48_fails_when_the_momentum_resnet_gets_the_resnets_batch(monkeypatch):
    # the same batch: the Momentum ResNet does the same number of steps, each slower (it recomputes f backwards)
    patch_load(monkeypatch)
    cfg = experiment("momentum.finetune").config_for("check", blocks=(1, 3), width=4, image_size=16, n_train=16,
                                                      n_test=16, batch_momentum=2)
    _fails("momentum.finetune", "momentum/fig-4.8", cfg)


def test_fig49_fails_when_the_second_order_block_is_first_order(monkeypatch):
    patch_load(monkeypatch)
    original = imm.ODENet.__new__

    def first_order_only(cls, channels=16, n_blocks=10, order=1, **kw):
        return original(cls, channels, n_blocks, 1, **kw)

    monkeypatch.setattr(imm.ODENet, "__new__", first_order_only)
    cfg = experiment("momentum.ode_channels").config_for("check", channels=(2, 4), n_blocks=2, steps=1, iterations=3,
                                                          n_train=32, n_test=32, batch=16)
    _fails("momentum.ode_channels", "momentum/fig-4.9", cfg)
