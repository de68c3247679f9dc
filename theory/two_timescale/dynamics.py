"""Training dynamics of chapter 6 of the thesis (Marion): gradient descent at step-size ratio eps and
the two-timescale limit (6.5)/(6.8).

* Gradient descent (time discretisation of the flow (6.1)): a <- a - h grad_a L(a, u),
  u <- u - eps h grad_u L(a, u); k steps correspond to t = k h and to the slow time tau = eps k h.
* One-pass SGD (6.9): X_p ~ U[0, 1], Y_p = f*(X_p) + N_p with N_p ~ U[-noise, noise];
  a <- a - h grad_a l, u <- u - eps h grad_u l, l = (Y - f(X; a, u))^2 / 2; tau = eps h p.
* Two-timescale limit (6.8): a = a*(u), du/dtau = -grad_u L(a*(u), u) (by the envelope identity of
  Remark 6.3, also the gradient of u -> L(a*(u), u)), integrated with the classical Runge-Kutta scheme.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory._validation import as_float_array, check_int, check_interval, check_finite_output

from . import _kernels as K
from .network import _eta, _params, gradient, loss, optimal_weights
from .target import validate_target

__all__ = ["Trajectory", "gradient_descent", "limit_flow", "sgd"]


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """Recorded states: ``tau`` (slow time), ``a`` (len(tau), m + 1), ``u`` (len(tau), m), ``loss``."""

    tau: np.ndarray
    a: np.ndarray
    u: np.ndarray
    loss: np.ndarray


def gradient_descent(a0, u0, eps, h, steps, eta, v, f, *, record_every=1, quadrature="exact"):
    """Run ``steps`` steps of gradient descent at ratio ``eps`` (fast a, slow u) from (a0, u0).

    Parameters: eps > 0 (the ratio of the step sizes of u and a), h > 0 (step of a), eta in (0, 1],
    target (v, f); quadrature "exact" or a number of uniform trapezoid points. Returns a
    :class:`Trajectory` with tau = eps h k at the recorded steps k.
    """
    func = "gradient_descent"
    a0, u0 = _params(a0, u0, func)
    eps = check_interval(eps, "eps", 0.0, np.inf, func=func)
    h = check_interval(h, "h", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=0)
    every = check_int(record_every, "record_every", func=func, minimum=1)
    eta = _eta(eta, func)
    v, f = validate_target(v, f, func=func)
    if isinstance(quadrature, str):
        if quadrature != "exact":
            raise ValueError(f"`quadrature` of {func} must be 'exact' or an integer >= 3; got {quadrature!r}.")
        n_grid = 0
    else:
        n_grid = check_int(quadrature, "quadrature", func=func, minimum=3)
    with np.errstate(over="ignore", invalid="ignore"):
        A, U, Ls = K.gd_run(a0, u0, eps, h, steps, every, eta, v, f, n_grid)
    check_finite_output(A, "gradient descent", func=func, hint="Reduce `h` (it must stay below 2 / lambda_max(H)).")
    tau = eps * h * every * np.arange(A.shape[0])
    return Trajectory(tau, A, U, Ls)


def _velocity(u, eta, v, f):
    a = optimal_weights(u, eta, v, f)
    return -gradient(a, u, eta, v, f)[1]


def limit_flow(u0, tau_end, dtau, eta, v, f, *, record_every=1):
    """Integrate the two-timescale limit du/dtau = -grad_u L(a*(u), u) from u0 to tau_end (RK4, step dtau).

    Raises ValueError naming ``u0`` if H(u) becomes singular (neurons collide: the solution left the
    state space U of Section 6.5).
    """
    func = "limit_flow"
    _, u = _params(None, u0, func)
    tau_end = check_interval(tau_end, "tau_end", 0.0, np.inf, func=func, closed="left")
    dtau = check_interval(dtau, "dtau", 0.0, np.inf, func=func)
    every = check_int(record_every, "record_every", func=func, minimum=1)
    eta = _eta(eta, func)
    v, f = validate_target(v, f, func=func)
    n = int(np.ceil(tau_end / dtau - 1e-12))
    step = tau_end / n if n else 0.0
    taus, us, As, Ls = [], [], [], []
    u = u.copy()
    for k in range(n + 1):
        if k % every == 0 or k == n:
            try:
                a = optimal_weights(u, eta, v, f)
            except ValueError:
                raise ValueError(f"`u0` of {func}: the limit left the state space U at tau = {k * step:.4g} "
                                 "(two neurons met).") from None
            taus.append(k * step)
            us.append(u.copy())
            As.append(a)
            Ls.append(loss(a, u, eta, v, f))
        if k == n:
            break
        k1 = _velocity(u, eta, v, f)
        k2 = _velocity(u + 0.5 * step * k1, eta, v, f)
        k3 = _velocity(u + 0.5 * step * k2, eta, v, f)
        k4 = _velocity(u + step * k3, eta, v, f)
        u = u + step / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return Trajectory(np.array(taus), np.array(As), np.array(us), np.array(Ls))


def sgd(a0, u0, eps, h, steps, eta, v, f, *, noise=1.0, record_every=None, rng=None, chunk=1_000_000):
    """Run ``steps`` steps of the one-pass SGD (6.9) from (a0, u0); records (with the exact population loss)
    every ``record_every`` steps (default: 200 records). Samples come from the numpy Generator ``rng``."""
    from theory._validation import as_generator

    func = "sgd"
    a0, u0 = _params(a0, u0, func)
    eps = check_interval(eps, "eps", 0.0, np.inf, func=func)
    h = check_interval(h, "h", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=1)
    eta = _eta(eta, func)
    v, f = validate_target(v, f, func=func)
    noise = check_interval(noise, "noise", 0.0, np.inf, func=func, closed="left")
    every = check_int(record_every if record_every is not None else max(1, steps // 200), "record_every",
                      func=func, minimum=1)
    chunk = check_int(chunk, "chunk", func=func, minimum=1)
    rng = as_generator(rng, func=func)
    a, u = a0.copy(), u0.copy()
    taus, As, Us, Ls = [0.0], [a.copy()], [u.copy()], [loss(a, u, eta, v, f)]
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
            taus.append(eps * h * done)
            As.append(a.copy())
            Us.append(u.copy())
            Ls.append(loss(a, u, eta, v, f))
    return Trajectory(np.array(taus), np.array(As), np.array(Us), np.array(Ls))
