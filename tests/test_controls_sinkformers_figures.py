"""Negative controls of checks/test_sinkformers_figures.py: each reruns the claim's measurement with one ingredient
broken and asserts that the claim's verdict fails.

* Fig. 5.2 (column sums near 1): a near hard-maximum SoftMax (logits times 100) makes every query attend to one
  key, so the column sums become counts, mostly 0.
* Figs. 5.3-5.6 and Table 5.1 (Sinkformer at least as accurate): a Sinkformer left untrained (learning rate
  1e-9) on learnable data.
* The one-patch identity: 4 patches (4 tokens) instead of one.
* Table 5.2 (similar BLEU): the Sinkformer fine-tuned at a destructive learning rate.

The data claims run on the synthetic data of tests/test_sinkformers_figures.py (theory.datasets.load
monkeypatched) at tiny sizes.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import theory.datasets  # noqa: E402
from theory.experiments import experiment  # noqa: E402

from test_sinkformers_figures import TINY, fake_load  # noqa: E402


@pytest.fixture
def fake_data(monkeypatch, tmp_path):
    monkeypatch.setattr(theory.datasets, "load", fake_load(tmp_path / "PetImages"))


def _verdict(name, claim, **overrides):
    exp = experiment(f"sinkformers.{name}")
    return exp.verdict_for(claim)(exp.run("check", **overrides))


def test_fig52_digits_hard_attention_fails():
    v = _verdict("vit_digits", "sinkformers/fig-5.2/digits", temperature=100.0, epochs=2, record_epochs=(1, 2))
    assert v.status == "fail", v.message


def test_fig52_mnist_hard_attention_fails(fake_data):
    v = _verdict("vit_mnist", "sinkformers/fig-5.2", **{**TINY["vit_mnist"], "temperature": 100.0})
    assert v.status == "fail", v.message


def test_fig52_iwslt_hard_attention_fails(fake_data):
    v = _verdict("iwslt", "sinkformers/fig-5.2/iwslt", **{**TINY["iwslt"], "temperature": 100.0})
    assert v.status == "fail", v.message


@pytest.mark.parametrize("claim", ["sinkformers/fig-5.3", "sinkformers/table-5.1"])
def test_modelnet_untrained_sinkformer_fails(claim, fake_data):
    v = _verdict("modelnet", claim, **{**TINY["modelnet"], "epochs": 6, "lr_sinkformer": 1e-9})
    assert v.status == "fail", v.message


def test_fig54_untrained_sinkformer_fails(fake_data):
    v = _verdict("imdb", "sinkformers/fig-5.4", **{**TINY["imdb"], "epochs": 6, "lr": 3e-3, "lr_sinkformer": 1e-9})
    assert v.status == "fail", v.message


def test_fig55_untrained_sinkformer_fails(fake_data):
    v = _verdict("vit_cats_dogs", "sinkformers/fig-5.5", **{**TINY["vit_cats_dogs"], "epochs": 6,
                                                            "lr_sinkformer": 1e-9})
    assert v.status == "fail", v.message


def test_fig56_mnist_untrained_sinkformer_fails(fake_data):
    # mean pooling: on the 80 synthetic images a class-token read-out learns nothing in 4 epochs (both models stay
    # at chance), while the mean patch carries the bar's position; the class-token path is controlled on digits
    v = _verdict("patch_mnist", "sinkformers/fig-5.6", **{**TINY["patch_mnist"], "epochs": 4, "lr_sinkformer": 1e-9,
                                                          "pool": "mean"})
    assert v.status == "fail", v.message


def test_fig56_digits_untrained_sinkformer_fails():
    v = _verdict("patch_digits", "sinkformers/fig-5.6/digits", patches=(4, 8), epochs=3, milestones=(),
                 lr_sinkformer=1e-9)
    assert v.status == "fail", v.message


def test_one_patch_several_tokens_fails():
    v = _verdict("one_patch", "sinkformers/fig-5.6/one-patch", patch=14)
    assert v.status == "fail", v.message
    assert v.measured["n_tokens"] == 4


def test_table52_destroyed_sinkformer_fails(fake_data):
    # a copy task the Transformer learns (BLEU about 70 after 60 epochs), then a Sinkformer fine-tuned at 30 lr
    v = _verdict("iwslt", "sinkformers/table-5.2", **{**TINY["iwslt"], "epochs": 60, "lr": 3e-3, "dim": 32,
                                                      "batch": 32, "sinkformer_finetune_factor": 30.0,
                                                      "finetune_epochs": 2})
    assert v.status == "fail", v.message
