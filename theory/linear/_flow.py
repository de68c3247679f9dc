r"""The rescaled gradient flow of the deep linear ResNet and the objects of Prop. 2 and Th. 1
(``resnet-node`` Section 3.2; thesis Section 2.3.2 and Appendix 2.A.2-2.A.5).

The flow is :math:`\dot\theta_n = -N \nabla_n` with :math:`\nabla_n` the exact gradient of
:math:`\ell = \|\Pi - B\|_\Sigma^2` (factor 2 included; see ERRATA.md). It is integrated by SciPy's
DOP853 (an adaptive Runge-Kutta method of order 8 with embedded error control) on the flattened
weights, with the gradient kernel of :mod:`theory.linear._kernels` as right-hand side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from .._finite import all_finite
from .._validation import (
    NonFiniteError,
    as_float_array,
    as_generator,
    check_bool,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
)
from . import _kernels
from ._api import _sigma_b, _theta

__all__ = [
    "Assumption1",
    "FlowInfo",
    "assumption1",
    "depth_embedding",
    "flow_diagnostics",
    "gradient_flow",
    "initial_weights",
    "prop2_constants",
]


_RTOL_MIN = 100 * np.finfo(float).eps

#: Default step budget of :func:`gradient_flow`: DOP853 steps (12 right-hand-side evaluations each,
#: about 0.13 ms per step at N = 4, d = 2, so some 7 s).
MAX_FLOW_STEPS = 50_000

#: Length of DOP853's stability interval on the negative real axis (about -6.0): an explicit step h
#: is stable only while h rho <= 6 for the largest eigenvalue rho of the flow's Jacobian.
_DOP853_STABILITY = 6.0
_DOP853_STAGES = 12


class _Gradient:
    """Preallocated buffers and the flat right-hand side -N grad of the flow."""

    def __init__(self, N, d, Sigma, B):
        self.N, self.d, self.Sigma, self.B = N, d, Sigma, B
        self.before, self.grad = np.empty((N, d, d)), np.empty((N, d, d))
        self.scratch = tuple(np.empty((d, d)) for _ in range(5))
        self.nfev = 0
        self.overflows = 0  # trial stages whose loss or gradient overflowed (the error control rejects them)
        self.max_steps, self.max_nfev, self.t_end, self.progress = 0, np.inf, 0.0, None

    def __call__(self, theta, func):
        loss = _kernels.gradient(theta, self.Sigma, self.B, self.before, self.grad, *self.scratch)
        if not (np.isfinite(loss) and all_finite(self.grad)):
            raise NonFiniteError(f"{func}: the loss or its gradient overflowed to NaN or inf. "
                                 "Reduce the weights, Sigma or B.")
        return self.grad, float(loss)

    def rhs(self, t, y):
        self.nfev += 1
        if self.nfev > self.max_nfev:
            raise ValueError(f"`t` of theory.linear.gradient_flow: the flow took more than max_steps = "
                             f"{self.max_steps} DOP853 steps before t = {t:.6g} (of {self.t_end:.6g}); the flow is "
                             "stiffer than estimated. Pass a larger `max_steps` or a shorter horizon.")
        if self.progress is not None and self.nfev % 1000 == 0:
            self.progress(float(t), self.t_end)
        theta = y.reshape(self.N, self.d, self.d)
        loss = _kernels.gradient(theta, self.Sigma, self.B, self.before, self.grad, *self.scratch)
        if not (np.isfinite(loss) and all_finite(self.grad)):
            # a trial stage of a step too long for the flow: an infinite slope makes DOP853's error estimate
            # infinite, so the step is rejected and retried shorter (an accepted state never holds it)
            self.overflows += 1
            return np.full(y.shape, np.inf)
        return -self.N * self.grad.ravel()

    def stiffness(self, theta0, func, iterations=20):
        """The spectral radius rho of the flow's Jacobian -N Hess(loss) at ``theta0``, by power
        iteration on finite-difference Jacobian-vector products (seeded, deterministic)."""
        f0 = -self.N * self(theta0, func)[0].ravel().copy()
        v = np.random.default_rng(0).standard_normal(theta0.size)
        v /= np.linalg.norm(v)
        eps = 1e-6 * max(1.0, float(np.max(np.abs(theta0))))
        rho = 0.0
        for _ in range(iterations):
            jv = (-self.N * self(theta0 + eps * v.reshape(theta0.shape), func)[0].ravel() - f0) / eps
            rho = float(np.linalg.norm(jv))
            if not (np.isfinite(rho) and rho > 0.0):
                return rho if np.isfinite(rho) else np.inf
            v = jv / rho
        return rho


@dataclass(frozen=True)
class FlowInfo:
    """Quantities along the flow at the requested times.

    Attributes
    ----------
    t : ndarray, shape (T,)
    loss : ndarray, shape (T,)
        :math:`\\ell(t) = \\|\\Pi(t) - B\\|_\\Sigma^2`.
    max_weight : ndarray, shape (T,)
        :math:`\\max_n \\|\\theta_n(t)\\|_F`.
    layer_difference : ndarray, shape (T,)
        :math:`N \\max_n \\|\\theta_{n+1}(t) - \\theta_n(t)\\|_F` (bounded in N by Prop. 2).
    pl : ndarray, shape (T, N)
        :math:`N^2 \\|\\nabla_n(t)\\|_F^2 / \\ell(t)`, the layer-wise PL ratio of the proof.
    gradient_norm : ndarray, shape (T, N)
        :math:`\\|\\nabla_n(t)\\|_F`.
    nfev : int
        Right-hand-side evaluations of the integrator (0 when computed from given weights).
    """

    t: np.ndarray
    loss: np.ndarray
    max_weight: np.ndarray
    layer_difference: np.ndarray
    pl: np.ndarray
    gradient_norm: np.ndarray
    nfev: int = 0


def flow_diagnostics(theta_t, Sigma, B, t=None):
    """Loss, largest weight, N times the largest layer difference and the PL ratios of weights
    ``theta_t`` of shape (T, N, d, d) (for instance the output of :func:`gradient_flow`).

    Returns a :class:`FlowInfo`.
    """
    func = "theory.linear.flow_diagnostics"
    theta_t = as_float_array(theta_t, "theta_t", func=func, ndim=4)
    T, N, d, e = theta_t.shape
    if d != e or N < 1 or T < 1:
        raise ValueError(f"`theta_t` of {func} must have shape (T, N, d, d); got {theta_t.shape}.")
    Sigma, B = _sigma_b(Sigma, B, d, func)
    times = np.arange(T, dtype=float) if t is None else _times(t, func, shape=(T,))
    g = _Gradient(N, d, Sigma, B)
    loss, pl, gnorm = np.empty(T), np.empty((T, N)), np.empty((T, N))
    for k in range(T):
        grad, loss[k] = g(theta_t[k], func)
        gnorm[k] = _frobenius(grad, func)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a zero loss gives nan: PL undefined there
            pl[k] = N**2 * gnorm[k] ** 2 / loss[k]
        if np.any(np.isinf(pl[k])):
            raise NonFiniteError(f"{func}: the PL ratio N^2 |grad|^2 / loss overflowed to inf. Rescale Sigma and B.")
    max_weight = np.max(_frobenius(theta_t, func), axis=1)
    diff = N * np.max(_frobenius(np.diff(theta_t, axis=1), func), axis=1) if N > 1 else np.zeros(T)
    return FlowInfo(times, loss, max_weight, diff, pl, gnorm)


def _frobenius(a, func):
    """Frobenius norms over the last two axes, without overflow warnings (an overflow raises)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.sqrt(np.sum(a * a, axis=(-2, -1)))
    return check_finite_output(out, "a weight norm", func=func, hint="The weights are too large.")


def _times(t, func, shape=None):
    times = as_float_array(t, "t", func=func, ndim=1, min_size=1, shape=shape, copy=True)
    if times[0] < 0 or np.any(np.diff(times) < 0):
        raise ValueError(f"`t` of {func} must be non-negative and non-decreasing; got {times}.")
    return times


def gradient_flow(theta0, Sigma, B, t, *, rtol=1e-10, atol=1e-12, full_output=False, max_steps=MAX_FLOW_STEPS,
                  progress=None):
    r"""Integrate the rescaled gradient flow :math:`\dot\theta_n = -N\nabla_n` of :math:`\|\Pi - B\|^2_\Sigma`.

    Parameters
    ----------
    theta0 : array_like, shape (N, d, d)
        Initial weights (``theta0[0]`` is theta_1).
    Sigma : array_like, shape (d, d)
        Symmetric positive definite.
    B : array_like, shape (d, d)
    t : array_like, shape (T,)
        Non-decreasing times >= 0 at which to return the weights (repeats allowed); the flow
        starts at t = 0.
    rtol, atol : float
        Tolerances of DOP853's local error control (per weight entry); rtol >= 100 eps (2.2e-14),
        the smallest SciPy honours.
    full_output : bool
        Also return a :class:`FlowInfo` with the loss, weight norms, layer differences and PL
        ratios at the times ``t``.
    max_steps : int
        Budget of DOP853 steps (default ``MAX_FLOW_STEPS`` = 50 000, some 7 s at N = 4, d = 2). The number
        needed is estimated up front as ``t[-1] * rho / 6``, rho the spectral radius of the flow's
        Jacobian at ``theta0`` (power iteration) and 6 the length of DOP853's stability interval;
        a larger estimate is refused before integrating, and the integration stops with an error
        once it has spent ``12 * max_steps`` right-hand-side evaluations.
    progress : callable, optional
        ``progress(t_reached, t_end)``, called every 1000 right-hand-side evaluations.

    Returns
    -------
    theta_t : ndarray, shape (T, N, d, d)
    info : FlowInfo, only with ``full_output=True``

    Raises
    ------
    ValueError
        Wrong shapes, Sigma not symmetric positive definite, times negative or decreasing, NaN;
        a horizon ``t[-1]`` whose estimated number of steps exceeds ``max_steps``.
    RuntimeError
        The integrator failed.

    Notes
    -----
    Discrete gradient descent theta <- theta - eta grad L is this flow's Euler scheme with time
    step eta / N. Claims ``resnet-node/prop-2``, ``thm-1``, ``lemma-1``, ``lemma-2``, ``fig-2``.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.linear import gradient_flow, loss
    >>> theta_t = gradient_flow(np.zeros((4, 2, 2)), np.eye(2), 1.1 * np.eye(2), [0.0, 5.0])
    >>> bool(loss(theta_t[1], np.eye(2), 1.1 * np.eye(2)) < 1e-6)
    True
    """
    func = "theory.linear.gradient_flow"
    theta0 = _theta(theta0, func, "theta0")
    N, d, _ = theta0.shape
    Sigma, B = _sigma_b(Sigma, B, d, func)
    times = _times(t, func)
    # SciPy's DOP853 raises its tolerance to 100 eps silently; refuse what would not be honoured
    rtol = check_interval(rtol, "rtol", _RTOL_MIN, 1.0, func=func, closed="left")
    atol = check_interval(atol, "atol", 0.0, np.inf, func=func)
    full_output = check_bool(full_output, "full_output", func=func)
    max_steps = check_int(max_steps, "max_steps", func=func, minimum=1)
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` of {func} must be callable or None; got {type(progress).__name__}.")
    check_memory(8 * times.size * theta0.size, "t", f"{times.size} times", func=func,
                 hint=f"The output has shape ({times.size}, {N}, {d}, {d}).")
    g = _Gradient(N, d, Sigma, B)
    y0 = theta0.ravel().copy()
    unique, where = np.unique(times, return_inverse=True)  # solve_ivp needs strictly increasing t_eval
    if unique[-1] > 0:
        rho = g.stiffness(theta0, func)
        steps = unique[-1] * rho / _DOP853_STABILITY
        if not steps <= max_steps:
            raise ValueError(
                f"`t` of {func} ends at {unique[-1]:.6g}: the flow from `theta0` has stiffness rho = {rho:.3g} "
                f"(largest eigenvalue of its Jacobian), so DOP853 needs about {steps:.3g} steps "
                f"(t * rho / {_DOP853_STABILITY:g}), above max_steps = {max_steps}. Pass a larger `max_steps` "
                "(about 0.13 ms per step at N = 4, d = 2), a shorter horizon, or smaller weights.")
        g.max_steps, g.max_nfev, g.t_end, g.progress = max_steps, _DOP853_STAGES * max_steps + 2, float(unique[-1]), progress
        with np.errstate(invalid="ignore", over="ignore"):  # a rejected trial stage holds inf (see _Gradient.rhs)
            sol = solve_ivp(g.rhs, (0.0, unique[-1]), y0, method="DOP853", t_eval=unique, rtol=rtol, atol=atol)
        if not sol.success:
            if g.overflows:
                raise NonFiniteError(f"{func}: the loss or its gradient overflowed to NaN or inf along the flow "
                                     f"and DOP853 could not step past it ({sol.message}). Reduce the weights, "
                                     "Sigma or B.")
            raise RuntimeError(f"{func}: DOP853 failed: {sol.message}")
        theta_t = sol.y.T[where].reshape(len(times), N, d, d)
        if progress is not None:
            progress(g.t_end, g.t_end)
    else:
        theta_t = np.broadcast_to(theta0, (len(times), N, d, d)).copy()
    check_finite_output(theta_t, "the weights", func=func, hint="The flow diverged; check Sigma and B.")
    if not full_output:
        return theta_t
    info = flow_diagnostics(theta_t, Sigma, B, times)
    return theta_t, FlowInfo(info.t, info.loss, info.max_weight, info.layer_difference, info.pl,
                             info.gradient_norm, g.nfev)


def _initial_state(theta0, Sigma, B, func):
    """Validated theta0, the extreme eigenvalues m, M of Sigma and the initial loss."""
    theta0 = _theta(theta0, func, "theta0")
    N, d, _ = theta0.shape
    Sigma, B = _sigma_b(Sigma, B, d, func)
    eig = np.linalg.eigvalsh(Sigma)
    _, loss0 = _Gradient(N, d, Sigma, B)(theta0, func)
    return theta0, float(eig[0]), float(eig[-1]), loss0


@dataclass(frozen=True)
class Assumption1:
    """Assumption 1 of ``resnet-node`` at an initialisation.

    Attributes
    ----------
    sqrt_loss : float
        :math:`\\sqrt{\\ell(0)}`.
    threshold : float
        :math:`m / (4\\sqrt{2 M e^3})` (the paper's constant; see ERRATA.md for the thesis').
    max_weight : float
        :math:`\\max_n \\|\\theta_n(0)\\|_F`, required <= 1/4.
    m, M : float
        Extreme eigenvalues of Sigma.
    holds : bool
    """

    sqrt_loss: float
    threshold: float
    max_weight: float
    m: float
    M: float
    holds: bool


def assumption1(theta0, Sigma, B):
    r"""Check Assumption 1: :math:`\sqrt{\ell(0)} < m/(4\sqrt{2Me^3})` and :math:`\|\theta_n(0)\| \le 1/4`.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.linear import assumption1
    >>> assumption1(np.zeros((8, 2, 2)), np.eye(2), 1.01 * np.eye(2)).holds
    True
    """
    func = "theory.linear.assumption1"
    theta0, m, M, loss0 = _initial_state(theta0, Sigma, B, func)
    threshold = m / (4 * np.sqrt(2 * M * np.e**3))
    max_weight = float(np.max(_frobenius(theta0, func)))
    sqrt_loss = float(np.sqrt(loss0))
    return Assumption1(sqrt_loss, float(threshold), max_weight, m, M, bool(sqrt_loss < threshold and max_weight <= 0.25))


def prop2_constants(theta0, Sigma, B):
    r"""The explicit constants that the proof of Prop. 2 gives, for the exact gradient.

    With :math:`\ell_0 = \ell(0)`, m, M the extreme eigenvalues of Sigma and
    :math:`C_0 = N \max_n \|\theta_{n+1}(0) - \theta_n(0)\|_F`, and while every
    :math:`\|\theta_n\| \le 1/2`:

    * PL: :math:`\tfrac{4}{e} m \ell \le N^2\|\nabla_n\|_F^2 \le 4 e M \ell` (``pl_low``, ``pl_high``,
      as multiples of :math:`\ell`);
    * loss: :math:`\ell(t) \le e^{-4mt/e}\ell_0` (``loss_rate`` = 4m/e);
    * movement: :math:`\|\theta_n(t) - \theta_n(0)\|_F \le e^{3/2}\sqrt{M\ell_0}/m` (``movement``);
    * smoothness: :math:`N\|\theta_{n+1}(t) - \theta_n(t)\|_F \le C_0 + 2e^{3/2}\sqrt{M\ell_0}/m` (``smoothness``);
    * time-Lipschitz: :math:`\|\dot\theta_n\|_F \le 2\sqrt{e M \ell_0}` (``time_lipschitz``).

    Returns a dict with these and ``l0``, ``m``, ``M``, ``C0``.
    """
    func = "theory.linear.prop2_constants"
    theta0, m, M, l0 = _initial_state(theta0, Sigma, B, func)
    N = theta0.shape[0]
    C0 = float(N * np.max(_frobenius(np.diff(theta0, axis=0), func))) if N > 1 else 0.0
    with np.errstate(over="ignore"):
        movement = np.e**1.5 * np.sqrt(M * l0) / m
        out = {
            "l0": float(l0), "m": m, "M": M, "C0": C0,
            "pl_low": 4 * m / np.e, "pl_high": 4 * np.e * M, "loss_rate": 4 * m / np.e,
            "movement": float(movement), "smoothness": float(C0 + 2 * movement),
            "time_lipschitz": float(2 * np.sqrt(np.e * M * l0)),
        }
    check_finite_output(np.array(list(out.values())), "a constant", func=func,
                        hint="Sigma is too ill-conditioned or the loss too large.")
    return out


def initial_weights(N, d, kind, rng=None, *, scale=0.25):
    r"""Initial weights of the deep linear ResNet, shape (N, d, d).

    ``kind``:

    * ``"zero"``: theta_n = 0;
    * ``"constant"``: theta_n = scale G / ||G||_F for one Gaussian G (tied; C_0 = 0);
    * ``"cosine"``: theta_n = scale cos(pi n / N) G / ||G||_F, smooth in depth (C_0 <= pi scale);
    * ``"iid"``: theta_n = scale G_n / ||G_n||_F with G_n i.i.d. Gaussian (differences O(1): the
      contrast case, outside the assumptions of Prop. 2).

    With the default scale 1/4 every ||theta_n||_F <= 1/4, as Assumption 1 asks.
    """
    func = "theory.linear.initial_weights"
    N = check_int(N, "N", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    check_choice(kind, "kind", ("zero", "constant", "cosine", "iid"), func=func)
    scale = check_interval(scale, "scale", 0.0, np.inf, func=func, closed="left")
    check_memory(8 * N * d * d, "N" if N >= d * d else "d", N if N >= d * d else d, func=func,
                 hint=f"The weights have shape ({N}, {d}, {d}).")
    if kind == "zero":
        return np.zeros((N, d, d))
    rng = as_generator(rng, "rng", func)
    if kind == "iid":
        G = rng.standard_normal((N, d, d))
        return scale * G / np.sqrt(np.sum(G**2, axis=(1, 2)))[:, None, None]
    G = rng.standard_normal((d, d))
    G *= scale / np.linalg.norm(G)
    if kind == "constant":
        return np.broadcast_to(G, (N, d, d)).copy()
    n = np.arange(1, N + 1)[:, None, None]
    return np.cos(np.pi * n / N) * G


def depth_embedding(theta_t, s):
    r""":math:`\psi_N(s, t) = \theta_{\lfloor Ns \rfloor}(t)`, the piecewise-constant function of depth.

    With 1-indexed weights the paper's formula needs theta_0 for s < 1/N; the convention here is
    layer min(floor(N s) + 1, N), i.e. ``theta[..., min(floor(N s), N - 1), :, :]``, which agrees
    with the paper for every s >= 1/N.

    Parameters
    ----------
    theta_t : array_like, shape (..., N, d, d)
    s : array_like, values in [0, 1]

    Returns
    -------
    ndarray, shape (..., len(s), d, d)
    """
    func = "theory.linear.depth_embedding"
    theta_t = as_float_array(theta_t, "theta_t", func=func)
    if theta_t.ndim < 3 or theta_t.shape[-3] < 1 or theta_t.shape[-1] != theta_t.shape[-2]:
        raise ValueError(f"`theta_t` of {func} must have shape (..., N, d, d) with N >= 1; got {theta_t.shape}.")
    s = as_float_array(s, "s", func=func, ndim=(0, 1))
    if np.any((s < 0) | (s > 1)):
        raise ValueError(f"`s` of {func} must lie in [0, 1].")
    N = theta_t.shape[-3]
    idx = np.minimum(np.floor(N * np.atleast_1d(s)).astype(int), N - 1)
    return np.take(theta_t, idx, axis=-3)
