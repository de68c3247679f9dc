"""Numba kernels of the two-timescale shallow network (private; the public API validates inputs)."""

import numpy as np
from numba import njit

# 6-point Gauss-Legendre rule on [-1, 1]: exact for polynomials of degree <= 11
_GL_X, _GL_W = np.polynomial.legendre.leggauss(6)
GL_X = np.ascontiguousarray(_GL_X)
GL_W = np.ascontiguousarray(_GL_W)


@njit(cache=True)
def smoother(z):
    """sigma(z) = S(z + 1/2), S(t) = 6 t^5 - 15 t^4 + 10 t^3 on [0, 1]; 0 below -1/2, 1 above 1/2."""
    if z <= -0.5:
        return 0.0
    if z >= 0.5:
        return 1.0
    t = z + 0.5
    return t * t * t * (10.0 + t * (-15.0 + 6.0 * t))


@njit(cache=True)
def smoother_prime(z):
    """sigma'(z) = 30 t^2 (1 - t)^2, t = z + 1/2, zero outside (-1/2, 1/2)."""
    if z <= -0.5 or z >= 0.5:
        return 0.0
    t = z + 0.5
    return 30.0 * t * t * (1.0 - t) * (1.0 - t)


@njit(cache=True)
def target_at(x, v, f):
    """f*(x) for the piecewise-constant target with interior jumps v (increasing) and values f."""
    i = 0
    while i < v.shape[0] and x > v[i]:
        i += 1
    return f[i]


@njit(cache=True)
def exact_nodes(u, eta, v):
    """Nodes and weights of a composite 6-point Gauss rule on [0, 1] split at 0, 1, the jumps v and
    u_j +- eta/2: on every piece the integrands of the loss, the Gram matrix and the gradients are
    polynomials of degree <= 10, so the rule is exact up to rounding."""
    m = u.shape[0]
    nb = 2 + v.shape[0] + 2 * m
    bp = np.empty(nb)
    bp[0] = 0.0
    bp[1] = 1.0
    k = 2
    for i in range(v.shape[0]):
        bp[k] = v[i]
        k += 1
    for j in range(m):
        lo = u[j] - 0.5 * eta
        hi = u[j] + 0.5 * eta
        bp[k] = min(max(lo, 0.0), 1.0)
        bp[k + 1] = min(max(hi, 0.0), 1.0)
        k += 2
    bp = np.sort(bp)
    nodes = np.empty(6 * (nb - 1))
    weights = np.empty(6 * (nb - 1))
    c = 0
    for s in range(nb - 1):
        a = bp[s]
        b = bp[s + 1]
        if b - a <= 0.0:
            continue
        half = 0.5 * (b - a)
        mid = 0.5 * (a + b)
        for q in range(6):
            nodes[c] = mid + half * GL_X[q]
            weights[c] = half * GL_W[q]
            c += 1
    return nodes[:c], weights[:c]


@njit(cache=True)
def grid_nodes(n_points):
    """Composite trapezoid rule on a uniform grid of n_points points of [0, 1]."""
    nodes = np.empty(n_points)
    weights = np.empty(n_points)
    h = 1.0 / (n_points - 1)
    for i in range(n_points):
        nodes[i] = i * h
        weights[i] = h
    weights[0] = 0.5 * h
    weights[n_points - 1] = 0.5 * h
    return nodes, weights


@njit(cache=True)
def loss_grad(a, u, eta, v, f, nodes, weights):
    """L(a, u) = 1/2 int (f(x; a, u) - f*(x))^2 dx and its gradients (6.11) in a, (6.10) in u."""
    m = u.shape[0]
    ga = np.zeros(m + 1)
    gu = np.zeros(m)
    loss = 0.0
    s = np.empty(m)
    ds = np.empty(m)
    for q in range(nodes.shape[0]):
        x = nodes[q]
        w = weights[q]
        val = a[0]
        for j in range(m):
            z = (x - u[j]) / eta
            s[j] = smoother(z)
            ds[j] = smoother_prime(z) / eta
            val += a[j + 1] * s[j]
        r = val - target_at(x, v, f)
        loss += 0.5 * w * r * r
        ga[0] += w * r
        for j in range(m):
            ga[j + 1] += w * r * s[j]
            gu[j] -= w * r * a[j + 1] * ds[j]
    return loss, ga, gu


@njit(cache=True)
def gram(u, eta, v, f, nodes, weights):
    """H_ij = int phi_i phi_j and b_j = int f* phi_j, phi_0 = 1, phi_j = sigma_eta(. - u_j)."""
    m = u.shape[0]
    H = np.zeros((m + 1, m + 1))
    b = np.zeros(m + 1)
    phi = np.empty(m + 1)
    phi[0] = 1.0
    for q in range(nodes.shape[0]):
        x = nodes[q]
        w = weights[q]
        for j in range(m):
            phi[j + 1] = smoother((x - u[j]) / eta)
        fs = target_at(x, v, f)
        for i in range(m + 1):
            b[i] += w * fs * phi[i]
            for j in range(i, m + 1):
                H[i, j] += w * phi[i] * phi[j]
    for i in range(m + 1):
        for j in range(i):
            H[i, j] = H[j, i]
    return H, b


@njit(cache=True)
def gd_run(a0, u0, eps, h, steps, record_every, eta, v, f, n_grid):
    """Gradient descent at ratio eps: a <- a - h grad_a L, u <- u - eps h grad_u L (exact quadrature
    when n_grid == 0, else the trapezoid rule on n_grid points). Records every record_every steps."""
    a = a0.copy()
    u = u0.copy()
    n_rec = steps // record_every + 1
    A = np.empty((n_rec, a.shape[0]))
    U = np.empty((n_rec, u.shape[0]))
    Ls = np.empty(n_rec)
    if n_grid > 0:
        gn, gw = grid_nodes(n_grid)
    r = 0
    for k in range(steps + 1):
        if n_grid > 0:
            nodes, weights = gn, gw
        else:
            nodes, weights = exact_nodes(u, eta, v)
        loss, ga, gu = loss_grad(a, u, eta, v, f, nodes, weights)
        if k % record_every == 0:
            A[r] = a
            U[r] = u
            Ls[r] = loss
            r += 1
        if k == steps:
            break
        for j in range(a.shape[0]):
            a[j] -= h * ga[j]
        for j in range(u.shape[0]):
            u[j] -= eps * h * gu[j]
    return A[:r], U[:r], Ls[:r]


@njit(cache=True)
def sgd_chunk(a, u, eps, h, eta, v, f, X, N):
    """In place: one-pass SGD (6.9) on the samples (X_p, f*(X_p) + N_p) of this chunk."""
    m = u.shape[0]
    s = np.empty(m)
    ds = np.empty(m)
    for p in range(X.shape[0]):
        x = X[p]
        val = a[0]
        for j in range(m):
            z = (x - u[j]) / eta
            s[j] = smoother(z)
            ds[j] = smoother_prime(z) / eta
            val += a[j + 1] * s[j]
        r = val - (target_at(x, v, f) + N[p])
        a[0] -= h * r
        for j in range(m):
            gu = -r * a[j + 1] * ds[j]
            a[j + 1] -= h * r * s[j]
            u[j] -= eps * h * gu
