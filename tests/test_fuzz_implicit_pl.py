"""Fuzz test of the error contract of theory.implicit and theory.pl: every public function, fed extreme values
(1e-300, 1e300, n = 1, huge sizes, wrong types), either returns finite output or raises our ValueError /
TypeError naming an argument; inputs are never mutated."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import theory.implicit as I
import theory.pl as P

# names of __all__ that are data or types rather than functions (covered through the functions that return them)
NOT_FUNCTIONS = {"ACTIVATIONS", "INIT_KINDS", "METHODS", "Params", "TrainStats", "RMAX", "BallPL", "CertifiedPL", "IntegratedPL",
                 "Prop5Constants", "TrajectoryPL"}

SCALES = [1e-300, 1e-150, 1e-8, 1.0, 1e8, 1e150, 1e300]


def _params(rng, n_scale, L, m, q=4, d=3, d_out=1):
    p = I.initialize(d, m, L, rng, q=q, d_out=d_out)
    return I.Params(p.A, p.V + n_scale * rng.standard_normal(p.V.shape), p.W, p.B)


@st.composite
def _case(draw):
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    n = draw(st.sampled_from([1, 2, 5]))
    L = draw(st.sampled_from([1, 2, 5]))
    m = draw(st.sampled_from([1, 3, 8]))
    sx, sy, sv = (draw(st.sampled_from(SCALES)) for _ in range(3))
    X = sx * rng.standard_normal((n, 3))
    Y = sy * rng.standard_normal((n, 1))
    p = _params(rng, sv if sv < 1e10 else 0.0, L, m)
    big = draw(st.sampled_from([1, 10**12, 10**400]))
    junk = draw(st.sampled_from([None, "x", 1.5, -3, True, [1, 2], object()]))
    act = draw(st.sampled_from(["sin", "tanh", "gelu", "relu", "identity", "swish"]))
    return {"X": X, "Y": Y, "p": p, "big": big, "junk": junk, "act": act, "scale": sx, "seed": seed}


def _calls(c):
    X, Y, p, big, junk, act, s = c["X"], c["Y"], c["p"], c["big"], c["junk"], c["act"], c["scale"]
    rng = np.random.default_rng(c["seed"])
    t = np.cumsum(np.abs(rng.standard_normal(4)) + 1e-3) * s
    return {
        "forward": [lambda: I.forward(X, p, act), lambda: I.forward(junk, p, act)],
        "loss_and_gradient": [lambda: I.loss_and_gradient(X, Y, p, act), lambda: I.loss_and_gradient(X, junk, p)],
        "initialize": [lambda: I.initialize(3, big, 2, None), lambda: I.initialize(3, 2, big, 0),
                       lambda: I.initialize(junk, 2, 2, 0), lambda: I.initialize(3, 2, 2, junk)],
        "synthetic_data": [lambda: I.synthetic_data(big, 2, 1), lambda: I.synthetic_data(1, 1, junk)],
        "train": [lambda: I.train(X, Y, p, act, lr=s, steps=2),
                  lambda: I.train(X, Y, p, act, lr=s, steps=2, method="clipped", clip=s, return_stats=True),
                  lambda: I.train(X, Y, p, lr=0.1, steps=big),
                  lambda: I.train(X, Y, p, lr=junk, steps=1)],
        "backward_states": [lambda: P.backward_states(X, Y, p, act)],
        "certified_ratio": [lambda: P.certified_ratio(X, Y, p, act)],
        "init_ratio": [lambda: P.init_ratio(X, Y, I.Params(p.A, 0 * p.V, p.W, p.B), act)],
        "prop5_constants": [lambda: P.prop5_constants(act), lambda: P.prop5_constants("sin").mu(big, big),
                            lambda: P.prop5_constants("sin").delta(big, 1, 1, 1, s),
                            lambda: P.prop5_constants("sin").assumptions(big, 1, 1, 1, 1, 1),
                            lambda: P.prop5_constants(junk)],
        "hermite_coefficient": [lambda: P.hermite_coefficient(act, 3), lambda: P.hermite_coefficient("sin", big)],
        "hermite_coefficients": [lambda: P.hermite_coefficients(act, 5), lambda: P.hermite_coefficients("sin", junk)],
        "pl_ratio": [lambda: P.pl_ratio(s, [1.0 / s]), lambda: P.pl_ratio(junk, [1.0])],
        "trajectory_pl": [lambda: P.trajectory_pl([s, 1.0], [1.0 / s, 1.0]), lambda: P.trajectory_pl(junk, [1.0])],
        "integrated_pl": [lambda: P.integrated_pl(t, np.exp(-t) * s + s, np.full(4, s)),
                          lambda: P.integrated_pl(junk, [1.0, 1.0, 1.0])],
        "ball_pl": [lambda: P.ball_pl(lambda w: s + float(w @ w), lambda w: 2 * w, [1.0, s], s, n_random=2,
                                      n_adversarial=1, n_steps=2, rng=0),
                    lambda: P.ball_pl(junk, lambda w: w, [1.0], 1.0)],
    }


def _finite(out):
    if isinstance(out, tuple):
        return all(_finite(o) for o in out)
    if isinstance(out, (float, np.floating)):
        return bool(np.isfinite(out))
    if isinstance(out, np.ndarray):
        return out.dtype.kind not in "fc" or bool(np.isfinite(out).all())
    if dataclasses.is_dataclass(out):
        # Prop5Constants.m_sigma = sup|sigma| is documented as inf for the unbounded GELU and ReLU
        return all(_finite(getattr(out, f.name)) for f in dataclasses.fields(out) if f.name != "m_sigma"
                   if isinstance(getattr(out, f.name), (float, np.floating, np.ndarray, tuple)))
    return True


def test_every_public_function_is_fuzzed():
    names = {n for mod in (I, P) for n in mod.__all__} - NOT_FUNCTIONS
    assert names == set(_calls({"X": None, "Y": None, "p": None, "big": 1, "junk": None, "act": "sin",
                                "scale": 1.0, "seed": 0}))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_error_contract(c):
    snapshot = [a.copy() for a in (c["X"], c["Y"], c["p"].A, c["p"].V, c["p"].W, c["p"].B)]
    for name, calls in _calls(c).items():
        for call in calls:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    out = call()
                except (ValueError, TypeError) as exc:
                    assert re.search(r"`[A-Za-z_][\w.\[\]']*`|theory\.", str(exc)), (name, str(exc))
                    continue
            assert _finite(out), (name, out)
    for a, b in zip(snapshot, (c["X"], c["Y"], c["p"].A, c["p"].V, c["p"].W, c["p"].B)):
        assert np.array_equal(a, b)


def test_train_refuses_absurd_step_counts_with_a_cost_estimate():
    X, Y = I.synthetic_data(4, 3, 0)
    p = I.initialize(3, 4, 2, 0)
    with pytest.raises(ValueError, match=r"`steps` of theory\.implicit\.train = 1000000000000 would cost about"):
        I.train(X, Y, p, lr=0.1, steps=10**12)


def test_rng_conventions():
    a = I.initialize(2, 3, 4, 7)
    b = I.initialize(2, 3, 4, np.random.default_rng(7))
    assert np.array_equal(a.W, b.W)
    assert I.initialize(2, 3, 4, None).W.shape == (4, 3, 2)
    with pytest.raises(TypeError, match="`rng`"):
        I.synthetic_data(2, 2, 1.5)


def test_prop5_constants_huge_sizes_raise_value_error():
    with pytest.raises(ValueError, match="`n`"):
        P.prop5_constants("sin").mu(10**400, 10)
