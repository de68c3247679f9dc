"""Generalization bounds for parameterized ODEs, neural ODEs and 1/L-scaled ResNets (paper key ``gen-bounds``,
thesis (Marion), chapter 4).

Public names:

* bound calculators for Props 4.2-4.7, Thm 4.4, Cor. 4.5, Thm 4.8 and Cor. 4.9 (:func:`prop_4_2_output_bound`,
  :func:`prop_4_2_lipschitz_printed`, :func:`prop_4_2_lipschitz_proof`, :func:`prop_4_3_log_covering`,
  :func:`theorem_4_4_constant`, :func:`theorem_4_4_gap`, :func:`corollary_4_5_constant`, :func:`corollary_4_5_gap`,
  :func:`prop_4_6_output_bound`, :func:`prop_4_6_lipschitz`, :func:`prop_4_7_log_covering`,
  :func:`theorem_4_8_constant`, :func:`theorem_4_8_gap`, :func:`corollary_4_9_complexity_bound`);
* the models and the empirical quantities they bound: the parameterized ODE (4.5) (:func:`parameterized_ode`),
  the neural ODE (4.8) (:func:`neural_ode`), the ResNet (4.10) (:func:`resnet_forward`), the norms (4.6), (4.11)
  and K_W (4.12) (:func:`norm_1_inf`, :func:`norm_11inf`, :func:`weight_lipschitz`), the spectral complexity
  (:func:`spectral_complexity`), smooth and i.i.d. initialisations (:func:`smooth_weights`, :func:`iid_weights`);
* the covering of the proof of Prop. 4.3 and the isometry of Prop. 4.7 (:func:`cover_log_size`,
  :func:`cover_member`, :func:`resnet_to_path`);
* the training of Figure 4.1 (:func:`loss_and_gradient`, :func:`difference_penalty`, :func:`train_resnet`,
  returning a :class:`TrainingRecord`).

Every public function validates its arguments at the door (float64 arrays, finite, of the documented shapes;
sizes refused up front above the memory and work limits) and raises :class:`~theory.NonFiniteError` rather
than return NaN or inf.
"""

from ._bounds import (corollary_4_5_constant, corollary_4_5_gap, corollary_4_9_complexity_bound,
                      prop_4_2_lipschitz_printed, prop_4_2_lipschitz_proof, prop_4_2_output_bound,
                      prop_4_3_log_covering, prop_4_6_lipschitz, prop_4_6_output_bound, prop_4_7_log_covering,
                      theorem_4_4_constant, theorem_4_4_gap, theorem_4_8_constant, theorem_4_8_gap)
from ._covering import cover_log_size, cover_member, resnet_to_path
from ._models import (iid_weights, neural_ode, norm_1_inf, norm_11inf, parameterized_ode, resnet_forward,
                      smooth_weights, spectral_complexity, weight_lipschitz)
from ._training import TrainingRecord, difference_penalty, loss_and_gradient, train_resnet

__all__ = [
    "prop_4_2_output_bound", "prop_4_2_lipschitz_printed", "prop_4_2_lipschitz_proof", "prop_4_3_log_covering",
    "theorem_4_4_constant", "theorem_4_4_gap", "corollary_4_5_constant", "corollary_4_5_gap",
    "prop_4_6_output_bound", "prop_4_6_lipschitz", "prop_4_7_log_covering", "theorem_4_8_constant",
    "theorem_4_8_gap", "corollary_4_9_complexity_bound", "cover_log_size", "cover_member", "resnet_to_path",
    "parameterized_ode", "neural_ode", "resnet_forward", "norm_1_inf", "norm_11inf", "weight_lipschitz",
    "spectral_complexity", "smooth_weights", "iid_weights", "train_resnet", "loss_and_gradient",
    "difference_penalty", "TrainingRecord",
]
