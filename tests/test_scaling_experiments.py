"""Tests of theory.scaling.training (res-3 loss and gradients) and of the closed forms and configs of
theory.experiments.scaling (Figures 7 and 8 of paper key ``scaling``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.experiments.scaling import (
    Fig7Config,
    Fig8Config,
    crossing,
    linearized_mean_square,
    variogram_exponent,
)
from theory.fbm import fgn
from theory.scaling import forward, weights
from theory.scaling.training import loss_and_gradient


def _net(L=6, d=4, n=5, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)), weights(L, d, "gaussian", rng=rng), weights(L, d, "gaussian", rng=rng),
            rng.standard_normal(d), rng.standard_normal(n))


def test_loss_uses_the_forward_of_theory_scaling():
    H0, V, W, b, y = _net()
    loss, _, _ = loss_and_gradient(H0, V, W, b, y, beta=0.5)
    out = np.array([forward(h, V, W, beta=0.5, arch="res3")[-1] @ b for h in H0])
    assert loss == pytest.approx(0.5 * np.mean((out - y) ** 2), rel=1e-13)


@pytest.mark.parametrize("beta", [0.5, 1.0])
def test_gradients_match_central_differences(beta):
    H0, V, W, b, y = _net(seed=1)
    _, gV, gW = loss_and_gradient(H0, V, W, b, y, beta=beta)
    eps = 1e-6
    rng = np.random.default_rng(2)
    for which, g in ((0, gV), (1, gW)):
        for _ in range(12):
            idx = tuple(rng.integers(0, s) for s in V.shape)
            P = [V.copy(), W.copy()]
            P[which][idx] += eps
            up = loss_and_gradient(H0, *P, b, y, beta)[0]
            P[which][idx] -= 2 * eps
            down = loss_and_gradient(H0, *P, b, y, beta)[0]
            assert g[idx] == pytest.approx((up - down) / (2 * eps), abs=1e-8, rel=1e-6)


@pytest.mark.parametrize("bad, match", [
    ({"V": np.zeros((3, 4, 5))}, "`V`"), ({"b": np.zeros(3)}, "`b`"), ({"y": np.zeros(2)}, "`y`"),
    ({"beta": -1.0}, "`beta`"), ({"h0": np.full((5, 4), np.nan)}, "`h0`"),
])
def test_loss_and_gradient_validates_its_input(bad, match):
    H0, V, W, b, y = _net()
    kw = {"h0": H0, "V": V, "W": W, "b": b, "y": y, "beta": 0.5, **bad}
    with pytest.raises((ValueError, TypeError), match=match):
        loss_and_gradient(**kw)


@pytest.mark.parametrize("quantity", ["hidden", "gradient"])
def test_linearized_mean_square_at_one_half_is_L_over_2(quantity):
    assert linearized_mean_square(300, 0.5, 40, quantity) == pytest.approx(150.0, rel=1e-12)


@pytest.mark.parametrize("hurst", [0.3, 0.8])
def test_linearized_mean_square_against_monte_carlo(hurst):
    """||sum_k V_k ReLU(W_k h)||^2 / ||h||^2 with fGn weights (the first-order term), by Monte Carlo."""
    L, d, n = 40, 6, 4000
    rng = np.random.default_rng(3)
    V = np.moveaxis(fgn(L, hurst, size=(n, d, d), rng=rng), -1, 1) / math.sqrt(d)
    W = np.moveaxis(fgn(L, hurst, size=(n, d, d), rng=rng), -1, 1) / math.sqrt(d)
    h = rng.standard_normal(d)
    s = np.einsum("nkij,nkj->ni", V, np.maximum(np.einsum("nkij,j->nki", W, h), 0.0))
    x = np.sum(s * s, axis=1) / (h @ h)
    exact = linearized_mean_square(L, hurst, d, "hidden")
    assert abs(x.mean() - exact) <= 4 * x.std(ddof=1) / math.sqrt(n)


def test_crossing_interpolates_and_returns_nan_without_one():
    assert crossing([0.0, 1.0, 2.0], [1.0, 0.5, -0.5], 0.0) == pytest.approx(1.5)
    assert math.isnan(crossing([0.0, 1.0], [-1.0, -2.0], 0.0))


def test_variogram_exponent_classes():
    rng = np.random.default_rng(4)
    white = rng.standard_normal((400, 50))
    brown = np.cumsum(white, axis=0)
    smooth = np.sin(np.linspace(0, 3, 400))[:, None] * rng.standard_normal(50)
    assert abs(variogram_exponent(white)) < 0.1
    assert abs(variogram_exponent(brown) - 1.0) < 0.1
    assert abs(variogram_exponent(smooth) - 2.0) < 0.1


@pytest.mark.parametrize("cls, kw, match", [
    (Fig7Config, {"hurst": (1.2,)}, "`hurst`"), (Fig7Config, {"draws": 2}, "`draws`"),
    (Fig7Config, {"offsets": (0.1, 0.0)}, "`offsets`"), (Fig7Config, {"level": 0.5}, "`level`"),
    (Fig7Config, {"hurst_shift": 0.5, "hurst": (0.7,)}, "`hurst_shift`"),
    (Fig8Config, {"setups": (("fbm", 1.0),)}, "`setups`"), (Fig8Config, {"lr": -1.0}, "`lr`"),
    (Fig8Config, {"L": 3}, "`L`"),
])
def test_configs_validate_their_fields(cls, kw, match):
    with pytest.raises(ValueError, match=match):
        cls(**kw)
