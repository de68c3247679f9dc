"""The oracle on class-based code and under a memory cap: ``record_states`` (the states of an nn.Module's blocks),
``verify(..., outputs="last")``, the memory cap per case and ``torch.no_grad()`` around the user's function
(theory/oracle/_torch.py, theory/oracle/_guard.py). The torch tests skip without torch."""

import math
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import oracle
from theory.oracle import _guard

MiB = 2**20

#: the kernels whose user function computes derivatives (autograd in user code)
GRADIENT_KERNELS = {"resnet_gradient", "resnet_gradient_adjoint", "linear_gradient", "implicit_gradient",
                    "momentum_gradient", "topk_jacobian"}


def _own(name):
    k = oracle.kernel(name)
    return k.implementation


def _last(name):
    """The package's own implementation of a trajectory kernel, returning the last state of each trajectory."""
    k = oracle.kernel(name)

    def call(**kw):
        out = oracle._core._as_outputs(k, k.implementation(**kw))
        return tuple(np.asarray(o)[-1] if n in k.trajectory else o for o, n in zip(out, k.outputs)) \
            if len(k.outputs) > 1 else np.asarray(out[0])[-1]
    return call


def _grow(fn, chunk=8 * MiB, total=1024 * MiB, catch=False):
    """``fn`` after allocating (and touching) ``total`` bytes in a Python loop; ``catch``: it swallows every
    interruption and goes on."""
    def call(**kw):
        keep = []
        while sum(a.nbytes for a in keep) < total:
            try:
                keep.append(np.ones(chunk // 8))
                time.sleep(1e-3)  # a loop doing some work between its allocations
            except BaseException:  # noqa: BLE001 - a function that swallows the interruption
                if not catch:
                    raise
                keep.clear()
                break
        return fn(**kw)
    return call


# ----------------------------------------------------------------------------------------------
# declarations


def test_gradient_kernels_are_declared_once_on_the_kernels():
    assert {n for n in oracle.kernels() if oracle.kernel(n).gradient} == GRADIENT_KERNELS


def test_trajectory_outputs_are_declared_outputs_with_a_depth_axis():
    declared = {n: oracle.kernel(n).trajectory for n in oracle.kernels() if oracle.kernel(n).trajectory}
    assert set(declared) == {"resnet_forward", "momentum_forward", "scaling_forward", "implicit_forward"}
    for name, outs in declared.items():
        k = oracle.kernel(name)
        shapes = {a.name: a.shape for a in k.returns}
        for out in outs:
            assert out in k.outputs
            assert shapes[out].startswith(("(N+1", "(L+1")), (name, out, shapes[out])


# ----------------------------------------------------------------------------------------------
# outputs="last"


@pytest.mark.parametrize("name", ["resnet_forward", "momentum_forward", "scaling_forward", "implicit_forward"])
def test_last_state_mode_passes_the_packages_own_last_rows(name):
    result = oracle.verify(name, _last(name), outputs="last")
    assert result.ok, result.report()
    assert result.count("pass") + result.count("inconclusive") == len(result.rows)


def test_last_state_mode_fails_a_wrong_last_state_and_uses_the_trajectory_tolerance():
    k = oracle.kernel("resnet_forward")
    bad = oracle.verify("resnet_forward", lambda **kw: _last("resnet_forward")(**kw) * (1 + 1e-7),
                        outputs="last", cases=["*_linear_*"])
    assert bad.exit_code == 1 and all(r.verdict == "FAIL" for r in bad.rows)
    case = next(c for c in k.cases() if c.name == "euler_linear_N10")
    full = oracle.reference_outputs(k, case.inputs)
    row = next(r for r in bad.rows if r.case == case.name)
    assert row.tol == pytest.approx(float(k.tolerance(case.inputs, full, np.finfo(float).eps)[0]), rel=0, abs=0)
    assert row.scale == pytest.approx(float(np.max(np.abs(full[0][-1]))))


def test_a_last_state_returned_in_the_default_mode_is_an_error_naming_the_option():
    result = oracle.verify("resnet_forward", _last("resnet_forward"), cases=["euler_linear_N10"])
    assert result.exit_code == 2
    assert "outputs='last'" in result.rows[0].message and "shape (4,)" in result.rows[0].message


@pytest.mark.parametrize("bad", ["first", "", None, 1, "LAST"])
def test_outputs_is_validated_by_name(bad):
    with pytest.raises(oracle.OracleInputError, match="`outputs`"):
        oracle.verify("resnet_forward", _own("resnet_forward"), outputs=bad)


def test_last_state_mode_on_a_kernel_without_trajectory_names_the_kernels_that_have_one():
    with pytest.raises(oracle.OracleInputError, match="no trajectory output.*resnet_forward"):
        oracle.verify("isotonic_regression", _own("isotonic_regression"), outputs="last")


# ----------------------------------------------------------------------------------------------
# the memory cap


def test_a_function_growing_beyond_the_cap_in_a_python_loop_is_stopped_with_the_figures():
    cap = 64 * MiB
    result = oracle.verify("resnet_forward", _grow(_own("resnet_forward")), memory_cap=cap,
                           cases=["euler_linear_N1", "euler_linear_N10"])
    assert [r.verdict for r in result.rows] == ["ERROR", "ERROR"] and result.exit_code == 2
    message = result.rows[0].message
    assert "memory cap of 64.0 MiB" in message and "grew by" in message
    grown = float(message.split("grew by ")[1].split(" MiB")[0]) * MiB
    assert cap <= grown < 1024 * MiB  # stopped long before the loop's 1 GiB (the figure is rounded to 0.1 MiB)


def test_the_exception_carries_the_cap_and_the_growth_as_numbers():
    with pytest.raises(_guard.MemoryCapExceeded) as info:
        oracle._core._call_user(oracle.kernel("resnet_forward"), oracle.kernel("resnet_forward").cases()[0],
                                _grow(lambda **kw: None), {}, (), 32 * MiB)
    assert info.value.cap == 32 * MiB and 32 * MiB < info.value.reached < 1024 * MiB
    assert isinstance(info.value, BaseException) and not isinstance(info.value, Exception)


def test_a_function_that_swallows_the_interruption_is_still_an_error():
    result = oracle.verify("resnet_forward", _grow(_own("resnet_forward"), catch=True), memory_cap=64 * MiB,
                           cases=["euler_linear_N1"])
    assert result.rows[0].verdict == "ERROR" and "memory cap" in result.rows[0].message


def test_the_case_after_a_stopped_one_runs_normally():
    """No interruption outlives its call: the next case of the run, and the next run, pass."""
    state = {"calls": 0}
    own = _own("resnet_forward")

    def first_grows(**kw):
        state["calls"] += 1
        return (_grow(own) if state["calls"] == 1 else own)(**kw)

    result = oracle.verify("resnet_forward", first_grows, memory_cap=64 * MiB,
                           cases=["euler_linear_N1", "euler_linear_N10", "heun_tanh_N100"])
    assert [r.verdict for r in result.rows] == ["ERROR", "pass", "pass"], result.report()
    assert oracle.verify("isotonic_regression", _own("isotonic_regression")).ok


def test_a_sampler_growing_beyond_the_cap_is_stopped():
    result = oracle.verify("fgn", _grow(_own("fgn")), memory_cap=64 * MiB, cases=["fgn_H0.5*"])
    assert all(r.verdict == "ERROR" and "memory cap" in r.message for r in result.rows)


def test_no_cap_and_the_default_cap_let_a_normal_function_pass():
    for cap in (None, math.inf, 4 * 2**30):
        assert oracle.verify("isotonic_regression", _own("isotonic_regression"), memory_cap=cap).ok


def test_the_default_cap_of_a_case_is_the_floor_or_a_multiple_of_its_arrays():
    assert _guard.case_memory_cap(None, 0) == oracle.MEMORY_CAP
    assert _guard.case_memory_cap(None, 2**30) == oracle.MEMORY_CAP_FACTOR * 2**30
    assert _guard.case_memory_cap(5.0, 2**40) == 5.0


@pytest.mark.parametrize("bad", [0, -1, math.nan, -math.inf, True, "2GiB", [1]])
def test_memory_cap_is_validated_by_name(bad):
    with pytest.raises(oracle.OracleInputError, match="`memory_cap`"):
        oracle.verify("isotonic_regression", _own("isotonic_regression"), memory_cap=bad)


def test_resident_bytes_is_a_positive_count():
    now = _guard.resident_bytes()
    assert isinstance(now, int) and now > 0


@pytest.mark.parametrize("text, expected", [("4GiB", 4 * 2**30), ("500 MB", 5e8), ("1e9", 1e9), ("inf", math.inf),
                                            ("none", math.inf), ("1.5kib", 1536), ("7B", 7)])
def test_parse_memory_cap(text, expected):
    assert _guard.parse_memory_cap(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "0", "-1GiB", "4XB", "nan", "1e400", "GiB"])
def test_parse_memory_cap_names_the_option(bad):
    with pytest.raises(oracle.OracleInputError, match="--memory-cap"):
        _guard.parse_memory_cap(bad)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False), st.sampled_from(sorted(_guard.MEMORY_UNITS)),
       st.sampled_from(["", " "]))
def test_fuzz_parse_memory_cap_is_number_times_unit(value, unit, space):
    assert _guard.parse_memory_cap(f"{value!r}{space}{unit}") == value * _guard.MEMORY_UNITS[unit]


def test_cli_options_are_validated_with_exit_2_and_no_traceback(capsys):
    from theory.cli import main

    spec = ["oracle", "verify", "isotonic_regression", "scipy.optimize:isotonic_regression"]
    assert main(spec + ["--memory-cap", "lots"]) == 2
    assert "--memory-cap expects a positive size" in capsys.readouterr().err
    assert main(spec + ["--outputs", "last"]) == 2
    assert "no trajectory output" in capsys.readouterr().err


def test_cli_memory_cap_stops_a_growing_function(tmp_path, monkeypatch, capsys):
    from theory.cli import main

    (tmp_path / "oracle_grower.py").write_text(
        "import numpy as np\n"
        "from theory.oracle import kernel\n"
        "def fn(**kw):\n"
        "    keep = [np.ones(2**20) for _ in range(128)]\n"
        "    return kernel('resnet_forward').implementation(**kw)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["oracle", "verify", "resnet_forward", "oracle_grower:fn", "--case", "euler_linear_N1",
                 "--memory-cap", "32MiB"]) == 2
    assert "memory cap of 32.0 MiB" in capsys.readouterr().out
    assert main(["oracle", "verify", "resnet_forward", "oracle_grower:fn", "--case", "euler_linear_N1",
                 "--memory-cap", "inf"]) == 0


# ----------------------------------------------------------------------------------------------
# torch: no_grad around the user's function, record_states


def test_record_states_without_torch_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(oracle.OracleInputError, match=r"pip install 'theory\[oracle\]'"):
        oracle.record_states(object())


def test_the_oracle_does_not_import_torch():
    code = ("import sys; from theory import oracle; "
            "assert oracle.verify('isotonic_regression', oracle.kernel('isotonic_regression').implementation).ok; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "False", out.stderr


def test_non_gradient_kernels_run_under_no_grad_and_gradient_kernels_with_grad():
    torch = pytest.importorskip("torch")
    seen = {}

    def spy(name):
        own = _own(name)

        def call(**kw):
            seen[name] = torch.is_grad_enabled()
            return own(**kw)
        return call

    for name in ("resnet_forward", "resnet_gradient", "fgn", "topk_jacobian"):
        oracle.verify(name, spy(name), cases=[oracle.kernel(name).cases()[0].name])
    assert seen == {"resnet_forward": False, "resnet_gradient": True, "fgn": False, "topk_jacobian": True}
    assert torch.is_grad_enabled()


_GRAPH_SCRIPT = """
import contextlib, json, sys
import torch
from theory import oracle

own = oracle.kernel("resnet_forward").implementation
grad = {}


def iterate(force, **kw):
    K = torch.ones(64, 64, dtype=torch.float64, requires_grad=True)
    with torch.enable_grad() if force else contextlib.nullcontext():
        for _ in range(20000):  # sin saves its input for the backward: 32 KiB per step with a graph, 625 MiB
            K = torch.sin(K)
    grad[force] = K.requires_grad
    return own(**kw)


cap = 128 * 2**20
plain = oracle.verify("resnet_forward", lambda **kw: iterate(False, **kw), memory_cap=cap, cases=["euler_linear_N10"])
forced = oracle.verify("resnet_forward", lambda **kw: iterate(True, **kw), memory_cap=cap, cases=["euler_linear_N10"])
print(json.dumps({"plain_ok": plain.ok, "plain_report": plain.report(), "grad": {str(k): v for k, v in grad.items()},
                  "forced_verdict": forced.rows[0].verdict, "forced_message": forced.rows[0].message}))
"""


def test_a_torch_graph_is_not_built_under_no_grad_and_is_stopped_when_forced():
    """A loop over a requires_grad tensor (a Sinkhorn-like iteration without torch.no_grad() of its own) builds
    no graph under the oracle; the same loop with gradients forced on holds a graph that passes the cap.

    Run in a fresh interpreter: the cap watches the growth of the process's resident memory, and memory that
    earlier tests of this session freed (and the allocator kept) would be reused without growing it."""
    import json
    import subprocess
    import sys

    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", _GRAPH_SCRIPT], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["plain_ok"], out["plain_report"]
    assert out["grad"] == {"False": False}  # no graph under the oracle; the forced loop stopped inside (no True)
    assert out["forced_verdict"] == "ERROR" and "memory cap of 128.0 MiB" in out["forced_message"]


def _nets():
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class Step(nn.Module):
        def __init__(self, w):
            super().__init__()
            self.w = nn.Parameter(w)

        def forward(self, x):
            return x + 0.1 * torch.tanh(self.w @ x)

    class Net(nn.Module):
        def __init__(self, n=3):
            super().__init__()
            self.embed = nn.Identity()
            self.layers = nn.ModuleList(Step(torch.eye(2, dtype=torch.float64) * (i + 1)) for i in range(n))

        def forward(self, x):
            x = self.embed(x)
            for layer in self.layers:
                x = layer(x)
            return x
    return torch, Net, Step


def test_record_states_stacks_the_input_and_every_block_output():
    torch, Net, _ = _nets()
    net = Net()
    x0 = torch.tensor([1.0, -2.0], dtype=torch.float64)
    states = oracle.record_states(net)(x0)
    assert states.shape == (4, 2)
    assert torch.equal(states[0], x0) and torch.equal(states[-1], net(x0))
    x = x0
    for n, layer in enumerate(net.layers):
        x = layer(x)
        assert torch.equal(states[n + 1], x)
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in net.modules())  # hooks removed
    for blocks in ("layers", list(net.layers)):
        assert torch.equal(oracle.record_states(net, blocks=blocks)(x0), states)
    seq = torch.nn.Sequential(*[layer for layer in net.layers])
    assert torch.equal(oracle.record_states(seq)(x0), states)


def test_record_states_of_a_momentum_block_gives_both_trajectories():
    """A class-based Momentum ResNet whose blocks map (x, v) to (x, v) passes momentum_forward."""
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class MomentumBlock(nn.Module):
        def __init__(self, theta, residual, gamma):
            super().__init__()
            self.theta = nn.Parameter(theta.clone())
            self.residual, self.gamma = residual, gamma

        def forward(self, x, v):
            f = {"linear": lambda: self.theta @ x, "tanh": lambda: torch.tanh(self.theta @ x),
                 "tanh_out": lambda: self.theta @ torch.tanh(x)}[self.residual]()
            v = self.gamma * v + (1 - self.gamma) * f
            return x + v, v

    class MomentumNet(nn.Module):
        def __init__(self, theta, residual, gamma):
            super().__init__()
            self.blocks = nn.ModuleList(MomentumBlock(t, residual, gamma) for t in theta)

        def forward(self, x, v):
            for b in self.blocks:
                x, v = b(x, v)
            return x

    def fn(x0, v0, theta, residual, gamma):
        t = {k: torch.from_numpy(np.ascontiguousarray(a)) for k, a in (("x0", x0), ("v0", v0), ("theta", theta))}
        return oracle.record_states(MomentumNet(t["theta"], residual, gamma))(t["x0"], t["v0"])

    result = oracle.verify("momentum_forward", fn, cases=[c.name for c in oracle.kernel("momentum_forward").cases()
                                                         if c.inputs["theta"].shape[0] <= 1000
                                                         and c.inputs["residual"] in ("linear", "tanh", "tanh_out")])
    assert result.ok, result.report()


def test_record_states_validation_names_the_argument():
    torch, Net, Step = _nets()
    nn = torch.nn
    with pytest.raises(oracle.OracleInputError, match="`module` must be a torch.nn.Module"):
        oracle.record_states(lambda x: x)
    with pytest.raises(oracle.OracleInputError, match="`blocks`: Net has no attribute 'body'"):
        oracle.record_states(Net(), blocks="body")
    with pytest.raises(oracle.OracleInputError, match="`blocks`: 'embed' is a single Identity"):
        oracle.record_states(Net(), blocks="embed")
    with pytest.raises(oracle.OracleInputError, match="`blocks`.*empty"):
        oracle.record_states(Net(0))
    with pytest.raises(oracle.OracleInputError, match="`blocks`: item 1 is a int"):
        oracle.record_states(Net(), blocks=[Step(torch.eye(2)), 3])
    with pytest.raises(oracle.OracleInputError, match="`blocks` must be None"):
        oracle.record_states(Net(), blocks=3)

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.ModuleList([nn.Identity()]), nn.Sequential(nn.Identity())

    with pytest.raises(oracle.OracleInputError, match="several \\(a, b\\)"):
        oracle.record_states(Two())
    with pytest.raises(oracle.OracleInputError, match="no nn.ModuleList"):
        oracle.record_states(Step(torch.eye(2)))


def test_record_states_run_time_errors_are_errors_of_the_case():
    torch, Net, Step = _nets()
    nn = torch.nn
    unused = Step(torch.eye(2, dtype=torch.float64))
    with pytest.raises(oracle.OracleInputError, match="called none of its 1 blocks"):
        oracle.record_states(Net(), blocks=[unused])(torch.zeros(2, dtype=torch.float64))

    class Dict(nn.Module):
        def forward(self, x):
            return {"x": x}

    with pytest.raises(oracle.OracleInputError, match="output of block call 0.*dict"):
        oracle.record_states(nn.Sequential(Dict()))(torch.zeros(2))


def test_the_howto_states_the_declared_figures_and_kernels():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "howto" / "oracle.md").read_text(encoding="utf-8")
    assert f"`MEMORY_CAP` = {oracle.MEMORY_CAP // 2**30} GiB" in doc
    assert f"`MEMORY_CAP_FACTOR` = {oracle.MEMORY_CAP_FACTOR} times" in doc
    assert f"every {_guard._POLL * 1000:g} ms" in doc
    for name in oracle.kernels():
        k = oracle.kernel(name)
        if k.gradient or k.trajectory:
            assert f"`{name}`" in doc, name
