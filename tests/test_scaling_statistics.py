"""Tests of :mod:`theory.scaling.statistics` against the toolkit's kernels and closed forms.

* :func:`branch` and :func:`branch_jvp` equal one layer of :func:`theory.scaling.forward` and
  :func:`theory.scaling.jacobian` with V = I (alpha_1 = 1), for every architecture and activation.
* :func:`fast_norms` has the law of explicit Gaussian networks (two-sample Kolmogorov-Smirnov tests
  against :func:`theory.scaling.forward`), the exact expectations of Lemma 14, and consistent outputs.
* :func:`mc_mean`, :func:`quantile_ci` (coverage), :func:`clt_log_norm` (closed form, and against the
  sampler); input validation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from theory.scaling import forward, jacobian, weights
from theory.scaling.statistics import (
    MCEstimate,
    branch,
    branch_jvp,
    clt_log_norm,
    fast_norms,
    mc_mean,
    quantile_ci,
)

COMBOS = [("res1", a) for a in ("relu", "leaky_relu", "identity", "tanh")] + [
    ("res2", a) for a in ("relu", "leaky_relu", "identity", "tanh")] + [("res3", "relu")]


@pytest.mark.parametrize(("arch", "act"), COMBOS)
def test_branch_is_one_layer_of_forward(arch, act):
    rng = np.random.default_rng(0)
    d, n = 5, 4
    h = rng.standard_normal(d)
    W = rng.standard_normal((n, d, d))
    g = branch(h, None if arch == "res1" else W, arch, act, slope=0.7)
    eye = np.eye(d)[None]
    for i in range(n if arch != "res1" else 1):
        traj = forward(h, eye, None if arch == "res1" else W[i:i + 1], beta=1.0, arch=arch, activation=act, slope=0.7)
        ref = g if arch == "res1" else g[i]
        np.testing.assert_allclose(traj[1] - traj[0], ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("arch", "act"), COMBOS)
def test_branch_jvp_is_one_layer_of_jacobian(arch, act):
    rng = np.random.default_rng(1)
    d, n = 5, 3
    h, q = rng.standard_normal((2, d))
    W = rng.standard_normal((n, d, d))
    dq = branch_jvp(h, q, None if arch == "res1" else W, arch, act, slope=0.7)
    eye = np.eye(d)[None]
    for i in range(n if arch != "res1" else 1):
        J = jacobian(h, eye, None if arch == "res1" else W[i:i + 1], beta=1.0, arch=arch, activation=act, slope=0.7)
        ref = dq if arch == "res1" else dq[i]
        np.testing.assert_allclose((J - np.eye(d)) @ q, ref, rtol=1e-12, atol=1e-14)


def test_branch_jvp_uses_relu_prime_zero_at_the_kink():
    W = np.array([[[1.0, -1.0], [0.0, 1.0]]])
    out = branch_jvp([1.0, 1.0], [2.0, 3.0], W, "res3")  # W h = (0, 1): the first row sits on the kink
    np.testing.assert_array_equal(out, [[0.0, 3.0]])


def test_mc_mean_and_z():
    est = mc_mean([1.0, 3.0])
    assert est == MCEstimate(2.0, 1.0, 2)
    assert est.z(0.0) == 2.0
    assert MCEstimate(1.0, 0.0, 1).z(1.0) == 0.0
    assert MCEstimate(1.0, 0.0, 1).z(0.0) == math.inf


def _explicit(arch, act, d, L, beta, runs, seed, h0):
    """ln ||h_L||/||h_0|| and ln ||h_L - h_0||/||h_0|| of explicit Gaussian networks."""
    rng = np.random.default_rng(seed)
    out = np.empty((2, runs))
    for r in range(runs):
        V = weights(L, d, "gaussian", rng=rng)
        W = None if arch == "res1" else weights(L, d, "gaussian", rng=rng)
        traj = forward(h0, V, W, beta=beta, arch=arch, activation=act, slope=0.8)
        n0 = np.linalg.norm(h0)
        out[:, r] = np.log(np.linalg.norm(traj[-1]) / n0), np.log(np.linalg.norm(traj[-1] - h0) / n0)
    return out


@pytest.mark.parametrize(("arch", "act", "beta"), [("res3", "relu", 0.5), ("res2", "leaky_relu", 0.5),
                                                   ("res2", "identity", 0.3), ("res1", "leaky_relu", 0.5),
                                                   ("res1", "identity", 0.5)])
def test_fast_norms_has_the_law_of_explicit_gaussian_networks(arch, act, beta):
    d, L = 6, 20
    h0 = np.random.default_rng(9).standard_normal(d)
    ref = _explicit(arch, act, d, L, beta, 400, 10, h0)
    fast = fast_norms(L, d, beta, 4000, arch=arch, activation=act, slope=0.8, h0=h0 if arch == "res1" else None,
                      rng=np.random.default_rng(11))
    for x, y in ((ref[0], fast.log_norm_ratio), (ref[1], fast.log_dist_ratio)):
        assert stats.ks_2samp(x, y).pvalue > 1e-3


@pytest.mark.parametrize(("arch", "act", "kappa"), [("res3", "relu", 0.5), ("res2", "identity", 1.0),
                                                    ("res2", "leaky_relu", (1 + 0.64) / 2)])
def test_fast_norms_exact_expectations_of_lemma_14(arch, act, kappa):
    """E||h_L||^2/||h_0||^2 = (1 + kappa alpha^2)^L and E||h_L - h_0||^2/||h_0||^2 = that minus 1."""
    L, d, beta = 50, 10, 0.5
    f = fast_norms(L, d, beta, 20_000, arch=arch, activation=act, slope=0.8, rng=np.random.default_rng(3))
    exact = (1 + kappa / L) ** L
    for x, v in ((np.exp(2 * f.log_norm_ratio), exact), (np.exp(2 * f.log_dist_ratio), exact - 1)):
        est = mc_mean(x)
        assert abs(est.z(v)) < 5


def test_fast_norms_outputs_are_consistent():
    """||h_L - h_0||^2 = ||h_L||^2 + ||h_0||^2 - 2 <h_L, h_0> (unit h_0), also in the log domain at large norms."""
    for beta in (0.5, 0.2):
        f = fast_norms(400, 8, beta, 300, rng=np.random.default_rng(4))
        r2 = np.exp(2 * f.log_norm_ratio)
        np.testing.assert_allclose(np.exp(2 * f.log_dist_ratio), r2 + 1 - 2 * f.inner, rtol=1e-9)
    f = fast_norms(30, 4, 0.5, 50, arch="res1", activation="identity", h0=np.ones(4), rng=np.random.default_rng(5))
    np.testing.assert_allclose(np.exp(2 * f.log_dist_ratio), np.exp(2 * f.log_norm_ratio) + 1 - 2 * f.inner,
                               rtol=1e-9)


def test_fast_norms_does_not_overflow_in_the_explosion_regime():
    f = fast_norms(20_000, 4, 0.1, 5, rng=np.random.default_rng(6))
    assert np.all(np.isfinite(f.log_norm_ratio)) and np.all(f.log_norm_ratio > 300)
    np.testing.assert_allclose(f.log_dist_ratio, f.log_norm_ratio, rtol=1e-12)


def test_fast_norms_is_reproducible():
    a = fast_norms(10, 4, 0.5, 7, rng=np.random.default_rng(8))
    b = fast_norms(10, 4, 0.5, 7, rng=np.random.default_rng(8))
    np.testing.assert_array_equal(a.log_dist_ratio, b.log_dist_ratio)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"arch": "res4"}, ValueError, "`arch`"),
    ({"arch": "res3", "activation": "leaky_relu"}, ValueError, "'relu' for arch 'res3'"),
    ({"arch": "res2", "activation": "tanh"}, ValueError, "positively"),
    ({"arch": "res1", "activation": "relu"}, ValueError, "`h0`.*required"),
    ({"arch": "res3", "h0": np.ones(4)}, ValueError, "`h0`.*omitted"),
    ({"arch": "res1", "activation": "identity", "h0": np.zeros(4)}, ValueError, "nonzero"),
    ({"rng": -3}, ValueError, "non-negative int seed"),
    ({"rng": 3.0}, TypeError, "None, an int seed or a numpy.random.Generator"),
    # refused up front with the estimate (before: ran for hours at L = 10**12)
    ({"L": 10**12}, ValueError, r"`L` of .* needs about 2e\+16 floating-point operations, above the budget"),
    ({"runs": 10**9, "L": 1000}, ValueError, r"`runs` of .* needs about 1\.5e\+14"),
    ({"d": 10**30}, ValueError, r"`d` of .* must be <="),
    ({"L": 0}, ValueError, "`L`"),
    ({"d": 1}, ValueError, "`d`"),
    ({"beta": 0.0}, ValueError, "`beta`"),
    ({"runs": 2.5}, TypeError, "`runs`"),
])
def test_fast_norms_validation(kwargs, exc, match):
    args = {"L": 5, "d": 4, "beta": 0.5, "runs": 3, "rng": np.random.default_rng(0)}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        fast_norms(args.pop("L"), args.pop("d"), args.pop("beta"), args.pop("runs"), **args)


@pytest.mark.parametrize(("func", "args", "exc", "match"), [
    (branch, ([1.0, 2.0], np.ones((1, 2, 2)), "res1"), ValueError, "None for arch 'res1'"),
    (branch, ([1.0, 2.0], None, "res3"), ValueError, "required"),
    (branch, ([1.0, 2.0], np.ones((1, 3, 3)), "res3"), ValueError, r"shape \(n, 2, 2\)"),
    (branch_jvp, ([1.0, 2.0], [1.0], np.ones((1, 2, 2)), "res3"), ValueError, "`q`"),
    (mc_mean, ([1.0],), ValueError, "at least 2"),
    (quantile_ci, ([1.0, 2.0], 1.0), ValueError, "`p`"),
])
def test_helpers_validation(func, args, exc, match):
    with pytest.raises(exc, match=match):
        func(*args)


def test_quantile_ci_covers_the_true_quantile():
    """Order-statistic intervals at level 0.95: coverage over 300 normal samples of size 400 is >= 0.9."""
    rng = np.random.default_rng(12)
    q1 = stats.norm.ppf(0.25)
    hits = 0
    for _ in range(300):
        _, lo, hi = quantile_ci(rng.standard_normal(400), 0.25)
        hits += lo <= q1 <= hi
    assert hits / 300 >= 0.9


def test_clt_log_norm_closed_form_and_sampler():
    m, sd = clt_log_norm(1000, 100, 0.5)
    assert m == pytest.approx(0.245, rel=1e-12) and sd == pytest.approx(math.sqrt(0.005), rel=1e-12)
    f = fast_norms(300, 50, 0.5, 4000, rng=np.random.default_rng(13))
    m, sd = clt_log_norm(300, 50, 0.5)
    x = f.log_norm_ratio
    assert abs(mc_mean(x).z(m)) < 5
    assert abs(x.std() / sd - 1) < 0.05
