"""Allocation-free finiteness test for large float64 arrays (private Numba kernel).

``np.isfinite(a).all()`` allocates a boolean array of a's size; for a (N + 1, B, d) trajectory that
is tens of megabytes and a measurable share of a forward pass. This kernel reads the bit patterns:
a float64 is NaN or infinite exactly when its 11 exponent bits are all ones. The integer OR
reduction vectorises.
"""

import numpy as np
from numba import njit

_EXPONENT = np.uint64(0x7FF0000000000000)


@njit(cache=True)
def _any_nonfinite(bits):
    """True when some float64, given as its uint64 bit pattern, is NaN or +-inf."""
    hit = np.uint64(0)
    for i in range(bits.size):
        hit |= np.uint64((bits[i] & _EXPONENT) == _EXPONENT)
    return hit != 0


def all_finite(a):
    """Whether every element of the float64 array ``a`` is finite (no copy for contiguous input)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return not _any_nonfinite(a.reshape(-1).view(np.uint64))
