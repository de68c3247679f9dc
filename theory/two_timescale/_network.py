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

The public functions validate their arguments and estimate their cost up front; the private helpers
(:func:`_evaluate`, :func:`_optimal`, the kernels of :mod:`theory.two_timescale._kernels`) do no validation.
"""

from __future__ import annotations

import numpy as np

from theory._validation import (as_float_array, check_finite_output, check_int, check_interval, check_memory,
                                check_work)

from . import _kernels as K
from ._target import _jumps, _target

__all__ = ["activation", "activation_prime", "network", "loss", "gradient", "gram", "optimal_weights",
           "reduced_loss", "separation", "min_eigenvalue", "is_d_good", "flanking"]

_PKG = "theory.two_timescale."

#: operations per quadrature node and neuron of one loss-and-gradient evaluation (Numba kernel; measured
#: 0.1-0.7 us per node and 100 neurons on one core, counted at 1e9 operations per second), per node and
#: pair of neurons of the Gram matrix, per (m + 1)^3 of its eigenvalues and solve, and per call
_NODE_OPS = 10.0
_GRAM_OPS = 3.0
_SOLVE_OPS = 30.0
_CALL_OPS = 2e4

_smoother = np.vectorize(K.smoother, otypes=[float])
_smoother_prime = np.vectorize(K.smoother_prime, otypes=[float])


# ------------------------------------------------------------------------------------------ validation


def _real_array(x, name, func):
    """``x`` as a finite float64 array of its own shape (a scalar stays 0-d)."""
    arr = as_float_array(x, name, func=func)
    return arr.reshape(np.asarray(x).shape)


def _eta(eta, func):
    return check_interval(eta, "eta", 0.0, 1.0, func=func, closed="right")


_NO_A = object()


def _params(a, u, func, u_name="u", a_name="a"):
    """(a, u) validated: u of shape (m,), m >= 1, a of shape (m + 1,); ``a=_NO_A`` where there is no ``a``."""
    u = as_float_array(u, u_name, func=func, ndim=1, min_size=1)
    if a is _NO_A:
        return None, u
    a = as_float_array(a, a_name, func=func, shape=(u.shape[0] + 1,))
    return a, u


def _quadrature(quadrature, func):
    """0 for ``"exact"``, else the number N >= 3 of trapezoid points (its nodes within the memory limit)."""
    if isinstance(quadrature, str):
        if quadrature != "exact":
            raise ValueError(f"`quadrature` of {func} must be 'exact' or an integer >= 3; got {quadrature!r}.")
        return 0
    n = check_int(quadrature, "quadrature", func=func, minimum=3)
    check_memory(16 * n, "quadrature", n, func=func, hint="The trapezoid rule holds N nodes and N weights.")
    return n


def _n_nodes(m, n_jumps, n_grid):
    return n_grid if n_grid else 6 * (1 + n_jumps + 2 * m)


def _nodes(u, eta, v, n_grid):
    return K.grid_nodes(n_grid) if n_grid else K.exact_nodes(u, eta, v)


def _eval_ops(m, n_jumps, n_grid):
    """Operations of one loss-and-gradient evaluation."""
    return _n_nodes(m, n_jumps, n_grid) * (m + 1) * _NODE_OPS + _CALL_OPS


def _solve_ops(m, n_jumps, n_grid):
    """Operations of a*(u): the Gram matrix, its eigenvalues and one solve."""
    return _n_nodes(m, n_jumps, n_grid) * (m + 1) ** 2 * _GRAM_OPS + _SOLVE_OPS * (m + 1) ** 3 + _CALL_OPS


def _size_name(u, n_grid, m, n_jumps):
    """The argument that sets the cost (``quadrature`` when its grid dominates, else ``u``) and its value."""
    return ("quadrature", n_grid) if n_grid > 6 * (1 + n_jumps + 2 * m) else ("u", u.shape)


def _gram_memory(m, func, name="u"):
    check_memory(8 * 2 * (m + 1) ** 2, name, (m,), func=func, hint=f"H(u) has shape ({m + 1}, {m + 1}).")


# ------------------------------------------------------------------------------------------ private evaluations


def _evaluate(a, u, eta, v, f, nodes, weights, func):
    """(L, grad_a L, grad_u L) at validated input, NonFiniteError when they overflow."""
    L, ga, gu = K.loss_grad(a, u, eta, v, f, nodes, weights)
    hint = "Reduce the magnitude of `a`."
    check_finite_output(ga, "the gradient", func=func, hint=hint)
    check_finite_output(gu, "the gradient", func=func, hint=hint)
    check_finite_output(np.float64(L), "the loss", func=func, hint=hint)
    return float(L), ga, gu


def _optimal(u, eta, v, f, nodes, weights, func, u_name="u"):
    """a*(u) = H(u)^-1 b(u) at validated input; ValueError naming ``u_name`` when H(u) is singular."""
    H, b = K.gram(u, eta, v, f, nodes, weights)
    lam = np.linalg.eigvalsh(H)
    if not lam[0] > 1e-13 * max(lam[-1], 1.0):
        raise ValueError(f"`{u_name}` of {func} gives a singular Gram matrix (smallest eigenvalue {lam[0]:.3g}): "
                         "a*(u) is not unique. Keep the neurons at least eta apart and inside (-eta/2, 1 + eta/2).")
    return np.linalg.solve(H, b)


def _problem(u, eta, v, f, quadrature, func, max_work, ops):
    """Validated (u, eta, v, f, n_grid) after the work check ``ops(m, n_jumps, n_grid)``."""
    _, u = _params(_NO_A, u, func)
    eta = _eta(eta, func)
    v, f = _target(v, f, func)
    n_grid = _quadrature(quadrature, func)
    name, value = _size_name(u, n_grid, u.size, v.size)
    check_work(ops(u.size, v.size, n_grid), name, value, func=func, max_work=max_work)
    return u, eta, v, f, n_grid


# ------------------------------------------------------------------------------------------ public API


def activation(z):
    r"""The activation :math:`\sigma(z) = S(z + 1/2)`, :math:`S(t) = 6t^5 - 15t^4 + 10t^3` on [0, 1] (the quintic
    smootherstep centred at 0): 0 for z <= -1/2, 1 for z >= 1/2, increasing and C^2, sigma - 1/2 odd.

    Parameters
    ----------
    z : array_like
        Points, finite, any shape.

    Returns
    -------
    float or ndarray
        sigma(z), float64, of the shape of ``z`` (a NumPy float for a scalar).

    Raises
    ------
    TypeError
        ``z`` not a real array.
    ValueError
        NaN or inf in ``z``.
    """
    z = _real_array(z, "z", _PKG + "activation")
    return _smoother(z)[()]


def activation_prime(z):
    r"""The derivative :math:`\sigma'(z) = 30 t^2 (1 - t)^2`, t = z + 1/2, on (-1/2, 1/2); 0 elsewhere.

    Parameters
    ----------
    z : array_like
        Points, finite, any shape.

    Returns
    -------
    float or ndarray
        sigma'(z), float64, of the shape of ``z`` (a NumPy float for a scalar).

    Raises
    ------
    TypeError
        ``z`` not a real array.
    ValueError
        NaN or inf in ``z``.
    """
    z = _real_array(z, "z", _PKG + "activation_prime")
    return _smoother_prime(z)[()]


def network(x, a, u, eta):
    r"""The network :math:`f(x; a, u) = a_0 + \sum_{j=1}^m a_j \sigma((x - u_j) / \eta)` at the points x.

    Parameters
    ----------
    x : array_like
        Points, finite, any shape.
    a : array_like, shape (m + 1,)
        Output weights (bias first), finite.
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].

    Returns
    -------
    float or ndarray
        f(x; a, u), float64, of the shape of ``x`` (a NumPy float for a scalar).

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number.
    ValueError
        Wrong shapes, NaN or inf, ``eta`` outside (0, 1], features above the memory limit.
    NonFiniteError
        The sum overflows float64.
    """
    func = _PKG + "network"
    a, u = _params(a, u, func)
    eta = _eta(eta, func)
    x = _real_array(x, "x", func)
    check_memory(8 * 2 * x.size * u.size, "x", x.shape, func=func,
                 hint=f"The features have shape {(*x.shape, u.size)}.")
    with np.errstate(over="ignore", invalid="ignore"):
        s = _smoother((x[..., None] - u) / eta)
        out = a[0] + s @ a[1:]
    return check_finite_output(out, "the network", func=func, hint="Reduce the magnitude of `a`.")[()]


def loss(a, u, eta, v, f, quadrature="exact", *, max_work=None):
    r"""The population loss :math:`L(a, u) = \frac12 \int_0^1 (f^*(x) - f(x; a, u))^2\,dx` (with its 1/2, as in
    Section 6.2).

    Parameters
    ----------
    a : array_like, shape (m + 1,)
        Output weights (bias first), finite.
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,) (:func:`~theory.two_timescale.validate_target`).
    quadrature : "exact" or int
        "exact" (composite Gauss rule, exact up to rounding) or the number N >= 3 of uniform trapezoid points.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the nodes x (m + 1) x 10 operations.

    Returns
    -------
    float
        L(a, u).

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number, ``quadrature`` of a wrong kind.
    ValueError
        Wrong shapes, NaN or inf, ``eta`` outside (0, 1], an invalid target or quadrature, a cost above the
        budget.
    NonFiniteError
        The loss or its gradient overflows float64.
    """
    func = _PKG + "loss"
    return _loss_grad(a, u, eta, v, f, quadrature, func, max_work)[0]


def _loss_grad(a, u, eta, v, f, quadrature, func, max_work):
    a, u = _params(a, u, func)
    eta = _eta(eta, func)
    v, f = _target(v, f, func)
    n_grid = _quadrature(quadrature, func)
    name, value = _size_name(u, n_grid, u.size, v.size)
    check_work(_eval_ops(u.size, v.size, n_grid), name, value, func=func, max_work=max_work)
    nodes, weights = _nodes(u, eta, v, n_grid)
    return _evaluate(a, u, eta, v, f, nodes, weights, func)


def gradient(a, u, eta, v, f, quadrature="exact", *, max_work=None):
    r"""The gradients (6.11) and (6.10) of the loss: :math:`\nabla_a L = H(u) a - b(u)` and
    :math:`\partial L / \partial u_j = -a_j \int_0^1 \sigma_\eta'(x - u_j) (f(x; a, u) - f^*(x))\,dx`.

    Parameters
    ----------
    a : array_like, shape (m + 1,)
        Output weights (bias first), finite.
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    quadrature : "exact" or int
        "exact" or the number N >= 3 of uniform trapezoid points.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``).

    Returns
    -------
    grad_a : ndarray, shape (m + 1,)
        dL/da, float64.
    grad_u : ndarray, shape (m,)
        dL/du, float64.

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number, ``quadrature`` of a wrong kind.
    ValueError
        Wrong shapes, NaN or inf, ``eta`` outside (0, 1], an invalid target or quadrature, a cost above the
        budget.
    NonFiniteError
        The gradient overflows float64.
    """
    _, ga, gu = _loss_grad(a, u, eta, v, f, quadrature, _PKG + "gradient", max_work)
    return ga, gu


def gram(u, eta, v, f, quadrature="exact", *, max_work=None):
    r"""The Gram matrix and moment vector of the features (Section 6.A): :math:`H_{ij} = \int_0^1 \phi_i \phi_j`,
    :math:`b_j = \int_0^1 f^* \phi_j`, with :math:`\phi_0 = 1`, :math:`\phi_j = \sigma_\eta(\cdot - u_j)`; H(u) is
    the Hessian of a -> L(a, u) and :math:`\nabla_a L = H a - b`.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    quadrature : "exact" or int
        "exact" or the number N >= 3 of uniform trapezoid points.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the nodes x (m + 1)^2 x 3 operations.

    Returns
    -------
    H : ndarray, shape (m + 1, m + 1)
        The Gram matrix, symmetric positive semi-definite.
    b : ndarray, shape (m + 1,)
        The moments of the target.

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number, ``quadrature`` of a wrong kind.
    ValueError
        Wrong shapes, NaN or inf, ``eta`` outside (0, 1], an invalid target or quadrature, a size above the
        memory limit or the work budget.
    """
    func = _PKG + "gram"
    u, eta, v, f, n_grid = _problem(u, eta, v, f, quadrature, func, max_work,
                                    lambda m, n, g: _n_nodes(m, n, g) * (m + 1) ** 2 * _GRAM_OPS + _CALL_OPS)
    _gram_memory(u.size, func)
    nodes, weights = _nodes(u, eta, v, n_grid)
    return K.gram(u, eta, v, f, nodes, weights)


def optimal_weights(u, eta, v, f, quadrature="exact", *, max_work=None):
    r"""The optimal output weights :math:`a^*(u) = \arg\min_a L(a, u) = H(u)^{-1} b(u)`, unique when H(u) is
    positive definite (Prop. 6.4).

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    quadrature : "exact" or int
        "exact" or the number N >= 3 of uniform trapezoid points.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``).

    Returns
    -------
    ndarray, shape (m + 1,)
        a*(u), float64.

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number, ``quadrature`` of a wrong kind.
    ValueError
        Wrong shapes, NaN or inf, ``eta`` outside (0, 1], an invalid target or quadrature, a size above the
        memory limit or the work budget; ``u`` when H(u) is singular to working precision (coinciding
        neurons, or a neuron whose feature is constant on [0, 1]).
    """
    func = _PKG + "optimal_weights"
    u, eta, v, f, n_grid = _problem(u, eta, v, f, quadrature, func, max_work, _solve_ops)
    _gram_memory(u.size, func)
    nodes, weights = _nodes(u, eta, v, n_grid)
    return _optimal(u, eta, v, f, nodes, weights, func)


def reduced_loss(u, eta, v, f, quadrature="exact", *, max_work=None):
    r"""The reduced loss :math:`L^*(u) = L(a^*(u), u)` of the two-timescale limit (6.5).

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    quadrature : "exact" or int
        "exact" or the number N >= 3 of uniform trapezoid points.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``).

    Returns
    -------
    float
        L*(u).

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number, ``quadrature`` of a wrong kind.
    ValueError
        As :func:`optimal_weights` (a singular H(u) names ``u``).
    NonFiniteError
        The loss overflows float64.
    """
    func = _PKG + "reduced_loss"
    u, eta, v, f, n_grid = _problem(u, eta, v, f, quadrature, func, max_work,
                                    lambda m, n, g: _solve_ops(m, n, g) + _eval_ops(m, n, g))
    _gram_memory(u.size, func)
    nodes, weights = _nodes(u, eta, v, n_grid)
    a = _optimal(u, eta, v, f, nodes, weights, func)
    return _evaluate(a, u, eta, v, f, nodes, weights, func)[0]


def separation(u, eta):
    r"""The separation :math:`\Delta(u) = \min_{j \ne k} |u_j - u_k|` over :math:`u_0 = -\eta/2`, u_1..u_m,
    :math:`u_{m+1} = 1 + \eta/2` (Section 6.5.1).

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].

    Returns
    -------
    float
        Delta(u) (negative never; 0 when two positions coincide).

    Raises
    ------
    TypeError
        ``u`` not a real array, ``eta`` not a real number.
    ValueError
        ``u`` not 1-d, empty or with NaN or inf; ``eta`` outside (0, 1].
    NonFiniteError
        A gap overflows float64 (positions beyond 1e308).
    """
    func = _PKG + "separation"
    _, u = _params(_NO_A, u, func)
    eta = _eta(eta, func)
    w = np.sort(np.concatenate(([-eta / 2], u, [1 + eta / 2])))
    with np.errstate(over="ignore"):
        return float(check_finite_output(np.float64(np.min(np.diff(w))), "the separation", func=func))


def min_eigenvalue(u, eta, v, f, *, max_work=None):
    r"""The smallest eigenvalue :math:`\lambda_{\min}(H(u))` of the Gram matrix (exact quadrature); Prop. 6.4
    bounds it below by :math:`\Delta(u) / 8` on :math:`U = \{\Delta(u) > 2\eta\}`.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``).

    Returns
    -------
    float
        lambda_min(H(u)).

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number.
    ValueError
        Wrong shapes, NaN or inf, ``eta`` outside (0, 1], an invalid target, a size above the memory limit or the
        work budget.
    """
    func = _PKG + "min_eigenvalue"
    u, eta, v, f, n_grid = _problem(u, eta, v, f, "exact", func, max_work, _solve_ops)
    _gram_memory(u.size, func)
    nodes, weights = _nodes(u, eta, v, n_grid)
    H, _ = K.gram(u, eta, v, f, nodes, weights)
    return float(np.linalg.eigvalsh(H)[0])


def _flanking(u, v):
    """(left, right) at validated input, O((m + n) log m): the first index among ties, as argmax/argmin."""
    order = np.argsort(u, kind="stable")
    su = u[order]
    k = np.searchsorted(su, v, side="left") - 1  # the last position < v_i in sorted order
    left = np.full(v.shape, -1)
    has = k >= 0
    left[has] = order[np.searchsorted(su, su[k[has]], side="left")]  # the first index holding that value
    k = np.searchsorted(su, v, side="right")  # the first position > v_i
    right = np.full(v.shape, -1)
    has = k < su.size
    right[has] = order[k[has]]
    return left, right


def flanking(u, v):
    r"""The neurons flanking each jump: indices of :math:`u^L_i` (the largest u_j < v_i) and :math:`u^R_i` (the
    smallest u_j > v_i), -1 where a jump has no neuron on that side; among equal positions, the first index.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    v : array_like, shape (n - 1,)
        Jumps, strictly increasing inside (0, 1).

    Returns
    -------
    left : ndarray of int, shape (n - 1,)
        Index of u^L_i, or -1.
    right : ndarray of int, shape (n - 1,)
        Index of u^R_i, or -1.

    Raises
    ------
    TypeError
        ``u`` or ``v`` not a real array.
    ValueError
        ``u`` not 1-d, empty or with NaN or inf; ``v`` not strictly increasing inside (0, 1).
    """
    func = _PKG + "flanking"
    _, u = _params(_NO_A, u, func)
    v = _jumps(v, func)
    return _flanking(u, v)


def is_d_good(u, v, D, eta):
    r"""Definition 6.6: u is D-good for the jumps v when (a) each closed piece :math:`[v_i, v_{i+1}]`
    (v_0 = 0, v_n = 1) holds at least 6 positions, (b) :math:`\Delta(u) \ge D` (:func:`separation`), and
    (c) :math:`|u^R_i + u^L_i - 2 v_i| \ge D` at every jump (:func:`flanking`).

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, m >= 1, finite.
    v : array_like, shape (n - 1,)
        Jumps, strictly increasing inside (0, 1).
    D : float
        Separation, D > 0.
    eta : float
        Sharpness, in (0, 1] (it places u_0 = -eta/2 and u_(m+1) = 1 + eta/2 in Delta(u)).

    Returns
    -------
    bool
        Whether u is D-good.

    Raises
    ------
    TypeError
        ``u`` or ``v`` not a real array, ``D`` or ``eta`` not a real number.
    ValueError
        ``u`` not 1-d, empty or with NaN or inf; ``v`` not strictly increasing inside (0, 1); ``D`` not positive
        and finite; ``eta`` outside (0, 1].
    """
    func = _PKG + "is_d_good"
    _, u = _params(_NO_A, u, func)
    v = _jumps(v, func)
    D = check_interval(D, "D", 0.0, np.inf, func=func)
    eta = _eta(eta, func)
    su = np.sort(u)
    edges = np.concatenate(([0.0], v, [1.0]))
    inside = np.searchsorted(su, edges[1:], side="right") - np.searchsorted(su, edges[:-1], side="left")
    if np.any(inside < 6):
        return False
    w = np.sort(np.concatenate(([-eta / 2], u, [1 + eta / 2])))
    with np.errstate(over="ignore"):
        if float(np.min(np.diff(w))) < D:
            return False
    left, right = _flanking(u, v)
    if np.any(left < 0) or np.any(right < 0):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.all(np.abs(u[right] + u[left] - 2 * v) >= D))

