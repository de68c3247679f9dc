"""Tests of :mod:`theory.pl` (paper key ``implicit-reg``: Hermite coefficients of Section B / Lemma 21 /
Prop. 5; PL estimators for Definition 1 and Prop. 8).

What is checked (independent references, property tests, input validation):

1. hermite_coefficient against (a) an independent scipy.integrate.quad of sigma(z) He_r(z) phi(z) / sqrt(r!)
   (scipy's eval_hermitenorm, panels of width 1/2 split at the kink 0), (b) Gauss-Hermite for tanh, (c) the
   published literal values and hand-derived closed forms, (d) Parseval sum_r eta_r^2 = E[sigma(Z)^2]
   (to rounding for smooth activations; at the predicted r^{-3/2} rate for the kinked ones), (e) the linearity
   leaky_relu = s identity + (1 - s) relu, parity, vectorisation.
2. PL estimators on least squares l(w) = ||Xw - y||^2 / 2, y in range(X), whose PL constant on any ball
   containing a minimiser is exactly 2 s_min^+(X)^2 (derivation in theory/pl/_estimators.py), along its closed-
   form gradient flow, and on l(w) = 1 - cos||w|| whose worst point on a ball is known (ratio 1 + cos||w||).
3. The contract: tables of bad inputs with their messages, zero losses reported, knobs honoured, no mutation,
   accepted input kinds, documented choices equal to the accepted ones, a Hypothesis test on arbitrary r.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import IntegrationWarning, quad
from scipy.special import eval_hermitenorm, ndtr

import theory.pl as pl
from theory.pl import (
    ACTIVATIONS,
    RMAX,
    ball_pl,
    hermite_coefficient,
    hermite_coefficients,
    integrated_pl,
    pl_ratio,
    trajectory_pl,
)

SQRT2PI = math.sqrt(2.0 * math.pi)
SLOPE = 0.8  # the documented default negative slope of leaky_relu

SIGMA = {
    "relu": lambda z: max(z, 0.0),
    "leaky_relu": lambda z: z if z > 0 else SLOPE * z,
    "identity": lambda z: z,
    "sin": math.sin,
    "tanh": math.tanh,
    "gelu": lambda z: z * float(ndtr(z)),
}

# ---------------------------------------------------------------------------------------------------
# 1. Hermite coefficients
# ---------------------------------------------------------------------------------------------------


def gauss_integral(f, r):
    """E[f(Z)] by scipy quad on panels of width 1/2 over |z| <= sqrt(4r+2) + 13 (0 is a panel edge: the kink)."""
    zmax = math.ceil(math.sqrt(4 * r + 2) + 13)
    edges = np.arange(-zmax, zmax + 0.25, 0.5)
    with warnings.catch_warnings():
        # quad warns "roundoff error detected" when the requested 1e-16 absolute is below what the panel
        # can resolve; its answer is still accurate to ~1e-17 per panel, which is what we compare at 1e-13
        warnings.simplefilter("ignore", IntegrationWarning)
        parts = [quad(lambda z: f(z) * math.exp(-0.5 * z * z) / SQRT2PI, a, b, epsabs=1e-16, epsrel=1e-14,
                      limit=200)[0] for a, b in zip(edges[:-1], edges[1:])]
    return math.fsum(parts)


def ref_eta(activation, r):
    s = SIGMA[activation]
    c = 1.0 / math.sqrt(math.factorial(r))
    return gauss_integral(lambda z: s(z) * eval_hermitenorm(r, z) * c, r)


@pytest.mark.parametrize("activation", sorted(SIGMA))
def test_hermite_against_independent_quadrature(activation):
    """Measured max |error| over r <= 30: ~1e-16 for every activation (tolerance 1e-13 leaves room for quad)."""
    got = hermite_coefficients(activation, 30)
    want = np.array([ref_eta(activation, r) for r in range(31)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)
    big = np.abs(want) > 1e-3  # relative accuracy where eta is not tiny
    np.testing.assert_allclose(got[big], want[big], rtol=1e-12)


def test_tanh_against_gauss_hermite():
    """tanh is analytic in |Im z| < pi/2: 300-node Gauss-Hermite converges to ~1e-15 for r <= 21."""
    z, w = np.polynomial.hermite_e.hermegauss(300)
    w = w / SQRT2PI
    want = [np.sum(w * np.tanh(z) * eval_hermitenorm(r, z)) / math.sqrt(math.factorial(r)) for r in range(22)]
    np.testing.assert_allclose(hermite_coefficients("tanh", 21), want, rtol=0, atol=1e-13)


KNOWN = [
    # ReLU: eta_0 = phi(0), eta_1 = 1/2, eta_2 = 1/(2 sqrt(pi)); eta_4 = phi(0) He_2(0) / sqrt(4!) = -1/sqrt(48 pi)
    ("relu", 0, 1 / SQRT2PI), ("relu", 1, 0.5), ("relu", 2, 1 / (2 * math.sqrt(math.pi))),
    ("relu", 3, 0.0), ("relu", 4, -1 / math.sqrt(48 * math.pi)), ("relu", 5, 0.0),
    # ReLU r = 6: phi(0) He_4(0) / sqrt(720) = 3 / sqrt(2 pi 720)
    ("relu", 6, 3 / math.sqrt(2 * math.pi * 720)),
    # GELU: 1/(2 sqrt pi), 1/2, 3/(4 sqrt(2 pi)), 0, -5/(8 sqrt(24 pi))
    ("gelu", 0, 1 / (2 * math.sqrt(math.pi))), ("gelu", 1, 0.5), ("gelu", 2, 3 / (4 * SQRT2PI)),
    ("gelu", 3, 0.0), ("gelu", 4, -5 / (8 * math.sqrt(24 * math.pi))),
    # sin: e^{-1/2} sin(r pi / 2) / sqrt(r!)
    ("sin", 0, 0.0), ("sin", 1, math.exp(-0.5)), ("sin", 3, -math.exp(-0.5) / math.sqrt(6)),
    ("sin", 5, math.exp(-0.5) / math.sqrt(120)), ("sin", 7, -math.exp(-0.5) / math.sqrt(5040)),
    ("identity", 0, 0.0), ("identity", 1, 1.0), ("identity", 2, 0.0), ("identity", 20, 0.0),
    # leaky (s = 0.8): s delta_{r1} + (1 - s) eta_r(relu)
    ("leaky_relu", 0, 0.2 / SQRT2PI), ("leaky_relu", 1, 0.9),
]


@pytest.mark.parametrize("activation,r,value", KNOWN)
def test_hermite_known_values(activation, r, value):
    assert hermite_coefficient(activation, r) == pytest.approx(value, rel=4e-16, abs=1e-300)


def test_tanh_reference_values():
    # reference values (10 digits, from Gauss-Hermite(200))
    got = hermite_coefficient("tanh", [1, 3, 5])
    np.testing.assert_allclose(got, [0.6057055096, -0.1484371908, 0.0625475238], rtol=0, atol=6e-11)
    assert (hermite_coefficients("tanh", 40)[0::2] == 0).all()


def second_moment(activation):
    """E[sigma(Z)^2]: closed forms where they exist, quad otherwise."""
    closed = {"relu": 0.5, "leaky_relu": (1 + SLOPE**2) / 2, "identity": 1.0, "sin": (1 - math.exp(-2)) / 2}
    if activation in closed:
        return closed[activation]
    s = SIGMA[activation]
    return gauss_integral(lambda z: s(z) ** 2, 0)


@pytest.mark.parametrize("activation", ["gelu", "identity", "sin", "tanh"])
def test_parseval_smooth(activation):
    """sum_{r <= 300} eta_r^2 = E[sigma^2] to rounding (tails: geometric for gelu/sin, e^{-c sqrt r} for tanh)."""
    eta = hermite_coefficients(activation, RMAX)
    assert math.fsum(eta**2) == pytest.approx(second_moment(activation), abs=1e-13)


@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
def test_parseval_kinked(activation):
    """For a kink eta_r^2 ~ r^{-5/2}: the deficit E[sigma^2] - sum_{r<=R} eta_r^2 is positive and ~ R^{-3/2},
    so quadrupling R divides it by ~8."""
    eta2 = hermite_coefficients(activation, RMAX) ** 2
    m2 = second_moment(activation)
    deficit = [m2 - math.fsum(eta2[: R + 1]) for R in (74, 298)]  # even R: the last nonzero term included
    assert 0 < deficit[1] < deficit[0] < 1e-3
    assert deficit[0] / deficit[1] == pytest.approx(8.0, rel=0.03)


def test_leaky_is_linear_combination():
    r = np.arange(40)
    for s in (0.0, 0.01, 0.8, -0.5, 2.0):
        got = hermite_coefficient("leaky_relu", r, negative_slope=s)
        want = s * hermite_coefficient("identity", r) + (1 - s) * hermite_coefficient("relu", r)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-17)
    assert hermite_coefficient("leaky_relu", 1, negative_slope=0.0) == 0.5  # = relu
    assert hermite_coefficient("leaky_relu", 2, negative_slope=1.0) == 0.0  # = identity


def test_hermite_vectorisation_and_kinds():
    r = np.array([[0, 1], [2, 3]])
    got = hermite_coefficient("relu", r)
    assert got.shape == (2, 2) and got.dtype == np.float64
    assert got.tolist() == [[hermite_coefficient("relu", int(k)) for k in row] for row in r]
    assert isinstance(hermite_coefficient("relu", np.int32(2)), float)
    assert isinstance(hermite_coefficient("relu", np.array(2)), float)
    np.testing.assert_array_equal(hermite_coefficient("sin", [1, 3]), hermite_coefficient("sin", (1, 3)))
    assert hermite_coefficient("gelu", np.array([], dtype=int)).shape == (0,)
    ro = np.arange(5)
    ro.setflags(write=False)
    np.testing.assert_array_equal(hermite_coefficient("tanh", ro), hermite_coefficients("tanh", 4))
    np.testing.assert_array_equal(hermite_coefficient("tanh", np.arange(10)[::2]), hermite_coefficients("tanh", 8)[::2])
    assert hermite_coefficient("gelu", RMAX) != 0.0  # the largest order stays representable


def test_hermite_large_order_exact():
    """Closed forms are exact rationals before one rounding: at r = 300 relu matches a log-space evaluation."""
    r, k = 300, 298
    log_mag = math.lgamma(k + 1) - (k // 2) * math.log(2) - math.lgamma(k // 2 + 1)  # log (k-1)!!
    want = (-1) ** (k // 2) * math.exp(log_mag - 0.5 * math.lgamma(r + 1)) / SQRT2PI
    assert hermite_coefficient("relu", r) == pytest.approx(want, rel=1e-12)


def test_documented_activations_equal_accepted():
    doc = re.search(r"activation : \{([^}]*)\}", hermite_coefficient.__doc__).group(1)
    assert sorted(re.findall(r'"(\w+)"', doc)) == sorted(ACTIVATIONS)
    for a in ACTIVATIONS:
        hermite_coefficient(a, 2)


HERMITE_BAD = [
    (("softplus", 1), {}, ValueError, r"`activation` of theory\.pl\.hermite_coefficient must be one of"),
    ((3, 1), {}, TypeError, r"`activation` .* must be a string"),
    (("relu", -1), {}, ValueError, r"`r` of theory\.pl\.hermite_coefficient must be >= 0; got -1"),
    (("relu", RMAX + 1), {}, ValueError, r"`r` .* must be <= 300"),
    (("relu", 1.5), {}, TypeError, r"`r` .* must be an integer"),
    (("relu", 2.0), {}, TypeError, r"`r` .* must be an integer"),
    (("relu", True), {}, TypeError, r"`r` .* must be an integer"),
    (("relu", "2"), {}, TypeError, r"`r` .* must be an integer"),
    (("relu", None), {}, TypeError, r"`r` .* must be an integer"),
    (("relu", [1.0, 2.0]), {}, TypeError, r"`r` .* got dtype float64"),
    (("relu", [True]), {}, TypeError, r"`r` .* got dtype bool"),
    (("relu", [1, -2]), {}, ValueError, r"`r` .* entries in \[0, 300\]; got -2"),
    (("relu", [[1], [301]]), {}, ValueError, r"`r` .* got 301"),
    (("leaky_relu", 1), {"negative_slope": "a"}, TypeError, r"`negative_slope` .* real number"),
    (("leaky_relu", 1), {"negative_slope": float("nan")}, ValueError, r"`negative_slope`"),
]


@pytest.mark.parametrize("args,kwargs,exc,msg", HERMITE_BAD)
def test_hermite_contract(args, kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        hermite_coefficient(*args, **kwargs)


@pytest.mark.parametrize("rmax,exc", [(-1, ValueError), (1.0, TypeError), (RMAX + 1, ValueError), ("3", TypeError)])
def test_hermite_coefficients_contract(rmax, exc):
    with pytest.raises(exc, match=r"`rmax` of theory\.pl\.hermite_coefficients"):
        hermite_coefficients("relu", rmax)


@settings(deadline=None, max_examples=60)
@given(st.one_of(st.integers(-5, 400), st.floats(allow_nan=True), st.text(max_size=3), st.none(),
                 st.lists(st.integers(-3, 400), max_size=4), st.lists(st.floats(), max_size=3), st.booleans()))
def test_hermite_only_our_errors(r):
    try:
        out = hermite_coefficient("tanh", r)
    except (TypeError, ValueError) as exc:
        assert "`r` of theory.pl.hermite_coefficient" in str(exc)
    else:
        assert np.all(np.isfinite(out))


# ---------------------------------------------------------------------------------------------------
# 2. PL estimators
# ---------------------------------------------------------------------------------------------------


def least_squares(s=(3.0, 2.0, 1.5, 1.0), n=5, seed=0):
    """X = U diag(s) V^T (n, p) with random orthogonal U, V, w* and y = X w*; zeros in ``s`` make X rank
    deficient (y still in range(X)). Returns loss, grad, w*, 2 s_min^+(X)^2, X."""
    rng = np.random.default_rng(seed)
    p = len(s)
    U = np.linalg.qr(rng.standard_normal((n, p)))[0]
    V = np.linalg.qr(rng.standard_normal((p, p)))[0]
    X = U @ np.diag(s) @ V.T
    w_star = rng.standard_normal(p)
    y = X @ w_star
    s_min_plus = min(v for v in s if v > 0)
    return (lambda w: 0.5 * float(np.sum((X @ w - y) ** 2)), lambda w: X.T @ (X @ w - y), w_star,
            2.0 * s_min_plus**2, X)


def test_pl_ratio_hand_case():
    assert pl_ratio(0.5, [1.0, 0.0]) == 2.0  # l = |w|^2/2 with X = diag(1, 2), y = 0, at w = (1, 0)
    assert pl_ratio(2, np.array([[1, 1], [1, 1]], dtype=np.float32)) == 2.0
    assert pl_ratio(np.float64(1.0), 0.0) == 0.0


SPECTRA = [(3.0, 2.0, 1.5, 1.0), (3.0, 2.0, 0.5, 0.0), (1.0, 0.3, 0.1, 0.0)]  # full rank, rank 3, kappa = 10


@pytest.mark.parametrize("spectrum", SPECTRA)
def test_least_squares_lower_bound_and_equality(spectrum):
    loss, grad, w_star, mu, X = least_squares(spectrum)
    rng = np.random.default_rng(1)
    for _ in range(200):  # the bound 2 s_min^+^2 holds everywhere
        w = w_star + rng.standard_normal(4) * rng.uniform(0.01, 10)
        assert pl_ratio(loss(w), grad(w)) >= mu * (1 - 1e-12)
    _, sv, Vt = np.linalg.svd(X)
    v_min = Vt[np.argmin(np.where(sv > 1e-10, sv, np.inf))]
    for tau in (1e-3, 0.5, 7.0):  # and is attained on the line w* + tau v_min
        w = w_star + tau * v_min
        assert pl_ratio(loss(w), grad(w)) == pytest.approx(mu, rel=1e-10)


@pytest.mark.parametrize("spectrum", SPECTRA)
def test_ball_pl_recovers_least_squares_constant(spectrum):
    loss, grad, w_star, mu, _ = least_squares(spectrum)
    center = w_star + np.array([0.1, -0.2, 0.05, 0.1])
    res = ball_pl(loss, grad, center, 1.0, rng=3)
    assert res.mu_min >= mu * (1 - 1e-12)  # a sampled infimum never goes below the true constant
    assert res.mu_min == pytest.approx(mu, rel=1e-7)
    assert res.mu_adversarial == res.mu_min <= res.mu_random
    assert loss(res.argmin) > 0 and np.linalg.norm(res.argmin - center) <= 1.0 + 1e-12


def radial_cos():
    """l(w) = 1 - cos|w|: grad = sin|w| w/|w|, ratio = 1 + cos|w| for 0 < |w| < pi (worst at the farthest point)."""
    def loss(w):
        return 1.0 - math.cos(np.linalg.norm(w))

    def grad(w):
        r = np.linalg.norm(w)
        return np.sin(r) * w / r

    return loss, grad


def test_ball_pl_known_worst_point():
    loss, grad = radial_cos()
    c = np.array([0.3, 0.0, 0.4])  # |c| = 0.5
    R = 1.5
    worst = c * (1 + R / 0.5)  # farthest point from 0, |worst| = 2
    mu = 1 + math.cos(2.0)
    res = ball_pl(loss, grad, c, R, n_random=64, rng=0)
    assert res.mu_random >= mu - 1e-12
    assert res.mu_min == pytest.approx(mu, abs=1e-9)
    np.testing.assert_allclose(res.argmin, worst, atol=1e-4)


def gradient_flow_least_squares(t):
    """Closed-form flow w(t) = w* + V exp(-S t) V^T (w0 - w*) of l = |Xw - y|^2/2 (S = eig of X^T X)."""
    loss, grad, w_star, mu, X = least_squares((2.0, 1.0, 0.5), n=6, seed=2)
    lam, V = np.linalg.eigh(X.T @ X)
    w0 = w_star + np.array([1.0, -2.0, 0.5])
    ws = [w_star + V @ (np.exp(-lam * s) * (V.T @ (w0 - w_star))) for s in t]
    losses = np.array([loss(w) for w in ws])
    g2 = np.array([np.sum(grad(w) ** 2) for w in ws])
    return losses, g2, mu


def test_trajectory_pl_on_flow():
    t = np.linspace(0.0, 40.0, 401)
    losses, g2, mu = gradient_flow_least_squares(t)
    res = trajectory_pl(losses, g2)
    assert (res.ratios >= mu * (1 - 1e-10)).all()
    # the slowest mode dominates late: the ratio decreases to 2 s_min^2 (flat to rounding at the end)
    assert res.ratios[0] > 2 * mu and res.ratios[-1] == pytest.approx(mu, rel=1e-8)
    assert res.mu_min == pytest.approx(mu, rel=1e-8) and res.ratios[res.argmin] == res.mu_min
    np.testing.assert_array_equal(res.ratios, g2 / losses)


def test_integrated_pl_on_flow_second_order():
    errs = []
    for T in (201, 401):
        t = np.linspace(0.0, 2.0, T)
        losses, g2, mu = gradient_flow_least_squares(t)
        res = integrated_pl(t, losses, g2)
        exact = g2 / losses  # along a gradient flow -d log l/dt = |grad l|^2 / l
        errs.append(np.abs(res.mu / exact - 1).max())
        assert res.max_relative_residual < 1e-2
        assert (res.mu_average >= mu * (1 - 1e-6)).all()  # l(t) <= e^{-mu t} l(0)
    assert errs[0] / errs[1] == pytest.approx(4.0, rel=0.1)  # O(h^2)
    assert errs[1] < 2e-3


def test_integrated_pl_detects_wrong_metric():
    t = np.linspace(0.0, 2.0, 401)
    losses, g2, _ = gradient_flow_least_squares(t)
    res = integrated_pl(t, losses, 2.0 * g2)  # a missing factor 2 in the metric: residual (-g + 2g)/2g = 1/2
    np.testing.assert_allclose(res.residual, 0.5, atol=5e-3)
    assert integrated_pl(t, losses).residual is None


@pytest.mark.parametrize("call", [
    lambda: pl_ratio(0.0, [1.0]),
    lambda: trajectory_pl([1.0, 0.0, 0.5], [1.0, 1.0, 1.0]),
    lambda: integrated_pl([0.0, 1.0, 2.0], [1.0, 0.5, 0.0]),
])
def test_zero_loss_is_reported(call):
    with pytest.raises(ValueError, match="undefined at a zero loss"):
        call()


def test_ball_pl_zero_loss_reported():
    loss, grad, w_star, _, _ = least_squares()
    with pytest.raises(ValueError, match=r"`loss_fn` of theory\.pl\.ball_pl returned 0"):
        ball_pl(loss, grad, w_star, 0.1, rng=0)


def test_ball_pl_knobs_honoured_and_reproducible():
    loss, grad = radial_cos()
    c = np.array([0.3, 0.0, 0.4])
    r0 = ball_pl(loss, grad, c, 1.0, n_random=10, n_adversarial=0, rng=5)
    assert r0.mu_adversarial is None and r0.n_evaluations == 11 and r0.mu_min == r0.mu_random
    r1 = ball_pl(loss, grad, c, 1.0, n_random=20, n_adversarial=0, rng=5)
    assert r1.n_evaluations == 21
    a = ball_pl(loss, grad, c, 1.0, n_random=10, n_adversarial=2, n_steps=3, rng=np.random.default_rng(7))
    b = ball_pl(loss, grad, c, 1.0, n_random=10, n_adversarial=2, n_steps=3, rng=7)
    assert a.mu_min == b.mu_min and np.array_equal(a.argmin, b.argmin) and a.n_evaluations == b.n_evaluations
    longer = ball_pl(loss, grad, c, 1.0, n_random=10, n_adversarial=2, n_steps=30, rng=7)
    assert longer.n_evaluations > a.n_evaluations and longer.mu_min <= a.mu_min
    coarse = ball_pl(loss, grad, c, 1.0, n_random=10, n_adversarial=1, n_steps=3, fd_step=1e-2, rng=7)
    assert coarse.n_evaluations != a.n_evaluations or coarse.mu_min != a.mu_min
    assert set(r0.to_measured()) == {"mu_min", "mu_random", "mu_adversarial", "n_evaluations"}


def test_ball_pl_shapes_and_no_mutation():
    X = np.diag([1.0, 2.0, 3.0, 4.0])
    calls = []

    def loss(W):
        calls.append(W.shape)
        W += 0.0  # a callable that writes into its argument must not corrupt the search
        return 0.5 * float(np.sum((X @ W.ravel()) ** 2))

    center = np.array([[0.1, 0.2], [0.0, 0.1]])
    keep = center.copy()
    res = ball_pl(loss, lambda W: (X.T @ X @ W.ravel()).reshape(2, 2), center, 1.0, n_random=32, rng=0)
    np.testing.assert_array_equal(center, keep)
    assert res.argmin.shape == (2, 2) and set(calls) == {(2, 2)}
    assert res.mu_min == pytest.approx(2.0, rel=1e-7)  # 2 s_min(X)^2, the minimiser 0 inside the ball


def test_user_exception_passes_through():
    class Boom(Exception):
        pass

    def loss(w):
        raise Boom("mine")

    with pytest.raises(Boom, match="mine"):
        ball_pl(loss, lambda w: w, [1.0], 0.5, rng=0)


_LS = least_squares()
PL_BAD = [
    (lambda: pl_ratio(-1.0, [1.0]), ValueError, r"`loss` of theory\.pl\.pl_ratio must be positive: entry 0 is negative"),
    (lambda: pl_ratio(float("nan"), [1.0]), ValueError, r"`loss` .* must lie in"),
    (lambda: pl_ratio("1", [1.0]), TypeError, r"`loss` .* real number"),
    (lambda: pl_ratio(1.0, [np.nan]), ValueError, r"`grad` .* must be finite"),
    (lambda: pl_ratio(1.0, ["a"]), TypeError, r"`grad` .* real numeric array"),
    (lambda: trajectory_pl([1.0, 2.0], [1.0]), ValueError, r"`grad_norms_sq` .* shape \(2,\)"),
    (lambda: trajectory_pl([], []), ValueError, r"`losses` .* at least 1"),
    (lambda: trajectory_pl([1.0], [-1.0]), ValueError, r"`grad_norms_sq` .* >= 0"),
    (lambda: trajectory_pl([[1.0]], [[1.0]]), ValueError, r"`losses` .* 1 dimension"),
    (lambda: integrated_pl([0.0, 1.0], [1.0, 0.5]), ValueError, r"`t` .* at least 3"),
    (lambda: integrated_pl([0.0, 2.0, 1.0], [1.0, 0.5, 0.2]), ValueError, r"`t` .* strictly increasing"),
    (lambda: integrated_pl([0.0, 1.0, 2.0], [1.0, 0.5, np.inf]), ValueError, r"`losses` .* finite"),
    (lambda: integrated_pl([0, 1, 2], [1, 0.5, 0.2], [1, -1, 1]), ValueError, r"`grad_norms_sq` .* >= 0"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 0.0), ValueError, r"`radius` of theory\.pl\.ball_pl must lie in \(0"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], -1.0), ValueError, r"`radius`"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], np.inf), ValueError, r"`radius`"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], "1"), TypeError, r"`radius`"),
    (lambda: ball_pl(_LS[0], _LS[1], [], 1.0), ValueError, r"`center` .* at least 1"),
    (lambda: ball_pl(_LS[0], _LS[1], [np.nan, 0, 0, 0], 1.0), ValueError, r"`center` .* finite"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 1.0, n_random=-1), ValueError, r"`n_random` .* >= 0"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 1.0, n_random=2, n_adversarial=4), ValueError, r"`n_adversarial` .* <= 3"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 1.0, n_steps=0), ValueError, r"`n_steps` .* >= 1"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 1.0, n_steps=2.5), TypeError, r"`n_steps` .* integer"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 1.0, fd_step=0.0), ValueError, r"`fd_step` .* \(0.0, 0.1\]"),
    (lambda: ball_pl(_LS[0], _LS[1], [1, 2, 3, 4], 1.0, rng="seed"), TypeError, r"`rng` .*Generator"),
    (lambda: ball_pl(None, _LS[1], [1, 2, 3, 4], 1.0), TypeError, r"`loss_fn` .* callable"),
    (lambda: ball_pl(_LS[0], 3, [1, 2, 3, 4], 1.0), TypeError, r"`grad_fn` .* callable"),
    (lambda: ball_pl(lambda w: "x", _LS[1], [1, 2, 3, 4], 1.0), TypeError, r"`loss_fn` .* real number"),
    (lambda: ball_pl(lambda w: -1.0, _LS[1], [1, 2, 3, 4], 1.0), ValueError, r"`loss_fn` .* nonnegative"),
    (lambda: ball_pl(lambda w: np.nan, _LS[1], [1, 2, 3, 4], 1.0), ValueError, r"`loss_fn` .* finite"),
    (lambda: ball_pl(_LS[0], lambda w: np.ones(2), [1, 2, 3, 4], 1.0), ValueError, r"`grad_fn` .* shape \(4,\)"),
    (lambda: ball_pl(_LS[0], lambda w: w * np.nan, [1, 2, 3, 4], 1.0), ValueError, r"`grad_fn` .* NaN"),
]


@pytest.mark.parametrize("call,exc,msg", PL_BAD)
def test_pl_contract(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_public_surface():
    assert sorted(pl.__all__) == sorted(["ACTIVATIONS", "RMAX", "BallPL", "IntegratedPL", "TrajectoryPL", "ball_pl",
                                         "hermite_coefficient", "hermite_coefficients", "integrated_pl", "pl_ratio",
                                         "trajectory_pl", "CertifiedPL", "Prop5Constants", "backward_states",
                                         "certified_ratio", "init_ratio", "prop5_constants"])


# ---------------------------------------------------------------------------------------------------
# 4. Estimators specific to the network of implicit-reg (Definition 1, Proposition 5, Appendix B.5)
# ---------------------------------------------------------------------------------------------------

from theory.implicit import Params, initialize, loss_and_gradient  # noqa: E402
from theory.pl import backward_states, certified_ratio, init_ratio, prop5_constants  # noqa: E402


def implicit_sample(n=8, d=4, d_out=2, q=7, seed=0, target_scale=0.3):
    """X (n, d) with rows of norm sqrt(q) (Prop. 5's normalisation), Gaussian targets."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X *= np.sqrt(q) / np.linalg.norm(X, axis=1, keepdims=True)
    return X, target_scale * rng.standard_normal((n, d_out))


def definition1_ratio(X, Y, p, act):
    """G / l of Definition 1 from backpropagation (factor L on the residual blocks)."""
    loss, g = loss_and_gradient(X, Y, p, act)
    return (np.sum(g.A**2) + p.L * (np.sum(g.V**2) + np.sum(g.W**2)) + np.sum(g.B**2)) / loss


def random_implicit_params(rng, L, m, d=4, d_out=2, q=7, scale=1.0):
    return Params(np.eye(q, d) + 0.3 * scale * rng.standard_normal((q, d)), scale * rng.standard_normal((L, q, m)),
                  rng.standard_normal((L, m, q)), np.eye(d_out, q, q - d_out) + 0.3 * scale * rng.standard_normal((d_out, q)))


def test_prop5_constants_reference_values():
    """sin and tanh at r = 3 (|eta_3| = e^{-1/2}/sqrt 6 and 0.1484372): the values of the B.5 formulas."""
    c = prop5_constants("sin")
    eta = math.exp(-0.5) / math.sqrt(6.0)
    assert c.r == 3 and c.eta == pytest.approx(eta, rel=1e-14) and c.k_sigma == 1.0 and c.m_sigma == 1.0
    e = math.exp(2 * math.sqrt(2))
    assert c.c1 == pytest.approx(2**10 * e**2 / eta**2, rel=1e-14)
    assert c.c2 == pytest.approx(128 * e / eta, rel=1e-14)
    assert c.c3 == pytest.approx(eta / (32 * math.sqrt(2)), rel=1e-14)
    assert c.c4 == pytest.approx(eta**3 / (2**14 * e**3), rel=1e-14)
    assert c.c4 == pytest.approx(c.C3**2 * eta**3 / (2 * c.C2), rel=1e-14)  # the two printed forms agree
    assert (f"{c.c1:.3g}", f"{c.c2:.4g}", f"{c.c3:.3g}", f"{c.c4:.3g}") == ("4.78e+06", "8746", "0.00547", "1.91e-10")
    t = prop5_constants("tanh")
    assert (t.r, f"{t.c1:.3g}", f"{t.c4:.3g}") == (3, "1.33e+07", "4.12e-11")
    assert prop5_constants("gelu").r == 2 and prop5_constants("relu").r == 2
    assert prop5_constants("gelu").k_sigma == pytest.approx(float(ndtr(math.sqrt(2)) + math.sqrt(2) * math.exp(-1) / SQRT2PI))
    assert prop5_constants("sin", r=5).eta == pytest.approx(math.exp(-0.5) / math.sqrt(120), rel=1e-14)


def test_prop5_constants_derived_quantities():
    c = prop5_constants("sin")
    n, q, m, d = 16, 10, 64, 8
    assert c.radius(n, q) == pytest.approx(c.c3 / math.sqrt(n * q))
    assert c.mu(n, q) == pytest.approx(c.c4 / (n * math.sqrt(n * q)))
    assert c.radius(n, q) <= c.proof_radius(n, q) * (1 + 1e-15)
    delta = (math.exp(-q * m / 16) + n * math.exp(-3 * m * c.eta**2 / (64 * n))
             + 2 * n**2 * math.exp(-d / (2 * 1.0 * n ** (2 / 3))))
    assert c.delta(n, m, q, d) == pytest.approx(delta, rel=1e-14)
    assert c.delta(n, m, q, d) > 1  # vacuous at CPU sizes (documented)
    assert c.delta(2, 10**9, 10, 10**6, v_x=0.5) < 1e-6  # small once m and d are huge
    ok = c.assumptions(n, m, 8, q, 6, 2)
    assert ok == {"q >= d + d'": True, "m >= c1 n": False, "L >= c2 sqrt(nq)": False}


@pytest.mark.parametrize("act", ["sin", "tanh", "gelu"])
@pytest.mark.parametrize("kind", ["paper", "iid"])
def test_init_ratio_equals_backprop_at_every_depth(act, kind):
    X, Y = implicit_sample()
    for L in (1, 3, 16):
        p = initialize(4, 12, L, np.random.default_rng(L), q=7, d_out=2, kind=kind)
        assert init_ratio(X, Y, p, act) == pytest.approx(definition1_ratio(X, Y, p, act), rel=1e-12)


def test_init_ratio_reduced_form():
    """With the paper's A, B and q >= d + d': G/l = (8/n^2 ||Y^T X||^2 + 4/(n^2 m) ||Y^T S||^2) / (||Y||^2/n),
    independent of L for the tied W."""
    X, Y = implicit_sample(n=10, q=9)
    n, m = 10, 20
    ratios = []
    for L in (1, 5, 40):
        p = initialize(4, m, L, np.random.default_rng(3), q=9, d_out=2)
        S = np.sin(X @ p.A.T @ p.W[0].T / 3.0)
        ref = (8 / n**2 * np.sum((Y.T @ X) ** 2) + 4 / (n**2 * m) * np.sum((Y.T @ S) ** 2)) / (np.sum(Y**2) / n)
        ratios.append(init_ratio(X, Y, p, "sin"))
        assert ratios[-1] == pytest.approx(ref, rel=1e-12)
    assert max(ratios) - min(ratios) <= 1e-12 * max(ratios)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), L=st.integers(1, 6), extra=st.integers(0, 6),
       act=st.sampled_from(["sin", "tanh", "gelu"]), scale=st.sampled_from([0.0, 0.1, 1.0, 3.0]))
def test_certificate_below_v_part_below_ratio(seed, L, extra, act, scale):
    """Lemma 18 chain at arbitrary points: certificate <= L sum ||dV||^2 / l <= G / l (rounding 1e-12)."""
    rng = np.random.default_rng(seed)
    n = 6
    X, Y = implicit_sample(n=n, seed=seed % 1000)
    p = random_implicit_params(rng, L, n + extra, scale=scale)
    res = certified_ratio(X, Y, p, act)
    assert res.certificate <= res.ratio_v * (1 + 1e-12) + 1e-300
    assert res.ratio_v <= res.ratio * (1 + 1e-12)
    assert res.ratio == pytest.approx(definition1_ratio(X, Y, p, act), rel=1e-12)
    assert res.s_min.shape == res.p_norms.shape == (L,) and np.all(res.s_min >= 0)


@pytest.mark.parametrize("act", ["sin", "tanh", "gelu", "relu", "identity"])
def test_backward_states_reproduce_the_gradient(act):
    """dl/dV_k = p_k S_k^T / (L sqrt m) and dl/dA = p_0^T X: the states behind the certificate are those of
    backpropagation (an independent path through loss_and_gradient's Numba kernel)."""
    rng = np.random.default_rng(11)
    X, Y = implicit_sample()
    p = random_implicit_params(rng, 5, 9)
    h, P = backward_states(X, Y, p, act)
    _, g = loss_and_gradient(X, Y, p, act)
    sig = {"sin": np.sin, "tanh": np.tanh, "gelu": lambda u: u * ndtr(u), "relu": lambda u: np.maximum(u, 0),
           "identity": lambda u: u}[act]
    for k in range(5):
        S = sig(h[k] @ p.W[k].T / math.sqrt(7))
        np.testing.assert_allclose(P[k + 1].T @ S / (5 * 3.0), g.V[k], rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(P[0].T @ X, g.A, rtol=1e-11, atol=1e-14)


def test_certificate_at_init_is_the_singular_value_bound():
    """At V = 0 every p_k = p_L with ||p_L||_F^2 = 4 l / n (B orthonormal rows, F = 0): the certificate is
    4 s_min(S)^2 / (n m), the bound used by the proof of Prop. 5."""
    X, Y = implicit_sample(n=8, q=7)
    p = initialize(4, 16, 6, np.random.default_rng(5), q=7, d_out=2)
    res = certified_ratio(X, Y, p, "sin")
    S = np.sin(X @ p.A.T @ p.W[0].T / math.sqrt(7))
    s = np.linalg.svd(S, compute_uv=False)[-1]
    assert res.certificate == pytest.approx(4 * s**2 / (8 * 16), rel=1e-12)
    assert np.all(res.s_min == res.s_min[0])


def test_zero_loss_is_reported_not_divided():
    X, Y = implicit_sample()
    p = initialize(4, 12, 3, np.random.default_rng(0), q=7, d_out=2)
    with pytest.raises(ValueError, match=r"init_ratio: the loss is 0\.0 .* undefined at a zero loss"):
        init_ratio(X, np.zeros_like(Y), p, "sin")  # F = 0 at init with q >= d + d'
    with pytest.raises(ValueError, match=r"certified_ratio: the loss is 0\.0"):
        certified_ratio(X, np.zeros_like(Y), p, "sin")


_IX, _IY = implicit_sample()
_IP = initialize(4, 12, 3, np.random.default_rng(0), q=7, d_out=2)
_IPV = Params(_IP.A, _IP.V + 0.1, _IP.W, _IP.B)
_INARROW = initialize(4, 5, 3, np.random.default_rng(0), q=7, d_out=2)
IMPLICIT_BAD = [
    (lambda: prop5_constants("identity"), ValueError, r"'identity' has eta_r = 0"),
    (lambda: prop5_constants("swish"), ValueError, r"`activation` of theory\.pl\.prop5_constants must be one of"),
    (lambda: prop5_constants(3), TypeError, r"`activation` .* string"),
    (lambda: prop5_constants("sin", r=1), ValueError, r"`r` .* >= 2"),
    (lambda: prop5_constants("sin", r=2), ValueError, r"`r` .* eta_2\(sin\) = 0"),
    (lambda: prop5_constants("gelu", r=3), ValueError, r"eta_3\(gelu\) = 0"),
    (lambda: prop5_constants("sin", r=2.5), TypeError, r"`r` .* integer"),
    (lambda: prop5_constants("gelu").delta(4, 8, 8, 4), ValueError, r"bounded activation; 'gelu' is unbounded"),
    (lambda: prop5_constants("sin").delta(0, 8, 8, 4), ValueError, r"`n` .* >= 1"),
    (lambda: prop5_constants("sin").delta(4, 8, 8, 4, v_x=0.0), ValueError, r"`v_x` .* \(0\.0, inf\)"),
    (lambda: prop5_constants("sin").mu(4.5, 8), TypeError, r"`n` .* integer"),
    (lambda: init_ratio(_IX, _IY, _IPV, "sin"), ValueError, r"`params\.V` of theory\.pl\.init_ratio must be exactly 0"),
    (lambda: init_ratio(_IX, _IY, _IP, "swish"), ValueError, r"`activation` of theory\.pl\.init_ratio"),
    (lambda: init_ratio(_IX[:, :3], _IY, _IP, "sin"), ValueError, r"`X` of theory\.pl\.init_ratio must have shape"),
    (lambda: init_ratio(_IX, _IY[:, :1], _IP, "sin"), ValueError, r"`Y` of theory\.pl\.init_ratio must have shape"),
    (lambda: init_ratio(_IX, _IY * np.nan, _IP, "sin"), ValueError, r"`Y` .* finite"),
    (lambda: init_ratio(_IX, _IY, "params", "sin"), TypeError, r"`params` of theory\.pl\.init_ratio"),
    (lambda: certified_ratio(_IX, _IY, _INARROW, "sin"), ValueError, r"certified_ratio: the certificate needs m >= n .* m = 5, n = 8"),
    (lambda: certified_ratio(_IX, _IY, {"A": _IP.A}, "sin"), ValueError, r"`params` .* missing"),
    (lambda: backward_states(_IX, _IY, _IP, None), TypeError, r"`activation` of theory\.pl\.backward_states"),
]


@pytest.mark.parametrize("call,exc,msg", IMPLICIT_BAD)
def test_implicit_pl_contract(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()
