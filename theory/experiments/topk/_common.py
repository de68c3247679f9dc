"""Shared pieces of the ``topk`` experiments: the outcome record of a check and config validators."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Outcome", "check_int", "check_pair", "check_choices", "check_positive"]


@dataclass(frozen=True)
class Outcome:
    """A measurement as its check records it.

    Attributes
    ----------
    result : object
        What the claim helper takes (:class:`theory.rates.IdentityResult`, :class:`theory.rates.BoundResult`,
        :class:`theory.rates.RateFit`, or a plain dict for qualitative records).
    extras : dict
        Further measured figures recorded beside the result's own (plain numbers, lists, strings).
    """

    result: Any
    extras: dict = field(default_factory=dict)

    def to_measured(self) -> dict:
        own = self.result.to_measured() if hasattr(self.result, "to_measured") else dict(self.result)
        return {**self.extras, **own}


def check_int(cls: str, name: str, value: Any, low: int, high: int | None = None) -> None:
    """Raise unless ``value`` is an integer in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low or (
            high is not None and value > high):
        span = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"`{name}` of {cls} must be an integer {span}; got {value!r}")


def check_pair(cls: str, name: str, value: Any, low: float, high: float) -> None:
    """Raise unless ``value`` is a pair (a, b) with low <= a < b <= high."""
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` of {cls} must be a pair (low, high); got {value!r}") from None
    if not low <= a < b <= high:
        raise ValueError(f"`{name}` of {cls} must be (low, high) with {low:g} <= low < high <= {high:g}; got {value!r}")


def check_choices(cls: str, name: str, value: Any, allowed: tuple) -> None:
    """Raise unless ``value`` is a non-empty tuple of members of ``allowed``."""
    if not isinstance(value, tuple) or not value or any(v not in allowed for v in value):
        raise ValueError(f"`{name}` of {cls} must be a non-empty tuple of values among {allowed!r}; got {value!r}")


def check_positive(cls: str, name: str, value: Any) -> None:
    """Raise unless ``value`` is a positive finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not (
            0.0 < float(value) < float("inf")):
        raise ValueError(f"`{name}` of {cls} must be a positive finite number; got {value!r}")


@dataclass(frozen=True)
class ErratumOutcome:
    """An erratum measured on one set of instances: the verdict of the printed form, the verdict of the corrected
    form and the measured figures. Unpacks as ``printed, corrected, measured``.

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

    def __iter__(self):
        return iter((self.printed, self.corrected, self.measured))

    def to_measured(self) -> dict:
        return dict(self.measured)


def erratum_outcome_verdict(result: ErratumOutcome):
    """The record's verdict: pass iff the printed form fails and the corrected form holds."""
    from theory.claims import erratum_verdict

    return erratum_verdict(result.printed, result.corrected)
