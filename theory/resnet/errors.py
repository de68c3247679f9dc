r"""The measured quantities of the memory-free adjoint claims (``resnet-node`` Props. 3-6) and the
weight families they are measured on.

* :func:`reconstruction_error`: :math:`\max_n \|x_n - \tilde x_n\|` between the forward trajectory and
  its reverse-time reconstruction (Prop. 3 for Euler, Prop. 5 for Heun).
* :func:`adjoint_gradient_error`: :math:`\max_n \|\tilde\nabla_{\theta_n} L - \nabla_{\theta_n} L\|_F`
  between the adjoint and the exact gradient of ½‖x_N − y‖² (Prop. 4 for Euler, Prop. 6 for Heun).
* :func:`smooth_weights`, :func:`iid_weights`: weights smooth in depth (consecutive differences
  O(1/N)) and i.i.d. across layers (differences O(1)), both bounded independently of N as
  Assumption 2 requires.
* :func:`heun_constants`: the constants of Proposition 5 for the ``tanh_out`` family.
"""

from __future__ import annotations

import numpy as np

from .._residuals import resolve_residual
from .._validation import (as_float_array, as_generator, check_choice, check_finite_output, check_int, check_interval,
                           check_memory, check_work)
from ._api import forward, gradient, reverse
from ._schemes import resolve_scheme

__all__ = [
    "adjoint_gradient_error",
    "error_table",
    "euler_constants",
    "heun_constants",
    "iid_weights",
    "reconstruction_error",
    "smooth_weights",
]


def _unit_op(M):
    return M / np.linalg.norm(M, 2)


def _slices(depth, d, rng, scheme, scale, func):
    """Validated (N, K, d, rng, scale) of the weight generators; K = N (+ 1 for Heun)."""
    depth = check_int(depth, "depth", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    K = depth + resolve_scheme(scheme, func).extra_slices
    check_memory(8 * K * d * d, "depth" if K >= d * d else "d", depth if K >= d * d else d, func=func,
                 hint=f"The weights have shape ({K}, {d}, {d}).")
    scale = check_interval(scale, "scale", 0.0, np.inf, func=func)
    return depth, K, d, as_generator(rng, "rng", func), scale


def smooth_weights(depth, d, rng, *, scheme="euler", scale=1.0):
    r"""Slices theta_n = W(n / N), n = 0 .. K - 1, of the smooth path
    W(s) = A + s B_1 / 2 + sin(2 pi s) B_2 / 2.

    A, B_1, B_2 are standard Gaussian d x d matrices from ``rng`` rescaled to unit operator norm,
    times ``scale``; K = N for Euler and N + 1 for Heun. The same generator state gives the same
    path for every depth, which is what a rate in N needs. Returns shape (K, d, d).
    """
    N, K, d, rng, scale = _slices(depth, d, rng, scheme, scale, "theory.resnet.errors.smooth_weights")
    A, B1, B2 = (scale * _unit_op(rng.standard_normal((d, d))) for _ in range(3))
    s = np.arange(K)[:, None, None] / N
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        out = A + 0.5 * s * B1 + 0.5 * np.sin(2 * np.pi * s) * B2
    return check_finite_output(out, "the weights", func="theory.resnet.errors.smooth_weights", hint="Reduce `scale`.")


def iid_weights(depth, d, rng, *, scheme="euler", scale=1.0):
    r"""Slices theta_n = A + M_n / 2, n = 0 .. K - 1, with A fixed and M_n i.i.d. Gaussian matrices
    rescaled to unit operator norm, both times ``scale``; K = N (Euler) or N + 1 (Heun).

    Consecutive differences are O(1), so Delta_theta of Proposition 5 does not vanish with N.
    Returns shape (K, d, d).
    """
    N, K, d, rng, scale = _slices(depth, d, rng, scheme, scale, "theory.resnet.errors.iid_weights")
    A = scale * _unit_op(rng.standard_normal((d, d)))
    M = rng.standard_normal((K, d, d))
    M /= np.linalg.norm(M, 2, axis=(1, 2))[:, None, None]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        out = A + 0.5 * scale * M
    return check_finite_output(out, "the weights", func="theory.resnet.errors.iid_weights", hint="Reduce `scale`.")


def reconstruction_error(x0, theta, residual, scheme="euler"):
    r""":math:`\max_n \|x_n - \tilde x_n\|_2` (max over the batch too) for the reverse-time scheme.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.resnet.errors import reconstruction_error
    >>> theta = np.full((4, 1, 1), 0.5)            # x_N = (9/8)^4, x~_0 = (63/64)^4
    >>> float(reconstruction_error([1.0], theta, "linear")) == 1 - (63 / 64) ** 4
    True
    """
    func = "theory.resnet.errors.reconstruction_error"
    x = forward(x0, theta, residual, scheme)
    xt = reverse(x[-1], theta, residual, scheme)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        diff = (x - xt).reshape(x.shape[0], -1, x.shape[-1])
        err = np.max(np.linalg.norm(diff, axis=-1))
    check_finite_output(np.asarray([err]), "the reconstruction error max_n ||x_n - x~_n||", func=func,
                        hint="Reduce the weights or the input `x0`.")
    return float(err)


def adjoint_gradient_error(x0, theta, y, residual, scheme="euler"):
    r""":math:`\max_n \|\tilde\nabla_{\theta_n} L - \nabla_{\theta_n} L\|_F` and the largest exact
    slice gradient norm, for L = ½‖x_N − y‖².

    Returns
    -------
    error : float
    scale : float
        :math:`\max_n \|\nabla_{\theta_n} L\|_F`, to read the error relatively.
    """
    exact, _ = gradient(x0, theta, y, residual, scheme, "backprop")
    approx, _ = gradient(x0, theta, y, residual, scheme, "adjoint")
    K = exact.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        err = np.linalg.norm((approx - exact).reshape(K, -1), axis=1)
        ref = np.linalg.norm(exact.reshape(K, -1), axis=1)
    check_finite_output(np.r_[err, ref], "the gradient error", func="theory.resnet.errors.adjoint_gradient_error",
                        hint="Reduce the weights or the input `x0`.")
    return float(err.max()), float(ref.max())


def _constants_input(theta, d, func, min_slices):
    theta = as_float_array(theta, "theta", func=func, ndim=3)
    if theta.shape[0] < min_slices or theta.shape[1] != theta.shape[2] or theta.shape[1] < 1:
        need = "N + 1 >= 2" if min_slices == 2 else "N >= 1"
        raise ValueError(f"`theta` of {func} must have shape ({need.split(' >=')[0]}, d, d) with {need} square "
                         f"slices; got {theta.shape}.")
    d = check_int(d, "d", func=func, minimum=1)
    if d != theta.shape[1]:
        raise ValueError(f"`d` of {func} must equal the state dimension of `theta`, {theta.shape[1]}; got {d}.")
    with np.errstate(over="ignore", invalid="ignore"):
        ops = np.linalg.norm(theta, 2, axis=(1, 2))
    check_finite_output(ops, "the operator norms of `theta`", func=func, hint="Reduce `theta`.")
    return theta, d, float(np.max(ops))


def heun_constants(theta, d):
    r"""Constants of Proposition 5 (Heun reconstruction) for f(x, theta) = theta tanh(x).

    With Frobenius norms on the weights and Euclidean norms on states:

    * L_f = max_n ||theta_n||_op (Lipschitz constant of x -> f(x, theta_n), as |tanh'| <= 1);
    * L'_f = L_f (1 + L_f / (2N)), a Lipschitz constant of
      psi_n(x) = (f_{n+1}(x) + f_n(x - f_{n+1}(x)/N)) / 2;
    * L_theta = sqrt(d): ||(theta - theta') tanh x|| <= sqrt(d) ||theta - theta'||_F;
    * L'_theta = 1: ||(theta - theta') diag(sech^2 x)||_op <= ||theta - theta'||_F;
    * Delta_theta = max_n ||theta_{n+1} - theta_n||_F^2.

    Returns a dict with these and the leading-order bounds of Prop. 5,
    ``corrected`` = (e^{L'_f} - 1) C'_f Delta_theta / (L'_f N) with C'_f = L'_theta L_theta / 4
    (the thesis' constant), and ``printed`` with the paper's C'_f = L'_f L_theta / 4.
    """
    func = "theory.resnet.errors.heun_constants"
    theta, d, L_f = _constants_input(theta, d, func, 2)
    N = theta.shape[0] - 1
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        Lp_f = L_f * (1 + L_f / (2 * N))
        L_theta, Lp_theta = float(np.sqrt(d)), 1.0
        delta = float(np.max(np.sum(np.diff(theta, axis=0) ** 2, axis=(1, 2))))
        growth = np.expm1(Lp_f) / (Lp_f * N) if Lp_f > 0 else 1.0 / N
        out = {
            "L_f": L_f, "Lp_f": float(Lp_f), "L_theta": L_theta, "Lp_theta": Lp_theta, "delta_theta": delta,
            "corrected": float(growth * 0.25 * Lp_theta * L_theta * delta),
            "printed": float(growth * 0.25 * Lp_f * L_theta * delta),
        }
    check_finite_output(np.asarray(list(out.values())), "a constant (e^{L'_f} or Delta_theta)", func=func,
                        hint="Reduce `theta`.")
    return out


def euler_constants(theta, d):
    r"""Constants of Proposition 3 for f(x, theta) = theta tanh(x): C_f = sqrt(d) max ||theta_n||_op,
    L_f = max ||theta_n||_op, and the leading bound (e^{L_f} - 1) C_f / N."""
    func = "theory.resnet.errors.euler_constants"
    theta, d, L_f = _constants_input(theta, d, func, 1)
    N = theta.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        C_f = float(np.sqrt(d)) * L_f
        out = {"L_f": L_f, "C_f": C_f, "bound": float(np.expm1(L_f) * C_f / N)}
    check_finite_output(np.asarray(list(out.values())), "the bound (e^{L_f} - 1) C_f / N", func=func,
                        hint="Reduce `theta`.")
    return out


def _int_list(values, name, func, minimum):
    """``values`` as a non-empty list of Python ints >= ``minimum``, or raise naming ``name``."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"`{name}` of {func} must be a sequence of ints; got {type(values).__name__}.")
    try:
        items = list(np.asarray(values, dtype=object).ravel()) if isinstance(values, np.ndarray) else list(values)
    except TypeError:
        raise TypeError(f"`{name}` of {func} must be a sequence of ints; got {type(values).__name__}.") from None
    if not items:
        raise ValueError(f"`{name}` of {func} must hold at least one value; got none.")
    return [check_int(v, f"{name}[{i}]", func=func, minimum=minimum) for i, v in enumerate(items)]


def error_table(scheme, weights, grid, seeds, *, d=4, residual="tanh_out", max_work=None):
    r"""Reconstruction and adjoint-gradient errors over a depth grid and several seeds.

    For each seed s and depth N: weights from ``smooth_weights`` or ``iid_weights`` drawn with
    ``default_rng(s)`` (so a smooth path is the same for every N), input and target standard
    Gaussian from ``default_rng(10_000 + s)``.

    Returns
    -------
    reconstruction, gradient : ndarray, shape (len(seeds), len(grid))
        :func:`reconstruction_error` and the first output of :func:`adjoint_gradient_error`.

    Parameters
    ----------
    scheme : {"euler", "heun"}
    weights : {"smooth", "iid"}
    grid : sequence of int
        Depths N >= 1 (at least one).
    seeds : sequence of int
        Seeds >= 0 (at least one).
    d : int
        State dimension, >= 1.
    residual : str or Residual
        A family with (d, d) slices: ``"linear"``, ``"tanh"`` or ``"tanh_out"``.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); the cost, about
        30 d^2 len(seeds) sum(grid) for the four trajectories and two gradients per cell, is
        estimated up front and a larger table is refused with the estimate.
    """
    func = "theory.resnet.errors.error_table"
    gen = {"smooth": smooth_weights, "iid": iid_weights}
    check_choice(weights, "weights", tuple(gen), func=func)
    resolve_scheme(scheme, func)
    d = check_int(d, "d", func=func, minimum=1)
    if resolve_residual(residual, func).param_shape(d) != (d, d):
        raise ValueError(f"`residual` of {func} must be a family with (d, d) weight slices ('linear', 'tanh' or "
                         f"'tanh_out'); got {getattr(residual, 'name', residual)!r}.")
    grid, seeds = _int_list(grid, "grid", func, 1), _int_list(seeds, "seeds", func, 0)
    ops = 30.0 * d * d * len(seeds) * float(sum(grid))
    check_work(ops, "grid", max(grid), func=func, max_work=max_work,
               hint=f"{len(seeds)} seed(s), depths up to {max(grid)}, d = {d}.")
    rec = np.empty((len(seeds), len(grid)))
    grad = np.empty_like(rec)
    for i, seed in enumerate(seeds):
        data = np.random.default_rng(10_000 + seed)
        x0, y = data.standard_normal(d), data.standard_normal(d)
        for j, N in enumerate(grid):
            theta = gen[weights](N, d, np.random.default_rng(seed), scheme=scheme)
            rec[i, j] = reconstruction_error(x0, theta, residual, scheme)
            grad[i, j] = adjoint_gradient_error(x0, theta, y, residual, scheme)[0]
    return rec, grad
