"""Generalization bounds for parameterized ODEs, neural ODEs and 1/L-scaled ResNets (thesis (Marion), chapter 4).

Bound calculators (``theory.generalization.bounds``) for Props 4.2-4.7, Thm 4.4, Cor. 4.5, Thm 4.8 and Cor. 4.9; the models and
the empirical quantities they bound (``theory.generalization.models``: the parameterized ODE (4.5), the ResNet (4.10), the norms,
K_W, the spectral complexity, smooth and i.i.d. initialisations); the covering of the proof of Prop. 4.3 and the
isometry of Prop. 4.7 (``theory.generalization.covering``).
"""

from .bounds import (corollary_4_5_constant, corollary_4_5_gap, corollary_4_9_complexity_bound,
                     prop_4_2_lipschitz_printed, prop_4_2_lipschitz_proof, prop_4_2_output_bound,
                     prop_4_3_log_covering, prop_4_6_lipschitz, prop_4_6_output_bound, prop_4_7_log_covering,
                     theorem_4_4_constant, theorem_4_4_gap, theorem_4_8_constant, theorem_4_8_gap)
from .covering import cover_log_size, cover_member, resnet_to_path
from .training import TrainingRecord, difference_penalty, loss_and_gradient, train_resnet
from .models import (ACTIVATIONS, iid_weights, neural_ode, norm_1_inf, norm_11inf, parameterized_ode, resnet_forward,
                     smooth_weights, spectral_complexity, weight_lipschitz)

__all__ = [
    "prop_4_2_output_bound", "prop_4_2_lipschitz_printed", "prop_4_2_lipschitz_proof", "prop_4_3_log_covering",
    "theorem_4_4_constant", "theorem_4_4_gap", "corollary_4_5_constant", "corollary_4_5_gap",
    "prop_4_6_output_bound", "prop_4_6_lipschitz", "prop_4_7_log_covering", "theorem_4_8_constant",
    "theorem_4_8_gap", "corollary_4_9_complexity_bound", "cover_log_size", "cover_member", "resnet_to_path",
    "ACTIVATIONS", "parameterized_ode", "neural_ode", "resnet_forward", "norm_1_inf", "norm_11inf", "weight_lipschitz",
    "spectral_complexity", "smooth_weights", "iid_weights", "train_resnet", "loss_and_gradient",
    "difference_penalty", "TrainingRecord",
]
