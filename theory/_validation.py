"""Input validation shared by every public function.

Every message follows one template: which argument, of which function, must be what, and what
arrived, e.g. "`theta` of theory.resnet.forward must have shape (N, 3, 3) with d = 3 from `x0`;
got (5, 3, 4)." A wrong kind raises :class:`TypeError`; a wrong value raises :class:`ValueError`.
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from ._errors import NonFiniteError
from ._finite import all_finite

__all__ = [
    "MAX_BYTES",
    "MAX_WORK",
    "NonFiniteError",
    "as_float_array",
    "as_generator",
    "check_memory",
    "check_work",
    "check_bool",
    "check_choice",
    "check_finite_output",
    "finite_value",
    "check_int",
    "check_size",
    "check_interval",
    "plain",
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


def plain(v):
    """``v`` with NumPy scalars turned into Python numbers (``.item()``), so that a message formats
    ``np.float64(0.5)`` as ``0.5``; anything else is returned unchanged."""
    return v.item() if isinstance(v, np.generic) else v


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
        raise TypeError(f"`{name}`{where} must be an integer; got {plain(k)!r}.")
    if not isinstance(k, (numbers.Integral, np.integer)):
        try:
            k = operator.index(k)
        except TypeError:
            raise TypeError(f"`{name}`{where} must be an integer; got {plain(k)!r}.") from None
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
        raise TypeError(f"`{name}`{where} must be a real number; got {plain(v)!r}.")
    try:
        v = float(v)
    except OverflowError:  # a Python int beyond the float range
        raise ValueError(f"`{name}`{where} must lie in the float64 range; got an integer of {len(str(v))} digits.") from None
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
        raise TypeError(f"`{name}`{where} must be a string, one of {sorted(choices)}; got {plain(s)!r}.")
    if s not in choices:
        raise ValueError(f"`{name}`{where} must be one of {sorted(choices)}; got {plain(s)!r}.")
    return s


def check_finite_output(arr, what, *, func=None, hint=""):
    """Raise :class:`~theory.NonFiniteError` when a kernel produced NaN or inf."""
    if not all_finite(arr):
        extra = f" {hint}" if hint else ""
        raise NonFiniteError(f"{func or 'theory'}: {what} overflowed to NaN or inf.{extra}")
    return arr


def finite_value(compute, *, func=None, what="the result", hint=""):
    """``compute()``, a closed form in Python floats, or :class:`~theory.NonFiniteError` when it leaves the
    float64 range: an OverflowError or ZeroDivisionError of Python's arithmetic, or an inf or NaN result."""
    try:
        out = compute()
    except (OverflowError, ZeroDivisionError):
        out = math.inf
    if not math.isfinite(out):
        extra = f"; {hint}" if hint else ""
        raise NonFiniteError(f"{func or 'theory'}: {what} overflowed to inf or NaN in float64{extra}.")
    return out


# ------------------------------------------------------------------------------------ rng and limits

#: Largest block of memory one call may ask for, in bytes: a fixed cap of 16 GiB (not a fraction of
#: the free memory, so that a call is refused or accepted alike on every machine). A call that would
#: need more is refused before it allocates, naming the argument and the memory it would need.
MAX_BYTES = 2**34

#: Default work budget of one call, in floating-point operations (multiply-adds, or right-hand-side
#: evaluations times their cost): 10**11, about a minute of one core. Functions whose cost is not
#: fixed by the size of their output estimate it up front and refuse a larger one, unless the caller
#: raises the budget with their ``max_work`` keyword.
MAX_WORK = 10**11


def as_generator(rng, name="rng", func=None):
    """``rng`` as a :class:`numpy.random.Generator`, with NumPy's convention.

    ``None`` gives fresh OS entropy; an int >= 0 (or a :class:`numpy.random.SeedSequence`,
    a bit generator) seeds a new generator, ``np.random.default_rng(rng)``; a Generator is used as
    is (and advanced). A bool, a float, a negative int or anything else raises naming ``name``.
    Passing the same int to two calls gives the same draws in both: pass one Generator to draws
    that must be independent.
    """
    where = _where(func)
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"`{name}`{where} must be a non-negative int seed; got {int(rng)}.")
        return np.random.default_rng(int(rng))
    raise TypeError(f"`{name}`{where} must be None, an int seed or a numpy.random.Generator; "
                    f"got {type(rng).__name__}.")


def check_size(size, name="size", *, func=None):
    """``size`` (NumPy's ``size`` argument: an int or a tuple of ints) as a tuple of non-negative ints,
    an int meaning a 1-tuple; TypeError for another kind, ValueError for a negative entry."""
    if isinstance(size, (numbers.Integral, np.integer)) and not isinstance(size, (bool, np.bool_)):
        size = (size,)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"`{name}`{_where(func)} must be an int or a tuple of ints; got {plain_repr(size)}.")
    out = []
    for s in size:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (numbers.Integral, np.integer)):
            raise TypeError(f"`{name}`{_where(func)} must be an int or a tuple of ints; got {size!r}.")
        if s < 0:
            raise ValueError(f"`{name}`{_where(func)} must hold non-negative ints; got {tuple(size)!r}.")
        out.append(int(s))
    return tuple(out)


def check_bool(v, name, *, func=None):
    """Return ``v`` as a bool if it is one (Python or NumPy), else raise naming ``name``."""
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"`{name}`{_where(func)} must be a bool; got {plain(v)!r}.")
    return bool(v)


def check_array_memory(shape, names, *, func=None, factor=1):
    """:func:`check_memory` for ``factor`` float64 arrays of ``shape``, naming the largest of the
    sizes in ``names`` (a dict: argument name -> its value)."""
    nbytes = 8 * factor * math.prod(int(s) for s in shape)
    name = max(names, key=lambda k: names[k])
    check_memory(nbytes, name, names[name], func=func, hint=f"The output has shape {tuple(shape)}.")


def format_bytes(n):
    """``n`` bytes in the largest binary unit that keeps the figure >= 1 (e.g. '8.0 TiB')."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def check_memory(nbytes, name, value, *, func=None, hint=""):
    """Refuse a call whose arrays would need more than :data:`MAX_BYTES`, naming ``name`` = ``value``.

    ``nbytes`` may be an exact Python int or a float estimate (it never overflows)."""
    if nbytes > MAX_BYTES:
        extra = f" {hint}" if hint else ""
        raise ValueError(f"`{name}`{_where(func)} = {plain(value)!r} needs {format_bytes(nbytes)} of memory, above the "
                         f"limit of {format_bytes(MAX_BYTES)} (theory._validation.MAX_BYTES).{extra}")


#: the remedy check_work's message offers (a caller without a ``max_work`` keyword, the oracle, replaces it)
WORK_REMEDY = "pass a larger `max_work` to run it anyway, or a smaller"


def check_work(ops, name, value, *, func=None, max_work=None, hint=""):
    """Refuse a call whose estimated cost ``ops`` (floating-point operations) exceeds ``max_work``
    (default :data:`MAX_WORK`), naming ``name`` = ``value`` and giving the estimate.

    Returns the budget used, validated (``max_work`` must be a positive number)."""
    where = _where(func)
    budget = MAX_WORK if max_work is None else check_interval(max_work, "max_work", 0.0, np.inf, func=func)
    if not ops <= budget:
        extra = f" {hint}" if hint else ""
        raise ValueError(f"`{name}`{where} = {plain(value)!r} needs about {float(ops):.2g} floating-point operations, above "
                         f"the budget max_work = {budget:.2g}; {WORK_REMEDY} `{name}`.{extra}")
    return budget
