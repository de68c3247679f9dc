"""Tests of :mod:`theory.scaling.phase` (Figure 7 of ``scaling``: the (H, beta) phase diagram).

1. :func:`critical_beta`: hand-worked crossings, exact on linear curves (property test), NaN without a
   downward crossing, the first of several crossings, and its input contract.
2. :func:`phase_diagram`: each cell against an independent direct-domain computation (forward +
   norm_ratio / backward + gradient_ratio with the same draws), determinism by seed, the draw order,
   read-only results, the two regimes at H = 1/2, and its input contract.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.scaling import backward, forward, gradient_ratio, norm_ratio, weights
from theory.scaling.phase import PhaseDiagram, critical_beta, phase_diagram

# --------------------------------------------------------------------------- critical_beta


@pytest.mark.parametrize(("beta", "values", "expected"), [
    ([0.4, 0.5, 0.6], [0.3, 0.1, -0.3], 0.525),         # 0.5 + 0.1 * 0.1 / 0.4
    ([0.4, 0.5, 0.6], [0.3, 0.0, -0.2], 0.5),           # exactly zero at a grid point
    ([0.0, 1.0], [1.0, -3.0], 0.25),
    ([0.1, 0.2, 0.3, 0.4, 0.5], [1.0, -1.0, 1.0, 1.0, -1.0], 0.15),   # several crossings: the first
])
def test_critical_beta_hand_worked(beta, values, expected):
    assert critical_beta(beta, values) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("values", [[-0.1, -0.5, -1.0], [2.0, 1.0, 0.5], [-1.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
def test_critical_beta_is_nan_without_a_downward_crossing(values):
    assert math.isnan(critical_beta([0.2, 0.4, 0.6], values))


@settings(max_examples=100)
@given(st.floats(0.05, 1.25), st.floats(0.1, 20.0), st.integers(3, 40))
def test_critical_beta_is_exact_on_a_linear_curve(root, slope, n):
    beta = np.linspace(0.0, 1.3, n)
    assert critical_beta(beta, slope * (root - beta)) == pytest.approx(root, abs=1e-12)


@pytest.mark.parametrize(("beta", "values", "exc", "pattern"), [
    ([0.1, 0.2], [1.0], ValueError, "shape of `beta`"),
    ([0.1], [1.0], ValueError, "at least 2"),
    ([0.2, 0.1], [1.0, -1.0], ValueError, "strictly increasing"),
    ([0.1, 0.1], [1.0, -1.0], ValueError, "strictly increasing"),
    ([0.1, 0.2], [1.0, np.nan], ValueError, "finite"),
    ([[0.1, 0.2]], [1.0, -1.0], ValueError, "dimension"),
    (["a", "b"], [1.0, -1.0], TypeError, "real numeric"),
])
def test_critical_beta_bad_input(beta, values, exc, pattern):
    with pytest.raises(exc, match=pattern):
        critical_beta(beta, values)


# --------------------------------------------------------------------------- phase_diagram


def _reference(hurst, beta, L, d, n_seeds, seed):
    """Direct-domain computation with the same draw order as phase_diagram (one input per draw)."""
    rng = np.random.default_rng(seed)
    hid = np.empty((len(hurst), len(beta), n_seeds))
    grad = np.empty_like(hid)
    for i, H in enumerate(hurst):
        for s in range(n_seeds):
            V = weights(L, d, "fbm", H, rng)
            W = weights(L, d, "fbm", H, rng)
            h0 = rng.standard_normal((1, d))
            pL = rng.standard_normal((1, d))
            for j, b in enumerate(beta):
                hs = forward(h0[0], V, W, beta=b, arch="res3")
                hid[i, j, s] = np.log10(norm_ratio(hs))
                grad[i, j, s] = np.log10(gradient_ratio(backward(hs, V, W, pL[0], beta=b, arch="res3")))
    return hid, grad


def test_phase_diagram_matches_the_direct_domain():
    hurst, beta = (0.3, 0.5, 0.8), (0.5, 0.75, 1.0)   # no overflow: the direct domain is a valid reference
    pd = phase_diagram(hurst, beta, L=60, d=6, n_seeds=2, rng=np.random.default_rng(4))
    hid, grad = _reference(hurst, beta, 60, 6, 2, 4)
    np.testing.assert_allclose(pd.hidden, hid, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(pd.gradient, grad, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(pd.mean("hidden"), hid.mean(axis=-1), rtol=1e-12)


def test_phase_diagram_is_deterministic_and_read_only():
    kw = {"L": 50, "d": 5, "n_seeds": 2, "n_inputs": 3}
    a = phase_diagram([0.4, 0.9], [0.3, 0.6, 1.2], rng=np.random.default_rng(1), **kw)
    b = phase_diagram([0.4, 0.9], [0.3, 0.6, 1.2], rng=np.random.default_rng(1), **kw)
    assert isinstance(a, PhaseDiagram) and (a.L, a.d) == (50, 5)
    for name in ("hurst", "beta", "hidden", "gradient"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert not getattr(a, name).flags.writeable
    assert a.hidden.shape == a.gradient.shape == (2, 3, 2)


def test_phase_diagram_does_not_touch_the_inputs():
    hurst, beta = np.array([0.5]), np.array([0.3, 1.0])
    phase_diagram(hurst, beta, L=20, d=3, n_seeds=1, rng=np.random.default_rng(0), gradients=False)
    assert hurst.flags.writeable and beta.flags.writeable
    np.testing.assert_array_equal(beta, [0.3, 1.0])


def test_phase_diagram_two_regimes_at_one_half():
    """H = 1/2 (i.i.d. weights): explosion at beta = 1/4, identity at beta = 1, crossing near 1/2."""
    beta = np.round(np.arange(0.2, 1.01, 0.05), 3)
    pd = phase_diagram([0.5], beta, L=1000, d=20, n_seeds=2, rng=np.random.default_rng(2), gradients=False)
    m = pd.mean()[0]
    assert m[np.searchsorted(beta, 0.25)] > 0.5 and m[-1] < -0.5
    assert 0.35 <= pd.critical()[0] <= 0.55


def test_weights_fn_is_called_in_the_documented_order():
    calls = []

    def fn(L, d, hurst, rng):
        calls.append((L, d, hurst))
        return weights(L, d, "gaussian", rng=rng)

    phase_diagram([0.2, 0.7], [0.5, 1.0], L=10, d=3, n_seeds=2, rng=np.random.default_rng(0), gradients=False,
                  weights_fn=fn)
    assert calls == [(10, 3, 0.2)] * 4 + [(10, 3, 0.7)] * 4


def test_gradient_of_a_diagram_without_gradients_raises():
    pd = phase_diagram([0.5], [0.5, 1.0], L=10, d=3, n_seeds=1, rng=np.random.default_rng(0), gradients=False)
    assert pd.gradient is None
    with pytest.raises(ValueError, match="gradients=False"):
        pd.critical("gradient")
    with pytest.raises(ValueError, match="must be one of"):
        pd.mean("output")


_GEN = np.random.default_rng


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    ({"hurst": [0.0]}, ValueError, r"`hurst` .* \(0, 1\)"),
    ({"hurst": [1.0]}, ValueError, r"`hurst` .* \(0, 1\)"),
    ({"hurst": []}, ValueError, "at least 1"),
    ({"beta": [0.0, 0.5]}, ValueError, "positive and strictly increasing"),
    ({"beta": [0.6, 0.5]}, ValueError, "positive and strictly increasing"),
    ({"L": 0}, ValueError, "`L`"),
    ({"d": 1.5}, TypeError, "`d`"),
    ({"n_seeds": 0}, ValueError, "`n_seeds`"),
    ({"n_inputs": 0}, ValueError, "`n_inputs`"),
    ({"gradients": 1}, TypeError, "`gradients`"),
    ({"weights_fn": 3}, TypeError, "`weights_fn`"),
    ({"weights_fn": lambda L, d, H, rng: np.zeros((L, d))}, ValueError, "weights_fn"),
    ({"rng": 1.5}, TypeError, "`rng`"),  # an int is a seed (NumPy's convention); a float is not
    ({"n_seeds": 10**12}, ValueError, r"`n_seeds` of .* needs about .* floating-point operations, above the budget"),
    ({"L": 10**12}, ValueError, r"`L` of .* needs .* of memory"),
])
def test_phase_diagram_bad_input(kwargs, exc, pattern):
    args = {"hurst": [0.5], "beta": [0.5, 1.0], "L": 10, "d": 3, "n_seeds": 1, "rng": _GEN(0), **kwargs}
    with pytest.raises(exc, match=pattern):
        phase_diagram(args.pop("hurst"), args.pop("beta"), **args)
