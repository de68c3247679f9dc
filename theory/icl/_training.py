r"""Gradient-flow training of the model (6.6) on the exact population loss (6.3) (chapter 6 of the thesis,
§6.5 and Fig. 6.3), and of the scalar problem of Prop. 6.9.

:func:`gradient_flow` integrates :math:`\dot\theta=-\nabla\ell(\theta)`, :math:`\theta=(\mathbf A,\mathbf B,P)`, by
explicit Euler steps of size ``lr`` (full-batch gradient descent on the exact loss, no sampling). Only the
entries of P that the loss uses (row T-1, columns 1..T, for T = 2..Tmax) move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import functools

from .._validation import as_float_array, check_finite_output, check_int, check_interval
from . import _kernels
from ._loss import _check_context, _structure

__all__ = ["FlowResult", "gradient_flow", "scalar_flow"]


@functools.lru_cache(maxsize=64)
def _stacked_structure(d, Tmax, context):
    nT = Tmax - 1
    gid = np.zeros((nT, d, Tmax, d), np.int64)
    target = np.zeros((nT, d), np.int64)
    ngroups = np.zeros(nT, np.int64)
    for k, T in enumerate(range(2, Tmax + 1)):
        g, tg, n = _structure(d, T, context)
        gid[k, :, :T, :] = g
        target[k] = tg
        ngroups[k] = n
    return gid, target, ngroups


@dataclass(frozen=True)
class FlowResult:
    """Trajectory summary of :func:`gradient_flow`.

    Attributes
    ----------
    Amat, Bmat, P : ndarray
        Final parameters.
    losses : ndarray
        Loss before each step and after the last one (length steps_taken + 1).
    steps : int
        Steps taken (fewer than asked when the loss fell below ``tol``).
    """

    Amat: np.ndarray
    Bmat: np.ndarray
    P: np.ndarray
    losses: np.ndarray
    steps: int


def gradient_flow(Amat0, Bmat0, P0, Tmax=None, context="unitary", *, lr=0.01, steps=1000, tol=0.0,
                  train_P=True):
    r"""Euler discretisation of the gradient flow on :math:`\ell(\mathbf A,\mathbf B,P)` (6.3) under
    Assumptions 6.2 and 2, with the exact loss of :func:`theory.icl.population_loss`.

    Parameters
    ----------
    Amat0, Bmat0 : array_like, shape (H, d)
    P0 : array_like, shape (Tmax, Tmax)
    Tmax : int, optional
    context : {"unitary", "orthogonal"}
    lr : float
        Step size (> 0).
    steps : int
        Largest number of steps (>= 0).
    tol : float
        Stop once the loss is <= tol (>= 0).
    train_P : bool
        Whether P moves (False: the flow on (A, B) at fixed P).
    """
    func = "theory.icl.gradient_flow"
    context = _check_context(context, func)
    A = as_float_array(Amat0, "Amat0", func=func, ndim=2, copy=True)
    B = as_float_array(Bmat0, "Bmat0", func=func, ndim=2, copy=True)
    if B.shape != A.shape:
        raise ValueError(f"`Bmat0` of {func} must have the shape of `Amat0`, {A.shape}; got {B.shape}")
    P = as_float_array(P0, "P0", func=func, ndim=2, copy=True)
    lr = check_interval(lr, "lr", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=0)
    tol = check_interval(tol, "tol", 0.0, np.inf, func=func, closed="left")
    d = A.shape[1]
    if P.shape[0] != P.shape[1] or P.shape[0] < 2:
        raise ValueError(f"`P0` of {func} must be a square (Tmax, Tmax) matrix with Tmax >= 2; got {P.shape}")
    Tmax = P.shape[0] if Tmax is None else check_int(Tmax, "Tmax", func=func, minimum=2, maximum=P.shape[0])
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`Amat0` of {func} must have an even number of columns d = 2δ for context='orthogonal'; "
                         f"got d = {d}")
    gid, target, ngroups = _stacked_structure(d, Tmax, context)
    losses = np.empty(steps + 1)
    k = _kernels.flow(A, B, P, gid, target, ngroups, lr, steps, tol, bool(train_P), losses)
    losses = losses[: k + 1]
    check_finite_output(losses, "the loss along the flow", func=func, hint="Use a smaller `lr`.")
    return FlowResult(A, B, P, losses, int(k))


def scalar_flow(a0, b0, p0, t_end, n_steps):
    r"""Prop. 6.9: the gradient flow of :math:`\ell(a,b,p)=(pab-1)^2`, integrated by classical RK4 with
    ``n_steps`` steps up to time ``t_end``; returns the states, shape (n_steps + 1, 3)."""
    func = "theory.icl.scalar_flow"
    x = np.array([check_interval(v, n, -np.inf, np.inf, func=func) for v, n in ((a0, "a0"), (b0, "b0"), (p0, "p0"))])
    t_end = check_interval(t_end, "t_end", 0.0, np.inf, func=func)
    n_steps = check_int(n_steps, "n_steps", func=func, minimum=1)

    def f(y):
        a, b, p = y
        r = p * a * b - 1.0
        return -2.0 * r * np.array([p * b, p * a, a * b])

    h = t_end / n_steps
    out = np.empty((n_steps + 1, 3))
    out[0] = x
    for n in range(n_steps):
        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out[n + 1] = x
    if not np.all(np.isfinite(out)):
        from .._errors import NonFiniteError
        raise NonFiniteError(f"{func}: the flow overflowed; use a smaller `t_end` or more `n_steps`.")
    return out
