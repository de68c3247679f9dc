"""Polyak-Lojasiewicz (PL) tools (paper key ``implicit-reg``: Definition 1, Proposition 5, Lemma 21,
Proposition 8): the Hermite coefficients eta_r(sigma) that enter Prop. 5's PL constant, and generic
estimators of the PL ratio ||grad l||^2 / l for any loss given as numbers or callables."""

from ._estimators import BallPL, IntegratedPL, TrajectoryPL, ball_pl, integrated_pl, pl_ratio, trajectory_pl
from ._hermite import ACTIVATIONS, RMAX, hermite_coefficient, hermite_coefficients

__all__ = [
    "ACTIVATIONS",
    "RMAX",
    "BallPL",
    "IntegratedPL",
    "TrajectoryPL",
    "ball_pl",
    "hermite_coefficient",
    "hermite_coefficients",
    "integrated_pl",
    "pl_ratio",
    "trajectory_pl",
]
