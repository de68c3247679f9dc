"""Momentum ResNets (Sander's thesis, chapter 4; paper key ``momentum``).

Public names: :func:`forward` (Eq. (4.2)), :func:`inverse` (Eq. (4.3)) and :func:`gradient`
(backpropagation, stored or memory-free as in Sec. 4.3.2) for the residual families of
:mod:`theory.resnet`, and one layer's residual :func:`residual_f`; :func:`psi` (Prop. 4.3) and its
series :func:`psi_series`; :func:`lambda_eps` (Sec. 4.4.3); :func:`representable` and
:func:`preimage` (Thm 4.4); the bit-exact inversion of App. 4.C, :func:`forward_exact` /
:func:`inverse_exact`, on the fixed-point grid of :func:`to_fixed` / :func:`from_fixed`.
"""

from ._api import (forward, forward_exact, from_fixed, gradient, inverse, inverse_exact, lambda_eps, preimage, psi,
                   psi_series, representable, residual_f, to_fixed)

__all__ = ["forward", "inverse", "gradient", "residual_f", "psi", "psi_series", "lambda_eps", "representable",
           "preimage", "to_fixed", "from_fixed", "forward_exact", "inverse_exact"]
