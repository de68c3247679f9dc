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
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .._residual_kernels import (LINEAR, ROW_REASSOC_MIN_D, TANH, product_check, residual, residual_step,
                                 residual_vjp)
from .._tanh import tanh

_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}


# A single input of width d >= ROW_REASSOC_MIN_D streams theta with row products, each sum in an order the
# compiler chooses ("reassoc": partial sums in vector lanes); results differ from in-order sums by rounding only.
_JIT_REASSOC = {"cache": True, "error_model": "numpy", "fastmath": {"contract", "reassoc"}}


@intrinsic
def _prefetch_l2(typingctx, arr, idx):
    """Ask the cache hierarchy for the line holding ``arr.reshape(-1)[idx]``, into level 2 and below
    (``llvm.prefetch``: a read, locality 2, x86 ``prefetcht1``). A hint only: it changes no value and never
    faults, whatever the index."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 2), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, idx), codegen


@njit(**_JIT_REASSOC)
def _matvec_prefetch(theta, k, xs, src, o, d, nxt=-1):
    """o[0, i] = sum_j theta[k, i d + j] xs[src, 0, j] for i < d, each sum in an order the compiler may choose;
    when 0 <= nxt < theta.shape[0], row i of slice ``nxt`` (the next one the pass reads: k + 1 forwards, k - 1
    for the inverse) is requested into the level-2 cache while row i of slice k is summed.

    The layers are serial (x_{n+1} needs all of theta_n x_n), and a pass over an untied theta too large for the
    caches that leaves the fetching to the hardware's stream prefetcher computes and waits for memory by
    turns. Measured at d = 64, N = 10^4 (328 MB, Intel Xeon, one core): without the requests 32 ms per
    forward pass (an earlier version read each slice backwards for the inverse: 27 ms), against 19 ms for
    reading theta alone and 6 ms for the arithmetic with theta in cache; with one request per cache line of
    the next slice, spread over the rows, 24 ms forwards and 26 ms for the inverse. The slice is read
    forwards, rows and entries: reading it backwards, or its rows from the last, was slower with the
    requests (27 ms). Offsets are unsigned (no wraparound tests), which lets the sums vectorise.

    A NaN or infinite term still makes its sum NaN or infinite ("reassoc" assumes nothing about finiteness),
    so theta's finiteness can be read from o (:func:`theory._residual_kernels.product_check`); it is one of the
    two kernels allowed to reassociate (docs/conventions.md)."""
    P = np.uint64(theta.shape[1])
    th = theta.reshape(-1)
    tr = xs.reshape(-1)
    base = np.uint64(k) * P
    s0 = np.uint64(src) * np.uint64(xs.shape[1] * xs.shape[2])
    prefetch = 0 <= nxt < theta.shape[0]
    nb = np.uint64(max(nxt, 0)) * P
    w = o[0]
    for ii in range(d):
        i = np.uint64(ii)
        r = base + i * np.uint64(d)
        if prefetch:
            rn = nb + i * np.uint64(d)
            for q in range(0, d, 8):
                _prefetch_l2(th, rn + np.uint64(q))
            _prefetch_l2(th, rn + np.uint64(d - 1))
        acc = 0.0
        for jj in range(d):
            j = np.uint64(jj)
            acc += th[r + j] * tr[s0 + j]
        w[i] = acc


@njit(**_JIT)
def _layer(code, m, xs, src, theta, k, fbuf, work, step):
    """fbuf = f(xs[src], theta[k]); returns the number of non-finite entries of theta[k].

    The products theta_k x are computed first (a single input of the linear or tanh family with
    d >= ROW_REASSOC_MIN_D by the streaming row products of :func:`_matvec_prefetch`, which request the slice
    k + step, the next one the pass reads, while they sum this one: step +1 forwards, -1 for the inverse, 0 for
    tied weights; every other case by the shared residual loop without its outer tanh),
    theta's finiteness is read from them as in theory.resnet (:func:`theory._residual_kernels.product_check`:
    the slice is counted only when a product is not finite), then the tanh family's activation is applied."""
    B, d = fbuf.shape
    if B == 1 and (code == LINEAR or code == TANH) and d >= ROW_REASSOC_MIN_D:
        _matvec_prefetch(theta, k, xs, src, fbuf, d, k + step if step != 0 else -1)
    else:
        residual_step(code, m, xs[src], theta[k], fbuf, work, False)
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
        bad = _layer(code, m, xs, n, theta, k, fbuf, work, 1 if T > 1 else 0)
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
        bad = _layer(code, m, xs, n, theta, k, fbuf, work, -1 if T > 1 else 0)
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
