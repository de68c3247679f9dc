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
    if residual == "bias":
        return th
    if residual == "mlp":  # th = (V.ravel(), W.ravel(), b), V (d, m), W (m, d)
        d = x.shape[-1]
        m = th.shape[-1] // (2 * d + 1)
        return th[: d * m].reshape(d, m) @ np.tanh(th[d * m: 2 * d * m].reshape(m, d) @ x + th[2 * d * m:])
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


# ---------------------------------------------------------------------------------------------- attention variants
# (sinkhorn_iterations, attention_heads: independent NumPy implementations and the bugs planted in them)

def _lse(L, axis):
    m = np.max(L, axis=axis, keepdims=True)
    return m + np.log(np.sum(np.exp(L - m), axis=axis, keepdims=True))


def numpy_sinkhorn_iterations(C, n_iter, eps, marginals, *, columns_first=False, temperature_times=False, pairs=False):
    """K^{n_iter} of exp(C / eps) in the log domain, in the dtype of C (an implementation independent of the
    package's); the keywords plant the bugs below."""
    C = np.asarray(C)
    t = C.dtype.type(eps)
    L = C * t if temperature_times else C / t
    steps = 2 * n_iter if pairs else n_iter
    if steps:
        L = L - np.max(L)
    for it in range(steps):
        rows = (it % 2 == 0) != columns_first
        L = L - _lse(L, 1 if rows else 0)
    K = np.exp(L)
    return K / C.dtype.type(C.shape[0]) if marginals == "uniform" else K


def sinkhorn_iterations_columns_first(C, n_iter, eps, marginals):
    """Normalises the columns first (the other order of Eq. (5.3))."""
    return numpy_sinkhorn_iterations(C, n_iter, eps, marginals, columns_first=True)


def sinkhorn_iterations_temperature_times(C, n_iter, eps, marginals):
    """exp(C eps) instead of exp(C / eps): the temperature read as an inverse temperature."""
    return numpy_sinkhorn_iterations(C, n_iter, eps, marginals, temperature_times=True)


def sinkhorn_iterations_pairs(C, n_iter, eps, marginals):
    """n_iter row-and-column pairs (2 n_iter normalisations) instead of n_iter normalisations."""
    return numpy_sinkhorn_iterations(C, n_iter, eps, marginals, pairs=True)


def numpy_attention_heads(X, WQ, WK, WV, mask, kind, n_iter, *, scaled=False, mask_after=False, interleave=False):
    """Batched multi-head attention with einsum in the dtype of X: logits (B, h, n, n), the mask as -inf, n_iter
    log-domain normalisations, the heads concatenated; the keywords plant the bugs below."""
    X = np.asarray(X)
    Q, K, V = (np.einsum("bnd,hde->bhne", X, W) for W in (WQ, WK, WV))
    C = Q @ np.swapaxes(K, -1, -2)
    if scaled:
        C = C / np.sqrt(X.dtype.type(WQ.shape[-1]))
    keep = np.broadcast_to(np.asarray(mask), (X.shape[0],) + C.shape[2:])[:, None]
    L = C if mask_after else np.where(keep, C, -np.inf)
    L = L - np.max(L, axis=-1, keepdims=True)
    for it in range(n_iter):
        L = L - _lse(L, -1 if it % 2 == 0 else -2)
    A = np.exp(L)
    if mask_after:
        A = np.where(keep, A, 0)
    Y = A @ V  # (B, h, n, d_h)
    B, h, n, d_h = Y.shape
    return (Y.transpose(0, 2, 3, 1) if interleave else Y.transpose(0, 2, 1, 3)).reshape(B, n, h * d_h)


def attention_heads_scaled(X, WQ, WK, WV, mask, kind, n_iter):
    """Divides the logits by sqrt(d_h), as torch.nn.MultiheadAttention does."""
    return numpy_attention_heads(X, WQ, WK, WV, mask, kind, n_iter, scaled=True)


def attention_heads_mask_after(X, WQ, WK, WV, mask, kind, n_iter):
    """Zeroes the masked entries after the SoftMax, without renormalising the rows."""
    return numpy_attention_heads(X, WQ, WK, WV, mask, kind, n_iter, mask_after=True)


def attention_heads_interleaved(X, WQ, WK, WV, mask, kind, n_iter):
    """Concatenates the heads in the wrong order: Y[b, i, c h + k] instead of Y[b, i, k d_h + c]."""
    return numpy_attention_heads(X, WQ, WK, WV, mask, kind, n_iter, interleave=True)


# ------------------------------------------------------------------ exact Momentum ResNet and the Heaviside limit
# Independent implementations of momentum_exact_* (Python integers, App. 4.C of Sander's thesis) and of the
# Heaviside kernels of Marion's thesis (6.6)-(6.7), and plausible wrong ones.

def _exact_grid(x, fb):
    return [int(round(float(t) * 2.0 ** fb)) for t in np.asarray(x, dtype=np.float64)]


def _exact_residual(theta_n, X, num, den, fb, act):
    x = np.array([float(t) / 2.0 ** fb for t in X])
    f = act(np.asarray(theta_n, dtype=np.float64) @ x)
    c = 1.0 - num / den
    return [int(round(c * float(t) * 2.0 ** fb)) for t in f]


def _mul(v, b, num, den, truncating=False, wrap=False):
    if truncating:  # C's / and %: the quotient rounded toward zero, the remainder takes the sign of v
        q = -((-v) // den) if v < 0 else v // den
        b2 = b * den + (v - q * den)
        return q * num + b2 % num, b2 // num
    b2 = b * den + v % den
    nb = b2 // num
    if wrap:  # an int64 buffer
        nb = (nb + 2 ** 63) % 2 ** 64 - 2 ** 63
    return (v // den) * num + b2 % num, nb


def _div(v, b, num, den):
    b2 = b * num + v % num
    return (v // num) * den + b2 % den, b2 // den


def _digits(b, limbs):
    return [(b >> (32 * k)) & (2 ** 32 - 1) for k in range(limbs)]


def _exact_forward_ints(x0, v0, theta, num, den, fb, act=lambda z: z, **bug):
    X, V = _exact_grid(x0, fb), _exact_grid(v0, fb)
    B = [0] * len(X)
    for n in range(theta.shape[0]):
        for i in range(len(X)):
            V[i], B[i] = _mul(V[i], B[i], num, den, **bug)
        R = _exact_residual(theta[n], X, num, den, fb, act)
        V = [a + r for a, r in zip(V, R)]
        X = [a + b for a, b in zip(X, V)]
    return X, V, B


def _exact_inverse_ints(X, V, B, theta, num, den, fb, act=lambda z: z):
    X, V, B = list(X), list(V), list(B)
    for n in range(theta.shape[0] - 1, -1, -1):
        X = [a - b for a, b in zip(X, V)]
        R = _exact_residual(theta[n], X, num, den, fb, act)
        V = [a - r for a, r in zip(V, R)]
        for i in range(len(X)):
            V[i], B[i] = _div(V[i], B[i], num, den)
    return X, V, B


def numpy_exact_forward(x0, v0, theta, num, den, frac_bits, limbs, **bug):
    X, V, B = _exact_forward_ints(x0, v0, np.asarray(theta, dtype=np.float64), int(num), int(den), int(frac_bits),
                                  **bug)
    return np.array(X, dtype=np.int64), np.array(V, dtype=np.int64), np.array(
        [_digits(b % 2 ** (32 * limbs), limbs) for b in B], dtype=np.int64)


def planted_exact_forward_int64_buffer(x0, v0, theta, num, den, frac_bits, limbs):
    """The buffer kept in an int64: it wraps past 63 bits (N log2(den/num) > 63)."""
    return numpy_exact_forward(x0, v0, theta, num, den, frac_bits, limbs, wrap=True)


def planted_exact_forward_truncating(x0, v0, theta, num, den, frac_bits, limbs):
    """C's truncating division and remainder for negative velocities."""
    return numpy_exact_forward(x0, v0, theta, num, den, frac_bits, limbs, truncating=True)


def numpy_exact_inverse(xN, vN, buffer, theta, num, den, frac_bits):
    limbs = np.asarray(buffer).shape[-1]
    B = [sum(int(t) << (32 * k) for k, t in enumerate(row)) for row in np.asarray(buffer)]
    X, V, B = _exact_inverse_ints([int(t) for t in xN], [int(t) for t in vN], B, np.asarray(theta, dtype=np.float64),
                                  int(num), int(den), int(frac_bits))
    return np.array(X, dtype=np.int64), np.array(V, dtype=np.int64), np.array([_digits(b, limbs) for b in B],
                                                                              dtype=np.int64)


def planted_exact_inverse_float_division(xN, vN, buffer, theta, num, den, frac_bits):
    """The velocity divided by gamma in floating point and rounded, the buffer ignored."""
    theta = np.asarray(theta, dtype=np.float64)
    X, V = [int(t) for t in xN], [int(t) for t in vN]
    for n in range(theta.shape[0] - 1, -1, -1):
        X = [a - b for a, b in zip(X, V)]
        R = _exact_residual(theta[n], X, int(num), int(den), int(frac_bits), lambda z: z)
        V = [int(round((a - r) * den / num)) for a, r in zip(V, R)]
    return np.array(X, dtype=np.int64), np.array(V, dtype=np.int64), np.zeros_like(np.asarray(buffer))


def numpy_exact_roundtrip(x0, v0, theta, residual, num, den, frac_bits):
    act = np.tanh if residual == "tanh" else (lambda z: z)
    theta = np.asarray(theta, dtype=np.float64)
    X, V, B = _exact_forward_ints(x0, v0, theta, int(num), int(den), int(frac_bits), act=act)
    X, V, B = _exact_inverse_ints(X, V, B, theta, int(num), int(den), int(frac_bits), act=act)
    return np.array(X, dtype=np.int64), np.array(V, dtype=np.int64), np.array(B, dtype=np.int64)


def planted_exact_roundtrip_float_residual(x0, v0, theta, residual, num, den, frac_bits):
    """The inverse recomputes the residual from float positions carried alongside (in float64), not from the
    integers: the grid roundings differ and the round trip is not exact."""
    act = np.tanh if residual == "tanh" else (lambda z: z)
    theta = np.asarray(theta, dtype=np.float64)
    num, den, fb = int(num), int(den), int(frac_bits)
    X, V, B = _exact_forward_ints(x0, v0, theta, num, den, fb, act=act)
    x = np.array([float(t) / 2.0 ** fb for t in X]) + 2.0 ** (-fb - 1) * 0.7  # a float copy off the grid
    for n in range(theta.shape[0] - 1, -1, -1):
        X = [a - b for a, b in zip(X, V)]
        x = x - np.array([float(t) / 2.0 ** fb for t in V])
        c = 1.0 - num / den
        R = [int(round(c * float(t) * 2.0 ** fb)) for t in act(theta[n] @ x)]
        V = [a - r for a, r in zip(V, R)]
        for i in range(len(X)):
            V[i], B[i] = _div(V[i], B[i], num, den)
    return np.array(X, dtype=np.int64), np.array(V, dtype=np.int64), np.array(B, dtype=np.int64)


def _hit_integral(near, c):
    """int_0^near (s + beta)^2 / beta^2 ds by Gauss-Legendre (40 nodes) on geometrically graded panels."""
    if c <= 0.0:
        return 4.0 * near
    nodes, weights = np.polynomial.legendre.leggauss(40)
    scale = np.cbrt(c)
    edges = [0.0] + [e for e in scale * 2.0 ** np.arange(-20, 60) if e < near] + [near]
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        s = 0.5 * (b - a) * nodes + 0.5 * (a + b)
        beta = np.cbrt(s ** 3 + c)
        total += 0.5 * (b - a) * float(np.sum(weights * ((s + beta) / beta) ** 2))
    return total


def numpy_hitting_time(u_left, u_right, v, jump, left_always=False):
    dl, dr = v - u_left, u_right - v
    near, far = (dl, dr) if left_always else (min(dl, dr), max(dl, dr))
    c = far ** 3 - near ** 3
    tau = 2.0 / jump ** 2 * _hit_integral(near, abs(c)) if jump ** 2 > 0 else np.inf
    rest = np.cbrt(abs(c))
    other = v + rest if (left_always or dl <= dr) else v - rest
    return tau, other


def planted_hitting_time_left_first(u_left, u_right, v, jump):
    """The left neuron assumed to hit first."""
    return numpy_hitting_time(u_left, u_right, v, jump, left_always=True)


def numpy_heaviside_loss(u, v, f):
    u, v, f = (np.asarray(a, dtype=np.float64) for a in (u, v, f))
    cuts = np.unique(np.concatenate(([0.0], np.clip(u, 0.0, 1.0), [1.0])))
    edges = np.concatenate(([0.0], v, [1.0]))
    total = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        w = np.clip(edges[1:], lo, hi) - np.clip(edges[:-1], lo, hi)
        mean = float(np.dot(w, f)) / (hi - lo)
        total += float(np.dot(w, (f - mean) ** 2))  # the cell's variance, without the cancellation
    return 0.5 * total


def planted_heaviside_loss_closed_form(u, v, f):
    """(6.6) everywhere: exact only with two neurons in every piece."""
    u, v, f = (np.asarray(a, dtype=np.float64) for a in (u, v, f))
    su = np.sort(np.clip(u, 0.0, 1.0))
    total = 0.0
    for i, vi in enumerate(v):
        left, right = su[su < vi], su[su > vi]
        uL = left[-1] if left.size else 0.0
        uR = right[0] if right.size else 1.0
        total += (vi - uL) * (uR - vi) / (uR - uL) * (f[i + 1] - f[i]) ** 2
    return 0.5 * total


# ---------------------------------------------------------------------------------------------- resnet: bias and mlp

def _f_any(residual, x, th, *, v_column_major=False):
    """The five residual functions, in the dtype of x: the three matrix ones, 'bias' f = th and 'mlp'
    f = V tanh(W x + b) with th = (V.ravel(), W.ravel(), b), V (d, m), W (m, d) row-major."""
    if residual == "bias":
        return th
    if residual != "mlp":
        return _f(residual, x, th)
    d = x.shape[-1]
    m = th.shape[-1] // (2 * d + 1)
    V = th[: d * m].reshape(m, d).T if v_column_major else th[: d * m].reshape(d, m)
    W, b = th[d * m: 2 * d * m].reshape(m, d), th[2 * d * m:]
    return V @ np.tanh(W @ x + b)


def numpy_forward_any(x0, theta, residual, scheme, step, *, v_column_major=False):
    """numpy_forward for the five residuals (the dtype of x0 kept: float32 in float32 mode)."""
    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    x = [np.asarray(x0)]
    f = lambda z, th: _f_any(residual, z, th, v_column_major=v_column_major)  # noqa: E731
    for n in range(N):
        f1 = f(x[-1], theta[n])
        if scheme == "euler":
            x.append(x[-1] + step * f1)
        else:
            y = x[-1] + step * f1
            x.append(x[-1] + (step / 2) * (f1 + f(y, theta[n + 1])))
    return np.array(x)


def numpy_reverse_any(xN, theta, residual, scheme, step):
    """The reverse-time scheme (resnet-node Eqs. (6), (9)) for the five residuals, in forward order."""
    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    xs = [np.asarray(xN)]
    for n in range(N - 1, -1, -1):
        x = xs[-1]
        if scheme == "euler":
            xs.append(x - step * _f_any(residual, x, theta[n]))
        else:
            k1 = _f_any(residual, x, theta[n + 1])
            y = x - step * k1
            xs.append(x - (step / 2) * (k1 + _f_any(residual, y, theta[n])))
    return np.array(xs[::-1])


def mlp_forward_v_column_major(x0, theta, residual, scheme, step):
    """Planted: the V block of a packed perceptron read column-major (V = theta[:d m].reshape(m, d).T)."""
    return numpy_forward_any(x0, theta, residual, scheme, step, v_column_major=True)


def mlp_forward_fixed_step_all_scaled(x0, theta, residual, scheme, step):
    """Planted: a fixed-step (1/K) network mapped onto the case's step by scaling the whole packed theta by
    c = step K (right for linear, tanh_out and bias; for mlp only V may be scaled)."""
    K = theta.shape[0]
    return numpy_forward_any(x0, (step * K) * theta, residual, scheme, 1.0 / K)
