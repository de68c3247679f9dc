r"""Partial sorting for the top-k operators: only a window of the largest entries is sorted.

Why a window suffices (paper key ``topk``, Eq. (7.5) with :math:`\mathbf w=\mathbf 1_k`). In sorted
order the pooled problem is :math:`\min_{v_1\ge\dots\ge v_n}\sum_i h_i(v_i)` with
:math:`h_i(v)=r^*(s_i-v)+w_i\varphi(v)`. Each :math:`h_i` alone is minimised at :math:`m_i`:
:math:`s_i-\lambda` (mask, i < k), :math:`g_i` with :math:`g+\lambda g^{p-1}=s_i` (magnitude, i < k)
and :math:`s_i` (both, i >= k). Both runs :math:`m_0\ge\dots\ge m_{k-1}` and
:math:`m_k\ge\dots\ge m_{n-1}` are already non-increasing (the s are sorted and the maps are
increasing), so the only possible violation is between positions k - 1 and k. Pool adjacent violators
started from singletons therefore only ever grows one block B = [a, b) around that pair (a merge
happens only with the block's neighbours, and the rest stays ordered); every other entry keeps
:math:`v_i=m_i`, i.e. :math:`y_i=w_i` (mask) or :math:`y_i=g_i`, 0 (magnitude). In particular every
entry after b has :math:`y_i=0`, and B contains only entries with :math:`s_i>\gamma_B`.

Hence the exact algorithm on a window: take the K largest entries (``np.partition``, O(n)), sort only
them, solve on them, and accept the result when the pooled value at the window's edge is strictly
above the first entry left out (the KKT conditions of the full problem then hold with the left-out
entries as singletons at :math:`v_i=s_i`: they are ordered below the window and carry zero
multipliers). Otherwise double K. The result equals the full-sort solution because the solvers'
arithmetic on the window does not depend on the entries after it: pool adjacent violators processes
them as separate blocks that never merge with the window's (guaranteed by a margin of n eps above
the left-out value, which covers the rounding of pooled ties), and the magnitude solver for p != 2
and the mask solver for p not in {2, 4/3} re-solve the block over its members only. The window is a set {a_i > t}, so ties never straddle its edge.
"""

from __future__ import annotations

import numpy as np

__all__ = ["solve_windowed", "window_above"]


def window_above(a, thr):
    """Indices of the entries of ``a`` strictly above ``thr``, in descending order, and the largest
    entry not above it (None when every entry is: then the window is the full array).

    The order among equal entries is NumPy's default (unstable, vectorised) argsort's: the solvers see
    only the sorted values and the positions, which are the same for every order of the ties, and
    tied entries receive equal outputs, so the result does not depend on it (tested bit for bit
    through permutation equivariance); a stable sort is several times slower on large windows."""
    above = a > thr
    cand = np.flatnonzero(above)
    if cand.shape[0] == a.shape[0]:
        return np.argsort(-a), None
    nxt = float(np.max(a, where=~above, initial=-np.inf))
    return cand[np.argsort(-a[cand])], nxt


def _kth_largest(a, K):
    n = a.shape[0]
    return float(np.partition(a, n - K)[n - K])


def solve_windowed(a, k, solver, thr0, full=False):
    """Run ``solver(order, nxt)`` on growing windows {a > thr} until it accepts one (returns a tuple).

    ``a``: the sorted quantity (x for the mask, |x| for the magnitude); ``thr0``: first threshold
    (the callers pass a proven lower bound on what the pooled block can contain, so the first window
    is normally accepted); ``full``: skip the window (the full argsort; the reference the window must
    reproduce). A rejecting solver returns None (then the window size doubles) or a float, a lower
    bound on the pooled value (the window's own pooled value, which can only grow when more entries
    join the block), below which the next threshold is put.
    """
    n = a.shape[0]
    thr = -np.inf if full else thr0
    while True:
        order, nxt = window_above(a, thr) if thr > -np.inf else (np.argsort(-a), None)
        out = solver(order, nxt) if order.shape[0] > k else None
        if isinstance(out, tuple):
            return out
        if nxt is None:  # unreachable: the full window is always accepted
            raise RuntimeError("theory.topk: the full window was rejected")
        K = order.shape[0]
        if out is None:
            new = _kth_largest(a, 2 * K + 1) if 2 * K + 1 < n else -np.inf
        else:
            new = out
        thr = min(new, float(np.nextafter(nxt, -np.inf)))  # strictly below the entry left out
