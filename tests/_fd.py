"""Central finite differences shared by the unit tests (the references of the Jacobian tests)."""

import numpy as np


def central_jacobian(f, x, h=1e-6):
    """(f(x + h e_j) - f(x - h e_j)) / (2h) for every coordinate j of the 1-D array ``x``.

    Returns the (m, n) Jacobian for a vector-valued f with m outputs, the (n,) gradient for a scalar f.
    """
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)
