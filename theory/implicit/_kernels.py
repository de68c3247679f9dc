r"""Numba kernels of the residual network of ``implicit-reg`` Eq. (1)/(3) and its backpropagation.

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults, no
allocation of anything but (n, m) and (n, q) work blocks, whose size does not grow with L. The validated interface is
:mod:`theory.implicit._api`.

Model (paper key ``implicit-reg``, Eq. (3)), for one sample x of dimension d:

.. math::
    h_0 = A x, \qquad
    h_{k+1} = h_k + \frac{1}{L\sqrt m} V_{k+1}\,\sigma\Big(\frac{1}{\sqrt q} W_{k+1} h_k\Big),
    \quad k = 0, \dots, L-1, \qquad F(x) = B h_L.

Shapes (array index k stores the paper's layer k + 1):

* ``X`` (n, d), ``A`` (q, d), ``V`` (L, q, m), ``W`` (L, m, q), ``B`` (d', q);
* ``h`` (L + 1, n, q): the hidden states h_0 .. h_L of every sample;
* ``pre`` (L, n, m): the pre-activations u_{k} = W_{k+1} h_k / sqrt(q) (kept for the backward pass);
* ``p`` (n, q): backward states, see :func:`_backward`.

Activation codes: 0 tanh, 1 gelu (exact, x Phi(x)), 2 sin, 3 relu (derivative 1[u > 0]), 4 identity.
"""

import math

import numpy as np
from numba import njit

from .._tanh import tanh

TANH, GELU, SIN, RELU, IDENTITY = 0, 1, 2, 3, 4

# Same flags as theory.resnet._kernels (see the comment there): IEEE NaN/inf semantics are kept.
_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}

_INV_SQRT2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


@njit(**_JIT, inline="always")
def _sigma(code, u):
    """sigma(u) for the activation ``code``."""
    if code == TANH:
        return tanh(u)
    if code == GELU:
        return 0.5 * u * (1.0 + math.erf(u * _INV_SQRT2))
    if code == SIN:
        return math.sin(u)
    if code == RELU:
        return u if u > 0.0 else 0.0 * u  # 0 * u propagates NaN
    return u


@njit(**_JIT, inline="always")
def _dsigma(code, u):
    """sigma'(u) for the activation ``code`` (ReLU: 1[u > 0], so sigma'(0) = 0)."""
    if code == TANH:
        t = tanh(u)
        return 1.0 - t * t
    if code == GELU:
        return 0.5 * (1.0 + math.erf(u * _INV_SQRT2)) + u * _INV_SQRT_2PI * math.exp(-0.5 * u * u)
    if code == SIN:
        return math.cos(u)
    if code == RELU:
        return 1.0 if u > 0.0 else (0.0 if u <= 0.0 else u)  # NaN stays NaN
    return 1.0 + 0.0 * u


@njit(**_JIT)
def _activate(code, U, out, derivative):
    """out = sigma(U) (or sigma'(U) with ``derivative``), elementwise over a C-contiguous (n, m) block."""
    u = U.reshape(U.size)
    o = out.reshape(out.size)
    if derivative:
        for i in range(u.size):
            o[i] = _dsigma(code, u[i])
    else:
        for i in range(u.size):
            o[i] = _sigma(code, u[i])


@njit(**_JIT)
def _forward(code, X, A, V, W, h, pre):
    """Fill h (L+1, n, q) and pre (L, n, m) with Eq. (3): h_0 = A x, h_{k+1} = h_k + V sigma(W h_k / sqrt q) / (L sqrt m).

    One layer is two matrix products over the whole batch (BLAS): U = H_k W_{k+1}^T / sqrt(q) and
    H_{k+1} = H_k + sigma(U) V_{k+1}^T / (L sqrt m), with H_k the (n, q) block of hidden states.
    O(L n q m) operations; X (n, d), A (q, d), V (L, q, m), W (L, m, q).
    """
    L, q, m = V.shape
    n, d = X.shape
    inv_sq = 1.0 / math.sqrt(q)
    step = 1.0 / (L * math.sqrt(m))
    act = np.empty((n, m))
    tmp = np.empty((n, q))
    np.dot(X, A.T, h[0])
    for k in range(L):
        np.dot(h[k], W[k].T, pre[k])
        uk = pre[k]
        for i in range(n):
            for j in range(m):
                uk[i, j] *= inv_sq
        _activate(code, uk, act, False)
        np.dot(act, V[k].T, tmp)
        for i in range(n):
            for r in range(q):
                h[k + 1, i, r] = h[k, i, r] + step * tmp[i, r]


@njit(**_JIT)
def _backward(code, h, pre, V, W, p, gV, gW):
    r"""Backpropagation of the corrected Eqs. (13) and (15), in place.

    On entry ``p`` (n, q) holds p_L = dl/dh_L for every sample (the 1/n of the loss included);
    on exit it holds p_0. ``gV`` (L, q, m) and ``gW`` (L, m, q) receive dl/dV_{k+1}, dl/dW_{k+1}:

    .. math::
        g = V_{k+1}^\top p_{k+1}, \quad r = g \odot \sigma'(u_k), \quad
        \frac{\partial\ell}{\partial V_{k+1}} \mathrel{+}= \frac{p_{k+1}\sigma(u_k)^\top}{L\sqrt m}, \quad
        \frac{\partial\ell}{\partial W_{k+1}} \mathrel{+}= \frac{r\,h_k^\top}{L\sqrt{mq}}, \quad
        p_k = p_{k+1} + \frac{W_{k+1}^\top r}{L\sqrt{mq}},

    i.e. p_k = p_{k+1} + (1/L) (d_1 f)^T p_{k+1} (the printed (13) omits the transpose) and
    dl/dZ_{k+1} uses h_k with p_{k+1} (as 004's (15); the theses' (3.15) print p_{k-1}). Each
    layer is four matrix products over the batch (BLAS), summed over the samples i:
    G = P V, R = G * sigma'(U), dV = c_v P^T sigma(U), dW = c_w R^T H_k, P <- P + c_w R W.
    """
    L, q, m = V.shape
    n = p.shape[0]
    c_v = 1.0 / (L * math.sqrt(m))
    c_w = 1.0 / (L * math.sqrt(m * q))
    G = np.empty((n, m))
    act = np.empty((n, m))
    der = np.empty((n, m))
    tmp = np.empty((n, q))
    for k in range(L - 1, -1, -1):
        np.dot(p, V[k], G)
        _activate(code, pre[k], act, False)
        _activate(code, pre[k], der, True)
        for i in range(n):
            for j in range(m):
                G[i, j] *= der[i, j]
        np.dot(p.T, act, gV[k])
        np.dot(G.T, h[k], gW[k])
        gVk = gV[k]
        gWk = gW[k]
        for r in range(q):
            for j in range(m):
                gVk[r, j] *= c_v
        for j in range(m):
            for r in range(q):
                gWk[j, r] *= c_w
        np.dot(G, W[k], tmp)
        for i in range(n):
            for r in range(q):
                p[i, r] += c_w * tmp[i, r]
