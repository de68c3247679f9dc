"""The torch backend of the implicit-reg experiments (theory.backends.implicit_reg) and the message of
Table 1 on the digits (theory.experiments.implicit_reg.table1_digits): agreement with the NumPy kernels,
memory split and refusal, bad input, and negative controls of the digits verdict."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from theory.backends import FLOAT64_ATOL, resolve, torch_available
from theory.experiments import experiment

needs_torch = pytest.mark.skipif(not torch_available(),
                                 reason="PyTorch is not installed (pip install 'theory[gpu]'): torch backend untested")
needs_sklearn = pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                                   reason="scikit-learn is absent: it ships the digits (pip install 'theory[gpu]')")


pytestmark = pytest.mark.usefixtures("torch_one_thread")  # tiny tensors: one intra-op thread (conftest)


def _runs(R=3, L=6, d=4, m=5, n=9, kinds=("paper", "iid")):
    from theory.implicit import initialize, synthetic_data

    X, Y, P = [], [], []
    for s in range(R):
        x, y = synthetic_data(n, d, np.random.default_rng(50 + s))
        X.append(x)
        Y.append(y)
        P.append(initialize(d, m, L, np.random.default_rng(s), kind=kinds[s % len(kinds)]))
    return X, Y, P


@needs_torch
@pytest.mark.parametrize("activation, outer", [("gelu", False), ("tanh", True), ("relu", True), ("identity", True),
                                               ("sin", False)])
def test_gd_runs_equals_train(activation, outer):
    """Batched torch GD = theory.implicit.train run by run (weights, losses, the successive differences)."""
    from theory.backends.implicit_reg import gd_runs
    from theory.experiments.implicit_reg.core import max_successive_difference
    from theory.implicit import train

    X, Y, P = _runs()
    out = gd_runs(X, Y, P, activation, lr=0.05, record=(10, 20), backend=resolve("torch"), train_outer=outer,
                  observe_every=10)
    for i in range(len(P)):
        mid, _ = train(X[i], Y[i], P[i], activation, lr=0.05, steps=10, train_outer=outer)
        end, losses = train(X[i], Y[i], P[i], activation, lr=0.05, steps=20, train_outer=outer)
        for steps, ref in ((10, mid), (20, end)):
            got = out["states"][steps][i]
            for block in "AVWB":
                assert np.max(np.abs(getattr(got, block) - getattr(ref, block))) <= FLOAT64_ATOL
        assert np.max(np.abs(out["losses"][i] - losses)) <= FLOAT64_ATOL
        want = [max_successive_difference(p) for p in (P[i], mid, end)]
        assert np.max(np.abs(out["dmax"][i] - want)) <= FLOAT64_ATOL


@needs_torch
def test_gd_runs_split_and_refusal():
    """A memory budget that forces one run per group gives the same result; one run above it is refused with
    its size."""
    from theory.backends.implicit_reg import gd_runs, run_bytes

    X, Y, P = _runs()
    b = resolve("torch")
    full = gd_runs(X, Y, P, "gelu", lr=0.05, record=(8,), backend=b)
    one = run_bytes(6, 9, 4, 5)
    split = gd_runs(X, Y, P, "gelu", lr=0.05, record=(8,), backend=b, memory=1.5 * one)
    assert np.array_equal(full["losses"], split["losses"])
    with pytest.raises(ValueError, match=r"`L` = 6 .* needs .* on the device"):
        gd_runs(X, Y, P, "gelu", lr=0.05, record=(8,), backend=b, memory=one / 2)


@needs_torch
@pytest.mark.parametrize("kw, name", [(dict(record=()), "record"), (dict(record=(5, 3)), "record"),
                                      (dict(record=(0, 3)), "record"), (dict(observe_every=0), "observe_every")])
def test_gd_runs_refuses(kw, name):
    from theory.backends.implicit_reg import gd_runs

    X, Y, P = _runs(R=2)
    args = {**dict(lr=0.05, record=(4,), backend=resolve("torch")), **kw}
    with pytest.raises(ValueError, match=f"`{name}`"):
        gd_runs(X, Y, P, "gelu", **args)
    with pytest.raises(ValueError, match="`params`"):
        gd_runs(X[:1], Y, P, "gelu", lr=0.05, record=(4,), backend=resolve("torch"))


@needs_torch
def test_gd_runs_divergence_is_refused():
    from theory._errors import NonFiniteError
    from theory.backends.implicit_reg import gd_runs

    X, Y, P = _runs(R=1)
    with pytest.raises(NonFiniteError, match="diverged"):
        gd_runs(X, Y, P, "identity", lr=50.0, record=(60,), backend=resolve("torch"), train_outer=True)


def test_paper_presets_fit_an_h100():
    """The paper presets' largest run (Figure 1's reference depth 2^14; Figure 2; Table 1 on digits at L = 256) fits
    half of an H100's memory with every seed in one group (no allocation here)."""
    from theory.backends.implicit_reg import run_bytes

    f1 = experiment("implicit_reg.fig1").presets["paper"]
    assert f1.ref == 2**14 and len(f1.seeds) * run_bytes(f1.ref, f1.n, f1.d, f1.m) <= 39e9
    f2 = experiment("implicit_reg.fig2").presets["paper"]
    assert len(f2.seeds) * run_bytes(f2.depths[1], f2.n, f2.d, f2.m) <= 39e9
    t = experiment("implicit_reg.table1_digits").presets["paper"]
    assert 2 * len(t.seeds) * run_bytes(t.depths[1], t.n_train, 74, t.m) <= 39e9


# ------------------------------------------------------------------------------------------- Table 1 on digits


@needs_sklearn
@needs_torch
def test_digits_counts_equal_across_backends():
    """float64: the accuracies (integer counts, which the float comparison of test_backends skips) are equal."""
    e = experiment("implicit_reg.table1_digits")
    kw = dict(depths=(3, 6), seeds=(0, 1), n_train=40, m=4, lr=0.02, steps=15)
    a, b = e.run("check", **kw), e.run("check", **kw, backend="torch")
    for key in a.rows:
        for q in ("train_correct", "test_correct"):
            assert np.array_equal(a.rows[key][q], b.rows[key][q]), (key, q)
        assert np.max(np.abs(a.rows[key]["rho"] - b.rows[key]["rho"])) <= FLOAT64_ATOL


@needs_sklearn
def test_digits_data_split():
    from theory.experiments.implicit_reg.table1_digits import digits_data

    Xtr, Ytr, ytr, Xte, yte = digits_data(300)
    assert Xtr.shape == (300, 64) and Xte.shape == (1497, 64) and Ytr.shape == (300, 10)
    assert np.array_equal(np.argmax(Ytr, axis=1), ytr)
    assert np.allclose(Xtr.mean(axis=0), 0.0, atol=1e-12)


@pytest.mark.parametrize("kw, name", [
    (dict(n_train=1790), "n_train"),
    (dict(n_train=5), "n_train"),
    (dict(depths=(8,)), "depths"),
    (dict(depths=(8, 16, 32)), "depths"),
    (dict(depths=(16, 8)), "depths"),
    (dict(lr=0.0), "lr"),
    (dict(steps=0), "steps"),
    (dict(backend="numpy", dtype="float32"), "dtype"),
    (dict(backend="torch", dtype="float32"), "dtype"),
])
def test_digits_config_refuses(kw, name):
    if kw.get("backend") == "torch" and not torch_available():
        pytest.skip("PyTorch absent: the backend name is refused first")
    with pytest.raises(ValueError, match=f"`{name}`"):
        experiment("implicit_reg.table1_digits").config_for("check", **kw)


def _fake(test_pct, rho_ratio, msd_ratio=100.0, seeds=3, n_test=1000, n_train=500):
    """A Table1DigitsResult with the given median test accuracy (%) and rho(L')/rho(L) per row."""
    from theory.experiments.implicit_reg.table1_digits import Table1DigitsConfig, Table1DigitsResult

    rows = {}
    for key, acc in test_pct.items():
        correct = np.array([int(round(acc * n_test / 100))] * seeds, dtype=np.int64)
        rho0 = np.full((seeds, 2), 0.2)
        msd = 1.0 if key[1] == "paper" else msd_ratio
        rows[key] = {"train_correct": np.full(seeds, n_train), "test_correct": correct,
                     "loss": np.full((2, seeds), 0.1), "rho": np.stack([rho0, rho_ratio[key] * rho0]),
                     "msd": np.full((2, seeds), msd)}
    return Table1DigitsResult(Table1DigitsConfig(), n_train, n_test, rows)


_PAPER_ACC = {("identity", "paper"): 59.8, ("identity", "iid"): 59.6, ("gelu", "paper"): 79.9,
              ("gelu", "iid"): 85.7, ("relu", "paper"): 88.1, ("relu", "iid"): 88.4}
_PAPER_RHO = {("identity", "paper"): 0.5, ("identity", "iid"): 1.0, ("gelu", "paper"): 0.5, ("gelu", "iid"): 1.0,
              ("relu", "paper"): 1.1, ("relu", "iid"): 1.0}


def test_digits_verdict_passes_on_table1_itself():
    """Table 1's printed medians with the smoothness column turned into rho ratios pass the verdict."""
    from theory.experiments.implicit_reg.table1_digits import table1_digits_verdict

    v = table1_digits_verdict(_fake(_PAPER_ACC, _PAPER_RHO))
    m = v.measured
    assert v.passed, v.message
    assert all(m["parts"].values())


@pytest.mark.parametrize("change, part", [
    (dict(rho={("gelu", "paper"): 0.9}), "1 smooth"),
    (dict(rho={("relu", "paper"): 0.5}), "2 not smooth"),
    (dict(rho={("identity", "iid"): 0.5}), "2 not smooth"),
    (dict(msd_ratio=3.0), "3 fig-4"),
    (dict(acc={("gelu", "paper"): 59.7}), "4 gelu/tied above identity"),
    (dict(acc={("relu", "iid"): 79.9}), "5 gelu/iid, relu/* above gelu/tied"),
    (dict(acc={("gelu", "iid"): 79.0}), "5 gelu/iid, relu/* above gelu/tied"),
])
def test_digits_verdict_negative_controls(change, part):
    """Each part of the message, broken alone, fails the verdict and is named in its message."""
    from theory.experiments.implicit_reg.table1_digits import table1_digits_verdict

    acc = {**_PAPER_ACC, **change.get("acc", {})}
    rho = {**_PAPER_RHO, **change.get("rho", {})}
    v = table1_digits_verdict(_fake(acc, rho, msd_ratio=change.get("msd_ratio", 100.0)))
    m = v.measured
    assert not v.passed and part in v.message
    assert [p for p, ok in m["parts"].items() if not ok] == [p for p in m["parts"] if p.startswith(part[:1])]


def test_digits_verdict_needs_a_margin_over_the_seed_spread():
    """An ordering by less than the interquartile range over seeds does not count."""
    from theory.experiments.implicit_reg.table1_digits import _above, _stats

    a = _stats([800, 850, 900], 1000)
    b = _stats([790, 800, 810], 1000)
    assert a[0] > b[0] and not _above(a, b)
    assert _above(_stats([900, 901, 902], 1000), b)
