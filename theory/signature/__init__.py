r"""Signatures, the signature kernel and the signature (Taylor) expansion of a residual RNN
(Marion's thesis, chapter 5; paper key ``rnn-kernel``).

Public names: the truncated signature :func:`signature` (Definition 5.4, factorial normalization by
default), of a batch of paths :func:`signature_batch` (parallel over the batch), and its conversions :func:`to_standard` / :func:`to_factorial`; Chen's product :func:`chen`
(Prop. 5.21); the inner product and norm of (5.6), :func:`signature_inner`, :func:`signature_norm`;
the truncated signature kernel :func:`kernel` (Sec. 5.2.2) and its closed form for two segments
:func:`linear_kernel` (Example 5.5); :func:`total_variation` and :func:`time_augment` (Prop. 5.2);
the residual RNN :func:`rnn` (5.1), its ODE (5.3) :func:`ode_solution` and CDE (5.4)
:func:`cde_solution`; the star products of the field (5.5) :func:`star_products` (Definition 5.7),
the Taylor expansion :func:`taylor_expansion` (Sec. 5.2.3), :func:`rkhs_coefficients` and
:func:`rkhs_norm` (Thm 5.11, (5.7)); the activation constants :func:`activation_derivatives`,
:func:`derivative_sup`, :func:`derivative_bound` (Lemmas 5.19-5.20) and :func:`lambda_bound`
(Prop. 5.10); :data:`ACTIVATIONS`, the activation names of the RNN functions.

Paths are arrays of shape ``(n_points, d)``, piecewise linear between the points; a truncated
signature is a list of ``depth + 1`` arrays of shapes ``()``, ``(d,)``, ``(d, d)``, ...
"""

from ._api import (ACTIVATIONS, activation_derivatives, cde_solution, chen, derivative_bound, derivative_sup, kernel,
                   lambda_bound, linear_kernel, ode_solution, rkhs_coefficients, rkhs_norm, rnn, signature,
                   signature_batch, signature_inner, signature_norm, star_products, taylor_expansion, time_augment,
                   to_factorial, to_standard, total_variation)

__all__ = [
    "signature", "signature_batch", "to_standard", "to_factorial", "chen", "kernel", "signature_inner", "signature_norm",
    "linear_kernel", "total_variation", "time_augment", "rnn", "ode_solution", "cde_solution", "star_products",
    "taylor_expansion", "rkhs_coefficients", "rkhs_norm", "activation_derivatives", "derivative_sup",
    "derivative_bound", "lambda_bound", "ACTIVATIONS",
]
