"""Oracle kernels: isotonic regression (p = 2)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


def _isotonic_cases() -> list[Case]:
    cases = []

    def add(name, y, w=None, increasing=True, **params):
        y = np.asarray(y, dtype=np.float64)
        w = np.ones_like(y) if w is None else np.asarray(w, dtype=np.float64)
        cases.append(Case(name, {"n": int(y.size), "increasing": increasing, **params},
                          {"y": y, "w": w, "increasing": bool(increasing)}))

    for n, seed in ((10, 1), (100, 2), (1000, 3)):
        r = _rng(seed)
        add(f"random_n{n}", r.standard_normal(n) + np.linspace(0, 2, n), seed=seed, law="normal + linear trend")
        r = _rng(seed + 10)
        add(f"weighted_n{n}", r.standard_normal(n) + np.linspace(0, 2, n), r.uniform(0.1, 10.0, n),
            seed=seed + 10, law="normal + trend, weights uniform(0.1, 10)")
        r = _rng(seed + 20)
        add(f"decreasing_n{n}", r.standard_normal(n) - np.linspace(0, 2, n), r.uniform(0.1, 10.0, n),
            increasing=False, seed=seed + 20, law="normal - trend, weights uniform(0.1, 10)")
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
    outputs=("x",),
    make_cases=_isotonic_cases,
    reference=_isotonic_reference,
    tolerance=_isotonic_tolerance,
    rule="max|x - x_ref| <= 4 n eps max|y|",
    why="each fitted value is a weighted mean of a block of responses: a running weighted sum of at most n "
        "terms rounds by at most n eps max|y| whatever the weights (they cancel in the ratio), and the fit is "
        "a continuous function of y, so a different pooling decision at a near-tie moves it by the same order",
))
