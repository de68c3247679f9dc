"""Numba kernels of the residual families f(x, theta) shared by :mod:`theory.resnet` and :mod:`theory.momentum`.

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults. Both packages
evaluate the same families with the same parameter layouts (``resnet-node`` Eq. (1) applies f with the step
1/N; Sander's thesis, chapter 4, Eq. (4.2), applies it scaled by 1 - gamma), so the evaluation
:func:`residual`, its vector-Jacobian products :func:`residual_vjp`, the row products and the finiteness
counts live here, once, and each package's kernels call them.

* ``x`` is a batch of states, ``(B, d)``; ``th`` is one layer's flat parameter vector, ``(P,)``.
* ``code`` selects the residual family and ``m`` is the hidden width of the perceptron family
  (0 otherwise). Family codes and formulas:

  ====  ===========  ==============================  ======================
  code  name         f(x, th)                        th layout (P)
  ====  ===========  ==============================  ======================
  0     linear       theta x                         theta (d, d) row-major
  1     tanh         tanh(theta x)                   theta (d, d)
  2     tanh_out     theta tanh(x)                   theta (d, d)
  3     mlp          V tanh(W x + b)                 V (d, m), W (m, d), b (m)
  4     bias         th                              th (d,)
  5     bias_sq      th * th (elementwise)           th (d,)
  ====  ===========  ==============================  ======================

* ``work`` is caller-allocated scratch of shape :func:`scratch_shape` ``(d, B, m)`` =
  ``(SCRATCH_VECTORS + d + 2 B, max(m, d))``: rows 0 .. SCRATCH_VECTORS - 1 hold vectors (row 0 the
  hidden layer of the perceptron family or tanh(x) of one input, row 1 its cotangent), the next d rows
  a (d, d) block, then two (B, d) blocks for batched products. :func:`residual` uses the rows and the first
  (B, d) block only (``blocks=1``); :func:`residual_vjp` uses all of them. The kernels read the blocks
  through ``SCRATCH_VECTORS`` (a compile-time constant), not through literals.
"""

import numpy as np
from numba import njit

from ._blas import gemm_nn, gemm_nt, gemm_tn
from ._tanh import tanh

__all__ = ["LINEAR", "TANH", "TANH_OUT", "MLP", "BIAS", "BIAS_SQ", "BLAS_MIN_WORK",
           "BLAS_MIN_D_SINGLE", "BLAS_MIN_WORK_FORWARD", "ROW_REASSOC_MIN_D", "SCRATCH_VECTORS", "scratch_shape",
           "use_blas_forward", "use_blas", "matvec", "matvec_reassoc", "count_nonfinite", "count_nonfinite_rows",
           "product_check", "mlp_hidden", "residual", "residual_step", "residual_vjp"]

LINEAR, TANH, TANH_OUT, MLP, BIAS, BIAS_SQ = 0, 1, 2, 3, 4, 5

# Compilation flags of every kernel. error_model="numpy": a float division by zero gives IEEE inf or
# nan (caught by the API's finiteness checks) instead of raising inside the kernel, which also lets
# loops vectorise. fastmath={"contract"}: the one fast-math flag used, allowing a*b + c to become a
# fused multiply-add (one rounding instead of two); it keeps IEEE NaN and infinity semantics, unlike
# "nnan" and "ninf", which are never set. It makes the tanh loops ~1.5x faster. "reassoc" (sums in
# an order of the compiler's choosing) is set on two kernels only, the single-input products
# matvec_reassoc (here) and theory.momentum's descending one, where its effect on rounding is stated.
_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}


# A batch of the matrix families goes to BLAS (one product per layer) from this many multiply-adds
# per layer, B d^2, on: below it, the call overhead of a BLAS product exceeds the product itself.
BLAS_MIN_WORK = 16384
BLAS_MIN_D_SINGLE = 128
BLAS_MIN_WORK_FORWARD = 4096


#: rows of vectors at the top of the scratch array ``work`` (rows 0 and 1 used, row 2 spare); the (d, d)
#: block follows at row SCRATCH_VECTORS, the (B, d) blocks at SCRATCH_VECTORS + d and SCRATCH_VECTORS + d + B
SCRATCH_VECTORS = 3


def scratch_shape(d, B, m, blocks=2):
    """Shape of the scratch ``work`` for states in R^d, a batch of B and hidden width m (0 outside the
    perceptron family): ``(SCRATCH_VECTORS + d + blocks B, max(m, d))``. ``blocks=2`` serves every kernel
    (:func:`residual_vjp` needs two (B, d) blocks); ``blocks=1`` suffices for :func:`residual` alone."""
    return (SCRATCH_VECTORS + d + blocks * B, max(m, d))


@njit(**_JIT, inline="always")
def use_blas_forward(B, d):
    # the forward product alone: BLAS pays from smaller batches (rows of at least 8)
    return (B > 1 and d >= 8 and B * d * d >= BLAS_MIN_WORK_FORWARD) or d >= BLAS_MIN_D_SINGLE


@njit(**_JIT, inline="always")
def use_blas(B, d):
    # a single input goes to BLAS only for long rows, where the loop below cannot keep up with a
    # vectorised product (the loop's strict summation order keeps it scalar)
    return B * d * d >= BLAS_MIN_WORK and (B > 1 or d >= BLAS_MIN_D_SINGLE)


@njit(**_JIT, inline="always")
def matvec(d, th, V, bv, O, bo):
    """O[bo, i] = sum_j th[i d + j] V[bv, j] (theta row-major (d, d)), the sum over j in increasing order.

    Eight rows at a time (then four, then one): eight independent chains of fused multiply-adds
    overlap in the pipeline instead of one chain of d dependent ones, and each V[bv, j] is loaded
    once for eight rows; each O[bo, i] is rounded exactly as by a plain row loop. Rows are passed by
    index, not as views, so that a loop over a batch creates no arrays.
    """
    i = 0
    while i + 8 <= d:
        r0 = i * d
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        a4 = 0.0
        a5 = 0.0
        a6 = 0.0
        a7 = 0.0
        for j in range(d):
            vj = V[bv, j]
            a0 += th[r0 + j] * vj
            a1 += th[r0 + d + j] * vj
            a2 += th[r0 + 2 * d + j] * vj
            a3 += th[r0 + 3 * d + j] * vj
            a4 += th[r0 + 4 * d + j] * vj
            a5 += th[r0 + 5 * d + j] * vj
            a6 += th[r0 + 6 * d + j] * vj
            a7 += th[r0 + 7 * d + j] * vj
        O[bo, i] = a0
        O[bo, i + 1] = a1
        O[bo, i + 2] = a2
        O[bo, i + 3] = a3
        O[bo, i + 4] = a4
        O[bo, i + 5] = a5
        O[bo, i + 6] = a6
        O[bo, i + 7] = a7
        i += 8
    while i + 4 <= d:
        r0 = i * d
        r1 = r0 + d
        r2 = r1 + d
        r3 = r2 + d
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(d):
            vj = V[bv, j]
            a0 += th[r0 + j] * vj
            a1 += th[r1 + j] * vj
            a2 += th[r2 + j] * vj
            a3 += th[r3 + j] * vj
        O[bo, i] = a0
        O[bo, i + 1] = a1
        O[bo, i + 2] = a2
        O[bo, i + 3] = a3
        i += 4
    while i < d:
        acc = 0.0
        r0 = i * d
        for j in range(d):
            acc += th[r0 + j] * V[bv, j]
        O[bo, i] = acc
        i += 1


@njit(**_JIT, inline="always")
def count_nonfinite(theta, n):
    """Number of NaN or infinite entries of slice ``theta[n]`` (v - v is 0 for finite v, NaN
    otherwise). An integer sum vectorises; called on each slice right after the layer has used it,
    while it is in cache, it replaces a separate validation pass over theta. The slice is indexed
    in place (no view: creating one costs as much as a whole layer at d = 4)."""
    bad = 0
    for k in range(theta.shape[1]):
        v = theta[n, k]
        bad += (v - v) != 0.0
    return bad


@njit(**_JIT, inline="always")
def count_nonfinite_rows(x):
    """Number of NaN or infinite entries of the state x (B, d) just written by a step, counted
    while it is in cache: the trajectory kernels return it beside theta's count, so that the
    caller need not read the whole trajectory once more to detect an overflow."""
    B, d = x.shape
    bad = 0
    for b in range(B):
        for i in range(d):
            v = x[b, i]
            bad += (v - v) != 0.0
    return bad


@njit(**_JIT, inline="always")
def product_check(code, theta, n, prod):
    """Non-finite entries of theta[n] for a step whose products theta_n v are ``prod`` (B, d).

    For the matrix families each entry theta_n[i, j] enters every product prod[b, i] as
    theta_n[i, j] v[b, j] (no product skipped, IEEE arithmetic): one NaN or infinite entry makes
    prod[b, i] NaN or infinite. So B d products are read instead of d^2 weights, and the slice is
    counted only when a product is not finite (a non-finite theta, or an overflow of finite values,
    which the count of the slice then tells apart). The other families count the slice."""
    if code == LINEAR or code == TANH or code == TANH_OUT:
        if count_nonfinite_rows(prod) == 0:
            return 0
    return count_nonfinite(theta, n)


@njit(**_JIT)
def mlp_hidden(m, d, x_row, th, a):
    """a = tanh(W x + b), the hidden layer of the perceptron family (W at d m, b at 2 d m in th)."""
    off_w = d * m
    off_b = 2 * d * m
    for k in range(m):
        s = th[off_b + k]
        for j in range(d):
            s += th[off_w + k * d + j] * x_row[j]
        a[k] = tanh(s)


@njit(**_JIT)
def residual(code, m, x, th, out, work, activate):
    """out[b] = f(x[b], th) for every row b of the batch.

    With ``activate`` False the TANH family stops before its outer tanh (out = theta x), so that a
    caller can fuse the tanh into its own update loop; the other families ignore the flag.

    For the matrix families a single input, or a batch with fewer than BLAS_MIN_WORK multiply-adds,
    uses row dot products; a larger batch uses one matrix product (BLAS), so its rows can differ
    from single calls in the last bit.
    """
    B, d = x.shape
    if code == LINEAR or code == TANH or code == TANH_OUT:
        if not use_blas_forward(B, d):
            for b in range(B):
                if code == TANH_OUT:
                    for j in range(d):
                        work[0, j] = tanh(x[b, j])
                    matvec(d, th, work, 0, out, b)
                else:
                    matvec(d, th, x, b, out, b)
        else:
            mat = th.reshape((d, d))
            if code == TANH_OUT:
                T = work[SCRATCH_VECTORS + d:SCRATCH_VECTORS + d + B]
                for b in range(B):
                    for j in range(d):
                        T[b, j] = tanh(x[b, j])
                if B == 1:  # a matrix-vector product (BLAS gemv), not a 1-row gemm
                    np.dot(mat, T[0], out[0])
                else:
                    gemm_nt(T, mat, out)
            elif B == 1:
                np.dot(mat, x[0], out[0])
            else:
                gemm_nt(x, mat, out)
        if code == TANH and activate:
            flat = out.reshape(B * d)
            for i in range(B * d):
                flat[i] = tanh(flat[i])
    elif code == MLP:
        for b in range(B):
            mlp_hidden(m, d, x[b], th, work[0])
            for i in range(d):
                s = 0.0
                for k in range(m):
                    s += th[i * m + k] * work[0, k]
                out[b, i] = s
    elif code == BIAS:
        for b in range(B):
            for i in range(d):
                out[b, i] = th[i]
    else:  # BIAS_SQ
        for b in range(B):
            for i in range(d):
                out[b, i] = th[i] * th[i]


@njit(**_JIT, inline="always")
def residual_step(code, m, x, th, out, work, activate):
    """:func:`residual` with its per-layer cases of a single input written in place: the linear and tanh
    families below the BLAS sizes (the same row loop, :func:`matvec`, and the same tanh) and the
    perceptron family (the same loops), bit for bit; every other case calls :func:`residual`.

    :func:`residual` serves every family, so it is compiled once as a function and called: copying it
    into each kernel would multiply the compilation time, while a call per layer is what a single
    input of d = 2 cannot afford (Heun's two residuals a layer, the momentum steps)."""
    B, d = x.shape
    if B == 1 and (code == LINEAR or code == TANH) and not use_blas_forward(1, d):
        matvec(d, th, x, 0, out, 0)
        if code == TANH and activate:
            for i in range(d):
                out[0, i] = tanh(out[0, i])
    elif B == 1 and code == MLP:
        mlp_hidden(m, d, x[0], th, work[0])
        for i in range(d):
            s = 0.0
            for k in range(m):
                s += th[i * m + k] * work[0, k]
            out[0, i] = s
    else:
        residual(code, m, x, th, out, work, activate)


@njit(**_JIT)
def residual_vjp(code, m, x, th, g, gth, gx, work, fresh):
    """Vector-Jacobian products of f at (x[b], th) with cotangents g[b].

    Adds sum_b d<g[b], f(x[b], th)>/d th to ``gth`` (P,) and writes d<g[b], f(x[b], th)>/d x[b]
    into ``gx[b]``. ``fresh`` says that ``gth`` still holds zeros, so that a product may be written
    into it directly instead of through scratch.
    """
    B, d = x.shape
    if (code == LINEAR or code == TANH or code == TANH_OUT) and B == 1 and not use_blas(B, d):
        # one row, rows 0 and 1 of work as v and h (no views): d/dtheta = h v^T, d/dv = theta^T h
        for j in range(d):
            work[0, j] = tanh(x[0, j]) if code == TANH_OUT else x[0, j]
        if code == TANH:
            matvec(d, th, work, 0, work, 1)
            for i in range(d):
                t = tanh(work[1, i])
                work[1, i] = g[0, i] * (1.0 - t * t)
        else:
            for i in range(d):
                work[1, i] = g[0, i]
        for i in range(d):
            hi = work[1, i]
            for j in range(d):
                gth[i * d + j] += hi * work[0, j]
        for j in range(d):
            gx[0, j] = 0.0
        for i in range(d):
            hi = work[1, i]
            for j in range(d):
                gx[0, j] += th[i * d + j] * hi
        if code == TANH_OUT:
            for j in range(d):
                gx[0, j] *= 1.0 - work[0, j] * work[0, j]
    elif code == LINEAR or code == TANH or code == TANH_OUT:
        # V = v(X) (B, d) with v(x) = x or tanh(x); H (B, d) the cotangents of theta v (H = G, or
        # G * (1 - tanh(X theta^T)^2) for TANH): d/dtheta = H^T V (d, d), d/dV = H theta. For a
        # large batch the three products are BLAS calls, otherwise loops (the sum over b in order).
        blas = use_blas(B, d)
        mat = th.reshape((d, d))
        V = work[SCRATCH_VECTORS + d:SCRATCH_VECTORS + d + B]
        H = work[SCRATCH_VECTORS + d + B:SCRATCH_VECTORS + d + 2 * B]
        D = work[SCRATCH_VECTORS:SCRATCH_VECTORS + d]
        xf = x.reshape(B * d)
        Vf = V.reshape(B * d)
        Hf = H.reshape(B * d)
        gf = g.reshape(B * d)
        if code == TANH_OUT:
            for k in range(B * d):
                Vf[k] = tanh(xf[k])
        else:
            for k in range(B * d):
                Vf[k] = xf[k]
        if code == TANH:
            if blas and B == 1:
                np.dot(mat, V[0], H[0])
            elif blas:
                gemm_nt(V, mat, H)
            else:
                for b in range(B):
                    matvec(d, th, V, b, H, b)
            for k in range(B * d):
                t = tanh(Hf[k])
                Hf[k] = gf[k] * (1.0 - t * t)
        else:
            for k in range(B * d):
                Hf[k] = gf[k]
        if blas and B == 1:  # an outer product (memory-bound loop) and a gemv
            if fresh:
                for i in range(d):
                    hi = H[0, i]
                    for j in range(d):
                        gth[i * d + j] = hi * V[0, j]
            else:
                for i in range(d):
                    hi = H[0, i]
                    for j in range(d):
                        gth[i * d + j] += hi * V[0, j]
            np.dot(mat.T, H[0], gx[0])
        elif blas:
            if fresh:
                gemm_tn(H, V, gth.reshape((d, d)))
            else:
                gemm_tn(H, V, D)
                Df = D.reshape(d * d)
                for k in range(d * d):
                    gth[k] += Df[k]
            gemm_nn(H, mat, gx)
        elif d >= 8:  # rows of theta long enough to vectorise along j
            for b in range(B):
                for i in range(d):
                    hi = H[b, i]
                    for j in range(d):
                        gth[i * d + j] += hi * V[b, j]
                for j in range(d):
                    gx[b, j] = 0.0
                for i in range(d):
                    hi = H[b, i]
                    for j in range(d):
                        gx[b, j] += th[i * d + j] * hi
        else:  # very short rows: accumulators in registers (each sum still in increasing b, i)
            for i in range(d):
                for j in range(d):
                    acc = gth[i * d + j]
                    for b in range(B):
                        acc += H[b, i] * V[b, j]
                    gth[i * d + j] = acc
            for b in range(B):
                for j in range(d):
                    acc = 0.0
                    for i in range(d):
                        acc += th[i * d + j] * H[b, i]
                    gx[b, j] = acc
        if code == TANH_OUT:  # chain rule through tanh(x)
            gxf = gx.reshape(B * d)
            for k in range(B * d):
                gxf[k] *= 1.0 - Vf[k] * Vf[k]
    elif code == MLP:
        off_w = d * m
        off_b = 2 * d * m
        for b in range(B):
            mlp_hidden(m, d, x[b], th, work[0])
            # dV = g a^T; r = (V^T g) * (1 - a^2); dW = r x^T; db = r; dx = W^T r
            for i in range(d):
                for k in range(m):
                    gth[i * m + k] += g[b, i] * work[0, k]
            for k in range(m):
                s = 0.0
                for i in range(d):
                    s += th[i * m + k] * g[b, i]
                r = s * (1.0 - work[0, k] * work[0, k])
                work[1, k] = r
                gth[off_b + k] += r
                for j in range(d):
                    gth[off_w + k * d + j] += r * x[b, j]
            for j in range(d):
                s = 0.0
                for k in range(m):
                    s += th[off_w + k * d + j] * work[1, k]
                gx[b, j] = s
    elif code == BIAS:
        for b in range(B):
            for i in range(d):
                gth[i] += g[b, i]
                gx[b, i] = 0.0
    else:  # BIAS_SQ
        for b in range(B):
            for i in range(d):
                gth[i] += 2.0 * th[i] * g[b, i]
                gx[b, i] = 0.0


# From this width on, a single input's row dot products th_i . v are summed in an order chosen by
# the compiler ("reassoc": partial sums in vector lanes, added at the end), so that the loop
# vectorises and streams theta at memory speed where one in-order chain per row is bound by the
# latency of its additions (or BLAS gemv by its own overheads: about 2x the time of reading theta
# once at d = 256). The result differs from the in-order sum by rounding only (a few units of the
# last place of the sum of |th_ij v_j|). Only the flag "reassoc" is added; no NaN or infinity
# assumption is made, so a non-finite entry still propagates.
ROW_REASSOC_MIN_D = 32
_JIT_REASSOC = {"cache": True, "error_model": "numpy", "fastmath": {"contract", "reassoc"}}


@njit(**_JIT_REASSOC)
def matvec_reassoc(th, base, tr, src, w, d):
    """w[i] = sum_j th[base + i d + j] tr[src + j] for i < d (flat arrays, unsigned offsets: no
    wraparound tests), each sum in an order the compiler may choose. A NaN or infinite term still
    makes its sum NaN or infinite in any order ("reassoc" assumes nothing about finiteness), so
    theta's finiteness can be read from w (:func:`product_check`)."""
    for ii in range(d):
        i = np.uint64(ii)
        r = base + i * np.uint64(d)
        acc = 0.0
        for jj in range(d):
            j = np.uint64(jj)
            acc += th[r + j] * tr[src + j]
        w[i] = acc


