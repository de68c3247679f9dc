"""Claim checks of the figures of chapter 4 of the thesis (Marion) (paper key ``gen-bounds``) declared in
:mod:`theory.experiments.gen_bounds.figures` that need a dataset: Fig. 4.1 on MNIST, read from the data root
(``$THEORY_DATA``); without it the check is skipped, naming the dataset. The synthetic stand-in of Fig. 4.1 is
checked in checks/test_gen_bounds.py (``gen-bounds/fig-4.1``, a proxy)."""

import pytest

from theory.datasets import DatasetMissing, locate
from theory.experiments import experiment, figure

pytest.importorskip("torch")


def _require(name):
    try:
        locate(name, None)
    except DatasetMissing as exc:
        pytest.skip(str(exc))


@pytest.mark.claim("gen-bounds/fig-4.1/mnist", kind="qualitative",
                   title="Fig. 4.1 on MNIST (ResNet (4.10), width 30, ReLU, smooth initialisation; check preset depth "
                         "30 on 2000 training images): the generalization gap is positively rank-correlated with "
                         "max_k ||W_(k+1) - W_k||_inf over training epochs (A, B trained and fixed), and the penalty "
                         "lambda (sum ||W_(k+1) - W_k||_F^2)^(1/2) lowers both the gap and that maximum",
                   aliases=("marion-thesis/fig-4.1",))
def test_fig41_mnist(claim):
    _require("mnist")
    exp = experiment("gen_bounds.fig41_mnist")
    result = exp.run("check")
    claim.record(exp.verdict_for(claim.id)(result), figure=figure("gen-bounds/fig-4.1").draw(result))
