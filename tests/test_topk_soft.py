"""Tests of theory.topk.soft_sort / soft_rank and their JVPs (``topk`` §7.3, Props. 7.2/7.5): against the
permutahedron LP solved by SLSQP (theory.experiments.topk.permutahedron_lp), against Blondel et al.'s p = 2
closed form computed with SciPy's PAVA, properties (order, sums, permutations, reversal, scaling), the
exact hard and affine regimes, extreme magnitudes, central finite differences and input validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.experiments.topk import (SOFT_P, hard_rank_of, hard_rank_threshold, hard_sort_threshold,
                                     permutahedron_lp)
from theory.isotonic import ConvergenceWarning
from theory.topk import soft_rank, soft_rank_jvp, soft_sort, soft_sort_jvp

P_ALL = SOFT_P + (5.0,)
FUNCS = (soft_sort, soft_rank)


def _x(seed, n, scale=1.0):
    return np.random.default_rng(seed).standard_normal(n) * scale


# --------------------------------------------------------------------------- references


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**16), p=st.sampled_from(SOFT_P), log_reg=st.floats(-2.0, 2.0),
       descending=st.booleans())
def test_matches_permutahedron_lp(n, seed, p, log_reg, descending):
    x = _x(seed, n, 2.0)
    reg = float(10.0**log_reg)
    rho = np.arange(n, 0, -1, dtype=float)
    ys = permutahedron_lp(rho, x, reg, p)
    yr = permutahedron_lp(-x, rho, reg, p) if descending else permutahedron_lp(x, rho, reg, p)
    np.testing.assert_allclose(soft_sort(x, reg, p, descending), ys if descending else ys[::-1],
                               atol=1e-6 * max(1.0, np.abs(x).max()))
    np.testing.assert_allclose(soft_rank(x, reg, p, descending), yr, atol=1e-6 * n)


def blondel_sort(x, reg):
    """Blondel et al. (2020) quadratic soft sort: the projection of rho/reg onto P(x),
    rho/reg - v with v the decreasing isotonic fit of rho/reg - sort(x) (SciPy's PAVA)."""
    n = x.size
    z = np.arange(n, 0, -1, dtype=float) / reg
    v = scipy.optimize.isotonic_regression(z - np.sort(x)[::-1], increasing=False).x
    return z - v


def blondel_rank(x, reg):
    """Blondel et al. (2020) quadratic soft rank: the projection of -x/reg onto P(rho)."""
    n = x.size
    z = -x / reg
    sigma = np.argsort(-z)
    v = scipy.optimize.isotonic_regression(z[sigma] - np.arange(n, 0, -1, dtype=float), increasing=False).x
    out = np.empty(n)
    out[sigma] = z[sigma] - v
    return out


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**16), log_reg=st.floats(-3.0, 3.0), ties=st.booleans())
def test_p2_is_blondel_projection(n, seed, log_reg, ties):
    x = _x(seed, n)
    if ties:
        x = np.round(x, 1)
    reg = float(10.0**log_reg)
    np.testing.assert_allclose(soft_sort(x, reg), blondel_sort(x, reg), rtol=1e-12, atol=1e-12 * n / reg)
    np.testing.assert_allclose(soft_rank(x, reg), blondel_rank(x, reg), rtol=1e-12, atol=1e-12 * n)


# --------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**16), p=st.sampled_from(P_ALL), log_reg=st.floats(-3.0, 3.0),
       ties=st.booleans())
def test_properties(n, seed, p, log_reg, ties):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 3.0
    if ties:
        x = np.round(x)
    reg = float(10.0**log_reg)
    perm = rng.permutation(n)
    scale = max(1.0, np.abs(x).max())
    y = soft_sort(x, reg, p)
    assert np.all(np.diff(y) <= 1e-12 * scale)  # sorted, decreasing
    assert abs(y.sum() - x.sum()) <= 1e-11 * n * scale
    np.testing.assert_allclose(soft_sort(x[perm], reg, p), y, rtol=1e-13, atol=1e-13 * scale)  # invariant
    np.testing.assert_allclose(soft_sort(x, reg, p, descending=False), y[::-1], rtol=0, atol=0)
    np.testing.assert_allclose(-soft_sort(-x, reg, p), y[::-1], rtol=1e-9, atol=1e-9 * scale)
    r = soft_rank(x, reg, p)
    assert abs(r.sum() - n * (n + 1) / 2) <= 1e-11 * n * n
    assert np.all(r >= 1.0 - 1e-9) and np.all(r <= n + 1e-9)
    np.testing.assert_allclose(soft_rank(x[perm], reg, p), r[perm], rtol=1e-13, atol=1e-13 * n)  # equivariant
    np.testing.assert_array_equal(soft_rank(x, reg, p, descending=False), soft_rank(-x, reg, p))
    # larger entries get smaller (better) ranks
    order = np.argsort(-x, kind="stable")
    assert np.all(np.diff(r[order]) >= -1e-12 * n)


@pytest.mark.parametrize("p", P_ALL)
def test_scaling(p):
    """softsort(c x; reg) = c softsort(x; reg c^(p-1)); p = 2: shift equivariant, rank scale/shift invariant."""
    x = _x(1, 9)
    for c in (0.25, 8.0, 3.0):
        np.testing.assert_allclose(soft_sort(c * x, 0.7, p), c * soft_sort(x, 0.7 * c ** (p - 1.0), p),
                                   rtol=1e-9, atol=1e-10 * c)
    if p == 2.0:
        np.testing.assert_allclose(soft_sort(x + 5.0, 0.7), soft_sort(x, 0.7) + 5.0, atol=1e-12)
        np.testing.assert_allclose(soft_rank(3.0 * x - 2.0, 2.1), soft_rank(x, 0.7), atol=1e-12)


# --------------------------------------------------------------------------- exact regimes


@pytest.mark.parametrize("p", P_ALL)
@pytest.mark.parametrize("seed", range(4))
def test_hard_regime(p, seed):
    """Bit-for-bit hard sort/rank at and below the derived thresholds, not above."""
    x = _x(seed, 3 + 3 * seed, 2.0)
    ts, tr = hard_sort_threshold(x, p), hard_rank_threshold(x, p)
    hs, hr = np.sort(x)[::-1], hard_rank_of(x)
    for c in (1e-300, 1e-6, 0.5, 0.999):
        np.testing.assert_array_equal(soft_sort(x, c * ts, p), hs)
        np.testing.assert_array_equal(soft_rank(x, c * tr, p), hr)
    for c in (1.001, 2.0):
        assert not np.array_equal(soft_sort(x, c * ts, p), hs)
        assert not np.array_equal(soft_rank(x, c * tr, p), hr)


def test_hard_regime_edge_cases():
    """Equal entries: P(x) is a point (the sort is x for every reg); ties always share an averaged rank."""
    x = np.full(5, 1.5)
    for reg in (1e-3, 1.0, 1e6):
        np.testing.assert_array_equal(soft_sort(x, reg), x)
        np.testing.assert_allclose(soft_rank(x, reg), np.full(5, 3.0), atol=1e-15)
    np.testing.assert_allclose(soft_rank([2.0, 1.0, 1.0], 1e-9), [1.0, 2.5, 2.5], atol=1e-12)
    assert soft_sort([4.0], 1.0).tolist() == [4.0] and soft_rank([4.0], 1.0).tolist() == [1.0]


def affine_sort_threshold(x):
    """Smallest reg with the p = 2 soft sort affine, max_k k(n-k) / (2 sum_{i<=k} (x_[i] - mean x))."""
    n = x.size
    k = np.arange(1, n)
    d = np.cumsum(np.sort(x)[::-1] - x.mean())[:-1]
    return float(np.max(k * (n - k) / (2.0 * d)))


def affine_rank_threshold(x):
    """Smallest reg with the p = 2 soft rank affine, max_k 2 sum_{i<=k} (mean x - x_(i)) / (k(n-k))."""
    n = x.size
    k = np.arange(1, n)
    s = np.cumsum(x.mean() - np.sort(x))[:-1]
    return float(np.max(2.0 * s / (k * (n - k))))


@pytest.mark.parametrize("seed", range(6))
def test_affine_regime_p2(seed):
    """p = 2, large reg: sort = mean + (rho - (n+1)/2)/reg and rank = (n+1)/2 + (mean - x)/reg exactly from
    the derived thresholds on; below them (0.9x) not."""
    n = 2 + 3 * seed
    x = _x(100 + seed, n)
    rho = np.arange(n, 0, -1, dtype=float)
    ts, tr = affine_sort_threshold(x), affine_rank_threshold(x)
    for c in (1.0 + 1e-9, 1.5, 1e6):
        np.testing.assert_allclose(soft_sort(x, c * ts), x.mean() + (rho - (n + 1) / 2) / (c * ts), rtol=0,
                                   atol=1e-13 * max(1.0, np.abs(x).max()))
        np.testing.assert_allclose(soft_rank(x, c * tr), (n + 1) / 2 + (x.mean() - x) / (c * tr), rtol=0,
                                   atol=1e-12 * n)
    if n > 2:  # n = 2: the affine form is the whole soft range (threshold = hard threshold)
        assert np.max(np.abs(soft_sort(x, 0.9 * ts) - x.mean() - (rho - (n + 1) / 2) / (0.9 * ts))) > 1e-9
        assert np.max(np.abs(soft_rank(x, 0.9 * tr) - (n + 1) / 2 - (x.mean() - x) / (0.9 * tr))) > 1e-9


# --------------------------------------------------------------------------- magnitudes


@pytest.mark.parametrize("p", (2.0, 4.0 / 3.0, 1.5, 3.0))
@pytest.mark.parametrize("mag", (1e300, 1e-300))
@pytest.mark.parametrize("reg", (1e-300, 1.0, 1e300))
def test_extreme_magnitudes(p, mag, reg):
    """Either a finite result in the permutahedron or a ValueError naming reg (never inf or NaN)."""
    x = np.array([1.0, -1.0, 0.3, 0.7]) * mag
    for f, w in ((soft_sort, x), (soft_rank, np.arange(1.0, 5.0))):
        try:
            y = f(x, reg, p)
        except ValueError as exc:
            assert "`reg`" in str(exc) and "overflows" in str(exc)
            continue
        assert np.all(np.isfinite(y))
        scale = np.abs(w).max()
        assert abs(y.sum() - w.sum()) <= 1e-9 * 4 * scale
        assert np.all(np.cumsum(np.sort(y)[::-1]) <= np.cumsum(np.sort(w)[::-1]) + 1e-9 * scale)


def test_extreme_magnitudes_p2_work():
    """p = 2 at 1e300 and 1e-300 with reg = 1 gives the exact closed forms (full pooling, hard sort)."""
    x = np.array([1e300, -1e300, 3e299])
    np.testing.assert_allclose(soft_sort(x, 1.0), np.full(3, 1e299), rtol=1e-15)
    np.testing.assert_array_equal(soft_rank(x, 1.0), [1.0, 3.0, 2.0])
    t = np.array([1e-300, 2e-300, -1e-300])
    np.testing.assert_array_equal(soft_sort(t, 1.0), [2e-300, 1e-300, -1e-300])
    np.testing.assert_allclose(soft_rank(t, 1.0), [2.0, 2.0, 2.0], rtol=1e-15)


# --------------------------------------------------------------------------- JVPs


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 8), seed=st.integers(0, 2**16), p=st.sampled_from(P_ALL), log_reg=st.floats(-1.5, 1.5),
       descending=st.booleans())
def test_jvp_against_central_differences(n, seed, p, log_reg, descending):
    x = _x(seed, n)
    reg = float(10.0**log_reg)
    h = 1e-6
    for f, jvp in ((soft_sort, soft_sort_jvp), (soft_rank, soft_rank_jvp)):
        for j in range(n):
            e = np.zeros(n)
            e[j] = 1.0
            fd = (f(x + h * e, reg, p, descending) - f(x - h * e, reg, p, descending)) / (2 * h)
            np.testing.assert_allclose(jvp(x, e, reg, p, descending), fd, atol=2e-5 * (1.0 + 1.0 / reg))


def test_jvp_structure_p2():
    """p = 2: the sort JVP is a block average (rows sum to 1), the rank Jacobian is -(I - block avg)/reg."""
    x = np.array([0.3, 0.1, 0.2, 2.0])
    reg = 20.0  # one block of the first three entries for the rank
    J = np.array([soft_sort_jvp(x, e, reg) for e in np.eye(4)]).T
    np.testing.assert_allclose(J.sum(axis=1), 1.0, atol=1e-14)
    Jr = np.array([soft_rank_jvp(x, e, reg) for e in np.eye(4)]).T
    np.testing.assert_allclose(Jr, Jr.T, atol=1e-15)
    assert np.max(np.linalg.eigvalsh(Jr)) <= 1e-15
    np.testing.assert_allclose(Jr.sum(axis=1), 0.0, atol=1e-15)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("f", FUNCS)
def test_bad_input(f):
    with pytest.raises(TypeError, match="`x`"):
        f(["a", "b"])
    with pytest.raises(TypeError, match="`x`"):
        f(np.array([1 + 1j, 2.0]))
    with pytest.raises(ValueError, match="`x`"):
        f(np.ones((2, 0)))  # empty last axis (2-D input is a batch of rows)
    with pytest.raises(ValueError, match="`x`"):
        f([])
    with pytest.raises(ValueError, match="`x`"):
        f([1.0, np.nan])
    with pytest.raises(ValueError, match="`x`"):
        f([1.0, np.inf])
    for reg in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="`reg`"):
            f([1.0, 2.0], reg=reg)
    with pytest.raises(TypeError, match="`reg`"):
        f([1.0, 2.0], reg="1")
    for p in (1.0, 0.5, np.inf, np.nan):
        with pytest.raises(ValueError, match="`p`"):
            f([1.0, 2.0], p=p)
    with pytest.raises(TypeError, match="`p`"):
        f([1.0, 2.0], p=None)
    with pytest.raises(TypeError, match="`descending`"):
        f([1.0, 2.0], descending=1)


@pytest.mark.parametrize("jvp", (soft_sort_jvp, soft_rank_jvp))
def test_bad_tangent(jvp):
    with pytest.raises(ValueError, match="`tangent`"):
        jvp([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="`tangent`"):
        jvp([1.0, 2.0], [1.0, np.nan])
    with pytest.raises(TypeError, match="`tangent`"):
        jvp([1.0, 2.0], ["a", "b"])
    with pytest.raises(ValueError, match="`reg`"):
        jvp([1.0, 2.0], [1.0, 0.0], reg=0.0)


def test_input_not_modified_and_dtypes():
    x = np.array([3.0, 1.0, 2.0])
    x0 = x.copy()
    for f in FUNCS:
        f(x, 0.3, 1.5)
        np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(soft_sort([3, 1, 2], 0.5), [3.0, 2.0, 1.0])
    np.testing.assert_array_equal(soft_sort(np.array([3, 1, 2], np.float32), 0.5), [3.0, 2.0, 1.0])


# ----------------------------------------------------------------------------- root finders' knobs

_EPS = np.finfo(float).eps


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("p", [1.5, 3.0, 4.0 / 3.0])
def test_default_root_settings_are_the_solves_own(func, p):
    """max_iter = tol = None gives the bits of the isotonic module's defaults (400, 4 eps) with the
    anchored re-solve at its own cap: the call without the keywords and the call spelling them agree."""
    x = _x(3, 60)
    y = func(x, 0.3, p)
    np.testing.assert_array_equal(y, func(x, 0.3, p, max_iter=None, tol=None))
    np.testing.assert_array_equal(y, func(x, 0.3, p, max_iter=2999, tol=4 * _EPS))


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
def test_max_iter_reaches_the_root_solves(func):
    """A cap of one iteration stops the per-block solves (p = 3, reg = 3: pooled blocks in both
    operators): a ConvergenceWarning and another result; a generous cap gives the default's bits and
    a loose-but-valid tol stays within its reach."""
    x = _x(4, 60)
    y = func(x, 3.0, 3.0)
    with pytest.warns(ConvergenceWarning):
        y1 = func(x, 3.0, 3.0, max_iter=1)
    assert np.max(np.abs(y1 - y)) > 1e-3
    np.testing.assert_array_equal(func(x, 3.0, 3.0, max_iter=10**6), y)
    y8 = func(x, 3.0, 3.0, tol=1e-8)
    assert np.max(np.abs(y8 - y)) <= 1e-6 * np.max(np.abs(y))


@pytest.mark.parametrize("name", ["soft_sort_jvp", "soft_rank_jvp", "soft_sort_with_jacobian",
                                  "soft_rank_with_jacobian"])
def test_knobs_of_the_derivatives_follow_the_value(name):
    """The JVPs and the Jacobian objects solve the same forward problem with the same knobs: values
    of the *_with_jacobian functions equal the value operator's under the same max_iter and tol."""
    import theory.topk as topk
    x = _x(5, 40)
    f = getattr(topk, name)
    value = topk.soft_sort if "sort" in name else topk.soft_rank
    if name.endswith("_jvp"):
        v = _x(6, 40)
        np.testing.assert_array_equal(f(x, v, 0.3, 3.0), f(x, v, 0.3, 3.0, max_iter=2999, tol=4 * _EPS))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert np.all(np.isfinite(f(x, v, 3.0, 3.0, max_iter=2, tol=1e-3)))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            y, _ = f(x, 3.0, 3.0, max_iter=3, tol=1e-6)
            np.testing.assert_array_equal(y, value(x, 3.0, 3.0, max_iter=3, tol=1e-6))


@pytest.mark.parametrize("kw, exc", [({"max_iter": 0}, ValueError), ({"max_iter": 2.5}, TypeError),
                                     ({"max_iter": True}, TypeError), ({"tol": -1.0}, ValueError),
                                     ({"tol": float("nan")}, ValueError), ({"tol": "1"}, TypeError),
                                     ({"max_iter": 2**63}, ValueError)])
@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
def test_knobs_refused_naming_the_argument(func, kw, exc):
    with pytest.raises(exc, match=f"`{next(iter(kw))}` of theory.topk.{func.__name__}"):
        func([1.0, 2.0, 0.5], 1.0, 3.0, **kw)
