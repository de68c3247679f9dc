"""Sparse, differentiable top-k operators by p-norm regularisation over the permutahedron
(paper key ``topk``: thesis Chapter 7, Sections 7.3-7.5, Proposition 7.8).

Public names: :func:`topk_mask`, :func:`topk_magnitude`, :func:`jacobian`, and the O(n) products
:func:`jvp`, :func:`vjp` (every p in (1, inf)); the loss of §7.6, :func:`fenchel_young_loss` and
:func:`fenchel_young_gradient`; slow reference solvers of the isotonic subproblem for tests,
:func:`dykstra`, :func:`dykstra_printed` (Algorithm 7.7 as printed) and :func:`dual_coordinate_ascent`;
the soft sort and soft rank of §7.3 on the same isotonic core, :func:`soft_sort`, :func:`soft_rank`,
:func:`soft_sort_jvp`, :func:`soft_rank_jvp`, and value with Jacobian in one pass,
:func:`soft_sort_with_jacobian`, :func:`soft_rank_with_jacobian` (a :class:`SoftJacobian` with ``jvp``
and ``vjp``). The operators work along the last axis of arrays of any leading shape (one problem
per row), or along the axis named by their keyword-only ``axis`` argument.
"""

from ._api import jacobian, jvp, topk_magnitude, topk_mask, vjp
from ._fenchel_young import fenchel_young_gradient, fenchel_young_loss
from ._reference import ReferenceResult, dual_coordinate_ascent, dykstra, dykstra_printed
from ._soft import (SoftJacobian, soft_rank, soft_rank_jvp, soft_rank_with_jacobian, soft_sort, soft_sort_jvp,
                    soft_sort_with_jacobian)

__all__ = ["jacobian", "jvp", "topk_magnitude", "topk_mask", "vjp",
           "fenchel_young_gradient", "fenchel_young_loss",
           "ReferenceResult", "dual_coordinate_ascent", "dykstra", "dykstra_printed",
           "soft_rank", "soft_rank_jvp", "soft_sort", "soft_sort_jvp",
           "SoftJacobian", "soft_rank_with_jacobian", "soft_sort_with_jacobian"]
from ._ksupport import ksupport_negentropy, ksupport_norm_squared  # noqa: E402  (App. 7.B.1, Prop. 7.3)

__all__ += ["ksupport_negentropy", "ksupport_norm_squared"]
