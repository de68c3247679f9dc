"""Numba kernels of theory.icl (private): the merged-monomial loss and its gradient."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def grouped_loss_grad(p, C, gid, target, n_groups, want_grad):
    """Sum over groups of (sum_{(i,t,j) in group} p_t C_ij - [group is the target of i])^2, and its gradient.

    p: (T,), C: (d, d), gid: (d, T, d) int64 group ids (offset per output coordinate), target: (d,) int64.
    """
    d = C.shape[0]
    T = p.shape[0]
    coef = np.zeros(n_groups)
    for i in range(d):
        for t in range(T):
            pt = p[t]
            for j in range(d):
                coef[gid[i, t, j]] += pt * C[i, j]
    for i in range(d):
        coef[target[i]] -= 1.0
    loss = 0.0
    for g in range(n_groups):
        loss += coef[g] * coef[g]
    gp = np.zeros(T)
    gC = np.zeros((d, d))
    if want_grad:
        for i in range(d):
            for t in range(T):
                for j in range(d):
                    g2 = 2.0 * coef[gid[i, t, j]]
                    gp[t] += g2 * C[i, j]
                    gC[i, j] += g2 * p[t]
    return loss, gp, gC


@njit(cache=True)
def _population(A, B, P, gid, target, ngroups, want_grad, gA, gB, gP):
    """Loss (6.3) summed over the context lengths stacked in gid (nT, d, Tmax, d); fills gA, gB, gP."""
    H, d = A.shape
    nT = gid.shape[0]
    C = B.T @ A
    gC = np.zeros((d, d))
    total = 0.0
    for k in range(nT):
        T = k + 2
        p = P[T - 2, :T].copy()
        loss, gp, gc = grouped_loss_grad(p, C, gid[k, :, :T, :], target[k], ngroups[k], want_grad)
        total += loss
        if want_grad:
            for i in range(d):
                for j in range(d):
                    gC[i, j] += gc[i, j]
            for t in range(T):
                gP[T - 2, t] = gp[t]
    if want_grad:
        gA[:, :] = B @ gC
        gB[:, :] = A @ gC.T
    return total


@njit(cache=True)
def flow(A, B, P, gid, target, ngroups, lr, steps, tol, train_P, losses):
    """Explicit Euler steps of the gradient flow on (6.3), in place; losses[k] = loss before step k. Returns the
    number of steps taken."""
    gA = np.zeros_like(A)
    gB = np.zeros_like(B)
    gP = np.zeros_like(P)
    k = 0
    while True:
        loss = _population(A, B, P, gid, target, ngroups, True, gA, gB, gP)
        losses[k] = loss
        if k >= steps or loss <= tol or not np.isfinite(loss):
            break
        A -= lr * gA
        B -= lr * gB
        if train_P:
            P -= lr * gP
        k += 1
    return k
