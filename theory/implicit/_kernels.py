r"""Numba kernels of the residual network of ``implicit-reg`` Eq. (1)/(3) and its backpropagation.

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults, no
allocation: every buffer comes from :mod:`theory.implicit._api`, the validated interface (the
work space of :func:`workspace` is kept between calls of the same shapes).

Model (paper key ``implicit-reg``, Eq. (3)), for one sample x of dimension d:

.. math::
    h_0 = A x, \qquad
    h_{k+1} = h_k + \frac{1}{L\sqrt m} V_{k+1}\,\sigma\Big(\frac{1}{\sqrt q} W_{k+1} h_k\Big),
    \quad k = 0, \dots, L-1, \qquad F(x) = B h_L.

Layout. The n samples are split into C chunks of n0 consecutive samples (C = 1 or 2, fixed by the
caller from the problem size alone, never from the number of threads; when C does not divide n,
the last chunk ends with zero rows of X and Y, whose states and gradient terms stay exactly zero
since sigma(0) = 0 for every activation here). Array index k of V and W stores the paper's layer
k + 1. Shapes:

* ``Xc`` (C, n0, d), ``Yc`` (C, n0, d'): inputs and targets; ``A`` (q, d), ``V`` (L, q, m),
  ``W`` (L, m, q), ``B`` (d', q);
* ``h`` (C, L + 1, n0, q): the hidden states h_0 .. h_L of each chunk;
* ``act`` (C, L, n0, m): sigma(u_k), u_k = W_{k+1} h_k / sqrt(q), stored by the forward pass so
  that the backward pass never evaluates sigma again (for tanh sigma' = 1 - sigma^2; the other
  activations store sigma'(u_k) in ``der`` (C, L, n0, m) during the forward pass);
* ``res`` (C, n0, d'): the residuals F(x_i) - y_i; ``P`` (C, n0, q): the backward state, p_L on
  entry to the recursion and p_0 on exit; ``G`` (C, n0, m), ``tmp`` (C, n0, q): work blocks;
* ``gV``, ``gW``: the gradients (chunk 0's share, then the sum); ``gV1``, ``gW1``: chunk 1's share.

Each layer costs six BLAS products (NumPy's OpenBLAS called directly, :mod:`theory._blas`; Numba's np.dot
goes through SciPy's, 8 % slower end to end here) of the chunk's (n0, q) and (n0, m) blocks with the
layer's weights (two forward, two backward, two for the parameter gradients) and fused elementwise
loops; sigma is evaluated once per entry (131 072 times at L = 64, n = 32, m = 64), and nothing but
the states, sigma(u) and (not for tanh) sigma'(u) is stored. At that size, on the 2-core machine of
the README, one chunk of all 32 samples takes about 0.85 ms in one thread: about 0.26 ms for tanh
(2 ns an entry, vectorised, one division each), about 0.5 ms for the 384 products (about 1 us each,
BLAS calls on 32 x 16 x 64 shapes), the rest elementwise. Two chunks of 16 take 0.5-0.6 ms each.

Threads. :func:`loss_grad` runs chunk 1 (forward pass, backward pass and its share of the
parameter gradients) in a worker thread while the calling thread runs chunk 0, then adds the two
shares in a fixed order. Which thread computes a chunk never changes its arithmetic, so the
results do not depend on the threads: repeated calls are bitwise equal, and so are runs with
``NUMBA_NUM_THREADS=1`` (which keeps both chunks in the calling thread). If the worker has not
started chunk 1 by the time the calling thread is done with chunk 0 (a busy machine), the calling
thread cancels it and computes it itself: a loaded machine costs at most the one-thread time,
never a wait for a descheduled thread.

Activation codes: 0 tanh, 1 gelu (exact, x Phi(x)), 2 sin, 3 relu (derivative 1[u > 0]), 4 identity.
"""

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import config, njit

from .._blas import gemm_nn, gemm_nt, gemm_tn
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
def _activate(code, S, scale, D, derivative):
    """S = sigma(scale S) in place over an (n0, m) block, and D = sigma'(scale S) when ``derivative``.

    tanh needs no D (the backward pass uses 1 - S^2); its loop is vectorised.
    """
    rows, m = S.shape
    if code == TANH:
        for i in range(rows):
            for j in range(m):
                S[i, j] = tanh(S[i, j] * scale)
    elif derivative:
        for i in range(rows):
            for j in range(m):
                u = S[i, j] * scale
                S[i, j] = _sigma(code, u)
                D[i, j] = _dsigma(code, u)
    else:
        for i in range(rows):
            for j in range(m):
                S[i, j] = _sigma(code, S[i, j] * scale)


@njit(**_JIT)
def _axpy_rows(x, alpha, t, out):
    """out = x + alpha t for (n0, k) blocks."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] + alpha * t[i, j]


@njit(**_JIT)
def _forward_chunk(code, X, A, V, W, h, act, der, tmp, derivative):
    r"""Eq. (3) for one chunk: h (L+1, n0, q), act (L, n0, m) and, with ``derivative``, der.

    H_0 = X A^T; per layer S = sigma(H_k W_{k+1}^T / sqrt(q)) (into ``act``; with ``derivative``,
    for the activations other than tanh, sigma' of the same argument into ``der``) and
    H_{k+1} = H_k + S V_{k+1}^T / (L sqrt m). Two BLAS products and one fused pass per layer.
    """
    L, q, m = V.shape
    inv_sq = 1.0 / math.sqrt(q)
    step = 1.0 / (L * math.sqrt(m))
    gemm_nt(X, A, h[0])
    for k in range(L):
        S = act[k]
        gemm_nt(h[k], W[k], S)
        _activate(code, S, inv_sq, der[k], derivative)
        gemm_nt(S, V[k], tmp)
        _axpy_rows(h[k], step, tmp, h[k + 1])


@njit(**_JIT)
def _backward_chunk(code, n, Y, B, V, W, h, act, der, res, P, G, tmp, gV, gW):
    r"""Residual, the corrected Eq. (13) and this chunk's share of Eq. (15), for one chunk.

    res = H_L B^T - Y, P = p_L = (2/n) res B (the 1/n of the loss included); for k = L-1 .. 0,
    with P = p_{k+1}, c_v = 1/(L sqrt m), c_w = 1/(L sqrt(m q)):

    .. math::
        R = c_w (P V_{k+1}) \odot \sigma'(U_k), \quad
        gV_k = (c_v P)^\top \sigma(U_k), \quad gW_k = R^\top H_k, \quad
        P \leftarrow P + R\,W_{k+1},

    (tanh: sigma' = 1 - S^2 from the stored S; the others: the stored sigma'), the sums over the
    chunk's samples of the gradients' terms; on exit P = p_0. This is
    p_k = p_{k+1} + (1/L) (d_1 f)^T p_{k+1} (the printed (13) omits the transpose), and dl/dZ_{k+1}
    uses h_k with p_{k+1} (as 004's (15); the theses' (3.15) print p_{k-1}). Five BLAS products and
    three fused passes per layer.
    """
    L, q, m = V.shape
    dout = B.shape[0]
    c_v = 1.0 / (L * math.sqrt(m))
    c_w = 1.0 / (L * math.sqrt(m * q))
    n0 = res.shape[0]
    gemm_nt(h[L], B, res)
    for i in range(n0):
        for t in range(dout):
            res[i, t] -= Y[i, t]
    gemm_nn(res, B, tmp)
    for i in range(n0):
        for t in range(q):
            P[i, t] = (2.0 / n) * tmp[i, t]
    for k in range(L - 1, -1, -1):
        S = act[k]
        gemm_nn(P, V[k], G)
        for i in range(n0):
            for t in range(q):
                tmp[i, t] = c_v * P[i, t]
        gemm_tn(tmp, S, gV[k])
        if code == TANH:
            for i in range(n0):
                for j in range(m):
                    s = S[i, j]
                    G[i, j] *= c_w * (1.0 - s * s)
        else:
            D = der[k]
            for i in range(n0):
                for j in range(m):
                    G[i, j] *= c_w * D[i, j]
        gemm_tn(G, h[k], gW[k])
        gemm_nn(G, W[k], tmp)
        _axpy_rows(P, 1.0, tmp, P)


@njit(**_JIT, nogil=True)
def _forward(code, X, A, V, W, h, act, tmp):
    """The forward pass of one chunk holding every sample, in the calling thread (for ``forward``)."""
    _forward_chunk(code, X, A, V, W, h, act, act, tmp, False)


@njit(**_JIT, nogil=True)
def _chunk_pass(code, n, X, Y, A, B, V, W, h, act, der, res, P, G, tmp, gV, gW):
    """Forward pass, residual, backward recursion and gradient shares of one chunk (releases the GIL)."""
    _forward_chunk(code, X, A, V, W, h, act, der, tmp, code != TANH)
    _backward_chunk(code, n, Y, B, V, W, h, act, der, res, P, G, tmp, gV, gW)


@njit(**_JIT, nogil=True)
def _combine(gV, gW, gV1, gW1):
    """gV += gV1, gW += gW1: the gradients of Eq. (15) from the two chunks' shares (chunk 0 + chunk 1)."""
    a = gV.reshape(gV.size)
    a1 = gV1.reshape(gV1.size)
    for i in range(a.size):
        a[i] += a1[i]
    b = gW.reshape(gW.size)
    b1 = gW1.reshape(gW1.size)
    for i in range(b.size):
        b[i] += b1[i]


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


def loss_grad(code, n, Xc, Yc, A, B, V, W, h, act, der, res, P, G, tmp, gV, gW, gV1, gW1):
    r"""Forward pass, backpropagation (corrected Eqs. (13), (15)) and the parameter gradients, in place.

    On exit ``res`` holds the residuals, ``P`` the states p_0 (for dl/dA, Eq. (14)), ``gV`` (L, q, m)
    and ``gW`` (L, m, q) the gradients of V and W. With two chunks, chunk 1 runs in the worker thread
    (its gradient shares in ``gV1``, ``gW1``) while this thread runs chunk 0, or here after it if the
    worker has not started it; the arithmetic is the same either way.
    """
    def chunk(c, gv, gw):
        return (code, n, Xc[c], Yc[c], A, B, V, W, h[c], act[c], der[c], res[c], P[c], G[c], tmp[c], gv, gw)

    if Xc.shape[0] == 1:
        _chunk_pass(*chunk(0, gV, gW))
        return
    pool = _worker()
    job = None if pool is None else pool.submit(_chunk_pass, *chunk(1, gV1, gW1))
    try:
        _chunk_pass(*chunk(0, gV, gW))
    finally:  # never leave the worker writing into the work space after returning or raising
        here = job is None or job.cancel()  # one thread, or the worker never started chunk 1
        if not here:
            job.result()
    if here:
        _chunk_pass(*chunk(1, gV1, gW1))
    _combine(gV, gW, gV1, gW1)


_WORKSPACE = threading.local()
_WORKSPACE_BYTES = 64 << 20
"""Largest work space (bytes) kept between calls, one per calling thread: reusing it spares the page
faults of fresh memory (about 0.2 ms per MB here, a fifth of the compute time at the benchmark size)."""


def workspace(L, chunks, n0, q, m, d_out):
    """Work blocks (h, act, der, res, P, G, tmp, gV1, gW1) for :func:`loss_grad`, reused while the shapes repeat.

    Every entry is written by each call before it is read (``der`` only for the activations other
    than tanh, ``gV1``, ``gW1`` only with two chunks); none is handed to the user.
    """
    key = (L, chunks, n0, q, m, d_out)
    kept = getattr(_WORKSPACE, "kept", None)
    if kept is not None and kept[0] == key:
        return kept[1]
    extra = L if chunks > 1 else 1
    blocks = (np.empty((chunks, L + 1, n0, q)), np.empty((chunks, L, n0, m)), np.empty((chunks, L, n0, m)),
              np.empty((chunks, n0, d_out)), np.empty((chunks, n0, q)), np.empty((chunks, n0, m)),
              np.empty((chunks, n0, q)), np.empty((extra, q, m)), np.empty((extra, m, q)))
    _WORKSPACE.kept = (key, blocks) if sum(b.nbytes for b in blocks) <= _WORKSPACE_BYTES else None
    return blocks
