"""The documents' datasets, read from their standard files in a local folder; never a silent stand-in.

Each dataset is declared once (:data:`DATASETS`): its name, the folder and files its publisher
distributes, where it is published, and its loader. The folder is looked for under the data root: the
``--data DIR`` of ``theory reproduce`` (or the ``data=`` argument), else the environment variable
``THEORY_DATA``. Nothing is downloaded: a dataset that is not there raises :class:`DatasetMissing`, whose
message names the dataset, the folder and files looked for and where to get them; the checks turn it into
a skip with that message.

The datasets: ``mnist``, ``cifar-10``, ``cifar-100`` (arrays), ``imagenet``, ``hymenoptera``,
``cats-vs-dogs`` (lazy :class:`ImageIndex` of paths and labels), ``modelnet40`` (point clouds), ``imdb``
(reviews), ``iwslt14-de-en`` (sentence pairs), ``moby-dick`` (the book's text), ``gpt2`` (GPT-2 large's
token embedding and its :class:`BPETokenizer`) and ``jft-300m`` (not public: never found). Each loader
validates the publisher's format: a file in another format raises ValueError naming the file and what is
wrong with it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["DATA_ENV", "Dataset", "DATASETS", "DatasetMissing", "data_root", "dataset", "locate", "load",
           "available", "ImageIndex", "BPETokenizer"]

#: the environment variable naming the data root
DATA_ENV = "THEORY_DATA"


class DatasetMissing(FileNotFoundError):
    """A dataset's files are not under the data root; the message says which and where they are published."""


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One dataset of the documents.

    Attributes
    ----------
    name : str
        Its name here (``"cifar-10"``).
    title : str
        Its name and origin in words.
    folder : str
        The folder, under the data root, that holds it as its publisher distributes it.
    files : tuple of str
        Files or folders (relative to ``folder``) whose presence means the dataset is there. An entry
        ``"a | b"`` is present when either ``a`` or ``b`` is (the publisher's names for the same file, e.g.
        a file and its ``.gz``); the loader reads the first one present.
    published : str
        Where it is published (a URL, or who distributes it).
    loader : callable or None
        ``loader(folder, **options)``: the arrays (see each loader's docstring); None where no loader is
        provided (a dataset that is not public).
    """

    name: str
    title: str
    folder: str
    files: tuple[str, ...]
    published: str
    loader: Callable[..., Any] | None = None


DATASETS: dict[str, Dataset] = {}


def _declare(*args, **kwargs) -> Dataset:
    d = Dataset(*args, **kwargs)
    DATASETS[d.name] = d
    return d


def dataset(name: str) -> Dataset:
    """The declaration of dataset ``name``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}")
    return DATASETS[name]


def data_root(data: str | os.PathLike | None = None) -> Path | None:
    """The data root: ``data`` if given, else ``$THEORY_DATA``, else None (``~`` expanded)."""
    if data is not None:
        return Path(data).expanduser()
    env = os.environ.get(DATA_ENV)
    return Path(env).expanduser() if env else None


def locate(name: str, data: str | os.PathLike | None = None) -> Path:
    """The folder of dataset ``name`` under the data root, once its files are found there.

    Raises
    ------
    DatasetMissing
        When no data root is set or the files are not there; the message names the dataset, the files
        looked for and where the dataset is published. A dataset that is not public (declared without a
        loader) is never found.
    """
    d = dataset(name)
    if d.loader is None:
        raise DatasetMissing(f"dataset {d.name} ({d.title}) cannot be read here: {d.published}")
    root = data_root(data)
    where = (f"under {root}" if root is not None
             else f"(no data folder: pass --data DIR or set {DATA_ENV})")
    files = [_entry_text(f) for f in d.files]
    if root is not None:
        folder = root / d.folder
        missing = [_entry_text(f) for f in d.files if _present(folder, f) is None]
        if not missing:
            return folder
        looked = f"{where} ({folder}: missing {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''})"
    else:
        looked = where
    raise DatasetMissing(f"dataset {d.name} ({d.title}) not found {looked}; it is published at {d.published} "
                         f"(expected as {d.folder}/ with {', '.join(files[:3])}{' ...' if len(files) > 3 else ''})")


def _alternatives(entry: str) -> list[str]:
    return [a.strip() for a in entry.split("|")]


def _entry_text(entry: str) -> str:
    first, *others = _alternatives(entry)
    return first + "".join(f" (or {o})" for o in others)


def _present(folder: Path, entry: str) -> Path | None:
    """The first existing path of the alternatives ``"a | b"`` of ``entry`` under ``folder``, else None."""
    for name in _alternatives(entry):
        if (folder / name).exists():
            return folder / name
    return None


def available(name: str, data: str | os.PathLike | None = None) -> bool:
    """Whether dataset ``name`` is found under the data root."""
    try:
        locate(name, data)
    except DatasetMissing:
        return False
    return True


def load(name: str, data: str | os.PathLike | None = None, **options: Any) -> Any:
    """Dataset ``name`` read by its loader from the data root (``options`` go to the loader).

    Raises
    ------
    DatasetMissing
        When it is not there.
    ValueError
        When it has no loader (not public), or its files are not in the publisher's format.
    """
    folder = locate(name, data)
    d = dataset(name)
    if d.loader is None:
        raise ValueError(f"dataset {name} has no loader: {d.published}")
    return d.loader(folder, **options)


def _folder_text(value: Any) -> str:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise TypeError("a folder path (a non-empty string)")
    return value


def data_field(names: str, doc: str = "") -> Any:
    """The ``data`` field of an experiment config that reads dataset(s) ``names``: the data root (a folder
    path) or None for ``$THEORY_DATA``.

    ``theory reproduce --data DIR`` fills it; the experiment's measure passes it to :func:`load`.
    """
    from theory.experiments.config import Custom, OrNone, field

    rule = Custom(_folder_text, "a folder path", type_name="str", parse=str,
                  invalid=[(3, TypeError), ("", TypeError), ("  ", TypeError)], boundary=["/", "data"], scalar=True)
    return field(OrNone(rule, f"${DATA_ENV}"), None, doc or f"The data root holding {names} (None: ${DATA_ENV}).")


# --------------------------------------------------------------------------------------------------------
# Readers shared by the loaders
# --------------------------------------------------------------------------------------------------------

def _file(folder: Path, entry: str) -> Path:
    """The file of ``entry`` (``"a | b"``: the first present) under ``folder``; ValueError when absent."""
    path = _present(folder, entry)
    if path is None:
        raise ValueError(f"{folder}: none of {', '.join(_alternatives(entry))} is there")
    return path


def _read_bytes(path: Path) -> bytes:
    """The bytes of ``path``, gunzipped when its name ends in ``.gz``."""
    import gzip
    import zlib

    if path.name.endswith(".gz"):
        try:
            with gzip.open(path, "rb") as f:
                return f.read()
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{path}: not a complete gzip file ({exc})") from exc
    return path.read_bytes()


def _read_text(path: Path, *, encoding: str = "utf-8") -> str:
    try:
        return path.read_bytes().decode(encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not {encoding} text ({exc})") from exc


def _options(name: str, options: dict, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"dataset {name} takes the options {', '.join(allowed) or 'none'}; got {', '.join(unknown)}")


def _split_option(split: Any, splits: tuple[str, ...]) -> None:
    if split is not None and split not in splits:
        raise ValueError(f"`split` must be None or one of {', '.join(splits)}; got {split!r}")


def _labels_in_range(path: Path, labels: Any, classes: int) -> None:
    import numpy as np

    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(f"{path}: labels must lie in 0..{classes - 1}; found {labels.min()}..{labels.max()}")


# --------------------------------------------------------------------------------------------------------
# MNIST: the IDX files of LeCun, Cortes and Burges
# --------------------------------------------------------------------------------------------------------

_MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte")


def _read_idx(path: Path, ndim: int) -> Any:
    """The unsigned-byte array of IDX file ``path`` with ``ndim`` dimensions.

    An IDX file is a 4-byte magic number (two zero bytes, the type code 0x08 for unsigned bytes, the number
    of dimensions), one big-endian 32-bit size per dimension, then the data in C order.
    """
    import struct

    import numpy as np

    raw = _read_bytes(path)
    if len(raw) < 4:
        raise ValueError(f"{path}: truncated IDX file ({len(raw)} bytes, no magic number)")
    zero, code, dims = struct.unpack(">HBB", raw[:4])
    magic = int.from_bytes(raw[:4], "big")
    if zero != 0 or code != 0x08 or dims != ndim:
        raise ValueError(f"{path}: bad magic number 0x{magic:08x} (expected 0x{0x0800 + ndim:08x}: unsigned bytes "
                         f"in {ndim} dimension{'s' if ndim > 1 else ''})")
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise ValueError(f"{path}: truncated IDX header ({len(raw)} bytes, expected {head})")
    shape = struct.unpack(f">{ndim}I", raw[4:head])
    size = int(np.prod(shape, dtype=np.int64))
    if len(raw) - head != size:
        raise ValueError(f"{path}: {'truncated' if len(raw) - head < size else 'trailing bytes'}: the header "
                         f"declares {shape} = {size} bytes of data, the file holds {len(raw) - head}")
    return np.frombuffer(raw, dtype=np.uint8, offset=head).reshape(shape).copy()


def _mnist_split(folder: Path, images: str, labels: str) -> tuple[Any, Any]:
    import numpy as np

    ipath, lpath = _file(folder, f"{images} | {images}.gz"), _file(folder, f"{labels} | {labels}.gz")
    x, y = _read_idx(ipath, 3), _read_idx(lpath, 1)
    if x.shape[1:] != (28, 28):
        raise ValueError(f"{ipath}: wrong shape {x.shape}: MNIST images are 28 x 28")
    if len(y) != len(x):
        raise ValueError(f"{lpath}: {len(y)} labels for the {len(x)} images of {ipath.name}")
    _labels_in_range(lpath, y, 10)
    return x, y.astype(np.int64)


def _load_mnist(folder: Path, **options: Any) -> tuple[Any, Any, Any, Any]:
    """MNIST from its four IDX files (each possibly gzipped, as LeCun distributes them).

    Returns
    -------
    x_train : ndarray of uint8, shape (60000, 28, 28)
    y_train : ndarray of int64, shape (60000,)
        Digits 0..9.
    x_test : ndarray of uint8, shape (10000, 28, 28)
    y_test : ndarray of int64, shape (10000,)

    Raises
    ------
    ValueError
        A file with a bad magic number, a wrong image size, truncated, or labels that do not match the images.
    """
    _options("mnist", options, ())
    x_train, y_train = _mnist_split(folder, *_MNIST_FILES[:2])
    x_test, y_test = _mnist_split(folder, *_MNIST_FILES[2:])
    return x_train, y_train, x_test, y_test


# --------------------------------------------------------------------------------------------------------
# CIFAR-10 and CIFAR-100: the "python version" pickles of Krizhevsky
# --------------------------------------------------------------------------------------------------------

def _unpickle(path: Path) -> dict:
    """A CIFAR batch: the dictionary pickled by Python 2, read with bytes keys.

    Pickles can run code when read: read only the files distributed by the publisher.
    """
    import pickle

    try:
        with open(path, "rb") as f:
            batch = pickle.load(f, encoding="bytes")
    except Exception as exc:  # noqa: BLE001 -- a damaged pickle raises anything from EOFError to KeyError
        raise ValueError(f"{path}: not a readable CIFAR pickle ({type(exc).__name__}: {exc})") from exc
    if not isinstance(batch, dict):
        raise ValueError(f"{path}: a CIFAR batch is a pickled dict; found {type(batch).__name__}")
    return batch


def _batch_key(path: Path, batch: dict, key: str) -> Any:
    for k in (key.encode(), key):
        if k in batch:
            return batch[k]
    raise ValueError(f"{path}: no {key.encode()!r} entry (found {', '.join(repr(k) for k in batch)})")


def _cifar_batch(path: Path, label_key: str, classes: int) -> tuple[Any, Any]:
    import numpy as np

    batch = _unpickle(path)
    data = np.asarray(_batch_key(path, batch, "data"))
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise ValueError(f"{path}: wrong shape or type of b'data': {data.dtype} {data.shape} "
                         f"(expected uint8 (n, 3072), the 1024 red, green then blue values of 32 x 32 images)")
    labels = np.asarray(_batch_key(path, batch, label_key))
    if labels.shape != (len(data),) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"{path}: {label_key.encode()!r} must hold one integer per image "
                         f"({len(data)}); found {labels.dtype} {labels.shape}")
    _labels_in_range(path, labels, classes)
    images = data.reshape(len(data), 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels.astype(np.int64)


_CIFAR10_FILES = tuple(f"data_batch_{i}" for i in range(1, 6)) + ("test_batch",)


def _load_cifar10(folder: Path, **options: Any) -> tuple[Any, Any, Any, Any]:
    """CIFAR-10 from the python version (``data_batch_1`` ... ``data_batch_5``, ``test_batch``).

    Returns
    -------
    x_train : ndarray of uint8, shape (50000, 32, 32, 3)
        Height, width, then the red, green, blue channels.
    y_train : ndarray of int64, shape (50000,)
        Classes 0..9 (the order of ``batches.meta``: airplane, automobile, bird, ...).
    x_test : ndarray of uint8, shape (10000, 32, 32, 3)
    y_test : ndarray of int64, shape (10000,)

    Raises
    ------
    ValueError
        A file that is not a readable pickle of a dict with ``b'data'`` (uint8, 3072 values an image) and
        ``b'labels'`` (one label in 0..9 an image).
    """
    import numpy as np

    _options("cifar-10", options, ())
    train = [_cifar_batch(folder / f, "labels", 10) for f in _CIFAR10_FILES[:5]]
    x_test, y_test = _cifar_batch(folder / "test_batch", "labels", 10)
    return (np.concatenate([x for x, _ in train]), np.concatenate([y for _, y in train]), x_test, y_test)


def _load_cifar100(folder: Path, *, label: str = "fine", **options: Any) -> tuple[Any, Any, Any, Any]:
    """CIFAR-100 from the python version (``train``, ``test``).

    Parameters
    ----------
    label : {"fine", "coarse"}
        The 100 classes (``b'fine_labels'``, default) or the 20 superclasses (``b'coarse_labels'``).

    Returns
    -------
    x_train : ndarray of uint8, shape (50000, 32, 32, 3)
    y_train : ndarray of int64, shape (50000,)
    x_test : ndarray of uint8, shape (10000, 32, 32, 3)
    y_test : ndarray of int64, shape (10000,)

    Raises
    ------
    ValueError
        An unknown ``label``, or a file not in the python version's format.
    """
    _options("cifar-100", options, ("label",))
    if label not in ("fine", "coarse"):
        raise ValueError(f"`label` must be 'fine' or 'coarse'; got {label!r}")
    classes = 100 if label == "fine" else 20
    x_train, y_train = _cifar_batch(folder / "train", f"{label}_labels", classes)
    x_test, y_test = _cifar_batch(folder / "test", f"{label}_labels", classes)
    return x_train, y_train, x_test, y_test


# --------------------------------------------------------------------------------------------------------
# Image folders: ImageNet, hymenoptera, PetImages (read lazily with PIL)
# --------------------------------------------------------------------------------------------------------

_IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png")


class ImageIndex:
    """The images of one split of an image-folder dataset: their paths and labels, decoded on demand.

    Nothing is decoded when the index is built. ``index[i]`` opens file ``i`` with PIL and returns its
    pixels, so an index stands where the other loaders return an array of images; ``index[ids]`` (a slice,
    or an array of positions) is the index of those images.

    Parameters
    ----------
    paths : sequence of path-like
        The image files.
    labels : sequence of int
        Their classes, indices into ``classes``.
    classes : sequence of str
        The class names (the folder names, sorted as ``torchvision.datasets.ImageFolder`` sorts them).

    Attributes
    ----------
    paths : tuple of Path
    labels : ndarray of int64
    classes : tuple of str
    """

    def __init__(self, paths, labels, classes) -> None:
        import numpy as np

        self.paths = tuple(Path(p) for p in paths)
        self.labels = np.asarray(labels, dtype=np.int64).reshape(-1)
        self.classes = tuple(str(c) for c in classes)
        if len(self.labels) != len(self.paths):
            raise ValueError(f"`labels` must have one entry a path ({len(self.paths)}); got {len(self.labels)}")
        if len(self.labels) and (self.labels.min() < 0 or self.labels.max() >= len(self.classes)):
            raise ValueError(f"`labels` must lie in 0..{len(self.classes) - 1} (one per class)")

    def __len__(self) -> int:
        return len(self.paths)

    def __repr__(self) -> str:
        return f"ImageIndex({len(self)} images, {len(self.classes)} classes)"

    def __array__(self, *args, **kwargs):
        raise TypeError("an ImageIndex is decoded one image at a time (index[i], or index.image(i) to resize "
                        "with PIL); it is not turned into one array")

    def image(self, i: int):
        """Image ``i`` as a PIL image in RGB.

        Raises
        ------
        ValueError
            When the file is not an image PIL can decode (the message names it).
        """
        from PIL import Image, UnidentifiedImageError

        path = self.paths[i]
        try:
            with Image.open(path) as im:
                return im.convert("RGB")
        except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as exc:
            raise ValueError(f"{path}: not a readable image ({exc})") from exc

    def __getitem__(self, i):
        """Image ``i`` as uint8 (height, width, 3) pixels; or, for a slice or an array of positions, the
        index of those images."""
        import numpy as np

        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            return np.asarray(self.image(int(i)), dtype=np.uint8)
        if isinstance(i, slice):
            return self.subset(range(len(self))[i])
        idx = np.asarray(i)
        if idx.ndim == 1 and (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
            return self.subset(idx)
        raise TypeError(f"an ImageIndex is indexed by an int, a slice or a 1-d array of ints; got {i!r}")

    def subset(self, indices) -> ImageIndex:
        """The index of images ``indices`` (the same classes)."""
        import numpy as np

        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        return ImageIndex([self.paths[i] for i in idx], self.labels[idx], self.classes)

    def readable(self) -> ImageIndex:
        """The subset of images whose files PIL identifies and verifies; reads every file's header once."""
        from PIL import Image

        keep = []
        for i, path in enumerate(self.paths):
            try:
                with Image.open(path) as im:
                    im.verify()
            except Exception:  # noqa: BLE001 -- PIL raises many kinds on a broken file
                continue
            keep.append(i)
        return self.subset(keep)


def _subfolders(folder: Path) -> list[str]:
    with os.scandir(folder) as it:
        return sorted(e.name for e in it if e.is_dir())


def _image_files(folder: Path, *, skip_empty: bool = False) -> list[Path]:
    with os.scandir(folder) as it:
        names = sorted(e.name for e in it if e.is_file() and e.name.lower().endswith(_IMAGE_SUFFIXES)
                       and not (skip_empty and e.stat().st_size == 0))
    return [folder / n for n in names]


def _image_folder(split: Path, classes: list[str] | None = None, *, skip_empty: bool = False) -> ImageIndex:
    """The ImageFolder layout ``split/<class>/<image>``: classes sorted, labels their positions."""
    if not split.is_dir():
        raise ValueError(f"{split}: not a folder (expected one folder per class)")
    found = _subfolders(split)
    if not found:
        raise ValueError(f"{split}: no class folders")
    if classes is not None and found != classes:
        extra, lost = sorted(set(found) - set(classes)), sorted(set(classes) - set(found))
        raise ValueError(f"{split}: its class folders differ from {' '.join(classes[:3])}"
                         f"{' ...' if len(classes) > 3 else ''} (extra: {', '.join(extra[:3]) or 'none'}; "
                         f"missing: {', '.join(lost[:3]) or 'none'})")
    paths, labels = [], []
    for k, name in enumerate(found):
        files = _image_files(split / name, skip_empty=skip_empty)
        paths += files
        labels += [k] * len(files)
    return ImageIndex(paths, labels, found)


def _image_splits(folder: Path, classes: list[str] | None = None) -> tuple[Any, Any, Any, Any]:
    train = _image_folder(folder / "train", classes)
    val = _image_folder(folder / "val", list(train.classes))
    return train, train.labels, val, val.labels


def _load_imagenet(folder: Path, **options: Any) -> tuple[Any, Any, Any, Any]:
    """ILSVRC-2012 in the ImageFolder layout (``train/<wnid>/*.JPEG``, ``val/<wnid>/*.JPEG``), indexed lazily.

    Returns
    -------
    x_train : ImageIndex
        The 1 281 167 training images; ``x_train[i]`` decodes one, uint8 (height, width, 3).
    y_train : ndarray of int64
        Their classes 0..999: the positions of the sorted WordNet ids.
    x_val : ImageIndex
        The 50 000 validation images (the document's test set).
    y_val : ndarray of int64

    Raises
    ------
    ValueError
        A class folder not named by a WordNet id (``n`` and 8 digits), or validation classes that differ from
        the training ones.
    """
    import re

    _options("imagenet", options, ())
    if not (folder / "train").is_dir():
        raise ValueError(f"{folder / 'train'}: not a folder")
    bad = [w for w in _subfolders(folder / "train") if not re.fullmatch(r"n\d{8}", w)]
    if bad:
        raise ValueError(f"{folder / 'train'}: class folders must be WordNet ids (n01440764, ...); found "
                         f"{', '.join(bad[:3])}")
    return _image_splits(folder)


def _load_hymenoptera(folder: Path, **options: Any) -> tuple[Any, Any, Any, Any]:
    """The ants and bees of PyTorch's transfer-learning tutorial (``train/{ants,bees}``, ``val/{ants,bees}``).

    Returns
    -------
    x_train : ImageIndex
        The 244 training images (of several sizes), decoded on demand.
    y_train : ndarray of int64
        Ants 0, bees 1.
    x_val : ImageIndex
        The 153 validation images.
    y_val : ndarray of int64

    Raises
    ------
    ValueError
        Class folders other than ``ants`` and ``bees``.
    """
    _options("hymenoptera", options, ())
    return _image_splits(folder, ["ants", "bees"])


def _load_cats_vs_dogs(folder: Path, *, test_fraction: float = 0.2, seed: int = 0,
                       **options: Any) -> tuple[Any, Any, Any, Any]:
    """Microsoft's PetImages (Kaggle's cats and dogs: ``Cat/*.jpg``, ``Dog/*.jpg``), indexed lazily.

    The distribution has 12 500 images a class and no train/test split: the split is drawn here, the same
    for a given ``seed``. Empty files (the distribution has a few) are left out; a few other files PIL cannot
    decode either (:meth:`ImageIndex.readable` drops them, reading every file's header).

    Parameters
    ----------
    test_fraction : float
        The share of each class held out for testing (default 0.2), in (0, 1).
    seed : int
        The seed of the split (``numpy.random.default_rng``).

    Returns
    -------
    x_train : ImageIndex
        Images of several sizes, decoded on demand; in file order within each class.
    y_train : ndarray of int64
        Cats 0, dogs 1.
    x_test : ImageIndex
    y_test : ndarray of int64

    Raises
    ------
    ValueError
        Class folders other than ``Cat`` and ``Dog``, or a ``test_fraction`` outside (0, 1).
    """
    import numpy as np

    _options("cats-vs-dogs", options, ("test_fraction", "seed"))
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) or not 0 < test_fraction < 1:
        raise ValueError(f"`test_fraction` must be a number in (0, 1); got {test_fraction!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative int; got {seed!r}")
    index = _image_folder(folder, ["Cat", "Dog"], skip_empty=True)
    rng = np.random.default_rng(int(seed))
    test = np.zeros(len(index), dtype=bool)
    for k in range(len(index.classes)):
        members = np.flatnonzero(index.labels == k)
        held = int(round(test_fraction * len(members)))
        test[rng.choice(members, size=held, replace=False)] = True
    train, held_out = index.subset(np.flatnonzero(~test)), index.subset(np.flatnonzero(test))
    return train, train.labels, held_out, held_out.labels


# --------------------------------------------------------------------------------------------------------
# ModelNet40: the resampled point clouds with normals
# --------------------------------------------------------------------------------------------------------

def _names_file(path: Path) -> list[str]:
    return [line.strip() for line in _read_text(path).splitlines() if line.strip()]


def _modelnet_split(folder: Path, listing: str, classes: dict[str, int], points: int, normals: bool):
    import numpy as np

    lpath = folder / listing
    shapes = _names_file(lpath)
    cols = 6 if normals else 3
    x = np.empty((len(shapes), points, cols), dtype=np.float32)
    y = np.empty(len(shapes), dtype=np.int64)
    for i, shape in enumerate(shapes):
        cls = shape.rpartition("_")[0]
        if cls not in classes:
            raise ValueError(f"{lpath}: line {i + 1}: {shape!r} is not '<class>_<number>' of a class of "
                             f"modelnet40_shape_names.txt")
        path = folder / cls / f"{shape}.txt"
        try:
            rows = np.loadtxt(path, delimiter=",", max_rows=points, dtype=np.float64, ndmin=2)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not rows of 6 comma-separated numbers x,y,z,nx,ny,nz ({exc})") from exc
        if rows.shape[1] != 6:
            raise ValueError(f"{path}: wrong shape: {rows.shape[1]} columns (expected x,y,z,nx,ny,nz)")
        if len(rows) < points:
            raise ValueError(f"{path}: truncated: {len(rows)} points, fewer than points={points}")
        x[i] = rows[:, :cols]
        y[i] = classes[cls]
    return x, y


def _load_modelnet40(folder: Path, *, points: int = 1024, normals: bool = False,
                     **options: Any) -> tuple[Any, Any, Any, Any]:
    """ModelNet40 as the resampled point clouds ``modelnet40_normal_resampled`` (10 000 points a shape).

    Parameters
    ----------
    points : int
        The first ``points`` rows of each shape's file (default 1024, the Point Cloud Transformer's input;
        the Set Transformer experiment of the Sinkformers chapter uses 5000). The rows are already a uniform
        resampling of the mesh.
    normals : bool
        Also return the normals (6 columns instead of 3).

    Returns
    -------
    x_train : ndarray of float32, shape (9843, points, 3)
        Coordinates x, y, z (then nx, ny, nz with ``normals``).
    y_train : ndarray of int64, shape (9843,)
        Positions in ``modelnet40_shape_names.txt`` (airplane 0, ...).
    x_test : ndarray of float32, shape (2468, points, 3)
    y_test : ndarray of int64, shape (2468,)

    Raises
    ------
    ValueError
        A listed shape of no declared class, or a file with other than 6 columns or fewer than ``points``
        rows.
    """
    _options("modelnet40", options, ("points", "normals"))
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ValueError(f"`points` must be a positive int; got {points!r}")
    if not isinstance(normals, bool):
        raise TypeError(f"`normals` must be a bool; got {normals!r}")
    names = _names_file(folder / "modelnet40_shape_names.txt")
    if len(set(names)) != len(names) or not names:
        raise ValueError(f"{folder / 'modelnet40_shape_names.txt'}: the class names must be distinct and not none")
    classes = {n: k for k, n in enumerate(names)}
    x_train, y_train = _modelnet_split(folder, "modelnet40_train.txt", classes, points, normals)
    x_test, y_test = _modelnet_split(folder, "modelnet40_test.txt", classes, points, normals)
    return x_train, y_train, x_test, y_test


# --------------------------------------------------------------------------------------------------------
# IMDb: the Large Movie Review Dataset of Maas et al.
# --------------------------------------------------------------------------------------------------------

def _imdb_split(folder: Path) -> tuple[list[str], Any]:
    import re

    import numpy as np

    texts, labels = [], []
    for label, polarity in enumerate(("neg", "pos")):
        sub = folder / polarity
        if not sub.is_dir():
            raise ValueError(f"{sub}: not a folder")
        named = []
        with os.scandir(sub) as it:
            names = [e.name for e in it]
        for name in names:
            m = re.fullmatch(r"(\d+)_(\d+)\.txt", name)
            if m is None:
                raise ValueError(f"{sub / name}: not a review file '<id>_<rating>.txt'")
            named.append((int(m.group(1)), name))
        for _, name in sorted(named):
            texts.append(_read_text(sub / name))
            labels.append(label)
    return texts, np.asarray(labels, dtype=np.int64)


def _load_imdb(folder: Path, **options: Any) -> tuple[list[str], Any, list[str], Any]:
    """The IMDb reviews of ``aclImdb/{train,test}/{neg,pos}/<id>_<rating>.txt`` (``unsup`` is not read).

    Returns
    -------
    texts_train : list of str, 25000
        The reviews as written (with their ``<br />`` tags): the negative ones then the positive ones, each
        in increasing id.
    y_train : ndarray of int64, shape (25000,)
        0 negative, 1 positive.
    texts_test : list of str, 25000
    y_test : ndarray of int64, shape (25000,)

    Raises
    ------
    ValueError
        A file not named ``<id>_<rating>.txt`` or not UTF-8.
    """
    _options("imdb", options, ())
    texts_train, y_train = _imdb_split(folder / "train")
    texts_test, y_test = _imdb_split(folder / "test")
    return texts_train, y_train, texts_test, y_test


# --------------------------------------------------------------------------------------------------------
# IWSLT'14 German-English as fairseq's prepare-iwslt14.sh leaves it
# --------------------------------------------------------------------------------------------------------

def _lines(path: Path) -> list[str]:
    text = _read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _load_iwslt14(folder: Path, *, split: str | None = None, **options: Any) -> Any:
    """IWSLT'14 German to English: the tokenized, lower-cased, BPE-segmented text files of fairseq's
    ``prepare-iwslt14.sh`` (``{train,valid,test}.{de,en}``, one sentence a line, ``@@`` ending a BPE piece).

    Parameters
    ----------
    split : {None, "train", "valid", "test"}
        None (default): every split.

    Returns
    -------
    dict or tuple
        ``{split: (German lines, English lines)}`` (about 160 000, 7 300 and 6 750 sentence pairs), or the
        one pair of lists asked for.

    Raises
    ------
    ValueError
        A split whose two files hold different numbers of lines, or a file not UTF-8.
    """
    splits = ("train", "valid", "test")
    _options("iwslt14-de-en", options, ("split",))
    _split_option(split, splits)
    out = {}
    for s in (splits if split is None else (split,)):
        de, en = _lines(folder / f"{s}.de"), _lines(folder / f"{s}.en")
        if len(de) != len(en):
            raise ValueError(f"{folder / (s + '.de')}: {len(de)} lines against {len(en)} in {s}.en "
                             f"(the files of a split are aligned line by line)")
        out[s] = (de, en)
    return out if split is None else out[split]


# --------------------------------------------------------------------------------------------------------
# Moby Dick from Project Gutenberg
# --------------------------------------------------------------------------------------------------------

_MOBY_FILES = "2701-0.txt | pg2701.txt | melville-moby_dick.txt"


def _gutenberg_body(path: Path, text: str) -> str:
    """The text between Project Gutenberg's ``*** START OF ...`` and ``*** END OF ...`` lines."""
    import re

    start = re.search(r"^\*{3} ?START OF (THE|THIS) PROJECT GUTENBERG E-?BOOK[^\n]*$", text, re.M | re.I)
    if start is None:
        raise ValueError(f"{path}: no '*** START OF THE PROJECT GUTENBERG EBOOK' line: not a Project "
                         f"Gutenberg plain-text file")
    end = re.search(r"^\*{3} ?END OF (THE|THIS) PROJECT GUTENBERG E-?BOOK", text[start.end():], re.M | re.I)
    if end is None:
        raise ValueError(f"{path}: truncated: no '*** END OF THE PROJECT GUTENBERG EBOOK' line")
    return text[start.end():start.end() + end.start()]


def _load_moby_dick(folder: Path, **options: Any) -> str:
    """Herman Melville's *Moby Dick* (Project Gutenberg eBook 2701) without Gutenberg's header and licence.

    The file is ``2701-0.txt`` (Gutenberg's UTF-8 file), else ``pg2701.txt`` (the same book as the
    ``.txt.utf-8`` download names it), else ``melville-moby_dick.txt`` (the copy of NLTK's Gutenberg corpus,
    which has no header: read as it is).

    Returns
    -------
    str
        The book, lines ending in ``\\n``, without surrounding blank lines.

    Raises
    ------
    ValueError
        A Gutenberg file without its start or end line, or not UTF-8.
    """
    _options("moby-dick", options, ())
    path = _file(folder, _MOBY_FILES)
    text = _read_text(path, encoding="utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    if path.name != "melville-moby_dick.txt":
        text = _gutenberg_body(path, text)
    return text.strip()


# --------------------------------------------------------------------------------------------------------
# GPT-2: the token embedding from model.safetensors and the byte-level BPE tokenizer
# --------------------------------------------------------------------------------------------------------

_SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}


def _safetensors_tensor(path: Path, names: tuple[str, ...]) -> tuple[str, Any]:
    """The first tensor of ``names`` in safetensors file ``path``, as float32.

    The format: an unsigned little-endian 64-bit header size N, N bytes of JSON mapping each tensor's name to
    its ``dtype``, ``shape`` and ``data_offsets`` [begin, end) (relative to the byte after the header), then
    the tensors' raw little-endian bytes. Only the one tensor is read.
    """
    import json
    import math

    import numpy as np

    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"{path}: truncated safetensors file ({len(head)} bytes, no header size)")
        n = int.from_bytes(head, "little")
        if n > size - 8 or n > 100_000_000:
            raise ValueError(f"{path}: bad header size {n} (the file has {size} bytes): not a safetensors file")
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: the safetensors header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the safetensors header is not a JSON object")
    name = next((t for t in names if t in header), None)
    if name is None:
        raise ValueError(f"{path}: no tensor {' or '.join(names)} (found {', '.join(sorted(header)[:5])} ...)")
    entry = header[name]
    try:
        dtype, shape, (begin, end) = entry["dtype"], [int(s) for s in entry["shape"]], entry["data_offsets"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: tensor {name}: its header entry lacks dtype, shape or data_offsets") from exc
    if dtype not in _SAFETENSORS_DTYPES:
        raise ValueError(f"{path}: tensor {name}: dtype {dtype} is not one of {', '.join(_SAFETENSORS_DTYPES)}")
    if len(shape) != 2:
        raise ValueError(f"{path}: tensor {name}: wrong shape {shape} (a token embedding is (vocab, d))")
    width = np.dtype(_SAFETENSORS_DTYPES[dtype]).itemsize
    if not (0 <= begin <= end) or end - begin != math.prod(shape) * width:
        raise ValueError(f"{path}: tensor {name}: data_offsets {[begin, end]} do not hold {shape} {dtype}")
    if 8 + n + end > size:
        raise ValueError(f"{path}: truncated: tensor {name} ends at byte {8 + n + end}, the file has {size}")
    raw = np.fromfile(path, dtype=_SAFETENSORS_DTYPES[dtype], count=math.prod(shape), offset=8 + n + begin)
    if dtype == "BF16":
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    return name, raw.reshape(shape).astype(np.float32, copy=False)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map of the 256 bytes to printable characters (the printable Latin-1 ones to themselves)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


# Unicode's White_Space property (what \s matches in GPT-2's pattern)
_WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                         "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")


def _char_class(c: str) -> str:
    """'s' whitespace, 'L' letter, 'N' number, 'o' other: the classes of GPT-2's pattern."""
    import unicodedata

    if c in _WHITE_SPACE:
        return "s"
    cat = unicodedata.category(c)[0]
    return cat if cat in "LN" else "o"


def _pretokenize(text: str) -> list[str]:
    """GPT-2's split of text into words before BPE: the matches, left to right, of the pattern
    ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``, scanned by hand
    (Python's ``re`` has no ``\\p{L}``)."""
    cls = [_char_class(c) for c in text]
    n, i, out = len(text), 0, []
    while i < n:
        c = cls[i]
        if text[i] == "'":
            hit = next((t for t in _CONTRACTIONS if text.startswith(t, i)), None)
            if hit is not None:
                out.append(hit)
                i += len(hit)
                continue
        j = i + 1 if text[i] == " " and i + 1 < n and cls[i + 1] != "s" else i
        if j < n and cls[j] != "s":          # ' ?\p{L}+', ' ?\p{N}+' or ' ?[^\s\p{L}\p{N}]+'
            k = j + 1
            while k < n and cls[k] == cls[j]:
                k += 1
            out.append(text[i:k])
            i = k
            continue
        k = i                                  # a run of whitespace
        while k < n and cls[k] == "s":
            k += 1
        if k < n and k - i > 1:                # '\s+(?!\S)': leave the last one for the next word
            k -= 1
        out.append(text[i:k])
        i = k
    return out


class BPETokenizer:
    """GPT-2's byte-level byte-pair-encoding tokenizer, from ``vocab.json`` and ``merges.txt``.

    ``tokenizer(text)`` (or :meth:`encode`) splits the text into words as GPT-2 does, maps each word's UTF-8
    bytes to GPT-2's printable characters, merges adjacent pieces by the rank of their pair in ``merges``
    until no ranked pair is left, and returns the pieces' ids in ``vocab``.

    Parameters
    ----------
    vocab : dict of str to int
        The pieces and their ids.
    merges : sequence of (str, str)
        The merges, first merged first.

    Raises
    ------
    ValueError
        When ``vocab`` lacks one of the 256 byte pieces or the result of a merge, or maps two pieces to
        one id.
    """

    def __init__(self, vocab: dict[str, int], merges) -> None:
        self.vocab = dict(vocab)
        self.merges = tuple((str(a), str(b)) for a, b in merges)
        if len(set(self.vocab.values())) != len(self.vocab):
            raise ValueError("`vocab` maps two pieces to one id")
        self._byte = _bytes_to_unicode()
        lost = [c for c in self._byte.values() if c not in self.vocab]
        if lost:
            raise ValueError(f"`vocab` lacks {len(lost)} of the 256 byte pieces (e.g. {lost[0]!r})")
        for a, b in self.merges:
            if a + b not in self.vocab:
                raise ValueError(f"`vocab` lacks {a + b!r}, the result of the merge {a!r} {b!r}")
        self._rank = {pair: r for r, pair in enumerate(self.merges)}
        self._decode = {i: t for t, i in self.vocab.items()}
        self._unbyte = {c: b for b, c in self._byte.items()}
        self._cache: dict[str, list[int]] = {}

    def _bpe(self, word: str) -> list[int]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        parts = [self._byte[b] for b in word.encode("utf-8")]
        while len(parts) > 1:
            ranks = [self._rank.get(p, None) for p in zip(parts, parts[1:])]
            best = min((r for r in ranks if r is not None), default=None)
            if best is None:
                break
            a, b = self.merges[best]
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        ids = [self.vocab[p] for p in parts]
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (no start or end token is added)."""
        if not isinstance(text, str):
            raise TypeError(f"`text` must be a str; got {type(text).__name__}")
        return [i for word in _pretokenize(text) for i in self._bpe(word)]

    __call__ = encode

    def decode(self, ids) -> str:
        """The text of token ids ``ids`` (the inverse of :meth:`encode`)."""
        chars = "".join(self._decode[int(i)] for i in ids)
        return bytes(self._unbyte[c] for c in chars).decode("utf-8", errors="replace")

    @classmethod
    def from_files(cls, vocab_json: Path, merges_txt: Path) -> BPETokenizer:
        """The tokenizer of Hugging Face's ``vocab.json`` and ``merges.txt`` (a ``#version`` line, then one
        merge ``a b`` a line).

        Raises
        ------
        ValueError
            A vocabulary that is not a JSON object of ids, or a merges line that is not two pieces.
        """
        import json

        try:
            vocab = json.loads(_read_text(vocab_json))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{vocab_json}: not JSON ({exc})") from exc
        if not isinstance(vocab, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                  for v in vocab.values()):
            raise ValueError(f"{vocab_json}: not a JSON object mapping each piece to its integer id")
        merges = []
        for lineno, line in enumerate(_read_text(merges_txt).split("\n"), 1):
            line = line.rstrip("\r")
            if not line or (lineno == 1 and line.startswith("#version")):
                continue
            pair = line.split(" ")
            if len(pair) != 2 or not all(pair):
                raise ValueError(f"{merges_txt}: line {lineno}: {line!r} is not two pieces separated by a space")
            merges.append(tuple(pair))
        try:
            return cls(vocab, merges)
        except ValueError as exc:
            raise ValueError(f"{vocab_json} and {merges_txt}: {exc}") from exc


def _load_gpt2(folder: Path, **options: Any) -> tuple[Any, BPETokenizer]:
    """GPT-2's token embedding and tokenizer from Hugging Face's files (``gpt2-large``: d = 1280).

    The embedding is the tensor ``wte.weight`` (or ``transformer.wte.weight``) of ``model.safetensors``,
    read by the safetensors layout with NumPy alone; the tokenizer is :class:`BPETokenizer` of
    ``vocab.json`` and ``merges.txt``.

    Returns
    -------
    token_embedding : ndarray of float32, shape (50257, 1280)
        Row ``i`` embeds token ``i``.
    encode : BPETokenizer
        ``encode(text) -> list[int]``.

    Raises
    ------
    ValueError
        A file not in its format (see :func:`_safetensors_tensor`, :meth:`BPETokenizer.from_files`), or
        token ids beyond the embedding's rows.
    """
    _options("gpt2", options, ())
    encode = BPETokenizer.from_files(folder / "vocab.json", folder / "merges.txt")
    path = folder / "model.safetensors"
    name, emb = _safetensors_tensor(path, ("wte.weight", "transformer.wte.weight"))
    top = max(encode.vocab.values())
    if top >= len(emb):
        raise ValueError(f"{path}: tensor {name} has {len(emb)} rows, fewer than the {top + 1} ids of vocab.json")
    return emb, encode


# --------------------------------------------------------------------------------------------------------
# The declarations
# --------------------------------------------------------------------------------------------------------

_declare("mnist", "MNIST handwritten digits (LeCun, Cortes and Burges)", "mnist",
         tuple(f"{f} | {f}.gz" for f in _MNIST_FILES),
         "http://yann.lecun.com/exdb/mnist/ (mirror: https://ossci-datasets.s3.amazonaws.com/mnist/)",
         _load_mnist)
_declare("cifar-10", "CIFAR-10, python version (Krizhevsky, 2009)", "cifar-10-batches-py", _CIFAR10_FILES,
         "https://www.cs.toronto.edu/~kriz/cifar.html (cifar-10-python.tar.gz)", _load_cifar10)
_declare("cifar-100", "CIFAR-100, python version (Krizhevsky, 2009)", "cifar-100-python", ("train", "test"),
         "https://www.cs.toronto.edu/~kriz/cifar.html (cifar-100-python.tar.gz)", _load_cifar100)
_declare("imagenet", "ImageNet ILSVRC-2012 classification, ImageFolder layout", "imagenet",
         ("train/n01440764", "val/n01440764"),
         "https://image-net.org/download.php (registration; ILSVRC2012_img_train.tar and ILSVRC2012_img_val.tar, "
         "the validation images sorted into one folder per class)", _load_imagenet)
_declare("hymenoptera", "ants and bees of PyTorch's transfer-learning tutorial", "hymenoptera_data",
         ("train/ants", "train/bees", "val/ants", "val/bees"),
         "https://download.pytorch.org/tutorial/hymenoptera_data.zip", _load_hymenoptera)
_declare("cats-vs-dogs", "Microsoft's PetImages (Kaggle Dogs vs. Cats)", "PetImages", ("Cat", "Dog"),
         "https://www.microsoft.com/en-us/download/details.aspx?id=54765 (kagglecatsanddogs_*.zip)",
         _load_cats_vs_dogs)
_declare("modelnet40", "ModelNet40 resampled point clouds with normals (Wu et al., 2015)",
         "modelnet40_normal_resampled",
         ("modelnet40_shape_names.txt", "modelnet40_train.txt", "modelnet40_test.txt"),
         "https://shapenet.cs.stanford.edu/media/modelnet40_normal_resampled.zip (the PointNet++ release)",
         _load_modelnet40)
_declare("imdb", "IMDb Large Movie Review Dataset (Maas et al., 2011)", "aclImdb",
         ("train/neg", "train/pos", "test/neg", "test/pos"),
         "https://ai.stanford.edu/~amaas/data/sentiment/ (aclImdb_v1.tar.gz)", _load_imdb)
_declare("iwslt14-de-en", "IWSLT'14 German-English, as fairseq's prepare-iwslt14.sh writes it",
         "iwslt14.tokenized.de-en", tuple(f"{s}.{l}" for s in ("train", "valid", "test") for l in ("de", "en")),
         "https://github.com/facebookresearch/fairseq/tree/main/examples/translation (prepare-iwslt14.sh; "
         "the talks of https://wit3.fbk.eu/2014-01)", _load_iwslt14)
_declare("jft-300m", "JFT-300M (Sun et al., 2017)", "jft-300m", (),
         "not public: Google-internal, distributed to no one", None)
_declare("moby-dick", "Moby Dick by Herman Melville, Project Gutenberg eBook 2701", "gutenberg", (_MOBY_FILES,),
         "https://www.gutenberg.org/ebooks/2701 (Plain Text UTF-8)", _load_moby_dick)
_declare("gpt2", "GPT-2 large (Radford et al., 2019), Hugging Face checkpoint", "gpt2-large",
         ("vocab.json", "merges.txt", "model.safetensors"),
         "https://huggingface.co/openai-community/gpt2-large (vocab.json, merges.txt, model.safetensors)",
         _load_gpt2)
