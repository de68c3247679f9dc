"""Tests of :mod:`theory.topk` (paper key ``topk``, thesis Chapter 7; p = 2).

What is checked (each kernel against an independent reference, and its input contract):

1. The reduction to isotonic regression (Propositions 7.5/7.6) against independent solvers that know
   nothing of sorting or PAV: SLSQP over the permutahedron P(1_k) written with all 2^n subset
   (majorisation) constraints, n <= 6, for the mask (max <y, x> - reg/2 |y|^2) and for the
   magnitude (its concave dual max_{z in P(1_k)} 1/2 sum x_i^2 z_i/(1 + reg z_i), y = x z/(1 + reg z),
   from f_phi(u, 1_k) = max_{z in P(1_k)} 1/2 sum z_i u_i^2 and a minimax swap); and a 1-D threshold
   oracle (brentq) for the mask, to 1e-12.
2. The Jacobian (Proposition 7.8, corrected) against central finite differences; symmetric PSD.
3. Limits: hard top-k for reg below the gap, affine closed form for large reg (mask), the
   singleton regime topkmag/(1 + reg) and reg * y -> x (magnitude).
4. Permutation equivariance, sum of the mask = k, bad-input table, Hypothesis property test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import brentq, minimize

from _fd import central_jacobian
from theory.topk import jacobian, topk_magnitude, topk_mask


# ---------------------------------------------------------------- independent references

def _subset_constraints(n, k):
    """P(1_k) = conv of permutations of 1_k: sum_{i in S} z_i <= min(|S|, k) for all S, sum z = k."""
    cons = [{"type": "eq", "fun": lambda z: np.sum(z) - k, "jac": lambda z: np.ones(n)}]
    for size in range(1, n):
        for S in itertools.combinations(range(n), size):
            a = np.zeros(n)
            a[list(S)] = 1.0
            cons.append({"type": "ineq", "fun": lambda z, a=a, c=min(size, k): c - a @ z, "jac": lambda z, a=a: -a})
    return cons


def _mask_slsqp(x, k, reg):
    n = x.size
    obj = lambda y: -(y @ x) + 0.5 * reg * (y @ y)  # noqa: E731
    res = minimize(obj, np.full(n, k / n), jac=lambda y: -x + reg * y, method="SLSQP",
                   constraints=_subset_constraints(n, k), options={"ftol": 1e-12, "maxiter": 500})
    assert res.success, res.message
    return res.x


def _magnitude_slsqp(x, k, reg):
    n = x.size
    obj = lambda z: -0.5 * np.sum(x**2 * z / (1.0 + reg * z))  # noqa: E731
    jac = lambda z: -0.5 * x**2 / (1.0 + reg * z) ** 2  # noqa: E731
    res = minimize(obj, np.full(n, k / n), jac=jac, method="SLSQP",
                   constraints=_subset_constraints(n, k), options={"ftol": 1e-12, "maxiter": 500})
    assert res.success, res.message
    z = res.x
    return x * z / (1.0 + reg * z)


def _mask_threshold(x, k, reg):
    """Projection of x/reg on the capped simplex: y = clip((x - tau)/reg, 0, 1), sum y = k."""
    g = lambda tau: np.sum(np.clip((x - tau) / reg, 0.0, 1.0)) - k  # noqa: E731
    tau = brentq(g, x.min() - reg - 1.0, x.max(), xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return np.clip((x - tau) / reg, 0.0, 1.0)


# ---------------------------------------------------------------- 1. reduction vs independent solvers

@pytest.mark.parametrize("seed", range(6))
def test_mask_matches_permutahedron_qp(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    k = int(rng.integers(1, n))
    reg = float(rng.choice([0.1, 0.5, 1.0, 3.0]))
    x = rng.normal(size=n)
    y = topk_mask(x, k, reg)
    # SLSQP (ftol 1e-12; tighter stalls in its line search) on a strongly concave objective: ~1e-6
    np.testing.assert_allclose(y, _mask_slsqp(x, k, reg), atol=1e-6)
    np.testing.assert_allclose(y, _mask_threshold(x, k, reg), atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_magnitude_matches_permutahedron_dual(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 7))
    k = int(rng.integers(1, n))
    reg = float(rng.choice([0.1, 0.5, 1.0, 3.0]))
    x = rng.normal(size=n)
    np.testing.assert_allclose(topk_magnitude(x, k, reg), _magnitude_slsqp(x, k, reg), atol=1e-6)


def test_mask_threshold_oracle_larger_n():
    rng = np.random.default_rng(7)
    for n, k, reg in [(50, 5, 0.3), (200, 20, 2.0), (31, 30, 0.05), (40, 1, 10.0)]:
        x = rng.normal(size=n)
        np.testing.assert_allclose(topk_mask(x, k, reg), _mask_threshold(x, k, reg), atol=1e-12)


def test_hand_worked_values():
    # s - reg 1_k = (0, 0.5, 0): pool the first two at 0.25 -> u = (0.25, 0.25, 0), y = (0.75, 0.25, 0)
    np.testing.assert_allclose(topk_mask([1.0, 0.5, 0.0], 1, 1.0), [0.75, 0.25, 0.0], atol=1e-15)
    # magnitude, reg = 1, k = 1, |x| = (1, 0.8): targets (0.5, 0.8), weights (2, 1) pool at 1.8/3 = 0.6
    np.testing.assert_allclose(topk_magnitude([-1.0, 0.8], 1, 1.0), [-0.4, 0.2], atol=1e-15)
    # ties get equal values
    np.testing.assert_allclose(topk_mask([1.0, 1.0, 0.0], 1, 0.01), [0.5, 0.5, 0.0], atol=1e-12)


# ---------------------------------------------------------------- 2. Jacobian


@pytest.mark.parametrize("mode", ["mask", "magnitude"])
@pytest.mark.parametrize("seed", range(5))
def test_jacobian_finite_differences(mode, seed):
    rng = np.random.default_rng(200 + seed)
    n = 8
    k = int(rng.integers(1, n))
    reg = float(rng.choice([0.2, 0.7, 2.0]))
    x = rng.normal(size=n)
    op = topk_mask if mode == "mask" else topk_magnitude
    J = jacobian(x, k, reg, mode=mode)
    # piecewise affine: central differences are exact up to rounding (~1e-16/h/reg) unless a kink
    # lies within h of x, which these seeded draws avoid (a kink would show as an O(1/reg) error)
    np.testing.assert_allclose(J, central_jacobian(lambda z: op(z, k, reg), x), atol=1e-7)
    np.testing.assert_allclose(J, J.T, atol=1e-15)
    assert np.linalg.eigvalsh(0.5 * (J + J.T)).min() >= -1e-12
    if mode == "mask":
        np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-12)  # shift invariance


def test_jacobian_rescaled_magnitude():
    rng = np.random.default_rng(9)
    x = rng.normal(size=6)
    J = jacobian(x, 2, 0.5, mode="magnitude", rescale=True)
    fd = central_jacobian(lambda z: topk_magnitude(z, 2, 0.5, rescale=True), x)
    np.testing.assert_allclose(J, fd, atol=1e-7)


def test_jacobian_hard_regime_is_zero_mask():
    x = np.array([5.0, 1.0, 4.0, 0.0])
    np.testing.assert_array_equal(jacobian(x, 2, 0.5), np.zeros((4, 4)))


# ---------------------------------------------------------------- 3. limits

def test_mask_hard_limit():
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, n))
        x = rng.normal(size=n)
        xs = np.sort(x)[::-1]
        gap = xs[k - 1] - xs[k]
        hard = np.zeros(n)
        hard[np.argsort(-x)[:k]] = 1.0
        # exact iff reg <= x_[k] - x_[k+1]
        np.testing.assert_array_equal(topk_mask(x, k, 0.5 * gap), hard)
        np.testing.assert_array_equal(topk_mask(x, k, gap * (1 - 1e-12)), hard)
        assert np.max(np.abs(topk_mask(x, k, 1.5 * gap) - hard)) > 1e-3  # pooling starts above the gap


def test_mask_affine_limit():
    rng = np.random.default_rng(12)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, n))
        x = rng.normal(size=n)
        xbar = x.mean()
        lam0 = max((xbar - x.min()) * n / k, (x.max() - xbar) * n / (n - k))  # threshold of the affine regime
        for reg in (lam0, 2 * lam0, 1e6):
            np.testing.assert_allclose(topk_mask(x, k, reg), k / n + (x - xbar) / reg, atol=1e-13)
        assert np.max(np.abs(topk_mask(x, k, 0.9 * lam0) - (k / n + (x - xbar) / (0.9 * lam0)))) > 1e-6


def test_magnitude_limits():
    rng = np.random.default_rng(13)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, n))
        x = rng.normal(size=n)
        a = np.sort(np.abs(x))[::-1]
        hard = np.where(np.isin(np.arange(n), np.argsort(-np.abs(x))[:k]), x, 0.0)
        reg = 0.5 * (a[k - 1] / a[k] - 1.0)  # singleton regime: exactly topkmag/(1 + reg)
        np.testing.assert_allclose(topk_magnitude(x, k, reg), hard / (1 + reg), rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(topk_magnitude(x, k, reg, rescale=True), hard, rtol=1e-14, atol=1e-300)
        # large reg: u* = O(|x|/reg), so reg y = x - u* -> x with error O(1/reg)
        for big in (1e4, 1e8):
            err = np.max(np.abs(big * topk_magnitude(x, k, big) - x))
            assert err <= 2 * n * np.max(np.abs(x)) / big


# ---------------------------------------------------------------- 4. properties and contract

@pytest.mark.parametrize("mode", ["mask", "magnitude"])
def test_permutation_equivariance(mode):
    rng = np.random.default_rng(14)
    op = topk_mask if mode == "mask" else topk_magnitude
    for _ in range(10):
        x = rng.normal(size=9)
        perm = rng.permutation(9)
        np.testing.assert_allclose(op(x[perm], 3, 0.4), op(x, 3, 0.4)[perm], atol=1e-15)
        J = jacobian(x, 3, 0.4, mode=mode)
        np.testing.assert_allclose(jacobian(x[perm], 3, 0.4, mode=mode), J[np.ix_(perm, perm)], atol=1e-15)


@settings(max_examples=60)
@given(x=hnp.arrays(np.float64, st.integers(2, 10), elements=st.floats(-1e3, 1e3)),
       kfrac=st.floats(0.0, 1.0), reg=st.floats(1e-3, 1e3))
def test_properties(x, kfrac, reg):
    n = x.size
    k = min(n - 1, 1 + int(kfrac * (n - 1)))
    y = topk_mask(x, k, reg)
    assert abs(y.sum() - k) <= 1e-9 * max(1.0, k)
    assert np.all(y >= 0) and np.all(y <= 1)
    np.testing.assert_allclose(y, _mask_threshold(x, k, reg), atol=1e-9)
    m = topk_magnitude(x, k, reg)
    assert np.all(np.abs(m) <= np.abs(x)) and np.all(m * x >= 0)
    np.testing.assert_allclose(topk_magnitude(-x, k, reg), -m, atol=0)  # odd
    J = jacobian(x, k, reg, mode="mask")
    np.testing.assert_allclose(J, J.T, atol=1e-15)


def test_input_not_modified_and_kinds():
    x = np.array([3.0, 1.0, 2.0])
    x.flags.writeable = False
    topk_mask(x, 1)
    jacobian(x, 1, mode="magnitude")
    np.testing.assert_array_equal(topk_mask([3, 1, 2], 1), topk_mask(np.array([3.0, 1.0, 2.0], np.float32), 1))


BAD = [
    ({"x": [1.0, np.nan, 0.0]}, ValueError, "`x`"),
    ({"x": [1.0, np.inf, 0.0]}, ValueError, "`x`"),
    ({"x": [[1.0], [2.0]]}, ValueError, "`x`"),  # 2-D is a batch of rows; rows of length 1 are refused
    ({"x": [1.0]}, ValueError, "`x`"),
    ({"x": ["a", "b"]}, TypeError, "`x`"),
    ({"k": 0}, ValueError, "`k`"),
    ({"k": 3}, ValueError, "`k`"),
    ({"k": -1}, ValueError, "`k`"),
    ({"k": 1.5}, TypeError, "`k`"),
    ({"reg": 0.0}, ValueError, "`reg`"),
    ({"reg": -1.0}, ValueError, "`reg`"),
    ({"reg": np.nan}, ValueError, "`reg`"),
    ({"reg": np.inf}, ValueError, "`reg`"),
    ({"p": 1.0}, ValueError, "`p`"),
    ({"p": 0.5}, ValueError, "`p`"),
    ({"p": np.nan}, ValueError, "`p`"),
]


@pytest.mark.parametrize("func", ["topk_mask", "topk_magnitude", "jacobian"])
@pytest.mark.parametrize("bad,exc,match", BAD)
def test_bad_inputs(func, bad, exc, match):
    args = {"x": [3.0, 1.0, 2.0], "k": 1, "reg": 1.0, "p": 2.0}
    args.update(bad)
    f = {"topk_mask": topk_mask, "topk_magnitude": topk_magnitude, "jacobian": jacobian}[func]
    with pytest.raises(exc, match=match):
        f(args["x"], args["k"], args["reg"], args["p"])


def test_bad_mode_and_rescale():
    with pytest.raises(ValueError, match="`mode`"):
        jacobian([3.0, 1.0, 2.0], 1, mode="topk")
    with pytest.raises(TypeError, match="`mode`"):
        jacobian([3.0, 1.0, 2.0], 1, mode=None)
    with pytest.raises(ValueError, match="`rescale`"):
        jacobian([3.0, 1.0, 2.0], 1, mode="mask", rescale=True)
    with pytest.raises(TypeError, match="`rescale`"):
        topk_magnitude([3.0, 1.0, 2.0], 1, rescale=1)


@pytest.mark.parametrize("mode", ["mask", "magnitude"])
@pytest.mark.parametrize("x,k,reg", [([3.0, 0.0, 0.0], 1, 0.1), ([0.0, 0.0, 1.0], 1, 0.5),
                                     ([2.0, 2.0, -0.5, -0.5, -0.5], 2, 0.3), ([1.0, 1.0, 0.0], 1, 0.5)])
def test_jacobian_at_ties(mode, x, k, reg):
    # tied inputs where the operator is differentiable: the isotonic module pools equal values into
    # one block, which must not leak into the Jacobian (blocks are refined by their KKT multipliers)
    x = np.asarray(x)
    op = topk_mask if mode == "mask" else topk_magnitude
    np.testing.assert_allclose(jacobian(x, k, reg, mode=mode), central_jacobian(lambda z: op(z, k, reg), x), atol=1e-7)
