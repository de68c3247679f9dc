"""Unit tests of the instance builders of the gen-bounds worst-case searches
(:mod:`theory.experiments.gen_bounds._search`): the exact law of the deviation on two-point data, and the lower
bound on every member's gap that certifies the errata of Thm 4.4 and Cor. 4.5."""

import math

import numpy as np
from scipy.stats import binom

import theory.generalization as G
from theory.experiments.gen_bounds import _search


def test_erm_lower_bound_is_below_every_members_gap():
    """The certificate of the errata: on a two-point law, g Delta_0 - 2 |g| rho is below the gap g Delta(theta)
    of members of (4.7), rho = M R e^(K_f R) (maps (b + K_f tanh(h_j)) e_i)."""
    d, b, c, R, RX = 1, 0.5, 0.3, 1.5, 2.0
    fields = _search.maps(d, b, c)
    M = b + c * math.tanh(RX)
    rho = M * R * math.exp(c * R)
    x1, y1, x2, y2 = np.array([RX]), np.array([-1.0]), np.array([-RX]), np.array([-1.5])
    d0 = abs(x1 - y1)[0] - abs(x2 - y2)[0]
    t = np.linspace(0, 1, 41)
    for th in (R * np.ones((41, 1)), -R * np.ones((41, 1)), R * np.cos(3 * t)[:, None], np.zeros((41, 1))):
        out = G.parameterized_ode(np.vstack([x1, x2]), th, fields)
        delta = np.linalg.norm(out[0] - y1) - np.linalg.norm(out[1] - y2)
        assert np.all(np.linalg.norm(out - np.vstack([x1, x2]), axis=1) <= rho)
        for g in (-0.3, -0.01, 0.02, 0.4):
            assert g * d0 - 2 * abs(g) * rho <= g * delta + 1e-12


def test_upper_quantile_is_the_largest_value_exceeded_with_probability_above_delta():
    v, p = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.4, 0.3, 0.2, 0.1])
    assert _search.upper_quantile(v, p, 0.05) == 3.0  # P(V >= 3) = 0.1 > 0.05
    assert _search.upper_quantile(v, p, 0.1) == 2.0  # P(V >= 3) = 0.1 is not > 0.1; P(V >= 2) = 0.3
    assert _search.upper_quantile(v, p, 0.99) == 0.0


def test_two_point_quantile_matches_the_full_binomial_table():
    n, p, delta = 57, 0.3, 0.05
    k = np.arange(n + 1)
    dev = lambda g: np.maximum(2.0 * g, -0.5 * g)  # noqa: E731
    full = _search.upper_quantile(dev(p - k / n), binom.pmf(k, n, p), delta)
    assert _search.two_point_quantile(n, p, delta, dev) == full
    # by definition: P(V >= q) > delta >= P(V > q)
    v, w = dev(p - k / n), binom.pmf(k, n, p)
    assert w[v >= full].sum() > delta >= w[v > full].sum()


def test_corrected_constants_dominate_what_the_proof_needs():
    """B~ = B / 3 of the corrected Thm 4.4 is at least K_l C (C the proof's constant of Prop. 4.2) and 2 M-bar, and
    at most the printed B~ = 2 M-bar K_f e^(K_f R) where the printed one is valid (K_f, R_Theta >= 1)."""
    for K_f, R, RX, RY, M in ((1e-3, 0.5, 1.0, 2.0, 0.3), (2.0, 1.5, 1.0, 1.0, 1.0), (0.5, 3.0, 0.1, 10.0, 4.0)):
        Bt = _search.thm44_corrected_constant(1.0, K_f, R, RX, RY, M) / 3
        M_bar = RX + M * R * math.exp(K_f * R) + RY
        assert Bt >= G.prop_4_2_lipschitz_proof(M, K_f, R) and Bt >= 2 * M_bar
        assert math.isclose(_search.cor45_corrected_constant(1.0, K_f, R, RX, RY, M), math.sqrt(2) * 3 * Bt)
    for K_f, R in ((1.0, 1.0), (2.0, 1.5), (1.2, 3.0)):
        printed = G.theorem_4_4_constant(1.0, K_f, R, 1.0, 2.0, 0.7)
        assert _search.thm44_corrected_constant(1.0, K_f, R, 1.0, 2.0, 0.7) <= printed
