"""Implementations with planted bugs, for the oracle's tests (each must fail with a readable report)."""

import numpy as np


def isotonic_no_cascade(y, w, increasing=True):
    """Pool adjacent violators that merges a violating block with its left neighbour once and stops
    there, one merge too early (the cascade backwards is missing)."""
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    sign = 1.0 if increasing else -1.0
    values, weights, counts = [], [], []
    for yi, wi in zip(sign * y, w):
        values.append(yi)
        weights.append(wi)
        counts.append(1)
        if len(values) >= 2 and values[-2] > values[-1]:  # should be `while`
            v2, w2, c2 = values.pop(), weights.pop(), counts.pop()
            v1, w1, c1 = values.pop(), weights.pop(), counts.pop()
            values.append((v1 * w1 + v2 * w2) / (w1 + w2))
            weights.append(w1 + w2)
            counts.append(c1 + c2)
    return sign * np.repeat(values, counts)


def isotonic_wrong_shape(y, w, increasing=True):
    return np.zeros(np.size(y) + 1)


def isotonic_nan(y, w, increasing=True):
    from theory.isotonic import isotonic_regression

    x = isotonic_regression(y, w, increasing=increasing)[0].copy()
    if x.size > 50:
        x[3] = np.nan
    return x


def isotonic_strings(y, w, increasing=True):
    return np.array(["a"] * np.size(y))


def isotonic_raises(y, w, increasing=True):
    if np.size(y) == 1:
        raise RuntimeError("n = 1 not supported")
    from theory.isotonic import isotonic_regression

    return isotonic_regression(y, w, increasing=increasing)[0]


# ----------------------------------------------------------------------------------------------
# independent plain-NumPy implementations (they must pass) and planted bugs (they must fail)

def _f(residual, x, th):
    if residual == "linear":
        return th @ x
    if residual == "tanh":
        return np.tanh(th @ x)
    return th @ np.tanh(x)  # tanh_out


def numpy_forward(x0, theta, residual, scheme):
    """Euler x_{n+1} = x_n + f(x_n, th_n)/N; Heun y = x + f(x, th_n)/N, x' = x + (f(x, th_n) + f(y, th_{n+1}))/(2N)."""
    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    x = [np.asarray(x0, dtype=float)]
    for n in range(N):
        f1 = _f(residual, x[-1], theta[n])
        if scheme == "euler":
            x.append(x[-1] + f1 / N)
        else:
            y = x[-1] + f1 / N
            x.append(x[-1] + (f1 + _f(residual, y, theta[n + 1])) / (2 * N))
    return np.array(x)


def heun_as_euler(x0, theta, residual, scheme):
    """Planted: the Heun network computed with Euler steps (the last slice unused)."""
    from theory.resnet import forward

    if scheme == "heun":
        return forward(x0, theta[:-1], residual, "euler")
    return forward(x0, theta, residual, scheme)


def topk_in_float32(x, k, reg, p):
    """Planted: the top-k mask evaluated on float32-rounded scores and returned in float32."""
    from theory.topk import topk_mask

    x32 = np.asarray(x, dtype=np.float32)
    return topk_mask(x32.astype(np.float64), k, float(np.float32(reg)), p).astype(np.float32)


def numpy_linear_product(theta):
    N, d, _ = theta.shape
    P = np.eye(d)
    for n in range(N):
        P = (np.eye(d) + theta[n] / N) @ P
    return P


def numpy_linear_gradient(theta, Sigma, B):
    N, d, _ = theta.shape
    before = [np.eye(d)]
    for n in range(N):
        before.append((np.eye(d) + theta[n] / N) @ before[-1])
    after = [np.eye(d)]
    for n in range(N - 1, -1, -1):
        after.append(after[-1] @ (np.eye(d) + theta[n] / N))
    after = after[::-1]  # after[n] = product of the layers n+1..N-1 (0-based), identity for the last
    Pi = before[-1]
    return np.array([(2.0 / N) * after[n + 1].T @ (Pi - B) @ Sigma @ before[n].T for n in range(N)])


def linear_gradient_without_2(theta, Sigma, B):
    """Planted: the linear-ResNet gradient without its factor 2."""
    from theory.linear import gradient

    return gradient(theta, Sigma, B) / 2


def scaling_forward_float32(h0, V, W, beta, arch, activation):
    """A scaled ResNet evaluated in float32 arithmetic (it must fail in float64 mode)."""
    from theory.scaling import forward

    W = None if np.size(W) == 0 else np.asarray(W, np.float32).astype(float)
    return forward(np.asarray(h0, np.float32).astype(float), np.asarray(V, np.float32).astype(float), W, beta, arch,
                   activation).astype(np.float32)


def implicit_gradient_float32(X, Y, A, V, W, B, activation):
    """The implicit-reg loss and gradient on float32-rounded inputs, returned in float32."""
    from theory.implicit import loss_and_gradient

    r = [np.asarray(a, np.float32).astype(float) for a in (X, Y, A, V, W, B)]
    loss, g = loss_and_gradient(r[0], r[1], {"A": r[2], "V": r[3], "W": r[4], "B": r[5]}, activation)
    return tuple(np.asarray(a, np.float32) for a in (loss, g.A, g.V, g.W, g.B))


# ----------------------------------------------------------------------------------------------
# Sinkhorn attention: an independent NumPy implementation (it must pass) and planted bugs


def numpy_sinkhorn(C, max_iter=200_000, tol=1e-13):
    """Log-domain Sinkhorn with SciPy's logsumexp: rows, then columns, until the column sums are within tol."""
    from scipy.special import logsumexp

    L = np.array(C, dtype=float)
    L -= L.max()
    for _ in range(max_iter):
        L = L - logsumexp(L, axis=1, keepdims=True)
        if np.max(np.abs(np.exp(L).sum(axis=0) - 1.0)) <= tol:
            break
        L = L - logsumexp(L, axis=0, keepdims=True)
    return np.exp(L)


def numpy_attention(X, WQ, WK, WV, kind):
    from scipy.special import logsumexp

    C = (X @ WQ.T) @ (X @ WK.T).T
    if kind == "kernel":
        A = np.exp(C) / C.shape[0]
    elif kind == "softmax":
        A = np.exp(C - logsumexp(C, axis=1, keepdims=True))
    else:
        A = numpy_sinkhorn(C)
    return A @ (X @ WV.T)


def sinkhorn_five_iterations(C):
    """Planted: Sinkhorn stopped after five normalisations (row, column, row, column, row)."""
    return numpy_sinkhorn(C, max_iter=3, tol=0.0)


def attention_softmax_over_columns(X, WQ, WK, WV, kind):
    """Planted: the SoftMax normalises the columns of C (keys) instead of its rows (queries)."""
    if kind != "softmax":
        return numpy_attention(X, WQ, WK, WV, kind)
    from scipy.special import logsumexp

    C = (X @ WQ.T) @ (X @ WK.T).T
    A = np.exp(C - logsumexp(C, axis=0, keepdims=True))
    return A @ (X @ WV.T)


# ----------------------------------------------------------------------------------------------
# Momentum ResNets: independent NumPy implementations (they must pass) and planted bugs


def numpy_momentum_forward(x0, v0, theta, residual, gamma, one_minus_gamma=True):
    xs, vs = [np.asarray(x0, dtype=float)], [np.asarray(v0, dtype=float)]
    for n in range(theta.shape[0]):
        f = _f(residual, xs[-1], theta[n])
        vs.append(gamma * vs[-1] + ((1 - gamma) * f if one_minus_gamma else f))
        xs.append(xs[-1] + vs[-1])
    return np.array(xs), np.array(vs)


def momentum_forward_without_1_minus_gamma(x0, v0, theta, residual, gamma):
    """Planted: v_{n+1} = gamma v_n + f(x_n) (the factor 1 - gamma of Eq. (4.2) forgotten)."""
    return numpy_momentum_forward(x0, v0, theta, residual, gamma, one_minus_gamma=False)


def numpy_momentum_inverse(xN, vN, theta, residual, gamma, divide=True):
    xs, vs = [np.asarray(xN, dtype=float)], [np.asarray(vN, dtype=float)]
    for n in range(theta.shape[0] - 1, -1, -1):
        x = xs[-1] - vs[-1]
        v = vs[-1] - (1 - gamma) * _f(residual, x, theta[n])
        xs.append(x)
        vs.append(v / gamma if divide else v)
    return np.array(xs[::-1]), np.array(vs[::-1])


def momentum_inverse_without_division(xN, vN, theta, residual, gamma):
    """Planted: the inverse (4.3) without its division by gamma."""
    return numpy_momentum_inverse(xN, vN, theta, residual, gamma, divide=False)


def psi_by_series(theta, eps):
    """Psi_eps by the series of Prop. 4.3 (theory.momentum.psi_series), exp(theta) at eps = 0."""
    import scipy.linalg

    from theory.momentum import psi_series

    return scipy.linalg.expm(theta) if eps == 0 else psi_series(theta, eps, terms=120)


def psi_ignoring_eps(theta, eps):
    """Planted: the first-order map exp(theta) whatever eps."""
    import scipy.linalg

    return scipy.linalg.expm(theta)
