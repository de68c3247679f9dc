"""Numba kernels of Momentum ResNets (Sander's thesis, chapter 4, Eqs. (4.2) and (4.3)).

Private: float64 C-contiguous arrays and plain numbers only, no validation. The residual families
are those of :mod:`theory.resnet` (same codes and parameter layouts), evaluated without the 1/N
step of that package: here a layer applies f(x, theta_n) itself, as in Eq. (4.2).

Shapes: ``x``, ``v`` are batches ``(B, d)``; trajectories are ``(N + 1, B, d)``; ``theta`` is
``(N, P)``; ``work`` is scratch of shape ``(3 + d + B, max(m, d))`` and ``fbuf`` is ``(B, d)``.
"""

from numba import njit

from ..resnet._kernels import _residual

_JIT = {"cache": True, "error_model": "numpy"}


@njit(**_JIT)
def momentum_forward(code, m, x0, v0, theta, gamma, xs, vs, fbuf, work):
    """Eq. (4.2): v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}."""
    N = theta.shape[0]
    B, d = x0.shape
    xs[0] = x0
    vs[0] = v0
    c = 1.0 - gamma
    for n in range(N):
        _residual(code, m, xs[n], theta[n], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                v = gamma * vs[n, b, i] + c * fbuf[b, i]
                vs[n + 1, b, i] = v
                xs[n + 1, b, i] = xs[n, b, i] + v


@njit(**_JIT)
def momentum_inverse(code, m, xN, vN, theta, gamma, xs, vs, fbuf, work):
    """Eq. (4.3): x_n = x_{n+1} - v_{n+1}, then v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma."""
    N = theta.shape[0]
    B, d = xN.shape
    xs[N] = xN
    vs[N] = vN
    c = 1.0 - gamma
    for n in range(N - 1, -1, -1):
        for b in range(B):
            for i in range(d):
                xs[n, b, i] = xs[n + 1, b, i] - vs[n + 1, b, i]
        _residual(code, m, xs[n], theta[n], fbuf, work, True)
        for b in range(B):
            for i in range(d):
                vs[n, b, i] = (vs[n + 1, b, i] - c * fbuf[b, i]) / gamma


@njit(**_JIT)
def _residual_eval(code, m, x, th, out, work):
    """out[b] = f(x[b], th) for every row of the batch."""
    _residual(code, m, x, th, out, work, True)
