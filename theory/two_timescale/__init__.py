"""The two-timescale regime of a shallow network with a piecewise-constant target (thesis (Marion), chapter 6).

Network f(x; a, u) = a_0 + sum_j a_j sigma((x - u_j) / eta) on [0, 1] with the quintic smootherstep sigma,
loss L(a, u) = 1/2 int (f* - f)^2 with exact gradients (``theory.two_timescale.network``), gradient descent at ratio eps
and the two-timescale limit (``theory.two_timescale.dynamics``), the Heaviside limit (6.6)-(6.7) (``theory.two_timescale.heaviside``) and the
explicit constants of Thm 6.2, Props 6.7, 6.9 and Lemmas 6.18-6.19 (``theory.two_timescale.constants``).
"""

from .constants import (lemma_6_18_bound, lemma_6_19_separation, neurons_required, prop_6_7_separation,
                        prop_6_9_bound, prop_6_9_eps_max, recovery_horizon, theorem_6_2_thresholds,
                        theorem_6_8_threshold)
from .dynamics import Trajectory, gradient_descent, limit_flow, sgd
from .heaviside import (heaviside_flow, heaviside_gram, heaviside_weights, heaviside_hitting_time, heaviside_invariant, heaviside_loss,
                        heaviside_loss_closed_form, heaviside_velocities)
from .network import (activation, activation_prime, flanking, gradient, gram, is_d_good, loss, min_eigenvalue,
                      network, optimal_weights, reduced_loss, separation)
from .target import THESIS_TARGET, evaluate_target, target_constants, validate_target

__all__ = [
    "activation", "activation_prime", "network", "loss", "gradient", "gram", "optimal_weights", "reduced_loss",
    "separation", "min_eigenvalue", "is_d_good", "flanking", "gradient_descent", "limit_flow", "sgd", "Trajectory",
    "heaviside_gram", "heaviside_weights", "heaviside_loss", "heaviside_loss_closed_form", "heaviside_velocities", "heaviside_invariant",
    "heaviside_hitting_time", "heaviside_flow", "neurons_required", "theorem_6_2_thresholds",
    "theorem_6_8_threshold", "prop_6_7_separation", "prop_6_9_bound", "prop_6_9_eps_max", "lemma_6_18_bound",
    "lemma_6_19_separation", "recovery_horizon", "THESIS_TARGET", "evaluate_target", "target_constants",
    "validate_target",
]
