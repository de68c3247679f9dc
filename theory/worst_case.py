r"""Worst-case search of an explicit bound ``LHS <= RHS`` over its hypothesis set.

A bound checked only at random instances says little about its constant when those instances sit far
from the extremal ones. :func:`search_worst_case` looks for the instance of a declared box of parameters
(the statement's hypotheses, in the coordinates the caller chooses) that maximises

.. math::

    \rho(\theta) = \mathrm{LHS}(\theta) / \mathrm{RHS}(\theta),

under a fixed budget of evaluations and a fixed seed, so that the search is reproducible and its cost
is stated:

1. exploration: the first points of a scrambled Sobol sequence over the unit cube (``explore`` of the
   budget), mapped to the box coordinate by coordinate (linear, logarithmic or integer scales);
2. refinement: Nelder-Mead on :math:`-\log\rho` in the unit cube, from the best ``starts`` explored
   points (duplicates removed), sharing the rest of the budget; integer coordinates are rounded when an
   instance is built, and an instance seen before is not evaluated again (the cache counts once).

The result, :class:`WorstCase`, holds the largest ratio found, its instance, both sides, the evaluations
spent and the best ratio after each evaluation (for a convergence plot). Where the bound's right-hand
side is a printed constant times a function, ``C g(θ)``, the smallest constant that still holds over the
searched set is ``C`` times the largest ratio found (:attr:`WorstCase.smallest_constant`): a ratio far
below 1 measures how loose the printed constant is, a ratio above 1 is a counterexample.

Nothing here proves a supremum: the search gives a lower bound on it, and the report says so.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from theory._validation import plain, plain_repr
from theory.rates import to_plain

__all__ = ["Dim", "WorstCase", "search_worst_case", "SCALES"]

#: how a coordinate of the unit cube maps to a parameter
SCALES = ("linear", "log", "int", "log-int", "choice")


@dataclass(frozen=True)
class Dim:
    """One coordinate of the searched box: ``name`` in ``[low, high]`` on a ``scale`` of :data:`SCALES`.

    ``"log"`` and ``"log-int"`` need ``low > 0`` and spread the search evenly in the logarithm; ``"int"``
    and ``"log-int"`` round to the nearest integer (both ends included). A categorical coordinate (an
    architecture, a law, an activation) is :meth:`choice`: its values are the labels themselves.

    Examples
    --------
    >>> Dim("L", 1, 1000, "log-int").value(0.5)
    32
    >>> Dim("K", 0.0, 2.0).value(0.25)
    0.5
    >>> Dim.choice("law", ("gaussian", "uniform", "rademacher")).value(0.5)
    'uniform'
    """

    name: str
    low: float
    high: float
    scale: str = "linear"
    choices: tuple = ()

    @classmethod
    def choice(cls, name: str, choices) -> Dim:
        """A categorical coordinate taking the values ``choices`` (labels or numbers, at least one), each on an
        equal share of the unit interval."""
        choices = tuple(choices)
        if not choices:
            raise ValueError(f"`choices` of theory.worst_case.Dim.choice ({name!r}) must hold at least one value.")
        return cls(name, 0.0, float(len(choices) - 1), "choice", choices)

    def __post_init__(self) -> None:
        where = "theory.worst_case.Dim"
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"`name` of {where} must be a non-empty string; got {plain_repr(self.name)}.")
        if self.scale not in SCALES:
            raise ValueError(f"`scale` of {where} must be one of {SCALES}; got {plain_repr(self.scale)}.")
        if (self.scale == "choice") != bool(self.choices):
            raise ValueError(f"{where} ({self.name!r}): `choices` go with the scale 'choice' (use Dim.choice), "
                             f"and only with it.")
        object.__setattr__(self, "choices", tuple(self.choices))
        for end in ("low", "high"):
            value = getattr(self, end)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"`{end}` of {where} ({self.name!r}) must be a finite real; got {plain_repr(value)}.")
            object.__setattr__(self, end, float(value))
        if not self.low <= self.high:
            raise ValueError(f"`low` of {where} ({self.name!r}) must be <= `high`; got [{self.low}, {self.high}].")
        if self.scale.startswith("log") and self.low <= 0.0:
            raise ValueError(f"`low` of {where} ({self.name!r}) must be > 0 on a {self.scale} scale; got {self.low}.")
        if self.scale.endswith("int") and math.ceil(self.low) > math.floor(self.high):
            raise ValueError(f"{where} ({self.name!r}): [{self.low}, {self.high}] holds no integer.")

    def unit(self, x) -> float:
        """The unit coordinate of the parameter value ``x`` (the inverse of :meth:`value` on the box; a label
        for a categorical coordinate maps to the middle of its share). Raises ValueError outside the box.

        Examples
        --------
        >>> d = Dim("L", 1, 1000, "log-int")
        >>> d.value(d.unit(32))
        32
        """
        where = f"theory.worst_case.Dim.unit ({self.name!r})"
        if self.scale == "choice":
            if x not in self.choices:
                raise ValueError(f"{where}: {plain_repr(x)} is not one of {self.choices}.")
            return (self.choices.index(x) + 0.5) / len(self.choices)
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
            raise ValueError(f"{where}: the value must be a finite real; got {plain_repr(x)}.")
        x = float(x)
        if not self.low <= x <= self.high:
            raise ValueError(f"{where}: {x!r} lies outside [{self.low!r}, {self.high!r}].")
        if self.scale.endswith("int") and x != round(x):
            raise ValueError(f"{where}: {x!r} is not an integer.")
        if self.high == self.low:
            return 0.0
        if self.scale.startswith("log"):
            return (math.log(x) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (x - self.low) / (self.high - self.low)

    def value(self, u: float) -> float | int:
        """The parameter at the unit coordinate ``u`` (clipped to [0, 1])."""
        u = min(max(float(u), 0.0), 1.0)
        if self.scale == "choice":
            return self.choices[min(int(u * len(self.choices)), len(self.choices) - 1)]
        if self.scale.startswith("log"):
            x = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            x = self.low + u * (self.high - self.low)
        x = min(max(x, self.low), self.high)
        if self.scale.endswith("int"):
            return int(min(max(round(x), math.ceil(self.low)), math.floor(self.high)))
        return x


@dataclass(frozen=True)
class WorstCase:
    """The outcome of :func:`search_worst_case`.

    Attributes
    ----------
    ratio : float
        The largest LHS/RHS found (NaN if some LHS was NaN: the bound's verdict then fails).
    instance : dict
        The parameters where it was found (the fixed ones included).
    lhs, rhs : float
        Both sides there.
    evaluations : int
        Instances evaluated (each distinct instance once).
    budget : int
        The evaluations allowed.
    seed : int
        The seed of the Sobol scrambling.
    method : str
        The search in words (exploration points, starts).
    dims : tuple of Dim
        The box searched.
    constant : tuple (str, float) or None
        The stated constant of the right-hand side, ``(name, value)``, when it is one factor (the printed one,
        or a corrected one for the record of a corrected statement).
    outside : int
        Instances the ratio function refused (returned None: outside the hypotheses).
    trace : ndarray
        The best ratio after each evaluation.
    redraws : tuple of float
        The ratio at the worst instance with its random coordinate (``redraw_dim`` of
        :func:`search_worst_case`) set to fresh values: a search over seeds picks the largest fluctuation of
        a Monte-Carlo estimate, and these say how typical it is (empty when not asked for).
    redraw_dim : str or None
        The coordinate redrawn.
    """

    ratio: float
    instance: dict
    lhs: float
    rhs: float
    evaluations: int
    budget: int
    seed: int
    method: str
    dims: tuple = ()
    constant: tuple | None = None
    outside: int = 0
    trace: np.ndarray = field(default=None, repr=False)
    redraws: tuple = ()
    redraw_dim: str | None = None

    @classmethod
    def from_trials(cls, instances, lhs, rhs, *, budget: int, seed: int, method: str, dims=(),
                    constant: tuple | None = None) -> WorstCase:
        """The outcome of a search run elsewhere (a Hypothesis search with ``target``, an optimiser of the
        experiment's own): the instances it evaluated, in order, and both sides at each.

        Examples
        --------
        >>> wc = WorstCase.from_trials([{"x": 0.1}, {"x": 0.5}], [0.09, 0.25], [0.25, 0.25], budget=2, seed=0,
        ...                            method="Hypothesis, 2 examples")
        >>> wc.ratio, wc.instance, wc.evaluations
        (1.0, {'x': 0.5}, 2)
        """
        where = "theory.worst_case.WorstCase.from_trials"
        instances = list(instances)
        lhs = np.asarray(lhs, dtype=float).ravel()
        rhs = np.asarray(rhs, dtype=float).ravel()
        if not (len(instances) == lhs.size == rhs.size) or lhs.size == 0:
            raise ValueError(f"`instances`, `lhs` and `rhs` of {where} must have one entry per trial (at least one); "
                             f"got {len(instances)}, {lhs.size} and {rhs.size}.")
        if not (np.all(np.isfinite(rhs)) and np.all(rhs > 0)):
            raise ValueError(f"`rhs` of {where} must be positive and finite at every trial.")
        with np.errstate(over="ignore"):
            ratios = lhs / rhs
        nan = np.isnan(ratios)
        trace = np.where(np.cumsum(nan) > 0, np.nan, np.fmax.accumulate(np.where(nan, -np.inf, ratios)))
        k = int(np.flatnonzero(nan)[0]) if nan.any() else int(np.argmax(ratios))
        if constant is not None:
            constant = (str(constant[0]), float(constant[1]))
        return cls(ratio=float(ratios[k]), instance=to_plain(instances[k]), lhs=float(lhs[k]), rhs=float(rhs[k]),
                   evaluations=int(lhs.size), budget=_check_int(budget, "budget", 1, where),
                   seed=_check_int(seed, "seed", 0, where),
                   method=str(method), dims=tuple(dims), constant=constant, trace=trace)

    @property
    def smallest_constant(self) -> float | None:
        """The stated constant times the largest ratio found: the smallest constant that still holds over
        the searched set (None without a stated constant)."""
        if self.constant is None:
            return None
        return self.constant[1] * self.ratio

    def to_measured(self) -> dict:
        """The report's ``search`` entry: ratio, instance, both sides, budget and constants."""
        out = {
            "ratio": to_plain(self.ratio),
            "instance": to_plain(self.instance),
            "lhs": to_plain(self.lhs),
            "rhs": to_plain(self.rhs),
            "evaluations": self.evaluations,
            "budget": self.budget,
            "seed": self.seed,
            "method": self.method,
            "box": {d.name: (list(to_plain(d.choices)) if d.choices else [to_plain(d.low), to_plain(d.high), d.scale])
                    for d in self.dims},
            "outside": self.outside,
        }
        if self.constant is not None:
            out["constant"] = {"name": self.constant[0], "stated": to_plain(self.constant[1]),
                               "smallest": to_plain(self.smallest_constant)}
        if self.redraws:
            r = np.asarray(self.redraws, dtype=float)
            out["redraws"] = {"dim": self.redraw_dim, "ratios": to_plain(list(r)), "median": to_plain(float(np.median(r))),
                              "max": to_plain(float(np.max(r)))}
        return out


def _check_int(value: Any, name: str, low: int, where: str = "theory.worst_case.search_worst_case") -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` of {where} must be an integer; got {plain_repr(value)}.")
    if value < low:
        raise ValueError(f"`{name}` of {where} must be >= {low}; got {value}.")
    return int(value)


def search_worst_case(ratio: Callable[[dict], Any], dims: Sequence[Dim], *, budget: int = 200, seed: int = 0,
                      starts: int = 4, explore: float = 0.5, fixed: Mapping | None = None,
                      constant: tuple | None = None, initial: Sequence[Mapping] | None = None, redraw: int = 0,
                      redraw_dim: str = "seed") -> WorstCase:
    """Search the box ``dims`` for the instance maximising LHS/RHS of a bound.

    Parameters
    ----------
    ratio : callable
        ``ratio(instance)`` with ``instance`` a dict (the box's parameters and ``fixed``), returning
        ``(lhs, rhs)`` with ``rhs > 0``, or None for an instance outside the statement's hypotheses (a
        constraint between coordinates the box cannot express); it counts as an evaluation.
    dims : sequence of Dim
        The box; distinct names. Empty: the one instance ``fixed`` is evaluated.
    budget : int, keyword-only
        Evaluations allowed (>= 1), exploration and refinement together.
    seed : int, keyword-only
        Seed of the scrambled Sobol sequence (>= 0).
    starts : int, keyword-only
        Nelder-Mead refinements from the best explored points (>= 0; 0: exploration only).
    explore : float, keyword-only
        Share of the budget spent on exploration, in (0, 1].
    fixed : dict, optional
        Parameters held fixed, added to every instance.
    constant : (str, float), optional
        The stated constant of the right-hand side (name, value), when the RHS is that constant times
        a function (the printed constant, or the corrected one for a corrected statement): the result then
        states the smallest constant that still holds.
    initial : sequence of dict, optional
        Instances to evaluate first (each giving every coordinate of the box, inside it): the cases where the
        proof's inequalities are tight, or a worst case known from an earlier search. They count against the
        budget, take the place of as many exploration points, and compete with the explored points for the
        Nelder-Mead starts. High-dimensional boxes need them: a few hundred evaluations explore a box of ten
        or more coordinates only coarsely.
    redraw : int, keyword-only
        After the search, evaluate the worst instance again with the coordinate ``redraw_dim`` set to this
        many fresh values (drawn from ``seed``, beyond the budget): for a ratio estimated by Monte Carlo, the
        search picks the largest fluctuation, and the redraws (:attr:`WorstCase.redraws`) say how typical it
        is. 0 (default): none.
    redraw_dim : str, keyword-only
        The random coordinate redrawn (an integer coordinate of the box; default ``"seed"``).

    Returns
    -------
    WorstCase

    Raises
    ------
    TypeError, ValueError
        An argument of the wrong kind or value (named); ``rhs`` not positive and finite at an instance
        (the bound's right-hand side must be defined on its hypotheses).

    Examples
    --------
    >>> sq = lambda inst: (inst["x"] * (1.0 - inst["x"]), 0.25)     # x(1 - x) <= 1/4, equality at 1/2
    >>> wc = search_worst_case(sq, [Dim("x", 0.0, 1.0)], budget=60, seed=0)
    >>> round(wc.ratio, 4), round(wc.instance["x"], 2), wc.evaluations
    (1.0, 0.5, 58)

    A known extremal instance given as a start is evaluated first, exactly:

    >>> wc = search_worst_case(sq, [Dim("x", 0.0, 1.0)], budget=10, seed=0, initial=[{"x": 0.5}])
    >>> wc.ratio, wc.instance, wc.method
    (1.0, {'x': 0.5}, '1 given instance, 4 Sobol points, then Nelder-Mead from the best 4')
    """
    where = "theory.worst_case.search_worst_case"
    if not callable(ratio):
        raise TypeError(f"`ratio` of {where} must be callable; got {plain_repr(ratio)}.")
    dims = tuple(dims)
    if not all(isinstance(d, Dim) for d in dims):
        raise TypeError(f"`dims` of {where} must hold theory.worst_case.Dim objects.")
    names = [d.name for d in dims]
    if len(set(names)) != len(names):
        raise ValueError(f"`dims` of {where} must have distinct names; got {names}.")
    budget = _check_int(budget, "budget", 1)
    seed = _check_int(seed, "seed", 0)
    starts = _check_int(starts, "starts", 0)
    if isinstance(explore, bool) or not isinstance(explore, numbers.Real) or not 0.0 < explore <= 1.0:
        raise ValueError(f"`explore` of {where} must lie in (0, 1]; got {plain_repr(explore)}.")
    fixed = dict(fixed or {})
    clash = sorted(set(fixed) & set(names))
    if clash:
        raise ValueError(f"`fixed` of {where} repeats coordinates of the box: {clash}.")
    if constant is not None:
        if (not isinstance(constant, tuple) or len(constant) != 2 or not isinstance(constant[0], str)
                or isinstance(constant[1], bool) or not isinstance(constant[1], numbers.Real)
                or not (math.isfinite(constant[1]) and constant[1] > 0)):
            raise ValueError(f"`constant` of {where} must be (name, positive finite value); got {plain_repr(constant)}.")
        constant = (constant[0], float(constant[1]))
    given = _check_initial(initial, dims, budget, where)
    redraw = _check_int(redraw, "redraw", 0)
    if redraw:
        target = next((d for d in dims if d.name == redraw_dim), None)
        if target is None or not target.scale.endswith("int"):
            raise ValueError(f"`redraw_dim` of {where} must name an integer coordinate of the box; "
                             f"got {plain_repr(redraw_dim)}.")

    state = _Search(ratio, dims, fixed, budget)
    k = len(dims)
    if k == 0:
        state.evaluate(np.zeros(0))
        method = "the one instance (no free parameter)"
    else:
        from scipy.stats import qmc

        n0 = min(budget, max(1, int(round(explore * budget))))
        points = [d_u for d_u, _ in given]
        scores = [state.evaluate(u, exact) for u, exact in given]
        n0 = min(max(0, n0 - len(given)), budget - len(given))
        if n0:
            # the first n0 points of a scrambled sequence of 2^m >= n0 (drawn whole: its balance needs a power of 2)
            sobol = qmc.Sobol(d=k, scramble=True, seed=seed).random_base2(max(0, math.ceil(math.log2(n0))))[:n0]
            points += list(sobol)
            scores += [state.evaluate(u) for u in sobol]
        method = (f"{len(given)} given instance{'s' * (len(given) != 1)}, " if given else "") + f"{n0} Sobol points"
        if starts and state.left() > 0:
            order = np.argsort([-s for s in scores], kind="stable")
            chosen, seen = [], set()
            for i in order:
                key = state.key(points[i])
                if key in seen or not math.isfinite(scores[i]):
                    continue
                seen.add(key)
                chosen.append(points[i])
                if len(chosen) == starts:
                    break
            if chosen:
                _refine(state, chosen)
                method += f", then Nelder-Mead from the best {len(chosen)}"
    best = state.best
    if best is None:
        raise ValueError(f"{where}: every instance tried ({state.evaluations}) lay outside the hypotheses "
                         f"(`ratio` returned None); widen the box or relax its constraint.")
    redraws = _redraw(ratio, best[1], target, redraw, seed) if redraw else ()
    return WorstCase(ratio=best[0], instance=best[1], lhs=best[2], rhs=best[3], evaluations=state.evaluations,
                     budget=budget, seed=seed, method=method, dims=dims, constant=constant, outside=state.outside,
                     trace=np.asarray(state.trace, dtype=float), redraws=redraws,
                     redraw_dim=redraw_dim if redraw else None)


def _check_initial(initial, dims, budget, where) -> list:
    """The given starting instances as (unit point, exact instance) pairs, validated against the box."""
    if initial is None:
        return []
    if isinstance(initial, Mapping) or not isinstance(initial, Sequence):
        raise TypeError(f"`initial` of {where} must be a sequence of dicts (instances); got {plain_repr(initial)}.")
    names = [d.name for d in dims]
    out = []
    for j, inst in enumerate(initial):
        if not isinstance(inst, Mapping):
            raise TypeError(f"`initial[{j}]` of {where} must be a dict; got {plain_repr(inst)}.")
        if sorted(inst) != sorted(names):
            raise ValueError(f"`initial[{j}]` of {where} must give exactly the box's coordinates {names}; "
                             f"got {sorted(inst)}.")
        try:
            u = np.array([d.unit(inst[d.name]) for d in dims], dtype=float)
        except ValueError as exc:
            raise ValueError(f"`initial[{j}]` of {where}: {exc}") from None
        out.append((u, {d.name: (int(inst[d.name]) if d.scale.endswith("int") else inst[d.name]) for d in dims}))
    if len(out) > budget:
        raise ValueError(f"`initial` of {where} holds {len(out)} instances, more than the budget ({budget}).")
    return out


def _redraw(ratio, instance, dim, count, seed) -> tuple:
    """The ratio at ``instance`` with the integer coordinate ``dim`` at ``count`` fresh values."""
    rng = np.random.default_rng([seed, 0x5EED])
    low, high = math.ceil(dim.low), math.floor(dim.high)
    found = instance[dim.name]
    out = []
    for value in rng.integers(low, high, size=count, endpoint=True):
        if int(value) == found and high > low:
            value = low + (int(value) - low + 1) % (high - low + 1)
        sides = ratio({**instance, dim.name: int(value)})
        if sides is None:
            continue
        lhs, rhs = (float(v) for v in sides)
        with np.errstate(over="ignore"):
            out.append(lhs / rhs)
    return tuple(out)


class _Search:
    """Evaluations under the budget: the cache of instances seen, the best so far, the trace."""

    def __init__(self, ratio, dims, fixed, budget):
        self.ratio, self.dims, self.fixed, self.budget = ratio, dims, fixed, budget
        self.cache: dict = {}
        self.best: tuple | None = None
        self.evaluations = 0
        self.outside = 0
        self.trace: list = []

    def left(self) -> int:
        return self.budget - self.evaluations

    def instance(self, u) -> dict:
        inst = {d.name: d.value(x) for d, x in zip(self.dims, u)}
        inst.update(self.fixed)
        return inst

    def key(self, u, exact=None) -> tuple:
        inst = self.instance(u) if exact is None else {**exact, **self.fixed}
        return tuple(repr(plain(inst[name])) for name in [d.name for d in self.dims] + list(self.fixed))

    def evaluate(self, u, exact=None) -> float:
        """log ratio at the unit point u, or at the instance ``exact`` given whole (-inf outside the
        hypotheses or once the budget is spent)."""
        key = self.key(u, exact)
        if key in self.cache:
            return self.cache[key]
        if self.left() <= 0:
            return -math.inf
        inst = self.instance(u) if exact is None else {**exact, **self.fixed}
        out = self.ratio(inst)
        self.evaluations += 1
        if out is None:
            self.outside += 1
            score = -math.inf
        else:
            lhs, rhs = (float(v) for v in out)
            if not (math.isfinite(rhs) and rhs > 0.0):
                raise ValueError(f"theory.worst_case.search_worst_case: the right-hand side at {inst} is {rhs}; "
                                 f"it must be positive and finite on the hypotheses.")
            with np.errstate(over="ignore"):
                r = lhs / rhs
            score = math.nan if math.isnan(r) else (math.log(r) if r > 0 else -math.inf)
            if self.best is None or math.isnan(r) or (not math.isnan(self.best[0]) and r > self.best[0]):
                if self.best is None or not math.isnan(self.best[0]):
                    self.best = (r, to_plain(inst), lhs, rhs)
        self.cache[key] = score
        self.trace.append(math.nan if self.best is None else self.best[0])
        return score


def _refine(state: _Search, chosen: list) -> None:
    """Nelder-Mead on -log ratio in the unit cube from each chosen point, sharing the budget left."""
    from scipy.optimize import minimize

    k = len(state.dims)
    for j, x0 in enumerate(chosen):
        share = state.left() // (len(chosen) - j)
        if share < k + 2:
            continue
        stop = state.evaluations + share

        def objective(u):
            if state.evaluations >= stop:
                return math.inf
            s = state.evaluate(np.clip(u, 0.0, 1.0))
            return math.inf if math.isnan(s) else -s

        step = 0.1
        simplex = np.vstack([x0] + [np.clip(x0 + step * np.eye(k)[i] * (1 if x0[i] <= 0.5 else -1), 0, 1)
                                    for i in range(k)])
        minimize(objective, x0, method="Nelder-Mead", bounds=[(0.0, 1.0)] * k,
                 options={"maxfev": share, "initial_simplex": simplex, "xatol": 1e-6, "fatol": 1e-12})
        if state.best is not None and math.isnan(state.best[0]):
            return
