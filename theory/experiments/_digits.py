"""scikit-learn's digits (1797 grey-level 8 x 8 images, 10 classes), the real data set of the experiments that
train on digits: ``scaling`` Figure 9, ``implicit-reg`` Table 1 (the digits rows), ``resnet-node`` Figures 3(a)
and 3(c), and the digits proxies of ``momentum``, ``sinkformers`` and ``topk``.

The images ship inside scikit-learn's installation (``sklearn/datasets/data/digits.csv.gz``: one row per image,
64 pixel values 0 ... 16 then the label), so no download is needed; scikit-learn is in the ``gpu``, ``oracle``
and ``bench`` extras. This module reads that file itself, without importing scikit-learn: importing it loads
scikit-learn's own copy of the OpenMP runtime next to the one Numba's ``omp`` threading layer and PyTorch
share, and two OpenMP runtimes in one process is a known source of crashes in threaded code. Each experiment
splits and standardises the images in its own way (its module says how); this module only loads them and
checks what it read: the shape, integer pixel values in 0 ... 16 and every label in 0 ... 9.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
from pathlib import Path

import numpy as np

__all__ = ["N_CLASSES", "N_IMAGES", "N_PIXELS", "load_digits_arrays", "sklearn_available"]

N_IMAGES, N_PIXELS, N_CLASSES = 1797, 64, 10
MAX_PIXEL = 16

_DATA_FILE = Path("datasets") / "data" / "digits.csv.gz"


def _data_file() -> Path | None:
    """The digits file inside scikit-learn's installation, found without importing scikit-learn (None without)."""
    try:
        spec = importlib.util.find_spec("sklearn")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for root in spec.submodule_search_locations or ():
        path = Path(root) / _DATA_FILE
        if path.is_file():
            return path
    return None


def sklearn_available() -> bool:
    """Whether scikit-learn's installation, which ships the digits, holds the digits file."""
    return _data_file() is not None


def parse_digits(text: str, source: str = "the digits file"):
    """``(X, y)`` from the CSV text of the digits file, checked: 1797 rows of 64 integer pixel values in
    0 ... 16 and a label in 0 ... 9. Raises ``ValueError`` naming ``source`` on anything else."""
    try:
        data = np.loadtxt(text.splitlines(), delimiter=",", dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"{source} is not a CSV table of numbers: {exc}") from None
    if data.shape != (N_IMAGES, N_PIXELS + 1):
        raise ValueError(f"{source} must hold {N_IMAGES} rows of {N_PIXELS + 1} values; got shape {data.shape}")
    if not np.array_equal(data, np.rint(data)):
        raise ValueError(f"{source} must hold integers only")
    X, y = data[:, :N_PIXELS], data[:, N_PIXELS].astype(np.int64)
    if X.min() < 0 or X.max() > MAX_PIXEL:
        raise ValueError(f"{source}: pixel values must lie in 0 ... {MAX_PIXEL}; got {X.min():g} ... {X.max():g}")
    if y.min() < 0 or y.max() >= N_CLASSES:
        raise ValueError(f"{source}: labels must lie in 0 ... {N_CLASSES - 1}; got {y.min()} ... {y.max()}")
    return X, y


@functools.lru_cache(maxsize=1)
def _read(path: str):
    with gzip.open(path, "rt", encoding="ascii") as f:
        X, y = parse_digits(f.read(), source=path)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def load_digits_arrays(where: str):
    """``(X, y)``: the images as a float64 array (1797, 64) of pixel values 0 ... 16 (row-major 8 x 8) and the
    labels as int64, the same arrays as ``sklearn.datasets.load_digits(return_X_y=True)``. Fresh copies, so a
    caller may write to them.

    Raises ``ModuleNotFoundError`` (an ``ImportError``) naming ``where``, the experiment that asked, when
    scikit-learn is not installed, and ``ValueError`` when its digits file is not what it should be.
    """
    path = _data_file()
    if path is None:
        raise ModuleNotFoundError(f"{where} needs scikit-learn, which ships the digits data set "
                                  "(pip install 'theory[gpu]')")
    X, y = _read(str(path))
    return X.copy(), y.copy()
