"""The p-norm top-k mask, soft sort and soft rank at the extremes of p (review findings): the outputs of
a pooled block are computed in the anchored form, so that the mask sums to k, the soft sort to sum(x)
and the soft rank to n(n+1)/2 to a few eps for every p, and the mask agrees with an independent
high-precision bisection (Python decimal, 120 digits) of the threshold equation.

Before the fix, topk_mask([1.07, 0, 0, 0, 0], k=1, reg=2, p=16) summed to 1.30: the block's gaps
t_j - gamma ~ 1e-30 were evaluated as differences with gamma ~ 0.5 and lost every digit."""

from decimal import Decimal, localcontext

import numpy as np
import pytest

from theory.topk import soft_rank, soft_sort, topk_mask

P_GRID = [1.0 + 1e-9, 1.0 + 1e-6, 1.001, 1.01, 1.1, 1.5, 2.5, 3.0, 5.0, 10.0, 16.0, 50.0, 200.0]


def _mask_decimal(x, k, reg, p, digits=120):
    """Independent reference: bisection on the threshold tau of sum_j min{1, ((x_j - tau)_+/reg)^(1/(p-1))}
    = k in decimal arithmetic (the function decreases in tau); 1/(p-1) and every power in 120 digits."""
    with localcontext() as ctx:
        ctx.prec = digits
        X = [Decimal(float(v)) for v in x]
        R = Decimal(float(reg))
        e = 1 / (Decimal(float(p)) - 1)

        def phi(tau):
            tot = Decimal(0)
            out = []
            for v in X:
                d = (v - tau) / R
                y = Decimal(0) if d <= 0 else (Decimal(1) if d >= 1 else (d.ln() * e).exp())
                out.append(y)
                tot += y
            return tot, out

        lo = min(X) - R  # phi(lo) = n > k
        hi = max(X)      # phi(hi) = 0 < k
        for _ in range(int(digits * 3.4)):
            mid = (lo + hi) / 2
            if phi(mid)[0] > k:
                lo = mid
            else:
                hi = mid
        return np.array([float(v) for v in phi((lo + hi) / 2)[1]])


def test_regression_large_p_mask_sums_to_k():
    """The review's case: the exact mask is about [0.9592, 0.0102 x 4] (it summed to 1.30)."""
    y = topk_mask([1.07, 0.0, 0.0, 0.0, 0.0], k=1, reg=2.0, p=16.0)
    assert abs(y.sum() - 1.0) <= 4e-16
    np.testing.assert_allclose(y, _mask_decimal([1.07, 0, 0, 0, 0], 1, 2.0, 16.0), rtol=1e-13, atol=0)


@pytest.mark.parametrize("p", P_GRID)
def test_mask_invariants_and_decimal_reference(p):
    """Sum k to 4 n eps relative, 0 <= y <= 1, permutation equivariance, KKT (all fractional entries
    share one threshold: (y_j^(p-1)) reg + x_j... i.e. x_j - reg y_j^(p-1) is constant on them, to
    rounding of x), and the decimal reference (p <= 50) to 1e-12 relative on entries above its resolution."""
    rng = np.random.default_rng(int(p * 1000) % 2**31)
    worst = 0.0
    for trial in range(8):
        n = int(rng.integers(2, 7))
        k = int(rng.integers(1, n))
        x = np.round(rng.standard_normal(n), 1 + trial % 3)  # ties included
        reg = float(10.0 ** rng.uniform(-1.0, 1.0))
        y = topk_mask(x, k, reg, p)
        assert np.all((y >= 0.0) & (y <= 1.0))
        assert abs(y.sum() - k) <= 4 * n * 2.2e-16 * k
        perm = rng.permutation(n)
        np.testing.assert_array_equal(topk_mask(x[perm], k, reg, p), y[perm])
        if p > 50.0:  # the reference would need ~(p - 1) * 16 digits to resolve y ~ 1e-16
            continue
        digits = 60 if p <= 10.0 else 120
        ref = _mask_decimal(x, k, reg, p, digits=digits)
        big = np.abs(ref) > 10.0 ** (30 - digits)  # below: the bisection's residual
        np.testing.assert_array_equal(y[~big] <= 10.0 ** (40 - digits), True)
        worst = max(worst, float(np.max(np.abs(y[big] - ref[big]) / ref[big])))
        frac = (y > 0.0) & (y < 1.0)
        if np.count_nonzero(frac) > 1 and p > 1.5:
            # KKT: tau = x_j - reg y_j^(p-1) is one value on the fractional entries (up to |x| eps)
            with np.errstate(under="ignore"):
                tau = x[frac] - reg * y[frac] ** (p - 1.0)
            assert np.ptp(tau) <= 64 * 2.2e-16 * (np.max(np.abs(x)) + reg)
    assert worst <= 1e-12, worst


@pytest.mark.parametrize("p", [q for q in P_GRID if q <= 50.0])
def test_soft_sort_rank_sums(p):
    """soft_sort stays in P(x) (sum x, sorted) and soft_rank in P(rho) (sum n(n+1)/2), p up to 50 (beyond,
    the isotonic root finder can need more than max_iter bisections for a block of tiny targets beside
    O(1) linear terms: a ConvergenceWarning, recorded as an open limit)."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        n = int(rng.integers(2, 12))
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-2, 2)
        if trial % 3 == 0:
            x[rng.integers(0, n, 3)] = x[0]
        reg = float(10.0 ** rng.uniform(-2, 2))
        try:
            ys = soft_sort(x, reg, p)
        except ValueError as exc:  # reg max|x|^(p-1) beyond the float range: the documented error
            assert "`reg`" in str(exc) and p > 50.0
            continue
        assert abs(ys.sum() - x.sum()) <= 8 * n * 2.2e-16 * np.abs(x).sum()
        assert np.all(np.diff(ys) <= 0.0)
        yr = soft_rank(x, reg, p)
        assert abs(yr.sum() - n * (n + 1) / 2) <= 8 * n * 2.2e-16 * n * (n + 1) / 2
