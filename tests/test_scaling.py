"""Tests of :mod:`theory.scaling` (paper key ``scaling``) against independent references.

What is checked (every kernel against an independent reference, and its input contract):

1. A plain-NumPy reference written from model (4) and Table 1 (loops over layers, dense Jacobians
   d_h g) for forward, backward and jacobian, for every architecture and activation; a batch equals
   the stack of single calls bit for bit; p_L^T J = p_0^T; backward against central finite
   differences of <c, h_L>; the ReLU'(0) = 0 convention.
2. Closed forms: res-1 identity with tied weights, (I + alpha V)^L h_0; the exact expectations of
   Lemma 14 (res-3: (1 + alpha^2/2)^L; res-1 identity: (1 + alpha^2)^L) by Monte Carlo within 4 s.e.
3. The log domain equals the direct domain where nothing overflows, and stays finite (and exact on a
   closed form) where the direct domain overflows.
4. Weight laws: shapes, moments within 5 s.e., symmetry, supports, seeds; smooth law covariance
   across layers and O(1/L) increments; fbm covariance (needs theory.fbm).
5. Limits: the coupled ResNet equals the Euler-Maruyama scheme on the same path; EM against a NumPy
   loop; the neural ODE against matrix exponentials and the beta = 1 network at rate 1/L.
6. The contract: a table of bad inputs, accepted input kinds, no mutation, overflow as an error,
   documented choices, user exceptions passing through, and a Hypothesis fuzz.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scipy.linalg import expm

import theory.scaling as scaling
from _inputs import array_like, assert_outputs_equal
from theory._validation import NonFiniteError
from theory.scaling import (
    ACTIVATIONS,
    ARCHS,
    LAWS,
    backward,
    brownian_increments,
    coupled_weights,
    forward,
    forward_normalized,
    gradient_ratio,
    jacobian,
    log_gradient_ratio,
    log_norm_ratio,
    neural_ode,
    norm_ratio,
    sde_em,
    weights,
)

SLOPE = 0.8
COMBOS = [("res1", a) for a in ("relu", "leaky_relu", "identity", "tanh")] + [
    ("res2", a) for a in ("relu", "leaky_relu", "identity", "tanh")
] + [("res3", "relu")]
HOMOGENEOUS = [c for c in COMBOS if c[1] != "tanh"]
COMBO_IDS = [f"{a}-{s}" for a, s in COMBOS]


# ---------------------------------------------------------------------------------------------------
# Independent plain-NumPy reference (from model (4) and Table 1)
# ---------------------------------------------------------------------------------------------------


def ref_sigma(act, x):
    if act == "relu":
        return np.where(x > 0, x, 0.0)
    if act == "leaky_relu":  # x_+ + s x_-
        return np.maximum(x, 0.0) + SLOPE * np.minimum(x, 0.0)
    if act == "identity":
        return x.copy()
    return np.tanh(x)


def ref_dsigma(act, x):
    # Left derivative at the kink: ReLU'(0) = 0, leaky'(0) = s (PyTorch's convention).
    if act == "relu":
        return (x > 0).astype(float)
    if act == "leaky_relu":
        return np.where(x > 0, 1.0, SLOPE)
    if act == "identity":
        return np.ones_like(x)
    return 1.0 - np.tanh(x) ** 2


def ref_layer(arch, act, h, Wk):
    """g(h, theta) and the dense d_h g (d, d) of one layer."""
    if arch == "res1":
        return ref_sigma(act, h), np.diag(ref_dsigma(act, h))
    z = Wk @ h
    return ref_sigma(act, z), np.diag(ref_dsigma(act, z)) @ Wk


def ref_forward_one(h0, V, W, beta, arch, act):
    L = V.shape[0]
    alpha = L ** (-beta)
    hs = [np.asarray(h0, float)]
    for k in range(L):
        g, _ = ref_layer(arch, act, hs[-1], None if W is None else W[k])
        hs.append(hs[-1] + alpha * V[k] @ g)
    return np.array(hs)


def ref_backward_one(hs, V, W, pL, beta, arch, act):
    L = V.shape[0]
    alpha = L ** (-beta)
    ps = [None] * (L + 1)
    ps[L] = np.asarray(pL, float)
    for k in range(L - 1, -1, -1):
        _, Dg = ref_layer(arch, act, hs[k], None if W is None else W[k])
        ps[k] = ps[k + 1] + alpha * Dg.T @ V[k].T @ ps[k + 1]
    return np.array(ps)


def ref_jacobian_one(h0, V, W, beta, arch, act):
    """J = prod_{k = L-1..0} (I + alpha V_{k+1} d_h g_k) as dense products."""
    L, d = V.shape[:2]
    alpha = L ** (-beta)
    hs = ref_forward_one(h0, V, W, beta, arch, act)
    J = np.eye(d)
    for k in range(L):
        _, Dg = ref_layer(arch, act, hs[k], None if W is None else W[k])
        J = (np.eye(d) + alpha * V[k] @ Dg) @ J
    return J


def draw_net(arch, L, d, seed, law="gaussian"):
    rng = np.random.default_rng(seed)
    V = weights(L, d, law, rng=rng)
    W = None if arch == "res1" else weights(L, d, law, rng=rng)
    return V, W, rng


def assert_rel(actual, expected, rtol, what=""):
    """max |actual - expected| <= rtol * max |expected| (norm-wise relative error)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    err = float(np.max(np.abs(actual - expected)))
    scale = float(np.max(np.abs(expected)))
    assert err <= rtol * scale, f"{what}: error {err:.3e}, scale {scale:.3e}, rtol {rtol}"


# Kernel and reference do the same float64 operations in different orders (loops vs matmuls, FMA),
# so they agree to a few ulps times the depth; the worst case over the cases below measured 1.0e-15
# (jacobian), 4e-16 (forward, backward): 1e-13 leaves a factor 100.
REF_RTOL = 1e-13


# ---------------------------------------------------------------------------------------------------
# 1. Network kernels against the reference
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch, act", COMBOS, ids=COMBO_IDS)
@pytest.mark.parametrize("d, L", [(1, 1), (3, 7), (5, 2)])
@pytest.mark.parametrize("beta", [0.25, 0.5, 1.0])
def test_forward_backward_jacobian_match_reference(arch, act, d, L, beta):
    V, W, rng = draw_net(arch, L, d, [d, L, int(4 * beta), COMBOS.index((arch, act))])
    h0 = rng.standard_normal(d)
    pL = rng.standard_normal(d)
    hs = forward(h0, V, W, beta, arch, act, slope=SLOPE)
    assert hs.dtype == np.float64 and hs.shape == (L + 1, d)
    assert_rel(hs, ref_forward_one(h0, V, W, beta, arch, act), REF_RTOL, "forward")
    np.testing.assert_array_equal(hs[0], h0)
    ps = backward(hs, V, W, pL, beta, arch, act, slope=SLOPE)
    assert ps.shape == (L + 1, d)
    assert_rel(ps, ref_backward_one(hs, V, W, pL, beta, arch, act), REF_RTOL, "backward")
    np.testing.assert_array_equal(ps[-1], pL)
    J = jacobian(h0, V, W, beta, arch, act, slope=SLOPE)
    assert J.shape == (d, d)
    assert_rel(J, ref_jacobian_one(h0, V, W, beta, arch, act), REF_RTOL, "jacobian")


@pytest.mark.parametrize("arch, act", COMBOS, ids=COMBO_IDS)
def test_batch_equals_stack_of_singles_bit_for_bit(arch, act):
    d, L, B = 4, 6, 3
    V, W, rng = draw_net(arch, L, d, [11, COMBOS.index((arch, act))])
    h0 = rng.standard_normal((B, d))
    pL = rng.standard_normal((B, d))
    hs = forward(h0, V, W, 0.5, arch, act)
    ps = backward(hs, V, W, pL, 0.5, arch, act)
    J = jacobian(h0, V, W, 0.5, arch, act)
    assert hs.shape == ps.shape == (L + 1, B, d) and J.shape == (B, d, d)
    for b in range(B):
        np.testing.assert_array_equal(hs[:, b], forward(h0[b], V, W, 0.5, arch, act))
        np.testing.assert_array_equal(ps[:, b], backward(hs[:, b], V, W, pL[b], 0.5, arch, act))
        np.testing.assert_array_equal(J[b], jacobian(h0[b], V, W, 0.5, arch, act))
    if act != "tanh":
        u, logn = forward_normalized(h0, V, W, 0.5, arch, act)
        r = log_norm_ratio(h0, V, W, 0.5, arch, act)
        q = log_gradient_ratio(h0, V, W, pL, 0.5, arch, act)
        assert u.shape == (L + 1, B, d) and logn.shape == (L + 1, B) and r.shape == q.shape == (B,)
        for b in range(B):
            ub, lb = forward_normalized(h0[b], V, W, 0.5, arch, act)
            np.testing.assert_array_equal(u[:, b], ub)
            np.testing.assert_array_equal(logn[:, b], lb)
            assert r[b] == log_norm_ratio(h0[b], V, W, 0.5, arch, act)
            assert q[b] == log_gradient_ratio(h0[b], V, W, pL[b], 0.5, arch, act)


@pytest.mark.parametrize("arch, act", COMBOS, ids=COMBO_IDS)
def test_backward_equals_transposed_jacobian(arch, act):
    # p_0^T = p_L^T J (Eq. (10) and the tangent recursion (9)): reverse mode vs forward mode, to
    # round-off; measured worst relative error 1.1e-15 at L = 60, d = 8.
    d, L = 8, 60
    V, W, rng = draw_net(arch, L, d, [12, COMBOS.index((arch, act))])
    h0 = rng.standard_normal(d)
    pL = rng.standard_normal(d)
    J = jacobian(h0, V, W, 0.5, arch, act)
    ps = backward(forward(h0, V, W, 0.5, arch, act), V, W, pL, 0.5, arch, act)
    assert_rel(ps[0], J.T @ pL, 1e-13, "p_0 vs J^T p_L")


FD_STEP = 1e-6  # central differences of a piecewise-smooth function: truncation ~h^2, round-off ~eps/h


@pytest.mark.parametrize("arch, act", COMBOS, ids=COMBO_IDS)
def test_backward_matches_finite_differences(arch, act):
    # Loss <c, h_L>: its gradient in h_0 is p_0 with p_L = c. For the piecewise-linear activations the
    # loss is linear near h_0 (no kink within FD_STEP for these draws), so the FD is exact to
    # round-off, eps |loss| / FD_STEP ~ 1e-10; for tanh the truncation error is ~1e-12. Worst case
    # measured 4.8e-10; the tolerance 1e-8 leaves a factor 20.
    d, L = 5, 8
    V, W, rng = draw_net(arch, L, d, [13, COMBOS.index((arch, act))])
    h0 = rng.standard_normal(d)
    c = rng.standard_normal(d)
    p0 = backward(forward(h0, V, W, 0.5, arch, act), V, W, c, 0.5, arch, act)[0]
    fd = np.empty(d)
    for i in range(d):
        e = np.zeros(d)
        e[i] = FD_STEP
        fd[i] = (c @ forward(h0 + e, V, W, 0.5, arch, act)[-1] - c @ forward(h0 - e, V, W, 0.5, arch, act)[-1]) / (
            2 * FD_STEP
        )
    assert_rel(p0, fd, 1e-8, "p_0 vs central differences")


@pytest.mark.parametrize("act, expected_slope", [("relu", 0.0), ("leaky_relu", SLOPE)])
def test_derivative_at_the_kink_is_the_left_derivative(act, expected_slope):
    # res-1, L = 1, h_0 = (0, 1): d h_1 / d h_0 = I + V diag(sigma'(0), 1), sigma'(0) = 0 (ReLU) or s.
    V = np.array([[[1.0, 2.0], [3.0, 4.0]]])
    h0 = np.array([0.0, 1.0])
    J = jacobian(h0, V, None, 1.0, "res1", act)
    np.testing.assert_array_equal(J, np.eye(2) + V[0] @ np.diag([expected_slope, 1.0]))
    p0 = backward(forward(h0, V, None, 1.0, "res1", act), V, None, [1.0, 1.0], 1.0, "res1", act)[0]
    np.testing.assert_array_equal(p0, J.T @ [1.0, 1.0])


def test_nan_is_not_hidden_by_relu():
    # W h overflows to inf - inf = NaN inside the kernel; ReLU(NaN) must stay NaN (then an error),
    # not become 0 and let a finite-looking trajectory through.
    W = np.array([[[1e308, 1e308], [0.0, 0.0]]])
    V = np.zeros((1, 2, 2))
    V[0, 0, 0] = 1.0
    with pytest.raises(NonFiniteError, match=r"theory\.scaling\.forward: the hidden states overflowed"):
        forward([1e308, -1e308], V, W, 1.0, "res3")
    with pytest.raises(NonFiniteError):
        jacobian([1e308, -1e308], V, W, 1.0, "res3")


# ---------------------------------------------------------------------------------------------------
# 2. Closed forms and exact expectations
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("beta", [0.25, 0.5, 1.0])
def test_res1_identity_tied_weights_is_a_matrix_power(beta):
    # h_L = (I + alpha Vbar)^L h_0, J = (I + alpha Vbar)^L, p_0 = J^T p_L.
    d, L = 4, 25
    rng = np.random.default_rng(21)
    Vbar = rng.standard_normal((d, d)) / np.sqrt(d)
    V = np.broadcast_to(Vbar, (L, d, d))
    h0, pL = rng.standard_normal(d), rng.standard_normal(d)
    P = np.linalg.matrix_power(np.eye(d) + L ** (-beta) * Vbar, L)
    hs = forward(h0, V, None, beta, "res1", "identity")
    assert_rel(hs[-1], P @ h0, 1e-13, "h_L")
    assert_rel(jacobian(h0, V, None, beta, "res1", "identity"), P, 1e-13, "J")
    assert_rel(backward(hs, V, None, pL, beta, "res1", "identity")[0], P.T @ pL, 1e-13, "p_0")


def test_hand_worked_example():
    # res-1, identity, d = 1, V = 1/2, L = 4, beta = 1: alpha = 1/4, h_k = (9/8)^k, exact in binary.
    hs = forward([1.0], np.full((4, 1, 1), 0.5), None, 1.0, "res1", "identity")
    np.testing.assert_array_equal(hs[:, 0], [1.0, 1.125, 1.265625, 1.423828125, 1.601806640625])
    # res-3, d = 1, V = W = 1, L = 1: h_1 = h_0 + ReLU(h_0) = 2 for h_0 = 1, and 1 - 0 = -1 for -1.
    hs = forward([[1.0], [-1.0]], np.ones((1, 1, 1)), np.ones((1, 1, 1)), 0.5)
    np.testing.assert_array_equal(hs[1], [[2.0], [-1.0]])
    assert norm_ratio(hs[:, 0]) == 1.0 and norm_ratio(hs)[1] == 0.0


def _mc_second_moment(arch, act, L, beta, d, n, seed, law):
    rng = np.random.default_rng(seed)
    h0 = rng.standard_normal(d)
    vals = np.empty(n)
    for i in range(n):
        V = weights(L, d, law, rng=rng)
        W = None if arch == "res1" else weights(L, d, law, rng=rng)
        vals[i] = np.sum(forward(h0, V, W, beta, arch, act)[-1] ** 2) / np.sum(h0**2)
    return vals.mean(), vals.std(ddof=1) / np.sqrt(n)


@pytest.mark.parametrize(
    "arch, act, L, beta, law, exact",
    [
        # Lemma 14, res-3 with symmetric unit-variance weights: E||h_L||^2/||h_0||^2 = (1 + alpha^2/2)^L
        # exactly (the lower bound is attained, as derived above); L = 1 gives alpha = 1: 3/2.
        ("res3", "relu", 1, 0.5, "gaussian", 1.5),
        ("res3", "relu", 4, 0.5, "uniform", (1 + 0.25 / 2) ** 4),
        ("res3", "relu", 4, 0.5, "rademacher", (1 + 0.25 / 2) ** 4),
        # res-1 identity: (1 + alpha^2)^L exactly (the upper bound is attained).
        ("res1", "identity", 4, 0.5, "gaussian", (1 + 0.25) ** 4),
    ],
)
def test_lemma14_exact_expectation_by_monte_carlo(arch, act, L, beta, law, exact):
    mean, se = _mc_second_moment(arch, act, L, beta, 8, 3000, [14, L], law)
    # 3000 draws at d = 8; measured deviations -0.85, 0.38, 0.64, 0.11 s.e.
    assert abs(mean - exact) <= 4 * se, f"MC mean {mean:.4f} vs exact {exact:.4f} (s.e. {se:.4f})"


# ---------------------------------------------------------------------------------------------------
# 3. Log domain
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch, act", HOMOGENEOUS, ids=[f"{a}-{s}" for a, s in HOMOGENEOUS])
@pytest.mark.parametrize("beta", [0.25, 1.0])
def test_log_domain_equals_direct_domain_without_overflow(arch, act, beta):
    d, L, B = 6, 40, 3
    V, W, rng = draw_net(arch, L, d, [31, int(4 * beta), COMBOS.index((arch, act))])
    h0 = 3.0 * rng.standard_normal((B, d))
    pL = rng.standard_normal((B, d))
    hs = forward(h0, V, W, beta, arch, act)
    ps = backward(hs, V, W, pL, beta, arch, act)
    u, logn = forward_normalized(h0, V, W, beta, arch, act)
    assert_rel(np.exp(logn)[..., None] * u, hs, 1e-12, "e^logn u vs forward")
    np.testing.assert_allclose(np.linalg.norm(u, axis=-1), 1.0, rtol=1e-15, atol=0)
    # Errors of the log ratios are ~eps L / ratio; the ratios here are >= 0.068 and the worst difference
    # measured 4.4e-15, so 1e-12 leaves a factor 200.
    np.testing.assert_allclose(log_norm_ratio(h0, V, W, beta, arch, act), np.log(norm_ratio(hs)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        log_gradient_ratio(h0, V, W, pL, beta, arch, act), np.log(gradient_ratio(ps)), rtol=0, atol=1e-12
    )


def test_log_domain_survives_overflow_and_matches_closed_form():
    # res-1, identity, tied V = c I: h_L = (1 + alpha c)^L h_0 and p_0 = (1 + alpha c)^L p_L, so both
    # log ratios are log((1 + alpha c)^L - 1) = L log1p(alpha c) + log1p(-(1 + alpha c)^-L).
    d, L, beta, c = 3, 4000, 0.25, 2.0
    V = np.broadcast_to(c * np.eye(d), (L, d, d))
    h0 = np.array([1.0, -2.0, 0.5])
    a = L ** (-beta)
    exact = L * np.log1p(a * c) + np.log1p(-np.exp(-L * np.log1p(a * c)))
    assert exact > 710  # e^exact overflows float64
    with pytest.raises(NonFiniteError, match=r"use the log-domain theory\.scaling\.forward_normalized"):
        forward(h0, V, None, beta, "res1", "identity")
    with pytest.raises(NonFiniteError, match=r"overflowed"):
        jacobian(h0, V, None, beta, "res1", "identity")
    np.testing.assert_allclose(log_norm_ratio(h0, V, None, beta, "res1", "identity"), exact, rtol=1e-12)
    np.testing.assert_allclose(log_gradient_ratio(h0, V, None, h0, beta, "res1", "identity"), exact, rtol=1e-12)
    u, logn = forward_normalized(h0, V, None, beta, "res1", "identity")
    np.testing.assert_allclose(u[-1], h0 / np.linalg.norm(h0), rtol=1e-12)
    np.testing.assert_allclose(logn[-1] - logn[0], L * np.log1p(a * c), rtol=1e-12)
    # backward in the direct domain overflows too
    hs = np.tile(h0, (L + 1, 1))
    with pytest.raises(NonFiniteError, match=r"the gradients p_k overflowed"):
        backward(hs, V, None, h0, beta, "res1", "identity")


def test_log_ratio_is_minus_infinity_for_the_identity_map():
    V = np.zeros((3, 2, 2))
    assert log_norm_ratio([1.0, 2.0], V, V, 0.5) == -np.inf
    assert log_gradient_ratio([1.0, 2.0], V, V, [1.0, 0.0], 0.5) == -np.inf
    assert norm_ratio(forward([1.0, 2.0], V, V)) == 0.0


def test_log_domain_reports_a_state_that_becomes_zero():
    # res-1 identity, d = 1, L = 1, V = -1, beta anything: h_1 = h_0 - h_0 = 0.
    with pytest.raises(ValueError, match=r"log_norm_ratio: a hidden state became exactly zero"):
        log_norm_ratio([1.0], -np.ones((1, 1, 1)), None, 1.0, "res1", "identity")


# ---------------------------------------------------------------------------------------------------
# 4. Weight laws
# ---------------------------------------------------------------------------------------------------

# E X^4 and E X^6 of the unit-variance laws (sqrt(d) V): Gaussian 3, 15; uniform on [-sqrt 3, sqrt 3]
# 9/5, 27/7; Rademacher 1, 1. They give the standard errors of the sample moments below.
MOMENTS = {"gaussian": (3.0, 15.0), "uniform": (9 / 5, 27 / 7), "rademacher": (1.0, 1.0)}


@pytest.mark.parametrize("law", ["gaussian", "uniform", "rademacher"])
def test_iid_laws_have_unit_variance_and_are_symmetric(law):
    L, d = 50, 20
    V = weights(L, d, law, rng=np.random.default_rng(41))
    assert V.shape == (L, d, d) and V.dtype == np.float64 and V.flags.c_contiguous
    x = (np.sqrt(d) * V).ravel()
    n = x.size
    m4, m6 = MOMENTS[law]
    assert abs(x.mean()) <= 5 * np.sqrt(1.0 / n)
    assert abs(np.mean(x**2) - 1.0) <= 5 * np.sqrt((m4 - 1.0) / n) + 1e-12  # Rademacher: exact
    assert abs(np.mean(x**3)) <= 5 * np.sqrt(m6 / n)  # symmetry (odd moments vanish)
    if law == "uniform":
        assert np.all(np.abs(x) <= np.sqrt(3.0))
        assert abs(np.mean(x**4) - m4) <= 0.1
    if law == "rademacher":
        np.testing.assert_allclose(np.abs(x), 1.0, rtol=1e-15)
        assert abs(np.mean(x > 0) - 0.5) <= 5 * 0.5 / np.sqrt(n)


@pytest.mark.parametrize("law", ["gaussian", "uniform", "rademacher", "smooth"])
def test_weights_are_deterministic_by_seed(law):
    a = weights(6, 3, law, rng=np.random.default_rng(7))
    b = weights(6, 3, law, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, weights(6, 3, law, rng=np.random.default_rng(8)))
    gen = np.random.default_rng(7)  # one generator for V and W: independent draws
    assert not np.array_equal(weights(6, 3, law, rng=gen), weights(6, 3, law, rng=gen))
    assert weights(6, 3, law).shape == (6, 3, 3)  # rng=None: fresh entropy


def _cross_layer_covariance(V):
    """Sample covariance across layers of the d^2 independent entry sequences of sqrt(d) V: (L, L)."""
    L, d = V.shape[:2]
    X = np.sqrt(d) * V.reshape(L, d * d)
    return X @ X.T / (d * d)


def _assert_covariance(C, target, n):
    # Per entry, the sample mean of n products of a bivariate normal pair with correlation rho has
    # variance (1 + rho^2) / n: test every entry within 5 s.e.
    se = np.sqrt((1.0 + target**2) / n)
    worst = np.max(np.abs(C - target) / se)
    assert worst <= 5.0, f"worst covariance deviation {worst:.2f} s.e."


@pytest.mark.parametrize("lengthscale", [None, 0.3])
def test_smooth_law_has_the_rbf_covariance_across_layers(lengthscale):
    L, d = 12, 48
    V = weights(L, d, "smooth", rng=np.random.default_rng(42), lengthscale=lengthscale)
    ell = 0.1 if lengthscale is None else lengthscale
    s = np.arange(1, L + 1) / L  # values at k/L, k = 1..L
    target = np.exp(-((s[:, None] - s[None, :]) ** 2) / (2 * ell**2))
    _assert_covariance(_cross_layer_covariance(V), target, d * d)


def test_smooth_law_increments_are_order_one_over_L():
    # A Lipschitz path sampled at k/L: max_k |V_{k+1} - V_k| sqrt(d) = O(1/L). With ell = 0.1 the
    # derivative process has standard deviation 1/ell = 10, so L * max|increment| is about
    # 10 sqrt(2 ln(#increments)) ~ 45; i.i.d. weights give increments of order 1 instead.
    d = 4
    scaled = []
    for L in (100, 200, 400):
        V = np.sqrt(d) * weights(L, d, "smooth", rng=np.random.default_rng(L))
        scaled.append(L * np.max(np.abs(np.diff(V, axis=0))))
    assert max(scaled) <= 60 and min(scaled) >= 10, scaled  # measured 31, 39, 34
    V = np.sqrt(d) * weights(400, d, "gaussian", rng=np.random.default_rng(1))
    assert 400 * np.max(np.abs(np.diff(V, axis=0))) >= 400


def test_smooth_law_on_a_fine_grid_is_finite_with_unit_variance():
    # L = 1000, ell = 0.1: the Gram matrix is numerically singular (numerical rank 31).
    V = weights(1000, 8, "smooth", rng=np.random.default_rng(3))
    assert np.all(np.isfinite(V))
    x = np.sqrt(8) * V
    assert 0.3 <= np.mean(x**2) <= 3.0  # only 64 independent paths, each ~5 correlation lengths long


@pytest.mark.parametrize("L, ell", [(1, 0.1), (7, 0.1), (200, 0.1), (1000, 0.1), (300, 0.01), (50, 1e-3), (100, 10.0)])
def test_smooth_law_factor_reproduces_the_rbf_gram_matrix(L, ell):
    # The pivoted Cholesky factor F: F F^T equals the Gram matrix to its stopping tolerance 1e-12
    # (residual variances <= 1e-12, hence every residual covariance too); measured <= 5.6e-13.
    F = scaling._weights._rbf_factor(L, ell)
    s = np.arange(1, L + 1) / L
    gram = np.exp(-((s[:, None] - s[None, :]) ** 2) / (2 * ell**2))
    np.testing.assert_allclose(F @ F.T, gram, rtol=0, atol=2e-12)
    assert F.shape[1] <= L and not F.flags.writeable
    if (L, ell) == (1000, 0.1):
        assert F.shape[1] < 50  # numerically low rank: the reason for the low-rank factor


@pytest.mark.parametrize("hurst", [0.3, 0.8])
def test_fbm_law_has_the_fgn_covariance_across_layers(hurst):
    pytest.importorskip("theory.fbm")
    L, d = 10, 48
    V = weights(L, d, "fbm", hurst=hurst, rng=np.random.default_rng(43))
    assert V.shape == (L, d, d) and V.dtype == np.float64
    k = np.abs(np.arange(L)[:, None] - np.arange(L)[None, :]).astype(float)
    gamma = 0.5 * (np.abs(k + 1) ** (2 * hurst) - 2 * k ** (2 * hurst) + np.abs(k - 1) ** (2 * hurst))
    _assert_covariance(_cross_layer_covariance(V), gamma, d * d)
    np.testing.assert_array_equal(V, weights(L, d, "fbm", hurst=hurst, rng=np.random.default_rng(43)))


def test_fbm_law_calls_fgn_and_lays_out_layers_first(monkeypatch):
    # Plumbing only, independent of theory.fbm's sampler: a stub fgn whose value encodes its indices
    # checks the call (n = L, hurst, size = (d, d), the caller's Generator), the transpose
    # (*size, n) -> (L, d, d) and the 1/sqrt(d) scale.
    import sys
    import types

    calls = []

    def fgn(n, hurst, size=(), rng=None):
        calls.append((n, hurst, size, rng))
        i, j, k = np.meshgrid(*(np.arange(m) for m in (*size, n)), indexing="ij")
        return 100.0 * i + 10.0 * j + k

    monkeypatch.setitem(sys.modules, "theory.fbm", types.SimpleNamespace(fgn=fgn))
    gen = np.random.default_rng(0)
    V = weights(5, 3, "fbm", hurst=0.7, rng=gen)
    assert calls == [(5, 0.7, (3, 3), gen)]
    k, i, j = np.meshgrid(np.arange(5), np.arange(3), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(V, (100.0 * i + 10.0 * j + k) * (1 / np.sqrt(3)))
    assert V.flags.c_contiguous


def test_fbm_law_without_theory_fbm_raises_a_clear_import_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "theory.fbm", None)  # makes `import theory.fbm` raise ImportError
    with pytest.raises(ImportError, match=r"law 'fbm' of theory\.scaling\.weights needs theory\.fbm\.fgn"):
        weights(3, 2, "fbm", hurst=0.5, rng=np.random.default_rng(0))
    assert weights(3, 2, "gaussian", rng=np.random.default_rng(0)).shape == (3, 2, 2)  # other laws unaffected


# ---------------------------------------------------------------------------------------------------
# 5. Continuous limits
# ---------------------------------------------------------------------------------------------------


def ref_em(h0, S, act, v):
    d = h0.size
    H = [np.asarray(h0, float)]
    for k in range(S.shape[0]):
        H.append(H[-1] + np.sqrt(v / d) * S[k].T @ ref_sigma(act, H[-1]))
    return np.array(H)


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "identity", "tanh"])
@pytest.mark.parametrize("variance", [1.0, 2.0])
def test_coupled_resnet_equals_euler_maruyama_on_the_same_path(act, variance):
    d, n, m = 3, 256, 8
    dB = brownian_increments(n, d, rng=np.random.default_rng(51))
    h0 = np.array([1.0, -0.5, 0.25])
    L = n // m
    S = dB.reshape(L, m, d, d).sum(axis=1)
    em = sde_em(h0, dB, act, variance, factor=m)
    assert em.shape == (L + 1, d)
    assert_rel(em, ref_em(h0, S, act, variance), 1e-13, "EM vs NumPy loop")
    np.testing.assert_array_equal(em, sde_em(h0, S, act, variance))  # factor = summing blocks
    V = coupled_weights(dB, variance, factor=m)
    assert V.shape == (L, d, d)
    np.testing.assert_allclose(V, np.sqrt(variance * L / d) * S.transpose(0, 2, 1), rtol=1e-15)
    net = forward(h0, V, None, 0.5, "res1", act)
    assert_rel(net, em, 1e-13, "coupled ResNet vs EM at the coarse step")


def test_coupled_weights_have_the_model_11_law():
    # Entries of V are i.i.d. N(0, v/d) when the increments are N(0, 1/n): d V^2 / v has mean 1 (s.e.
    # sqrt(2/n)), whatever the factor.
    d, n, v = 8, 512, 2.0
    dB = brownian_increments(n, d, rng=np.random.default_rng(52))
    for factor in (1, 4):
        x = coupled_weights(dB, v, factor=factor).ravel() * np.sqrt(d / v)
        assert abs(np.mean(x**2) - 1.0) <= 5 * np.sqrt(2.0 / x.size)
        assert abs(np.mean(x)) <= 5 * np.sqrt(1.0 / x.size)
    inc = brownian_increments(n, d, rng=np.random.default_rng(53)).ravel()
    assert abs(np.mean(inc**2) * n - 1.0) <= 5 * np.sqrt(2.0 / inc.size)


def test_euler_maruyama_strong_error_decreases_like_one_over_sqrt_L():
    # Proposition 10 in miniature: E||h_L - H_1|| against a fine EM reference on the same paths
    # (L_ref = 1024 >= 32 L, so that the reference error is negligible), 60 paths; the slope is -1/2 up to sampling noise and
    # the pre-asymptotic L = 4 (measured -0.44; the checks module does the full rate fit).
    d, n, paths = 3, 1024, 60
    rng = np.random.default_rng(54)
    Ls = np.array([4, 16, 32])
    errs = np.zeros(Ls.size)
    h0 = np.ones(d)
    for _ in range(paths):
        dB = brownian_increments(n, d, rng=rng)
        ref = sde_em(h0, dB, "leaky_relu")[-1]
        for i, L in enumerate(Ls):
            V = coupled_weights(dB, factor=n // L)
            errs[i] += np.linalg.norm(forward(h0, V, None, 0.5, "res1", "leaky_relu")[-1] - ref)
    slope = np.polyfit(np.log(Ls), np.log(errs / paths), 1)[0]
    assert -0.75 <= slope <= -0.3, slope


@pytest.mark.parametrize("batch", [False, True])
def test_neural_ode_matches_matrix_exponential(batch):
    # Tied V, g = identity (res-1): H_t = e^{t V} h_0; with V_t = cos(t) Vbar: H_t = e^{sin(t) Vbar} h_0.
    rng = np.random.default_rng(61)
    d = 4
    Vbar = rng.standard_normal((d, d))
    h0 = rng.standard_normal((2, d)) if batch else rng.standard_normal(d)
    t = np.array([0.0, 0.25, 0.5, 1.0])
    H = neural_ode(h0, Vbar, None, t, "res1", "identity")
    H2 = neural_ode(h0, lambda s: np.cos(s) * Vbar, None, t, "res1", "identity")
    assert H.shape == (4,) + h0.shape
    for i, ti in enumerate(t):
        assert_rel(H[i], h0 @ expm(ti * Vbar).T, 1e-10, f"e^(tV) h0 at t = {ti}")
        assert_rel(H2[i], h0 @ expm(np.sin(ti) * Vbar).T, 1e-10, f"e^(sin(t) V) h0 at t = {ti}")
    assert neural_ode(h0, Vbar, None, 1.0, "res1", "identity").shape == h0.shape
    np.testing.assert_array_equal(neural_ode(h0, Vbar, None, [0.0, 0.0], "res1", "identity")[1], h0)


def test_beta_one_network_converges_to_the_neural_ode_at_rate_one_over_L():
    # Proposition 11: V_k = V(k/L), W_k = W(k/L), beta = 1, res-2 tanh; error at t = 1 halves with L.
    rng = np.random.default_rng(62)
    d = 4
    A, B, C, D = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))
    Vf = lambda t: A + np.sin(3 * t) * B  # noqa: E731
    Wf = lambda t: C + np.cos(2 * t) * D  # noqa: E731
    h0 = rng.standard_normal(d)
    H1 = neural_ode(h0, Vf, Wf, 1.0, "res2", "tanh")
    errs = []
    for L in (50, 100, 200):
        s = np.arange(1, L + 1) / L
        V = np.stack([Vf(x) for x in s])
        W = np.stack([Wf(x) for x in s])
        errs.append(np.linalg.norm(forward(h0, V, W, 1.0, "res2", "tanh")[-1] - H1))
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 1.9) & (ratios < 2.1)), (errs, ratios)  # measured 2.007, 2.004


def test_neural_ode_passes_user_exceptions_through():
    class Boom(Exception):
        pass

    def bad(t):
        if t > 0.5:
            raise Boom("from the user's callable")
        return np.eye(2)

    with pytest.raises(Boom, match="from the user's callable"):
        neural_ode([1.0, 0.0], bad, None, 1.0, "res1", "identity")


# ---------------------------------------------------------------------------------------------------
# 6. The contract
# ---------------------------------------------------------------------------------------------------

FWD = r"theory\.scaling\.forward"
H3 = np.ones(3)
V3 = np.full((2, 3, 3), 0.1)


def _with(a, idx, value):
    a = np.array(a, dtype=float)
    a[idx] = value
    return a


BAD_CALLS = [
    ("arch-unknown", lambda: forward(H3, V3, V3, arch="res4"), ValueError,
     rf"`arch` of {FWD} must be one of \['res1', 'res2', 'res3'\]; got 'res4'"),
    ("arch-not-str", lambda: forward(H3, V3, V3, arch=3), TypeError, r"`arch` of .* must be a string"),
    ("activation-unknown", lambda: forward(H3, V3, V3, arch="res2", activation="gelu"), ValueError,
     r"`activation` of .* must be one of \['identity', 'leaky_relu', 'relu', 'tanh'\]; got 'gelu'"),
    ("res3-not-relu", lambda: forward(H3, V3, V3, arch="res3", activation="tanh"), ValueError,
     r"`activation` of .* must be 'relu' for arch 'res3'"),
    ("beta-zero", lambda: forward(H3, V3, V3, beta=0.0), ValueError,
     rf"`beta` of {FWD} must lie in \(0\.0, inf\); got 0\.0"),
    ("beta-negative", lambda: forward(H3, V3, V3, beta=-1), ValueError, r"`beta` of .* must lie in"),
    ("beta-nan", lambda: forward(H3, V3, V3, beta=np.nan), ValueError, r"`beta` of .* must lie in"),
    ("beta-inf", lambda: forward(H3, V3, V3, beta=np.inf), ValueError, r"`beta` of .* must lie in"),
    ("beta-str", lambda: forward(H3, V3, V3, beta="0.5"), TypeError, r"`beta` of .* must be a real number"),
    ("slope-nan", lambda: forward(H3, V3, None, arch="res1", activation="leaky_relu", slope=np.nan), ValueError,
     r"`slope` of .* must lie in"),
    ("V-wrong-d", lambda: forward(H3, np.ones((2, 3, 4)), None, arch="res1"), ValueError,
     rf"`V` of {FWD} must have shape \(L, 3, 3\) with L >= 1 and d = 3 from `h0`; got \(2, 3, 4\)"),
    ("V-empty-depth", lambda: forward(H3, np.ones((0, 3, 3)), np.ones((0, 3, 3))), ValueError,
     r"`V` of .* must have shape \(L, 3, 3\) with L >= 1"),
    ("V-2d", lambda: forward(H3, np.ones((3, 3)), None, arch="res1"), ValueError, r"`V` of .* must have 3 dimension"),
    ("V-nan", lambda: forward(H3, _with(V3, (0, 0, 0), np.nan), V3), ValueError, r"`V` of .* must be finite"),
    ("V-complex", lambda: forward(H3, V3 * 1j, V3), TypeError, r"`V` of .* must be a real numeric array"),
    ("W-missing", lambda: forward(H3, V3), ValueError, rf"`W` of {FWD} is required for arch 'res3'"),
    ("W-for-res1", lambda: forward(H3, V3, V3, arch="res1"), ValueError, r"`W` of .* must be None for arch 'res1'"),
    ("W-wrong-shape", lambda: forward(H3, V3, V3[:1]), ValueError,
     r"`W` of .* must have the shape of `V`, \(2, 3, 3\); got \(1, 3, 3\)"),
    ("W-inf", lambda: forward(H3, V3, _with(V3, (1, 2, 2), np.inf)), ValueError, r"`W` of .* must be finite"),
    ("h0-scalar", lambda: forward(1.0, V3, V3), ValueError,
     r"`h0` of .* must have 1 or 2 dimension\(s\); got shape \(\)"),
    ("h0-3d", lambda: forward(np.ones((1, 1, 3)), V3, V3), ValueError, r"`h0` of .* must have 1 or 2 dimension"),
    ("h0-empty", lambda: forward(np.ones(0), np.ones((2, 0, 0)), np.ones((2, 0, 0))), ValueError,
     r"`h0` of .* must have d >= 1"),
    ("h0-string", lambda: forward("abc", V3, V3), TypeError, r"`h0` of .* must be a real numeric array"),
    ("h0-ragged", lambda: forward([[1.0, 2.0], [3.0]], V3, V3), TypeError, r"`h0` of .* must be a real array"),
    ("h0-nan", lambda: forward(_with(H3, 0, np.nan), V3, V3), ValueError, r"`h0` of .* must be finite"),
    ("backward-hs-depth", lambda: backward(np.ones((4, 3)), V3, V3, H3), ValueError,
     r"`hs` of theory\.scaling\.backward must hold L \+ 1 = 3 states for L = 2 layers in `V`; got 4"),
    ("backward-hs-1d", lambda: backward(H3, V3, V3, H3), ValueError, r"`hs` of .* must have 2 or 3 dimension"),
    ("backward-pL-shape", lambda: backward(np.ones((3, 2, 3)), V3, V3, H3), ValueError,
     r"`pL` of .* must have shape \(2, 3\), matching `hs` \(3, 2, 3\); got \(3,\)"),
    ("backward-pL-nan", lambda: backward(np.ones((3, 3)), V3, V3, _with(H3, 1, np.nan)), ValueError,
     r"`pL` of .* must be finite"),
    ("jacobian-W-for-res1", lambda: jacobian(H3, V3, V3, arch="res1"), ValueError, r"`W` of theory\.scaling\.jacobian"),
    ("norm_ratio-zero-h0", lambda: norm_ratio(np.zeros((2, 3))), ValueError,
     r"`hs` of theory\.scaling\.norm_ratio must have a nonzero h_0"),
    ("gradient_ratio-zero-pL", lambda: gradient_ratio(np.zeros((2, 3))), ValueError,
     r"`ps` of .* must have a nonzero p_L"),
    ("norm_ratio-1d", lambda: norm_ratio(H3), ValueError, r"`hs` of .* must have 2 or 3 dimension"),
    ("norm_ratio-overflow", lambda: norm_ratio([[1e-300, 0.0], [1e300, 0.0]]), NonFiniteError, r"the ratio overflowed"),
    ("log-tanh", lambda: log_norm_ratio(H3, V3, V3, arch="res2", activation="tanh"), ValueError,
     r"`activation` of theory\.scaling\.log_norm_ratio must be one of \['identity', 'leaky_relu', 'relu'\]"),
    ("log-zero-h0", lambda: log_norm_ratio(np.zeros(3), V3, V3), ValueError, r"`h0` of .* must be nonzero"),
    ("log-grad-zero-pL", lambda: log_gradient_ratio(H3, V3, V3, np.zeros(3)), ValueError,
     r"`pL` of .* must be nonzero"),
    ("log-grad-pL-shape", lambda: log_gradient_ratio(H3, V3, V3, np.ones(2)), ValueError,
     r"`pL` of .* must have shape \(3,\), matching `h0`; got \(2,\)"),
    ("normalized-tanh", lambda: forward_normalized(H3, V3, None, arch="res1", activation="tanh"), ValueError,
     r"A tanh network grows at most linearly"),
    ("weights-law", lambda: weights(3, 2, "cauchy"), ValueError,
     r"`law` of theory\.scaling\.weights must be one of \['fbm', 'gaussian', 'rademacher', 'smooth', 'uniform'\]"),
    ("weights-L-zero", lambda: weights(0, 2, "gaussian"), ValueError, r"`L` of .* must be >= 1; got 0"),
    ("weights-d-float", lambda: weights(3, 2.0, "gaussian"), TypeError, r"`d` of .* must be an integer"),
    ("weights-L-bool", lambda: weights(True, 2, "gaussian"), TypeError, r"`L` of .* must be an integer"),
    ("weights-hurst-missing", lambda: weights(3, 2, "fbm"), ValueError, r"`hurst` of .* is required for law 'fbm'"),
    ("weights-hurst-one", lambda: weights(3, 2, "fbm", hurst=1.0), ValueError,
     r"`hurst` of .* must lie in \(0\.0, 1\.0\); got 1\.0"),
    ("weights-hurst-other-law", lambda: weights(3, 2, "gaussian", hurst=0.5), ValueError,
     r"`hurst` of .* applies to law 'fbm' only"),
    ("weights-lengthscale-other-law", lambda: weights(3, 2, "uniform", lengthscale=0.2), ValueError,
     r"`lengthscale` of .* applies to law 'smooth' only"),
    ("weights-lengthscale-zero", lambda: weights(3, 2, "smooth", lengthscale=0.0), ValueError,
     r"`lengthscale` of .* must lie in \(0\.0, inf\)"),
    ("weights-rng-bad", lambda: weights(3, 2, "gaussian", rng="seed"), TypeError,
     r"`rng` of .* must be None, an int seed or a numpy\.random\.Generator; got str"),
    ("weights-rng-legacy", lambda: weights(3, 2, "gaussian", rng=np.random.RandomState(0)), TypeError, r"`rng` of"),
    # NumPy's convention: an int is a seed (before: TypeError); a negative one is refused
    ("weights-rng-negative", lambda: weights(3, 2, "gaussian", rng=-1), ValueError, r"`rng` of .* non-negative int"),
    ("brownian-rng-float", lambda: brownian_increments(4, 2, rng=0.5), TypeError, r"`rng` of .*brownian_increments"),
    ("weights-L-huge", lambda: weights(10**12, 2, "gaussian"), ValueError,
     r"`L` of theory\.scaling\.weights = 1000000000000 needs 58\.2 TiB of memory"),
    ("weights-smooth-L-huge", lambda: weights(10**6, 1, "smooth"), ValueError, r"`L` of .* needs 14\.6 TiB"),
    ("brownian-n-huge", lambda: brownian_increments(10**12, 1), ValueError, r"`n` of .* needs 7\.3 TiB"),
    ("sde-increments-not-square", lambda: sde_em(H3, np.ones((4, 3, 2))), ValueError,
     r"`increments` of theory\.scaling\.sde_em must have shape \(n, d, d\)"),
    ("sde-increments-d", lambda: sde_em(H3, np.ones((4, 2, 2))), ValueError,
     r"`increments` of .* must have shape \(n, 3, 3\) with d = 3 from `h0`"),
    ("sde-factor", lambda: sde_em(H3, np.ones((4, 3, 3)), factor=3), ValueError,
     r"`factor` of .* must divide the number of increments n = 4; got 3"),
    ("sde-variance", lambda: sde_em(H3, np.ones((4, 3, 3)), variance=0), ValueError, r"`variance` of .* must lie in"),
    ("sde-activation", lambda: sde_em(H3, np.ones((4, 3, 3)), "softplus"), ValueError,
     r"`activation` of .* must be one of"),
    ("coupled-factor-zero", lambda: coupled_weights(np.ones((4, 3, 3)), factor=0), ValueError, r"`factor` of .* must be >= 1"),
    ("coupled-variance-huge", lambda: coupled_weights(np.full((4, 3, 3), 1e300), 1e300), NonFiniteError,
     r"the weights overflowed"),
    ("brownian-n", lambda: brownian_increments(0, 2), ValueError, r"`n` of .* must be >= 1"),
    ("ode-t-range", lambda: neural_ode(H3, np.eye(3), None, 1.5, "res1"), ValueError,
     r"`t` of theory\.scaling\.neural_ode must be non-decreasing times in \[0, 1\]"),
    ("ode-t-decreasing", lambda: neural_ode(H3, np.eye(3), None, [0.5, 0.2], "res1"), ValueError, r"`t` of .* non-decreasing"),
    ("ode-t-empty", lambda: neural_ode(H3, np.eye(3), None, [], "res1"), ValueError, r"`t` of .* must have at least 1"),
    ("ode-V-shape", lambda: neural_ode(H3, np.eye(2), None, 1.0, "res1"), ValueError, r"`V` of .* must have shape \(3, 3\)"),
    ("ode-V-callable-shape", lambda: neural_ode(H3, lambda t: np.eye(2), None, 1.0, "res1"), ValueError,
     r"`V` of .* must return shape \(3, 3\) at every t; got \(2, 2\) at t = 0\.0"),
    ("ode-V-callable-nan", lambda: neural_ode(H3, lambda t: np.full((3, 3), np.nan), None, 1.0, "res1"), ValueError,
     r"`V\(t\)` of .* must be finite"),
    ("ode-W-missing", lambda: neural_ode(H3, np.eye(3), None, 1.0, "res2"), ValueError, r"`W` of .* is required"),
    ("ode-W-for-res1", lambda: neural_ode(H3, np.eye(3), np.eye(3), 1.0, "res1"), ValueError, r"`W` of .* must be None"),
    ("ode-rtol", lambda: neural_ode(H3, np.eye(3), None, 1.0, "res1", rtol=0.0), ValueError, r"`rtol` of .* must lie in"),
    ("ode-res3-tanh", lambda: neural_ode(H3, np.eye(3), np.eye(3), 1.0, "res3", "tanh"), ValueError,
     r"must be 'relu' for arch 'res3'"),
    ("ode-overflow", lambda: neural_ode(H3, 1e3 * np.eye(3), None, 1.0, "res1", "identity"), NonFiniteError,
     r"the ODE solution overflowed"),
]


@pytest.mark.parametrize("call, exc, pattern", [pytest.param(*row[1:], id=row[0]) for row in BAD_CALLS])
def test_bad_input_raises_named_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert type(info.value) is exc  # not a subclass such as a Numba error deriving from TypeError


def _all_outputs(h0, V, W, pL):
    hs = forward(h0, V, W, 0.5, "res2", "leaky_relu")
    return {
        "forward": hs,
        "backward": backward(hs, V, W, pL, 0.5, "res2", "leaky_relu"),
        "jacobian": jacobian(h0, V, W, 0.5, "res2", "leaky_relu"),
        "log_norm_ratio": np.asarray(log_norm_ratio(h0, V, W, 0.5, "res2", "leaky_relu")),
        "log_gradient_ratio": np.asarray(log_gradient_ratio(h0, V, W, pL, 0.5, "res2", "leaky_relu")),
        "sde_em": sde_em(h0, V, "leaky_relu"),
        "coupled_weights": coupled_weights(V),
    }


@pytest.mark.parametrize("variant", ["list", "python-int", "float32", "int32", "read-only", "strided", "fortran"])
def test_accepted_input_kinds_give_identical_float64_outputs(variant):
    rng = np.random.default_rng(71)
    V, W = rng.standard_normal((2, 4, 3, 3)) / 3
    h0, pL = rng.standard_normal((2, 2, 3))
    arrays = (h0, V, W, pL)
    if variant == "list":
        args = tuple(a.tolist() for a in arrays)
    elif variant == "python-int":
        arrays = tuple(np.round(3 * a) for a in arrays)  # small integers, exact in float64
        args = tuple(a.astype(int).tolist() for a in arrays)
    elif variant in ("float32", "int32"):
        if variant == "int32":
            arrays = tuple(np.round(3 * a) for a in arrays)
        args = tuple(a.astype(variant) for a in arrays)
        arrays = tuple(a.astype(np.float64) for a in args)
    elif variant == "read-only":
        args = tuple(a.copy() for a in arrays)
        for a in args:
            a.setflags(write=False)
    elif variant == "strided":
        args = tuple(np.repeat(a, 2, axis=-1)[..., ::2] for a in arrays)
        assert not any(a.flags.c_contiguous for a in args)
    else:
        args = tuple(np.asfortranarray(a) for a in arrays)
        assert not args[1].flags.c_contiguous
    expected = _all_outputs(*arrays)
    got = _all_outputs(*args)
    assert_outputs_equal(got, expected)


def test_user_arrays_are_not_modified_and_not_aliased():
    rng = np.random.default_rng(72)
    V, W = rng.standard_normal((2, 5, 3, 3)) / 3
    h0, pL = rng.standard_normal((2, 2, 3))
    saved = [a.copy() for a in (h0, V, W, pL)]
    outs = _all_outputs(h0, V, W, pL)
    hs = outs["forward"]
    hs_saved = hs.copy()
    backward(hs, V, W, pL, 0.5, "res2", "leaky_relu")
    np.testing.assert_array_equal(hs, hs_saved)
    forward_normalized(h0, V, W, 0.5, "res2", "relu")
    norm_ratio(hs)
    neural_ode(h0, V[0], W[0], [0.5, 1.0], "res2", "tanh")
    for name, value in outs.items():
        for user in (h0, V, W, pL):
            assert not np.shares_memory(value, user), name
    for before, after in zip(saved, (h0, V, W, pL)):
        np.testing.assert_array_equal(after, before)


def test_documented_choices_equal_the_accepted_ones():
    assert set(ARCHS) == {"res1", "res2", "res3"}
    assert set(ACTIVATIONS) == {"relu", "leaky_relu", "identity", "tanh"}
    assert LAWS == ("gaussian", "uniform", "rademacher", "smooth", "fbm")
    for arch in ARCHS:
        assert f'"{arch}"' in forward.__doc__
    for act in ACTIVATIONS:
        assert f'"{act}"' in forward.__doc__
    for law in LAWS:
        assert f'``"{law}"``' in weights.__doc__
    assert scaling.SMOOTH_LENGTHSCALE == 0.1 and "0.1" in weights.__doc__
    d, L = 2, 3
    for arch, act in COMBOS:
        V, W, rng = draw_net(arch, L, d, 0)
        assert forward(np.ones(d), V, W, 0.5, arch, act).shape == (L + 1, d)
    for law in LAWS:
        if law == "fbm" and not _has_fbm():
            continue
        kwargs = {"hurst": 0.7} if law == "fbm" else {}
        assert weights(L, d, law, rng=np.random.default_rng(0), **kwargs).shape == (L, d, d)
    assert set(scaling.__all__) >= {"weights", "forward", "backward", "jacobian", "norm_ratio", "gradient_ratio",
                                    "log_norm_ratio", "log_gradient_ratio", "forward_normalized", "sde_em",
                                    "coupled_weights", "brownian_increments", "neural_ode"}


def _has_fbm():
    try:
        import theory.fbm  # noqa: F401
    except ImportError:
        return False
    return True


# --- Hypothesis: arbitrary shapes and dtypes reach only TypeError / ValueError ---------------------

_SHAPES = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)


def _array_like(shape=None, bound=None, numeric=False):
    """``_inputs.array_like`` with this module's shapes."""
    return array_like(_SHAPES, shape, bound, numeric, extra_kinds=("none",))


_FUNCS = ["forward", "backward", "jacobian", "log_norm_ratio", "log_gradient_ratio", "forward_normalized",
          "norm_ratio", "sde_em"]


@st.composite
def _calls(draw):
    """Half arbitrary calls, half with names and shapes that fit (any dtype and values)."""
    func = draw(st.sampled_from(_FUNCS))
    if draw(st.booleans()):
        beta = draw(st.sampled_from([0.5, 1.0, 0.01, 0.0, -1.0, np.nan, "x", None, 2]))
        arch = draw(st.sampled_from(["res1", "res2", "res3", "res4", None, 1]))
        act = draw(st.sampled_from(["relu", "leaky_relu", "identity", "tanh", "elu", None]))
        return func, draw(_array_like()), draw(_array_like()), draw(_array_like()), draw(_array_like()), beta, arch, act
    arch, act = draw(st.sampled_from(COMBOS))
    beta = draw(st.sampled_from([0.5, 1.0, 0.01, 2]))
    d = draw(st.integers(1, 3))
    L = draw(st.integers(0, 4))
    xshape = draw(st.sampled_from([(d,), (draw(st.integers(1, 3)), d)]))
    bound = draw(st.sampled_from([None, 1e3, 1e3]))  # unbounded elements are mostly NaN, inf, huge
    h0 = draw(_array_like(xshape, bound=bound, numeric=True))
    V = draw(_array_like((L, d, d), bound=bound, numeric=True))
    W = None if arch == "res1" else draw(_array_like((L, d, d), bound=bound, numeric=True))
    pL = draw(_array_like(xshape, bound=bound, numeric=True))
    return func, h0, V, W, pL, beta, arch, act


@settings(deadline=None, max_examples=300, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_calls())
def test_arbitrary_inputs_raise_only_type_or_value_errors(call):
    func, h0, V, W, pL, beta, arch, act = call
    try:
        if func == "backward":
            L = np.shape(V)[0] if np.ndim(V) >= 1 else 0
            hs = np.repeat(np.asarray(h0)[None], L + 1, axis=0)  # h_0 repeated: fits when h0 and V fit
            outs = (backward(hs, V, W, pL, beta, arch, act),)
        elif func == "log_gradient_ratio":
            outs = (log_gradient_ratio(h0, V, W, pL, beta, arch, act),)
        elif func == "forward_normalized":
            outs = forward_normalized(h0, V, W, beta, arch, act)
        elif func == "norm_ratio":
            outs = (norm_ratio(V),)
        elif func == "sde_em":
            outs = (sde_em(h0, V, act, 1.0 if beta is None else beta),)
        else:
            outs = (getattr(scaling, func)(h0, V, W, beta, arch, act),)
    except (TypeError, ValueError) as exc:
        event(f"{func}: {type(exc).__name__}")
        assert type(exc) in (TypeError, ValueError, NonFiniteError), repr(exc)
        assert "`" in str(exc) or isinstance(exc, NonFiniteError) or "became exactly zero" in str(exc), repr(exc)
        return
    event(f"{func}: ran")
    for out in outs:
        out = np.asarray(out)
        assert out.dtype == np.float64
        assert np.all(np.isfinite(out) | (out == -np.inf))  # -inf: a log ratio of an exact identity map


@pytest.mark.parametrize("ell", [5e-324, 1e-300, 1e300, 1.7e308])
def test_smooth_weights_with_extreme_lengthscale_are_finite(ell):
    # before: divide by zero (RuntimeWarning, then NaN) for ell near 1e-300 and OverflowError near 1e300.
    # Limits: i.i.d. Gaussian across layers as ell -> 0, one shared matrix as ell -> inf.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        V = weights(6, 2, "smooth", rng=np.random.default_rng(0), lengthscale=ell)
    assert np.all(np.isfinite(V))
    if ell > 1:
        np.testing.assert_allclose(V, np.broadcast_to(V[0], V.shape), rtol=1e-12)
