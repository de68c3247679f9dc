"""Bad-input fuzzing of every public function of theory.linear (contract of tests/_fuzz.py)."""

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.linear as linear
from _fuzz import Spec, fuzz, public_callables, seed, sweep

#: result types: built by the package, not called with user input
EXCLUDED = {"Assumption1", "FlowInfo"}


def _problem(draw, name="theta"):
    rng = seed(draw)
    N, d = draw(st.integers(1, 4), label="N"), draw(st.integers(1, 3), label="d")
    A = rng.standard_normal((d, d))
    return {name: 0.1 * rng.standard_normal((N, d, d)), "Sigma": A @ A.T + np.eye(d),
            "B": np.eye(d) + 0.1 * rng.standard_normal((d, d))}


def _shape(want):
    def check(out, kw):
        got = out.shape
        expected = want(kw)
        assert got == expected, f"shape {got}, expected {expected}"
    return check


def _flow(draw):
    kw = _problem(draw, "theta0")
    kw["t"] = np.array([0.0, draw(st.floats(0.0, 2.0), label="t")])
    return kw


def _diagnostics(draw):
    kw = _problem(draw, "theta_t")
    kw["theta_t"] = np.stack([kw["theta_t"], 0.5 * kw["theta_t"]])
    kw["t"] = np.array([0.0, 1.0])
    return kw


SPECS = {
    "assumption1": Spec(linear.assumption1, lambda draw: _problem(draw, "theta0")),
    "prop2_constants": Spec(linear.prop2_constants, lambda draw: _problem(draw, "theta0")),
    "loss": Spec(linear.loss, _problem),
    "gradient": Spec(linear.gradient, lambda draw: {**_problem(draw), "return_loss": draw(st.booleans())}),
    "product": Spec(linear.product, lambda draw: {"theta": _problem(draw)["theta"]},
                    check=_shape(lambda kw: np.shape(kw["theta"])[1:])),
    "partial_products": Spec(linear.partial_products, lambda draw: {"theta": _problem(draw)["theta"]}),
    "data_moments": Spec(linear.data_moments, lambda draw: (lambda r, n, d: {
        "X": r.standard_normal((n, d)), "Y": r.standard_normal((n, d))})(
        seed(draw), draw(st.integers(3, 6)), draw(st.integers(1, 3)))),
    "depth_embedding": Spec(linear.depth_embedding, lambda draw: {
        "theta_t": _problem(draw)["theta"], "s": np.array([0.0, draw(st.floats(0.0, 1.0)), 1.0])}),
    "flow_diagnostics": Spec(linear.flow_diagnostics, _diagnostics, nan_ok=("pl",)),
    "gradient_flow": Spec(linear.gradient_flow, lambda draw: {**_flow(draw), "rtol": 1e-6, "atol": 1e-9,
                                                                 "full_output": draw(st.booleans())},
                          nan_ok=("pl",), examples=30),
    "initial_weights": Spec(linear.initial_weights, lambda draw: {
        "N": draw(st.integers(1, 5)), "d": draw(st.integers(1, 3)),
        "kind": draw(st.sampled_from(["zero", "constant", "cosine", "iid"])),
        "rng": seed(draw), "scale": draw(st.floats(0.0, 1.0))},
        check=_shape(lambda kw: (kw["N"], kw["d"], kw["d"]))),
}


def test_every_public_function_is_fuzzed():
    assert public_callables(linear) - EXCLUDED == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])
