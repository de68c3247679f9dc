"""Numba kernel of the block-averaging Jacobian of the regularised top-k operators for p = 2
(paper key ``topk``, Proposition 7.8 with the corrections of the catalogue note R7.13).

Private: float64/intp C-contiguous arrays and plain floats only, no validation, no defaults; the
caller allocates the output. The public interface is :mod:`theory.topk._api`.
"""

from numba import njit

_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}


@njit(**_JIT)
def _block_jacobian(order, blocks, denom, sgn, reg, J):
    """Fill J (n, n) with (I - J_u) / reg, J_u the Jacobian of u* = sign(x) o v*_{sigma^{-1}}.

    In sorted coordinates J_v is block diagonal: for a, b in the same isotonic block B_r,
    dv_a/ds_b = 1 / denom[r] (p = 2: denom = |B_r| for the mask, sum_{j in B_r} (1 + reg w_j) for
    the magnitude), and 0 across blocks. Un-sorting: J_u[order[a], order[b]] =
    sgn[order[a]] sgn[order[b]] J_v[a, b] (sgn = 1 for the mask).

    Parameters (n = order.size, m = blocks.size - 1)
    ------------------------------------------------
    order : (n,) intp, the sorting permutation sigma (s = x[order] or |x|[order]).
    blocks : (m + 1,) intp, block starts in sorted coordinates, then n.
    denom : (m,) float64, the per-block denominators above.
    sgn : (n,) float64, entries +-1, in original coordinates.
    reg : float, lambda > 0.
    J : (n, n) float64, output, overwritten.
    """
    n = order.shape[0]
    for i in range(n):
        for j in range(n):
            J[i, j] = 0.0
        J[i, i] = 1.0 / reg
    for r in range(blocks.shape[0] - 1):
        c = 1.0 / (denom[r] * reg)
        for a in range(blocks[r], blocks[r + 1]):
            ia = order[a]
            for b in range(blocks[r], blocks[r + 1]):
                ib = order[b]
                J[ia, ib] -= sgn[ia] * sgn[ib] * c
