"""Adapter: `fracbm` (0.3.0) Davies-Harte motion(n, H) as the oracle's fbm(n, hurst, size, length, rng).

    theory oracle verify fbm fracbm.daviesharte:motion --adapter examples/oracle/fracbm_paths.py

fracbm returns the cumulative sum of n unit-step fGn values (no leading 0, time horizon n): the adapter
prepends B(0) = 0 and rescales to [0, length] by self-similarity, (length / n)^H. It draws from
NumPy's global state, seeded here from the oracle's Generator.
"""

import numpy as np


def adapt(fn):
    def call(n, hurst, size, length, rng):
        np.random.seed(int(rng.integers(2**32)))
        paths = np.array([fn(n, hurst) for _ in range(size)]) * (length / n) ** hurst
        return np.concatenate([np.zeros((size, 1)), paths], axis=1)
    return call
