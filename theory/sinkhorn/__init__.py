r"""Sinkhorn attention (paper key ``sinkformers``: M. E. Sander's thesis, chapter 5, "Sinkformers").

Notation of the chapter: tokens :math:`x_1,\dots,x_n\in\mathbb R^d` (the rows of ``X``), query and key
matrices :math:`W_Q,W_K\in\mathbb R^{m\times d}`, value matrix :math:`W_V\in\mathbb R^{d\times d}`, logits
:math:`C_{ij}=(W_Qx_i)^\top W_Kx_j` and :math:`K^0=\exp(C)` entrywise. Sinkhorn's iterations (Eq. (5.3))
alternate the row normalisation :math:`N_R(K)_{ij}=K_{ij}/\sum_lK_{il}` (first) and the column
normalisation :math:`N_C`; :math:`K^1=N_R(K^0)` is the row SoftMax of the Transformer and the limit
:math:`K^\infty=\mathrm{Sinkhorn}(C)` is doubly stochastic (§5.3).

* :func:`sinkhorn`: :math:`K^l` or :math:`K^\infty`, computed in the log domain (App. 5.B writes the same
  iterations on potentials with target marginals :math:`1/n`; the matrix here has unit row and column sums,
  i.e. it is :math:`n` times that plan).
* :func:`attention`: the attention vector fields of §5.4 at the tokens, for the empirical measure
  :math:`\mu=\frac1n\sum_j\delta_{x_j}`: :math:`T^0(x_i)=\frac1n\sum_jK^0_{ij}W_Vx_j` (``"kernel"``),
  :math:`T^1(x_i)=\sum_jK^1_{ij}W_Vx_j` (``"softmax"``, Eq. (5.1)) and
  :math:`T^\infty(x_i)=\sum_jK^\infty_{ij}W_Vx_j` (``"sinkhorn"``, Eq. (5.4)). With this measure the
  kernels of §5.4 are :math:`k^p(x_i,x_j)=nK^p_{ij}` for p in {1, ∞}, which is why :math:`T^0` carries
  the factor :math:`1/n` and the other two do not.
* :func:`energy`: the energies of Prop. 5.3 at the empirical measure,
  :math:`E^0(X)=\mathcal F^0(\mu)=\frac1{2n^2}\sum_{ij}K^0_{ij}` and
  :math:`E^\infty(X)=\mathcal F^\infty(\mu)=-\frac1{2n^2}\sum_{ij}k_{ij}\log(k_{ij}/K^0_{ij})` with
  :math:`k=nK^\infty`; under Assumption 5.2 (:math:`W_Q^\top W_K=W_K^\top W_Q=-W_V`) the vector fields
  are :math:`T=-n\nabla_XE` (Prop. 5.3).
* :func:`sinkhorn_reference`: a plain NumPy log-domain implementation of the same iterations, an
  independent reference.
* :func:`logits` and :func:`l2_softmax_field`: the logits :math:`C` of Eq. (5.1) and the L2
  self-attention field of §5.5.

Constants: ``KINDS`` (the kinds of :func:`attention`) and ``MAX_LOGIT_RANGE`` (the largest accepted
spread of the logits). Every function validates its input, computes in float64 and refuses up front a
call above the memory limit or the work budget (its ``max_work`` keyword).
"""

from ._api import KINDS, MAX_LOGIT_RANGE, attention, energy, l2_softmax_field, logits, sinkhorn, sinkhorn_reference

__all__ = ["KINDS", "MAX_LOGIT_RANGE", "attention", "energy", "l2_softmax_field", "logits", "sinkhorn",
           "sinkhorn_reference"]
