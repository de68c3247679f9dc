"""Claim checks of Figs. 5.2 and 5.3 of the thesis (Marion), chapter 5 (paper key ``rnn-kernel``), declared in
:mod:`theory.experiments.rnn_kernel.figures`: the adversarial robustness of the RKHS-penalised RNN
(:mod:`theory.experiments.rnn_kernel.robustness`, PyTorch). Fig. 5.1 is checked in checks/test_rnn_kernel.py
(``rnn-kernel/fig-5.1``)."""

import pytest

from theory.experiments import experiment, figure

pytest.importorskip("torch")

_CHECK = ("one run instead of 20, 200 test examples instead of 1000 and 10 PGD steps instead of 50 (the paper "
          "preset has the document's sizes); spirals, radii and L = 0.05 of the penalty's field are ours or the "
          "authors' code's, not printed")


@pytest.fixture(scope="module")
def robustness_result():
    return experiment("rnn_kernel.robustness").run("check")


def _record(claim, result):
    verdict = experiment("rnn_kernel.robustness").verdict_for(claim.id)(result)
    claim.record(verdict, figure=figure(claim.id).draw(result))


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="check preset (one run): the penalised RNN is less accurate than the plain one at eps <= 0.6 (clean 0.625 vs 0.77, eps 0.6: 0.53 vs 0.565) and more at eps >= 0.8 (eps 1: 0.49 vs 0.36): the curves cross (criterion: >= at every eps > 0); the paper preset (20 runs, 1808 s) crosses too: 0.631 vs 0.803 at eps = 0, 0.495 vs 0.481 at 0.8, 0.463 vs 0.398 at 1")
@pytest.mark.claim("rnn-kernel/fig-5.2", kind="qualitative", proxy=_CHECK,
                   title="Fig. 5.2: on the spirals' rotation direction (RNN (5.1), 32 tanh units, 50 examples, 200 "
                         "epochs), the RNN penalised by 0.1 ||xi_alpha||_H^2 (N = 3) has a mean adversarial accuracy "
                         "under Frobenius-norm PGD >= the unpenalised RNN's at every eps > 0",
                   aliases=("marion-thesis/fig-5.2",))
def test_fig52_adversarial(claim, robustness_result):
    _record(claim, robustness_result)


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="check preset: the RKHS norm is 0.141 (penalised) vs 660 (plain), as in the text, but the Frobenius norms are 10.8 vs 30.0, a factor 2.78 (criterion: within a factor 2); the paper preset passes (run 9: RKHS 60.2 vs 0.0868, Frobenius 26.9 vs 14.3, a factor 1.88; RKHS norm lower in 20 of 20 runs)")
@pytest.mark.claim("rnn-kernel/fig-5.3", kind="qualitative", proxy=_CHECK,
                   title="Fig. 5.3: after training, the penalised RNN's RKHS norm ||xi_alpha||_H is below the "
                         "unpenalised one's while their Frobenius norms ||[U V]||_F are within a factor 2",
                   aliases=("marion-thesis/fig-5.3",))
def test_fig53_norms(claim, robustness_result):
    _record(claim, robustness_result)
