"""The figures and tables of ``resnet-node`` measured on the document's data (CIFAR-10, ImageNet) and on stand-ins.

Each test runs a registered experiment at its ``"check"`` preset (what ``theory run CLAIM-ID`` reruns), records
the verdict of its claim and draws the figure in the document's layout
(:mod:`theory.experiments.resnet_node.drawing`). The declarations (criterion, printed numbers, presets) are in
:mod:`theory.experiments.resnet_node.figures`. A check on CIFAR-10 or ImageNet is skipped, with the message of
:class:`theory.datasets.DatasetMissing` (where the dataset is published), when the data is not under the data
root (``$THEORY_DATA``); the runs on scikit-learn's digits are proxies.
"""

from __future__ import annotations

import pytest

from theory import datasets
from theory.experiments import experiment
from theory.experiments.resnet_node import drawing


def _need(name):
    try:
        datasets.locate(name, None)
    except datasets.DatasetMissing as exc:
        pytest.skip(str(exc))


def _run(claim, name, claim_id, draw):
    exp = experiment(name)
    result = exp.run("check")
    verdict = exp.verdict_for(claim_id)(result)
    claim.record(verdict, figure=draw(result, claim_id=claim_id))


# --------------------------------------------------------------------------- Figure 3(a)


@pytest.mark.claim("resnet-node/fig-3a", kind="qualitative", aliases=("sander-thesis/fig-2.3a",),
                   title="CIFAR-10, weights tied within each layer: with 1/N the accuracy holds at large depth, "
                         "without it degrades")
def test_fig3a_cifar(claim):
    """Criterion: :data:`theory.experiments.resnet_node.FIG3A_EXPECTED`."""
    _need("cifar-10")
    _run(claim, "resnet_node.fig3a", "resnet-node/fig-3a", drawing.fig3a_figure)


@pytest.mark.claim("resnet-node/fig-3a/digits", kind="qualitative", aliases=("sander-thesis/fig-2.3a/digits",),
                   proxy="scikit-learn's digits and one layer of tied perceptron residuals V tanh(W x + b) (width 32) "
                         "stand in for CIFAR-10 and the convolutional ResNet with four tied layers",
                   title="Tied weights on the digits: with 1/N the accuracy holds up to depth 256, without it fails")
def test_fig3a_digits(claim):
    """Criterion: :data:`theory.experiments.resnet_node.FIG3A_DIGITS_EXPECTED`."""
    pytest.importorskip("sklearn")
    _run(claim, "resnet_node.fig3a_digits", "resnet-node/fig-3a/digits", drawing.fig3a_figure)


# --------------------------------------------------------------------------- Figure 3(b)


@pytest.mark.claim("resnet-node/fig-3b", kind="qualitative", aliases=("sander-thesis/fig-2.3b",),
                   title="ImageNet: a ResNet-101 trained with the adjoint method in its third layer (23 blocks) fails")
def test_fig3b_imagenet(claim):
    """Criterion: :data:`theory.experiments.resnet_node.FIG3B_EXPECTED`."""
    _need("imagenet")
    _run(claim, "resnet_node.fig3b", "resnet-node/fig-3b", drawing.fig3b_figure)


# --------------------------------------------------------------------------- Figure 3(c)


@pytest.mark.claim("resnet-node/fig-3c/cifar", kind="qualitative", aliases=("sander-thesis/fig-2.3c/cifar",),
                   title="CIFAR-10: the adjoint gradients' relative error falls with depth, HeunNet below ResNet")
def test_fig3c_cifar(claim):
    """Criterion: :data:`theory.experiments.resnet_node.FIG3C_CIFAR_EXPECTED`."""
    _need("cifar-10")
    _run(claim, "resnet_node.fig3c_cifar", "resnet-node/fig-3c/cifar", drawing.fig3c_figure)


@pytest.mark.claim("resnet-node/fig-3c/digits", kind="qualitative", aliases=("sander-thesis/fig-2.3c/digits",),
                   proxy="scikit-learn's digits and a perceptron residual V tanh(W x + b) (width 16, 4 epochs) stand in "
                         "for CIFAR-10 and the convolutional ResNet",
                   title="Networks trained on the digits: the adjoint gradients' relative error falls with depth, "
                         "HeunNet below ResNet")
def test_fig3c_digits(claim):
    """Criterion: :func:`theory.experiments.resnet_node.fig3c_digits_verdict`."""
    pytest.importorskip("sklearn")
    _run(claim, "resnet_node.fig3c_digits", "resnet-node/fig-3c/digits", drawing.fig3c_figure)


# --------------------------------------------------------------------------- Figure 4


@pytest.mark.claim("resnet-node/fig-4/cifar", kind="qualitative", aliases=("sander-thesis/fig-2.4/cifar",),
                   title="CIFAR-10: adjoint training fails at small depth, matches backprop at large depth; Heun "
                         "better or similar")
def test_fig4_cifar(claim):
    """Criterion: :data:`theory.experiments.resnet_node.FIG4_CIFAR_EXPECTED`."""
    _need("cifar-10")
    _run(claim, "resnet_node.fig4_cifar", "resnet-node/fig-4/cifar", drawing.fig4_figure)


# --------------------------------------------------------------------------- Tables 1 and 2


@pytest.mark.claim("resnet-node/table-1", kind="qualitative", aliases=("sander-thesis/table-2.1",),
                   title="CIFAR-10: the step 1/N does not change the accuracy of a ResNet-101")
def test_table1_cifar(claim):
    """Criterion: :data:`theory.experiments.resnet_node.TABLE1_EXPECTED`."""
    _need("cifar-10")
    _run(claim, "resnet_node.table1", "resnet-node/table-1", drawing.table1_figure)


@pytest.mark.claim("resnet-node/table-1/imagenet", kind="qualitative", aliases=("sander-thesis/table-2.1/imagenet",),
                   title="ImageNet: the step 1/N does not change the accuracy of a ResNet-101")
def test_table1_imagenet(claim):
    """Criterion: :data:`theory.experiments.resnet_node.TABLE1_EXPECTED`."""
    _need("imagenet")
    _run(claim, "resnet_node.table1_imagenet", "resnet-node/table-1/imagenet", drawing.table1_figure)


@pytest.mark.claim("resnet-node/table-2", kind="qualitative", aliases=("sander-thesis/table-2.2",),
                   title="CIFAR-10: untying a tied ResNet and fine-tuning its third layer with the adjoint keeps or "
                         "improves the accuracy")
def test_table2_cifar(claim):
    """Criterion: :data:`theory.experiments.resnet_node.TABLE2_EXPECTED`."""
    _need("cifar-10")
    _run(claim, "resnet_node.table2", "resnet-node/table-2", drawing.table2_figure)


@pytest.mark.claim("resnet-node/table-2/imagenet", kind="qualitative", aliases=("sander-thesis/table-2.2/imagenet",),
                   title="ImageNet: untying a tied ResNet and fine-tuning it with the adjoint keeps or improves the "
                         "accuracy")
def test_table2_imagenet(claim):
    """Criterion: :data:`theory.experiments.resnet_node.TABLE2_EXPECTED`."""
    _need("imagenet")
    _run(claim, "resnet_node.table2_imagenet", "resnet-node/table-2/imagenet", drawing.table2_figure)
