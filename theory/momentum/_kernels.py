"""Numba kernels of Momentum ResNets (Sander's thesis, chapter 4, Eqs. (4.2) and (4.3)).

Private: float64 C-contiguous arrays and plain numbers only, no validation. The residual families
are those of :mod:`theory.resnet` (same codes and parameter layouts), evaluated by the shared kernels of
:mod:`theory._residual_kernels` without the 1/N step of that package: here a layer applies
f(x, theta_n) itself, as in Eq. (4.2).

Shapes: ``x``, ``v`` are batches ``(B, d)``; trajectories are ``(N + 1, B, d)``; ``theta`` is
``(N, P)``; ``work`` is scratch of shape :func:`theory._residual_kernels.scratch_shape` ``(d, B, m)``
and ``fbuf`` is ``(B, d)``.
"""

import numpy as np
from numba import njit

from .._residual_kernels import (LINEAR, ROW_REASSOC_MIN_D, TANH, matvec_reassoc, product_check, residual,
                                 residual_vjp)
from .._tanh import tanh

_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}


# A single input of width d >= ROW_REASSOC_MIN_D streams theta with the shared row products, each sum
# in an order the compiler chooses ("reassoc": partial sums in vector lanes); results differ from in-order sums
# by rounding only.
_JIT_REASSOC = {"cache": True, "error_model": "numpy", "fastmath": {"contract", "reassoc"}}


@njit(**_JIT_REASSOC)
def _matvec_descending(theta, k, xs, src, o, d):
    """o[0, i] = sum_j theta[k, i d + j] xs[src, 0, j], reading the slice from its last entry to its first.

    The inverse (4.3) visits the layers from the last: a slice read forwards after the one above it in memory
    breaks the hardware's stream prefetch (measured: 1.7 times the time of a forward pass), while a slice read
    backwards continues one descending stream, as fast as the forward pass. (Its own loop: an index chosen by
    a flag, or a branch, inside the loop keeps it from vectorising.)"""
    for ii in range(d):
        i = d - 1 - ii
        r = i * d
        acc = 0.0
        for jj in range(d):
            j = d - 1 - jj
            acc += theta[k, r + j] * xs[src, 0, j]
        o[0, i] = acc


@njit(**_JIT, inline="always")
def _layer(code, m, xs, src, theta, k, fbuf, work, descending):
    """fbuf = f(xs[src], theta[k]); returns the number of non-finite entries of theta[k].

    The products theta_k x are computed first (a single input of the linear or tanh family with
    d >= ROW_REASSOC_MIN_D by the streaming row products, forwards or, for the inverse, backwards; every other
    case by the shared residual loop without its outer tanh), theta's finiteness is read from them as in
    theory.resnet (:func:`theory._residual_kernels.product_check`: the slice is counted only when a product
    is not finite), then the tanh family's activation is applied."""
    B, d = fbuf.shape
    if B == 1 and (code == LINEAR or code == TANH) and d >= ROW_REASSOC_MIN_D:
        if descending:
            _matvec_descending(theta, k, xs, src, fbuf, d)
        else:
            P = np.uint64(theta.shape[1])
            matvec_reassoc(theta.reshape(-1), np.uint64(k) * P, xs.reshape(-1), np.uint64(src * d), fbuf[0], d)
    else:
        residual(code, m, xs[src], theta[k], fbuf, work, False)
    bad = product_check(code, theta, k, fbuf)
    if code == TANH:
        for b in range(B):
            for i in range(d):
                fbuf[b, i] = tanh(fbuf[b, i])
    return bad


@njit(**_JIT)
def momentum_forward(code, m, x0, v0, theta, gamma, xs, vs, fbuf, work, check, nonfinite):
    """Eq. (4.2): v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}.

    The depth is xs.shape[0] - 1; a theta of one slice is shared by every layer (tied weights). With
    ``check``, each slice is tested for non-finite entries just before its use (while it is in cache, so that
    the validation costs no separate pass over theta); returns the first layer with a non-finite slice, or -1.
    ``nonfinite[0]`` receives the number of non-finite entries written into xs[1:] and vs[1:] (counted as they
    are written, so that the caller need not read the trajectories again to detect an overflow).
    """
    N = xs.shape[0] - 1
    T = theta.shape[0]
    B, d = x0.shape
    xs[0] = x0
    vs[0] = v0
    c = 1.0 - gamma
    count = 0
    for n in range(N):
        k = n if T > 1 else 0
        bad = _layer(code, m, xs, n, theta, k, fbuf, work, False)
        if check and (T > 1 or n == 0) and bad > 0:
            return n
        for b in range(B):
            for i in range(d):
                v = gamma * vs[n, b, i] + c * fbuf[b, i]
                x = xs[n, b, i] + v
                vs[n + 1, b, i] = v
                xs[n + 1, b, i] = x
                count += ((v - v) != 0.0) + ((x - x) != 0.0)
    nonfinite[0] = count
    return -1


@njit(**_JIT)
def momentum_inverse(code, m, xN, vN, theta, gamma, xs, vs, fbuf, work, check, nonfinite):
    """Eq. (4.3): x_n = x_{n+1} - v_{n+1}, then v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma.

    Depth, tied weights, ``check`` and ``nonfinite`` (for xs[:N] and vs[:N]) as in :func:`momentum_forward`."""
    N = xs.shape[0] - 1
    T = theta.shape[0]
    B, d = xN.shape
    xs[N] = xN
    vs[N] = vN
    c = 1.0 - gamma
    count = 0
    for n in range(N - 1, -1, -1):
        k = n if T > 1 else 0
        for b in range(B):
            for i in range(d):
                x = xs[n + 1, b, i] - vs[n + 1, b, i]
                xs[n, b, i] = x
                count += (x - x) != 0.0
        bad = _layer(code, m, xs, n, theta, k, fbuf, work, True)
        if check and (T > 1 or n == N - 1) and bad > 0:
            return n
        for b in range(B):
            for i in range(d):
                v = (vs[n + 1, b, i] - c * fbuf[b, i]) / gamma
                vs[n, b, i] = v
                count += (v - v) != 0.0
    nonfinite[0] = count
    return -1


@njit(**_JIT)
def _residual_eval(code, m, x, th, out, work):
    """out[b] = f(x[b], th) for every row of the batch."""
    residual(code, m, x, th, out, work, True)


@njit(**_JIT)
def _step_vjp(code, m, x, th, gamma, gx, gv, gth, tmp, jx, work):
    """Backpropagate (gx, gv), the cotangents of (x_{n+1}, v_{n+1}), through one step of (4.2) from x = x_n.

    With t = gv + gx (v_{n+1} enters x_{n+1}): gx <- gx + (1 - gamma) J_x f(x_n)^T t, gv <- gamma t,
    gth += (1 - gamma) J_theta f(x_n)^T t.
    """
    B, d = x.shape
    c = 1.0 - gamma
    for b in range(B):
        for i in range(d):
            t = gv[b, i] + gx[b, i]
            gv[b, i] = gamma * t
            tmp[b, i] = c * t
    residual_vjp(code, m, x, th, tmp, gth, jx, work, False)
    for b in range(B):
        for i in range(d):
            gx[b, i] += jx[b, i]


@njit(**_JIT)
def momentum_backprop(code, m, xs, theta, gamma, gx, gv, gtheta, tmp, jx, work):
    """Backpropagation through a stored trajectory xs (N + 1, B, d); gx, gv end as dL/dx0, dL/dv0."""
    N = theta.shape[0]
    for n in range(N - 1, -1, -1):
        _step_vjp(code, m, xs[n], theta[n], gamma, gx, gv, gtheta[n], tmp, jx, work)


@njit(**_JIT)
def momentum_memory_free(code, m, x, v, theta, gamma, gx, gv, gtheta, tmp, jx, fbuf, work):
    """Memory-free backpropagation (App. 4.E of the thesis): rebuild (x_n, v_n) with (4.3), then backpropagate.

    ``x``, ``v`` start as (x_N, v_N) and end as the reconstructed (x_0, v_0); only (B, d) buffers are used.
    """
    N = theta.shape[0]
    B, d = x.shape
    c = 1.0 - gamma
    for n in range(N - 1, -1, -1):
        for b in range(B):
            for i in range(d):
                x[b, i] -= v[b, i]
        residual(code, m, x, theta[n], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                v[b, i] = (v[b, i] - c * fbuf[b, i]) / gamma
        _step_vjp(code, m, x, theta[n], gamma, gx, gv, gtheta[n], tmp, jx, work)


@njit(**_JIT)
def momentum_last(code, m, x, v, theta, gamma, fbuf, work):
    """(4.2) in place: (x, v) = (x_0, v_0) becomes (x_N, v_N); only (B, d) buffers."""
    N = theta.shape[0]
    B, d = x.shape
    c = 1.0 - gamma
    for n in range(N):
        residual(code, m, x, theta[n], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                v[b, i] = gamma * v[b, i] + c * fbuf[b, i]
                x[b, i] += v[b, i]
