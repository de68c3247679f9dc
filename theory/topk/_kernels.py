"""Numba kernels of the regularised top-k operators (paper key ``topk``, Sections 7.4-7.5 and
Proposition 7.8 with the corrections recorded in ERRATA.md, entries 11 and 12).

* :func:`_mag_pnorm`: the magnitude operator (phi(x) = x^2/2) for any p in (1, inf), on a window of
  sorted magnitudes; the isotonic module has no quadratic term, so the pooled block is found here
  from the block structure of the problem (see the function).
* :func:`_mask_pnorm`: the mask operator for p not in {2, 4/3}: the one pooled block is located by
  the threshold equation and its value solved over its members by the
  isotonic module's own per-block root finder (the same bits as the isotonic path on those members).
* :func:`_fill_jacobian`: the dense Jacobian from its block structure (diagonal plus one rank-one
  term per pooled block).

Private: float64/intp C-contiguous arrays and plain floats only, no validation, no defaults; the
caller allocates the outputs. The public interface is :mod:`theory.topk._api`.
"""

import math

import numpy as np
from numba import njit

from .. import _roots
from .._pav import _block_root as _iso_block_root
from .._pav import _pw

_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}

OK, NOT_CONVERGED = 0, 1

# Iteration caps and bracket tolerances of the root solves below when the caller passes max_iter < 1
# and tol < 0 (the public defaults): 4399 iterations reach adjacent floats from any bracket in the
# float range (the safeguarded iteration at least halves its bracket every three evaluations); the
# per-block re-solve of the mask uses the isotonic defaults (400, 4 eps).
CAP_BRACKET, CAP_ANCHORED, CAP_BLOCK = 4399, 2999, 400
TOL_ANCHORED = 4.0 * 2.220446049250313e-16


@njit(**_JIT)
def _ypow(d, lam, qm1):
    """(d/lam)^qm1 for d > 0 (inf where d/lam overflows or lam = 0), 0 for d <= 0: the output
    reg^(1-q) d^(q-1) of an entry at distance d above the pooled value, with no power of lam (lam^(q-1)
    over- or underflows for p near 1)."""
    if d <= 0.0:
        return 0.0
    if lam == 0.0:
        return math.inf
    return _pw(d / lam, qm1)


@njit(**_JIT)
def _f_window(s, K, k, lam, qm1, gam):
    """F(gamma) = sum_{j<k} max(0, gamma - (s_j - gamma)_+^qm1/lam^qm1) - sum_{j>=k} ((s_j - gamma)_+/lam)^qm1
    over the window s[:K] (Eq. (7.6) divided by lam^(q-1); increasing in gamma; its root is the pooled
    value of the boundary block), and its derivative. Only the active terms are visited (scans
    outwards from k - 1 and k)."""
    f = 0.0
    df = 0.0
    j = k - 1
    while j >= 0:
        d = s[j] - gam
        if d > 0.0:
            pw = _ypow(d, lam, qm1)
            t = gam - pw
            if t <= 0.0:
                break
            f += t
            df += 1.0 + qm1 * pw / d
        else:
            f += gam
            df += 1.0
        j -= 1
    j = k
    while j < K and s[j] > gam:
        d = s[j] - gam
        pw = _ypow(d, lam, qm1)
        f -= pw
        df += qm1 * pw / d
        j += 1
    return f, df


@njit(**_JIT)
def _members(s, K, k, lam, qm1, gam):
    """Boundary block [a, b) for the value gamma: k - 1 and k always; j < k - 1 while its term of F is
    positive (it would violate the order as a singleton), j > k while s_j > gamma."""
    a = k - 1
    while a > 0:
        if gam - _ypow(s[a - 1] - gam, lam, qm1) > 0.0:
            a -= 1
        else:
            break
    b = k + 1
    while b < K and s[b] > gam:
        b += 1
    return a, b


@njit(**_JIT)
def _reg_at_scale(reg, E, pm2):
    """reg * 2^(E (p - 2)) to a few eps for an integer E (|E| < 2^12): the exponent E (p - 2) is split
    exactly (Veltkamp) into hi + lo, hi into its integer and fractional parts, so that neither the
    product's rounding (|E (p-2)| eps) nor an intermediate overflow enters. 0 or inf where the
    result leaves the float range."""
    if E == 0 or pm2 == 0.0:
        return reg
    c = 134217729.0 * pm2  # 2^27 + 1
    ph = c - (c - pm2)
    pl = pm2 - ph
    A = E * ph  # exact: 26 + 12 bits
    B = E * pl  # exact: 27 + 12 bits
    hi = A + B
    lo = (A - hi) + B
    ih = math.floor(hi)
    fr = hi - ih
    if ih > 4000.0:
        return math.inf
    if ih < -4000.0:
        return 0.0
    v = reg * (2.0 ** fr) * math.exp(lo * 0.6931471805599453)
    return math.ldexp(v, int(ih))


@njit(**_JIT)
def _singleton(s, reg, pm1, qm1, max_iter, tol):
    """g >= 0 with g + reg g^(p-1) = s >= 0 (a magnitude singleton among the k largest; g <= s), solved
    at the scale of s: s = 2^e m, lam = reg 2^(e(p-2)) (y(cx; reg) = c y(x; reg c^(p-2))), then
    g' + lam g'^(p-1) = m for g' in [lower, upper], upper = min(m, (m/lam)^(q-1)) and
    lower = min(m/2, (m/(2 lam))^(q-1)) (one of the two terms is at least m/2), by safeguarded Newton
    with bisection in the ratio of the ends while they span a factor > 4; lam = 0 (underflow at
    this scale) gives g' = m, an overflowing lam the log form of its term; the iteration is
    :func:`theory._roots._step` (a Newton step below eps |g'| ends it), at most ``max_iter`` iterations
    (< 1: 4399) and, for ``tol`` >= 0, stopped at a bracket of relative width ``tol``. Returns (g,
    converged): g = 0 only for s = 0 or an output below the float range (then g' > 0, the caller
    checks)."""
    if s == 0.0:
        return 0.0, True
    m, e = math.frexp(s)
    lam = _reg_at_scale(reg, e, pm1 - 1.0)
    if lam > 2.0 ** 600 and pm1 != 1.0:
        # the regularisation dominates at the scale of s: rescale so that lam ~ 1 instead (s = 2^E m,
        # E where the exponents of m and lam balance), keeping both finite and lam exact to a few eps
        E = int(round((e - math.log2(reg)) / pm1))
        lam2 = _reg_at_scale(reg, E, pm1 - 1.0)
        m2 = math.ldexp(s, -E)
        if 0.0 < lam2 < 2.0 ** 1000 and 2.0 ** -1000 < m2 < 2.0 ** 1000:
            m = m2
            e = E
            lam = lam2
    if lam < 2.0 ** -60 and m < 1.0:
        # g' = m - lam g'^(p-1) with g' in [m/2, m], so lam g'^(p-1) < lam < 2^-59 m: two fixed-point
        # steps are exact to rounding (no cancellation)
        g = m - lam * _pw(m, pm1) if lam > 0.0 else m
        g = m - lam * _pw(g, pm1) if lam > 0.0 else m
        return math.ldexp(g, e), True
    if lam == math.inf:
        llam = math.log(reg) + e * (pm1 - 1.0) * 0.6931471805599453
    else:
        llam = math.log(lam)
    lm = math.log(m)
    # bracket in logarithms: log upper, log lower
    lu = min(lm, qm1 * (lm - llam))
    ll = min(lm - 0.6931471805599453, qm1 * (lm - 0.6931471805599453 - llam))
    if lu < -745.0:  # (m/lam)^(q-1) below the smallest subnormal at this scale: log form only
        lg = lu  # g' <= upper; g' >= lower: both tiny; the caller sees an underflow
        return math.ldexp(math.exp(max(lg, -745.0)), e) if lg > -745.0 else 0.0, True
    a = math.exp(ll) if ll > -745.0 else 0.0
    b = math.exp(lu)

    def phi(g):
        if g == 0.0:
            return -m, math.inf
        if lam == math.inf:
            lt = llam + pm1 * math.log(g)
            t = math.exp(lt) if lt < 709.0 else math.inf
        else:
            t = lam * _pw(g, pm1)
        return g + t - m, 1.0 + pm1 * t / g

    fa, _d = phi(a)
    if fa >= 0.0:
        return math.ldexp(a, e), True
    fb, _d = phi(b)
    if fb <= 0.0:
        return math.ldexp(b, e), True
    xk = math.sqrt(a) * math.sqrt(b) if (a > 0.0 and b > 4.0 * a) else 0.5 * (a + b)
    width_old = b - a
    cap = _roots._cap(max_iter, CAP_BRACKET)
    tl = _roots._tol(tol, 0.0)
    it = 1
    while True:
        f, df = phi(xk)
        xk, a, b, it, width_old, code = _roots._step(xk, a, b, it, width_old, f, df, cap, tl, 0.0, _roots.MID_LOG,
                                                     _roots.STEP_REL, 2.220446049250313e-16, 0.0)
        if code == _roots.CONTINUE:
            continue
        if code == _roots.ROOT or code == _roots.STEP:
            return math.ldexp(xk, e), True
        if code == _roots.BRACKET:
            return math.ldexp(a if abs(phi(a)[0]) <= abs(phi(b)[0]) else b, e), True
        return math.ldexp(0.5 * (a + b), e), False


@njit(**_JIT)
def _mag_u(sc, j, sm, lam):
    """(s_j - s_m)/lam, the exact score difference in output units (0 for equal scores, +-inf where
    lam = 0 or the quotient overflows)."""
    d = sc[j] - sm
    if d == 0.0:
        return 0.0
    if lam == 0.0:
        return math.inf if d > 0.0 else -math.inf
    return d / lam


@njit(**_JIT)
def _mag_anchored(sc, lo, hi, m, lam, r, kB, eta):
    """H(eta) = sum_{j in [lo, hi)} y_j(eta) + kB lam eta^r - kB s_m and dH/deta: the block equation
    sum_B y_j = kB gamma of the magnitude in the anchored form, gamma = s_m - lam eta^r (eta = y_m the
    anchor's output, y_j = g^{-1}((s_j - s_m)/lam + g(eta)), g(y) = y^r, r = p - 1)."""
    leta = math.log(eta) if eta > 0.0 else 0.0
    f = -kB * sc[m]
    df = 0.0
    for j in range(lo, hi):
        y, d = _anchored_y(_mag_u(sc, j, sc[m], lam), eta, leta, r)
        f += y
        df += d
    if eta > 0.0:
        t = lam * _pw(eta, r)
        f += kB * t
        df += kB * r * t / eta
    elif r < 1.0:
        df = math.inf
    return f, df


@njit(**_JIT)
def _mag_anchored_root(sc, lo, hi, m, lam, r, kB, eta0, max_iter, tol):
    """Root eta >= 0 of the increasing H of :func:`_mag_anchored`: bracket [0, b] with b = s_m doubled
    until H(b) >= 0, then the safeguarded Newton of :func:`theory._roots._step` from eta0, bisection in
    the ratio of the ends while they span a factor > 4, down to a relative width ``tol`` (< 0: 4 eps),
    at most ``max_iter`` iterations (< 1: 4399). Returns (eta, converged); eta = 0 when H(0) >= 0
    (the anchor is not above the pooled value)."""
    a = 0.0
    b = sc[m]
    f, _d = _mag_anchored(sc, lo, hi, m, lam, r, kB, a)
    if f >= 0.0:
        return 0.0, True
    for _ in range(2100):
        f, _d = _mag_anchored(sc, lo, hi, m, lam, r, kB, b)
        if f >= 0.0 or not (b < 1e300):
            break
        a = b
        b = 2.0 * b
    if f <= 0.0:
        return b, f == 0.0
    xk = eta0 if (eta0 > a and eta0 < b) else 0.5 * a + 0.5 * b
    width_old = b - a
    cap = _roots._cap(max_iter, CAP_BRACKET)
    tl = _roots._tol(tol, TOL_ANCHORED)
    it = 1
    while True:
        f, df = _mag_anchored(sc, lo, hi, m, lam, r, kB, xk)
        xk, a, b, it, width_old, code = _roots._step(xk, a, b, it, width_old, f, df, cap, tl, 0.0, _roots.MID_LOG,
                                                     _roots.STEP_NONE, 0.0, 0.0)
        if code == _roots.CONTINUE:
            continue
        if code == _roots.ROOT:
            return xk, True
        if code == _roots.BRACKET:
            fa, _d = _mag_anchored(sc, lo, hi, m, lam, r, kB, a)
            fb, _d = _mag_anchored(sc, lo, hi, m, lam, r, kB, b)
            return (a if abs(fa) <= abs(fb) else b), True
        return 0.5 * a + 0.5 * b, False


@njit(**_JIT)
def _threshold_root(t, K, k, lam, qm1, lo, hi, max_iter, tol, mask):
    """Root of the increasing threshold function on the bracket [lo, hi] (F(lo) <= 0 <= F(hi)): the F of
    :func:`_mask_phi` on the normalised scores t (``mask``), else the F of :func:`_f_window` on the
    scaled magnitudes t (regularisation lam). Safeguarded Newton from the midpoint,
    :func:`theory._roots._step` with bisection (lo + hi)/2; it stops at F = 0, at adjacent floats, at a
    Newton step below eps |gamma| (mask: eps max(|gamma|, 1)), for ``tol`` >= 0 at a bracket of
    relative width ``tol``; at most ``max_iter`` iterations (< 1: 4399). Returns (lo, hi, converged):
    the final bracket, whose midpoint is the root (lo = hi after F = 0 or a small Newton step)."""
    cap = _roots._cap(max_iter, CAP_BRACKET)
    tl = _roots._tol(tol, 0.0)
    floor = 1.0 if mask else 0.0
    xk = 0.5 * (lo + hi)
    width_old = hi - lo
    it = 1
    while True:
        if mask:
            f, df = _mask_phi(t, K, k, qm1, xk)
        else:
            f, df = _f_window(t, K, k, lam, qm1, xk)
        xk, lo, hi, it, width_old, code = _roots._step(xk, lo, hi, it, width_old, f, df, cap, tl, 0.0,
                                                       _roots.MID_HALF, _roots.STEP_REL, 2.220446049250313e-16,
                                                       floor)
        if code == _roots.CONTINUE:
            continue
        if code == _roots.ROOT or code == _roots.STEP:
            return xk, xk, True
        return lo, hi, code == _roots.BRACKET


@njit(**_JIT)
def _mag_pnorm(s, sc, e, k, reg, lam, pm1, qm1, max_iter, tol, y, info):
    """Magnitude operator, R = (reg/p)||.||_p^p, q = p/(p - 1), on sorted magnitudes s (descending,
    >= 0, window of K = s.size >= k + 1 entries; w = 1_k); sc = s / 2^e and lam = reg 2^(e(p-2)) the
    same problem at the scale 2^e (entries of sc may overflow to inf: they are singletons; lam = 0
    where it underflows: then only entries tied with s_{k-1} pool).

    Eq. (7.5) with h_j(v) = r*(s_j - v) + w_j v^2/2, r*(z) = reg^(1-q)|z|^q/q. The unconstrained
    minimisers are g_j (g + reg g^(p-1) = s_j) for j < k and s_j for j >= k: two decreasing runs, so
    PAV pools at most one block, around k - 1 and k, and every other entry is a singleton. That block
    is absent (hard regime, Chapter 7's singleton condition) iff s_{k-1} > s_k + reg s_k^(p-1).
    Otherwise a first value gamma is the root of the increasing F of :func:`_f_window` (its members
    are the entries whose first-order term is active at gamma); then the block's outputs are solved in
    the anchored form (:func:`_mag_anchored_root`, unknown the output of the smallest member, every
    other output through the exact difference of its score from the anchor's: every digit also where
    s_j - gamma is far below the rounding of gamma) and the membership re-checked on those outputs until
    it is stable, so that the result depends only on the members and their two neighbours (a window
    that contains them gives the same bits as the full array).

    Output: y[:K] = |y*| in sorted order (unscaled), each at most s_j; y_j = g_j for j < a (each at its
    own scale), the anchored outputs on [a, b), 0 after. info (4,) float64: a, b (a = b = k: hard
    regime), gamma (scaled, s_m - lam eta^(p-1)), status (0 OK, 1 a root solve hit its iteration cap).
    Every root solve is :func:`theory._roots._step`, at most ``max_iter`` iterations each (< 1: 4399) and
    stopped at a relative bracket width ``tol`` (< 0: the solve's own rule, see the functions).
    """
    K = sc.size
    status = OK
    sk = sc[k]
    if sk > 0.0:
        hard = sc[k - 1] > sk + lam * _pw(sk, pm1)
    else:
        hard = sc[k - 1] > 0.0
    a = k
    b = k
    gam = 0.0
    eta = 0.0
    if not hard:
        # safeguarded Newton on F over [0, s_{k-1}] (F(0) <= 0 <= F(s_{k-1})): bisect when a step leaves
        # the bracket or the bracket did not halve over two steps (theory._roots._step); the result seeds
        # the membership (and is the block value in the direct case below)
        lo, hi, ok = _threshold_root(sc, K, k, lam, qm1, 0.0, sc[k - 1], max_iter, tol, False)
        if not ok:
            status = NOT_CONVERGED
        gam = 0.5 * (lo + hi)
        a, b = _members(sc, K, k, lam, qm1, gam)
        # the anchor: the smallest member for p >= 2 (r >= 1), the largest for p < 2 (its output is the
        # largest; the smallest member's can lie far below the float range)
        mm = b - 1 if pm1 >= 1.0 else a
        eta = _ypow(sc[mm] - gam, lam, qm1)
        # gamma far below the anchor's score (the regularisation dominates): the anchored block equation
        # sum y = k_B (s_m - lam eta^(p-1)) cancels to gamma << s_m and loses digits, while the gaps
        # s_j - gamma > s_m/2 are exact enough: keep the first value gamma and its membership
        direct = gam < 0.5 * sc[mm]
        for _ in range(0 if direct else 4 * K + 8):
            mm = b - 1 if pm1 >= 1.0 else a
            eta, ok = _mag_anchored_root(sc, a, b, mm, lam, pm1, float(k - a), eta, max_iter, tol)
            if not ok:
                status = NOT_CONVERGED
            gam = sc[mm] - lam * _pw(eta, pm1) if eta > 0.0 else sc[mm]
            leta = math.log(eta) if eta > 0.0 else 0.0
            na = a
            nb = b
            # ties move together (tied entries have equal outputs whatever their order)
            if a > 0 and (s[a - 1] == s[a] or _anchored_y(_mag_u(sc, a - 1, sc[mm], lam), eta, leta, pm1)[0] < gam):
                na = a - 1  # the left neighbour's singleton value is below gamma: it pools
            elif a < k - 1 and s[a] != s[a + 1] and _anchored_y(_mag_u(sc, a, sc[mm], lam), eta, leta, pm1)[0] > gam:
                na = a + 1
            if b < K and (s[b] == s[b - 1] or _anchored_y(_mag_u(sc, b, sc[mm], lam), eta, leta, pm1)[0] > 0.0):
                nb = b + 1  # above gamma: a positive output
            elif b > k + 1 and s[b - 1] != s[b - 2] and _anchored_y(_mag_u(sc, b - 1, sc[mm], lam), eta, leta,
                                                                    pm1)[0] <= 0.0:
                nb = b - 1  # the last member is not above gamma
            if na == a and nb == b:
                break
            a = na
            b = nb
        mm = b - 1 if pm1 >= 1.0 else a
        leta = math.log(eta) if eta > 0.0 else 0.0
        for j in range(a, b):
            if direct:
                yj = _ypow(sc[j] - gam, lam, qm1)
            else:
                yj = _anchored_y(_mag_u(sc, j, sc[mm], lam), eta, leta, pm1)[0]
            yj = math.ldexp(yj, e) if yj > 0.0 else 0.0
            y[j] = yj if yj < s[j] else s[j]
    for j in range(a):
        g, ok = _singleton(s[j], reg, pm1, qm1, max_iter, tol)
        if not ok:
            status = NOT_CONVERGED
        y[j] = g
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
        rinv = math.sqrt(inv)
        for a in range(seg_lo[r], seg_hi[r]):
            ia = order[a]
            for b in range(seg_lo[r], seg_hi[r]):
                ib = order[b]
                prod = rk[a] * rk[b]
                # rk ~ 1/reg: for a tiny reg the product overflows, for a huge one (1e300) it underflows to 0
                # while the term rk_a rk_b / den (of the order of rk) is a normal number: scale first then
                if prod == math.inf or (abs(prod) < 2.2250738585072014e-308 and rk[a] != 0.0 and rk[b] != 0.0):
                    term = (rk[a] * rinv) * (rk[b] * rinv)
                else:
                    term = prod * inv
                J[ia, ib] -= (sgn[a] * sgn[b]) * term  # symmetric bit for bit


@njit(**_JIT)
def _mask_phi(t, K, k, qm1, gam):
    """F(gamma) = (k - a) - sum_{j in [a, k)} (t_j - gamma)^qm1 - sum_{j >= k, t_j > gamma}
    (t_j - gamma)^qm1 with a = #{j < k : t_j - gamma >= 1}, i.e. k - sum_j min{1, (t_j - gamma)_+^qm1}
    (increasing in gamma), for gamma in [t_{k-1} - 1, t_k] on the sorted window t[:K];
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
    block, around k - 1 and k (``theory.topk._fast``), and none iff t_{k-1} - 1 > t_k (hard regime).
    Otherwise its value gamma is the root in [t_{k-1} - 1, t_k] of the increasing F of
    :func:`_mask_phi` (the threshold equation sum_j min{1, (t_j - gamma)_+^(q-1)} = k), found by safeguarded
    Newton over the active terms only (O(block) per step, no pass over the window); then gamma is
    re-solved over exactly the block's members by the isotonic kernel's _block_root, on the members in
    the order and with the arguments the isotonic path gives them (reversed, w = 1, c = 1 on j < k),
    and the membership recomputed until stable. The result depends on the members only: a window that
    contains them gives the bits of the full array, and the same bits as the isotonic path whenever
    its block is the same.

    Root solves: :func:`_threshold_root` (at most ``max_iter`` iterations, < 1: 4399), then the block
    re-solve (at most ``max_iter``, < 1: 400, the isotonic default; relative bracket width ``tol``, < 0:
    4 eps). ybuf, wbuf, cbuf: (K,) float64 scratch. info (4,) float64 output: a, b (a = b = k: hard
    regime), gamma, status (0 OK, 1 a root solve hit its iteration cap).
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
    lo, hi, ok = _threshold_root(t, K, k, 0.0, qm1, lo, hi, max_iter, tol, True)
    if not ok:
        status = NOT_CONVERGED
    gam = 0.5 * (lo + hi)
    a, b = _mask_members(t, K, k, gam)
    cap = _roots._cap(max_iter, CAP_BLOCK)
    tl = _roots._tol(tol, TOL_ANCHORED)
    for _ in range(50):
        m = b - a
        for i in range(m):
            j = b - 1 - i
            ybuf[i] = t[j]
            wbuf[i] = 1.0
            cbuf[i] = 1.0 if j < k else 0.0
        gam, its, ok = _iso_block_root(ybuf, wbuf, cbuf, 0, m, qm1, cap, tl)
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
    pass), and its derivative (-inf where some t_j = gamma and qm1 < 1). Evaluated as
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
def _anchored_root(t, lo, hi, m, r, C, eta0, max_iter, tol):
    """Root eta of the increasing F of :func:`_anchored_sum` with anchor t[m], near eta0: bracket by
    geometric expansion from eta0, then the safeguarded Newton of :func:`theory._roots._step`
    (bisection in the sign, then in the ratio of the ends when they span a factor > 4) down to a
    relative width ``tol`` (< 0: 4 eps) or adjacent floats, at most ``max_iter`` iterations (< 1:
    2999). Returns (eta, converged)."""
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
    cap = _roots._cap(max_iter, CAP_ANCHORED)
    tl = _roots._tol(tol, TOL_ANCHORED)
    it = 1
    while True:
        f, df = _anchored_sum(t, lo, hi, tm, xk, r, C)
        xk, a, b, it, width_old, code = _roots._step(xk, a, b, it, width_old, f, df, cap, tl, 0.0,
                                                     _roots.MID_SIGNED_LOG, _roots.STEP_NONE, 0.0, 0.0)
        if code == _roots.CONTINUE:
            continue
        if code == _roots.ROOT:
            return xk, True
        if code == _roots.BRACKET:
            fa2, _d = _anchored_sum(t, lo, hi, tm, a, r, C)
            fb2, _d = _anchored_sum(t, lo, hi, tm, b, r, C)
            return (a if abs(fa2) <= abs(fb2) else b), True
        return 0.5 * a + 0.5 * b, False


@njit(**_JIT)
def _anchored_fill(t, lo, hi, m, eta, r, out):
    """out[i] = y_i(eta) for i in [lo, hi) (anchor t[m])."""
    tm = t[m]
    leta = math.log(abs(eta)) if eta != 0.0 else 0.0
    for i in range(lo, hi):
        out[i], _d = _anchored_y(t[i] - tm, eta, leta, r)


@njit(**_JIT)
def _anchored_blocks(t, blocks, csum, r, y0, max_iter, tol, out):
    """Accurate outputs of every pooled block (blocks: starts then n; csum[j]: the block's target sum;
    y0: first estimate of the outputs, sign(t - gamma)|t - gamma|^(1/r)). The anchor of a block is
    the member with the smallest (r >= 1) or largest (r < 1) |y0|. Singletons are copied from y0.
    Root solves by :func:`_anchored_root` (``max_iter``, ``tol`` as there). Returns the number of blocks
    whose root solve did not converge."""
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
        eta, ok = _anchored_root(t, lo, hi, m, r, csum[j], y0[m], max_iter, tol)
        if not ok:
            bad += 1
        _anchored_fill(t, lo, hi, m, eta, r, out)
    return bad
