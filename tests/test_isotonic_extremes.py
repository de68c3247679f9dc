"""Isotonic regression at extreme magnitudes and SciPy's keyword (review findings).

Before the fix, p = 1.5 on y ~ 1e-200 (or 1e300) returned a fit wrong in every digit: |x - y|^(q-1)
with q - 1 = 2 underflowed (overflowed) in the block equation. The p-norm path now scales y by a power
of two to max|y| ~ 1 first (the linear term by the matching power)."""

import numpy as np
import pytest

from theory.isotonic import isotonic_regression

Y = np.array([3.0, 1.0, 2.0, 0.5, 4.0, 3.5, 3.7, -1.0])


@pytest.mark.parametrize("p", [1.01, 4.0 / 3.0, 1.5, 3.0, 10.0, 2.0])
@pytest.mark.parametrize("scale", [1e-300, 3e-200, 1e-100, 7e99, 1e200, 1e300])
def test_scale_covariance(p, scale):
    """iso(c y) = c iso(y) to 1e-13 relative, with the same blocks, for c from 1e-300 to 1e300."""
    x0, b0 = isotonic_regression(Y, p=p)
    x, b = isotonic_regression(scale * Y, p=p)
    np.testing.assert_array_equal(b, b0)
    np.testing.assert_allclose(x, scale * x0, rtol=1e-13, atol=0)


def test_scale_covariance_with_linear_term():
    """With c: (y, c) -> (s y, s^(q-1) c) maps the fit to s x (s a power of ten here, not of two)."""
    p = 1.5
    q = p / (p - 1.0)
    c = np.array([0.3, -0.1, 0.2, 0.0, -0.4, 0.1, 0.05, 0.2])
    x0, b0 = isotonic_regression(Y, p=p, c=c)
    for s in (1e-100, 1e-20, 1e20, 1e100):
        x, b = isotonic_regression(s * Y, p=p, c=c * s ** (q - 1.0))
        np.testing.assert_array_equal(b, b0)
        np.testing.assert_allclose(x, s * x0, rtol=1e-13, atol=0)


def test_weights_keyword():
    """SciPy's keyword ``weights`` works and equals ``w``; both at once is a TypeError."""
    w = np.array([1.0, 2.0, 3.0, 1.0, 1.0, 2.0, 1.0, 5.0])
    for p in (2.0, 1.5):
        a = isotonic_regression(Y, w=w, p=p)
        b = isotonic_regression(Y, weights=w, p=p)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(TypeError, match="`weights`"):
        isotonic_regression(Y, w=w, weights=w)
