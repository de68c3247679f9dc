"""The deep linear ResNet x -> (I + theta_N/N) ... (I + theta_1/N) x and its rescaled gradient flow
(paper key ``resnet-node``, Section 3.2: Prop. 2, Th. 1, Lemmas 1-2, Fig. 2)."""

from ._api import data_moments, gradient, loss, partial_products, product
from ._flow import (
    Assumption1,
    FlowInfo,
    assumption1,
    depth_embedding,
    flow_diagnostics,
    gradient_flow,
    initial_weights,
    prop2_constants,
)

__all__ = [
    "Assumption1",
    "FlowInfo",
    "assumption1",
    "data_moments",
    "depth_embedding",
    "flow_diagnostics",
    "gradient",
    "gradient_flow",
    "initial_weights",
    "loss",
    "partial_products",
    "product",
    "prop2_constants",
]
