"""scikit-learn's digits (1797 grey-level 8 x 8 images, 10 classes), the real data set of three experiments:
``scaling`` Figure 9, ``implicit-reg`` Table 1 (the digits rows) and ``resnet-node`` Figure 3(c).

The images ship inside scikit-learn, so no download is needed; scikit-learn is in the ``gpu``, ``oracle`` and
``bench`` extras. Each experiment splits and standardises the images in its own way (its module says how);
this module only loads them, with one error where scikit-learn is missing.
"""

from __future__ import annotations

import importlib.util

import numpy as np

__all__ = ["N_CLASSES", "N_IMAGES", "N_PIXELS", "load_digits_arrays", "sklearn_available"]

N_IMAGES, N_PIXELS, N_CLASSES = 1797, 64, 10


def sklearn_available() -> bool:
    """Whether scikit-learn (which ships the digits) can be imported."""
    return importlib.util.find_spec("sklearn") is not None


def load_digits_arrays(where: str):
    """``(X, y)``: the images as a float64 array (1797, 64) of pixel values 0 ... 16 and the labels as int64.

    Raises ``ModuleNotFoundError`` (an ``ImportError``) naming ``where``, the experiment that asked, when
    scikit-learn is not installed.
    """
    if not sklearn_available():
        raise ModuleNotFoundError(f"{where} needs scikit-learn, which ships the digits data set "
                                  "(pip install 'theory[gpu]')")
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
