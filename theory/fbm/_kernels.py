"""Private Numba kernel of :mod:`theory.fbm`: the autocovariance of fractional Gaussian noise.

One core, :func:`_autocovariance`, evaluates gamma_H(k) = 1/2 (|k+1|^{2H} - 2|k|^{2H} + |k-1|^{2H})
at non-negative integer lags without the catastrophic cancellation of that difference of powers.
Float64 throughout, no ``fastmath``, no validation (the API in ``_api.py`` validates), output
preallocated by the caller.
"""

from __future__ import annotations

import math

from numba import njit

# Stop the series once a term is below 2**-56 of the partial sum: the terms all have one sign and
# the ratio of consecutive terms is below x**2 <= 1/4, so the neglected tail is at most a third of
# the last term, i.e. below eps/24 relative.
_SERIES_RTOL = 2.0**-56


@njit(cache=True)
def _autocovariance(lags, a, out):
    r"""Autocovariance of unit-variance fGn at the lags ``lags``, written into ``out``.

    With :math:`a = 2H \in (0, 2)` and an integer lag :math:`k \ge 0`,

    .. math::

        \gamma(k) = \tfrac12\left(|k+1|^{a} - 2|k|^{a} + |k-1|^{a}\right).

    * k = 0: gamma = 1.
    * k = 1: gamma = 2^{a-1} - 1, evaluated as ``expm1((a - 1) log 2)`` (accurate near H = 1/2).
    * k >= 2: with x = 1/k, gamma = 1/2 k^a [(1+x)^a + (1-x)^a - 2] and the binomial series

      .. math::

          (1+x)^a + (1-x)^a - 2 = 2 \sum_{j \ge 1} \binom{a}{2j} x^{2j},
          \qquad \binom{a}{2j+2} = \binom{a}{2j} \frac{(a-2j)(a-2j-1)}{(2j+1)(2j+2)},

      so gamma(k) = k^a \sum_{j \ge 1} \binom{a}{2j} k^{-2j}. For 0 < a < 2 every term has the sign
      of a(a - 1) (the factor (a - 2j)(a - 2j - 1) is positive for j >= 1), so the sum has no
      cancellation and each term is at most x^2 <= 1/4 times the previous one: relative error a
      few ulps at every lag and every H, including H near 1/2 where gamma is tiny. (The form
      ``expm1(a log1p(x)) + expm1(a log1p(-x))`` still cancels its two O(a x) leading terms and
      loses about k / |a - 1| ulps: 1e-8 relative at k = 1e6, H = 0.49.) At a = 1 (H = 1/2)
      every term is exactly 0.

    Parameters
    ----------
    lags : float64 array, shape (m,)
        Non-negative integer-valued lags (|k| already taken), below 2**53.
    a : float
        2H, in (0, 2).
    out : float64 array, shape (m,)
        Receives gamma(lags).
    """
    c1 = 0.5 * a * (a - 1.0)  # binom(a, 2)
    g1 = math.expm1((a - 1.0) * math.log(2.0))
    for i in range(lags.size):
        k = lags[i]
        if k == 0.0:
            out[i] = 1.0
        elif k == 1.0:
            out[i] = g1
        elif c1 == 0.0:
            out[i] = 0.0
        else:
            x2 = 1.0 / (k * k)
            term = c1 * x2
            total = term
            j = 1.0
            while True:
                term *= (a - 2.0 * j) * (a - 2.0 * j - 1.0) / ((2.0 * j + 1.0) * (2.0 * j + 2.0)) * x2
                j += 1.0
                if abs(term) <= _SERIES_RTOL * abs(total):
                    break
                total += term
            out[i] = math.pow(k, a) * total
