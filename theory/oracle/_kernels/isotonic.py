"""Oracle kernels: isotonic regression (p = 2)."""

from __future__ import annotations

import numpy as np

from ...experiments.config import Int
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _rng

#: the seeds of the generic cases at the built-in sizes (any other n uses _OTHER_SEED)
_SEEDS = {10: 1, 100: 2, 1000: 3}
_OTHER_SEED = 12


def _case(name, y, w=None, increasing=True, **params) -> Case:
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(y) if w is None else np.asarray(w, dtype=np.float64)
    return Case(name, {"n": int(y.size), "increasing": increasing, **params},
                {"y": y, "w": w, "increasing": bool(increasing)})


def _generic(n: int) -> list[Case]:
    """The three generic cases at size n (random, weighted, decreasing): the built-in ones at n = 10, 100, 1000
    and the cases at the user's n (``--param n=...``) alike."""
    from ..._validation import check_memory, check_work

    func = "the oracle's isotonic_regression cases"
    check_memory(8 * 8 * n, "n", n, func=func, hint="The cases and the reference hold about 8 arrays of n floats.")
    check_work(100 * n, "n", n, func=func)
    seed = _SEEDS.get(n, _OTHER_SEED)
    trend = np.linspace(0, 2, n)
    r = _rng(seed)
    out = [_case(f"random_n{n}", r.standard_normal(n) + trend, seed=seed, law="normal + linear trend")]
    r = _rng(seed + 10)
    out.append(_case(f"weighted_n{n}", r.standard_normal(n) + trend, r.uniform(0.1, 10.0, n),
                     seed=seed + 10, law="normal + trend, weights uniform(0.1, 10)"))
    r = _rng(seed + 20)
    out.append(_case(f"decreasing_n{n}", r.standard_normal(n) - trend, r.uniform(0.1, 10.0, n),
                     increasing=False, seed=seed + 20, law="normal - trend, weights uniform(0.1, 10)"))
    return out


def _isotonic_cases() -> list[Case]:
    cases = []
    for n in _SEEDS:
        cases += _generic(n)

    def add(name, y, w=None, increasing=True, **params):
        cases.append(_case(name, y, w, increasing, **params))

    add("n1", [3.25], seed=None, law="a single point")
    add("n2_violating", [2.0, 1.0], [1.0, 3.0], seed=None, law="one violation")
    add("sorted_n50", np.arange(50.0) / 7, seed=None, law="already increasing")
    add("reversed_n200", -np.arange(200.0) / 3, _rng(4).uniform(0.5, 2, 200), seed=4, law="all decreasing: one block")
    add("constant_n30", np.full(30, -1.5), seed=None, law="constant")
    r = _rng(5)
    add("ties_n300", r.integers(0, 5, 300).astype(float), seed=5, law="integers 0..4 (many ties)")
    r = _rng(6)
    add("ties_weighted_n300", r.integers(-3, 3, 300).astype(float), r.integers(1, 4, 300).astype(float),
        increasing=False, seed=6, law="integers -3..2, integer weights 1..3")
    r = _rng(7)
    add("huge_1e300_n50", 1e300 * (r.standard_normal(50) + np.linspace(0, 1, 50)), r.uniform(0.5, 2, 50),
        seed=7, law="normal * 1e300")
    r = _rng(8)
    add("tiny_1e-300_n50", 1e-300 * (r.standard_normal(50) + np.linspace(0, 1, 50)), r.uniform(0.5, 2, 50),
        seed=8, law="normal * 1e-300")
    r = _rng(9)
    add("nearly_singular_weights_n100", r.standard_normal(100),
        10.0 ** r.uniform(-12, 12, 100), seed=9, law="normal; weights 10^uniform(-12, 12)")
    r = _rng(11)
    add("random_walk_n10000", np.cumsum(r.standard_normal(10_000)), r.uniform(0.5, 2, 10_000), seed=11,
        law="random walk (long blocks)")
    return cases


def _isotonic_reference(y, w, increasing):
    from theory.isotonic import isotonic_regression

    x, _ = isotonic_regression(y, w, increasing=increasing)
    return (x,)


def _isotonic_tolerance(inputs, ref, eps):
    y = inputs["y"]
    return (4.0 * y.size * eps * float(np.max(np.abs(y))),)


register(Kernel(
    name="isotonic_regression",
    module="theory.isotonic",
    signature="fn(y, w, increasing) -> x   (weighted least squares, p = 2; w > 0; x nondecreasing if increasing)",
    make_cases=_isotonic_cases,
    reference=_isotonic_reference,
    tolerance=_isotonic_tolerance,
    rule="max|x - x_ref| <= 4 n eps max|y|",
    why="each fitted value is a weighted mean of a block of responses: a running weighted sum of at most n "
        "terms rounds by at most n eps max|y| whatever the weights (they cancel in the ratio), and the fit is "
        "a continuous function of y, so a different pooling decision at a near-tie moves it by the same order",
    arguments=(
        Argument("y", "(n,)", "float64", "the responses, in the order the constraint runs (index order)"),
        Argument("w", "(n,)", "float64", "positive weights (all ones in the unweighted cases: always given)"),
        Argument("increasing", "scalar", "bool", "True: x_1 <= ... <= x_n; False: x_1 >= ... >= x_n"),
    ),
    returns=(Argument("x", "(n,)", "float64", "the fitted values (not a result object, not the blocks)"),),
    conventions=(
        Convention("the loss",
                   "min sum_i w_i (x_i - y_i)^2 (p = 2 of the pooling problem of topk Section 7.5): the weight "
                   "multiplies the squared residual; no 1/2, no 1/n (neither changes the minimiser)",
                   "scipy.optimize.isotonic_regression(y, weights=w) and sklearn.isotonic.isotonic_regression"
                   "(y, sample_weight=w) use the same loss; code weighting the unsquared residual (w_i (x_i - y_i))^2 "
                   "has weights w^2",
                   "pass w as the weights; for a (w_i r_i)^2 loss pass sqrt(w)"),
        Convention("the direction and the order",
                   "a non-strict order along the index (no covariate): increasing=True nondecreasing, False "
                   "nonincreasing",
                   "scipy and scikit-learn take the same `increasing` flag; a function fitting increasing fits only "
                   "(R's isoreg); IsotonicRegression.fit(X, y) orders by a covariate X",
                   "a decreasing fit from an increasing-only function: x = -fn(-y, w); with a covariate pass "
                   "X = arange(n)"),
        Convention("the returned value",
                   "the array of fitted values x, shape (n,)",
                   "scipy.optimize.isotonic_regression returns an OptimizeResult (.x the fit, .blocks the blocks); "
                   "sklearn's IsotonicRegression has fit_transform and may clip to [y_min, y_max]",
                   "return .x of the OptimizeResult (examples/oracle/scipy_isotonic.py); leave y_min, y_max unset"),
    ),
    parameters=(
        Parameter("n", Int(low=1), 1000, "the size of the three generic cases random_n{n}, weighted_n{n} and "
                  "decreasing_n{n} (the built-in ones at n = 10, 100, 1000)"),
    ),
    generate=_generic,
))
