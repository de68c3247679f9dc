r"""Small training utilities and the two reduced experiments of ``resnet-node`` (Figures 1 and 4).

Everything here is plain NumPy on top of the public kernels of :mod:`theory.resnet`:

* :class:`Adam`, the optimiser of Kingma and Ba on one flat (or any-shaped) parameter array;
* :func:`two_moons` and :func:`lift`, a seeded two-moons data set lifted to R^d by zero padding;
* :func:`logistic_head`, a linear head with the binary logistic loss and its gradients;
* :func:`loss_gradient`, the gradient of any loss l(x_N) through the network, by the identity
  :math:`\partial_{x_N} \tfrac12\|x_N - y\|^2 = x_N - y`: calling :func:`theory.resnet.gradient` with
  :math:`y = x_N - \nabla l(x_N)` gives exactly the chain rule through l (backprop or adjoint);
* :func:`layer_derivative`, :func:`crossing_count` and :func:`increasing_fit_floor`, the
  measurements behind Figure 1 (``resnet-node/fig-1``), with its pure verdict :func:`fig1_verdict`
  and the experiment :func:`fig1_experiment`;
* :func:`train_moons`, :func:`fig4_table` and the pure verdict :func:`fig4_verdict` of the depth
  experiment of Figure 4 (``resnet-node/fig-4``).

The verdict functions take measured numbers only, so the negative controls of
``tests/test_controls_resnet_node_experiments.py`` feed them broken inputs without training.

References: ``resnet-node`` (Sander et al., "Do Residual Neural Networks discretize Neural
ODEs?"), Figure 1, Section 5 and Figure 4; and the elementary fact behind Figure 1 that a 1-D
ResNet whose layers all have Lip(f_n) < N is increasing (each layer x -> x + f_n(x)/N has a positive
derivative), so trajectories can cross only through a layer of slope f'_n <= -N.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from .._errors import NonFiniteError
from .._validation import (as_float_array, as_generator, check_array_memory, check_choice, check_finite_output,
                           check_int, check_interval, check_memory, check_work)
from ..claims import Verdict, qualitative_verdict
from ._api import final_state, forward, gradient
from ._kernels import MLP
from ._ode import interpolating_ode, ode_work
from ._residuals import Residual, mlp, resolve_residual

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
    "Fig1Setup",
    "Fig1Fit",
    "Fig1Result",
    "fit_1d",
    "fig1_measure",
    "fig1_experiment",
    "fig1_verdict",
    "FIG1_MSE_TOL",
    "Fig4Setup",
    "Fig4Table",
    "train_moons",
    "fig4_table",
    "fig4_verdict",
    "FIG4_THRESHOLDS",
    "FIG4_MAX_WORK",
    "VARIANTS",
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


def init_mlp(residual: Residual, n_slices: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Slices of the perceptron family with V = 0 (the network starts as the identity) and W, b
    standard normal, i.i.d. across slices; shape (n_slices, 2 d m + m).

    ``residual`` is :func:`theory.resnet.mlp` (m); ``n_slices``, ``d`` >= 1; ``rng`` follows
    NumPy's convention (a Generator, an int >= 0 seed or None)."""
    func = "theory.resnet.training.init_mlp"
    residual = resolve_residual(residual, func)
    if residual.code != MLP:
        raise ValueError(f"`residual` of {func} must be the perceptron family theory.resnet.mlp(width); "
                         f"got {residual.name!r}.")
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


# --------------------------------------------------------------------------- Figure 1 experiment

# Pass threshold of criterion (a), fixed before training: 1e-3 is 86 times below the floor
# 0.086 that any increasing map has on -x/2 (33 points of [-1, 1]), so a fit under it cannot be
# an ODE-like (monotone) map, and trajectories are resolved well enough to read crossings.
FIG1_MSE_TOL = 1e-3


@dataclass(frozen=True)
class Fig1Setup:
    """Setting of the reduced Figure 1 (the paper gives no training details).

    Every field is validated when the setup is built (ints >= their minimum: N, width, steps,
    ode_refine >= 1, n_points >= 2, warmup, seed >= 0; lr > 0 finite); the cost of a run is checked
    by :func:`fig1_experiment` (``max_work``).

    Attributes
    ----------
    N : int
        Depth. 32: with this schedule the -x/2 fit converged (MSE < 1e-3) for 20 of 20 seeds at
        N = 32 (lr 0.1 and 0.05), about 2 s per fit. N = 64 converged for 10 of 10 seeds with this
        schedule but 9 of 10 with small variants of it (W scale 2; warm-up 1500 of 3000 steps), and
        takes twice as long, which leaves no margin under the 20 s budget of one check.
    width : int
        Hidden width m of the residual V tanh(W x + b).
    n_points : int
        Training inputs, evenly spaced on [-1, 1].
    lr, warmup, steps : float, int, int
        Full-batch Adam with the learning rate raised linearly over ``warmup`` steps, then constant.
        Without warm-up, N = 16 at lr 0.03 or 0.1 stalled for 3 of 3 seeds at MSE 0.089 (the
        constant fit); with a 1000-step warm-up all seeds converged.
    seed : int
        Seed of the initial W, b (standard normal; V = 0), shared by both targets.
    ode_refine : int
        The interpolating ODEs are read on the grid s = j / (ode_refine N).
    """

    N: int = 32
    width: int = 16
    n_points: int = 33
    lr: float = 0.1
    warmup: int = 1000
    steps: int = 2000
    seed: int = 0
    ode_refine: int = 4

    def __post_init__(self):
        _validate_fields(self, "theory.resnet.training.Fig1Setup", ints={
            "N": 1, "width": 1, "n_points": 2, "warmup": 0, "steps": 1, "seed": 0, "ode_refine": 1},
            positive=("lr",))


def _validate_fields(obj, func, *, ints=(), positive=(), nonnegative=(), int_tuples=()):
    """Validate and normalise (to Python ints and floats) the fields of a frozen setup dataclass."""
    for name, minimum in dict(ints).items():
        object.__setattr__(obj, name, check_int(getattr(obj, name), name, func=func, minimum=minimum))
    for name in positive:
        object.__setattr__(obj, name, check_interval(getattr(obj, name), name, 0.0, math.inf, func=func))
    for name in nonnegative:
        object.__setattr__(obj, name, check_interval(getattr(obj, name), name, 0.0, math.inf, func=func,
                                                     closed="left"))
    for name, minimum in dict(int_tuples).items():
        value = getattr(obj, name)
        if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list, np.ndarray)):
            raise TypeError(f"`{name}` of {func} must be a tuple of ints; got {type(value).__name__}.")
        items = tuple(check_int(v, f"{name}[{i}]", func=func, minimum=minimum) for i, v in enumerate(value))
        if not items:
            raise ValueError(f"`{name}` of {func} must hold at least one value; got none.")
        object.__setattr__(obj, name, items)


def _check_setup(setup, cls, func):
    if not isinstance(setup, cls):
        raise TypeError(f"`setup` of {func} must be a {cls.__name__}; got {type(setup).__name__}.")
    return setup


def _check_progress(progress, func):
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` of {func} must be None or a callable progress(done, total); "
                        f"got {type(progress).__name__}.")
    return progress


def _mlp_row_cost(residual, d):
    """Floating-point operations of one residual evaluation on one input (about 2 (2 d m + m))."""
    m = residual.width
    return 2 * (2 * d * m + m) if m else 2 * d * d


def _fit_1d_work(N, B, residual, steps):
    # per step: gradient (forward + backward, about 3 passes) and final_state (1 pass)
    return 4.0 * steps * N * B * _mlp_row_cost(residual, 1)


def fit_1d(x0, target, residual: Residual, theta0, setup: Fig1Setup, *, progress=None, max_work=None):
    """Full-batch Adam on the mean squared error of a 1-D Euler ResNet (returns theta, losses).

    Parameters
    ----------
    x0, target : array_like, shape (B,) or (B, 1)
        Inputs and targets (B >= 1).
    residual : str or Residual
    theta0 : array_like, shape (N, P)
        Initial slices (d = 1).
    setup : Fig1Setup
        ``lr``, ``warmup`` and ``steps`` are used.
    progress : callable, optional
        Called as ``progress(step, steps)`` after each step (e.g. to print or to abort by raising).
    max_work : float, optional
        Budget in floating-point operations (default 1e11): the cost, about
        4 steps N B 2 (2 d m + m), is estimated up front and a longer training is refused.

    Returns
    -------
    theta : ndarray, shape of theta0
    losses : ndarray, shape (steps,)
        The mean squared error before each step.
    """
    func = "theory.resnet.training.fit_1d"
    setup = _check_setup(setup, Fig1Setup, func)
    progress = _check_progress(progress, func)
    res = resolve_residual(residual, func)
    x0 = as_float_array(x0, "x0", func=func, ndim=(1, 2), min_size=1)
    if x0.ndim == 2 and x0.shape[1] != 1:
        raise ValueError(f"`x0` of {func} must hold 1-D inputs, shape (B,) or (B, 1); got {x0.shape}.")
    x0 = x0.reshape(-1, 1)
    B = x0.shape[0]
    target = as_float_array(target, "target", func=func, ndim=(1, 2))
    if target.size != B or (target.ndim == 2 and target.shape[1] != 1):
        raise ValueError(f"`target` of {func} must have the shape of `x0`, ({B},) or ({B}, 1); got {target.shape}.")
    target = target.reshape(-1, 1)
    pshape = res.param_shape(1)
    theta = as_float_array(theta0, "theta0", func=func, copy=True)
    if theta.ndim != 1 + len(pshape) or theta.shape[1:] != pshape or theta.shape[0] < 1:
        raise ValueError(f"`theta0` of {func} must have shape (N, {', '.join(map(str, pshape))}) with N >= 1 for the "
                         f"{res.name!r} residual and d = 1; got {theta.shape}.")
    N, steps = theta.shape[0], setup.steps
    check_memory(8 * steps, "setup.steps", steps, func=func, hint="The losses are kept, one float per step.")
    check_work(_fit_1d_work(N, B, res, steps), "setup.steps", steps, func=func, max_work=max_work,
               hint=f"Depth N = {N}, B = {B} inputs.")
    opt = Adam(setup.lr)
    losses = np.empty(steps)
    for t in range(steps):
        gtheta, _ = gradient(x0, theta, target, res)  # of 1/2 sum (x_N - y)^2
        xN = final_state(x0, theta, res)
        with np.errstate(over="ignore", invalid="ignore"):
            losses[t] = float(np.mean((xN - target) ** 2))
        check_finite_output(losses[t:t + 1], f"the loss at step {t}", func=func, hint="Lower `setup.lr`.")
        lr = setup.lr * min(1.0, (t + 1) / setup.warmup) if setup.warmup else setup.lr
        theta = opt.step(theta, gtheta * (2.0 / B), lr=lr)  # gradient of the MSE
        if progress is not None:
            progress(t + 1, steps)
    return theta, losses


@dataclass(frozen=True)
class Fig1Fit:
    """One trained 1-D ResNet of Figure 1 and what the check measures on it.

    Attributes
    ----------
    name : str
        ``"x/2"`` or ``"-x/2"``.
    theta : ndarray, shape (N, P)
    trajectory : ndarray, shape (N + 1, B)
        x_0 .. x_N of the training inputs.
    mse : float
        Mean squared error of x_N to the target.
    crossings : int
        :func:`crossing_count` of the trajectory.
    first_crossing : int or None
        The first layer at which two inputs are out of order.
    min_fprime_over_N, max_abs_fprime_over_N : float
        min and max |.| of f'(x, theta_n) / N over the layers n and a grid of the interval spanned
        by the layer's inputs x_n (plus the x_n themselves). A flip between layers n and n + 1
        forces f'(xi, theta_n) <= -N at some xi between two inputs (mean value theorem).
    ode_trajectory : ndarray, shape (ode_refine N + 1, B)
        The "weights" interpolating ODE of the network (its last slice repeated as theta_N).
    ode_crossings : int
    ode_mse : float
        Mean squared error of the ODE's x(1) to the target.
    losses : ndarray, shape (steps,)
    """

    name: str
    theta: np.ndarray
    trajectory: np.ndarray
    mse: float
    crossings: int
    first_crossing: int | None
    min_fprime_over_N: float
    max_abs_fprime_over_N: float
    ode_trajectory: np.ndarray
    ode_crossings: int
    ode_mse: float
    losses: np.ndarray


@dataclass(frozen=True)
class Fig1Result:
    """Both fits of Figure 1 and the setting (``to_measured()`` is the report's ``measured``)."""

    setup: Fig1Setup
    x0: np.ndarray
    pos: Fig1Fit
    neg: Fig1Fit
    floor_neg: float
    seconds: dict = field(default_factory=dict)

    @property
    def N(self) -> int:
        """Depth of the measured networks."""
        return int(self.pos.theta.shape[0])

    def to_measured(self) -> dict:
        out = {"N": self.N, "width": self.setup.width, "n_points": self.setup.n_points,
               "lr": self.setup.lr, "warmup": self.setup.warmup, "steps": self.setup.steps,
               "seed": self.setup.seed, "ode_grid": self.setup.ode_refine * self.N,
               "increasing_fit_floor_neg": self.floor_neg}
        for tag, fit in (("pos", self.pos), ("neg", self.neg)):
            out.update({
                f"mse_{tag}": fit.mse,
                f"crossings_{tag}": fit.crossings,
                f"first_crossing_layer_{tag}": fit.first_crossing,
                f"min_fprime_over_N_{tag}": fit.min_fprime_over_N,
                f"max_abs_fprime_over_N_{tag}": fit.max_abs_fprime_over_N,
                f"ode_crossings_{tag}": fit.ode_crossings,
                f"ode_mse_{tag}": fit.ode_mse,
            })
        return out  # timings stay in self.seconds: the report must not change between runs


def _derivative_extremes(theta, trajectory, residual, grid: int = 257):
    """min and max |.| over n of f'(x, theta_n) on [min x_n, max x_n] (grid plus the x_n)."""
    lo, hi = np.inf, 0.0
    for n in range(theta.shape[0]):
        xn = trajectory[n]
        pts = np.r_[np.linspace(xn.min(), xn.max(), grid), xn]
        fp = layer_derivative(pts, theta[n], residual)
        lo = min(lo, float(fp.min()))
        hi = max(hi, float(np.abs(fp).max()))
    return lo, hi


def _mse(a, b, what):
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        out = np.mean((a - b) ** 2)
    check_finite_output(np.asarray([out]), what, func="theory.resnet.training.fig1_measure",
                        hint="Reduce `theta_pos` or `theta_neg`.")
    return float(out)


def _measure_fit(name, x0, target, theta, residual, setup, losses, max_work) -> Fig1Fit:
    N = theta.shape[0]
    traj = forward(x0[:, None], theta, residual)[:, :, 0]
    mse = _mse(traj[-1], target, "the network's mean squared error")
    lo, hi = _derivative_extremes(theta, traj, residual)
    ode_theta = refine_slices(np.concatenate([theta, theta[-1:]]), setup.ode_refine)
    # samples=1: the curvature constant of Prop. 1 is not needed here, and it costs a third of the time
    ode = np.stack([interpolating_ode([x], ode_theta, residual, "weights", samples=1, max_work=max_work).x[:, 0]
                    for x in x0], axis=1)
    return Fig1Fit(name, theta, traj, mse, crossing_count(traj), first_crossing_layer(traj), lo / N, hi / N,
                   ode, crossing_count(ode), _mse(ode[-1], target, "the ODE's mean squared error"),
                   np.asarray([] if losses is None else losses, dtype=float))


def _measure_work(N, B, residual, setup, lipschitz=0.0):
    """Estimated cost of :func:`fig1_measure`: the ODEs of both networks dominate (B solves each)."""
    cells = setup.ode_refine * N
    derivative = N * (257 + B) * 4 * _mlp_row_cost(residual, 1)
    return 2.0 * (B * ode_work(cells, lipschitz, 1, residual, 1) + derivative)


def fig1_measure(theta_pos, theta_neg, residual, setup: Fig1Setup = Fig1Setup(), *, losses=(None, None),
                 seconds=None, max_work=None) -> Fig1Result:
    """Measure two given 1-D Euler ResNets as the x/2 and the -x/2 networks of Figure 1.

    ``theta_pos`` and ``theta_neg`` (shape (N, P) each, d = 1) are evaluated on the
    ``setup.n_points`` inputs of [-1, 1]; the ODEs are read on ``setup.ode_refine`` N + 1 times.
    The negative controls use it on hand-built or untrained networks. ``losses`` is a pair of loss
    curves (1-D arrays, or None) stored in the fits; ``seconds`` a mapping of timings stored as is.
    ``max_work`` (default 1e11 floating-point operations) bounds the estimated cost of the 2 B ODE
    solves (see :func:`theory.resnet.interpolating_ode`).
    """
    func = "theory.resnet.training.fig1_measure"
    setup = _check_setup(setup, Fig1Setup, func)
    residual = resolve_residual(residual, func)
    pshape = residual.param_shape(1)
    thetas = []
    for name, theta in (("theta_pos", theta_pos), ("theta_neg", theta_neg)):
        theta = as_float_array(theta, name, func=func)
        if theta.ndim != 1 + len(pshape) or theta.shape[1:] != pshape or theta.shape[0] < 1:
            raise ValueError(f"`{name}` of {func} must have shape (N, {', '.join(map(str, pshape))}) with N >= 1 "
                             f"for the {residual.name!r} residual and d = 1; got {theta.shape}.")
        thetas.append(theta)
    if thetas[0].shape != thetas[1].shape:
        raise ValueError(f"`theta_neg` of {func} must have the shape of `theta_pos`, {thetas[0].shape}; "
                         f"got {thetas[1].shape}.")
    if isinstance(losses, (str, bytes)) or not isinstance(losses, (tuple, list)) or len(losses) != 2:
        raise TypeError(f"`losses` of {func} must be a pair (pos, neg) of loss curves or None; got "
                        f"{type(losses).__name__}{'' if not hasattr(losses, '__len__') else f' of length {len(losses)}'}.")
    losses = tuple(None if v is None else as_float_array(v, f"losses[{i}]", func=func, ndim=1)
                   for i, v in enumerate(losses))
    if seconds is not None and not isinstance(seconds, Mapping):
        raise TypeError(f"`seconds` of {func} must be None or a mapping; got {type(seconds).__name__}.")
    N, B = thetas[0].shape[0], setup.n_points
    check_work(_measure_work(N, B, residual, setup), "setup.n_points", B, func=func, max_work=max_work,
               hint=f"2 x {B} ODE solves on {setup.ode_refine * N} cells each.")
    x0 = np.linspace(-1.0, 1.0, B)
    pos = _measure_fit("x/2", x0, 0.5 * x0, thetas[0], residual, setup, losses[0], max_work)
    neg = _measure_fit("-x/2", x0, -0.5 * x0, thetas[1], residual, setup, losses[1], max_work)
    return Fig1Result(setup, x0, pos, neg, increasing_fit_floor(-0.5 * x0), dict(seconds or {}))


def fig1_experiment(setup: Fig1Setup = Fig1Setup(), *, progress=None, max_work=None) -> Fig1Result:
    """Train 1-D Euler ResNets on x/2 and -x/2 and measure crossings, slopes and the ODE limits.

    See :class:`Fig1Setup` for the setting and :func:`fig1_verdict` for the criterion.
    ``progress``, if given, is called as ``progress(done, total)`` after each training step of the two
    fits (total = 2 ``setup.steps``). ``max_work`` (default 1e11 floating-point operations) bounds
    the estimated cost of the two fits and of the measurement; a larger setup is refused up front.
    """
    import time

    func = "theory.resnet.training.fig1_experiment"
    setup = _check_setup(setup, Fig1Setup, func)
    progress = _check_progress(progress, func)
    residual = mlp(setup.width)
    ops = 2 * _fit_1d_work(setup.N, setup.n_points, residual, setup.steps)
    ops += _measure_work(setup.N, setup.n_points, residual, setup)
    check_work(ops, "setup.steps", setup.steps, func=func, max_work=max_work,
               hint=f"Two fits of {setup.steps} steps at depth N = {setup.N} and 2 x {setup.n_points} ODE solves.")
    budget = max_work
    x0 = np.linspace(-1.0, 1.0, setup.n_points)
    theta0 = init_mlp(residual, setup.N, 1, np.random.default_rng(setup.seed))
    thetas, losses, seconds = [], [], {}
    for k, (name, sign) in enumerate((("x/2", 0.5), ("-x/2", -0.5))):
        start = time.perf_counter()
        inner = None if progress is None else (lambda t, total, k=k: progress(k * total + t, 2 * total))
        theta, loss = fit_1d(x0, sign * x0, residual, theta0, setup, progress=inner, max_work=budget)
        seconds[f"train {name}"] = round(time.perf_counter() - start, 2)
        thetas.append(theta)
        losses.append(loss)
    start = time.perf_counter()
    result = fig1_measure(*thetas, residual, setup, losses=tuple(losses), max_work=budget)
    seconds["measure"] = round(time.perf_counter() - start, 2)
    return Fig1Result(result.setup, result.x0, result.pos, result.neg, result.floor_neg, seconds)


def fig1_verdict(measured: Mapping, *, mse_tol: float = FIG1_MSE_TOL) -> Verdict:
    r"""Verdict of ``resnet-node/fig-1`` from measured numbers (pure; see :class:`Fig1Result`).

    Pass iff all hold:

    (a) both fits have ``mse_pos``, ``mse_neg`` < ``mse_tol`` (else the experiment is inconclusive);
    (b) the -x/2 network has crossing trajectories (``crossings_neg`` > 0) and, as the 1-D fact of the module docstring requires
        of any flip, a layer slope ``min_fprime_over_N_neg`` <= -1, i.e. f'_n <= -N somewhere;
    (c) the x/2 network has none (``crossings_pos`` == 0);
    (d) neither interpolating ODE has crossings (``ode_crossings_pos`` == ``ode_crossings_neg`` == 0)
        and the ODE of the -x/2 network does not fit -x/2: ``ode_mse_neg`` >= the increasing-fit
        floor ``increasing_fit_floor_neg`` (minus 1e-9 relative, for rounding), which is far above
        ``mse_tol``.
    """
    func = "theory.resnet.training.fig1_verdict"
    if not isinstance(measured, Mapping):
        raise TypeError(f"`measured` of {func} must be a mapping (Fig1Result.to_measured()); "
                        f"got {type(measured).__name__}.")
    mse_tol = check_interval(mse_tol, "mse_tol", 0.0, math.inf, func=func)
    keys = ("mse_pos", "mse_neg", "crossings_pos", "crossings_neg", "min_fprime_over_N_neg", "ode_crossings_pos",
            "ode_crossings_neg", "ode_mse_neg", "increasing_fit_floor_neg")
    missing = [k for k in keys if k not in measured]
    if missing:
        raise ValueError(f"`measured` of {func} lacks the key(s) {missing}.")
    values = {k: check_interval(measured[k], f"measured[{k!r}]", -math.inf, math.inf, func=func) for k in keys}
    get = values.__getitem__
    mse_ok = get("mse_pos") < mse_tol and get("mse_neg") < mse_tol
    parts = [f"MSE x/2 {get('mse_pos'):.2g}, -x/2 {get('mse_neg'):.2g} (need < {mse_tol:g})",
             f"crossings x/2 {int(get('crossings_pos'))}, -x/2 {int(get('crossings_neg'))}",
             f"min f'/N on -x/2 {get('min_fprime_over_N_neg'):.3g} (need <= -1)",
             f"ODE crossings {int(get('ode_crossings_pos'))}, {int(get('ode_crossings_neg'))}",
             f"ODE MSE to -x/2 {get('ode_mse_neg'):.3g} (floor {get('increasing_fit_floor_neg'):.3g})"]
    failed = []
    if not mse_ok:
        failed.append("(a) a fit did not converge: inconclusive")
    if not (get("crossings_neg") > 0 and get("min_fprime_over_N_neg") <= -1.0):
        failed.append("(b) -x/2 network without crossing or without a layer of slope <= -N")
    if get("crossings_pos") != 0:
        failed.append("(c) x/2 network has crossings")
    if not (get("ode_crossings_pos") == 0 and get("ode_crossings_neg") == 0
            and get("ode_mse_neg") >= get("increasing_fit_floor_neg") * (1 - 1e-9)):
        failed.append("(d) an interpolating ODE crosses or beats the increasing-fit floor")
    message = "; ".join(parts) + ("; FAILED " + ", ".join(failed) if failed else "")
    return qualitative_verdict(not failed, message)


# --------------------------------------------------------------------------- Figure 4

VARIANTS = (("euler", "backprop"), ("euler", "adjoint"), ("heun", "backprop"), ("heun", "adjoint"))

# Thresholds of fig4_verdict, fixed before the experiment was run, with their reasons:
FIG4_THRESHOLDS = {
    # (i) "approximated gradients lead to a large test error at small depth": the Euler-adjoint
    # error at the smallest depth is more than 3 times the backprop one, or above 10% absolute
    # (twice the ~5% a linear classifier-level failure would not reach on two moons at noise 0.15)
    "small_depth_ratio": 3.0,
    "small_depth_abs": 0.10,
    # (ii) "the same performance at large depth": |adjoint - backprop| < 2% at the largest depth,
    # for both schemes. On 1024 test points the binomial sd of an error near 1.5% is 0.4%, so
    # 2% is about 5 sd: a real gap, not noise.
    "large_depth_gap": 0.02,
    # (iii) "HeunNet with the adjoint is better (or similar)": Heun-adjoint <= Euler-adjoint at the
    # two smallest depths (2 and 4), where the adjoint's error is largest.
}


#: Default work budget of :func:`fig4_table`, in floating-point operations: the table of the
#: default :class:`Fig4Setup` is estimated at 1.7e11 (48 trainings of 300 steps), above the 1e11 of
#: one call elsewhere (``theory._validation.MAX_WORK``), so the table gets a budget of its own.
FIG4_MAX_WORK = 5 * 10**11


@dataclass(frozen=True)
class Fig4Setup:
    """Setting of the reduced Figure 4 (a reduced reproduction that runs on a CPU).

    Two moons (noise 0.15, 512 train / 1024 test points) lifted to d = 6 by zero padding; residual
    V tanh(W x + b) of width 16, V = 0 and W, b standard normal i.i.d. across slices; a linear head
    (w ~ N(0, 1/d), c = 0) with the logistic loss; full-batch Adam, lr 0.02, 300 steps, on the head
    and the residual weights together; the final test error is reported, median over the seeds.

    Every field is validated when the setup is built (depths >= 1 and seeds >= 0, non-empty tuples
    of ints; width, steps >= 1; d, n_train, n_test >= 2; lr > 0 and noise >= 0 finite); the cost
    of a run is checked by :func:`train_moons` and :func:`fig4_table` (``max_work``).
    """

    depths: tuple[int, ...] = (2, 4, 8, 16)
    seeds: tuple[int, ...] = (0, 1, 2)
    width: int = 16
    d: int = 6
    noise: float = 0.15
    n_train: int = 512
    n_test: int = 1024
    lr: float = 0.02
    steps: int = 300

    def __post_init__(self):
        _validate_fields(self, "theory.resnet.training.Fig4Setup",
                         ints={"width": 1, "d": 2, "n_train": 2, "n_test": 2, "steps": 1},
                         positive=("lr",), nonnegative=("noise",), int_tuples={"depths": 1, "seeds": 0})


def _moons_work(N, scheme, method, setup):
    """Estimated floating-point operations of :func:`train_moons`."""
    row = _mlp_row_cost(mlp(setup.width), setup.d) * (2 if scheme == "heun" else 1)
    passes = 1 + (3 if method == "backprop" else 5)  # final_state, then the gradient
    return float(N) * row * (setup.steps * passes * setup.n_train + setup.n_train + setup.n_test)


def train_moons(N: int, scheme: str, method: str, seed: int, setup: Fig4Setup = Fig4Setup(), *, progress=None,
                max_work=None) -> dict:
    """Train one ResNet of Figure 4; returns its final test error, train loss and train error.

    Data and initialisation depend on ``seed`` only (not on the scheme or the method), so the four
    variants of one seed start from the same point on the same data.

    ``seed`` is an int >= 0. ``progress``, if given, is called as ``progress(step, steps)`` after each
    step. ``max_work`` (default 1e11 floating-point operations) bounds the estimated cost, about
    N 2 (2 d m + m) n_train (1 + 3) steps for backprop (1 + 5 for the adjoint, twice for Heun); a
    longer training is refused up front with the estimate.
    """
    func = "theory.resnet.training.train_moons"
    N = check_int(N, "N", func=func, minimum=1)
    check_choice(scheme, "scheme", ("euler", "heun"), func=func)
    check_choice(method, "method", ("backprop", "adjoint"), func=func)
    seed = check_int(seed, "seed", func=func, minimum=0)
    setup = _check_setup(setup, Fig4Setup, func)
    progress = _check_progress(progress, func)
    check_memory(8.0 * (N + 2) * max(setup.n_train, setup.n_test) * setup.d, "N", N, func=func,
                 hint="Two trajectories of the training set are kept.")
    check_work(_moons_work(N, scheme, method, setup), "N", N, func=func, max_work=max_work,
               hint=f"{setup.steps} steps on {setup.n_train} points, width {setup.width}, d = {setup.d}.")
    residual = mlp(setup.width)
    data_rng = np.random.default_rng([seed, 0])
    X, y = two_moons(setup.n_train, setup.noise, data_rng)
    Xt, yt = two_moons(setup.n_test, setup.noise, data_rng)
    X, Xt = lift(X, setup.d), lift(Xt, setup.d)
    init_rng = np.random.default_rng([seed, 1])
    n_slices = N + (1 if scheme == "heun" else 0)
    # the same draw for both schemes: Heun's extra slice is drawn after Euler's N slices
    theta = init_mlp(residual, N + 1, setup.d, init_rng)[:n_slices]
    w = init_rng.standard_normal(setup.d) / np.sqrt(setup.d)
    params = np.concatenate([theta.ravel(), w, [0.0]])
    size = theta.size
    opt = Adam(setup.lr)
    loss = math.nan
    for step in range(setup.steps):
        theta = params[:size].reshape(theta.shape)
        w, c = params[size:-1], params[-1]
        xN = final_state(X, theta, residual, scheme)
        loss, gx, gw, gc = logistic_head(xN, w, c, y)
        gtheta, _ = loss_gradient(X, theta, gx, residual, scheme, method, xN=xN)
        params = opt.step(params, np.concatenate([gtheta.ravel(), gw, [gc]]))
        if progress is not None:
            progress(step + 1, setup.steps)
    theta = params[:size].reshape(theta.shape)
    w, c = params[size:-1], params[-1]
    z_test = final_state(Xt, theta, residual, scheme) @ w + c
    z_train = final_state(X, theta, residual, scheme) @ w + c
    return {"test_error": float(np.mean((z_test > 0) != (yt == 1))),
            "train_error": float(np.mean((z_train > 0) != (y == 1))),
            "train_loss": float(loss)}


@dataclass(frozen=True)
class Fig4Table:
    """Test errors of Figure 4.

    Attributes
    ----------
    depths : tuple of int
    errors : dict
        ``"<scheme>-<method>"`` -> ndarray, shape (len(depths), len(seeds)): final test errors.
    """

    depths: tuple[int, ...]
    errors: dict

    def median(self, variant: str) -> np.ndarray:
        """Median over the seeds, per depth."""
        if not isinstance(variant, str) or variant not in self.errors:
            raise ValueError(f"`variant` of theory.resnet.training.Fig4Table.median must be one of "
                             f"{sorted(self.errors)}; got {variant!r}.")
        return np.median(self.errors[variant], axis=1)

    def to_measured(self) -> dict:
        return {
            "depths": list(self.depths),
            "median_test_error": {k: [round(float(e), 6) for e in self.median(k)] for k in self.errors},
            "test_error_per_seed": {k: np.round(v, 6).tolist() for k, v in self.errors.items()},
        }


def fig4_table(setup: Fig4Setup = Fig4Setup(), *, progress=None, max_work=None) -> Fig4Table:
    """Run every (scheme, method, depth, seed) of :class:`Fig4Setup`.

    ``progress``, if given, is called as ``progress(done, total)`` after each trained network
    (total = 4 len(depths) len(seeds)). ``max_work`` (default :data:`FIG4_MAX_WORK`, 5e11
    floating-point operations: the default setup costs about 1.7e11) bounds the estimated cost of
    the whole table (the sum over its trainings, see :func:`train_moons`); a larger table is refused
    up front with the estimate.
    """
    func = "theory.resnet.training.fig4_table"
    setup = _check_setup(setup, Fig4Setup, func)
    progress = _check_progress(progress, func)
    ops = len(setup.seeds) * sum(_moons_work(N, s, m, setup) for s, m in VARIANTS for N in setup.depths)
    check_work(ops, "setup.depths", max(setup.depths), func=func,
               max_work=FIG4_MAX_WORK if max_work is None else max_work,
               hint=f"{len(VARIANTS)} variants x {len(setup.depths)} depths x {len(setup.seeds)} seeds of "
                    f"{setup.steps} steps.")
    errors, done, total = {}, 0, len(VARIANTS) * len(setup.depths) * len(setup.seeds)
    budget = max(ops, 1.0)  # each training is within the budget of the whole table, checked above
    for scheme, method in VARIANTS:
        rows = []
        for N in setup.depths:
            row = []
            for s in setup.seeds:
                row.append(train_moons(N, scheme, method, s, setup, max_work=budget)["test_error"])
                done += 1
                if progress is not None:
                    progress(done, total)
            rows.append(row)
        errors[f"{scheme}-{method}"] = np.array(rows)
    return Fig4Table(tuple(setup.depths), errors)


def fig4_verdict(depths: Sequence[int], medians: Mapping, thresholds: Mapping = FIG4_THRESHOLDS) -> Verdict:
    """Verdict of ``resnet-node/fig-4`` from the table of median test errors (pure).

    Parameters
    ----------
    depths : sequence of int
        Increasing, containing 2 and 4; the largest is the "large depth" of criterion (ii).
    medians : mapping
        ``"euler-backprop"``, ``"euler-adjoint"``, ``"heun-backprop"``, ``"heun-adjoint"`` ->
        median test errors (fractions), one per depth.
    thresholds : mapping
        See :data:`FIG4_THRESHOLDS`.

    Criteria: (i) Euler-adjoint at the smallest depth > ``small_depth_ratio`` x Euler-backprop,
    or > ``small_depth_abs``; (ii) |adjoint - backprop| < ``large_depth_gap`` at the largest depth
    for both schemes; (iii) Heun-adjoint <= Euler-adjoint at depths 2 and 4.
    """
    func = "theory.resnet.training.fig4_verdict"
    if isinstance(depths, (str, bytes)) or not hasattr(depths, "__iter__"):
        raise TypeError(f"`depths` of {func} must be a sequence of ints; got {type(depths).__name__}.")
    depths = [check_int(n, f"depths[{i}]", func=func, minimum=1) for i, n in enumerate(depths)]
    if not isinstance(medians, Mapping):
        raise TypeError(f"`medians` of {func} must be a mapping of variant -> median errors; got {type(medians).__name__}.")
    if not isinstance(thresholds, Mapping):
        raise TypeError(f"`thresholds` of {func} must be a mapping (see FIG4_THRESHOLDS); got {type(thresholds).__name__}.")
    missing = [f"{s}-{m}" for s, m in VARIANTS if f"{s}-{m}" not in medians]
    if missing:
        raise ValueError(f"`medians` of {func} lacks the variant(s) {missing}.")
    missing = [k for k in FIG4_THRESHOLDS if k not in thresholds]
    if missing:
        raise ValueError(f"`thresholds` of {func} lacks the key(s) {missing}.")
    thresholds = {k: check_interval(thresholds[k], f"thresholds[{k!r}]", 0.0, math.inf, func=func, closed="left")
                  for k in FIG4_THRESHOLDS}
    if sorted(depths) != depths or 2 not in depths or 4 not in depths:
        raise ValueError(f"`depths` of theory.resnet.training.fig4_verdict must be increasing and contain 2 and 4; "
                         f"got {depths}.")
    med = {f"{s}-{m}": as_float_array(medians[f"{s}-{m}"], f"medians[{f'{s}-{m}'!r}]", func=func)
           for s, m in VARIANTS}
    for k, v in med.items():
        if v.shape != (len(depths),):
            raise ValueError(f"`medians[{k!r}]` of theory.resnet.training.fig4_verdict must have "
                             f"{len(depths)} entries; got shape {v.shape}.")
    i2, i4, big = depths.index(2), depths.index(4), len(depths) - 1
    ea, eb, ha, hb = med["euler-adjoint"], med["euler-backprop"], med["heun-adjoint"], med["heun-backprop"]
    small = depths[0]
    ok_i = ea[0] > thresholds["small_depth_ratio"] * eb[0] or ea[0] > thresholds["small_depth_abs"]
    gap_e, gap_h = abs(ea[big] - eb[big]), abs(ha[big] - hb[big])
    ok_ii = gap_e < thresholds["large_depth_gap"] and gap_h < thresholds["large_depth_gap"]
    ok_iii = ha[i2] <= ea[i2] and ha[i4] <= ea[i4]
    pct = lambda e: f"{100 * e:.1f}%"  # noqa: E731
    message = (
        f"(i) N={small}: Euler adjoint {pct(ea[0])} vs backprop {pct(eb[0])} "
        f"(need > {thresholds['small_depth_ratio']:g}x or > {pct(thresholds['small_depth_abs'])}) "
        f"{'ok' if ok_i else 'FAILS'}; "
        f"(ii) N={depths[big]}: |adjoint - backprop| Euler {pct(gap_e)}, Heun {pct(gap_h)} "
        f"(need < {pct(thresholds['large_depth_gap'])}) {'ok' if ok_ii else 'FAILS'}; "
        f"(iii) Heun vs Euler adjoint: N=2 {pct(ha[i2])} vs {pct(ea[i2])}, N=4 {pct(ha[i4])} vs {pct(ea[i4])} "
        f"{'ok' if ok_iii else 'FAILS'}"
    )
    return qualitative_verdict(bool(ok_i and ok_ii and ok_iii), message)
