"""Claim checks of the image experiments of Momentum ResNets (Sander's thesis, chapter 4: Sec. 4.5.2, App. 4.D, 4.F).

Each check runs its registered experiment at the "check" preset and records the verdict the registry gives for the
claim. The checks on CIFAR-10, CIFAR-100, ImageNet and hymenoptera skip, naming the dataset and where it is
published, when the dataset is not under the data root (``$THEORY_DATA``); the memory of Fig. 4.7 does not depend
on the images (random inputs of the document's shapes) and the digits run of Fig. 4.6 is a proxy.
"""

import pytest

import theory.datasets
import theory.experiments.momentum.images as im


def _need(*names):
    for name in names:
        try:
            theory.datasets.locate(name, None)
        except theory.datasets.DatasetMissing as exc:
            pytest.skip(str(exc))


@pytest.mark.claim("momentum/table-4.2", kind="qualitative", aliases=("sander-thesis/table-4.2",),
                   title="Table 4.2: on CIFAR-10 and CIFAR-100, Momentum ResNets (v0 = 0 and v0 = f(x0)) reach the "
                         "ResNet's test accuracy (mean gap <= max(0.01, 3 SE))")
def test_table42_cifar(claim):
    _need("cifar-10", "cifar-100")
    claim.reproduce()


@pytest.mark.claim("momentum/fig-4.12", kind="qualitative", aliases=("sander-thesis/fig-4.12",),
                   title="Fig. 4.12: the CIFAR-10 learning curves (test error, test loss) of Momentum ResNets follow "
                         "the ResNet's")
def test_fig412_curves(claim):
    _need("cifar-10", "cifar-100")
    claim.reproduce()


@pytest.mark.claim("momentum/fig-4.6", kind="qualitative", aliases=("sander-thesis/fig-4.6",),
                   title="Fig. 4.6 (upper row): on CIFAR-10 the accuracy of Momentum ResNets is robust to gamma: at "
                         "most 0.03 lost at another gamma_test, from-scratch accuracies within 0.03")
def test_fig46_gamma(claim):
    _need("cifar-10")
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="on the digits, the model trained at gamma_train = 0 loses 0.64 of accuracy at gamma_test = 0.9 without refit (criterion <= 0.03; 0.01 up to gamma_test = 0.6, 0.78 at gamma_test = 1 where Eq. (4.2) with v0 = 0 makes every momentum step the identity); the one trained at gamma_train = 1 (the document's second model, whose residual functions get no gradient under Eq. (4.2)) loses 0.029 here but 0.80 on the deeper paper-preset network")
@pytest.mark.claim("momentum/fig-4.6/digits", kind="qualitative", aliases=("sander-thesis/fig-4.6",),
                   proxy="scikit-learn's 8x8 digits and a small one-stage Momentum ResNet stand in for CIFAR-10 and "
                         "the Momentum ResNet-101",
                   title="Fig. 4.6 (upper row) on digits: Momentum ResNets lose at most 0.03 of accuracy at another "
                         "gamma_test, from-scratch accuracies within 0.03")
def test_fig46_gamma_digits(claim):
    claim.reproduce(draw=lambda result: im.gamma_figure(result, claim.id))


@pytest.mark.claim("momentum/fig-4.6/imagenet", kind="qualitative", aliases=("sander-thesis/fig-4.6",),
                   title="Fig. 4.6 (lower row): on ImageNet the invertible models of depth 101 (Momentum ResNets, "
                         "RevNet) reach the ResNet-101's top-1 error to within 0.02")
def test_fig46_imagenet(claim):
    _need("imagenet")
    claim.reproduce()


@pytest.mark.claim("momentum/fig-4.7", kind="qualitative", aliases=("sander-thesis/fig-4.7",),
                   title="Fig. 4.7 (upper row): the activation memory of a training step is affine in the batch size "
                         "and the memory-free Momentum ResNet's per-sample memory is at most half the ResNet's")
def test_fig47_memory(claim):
    claim.reproduce()


@pytest.mark.claim("momentum/fig-4.7/accuracy", kind="qualitative", aliases=("sander-thesis/fig-4.7",),
                   title="Fig. 4.7 (lower row): on CIFAR-10 larger gamma uses strictly less memory while the accuracy "
                         "at the largest gamma stays within 0.03 of the best")
def test_fig47_accuracy(claim):
    _need("cifar-10")
    claim.reproduce()


@pytest.mark.claim("momentum/fig-4.8", kind="qualitative", aliases=("sander-thesis/fig-4.8",),
                   title="Fig. 4.8: fine-tuning on hymenoptera, the Momentum ResNet (batch 4) reaches the ResNet's "
                         "(batch 2) best accuracy in at most 0.75 of its time")
def test_fig48_finetune(claim):
    _need("hymenoptera")
    claim.reproduce()


@pytest.mark.claim("momentum/fig-4.9", kind="qualitative", aliases=("sander-thesis/fig-4.9",),
                   title="Fig. 4.9: with few channels, second-order (momentum) ODE blocks beat first-order ones on "
                         "CIFAR-10 by at least 0.02 of accuracy")
def test_fig49_ode(claim):
    _need("cifar-10")
    claim.reproduce()
