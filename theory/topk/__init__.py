"""Sparse, differentiable top-k operators by p-norm regularisation over the permutahedron
(paper key ``topk``: thesis Chapter 7, Sections 7.3-7.5, Proposition 7.8).

Public names: :func:`topk_mask`, :func:`topk_magnitude`, :func:`jacobian`, and the O(n) products
:func:`jvp`, :func:`vjp` (every p in (1, inf)); the loss of §7.6, :func:`fenchel_young_loss` and
:func:`fenchel_young_gradient`; slow reference solvers of the isotonic subproblem for tests,
:func:`dykstra`, :func:`dykstra_printed` (Algorithm 7.7 as printed) and :func:`dual_coordinate_ascent`.
"""

from ._api import jacobian, jvp, topk_magnitude, topk_mask, vjp
from ._fenchel_young import fenchel_young_gradient, fenchel_young_loss
from ._reference import ReferenceResult, dual_coordinate_ascent, dykstra, dykstra_printed

__all__ = ["jacobian", "jvp", "topk_magnitude", "topk_mask", "vjp",
           "fenchel_young_gradient", "fenchel_young_loss",
           "ReferenceResult", "dual_coordinate_ascent", "dykstra", "dykstra_printed"]
