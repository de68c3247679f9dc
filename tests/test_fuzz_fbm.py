"""Bad-input fuzzing of every public function of theory.fbm (contract of tests/_fuzz.py)."""

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.fbm as fbm_pkg
from _fuzz import Spec, fuzz, public_callables, sweep


def _n(draw):
    return draw(st.integers(1, 40), label="n")


def _hurst(draw):
    return draw(st.floats(0.01, 0.99), label="hurst")


SPECS = {
    "autocovariance": Spec(
        fbm_pkg.autocovariance,
        lambda draw: {"k": np.arange(-draw(st.integers(0, 5)), draw(st.integers(1, 9))), "hurst": _hurst(draw)},
        check=lambda out, kw: out.shape == np.shape(kw["k"]) or pytest.fail(f"shape {out.shape}")),
    "fgn": Spec(
        fbm_pkg.fgn,
        lambda draw: {"n": _n(draw), "hurst": _hurst(draw), "size": draw(st.sampled_from([(), 2, (2, 1)])),
                      "rng": np.random.default_rng(draw(st.integers(0, 9)))},
        check=lambda out, kw: out.shape == np.atleast_1d(kw["size"]).tolist().__len__() * () + (
            tuple(np.atleast_1d(kw["size"]).tolist()) if kw["size"] != () else ()) + (kw["n"],)
        or pytest.fail(f"shape {out.shape}")),
    "fbm": Spec(
        fbm_pkg.fbm,
        lambda draw: {"n": _n(draw), "hurst": _hurst(draw), "size": draw(st.sampled_from([(), 3])),
                      "length": draw(st.floats(0.1, 10.0)), "rng": np.random.default_rng(draw(st.integers(0, 9)))},
        check=lambda out, kw: out.shape[-1] == kw["n"] + 1 or pytest.fail(f"shape {out.shape}")),
}


def test_every_public_function_is_fuzzed():
    assert public_callables(fbm_pkg) == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])
