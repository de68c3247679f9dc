"""Validation of the fields of the experiments' config dataclasses, shared by their ``__post_init__``.

Every function takes the value first, then the field's name and the config class's name (``where``), and
raises a TypeError for a value of the wrong type (a bool is not a number here) or a ValueError for one out
of range, the message naming the field and the class, e.g. ``\\`d\\` of GDStepConfig must be an integer >= 1;
got 0.``
"""

from __future__ import annotations

import math
import numbers

__all__ = ["choice", "integer", "integers", "positive", "positives", "real"]


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) and type(v).__name__ != "bool_"


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and type(v).__name__ != "bool_"


def integer(v, name: str, where: str, low: int = 0) -> None:
    """An integer (Python or NumPy) >= ``low``."""
    if not _is_int(v):
        raise TypeError(f"`{name}` of {where} must be an integer >= {low}; got {v!r}.")
    if v < low:
        raise ValueError(f"`{name}` of {where} must be an integer >= {low}; got {v!r}.")


def real(v, name: str, where: str, low: float = -math.inf, high: float = math.inf, *,
         open_low: bool = True, open_high: bool = True) -> None:
    """A finite real number in the interval from ``low`` to ``high`` (open or closed at each end)."""
    interval = f"{'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"
    if not _is_real(v):
        raise TypeError(f"`{name}` of {where} must be a finite number in {interval}; got {v!r}.")
    v = float(v)
    if not math.isfinite(v) or (v <= low if open_low else v < low) or (v >= high if open_high else v > high):
        raise ValueError(f"`{name}` of {where} must be a finite number in {interval}; got {v!r}.")


def positive(v, name: str, where: str, high: float = math.inf) -> None:
    """A finite number in (0, high] (in (0, inf) for the default ``high``)."""
    real(v, name, where, 0.0, high, open_low=True, open_high=math.isinf(high))


def choice(v, name: str, where: str, allowed) -> None:
    """One of ``allowed``."""
    if v not in allowed:
        raise ValueError(f"`{name}` of {where} must be one of {tuple(allowed)!r}; got {v!r}.")


def _sequence(vals, name: str, where: str, what: str, min_len: int) -> None:
    if not isinstance(vals, tuple) or len(vals) < min_len:
        raise ValueError(f"`{name}` of {where} must be a tuple of at least {min_len} {what}; got {vals!r}.")


def _order(vals, name: str, where: str, increasing: bool, distinct: bool) -> None:
    if increasing and any(b <= a for a, b in zip(vals, vals[1:])):
        raise ValueError(f"`{name}` of {where} must be strictly increasing; got {vals!r}.")
    if distinct and len(set(vals)) != len(vals):
        raise ValueError(f"`{name}` of {where} must hold distinct values; got {vals!r}.")


def integers(vals, name: str, where: str, low: int = 0, *, min_len: int = 1, increasing: bool = False,
             distinct: bool = False) -> None:
    """A tuple of at least ``min_len`` integers >= ``low`` (strictly increasing, or distinct, on request)."""
    _sequence(vals, name, where, f"integers >= {low}", min_len)
    for v in vals:
        integer(v, name, where, low)
    _order(vals, name, where, increasing, distinct)


def positives(vals, name: str, where: str, high: float = math.inf, *, low: float = 0.0, closed: bool = False,
              min_len: int = 1, increasing: bool = False) -> None:
    """A tuple of at least ``min_len`` finite numbers above ``low`` (or at least ``low`` if ``closed``) and at
    most ``high``."""
    _sequence(vals, name, where, "numbers", min_len)
    for v in vals:
        real(v, name, where, low, high, open_low=not closed, open_high=math.isinf(high))
    _order(vals, name, where, increasing, False)
