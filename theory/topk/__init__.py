"""Sparse, differentiable top-k operators by p-norm regularisation over the permutahedron
(paper key ``topk``: thesis Chapter 7, Sections 7.3-7.5, Proposition 7.8).

Public names: :func:`topk_mask`, :func:`topk_magnitude`, :func:`jacobian` (p = 2; other p raise
:class:`NotImplementedError`).
"""

from ._api import jacobian, topk_magnitude, topk_mask

__all__ = ["jacobian", "topk_magnitude", "topk_mask"]
