"""Numba kernels of :mod:`theory.signature` (private; the public API validates its inputs).

Levels of a truncated signature are stored flat: level k (k = 0..depth) occupies ``d**k`` entries
starting at ``offset[k]``, in row-major order of the multi-index (i_1, ..., i_k).
"""

from __future__ import annotations

import numpy as np
from numba import njit

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


@njit(cache=True)
def _segment_update(sig, off, delta, depth, d, b0, b1, vb):
    """sig <- sig (x) exp(delta) in the standard normalization (Horner scheme, levels high to low).

    New level k = sum_j A_j (x) delta^(x)(k-j) / (k-j)!, evaluated as
    (((delta/k + A_1) (x) delta/(k-1) + A_2) (x) delta/(k-2) + ...) (x) delta + A_k, reading the old A_j (j < k).
    Levels are stored with the index order reversed (i_k most significant), so that appending delta as the
    last index writes d contiguous blocks; the loops run on 1-D slices, which LLVM vectorizes.
    """
    for k in range(depth, 0, -1):
        n = d
        for i in range(d):
            b0[i] = delta[i] / k
        flip = False
        for j in range(1, k):
            aj = off[j]
            scale = 1.0 / (k - j)
            src = b1 if flip else b0
            dst = b0 if flip else b1
            a = sig[aj:aj + n]
            s_ = src[:n]
            v = vb[:n]
            for p in range(n):
                v[p] = (a[p] + s_[p]) * scale
            for i in range(d):
                di = delta[i]
                o = dst[i * n:(i + 1) * n]
                for p in range(n):
                    o[p] = v[p] * di
            n *= d
            flip = not flip
        src = b1 if flip else b0
        ak = off[k]
        t = sig[ak:ak + n]
        s_ = src[:n]
        for p in range(n):
            t[p] += s_[p]


@njit(cache=True)
def signature_flat(path, depth):
    """Standard-normalization truncated signature of the piecewise-linear path, flat levels in REVERSED index
    order: entry (i_1, ..., i_k) of level k sits at offset[k] + sum_m i_m d^(m-1). Inner products of two such
    signatures are those of the usual order; :func:`theory.signature.signature` transposes the levels."""
    npts, d = path.shape
    off = offsets(d, depth)
    sig = np.zeros(off[depth + 1])
    sig[0] = 1.0
    top = 1
    for _ in range(depth):
        top *= d
    size = max(top, d)
    b0 = np.empty(size)
    b1 = np.empty(size)
    vb = np.empty(size)
    delta = np.empty(d)
    for s in range(npts - 1):
        for i in range(d):
            delta[i] = path[s + 1, i] - path[s, i]
        _segment_update(sig, off, delta, depth, d, b0, b1, vb)
    return sig


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
