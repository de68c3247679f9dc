"""Tests of :mod:`theory.implicit` (paper key ``implicit-reg``) against independent references.

What is checked (independent references, property tests, input validation):

1. ``forward`` against a plain-NumPy loop written from Eq. (3) (one sample, one layer at a time,
   ``np.tanh``, ``scipy.special.erf`` for GELU), for every activation.
2. ``loss_and_gradient`` against central finite differences of that NumPy loss, for every activation
   and every parameter block (relative error < 1e-6).
3. The printed slips of the backward equations: a NumPy backprop written from the corrected
   Eqs. (13)-(16) agrees with finite differences; the printed Eq. (13) (no transpose) and the theses'
   Eq. (3.15) (p_{k-1} for p_k) do not.
4. ``initialize``: shapes, A/B layout, V = 0, weight-tying (paper) or independence (iid), N(0, 1)
   entries (sample mean and variance within 5 standard errors).
5. ``train``: the update is the depth-scaled step of Eq. (4); small steps decrease the loss
   monotonically; frozen A, B stay the identity; clipped steps move each coordinate by <= lr clip.
6. The contract: a table of bad inputs, accepted input kinds, no mutation, documented choices.
7. The fused kernel at a size where the batch is split into two chunks run in two threads: agreement
   with a batch-vectorised NumPy step (the benchmark's anchor, every activation, 1e-12), one and two
   chunks agree, repeated calls are bitwise equal, and so are the results with the worker thread,
   without it (``NUMBA_NUM_THREADS=1``, in this process and in a fresh interpreter) and with a worker
   that never starts (the calling thread takes its chunk back); ``train`` follows a NumPy GD loop.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.special import erf

import theory.implicit as implicit
from theory._validation import NonFiniteError
from theory.implicit import (
    ACTIVATIONS,
    INIT_KINDS,
    METHODS,
    Params,
    forward,
    initialize,
    loss_and_gradient,
    synthetic_data,
    train,
)

# ---------------------------------------------------------------- independent NumPy reference


def np_sigma(name, u):
    return {
        "tanh": np.tanh,
        "gelu": lambda z: 0.5 * z * (1.0 + erf(z / np.sqrt(2.0))),
        "sin": np.sin,
        "relu": lambda z: np.maximum(z, 0.0),
        "identity": lambda z: z,
    }[name](u)


def np_dsigma(name, u):
    return {
        "tanh": lambda z: 1.0 - np.tanh(z) ** 2,
        "gelu": lambda z: 0.5 * (1.0 + erf(z / np.sqrt(2.0))) + z * np.exp(-z * z / 2) / np.sqrt(2 * np.pi),
        "sin": np.cos,
        "relu": lambda z: (z > 0).astype(float),
        "identity": np.ones_like,
    }[name](u)


def np_forward(X, A, V, W, B, act):
    """Eq. (3) by a plain loop over samples and layers."""
    L, q, m = V.shape
    n = X.shape[0]
    h = np.zeros((L + 1, n, q))
    for i in range(n):
        hk = A @ X[i]
        h[0, i] = hk
        for k in range(L):  # V[k], W[k] = the paper's V_{k+1}, W_{k+1}
            hk = hk + V[k] @ np_sigma(act, W[k] @ hk / np.sqrt(q)) / (L * np.sqrt(m))
            h[k + 1, i] = hk
    return h, h[L] @ B.T


def np_loss(X, Y, A, V, W, B, act):
    _, F = np_forward(X, A, V, W, B, act)
    return np.sum((F - Y) ** 2) / X.shape[0]  # l = (1/n) sum ||F(x_i) - y_i||^2, no 1/2


def np_backprop(X, Y, A, V, W, B, act, variant="corrected"):
    """Per-sample Eqs. (13)-(16) with f(h, (V, W)) = V sigma(W h / sqrt q) / sqrt m and dense Jacobians.

    variant "corrected": p_k = p_{k+1} + (1/L) (d1 f)^T p_{k+1}; dl/dZ_k uses h_{k-1} and p_k (the paper's Eq. (15)).
    variant "printed13": p_k = p_{k+1} + (1/L) (d1 f) p_{k+1}, Eq. (13) as printed (no transpose).
    variant "thesis15": dl/dZ_k uses h_{k-1} and p_{k-1}, the theses' Eq. (3.15).
    """
    L, q, m = V.shape
    n = X.shape[0]
    h, F = np_forward(X, A, V, W, B, act)
    gA, gV, gW = np.zeros_like(A), np.zeros_like(V), np.zeros_like(W)
    gB = 2.0 / n * (F - Y).T @ h[L]  # (16)
    for i in range(n):
        p = np.zeros((L + 1, q))
        p[L] = 2.0 * B.T @ (F[i] - Y[i])  # (13), first line
        for k in range(L - 1, -1, -1):  # layer k+1 maps h_k to h_{k+1}
            u = W[k] @ h[k, i] / np.sqrt(q)
            J = V[k] @ np.diag(np_dsigma(act, u)) @ W[k] / np.sqrt(m * q)  # d1 f(h_k, Z_{k+1}), (q, q)
            p[k] = p[k + 1] + (J @ p[k + 1] if variant == "printed13" else J.T @ p[k + 1]) / L
        for k in range(L):  # (15) for Z_{k+1}: d2 f(h_k, Z_{k+1})^T p_{k+1}
            pk = p[k] if variant == "thesis15" else p[k + 1]
            u = W[k] @ h[k, i] / np.sqrt(q)
            gV[k] += np.outer(pk, np_sigma(act, u)) / (n * L * np.sqrt(m))
            gW[k] += np.outer((V[k].T @ pk) * np_dsigma(act, u), h[k, i]) / (n * L * np.sqrt(m * q))
        gA += np.outer(p[0], X[i]) / n  # (14)
    return {"A": gA, "V": gV, "W": gW, "B": gB}


def fd_gradient(X, Y, P, act, eps=1e-5):
    """Central finite differences of np_loss with respect to every entry of every block."""
    out = {}
    for name in "AVWB":
        g = np.zeros_like(P[name])
        for idx in np.ndindex(P[name].shape):
            plus = {k: v.copy() for k, v in P.items()}
            minus = {k: v.copy() for k, v in P.items()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            g[idx] = (np_loss(X, Y, **plus, act=act) - np_loss(X, Y, **minus, act=act)) / (2 * eps)
        out[name] = g
    return out


def rel_err(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def random_params(rng, d=3, q=5, m=4, L=3, d_out=2, scale=1.0):
    """Generic parameters (V != 0, W not tied) so that every gradient block is non-trivial."""
    return {
        "A": rng.standard_normal((q, d)),
        "V": scale * rng.standard_normal((L, q, m)),
        "W": rng.standard_normal((L, m, q)),
        "B": rng.standard_normal((d_out, q)),
    }


# ---------------------------------------------------------------- 1. forward


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_forward_matches_numpy_loop(act):
    rng = np.random.default_rng(1)
    P = random_params(rng, d=3, q=6, m=5, L=7, d_out=4, scale=3.0)
    X = rng.standard_normal((8, 3))
    h, F = forward(X, P, act)
    h_ref, F_ref = np_forward(X, **P, act=act)
    assert h.shape == (8, 8, 6) and F.shape == (8, 4)
    np.testing.assert_allclose(h, h_ref, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(F, F_ref, rtol=1e-13, atol=1e-13)


def test_forward_at_initialisation_is_identity_layers():
    # V = 0: h_k = A x for every k; q >= d + d' gives F = B A x = 0 (Section 3); q = d = d' gives F = x.
    rng = np.random.default_rng(2)
    X = rng.standard_normal((5, 3))
    h, F = forward(X, initialize(3, 4, 6, rng, q=5, d_out=2), "gelu")
    assert np.all(h == h[0]) and np.all(F == 0.0)
    h, F = forward(X, initialize(3, 4, 6, rng), "gelu")
    assert np.array_equal(F, X)


def test_single_layer_hand_case():
    # L = 1, q = d = d' = m = 1, identity sigma: h_1 = x + v w x = (1 + v w) x; F = b (1 + v w) a x.
    P = {"A": [[2.0]], "V": [[[3.0]]], "W": [[[0.5]]], "B": [[-1.0]]}
    h, F = forward([[1.5]], P, "identity")
    assert h[:, 0, 0].tolist() == [3.0, 3.0 * 2.5]
    assert F[0, 0] == -7.5


@pytest.mark.parametrize("n", [4, 64])  # one chunk, and two chunks (the threaded path)
def test_inputs_are_read_not_written(n):
    # forward and loss_and_gradient read the caller's arrays in place (no defensive copy): they must
    # leave them bitwise unchanged and return arrays that share no memory with them.
    rng = np.random.default_rng(30)
    P = random_params(rng, d=3, q=16, m=64, L=4, d_out=2)
    X, Y = rng.standard_normal((n, 3)), rng.standard_normal((n, 2))
    before = {k: v.copy() for k, v in P.items()}
    x_before, y_before = X.copy(), Y.copy()
    h, F = forward(X, P, "tanh")
    _, g = loss_and_gradient(X, Y, P, "tanh")
    for k in "AVWB":
        assert np.array_equal(P[k], before[k]), k
        for out in (h, F, getattr(g, k)):
            assert not np.shares_memory(out, P[k]), k
    assert np.array_equal(X, x_before) and np.array_equal(Y, y_before)


# ---------------------------------------------------------------- 2-3. gradients


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_gradient_matches_finite_differences(act):
    rng = np.random.default_rng(3)
    P = random_params(rng)
    X = rng.standard_normal((4, 3))
    Y = rng.standard_normal((4, 2))
    loss, g = loss_and_gradient(X, Y, P, act)
    assert loss == pytest.approx(np_loss(X, Y, **P, act=act), rel=1e-13)
    fd = fd_gradient(X, Y, P, act)
    for name in "AVWB":
        assert rel_err(getattr(g, name), fd[name]) < 1e-6, name


@pytest.mark.parametrize("act", ["tanh", "gelu"])
def test_gradient_matches_numpy_backprop_at_larger_depth(act):
    rng = np.random.default_rng(4)
    P = random_params(rng, d=2, q=4, m=6, L=16, d_out=3)
    X, Y = rng.standard_normal((5, 2)), rng.standard_normal((5, 3))
    _, g = loss_and_gradient(X, Y, P, act)
    ref = np_backprop(X, Y, **P, act=act)
    for name in "AVWB":
        np.testing.assert_allclose(getattr(g, name), ref[name], rtol=1e-11, atol=1e-14)


def test_printed_backward_slips_fail_finite_differences():
    """Evidence for the corrections: only the corrected (13)/(15) matches central differences."""
    rng = np.random.default_rng(5)
    P = random_params(rng, scale=3.0)
    X, Y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    fd = fd_gradient(X, Y, P, "tanh")
    good = np_backprop(X, Y, **P, act="tanh")
    printed = np_backprop(X, Y, **P, act="tanh", variant="printed13")
    thesis = np_backprop(X, Y, **P, act="tanh", variant="thesis15")
    for name in "AVWB":
        assert rel_err(good[name], fd[name]) < 1e-6
    # (13) without transpose: p_0 .. p_{L-1} wrong, hence dl/dA and dl/dZ_k for k < L
    assert rel_err(printed["A"], fd["A"]) > 1e-2
    assert rel_err(printed["W"], fd["W"]) > 1e-2
    # (3.15) with p_{k-1}: dl/dZ wrong
    assert rel_err(thesis["V"], fd["V"]) > 1e-2 and rel_err(thesis["W"], fd["W"]) > 1e-2


def test_relu_gradient_uses_zero_derivative_at_kink():
    # u = W h / sqrt(q) = 0 exactly (W = 0): sigma'(0) = 0, so dl/dW = 0 and p passes unchanged.
    rng = np.random.default_rng(6)
    P = random_params(rng)
    P["W"] = np.zeros_like(P["W"])
    X, Y = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    _, g = loss_and_gradient(X, Y, P, "relu")
    assert np.all(g.W == 0.0) and np.all(g.V == 0.0)


# ---------------------------------------------------------------- 4. initialisation


def test_initialize_paper_layout_and_tying():
    rng = np.random.default_rng(7)
    p = initialize(3, 4, 5, rng, q=6, d_out=2)
    assert isinstance(p, Params)
    assert (p.A.shape, p.V.shape, p.W.shape, p.B.shape) == ((6, 3), (5, 6, 4), (5, 4, 6), (2, 6))
    assert (p.L, p.q, p.m, p.d, p.d_out) == (5, 6, 4, 3, 2)
    assert np.array_equal(p.A, np.vstack([np.eye(3), np.zeros((3, 3))]))
    assert np.array_equal(p.B, np.hstack([np.zeros((2, 4)), np.eye(2)]))
    assert np.all(p.V == 0.0)
    assert np.all(p.W == p.W[0]) and p.W.flags.c_contiguous and p.W.flags.writeable
    assert np.all(p.B @ p.A == 0.0)  # q >= d + d': initial output 0


@pytest.mark.parametrize("kind", INIT_KINDS)
def test_initialize_variance(kind):
    rng = np.random.default_rng(8)
    p = initialize(40, 50, 4, rng, kind=kind)
    w = p.W[0].ravel() if kind == "paper" else p.W.ravel()
    N = w.size
    # N(0, 1) entries: mean within 5 standard errors 5/sqrt(N); variance within 5 sqrt(2/N)
    assert abs(w.mean()) < 5 / np.sqrt(N)
    assert abs(w.var() - 1.0) < 5 * np.sqrt(2.0 / N)
    if kind == "iid":
        diffs = np.linalg.norm(p.W[1:] - p.W[:-1], axis=(1, 2))
        # ||W_{k+1} - W_k||_F ~ sqrt(2 q m) = sqrt(4000) ~ 63: no smoothness in k
        assert np.all(diffs > 50)


def test_initialize_is_reproducible():
    a = initialize(3, 4, 5, np.random.default_rng(9), kind="iid")
    b = initialize(3, 4, 5, np.random.default_rng(9), kind="iid")
    assert np.array_equal(a.W, b.W)


def test_synthetic_data():
    X, Y = synthetic_data(2000, 3, np.random.default_rng(10), d_out=2)
    assert X.shape == (2000, 3) and Y.shape == (2000, 2)
    assert np.all(np.abs(np.cov(np.hstack([X, Y]).T) - np.eye(5)) < 5 * np.sqrt(2 / 2000))


# ---------------------------------------------------------------- 5. training


def test_one_step_is_the_depth_scaled_step():
    rng = np.random.default_rng(11)
    P = random_params(rng, L=4)
    X, Y = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    _, g = loss_and_gradient(X, Y, P, "sin")
    new, losses = train(X, Y, P, "sin", lr=0.01, steps=1)
    np.testing.assert_allclose(new.V, P["V"] - 0.01 * 4 * g.V, rtol=0, atol=1e-15)
    np.testing.assert_allclose(new.W, P["W"] - 0.01 * 4 * g.W, rtol=0, atol=1e-15)
    np.testing.assert_allclose(new.A, P["A"] - 0.01 * g.A, rtol=0, atol=1e-15)
    np.testing.assert_allclose(new.B, P["B"] - 0.01 * g.B, rtol=0, atol=1e-15)
    assert losses.shape == (2,) and losses[1] == pytest.approx(loss_and_gradient(X, Y, new, "sin")[0])


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("train_outer", [True, False])
def test_loss_decreases_under_small_step_gd(act, train_outer):
    # The reduced Section 5.1 setting: q = d = d', paper initialisation.
    rng = np.random.default_rng(12)
    X, Y = synthetic_data(20, 4, rng)
    p0 = initialize(4, 8, 8, rng)
    p, losses = train(X, Y, p0, act, lr=1e-2, steps=40, train_outer=train_outer)
    assert losses.shape == (41,)
    assert np.all(np.diff(losses) < 0) and losses[-1] < 0.95 * losses[0]
    if not train_outer:
        assert np.array_equal(p.A, np.eye(4)) and np.array_equal(p.B, np.eye(4))
    assert np.all(p0.V == 0.0)  # the starting point is not modified


def test_clipped_steps_are_bounded():
    rng = np.random.default_rng(13)
    P = random_params(rng, scale=5.0)
    X, Y = 10 * rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    new, _ = train(X, Y, P, "tanh", lr=0.1, steps=1, method="clipped", clip=0.5)
    for name in "AVWB":
        assert np.max(np.abs(getattr(new, name) - P[name])) <= 0.05 + 1e-15
    assert np.max(np.abs(new.V - P["V"])) == pytest.approx(0.05)  # some coordinate is clipped


def test_divergence_is_reported():
    rng = np.random.default_rng(14)
    X, Y = synthetic_data(5, 3, rng)
    with pytest.raises(NonFiniteError, match=r"diverged at step \d+"):
        train(X, 1e3 * Y, initialize(3, 4, 4, rng), "identity", lr=50.0, steps=200)


def test_weight_tied_training_stays_smooth_in_depth():
    # Prop 3: the tied init stays O(1/L)-smooth under GD (max successive difference x L ~ constant);
    # i.i.d. init does not. Small qualitative check (the rate itself belongs to checks/).
    def dmax(L, kind):
        rng = np.random.default_rng(15)
        X, Y = synthetic_data(10, 4, rng)
        p, _ = train(X, Y, initialize(4, 8, L, rng, kind=kind), "gelu", lr=5e-2, steps=30, train_outer=False)
        return np.max(np.linalg.norm(np.diff(p.V, axis=0), axis=(1, 2)) + np.linalg.norm(np.diff(p.W, axis=0), axis=(1, 2)))

    d8, d32 = dmax(8, "paper"), dmax(32, "paper")
    assert 3.0 < d8 / d32 < 5.0  # ~4 for a 1/L rate
    assert dmax(8, "iid") > 10 * d8


# ---------------------------------------------------------------- 6. contract


def good():
    rng = np.random.default_rng(16)
    return rng.standard_normal((4, 3)), rng.standard_normal((4, 2)), random_params(rng)


def _with(P, **kw):
    Q = dict(P)
    Q.update(kw)
    return Q


X0, Y0, P0 = good()
NAN_X = X0.copy()
NAN_X[0, 0] = np.nan
NAN_V = P0["V"].copy()
NAN_V[0, 0, 0] = np.nan

BAD = [
    # (function, args, kwargs, exception, message pattern)
    (forward, (X0[:, :2], P0), {}, ValueError, r"`X` of theory.implicit.forward must have shape \(n, d\) .* d = 3"),
    (forward, (X0, _with(P0, W=P0["W"][:, :, :4])), {}, ValueError, r"`params.W` .* \(L, m, q\) = \(3, 4, 5\)"),
    (forward, (X0, _with(P0, V=P0["V"][:2])), {}, ValueError, r"`params.W` .* \(2, 4, 5\)"),
    (forward, (X0, _with(P0, B=P0["B"][:, :4])), {}, ValueError, r"`params.B` .* q = 5"),
    (forward, (X0, _with(P0, V=P0["V"][:, :4])), {}, ValueError, r"`params.V` .* q = 5"),
    (forward, (X0, {"A": P0["A"]}), {}, ValueError, r"must hold the arrays A, V, W, B"),
    (forward, (X0, [1, 2]), {}, TypeError, r"`params` .*Params or a mapping"),
    (forward, (X0, P0, "swish"), {}, ValueError, r"`activation` .* must be one of"),
    (forward, (X0, P0, None), {}, TypeError, r"`activation` .* must be a string"),
    (forward, (NAN_X, P0), {}, ValueError, r"`X` .* must be finite"),
    (forward, (X0, _with(P0, V=NAN_V)), {}, ValueError, r"`params.V` .* must be finite"),
    (forward, (X0.astype(complex), P0), {}, TypeError, r"`X` .* real numeric"),
    (forward, (X0[0], P0), {}, ValueError, r"`X` .* 2 dimension"),
    (loss_and_gradient, (X0, Y0[:, :1], P0), {}, ValueError, r"`Y` .* \(4, 2\)"),
    (loss_and_gradient, (X0, Y0[:3], P0), {}, ValueError, r"`Y` .* \(4, 2\)"),
    (loss_and_gradient, (X0, np.full_like(Y0, np.inf), P0), {}, ValueError, r"`Y` .* must be finite"),
    (train, (X0, Y0, P0), {"lr": 0.0, "steps": 1}, ValueError, r"`lr` .* \(0.0, inf\)"),
    (train, (X0, Y0, P0), {"lr": -1.0, "steps": 1}, ValueError, r"`lr`"),
    (train, (X0, Y0, P0), {"lr": np.nan, "steps": 1}, ValueError, r"`lr`"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": -1}, ValueError, r"`steps` .* >= 0"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": 1.5}, TypeError, r"`steps` .* integer"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": 1, "method": "adam"}, ValueError, r"`method`"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": 1, "method": "clipped"}, ValueError, r"`clip` .* must be given"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": 1, "clip": 1.0}, ValueError, r"`clip` .*clipped' only"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": 1, "method": "clipped", "clip": 0.0}, ValueError, r"`clip`"),
    (train, (X0, Y0, P0), {"lr": 0.1, "steps": 1, "train_outer": 1}, TypeError, r"`train_outer`"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"kind": "gp"}, ValueError, r"`kind`"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"lengthscale": 0.1}, ValueError, r"`lengthscale` .*smooth' only"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"kind": "smooth", "lengthscale": 0.0}, ValueError,
     r"`lengthscale` .* \(0\.0, inf\)"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"kind": "smooth", "lengthscale": "a"}, TypeError, r"`lengthscale`"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"kind": "smooth", "lengthscale": 1e-3}, ValueError,
     r"`lengthscale` .* too small"),
    (initialize, (3, 4, 0, np.random.default_rng(0)), {}, ValueError, r"`L` .* >= 1"),
    (initialize, (3, 0, 5, np.random.default_rng(0)), {}, ValueError, r"`m` .* >= 1"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"q": 2}, ValueError, r"`q` .* >= 3"),
    (initialize, (3, 4, 5, np.random.default_rng(0)), {"d_out": 4, "q": 3}, ValueError, r"`q` .* >= 4"),
    (initialize, (3, 4, 5, 0.5), {}, TypeError, r"`rng` .*Generator"),  # None, an int seed or a Generator
    (initialize, (3.0, 4, 5, np.random.default_rng(0)), {}, TypeError, r"`d` .* integer"),
    (synthetic_data, (0, 3, np.random.default_rng(0)), {}, ValueError, r"`n` .* >= 1"),
    (synthetic_data, (5, 3, "seed"), {}, TypeError, r"`rng`"),
]


@pytest.mark.parametrize("func, args, kwargs, exc, pattern", BAD, ids=[f"{b[0].__name__}-{i}" for i, b in enumerate(BAD)])
def test_bad_inputs(func, args, kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        func(*args, **kwargs)


def test_overflow_is_an_error_not_a_silent_inf():
    P = _with(P0, V=1e305 * np.ones_like(P0["V"]))
    with pytest.raises(NonFiniteError, match="hidden states overflowed"):
        forward(X0, P, "identity")


def test_loss_overflow_is_an_error_not_a_warning():
    # finite states whose squared residual overflows: NonFiniteError, no RuntimeWarning (filterwarnings=error)
    P = _with(P0, B=1e200 * np.ones_like(P0["B"]))
    with pytest.raises(NonFiniteError, match="overflowed"):
        loss_and_gradient(X0, Y0, P, "tanh")


def test_input_kinds_and_no_mutation():
    X, Y, P = good()
    copies = [X.copy(), Y.copy()] + [P[k].copy() for k in "AVWB"]
    ref = loss_and_gradient(X, Y, P, "tanh")
    # lists, float32-exact values, Fortran order, strided views, read-only arrays, a Params object
    X32 = X.astype(np.float32).astype(np.float64)
    r32 = loss_and_gradient(X.astype(np.float32), Y, P, "tanh")
    assert r32[0] == loss_and_gradient(X32, Y, P, "tanh")[0]
    ro = {k: v.copy() for k, v in P.items()}
    for v in ro.values():
        v.setflags(write=False)
    variants = [
        (X.tolist(), Y.tolist(), {k: v.tolist() for k, v in P.items()}),
        (np.asfortranarray(X), np.asfortranarray(Y), {k: np.asfortranarray(v) for k, v in P.items()}),
        (np.repeat(X, 2, axis=0)[::2], Y, ro),
        (X, Y, Params(**P)),
    ]
    for Xv, Yv, Pv in variants:
        loss, g = loss_and_gradient(Xv, Yv, Pv, "tanh")
        assert loss == ref[0]
        for name in "AVWB":
            assert np.array_equal(getattr(g, name), getattr(ref[1], name))
            assert getattr(g, name).dtype == np.float64
    train(X, Y, P, "tanh", lr=0.01, steps=2)
    for a, b in zip([X, Y] + [P[k] for k in "AVWB"], copies):
        assert np.array_equal(a, b)


def test_documented_choices_are_accepted():
    assert ACTIVATIONS == ("tanh", "gelu", "sin", "relu", "identity")
    assert INIT_KINDS == ("paper", "iid", "smooth") and METHODS == ("gd", "clipped")
    for act in ACTIVATIONS:
        forward(X0, P0, act)
    for kind in INIT_KINDS:
        initialize(2, 2, 2, np.random.default_rng(0), kind=kind)
    for method in METHODS:
        train(X0, Y0, P0, lr=1e-3, steps=1, method=method, clip=1.0 if method == "clipped" else None)
    for name in implicit.__all__:
        assert getattr(implicit, name).__doc__, name
    for func in (forward, loss_and_gradient, train):
        for act in ACTIVATIONS:
            assert act in func.__doc__


def test_runtime_of_a_section_5_1_sized_step():
    # One GD step at the Figure 1 size (n = 100, d = q = 16, m = 32, L = 64) stays well under 0.5 s
    # once compiled (O(L n q m) ~ 3e6 multiply-adds per pass).
    rng = np.random.default_rng(17)
    X, Y = synthetic_data(100, 16, rng)
    p = initialize(16, 32, 64, rng)
    train(X, Y, p, "gelu", lr=1e-2, steps=1)  # compile
    t0 = time.perf_counter()
    train(X, Y, p, "gelu", lr=1e-2, steps=5, train_outer=False)
    assert (time.perf_counter() - t0) / 6 < 0.5

_ARR = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.complex128]),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3),
)


@settings(max_examples=60, deadline=None)
@given(X=_ARR, A=_ARR, V=_ARR, W=_ARR, B=_ARR)
def test_arbitrary_inputs_raise_only_our_errors(X, A, V, W, B):
    try:
        loss_and_gradient(X, X, {"A": A, "V": V, "W": W, "B": B}, "tanh")
    except (TypeError, ValueError) as exc:
        assert re.search(r"`\w+(\.\w)?`|overflowed", str(exc)), str(exc)



# ---------------------------------------------------------------- 7. fused kernel: NumPy anchor, determinism, threads


def np_batch_loss_and_gradient(X, Y, P, act):
    """Loss and gradients vectorised over the batch (one matrix product per layer and quantity), as the
    anchor of benchmarks/bench_implicit.py but for every activation:
    H_{k+1} = H_k + sigma(U_k) V^T / (L sqrt m) with U_k = H_k W^T / sqrt q; R = (P_{k+1} V) * sigma'(U_k),
    P_k = P_{k+1} + R W / (L sqrt(m q)), dl/dV = P_{k+1}^T sigma(U_k) / (L sqrt m), dl/dW = R^T H_k / (L sqrt(m q))."""
    A, V, W, B = P["A"], P["V"], P["W"], P["B"]
    L, q, m = V.shape
    n = X.shape[0]
    H = [X @ A.T]
    U = []
    for k in range(L):
        U.append(H[k] @ W[k].T / np.sqrt(q))
        H.append(H[k] + np_sigma(act, U[k]) @ V[k].T / (L * np.sqrt(m)))
    res = H[L] @ B.T - Y
    Pk = 2.0 / n * res @ B
    gV, gW = np.empty_like(V), np.empty_like(W)
    for k in range(L - 1, -1, -1):
        R = (Pk @ V[k]) * np_dsigma(act, U[k])
        gV[k] = Pk.T @ np_sigma(act, U[k]) / (L * np.sqrt(m))
        gW[k] = R.T @ H[k] / (L * np.sqrt(m * q))
        Pk = Pk + R @ W[k] / (L * np.sqrt(m * q))
    grads = {"A": Pk.T @ X, "V": gV, "W": gW, "B": 2.0 / n * res.T @ H[L]}
    return float(np.sum(res * res) / n), grads


def _two_chunk_problem(n, seed=30, d=5, q=16, m=72, L=24, d_out=3):
    """Generic parameters (V != 0) at a size where the samples are split into two chunks (two threads)."""
    rng = np.random.default_rng(seed)
    P = random_params(rng, d=d, q=q, m=m, L=L, d_out=d_out, scale=2.0)
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, d_out))
    assert implicit._api._chunks(n, Params(**P)) == 2
    return X, Y, P


def _equal_results(a, b):
    return a[0] == b[0] and all(np.array_equal(getattr(a[1], k), getattr(b[1], k)) for k in "AVWB")


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("n", [30, 31])  # two equal chunks; a last chunk padded with a zero row
def test_gradient_matches_batch_vectorised_numpy(act, n):
    X, Y, P = _two_chunk_problem(n)
    loss, g = loss_and_gradient(X, Y, P, act)
    loss_ref, ref = np_batch_loss_and_gradient(X, Y, P, act)
    assert loss == pytest.approx(loss_ref, rel=1e-13)
    for name in "AVWB":
        scale = max(1.0, np.max(np.abs(ref[name])))
        assert np.max(np.abs(getattr(g, name) - ref[name])) <= 1e-12 * scale, name


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_one_and_two_chunks_agree(act):
    X, Y, P = _two_chunk_problem(31)
    p = Params(**{k: np.asarray(v, dtype=float) for k, v in P.items()})
    code = implicit._api._CODES[act]
    one = implicit._api._loss_grad(code, X, Y, p, "f", chunks=1)
    two = implicit._api._loss_grad(code, X, Y, p, "f", chunks=2)
    assert one[0] == pytest.approx(two[0], rel=1e-14)
    for name in "AVWB":
        np.testing.assert_allclose(getattr(one[1], name), getattr(two[1], name), rtol=1e-13, atol=1e-15)


def test_gradient_is_bitwise_reproducible():
    X, Y, P = _two_chunk_problem(32)
    first = loss_and_gradient(X, Y, P, "tanh")
    for _ in range(20):
        assert _equal_results(loss_and_gradient(X, Y, P, "tanh"), first)


class _NeverStarted:
    """A stand-in worker whose jobs never start: the calling thread must cancel them and compute them itself."""

    submitted = 0

    def submit(self, fn, *args):
        from concurrent.futures import Future

        type(self).submitted += 1
        return Future()  # pending: cancel() succeeds


def test_gradient_does_not_depend_on_the_threads(monkeypatch):
    """Two threads, the calling thread alone (NUMBA_NUM_THREADS = 1) and a worker that never starts its jobs
    (a busy machine) give bitwise equal results, for every activation."""
    from theory.implicit import _kernels

    X, Y, P = _two_chunk_problem(33)
    _NeverStarted.submitted = 0
    runs = {}
    for act in ACTIVATIONS:
        runs[act] = loss_and_gradient(X, Y, P, act)
        assert _equal_results(loss_and_gradient(X, Y, P, act), runs[act])
    with monkeypatch.context() as mp:
        mp.setattr(_kernels.config, "NUMBA_NUM_THREADS", 1)
        assert _kernels._worker() is None
        for act in ACTIVATIONS:
            assert _equal_results(loss_and_gradient(X, Y, P, act), runs[act]), act
    with monkeypatch.context() as mp:
        mp.setattr(_kernels, "_worker", lambda: _NeverStarted())
        for act in ACTIVATIONS:
            assert _equal_results(loss_and_gradient(X, Y, P, act), runs[act]), act
    assert _NeverStarted.submitted == len(ACTIVATIONS)  # chunk 1 of each call, computed here instead


def test_gradient_with_one_numba_thread_in_a_fresh_interpreter(tmp_path):
    """NUMBA_NUM_THREADS=1 set before Numba is imported gives the same bits as this process."""
    import os
    import subprocess
    import sys

    X, Y, P = _two_chunk_problem(32)
    np.savez(tmp_path / "in.npz", X=X, Y=Y, **P)
    code = (
        "import numpy as np, sys; from theory.implicit import loss_and_gradient; "
        f"z = np.load(r'{tmp_path / 'in.npz'}'); "
        "l, g = loss_and_gradient(z['X'], z['Y'], {k: z[k] for k in 'AVWB'}, 'tanh'); "
        f"np.savez(r'{tmp_path / 'out.npz'}', loss=l, A=g.A, V=g.V, W=g.W, B=g.B)"
    )
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    out = np.load(tmp_path / "out.npz")
    loss, g = loss_and_gradient(X, Y, P, "tanh")
    assert float(out["loss"]) == loss
    for name in "AVWB":
        assert np.array_equal(out[name], getattr(g, name)), name


def test_results_do_not_share_memory_between_calls():
    """The work space is reused between calls of the same shapes; no returned array lives in it."""
    X, Y, P = _two_chunk_problem(31)
    loss, g = loss_and_gradient(X, Y, P, "gelu")
    kept = (loss, {name: getattr(g, name).copy() for name in "AVWB"})
    h, F = forward(X, P, "gelu")
    h_kept, F_kept = h.copy(), F.copy()
    for act in ACTIVATIONS:  # same shapes, other values
        loss_and_gradient(2.0 * X, Y - 1.0, P, act)
        forward(X - 1.0, P, act)
    assert loss == kept[0] and all(np.array_equal(getattr(g, k), kept[1][k]) for k in "AVWB")
    assert np.array_equal(h, h_kept) and np.array_equal(F, F_kept)


@pytest.mark.parametrize("act, scale, where", [("identity", 1e305, "hidden states"), ("tanh", 1e200, "overflowed")])
def test_overflow_with_two_chunks_is_reported(act, scale, where):
    """Overflow in the states (seen at h_L) or in the output, with the batch split into two threads' chunks."""
    X, Y, P = _two_chunk_problem(33)
    P = dict(P, V=scale * np.ones_like(P["V"])) if where == "hidden states" else dict(P, B=scale * np.ones_like(P["B"]))
    with pytest.raises(NonFiniteError, match=where):
        loss_and_gradient(X, Y, P, act)
    with pytest.raises(NonFiniteError, match=where):
        train(X, Y, P, act, lr=1e-3, steps=2)


def test_training_matches_a_numpy_gd_loop():
    """train (the fused kernel at every step) follows GD of Eq. (4) written with the NumPy anchor."""
    X, Y, P = _two_chunk_problem(30)
    p, losses = train(X, Y, P, "tanh", lr=0.02, steps=15)
    Q = {k: np.array(v, dtype=float) for k, v in P.items()}
    L = Q["V"].shape[0]
    for j in range(16):
        loss, g = np_batch_loss_and_gradient(X, Y, Q, "tanh")
        assert losses[j] == pytest.approx(loss, rel=1e-12)
        if j < 15:
            for name, factor in (("A", 1.0), ("V", L), ("W", L), ("B", 1.0)):
                Q[name] = Q[name] - 0.02 * factor * g[name]
    for name in "AVWB":
        np.testing.assert_allclose(getattr(p, name), Q[name], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------- smooth initialisation (Section 4.3)


def se_kernel(s, ell):
    return np.exp(-((s[:, None] - s[None, :]) ** 2) / (2 * ell**2))


class _UnitCoefficients(np.random.Generator):
    """A Generator whose standard_normal returns the identity: initialize(kind="smooth") then returns the
    basis functions phi_j(k/L) themselves in the first columns of V (V = Phi @ Z with Z = I)."""

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return np.eye(*size)


@pytest.mark.parametrize("ell", [0.5, 0.1, 0.03])
@pytest.mark.parametrize("L", [7, 64, 300])
def test_smooth_basis_reproduces_the_kernel_exactly(ell, L):
    """Phi Phi^T = K(k/L, k'/L) to rounding (the Gram matrix itself is numerically singular here)."""
    q, m = 20, 250  # q m >= the number of series terms J (J ~ 1/(4 ell^2) + 12/(2 ell) + ...)
    p = initialize(2, m, L, _UnitCoefficients(np.random.PCG64(0)), q=q, kind="smooth", lengthscale=ell)
    phi = p.V.reshape(L, q * m)
    s = np.arange(1, L + 1) / L
    np.testing.assert_allclose(phi @ phi.T, se_kernel(s, ell), rtol=0, atol=max(1e-14, 2e-15 / ell**2))
    assert np.all(phi[:, -1] == 0)  # J < q m: the unused columns are exactly 0


def test_smooth_sample_covariance_across_depth_matches_the_kernel():
    """Sample statistics over 2 x 10^4 independent entry paths: mean 0, covariance K(s, s') within 5 standard
    errors sqrt((1 + K^2)/N) of a Gaussian covariance estimate."""
    L, ell, q, m = 12, 0.15, 100, 100
    p = initialize(2, m, L, np.random.default_rng(21), q=q, kind="smooth", lengthscale=ell)
    paths = np.hstack([p.V.reshape(L, -1), p.W.reshape(L, -1)])  # (L, N) samples of (f(1/L), ..., f(1))
    N = paths.shape[1]
    K = se_kernel(np.arange(1, L + 1) / L, ell)
    assert np.max(np.abs(paths.mean(axis=1))) < 5 / np.sqrt(N)
    C = paths @ paths.T / N
    assert np.all(np.abs(C - K) < 5 * np.sqrt((1 + K**2) / N))
    assert K.min() < 0.01  # the grid spans decorrelated points too


@pytest.mark.parametrize("L, Lbig", [(4, 8), (5, 15), (16, 64), (3, 300)])
def test_smooth_init_one_path_for_every_depth(L, Lbig):
    """Same seed, same (d, m, q, d', lengthscale): layer k of depth L is the value at s = k/L of the same
    function as layer j of depth Lbig with j/Lbig = k/L (array index j - 1 = r (k) - 1, r = Lbig / L)."""
    a = initialize(3, 5, L, np.random.default_rng(4), q=6, kind="smooth", lengthscale=0.2)
    b = initialize(3, 5, Lbig, np.random.default_rng(4), q=6, kind="smooth", lengthscale=0.2)
    r = Lbig // L
    np.testing.assert_allclose(a.V, b.V[r - 1::r], rtol=0, atol=1e-13)
    np.testing.assert_allclose(a.W, b.W[r - 1::r], rtol=0, atol=1e-13)
    np.testing.assert_array_equal(a.A, b.A)
    np.testing.assert_array_equal(a.B, b.B)
    c = initialize(3, 5, L, np.random.default_rng(5), q=6, kind="smooth", lengthscale=0.2)
    assert not np.allclose(a.W, c.W)  # another seed, another path


def test_smooth_init_is_lipschitz_in_depth():
    """Successive layers differ by O(1/(L ell)) (a smooth path), against sqrt(2) for i.i.d. layers."""
    ell = 0.2
    rel = []
    for L in (16, 64, 256):
        p = initialize(4, 30, L, np.random.default_rng(6), q=30, kind="smooth", lengthscale=ell)
        dw = np.linalg.norm(np.diff(p.W, axis=0), axis=(1, 2)) / np.sqrt(30 * 30)
        rel.append(dw.max() * L)
    # RMS derivative of the SE process is 1/ell: L max_k |W_{k+1} - W_k| / sqrt(qm) ~ 1/ell, flat in L
    assert max(rel) / min(rel) < 1.5 and 0.3 / ell < np.median(rel) < 3 / ell


def test_smooth_init_forward_is_finite_and_depth_consistent():
    """The smooth network discretises one neural ODE: outputs at L and 4L agree to O(1/L) (Prop. 2)."""
    X, _ = synthetic_data(5, 3, np.random.default_rng(8))
    outs = []
    for L in (32, 128, 512):
        p = initialize(3, 8, L, np.random.default_rng(9), kind="smooth", lengthscale=0.3)
        outs.append(forward(X, p, "tanh")[1])
    e1, e2 = np.abs(outs[0] - outs[2]).max(), np.abs(outs[1] - outs[2]).max()
    assert np.isfinite(outs[2]).all() and 0 < e2 < e1 / 2.5  # ~ /4 per factor 4 (reference bias included)


def test_train_stats_and_inactive_clip_equals_gd():
    """``return_stats``: the largest update coordinate and the count of clipped steps; a clip above every
    coordinate leaves the run of Eq. (5) identical to the run of Eq. (4), a lower one changes it."""
    rng = np.random.default_rng(11)
    X, Y = synthetic_data(6, 3, rng)
    p0 = initialize(3, 4, 8, rng)
    gd, lg, sg = train(X, Y, p0, "tanh", lr=0.05, steps=20, return_stats=True)
    assert sg.clipped_steps == 0 and sg.steps == 20 and sg.max_update > 0
    hi, lh, sh = train(X, Y, p0, "tanh", lr=0.05, steps=20, method="clipped", clip=2 * sg.max_update,
                       return_stats=True)
    assert sh.clipped_steps == 0 and sh.max_update == sg.max_update
    for a, b in zip((gd.A, gd.V, gd.W, gd.B), (hi.A, hi.V, hi.W, hi.B)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(lg, lh)
    lo, _, sl = train(X, Y, p0, "tanh", lr=0.05, steps=20, method="clipped", clip=0.5 * sg.max_update,
                      return_stats=True)
    assert 0 < sl.clipped_steps <= 20
    assert np.max(np.abs(lo.V - gd.V)) > 0
    two = train(X, Y, p0, "tanh", lr=0.05, steps=2)
    assert len(two) == 2  # default: (params, losses)
    with pytest.raises(TypeError, match="return_stats"):
        train(X, Y, p0, "tanh", lr=0.05, steps=2, return_stats=1)
