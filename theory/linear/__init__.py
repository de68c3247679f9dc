"""The deep linear ResNet x -> (I + theta_N/N) ... (I + theta_1/N) x (``resnet-node`` Section 3.2)."""

from ._api import gradient, loss, product

__all__ = ["gradient", "loss", "product"]
