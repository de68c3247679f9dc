"""Negative controls of the ``resnet-node`` checks.

Each control feeds a check's own predicate (the verdict function with the check's own expected
figure) a setting that breaks the claim: a hypothesis violated, the scheme swapped, the 1/N scaling
removed, or the printed form of a corrected statement. The predicate must answer ``fail``, with the
measured figure outside the tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.claims import erratum_verdict, identity_verdict, rate_verdict
from theory.experiments import resnet_node as rn
from theory.rates import BoundTracker, fit_rate, identity_error
from theory.resnet import forward, gradient, interpolating_ode
from theory.resnet.errors import (
    adjoint_gradient_error,
    euler_constants,
    heun_constants,
    iid_weights,
    reconstruction_error,
    smooth_weights,
)


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


# --------------------------------------------------------------------------- Proposition 1


def test_prop1_bound_rejects_unscaled_resnet():
    """Classical ResNet x_{n+1} = x_n + f(x_n, theta_n) (no 1/N) against the ODE of the same theta."""
    tracker = BoundTracker()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        N, d = 8, 2
        theta = smooth_weights(N, d, rng, scheme="heun", scale=0.5)
        x0 = rng.standard_normal(d)
        sol = interpolating_ode(x0, theta, "tanh_out", "weights")
        x = forward(x0, N * theta[:-1], "tanh_out")  # step 1 instead of 1/N
        tracker.add(float(np.max(np.linalg.norm(x - sol.x, axis=1))), sol.prop1_bound())
    verdict = rn.bound_claim_verdict(tracker.result())
    _assert_fails(verdict)
    assert tracker.result().ratio > 10


def test_prop1_tightness_rejects_quadratic_field():
    """phi(x, s) = a s^2 is not a case of equality: the ratio gap/bound tends to 1/2, not 1."""
    a = np.array([1.0, -2.0])
    ratios = []
    for N in (16, 64):
        theta = a * (np.arange(N + 1)[:, None] / N) ** 2
        sol = interpolating_ode(np.zeros(2), theta, "bias", "weights")
        ratios.append(np.linalg.norm(forward(np.zeros(2), theta[:-1], "bias")[-1] - sol.x[-1]) / sol.prop1_bound())
    _assert_fails(identity_verdict(identity_error(np.array(ratios), np.ones(2)), rn.PROP1_IDENTITY_EXPECTED))
    assert abs(ratios[-1] - 0.5) < 0.02


def test_prop1_non_smooth_rejects_smooth_weights():
    """f(x, theta_n) = n / N (smooth in depth) closes the gap, so "gap stays 1/2" fails."""
    gaps = []
    for N in (4, 16, 64):
        theta = np.arange(N + 1.0)[:, None] / N
        sol = interpolating_ode([0.0], theta, "bias", "residuals")
        gaps.append(abs(sol.x[-1, 0] - forward([0.0], theta[:-1], "bias")[-1, 0]))
    _assert_fails(identity_verdict(identity_error(np.array(gaps), np.full(3, 0.5)), rn.PROP1_IDENTITY_EXPECTED))


def test_prop1_rate_rejects_non_smooth_weights():
    """Alternating weights with f = theta^2 and weight interpolation: the gap is 2/3 at every N (slope 0)."""
    grid = np.array([8, 16, 32, 64, 128])
    gaps = []
    for N in grid:
        theta = ((-1.0) ** np.arange(N + 1))[:, None]
        sol = interpolating_ode([0.0], theta, "bias_sq", "weights")
        gaps.append(abs(sol.x[-1, 0] - forward([0.0], theta[:-1], "bias_sq")[-1, 0]))
    fit = fit_rate(grid, np.array(gaps))
    _assert_fails(rn.prop1_rate_verdict(fit))
    assert abs(fit.slope) < 0.01


# --------------------------------------------------------------------------- Propositions 3-6

GRID = np.array([16, 32, 64, 128, 256])


def _errors(scheme, weights, quantity, *, scale_of_N=None, seeds=range(3)):
    gen = smooth_weights if weights == "smooth" else iid_weights
    out = np.empty((len(seeds), GRID.size))
    for i, seed in enumerate(seeds):
        data = np.random.default_rng(10_000 + seed)
        x0, y = data.standard_normal(4), data.standard_normal(4)
        for j, N in enumerate(GRID):
            scale = 1.0 if scale_of_N is None else scale_of_N(N)
            theta = gen(int(N), 4, np.random.default_rng(seed), scheme=scheme, scale=scale)
            if quantity == "reconstruction":
                out[i, j] = reconstruction_error(x0, theta, "tanh_out", scheme)
            else:
                out[i, j] = adjoint_gradient_error(x0, theta, y, "tanh_out", scheme)[0]
    return out


@pytest.mark.parametrize(("prop", "weights", "quantity"), [
    ("prop-3", "smooth", "reconstruction"), ("prop-3", "iid", "reconstruction"),
    ("prop-4", "smooth", "gradient"), ("prop-4", "iid", "gradient"),
])
def test_euler_rates_reject_weights_growing_with_depth(prop, weights, quantity):
    """Assumption 2 violated: ||theta_n|| = sqrt(N)/2 grows with N, so C_f, L_f are not uniform in N."""
    errors = _errors("euler", weights, quantity, scale_of_N=lambda N: np.sqrt(N) / 2)
    fit = fit_rate(GRID, errors)
    verdict = rate_verdict(fit, rn.ADJOINT_EXPECTED[(prop, weights)])
    _assert_fails(verdict)
    assert fit.slope > rn.ADJOINT_EXPECTED[(prop, weights)]["slope"] + 0.5


@pytest.mark.parametrize(("prop", "quantity"), [("prop-5", "reconstruction"), ("prop-6", "gradient")])
def test_heun_smooth_rates_reject_euler(prop, quantity):
    """Scheme swapped: Euler's reconstruction (slope -1) and gradient (-2) errors miss Heun's rates."""
    fit = fit_rate(GRID, _errors("euler", "smooth", quantity))
    _assert_fails(rate_verdict(fit, rn.ADJOINT_EXPECTED[(prop, "smooth")]))


@pytest.mark.parametrize(("prop", "quantity"), [("prop-5", "reconstruction"), ("prop-6", "gradient")])
def test_heun_iid_rates_reject_smooth_weights(prop, quantity):
    """The i.i.d. claims predict the slow rate caused by Delta_theta = O(1); smooth weights beat it."""
    fit = fit_rate(GRID, _errors("heun", "smooth", quantity), floor=rn.FLOOR)
    _assert_fails(rate_verdict(fit, rn.ADJOINT_EXPECTED[(prop, "iid")]))


def test_prop3_bound_rejects_unscaled_resnet():
    """Constants of theta, network run without 1/N (theta -> N theta): the leading bound is exceeded."""
    tracker = BoundTracker()
    for seed in range(3):
        theta = iid_weights(16, 2, np.random.default_rng(seed), scale=0.5)
        x0 = np.random.default_rng(seed + 1).standard_normal(2)
        tracker.add(reconstruction_error(x0, 16 * theta, "tanh_out", "euler"), euler_constants(theta, 2)["bound"])
    _assert_fails(rn.bound_claim_verdict(tracker.result()))


def test_prop5_bound_rejects_euler_reconstruction():
    """Scheme swapped: Euler's O(1/N) reconstruction error against Heun's bound for smooth weights."""
    tracker = BoundTracker()
    for seed in range(3):
        theta = smooth_weights(64, 3, np.random.default_rng(seed), scheme="heun")
        x0 = np.random.default_rng(seed + 1).standard_normal(3)
        err = reconstruction_error(x0, theta[:-1], "tanh_out", "euler")
        tracker.add(err, heun_constants(theta, 3)["corrected"])
    _assert_fails(rn.bound_claim_verdict(tracker.result()))


# --------------------------------------------------------------------------- errata: the corrected forms
# An erratum record passes only while the printed form fails; fed the corrected form, it must fail.


def test_prop5_erratum_fails_when_printed_holds_or_corrected_fails():
    """Fed the corrected bound as the printed one, the record fails (the 'printed' form holds); fed
    the printed bound as the corrected one, it fails too (the 'corrected' form fails)."""
    record = rn.prop5_erratum_verdict(rn.prop5_erratum(rn.Prop5ErratumConfig(depths=(256,))))
    printed_v, corrected_v = record.parts
    assert record.status == "pass" and record.kind == "erratum"
    _assert_fails(erratum_verdict(corrected_v, corrected_v))
    _assert_fails(erratum_verdict(printed_v, printed_v))


def test_prop6_erratum_fails_when_printed_holds_or_corrected_fails():
    x0, theta, y = rn.prop6_instance(rn.Prop6ErratumConfig())
    _, g0 = gradient(x0, theta, y, "linear", "heun")
    _, _, g = rn.heun_linear_activations(x0, theta, y)
    np.testing.assert_allclose(g[0], g0, rtol=1e-12)  # the activation gradients are exact
    record = rn.prop6_erratum_verdict(rn.prop6_erratum(rn.Prop6ErratumConfig()))
    printed, corrected = record.parts
    assert record.status == "pass"
    assert corrected.status == "pass" and printed.status == "fail"
    _assert_fails(erratum_verdict(corrected, corrected))  # printed form holding
    _assert_fails(erratum_verdict(printed, printed))  # corrected form failing


def test_linear_gradient_erratum_fails_when_printed_holds_or_corrected_fails():
    record = rn.sec32_gradient_erratum_verdict(rn.sec32_gradient_erratum(rn.Sec32GradientConfig(seeds=(0,))))
    wrong, right = record.parts
    assert record.status == "pass"
    assert right.status == "pass"
    _assert_fails(wrong)
    _assert_fails(erratum_verdict(right, right))
    _assert_fails(erratum_verdict(wrong, wrong))


def test_linear_product_erratum_fails_when_printed_holds_or_corrected_fails():
    result = rn.sec32_product(rn.Sec32ProductConfig())
    record = rn.sec32_product_erratum_verdict(result)
    assert record.status == "pass"
    wrong, right = record.parts
    assert rn.sec32_product_verdict(result).status == "pass"
    assert right.status == "pass"
    _assert_fails(wrong)
    _assert_fails(erratum_verdict(right, right))
    _assert_fails(erratum_verdict(wrong, wrong))
