"""Checks of the figures of M. E. Sander's thesis, chapter 7 (paper key ``topk``) that had none: Fig. 7.2 (the
permutohedron), Fig. 7.4 (runtime of PAV and Dykstra, on a CPU), Fig. 7.5 (weight pruning on MNIST; digits as a
proxy), Fig. 7.6 (the smooth top-3 loss on CIFAR-100; digits as a proxy) and Fig. 7.7 (a sparse MoE on JFT-300M,
not public; a synthetic task as a proxy). Each test runs its claim's registered experiment at its "check" preset
(``theory run CLAIM-ID`` reruns it), draws the declared figure (theory.experiments.topk.figures) and records the
verdict the registry gives for the claim. A check whose dataset is absent is skipped with the dataset's name and
where it is published. Figs. 7.1, 7.3, 7.8 and 7.9 are checked in checks/test_topk.py and
checks/test_topk_experiments.py.
"""

from __future__ import annotations

import pytest


@pytest.mark.claim("topk/fig-7.2", kind="identity",
                   title="Fig. 7.2: the permutohedra P(w) of R³ for w = (1,0,0), (1/2,1/2,0), (2/3,1/3,0) have as "
                         "vertices the permutations of w (3, 3, 6): far-away points project exactly onto them, points "
                         "of P(w) onto themselves, and the support function is Σ w_i x_[i]")
def test_fig72(claim):
    claim.reproduce()


@pytest.mark.slow  # wall-clock timings: on a loaded machine (load 11 on 2 cores) the slopes reach 0.63
@pytest.mark.claim("topk/fig-7.4", kind="qualitative",
                   proxy="CPU timings of the package's numba kernels stand in for the document's JAX on a TPU (the "
                         "order of PAV and Dykstra is hardware-dependent; λ = 1 and x ~ N(0, I) are not printed)",
                   title="Fig. 7.4 on a CPU: PAV (O(n log n)) and 100-iteration Dykstra (O(n) per iteration) times, "
                         "each divided by np.argsort's time on the same x in the same run, have log-log slopes in "
                         "(-0.5, 0.5) for k = ceil(n/10); PAV is faster than Dykstra and the hard top-k than PAV")
def test_fig74(claim):
    claim.reproduce()


_PRUNING = ("mean test error over the epochs of the MLP pruned to 10% by the relaxed top-k in magnitude (p = 2 and "
            "p = 4/3, λ = 1e-4) below the hard top-k's, at most 10.5% non-zero weights")


@pytest.mark.claim("topk/fig-7.5", kind="qualitative",
                   proxy="check preset: 6000 of the 60000 MNIST training images and 3 of the 30 epochs",
                   title="Fig. 7.5 (MNIST, MLP 784-32-32-10): " + _PRUNING)
def test_fig75(claim):
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="the digits proxy is degenerate: pruned to 10% the MLP 64-32-32-10 stays at 0.5-0.9 test error (the document's MNIST runs reach ~0.06), so the sign of hard minus relaxed mean error follows the seed (check preset, seeds 0-4: p = 4/3 -0.011, +0.062, +0.001, +0.078, +0.042; p = 2 +0.104, +0.013, +0.053, -0.002, +0.116; paper preset, seed 0: -0.002 and +0.002)")
@pytest.mark.claim("topk/fig-7.5/digits", kind="qualitative",
                   proxy="scikit-learn's 8 x 8 digits (1347 training, 450 test images; MLP 64-32-32-10) stand in for "
                         "MNIST; 660 SGD steps at a learning rate of 0.1 for 14070 at 1e-2",
                   title="Fig. 7.5 on digits: " + _PRUNING)
def test_fig75_digits(claim):
    claim.reproduce()


_SMOOTH = ("the smooth top-3 loss (p = 2 and p = 4/3) reaches validation top-3 and top-5 accuracies at least those of "
           "the cross-entropy after 100 SGD steps")


@pytest.mark.claim("topk/fig-7.6", kind="qualitative",
                   proxy="check preset: a ViT of width 64, depth 2, patch 8 on 32 x 32 images, 5000 training images; "
                         "without `weights` the ViT is not the document's ImageNet-21k pre-trained B/16",
                   title="Fig. 7.6 (CIFAR-100, ViT fine-tuning): " + _SMOOTH)
def test_fig76(claim):
    claim.reproduce()


@pytest.mark.claim("topk/fig-7.6/digits", kind="qualitative",
                   proxy="scikit-learn's digits and an MLP 64-32-10 trained from scratch stand in for CIFAR-100 and a "
                         "pre-trained ViT-B/16 (the document's optimiser, schedule and learning rates)",
                   title="Fig. 7.6 on digits: " + _SMOOTH)
def test_fig76_digits(claim):
    claim.reproduce()


_MOE = ("over the last quarter of training, the expert-choice MoE with the relaxed (p = 2) top-k router has a higher "
        "validation precision-at-1 than with the hard router")


@pytest.mark.claim("topk/fig-7.7", kind="qualitative",
                   proxy="a one-layer MoE of ours stands in for the V-MoE S/32",
                   title="Fig. 7.7 (JFT-300M, 32 experts, k = 28 of 400 tokens): " + _MOE)
def test_fig77(claim):
    claim.reproduce()


@pytest.mark.claim("topk/fig-7.7/synthetic", kind="qualitative",
                   proxy="a synthetic teacher task (20 tokens of dimension 8, 10 classes) and one MoE layer of 4 MLP "
                         "experts, k = 11, stand in for JFT-300M and a V-MoE S/32; PAV for 10 Dykstra iterations",
                   title="Fig. 7.7 on a synthetic task: " + _MOE)
def test_fig77_synthetic(claim):
    claim.reproduce()
