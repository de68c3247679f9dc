"""Claim identity, records and the pure verdict functions of the checks.

A claim ID is ``<paper-key>/<label>-<number>`` with the paper's own numbering
(``resnet-node/prop-3``, ``topk/prop-7.8``), optionally followed by qualifiers naming one part
of the statement (``resnet-node/prop-3/iid``, ``resnet-node/prop-1/tightness``), and by
``/erratum`` for the record showing that a printed statement fails and its correction holds
(see ERRATA.md).

Each verdict function takes a measurement from :mod:`theory.rates` and the claim's
``expected`` dict and returns a :class:`Verdict` whose message is the record in one line. They
are pure, so negative controls in ``tests/`` call them directly; the ``claim`` fixture of
``theory.pytest_plugin`` records the measurement first and then asserts through them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from theory._validation import plain
from theory.papers import PAPER_KEYS
from theory.rates import to_plain

__all__ = [
    "PAPER_KEYS",
    "KINDS",
    "MIN_RATE_SIZES",
    "STATUSES",
    "WRONG_IN",
    "parse_claim_id",
    "Verdict",
    "rate_verdict",
    "bound_verdict",
    "frequency_verdict",
    "identity_verdict",
    "qualitative_verdict",
    "threshold_verdict",
    "THRESHOLDS",
    "worst_case_verdict",
    "LOOSE_RATIO",
    "erratum_verdict",
    "ClaimRecord",
    "merge_records",
]

#: the fewest grid sizes a rate is fitted on (a log-log slope through fewer says little)
MIN_RATE_SIZES = 5
KINDS = ("bound", "rate", "identity", "frequency", "qualitative", "erratum")
STATUSES = ("pass", "fail", "skip")
#: Where a printed erratum lies: the statement itself is false ("statement"); a step or constant of
#: the proof is wrong while the statement still holds ("proof"); a displayed formula, algorithm or
#: definition used by the text is wrong ("formula").
WRONG_IN = ("statement", "proof", "formula")

# <label>-<number>[/<qualifier>...]: prop-3, lemma-20, prop-7.8, thm-A.2b, prop-3/iid, sec-3.2/gradient/erratum
_LOCAL = re.compile(r"[a-z]+-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*(?:/[a-z0-9]+(?:-[a-z0-9]+)*)*")


def parse_claim_id(claim_id: str) -> tuple[str, str]:
    """Split a claim ID into its paper key and local part, validating both.

    Parameters
    ----------
    claim_id : str
        ``<paper-key>/<label>-<number>``, optionally followed by qualifiers
        ``/<lower-case-word>`` (a part of the statement, e.g. ``/iid``) and, last, ``/erratum``.

    Returns
    -------
    paper : str
        One of :data:`PAPER_KEYS`.
    local : str
        The rest, e.g. ``"prop-3"``, ``"prop-3/iid"`` or ``"prop-3/erratum"``.

    Raises
    ------
    ValueError
        If the ID is malformed or its paper key is unknown.

    Examples
    --------
    >>> parse_claim_id("resnet-node/prop-3")
    ('resnet-node', 'prop-3')
    >>> parse_claim_id("topk/prop-7.8/erratum")
    ('topk', 'prop-7.8/erratum')
    """
    if not isinstance(claim_id, str):
        raise ValueError(f"claim ID must be a string; got {claim_id!r}")
    paper, _, local = claim_id.partition("/")
    if paper not in PAPER_KEYS:
        raise ValueError(
            f"claim ID {claim_id!r} has unknown paper key {paper!r}; known keys: {', '.join(PAPER_KEYS)}"
        )
    if not _LOCAL.fullmatch(local) or "erratum" in local.split("/")[1:-1]:
        raise ValueError(
            f"claim ID {claim_id!r} must be '<paper-key>/<label>-<number>', optionally followed by "
            f"lower-case qualifiers and a final '/erratum', e.g. 'resnet-node/prop-3', "
            f"'resnet-node/prop-3/iid' or 'topk/prop-7.8/erratum'"
        )
    return paper, local


def is_erratum_id(claim_id: str) -> bool:
    """Whether ``claim_id`` names an erratum record (ends with ``/erratum``)."""
    return parse_claim_id(claim_id)[1].endswith("/erratum")


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """Outcome of comparing a measurement with a claim: one type for every kind of claim.

    The verdict functions below build it; a check records it as it is (``claim.record(verdict)``) and the
    report renders its fields. Its numbers travel as numbers: ``expected`` holds what the document predicts,
    ``measured`` what was measured, and ``message`` only says it in words.

    Attributes
    ----------
    status : {"pass", "fail"}
    message : str
        The record in one line: measured figure, expectation, range.
    kind : str or None
        One of :data:`KINDS` (None only for a verdict built by hand without one).
    expected : dict
        The prediction as numbers: ``{"slope": s, "tol": t}``, ``{"ratio_max": r}``, ``{"delta": d}``,
        ``{"atol": a}``, or thresholds ``{"<name>_max": v, "<name>_min": v}`` on entries of ``measured``;
        an erratum's holds ``{"printed": {...}, "corrected": {...}}``.
    measured : dict
        The measurement as numbers (a fit's ``slope``, ``ci``, ``grid``; a bound's ``ratio``, ...).
    parts : tuple of Verdict
        The verdicts combined into this one (an erratum's printed and corrected halves).
    """

    status: str
    message: str
    kind: str | None = None
    expected: Mapping = field(default_factory=dict)
    measured: Mapping = field(default_factory=dict)
    parts: tuple = ()

    def __post_init__(self) -> None:
        if self.status not in ("pass", "fail"):
            raise ValueError(f"`status` of theory.claims.Verdict must be 'pass' or 'fail'; got {self.status!r}")
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"`kind` of theory.claims.Verdict must be one of {KINDS}; got {self.kind!r}")
        for name in ("expected", "measured"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                value = value.to_measured() if hasattr(value, "to_measured") else value
            if not isinstance(value, Mapping):
                raise ValueError(f"`{name}` of theory.claims.Verdict must be a dict; got {value!r}")
            object.__setattr__(self, name, dict(value))
        object.__setattr__(self, "parts", tuple(self.parts))

    def __repr__(self) -> str:
        return f"Verdict(status={self.status!r}, message={self.message!r})"

    @property
    def passed(self) -> bool:
        """Whether the status is ``"pass"``."""
        return self.status == "pass"


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"`expected[{name!r}]` of {where} must be a number; got {plain(value)!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"`expected[{name!r}]` of {where} must be finite; got {plain(value)!r}")
    return value


def _expected(expected: Any, allowed: tuple[str, ...], where: str) -> dict:
    if not isinstance(expected, Mapping):
        raise ValueError(f"`expected` of {where} must be a dict; got {expected!r}")
    unknown = sorted(set(expected) - set(allowed))
    if unknown:
        raise ValueError(f"`expected` of {where} has unknown keys {unknown}; allowed: {list(allowed)}")
    return {k: _number(v, k, where) for k, v in expected.items()}


def _finite(x: float) -> bool:
    return x is not None and math.isfinite(x)


def _g(x: Any, spec: str = ".3g") -> str:
    """Format a number, 'nan'/'inf' included."""
    if x is None:
        return "null"
    return format(float(x), spec)


def _grid_range(grid: Any) -> str:
    grid = np.asarray(grid, dtype=float)
    return f"{_g(grid.min(), 'g')}..{_g(grid.max(), 'g')}"


def _verdict(ok: bool, message: str, kind: str | None = None, expected: Mapping | None = None,
             measured: Any = None) -> Verdict:
    measured = measured.to_measured() if hasattr(measured, "to_measured") else (measured or {})
    return Verdict("pass" if ok else "fail", message, kind, dict(expected or {}), measured)


def rate_verdict(fit: Any, expected: Mapping, *, grid_label: str = "N") -> Verdict:
    """Compare a fitted rate with the predicted one.

    Parameters
    ----------
    fit : RateFit
        The fit from :func:`theory.rates.fit_rate`.
    expected : dict
        ``{"slope": s, "tol": t}``: pass iff ``|slope - s| <= t``; and/or ``{"slope_max": m}``:
        pass iff ``slope <= m``, i.e. a convergence at least as fast as the proved rate (use it
        when the observed rate beats the bound, and say so). A NaN slope fails, and so does a fit on
        fewer than :data:`MIN_RATE_SIZES` (5) distinct grid sizes.
    grid_label : str, optional
        Name of the grid variable in the message.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> from theory.rates import fit_rate
    >>> N = np.array([8, 16, 32, 64, 128])
    >>> rate_verdict(fit_rate(N, 1.0 / N), {"slope": -1.0, "tol": 0.1})
    Verdict(status='pass', message='slope -1.00 [95% CI -1.00, -1.00], expected -1.00 ± 0.10, N = 8..128')
    """
    where = "theory.claims.rate_verdict"
    exp = _expected(expected, ("slope", "tol", "slope_max"), where)
    if ("slope" in exp) != ("tol" in exp):
        raise ValueError(f"`expected` of {where} needs both 'slope' and 'tol' (or neither); got {dict(expected)}")
    if "slope" not in exp and "slope_max" not in exp:
        raise ValueError(f"`expected` of {where} needs 'slope' and 'tol', or 'slope_max'; got {dict(expected)}")
    if exp.get("tol", 0.0) < 0:
        raise ValueError(f"`expected['tol']` of {where} must be non-negative; got {exp['tol']}")
    slope = float(fit.slope)
    sizes = _fitted_sizes(fit)
    ok = _finite(slope) and sizes >= MIN_RATE_SIZES
    parts = []
    if "slope" in exp:
        ok = ok and abs(slope - exp["slope"]) <= exp["tol"]
        parts.append(f"{exp['slope']:.2f} ± {exp['tol']:.2f}")
    if "slope_max" in exp:
        ok = ok and slope <= exp["slope_max"]
        parts.append(f"slope ≤ {exp['slope_max']:.2f}")
    level = round(100 * float(getattr(fit, "level", 0.95)))
    low, high = fit.ci
    message = (
        f"slope {_g(slope, '.2f')} [{level}% CI {_g(low, '.2f')}, {_g(high, '.2f')}], "
        f"expected {' and '.join(parts)}, {grid_label} = {_grid_range(fit.grid)}"
    )
    if len(fit.dropped):
        message += f" (dropped at floor: {', '.join(_g(g, 'g') for g in fit.dropped)})"
    if sizes < MIN_RATE_SIZES:
        message += f"; fitted on {sizes} sizes, fewer than the {MIN_RATE_SIZES} a rate needs"
    return _verdict(ok, message, "rate", exp, fit)


def _fitted_sizes(fit: Any) -> int:
    """Number of distinct grid sizes with at least one point in the fit."""
    grid = np.asarray(fit.grid, dtype=float).ravel()
    kept = getattr(fit, "kept", None)
    if kept is not None:
        kept = np.atleast_2d(np.asarray(kept, dtype=bool))
        if kept.shape[-1] == grid.size:
            return int(np.unique(grid[kept.any(axis=0)]).size)
    dropped = set(float(g) for g in getattr(fit, "dropped", ()))
    return len({float(g) for g in grid if float(g) not in dropped})


def _describe(instance: Any, limit: int = 80) -> str:
    text = json.dumps(to_plain(instance), allow_nan=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def bound_verdict(result: Any, expected: Mapping) -> Verdict:
    """Compare the largest LHS/RHS ratio of a bound with the allowed maximum.

    Parameters
    ----------
    result : BoundResult
        From :func:`theory.rates.bound_ratio` or :class:`theory.rates.BoundTracker`; with a worst-case search
        attached (``result.with_search(...)``) the verdict is :func:`worst_case_verdict` of both.
    expected : dict
        ``{"ratio_max": r}``: pass iff the ratio is finite and ``<= r`` (``r = 1`` for the bound
        as printed), and so is the search's largest ratio where there is one.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> from theory.rates import bound_ratio
    >>> bound_verdict(bound_ratio([1.0, 3.0], [2.0, 4.0]), {"ratio_max": 1.0}).status
    'pass'
    """
    where = "theory.claims.bound_verdict"
    exp = _expected(expected, ("ratio_max",), where)
    if "ratio_max" not in exp:
        raise ValueError(f"`expected` of {where} needs 'ratio_max'; got {dict(expected)}")
    ratio = float(result.ratio)
    ok = _finite(ratio) and ratio <= exp["ratio_max"]
    message = (
        f"max LHS/RHS {_g(ratio, '.4g')} over {result.n_instances} instances "
        f"(worst: {_describe(result.worst)}), expected ≤ {_g(exp['ratio_max'], 'g')}"
    )
    verdict = _verdict(ok, message, "bound", exp, result)
    search = getattr(result, "search", None)
    return verdict if search is None else worst_case_verdict(verdict, search)


def frequency_verdict(result: Any, expected: Mapping) -> Verdict:
    """Compare the violation frequency of a high-probability statement with its δ.

    Parameters
    ----------
    result : FrequencyResult
        From :func:`theory.rates.frequency`.
    expected : dict
        ``{"delta": d}``: pass iff ``freq <= d``. When empty, ``result.delta`` is used.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> from theory.rates import frequency
    >>> frequency_verdict(frequency([False] * 99 + [True]), {"delta": 0.05}).message
    'violation frequency 0.01 (1 of 100) [95% CI 0.000253, 0.0545], expected ≤ δ = 0.05'
    """
    where = "theory.claims.frequency_verdict"
    exp = _expected(expected, ("delta",), where)
    delta = exp.get("delta", getattr(result, "delta", None))
    if delta is None:
        raise ValueError(f"`expected` of {where} needs 'delta' (the allowed failure probability)")
    freq = float(result.freq)
    ok = _finite(freq) and freq <= delta
    level = round(100 * float(getattr(result, "level", 0.95)))
    low, high = result.ci
    message = (
        f"violation frequency {_g(freq)} ({result.violations} of {result.runs}) "
        f"[{level}% CI {_g(low)}, {_g(high)}], expected ≤ δ = {_g(delta, 'g')}"
    )
    return _verdict(ok, message, "frequency", {"delta": delta}, result)


def identity_verdict(result: Any, expected: Mapping) -> Verdict:
    """Compare the deviation from an identity with its tolerances.

    Parameters
    ----------
    result : IdentityResult
        From :func:`theory.rates.identity_error`.
    expected : dict
        ``{"atol": a}`` and/or ``{"rtol": r}``: pass iff every tolerance given holds
        (``max_abs_err <= a``, ``max_rel_err <= r``); NaN errors fail.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> from theory.rates import identity_error
    >>> identity_verdict(identity_error([1.0, 2.0], [1.0, 2.0 + 1e-15]), {"atol": 1e-12}).status
    'pass'
    """
    where = "theory.claims.identity_verdict"
    exp = _expected(expected, ("atol", "rtol"), where)
    if not exp:
        raise ValueError(f"`expected` of {where} needs 'atol' and/or 'rtol'")
    abs_err, rel_err = float(result.max_abs_err), float(result.max_rel_err)
    norm_rel = float(getattr(result, "norm_rel_err", math.nan))
    zero_err = float(getattr(result, "zero_ref_abs_err", 0.0))
    ok = _finite(abs_err)
    parts = []
    if "atol" in exp:
        ok = ok and abs_err <= exp["atol"]
        parts.append(f"abs ≤ {_g(exp['atol'], '.2g')}")
    if "rtol" in exp:
        # relative errors exist only where the reference is nonzero; entries with a zero reference
        # must then match within atol (or exactly, without atol)
        ok = ok and (math.isnan(rel_err) or rel_err <= exp["rtol"])
        ok = ok and zero_err <= exp.get("atol", 0.0)
        parts.append(f"rel ≤ {_g(exp['rtol'], '.2g')}")
    text = [f"max abs error {_g(abs_err, '.2e')}"]
    if "rtol" in exp:
        text.append("max rel error " + ("n/a (zero reference)" if math.isnan(rel_err) and _finite(abs_err)
                                        else _g(rel_err, ".2e")))
        if zero_err > 0:
            text.append(f"abs error {_g(zero_err, '.2e')} where the reference is zero")
    elif _finite(norm_rel):
        text.append(f"{_g(norm_rel, '.2e')} of max |reference|")
    message = f"{', '.join(text)} over {result.n_instances} instances, expected {', '.join(parts)}"
    return _verdict(ok, message, "identity", exp, result)


#: comparison of a threshold key's suffix: measured[name] <= value for "<name>_max", >= for "<name>_min", and the
#: strict < for "<name>_below", > for "<name>_above"
THRESHOLDS = {"_max": ("≤", lambda m, v: m <= v), "_min": ("≥", lambda m, v: m >= v),
              "_below": ("<", lambda m, v: m < v), "_above": (">", lambda m, v: m > v)}


def _threshold(key: str) -> tuple[str, str, Any]:
    for suffix, (symbol, holds) in THRESHOLDS.items():
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)], symbol, holds
    raise ValueError(
        f"`expected` key {key!r} of theory.claims.threshold_verdict must end in '_max', '_min', '_below' or "
        f"'_above' (the bound on the measured entry of the same name)"
    )


def threshold_verdict(kind: str, measured: Any, expected: Mapping, *, context: str = "") -> Verdict:
    """Compare measured numbers with the thresholds a statement gives them: pass iff every one holds.

    For statements whose prediction is several numbers at once (an invariance to ``1e-12`` and a
    separation of at least ``1e-2``, a bound at every size of a grid, an ordering by a margin).

    Parameters
    ----------
    kind : str
        The claim's kind, one of :data:`KINDS` but ``"erratum"`` (``"identity"`` for invariances and
        closed forms, ``"bound"`` for inequalities, ``"rate"`` for limits at a rate, ``"qualitative"`` for a
        shape that still has numbers).
    measured : dict or result object
        The measurement, numbers by name (an object with ``to_measured()`` is converted).
    expected : dict
        Thresholds by key ``"<name>_max"`` (``measured[name] <= value``), ``"<name>_min"``
        (``measured[name] >= value``), ``"<name>_below"`` (``<``) or ``"<name>_above"`` (``>``); every
        ``name`` must be in ``measured``. A NaN measurement fails.
    context : str, optional
        What was measured on which instances, appended to the message (``"20 draws, n = 10"``).

    Returns
    -------
    Verdict
        With ``expected`` the thresholds and ``measured`` the measurement, as given.

    Examples
    --------
    >>> v = threshold_verdict("identity", {"max_diff": 3e-16, "min_gap": 0.4},
    ...                       {"max_diff_max": 1e-12, "min_gap_min": 1e-2}, context="20 draws")
    >>> v.status, v.message
    ('pass', 'max_diff 3e-16 ≤ 1e-12, min_gap 0.4 ≥ 0.01 (20 draws)')
    """
    where = "theory.claims.threshold_verdict"
    if kind not in KINDS or kind == "erratum":
        raise ValueError(f"`kind` of {where} must be one of {[k for k in KINDS if k != 'erratum']}; got {kind!r}")
    values = measured.to_measured() if hasattr(measured, "to_measured") else measured
    if not isinstance(values, Mapping):
        raise ValueError(f"`measured` of {where} must be a dict of numbers; got {measured!r}")
    if not isinstance(expected, Mapping) or not expected:
        raise ValueError(f"`expected` of {where} must be a non-empty dict of thresholds; got {expected!r}")
    ok, parts = True, []
    for key, bound in expected.items():
        name, symbol, holds = _threshold(key)
        bound = _number(bound, key, where) if not (isinstance(bound, float) and math.isinf(bound)) else bound
        if name not in values:
            raise ValueError(f"`expected[{key!r}]` of {where} bounds measured[{name!r}], which `measured` lacks; "
                             f"measured has {sorted(values)}")
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"measured[{name!r}] of {where} must be a number; got {plain(value)!r}")
        value = float(value)
        ok = ok and _finite(value) and bool(holds(value, bound))
        parts.append(f"{name} {_g(value, '.3g')} {symbol} {_g(bound, '.3g')}")
    message = ", ".join(parts) + (f" ({context})" if context else "")
    return _verdict(ok, message, kind, dict(expected), dict(values))


#: below this largest ratio (random instances and search together) a bound is reported as loose
LOOSE_RATIO = 0.1


def worst_case_verdict(verdict: Verdict, search: Any, *, ratio_max: float | None = None) -> Verdict:
    """Add the worst-case search of a bound to its verdict (the random instances' verdict).

    Parameters
    ----------
    verdict : Verdict
        The bound's verdict on its random or gridded instances (kind ``"bound"``).
    search : WorstCase
        From :func:`theory.worst_case.search_worst_case` over the statement's hypothesis set.
    ratio_max : float, optional
        The largest LHS/RHS the statement allows; default ``verdict.expected["ratio_max"]`` (1 for the
        bound as printed).

    Returns
    -------
    Verdict
        Passes iff ``verdict`` passes and the largest ratio found is finite and at most ``ratio_max``.
        ``measured["search"]`` holds the search (ratio, instance, both sides, evaluations, budget, seed,
        box, and the smallest constant found beside the printed one where the search names it);
        ``expected["search"]`` holds ``{"ratio_max": ratio_max}``. The message says how loose the bound is
        where the largest ratio over both stays below :data:`LOOSE_RATIO`.

    Examples
    --------
    >>> from theory.rates import bound_ratio
    >>> from theory.worst_case import Dim, search_worst_case
    >>> v = bound_verdict(bound_ratio([0.1, 0.2], [1.0, 1.0]), {"ratio_max": 1.0})
    >>> wc = search_worst_case(lambda i: (i["x"] * (1 - i["x"]), 0.25), [Dim("x", 0.0, 1.0)], budget=40)
    >>> worst_case_verdict(v, wc).status
    'pass'
    """
    where = "theory.claims.worst_case_verdict"
    if not isinstance(verdict, Verdict):
        raise TypeError(f"`verdict` of {where} must be a theory.claims.Verdict; got {plain(verdict)!r}")
    if verdict.kind != "bound":
        raise ValueError(f"`verdict` of {where} must be a bound's verdict; got kind {verdict.kind!r}")
    if not hasattr(search, "to_measured") or not hasattr(search, "ratio"):
        raise TypeError(f"`search` of {where} must be a theory.worst_case.WorstCase; got {plain(search)!r}")
    if ratio_max is None:
        if "ratio_max" not in verdict.expected:
            raise ValueError(f"`ratio_max` of {where} is needed: the verdict's expected has no 'ratio_max'")
        ratio_max = verdict.expected["ratio_max"]
    ratio_max = _number(ratio_max, "ratio_max", where)
    found = search.to_measured()
    ratio = float(search.ratio)
    ok = verdict.passed and _finite(ratio) and ratio <= ratio_max
    text = (f"worst-case search: max LHS/RHS {_g(ratio, '.4g')} at {_describe(search.instance, 120)} "
            f"({search.evaluations} of {search.budget} evaluations, {search.method}, seed {search.seed})")
    if "constant" in found:
        c = found["constant"]
        text += f"; smallest constant {c['name']} = {_g(c['smallest'], '.4g')} against the stated {_g(c['stated'], '.4g')}"
    overall = max(ratio, float(verdict.measured.get("ratio", -math.inf) or -math.inf))
    if _finite(overall) and ratio_max > 0 and overall < LOOSE_RATIO * ratio_max:
        text += f"; loose: the worst found is {_g(overall / ratio_max, '.2g')} of the right-hand side"
    measured = dict(verdict.measured)
    measured["search"] = found
    expected = dict(verdict.expected)
    expected["search"] = {"ratio_max": ratio_max}
    return Verdict("pass" if ok else "fail", f"{verdict.message}; {text}", "bound", expected, measured, verdict.parts)


def qualitative_verdict(ok: bool, message: str, measured: Any = None, expected: Mapping | None = None) -> Verdict:
    """Verdict of a qualitative claim (a sign, an ordering, a shape) decided by the check.

    Only for statements with no number to compare: a statement that predicts a value, a rate, a bound or a
    tolerance gets the verdict of its kind (:func:`threshold_verdict` where it predicts several numbers).

    Parameters
    ----------
    ok : bool
        Whether the statement holds.
    message : str
        What was seen, in one line.
    measured, expected : dict, optional
        The numbers behind the decision, recorded as they are.

    Examples
    --------
    >>> qualitative_verdict(True, "loss decreases monotonically over 200 steps").status
    'pass'
    """
    if not isinstance(ok, (bool, np.bool_)):
        raise ValueError(f"`ok` of theory.claims.qualitative_verdict must be a bool; got {ok!r}")
    if not isinstance(message, str) or not message:
        raise ValueError(f"`message` of theory.claims.qualitative_verdict must be a non-empty string; got {message!r}")
    return _verdict(bool(ok), message, "qualitative", expected, measured)


def erratum_verdict(printed_verdict: Verdict, corrected_verdict: Verdict | None = None) -> Verdict:
    """Verdict of an erratum record: the printed form fails and the corrected form holds.

    The record passes iff the printed statement fails numerically **and** the corrected statement
    holds on the same kind of instances. Without ``corrected_verdict`` only the first half is
    decided, and the message says so.

    Parameters
    ----------
    printed_verdict : Verdict
        The verdict of the statement as printed, e.g. ``rate_verdict(fit, printed_expected)``.
    corrected_verdict : Verdict, optional
        The verdict of the corrected statement, e.g. ``rate_verdict(fit, corrected_expected)``.

    Examples
    --------
    >>> printed = Verdict("fail", "slope -0.50, expected -1.00 ± 0.10")
    >>> corrected = Verdict("pass", "slope -0.50, expected -0.50 ± 0.10")
    >>> erratum_verdict(printed, corrected).message
    'printed statement fails, as documented: slope -0.50, expected -1.00 ± 0.10; corrected statement holds: slope -0.50, expected -0.50 ± 0.10'
    >>> erratum_verdict(printed, Verdict("fail", "ratio 3.1, expected ≤ 1")).status
    'fail'
    """
    for name, value in (("printed_verdict", printed_verdict), ("corrected_verdict", corrected_verdict)):
        if value is not None and not isinstance(value, Verdict):
            raise ValueError(f"`{name}` of theory.claims.erratum_verdict must be a Verdict; got {value!r}")
    if printed_verdict is None:
        raise ValueError("`printed_verdict` of theory.claims.erratum_verdict must be a Verdict; got None")
    if printed_verdict.status == "fail":
        first = f"printed statement fails, as documented: {printed_verdict.message}"
    else:
        first = f"printed statement holds numerically, so the erratum is not confirmed: {printed_verdict.message}"
    if corrected_verdict is None:
        return Verdict("pass" if printed_verdict.status == "fail" else "fail", first, "erratum",
                       {"printed": printed_verdict.expected}, printed_verdict.measured, (printed_verdict,))
    if corrected_verdict.status == "pass":
        second = f"corrected statement holds: {corrected_verdict.message}"
    else:
        second = f"corrected statement FAILS too: {corrected_verdict.message}"
    ok = printed_verdict.status == "fail" and corrected_verdict.status == "pass"
    if printed_verdict.measured == corrected_verdict.measured:
        measured = dict(printed_verdict.measured)
    else:
        measured = {"printed": printed_verdict.measured, "corrected": corrected_verdict.measured}
    expected = {"printed": printed_verdict.expected, "corrected": corrected_verdict.expected}
    return Verdict("pass" if ok else "fail", f"{first}; {second}", "erratum", expected, measured,
                   (printed_verdict, corrected_verdict))


# --------------------------------------------------------------------------- records

_KEYS = ("id", "paper", "aliases", "title", "kind", "status", "expected", "measured",
         "figure", "seconds", "message", "test", "notes", "proxy", "wrong_in", "measured_at", "commit",
         "experiment", "preset", "parameters", "step_of")


@dataclass(frozen=True)
class ClaimRecord:
    """One row of the claims report (README, "The claims report").

    Attributes
    ----------
    id : str
        Claim ID, e.g. ``"resnet-node/prop-3"``.
    paper : str
        Its paper key.
    aliases : tuple of str
        The same statement's IDs in other documents, e.g. ``("sander-thesis/prop-2.9",)``.
    title : str
        The statement in one line.
    kind : str
        One of :data:`KINDS`.
    status : str
        One of :data:`STATUSES`; follows the pytest outcome (a crash is a fail).
    proxy : str or None
        Set when the check's instances lie outside the statement's hypotheses (sizes far below
        what a theorem needs, say): the reason, in one line. Such a record measures the same
        quantity in a reachable regime; whatever its status it never counts as verifying the
        statement, and the report lists it apart.
    wrong_in : str or None
        Erratum records only: one of :data:`WRONG_IN` (the printed statement is false, a proof
        step or constant is wrong while the statement holds, or a displayed formula is wrong).
    measured_at, commit : str or None
        When (ISO time, UTC) and on which git commit the check ran; the report keeps the records
        of the claims a run did not select, so these tell which run measured each record.
    experiment, preset : str or None
        The registered experiment that measures the claim and its preset (``theory run <id>`` reruns it).
    parameters : tuple of str
        The experiment's parameters (``theory run <id> --set NAME=VALUE``).
    step_of : tuple of str
        The claims whose proof this statement is a step of (a lemma or an intermediate estimate of a
        theorem checked where the theorem's own hypotheses are out of reach); the report counts, per
        theorem, the steps of its proof that pass.
    expected, measured : dict
        What the statement predicts and what the check measured.
    figure : str or None
        Path of the figure, relative to the repository root.
    seconds : float
        Duration of the check's call phase.
    message : str
        The verdict message, skip reason or crash message.
    test : str or None
        The pytest node ID of the check.
    notes : tuple of str
        Remarks: merged duplicates, values written as null, a missing figure.
    """

    id: str
    paper: str
    aliases: tuple[str, ...]
    title: str
    kind: str
    status: str
    expected: dict
    measured: dict
    figure: str | None = None
    seconds: float = 0.0
    message: str = ""
    test: str | None = None
    notes: tuple[str, ...] = field(default=())
    proxy: str | None = None
    wrong_in: str | None = None
    measured_at: str | None = None
    commit: str | None = None
    experiment: str | None = None
    preset: str | None = None
    parameters: tuple[str, ...] = field(default=())
    step_of: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        paper, _ = parse_claim_id(self.id)
        if self.paper != paper:
            raise ValueError(f"ClaimRecord {self.id!r} has paper {self.paper!r}; its ID says {paper!r}")
        if self.kind not in KINDS:
            raise ValueError(f"ClaimRecord {self.id!r} has unknown kind {self.kind!r}; known: {', '.join(KINDS)}")
        if self.status not in STATUSES:
            raise ValueError(
                f"ClaimRecord {self.id!r} has unknown status {self.status!r}; known: {', '.join(STATUSES)}"
            )
        if self.proxy is not None and (not isinstance(self.proxy, str) or not self.proxy.strip()):
            raise ValueError(f"ClaimRecord {self.id!r}: `proxy` must be None or a non-empty reason; got {self.proxy!r}")
        if self.kind == "erratum":
            if self.wrong_in is None:
                object.__setattr__(self, "wrong_in", "statement")
            elif self.wrong_in not in WRONG_IN:
                raise ValueError(
                    f"ClaimRecord {self.id!r} has unknown wrong_in {self.wrong_in!r}; known: {', '.join(WRONG_IN)}"
                )
        elif self.wrong_in is not None:
            raise ValueError(f"ClaimRecord {self.id!r}: `wrong_in` is for erratum records only")
        object.__setattr__(self, "aliases", tuple(self.aliases))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "parameters", tuple(self.parameters))
        object.__setattr__(self, "step_of", tuple(self.step_of))
        for target in self.step_of:
            parse_claim_id(target)
            if target == self.id:
                raise ValueError(f"ClaimRecord {self.id!r}: `step_of` names the claim itself")

    def as_dict(self) -> dict:
        """The record as a dict with the report's key order (not yet made JSON-safe)."""
        data = {key: getattr(self, key) for key in _KEYS}
        data["aliases"] = list(self.aliases)
        data["step_of"] = list(self.step_of)
        data["notes"] = list(self.notes)
        data["parameters"] = list(self.parameters)
        return data


_RANK = {"fail": 0, "pass": 1, "skip": 2}


def merge_records(records: Iterable[ClaimRecord]) -> list[ClaimRecord]:
    """Merge records sharing a claim ID (several tests declaring one claim).

    The merged status is ``fail`` if any record fails, else ``pass`` if any passes, else
    ``skip``; measured, expected and figure come from the first record that measured
    something; seconds add up; a note lists the tests merged. Order of first appearance.

    Examples
    --------
    >>> a = ClaimRecord("scaling/cor-4", "scaling", (), "t", "rate", "pass", {}, {"slope": -1.0})
    >>> b = ClaimRecord("scaling/cor-4", "scaling", (), "t", "rate", "fail", {}, {"slope": 0.2})
    >>> [(r.status, r.measured) for r in merge_records([a, b])]
    [('fail', {'slope': -1.0})]
    """
    groups: dict[str, list[ClaimRecord]] = {}
    for record in records:
        groups.setdefault(record.id, []).append(record)
    merged = []
    for group in groups.values():
        if len(group) == 1:
            merged.append(group[0])
            continue
        first = next((r for r in group if r.measured), group[0])
        worst = min(group, key=lambda r: _RANK[r.status])
        tests = ", ".join(f"{r.test or '?'} ({r.status})" for r in group)
        notes = [n for r in group for n in r.notes]
        notes.append(f"merged from {len(group)} tests declaring this claim: {tests}")
        merged.append(
            ClaimRecord(
                id=first.id,
                paper=first.paper,
                aliases=tuple(dict.fromkeys(a for r in group for a in r.aliases)),
                title=first.title,
                kind=first.kind,
                status=worst.status,
                expected=first.expected,
                measured=first.measured,
                figure=first.figure,
                seconds=sum(r.seconds for r in group),
                message=worst.message,
                test=first.test,
                notes=tuple(notes),
                proxy=next((r.proxy for r in group if r.proxy), None),
                wrong_in=first.wrong_in,
                measured_at=first.measured_at,
                commit=first.commit,
                experiment=first.experiment,
                preset=first.preset,
                parameters=first.parameters,
            )
        )
    return merged
