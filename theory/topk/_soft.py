r"""Soft sort and soft rank: p-norm regularised linear programs over the permutahedron, solved on the
isotonic core of :func:`theory.isotonic.isotonic_regression` (paper key ``topk``: thesis Chapter 7,
§7.3 "LP formulations", §7.4 "recovering the previous framework", Propositions 7.2 and 7.5; the p = 2
case is the quadratic soft sort and soft rank of Blondel, Teboul, Berthet and Djolonga (2020),
"Fast differentiable sorting and ranking", ICML).

Notation. :math:`\boldsymbol\rho=(n,n-1,\dots,1)`, :math:`P(\mathbf w)` the permutahedron of
:math:`\mathbf w`, :math:`R(\mathbf y)=\frac\lambda p\|\mathbf y\|_p^p` (``reg`` is :math:`\lambda`),
:math:`q=p/(p-1)`, :math:`g(y)=\mathrm{sign}(y)|y|^{p-1}=\nabla(\frac1p|y|^p)` and its inverse
:math:`g^{-1}(z)=\mathrm{sign}(z)|z|^{q-1}`. Section 7.3 writes the hard operators as linear programs,
:math:`\mathrm{sort}(\mathbf x)=\arg\max_{\mathbf y\in P(\mathbf x)}\langle\boldsymbol\rho,\mathbf y\rangle`
and :math:`\mathrm{rank}(\mathbf x)=\arg\max_{\mathbf y\in P(\boldsymbol\rho)}\langle-\mathbf x,\mathbf y\rangle`
(descending: rank 1 is the largest). Subtracting R inside the max (the φ = identity case of
Proposition 7.2) gives the soft operators; dividing by λ,

.. math::

    \mathrm{softsort}(\mathbf x)=\arg\max_{\mathbf y\in P(\mathbf x)}\langle\boldsymbol\rho/\lambda,\mathbf y\rangle
        -\tfrac1p\|\mathbf y\|_p^p,\qquad
    \mathrm{softrank}(\mathbf x)=\arg\max_{\mathbf y\in P(\boldsymbol\rho)}\langle-\mathbf x/\lambda,\mathbf y\rangle
        -\tfrac1p\|\mathbf y\|_p^p .

Reduction (Proposition 7.5 with the LP's linear vector a, generator w): sort a decreasingly
(:math:`\mathbf s=\mathbf a_\sigma`), solve the decreasing isotonic problem
:math:`\mathbf v=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac1q|s_i-v_i|^q+w_{[i]}v_i` and return
:math:`y_{\sigma_i}=g^{-1}(s_i-v_i)`. A singleton block has :math:`y=w_{[i]}` exactly (its first-order
condition); a pooled block B with value :math:`\gamma` has
:math:`y_i=g^{-1}(s_i-\gamma)`, :math:`\sum_B y_i=\sum_B w_{[i]}`. For p = 2 this is the Euclidean
projection :math:`\Pi_{P(\mathbf w)}(\mathbf a)` and a block is an average:
sort, :math:`y_i=\mathrm{mean}_B(\mathbf x_{\rm sorted})+(\rho_i-\mathrm{mean}_B\boldsymbol\rho)/\lambda`;
rank, :math:`y_{\sigma_i}=\mathrm{mean}_B\boldsymbol\rho+(s_i-\mathrm{mean}_B\mathbf s)`, :math:`\mathbf s`
the sorted :math:`-\mathbf x/\lambda`. These forms are used here (no cancellation of large targets).
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np

from .._errors import NonFiniteError
from .._validation import all_finite, as_float_array, check_finite_output, check_interval, plain_repr
from ..isotonic import ConvergenceWarning, isotonic_regression
from . import _axis, _batch, _kernels
from ._root_settings import check_roots as _check_roots

__all__ = ["SoftJacobian", "soft_rank", "soft_rank_jvp", "soft_rank_with_jacobian", "soft_sort", "soft_sort_jvp",
           "soft_sort_with_jacobian"]

#: lower clamp of the normalised reg of soft_sort: below 1/2 the output is the hard sort (see _sort_core),
#: so any value in (0, 1/2] gives the same result; 2^-900 keeps rho/reg finite for every n < 2^100
_LAM_FLOOR = 2.0**-900


def _as_batch(x, name, func):
    """``x`` as a float64 C-contiguous array of any leading shape, each row (last axis) one problem.
    1-D input keeps the 1-D messages; otherwise the errors name the offending row."""
    if (x.__class__ is np.ndarray and x.dtype == np.float64 and x.ndim >= 1 and x.shape[-1] >= 1
            and x.flags.c_contiguous and x.flags.writeable and all_finite(x)):
        return x  # what the checks below would pass through unchanged
    arr = as_float_array(x, name, func=func, finite=False)
    if arr.ndim <= 1 or np.ndim(x) == 0:
        return as_float_array(x, name, func=func, ndim=1, min_size=1)
    if arr.shape[-1] == 0:
        raise ValueError(f"`{name}` of {func} must have a non-empty last axis (each row along it is one problem); "
                         f"got shape {arr.shape}.")
    if not all_finite(arr):
        ok = np.all(np.isfinite(arr), axis=-1)
        row = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise ValueError(f"`{name}` of {func} must be finite; row {row if len(row) > 1 else row[0]} (index along "
                         f"the leading axes) holds NaN or inf.")
    return arr


class _Roots:
    """The root finders' settings of one call: ``iso`` the keywords of the isotonic module's per-block
    solves (its own defaults, 400 and 4 eps, when not given), ``max_iter`` and ``tol`` those of the
    anchored block re-solve (-1 and -1.0: its own cap, 2999, and rule, 4 eps)."""

    __slots__ = ("iso", "max_iter", "tol")

    def __init__(self, max_iter, tol):
        self.max_iter, self.tol = max_iter, tol
        self.iso = {}
        if max_iter >= 1:
            self.iso["max_iter"] = max_iter
        if tol >= 0.0:
            self.iso["tol"] = tol


_DEFAULT_ROOTS = _Roots(-1, -1.0)


def _validate(x, reg, p, descending, func, max_iter=None, tol=None):
    x = _as_batch(x, "x", func)
    reg = check_interval(reg, "reg", 0.0, math.inf, func=func, closed="neither")
    p = check_interval(p, "p", 1.0, math.inf, func=func, closed="neither")
    if not isinstance(descending, (bool, np.bool_)):
        raise TypeError(f"`descending` of {func} must be a bool; got {plain_repr(descending)}.")
    roots = _DEFAULT_ROOTS if max_iter is None and tol is None else _Roots(*_check_roots(max_iter, tol, func))
    return x, reg, p, bool(descending), roots


def _ginv(z, p):
    """g^{-1}(z) = sign(z)|z|^(q-1), the gradient of |z|^q/q."""
    if p == 2.0:
        return z
    q = p / (p - 1.0)
    return np.sign(z) * np.abs(z) ** (q - 1.0)


def _anchored(t, v, c, blocks, p, func, roots=_DEFAULT_ROOTS):
    """Outputs y_i = g^{-1}(t_i - v_i) of the decreasing isotonic fit v (blocks: starts then n), each
    pooled block re-solved in the anchored form of :mod:`theory.topk._kernels` (its sum is the sum of
    the linear term c over the block; the anchor is the member of smallest |y| for p >= 2, largest
    for p < 2, and every other output goes through the exact difference of targets), so that an
    output whose gap t_i - v_i is below eps |v_i| keeps its digits. A singleton's output is c_i
    exactly (its first-order condition)."""
    with np.errstate(over="ignore", under="ignore"):
        y0 = _ginv(t - v, p)
    blocks = np.ascontiguousarray(blocks, dtype=np.intp)
    csum = np.add.reduceat(c, blocks[:-1])
    out = np.empty(t.shape[0])
    bad = _kernels._anchored_blocks(np.ascontiguousarray(t), blocks, csum, p - 1.0, y0, roots.max_iter, roots.tol,
                                      out)
    if bad:
        warnings.warn(f"{func}: {bad} anchored block root solve(s) (p = {p}) did not converge; the result "
                      f"is the last estimate.", ConvergenceWarning, stacklevel=4)
    single = np.flatnonzero(np.diff(blocks) == 1)
    out[blocks[single]] = c[blocks[single]]
    return out


def _iso_pnorm(t, c, p, func, roots=_DEFAULT_ROOTS):
    """The decreasing p-norm isotonic fit of the sort/rank problem; an overflow of its pooled values
    (|t_i - v_i| = c-sums^(p-1), e.g. n^(p-1) for the ranks) is refused naming this function's
    arguments."""
    try:
        return isotonic_regression(t, p=p, c=c, increasing=False, **roots.iso)
    except NonFiniteError:
        raise NonFiniteError(f"`p` of {func}: p = {p} is too large for n = {t.shape[0]} at reg's scale: the "
                             f"pooled values of the isotonic problem (up to about n^(p-1)) overflow; lower "
                             f"`p` or change `reg`.") from None


def _block_ids(blocks, n):
    """Block index of each position (SciPy's block convention: starts, then n)."""
    return np.repeat(np.arange(blocks.size - 1), np.diff(blocks))


def _block_mean(a, blocks):
    """Per-position mean of ``a`` over its block."""
    sums = np.add.reduceat(a, blocks[:-1])
    return np.repeat(sums / np.diff(blocks), np.diff(blocks))


class _Sorted:
    """Solution in sorted coordinates: order (positions -> input indices), blocks, the isotonic fit,
    the decreasing targets s of the isotonic problem and the normalised output ys."""

    __slots__ = ("order", "blocks", "v", "s", "ys", "p")


def _sort_core(x, reg, p, func, roots=_DEFAULT_ROOTS):
    r"""Descending soft sort. With :math:`c=2^e\ge\max|x|` (exact scaling) the operator satisfies
    :math:`\mathrm{softsort}(c\mathbf x';\lambda)=c\,\mathrm{softsort}(\mathbf x';\lambda c^{p-1})`; on
    :math:`|\mathbf x'|<1`, :math:`|g(x')|<1`, so the hard threshold :math:`1/\max_i(g(s_i)-g(s_{i+1}))`
    exceeds 1/2 and clamping the normalised reg at 2^-900 changes nothing."""
    n = x.shape[0]
    order = np.argsort(-x, kind="stable")
    s = x[order]
    amax = float(np.max(np.abs(s)))
    e = math.frexp(amax)[1] if amax > 0.0 else 0
    sc = np.ldexp(s, -e)
    ex = e * (p - 1.0)  # lam = reg 2^ex, exponent applied exactly by ldexp (no intermediate overflow)
    E = math.floor(ex)
    try:
        lam = math.ldexp(reg * 2.0 ** (ex - E), E)
    except OverflowError:
        lam = math.inf
    if not math.isfinite(lam):
        raise ValueError(f"`reg` of {func}: reg * max|x|^(p-1) overflows (reg = {reg}, p = {p}, max|x| ~ 2^{e}); "
                         f"rescale `x` towards unit magnitude or lower `reg`.")
    lam = max(lam, _LAM_FLOOR)
    rho = np.arange(n, 0, -1, dtype=np.float64)
    t = rho / lam
    sol = _Sorted()
    sol.order, sol.p = order, p
    if p == 2.0:
        v, blocks = isotonic_regression(t - sc, increasing=False)
        # y_i = mean_B(s) + (rho_i - mean_B rho)/lam, rho_i - mean_B rho = (a + b - 1)/2 - i (exact)
        starts = np.repeat(blocks[:-1], np.diff(blocks))
        ends = np.repeat(blocks[1:], np.diff(blocks))
        centred = 0.5 * (starts + ends - 1) - np.arange(n)
        ys = _block_mean(sc, blocks) + centred / lam
    else:
        v, blocks = _iso_pnorm(t, sc, p, func, roots)
        ys = _anchored(t, v, sc, blocks, p, func, roots)
    sol.blocks, sol.v, sol.s = blocks, v, t
    sol.ys = ys
    return sol, np.ldexp(ys, e)


def _rank_core(x, reg, p, func, roots=_DEFAULT_ROOTS):
    """Descending soft rank: the isotonic problem on s = sorted(-x/reg) with the linear term rho."""
    n = x.shape[0]
    with np.errstate(over="ignore", under="ignore"):
        z = -x / reg
    if not np.all(np.isfinite(z)):
        raise ValueError(f"`reg` of {func}: x / reg overflows (reg = {reg}, max|x| = {plain_repr(np.max(np.abs(x)))}); "
                         f"increase `reg` or rescale `x`.")
    order = np.argsort(x, kind="stable")  # decreasing z
    s = z[order]
    rho = np.arange(n, 0, -1, dtype=np.float64)
    if p == 2.0:
        v, blocks = isotonic_regression(s - rho, increasing=False)
        # s - mean_B s through the differences from the block's first member (exact for close values):
        # for |s| >> n the block mean of s itself has an absolute rounding far above the ranks
        first = np.repeat(s[blocks[:-1]], np.diff(blocks))
        d = s - first
        ys = _block_mean(rho, blocks) + (d - _block_mean(d, blocks))
        single = np.flatnonzero(np.diff(blocks) == 1)
        ys[blocks[single]] = rho[blocks[single]]
    else:
        v, blocks = _iso_pnorm(s, rho, p, func, roots)
        ys = _anchored(s, v, rho, blocks, p, func, roots)
    sol = _Sorted()
    sol.order, sol.blocks, sol.v, sol.s, sol.ys, sol.p = order, blocks, v, s, ys, p
    out = np.empty(n)
    out[order] = ys
    return sol, out


# ----------------------------------------------------------------------------------- batches of rows
# Every operator works along the last axis: x of shape (..., n) holds independent problems, one per
# row. p = 2 runs all rows in one compiled call (theory.topk._batch, bit for bit the one-row code
# above); other p loop over the rows with the one-row code.


def _parallel(m, n):
    return m >= _batch.PARALLEL_MIN_ROWS and m * n >= _batch.PARALLEL_MIN_WORK


#: rows at least this long get their scratch from NumPy's allocator (which asks the kernel for huge pages
#: on large arrays: far fewer page faults on the first touch than the compiled code's own allocations)
_NUMPY_SCRATCH = 1 << 17
_NO_ROWS = np.empty((0, 0), dtype=np.intp)
# The soft rank sorts every row by radix inside the kernel, at every length: NumPy's stable argsort outside
# it (the route kept in theory.topk._batch._rank_rows as the tests' reference) was measured slower at every
# n from 10 to 2000, e.g. 44 us against 27 us for one call at n = 1000 (Intel Xeon, NumPy 2.4).


#: soft sort without Jacobian: rows at least this long are sorted by radix (below, NumPy's vectorised
#: sort of the values is faster)
_SORT_RADIX_MIN = 8192


def _rows_kernel(X, kind, flag, reg, Y, O, R, NB, status, keep):
    """Run :func:`theory.topk._batch._rows_rx` on every row of X: on every core for large batches,
    else serially (``keep``: O and R receive the permutations and the blocks, else they are None)."""
    m, n = X.shape
    if not keep:
        O = R = _NO_ROWS
    if _parallel(m, n):
        nchunks = min(m, 4 * numba.get_num_threads())
        _batch._rows_rx_par(X, kind, flag, float(reg), Y, O, R, NB, status, keep, nchunks)
    elif n >= _NUMPY_SCRATCH:
        if not keep:
            O = np.empty((1, n), dtype=np.intp)
            R = np.empty((1, n + 1), dtype=np.intp)
        k = np.empty((2, n), dtype=np.uint64)
        _batch._rows_rx_ws(X, kind, flag, float(reg), Y, O, R, NB, status, keep, k[0], k[1],
                           np.empty(n, dtype=np.intp), 0, m)
    else:
        _batch._rows_rx(X, kind, flag, float(reg), Y, O, R, NB, status, keep, 0, m)


def _row_name(shape, r):
    idx = np.unravel_index(r, shape[:-1]) if len(shape) > 1 else ()
    return "" if not idx else f" (row {tuple(int(i) for i in idx) if len(idx) > 1 else int(idx[0])})"


class _Rows:
    """Forward pass of a batch: values Y (m, n) in descending coordinates (sort) or input coordinates
    (rank); for p = 2 the sorting permutations O (descending order for the sort, increasing x for the
    rank) and the blocks R[:, :NB + 1]; for other p one _Sorted per row."""

    __slots__ = ("Y", "O", "R", "NB", "sols")


def _sort_rows(X, reg, p, func, shape, need_jac, descending=True, roots=_DEFAULT_ROOTS):
    """Y in descending coordinates, or increasing ones when not ``descending`` (p = 2 only; other p
    always descending, reversed by the caller)."""
    m, n = X.shape
    out = _Rows()
    out.sols = None
    if p != 2.0:
        sols = [_sort_core(X[r], reg, p, func, roots) for r in range(m)]
        out.Y = np.array([y for _, y in sols]).reshape(m, n)
        out.sols = [s for s, _ in sols]
        return out
    Y = np.empty((m, n))
    NB = np.empty(m, dtype=np.intp)
    status = np.empty(m, dtype=np.intp)
    if need_jac:  # the reference's stable argsort(-x) (decreasing x, ties by index), by radix, in the kernel
        O = np.empty((m, n), dtype=np.intp)
        R = np.empty((m, n + 1), dtype=np.intp)
        _rows_kernel(X, 1, descending, reg, Y, O, R, NB, status, True)
    elif n >= _SORT_RADIX_MIN:  # the values only, by radix (its permutation discarded)
        O = R = None
        _rows_kernel(X, 1, descending, reg, Y, None, None, NB, status, False)
    else:  # the values only, by NumPy's sort: the same sequence for every order of ties
        O = R = None
        _rows_kernel(np.sort(X, axis=1), 2, descending, reg, Y, None, None, NB, status, False)
    for r in np.flatnonzero(status):  # extreme exponents, an overflow of reg * max|x| or of a pooled sum
        try:
            sol, y = _sort_core(X[r], reg, p, func)
        except ValueError as exc:
            if len(shape) > 1:
                raise type(exc)(f"{exc}{_row_name(shape, r)}") from None
            raise
        Y[r] = y if descending else y[::-1]
        if need_jac:
            O[r] = sol.order
            NB[r] = sol.blocks.shape[0] - 1
            R[r, :NB[r] + 1] = sol.blocks
    out.Y, out.O, out.R, out.NB = Y, O, R, NB
    return out


def _rank_rows(x, reg, p, func, shape, flip=False, roots=_DEFAULT_ROOTS):
    """The descending soft rank of the rows of X = -x if ``flip`` (ascending ranks) else x."""
    m, n = x.shape
    out = _Rows()
    out.sols = None
    X = -x if flip and p != 2.0 else x
    if p != 2.0:
        sols = [_rank_core(X[r], reg, p, func, roots) for r in range(m)]
        out.Y = np.array([y for _, y in sols]).reshape(m, n)
        out.sols = [s for s, _ in sols]
        return out
    Y = np.empty((m, n))
    R = np.empty((m, n + 1), dtype=np.intp)
    NB = np.empty(m, dtype=np.intp)
    status = np.empty(m, dtype=np.intp)
    O = np.empty((m, n), dtype=np.intp)  # the stable argsort of X (= -x if flip), by radix, in the kernel
    _rows_kernel(x, 0, flip, reg, Y, O, R, NB, status, True)
    for r in np.flatnonzero(status):  # x / reg not finite (refused) or a pooled sum overflowed
        sol, Y[r] = _rank_core(-x[r] if flip else x[r], reg, p, func)
        O[r] = sol.order
        NB[r] = sol.blocks.shape[0] - 1
        R[r, :NB[r] + 1] = sol.blocks
    out.Y, out.O, out.R, out.NB = Y, O, R, NB
    return out


def _flat(x):
    return x.reshape(-1, x.shape[-1])


def soft_sort(x, reg=1.0, p=2.0, descending=True, *, max_iter=None, tol=None, axis=-1):
    r"""Soft sort: the p-norm regularised sorting LP over the permutahedron of x (``topk`` §7.3-7.5).

    .. math::

        \mathrm{softsort}_{\lambda,p}(\mathbf x)=\arg\max_{\mathbf y\in P(\mathbf x)}
            \langle\boldsymbol\rho,\mathbf y\rangle-\frac\lambda p\|\mathbf y\|_p^p,
        \qquad\boldsymbol\rho=(n,\dots,1),

    computed by the reduction of Proposition 7.5 (module docstring): with
    :math:`\mathbf s=\mathrm{sort}(\mathbf x)` (decreasing) and :math:`\mathbf t=\boldsymbol\rho/\lambda`,
    :math:`\mathbf v=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac1q|t_i-v_i|^q+s_iv_i` and
    :math:`y_i=\mathrm{sign}(t_i-v_i)|t_i-v_i|^{q-1}`. For p = 2 it is the Euclidean projection
    :math:`\Pi_{P(\mathbf x)}(\boldsymbol\rho/\lambda)`, Blondel et al. (2020)'s quadratic soft sort, and
    on each pooled block B, :math:`y_i=\mathrm{mean}_B\mathbf s+(\rho_i-\mathrm{mean}_B\boldsymbol\rho)/\lambda`.

    Parameters
    ----------
    x : array_like, shape (n,) or (..., n)
        Finite reals, n >= 1. Never modified. Several axes: a batch, every row along the last axis is
        one problem (NumPy's convention); each row's output equals the 1-D call on it bit for bit.
    reg : float
        :math:`\lambda>0`.
    p : float
        In (1, inf).
    descending : bool
        True: largest first (the thesis convention). False: increasing order, the reverse of the
        descending output (:math:`P(\mathbf x)` and R are permutation invariant).
    max_iter : int >= 1, optional
        Keyword only. Cap on the iterations of each root solve (p != 2; p = 2 is closed form). Default
        None: each solve's own cap, which reproduces the results of earlier versions bit for bit: 400 for
        the per-block solves of the isotonic problem (the default of
        :func:`theory.isotonic.isotonic_regression`; p = 4/3 pools in closed form there) and 2999 for the
        anchored re-solve of each pooled block. Reaching a cap issues
        :class:`theory.isotonic.ConvergenceWarning`.
    tol : float >= 0, optional
        Keyword only. A root solve stops once its bracket is at most ``tol`` times its scale
        (``max(|a|, |b|)`` of the bracket [a, b]) wide, or spans adjacent floats. Default None: each
        solve's own rule, 4 eps.
    axis : int, optional
        Keyword only. The axis along which each problem lies (default -1, the last axis); every other
        axis indexes the problems. The result along ``axis=a`` equals
        ``np.moveaxis(f(np.moveaxis(x, a, -1), ...), -1, a)`` bit for bit. An integer in
        [-x.ndim, x.ndim - 1].

    Returns
    -------
    y : ndarray, shape of x, float64
        In :math:`P(\mathbf x)`: sorted (decreasing, or increasing), summing to :math:`\sum x` (to rounding).

    Raises
    ------
    TypeError
        ``x`` not a real array; ``reg``/``p``/``tol`` not real numbers; ``max_iter`` not an integer;
        ``descending`` not a bool.
    ValueError
        ``x`` 0-D, with an empty last axis, or not finite (a batch: the message names the row);
        ``reg`` <= 0, NaN or inf; ``p`` <= 1, NaN or inf; ``max_iter`` < 1; ``tol`` < 0, NaN or inf;
        :math:`\lambda\max|x|^{p-1}` overflows (p > 1 with extreme magnitudes; rescale x).
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Warns
    -----
    ConvergenceWarning
        (p not in {2, 4/3}) a per-block root solve of the isotonic module reached its iteration cap.

    Notes
    -----
    Exact regimes, with :math:`g(y)=\mathrm{sign}(y)|y|^{p-1}` and :math:`x_{[i]}` the i-th largest:

    * hard sort, every p: the output is :math:`\mathrm{sort}(\mathbf x)` bit for bit iff
      :math:`\lambda\le1/\max_i\big(g(x_{[i]})-g(x_{[i+1]})\big)` (all blocks singletons:
      :math:`v_i=\rho_i/\lambda-g(x_{[i]})` must be non-increasing); p = 2:
      :math:`\lambda\le1/\max_i(x_{[i]}-x_{[i+1]})`.
      If all entries are equal, :math:`P(\mathbf x)` is a point and the output is x for every λ.
    * affine, p = 2: :math:`y_i=\bar x+(\rho_i-\frac{n+1}2)/\lambda` iff
      :math:`\lambda\ge\max_{1\le k<n}\frac{k(n-k)}{2\sum_{i\le k}(x_{[i]}-\bar x)}` (this point lies in
      :math:`P(\mathbf x)` iff each top-k partial sum is dominated; it is then the projection).

    Scale: :math:`\mathrm{softsort}(c\mathbf x;\lambda)=c\,\mathrm{softsort}(\mathbf x;\lambda c^{p-1})`
    (c > 0); p = 2 is also shift equivariant. Cost O(n log n) for p in {2, 4/3}; for other p the isotonic
    module solves one root per segment of its threshold decomposition (a few milliseconds at n = 1e4,
    quadratic only for very unbalanced splits). For p > 2 an
    output near 0 in a pooled block is computed as :math:`|t_i-\gamma|^{q-1}` with q - 1 < 1, so a rounding
    error e of :math:`t_i-\gamma` shows as about :math:`e^{q-1}` (intrinsic conditioning).

    References
    ----------
    ``topk``: §7.3 (LP formulations with the reversing permutation), §7.4 (recovering the previous
    framework), Propositions 7.2 and 7.5. Blondel et al. (2020), "Fast differentiable sorting and
    ranking" (the p = 2 operator).

    Examples
    --------
    >>> soft_sort([1.0, 3.0, 2.0], reg=0.5).tolist()          # reg <= 1/max gap = 1: the hard sort
    [3.0, 2.0, 1.0]
    >>> soft_sort([0.0, 1.0], reg=4.0).tolist()               # affine: 0.5 +- 0.5/4
    [0.625, 0.375]
    >>> soft_sort([[1.0, 3.0, 2.0], [0.0, 1.0, 0.5]], reg=0.5).tolist()   # a batch: one problem per row
    [[3.0, 2.0, 1.0], [1.0, 0.5, 0.0]]
    >>> soft_sort([[1.0, 0.0], [3.0, 0.5], [2.0, 1.0]], reg=0.5, axis=0).tolist()   # one problem per column
    [[3.0, 1.0], [2.0, 0.5], [1.0, 0.0]]
    """
    func = "theory.topk.soft_sort"
    a = _axis.resolve(x, axis, func)
    if a is not None:
        return _axis.from_last(soft_sort(_axis.to_last(x, a), reg, p, descending, max_iter=max_iter, tol=tol), a)
    x, reg, p, descending, roots = _validate(x, reg, p, descending, func, max_iter, tol)
    rows = _sort_rows(_flat(x), reg, p, func, x.shape, False, descending, roots)
    # p = 2 writes the requested order directly; other p are descending
    return _soft_sort_value(rows, x.shape, not descending and p != 2.0, func)


def _soft_sort_value(rows, shape, flip, func):
    y = rows.Y[:, ::-1].copy() if flip else rows.Y
    return check_finite_output(y.reshape(shape), "the soft sort", func=func, hint="Rescale `x` towards unit magnitude.")


def soft_rank(x, reg=1.0, p=2.0, descending=True, *, max_iter=None, tol=None, axis=-1):
    r"""Soft rank: the p-norm regularised ranking LP over the permutahedron of ρ (``topk`` §7.3-7.5).

    .. math::

        \mathrm{softrank}_{\lambda,p}(\mathbf x)=\arg\max_{\mathbf y\in P(\boldsymbol\rho)}
            \langle-\mathbf x,\mathbf y\rangle-\frac\lambda p\|\mathbf y\|_p^p,
        \qquad\boldsymbol\rho=(n,\dots,1),

    rank 1 for the largest entry (descending). Reduction (Proposition 7.5): σ sorts x increasingly,
    :math:`\mathbf s=-\mathbf x_\sigma/\lambda` (decreasing),
    :math:`\mathbf v=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac1q|s_i-v_i|^q+\rho_iv_i`,
    :math:`y_{\sigma_i}=\mathrm{sign}(s_i-v_i)|s_i-v_i|^{q-1}`. For p = 2 it is
    :math:`\Pi_{P(\boldsymbol\rho)}(-\mathbf x/\lambda)`, Blondel et al. (2020)'s quadratic soft rank;
    on a pooled block, :math:`y_{\sigma_i}=\mathrm{mean}_B\boldsymbol\rho+s_i-\mathrm{mean}_B\mathbf s`.

    Parameters
    ----------
    x : array_like, shape (n,) or (..., n)
        Finite reals, n >= 1. Never modified. Several axes: a batch, every row along the last axis is
        one problem (NumPy's convention); each row's output equals the 1-D call on it bit for bit.
    reg : float
        :math:`\lambda>0`.
    p : float
        In (1, inf).
    descending : bool
        True: rank 1 for the largest (thesis convention). False: rank 1 for the smallest, i.e.
        ``soft_rank(-x)``.
    max_iter : int >= 1, optional
        Keyword only. Cap on the iterations of each root solve (p != 2; p = 2 is closed form). Default
        None: each solve's own cap, which reproduces the results of earlier versions bit for bit: 400 for
        the per-block solves of the isotonic problem (the default of
        :func:`theory.isotonic.isotonic_regression`; p = 4/3 pools in closed form there) and 2999 for the
        anchored re-solve of each pooled block. Reaching a cap issues
        :class:`theory.isotonic.ConvergenceWarning`.
    tol : float >= 0, optional
        Keyword only. A root solve stops once its bracket is at most ``tol`` times its scale
        (``max(|a|, |b|)`` of the bracket [a, b]) wide, or spans adjacent floats. Default None: each
        solve's own rule, 4 eps.
    axis : int, optional
        Keyword only. The axis along which each problem lies (default -1, the last axis); every other
        axis indexes the problems. The result along ``axis=a`` equals
        ``np.moveaxis(f(np.moveaxis(x, a, -1), ...), -1, a)`` bit for bit. An integer in
        [-x.ndim, x.ndim - 1].

    Returns
    -------
    y : ndarray, shape of x, float64
        In :math:`P(\boldsymbol\rho)`: entries in [1, n], summing to n(n+1)/2 (to rounding).

    Raises
    ------
    TypeError, ValueError
        As :func:`soft_sort`; a ValueError when x / reg overflows.
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Warns
    -----
    ConvergenceWarning
        (p not in {2, 4/3}) a per-block root solve reached its iteration cap.

    Notes
    -----
    Exact regimes, with :math:`x_{(1)}\le\dots\le x_{(n)}` the increasing order statistics:

    * hard rank, every p: the output is :math:`\mathrm{rank}(\mathbf x)` bit for bit iff
      :math:`\lambda\le\min_{1\le i<n}\frac{x_{(i+1)}-x_{(i)}}{(n-i+1)^{p-1}-(n-i)^{p-1}}`
      (singletons need :math:`v_i=s_i-\rho_i^{p-1}` non-increasing); p = 2: λ at most the smallest gap.
      Ties in x give threshold 0: tied entries always share an averaged rank.
    * affine, p = 2: :math:`\mathbf y=\frac{n+1}2\mathbf 1+(\bar x\mathbf 1-\mathbf x)/\lambda` iff
      :math:`\lambda\ge\max_{1\le k<n}\frac{2\sum_{i\le k}(\bar x-x_{(i)})}{k(n-k)}`.

    Permutation equivariant; for p = 2 shift invariant and :math:`\mathrm{softrank}(c\mathbf x;c\lambda)=
    \mathrm{softrank}(\mathbf x;\lambda)`. Cost as :func:`soft_sort`.

    References
    ----------
    ``topk``: §7.3, §7.4, Propositions 7.2 and 7.5. Blondel et al. (2020) (the p = 2 operator).

    Examples
    --------
    >>> soft_rank([1.0, 3.0, 2.0], reg=0.5).tolist()          # reg <= min gap = 1: the hard rank
    [3.0, 1.0, 2.0]
    >>> soft_rank([0.0, 1.0], reg=4.0).tolist()               # affine: 1.5 +- 0.5/4
    [1.625, 1.375]
    """
    func = "theory.topk.soft_rank"
    a = _axis.resolve(x, axis, func)
    if a is not None:
        return _axis.from_last(soft_rank(_axis.to_last(x, a), reg, p, descending, max_iter=max_iter, tol=tol), a)
    x, reg, p, descending, roots = _validate(x, reg, p, descending, func, max_iter, tol)
    rows = _rank_rows(_flat(x), reg, p, func, x.shape, not descending, roots)
    return check_finite_output(rows.Y.reshape(x.shape), "the soft rank", func=func,
                               hint="Increase `reg` or rescale `x`.")


def _alpha(d, p):
    """(q-1)|d|^(q-2), the derivative of g^{-1} at d (inf at d = 0 when p > 2)."""
    if p == 2.0:
        return np.ones_like(d)
    q = p / (p - 1.0)
    with np.errstate(divide="ignore", over="ignore"):  # inf is handled by the callers
        return (q - 1.0) * np.abs(d) ** (q - 2.0)


def soft_sort_jvp(x, tangent, reg=1.0, p=2.0, descending=True, *, max_iter=None, tol=None, axis=-1):
    r"""Jacobian-vector product of :func:`soft_sort` from its pooled blocks (``topk`` Proposition 7.8,
    φ = identity, applied to the sort's isotonic problem).

    In sorted coordinates (:math:`\dot{\mathbf s}=\dot{\mathbf x}_\sigma`), a pooled block B has
    :math:`\sum_{B}y_i=\sum_B s_i` and :math:`y_i=g^{-1}(t_i-\gamma)` with t fixed, so
    :math:`\dot y_i=\alpha_i\sum_{j\in B}\dot s_j/\sum_{j\in B}\alpha_j`,
    :math:`\alpha_j=|t_j-\gamma|^{q-2}` (p = 2: the block average of :math:`\dot{\mathbf s}`); a singleton
    has :math:`\dot y_i=\dot s_i`. Where some :math:`\alpha_j` is infinite (p > 2, an output at 0) the
    block's derivative goes to those entries, equally (the limit). Cost O(n) after the forward pass.

    Parameters
    ----------
    x, reg, p, descending, max_iter, tol
        As :func:`soft_sort` (``max_iter`` and ``tol``: keyword only).
    tangent : array_like, shape of x
        Finite direction :math:`\dot{\mathbf x}`.
    axis : int, optional
        Keyword only. The axis of the problems, as for the value operator; ``tangent`` has the shape of
        ``x`` and is taken along the same axis, and so is the result.

    Returns
    -------
    ndarray, shape of x
        :math:`J\dot{\mathbf x}`, J the Jacobian of the piece selected by the sort and the blocks (at a
        kink, an element of the Clarke generalized Jacobian; ties of v are pooled).

    Raises
    ------
    TypeError, ValueError
        As :func:`soft_sort`; ``tangent`` of another shape or not finite.
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Examples
    --------
    >>> soft_sort_jvp([0.0, 1.0], [1.0, 0.0], reg=4.0).tolist()   # one block: the average
    [0.5, 0.5]
    """
    func = "theory.topk.soft_sort_jvp"
    a = _axis.resolve(x, axis, func)
    if a is not None:
        t = _axis.vector_to_last(tangent, "tangent", x, a, func)
        return _axis.from_last(soft_sort_jvp(_axis.to_last(x, a), t, reg, p, descending, max_iter=max_iter,
                                             tol=tol), a)
    x, reg, p, descending, roots = _validate(x, reg, p, descending, func, max_iter, tol)
    dx = as_float_array(tangent, "tangent", func=func, shape=x.shape)
    rows = _sort_rows(_flat(x), reg, p, func, x.shape, True, roots=roots)
    return SoftJacobian("sort", x.shape, reg, p, descending, rows, func)._apply(_flat(dx), False, func)


def soft_rank_jvp(x, tangent, reg=1.0, p=2.0, descending=True, *, max_iter=None, tol=None, axis=-1):
    r"""Jacobian-vector product of :func:`soft_rank` from its pooled blocks (``topk`` Proposition 7.8,
    φ = identity).

    In sorted coordinates (:math:`\dot{\mathbf s}=-\dot{\mathbf x}_\sigma/\lambda`), a pooled block B with
    value γ has :math:`\partial\gamma/\partial s_j=\alpha_j/\sum_B\alpha`,
    :math:`\alpha_j=(q-1)|s_j-\gamma|^{q-2}`, so
    :math:`\dot y_i=\alpha_i\big(\dot s_i-\sum_{j\in B}\alpha_j\dot s_j/\sum_{j\in B}\alpha_j\big)`
    (p = 2: :math:`\dot s_i` minus the block average); singletons have :math:`\dot y_i=0` (the hard rank is
    locally constant). The Jacobian is symmetric negative semidefinite. Cost O(n) after the forward pass.

    Parameters
    ----------
    x, reg, p, descending, max_iter, tol
        As :func:`soft_rank` (``max_iter`` and ``tol``: keyword only).
    tangent : array_like, shape of x
        Finite direction.
    axis : int, optional
        Keyword only. The axis of the problems, as for the value operator; ``tangent`` has the shape of
        ``x`` and is taken along the same axis, and so is the result.

    Returns
    -------
    ndarray, shape of x

    Raises
    ------
    TypeError, ValueError
        As :func:`soft_rank`; ``tangent`` of another shape or not finite.
    theory.NonFiniteError
        The derivative is infinite (p > 2 with a pooled output at 0 cannot occur for ranks >= 1 except
        through rounding; reported rather than returned).
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Examples
    --------
    >>> soft_rank_jvp([0.0, 1.0], [1.0, 0.0], reg=4.0).tolist()
    [-0.125, 0.125]
    """
    func = "theory.topk.soft_rank_jvp"
    a = _axis.resolve(x, axis, func)
    if a is not None:
        t = _axis.vector_to_last(tangent, "tangent", x, a, func)
        return _axis.from_last(soft_rank_jvp(_axis.to_last(x, a), t, reg, p, descending, max_iter=max_iter,
                                             tol=tol), a)
    x, reg, p, descending, roots = _validate(x, reg, p, descending, func, max_iter, tol)
    dx = as_float_array(tangent, "tangent", func=func, shape=x.shape)
    rows = _rank_rows(_flat(x), reg, p, func, x.shape, not descending, roots)
    return SoftJacobian("rank", x.shape, reg, p, descending, rows, func)._apply(_flat(dx), False, func)


# ------------------------------------------------------------------------------ Jacobian products

def _sort_jvp_row(sol, dx, p):
    """One row: J dx of the descending soft sort in its output (descending) coordinates."""
    ds = dx[sol.order]
    blocks = sol.blocks
    alpha = _alpha(sol.s - sol.v, p)
    ids = _block_ids(blocks, ds.shape[0])
    inf = np.isinf(alpha)
    if np.any(inf):
        has_inf = np.add.reduceat(inf.astype(float), blocks[:-1]) > 0
        alpha = np.where(has_inf[ids], inf.astype(float), alpha)
    num = np.add.reduceat(ds, blocks[:-1])  # sum_B ds
    den = np.add.reduceat(alpha, blocks[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):  # singletons (alpha 0 or inf) are replaced below
        out = alpha * (num / den)[ids]
    single = np.diff(blocks) == 1
    out[single[ids]] = ds[single[ids]]
    return out


def _sort_vjp_row(sol, u, p):
    """One row: J^T u of the descending soft sort (u in descending coordinates), in input coordinates.
    In sorted coordinates a block's Jacobian is alpha 1^T / sum_B alpha, so its transpose sends u to
    sum_B(alpha u) / sum_B alpha on every member; singletons pass u through."""
    blocks = sol.blocks
    n = u.shape[0]
    alpha = _alpha(sol.s - sol.v, p)
    ids = _block_ids(blocks, n)
    inf = np.isinf(alpha)
    if np.any(inf):
        has_inf = np.add.reduceat(inf.astype(float), blocks[:-1]) > 0
        alpha = np.where(has_inf[ids], inf.astype(float), alpha)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num = np.add.reduceat(alpha * u, blocks[:-1])
        den = np.add.reduceat(alpha, blocks[:-1])
        gs = (num / den)[ids]
    single = np.diff(blocks) == 1
    gs[single[ids]] = u[single[ids]]
    g = np.empty(n)
    g[sol.order] = gs
    return g


def _rank_jvp_row(sol, dx, reg, p):
    """One row: J dx of the descending soft rank (symmetric: also J^T dx), in input coordinates."""
    with np.errstate(over="ignore"):  # an overflow is refused by the caller (singletons' entries are replaced)
        ds = -dx[sol.order] / reg
    blocks = sol.blocks
    ids = _block_ids(blocks, dx.shape[0])
    alpha = _alpha(sol.s - sol.v, p)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # singletons are replaced below
        num = np.add.reduceat(alpha * ds, blocks[:-1])
        den = np.add.reduceat(alpha, blocks[:-1])
        outs = alpha * (ds - (num / den)[ids])
    single = np.diff(blocks) == 1
    outs[single[ids]] = 0.0
    out = np.empty_like(outs)
    out[sol.order] = outs
    return out


_HINT_PRODUCT = "The derivative is infinite or overflows at this `x`, `reg` and `p`."


def _avg_products(V, rows, mode, flip, reg):
    """The p = 2 Jacobian products of every row (:func:`theory.topk._batch._avg_row_ws`)."""
    m, n = V.shape
    V = np.ascontiguousarray(V, dtype=np.float64)
    G = np.empty((m, n))
    if _parallel(m, n):
        _batch._avg_rows_ws_par(V, rows.O, rows.R, rows.NB, G, mode, flip, float(reg),
                                min(m, 4 * numba.get_num_threads()))
    else:
        _batch._avg_rows_ws(V, rows.O, rows.R, rows.NB, G, mode, flip, float(reg), np.empty(n), 0, m)
    return G


class SoftJacobian:
    r"""The Jacobian of :func:`soft_sort` or :func:`soft_rank` at one point (or one per row of a
    batch), kept from the forward pass: the sorting permutation and the pooled blocks of the isotonic
    problem (``topk`` Proposition 7.8, φ = identity). Products cost O(n) per row and never redo the
    sort or the isotonic fit.

    Returned by :func:`soft_sort_with_jacobian` and :func:`soft_rank_with_jacobian`. In sorted
    coordinates a pooled block B of the sort has :math:`J_B=\boldsymbol\alpha\mathbf 1^\top/\sum_B\alpha`
    (p = 2: the block average), a singleton the identity; the rank has the symmetric
    :math:`J_B=-(\mathrm{diag}\,\boldsymbol\alpha-\boldsymbol\alpha\boldsymbol\alpha^\top/\sum_B\alpha)/\lambda`,
    a singleton 0; :math:`\alpha_j=(q-1)|t_j-\gamma_B|^{q-2}`.

    Attributes
    ----------
    shape : tuple
        The shape of x (and of every tangent and cotangent).

    Its methods: :meth:`jvp` (:math:`J\dot{\mathbf x}`, row by row, same shape as x), :meth:`vjp`
    (:math:`J^\top\mathbf u`, row by row: the backward pass of an autograd function) and
    :meth:`todense` (the Jacobian matrices, shape ``x.shape + (n,)``; row i of matrix k is output i
    of row k). Built with ``axis`` along another axis than the last, ``jvp`` and ``vjp`` work along
    that axis on arrays of x's shape, and ``todense`` is indexed by the other axes of x, then (n, n).
    """

    def __init__(self, kind, shape, reg, p, descending, rows, func):
        self._kind, self.shape, self._reg, self._p = kind, tuple(shape), reg, p
        self._desc, self._rows, self._func = descending, rows, func
        self._mshape, self._axis = self.shape, None  # the shape the rows were computed on; the moved axis

    def _along(self, axis):
        """This Jacobian for x of the caller's shape, the rows computed along ``axis`` moved last."""
        self._axis = axis
        m = self._mshape
        self.shape = m[:axis] + m[-1:] + m[axis:-1]
        return self

    def __repr__(self):
        along = "" if self._axis is None else f", axis={self._axis}"
        return (f"SoftJacobian(kind={self._kind!r}, shape={self.shape}, reg={self._reg}, p={self._p}, "
                f"descending={self._desc}{along})")

    def _vector(self, v, name, func):
        v = as_float_array(v, name, func=func, shape=self.shape)
        if self._axis is not None:
            v = np.moveaxis(v, self._axis, -1)
        return v.reshape(-1, self._mshape[-1])

    def _apply(self, V, transpose, func, restore=True):
        rows, reg, p = self._rows, self._reg, self._p
        m, n = V.shape
        if self._kind == "sort":
            if rows.sols is None:  # a transposed product of the increasing sort reads V reversed
                G = _avg_products(V, rows, 1 if transpose else 0, transpose and not self._desc, 1.0)
            else:
                if transpose and not self._desc:
                    V = V[:, ::-1]
                f = _sort_vjp_row if transpose else _sort_jvp_row
                G = np.array([f(sol, np.ascontiguousarray(V[r]), p) for r, sol in enumerate(rows.sols)]).reshape(m, n)
            if not transpose and not self._desc:
                G = G[:, ::-1].copy()
        else:
            if rows.sols is None:  # the kernel forms -(+-V) / reg itself (an overflow is refused below)
                G = _avg_products(V, rows, 2, not self._desc, reg)
            else:
                if not self._desc:
                    V = -V
                G = np.array([_rank_jvp_row(sol, V[r], reg, p) for r, sol in enumerate(rows.sols)]).reshape(m, n)
        G = check_finite_output(G.reshape(self._mshape), "the product", func=func, hint=_HINT_PRODUCT)
        return _axis.from_last(G, self._axis) if restore and self._axis is not None else G

    def jvp(self, tangent):
        """Jacobian-vector product :math:`J\\dot{\\mathbf x}` (each row with its own Jacobian)."""
        func = f"theory.topk.SoftJacobian.jvp"
        return self._apply(self._vector(tangent, "tangent", func), False, func)

    def vjp(self, cotangent):
        """Vector-Jacobian product :math:`J^\\top\\mathbf u` (each row with its own Jacobian)."""
        func = f"theory.topk.SoftJacobian.vjp"
        return self._apply(self._vector(cotangent, "cotangent", func), True, func)

    def todense(self):
        """The Jacobian matrices, one per problem: the axes of x other than the problem axis, in order,
        then (n, n) (``shape + (n,)`` for the last axis); entry [..., i, j] = d y_i / d x_j (O(n^2) per row)."""
        n = self._mshape[-1]
        m = int(np.prod(self._mshape[:-1], dtype=np.int64))
        out = np.empty((m, n, n))
        eye = np.eye(n)
        func = "theory.topk.SoftJacobian.todense"
        for j in range(n):
            out[:, :, j] = self._apply(np.ascontiguousarray(np.broadcast_to(eye[j], (m, n))), False,
                                       func, restore=False).reshape(m, n)
        return out.reshape(self._mshape + (n,))


def soft_sort_with_jacobian(x, reg=1.0, p=2.0, descending=True, *, max_iter=None, tol=None, axis=-1):
    r"""The soft sort and its Jacobian in one forward pass: ``(y, jac)`` with ``y = soft_sort(x, ...)``
    (bit for bit) and ``jac`` a :class:`SoftJacobian` whose ``jvp``/``vjp`` reuse the permutation and
    pooled blocks of that pass (``topk`` Proposition 7.8; the pattern of a custom autograd function:
    value in the forward pass, ``jac.vjp(grad_output)`` in the backward pass).

    Parameters
    ----------
    x : array_like, shape (..., n)
        As :func:`soft_sort`: every row along the last axis is one problem.
    reg, p, descending, max_iter, tol
        As :func:`soft_sort` (``max_iter`` and ``tol``: keyword only).
    axis : int, optional
        Keyword only. The axis of the problems, as for :func:`soft_sort`; ``jac.jvp`` and ``jac.vjp``
        take and return arrays of the shape of x along the same axis, ``jac.todense()`` is indexed
        by the other axes of x followed by (n, n).

    Returns
    -------
    y : ndarray, shape (..., n)
    jac : SoftJacobian

    Raises
    ------
    TypeError, ValueError
        As :func:`soft_sort`.
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Examples
    --------
    >>> y, jac = soft_sort_with_jacobian([0.0, 1.0], reg=4.0)
    >>> y.tolist(), jac.vjp([1.0, 0.0]).tolist()      # one pooled block: the average
    ([0.625, 0.375], [0.5, 0.5])
    """
    func = "theory.topk.soft_sort_with_jacobian"
    a = _axis.resolve(x, axis, func)
    if a is not None:
        y, jac = soft_sort_with_jacobian(_axis.to_last(x, a), reg, p, descending, max_iter=max_iter, tol=tol)
        return _axis.from_last(y, a), jac._along(a)
    x, reg, p, descending, roots = _validate(x, reg, p, descending, func, max_iter, tol)
    rows = _sort_rows(_flat(x), reg, p, func, x.shape, True, roots=roots)
    return (_soft_sort_value(rows, x.shape, not descending, func),
            SoftJacobian("sort", x.shape, reg, p, descending, rows, func))


def soft_rank_with_jacobian(x, reg=1.0, p=2.0, descending=True, *, max_iter=None, tol=None, axis=-1):
    r"""The soft rank and its Jacobian in one forward pass: ``(y, jac)`` with ``y = soft_rank(x, ...)``
    (bit for bit) and ``jac`` a :class:`SoftJacobian` (symmetric: ``jac.vjp`` equals ``jac.jvp``) reusing
    the permutation and the pooled blocks (``topk`` Proposition 7.8).

    Parameters
    ----------
    x : array_like, shape (..., n)
        As :func:`soft_rank`: every row along the last axis is one problem.
    reg, p, descending, max_iter, tol
        As :func:`soft_rank` (``max_iter`` and ``tol``: keyword only).
    axis : int, optional
        Keyword only. The axis of the problems, as for :func:`soft_rank`; ``jac.jvp`` and ``jac.vjp``
        take and return arrays of the shape of x along the same axis, ``jac.todense()`` is indexed
        by the other axes of x followed by (n, n).

    Returns
    -------
    y : ndarray, shape (..., n)
    jac : SoftJacobian

    Raises
    ------
    TypeError, ValueError
        As :func:`soft_rank`.
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Examples
    --------
    >>> y, jac = soft_rank_with_jacobian([0.0, 1.0], reg=4.0)
    >>> y.tolist(), jac.vjp([1.0, 0.0]).tolist()
    ([1.625, 1.375], [-0.125, 0.125])
    """
    func = "theory.topk.soft_rank_with_jacobian"
    a = _axis.resolve(x, axis, func)
    if a is not None:
        y, jac = soft_rank_with_jacobian(_axis.to_last(x, a), reg, p, descending, max_iter=max_iter, tol=tol)
        return _axis.from_last(y, a), jac._along(a)
    x, reg, p, descending, roots = _validate(x, reg, p, descending, func, max_iter, tol)
    rows = _rank_rows(_flat(x), reg, p, func, x.shape, not descending, roots)
    y = check_finite_output(rows.Y.reshape(x.shape), "the soft rank", func=func, hint="Increase `reg` or rescale `x`.")
    return y, SoftJacobian("rank", x.shape, reg, p, descending, rows, func)
