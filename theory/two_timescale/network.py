"""The shallow network of chapter 6 of the thesis (Marion), its loss, exact gradients and a*(u).

Network: f(x; a, u) = a_0 + sum_j a_j sigma_eta(x - u_j), sigma_eta(z) = sigma(z / eta), with sigma
the quintic smootherstep sigma(z) = S(z + 1/2), S(t) = 6 t^5 - 15 t^4 + 10 t^3 (increasing, C^2, 0 below
-1/2, 1 above 1/2, sigma - 1/2 odd: the hypotheses of Section 6.2).
Loss: L(a, u) = 1/2 int_0^1 (f*(x) - f(x; a, u))^2 dx. Gradients (6.10)-(6.11):
dL/da_j = (H a - b)_j,   dL/du_j = -a_j int sigma_eta'(x - u_j) (f(x; a, u) - f*(x)) dx,
H_ij = int phi_i phi_j, b_j = int f* phi_j (phi_0 = 1, phi_j = sigma_eta(. - u_j)).

``quadrature="exact"`` (default) integrates with a composite 6-point Gauss rule split at 0, 1, the jumps
and u_j +- eta/2: there every integrand is a polynomial of degree <= 10, so the integrals are exact up to
rounding (also outside the state space U of Section 6.5, when neurons overlap). An integer
``quadrature=N`` uses the trapezoid rule on N uniform points (N >= 3), as a reference for speed.
"""

from __future__ import annotations

import numpy as np

from theory._validation import as_float_array, check_int, check_interval, check_finite_output

from . import _kernels as K
from .target import validate_target

__all__ = ["activation", "activation_prime", "network", "loss", "gradient", "gram", "optimal_weights",
           "reduced_loss", "separation", "min_eigenvalue", "is_d_good", "flanking"]


def _eta(eta, func):
    return check_interval(eta, "eta", 0.0, 1.0, func=func, closed="right")


def _nodes(u, eta, v, quadrature, func):
    if isinstance(quadrature, str):
        if quadrature != "exact":
            raise ValueError(f"`quadrature` of {func} must be 'exact' or an integer >= 3; got {quadrature!r}.")
        return K.exact_nodes(u, eta, v)
    n = check_int(quadrature, "quadrature", func=func, minimum=3)
    return K.grid_nodes(n)


def _params(a, u, func):
    u = as_float_array(u, "u", func=func, ndim=1, min_size=1)
    if a is None:
        return None, u
    a = as_float_array(a, "a", func=func, shape=(u.shape[0] + 1,))
    return a, u


def activation(z):
    """sigma(z): the quintic smootherstep centred at 0 (elementwise)."""
    z = as_float_array(z, "z", func="activation")
    return np.vectorize(K.smoother, otypes=[float])(z)


def activation_prime(z):
    """sigma'(z) = 30 t^2 (1 - t)^2 with t = z + 1/2 on (-1/2, 1/2), 0 elsewhere."""
    z = as_float_array(z, "z", func="activation_prime")
    return np.vectorize(K.smoother_prime, otypes=[float])(z)


def network(x, a, u, eta):
    """f(x; a, u) = a_0 + sum_j a_j sigma((x - u_j) / eta) at the points x."""
    func = "network"
    a, u = _params(a, u, func)
    eta = _eta(eta, func)
    x = as_float_array(x, "x", func=func)
    s = activation((x[..., None] - u) / eta)
    return a[0] + s @ a[1:]


def loss(a, u, eta, v, f, quadrature="exact"):
    """L(a, u) = 1/2 int_0^1 (f*(x) - f(x; a, u))^2 dx (with its 1/2, as in Section 6.2)."""
    return gradient(a, u, eta, v, f, quadrature, _with_loss=True)[0]


def gradient(a, u, eta, v, f, quadrature="exact", _with_loss=False):
    """(grad_a L, grad_u L) of (6.11) and (6.10), shapes (m + 1,) and (m,)."""
    func = "gradient" if not _with_loss else "loss"
    a, u = _params(a, u, func)
    eta = _eta(eta, func)
    v, f = validate_target(v, f, func=func)
    nodes, weights = _nodes(u, eta, v, quadrature, func)
    L, ga, gu = K.loss_grad(a, u, eta, v, f, nodes, weights)
    check_finite_output(ga, "the gradient", func=func, hint="Reduce the magnitude of `a`.")
    if _with_loss:
        return float(L), ga, gu
    return ga, gu


def gram(u, eta, v, f, quadrature="exact"):
    """(H, b): the Hessian H(u) of a -> L(a, u) and b(u), so that grad_a L = H a - b (Section 6.A)."""
    func = "gram"
    _, u = _params(None, u, func)
    eta = _eta(eta, func)
    v, f = validate_target(v, f, func=func)
    nodes, weights = _nodes(u, eta, v, quadrature, func)
    return K.gram(u, eta, v, f, nodes, weights)


def optimal_weights(u, eta, v, f, quadrature="exact"):
    """a*(u) = argmin_a L(a, u) = H(u)^-1 b(u) (unique when H(u) is positive definite, Prop. 6.4).

    Raises ValueError naming ``u`` when H(u) is singular to working precision (coinciding neurons,
    or a neuron whose feature is constant on [0, 1]).
    """
    H, b = gram(u, eta, v, f, quadrature)
    lam = np.linalg.eigvalsh(H)
    if lam[0] <= 1e-13 * max(lam[-1], 1.0):
        raise ValueError(f"`u` of optimal_weights gives a singular Gram matrix (smallest eigenvalue {lam[0]:.3g}): "
                         "a*(u) is not unique. Keep the neurons at least eta apart and inside (-eta/2, 1 + eta/2).")
    return np.linalg.solve(H, b)


def reduced_loss(u, eta, v, f, quadrature="exact"):
    """L*(u) = L(a*(u), u), the loss of the two-timescale limit (6.5)."""
    a = optimal_weights(u, eta, v, f, quadrature)
    return loss(a, u, eta, v, f, quadrature)


def separation(u, eta):
    """Delta(u) = ``min_{j != k} |u_j - u_k|`` over u_0 = -eta/2, u_1..u_m, u_{m+1} = 1 + eta/2 (Section 6.5.1)."""
    _, u = _params(None, u, "separation")
    eta = _eta(eta, "separation")
    w = np.sort(np.concatenate(([-eta / 2], u, [1 + eta / 2])))
    return float(np.min(np.diff(w)))


def min_eigenvalue(u, eta, v, f):
    """lambda_min(H(u)); Prop. 6.4 bounds it below by Delta(u) / 8 on U = {Delta(u) > 2 eta}."""
    H, _ = gram(u, eta, v, f)
    return float(np.linalg.eigvalsh(H)[0])


def flanking(u, v):
    """Indices (left, right) of u^L_i (largest u_j < v_i) and u^R_i (smallest u_j > v_i) per jump;
    -1 where a jump has no neuron on that side."""
    _, u = _params(None, u, "flanking")
    v = as_float_array(v, "v", func="flanking", ndim=1)
    left = np.full(v.shape, -1)
    right = np.full(v.shape, -1)
    for i, vi in enumerate(v):
        below = np.where(u < vi)[0]
        above = np.where(u > vi)[0]
        if below.size:
            left[i] = below[np.argmax(u[below])]
        if above.size:
            right[i] = above[np.argmin(u[above])]
    return left, right


def is_d_good(u, v, D, eta):
    """Definition 6.6: (a) >= 6 positions in each [v_i, v_{i+1}], (b) Delta(u) >= D,
    (c) ``|u^R_i + u^L_i - 2 v_i| >= D`` at every jump."""
    _, u = _params(None, u, "is_d_good")
    v = as_float_array(v, "v", func="is_d_good", ndim=1)
    D = check_interval(D, "D", 0.0, np.inf, func="is_d_good")
    edges = np.concatenate(([0.0], v, [1.0]))
    for lo, hi in zip(edges[:-1], edges[1:]):
        if np.count_nonzero((u >= lo) & (u <= hi)) < 6:
            return False
    if separation(u, eta) < D:
        return False
    left, right = flanking(u, v)
    if np.any(left < 0) or np.any(right < 0):
        return False
    return bool(np.all(np.abs(u[right] + u[left] - 2 * v) >= D))
