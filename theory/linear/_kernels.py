"""Numba kernels of the deep linear ResNet (``resnet-node`` Section 3.2). Private; see ``_api.py``.

Layer n (1-indexed in the paper, index n - 1 here) is the matrix A_n = I + theta_n / N; the
end-to-end matrix is Pi = A_N ... A_1 (layer 1 acts first). All products are d x d and written as
plain loops: for the small d of these experiments a loop beats a BLAS call per product.
"""

from numba import njit


@njit(cache=True)
def _matmul(A, B, out):
    """out = A @ B for square matrices (out must not alias A or B)."""
    d = A.shape[0]
    for i in range(d):
        for j in range(d):
            out[i, j] = 0.0
        for k in range(d):
            a = A[i, k]
            for j in range(d):
                out[i, j] += a * B[k, j]


@njit(cache=True)
def _layer(theta_n, N, out):
    """out = I + theta_n / N."""
    d = theta_n.shape[0]
    for i in range(d):
        for j in range(d):
            out[i, j] = theta_n[i, j] / N
        out[i, i] += 1.0


@njit(cache=True)
def prefix_suffix(theta, before, after, A):
    """before[n] = A_{n-1} ... A_1 (layers before n), after[n] = A_N ... A_{n+1} (layers after n).

    theta (N, d, d); before, after (N, d, d); A (d, d) scratch; index n here is layer n + 1.
    Returns nothing; O(N d^3).
    """
    N, d, _ = theta.shape
    for i in range(d):
        for j in range(d):
            before[0, i, j] = 1.0 if i == j else 0.0
            after[N - 1, i, j] = 1.0 if i == j else 0.0
    for n in range(1, N):
        _layer(theta[n - 1], N, A)
        _matmul(A, before[n - 1], before[n])
    for n in range(N - 2, -1, -1):
        _layer(theta[n + 1], N, A)
        _matmul(after[n + 1], A, after[n])


@njit(cache=True)
def gradient(theta, Sigma, B, before, grad, A, E, T, S, W):
    """grad[n] = (2/N) after[n]^T (Pi - B) Sigma before[n]^T for every layer; returns the loss.

    The loss is Tr((Pi - B) Sigma (Pi - B)^T). ``before`` (N, d, d) receives the prefix products;
    the suffix product after[n] is carried in ``S`` during a backward sweep, so only the prefixes
    are stored. ``A``, ``E``, ``T``, ``S``, ``W`` are (d, d) scratch; O(N d^3).
    """
    N, d, _ = theta.shape
    for i in range(d):
        for j in range(d):
            before[0, i, j] = 1.0 if i == j else 0.0
    for n in range(1, N):
        _layer(theta[n - 1], N, A)
        _matmul(A, before[n - 1], before[n])
    _layer(theta[N - 1], N, A)
    _matmul(A, before[N - 1], E)  # Pi
    for i in range(d):
        for j in range(d):
            E[i, j] -= B[i, j]
    _matmul(E, Sigma, T)  # (Pi - B) Sigma
    value = 0.0
    for i in range(d):
        for j in range(d):
            value += T[i, j] * E[i, j]
            S[i, j] = 1.0 if i == j else 0.0  # after[N - 1] = I
    scale = 2.0 / N
    for n in range(N - 1, -1, -1):
        # W = S^T T, then grad[n] = scale * W before[n]^T
        for i in range(d):
            for j in range(d):
                W[i, j] = 0.0
            for k in range(d):
                a = S[k, i]
                for j in range(d):
                    W[i, j] += a * T[k, j]
        for i in range(d):
            for j in range(d):
                acc = 0.0
                for k in range(d):
                    acc += W[i, k] * before[n, j, k]
                grad[n, i, j] = scale * acc
        if n > 0:  # after[n - 1] = after[n] A_n
            _layer(theta[n], N, A)
            _matmul(S, A, W)
            S[:, :] = W
    return value


@njit(cache=True)
def gradient_per_layer_products(theta, Sigma, B, grad, A, P, Q, R):
    """The same gradient with the products before and after each layer recomputed: O(N^2 d^3).

    The naive reference the benchmarks compare with (and an independent check in the tests).
    """
    N, d, _ = theta.shape
    # Pi
    for i in range(d):
        for j in range(d):
            P[i, j] = 1.0 if i == j else 0.0
    for n in range(N):
        _layer(theta[n], N, A)
        _matmul(A, P, Q)
        P[:, :] = Q
    for i in range(d):
        for j in range(d):
            P[i, j] -= B[i, j]
    E = P.copy()
    _matmul(E, Sigma, R)  # (Pi - B) Sigma
    for n in range(N):
        # Q = product of the layers before n, P = product of the layers after n
        for i in range(d):
            for j in range(d):
                Q[i, j] = 1.0 if i == j else 0.0
                P[i, j] = 1.0 if i == j else 0.0
        for k in range(n):
            _layer(theta[k], N, A)
            _matmul(A, Q, E)
            Q[:, :] = E
        for k in range(N - 1, n, -1):
            _layer(theta[k], N, A)
            _matmul(P, A, E)
            P[:, :] = E
        _matmul(P.T.copy(), R, E)
        _matmul(E, Q.T.copy(), A)
        for i in range(d):
            for j in range(d):
                grad[n, i, j] = 2.0 / N * A[i, j]
