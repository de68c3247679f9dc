"""Piecewise-constant targets of Definition 6.1 (thesis (Marion), chapter 6).

A target of the class F_{n, Delta v, Delta f, M} is given by its interior jumps
0 < v_1 < ... < v_{n-1} < 1 and its values f*_0, ..., f*_{n-1}: f* = f*_i on (v_i, v_{i+1}) with
v_0 = 0, v_n = 1. The class asks v_i - v_{i-1} >= Delta v, |f*_i - f*_{i-1}| >= Delta f and |f*_i| <= M.
"""

from __future__ import annotations

import numpy as np

from theory._validation import as_float_array

__all__ = ["validate_target", "target_constants", "evaluate_target", "THESIS_TARGET"]

#: the target of the chapter's experiments (App. 6.C): 1 on [0, .2], [.35, .5], [.65, .8], 2 on [.5, .65], 4 elsewhere
THESIS_TARGET = ((0.2, 0.35, 0.5, 0.65, 0.8), (1.0, 4.0, 1.0, 2.0, 1.0, 4.0))


def validate_target(v, f, *, func=None):
    """Return (v, f) as float arrays after checking that they describe a piecewise-constant target.

    Raises ValueError naming ``v`` (not strictly increasing inside (0, 1)) or ``f`` (not one value more
    than jumps, or two consecutive equal values: that point would not be a jump of f*).
    """
    v = as_float_array(v, "v", func=func, ndim=1)
    f = as_float_array(f, "f", func=func, ndim=1, min_size=1)
    where = f" of {func}" if func else ""
    if f.shape[0] != v.shape[0] + 1:
        raise ValueError(f"`f`{where} must hold one value more than `v` (values of the {v.shape[0] + 1} pieces); "
                         f"got {f.shape[0]} values for {v.shape[0]} jumps.")
    if v.size and (v[0] <= 0.0 or v[-1] >= 1.0 or np.any(np.diff(v) <= 0.0)):
        raise ValueError(f"`v`{where} must be strictly increasing inside (0, 1); got {v.tolist()}.")
    if f.size > 1 and np.any(np.diff(f) == 0.0):
        raise ValueError(f"`f`{where} must change value at every jump (f*_i != f*_(i-1)); got {f.tolist()}.")
    return v, f


def target_constants(v, f):
    """(n, Delta v, Delta f, M) of Definition 6.1: pieces, smallest piece length, smallest jump, ``max |f*|``."""
    v, f = validate_target(v, f, func="target_constants")
    edges = np.concatenate(([0.0], v, [1.0]))
    dv = float(np.min(np.diff(edges)))
    df = float(np.min(np.abs(np.diff(f)))) if f.size > 1 else float("inf")
    return int(f.size), dv, df, max(1.0, float(np.max(np.abs(f))))


def evaluate_target(x, v, f):
    """f*(x) (right-continuous at the jumps; the value at a jump does not enter any integral)."""
    v, f = validate_target(v, f, func="evaluate_target")
    x = as_float_array(x, "x", func="evaluate_target")
    return f[np.searchsorted(v, x, side="left")]
