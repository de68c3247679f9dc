r"""The smooth top-k loss of ``topk`` §7.6 (a Fenchel-Young loss built on the relaxed top-k mask) and its
gradient.

With :math:`\varphi(x)=x`, :math:`\mathbf w=\mathbf 1_k` and :math:`R=\frac\lambda p\|\cdot\|_p^p`, Proposition 7.2
gives the convex, differentiable

.. math::

    f_{R}(\mathbf x)=\max_{\mathbf y\in P(\mathbf 1_k)}\langle\mathbf y,\mathbf x\rangle-R(\mathbf y)
      =\langle\mathbf y^\star,\mathbf x\rangle-\tfrac\lambda p\|\mathbf y^\star\|_p^p,\qquad
    \nabla f_R(\mathbf x)=\mathbf y^\star=\mathrm{topkmask}_R(\mathbf x).

The chapter trains with :math:`\ell(\mathbf x,\mathbf t)=f_R(\mathbf x)-\langle\mathbf x,\mathbf t\rangle`, t one-hot
(``form="printed"``). The Fenchel-Young loss of Blondel et al. (2020a) for the regulariser
:math:`\Omega=f_R^*=R+\delta_{P(\mathbf 1_k)}` adds :math:`\Omega(\mathbf t)`:
:math:`L(\mathbf x,\mathbf t)=f_R(\mathbf x)+R(\mathbf t)-\langle\mathbf x,\mathbf t\rangle` for
:math:`\mathbf t\in P(\mathbf 1_k)` (``form="fy"``), which is non-negative and vanishes exactly when
:math:`\mathbf y^\star(\mathbf x)=\mathbf t` (Fenchel-Young inequality, strict convexity of R). A one-hot t lies in
:math:`P(\mathbf 1_k)` only for k = 1; for k > 1, :math:`\Omega(\mathbf t)=+\infty` and the printed loss, which
drops it, is unbounded below: :math:`\ell(\mathbf x-c\mathbf 1,\mathbf t)=\ell(\mathbf x,\mathbf t)-c(k-1)`
(claim ``topk/sec-7.6/erratum``).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_float_array, check_choice, check_int, check_interval, plain_repr
from ._api import topk_mask
from ._root_settings import check_roots as _check_roots

__all__ = ["fenchel_young_gradient", "fenchel_young_loss"]

#: tolerance of the membership test t in P(1_k) (relative to k) for form="fy"
P_ATOL = 1e-12


def _validate(x, t, k, reg, p, func):
    x = as_float_array(x, "x", func=func, ndim=1, min_size=2)
    n = x.shape[0]
    t = as_float_array(t, "t", func=func, shape=(n,))
    k = check_int(k, "k", func=func, minimum=1, maximum=n - 1)
    reg = check_interval(reg, "reg", 0.0, math.inf, func=func, closed="neither")
    p = check_interval(p, "p", 1.0, math.inf, func=func, closed="neither")
    return x, t, k, reg, p


def _check_in_permutahedron(t, k, func):
    tol = P_ATOL * max(1.0, k)
    if t.min() < -tol or t.max() > 1.0 + tol or abs(t.sum() - k) > tol * t.shape[0]:
        raise ValueError(f"`t` of {func} must lie in P(1_k) = {{t in [0, 1]^n : sum t = k}} for form='fy' "
                         f"(k = {k}); got min {plain_repr(t.min())}, max {plain_repr(t.max())}, sum {plain_repr(t.sum())}. A one-hot target is "
                         f"in P(1_k) only for k = 1; use form='printed' for the thesis loss.")


def fenchel_young_loss(x, t, k, reg=1.0, p=2.0, *, form="printed", max_iter=None, tol=None):
    r"""Smooth top-k loss of ``topk`` §7.6 (``form="printed"``) or the Fenchel-Young loss (``form="fy"``).

    .. math::

        \ell(\mathbf x,\mathbf t)=f_R(\mathbf x)-\langle\mathbf x,\mathbf t\rangle,\qquad
        L(\mathbf x,\mathbf t)=\ell(\mathbf x,\mathbf t)+\tfrac\lambda p\|\mathbf t\|_p^p,

    with :math:`f_R(\mathbf x)=\langle\mathbf y^\star,\mathbf x\rangle-\frac\lambda p\|\mathbf y^\star\|_p^p`,
    :math:`\mathbf y^\star` = :func:`theory.topk.topk_mask` ``(x, k, reg, p)`` (Proposition 7.2, φ = x).

    Parameters
    ----------
    x : array_like, shape (n,)
        Scores (logits), finite, n >= 2.
    t : array_like, shape (n,)
        Target: the thesis uses a one-hot vector; ``form="fy"`` needs t in :math:`P(\mathbf 1_k)`
        (entries in [0, 1] summing to k, to 1e-12 relative to k).
    k : int
        1 <= k <= n - 1.
    reg : float
        :math:`\lambda > 0`.
    p : float
        In (1, inf); the values :func:`theory.topk.topk_mask` implements.
    form : {"printed", "fy"}, keyword-only
        The loss as printed (no :math:`\Omega(\mathbf t)` term) or the Fenchel-Young loss.
    max_iter, tol : optional, keyword-only
        The root finders' iteration cap and bracket tolerance of :func:`theory.topk.topk_mask` (default
        None: each solve's own, the results of earlier versions bit for bit).

    Returns
    -------
    float
        ``form="fy"``: >= 0 (to rounding), 0 iff ``topk_mask(x, k, reg, p) == t``. ``form="printed"``:
        bounded below only for k = 1 (where it is L - λ/p for one-hot t).

    Raises
    ------
    TypeError, ValueError
        As :func:`theory.topk.topk_mask`; ``t`` of another shape or not finite; ``form`` not one of the
        names; with ``form="fy"``, ``t`` outside :math:`P(\mathbf 1_k)`.
    NotImplementedError
        Where :func:`theory.topk.topk_mask` does not implement ``p``.

    Notes
    -----
    The gradient is :func:`fenchel_young_gradient` for both forms. For k > 1 and one-hot t the printed
    loss decreases by k - 1 per unit shift of x along -1 (claim ``topk/sec-7.6/erratum``); predictions
    are shift invariant, so training still moves along useful directions, but the loss value is not a
    discrepancy and is not non-negative.

    References
    ----------
    ``topk``: §7.6 (smooth top-k loss), Proposition 7.2; Blondel, Martins and Niculae (2020), Learning
    with Fenchel-Young losses, JMLR 21.

    Examples
    --------
    >>> x, t = [2.0, 0.5, 0.0], [1.0, 0.0, 0.0]
    >>> round(fenchel_young_loss(x, t, k=1, reg=1.0, form="fy"), 12)
    0.0
    >>> fenchel_young_loss(x, t, k=2, reg=1.0)  # negative: printed form, k > 1
    -0.4375
    """
    func = "theory.topk.fenchel_young_loss"
    form = check_choice(form, "form", ("printed", "fy"), func=func)
    x, t, k, reg, p = _validate(x, t, k, reg, p, func)
    _check_roots(max_iter, tol, func)
    if form == "fy":
        _check_in_permutahedron(t, k, func)
    y = topk_mask(x, k, reg, p, max_iter=max_iter, tol=tol)
    # f_R(x) - <x, t> = <y - t, x> - R(y): one inner product of the difference (no cancellation
    # between two large inner products when y is close to t)
    value = float((y - t) @ x - reg / p * np.sum(np.abs(y) ** p))
    if form == "fy":
        value += reg / p * float(np.sum(np.abs(t) ** p))
    if not math.isfinite(value):
        raise ValueError(f"{func}: the loss overflowed (|x| up to {plain_repr(np.max(np.abs(x)))}); rescale `x`.")
    return value


def fenchel_young_gradient(x, t, k, reg=1.0, p=2.0, *, max_iter=None, tol=None):
    r"""Gradient in x of :func:`fenchel_young_loss` (both forms):
    :math:`\nabla_{\mathbf x}\ell=\mathbf y^\star(\mathbf x)-\mathbf t` (Danskin: :math:`\nabla f_R=\mathbf y^\star`,
    Proposition 7.2).

    Parameters
    ----------
    x, t, k, reg, p, max_iter, tol
        As :func:`fenchel_young_loss` (no membership condition on t).

    Returns
    -------
    ndarray, shape (n,)
        Sums to k - sum(t) (k - 1 for one-hot t: never zero when k > 1).

    Raises
    ------
    TypeError, ValueError, NotImplementedError
        As :func:`fenchel_young_loss`.

    Examples
    --------
    >>> fenchel_young_gradient([2.0, 0.5, 0.0], [1.0, 0.0, 0.0], k=2, reg=1.0).tolist()
    [0.0, 0.75, 0.25]
    """
    func = "theory.topk.fenchel_young_gradient"
    x, t, k, reg, p = _validate(x, t, k, reg, p, func)
    _check_roots(max_iter, tol, func)
    return topk_mask(x, k, reg, p, max_iter=max_iter, tol=tol) - t
