"""The pool-adjacent-violators core shared by :mod:`theory.isotonic` and :mod:`theory.topk`: Numba kernels of
weighted isotonic regression (paper key ``topk``, Section 7.5, Eq. (7.5) with R = 1/2 ||.||^2 and the p-norm
regularised pooling of Eqs. (7.5)-(7.6); Algorithm 1 of its Appendix 7.B.2, pool adjacent violators).

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults, no
allocation. The public, validated interface is :mod:`theory.isotonic` (``theory.isotonic._api`` owns every
convention: decreasing fits by reversal, SciPy's block convention, rescaling after an overflow);
:mod:`theory.topk` calls the unit-weight pass and the block root finder of its soft operators from here.

Status codes returned by :func:`_pav`:

====  =================  ===========================================================
code  name               meaning
====  =================  ===========================================================
0     OK                 x holds the solution, r[:nblocks + 1] the block starts and n
1     NONFINITE          a pooled weighted sum overflowed: some block value is inf/NaN
3     BAD_WEIGHT         some w_i is not > 0 (NaN included); x and r are meaningless
4     WEIGHT_SUM         the running total of the weights is not finite; x and r meaningless
====  =================  ===========================================================
"""

import math

import numpy as np
from numba import njit

from . import _roots

OK, NONFINITE = 0, 1
BAD_WEIGHT, WEIGHT_SUM = 3, 4  # _pav only: validation of the weights fused into the pass

# The house flags (theory.resnet._kernels) minus "contract": with it LLVM may fuse S + w * y into one
# fused multiply-add (one rounding instead of two), and the pooled sums would then differ in the last
# bit from SciPy's C++ core, built for baseline x86-64 without FMA; a last-bit difference can split or
# join a tie. Without it the running sums below are SciPy's bit for bit, as tests/test_isotonic.py
# asserts. error_model="numpy": a division never raises (an overflow gives inf, reported as a status).
_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}


@njit(**_JIT)
def _expand(x, r, b):
    """Expand the block stack x[0..b] (block k spans r[k]:r[k+1]) into the fit, in place; return
    whether some block value is NaN or inf.

    From the last block down: block k overwrites x[r[k]:r[k+1]], and r[k] >= k, so stack entries not
    yet read are never overwritten.
    """
    nonfinite = False
    for k in range(b + 1):
        v = x[k]
        if not (v - v == 0.0):  # inf or NaN
            nonfinite = True
    for k in range(b, -1, -1):
        v = x[k]
        for j in range(r[k + 1] - 1, r[k] - 1, -1):
            x[j] = v
    return nonfinite


def _pav(y, w, unit, x, wb, r):
    """Increasing weighted isotonic regression, x = argmin_{x_1 <= ... <= x_n} sum_i w_i (x_i - y_i)^2.

    Parameters (shapes with n = y.size >= 1)
    ----------------------------------------
    y : (n,) float64, read only; not validated (a NaN or inf makes some block value non-finite, which
        is reported as NONFINITE).
    w : (n,) float64 weights, read only; ignored (any size) when ``unit`` is True, which means w_i = 1
        for every i. Validated on the fly by :func:`_pav_w`.
    unit : bool. Selects the kernel: :func:`_pav_unit` (True) or :func:`_pav_w` (False), compiled
        separately so that neither tests ``unit`` inside its loop.
    x : (n,) float64 output, the fitted values. Also used as the stack of block values.
    wb : (n,) float64 scratch, the stack of block weights W_B = sum_{i in B} w_i.
    r : (n + 1,) intp output, block starts: block k is x[r[k]:r[k + 1]], r[0] = 0, r[nblocks] = n.

    Returns
    -------
    (nblocks, status) : number of blocks and a status code: with weights, BAD_WEIGHT if some w_i is
    not > 0 (NaN included), else WEIGHT_SUM if sum(w) is not finite; else NONFINITE if some block
    value is inf or NaN, else OK. Only with OK are x and r the fit.

    Method: pool adjacent violators with a stack of blocks, in the single-pass form of Busing (2022,
    J. Stat. Softw. 102(1), Algorithm 1): a new element that violates the order with the top block
    is pooled with it; the pooled block then absorbs the following elements while it is >= them
    (look-ahead) and the stack's blocks while they are >= it (look-back). A block's value is the
    weighted mean gamma_B = S_B / W_B, the p = 2 closed form of the pooling subproblem Eq. (7.6).
    Every element is pushed once and popped at most once: O(n). The top block stays in registers
    (value, weight) and is written to the stack (x[:b], wb[:b]) only when a new block is pushed on it.

    Ties: blocks are pooled on >= (not >), so adjacent blocks never share a value: the fit's blocks
    are its maximal constant runs, SciPy's convention. The arithmetic (S restarted from the stored
    mean times weight when a violation is found, then accumulated term by term) follows Busing's
    Algorithm 1 and SciPy's ``pava``, so that x and r agree with ``scipy.optimize.isotonic_regression``
    bit for bit (with w_i = 1 the products w_i y_i are y_i exactly, so :func:`_pav_unit` omits them).
    """
    if unit:
        return _pav_unit(y, x, wb, r)
    return _pav_w(y, w, x, wb, r)


@njit(**_JIT)
def _pav_unit(y, x, wb, r):
    """:func:`_pav` with w_i = 1: the same operations, with 1 * y_i = y_i written y_i."""
    n = y.size
    r[0] = 0
    r[1] = 1
    b = 0  # the top block (index b) lives in x_prev, w_prev; x[:b], wb[:b] hold the blocks below it
    x_prev = y[0]
    w_prev = 1.0
    i = 1
    while i < n:
        xb = y[i]
        if x_prev >= xb:  # violation (or tie) with the top block: pool
            sb = w_prev * x_prev + xb
            wcur = 1.0 + w_prev
            xb = sb / wcur
            while i < n - 1 and xb >= y[i + 1]:  # look-ahead: absorb following elements
                i += 1
                sb += y[i]
                wcur += 1.0
                xb = sb / wcur
            while b > 0 and x[b - 1] >= xb:  # look-back: pop blocks of the stack
                b -= 1
                sb += wb[b] * x[b]
                wcur += wb[b]
                xb = sb / wcur
        else:  # push: the old top goes to the stack
            x[b] = x_prev
            wb[b] = w_prev
            b += 1
            wcur = 1.0
        x_prev = xb
        w_prev = wcur
        r[b + 1] = i + 1
        i += 1
    x[b] = x_prev
    wb[b] = w_prev
    return b + 1, NONFINITE if _expand(x, r, b) else OK


@njit(**_JIT)
def _pav_w(y, w, x, wb, r):
    """:func:`_pav` with weights, validated on the fly: every w_i is read once, in increasing i, so
    the running total accumulates in the order of :func:`_weights_status`; status BAD_WEIGHT or
    WEIGHT_SUM as documented there (checked before the fit's own status)."""
    n = y.size
    r[0] = 0
    r[1] = 1
    b = 0  # the top block (index b) lives in x_prev, w_prev; x[:b], wb[:b] hold the blocks below it
    x_prev = y[0]
    w_prev = w[0]
    tot = w_prev
    bad = not (w_prev > 0.0)
    i = 1
    while i < n:
        xb = y[i]
        wcur = w[i]
        tot += wcur
        bad |= not (wcur > 0.0)
        if x_prev >= xb:  # violation (or tie) with the top block: pool
            sb = w_prev * x_prev + wcur * xb
            wcur += w_prev
            xb = sb / wcur
            while i < n - 1 and xb >= y[i + 1]:  # look-ahead: absorb following elements
                i += 1
                wi = w[i]
                tot += wi
                bad |= not (wi > 0.0)
                sb += wi * y[i]
                wcur += wi
                xb = sb / wcur
            while b > 0 and x[b - 1] >= xb:  # look-back: pop blocks of the stack
                b -= 1
                sb += wb[b] * x[b]
                wcur += wb[b]
                xb = sb / wcur
        else:  # push: the old top goes to the stack
            x[b] = x_prev
            wb[b] = w_prev
            b += 1
        x_prev = xb
        w_prev = wcur
        r[b + 1] = i + 1
        i += 1
    x[b] = x_prev
    wb[b] = w_prev
    if bad:
        return b + 1, BAD_WEIGHT
    if not (tot - tot == 0.0):
        return b + 1, WEIGHT_SUM
    return b + 1, NONFINITE if _expand(x, r, b) else OK


@njit(**_JIT)
def _weights_status(w):
    """One pass over the weights: 0 if every w_i > 0 and sum(w) is finite (NaN and inf included), 1 if
    some w_i <= 0 or is NaN, 2 if the sum overflows."""
    s = 0.0
    bad = False
    for i in range(w.size):
        v = w[i]
        bad |= not (v > 0.0)
        s += v
    if bad:
        return 1
    if not (s - s == 0.0):
        return 2
    return 0


# ---------------------------------------------------------------------------------------------------
# p-norm regularised pooling (topk Section 7.5, Eqs. (7.5)-(7.6))
#
# Problem solved by the two kernels below (increasing fit; the API reverses for decreasing ones):
#
#     x = argmin_{x_1 <= ... <= x_n} sum_i [ (w_i / q) |x_i - y_i|^q + c_i x_i ],   q = p / (p - 1).
#
# The pooled value gamma_B of a block B (Eq. (7.6)) is the unique root of the strictly increasing
#     g_B(gamma) = sum_{i in B} [ w_i sign(gamma - y_i) |gamma - y_i|^(q-1) + c_i ].
# Status codes: OK, NONFINITE as above; NOT_CONVERGED (2): a root finder hit ``max_iter``.
# ---------------------------------------------------------------------------------------------------

NOT_CONVERGED = 2


@njit(**_JIT)
def _cubic_root(P, Q):
    """Unique real root of z^3 + P z + Q = 0 for P >= 0, without cancellation.

    D = Q^2/4 + P^3/27, A = (sqrt(D) + |Q|/2)^(1/3), z = -Q / (A^2 + P/3 + (P/(3A))^2): the textbook
    Cardano form A - P/(3A) subtracts two nearly equal numbers when P is large; this one has only
    positive terms in the denominator. One Newton step polishes the result.
    """
    if Q == 0.0:
        return 0.0
    aq = abs(Q)
    D = 0.25 * Q * Q + P * P * P / 27.0
    A = (math.sqrt(D) + 0.5 * aq) ** (1.0 / 3.0)
    t = P / (3.0 * A)
    z = -Q / (A * A + P / 3.0 + t * t)
    f = (z * z + P) * z + Q
    fp = 3.0 * z * z + P
    if fp > 0.0:
        z -= f / fp
    return z


@njit(**_JIT)
def _pav_q4(y, w, c, x, stats, r):
    """Increasing fit of the p-norm problem above for p = 4/3 (q = 4), O(n) pool adjacent violators.

    Shapes (n = y.size >= 1): y, w (> 0), c : (n,) float64 read only; x : (n,) float64 output (also
    the stack of block values); stats : (n, 5) float64 scratch, per stack block (W, mu, M2, M3, C) =
    sum w_i, weighted mean of y, centred weighted moments sum w_i d_i^2, sum w_i d_i^3 (d_i = y_i - mu),
    sum c_i; r : (n + 1,) intp output block starts. Returns (nblocks, status).

    Block value: with gamma = mu + z, g_B = W z^3 + 3 M2 z - M3 + C, so z solves z^3 + P z + Q = 0 with
    P = 3 M2 / W >= 0, Q = (C - M3) / W (with m -> W, lambda^3 W -> C). Moments are merged
    exactly (Chan et al. pairwise update with weights): delta = mu_B - mu_A, W = W_A + W_B,
    mu = mu_A + delta W_B / W, M2 = M2_A + M2_B + delta^2 W_A W_B / W,
    M3 = M3_A + M3_B + delta^3 W_A W_B (W_A - W_B) / W^2 + 3 delta (W_A M2_B - W_B M2_A) / W.
    Pooling on >= (adjacent blocks never share a value: SciPy's block convention).
    """
    n = y.size
    b = -1
    status = OK
    for i in range(n):
        b += 1
        stats[b, 0] = w[i]
        stats[b, 1] = y[i]
        stats[b, 2] = 0.0
        stats[b, 3] = 0.0
        stats[b, 4] = c[i]
        r[b] = i
        x[b] = y[i] + _cubic_root(0.0, c[i] / w[i])
        while b > 0 and x[b - 1] >= x[b]:
            WA = stats[b - 1, 0]
            muA = stats[b - 1, 1]
            M2A = stats[b - 1, 2]
            M3A = stats[b - 1, 3]
            WB = stats[b, 0]
            muB = stats[b, 1]
            M2B = stats[b, 2]
            M3B = stats[b, 3]
            W = WA + WB
            delta = muB - muA
            fa = WA / W
            fb = WB / W
            mu = muA + delta * fb
            M2 = M2A + M2B + delta * delta * WA * fb
            M3 = M3A + M3B + delta * delta * delta * WA * fb * (fa - fb) + 3.0 * delta * (fa * M2B - fb * M2A)
            C = stats[b - 1, 4] + stats[b, 4]
            b -= 1
            stats[b, 0] = W
            stats[b, 1] = mu
            stats[b, 2] = M2
            stats[b, 3] = M3
            stats[b, 4] = C
            x[b] = mu + _cubic_root(3.0 * M2 / W, (C - M3) / W)
    r[b + 1] = n
    if _expand(x, r, b):
        status = NONFINITE
    return b + 1, status


@njit(**_JIT)
def _pw(a, qm1):
    """a^qm1 for a >= 0: a * a for qm1 = 2 (p = 3/2) and sqrt(a) for qm1 = 1/2 (p = 3), both correctly
    rounded and several times faster than the general power; a^qm1 otherwise."""
    if qm1 == 2.0:
        return a * a
    if qm1 == 0.5:
        return math.sqrt(a)
    return a ** qm1


@njit(**_JIT)
def _g_block(y, w, c, lo, hi, gamma, qm1):
    """g_B(gamma) = sum_{i=lo}^{hi-1} [w_i sign(gamma - y_i)|gamma - y_i|^qm1 + c_i] and its derivative
    qm1 sum w_i |gamma - y_i|^(qm1 - 1) (inf where gamma = y_i and qm1 < 1)."""
    g = 0.0
    dg = 0.0
    for i in range(lo, hi):
        d = gamma - y[i]
        a = abs(d)
        t = w[i] * _pw(a, qm1)
        g += (t if d >= 0.0 else -t) + c[i]
        if a > 0.0:
            dg += qm1 * t / a
        elif qm1 < 1.0:
            dg = math.inf
    return g, dg


@njit(**_JIT)
def _block_root_bracket(y, w, c, lo, hi, qm1, max_iter, tol):
    """Root of the increasing g_B on block y[lo:hi] by the safeguarded Newton-bisection of
    :func:`theory._roots._step` (bisection (a + b)/2).

    Bracket: g_B <= 0 at y_min - max_i(c_i/w_i)_+^(1/qm1) and >= 0 at y_max + max_i(-c_i/w_i)_+^(1/qm1)
    (each term there is at most, resp. at least, zero). Each iteration tries a Newton step from the
    current point and bisects instead when the step leaves the open bracket, or when the bracket did
    not halve over the last two iterations; the bracket is updated by the sign of g. Stops when g = 0,
    the bracket width is <= tol * max(|lo|, |hi|, y_max - y_min) (or spans adjacent floats), or the
    Newton step is <= tol/2 times that scale and g changes sign within that distance of the Newton
    point (checked by two evaluations: near a target the derivative blows up for p > 2 and a tiny
    step alone proves nothing). At most ``max_iter`` iterations. Returns (gamma, left, right,
    iterations, converged): the root and the last bracket [left, right] around it.
    """
    ymin = y[lo]
    ymax = y[lo]
    up = 0.0
    dn = 0.0
    for i in range(lo, hi):
        ymin = min(ymin, y[i])
        ymax = max(ymax, y[i])
        up = max(up, c[i] / w[i])
        dn = max(dn, -c[i] / w[i])
    a = ymin - up ** (1.0 / qm1)
    bnd = ymax + dn ** (1.0 / qm1)
    g, dg = _g_block(y, w, c, lo, hi, a, qm1)
    if g >= 0.0:
        return a, a, a, 0, True
    g, dg = _g_block(y, w, c, lo, hi, bnd, qm1)
    if g <= 0.0:
        return bnd, bnd, bnd, 0, True
    xk = 0.5 * (a + bnd)
    width_old = bnd - a
    spread = ymax - ymin  # a root near 0 is resolved relative to the data's spread, not to |root|
    it = 1
    while True:
        g, dg = _g_block(y, w, c, lo, hi, xk, qm1)
        xk, a, bnd, it, width_old, code = _roots._step(xk, a, bnd, it, width_old, g, dg, max_iter, tol, spread,
                                                       _roots.MID_HALF, _roots.STEP_TOL, 0.0, 0.0)
        if code == _roots.CONTINUE:
            continue
        if code == _roots.ROOT:
            return xk, xk, xk, it, True
        if code == _roots.BRACKET:
            return xk, a, bnd, it, True
        if code == _roots.STEP:
            # A Newton step below tol is not proof of convergence: next to a target y_i the
            # derivative |gamma - y_i|^(qm1 - 1) blows up for qm1 < 1 (p > 2) and the step is tiny
            # however far the root is. Accept xn only when g changes sign within tol/2 * scale of
            # it; otherwise shrink the bracket to the side the root is on and go on.
            xn = xk
            delta = 0.5 * tol * max(abs(a), abs(bnd), spread)
            left = max(a, min(xn - delta, np.nextafter(xn, -math.inf)))
            right = min(bnd, max(xn + delta, np.nextafter(xn, math.inf)))
            gl, _ = _g_block(y, w, c, lo, hi, left, qm1)
            gr, _ = _g_block(y, w, c, lo, hi, right, qm1)
            if gl <= 0.0 and gr >= 0.0:
                return xn, left, right, it, True
            if gl > 0.0:
                bnd = left
            else:
                a = right
            xk = 0.5 * (a + bnd)
            it, code = _roots._resume(it, max_iter)
            if code == _roots.CONTINUE:
                continue
        return 0.5 * (a + bnd), a, bnd, max_iter, False


@njit(**_JIT)
def _block_root(y, w, c, lo, hi, qm1, max_iter, tol):
    """Root of the increasing g_B on block y[lo:hi] by :func:`_block_root_bracket` (which see);
    returns (gamma, iterations, converged)."""
    gam, _, _, its, ok = _block_root_bracket(y, w, c, lo, hi, qm1, max_iter, tol)
    return gam, its, ok


@njit(**_JIT)
def _pav_stack_budget(y, w, c, qm1, max_iter, tol, x, r, info, budget):
    """:func:`_pav_general_stack` that gives up once its root-solve work (sum over merges of the block
    size times the root finder's evaluations) exceeds ``budget`` (< 0: never). Returns (nblocks,
    status, finished); x, r, info are meaningful only when finished."""
    n = y.size
    b = -1
    status = OK
    total = 0
    worst = 0
    work = 0
    for i in range(n):
        b += 1
        r[b] = i
        ci = c[i]
        s = (abs(ci) / w[i]) ** (1.0 / qm1)
        x[b] = y[i] - s if ci >= 0.0 else y[i] + s
        while b > 0 and x[b - 1] >= x[b]:
            b -= 1
            gam, its, ok = _block_root(y, w, c, r[b], i + 1, qm1, max_iter, tol)
            total += its
            worst = max(worst, its)
            work += (its + 3) * (i + 1 - r[b])
            if budget >= 0 and work > budget:
                return 0, OK, False
            if not ok:
                status = NOT_CONVERGED
            x[b] = gam
    r[b + 1] = n
    info[0] = total
    info[1] = worst
    if _expand(x, r, b):
        status = NONFINITE
    return b + 1, status, True


@njit(**_JIT)
def _pav_general_stack(y, w, c, qm1, max_iter, tol, x, r, info):
    """Reference for :func:`_pav_general` (same arguments and result up to round-off): plain pool
    adjacent violators with each pooled value re-solved over the whole block by :func:`_block_root`,
    O(B^2) root-solve work for a block of B entries that grows one element at a time (linear when
    the blocks stay small).

    Shapes (n = y.size >= 1): y, w (> 0), c : (n,) float64 read only; x : (n,) float64 output (stack of
    block values, then the fit); r : (n + 1,) intp output block starts; info : (2,) float64 output,
    (total root-finder iterations, max iterations of one root solve). Singletons use the closed form
    gamma = y_i - sign(c_i) (|c_i|/w_i)^(1/qm1). Pooling on >=. Returns (nblocks, status).
    """
    nb, status, _ = _pav_stack_budget(y, w, c, qm1, max_iter, tol, x, r, info, -1)
    return nb, status


@njit(**_JIT)
def _cut(y, w, c, lo, hi, theta, qm1):
    """Largest maximiser j in [lo, hi] of D_j = sum_{i=lo}^{j-1} f_i'(theta), f_i'(v) = w_i sign(v - y_i)
    |v - y_i|^qm1 + c_i (D_lo = 0): the isotonic fit of the segment is <= theta on [lo, j) and > theta
    on [j, hi). Returns -1 if a partial sum overflows (the cut is then unknown)."""
    d = 0.0
    best = 0.0
    jb = lo
    for i in range(lo, hi):
        e = theta - y[i]
        t = w[i] * _pw(abs(e), qm1)
        d += (t if e >= 0.0 else -t) + c[i]
        if d >= best:
            best = d
            jb = i + 1
    if not (d - d == 0.0):
        return -1
    return jb


_STACK_WORK = 64  # per element: the stack form's root-solve work allowed before the splitting form


@njit(**_JIT)
def _pav_general(y, w, c, qm1, max_iter, tol, x, r, info):
    """Increasing fit of the p-norm problem above for any q = 1 + qm1 > 1 (arguments and result as
    :func:`_pav_general_stack`): the stack form while its root-solve work stays below 64 n element
    evaluations (linear: small blocks, e.g. pairs), else the splitting form :func:`_pav_general_split`
    from the start (O(n log n) for balanced splits, where the stack form is O(B^2) in a block of B).
    Both give the same blocks and bits (tests/test_isotonic_pnorm.py)."""
    nb, status, done = _pav_stack_budget(y, w, c, qm1, max_iter, tol, x, r, info, _STACK_WORK * y.size)
    if done:
        return nb, status
    return _pav_general_split(y, w, c, qm1, max_iter, tol, x, r, info)


@njit(**_JIT)
def _pav_general_split(y, w, c, qm1, max_iter, tol, x, r, info):
    """Increasing fit of the p-norm problem above for any q = 1 + qm1 > 1, by recursive splitting at
    the segment's own pooled value (threshold decomposition), then a pool-adjacent-violators pass over
    the pieces that merges what round-off split.

    Shapes (n = y.size >= 1): y, w (> 0), c : (n,) float64 read only; x : (n,) float64 output (stack of
    block values, then the fit); r : (n + 1,) intp output block starts; info : (2,) float64 output,
    (total root-finder iterations, max iterations of one root solve). Returns (nblocks, status).

    Method. With f_i(v) = (w_i/q)|v - y_i|^q + c_i v (strictly convex) and D_j(theta) = sum_{i<j}
    f_i'(theta) over a segment [lo, hi), the level set {i : x*_i <= theta} of the segment's isotonic
    fit x* is the prefix [lo, j*) with j* the largest maximiser of D_j(theta) over j in [lo, hi] (the
    cut form of the problem at one threshold: the upper sets of a chain are its suffixes). The fit
    then decomposes: the order constraint between x*_{j*-1} <= theta < x*_{j*} is slack, so each side
    is solved on its own; this holds for every theta, so no decision rests on the accuracy of a root.
    We take the two ends left <= right of the last bracket of the segment's pooled value gamma (root of
    g = D_hi, :func:`_block_root_bracket`; g(left) <= 0 <= g(right)): a cut strictly inside the segment
    at theta = right, else at theta = left, splits it (left side processed first); if neither cuts,
    the whole fit lies in (left, right] (or equals left when g(left) = 0), so the segment is one block,
    of value gamma solved over exactly its members (the value the stack form computes last for that
    block). A segment whose singleton values
    y_i - sign(c_i)(|c_i|/w_i)^(1/qm1) strictly increase is its own fit (n singletons, no root solve).
    Cost: one root solve and one O(B) pass per segment; O(n log n) root-solve work when the splits
    are balanced, which they are unless the pooled values sit in a few extreme entries (then up to
    O(n^2), like the stack form).

    If the segment's root or a cut's partial sums overflow (a spread of y near the float range), the
    segment is handed to the stack pass element by element, i.e. solved by the stack form.

    The pieces come out left to right and go through the stack pass of :func:`_pav_general_stack`
    (pool on >=, re-solve the merged block over its members), which merges two pieces only when
    round-off put a split inside a block: adjacent blocks never share a value.
    """
    n = y.size
    status = OK
    total = 0
    worst = 0
    segs = np.empty((n + 1, 2), dtype=np.intp)  # segment stack: the top is processed first
    ns = 1
    segs[0, 0] = 0
    segs[0, 1] = n
    b = -1  # output block stack, as in _pav_general_stack
    while ns > 0:
        ns -= 1
        lo = segs[ns, 0]
        hi = segs[ns, 1]
        # singleton values; a strictly increasing run of them is its own fit
        inc = True
        prev = -math.inf
        for i in range(lo, hi):
            ci = c[i]
            s = (abs(ci) / w[i]) ** (1.0 / qm1)
            m = y[i] - s if ci >= 0.0 else y[i] + s
            if not (m > prev):
                inc = False
                break
            prev = m
        if inc:
            pend_lo = lo
            pend_hi = hi
            single = True
        else:
            gam, left, right, its, ok = _block_root_bracket(y, w, c, lo, hi, qm1, max_iter, tol)
            total += its
            worst = max(worst, its)
            if not ok:
                status = NOT_CONVERGED
            j = -1
            if gam - gam == 0.0:
                j = _cut(y, w, c, lo, hi, right, qm1)  # g_B(right) >= 0: j > lo
                if j == hi:
                    j = _cut(y, w, c, lo, hi, left, qm1)
                    if j == lo or j == hi:  # the whole fit lies in (left, right] (or equals left): one block
                        j = hi
            if j < 0:
                # g_B overflowed over the segment (a huge spread of y): no cut is known, so the segment
                # goes through the stack form element by element, whose blocks may stay finite
                pend_lo = lo
                pend_hi = hi
                single = True
            elif j > lo and j < hi:
                segs[ns, 0] = j  # right part below, left part on top: pieces come out left to right
                segs[ns, 1] = hi
                segs[ns + 1, 0] = lo
                segs[ns + 1, 1] = j
                ns += 2
                continue
            else:
                pend_lo = lo
                pend_hi = hi
                single = False
        # emit the pieces [pend_lo, pend_hi) (singletons, or one block of value gam) onto the stack
        i = pend_lo
        while i < pend_hi:
            b += 1
            if single:
                r[b] = i
                ci = c[i]
                s = (abs(ci) / w[i]) ** (1.0 / qm1)
                x[b] = y[i] - s if ci >= 0.0 else y[i] + s
                end = i + 1
            else:
                r[b] = pend_lo
                x[b] = gam
                end = pend_hi
            while b > 0 and x[b - 1] >= x[b]:
                b -= 1
                g2, its, ok = _block_root(y, w, c, r[b], end, qm1, max_iter, tol)
                total += its
                worst = max(worst, its)
                if not ok:
                    status = NOT_CONVERGED
                x[b] = g2
            i = end
    r[b + 1] = n
    info[0] = total
    info[1] = worst
    if _expand(x, r, b):
        status = NONFINITE
    return b + 1, status
