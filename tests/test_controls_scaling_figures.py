"""Negative controls of the figure checks of ``scaling`` (checks/test_scaling_figures.py): each reruns the
measurement with the figure's defining ingredient broken and asserts that the verdict fails."""

import dataclasses

import numpy as np

from theory.experiments import experiment
from theory.experiments.scaling import figures
from theory.experiments.scaling._train import FIG9_ACCEPT


def test_fig2b_control_one_layer_is_not_lognormal():
    """A single layer at full scale (L = 1, beta ~ 0): no product of many near-identity factors, so no central
    limit for the log of the ratio; the normality test rejects it."""
    exp = experiment("scaling.fig2_explicit")
    verdict = figures.fig2b_verdict(exp.run("check", runs=2000, L=1, beta=0.01))
    assert verdict.status == "fail" and verdict.measured["normality_p"] < figures.FIG2B_P_MIN


def test_fig2b_nominal_passes_at_the_control_size():
    """2000 networks of the nominal depth pass: the control above does not fail for its sample size."""
    exp = experiment("scaling.fig2_explicit")
    assert figures.fig2b_verdict(exp.run("check", runs=2000)).passed


def test_fig7_grid_control_hurst_shift_fails():
    """Weights of Hurst index H + 0.1 judged against the closed form of H, on the document's beta grid: the
    identity-side crossings move up, outside the draws' interval."""
    cfg = dataclasses.replace(figures.FIG7_HEATMAP_PRESETS["check"], hurst=(0.5, 0.7), hurst_shift=0.1)
    verdict = figures.fig7_heatmap_verdict(figures.fig7_heatmap(cfg))
    assert verdict.status == "fail" and verdict.measured["max_standardised_deviation"] > 1.0
    crossing = np.array(verdict.measured["hidden_level-1_crossing"])
    assert np.all(crossing > np.array(verdict.measured["hidden_level-1_closed_form"]))


def test_fig9_control_learning_rate_too_small_fails():
    """A learning rate of 1e-6: no cell learns, the identity side included (the verdict's lower bound)."""
    exp = experiment("scaling.fig9")
    verdict = exp.verdict(exp.run("check", lrs=(1e-6,), epochs=1, n_train=256, L=100))
    assert verdict.status == "fail"
    assert verdict.measured["lowest_identity_accuracy"] < FIG9_ACCEPT["learned_min"]
