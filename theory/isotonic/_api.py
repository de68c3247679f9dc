"""Public API of weighted isotonic regression (paper key ``topk``, Section 7.5): validation, the
conventions (decreasing fits by reversal, SciPy's block convention, rescaling after an overflow) and
the call of the private kernel :func:`theory.isotonic._kernels._pav`."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import NonFiniteError, as_float_array, check_finite_output
from . import _kernels

__all__ = ["isotonic_regression"]

_FUNC = "theory.isotonic.isotonic_regression"

#: Values of ``p`` implemented. The thesis' p-norm regularised pooling for p = 4/3 (a cubic per block) and
#: general p (a safeguarded root finder per block) is not implemented yet: see the NotImplementedError.
P_IMPLEMENTED = (2.0,)


def _check_p(p):
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"`p` of {_FUNC} must be a real number; got {p!r}.")
    p = float(p)
    if not (math.isfinite(p) and p > 1.0):
        raise ValueError(f"`p` of {_FUNC} must lie in (1, inf); got {p}.")
    if p not in P_IMPLEMENTED:
        raise NotImplementedError(
            f"`p` of {_FUNC}: only p = 2 (weighted least squares, the closed-form weighted mean per block) is "
            f"implemented; got p = {p}. The p-norm regularised pooling of topk Section 7.5 (p = 4/3 by its "
            f"closed-form cubic, general p by a safeguarded root finder) is unfinished.")
    return p


def isotonic_regression(y, w=None, p=2.0, increasing=True):
    r"""Weighted least-squares isotonic regression by pool adjacent violators, in O(n).

    .. math::

        x^\star = \operatorname*{arg\,min}_{x_1 \le x_2 \le \dots \le x_n} \sum_{i=1}^n w_i (x_i - y_i)^2

    (``increasing=False``: :math:`x_1 \ge \dots \ge x_n`). This is Eq. (7.5) of ``topk`` with
    :math:`R = \tfrac12\|\cdot\|^2` up to the direction of the order; each block's value is the
    weighted mean of its ``y`` (the closed form of the pooling subproblem, Eq. (7.6), for p = 2).

    Parameters
    ----------
    y : array_like, shape (n,)
        Responses, finite reals (ints, float32 and lists accepted; a scalar counts as n = 1; n = 0 is
        allowed). Never modified.
    w : array_like, shape (n,), optional
        Positive finite weights, with a finite sum; default all ones. Never modified.
    p : float
        Exponent of the pooling loss; only 2.0 is implemented (any other value in (1, inf) raises
        :class:`NotImplementedError`).
    increasing : bool
        Fit a nondecreasing (True) or nonincreasing (False) sequence.

    Returns
    -------
    x : ndarray, shape (n,), float64
        The fit.
    blocks : ndarray, shape (m + 1,), intp
        Start index of each of the m constant blocks, then n: block k is ``x[blocks[k]:blocks[k+1]]``
        (``scipy.optimize.isotonic_regression``'s ``blocks``; ``[0]`` for n = 0). Adjacent blocks
        always have different values: blocks whose values tie are pooled, as in SciPy.

    Raises
    ------
    TypeError
        ``y`` or ``w`` not real arrays, ``p`` not a real number, ``increasing`` not a bool.
    ValueError
        ``y`` not 1-D or not finite; ``w`` of another shape, not finite, not positive, or with an
        infinite sum; ``p`` outside (1, inf).
    NotImplementedError
        ``p`` in (1, inf) other than 2.

    Notes
    -----
    Pool adjacent violators with a stack of blocks (Busing 2022, Algorithm 1: look-ahead and
    look-back pooling), as in ``topk`` Appendix 7.B.2; every element is pushed and popped at most
    once. The arithmetic follows SciPy's ``pava``, so ``x`` and ``blocks`` equal SciPy's bit for bit
    whenever SciPy's result is finite. Where a pooled weighted sum overflows (for instance values near
    1e300 with a large total weight; SciPy then returns inf or NaN), the fit is recomputed on ``y``
    scaled by a power of two (exact) so that max|y| sum(w) < 2^1000, and scaled back; elements more than
    about 2^2000 times smaller than max|y| then lose precision (they underflow during the scaling).
    Decreasing fits reverse ``y`` and ``w``, fit, and reverse back (blocks become n - reversed blocks).

    References
    ----------
    ``topk``: Section 7.5, Eqs. (7.5)-(7.6); Appendix 7.B.2 (PAV). F. M. T. A. Busing (2022),
    Monotone Regression: A Simple and Fast O(n) PAVA Implementation, J. Stat. Softw. 102(1).

    Examples
    --------
    >>> x, blocks = isotonic_regression([1.0, 3.0, 2.0, 4.0], w=[1.0, 1.0, 3.0, 1.0])
    >>> x.tolist(), blocks.tolist()
    ([1.0, 2.25, 2.25, 4.0], [0, 1, 3, 4])
    >>> isotonic_regression([3, 1, 2], increasing=False)[0].tolist()
    [3.0, 1.5, 1.5]
    """
    if not isinstance(increasing, (bool, np.bool_)):
        raise TypeError(f"`increasing` of {_FUNC} must be a bool; got {increasing!r}.")
    y_arr = as_float_array(np.atleast_1d(y) if np.ndim(y) == 0 and _is_real(y) else y, "y", func=_FUNC, ndim=1)
    n = y_arr.shape[0]
    unit = w is None
    if unit:
        w_arr = np.empty(0)
    else:
        w_arr = as_float_array(np.atleast_1d(w) if np.ndim(w) == 0 and _is_real(w) else w, "w", func=_FUNC,
                               shape=(n,), finite=False)
        code = _kernels._weights_status(w_arr) if n else 0  # one fused pass: positive, finite, finite sum
        if code == 1:
            if not np.all(np.isfinite(w_arr)):
                raise ValueError(f"`w` of {_FUNC} must be finite; got NaN or inf.")
            raise ValueError(f"`w` of {_FUNC} must be positive; got min(w) = {w_arr.min()!r}.")
        if code == 2:
            if not np.all(np.isfinite(w_arr)):
                raise ValueError(f"`w` of {_FUNC} must be finite; got NaN or inf.")
            raise ValueError(f"`w` of {_FUNC} must have a finite sum; got sum(w) = inf.")
    _check_p(p)
    if n == 0:
        return np.empty(0), np.zeros(1, dtype=np.intp)
    if not increasing:
        y_arr = y_arr[::-1].copy()  # fresh C-contiguous arrays: the kernel never sees the user's memory reversed
        if not unit:
            w_arr = w_arr[::-1].copy()

    x, blocks = _fit(y_arr, w_arr, unit, n)

    if not increasing:
        x = x[::-1].copy()
        blocks = (n - blocks[::-1]).copy()
    return x, blocks


def _is_real(v):
    return isinstance(v, (numbers.Real, np.number)) and not isinstance(v, (bool, np.bool_))


def _fit(y, w, unit, n):
    """Run the kernel; on overflow rerun on y scaled by a power of two (exact), then scale back."""
    x = np.empty(n)
    wb = np.empty(n)
    r = np.empty(n + 1, dtype=np.intp)
    nb, status = _kernels._pav(y, w, unit, x, wb, r)
    if status == _kernels.NONFINITE:
        # max|y| * sum(w) bounds every pooled weighted sum; scale it under 2^1000 (frexp: no overflow)
        e_y = math.frexp(float(np.max(np.abs(y))))[1]
        e_w = math.frexp(float(n) if unit else float(np.sum(w)))[1]
        k = 1000 - (e_y + e_w)
        nb, status = _kernels._pav(np.ldexp(y, k), w, unit, x, wb, r)
        if status != _kernels.OK:  # cannot happen with the bound above; never let inf or NaN out silently
            raise NonFiniteError(f"{_FUNC}: a pooled weighted sum overflowed even after rescaling y by 2^{k}.")
        x = np.ldexp(x, -k)
    check_finite_output(x, "the fit x", func=_FUNC)
    return x, r[: nb + 1].copy()


def _finite_sum(w):
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.sum(w)))
