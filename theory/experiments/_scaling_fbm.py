"""The fBm paths of Figure 6 of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in
the Large-depth Regime"; Figure 2.6 of P. Marion's thesis): the empirical variogram whose log-log slope
is 2H for a fractional Brownian motion of Hurst index H.
"""

from __future__ import annotations

import numpy as np

#: the three Hurst indices of Figure 6 (rough, Brownian, smooth)
FIG6 = {"rough": 0.2, "brownian": 0.5, "smooth": 0.8}


def variogram(paths, lags):
    """Empirical E|B_{t + tau} - B_t|^2 over paths and start times, for integer step lags."""
    return np.array([np.mean((paths[..., lag:] - paths[..., :-lag]) ** 2) for lag in lags])
