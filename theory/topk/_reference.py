r"""Slow reference solvers of the isotonic subproblem of the relaxed top-k operators (paper key ``topk``:
thesis Chapter 7, §7.5 "Dykstra's alternating projection algorithm", Algorithm 7.7, Appendix 7.A.8).

They solve the same problem as the PAV path of :func:`theory.topk.topk_mask` /
:func:`theory.topk.topk_magnitude`, Eq. (7.5) of the chapter,

.. math::

    \mathbf v^\star = \operatorname*{arg\,min}_{v_1\ge\dots\ge v_n}\ \sum_{i=1}^n h_i(v_i),\qquad
    h_i(v) = \tfrac1q\lambda^{1-q}|s_i-v|^q + (\mathbf 1_k)_i\,\varphi(v),

(:math:`\mathbf s` the input sorted in decreasing order, of x for the mask, :math:`\varphi(v)=v`, or of
\|x\| for the magnitude, :math:`\varphi(v)=v^2/2`; :math:`R=\frac\lambda p\|\cdot\|_p^p`, q = p/(p-1)), by
two methods that share nothing with pool adjacent violators:

* :func:`dykstra` (p = 2): Dykstra's alternating projections onto the two "pair" cones
  :math:`C_1=\{v_1\ge v_2, v_3\ge v_4,\dots\}` and :math:`C_2=\{v_2\ge v_3,\dots\}` whose intersection is
  the monotone cone, started at the shifted targets (the convergent form);
* :func:`dykstra_printed`: Algorithm 7.7 exactly as printed (linear term in both half steps, started at
  :math:`\mathbf s`), kept to show that it converges to another point (claim ``topk/alg-7.7/erratum``);
* :func:`dual_coordinate_ascent` (any p > 1): block coordinate ascent on the dual of Eq. (7.5),
  Appendix 7.A.8, odd then even multipliers, each update a one-dimensional monotone root.

Each returns a :class:`ReferenceResult` with the operator output, the solution in sorted coordinates and
the iteration record. They are references for tests and checks, not fast paths.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval, plain_repr
from ..isotonic import ConvergenceWarning

__all__ = ["ReferenceResult", "dual_coordinate_ascent", "dykstra", "dykstra_printed"]

_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}


# --------------------------------------------------------------------------- kernels (private)


@njit(**_JIT)
def _pair_project(a, omega, start, out):
    """out = weighted projection of a onto {v_j >= v_{j+1} for j = start, start + 2, ...} (0-based).

    The cone is a product of independent two-dimensional half-planes: a violating pair
    (a_j < a_{j+1}) is replaced by its omega-weighted mean, every other entry is copied.
    """
    n = a.shape[0]
    for i in range(n):
        out[i] = a[i]
    j = start
    while j + 1 < n:
        if a[j] < a[j + 1]:
            m = (omega[j] * a[j] + omega[j + 1] * a[j + 1]) / (omega[j] + omega[j + 1])
            out[j] = m
            out[j + 1] = m
        j += 2


@njit(**_JIT)
def _dykstra(z, omega, shift, max_iter, tol, run_all, iterates, record):
    """Dykstra's projections onto C_1 cap C_2 in the omega-weighted norm.

    Convergent form (shift = 0): v^0 = z, p^0 = q^0 = 0, then
    y = P_1(v + p), p <- v + p - y, v' = P_2(y + q), q <- y + q - v'.
    Printed form of Algorithm 7.7 (shift = lambda w, z = s): the shift is subtracted inside both
    projections, y = P_1(v + p - shift), v' = P_2(y + q - shift), same p, q updates.
    Stops after an iteration whose ``max(|v' - v|, |y - v'|) <= tol`` (unless run_all) or at max_iter.
    Writes the iterates v^0..v^t into iterates[0..t] when record. Returns (v, t, last change).
    """
    n = z.shape[0]
    v = z.copy()
    p = np.zeros(n)
    q = np.zeros(n)
    a = np.empty(n)
    y = np.empty(n)
    vn = np.empty(n)
    if record:
        iterates[0, :] = v
    change = np.inf
    t = 0
    while t < max_iter:
        for i in range(n):
            a[i] = v[i] + p[i] - shift[i]
        _pair_project(a, omega, 0, y)
        for i in range(n):
            p[i] = v[i] + p[i] - y[i]
            a[i] = y[i] + q[i] - shift[i]
        _pair_project(a, omega, 1, vn)
        change = 0.0
        for i in range(n):
            q[i] = y[i] + q[i] - vn[i]
            change = max(change, abs(vn[i] - v[i]), abs(y[i] - vn[i]))
            v[i] = vn[i]
        t += 1
        if record:
            iterates[t, :] = v
        if not run_all and change <= tol:
            break
    return v, t, change


@njit(**_JIT)
def _signed_pow(z, e):
    """sign(z) |z|^e."""
    if z > 0.0:
        return z ** e
    if z < 0.0:
        return -((-z) ** e)
    return 0.0


@njit(**_JIT)
def _hprime(v, s, w, reg, q, mag):
    """h_i'(v) = reg^(1-q) sign(v - s)|v - s|^(q-1) + w phi'(v), phi'(v) = 1 (mask) or v (magnitude)."""
    return reg ** (1.0 - q) * _signed_pow(v - s, q - 1.0) + (w * v if mag else w)


@njit(**_JIT)
def _bisect(lo, hi, s1, w1, s2, w2, two, g, reg, q, mag):
    """Root in [lo, hi] of the increasing F(v) = h_1'(v) [+ h_2'(v)] - g, to adjacent floats."""
    if lo > hi:
        lo, hi = hi, lo
    for _ in range(2200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        f = _hprime(mid, s1, w1, reg, q, mag) - g
        if two:
            f += _hprime(mid, s2, w2, reg, q, mag)
        if f > 0.0:
            hi = mid
        elif f < 0.0:
            lo = mid
        else:
            return mid
    return 0.5 * (lo + hi)


@njit(**_JIT)
def _hstar_prime(g, s, w, reg, q, mag):
    """(h_i^*)'(g): the v with h_i'(v) = g (h_i strictly convex, so unique)."""
    p1 = 1.0 / (q - 1.0)  # p - 1
    if not mag:
        return s + reg * _signed_pow(g - w, p1)  # closed form
    v0 = s + reg * _signed_pow(g, p1)  # root without the w v term
    if w == 0.0:
        return v0
    # h'(v) - g = [A(v) - g] + w v: the first bracket vanishes at v0, the second at 0, so the root
    # of the sum lies between them
    return _bisect(min(v0, 0.0), max(v0, 0.0), s, w, 0.0, 0.0, False, g, reg, q, mag)


@njit(**_JIT)
def _dual_bca(s, w, reg, q, mag, max_iter, tol, run_all, iterates, record):
    """Block coordinate ascent on max_{alpha >= 0} -sum_i h_i^*(alpha_i - alpha_{i-1}) (alpha_0 = alpha_n = 0).

    A sweep updates alpha_1, alpha_3, ... (1-based; the C_1 block), then alpha_2, alpha_4, ... (C_2).
    Update of alpha_i (primal form, Appendix 7.A.8): the unconstrained minimisers
    a = (h_i^*)'(-alpha_{i-1}) and b = (h_{i+1}^*)'(alpha_{i+1}); if a >= b then alpha_i = 0, else the
    pair pools at gamma solving h_i'(gamma) + h_{i+1}'(gamma) = alpha_{i+1} - alpha_{i-1} (gamma in [a, b])
    and alpha_i = alpha_{i-1} + h_i'(gamma) (>= 0). Primal recovery v_i = (h_i^*)'(alpha_i - alpha_{i-1}).
    Stops after a sweep whose max |Delta v| <= tol (unless run_all) or at max_iter sweeps.
    Returns (v, alpha, sweeps, last change).
    """
    n = s.shape[0]
    alpha = np.zeros(n + 1)  # alpha[0] = alpha[n] = 0 fixed; alpha[1..n-1] free
    v = np.empty(n)
    vn = np.empty(n)
    for i in range(n):
        v[i] = _hstar_prime(0.0, s[i], w[i], reg, q, mag)
    if record:
        iterates[0, :] = v
    change = np.inf
    t = 0
    while t < max_iter:
        for parity in range(2):
            i = 1 + parity  # 1-based multiplier index: constraint v_i >= v_{i+1}
            while i <= n - 1:
                a = _hstar_prime(-alpha[i - 1], s[i - 1], w[i - 1], reg, q, mag)
                b = _hstar_prime(alpha[i + 1], s[i], w[i], reg, q, mag)
                if a >= b:
                    alpha[i] = 0.0
                else:
                    gam = _bisect(a, b, s[i - 1], w[i - 1], s[i], w[i], True,
                                  alpha[i + 1] - alpha[i - 1], reg, q, mag)
                    alpha[i] = max(alpha[i - 1] + _hprime(gam, s[i - 1], w[i - 1], reg, q, mag), 0.0)
                i += 2
        change = 0.0
        for i in range(n):
            vn[i] = _hstar_prime(alpha[i + 1] - alpha[i], s[i], w[i], reg, q, mag)
            change = max(change, abs(vn[i] - v[i]))
            v[i] = vn[i]
        t += 1
        if record:
            iterates[t, :] = v
        if not run_all and change <= tol:
            break
    return v, alpha[1:n], t, change


# --------------------------------------------------------------------------- public API


@dataclass(frozen=True, eq=False)
class ReferenceResult:
    """Output of a reference solver.

    Attributes
    ----------
    y : ndarray, shape (n,)
        The operator output :math:`\\nabla R^*(\\mathbf x-\\mathbf u)` built from ``v`` (Proposition 7.2).
    v : ndarray, shape (n,)
        The last iterate in sorted coordinates (the solution of Eq. (7.5) when converged).
    n_iter : int
        Iterations done (Dykstra: one C_1 and one C_2 projection each; coordinate ascent: one sweep over
        the odd then the even multipliers).
    converged : bool
        Whether the stopping test held (always False when ``tol=None``).
    change : float
        Max change of the last iteration (Dykstra: ``max(|v' - v|, |y - v'|)``; ascent: ``max |v' - v|``).
    iterates : ndarray, shape (n_iter + 1, n), or None
        ``v`` after each iteration (row 0: the start), when ``record=True``.
    dual : ndarray, shape (n - 1,), or None
        The multipliers alpha of the order constraints (coordinate ascent only).
    """

    y: np.ndarray
    v: np.ndarray
    n_iter: int
    converged: bool
    change: float
    iterates: np.ndarray | None = None
    dual: np.ndarray | None = None


def _check_knobs(max_iter, tol, record, func):
    max_iter = check_int(max_iter, "max_iter", func=func, minimum=1)
    if tol is not None:
        tol = check_interval(tol, "tol", 0.0, math.inf, func=func, closed="left")
    if not isinstance(record, (bool, np.bool_)):
        raise TypeError(f"`record` of {func} must be a bool; got {plain_repr(record)}.")
    return max_iter, tol, bool(record)


_RECORD_MAX_BYTES = 2**31  # 2 GiB of recorded iterates


def _record_buffer(max_iter, n, record, func):
    """The (max_iter + 1, n) buffer of the recorded iterates (a dummy without ``record``); refused
    naming ``max_iter`` when it would exceed 2 GiB."""
    if not record:
        return np.empty((1, 1))
    if (max_iter + 1) * n * 8 > _RECORD_MAX_BYTES:
        raise ValueError(f"`max_iter` of {func}: record=True keeps every iterate, (max_iter + 1) x n = "
                         f"{max_iter + 1} x {n} floats, over 2 GiB; got max_iter = {max_iter}. Lower "
                         f"`max_iter` or pass record=False.")
    return np.empty((max_iter + 1, n))


def _validate(x, k, reg, func):
    x = as_float_array(x, "x", func=func, ndim=1, min_size=2)
    k = check_int(k, "k", func=func, minimum=1, maximum=x.shape[0] - 1)
    reg = check_interval(reg, "reg", 0.0, math.inf, func=func, closed="neither")
    return x, k, reg


def _sorted(x, k, mode):
    """(order, s, w): sigma sorting x (mask) or |x| (magnitude) decreasingly, s = sorted values, w = 1_k."""
    a = x if mode == "mask" else np.abs(x)
    order = np.argsort(-a, kind="stable")
    w = np.zeros(x.shape[0])
    w[:k] = 1.0
    return order, np.ascontiguousarray(a[order]), w


def _output(x, order, v, reg, q, mode, func):
    """y = grad R^*(x - u), u = v_{sigma^{-1}} (mask) or sign(x) o v_{sigma^{-1}} (magnitude)."""
    u = np.empty_like(v)
    u[order] = v
    if mode == "magnitude":
        u = np.where(x < 0.0, -u, u)
    z = x - u
    with np.errstate(over="ignore", under="ignore"):  # (|z|/reg)^(q-1): no power of reg alone to overflow
        y = np.sign(z) * (np.abs(z) / reg) ** (q - 1.0)
    return check_finite_output(y, "the output", func=func, hint="Increase `reg` or rescale `x`.")


def _scale(s):
    return max(1.0, float(np.max(np.abs(s))))


def _finish(x, order, v, n_iter, change, tol, iterates, reg, q, mode, func, dual=None):
    check_finite_output(v, "the iterate", func=func, hint="Increase `reg` or rescale `x`.")
    converged = tol is not None and change <= tol
    if tol is not None and not converged:
        warnings.warn(f"{func}: stopped at max_iter = {n_iter} with last change {change:.3g} > tol = {tol:.3g}; "
                      f"increase `max_iter`.", ConvergenceWarning, stacklevel=3)
    if mode == "magnitude":
        v = np.maximum(v, 0.0)  # the non-negativity of Proposition 7.6 (a no-op at the solution)
    y = _output(x, order, v, reg, q, mode, func)
    return ReferenceResult(y=y, v=v, n_iter=int(n_iter), converged=bool(converged), change=float(change),
                           iterates=iterates, dual=dual)


def dykstra(x, k, reg=1.0, mode="mask", *, max_iter=10_000, tol=4e-15, record=False):
    r"""Relaxed top-k (p = 2) by Dykstra's alternating projections, the convergent form.

    For :math:`R=\frac\lambda2\|\cdot\|^2`, Eq. (7.5) is a weighted projection onto the monotone cone
    :math:`C_1\cap C_2`: mask, :math:`\mathbf v^\star=\Pi_{C_1\cap C_2}(\mathbf s-\lambda\mathbf 1_k)`;
    magnitude, the :math:`\omega`-weighted projection of :math:`s_i/\omega_i`, :math:`\omega_i=1+\lambda(\mathbf 1_k)_i`
    (complete the square in :math:`h_i`). Dykstra's algorithm from :math:`\mathbf v^0` = the targets,
    :math:`\mathbf p^0=\mathbf q^0=0`:

    .. math::

        \mathbf y^t=\Pi_{C_1}(\mathbf v^t+\mathbf p^t),\ \mathbf p^{t+1}=\mathbf v^t+\mathbf p^t-\mathbf y^t,\
        \mathbf v^{t+1}=\Pi_{C_2}(\mathbf y^t+\mathbf q^t),\ \mathbf q^{t+1}=\mathbf y^t+\mathbf q^t-\mathbf v^{t+1},

    where each projection replaces a violating pair by its (weighted) mean. Converges to
    :math:`\mathbf v^\star` (Boyle and Dykstra 1986); linear time per iteration.

    Parameters
    ----------
    x : array_like, shape (n,)
        Finite reals, n >= 2.
    k : int
        1 <= k <= n - 1.
    reg : float
        :math:`\lambda > 0`.
    mode : {"mask", "magnitude"}
        :func:`theory.topk.topk_mask` or :func:`theory.topk.topk_magnitude` (thesis operator).
    max_iter : int >= 1, keyword-only
        Cap on the iterations.
    tol : float >= 0 or None, keyword-only
        Stop when an iteration changes no entry by more than ``tol * max(1, max|s|)``; ``None`` runs
        exactly ``max_iter`` iterations (no test, no warning).
    record : bool, keyword-only
        Keep every iterate (``result.iterates``).

    Returns
    -------
    ReferenceResult

    Raises
    ------
    TypeError, ValueError
        As :func:`theory.topk.topk_mask`; ``mode`` not one of the names; ``max_iter`` < 1; ``tol`` < 0.

    Warns
    -----
    ConvergenceWarning
        ``max_iter`` reached before ``tol``. Dykstra is slow where the pooled blocks are long
        (large ``reg`` relative to the gaps of x): measured in claim ``topk/alg-7.7/rate``.

    References
    ----------
    ``topk``: §7.5 (Dykstra's alternating projection algorithm), Algorithm 7.7 (corrected).

    Examples
    --------
    >>> r = dykstra([3.0, 1.0, 2.0, 0.0], k=2, reg=3.0)
    >>> r.y.round(12).tolist(), r.converged
    ([1.0, 0.333333333333, 0.666666666667, 0.0], True)
    """
    func = "theory.topk.dykstra"
    mode = check_choice(mode, "mode", ("mask", "magnitude"), func=func)
    x, k, reg = _validate(x, k, reg, func)
    max_iter, tol, record = _check_knobs(max_iter, tol, record, func)
    order, s, w = _sorted(x, k, mode)
    if mode == "mask":
        z, omega = s - reg * w, np.ones(s.shape[0])
    else:
        omega = 1.0 + reg * w
        z = s / omega
    tol_abs = None if tol is None else tol * _scale(s)
    iterates = _record_buffer(max_iter, s.shape[0], record, func)
    v, t, change = _dykstra(z, omega, np.zeros(s.shape[0]), max_iter, 0.0 if tol is None else tol_abs,
                            tol is None, iterates, record)
    return _finish(x, order, v, t, change, tol_abs, iterates[: t + 1] if record else None, reg, 2.0, mode, func)


def dykstra_printed(x, k, reg=1.0, *, max_iter=10_000, tol=4e-15, record=False):
    r"""Algorithm 7.7 of the thesis exactly as printed (mask, p = 2), for the erratum record.

    From :math:`\mathbf v^0=\mathbf s` (not the shifted targets), :math:`\mathbf p^0=\mathbf q^0=0`:
    :math:`\mathbf y^t=\arg\min_{\mathbf y\in C_1}\frac12\|\mathbf v^t+\mathbf p^t-\mathbf y\|^2+\lambda\langle\mathbf y,\mathbf w\rangle
    =\Pi_{C_1}(\mathbf v^t+\mathbf p^t-\lambda\mathbf w)`, :math:`\mathbf p^{t+1}=\mathbf v^t+\mathbf p^t-\mathbf y^t`,
    :math:`\mathbf v^{t+1}=\Pi_{C_2}(\mathbf y^t+\mathbf q^t-\lambda\mathbf w)`,
    :math:`\mathbf q^{t+1}=\mathbf y^t+\mathbf q^t-\mathbf v^{t+1}` (:math:`\mathbf w=\mathbf 1_k`; the printed
    statement has :math:`\lambda=1`, the factor :math:`\lambda` is the scaling of every :math:`h_i` by
    :math:`\lambda`, which leaves the problem unchanged).

    This is Dykstra's algorithm for the proximal operators of :math:`\delta_{C_1}+\lambda\langle\cdot,\mathbf w\rangle`
    and :math:`\delta_{C_2}+\lambda\langle\cdot,\mathbf w\rangle`, so it converges to the prox of their sum at
    :math:`\mathbf s`, i.e. to :math:`\Pi_{C_1\cap C_2}(\mathbf s-2\lambda\mathbf w)`: the linear term is
    counted twice, and the output is the relaxed mask for a doubled weight, not
    :math:`\mathbf v^\star` (claim ``topk/alg-7.7/erratum``).

    Parameters, Returns, Raises, Warns
        As :func:`dykstra` (mask only, no ``mode``). ``result.y`` is :math:`(\mathbf x-\mathbf u)/\lambda`
        built from the printed iterate.

    References
    ----------
    ``topk``: Algorithm 7.7.

    Examples
    --------
    >>> dykstra_printed([3.0, 1.0, 2.0, 0.0], k=2, reg=3.0).y.round(12).tolist()
    [1.5, 0.833333333333, 1.166666666667, 0.5]
    """
    func = "theory.topk.dykstra_printed"
    x, k, reg = _validate(x, k, reg, func)
    max_iter, tol, record = _check_knobs(max_iter, tol, record, func)
    order, s, w = _sorted(x, k, "mask")
    tol_abs = None if tol is None else tol * _scale(s)
    iterates = _record_buffer(max_iter, s.shape[0], record, func)
    v, t, change = _dykstra(s.copy(), np.ones(s.shape[0]), reg * w, max_iter, 0.0 if tol is None else tol_abs,
                            tol is None, iterates, record)
    return _finish(x, order, v, t, change, tol_abs, iterates[: t + 1] if record else None, reg, 2.0, "mask", func)


def _check_p(p, func):
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"`p` of {func} must be a real number; got {plain_repr(p)}.")
    return check_interval(p, "p", 1.0, math.inf, func=func, closed="neither")


def dual_coordinate_ascent(x, k, reg=1.0, p=2.0, mode="mask", *, max_iter=100_000, tol=4e-15, record=False):
    r"""Relaxed top-k for any p > 1 by block coordinate ascent on the dual of Eq. (7.5) (Appendix 7.A.8).

    With multipliers :math:`\alpha_1,\dots,\alpha_{n-1}\ge0` of the constraints :math:`v_i\ge v_{i+1}`
    (:math:`\alpha_0=\alpha_n=0`),

    .. math::

        \min_{v_1\ge\dots\ge v_n}\sum_i h_i(v_i)=\max_{\boldsymbol\alpha\ge0}-\sum_{i=1}^n h_i^*(\alpha_i-\alpha_{i-1}),
        \qquad v_i^\star=(h_i^*)'(\alpha_i^\star-\alpha_{i-1}^\star).

    One sweep maximises over :math:`\alpha_1,\alpha_3,\dots` (independent given the others; the
    :math:`C_1` block), then over :math:`\alpha_2,\alpha_4,\dots` (:math:`C_2`). Each coordinate maximiser is
    the positive part of the root of the increasing
    :math:`(h_i^*)'(\alpha-\alpha_{i-1})-(h_{i+1}^*)'(\alpha_{i+1}-\alpha)`, computed in primal form: the
    pair :math:`(v_i, v_{i+1})` either keeps its unconstrained minimisers or pools at the root
    :math:`\gamma` of :math:`h_i'+h_{i+1}'=\alpha_{i+1}-\alpha_{i-1}`, found by bisection to adjacent floats
    inside the bracket formed by the two unconstrained minimisers. Here
    :math:`h_i'(v)=\lambda^{1-q}\,\mathrm{sign}(v-s_i)|v-s_i|^{q-1}+(\mathbf 1_k)_i\varphi'(v)`; for the mask
    :math:`(h_i^*)'(g)=s_i+\lambda\,\mathrm{sign}(g-w_i)|g-w_i|^{p-1}` in closed form, for the magnitude a
    bisection. Converges because every :math:`h_i` is strictly convex (Tseng 2001); in the Euclidean case
    it is Dykstra's algorithm in the dual (Tibshirani 2017).

    Parameters
    ----------
    x, k, reg, mode
        As :func:`dykstra`.
    p : float
        Exponent of :math:`R=\frac\lambda p\|\cdot\|_p^p`, in (1, inf).
    max_iter : int >= 1, keyword-only
        Cap on the sweeps.
    tol : float >= 0 or None, keyword-only
        Stop after a sweep changing no entry of ``v`` by more than ``tol * max(1, max|s|)``; ``None``
        runs exactly ``max_iter`` sweeps.
    record : bool, keyword-only
        Keep ``v`` after every sweep.

    Returns
    -------
    ReferenceResult
        With ``dual`` = the multipliers :math:`\alpha_1..\alpha_{n-1}`.

    Raises
    ------
    TypeError, ValueError
        As :func:`dykstra`; ``p`` not a real number in (1, inf).

    Warns
    -----
    ConvergenceWarning
        ``max_iter`` reached before ``tol``.

    References
    ----------
    ``topk``: §7.5 (block coordinate ascent for p != 2), Appendix 7.A.8.

    Examples
    --------
    >>> r = dual_coordinate_ascent([3.0, 1.0, 2.0, 0.0], k=2, reg=3.0)
    >>> r.y.round(12).tolist(), r.dual.round(12).tolist()
    ([1.0, 0.333333333333, 0.666666666667, 0.0], [0.0, 0.333333333333, 0.0])
    """
    func = "theory.topk.dual_coordinate_ascent"
    mode = check_choice(mode, "mode", ("mask", "magnitude"), func=func)
    x, k, reg = _validate(x, k, reg, func)
    p = _check_p(p, func)
    max_iter, tol, record = _check_knobs(max_iter, tol, record, func)
    q = p / (p - 1.0)
    order, s, w = _sorted(x, k, mode)
    tol_abs = None if tol is None else tol * _scale(s)
    iterates = _record_buffer(max_iter, s.shape[0], record, func)
    v, alpha, t, change = _dual_bca(s, w, reg, q, mode == "magnitude", max_iter, 0.0 if tol is None else tol_abs,
                                    tol is None, iterates, record)
    return _finish(x, order, v, t, change, tol_abs, iterates[: t + 1] if record else None, reg, q, mode, func,
                   dual=alpha.copy())
