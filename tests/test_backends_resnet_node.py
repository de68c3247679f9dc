"""The PyTorch backend of ``resnet-node`` (theory.backends.resnet_node): the same recursions as the
NumPy kernels, bad input refused, the digits Figure 3(c) verdict rejects broken results, and the
check presets of Figures 3(c) and 4 are unchanged by the backend fields."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from theory.backends import torch_available
from theory.experiments import resnet_node as rn
from theory.rates import fit_rate
from theory.resnet import gradient, mlp
from _data import skip_without_digits

needs_torch = pytest.mark.skipif(not torch_available(),
                                 reason="PyTorch is not installed (pip install 'theory[gpu]'): torch backend untested")


pytestmark = pytest.mark.usefixtures("torch_one_thread")  # tiny tensors: one intra-op thread (conftest)


@needs_torch
@pytest.mark.parametrize("scheme", ["euler", "heun"])
@pytest.mark.parametrize("method", ["backprop", "adjoint"])
def test_batched_gradients_equal_numpy_kernels(scheme, method):
    """S = 3 networks in one batch: each network's gradients equal theory.resnet.gradient's to 1e-12."""
    import torch

    from theory.backends import resnet_node as tb

    rng = np.random.default_rng(7)
    d, m, B, N, S = 4, 5, 6, 11, 3
    K = N + (scheme == "heun")
    theta = 0.8 * rng.standard_normal((S, K, 2 * d * m + m))
    x0, y = rng.standard_normal((2, S, B, d))
    tt, xt = torch.tensor(theta), torch.tensor(x0)
    xN = tb.forward_last(xt, tt, scheme, d, m)
    gth, gx = tb.gradient(xt, tt, xN - torch.tensor(y), scheme, method, d, m)
    for s in range(S):
        ref, ref_x = gradient(x0[s], theta[s], y[s], mlp(m), scheme, method)
        assert np.max(np.abs(gth[s].numpy() - ref)) <= 1e-12
        assert np.max(np.abs(gx[s].numpy() - ref_x)) <= 1e-12


@needs_torch
def test_adjoint_differs_from_backprop_on_torch():
    """The adjoint is an approximation there too (not backprop under another name)."""
    import torch

    from theory.backends import resnet_node as tb

    rng = np.random.default_rng(1)
    theta = torch.tensor(rng.standard_normal((1, 5, 2 * 3 * 4 + 4)))
    x0 = torch.tensor(rng.standard_normal((1, 4, 3)))
    g = torch.ones((1, 4, 3), dtype=torch.float64)
    a, _ = tb.gradient(x0, theta, g, "euler", "adjoint", 3, 4)
    b, _ = tb.gradient(x0, theta, g, "euler", "backprop", 3, 4)
    assert float((a - b).abs().max()) > 1e-4


def test_bad_backend_fields_refused():
    with pytest.raises(ValueError, match="`dtype`"):
        rn.Fig3cConfig(dtype="float16")
    with pytest.raises(ValueError, match="`backend`"):
        rn.Fig4Config(backend="jax")
    with pytest.raises(ValueError, match="`device`"):
        rn.Fig4Config(device="cuda")  # numpy backend: cpu only
    with pytest.raises(ValueError, match="`dtype`"):
        rn.Fig3cDigitsConfig(dtype="bfloat16")


@needs_torch
def test_float32_refused_where_errors_are_below_its_rounding_and_cuda_where_absent():
    import torch

    with pytest.raises(ValueError, match="`dtype` .* must be 'float64'"):
        rn.Fig3cConfig(backend="torch", dtype="float32")
    with pytest.raises(ValueError, match="`dtype` .* must be 'float64'"):
        rn.Fig3cDigitsConfig(backend="torch", dtype="float32")
    rn.Fig4Config(backend="torch", dtype="float32")  # accepted: test errors of a training
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="`device`"):
            rn.Fig4Config(backend="torch", device="cuda")


@needs_torch
def test_memory_refusal_names_the_size(monkeypatch):
    from theory.backends import resnet_node as tb

    monkeypatch.setattr(tb, "_CPU_BUDGET", 10_000)
    with pytest.raises(ValueError, match=r"`depths` .* need about .* run fewer seeds"):
        rn.fig4(rn.Fig4Config(depths=(2, 4), seeds=(0,), width=4, d=3, n_train=32, n_test=32, steps=1,
                              backend="torch"))


def test_check_presets_keep_the_numpy_backend():
    for presets in (rn.FIG3C_PRESETS, rn.FIG4_PRESETS, rn.FIG3C_DIGITS_PRESETS):
        for c in presets.values():
            assert (c.backend, c.device, c.dtype) == ("numpy", "cpu", "float64")
    # the training code's default setting is the check preset
    assert rn.FIG4_PRESETS["check"] == rn.Fig4Config()


def test_fig4_loop_equals_the_training_table():
    """fig4 (which keeps the losses) trains exactly what theory.experiments.resnet_node.fig4_table trains."""
    c = rn.Fig4Config(depths=(2, 4), seeds=(0, 1), width=4, d=3, n_train=32, n_test=64, steps=5)
    r = rn.fig4(c)
    table = rn.fig4_table(c)
    assert set(r.table.errors) == set(table.errors)
    for k in table.errors:
        assert np.array_equal(r.table.errors[k], table.errors[k])
        assert r.train_loss[k].shape == (2, 2) and np.all(np.isfinite(r.train_loss[k]))


# ------------------------------------------------------------------ digits Figure 3(c): negative controls


def _digits_result(euler, heun, depths=(4, 8, 16, 32)):
    """A result with the given medians (seeds, depths) per scheme, for the verdict alone."""
    config = rn.Fig3cDigitsConfig(depths=depths)
    med = {"euler": np.asarray(euler, float), "heun": np.asarray(heun, float)}
    fits = {s: fit_rate(np.array(depths), med[s]) for s in med}
    zeros = {s: np.zeros_like(med[s]) for s in med}
    return rn.Fig3cDigitsResult(config, {}, med, fits, zeros, zeros)


def test_digits_verdict_accepts_the_figures_message():
    v = rn.fig3c_digits_verdict(_digits_result([[1e-2, 5e-3, 2.5e-3, 1.2e-3]], [[1e-3, 3e-4, 1e-4, 3e-5]]))
    assert v.passed


@pytest.mark.parametrize(("euler", "heun", "why"), [
    ([[1e-2, 5e-3, 6e-3, 1.2e-3]], [[1e-3, 3e-4, 1e-4, 3e-5]], "ResNet error not decreasing"),
    ([[1e-2, 5e-3, 2.5e-3, 1.2e-3]], [[1e-3, 3e-4, 4e-4, 3e-5]], "HeunNet error not decreasing"),
    ([[1e-2, 5e-3, 2.5e-3, 1.2e-3]], [[2e-2, 3e-3, 1e-3, 3e-4]], "HeunNet above the ResNet at N = 4"),
    ([[1e-2, 5e-3, 2.5e-3, 1.2e-3]], [[1e-2, 5e-3, 2.5e-3, 1.2e-3]], "HeunNet equal to the ResNet"),
])
def test_digits_verdict_rejects_broken_results(euler, heun, why):
    assert not rn.fig3c_digits_verdict(_digits_result(euler, heun)).passed, why


def test_digits_config_rejects_bad_fields():
    for field, value in (("depths", (4, 8, 16)), ("momentum", 1.0), ("test_fraction", 0.0), ("eval_batch", 5000),
                         ("epochs", 0), ("weight_decay", -1.0)):
        with pytest.raises(ValueError, match=f"`{field}`"):
            dataclasses.replace(rn.Fig3cDigitsConfig(), **{field: value})


def test_digits_experiment_runs_on_numpy():
    """A tiny run: errors positive and finite, networks better than chance after training."""
    skip_without_digits()
    r = rn.fig3c_digits(rn.Fig3cDigitsConfig(depths=(2, 3, 4, 5), width=3, epochs=2, decay_every=1, batch=128,
                                             eval_batch=16))
    for s in ("euler", "heun"):
        assert np.all(r.medians[s] > 0) and np.all(np.isfinite(r.medians[s]))
        assert np.all(r.test_error[s] < 0.5)  # chance is 0.9
    assert set(r.to_measured()) >= {"euler_slope", "heun_slope", "heun_over_euler_median"}
