"""The torch backend of the scaling figures' experiments (Figures 1-5, 8, 9): chunking, bad input, verdicts.

The NumPy/torch agreement of every experiment is in tests/test_backends.py (its SMALL dict)."""

from __future__ import annotations

import numpy as np
import pytest

from theory.backends import torch_available
from theory.experiments import experiment

needs_torch = pytest.mark.skipif(not torch_available(),
                                 reason="PyTorch is not installed (pip install 'theory[gpu]'): torch backend untested")


pytestmark = pytest.mark.usefixtures("torch_one_thread")  # tiny tensors: one intra-op thread (conftest)


FIG9_SMALL = dict(hurst=(0.3, 0.8), beta=(0.3, 1.0), lrs=(1e-2, 1e-1), L=10, d=5, epochs=2, batch=32, n_train=64)


@needs_torch
def test_fig9_chunked_equals_unchunked():
    """A memory budget of one network per chunk gives the same grid as one chunk."""
    from theory.experiments.scaling._train import fig9_plan

    e = experiment("scaling.fig9")
    full = e.run("check", **FIG9_SMALL, backend="torch")
    small = e.run("check", **FIG9_SMALL, backend="torch", memory=250_000)
    assert fig9_plan(small.config)[0] < 8 and fig9_plan(full.config)[1] == 1
    assert np.allclose(full.accuracy, small.accuracy, atol=1e-12, equal_nan=True)
    assert np.allclose(full.train_loss, small.train_loss, atol=1e-10, equal_nan=True)


def test_fig9_bad_input_is_refused():
    e = experiment("scaling.fig9")
    with pytest.raises(ValueError, match="`beta`"):
        e.run("check", beta=(1.0, 0.5))
    with pytest.raises(ValueError, match="`n_train`"):
        e.run("check", n_train=5000)
    with pytest.raises(ValueError, match="`dtype`"):
        e.run("check", backend="torch", dtype="float16")
    with pytest.raises(ValueError, match="`device`"):
        e.run("check", backend="numpy", device="cuda")
    with pytest.raises(ValueError, match="one network needs"):
        e.run("check", memory=1000)


def _fake_fig9(best):
    from theory.experiments.scaling._train import Fig9Config, Fig9Result

    c = Fig9Config(hurst=(0.2, 0.8), beta=(0.2, 0.5, 0.7, 1.0))
    b = np.asarray(best, dtype=float)
    return Fig9Result(c, b[..., None], np.zeros_like(b)[..., None], b, np.full_like(b, 1e-3), 0.1)


def test_fig9_verdict_reads_the_message():
    """Identity side learned and the far side failed: pass; either half broken: fail (negative controls)."""
    from theory.experiments.scaling._train import fig9_verdict

    # H = 0.2 (line 0.5): identity beta >= 0.6 -> 0.7, 1.0; far beta <= 0.2 -> 0.2
    # H = 0.8 (line 0.8): identity beta >= 0.9 -> 1.0; far beta <= 0.5 -> 0.2, 0.5
    good = [[0.10, 0.60, 0.90, 0.92], [0.11, 0.12, 0.50, 0.90]]
    assert fig9_verdict(_fake_fig9(good)).passed
    not_learned = [[0.10, 0.60, 0.90, 0.92], [0.11, 0.12, 0.50, 0.70]]
    assert not fig9_verdict(_fake_fig9(not_learned)).passed
    learned_below = [[0.10, 0.60, 0.90, 0.92], [0.11, 0.85, 0.50, 0.90]]
    assert not fig9_verdict(_fake_fig9(learned_below)).passed
    overflowed_identity = [[0.10, 0.60, np.nan, 0.92], [0.11, 0.12, 0.50, 0.90]]
    assert not fig9_verdict(_fake_fig9(overflowed_identity)).passed


@needs_torch
def test_fig8_torch_keeps_the_numpy_draws_and_records():
    """The batched torch training of Figure 8 reports the same initial paths and exponent steps."""
    e = experiment("scaling.fig8")
    kw = dict(L=24, d=3, n_in=4, n=8, steps=21)
    a = e.run("check", **kw)
    b = e.run("check", **kw, backend="torch")
    for s in range(3):
        assert np.array_equal(a.path_init[s], b.path_init[s])
        assert np.array_equal(a.exponent_curve[s][:, 0], b.exponent_curve[s][:, 0])
    assert e.verdict(a).status == e.verdict(b).status


@needs_torch
@pytest.mark.parametrize("quantity", ["hidden", "gradient"])
def test_fig45_both_quantities_agree(quantity):
    """Figures 4 (hidden) and 5 (gradient): torch float64 equals the NumPy kernels on the same draws."""
    e = experiment("scaling.fig45")
    kw = dict(seeds=(0, 1), grid=(8, 16, 32), d=5, quantity=quantity)
    a, b = e.run("check", **kw), e.run("check", **kw, backend="torch")
    for beta in a.table:
        assert np.max(np.abs(np.log(a.table[beta]) - np.log(b.table[beta]))) <= 1e-10


@needs_torch
def test_log_ratios_chunked_and_bad_quantity():
    from theory.backends import resolve
    from theory.backends.scaling_figs import log_ratios

    rng = np.random.default_rng(3)
    V, W = rng.standard_normal((2, 4, 12, 5, 5)) / np.sqrt(5)
    h0, pL = rng.standard_normal((2, 4, 5))
    plan = [(6, (0.5, 1.0)), (12, (0.5,))]
    for q in ("h", "p"):
        full = log_ratios(V, W, h0, pL, plan, quantity=q, backend=resolve("torch"))
        small = log_ratios(V, W, h0, pL, plan, quantity=q, backend=resolve("torch"), memory=20_000)
        ref = log_ratios(V, W, h0, pL, plan, quantity=q, backend=resolve("numpy"))
        for k in ref:
            assert np.max(np.abs(full[k] - small[k])) <= 1e-12 and np.max(np.abs(full[k] - ref[k])) <= 1e-10
    with pytest.raises(ValueError, match="`quantity`"):
        log_ratios(V, W, h0, pL, plan, quantity="x", backend=resolve("torch"))
