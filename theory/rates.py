"""Measurements behind the claim checks: convergence rates, bound ratios, frequencies, identities.

Each function measures one kind of claim (a rate, a bound, a frequency, an identity) and returns a frozen result
object with documented fields. ``to_measured()`` on a result returns exactly the ``measured``
dict of the claims report: plain Python numbers and lists, non-finite floats as ``None``.

The functions compute and validate only; verdicts live in :mod:`theory.claims`, plots in
:mod:`theory.plots`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ._validation import plain

__all__ = [
    "RateFit",
    "fit_rate",
    "BoundResult",
    "bound_ratio",
    "BoundTracker",
    "FrequencyResult",
    "frequency",
    "IdentityResult",
    "identity_error",
    "to_plain",
]


# --------------------------------------------------------------------------- helpers


def to_plain(obj: Any, notes: list[str] | None = None, path: str = "value") -> Any:
    """Convert ``obj`` to plain JSON-able Python: NumPy scalars and arrays, tuples, mappings.

    Non-finite floats become ``None``; objects JSON cannot hold become their ``repr``. When
    ``notes`` is a list, each such replacement appends a line naming its ``path``.

    Examples
    --------
    >>> to_plain({"a": np.float64(1.5), "b": (np.int64(2), float("nan"))})
    {'a': 1.5, 'b': [2, None]}
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        if math.isfinite(value):
            return value
        if notes is not None:
            notes.append(f"{path} was {value!r}; written as null")
        return None
    if isinstance(obj, np.ndarray):
        obj = obj.tolist() if obj.ndim else obj.item()
        return to_plain(obj, notes, path)
    if isinstance(obj, Mapping):
        return {str(k): to_plain(v, notes, f"{path}.{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v, notes, f"{path}[{i}]") for i, v in enumerate(obj)]
    if notes is not None:
        notes.append(f"{path} is a {type(obj).__name__}; written as its repr")
    return repr(obj)


def _grid_plain(values: np.ndarray) -> list:
    """Grid values as a list: ints when every value is integral (depths, sample sizes)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size and np.all(values == np.round(values)) and np.all(np.abs(values) < 2.0**53):
        return [int(v) for v in values]
    return [float(v) for v in values]


def _real_array(value: Any, name: str, where: str) -> np.ndarray:
    """``value`` as a new float64 array, or a ``ValueError`` naming the argument."""
    try:
        array = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"`{name}` of {where} must be array-like; got {value!r}") from exc
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise ValueError(
            f"`{name}` of {where} must hold real numbers; got dtype {array.dtype}"
        )
    return np.array(array, dtype=np.float64)


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array


def _level(level: Any, where: str) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)):
        raise ValueError(f"`level` of {where} must be a number in (0, 1); got {plain(level)!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"`level` of {where} must be in (0, 1); got {plain(level)!r}")
    return float(level)


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True, eq=False)
class RateFit:
    """Least-squares rate of ``error ~ C * grid**slope``, fitted on log-log axes.

    Attributes
    ----------
    slope : float
        Fitted exponent (e.g. -1.0 for an O(1/N) error).
    intercept : float
        Fitted ``log C``.
    ci : tuple of float
        Percentile bootstrap confidence interval ``(low, high)`` of ``slope`` at ``level``.
    r2 : float
        Coefficient of determination of the log-log fit over the kept points.
    grid : ndarray, shape (G,)
        Grid sizes, as given.
    errors : ndarray, shape (G,) or (S, G)
        Errors as given, one row per seed when several seeds were run.
    dropped : tuple of float
        Grid values at which at least one point was dropped (error at or below the floor,
        or non-finite).
    level : float
        Confidence level of ``ci``.
    kept : ndarray of bool, same shape as ``errors``, or None
        Which points entered the fit. ``None`` (a hand-built fit) means every finite positive
        point at a grid value not in ``dropped``.
    """

    slope: float
    intercept: float
    ci: tuple[float, float]
    r2: float
    grid: np.ndarray
    errors: np.ndarray
    dropped: tuple[float, ...]
    level: float = 0.95
    kept: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", _frozen(self.grid))
        object.__setattr__(self, "errors", _frozen(self.errors))
        object.__setattr__(self, "ci", tuple(float(c) for c in self.ci))
        object.__setattr__(self, "dropped", tuple(float(g) for g in self.dropped))
        if self.kept is not None:
            kept = np.array(self.kept, dtype=bool)
            kept.setflags(write=False)
            object.__setattr__(self, "kept", kept)

    def mean_errors(self) -> np.ndarray:
        """Mean over seeds of the finite errors at each grid size (NaN where none is finite)."""
        errors = np.atleast_2d(self.errors)
        finite = np.isfinite(errors)
        count = finite.sum(axis=0)
        total = np.where(finite, errors, 0.0).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    def to_measured(self) -> dict:
        """The report's ``measured`` dict: slope, ci, r2, grid, errors, dropped."""
        return {
            "slope": to_plain(self.slope),
            "ci": to_plain(list(self.ci)),
            "r2": to_plain(self.r2),
            "grid": _grid_plain(self.grid),
            "errors": to_plain(self.mean_errors()),
            "dropped": _grid_plain(np.array(self.dropped)),
        }


def _ols_slopes(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares slopes of ``y`` on ``x`` for each row of weights ``w``.

    ``x`` and ``y`` have shape (P,), ``w`` has shape (B, P); returns shape (B,).
    """
    sw = w.sum(axis=1)
    xm = (w @ x) / sw
    ym = (w @ y) / sw
    dx = x[None, :] - xm[:, None]
    dy = y[None, :] - ym[:, None]
    return (w * dx * dy).sum(axis=1) / (w * dx * dx).sum(axis=1)


def fit_rate(
    grid: Any,
    errors: Any,
    *,
    floor: float = 0.0,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> RateFit:
    r"""Fit the convergence rate ``error ~ C * grid**slope`` by least squares on log-log axes.

    The slope minimises :math:`\sum_{s, g} (\log e_{s g} - a - b \log N_g)^2` over the kept
    points; its confidence interval is a percentile bootstrap. With several seeds the bootstrap
    resamples seeds (rows of ``errors``), so that the points of one seed stay together;
    with one seed it resamples the (grid, error) pairs. A resample with fewer than two distinct
    grid values is drawn again.

    Parameters
    ----------
    grid : array_like, shape (G,)
        Distinct positive grid sizes (depth N, sample size n, ...), best a geometric ladder.
    errors : array_like, shape (G,) or (S, G)
        Errors at each grid size, one row per seed when ``S > 1``; non-negative.
    floor : float, optional
        Points with ``error <= floor`` are dropped (e.g. ``1e-13`` for errors at the float64
        floor), as are non-finite points; their grid values are listed in ``dropped``.
    n_boot : int, optional
        Number of bootstrap resamples.
    level : float, optional
        Confidence level of the interval, in (0, 1).
    seed : int, optional
        Seed of the ``numpy.random.Generator`` driving the bootstrap.

    Returns
    -------
    RateFit

    Raises
    ------
    ValueError
        If an argument is malformed, or fewer than 3 grid sizes keep a point.

    Notes
    -----
    The grid should lie in the asymptotic regime, with at least 5 sizes; this function requires
    3 kept sizes and leaves the rest to the check.

    Examples
    --------
    >>> N = np.array([8, 16, 32, 64, 128])
    >>> fit = fit_rate(N, 3.0 / N)
    >>> round(fit.slope, 12), fit.dropped
    (-1.0, ())
    """
    where = "theory.rates.fit_rate"
    grid = _real_array(grid, "grid", where)
    if grid.ndim != 1:
        raise ValueError(f"`grid` of {where} must be one-dimensional; got shape {grid.shape}")
    if not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"`grid` of {where} must be positive and finite; got {grid.tolist()}")
    if np.unique(grid).size != grid.size:
        raise ValueError(f"`grid` of {where} must hold distinct values; got {grid.tolist()}")
    errors = _real_array(errors, "errors", where)
    if errors.ndim not in (1, 2) or errors.shape[-1] != grid.size:
        raise ValueError(
            f"`errors` of {where} must have shape ({grid.size},) or (n_seeds, {grid.size}) "
            f"to match `grid`; got shape {errors.shape}"
        )
    if errors.size == 0:
        raise ValueError(f"`errors` of {where} must not be empty")
    if np.any(np.isfinite(errors) & (errors < 0)):
        raise ValueError(f"`errors` of {where} must be non-negative; got a minimum of {np.nanmin(errors)}")
    if isinstance(floor, bool) or not isinstance(floor, (int, float, np.floating)):
        raise ValueError(f"`floor` of {where} must be a non-negative number; got {plain(floor)!r}")
    if not (math.isfinite(floor) and floor >= 0):
        raise ValueError(f"`floor` of {where} must be finite and non-negative; got {plain(floor)!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"`n_boot` of {where} must be a positive integer; got {plain(n_boot)!r}")
    level = _level(level, where)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` of {where} must be a non-negative integer; got {plain(seed)!r}")

    rows = np.atleast_2d(errors)
    n_seeds, n_grid = rows.shape
    kept = np.isfinite(rows) & (rows > floor)
    kept_sizes = int(kept.any(axis=0).sum())
    dropped = tuple(float(g) for g in np.sort(grid[(~kept).any(axis=0)]))
    if kept_sizes < 3:
        raise ValueError(
            f"{where} needs points above `floor` = {floor:g} at 3 or more grid sizes; "
            f"{kept_sizes} kept (dropped grid values: {list(dropped)})"
        )

    x = np.broadcast_to(np.log(grid), rows.shape).ravel()
    y = np.log(np.where(kept, rows, 1.0)).ravel()
    w = kept.ravel().astype(np.float64)
    slope = float(_ols_slopes(x, y, w[None, :])[0])
    intercept = float((w @ y - slope * (w @ x)) / w.sum())
    resid = (y - intercept - slope * x)[w > 0]
    centred = y[w > 0] - y[w > 0].mean()
    ss_res, ss_tot = float(resid @ resid), float(centred @ centred)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else math.nan)

    rng = np.random.default_rng(seed)
    kept_index = np.flatnonzero(w)

    def draw(n: int) -> np.ndarray:
        weights = np.zeros((n, w.size))
        if n_seeds > 1:  # resample seeds: each row of errors keeps its points together
            counts = rng.multinomial(n_seeds, np.full(n_seeds, 1.0 / n_seeds), size=n)
            weights[:] = (counts[:, :, None] * kept[None, :, :]).reshape(n, -1)
        else:  # resample the kept (grid, error) pairs
            k = kept_index.size
            weights[:, kept_index] = rng.multinomial(k, np.full(k, 1.0 / k), size=n)
        return weights

    slopes = np.empty(n_boot)
    todo = np.arange(n_boot)
    for _ in range(1000):
        weights = draw(todo.size)
        sizes = (weights.reshape(todo.size, n_seeds, n_grid).sum(axis=1) > 0).sum(axis=1)
        ok = sizes >= 2
        slopes[todo[ok]] = _ols_slopes(x, y, weights[ok])
        todo = todo[~ok]
        if todo.size == 0:
            break
    else:  # pragma: no cover - needs a vanishing chance of a valid resample
        raise RuntimeError(f"{where}: could not draw bootstrap resamples with two grid sizes")
    alpha = 1.0 - level
    low, high = np.percentile(slopes, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return RateFit(
        slope=slope,
        intercept=intercept,
        ci=(float(low), float(high)),
        r2=float(r2),
        grid=grid,
        errors=errors,
        dropped=dropped,
        level=level,
        kept=kept.reshape(errors.shape),
    )


# --------------------------------------------------------------------------- bounds


@dataclass(frozen=True, eq=False)
class BoundResult:
    """Largest ratio LHS/RHS of an explicit bound ``LHS <= RHS`` over the instances tried.

    Attributes
    ----------
    ratio : float
        ``max LHS/RHS`` over all instances; NaN if some LHS was NaN.
    n_instances : int
        Number of instances.
    worst : object
        The instance giving ``ratio`` (e.g. a dict of its parameters), or its index when no
        instances were given.
    lhs, rhs : ndarray, shape (n_instances,), or None
        The per-instance values, kept for plots.
    search : WorstCase or None
        The worst-case search over the statement's hypothesis set
        (:func:`theory.worst_case.search_worst_case`), when one was run: :func:`theory.claims.bound_verdict`
        then also asks its largest ratio to stay within the bound. Attach one with :meth:`with_search`.
    """

    ratio: float
    n_instances: int
    worst: Any = None
    lhs: np.ndarray | None = field(default=None, repr=False)
    rhs: np.ndarray | None = field(default=None, repr=False)
    search: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ratio", float(self.ratio))
        object.__setattr__(self, "n_instances", int(self.n_instances))
        for name in ("lhs", "rhs"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _frozen(np.ravel(getattr(self, name))))

    def to_measured(self) -> dict:
        """The report's ``measured`` dict: ratio, n_instances, worst (and the search's, when there is one)."""
        out = {
            "ratio": to_plain(self.ratio),
            "n_instances": self.n_instances,
            "worst": to_plain(self.worst),
        }
        if self.search is not None:
            out["search"] = self.search.to_measured()
        return out

    def with_search(self, search: Any) -> BoundResult:
        """This result with the worst-case search ``search`` (a :class:`theory.worst_case.WorstCase`) attached."""
        if not (hasattr(search, "to_measured") and hasattr(search, "ratio")):
            raise TypeError(f"`search` of theory.rates.BoundResult.with_search must be a theory.worst_case.WorstCase; "
                            f"got {plain(search)!r}")
        return dataclasses.replace(self, search=search)


def bound_ratio(lhs: Any, rhs: Any, instances: Any = None) -> BoundResult:
    """Largest ratio LHS/RHS over instances of an explicit bound ``LHS <= RHS``.

    Parameters
    ----------
    lhs, rhs : array_like, broadcastable to a common shape
        Left- and right-hand sides per instance; ``rhs`` must be positive and finite. A NaN in
        ``lhs`` makes the ratio NaN (and the bound's verdict a fail).
    instances : sequence, optional
        One JSON-able description per instance (e.g. a dict of parameters), in the order of
        the flattened arrays; the one with the largest ratio becomes ``worst``.

    Returns
    -------
    BoundResult

    Examples
    --------
    >>> r = bound_ratio([1.0, 3.0, 2.0], [2.0, 4.0, 4.0], instances=["a", "b", "c"])
    >>> r.ratio, r.n_instances, r.worst
    (0.75, 3, 'b')
    """
    where = "theory.rates.bound_ratio"
    lhs = _real_array(lhs, "lhs", where)
    rhs = _real_array(rhs, "rhs", where)
    try:
        lhs, rhs = (a.ravel() for a in np.broadcast_arrays(lhs, rhs))
    except ValueError as exc:
        raise ValueError(
            f"`lhs` and `rhs` of {where} must have the same shape; got {lhs.shape} and {rhs.shape}"
        ) from exc
    if lhs.size == 0:
        raise ValueError(f"`lhs` and `rhs` of {where} must hold at least one instance")
    if not np.all(np.isfinite(rhs)) or np.any(rhs <= 0):
        raise ValueError(f"`rhs` of {where} must be positive and finite; got a minimum of {plain(np.nanmin(rhs))!r}")
    if instances is not None and len(instances) != lhs.size:
        raise ValueError(
            f"`instances` of {where} must have one entry per instance ({lhs.size}); got {len(instances)}"
        )
    with np.errstate(over="ignore"):  # a ratio beyond 1e308 is inf: the bound fails, as it should
        ratios = lhs / rhs
    nan = np.isnan(ratios)
    i = int(np.argmax(nan)) if nan.any() else int(np.argmax(ratios))
    worst = instances[i] if instances is not None else i
    return BoundResult(float(ratios[i]), lhs.size, worst, lhs=lhs, rhs=rhs)


class BoundTracker:
    """Running maximum of LHS/RHS over instances drawn one by one (e.g. by Hypothesis).

    The recorded ratio is the maximum over every instance added, never a case Hypothesis shrank
    to after a failure.

    Examples
    --------
    >>> tracker = BoundTracker()
    >>> tracker.add(1.0, 2.0, {"N": 4})
    0.5
    >>> tracker.add(0.9, 1.0, {"N": 8})
    0.9
    >>> tracker.result().to_measured()
    {'ratio': 0.9, 'n_instances': 2, 'worst': {'N': 8}}
    """

    def __init__(self) -> None:
        self._ratio = -math.inf
        self._worst: Any = None
        self._lhs: list[float] = []
        self._rhs: list[float] = []

    def add(self, lhs: Any, rhs: Any, instance: Any = None) -> float:
        """Add one instance (or an array of instances sharing ``instance``); return its ratio.

        The return value suits ``hypothesis.target``. ``instance`` defaults to the running
        index of the instance.
        """
        part = bound_ratio(lhs, rhs)
        if not math.isnan(self._ratio) and (math.isnan(part.ratio) or part.ratio > self._ratio):
            self._ratio = part.ratio
            self._worst = instance if instance is not None else len(self._lhs) + part.worst
        self._lhs.extend(part.lhs.tolist())
        self._rhs.extend(part.rhs.tolist())
        return part.ratio

    def result(self) -> BoundResult:
        """The bound result over all instances added so far."""
        if not self._lhs:
            raise ValueError("theory.rates.BoundTracker.result: no instance was added")
        return BoundResult(self._ratio, len(self._lhs), self._worst, lhs=self._lhs, rhs=self._rhs)


# --------------------------------------------------------------------------- frequencies


@dataclass(frozen=True)
class FrequencyResult:
    """Frequency of violation of a high-probability statement over independent runs.

    Attributes
    ----------
    freq : float
        ``violations / runs``.
    runs : int
        Number of independent runs (seeds).
    violations : int
        Number of runs in which the statement failed.
    delta : float or None
        The statement's failure probability, when given.
    ci : tuple of float
        Two-sided Clopper-Pearson interval of the violation probability at ``level``.
    level : float
        Confidence level of ``ci``.
    """

    freq: float
    runs: int
    violations: int
    delta: float | None
    ci: tuple[float, float]
    level: float = 0.95

    def to_measured(self) -> dict:
        """The report's ``measured`` dict: freq, runs, violations, ci."""
        return {
            "freq": to_plain(self.freq),
            "runs": self.runs,
            "violations": self.violations,
            "ci": to_plain(list(self.ci)),
        }


def frequency(violations: Any, delta: float | None = None, level: float = 0.95) -> FrequencyResult:
    """Frequency of violation over runs, with a Clopper-Pearson interval.

    Parameters
    ----------
    violations : array_like of bool
        ``True`` where the run violated the statement (0/1 integers are accepted).
    delta : float, optional
        The failure probability the statement allows, in [0, 1].
    level : float, optional
        Confidence level of the two-sided interval.

    Returns
    -------
    FrequencyResult

    Examples
    --------
    >>> r = frequency(np.zeros(100, dtype=bool), delta=0.05)
    >>> r.freq, r.ci[0], round(r.ci[1], 4)
    (0.0, 0.0, 0.0362)
    """
    where = "theory.rates.frequency"
    array = np.asarray(violations)
    if array.dtype != np.bool_:
        if not np.issubdtype(array.dtype, np.number) or not np.all(np.isin(array, (0, 1))):
            raise ValueError(f"`violations` of {where} must be booleans (or 0/1); got {array!r}")
        array = array.astype(bool)
    runs = int(array.size)
    if runs == 0:
        raise ValueError(f"`violations` of {where} must hold at least one run")
    if delta is not None:
        if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not 0 <= delta <= 1:
            raise ValueError(f"`delta` of {where} must be in [0, 1]; got {plain(delta)!r}")
        delta = float(delta)
    level = _level(level, where)
    k = int(array.sum())
    alpha = 1.0 - level
    low = float(stats.beta.ppf(alpha / 2, k, runs - k + 1)) if k > 0 else 0.0
    high = float(stats.beta.ppf(1 - alpha / 2, k + 1, runs - k)) if k < runs else 1.0
    return FrequencyResult(k / runs, runs, k, delta, (low, high), level)


# --------------------------------------------------------------------------- identities


@dataclass(frozen=True)
class IdentityResult:
    """Largest deviation of a computed quantity from an identity's other side.

    Attributes
    ----------
    max_abs_err : float
        ``max |computed - reference|`` over every entry.
    max_rel_err : float
        ``max |computed - reference| / |reference|`` over the entries whose reference is
        nonzero; NaN (written null, shown "n/a") when every reference entry is zero.
    n_instances : int
        Number of instances compared.
    norm_rel_err : float
        ``max |computed - reference| / max |reference|``, the normwise relative error; NaN when
        the reference is identically zero.
    zero_ref_abs_err : float
        ``max |computed|`` over the entries whose reference is zero (0 when there are none):
        the part of the absolute error that no relative error can express.
    """

    max_abs_err: float
    max_rel_err: float
    n_instances: int
    norm_rel_err: float = math.nan
    zero_ref_abs_err: float = 0.0

    def to_measured(self) -> dict:
        """The report's ``measured`` dict: max_abs_err, max_rel_err, norm_rel_err, n_instances."""
        return {
            "max_abs_err": to_plain(self.max_abs_err),
            "max_rel_err": to_plain(self.max_rel_err),
            "norm_rel_err": to_plain(self.norm_rel_err),
            "zero_ref_abs_err": to_plain(self.zero_ref_abs_err),
            "n_instances": self.n_instances,
        }

    def merge(self, other: IdentityResult) -> IdentityResult:
        """Combine with the result over further instances (NaN wins, except an undefined relative error)."""

        def worst(a: float, b: float, undefined_is_nan: bool) -> float:
            if undefined_is_nan and (math.isnan(a) or math.isnan(b)):
                # NaN here means "no nonzero reference", unless the absolute error is NaN too
                return b if math.isnan(a) else a
            return float(np.max([a, b]))

        abs_nan = math.isnan(self.max_abs_err) or math.isnan(other.max_abs_err)
        return IdentityResult(
            float(np.max([self.max_abs_err, other.max_abs_err])),
            math.nan if abs_nan else worst(self.max_rel_err, other.max_rel_err, True),
            self.n_instances + other.n_instances,
            math.nan if abs_nan else worst(self.norm_rel_err, other.norm_rel_err, True),
            float(np.max([self.zero_ref_abs_err, other.zero_ref_abs_err])),
        )


def identity_error(computed: Any, reference: Any, *, n_instances: int | None = None) -> IdentityResult:
    """Absolute and relative deviation of ``computed`` from ``reference``.

    Parameters
    ----------
    computed, reference : array_like, broadcastable to a common non-empty shape
        The two sides of the identity. NaN on either side makes the errors NaN.
    n_instances : int, optional
        Number of instances compared; defaults to the length of the first axis (1 for scalars).

    Returns
    -------
    IdentityResult

    Examples
    --------
    >>> r = identity_error([1.0, 2.0], [1.0, 2.5])
    >>> r.max_abs_err, r.max_rel_err, r.n_instances
    (0.5, 0.2, 2)
    """
    where = "theory.rates.identity_error"
    arrays = []
    for name, value in (("computed", computed), ("reference", reference)):
        array = np.asarray(value)
        if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.number):
            raise ValueError(f"`{name}` of {where} must hold numbers; got dtype {array.dtype}")
        arrays.append(array)
    try:
        c, r = np.broadcast_arrays(*arrays)
    except ValueError as exc:
        raise ValueError(
            f"`computed` and `reference` of {where} must have the same shape; "
            f"got {arrays[0].shape} and {arrays[1].shape}"
        ) from exc
    if c.size == 0:
        raise ValueError(f"`computed` and `reference` of {where} must not be empty")
    if n_instances is None:
        n_instances = c.shape[0] if c.ndim else 1
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.where(c == r, 0.0, np.abs(c - r))  # equal infinities match
        scale = np.abs(r)
        nonzero = scale > 0
        rel = np.where(diff == 0, 0.0, diff / np.where(nonzero, scale, 1.0))
        max_abs = float(np.max(diff))
        if math.isnan(max_abs):
            max_rel = norm_rel = math.nan
        else:
            max_rel = float(np.max(rel[nonzero])) if nonzero.any() else math.nan
            top = float(np.max(scale))
            norm_rel = max_abs / top if top > 0 else math.nan
        zero_err = float(np.max(diff[~nonzero])) if (~nonzero).any() else 0.0
    return IdentityResult(max_abs, max_rel, int(n_instances), norm_rel, zero_err)
