"""Scaled ResNets at initialisation and their SDE / ODE limits (paper key ``scaling``).

Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth Regime" (hal-03697725; thesis
Chapter 2). Model (4): h_{k+1} = h_k + alpha_L V_{k+1} g(h_k, theta_{k+1}) with alpha_L = L^(-beta)
and the architectures res-1, res-2, res-3 of Table 1.

Public names:

* weights: :func:`weights` (laws :data:`LAWS`: gaussian, uniform, rademacher, smooth, fbm);
* the network: :func:`forward`, :func:`backward` (gradients p_k in the hidden states),
  :func:`jacobian` (dh_L/dh_0 in forward mode), :data:`ARCHS`, :data:`ACTIVATIONS`;
* norm statistics: :func:`norm_ratio`, :func:`gradient_ratio`, and their overflow-free log-domain
  versions :func:`forward_normalized`, :func:`log_norm_ratio`, :func:`log_gradient_ratio`;
* continuous limits: :func:`brownian_increments`, :func:`coupled_weights`, :func:`sde_em` (neural
  SDE (12), Proposition 10) and :func:`neural_ode` (neural ODE (14), Proposition 11).
"""

from ._api import (
    ACTIVATIONS,
    ARCHS,
    backward,
    forward,
    forward_normalized,
    gradient_ratio,
    jacobian,
    log_gradient_ratio,
    log_norm_ratio,
    norm_ratio,
)
from ._limits import brownian_increments, coupled_weights, neural_ode, sde_em
from ._weights import LAWS, SMOOTH_LENGTHSCALE, weights

__all__ = [
    "ACTIVATIONS",
    "ARCHS",
    "LAWS",
    "SMOOTH_LENGTHSCALE",
    "backward",
    "brownian_increments",
    "coupled_weights",
    "forward",
    "forward_normalized",
    "gradient_ratio",
    "jacobian",
    "log_gradient_ratio",
    "log_norm_ratio",
    "neural_ode",
    "norm_ratio",
    "sde_em",
    "weights",
]
