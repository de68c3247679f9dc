"""Numba kernel of weighted least-squares isotonic regression (paper key ``topk``, Section 7.5, Eq. (7.5)
with R = 1/2 ||.||^2; Algorithm 1 of its Appendix 7.B.2, pool adjacent violators).

Private: float64 C-contiguous arrays and plain integers only, no validation, no defaults, no
allocation. The public, validated interface is :mod:`theory.isotonic._api`, which also owns every
convention (decreasing fits by reversal, SciPy's block convention, rescaling after an overflow).

Status codes returned by :func:`_pav`:

====  =================  ===========================================================
code  name               meaning
====  =================  ===========================================================
0     OK                 x holds the solution, r[:nblocks + 1] the block starts and n
1     NONFINITE          a pooled weighted sum overflowed: some block value is inf/NaN
====  =================  ===========================================================
"""

import numpy as np
from numba import njit

OK, NONFINITE = 0, 1

# The house flags (theory.resnet._kernels) minus "contract": with it LLVM may fuse S + w * y into one
# fused multiply-add (one rounding instead of two), and the pooled sums would then differ in the last
# bit from SciPy's C++ core, built for baseline x86-64 without FMA; a last-bit difference can split or
# join a tie. Without it the running sums below are SciPy's bit for bit, as tests/test_isotonic.py
# asserts. error_model="numpy": a division never raises (an overflow gives inf, reported as a status).
_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}


@njit(**_JIT)
def _pav(y, w, unit, x, wb, r):
    """Increasing weighted isotonic regression, x = argmin_{x_1 <= ... <= x_n} sum_i w_i (x_i - y_i)^2.

    Parameters (shapes with n = y.size >= 1)
    ----------------------------------------
    y : (n,) float64, read only.
    w : (n,) float64 positive weights, read only; ignored (any size) when ``unit`` is True, which
        means w_i = 1 for every i.
    unit : bool.
    x : (n,) float64 output, the fitted values. Also used as the stack of block values.
    wb : (n,) float64 scratch, the stack of block weights W_B = sum_{i in B} w_i.
    r : (n + 1,) intp output, block starts: block k is x[r[k]:r[k + 1]], r[0] = 0, r[nblocks] = n.

    Returns
    -------
    (nblocks, status) : number of blocks and a status code (module docstring).

    Method: pool adjacent violators with a stack of blocks (x[0..b], wb[0..b], r[0..b+1]), in the
    single-pass form of Busing (2022, J. Stat. Softw. 102(1), Algorithm 1): a new element that
    violates the order with the top block is pooled with it; the pooled block then absorbs the
    following elements while it is >= them (look-ahead) and the stack's blocks while they are >= it
    (look-back). A block's value is the weighted mean gamma_B = S_B / W_B, the p = 2 closed form of
    the pooling subproblem Eq. (7.6). Every element is pushed once and popped at most once: O(n).

    Ties: blocks are pooled on >= (not >), so adjacent blocks never share a value: the fit's blocks
    are its maximal constant runs, SciPy's convention. The arithmetic (S restarted from the stored
    mean times weight when a violation is found, then accumulated term by term) follows Busing's
    Algorithm 1 and SciPy's ``pava``, so that x and r agree with ``scipy.optimize.isotonic_regression``
    bit for bit.
    """
    n = y.size
    r[0] = 0
    r[1] = 1
    b = 0
    x_prev = y[0]
    w_prev = 1.0 if unit else w[0]
    x[0] = x_prev
    wb[0] = w_prev
    i = 1
    while i < n:
        b += 1
        xb = y[i]
        wcur = 1.0 if unit else w[i]
        if x_prev >= xb:  # violation (or tie) with the top block: pool
            b -= 1
            sb = w_prev * x_prev + wcur * xb
            wcur += w_prev
            xb = sb / wcur
            while i < n - 1 and xb >= y[i + 1]:  # look-ahead: absorb following elements
                i += 1
                wi = 1.0 if unit else w[i]
                sb += wi * y[i]
                wcur += wi
                xb = sb / wcur
            while b > 0 and x[b - 1] >= xb:  # look-back: pop blocks of the stack
                b -= 1
                sb += wb[b] * x[b]
                wcur += wb[b]
                xb = sb / wcur
        x[b] = xb
        x_prev = xb
        wb[b] = wcur
        w_prev = wcur
        r[b + 1] = i + 1
        i += 1
    status = OK
    for k in range(b + 1):
        v = x[k]
        if not (v - v == 0.0):  # inf or NaN
            status = NONFINITE
    # expand the stack into the fit, from the last block down (block k overwrites x[r[k]:r[k+1]],
    # and r[k] >= k, so stack entries not yet read are never overwritten)
    for k in range(b, -1, -1):
        v = x[k]
        for j in range(r[k + 1] - 1, r[k] - 1, -1):
            x[j] = v
    return b + 1, status


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
