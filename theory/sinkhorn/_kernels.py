"""Numba kernels of the log-domain Sinkhorn iterations (float64, no fastmath)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _row_step(L):
    """L <- L - logsumexp over each row (the row normalisation N_R in the log domain)."""
    n, m = L.shape
    for i in range(n):
        mx = -np.inf
        for j in range(m):
            if L[i, j] > mx:
                mx = L[i, j]
        s = 0.0
        for j in range(m):
            s += math.exp(L[i, j] - mx)
        lse = mx + math.log(s)
        for j in range(m):
            L[i, j] -= lse


@njit(cache=True)
def _col_step(L):
    """L <- L - logsumexp over each column (the column normalisation N_C): the row step on L.T (a view;
    the same operations in the same order as a loop over columns)."""
    _row_step(L.T)


@njit(cache=True)
def _col_error(L):
    """max_j |sum_i exp(L_ij) - 1|."""
    n, m = L.shape
    err = 0.0
    for j in range(m):
        s = 0.0
        for i in range(n):
            s += math.exp(L[i, j])
        e = abs(s - 1.0)
        if e > err:
            err = e
    return err


@njit(cache=True)
def sinkhorn_log(L, n_iter, tol, max_iter):
    """Alternate row and column log-normalisations of ``L`` in place, starting with rows.

    With ``n_iter > 0`` exactly ``n_iter`` normalisations are made. With ``n_iter == 0`` the
    iterations run until, after a row step, the column error max_j |sum_i K_ij - 1| is at most
    ``tol`` (or ``max_iter`` normalisations were made). Returns (normalisations made, column error
    after the last row step, or -1 when n_iter > 0).
    """
    if n_iter > 0:
        for it in range(n_iter):
            if it % 2 == 0:
                _row_step(L)
            else:
                _col_step(L)
        return n_iter, -1.0
    _row_step(L)
    count = 1
    err = _col_error(L)
    while err > tol and count + 2 <= max_iter:
        _col_step(L)
        _row_step(L)
        count += 2
        err = _col_error(L)
    return count, err


#: logit range below which the scaling form runs (exp of the shifted logits stays above 1e-261)
SCALING_MAX_RANGE = 600.0
#: a scaling factor outside [1/ABSORB, ABSORB] is absorbed into the logits
_ABSORB = 1e100


@njit(cache=True)
def _exp_into(L, K):
    n, m = L.shape
    for i in range(n):
        for j in range(m):
            K[i, j] = math.exp(L[i, j])


@njit(cache=True)
def _add_logs(L, u, v):
    """L <- L + log u_i + log v_j."""
    n, m = L.shape
    for i in range(n):
        lu = math.log(u[i])
        for j in range(m):
            L[i, j] += lu + math.log(v[j])


@njit(cache=True)
def _absorb(L, K, u, v):
    """L <- L + log u_i + log v_j, K <- exp(L), u = v = 1."""
    _add_logs(L, u, v)
    _exp_into(L, K)
    u[:] = 1.0
    v[:] = 1.0


@njit(cache=True)
def _row_scale(K, v, u):
    """u_i = 1 / sum_j K_ij v_j (the row normalisation N_R on diag(u) K diag(v)); four rows at a time."""
    n, m = K.shape
    i = 0
    while i + 4 <= n:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for j in range(m):
            vj = v[j]
            s0 += K[i, j] * vj
            s1 += K[i + 1, j] * vj
            s2 += K[i + 2, j] * vj
            s3 += K[i + 3, j] * vj
        u[i] = 1.0 / s0
        u[i + 1] = 1.0 / s1
        u[i + 2] = 1.0 / s2
        u[i + 3] = 1.0 / s3
        i += 4
    while i < n:
        s = 0.0
        for j in range(m):
            s += K[i, j] * v[j]
        u[i] = 1.0 / s
        i += 1


@njit(cache=True)
def _col_sums(K, u, t):
    """t_j = sum_i u_i K_ij (rows in increasing order; contiguous, vectorisable over j)."""
    n, m = K.shape
    t[:] = 0.0
    for i in range(n):
        ui = u[i]
        for j in range(m):
            t[j] += ui * K[i, j]


@njit(cache=True)
def _out_of_range(w):
    for k in range(w.shape[0]):
        if not (1.0 / _ABSORB <= w[k] <= _ABSORB):
            return True
    return False


@njit(cache=True)
def sinkhorn_scaling(L, n_iter, tol, max_iter):
    """The same iterations as :func:`sinkhorn_log` (rows first, in place on ``L``, same return values), written
    on scalings: K = diag(u) exp(L) diag(v), a row step sets u_i = 1 / (exp(L) v)_i and a column step
    v_j = 1 / (u^T exp(L))_j, so that each normalisation is a matrix-vector product instead of n m exponentials.
    A scaling leaving [1e-100, 1e100] is absorbed into L (log-domain stabilisation), and L finally receives
    log u_i + log v_j. Requires max L = 0 and min L >= -SCALING_MAX_RANGE (the caller falls back to
    :func:`sinkhorn_log` otherwise)."""
    n, m = L.shape
    K = np.empty((n, m))
    _exp_into(L, K)
    u = np.ones(n)
    v = np.ones(m)
    t = np.empty(m)
    if n_iter > 0:
        for it in range(n_iter):
            if it % 2 == 0:
                _row_scale(K, v, u)
                if _out_of_range(u):
                    _absorb(L, K, u, v)
            else:
                _col_sums(K, u, t)
                for j in range(m):
                    v[j] = 1.0 / t[j]
                if _out_of_range(v):
                    _absorb(L, K, u, v)
        _add_logs(L, u, v)
        return n_iter, -1.0
    _row_scale(K, v, u)
    if _out_of_range(u):
        _absorb(L, K, u, v)
    count = 1
    _col_sums(K, u, t)
    err = 0.0
    for j in range(m):
        e = abs(v[j] * t[j] - 1.0)
        if e > err:
            err = e
    while err > tol and count + 2 <= max_iter:
        for j in range(m):
            v[j] = 1.0 / t[j]
        if _out_of_range(v):
            _absorb(L, K, u, v)
        _row_scale(K, v, u)
        if _out_of_range(u):
            _absorb(L, K, u, v)
        count += 2
        _col_sums(K, u, t)
        err = 0.0
        for j in range(m):
            e = abs(v[j] * t[j] - 1.0)
            if e > err:
                err = e
    _add_logs(L, u, v)
    return count, err
