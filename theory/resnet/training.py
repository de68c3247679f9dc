r"""Small training utilities of ``resnet-node`` (the training code of its Figures 1 and 4).

Everything here is plain NumPy on top of the public kernels of :mod:`theory.resnet`:

* :class:`Adam`, the optimiser of Kingma and Ba on one flat (or any-shaped) parameter array;
* :func:`two_moons` and :func:`lift`, a seeded two-moons data set lifted to R^d by zero padding;
* :func:`logistic_head`, a linear head with the binary logistic loss and its gradients;
* :func:`loss_gradient`, the gradient of any loss l(x_N) through the network, by the identity
  :math:`\partial_{x_N} \tfrac12\|x_N - y\|^2 = x_N - y`: calling :func:`theory.resnet.gradient` with
  :math:`y = x_N - \nabla l(x_N)` gives exactly the chain rule through l (backprop or adjoint);
* :func:`init_mlp`, the initial slices of the perceptron family (V = 0: the identity network);
* :func:`layer_derivative`, :func:`crossing_count`, :func:`first_crossing_layer`,
  :func:`increasing_fit_floor` and :func:`refine_slices`, the measurements behind Figure 1.

The experiments of Figures 1 and 4 built on them (settings, trainings, verdicts) are
:mod:`theory.experiments.resnet_node.trained`.

References: ``resnet-node`` (Sander et al., "Do Residual Neural Networks discretize Neural
ODEs?"), Figure 1, Section 5 and Figure 4; and the elementary fact behind Figure 1 that a 1-D
ResNet whose layers all have Lip(f_n) < N is increasing (each layer x -> x + f_n(x)/N has a positive
derivative), so trajectories can cross only through a layer of slope f'_n <= -N.
"""

from __future__ import annotations

import math
import numpy as np
from scipy.special import expit

from .._errors import NonFiniteError
from .._residual_kernels import MLP
from .._residuals import Residual, resolve_residual
from .._validation import (as_float_array, as_generator, check_array_memory, check_finite_output, check_int,
                           check_interval, check_memory)
from ._api import final_state, gradient

__all__ = [
    "Adam",
    "two_moons",
    "lift",
    "logistic_head",
    "loss_gradient",
    "layer_derivative",
    "crossing_count",
    "first_crossing_layer",
    "increasing_fit_floor",
    "refine_slices",
    "init_mlp",
    "deepen_mlp",
]


# --------------------------------------------------------------------------- optimiser


class Adam:
    r"""Adam (Kingma & Ba, 2015) on one parameter array, with bias correction.

    .. math::
        m_t = \beta_1 m_{t-1} + (1 - \beta_1) g_t,\quad v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2,\\
        p_t = p_{t-1} - \mathrm{lr}\,\frac{m_t / (1 - \beta_1^t)}{\sqrt{v_t / (1 - \beta_2^t)} + \varepsilon}

    (the PyTorch form: epsilon added after the square root).

    Parameters
    ----------
    lr : float
        Learning rate, > 0 (a step may override it, for a warm-up schedule).
    beta1, beta2 : float
        Decay rates in [0, 1).
    eps : float
        > 0.

    Attributes
    ----------
    m, v : ndarray or None
        First and second moment estimates (None before the first step).
    t : int
        Number of steps taken.

    Examples
    --------
    >>> opt = Adam(0.1)
    >>> opt.step(np.array([1.0, -2.0]), np.array([3.0, -0.5]))   # first step: p - lr * sign(g)
    array([ 0.9, -1.9])
    """

    def __init__(self, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
        func = "theory.resnet.training.Adam"
        self.lr = check_interval(lr, "lr", 0.0, math.inf, func=func)
        self.beta1 = check_interval(beta1, "beta1", 0.0, 1.0, func=func, closed="left")
        self.beta2 = check_interval(beta2, "beta2", 0.0, 1.0, func=func, closed="left")
        self.eps = check_interval(eps, "eps", 0.0, math.inf, func=func)
        self.m: np.ndarray | None = None
        self.v: np.ndarray | None = None
        self.t = 0

    def step(self, params, grad, lr: float | None = None) -> np.ndarray:
        """One Adam step; returns the new parameters (``params`` is not modified).

        Parameters
        ----------
        params, grad : array_like, same shape
        lr : float, optional
            This step's learning rate (default ``self.lr``).
        """
        func = "theory.resnet.training.Adam.step"
        params = as_float_array(params, "params", func=func)
        grad = as_float_array(grad, "grad", func=func)
        if grad.shape != params.shape:
            raise ValueError(f"`grad` of {func} must have the shape of `params`, {params.shape}; got {grad.shape}.")
        lr = self.lr if lr is None else check_interval(lr, "lr", 0.0, math.inf, func=func, closed="left")
        if self.m is not None and self.m.shape != params.shape:
            raise ValueError(f"`params` of {func} changed shape from {self.m.shape} to {params.shape}.")
        m0 = np.zeros_like(params) if self.m is None else self.m
        v0 = np.zeros_like(params) if self.v is None else self.v
        t = self.t + 1
        # the state is committed only if the step is finite: a refused step leaves the optimiser as it was
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
            m = self.beta1 * m0 + (1.0 - self.beta1) * grad
            v = self.beta2 * v0 + (1.0 - self.beta2) * grad * grad
            m_hat = m / (1.0 - self.beta1**t)
            v_hat = v / (1.0 - self.beta2**t)
            out = params - lr * m_hat / (np.sqrt(v_hat) + self.eps)
        if not (np.all(np.isfinite(v)) and np.all(np.isfinite(out))):
            raise NonFiniteError(f"{func}: the step overflowed to NaN or inf (|`grad`| above ~1e154 overflows "
                                 f"the second moment g^2; or `params` +- `lr` leaves the float range). Rescale "
                                 f"the loss or lower the learning rate.")
        self.m, self.v, self.t = m, v, t
        return out


# --------------------------------------------------------------------------- data and head


def two_moons(n: int, noise: float, rng: np.random.Generator):
    r"""Two interleaving half circles in R^2 with Gaussian noise.

    Class 0: :math:`(\cos t, \sin t)`; class 1: :math:`(1 - \cos t, \tfrac12 - \sin t)`, with
    :math:`t \sim U[0, \pi]` drawn independently per point (scikit-learn's ``make_moons`` spaces t
    evenly instead; random t makes train and test sets independent draws), plus
    ``noise`` times a standard normal vector; the points are returned in random order.

    Parameters
    ----------
    n : int
        Number of points, >= 2: ``n // 2`` of class 0 and ``n - n // 2`` of class 1.
    noise : float
        Standard deviation of the noise, >= 0.
    rng : numpy.random.Generator, int or None
        NumPy's convention (:func:`theory._validation.as_generator`): None for fresh entropy, an int
        >= 0 or a SeedSequence as a seed, a Generator used as is.

    Returns
    -------
    X : ndarray, shape (n, 2)
    labels : ndarray of int64, shape (n,)
        0 or 1.

    Examples
    --------
    >>> X, labels = two_moons(8, 0.1, np.random.default_rng(0))
    >>> X.shape, int(labels.sum())
    ((8, 2), 4)
    """
    func = "theory.resnet.training.two_moons"
    n = check_int(n, "n", func=func, minimum=2)
    noise = check_interval(noise, "noise", 0.0, math.inf, func=func, closed="left")
    check_memory(8 * 12 * n, "n", n, func=func, hint="Two moons keep about 12 floats per point.")
    rng = as_generator(rng, "rng", func)
    n0 = n // 2
    labels = np.r_[np.zeros(n0, dtype=np.int64), np.ones(n - n0, dtype=np.int64)]
    t = rng.uniform(0.0, np.pi, n)
    X = np.where(labels[:, None] == 0,
                 np.c_[np.cos(t), np.sin(t)],
                 np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)])
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        X = X + noise * rng.standard_normal((n, 2))
    check_finite_output(X, "the noisy points", func=func, hint="Reduce `noise`.")
    order = rng.permutation(n)
    return X[order], labels[order]


def lift(X, d: int) -> np.ndarray:
    """Zero-pad points of R^k to R^d (d >= k): the input x_0 = (X, 0, ..., 0) of the ResNet."""
    func = "theory.resnet.training.lift"
    X = as_float_array(X, "X", func=func, ndim=2)
    d = check_int(d, "d", func=func, minimum=X.shape[1])
    check_array_memory((X.shape[0], d), {"d": d}, func=func, factor=2)
    return np.concatenate([X, np.zeros((X.shape[0], d - X.shape[1]))], axis=1)


def logistic_head(xN, w, c: float, labels):
    r"""Mean binary logistic loss of the linear head z = x_N w + c, and its gradients.

    .. math::
        \ell = \frac1B \sum_i \log(1 + e^{z_i}) - y_i z_i, \qquad
        \partial_{z_i} \ell = (\sigma(z_i) - y_i) / B,

    with :math:`y_i \in \{0, 1\}` and :math:`\sigma` the logistic function.

    Parameters
    ----------
    xN : array_like, shape (B, d)
        Network outputs.
    w : array_like, shape (d,)
    c : float
    labels : array_like, shape (B,)
        0 or 1.

    Returns
    -------
    loss : float
    grad_xN : ndarray, shape (B, d)
    grad_w : ndarray, shape (d,)
    grad_c : float
    """
    func = "theory.resnet.training.logistic_head"
    xN = as_float_array(xN, "xN", func=func, ndim=2)
    B, d = xN.shape
    w = as_float_array(w, "w", func=func, shape=(d,))
    c = check_interval(c, "c", -math.inf, math.inf, func=func)
    y = as_float_array(labels, "labels", func=func, shape=(B,))
    if not np.all((y == 0) | (y == 1)):
        raise ValueError(f"`labels` of {func} must be 0 or 1.")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        z = xN @ w + c
        loss = float(np.mean(np.logaddexp(0.0, z) - y * z))
        dz = (expit(z) - y) / B
        out = loss, np.outer(dz, w), xN.T @ dz, float(dz.sum())
    if not (math.isfinite(loss) and np.all(np.isfinite(out[1])) and np.all(np.isfinite(out[2]))):
        raise NonFiniteError(f"{func}: the logits x_N w + c or the gradients overflowed to NaN or inf; rescale "
                             f"`xN` or `w`.")
    return out


def loss_gradient(x0, theta, grad_xN, residual, scheme="euler", method="backprop", *, xN=None):
    r"""Gradient of a loss l(x_N) in theta and x0, given :math:`\nabla l(x_N)`.

    Calls :func:`theory.resnet.gradient` with the target :math:`y = x_N - \nabla l(x_N)`: the
    gradient of :math:`\tfrac12\|x_N - y\|^2` in x_N is :math:`x_N - y = \nabla l(x_N)`, so the
    chain rule through the network is that of l, exactly (up to the rounding of one subtraction).
    With ``method="adjoint"`` the result is the adjoint approximation of that gradient.

    Parameters
    ----------
    x0 : array_like, shape (B, d)
    theta, residual, scheme, method
        As in :func:`theory.resnet.gradient`.
    grad_xN : array_like, shape (B, d)
        :math:`\nabla l` at x_N.
    xN : array_like, shape (B, d), optional
        The output x_N, if already computed (else :func:`final_state` computes it).

    Returns
    -------
    grad_theta : ndarray, shape of theta
    grad_x0 : ndarray, shape (B, d)
    """
    func = "theory.resnet.training.loss_gradient"
    if xN is None:
        xN = final_state(x0, theta, residual, scheme)
    else:
        x = as_float_array(x0, "x0", func=func, ndim=(1, 2))
        xN = as_float_array(xN, "xN", func=func, shape=x.shape)
    g = as_float_array(grad_xN, "grad_xN", func=func, shape=xN.shape)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        target = xN - g
    check_finite_output(target, "the target x_N - `grad_xN`", func=func, hint="Rescale `grad_xN`.")
    return gradient(x0, theta, target, residual, scheme, method)


def _perceptron(residual, func: str) -> Residual:
    """``residual`` resolved, refused unless it is the perceptron family :func:`theory.resnet.mlp`."""
    residual = resolve_residual(residual, func)
    if residual.code != MLP:
        raise ValueError(f"`residual` of {func} must be the perceptron family theory.resnet.mlp(width); "
                         f"got {residual.name!r}.")
    return residual


def init_mlp(residual: Residual, n_slices: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Slices of the perceptron family with V = 0 (the network starts as the identity) and W, b
    standard normal, i.i.d. across slices; shape (n_slices, 2 d m + m).

    ``residual`` is :func:`theory.resnet.mlp` (m); ``n_slices``, ``d`` >= 1; ``rng`` follows
    NumPy's convention (a Generator, an int >= 0 seed or None)."""
    func = "theory.resnet.training.init_mlp"
    residual = _perceptron(residual, func)
    n_slices = check_int(n_slices, "n_slices", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    m = residual.width
    sizes = {"n_slices": n_slices, "d": d}
    check_array_memory((n_slices, 2 * (2 * d * m + m)), sizes, func=func)
    rng = as_generator(rng, "rng", func)
    V = np.zeros((n_slices, d, m))
    W = rng.standard_normal((n_slices, m, d))
    b = rng.standard_normal((n_slices, m))
    return residual.pack(V, W, b)


def deepen_mlp(theta, depth: int, d: int, residual: Residual, rng: np.random.Generator) -> np.ndarray:
    r"""A depth-``depth`` perceptron ResNet computing the same map as the slices ``theta`` (depth n).

    The Euler ResNet :math:`x_{k+1} = x_k + \tfrac1n V_k \tanh(W_k x_k + b_k)` of ``theta`` (shape (n, P))
    is spread over ``depth`` = N >= n layers: layer :math:`\lfloor kN/n \rfloor` gets slice k with
    :math:`V_k` scaled by N/n (so that :math:`V_k/n` is unchanged under the step 1/N), and every other
    layer is the identity (V = 0, W and b standard normal from ``rng``, as in :func:`init_mlp`). The two
    networks agree on every input up to rounding (a product by N/n then by 1/N): a warm start for
    training at depth N from a fit at a smaller depth (growing the depth, as in multilevel training).

    Parameters
    ----------
    theta : array_like, shape (n, 2 d m + m)
    depth : int
        N >= n.
    d : int
        State dimension.
    residual : Residual
        :func:`theory.resnet.mlp` (m).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ndarray, shape (depth, 2 d m + m)
    """
    func = "theory.resnet.training.deepen_mlp"
    residual = _perceptron(residual, func)
    d = check_int(d, "d", func=func, minimum=1)
    m = residual.width
    theta = as_float_array(theta, "theta", func=func, ndim=2, min_size=1)
    if theta.shape[1] != 2 * d * m + m:
        raise ValueError(f"`theta` of {func} must have shape (n, {2 * d * m + m}) = (n, 2 d m + m) for d = {d}, "
                         f"m = {m}; got {theta.shape}.")
    n = theta.shape[0]
    depth = check_int(depth, "depth", func=func, minimum=n)
    check_array_memory((depth, 2 * theta.shape[1]), {"depth": depth}, func=func)
    rng = as_generator(rng, "rng", func)
    out = init_mlp(residual, depth, d, rng)
    V, W, b = residual.unpack(theta, d)
    layers = (np.arange(n) * depth) // n  # increasing, distinct since depth >= n
    out[layers] = residual.pack(V * (depth / n), W, b)
    return out


# --------------------------------------------------------------------------- Figure 1 measurements


def layer_derivative(x, theta_n, residual) -> np.ndarray:
    r"""The derivative :math:`f'(x, \theta_n)` of a 1-D residual at the points x (d = 1).

    From the gradient API on the depth-1 network :math:`x_1 = x + f(x, \theta_n)`: with target
    :math:`y = x_1 - 1`, the input gradient of :math:`\tfrac12 (x_1 - y)^2` is
    :math:`1 + f'(x, \theta_n)` (exact backpropagation, no finite difference).

    Parameters
    ----------
    x : array_like, shape (M,)
    theta_n : array_like
        One parameter slice of a family with d = 1 (shape (P,) or (1, 1)).
    residual : str or Residual

    Returns
    -------
    ndarray, shape (M,)
    """
    func = "theory.resnet.training.layer_derivative"
    x = as_float_array(x, "x", func=func, ndim=1, min_size=1)
    res = resolve_residual(residual, func)
    pshape = res.param_shape(1)
    one = as_float_array(theta_n, "theta_n", func=func)
    if one.shape not in (pshape, (1,) * len(pshape)) or one.size != int(np.prod(pshape)):
        raise ValueError(f"`theta_n` of {func} must be one slice of shape {pshape} (d = 1) for the "
                         f"{res.name!r} residual; got {one.shape}.")
    one = one.reshape((1,) + pshape)
    xs = x[:, None]
    try:
        x1 = final_state(xs, one, res)
        # g = (x1 - y) (1 + f'): y = x1 - delta with delta = 1, or a few ulps of x1 where 1 is below
        # the spacing of x1, so that x1 - y is exact and non-zero; it is divided out exactly
        with np.errstate(over="ignore", invalid="ignore"):
            delta = np.maximum(1.0, 4.0 * np.spacing(np.abs(x1)))
            y = x1 - delta
        _, g = gradient(xs, one, y, res)
    except NonFiniteError as exc:
        raise NonFiniteError(f"{func}: {exc} (from `x` and `theta_n`)") from None
    with np.errstate(over="ignore", invalid="ignore"):
        out = g[:, 0] / (x1 - y)[:, 0] - 1.0
    check_finite_output(out, "the derivative f'(x, theta_n)", func=func, hint="Rescale `x` or `theta_n`.")
    return out


def _trajectories_1d(trajectories, func: str) -> np.ndarray:
    T = as_float_array(trajectories, "trajectories", func=func, ndim=(2, 3))
    if T.ndim == 3:
        if T.shape[2] != 1:
            raise ValueError(f"`trajectories` of {func} must be 1-D states, shape (K, B) or (K, B, 1); got {T.shape}.")
        T = T[:, :, 0]
    if T.shape[1] < 2:
        raise ValueError(f"`trajectories` of {func} need at least two inputs (B >= 2); got shape {T.shape}.")
    return T


def crossing_count(trajectories) -> int:
    """Number of pairs of consecutive inputs (sorted by x_0) whose order flips at some layer.

    Parameters
    ----------
    trajectories : array_like, shape (K, B) or (K, B, 1)
        States x_0 .. x_{K-1} of B one-dimensional inputs (a ResNet's layers, or an ODE solution on
        a grid of times).

    Returns
    -------
    int
        Among the B - 1 pairs (i, i + 1) of inputs adjacent in the order of x_0, the number for
        which x_k[i + 1] < x_k[i] at some k. Trajectories of a 1-D ODE flow never cross, so this is
        0; an orientation-reversing map makes every pair flip (B - 1).

    Examples
    --------
    >>> crossing_count([[0.0, 1.0, 2.0], [0.0, 0.5, 1.0]])
    0
    >>> crossing_count([[0.0, 1.0, 2.0], [0.0, -0.5, -1.0]])
    2
    """
    T = _trajectories_1d(trajectories, "theory.resnet.training.crossing_count")
    order = np.argsort(T[0], kind="stable")
    T = T[:, order]
    flipped = np.any(np.diff(T, axis=1) < 0.0, axis=0)
    return int(np.count_nonzero(flipped))


def first_crossing_layer(trajectories) -> int | None:
    """The first index k at which two inputs adjacent at x_0 are out of order (None if never)."""
    T = _trajectories_1d(trajectories, "theory.resnet.training.first_crossing_layer")
    T = T[:, np.argsort(T[0], kind="stable")]
    bad = np.flatnonzero(np.any(np.diff(T, axis=1) < 0.0, axis=1))
    return int(bad[0]) if bad.size else None


def increasing_fit_floor(y) -> float:
    r"""The least mean squared error of a nondecreasing sequence fitted to y.

    :math:`\min_{z_1 \le \dots \le z_B} \tfrac1B \sum_i (z_i - y_i)^2`, by the pool-adjacent-violators
    algorithm (y ordered by the inputs). Any increasing map x_0 -> x(1), such as the flow of a 1-D
    ODE, has at least this error on inputs sorted increasingly; for a strictly decreasing y the
    optimum is the constant mean(y) and the floor is the variance of y.

    Examples
    --------
    >>> increasing_fit_floor([1.0, 0.0])        # best: 0.5, 0.5
    0.25
    >>> increasing_fit_floor([0.0, 1.0, 2.0])
    0.0
    """
    y = as_float_array(y, "y", func="theory.resnet.training.increasing_fit_floor", ndim=1, min_size=1)
    means, sizes = [], []
    for value in y:
        means.append(float(value))
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            m2, s2 = means.pop(), sizes.pop()
            m1, s1 = means.pop(), sizes.pop()
            means.append(m1 + (m2 - m1) * (s2 / (s1 + s2)))  # the weighted mean, without overflow of m s
            sizes.append(s1 + s2)
    z = np.repeat(means, sizes)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        out = np.mean((z - y) ** 2)
    check_finite_output(np.asarray([out]), "the mean squared error", func="theory.resnet.training.increasing_fit_floor",
                        hint="Rescale `y`.")
    return float(out)


def refine_slices(theta, k: int) -> np.ndarray:
    """Insert k - 1 linearly interpolated slices between consecutive ones: (N + 1) -> (k N + 1).

    The piecewise-linear weight path is unchanged, so the "weights" interpolating ODE of the refined
    slices is the same ODE, solved on the finer grid s = j / (k N).
    """
    func = "theory.resnet.training.refine_slices"
    theta = as_float_array(theta, "theta", func=func)
    k = check_int(k, "k", func=func, minimum=1)
    if theta.ndim < 1 or theta.shape[0] < 2:
        raise ValueError(f"`theta` of {func} must hold N + 1 >= 2 slices; got shape {theta.shape}.")
    N = theta.shape[0] - 1
    check_array_memory((k * N + 1, *theta.shape[1:]), {"k": k}, func=func, factor=3)
    s = np.arange(k * N + 1) / k
    n = np.minimum(np.floor(s).astype(int), N - 1)
    w = (s - n).reshape((-1,) + (1,) * (theta.ndim - 1))
    return (1.0 - w) * theta[n] + w * theta[n + 1]
