"""Adapter: `fracbm` (0.3.0) Davies-Harte as the oracle's fgn(n, hurst, size, rng) -> draws (size, n).

    theory oracle verify fgn fracbm.daviesharte:noise --adapter examples/oracle/fracbm_fgn.py

`fracbm` draws from NumPy's global state, so the adapter seeds it from the oracle's Generator.
"""

import numpy as np


def adapt(fn):
    def call(n, hurst, size, rng):
        np.random.seed(int(rng.integers(2**32)))
        return np.array([fn(n, hurst) for _ in range(size)])
    return call
