"""Validation helpers shared by the configs of :mod:`theory.experiments.implicit_reg`."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pos_int", "pos_float", "int_tuple", "float_tuple", "choice"]


def pos_int(value, name, cls, minimum=1):
    """Raise TypeError/ValueError unless ``value`` is an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` of {cls} must be an int; got {value!r}.")
    if value < minimum:
        raise ValueError(f"`{name}` of {cls} must be >= {minimum}; got {value!r}.")


def pos_float(value, name, cls, allow_zero=False):
    """Raise TypeError/ValueError unless ``value`` is a finite real > 0 (>= 0 with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"`{name}` of {cls} must be a real number; got {value!r}.")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"`{name}` of {cls} must be finite and {'>= 0' if allow_zero else '> 0'}; got {value!r}.")


def int_tuple(value, name, cls, minimum=1, min_len=1, increasing=False):
    """Raise unless ``value`` is a tuple of at least ``min_len`` ints >= ``minimum`` (strictly increasing)."""
    if not isinstance(value, tuple):
        raise TypeError(f"`{name}` of {cls} must be a tuple of ints; got {value!r}.")
    if len(value) < min_len:
        raise ValueError(f"`{name}` of {cls} must hold at least {min_len} entries; got {value!r}.")
    for v in value:
        pos_int(v, name, cls, minimum=minimum)
    if increasing and any(b <= a for a, b in zip(value, value[1:])):
        raise ValueError(f"`{name}` of {cls} must be strictly increasing; got {value!r}.")


def float_tuple(value, name, cls, min_len=1, allow_zero=False):
    """Raise unless ``value`` is a tuple of at least ``min_len`` finite positive reals."""
    if not isinstance(value, tuple):
        raise TypeError(f"`{name}` of {cls} must be a tuple of reals; got {value!r}.")
    if len(value) < min_len:
        raise ValueError(f"`{name}` of {cls} must hold at least {min_len} entries; got {value!r}.")
    for v in value:
        pos_float(v, name, cls, allow_zero=allow_zero)


def choice(value, name, cls, choices):
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"`{name}` of {cls} must be one of {choices}; got {value!r}.")
