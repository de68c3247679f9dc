"""Unit tests of the trained experiments of the Sinkformers chapter (theory.experiments.sinkformers.training,
.models, .figures): Sinkhorn in the log domain, BLEU, the data path of every dataset through a monkeypatched
theory.datasets.load with tiny synthetic data of the loaders' formats, and every declared figure's drawing."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import theory.datasets  # noqa: E402
from theory.experiments import experiment, figures  # noqa: E402
from theory.experiments.sinkformers import training as tr  # noqa: E402
from theory.experiments.sinkformers.models import sinkhorn_log  # noqa: E402
from theory.papers import paper  # noqa: E402

#: tiny runs of each data experiment on the synthetic data of fake_load
TINY = {
    "vit_mnist": dict(n_train=None, n_test=None, epochs=2, record_epochs=(0, 1, 2), dim=16, depth=1),
    "vit_cats_dogs": dict(n_train=24, n_test=12, epochs=2, dim=16, depth=1, image_size=16),
    "patch_mnist": dict(n_train=None, n_test=None, epochs=2, patches=(14, 28), dim=8, milestones=()),
    "modelnet": dict(n_train=None, n_test=None, epochs=2, n_points=16, dim=16, inducing=4),
    "imdb": dict(n_train=None, n_test=None, epochs=2, dim=16, max_len=16),
    "iwslt": dict(n_train=None, n_test=None, epochs=2, dim=16, vocab=16, depth=1, heads=2, max_len=8),
}


def _png_folder(root):
    """A PetImages-like folder of 16 tiny PNGs a class (cats reddish, dogs bluish)."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for k, name in enumerate(("Cat", "Dog")):
        os.makedirs(root / name, exist_ok=True)
        for i in range(18):
            a = rng.integers(0, 80, (20, 24, 3), dtype=np.uint8)
            a[..., 0 if k == 0 else 2] += 150
            Image.fromarray(a).save(root / name / f"{i}.png")
    return root


def fake_load(folder=None):
    """A stand-in for theory.datasets.load: learnable synthetic data in each loader's output format."""
    def load(name, data=None, **options):
        rng = np.random.default_rng(0)
        if name == "mnist":
            def split(n):
                y = rng.integers(0, 10, n)
                x = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
                for i, k in enumerate(y):
                    x[i, 2 * k:2 * k + 6, 4:24] = 250
                return x, y.astype(np.int64)
            return (*split(80), *split(40))
        if name == "cats-vs-dogs":
            return theory.datasets._image_folder(_png_folder(folder), ["Cat", "Dog"])
        if name == "modelnet40":
            points = options.get("points", 1024)

            def split(n):
                y = rng.integers(0, 4, n)
                x = rng.normal(size=(n, points, 3)) * (1.0 + y[:, None, None] * np.array([1.0, 0.0, -0.2]))
                return x.astype(np.float32), y.astype(np.int64)
            return (*split(48), *split(24))
        if name == "imdb":
            filler = ["the", "movie", "plot", "actor", "scene", "film"]

            def split(n):
                y = rng.integers(0, 2, n)
                texts = [" ".join(list(rng.choice(filler, 6)) + (["great", "good"] if k else ["awful", "bad"]))
                         + "<br />" for k in y]
                return texts, y.astype(np.int64)
            return (*split(64), *split(32))
        if name == "iwslt14-de-en":
            de, en = ["das", "ist", "gut", "haus", "ein", "kl@@"], ["this", "is", "good", "house", "a", "sm@@"]

            def split(n):
                idx = [rng.integers(0, 6, rng.integers(2, 6)) for _ in range(n)]
                return [" ".join(de[i] for i in s) for s in idx], [" ".join(en[i] for i in s) for s in idx]
            return {"train": split(128), "valid": split(8), "test": split(24)}
        raise AssertionError(f"unexpected dataset {name}")
    return load


@pytest.fixture
def fake_data(monkeypatch, tmp_path):
    monkeypatch.setattr(theory.datasets, "load", fake_load(tmp_path / "PetImages"))


# ------------------------------------------------------------------------------------------ pieces

def test_sinkhorn_log_is_softmax_then_doubly_stochastic():
    g = torch.Generator().manual_seed(0)
    c = torch.randn(3, 6, 6, generator=g, dtype=torch.float64)
    assert torch.allclose(sinkhorn_log(c, 1), torch.softmax(c, dim=-1), atol=1e-15, rtol=0)
    k = sinkhorn_log(c, 201)
    assert float((k.sum(-1) - 1).abs().max()) < 1e-12 and float((k.sum(-2) - 1).abs().max()) < 1e-10
    mask = torch.zeros(3, 6, 6, dtype=torch.bool)
    mask[:, :, -1] = True
    mask[:, -1, :] = True
    km = sinkhorn_log(c, 5, mask)
    assert float(km[:, :, -1].abs().max()) == 0.0 and not torch.isnan(km).any()
    live = km[:, :-1, :-1]
    assert float((live.sum(-1) - 1).abs().max()) < 1e-12  # the unmasked block is normalised alone
    cg = c.clone().requires_grad_(True)
    (sinkhorn_log(cg, 5, mask) * torch.randn(3, 6, 6, generator=g, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(cg.grad).all()  # rows and columns masked throughout give no NaN gradient
    with pytest.raises(ValueError, match="n_iter"):
        sinkhorn_log(c, 0)


def test_sinkhorn_log_agrees_with_package_sinkhorn():
    from theory.sinkhorn import sinkhorn

    c = np.random.default_rng(1).normal(size=(7, 7))
    for n_iter in (1, 2, 3, 8):
        ours = sinkhorn_log(torch.as_tensor(c), n_iter).numpy()
        assert np.max(np.abs(ours - sinkhorn(c, n_iter=n_iter))) < 1e-12


def test_bleu():
    ref = [["a", "b", "c", "d", "e"], ["x", "y", "z", "w"]]
    assert tr.bleu(ref, ref) == pytest.approx(100.0)
    assert tr.bleu([[], []], ref) == 0.0
    short = tr.bleu([["a", "b", "c", "d"], ["x", "y", "z", "w"]], ref)
    assert 0.0 < short < 100.0


def test_column_sum_numbers():
    sums = {0: np.ones(10), 1: np.r_[np.ones(6), np.zeros(4)], 3: np.r_[np.ones(8), 2 * np.ones(2)]}
    m = tr.column_sum_numbers(sums)
    assert m["frac_close_last"] == 0.8 and m["spread_first"] == pytest.approx(0.4)
    assert m["spread_decrease"] == pytest.approx(0.2) and m["first_epoch"] == 1 and m["spread_init"] == 0.0
    with pytest.raises(ValueError, match="col_sums"):
        tr.column_sum_numbers({0: np.ones(3)})


def test_one_patch_identity_exact():
    r = tr.one_patch(tr.OnePatchConfig(draws=2, dim=8))
    assert r.n_tokens == 1 and r.max_rel_diff_output == 0.0 and r.max_rel_diff_grad <= 1e-15


def test_config_rules():
    with pytest.raises(ValueError, match="heads"):
        tr.ViTConfig(dim=30, heads=4)
    with pytest.raises(ValueError, match="record_epochs"):
        tr.ViTConfig(epochs=2, record_epochs=(0, 5))
    with pytest.raises(ValueError, match="patch"):
        tr.OnePatchConfig(patch=5)
    with pytest.raises(ValueError, match="n_iters"):
        tr.ModelNetConfig(n_iters=(3, 5))
    with pytest.raises(ValueError, match="patches"):
        tr.patch_size(tr.PatchConfig(patches=(3, 8), epochs=1))


def test_patch_size_one_token_trains_identically():
    """At one token the Sinkformer is the Transformer (§5.6.4): at the same learning rate, with the same seed,
    initialisation and batches, the two runs end at the same accuracy; Appendix 5.C.4's own learning rate of the
    Sinkformer is kept apart (``acc_one_token_own_lr``)."""
    cfg = tr.PatchConfig(patches=(4, 8), epochs=2, dim=8, n_train=200, n_test=100, milestones=(), pool="mean")
    r = tr.patch_size(cfg)
    assert r.acc["sinkformer"][1] == r.acc["transformer"][1]
    assert r.acc_one_token_own_lr is not None and len(r.acc_one_token_own_lr) == len(cfg.seeds)
    m = r.to_measured()
    assert m["abs_gap_one_token"] == 0.0 and np.isfinite(m["abs_gap_one_token_own_lrs"])
    r = tr.patch_size(tr.PatchConfig(**{**cfg.__dict__, "one_token_same_lr": False}))
    assert r.acc_one_token_own_lr is None and "abs_gap_one_token_own_lrs" not in r.to_measured()


@pytest.mark.parametrize("pool, n_iter, moves", [("mean", 100, False), ("mean", 1, True), ("cls", 100, True)])
def test_mean_pooling_hides_a_sinkformer_attention(pool, n_iter, moves):
    """Columns of a doubly stochastic attention sum to 1, so after mean pooling a one-layer Sinkformer's output does
    not depend on its queries and keys; the SoftMax (n_iter = 1) and a class-token read-out do."""
    from theory.experiments.sinkformers.models import ViT

    torch.manual_seed(0)
    model = ViT(8, 1, 2, 10, dim=8, depth=1, heads=1, n_iter=n_iter, mlp=False, norm=False, pool=pool).double()
    images = torch.rand(5, 1, 8, 8, dtype=torch.float64)
    with torch.no_grad():
        before = model(images)
        w = model.encoder.attn[0].qkv.weight
        w[:16] = 3.0 * torch.randn(16, 8, dtype=torch.float64)  # new queries and keys, same values
        change = float((model(images) - before).abs().max() / before.abs().max())
    assert (change > 1e-3) if moves else (change < 1e-10), change


def test_patch_size_reads_the_class_token_by_default():
    r = tr.patch_size(tr.PatchConfig(patches=(4, 8), epochs=1, dim=8, n_train=100, n_test=50, milestones=()))
    assert r.pool == "cls" and "abs_gap_one_token_max" not in tr.fig56_verdict(r).expected


def test_every_inventory_label_is_declared():
    labels = {f.base for f in figures("sinkformers")}
    assert labels == set(paper("sinkformers").figures)
    for f in figures("sinkformers"):
        exp = experiment(f.experiment)
        for c in f.claims:
            assert c in exp.claims, (f.id, c)


# ------------------------------------------------------------------------------------------ data path, drawings

@pytest.mark.parametrize("name", sorted(TINY))
def test_data_path_runs_end_to_end(name, fake_data, tmp_path):
    from theory.plots import figure_directory

    exp = experiment(f"sinkformers.{name}")
    result = exp.run("check", **TINY[name])
    for c in exp.claims:
        v = exp.verdict_for(c)(result)
        assert v.status in ("pass", "fail"), (c, v.message)
    with figure_directory(tmp_path / "out"):
        for f in figures("sinkformers"):
            if f.experiment == exp.name:
                path = f.draw(result)
                assert os.path.getsize(path) > 1000 and str(path).endswith(".png")
                nums = f.numbers_of(result, {c: exp.verdict_for(c)(result) for c in f.claims})
                assert all(p.measured is None or p.measured in nums or "21" in p.measured for p in f.printed), f.id


def test_cats_and_dogs_split_and_size(fake_data):
    xtr, ytr, xte, yte = tr._images("cats-vs-dogs", None, 10, 6, 8, 0)
    assert xtr.shape == (10, 3, 8, 8) and xte.shape == (6, 3, 8, 8) and xtr.dtype == np.float32
    assert set(np.unique(np.r_[ytr, yte])) <= {0, 1} and 0.0 <= xtr.min() and xtr.max() <= 1.0


def test_digits_figures_draw(tmp_path):
    from theory.plots import figure_directory

    with figure_directory(tmp_path):
        r = tr.vit(tr.ViTConfig(epochs=1, record_epochs=(0, 1), n_iters=(1,), dim=8, depth=1, n_train=100,
                                n_test=50))
        assert os.path.exists(figures("sinkformers")[2].draw(r))
        p = tr.patch_size(tr.PatchConfig(patches=(4, 8), epochs=1, dim=8, n_train=100, n_test=50, milestones=()))
        for f in figures("sinkformers"):
            if f.experiment in ("sinkformers.patch_digits", "sinkformers.one_patch"):
                res = p if f.experiment == "sinkformers.patch_digits" else tr.one_patch(tr.OnePatchConfig(draws=1))
                assert os.path.getsize(f.draw(res)) > 1000


def test_missing_data_is_named():
    with pytest.raises(theory.datasets.DatasetMissing, match="modelnet40"):
        tr.modelnet(tr.ModelNetConfig(data="/nonexistent-folder"))
