"""Tests of theory.resnet.training: Adam, two moons, the logistic head, the loss-trick gradient and
the Figure 1 measurements, each against an independent reference (hand-computed values, finite
differences, closed forms)."""

from __future__ import annotations

import numpy as np
import pytest

from theory.resnet import final_state, forward, interpolating_ode, mlp
from theory.resnet.training import (
    Adam,
    crossing_count,
    deepen_mlp,
    increasing_fit_floor,
    init_mlp,
    layer_derivative,
    lift,
    logistic_head,
    loss_gradient,
    refine_slices,
    two_moons,
)

# --------------------------------------------------------------------------- Adam


def test_adam_first_step_by_hand():
    # t = 1: m = 0.1 g, v = 0.001 g^2, m_hat = g, v_hat = g^2, step = lr g / (|g| + eps)
    opt = Adam(0.5, eps=1e-8)
    p = np.array([1.0, -2.0, 0.0])
    g = np.array([2.0, -0.25, 0.0])
    out = opt.step(p, g)
    expected = p - 0.5 * g / (np.abs(g) + 1e-8)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(p, [1.0, -2.0, 0.0])  # not modified


def test_adam_second_step_by_hand():
    # two steps with g1 = 1, g2 = 3 (beta1 = 0.9, beta2 = 0.999), computed by hand:
    # m2 = 0.9 * 0.1 + 0.1 * 3 = 0.39, m_hat = 0.39 / (1 - 0.81) = 0.39 / 0.19
    # v2 = 0.999 * 0.001 + 0.001 * 9 = 0.009999, v_hat = 0.009999 / (1 - 0.998001) = 0.009999 / 0.001999
    opt = Adam(0.1, eps=1e-8)
    p1 = opt.step(np.array([0.0]), np.array([1.0]))
    p2 = opt.step(p1, np.array([3.0]))
    m_hat = 0.39 / 0.19
    v_hat = 0.009999 / 0.001999
    expected = -0.1 * (1.0 / (1.0 + 1e-8)) - 0.1 * m_hat / (np.sqrt(v_hat) + 1e-8)
    np.testing.assert_allclose(p2, [expected], rtol=1e-13)
    assert opt.t == 2


def test_adam_lr_override_and_validation():
    opt = Adam(1.0)
    assert opt.step(np.array([1.0]), np.array([5.0]), lr=0.0)[0] == 1.0
    with pytest.raises(ValueError, match="`lr`"):
        Adam(0.0)
    with pytest.raises(ValueError, match="`beta1`"):
        Adam(0.1, beta1=1.0)
    with pytest.raises(ValueError, match="shape of `params`"):
        Adam(0.1).step(np.zeros(3), np.zeros(2))
    opt = Adam(0.1)
    opt.step(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="changed shape"):
        opt.step(np.zeros(2), np.ones(2))


def test_adam_minimises_a_quadratic():
    opt = Adam(0.05)
    p = np.array([3.0, -2.0])
    for _ in range(2000):
        p = opt.step(p, 2 * (p - np.array([1.0, 0.5])))
    np.testing.assert_allclose(p, [1.0, 0.5], atol=1e-3)


# --------------------------------------------------------------------------- two moons


def test_two_moons_shape_balance_determinism():
    X, y = two_moons(513, 0.15, np.random.default_rng(4))
    assert X.shape == (513, 2) and y.shape == (513,)
    assert y.dtype == np.int64 and set(np.unique(y)) == {0, 1}
    assert int((y == 0).sum()) == 256 and int((y == 1).sum()) == 257
    X2, y2 = two_moons(513, 0.15, np.random.default_rng(4))
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = two_moons(513, 0.15, np.random.default_rng(5))
    assert not np.array_equal(X, X3)


def test_two_moons_noiseless_geometry():
    X, y = two_moons(400, 0.0, np.random.default_rng(0))
    outer, inner = X[y == 0], X[y == 1]
    # class 0 on the unit upper half circle; class 1 on the lower half circle centred at (1, 1/2)
    np.testing.assert_allclose(np.hypot(*outer.T), 1.0, atol=1e-12)
    assert np.all(outer[:, 1] >= -1e-12)
    np.testing.assert_allclose(np.hypot(inner[:, 0] - 1.0, inner[:, 1] - 0.5), 1.0, atol=1e-12)
    assert np.all(inner[:, 1] <= 0.5 + 1e-12)


def test_two_moons_noise_level():
    X, y = two_moons(20000, 0.15, np.random.default_rng(1))
    # distance to the clean circle of each point's class: for noise small against the radius 1 it
    # is about the radial component of the noise, of rms 0.15
    dist = np.where(y == 0, np.hypot(X[:, 0], X[:, 1]) - 1, np.hypot(X[:, 0] - 1, X[:, 1] - 0.5) - 1)
    assert 0.14 < np.sqrt(np.mean(dist**2)) < 0.16
    assert abs(np.mean(dist)) < 0.02


def test_two_moons_validation():
    with pytest.raises(TypeError, match="`rng`"):
        two_moons(10, 0.1, 0.5)
    # NumPy's rng convention: an int is a seed (before: TypeError)
    np.testing.assert_array_equal(two_moons(6, 0.1, 3)[0], two_moons(6, 0.1, np.random.default_rng(3))[0])
    with pytest.raises(ValueError, match="`noise`"):
        two_moons(10, -0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="`n`"):
        two_moons(1, 0.1, np.random.default_rng(0))


def test_lift_zero_pads():
    out = lift([[1.0, 2.0]], 4)
    np.testing.assert_array_equal(out, [[1.0, 2.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="`d`"):
        lift([[1.0, 2.0]], 1)


# --------------------------------------------------------------------------- logistic head


def _loss_only(xN, w, c, y):
    z = xN @ w + c
    return float(np.mean(np.log1p(np.exp(z)) - y * z))  # plain formula, fine for moderate z


def test_logistic_head_gradients_against_finite_differences():
    rng = np.random.default_rng(2)
    B, d = 7, 3
    xN, w, c = rng.standard_normal((B, d)), rng.standard_normal(d), 0.3
    y = rng.integers(0, 2, B)
    loss, gx, gw, gc = logistic_head(xN, w, c, y)
    assert loss == pytest.approx(_loss_only(xN, w, c, y), rel=1e-13)
    h = 1e-6

    def central(f, a):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            e = np.zeros_like(a)
            e[idx] = h
            g[idx] = (f(a + e) - f(a - e)) / (2 * h)
        return g

    np.testing.assert_allclose(gx, central(lambda a: _loss_only(a, w, c, y), xN), atol=1e-9)
    np.testing.assert_allclose(gw, central(lambda a: _loss_only(xN, a, c, y), w), atol=1e-9)
    assert gc == pytest.approx((_loss_only(xN, w, c + h, y) - _loss_only(xN, w, c - h, y)) / (2 * h), abs=1e-9)


def test_logistic_head_stable_for_large_logits():
    loss, gx, _, _ = logistic_head(np.array([[1000.0], [-1000.0]]), np.array([1.0]), 0.0, [1, 0])
    assert loss == 0.0 and np.all(np.isfinite(gx))
    with pytest.raises(ValueError, match="`labels`"):
        logistic_head(np.zeros((2, 1)), np.ones(1), 0.0, [0, 2])


# --------------------------------------------------------------------------- loss trick


@pytest.mark.parametrize("scheme", ["euler", "heun"])
def test_loss_gradient_against_finite_differences(scheme):
    """grad of l(x_N) = logistic head loss, through gradient(y = x_N - grad l), vs central differences."""
    rng = np.random.default_rng(3)
    d, N, B = 2, 3, 5
    r = mlp(3)
    n_slices = N + (scheme == "heun")
    V = 0.7 * rng.standard_normal((n_slices, d, 3))
    W, b = rng.standard_normal((n_slices, 3, d)), rng.standard_normal((n_slices, 3))
    theta = r.pack(V, W, b)
    x0 = rng.standard_normal((B, d))
    w, c = rng.standard_normal(d), -0.2
    y = rng.integers(0, 2, B)

    def ell(th):
        return logistic_head(final_state(x0, th, r, scheme), w, c, y)[0]

    xN = final_state(x0, theta, r, scheme)
    _, gx, _, _ = logistic_head(xN, w, c, y)
    g_theta, g_x0 = loss_gradient(x0, theta, gx, r, scheme, "backprop", xN=xN)
    h = 1e-5
    fd = np.zeros_like(theta)
    for idx in np.ndindex(theta.shape):
        e = np.zeros_like(theta)
        e[idx] = h
        fd[idx] = (ell(theta + e) - ell(theta - e)) / (2 * h)
    np.testing.assert_allclose(g_theta, fd, atol=1e-9, rtol=1e-6)
    fdx = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[idx] = h
        fdx[idx] = (logistic_head(final_state(x0 + e, theta, r, scheme), w, c, y)[0]
                    - logistic_head(final_state(x0 - e, theta, r, scheme), w, c, y)[0]) / (2 * h)
    np.testing.assert_allclose(g_x0, fdx, atol=1e-9, rtol=1e-6)
    # without xN the function computes it itself; same result
    g2, _ = loss_gradient(x0, theta, gx, r, scheme, "backprop")
    np.testing.assert_array_equal(g2, g_theta)


def test_loss_gradient_adjoint_is_close_at_depth():
    """The adjoint variant of the trick approaches backprop as N grows (Prop. 4)."""
    rng = np.random.default_rng(5)
    r = mlp(4)
    errs = []
    for N in (8, 32):
        theta = init_mlp(r, N, 2, np.random.default_rng(0))
        V, W, b = r.unpack(theta, 2)
        theta = r.pack(0.5 * np.ones_like(V), W, b)  # smooth (constant) V so that the rate is clean
        x0 = rng.standard_normal((4, 2))
        g = rng.standard_normal((4, 2))
        exact, _ = loss_gradient(x0, theta, g, r)
        approx, _ = loss_gradient(x0, theta, g, r, method="adjoint")
        errs.append(np.abs(exact - approx).max())
    assert errs[1] < errs[0] / 8  # O(1/N^2) per slice: a factor ~16 for N x 4


# --------------------------------------------------------------------------- Figure 1 measurements


def test_layer_derivative_against_closed_form():
    r = mlp(5)
    rng = np.random.default_rng(6)
    V, W, b = rng.standard_normal((1, 5)), rng.standard_normal((5, 1)), rng.standard_normal(5)
    theta = r.pack(V, W, b)
    x = np.linspace(-2, 2, 41)
    # f(x) = sum_j V_j tanh(W_j x + b_j), f'(x) = sum_j V_j W_j (1 - tanh^2(W_j x + b_j))
    closed = ((1 - np.tanh(np.outer(x, W[:, 0]) + b) ** 2) * (V[0] * W[:, 0])).sum(axis=1)
    np.testing.assert_allclose(layer_derivative(x, theta, r), closed, atol=1e-13)


def test_crossing_count_cases():
    s = np.linspace(0, 1, 11)[:, None]
    x0 = np.array([-1.0, 0.0, 0.5, 2.0])
    assert crossing_count(x0 * (1 - s / 2)) == 0  # contracting, order kept
    assert crossing_count(x0 * (1 - 1.5 * s)) == 3  # reversed at the end: every adjacent pair
    T = np.stack([x0, np.array([-1.0, 0.6, 0.5, 2.0])])  # one swap of the middle pair
    assert crossing_count(T) == 1
    assert crossing_count(T[:, ::-1]) == 1  # inputs need not be sorted
    assert crossing_count(T[:, :, None]) == 1  # (K, B, 1) accepted
    with pytest.raises(ValueError, match="1-D states"):
        crossing_count(np.zeros((3, 4, 2)))


def test_increasing_fit_floor_against_brute_force():
    # decreasing target: the floor is its variance (best nondecreasing fit = the constant mean)
    y = -0.5 * np.linspace(-1, 1, 33)
    assert increasing_fit_floor(y) == pytest.approx(np.var(y), rel=1e-14)
    assert increasing_fit_floor(np.arange(5.0)) == 0.0
    # a mixed case against the explicit solution [1, 2.5, 2.5, 4] of PAVA
    y = np.array([1.0, 3.0, 2.0, 4.0])
    assert increasing_fit_floor(y) == pytest.approx(np.mean((np.array([1, 2.5, 2.5, 4]) - y) ** 2))


def test_refine_slices_keeps_the_ode():
    r = mlp(3)
    theta = init_mlp(r, 5, 1, np.random.default_rng(1))
    V, W, b = r.unpack(theta, 1)
    theta = r.pack(np.random.default_rng(2).standard_normal(V.shape), W, b)
    fine = refine_slices(theta, 3)
    assert fine.shape == (13, theta.shape[1])
    np.testing.assert_allclose(fine[::3], theta, atol=1e-15)
    coarse = interpolating_ode([0.3], theta, r, "weights", samples=1)
    refined = interpolating_ode([0.3], fine, r, "weights", samples=1)
    np.testing.assert_allclose(refined.x[::3], coarse.x, atol=1e-10)


@pytest.mark.parametrize("n, N, d", [(1, 1, 1), (1, 7, 2), (3, 3, 1), (5, 13, 3), (32, 300, 1)])
def test_deepen_mlp_computes_the_same_map(n, N, d):
    """The deepened network agrees with the original on random inputs (a missing N/n on V, a slice
    placed twice or a non-identity filler layer would each move the outputs by O(1))."""
    r = mlp(3)
    V, W, b = r.unpack(init_mlp(r, n, d, np.random.default_rng(0)), d)
    theta = r.pack(np.random.default_rng(1).standard_normal(V.shape), W, b)
    deep = deepen_mlp(theta, N, d, r, np.random.default_rng(2))
    assert deep.shape == (N, theta.shape[1])
    x = np.random.default_rng(3).standard_normal((17, d))
    np.testing.assert_allclose(final_state(x, deep, r), final_state(x, theta, r), rtol=1e-13, atol=1e-13)
    Vd = r.unpack(deep, d)[0]
    kept = np.flatnonzero(np.abs(Vd).reshape(N, -1).max(axis=1) > 0)
    np.testing.assert_array_equal(kept, (np.arange(n) * N) // n)  # n slices kept, in order, the rest V = 0
    np.testing.assert_allclose(Vd[kept], r.unpack(theta, d)[0] * (N / n), rtol=1e-15)


def test_deepen_mlp_validates():
    r = mlp(2)
    theta = init_mlp(r, 3, 1, 0)
    with pytest.raises(ValueError, match="`depth` of theory.resnet.training.deepen_mlp must be .*>= 3"):
        deepen_mlp(theta, 2, 1, r, 0)
    with pytest.raises(ValueError, match="`theta` of .*deepen_mlp must have shape \\(n, 10\\)"):
        deepen_mlp(theta, 4, 2, r, 0)
    with pytest.raises(ValueError, match="`residual` of .*perceptron family"):
        deepen_mlp(theta, 4, 1, "tanh", 0)


def test_contracting_network_is_increasing_p10():
    """If every layer has Lip(f_n) < N the 1-D ResNet is increasing, so no crossing."""
    r = mlp(4)
    rng = np.random.default_rng(7)
    N = 6
    for _ in range(20):
        theta = r.pack(rng.standard_normal((N, 1, 4)), rng.standard_normal((N, 4, 1)), rng.standard_normal((N, 4)))
        V, W, _ = r.unpack(theta, 1)
        lip = np.abs(V[:, 0, :] * W[:, :, 0]).sum(axis=1).max()  # sum_j |V_j W_j| >= sup |f'|
        if lip >= N:
            continue
        T = forward(np.linspace(-2, 2, 50)[:, None], theta, r)
        assert crossing_count(T) == 0
