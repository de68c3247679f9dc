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


def numpy_forward(x0, theta, residual, scheme, step):
    """Euler x_{n+1} = x_n + h f(x_n, th_n); Heun y = x + h f(x, th_n), x' = x + (h/2)(f(x, th_n) + f(y, th_{n+1}));
    h = ``step`` (1/N in the document's cases)."""
    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    x = [np.asarray(x0, dtype=float)]
    for n in range(N):
        f1 = _f(residual, x[-1], theta[n])
        if scheme == "euler":
            x.append(x[-1] + step * f1)
        else:
            y = x[-1] + step * f1
            x.append(x[-1] + (step / 2) * (f1 + _f(residual, y, theta[n + 1])))
    return np.array(x)


def numpy_forward_fixed_step(x0, theta, residual, scheme):
    """A network with its own fixed step 1/K, K = theta.shape[0] the number of weight slices, as public HeunNet code
    (1/(N+1) for Heun, the document's 1/N for Euler); it takes no `step` (the mapping of the step convention in
    tests/test_oracle_show.py adapts it)."""
    return numpy_forward(x0, theta, residual, scheme, 1.0 / theta.shape[0])


def heun_as_euler(x0, theta, residual, scheme, step):
    """Planted: the Heun network computed with Euler steps (the last slice unused)."""
    if scheme == "heun":
        return numpy_forward(x0, theta[:-1], residual, "euler", step)
    return numpy_forward(x0, theta, residual, scheme, step)


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


def scaling_forward_float32(h0, V, W, beta, arch, activation, slope):
    """A scaled ResNet evaluated in float32 arithmetic (it must fail in float64 mode)."""
    from theory.scaling import forward

    W = None if np.size(W) == 0 else np.asarray(W, np.float32).astype(float)
    return forward(np.asarray(h0, np.float32).astype(float), np.asarray(V, np.float32).astype(float), W, beta, arch,
                   activation, slope=float(np.float32(slope))).astype(np.float32)


def numpy_scaling_forward(h0, V, W, beta, arch, activation, slope, *, alpha=None, fixed_slope=None,
                          negative_part=False):
    """A scaled ResNet (scaling Table 1) in plain NumPy: h_{k+1} = h_k + alpha V_k sigma(W_k h_k) (res1: sigma(h_k)),
    alpha = L^-beta. Other code's conventions, on request: a fixed factor ``alpha`` (1 for none), a leaky slope
    ``fixed_slope`` whatever the case asks (a library's default), or x_+ + s max(-x, 0) with ``negative_part``."""
    L = V.shape[0]
    a = L ** (-beta) if alpha is None else alpha
    s = slope if fixed_slope is None else fixed_slope

    def sigma(z):
        if activation == "relu":
            return np.maximum(z, 0.0)
        if activation == "tanh":
            return np.tanh(z)
        if activation == "identity":
            return z
        return np.maximum(z, 0.0) + s * (np.maximum(-z, 0.0) if negative_part else np.minimum(z, 0.0))

    hs = [np.asarray(h0, dtype=float)]
    for k in range(L):
        h = hs[-1]
        hs.append(h + a * (V[k] @ (sigma(h) if arch == "res1" else sigma(W[k] @ h))))
    return np.array(hs)


def implicit_gradient_float32(X, Y, A, V, W, B, activation):
    """The implicit-reg loss and gradient on float32-rounded inputs, returned in float32."""
    from theory.implicit import loss_and_gradient

    r = [np.asarray(a, np.float32).astype(float) for a in (X, Y, A, V, W, B)]
    loss, g = loss_and_gradient(r[0], r[1], {"A": r[2], "V": r[3], "W": r[4], "B": r[5]}, activation)
    return tuple(np.asarray(a, np.float32) for a in (loss, g.A, g.V, g.W, g.B))


# ----------------------------------------------------------------------------------------------
# Sinkhorn attention: an independent NumPy implementation (it must pass) and planted bugs


def numpy_sinkhorn(C, marginals="ones", max_iter=200_000, tol=1e-13):
    """Log-domain Sinkhorn with SciPy's logsumexp: rows, then columns, until the column sums are within tol; the
    plan K / n for marginals 'uniform'."""
    from scipy.special import logsumexp

    L = np.array(C, dtype=float)
    L -= L.max()
    for _ in range(max_iter):
        L = L - logsumexp(L, axis=1, keepdims=True)
        if np.max(np.abs(np.exp(L).sum(axis=0) - 1.0)) <= tol:
            break
        L = L - logsumexp(L, axis=0, keepdims=True)
    K = np.exp(L)
    return K / K.shape[0] if marginals == "uniform" else K


def numpy_attention(X, WQ, WK, WV, kind, marginals="ones"):
    from scipy.special import logsumexp

    C = (X @ WQ.T) @ (X @ WK.T).T
    if kind == "kernel":
        A = np.exp(C) / C.shape[0]
    elif kind == "softmax":
        A = np.exp(C - logsumexp(C, axis=1, keepdims=True))
    else:
        A = numpy_sinkhorn(C, marginals)
    return A @ (X @ WV.T)


def sinkhorn_five_iterations(C, marginals):
    """Planted: Sinkhorn stopped after five normalisations (row, column, row, column, row)."""
    return numpy_sinkhorn(C, marginals, max_iter=3, tol=0.0)


def sinkhorn_marginals_ignored(C, marginals):
    """Planted: the doubly stochastic limit whatever the marginals asked (a plan's cases get n times the plan)."""
    return numpy_sinkhorn(C)


def attention_softmax_over_columns(X, WQ, WK, WV, kind, marginals):
    """Planted: the SoftMax normalises the columns of C (keys) instead of its rows (queries)."""
    if kind != "softmax":
        return numpy_attention(X, WQ, WK, WV, kind, marginals)
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


# ----------------------------------------------------------------------------------------------
# the conventions of the isotonic, top-k, soft sort, ResNet, linear and implicit kernels: implementations that
# follow another convention (each passes its kernel with the mapping that `theory oracle show KERNEL` states, and
# fails without it; tests/test_oracle_show.py)


def isotonic_squared_weights(y, w, increasing=True):
    """Isotonic regression minimising sum (w_i (x_i - y_i))^2: the weights enter squared."""
    from theory.isotonic import isotonic_regression

    return isotonic_regression(y, np.asarray(w) ** 2, increasing=increasing)[0]


def isotonic_increasing_only(y, w):
    """An increasing fit only (no direction flag), as R's isoreg."""
    from theory.isotonic import isotonic_regression

    return isotonic_regression(y, w, increasing=True)[0]


def topk_mask_with_temperature(x, k, tau, p):
    """The top-k mask of the scores divided by a temperature tau, with the unit regulariser."""
    from theory.topk import topk_mask

    return topk_mask(np.asarray(x) / tau, k, 1.0, p)


def topk_hard_mask(x, k):
    """The hard top-k as a 0/1 mask (the indices of the k largest, as torch.topk returns them)."""
    y = np.zeros(np.size(x))
    y[np.argsort(-np.asarray(x), kind="stable")[:k]] = 1.0
    return y


def topk_masked_scores(x, k, reg, p):
    """x times the relaxed mask (the masked scores, not the mask)."""
    from theory.topk import topk_mask

    return np.asarray(x) * topk_mask(x, k, reg, p)


def bottomk_mask(x, k, reg, p):
    """The relaxed mask of the k smallest entries."""
    from theory.topk import topk_mask

    return topk_mask(-np.asarray(x), k, reg, p)


def topk_magnitude_rescaled_only(x, k, reg, p):
    """The public code's variant only: sign(x)(|y| + |x| - |u|) = y + reg sign(y)|y|^(p-1)."""
    from theory.topk import topk_magnitude

    return topk_magnitude(x, k, reg, p, rescale=True)


def topk_magnitude_thesis_only(x, k, reg, p):
    """The thesis operator topkmag_R only (no rescale argument)."""
    from theory.topk import topk_magnitude

    return topk_magnitude(x, k, reg, p)


def topk_hard_magnitude(x, k):
    """The hard top-k in magnitude: x at the k largest |x|, 0 elsewhere."""
    x = np.asarray(x)
    y = np.zeros(x.size)
    i = np.argsort(-np.abs(x), kind="stable")[:k]
    y[i] = x[i]
    return y


def mask_of_abs_times_x(x, k, reg, p):
    """The alternative the thesis discusses: a relaxed top-k mask of |x| multiplied by x."""
    from theory.topk import topk_mask

    return np.asarray(x) * topk_mask(np.abs(x), k, reg, p)


def unrescale(z, reg, p):
    """y with y + reg sign(y)|y|^(p-1) = z, entrywise (the map is odd and increasing: bisection on |y| in [0, |z|])."""
    z = np.asarray(z, dtype=float)
    if p == 2.0:
        return z / (1.0 + reg)
    a = np.abs(z)
    lo, hi = np.zeros_like(a), a.copy()
    for _ in range(2200):  # enough to reach adjacent floats from [0, |z|] anywhere in the float range
        mid = lo + (hi - lo) / 2
        low = mid + reg * mid ** (p - 1.0) < a
        lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
        if np.all((hi - lo) <= 2.0 * np.spacing(hi)):
            break
    return np.sign(z) * (lo + (hi - lo) / 2)


def topk_jacobian_stacked_jvps(x, k, reg, p, mode, rescale):
    """The Jacobian with the JVPs J e_j stacked as rows: the transpose of d y_i / d x_j."""
    from theory.topk import jvp

    n = np.size(x)
    return np.stack([jvp(x, k, e, reg, p, mode, rescale=bool(rescale)) for e in np.eye(n)])


def soft_sort_increasing_only(x, reg, p):
    from theory.topk import soft_sort

    return soft_sort(x, reg, p, descending=False)


def soft_rank_increasing_only(x, reg, p):
    from theory.topk import soft_rank

    return soft_rank(x, reg, p, descending=False)


def soft_sort_batched(X, reg, p, descending):
    """A batch (B, n) in, a batch (B, n) out (torchsort's layout)."""
    from theory.topk import soft_sort

    return np.stack([soft_sort(row, reg, p, descending) for row in np.atleast_2d(X)])


def numpy_forward_row_vectors(x0, theta, residual, scheme, step):
    """The ResNet with row vectors: f = x @ W ('linear'), tanh(x @ W), tanh(x) @ W."""
    def f(x, W):
        if residual == "linear":
            return x @ W
        if residual == "tanh":
            return np.tanh(x @ W)
        return np.tanh(x) @ W

    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    xs = [np.asarray(x0, dtype=float)]
    for n in range(N):
        f1 = f(xs[-1], theta[n])
        if scheme == "euler":
            xs.append(xs[-1] + step * f1)
        else:
            y = xs[-1] + step * f1
            xs.append(xs[-1] + (step / 2) * (f1 + f(y, theta[n + 1])))
    return np.array(xs)


def numpy_forward_states_only(x0, theta, residual, scheme, step):
    """The hidden states x_1 .. x_N without x_0."""
    return numpy_forward(x0, theta, residual, scheme, step)[1:]


def numpy_reverse_computed_order(xN, theta, residual, scheme, step):
    """The reverse-time scheme (resnet-node Eqs. (6), (9)) returned in the order computed, x~_N first."""
    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    xs = [np.asarray(xN, dtype=float)]
    for n in range(N - 1, -1, -1):
        x = xs[-1]
        if scheme == "euler":
            xs.append(x - step * _f(residual, x, theta[n]))
        else:
            k1 = _f(residual, x, theta[n + 1])
            y = x - step * k1
            xs.append(x - (step / 2) * (k1 + _f(residual, y, theta[n])))
    return np.array(xs)


def numpy_exact_inverse(xN, theta, residual, scheme, step):
    """Planted for the reverse kernel: the exact inverse of the Euler network, x_n = x_{n+1} - h f(x_n, th_n) solved
    for x_n by fixed-point iteration (Euler only), instead of the reverse scheme of Eq. (6)."""
    N = theta.shape[0]
    xs = [np.asarray(xN, dtype=float)]
    for n in range(N - 1, -1, -1):
        x = xs[-1].copy()
        for _ in range(200):
            x = xs[-1] - step * _f(residual, x, theta[n])
        xs.append(x)
    return np.array(xs[::-1])


def _chain(layers):
    """Products of the layer matrices M_1 .. M_N: before[n] = M_n ... M_1 (before[0] = I), after[n] = M_N ... M_{n+1}."""
    d = layers[0].shape[0]
    before = [np.eye(d)]
    for M in layers:
        before.append(M @ before[-1])
    after = [np.eye(d)]
    for M in layers[::-1]:
        after.append(after[-1] @ M)
    return before, after[::-1]


def numpy_linear_product_left_to_right(theta):
    """Pi = (I + theta_1/N) ... (I + theta_N/N): the first slice leftmost."""
    N, d, _ = theta.shape
    P = np.eye(d)
    for n in range(N):
        P = P @ (np.eye(d) + theta[n] / N)
    return P


def numpy_linear_product_unscaled(theta):
    """A deep linear network without the 1/N: prod (I + W_n) with W = theta, theta[0] applied first."""
    W = theta
    N, d, _ = W.shape
    P = np.eye(d)
    for n in range(N):
        P = (np.eye(d) + W[n]) @ P
    return P


def numpy_linear_gradient_unscaled(theta, Sigma, B):
    """The gradient of Tr((Pi - B) Sigma (Pi - B)^T) for Pi = prod (I + W_n), W = theta (no 1/N):
    2 after^T (Pi - B) Sigma before^T."""
    layers = [np.eye(theta.shape[1]) + w for w in theta]
    before, after = _chain(layers)
    Pi = before[-1]
    return np.array([2.0 * after[n + 1].T @ (Pi - B) @ Sigma @ before[n].T for n in range(len(layers))])


def numpy_linear_loss_half(theta, Sigma, B):
    """1/2 ||Pi - B||_Sigma^2."""
    D = numpy_linear_product(theta) - B
    return 0.5 * np.trace(D @ Sigma @ D.T)


def numpy_linear_gradient_display(theta, Sigma, B):
    """The display of resnet-node Section 3.2, Pi_{:n}^T (Pi - B) Sigma Pi_n^T (no 2, no 1/N)."""
    N, d, _ = theta.shape
    before, after = _chain([np.eye(d) + t / N for t in theta])
    Pi = before[-1]
    return np.array([after[n + 1].T @ (Pi - B) @ Sigma @ before[n].T for n in range(N)])
