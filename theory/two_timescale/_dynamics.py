"""Training dynamics of chapter 6 of the thesis (Marion): gradient descent at step-size ratio eps and
the two-timescale limit (6.5)/(6.8).

* Gradient descent (time discretisation of the flow (6.1)): a <- a - h grad_a L(a, u),
  u <- u - eps h grad_u L(a, u); k steps correspond to t = k h and to the slow time tau = eps k h.
* One-pass SGD (6.9): X_p ~ U[0, 1], Y_p = f*(X_p) + N_p with N_p ~ U[-noise, noise];
  a <- a - h grad_a l, u <- u - eps h grad_u l, l = (Y - f(X; a, u))^2 / 2; tau = eps h p.
* Two-timescale limit (6.8): a = a*(u), du/dtau = -grad_u L(a*(u), u) (by the envelope identity of
  Remark 6.3, also the gradient of u -> L(a*(u), u)), integrated with the classical Runge-Kutta scheme.

Each public function estimates its cost (steps, evaluations per step, records) up front and refuses a run above
the work budget or the memory limit of :mod:`theory._validation` before any step (``limit_flow(tau_end=1e300)``
in milliseconds, not minutes); a run that overflows raises :class:`~theory.NonFiniteError`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory._validation import (NonFiniteError, as_generator, check_finite_output, check_int, check_interval,
                                check_memory, check_work)

from . import _kernels as K
from ._network import (_CALL_OPS, _NO_A, _eta, _evaluate, _eval_ops, _gram_memory, _n_nodes, _optimal, _params,
                       _quadrature, _solve_ops)
from ._target import _target

__all__ = ["Trajectory", "gradient_descent", "limit_flow", "sgd"]

_PKG = "theory.two_timescale."

#: operations per sample and neuron of one SGD step (Numba kernel; measured 5-40 ns per sample and neuron on
#: one core, counted at 1e9 operations per second), and per sample
_SAMPLE_NEURON_OPS = 40.0
_SAMPLE_OPS = 200.0

#: the largest noise half-width whose interval [-noise, noise] has a finite length
_NOISE_MAX = float(np.finfo(float).max / 2)


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """Recorded states of :func:`gradient_descent`, :func:`limit_flow` and :func:`sgd`.

    Attributes
    ----------
    tau : ndarray, shape (R,)
        Slow time eps h k (gradient descent, SGD) or tau (the limit) of the R records.
    a : ndarray, shape (R, m + 1)
        Output weights (a*(u) for the limit).
    u : ndarray, shape (R, m)
        Positions.
    loss : ndarray, shape (R,)
        Population loss L(a, u) (exact quadrature for SGD and the limit).
    """

    tau: np.ndarray
    a: np.ndarray
    u: np.ndarray
    loss: np.ndarray


def _record_memory(n_records, m, name, value, func):
    check_memory(8.0 * n_records * (2 * m + 2), name, value, func=func,
                 hint=f"{n_records:.3g} records of {2 * m + 2} floats.")


def gradient_descent(a0, u0, eps, h, steps, eta, v, f, *, record_every=1, quadrature="exact", max_work=None):
    r"""Gradient descent at step-size ratio eps (fast output weights a, slow positions u), the time
    discretisation of the flow (6.1): :math:`a \leftarrow a - h \nabla_a L(a, u)`,
    :math:`u \leftarrow u - \varepsilon h \nabla_u L(a, u)`; k steps correspond to t = k h and to the slow
    time tau = eps k h.

    Parameters
    ----------
    a0 : array_like, shape (m + 1,)
        Initial output weights (bias first), finite.
    u0 : array_like, shape (m,)
        Initial positions, m >= 1, finite.
    eps : float
        Ratio of the step sizes of u and a, eps > 0.
    h : float
        Step size of a, h > 0 (stable below 2 / lambda_max(H)).
    steps : int
        Number of steps, >= 0.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,) (:func:`~theory.two_timescale.validate_target`).
    record_every : int
        Record every ``record_every`` steps (the start always), >= 1.
    quadrature : "exact" or int
        "exact" (composite Gauss rule) or the number N >= 3 of uniform trapezoid points.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the (steps + 1) loss-and-gradient
        evaluations (nodes x (m + 1) x 10 operations each).

    Returns
    -------
    Trajectory
        tau = eps h k at the recorded steps k = 0, record_every, 2 record_every, ...

    Raises
    ------
    TypeError
        An array that is not real, a size that is not an integer, a constant that is not a real number,
        ``quadrature`` of a wrong kind.
    ValueError
        Wrong shapes, NaN or inf, a constant or size out of range, an invalid target or quadrature, a run above
        the work budget or its records above the memory limit.
    NonFiniteError
        The iterates overflow (reduce ``h``).
    """
    func = _PKG + "gradient_descent"
    a0, u0 = _params(a0, u0, func, "u0", "a0")
    eps = check_interval(eps, "eps", 0.0, np.inf, func=func)
    h = check_interval(h, "h", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=0)
    every = check_int(record_every, "record_every", func=func, minimum=1)
    eta = _eta(eta, func)
    v, f = _target(v, f, func)
    n_grid = _quadrature(quadrature, func)
    m = u0.size
    check_work((steps + 1) * _eval_ops(m, v.size, n_grid), "steps", steps, func=func, max_work=max_work,
               hint=f"m = {m} neurons, {_n_nodes(m, v.size, n_grid)} quadrature nodes per step.")
    _record_memory(steps // every + 1, m, "steps", steps, func)
    every = min(every, steps + 1)  # the same records (the start alone when every > steps), an int64 for the kernel
    with np.errstate(over="ignore", invalid="ignore"):
        A, U, Ls = K.gd_run(a0, u0, eps, h, steps, every, eta, v, f, n_grid)
    hint = "Reduce `h` (it must stay below 2 / lambda_max(H))."
    check_finite_output(A, "gradient descent", func=func, hint=hint)
    check_finite_output(U, "gradient descent", func=func, hint=hint)
    check_finite_output(Ls, "gradient descent", func=func, hint=hint)
    tau = eps * h * every * np.arange(A.shape[0])
    return Trajectory(tau, A, U, Ls)


def _velocity(u, eta, v, f, func):
    """-grad_u L(a*(u), u) at positions that may have left the state space (ValueError naming ``u0``)."""
    if not np.all(np.isfinite(u)):
        raise NonFiniteError(f"{func}: the positions overflowed to NaN or inf within a step. Reduce `dtau`.")
    nodes, weights = K.exact_nodes(u, eta, v)
    a = _optimal(u, eta, v, f, nodes, weights, func, "u0")
    return -_evaluate(a, u, eta, v, f, nodes, weights, func)[2]


def limit_flow(u0, tau_end, dtau, eta, v, f, *, record_every=1, max_work=None):
    r"""The two-timescale limit (6.8): :math:`a = a^*(u)`, :math:`du/d\tau = -\nabla_u L(a^*(u), u)` (by the
    envelope identity of Remark 6.3 also the gradient of the reduced loss L*), integrated from u0 to tau_end by
    the classical Runge-Kutta scheme with N = ceil(tau_end / dtau) equal steps tau_end / N <= dtau (exact
    quadrature).

    Parameters
    ----------
    u0 : array_like, shape (m,)
        Initial positions, m >= 1, finite, with H(u0) non-singular.
    tau_end : float
        Final slow time, >= 0.
    dtau : float
        Largest step, > 0.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    record_every : int
        Record every ``record_every`` steps (the start and the end always), >= 1.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the N RK4 steps (4 evaluations of
        a*(u) and of the gradient each, 5 at a record), checked before the first step.

    Returns
    -------
    Trajectory
        tau, a*(u), u and L*(u) at the recorded steps.

    Raises
    ------
    TypeError
        An array that is not real, a constant that is not a real number, ``record_every`` not an integer.
    ValueError
        Wrong shapes, NaN or inf, a constant out of range, an invalid target, a run above the work budget (e.g.
        ``tau_end`` = 1e300) or its records above the memory limit; ``u0`` when H(u) becomes singular (two
        neurons met: the solution left the state space U of Section 6.5).
    NonFiniteError
        The positions overflow (reduce ``dtau``).
    """
    func = _PKG + "limit_flow"
    _, u = _params(_NO_A, u0, func, "u0")
    tau_end = check_interval(tau_end, "tau_end", 0.0, np.inf, func=func, closed="left")
    dtau = check_interval(dtau, "dtau", 0.0, np.inf, func=func)
    every = check_int(record_every, "record_every", func=func, minimum=1)
    eta = _eta(eta, func)
    v, f = _target(v, f, func)
    m = u.size
    ratio = tau_end / dtau  # a float; inf when it overflows
    per_step = 5 * (_solve_ops(m, v.size, 0) + _eval_ops(m, v.size, 0)) + _CALL_OPS
    check_work((ratio + 1) * per_step, "tau_end", tau_end, func=func, max_work=max_work,
               hint=f"The flow takes ceil(tau_end / dtau) = {math.ceil(ratio) if math.isfinite(ratio) else ratio:.3g} "
                    f"RK4 steps of m = {m} neurons.")
    _record_memory(ratio / every + 2, m, "tau_end", tau_end, func)
    _gram_memory(m, func, "u0")
    n = int(np.ceil(tau_end / dtau - 1e-12))
    step = tau_end / n if n else 0.0
    taus, us, As, Ls = [], [], [], []
    u = u.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(n + 1):
            if not np.all(np.isfinite(u)):
                raise NonFiniteError(f"{func}: the positions overflowed to NaN or inf at tau = {k * step:.4g}. "
                                     "Reduce `dtau`.")
            if k % every == 0 or k == n:
                nodes, weights = K.exact_nodes(u, eta, v)
                try:
                    a = _optimal(u, eta, v, f, nodes, weights, func, "u0")
                except ValueError:
                    raise ValueError(f"`u0` of {func}: the limit left the state space U at tau = {k * step:.4g} "
                                     "(two neurons met).") from None
                taus.append(k * step)
                us.append(u.copy())
                As.append(a)
                Ls.append(_evaluate(a, u, eta, v, f, nodes, weights, func)[0])
            if k == n:
                break
            k1 = _velocity(u, eta, v, f, func)
            k2 = _velocity(u + 0.5 * step * k1, eta, v, f, func)
            k3 = _velocity(u + 0.5 * step * k2, eta, v, f, func)
            k4 = _velocity(u + step * k3, eta, v, f, func)
            u = u + step / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return Trajectory(np.array(taus), np.array(As), np.array(us), np.array(Ls))


def sgd(a0, u0, eps, h, steps, eta, v, f, *, noise=1.0, record_every=None, rng=None, chunk=1_000_000,
        max_work=None):
    r"""One-pass SGD (6.9) at step-size ratio eps: samples :math:`X_p \sim U[0, 1]`,
    :math:`Y_p = f^*(X_p) + N_p` with :math:`N_p \sim U[-\mathrm{noise}, \mathrm{noise}]`, and
    :math:`a \leftarrow a - h \nabla_a \ell`, :math:`u \leftarrow u - \varepsilon h \nabla_u \ell`,
    :math:`\ell = (Y_p - f(X_p; a, u))^2 / 2`; p steps correspond to the slow time tau = eps h p.

    Parameters
    ----------
    a0 : array_like, shape (m + 1,)
        Initial output weights (bias first), finite.
    u0 : array_like, shape (m,)
        Initial positions, m >= 1, finite.
    eps : float
        Ratio of the step sizes, eps > 0.
    h : float
        Step size of a, h > 0.
    steps : int
        Number of samples (steps), >= 1.
    eta : float
        Sharpness, in (0, 1].
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    noise : float
        Half-width of the uniform label noise, in [0, 8.9e307] (so that the interval has a finite length).
    record_every : int, optional
        Record (with the exact population loss) every ``record_every`` steps, >= 1; default max(1, steps // 200),
        about 200 records.
    rng : numpy.random.Generator or int or None
        Source of the samples (``theory._validation.as_generator``).
    chunk : int
        Largest number of samples drawn at once, >= 1 (memory: 16 bytes per sample).
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the steps and the records.

    Returns
    -------
    Trajectory
        tau = eps h p at the records (the start included), with the exact population loss.

    Raises
    ------
    TypeError
        An array that is not real, a size that is not an integer, a constant that is not a real number, ``rng``
        of a wrong kind.
    ValueError
        Wrong shapes, NaN or inf, a constant or size out of range, an invalid target, a run above the work budget
        or the memory limit.
    NonFiniteError
        The iterates overflow (reduce ``h``).
    """
    func = _PKG + "sgd"
    a0, u0 = _params(a0, u0, func, "u0", "a0")
    eps = check_interval(eps, "eps", 0.0, np.inf, func=func)
    h = check_interval(h, "h", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=1)
    eta = _eta(eta, func)
    v, f = _target(v, f, func)
    noise = abs(check_interval(noise, "noise", 0.0, _NOISE_MAX, func=func, closed="both"))  # -0.0 as 0.0
    every = check_int(record_every if record_every is not None else max(1, steps // 200), "record_every",
                      func=func, minimum=1)
    chunk = check_int(chunk, "chunk", func=func, minimum=1)
    rng = as_generator(rng, func=func)
    m = u0.size
    n_records = -(-steps // every) + 1
    check_work(steps * (_SAMPLE_NEURON_OPS * m + _SAMPLE_OPS) + n_records * _eval_ops(m, v.size, 0), "steps", steps,
               func=func, max_work=max_work, hint=f"m = {m} neurons, {n_records} records of the population loss.")
    _record_memory(n_records, m, "steps", steps, func)
    check_memory(16 * min(chunk, every, steps), "chunk", chunk, func=func,
                 hint="Each chunk draws its samples and noises at once.")
    a, u = a0.copy(), u0.copy()
    taus, As, Us, Ls = [0.0], [a.copy()], [u.copy()], [_loss(a, u, eta, v, f, func)]
    done = 0
    while done < steps:
        n = min(every - done % every, steps - done, chunk)
        X = rng.uniform(0.0, 1.0, n)
        N = rng.uniform(-noise, noise, n)
        with np.errstate(over="ignore", invalid="ignore"):
            K.sgd_chunk(a, u, eps, h, eta, v, f, X, N)
        done += n
        if done % every == 0 or done == steps:
            check_finite_output(a, "SGD", func=func, hint="Reduce `h`.")
            check_finite_output(u, "SGD", func=func, hint="Reduce `h` or `eps`.")
            taus.append(eps * h * done)
            As.append(a.copy())
            Us.append(u.copy())
            Ls.append(_loss(a, u, eta, v, f, func))
    return Trajectory(np.array(taus), np.array(As), np.array(Us), np.array(Ls))


def _loss(a, u, eta, v, f, func):
    nodes, weights = K.exact_nodes(u, eta, v)
    return _evaluate(a, u, eta, v, f, nodes, weights, func)[0]
