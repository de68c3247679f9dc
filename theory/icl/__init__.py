r"""In-context autoregressive learning with linear attention (paper key ``icl-ar``: M. E. Sander's thesis,
chapter 6, "How do Transformers perform in-context autoregressive learning?").

Data (§6.3, Assumption 6.2): :math:`s_1=\mathbf 1_d`, :math:`s_{t+1}=Ws_t`, with W drawn from commuting unitary
contexts (:math:`W=\mathrm{diag}(\lambda)`, d i.i.d. uniform phases) or orthogonal ones (conjugate pairs,
d = 2δ). Models: the augmented one-head layer (6.4) on :math:`e_t=(0,s_t,s_{t-1})` and the multi-head layer
with positional encoding (6.6) on :math:`e_t=s_t`. Every population loss of the chapter is the expected squared
modulus of a Laurent polynomial in independent unit-circle variables, computed here exactly
(:math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`), in float64 or in rational arithmetic.

Processes: :func:`unitary_contexts`, :func:`orthogonal_contexts`, :func:`haar_orthogonal`, :func:`ar_sequence`,
:func:`augmented_tokens`, :func:`rotation_blocks`.
Attention: :func:`augmented_forward` (6.4), :func:`attention_forward` (6.6), :func:`diagonal_forward`
(Lemma 6.6), :func:`block_parameters` (Assumption 1), :func:`gd_construction` (6.8), :func:`gd_step_prediction`.
Exact moments: :func:`torus_moment`, :func:`expected_abs2`, :func:`group_monomials`.
Losses: :func:`expected_loss` (l(C, p), unitary or orthogonal), :func:`expected_loss_exact`,
:func:`quadratic_loss` (Prop. 6.8 corrected), :func:`printed_quadratic_loss`, :func:`quadratic_loss_gradient`,
:func:`population_loss` (6.3), :func:`augmented_loss`, :func:`augmented_loss_exact`, :func:`augmented_ray_loss`,
:func:`eta_star`, :func:`eta_star_printed`, :func:`augmented_min_loss` (Prop. 6.5), :func:`pe_moment`,
:func:`pe_hessian`, :func:`pe_hessian_printed`, :func:`pe_loss` (Prop. 6.12).
Training: :func:`gradient_flow` (a :class:`FlowResult`), :func:`scalar_flow` (Prop. 6.9).

Every function validates its arguments at the door (``TypeError``/``ValueError`` naming the argument), computes
in float64, raises :class:`theory.NonFiniteError` rather than return NaN or inf, and refuses up front a call
whose work or memory would be excessive (keyword ``max_work`` where the cost is not fixed by the input). The
exact functions (:func:`expected_loss_exact`, :func:`augmented_loss_exact`, :func:`expected_abs2`,
:func:`torus_moment`) convert NumPy scalars and arrays of every integer, bool and float dtype to Python ints
and Fractions before any arithmetic.
"""

from ._api import (CONTEXTS, S0_CONVENTIONS, FlowResult, ar_sequence, attention_forward, augmented_forward,
                   augmented_loss, augmented_loss_exact, augmented_min_loss, augmented_ray_loss, augmented_tokens,
                   block_parameters, diagonal_forward, eta_star, eta_star_printed, expected_abs2, expected_loss,
                   expected_loss_exact, gd_construction, gd_step_prediction, gradient_flow, group_monomials,
                   haar_orthogonal, orthogonal_contexts, pe_hessian, pe_hessian_printed, pe_loss, pe_moment,
                   population_loss, printed_quadratic_loss, quadratic_loss, quadratic_loss_gradient,
                   rotation_blocks, scalar_flow, torus_moment, unitary_contexts)

__all__ = [
    "CONTEXTS", "S0_CONVENTIONS", "FlowResult",
    "unitary_contexts", "orthogonal_contexts", "haar_orthogonal", "ar_sequence", "augmented_tokens", "rotation_blocks",
    "augmented_forward", "attention_forward", "diagonal_forward", "block_parameters", "gd_construction",
    "gd_step_prediction",
    "torus_moment", "expected_abs2", "group_monomials",
    "expected_loss", "expected_loss_exact", "quadratic_loss", "printed_quadratic_loss", "quadratic_loss_gradient",
    "population_loss", "augmented_loss", "augmented_loss_exact", "augmented_ray_loss", "eta_star", "eta_star_printed",
    "augmented_min_loss", "pe_moment", "pe_hessian", "pe_hessian_printed", "pe_loss",
    "gradient_flow", "scalar_flow",
]
