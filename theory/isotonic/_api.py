"""Public API of weighted isotonic regression (paper key ``topk``, Section 7.5): validation, the
conventions (decreasing fits by reversal, SciPy's block convention, rescaling after an overflow) and
the call of the private kernel :func:`theory._pav._pav`."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._validation import NonFiniteError, all_finite, as_float_array, check_finite_output, plain_repr
from .. import _pav as _kernels

__all__ = ["ConvergenceWarning", "isotonic_regression"]

_FUNC = "theory.isotonic.isotonic_regression"

#: Values of ``p`` implemented: every p in (1, inf). p = 2 is weighted least squares (the weighted mean
#: per block, SciPy's arithmetic); p = 4/3 (q = 4) pools by the closed-form cubic;
#: any other p by a safeguarded Newton-bisection root finder per block.
P_IMPLEMENTED = "(1, inf)"


class ConvergenceWarning(RuntimeWarning):
    """A per-block root finder (general p) reached ``max_iter`` before ``tol``."""


def _check_p(p):
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"`p` of {_FUNC} must be a real number; got {plain_repr(p)}.")
    p = float(p)
    if not (math.isfinite(p) and p > 1.0):
        raise ValueError(f"`p` of {_FUNC} must lie in (1, inf); got {p}.")
    return p


def isotonic_regression(y, w=None, p=2.0, increasing=True, *, c=None, max_iter=400, tol=4.0 * np.finfo(float).eps,
                        weights=None):
    r"""Weighted isotonic regression with an :math:`\ell_q` loss (the p-norm regularised pooling of
    ``topk`` Section 7.5) by pool adjacent violators.

    p = 2 (default, ``c`` not given):

    .. math::

        x^\star = \operatorname*{arg\,min}_{x_1 \le x_2 \le \dots \le x_n} \sum_{i=1}^n w_i (x_i - y_i)^2 .

    General p in (1, inf), with :math:`q = p/(p-1)` and the optional linear term ``c`` (default 0):

    .. math::

        x^\star = \operatorname*{arg\,min}_{x_1 \le \dots \le x_n}
            \sum_{i=1}^n \Big[\frac{w_i}{q}|x_i - y_i|^q + c_i x_i\Big]

    (``increasing=False``: :math:`x_1 \ge \dots \ge x_n`). At p = 2 this has the same minimiser as the
    first form with targets :math:`y_i - c_i/w_i`, so the fit is continuous in p at 2. This is Eq. (7.5)
    of ``topk``, :math:`v^\star = \arg\min_{v_1\ge\dots\ge v_n}\sum_i h_i(v_i)`, for the relaxed top-k
    mask (:math:`\varphi(x) = x`) with :math:`R = \frac{\lambda}{p}\|\cdot\|_p^p`, so that
    :math:`h_i(v) = \frac1q\lambda^{1-q}|s_i - v|^q + w^{\rm perm}_i v`: multiply by
    :math:`\lambda^{q-1}` and call with ``y = s``, ``w = None`` (ones), ``c = reg**(q-1) * w_perm``,
    ``increasing=False``. Each block's value solves the pooling subproblem Eq. (7.6), i.e. the
    increasing equation :math:`\sum_{i\in B} [w_i\,\mathrm{sign}(\gamma - y_i)|\gamma - y_i|^{q-1} + c_i] = 0`:
    for p = 4/3 (q = 4) a cubic, solved in closed form from merged centred weighted
    moments without cancellation (O(n) overall); for other p != 2 by a safeguarded
    Newton-bisection on the bracket
    :math:`[\min_B y - \max_B (c/w)_+^{1/(q-1)},\ \max_B y + \max_B(-c/w)_+^{1/(q-1)}]`,
    with the blocks found by splitting each segment at its own pooled value (threshold decomposition:
    one root solve per segment, O(n log n) root-solve work for balanced splits; the same result, bit
    for bit, as re-solving each block at every pool-adjacent-violators merge, which is O(B^2) for a
    block of B entries). The magnitude operator's
    :math:`w_i v^2/2` term (:math:`\varphi = x^2/2`) is not offered for p != 2.

    Parameters
    ----------
    y : array_like, shape (n,)
        Responses, finite reals (ints, float32 and lists accepted; a scalar counts as n = 1; n = 0 is
        allowed). Never modified.
    w : array_like, shape (n,), optional
        Positive finite weights, with a finite sum; default all ones. Never modified.
    p : float
        Exponent of the regulariser R, in (1, inf); the loss exponent is q = p/(p - 1).
    increasing : bool
        Fit a nondecreasing (True) or nonincreasing (False) sequence.
    c : array_like, shape (n,), optional, keyword-only
        Finite linear term (default 0). At p = 2 it shifts the targets to ``y - c/w`` (one extra
        rounding, so the fit equals SciPy's on the shifted targets).
    max_iter : int >= 1, keyword-only
        Cap on the iterations of each per-block root solve (general p only; p = 2 and 4/3 are closed
        forms). Reaching it issues :class:`ConvergenceWarning`. Default 400: the safeguarded
        iteration at least halves its bracket every two steps, so about 2 x 60 steps reach full
        accuracy from any start (100 did not always suffice for large p).
    tol : float >= 0, keyword-only
        A root solve stops when its bracket is at most ``tol * max(|lo|, |hi|)`` wide or spans adjacent
        floats (default 4 eps: full float64 accuracy; general p only).

    weights : array_like, shape (n,), optional, keyword-only
        The same as ``w`` (the name of ``scipy.optimize.isotonic_regression``); passing both is a
        TypeError.

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
    theory.NonFiniteError
        p != 2 and a pooled value overflowed (inputs of extreme magnitude; p = 2 rescales instead).

    Warns
    -----
    ConvergenceWarning
        A root solve (p not in {2, 4/3}) reached ``max_iter``.

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
    if weights is not None:  # SciPy's keyword
        if w is not None:
            raise TypeError(f"{_FUNC} got both `w` and `weights`; pass the weights once.")
        w = weights
    if not isinstance(increasing, (bool, np.bool_)):
        raise TypeError(f"`increasing` of {_FUNC} must be a bool; got {plain_repr(increasing)}.")
    if (c is None and p.__class__ is float and p == 2.0 and max_iter.__class__ is int and max_iter >= 1
            and isinstance(tol, float) and 0.0 <= tol < math.inf and _plain(y) and y.shape[0] > 0
            and (w is None or (_plain(w) and w.shape == y.shape))):
        # the common call (float64 C-contiguous writeable 1-D arrays, p = 2, valid max_iter and tol):
        # every check of the generic path below holds already, except the finiteness of y and the
        # checks of w, which the kernel makes (fused validation, as in the generic path at p = 2)
        y_arr, n, unit, fused = y, y.shape[0], w is None, True
        w_arr = _NO_WEIGHTS if unit else w
    else:
        # generic path. At p = 2 without c the finiteness of y and the checks of w are fused into the
        # kernel's single pass; a kernel status other than OK sends the call through _validate_y_w, which
        # raises what the checks made up front would have raised, y before w.
        fused = c is None and _is_real(p) and p == 2
        y_arr = as_float_array(np.atleast_1d(y) if np.ndim(y) == 0 and _is_real(y) else y, "y", func=_FUNC, ndim=1,
                               finite=not fused)
        n = y_arr.shape[0]
        unit = w is None
        if unit:
            w_arr = np.empty(0)
        else:
            w_arr = as_float_array(np.atleast_1d(w) if np.ndim(w) == 0 and _is_real(w) else w, "w", func=_FUNC,
                                   shape=(n,), finite=False)
            if not fused and n:
                _validate_y_w(y_arr, w_arr, _kernels._weights_status(w_arr), check_y=False)
        p = _check_p(p)
        if c is not None:
            c_arr = as_float_array(np.atleast_1d(c) if np.ndim(c) == 0 and _is_real(c) else c, "c", func=_FUNC,
                                   shape=(n,))
        if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (numbers.Integral, np.integer)):
            raise TypeError(f"`max_iter` of {_FUNC} must be an integer; got {plain_repr(max_iter)}.")
        if max_iter < 1:
            raise ValueError(f"`max_iter` of {_FUNC} must be >= 1; got {max_iter}.")
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (numbers.Real, np.floating, np.integer)):
            raise TypeError(f"`tol` of {_FUNC} must be a real number; got {plain_repr(tol)}.")
        if not (math.isfinite(float(tol)) and float(tol) >= 0.0):
            raise ValueError(f"`tol` of {_FUNC} must be finite and >= 0; got {tol}.")
        if n == 0:
            return np.empty(0), np.zeros(1, dtype=np.intp)
        if p == 2.0 and c is not None:
            # (w_i/2)(x_i - y_i)^2 + c_i x_i = (w_i/2)(x_i - (y_i - c_i/w_i))^2 + const: shift the targets
            with np.errstate(over="ignore"):
                y_arr = y_arr - (c_arr if unit else c_arr / w_arr)
            check_finite_output(y_arr, "the shifted targets y - c/w", func=_FUNC,
                                hint="Reduce the magnitude of `c` relative to `w`.")
    if not increasing:
        y_arr = y_arr[::-1].copy()  # fresh C-contiguous arrays: the kernel never sees the user's memory reversed
        if not unit:
            w_arr = w_arr[::-1].copy()
        if c is not None:
            c_arr = c_arr[::-1].copy()

    if p == 2.0:
        x, blocks = _fit(y_arr, w_arr, unit, n, y_checked=not fused)
    else:
        x, blocks = _fit_pnorm(y_arr, np.ones(n) if unit else w_arr,
                               np.zeros(n) if c is None else np.ascontiguousarray(c_arr, dtype=np.float64),
                               p, int(max_iter), float(tol))
        check_finite_output(x, "the fit x", func=_FUNC, hint="Rescale `y`, `w` and `c` towards unit magnitude.")

    if not increasing:
        x = x[::-1].copy()
        blocks = (n - blocks[::-1]).copy()
    return x, blocks


def _fit_pnorm(y, w, c, p, max_iter, tol):
    """p != 2: the cubic kernel for p = 4/3, the root-finding kernel otherwise; status to errors."""
    n = y.size
    x = np.empty(n)
    r = np.empty(n + 1, dtype=np.intp)
    q = p / (p - 1.0)
    # Outside 2^-64 <= max|y| < 2^64, scale to max|y| ~ 1 by a power of two 2^e (exact): with y = 2^e y', x = 2^e x' and the objective
    # divided by 2^(eq), the linear term becomes c' = c 2^(-e(q-1)). Without it |x - y|^(q-1) under- or
    # overflows for tiny or huge y (p = 1.5: y ~ 1e-200 gave a fit wrong in every digit).
    amax = float(np.max(np.abs(y)))
    e = math.frexp(amax)[1] if amax > 0.0 else 0
    if abs(e) > 64:  # moderate magnitudes are solved as given (bits independent of max|y|)
        ex = -e * (q - 1.0)
        E = math.floor(ex)
        with np.errstate(over="ignore", under="ignore"):
            c2 = np.ldexp(c * 2.0 ** (ex - E), E) if math.isfinite(ex) and abs(E) < 1 << 30 else c * np.nan
        if bool(np.all(np.isfinite(c2))) and bool(np.all((c2 != 0.0) | (c == 0.0))):
            x, r_out = _fit_pnorm_raw(np.ldexp(y, -e), w, np.ascontiguousarray(c2), p, max_iter, tol, x, r, q)
            with np.errstate(over="ignore", under="ignore"):  # an overflow is refused by the caller
                return np.ldexp(x, e), r_out
    return _fit_pnorm_raw(y, w, c, p, max_iter, tol, x, r, q)


def _fit_pnorm_raw(y, w, c, p, max_iter, tol, x, r, q):
    n = y.size
    if p == 4.0 / 3.0:
        nb, status = _kernels._pav_q4(y, w, c, x, np.empty((n, 5)), r)
    else:
        info = np.zeros(2)
        nb, status = _kernels._pav_general(y, w, c, q - 1.0, max_iter, tol, x, r, info)
        if status == _kernels.NOT_CONVERGED:
            warnings.warn(
                f"{_FUNC}: a per-block root finder (p = {p}) reached max_iter = {max_iter} before the "
                f"relative bracket width tol = {tol}; the fit is the last bracket's midpoint. Increase "
                f"`max_iter` or `tol`.", ConvergenceWarning, stacklevel=3)
    if status == _kernels.NONFINITE:
        raise NonFiniteError(f"`y` of {_FUNC} is too large in magnitude for p = {p}: a pooled value "
                             f"overflowed to inf or NaN; rescale `y`, `w` and `c` towards unit magnitude.")
    check_finite_output(x, "the fit x", func=_FUNC, hint="Rescale `y`, `w` and `c` towards unit magnitude.")
    return x, r[: nb + 1].copy()


_F64 = np.dtype(np.float64)
_NO_WEIGHTS = np.empty(0)  # the kernel's (ignored) weights argument when w is None; never written


def _plain(a):
    """``a`` is a writeable C-contiguous 1-D float64 ndarray (what as_float_array would pass through)."""
    return a.__class__ is np.ndarray and a.dtype is _F64 and a.ndim == 1 and a.flags.c_contiguous \
        and a.flags.writeable


def _is_real(v):
    return isinstance(v, (numbers.Real, np.number)) and not isinstance(v, (bool, np.bool_))


def _validate_y_w(y, w, code, *, check_y):
    """Raise the error of an invalid ``y`` (when ``check_y``) or of invalid weights (``code`` from
    :func:`_kernels._weights_status`: 1 some w_i not > 0, 2 an infinite sum); return if all is valid."""
    if check_y and not all_finite(y):
        raise ValueError(f"`y` of {_FUNC} must be finite; got NaN or inf.")
    if code == 1:
        if not np.all(np.isfinite(w)):
            raise ValueError(f"`w` of {_FUNC} must be finite; got NaN or inf.")
        raise ValueError(f"`w` of {_FUNC} must be positive; got min(w) = {plain_repr(w.min())}.")
    if code == 2:
        if not np.all(np.isfinite(w)):
            raise ValueError(f"`w` of {_FUNC} must be finite; got NaN or inf.")
        raise ValueError(f"`w` of {_FUNC} must have a finite sum; got sum(w) = inf.")


def _fit(y, w, unit, n, *, y_checked):
    """Run the kernel; on overflow rerun on y scaled by a power of two (exact), then scale back.

    Unless ``y_checked``, y may hold NaN or inf and w is unchecked: the kernel validates w on the fly,
    and a non-finite y shows as a non-finite block value (a NaN or inf element makes its block's sum
    non-finite), so y is checked only when the kernel reports one. Status OK implies that every block
    value, hence x, is finite: no further pass over x.
    """
    x = np.empty(n)
    wb = np.empty(n)
    r = np.empty(n + 1, dtype=np.intp)
    nb, status = _kernels._pav(y, w, unit, x, wb, r)
    if status == _kernels.BAD_WEIGHT or status == _kernels.WEIGHT_SUM:
        _validate_y_w(y, w, 1 if status == _kernels.BAD_WEIGHT else 2, check_y=not y_checked)
        raise AssertionError("unreachable: the kernel reported invalid weights that pass validation")
    if status == _kernels.NONFINITE:
        if not y_checked:
            _validate_y_w(y, w, 0, check_y=True)
        # max|y| * sum(w) bounds every pooled weighted sum; scale it under 2^1000 (frexp: no overflow)
        e_y = math.frexp(float(np.max(np.abs(y))))[1]
        e_w = math.frexp(float(n) if unit else float(np.sum(w)))[1]
        k = 1000 - (e_y + e_w)
        nb, status = _kernels._pav(np.ldexp(y, k), w, unit, x, wb, r)
        if status != _kernels.OK:  # cannot happen with the bound above; never let inf or NaN out silently
            raise NonFiniteError(f"`y` of {_FUNC}: a pooled weighted sum overflowed even after rescaling "
                                 f"`y` by 2^{k}.")
        x = np.ldexp(x, -k)
        check_finite_output(x, "the fit x", func=_FUNC, hint="Rescale `y`, `w` and `c` towards unit magnitude.")
    return x, r[: nb + 1].copy()


def _finite_sum(w):
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.sum(w)))
