"""Numba kernels of :mod:`theory.signature` (private; the public API validates its inputs).

Levels of a truncated signature are stored flat: level k (k = 0..depth) occupies ``d**k`` entries
starting at ``offset[k]``, in row-major order of the multi-index (i_1, ..., i_k).

The signature kernels (:func:`signature_levels`, :func:`signature_batch_levels`, :func:`kernel_levels`)
read the path backwards and multiply from the left, S <- exp(delta) (x) S, so that each Horner step
prepends delta: d contiguous blocks per level, in the levels' own row-major order (no transposition).
The top level's increments delta (x) v depend on the lower levels only; they are kept for up to eight
segments and added as one small matrix product (:func:`_flush_top`), which loads and stores the top
level once per eight segments instead of once per segment. At depth 2 the whole second level is one
matrix product, S_2 = sum_s (S_1(s) + delta_s / 2) (x) delta_s = Y^T Delta over the segments s, computed
by NumPy's BLAS over blocks of segments (:func:`_level2_blocks`). Compiled with ``fastmath={"contract"}``
(fused multiply-adds, IEEE semantics kept; docs/conventions.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._blas import gemm_tn

IDENTITY, TANH, LOGISTIC = 0, 1, 2


@njit(cache=True)
def offsets(d, depth):
    off = np.empty(depth + 2, dtype=np.int64)
    off[0] = 0
    size = 1
    for k in range(depth + 1):
        off[k + 1] = off[k] + size
        size *= d
    return off


#: the compile flags of the signature kernels: ``contract`` only (a*b + c may become one fused multiply-add)
_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}
#: largest number of segments whose top-level increments are deferred and applied together
_CHUNK = 8
#: entries of the deferred top-level vectors held at most (8 MiB of float64)
_CHUNK_ENTRIES = 1 << 20
#: largest d^(depth-1) whose top level is updated at every segment, not deferred
_DIRECT_MAX = 16
#: width of the column tiles of the deferred top-level update (kept in the first-level cache)
_TILE = 512
#: multiply-adds of one BLAS product of the depth-2 kernel at most: 2^18, the size up to which OpenBLAS computes
#: a product on the calling thread (so that one path's signature uses one thread, also inside a parallel batch)
_BLAS_ONE_THREAD = 1 << 18
#: segments of one block of the depth-2 product at most (two blocks of 4096 x d entries stay in the L2 cache)
_LEVEL2_BLOCK = 4096
#: largest d computed by the depth-2 product (a block then has 2^18 / d^2 >= 16 segments)
_LEVEL2_MAX_D = 128

# Indexing convention of the loops below: every index is an unsigned 64-bit integer (offsets, sizes and
# range variables), so that Numba emits no wrap-around test for negative indices and creates no array
# views (whose reference counts cost more than the arithmetic of a short level); LLVM then vectorizes
# the contiguous inner loops.


@njit(**_JIT, inline="always")
def _horner_vector(sig, off, delta, k, d, recip, v, vb):
    """Write B_{k-1} into ``v[vb:vb + d**(k-1)]`` (k >= 2) and return d**(k-1) (uint64): new level k of
    sig <- exp(delta) (x) sig (standard normalization) is A_k + delta (x) (A_{k-1} + B_{k-1}).

    Horner from the left: B_1 = delta / k, B_{j+1} = (delta / (k - j)) (x) (A_j + B_j), so that
    delta (x) (A_{k-1} + B_{k-1}) = sum_{m=1}^{k} delta^{(x)m} / m! (x) A_{k-m}. Levels are in row-major order
    (i_1 most significant), so prepending delta writes d contiguous blocks; B_{j+1} is expanded in place,
    block d - 1 first (block 0 reads and writes the same entries), in one loop for d = 2 and 3.
    """
    ud = np.uint64(d)
    rk = recip[k]
    for i in range(ud):
        v[vb + i] = delta[i] * rk
    n = ud
    for j in range(1, k - 1):
        aj = off[j]
        c = recip[k - j]
        if d == 2:
            c0, c1 = delta[0] * c, delta[1] * c
            b1 = vb + n
            for p in range(n):
                h = v[vb + p] + sig[aj + p]
                v[b1 + p] = c1 * h
                v[vb + p] = c0 * h
        elif d == 3:
            c0, c1, c2 = delta[0] * c, delta[1] * c, delta[2] * c
            b1 = vb + n
            b2 = b1 + n
            for p in range(n):
                h = v[vb + p] + sig[aj + p]
                v[b1 + p] = c1 * h
                v[b2 + p] = c2 * h
                v[vb + p] = c0 * h
        else:
            for p in range(n):
                v[vb + p] += sig[aj + p]
            for i in range(ud - np.uint64(1), np.uint64(0), np.int64(-1)):
                ci = delta[i] * c
                base = vb + i * n
                for p in range(n):
                    v[base + p] = ci * v[vb + p]
            c0 = delta[0] * c
            for p in range(n):
                v[vb + p] *= c0
        n *= ud
    return n


@njit(**_JIT, inline="always")
def _lower_levels(sig, off, delta, top, d, recip, buf):
    """Levels ``top`` down to 1 of sig <- exp(delta) (x) sig, in place (each reads only lower, older levels):
    level k += delta (x) (A_{k-1} + B_{k-1}) (:func:`_horner_vector`)."""
    zero = np.uint64(0)
    ud = np.uint64(d)
    for k in range(top, 1, -1):
        n = _horner_vector(sig, off, delta, k, d, recip, buf, zero)
        ak = off[k]
        a = off[k - 1]
        if d == 2:
            d0, d1 = delta[0], delta[1]
            l1 = ak + n
            for p in range(n):
                h = buf[p] + sig[a + p]
                sig[ak + p] += d0 * h
                sig[l1 + p] += d1 * h
        elif d == 3:
            d0, d1, d2 = delta[0], delta[1], delta[2]
            l1 = ak + n
            l2 = l1 + n
            for p in range(n):
                h = buf[p] + sig[a + p]
                sig[ak + p] += d0 * h
                sig[l1 + p] += d1 * h
                sig[l2 + p] += d2 * h
        else:
            for p in range(n):
                buf[p] += sig[a + p]
            for i in range(ud):
                di = delta[i]
                base = ak + i * n
                for p in range(n):
                    sig[base + p] += di * buf[p]
    for i in range(ud):
        sig[np.uint64(1) + i] += delta[i]


@njit(**_JIT)
def _flush_top(sig, top, m, d, vs, ds, count):
    """Top level (d blocks of m entries from ``top``) += ds[s, i] * vs[s*m:(s+1)*m] in block i for s < count.

    A small matrix product, top (d x m) += ds^T (d x count) vs (count x m), in column tiles that stay in cache.
    With eight segments (the usual chunk), two blocks at a time: each entry of vs is loaded once for sixteen
    multiply-adds, each entry of the level loaded and stored once per eight segments."""
    tile = np.uint64(_TILE)
    one = np.uint64(1)
    ud = np.uint64(d)
    for q0 in range(np.uint64(0), m, tile):
        w = min(tile, m - q0)
        if count == np.uint64(8):
            r0 = q0
            r1 = r0 + m
            r2 = r1 + m
            r3 = r2 + m
            r4 = r3 + m
            r5 = r4 + m
            r6 = r5 + m
            r7 = r6 + m
            i = np.uint64(0)
            while i + one < ud:
                j = i + one
                a0, a1, a2, a3 = ds[0, i], ds[1, i], ds[2, i], ds[3, i]
                a4, a5, a6, a7 = ds[4, i], ds[5, i], ds[6, i], ds[7, i]
                b0, b1, b2, b3 = ds[0, j], ds[1, j], ds[2, j], ds[3, j]
                b4, b5, b6, b7 = ds[4, j], ds[5, j], ds[6, j], ds[7, j]
                ti = top + i * m + q0
                tj = ti + m
                for q in range(w):
                    x0 = vs[r0 + q]
                    x1 = vs[r1 + q]
                    x2 = vs[r2 + q]
                    x3 = vs[r3 + q]
                    x4 = vs[r4 + q]
                    x5 = vs[r5 + q]
                    x6 = vs[r6 + q]
                    x7 = vs[r7 + q]
                    sig[ti + q] += (a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3) + (a4 * x4 + a5 * x5 + a6 * x6 + a7 * x7)
                    sig[tj + q] += (b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3) + (b4 * x4 + b5 * x5 + b6 * x6 + b7 * x7)
                i += np.uint64(2)
            if i < ud:
                a0, a1, a2, a3 = ds[0, i], ds[1, i], ds[2, i], ds[3, i]
                a4, a5, a6, a7 = ds[4, i], ds[5, i], ds[6, i], ds[7, i]
                ti = top + i * m + q0
                for q in range(w):
                    sig[ti + q] += ((a0 * vs[r0 + q] + a1 * vs[r1 + q] + a2 * vs[r2 + q] + a3 * vs[r3 + q])
                                    + (a4 * vs[r4 + q] + a5 * vs[r5 + q] + a6 * vs[r6 + q] + a7 * vs[r7 + q]))
        else:
            for i in range(ud):
                t = top + i * m + q0
                s = np.uint64(0)
                while s + np.uint64(4) <= count:
                    c0, c1, c2, c3 = ds[s, i], ds[s + one, i], ds[s + np.uint64(2), i], ds[s + np.uint64(3), i]
                    r0 = s * m + q0
                    r1 = r0 + m
                    r2 = r1 + m
                    r3 = r2 + m
                    for q in range(w):
                        sig[t + q] += (c0 * vs[r0 + q] + c1 * vs[r1 + q]) + (c2 * vs[r2 + q] + c3 * vs[r3 + q])
                    s += np.uint64(4)
                while s < count:
                    c0 = ds[s, i]
                    r0 = s * m + q0
                    for q in range(w):
                        sig[t + q] += c0 * vs[r0 + q]
                    s += one


@njit(**_JIT)
def _chunk(d, depth):
    """(segments per deferred top-level update, d^(depth-1)): at depth 2 with d <= 128, the segments of one block
    of :func:`_level2_blocks` (4096, fewer where a product would exceed 2^18 multiply-adds); otherwise 8, halved
    while the deferred vectors would exceed max(2^20, half the signature) entries."""
    if depth == 2 and d <= _LEVEL2_MAX_D:
        return min(_LEVEL2_BLOCK, _BLAS_ONE_THREAD // (d * d)), d
    m = 1
    size = 1
    for _ in range(depth - 1):
        m *= d
        size += m
    size += m * d
    c = _CHUNK
    while c > 1 and c * m > max(_CHUNK_ENTRIES, size // 2):
        c //= 2
    return c, m


@njit(**_JIT)
def _level2_blocks(paths, b, sig, y, dl, prod):
    """Level 2 of the signature of ``paths[b]`` (shape (n, d)) added to ``sig[1 + d:1 + d + d^2]``, as a matrix
    product over blocks of segments: S_2 = sum_s (S_1(s) + delta_s / 2) (x) delta_s, with S_1(s) = x_s - x_0 and
    delta_s = x_{s+1} - x_s, is Y^T Delta for the rows y_s = (x_s - x_0) + delta_s / 2 and delta_s; each block of
    ``y.shape[0]`` rows is one BLAS product into ``prod`` (d x d), then added. The order of the path's segments
    does not matter at this depth (the sum commutes), so the path is read forwards."""
    npts, d = paths.shape[1], paths.shape[2]
    rows = y.shape[0]
    top = 1 + d
    s0 = 0
    while s0 < npts - 1:
        count = min(rows, npts - 1 - s0)
        for s in range(count):
            for i in range(d):
                a = paths[b, s0 + s, i]
                step = paths[b, s0 + s + 1, i] - a
                dl[s, i] = step
                y[s, i] = (a - paths[b, 0, i]) + 0.5 * step
        gemm_tn(y[:count], dl[:count], prod)
        for i in range(d):
            for j in range(d):
                sig[top + i * d + j] += prod[i, j]
        s0 += count


@njit(**_JIT)
def _signature_into(paths, b, depth, factorial, sig, off, recip, delta, buf, vs, ds, chunk, m):
    """Truncated signature of the path ``paths[b]`` (shape (n, d)) into ``sig`` (natural row-major order, levels
    0..depth), scaled by k! when ``factorial``; returns False when an entry is not finite (overflow).

    The path is read backwards, S = exp(d_0) (x) ... (x) exp(d_{n-2}) built as sig <- exp(d_s) (x) sig; the top
    level's increments d_s (x) v_s depend on lower levels only, so up to ``chunk`` of them are kept and added
    together (:func:`_flush_top`)."""
    npts, d = paths.shape[1], paths.shape[2]
    ud = np.uint64(d)
    um = np.uint64(m)
    for p in range(sig.shape[0]):
        sig[p] = 0.0
    sig[0] = 1.0
    if depth == 1:
        for i in range(d):
            sig[1 + i] = paths[b, npts - 1, i] - paths[b, 0, i]
    elif depth == 2 and d <= _LEVEL2_MAX_D:
        # the second level as matrix products over blocks of ``chunk`` segments (vs and buf hold Y and Y^T Delta)
        _level2_blocks(paths, b, sig, vs.reshape((chunk, d)), ds, buf.reshape((d, d)))
    elif depth >= 2 and m <= _DIRECT_MAX:
        # small top level: every level updated at every segment (the deferred update's bookkeeping costs more)
        for s in range(npts - 2, -1, -1):
            for i in range(d):
                delta[i] = paths[b, s + 1, i] - paths[b, s, i]
            _lower_levels(sig, off, delta, depth, d, recip, buf)
    elif depth >= 2:
        top = off[depth]
        a = off[depth - 1]
        count = np.uint64(0)
        uchunk = np.uint64(chunk)
        one = np.uint64(1)
        for s in range(npts - 2, -1, -1):
            vb = count * um
            if depth == 2:
                # one loop: delta, its copy for the deferred update, v = A_1 + delta / 2, and A_1 += delta
                for i in range(ud):
                    dl = paths[b, s + 1, i] - paths[b, s, i]
                    ds[count, i] = dl
                    vs[vb + i] = sig[one + i] + 0.5 * dl
                    sig[one + i] += dl
            else:
                for i in range(d):
                    dl = paths[b, s + 1, i] - paths[b, s, i]
                    delta[i] = dl
                    ds[count, i] = dl
                n = _horner_vector(sig, off, delta, depth, d, recip, vs, vb)
                for p in range(n):
                    vs[vb + p] += sig[a + p]
            count += one
            if count == uchunk:
                _flush_top(sig, top, um, d, vs, ds, count)
                count = np.uint64(0)
            if depth > 2:
                _lower_levels(sig, off, delta, depth - 1, d, recip, buf)
        if count > np.uint64(0):
            _flush_top(sig, top, um, d, vs, ds, count)
    if depth >= 2:
        # level 1 is the increment of the whole path: one rounding (the running sum of deltas has n - 1)
        for i in range(d):
            sig[1 + i] = paths[b, npts - 1, i] - paths[b, 0, i]
    ok = True
    fact = 1.0
    for k in range(depth + 1):
        if factorial:
            fact *= max(k, 1)
        for p in range(off[k], off[k + 1]):
            x = sig[p] * fact if factorial else sig[p]
            sig[p] = x
            if not (abs(x) < np.inf):
                ok = False
    return ok


@njit(**_JIT)
def _workspace(d, depth):
    off = offsets(d, depth).astype(np.uint64)
    recip = np.empty(depth + 1)
    recip[0] = 1.0
    for k in range(1, depth + 1):
        recip[k] = 1.0 / k
    chunk, m = _chunk(d, depth)
    lower = 1
    for _ in range(max(depth - 1, 1)):
        lower *= d
    if depth == 2 and d <= _LEVEL2_MAX_D:
        lower = d * d  # the product Y^T Delta of one block (:func:`_level2_blocks`)
    return off, recip, chunk, m, np.empty(lower), np.empty(chunk * m), np.empty((chunk, d)), np.empty(d)


@njit(**_JIT)
def signature_levels(path, depth, factorial):
    """Truncated signature, levels 0..depth flat in row-major order (entry (i_1..i_k) of level k at
    offset[k] + sum_m i_m d^(k-m)); standard normalization, or factorial when ``factorial``. Returns
    (flat levels, all finite)."""
    d = path.shape[1]
    off, recip, chunk, m, buf, vs, ds, delta = _workspace(d, depth)
    sig = np.empty(off[depth + 1])
    ok = _signature_into(path.reshape((1, path.shape[0], d)), 0, depth, factorial, sig, off, recip, delta, buf, vs,
                         ds, chunk, m)
    return sig, ok


@njit(parallel=True, **_JIT)
def signature_batch_levels(paths, depth, factorial, n_parts):
    """:func:`signature_levels` of every path of the batch ``paths`` (shape (B, n, d)), in parallel: the batch is
    cut into ``n_parts`` contiguous parts (one per thread), each with one workspace. Returns (flat levels of
    shape (B, size), all finite); each path's values are those of :func:`signature_levels`, bit for bit."""
    nb, _, d = paths.shape
    size = offsets(d, depth)[depth + 1]
    out = np.empty((nb, size))
    parts = max(1, min(n_parts, nb))
    good = np.ones(parts, dtype=np.bool_)
    for c in prange(parts):
        lo = c * nb // parts
        hi = (c + 1) * nb // parts
        off, recip, chunk, m, buf, vs, ds, delta = _workspace(d, depth)
        sig = np.empty(size)
        for b in range(lo, hi):
            if not _signature_into(paths, b, depth, factorial, sig, off, recip, delta, buf, vs, ds, chunk, m):
                good[c] = False
            for p in range(size):
                out[b, p] = sig[p]
    ok = True
    for c in range(parts):
        ok = ok and good[c]
    return out, ok


@njit(**_JIT)
def kernel_levels(x, y, depth):
    """Truncated signature kernel sum_k (k!)^2 <S_k(x), S_k(y)> (standard levels S_k), both signatures in one
    call with one workspace; returns (kernel, all finite)."""
    d = x.shape[1]
    off, recip, chunk, m, buf, vs, ds, delta = _workspace(d, depth)
    sx = np.empty(off[depth + 1])
    sy = np.empty(off[depth + 1])
    okx = _signature_into(x.reshape((1, x.shape[0], d)), 0, depth, False, sx, off, recip, delta, buf, vs, ds, chunk, m)
    oky = _signature_into(y.reshape((1, y.shape[0], d)), 0, depth, False, sy, off, recip, delta, buf, vs, ds, chunk, m)
    total = 0.0
    w = 1.0
    for k in range(depth + 1):
        if k > 0:
            w *= k
        acc = 0.0
        for p in range(off[k], off[k + 1]):
            acc += sx[p] * sy[p]
        total += (w * w) * acc
    return total, okx and oky and abs(total) < np.inf


@njit(cache=True)
def chen_flat(a, b, d, depth, factorial):
    """Product of two truncated signatures; binomial weights C(k, j) when ``factorial``."""
    off = offsets(d, depth)
    out = np.zeros(off[depth + 1])
    for k in range(depth + 1):
        for j in range(k + 1):
            w = 1.0
            if factorial:
                # binomial C(k, j)
                w = 1.0
                for t in range(1, j + 1):
                    w = w * (k - j + t) / t
            na = off[j + 1] - off[j]
            nb = off[k - j + 1] - off[k - j]
            for p in range(na):
                va = a[off[j] + p] * w
                base = off[k] + p * nb
                for q in range(nb):
                    out[base + q] += va * b[off[k - j] + q]
    return out


# ----------------------------------------------------------------------------- activations

@njit(cache=True)
def act(z, kind):
    if kind == IDENTITY:
        return z
    if kind == TANH:
        return np.tanh(z)
    # logistic, computed without overflow for large |z|
    if z >= 0:
        return 1.0 / (1.0 + np.exp(-z))
    ez = np.exp(z)
    return ez / (1.0 + ez)


@njit(cache=True)
def _field_rnn(h, x, U, V, b, kind, out):
    e = U.shape[0]
    for j in range(e):
        s = b[j]
        for m in range(e):
            s += U[j, m] * h[m]
        for m in range(x.shape[0]):
            s += V[j, m] * x[m]
        out[j] = act(s, kind)


@njit(cache=True)
def rnn_forward(xs, U, V, b, kind, h0):
    """Residual RNN (5.1): h_{j+1} = h_j + f(h_j, x_{j+1}) / T, T = len(xs)."""
    T = xs.shape[0]
    e = U.shape[0]
    hs = np.empty((T + 1, e))
    hs[0] = h0
    f = np.empty(e)
    for j in range(T):
        _field_rnn(hs[j], xs[j], U, V, b, kind, f)
        for m in range(e):
            hs[j + 1, m] = hs[j, m] + f[m] / T
    return hs


@njit(cache=True)
def ode_rk4(path, U, V, b, kind, h0, substeps):
    """dH = f(H, X_t) dt, X piecewise linear through ``path`` at times j/(n-1); RK4, H at the knots."""
    npts, d = path.shape
    e = U.shape[0]
    nseg = npts - 1
    hs = np.empty((npts, e))
    hs[0] = h0
    h = h0.copy()
    dt = 1.0 / (nseg * substeps)
    x = np.empty(d)
    k1 = np.empty(e)
    k2 = np.empty(e)
    k3 = np.empty(e)
    k4 = np.empty(e)
    tmp = np.empty(e)
    for s in range(nseg):
        for q in range(substeps):
            for c in range(3):
                frac = (q + 0.5 * c) / substeps
                for i in range(d):
                    x[i] = path[s, i] + frac * (path[s + 1, i] - path[s, i])
                if c == 0:
                    _field_rnn(h, x, U, V, b, kind, k1)
                    for m in range(e):
                        tmp[m] = h[m] + 0.5 * dt * k1[m]
                elif c == 1:
                    _field_rnn(tmp, x, U, V, b, kind, k2)
                    for m in range(e):
                        tmp[m] = h[m] + 0.5 * dt * k2[m]
                    _field_rnn(tmp, x, U, V, b, kind, k3)
                    for m in range(e):
                        tmp[m] = h[m] + dt * k3[m]
                else:
                    _field_rnn(tmp, x, U, V, b, kind, k4)
            for m in range(e):
                h[m] += dt * (k1[m] + 2.0 * k2[m] + 2.0 * k3[m] + k4[m]) / 6.0
        hs[s + 1] = h
    return hs


@njit(cache=True)
def _cde_rhs(hb, delta, W, b, kind, c, e, d, out):
    """F(hb) delta for the field (5.5): first e coords c sigma(W hb + b) delta_time, last d coords delta_x."""
    eb = e + d
    for j in range(e):
        s = b[j]
        for m in range(eb):
            s += W[j, m] * hb[m]
        out[j] = c * act(s, kind) * delta[d]
    for i in range(d):
        out[e + i] = delta[i]


@njit(cache=True)
def cde_rk4(path_bar, W, b, kind, c, hb0, substeps):
    """dHb = F(Hb) dXb along the piecewise-linear time-augmented path; RK4 per segment."""
    npts = path_bar.shape[0]
    d = path_bar.shape[1] - 1
    e = W.shape[0]
    eb = e + d
    out = np.empty((npts, eb))
    out[0] = hb0
    h = hb0.copy()
    delta = np.empty(d + 1)
    k1 = np.empty(eb)
    k2 = np.empty(eb)
    k3 = np.empty(eb)
    k4 = np.empty(eb)
    tmp = np.empty(eb)
    ds = 1.0 / substeps
    for s in range(npts - 1):
        for i in range(d + 1):
            delta[i] = path_bar[s + 1, i] - path_bar[s, i]
        for q in range(substeps):
            _cde_rhs(h, delta, W, b, kind, c, e, d, k1)
            for m in range(eb):
                tmp[m] = h[m] + 0.5 * ds * k1[m]
            _cde_rhs(tmp, delta, W, b, kind, c, e, d, k2)
            for m in range(eb):
                tmp[m] = h[m] + 0.5 * ds * k2[m]
            _cde_rhs(tmp, delta, W, b, kind, c, e, d, k3)
            for m in range(eb):
                tmp[m] = h[m] + ds * k3[m]
            _cde_rhs(tmp, delta, W, b, kind, c, e, d, k4)
            for m in range(eb):
                h[m] += ds * (k1[m] + 2.0 * k2[m] + 2.0 * k3[m] + k4[m]) / 6.0
        out[s + 1] = h
    return out


# ----------------------------------------------------------------------- truncated Taylor jets

@njit(cache=True)
def jet_mul(a, bb, mul_idx, out):
    n = a.shape[0]
    out[:] = 0.0
    for p in range(n):
        ap = a[p]
        if ap == 0.0:
            continue
        for q in range(n):
            r = mul_idx[p, q]
            if r >= 0:
                out[r] += ap * bb[q]


@njit(cache=True)
def jet_deriv(a, m, up_idx, up_mult, out):
    """d/dw_m of the jet a (coefficient at beta = (beta_m + 1) a[beta + e_m])."""
    n = a.shape[0]
    for p in range(n):
        r = up_idx[p, m]
        out[p] = up_mult[p, m] * a[r] if r >= 0 else 0.0


@njit(cache=True)
def star_apply(G, direction, const_dir, sig_jet, mul_idx, up_idx, up_mult):
    """(F^i . grad) G for G given by e jets (rows of G) in the variables w = z - z0, z = W h + b.

    ``const_dir`` True: the direction in z-space is the constant vector ``direction`` (columns of V);
    False: it is the jet vector c U sigma(z), passed in ``sig_jet`` (e jets), ``direction`` unused.
    """
    e, n = G.shape
    out = np.zeros((e, n))
    dG = np.empty(n)
    prod = np.empty(n)
    for j in range(e):
        for m in range(e):
            jet_deriv(G[j], m, up_idx, up_mult, dG)
            if const_dir:
                cm = direction[m]
                if cm != 0.0:
                    for p in range(n):
                        out[j, p] += cm * dG[p]
            else:
                jet_mul(dG, sig_jet[m], mul_idx, prod)
                for p in range(n):
                    out[j, p] += prod[p]
    return out
