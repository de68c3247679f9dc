"""Claim checks of the figures of ``scaling`` declared in :mod:`theory.experiments.scaling.figures` that no other
check records: Fig. 2(b) (log-normal gradients), Figure 7 on the document's own beta grid and Figure 9 (accuracy
after training over (H, beta)). Each runs its registered experiment at the "check" preset and records the verdict
the registry gives for the claim, with the figure drawn in the document's layout; the negative controls are in
``tests/test_controls_scaling_figures.py``."""

import pytest


@pytest.mark.claim("scaling/fig-2b", kind="qualitative",
                   title="Fig. 2(b): at beta = 1/2 the distribution of ||p_0||/||p_L|| over independent res-3 "
                         "networks with Gaussian weights is log-normal (D'Agostino-Pearson p-value of its log >= 0.01)",
                   proxy="200 networks of width 20 and depth 100 (explicit Gaussian matrices) instead of the "
                         "caption's 10^4 of width 100 and depth 1000",
                   aliases=("marion-thesis/fig-2.2",))
def test_fig2b_lognormal_gradients(claim):
    claim.reproduce()


@pytest.mark.claim("scaling/fig-7/grid", kind="identity",
                   title="Figure 7 on the document's grid (beta from 0.2 to 1.3 for every H), res-3, L = 1000, "
                         "d = 40, fGn weights: the closed-form finite-L crossings of log10 RMS ratio = -1 lie in the "
                         "draws' simultaneous interval, and the colour boundary is not above max(H, 1/2)",
                   aliases=("marion-thesis/fig-2.7",))
def test_fig7_document_grid(claim):
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="at L = 1000 the H = 0.2, beta = 0.2 cell (0.3 below the line) still learns: "
                                   "best test accuracy 0.74 at lr 1e-3 (criterion <= 0.5; 0.83 with 1437 digits); "
                                   "the identity side learns (>= 0.86) and H = 0.8, beta = 0.2 fails (0.09) as "
                                   "predicted")
@pytest.mark.claim("scaling/fig-9", kind="bound",
                   title="Fig. 9: after Adam training of res-1 (L = 1000, d = 30) with fGn weights, the best test "
                         "accuracy over the learning rates is >= 0.8 on the identity side (beta >= max(H, 1/2) + 0.1) "
                         "and <= 0.5 far below the line (beta <= max(H, 1/2) - 0.3)",
                   proxy="scikit-learn's digits (720 training images) instead of MNIST / CIFAR-10; 2 H x 2 beta x 2 "
                         "learning rates (1e-3, 1e-2) and 4 epochs instead of Table 4's grids and 10 epochs",
                   aliases=("marion-thesis/fig-2.9",))
def test_fig9_accuracy_after_training(claim):
    claim.reproduce()
