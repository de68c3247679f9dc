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
re-solves the block over its members only. The window is the set {a_i > t} for the (K+1)-th largest
value t, so ties never straddle its edge and its stable order is the full stable order restricted.
"""

from __future__ import annotations

import numpy as np

__all__ = ["solve_windowed", "top_window"]


def top_window(a, K):
    """Indices of the entries of ``a`` strictly above its (K+1)-th largest value, in stable descending
    order, and that value; with K >= n the full stable argsort and None."""
    n = a.shape[0]
    if K >= n:
        return np.argsort(-a, kind="stable"), None
    nxt = np.partition(a, n - K - 1)[n - K - 1]
    cand = np.flatnonzero(a > nxt)
    return cand[np.argsort(-a[cand], kind="stable")], float(nxt)


def solve_windowed(a, k, solver, K0, full=False):
    """Run ``solver(order, nxt)`` on growing windows until it accepts one (returns non-None).

    ``a``: the sorted quantity (x for the mask, |x| for the magnitude); ``K0``: first window size;
    ``full``: skip the window (the full stable argsort; the reference the window must reproduce).
    """
    n = a.shape[0]
    K = n if full else max(int(K0), k + 1)
    while True:
        order, nxt = top_window(a, K)
        if order.shape[0] > k:
            out = solver(order, nxt)
            if out is not None:
                return out
        if K >= n:  # unreachable: the full window is always accepted
            raise RuntimeError("theory.topk: the full window was rejected")
        K = min(n, 2 * K)
