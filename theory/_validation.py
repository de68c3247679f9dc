"""Input validation shared by every public function.

Every message follows one template: which argument, of which function, must be what, and what
arrived, e.g. "`theta` of theory.resnet.forward must have shape (N, 3, 3) with d = 3 from `x0`;
got (5, 3, 4)." A wrong kind raises :class:`TypeError`; a wrong value raises :class:`ValueError`.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ._errors import NonFiniteError
from ._finite import all_finite

__all__ = [
    "NonFiniteError",
    "as_float_array",
    "check_choice",
    "check_finite_output",
    "check_int",
    "check_interval",
    "plain_repr",
]


def plain_repr(v) -> str:
    """repr of ``v`` with NumPy scalars shown as the Python numbers they hold (``1.0``, not
    ``np.float64(1.0)``), so that messages print plain numbers."""
    if isinstance(v, np.generic):
        try:
            v = v.item()
        except Exception:  # pragma: no cover - exotic scalar types
            pass
    return repr(v)


def _where(func: str | None) -> str:
    return f" of {func}" if func else ""


def as_float_array(x, name, *, func=None, ndim=None, shape=None, finite=True, min_size=None, copy=False):
    """Return ``x`` as a float64 C-contiguous array, or raise naming ``name``.

    Parameters
    ----------
    x : array_like
        The user's input, never modified: it is converted (a new array) only when its dtype or
        layout differ, and otherwise passed through for reading. Callers that write into the
        result ask for ``copy=True``.
    name : str
        Argument name used in error messages.
    func : str, optional
        Public function name used in error messages.
    ndim : int or tuple of int, optional
        Accepted numbers of dimensions.
    shape : tuple, optional
        Expected shape; ``None`` entries are free.
    finite : bool
        Reject NaN and infinities.
    min_size : int, optional
        Smallest accepted number of elements.
    copy : bool
        Always return a new array.
    """
    where = _where(func)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}`{where} must be a real array; got {type(x).__name__} ({exc}).") from None
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}`{where} must be a real numeric array; got dtype {arr.dtype}.")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"`{name}`{where} must have {want} dimension(s); got shape {arr.shape}.")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise ValueError(f"`{name}`{where} must have shape {want}; got {arr.shape}.")
    if min_size is not None and arr.size < min_size:
        raise ValueError(f"`{name}`{where} must have at least {min_size} element(s); got shape {arr.shape}.")
    out = np.ascontiguousarray(arr, np.float64)
    # a read-only array would make Numba compile (and cache) a second specialisation of every
    # kernel, with possibly different rounding in BLAS calls: kernels only ever see writeable arrays
    if copy or not out.flags.writeable:
        out = out.copy()
    if finite and not all_finite(out):
        raise ValueError(f"`{name}`{where} must be finite; got NaN or inf.")
    return out


def check_int(k, name, *, func=None, minimum=None, maximum=None):
    """Return ``k`` as a Python int, or raise naming ``name``."""
    where = _where(func)
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(f"`{name}`{where} must be an integer; got {plain_repr(k)}.")
    if not isinstance(k, (numbers.Integral, np.integer)):
        try:
            k = operator.index(k)
        except TypeError:
            raise TypeError(f"`{name}`{where} must be an integer; got {plain_repr(k)}.") from None
    k = int(k)
    if minimum is not None and k < minimum:
        raise ValueError(f"`{name}`{where} must be >= {minimum}; got {k}.")
    if maximum is not None and k > maximum:
        raise ValueError(f"`{name}`{where} must be <= {maximum}; got {k}.")
    return k


def check_interval(v, name, low, high, *, func=None, closed="neither"):
    """Return ``v`` as a float inside the interval (``closed`` in 'neither', 'left', 'right', 'both')."""
    where = _where(func)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"`{name}`{where} must be a real number; got {plain_repr(v)}.")
    v = float(v)
    left = "[" if closed in ("left", "both") else "("
    right = "]" if closed in ("right", "both") else ")"
    ok_low = v >= low if left == "[" else v > low
    ok_high = v <= high if right == "]" else v < high
    if not (np.isfinite(v) or (np.isinf(high) and v == high and right == "]")) or not (ok_low and ok_high):
        raise ValueError(f"`{name}`{where} must lie in {left}{low}, {high}{right}; got {v}.")
    return v


def check_choice(s, name, choices, *, func=None):
    """Return ``s`` if it is one of ``choices`` (strings), else raise naming ``name``."""
    where = _where(func)
    if not isinstance(s, str):
        raise TypeError(f"`{name}`{where} must be a string, one of {sorted(choices)}; got {plain_repr(s)}.")
    if s not in choices:
        raise ValueError(f"`{name}`{where} must be one of {sorted(choices)}; got {plain_repr(s)}.")
    return s


def check_finite_output(arr, what, *, func=None, hint=""):
    """Raise :class:`NonFiniteError` when a kernel produced NaN or inf."""
    if not all_finite(arr):
        extra = f" {hint}" if hint else ""
        raise NonFiniteError(f"{func or 'theory'}: {what} overflowed to NaN or inf.{extra}")
    return arr
