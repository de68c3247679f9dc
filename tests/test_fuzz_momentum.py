"""Bad-input fuzzing of every public function of theory.momentum (contract of tests/_fuzz.py)."""

import os

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.momentum as momentum
from _fuzz import Spec, fuzz, public_callables, seed, sweep
from theory.resnet import RESIDUALS, Residual, mlp

N_EX = int(os.environ.get("FUZZ_EXAMPLES", "40"))

#: public names that are not functions taking user input (none: every public name is a function)
EXCLUDED = {}

FAMILIES = ["linear", "tanh", "tanh_out", "mlp"]


def _residual(draw):
    name = draw(st.sampled_from(FAMILIES), label="residual")
    return mlp(draw(st.integers(1, 3), label="width")) if name == "mlp" else name


def _theta(rng, N, d, residual, scale=0.5):
    res = residual if isinstance(residual, Residual) else RESIDUALS[residual]
    return scale * rng.standard_normal((N, *res.param_shape(d)))


def _net(draw, x_name="x0", v_name="v0", inverse=False):
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    batch = draw(st.booleans(), label="batch")
    residual = _residual(draw)
    tied = draw(st.booleans(), label="tied")
    N = draw(st.integers(1, 4), label="N")
    x = rng.standard_normal((draw(st.integers(1, 3)), d) if batch else d)
    v = draw(st.sampled_from(["array", "none", "f"]), label="v") if not inverse else "array"
    kw = {x_name: x, v_name: rng.standard_normal(x.shape) if v == "array" else (None if v == "none" else "f"),
          "theta": _theta(rng, 1 if tied else N, d, residual), "residual": residual,
          "gamma": draw(st.floats(0.3 if inverse else 0.0, 1.0), label="gamma")}
    if tied:
        kw["depth"] = N
    return kw


def _traj(x_name):
    def check(out, kw):
        xs, vs = out
        N = kw["depth"] if kw.get("depth") is not None else np.shape(kw["theta"])[0]
        assert xs.shape == vs.shape == (N + 1, *np.shape(kw[x_name])), (xs.shape, vs.shape)
        assert xs.dtype == vs.dtype == np.float64
    return check


def _gradient(draw):
    kw = _net(draw)
    kw.pop("depth", None)
    if isinstance(kw["v0"], str):
        kw["v0"] = None
    kw["y"] = seed(draw).standard_normal(np.shape(kw["x0"]))
    kw["method"] = draw(st.sampled_from(["backprop", "memory_free"]), label="method")
    if kw["method"] == "memory_free":
        kw["gamma"] = max(kw["gamma"], 0.5)
    return kw


def _check_gradient(out, kw):
    loss, gt, gx, gv = out
    assert isinstance(loss, float) and loss >= 0.0
    assert gt.shape == np.shape(kw["theta"]) and gx.shape == gv.shape == np.shape(kw["x0"])


def _residual_f(draw):
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    residual = _residual(draw)
    x = rng.standard_normal((draw(st.integers(1, 3)), d) if draw(st.booleans(), label="batch") else d)
    return {"x": x, "theta_n": _theta(rng, 1, d, residual)[0], "residual": residual}


def _square(draw, name="theta", eps_low=0.0):
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    return {name: 0.5 * rng.standard_normal((d, d)), "eps": draw(st.floats(eps_low, 3.0), label="eps")}


def _representable(draw):
    """D = P diag(lam) P^-1 with eigenvalues above lambda_eps (and above 0): representable at every eps."""
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    P = np.eye(d) + 0.3 * rng.standard_normal((d, d))
    D = P @ np.diag(rng.uniform(0.2, 3.0, d)) @ np.linalg.inv(P)
    return {"D": D, "eps": draw(st.sampled_from([0.0, 0.1, 1.0, 4.0]), label="eps")}


def _exact(draw):
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    residual = draw(st.sampled_from(["linear", "tanh", "tanh_out"]), label="residual")
    x0 = rng.standard_normal((draw(st.integers(1, 2)), d) if draw(st.booleans(), label="batch") else d)
    num = draw(st.integers(1, 5), label="num")
    return {"x0": x0, "v0": rng.standard_normal(x0.shape) if draw(st.booleans(), label="v0") else None,
            "theta": _theta(rng, draw(st.integers(1, 4), label="N"), d, residual), "residual": residual,
            "num": num, "den": num + draw(st.integers(0, 5), label="den - num"),
            "frac_bits": draw(st.integers(1, 64), label="frac_bits")}


def _check_exact(out, kw):
    shape = np.atleast_2d(np.asarray(kw.get("x0", kw.get("xN")))).shape
    for arr in out:
        assert arr.shape == shape and arr.dtype == object
        assert all(isinstance(t, int) for t in arr.flat)


def _inverse_exact(draw):
    kw = _exact(draw)
    # integers below 2**20 or so: the harness multiplies every array argument by up to 1e300 as floats
    kw["frac_bits"] = min(kw["frac_bits"], 16)
    x, v, buf = momentum.forward_exact(**kw)
    kw.pop("x0")
    kw.pop("v0")
    return {"xN": x, "vN": v, "buffer": buf, **kw}


SPECS = {
    "forward": Spec(momentum.forward, _net, check=_traj("x0"), examples=N_EX),
    "inverse": Spec(momentum.inverse, lambda draw: _net(draw, "xN", "vN", inverse=True), check=_traj("xN"),
                    examples=N_EX),
    "gradient": Spec(momentum.gradient, _gradient, check=_check_gradient, examples=N_EX),
    "residual_f": Spec(momentum.residual_f, _residual_f, examples=N_EX,
                       check=lambda out, kw: out.shape == np.shape(kw["x"]) or pytest.fail(f"shape {out.shape}")),
    "psi": Spec(momentum.psi, _square, examples=N_EX,
                check=lambda out, kw: out.shape == np.shape(kw["theta"]) or pytest.fail(f"shape {out.shape}")),
    "psi_series": Spec(momentum.psi_series,
                       lambda draw: {**_square(draw, eps_low=0.2), "terms": draw(st.integers(1, 60), label="terms")},
                       examples=N_EX,
                       check=lambda out, kw: out.shape == np.shape(kw["theta"]) or pytest.fail(f"shape {out.shape}")),
    "lambda_eps": Spec(momentum.lambda_eps, lambda draw: {"eps": draw(st.floats(0.01, 100.0), label="eps")},
                       examples=N_EX,
                       check=lambda out, kw: (len(out) == 2 and -1.0 <= out[0] <= 0.0
                                              and np.pi <= out[1] <= 1.5 * np.pi) or pytest.fail(repr(out))),
    "representable": Spec(momentum.representable, _representable, examples=N_EX,
                          check=lambda out, kw: isinstance(out, bool) or pytest.fail(repr(out))),
    "preimage": Spec(momentum.preimage, _representable, examples=N_EX,
                     check=lambda out, kw: out.shape == np.shape(kw["D"]) or pytest.fail(f"shape {out.shape}")),
    "to_fixed": Spec(momentum.to_fixed, lambda draw: {
        "x": seed(draw).standard_normal(draw(st.integers(0, 4), label="n")),
        "frac_bits": draw(st.integers(1, 64), label="frac_bits")}, examples=N_EX,
        check=lambda out, kw: (out.shape == np.shape(kw["x"]) and out.dtype == object) or pytest.fail(repr(out))),
    "from_fixed": Spec(momentum.from_fixed, lambda draw: {
        "z": seed(draw).integers(-(2**20), 2**20, draw(st.integers(0, 4), label="n")),
        "frac_bits": draw(st.integers(1, 64), label="frac_bits")}, examples=N_EX,
        check=lambda out, kw: (out.shape == np.shape(kw["z"]) and out.dtype == np.float64) or pytest.fail(repr(out))),
    "forward_exact": Spec(momentum.forward_exact, _exact, check=_check_exact, examples=N_EX),
    "inverse_exact": Spec(momentum.inverse_exact, _inverse_exact, check=_check_exact, examples=N_EX),
}


def test_every_public_function_is_fuzzed():
    assert public_callables(momentum) == set(SPECS)
    assert set(momentum.__all__) == set(SPECS) | set(EXCLUDED)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])
