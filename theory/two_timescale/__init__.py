"""The two-timescale regime of a shallow network with a piecewise-constant target (paper key ``two-timescale``,
thesis (Marion), chapter 6).

Network f(x; a, u) = a_0 + sum_j a_j sigma((x - u_j) / eta) on [0, 1] with the quintic smootherstep sigma,
loss L(a, u) = 1/2 int (f* - f)^2 with exact gradients. Public names:

* the network and its loss: :func:`activation`, :func:`activation_prime`, :func:`network`, :func:`loss`,
  :func:`gradient`, :func:`gram`, :func:`optimal_weights` (a*(u)), :func:`reduced_loss` (L*(u)),
  :func:`separation`, :func:`min_eigenvalue`, :func:`is_d_good` (Definition 6.6), :func:`flanking`;
* the dynamics: :func:`gradient_descent` at ratio eps, :func:`sgd` (6.9) and the two-timescale limit
  :func:`limit_flow` (6.8), returning a :class:`Trajectory`;
* the Heaviside limit (6.6)-(6.7): :func:`heaviside_gram`, :func:`heaviside_weights`, :func:`heaviside_loss`,
  :func:`heaviside_loss_closed_form`, :func:`heaviside_velocities`, :func:`heaviside_invariant`,
  :func:`heaviside_hitting_time`, :func:`heaviside_flow`;
* the explicit constants of Thm 6.2, Thm 6.8, Props 6.7, 6.9 and Lemmas 6.18-6.19: :func:`neurons_required`,
  :func:`theorem_6_2_thresholds`, :func:`theorem_6_8_threshold`, :func:`prop_6_7_separation`,
  :func:`prop_6_9_bound`, :func:`prop_6_9_eps_max`, :func:`lemma_6_18_bound`, :func:`lemma_6_19_separation`,
  :func:`recovery_horizon`;
* targets of Definition 6.1: :func:`validate_target`, :func:`target_constants`, :func:`evaluate_target` and the
  chapter's :data:`THESIS_TARGET`.

Every public function validates its arguments at the door (float64 arrays, finite, of the documented shapes;
sizes, step counts and tau_end / dtau refused up front above the memory and work limits) and raises
:class:`~theory.NonFiniteError` rather than return NaN or inf.
"""

from ._constants import (lemma_6_18_bound, lemma_6_19_separation, neurons_required, prop_6_7_separation,
                         prop_6_9_bound, prop_6_9_eps_max, recovery_horizon, theorem_6_2_thresholds,
                         theorem_6_8_threshold)
from ._dynamics import Trajectory, gradient_descent, limit_flow, sgd
from ._heaviside import (heaviside_flow, heaviside_gram, heaviside_hitting_time, heaviside_invariant, heaviside_loss,
                         heaviside_loss_closed_form, heaviside_velocities, heaviside_weights)
from ._network import (activation, activation_prime, flanking, gradient, gram, is_d_good, loss, min_eigenvalue,
                       network, optimal_weights, reduced_loss, separation)
from ._target import THESIS_TARGET, evaluate_target, target_constants, validate_target

__all__ = [
    "activation", "activation_prime", "network", "loss", "gradient", "gram", "optimal_weights", "reduced_loss",
    "separation", "min_eigenvalue", "is_d_good", "flanking", "gradient_descent", "limit_flow", "sgd", "Trajectory",
    "heaviside_gram", "heaviside_weights", "heaviside_loss", "heaviside_loss_closed_form", "heaviside_velocities",
    "heaviside_invariant", "heaviside_hitting_time", "heaviside_flow", "neurons_required", "theorem_6_2_thresholds",
    "theorem_6_8_threshold", "prop_6_7_separation", "prop_6_9_bound", "prop_6_9_eps_max", "lemma_6_18_bound",
    "lemma_6_19_separation", "recovery_horizon", "THESIS_TARGET", "evaluate_target", "target_constants",
    "validate_target",
]
