"""Negative controls of the worst-case searches of the ``resnet-node`` bounds.

Each control reruns a bound's measurement, its worst-case search included, with one ingredient of the right-hand
side broken (the printed constant divided by 4, or the radius of a ball divided by 4), monkeypatched into the
experiment module, and asserts that the search finds the violation by itself (its largest ratio exceeds 1) and
that the claim's verdict fails. Where the seeded draws of the same config stay within the broken bound, that is
asserted too: the search, not the draw, caught it. A positive twin (the same config, unbroken) passes.
"""

from __future__ import annotations

import pytest

from theory.experiments import experiment
from theory.experiments import resnet_node as rn
from theory.experiments.resnet_node import adjoint, linear, ode


def _search_caught(verdict, search):
    assert verdict.status == "fail", verdict.message
    assert search.ratio > 1.0, search
    assert verdict.measured["search"]["ratio"] == search.ratio


# --------------------------------------------------------------------------- Proposition 1

PROP1 = rn.Prop1Config(n_instances=1, search_budget=rn.PROP1_PRESETS["check"].search_budget)


def test_prop1_search_passes_unbroken():
    result = rn.prop1(PROP1)
    assert rn.prop1_verdict(result).status == "pass"
    assert 0.9 < result.bound.search.ratio <= 1.0  # nearly attained: small weights, where the bound is tight


def test_prop1_search_finds_a_quartered_bound(monkeypatch):
    """(e^L - 1) C_N / (8 N L) in place of (e^L - 1) C_N / (2 N L): the printed 1/2 divided by 4."""
    original = ode._prop1_rhs
    monkeypatch.setattr(ode, "_prop1_rhs", lambda sol: original(sol) / 4)
    result = rn.prop1(PROP1)
    _search_caught(rn.prop1_verdict(result), result.bound.search)
    assert result.bound.ratio <= 1.0  # the one seeded network does not see it


# --------------------------------------------------------------------------- Propositions 3 and 5


def test_prop3_search_finds_a_quartered_bound(monkeypatch):
    """(e^{L_f} - 1) C_f / (4N): the leading term of Prop. 3 divided by 4."""
    original = adjoint._euler_bound
    monkeypatch.setattr(adjoint, "_euler_bound", lambda theta, d: original(theta, d) / 4)
    result = rn.prop3_bound(rn.Prop3BoundConfig())
    _search_caught(rn.bound_claim_verdict(result), result.search)
    assert result.ratio <= 1.0  # the 60 seeded instances stay below the broken bound


def test_prop5_search_finds_a_quartered_constant(monkeypatch):
    """C'_f = L'_theta L_theta / 16: the printed 1/4 of Prop. 5 divided by 4."""
    original = adjoint._heun_bound
    monkeypatch.setattr(adjoint, "_heun_bound", lambda theta, d: original(theta, d) / 4)
    result = rn.prop5_bound(rn.Prop5BoundConfig(seeds=(1, 2)))  # i.i.d. draws only
    _search_caught(rn.bound_claim_verdict(result), result.search)
    assert result.ratio <= 1.0


def test_prop35_searches_pass_unbroken():
    for measure, config in ((rn.prop3_bound, rn.Prop3BoundConfig()),
                            (rn.prop5_bound, rn.Prop5BoundConfig(seeds=(1, 2)))):
        result = measure(config)
        assert rn.bound_claim_verdict(result).status == "pass"
        assert result.search.ratio <= 1.0


# --------------------------------------------------------------------------- Assumption 1, Prop. 2, Lemma 1

A1 = rn.Assumption1Config(n_instances=2, break_ladder=(4.5,),
                          search_budget=rn.ASSUMPTION1_PRESETS["check"].search_budget)


def test_assumption1_search_finds_a_quartered_loss_bound(monkeypatch):
    """The loss conclusion read as l(t) <= e^{-4mt/e} l(0) / 4 (its right-hand side divided by 4)."""
    original = linear._conclusion_sides

    def broken(theta0, Sigma, theta_t, info):
        sides = original(theta0, Sigma, theta_t, info)
        lhs, rhs = sides["loss"]
        return {**sides, "loss": (lhs, rhs / 4)}

    monkeypatch.setattr(linear, "_conclusion_sides", broken)
    result = rn.assumption1(A1)
    _search_caught(rn.assumption1_verdict(result), result.search)


def test_assumption1_search_finds_a_quartered_ball(monkeypatch):
    """||theta_n(t)|| < 1/8 in place of 1/2: the radius of the ball divided by 4."""
    monkeypatch.setattr(linear, "BALL_RADIUS", linear.BALL_RADIUS / 4)
    result = rn.assumption1(A1)
    _search_caught(rn.assumption1_verdict(result), result.search)


def test_assumption1_search_passes_unbroken():
    result = rn.assumption1(A1)
    assert rn.assumption1_verdict(result).status == "pass", rn.assumption1_verdict(result).message
    assert result.search.ratio <= 1.0


PROP2 = rn.LinearFlowConfig(seeds=(0,), inits=("zero",), depths=(8,),
                            search_budget=rn.LINEAR_PRESETS["check"].search_budget)


def _quartered_constants(key):
    """prop2_constants with the right-hand side of conclusion ``key`` divided by 4 (the loss: l0 / 4 in
    e^{-4mt/e} l0; the PL sandwich: (16/e) m l <= N^2 ||grad_n||^2 <= e M l; the tail: e^{3/2} / 4; the
    smoothness: C / 4)."""
    original = linear.prop2_constants

    def broken(theta0, Sigma, B):
        c = dict(original(theta0, Sigma, B))
        if key == "loss":
            c["l0"] /= 4
        elif key == "pl":
            c["pl_low"] *= 4
            c["pl_high"] /= 4
        elif key == "tail":
            c["movement"] /= 4
        elif key == "smoothness":
            c["smoothness"] /= 4
        return c

    return broken


@pytest.mark.parametrize("key", sorted(rn.PROP2_KEYS))
def test_prop2_search_finds_a_quartered_bound(monkeypatch, key):
    """Each conclusion of Prop. 2 with its right-hand side divided by 4 (the ball's radius 1/8 for ``weight``)."""
    if key == "weight":
        monkeypatch.setattr(linear, "BALL_RADIUS", linear.BALL_RADIUS / 4)
    else:
        monkeypatch.setattr(linear, "prop2_constants", _quartered_constants(key))
    result = rn.prop2(PROP2)
    verdict = rn.prop2_claim_verdict(result, key)
    _search_caught(verdict, result.searches[key])
    assert rn.prop2_verdict(result).status == "fail"


def test_prop2_searches_pass_unbroken():
    result = rn.prop2(PROP2)
    for key in rn.PROP2_KEYS:
        assert rn.prop2_claim_verdict(result, key).status == "pass"
        assert result.searches[key].ratio <= 1.0
    assert rn.prop2_verdict(result).status == "pass"


LEMMA1 = rn.Lemma1Config(flows=rn.LinearFlowConfig(seeds=(0,), inits=("zero",), depths=(8,)), pairs=100,
                         search_budget=experiment("resnet_node.lemma1").presets["check"].search_budget)


def test_lemma1_search_finds_a_quartered_bound(monkeypatch):
    """C'|t1 - t2| + C|s1 - s2| + C/N divided by 4 (C and C' both quartered)."""
    original = linear.prop2_constants

    def broken(theta0, Sigma, B):
        c = dict(original(theta0, Sigma, B))
        c["smoothness"] /= 4
        c["time_lipschitz"] /= 4
        return c

    monkeypatch.setattr(linear, "prop2_constants", broken)
    result = rn.lemma1(LEMMA1)
    _search_caught(rn.lemma1_verdict(result), result.search)
    assert result.ratio <= 1.0  # the one zero-init flow of the draw stays below it


def test_lemma1_search_passes_unbroken():
    result = rn.lemma1(LEMMA1)
    assert rn.lemma1_verdict(result).status == "pass"
    assert result.search.ratio <= 1.0
