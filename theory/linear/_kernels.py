"""Numba kernels of the deep linear ResNet (``resnet-node`` Section 3.2). Private; see ``_api.py``.

Layer n (1-indexed in the paper, index n - 1 here) is the matrix A_n = I + theta_n / N. The
end-to-end matrix is Pi = A_N ... A_1 (layer 1 acts first).
"""

import numpy as np
from numba import njit


@njit(cache=True)
def _layer(theta, n, N, out):
    """out = I + theta[n] / N."""
    d = theta.shape[1]
    for i in range(d):
        for j in range(d):
            out[i, j] = theta[n, i, j] / N
        out[i, i] += 1.0


@njit(cache=True)
def prefix_suffix(theta, before, after):
    """before[n] = A_{n-1} ... A_1 (layers before n), after[n] = A_N ... A_{n+1} (layers after n).

    theta (N, d, d); before, after (N, d, d); index n here is layer n + 1. O(N d^3).
    """
    N, d, _ = theta.shape
    A = np.empty((d, d))
    before[0] = np.eye(d)
    for n in range(1, N):
        _layer(theta, n - 1, N, A)
        before[n] = A @ before[n - 1]
    after[N - 1] = np.eye(d)
    for n in range(N - 2, -1, -1):
        _layer(theta, n + 1, N, A)
        after[n] = after[n + 1] @ A


@njit(cache=True)
def gradient(theta, Sigma, B, before, after, grad):
    """grad[n] = (2/N) after[n]^T (Pi - B) Sigma before[n]^T, the exact gradient of ||Pi - B||_Sigma^2.

    Returns the loss Tr((Pi - B) Sigma (Pi - B)^T).
    """
    N, d, _ = theta.shape
    prefix_suffix(theta, before, after)
    A = np.empty((d, d))
    _layer(theta, N - 1, N, A)
    E = A @ before[N - 1] - B
    ES = E @ Sigma
    for n in range(N):
        grad[n] = (2.0 / N) * (after[n].T @ ES @ before[n].T)
    return np.sum(ES * E)
