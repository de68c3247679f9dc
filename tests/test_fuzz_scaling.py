"""Bad-input fuzzing of every public function of theory.scaling, theory.scaling.phase and
theory.scaling.statistics (contract of tests/_fuzz.py)."""

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.scaling as scaling
import theory.scaling.phase as phase
import theory.scaling.statistics as statistics
from _fuzz import Spec, fuzz, public_callables, seed, sweep

#: result types: built by the package, not called with user input
EXCLUDED = {"PhaseDiagram", "FastNorms", "MCEstimate"}


def _net(draw, res1=None):
    rng = seed(draw)
    L, d = draw(st.integers(1, 5), label="L"), draw(st.integers(1, 3), label="d")
    arch = draw(st.sampled_from(["res1", "res2", "res3"]), label="arch") if res1 is None else "res1"
    act = "relu" if arch == "res3" else draw(st.sampled_from(["relu", "leaky_relu", "identity", "tanh"]))
    V = rng.standard_normal((L, d, d)) / np.sqrt(d)
    W = None if arch == "res1" else rng.standard_normal((L, d, d)) / np.sqrt(d)
    return {"h0": rng.standard_normal(d) + 0.1, "V": V, "W": W, "beta": draw(st.floats(0.05, 1.0)),
            "arch": arch, "activation": act, "slope": 0.5}


def _backward(draw):
    kw = _net(draw)
    hs = scaling.forward(**kw)
    h0 = kw.pop("h0")
    return {"hs": hs, **kw, "pL": np.ones_like(h0)}


def _log_gradient_ratio(draw):
    kw = _net(draw)
    return {**kw, "pL": np.ones_like(kw["h0"])}


def _shape(want):
    def check(out, kw):
        assert np.shape(out) == want(kw), f"shape {np.shape(out)}, expected {want(kw)}"
    return check


def _weights(draw):
    law = draw(st.sampled_from(list(scaling.LAWS)), label="law")
    return {"L": draw(st.integers(1, 6)), "d": draw(st.integers(1, 3)), "law": law,
            "hurst": draw(st.floats(0.05, 0.95)) if law == "fbm" else None, "rng": seed(draw),
            "lengthscale": draw(st.floats(0.05, 2.0)) if law == "smooth" else None}


def _increments(draw):
    return scaling.brownian_increments(draw(st.integers(1, 8)), draw(st.integers(1, 3)), rng=seed(draw))


STATES = lambda kw: (np.shape(kw["V"])[0] + 1, *np.shape(kw["h0"]))  # noqa: E731

SPECS = {
    "weights": Spec(scaling.weights, _weights, check=_shape(lambda kw: (kw["L"], kw["d"], kw["d"]))),
    "forward": Spec(scaling.forward, _net, check=_shape(STATES)),
    "forward_normalized": Spec(scaling.forward_normalized, _net),
    # log 0 = -inf is the exact value when h_L = h_0 (V = 0, or alpha_L underflowing to 0): documented
    "log_norm_ratio": Spec(scaling.log_norm_ratio, _net, nan_ok=("result",)),
    "jacobian": Spec(scaling.jacobian, _net),
    "backward": Spec(scaling.backward, _backward),
    "log_gradient_ratio": Spec(scaling.log_gradient_ratio, _log_gradient_ratio, nan_ok=("result",)),
    "norm_ratio": Spec(scaling.norm_ratio, lambda draw: {"hs": scaling.forward(**_net(draw))}),
    "gradient_ratio": Spec(scaling.gradient_ratio, lambda draw: {"ps": scaling.forward(**_net(draw))}),
    "brownian_increments": Spec(scaling.brownian_increments, lambda draw: {
        "n": draw(st.integers(1, 8)), "d": draw(st.integers(1, 3)), "rng": seed(draw)},
        check=_shape(lambda kw: (kw["n"], kw["d"], kw["d"]))),
    "coupled_weights": Spec(scaling.coupled_weights, lambda draw: {
        "increments": _increments(draw), "variance": draw(st.floats(0.1, 2.0)), "factor": draw(st.integers(1, 3))}),
    "sde_em": Spec(scaling.sde_em, lambda draw: (lambda inc: {
        "h0": np.ones(inc.shape[-1]), "increments": inc,
        "activation": draw(st.sampled_from(["relu", "tanh", "identity"])), "variance": 1.0, "slope": 0.5,
        "factor": draw(st.integers(1, 2))})(_increments(draw))),
    "neural_ode": Spec(scaling.neural_ode, lambda draw: (lambda kw: {
        "h0": kw["h0"], "V": kw["V"][0], "W": None, "t": draw(st.floats(0.0, 1.0)), "arch": "res1",
        "activation": kw["activation"], "slope": 0.5, "rtol": 1e-8, "atol": 1e-10})(_net(draw, res1=True)),
        examples=25),
    "critical_beta": Spec(phase.critical_beta, lambda draw: {
        "beta": np.array([0.25, 0.5, 0.75]), "values": np.array([1.0, draw(st.floats(-1, 1)), -1.0])},
        nan_ok=("result",)),
    "phase_diagram": Spec(phase.phase_diagram, lambda draw: {
        "hurst": np.array([0.5]), "beta": np.array([0.25, 1.0]), "L": draw(st.integers(2, 8)),
        "d": draw(st.integers(1, 3)), "n_seeds": 1, "n_inputs": 1, "rng": seed(draw),
        "gradients": draw(st.booleans())}, examples=20, nan_ok=("hidden", "gradient")),  # means of log ratios: -inf as above
    "branch": Spec(statistics.branch, lambda draw: (lambda kw: {
        "h": kw["h0"], "W": kw["W"], "arch": kw["arch"], "activation": kw["activation"], "slope": 0.5})(_net(draw))),
    "branch_jvp": Spec(statistics.branch_jvp, lambda draw: (lambda kw: {
        "h": kw["h0"], "q": np.ones_like(kw["h0"]), "W": kw["W"], "arch": kw["arch"],
        "activation": kw["activation"], "slope": 0.5})(_net(draw))),
    "clt_log_norm": Spec(statistics.clt_log_norm, lambda draw: {
        "L": draw(st.integers(1, 1000)), "d": draw(st.integers(1, 50)), "beta": draw(st.floats(0.1, 1.0)),
        "kappa": draw(st.floats(0.1, 1.0))}),
    "fast_norms": Spec(statistics.fast_norms, lambda draw: {
        "L": draw(st.integers(1, 50)), "d": draw(st.integers(2, 8)), "beta": draw(st.floats(0.1, 1.0)),
        "runs": draw(st.integers(1, 20)), "arch": "res3", "activation": "relu", "slope": 0.5, "rng": seed(draw)},
        nan_ok=("log_dist_ratio",)),  # log 0 = -inf when every ReLU of a step is off (h_L = h_0): exact
    "mc_mean": Spec(statistics.mc_mean, lambda draw: {"samples": seed(draw).standard_normal(draw(st.integers(2, 9)))}),
    "quantile_ci": Spec(statistics.quantile_ci, lambda draw: {
        "samples": seed(draw).standard_normal(draw(st.integers(20, 60))), "p": draw(st.floats(0.1, 0.9)),
        "level": 0.9}),
}


def test_every_public_function_is_fuzzed():
    names = set()
    for module in (scaling, phase, statistics):
        names |= public_callables(module)
    assert names - EXCLUDED == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])
