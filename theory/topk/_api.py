r"""Public API of the regularised top-k operators (paper key ``topk``: thesis Chapter 7).

Notation of the chapter: :math:`\mathbf 1_k=(1,\dots,1,0,\dots,0)` (k ones), :math:`P(\mathbf w)` the
permutahedron, :math:`R(\mathbf y)=\frac{\lambda}{p}\|\mathbf y\|_p^p` (``reg`` is :math:`\lambda`),
:math:`\sigma` the sorting permutation (descending), :math:`\mathbf s` the sorted input. For p = 2 the
chapter's reduction (Propositions 7.5/7.6, Eqs. (7.5)-(7.6)) is a decreasing weighted least-squares
isotonic regression, solved by :func:`theory.isotonic.isotonic_regression`; the operator is then
:math:`\mathbf y^*=\nabla R^*(\mathbf x-\mathbf u^*)=(\mathbf x-\mathbf u^*)/\lambda` (Proposition 7.2).

Conventions owned here (STYLE 7): stable descending sort (ties keep input order; tied inputs get
equal outputs anyway), sign(0) = +1 in the magnitude Jacobian (a one-sided choice; see
:func:`jacobian`), the optional rescaling of the magnitude operator.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval
from ..isotonic import isotonic_regression
from . import _kernels

__all__ = ["jacobian", "topk_magnitude", "topk_mask"]

#: Values of ``p`` implemented. p = 4/3 (a cubic per block, catalogue A7.3) and general p in (1, inf)
#: (a root finder per block) need the p-norm pooling of :mod:`theory.isotonic`, not implemented yet.
P_IMPLEMENTED = (2.0,)


def _validate(x, k, reg, p, func):
    """Coerce and check (x, k, reg, p); return (x float64 1-D copy-safe, k, reg, p)."""
    x = as_float_array(x, "x", func=func, ndim=1, min_size=2)
    n = x.shape[0]
    k = check_int(k, "k", func=func, minimum=1, maximum=n - 1)
    reg = check_interval(reg, "reg", 0.0, math.inf, func=func, closed="neither")
    p = check_interval(p, "p", 1.0, math.inf, func=func, closed="neither")
    if p not in P_IMPLEMENTED:
        raise NotImplementedError(
            f"`p` of {func}: only p = 2 is implemented; got p = {p}. Missing for p != 2: the p-norm "
            f"pooling of the isotonic subproblem (topk Eq. (7.6): a cubic per block for p = 4/3, a "
            f"safeguarded root finder for general p, in theory.isotonic) and the weights "
            f"|gamma - s_j|^(q-2) of the Jacobian (Proposition 7.8).")
    return x, k, reg, p


def _refine_blocks(t, omega, v, blocks):
    """Split PAV blocks where the order constraint is tight but inactive (zero KKT multiplier).

    The isotonic module pools blocks whose values tie (SciPy's convention), which leaves the fit
    unchanged but not its derivative: for x = (3, 0, 0), k = 1 the two zeros form one block although
    the mask is locally constant there. Inside a block B of value gamma the multiplier of the
    constraint v_a >= v_{a+1} is mu_a = sum_{i in B, i <= a} omega_i (t_i - gamma); a split where
    mu_a = 0 (to rounding, relative 1e-12 of sum_B omega_i (|t_i| + |gamma|)) keeps v optimal and gives
    the Jacobian of the finer piece (at an exact kink both pieces are valid one-sided Jacobians).
    """
    n = t.shape[0]
    res = omega * (t - v)
    mag = omega * (np.abs(t) + np.abs(v))
    cs = np.cumsum(res)
    cm = np.cumsum(mag)
    size = np.diff(blocks)
    start_cs = np.repeat(np.concatenate(([0.0], cs))[blocks[:-1]], size)
    start_cm = np.repeat(np.concatenate(([0.0], cm))[blocks[:-1]], size)
    total_m = np.repeat(cm[blocks[1:] - 1], size) - start_cm
    mu = cs - start_cs
    last = np.zeros(n, dtype=bool)
    last[blocks[1:] - 1] = True
    split = (~last) & (np.abs(mu) <= 1e-12 * total_m)
    cuts = np.flatnonzero(split) + 1
    return np.union1d(blocks, cuts).astype(np.intp)


def _solve(x, k, reg, mode):
    """Run the reduction of Section 7.5 for p = 2; return (y, order, blocks, denom, sgn)."""
    n = x.shape[0]
    w = np.zeros(n)
    w[:k] = 1.0  # 1_k, sorted descending as Eq. (7.5) requires
    if mode == "mask":
        # Proposition 7.5 (phi(x) = x): h_i(v) = (s_i - v)^2 / (2 reg) + w_i v, so Eq. (7.5) is the
        # decreasing isotonic regression of s - reg w (block value = mean of s_i - reg w_i, R7.10).
        order = np.argsort(-x, kind="stable")
        s = x[order]
        t = s - reg * w
        v, blocks = isotonic_regression(t, increasing=False)
        blocks = _refine_blocks(t, np.ones(n), v, blocks)
        sgn = np.ones(n)
        size = np.diff(blocks)
        denom = size.astype(np.float64)  # |B_r|
        starts = blocks[:-1]
        sbar = np.repeat(np.add.reduceat(s, starts) / size, size)
        kbar = np.repeat(np.add.reduceat(w, starts) / size, size)
        # y = (s - v)/reg with v = gamma_B = mean_B(s) - reg mean_B(w), rearranged so that a singleton
        # block gives y = w_i exactly (no cancellation in (s - (s - reg))/reg)
        ys = (s - sbar) / reg + kbar
    else:
        # Proposition 7.6 (phi(x) = x^2/2): s = |x| sorted, h_i(v) = (s_i - v)^2 / (2 reg) + w_i v^2 / 2
        # = (1 + reg w_i)/(2 reg) (v - s_i/(1 + reg w_i))^2 + const: weighted isotonic regression of
        # targets s_i/(1 + reg w_i), weights 1 + reg w_i; block value gamma_B = sum_B s / sum_B (1 + reg w)
        # (the Example of Section 7.5, Appendix 7.A.6); gamma_B >= 0 since s >= 0, so the
        # non-negativity of Proposition 7.6 holds without clipping.
        a = np.abs(x)
        order = np.argsort(-a, kind="stable")
        s = a[order]
        omega = 1.0 + reg * w
        v, blocks = isotonic_regression(s / omega, w=omega, increasing=False)
        blocks = _refine_blocks(s / omega, omega, v, blocks)
        sgn = np.where(x < 0.0, -1.0, 1.0)
        size = np.diff(blocks)
        starts = blocks[:-1]
        kB = np.add.reduceat(w, starts)
        denom = size + reg * kB  # sum_{j in B_r} (1 + reg w_j)
        ssum = np.repeat(np.add.reduceat(s, starts), size)
        # y = (s - gamma_B)/reg = (|B| s_i - sum_B s)/(reg denom) + k_B s_i/denom: a singleton gives
        # s_i w_i/(1 + reg w_i) in one rounding (no cancellation)
        d = np.repeat(denom, size)
        ys = (np.repeat(size, size) * s - ssum) / (reg * d) + np.repeat(kB, size) * s / d
        ys = np.maximum(ys, 0.0)  # >= 0 in exact arithmetic (y_i = x_i z_i/(1 + reg z_i), catalogue A7.6); guards rounding
    y = np.empty(n)
    y[order] = ys  # un-sort: u* = v*_{sigma^{-1}} (Propositions 7.5/7.6)
    if mode == "magnitude":
        y = np.where(x < 0.0, -y, y)  # u* = sign(x) o v*_{sigma^{-1}}, hence y* = sign(x) o (|x| - v*)/reg
    return y, order, blocks, denom, sgn


def _check_rescale(rescale, func):
    if not isinstance(rescale, (bool, np.bool_)):
        raise TypeError(f"`rescale` of {func} must be a bool; got {rescale!r}.")
    return bool(rescale)


def topk_mask(x, k, reg=1.0, p=2.0):
    r"""Regularised top-k mask (the relaxed topkmask of ``topk`` Section 7.4, :math:`\varphi(x)=x`).

    .. math::

        \mathbf y^* = \operatorname*{arg\,max}_{\mathbf y \in P(\mathbf 1_k)}
            \langle \mathbf y, \mathbf x\rangle - \frac{\lambda}{2}\|\mathbf y\|_2^2
          = \Pi_{P(\mathbf 1_k)}(\mathbf x/\lambda),
        \qquad P(\mathbf 1_k) = \{\mathbf y\in[0,1]^n : \textstyle\sum_i y_i = k\},

    where :math:`\lambda` = ``reg``. Computed by the reduction of Proposition 7.5: with
    :math:`\sigma` = argsort(-x) and :math:`\mathbf s=\mathbf x_\sigma`,
    :math:`\mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac{1}{2\lambda}(s_i-v_i)^2+(\mathbf 1_k)_iv_i`
    (Eq. (7.5)), i.e. the decreasing isotonic regression of :math:`\mathbf s-\lambda\mathbf 1_k`,
    :math:`\mathbf u^*=\mathbf v^*_{\sigma^{-1}}` and :math:`\mathbf y^*=(\mathbf x-\mathbf u^*)/\lambda`
    (Proposition 7.2).

    Parameters
    ----------
    x : array_like, shape (n,)
        Scores, finite reals, n >= 2. Never modified.
    k : int
        Number of selected entries, 1 <= k <= n - 1.
    reg : float
        Regularisation strength :math:`\lambda > 0`.
    p : float
        Exponent of the regulariser, in (1, inf); only 2 is implemented.

    Returns
    -------
    y : ndarray, shape (n,), float64
        In :math:`[0, 1]^n`, summing to k.

    Raises
    ------
    TypeError
        ``x`` not a real array; ``k`` not an integer; ``reg``/``p`` not real numbers.
    ValueError
        ``x`` not 1-D, n < 2, or NaN/inf in ``x``; ``k`` outside 1..n-1; ``reg`` <= 0, NaN or inf;
        ``p`` <= 1, NaN or inf.
    NotImplementedError
        ``p`` in (1, inf) other than 2.

    Notes
    -----
    Limits (p = 2, catalogue R7.10 and R7.15a): ``y`` is the hard top-k indicator exactly when
    :math:`\lambda \le x_{[k]} - x_{[k+1]}`; it is the affine map
    :math:`\frac kn\mathbf 1 + (\mathbf x-\bar x\mathbf 1)/\lambda` exactly when
    :math:`\lambda \ge \max\{(\bar x-\min x)\,n/k,\ (\max x-\bar x)\,n/(n-k)\}`.
    Permutation equivariant and shift invariant. Piecewise affine, continuous, differentiable
    almost everywhere (kinks where the isotonic blocks change).

    References
    ----------
    ``topk``: Eq. (7.2); Propositions 7.2 and 7.5; Eqs. (7.5)-(7.6).

    Examples
    --------
    >>> topk_mask([3.0, 1.0, 2.0, 0.0], k=2, reg=0.5).tolist()
    [1.0, 0.0, 1.0, 0.0]
    >>> topk_mask([1.0, 1.0, 0.0], k=1, reg=0.5).tolist()
    [0.5, 0.5, 0.0]
    """
    func = "theory.topk.topk_mask"
    x, k, reg, _ = _validate(x, k, reg, p, func)
    y, *_ = _solve(x, k, reg, "mask")
    return check_finite_output(y, "the mask", func=func, hint="Increase `reg` or rescale `x`.")


def topk_magnitude(x, k, reg=1.0, p=2.0, *, rescale=False):
    r"""Regularised top-k in magnitude, the thesis operator :math:`\mathrm{topkmag}_R` (``topk`` §7.4).

    .. math::

        \mathbf y^* = \nabla_1 f_{\varphi,R}(\mathbf x,\mathbf 1_k),\qquad
        f_{\varphi,R}(\mathbf x,\mathbf w) = \min_{\mathbf u}\ \frac{1}{2\lambda}\|\mathbf x-\mathbf u\|^2
            + \tfrac12 \textstyle\sum_{i\le k} (\mathbf u^2)_{[i]},

    with :math:`\varphi(x)=\frac12x^2`, :math:`R=\frac\lambda2\|\cdot\|^2` (Proposition 7.2), so
    :math:`\mathbf y^*=(\mathbf x-\mathbf u^*)/\lambda`. Reduction (Proposition 7.6): :math:`\sigma` =
    argsort(-|x|), :math:`\mathbf s=|\mathbf x|_\sigma`,
    :math:`\mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac{1}{2\lambda}(s_i-v_i)^2+\frac12(\mathbf 1_k)_iv_i^2`
    (Eq. (7.5)), block values :math:`\gamma_B^*=\sum_{i\in B}s_i/\sum_{i\in B}(1+\lambda(\mathbf 1_k)_i)`
    (Example of §7.5), :math:`\mathbf u^*=\mathrm{sign}(\mathbf x)\circ\mathbf v^*_{\sigma^{-1}}`.

    Parameters
    ----------
    x : array_like, shape (n,)
        Finite reals, n >= 2. Never modified.
    k : int
        1 <= k <= n - 1.
    reg : float
        :math:`\lambda > 0`.
    p : float
        In (1, inf); only 2 is implemented.
    rescale : bool, keyword only
        Return :math:`(1+\lambda)\mathbf y^*` instead of :math:`\mathbf y^*` (p = 2). This is the
        variant of the public code (``sign(x)(|y| + |x| - |u|)``), which equals the hard
        topkmag in the singleton regime and tends to ``x`` as :math:`\lambda\to\infty`; the thesis
        operator (default) is :math:`\mathrm{topkmag}(\mathbf x)/(1+\lambda)` there and tends to 0
        like :math:`\mathbf x/\lambda` (catalogue R7.9, R7.15b).

    Returns
    -------
    y : ndarray, shape (n,), float64
        :math:`\mathrm{sign}(y_i)\in\{0,\mathrm{sign}(x_i)\}`, :math:`|y_i|\le|x_i|`; at least k nonzeros
        when x has.

    Raises
    ------
    TypeError, ValueError, NotImplementedError
        As :func:`topk_mask`; ``rescale`` not a bool raises TypeError.

    Notes
    -----
    Exactly :math:`\mathrm{topkmag}(\mathbf x)/(1+\lambda)` iff
    :math:`\lambda<|x|_{[k]}/|x|_{[k+1]}-1` (catalogue R7.9). Permutation equivariant, odd,
    positively 1-homogeneous.

    References
    ----------
    ``topk``: Eqs. (7.3)-(7.4); Propositions 7.2 and 7.6; Eqs. (7.5)-(7.6); Example of §7.5.

    Examples
    --------
    >>> topk_magnitude([3.0, -2.0, 0.5], k=2, reg=1.0).tolist()
    [1.5, -1.0, 0.0]
    """
    func = "theory.topk.topk_magnitude"
    rescale = _check_rescale(rescale, func)
    x, k, reg, _ = _validate(x, k, reg, p, func)
    y, *_ = _solve(x, k, reg, "magnitude")
    if rescale:
        y = (1.0 + reg) * y
    return check_finite_output(y, "the output", func=func, hint="Increase `reg` or rescale `x`.")


def jacobian(x, k, reg=1.0, p=2.0, mode="mask", *, rescale=False):
    r"""Exact Jacobian :math:`\partial\mathbf y^*/\partial\mathbf x` of :func:`topk_mask` or
    :func:`topk_magnitude`, from the isotonic blocks (``topk`` Proposition 7.8, corrected).

    For p = 2, in sorted coordinates :math:`\partial v_a^*/\partial s_b = 1/d_r` when a and b lie in
    the same block :math:`B_r` and 0 otherwise (block averaging), with
    :math:`d_r = |B_r|` (mask) or :math:`d_r=\sum_{j\in B_r}(1+\lambda(\mathbf 1_k)_j)` (magnitude).
    Then :math:`J_{\mathbf u}=D\,\Pi_\sigma^\top J_{\mathbf v}\Pi_\sigma D` with
    :math:`D=\mathrm{diag}(\mathrm{sign}\,\mathbf x)` (magnitude; :math:`D=I` for the mask) and

    .. math::

        J = \frac{1}{\lambda}\,(I - J_{\mathbf u})

    (times :math:`1+\lambda` when ``rescale``). No linear system and no unrolling.

    Parameters
    ----------
    x, k, reg, p
        As :func:`topk_mask`.
    mode : {"mask", "magnitude"}
        Which operator.
    rescale : bool, keyword only
        Only with ``mode="magnitude"``: the Jacobian of ``topk_magnitude(..., rescale=True)``.

    Returns
    -------
    J : ndarray, shape (n, n), float64
        ``J[i, j]`` = :math:`\partial y_i/\partial x_j`. Symmetric positive semidefinite (the Hessian of
        the convex :math:`f_{\varphi,R}`); for the mask each row sums to 0 (shift invariance).

    Raises
    ------
    TypeError, ValueError, NotImplementedError
        As :func:`topk_mask`; ``mode`` not one of the two names (ValueError) or not a string
        (TypeError); ``rescale=True`` with ``mode="mask"`` (ValueError).

    Notes
    -----
    Erratum (catalogue R7.13, claim ``topk/prop-7.8/erratum``): Proposition 7.8 is printed for
    "p > 0"; the conjugate exponent q = p/(p-1) and the weights :math:`|\gamma-s_j|^{q-2}` need
    p > 1. The printed magnitude formula also drops the :math:`\lambda^{q-1}w_j` term of the
    denominator (with the lambda-scaled regulariser); for p = 2 it is the :math:`\lambda w_j` of
    :math:`d_r` above. Used form: the corrected one.

    The operator is piecewise affine; at a kink (a tie between entries in different blocks, or an
    input where PAV would change its blocks) this returns the Jacobian of the piece selected by the
    stable sort and the PAV blocks (an element of the Clarke generalized Jacobian). The blocks are
    those of :func:`theory.isotonic.isotonic_regression` split wherever the order constraint has a
    zero KKT multiplier (tied values that need not be pooled), so ties where the operator is smooth,
    e.g. x = (3, 0, 0), k = 1, get the true derivative. In the magnitude
    mode sign(0) is taken as +1, which gives the one-sided derivative from x_i > 0 (for an entry
    outside the top block this is 0, the right answer).

    References
    ----------
    ``topk``: Proposition 7.8 and Appendix 7.A.7; catalogue note R7.13, A7.8.

    Examples
    --------
    >>> topk_mask([1.0, 0.5, 0.0], k=1, reg=1.0).tolist()
    [0.75, 0.25, 0.0]
    >>> jacobian([1.0, 0.5, 0.0], k=1, reg=1.0).tolist()
    [[0.5, -0.5, 0.0], [-0.5, 0.5, 0.0], [0.0, 0.0, 0.0]]
    """
    func = "theory.topk.jacobian"
    mode = check_choice(mode, "mode", ("mask", "magnitude"), func=func)
    rescale = _check_rescale(rescale, func)
    if rescale and mode == "mask":
        raise ValueError(f"`rescale` of {func} applies only to mode='magnitude'; got rescale=True with mode='mask'.")
    x, k, reg, _ = _validate(x, k, reg, p, func)
    _, order, blocks, denom, sgn = _solve(x, k, reg, mode)
    n = x.shape[0]
    J = np.empty((n, n))
    _kernels._block_jacobian(np.ascontiguousarray(order, dtype=np.intp), np.ascontiguousarray(blocks, dtype=np.intp),
                             np.ascontiguousarray(denom), sgn, reg, J)
    if rescale:
        J *= 1.0 + reg
    return check_finite_output(J, "the Jacobian", func=func, hint="Increase `reg`.")
