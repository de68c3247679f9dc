"""The dataset loaders of :mod:`theory.datasets`, on tiny files written in each publisher's format.

Every dataset is written to ``tmp_path`` as its publisher distributes it (IDX files with their magic numbers,
CIFAR's Python-2 pickles with bytes keys, image folders, ModelNet40's comma-separated rows, IMDb's review
files, fairseq's aligned text files, a Gutenberg text with its header, a safetensors file and a BPE
vocabulary), read back through :func:`theory.datasets.load` and compared value for value; damaged files
raise ValueError naming the file; a missing dataset raises DatasetMissing naming it and where it is
published.
"""

from __future__ import annotations

import gzip
import json
import pickle
import re
import struct

import numpy as np
import pytest

from theory import datasets as ds

RNG = np.random.default_rng(20240607)


# --------------------------------------------------------------------------------------------------------
# writers of the publishers' formats
# --------------------------------------------------------------------------------------------------------

def idx_bytes(array: np.ndarray) -> bytes:
    array = np.ascontiguousarray(array, dtype=np.uint8)
    return struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes()


def write_mnist(root, n_train=5, n_test=3, gz=False):
    folder = root / "mnist"
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {"train-images-idx3-ubyte": RNG.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
              "train-labels-idx1-ubyte": RNG.integers(0, 10, n_train, dtype=np.uint8),
              "t10k-images-idx3-ubyte": RNG.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
              "t10k-labels-idx1-ubyte": RNG.integers(0, 10, n_test, dtype=np.uint8)}
    for name, a in arrays.items():
        if gz:
            with gzip.open(folder / f"{name}.gz", "wb") as f:
                f.write(idx_bytes(a))
        else:
            (folder / name).write_bytes(idx_bytes(a))
    return folder, arrays


def cifar_pickle(path, images_hwc, labels, label_keys=(b"labels",)):
    """A batch as the python version has it: a dict with bytes keys, b'data' rows of 1024 R, G, B values."""
    data = np.ascontiguousarray(images_hwc.transpose(0, 3, 1, 2).reshape(len(images_hwc), 3072))
    batch = {b"batch_label": b"a test batch", b"data": data, b"filenames": [b"x.png"] * len(data)}
    for key, lab in zip(label_keys, labels):
        batch[key] = [int(v) for v in lab]
    with open(path, "wb") as f:
        pickle.dump(batch, f, protocol=2)


def write_cifar10(root, n=4):
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    arrays = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        x = RNG.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        y = RNG.integers(0, 10, n)
        cifar_pickle(folder / name, x, [y])
        arrays[name] = (x, y)
    with open(folder / "batches.meta", "wb") as f:
        pickle.dump({b"label_names": [b"airplane"] * 10, b"num_vis": 3072}, f, protocol=2)
    return folder, arrays


def write_cifar100(root, n=3):
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True)
    arrays = {}
    for name in ("train", "test"):
        x = RNG.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        fine, coarse = RNG.integers(0, 100, n), RNG.integers(0, 20, n)
        cifar_pickle(folder / name, x, [fine, coarse], (b"fine_labels", b"coarse_labels"))
        arrays[name] = (x, fine, coarse)
    return folder, arrays


def write_image(path, rgb):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rgb).save(path, format="PNG" if path.suffix.lower() == ".png" else "JPEG", quality=100)


def write_modelnet(root, classes=("airplane", "flower_pot"), rows=12):
    folder = root / "modelnet40_normal_resampled"
    folder.mkdir(parents=True)
    (folder / "modelnet40_shape_names.txt").write_text("\n".join(classes) + "\n")
    clouds = {}
    for split, count in (("train", 2), ("test", 1)):
        names = []
        for c in classes:
            for k in range(count):
                name = f"{c}_{len(clouds) + 1:04d}"
                pts = np.round(RNG.normal(size=(rows, 6)), 6)
                (folder / c).mkdir(exist_ok=True)
                (folder / c / f"{name}.txt").write_text("\n".join(",".join(f"{v:.6f}" for v in r) for r in pts) + "\n")
                clouds[name] = pts
                names.append(name)
        (folder / f"modelnet40_{split}.txt").write_text("\n".join(names) + "\n")
    return folder, clouds


def write_imdb(root):
    folder = root / "aclImdb"
    reviews = {}
    for split in ("train", "test", "train/unsup"):
        for pol in (("neg", "pos") if "unsup" not in split else ("",)):
            sub = folder / split / pol
            sub.mkdir(parents=True, exist_ok=True)
            for ident, rating in ((10, 3), (2, 1), (7, 9)):
                text = f"{split} {pol} review {ident}: ÿ<br /><br />fin"
                (sub / f"{ident}_{rating}.txt").write_text(text, encoding="utf-8")
                reviews[(split, pol, ident)] = text
    (folder / "imdb.vocab").write_text("the\nand\n")
    return folder, reviews


def write_iwslt(root):
    folder = root / "iwslt14.tokenized.de-en"
    folder.mkdir(parents=True)
    pairs = {}
    for split, n in (("train", 3), ("valid", 2), ("test", 1)):
        de = [f"ein sat@@ z {split} {i} ." for i in range(n)]
        en = [f"a sent@@ ence {split} {i} ." for i in range(n)]
        (folder / f"{split}.de").write_text("\n".join(de) + "\n", encoding="utf-8")
        (folder / f"{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
        pairs[split] = (de, en)
    return folder, pairs


GUTENBERG = ("\ufeffThe Project Gutenberg eBook of Moby-Dick; or The Whale, by Herman Melville\r\n\r\n"
             "This eBook is for the use of anyone anywhere...\r\n\r\n"
             "*** START OF THE PROJECT GUTENBERG EBOOK MOBY-DICK; OR THE WHALE ***\r\n\r\n\r\n"
             "MOBY-DICK;\r\n\r\nCall me Ishmael. Some years ago\u2014never mind how long\r\nprecisely.\r\n\r\n"
             "*** END OF THE PROJECT GUTENBERG EBOOK MOBY-DICK; OR THE WHALE ***\r\n\r\nSection 1. General Terms\r\n")
BOOK = "MOBY-DICK;\n\nCall me Ishmael. Some years ago\u2014never mind how long\nprecisely."


def safetensors_bytes(tensors: dict[str, tuple[str, np.ndarray]], metadata=None) -> bytes:
    """The safetensors layout: u64 little-endian header size, JSON header, then the raw tensors."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, a) in tensors.items():
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def byte_pieces():
    return list(ds._bytes_to_unicode().values())


def write_gpt2(root, merges=(("h", "e"), ("Ġ", "w")), d=3, tensor="wte.weight", dtype="F32"):
    folder = root / "gpt2-large"
    folder.mkdir(parents=True)
    pieces = byte_pieces() + [a + b for a, b in merges]
    vocab = {p: i for i, p in enumerate(pieces)}
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8")
    emb = RNG.normal(size=(len(vocab), d)).astype(np.float32)
    (folder / "model.safetensors").write_bytes(safetensors_bytes(
        {"h.0.ln_1.bias": ("F32", np.zeros(d, np.float32)),
         tensor: (dtype, emb.astype("<f2") if dtype == "F16" else emb)},
        {"format": "pt"}))
    return folder, vocab, emb


# --------------------------------------------------------------------------------------------------------
# the declarations, the data root and the missing-dataset message
# --------------------------------------------------------------------------------------------------------

NAMES = ("mnist", "cifar-10", "cifar-100", "imagenet", "hymenoptera", "cats-vs-dogs", "modelnet40", "imdb",
         "iwslt14-de-en", "jft-300m", "moby-dick", "gpt2")


def test_every_dataset_of_the_documents_is_declared():
    assert set(NAMES) == set(ds.DATASETS)
    for name, d in ds.DATASETS.items():
        assert d.name == name and d.title and d.folder and d.published
        assert (d.loader is None) == (name == "jft-300m")
        assert len(d.files) <= 8, "locate checks a few files, not thousands"


@pytest.mark.parametrize("name", NAMES)
def test_a_missing_dataset_names_itself_and_where_it_is_published(name, tmp_path, monkeypatch):
    monkeypatch.delenv(ds.DATA_ENV, raising=False)
    d = ds.dataset(name)
    for root in (None, tmp_path):
        with pytest.raises(ds.DatasetMissing) as exc:
            ds.locate(name, root)
        assert name in str(exc.value) and d.published in str(exc.value)
        assert not ds.available(name, root)
        with pytest.raises(ds.DatasetMissing):
            ds.load(name, root)
    if d.loader is not None:
        with pytest.raises(ds.DatasetMissing, match=ds.DATA_ENV):
            ds.locate(name, None)


def test_jft_is_not_public_whatever_the_root(tmp_path):
    (tmp_path / "jft-300m").mkdir()
    with pytest.raises(ds.DatasetMissing, match="not public"):
        ds.locate("jft-300m", tmp_path)
    assert not ds.available("jft-300m", tmp_path)


def test_the_root_is_the_argument_else_the_environment(tmp_path, monkeypatch):
    write_mnist(tmp_path / "a")
    monkeypatch.delenv(ds.DATA_ENV, raising=False)
    assert not ds.available("mnist")
    monkeypatch.setenv(ds.DATA_ENV, str(tmp_path / "a"))
    assert ds.locate("mnist") == tmp_path / "a" / "mnist"
    assert ds.load("mnist")[0].shape == (5, 28, 28)
    assert not ds.available("mnist", tmp_path / "b"), "an explicit root overrides $THEORY_DATA"
    write_mnist(tmp_path / "b", n_train=2)
    assert ds.load("mnist", str(tmp_path / "b"))[0].shape == (2, 28, 28)


def test_a_root_under_home_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    write_mnist(tmp_path / "data")
    assert ds.locate("mnist", "~/data") == tmp_path / "data" / "mnist"
    monkeypatch.setenv(ds.DATA_ENV, "~/data")
    assert ds.available("mnist")


def test_the_message_lists_what_is_missing(tmp_path):
    folder, _ = write_mnist(tmp_path)
    (folder / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(ds.DatasetMissing, match=r"missing t10k-labels-idx1-ubyte \(or t10k-labels-idx1-ubyte.gz\)"):
        ds.locate("mnist", tmp_path)


def test_unknown_names_and_options():
    with pytest.raises(ValueError, match="unknown dataset 'mnist2'.*cifar-10"):
        ds.dataset("mnist2")


def test_unknown_options_are_refused(tmp_path):
    write_mnist(tmp_path)
    with pytest.raises(TypeError, match="mnist takes the options none; got points"):
        ds.load("mnist", tmp_path, points=3)


# --------------------------------------------------------------------------------------------------------
# MNIST
# --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gz", [False, True])
def test_mnist_round_trip(tmp_path, gz):
    _, a = write_mnist(tmp_path, gz=gz)
    x_train, y_train, x_test, y_test = ds.load("mnist", tmp_path)
    assert x_train.dtype == np.uint8 and x_train.shape == (5, 28, 28) and x_test.shape == (3, 28, 28)
    assert y_train.dtype == np.int64 and y_test.dtype == np.int64
    np.testing.assert_array_equal(x_train, a["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(y_train, a["train-labels-idx1-ubyte"])
    np.testing.assert_array_equal(x_test, a["t10k-images-idx3-ubyte"])
    np.testing.assert_array_equal(y_test, a["t10k-labels-idx1-ubyte"])


def test_mnist_damaged_files(tmp_path):
    folder, a = write_mnist(tmp_path)
    images = folder / "train-images-idx3-ubyte"
    good = images.read_bytes()
    images.write_bytes(b"\x00\x00\x08\x01" + good[4:])
    with pytest.raises(ValueError, match=r"train-images-idx3-ubyte: bad magic number 0x00000801 \(expected 0x00000803"):
        ds.load("mnist", tmp_path)
    images.write_bytes(good[:-1])
    with pytest.raises(ValueError, match="train-images-idx3-ubyte: truncated"):
        ds.load("mnist", tmp_path)
    images.write_bytes(good[:6])
    with pytest.raises(ValueError, match="truncated IDX header"):
        ds.load("mnist", tmp_path)
    images.write_bytes(idx_bytes(np.zeros((5, 27, 28))))
    with pytest.raises(ValueError, match=r"wrong shape \(5, 27, 28\)"):
        ds.load("mnist", tmp_path)
    images.write_bytes(good)
    (folder / "train-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(4)))
    with pytest.raises(ValueError, match="4 labels for the 5 images"):
        ds.load("mnist", tmp_path)
    (folder / "train-labels-idx1-ubyte").write_bytes(idx_bytes(np.full(5, 10)))
    with pytest.raises(ValueError, match=r"labels must lie in 0..9"):
        ds.load("mnist", tmp_path)
    (folder / "train-labels-idx1-ubyte").unlink()
    (folder / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_bytes(a["train-labels-idx1-ubyte"]))[:-5])
    with pytest.raises(ValueError, match="train-labels-idx1-ubyte.gz: not a complete gzip file"):
        ds.load("mnist", tmp_path)


# --------------------------------------------------------------------------------------------------------
# CIFAR
# --------------------------------------------------------------------------------------------------------

def test_cifar10_round_trip(tmp_path):
    _, a = write_cifar10(tmp_path)
    x_train, y_train, x_test, y_test = ds.load("cifar-10", tmp_path)
    assert x_train.shape == (20, 32, 32, 3) and x_train.dtype == np.uint8 and x_train.flags.c_contiguous
    assert y_train.dtype == np.int64 and x_test.shape == (4, 32, 32, 3)
    np.testing.assert_array_equal(x_train, np.concatenate([a[f"data_batch_{i}"][0] for i in range(1, 6)]))
    np.testing.assert_array_equal(y_train, np.concatenate([a[f"data_batch_{i}"][1] for i in range(1, 6)]))
    np.testing.assert_array_equal(x_test, a["test_batch"][0])
    np.testing.assert_array_equal(y_test, a["test_batch"][1])


def test_cifar_rows_are_red_green_blue_planes(tmp_path):
    """The python version stores an image as 1024 red, then 1024 green, then 1024 blue values, rows first."""
    folder, _ = write_cifar10(tmp_path, n=1)
    row = np.arange(3072) % 256
    with open(folder / "test_batch", "wb") as f:
        pickle.dump({b"data": row[None].astype(np.uint8), b"labels": [3]}, f, protocol=2)
    x = ds.load("cifar-10", tmp_path)[2][0]
    assert x[0, 0].tolist() == [0, 1024 % 256, 2048 % 256] and x[0, 1, 0] == 1 and x[1, 0, 0] == 32


def test_cifar100_fine_and_coarse(tmp_path):
    _, a = write_cifar100(tmp_path)
    x_train, y_fine, x_test, y_test = ds.load("cifar-100", tmp_path)
    np.testing.assert_array_equal(x_train, a["train"][0])
    np.testing.assert_array_equal(y_fine, a["train"][1])
    np.testing.assert_array_equal(y_test, a["test"][1])
    _, y_coarse, _, y_coarse_test = ds.load("cifar-100", tmp_path, label="coarse")
    np.testing.assert_array_equal(y_coarse, a["train"][2])
    np.testing.assert_array_equal(y_coarse_test, a["test"][2])
    with pytest.raises(ValueError, match="`label` must be 'fine' or 'coarse'"):
        ds.load("cifar-100", tmp_path, label="super")


def test_cifar_damaged_files(tmp_path):
    folder, _ = write_cifar10(tmp_path)
    batch = folder / "data_batch_3"
    good = batch.read_bytes()
    batch.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match="data_batch_3: not a readable CIFAR pickle"):
        ds.load("cifar-10", tmp_path)
    with open(batch, "wb") as f:
        pickle.dump({b"data": np.zeros((2, 3000), np.uint8), b"labels": [0, 1]}, f)
    with pytest.raises(ValueError, match=r"data_batch_3: wrong shape or type of b'data'"):
        ds.load("cifar-10", tmp_path)
    with open(batch, "wb") as f:
        pickle.dump({b"data": np.zeros((2, 3072), np.uint8)}, f)
    with pytest.raises(ValueError, match=r"data_batch_3: no b'labels' entry"):
        ds.load("cifar-10", tmp_path)
    with open(batch, "wb") as f:
        pickle.dump({b"data": np.zeros((2, 3072), np.uint8), b"labels": [0]}, f)
    with pytest.raises(ValueError, match="one integer per image"):
        ds.load("cifar-10", tmp_path)
    with open(batch, "wb") as f:
        pickle.dump([1, 2], f)
    with pytest.raises(ValueError, match="a CIFAR batch is a pickled dict"):
        ds.load("cifar-10", tmp_path)
    folder100, _ = write_cifar100(tmp_path)
    with open(folder100 / "test", "wb") as f:
        pickle.dump({b"data": np.zeros((1, 3072), np.uint8), b"fine_labels": [100], b"coarse_labels": [0]}, f)
    with pytest.raises(ValueError, match=r"test: labels must lie in 0..99"):
        ds.load("cifar-100", tmp_path)


# --------------------------------------------------------------------------------------------------------
# image folders
# --------------------------------------------------------------------------------------------------------

def test_imagenet_index_is_lazy_and_labels_sorted_wnids(tmp_path, monkeypatch):
    folder = tmp_path / "imagenet"
    wnids = ["n01443537", "n01440764"]
    pixels = {}
    for split in ("train", "val"):
        for w in wnids:
            for k in range(2 if split == "train" else 1):
                rgb = RNG.integers(0, 256, (5 + k, 7, 3), dtype=np.uint8)
                path = folder / split / w / f"{w}_{k}.png"
                write_image(path, rgb)
                pixels[path] = rgb
    (folder / "train" / wnids[0] / "notes.txt").write_text("not an image")
    opened = []
    import PIL.Image

    real_open = PIL.Image.open
    monkeypatch.setattr(PIL.Image, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    x_train, y_train, x_val, y_val = ds.load("imagenet", tmp_path)
    assert opened == [], "building the index decodes nothing"
    assert isinstance(x_train, ds.ImageIndex) and len(x_train) == 4 and x_train.classes == tuple(sorted(wnids))
    assert y_train.dtype == np.int64 and y_train.tolist() == [0, 0, 1, 1] and x_train.labels is y_train
    assert all(p.parent.name == x_train.classes[lab] for p, lab in zip(x_train.paths, y_train))
    img = x_train[3]
    assert img.dtype == np.uint8 and img.shape == (6, 7, 3) and len(opened) == 1
    np.testing.assert_array_equal(img, pixels[x_train.paths[3]])
    assert len(x_val) == 2 and x_val.classes == x_train.classes and y_val.tolist() == [0, 1]
    part = x_train[np.array([3, 0])]
    assert isinstance(part, ds.ImageIndex) and part.labels.tolist() == [1, 0] and part.paths[0] == x_train.paths[3]
    assert x_train[1:3].labels.tolist() == [0, 1] and len(x_train[np.array([], dtype=int)]) == 0
    assert len(opened) == 1, "subsets decode nothing"
    with pytest.raises(TypeError, match="indexed by an int, a slice or a 1-d array of ints"):
        x_train["a"]
    with pytest.raises(TypeError, match="decoded one image at a time"):
        np.asarray(x_train)
    with pytest.raises(IndexError):
        x_train[4]


def test_imagenet_damaged_layouts(tmp_path):
    folder = tmp_path / "imagenet"
    for split in ("train", "val"):
        write_image(folder / split / "n01440764" / "a.JPEG", np.zeros((4, 4, 3), np.uint8))
    (folder / "train" / "n01440764" / "b.JPEG").write_bytes(b"not a jpeg")
    x_train = ds.load("imagenet", tmp_path)[0]
    with pytest.raises(ValueError, match=r"b.JPEG: not a readable image"):
        x_train[1]
    assert len(x_train.readable()) == 1
    (folder / "val" / "n99999999").mkdir()
    with pytest.raises(ValueError, match="val: its class folders differ from n01440764 .extra: n99999999"):
        ds.load("imagenet", tmp_path)
    (folder / "train" / "tench").mkdir()
    with pytest.raises(ValueError, match="class folders must be WordNet ids"):
        ds.load("imagenet", tmp_path)


def test_hymenoptera(tmp_path):
    for split in ("train", "val"):
        for cls in ("bees", "ants"):
            write_image(tmp_path / "hymenoptera_data" / split / cls / f"{cls}1.jpg", np.full((3, 3, 3), 9, np.uint8))
    x_train, y_train, x_val, y_val = ds.load("hymenoptera", tmp_path)
    assert x_train.classes == ("ants", "bees") and y_val.tolist() == [0, 1] and y_train.tolist() == [0, 1]
    assert x_train[1].shape == (3, 3, 3) and x_train.paths[1].parent.name == "bees"
    (tmp_path / "hymenoptera_data" / "train" / "wasps").mkdir()
    with pytest.raises(ValueError, match="class folders differ from ants bees"):
        ds.load("hymenoptera", tmp_path)


def test_pet_images_split_by_class(tmp_path):
    for cls, n in (("Cat", 10), ("Dog", 5)):
        for k in range(n):
            write_image(tmp_path / "PetImages" / cls / f"{k}.jpg", np.zeros((2, 3, 3), np.uint8))
    (tmp_path / "PetImages" / "Cat" / "Thumbs.db").write_bytes(b"\0")
    (tmp_path / "PetImages" / "Cat" / "666.jpg").write_bytes(b"")
    (tmp_path / "PetImages" / "Dog" / "11702.jpg").write_bytes(b"broken")
    x_train, y_train, x_test, y_test = ds.load("cats-vs-dogs", tmp_path)
    assert x_train.classes == ("Cat", "Dog") and len(x_train) + len(x_test) == 16, "the empty file is left out"
    assert y_test.tolist() == [0, 0, 1] and y_train.tolist() == [0] * 8 + [1] * 5
    assert not set(x_train.paths) & set(x_test.paths)
    again = ds.load("cats-vs-dogs", tmp_path)
    assert again[2].paths == x_test.paths, "the split is fixed by the seed"
    assert ds.load("cats-vs-dogs", tmp_path, seed=1)[2].paths != x_test.paths
    assert len(ds.load("cats-vs-dogs", tmp_path, test_fraction=0.5)[2]) == 8
    whole = x_train.readable()
    assert len(whole) == len(x_train) - (tmp_path / "PetImages" / "Dog" / "11702.jpg" in x_train.paths)
    assert x_train.image(0).mode == "RGB" and x_train.image(0).size == (3, 2)
    with pytest.raises(ValueError, match=r"`test_fraction` must be a number in \(0, 1\)"):
        ds.load("cats-vs-dogs", tmp_path, test_fraction=1.0)
    with pytest.raises(TypeError, match="cats-vs-dogs takes the options test_fraction, seed; got split"):
        ds.load("cats-vs-dogs", tmp_path, split="train")


# --------------------------------------------------------------------------------------------------------
# ModelNet40
# --------------------------------------------------------------------------------------------------------

def test_modelnet40_round_trip(tmp_path):
    folder, clouds = write_modelnet(tmp_path)
    x_train, y_train, x_test, y_test = ds.load("modelnet40", tmp_path, points=10)
    assert x_train.dtype == np.float32 and x_train.shape == (4, 10, 3) and x_test.shape == (2, 10, 3)
    assert y_train.dtype == np.int64 and y_train.tolist() == [0, 0, 1, 1] and y_test.tolist() == [0, 1]
    names = (folder / "modelnet40_train.txt").read_text().split()
    for i, name in enumerate(names):
        np.testing.assert_array_equal(x_train[i], clouds[name][:10, :3].astype(np.float32))
    with_normals = ds.load("modelnet40", tmp_path, points=12, normals=True)[2]
    np.testing.assert_array_equal(with_normals[1], clouds["flower_pot_0006"].astype(np.float32))
    with pytest.raises(ValueError, match=r"airplane_0001.txt: truncated: 12 points, fewer than points=13"):
        ds.load("modelnet40", tmp_path, points=13)
    with pytest.raises(ValueError, match="`points` must be a positive int"):
        ds.load("modelnet40", tmp_path, points=0)


def test_modelnet40_damaged_files(tmp_path):
    folder, _ = write_modelnet(tmp_path)
    (folder / "airplane" / "airplane_0002.txt").write_text("0.1,0.2,0.3\n" * 12)
    with pytest.raises(ValueError, match=r"airplane_0002.txt: wrong shape: 3 columns"):
        ds.load("modelnet40", tmp_path, points=4)
    (folder / "airplane" / "airplane_0002.txt").write_text("0.1,0.2,x,0,0,1\n" * 12)
    with pytest.raises(ValueError, match=r"airplane_0002.txt: not rows of 6 comma-separated numbers"):
        ds.load("modelnet40", tmp_path, points=4)
    (folder / "modelnet40_test.txt").write_text("chair_0001\n")
    (folder / "airplane" / "airplane_0002.txt").write_text("0,0,0,0,0,1\n" * 12)
    with pytest.raises(ValueError, match=r"modelnet40_test.txt: line 1: 'chair_0001'"):
        ds.load("modelnet40", tmp_path, points=4)


# --------------------------------------------------------------------------------------------------------
# IMDb, IWSLT'14, Moby Dick
# --------------------------------------------------------------------------------------------------------

def test_imdb_round_trip(tmp_path):
    folder, reviews = write_imdb(tmp_path)
    texts_train, y_train, texts_test, y_test = ds.load("imdb", tmp_path)
    assert len(texts_train) == 6 and y_train.dtype == np.int64 and y_train.tolist() == [0, 0, 0, 1, 1, 1]
    assert texts_train == [reviews[("train", p, i)] for p in ("neg", "pos") for i in (2, 7, 10)]
    assert texts_test == [reviews[("test", p, i)] for p in ("neg", "pos") for i in (2, 7, 10)]
    assert y_test.tolist() == y_train.tolist()
    (folder / "test" / "pos" / "notes.md").write_text("x")
    with pytest.raises(ValueError, match=r"notes.md: not a review file '<id>_<rating>.txt'"):
        ds.load("imdb", tmp_path)
    (folder / "test" / "pos" / "notes.md").unlink()
    (folder / "test" / "pos" / "3_8.txt").write_bytes(b"\xff\xfe bad")
    with pytest.raises(ValueError, match=r"3_8.txt: not utf-8 text"):
        ds.load("imdb", tmp_path)


def test_iwslt14_round_trip(tmp_path):
    folder, pairs = write_iwslt(tmp_path)
    out = ds.load("iwslt14-de-en", tmp_path)
    assert set(out) == {"train", "valid", "test"}
    for split, (de, en) in pairs.items():
        assert out[split] == (de, en)
    assert ds.load("iwslt14-de-en", tmp_path, split="valid") == pairs["valid"]
    (folder / "valid.en").write_text("one\n")
    with pytest.raises(ValueError, match=r"valid.de: 2 lines against 1 in valid.en"):
        ds.load("iwslt14-de-en", tmp_path)
    with pytest.raises(ValueError, match="`split` must be None or one of train, valid, test"):
        ds.load("iwslt14-de-en", tmp_path, split="dev")


@pytest.mark.parametrize("name", ["2701-0.txt", "pg2701.txt"])
def test_moby_dick_without_the_gutenberg_header(tmp_path, name):
    (tmp_path / "gutenberg").mkdir()
    (tmp_path / "gutenberg" / name).write_bytes(GUTENBERG.encode("utf-8"))
    assert ds.load("moby-dick", tmp_path) == BOOK


def test_moby_dick_file_order_and_nltk_copy(tmp_path):
    folder = tmp_path / "gutenberg"
    folder.mkdir()
    (folder / "melville-moby_dick.txt").write_text("[Moby Dick by Herman Melville 1851]\n\nETYMOLOGY.\n")
    assert ds.load("moby-dick", tmp_path) == "[Moby Dick by Herman Melville 1851]\n\nETYMOLOGY."
    (folder / "pg2701.txt").write_text(GUTENBERG, encoding="utf-8")
    assert ds.load("moby-dick", tmp_path) == BOOK, "Gutenberg's own file comes first"


def test_moby_dick_damaged(tmp_path):
    folder = tmp_path / "gutenberg"
    folder.mkdir()
    (folder / "2701-0.txt").write_text(GUTENBERG.split("*** END")[0], encoding="utf-8")
    with pytest.raises(ValueError, match=r"2701-0.txt: truncated: no '\*\*\* END OF"):
        ds.load("moby-dick", tmp_path)
    (folder / "2701-0.txt").write_text("Call me Ishmael.")
    with pytest.raises(ValueError, match=r"2701-0.txt: no '\*\*\* START OF"):
        ds.load("moby-dick", tmp_path)


# --------------------------------------------------------------------------------------------------------
# GPT-2: safetensors and the byte-level BPE
# --------------------------------------------------------------------------------------------------------

def test_gpt2_embedding_and_a_two_merge_vocabulary(tmp_path):
    _, vocab, emb = write_gpt2(tmp_path)
    token_embedding, encode = ds.load("gpt2", tmp_path)
    assert token_embedding.dtype == np.float32 and token_embedding.shape == (258, 3)
    np.testing.assert_array_equal(token_embedding, emb)
    assert encode("hello world") == [vocab["he"], vocab["l"], vocab["l"], vocab["o"], vocab["Ġw"], vocab["o"],
                                     vocab["r"], vocab["l"], vocab["d"]]
    assert encode("") == []
    assert encode.decode(encode("hello wörld\n\n'tis")) == "hello wörld\n\n'tis"
    assert encode("é") == [vocab["Ã"], vocab["©"]], "bytes 0xC3 0xA9 map to the pieces Ã and ©"
    with pytest.raises(TypeError, match="`text` must be a str"):
        encode(b"bytes")


def test_gpt2_merges_apply_by_rank_not_position(tmp_path):
    bpe = ds.BPETokenizer({**{p: i for i, p in enumerate(byte_pieces())}, "bc": 256, "ab": 257},
                          [("b", "c"), ("a", "b")])
    assert bpe("abc") == [bpe.vocab["a"], 256], "(b, c) has the lower rank: merged first"
    bpe = ds.BPETokenizer({**{p: i for i, p in enumerate(byte_pieces())}, "aa": 256, "aaaa": 257},
                          [("a", "a"), ("aa", "aa")])
    assert bpe("aaaaa") == [257, bpe.vocab["a"]] and bpe("aaa") == [256, bpe.vocab["a"]]


def test_gpt2_tokenizer_needs_every_byte_and_merge(tmp_path):
    with pytest.raises(ValueError, match="lacks 1 of the 256 byte pieces"):
        ds.BPETokenizer({p: i for i, p in enumerate(byte_pieces()[1:])}, [])
    with pytest.raises(ValueError, match="lacks 'xy', the result of the merge 'x' 'y'"):
        ds.BPETokenizer({p: i for i, p in enumerate(byte_pieces())}, [("x", "y")])
    with pytest.raises(ValueError, match="two pieces to one id"):
        ds.BPETokenizer({**{p: i for i, p in enumerate(byte_pieces())}, "xy": 0}, [])


PRETOKENS = [
    ("Hello world", ["Hello", " world"]),
    ("I'm  here\n\nok", ["I", "'m", " ", " here", "\n", "\n", "ok"]),
    ("don't stop!!! 123abc", ["don", "'t", " stop", "!!!", " 123", "abc"]),
    ("a  \n b", ["a", "  \n", " b"]),
    ("end   ", ["end", "   "]),
    ("x\t\ty", ["x", "\t", "\t", "y"]),
    ("'S 'll've", ["'", "S", " '", "ll", "'ve"]),
    ("Ünïcode ½ 二十 ٣", ["Ünïcode", " ½", " 二十", " ٣"]),
    ("a\u00a0b", ["a", "\u00a0", "b"]),
]


@pytest.mark.parametrize("text,words", PRETOKENS)
def test_gpt2_pretokenizer(text, words):
    assert ds._pretokenize(text) == words
    assert "".join(ds._pretokenize(text)) == text


# GPT-2's pattern restricted to ASCII, where Python's re computes it exactly
_ASCII_PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^ \t\n\r\x0b\x0cA-Za-z0-9]+"""
                            r"""|[ \t\n\r\x0b\x0c]+(?![^ \t\n\r\x0b\x0c])|[ \t\n\r\x0b\x0c]+""")


def test_gpt2_pretokenizer_is_the_pattern_on_ascii():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    @hypothesis.settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @hypothesis.given(st.text(alphabet="ab Z09'!.-sdtmlrve \t\n\r", max_size=40))
    def same(text):
        assert ds._pretokenize(text) == _ASCII_PATTERN.findall(text)

    same()


def test_safetensors_dtypes_and_prefix(tmp_path):
    emb = RNG.normal(size=(4, 2)).astype(np.float32)
    path = tmp_path / "m.safetensors"
    path.write_bytes(safetensors_bytes({"transformer.wte.weight": ("F16", emb.astype("<f2"))}))
    name, out = ds._safetensors_tensor(path, ("wte.weight", "transformer.wte.weight"))
    assert name == "transformer.wte.weight" and out.dtype == np.float32
    np.testing.assert_array_equal(out, emb.astype(np.float16).astype(np.float32))
    bf16 = (emb.view(np.uint32) >> 16).astype("<u2")
    path.write_bytes(safetensors_bytes({"wte.weight": ("BF16", bf16)}))
    np.testing.assert_array_equal(ds._safetensors_tensor(path, ("wte.weight",))[1],
                                  (bf16.astype(np.uint32) << 16).view(np.float32))
    one = np.array([[1.5]], np.float32)
    path.write_bytes(safetensors_bytes({"wte.weight": ("F32", one)}))
    assert ds._safetensors_tensor(path, ("wte.weight",))[1].tolist() == [[1.5]]


def test_gpt2_damaged_files(tmp_path):
    folder, vocab, emb = write_gpt2(tmp_path)
    st = folder / "model.safetensors"
    good = st.read_bytes()
    st.write_bytes(good[:-4])
    with pytest.raises(ValueError, match=r"model.safetensors: truncated: tensor wte.weight ends at byte"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(struct.pack("<Q", 10 ** 12) + good[8:])
    with pytest.raises(ValueError, match="bad header size"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(good[:8] + b"x" + good[9:])
    with pytest.raises(ValueError, match="header is not JSON"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(safetensors_bytes({"lm_head.weight": ("F32", emb)}))
    with pytest.raises(ValueError, match="no tensor wte.weight or transformer.wte.weight"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(safetensors_bytes({"wte.weight": ("I32", emb.view(np.int32))}))
    with pytest.raises(ValueError, match="dtype I32 is not one of"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(safetensors_bytes({"wte.weight": ("F32", emb[:-1])}))
    with pytest.raises(ValueError, match="257 rows, fewer than the 258 ids of vocab.json"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(safetensors_bytes({"wte.weight": ("F32", emb.reshape(-1))}))
    with pytest.raises(ValueError, match=r"wrong shape \[774\]"):
        ds.load("gpt2", tmp_path)
    st.write_bytes(good)
    (folder / "merges.txt").write_text("#version: 0.2\nh e\nhe llo x\n")
    with pytest.raises(ValueError, match=r"merges.txt: line 3: 'he llo x' is not two pieces"):
        ds.load("gpt2", tmp_path)
    (folder / "merges.txt").write_text("#version: 0.2\nh e\n")
    (folder / "vocab.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="vocab.json: not a JSON object mapping each piece"):
        ds.load("gpt2", tmp_path)
