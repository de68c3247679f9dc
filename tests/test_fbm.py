"""Tests of :mod:`theory.fbm` (paper key ``scaling``, Section 4.1) against independent references.

What is checked (every kernel against an independent reference, its input contract, the anchor library):

1. autocovariance against a 60-digit ``decimal`` reference (exp/ln) at lags 0..1e6 and H near 0, 1/2
   and 1, relative error <= 1e-10; the textbook difference of powers (and the expm1/log1p rewrite)
   shown failing that bound at large lags, as documented contrasts; defining identities.
2. Exact, no sampling: (a) the circulant's top-left n x n block is the Toeplitz covariance; (b) the
   embedding's eigenvalues are >= -tol on an H x n grid up to n = 2**16; the whole sampling map
   (normals -> fGn) has covariance A^T A equal to the Toeplitz matrix to rounding, and ``fgn`` is that
   map applied to ``rng.standard_normal``; the eigenvalue check raises on the wrong zero-middle row.
3. Statistical, fixed seeds, tolerances from the Monte-Carlo standard error with Bonferroni: (c)
   sample covariance vs Toeplitz and whitening by the inverse Cholesky factor; (d) variogram slope
   2H of ``fbm``; (e) a dense Cholesky sampler as an independent reference; (f) H = 1/2 is i.i.d. N(0, 1).
   A negative control (the zero-middle embedding with clipping, as in ``fracbm``) fails the same test.
4. The contract: shapes for every ``size``, determinism by seed, batch layout, the eigenvalue cache,
   one table of bad inputs, accepted input kinds, no mutation, and a Hypothesis test that only our
   own TypeError/ValueError escape.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from scipy.linalg import circulant, solve_triangular, toeplitz

import theory.fbm as tfbm
from theory.fbm import autocovariance, fbm, fgn
from theory.fbm._api import (
    _check_eigenvalues,
    _eigenvalues,
    _embedding_row,
    _transform,
    _weights,
)
from theory.rates import fit_rate

EPS = np.finfo(np.float64).eps

# ---------------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------------


def gamma_decimal(k, hurst, digits=60):
    """gamma_H(k) = ((k+1)^{2H} - 2 k^{2H} + (k-1)^{2H}) / 2 in `digits`-digit decimal arithmetic.

    H enters as the exact binary value of the float. The difference loses about log10(k^2) digits to
    cancellation (12 at k = 1e6), leaving more than 45 correct digits: an exact reference for float64.
    """
    k = abs(int(k))
    if k == 0:
        return 1.0
    with localcontext() as ctx:
        ctx.prec = digits
        a = 2 * Decimal(float(hurst))

        def power(x):
            return (a * Decimal(x).ln()).exp() if x > 0 else Decimal(0)

        return float((power(k + 1) - 2 * power(k) + power(k - 1)) / 2)


def gamma_naive(k, hurst):
    """The textbook formula in float64 (the one the public samplers use): cancels at large k."""
    k = np.abs(np.asarray(k, dtype=np.float64))
    a = 2.0 * hurst
    return 0.5 * (np.abs(k + 1) ** a - 2.0 * k**a + np.abs(k - 1) ** a)


def gamma_expm1(k, hurst):
    """The rewrite 1/2 k^{2H} [expm1(2H log1p(1/k)) + expm1(2H log1p(-1/k))], for k >= 2: it removes
    the cancellation of the large powers but keeps that of the two O(2H/k) expm1 terms."""
    k = np.asarray(k, dtype=np.float64)
    x = 1.0 / k
    a = 2.0 * hurst
    return 0.5 * k**a * (np.expm1(a * np.log1p(x)) + np.expm1(a * np.log1p(-x)))


def toeplitz_cov(n, hurst):
    """T_ij = gamma(|i - j|) from the decimal reference (independent of the kernel)."""
    return toeplitz([gamma_decimal(k, hurst, digits=40) for k in range(n)])


def cholesky_sampler(n, hurst, m, rng):
    """Dense Cholesky sampler, shape (m, n): X = Z L^T with T = L L^T (the exact O(n^3) method)."""
    L = np.linalg.cholesky(toeplitz_cov(n, hurst))
    return rng.standard_normal((m, n)) @ L.T


def zero_middle_row(n, hurst):
    """The wrong row [gamma(0..n-1), 0, gamma(n-1..1)] of fbm 0.3.0, fracbm 0.3.0 and scaling-resnets."""
    g = autocovariance(np.arange(n), hurst)
    return np.concatenate([g, [0.0], g[:0:-1]])


def clipped_zero_middle_sampler(n, hurst, m, rng):
    """fracbm's Davies-Harte: the zero-middle row, its negative eigenvalues clipped to 0 silently."""
    lam = np.maximum(_eigenvalues(zero_middle_row(n, hurst)), 0.0)
    w = np.sqrt(lam * n)
    w[0] *= math.sqrt(2.0)
    w[n] *= math.sqrt(2.0)
    return _transform(rng.standard_normal((m, 2 * n)), w)[:, :n]


def bonferroni_z(alpha, m):
    """Two-sided normal quantile for m simultaneous tests at family-wise level alpha."""
    return float(stats.norm.isf(alpha / (2 * m)))


# ---------------------------------------------------------------------------------------------------
# 1. autocovariance
# ---------------------------------------------------------------------------------------------------

ACV_HURSTS = [0.01, 0.49, 0.5, 0.51, 0.999]
# Fixed lags (small ones where the series needs most terms, powers of two and their neighbours, the
# end point 1e6) plus 30 log-uniform lags up to 1e6 from a fixed seed.
_FIXED_LAGS = [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 16, 33, 64, 100, 127, 1000, 4097, 10**4, 65537, 10**5,
               999_999, 10**6]
_RANDOM_LAGS = np.unique(np.round(np.exp(np.random.default_rng(2024).uniform(0.0, np.log(1e6), 30)))).astype(int)
ACV_LAGS = sorted(set(_FIXED_LAGS) | {int(k) for k in _RANDOM_LAGS})


@pytest.mark.parametrize("hurst", ACV_HURSTS)
def test_autocovariance_matches_decimal_reference(hurst):
    lags = np.array(ACV_LAGS)
    ours = autocovariance(lags, hurst)
    ref = np.array([gamma_decimal(k, hurst) for k in lags])
    if hurst == 0.5:  # white noise: exactly 0 at every non-zero lag, exactly 1 at lag 0
        np.testing.assert_array_equal(ours, np.where(lags == 0, 1.0, 0.0))
        return
    rel = np.abs(ours - ref) / np.abs(ref)
    assert rel.max() <= 1e-10, f"H = {hurst}: worst relative error {rel.max():.2e} at lag {lags[rel.argmax()]}"
    # measured: below 4e-16 everywhere (a few ulps); 1e-13 still leaves room for another libm's pow
    assert rel.max() <= 1e-13


@pytest.mark.parametrize("hurst", [0.01, 0.49, 0.51, 0.999])
def test_textbook_formula_fails_the_same_bound_at_large_lags(hurst):
    """Documented contrast: the difference of powers loses ~ log10(k^2) digits. Measured relative
    errors at k = 1e6: 3.1e-3 (H = 0.01), 5.6e-3 (0.49), 4.3e-3 (0.51), 1.8e-5 (0.999). The expm1/log1p
    rewrite still cancels its two O(2H/k) terms near H = 1/2: 1.0e-8 (0.49), 7.8e-9 (0.51)."""
    k = 10**6
    ref = gamma_decimal(k, hurst)
    assert abs(gamma_naive(k, hurst) - ref) / abs(ref) > 1e-10
    assert abs(float(autocovariance(k, hurst)) - ref) / abs(ref) <= 1e-13
    if hurst in (0.49, 0.51):
        assert abs(gamma_expm1(k, hurst) - ref) / abs(ref) > 1e-10


@settings(max_examples=200)
@given(hurst=st.floats(1e-6, 1 - 1e-6), k=st.integers(-40, 40))
def test_autocovariance_agrees_with_textbook_formula_at_small_lags(hurst, k):
    # At |k| <= 40 the difference of powers has absolute error below ~ 4 eps 41^2 < 2e-12.
    assert abs(float(autocovariance(k, hurst)) - float(gamma_naive(k, hurst))) <= 2e-12


@pytest.mark.parametrize("hurst", [0.05, 0.3, 0.5, 0.75, 0.97])
@pytest.mark.parametrize("n", [1, 2, 10, 1000, 100_000])
def test_autocovariance_sums_to_variance_of_the_sum(hurst, n):
    # Var(X_0 + ... + X_{n-1}) = Var B^H(n) = n^{2H} = sum_{|k| < n} (n - |k|) gamma(k): a telescoping
    # identity over all lags at once, summed exactly with fsum. For H < 1/2 the terms are negative and
    # cancel n down to n^{2H} (3.16 from 1e5 at H = 0.05), so the tolerance is the rounding bound for
    # terms with a few-ulp relative error, 8 eps sum|terms|. (The textbook formula passes this identity
    # too: its rounding errors telescope with it. Its failure shows lag by lag, in the tests above.)
    k = np.arange(1, n)
    g = autocovariance(k, hurst)
    terms = np.concatenate([[float(n)], 2.0 * (n - k) * g])
    total = math.fsum(terms)
    assert abs(total - n ** (2 * hurst)) <= 8 * EPS * np.abs(terms).sum()


def test_autocovariance_shape_symmetry_and_kinds():
    k = np.array([[0, 3], [-3, 7]])
    g = autocovariance(k, 0.8)
    assert g.shape == (2, 2) and g.dtype == np.float64
    assert g[0, 1] == g[1, 0]  # gamma(-k) = gamma(k), bit for bit
    assert isinstance(autocovariance(5, 0.3), np.float64)
    assert autocovariance(np.arange(0), 0.3).shape == (0,)
    expected = autocovariance(np.array([0, 1, 2, 5]), 0.3)
    for variant in ([0, 1, 2, 5], np.array([0, 1, 2, 5], np.int32), np.array([0.0, 1.0, 2.0, 5.0], np.float32),
                    np.array([0, -1, 2, -5]), np.array([0, 1, 2, 5], np.uint8)):
        np.testing.assert_array_equal(autocovariance(variant, 0.3), expected)
    assert autocovariance(0, 0.2) == 1.0
    # k = 1 closed form 2^{2H-1} - 1; at H = 3/4 it is sqrt(2) - 1 = 0.41421356237309504880...
    assert float(autocovariance(1, 0.75)) == pytest.approx(math.sqrt(2) - 1, rel=2 * EPS)


def test_autocovariance_does_not_modify_its_input():
    k = np.array([-4.0, 2.0, 9.0])
    saved = k.copy()
    autocovariance(k, 0.3)
    np.testing.assert_array_equal(k, saved)


# ---------------------------------------------------------------------------------------------------
# 2. Exact properties of the embedding and of the sampling map (no sampling)
# ---------------------------------------------------------------------------------------------------

GRID_HURSTS = [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.999]


@pytest.mark.parametrize("hurst", GRID_HURSTS)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 17, 64])
def test_circulant_top_left_block_is_the_toeplitz_covariance(n, hurst):
    row = _embedding_row(n, hurst)
    assert row.shape == (2 * n,)
    C = circulant(row)  # first column = row; the row is symmetric (c_k = c_{2n-k}), so C is symmetric
    np.testing.assert_array_equal(C, C.T)
    np.testing.assert_array_equal(C[:n, :n], toeplitz(autocovariance(np.arange(n), hurst)))  # exactly
    assert row[n] == autocovariance(n, hurst)  # the entry the zero-middle row gets wrong
    np.testing.assert_allclose(C[:n, :n], toeplitz_cov(n, hurst), rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("hurst", GRID_HURSTS)
def test_embedding_eigenvalues_are_nonnegative_on_a_grid(hurst):
    # Tolerance -1e-10 x max eigenvalue, the sampler's own (above rfft round-off, see _api._EIG_RTOL).
    # Measured: every eigenvalue is strictly positive here; the smallest ratio min/max is 1.3e-8
    # (H = 0.999, n = 2**16).
    for n in [1, 2, 3, 5, 8, 13, 31, 64, 100, 257, 1000, 1024, 4096, 2**14 + 1, 2**16]:
        lam = _eigenvalues(_embedding_row(n, hurst))
        assert lam.shape == (n + 1,)
        assert lam.min() >= -1e-10 * lam.max(), (n, hurst, lam.min(), lam.max())
        assert lam.min() > 0.0, (n, hurst, lam.min())
        # the eigenvalues average c_0 = gamma(0) = 1 (trace of the circulant / 2n)
        assert (lam[0] + lam[n] + 2 * lam[1:n].sum()) / (2 * n) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("hurst", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", [64, 1024])
def test_zero_middle_row_is_not_a_covariance_and_the_check_raises(n, hurst):
    # The row of the public samplers has negative eigenvalues here (anchors.md section 0.1).
    # Measured min/max: -1.2e-6 (H = 0.9, n = 1024) to -0.93 / max (H = 0.99).
    lam = _eigenvalues(zero_middle_row(n, hurst))
    assert lam.min() < -1e-6 * lam.max()
    with pytest.raises(RuntimeError, match=r"has eigenvalue -[0-9.e+-]+ < -1e-10 x max eigenvalue .* never clipped"):
        _check_eigenvalues(lam, n, hurst)


def test_eigenvalue_check_clips_only_round_off():
    lam = np.array([4.0, 1.0, -3e-10, 0.5])  # -7.5e-11 relative: round-off, clipped to 0
    out = _check_eigenvalues(lam, 3, 0.7)
    np.testing.assert_array_equal(out, [4.0, 1.0, 0.0, 0.5])
    np.testing.assert_array_equal(lam, [4.0, 1.0, -3e-10, 0.5])  # input untouched
    with pytest.raises(RuntimeError, match=r"eigenvalue -5\.000e-10"):
        _check_eigenvalues(np.array([4.0, -5e-10]), 1, 0.7)
    with pytest.raises(RuntimeError):
        _check_eigenvalues(np.zeros(3), 2, 0.7)  # no positive eigenvalue at all


@pytest.mark.parametrize("hurst", [0.01, 0.3, 0.5, 0.7, 0.95, 0.999])
@pytest.mark.parametrize("n", [1, 2, 5, 32, 100])
def test_sampling_map_has_exactly_the_toeplitz_covariance(n, hurst):
    # fGn = first n entries of _transform(z); it is linear in z, so with the 2n unit vectors as z,
    # row i of A is the image of e_i and the sample covariance is exactly Cov = A^T A.
    A = _transform(np.eye(2 * n), _weights(n, hurst))[:, :n]
    T = toeplitz_cov(n, hurst)
    # rounding: each entry is a sum of 2n products formed through one FFT: a few eps times log n
    np.testing.assert_allclose(A.T @ A, T, rtol=0, atol=50 * EPS)
    # the fBm at the end of [0, length]: Var B(length) = length^{2H} (sum of all increments)
    length = 3.0
    scale = (length / n) ** hurst
    assert (scale * A.sum(axis=1)) @ (scale * A.sum(axis=1)) == pytest.approx(length ** (2 * hurst), rel=1e-12)


@pytest.mark.parametrize("size", [(), 1, 4, (2, 3)])
def test_fgn_is_the_sampling_map_applied_to_the_generators_normals(size):
    n, hurst = 12, 0.83
    got = fgn(n, hurst, size=size, rng=np.random.default_rng(5))
    shape = (size,) if isinstance(size, int) else size
    m = math.prod(shape)
    z = np.random.default_rng(5).standard_normal((m, 2 * n))
    expected = _transform(z, _weights(n, hurst))[:, :n].reshape(shape + (n,))
    np.testing.assert_array_equal(got, expected)


def test_fbm_is_the_scaled_cumulative_sum_of_fgn():
    n, hurst, length = 50, 0.27, 2.5
    x = fgn(n, hurst, size=(3, 2), rng=np.random.default_rng(8))
    b = fbm(n, hurst, size=(3, 2), length=length, rng=np.random.default_rng(8))
    assert b.shape == (3, 2, n + 1)
    np.testing.assert_array_equal(b[..., 0], 0.0)
    np.testing.assert_allclose(b[..., 1:], np.cumsum(x, axis=-1) * (length / n) ** hurst, rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------------------------------------------
# 3. Statistical tests (fixed seeds; tolerances from the Monte-Carlo standard error)
# ---------------------------------------------------------------------------------------------------

STAT_HURSTS = [0.01, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.999]
STAT_N = 32
STAT_PATHS = 200_000
# Family-wise false-alarm level of each statistical test for a correct sampler, split over its
# entries by Bonferroni (entries are correlated, so the split is conservative). With fixed seeds the
# outcome is deterministic; alpha is the chance that a correct sampler fails at a fresh seed.
ALPHA = 1e-3


def covariance_excess(X, T):
    """max_ij |C_ij - T_ij| / se_ij and C, with C = X^T X / m (known zero mean, unbiased) and
    se_ij = sqrt((T_ii T_jj + T_ij^2) / m), the exact standard error for Gaussian X (Isserlis)."""
    m = X.shape[0]
    C = X.T @ X / m
    se = np.sqrt((np.outer(np.diag(T), np.diag(T)) + T**2) / m)
    return float(np.max(np.abs(C - T) / se)), C


def tolerance_z(n):
    return bonferroni_z(ALPHA, n * (n + 1) // 2)  # 4.76 at n = 32 (528 distinct entries)


@pytest.mark.parametrize("hurst", STAT_HURSTS)
def test_sample_covariance_and_whitening(hurst):
    n, m = STAT_N, STAT_PATHS
    T = toeplitz_cov(n, hurst)
    X = fgn(n, hurst, size=m, rng=np.random.default_rng([7, int(hurst * 1000)]))
    assert X.shape == (m, n)
    # (c1) covariance: every entry within z standard errors (se <= sqrt(2/m) = 0.0032)
    excess, C = covariance_excess(X, T)
    z = tolerance_z(n)
    assert excess <= z, f"H = {hurst}: max |C - T| / se = {excess:.2f} > {z:.2f}; max |C - T| = {np.abs(C - T).max():.4f}"
    # (c2) whitening: W = L^{-1} X^T with T = L L^T must be i.i.d. N(0, 1): means within z / sqrt(m),
    # covariance entries within z sqrt((1 + delta_ij) / m), Bonferroni over the n means and the
    # n(n+1)/2 covariance entries. For H = 0.999 T has condition number ~1e4: a covariance error in the
    # directions of small eigenvalues (invisible in (c1)) shows up here as a whitened variance != 1.
    L = np.linalg.cholesky(T)
    W = solve_triangular(L, X.T, lower=True).T
    zw = bonferroni_z(ALPHA, n + n * (n + 1) // 2)
    mean_excess = float(np.max(np.abs(W.mean(axis=0))) * math.sqrt(m))
    cov_excess, _ = covariance_excess(W, np.eye(n))
    assert mean_excess <= zw, f"H = {hurst}: whitened mean {mean_excess:.2f} standard errors from 0"
    assert cov_excess <= zw, f"H = {hurst}: whitened covariance {cov_excess:.2f} standard errors from I"
    # (c3) the whitened values are N(0, 1): Kolmogorov-Smirnov on 20 000 paths (640 000 values) pooled
    p = stats.kstest(W[:20_000].ravel(), "norm").pvalue
    assert p > ALPHA, f"H = {hurst}: KS p-value {p:.2e}"


@pytest.mark.parametrize("hurst", [0.9, 0.95, 0.99])
def test_negative_control_clipped_zero_middle_embedding_fails_the_covariance_test(hurst):
    # fracbm's sampler (zero-middle row, eigenvalues clipped) at the same n and sample size: its
    # covariance error (0.05 at H = 0.9, 0.2 at H = 0.95 at n = 64 per anchors.md) is rejected.
    # Measured at n = 32: 12.6 standard errors at H = 0.9 against the tolerance of 4.76.
    n, m = STAT_N, STAT_PATHS
    X = clipped_zero_middle_sampler(n, hurst, m, np.random.default_rng(11))
    excess, C = covariance_excess(X, toeplitz_cov(n, hurst))
    assert excess > tolerance_z(n), f"control not rejected: {excess:.2f} standard errors"


@pytest.mark.parametrize("hurst", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_variogram_slope_is_2H(hurst):
    # E|B(t + tau) - B(t)|^2 = tau^{2H} on a lag ladder tau = 1..128 steps (8 sizes), from 4000 paths of
    # n = 512 on [0, 1]. Each point averages over paths and times; even with fully correlated times its
    # relative standard error is at most sqrt(2/4000) = 0.022, i.e. 0.022 on the log scale, and the
    # least-squares slope over log tau in [0, 4.85] then has standard error <= 0.022 / (sqrt(8) 1.59)
    # = 0.005: tolerance 0.03 (6 standard errors).
    n, paths = 512, 4000
    B = fbm(n, hurst, size=paths, rng=np.random.default_rng([9, int(hurst * 100)]))
    lags = 2 ** np.arange(8)
    dt = 1.0 / n
    v = np.array([np.mean((B[:, tau:] - B[:, :-tau]) ** 2) for tau in lags])
    fit = fit_rate(lags * dt, v)
    assert abs(fit.slope - 2 * hurst) <= 0.03, (fit.slope, fit.ci)
    # the level as well: v(tau) = (tau dt)^{2H}, each point within 6 relative standard errors
    np.testing.assert_allclose(v, (lags * dt) ** (2 * hurst), rtol=6 * math.sqrt(2 / paths))


@pytest.mark.parametrize("hurst", [0.3, 0.9, 0.99])
def test_agrees_with_dense_cholesky_sampler(hurst):
    # Independent exact method (O(n^3) Cholesky of the decimal Toeplitz matrix). Exactly: both are
    # square roots of T. Statistically: the two sample covariances differ by at most z standard errors
    # of a difference, sqrt(2 (1 + T_ij^2) / m), Bonferroni over the n(n+1)/2 entries.
    n, m = 64, 50_000
    T = toeplitz_cov(n, hurst)
    L = np.linalg.cholesky(T)
    np.testing.assert_allclose(L @ L.T, T, rtol=0, atol=50 * EPS)
    Xc = cholesky_sampler(n, hurst, m, np.random.default_rng(12))
    Xd = fgn(n, hurst, size=m, rng=np.random.default_rng(13))
    Cc, Cd = Xc.T @ Xc / m, Xd.T @ Xd / m
    se = np.sqrt(2 * (1 + T**2) / m)
    z = bonferroni_z(ALPHA, n * (n + 1) // 2)
    assert np.max(np.abs(Cc - Cd) / se) <= z
    for C in (Cc, Cd):
        assert np.max(np.abs(C - T) / (se / math.sqrt(2))) <= z


def test_hurst_one_half_is_iid_standard_normal():
    n = 16
    # exactly: gamma = delta_k, all eigenvalues 1, the sampling map is orthogonal
    np.testing.assert_array_equal(_eigenvalues(_embedding_row(n, 0.5)), np.ones(n + 1))
    A = _transform(np.eye(2 * n), _weights(n, 0.5))[:, :n]
    np.testing.assert_allclose(A.T @ A, np.eye(n), rtol=0, atol=20 * EPS)
    # statistically: KS against N(0, 1) on all values, and lag-1 correlation within 5 standard errors
    X = fgn(n, 0.5, size=50_000, rng=np.random.default_rng(14))
    assert stats.kstest(X.ravel(), "norm").pvalue > ALPHA
    r1 = np.mean(X[:, 1:] * X[:, :-1])
    assert abs(r1) <= 5 / math.sqrt(X[:, 1:].size)
    # fbm at H = 1/2 is Brownian motion: increments of variance dt
    B = fbm(n, 0.5, size=50_000, length=2.0, rng=np.random.default_rng(15))
    inc = np.diff(B, axis=-1)
    assert np.var(inc) == pytest.approx(2.0 / n, rel=5 * math.sqrt(2 / inc.size))


def test_n_equal_one_is_a_standard_normal():
    for hurst in (0.05, 0.5, 0.95):
        A = _transform(np.eye(2), _weights(1, hurst))[:, :1]
        assert (A.T @ A).item() == pytest.approx(1.0, rel=4 * EPS)
    x = fgn(1, 0.8, size=40_000, rng=np.random.default_rng(16))
    assert x.shape == (40_000, 1)
    assert stats.kstest(x.ravel(), "norm").pvalue > ALPHA
    b = fbm(1, 0.8, size=5, length=4.0, rng=np.random.default_rng(17))
    assert b.shape == (5, 2)
    np.testing.assert_array_equal(b[:, 0], 0.0)


# ---------------------------------------------------------------------------------------------------
# 4. Contract: shapes, determinism, cache, bad inputs
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size, shape", [((), ()), (3, (3,)), ((2, 3), (2, 3)), (np.int64(2), (2,)),
                                         ([2, 1], (2, 1)), ((0,), (0,)), ((2, 0, 3), (2, 0, 3)),
                                         ((1, 1, 1), (1, 1, 1))])
def test_shapes(size, shape):
    x = fgn(7, 0.6, size=size, rng=np.random.default_rng(0))
    b = fbm(7, 0.6, size=size, rng=np.random.default_rng(0))
    assert x.shape == shape + (7,) and b.shape == shape + (8,)
    for a in (x, b):
        assert a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable


def test_determinism_by_seed_and_batch_layout():
    a = fgn(20, 0.7, size=(2, 3), rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a, fgn(20, 0.7, size=(2, 3), rng=np.random.default_rng(42)))
    np.testing.assert_array_equal(a, fgn(20, 0.7, size=6, rng=np.random.default_rng(42)).reshape(2, 3, 20))
    np.testing.assert_array_equal(a[0, 0], fgn(20, 0.7, rng=np.random.default_rng(42)))
    assert not np.array_equal(a, fgn(20, 0.7, size=(2, 3), rng=np.random.default_rng(43)))
    # one generator, two calls: independent draws (the generator advances)
    g = np.random.default_rng(1)
    assert not np.array_equal(fgn(20, 0.7, rng=g), fgn(20, 0.7, rng=g))
    # rng=None: a fresh unseeded generator each call
    assert not np.array_equal(fgn(20, 0.7), fgn(20, 0.7))


def test_eigenvalue_cache_is_reused():
    _weights.cache_clear()
    fgn(300, 0.61, size=2, rng=np.random.default_rng(0))
    info = _weights.cache_info()
    assert (info.misses, info.hits) == (1, 0)
    w1 = _weights(300, 0.61)
    fbm(300, np.float64(0.61), rng=np.random.default_rng(0))  # same key: hurst is passed as a float
    info = _weights.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    assert _weights(300, 0.61) is w1
    assert not w1.flags.writeable  # nobody can corrupt the cached weights
    fgn(301, 0.61, rng=np.random.default_rng(0))
    assert _weights.cache_info().misses == 2
    assert _weights.cache_info().maxsize == 32  # bounded


FG = "theory.fbm.fgn"
FB = "theory.fbm.fbm"
AC = "theory.fbm.autocovariance"
R = np.random.default_rng(0)

BAD_CALLS = [
    # --- n
    ("fgn-n-0", lambda: fgn(0, 0.5, rng=R), ValueError, rf"`n` of {FG} must be >= 1; got 0"),
    ("fgn-n-negative", lambda: fgn(-3, 0.5, rng=R), ValueError, rf"`n` of {FG} must be >= 1; got -3"),
    ("fgn-n-float", lambda: fgn(2.5, 0.5, rng=R), TypeError, rf"`n` of {FG} must be an integer; got 2\.5"),
    ("fgn-n-integral-float", lambda: fgn(4.0, 0.5, rng=R), TypeError, rf"`n` of {FG} must be an integer; got 4\.0"),
    ("fgn-n-bool", lambda: fgn(True, 0.5, rng=R), TypeError, rf"`n` of {FG} must be an integer; got True"),
    ("fgn-n-string", lambda: fgn("8", 0.5, rng=R), TypeError, rf"`n` of {FG} must be an integer; got '8'"),
    ("fbm-n-0", lambda: fbm(0, 0.5, rng=R), ValueError, rf"`n` of {FB} must be >= 1; got 0"),
    ("fbm-n-float", lambda: fbm(1.5, 0.5, rng=R), TypeError, rf"`n` of {FB} must be an integer"),
    # --- hurst
    ("fgn-hurst-0", lambda: fgn(4, 0.0, rng=R), ValueError, rf"`hurst` of {FG} must lie in \(0\.0, 1\.0\); got 0\.0"),
    ("fgn-hurst-1", lambda: fgn(4, 1, rng=R), ValueError, rf"`hurst` of {FG} must lie in \(0\.0, 1\.0\); got 1\.0"),
    ("fgn-hurst-negative", lambda: fgn(4, -0.2, rng=R), ValueError, rf"`hurst` of {FG} must lie in \(0\.0, 1\.0\)"),
    ("fgn-hurst-above", lambda: fgn(4, 1.5, rng=R), ValueError, rf"`hurst` of {FG} must lie in \(0\.0, 1\.0\); got 1\.5"),
    ("fgn-hurst-nan", lambda: fgn(4, float("nan"), rng=R), ValueError, rf"`hurst` of {FG} must lie in .*got nan"),
    ("fgn-hurst-inf", lambda: fgn(4, np.inf, rng=R), ValueError, rf"`hurst` of {FG} must lie in .*got inf"),
    ("fgn-hurst-string", lambda: fgn(4, "0.5", rng=R), TypeError, rf"`hurst` of {FG} must be a real number; got '0\.5'"),
    ("fgn-hurst-none", lambda: fgn(4, None, rng=R), TypeError, rf"`hurst` of {FG} must be a real number; got None"),
    ("fgn-hurst-array", lambda: fgn(4, np.array([0.5]), rng=R), TypeError, rf"`hurst` of {FG} must be a real number"),
    ("fgn-hurst-complex", lambda: fgn(4, 0.5 + 0j, rng=R), TypeError, rf"`hurst` of {FG} must be a real number"),
    ("fbm-hurst-nan", lambda: fbm(4, np.nan, rng=R), ValueError, rf"`hurst` of {FB} must lie in \(0\.0, 1\.0\)"),
    ("fbm-hurst-1", lambda: fbm(4, 1.0, rng=R), ValueError, rf"`hurst` of {FB} must lie in \(0\.0, 1\.0\); got 1\.0"),
    # --- size
    ("fgn-size-negative", lambda: fgn(4, 0.5, size=-1, rng=R), ValueError,
     rf"`size` of {FG} must hold non-negative ints; got \(-1,\)"),
    ("fgn-size-tuple-negative", lambda: fgn(4, 0.5, size=(2, -3), rng=R), ValueError,
     rf"`size` of {FG} must hold non-negative ints; got \(2, -3\)"),
    ("fgn-size-float", lambda: fgn(4, 0.5, size=2.0, rng=R), TypeError,
     rf"`size` of {FG} must be an int or a tuple of ints; got 2\.0"),
    ("fgn-size-tuple-float", lambda: fgn(4, 0.5, size=(2, 1.5), rng=R), TypeError,
     rf"`size` of {FG} must be an int or a tuple of ints; got \(2, 1\.5\)"),
    ("fgn-size-none", lambda: fgn(4, 0.5, size=None, rng=R), TypeError,
     rf"`size` of {FG} must be an int or a tuple of ints; got None"),
    ("fgn-size-bool", lambda: fgn(4, 0.5, size=True, rng=R), TypeError, rf"`size` of {FG} must be an int or a tuple"),
    ("fgn-size-string", lambda: fgn(4, 0.5, size="3", rng=R), TypeError, rf"`size` of {FG} must be an int or a tuple"),
    ("fgn-size-nested", lambda: fgn(4, 0.5, size=((2,),), rng=R), TypeError, rf"`size` of {FG} must be an int or a tuple"),
    ("fbm-size-negative", lambda: fbm(4, 0.5, size=(-1,), rng=R), ValueError, rf"`size` of {FB} must hold non-negative"),
    # --- rng
    ("fgn-rng-negative", lambda: fgn(4, 0.5, rng=-1), ValueError, rf"`rng` of {FG} must be a non-negative int seed"),
    ("fgn-rng-randomstate", lambda: fgn(4, 0.5, rng=np.random.RandomState(0)), TypeError,
     rf"`rng` of {FG} must be None, an int seed or a numpy\.random\.Generator; got RandomState"),
    ("fgn-rng-float", lambda: fgn(4, 0.5, rng=1.0), TypeError, rf"`rng` of {FG} must be None, an int seed"),
    ("fbm-rng-string", lambda: fbm(4, 0.5, rng="seed"), TypeError, rf"`rng` of {FB} must be None, an int seed"),
    ("fgn-n-huge", lambda: fgn(10**12, 0.5, rng=R), ValueError,
     rf"`n` of {FG} = 1000000000000 needs 43\.7 TiB of memory, above the limit of 16\.0 GiB"),
    ("fbm-size-huge", lambda: fbm(4, 0.5, size=(10**6, 10**6), rng=R), ValueError, rf"`size` of {FB} = .* needs"),
    # --- length
    ("fbm-length-0", lambda: fbm(4, 0.5, length=0.0, rng=R), ValueError,
     rf"`length` of {FB} must lie in \(0\.0, inf\); got 0\.0"),
    ("fbm-length-negative", lambda: fbm(4, 0.5, length=-1, rng=R), ValueError,
     rf"`length` of {FB} must lie in \(0\.0, inf\); got -1\.0"),
    ("fbm-length-nan", lambda: fbm(4, 0.5, length=np.nan, rng=R), ValueError, rf"`length` of {FB} must lie in .*got nan"),
    ("fbm-length-inf", lambda: fbm(4, 0.5, length=np.inf, rng=R), ValueError, rf"`length` of {FB} must lie in .*got inf"),
    ("fbm-length-string", lambda: fbm(4, 0.5, length="1", rng=R), TypeError, rf"`length` of {FB} must be a real number"),
    ("fbm-length-none", lambda: fbm(4, 0.5, length=None, rng=R), TypeError, rf"`length` of {FB} must be a real number"),
    # --- autocovariance
    ("acv-k-fraction", lambda: autocovariance(-0.5, 0.7), ValueError, rf"`k` of {AC} must hold integer lags; got -0\.5"),
    ("acv-k-array-fraction", lambda: autocovariance([1, 2.25], 0.7), ValueError, rf"`k` of {AC} must hold integer lags; got 2\.25"),
    ("acv-k-nan", lambda: autocovariance([1, np.nan], 0.7), ValueError, rf"`k` of {AC} must be finite; got NaN or inf"),
    ("acv-k-inf", lambda: autocovariance(-np.inf, 0.7), ValueError, rf"`k` of {AC} must be finite"),
    ("acv-k-huge", lambda: autocovariance(2**53, 0.7), ValueError, rf"`k` of {AC} must satisfy \|k\| < 2\*\*53"),
    ("acv-k-bool", lambda: autocovariance(True, 0.7), TypeError, rf"`k` of {AC} must hold integer lags; got dtype bool"),
    ("acv-k-complex", lambda: autocovariance(1 + 0j, 0.7), TypeError, rf"`k` of {AC} must be a real numeric array; got dtype complex128"),
    ("acv-k-string", lambda: autocovariance("3", 0.7), TypeError, rf"`k` of {AC} must be a real numeric array; got dtype <U1"),
    ("acv-k-object", lambda: autocovariance(np.array([None]), 0.7), TypeError, rf"`k` of {AC} must be a real numeric array; got dtype object"),
    ("acv-k-ragged", lambda: autocovariance([[1], [1, 2]], 0.7), TypeError, rf"`k` of {AC} must be a real array"),
    ("acv-hurst-0", lambda: autocovariance(1, 0.0), ValueError, rf"`hurst` of {AC} must lie in \(0\.0, 1\.0\); got 0\.0"),
    ("acv-hurst-nan", lambda: autocovariance(1, np.nan), ValueError, rf"`hurst` of {AC} must lie in \(0\.0, 1\.0\); got nan"),
    ("acv-hurst-string", lambda: autocovariance(1, "a"), TypeError, rf"`hurst` of {AC} must be a real number"),
]


def _ids(rows):
    return [pytest.param(*row[1:4], id=row[0]) for row in rows]


@pytest.mark.parametrize("call, exc, pattern", _ids(BAD_CALLS))
def test_bad_input_raises_named_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert type(info.value) is exc


def test_no_regex_in_table_is_vacuous():
    for name, _, _, pattern in BAD_CALLS:
        assert re.search(r"`\w+` of theory", pattern.replace("\\", "")), name  # names the argument
        assert len(re.sub(r"[.*\\]", "", pattern)) >= 20, name


def test_public_names():
    assert sorted(tfbm.__all__) == ["autocovariance", "fbm", "fgn"]
    for name in tfbm.__all__:
        assert getattr(tfbm, name).__doc__.count("Examples") == 1


_ANY = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 40), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3), st.tuples(st.integers(-2, 3), st.integers(-2, 3)),
    st.lists(st.floats(-2, 2), max_size=3), st.complex_numbers(max_magnitude=2),
)


@settings(max_examples=150)
@given(n=_ANY, hurst=_ANY, size=_ANY, length=_ANY)
def test_arbitrary_arguments_raise_only_our_errors(n, hurst, size, length):
    for call in (lambda: fgn(n, hurst, size=size, rng=np.random.default_rng(0)),
                 lambda: fbm(n, hurst, size=size, length=length, rng=np.random.default_rng(0))):
        try:
            out = call()
        except (TypeError, ValueError) as exc:
            assert "theory.fbm." in str(exc)
        else:
            assert np.all(np.isfinite(out))


@settings(max_examples=150)
@given(k=hnp.arrays(dtype=hnp.scalar_dtypes(), shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)),
       hurst=st.floats(0.01, 0.99))
def test_arbitrary_lag_arrays_raise_only_our_errors(k, hurst):
    try:
        out = autocovariance(k, hurst)
    except (TypeError, ValueError) as exc:
        assert f"of {AC}" in str(exc)
    else:
        assert np.all(np.isfinite(out)) and np.shape(out) == k.shape


def test_accepted_scalar_kinds_give_identical_outputs():
    expected = fgn(8, 0.75, size=(2,), rng=np.random.default_rng(3))
    for n, hurst, size in [(np.int64(8), np.float64(0.75), np.int32(2)), (np.uint16(8), np.float32(0.75), (np.int8(2),)),
                           (8, 0.75, [2])]:
        np.testing.assert_array_equal(fgn(n, hurst, size=size, rng=np.random.default_rng(3)), expected)
    expected = fbm(8, 0.75, size=2, length=2.0, rng=np.random.default_rng(3))
    for length in (2, np.float32(2.0), np.int64(2)):
        np.testing.assert_array_equal(fbm(8, 0.75, size=2, length=length, rng=np.random.default_rng(3)), expected)


def test_rng_follows_numpys_convention():
    # an int seed (or a SeedSequence) is np.random.default_rng(seed), as in NumPy (before: TypeError)
    np.testing.assert_array_equal(fgn(8, 0.3, size=2, rng=4), fgn(8, 0.3, size=2, rng=np.random.default_rng(4)))
    np.testing.assert_array_equal(fbm(8, 0.3, rng=np.random.SeedSequence(2)),
                                  fbm(8, 0.3, rng=np.random.default_rng(np.random.SeedSequence(2))))
