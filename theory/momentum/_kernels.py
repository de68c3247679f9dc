"""Numba kernels of Momentum ResNets (Sander's thesis, chapter 4, Eqs. (4.2) and (4.3)).

Private: float64 C-contiguous arrays and plain numbers only, no validation. The residual families
are those of :mod:`theory.resnet` (same codes and parameter layouts), evaluated without the 1/N
step of that package: here a layer applies f(x, theta_n) itself, as in Eq. (4.2).

Shapes: ``x``, ``v`` are batches ``(B, d)``; trajectories are ``(N + 1, B, d)``; ``theta`` is
``(N, P)``; ``work`` is scratch of shape ``(3 + d + B, max(m, d))`` and ``fbuf`` is ``(B, d)``.
"""

import math

from numba import njit

from ..resnet._kernels import _residual, _residual_vjp

_JIT = {"cache": True, "error_model": "numpy"}


@njit(**_JIT)
def _finite(th_n):
    """True iff every entry of one parameter slice is finite."""
    for k in range(th_n.shape[0]):
        if not math.isfinite(th_n[k]):
            return False
    return True


@njit(**_JIT)
def momentum_forward(code, m, x0, v0, theta, gamma, xs, vs, fbuf, work, check):
    """Eq. (4.2): v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}.

    The depth is xs.shape[0] - 1; a theta of one slice is shared by every layer (tied weights). With
    ``check``, each slice is tested for non-finite entries just before its use (while it is in cache, so that
    the validation costs no separate pass over theta); returns the first layer with a non-finite slice, or -1.
    """
    N = xs.shape[0] - 1
    T = theta.shape[0]
    B, d = x0.shape
    xs[0] = x0
    vs[0] = v0
    c = 1.0 - gamma
    for n in range(N):
        k = n if T > 1 else 0
        if check and (T > 1 or n == 0) and not _finite(theta[k]):
            return n
        _residual(code, m, xs[n], theta[k], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                v = gamma * vs[n, b, i] + c * fbuf[b, i]
                vs[n + 1, b, i] = v
                xs[n + 1, b, i] = xs[n, b, i] + v
    return -1


@njit(**_JIT)
def momentum_inverse(code, m, xN, vN, theta, gamma, xs, vs, fbuf, work, check):
    """Eq. (4.3): x_n = x_{n+1} - v_{n+1}, then v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma.

    Depth, tied weights and ``check`` as in :func:`momentum_forward`."""
    N = xs.shape[0] - 1
    T = theta.shape[0]
    B, d = xN.shape
    xs[N] = xN
    vs[N] = vN
    c = 1.0 - gamma
    for n in range(N - 1, -1, -1):
        k = n if T > 1 else 0
        if check and (T > 1 or n == N - 1) and not _finite(theta[k]):
            return n
        for b in range(B):
            for i in range(d):
                xs[n, b, i] = xs[n + 1, b, i] - vs[n + 1, b, i]
        _residual(code, m, xs[n], theta[k], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                vs[n, b, i] = (vs[n + 1, b, i] - c * fbuf[b, i]) / gamma
    return -1


@njit(**_JIT)
def _residual_eval(code, m, x, th, out, work):
    """out[b] = f(x[b], th) for every row of the batch."""
    _residual(code, m, x, th, out, work, True)


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
    _residual_vjp(code, m, x, th, tmp, gth, jx, work, False)
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
        _residual(code, m, x, theta[n], fbuf, work, True)
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
        _residual(code, m, x, theta[n], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                v[b, i] = gamma * v[b, i] + c * fbuf[b, i]
                x[b, i] += v[b, i]
