r"""Numba kernels of the residual network of ``implicit-reg`` Eq. (1)/(3) and its backpropagation.

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults, no
allocation: every buffer comes from :mod:`theory.implicit._api`, the validated interface.

Model (paper key ``implicit-reg``, Eq. (3)), for one sample x of dimension d:

.. math::
    h_0 = A x, \qquad
    h_{k+1} = h_k + \frac{1}{L\sqrt m} V_{k+1}\,\sigma\Big(\frac{1}{\sqrt q} W_{k+1} h_k\Big),
    \quad k = 0, \dots, L-1, \qquad F(x) = B h_L.

Layout. The n samples are split into C chunks of n0 consecutive samples (C = 1 or 2, fixed by the
caller from the problem size alone, never from the number of threads; when C does not divide n,
the last chunk ends with zero rows of X and Y, whose states stay exactly zero since sigma(0) = 0
for every activation here). Array index k of V and W stores the paper's layer k + 1. Shapes:

* ``Xc`` (C, n0, d), ``Yc`` (C, n0, d'): inputs and targets; ``A`` (q, d), ``V`` (L, q, m),
  ``W`` (L, m, q), ``B`` (d', q);
* ``h`` (L + 1, C, n0, q): the hidden states h_0 .. h_L; ``h[k]`` reshaped to (C n0, q) is the
  whole batch in sample order;
* ``pre``, ``act`` (L, C, n0, m): u_k = W_{k+1} h_k / sqrt(q) and sigma(u_k), stored by the
  forward pass so that the backward pass never evaluates sigma again;
* ``p`` (L + 1, C, n0, q): the backward states p_0 .. p_L; ``r`` (L, C, n0, m):
  r_k = (V_{k+1}^T p_{k+1}) * sigma'(u_k); ``res`` (C, n0, d'): the residuals F(x_i) - y_i;
  ``tmp`` (C, n0, q): one work block per chunk.

The matrix products are BLAS calls (``np.dot``) on whole chunks (the recursions over the layers)
or on the whole batch (each layer's parameter gradient), the elementwise work is fused loops.

Threads. :func:`loss_grad` runs the recursions of chunk 1 in a worker thread while the calling
thread runs chunk 0, then splits the layers' gradients the same way (the kernels release the GIL).
Which thread computes a block never changes its arithmetic, so the results do not depend on the
threads: repeated calls are bitwise equal, and so are runs with ``NUMBA_NUM_THREADS=1`` (which
keeps everything in the calling thread). If the worker has not started its block by the time the
calling thread is done with its own (a busy machine), the calling thread cancels it and computes
it itself: a loaded machine costs at most the one-thread time, never a wait for a descheduled
thread.

Activation codes: 0 tanh, 1 gelu (exact, x Phi(x)), 2 sin, 3 relu (derivative 1[u > 0]), 4 identity.
"""

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import config, njit

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
def _activate(code, U, scale, S):
    """U *= scale, then S = sigma(U), in one fused pass over (n0, m) blocks (tanh's loop is vectorised)."""
    rows, m = U.shape
    if code == TANH:
        for i in range(rows):
            for j in range(m):
                u = U[i, j] * scale
                U[i, j] = u
                S[i, j] = tanh(u)
    else:
        for i in range(rows):
            for j in range(m):
                u = U[i, j] * scale
                U[i, j] = u
                S[i, j] = _sigma(code, u)


@njit(**_JIT)
def _axpy_rows(x, alpha, t, out):
    """out = x + alpha t for (n0, k) blocks."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] + alpha * t[i, j]


@njit(**_JIT)
def _forward_chunk(code, c, X, A, V, W, h, pre, act, tmp):
    r"""Eq. (3) for chunk c: h[:, c], pre[:, c], act[:, c] (zero padding rows stay zero: sigma(0) = 0).

    H_0 = X A^T; per layer U = H_k W_{k+1}^T / sqrt(q), S = sigma(U),
    H_{k+1} = H_k + S V_{k+1}^T / (L sqrt m): two BLAS products and one fused pass, O(n0 q m).
    """
    L, q, m = V.shape
    inv_sq = 1.0 / math.sqrt(q)
    step = 1.0 / (L * math.sqrt(m))
    np.dot(X, A.T, h[0, c])
    for k in range(L):
        np.dot(h[k, c], W[k].T, pre[k, c])
        _activate(code, pre[k, c], inv_sq, act[k, c])
        np.dot(act[k, c], V[k].T, tmp)
        _axpy_rows(h[k, c], step, tmp, h[k + 1, c])


@njit(**_JIT)
def _backward_chunk(code, c, n, Y, B, V, W, h, pre, act, p, r, res, tmp):
    r"""Residual and the corrected Eq. (13) for chunk c.

    res = H_L B^T - Y, p_L = (2/n) res B (the 1/n of the loss included); for k = L-1 .. 0:
    R = (P_{k+1} V_{k+1}) * sigma'(U_k) (tanh: sigma' = 1 - S^2 from the stored S),
    P_k = P_{k+1} + R W_{k+1} / (L sqrt(m q)); three BLAS products and two fused passes per layer.
    """
    L, q, m = V.shape
    dout = B.shape[0]
    c_w = 1.0 / (L * math.sqrt(m * q))
    n0 = res.shape[0]
    np.dot(h[L, c], B.T, res)
    for i in range(n0):
        for t in range(dout):
            res[i, t] -= Y[i, t]
    np.dot(res, B, tmp)
    pL = p[L, c]
    for i in range(n0):
        for t in range(q):
            pL[i, t] = (2.0 / n) * tmp[i, t]
    for k in range(L - 1, -1, -1):
        R = r[k, c]
        np.dot(p[k + 1, c], V[k], R)
        if code == TANH:
            S = act[k, c]
            for i in range(n0):
                for j in range(m):
                    s = S[i, j]
                    R[i, j] *= 1.0 - s * s
        else:
            U = pre[k, c]
            for i in range(n0):
                for j in range(m):
                    R[i, j] *= _dsigma(code, U[i, j])
        np.dot(R, W[k], tmp)
        _axpy_rows(p[k + 1, c], c_w, tmp, p[k, c])


@njit(**_JIT, nogil=True)
def _forward(code, Xc, A, V, W, h, pre, act, tmp):
    """The forward pass of every chunk, in the calling thread (shapes in the module docstring)."""
    for c in range(Xc.shape[0]):
        _forward_chunk(code, c, Xc[c], A, V, W, h, pre, act, tmp[c])


@njit(**_JIT, nogil=True)
def _chunk_pass(code, c, n, Xc, Yc, A, B, V, W, h, pre, act, p, r, res, tmp):
    """Forward pass, residual and backward recursion of chunk c (releases the GIL)."""
    _forward_chunk(code, c, Xc[c], A, V, W, h, pre, act, tmp[c])
    _backward_chunk(code, c, n, Yc[c], B, V, W, h, pre, act, p, r, res[c], tmp[c])


@njit(**_JIT, nogil=True)
def _layer_gradients(k0, k1, p, act, r, h, gV, gW):
    r"""Parameter gradients of the layers k0 .. k1-1 over the whole batch (releases the GIL).

    .. math::
        \frac{\partial\ell}{\partial V_{k+1}} = \frac{1}{L\sqrt m}\sum_i p_{k+1,i}\,\sigma(u_{k,i})^\top,
        \qquad
        \frac{\partial\ell}{\partial W_{k+1}} = \frac{1}{L\sqrt{mq}}\sum_i r_{k,i}\,h_{k,i}^\top,

    i.e. dl/dZ_{k+1} uses h_k with p_{k+1} (as 004's Eq. (15); the theses' (3.15) print p_{k-1}):
    two BLAS products of the (q or m) x n by n x (m or q) blocks per layer, then the scalings.
    """
    L, q, m = gV.shape
    N = h.shape[1] * h.shape[2]
    c_v = 1.0 / (L * math.sqrt(m))
    c_w = 1.0 / (L * math.sqrt(m * q))
    for k in range(k0, k1):
        gVk = gV[k]
        gWk = gW[k]
        np.dot(p[k + 1].reshape(N, q).T, act[k].reshape(N, m), gVk)
        np.dot(r[k].reshape(N, m).T, h[k].reshape(N, q), gWk)
        for t in range(q):
            for j in range(m):
                gVk[t, j] *= c_v
        for j in range(m):
            for t in range(q):
                gWk[j, t] *= c_w


_POOL = None
_POOL_LOCK = threading.Lock()


def _worker():
    """The one worker thread (created on first use; None where Numba is limited to one thread)."""
    global _POOL
    if config.NUMBA_NUM_THREADS < 2:
        return None
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="theory-implicit")
    return _POOL


def _both(fn, args_here, args_there):
    """fn(*args_here) in this thread and fn(*args_there) in the worker, or here if it has not started."""
    pool = _worker()
    if pool is None:
        fn(*args_here)
        fn(*args_there)
        return
    job = pool.submit(fn, *args_there)
    fn(*args_here)
    if job.cancel():  # the worker never started it (a busy machine): no waiting for it
        fn(*args_there)
    else:
        job.result()


def loss_grad(code, n, Xc, Yc, A, B, V, W, h, pre, act, p, r, res, tmp, gV, gW):
    r"""Forward pass, backpropagation (corrected Eqs. (13), (15)) and the parameter gradients, in place.

    On exit ``res`` holds the residuals, ``p[0]`` the states p_0 (for dl/dA, Eq. (14)), ``gV`` and
    ``gW`` the gradients of :func:`_layer_gradients`. With two chunks the chunks, then the two
    halves of the layers, run in two threads (see the module docstring); the arithmetic is the same.
    """
    L = V.shape[0]
    if Xc.shape[0] == 1:
        _chunk_pass(code, 0, n, Xc, Yc, A, B, V, W, h, pre, act, p, r, res, tmp)
        _layer_gradients(0, L, p, act, r, h, gV, gW)
        return
    rest = (n, Xc, Yc, A, B, V, W, h, pre, act, p, r, res, tmp)
    _both(_chunk_pass, (code, 0) + rest, (code, 1) + rest)
    half = L // 2
    _both(_layer_gradients, (0, half, p, act, r, h, gV, gW), (half, L, p, act, r, h, gV, gW))
