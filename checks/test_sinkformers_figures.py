"""Checks of the figures and tables of M. E. Sander's thesis, chapter 5 ("Sinkformers", paper key ``sinkformers``)
that train models: Figs. 5.2-5.6 and Tables 5.1-5.2, composed from theory.experiments.sinkformers.training and
drawn by theory.experiments.sinkformers.figures. The document's data (MNIST, IWSLT'14, ModelNet 40, IMDb, cats
and dogs) are read from the data root (``$THEORY_DATA``); a check whose dataset is absent is skipped with the
dataset's name and where it is published. scikit-learn's digits stand in for MNIST in the proxies.
"""

from __future__ import annotations

import pytest


pytest.importorskip("torch")


_DIGITS = "scikit-learn's 8 x 8 digits (1437 training, 360 test images) stand in for MNIST"


@pytest.mark.claim("sinkformers/fig-5.2", kind="qualitative", aliases=("sander-thesis/fig-5.2",),
                   title="Fig. 5.2 (thesis ch. 5), ViT on MNIST: the Transformer's attention columns get closer to "
                         "summing to 1 during training; at the end a majority sum to within 0.25 of 1")
def test_fig52_mnist(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.2/iwslt", kind="qualitative", aliases=("sander-thesis/fig-5.2",),
                   proxy="a small encoder-decoder of ours (word-level BPE pieces, greedy decoding) stands in for "
                         "fairseq's Transformer",
                   title="Fig. 5.2 (thesis ch. 5), translation encoder on IWSLT'14: the attention columns get closer "
                         "to summing to 1 during training; at the end a majority sum to within 0.25 of 1")
def test_fig52_iwslt(claim):
    claim.reproduce()


@pytest.mark.slow
@pytest.mark.not_reproduced(reason="on the digits ViT the column sums spread during training (read out through a class token: 0.472 of columns within 0.25 of 1 after 10 epochs, mean |s - 1| from 0.114 after the first epoch to 0.342; 0.405 after 45 epochs at the paper preset; with mean pooling, where the last layer's column sums are the read-out's weights, 0.146, and 0.089 after 45 epochs at the paper preset; criterion >= 0.5 and a falling spread); no bug found (column sums over the queries of row-stochastic SoftMax matrices); the authors' own MNIST ViT setup (cls token, pre-norm, 1 layer, 1 head, lr 2e-3, batch 10) on digits spreads too (0.08-0.30)")
@pytest.mark.claim("sinkformers/fig-5.2/digits", kind="qualitative", aliases=("sander-thesis/fig-5.2",),
                   proxy=_DIGITS + "; a 2-block ViT of width 32",
                   title="Fig. 5.2 (thesis ch. 5) on digits: the ViT's attention columns get closer to summing to 1 "
                         "during training; at the end a majority sum to within 0.25 of 1")
def test_fig52_digits(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.3", kind="qualitative", aliases=("sander-thesis/fig-5.3",),
                   title="Fig. 5.3 (thesis ch. 5), ModelNet 40: every Set Sinkformer (Sinkhorn iterations > 1) reaches "
                         "a median test accuracy at least the Set Transformer's")
def test_fig53(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/table-5.1", kind="qualitative", aliases=("sander-thesis/table-5.1",),
                   title="Table 5.1 (thesis ch. 5), ModelNet 40: the Set Sinkformer's median test accuracy is at least "
                         "the Set Transformer's (the Set rows)")
def test_table51(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/table-5.1/pct", kind="qualitative", aliases=("sander-thesis/table-5.1",),
                   title="Table 5.1 (thesis ch. 5), ModelNet 40, Point Cloud rows: the Point Cloud Sinkformer's median "
                         "and mean test accuracies over the runs are at least the Point Cloud Transformer's")
def test_table51_pct(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.4", kind="qualitative", aliases=("sander-thesis/fig-5.4",),
                   title="Fig. 5.4 (thesis ch. 5), IMDb: the Sinkformer's (3 iterations) final test accuracy is at "
                         "least the Transformer's")
def test_fig54(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.5", kind="qualitative", aliases=("sander-thesis/fig-5.5",),
                   title="Fig. 5.5 (thesis ch. 5), cats and dogs: the ViT-Sinkformer's median and maximum test "
                         "accuracies over the runs are at least the ViT's")
def test_fig55(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.6", kind="qualitative", aliases=("sander-thesis/fig-5.6",),
                   title="Fig. 5.6 (thesis ch. 5), MNIST, one-layer one-head attention read out through a class "
                         "token: the Sinkformer's test accuracy is at least the Transformer's at every patch size "
                         "below 28")
def test_fig56_mnist(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.6/digits", kind="qualitative", aliases=("sander-thesis/fig-5.6",),
                   proxy=_DIGITS + " (patches 2, 4, 8)",
                   title="Fig. 5.6 (thesis ch. 5) on digits, one-layer one-head attention read out through a class "
                         "token: the Sinkformer's test accuracy is at least the Transformer's at patches 2 and 4")
def test_fig56_digits(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/fig-5.6/one-patch", kind="identity", aliases=("sander-thesis/fig-5.6",),
                   title="§5.6.4 (thesis ch. 5): with one patch of size 28 the attention matrix is 1 x 1 and the "
                         "Sinkformer equals the Transformer: same outputs and gradients (float64, to 1e-12)")
def test_one_patch(claim):
    claim.reproduce()


@pytest.mark.claim("sinkformers/table-5.2", kind="qualitative", aliases=("sander-thesis/table-5.2",),
                   proxy="a small encoder-decoder of ours (greedy decoding, our corpus BLEU) stands in for fairseq's "
                         "Transformer, beam search and BLEU",
                   title="Table 5.2 (thesis ch. 5), IWSLT'14 de-en: a similar BLEU: the fine-tuned Sinkformer at most "
                         "0.5 below the Transformer, the un-adapted one (the Transformer's weights) at most 1.0 below")
def test_table52(claim):
    claim.reproduce()
