"""The root finders' settings of :mod:`theory.topk`: one validation of ``max_iter`` and ``tol`` for
every public function that takes them (the masks, the magnitudes, the Fenchel-Young losses, the soft
sort and rank)."""

from __future__ import annotations

import math

from .._validation import check_int, check_interval

#: the largest ``max_iter`` accepted (the kernels count iterations in 64-bit integers)
MAX_ITER_LIMIT = 2**62


def check_roots(max_iter, tol, func):
    """Validate ``max_iter`` (None or an int >= 1) and ``tol`` (None or a finite float >= 0); return them
    as the kernels take them, -1 and -1.0 for None (each solve's own cap and rule)."""
    mi = -1 if max_iter is None else check_int(max_iter, "max_iter", func=func, minimum=1, maximum=MAX_ITER_LIMIT)
    tl = -1.0 if tol is None else check_interval(tol, "tol", 0.0, math.inf, func=func, closed="left")
    return mi, tl
