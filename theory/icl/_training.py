r"""Gradient-flow training of the model (6.6) on the exact population loss (6.3) (chapter 6 of the thesis,
§6.5 and Fig. 6.3), and of the scalar problem of Prop. 6.9 (private; validated by :mod:`theory.icl._api`).

:func:`gradient_flow` integrates :math:`\dot\theta=-\nabla\ell(\theta)`, :math:`\theta=(\mathbf A,\mathbf B,P)`, by
explicit Euler steps of size ``lr`` (full-batch gradient descent on the exact loss, no sampling). Only the
entries of P that the loss uses (row T-1, columns 1..T, for T = 2..Tmax) move.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import _kernels
from ._loss import _CACHE_BYTES, _structure


def _stacked_structure(d, Tmax, context):
    """The structures of T = 2..Tmax stacked, gid (Tmax - 1, d, Tmax, d) (cached up to 2 MiB)."""
    if 8 * (Tmax - 1) * d * d * Tmax <= _CACHE_BYTES:
        return _stacked_cached(d, Tmax, context)
    return _build_stacked(d, Tmax, context)


def _build_stacked(d, Tmax, context):
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


_stacked_cached = functools.lru_cache(maxsize=64)(_build_stacked)


@dataclass(frozen=True)
class FlowResult:
    """Trajectory summary of :func:`theory.icl.gradient_flow`.

    Attributes
    ----------
    Amat, Bmat, P : ndarray
        Final parameters, float64, shapes (H, d), (H, d) and (Tmax, Tmax) as given.
    losses : ndarray
        Loss before each step and after the last one (length steps + 1), float64.
    steps : int
        Steps taken (fewer than asked when the loss fell to ``tol`` or below).
    """

    Amat: np.ndarray
    Bmat: np.ndarray
    P: np.ndarray
    losses: np.ndarray
    steps: int


def gradient_flow(A, B, P, Tmax, context, lr, steps, tol, train_P):
    """Euler steps in place on the copies ``A``, ``B``, ``P``: a :class:`FlowResult`."""
    d = A.shape[1]
    gid, target, ngroups = _stacked_structure(d, Tmax, context)
    losses = np.empty(steps + 1)
    k = _kernels.flow(A, B, P, gid, target, ngroups, lr, steps, tol, train_P, losses)
    return FlowResult(A, B, P, losses[: k + 1], int(k))


def scalar_flow(x, t_end, n_steps):
    """Classical RK4 on the gradient flow of (pab - 1)², from x = (a0, b0, p0): states (n_steps + 1, 3)."""

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
    return out
