"""Tests of the smooth top-k loss of topk §7.6 (theory.topk.fenchel_young_loss / fenchel_young_gradient)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _fd import central_jacobian
from theory.topk import fenchel_young_gradient, fenchel_young_loss, topk_mask

P_VALUES = [2.0, 4.0 / 3.0]


@st.composite
def instances(draw):
    n = draw(st.integers(2, 9))
    return {"n": n, "k": draw(st.integers(1, n - 1)), "reg": 10.0 ** draw(st.floats(-1.0, 1.0)),
            "seed": draw(st.integers(0, 2**16)), "p": draw(st.sampled_from(P_VALUES))}


def _x_t(inst):
    rng = np.random.default_rng(inst["seed"])
    x = 2.0 * rng.standard_normal(inst["n"])
    t = np.zeros(inst["n"])
    t[rng.integers(inst["n"])] = 1.0
    return x, t


@settings(max_examples=60, deadline=None)
@given(inst=instances())
def test_gradient_matches_finite_differences(inst):
    """f_R is C^1 with a piecewise-linear (p = 2) gradient: central differences are exact up to rounding
    away from kinks and off by at most the gradient's jump times the kink's share of [x - h, x + h]."""
    x, t = _x_t(inst)
    k, reg, p = inst["k"], inst["reg"], inst["p"]
    h = 1e-6
    g = fenchel_young_gradient(x, t, k, reg, p)
    g_fd = central_jacobian(lambda z: fenchel_young_loss(z, t, k, reg, p), x, h)
    # rounding: |loss| ~ |x| k, eps |loss| / h ~ 2e-16 * 40 / 1e-6 ~ 1e-8; a kink inside the stencil: the
    # gradient (a continuous function of x with Lipschitz constant 1/reg) moves by <= h / reg
    assert np.max(np.abs(g - g_fd)) <= 1e-7 + 2 * h / reg


@settings(max_examples=60, deadline=None)
@given(inst=instances(), data=st.data())
def test_fy_form_nonnegative_zero_iff_prediction(inst, data):
    """form='fy' with t in P(1_k): L >= 0, L = 0 at t = y*(x), and L > 0 for t != y*(x)."""
    x, _ = _x_t(inst)
    k, reg, p = inst["k"], inst["reg"], inst["p"]
    rng = np.random.default_rng(inst["seed"] + 1)
    # a random point of P(1_k): a convex combination of vertices (k-hot vectors)
    verts = np.zeros((4, inst["n"]))
    for r in verts:
        r[rng.permutation(inst["n"])[:k]] = 1.0
    t = rng.dirichlet(np.ones(4)) @ verts
    loss = fenchel_young_loss(x, t, k, reg, p, form="fy")
    y = topk_mask(x, k, reg, p)
    scale = reg + np.max(np.abs(x))
    assert loss >= -1e-12 * scale * k
    assert abs(fenchel_young_loss(x, y, k, reg, p, form="fy")) <= 1e-12 * scale * k
    # strong convexity of R on [0, 1]^n (R'' = reg (p - 1) y^(p-2) >= reg (p - 1) for p <= 2):
    # L >= reg (p - 1)/2 |t - y|^2
    assert loss >= reg * (p - 1) / 2 * np.sum((t - y) ** 2) - 1e-12 * scale * k


@settings(max_examples=40, deadline=None)
@given(inst=instances(), c=st.floats(-50.0, 50.0))
def test_printed_form_shift(inst, c):
    """Printed form, one-hot t: l(x - c 1) = l(x) - c (k - 1), and the gradient sums to k - 1."""
    x, t = _x_t(inst)
    k, reg, p = inst["k"], inst["reg"], inst["p"]
    a = fenchel_young_loss(x, t, k, reg, p)
    b = fenchel_young_loss(x - c, t, k, reg, p)
    assert abs(b - (a - c * (k - 1))) <= 1e-11 * (1 + abs(c)) * k * (1 + np.max(np.abs(x)))
    assert abs(fenchel_young_gradient(x, t, k, reg, p).sum() - (k - 1)) <= 1e-12 * k


def test_k1_printed_is_fy_minus_constant():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.standard_normal(6)
        t = np.eye(6)[rng.integers(6)]
        reg = float(10 ** rng.uniform(-1, 1))
        assert fenchel_young_loss(x, t, 1, reg, form="fy") - fenchel_young_loss(x, t, 1, reg) == pytest.approx(
            reg / 2, rel=1e-12)


def test_hand_value():
    # x = (2, 0.5, 0), k = 1, reg = 1: y* = projection of x on the simplex = (1, 0, 0); printed loss =
    # <y - t, x> - |y|^2/2 = -0.5 for t = e_1; fy form adds |t|^2 / 2 = 0.5
    assert fenchel_young_loss([2.0, 0.5, 0.0], [1.0, 0.0, 0.0], 1, 1.0) == -0.5
    assert fenchel_young_loss([2.0, 0.5, 0.0], [1.0, 0.0, 0.0], 1, 1.0, form="fy") == 0.0
    np.testing.assert_array_equal(fenchel_young_gradient([2.0, 0.5, 0.0], [0.0, 1.0, 0.0], 1, 1.0), [1.0, -1.0, 0.0])


def test_input_not_modified():
    x, t = np.array([1.0, 3.0, 2.0]), np.array([0.0, 1.0, 0.0])
    x0, t0 = x.copy(), t.copy()
    fenchel_young_loss(x, t, 2)
    fenchel_young_gradient(x, t, 2)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(t, t0)


@pytest.mark.parametrize("func", [fenchel_young_loss, fenchel_young_gradient])
@pytest.mark.parametrize("kwargs, exc, match", [
    ({"x": [1.0]}, ValueError, "`x`"),
    ({"x": [1.0, np.inf, 0.0]}, ValueError, "`x`"),
    ({"x": ["a", "b", "c"]}, TypeError, "`x`"),
    ({"t": [1.0, 0.0]}, ValueError, "`t`"),
    ({"t": [np.nan, 0.0, 0.0]}, ValueError, "`t`"),
    ({"t": "abc"}, TypeError, "`t`"),
    ({"k": 3}, ValueError, "`k`"),
    ({"k": 1.0}, TypeError, "`k`"),
    ({"reg": -1.0}, ValueError, "`reg`"),
    ({"p": 1.0}, ValueError, "`p`"),
])
def test_bad_inputs(func, kwargs, exc, match):
    args = {"x": [1.0, 2.0, 0.0], "t": [1.0, 0.0, 0.0], "k": 1, "reg": 1.0, "p": 2.0, **kwargs}
    with pytest.raises(exc, match=match):
        func(args["x"], args["t"], args["k"], args["reg"], args["p"])


def test_bad_form_and_target_outside_permutahedron():
    with pytest.raises(ValueError, match="`form`"):
        fenchel_young_loss([1.0, 2.0, 0.0], [1.0, 0.0, 0.0], 1, form="other")
    with pytest.raises(TypeError, match="`form`"):
        fenchel_young_loss([1.0, 2.0, 0.0], [1.0, 0.0, 0.0], 1, form=None)
    with pytest.raises(ValueError, match="P\\(1_k\\)"):
        fenchel_young_loss([1.0, 2.0, 0.0], [1.0, 0.0, 0.0], 2, form="fy")  # one-hot, k = 2
    with pytest.raises(ValueError, match="P\\(1_k\\)"):
        fenchel_young_loss([1.0, 2.0, 0.0], [1.5, 0.5, 0.0], 2, form="fy")  # entry > 1
