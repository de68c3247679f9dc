"""Negative controls of the proof-chain checks of ``implicit-reg`` (Prop. 5 and Thm 6, checks/test_implicit_reg_proof.py).

Each control reruns a check's measurement (its registered experiment, with ``dataclasses.replace`` on the CONFIG
of the check preset) with a broken input: a printed constant divided by 4, a term of the right-hand side dropped,
a hypothesis violated (a ball larger than the proof's, columns that are not i.i.d. uniform, q < d + d'), the
printed form put back in a corrected statement, or a predicted rate multiplied; the search or the measurement must
find the violation by itself and the verdict fail. A last test checks the measurement's own network (46) against
the package's backpropagation.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from theory.experiments import experiment


def _rerun(name, claim_id=None, **broken):
    exp = experiment(f"implicit_reg.{name}")
    cfg = dataclasses.replace(exp.presets["check"], **broken)
    result = exp.measure(cfg)
    verdict = exp.verdict_for(claim_id)(result) if claim_id else exp.verdict(result)
    return verdict, result


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_eq48_rejects_a_quarter_of_its_constants():
    """(48) with every right-hand side divided by 4: the search finds the violation (s_min(B) = 1/2 is attained)."""
    v, r = _rerun("eq48", rhs_factor=0.25)
    _assert_fails(v)
    assert r.bound.search.ratio > 1.0


def test_eq50_rejects_a_quarter_of_its_constant():
    """(50) with 2 e^{2 sqrt2 K} sqrt(qn) divided by 4: the aligned, nearly linear instances break it."""
    v, r = _rerun("eq50", rhs_factor=0.25)
    _assert_fails(v)
    assert r.bound.search.ratio > 1.0


def test_eq51_rejects_a_ball_beyond_the_proofs_radius():
    """(51) searched on a ball 1000 times the proof's M (the hypothesis violated; M ~ 4e-3 at n = 1, q = 2): V, W and
    B can then cancel the backward state and the search finds ||p_k|| below e^{-2 sqrt2} sqrt(l/n)."""
    v, r = _rerun("eq51", radius_factor=1000.0)
    _assert_fails(v)
    assert r.bound.search.ratio > 1.0


def test_eq51_erratum_rejects_the_printed_exponent_in_its_correction():
    """The corrected half with the printed e^{-2 sqrt2 K} put back (L >= 4 sqrt2 K): it fails too, so the erratum
    record fails."""
    v, r = _rerun("eq51_erratum", corrected_exponent=2.0)
    _assert_fails(v)
    assert r.corrected.search.ratio > 1.0


def test_eq52_rejects_a_quarter_of_its_constant():
    """(52) with the backprop side multiplied by 1/4: the n = 1 instances (equality) break it."""
    v, r = _rerun("eq52", rhs_factor=0.25)
    _assert_fails(v)
    assert r.bound.search.ratio > 1.0


def test_feature_perturbation_rejects_a_dropped_term():
    """The feature-perturbation bound without its C1 sqrt n term (the contribution of W - W_bar): fails."""
    v, r = _rerun("feature", drop_term="C1")
    _assert_fails(v)
    assert r.bound.search.ratio > 1.0


def test_chernoff_rejects_a_quarter_of_its_bound():
    """The Chernoff tail with its bound divided by 4: small mu_min (probability near 1) breaks it."""
    v, r = _rerun("chernoff", rhs_factor=0.25)
    _assert_fails(v)
    assert r.bound.search.ratio > 1.0


def test_chernoff_erratum_rejects_the_correct_exponent_as_printed():
    """With Tropp's (1 - t)^2 in the 'printed' half, the printed half holds and the erratum record fails."""
    v, _ = _rerun("chernoff_erratum", printed_exponent="(1-t)^2")
    _assert_fails(v)


def test_lemma21_printed_delta_rejects_repeated_columns():
    """One column repeated (the delta computed for uniform columns): sigma(WX) has rank 1, s_min = 0 on every draw."""
    v, r = _rerun("lemma21_delta", columns="equal", draws=30)
    _assert_fails(v)
    assert np.all(r.violations)


def test_zero_output_rejects_overlapping_blocks():
    """q = d + d' - 1: A_bar and B_bar share a coordinate, F(0) = B_bar A_bar x != 0."""
    v, r = _rerun("zero_output", overlap=1)
    _assert_fails(v)
    assert r.max_abs_output > 1e-3


def test_label_condition_rejects_the_printed_power():
    """The closed form with q^3 (as printed) against the bisected threshold: off by the factor q."""
    v, r = _rerun("label", "implicit-reg/thm-6/step-label-condition", q_power=3.0)
    _assert_fails(v)
    ve, _ = _rerun("label", "implicit-reg/thm-6/step-label-condition/erratum", q_power=3.0)
    _assert_fails(ve)


def test_approach_rejects_a_predicted_rate_too_large():
    """The predicted rate of (10) multiplied by 1e12: the extrapolation to r = 1 falls below 1."""
    v, r = _rerun("thm6_approach", rate_factor=1e12, seeds=(0,), steps=5)
    _assert_fails(v)
    assert v.measured["extrapolated_at_1_low"] < 1.0


@pytest.mark.parametrize("activation", ["sin", "tanh"])
def test_proof_network_matches_the_package(activation):
    """states / costates of proof_b5 (the network (46) with the chain rule of B.5) against theory.pl.backward_states."""
    from theory.experiments.implicit_reg import proof_b5 as P5
    from theory.implicit import Params
    from theory.pl import backward_states

    rng = np.random.default_rng(3)
    n, d, d_out, q, m, L = 5, 3, 2, 6, 7, 4
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, d_out))
    A, B = rng.standard_normal((q, d)), rng.standard_normal((d_out, q))
    V, W = rng.standard_normal((L, q, m)), rng.standard_normal((L, m, q))
    sigma, dsigma = P5.activation(activation)
    h = P5.states(X, A, V, W, sigma)
    P = P5.costates(h, Y, B, V, W, dsigma)
    h_ref, P_ref = backward_states(X, Y, Params(A, V, W, B), activation)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(P, P_ref, rtol=1e-12, atol=1e-13)
