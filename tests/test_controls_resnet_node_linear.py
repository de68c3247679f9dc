"""Negative controls of the deep-linear-ResNet checks (``resnet-node`` Section 3.2).

Each control feeds a check's own predicate, with the check's own expected figure, a setting that
breaks the claim: Assumption 1 violated (the large regime), i.i.d. initial weights (the smoothness
hypothesis of Th. 1 violated), or the gradient flow replaced by a dynamics with independent
per-layer noise (what a layer-wise noisy optimiser would do), or the corrected constants fed to an
erratum record.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from theory.claims import bound_verdict, erratum_verdict
from theory.experiments import resnet_node as rn
from theory.linear import depth_embedding, flow_diagnostics, prop2_constants
from theory.rates import BoundTracker


FLOW = functools.lru_cache(maxsize=None)(rn.linear_flow)
T_GRID = np.linspace(0.0, rn.LINEAR_PRESETS["check"].t_max, rn.LINEAR_PRESETS["check"].t_points)  # the checks' time grid


def _fails(verdict):
    assert verdict.status == "fail", verdict.message


def _noisy(theta_t, eps, seed):
    """theta_n(t) + eps xi_n(t), xi i.i.d. over layers and times: not a gradient flow."""
    rng = np.random.default_rng(seed)
    return theta_t + eps * rng.standard_normal(theta_t.shape) / np.sqrt(theta_t.shape[-1])


def _ratio(key, problem, theta_t, info):
    theta0, Sigma, B = problem
    return rn.prop2_ratios(theta0, Sigma, B, theta_t, info)[key]


@pytest.mark.parametrize("key", ["weight", "loss", "pl"])
def test_prop2_bounds_reject_the_large_regime(key):
    """Assumption 1 violated (sqrt(l(0)) ~ 1.1 against a threshold 0.04): the weights leave the
    ball of radius 1/2, the PL sandwich breaks, and the loss falls slower than exp(-4mt/e)."""
    tracker = BoundTracker()
    for N in (8, 32):
        theta_t, info = rn.linear_flow("large", 0, N, "zero")
        tracker.add(_ratio(key, rn.large_problem(N), theta_t, info), 1.0)
    _fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))


@pytest.mark.parametrize("key", ["smoothness", "limit"])
def test_prop2_bounds_reject_layerwise_noise(key):
    """Weights of the assumption regime plus independent per-layer noise of size 0.02: the layer
    differences no longer shrink like 1/N and the weights do not settle."""
    tracker = BoundTracker()
    for N in (64, 256):
        problem = rn.assumption_problem(0, N, "cosine")
        theta_t, _ = FLOW("assumption", 0, N, "cosine")
        noisy = _noisy(theta_t, 0.02, N)
        info = flow_diagnostics(noisy, problem[1], problem[2], T_GRID)
        tracker.add(_ratio("tail" if key == "limit" else key, problem, noisy, info), 1.0)
    _fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))


def test_prop2_large_rate_rejects_iid_init():
    result = rn.layer_differences(rn.LayerDifferenceConfig(init="iid", at="final"), flow=FLOW)
    _fails(rn.prop2_large_verdict(result))


def test_prop2_iid_contrast_rejects_zero_init():
    result = rn.layer_differences(rn.LayerDifferenceConfig(init="zero", at="final"), flow=FLOW)
    _fails(rn.prop2_iid_verdict(result))


@pytest.mark.parametrize("cid", ["resnet-node/thm-1", "resnet-node/thm-1/product", "resnet-node/lemma-2"])
def test_thm1_and_lemma2_reject_iid_init(cid):
    """i.i.d. initial weights violate ||theta_{n+1}(0) - theta_n(0)|| <= C_0/N: depth N and 2N no
    longer approach each other at rate 1/N."""
    result = rn.thm1(rn.DoublingConfig(regime="large", init="iid", reference=0), flow=FLOW)
    which = {"resnet-node/thm-1": "psi", "resnet-node/thm-1/product": "pi", "resnet-node/lemma-2": "lemma"}[cid]
    _fails(rn.thm1_claim_verdict(result, which))
    _fails(rn.thm1_verdict(result))


def test_thm1_positive_twin_passes():
    """The same predicate on the check's own preset (cosine init, Assumption 1) passes."""
    result = rn.thm1(rn.DoublingConfig(reference=0), flow=FLOW)
    assert all(rn.thm1_claim_verdict(result, w).status == "pass" for w in ("psi", "pi", "lemma"))
    assert rn.thm1_verdict(result).status == "pass"


def test_lemma1_rejects_time_noise():
    """Noise that changes with t breaks the time-Lipschitz bound C'|t1 - t2|."""
    N = 64
    theta0, Sigma, B = rn.assumption_problem(0, N, "cosine")
    c = prop2_constants(theta0, Sigma, B)
    theta_t = _noisy(FLOW("assumption", 0, N, "cosine")[0], 0.02, 7)
    s = np.array([0.5])
    a, b = depth_embedding(theta_t, s)[40, 0], depth_embedding(theta_t, s)[41, 0]
    dt = T_GRID[41] - T_GRID[40]
    tracker = BoundTracker()
    tracker.add(float(np.linalg.norm(a - b)), c["time_lipschitz"] * dt + c["smoothness"] / N)
    _fails(bound_verdict(tracker.result(), {"ratio_max": 1.0}))


def test_fig2_criterion_rejects_iid_init():
    """With i.i.d. initial weights Psi_N does not approach the reference as N grows."""
    _fails(rn.fig2_verdict(rn.fig2(rn.Fig2Config(init="iid"), flow=FLOW)))


def test_pl_erratum_fails_when_printed_holds_or_corrected_fails():
    """The record fails when the 'printed' half holds (the corrected pair fed in its place) and when
    the 'corrected' half fails (extremes from weights outside the ball, |theta_n| = 0.9, where no
    pair of the proof applies)."""
    exact_max, exact_min = rn.pl_extremes()
    record = rn.pl_erratum_verdict(exact_max, exact_min)
    printed, corrected = record.parts
    assert record.status == "pass"
    _fails(erratum_verdict(corrected, corrected))
    _, outside = rn.pl_erratum_verdict(*rn.pl_extremes(eps=0.9)).parts
    _fails(outside)
    _fails(rn.pl_erratum_verdict(*rn.pl_extremes(eps=0.9)))
    _fails(erratum_verdict(printed, outside))
