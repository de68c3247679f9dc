"""Numba kernels of the regularised top-k operators (paper key ``topk``, Sections 7.4-7.5 and
Proposition 7.8 with the corrections of the catalogue note R7.13).

* :func:`_mag_pnorm`: the magnitude operator (phi(x) = x^2/2) for any p in (1, inf), on a window of
  sorted magnitudes; the isotonic module has no quadratic term, so the pooled block is found here
  from the block structure of the problem (see the function).
* :func:`_mask_pnorm`: the mask operator for p not in {2, 4/3}: the one pooled block is located by
  the threshold equation of the catalogue's A7.6 and its value solved over its members by the
  isotonic module's own per-block root finder (the same bits as the isotonic path on those members).
* :func:`_fill_jacobian`: the dense Jacobian from its block structure (diagonal plus one rank-one
  term per pooled block).

Private: float64/intp C-contiguous arrays and plain floats only, no validation, no defaults; the
caller allocates the outputs. The public interface is :mod:`theory.topk._api`.
"""

import math

import numpy as np
from numba import njit

from ..isotonic._kernels import _block_root as _iso_block_root
from ..isotonic._kernels import _pw

_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}

OK, NOT_CONVERGED = 0, 1


@njit(**_JIT)
def _g_block(s, lo, hi, k, lq, qm1, gam):
    """G_B(gamma) = sum_{j in [lo, hi)} [lq w_j gamma - sign(s_j - gamma)|s_j - gamma|^qm1] with
    w_j = 1 for j < k, else 0, and its derivative (inf where gamma = s_j and qm1 < 1)."""
    g = 0.0
    dg = 0.0
    nw = 0
    for j in range(lo, hi):
        d = s[j] - gam
        if j < k:
            nw += 1
        if d > 0.0:
            t = _pw(d, qm1)
            g -= t
            dg += qm1 * t / d
        elif d < 0.0:
            t = _pw(-d, qm1)
            g += t
            dg += qm1 * t / (-d)
        elif qm1 < 1.0:
            dg = math.inf
    g += lq * gam * nw
    dg += lq * nw
    return g, dg


@njit(**_JIT)
def _root_block(s, lo, hi, k, lq, qm1):
    """Root of the increasing G_B over the members [lo, hi) only (a function of the members' values:
    the same members give the same bits). Bracket [0, s_lo] (G_B(0) <= 0 <= G_B(s_lo) as s >= 0 is
    sorted descending); safeguarded Newton (bisection when the step leaves the bracket or the bracket
    did not halve over two steps); stops at a zero, adjacent floats, or a step below eps |gamma|.
    Returns (gamma, converged)."""
    a = 0.0
    b = s[lo]
    g, dg = _g_block(s, lo, hi, k, lq, qm1, a)
    if g >= 0.0:
        return a, True
    g, dg = _g_block(s, lo, hi, k, lq, qm1, b)
    if g <= 0.0:
        return b, True
    xk = 0.5 * (a + b)
    width_old = b - a
    eps = 2.220446049250313e-16
    for it in range(1, 4400):  # bisection alone needs < 2200 halvings to reach adjacent floats
        g, dg = _g_block(s, lo, hi, k, lq, qm1, xk)
        if g == 0.0:
            return xk, True
        if g < 0.0:
            a = xk
        else:
            b = xk
        mid = 0.5 * (a + b)
        if mid <= a or mid >= b:
            return mid, True
        xn = xk - g / dg if (dg > 0.0 and dg < math.inf) else mid
        if xn > a and xn < b:
            if abs(xn - xk) <= eps * abs(xn):
                return xn, True
            if it % 2 == 0:
                if b - a > 0.5 * width_old:
                    xn = mid
                width_old = b - a
            xk = xn
        else:
            xk = mid
    return 0.5 * (a + b), False


@njit(**_JIT)
def _f_window(s, K, k, lq, qm1, gam):
    """F(gamma) = sum_{j<k} max(0, lq gamma - (s_j - gamma)_+^qm1) - sum_{j>=k} (s_j - gamma)_+^qm1 over
    the window s[:K] (increasing in gamma; its root is the pooled value of the boundary block), and
    its derivative. Only the active terms are visited (scans outwards from k - 1 and k)."""
    f = 0.0
    df = 0.0
    j = k - 1
    while j >= 0:
        d = s[j] - gam
        if d > 0.0:
            pw = _pw(d, qm1)
            t = lq * gam - pw
            if t <= 0.0:
                break
            f += t
            df += lq + qm1 * pw / d
        else:
            f += lq * gam
            df += lq
        j -= 1
    j = k
    while j < K and s[j] > gam:
        d = s[j] - gam
        pw = _pw(d, qm1)
        f -= pw
        df += qm1 * pw / d
        j += 1
    return f, df


@njit(**_JIT)
def _members(s, K, k, lq, qm1, gam):
    """Boundary block [a, b) for the value gamma: k - 1 and k always; j < k - 1 while its term of F is
    positive (it would violate the order as a singleton), j > k while s_j > gamma."""
    a = k - 1
    while a > 0:
        d = s[a - 1] - gam
        if lq * gam - (_pw(d, qm1) if d > 0.0 else 0.0) > 0.0:
            a -= 1
        else:
            break
    b = k + 1
    while b < K and s[b] > gam:
        b += 1
    return a, b


@njit(**_JIT)
def _singleton(s, reg, pm1, qm1):
    """g >= 0 with g + reg g^(p-1) = s >= 0 (a magnitude singleton among the k largest), solved at
    the scale of s: s = 2^e s', reg' = reg 2^(e(p-2)), g = 2^e g' (y(cx; reg) = c y(x; reg c^(p-2))).
    Returns (g, converged)."""
    if s == 0.0:
        return 0.0, True
    m, e = math.frexp(s)
    lam = reg * 2.0 ** (e * (pm1 - 1.0))
    if lam > 1e300:
        lam = 1e300
    buf = np.empty(1)
    buf[0] = m
    g, ok = _root_block(buf, 0, 1, 1, lam ** qm1, qm1)
    return math.ldexp(g, e), ok


@njit(**_JIT)
def _mag_pnorm(s, sc, e, k, reg, lam, pm1, qm1, y, info):
    """Magnitude operator, R = (reg/p)||.||_p^p, q = p/(p - 1), on sorted magnitudes s (descending,
    >= 0, window of K = s.size >= k + 1 entries; w = 1_k); sc = s / 2^e and lam = reg 2^(e(p-2)) the
    same problem at the scale of s_{k-1} (entries of sc may overflow to inf: they are singletons).

    Eq. (7.5) with h_j(v) = r*(s_j - v) + w_j v^2/2, r*(z) = reg^(1-q)|z|^q/q. The unconstrained
    minimisers are g_j (g + reg g^(p-1) = s_j) for j < k and s_j for j >= k: two decreasing runs, so
    PAV pools at most one block, around k - 1 and k, and every other entry is a singleton. That block
    is absent (hard regime, catalogue R7.10) iff s_{k-1} > s_k + reg s_k^(p-1). Otherwise its value
    gamma is the root of the increasing F of :func:`_f_window` (its members are the entries whose
    first-order term is active at gamma), found by bisection; then gamma is re-solved over exactly the
    members (:func:`_root_block`) and the membership recomputed until it is stable, so that the result
    depends only on the members (a window that contains them gives the same bits as the full array).

    Output: y[:K] = |y*| in sorted order (unscaled); y_j = g_j for j < a (each at its own scale),
    reg^(1-q)(s_j - gamma)^(q-1) on [a, b), 0 after. info (4,) float64: a, b (a = b = k: hard
    regime), gamma (scaled), status (0 OK, 1 a root solve hit its iteration cap).
    """
    K = sc.size
    lq = lam ** qm1
    status = OK
    sk = sc[k]
    hard = sc[k - 1] > sk + lam * sk ** pm1 if sk > 0.0 else sc[k - 1] > 0.0
    a = k
    b = k
    gam = 0.0
    if not hard:
        # safeguarded Newton on F over [0, s_{k-1}] (F(0) <= 0 <= F(s_{k-1})): bisect when a step leaves
        # the bracket or the bracket did not halve over two steps; the result only seeds the membership
        lo = 0.0
        hi = sc[k - 1]
        xk = 0.5 * (lo + hi)
        width_old = hi - lo
        for it in range(1, 4400):
            f, df = _f_window(sc, K, k, lq, qm1, xk)
            if f == 0.0:
                lo = xk
                hi = xk
                break
            if f < 0.0:
                lo = xk
            else:
                hi = xk
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            xn = xk - f / df if (df > 0.0 and df < math.inf) else mid
            if xn > lo and xn < hi:
                if abs(xn - xk) <= 2.220446049250313e-16 * abs(xn):
                    lo = xn
                    hi = xn
                    break
                if it % 2 == 0:
                    if hi - lo > 0.5 * width_old:
                        xn = mid
                    width_old = hi - lo
                xk = xn
            else:
                xk = mid
        gam = 0.5 * (lo + hi)
        a, b = _members(sc, K, k, lq, qm1, gam)
        for _ in range(50):
            gam, ok = _root_block(sc, a, b, k, lq, qm1)
            if not ok:
                status = NOT_CONVERGED
            a2, b2 = _members(sc, K, k, lq, qm1, gam)
            if a2 == a and b2 == b:
                break
            a = a2
            b = b2
    for j in range(a):
        g, ok = _singleton(s[j], reg, pm1, qm1)
        if not ok:
            status = NOT_CONVERGED
        y[j] = g
    c = lam ** (-qm1)
    for j in range(a, b):
        d = sc[j] - gam
        y[j] = math.ldexp(c * _pw(d, qm1), e) if d > 0.0 else 0.0
    for j in range(b, K):
        y[j] = 0.0
    info[0] = a
    info[1] = b
    info[2] = gam
    info[3] = status


@njit(**_JIT)
def _fill_jacobian(order, sgn, diag, rk, seg_lo, seg_hi, seg_den, J):
    """J (n, n) <- D (diag(diag) - sum_r rk_r rk_r^T / den_r) D in original coordinates: window position
    a is entry order[a], D = diag(sgn) (window), rk_r the restriction of rk to segment r = [seg_lo[r],
    seg_hi[r]). Entries outside the window are 0."""
    n = J.shape[0]
    for i in range(n):
        for j in range(n):
            J[i, j] = 0.0
    for a in range(order.shape[0]):
        J[order[a], order[a]] = diag[a]
    for r in range(seg_lo.shape[0]):
        inv = 1.0 / seg_den[r]
        for a in range(seg_lo[r], seg_hi[r]):
            ia = order[a]
            for b in range(seg_lo[r], seg_hi[r]):
                ib = order[b]
                J[ia, ib] -= (sgn[a] * sgn[b]) * ((rk[a] * rk[b]) * inv)  # symmetric bit for bit


@njit(**_JIT)
def _mask_phi(t, K, k, qm1, gam):
    """F(gamma) = (k - a) - sum_{j in [a, k)} (t_j - gamma)^qm1 - sum_{j >= k, t_j > gamma}
    (t_j - gamma)^qm1 with a = #{j < k : t_j - gamma >= 1}, i.e. k - sum_j min{1, (t_j - gamma)_+^qm1}
    (catalogue A7.6, increasing in gamma), for gamma in [t_{k-1} - 1, t_k] on the sorted window t[:K];
    and its derivative. Only the terms that are not constant are visited (outwards from k - 1 and k)."""
    f = 0.0
    df = 0.0
    j = k - 1
    while j >= 0:
        d = t[j] - gam
        if d >= 1.0:
            break
        f += 1.0
        if d > 0.0:
            pw = _pw(d, qm1)
            f -= pw
            df += qm1 * pw / d
        elif qm1 < 1.0:
            df = math.inf
        j -= 1
    j = k
    while j < K and t[j] > gam:
        d = t[j] - gam
        pw = _pw(d, qm1)
        f -= pw
        df += qm1 * pw / d
        j += 1
    return f, df


@njit(**_JIT)
def _mask_members(t, K, k, gam):
    """Pooled block [a, b) for the value gamma, with the isotonic kernel's pooling on ties: k - 1 and k
    always; j < k - 1 while its singleton value t_j - 1 is <= gamma, j > k while t_j >= gamma."""
    a = k - 1
    while a > 0 and t[a - 1] - 1.0 <= gam:
        a -= 1
    b = k + 1
    while b < K and t[b] >= gam:
        b += 1
    return a, b


@njit(**_JIT)
def _mask_pnorm(t, k, qm1, max_iter, tol, ybuf, wbuf, cbuf, info):
    """Mask operator for any p (q = p/(p - 1), qm1 = q - 1) on the sorted window t (descending, the
    normalised scores (s - s_{k-1})/reg, K = t.size >= k + 1; w = 1_k).

    The isotonic form (Eq. (7.5), decreasing fit of t with linear term c = 1_k) has singleton values
    t_j - 1 (j < k) and t_j (j >= k): two decreasing runs, so pool adjacent violators pools at most one
    block, around k - 1 and k (:mod:`theory.topk._fast`), and none iff t_{k-1} - 1 > t_k (hard regime).
    Otherwise its value gamma is the root in [t_{k-1} - 1, t_k] of the increasing F of
    :func:`_mask_phi` (catalogue A7.6: sum_j min{1, (t_j - gamma)_+^(q-1)} = k), found by safeguarded
    Newton over the active terms only (O(block) per step, no pass over the window); then gamma is
    re-solved over exactly the block's members by the isotonic kernel's _block_root, on the members in
    the order and with the arguments the isotonic path gives them (reversed, w = 1, c = 1 on j < k),
    and the membership recomputed until stable. The result depends on the members only: a window that
    contains them gives the bits of the full array, and the same bits as the isotonic path whenever
    its block is the same.

    ybuf, wbuf, cbuf: (K,) float64 scratch. info (4,) float64 output: a, b (a = b = k: hard regime),
    gamma, status (0 OK, 1 a root solve hit its iteration cap).
    """
    K = t.size
    status = OK
    lo = t[k - 1] - 1.0
    hi = t[k]
    if lo > hi:
        info[0] = k
        info[1] = k
        info[2] = 0.0
        info[3] = OK
        return
    xk = 0.5 * (lo + hi)
    width_old = hi - lo
    for it in range(1, 4400):
        f, df = _mask_phi(t, K, k, qm1, xk)
        if f == 0.0:
            lo = xk
            hi = xk
            break
        if f < 0.0:
            lo = xk
        else:
            hi = xk
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        xn = xk - f / df if (df > 0.0 and df < math.inf) else mid
        if xn > lo and xn < hi:
            if abs(xn - xk) <= 2.220446049250313e-16 * max(abs(xn), 1.0):
                lo = xn
                hi = xn
                break
            if it % 2 == 0:
                if hi - lo > 0.5 * width_old:
                    xn = mid
                width_old = hi - lo
            xk = xn
        else:
            xk = mid
    gam = 0.5 * (lo + hi)
    a, b = _mask_members(t, K, k, gam)
    for _ in range(50):
        m = b - a
        for i in range(m):
            j = b - 1 - i
            ybuf[i] = t[j]
            wbuf[i] = 1.0
            cbuf[i] = 1.0 if j < k else 0.0
        gam, its, ok = _iso_block_root(ybuf, wbuf, cbuf, 0, m, qm1, max_iter, tol)
        if not ok:
            status = NOT_CONVERGED
        a2, b2 = _mask_members(t, K, k, gam)
        if a2 == a and b2 == b:
            break
        a = a2
        b = b2
    info[0] = a
    info[1] = b
    info[2] = gam
    info[3] = status


@njit(**_JIT)
def _mask_phi_all(x, x0, reg, qm1, gam):
    """Phi(gamma) = sum_j min{1, (t_j - gamma)_+^qm1} over all of x, t = (x - x0)/reg (unsorted, one
    pass; catalogue A7.6), and its derivative (-inf where some t_j = gamma and qm1 < 1). Evaluated as
    (x_j - c)/reg with c = x0 + reg gamma: only a bound is derived from it (see _mask_lower_bound)."""
    c = x0 + reg * gam
    top = c + reg
    inv = 1.0 / reg
    f = 0.0
    df = 0.0
    for i in range(x.size):
        xi = x[i]
        if xi <= c:
            if xi == c and qm1 < 1.0:
                df = -math.inf
            continue
        if xi >= top:
            f += 1.0
            continue
        d = (xi - c) * inv
        pw = _pw(d, qm1)
        f += pw
        df -= qm1 * pw / d
    return f, df


@njit(**_JIT)
def _mask_lower_bound(x, x0, reg, qm1, k, gam, ub):
    """A lower bound >= gam of the mask's pooled value (normalised units), given lower and upper
    bounds gam <= ub: Phi is decreasing with Phi = k at the pooled value, so any g with Phi(g) >= k is
    a lower bound and any g with Phi(g) < k an upper bound. Up to eight steps (one O(n) pass each):
    Newton from a new lower bound when it lands inside the bracket, else bisection; stops once the
    bracket is below 1e-3 wide (the bound only sizes a window)."""
    lb = gam
    f, df = _mask_phi_all(x, x0, reg, qm1, lb)
    if not (f > k):
        return lb
    for _ in range(8):
        if ub - lb <= 1e-3:
            break
        cand = lb - (f - k) / df if (df < 0.0 and df > -math.inf) else ub
        if not (cand > lb and cand < ub):
            cand = 0.5 * (lb + ub)
        fc, dfc = _mask_phi_all(x, x0, reg, qm1, cand)
        if fc >= k:
            lb = cand
            f = fc
            df = dfc
        else:
            ub = cand
            df = math.inf  # the Newton step overshot, or a bisection fell short: bisect next
    return lb


# ---------------------------------------------------------------------------------------------------
# Accurate outputs of one pooled block (every p): the anchored form of the block equation.
#
# A pooled block B of the decreasing isotonic problem has outputs y_i = g^{-1}(t_i - gamma), with
# g(v) = sign(v)|v|^r, r = p - 1 (so g^{-1}(z) = sign(z)|z|^(1/r), 1/r = q - 1), and sum_B y_i = C.
# Writing gamma itself loses every digit of an output whose gap t_i - gamma is below eps |gamma|
# (p > 2: y = |gap|^(1/r) amplifies an absolute error e of the gap to e^(1/r); p -> 1: y = gap^(1/r)
# with 1/r huge multiplies a relative error of the gap by 1/r). The anchored form takes as unknown
# the output eta = y_m of one member m (the anchor) and writes every other output through the exact
# difference u_i = t_i - t_m:  y_i = g^{-1}(u_i + g(eta)) = eta (1 + u_i/g(eta))^(1/r), evaluated in
# logarithms (no overflow or underflow of g(eta) = sign(eta)|eta|^r for any r). With the anchor the
# member of smallest |gap| (r >= 1) or of largest |gap| (r < 1) the ratio u_i/g(eta) is >= -1/2 for
# every member, resp. small, so each output carries a relative error of a few eps (1 + |log y|).
# ---------------------------------------------------------------------------------------------------


@njit(**_JIT)
def _anchored_y(u, eta, leta, r):
    """y = g^{-1}(u + g(eta)) (see above) and dy/deta = (|eta|/|y|)^(r-1); leta = log|eta|."""
    if eta == 0.0:
        if u == 0.0:
            return 0.0, (1.0 if r == 1.0 else (math.inf if r > 1.0 else 0.0))
        au = abs(u) ** (1.0 / r)
        y = au if u > 0.0 else -au
        return y, (0.0 if r > 1.0 else (1.0 if r == 1.0 else math.inf))
    if u == 0.0:
        return eta, 1.0
    L = math.log(abs(u)) - r * leta  # log |u / g(eta)|
    neg = (u < 0.0) != (eta < 0.0)  # u / g(eta) < 0
    flip = False
    if L <= 0.0:
        e = math.exp(L)
        if neg:
            if e >= 1.0:
                return 0.0, (math.inf if r > 1.0 else (1.0 if r == 1.0 else 0.0))
            lg = math.log1p(-e)
        else:
            lg = math.log1p(e)
    else:
        e = math.exp(-L)
        if neg:
            flip = True
            lg = L + math.log1p(-e) if e < 1.0 else -math.inf
        else:
            lg = L + math.log1p(e)
    m = lg / r
    if m == -math.inf:
        return 0.0, (math.inf if r > 1.0 else (1.0 if r == 1.0 else 0.0))
    ay = abs(eta) * math.exp(m) if m < 700.0 else math.exp(leta + m)
    y = -ay if ((eta < 0.0) != flip) else ay
    if ay == 0.0:
        d = math.inf if r > 1.0 else (1.0 if r == 1.0 else 0.0)
    else:
        d = math.exp((r - 1.0) * (leta - math.log(ay)))
    return y, d


@njit(**_JIT)
def _anchored_sum(t, lo, hi, tm, eta, r, C):
    """F(eta) = sum_{i in [lo, hi)} y_i(eta) - C and dF/deta (anchor value tm)."""
    leta = math.log(abs(eta)) if eta != 0.0 else 0.0
    f = -C
    df = 0.0
    for i in range(lo, hi):
        y, d = _anchored_y(t[i] - tm, eta, leta, r)
        f += y
        df += d
    return f, df


@njit(**_JIT)
def _anchored_root(t, lo, hi, m, r, C, eta0):
    """Root eta of the increasing F of :func:`_anchored_sum` with anchor t[m], near eta0: bracket by
    geometric expansion from eta0, then safeguarded Newton (bisection in the sign, then in the ratio of
    the ends when they span a factor > 4) down to a relative width of 4 eps or adjacent floats.
    Returns (eta, converged)."""
    tm = t[m]
    f0, df0 = _anchored_sum(t, lo, hi, tm, eta0, r, C)
    if f0 == 0.0:
        return eta0, True
    step = max(abs(eta0) * 2.0 ** -20, 2.0 ** -1000)
    a = eta0
    b = eta0
    fa = f0
    fb = f0
    ok = False
    for _ in range(600):
        if f0 < 0.0:
            b = eta0 + step
            fb, _d = _anchored_sum(t, lo, hi, tm, b, r, C)
            if fb >= 0.0:
                ok = True
                break
            a = b
            fa = fb
        else:
            a = eta0 - step
            fa, _d = _anchored_sum(t, lo, hi, tm, a, r, C)
            if fa <= 0.0:
                ok = True
                break
            b = a
            fb = fa
        step *= 16.0
        if not (step < 1e300):
            break
    if not ok:
        return eta0, False
    if fa == 0.0:
        return a, True
    if fb == 0.0:
        return b, True
    xk = eta0 if (eta0 > a and eta0 < b) else 0.5 * a + 0.5 * b
    width_old = b - a
    for it in range(1, 3000):
        f, df = _anchored_sum(t, lo, hi, tm, xk, r, C)
        if f == 0.0:
            return xk, True
        if f < 0.0:
            a = xk
        else:
            b = xk
        if a < 0.0 and b > 0.0:
            mid = 0.0
        elif a >= 0.0 and (a == 0.0 or b > 4.0 * a):
            mid = b * 2.0 ** -30 if a == 0.0 else math.sqrt(a) * math.sqrt(b)
            if not (mid > a and mid < b):
                mid = 0.5 * a + 0.5 * b
        elif b <= 0.0 and (b == 0.0 or a < 4.0 * b):
            mid = a * 2.0 ** -30 if b == 0.0 else -math.sqrt(-a) * math.sqrt(-b)
            if not (mid > a and mid < b):
                mid = 0.5 * a + 0.5 * b
        else:
            mid = 0.5 * a + 0.5 * b
        if b - a <= 4.0 * 2.220446049250313e-16 * max(abs(a), abs(b)) or not (mid > a and mid < b):
            fa2, _d = _anchored_sum(t, lo, hi, tm, a, r, C)
            fb2, _d = _anchored_sum(t, lo, hi, tm, b, r, C)
            return (a if abs(fa2) <= abs(fb2) else b), True
        xn = xk - f / df if (df > 0.0 and df < math.inf) else mid
        if xn > a and xn < b:
            if it % 2 == 0:
                if b - a > 0.5 * width_old:
                    xn = mid
                width_old = b - a
            xk = xn
        else:
            xk = mid
    return 0.5 * a + 0.5 * b, False


@njit(**_JIT)
def _anchored_fill(t, lo, hi, m, eta, r, out):
    """out[i] = y_i(eta) for i in [lo, hi) (anchor t[m])."""
    tm = t[m]
    leta = math.log(abs(eta)) if eta != 0.0 else 0.0
    for i in range(lo, hi):
        out[i], _d = _anchored_y(t[i] - tm, eta, leta, r)


@njit(**_JIT)
def _anchored_blocks(t, blocks, csum, r, y0, out):
    """Accurate outputs of every pooled block (blocks: starts then n; csum[j]: the block's target sum;
    y0: first estimate of the outputs, sign(t - gamma)|t - gamma|^(1/r)). The anchor of a block is
    the member with the smallest (r >= 1) or largest (r < 1) |y0|. Singletons are copied from y0.
    Returns the number of blocks whose root solve did not converge."""
    bad = 0
    for j in range(blocks.size - 1):
        lo = blocks[j]
        hi = blocks[j + 1]
        if hi - lo == 1:
            out[lo] = y0[lo]
            continue
        m = lo
        for i in range(lo, hi):
            if (abs(y0[i]) < abs(y0[m])) if r >= 1.0 else (abs(y0[i]) > abs(y0[m])):
                m = i
        eta, ok = _anchored_root(t, lo, hi, m, r, csum[j], y0[m])
        if not ok:
            bad += 1
        _anchored_fill(t, lo, hi, m, eta, r, out)
    return bad
