"""The figures and tables of ``resnet-node``, declared for ``theory reproduce`` (:func:`theory.experiments.register_figure`).

Standalone numbering (NeurIPS 2022): Figs. 1-4 and Tables 1-2, which are Figs. 2.1-2.4 and Tables 2.1-2.2
of chapter 2 of Sander's thesis. The document's own runs use CIFAR-10 and ImageNet (``data=``); the runs on a
stand-in (two moons, scikit-learn's digits, weights drawn smooth in depth) are declarations of their own with
``substitute`` set, whose claims are proxies. Claim IDs: ``resnet-node/<label>`` for the document's run,
except Figs. 3(c) and 4, whose stand-in claims kept their earlier IDs ``resnet-node/fig-3c`` (declared as
``fig-3c/synthetic``) and ``resnet-node/fig-4`` (declared as ``fig-4/moons``), and whose CIFAR-10 claims are
``resnet-node/fig-3c/cifar`` and ``resnet-node/fig-4/cifar``.
"""

from __future__ import annotations

from theory.experiments import Printed, register_figure

from . import drawing
from .adjoint import FIG3C_EXPECTED
from .images import (FIG3A_EXPECTED, FIG3B_EXPECTED, FIG4_CIFAR_EXPECTED, TABLE1_EXPECTED, TABLE2_EXPECTED)
from .tied_depth import FIG3A_DIGITS_EXPECTED
from .trained import FIG1_EXPECTED, FIG4_THRESHOLDS

K = "resnet-node"


def _draw(func, claim_id):
    return lambda result: func(result, claim_id=claim_id)


# --------------------------------------------------------------------------- Figure 1

register_figure(
    K, "fig-1", "Trajectories of 1-D ResNets trained on x -> x/2 (smooth, no crossing) and x -> -x/2 (crossing)",
    claims=("resnet-node/fig-1",), experiment="resnet_node.fig1", draw=_draw(drawing.fig1_figure, "resnet-node/fig-1"),
    criterion=(f"both fits reach MSE <= {FIG1_EXPECTED['mse_max']:g}; the -x/2 network has >= "
               f"{FIG1_EXPECTED['crossings_neg_min']} crossing pair of trajectories and a layer with f'_n / N <= "
               f"{FIG1_EXPECTED['min_fprime_over_N_neg_max']:g}; the x/2 network and both interpolating ODEs have "
               f"{FIG1_EXPECTED['ode_crossings_max']} crossings; the ODE of the -x/2 weights stays above the least "
               "MSE of an increasing map"),
    printed=(Printed("layers of the ResNets", 300, "caption of Fig. 1", measured="N",
                     note="the check preset trains N = 32; the paper preset N = 300"),
             Printed("crossing trajectories, x -> -x/2", None, "caption of Fig. 1", measured="crossings_neg",
                     note="the caption: trajectories are not smooth and intersect"),
             Printed("crossing trajectories, x -> x/2", None, "caption of Fig. 1", measured="crossings_pos",
                     note="the caption: smooth and do not intersect")),
    preset_note=("the document gives no training details for Fig. 1 (only the depth 300, used by the paper preset); "
                 "trained from the identity at N = 300, full-batch Adam stalled at the constant fit in every schedule "
                 "tried, so the paper preset grows the depth: fits at N = 32, spread over 300 layers (the same map), "
                 "then 1000 Adam steps at N = 300 (Fig1Config.grow_from)"))

# --------------------------------------------------------------------------- Figure 2

register_figure(
    K, "fig-2", "Distance of the depth embedding Psi_N(t, .) to its limit over training time and depth",
    claims=("resnet-node/fig-2",), experiment="resnet_node.fig2", draw=_draw(drawing.fig2_figure, "resnet-node/fig-2"),
    criterion=("the distance decreases strictly from each N to 2N at every t > 0, and the least-squares slope over "
               "N of its time average lies in [-1.2, -0.8] (Th. 1: O(1/N))"),
    printed=(Printed("distance to the limit as N grows", None, "caption of Fig. 2", measured="slope",
                     note="the caption: goes to 0 as N -> infinity (Th. 1: rate 1/N)"),),
    preset_note=("the deep linear ResNet in the large regime, where Assumption 1 fails (the claim is a proxy for "
                 "Th. 1); the limit Psi approximated by a reference network of depth 1024 (paper preset 4096)"))

# --------------------------------------------------------------------------- Figure 3(a)

_FIG3A_PRINTED = (
    Printed("test accuracy against blocks per layer", None, "Fig. 3(a)", measured="scaled_at_largest",
            note="curve only: with 1/N stable, without 1/N bad at large depth"),
    Printed("ImageNet, tied weights, 1/N, 4 blocks per layer", 0.725, "Section 5.1, text (mean over 2 runs)",
            note="ImageNet run of the text, not part of this CIFAR-10 figure"),
    Printed("ImageNet, tied weights, 1/N, 8 blocks per layer", 0.732, "Section 5.1, text (mean over 2 runs)",
            note="ImageNet run of the text, not part of this CIFAR-10 figure"),
    Printed("ImageNet, tied weights, 1/N, 16 blocks per layer", 0.72, "Section 5.1, text (mean over 2 runs)",
            note="ImageNet run of the text, not part of this CIFAR-10 figure"),
)

register_figure(
    K, "fig-3a", "CIFAR-10 test accuracy against blocks per layer, weights tied within each layer, with and without 1/N",
    claims=("resnet-node/fig-3a",), experiment="resnet_node.fig3a",
    draw=_draw(drawing.fig3a_figure, "resnet-node/fig-3a"), data="cifar-10",
    criterion=(f"at the largest number of blocks the mean accuracy with 1/N exceeds the classical one by >= "
               f"{FIG3A_EXPECTED['gap_at_largest_min']:g}, and with 1/N it falls by <= "
               f"{FIG3A_EXPECTED['scaled_drop_max']:g} from the smallest number of blocks"),
    printed=_FIG3A_PRINTED,
    preset_note=("paper preset: the recipe of Appendix 2.B.1 (batch 128, 200 epochs, cosine lr 0.1, weight decay "
                 "5e-4), 3 runs; the blocks per layer (1 ... 64) and the width 64 (a ResNet-18 layout) are not "
                 "printed by the document and are our reading"))

register_figure(
    K, "fig-3a/digits", "Tied-weight residual networks on the digits: accuracy against depth, with and without 1/N",
    claims=("resnet-node/fig-3a/digits",), experiment="resnet_node.fig3a_digits",
    draw=_draw(drawing.fig3a_figure, "resnet-node/fig-3a/digits"),
    criterion=(f"at the largest depth the mean accuracy with 1/N exceeds the classical one by >= "
               f"{FIG3A_DIGITS_EXPECTED['gap_at_largest_min']:g}, and with 1/N it falls by <= "
               f"{FIG3A_DIGITS_EXPECTED['scaled_drop_max']:g} from the smallest depth"),
    printed=(Printed("test accuracy against depth", None, "Fig. 3(a)", measured="scaled_at_largest",
                     note="curve only"),),
    substitute=("scikit-learn's digits and one layer of tied perceptron residuals V tanh(W x + b) stand in for "
                "CIFAR-10 and the convolutional ResNet"))

# --------------------------------------------------------------------------- Figure 3(b)

register_figure(
    K, "fig-3b", "Failure of the adjoint method: ResNet-101 on ImageNet with adjoint gradients in its third layer",
    claims=("resnet-node/fig-3b",), experiment="resnet_node.fig3b",
    draw=_draw(drawing.fig3b_figure, "resnet-node/fig-3b"), data="imagenet",
    criterion=(f"the adjoint-trained network ends >= {FIG3B_EXPECTED['failure_gap_min']:g} of top-1 test accuracy "
               "below the backprop-trained one"),
    printed=(Printed("blocks of the third layer, trained with the adjoint method", 23, "caption of Fig. 3(b)",
                     measured="adjoint_layer_blocks", note="the check preset has 3"),
             Printed("test accuracy over training", None, "Fig. 3(b)", measured="adjoint_final",
                     note="curve only: the adjoint fails to train")),
    preset_note=("paper preset: Appendix 2.B.2 (batch 256, 100 epochs, lr 0.1 / 10 every 30, weight decay 1e-4, "
                 "crops 224 of images resized to 256), one run; transitions between layers are a strided "
                 "convolution rather than He et al.'s projection block"))

# --------------------------------------------------------------------------- Figure 3(c)

register_figure(
    K, "fig-3c", "Relative error of the adjoint gradients of every parameter against depth, ResNet and HeunNet on "
                 "CIFAR-10",
    claims=("resnet-node/fig-3c/cifar",), experiment="resnet_node.fig3c_cifar",
    draw=_draw(drawing.fig3c_figure, "resnet-node/fig-3c/cifar"), data="cifar-10",
    criterion=("the median relative error over the parameters decreases strictly with depth for both networks and "
               "every run, and the HeunNet's median is below the ResNet's at every depth and run"),
    printed=(Printed("relative error against depth", None, "Fig. 3(c)", measured="euler_median_last",
                     note="points only: decreasing with depth, HeunNet below ResNet"),),
    preset_note=("the document does not say which networks Fig. 3(c) measures; we take the simple ResNet and "
                 "HeunNet of Fig. 4 trained by Appendix 2.B.1 (90 epochs), depths 4 ... 64, 3 runs, the gradients "
                 "compared in float64 on 256 training images"))

register_figure(
    K, "fig-3c/synthetic", "Relative error of the adjoint gradients against depth, weights smooth in depth",
    claims=("resnet-node/fig-3c",), experiment="resnet_node.fig3c",
    draw=_draw(drawing.fig3c_figure, "resnet-node/fig-3c"),
    criterion=(f"slope of the ResNet's median relative error {FIG3C_EXPECTED['euler_slope']:g} +- "
               f"{FIG3C_EXPECTED['euler_tol']:g} (Prop. 4), the HeunNet's <= {FIG3C_EXPECTED['heun_slope_max']:g} "
               "(Prop. 6, smooth weights), and the HeunNet's median below the ResNet's"),
    printed=(Printed("relative error against depth", None, "Fig. 3(c)", measured="euler_slope",
                     note="points only: decreasing with depth, HeunNet below ResNet"),),
    substitute=("weights on a smooth random path in depth and one random batch, a perceptron residual V tanh(W x + "
                "b), stand in for the convolutional ResNet trained on CIFAR-10"))

register_figure(
    K, "fig-3c/digits", "Relative error of the adjoint gradients of networks trained on the digits",
    claims=("resnet-node/fig-3c/digits",), experiment="resnet_node.fig3c_digits",
    draw=_draw(drawing.fig3c_figure, "resnet-node/fig-3c/digits"),
    criterion=("the median relative error decreases strictly with depth for both networks and every seed, and the "
               "HeunNet's median is below the ResNet's at every depth and seed (slopes reported)"),
    printed=(Printed("relative error against depth", None, "Fig. 3(c)", measured="euler_slope",
                     note="points only: decreasing with depth, HeunNet below ResNet"),),
    substitute=("scikit-learn's digits and a perceptron residual V tanh(W x + b) (width 16) stand in for CIFAR-10 "
                "and the convolutional ResNet"))

# --------------------------------------------------------------------------- Figure 4

register_figure(
    K, "fig-4", "Test error against depth on CIFAR-10: ResNet / HeunNet, backprop / adjoint",
    claims=("resnet-node/fig-4/cifar",), experiment="resnet_node.fig4_cifar",
    draw=_draw(drawing.fig4_figure, "resnet-node/fig-4/cifar"), data="cifar-10",
    criterion=("median test errors: (i) at depth 2 the ResNet-adjoint error is > 3 x the backprop one or > it + "
               f"0.10; (ii) |adjoint - backprop| < {FIG4_CIFAR_EXPECTED['large_depth_gap_euler_below']:g} at the "
               "largest depth for both networks; (iii) HeunNet-adjoint <= ResNet-adjoint + "
               f"{FIG4_CIFAR_EXPECTED['heun_minus_euler_adjoint_worst_max']:g} at every depth and <= it at "
               "depths 4, 8, 16"),
    printed=(Printed("test error against depth", None, "Fig. 4", measured="euler_adjoint_N2",
                     note="curves only: adjoint large at small depth, equal at large depth"),
             Printed("runs per point (median)", 5, "Section 5.2, text", note="the check preset runs 1")),
    preset_note=("paper preset: Appendix 2.B.1 for the simple ResNet (batch 256, 90 epochs, lr 0.1 / 10 every 30, "
                 "weight decay 5e-4), 5 runs, depths 2 ... 64 (read from the figure)"))

register_figure(
    K, "fig-4/moons", "Test error against depth on two moons: ResNet / HeunNet, backprop / adjoint",
    claims=("resnet-node/fig-4",), experiment="resnet_node.fig4",
    draw=_draw(drawing.fig4_figure, "resnet-node/fig-4"),
    criterion=(f"median test errors: (i) at depth 2 the ResNet-adjoint error is > "
               f"{FIG4_THRESHOLDS['small_depth_ratio']:g} x the backprop one or > "
               f"{FIG4_THRESHOLDS['small_depth_abs']:g}; (ii) |adjoint - backprop| < "
               f"{FIG4_THRESHOLDS['large_depth_gap']:g} at the largest depth for both networks; (iii) "
               "HeunNet-adjoint <= ResNet-adjoint at depths 2 and 4"),
    printed=(Printed("test error against depth", None, "Fig. 4", measured="euler-adjoint_N2",
                     note="curves only"),),
    substitute=("two moons lifted to R^6 and a perceptron residual V tanh(W x + b) of width 16, 300 full-batch "
                "Adam steps, stand in for CIFAR-10 and the convolutional ResNet"))

# --------------------------------------------------------------------------- Tables 1 and 2

register_figure(
    K, "table-1", "Test accuracy of a ResNet-101 on CIFAR-10, classical rule against the step 1/N",
    claims=("resnet-node/table-1",), experiment="resnet_node.table1",
    draw=_draw(drawing.table1_figure, "resnet-node/table-1"), data="cifar-10",
    criterion=f"mean accuracies with and without 1/N differ by <= {TABLE1_EXPECTED['abs_difference_max']:g}",
    printed=(Printed("ResNet-101, CIFAR-10", 0.955, "Table 1, row CIFAR-10, column ResNet-101", measured="classical",
                     note="printed 95.5 +- 0.1 %"),
             Printed("Ours (1/N), CIFAR-10", 0.955, "Table 1, row CIFAR-10, column Ours", measured="scaled",
                     note="printed 95.5 +- 0.1 %")),
    preset_note=("paper preset: Appendix 2.B.1 (batch 128, 200 epochs, cosine lr 0.1, weight decay 5e-4); the number "
                 "of runs behind +- 0.1 is not printed (3 used)"))

register_figure(
    K, "table-1/imagenet", "Test accuracy of a ResNet-101 on ImageNet, classical rule against the step 1/N",
    claims=("resnet-node/table-1/imagenet",), experiment="resnet_node.table1_imagenet",
    draw=_draw(drawing.table1_figure, "resnet-node/table-1/imagenet"), data="imagenet",
    criterion=f"mean accuracies with and without 1/N differ by <= {TABLE1_EXPECTED['abs_difference_max']:g}",
    printed=(Printed("ResNet-101, ImageNet", 0.778, "Table 1, row ImageNet, column ResNet-101", measured="classical"),
             Printed("Ours (1/N), ImageNet", 0.779, "Table 1, row ImageNet, column Ours", measured="scaled")),
    preset_note="paper preset: Appendix 2.B.2 (batch 256, 100 epochs, lr 0.1 / 10 every 30, weight decay 1e-4), one run")

register_figure(
    K, "table-2", "CIFAR-10: tied ResNet (4 blocks per layer) untied to (4, 4, 64, 4) blocks, third layer fine-tuned "
                  "with the adjoint",
    claims=("resnet-node/table-2",), experiment="resnet_node.table2",
    draw=_draw(drawing.table2_figure, "resnet-node/table-2"), data="cifar-10",
    criterion=(f"median over the pretraining runs: after - before fine-tuning >= "
               f"{TABLE2_EXPECTED['finetune_gain_min']:g}, and the tied network's accuracy minus the untied "
               f"copy's before fine-tuning <= {TABLE2_EXPECTED['transfer_loss_max']:g}"),
    printed=(Printed("before fine-tuning, CIFAR-10", 0.9525, "Table 2, row CIFAR-10, column Before F.T.",
                     measured="before", note="printed 95.25 +- 0.2 %"),
             Printed("after fine-tuning, CIFAR-10", 0.9565, "Table 2, row CIFAR-10, column After F.T.",
                     measured="after", note="printed 95.65 +- 0.1 %"),
             Printed("accuracy after the transfer to deeper ResNets (lower bound)", 0.945, "Section 5.2, text",
                     measured="before", note="the text: remains above 94.5 %")),
    preset_note=("paper preset: pretraining by Appendix 2.B.1 (200 epochs), fine-tuning 5 epochs at constant lr 1e-3, "
                 "batch 128, weight decay 5e-4; median over 5 pretraining runs"))

register_figure(
    K, "table-2/imagenet", "ImageNet: tied ResNet (8 blocks per layer) untied to 100 blocks per layer, fine-tuned "
                           "with the adjoint",
    claims=("resnet-node/table-2/imagenet",), experiment="resnet_node.table2_imagenet",
    draw=_draw(drawing.table2_figure, "resnet-node/table-2/imagenet"), data="imagenet",
    criterion=(f"after - before fine-tuning >= {TABLE2_EXPECTED['finetune_gain_min']:g}, and the tied network's "
               f"accuracy minus the untied copy's before fine-tuning <= {TABLE2_EXPECTED['transfer_loss_max']:g}"),
    printed=(Printed("before fine-tuning, ImageNet", 0.731, "Table 2, row ImageNet, column Before F.T.",
                     measured="before"),
             Printed("after fine-tuning, ImageNet", 0.751, "Table 2, row ImageNet, column After F.T.",
                     measured="after"),
             Printed("accuracy after the transfer to deeper ResNets (lower bound)", 0.72, "Section 5.2, text",
                     measured="before", note="the text: remains above 72 %")),
    preset_note=("paper preset: pretraining by Appendix 2.B.2 (100 epochs), fine-tuning of every residual layer with "
                 "the adjoint, 3 epochs at constant lr 5e-4, batch 256, weight decay 1e-4; bottleneck blocks (the "
                 "document does not name the block)"))
