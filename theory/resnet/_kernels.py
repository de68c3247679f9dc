"""Numba kernels of depth-N residual networks with step 1/N (``resnet-node``, Eqs. (1), (3), (6)-(9)).

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults. The public,
validated interface is :mod:`theory.resnet._api`.

Shapes used throughout:

* ``x`` is a batch of states, ``(B, d)``; a trajectory is ``(N + 1, B, d)``.
* ``theta`` holds one flat parameter vector per layer, ``(K, P)``: ``K = N`` for Euler and
  ``K = N + 1`` for Heun.
* ``code`` selects the residual family and ``m`` is the hidden width of the perceptron family
  (0 otherwise): the codes, formulas and parameter layouts of :mod:`theory._residual_kernels`, whose
  :func:`~theory._residual_kernels.residual` and :func:`~theory._residual_kernels.residual_vjp` the
  steps below call.
* ``work`` is caller-allocated scratch of shape
  :func:`theory._residual_kernels.scratch_shape` ``(d, B, m)``; ``buf1`` .. ``buf4`` are
  caller-allocated ``(B, d)`` buffers, except Heun's ``k1`` of shape ``(2, B, d)``. Nothing here
  allocates an array whose size grows with N.
* The forward, reverse and last-state kernels return the number of NaN or infinite entries of
  theta, counted slice by slice as the layers use them: the caller validates theta by this count
  instead of reading it once more beforehand (its result is discarded when the count is not 0).
  The Euler kernels of the matrix families (linear, tanh, tanh_out) count the (B, d) products
  theta_n v instead of the (d, d) slice (:func:`product_check`): a NaN or infinite entry of theta_n
  makes every product it enters NaN or infinite in IEEE arithmetic (inf * 0 is NaN, inf - inf is
  NaN, NaN propagates; no fast-math flag that assumes finite values is set and no product is
  skipped), so a finite product proves the slice finite; on a non-finite product the slice itself
  is counted, which tells a non-finite theta from an overflow of finite values.
"""

import numpy as np
from numba import njit

from .._blas import gemm_nn, gemm_nt, gemm_tn
from .._residual_kernels import (LINEAR, ROW_REASSOC_MIN_D, TANH, count_nonfinite, count_nonfinite_rows, matvec_reassoc,
                                 product_check, residual, residual_step, residual_vjp, use_blas)
from .._tanh import tanh

# Compilation flags of every kernel (those of theory._residual_kernels): IEEE division (error_model="numpy")
# and the one fast-math flag "contract" (fused multiply-adds; NaN and infinity semantics kept).
_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}


@njit(**_JIT)
def _euler_step(code, m, x, th, h, out, fbuf, work):
    """out = x + h f(x, th) (h = 1/N forward, -1/N for the reverse-time scheme, Eq. (6))."""
    B, d = x.shape
    residual_step(code, m, x, th, fbuf, work, False)
    if B == 1:  # one row: index it in place (a reshaped view costs more than a short row)
        if code == TANH:
            for i in range(d):
                out[0, i] = x[0, i] + h * tanh(fbuf[0, i])
        else:
            for i in range(d):
                out[0, i] = x[0, i] + h * fbuf[0, i]
        return
    # flat loops over the B d entries (all three arrays are C-contiguous): one long loop vectorises
    # where a short inner loop of length d would not
    xf = x.reshape(B * d)
    of = out.reshape(B * d)
    ff = fbuf.reshape(B * d)
    if code == TANH:  # the outer tanh fused into the update
        for k in range(B * d):
            of[k] = xf[k] + h * tanh(ff[k])
    else:
        for k in range(B * d):
            of[k] = xf[k] + h * ff[k]


@njit(**_JIT)
def _heun_step(code, m, x, th_a, th_b, h, out, k1, k2, work):
    """One Heun step, Eq. (8) for h = 1/N and Eq. (9) for h = -1/N.

    y = x + h f(x, th_a);  out = x + h/2 (f(x, th_a) + f(y, th_b)). ``out`` may alias ``x``;
    ``k1`` and ``k2`` are (2, B, d) scratch.
    """
    B, d = x.shape
    f1 = k1[0]
    y = k1[1]
    residual_step(code, m, x, th_a, f1, work, True)
    xf = x.reshape(B * d)
    yf = y.reshape(B * d)
    f1f = f1.reshape(B * d)
    for k in range(B * d):
        yf[k] = xf[k] + h * f1f[k]
    residual_step(code, m, y, th_b, k2, work, True)
    of = out.reshape(B * d)
    k2f = k2.reshape(B * d)
    for k in range(B * d):
        of[k] = xf[k] + 0.5 * h * (f1f[k] + k2f[k])


@njit(**_JIT, inline="always")
def _row_path(code, B, d):
    """A single input of the linear or tanh family: the loop of :func:`_euler_row` (no BLAS gemv)."""
    return B == 1 and (code == LINEAR or code == TANH)


@njit(**_JIT)
def _euler_row(code, theta, traj, dact, store, reverse, work):
    """Euler (Eq. (1)) or reverse-time Euler (Eq. (6)) for one input of the linear or tanh family,
    trajectory ``traj`` (N + 1, 1, d); returns the non-finite counts of theta (as the other kernels)
    and of the states it wrote (:func:`count_nonfinite_rows`).

    The same arithmetic in the same order as :func:`_euler_step` (row dot products over j in
    increasing order, then x + h tanh(s)). ``theta``, ``traj``, ``dact`` and ``work`` are indexed
    as flat arrays with unsigned offsets: at d <= 16 the array views that a per-layer call creates
    cost as much as the layer's arithmetic, and a signed index costs a test for negative values
    (Python's wraparound) on every load, which here costs more than the multiply-adds. With
    ``store`` the tanh family also writes 1 - tanh(s)^2 into ``dact[n, 0]`` for backpropagation.
    """
    N = theta.shape[0]
    d = traj.shape[2]
    h = -1.0 / N if reverse else 1.0 / N
    th = theta.reshape(theta.size)
    tr = traj.reshape(traj.size)
    da = dact.reshape(dact.size)
    w = work.reshape(work.size)  # work[0, i] is w[i]
    ud = np.uint64(d)
    u0 = np.uint64(0)
    u1 = np.uint64(1)
    u2 = np.uint64(2)
    u3 = np.uint64(3)
    u4 = np.uint64(4)
    u5 = np.uint64(5)
    u6 = np.uint64(6)
    u7 = np.uint64(7)
    u8 = np.uint64(8)
    bad = 0
    out_bad = 0
    for step in range(N):
        n = N - 1 - step if reverse else step
        src = np.uint64((n + 1) * d) if reverse else np.uint64(n * d)
        dst = np.uint64(n * d) if reverse else np.uint64((n + 1) * d)
        dn = np.uint64(n * d)
        base = np.uint64(n * d * d)
        if d >= ROW_REASSOC_MIN_D:
            matvec_reassoc(th, base, tr, src, w, d)
            i = ud
        else:
            i = u0
        while i + u8 <= ud:
            r0 = base + i * ud
            r1 = r0 + ud
            r2 = r1 + ud
            r3 = r2 + ud
            r4 = r3 + ud
            r5 = r4 + ud
            r6 = r5 + ud
            r7 = r6 + ud
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            a4 = 0.0
            a5 = 0.0
            a6 = 0.0
            a7 = 0.0
            for jj in range(d):
                j = np.uint64(jj)
                vj = tr[src + j]
                a0 += th[r0 + j] * vj
                a1 += th[r1 + j] * vj
                a2 += th[r2 + j] * vj
                a3 += th[r3 + j] * vj
                a4 += th[r4 + j] * vj
                a5 += th[r5 + j] * vj
                a6 += th[r6 + j] * vj
                a7 += th[r7 + j] * vj
            w[i] = a0
            w[i + u1] = a1
            w[i + u2] = a2
            w[i + u3] = a3
            w[i + u4] = a4
            w[i + u5] = a5
            w[i + u6] = a6
            w[i + u7] = a7
            i += u8
        while i + u4 <= ud:
            r0 = base + i * ud
            r1 = r0 + ud
            r2 = r1 + ud
            r3 = r2 + ud
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for jj in range(d):
                j = np.uint64(jj)
                vj = tr[src + j]
                a0 += th[r0 + j] * vj
                a1 += th[r1 + j] * vj
                a2 += th[r2 + j] * vj
                a3 += th[r3 + j] * vj
            w[i] = a0
            w[i + u1] = a1
            w[i + u2] = a2
            w[i + u3] = a3
            i += u4
        while i < ud:
            acc = 0.0
            r0 = base + i * ud
            for jj in range(d):
                j = np.uint64(jj)
                acc += th[r0 + j] * tr[src + j]
            w[i] = acc
            i += u1
        if code == TANH:
            if store:
                for kk in range(d):
                    k = np.uint64(kk)
                    t = tanh(w[k])
                    da[dn + k] = 1.0 - t * t
                    tr[dst + k] = tr[src + k] + h * t
            else:
                for kk in range(d):
                    k = np.uint64(kk)
                    tr[dst + k] = tr[src + k] + h * tanh(w[k])
        else:
            for kk in range(d):
                k = np.uint64(kk)
                tr[dst + k] = tr[src + k] + h * w[k]
        for kk in range(d):
            v = tr[dst + np.uint64(kk)]
            out_bad += (v - v) != 0.0
        # theta_n's finiteness from its d products in w (as product_check, in place: no view); w
        # still holds them, the updates above wrote the trajectory and dact only
        prod_bad = 0
        for kk in range(d):
            v = w[np.uint64(kk)]
            prod_bad += (v - v) != 0.0
        if prod_bad:
            bad += count_nonfinite(theta, n)
    return bad, out_bad


# A batch of the linear or tanh family at small d: the products theta_n x_n for all rows of the batch
# by a loop that the compiler vectorises along the batch (see _euler_batch), from d <= this width
# and B >= 2; above it (or where B d^2 is large) BLAS products are faster.
BATCH_LOOP_MAX_D = 32


@njit(**_JIT, inline="always")
def _batch_path(code, B, d):
    """A batch of the linear or tanh family at small d: the loop of :func:`_euler_batch`."""
    return B > 1 and d <= BATCH_LOOP_MAX_D and (code == LINEAR or code == TANH)


@njit(**_JIT, inline="always")
def _products_T(th, rb, rs, cs, d, B, xf, of):
    """of[i B + b] = sum_j A[i, j] xf[j B + b] for i < d, b < B, with A[i, j] = th[rb + i rs + j cs]
    (rs = d, cs = 1: theta_n; rs = 1, cs = d: its transpose): the products A x_b of a batch held
    transposed (xf is x^T, (d, B) flat; of likewise), each sum over j in increasing order with one
    rounding per term (fused multiply-add), as :func:`theory._residual_kernels.matvec` sums it.

    The loop over b is the innermost and has unit stride, so the compiler vectorises it; A's
    entries are loop-invariant scalars (eight at a time, for two rows i at a time), and each pass
    reads eight rows of x^T per row pair: the partial sums stay in registers over eight terms
    instead of going through memory after each one. Unsigned offsets: no wraparound tests."""
    uB = np.uint64(B)
    urs = np.uint64(rs)
    ucs = np.uint64(cs)
    i = 0
    while i < d:
        two = i + 1 < d
        oa = np.uint64(i * B)
        ob = np.uint64((i + 1) * B) if two else oa
        ra = rb + np.uint64(i) * urs
        rbb = ra + urs if two else ra
        j = 0
        while j < d:
            if j + 8 <= d:
                uj = np.uint64(j)
                c0 = uj * ucs
                c1 = c0 + ucs
                c2 = c1 + ucs
                c3 = c2 + ucs
                c4 = c3 + ucs
                c5 = c4 + ucs
                c6 = c5 + ucs
                c7 = c6 + ucs
                a0 = th[ra + c0]
                a1 = th[ra + c1]
                a2 = th[ra + c2]
                a3 = th[ra + c3]
                a4 = th[ra + c4]
                a5 = th[ra + c5]
                a6 = th[ra + c6]
                a7 = th[ra + c7]
                e0 = th[rbb + c0]
                e1 = th[rbb + c1]
                e2 = th[rbb + c2]
                e3 = th[rbb + c3]
                e4 = th[rbb + c4]
                e5 = th[rbb + c5]
                e6 = th[rbb + c6]
                e7 = th[rbb + c7]
                x0 = uj * uB
                x1 = x0 + uB
                x2 = x1 + uB
                x3 = x2 + uB
                x4 = x3 + uB
                x5 = x4 + uB
                x6 = x5 + uB
                x7 = x6 + uB
                if j == 0:  # from 0: 0 + a0 v0 rounds as a0 v0
                    for bb in range(B):
                        b = np.uint64(bb)
                        v0 = xf[x0 + b]
                        v1 = xf[x1 + b]
                        v2 = xf[x2 + b]
                        v3 = xf[x3 + b]
                        v4 = xf[x4 + b]
                        v5 = xf[x5 + b]
                        v6 = xf[x6 + b]
                        v7 = xf[x7 + b]
                        s = a0 * v0
                        t = e0 * v0
                        s += a1 * v1
                        t += e1 * v1
                        s += a2 * v2
                        t += e2 * v2
                        s += a3 * v3
                        t += e3 * v3
                        s += a4 * v4
                        t += e4 * v4
                        s += a5 * v5
                        t += e5 * v5
                        s += a6 * v6
                        t += e6 * v6
                        s += a7 * v7
                        t += e7 * v7
                        of[ob + b] = t
                        of[oa + b] = s
                else:
                    for bb in range(B):
                        b = np.uint64(bb)
                        v0 = xf[x0 + b]
                        v1 = xf[x1 + b]
                        v2 = xf[x2 + b]
                        v3 = xf[x3 + b]
                        v4 = xf[x4 + b]
                        v5 = xf[x5 + b]
                        v6 = xf[x6 + b]
                        v7 = xf[x7 + b]
                        s = of[oa + b] + a0 * v0
                        t = of[ob + b] + e0 * v0
                        s += a1 * v1
                        t += e1 * v1
                        s += a2 * v2
                        t += e2 * v2
                        s += a3 * v3
                        t += e3 * v3
                        s += a4 * v4
                        t += e4 * v4
                        s += a5 * v5
                        t += e5 * v5
                        s += a6 * v6
                        t += e6 * v6
                        s += a7 * v7
                        t += e7 * v7
                        of[ob + b] = t
                        of[oa + b] = s
                j += 8
            else:
                uj = np.uint64(j) * ucs
                a0 = th[ra + uj]
                e0 = th[rbb + uj]
                x0 = np.uint64(j) * uB
                if j == 0:
                    for bb in range(B):
                        b = np.uint64(bb)
                        v0 = xf[x0 + b]
                        t = e0 * v0
                        s = a0 * v0
                        of[ob + b] = t
                        of[oa + b] = s
                else:
                    for bb in range(B):
                        b = np.uint64(bb)
                        v0 = xf[x0 + b]
                        t = of[ob + b] + e0 * v0
                        s = of[oa + b] + a0 * v0
                        of[ob + b] = t
                        of[oa + b] = s
                j += 1
        i += 2


@njit(**_JIT, inline="always")
def _update_counted(code, h, xf, sf, yf, tf, store, size):
    """yf[k] = xf[k] + h f_k for k < size (flat arrays), f_k = tanh(sf[k]) for the tanh family and
    sf[k] for the linear one, from the products sf = theta_n x; with ``store`` (tanh family) also
    tf[k] = 1 - tanh(sf[k])^2. Returns the numbers of non-finite products and of non-finite new
    states, in that order. yf may be xf.

    The pass tests finiteness with one flag, (s - s) + (v - v) != 0 for the product s and the new
    state v (NaN exactly when either is infinite or NaN), an OR the compiler keeps in vector lanes;
    only when it is set are both counted, in a second pass over the block (still in cache). Counting
    both in the main pass cost 4 % of a layer at d = 16, B = 64."""
    flag = False
    if code == TANH:
        if store:
            for k in range(size):
                s = sf[k]
                t = tanh(s)
                tf[k] = 1.0 - t * t
                v = xf[k] + h * t
                flag |= ((s - s) + (v - v)) != 0.0
                yf[k] = v
        else:
            for k in range(size):
                s = sf[k]
                v = xf[k] + h * tanh(s)
                flag |= ((s - s) + (v - v)) != 0.0
                yf[k] = v
    else:
        for k in range(size):
            s = sf[k]
            v = xf[k] + h * s
            flag |= ((s - s) + (v - v)) != 0.0
            yf[k] = v
    prod_bad = 0
    ob = 0
    if flag:
        for k in range(size):
            s = sf[k]
            v = yf[k]
            prod_bad += (s - s) != 0.0
            ob += (v - v) != 0.0
    return prod_bad, ob


@njit(**_JIT)
def _batch_layer(code, th, n, d, B, h, xf, yf, of, tf, store):
    """One layer of a small-d batch on transposed states (:func:`_batch_path`): of = theta_n x^T by
    :func:`_products_T` (each sum over j in increasing order with fused multiply-adds, as the
    single-input loop sums it), then yf = xf + h f by :func:`_update_counted` (with ``store``, also
    1 - tanh(s)^2 into tf). Returns the numbers of non-finite products and of non-finite new states,
    in that order. xf, yf, of, tf are (d, B) blocks, flat; yf may be xf."""
    _products_T(th, np.uint64(n * d * d), d, 1, d, B, xf, of)
    return _update_counted(code, h, xf, of, yf, tf, store, B * d)


@njit(**_JIT)
def _euler_batch(code, theta, traj, reverse, transposed):
    """Euler (Eq. (1)) or reverse-time Euler (Eq. (6)) for a batch of the linear or tanh family at
    small d (:func:`_batch_path`); returns the non-finite counts of theta and of the states written,
    as :func:`_euler_row`.

    The products, the tanh and the update vectorise along the batch (:func:`_batch_layer`), so the
    states are held transposed, x^T (d, B). With ``transposed`` the trajectory itself has that
    layout, ``traj`` (N + 1, d, B) (the API returns its transposed view): each layer reads
    ``traj[n]`` and writes ``traj[n + 1]`` in the pass that applies the tanh, and no copy is made.
    Otherwise ``traj`` is (N + 1, B, d) and the state lives in scratch, copied into each slice.
    """
    N = theta.shape[0]
    if transposed:
        d = traj.shape[1]
        B = traj.shape[2]
    else:
        B = traj.shape[1]
        d = traj.shape[2]
    h = -1.0 / N if reverse else 1.0 / N
    th = theta.reshape(theta.size)
    xT = np.empty((d, B))
    oT = np.empty((d, B))
    xs = xT.reshape(B * d)
    of = oT.reshape(B * d)
    start = N if reverse else 0
    if not transposed:
        for b in range(B):
            for i in range(d):
                xT[i, b] = traj[start, b, i]
    bad = 0
    out_bad = 0
    for step in range(N):
        n = N - 1 - step if reverse else step
        src = n + 1 if reverse else n
        dst = n if reverse else n + 1
        if transposed:
            xf = traj[src].reshape(B * d)
            yf = traj[dst].reshape(B * d)
        else:
            xf = xs
            yf = xs
        prod_bad, ob = _batch_layer(code, th, n, d, B, h, xf, yf, of, of, False)
        out_bad += ob
        if not transposed:
            xo = traj[dst]
            for b in range(B):
                for i in range(d):
                    xo[b, i] = xT[i, b]
        if prod_bad:
            bad += count_nonfinite(theta, n)
    return bad, out_bad


def checkpoint_segment(B, d):
    """Layers per segment of :func:`_batch_checkpoints` / :func:`_backprop_checkpointed`: a
    segment's states and tanh derivatives, 16 B d bytes a layer, take at most 384 KiB, so that
    they stay in the core's cache between their recomputation and their use backwards."""
    return max(1, (384 * 1024) // (16 * B * d))


@njit(**_JIT)
def _batch_checkpoints(code, theta, ckpt, seg, x):
    """Forward pass of a small-d batch (Euler, Eq. (1)) that keeps only the states x_n at
    n = 0, seg, 2 seg, ...: ``ckpt[n // seg]`` (d, B) each, ``ckpt`` of shape (ceil(N / seg), d, B).
    ``x`` (d, B) holds x_0^T on entry and x_N^T on return. Returns the non-finite counts of theta
    and of the states, as :func:`_euler_batch` (whose layers these are, bit for bit)."""
    N = theta.shape[0]
    d, B = x.shape
    h = 1.0 / N
    th = theta.reshape(theta.size)
    of = np.empty(B * d)
    xf = x.reshape(B * d)
    bad = 0
    out_bad = 0
    for n in range(N):
        if n % seg == 0:
            ckpt[n // seg] = x
        prod_bad, ob = _batch_layer(code, th, n, d, B, h, xf, xf, of, of, False)
        out_bad += ob
        if prod_bad:
            bad += count_nonfinite(theta, n)
    return bad, out_bad


@njit(**_JIT)
def _matrix_step_counted(code, x, th, h, out, fbuf, work):
    """out = x + h f(x, th) for the linear or tanh family (as :func:`_euler_step`), returning the
    numbers of non-finite products theta x (fbuf) and entries of out: one pass over the B d entries
    (:func:`_update_counted`), and a counting pass only when it finds one."""
    B, d = x.shape
    residual(code, 0, x, th, fbuf, work, False)
    ff = fbuf.reshape(B * d)
    return _update_counted(code, h, x.reshape(B * d), ff, out.reshape(B * d), ff, False, B * d)


@njit(**_JIT)
def euler_forward(code, m, x0, theta, traj, fbuf, work):
    """traj[n + 1] = traj[n] + f(traj[n], theta[n]) / N, traj[0] = x0 (Eq. (1)); traj (N + 1, B, d).

    Returns the non-finite counts of theta and of the trajectory (both counted as they are used or
    written)."""
    N = theta.shape[0]
    traj[0] = x0
    if _row_path(code, x0.shape[0], x0.shape[1]):
        return _euler_row(code, theta, traj, traj, False, False, work)
    if _batch_path(code, x0.shape[0], x0.shape[1]):
        return _euler_batch(code, theta, traj, False, False)
    bad = 0
    out_bad = 0
    if code == LINEAR or code == TANH:
        for n in range(N):
            prod_bad, ob = _matrix_step_counted(code, traj[n], theta[n], 1.0 / N, traj[n + 1], fbuf, work)
            out_bad += ob
            if prod_bad:
                bad += count_nonfinite(theta, n)
        return bad, out_bad
    for n in range(N):
        _euler_step(code, m, traj[n], theta[n], 1.0 / N, traj[n + 1], fbuf, work)
        bad += product_check(code, theta, n, fbuf)
        out_bad += count_nonfinite_rows(traj[n + 1])
    return bad, out_bad


@njit(**_JIT)
def euler_forward_store(code, m, x0, theta, traj, dact, fbuf, work):
    """:func:`euler_forward` for the tanh family that also stores 1 - tanh(theta_n x_n)^2 into
    ``dact`` (N, B, d): backpropagation (:func:`euler_backprop_stored`) then needs no second product
    theta_n x_n per layer and no second tanh. A small-d batch (:func:`_batch_path`) takes the other
    pair instead, :func:`_batch_checkpoints` and :func:`_backprop_checkpointed`."""
    N = theta.shape[0]
    B, d = x0.shape
    traj[0] = x0
    if _row_path(code, B, d):
        return _euler_row(code, theta, traj, dact, True, False, work)
    bad = 0
    out_bad = 0
    for n in range(N):
        x = traj[n]
        residual(code, m, x, theta[n], fbuf, work, False)
        xf = x.reshape(B * d)
        of = traj[n + 1].reshape(B * d)
        ff = fbuf.reshape(B * d)
        df = dact[n].reshape(B * d)
        prod_bad, ob = _update_counted(code, 1.0 / N, xf, ff, of, df, True, B * d)
        out_bad += ob
        if prod_bad:
            bad += count_nonfinite(theta, n)
    return bad, out_bad


@njit(**_JIT)
def heun_forward(code, m, x0, theta, traj, k1, k2, work):
    """HeunNet forward, Eq. (8): theta has N + 1 slices, traj (N + 1, B, d)."""
    N = theta.shape[0] - 1
    traj[0] = x0
    bad = count_nonfinite(theta, N)
    for n in range(N):
        _heun_step(code, m, traj[n], theta[n], theta[n + 1], 1.0 / N, traj[n + 1], k1, k2, work)
        bad += count_nonfinite(theta, n)
    return bad


@njit(**_JIT)
def euler_reverse(code, m, xN, theta, traj, fbuf, work):
    """Reverse-time Euler, Eq. (6): traj[n] = traj[n + 1] - f(traj[n + 1], theta[n]) / N, traj[N] = xN.

    Returns the non-finite counts of theta and of the trajectory, as :func:`euler_forward`."""
    N = theta.shape[0]
    traj[N] = xN
    if _row_path(code, xN.shape[0], xN.shape[1]):
        return _euler_row(code, theta, traj, traj, False, True, work)
    if _batch_path(code, xN.shape[0], xN.shape[1]):
        return _euler_batch(code, theta, traj, True, False)
    bad = 0
    out_bad = 0
    if code == LINEAR or code == TANH:
        for n in range(N - 1, -1, -1):
            prod_bad, ob = _matrix_step_counted(code, traj[n + 1], theta[n], -1.0 / N, traj[n], fbuf, work)
            out_bad += ob
            if prod_bad:
                bad += count_nonfinite(theta, n)
        return bad, out_bad
    for n in range(N - 1, -1, -1):
        _euler_step(code, m, traj[n + 1], theta[n], -1.0 / N, traj[n], fbuf, work)
        bad += product_check(code, theta, n, fbuf)
        out_bad += count_nonfinite_rows(traj[n])
    return bad, out_bad


@njit(**_JIT)
def heun_reverse(code, m, xN, theta, traj, k1, k2, work):
    """Reverse-time Heun, Eq. (9): the Heun step with step -1/N and the slices taken in reverse."""
    N = theta.shape[0] - 1
    traj[N] = xN
    bad = count_nonfinite(theta, 0)
    for n in range(N - 1, -1, -1):
        _heun_step(code, m, traj[n + 1], theta[n + 1], theta[n], -1.0 / N, traj[n], k1, k2, work)
        bad += count_nonfinite(theta, n + 1)
    return bad


@njit(**_JIT)
def euler_last(code, m, x, theta, fbuf, work):
    """Memory-free forward: overwrite x (B, d) with x_N of Eq. (1)."""
    N = theta.shape[0]
    bad = 0
    for n in range(N):
        _euler_step(code, m, x, theta[n], 1.0 / N, x, fbuf, work)
        bad += product_check(code, theta, n, fbuf)
    return bad


@njit(**_JIT)
def heun_last(code, m, x, theta, k1, k2, work):
    """Memory-free HeunNet forward: overwrite x (B, d) with x_N of Eq. (8)."""
    N = theta.shape[0] - 1
    bad = count_nonfinite(theta, N)
    for n in range(N):
        _heun_step(code, m, x, theta[n], theta[n + 1], 1.0 / N, x, k1, k2, work)
        bad += count_nonfinite(theta, n)
    return bad


@njit(**_JIT)
def _euler_step_vjp(code, m, x, th, N, g, gth, cot, gx, work):
    """Backpropagate through x' = x + f(x, th)/N (Eq. (3)): g <- g + J^T g / N, gth += d_th^T g / N."""
    B, d = x.shape
    if B == 1:  # one row: index it in place (a reshaped view costs more than a short row)
        for i in range(d):
            cot[0, i] = g[0, i] / N
        residual_vjp(code, m, x, th, cot, gth, gx, work, True)
        for i in range(d):
            g[0, i] += gx[0, i]
        return
    gf = g.reshape(B * d)
    cf = cot.reshape(B * d)
    gxf = gx.reshape(B * d)
    for k in range(B * d):
        cf[k] = gf[k] / N
    residual_vjp(code, m, x, th, cot, gth, gx, work, True)  # each slice serves one step
    for k in range(B * d):
        gf[k] += gxf[k]


@njit(**_JIT)
def _heun_step_vjp(code, m, x, th_a, th_b, N, g, gth_a, gth_b, y, cot, gy, gx, work):
    """Backpropagate through one HeunNet step from x = x_n (Eq. (8)).

    With y = x + f_a(x)/N and x' = x + (f_a(x) + f_b(y))/(2N), for the cotangent g of x':
    dy = J_b(y)^T g/(2N); th_b gets d_th f_b(y)^T g/(2N); th_a gets d_th f_a(x)^T (g/(2N) + dy/N);
    g <- g + dy + J_a(x)^T (g/(2N) + dy/N).
    """
    B, d = x.shape
    residual(code, m, x, th_a, y, work, True)
    xf = x.reshape(B * d)
    yf = y.reshape(B * d)
    gf = g.reshape(B * d)
    cf = cot.reshape(B * d)
    gyf = gy.reshape(B * d)
    gxf = gx.reshape(B * d)
    for k in range(B * d):
        yf[k] = xf[k] + yf[k] / N
        cf[k] = gf[k] / (2.0 * N)
    residual_vjp(code, m, y, th_b, cot, gth_b, gy, work, False)  # th_b also served step n + 1
    for k in range(B * d):
        cf[k] += gyf[k] / N
    residual_vjp(code, m, x, th_a, cot, gth_a, gx, work, True)  # step n is th_a's first
    for k in range(B * d):
        gf[k] += gyf[k] + gxf[k]


@njit(**_JIT)
def euler_backprop(code, m, traj, theta, g, gtheta, cot, gx, work):
    """Exact backpropagation, Eq. (3), through a stored trajectory; g (B, d) ends as dL/dx0."""
    N = theta.shape[0]
    for n in range(N - 1, -1, -1):
        _euler_step_vjp(code, m, traj[n], theta[n], N, g, gtheta[n], cot, gx, work)


@njit(**_JIT)
def _backprop_checkpointed(code, theta, ckpt, seg, g, gtheta):
    """Exact backpropagation, Eq. (3), for a small-d batch of the tanh family (:func:`_batch_path`)
    from the checkpoints of :func:`_batch_checkpoints`; g (B, d) enters as dL/dx_N and ends as
    dL/dx0, gtheta (N, d d) is written.

    Segment by segment from the last: the segment's states and tanh derivatives are recomputed from
    its checkpoint by the forward layers (:func:`_batch_layer`, the same arithmetic, so the same bits
    as a stored trajectory) into a buffer that stays in cache, then walked back. Per layer, with the
    cotangents held transposed, h^T (d, B): h = (g / N) (1 - t^2) entrywise, grad theta_n = h^T x_n,
    (d, B) times (B, d) (one BLAS product from B d^2 = BLAS_MIN_WORK multiply-adds on,
    :func:`use_blas`, otherwise a loop over the batch rows, each entry summed over b in increasing
    order), and g <- g + theta_n^T h by :func:`_products_T` on theta_n's transpose (each sum over i in
    increasing order). Memory: the checkpoints, N d B / seg entries, and the segment, 2 seg d B,
    instead of a stored trajectory and derivatives of 2 N d B."""
    N = theta.shape[0]
    B, d = g.shape
    blas = use_blas(B, d)
    h = 1.0 / N
    th = theta.reshape(theta.size)
    straj = np.empty((seg + 1, d, B))
    sdact = np.empty((seg, d, B))
    gT = np.empty((d, B))
    cT = np.empty((d, B))
    xT = np.empty((d, B))
    oT = np.empty((d, B))
    gf = gT.reshape(B * d)
    cf = cT.reshape(B * d)
    xf = xT.reshape(B * d)
    of = oT.reshape(B * d)
    for b in range(B):
        for i in range(d):
            gT[i, b] = g[b, i]
    for sgm in range(ckpt.shape[0] - 1, -1, -1):
        n0 = sgm * seg
        n1 = min(N, n0 + seg)
        straj[0] = ckpt[sgm]
        for n in range(n0, n1):
            _batch_layer(code, th, n, d, B, h, straj[n - n0].reshape(B * d),
                         straj[n - n0 + 1].reshape(B * d), of, sdact[n - n0].reshape(B * d), True)
        for n in range(n1 - 1, n0 - 1, -1):
            df = sdact[n - n0].reshape(B * d)
            for k in range(B * d):
                cf[k] = (gf[k] / N) * df[k]
            xn = straj[n - n0]
            if blas:
                gemm_nt(cT, xn, gtheta[n].reshape((d, d)))
            else:
                for b in range(B):
                    for i in range(d):
                        hi = cT[i, b]
                        r = i * d
                        for j in range(d):
                            gtheta[n, r + j] += hi * xn[j, b]
            _products_T(th, np.uint64(n * d * d), 1, d, d, B, cf, xf)  # xT = (theta_n^T h)^T
            for k in range(B * d):
                gf[k] += xf[k]
    for b in range(B):
        for i in range(d):
            g[b, i] = gT[i, b]


@njit(**_JIT)
def euler_backprop_stored(traj, dact, theta, g, gtheta, cot, gx, work):
    """:func:`euler_backprop` for the tanh family with the derivatives 1 - tanh(theta_n x_n)^2
    stored by :func:`euler_forward_store`: the cotangent of theta_n x_n is h = (g / N) (1 - t^2),
    computed as the tanh branch of :func:`residual_vjp` computes it, and the rest is the linear
    family's vector-Jacobian product: grad theta_n = h x_n^T (summed over the batch) and
    g <- g + theta_n^T h.

    One input: both in one pass over theta_n and grad theta_n (theta_n^T h summed over i in
    increasing order for each j). A batch large enough for BLAS (:func:`use_blas`): two products
    straight from the trajectory and the cotangents; otherwise loops over the batch rows.
    """
    N = theta.shape[0]
    B, d = g.shape
    blas = use_blas(B, d)
    for n in range(N - 1, -1, -1):
        if B == 1:
            for i in range(d):
                cot[0, i] = (g[0, i] / N) * dact[n, 0, i]
            for j in range(d):
                gx[0, j] = 0.0
            for i in range(d):
                hi = cot[0, i]
                r = i * d
                for j in range(d):
                    gtheta[n, r + j] = hi * traj[n, 0, j]
                    gx[0, j] += theta[n, r + j] * hi
            for i in range(d):
                g[0, i] += gx[0, i]
            continue
        gf = g.reshape(B * d)
        cf = cot.reshape(B * d)
        gxf = gx.reshape(B * d)
        df = dact[n].reshape(B * d)
        for k in range(B * d):
            cf[k] = (gf[k] / N) * df[k]
        if blas:
            gemm_tn(cot, traj[n], gtheta[n].reshape((d, d)))
            gemm_nn(cot, theta[n].reshape((d, d)), gx)
        else:
            # batch rows in the outer loop: each grad theta entry is still summed over b in
            # increasing order (as by residual_vjp) but d^2 independent sums advance together,
            # where one sum at a time over b is bound by the latency of its additions
            for b in range(B):
                for i in range(d):
                    hi = cot[b, i]
                    r = i * d
                    for j in range(d):
                        gtheta[n, r + j] += hi * traj[n, b, j]
                for j in range(d):
                    acc = 0.0
                    for i in range(d):
                        acc += theta[n, i * d + j] * cot[b, i]
                    gx[b, j] = acc
        for k in range(B * d):
            gf[k] += gxf[k]


@njit(**_JIT)
def euler_adjoint(code, m, x, theta, g, gtheta, cot, gx, fbuf, work):
    """Memory-free adjoint, Eqs. (6)-(7): from x = x_N, reconstruct x_n backwards and backpropagate.

    ``x`` is overwritten with the reconstruction of x_0 and ``g`` with the approximate dL/dx0.
    """
    N = theta.shape[0]
    for n in range(N - 1, -1, -1):
        _euler_step(code, m, x, theta[n], -1.0 / N, x, fbuf, work)
        _euler_step_vjp(code, m, x, theta[n], N, g, gtheta[n], cot, gx, work)


@njit(**_JIT)
def heun_backprop(code, m, traj, theta, g, gtheta, y, cot, gy, gx, work):
    """Exact backpropagation through a stored HeunNet trajectory (N + 1 parameter slices)."""
    N = theta.shape[0] - 1
    for n in range(N - 1, -1, -1):
        _heun_step_vjp(code, m, traj[n], theta[n], theta[n + 1], N, g, gtheta[n], gtheta[n + 1],
                       y, cot, gy, gx, work)


@njit(**_JIT)
def heun_adjoint(code, m, x, theta, g, gtheta, y, cot, gy, gx, k1, k2, work):
    """Memory-free HeunNet adjoint: reconstruct x_n by Eq. (9), recompute y_n from it, backpropagate."""
    N = theta.shape[0] - 1
    for n in range(N - 1, -1, -1):
        _heun_step(code, m, x, theta[n + 1], theta[n], -1.0 / N, x, k1, k2, work)
        _heun_step_vjp(code, m, x, theta[n], theta[n + 1], N, g, gtheta[n], gtheta[n + 1],
                       y, cot, gy, gx, work)
