"""Polyak-Lojasiewicz (PL) tools (paper key ``implicit-reg``: Definition 1, Proposition 5, Lemma 21,
Proposition 8): the Hermite coefficients eta_r(sigma) that enter Prop. 5's PL constant, generic
estimators of the PL ratio ||grad l||^2 / l for any loss given as numbers or callables, and the
estimators specific to that paper's residual network (closed form at initialisation, the proof's
certified lower bound at any point, the constants c1..c4 and delta of Prop. 5)."""

from ._estimators import BallPL, IntegratedPL, TrajectoryPL, ball_pl, integrated_pl, pl_ratio, trajectory_pl
from ._hermite import ACTIVATIONS, RMAX, hermite_coefficient, hermite_coefficients
from ._implicit import CertifiedPL, Prop5Constants, backward_states, certified_ratio, init_ratio, prop5_constants

__all__ = [
    "ACTIVATIONS",
    "RMAX",
    "BallPL",
    "CertifiedPL",
    "IntegratedPL",
    "Prop5Constants",
    "TrajectoryPL",
    "backward_states",
    "ball_pl",
    "certified_ratio",
    "hermite_coefficient",
    "hermite_coefficients",
    "init_ratio",
    "integrated_pl",
    "pl_ratio",
    "prop5_constants",
    "trajectory_pl",
]
