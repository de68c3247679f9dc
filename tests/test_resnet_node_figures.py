"""Unit tests of the figure modules of ``resnet-node``: the image networks and their adjoint method
(:mod:`theory.experiments.resnet_node.images`), the tied-weight digits networks (``tied_depth``), the drawings in
the documents' layout (``drawing``) and the declarations (``figures``). The CIFAR-10 and ImageNet paths run on
small synthetic images through a monkeypatched :func:`theory.datasets.load`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from theory import datasets
from theory.experiments import experiment, figures
from theory.experiments.resnet_node import drawing
from theory.experiments.resnet_node import images as im
from theory.experiments.resnet_node import tied_depth as td
from theory.papers import paper
from theory.plots import figure_directory
from _data import skip_without_digits

torch = pytest.importorskip("torch")


def synthetic_images(n=64, n_test=64, side=32, seed=0):
    """Two classes told apart by brightness, uint8 (n, side, side, 3), int64 labels."""
    rng = np.random.default_rng(seed)
    y, yt = rng.integers(0, 2, n), rng.integers(0, 2, n_test)

    def imgs(lab):
        return (rng.integers(0, 60, (len(lab), side, side, 3)) + 190 * lab[:, None, None, None]).astype(np.uint8)

    return imgs(y), y.astype(np.int64), imgs(yt), yt.astype(np.int64)


@pytest.fixture
def fake_data(monkeypatch):
    calls = []

    def load(name, data=None, **kw):
        calls.append((name, data))
        return synthetic_images()

    monkeypatch.setattr(datasets, "load", load)
    return calls


# --------------------------------------------------------------------------- the networks


def _layer_gradients(N, scheme, method, seed=0):
    torch.manual_seed(seed)
    model = im.ImageResNet(stem="simple", width=4, layers=(N,), scheme=scheme, methods=(method,)).double().train()
    x = torch.as_tensor(synthetic_images(n=16)[0][:16]).permute(0, 3, 1, 2).double() / 255.0
    y = torch.arange(16) % 2
    torch.nn.functional.cross_entropy(model(x), y).backward()
    return [p.grad.clone() for p in model.layers[0].parameters()]


@pytest.mark.parametrize("scheme", ["euler", "heun"])
def test_adjoint_is_backprop_when_the_reconstruction_is_exact(scheme, monkeypatch):
    """With the backward rebuilding replaced by the true activations, Eq. (7) is backpropagation exactly."""
    layer_cls = type(im.ImageResNet(layers=(1,)).layers[0])
    states = []

    def recording(self, x):
        states.clear()
        for k in range(self.n):
            states.append(x)
            x = self.step(x, k)
        return x

    monkeypatch.setattr(layer_cls, "integrate", recording)
    monkeypatch.setattr(layer_cls, "step_back", lambda self, x, k: states[k])
    exact, approx = _layer_gradients(6, scheme, "backprop"), _layer_gradients(6, scheme, "adjoint")
    for e, a in zip(exact, approx):
        assert torch.allclose(a, e, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("scheme", ["euler", "heun"])
def test_adjoint_gradients_approach_backprop_with_depth(scheme):
    """Eqs. (6)-(7) and (9): the median relative error of the adjoint's gradients falls with depth (Props. 4, 6)."""
    med = []
    for N in (4, 64):
        exact, approx = _layer_gradients(N, scheme, "backprop"), _layer_gradients(N, scheme, "adjoint")
        med.append(np.median([float((a - e).norm() / e.norm()) for e, a in zip(exact, approx) if float(e.norm()) > 0]))
    assert med[1] < med[0] / 3, med


def test_adjoint_keeps_batch_norm_running_statistics():
    torch.manual_seed(0)
    model = im.ImageResNet(stem="simple", width=4, layers=(3,), methods=("adjoint",)).double().train()
    ref = im.ImageResNet(stem="simple", width=4, layers=(3,)).double().train()
    ref.load_state_dict(model.state_dict())
    x = torch.rand(8, 3, 32, 32, dtype=torch.float64)
    for net in (model, ref):
        net(x).sum().backward()
    for (k, a), b in zip(model.state_dict().items(), ref.state_dict().values()):
        assert torch.allclose(a, b), k


def test_untie_keeps_the_function_of_the_tied_network():
    torch.manual_seed(0)
    tied = im._model(stem="cifar", kind="basic", width=4, layers=(2, 2), tied=True, classes=3).eval()
    deep = im.untie(tied, (2, 2)).eval()
    x = torch.rand(4, 3, 16, 16)
    assert torch.allclose(tied(x), deep(x), atol=1e-6)
    assert len(deep.layers[1].blocks) == 2 and len(tied.layers[1].blocks) == 1


@pytest.mark.parametrize("kwargs, name", [(dict(layers=()), "layers"), (dict(stem="vgg"), "stem"),
                                          (dict(scaling="1/N^2"), "scaling"), (dict(methods=("adjoint",)), "methods")])
def test_image_resnet_refuses_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        im.ImageResNet(**{"layers": (1, 1), **kwargs})


# --------------------------------------------------------------------------- data


class _FakeIndex:
    """Stands in for theory.datasets.ImageIndex: ``image(i)`` a PIL image, ``labels``, ``subset``."""

    def __init__(self, n, labels=None):
        self.n = n
        self.labels = np.arange(n) % 3 if labels is None else labels

    def __len__(self):
        return len(self.labels)

    def image(self, i):
        from PIL import Image

        return Image.fromarray(np.full((40, 50, 3), 10 * int(i) % 255, dtype=np.uint8))

    def subset(self, idx):
        out = _FakeIndex(self.n, self.labels[np.asarray(idx)])
        out.image = lambda i, _idx=np.asarray(idx): _FakeIndex.image(self, int(_idx[i]))
        return out


def test_image_data_decodes_an_image_folder_lazily(monkeypatch):
    pytest.importorskip("PIL")
    monkeypatch.setattr(datasets, "load", lambda name, data=None, **kw: {"train": _FakeIndex(30), "val": _FakeIndex(9)})
    x, y, xt, yt = im.image_data("imagenet", None, 10, 0, seed=0, side=36)
    assert len(x) == 10 and len(xt) == 9 and y.dtype == np.int64
    batch = x[np.array([0, 3])]
    assert batch.shape == (2, 36, 36, 3) and batch.dtype == np.uint8
    assert x[:4].shape == (4, 36, 36, 3)


def test_image_data_takes_a_seeded_subset(fake_data):
    x, y, xt, yt = im.image_data("cifar-10", "/nowhere", 16, 8, seed=3)
    x2, y2, _, _ = im.image_data("cifar-10", "/nowhere", 16, 8, seed=3)
    assert x.shape == (16, 32, 32, 3) and xt.shape == (8, 32, 32, 3)
    assert np.array_equal(y, y2) and np.array_equal(x, x2)
    assert fake_data[0] == ("cifar-10", "/nowhere")


def test_image_data_refuses_other_shapes(monkeypatch):
    monkeypatch.setattr(datasets, "load", lambda name, data=None, **kw: (np.zeros((4, 8, 8)), np.zeros(4),
                                                                          np.zeros((2, 8, 8)), np.zeros(2)))
    with pytest.raises(ValueError, match=r"\(n, H, W, 3\)"):
        im.image_data("cifar-10", None, 0, 0, seed=0)


# --------------------------------------------------------------------------- experiments end to end

_TINY = {
    "resnet_node.fig3a": dict(blocks=(1, 2), width=4, n_train=64, n_test=64, batch=32),
    "resnet_node.fig3b": dict(layers=(1, 1, 2, 1), n_train=64, n_test=64, batch=32),
    "resnet_node.fig3c_cifar": dict(depths=(2, 4, 8), n_train=64, n_test=64, batch=32, eval_batch=32),
    "resnet_node.fig4_cifar": dict(n_train=64, n_test=64, batch=32),
    "resnet_node.table1": dict(n_train=64, n_test=64, batch=32),
    "resnet_node.table1_imagenet": dict(n_train=64, n_test=64, batch=32),
    "resnet_node.table2": dict(n_train=64, n_test=64, batch=32),
    "resnet_node.table2_imagenet": dict(n_train=64, n_test=64, batch=32),
}


@pytest.mark.parametrize("name", sorted(_TINY))
def test_data_experiments_run_end_to_end(name, fake_data, tmp_path):
    exp = experiment(name)
    cfg = dataclasses.replace(exp.presets["check"], **_TINY[name])
    result = exp.measure(cfg)
    (claim_id,) = exp.claims
    verdict = exp.verdict_for(claim_id)(result)
    assert verdict.status in ("pass", "fail") and verdict.measured
    assert all(np.isfinite(v) for v in exp.summary(result).values())
    fig = next(f for f in figures("resnet-node") if f.experiment == name)
    with figure_directory(tmp_path):
        path = Path(fig.draw(result))
    assert path.exists() and path.suffix == ".png" and path.parent == tmp_path
    assert fake_data and fake_data[0][0] == fig.data


def test_data_experiments_raise_dataset_missing_without_data(monkeypatch, tmp_path):
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    cfg = dataclasses.replace(im.FIG3A_PRESETS["check"], data=str(tmp_path))
    with pytest.raises(datasets.DatasetMissing, match="cifar-10"):
        im.fig3a(cfg)


def test_fig3a_digits_runs_and_draws(tmp_path):
    skip_without_digits()
    cfg = dataclasses.replace(td.FIG3A_DIGITS_PRESETS["check"], depths=(2, 8), seeds=(0,), epochs=1)
    result = td.fig3a_digits(cfg)
    assert result.accuracy["1/N"].shape == (2, 1)
    with figure_directory(tmp_path):
        assert Path(drawing.fig3a_figure(result, claim_id="resnet-node/fig-3a/digits")).exists()


@pytest.mark.parametrize("name, kwargs", [("resnet_node.fig1", dict(N=6, steps=50, warmup=10)),
                                          ("resnet_node.fig2", {}), ("resnet_node.fig3c", {}),
                                          ("resnet_node.fig4", dict(steps=10, seeds=(0,)))])
def test_existing_experiments_draw_in_the_document_layout(name, kwargs, tmp_path):
    exp = experiment(name)
    result = exp.measure(dataclasses.replace(exp.presets["check"], **kwargs))
    fig = next(f for f in figures("resnet-node") if f.experiment == name)
    with figure_directory(tmp_path):
        assert Path(fig.draw(result)).exists()


# --------------------------------------------------------------------------- declarations


def test_every_inventory_label_is_declared_and_each_data_figure_has_a_loader_field():
    declared = figures("resnet-node")
    assert {f.base for f in declared} == set(paper("resnet-node").figures)
    for f in declared:
        cfg = experiment(f.experiment).presets["check"]
        if f.data is not None:
            assert f.substitute is None and "data" in {x.name for x in dataclasses.fields(cfg)}
        for p in f.printed:
            assert p.measured is None or isinstance(p.measured, str)


def test_paper_presets_are_the_documents_sizes():
    assert experiment("resnet_node.fig1").presets["paper"].N == 300
    p = im.FIG3B_PRESETS["paper"]
    assert p.layers == (3, 4, 23, 3) and p.epochs == 100 and p.batch == 256 and p.image_size == 224
    p = im.TABLE2_PRESETS["paper"]
    assert p.finetune_layers == (4, 4, 64, 4) and p.adjoint_layers == (2,) and p.finetune_epochs == 5
    assert im.TABLE2_IMAGENET_PRESETS["paper"].finetune_layers == (100,) * 4
    p = im.FIG4_CIFAR_PRESETS["paper"]
    assert p.epochs == 90 and p.batch == 256 and len(p.seeds) == 5
    assert len(im.FIG3A_PRESETS["paper"].seeds) == 3 and im.FIG3A_PRESETS["paper"].epochs == 200
