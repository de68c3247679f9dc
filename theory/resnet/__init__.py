"""Depth-N residual networks with step 1/N and their neural-ODE limits (paper key ``resnet-node``).

Public names: :func:`forward`, :func:`reverse`, :func:`final_state`, :func:`gradient` (Euler and Heun
schemes, exact backpropagation and the memory-free adjoint), the residual families
(:data:`RESIDUALS`, :func:`mlp`, :class:`Residual`), the schemes (:data:`SCHEMES`, :class:`Scheme`)
and the interpolating neural ODE of Definition 1 (:func:`interpolating_ode`).
"""

from ._api import final_state, forward, gradient, reverse
from ._ode import ODESolution, interpolating_ode
from .._residuals import RESIDUALS, Residual, mlp
from ._schemes import SCHEMES, Scheme

__all__ = [
    "ODESolution",
    "RESIDUALS",
    "Residual",
    "SCHEMES",
    "Scheme",
    "final_state",
    "forward",
    "gradient",
    "interpolating_ode",
    "mlp",
    "reverse",
]
