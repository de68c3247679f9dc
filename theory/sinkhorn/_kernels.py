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
