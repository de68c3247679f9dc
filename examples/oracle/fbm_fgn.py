"""Adapter: the `fbm` package (0.3.0) as the oracle's fgn(n, hurst, size, rng) -> draws (size, n).

    theory oracle verify fgn fbm:fgn --adapter examples/oracle/fbm_fgn.py

`fbm` draws from NumPy's global state, so the adapter seeds it from the oracle's Generator; on
n = length it returns unit-variance noise. For large H its Davies-Harte embedding is not
non-negative definite: it warns and falls back to the (exact, slower) Hosking method; the warning
is silenced here, since it announces the fallback, not an error.
"""

import warnings

import numpy as np


def adapt(fn):
    def call(n, hurst, size, rng):
        np.random.seed(int(rng.integers(2**32)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array([fn(n, hurst, length=n, method="daviesharte") for _ in range(size)])
    return call
