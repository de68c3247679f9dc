"""The array backends of the scale experiments (theory.backends): NumPy and PyTorch agree, bad input is refused.

Every experiment with a ``backend`` field runs at small sizes on both backends (the same NumPy draws)
and the results agree to 1e-10 in float64 and to the stated tolerance in float32. Only the CPU
device is exercised: a CUDA device is selected by the same code path with ``device="cuda"``, and is
refused here where PyTorch sees none.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from theory.backends import FLOAT32_ATOL, FLOAT64_ATOL, Backend, float32_tolerance, resolve, torch_available
from theory.experiments import experiment, experiments
from _data import skip_without_digits

needs_torch = pytest.mark.skipif(not torch_available(),
                                 reason="PyTorch is not installed (pip install 'theory[gpu]'): torch backend untested")


pytestmark = pytest.mark.usefixtures("torch_one_thread")  # tiny tensors: one intra-op thread (conftest)


#: small configs of every experiment that takes a backend (a test below asserts the list is complete)
SMALL = {
    "scaling.fig7": dict(hurst=(0.3, 0.8), L=60, d=6, draws=4),
    "scaling.fig7_fine": dict(hurst=(0.3, 0.8), L=60, d=6, draws=4),
    "scaling.fig7_cell": dict(depth=60, width=6, draws=3, beta=0.45, hurst=0.7),
    "scaling.fig7_grid": dict(hurst=(0.2, 0.6), beta=(0.3, 0.6, 0.9), L=50, d=6, draws=2, n_inputs=3),
    "scaling.fig2_explicit": dict(runs=24, d=8, L=40, chunk=10),
    "resnet_node.fig3c": dict(depths=(4, 8, 16, 32, 64), d=3, width=4, batch=5, seeds=(0, 1)),
    "resnet_node.fig4": dict(depths=(2, 4), seeds=(0, 1), width=4, d=3, n_train=32, n_test=64, steps=15),
    "resnet_node.fig3c_digits": dict(depths=(2, 3, 4, 5), seeds=(0, 1), width=3, epochs=2, decay_every=1, batch=128,
                                     eval_batch=16),
    "scaling.fig8": dict(L=30, d=4, n_in=5, n=10, steps=12, update_noise=0.5),
    "scaling.fig1": dict(seeds=(0, 1, 2), plan=((0.25, (10, 20)), (0.5, (10, 20)), (1.0, (20,))), d=6,
                         figure_depths=(10, 20)),
    "scaling.fig3": dict(seeds=(0, 1, 2), plan=((0.25, (10, 20)), (0.5, (10, 20)), (1.0, (20,))), d=6,
                         figure_depths=(10, 20), quantity="p"),
    "scaling.fig2": dict(runs=64, d=10, L=50),
    "scaling.fig45": dict(seeds=(0, 1, 2), grid=(8, 16, 24), d=6),
    "scaling.fig5": dict(seeds=(0, 1, 2), grid=(8, 16, 24), d=6),
    "implicit_reg.fig1": dict(grid=(2, 4, 8), ref=32, seeds=(0, 1), record=(10, 20), chunk=5, n=6, d=3, m=4),
    "implicit_reg.fig2": dict(depths=(4, 8), seeds=(0, 1), n=4, d=3, m=6, record=(10, 30, 60)),
    "implicit_reg.table1_digits": dict(depths=(3, 6), seeds=(0,), n_train=30, m=4, lr=0.02, steps=10),
    "scaling.fig9": dict(hurst=(0.3, 0.8), beta=(0.3, 1.0), lrs=(1e-2,), L=12, d=5, epochs=2, batch=32, n_train=64),
}
#: experiments that refuse float32, with the reason (the float32 test asserts the refusal)
FLOAT64_ONLY = {"resnet_node.fig3c": "adjoint errors down to 1e-7 relative",
                "resnet_node.fig3c_digits": "adjoint errors down to 1e-7 relative",
                "implicit_reg.table1_digits": "its verdict reads the roughness of nearly tied weights"}
#: experiments whose measured figures cancel: their float64 agreement is limited by eps / (smallest figure).
#: fig3c's smallest adjoint error is 5.5e-7, a difference of two gradients each rounded at 1e-16 in another
#: order by each backend: 1e-16 / 5.5e-7 = 2e-10 on its log, which moves the slope's confidence bounds by 1.7e-10
FLOAT64_ATOL_CANCELLING = {"resnet_node.fig3c": 1e-9}
#: experiments that need a package beyond PyTorch (their tests skip without it)
NEEDS_DIGITS = {"resnet_node.fig3c_digits", "scaling.fig9", "implicit_reg.table1_digits"}


def _needs(name):
    if name in NEEDS_DIGITS:
        skip_without_digits()


def _arrays(result):
    """Every float array or number of a result (dataclass), flattened, in a fixed order."""
    out = []

    def walk(v):
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                if f.name != "config":
                    walk(getattr(v, f.name))
        elif isinstance(v, dict):
            for k in sorted(v, key=str):
                walk(v[k])
        elif isinstance(v, np.ndarray) and v.dtype.kind == "f":
            out.append(v.ravel())
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, float):
            out.append(np.array([v]))

    walk(result)
    return out


def _max_diff(a, b):
    A, B = _arrays(a), _arrays(b)
    assert len(A) == len(B) and len(A) > 0
    worst = 0.0
    for x, y in zip(A, B):
        assert x.shape == y.shape
        assert np.array_equal(np.isnan(x), np.isnan(y))
        ok = ~np.isnan(x)
        if ok.any():
            worst = max(worst, float(np.max(np.abs(x[ok] - y[ok]))))
    return worst


def test_every_backend_experiment_is_tested():
    with_backend = {n for n in experiments() if "backend" in experiment(n).fields}
    assert with_backend == set(SMALL)


@needs_torch
@pytest.mark.parametrize("name", sorted(SMALL))
def test_torch_float64_agrees_with_numpy(name):
    _needs(name)
    exp = experiment(name)
    ref = exp.run("check", **SMALL[name])
    got = exp.run("check", **SMALL[name], backend="torch", device="cpu")
    diff = _max_diff(ref, got)
    assert diff <= FLOAT64_ATOL_CANCELLING.get(name, FLOAT64_ATOL), f"{name}: max |numpy - torch| = {diff:.3g}"


@needs_torch
@pytest.mark.parametrize("name", sorted(SMALL))
def test_torch_float32_within_stated_tolerance(name):
    _needs(name)
    exp = experiment(name)
    if name in FLOAT64_ONLY:
        with pytest.raises(ValueError, match="`dtype`"):
            exp.run("check", **SMALL[name], backend="torch", dtype="float32")
        return
    ref = exp.run("check", **SMALL[name])
    got = exp.run("check", **SMALL[name], backend="torch", dtype="float32")
    diff = _max_diff(ref, got)
    assert diff <= FLOAT32_ATOL, f"{name}: max |numpy - torch float32| = {diff:.3g}"
    # float32 is really used: the results are not the float64 ones
    assert diff > 1e-12


@needs_torch
def test_numpy_backend_is_the_default_and_unchanged():
    """The check preset of every backend experiment defaults to NumPy; fig7_cell equals phase_diagram."""
    from theory.scaling.phase import phase_diagram

    for name in SMALL:
        c = experiment(name).presets["check"]
        assert (c.backend, c.device, c.dtype) == ("numpy", "cpu", "float64")
    r = experiment("scaling.fig7_cell").run("check", **SMALL["scaling.fig7_cell"])
    c = r.config
    pd = phase_diagram([c.hurst], [c.beta], L=c.depth, d=c.width, n_seeds=c.draws, rng=np.random.default_rng(c.seed))
    assert np.array_equal(r.hidden_draws, pd.hidden[0, 0]) and np.array_equal(r.gradient_draws, pd.gradient[0, 0])


@needs_torch
def test_chunked_grid_equals_unchunked():
    """A memory budget that forces a split over draws and betas gives the same grid."""
    from theory.backends.scaling import phase_grid

    b = resolve("torch")
    kw = dict(L=30, d=5, n_seeds=2, n_inputs=2, backend=b)
    full = phase_grid([0.3, 0.7], [0.3, 0.6, 0.9], rng=np.random.default_rng(1), **kw)
    # one (H, draw) pair with one or two betas per chunk
    small = phase_grid([0.3, 0.7], [0.3, 0.6, 0.9], rng=np.random.default_rng(1), memory=60_000, **kw)
    for x, y in zip(full, small):
        assert np.max(np.abs(x - y)) <= 1e-12
    with pytest.raises(ValueError, match="needs .* on the device"):
        phase_grid([0.3], [0.5], rng=np.random.default_rng(1), memory=1000, **kw)


@needs_torch
def test_device_draws_reproducible_and_fgn_covariance():
    """draws_on='device': same seed, same result; the device fGn has the fGn autocovariance."""
    import torch

    from theory.backends.scaling import fgn_torch
    from theory.fbm import autocovariance

    exp = experiment("scaling.fig2_explicit")
    a = exp.run("check", **SMALL["scaling.fig2_explicit"], backend="torch", draws_on="device")
    b = exp.run("check", **SMALL["scaling.fig2_explicit"], backend="torch", draws_on="device")
    c = exp.run("check", **dict(SMALL["scaling.fig2_explicit"], seed=3), backend="torch", draws_on="device")
    assert np.array_equal(a.h, b.h) and not np.array_equal(a.h, c.h)
    n, count, H = 64, 20_000, 0.8
    x = fgn_torch(n, H, count, torch.Generator().manual_seed(0), torch.device("cpu"), torch.float64).numpy()
    gamma = autocovariance(np.arange(4), H)
    for lag in range(4):
        prod = x[:, : n - lag] * x[:, lag:]
        emp = prod.mean()
        se = prod.mean(axis=1).std() / math.sqrt(count)
        assert abs(emp - gamma[lag]) <= 5 * se, (lag, emp, gamma[lag], se)


# ------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kw, name", [
    (dict(backend="jax"), "backend"),
    (dict(backend="torch", device="tpu"), "device"),
    (dict(backend="torch", device="cuda:x"), "device"),
    (dict(backend="numpy", device="cuda"), "device"),
    (dict(backend="numpy", dtype="float32"), "dtype"),
    (dict(backend="torch", dtype="float16"), "dtype"),
    (dict(backend="torch", dtype="bfloat16"), "dtype"),
])
def test_resolve_refuses(kw, name):
    if kw.get("backend") == "torch" and name != "dtype" and not torch_available():
        pytest.skip("PyTorch absent: the backend name is refused first")
    with pytest.raises(ValueError, match=f"`{name}`"):
        resolve(**kw)


def test_resolve_types_and_default():
    with pytest.raises(TypeError, match="`device`"):
        resolve("numpy", 0)
    assert resolve() == Backend("numpy", "cpu", "float64")


@needs_torch
def test_cuda_without_cuda_is_refused():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ValueError, match="`device`.*CUDA device PyTorch can see"):
        resolve("torch", "cuda")
    with pytest.raises(ValueError, match="`device` of theory.experiments.scaling.Fig7GridConfig"):
        experiment("scaling.fig7_grid").config_for("check", backend="torch", device="cuda")


@pytest.mark.parametrize("name", sorted(SMALL))
def test_configs_validate_backend_fields(name):
    exp = experiment(name)
    with pytest.raises(ValueError, match="`backend`"):
        exp.config_for("check", backend="gpu")
    with pytest.raises(ValueError, match="`dtype`"):
        exp.config_for("check", dtype="float16")
    if "draws_on" in exp.fields:
        with pytest.raises(ValueError, match="`draws_on`"):
            exp.config_for("check", draws_on="device")  # NumPy backend draws on the host only


def test_checks_never_use_the_backends():
    """The claim checks stay on the NumPy kernels: no file of checks/ names the backend layer or torch."""
    root = Path(__file__).resolve().parents[1] / "checks"
    for path in root.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "theory.backends" not in text and "import torch" not in text and 'backend="torch"' not in text, path


# ------------------------------------------------------------------------------------------- CLI


def _cli(args, capsys):
    from theory.cli import main

    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("args, word", [
    (["run", "scaling.fig7_grid", "--backend", "jax"], "`backend`"),
    (["run", "scaling.fig7_grid", "--backend", "torch", "--dtype", "float16"], "`dtype`"),
    (["run", "scaling.fig7_grid", "--device", "tpu"], "`device`"),
    (["run", "scaling.prop1", "--backend", "torch"], "no `backend` field"),
    (["run", "scaling.nope"], "no experiment named"),
    (["run", "scaling.fig7_grid", "--preset", "huge"], "--preset"),
    (["run", "scaling.fig7_grid", "--set", "L=abc"], "`L`"),
    (["run", "scaling.fig7_grid", "--set", "width=3"], "NAME=VALUE"),
])
def test_cli_run_bad_input_exit_2(args, word, capsys):
    if "--backend" in args and "torch" in args and not torch_available():
        pytest.skip("PyTorch absent")
    code, _, err = _cli(args, capsys)
    assert code == 2 and word in err, err


@needs_torch
def test_cli_run_cuda_without_cuda_exit_2(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    code, _, err = _cli(["run", "scaling.fig7_grid", "--device", "cuda"], capsys)
    assert code == 2 and "`device`" in err and "CUDA" in err


@needs_torch
def test_cli_run_torch(tmp_path, capsys):
    out = tmp_path / "run.json"
    code, text, _ = _cli(["run", "scaling.fig7_grid", "--backend", "torch", "--set", "hurst=0.3|0.7",
                          "--set", "beta=0.3:0.9:3", "--set", "L=40", "--set", "d=5", "--json", str(out)], capsys)
    assert code == 0 and "torch cpu float64" in text and "beta_star_hidden_H0.3" in text
    data = json.loads(out.read_text())
    assert data["backend"] == "torch cpu float64" and set(data["summary"]) >= {"beta_star_gradient_H0.7"}


def test_torch_absent_is_refused_with_the_extra(monkeypatch):
    import theory.backends as backends

    monkeypatch.setattr(backends, "torch_available", lambda: False)
    with pytest.raises(ValueError, match=r"`backend`.*theory\[gpu\]"):
        backends.resolve("torch")


@needs_torch
def test_float32_at_depth_1000():
    """The stated float32 tolerance (float32_tolerance, entry by entry) holds at the papers' depth, on both
    sides of the boundary and both panels; float64 stays within 1e-10 there."""
    exp = experiment("scaling.fig7_grid")
    kw = dict(hurst=(0.1, 0.9), beta=(0.2, 0.7, 1.3), L=1000, d=10, draws=1, n_inputs=2)
    ref = exp.run("check", **kw)
    assert ref.hidden.max() > 5 and ref.hidden.min() < -2  # both sides of the boundary, a small ratio
    got = exp.run("check", **kw, backend="torch", dtype="float32")
    for q in ("hidden", "gradient"):
        err = np.abs(getattr(ref, q) - getattr(got, q))
        assert np.all(err <= float32_tolerance(getattr(ref, q))), (q, err.max())
        assert err.max() > 1e-9
    assert _max_diff(ref, exp.run("check", **kw, backend="torch")) <= FLOAT64_ATOL


def test_paper_grid_plan_fits_a_gpu_or_is_refused():
    """The paper's Figure 7 grid (51 x 70, 5 draws, 64 inputs, L = 1000, d = 40, both panels) is split to
    fit the memory given (no allocation here); a budget below one (draw, beta) is refused with the size."""
    from theory.backends.scaling import phase_grid_plan

    c = experiment("scaling.fig7_grid").presets["paper"]
    kw = dict(L=c.L, d=c.d, n_seeds=c.draws, n_inputs=c.n_inputs, gradients=True, dtype="float64")
    g, b, nbytes = phase_grid_plan(len(c.hurst), len(c.beta), memory=39e9, **kw)  # half an H100's memory
    assert nbytes <= 39e9 and math.ceil(len(c.hurst) * c.draws / g) * math.ceil(len(c.beta) / b) <= 2
    g, b, nbytes = phase_grid_plan(len(c.hurst), len(c.beta), memory=4e9, **kw)
    assert nbytes <= 4e9 and g >= 1 and b >= 1
    with pytest.raises(ValueError, match=r"`L` = 1000 .* needs 27\.1 MiB on the device"):
        phase_grid_plan(len(c.hurst), len(c.beta), memory=1e6, **kw)


@needs_torch
def test_explicit_chunk_too_large_is_refused():
    with pytest.raises(ValueError, match=r"`chunk` = 1000000 .* needs .* per chunk.*at most \d+ networks"):
        experiment("scaling.fig2_explicit").run("check", runs=1_000_000, chunk=1_000_000, d=100, L=1000,
                                                backend="torch")
