"""Bad-input fuzzing of every public function of theory.resnet, theory.resnet.errors and
theory.resnet.training, and of the training experiments of theory.experiments.resnet_node.trained
(contract of tests/_fuzz.py)."""

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.resnet as resnet
import theory.resnet.errors as errors
import theory.resnet.training as training
from theory.experiments.resnet_node import trained
from _fuzz import Spec, fuzz, public_callables, seed, sweep

#: result types: built by the package, not called with user input
EXCLUDED = {"ODESolution", "Fig1Fit", "Fig1Result", "Fig4Table"}

#: the training experiments moved from theory.resnet.training to theory.experiments.resnet_node.trained
TRAINED = {"Fig1Config", "fit_1d", "fig1_measure", "fig1_experiment", "fig1_measured_verdict", "Fig4Config",
           "train_moons", "fig4_table", "fig4_table_verdict"}

FAMILIES = ["linear", "tanh", "tanh_out", "bias", "bias_sq", "mlp"]

#: small setups: each training or measurement takes well under a second
FIG1 = trained.Fig1Config(N=2, width=2, n_points=3, lr=0.05, warmup=1, steps=2, seed=0, ode_refine=1)
FIG1_GROWN = trained.Fig1Config(N=3, width=2, n_points=3, lr=0.05, warmup=1, steps=2, seed=0, ode_refine=1,
                                grow_from=2, finetune_warmup=1, finetune_steps=2)
FIG4 = trained.Fig4Config(depths=(2, 4), seeds=(0,), width=2, d=2, noise=0.1, n_train=8, n_test=8, lr=0.02, steps=2)


def _residual(draw, d=None):
    name = draw(st.sampled_from(FAMILIES), label="residual")
    return resnet.mlp(draw(st.integers(1, 3), label="width")) if name == "mlp" else name


def _theta(rng, K, d, residual, scale=0.5):
    res = residual if isinstance(residual, resnet.Residual) else resnet.RESIDUALS[residual]
    return scale * rng.standard_normal((K, *res.param_shape(d)))


def _net(draw, x_name="x0", ode=False):
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    batch = draw(st.booleans(), label="batch")
    scheme = draw(st.sampled_from(["euler", "heun"]), label="scheme")
    residual = _residual(draw)
    N = draw(st.integers(1, 4), label="N")
    x = rng.standard_normal((draw(st.integers(1, 3)), d) if batch else d)
    kw = {x_name: x, "theta": _theta(rng, N + (scheme == "heun"), d, residual), "residual": residual,
          "scheme": scheme}
    if draw(st.booleans(), label="depth given"):
        kw["depth"] = N
    return kw


def _traj_shape(x_name):
    def check(out, kw):
        theta = kw["theta"]
        N = np.shape(theta)[0] - (kw.get("scheme", "euler") == "heun")
        assert out.shape == (N + 1, *np.shape(kw[x_name])), out.shape
    return check


def _gradient(draw):
    kw = _net(draw)
    kw["y"] = seed(draw).standard_normal(np.shape(kw["x0"]))
    kw["method"] = draw(st.sampled_from(["backprop", "adjoint"]), label="method")
    return kw


def _ode(draw):
    rng = seed(draw)
    d = draw(st.integers(1, 2), label="d")
    residual = _residual(draw)
    return {"x0": rng.standard_normal(d), "theta": _theta(rng, draw(st.integers(1, 3)) + 1, d, residual),
            "residual": residual, "interpolation": draw(st.sampled_from(["weights", "residuals"])),
            "rtol": 1e-8, "atol": 1e-10, "samples": draw(st.integers(1, 3))}


def _square(draw, heun=False):
    rng = seed(draw)
    d = draw(st.integers(1, 3), label="d")
    return {"theta": 0.5 * rng.standard_normal((draw(st.integers(1, 4)) + heun, d, d)), "d": d}


def _errors_net(draw):
    kw = _net(draw)
    kw.pop("depth", None)
    return kw


def _weights(draw):
    return {"depth": draw(st.integers(1, 6)), "d": draw(st.integers(1, 3)), "rng": seed(draw),
            "scheme": draw(st.sampled_from(["euler", "heun"])), "scale": draw(st.floats(0.0, 2.0))}


def _pack(V, W, b):
    """:meth:`Residual.pack` of the perceptron family of width 2."""
    return resnet.mlp(2).pack(V, W, b)


def _unpack(theta, d):
    """:meth:`Residual.unpack` of the perceptron family of width 2."""
    return resnet.mlp(2).unpack(theta, d)


def _adam_step(params, grad, lr):
    """Two steps of Adam (the second with ``lr``): the state update and the override."""
    opt = training.Adam(0.1)
    opt.step(params, grad)
    return opt.step(params, grad, lr=lr)


def _one_d(draw):
    rng = seed(draw)
    residual = draw(st.sampled_from(["tanh", "linear", "bias", "mlp"]), label="residual")
    residual = resnet.mlp(2) if residual == "mlp" else residual
    return rng, residual


def _layer_derivative(draw):
    rng, residual = _one_d(draw)
    return {"x": rng.standard_normal(draw(st.integers(1, 5))), "theta_n": _theta(rng, 1, 1, residual)[0],
            "residual": residual}


def _fit_1d(draw):
    rng = seed(draw)
    r = resnet.mlp(2)
    x0 = np.linspace(-1, 1, draw(st.integers(1, 4)))
    return {"x0": x0, "target": -0.5 * x0, "residual": r,
            "theta0": training.init_mlp(r, draw(st.integers(1, 3)), 1, rng), "setup": FIG1}


def _deepen_mlp(draw):
    r = resnet.mlp(draw(st.integers(1, 3), label="width"))
    n, d = draw(st.integers(1, 4), label="n"), draw(st.integers(1, 3), label="d")
    return {"theta": seed(draw).standard_normal((n, r.param_shape(d)[0])), "depth": n + draw(st.integers(0, 4)),
            "d": d, "residual": r, "rng": seed(draw)}


def _fig1_measure(draw):
    rng = seed(draw)
    r = resnet.mlp(2)
    N = draw(st.integers(1, 3))
    return {"theta_pos": training.init_mlp(r, N, 1, rng) + 0.1, "theta_neg": 0.3 * rng.standard_normal((N, 6)),
            "residual": r, "setup": FIG1, "losses": (None, np.ones(2)), "seconds": {"x": 1.0}}


def _fig1_measured(draw):
    return {"measured": {"mse_pos": 1e-4, "mse_neg": draw(st.floats(1e-5, 1.0)), "crossings_pos": 0,
                         "crossings_neg": 3, "min_fprime_over_N_neg": -2.0, "ode_crossings_pos": 0,
                         "ode_crossings_neg": 0, "ode_mse_neg": 0.1, "increasing_fit_floor_neg": 0.08},
            "mse_tol": 1e-3}


def _fig4_verdict(draw):
    e = draw(st.floats(0.0, 0.5))
    return {"depths": [2, 4, 8], "medians": {f"{s}-{m}": [e, 0.05, 0.01] for s, m in trained.VARIANTS},
            "thresholds": dict(trained.FIG4_THRESHOLDS)}


def _moons(n_name="n"):
    return lambda draw: {n_name: draw(st.integers(2, 30)), "noise": draw(st.floats(0.0, 0.5)), "rng": seed(draw)}


def _logistic(draw):
    rng = seed(draw)
    B, d = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    return {"xN": rng.standard_normal((B, d)), "w": rng.standard_normal(d), "c": draw(st.floats(-1, 1)),
            "labels": rng.integers(0, 2, B).astype(float)}


def _loss_gradient(draw):
    kw = _net(draw)
    kw.pop("depth", None)
    kw["x0"] = np.atleast_2d(kw["x0"])
    kw["grad_xN"] = seed(draw).standard_normal(kw["x0"].shape)
    kw["method"] = draw(st.sampled_from(["backprop", "adjoint"]))
    if draw(st.booleans(), label="xN given"):
        kw["xN"] = resnet.final_state(kw["x0"], kw["theta"], kw["residual"], kw["scheme"])
    return kw


def _trajectories(draw):
    rng = seed(draw)
    return {"trajectories": rng.standard_normal((draw(st.integers(1, 4)), draw(st.integers(2, 5))))}


SPECS = {
    # theory.resnet
    "forward": Spec(resnet.forward, _net, check=_traj_shape("x0")),
    "reverse": Spec(resnet.reverse, lambda draw: _net(draw, "xN"), check=_traj_shape("xN")),
    "final_state": Spec(resnet.final_state, _net),
    "gradient": Spec(resnet.gradient, _gradient),
    "interpolating_ode": Spec(resnet.interpolating_ode, _ode, examples=25),
    "mlp": Spec(resnet.mlp, lambda draw: {"width": draw(st.integers(1, 5))}),
    "Residual": Spec(resnet.Residual, lambda draw: {"name": "x", "code": 0, "formula": "f", "width": 0}),
    "Scheme": Spec(resnet.Scheme, lambda draw: {"name": "heun", "order": 2, "extra_slices": 1, "forward": "a",
                                                 "reverse": "b"}),
    "Residual.pack": Spec(_pack, lambda draw: (lambda r, k, d: {
        "V": r.standard_normal((k, d, 2)), "W": r.standard_normal((k, 2, d)), "b": r.standard_normal((k, 2))})(
        seed(draw), draw(st.integers(1, 3)), draw(st.integers(1, 3)))),
    "Residual.unpack": Spec(_unpack, lambda draw: (lambda d: {
        "theta": seed(draw).standard_normal((draw(st.integers(1, 3)), 6 * d)), "d": d})(draw(st.integers(1, 3)))),
    # theory.resnet.errors
    "smooth_weights": Spec(errors.smooth_weights, _weights),
    "iid_weights": Spec(errors.iid_weights, _weights),
    "reconstruction_error": Spec(errors.reconstruction_error, _errors_net),
    "adjoint_gradient_error": Spec(errors.adjoint_gradient_error, lambda draw: (
        lambda kw: {k: v for k, v in kw.items() if k not in ("method", "depth")})(_gradient(draw))),
    "heun_constants": Spec(errors.heun_constants, lambda draw: _square(draw, heun=True)),
    "euler_constants": Spec(errors.euler_constants, _square),
    "error_table": Spec(errors.error_table, lambda draw: {
        "scheme": draw(st.sampled_from(["euler", "heun"])), "weights": draw(st.sampled_from(["smooth", "iid"])),
        "grid": [2, draw(st.integers(3, 6))], "seeds": [draw(st.integers(0, 5))], "d": draw(st.integers(1, 3)),
        "residual": draw(st.sampled_from(["tanh_out", "tanh", "linear"]))}, examples=20),
    # theory.resnet.training
    "Adam": Spec(training.Adam, lambda draw: {"lr": draw(st.floats(1e-3, 1.0)), "beta1": 0.9, "beta2": 0.999,
                                               "eps": 1e-8}),
    "Adam.step": Spec(_adam_step, lambda draw: (lambda r, n: {
        "params": r.standard_normal(n), "grad": r.standard_normal(n), "lr": draw(st.floats(1e-3, 1.0))})(
        seed(draw), draw(st.integers(1, 4)))),
    "two_moons": Spec(training.two_moons, _moons()),
    "lift": Spec(training.lift, lambda draw: {"X": seed(draw).standard_normal((draw(st.integers(1, 4)), 2)),
                                              "d": draw(st.integers(2, 5))}),
    "logistic_head": Spec(training.logistic_head, _logistic),
    "loss_gradient": Spec(training.loss_gradient, _loss_gradient),
    "layer_derivative": Spec(training.layer_derivative, _layer_derivative),
    "crossing_count": Spec(training.crossing_count, _trajectories),
    "first_crossing_layer": Spec(training.first_crossing_layer, _trajectories),
    "increasing_fit_floor": Spec(training.increasing_fit_floor, lambda draw: {
        "y": seed(draw).standard_normal(draw(st.integers(1, 6)))}),
    "refine_slices": Spec(training.refine_slices, lambda draw: {
        "theta": seed(draw).standard_normal((draw(st.integers(2, 4)), 2)), "k": draw(st.integers(1, 4))}),
    "init_mlp": Spec(training.init_mlp, lambda draw: {
        "residual": resnet.mlp(draw(st.integers(1, 3))), "n_slices": draw(st.integers(1, 4)),
        "d": draw(st.integers(1, 3)), "rng": seed(draw)}),
    "deepen_mlp": Spec(training.deepen_mlp, _deepen_mlp),
    "Fig1Config": Spec(trained.Fig1Config, lambda draw: {
        "N": 2, "width": 2, "n_points": 3, "lr": 0.05, "warmup": 1, "steps": 2, "seed": 0, "ode_refine": 1}),
    "fit_1d": Spec(trained.fit_1d, _fit_1d, examples=20),
    "fig1_measure": Spec(trained.fig1_measure, _fig1_measure, examples=10),
    "fig1_experiment": Spec(trained.fig1_experiment, lambda draw: {"setup": draw(st.sampled_from([FIG1, FIG1_GROWN]))},
                            examples=3),
    "fig1_measured_verdict": Spec(trained.fig1_measured_verdict, _fig1_measured),
    "Fig4Config": Spec(trained.Fig4Config, lambda draw: {
        "depths": (2, 4), "seeds": (0,), "width": 2, "d": 2, "noise": 0.1, "n_train": 8, "n_test": 8, "lr": 0.02,
        "steps": 2}),
    "train_moons": Spec(trained.train_moons, lambda draw: {
        "N": draw(st.integers(1, 3)), "scheme": draw(st.sampled_from(["euler", "heun"])),
        "method": draw(st.sampled_from(["backprop", "adjoint"])), "seed": draw(st.integers(0, 3)), "setup": FIG4},
        examples=20),
    "fig4_table": Spec(trained.fig4_table, lambda draw: {"setup": FIG4}, examples=3),
    "fig4_table_verdict": Spec(trained.fig4_table_verdict, _fig4_verdict),
}


@pytest.fixture(scope="module", autouse=True)
def _compiled_kernels():
    """Compile (or load from the cache) every kernel before the timed calls: a cold JIT compile
    inside one call could pass the harness's TIMEOUT on a loaded machine."""
    x, theta = np.ones((2, 2)), np.full((3, 2, 2), 0.1)
    for scheme in ("euler", "heun"):
        resnet.forward(x, theta, "tanh", scheme)
        resnet.reverse(x, theta, "tanh", scheme)
        resnet.final_state(x, theta, "tanh", scheme)
        for method in ("backprop", "adjoint"):
            resnet.gradient(x, theta, x, "tanh", scheme, method)
    resnet.interpolating_ode(x[0], theta, "tanh")


def test_every_public_function_is_fuzzed():
    names = public_callables(resnet) | public_callables(errors) | public_callables(training) | TRAINED
    assert TRAINED <= public_callables(trained)
    assert names - EXCLUDED == {k for k in SPECS if "." not in k}  # plus the methods Adam.step, Residual.(un)pack


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])
