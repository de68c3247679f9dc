"""Residual networks of ``implicit-reg`` ("Implicit regularization of deep residual networks towards
neural ODEs"): the model of Eq. (1)/(3), its backpropagation (Eqs. (13)-(16), corrected), the
initialisation of Section 3 and gradient descent with the depth-scaled metric of Eq. (4)/(5).

Public names: :func:`forward`, :func:`loss_and_gradient`, :func:`initialize`, :func:`train`,
:func:`synthetic_data`, :class:`Params`, :class:`TrainStats`, :data:`ACTIVATIONS`, :data:`INIT_KINDS`, :data:`METHODS`.
"""

from ._api import (
    ACTIVATIONS,
    INIT_KINDS,
    METHODS,
    Params,
    TrainStats,
    forward,
    initialize,
    loss_and_gradient,
    synthetic_data,
    train,
)

__all__ = [
    "ACTIVATIONS",
    "INIT_KINDS",
    "METHODS",
    "Params",
    "TrainStats",
    "forward",
    "initialize",
    "loss_and_gradient",
    "synthetic_data",
    "train",
]
