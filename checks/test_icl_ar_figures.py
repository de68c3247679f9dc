"""Checks of the figures of M. E. Sander's thesis, chapter 6 (paper key ``icl-ar``) that
checks/test_icl_ar.py does not cover: Figs. 6.1, 6.2, 6.3 at the caption's sizes, 6.4 (Moby Dick with GPT-2, and
a synthetic stand-in), 6.5, 6.7, 6.8, 6.9 and 6.10. Each runs the "check" preset of its registered experiment
(theory.experiments.icl_ar) and draws the figure in the thesis's layout (theory.experiments.icl_ar.figures).
"""

from __future__ import annotations

import pytest

from theory import datasets


@pytest.mark.claim("icl-ar/fig-6.1", kind="identity", aliases=("sander-thesis/fig-6.1",),
                   title="Fig. 6.1 (thesis ch. 6): the AR process s_(t+1) = W s_t in R^3 with orthogonal W stays on "
                         "the sphere |s_t| = |s_1| (to 1e-12), and two W give different orbits")
def test_fig61(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.2", kind="identity", aliases=("sander-thesis/fig-6.2",),
                   title="Fig. 6.2 (thesis ch. 6): at the zero-loss minima reached by gradient flow (orthogonal "
                         "contexts, H < d) the layer implements 2cos θ R_θ - I_2 = R_2θ: p_T Cλ = 2cos θ and "
                         "p_(T-1) C1 = -1")
def test_fig62(claim):
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="at d = 10, H = 8, T = 15 not every initialisation reaches the zero-loss set: from seed 5 gradient descent stops at a non-global minimum of loss 5.427 (icl-ar/fig-6.3/local-minimum: zero gradient, no negative Hessian eigenvalue, restarts return; at the step 0.002 of this check it hovers at 6.06 instead, 48% of its steps raising the loss); seed 1's descent is stiff (52% of the steps of 5e-4 raise the loss, 0.13 after flow time 800; a monotone step-halving descent goes on decreasing, 0.077 at flow time 49, with 3 slowly vanishing singular values of BᵀA beyond rank 5) and seed 9 creeps (4e-8 at flow time 800); the other 7 of seeds 0-9 reach 1e-10 by flow time 33. The thesis gives no initialisation or step (§6.5: global convergence is an open problem)")
@pytest.mark.claim("icl-ar/fig-6.3/full", kind="identity", aliases=("sander-thesis/fig-6.3",),
                   title="Fig. 6.3 (thesis ch. 6) at the caption's sizes: gradient flow on (6.3) reaches "
                         "arbitrarily small loss at the parameters of Props. 6.7 (unitary, d = H = 10, T = 15) and "
                         "6.11 (orthogonal, d = 10, H = 8, T = 15, rank-5 BᵀA)")
def test_fig63_full(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.3/local-minimum", kind="qualitative", aliases=("sander-thesis/fig-6.3",),
                   title="Fig. 6.3 (thesis ch. 6), orthogonal panel's sizes (d = 10, H = 8, T = 15): the loss (6.3) has "
                         "a non-global minimum (loss 5.43, zero gradient, no negative Hessian eigenvalue, restarts "
                         "return) that gradient descent from a random initialisation reaches")
def test_fig63_local_minimum(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.4", kind="qualitative", aliases=("sander-thesis/fig-6.4",),
                   title="Fig. 6.4 (thesis ch. 6): fitting an AR process (6.5) to sequences of 5 GPT-2 embeddings of "
                         "Moby Dick leaves an error > 1e-12 at least twice as often after shuffling the tokens "
                         "(printed: 4 times)")
def test_fig64(claim):
    for name in ("moby-dick", "gpt2"):
        try:
            datasets.locate(name, None)
        except datasets.DatasetMissing as exc:
            pytest.skip(str(exc))
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.4/synthetic", kind="qualitative", aliases=("sander-thesis/fig-6.4",),
                   proxy="one-hot tokens following a random permutation per sequence (an exact AR process) stand "
                         "in for Moby Dick embedded by GPT-2",
                   title="Fig. 6.4 (thesis ch. 6), stand-in: shuffling the tokens of exact AR sequences makes the AR "
                         "fit fail (MSE > 1e-12) at least twice as often")
def test_fig64_synthetic(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.5/erratum", kind="erratum", wrong_in="statement", aliases=("sander-thesis/fig-6.5",),
                   title="§6.6 on Fig. 6.5: 'gradient descent outperforms the Transformer by orders of magnitude when "
                         "L >= 3' cannot hold for the MSE the section defines: every GD iterate's error is the "
                         "least-squares error plus a non-negative term, so a model trained to at most the caption's "
                         "initial MSE (2) trails 3 GD steps by at most 2 / MSE_GD(3) < 10, and any L by 2 / floor "
                         "< 100")
def test_fig65_erratum(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.5", kind="qualitative", aliases=("sander-thesis/fig-6.5",),
                   title="Fig. 6.5 (thesis ch. 6), corrected (icl-ar/fig-6.5/erratum): L trained linear-attention "
                         "layers (6.4) on augmented tokens are competitive with one GD step on (6.5) at L = 1 "
                         "(within 2x), GD's MSE decreases with L, and L GD steps are ahead by less than 10x at L >= 3")
def test_fig65(claim):
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="no gain with heads: MSE 0.897 (H = 1), 0.899 (H = 4) (0.897, 0.900 after 150 epochs: bare (6.6) on s_1 = 1_d barely learns, initial MSE 1.03 outside the caption's 0.35..1); the authors' published model (michaelsdr/ical non_augmented.py: s_1 = 1_d/sqrt(d), biases, layer norm and read-out) matches the caption's initial MSE (0.46, 0.63) but shows no gain either at CPU sizes (0.0851 -> 0.0834 from H = 1 to 4, 100 epochs; 0.0839 at H = 16, 40 epochs; zero predictor 0.1); criterion MSE(H max) <= 0.5 MSE(H = 1)")
@pytest.mark.claim("icl-ar/fig-6.7", kind="qualitative", aliases=("sander-thesis/fig-6.7",),
                   title="Fig. 6.7 (thesis ch. 6): with duplicated tokens (s_t, s_t), the test MSE of (6.6) decreases "
                         "with the number of heads (at least halved from H = 1 to the largest H)")
def test_fig67(claim):
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="the off-block share of sum_h B_h^T B_h falls 0.692 -> 0.637 (0.612 after 150 epochs, 0.560 after 400, the test MSE stuck at 0.77); a replica of the authors' published model (michaelsdr/ical non_augmented.py, init_same, H = 5) plateaus too: 0.680 -> 0.498 (150 epochs), 0.501 (500 epochs); criterion: at least halves")
@pytest.mark.claim("icl-ar/fig-6.8", kind="qualitative", aliases=("sander-thesis/fig-6.8",),
                   title="Fig. 6.8 (thesis ch. 6): training makes Σ_h B_hᵀB_h orthogonal across heads: its mass off "
                         "the entries i ≡ j (mod d) at least halves from the (nearly equal-head) initialisation")
def test_fig68(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.9", kind="qualitative", aliases=("sander-thesis/fig-6.9",),
                   title="Fig. 6.9 (thesis ch. 6): with commuting (d = 1 unitary) contexts, (6.6) with a softmax, "
                         "with or without MLP, ends training >= 10x above linear attention")
def test_fig69(claim):
    claim.reproduce()


@pytest.mark.claim("icl-ar/fig-6.10", kind="qualitative", aliases=("sander-thesis/fig-6.10",),
                   title="Fig. 6.10 (thesis ch. 6): an L-layer vanilla Transformer on augmented tokens beats L "
                         "steps of GD on (6.5) at every depth, its MSE decreasing with L")
def test_fig610(claim):
    claim.reproduce()
