"""Helpers shared by the configs and verdicts of :mod:`theory.experiments.implicit_reg`."""

from __future__ import annotations

import dataclasses
import math
import re

from theory.backends import BACKENDS, DTYPES, validate_fields
from theory.claims import Verdict

from ..config import Choice, Custom, Int, Seed, Seeds, field

__all__ = ["with_measured", "require", "rates_verdict", "seeds_field", "backend_fields_check", "backend_field",
           "device_field", "dtype_field", "search_budget_field", "search_seed_field", "box"]


def with_measured(verdict: Verdict, **measured) -> Verdict:
    """The verdict with further numbers in its ``measured`` (the verdict's own entries win)."""
    return dataclasses.replace(verdict, measured={**measured, **verdict.measured})


def rates_verdict(fits: dict, expected: dict, *, measured: dict | None = None, thresholds: dict | None = None,
                  context: str = "", grid_label: str = "L", kind: str = "rate") -> Verdict:
    """One verdict for a statement predicting several rates at once (and, optionally, further thresholds).

    Each fit ``fits[label]`` is compared as :func:`theory.claims.rate_verdict` does: ``|slope - s| <= tol``
    (``measured["slope_dev_<label>"]`` against ``"slope_dev_<label>_max" = tol``) and/or ``slope <= slope_max``
    (``"slope_<label>_max"``); ``thresholds`` add ``"<name>_max"`` / ``"<name>_min"`` bounds on entries of
    ``measured``. Passes iff every comparison holds (a NaN fails); the per-fit rate verdicts are its ``parts``.
    """
    from theory.claims import rate_verdict, threshold_verdict

    values, bounds, parts = {}, {}, []
    for label, fit in fits.items():
        e = expected[label] if label in expected and isinstance(expected[label], dict) else expected
        parts.append(rate_verdict(fit, e, grid_label=grid_label))
        slope = float(fit.slope)
        values[f"slope_{label}"] = slope
        if "slope" in e:
            values[f"slope_dev_{label}"] = abs(slope - float(e["slope"])) if math.isfinite(slope) else math.inf
            bounds[f"slope_dev_{label}_max"] = float(e["tol"])
        if "slope_max" in e:
            bounds[f"slope_{label}_max"] = float(e["slope_max"])
    values.update(measured or {})
    bounds.update(thresholds or {})
    v = threshold_verdict(kind, values, bounds, context=context)
    return dataclasses.replace(v, parts=tuple(parts))


def require(verdict: Verdict, ok: bool, reason: str, **measured) -> Verdict:
    """The verdict, failed with ``reason`` appended unless ``ok`` (a hypothesis of the statement the instances
    must meet, checked on the same runs); ``measured`` adds the numbers behind ``ok``."""
    verdict = with_measured(verdict, **measured)
    if ok:
        return verdict
    return dataclasses.replace(verdict, status="fail", message=f"{verdict.message}; {reason}")


def search_budget_field(default: int):
    """The config field of a worst-case search's budget (:func:`theory.worst_case.search_worst_case`)."""
    return field(Int(low=1), default, "Evaluations of the worst-case search over the statement's hypotheses.")


def search_seed_field():
    """The config field of a worst-case search's seed."""
    return field(Seed(), 0, "Seed of the worst-case search (its scrambled Sobol points).")


def box(spec) -> list:
    """The :class:`theory.worst_case.Dim` list of a box declared as (name, low, high, scale) tuples."""
    from theory.worst_case import Dim

    return [Dim(*d) for d in spec]


def seeds_field(default: tuple, doc: str):
    """A tuple of at least one seed (integers >= 0)."""
    return field(Seeds(), default, doc)


_DEVICE = re.compile(r"cpu|cuda(:[0-9]+)?")


def _device(value):
    if not isinstance(value, str):
        raise TypeError("a string")
    if not _DEVICE.fullmatch(value):
        raise ValueError("'cpu', 'cuda' or 'cuda:N'")
    return value


def backend_field():
    return field(Choice(*BACKENDS), "numpy", "Array backend of the training runs (:mod:`theory.backends`): "
                 "\"numpy\" (the package's kernels, one run at a time) or \"torch\" (the seeds of a depth as one "
                 "batch, :func:`theory.backends.implicit_reg.gd_runs`); the draws are the same NumPy draws on every "
                 "backend.")


def device_field():
    return field(Custom(_device, "'cpu', 'cuda' or 'cuda:N'", type_name="str", parse=str.strip,
                        invalid=[(3, TypeError), ("tpu", ValueError)], boundary=["cpu"]),
                 "cpu", "Device of the torch backend (\"cpu\" only with the NumPy backend).")


def dtype_field():
    return field(Choice(*DTYPES), "float64", "Floating-point type of the passes: \"float64\", or \"float32\" with the "
                 "torch backend (float32 passes, float64 weights).")


def backend_fields_check(config, where: str) -> None:
    """The rules between ``backend``, ``device`` and ``dtype`` (:func:`theory.backends.validate_fields`)."""
    validate_fields(config, where)

