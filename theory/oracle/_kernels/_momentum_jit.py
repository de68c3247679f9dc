"""The compiled inner loop of the Momentum ResNet kernels' tolerance rule: the norms of products of step
Jacobians (kept apart so that the oracle's case and tolerance declarations import no Numba)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _products_norms(J):
    """For steps J (N, D, D): (1 + max_k sum_{n <= k} ||J_k ... J_n||_inf, max_{n <= k} ||J_k ... J_n||_inf)."""
    N, D = J.shape[0], J.shape[1]
    P = np.zeros((N, D, D))  # P[n]: the product of the steps since start n
    tmp = np.empty((D, D))
    total = 1.0
    largest = 1.0
    for k in range(N):
        for i in range(D):
            P[k, i, i] = 1.0
        acc = 0.0
        for n in range(k + 1):
            for i in range(D):
                for j in range(D):
                    v = 0.0
                    for m in range(D):
                        v += J[k, i, m] * P[n, m, j]
                    tmp[i, j] = v
            norm = 0.0
            for i in range(D):
                row = 0.0
                for j in range(D):
                    P[n, i, j] = tmp[i, j]
                    row += abs(tmp[i, j])
                norm = max(norm, row)
            acc += norm
            largest = max(largest, norm)
        total = max(total, 1.0 + acc)
    return total, largest
