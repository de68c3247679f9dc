"""Tests of :mod:`theory.resnet` (paper key ``resnet-node``) against independent references.

What is checked:

1. A plain-NumPy reference written from the formulas (loops over layers, one state at a time, dense
   Jacobians) for forward/reverse Euler and Heun, every residual family, single input and batch. Its
   gradients are computed in *forward mode* (sensitivity matrices dx_n/dtheta pushed through the
   layers), a different route from the kernels' reverse-mode sweep; the adjoint gradient is the same
   forward-mode chain rule linearised along the *reconstructed* trajectory.
2. method="backprop" against central finite differences of 1/2 ||final_state - y||^2; batch = sum.
3. Closed forms of the scalar linear network with tied weights (Euler, Heun, reverse of forward).
4. Adjoint properties: exact for the x-independent families, error decreasing in N.
5. The interpolating neural ODE (Definition 1) against SciPy and against closed forms.
6. The contract: one table of bad inputs, accepted input kinds, no mutation, overflow as an error, and a
   Hypothesis test throwing arbitrary shapes and dtypes at the public functions.
7. Documented choices equal the accepted ones.

The tests at the end pin defects that were found and fixed (regression tests).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import theory.resnet as resnet
from _inputs import array_like, assert_outputs_equal
from theory._validation import NonFiniteError
from theory.resnet import (
    RESIDUALS,
    SCHEMES,
    final_state,
    forward,
    gradient,
    interpolating_ode,
    mlp,
    reverse,
)

EPS = np.finfo(np.float64).eps

# Families as the tests name them; "mlp2" is the perceptron family of hidden width 2.
FAMILIES = ["linear", "tanh", "tanh_out", "bias", "bias_sq", "mlp2"]
MLP_WIDTH = 2


def api_residual(family):
    return mlp(MLP_WIDTH) if family == "mlp2" else family


def extra_slices(scheme):
    # Written from the brief, not read from SCHEMES: Euler uses theta_0..theta_{N-1}, Heun theta_0..theta_N.
    return {"euler": 0, "heun": 1}[scheme]


# ---------------------------------------------------------------------------------------------------
# Independent plain-NumPy reference
# ---------------------------------------------------------------------------------------------------


def ref_residual(family, x, th):
    """f(x, th), df/dx of shape (d, d) and df/dth of shape (d, P) for one state x (d,).

    ``th`` is one layer's parameters in its natural shape: (d, d) for linear/tanh/tanh_out, (d,) for
    bias/bias_sq, the flat (V.ravel(), W.ravel(), b) of length 2dm + m for mlp. Columns of df/dth
    follow the row-major flattening of ``th``.
    """
    d = x.size
    eye = np.eye(d)
    if family == "linear":  # f = theta x; df_i/dtheta_kl = delta_ik x_l
        return th @ x, th.copy(), np.kron(eye, x[None, :])
    if family == "tanh":  # f = tanh(theta x)
        t = np.tanh(th @ x)
        D = np.diag(1.0 - t * t)
        return t, D @ th, D @ np.kron(eye, x[None, :])
    if family == "tanh_out":  # f = theta tanh(x)
        t = np.tanh(x)
        return th @ t, th @ np.diag(1.0 - t * t), np.kron(eye, t[None, :])
    if family == "bias":  # f = theta
        return th.copy(), np.zeros((d, d)), eye
    if family == "bias_sq":  # f = theta * theta
        return th * th, np.zeros((d, d)), np.diag(2.0 * th)
    assert family == "mlp2"
    m = MLP_WIDTH
    V = th[: d * m].reshape(d, m)
    W = th[d * m : 2 * d * m].reshape(m, d)
    b = th[2 * d * m :]
    a = np.tanh(W @ x + b)
    VD = V @ np.diag(1.0 - a * a)
    jac_theta = np.hstack([np.kron(eye, a[None, :]), VD @ np.kron(np.eye(m), x[None, :]), VD])
    return V @ a, VD @ W, jac_theta


def ref_f(family, x, th):
    return ref_residual(family, x, th)[0]


def ref_forward_one(family, scheme, x0, theta):
    """x_0..x_N for one input x0 (d,), written from Eq. (1) / Eq. (8)."""
    N = theta.shape[0] - extra_slices(scheme)
    xs = [np.array(x0, dtype=float)]
    x = xs[0]
    for n in range(N):
        f_n = ref_f(family, x, theta[n])
        if scheme == "euler":
            x = x + f_n / N
        else:
            y = x + f_n / N
            x = x + (f_n + ref_f(family, y, theta[n + 1])) / (2 * N)
        xs.append(x)
    return np.array(xs)


def ref_reverse_one(family, scheme, xN, theta):
    """The reverse-time reconstruction x~_0..x~_N for one xN (d,), from Eq. (6) / Eq. (9)."""
    N = theta.shape[0] - extra_slices(scheme)
    xs = [None] * (N + 1)
    x = xs[N] = np.array(xN, dtype=float)
    for n in range(N - 1, -1, -1):
        if scheme == "euler":
            x = x - ref_f(family, x, theta[n]) / N
        else:
            f_next = ref_f(family, x, theta[n + 1])
            y = x - f_next / N
            x = x - (f_next + ref_f(family, y, theta[n])) / (2 * N)
        xs[n] = x
    return np.array(xs)


def ref_gradient_one(family, scheme, theta, points, xN, y):
    """Forward-mode chain rule of 1/2 ||x_N - y||^2 with each layer linearised at points[n].

    points[n] = x_n gives exact backpropagation; points[n] = x~_n (the reverse-time reconstruction)
    gives the memory-free adjoint of Eqs. (6)-(7) and its Heun analogue (y_n recomputed from x~_n).
    S = dx_n/dtheta (d, K P) and T = dx_n/dx0 (d, d) are pushed forward layer by layer.
    """
    K = theta.shape[0]
    N = K - extra_slices(scheme)
    d = xN.size
    P = theta[0].size
    eye = np.eye(d)
    S = np.zeros((d, K * P))
    T = eye.copy()
    for n in range(N):
        z = points[n]
        if scheme == "euler":
            _, Jx, Jth = ref_residual(family, z, theta[n])
            A = eye + Jx / N
            S = A @ S
            S[:, n * P : (n + 1) * P] += Jth / N
        else:
            fa, Ja, Jtha = ref_residual(family, z, theta[n])
            _, Jb, Jthb = ref_residual(family, z + fa / N, theta[n + 1])
            A = eye + (Ja + Jb @ (eye + Ja / N)) / (2 * N)
            S = A @ S
            S[:, n * P : (n + 1) * P] += (Jtha + Jb @ Jtha / N) / (2 * N)
            S[:, (n + 1) * P : (n + 2) * P] += Jthb / (2 * N)
        T = A @ T
    g = xN - y
    return (S.T @ g).reshape(theta.shape), T.T @ g


def _rows(x):
    x = np.asarray(x, dtype=float)
    return x.reshape(1, -1) if x.ndim == 1 else x


def _unrows(rows, like):
    return rows[0] if np.ndim(like) == 1 else rows


def ref_forward(family, scheme, x0, theta):
    trajs = [ref_forward_one(family, scheme, r, theta) for r in _rows(x0)]
    return trajs[0] if np.ndim(x0) == 1 else np.stack(trajs, axis=1)


def ref_reverse(family, scheme, xN, theta):
    trajs = [ref_reverse_one(family, scheme, r, theta) for r in _rows(xN)]
    return trajs[0] if np.ndim(xN) == 1 else np.stack(trajs, axis=1)


def ref_gradient(family, scheme, x0, theta, y, method):
    gtheta = np.zeros(theta.shape)
    gx0 = []
    for x0_b, y_b in zip(_rows(x0), _rows(y)):
        traj = ref_forward_one(family, scheme, x0_b, theta)
        xN = traj[-1]
        points = traj if method == "backprop" else ref_reverse_one(family, scheme, xN, theta)
        gt, gx = ref_gradient_one(family, scheme, theta, points, xN, y_b)
        gtheta += gt
        gx0.append(gx)
    return gtheta, _unrows(np.array(gx0), x0)


def draw_problem(family, scheme, d, N, B, seed, scale=0.8):
    """theta (N + extra, *P), x0 and y ((d,) or (B, d)) from a seeded generator.

    scale 0.8 keeps every layer map well inside its tanh regime and the trajectories O(1).
    """
    rng = np.random.default_rng(seed)
    K = N + extra_slices(scheme)
    if family in ("linear", "tanh", "tanh_out"):
        theta = scale * rng.standard_normal((K, d, d)) / np.sqrt(d)
    elif family in ("bias", "bias_sq"):
        theta = scale * rng.standard_normal((K, d))
    else:
        res = mlp(MLP_WIDTH)
        m = MLP_WIDTH
        theta = res.pack(scale * rng.standard_normal((K, d, m)), scale * rng.standard_normal((K, m, d)),
                         scale * rng.standard_normal((K, m)))
    shape = (d,) if B is None else (B, d)
    return theta, rng.standard_normal(shape), rng.standard_normal(shape)


def _seed(*parts):
    # A stable seed from the test parameters (Python's hash() of str is salted per process).
    return [FAMILIES.index(parts[0]), ["euler", "heun"].index(parts[1]), *[0 if p is None else p for p in parts[2:]]]


def assert_rel(actual, expected, rtol, what=""):
    """max |actual - expected| <= rtol * max |expected| (a norm-wise relative error)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    err = float(np.max(np.abs(actual - expected))) if actual.size else 0.0
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    assert err <= rtol * max(scale, np.finfo(float).tiny), f"{what}: error {err:.3e}, scale {scale:.3e}, rtol {rtol}"


# ---------------------------------------------------------------------------------------------------
# 1. Kernels against the reference
# ---------------------------------------------------------------------------------------------------

# The kernels and the reference do the same float64 operations in different orders (dense matmuls vs
# loops, 1/N as a multiplier vs a divisor; forward- vs reverse-mode chain rule), so they agree to a
# few ulps times the depth: the worst case over PROBLEMS measured 1.3e-15 (grad_x0); 1e-13 is the
# brief's tolerance and leaves a factor ~80.
REF_RTOL = 1e-13

PROBLEMS = [
    pytest.param(fam, sch, d, N, B, id=f"{fam}-{sch}-d{d}-N{N}-{'single' if B is None else f'B{B}'}")
    for fam in FAMILIES
    for sch in ("euler", "heun")
    for d in (1, 3)
    for N in (1, 4, 9)
    for B in (None, 5)
]


@pytest.mark.parametrize("family, scheme, d, N, B", PROBLEMS)
def test_forward_reverse_final_state_match_reference(family, scheme, d, N, B):
    theta, x0, _ = draw_problem(family, scheme, d, N, B, _seed(family, scheme, d, N, B))
    res = api_residual(family)
    traj = forward(x0, theta, res, scheme)
    assert traj.dtype == np.float64
    assert traj.shape == (N + 1,) + x0.shape
    assert_rel(traj, ref_forward(family, scheme, x0, theta), REF_RTOL, "forward")
    # final_state is forward's last row computed in place: the same operations, bit for bit.
    np.testing.assert_array_equal(final_state(x0, theta, res, scheme), traj[-1])
    rev = reverse(traj[-1], theta, res, scheme)
    assert rev.shape == traj.shape
    assert_rel(rev, ref_reverse(family, scheme, traj[-1], theta), REF_RTOL, "reverse")
    np.testing.assert_array_equal(rev[-1], traj[-1])  # x~_N = x_N by definition


@pytest.mark.parametrize("family, scheme, d, N, B", PROBLEMS)
@pytest.mark.parametrize("method", ["backprop", "adjoint"])
def test_gradient_matches_forward_mode_reference(family, scheme, d, N, B, method):
    theta, x0, y = draw_problem(family, scheme, d, N, B, _seed(family, scheme, d, N, B))
    g_theta, g_x0 = gradient(x0, theta, y, api_residual(family), scheme, method)
    r_theta, r_x0 = ref_gradient(family, scheme, x0, theta, y, method)
    assert g_theta.dtype == g_x0.dtype == np.float64
    assert_rel(g_theta, r_theta, REF_RTOL, f"{method} grad_theta")
    assert_rel(g_x0, r_x0, REF_RTOL, f"{method} grad_x0")


@pytest.mark.parametrize("d, B, N", [(16, 64, 50), (1, 5, 3), (4, 300, 7)])
def test_checkpointed_backprop_of_a_small_d_batch(d, B, N):
    # A batch of the tanh family at small d is backpropagated from checkpoints every seg layers,
    # each segment recomputed: several segments and a partial last one (16, 64, 50: seg = 24), one
    # segment, and the input left untouched (the kernel overwrites a copy of x0^T with x_N^T).
    from theory.resnet._kernels import checkpoint_segment

    assert checkpoint_segment(64, 16) == 24
    theta, x0, y = draw_problem("tanh", "euler", d, N, B, [d, B, N])
    x_before = x0.copy()
    g_theta, g_x0 = gradient(x0, theta, y, "tanh")
    np.testing.assert_array_equal(x0, x_before)
    r_theta, r_x0 = ref_gradient("tanh", "euler", x0, theta, y, "backprop")
    assert_rel(g_theta, r_theta, REF_RTOL, "grad_theta")
    assert_rel(g_x0, r_x0, REF_RTOL, "grad_x0")
    assert g_x0.flags.c_contiguous and g_theta.flags.c_contiguous


@pytest.mark.parametrize("residual", ["tanh", "linear"])
def test_small_d_batch_trajectory_is_a_transposed_view(residual):
    # the layout forward and reverse document for a small-d batch: the transposed view of an
    # (N + 1, d, B) C-contiguous array, each slice equal to the state the final-state pass computes
    theta, x0, _ = draw_problem(residual, "euler", 8, 6, 40, [8, 6, 40])
    traj = forward(x0, theta, residual)
    assert traj.shape == (7, 40, 8) and not traj.flags.c_contiguous
    assert traj.base is not None and traj.base.shape == (7, 8, 40) and traj.base.flags.c_contiguous
    np.testing.assert_array_equal(traj[0], x0)
    assert_rel(traj, ref_forward(residual, "euler", x0, theta), REF_RTOL, "forward")
    rev = reverse(traj[-1], theta, residual)
    assert rev.base is not None and rev.base.shape == (7, 8, 40)
    np.testing.assert_array_equal(rev[-1], traj[-1])


def test_hand_worked_example():
    # Euler, f = theta x with theta = 1/2, N = 4, x0 = 1: x_n = (9/8)^n, all exact in binary.
    traj = forward([1.0], np.full((4, 1, 1), 0.5), "linear")
    np.testing.assert_array_equal(traj[:, 0], [1.0, 1.125, 1.265625, 1.423828125, 1.601806640625])
    # dL/dx0 = x_N dx_N/dx0 = (9/8)^4 (9/8)^4 for y = 0; dL/dtheta_n = x_N (9/8)^{N-1-n} x_n / N
    # = (9/8)^4 (9/8)^3 / 4 for every n (by hand from Eq. (3)).
    g_theta, g_x0 = gradient([1.0], np.full((4, 1, 1), 0.5), [0.0], "linear")
    assert g_x0[0] == 1.125**8
    np.testing.assert_allclose(g_theta[:, 0, 0], np.full(4, 1.125**7 / 4), rtol=4 * EPS)


# ---------------------------------------------------------------------------------------------------
# 2. Backprop against finite differences
# ---------------------------------------------------------------------------------------------------

FD_STEP = 1e-5  # central differences: truncation ~h^2 |L'''| / 6 ~ 1e-11, round-off ~eps |L| / h ~ 1e-11
FD_RTOL = 1e-7  # the brief's tolerance; the worst case over the cases below measured 2.7e-10


def _loss(x0, theta, y, res, scheme):
    r = final_state(x0, theta, res, scheme) - y
    return 0.5 * float(np.sum(r * r))


def _central_difference(fun, z):
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        zp, zm = z.copy(), z.copy()
        zp[i] += FD_STEP
        zm[i] -= FD_STEP
        g[i] = (fun(zp) - fun(zm)) / (2 * FD_STEP)
    return g


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("d", [1, 3])
def test_backprop_matches_finite_differences(family, scheme, d):
    N = 3
    theta, x0, y = draw_problem(family, scheme, d, N, None, _seed(family, scheme, d, N, 7))
    res = api_residual(family)
    g_theta, g_x0 = gradient(x0, theta, y, res, scheme, "backprop")
    fd_theta = _central_difference(lambda t: _loss(x0, t, y, res, scheme), theta)
    fd_x0 = _central_difference(lambda z: _loss(z, theta, y, res, scheme), x0)
    assert_rel(g_theta, fd_theta, FD_RTOL, "grad_theta vs FD")
    if family in ("bias", "bias_sq"):
        # f does not depend on x, so x_N = x0 + const and dL/dx0 = x_N - y exactly.
        np.testing.assert_array_equal(g_x0, final_state(x0, theta, res, scheme) - y)
    else:
        assert_rel(g_x0, fd_x0, FD_RTOL, "grad_x0 vs FD")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("method", ["backprop", "adjoint"])
def test_batch_gradient_is_sum_of_single_gradients(family, scheme, method):
    d, N, B = 3, 5, 5
    theta, x0, y = draw_problem(family, scheme, d, N, B, _seed(family, scheme, d, N, B))
    res = api_residual(family)
    g_theta, g_x0 = gradient(x0, theta, y, res, scheme, method)
    singles = [gradient(x0[b], theta, y[b], res, scheme, method) for b in range(B)]
    # The batch kernel accumulates grad_theta over b inside each layer, the sum below after all
    # layers: the same terms in another order, so equal to a few ulps.
    assert_rel(g_theta, sum(s[0] for s in singles), 1e-14, "grad_theta")
    # A batch of the matrix families is one BLAS product per layer (a single input: row dot
    # products), so rows agree with single calls to a few ulps; the other families bit for bit.
    exact = family in ("bias", "bias_sq") or family.startswith("mlp")
    singles_x0 = np.array([s[1] for s in singles])
    traj = forward(x0, theta, res, scheme)
    single_traj = np.stack([forward(x0[b], theta, res, scheme) for b in range(B)], axis=1)
    if exact:
        np.testing.assert_array_equal(g_x0, singles_x0)
        np.testing.assert_array_equal(traj, single_traj)
    else:
        assert_rel(g_x0, singles_x0, 1e-13, "grad_x0")
        assert_rel(traj, single_traj, 1e-13, "trajectory")


# ---------------------------------------------------------------------------------------------------
# 3. Closed forms: scalar linear network with tied weights theta_n = a
# ---------------------------------------------------------------------------------------------------

# Each step rounds a couple of times and the closed form's power rounds 1 + a/N once and amplifies it
# N times, so both sides carry ~2N ulps: 4 N eps is a bound (1e-14 for N = 10, 6e-14 for N = 64).
def _closed_form_rtol(N):
    return 4 * N * EPS


@pytest.mark.parametrize("a", [0.5, -1.3, 2.7])
@pytest.mark.parametrize("N", [1, 2, 5, 10, 64])
def test_linear_tied_weights_closed_forms(a, N):
    x0 = np.array([[1.0], [-0.37], [2.5]])  # a batch of scalar inputs
    u = a / N
    rtol = _closed_form_rtol(N)
    # Euler: x_{n+1} = (1 + a/N) x_n; reverse: x~_n = (1 - a/N) x~_{n+1}.
    theta_e = np.full((N, 1, 1), a)
    xN = forward(x0, theta_e, "linear")[-1]
    np.testing.assert_allclose(xN, (1 + u) ** N * x0, rtol=rtol, atol=0)
    np.testing.assert_allclose(reverse(xN, theta_e, "linear")[0], (1 - u * u) ** N * x0, rtol=rtol, atol=0)
    # Heun: y = (1 + u) x, x' = x + (u x + u (1 + u) x) / 2 = (1 + u + u^2/2) x; reverse step
    # (1 - u + u^2/2), and (1 - u + u^2/2)(1 + u + u^2/2) = (1 + u^2/2)^2 - u^2 = 1 + u^4/4.
    theta_h = np.full((N + 1, 1, 1), a)
    xN = forward(x0, theta_h, "linear", "heun")[-1]
    np.testing.assert_allclose(xN, (1 + u + u * u / 2) ** N * x0, rtol=rtol, atol=0)
    np.testing.assert_allclose(reverse(xN, theta_h, "linear", "heun")[0], (1 + u**4 / 4) ** N * x0,
                               rtol=rtol, atol=0)


def test_linear_tied_weights_dyadic_cases_are_exact():
    # a = 1/2, N = 4, x0 = 1: every intermediate is a short dyadic rational, so no rounding at all.
    theta = np.full((4, 1, 1), 0.5)
    assert forward([1.0], theta, "linear")[-1, 0] == 1.125**4  # (1 + 1/8)^4 = 6561/4096
    assert reverse([1.125**4], theta, "linear")[0, 0] == (63 / 64) ** 4  # ((7/8)(9/8))^4, exact
    theta = np.full((5, 1, 1), 0.5)
    # Heun factor 1 + 1/8 + 1/128 = 145/128; 145^4 < 2^29, exact.
    assert forward([1.0], theta, "linear", "heun")[-1, 0] == (145 / 128) ** 4


# ---------------------------------------------------------------------------------------------------
# 4. Adjoint properties
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["bias", "bias_sq"])
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("B", [None, 5])
def test_adjoint_equals_backprop_for_x_independent_families(family, scheme, B):
    # f does not depend on x: the gradient does not depend on the trajectory, so reconstructing it
    # (even with round-off) changes nothing and the adjoint must equal backprop bit for bit.
    theta, x0, y = draw_problem(family, scheme, 3, 16, B, _seed(family, scheme, 3, 16, B))
    bp = gradient(x0, theta, y, family, scheme, "backprop")
    adj = gradient(x0, theta, y, family, scheme, "adjoint")
    np.testing.assert_array_equal(adj[0], bp[0])
    np.testing.assert_array_equal(adj[1], bp[1])
    # The reconstruction itself is exact up to round-off: x~_0 = x0 - sum theta_n / N (or its square).
    traj = forward(x0, theta, family, scheme)
    np.testing.assert_allclose(reverse(traj[-1], theta, family, scheme), traj, rtol=0, atol=64 * EPS)


@pytest.mark.parametrize("scheme", ["euler", "heun"])
def test_adjoint_error_decreases_with_depth(scheme):
    # theta_n = A + C sin(2 pi n / N): weights sampled from a smooth function of s = n/N.
    rng = np.random.default_rng(20240611)
    d = 3
    A, C = rng.standard_normal((2, d, d))
    x0, y = rng.standard_normal((2, 4, d))
    errors = []
    for N in (8, 16, 32, 64):
        s = np.arange(N + extra_slices(scheme)) / N
        theta = A + C * np.sin(2 * np.pi * s)[:, None, None]
        bp = gradient(x0, theta, y, "tanh_out", scheme, "backprop")
        adj = gradient(x0, theta, y, "tanh_out", scheme, "adjoint")
        # Per-slice error (Props. 4 and 6 bound each slice's gradient error; slices scale like 1/N).
        errors.append(N * float(np.max(np.abs(adj[0] - bp[0]))))
    assert errors[0] > 0.0  # not trivially exact
    assert all(e1 < e0 for e0, e1 in zip(errors, errors[1:])), errors


def test_reconstruction_error_is_nonzero_for_linear():
    # Negative control for the exactness test above: with f depending on x the reconstruction is
    # not exact. Linear, theta_n = 1/2, N = 4, x0 = 1, y = 0, u = 1/8 (by hand from Eqs. (3), (6), (7)):
    # backprop dL/dtheta_n = x_N (1 + u)^{N-1-n} x_n / N with x_n = (1 + u)^n;
    # adjoint uses x~_n = (1 - u)^{N-n} x_N instead of x_n. dL/dx0 = x_N (1 + u)^N in both, since
    # df/dx = theta does not depend on x.
    N, u = 4, 0.125
    theta = np.full((N, 1, 1), 0.5)
    n = np.arange(N)
    xN = (1 + u) ** N
    bp = gradient([1.0], theta, [0.0], "linear", method="backprop")
    adj = gradient([1.0], theta, [0.0], "linear", method="adjoint")
    np.testing.assert_allclose(bp[0][:, 0, 0], xN * (1 + u) ** (N - 1 - n) * (1 + u) ** n / N, rtol=8 * EPS)
    np.testing.assert_allclose(adj[0][:, 0, 0], xN * (1 + u) ** (N - 1 - n) * (1 - u) ** (N - n) * xN / N,
                               rtol=8 * EPS)
    assert not np.allclose(adj[0], bp[0], rtol=1e-3)
    assert adj[1][0] == bp[1][0] == xN * xN


# ---------------------------------------------------------------------------------------------------
# 5. The interpolating neural ODE (Definition 1)
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["tanh", "tanh_out", "mlp2"])
@pytest.mark.parametrize("interpolation", ["weights", "residuals"])
def test_interpolating_ode_tied_weights_is_autonomous(family, interpolation):
    N, d = 5, 3
    theta1, x0, _ = draw_problem(family, "euler", d, 1, None, _seed(family, "euler", d, 1, 11), scale=1.2)
    theta = np.repeat(theta1, N + 1, axis=0)  # theta_n all equal: phi(x, s) = f(x, theta) for all s
    sol = interpolating_ode(x0, theta, api_residual(family), interpolation)
    ref = solve_ivp(lambda s, x: ref_f(family, x, theta1[0]), (0.0, 1.0), x0, method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=np.arange(N + 1) / N)
    assert ref.success
    np.testing.assert_array_equal(sol.s, np.arange(N + 1) / N)
    # Two DOP853 solves at rtol = atol = 1e-12 (one per cell vs one over [0, 1]): 1e-10 leaves room
    # for the accumulated tolerance over N cells.
    np.testing.assert_allclose(sol.x, ref.y.T, rtol=0, atol=1e-10)
    assert sol.nfev > 0


@pytest.mark.parametrize("interpolation", ["weights", "residuals"])
def test_interpolating_ode_bias_linear_in_s(interpolation):
    # theta_n = a n/N + b: both interpolations give phi(x, s) = a s + b, so x(s) = x0 + a s^2/2 + b s
    # and d^2x/ds^2 = a (by hand).
    N = 6
    a = np.array([0.7, -1.9])
    b = np.array([0.3, 0.5])
    x0 = np.array([1.0, -2.0])
    s = np.arange(N + 1) / N
    theta = a * s[:, None] + b
    sol = interpolating_ode(x0, theta, "bias", interpolation)
    exact = x0 + a * s[:, None] ** 2 / 2 + b * s[:, None]
    # DOP853 (order 8) integrates a polynomial field of degree 1 exactly: only round-off remains.
    np.testing.assert_allclose(sol.x, exact, rtol=0, atol=1e-13)
    # The curvature is a central difference with step h = 1e-5/N of a field of size ~1: round-off
    # ~eps |phi| / h ~ 1e-11 N.
    np.testing.assert_allclose(sol.curvature, np.linalg.norm(a), rtol=1e-8)
    assert sol.lipschitz == 0.0
    # L = 0 branch of Prop. 1: C_N / (2N). Euler on this field is off by exactly a/(2N) at s = 1
    # (x_N = x0 + a (N - 1)/(2N) + b), so the bound is attained there.
    assert sol.prop1_bound() == sol.curvature / (2 * N)
    euler_err = np.linalg.norm(forward(x0, theta[:N], "bias")[-1] - sol.x[-1])
    np.testing.assert_allclose(euler_err, sol.prop1_bound(), rtol=1e-8)


def test_interpolating_ode_bias_sq_alternating_weights():
    # theta_n = (-1)^n: weight interpolation gives theta(s) = (-1)^n (1 - 2w) on cell n, w = Ns - n,
    # so phi = (1 - 2w)^2, whose integral over each cell is 1/(3N) (by hand): x(1) = x0 + 1/3;
    # d phi/ds = -4N (1 - 2w), largest at the cell ends: curvature 4N.
    N = 7
    x0 = np.array([0.25])
    theta = ((-1.0) ** np.arange(N + 1))[:, None]
    sol = interpolating_ode(x0, theta, "bias_sq", "weights")
    np.testing.assert_allclose(sol.x[-1], x0 + 1 / 3, rtol=0, atol=1e-13)
    np.testing.assert_allclose(sol.x[1:] - sol.x[:-1], np.full((N, 1), 1 / (3 * N)), rtol=0, atol=1e-13)
    # The field is quadratic in s, so the central difference is exact up to round-off (~eps N / h).
    np.testing.assert_allclose(sol.curvature, 4 * N, rtol=1e-8)
    # Residual interpolation of theta_n^2 = 1 is the constant field 1: x(1) = x0 + 1, curvature ~0.
    sol_r = interpolating_ode(x0, theta, "bias_sq", "residuals")
    np.testing.assert_allclose(sol_r.x[-1], x0 + 1.0, rtol=0, atol=1e-13)
    assert sol_r.curvature < 1e-8


def test_prop1_bound_formula_lipschitz_branch():
    N = 4
    rng = np.random.default_rng(7)
    theta = 0.5 * rng.standard_normal((N + 1, 2, 2))
    sol = interpolating_ode([1.0, -0.5], theta, "linear")
    # L = max_n ||theta_n||_2 for the linear family (weights enter linearly: convex combinations
    # cannot exceed the largest slice).
    L = max(np.linalg.norm(t, 2) for t in theta)
    np.testing.assert_allclose(sol.lipschitz, L, rtol=1e-14)
    assert sol.prop1_bound() == pytest.approx(np.expm1(L) * sol.curvature / (2 * N * L), rel=1e-15)
    # The bound holds for the Euler network built from the first N slices (Prop. 1).
    err = np.max(np.linalg.norm(forward([1.0, -0.5], theta[:N], "linear") - sol.x, axis=1))
    assert err <= sol.prop1_bound()


# ---------------------------------------------------------------------------------------------------
# 6. The contract
# ---------------------------------------------------------------------------------------------------

X3 = np.array([0.1, -0.2, 0.3])
TH3 = np.full((4, 3, 3), 0.1)  # Euler depth 4 on d = 3
TH3H = np.full((5, 3, 3), 0.1)  # Heun depth 4 on d = 3
FWD = "theory\\.resnet\\.forward"
GRAD = "theory\\.resnet\\.gradient"
ODE = "theory\\.resnet\\.interpolating_ode"


def _with(arr, index, value):
    out = np.array(arr, dtype=float)
    out[index] = value
    return out


BAD_CALLS = [
    ("theta-mismatched-d", lambda: forward(X3, np.zeros((4, 2, 2)), "linear"), ValueError,
     rf"`theta` of {FWD} must have shape \(K, 3, 3\) for the 'linear' residual with d = 3 from `x0`; got \(4, 2, 2\)"),
    ("theta-wrong-ndim", lambda: forward(X3, np.zeros((4, 9)), "linear"), ValueError,
     r"`theta` of .* must have shape \(K, 3, 3\) .*got \(4, 9\)"),
    ("theta-wrong-ndim-bias", lambda: forward(X3, np.zeros((4, 3, 1)), "bias"), ValueError,
     r"`theta` of .* must have shape \(K, 3\) for the 'bias' residual.*got \(4, 3, 1\)"),
    ("theta-scalar", lambda: forward(X3, 0.5, "linear"), ValueError, r"`theta` of .* must have shape \(K, 3, 3\)"),
    ("theta-mlp-wrong-P", lambda: forward(X3, np.zeros((4, 10)), mlp(2)), ValueError,
     r"`theta` of .* must have shape \(K, 14\) for the 'mlp' residual"),  # P = 2 d m + m = 14
    ("x0-nan", lambda: forward(_with(X3, 1, np.nan), TH3, "linear"), ValueError,
     rf"`x0` of {FWD} must be finite; got NaN or inf\."),
    ("theta-inf", lambda: forward(X3, _with(TH3, (2, 0, 1), np.inf), "linear"), ValueError,
     rf"`theta` of {FWD} must be finite"),
    ("xN-nan", lambda: reverse(_with(X3, 0, np.nan), TH3, "linear"), ValueError,
     r"`xN` of theory\.resnet\.reverse must be finite"),
    ("y-nan", lambda: gradient(X3, TH3, _with(X3, 0, np.nan), "linear"), ValueError, rf"`y` of {GRAD} must be finite"),
    ("unknown-scheme", lambda: forward(X3, TH3, "linear", "rk4"), ValueError,
     rf"`scheme` of {FWD} must be one of \['euler', 'heun'\]; got 'rk4'"),
    ("scheme-not-str", lambda: forward(X3, TH3, "linear", 2), TypeError, r"`scheme` of .* must be a string"),
    ("unknown-residual", lambda: forward(X3, TH3, "relu"), ValueError,
     rf"`residual` of {FWD} must be one of \['bias', 'bias_sq', 'linear', 'tanh', 'tanh_out'\] or a Residual; "
     r"got 'relu'"),
    ("residual-not-str", lambda: forward(X3, TH3, 3), TypeError, r"`residual` of .* must be a family name or a Residual"),
    ("mlp-as-string", lambda: forward(X3, TH3, "mlp"), ValueError, r"the 'mlp' family needs a width; pass theory\.resnet\.mlp\(width\)"),
    ("mlp-width-0", lambda: mlp(0), ValueError, r"`width` of theory\.resnet\.mlp must be >= 1; got 0"),
    ("mlp-width-float", lambda: mlp(2.0), TypeError, r"`width` of theory\.resnet\.mlp must be an integer; got 2\.0"),
    ("euler-N0", lambda: forward(X3, np.zeros((0, 3, 3)), "linear"), ValueError,
     rf"`theta` of {FWD} must hold N >= 1 parameter slices for the 'euler' scheme \(depth N >= 1\); got 0"),
    ("heun-N0", lambda: forward(X3, np.zeros((0, 3, 3)), "linear", "heun"), ValueError,
     r"must hold N \+ 1 >= 2 parameter slices for the 'heun' scheme \(depth N >= 1\); got 0"),
    ("heun-single-slice", lambda: forward(X3, np.zeros((1, 3, 3)), "linear", "heun"), ValueError,
     r"must hold N \+ 1 >= 2 parameter slices for the 'heun' scheme \(depth N >= 1\); got 1"),
    ("heun-N-slices-with-depth", lambda: forward(X3, TH3, "linear", "heun", depth=4), ValueError,
     rf"`theta` of {FWD} must hold N \+ 1 = 5 slices for depth N = 4 with the 'heun' scheme; got 4"),
    ("euler-depth-mismatch", lambda: gradient(X3, TH3, X3, "linear", depth=5), ValueError,
     r"must hold N = 5 slices for depth N = 5 with the 'euler' scheme; got 4"),
    ("depth-zero", lambda: forward(X3, TH3, "linear", depth=0), ValueError, r"`depth` of .* must be >= 1; got 0"),
    ("depth-float", lambda: forward(X3, TH3, "linear", depth=4.0), TypeError, rf"`depth` of {FWD} must be an integer; got 4\.0"),
    ("depth-str", lambda: reverse(X3, TH3, "linear", depth="4"), TypeError, r"`depth` of .* must be an integer"),
    ("y-wrong-shape", lambda: gradient(X3, TH3, X3[:2], "linear"), ValueError,
     rf"`y` of {GRAD} must have the shape of `x0`, \(3,\); got \(2,\)"),
    ("y-batch-vs-single", lambda: gradient(np.ones((2, 3)), TH3, X3, "linear"), ValueError,
     r"`y` of .* must have the shape of `x0`, \(2, 3\); got \(3,\)"),
    ("unknown-method", lambda: gradient(X3, TH3, X3, "linear", method="autodiff"), ValueError,
     rf"`method` of {GRAD} must be one of \['adjoint', 'backprop'\]; got 'autodiff'"),
    ("method-not-str", lambda: gradient(X3, TH3, X3, "linear", method=None), TypeError, r"`method` of .* must be a string"),
    ("x0-complex", lambda: forward(X3 + 0j, TH3, "linear"), TypeError,
     rf"`x0` of {FWD} must be a real numeric array; got dtype complex128"),
    ("theta-complex", lambda: final_state(X3, TH3 * 1j, "linear"), TypeError, r"`theta` of .* must be a real numeric array"),
    ("y-complex", lambda: gradient(X3, TH3, X3 * 1j, "linear"), TypeError, r"`y` of .* must be a real numeric array"),
    ("x0-string", lambda: forward("abc", TH3, "linear"), TypeError, r"`x0` of .* must be a real numeric array; got dtype <U3"),
    ("x0-list-of-strings", lambda: forward(["1", "2", "3"], TH3, "linear"), TypeError, r"`x0` of .* must be a real numeric array"),
    ("x0-object", lambda: forward(np.array([1.0, None, 2.0], dtype=object), TH3, "linear"), TypeError,
     r"`x0` of .* must be a real numeric array; got dtype object"),
    ("x0-ragged", lambda: forward([[1.0, 2.0], [3.0]], TH3, "linear"), TypeError, r"`x0` of .* must be a real array"),
    ("x0-scalar", lambda: forward(1.0, TH3, "linear"), ValueError, r"`x0` of .* must have 1 or 2 dimension\(s\); got shape \(\)"),
    ("x0-3d", lambda: forward(np.ones((1, 1, 3)), TH3, "linear"), ValueError, r"`x0` of .* must have 1 or 2 dimension\(s\)"),
    ("x0-empty", lambda: forward(np.ones(0), np.ones((4, 0, 0)), "linear"), ValueError, r"`x0` of .* must have d >= 1"),
    ("x0-empty-batch", lambda: forward(np.ones((0, 3)), TH3, "linear"), ValueError, r"`x0` of .* must have d >= 1 and at least one row"),
    ("ode-unknown-interpolation", lambda: interpolating_ode(X3, TH3, "linear", "splines"), ValueError,
     rf"`interpolation` of {ODE} must be one of \['residuals', 'weights'\]; got 'splines'"),
    ("ode-one-slice", lambda: interpolating_ode(X3, TH3[:1], "linear"), ValueError,
     rf"`theta` of {ODE} must have shape \(N \+ 1, 3, 3\) with N >= 1; got \(1, 3, 3\)"),
    ("ode-batch", lambda: interpolating_ode(np.ones((2, 3)), TH3, "linear"), ValueError, r"`x0` of .* must have 1 dimension"),
    ("ode-rtol", lambda: interpolating_ode(X3, TH3, "linear", rtol=0.0), ValueError, r"`rtol` of .* must lie in \[2\.22\d*e-14, 1\.0\)"),
    ("ode-atol-nan", lambda: interpolating_ode(X3, TH3, "linear", atol=np.nan), ValueError, r"`atol` of .* must lie in"),
    ("ode-x0-inf", lambda: interpolating_ode(_with(X3, 0, np.inf), TH3, "linear"), ValueError, r"`x0` of .* must be finite"),
]


@pytest.mark.parametrize("call, exc, pattern", [pytest.param(*row[1:], id=row[0]) for row in BAD_CALLS])
def test_bad_input_raises_named_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert type(info.value) is exc  # not a subclass such as a Numba error deriving from TypeError


def _all_outputs(x0, theta, y, res="tanh_out", scheme="euler"):
    """Every public function of the family on one problem, as a dict of arrays."""
    out = {
        "forward": forward(x0, theta, res, scheme),
        "reverse": reverse(x0, theta, res, scheme),
        "final_state": final_state(x0, theta, res, scheme),
    }
    for method in ("backprop", "adjoint"):
        out[f"grad_theta_{method}"], out[f"grad_x0_{method}"] = gradient(x0, theta, y, res, scheme, method)
    return out


@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize(
    "variant",
    ["list", "python-int", "float32", "int32", "bool", "read-only", "strided", "fortran"],
)
def test_accepted_input_kinds_give_identical_float64_outputs(variant, scheme):
    rng = np.random.default_rng(3)
    N = 4
    theta = rng.standard_normal((N + extra_slices(scheme), 3, 3))
    x0 = rng.standard_normal((2, 3))
    y = rng.standard_normal((2, 3))
    if variant == "list":
        args = (x0.tolist(), theta.tolist(), y.tolist())
    elif variant == "python-int":
        x0, theta, y = np.round(2 * x0), np.round(theta), np.round(y)  # small integers, exact in float64
        args = tuple(a.astype(int).tolist() for a in (x0, theta, y))
    elif variant in ("float32", "int32", "bool"):
        if variant != "float32":
            x0, theta, y = (np.round(a) for a in (x0, theta, y))
        args = tuple(a.astype(variant if variant != "bool" else np.bool_) for a in (x0, theta, y))
        x0, theta, y = (a.astype(np.float64) for a in args)  # the float64 values they stand for
    elif variant == "read-only":
        args = tuple(a.copy() for a in (x0, theta, y))
        for a in args:
            a.setflags(write=False)
    elif variant == "strided":
        big = [np.repeat(a, 2, axis=-1) for a in (x0, theta, y)]
        args = tuple(b[..., ::2] for b in big)
        assert not any(a.flags.c_contiguous for a in args)
    else:
        args = tuple(np.asfortranarray(a) for a in (x0, theta, y))
        assert not args[1].flags.c_contiguous
    expected = _all_outputs(x0, theta, y, scheme=scheme)
    got = _all_outputs(*args, scheme=scheme)
    assert_outputs_equal(got, expected)


def test_user_arrays_are_not_modified_and_not_aliased():
    rng = np.random.default_rng(5)
    theta = rng.standard_normal((5, 3, 3))
    x0 = rng.standard_normal((2, 3))
    y = rng.standard_normal((2, 3))
    saved = [a.copy() for a in (x0, theta, y)]
    for scheme in ("euler", "heun"):
        th = theta if scheme == "heun" else theta[:4]
        outs = _all_outputs(x0, th, y, scheme=scheme)
        for name, value in outs.items():
            for user in (x0, theta, y):
                assert not np.shares_memory(value, user), name
    interpolating_ode(x0[0], theta, "tanh_out")
    for before, after in zip(saved, (x0, theta, y)):
        np.testing.assert_array_equal(after, before)
    # Writing into an output does not write into an input.
    out = final_state(x0, theta[:4], "linear")
    out[...] = 7.0
    np.testing.assert_array_equal(x0, saved[0])


@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize(
    "call",
    [
        lambda x, t, s: forward(x, t, "linear", s),
        lambda x, t, s: reverse(x, t, "linear", s),
        lambda x, t, s: final_state(x, t, "linear", s),
        lambda x, t, s: gradient(x, t, x, "linear", s, "backprop"),
        lambda x, t, s: gradient(x, t, x, "linear", s, "adjoint"),
    ],
    ids=["forward", "reverse", "final_state", "backprop", "adjoint"],
)
def test_overflow_raises_nonfinite_error(call, scheme):
    # theta = 1e200, N = 4: x_1 ~ 2.5e199, x_2 ~ 1e200 x_1 / 4 > 1.8e308 overflows in the kernel.
    theta = np.full((4 + extra_slices(scheme), 1, 1), 1e200)
    with pytest.raises(NonFiniteError, match=r"overflowed to NaN or inf\. Reduce the weights") as info:
        call(np.ones((2, 1)), theta, scheme)
    assert isinstance(info.value, ValueError)


# --- Hypothesis: arbitrary shapes and dtypes reach only TypeError / ValueError ---------------------

_SHAPES = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)  # 0-3 dims, sizes 0-4
_RESIDUALS = st.sampled_from(["linear", "tanh", "tanh_out", "bias", "bias_sq", "mlp", "relu", mlp(1), 3])
_SCHEMES = st.sampled_from(["euler", "heun", "rk4", None])


def _array_like(shape=None, bound=None, numeric=False):
    """``_inputs.array_like`` with this module's shapes."""
    return array_like(_SHAPES, shape, bound, numeric)


@st.composite
def _calls(draw):
    """A call of a public function: half arbitrary, half with names and shapes that fit (any dtype and
    values), so that the kernels run on ints, bools, float32, NaN, inf and huge values too."""
    func = draw(st.sampled_from(["forward", "reverse", "final_state", "backprop", "adjoint"]))
    if draw(st.booleans()):
        residual = draw(_RESIDUALS)
        scheme = draw(_SCHEMES)
        depth = draw(st.one_of(st.none(), st.integers(-1, 5), st.just(2.5), st.just("3")))
        x0, theta = draw(_array_like()), draw(_array_like())
        # y stays within |y| <= 1e6 because of the separately pinned defect
        # test_gradient_residual_overflow_is_an_error_not_a_warning (x_N - y overflowing in NumPy).
        y = draw(_array_like(bound=1e6))
        return func, x0, theta, y, residual, scheme, depth
    residual = draw(st.sampled_from(["linear", "tanh", "tanh_out", "bias", "bias_sq", mlp(1)]))
    scheme = draw(st.sampled_from(["euler", "heun"]))
    d = draw(st.integers(1, 3))
    K = draw(st.integers(0, 4))  # K = 0 (and K = 1 for Heun) is a depth-0 network: rejected
    pshape = {"bias": (d,), "bias_sq": (d,)}.get(residual, (d, d)) if isinstance(residual, str) else (3 * d,)
    xshape = draw(st.sampled_from([(d,), (draw(st.integers(1, 3)), d)]))
    depth = draw(st.sampled_from([None, K - extra_slices(scheme)]))
    # Unbounded elements are mostly NaN, inf and huge values; a bound of 1e3 lets more calls finish.
    bound = draw(st.sampled_from([None, 1e3]))
    x0 = draw(_array_like(xshape, bound=bound, numeric=True))
    theta = draw(_array_like((K,) + pshape, bound=bound, numeric=True))
    y = draw(_array_like(xshape, bound=1e6, numeric=True))  # bound: see above
    return func, x0, theta, y, residual, scheme, depth


@settings(deadline=None, max_examples=60, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_calls())
def test_arbitrary_inputs_raise_only_type_or_value_errors(call):
    func, x0, theta, y, residual, scheme, depth = call
    kwargs = {"depth": depth}
    try:
        if func in ("backprop", "adjoint"):
            outs = gradient(x0, theta, y, residual, scheme, func, **kwargs)
        else:
            outs = (getattr(resnet, func)(x0, theta, residual, scheme, **kwargs),)
    except (TypeError, ValueError) as exc:
        event(f"{func}: {type(exc).__name__}")
        # Our own errors only: the message names an argument or reports an overflow.
        assert type(exc) in (TypeError, ValueError, NonFiniteError), repr(exc)
        assert "`" in str(exc) or isinstance(exc, NonFiniteError), repr(exc)
        return
    event(f"{func}: ran")
    for out in outs:
        assert out.dtype == np.float64
        assert np.all(np.isfinite(out))


# ---------------------------------------------------------------------------------------------------
# 7. Documented choices equal the accepted ones
# ---------------------------------------------------------------------------------------------------


def test_documented_schemes_and_residuals_are_the_registered_ones():
    assert set(SCHEMES) == {"euler", "heun"}
    assert set(RESIDUALS) == {"linear", "tanh", "tanh_out", "bias", "bias_sq"}
    # Order and slice count as documented in forward's docstring ("K = N for Euler, K = N + 1 for Heun").
    assert (SCHEMES["euler"].order, SCHEMES["euler"].extra_slices) == (1, 0)
    assert (SCHEMES["heun"].order, SCHEMES["heun"].extra_slices) == (2, 1)
    for name in RESIDUALS:
        assert f'``"{name}"``' in forward.__doc__, name
        assert RESIDUALS[name].name == name
    assert "mlp(m)" in forward.__doc__ and "V tanh(W x + b)" in forward.__doc__
    for name in SCHEMES:
        assert f'"{name}"' in forward.__doc__
    assert '"backprop"' in gradient.__doc__ and '"adjoint"' in gradient.__doc__
    assert '"weights"' in interpolating_ode.__doc__ and '"residuals"' in interpolating_ode.__doc__
    assert set(resnet.__all__) >= {"forward", "reverse", "final_state", "gradient", "interpolating_ode",
                                   "mlp", "RESIDUALS", "SCHEMES"}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("residual", sorted(RESIDUALS) + ["mlp"])
def test_every_documented_choice_is_accepted(scheme, residual):
    d, N = 2, 3
    family = "mlp2" if residual == "mlp" else residual
    theta, x0, y = draw_problem(family, scheme, d, N, None, _seed(family, scheme, d, N, 1))
    res = api_residual(family)
    assert forward(x0, theta, res, scheme, depth=N).shape == (N + 1, d)
    assert reverse(x0, theta, res, scheme, depth=N).shape == (N + 1, d)
    assert final_state(x0, theta, res, scheme, depth=N).shape == (d,)
    for method in ("backprop", "adjoint"):
        g_theta, g_x0 = gradient(x0, theta, y, res, scheme, method, depth=N)
        assert g_theta.shape == theta.shape and g_x0.shape == (d,)
    for interpolation in ("weights", "residuals"):
        th = theta if scheme == "heun" else np.concatenate([theta, theta[-1:]])
        assert interpolating_ode(x0, th, res, interpolation).x.shape == (N + 1, d)


def test_mlp_pack_unpack_roundtrip_and_layout():
    # The reference above reads theta as (V.ravel(), W.ravel(), b): pin that layout.
    res = mlp(2)
    rng = np.random.default_rng(0)
    V, W, b = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 2))
    theta = res.pack(V, W, b)
    assert theta.shape == (4, 14)
    np.testing.assert_array_equal(theta[1], np.concatenate([V[1].ravel(), W[1].ravel(), b[1]]))
    for got, want in zip(res.unpack(theta, 3), (V, W, b)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match=r"pack applies to the 'mlp' family only"):
        RESIDUALS["linear"].pack(V, W, b)


# ---------------------------------------------------------------------------------------------------
# Regression tests of defects found and fixed in the code under test
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["backprop", "adjoint"])
def test_gradient_residual_overflow_is_an_error_not_a_warning(method):
    # x_N = x0 = 1e308 (theta = 0), y = -1e308: x_N - y = 2e308 overflows in float64.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NonFiniteError):
            gradient([1e308], np.zeros((1, 1, 1)), [-1e308], "linear", method=method)


def test_depth_true_is_rejected():
    with pytest.raises(TypeError, match=r"`depth` of .* must be an integer"):
        forward([1.0], np.ones((1, 1, 1)), "linear", depth=True)


def test_interpolating_ode_mlp_lipschitz_bounds_interpolated_weights():
    res = mlp(1)
    # d = m = 1, b = 0: slice 0 has (V, W) = (10, 0.1), slice 1 has (0.1, 10); both products are 1.
    theta = np.stack([res.pack([[10.0]], [[0.1]], [0.0]), res.pack([[0.1]], [[10.0]], [0.0])])
    sol = interpolating_ode([0.0], theta, res, "weights")
    # At s = 1/2 the field is 5.05 tanh(5.05 x), whose Lipschitz constant (slope at 0) is 5.05^2.
    assert sol.lipschitz >= 5.05**2


def test_interpolating_ode_rejects_negative_samples():
    with pytest.raises(ValueError, match=r"`samples` of .* must be"):
        interpolating_ode([0.0], np.array([[0.5], [1.5]]), "bias", samples=-1)


def test_no_regex_in_table_is_vacuous():
    # Every message pattern must match something specific: guard against a pattern like ".*".
    for row in BAD_CALLS:
        assert len(re.sub(r"[.*\\]", "", row[3])) >= 10, row[0]


def test_error_weight_generators_take_numpys_rng_and_refuse_huge_sizes():
    # before: rng=None or an int seed gave AttributeError ('NoneType' has no 'standard_normal'),
    # d = -1 a NumPy error without the argument's name, depth = 10**12 a MemoryError
    from theory.resnet.errors import iid_weights, smooth_weights

    for gen in (iid_weights, smooth_weights):
        np.testing.assert_array_equal(gen(4, 2, 7), gen(4, 2, np.random.default_rng(7)))
        assert gen(4, 2, None).shape == (4, 2, 2)
        with pytest.raises(ValueError, match=r"`d` of theory\.resnet\.errors\.\w+ must be >= 1"):
            gen(4, -1, 0)
        with pytest.raises(ValueError, match=r"`depth` of .* = 1000000000000 needs 29\.1 TiB of memory"):
            gen(10**12, 2, 0)


# ---------------------------------------------------------------------------------------------------
# Kernels against a batched NumPy loop over the layers, at sizes on both sides of every kernel path
# (single-input loops, small-batch loops, BLAS products for a single long row and for batches)
# ---------------------------------------------------------------------------------------------------


def _np_split_mlp(th, d, m):
    return th[: d * m].reshape(d, m), th[d * m : 2 * d * m].reshape(m, d), th[2 * d * m :]


def _np_f(family, X, th, d):
    """f(X, th) row by row for a batch X (B, d) and one flat parameter slice th."""
    if family in ("linear", "tanh", "tanh_out"):
        T = th.reshape(d, d)
        if family == "linear":
            return X @ T.T
        if family == "tanh":
            return np.tanh(X @ T.T)
        return np.tanh(X) @ T.T
    if family == "bias":
        return np.broadcast_to(th, X.shape)
    if family == "bias_sq":
        return np.broadcast_to(th * th, X.shape)
    V, W, b = _np_split_mlp(th, d, MLP_WIDTH)
    return np.tanh(X @ W.T + b) @ V.T


def _np_vjp(family, X, th, G, d):
    """(sum_b d<G_b, f(X_b, th)>/d th flattened, rows d<G_b, f(X_b, th)>/d X_b)."""
    if family in ("linear", "tanh", "tanh_out"):
        T = th.reshape(d, d)
        if family == "linear":
            return (G.T @ X).ravel(), G @ T
        if family == "tanh":
            H = G * (1.0 - np.tanh(X @ T.T) ** 2)
            return (H.T @ X).ravel(), H @ T
        U = np.tanh(X)
        return (G.T @ U).ravel(), (G @ T) * (1.0 - U * U)
    if family == "bias":
        return G.sum(axis=0), np.zeros_like(X)
    if family == "bias_sq":
        return 2.0 * th * G.sum(axis=0), np.zeros_like(X)
    V, W, b = _np_split_mlp(th, d, MLP_WIDTH)
    A = np.tanh(X @ W.T + b)
    R = (G @ V) * (1.0 - A * A)
    return np.concatenate([(G.T @ A).ravel(), (R.T @ X).ravel(), R.sum(axis=0)]), R @ W


def _np_step(family, scheme, X, th, th_next, h, d):
    """One Euler step X + h f(X, th), or one Heun step with slices (th, th_next) (h = -1/N: reverse)."""
    F1 = _np_f(family, X, th, d)
    if scheme == "euler":
        return X + h * F1
    Y = X + h * F1
    return X + 0.5 * h * (F1 + _np_f(family, Y, th_next, d))


def np_forward_loop(family, scheme, X0, theta):
    """Trajectory (N + 1, B, d) by a NumPy loop over the layers."""
    K, d = theta.shape[0], X0.shape[1]
    N = K - extra_slices(scheme)
    traj = np.empty((N + 1,) + X0.shape)
    traj[0] = X0
    for n in range(N):
        traj[n + 1] = _np_step(family, scheme, traj[n], theta[n], theta[min(n + 1, K - 1)], 1.0 / N, d)
    return traj


def np_gradient_loop(family, scheme, X0, theta, Yt, method):
    """(grad theta (K, P), grad X0) of 1/2 ||x_N - y||^2 summed over the batch, by a NumPy backward
    loop through the stored trajectory (backprop) or through the reverse-time reconstruction (adjoint)."""
    K, d = theta.shape[0], X0.shape[1]
    N = K - extra_slices(scheme)
    traj = np_forward_loop(family, scheme, X0, theta)
    G = traj[N] - Yt
    gtheta = np.zeros_like(theta)
    X = traj[N]
    for n in range(N - 1, -1, -1):
        if method == "backprop":
            X = traj[n]
        elif scheme == "euler":
            X = _np_step(family, scheme, X, theta[n], None, -1.0 / N, d)
        else:
            X = _np_step(family, scheme, X, theta[n + 1], theta[n], -1.0 / N, d)
        if scheme == "euler":
            gt, gx = _np_vjp(family, X, theta[n], G / N, d)
            gtheta[n] += gt
            G = G + gx
        else:
            Y = X + _np_f(family, X, theta[n], d) / N
            cot = G / (2.0 * N)
            gb, gy = _np_vjp(family, Y, theta[n + 1], cot, d)
            ga, gx = _np_vjp(family, X, theta[n], cot + gy / N, d)
            gtheta[n + 1] += gb
            gtheta[n] += ga
            G = G + gy + gx
    return gtheta, G


# (d, N, B): single inputs with short and long rows (d >= 128 goes to BLAS), small batches (loops,
# d < 8 and d >= 8), batches with B d^2 >= 16384 (BLAS products)
LOOP_SIZES = [(4, 40, None), (16, 30, None), (130, 3, None), (4, 12, 256), (16, 10, 16), (16, 6, 64),
              (64, 4, 8)]


@pytest.mark.parametrize("d, N, B", LOOP_SIZES, ids=[f"d{d}-N{N}-B{B}" for d, N, B in LOOP_SIZES])
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("family", FAMILIES)
def test_kernels_match_numpy_loop_at_every_size(family, scheme, d, N, B):
    theta, x0, y = draw_problem(family, scheme, d, N, B, _seed(family, scheme, d, N, B))
    res = api_residual(family)
    K = theta.shape[0]
    th = theta.reshape(K, -1)
    X0 = _rows(x0)
    ref = np_forward_loop(family, scheme, X0, th)
    ref = ref[:, 0] if B is None else ref
    assert_rel(forward(x0, theta, res, scheme), ref, REF_RTOL, "trajectory")
    assert_rel(final_state(x0, theta, res, scheme), ref[-1], REF_RTOL, "final state")
    for method in ("backprop", "adjoint"):
        g_theta, g_x0 = gradient(x0, theta, y, res, scheme, method)
        r_theta, r_x0 = np_gradient_loop(family, scheme, X0, th, _rows(y), method)
        assert_rel(g_theta, r_theta.reshape(theta.shape), REF_RTOL, f"{method} grad_theta")
        assert_rel(g_x0, _unrows(r_x0, x0), REF_RTOL, f"{method} grad_x0")


@pytest.mark.parametrize("family", ["tanh", "mlp2", "bias_sq"])
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("slot", ["first", "last"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_nonfinite_theta_is_rejected_by_name(family, scheme, slot, bad):
    # theta's finiteness is counted by the kernels as they stream it; an infinite weight inside
    # tanh gives a finite trajectory (tanh(inf) = 1), so only that count can reject it. The first
    # and the last slice (Heun's theta_N is used by the last step only) are both covered.
    d, N = 3, 4
    theta, x0, y = draw_problem(family, scheme, d, N, None, 7)
    theta = theta.copy()
    theta[0 if slot == "first" else -1].flat[0] = bad
    res = api_residual(family)
    pattern = r"`theta` of theory\.resnet\.\w+ must be finite; got NaN or inf\."
    for call in (lambda: forward(x0, theta, res, scheme), lambda: reverse(x0, theta, res, scheme),
                 lambda: final_state(x0, theta, res, scheme),
                 lambda: gradient(x0, theta, y, res, scheme, "backprop"),
                 lambda: gradient(x0, theta, y, res, scheme, "adjoint")):
        with pytest.raises(ValueError, match=pattern):
            call()


# The benchmark's size grid (d in 4, 16, 64, 256; one input or a batch of 16, 64, 256) at a small
# depth, for the matrix families: every kernel path the grid times (the in-order single-input loop,
# the vectorised single-input loop with its summation order left to the compiler from
# d = ROW_REASSOC_MIN_D on, BLAS products, and the tanh backpropagation that reuses the derivatives
# stored by the forward pass) against the plain NumPy loop, forward and both gradient methods.
GRID_SIZES = [(d, B) for d in (4, 16, 64, 256) for B in (None, 16, 64, 256)] + [(33, None), (130, None)]


@pytest.mark.parametrize("d, B", GRID_SIZES, ids=[f"d{d}-B{B}" for d, B in GRID_SIZES])
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("family", ["linear", "tanh"])
def test_kernels_match_numpy_loop_on_the_benchmark_grid(family, scheme, d, B):
    N = 3
    theta, x0, y = draw_problem(family, scheme, d, N, B, _seed(family, scheme, d, N, B))
    K = theta.shape[0]
    th = theta.reshape(K, -1)
    X0 = _rows(x0)
    ref = np_forward_loop(family, scheme, X0, th)
    ref = ref[:, 0] if B is None else ref
    assert_rel(forward(x0, theta, family, scheme), ref, REF_RTOL, "trajectory")
    assert_rel(reverse(ref[-1], theta, family, scheme)[-1], ref[-1], REF_RTOL, "reverse end")
    assert_rel(final_state(x0, theta, family, scheme), ref[-1], REF_RTOL, "final state")
    for method in ("backprop", "adjoint"):
        g_theta, g_x0 = gradient(x0, theta, y, family, scheme, method)
        r_theta, r_x0 = np_gradient_loop(family, scheme, X0, th, _rows(y), method)
        assert_rel(g_theta, r_theta.reshape(theta.shape), REF_RTOL, f"{method} grad_theta")
        assert_rel(g_x0, _unrows(r_x0, x0), REF_RTOL, f"{method} grad_x0")


@pytest.mark.parametrize("d", [3, 16, 40])
@pytest.mark.parametrize("where", ["first", "last", "last-entry"])
def test_nonfinite_theta_is_rejected_on_the_single_input_paths(d, where):
    # the single-input loops count theta's non-finite entries in the pass that uses them (in place
    # below ROW_REASSOC_MIN_D, row by row above it): every slice and every entry of it is counted
    theta, x0, y = draw_problem("tanh", "euler", d, 5, None, 11)
    theta = theta.copy()
    if where == "first":
        theta[0, 0, 0] = np.nan
    elif where == "last":
        theta[-1, d // 2, 0] = np.inf
    else:
        theta[-1, -1, -1] = -np.inf
    pattern = r"`theta` of theory\.resnet\.\w+ must be finite; got NaN or inf\."
    for call in (lambda: forward(x0, theta, "tanh"), lambda: reverse(x0, theta, "tanh"),
                 lambda: gradient(x0, theta, y, "tanh", method="backprop")):
        with pytest.raises(ValueError, match=pattern):
            call()


# The Euler kernels of the matrix families read theta's finiteness from the products theta_n v
# (B d numbers) instead of the slice (d^2 numbers), and count the slice only when a product is not
# finite. Sizes cover every product path: the in-order single-input loop (d = 3, 16), the
# vectorised one (d = 40), the batched loops (d = 4, B = 16), BLAS gemm (d = 64, B = 16) and, for
# tanh_out, BLAS gemv (d = 128, one input).
PRODUCT_PATHS = [("tanh", 3, None), ("tanh", 16, None), ("linear", 40, None), ("tanh", 4, 16),
                 ("linear", 64, 16), ("tanh", 64, 16), ("tanh_out", 128, None), ("tanh_out", 4, 16)]


@pytest.mark.parametrize("family, d, B", PRODUCT_PATHS, ids=[f"{f}-d{d}-B{B}" for f, d, B in PRODUCT_PATHS])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_nonfinite_theta_met_by_a_zero_input_is_rejected_by_name(family, d, B, bad):
    # The weakest case of the product test: the non-finite weight multiplies an input entry that is
    # 0 (tanh(0) = 0 for tanh_out), in the last slice; inf * 0 is NaN, so the product still shows it.
    theta, x0, y = draw_problem(family, "euler", d, 4, B, 23)
    theta, x0 = theta.copy(), x0.copy()
    x0[..., :] = 0.0  # x_n = 0 for every n: f(0) = 0 for the three families while theta is finite
    theta[-1, d // 2, d - 1] = bad
    pattern = r"`theta` of theory\.resnet\.\w+ must be finite; got NaN or inf\."
    for call in (lambda: forward(x0, theta, family), lambda: reverse(x0, theta, family),
                 lambda: final_state(x0, theta, family),
                 lambda: gradient(x0, theta, y, family, method="backprop"),
                 lambda: gradient(x0, theta, y, family, method="adjoint")):
        with pytest.raises(ValueError, match=pattern):
            call()


@pytest.mark.parametrize("d, B", [(3, None), (40, None), (4, 16), (64, 16)], ids=["d3", "d40", "d4-B16", "d64-B16"])
def test_overflowing_products_of_a_finite_theta_are_not_a_theta_error(d, B):
    # A finite theta whose products overflow (1e308 * 2 = inf) is not reported as a non-finite theta:
    # the slice is counted on the non-finite product and found finite. Linear: the trajectory
    # overflows (NonFiniteError, as before); tanh: tanh(+inf) = 1, a finite trajectory equal to
    # NumPy's on the same arithmetic.
    N = 3
    theta = np.full((N, d, d), 1e308)
    x0 = np.full(d if B is None else (B, d), 2.0)
    with pytest.raises(NonFiniteError, match=r"overflowed to NaN or inf"):
        forward(x0, theta, "linear")
    with pytest.raises(NonFiniteError, match=r"overflowed to NaN or inf"):
        final_state(x0, theta, "linear")
    X0 = _rows(x0)
    with np.errstate(over="ignore"):
        ref = np_forward_loop("tanh", "euler", X0, theta.reshape(N, -1))
    assert np.all(np.isfinite(ref))
    got = forward(x0, theta, "tanh")
    np.testing.assert_array_equal(got, ref[:, 0] if B is None else ref)
    np.testing.assert_array_equal(final_state(x0, theta, "tanh"), got[-1])


# The batched loop of the linear and tanh families at small d (up to BATCH_LOOP_MAX_D) pairs the
# rows of theta_n and takes the terms eight at a time: odd widths, widths that are not multiples
# of 8, the largest width it takes and the smallest batch cover its remainders.
BATCH_LOOP_SIZES = [(1, 2), (5, 3), (9, 2), (17, 5), (31, 4), (32, 3)]


@pytest.mark.parametrize("d, B", BATCH_LOOP_SIZES, ids=[f"d{d}-B{B}" for d, B in BATCH_LOOP_SIZES])
@pytest.mark.parametrize("family", ["linear", "tanh"])
def test_batch_loop_matches_numpy_loop_at_odd_sizes(family, d, B):
    N = 6
    theta, x0, y = draw_problem(family, "euler", d, N, B, _seed(family, "euler", d, N, B))
    th = theta.reshape(N, -1)
    ref = np_forward_loop(family, "euler", x0, th)
    assert_rel(forward(x0, theta, family), ref, REF_RTOL, "trajectory")
    assert_rel(reverse(ref[-1], theta, family)[0], ref[0], 0.1, "reverse start")  # O(1/N) apart
    rev = np_forward_loop(family, "euler", ref[-1], th[::-1].copy() * -1.0)[-1] if family == "linear" else None
    if rev is not None:  # linear: reverse-time Euler is Euler with -theta over the reversed slices
        assert_rel(reverse(ref[-1], theta, family)[0], rev, REF_RTOL, "reverse trajectory")
    g_theta, g_x0 = gradient(x0, theta, y, family, method="backprop")
    r_theta, r_x0 = np_gradient_loop(family, "euler", x0, th, y, "backprop")
    assert_rel(g_theta, r_theta.reshape(theta.shape), REF_RTOL, "grad_theta")
    assert_rel(g_x0, r_x0, REF_RTOL, "grad_x0")
