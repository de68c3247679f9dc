"""Fractional Gaussian noise and fractional Brownian motion, sampled exactly (paper key ``scaling``).

Public names: :func:`autocovariance` (the fGn autocovariance gamma_H(k), accurate at every lag),
:func:`fgn` (unit-variance fractional Gaussian noise, shape ``(*size, n)``) and :func:`fbm` (fractional
Brownian motion from 0 on [0, length], shape ``(*size, n + 1)``). Sampling is the Davies–Harte circulant
embedding with the standard row [gamma(0..n), gamma(n-1..1)], exact for every H in (0, 1);
``scaling`` Section 4.1 initialises ResNet weights as increments of fBm.
"""

from ._api import autocovariance, fbm, fgn

__all__ = ["autocovariance", "fbm", "fgn"]
