"""Shared pieces of the ``topk`` experiments: the outcome records of a check and the constraints of the config
fields that the vocabulary of :mod:`theory.experiments.config` does not say by itself."""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

import numpy as np

from ..config import Custom, Ints, Reals

__all__ = ["Outcome", "ErratumOutcome", "erratum_outcome_verdict", "int_range", "real_range", "decreasing_steps",
           "shapes_nk", "cases_nkr", "reg_grids"]


@dataclass(frozen=True)
class Outcome:
    """A measurement as its check records it.

    Attributes
    ----------
    result : object
        What the verdict compares (:class:`theory.rates.IdentityResult`, :class:`theory.rates.BoundResult`,
        :class:`theory.rates.RateFit`).
    extras : dict
        Further measured figures recorded beside the result's own (plain numbers, lists, strings).
    """

    result: Any
    extras: dict = _field(default_factory=dict)

    def to_measured(self) -> dict:
        own = self.result.to_measured() if hasattr(self.result, "to_measured") else dict(self.result)
        return {**self.extras, **own}


def int_range(low: int, high: int | None = None) -> Ints:
    """A pair (low, high) of integers with ``low_bound <= low < high <= high_bound``."""
    return Ints(low, high, min_len=2, max_len=2, increasing=True)


def real_range(low: float, high: float, closed: str = "both") -> Reals:
    """A pair (low, high) of finite numbers in the interval, low < high."""
    return Reals(low, high, closed, min_len=2, max_len=2, increasing=True)


def _pipe_floats(text: str) -> tuple:
    return tuple(float(v) for v in text.split("|") if v.strip())


def decreasing_steps(min_len: int = 3) -> Custom:
    """A tuple of at least ``min_len`` strictly decreasing positive finite steps h (normalised to floats)."""
    inner = Reals(0.0, closed="neither", min_len=min_len)

    def rule(value):
        out = inner.validate(value, "steps", "decreasing_steps")
        if any(b >= a for a, b in zip(out, out[1:])):
            raise ValueError("not strictly decreasing")
        return out

    return Custom(rule, f"a tuple of at least {min_len} strictly decreasing finite numbers > 0",
                  type_name="tuple of float", parse=_pipe_floats,
                  invalid=[(3, TypeError), ("0.1|0.05|0.01", TypeError), ((0.02, 0.01), ValueError),
                           ((0.01, 0.02, 0.04), ValueError), ((0.02, 0.01, 0.0), ValueError),
                           ((0.02, 0.01, math.inf), ValueError)],
                  boundary=[(0.02, 0.01, 0.005)])


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _items(value, what):
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple):
        raise TypeError(f"not a tuple of {what}")
    if not value:
        raise ValueError("empty")
    return value


def shapes_nk(n_max: int | None = None) -> Custom:
    """A non-empty tuple of pairs (n, k) of integers with ``1 <= k < n`` (and ``n <= n_max``)."""
    top = "" if n_max is None else f" <= {n_max}"

    def rule(value):
        out = []
        for nk in _items(value, "(n, k)"):
            nk = tuple(nk) if isinstance(nk, list) else nk
            if not (isinstance(nk, tuple) and len(nk) == 2 and all(_is_int(v) for v in nk)):
                raise TypeError("an entry is not a pair of integers")
            n, k = int(nk[0]), int(nk[1])
            if not (1 <= k < n and (n_max is None or n <= n_max)):
                raise ValueError("an entry is out of range")
            out.append((n, k))
        return tuple(out)

    return Custom(rule, f"a non-empty tuple of pairs (n, k) of integers with 1 <= k < n{top}",
                  type_name="tuple of (int, int)",
                  invalid=[(3, TypeError), ((), ValueError), (((3, 3),), ValueError), (((3, 0),), ValueError),
                           (((3.0, 1),), TypeError), (((3, True),), TypeError)]
                  + ([((((n_max + 1), 1),), ValueError)] if n_max is not None else []),
                  boundary=[((2, 1),)] + ([((n_max, n_max - 1),)] if n_max is not None else []))


def cases_nkr() -> Custom:
    """A non-empty tuple of triples (n, k, reg): integers 1 <= k < n and a finite reg > 0 (normalised to float)."""

    def rule(value):
        out = []
        for c in _items(value, "(n, k, reg)"):
            c = tuple(c) if isinstance(c, list) else c
            if not (isinstance(c, tuple) and len(c) == 3 and _is_int(c[0]) and _is_int(c[1])
                    and isinstance(c[2], (int, float, np.integer, np.floating))
                    and not isinstance(c[2], (bool, np.bool_))):
                raise TypeError("an entry is not a triple (int, int, number)")
            n, k, reg = int(c[0]), int(c[1]), float(c[2])
            if not (1 <= k < n and 0.0 < reg < math.inf):
                raise ValueError("an entry is out of range")
            out.append((n, k, reg))
        return tuple(out)

    return Custom(rule, "a non-empty tuple of triples (n, k, reg) with integers 1 <= k < n and a finite reg > 0",
                  type_name="tuple of (int, int, float)",
                  invalid=[(3, TypeError), ((), ValueError), (((3, 3, 1.0),), ValueError),
                           (((3, 1, 0.0),), ValueError), (((3, 1, math.inf),), ValueError),
                           (((3.0, 1, 1.0),), TypeError)],
                  boundary=[((2, 1, 1e-300),)])


def reg_grids(min_points: int = 3) -> Custom:
    """A non-empty tuple of pairs (reg, grid): a finite reg > 0 and at least ``min_points`` strictly increasing
    integers >= 1 (normalised to (float, tuple of int))."""
    grid_rule = Ints(1, min_len=min_points, increasing=True)

    def rule(value):
        out = []
        for item in _items(value, "(reg, grid)"):
            item = tuple(item) if isinstance(item, list) else item
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError("an entry is not a pair (reg, grid)")
            reg, grid = item
            if isinstance(reg, (bool, np.bool_)) or not isinstance(reg, (int, float, np.integer, np.floating)):
                raise TypeError("reg is not a number")
            if not 0.0 < float(reg) < math.inf:
                raise ValueError("reg is out of range")
            out.append((float(reg), grid_rule.validate(grid, "grids", "reg_grids")))
        return tuple(out)

    return Custom(rule, f"a non-empty tuple of pairs (reg, grid): a finite reg > 0 and at least {min_points} "
                  "strictly increasing iteration counts >= 1", type_name="tuple of (float, tuple of int)",
                  invalid=[(3, TypeError), ((), ValueError), (((0.0, (1, 2, 3)),), ValueError),
                           (((1.0, (1, 2)),), ValueError), (((1.0, (3, 2, 1)),), ValueError),
                           (((1.0, (0, 1, 2)),), ValueError), ((("1", (1, 2, 3)),), TypeError)],
                  boundary=[((1e-300, (1, 2, 3)),)])


@dataclass(frozen=True)
class ErratumOutcome:
    """An erratum measured on one set of instances: the verdict of the printed form, the verdict of the corrected
    form and the measured figures. :func:`erratum_outcome_verdict` makes the record's one verdict of them.

    Attributes
    ----------
    printed : theory.claims.Verdict
        The printed statement's verdict (the record needs it to fail).
    corrected : theory.claims.Verdict
        The corrected statement's verdict on the same kind of instances (the record needs it to pass).
    measured : dict
        The figures recorded.
    """

    printed: Any
    corrected: Any
    measured: dict

    def to_measured(self) -> dict:
        return dict(self.measured)


def erratum_outcome_verdict(result: ErratumOutcome):
    """The record's verdict (:func:`theory.claims.erratum_verdict`): pass iff the printed form fails and the
    corrected form holds; its ``parts`` are the two halves."""
    from theory.claims import erratum_verdict

    return erratum_verdict(result.printed, result.corrected)
