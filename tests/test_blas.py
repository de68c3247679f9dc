"""theory._blas: the kernels' matrix products through NumPy's bundled OpenBLAS (or Numba's np.dot)."""

import numpy as np
import pytest

from theory import _blas
from theory._numba_cache import _blas_token

SHAPES = [(1, 1, 1), (2, 3, 5), (16, 64, 16), (64, 16, 16), (256, 64, 64), (7, 300, 2)]


@pytest.mark.parametrize("M, K, N", SHAPES)
def test_products_equal_numpys(M, K, N):
    # with NumPy's own library the product is NumPy's, bit for bit; with Numba's np.dot, to rounding
    rng = np.random.default_rng(M * 10_000 + K * 100 + N)
    a, b, bt, at = (rng.standard_normal(s) for s in [(M, K), (N, K), (K, N), (K, M)])
    outs = [np.full((M, N), np.nan) for _ in range(3)]
    _blas.gemm_nt(a, b, outs[0])
    _blas.gemm_nn(a, bt, outs[1])
    _blas.gemm_tn(at, bt, outs[2])
    for got, want in zip(outs, [a @ b.T, a @ bt, at.T @ bt]):
        if _blas.LIBRARY is not None:
            np.testing.assert_array_equal(got, want)
        else:  # pragma: no cover
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * np.abs(want).max())


def test_rows_spaced_further_apart():
    # a slice of rows of a wider array (row stride > number of columns), as the kernels pass scratch
    rng = np.random.default_rng(3)
    wide = rng.standard_normal((12, 9))
    a = wide[2:7, :5]  # (5, 5), row stride 9
    b = rng.standard_normal((4, 5))
    out_wide = np.full((6, 8), np.nan)
    out = out_wide[1:6, :4]
    _blas.gemm_nt(a, b, out)
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-15, atol=1e-15)
    assert np.isnan(out_wide[0]).all() and np.isnan(out_wide[:, 4:]).all()  # nothing written outside


def test_the_library_is_numpys_and_in_the_cache_signature():
    token = _blas_token()
    if _blas.LIBRARY is None:  # pragma: no cover - NumPy built against another BLAS
        assert token == ""
    else:
        assert _blas.LIBRARY.endswith(token) and "numpy.libs" in _blas.LIBRARY
