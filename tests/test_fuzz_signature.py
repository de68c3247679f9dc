"""Bad-input fuzzing of every public function of theory.signature (contract of tests/_fuzz.py)."""

import os

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.signature as S
from _fuzz import Spec, fuzz, public_callables, seed, sweep
from test_signature_batch import BATCH_SPEC

N_EX = int(os.environ.get("FUZZ_EXAMPLES", "40"))

#: public names that are not functions taking user input, and why
EXCLUDED = {"ACTIVATIONS": "a constant: the tuple of activation names the RNN functions accept"}


def _path(rng, draw, d=None, name="n_points"):
    n = draw(st.integers(2, 6), label=name)
    d = draw(st.integers(1, 3), label="d") if d is None else d
    return np.cumsum(0.3 * rng.standard_normal((n, d)), axis=0)


def _levels(out, d, depth):
    assert isinstance(out, list) and len(out) == depth + 1, len(out)
    for k, lv in enumerate(out):
        assert lv.shape == (d,) * k and lv.dtype == np.float64, (k, lv.shape, lv.dtype)


def _signature(draw):
    rng = seed(draw)
    return {"path": _path(rng, draw), "depth": draw(st.integers(0, 4), label="depth"),
            "normalization": draw(st.sampled_from(["factorial", "standard"]), label="normalization")}


def _sig(draw, name="sig", d=None, depth=None):
    rng = seed(draw)
    path = _path(rng, draw, d)
    depth = draw(st.integers(0, 3), label="depth") if depth is None else depth
    return S.signature(path, depth), path.shape[1], depth


def _two_sigs(draw):
    a, d, depth = _sig(draw)
    b, _, _ = _sig(draw, d=d, depth=depth)
    return {"sig_a": a, "sig_b": b}


def _check_sig_like(key):
    def check(out, kw):
        ref = kw[key]
        assert isinstance(out, list) and len(out) == len(ref)
        for a, b in zip(out, ref):
            assert a.shape == np.shape(b) and a.dtype == np.float64
    return check


def _float(out, kw):
    assert isinstance(out, float), type(out)


def _rnn_params(rng, e, d, s=0.5):
    return {"U": rng.uniform(-s, s, (e, e)), "V": rng.uniform(-s, s, (e, d)), "b": rng.uniform(-s, s, e)}


def _rnn(draw):
    rng = seed(draw)
    e, d = draw(st.integers(1, 3), label="e"), draw(st.integers(1, 3), label="d")
    kw = {"xs": rng.standard_normal((draw(st.integers(1, 5), label="T"), d)), **_rnn_params(rng, e, d),
          "activation": draw(st.sampled_from(S.ACTIVATIONS), label="activation")}
    if draw(st.booleans(), label="h0"):
        kw["h0"] = rng.standard_normal(e)
    return kw


def _ode(draw):
    rng = seed(draw)
    e, d = draw(st.integers(1, 3), label="e"), draw(st.integers(1, 3), label="d")
    kw = {"path": _path(rng, draw, d), **_rnn_params(rng, e, d),
          "activation": draw(st.sampled_from(S.ACTIVATIONS), label="activation"),
          "substeps": draw(st.integers(1, 4), label="substeps")}
    if draw(st.booleans(), label="h0"):
        kw["h0"] = rng.standard_normal(e)
    return kw


def _cde(draw):
    rng = seed(draw)
    e, d = draw(st.integers(1, 3), label="e"), draw(st.integers(1, 3), label="d")
    L = draw(st.floats(0.1, 0.9), label="L")
    kw = {"path_bar": S.time_augment(_path(rng, draw, d), L, check=False), **_rnn_params(rng, e, d), "L": L,
          "activation": draw(st.sampled_from(S.ACTIVATIONS), label="activation"),
          "substeps": draw(st.integers(1, 4), label="substeps")}
    if draw(st.booleans(), label="hbar0"):
        kw["hbar0"] = rng.standard_normal(e + d)
    return kw


def _star(draw, with_h=True):
    rng = seed(draw)
    e, d = draw(st.integers(1, 2), label="e"), draw(st.integers(1, 2), label="d")
    kw = {**_rnn_params(rng, e, d), "L": draw(st.floats(0.1, 0.9), label="L"),
          "depth": draw(st.integers(1, 3), label="depth"),
          "activation": draw(st.sampled_from(S.ACTIVATIONS), label="activation")}
    if with_h and draw(st.booleans(), label="hbar0"):
        kw["hbar0"] = 0.3 * rng.standard_normal(e + d)
    return kw


def _check_star(out, kw):
    e, d = np.shape(kw["V"])
    assert len(out) == kw["depth"]
    for k, P in enumerate(out, start=1):
        assert P.shape == (d + 1,) * k + (e + d,) and P.dtype == np.float64, (k, P.shape)


def _taylor(draw):
    kw = _star(draw)
    e, d = np.shape(kw["V"])
    products = S.star_products(**kw)
    rng = seed(draw)
    path = S.time_augment(_path(rng, draw, d), 0.5, check=False)
    out = {"sig": S.signature(path, kw["depth"]), "products": products}
    if "hbar0" in kw:
        out["hbar0"] = kw["hbar0"]
    return out


def _rkhs(draw):
    kw = _star(draw)
    e = np.shape(kw["V"])[0]
    rng = seed(draw)
    psi = rng.standard_normal(e) if draw(st.booleans(), label="vector psi") else rng.standard_normal((2, e))
    out = {"psi": psi, "products": S.star_products(**kw)}
    if "hbar0" in kw:
        out["hbar0"] = kw["hbar0"]
    return out


def _time_augment(draw):
    rng = seed(draw)
    path = _path(rng, draw)
    check = draw(st.booleans(), label="check")
    L = draw(st.floats(0.1, 0.9), label="L")
    if check:
        path = path - path[0]
        tv = float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())
        path = path * (0.5 * L / tv) if tv > 0 else path
    kw = {"path": path, "L": L, "check": check}
    if draw(st.booleans(), label="times"):
        kw["times"] = np.linspace(0.0, 1.0, path.shape[0])
    return kw


SPECS = {
    "signature": Spec(S.signature, _signature, examples=N_EX,
                      check=lambda out, kw: _levels(out, np.shape(kw["path"])[1], kw["depth"])),
    "signature_batch": BATCH_SPEC,
    "to_standard": Spec(S.to_standard, lambda draw: {"sig": _sig(draw)[0]}, check=_check_sig_like("sig"),
                        examples=N_EX),
    "to_factorial": Spec(S.to_factorial, lambda draw: {"sig": _sig(draw)[0]}, check=_check_sig_like("sig"),
                         examples=N_EX),
    "chen": Spec(S.chen, lambda draw: {**_two_sigs(draw),
                                       "normalization": draw(st.sampled_from(["factorial", "standard"]))},
                 check=_check_sig_like("sig_a"), examples=N_EX),
    "signature_inner": Spec(S.signature_inner, _two_sigs, check=_float, examples=N_EX),
    "signature_norm": Spec(S.signature_norm, lambda draw: {"sig": _sig(draw)[0]}, check=_float, examples=N_EX),
    "kernel": Spec(S.kernel, lambda draw: (lambda rng, d: {
        "path_x": _path(rng, draw, d), "path_y": _path(rng, draw, d),
        "depth": draw(st.integers(0, 4), label="depth")})(seed(draw), draw(st.integers(1, 3), label="d")),
        check=_float, examples=N_EX),
    "linear_kernel": Spec(S.linear_kernel, lambda draw: (lambda rng, d: {
        "a": 0.4 * rng.uniform(-1, 1, d) / np.sqrt(d), "b": 0.4 * rng.uniform(-1, 1, d) / np.sqrt(d)})(
        seed(draw), draw(st.integers(1, 3), label="d")), check=_float, examples=N_EX),
    "total_variation": Spec(S.total_variation, lambda draw: {"path": _path(seed(draw), draw)}, check=_float,
                            examples=N_EX),
    "time_augment": Spec(S.time_augment, _time_augment, examples=N_EX,
                         check=lambda out, kw: out.shape == (np.shape(kw["path"])[0], np.shape(kw["path"])[1] + 1)
                         or pytest.fail(f"shape {out.shape}")),
    "rnn": Spec(S.rnn, _rnn, examples=N_EX,
                check=lambda out, kw: out.shape == (np.shape(kw["xs"])[0] + 1, np.shape(kw["U"])[0])
                or pytest.fail(f"shape {out.shape}")),
    "ode_solution": Spec(S.ode_solution, _ode, examples=N_EX,
                         check=lambda out, kw: out.shape == (np.shape(kw["path"])[0], np.shape(kw["U"])[0])
                         or pytest.fail(f"shape {out.shape}")),
    "cde_solution": Spec(S.cde_solution, _cde, examples=N_EX,
                         check=lambda out, kw: out.shape == (np.shape(kw["path_bar"])[0], np.shape(kw["U"])[0]
                                                             + np.shape(kw["V"])[1])
                         or pytest.fail(f"shape {out.shape}")),
    "star_products": Spec(S.star_products, _star, check=_check_star, examples=N_EX),
    "taylor_expansion": Spec(S.taylor_expansion, _taylor, examples=N_EX,
                             check=lambda out, kw: out.shape == (np.shape(kw["products"][0])[-1],)
                             or pytest.fail(f"shape {out.shape}")),
    "rkhs_coefficients": Spec(S.rkhs_coefficients, _rkhs, examples=N_EX),
    "rkhs_norm": Spec(S.rkhs_norm, lambda draw: {"alpha": S.rkhs_coefficients(**_rkhs(draw))}, check=_float,
                      examples=N_EX),
    "activation_derivatives": Spec(S.activation_derivatives, lambda draw: {
        "activation": draw(st.sampled_from(S.ACTIVATIONS), label="activation"),
        "n": draw(st.integers(0, 8), label="n")}, examples=N_EX,
        check=lambda out, kw: len(out) == kw["n"] + 1 or pytest.fail(f"{len(out)} polynomials")),
    "derivative_sup": Spec(S.derivative_sup, lambda draw: {
        "activation": draw(st.sampled_from(["tanh", "logistic"]), label="activation"),
        "n": draw(st.integers(0, 8), label="n")}, check=_float, examples=N_EX),
    "derivative_bound": Spec(S.derivative_bound, lambda draw: {
        "activation": draw(st.sampled_from(["tanh", "logistic"]), label="activation"),
        "n": draw(st.integers(0, 20), label="n")}, check=_float, examples=N_EX),
    "lambda_bound": Spec(S.lambda_bound, lambda draw: {
        "N": draw(st.integers(1, 8), label="N"), "a": draw(st.floats(0.1, 3.0), label="a"),
        "W_frobenius": draw(st.floats(0.0, 3.0), label="W_frobenius"), "L": draw(st.floats(0.1, 0.9), label="L"),
        "corrected": draw(st.booleans(), label="corrected")}, check=_float, examples=N_EX),
}


def test_every_public_function_is_fuzzed():
    assert public_callables(S) == set(SPECS)
    assert set(S.__all__) == set(SPECS) | set(EXCLUDED)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])
