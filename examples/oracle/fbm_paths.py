"""Adapter: the `fbm` package's fbm(n, hurst, length) as the oracle's fbm(n, hurst, size, length, rng) -> (size, n + 1).

    theory oracle verify fbm fbm:fbm --adapter examples/oracle/fbm_paths.py

`fbm` draws from NumPy's global state, so the adapter seeds it from the oracle's Generator. Its
Davies-Harte embedding falls back to the exact Hosking method (with a warning, silenced here) where
the embedding is not non-negative definite.
"""

import warnings

import numpy as np


def adapt(fn):
    def call(n, hurst, size, length, rng):
        np.random.seed(int(rng.integers(2**32)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array([fn(n, hurst, length=length, method="daviesharte") for _ in range(size)])
    return call
