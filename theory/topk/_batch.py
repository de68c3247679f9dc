r"""Numba kernels of the quadratic (p = 2) soft sort, soft rank and top-k mask on batches of rows
(paper key ``topk``, thesis Chapter 7, §7.3, Eq. (7.5) and Proposition 7.5 with
:math:`R=\frac\lambda2\|\cdot\|^2`).

Private: float64/intp C-contiguous 2-D arrays, one independent problem per row, no validation. The
public, validated interface is :mod:`theory.topk._soft`, which also keeps the reference
implementation (one row, NumPy) that these kernels reproduce bit for bit: the same operations in the
same order, the isotonic fit by the same pool-adjacent-violators kernel
(:func:`theory._pav._pav_unit`), and the block sums in the order of NumPy's
``np.add.reduceat`` (first element, then the pairwise sum of the rest: :func:`_npsum`).

Ties of the sort. The rank (and the Jacobian of the sort) needs the sorting permutation; the
reference uses NumPy's stable argsort (ties ordered by index). Two routes give exactly that
permutation, hence the reference's outputs for every order of ties:

* :func:`_rows_rx` (and its variants) sort inside the kernel by the stable radix argsort of
  :mod:`theory.topk._radix`, read the sorted values back from its keys (no gather) and reuse its
  scratch for the isotonic pass and the block sums (six arrays of n words in all per row, against
  about fourteen before; at n = 10^6 the page faults on the first touch of fresh arrays are a large
  share of the time);
* :func:`_rank_rows` (with NumPy's stable argsort; no longer called by the public functions, which sort
  every rank row by radix, faster at every length measured) and
  :func:`_sort_rows` / :func:`_avg_rows` (kept as the references the tests hold the radix kernels to)
  take a permutation from the caller: the stable one, or any argsort whose runs of equal keys
  :func:`_stable_ties` re-sorts by index (a permutation sorts the keys and orders equal keys by
  index iff it is the stable one).

Row status (``status[r]``): 0 OK; 1 a pooled sum overflowed or x / reg is not finite. A row with a
status other than 0 is recomputed by the caller on the reference path, which rescales or raises the
documented error.
"""

import math

import numpy as np
from numba import njit, prange

from .._pav import _pav_unit
from ._radix import key_value, order_key, radix_argsort_into

_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}

OK, FALLBACK = 0, 1
LAM_FLOOR = 2.0**-900  # theory.topk._soft._LAM_FLOOR


@njit(**_JIT)
def _pairwise(a, lo, n):
    """NumPy's pairwise summation of a[lo:lo + n] (blocks of 128, eight accumulators, halves rounded
    down to a multiple of 8), the inner loop of ``np.add.reduce`` for float64."""
    if n < 8:
        res = -0.0  # NumPy starts from -0.0: a sum of negative zeros stays -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r0 = a[lo]
        r1 = a[lo + 1]
        r2 = a[lo + 2]
        r3 = a[lo + 3]
        r4 = a[lo + 4]
        r5 = a[lo + 5]
        r6 = a[lo + 6]
        r7 = a[lo + 7]
        m = n - (n % 8)
        i = 8
        while i < m:
            r0 += a[lo + i]
            r1 += a[lo + i + 1]
            r2 += a[lo + i + 2]
            r3 += a[lo + i + 3]
            r4 += a[lo + i + 4]
            r5 += a[lo + i + 5]
            r6 += a[lo + i + 6]
            r7 += a[lo + i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[lo + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, lo, n2) + _pairwise(a, lo + n2, n - n2)


@njit(**_JIT)
def _npsum(a, lo, hi):
    """sum(a[lo:hi]) (hi > lo) exactly as ``np.add.reduceat`` computes it for that segment."""
    res = a[lo]
    if hi - lo > 1:
        res += _pairwise(a, lo + 1, hi - lo - 1)
    return res


@njit(**_JIT)
def _stable_ties(key, order):
    """Turn ``order`` (a permutation sorting ``key``, increasingly or decreasingly) into the one that
    orders equal keys by increasing index: the indices of each run of equal keys are sorted."""
    n = order.shape[0]
    i = 0
    while i < n - 1:
        if key[order[i]] == key[order[i + 1]]:
            j = i + 1
            while j < n - 1 and key[order[j]] == key[order[j + 1]]:
                j += 1
            order[i:j + 1] = np.sort(order[i:j + 1])
            i = j + 1
        else:
            i += 1


@njit(**_JIT)
def _pav_decreasing(t, v, wb, r, rr):
    """Decreasing fit of t by the increasing kernel on the reversed targets (the reference's
    convention); v: the fit, rr[:nb + 1]: the block starts in decreasing coordinates, then n."""
    n = t.shape[0]
    yr = np.empty(n)
    for j in range(n):
        yr[j] = t[n - 1 - j]
    xr = np.empty(n)
    nb, status = _pav_unit(yr, xr, wb, r)
    for j in range(n):
        v[j] = xr[n - 1 - j]
    for k in range(nb + 1):
        rr[k] = n - r[nb - k]
    return nb, status


@njit(**_JIT)
def _sort_row(S, reg, desc, y, rr):
    """One row of the quadratic soft sort on the row sorted increasingly (``S``, unscaled): the
    reference's exact scaling by 2^-e (e the exponent of max|x|, lam = reg 2^e clamped at 2^-900),
    applied here by multiplications with exact powers of two, which round as ``np.ldexp`` does while
    |e| <= 1000 (other rows: FALLBACK). Writes y (descending, or increasing when not ``desc``) and
    the blocks rr (descending coordinates); returns (nb, status)."""
    n = S.shape[0]
    amax = max(abs(S[0]), abs(S[n - 1]))
    e = math.frexp(amax)[1]
    if e > 1000 or e < -1000:
        return 0, FALLBACK
    lam = reg * 2.0 ** e
    if not (lam - lam == 0.0):
        return 0, FALLBACK  # reg * max|x| overflows: the reference path raises
    lam = max(lam, LAM_FLOOR)
    down = 2.0 ** (-e)
    up = 2.0 ** e
    s = np.empty(n)
    t = np.empty(n)
    for i in range(n):
        s[i] = S[n - 1 - i] * down
        t[i] = float(n - i) / lam - s[i]
    v = np.empty(n)
    nb, status = _pav_decreasing(t, v, np.empty(n), np.empty(n + 1, dtype=np.intp), rr)
    if status != 0:
        return nb, FALLBACK
    for k in range(nb):
        a = rr[k]
        b = rr[k + 1]
        mean = _npsum(s, a, b) / float(b - a)
        for i in range(a, b):
            val = (mean + (0.5 * float(a + b - 1) - float(i)) / lam) * up
            if desc:
                y[i] = val
            else:
                y[n - 1 - i] = val
    return nb, OK


@njit(**_JIT)
def _sort_rows(S, reg, desc, Y, R, NB, status):
    for row in range(S.shape[0]):
        nb, st = _sort_row(S[row], reg, desc, Y[row], R[row])
        NB[row] = nb
        status[row] = st


# a distinct function, not a second dispatcher of the same one: Numba's on-disk cache is keyed on the
# function (name and line), not on the parallel flag, so two dispatchers of one function share a cache entry
@njit(parallel=True, **_JIT)
def _sort_rows_par(S, reg, desc, Y, R, NB, status):
    for row in prange(S.shape[0]):
        nb, st = _sort_row(S[row], reg, desc, Y[row], R[row])
        NB[row] = nb
        status[row] = st


@njit(**_JIT)
def _rank_row(x, order, reg, y, rr):
    """One row of the descending quadratic soft rank; ``order`` sorts x increasingly (made stable
    here, in place); writes y (input coordinates) and the blocks rr (sorted coordinates)."""
    n = x.shape[0]
    _stable_ties(x, order)
    s = np.empty(n)
    rho = np.empty(n)
    t = np.empty(n)
    for i in range(n):
        z = -x[order[i]] / reg
        if not (z - z == 0.0):
            return 0, FALLBACK
        s[i] = z
        rho[i] = float(n - i)
        t[i] = z - rho[i]
    v = np.empty(n)
    nb, status = _pav_decreasing(t, v, np.empty(n), np.empty(n + 1, dtype=np.intp), rr)
    if status != 0:
        return nb, FALLBACK
    d = np.empty(n)
    for k in range(nb):
        a = rr[k]
        b = rr[k + 1]
        if b - a == 1:
            y[order[a]] = rho[a]
            continue
        first = s[a]
        for i in range(a, b):
            d[i] = s[i] - first
        mr = _npsum(rho, a, b) / float(b - a)
        md = _npsum(d, a, b) / float(b - a)
        for i in range(a, b):
            y[order[i]] = mr + (d[i] - md)
    return nb, OK


@njit(**_JIT)
def _rank_rows(X, O, reg, Y, R, NB, status):
    for row in range(X.shape[0]):
        nb, st = _rank_row(X[row], O[row], reg, Y[row], R[row])
        NB[row] = nb
        status[row] = st


# a distinct function, not a second dispatcher of the same one: Numba's on-disk cache is keyed on the
# function (name and line), not on the parallel flag, so two dispatchers of one function share a cache entry
@njit(parallel=True, **_JIT)
def _rank_rows_par(X, O, reg, Y, R, NB, status):
    for row in prange(X.shape[0]):
        nb, st = _rank_row(X[row], O[row], reg, Y[row], R[row])
        NB[row] = nb
        status[row] = st


@njit(**_JIT, inline="always")
def _block_average(ds, o, r, nb, g, mode):
    """The block step of the p = 2 Jacobian products: over each block [r[k], r[k + 1]) of the sorted order,
    the mean m of ds; g receives m (mode 0, sorted order; mode 1, through the permutation o) or ds - m
    (mode 2, through o; a singleton block gives 0)."""
    for k in range(nb):
        a = r[k]
        b = r[k + 1]
        if b - a == 1:
            val = 0.0 if mode == 2 else ds[a]
            if mode == 0:
                g[a] = val
            else:
                g[o[a]] = val
            continue
        m = _npsum(ds, a, b) / float(b - a)
        for i in range(a, b):
            if mode == 0:
                g[i] = m
            elif mode == 1:
                g[o[i]] = m
            else:
                g[o[i]] = ds[i] - m


@njit(**_JIT)
def _avg_row(u, o, r, nb, g, mode):
    """Products with the p = 2 Jacobians in sorted coordinates (block averages), one row: u the
    vector, o the permutation, r[:nb + 1] the blocks, g the output.

    mode 0 (sort JVP): g[i] = mean_B(u[o])_i (singletons: u[o[i]]);
    mode 1 (sort VJP): g[o[i]] = mean_B(u)_i (singletons: u[i]);
    mode 2 (rank, symmetric): g[o[i]] = ds_i - mean_B(ds), ds = u[o] (singletons 0; the caller
    passes u = -dx / reg).
    """
    n = u.shape[0]
    ds = np.empty(n)
    if mode == 1:
        for i in range(n):
            ds[i] = u[i]
    else:
        for i in range(n):
            ds[i] = u[o[i]]
    _block_average(ds, o, r, nb, g, mode)


@njit(**_JIT)
def _avg_rows(U, O, R, NB, G, mode):
    """Products with the p = 2 Jacobians, row by row (:func:`_avg_row`)."""
    for row in range(U.shape[0]):
        _avg_row(U[row], O[row], R[row], NB[row], G[row], mode)


# a distinct function, not a second dispatcher of the same one: Numba's on-disk cache is keyed on the
# function (name and line), not on the parallel flag, so two dispatchers of one function share a cache entry
@njit(parallel=True, **_JIT)
def _avg_rows_par(U, O, R, NB, G, mode):
    """:func:`_avg_rows` with the rows on every core."""
    for row in prange(U.shape[0]):
        _avg_row(U[row], O[row], R[row], NB[row], G[row], mode)


#: rows x n above which the row loop runs on every core (below, thread start-up costs more than it saves)
PARALLEL_MIN_WORK = 50_000
#: a single row is never split across threads; batches need at least this many rows to go parallel
PARALLEL_MIN_ROWS = 2
#: the top-k mask's rows go parallel only with at least this many Numba threads: its rows cost a few
#: microseconds, and on two threads of one physical core (hyper-threads) the parallel loop measured
#: 1.5 to 4 times slower than the serial one (256 x 1000, Intel Xeon, 2 vCPUs)
MASK_PARALLEL_MIN_THREADS = 3


# ---------------------------------------------------------------------------------------------------
# The quadratic top-k mask on rows (topk Eq. (7.5) with w = 1_k, phi = identity, R = reg/2 ||.||^2):
# the first window of theory.topk._api._forward (the entries above the k-th largest minus reg, a
# proven superset of the pooled block), solved and accepted exactly as theory.topk._api._mask_solver
# does; a row whose first window is rejected (or too small) is left to the caller (FALLBACK), which
# runs the 1-D code with its growing windows.

_CLIP = 4.0  # theory.topk._api._CLIP
_EPS = 2.220446049250313e-16
_MASK_SLACK = 1e-9  # normalised units below the mask's lower bound on gamma (a window cut, not a result)


@njit(**_JIT)
def _kth_largest(x, k):
    """The k-th largest entry of x (the value np.partition(x, n - k)[n - k]): for small k by a sorted
    buffer of the k largest seen (one comparison per entry, rare insertions), else by np.partition."""
    n = x.shape[0]
    if k > 64:
        return np.partition(x, n - k)[n - k]
    buf = np.empty(k)  # increasing; buf[0] the k-th largest so far
    for i in range(k):
        v = x[i]
        j = i
        while j > 0 and buf[j - 1] > v:
            buf[j] = buf[j - 1]
            j -= 1
        buf[j] = v
    lo = buf[0]  # in a register: the loop reads x only
    for i in range(k, n):
        v = x[i]
        if v > lo:
            j = 0
            while j + 1 < k and buf[j + 1] < v:
                buf[j] = buf[j + 1]
                j += 1
            buf[j] = v
            lo = buf[0]
    return lo


@njit(**_JIT)
def _sort_desc(a, s):
    """s[:m] = the values of a (m entries) in decreasing order: insertion sort up to 48 entries (the
    mask's cut windows; Numba's np.sort costs about 3 us on 90 entries), else np.sort of -a. Returns s[:m]."""
    m = a.shape[0]
    s = s[:m]
    if m > 48:
        for j in range(m):
            s[j] = -a[j]
        s.sort()
        for j in range(m):
            s[j] = -s[j]
        return s
    for i in range(m):
        v = a[i]
        j = i
        while j > 0 and s[j - 1] < v:
            s[j] = s[j - 1]
            j -= 1
        s[j] = v
    return s


@njit(**_JIT)
def _mask_pav(s, k, sk, reg, t, yr, xr, wb, r):
    """The pooled block of the mask on the window s (decreasing, K entries): t[:K] = clip((s - sk)/reg,
    +-4), the decreasing fit of t - 1_k as :func:`_pav_decreasing` computes it (the increasing kernel on
    the reversed targets; yr, xr, wb, r scratch of length >= K + 1). Returns (a0, b0, gamma, v_{k-1},
    status): the block [a0, b0) holding k - 1 and its value."""
    K = s.shape[0]
    for j in range(K):
        tj = min(max((s[j] - sk) / reg, -_CLIP), _CLIP)
        t[j] = tj
        yr[K - 1 - j] = tj - (1.0 if j < k else 0.0)
    nb, status = _pav_unit(yr[:K], xr[:K], wb[:K], r)
    if status != 0:
        return 0, 0, 0.0, 0.0, status
    # decreasing block starts rr[q] = K - r[nb - q]; the block of k - 1: the last rr[q] <= k - 1
    q = nb - 1
    while K - r[nb - q] > k - 1:
        q -= 1
    a0 = K - r[nb - q]
    b0 = K - r[nb - q - 1]
    return a0, b0, xr[K - 1 - a0], xr[K - k], 0


@njit(**_JIT)
def _mask_row(x, k, reg, y, F, I):
    """One row of the p = 2 mask on its first window W = {x_i > x_[k] - reg} (theory.topk._api._forward),
    accepted as theory.topk._api._mask_solver does.

    Only the sorted pooled block enters the result, so the window is cut further to the candidates
    whose normalised score t_i = (x_i - x_[k])/reg exceeds c, a lower bound on the pooled value gamma
    (the largest of -1, -3/4, -1/2, -1/4 where the decreasing f(g) = sum_W clip(t_i - g, 0, 1), is at least k, f(gamma) = k:
    then g <= gamma; block members j >= k have t_j >= gamma, since each prefix of a block of the increasing
    fit of the reversed targets has mean >= the block's). The pool-adjacent-violators pass on that
    sub-window runs the same operations as on W provided its lowest entry is not pooled with the
    boundary block (no look-back reaches the entries left out) and a gap separates the scores kept
    from those left out (no tie pool below can reach up); otherwise W itself is sorted. Outputs by
    score: every tie of t lies in one PAV block, so y_i = 1 above the block, clip(t_i - gamma, 0, 1)
    in it, 0 below (the sorted-position assignment, bit for bit). F (8, n + 1) float64 and I (2, n + 1)
    intp: scratch."""
    n = x.shape[0]
    cv = F[0]
    ci = I[0]
    K = 0
    nxt = -np.inf
    sk = _kth_largest(x, k)
    thr = sk - reg
    full = not (thr > -np.inf)
    if full:
        thr = -np.inf
    for i in range(n):  # branch free: every entry is written at K, kept by advancing K
        xi = x[i]
        keep = full or xi > thr
        cv[K] = xi
        ci[K] = i
        K += 1 if keep else 0
        nxt = max(nxt, -np.inf if keep else xi)
    full = full or K == n
    if K <= k:
        return FALLBACK
    tc = F[1]
    sv = F[2]
    # c: a lower bound on gamma in [-1, 0] (f(0) <= k - 1 < k): the largest of g = -1, -3/4, -1/2, -1/4
    # with f(g) >= k, the four sums in the pass that forms t (independent chains)
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    f3 = 0.0
    for j in range(K):
        tj = min(max((cv[j] - sk) / reg, -_CLIP), _CLIP)
        tc[j] = tj
        f0 += min(max(tj + 1.0, 0.0), 1.0)
        f1 += min(max(tj + 0.75, 0.0), 1.0)
        f2 += min(max(tj + 0.5, 0.0), 1.0)
        f3 += min(max(tj + 0.25, 0.0), 1.0)
    fk = float(k)
    small = f0 >= fk
    if small:
        lo = -0.25 if f3 >= fk else (-0.5 if f2 >= fk else (-0.75 if f1 >= fk else -1.0))
        c = lo - _MASK_SLACK
        Ks = 0
        tin = np.inf
        tout = -np.inf
        for j in range(K):
            if tc[j] > c:
                sv[Ks] = cv[j]
                Ks += 1
                tin = min(tin, tc[j])
            else:
                tout = max(tout, tc[j])
        small = Ks > k and Ks < K and tin - tout > 8.0 * n * _EPS * max(1.0, abs(tin))
    sk0 = sk
    t = F[4]
    a0 = b0 = 0
    gam = vk = 0.0
    if small:
        s = _sort_desc(sv[:Ks], F[3])
        sk0 = s[k - 1]
        a0, b0, gam, vk, status = _mask_pav(s, k, sk0, reg, t, F[5], F[6], F[7], I[1])
        small = status == 0 and b0 < Ks
    if not small:
        s = _sort_desc(cv[:K], F[3])
        sk0 = s[k - 1]
        a0, b0, gam, vk, status = _mask_pav(s, k, sk0, reg, t, F[5], F[6], F[7], I[1])
        if status != 0:
            return FALLBACK
    if not full:
        tn = min(max((nxt - sk0) / reg, -_CLIP), _CLIP)
        if not (tn == -_CLIP or vk > tn + 8.0 * n * _EPS * max(1.0, abs(tn))):
            return FALLBACK
    for i in range(n):
        y[i] = 0.0
    if b0 > k:
        top = t[a0]
        bot = t[b0 - 1]
        for j in range(K):
            tj = tc[j]
            if tj > top:
                y[ci[j]] = 1.0
            elif tj >= bot:
                y[ci[j]] = min(max(tj - gam, 0.0), 1.0)
    else:
        tk = t[k - 1]
        for j in range(K):
            if tc[j] >= tk:
                y[ci[j]] = 1.0
    return OK


@njit(**_JIT)
def _mask_rows(X, k, reg, Y, status):
    n = X.shape[1]
    F = np.empty((8, n + 1))
    I = np.empty((2, n + 1), dtype=np.intp)
    for row in range(X.shape[0]):
        status[row] = _mask_row(X[row], k, reg, Y[row], F, I)


# a distinct function, not a second dispatcher of the same one: Numba's on-disk cache is keyed on the
# function (name and line), not on the parallel flag, so two dispatchers of one function share a cache entry
@njit(parallel=True, **_JIT)
def _mask_rows_par(X, k, reg, Y, status):
    n = X.shape[1]
    for row in prange(X.shape[0]):
        status[row] = _mask_row(X[row], k, reg, Y[row], np.empty((8, n + 1)), np.empty((2, n + 1), dtype=np.intp))


# ---------------------------------------------------------------------------------------------------
# The same rows with the sort inside the kernel: the stable radix argsort of theory.topk._radix gives
# the stable permutation directly (no tie pass) and the sorted values (decoded from its keys: no
# gather), and every array of n words the row needs is one of six buffers the caller provides (the
# radix scratch is reused for the isotonic pass and the block sums). Same operations in the same order
# as _sort_row / _rank_row on the reference's stable permutation, hence the same bits.


@njit(**_JIT)
def _zero_run(keys, descending):
    """The run [lo, hi) of the sorted ``keys`` (increasing as unsigned integers, the output of
    :func:`theory.topk._radix.radix_argsort_into`) equal to the key of zero: the entries whose value
    :func:`theory.topk._radix.key_value` reads back as +0.0 while x holds +0.0 or -0.0. Two binary
    searches, O(log n).

    The decoding loops read every value from its key and then re-read only this run from x (keeping
    the sign of a zero). Testing each decoded value against zero inside the loop instead, with the read
    of x[order[i]] under the test, let the compiler turn the loop into gathers of x through the
    permutation for every entry (AVX-512 targets): at n = 10^6 that loop took 23 ms instead of 1.2 ms."""
    z = order_key(0.0, descending)
    n = keys.shape[0]
    lo = 0
    hi = n
    while lo < hi:  # first key >= z
        mid = (lo + hi) >> 1
        if keys[mid] < z:
            lo = mid + 1
        else:
            hi = mid
    first = lo
    hi = n
    while lo < hi:  # first key > z
        mid = (lo + hi) >> 1
        if keys[mid] <= z:
            lo = mid + 1
        else:
            hi = mid
    return first, lo


@njit(**_JIT)
def _rank_row_rx(x, flip, reg, y, o, r, k0, k1, i1):
    """:func:`_rank_row` on x (flip: on -x, without forming it), sorting inside: o receives the
    stable permutation sorting the (negated) row increasingly, r[:nb + 1] the blocks (sorted
    coordinates), y the soft rank; k0, k1 (uint64) and i1 (intp) are scratch of length n."""
    n = x.shape[0]
    radix_argsort_into(x, flip, k0, o, k1, i1)
    z0, z1 = _zero_run(k0, flip)  # before s overwrites the keys
    s = k0.view(np.float64)  # s overwrites the sorted keys, entry by entry
    yr = k1.view(np.float64)
    for i in range(n):
        v = key_value(k0[i], flip)
        if flip:
            v = -v
        z = -v / reg
        if not (z - z == 0.0):
            return 0, FALLBACK
        s[i] = z
        yr[n - 1 - i] = z - float(n - i)
    for i in range(z0, z1):  # the zeros, with their signs from x
        v = x[o[i]]
        if flip:
            v = -v
        z = -v / reg
        s[i] = z
        yr[n - 1 - i] = z - float(n - i)
    nb, status = _pav_unit(yr, i1.view(np.float64), y, r)
    if status != 0:
        return nb, FALLBACK
    _reverse_blocks(r, nb, n)
    d = yr  # free again: scratch of the block sums
    for k in range(nb):
        a = r[k]
        b = r[k + 1]
        if b - a == 1:
            y[o[a]] = float(n - a)
            continue
        mr = _rank_mean(d, a, b, n)
        first = s[a]
        for i in range(a, b):
            d[i] = s[i] - first
        md = _npsum(d, a, b) / float(b - a)
        for i in range(a, b):
            y[o[i]] = mr + (d[i] - md)
    return nb, OK


#: rows up to this length sum a block of ranks in closed form (:func:`_rank_mean`): every partial sum
#: of n - i over a block is then an integer below 2^52, exact in float64
_RANK_SUM_EXACT = 1 << 26


@njit(**_JIT)
def _rank_mean(d, a, b, n):
    """mean(n - i for i in [a, b)) as :func:`_npsum` computes it on those values, in d[a:b] (scratch):
    rows of n <= 2^26 (:data:`_RANK_SUM_EXACT`) in closed form, (b - a)(2n - a - b + 1) / 2 in
    integers, which is that sum's value (every partial sum of the pairwise order is an integer below
    2^52, so no rounding occurs); longer rows fill d and sum it."""
    if n <= _RANK_SUM_EXACT:
        tot = ((b - a) * (2 * n - a - b + 1)) // 2
        return float(tot) / float(b - a)
    for i in range(a, b):
        d[i] = float(n - i)
    return _npsum(d, a, b) / float(b - a)


@njit(**_JIT)
def _reverse_blocks(r, nb, n):
    """Block starts of the increasing fit of reversed targets (r[:nb + 1]) to those of the decreasing
    fit, in place: r[k] <- n - r[nb - k]."""
    lo = 0
    hi = nb
    while lo < hi:
        a = r[lo]
        r[lo] = n - r[hi]
        r[hi] = n - a
        lo += 1
        hi -= 1
    if lo == hi:
        r[lo] = n - r[lo]


@njit(**_JIT)
def _sort_scaled(s, reg, desc, y, r, yr, xr):
    """The quadratic soft sort of a row given its values sorted decreasingly in s (overwritten by the
    scaled values): :func:`_sort_row`'s arithmetic; yr, xr scratch of length n."""
    n = s.shape[0]
    amax = max(abs(s[n - 1]), abs(s[0]))
    e = math.frexp(amax)[1]
    if e > 1000 or e < -1000:
        return 0, FALLBACK
    lam = reg * 2.0 ** e
    if not (lam - lam == 0.0):
        return 0, FALLBACK
    lam = max(lam, LAM_FLOOR)
    down = 2.0 ** (-e)
    up = 2.0 ** e
    for i in range(n):
        si = s[i] * down
        s[i] = si
        yr[n - 1 - i] = float(n - i) / lam - si
    nb, status = _pav_unit(yr, xr, y, r)
    if status != 0:
        return nb, FALLBACK
    _reverse_blocks(r, nb, n)
    for k in range(nb):
        a = r[k]
        b = r[k + 1]
        mean = _npsum(s, a, b) / float(b - a)
        for i in range(a, b):
            val = (mean + (0.5 * float(a + b - 1) - float(i)) / lam) * up
            if desc:
                y[i] = val
            else:
                y[n - 1 - i] = val
    return nb, OK


@njit(**_JIT)
def _sort_row_rx(x, reg, desc, y, o, r, k0, k1, i1):
    """:func:`_sort_row` with the sort inside: o receives the stable permutation sorting x
    decreasingly (the reference's argsort(-x, kind="stable")), r the blocks, y the soft sort."""
    n = x.shape[0]
    radix_argsort_into(x, True, k0, o, k1, i1)
    z0, z1 = _zero_run(k0, True)  # before s overwrites the keys
    s = k0.view(np.float64)
    for i in range(n):
        s[i] = key_value(k0[i], True)
    for i in range(z0, z1):  # the zeros, with their signs from x
        s[i] = x[o[i]]
    return _sort_scaled(s, reg, desc, y, r, k1.view(np.float64), i1.view(np.float64))


@njit(**_JIT)
def _sort_row_vals(S, reg, desc, y, r, w0, w1):
    """:func:`_sort_row` on S sorted increasingly (overwritten), no permutation; w0, w1 scratch."""
    n = S.shape[0]
    for i in range(n // 2):
        t = S[i]
        S[i] = S[n - 1 - i]
        S[n - 1 - i] = t
    return _sort_scaled(S, reg, desc, y, r, w0, w1)


@njit(**_JIT)
def _rows_rx(X, kind, flag, reg, Y, O, R, NB, status, keep, lo, hi):
    """Rows lo..hi - 1 of kind 0 (rank; ``flag``: of -x), 1 (sort with its permutation; ``flag``:
    descending output) or 2 (sort of rows already sorted increasingly in X, overwritten, without
    permutation; ``flag``: descending output); one set of scratch buffers for these rows. ``keep``: O and R receive every row's
    permutation and blocks (m rows each), else they are not touched."""
    n = X.shape[1]
    k0 = np.empty(n, dtype=np.uint64)
    k1 = np.empty(n, dtype=np.uint64)
    i1 = np.empty(n, dtype=np.intp)
    if keep:
        _rows_rx_ws(X, kind, flag, reg, Y, O, R, NB, status, True, k0, k1, i1, lo, hi)
    else:
        o = np.empty((1, n), dtype=np.intp)
        r = np.empty((1, n + 1), dtype=np.intp)
        _rows_rx_ws(X, kind, flag, reg, Y, o, r, NB, status, False, k0, k1, i1, lo, hi)


@njit(**_JIT)
def _rows_rx_ws(X, kind, flag, reg, Y, O, R, NB, status, keep, k0, k1, i1, lo, hi):
    """:func:`_rows_rx` on rows lo..hi - 1 with caller-provided scratch k0, k1 (uint64) and i1 (intp),
    and, when not ``keep``, O and R of one row (scratch too)."""
    for row in range(lo, hi):
        j = row if keep else 0
        if kind == 0:
            nb, st = _rank_row_rx(X[row], flag, reg, Y[row], O[j], R[j], k0, k1, i1)
        elif kind == 1:
            nb, st = _sort_row_rx(X[row], reg, flag, Y[row], O[j], R[j], k0, k1, i1)
        else:
            nb, st = _sort_row_vals(X[row], reg, flag, Y[row], R[j], k0.view(np.float64), k1.view(np.float64))
        NB[row] = nb
        status[row] = st


@njit(parallel=True, **_JIT)
def _rows_rx_par(X, kind, flag, reg, Y, O, R, NB, status, keep, nchunks):
    """:func:`_rows_rx` with the rows cut into ``nchunks`` contiguous chunks run on every core (each
    chunk its own scratch)."""
    m = X.shape[0]
    for c in prange(nchunks):
        _rows_rx(X, kind, flag, reg, Y, O, R, NB, status, keep, c * m // nchunks, (c + 1) * m // nchunks)


@njit(**_JIT)
def _avg_row_ws(u, o, r, nb, g, mode, flip, reg, ds):
    """:func:`_avg_row` without its copies: mode 1 reads u in place (``flip``: reversed, copied into
    ds); modes 0 and 2 gather into the scratch ds (length n); mode 2 takes the vector itself,
    ds_i = -(+-u[o_i]) / reg (the minus inside when ``flip``), the values :func:`_avg_row` receives
    from its caller."""
    n = u.shape[0]
    if mode == 1 and not flip:
        ds = u
    elif mode == 1:
        for i in range(n):
            ds[i] = u[n - 1 - i]
    elif mode == 0:
        for i in range(u.shape[0]):
            ds[i] = u[o[i]]
    else:
        for i in range(u.shape[0]):
            w = u[o[i]]
            if flip:
                w = -w
            ds[i] = -w / reg
    _block_average(ds, o, r, nb, g, mode)


@njit(**_JIT)
def _avg_rows_ws(U, O, R, NB, G, mode, flip, reg, ds, lo, hi):
    """:func:`_avg_row_ws` on rows lo..hi - 1 with the scratch ds (length n)."""
    for row in range(lo, hi):
        _avg_row_ws(U[row], O[row], R[row], NB[row], G[row], mode, flip, reg, ds)


@njit(parallel=True, **_JIT)
def _avg_rows_ws_par(U, O, R, NB, G, mode, flip, reg, nchunks):
    """:func:`_avg_rows_ws` with the rows cut into ``nchunks`` chunks on every core."""
    m = U.shape[0]
    for c in prange(nchunks):
        _avg_rows_ws(U, O, R, NB, G, mode, flip, reg, np.empty(U.shape[1]), c * m // nchunks, (c + 1) * m // nchunks)
