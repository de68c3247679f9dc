"""Unit tests of the image experiments of Momentum ResNets (theory.experiments.momentum.images and _image_models):
the memory-free backpropagation, the memory count, the configs' rules, and every experiment end to end on tiny
synthetic images through a monkeypatched ``theory.datasets.load`` (no real data here)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import theory.datasets  # noqa: E402
import theory.experiments.momentum._image_models as imm  # noqa: E402
import theory.experiments.momentum.images as im  # noqa: E402
from theory.experiments import experiment, figure  # noqa: E402
from theory.plots import figure_directory  # noqa: E402

TINY = dict(n_train=48, n_test=32, epochs=1, batch=16)


def fake_images(n_classes, n=48, size=32, seed=0, shuffle_test=False, ragged=False):
    """Learnable synthetic images: noise plus a colour per class; ``shuffle_test`` permutes the test labels (no
    signal left); ``ragged`` gives a list of images of different sizes (as hymenoptera's)."""
    rng = np.random.default_rng(seed)
    colours = (np.arange(n_classes)[:, None] * np.array([37, 91, 53])) % 190

    def make():
        y = rng.integers(0, n_classes, n).astype(np.int64)
        x = (rng.integers(0, 60, (n, size, size, 3)) + colours[y][:, None, None, :]).astype(np.uint8)
        if ragged:
            x = [xi[: size - (i % 3), : size - (i % 2)] for i, xi in enumerate(x)]
        return x, y

    xtr, ytr = make()
    xte, yte = make()
    if shuffle_test:
        yte = rng.permutation(yte)
    return xtr, ytr, xte, yte


def digit_images(shuffle_test=False, seed=0):
    """scikit-learn's digits enlarged to 32 x 32 x 3 uint8 (a learnable stand-in of CIFAR-10's arrays), split
    1000 / 797; ``shuffle_test`` permutes the test labels."""
    xtr, ytr, xte, yte = imm.digits_images(seed, 1000, 797)
    big = [np.repeat(np.kron(x, np.ones((4, 4), np.uint8))[..., None], 3, axis=-1) for x in (xtr, xte)]
    if shuffle_test:
        yte = np.random.default_rng(seed).permutation(yte)
    return big[0], ytr, big[1], yte


def patch_load(monkeypatch, digits=False, **kw):
    """Replace ``theory.datasets.load`` by synthetic arrays of the documented shapes (``digits``: enlarged digits
    for every dataset)."""
    classes = {"cifar-10": 10, "cifar-100": 100, "imagenet": 1000, "hymenoptera": 2}

    def load(name, data=None, **options):
        if digits:
            return digit_images(**kw)
        return fake_images(classes[name], ragged=name == "hymenoptera", **kw)

    monkeypatch.setattr(theory.datasets, "load", load)


def test_memory_free_gradients_match_backprop():
    torch.manual_seed(0)
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            a = imm.ImageResNet("momentum", blocks=(3, 3), width=4, gamma=0.9, v0="f")
            b = imm.ImageResNet("momentum", blocks=(3, 3), width=4, gamma=0.9, v0="f", memory_free=True)
            b.load_state_dict(a.state_dict())
            x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
            for m in (a, b):
                m.train()
                torch.nn.functional.cross_entropy(m(x), y).backward()
            for (n, p), q in zip(a.named_parameters(), b.parameters()):
                assert torch.allclose(p.grad, q.grad, rtol=1e-10, atol=1e-12), n
            for (n, s), t in zip(a.state_dict().items(), b.state_dict().values()):
                if "running" in n:  # the recomputation does not update BN's statistics
                    assert torch.allclose(s, t, rtol=0, atol=1e-14), n
        finally:
            torch.set_default_dtype(torch.float32)


def test_gamma_zero_is_the_resnet():
    torch.manual_seed(0)
    a = imm.ImageResNet("resnet", blocks=(2, 2), width=4)
    b = imm.ImageResNet("momentum", blocks=(2, 2), width=4, gamma=0.0)
    b.load_state_dict(a.state_dict())
    a.eval(), b.eval()
    x = torch.randn(2, 3, 8, 8)
    assert torch.allclose(a(x), b(x), atol=1e-6)


def test_saved_bytes_affine_and_smaller_when_memory_free():
    full = imm.ImageResNet("momentum", blocks=(4, 4), width=4, memory_free=False)
    free = imm.ImageResNet("momentum", blocks=(4, 4), width=4, memory_free=True)
    f = [imm.saved_activation_bytes(full, b, (3, 8, 8)) for b in (2, 4, 6)]
    g = [imm.saved_activation_bytes(free, b, (3, 8, 8)) for b in (2, 4, 6)]
    assert f[2] - f[1] == f[1] - f[0] > 0
    assert g[2] < f[2] / 2


def test_memory_free_stage_is_flat_in_depth_and_the_resnets_grows_linearly():
    def saved(arch, k, free):
        torch.manual_seed(0)
        return imm.saved_activation_bytes(imm.ImageResNet(arch, blocks=(k,), width=4, memory_free=free), 2, (3, 8, 8))

    free = [saved("momentum", k, True) for k in (2, 4, 6)]
    full = [saved("resnet", k, False) for k in (2, 4, 6)]
    assert free[0] == free[1] == free[2]
    assert full[2] - full[1] == full[1] - full[0] > 0


def test_revnet_has_about_the_resnets_parameters():
    r = imm.count_parameters(imm.ImageResNet("resnet", blocks=(3, 3), width=8))
    v = imm.count_parameters(imm.ImageResNet("revnet", blocks=(3, 3), width=8))
    assert abs(v - r) / r < 0.1


def test_model_arguments_are_validated():
    with pytest.raises(ValueError, match="arch"):
        imm.ImageResNet("densenet")
    with pytest.raises(ValueError, match="gamma"):
        imm.ImageResNet("momentum", gamma=1.5)
    with pytest.raises(ValueError, match="memory_free"):
        imm.ImageResNet("momentum", gamma=0.0, memory_free=True)
    with pytest.raises(ValueError, match="order"):
        imm.ODENet(order=3)
    with pytest.raises(ValueError, match="x"):
        imm.prepare_images(np.zeros((2, 3), np.uint8))


def test_config_rules():
    with pytest.raises(ValueError, match="eval_from"):
        im.GammaConfig(gammas_train=(0.0, 0.5), eval_from=(0.9,))
    with pytest.raises(ValueError, match="models"):
        im.AccuracyConfig(models=("momentum_v0_zero", "resnet"))
    with pytest.raises(ValueError, match="width"):
        im.AccuracyConfig(models=("resnet", "revnet"), width=5)


def test_digits_images():
    xtr, ytr, xte, yte = imm.digits_images(0, 100, 50)
    assert xtr.shape == (100, 8, 8) and xtr.dtype == np.uint8 and xte.shape == (50, 8, 8)
    assert ytr.dtype == np.int64 and set(np.unique(ytr)) <= set(range(10))


def _png(path):
    assert os.path.exists(path) and str(path).endswith(".png") and os.path.getsize(path) > 1000


@pytest.mark.parametrize("name, claim, overrides", [
    ("momentum.cifar", "momentum/table-4.2", dict(blocks=(1, 2), width=4, **TINY)),
    ("momentum.cifar", "momentum/fig-4.12", dict(blocks=(1, 2), width=4, **{**TINY, "epochs": 2})),
    ("momentum.imagenet", "momentum/fig-4.6/imagenet", dict(blocks=(1, 2), width=4, image_size=16, **TINY)),
    ("momentum.gamma", "momentum/fig-4.6", dict(blocks=(1, 2), width=4, refit_epochs=1, **TINY)),
    ("momentum.gamma", "momentum/fig-4.7/accuracy", dict(blocks=(1, 2), width=4, **TINY)),
    ("momentum.finetune", "momentum/fig-4.8", dict(blocks=(1, 2), width=4, image_size=16, n_train=16, n_test=16)),
    ("momentum.ode_channels", "momentum/fig-4.9", dict(channels=(2, 4), n_blocks=2, steps=1, iterations=3,
                                                       n_train=32, n_test=32, batch=16)),
])
def test_data_experiments_end_to_end(monkeypatch, tmp_path, name, claim, overrides):
    patch_load(monkeypatch)
    exp = experiment(name)
    config = exp.config_for("check", **overrides)
    result = exp.measure(config)
    verdict = exp.verdict_for(claim)(result)
    assert verdict.status in ("pass", "fail") and verdict.kind == "qualitative"
    fig = figure(claim)
    assert fig.experiment == name and claim in fig.claims
    numbers = fig.numbers_of(result, {claim: verdict}, config)
    for p in fig.printed:
        if p.measured is not None:
            assert p.measured in numbers, (p.name, sorted(numbers))
    with figure_directory(tmp_path):
        _png(fig.draw(result))


def test_memory_batch_and_digits_draw(tmp_path):
    exp = experiment("momentum.memory_batch")
    r = exp.measure(exp.config_for("check", cifar_blocks=(3, 3, 3), batches=(1, 2, 3)))
    assert r.momentum["cifar"][-1] < r.resnet["cifar"][-1]
    exp2 = experiment("momentum.gamma_digits")
    r2 = exp2.measure(exp2.config_for("check", blocks=(1, 2), width=4, epochs=1, n_train=100, n_test=50))
    with figure_directory(tmp_path):
        _png(figure("momentum/fig-4.7").draw(r))
        _png(figure("momentum/fig-4.6/digits").draw(r2))


def test_hymenoptera_needs_an_image_size(monkeypatch):
    patch_load(monkeypatch)
    with pytest.raises(ValueError, match="image_size"):
        im._load("hymenoptera", None, 0, 8, 8, None)


def test_figure_declarations_cover_the_labels():
    from theory.experiments import figures

    ids = {f.id for f in figures("momentum")}
    for label in ("fig-4.6", "fig-4.7", "fig-4.8", "fig-4.9", "fig-4.12", "table-4.2"):
        assert f"momentum/{label}" in ids
    assert figure("momentum/fig-4.6/digits").substitute
    assert dataclasses.is_dataclass(im.GammaConfig)
