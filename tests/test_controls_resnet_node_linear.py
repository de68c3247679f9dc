"""Negative controls of the deep-linear-ResNet checks (checks/test_resnet_node_linear.py).

Each control feeds a check's own predicate, with the check's own expected figure, a setting that
breaks the claim: Assumption 1 violated (the large regime), i.i.d. initial weights (the smoothness
hypothesis of Th. 1 violated), or the gradient flow replaced by a dynamics with independent
per-layer noise (what a layer-wise noisy optimiser would do), or the corrected constants fed to an
erratum record.
"""

from __future__ import annotations

import numpy as np
import pytest

from checks import test_resnet_node_linear as chk
from theory.claims import bound_verdict, erratum_verdict, qualitative_verdict, rate_verdict
from theory.linear import depth_embedding, flow_diagnostics, gradient, prop2_constants
from theory.rates import BoundTracker, fit_rate


def _fails(verdict):
    assert verdict.status == "fail", verdict.message


def _noisy(theta_t, eps, seed):
    """theta_n(t) + eps xi_n(t), xi i.i.d. over layers and times: not a gradient flow."""
    rng = np.random.default_rng(seed)
    return theta_t + eps * rng.standard_normal(theta_t.shape) / np.sqrt(theta_t.shape[-1])


def _ratio(key, problem, theta_t, info):
    theta0, Sigma, B = problem
    return chk.prop2_ratios(theta0, Sigma, B, theta_t, info)[key]


@pytest.mark.parametrize("key", ["weight", "loss", "pl"])
def test_prop2_bounds_reject_the_large_regime(key):
    """Assumption 1 violated (sqrt(l(0)) ~ 1.1 against a threshold 0.04): the weights leave the
    ball of radius 1/2, the PL sandwich breaks, and the loss falls slower than exp(-4mt/e)."""
    tracker = BoundTracker()
    for N in (8, 32):
        theta_t, info = chk.large_flow(N)
        tracker.add(_ratio(key, chk.large_problem(N), theta_t, info), 1.0)
    _fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))


@pytest.mark.parametrize("key", ["smoothness", "limit"])
def test_prop2_bounds_reject_layerwise_noise(key):
    """Weights of the assumption regime plus independent per-layer noise of size 0.02: the layer
    differences no longer shrink like 1/N and the weights do not settle."""
    tracker = BoundTracker()
    for N in (64, 256):
        problem = chk.assumption_problem(0, N, "cosine")
        theta_t, _ = chk.assumption_flow(0, N, "cosine")
        noisy = _noisy(theta_t, 0.02, N)
        info = flow_diagnostics(noisy, problem[1], problem[2], chk.T_GRID)
        tracker.add(_ratio("tail" if key == "limit" else key, problem, noisy, info), 1.0)
    _fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))


def test_prop2_large_rate_rejects_iid_init():
    flows = [[chk.large_flow(N, "iid", seed) for N in chk.GRID] for seed in (0, 1)]
    grid, errors = chk._layer_difference_fit(flows, at="final")
    _fails(rate_verdict(fit_rate(grid, errors), {"slope": -1.0, "tol": 0.1}))


def test_prop2_iid_contrast_rejects_zero_init():
    flows = [[chk.large_flow(N, "zero", seed) for N in chk.GRID] for seed in (0, 1)]
    grid, errors = chk._layer_difference_fit(flows, at="final")
    _fails(rate_verdict(fit_rate(grid, errors), {"slope": 0.0, "tol": 0.1}))


@pytest.mark.parametrize("which", [0, 1, 2], ids=["thm-1", "thm-1/product", "lemma-2"])
def test_thm1_and_lemma2_reject_iid_init(which):
    """i.i.d. initial weights violate ||theta_{n+1}(0) - theta_n(0)|| <= C_0/N: depth N and 2N no
    longer approach each other at rate 1/N."""
    table = chk._doubling_errors(lambda seed, N, init: chk.large_flow(N, init, seed), (0, 1), "iid")
    fit = fit_rate(np.array(chk.GRID), table[which])
    _fails(rate_verdict(fit, {"slope": -1.0, "tol": 0.1}))


def test_lemma1_rejects_time_noise():
    """Noise that changes with t breaks the time-Lipschitz bound C'|t1 - t2|."""
    N = 64
    theta0, Sigma, B = chk.assumption_problem(0, N, "cosine")
    c = prop2_constants(theta0, Sigma, B)
    theta_t = _noisy(chk.assumption_flow(0, N, "cosine")[0], 0.02, 7)
    s = np.array([0.5])
    a, b = depth_embedding(theta_t, s)[40, 0], depth_embedding(theta_t, s)[41, 0]
    dt = chk.T_GRID[41] - chk.T_GRID[40]
    tracker = BoundTracker()
    tracker.add(float(np.linalg.norm(a - b)), c["time_lipschitz"] * dt + c["smoothness"] / N)
    _fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))


def test_fig2_criterion_rejects_iid_init():
    """With i.i.d. initial weights Psi_N does not approach the reference as N grows."""
    N_ref = 1024
    s = (np.arange(N_ref) + 0.5) / N_ref
    ref = depth_embedding(chk.large_flow(N_ref, "iid")[0], s)
    dist = np.array([np.sqrt(np.mean(np.sum((depth_embedding(chk.large_flow(N, "iid")[0], s) - ref) ** 2,
                                            axis=(-2, -1)), axis=-1)) for N in chk.GRID])
    decreasing = bool(np.all(np.diff(dist[:, 1:], axis=0) < 0))
    slope = fit_rate(np.array(chk.GRID), dist[:, 1:].mean(axis=1)).slope
    _fails(qualitative_verdict(decreasing and abs(slope + 1.0) <= 0.2, f"slope {slope:.2f}"))


def test_pl_erratum_fails_when_printed_holds_or_corrected_fails():
    """The record fails when the 'printed' half holds (the corrected pair fed in its place) and when
    the 'corrected' half fails (extremes from weights outside the ball, |theta_n| = 0.9, where no
    pair of the proof applies)."""
    exact_max, exact_min = chk.pl_extremes()
    printed, corrected, _, _ = chk.pl_erratum_verdicts(exact_max, exact_min)
    assert erratum_verdict(printed, corrected).status == "pass"
    _fails(erratum_verdict(corrected, corrected))
    _, outside, _, _ = chk.pl_erratum_verdicts(*chk.pl_extremes(eps=0.9))
    _fails(outside)
    _fails(erratum_verdict(printed, outside))
