"""The ``axis`` argument of the :mod:`theory.topk` operators.

Every operator solves one problem per row along the last axis (NumPy's convention). ``axis=a`` moves
axis ``a`` to the end (:func:`numpy.moveaxis`), runs the last-axis code on that view and moves the
result back, so a result along any axis equals the last-axis result on the moved array bit for bit,
and ``axis=-1`` (the default) runs the last-axis code unchanged.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.exceptions import AxisError

from .._validation import as_float_array, plain_repr

__all__ = ["resolve", "to_last", "vector_to_last", "from_last"]


def resolve(x, axis, func):
    """Check ``axis`` against ``x``; return None where the last-axis code applies unchanged (``axis`` is
    the last axis of x, or x has no axes to count: its own validation then reports it), otherwise the
    axis as an index in 0..ndim-2.

    Raises TypeError naming ``axis`` when it is not an integer (a bool included) and
    :class:`numpy.exceptions.AxisError` (a ValueError) naming it when it is outside [-ndim, ndim - 1]."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"`axis` of {func} must be an integer; got {plain_repr(axis)}.")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"`axis` of {func} must be an integer; got {plain_repr(axis)}.") from None
    if axis == -1:
        return None
    try:
        ndim = np.ndim(x)
    except Exception:  # ragged input and the like: the operator's validation of `x` reports it
        return None
    if ndim == 0:  # a 0-D `x` is refused by the operator's validation, with its own message
        return None
    if not -ndim <= axis < ndim:
        raise AxisError(f"`axis` of {func} must be in [-{ndim}, {ndim - 1}] for `x` with {ndim} dimension(s); "
                        f"got {axis}.")
    axis %= ndim
    return None if axis == ndim - 1 else axis


def to_last(x, axis):
    """``x`` with axis ``axis`` moved to the end (a view where x is an array)."""
    return np.moveaxis(np.asarray(x), axis, -1)


def vector_to_last(v, name, x, axis, func):
    """A tangent or cotangent ``v`` checked to have the shape of ``x`` (error naming ``name`` with x's
    own shape), then moved like x."""
    v = as_float_array(v, name, func=func, shape=np.shape(x))
    return np.moveaxis(v, axis, -1)


def from_last(y, axis):
    """The inverse move of :func:`to_last`, as a C-contiguous array."""
    return np.ascontiguousarray(np.moveaxis(y, -1, axis))
