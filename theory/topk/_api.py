r"""Public API of the regularised top-k operators (paper key ``topk``: thesis Chapter 7).

Notation of the chapter: :math:`\mathbf 1_k=(1,\dots,1,0,\dots,0)` (k ones), :math:`P(\mathbf w)` the
permutahedron, :math:`R(\mathbf y)=\frac{\lambda}{p}\|\mathbf y\|_p^p` (``reg`` is :math:`\lambda`,
p in (1, inf)), :math:`q=p/(p-1)` the conjugate exponent,
:math:`R^*(\mathbf z)=\sum_i\frac1q\lambda^{1-q}|z_i|^q`, :math:`\sigma` the sorting permutation
(descending), :math:`\mathbf s` the sorted input. The chapter's reduction (Propositions 7.5/7.6,
Eqs. (7.5)-(7.6)) is a decreasing isotonic problem
:math:`\mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n}\sum_i r^*(s_i-v_i)+w_i\varphi(v_i)`, and the operator
is :math:`\mathbf y^*=\nabla R^*(\mathbf x-\mathbf u^*)` (Proposition 7.2), i.e.
:math:`y_i=\lambda^{1-q}\,\mathrm{sign}(x_i-u_i)|x_i-u_i|^{q-1}`.

* Mask (:math:`\varphi(x)=x`): multiplying by :math:`\lambda^{q-1}` and writing
  :math:`t_i=(s_i-s_{k-1})/\lambda` (shift and scale, exact reformulation), Eq. (7.5) is
  :func:`theory.isotonic.isotonic_regression` ``(t, p=p, c=1_k, increasing=False)``:
  :math:`\min\sum_i\frac1q|t_i-v_i|^q+(\mathbf 1_k)_iv_i`, and :math:`y_i=\mathrm{sign}(t_i-v_i)|t_i-v_i|^{q-1}`.
* Magnitude (:math:`\varphi(x)=x^2/2`): p = 2 is the weighted least-squares isotonic regression of
  :math:`s_i/(1+\lambda w_i)` with weights :math:`1+\lambda w_i` (Example of §7.5); other p use the
  kernel :func:`theory.topk._kernels._mag_pnorm` (the isotonic module has no quadratic term), on
  :math:`\mathbf s/c` with :math:`\lambda c^{p-2}` for a power of two c (the operator satisfies
  :math:`\mathbf y(c\mathbf x;\lambda)=c\,\mathbf y(\mathbf x;\lambda c^{p-2})`).

With :math:`\mathbf w=\mathbf 1_k` at most one block pools (around sorted positions k-1 and k; see
``theory.topk._fast``), so only a window of the largest entries is sorted.

Conventions owned here: descending sort, any order among ties (tied inputs get equal
outputs, so the result does not depend on it), sign(0) = +1 in the magnitude Jacobian (a one-sided choice; see
:func:`jacobian`), the optional rescaling of the magnitude operator.
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np

from .._errors import NonFiniteError
from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval, plain_repr
from ..isotonic import ConvergenceWarning, isotonic_regression
from . import _axis, _batch, _kernels
from ._fast import solve_windowed
from ._root_settings import check_roots as _check_roots

__all__ = ["jacobian", "jvp", "topk_magnitude", "topk_mask", "vjp"]

#: Values of ``p`` implemented: every p in (1, inf).
P_IMPLEMENTED = "(1, inf)"

_CLIP = 4.0  # |t| clip of the mask's normalised scores; block members lie in [-2, 1] (see _mask_solver)
_EPS = np.finfo(float).eps
_TINY = float(np.finfo(float).tiny)  # smallest normal float64
_LB_SLACK = 1e-6  # normalised units below a lower bound of the mask's pooled value (>> _margin's rounding)


def _validate(x, k, reg, p, func):
    """Coerce and check (x, k, reg, p); return (x float64 1-D, k, reg, p)."""
    x = as_float_array(x, "x", func=func, ndim=1, min_size=2)
    n = x.shape[0]
    k = check_int(k, "k", func=func, minimum=1, maximum=n - 1)
    reg = check_interval(reg, "reg", 0.0, math.inf, func=func, closed="neither")
    p = check_interval(p, "p", 1.0, math.inf, func=func, closed="neither")
    return x, k, reg, p


def _check_rescale(rescale, func):
    if not isinstance(rescale, (bool, np.bool_)):
        raise TypeError(f"`rescale` of {func} must be a bool; got {plain_repr(rescale)}.")
    return bool(rescale)


def _margin(n, v):
    """Rounding allowance of a pooled tie of up to n equal values v (running sums of p = 2 PAV)."""
    return 8.0 * n * _EPS * max(1.0, abs(v))


def _splits(res, scale):
    """Cut points (relative, in 1..m-1) of a pooled block where the running KKT multiplier
    cumsum(res) vanishes (to 1e-12 of ``scale``): there the order constraint is tight but inactive, the
    fit is unchanged by a split, and the finer blocks give the derivative (one-sided at a kink)."""
    mu = np.cumsum(res)[:-1]
    return np.flatnonzero(np.abs(mu) <= 1e-12 * scale) + 1


class _Sol:
    """Forward solution on the accepted window and what the Jacobian needs (window coordinates)."""

    __slots__ = ("n", "order", "y", "sgn", "diag", "rk", "seg", "factor", "yr")


def _mask_solver(x, k, reg, p, func, max_iter=-1, tol=-1.0):
    """Window solver of the mask. Normalised scores t = (s - s_{k-1})/reg clipped to [-4, 4]: the
    operator is shift invariant and y(x; reg) = y(x/reg; 1), and block members satisfy |t - gamma| <= 1
    with gamma in [-1, 0] (y_{k-1} <= 1, y_k >= 0), so clipping only moves entries outside the block."""
    n = x.shape[0]
    q = p / (p - 1.0)

    def solve(order, nxt):
        s = x[order]
        K = s.shape[0]
        with np.errstate(over="ignore"):
            t = (s - s[k - 1]) / reg
        np.clip(t, -_CLIP, _CLIP, out=t)
        w = np.zeros(K)
        w[:k] = 1.0
        if p == 2.0 or p == 4.0 / 3.0:  # O(K) closed-form pooling
            v, blocks = isotonic_regression(t, p=p, c=w, increasing=False)
            r = int(np.searchsorted(blocks, k - 1, side="right")) - 1
            a0, b0 = int(blocks[r]), int(blocks[r + 1])
            vk = float(v[k - 1])
            gam = float(v[a0])
        else:  # the one pooled block directly, O(block) per root-finder step
            info = np.zeros(4)
            _kernels._mask_pnorm(t, k, q - 1.0, max_iter, tol, np.empty(K), np.empty(K), np.empty(K), info)
            a0, b0, gam = int(info[0]), int(info[1]), float(info[2])
            if int(info[3]) != _kernels.OK:
                warnings.warn(f"{func}: a per-block root solve (p = {p}) reached its iteration cap; the "
                              f"result is the last bracket's midpoint. Increase `max_iter` or `tol`.",
                              ConvergenceWarning, stacklevel=4)
            vk = gam if b0 > a0 else float(t[k - 1]) - 1.0
        if nxt is not None:
            with np.errstate(over="ignore"):
                tn = min(max((nxt - s[k - 1]) / reg, -_CLIP), _CLIP)
            if not (tn == -_CLIP or vk > tn + _margin(n, tn)):
                if p == 2.0 or p == 4.0 / 3.0:
                    return None
                # entries left out only add terms to sum_j min{1, (t_j - gamma)_+^(q-1)} = k, so the
                # window's pooled value bounds the full one below; verified Newton steps on that sum over
                # all of x tighten it (O(n) each): the next window is {x > the bound}
                lb = _kernels._mask_lower_bound(x, float(s[k - 1]), reg, q - 1.0, float(k), vk, 0.0)
                return float(s[k - 1]) + reg * (lb - _LB_SLACK)
        yw = w.copy()
        if b0 > k and p != 2.0:
            # the block's outputs in the anchored form (every digit also where t - gamma < eps |gamma|)
            a0, b0, yb = _mask_refine(t, k, p, a0, b0, gam, func, max_iter, tol)
            yw[a0:b0] = np.clip(yb, 0.0, 1.0)
        elif b0 > k:  # the boundary block: y = sign(t - gamma)|t - gamma|^(q-1), in [0, 1]
            d = t[a0:b0] - gam
            yb = d if p == 2.0 else np.sign(d) * np.abs(d) ** (q - 1.0)
            yw[a0:b0] = np.clip(yb, 0.0, 1.0)
        else:
            a0 = b0 = k
        return order, yw, (t, w, gam if b0 > a0 else 0.0, a0, b0)

    return solve


def _mask_refine(t, k, p, a, b, gam, func, max_iter=-1, tol=-1.0):
    """Outputs of the mask's pooled block [a, b) (sorted normalised scores t) in the anchored form of
    :mod:`theory.topk._kernels` (unknown: the output of the smallest member for p >= 2, of the largest
    for p < 2; every other output through the exact difference of its score from the anchor's), with
    the membership re-checked on the anchored outputs: j < k joins while y_j < 1, j >= k while y_j > 0
    (ties move together). The block sum is k - a. Returns (a, b, y[a:b])."""
    r = p - 1.0
    K = t.shape[0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = t[a:b] - gam
        y0 = np.sign(d) * np.abs(d) ** (1.0 / r)
    eta = float(y0[-1] if r >= 1.0 else y0[0])
    buf = np.empty(K)
    for _ in range(4 * K + 8):
        m = b - 1 if r >= 1.0 else a
        eta, ok = _kernels._anchored_root(t, a, b, m, r, float(k - a), eta, max_iter, tol)
        if not ok:
            warnings.warn(f"{func}: the anchored root solve (p = {p}) did not converge; the result is its "
                          f"last estimate. Increase `max_iter` or `tol`.", ConvergenceWarning, stacklevel=5)
        lo, hi = max(a - 1, 0), min(b + 1, K)
        _kernels._anchored_fill(t, lo, hi, m, eta, r, buf)
        na, nb = a, b
        if a > 0 and buf[a - 1] < 1.0:
            na = a - 1
        elif buf[a] > 1.0 and a < k - 1:
            na = a + 1
        if b < K and buf[b] > 0.0:
            nb = b + 1
        elif buf[b - 1] < 0.0 and b > k + 1:
            nb = b - 1
        if na == a and nb == b:
            break
        a, b = na, nb
    _kernels._anchored_fill(t, a, b, m, eta, r, buf)
    return a, b, buf[a:b].copy()


def _mag2_solver(ax, k, reg):
    """Window solver of the magnitude for p = 2 (weighted least squares, Example of §7.5)."""
    n = ax.shape[0]

    def solve(order, nxt):
        s = ax[order]
        K = s.shape[0]
        w = np.zeros(K)
        w[:k] = 1.0
        omega = 1.0 + reg * w
        v, blocks = isotonic_regression(s / omega, w=omega, increasing=False)
        r = int(np.searchsorted(blocks, k - 1, side="right")) - 1
        a0, b0 = int(blocks[r]), int(blocks[r + 1])
        if nxt is not None and not v[k - 1] > nxt * (1.0 + 8.0 * n * _EPS):  # nxt >= 0; pooled zeros are exact
            return float(v[k - 1]) * (1.0 - 1e-9)  # the window's block value bounds the full one below
        yw = np.zeros(K)
        yw[:k] = s[:k] / (1.0 + reg)  # singletons: s_i w_i/(1 + reg w_i), one rounding
        if b0 > k:
            size = b0 - a0
            kB = k - a0
            denom = size + reg * kB  # sum_{j in B} (1 + reg w_j)
            sb = s[a0:b0]
            # y = (s - gamma)/reg = (|B| s_i - sum_B s)/(reg denom) + k_B s_i/denom (no cancellation
            # for a singleton); >= 0 in exact arithmetic, clipped against rounding
            yb = (size * sb - np.sum(sb)) / (reg * denom) + kB * sb / denom
            yw[a0:b0] = np.maximum(yb, 0.0)
            gam = v[a0]
        else:
            a0 = b0 = k
            gam = 0.0
        return order, yw, (s, w, gam, a0, b0)

    return solve


def _mag_scale(ax_top, reg, p, func):
    """Power of two 2^E and the equivalent reg' = reg 2^(E(p-2)) (y(cx; reg) = c y(x; reg c^(p-2))).

    E is the exponent of |x|_[k] unless reg' then exceeds 2^1000 (the regularisation dominates at the
    data's scale): then E balances the two, minimising max(|log2 |x|_[k] - E|, |log2 reg'|); where no E
    keeps both within 2^+-1000 the problem is refused. reg' below the float range (0) is its limit
    (only entries tied with |x|_[k] pool; relative corrections below 2^-1000)."""
    e = math.frexp(ax_top)[1] if ax_top > 0.0 else 0
    lam = float(_kernels._reg_at_scale(reg, e, p - 2.0))
    if lam <= 2.0 ** 1000:
        return e, lam
    l2r = math.log2(reg)
    best, bestv = e, math.inf
    for c in ((e - l2r) / (p - 1.0), (e + l2r) / (3.0 - p) if p != 3.0 else float(e)):
        for E in (math.floor(c), math.ceil(c)):
            v = max(abs(e - E), abs(l2r + E * (p - 2.0)))
            if v < bestv:
                best, bestv = int(E), v
    if bestv > 1000.0:
        raise ValueError(f"`reg` of {func}: reg = {reg} is too large for p = {p} at the scale of `x` "
                         f"(|x|_[k] ~ 2^{e}): no power-of-two rescaling brings both |x|_[k] and the "
                         f"equivalent reg * |x|_[k]^(p-2) within 2^+-1000. Rescale `x` or `reg` "
                         f"(y(c x; reg c^(2-p)) = c y(x; reg)).")
    return best, float(_kernels._reg_at_scale(reg, best, p - 2.0))


def _magp_solver(ax, k, reg, p, func, max_iter=-1, tol=-1.0):
    """Window solver of the magnitude for p != 2 (kernel _mag_pnorm at the scale of |x|_[k])."""
    q = p / (p - 1.0)

    def solve(order, nxt):
        s = ax[order]
        K = s.shape[0]
        e, lam = _mag_scale(float(s[k - 1]), reg, p, func)
        with np.errstate(over="ignore"):
            sc = np.ldexp(s, -e)  # an overflow (an entry far above |x|_[k]) is a singleton: harmless
        yw = np.empty(K)
        info = np.zeros(4)
        _kernels._mag_pnorm(s, sc, e, k, reg, lam, p - 1.0, q - 1.0, max_iter, tol, yw, info)
        a0, b0, gam, status = int(info[0]), int(info[1]), float(info[2]), int(info[3])
        if nxt is not None and b0 > a0 and b0 >= K:
            # the block may reach past the window; its value on the window bounds the full one below
            return float(np.ldexp(gam, e)) * (1.0 - 1e-9)
        if status != _kernels.OK:
            warnings.warn(f"{func}: a per-block root solve (p = {p}) reached its iteration cap; the "
                          f"result is the last bracket's midpoint. Increase `max_iter` or `tol`.",
                          ConvergenceWarning, stacklevel=4)
        w = np.zeros(K)
        w[:k] = 1.0
        return order, yw, (sc, w, gam, a0, b0, e, lam)

    return solve


def _g_singleton(s, reg, p, max_iter=-1, tol=-1.0):
    """g with g + reg g^(p-1) = s >= 0 (the value of a magnitude singleton among the k largest)."""
    if p == 2.0:
        return s / (1.0 + reg)
    return _kernels._singleton(s, reg, p - 1.0, 1.0 / (p - 1.0), max_iter, tol)[0]


def _forward(x, k, reg, p, mode, func, full=False, max_iter=-1, tol=-1.0):
    """Solve; return (y (n,), order (window), window y, extra) for the mask or the magnitude.

    First window, a proven superset of the pooled block: mask, members have t_j > gamma >= t_{k-1} - 1,
    i.e. x_j > x_[k] - reg; magnitude, gamma exceeds the singleton value g of |x|_[k] (a left member
    has y_j < gamma), so members have |x_j| > gamma > g(|x|_[k]) (capped at the 4k + 64 largest).
    """
    n = x.shape[0]
    if mode == "mask":
        a = x
        solver = _mask_solver(x, k, reg, p, func, max_iter, tol)
    else:
        a = np.abs(x)
        solver = _mag2_solver(a, k, reg) if p == 2.0 else _magp_solver(a, k, reg, p, func, max_iter, tol)
    thr0 = -np.inf
    if not full and mode == "mask":
        thr0 = float(np.partition(a, n - k)[n - k]) - reg
        if p != 2.0 and p != 4.0 / 3.0:
            # the pooled value gamma >= t_{k-1} - 1 = -1 (normalised units) gives the window above;
            # verified Newton steps on sum_j min{1, (t_j - gamma)_+^(q-1)} = k over all of x (O(n)
            # each) raise that bound towards gamma, so that for large reg the window is about the block
            x0 = thr0 + reg
            lb = _kernels._mask_lower_bound(x, x0, reg, 1.0 / (p - 1.0), float(k), -1.0, 0.0)
            thr0 = max(thr0, x0 + reg * (lb - _LB_SLACK))
    elif not full:
        # the proven bound g(|x|_[k]) can be loose for large reg: start no lower than the (4k + 64)-th
        # largest; a rejected window then returns its block value, a tight lower bound
        K = min(n, 4 * k + 64)
        top = np.partition(a, n - K)[n - K:]  # the K largest, the K-th first
        kth = float(np.partition(top, K - k)[K - k])
        thr0 = max(_g_singleton(kth, reg, p, max_iter, tol) * (1.0 - 1e-12),
                   float(np.nextafter(top[0], -np.inf)) if K < n else -np.inf)
    order, yw, extra = solve_windowed(a, k, solver, thr0, full=full)
    if mode == "magnitude":
        _check_underflow(a[order[:k]], yw[:k], k, reg, p, func)
        yw_signed = np.where(x[order] < 0.0, -yw, yw)  # u* = sign(x) o v*_{sigma^{-1}} (Proposition 7.6)
    else:
        yw_signed = yw
    y = np.zeros(n)
    y[order] = yw_signed
    return y, order, yw, extra


def _check_underflow(s_top, y_top, k, reg, p, func):
    """Refuse outputs of the k largest magnitudes that are nonzero in exact arithmetic (|x_j| > 0) but
    flushed to zero (fewer than k nonzeros) or, for a normal |x_j|, below the normal float range
    (subnormals, without relative accuracy). A subnormal |x_j| may give a subnormal output."""
    bad = (s_top > 0.0) & ((y_top == 0.0) | ((y_top < _TINY) & (s_top >= _TINY)))
    if np.any(bad):
        raise NonFiniteError(
            f"`x` of {func}: {int(np.count_nonzero(bad))} of the k = {k} largest outputs lie below the "
            f"float64 normal range ({_TINY:.4g}) or at zero at reg = {plain_repr(float(reg))}, p = {plain_repr(float(p))} (the "
            f"regularisation shrinks |x|_[k] = {float(s_top[-1]):.6g} below it); rescale `x` or `reg` "
            f"(y(c x; reg c^(2-p)) = c y(x; reg)).")


def _rescaled(x, y, yw, order, extra, reg, p):
    """The public code's variant sign(x)(|y| + |x| - |u|) = y + reg sign(y)|y|^(p-1) ((1 + reg) y at
    p = 2): |x_j| exactly for a singleton among the k largest, |y_j| + (s_j - gamma) in the block."""
    if p == 2.0:
        return (1.0 + reg) * y
    sc, w, gam, a0, b0, e, lam = extra
    top = a0 if b0 > a0 else int(np.sum(w))
    out_w = np.zeros(yw.shape[0])
    out_w[:top] = np.abs(x[order[:top]])
    if b0 > a0:
        # s_j - gamma = lam y_j^(p-1) at the working scale (from the anchored outputs: every digit)
        with np.errstate(over="ignore", under="ignore"):
            out_w[a0:b0] = yw[a0:b0] + np.ldexp(lam * np.ldexp(yw[a0:b0], -e) ** (p - 1.0), e)
        out_w[a0:b0] = np.minimum(out_w[a0:b0], np.abs(x[order[a0:b0]]))
    out = np.zeros_like(y)
    out[order] = np.where(x[order] < 0.0, -out_w, out_w)
    return out


def _structure(x, k, reg, p, mode, order, yw, extra, rescale):
    """Block structure of the Jacobian in window coordinates: J_win = F D (diag(diag) - sum_r
    rk_r rk_r^T/den_r) D, D = diag(sgn), F = diag(factor) (rescale; ones otherwise)."""
    K = order.shape[0]
    q = p / (p - 1.0)
    diag = np.zeros(K)
    rk = np.zeros(K)
    factor = np.ones(K)
    sgn = np.ones(K) if mode == "mask" else np.where(x[order] < 0.0, -1.0, 1.0)
    seg = (np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0))
    if mode == "mask":
        t, w, gam, a0, b0 = extra
        if b0 > a0:
            d = np.abs(t[a0:b0] - gam)
            with np.errstate(divide="ignore", over="ignore"):
                # d^(q-2) = y^(1-(p-1)) = y^(2-p): from the anchored outputs (accurate where t - gamma is not)
                alpha = (np.full(b0 - a0, 1.0 / reg) if p == 2.0
                         else (q - 1.0) * yw[a0:b0] ** (2.0 - p) / reg)
            res = w[a0:b0] - yw[a0:b0]  # first-order residuals w_j - y_j of the block (in y units)
            scale = float(np.sum(w[a0:b0] + yw[a0:b0]))
            seg = _segments(a0, b0, alpha, res, scale, np.zeros(b0 - a0), diag, rk, single=lambda j: 0.0)
    else:
        if p == 2.0:
            s, w, gam, a0, b0 = extra
            lam, ysc = reg, yw
            single_w1 = np.full(K, 1.0 / (1.0 + reg))
            if rescale:
                factor[:] = 1.0 + reg
        else:
            s, w, gam, a0, b0, e, lam = extra
            ysc = np.zeros(K)
            ysc[a0:b0] = np.ldexp(yw[a0:b0], -e)  # block members, at the scale of |x|_[k]
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # inf/NaN: refused below
                # g + reg g^(p-1) = s: dg/ds = 1/(1 + reg (p-1) g^(p-2)) (0 at g = 0 for p < 2, 1 for p > 2)
                single_w1 = 1.0 / (1.0 + reg * (p - 1.0) * yw ** (p - 2.0))
                if rescale:  # rows of the block times 1 + reg (p-1) y^(p-2); singletons: d|x|/dx = 1 below
                    factor = np.where(ysc > 0.0, 1.0 + lam * (p - 1.0) * ysc ** (p - 2.0), 1.0)
        top = min(a0, k) if b0 > a0 else k
        diag[:top] = single_w1[:top]
        if rescale and p != 2.0:
            diag[:top] = 1.0  # the rescaled singleton is |x_j| itself
        if b0 > a0:
            with np.errstate(divide="ignore", over="ignore"):
                # (q-1) lam^(1-q) |s - gamma|^(q-2) = (q-1) y^(2-p)/lam (s - gamma = lam y^(p-1)): from
                # the anchored outputs, accurate where s - gamma is not
                alpha = (np.full(b0 - a0, 1.0 / lam) if p == 2.0
                         else (q - 1.0) * ysc[a0:b0] ** (2.0 - p) / lam)
            res = w[a0:b0] * gam - ysc[a0:b0]  # residuals w_j gamma - y_j (the singleton value is gamma)
            scale = float(np.sum(w[a0:b0] * abs(gam) + ysc[a0:b0]))
            seg = _segments(a0, b0, alpha, res, scale, w[a0:b0], diag, rk,
                            single=lambda j: single_w1[j] if w[j] > 0.0 else 0.0)
    sol = _Sol()
    sol.order, sol.sgn, sol.diag, sol.rk, sol.seg, sol.factor = order, sgn, diag, rk, seg, factor
    return sol


def _segments(a0, b0, alpha, res, scale, wB, diag, rk, single):
    """Split the block [a0, b0) at vanishing multipliers; fill diag/rk (multi-entry segments: diag =
    rk = alpha, den = sum alpha + sum w; singletons: their own derivative). Return (lo, hi, den) of
    the multi-entry segments."""
    cuts = np.concatenate(([0], _splits(res, scale), [b0 - a0]))
    lo, hi, den = [], [], []
    for c0, c1 in zip(cuts[:-1], cuts[1:]):
        if c1 - c0 == 1:
            diag[a0 + c0] = single(a0 + c0)
            continue
        al = alpha[c0:c1]
        diag[a0 + c0:a0 + c1] = al
        rk[a0 + c0:a0 + c1] = al
        lo.append(a0 + c0)
        hi.append(a0 + c1)
        den.append(float(np.sum(al)) + float(np.sum(wB[c0:c1])))
    return np.array(lo, np.intp), np.array(hi, np.intp), np.array(den, np.float64)


def _apply(sol, vec, n, transpose):
    """J @ vec (transpose False) or vec @ J (True) in O(n) from the block structure."""
    v = vec[sol.order]
    if transpose:
        v = v * sol.factor
    v = v * sol.sgn
    out_w = sol.diag * v
    lo, hi, den = sol.seg
    for r in range(lo.shape[0]):  # one segment in practice (a few where multipliers vanish)
        a, b = lo[r], hi[r]
        out_w[a:b] -= sol.rk[a:b] * (float(np.dot(sol.rk[a:b], v[a:b])) / den[r])
    out_w *= sol.sgn
    if not transpose:
        out_w *= sol.factor
    out = np.zeros(n)
    out[sol.order] = out_w
    return out


# ----------------------------------------------------------------------------------- batches of rows

def _is_batch(x):
    """x has two or more axes: a batch whose rows (last axis) are independent problems."""
    try:
        return np.ndim(x) >= 2
    except (ValueError, TypeError):  # ragged input: the 1-D validation reports it
        return False


def _batch_rows(x, k, reg, p, func, vectors=()):
    """Validate a batch x (..., n), n >= 2, finite (the error names the row), k in 1..n-1, reg, p and
    each (name, array) of ``vectors`` (x's shape, finite); return x and the vectors as (m, n) arrays."""
    from ._soft import _as_batch  # one batch validation for every operator of theory.topk

    X = _as_batch(x, "x", func)
    n = X.shape[-1]
    if n < 2:
        raise ValueError(f"`x` of {func} must have at least 2 entries along its last axis; got shape {X.shape}.")
    check_int(k, "k", func=func, minimum=1, maximum=n - 1)
    check_interval(reg, "reg", 0.0, math.inf, func=func, closed="neither")
    check_interval(p, "p", 1.0, math.inf, func=func, closed="neither")
    vs = [as_float_array(v, name, func=func, shape=X.shape).reshape(-1, n) for name, v in vectors]
    return X, X.reshape(-1, n), vs


def _stack(outs, shape):
    return np.array(outs, dtype=np.float64).reshape(shape)



def topk_mask(x, k, reg=1.0, p=2.0, *, max_iter=None, tol=None, axis=-1):
    r"""Regularised top-k mask (the relaxed topkmask of ``topk`` Section 7.4, :math:`\varphi(x)=x`).

    .. math::

        \mathbf y^* = \operatorname*{arg\,max}_{\mathbf y \in P(\mathbf 1_k)}
            \langle \mathbf y, \mathbf x\rangle - \frac{\lambda}{p}\|\mathbf y\|_p^p,
        \qquad P(\mathbf 1_k) = \{\mathbf y\in[0,1]^n : \textstyle\sum_i y_i = k\},

    where :math:`\lambda` = ``reg`` (for p = 2 the projection :math:`\Pi_{P(\mathbf 1_k)}(\mathbf x/\lambda)`).
    Computed by the reduction of Proposition 7.5: with :math:`\sigma` = argsort(-x),
    :math:`\mathbf s=\mathbf x_\sigma`, :math:`q=p/(p-1)`,
    :math:`\mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac{\lambda^{1-q}}{q}|s_i-v_i|^q+(\mathbf 1_k)_iv_i`
    (Eq. (7.5); each pooled value solves Eq. (7.6): the mean of :math:`s_i-\lambda(\mathbf 1_k)_i` for
    p = 2, a cubic for p = 4/3, a monotone root otherwise), :math:`\mathbf u^*=\mathbf v^*_{\sigma^{-1}}`
    and :math:`y_i=\lambda^{1-q}\mathrm{sign}(x_i-u_i)|x_i-u_i|^{q-1}` (Proposition 7.2), through
    :func:`theory.isotonic.isotonic_regression` with the linear term ``c`` :math:`=\mathbf 1_k` on
    the scores :math:`(s_i-s_{k-1})/\lambda`.

    Parameters
    ----------
    x : array_like, shape (n,) or (..., n)
        Scores, finite reals, n >= 2. Never modified. Several axes: a batch, every row along the last
        axis is one problem; each row's output equals the 1-D call bit for bit (p = 2: the rows' first
        windows in one compiled call).
    k : int
        Number of selected entries, 1 <= k <= n - 1.
    reg : float
        Regularisation strength :math:`\lambda > 0`.
    p : float
        Exponent of the regulariser, in (1, inf).
    max_iter : int >= 1, optional
        Keyword only. Cap on the iterations of each root solve (p not in {2, 4/3} for the mask, p != 2
        for the magnitude; the others are closed forms). Default None: each solve's own cap, which
        reproduces the results of earlier versions bit for bit: 4399 for the threshold equation and the
        singleton equation :math:`g+\lambda g^{p-1}=|x_i|` (enough to reach adjacent floats from any
        bracket in the float range), 4399 for the anchored block equation of the magnitude and 2999 for
        that of the mask, 400 for the per-block re-solve of the mask (the default of
        :func:`theory.isotonic.isotonic_regression`). Reaching a cap issues
        :class:`theory.isotonic.ConvergenceWarning`.
    tol : float >= 0, optional
        Keyword only. A root solve stops once its bracket is at most ``tol`` times its scale
        (``max(|a|, |b|)`` of the bracket [a, b]) wide, or spans adjacent floats. Default None: each solve's
        own rule, 4 eps for the block equations, adjacent floats or a Newton step below eps times the
        root (mask: ``eps max(|root|, 1)``) for the threshold and singleton equations.
    axis : int, optional
        Keyword only. The axis along which each problem lies (default -1, the last axis); every other
        axis indexes the problems. The result along ``axis=a`` equals
        ``np.moveaxis(f(np.moveaxis(x, a, -1), ...), -1, a)`` bit for bit. An integer in
        [-x.ndim, x.ndim - 1].

    Returns
    -------
    y : ndarray, shape of x, float64
        In :math:`[0, 1]^n`, summing to k (to rounding).

    Raises
    ------
    TypeError
        ``x`` not a real array; ``k`` not an integer; ``reg``/``p`` not real numbers.
    ValueError
        ``x`` 0-D, n < 2 entries along its last axis, or NaN/inf in ``x`` (a batch: the message names
        the row); ``k`` outside 1..n-1; ``reg`` <= 0, NaN or inf;
        ``p`` <= 1, NaN or inf.
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Warns
    -----
    ConvergenceWarning
        (p not in {2, 4/3}) a root solve reached its iteration cap (``max_iter``).

    Notes
    -----
    Only the entries pooled with the k-th largest can be fractional (``theory.topk._fast``): the
    k - a largest are exactly 1, the rest after the pooled block exactly 0. The work is a partial sort
    of a window of the largest entries (grown until it holds the pooled block), so the cost is O(n)
    plus O(K log K) for a window of K entries; the result equals the full-sort computation bit for bit.
    The isotonic solve is O(K) for p = 2 and p = 4/3 (closed-form pooling); for other p the one pooled
    block is located directly from the threshold equation :math:`\sum_j\min\{1,((x_j-\tau)_+/\lambda)^{q-1}\}=k`
    (Newton over the block's terms only) and its value re-solved over its members by
    the isotonic module's root finder (the same bits as the isotonic path), O(B) per root-finder step
    for a block of B entries.

    Limits: ``y`` is the hard top-k indicator exactly when :math:`\lambda \le x_{[k]} - x_{[k+1]}`, for
    every p; for p = 2 it is the affine map
    :math:`\frac kn\mathbf 1 + (\mathbf x-\bar x\mathbf 1)/\lambda` exactly when
    :math:`\lambda \ge \max\{(\bar x-\min x)\,n/k,\ (\max x-\bar x)\,n/(n-k)\}`.
    Permutation equivariant and shift invariant. For p = 2 piecewise affine, continuous,
    differentiable almost everywhere; for 1 < p < 2 continuously differentiable.
    Scores far from the k-th largest (more than 4 ``reg`` away) are clipped before the isotonic
    solve; they are outside the pooled block and their outputs are exact either way.

    References
    ----------
    ``topk``: Eq. (7.2); Propositions 7.2 and 7.5; Eqs. (7.5)-(7.6).

    Examples
    --------
    >>> topk_mask([3.0, 1.0, 2.0, 0.0], k=2, reg=0.5).tolist()
    [1.0, 0.0, 1.0, 0.0]
    >>> topk_mask([1.0, 1.0, 0.0], k=1, reg=0.5).tolist()
    [0.5, 0.5, 0.0]
    >>> y = topk_mask([1.0, 0.5, 0.0], k=1, reg=1.0, p=4/3)   # y_i = (x_i - tau)^3, (1 - tau)^3 + (0.5 - tau)^3 = 1
    >>> [round(v, 6) for v in y.tolist()]
    [0.8993, 0.1007, 0.0]
    """
    func = "theory.topk.topk_mask"
    a = _axis.resolve(x, axis, func)
    mi, tl = _check_roots(max_iter, tol, func)
    if a is not None:
        return _axis.from_last(topk_mask(_axis.to_last(x, a), k, reg, p, max_iter=max_iter, tol=tol), a)
    if _is_batch(x):  # rows along the last axis, each the 1-D operator (bit for bit)
        X, rows, _ = _batch_rows(x, k, reg, p, func)
        if p != 2.0:
            return _stack([topk_mask(r, k, reg, p, max_iter=max_iter, tol=tol) for r in rows], X.shape)
        m, n = rows.shape  # p = 2: every row's first window in one compiled call, the others by the 1-D code
        Y = np.empty((m, n))
        status = np.empty(m, dtype=np.intp)
        par = (m >= _batch.PARALLEL_MIN_ROWS and m * n >= _batch.PARALLEL_MIN_WORK
               and numba.get_num_threads() >= _batch.MASK_PARALLEL_MIN_THREADS)
        (_batch._mask_rows_par if par else _batch._mask_rows)(rows, int(k), float(reg), Y, status)
        # rows of status OK are finite (0, 1 or a value clipped to [0, 1] from a finite pooled value);
        # the others are the 1-D operator's, which checks its own output
        for r in np.flatnonzero(status):
            Y[r] = topk_mask(rows[r], k, reg, p, max_iter=max_iter, tol=tol)
        return Y.reshape(X.shape)
    x, k, reg, p = _validate(x, k, reg, p, func)
    y, *_ = _forward(x, k, reg, p, "mask", func, max_iter=mi, tol=tl)
    return check_finite_output(y, "the mask", func=func, hint="Increase `reg` or rescale `x`.")


def topk_magnitude(x, k, reg=1.0, p=2.0, *, rescale=False, max_iter=None, tol=None, axis=-1):
    r"""Regularised top-k in magnitude, the thesis operator :math:`\mathrm{topkmag}_R` (``topk`` §7.4).

    .. math::

        \mathbf y^* = \nabla_1 f_{\varphi,R}(\mathbf x,\mathbf 1_k),\qquad
        f_{\varphi,R}(\mathbf x,\mathbf w) = \min_{\mathbf u}\ R^*(\mathbf x-\mathbf u)
            + \tfrac12 \textstyle\sum_{i\le k} (\mathbf u^2)_{[i]},

    with :math:`\varphi(x)=\frac12x^2`, :math:`R=\frac\lambda p\|\cdot\|_p^p`,
    :math:`R^*(\mathbf z)=\sum_i\frac1q\lambda^{1-q}|z_i|^q`, :math:`q=p/(p-1)` (Proposition 7.2), so
    :math:`y_i=\lambda^{1-q}\mathrm{sign}(x_i-u_i)|x_i-u_i|^{q-1}`. Reduction (Proposition 7.6):
    :math:`\sigma = \mathrm{argsort}(-|\mathbf x|)`, :math:`\mathbf s=|\mathbf x|_\sigma`,
    :math:`\mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n}\sum_i\frac{\lambda^{1-q}}q|s_i-v_i|^q+\frac12(\mathbf 1_k)_iv_i^2`
    (Eq. (7.5)), :math:`\mathbf u^*=\mathrm{sign}(\mathbf x)\circ\mathbf v^*_{\sigma^{-1}}`. A pooled
    block B has the value :math:`\gamma_B` solving
    :math:`\sum_{i\in B}\lambda^{q-1}(\mathbf 1_k)_i\gamma-\mathrm{sign}(s_i-\gamma)|s_i-\gamma|^{q-1}=0`
    (Eq. (7.6)); for p = 2, :math:`\gamma_B=\sum_{B}s_i/\sum_{B}(1+\lambda(\mathbf 1_k)_i)` (Example of §7.5).

    Parameters
    ----------
    x : array_like, shape (n,) or (..., n)
        Finite reals, n >= 2. Never modified. Several axes: a batch of rows (last axis), each equal to
        the 1-D call bit for bit.
    k : int
        1 <= k <= n - 1.
    reg : float
        :math:`\lambda > 0`.
    p : float
        In (1, inf).
    max_iter : int >= 1, optional
        Keyword only. Cap on the iterations of each root solve (p not in {2, 4/3} for the mask, p != 2
        for the magnitude; the others are closed forms). Default None: each solve's own cap, which
        reproduces the results of earlier versions bit for bit: 4399 for the threshold equation and the
        singleton equation :math:`g+\lambda g^{p-1}=|x_i|` (enough to reach adjacent floats from any
        bracket in the float range), 4399 for the anchored block equation of the magnitude and 2999 for
        that of the mask, 400 for the per-block re-solve of the mask (the default of
        :func:`theory.isotonic.isotonic_regression`). Reaching a cap issues
        :class:`theory.isotonic.ConvergenceWarning`.
    tol : float >= 0, optional
        Keyword only. A root solve stops once its bracket is at most ``tol`` times its scale
        (``max(|a|, |b|)`` of the bracket [a, b]) wide, or spans adjacent floats. Default None: each solve's
        own rule, 4 eps for the block equations, adjacent floats or a Newton step below eps times the
        root (mask: ``eps max(|root|, 1)``) for the threshold and singleton equations.
    rescale : bool, keyword only
        Return :math:`\mathrm{sign}(\mathbf x)\circ(|\mathbf y^*|+|\mathbf x|-|\mathbf u^*|)
        =\mathbf y^*+\lambda\,\mathrm{sign}(\mathbf y^*)|\mathbf y^*|^{p-1}` (:math:`(1+\lambda)\mathbf y^*`
        for p = 2) instead of :math:`\mathbf y^*`: the variant of the public code, equal to the hard
        topkmag in the singleton regime. The thesis operator (default) is smaller there
        (:math:`|y_i|=g` with :math:`g+\lambda g^{p-1}=|x_i|`) and tends to 0 as
        :math:`\lambda\to\infty`.
    axis : int, optional
        Keyword only. The axis along which each problem lies (default -1, the last axis); every other
        axis indexes the problems. The result along ``axis=a`` equals
        ``np.moveaxis(f(np.moveaxis(x, a, -1), ...), -1, a)`` bit for bit. An integer in
        [-x.ndim, x.ndim - 1].

    Returns
    -------
    y : ndarray, shape of x, float64
        :math:`\mathrm{sign}(y_i)\in\{0,\mathrm{sign}(x_i)\}`, :math:`|y_i|\le|x_i|`; at least k nonzeros
        when x has.

    Raises
    ------
    TypeError, ValueError
        As :func:`topk_mask`; ``rescale`` not a bool raises TypeError; for p != 2, a ValueError naming
        ``reg`` when no power-of-two rescaling keeps both :math:`|x|_{[k]}` and the equivalent
        :math:`\lambda|x|_{[k]}^{p-2}` within :math:`2^{\pm1000}` (the regularisation dominates by
        more than that); an underflowing :math:`\lambda|x|_{[k]}^{p-2}` is its limit (only ties with
        :math:`|x|_{[k]}` pool), not an error.
    theory.NonFiniteError
        (a ValueError naming ``x``) an output among the k largest magnitudes is nonzero in exact
        arithmetic but below the normal float64 range (flushed to zero, or subnormal for a normal
        :math:`x_i`): the result is not representable. Outputs after the k-th may be flushed.
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Warns
    -----
    ConvergenceWarning
        (p != 2) a root solve reached its iteration cap (``max_iter``).

    Notes
    -----
    Singleton regime: exactly the top-k entries are nonzero, with
    :math:`|y_i|=g`, :math:`g+\lambda g^{p-1}=|x_i|` (p = 2: :math:`\mathrm{topkmag}(\mathbf x)/(1+\lambda)`), iff
    :math:`|x|_{[k]}>|x|_{[k+1]}+\lambda|x|_{[k+1]}^{p-1}`. Permutation equivariant, odd; positively
    1-homogeneous for p = 2 (in general :math:`\mathbf y(c\mathbf x;\lambda)=c\,\mathbf y(\mathbf x;\lambda c^{p-2})`).
    As for the mask only a window of the largest magnitudes is sorted. For p != 2 the problem is
    solved at a power-of-two scale (that of :math:`|x|_{[k]}`, or one balancing it with the
    equivalent reg), the pooled block's outputs in the anchored form (unknown: the output of one
    member; the others through exact score differences), so that outputs keep their digits where
    :math:`|x_i|-\gamma` is far below the rounding of :math:`\gamma` (ties with a small reg, p near 1).
    Accuracy against a 60-digit decimal reference (tests/test_topk_magnitude_extremes.py): a few eps
    relative for p >= 2; for p < 2 an output far below the block's largest carries the conditioning
    :math:`(q-1)(y_{\max}/y_i)^{p-1}` eps.

    References
    ----------
    ``topk``: Eqs. (7.3)-(7.4); Propositions 7.2 and 7.6; Eqs. (7.5)-(7.6); Example of §7.5.

    Examples
    --------
    >>> topk_magnitude([3.0, -2.0, 0.5], k=2, reg=1.0).tolist()
    [1.5, -1.0, 0.0]
    >>> topk_magnitude([3.0, -2.0, 0.5], k=2, reg=1.0, rescale=True).tolist()
    [3.0, -2.0, 0.0]
    >>> y = topk_magnitude([3.0, -2.0, 0.5], k=2, reg=0.5, p=4/3)   # g + 0.5 g^(1/3) = |x_i|
    >>> [round(v, 6) for v in y.tolist()]
    [2.336522, -1.435913, 0.0]
    """
    func = "theory.topk.topk_magnitude"
    a = _axis.resolve(x, axis, func)
    mi, tl = _check_roots(max_iter, tol, func)
    kw = {"rescale": rescale, "max_iter": max_iter, "tol": tol}
    if a is not None:
        return _axis.from_last(topk_magnitude(_axis.to_last(x, a), k, reg, p, **kw), a)
    if _is_batch(x):
        X, rows, _ = _batch_rows(x, k, reg, p, func)
        return _stack([topk_magnitude(r, k, reg, p, **kw) for r in rows], X.shape)
    rescale = _check_rescale(rescale, func)
    x, k, reg, p = _validate(x, k, reg, p, func)
    y, order, yw, extra = _forward(x, k, reg, p, "magnitude", func, max_iter=mi, tol=tl)
    if rescale:
        y = _rescaled(x, y, yw, order, extra, reg, p)
    return check_finite_output(y, "the output", func=func, hint="Increase `reg` or rescale `x`.")


def _prepare(x, k, reg, p, mode, rescale, func, max_iter=-1, tol=-1.0):
    mode = check_choice(mode, "mode", ("mask", "magnitude"), func=func)
    rescale = _check_rescale(rescale, func)
    if rescale and mode == "mask":
        raise ValueError(f"`rescale` of {func} applies only to mode='magnitude'; got rescale=True with mode='mask'.")
    x, k, reg, p = _validate(x, k, reg, p, func)
    _, order, yw, extra = _forward(x, k, reg, p, mode, func, max_iter=max_iter, tol=tol)
    return x, _structure(x, k, reg, p, mode, order, yw, extra, rescale)


def jacobian(x, k, reg=1.0, p=2.0, mode="mask", *, rescale=False, max_iter=None, tol=None, axis=-1):
    r"""Exact Jacobian :math:`\partial\mathbf y^*/\partial\mathbf x` of :func:`topk_mask` or
    :func:`topk_magnitude`, from the pooled blocks (``topk`` Proposition 7.8, corrected).

    In sorted coordinates, for a pooled block B with value :math:`\gamma` (Proposition 7.8 with the
    corrections recorded in ERRATA.md): with :math:`\omega_j=|\gamma-s_j|^{q-2}`,
    :math:`\partial\gamma/\partial s_i=\omega_i/\sum_{j\in B}\omega_j` (mask) and
    :math:`(q-1)\omega_i/\sum_{j\in B}[(q-1)\omega_j+\lambda^{q-1}(\mathbf 1_k)_j]` (magnitude), 0 for
    :math:`i\notin B`. With :math:`\mathbf y^*=\nabla R^*(\mathbf x-\mathbf u^*)` this gives, with
    :math:`\alpha_j=(q-1)\lambda^{1-q}|s_j-\gamma|^{q-2}` (mask: :math:`(q-1)|t_j-\gamma|^{q-2}/\lambda`
    in the normalised scores),

    .. math::

        J_B = D\Big(\mathrm{diag}(\alpha_B) - \frac{\alpha_B\alpha_B^\top}
              {\sum_{j\in B}\alpha_j + [\text{magnitude}]\sum_{j\in B}(\mathbf 1_k)_j}\Big)D,

    D = diag(sign x) (magnitude) or I (mask); a magnitude singleton among the k largest has
    :math:`\partial y_i/\partial x_i=1/(1+\lambda(p-1)|y_i|^{p-2})` (:math:`1/(1+\lambda)` for p = 2),
    every other entry 0 (times :math:`1+\lambda(p-1)|y_i|^{p-2}` row-wise when ``rescale``). For p = 2
    this is :math:`(I-\text{block average})/\lambda` (mask). No linear system and no unrolling.

    Parameters
    ----------
    x, k, reg, p, max_iter, tol
        As :func:`topk_mask`.
    mode : {"mask", "magnitude"}
        Which operator.
    rescale : bool, keyword only
        Only with ``mode="magnitude"``: the Jacobian of ``topk_magnitude(..., rescale=True)``.
    axis : int, optional
        Keyword only. The axis of the problems (default -1, the last axis). The matrices are indexed
        by the other axes of x in their order: the result has shape
        ``np.moveaxis(x, axis, -1).shape + (n,)`` with n = ``x.shape[axis]`` (NumPy's stacks of
        matrices in the last two axes; ``x.shape + (n,)`` for the last axis) and equals
        ``jacobian(np.moveaxis(x, axis, -1), ...)`` bit for bit.

    Returns
    -------
    J : ndarray, shape (n, n) (or x.shape + (n,) for a batch), float64
        Along another ``axis``: the other axes of x in order, then (n, n). ``J[i, j]`` = :math:`\partial y_i/\partial x_j`. Symmetric positive semidefinite (the Hessian of
        the convex :math:`f_{\varphi,R}`) unless ``rescale``; for the mask each row sums to 0 (shift
        invariance). For matrix-free products use :func:`jvp` and :func:`vjp` (O(n)).

    Raises
    ------
    TypeError, ValueError
        As :func:`topk_mask`; ``mode`` not one of the two names (ValueError) or not a string
        (TypeError); ``rescale=True`` with ``mode="mask"`` (ValueError).
    theory.NonFiniteError
        The derivative is infinite: p > 2 at an input where a pooled entry is exactly at 0
        (:math:`|s_j-\gamma|^{q-2}` with q < 2).
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    Notes
    -----
    Erratum (claim ``topk/prop-7.8/erratum``): Proposition 7.8 is printed for
    "p > 0"; the conjugate exponent q = p/(p-1) and the weights :math:`|\gamma-s_j|^{q-2}` need
    p > 1. The printed magnitude formula also drops the :math:`\lambda^{q-1}w_j` term of the
    denominator (with the lambda-scaled regulariser); for p = 2 it is the :math:`\lambda w_j` of
    the block sum :math:`\sum_B(1+\lambda w_j)`. Used form: the corrected one.

    At a kink (p = 2: ties between entries in different blocks, or an input where the pooled block
    would change) this returns the Jacobian of the piece selected by the sort and the
    pooled block (an element of the Clarke generalized Jacobian). The block is split wherever the
    order constraint has a zero KKT multiplier (ties that need not be pooled), so ties where the
    operator is smooth, e.g. x = (3, 0, 0), k = 1, get the true derivative. In the magnitude mode
    sign(0) is taken as +1.

    References
    ----------
    ``topk``: Proposition 7.8 and Appendix 7.A.7.

    Examples
    --------
    >>> topk_mask([1.0, 0.5, 0.0], k=1, reg=1.0).tolist()
    [0.75, 0.25, 0.0]
    >>> jacobian([1.0, 0.5, 0.0], k=1, reg=1.0).tolist()
    [[0.5, -0.5, 0.0], [-0.5, 0.5, 0.0], [0.0, 0.0, 0.0]]
    """
    func = "theory.topk.jacobian"
    a = _axis.resolve(x, axis, func)
    mi, tl = _check_roots(max_iter, tol, func)
    kw = {"rescale": rescale, "max_iter": max_iter, "tol": tol}
    if a is not None:  # one matrix per problem, indexed by the other axes of x
        return jacobian(_axis.to_last(x, a), k, reg, p, mode, **kw)
    if _is_batch(x):  # one matrix per row: shape x.shape + (n,)
        X, rows, _ = _batch_rows(x, k, reg, p, func)
        return _stack([jacobian(r, k, reg, p, mode, **kw) for r in rows], X.shape + (X.shape[-1],))
    x, sol = _prepare(x, k, reg, p, mode, rescale, func, mi, tl)
    n = x.shape[0]
    J = np.empty((n, n))
    lo, hi, den = sol.seg
    _kernels._fill_jacobian(np.ascontiguousarray(sol.order, dtype=np.intp), sol.sgn, sol.diag, sol.rk,
                            lo, hi, den, J)
    if np.any(sol.factor != 1.0):
        f = np.ones(n)
        f[sol.order] = sol.factor
        with np.errstate(invalid="ignore", over="ignore"):  # inf/NaN: refused below
            J *= f[:, None]
    return check_finite_output(J, "the Jacobian", func=func,
                               hint="The derivative is infinite or overflows at this `x`, `reg` and `p` (p > 2 with an "
                                    "output at 0, or a tiny `reg`).")


def _vector(v, name, n, func):
    return as_float_array(v, name, func=func, shape=(n,))


def jvp(x, k, tangent, reg=1.0, p=2.0, mode="mask", *, rescale=False, max_iter=None, tol=None, axis=-1):
    r"""Jacobian-vector product :math:`J\,\dot{\mathbf x}` of :func:`topk_mask` / :func:`topk_magnitude`
    without forming J.

    With the block structure of :func:`jacobian`, in sorted and sign-adjusted coordinates
    :math:`(J\dot{\mathbf s})_i=\alpha_i\big(\dot s_i-\sum_{j\in B}\alpha_j\dot s_j/d_B\big)` for i in the
    pooled block B (:math:`d_B=\sum_B\alpha_j` plus :math:`\sum_B(\mathbf 1_k)_j` for the magnitude),
    the singleton derivative times :math:`\dot s_i` for a magnitude singleton among the k largest, and
    0 elsewhere. Cost: the forward pass (O(n) plus the sort of a window of the largest entries) and
    O(n) for the product; memory O(n).

    Parameters
    ----------
    x, k, reg, p, mode, rescale, max_iter, tol
        As :func:`jacobian`.
    tangent : array_like, shape of x
        Finite direction :math:`\dot{\mathbf x}`.
    axis : int, optional
        Keyword only. The axis of the problems, as for the value operator; ``tangent`` has the shape of
        ``x`` and is taken along the same axis, and so is the result.

    Returns
    -------
    ndarray, shape of x
        ``jacobian(x, k, reg, p, mode) @ tangent`` (to rounding; row by row for a batch).

    Raises
    ------
    TypeError, ValueError, theory.NonFiniteError
        As :func:`jacobian`; ``tangent`` of another shape or not finite (ValueError).
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    References
    ----------
    ``topk``: Proposition 7.8.

    Examples
    --------
    >>> jvp([1.0, 0.5, 0.0], 1, [1.0, 0.0, 0.0], reg=1.0).tolist()
    [0.5, -0.5, 0.0]
    """
    func = "theory.topk.jvp"
    a = _axis.resolve(x, axis, func)
    mi, tl = _check_roots(max_iter, tol, func)
    kw = {"rescale": rescale, "max_iter": max_iter, "tol": tol}
    if a is not None:
        v = _axis.vector_to_last(tangent, "tangent", x, a, func)
        return _axis.from_last(jvp(_axis.to_last(x, a), k, v, reg, p, mode, **kw), a)
    if _is_batch(x):
        X, rows, (T,) = _batch_rows(x, k, reg, p, func, (("tangent", tangent),))
        return _stack([jvp(r, k, t, reg, p, mode, **kw) for r, t in zip(rows, T)], X.shape)
    x, sol = _prepare(x, k, reg, p, mode, rescale, func, mi, tl)
    v = _vector(tangent, "tangent", x.shape[0], func)
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN: refused below
        out = _apply(sol, v, x.shape[0], transpose=False)
    return check_finite_output(out, "the product", func=func,
                               hint="The derivative is infinite or overflows at this `x`, `reg` and `p` (p > 2 with an "
                                    "output at 0, or a tiny `reg`).")


def vjp(x, k, cotangent, reg=1.0, p=2.0, mode="mask", *, rescale=False, max_iter=None, tol=None, axis=-1):
    r"""Vector-Jacobian product :math:`\bar{\mathbf y}^\top J` of :func:`topk_mask` /
    :func:`topk_magnitude` without forming J.

    J is symmetric (the Hessian of the convex :math:`f_{\varphi,R}`), so this is the product of
    :func:`jvp`; with ``rescale`` the row factors :math:`1+\lambda(p-1)|y_i|^{p-2}` multiply the
    cotangent first. Cost O(n) after the forward pass.

    Parameters
    ----------
    x, k, reg, p, mode, rescale, max_iter, tol
        As :func:`jacobian`.
    cotangent : array_like, shape of x
        Finite :math:`\bar{\mathbf y}`.
    axis : int, optional
        Keyword only. The axis of the problems, as for the value operator; ``cotangent`` has the shape of
        ``x`` and is taken along the same axis, and so is the result.

    Returns
    -------
    ndarray, shape of x
        ``cotangent @ jacobian(x, k, reg, p, mode)`` (to rounding; row by row for a batch).

    Raises
    ------
    TypeError, ValueError, theory.NonFiniteError
        As :func:`jvp` (naming ``cotangent``).
    numpy.exceptions.AxisError
        (a ValueError naming ``axis``) ``axis`` outside [-x.ndim, x.ndim - 1]. An ``axis`` that is
        not an integer (a bool, a float, None) raises TypeError.

    References
    ----------
    ``topk``: Proposition 7.8.

    Examples
    --------
    >>> vjp([3.0, -2.0, 0.5], 2, [1.0, 1.0, 1.0], reg=1.0, mode="magnitude").tolist()
    [0.5, 0.5, 0.0]
    """
    func = "theory.topk.vjp"
    a = _axis.resolve(x, axis, func)
    mi, tl = _check_roots(max_iter, tol, func)
    kw = {"rescale": rescale, "max_iter": max_iter, "tol": tol}
    if a is not None:
        v = _axis.vector_to_last(cotangent, "cotangent", x, a, func)
        return _axis.from_last(vjp(_axis.to_last(x, a), k, v, reg, p, mode, **kw), a)
    if _is_batch(x):
        X, rows, (U,) = _batch_rows(x, k, reg, p, func, (("cotangent", cotangent),))
        return _stack([vjp(r, k, u, reg, p, mode, **kw) for r, u in zip(rows, U)], X.shape)
    x, sol = _prepare(x, k, reg, p, mode, rescale, func, mi, tl)
    v = _vector(cotangent, "cotangent", x.shape[0], func)
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN: refused below
        out = _apply(sol, v, x.shape[0], transpose=True)
    return check_finite_output(out, "the product", func=func,
                               hint="The derivative is infinite or overflows at this `x`, `reg` and `p` (p > 2 with an "
                                    "output at 0, or a tiny `reg`).")
