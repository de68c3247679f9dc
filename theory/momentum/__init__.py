"""Momentum ResNets (Sander's thesis, chapter 4; paper key ``momentum``).

Public names: :func:`forward` (Eq. (4.2)) and :func:`inverse` (Eq. (4.3)) and
:func:`gradient` (backpropagation, stored or memory-free as in Sec. 4.3.2) for the residual families
of :mod:`theory.resnet`; :func:`psi` (Prop. 4.3) and its series :func:`psi_series`;
:func:`forward_exact` / :func:`inverse_exact` (bit-exact inversion with the
exact multiplication of App. 4.C); :func:`lambda_eps` (Sec. 4.4.3); :func:`representable` and :func:`preimage` (Thm 4.4).
"""

from ._exact import forward_exact, from_fixed, inverse_exact, to_fixed
from ._api import forward, gradient, inverse, lambda_eps, preimage, psi, psi_series, representable, residual_f

__all__ = ["forward_exact", "from_fixed", "inverse_exact", "to_fixed", "forward", "gradient", "inverse", "lambda_eps", "preimage", "psi", "psi_series", "representable", "residual_f"]
