"""Tests of the reference solvers of theory.topk (Dykstra, Algorithm 7.7 as printed, dual block coordinate
ascent) against the PAV path: theory.topk operators (p = 2) and theory.isotonic.isotonic_regression with the
chapter's linear term (mask, any p)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.isotonic import ConvergenceWarning, isotonic_regression
from theory.topk import (ReferenceResult, dual_coordinate_ascent, dykstra, dykstra_printed, topk_magnitude,
                         topk_mask)

#: agreement with PAV (relative to max(1, max|s|)); observed <= 2e-14 (bisection to adjacent floats,
#: Dykstra/ascent stopped at a change of 4e-15 relative)
ATOL_V = 1e-11


@st.composite
def instances(draw, max_n=10):
    n = draw(st.integers(2, max_n))
    return {"n": n, "k": draw(st.integers(1, n - 1)), "reg": 10.0 ** draw(st.floats(-1.5, 1.0)),
            "scale": 10.0 ** draw(st.floats(-1.0, 1.0)), "ties": draw(st.booleans()),
            "seed": draw(st.integers(0, 2**16))}


def draw_x(inst):
    rng = np.random.default_rng(inst["seed"])
    if inst["ties"]:
        return inst["scale"] * rng.integers(-2, 3, inst["n"]).astype(float)
    return inst["scale"] * rng.standard_normal(inst["n"])


def pav_v(x, k, reg, p, mode):
    """Solution of Eq. (7.5) in sorted coordinates by the isotonic module (mask any p; magnitude p = 2)."""
    n = x.size
    w = np.zeros(n)
    w[:k] = 1.0
    q = p / (p - 1.0)
    if mode == "mask":
        s = np.sort(x)[::-1]
        return isotonic_regression(s, p=p, c=reg ** (q - 1.0) * w, increasing=False)[0], s
    assert p == 2.0
    s = np.sort(np.abs(x))[::-1]
    omega = 1.0 + reg * w
    return isotonic_regression(s / omega, w=omega, increasing=False)[0], s


def _scale(s):
    return max(1.0, float(np.max(np.abs(s))))


@settings(max_examples=60, deadline=None)
@given(inst=instances(), mode=st.sampled_from(["mask", "magnitude"]))
def test_dykstra_matches_pav(inst, mode):
    x = draw_x(inst)
    k, reg = inst["k"], inst["reg"]
    r = dykstra(x, k, reg, mode, max_iter=200_000)
    v, s = pav_v(x, k, reg, 2.0, mode)
    assert r.converged
    assert np.max(np.abs(r.v - v)) <= ATOL_V * _scale(s)
    y = (topk_mask if mode == "mask" else topk_magnitude)(x, k, reg)
    assert np.max(np.abs(r.y - y)) * reg <= ATOL_V * _scale(s)


@settings(max_examples=60, deadline=None)
@given(inst=instances(), mode=st.sampled_from(["mask", "magnitude"]))
def test_dual_ascent_matches_pav_p2(inst, mode):
    x = draw_x(inst)
    k, reg = inst["k"], inst["reg"]
    r = dual_coordinate_ascent(x, k, reg, 2.0, mode, max_iter=200_000)
    v, s = pav_v(x, k, reg, 2.0, mode)
    assert r.converged
    assert np.max(np.abs(r.v - v)) <= ATOL_V * _scale(s)
    assert np.all(r.dual >= 0.0)


@settings(max_examples=60, deadline=None)
@given(inst=instances(), p=st.sampled_from([4.0 / 3.0, 1.5, 3.0]))
def test_dual_ascent_matches_pav_mask_general_p(inst, p):
    # tie-free inputs: at ties a tight constraint with a zero multiplier makes the ascent sublinear for p < 2
    x = draw_x({**inst, "ties": False})
    k, reg = inst["k"], inst["reg"]
    r = dual_coordinate_ascent(x, k, reg, p, "mask", max_iter=200_000)
    v, s = pav_v(x, k, reg, p, "mask")
    assert r.converged
    assert np.max(np.abs(r.v - v)) <= ATOL_V * _scale(s)
    # output in P(1_k)
    assert abs(r.y.sum() - k) <= 1e-9 * k and r.y.min() >= -1e-12 and r.y.max() <= 1 + 1e-12


def test_dual_ascent_kkt_general_p_magnitude():
    """Magnitude, p != 2 (no PAV path here): the dual solution satisfies the KKT conditions of Eq. (7.5):
    v decreasing, alpha >= 0, complementary slackness, stationarity h_i'(v_i) = alpha_i - alpha_{i-1}."""
    rng = np.random.default_rng(11)
    for p in (4.0 / 3.0, 1.5, 3.0):
        q = p / (p - 1.0)
        for _ in range(10):
            n = int(rng.integers(3, 12))
            k = int(rng.integers(1, n))
            reg = float(10.0 ** rng.uniform(-1, 0.5))
            x = rng.standard_normal(n)
            r = dual_coordinate_ascent(x, k, reg, p, "magnitude", max_iter=200_000)
            s = np.sort(np.abs(x))[::-1]
            w = (np.arange(n) < k).astype(float)
            v = r.v
            assert np.all(np.diff(v) <= 1e-12)
            alpha = np.concatenate(([0.0], r.dual, [0.0]))
            grad = reg ** (1 - q) * np.sign(v - s) * np.abs(v - s) ** (q - 1) + w * v
            assert np.max(np.abs(grad - np.diff(alpha))) <= 1e-9
            assert np.max(np.abs(r.dual * (v[:-1] - v[1:]))) <= 1e-9
            # sign pattern and |y| <= |x| of the magnitude operator
            assert np.all(np.abs(r.y) <= np.abs(x) + 1e-12)
            assert np.all((r.y == 0) | (np.sign(r.y) == np.sign(x)))


def test_dykstra_equals_dual_ascent_iterates_p2():
    """Euclidean case: Dykstra's v iterates and the dual ascent's primal iterates coincide (Tibshirani 2017)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(12)
    a = dykstra(x, 3, 1.5, max_iter=40, tol=None, record=True)
    b = dual_coordinate_ascent(x, 3, 1.5, 2.0, max_iter=40, tol=None, record=True)
    # the ascent's sweep t ends with the C_2 block: it matches Dykstra's v^t
    assert np.max(np.abs(a.iterates[1:] - b.iterates[1:])) <= 1e-12


def test_printed_algorithm_converges_to_doubled_weight():
    """Algorithm 7.7 as printed converges to the projection of s - 2 reg w (the linear term counted twice)."""
    rng = np.random.default_rng(7)
    for n, k, reg in ((8, 2, 0.5), (15, 4, 1.0), (30, 5, 0.2)):
        x = rng.standard_normal(n)
        r = dykstra_printed(x, k, reg, max_iter=200_000)
        s = np.sort(x)[::-1]
        w = (np.arange(n) < k).astype(float)
        v2 = isotonic_regression(s - 2 * reg * w, increasing=False)[0]
        v1 = isotonic_regression(s - reg * w, increasing=False)[0]
        assert r.converged
        assert np.max(np.abs(r.v - v2)) <= 1e-11
        assert np.max(np.abs(r.v - v1)) > 1e-3
        assert abs(r.y.sum() - 2 * k) <= 1e-9  # the output lies in P(2 * 1_k), not P(1_k)


def test_knobs_change_the_result():
    x = np.random.default_rng(1).standard_normal(20)
    a = dykstra(x, 4, 3.0, max_iter=5, tol=None)
    b = dykstra(x, 4, 3.0, max_iter=50, tol=None)
    assert a.n_iter == 5 and b.n_iter == 50 and not a.converged
    assert np.max(np.abs(a.v - b.v)) > 0
    c = dykstra(x, 4, 3.0, tol=1e-3)
    d = dykstra(x, 4, 3.0)
    assert c.n_iter < d.n_iter
    r = dual_coordinate_ascent(x, 4, 3.0, record=True)
    assert isinstance(r, ReferenceResult) and r.iterates.shape == (r.n_iter + 1, 20)
    assert dykstra(x, 4, 3.0).iterates is None


def test_convergence_warning():
    x = np.random.default_rng(2).standard_normal(30)
    for f in (lambda: dykstra(x, 5, 5.0, max_iter=3), lambda: dykstra_printed(x, 5, 5.0, max_iter=3),
              lambda: dual_coordinate_ascent(x, 5, 5.0, 1.5, max_iter=3)):
        with pytest.warns(ConvergenceWarning, match="max_iter"):
            f()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dykstra(x, 5, 5.0, max_iter=3, tol=None)  # tol=None: exactly max_iter, no warning


def test_input_not_modified():
    x = np.array([3.0, -1.0, 2.0, 0.5])
    x0 = x.copy()
    for f in (dykstra, dykstra_printed, dual_coordinate_ascent):
        f(x, 2, 0.7)
        np.testing.assert_array_equal(x, x0)


@pytest.mark.parametrize("func", [dykstra, dykstra_printed, dual_coordinate_ascent])
@pytest.mark.parametrize("kwargs, exc, match", [
    ({"x": [1.0]}, ValueError, "`x`"),
    ({"x": [[1.0, 2.0]]}, ValueError, "`x`"),
    ({"x": [1.0, np.nan]}, ValueError, "`x`"),
    ({"x": ["a", "b"]}, TypeError, "`x`"),
    ({"k": 0}, ValueError, "`k`"),
    ({"k": 3}, ValueError, "`k`"),
    ({"k": 1.5}, TypeError, "`k`"),
    ({"reg": 0.0}, ValueError, "`reg`"),
    ({"reg": np.inf}, ValueError, "`reg`"),
    ({"reg": "1"}, TypeError, "`reg`"),
    ({"max_iter": 0}, ValueError, "`max_iter`"),
    ({"max_iter": 2.5}, TypeError, "`max_iter`"),
    ({"tol": -1.0}, ValueError, "`tol`"),
    ({"record": 1}, TypeError, "`record`"),
])
def test_bad_inputs(func, kwargs, exc, match):
    args = {"x": [1.0, 2.0, 0.0], "k": 1, "reg": 1.0, **kwargs}
    x, k, reg = args.pop("x"), args.pop("k"), args.pop("reg")
    with pytest.raises(exc, match=match):
        func(x, k, reg, **args)


def test_bad_mode_and_p():
    for func in (dykstra, dual_coordinate_ascent):
        with pytest.raises(ValueError, match="`mode`"):
            func([1.0, 2.0], 1, 1.0, mode="values")
    for bad, exc in ((1.0, ValueError), (0.5, ValueError), (np.nan, ValueError), ("2", TypeError), (True, TypeError)):
        with pytest.raises(exc, match="`p`"):
            dual_coordinate_ascent([1.0, 2.0], 1, 1.0, p=bad)
