"""Negative controls of the figure checks of chapter 4 (checks/test_gen_bounds_figures.py). MNIST is not needed:
:func:`theory.experiments.gen_bounds.mnist.run_fig41` takes arrays, and scikit-learn's digits (300 training
images) carry the same experiment; the unbroken setting passes there, the broken one fails."""

import dataclasses

import numpy as np
import pytest

import theory.experiments.gen_bounds.mnist as m
from _data import skip_without_digits
from theory.experiments._digits import load_digits_arrays

pytest.importorskip("torch")


def _digits():
    skip_without_digits()
    X, y = load_digits_arrays("a test")
    idx = np.random.default_rng(0).permutation(len(y))
    X = X / 16.0
    return X[idx[:300]], y[idx[:300]], X[idx[300:]], y[idx[300:]]


_CFG = dataclasses.replace(m.FIG41_MNIST_PRESETS["check"], epochs_a=6, epochs_b=8, repeats_b=2, lams=(0.0, 1.0))


def test_fig41_mnist_unbroken_setting_passes_on_digits():
    assert m.fig41_mnist_verdict(m.run_fig41(_CFG, *_digits())).status == "pass"


def test_fig41_mnist_control_reversed_penalty_fails():
    """lam_sign = -1 rewards weight differences: the max difference grows with lambda, so (b) fails (the gap
    itself still falls on the digits: the penalty's gradient hampers the fit whatever its sign)."""
    result = m.run_fig41(dataclasses.replace(_CFG, lam_sign=-1.0), *_digits())
    verdict = m.fig41_mnist_verdict(result)
    assert verdict.status == "fail" and verdict.measured["max_diff_drop_largest_lambda"] < 0
