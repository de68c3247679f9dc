"""Models and empirical quantities of chapter 4 of the thesis (Marion).

* :func:`parameterized_ode`: (4.5), dH = sum_i theta_i(t) f_i(H) dt, F_theta(x) = H_1, by the classical
  Runge-Kutta scheme on a uniform grid of [0, 1], theta given at the grid points and its midpoints.
* :func:`neural_ode`: (4.8), dH = W sigma(H) dt, by the classical Runge-Kutta scheme.
* :func:`resnet_forward`: (4.10), H_{k+1} = H_k + W_{k+1} sigma(H_k) / L, F_W(x) = H_L.
* Norms: ||theta||_{1,inf} (4.6) on a grid, ||W||_{1,1,inf} (4.11), K_W = L max_k ||W_{k+1} - W_k||_inf (4.12).
* :func:`spectral_complexity`: (prod_k ||I + W_k / L||) (sum_k ||W_k^T||_{2,1}^(2/3) / (L^(2/3)
  ||I + W_k / L||^(2/3)))^(3/2), the quantity of the proof of Cor. 4.9 (reference matrices I).
* :func:`smooth_weights` / :func:`iid_weights`: the initialisations of Section 4.4.1, W_{k,ij} = f_ij(k/L)/sqrt(d)
  with f_ij i.i.d. Gaussian processes of RBF kernel, or i.i.d. N(0, 1/d).

Every public function validates its arguments at the door (float64 arrays of the documented shapes, finite;
sizes checked against the memory and work limits of :mod:`theory._validation` before any loop) and raises
:class:`~theory.NonFiniteError` when a finite input overflows on the way.
"""

from __future__ import annotations

import functools

import numpy as np

from theory._validation import (as_float_array, as_generator, check_choice, check_finite_output, check_int,
                                check_interval, check_memory, check_work)

__all__ = ["parameterized_ode", "neural_ode", "resnet_forward", "norm_1_inf", "norm_11inf", "weight_lipschitz",
           "spectral_complexity", "smooth_weights", "iid_weights"]

_PKG = "theory.generalization."

#: the activations sigma of (4.8) and (4.10) by name (all 1-Lipschitz with sigma(0) = 0)
_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda z: np.maximum(z, 0.0), "identity": lambda z: z}

#: interpreter work of one loop step (a handful of NumPy calls on small arrays), in operations counted at
#: 1e9 per second: measured 43 us per RK4 step of :func:`neural_ode` and 5 us per layer of
#: :func:`resnet_forward` on one core, rounded up
_RK4_STEP_OPS = 5e4
_LAYER_OPS = 1e4

_OVERFLOW = "Reduce the magnitude of the weights or of the input."


def _activation(activation, func):
    return _ACTIVATIONS[check_choice(activation, "activation", _ACTIVATIONS, func=func)]


def _batch(x, func):
    return as_float_array(x, "x", func=func, ndim=2, min_size=1)


def _call_fields(fields, h, m, func):
    """``fields(h)`` checked: a real array of shape (m, b, d), finite (float64, layout kept)."""
    out = np.asarray(fields(h))
    want = (m, *h.shape)
    if out.dtype == object or out.dtype.kind not in "biuf":
        raise TypeError(f"`fields` of {func} must return a real array of shape (m, b, d) = {want}; got dtype "
                        f"{out.dtype}.")
    if out.shape != want:
        raise ValueError(f"`fields` of {func} must return an array of shape (m, b, d) = {want} (m = "
                         f"theta.shape[1]); got {out.shape}.")
    if out.dtype != np.float64:
        out = out.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"`fields` of {func} returned NaN or inf at a state of norm {np.abs(h).max():.3g}.")
    return out


def parameterized_ode(x, theta, fields):
    r"""Output :math:`F_\theta(x) = H_1` of the parameterized ODE (4.5),
    :math:`dH_t = \sum_{i=1}^m \theta_i(t) f_i(H_t)\,dt`, :math:`H_0 = x`, for a batch of inputs.

    Classical Runge-Kutta (RK4) on the uniform grid of S steps of [0, 1]; ``theta`` is given at the grid
    points and their midpoints (t = 0, 1/(2S), ..., 1), where RK4 evaluates it.

    Parameters
    ----------
    x : array_like, shape (b, d)
        Inputs, finite, b >= 1, d >= 1.
    theta : array_like, shape (2 S + 1, m)
        The parameter functions theta_1..theta_m at t = k / (2 S), k = 0..2S; an odd number >= 3 of rows,
        m >= 1, finite.
    fields : callable
        ``fields(h)`` maps states h of shape (b, d) to the values of f_1..f_m, a real array of shape (m, b, d);
        called 4 S times. Its return is checked (shape, finite).

    Returns
    -------
    ndarray, shape (b, d)
        F_theta(x), float64.

    Raises
    ------
    TypeError
        ``x`` or ``theta`` not a real array, ``fields`` not callable or returning a non-real array.
    ValueError
        Wrong shapes, NaN or inf in ``x``, ``theta`` or a return of ``fields``.
    NonFiniteError
        The state overflows float64 on the way.
    """
    f = _PKG + "parameterized_ode"
    x = _batch(x, f)
    theta = as_float_array(theta, "theta", func=f, ndim=2, min_size=1)
    if theta.shape[0] < 3 or theta.shape[0] % 2 == 0:
        raise ValueError(f"`theta` of {f} must have an odd number >= 3 of rows (grid and midpoints); got {theta.shape}.")
    if not callable(fields):
        raise TypeError(f"`fields` of {f} must be callable h -> (m, b, d); got {type(fields).__name__}.")
    m = theta.shape[1]
    S = (theta.shape[0] - 1) // 2
    dt = 1.0 / S

    def rhs(h, th):
        return np.einsum("i,ibd->bd", th, _call_fields(fields, h, m, f))

    h = x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for s in range(S):
            t0, tm, t1 = theta[2 * s], theta[2 * s + 1], theta[2 * s + 2]
            k1 = rhs(h, t0)
            k2 = rhs(h + 0.5 * dt * k1, tm)
            k3 = rhs(h + 0.5 * dt * k2, tm)
            k4 = rhs(h + dt * k3, t1)
            h = h + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return check_finite_output(h, "the state", func=f, hint="Reduce `theta` or `x`.")


def neural_ode(x, W, activation="tanh", steps=50, *, max_work=None):
    r"""Output :math:`F_W(x) = H_1` of the time-independent neural ODE (4.8), :math:`dH_t = W \sigma(H_t)\,dt`,
    :math:`H_0 = x`, by the classical Runge-Kutta scheme with ``steps`` uniform steps of [0, 1].

    Parameters
    ----------
    x : array_like, shape (b, d)
        Inputs, finite, b >= 1, d >= 1.
    W : array_like, shape (d, d)
        Weight matrix, finite.
    activation : {"tanh", "relu", "identity"}
        The activation sigma.
    steps : int
        Number of RK4 steps, >= 1.
    max_work : float, optional
        Work budget in floating-point operations (default ``theory._validation.MAX_WORK``); the cost
        steps (4 (2 b d^2 + b d) + 5e4), interpreter work included, is checked before the loop.

    Returns
    -------
    ndarray, shape (b, d)
        F_W(x), float64.

    Raises
    ------
    TypeError
        An array that is not real, ``activation`` not a string, ``steps`` not an integer.
    ValueError
        Wrong shapes, NaN or inf, an unknown activation, ``steps`` < 1 or above the work budget.
    NonFiniteError
        The state overflows float64.
    """
    f = _PKG + "neural_ode"
    x = _batch(x, f)
    W = as_float_array(W, "W", func=f, ndim=2)
    if W.shape != (x.shape[1], x.shape[1]):
        raise ValueError(f"`W` of {f} must have shape (d, d) with d = x.shape[1] = {x.shape[1]}; got {W.shape}.")
    act = _activation(activation, f)
    steps = check_int(steps, "steps", func=f, minimum=1)
    b, d = x.shape
    check_work(steps * (4.0 * (2 * b * d * d + b * d) + _RK4_STEP_OPS), "steps", steps, func=f, max_work=max_work,
               hint=f"Batch b = {b}, d = {d}.")
    dt = 1.0 / steps
    h = x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            k1 = act(h) @ W.T
            k2 = act(h + 0.5 * dt * k1) @ W.T
            k3 = act(h + 0.5 * dt * k2) @ W.T
            k4 = act(h + dt * k3) @ W.T
            h = h + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return check_finite_output(h, "the state", func=f, hint=_OVERFLOW)


def resnet_forward(x, W, activation="tanh", *, max_work=None):
    r"""Output :math:`F_W(x) = H_L` of the 1/L-scaled ResNet (4.10): :math:`H_0 = x`,
    :math:`H_{k+1} = H_k + \frac{1}{L} W_{k+1} \sigma(H_k)`, k = 0..L-1.

    Parameters
    ----------
    x : array_like, shape (b, d)
        Inputs, finite, b >= 1, d >= 1.
    W : array_like, shape (L, d, d)
        Layer weights W_1..W_L, L >= 1, finite.
    activation : {"tanh", "relu", "identity"}
        The activation sigma.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the cost L (2 b d^2 + 1e4).

    Returns
    -------
    ndarray, shape (b, d)
        F_W(x), float64.

    Raises
    ------
    TypeError
        An array that is not real, ``activation`` not a string.
    ValueError
        Wrong shapes (``W`` must be (L, d, d) with d from ``x``), NaN or inf, an unknown activation, a cost
        above the work budget.
    NonFiniteError
        The state overflows float64.
    """
    f = _PKG + "resnet_forward"
    x = _batch(x, f)
    W = as_float_array(W, "W", func=f, ndim=3)
    if W.shape[1] != W.shape[2] or W.shape[1] != x.shape[1] or W.shape[0] < 1:
        raise ValueError(f"`W` of {f} must have shape (L, d, d) with L >= 1 and d = x.shape[1] = {x.shape[1]}; "
                         f"got {W.shape}.")
    act = _activation(activation, f)
    L = W.shape[0]
    b, d = x.shape
    check_work(L * (2.0 * b * d * d + _LAYER_OPS), "W", W.shape, func=f, max_work=max_work,
               hint=f"Depth L = {L}, batch b = {b}, d = {d}.")
    h = x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(L):
            h = h + act(h) @ W[k].T / L
    return check_finite_output(h, "the state", func=f, hint=_OVERFLOW)


def _float(value, what, func):
    return float(check_finite_output(np.float64(value), what, func=func, hint="Reduce the magnitude of the input."))


def norm_1_inf(theta):
    r"""The (1, inf)-norm (4.6) of parameter functions sampled on a grid:
    :math:`\|\theta\|_{1,\infty} = \max_t \sum_i |\theta_i(t)|` over the rows of ``theta``.

    Parameters
    ----------
    theta : array_like, shape (T, m)
        theta_1..theta_m (columns) at T grid times (rows), T >= 1, m >= 1, finite.

    Returns
    -------
    float
        The norm.

    Raises
    ------
    TypeError
        ``theta`` not a real array.
    ValueError
        ``theta`` not 2-d, empty, or with NaN or inf.
    NonFiniteError
        A row sum overflows float64.
    """
    f = _PKG + "norm_1_inf"
    theta = as_float_array(theta, "theta", func=f, ndim=2, min_size=1)
    with np.errstate(over="ignore"):
        return _float(np.abs(theta).sum(axis=1).max(), "the norm", f)


def norm_11inf(W):
    r"""The (1, 1, inf)-norm (4.11) of ResNet weights: :math:`\|W\|_{1,1,\infty} = \max_k \sum_{i,j} |W_{k,ij}|`.

    Parameters
    ----------
    W : array_like, shape (L, d, d')
        Layer weights, L >= 1, non-empty, finite.

    Returns
    -------
    float
        The norm.

    Raises
    ------
    TypeError
        ``W`` not a real array.
    ValueError
        ``W`` not 3-d, empty, or with NaN or inf.
    NonFiniteError
        A layer's sum overflows float64.
    """
    f = _PKG + "norm_11inf"
    W = as_float_array(W, "W", func=f, ndim=3, min_size=1)
    with np.errstate(over="ignore"):
        return _float(np.abs(W).sum(axis=(1, 2)).max(), "the norm", f)


def weight_lipschitz(W):
    r"""The smallest K_W with W in the class (4.12): :math:`K_W = L \max_k \|W_{k+1} - W_k\|_\infty`
    (entrywise max), 0 for L = 1.

    Parameters
    ----------
    W : array_like, shape (L, d, d')
        Layer weights, L >= 1, non-empty, finite.

    Returns
    -------
    float
        K_W.

    Raises
    ------
    TypeError
        ``W`` not a real array.
    ValueError
        ``W`` not 3-d, empty, or with NaN or inf.
    NonFiniteError
        A difference overflows float64.
    """
    f = _PKG + "weight_lipschitz"
    W = as_float_array(W, "W", func=f, ndim=3, min_size=1)
    if W.shape[0] < 2:
        return 0.0
    with np.errstate(over="ignore"):
        return _float(W.shape[0] * np.abs(np.diff(W, axis=0)).max(), "K_W", f)


def spectral_complexity(W):
    r"""The spectral complexity of Bartlett et al. for the ResNet (4.10) with reference matrices I (proof of
    Cor. 4.9):

    .. math::

        \Big(\prod_{k=1}^L s_k\Big) \Big(\sum_{k=1}^L \frac{\|W_k^\top\|_{2,1}^{2/3}}{L^{2/3} s_k^{2/3}}\Big)^{3/2},
        \qquad s_k = \|I + W_k / L\|_2,

    with :math:`\|A\|_{2,1}` the sum of the Euclidean norms of the columns of A. Where some s_k vanish (or the
    quotient overflows), the same quantity is evaluated in the form
    :math:`(\sum_k (\|W_k^\top\|_{2,1} / L)^{2/3} \prod_{i \ne k} s_i^{2/3})^{3/2}`, its continuous extension.

    Parameters
    ----------
    W : array_like, shape (L, d, d)
        Layer weights, L >= 1, d >= 1, finite.

    Returns
    -------
    float
        The spectral complexity.

    Raises
    ------
    TypeError
        ``W`` not a real array.
    ValueError
        ``W`` not of shape (L, d, d), empty, or with NaN or inf.
    NonFiniteError
        The complexity overflows float64.
    """
    f = _PKG + "spectral_complexity"
    W = as_float_array(W, "W", func=f, ndim=3, min_size=1)
    if W.shape[1] != W.shape[2]:
        raise ValueError(f"`W` of {f} must have shape (L, d, d) (square layers); got {W.shape}.")
    L, d, _ = W.shape
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        Mk = np.eye(d)[None] + W / L
        s = np.linalg.norm(Mk, ord=2, axis=(1, 2))
        two_one = np.linalg.norm(np.transpose(W, (0, 2, 1)), axis=1).sum(axis=1)  # sum of column norms of W_k^T
        out = np.prod(s) * np.sum(two_one ** (2 / 3) / (L ** (2 / 3) * s ** (2 / 3))) ** 1.5
        if not np.isfinite(out):
            out = _complexity_products(s, two_one, L)
    return _float(out, "the spectral complexity", f)


def _complexity_products(s, a, L):
    """(sum_k (a_k / L)^(2/3) prod_{i != k} s_i^(2/3))^(3/2), by prefix and suffix products (O(L))."""
    s23 = s ** (2 / 3)
    before = np.concatenate(([1.0], np.cumprod(s23)[:-1]))
    after = np.concatenate((np.cumprod(s23[::-1])[::-1][1:], [1.0]))
    return np.sum((a / L) ** (2 / 3) * before * after) ** 1.5


def smooth_weights(L, d, bandwidth=0.1, rng=None, *, max_work=None):
    r"""Smooth initialisation of Section 4.4.1: :math:`W_{k,ij} = f_{ij}(k / L) / \sqrt{d}`, k = 1..L, with
    f_ij i.i.d. centred Gaussian processes of kernel :math:`\exp(-(s - t)^2 / (2\,\mathrm{bandwidth}^2))`.

    Sampled exactly through a square root of the L x L covariance (eigendecomposition, negative round-off
    eigenvalues clipped; cached per (L, bandwidth)).

    Parameters
    ----------
    L : int
        Depth, >= 1.
    d : int
        Width, >= 1.
    bandwidth : float
        RBF bandwidth, > 0.
    rng : numpy.random.Generator or int or None
        Source of randomness (``theory._validation.as_generator``).
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the cost 10 L^3 + 2 L^2 d^2.

    Returns
    -------
    ndarray, shape (L, d, d)
        The weights, float64.

    Raises
    ------
    TypeError
        ``L`` or ``d`` not an integer, ``bandwidth`` not a real number, ``rng`` of a wrong kind.
    ValueError
        ``L`` or ``d`` < 1, ``bandwidth`` not positive and finite, sizes above the memory limit or the work budget.
    """
    f = _PKG + "smooth_weights"
    L = check_int(L, "L", func=f, minimum=1)
    d = check_int(d, "d", func=f, minimum=1)
    bw = check_interval(bandwidth, "bandwidth", 0.0, np.inf, func=f)
    rng = as_generator(rng, func=f)
    name, value = ("L", L) if L >= d * d else ("d", d)
    check_memory(8 * (4 * L * L + 2 * L * d * d), name, value, func=f, hint=f"The weights have shape ({L}, {d}, {d}).")
    check_work(10.0 * L ** 3 + 2.0 * L * L * d * d, name, value, func=f, max_work=max_work)
    root = _rbf_root(L, bw)
    return (root @ rng.standard_normal((L, d * d))).reshape(L, d, d) / np.sqrt(d)


@functools.lru_cache(maxsize=16)
def _rbf_root(L, bw):
    """A square root R R^T = C of the RBF covariance at t = k/L (eigendecomposition, clipped), read-only."""
    t = np.arange(1, L + 1) / L
    with np.errstate(over="ignore", under="ignore"):
        C = np.exp(-0.5 * ((t[:, None] - t[None, :]) / bw) ** 2)
    lam, Q = np.linalg.eigh(C)
    root = Q * np.sqrt(np.clip(lam, 0, None))
    root.flags.writeable = False
    return root


def iid_weights(L, d, rng=None):
    r"""Standard initialisation of Section 4.4.1: :math:`W_{k,ij}` i.i.d. N(0, 1/d), k = 1..L.

    Parameters
    ----------
    L : int
        Depth, >= 1.
    d : int
        Width, >= 1.
    rng : numpy.random.Generator or int or None
        Source of randomness (``theory._validation.as_generator``).

    Returns
    -------
    ndarray, shape (L, d, d)
        The weights, float64.

    Raises
    ------
    TypeError
        ``L`` or ``d`` not an integer, ``rng`` of a wrong kind.
    ValueError
        ``L`` or ``d`` < 1, or an output above the memory limit.
    """
    f = _PKG + "iid_weights"
    L = check_int(L, "L", func=f, minimum=1)
    d = check_int(d, "d", func=f, minimum=1)
    rng = as_generator(rng, func=f)
    name, value = ("L", L) if L >= d * d else ("d", d)
    check_memory(8 * L * d * d, name, value, func=f, hint=f"The weights have shape ({L}, {d}, {d}).")
    return rng.standard_normal((L, d, d)) / np.sqrt(d)
