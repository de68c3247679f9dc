"""Implementations with planted bugs, for the oracle's tests (each must fail with a readable report)."""

import numpy as np


def isotonic_no_cascade(y, w, increasing=True):
    """Pool adjacent violators that merges a violating block with its left neighbour once and stops
    there, one merge too early (the cascade backwards is missing)."""
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    sign = 1.0 if increasing else -1.0
    values, weights, counts = [], [], []
    for yi, wi in zip(sign * y, w):
        values.append(yi)
        weights.append(wi)
        counts.append(1)
        if len(values) >= 2 and values[-2] > values[-1]:  # should be `while`
            v2, w2, c2 = values.pop(), weights.pop(), counts.pop()
            v1, w1, c1 = values.pop(), weights.pop(), counts.pop()
            values.append((v1 * w1 + v2 * w2) / (w1 + w2))
            weights.append(w1 + w2)
            counts.append(c1 + c2)
    return sign * np.repeat(values, counts)


def isotonic_wrong_shape(y, w, increasing=True):
    return np.zeros(np.size(y) + 1)


def isotonic_nan(y, w, increasing=True):
    from theory.isotonic import isotonic_regression

    x = isotonic_regression(y, w, increasing=increasing)[0].copy()
    if x.size > 50:
        x[3] = np.nan
    return x


def isotonic_strings(y, w, increasing=True):
    return np.array(["a"] * np.size(y))


def isotonic_raises(y, w, increasing=True):
    if np.size(y) == 1:
        raise RuntimeError("n = 1 not supported")
    from theory.isotonic import isotonic_regression

    return isotonic_regression(y, w, increasing=increasing)[0]
