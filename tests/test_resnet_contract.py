"""Regression tests of the error contract of theory.resnet, theory.resnet.errors,
theory.resnet.training and the training experiments of theory.experiments.resnet_node.trained (found by tests/test_fuzz_resnet.py and by review): named errors instead of
ZeroDivisionError, KeyError, AttributeError, NumPy errors or overflow warnings; NonFiniteError on
overflow; work and memory refused up front; plain numbers in messages."""

from __future__ import annotations

import numpy as np
import pytest

import theory.resnet as resnet
from theory._errors import NonFiniteError
from theory.experiments.resnet_node import trained
from theory.experiments.resnet_node.trained import Fig1Config, Fig4Config
from theory.resnet import errors, training
from theory.resnet.training import Adam

TINY1 = Fig1Config(N=2, width=2, n_points=3, lr=0.05, warmup=1, steps=2, seed=0, ode_refine=1)
TINY4 = Fig4Config(depths=(2, 4), seeds=(0,), width=2, d=2, noise=0.1, n_train=8, n_test=8, steps=2)


# --------------------------------------------------------------------------- theory.resnet.errors


def test_heun_constants_single_slice_is_a_named_error():
    # before: ZeroDivisionError (N = 0)
    with pytest.raises(ValueError, match="`theta` of theory.resnet.errors.heun_constants .* N \\+ 1 >= 2"):
        errors.heun_constants(np.zeros((1, 2, 2)), 2)


def test_euler_constants_empty_theta_is_a_named_error():
    # before: NumPy's "zero-size array to reduction operation maximum" without the argument name
    with pytest.raises(ValueError, match="`theta` of theory.resnet.errors.euler_constants"):
        errors.euler_constants(np.zeros((0, 2, 2)), 2)


@pytest.mark.parametrize("func", [errors.euler_constants, errors.heun_constants])
def test_constants_check_d(func):
    # before: d unchecked (sqrt of a negative number, or a d unrelated to theta silently used)
    theta = np.zeros((3, 2, 2))
    with pytest.raises(ValueError, match="`d` of .* must equal the state dimension of `theta`, 2; got 3"):
        func(theta, 3)
    with pytest.raises(ValueError, match="`d` of .* must be >= 1; got -1"):
        func(theta, -1)
    with pytest.raises(TypeError, match="`d` of"):
        func(theta, "2")


def test_constants_overflow_is_non_finite_error():
    # before: inf returned silently (expm1 of a huge Lipschitz constant) with an overflow warning
    with pytest.raises(NonFiniteError, match="euler_constants"):
        errors.euler_constants(np.full((2, 1, 1), 1e3), 1)


def test_error_table_validates_grid_and_seeds():
    # before: a float depth or a negative seed reached NumPy (TypeError/ValueError without a name)
    with pytest.raises(TypeError, match=r"`grid\[1\]` of theory.resnet.errors.error_table"):
        errors.error_table("euler", "smooth", [2, "x"], [0])
    with pytest.raises(ValueError, match=r"`seeds\[0\]` of .* must be >= 0"):
        errors.error_table("euler", "smooth", [2], [-1])
    with pytest.raises(ValueError, match="`grid` of .* at least one"):
        errors.error_table("euler", "smooth", [], [0])
    with pytest.raises(TypeError, match="`seeds` of"):
        errors.error_table("euler", "smooth", [2], 3)
    with pytest.raises(ValueError, match="`d` of"):
        errors.error_table("euler", "smooth", [2], [0], d=0)


def test_error_table_residual_and_weight_overflow():
    # before: "bias" reached forward, whose message named `theta`, not an argument of error_table
    with pytest.raises(ValueError, match="`residual` of .*error_table must be a family with \\(d, d\\)"):
        errors.error_table("euler", "smooth", [2], [0], residual="bias")
    # before: inf weights with an overflow warning
    with pytest.raises(NonFiniteError, match="`scale`"):
        errors.smooth_weights(4, 2, 0, scale=1.7e308 * 0.99)
    table = trained.Fig4Table((2,), {"euler-backprop": np.zeros((1, 2))})
    with pytest.raises(ValueError, match="`variant` of"):  # before: KeyError
        table.median("heun")


def test_error_table_refuses_huge_depths_up_front():
    # before: ran (or tried to allocate) for ever
    with pytest.raises(ValueError, match="`grid` of .* needs about .* max_work"):
        errors.error_table("euler", "smooth", [10**12], [0])
    rec, grad = errors.error_table("euler", "smooth", [2, 4], [0], max_work=1e6)
    assert rec.shape == grad.shape == (1, 2)
    with pytest.raises(ValueError, match="max_work"):
        errors.error_table("euler", "smooth", [2, 4], [0], max_work=10.0)


def test_reconstruction_error_overflow_is_non_finite_error():
    # theta = -1.9 (N = 1): x_1 = -0.9 x_0 and x~_0 = 2.9 x_1 = -2.61 x_0; both finite for
    # x_0 = 5e307, but x_0 - x~_0 = 1.8e308 overflows. Before: an overflow warning or inf.
    with pytest.raises(NonFiniteError, match="reconstruction error"):
        errors.reconstruction_error([5e307], np.full((1, 1, 1), -1.9), "linear")


# --------------------------------------------------------------------------- theory.resnet


def test_forward_refuses_a_trajectory_above_the_memory_cap():
    # 10^5 layers x 10^5 inputs: an 80 GB trajectory. Before: MemoryError (or swapping).
    x = np.zeros((10**5, 1))
    theta = np.zeros((10**5, 1, 1))
    for call in (resnet.forward, resnet.reverse):
        with pytest.raises(ValueError, match="needs 74.5 GiB of memory"):
            call(x, theta, "linear")
    with pytest.raises(ValueError, match="needs 74.5 GiB of memory"):
        resnet.gradient(x, theta, x, "linear")


def test_forward_work_budget_and_max_work():
    x, theta = np.ones(2), np.full((4, 2, 2), 0.1)
    for call in (lambda **k: resnet.forward(x, theta, "linear", **k),
                 lambda **k: resnet.final_state(x, theta, "linear", **k),
                 lambda **k: resnet.reverse(x, theta, "linear", **k),
                 lambda **k: resnet.gradient(x, theta, x, "linear", **k)):
        with pytest.raises(ValueError, match=r"`theta` of .* = 4 needs about .* max_work = 10"):
            call(max_work=10.0)
        assert np.all(np.isfinite(call(max_work=1e4)[0]))
    with pytest.raises(ValueError, match="`max_work` of"):
        resnet.forward(x, theta, "linear", max_work=-1.0)


def test_residual_and_scheme_records_are_validated():
    # before: accepted, then a wrong kernel code ran or KERNELS raised KeyError
    with pytest.raises(ValueError, match="`code` of theory.resnet.Residual"):
        resnet.Residual("x", 99, "f")
    with pytest.raises(ValueError, match="`width` of theory.resnet.Residual"):
        resnet.Residual("x", 3, "f", 0)
    with pytest.raises(ValueError, match="`name` of theory.resnet.Scheme"):
        resnet.Scheme("rk4", 4, 0, "a", "b")
    with pytest.raises(ValueError, match="`extra_slices` of theory.resnet.Scheme"):
        resnet.Scheme("heun", 2, 0, "a", "b")
    with pytest.raises(TypeError, match="`width` of theory.resnet.mlp must be an integer; got 2.5"):
        resnet.mlp(np.float64(2.5))


def test_interpolating_ode_refuses_stiff_or_huge_calls_up_front():
    x0, theta = np.ones(1), np.full((3, 1, 1), 0.5)
    # before: a loop over 10^12 + 1 samples (memory, then hours)
    with pytest.raises(ValueError, match="`samples` of .* needs about"):
        resnet.interpolating_ode(x0, theta, "tanh_out", samples=10**12)
    # before: DOP853 on a field of Lipschitz constant 1e150 (steps of 1e-150: never ends)
    with pytest.raises(ValueError, match="`theta` of .* needs about"):
        resnet.interpolating_ode(x0, 1e150 * theta, "tanh_out")
    # before: SciPy's UserWarning "rtol too small" (an error under filterwarnings)
    with pytest.raises(ValueError, match="`rtol` of"):
        resnet.interpolating_ode(x0, theta, "tanh_out", rtol=1e-300)
    with pytest.raises(ValueError, match="max_work"):
        resnet.interpolating_ode(x0, theta, "tanh_out", max_work=1.0)


# --------------------------------------------------------------------------- theory.resnet.training


def test_adam_overflow_is_non_finite_error_and_keeps_the_state():
    # before: inf returned (params + lr step past the float range) and an overflow warning on g^2
    opt = Adam(1e308)
    with pytest.raises(NonFiniteError, match="Adam.step"):
        opt.step(np.array([-1.7e308]), np.array([1.0]))
    assert opt.t == 0 and opt.m is None
    with pytest.raises(NonFiniteError, match="`grad`"):
        Adam(0.1).step(np.array([0.0]), np.array([1e200]))


def test_init_mlp_validates_and_takes_every_rng_form():
    r = resnet.mlp(2)
    # before: AttributeError ('int' object has no attribute 'standard_normal'; 'str' has no 'width')
    a = training.init_mlp(r, 3, 1, 5)
    b = training.init_mlp(r, 3, 1, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="`residual` of .* perceptron family"):
        training.init_mlp("tanh", 3, 1, 0)
    with pytest.raises(ValueError, match="`n_slices` of .* >= 1"):
        training.init_mlp(r, -1, 1, 0)
    with pytest.raises(ValueError, match="`rng` of"):
        training.init_mlp(r, 2, 1, -1)
    with pytest.raises(ValueError, match="`n_slices` of .* of memory"):
        training.init_mlp(r, 10**12, 1, 0)


def test_setups_validate_their_fields():
    # before: negative sizes accepted (and failed later inside NumPy)
    with pytest.raises(ValueError, match="`N` of Fig1Config must be an integer >= 1"):
        Fig1Config(N=-1)
    with pytest.raises(ValueError, match="`lr` of Fig1Config"):
        Fig1Config(lr=-0.1)
    with pytest.raises(TypeError, match="`steps` of"):
        Fig1Config(steps=2.5)
    with pytest.raises(ValueError, match="`n_train` of Fig4Config must be an integer >= 2"):
        Fig4Config(n_train=-5)
    with pytest.raises(ValueError, match=r"`depths` of Fig4Config must be .*integers >= 1"):
        Fig4Config(depths=(2, 0))
    assert Fig4Config(depths=[2, np.int64(4)]).depths == (2, 4)
    with pytest.raises(ValueError, match="`grow_from` of Fig1Config must be less than N = 32 .*; got 32"):
        Fig1Config(grow_from=32)


def test_long_trainings_are_refused_up_front():
    # before: 10^12 steps were accepted and ran (for ever); np.empty(10^12) for the losses
    with pytest.raises(ValueError, match=r"`setup.steps` of .*fit_1d = 1000000000000 needs"):
        trained.fit_1d(np.linspace(-1, 1, 3), np.zeros(3), resnet.mlp(2),
                        training.init_mlp(resnet.mlp(2), 2, 1, 0), Fig1Config(steps=10**12))
    with pytest.raises(ValueError, match="`setup.steps` of .*fig1_experiment .* needs about"):
        trained.fig1_experiment(Fig1Config(steps=10**12))
    with pytest.raises(ValueError, match="`N` of .*train_moons .* needs about"):
        trained.train_moons(2, "euler", "backprop", 0, Fig4Config(steps=10**12))
    with pytest.raises(ValueError, match="`setup.depths` of .*fig4_table .* needs about"):
        trained.fig4_table(Fig4Config(depths=(2, 4, 10**9)))
    with pytest.raises(ValueError, match="max_work"):
        trained.fig4_table(TINY4, max_work=10.0)


def test_progress_callbacks():
    seen = []
    trained.train_moons(2, "heun", "adjoint", 0, TINY4, progress=lambda i, n: seen.append((i, n)))
    assert seen == [(1, 2), (2, 2)]
    seen.clear()
    trained.fig4_table(TINY4, progress=lambda i, n: seen.append((i, n)))
    assert seen == [(i, 8) for i in range(1, 9)]
    seen.clear()
    trained.fig1_experiment(TINY1, progress=lambda i, n: seen.append((i, n)))
    assert seen == [(i, 4) for i in range(1, 5)]
    with pytest.raises(TypeError, match="`progress` of"):
        trained.fig1_experiment(TINY1, progress=3)
    # growing the depth: 2 steps at depth 2, then 3 at depth 4, for each target
    grown = Fig1Config(N=4, width=2, n_points=3, lr=0.05, warmup=1, steps=2, ode_refine=1, grow_from=2,
                       finetune_warmup=1, finetune_steps=3)
    seen.clear()
    result = trained.fig1_experiment(grown, progress=lambda i, n: seen.append((i, n)))
    assert seen == [(i, 10) for i in range(1, 11)]
    assert result.N == 4 and result.neg.losses.shape == (5,)
    assert result.to_measured()["grow_from"] == 2 and result.to_measured()["finetune_steps"] == 3


def test_fit_1d_validates_its_arguments():
    r = resnet.mlp(2)
    theta0 = training.init_mlp(r, 2, 1, 0)
    x = np.linspace(-1, 1, 3)
    with pytest.raises(TypeError, match="`setup` of"):  # before: AttributeError on None.lr
        trained.fit_1d(x, x, r, theta0, None)
    with pytest.raises(ValueError, match="`theta0` of"):
        trained.fit_1d(x, x, r, theta0[:, :3], TINY1)
    with pytest.raises(ValueError, match="`target` of"):
        trained.fit_1d(x, x[:2], r, theta0, TINY1)
    with pytest.raises(ValueError, match="`x0` of"):
        trained.fit_1d([np.nan, 0.0, 1.0], x, r, theta0, TINY1)


def test_verdicts_name_missing_keys():
    # before: KeyError
    with pytest.raises(ValueError, match="`measured` of .*fig1_measured_verdict lacks the key"):
        trained.fig1_measured_verdict({"mse_pos": 0.0})
    with pytest.raises(ValueError, match="`medians` of .*fig4_table_verdict lacks the variant"):
        trained.fig4_table_verdict([2, 4], {"euler-backprop": [0.1, 0.1]})
    good = {f"{s}-{m}": [0.2, 0.05] for s, m in trained.VARIANTS}
    with pytest.raises(ValueError, match="`thresholds` of .* lacks the key"):
        trained.fig4_table_verdict([2, 4], good, {})
    with pytest.raises(TypeError, match=r"`depths\[0\]` of"):
        trained.fig4_table_verdict(["a", 4], good)


def test_sizes_are_refused_before_allocation():
    # before: NumPy's MemoryError (or an allocation of terabytes)
    with pytest.raises(ValueError, match="`n` of .*two_moons = 1000000000000 needs"):
        training.two_moons(10**12, 0.1, 0)
    with pytest.raises(ValueError, match="`d` of .*lift .* of memory"):
        training.lift(np.zeros((2, 2)), 10**12)
    with pytest.raises(ValueError, match="`k` of .*refine_slices .* of memory"):
        training.refine_slices(np.zeros((3, 2)), 10**12)


def test_overflows_are_non_finite_errors():
    # before: overflow warnings, or inf/NaN returned
    with pytest.raises(NonFiniteError, match="logistic_head"):
        training.logistic_head(np.full((2, 1), 1e308), np.array([10.0]), 0.0, np.array([0.0, 1.0]))
    with pytest.raises(NonFiniteError, match="`noise`"):  # found by the fuzzing (explore profile)
        training.two_moons(8, 1.7e308, 0)
    with pytest.raises(NonFiniteError, match="increasing_fit_floor"):
        training.increasing_fit_floor([1.7e308, -1.7e308])
    with pytest.raises(NonFiniteError, match="grad_xN"):
        training.loss_gradient(np.ones((1, 1)), np.zeros((1, 1, 1)), np.full((1, 1), -1.7e308), "linear",
                               xN=np.full((1, 1), 1.7e308))


def test_layer_derivative_far_from_zero():
    # x_1 - (x_1 - 1) = 0 once 1 is below the spacing of x_1: before, a division by zero. f = theta
    # (bias) has f' = 0 everywhere; f = theta x (linear) has f' = theta.
    out = training.layer_derivative([1e17, -3e200, 0.5], np.array([0.25]), "bias")
    np.testing.assert_array_equal(out, 0.0)
    out = training.layer_derivative([1e17, 0.5], np.array([[0.25]]), "linear")
    np.testing.assert_allclose(out, 0.25, rtol=1e-15)
    with pytest.raises(ValueError, match="`theta_n` of"):  # before: the message named `theta`
        training.layer_derivative([0.5], np.zeros(3), "bias")


def test_loss_gradient_and_fig1_measure_validate_keywords():
    with pytest.raises(TypeError, match="`xN` of"):  # before: NumPy's "could not convert string to float"
        training.loss_gradient(np.ones((1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1)), "linear", xN="x")
    theta = training.init_mlp(resnet.mlp(2), 2, 1, 0)
    with pytest.raises(TypeError, match="`losses` of"):
        trained.fig1_measure(theta, theta, resnet.mlp(2), TINY1, losses="ab")
    with pytest.raises(TypeError, match="`seconds` of"):  # before: dict("x") raised without a name
        trained.fig1_measure(theta, theta, resnet.mlp(2), TINY1, seconds="x")
    with pytest.raises(ValueError, match="`theta_neg` of"):
        trained.fig1_measure(theta, theta[:1], resnet.mlp(2), TINY1)


# --------------------------------------------------------------------------- plain numbers


@pytest.mark.parametrize("call", [
    lambda: resnet.mlp(np.float64(2.5)),
    lambda: training.two_moons(np.float64(3.0), 0.1, 0),
    lambda: training.init_mlp(resnet.mlp(2), np.float32(2.0), 1, 0),
    lambda: resnet.forward([1.0], np.zeros((1, 1, 1)), "linear", depth=np.float64(1.0)),
    lambda: errors.error_table("euler", "smooth", [np.float64(2.0)], [0]),
    lambda: resnet.interpolating_ode([1.0], np.zeros((2, 1, 1)), "linear", samples=np.float64(2.0)),
    lambda: __import__("theory.rates", fromlist=["frequency"]).frequency([0, 1], level=np.float64(1.5)),
    lambda: __import__("theory.isotonic", fromlist=["isotonic_regression"]).isotonic_regression(
        [1.0, 0.0], p=np.str_("2")),
])
def test_messages_print_plain_numbers(call):
    # NumPy 2 formats repr(np.float64(2.5)) as "np.float64(2.5)": messages must show "2.5"
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    text = str(info.value)
    assert "np.float" not in text and "np.int" not in text and "np.str_" not in text, text


def test_pack_and_unpack_check_shapes():
    r = resnet.mlp(2)
    # before: W of the wrong shape was concatenated silently (a slice of the wrong length)
    with pytest.raises(ValueError, match=r"`W` of theory.resnet.Residual.pack must have shape \(1, 2, 2\)"):
        r.pack(np.zeros((1, 2, 2)), np.zeros((1, 3, 2)), np.zeros((1, 2)))
    # before: a reshape error without an argument name
    with pytest.raises(ValueError, match="`theta` of theory.resnet.Residual.unpack"):
        r.unpack(np.zeros((1, 7)), 1)
    V, W, b = r.unpack(r.pack(np.ones((3, 1, 2)), 2 * np.ones((3, 2, 1)), 3 * np.ones((3, 2))), 1)
    assert V.shape == (3, 1, 2) and W.shape == (3, 2, 1) and b.shape == (3, 2)
