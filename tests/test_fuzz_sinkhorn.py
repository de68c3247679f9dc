"""Bad-input fuzzing of every public function of theory.sinkhorn (contract of tests/_fuzz.py)."""

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.sinkhorn as sk
from _fuzz import Spec, fuzz, public_callables, seed, sweep

N_EX = int(os.environ.get("FUZZ_EXAMPLES", "40"))


def _logits(draw):
    n = draw(st.integers(1, 6), label="n")
    scale = draw(st.sampled_from([0.1, 1.0, 3.0]), label="scale")
    return scale * seed(draw).standard_normal((n, n))


def _tokens(draw, values=True):
    rng = seed(draw)
    n, d, m = (draw(st.integers(1, 5), label="n"), draw(st.integers(1, 3), label="d"),
               draw(st.integers(1, 3), label="m"))
    kw = {"X": 0.7 * rng.standard_normal((n, d)), "WQ": 0.6 * rng.standard_normal((m, d)),
          "WK": 0.6 * rng.standard_normal((m, d))}
    if values:
        kw["WV"] = rng.standard_normal((d, d))
    return kw


def _n_iter(draw):
    return draw(st.sampled_from([None, 1, 2, 7]), label="n_iter")


def _check_square(out, kw):
    K = out[0] if isinstance(out, tuple) else out
    n = np.shape(kw["C"])[0]
    assert K.shape == (n, n) and K.dtype == np.float64, (K.shape, K.dtype)
    assert np.all(K >= 0)
    # an odd count (and the limit) is row-stochastic, an even count column-stochastic
    n_iter = kw.get("n_iter")
    axis = 0 if isinstance(n_iter, (int, np.integer)) and not isinstance(n_iter, bool) and n_iter % 2 == 0 else 1
    assert np.max(np.abs(K.sum(axis=axis) - 1.0)) < 1e-9


def _check_field(out, kw):
    assert out.shape == np.shape(kw["X"]) and out.dtype == np.float64, (out.shape, out.dtype)


def _check_logits(out, kw):
    n = np.shape(kw["X"])[0]
    assert out.shape == (n, n) and out.dtype == np.float64


def _check_energy(out, kw):
    assert isinstance(out, float)


def _l2(draw):
    rng = seed(draw)
    n, p, d, m = (draw(st.integers(1, 5), label="n"), draw(st.integers(1, 4), label="p"),
                  draw(st.integers(1, 3), label="d"), draw(st.integers(1, 3), label="m"))
    return {"x": rng.standard_normal((p, d)), "nodes": rng.standard_normal((n, d)),
            "weights": rng.uniform(0.5, 1.5, n), "WQ": rng.standard_normal((m, d)),
            "WK": rng.standard_normal((m, d)), "WV": rng.standard_normal((d, d)),
            "eps": draw(st.floats(0.1, 3.0), label="eps"), "max_work": 1e11}


SPECS = {
    "sinkhorn": Spec(
        sk.sinkhorn,
        lambda draw: {"C": _logits(draw), "n_iter": _n_iter(draw), "tol": 1e-12, "max_iter": 100_000,
                      "return_info": draw(st.booleans(), label="return_info"), "max_work": 1e11},
        check=_check_square, examples=N_EX),
    "sinkhorn_reference": Spec(
        sk.sinkhorn_reference,
        lambda draw: {"C": _logits(draw), "n_iter": draw(st.integers(1, 9), label="n_iter"), "max_work": 1e11},
        check=_check_square, examples=N_EX),
    "attention": Spec(
        sk.attention,
        lambda draw: {**_tokens(draw), "kind": draw(st.sampled_from(sk.KINDS), label="kind"),
                      "n_iter": _n_iter(draw), "tol": 1e-12, "max_iter": 100_000, "max_work": 1e11},
        check=_check_field, examples=N_EX),
    "logits": Spec(
        sk.logits, lambda draw: {**_tokens(draw, values=False), "max_work": 1e11},
        check=_check_logits, examples=N_EX),
    "energy": Spec(
        sk.energy,
        lambda draw: {**_tokens(draw, values=False), "kind": draw(st.sampled_from(["kernel", "sinkhorn"]), label="kind"),
                      "tol": 1e-12, "max_iter": 100_000, "max_work": 1e11},
        check=_check_energy, examples=N_EX),
    "l2_softmax_field": Spec(
        sk.l2_softmax_field, _l2,
        check=lambda out, kw: out.shape == np.shape(kw["x"]) or pytest.fail(f"shape {out.shape}"), examples=N_EX),
}


def test_every_public_function_is_fuzzed():
    assert public_callables(sk) == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])


@pytest.mark.parametrize("name", ["sinkhorn", "attention"])
def test_sweep_with_a_count(name):
    """The sweep once more with ``n_iter`` an int, so that every integer form replaces it (the drawn
    valid call of :func:`test_sweep` may hold ``n_iter=None``)."""
    spec = SPECS[name]
    sweep(dataclasses.replace(spec, valid=lambda draw: {**spec.valid(draw), "n_iter": 3}))
