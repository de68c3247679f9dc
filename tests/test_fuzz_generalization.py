"""Bad-input fuzzing of every public function of theory.generalization (contract of tests/_fuzz.py)."""

import os

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.generalization as G
from _fuzz import Spec, fuzz, public_callables, seed, sweep

N_EX = int(os.environ.get("FUZZ_EXAMPLES", "40"))

#: public names that are not functions taking user input, and why
EXCLUDED = {"TrainingRecord": "the result type of train_resnet, built by the package"}


def _pos(draw, lo=0.1, hi=3.0):
    return draw(st.floats(lo, hi))


def _shape(want):
    def check(out, kw):
        assert np.shape(out) == want(kw), f"shape {np.shape(out)}, expected {want(kw)}"
    return check


def _fields(_d):
    def fields(h):  # the maps tanh(h_j) e_i of (4.8) as (4.5), for the width of the state it is given
        d = h.shape[1]
        F = np.zeros((d * d, h.shape[0], d))
        for i in range(d):
            for j in range(d):
                F[i * d + j, :, i] = np.tanh(h[:, j])
        return F
    return fields


def _batch(draw, d=None):
    rng = seed(draw)
    b = draw(st.integers(1, 4), label="b")
    d = d or draw(st.integers(1, 3), label="d")
    return rng, rng.standard_normal((b, d))


def _pode(draw):
    rng, x = _batch(draw)
    d = x.shape[1]
    S = draw(st.integers(1, 4), label="S")
    return {"x": x, "theta": rng.standard_normal((2 * S + 1, d * d)), "fields": _fields(d)}


def _node(draw):
    rng, x = _batch(draw)
    d = x.shape[1]
    return {"x": x, "W": rng.standard_normal((d, d)), "activation": draw(st.sampled_from(["tanh", "relu", "identity"])),
            "steps": draw(st.integers(1, 20))}


def _resnet(draw):
    rng, x = _batch(draw)
    d = x.shape[1]
    return {"x": x, "W": rng.standard_normal((draw(st.integers(1, 6)), d, d)),
            "activation": draw(st.sampled_from(["tanh", "relu", "identity"]))}


def _weights(draw, square=True):
    rng = seed(draw)
    L, d = draw(st.integers(1, 6), label="L"), draw(st.integers(1, 3), label="d")
    return rng.standard_normal((L, d, d))


def _problem(draw):
    rng = seed(draw)
    n, p, d, L, c = (draw(st.integers(1, 8)), draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 4)),
                     draw(st.integers(1, 3)))
    return {"X": rng.standard_normal((n, p)), "y": rng.integers(0, c, n), "A": rng.standard_normal((d, p)),
            "W": rng.standard_normal((L, d, d)), "B": rng.standard_normal((c, d)),
            "lam": draw(st.sampled_from([0.0, 0.1, 1.0]))}


def _train(draw):
    kw = _problem(draw)
    rng = seed(draw)
    m = draw(st.integers(1, 5))
    return {"Xtr": kw["X"], "ytr": kw["y"], "Xte": rng.standard_normal((m, kw["X"].shape[1])),
            "yte": rng.integers(0, kw["B"].shape[0], m), "A": kw["A"], "W0": kw["W"], "B": kw["B"],
            "epochs": draw(st.integers(1, 3)), "batch": draw(st.integers(1, 5)), "lr": _pos(draw, 0.001, 0.1),
            "lam": kw["lam"], "rng": np.random.default_rng(draw(st.integers(0, 9)))}


def _cover_member(draw):
    T = draw(st.integers(2, 12), label="T")
    t = np.linspace(0.0, 1.0, T)
    K = _pos(draw, 0.5, 3.0)
    values = 0.3 * np.sin(K * t + draw(st.floats(0, 6)))
    if draw(st.booleans()):
        values = np.column_stack([values, 0.5 * values]) / 2
    return {"t": t, "values": values, "R": 1.0, "K": K, "eps": _pos(draw, 0.05, 0.5)}


def _gap44(draw):
    m, R = draw(st.integers(1, 6)), _pos(draw, 0.5, 3.0)
    return {"n": draw(st.integers(9, 10**6)), "delta": draw(st.floats(0.01, 0.99)), "m": m,
            "K_theta": _pos(draw, 0.0, 2.0), "R_theta": R, "B": _pos(draw)}


def _gap45(draw):
    return {"n": draw(st.integers(100, 10**6)), "delta": draw(st.floats(0.01, 0.99)), "d": draw(st.integers(1, 6)),
            "R_W": _pos(draw, 0.5, 3.0), "B": _pos(draw)}


def _gap48(draw):
    kw = _gap45(draw)
    return {**kw, "K_W": _pos(draw, 0.0, 2.0)}


FLOAT = lambda out, kw: isinstance(out, float) or pytest.fail(f"{type(out)}")  # noqa: E731

SPECS = {
    "prop_4_2_output_bound": Spec(G.prop_4_2_output_bound, lambda draw: {
        "R_X": _pos(draw), "M": _pos(draw, 0.0), "K_f": _pos(draw), "R_theta": _pos(draw)}, check=FLOAT),
    "prop_4_2_lipschitz_printed": Spec(G.prop_4_2_lipschitz_printed, lambda draw: {
        "M": _pos(draw, 0.0), "K_f": _pos(draw), "R_theta": _pos(draw)}, check=FLOAT),
    "prop_4_2_lipschitz_proof": Spec(G.prop_4_2_lipschitz_proof, lambda draw: {
        "M": _pos(draw, 0.0), "K_f": _pos(draw), "R_theta": _pos(draw)}, check=FLOAT),
    "prop_4_3_log_covering": Spec(G.prop_4_3_log_covering, lambda draw: {
        "m": draw(st.integers(1, 10)), "R_theta": _pos(draw), "K_theta": _pos(draw, 0.0), "eps": _pos(draw, 0.01, 1.0)},
        check=FLOAT),
    "theorem_4_4_constant": Spec(G.theorem_4_4_constant, lambda draw: {
        "K_l": _pos(draw), "K_f": _pos(draw), "R_theta": _pos(draw), "R_X": _pos(draw), "R_Y": _pos(draw),
        "M": _pos(draw, 0.0)}, check=FLOAT),
    "theorem_4_4_gap": Spec(G.theorem_4_4_gap, _gap44, check=FLOAT),
    "corollary_4_5_constant": Spec(G.corollary_4_5_constant, lambda draw: {
        "K_l": _pos(draw), "K_sigma": _pos(draw), "R_W": _pos(draw), "R_X": _pos(draw), "R_Y": _pos(draw),
        "M": _pos(draw, 0.0)}, check=FLOAT),
    "corollary_4_5_gap": Spec(G.corollary_4_5_gap, _gap45, check=FLOAT),
    "prop_4_6_output_bound": Spec(G.prop_4_6_output_bound, lambda draw: {
        "R_X": _pos(draw), "K_sigma": _pos(draw), "R_W": _pos(draw)}, check=FLOAT),
    "prop_4_6_lipschitz": Spec(G.prop_4_6_lipschitz, lambda draw: {
        "R_X": _pos(draw), "K_sigma": _pos(draw), "R_W": _pos(draw)}, check=FLOAT),
    "prop_4_7_log_covering": Spec(G.prop_4_7_log_covering, lambda draw: {
        "d": draw(st.integers(1, 5)), "R_W": _pos(draw), "K_W": _pos(draw, 0.0), "eps": _pos(draw, 0.01, 1.0)},
        check=FLOAT),
    "theorem_4_8_constant": Spec(G.theorem_4_8_constant, lambda draw: {
        "K_l": _pos(draw), "K_sigma": _pos(draw), "R_W": _pos(draw), "R_X": _pos(draw), "R_Y": _pos(draw)},
        check=FLOAT),
    "theorem_4_8_gap": Spec(G.theorem_4_8_gap, _gap48, check=FLOAT),
    "corollary_4_9_complexity_bound": Spec(G.corollary_4_9_complexity_bound, lambda draw: {
        "R": _pos(draw), "L": draw(st.integers(3, 1000))}, check=FLOAT),
    "cover_log_size": Spec(G.cover_log_size, lambda draw: {
        "m": draw(st.integers(1, 5)), "R": _pos(draw, 0.5), "K": _pos(draw, 0.0), "eps": _pos(draw, 0.01, 1.0)},
        check=FLOAT),
    "cover_member": Spec(G.cover_member, _cover_member, check=_shape(lambda kw: np.shape(kw["values"]))),
    "resnet_to_path": Spec(G.resnet_to_path, lambda draw: {
        "W": _weights(draw), "points_per_layer": draw(st.integers(1, 4))},
        check=lambda out, kw: out[1].shape == (np.shape(kw["W"])[0] * kw["points_per_layer"] + 1,
                                               np.shape(kw["W"])[1] ** 2) or pytest.fail(f"{out[1].shape}")),
    "parameterized_ode": Spec(G.parameterized_ode, _pode, fixed=("fields",),
                              check=_shape(lambda kw: np.shape(kw["x"]))),
    "neural_ode": Spec(G.neural_ode, _node, check=_shape(lambda kw: np.shape(kw["x"]))),
    "resnet_forward": Spec(G.resnet_forward, _resnet, check=_shape(lambda kw: np.shape(kw["x"]))),
    "norm_1_inf": Spec(G.norm_1_inf, lambda draw: {"theta": seed(draw).standard_normal(
        (draw(st.integers(1, 6)), draw(st.integers(1, 4))))}, check=FLOAT),
    "norm_11inf": Spec(G.norm_11inf, lambda draw: {"W": _weights(draw)}, check=FLOAT),
    "weight_lipschitz": Spec(G.weight_lipschitz, lambda draw: {"W": _weights(draw)}, check=FLOAT),
    "spectral_complexity": Spec(G.spectral_complexity, lambda draw: {"W": _weights(draw)}, check=FLOAT),
    "smooth_weights": Spec(G.smooth_weights, lambda draw: {
        "L": draw(st.integers(1, 8)), "d": draw(st.integers(1, 3)), "bandwidth": _pos(draw, 0.05, 1.0),
        "rng": seed(draw)}, check=_shape(lambda kw: (kw["L"], kw["d"], kw["d"]))),
    "iid_weights": Spec(G.iid_weights, lambda draw: {
        "L": draw(st.integers(1, 8)), "d": draw(st.integers(1, 3)), "rng": seed(draw)},
        check=_shape(lambda kw: (kw["L"], kw["d"], kw["d"]))),
    "loss_and_gradient": Spec(G.loss_and_gradient, _problem,
                              check=lambda out, kw: out[1].shape == np.shape(kw["W"]) or pytest.fail(f"{out[1].shape}")),
    "difference_penalty": Spec(G.difference_penalty, lambda draw: {"W": _weights(draw)},
                               check=lambda out, kw: out[1].shape == np.shape(kw["W"]) or pytest.fail(f"{out[1].shape}")),
    "train_resnet": Spec(G.train_resnet, _train, examples=25,
                         check=lambda out, kw: out.train_loss.shape == (kw["epochs"],) or pytest.fail(
                             f"{out.train_loss.shape}")),
}


def test_every_public_function_is_fuzzed():
    assert public_callables(G) - set(EXCLUDED) == set(SPECS)
    assert set(G.__all__) == set(SPECS) | set(EXCLUDED)


for _spec in SPECS.values():  # FUZZ_EXAMPLES per function; the slow ones keep their smaller count
    _spec.examples = N_EX if _spec.examples == 40 else min(_spec.examples, N_EX)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])
