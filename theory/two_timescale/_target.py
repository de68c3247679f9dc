"""Piecewise-constant targets of Definition 6.1 (thesis (Marion), chapter 6).

A target of the class F_{n, Delta v, Delta f, M} is given by its interior jumps
0 < v_1 < ... < v_{n-1} < 1 and its values f*_0, ..., f*_{n-1}: f* = f*_i on (v_i, v_{i+1}) with
v_0 = 0, v_n = 1. The class asks v_i - v_{i-1} >= Delta v, |f*_i - f*_{i-1}| >= Delta f and |f*_i| <= M.
"""

from __future__ import annotations

import numpy as np

from theory._validation import NonFiniteError, as_float_array

__all__ = ["validate_target", "target_constants", "evaluate_target", "THESIS_TARGET"]

_PKG = "theory.two_timescale."

#: the target of the chapter's experiments (App. 6.C): 1 on [0, .2], [.35, .5], [.65, .8], 2 on [.5, .65], 4 elsewhere
THESIS_TARGET = ((0.2, 0.35, 0.5, 0.65, 0.8), (1.0, 4.0, 1.0, 2.0, 1.0, 4.0))


def _jumps(v, func, name="v"):
    """``v`` as a float64 array of interior jumps: 1-d, finite, strictly increasing inside (0, 1) (may be empty)."""
    v = as_float_array(v, name, func=func, ndim=1)
    if v.size and (v[0] <= 0.0 or v[-1] >= 1.0 or np.any(np.diff(v) <= 0.0)):
        raise ValueError(f"`{name}` of {func} must be strictly increasing inside (0, 1); got {v.tolist()}.")
    return v


def _target(v, f, func):
    """(v, f) as float64 arrays after checking that they describe a piecewise-constant target (no copy of
    float64 input)."""
    v = as_float_array(v, "v", func=func, ndim=1)
    f = as_float_array(f, "f", func=func, ndim=1, min_size=1)
    if f.shape[0] != v.shape[0] + 1:
        raise ValueError(f"`f` of {func} must hold one value more than `v` (values of the {v.shape[0] + 1} pieces); "
                         f"got {f.shape[0]} values for {v.shape[0]} jumps.")
    _jumps(v, func)
    if f.size > 1 and np.any(np.diff(f) == 0.0):
        raise ValueError(f"`f` of {func} must change value at every jump (f*_i != f*_(i-1)); got {f.tolist()}.")
    return v, f


def validate_target(v, f):
    r"""Check that (v, f) describe a piecewise-constant target of Definition 6.1, and return them as float64
    arrays.

    :math:`f^* = f^*_i` on :math:`(v_i, v_{i+1})`, i = 0..n-1, with :math:`v_0 = 0`, :math:`v_n = 1`.

    Parameters
    ----------
    v : array_like, shape (n - 1,)
        Interior jumps, finite, strictly increasing inside (0, 1); empty for a constant target.
    f : array_like, shape (n,)
        Values on the n pieces, finite, two consecutive values never equal (each v_i is a jump).

    Returns
    -------
    v : ndarray, shape (n - 1,)
        The jumps, float64.
    f : ndarray, shape (n,)
        The values, float64.

    Raises
    ------
    TypeError
        ``v`` or ``f`` not a real array.
    ValueError
        ``v`` not 1-d, not finite or not strictly increasing inside (0, 1); ``f`` not 1-d, not finite, not of
        length len(v) + 1, or equal on both sides of a jump.
    """
    return _target(v, f, _PKG + "validate_target")


def target_constants(v, f):
    r"""The constants (n, Delta v, Delta f, M) of Definition 6.1 for the target (v, f):
    n pieces, :math:`\Delta v = \min_i (v_{i+1} - v_i)` (with v_0 = 0, v_n = 1),
    :math:`\Delta f = \min_i |f^*_i - f^*_{i-1}|` and :math:`M = \max(1, \max_i |f^*_i|)` (the class asks M >= 1).

    Parameters
    ----------
    v : array_like, shape (n - 1,)
        Interior jumps, at least one (Delta f is a minimum over the jumps), strictly increasing inside (0, 1).
    f : array_like, shape (n,)
        Values on the pieces, finite, changing at every jump.

    Returns
    -------
    n : int
        Number of pieces, >= 2.
    dv : float
        Shortest piece Delta v.
    df : float
        Smallest jump Delta f.
    M : float
        max(1, max ``|f*|``).

    Raises
    ------
    TypeError
        ``v`` or ``f`` not a real array.
    ValueError
        An invalid target (see :func:`validate_target`), or no jump.
    NonFiniteError
        A jump ``|f*_i - f*_(i-1)|`` overflows float64.
    """
    func = _PKG + "target_constants"
    v, f = _target(v, f, func)
    if v.size < 1:
        raise ValueError(f"`v` of {func} must hold at least one jump (Delta f is the smallest jump); got none.")
    edges = np.concatenate(([0.0], v, [1.0]))
    dv = float(np.min(np.diff(edges)))
    with np.errstate(over="ignore"):
        df = float(np.min(np.abs(np.diff(f))))
    if not np.isfinite(df):
        raise NonFiniteError(f"{func}: the smallest jump of `f` overflowed float64.")
    return int(f.size), dv, df, max(1.0, float(np.max(np.abs(f))))


def evaluate_target(x, v, f):
    r"""The target :math:`f^*(x)` at the points x: :math:`f^*_i` for :math:`v_i < x \le v_{i+1}` (the value at
    a jump is the left one; it does not enter any integral).

    Parameters
    ----------
    x : array_like
        Points, finite, any shape.
    v : array_like, shape (n - 1,)
        Interior jumps, strictly increasing inside (0, 1).
    f : array_like, shape (n,)
        Values on the pieces.

    Returns
    -------
    float or ndarray
        f*(x), float64, of the shape of ``x`` (a NumPy float for a scalar).

    Raises
    ------
    TypeError
        An argument that is not a real array.
    ValueError
        NaN or inf in ``x``, or an invalid target (see :func:`validate_target`).
    """
    func = _PKG + "evaluate_target"
    v, f = _target(v, f, func)
    x_in = x
    x = as_float_array(x, "x", func=func).reshape(np.asarray(x_in).shape)
    return f[np.searchsorted(v, x, side="left")]
