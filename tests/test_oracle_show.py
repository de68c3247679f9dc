"""The oracle as an implementer meets it: ``theory oracle show`` (call, shapes, dtypes, conventions, tolerance,
parameters, case names), case selection by glob, and cases generated at the user's parameters.

The contract tests hold every kernel to its declarations: the arguments it declares are exactly the keyword
arguments its cases call the user's function with, its declared outputs are its outputs, and every parameter it
declares generates cases that the package's own implementation passes."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from theory import oracle
from theory.cli import main
from theory.oracle import OracleInputError
from _data import run_with_sklearn

KERNELS = oracle.kernels()


def _called_with(k, case):
    """The keyword arguments the user's function receives for ``case``."""
    return set(k.prepare(case.inputs)) if k.prepare is not None else set(case.inputs)


@pytest.mark.parametrize("name", KERNELS)
def test_declared_arguments_are_the_call(name):
    k = oracle.kernel(name)
    assert k.arguments, f"{name} declares no arguments (theory.oracle.Argument)"
    assert k.returns, f"{name} declares no outputs"
    declared = [a.name for a in k.arguments]
    assert len(set(declared)) == len(declared)
    for case in k.cases():
        assert _called_with(k, case) == set(declared), case.name
    for a in k.arguments + k.returns:
        assert a.shape and a.dtype and a.meaning, (name, a)


@pytest.mark.parametrize("name", KERNELS)
def test_the_reference_returns_the_declared_outputs(name):
    """``Kernel.outputs`` comes from ``returns``: the package's own implementation returns that many arrays."""
    from theory.oracle._core import reference_outputs

    k = oracle.kernel(name)
    assert k.outputs == tuple(a.name for a in k.returns)
    if k.judge is not None:  # a sampler: its reference is a distribution, judged by a test statistic
        return
    case = min(k.cases(), key=lambda c: sum(np.size(v) for v in c.inputs.values()))
    assert len(reference_outputs(k, case.inputs)) == len(k.outputs)


def test_a_kernel_declares_its_outputs_once():
    from theory.oracle._core import Argument, Kernel

    out = Argument("x", "(n,)", "float64", "x")
    common = dict(name="synthetic", signature="fn() -> x", make_cases=list, reference=lambda: None,
                  tolerance=lambda inputs, ref, eps: (0.0,), rule="exact", why="a test")
    assert Kernel(**common, returns=(out,)).outputs == ("x",)
    with pytest.raises(ValueError, match="`returns` must declare its outputs once"):
        Kernel(**common)
    with pytest.raises(ValueError, match="`returns` must declare its outputs once"):
        Kernel(**common, returns=(out, out))
    with pytest.raises(ValueError, match="`trajectory` names \\['h'\\]"):
        Kernel(**common, returns=(out,), trajectory=("h",))


@pytest.mark.parametrize("name", KERNELS)
def test_conventions_name_existing_arguments(name):
    k = oracle.kernel(name)
    for c in k.conventions:
        assert c.topic and c.ours and c.alternatives and c.mapping, (name, c)
        if c.parameter:
            assert c.parameter in {a.name for a in k.arguments}, (name, c.parameter)


@pytest.mark.parametrize("name", KERNELS)
def test_show_prints_everything_an_implementer_needs(name):
    k = oracle.kernel(name)
    text = oracle.show(name)
    for a in k.arguments + k.returns:
        assert a.name in text and a.shape in text
    for c in k.conventions:
        assert " ".join(c.topic.split())[:30] in " ".join(text.split())
    assert " ".join(k.rule.split())[:40] in " ".join(text.split())
    for case in k.cases():
        assert case.name in text
    for p in k.parameters:
        assert p.name in text


@pytest.mark.parametrize("name", [n for n in KERNELS if oracle.kernel(n).parameters])
def test_parameters_generate_cases_the_package_passes(name):
    k = oracle.kernel(name)
    defaults = oracle.cases_at(k, {})
    assert defaults, name
    for p in k.parameters:
        inspect.signature(k.generate).bind(**{q.name: q.default for q in k.parameters})
        p.constraint.validate(p.default, p.name, name)
    result = oracle.verify(name, k.implementation, params={})
    assert result.ok, result.report()


def test_show_from_the_command_line(capsys):
    assert main(["oracle", "show", "isotonic_regression"]) == 0
    out = capsys.readouterr().out
    assert "fn(y, w, increasing)" in out and "random_n10" in out and "tolerance" in out
    assert main(["oracle", "show", "no_such_kernel"]) == 2
    assert "unknown kernel" in capsys.readouterr().err


def test_case_globs_select_and_a_glob_matching_nothing_is_named():
    k = oracle.kernel("isotonic_regression")
    chosen = [c.name for c in oracle.select_cases(k, ["random_n*", "n1"])]
    assert chosen == [c.name for c in k.cases() if c.name.startswith("random_n") or c.name == "n1"]
    with pytest.raises(OracleInputError, match="no case matching zz\\*"):
        oracle.select_cases(k, ["zz*"])
    from theory.isotonic import isotonic_regression

    r = oracle.verify("isotonic_regression", lambda y, w, increasing: isotonic_regression(y, w, increasing=increasing)[0],
                      cases=["random_n*"])
    assert r.ok and [row.case for row in r.rows] == ["random_n10", "random_n100", "random_n1000"]


def test_parameters_refused_by_name():
    fixed = next(n for n in KERNELS if not oracle.kernel(n).parameters) if not all(
        oracle.kernel(n).parameters for n in KERNELS) else None
    if fixed is not None:
        with pytest.raises(OracleInputError, match="no parameters to choose"):
            oracle.cases_at(oracle.kernel(fixed), {"n": 3})
    with_params = [n for n in KERNELS if oracle.kernel(n).parameters]
    if not with_params:
        pytest.skip("no kernel declares parameters yet")
    k = oracle.kernel(with_params[0])
    with pytest.raises(OracleInputError, match="has no parameter 'nope'"):
        oracle.cases_at(k, {"nope": 1})
    with pytest.raises(OracleInputError, match="exclude each other"):
        oracle.verify(k.name, k.implementation, params={}, vectors="somewhere")


def test_param_option_parsed_and_refused(capsys):
    assert main(["oracle", "verify", "isotonic_regression", "numpy:sort", "--param", "oops"]) == 2
    assert "NAME=V1,V2" in capsys.readouterr().err
    np.testing.assert_equal(oracle.kernel("isotonic_regression").outputs, ("x",))


# ----------------------------------------------------------------------------------------------
# scaling, hermite, signature, icl, sinkhorn and momentum kernels: the declared conventions, each mapping checked
# by an implementation of the other convention (passes with the mapping, fails without), and the cases at the
# user's parameters (same builder as the built-in ones, domains and limits refused by name, extremes, a fuzz)

import math  # noqa: E402
import warnings  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pathlib import Path  # noqa: E402

import _oracle_planted as planted  # noqa: E402 - tests/ is on sys.path (pytest's rootdir-less import)

ROOT = Path(__file__).resolve().parents[1]
OURS = ("scaling_forward", "hermite_coefficient", "signature", "signature_kernel", "icl_expected_loss", "sinkhorn",
        "sinkhorn_attention", "momentum_forward", "momentum_inverse", "momentum_gradient", "momentum_psi")


def _names(kernel, keep=lambda c: True):
    return {c.name for c in oracle.kernel(kernel).cases() if keep(c)}


def _failed(result):
    return {r.case for r in result.failures}


def test_declared_constants_are_the_packages():
    """The values the declarations repeat (they are needed before the package's modules are imported) are the
    package's own."""
    import theory.pl as pl
    import theory.resnet as resnet
    import theory.sinkhorn as sk
    from theory.oracle._kernels import hermite, momentum, scaling, signature, sinkhorn
    from theory.scaling import forward
    from theory.signature import _api as sig_api

    assert inspect.signature(forward).parameters["slope"].default == scaling.SLOPE
    assert inspect.signature(pl.hermite_coefficient).parameters["negative_slope"].default == hermite.NEGATIVE_SLOPE
    assert hermite._RMAX == pl.RMAX and sig_api._MAX_LEVEL_NDIM == signature._MAX_DEPTH
    assert all(f"'{a}'" in oracle.kernel("hermite_coefficient").arguments[0].meaning for a in pl.ACTIVATIONS)
    assert sinkhorn._KINDS == sk.KINDS and set(momentum._RESIDUALS) <= set(resnet.RESIDUALS)
    with pytest.raises(ValueError, match="depth"):
        __import__("theory.signature", fromlist=["kernel"]).kernel(np.zeros((2, 1)), np.zeros((2, 1)),
                                                                   signature._MAX_KERNEL_DEPTH + 1)


@pytest.mark.parametrize("name", OURS)
def test_cases_at_the_defaults_are_built_in_ones_from_the_same_builder(name):
    """The generator and the built-in cases share their builder: at the default parameters a generated case that
    bears a built-in name is that case, input for input; the convention arguments are given to every case."""
    k = oracle.kernel(name)
    built = {c.name: c for c in k.cases()}
    generated = oracle.cases_at(k, {})
    same = [c for c in generated if c.name in built]
    assert same, [c.name for c in generated]
    for c in same:
        assert set(c.inputs) == set(built[c.name].inputs)
        for key, value in c.inputs.items():
            np.testing.assert_array_equal(np.asarray(value), np.asarray(built[c.name].inputs[key]), err_msg=key)
    for c in k.conventions:
        if c.parameter:
            assert all(c.parameter in case.inputs for case in k.cases())


@pytest.mark.parametrize("name, params, match", [
    ("scaling_forward", {"L": 0}, "`L`"), ("scaling_forward", {"beta": 0.0}, "`beta`"),
    ("scaling_forward", {"slope": 1.5}, "`slope`"), ("scaling_forward", {"d": "2.5"}, "`d`"),
    ("scaling_forward", {"L": 10**7}, "`L`"), ("scaling_forward", {"d": 2000}, "`L`"),
    ("hermite_coefficient", {"r": 301}, "`r`"), ("hermite_coefficient", {"negative_slope": "x"}, "`negative_slope`"),
    ("signature", {"n": 1}, "`n`"), ("signature", {"depth": 65}, "`depth`"), ("signature", {"scale": -1.0}, "`scale`"),
    ("signature", {"depth": 30, "d": 4}, "`depth`"), ("signature", {"n": 10**10}, "`n`"),
    ("signature_kernel", {"depth": 99}, "`depth`"), ("signature_kernel", {"d": 0}, "`d`"),
    ("icl_expected_loss", {"T": 1}, "`T`"), ("icl_expected_loss", {"context": "complex"}, "`context`"),
    ("icl_expected_loss", {"context": "orthogonal", "d": 3}, "`d` must be even"),
    ("icl_expected_loss", {"d": 200, "T": 400}, "`C`|`p`"),
    ("sinkhorn", {"n": 0}, "`n`"), ("sinkhorn", {"marginals": "plan"}, "`marginals`"),
    ("sinkhorn", {"n": 10**5}, "`n`"), ("sinkhorn", {"scale": math.inf}, "`scale`"),
    ("sinkhorn_attention", {"m": 0}, "`m`"), ("sinkhorn_attention", {"scale": 30.0}, "exp"),
    ("sinkhorn_attention", {"n": 10**5}, "`n`"),
    ("momentum_forward", {"gamma": 1.5}, "`gamma`"), ("momentum_forward", {"N": 0}, "`N`"),
    ("momentum_forward", {"N": 10**6}, "`N`"), ("momentum_inverse", {"gamma": 0.0}, "`gamma`"),
    ("momentum_gradient", {"d": 0}, "`d`"), ("momentum_psi", {"eps": -1.0}, "`eps`"),
    ("momentum_psi", {"eps": 1e-310}, "`eps`"), ("momentum_psi", {"d": 10**4}, "`d`"),
])
def test_parameters_outside_their_domain_or_limits_are_refused_by_name(name, params, match):
    with pytest.raises(OracleInputError, match=match):
        oracle.cases_at(oracle.kernel(name), params)


@pytest.mark.parametrize("name, params", [
    ("scaling_forward", {"L": 1, "slope": [-1.0, 1.0], "d": 1}), ("scaling_forward", {"L": 2000, "beta": 2.0}),
    ("hermite_coefficient", {"r": [0, 300], "negative_slope": [-1.0, 0.0]}),
    ("signature", {"n": 2, "d": 1, "depth": [0, 64]}), ("signature", {"n": 3000, "scale": 0.0}),
    ("signature_kernel", {"n": 2, "depth": 0}), ("icl_expected_loss", {"d": 1, "T": 2}),
    ("icl_expected_loss", {"d": 2, "T": 2, "context": "orthogonal"}),
    ("sinkhorn", {"n": [1, 2], "marginals": ["ones", "uniform"]}), ("sinkhorn", {"n": 1000, "scale": [0.0, 3.0]}),
    ("sinkhorn_attention", {"n": 1, "d": 1, "m": 1, "marginals": "uniform"}),
    ("sinkhorn_attention", {"n": 500, "scale": 0.1}),
    ("momentum_forward", {"N": 1, "d": 1, "gamma": [0.0, 1.0]}), ("momentum_inverse", {"N": 2000, "gamma": 0.999}),
    ("momentum_gradient", {"N": 300, "gamma": 0.95}), ("momentum_psi", {"d": [1, 8], "eps": [0.0, 1e-3, 100.0]}),
])
def test_extreme_parameters_generate_cases_the_package_passes(name, params):
    result = oracle.verify(name, oracle.kernel(name).implementation, params=params)
    assert result.ok and result.exit_code == 0, result.report()
    names = [row.case for row in result.rows]
    assert len(set(names)) == len(names)


_FUZZ = {
    "scaling_forward": {"L": st.integers(1, 60), "beta": st.sampled_from([0.25, 0.5, 1.0]),
                        "d": st.integers(1, 6), "slope": st.floats(-1.0, 1.0)},
    "hermite_coefficient": {"r": st.integers(0, 300), "negative_slope": st.floats(-1.0, 1.0)},
    "signature": {"n": st.integers(2, 60), "d": st.integers(1, 4), "depth": st.integers(0, 5),
                  "scale": st.floats(0.0, 1.0)},
    "icl_expected_loss": {"d": st.sampled_from([2, 4, 6]), "T": st.integers(2, 8),
                          "context": st.sampled_from(["unitary", "orthogonal"])},
    "sinkhorn": {"n": st.integers(1, 60), "scale": st.floats(0.0, 4.0),
                 "marginals": st.sampled_from(["ones", "uniform"])},
    "sinkhorn_attention": {"n": st.integers(1, 40), "d": st.integers(1, 5), "m": st.integers(1, 4),
                           "scale": st.floats(0.05, 2.0), "marginals": st.sampled_from(["ones", "uniform"])},
    "momentum_forward": {"N": st.integers(1, 80), "d": st.integers(1, 4), "gamma": st.floats(0.0, 1.0)},
    "momentum_inverse": {"N": st.integers(1, 40), "d": st.integers(1, 4), "gamma": st.floats(0.5, 1.0)},
    "momentum_psi": {"d": st.integers(1, 4), "eps": st.floats(0.0, 10.0)},
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_cases_at_random_parameters_pass_the_package_with_the_rule_unchanged(data):
    """Any value in a declared domain (within these small ranges) generates cases, named after it, that the
    package's own implementation passes under the kernel's own tolerance rule."""
    name = data.draw(st.sampled_from(sorted(_FUZZ)), label="kernel")
    params = {p: data.draw(s, label=p) for p, s in _FUZZ[name].items()}
    k = oracle.kernel(name)
    cases = oracle.cases_at(k, params)
    assert cases and len({c.name for c in cases}) == len(cases)
    result = oracle.verify(name, k.implementation, params=params)
    assert result.ok, (params, result.report())


@pytest.mark.parametrize("name, param, values, per_value", [
    ("momentum_forward", "gamma", [0.9999999, 1.0], 3), ("scaling_forward", "slope", [0.3, 0.30000001], 2),
    ("hermite_coefficient", "negative_slope", [0.1, 0.1000001], 1), ("sinkhorn", "scale", [2.0, 2.0000001], 1),
    ("signature", "scale", [0.3, 0.3000001], 1), ("momentum_psi", "eps", [1e-7, 1.0000001e-7], 1),
    ("sinkhorn_attention", "scale", [1.5, 1.5000001], 3),
])
def test_values_that_print_alike_get_distinct_cases(name, param, values, per_value):
    """Names carry the values exactly where %g would round them together (no case is dropped as a duplicate)."""
    k = oracle.kernel(name)
    one = len(oracle.cases_at(k, {param: values[0]}))
    assert len(oracle.cases_at(k, {param: values})) == one + per_value


def test_cases_at_the_users_parameters_from_the_command_line(capsys):
    assert main(["oracle", "verify", "scaling_forward", "_oracle_planted:numpy_scaling_forward",
                 "--param", "L=3,700", "--param", "slope=0.01,-0.5", "--param", "d=5"]) == 0
    out = capsys.readouterr().out
    assert "res1_leaky_relu_L700_beta0.5_d5_slope-0.5" in out and "res3_relu_L3_beta0.5_d5" in out
    assert "of 20 cases pass" in out  # 2 depths x (6 slope-free cases + 2 leaky x 2 slopes)
    assert main(["oracle", "verify", "sinkhorn", "_oracle_planted:numpy_sinkhorn", "--param", "n=3,60",
                 "--param", "marginals=ones,uniform"]) == 0
    assert "gauss_n60_scale1_uniform" in capsys.readouterr().out
    assert main(["oracle", "verify", "momentum_psi", "_oracle_planted:psi_by_series", "--param", "eps=-2"]) == 2
    assert "`eps`" in capsys.readouterr().err


# ---- scaling_forward


def _scaling_alpha_one(h0, V, W, beta, arch, activation, slope):
    return planted.numpy_scaling_forward(h0, V, W, beta, arch, activation, slope, alpha=1.0)


def test_scaling_conventions_mapped():
    leaky = lambda c: c.inputs["activation"] == "leaky_relu"  # noqa: E731
    assert oracle.verify("scaling_forward", planted.numpy_scaling_forward).ok
    # no residual factor (alpha = 1): V * L^-beta maps it; unmapped it fails wherever L > 1
    mapped = oracle.verify("scaling_forward", _scaling_alpha_one, adapter=lambda fn: lambda V, beta, **kw: fn(
        V=V * V.shape[0] ** (-beta), beta=beta, **kw))
    assert mapped.ok, mapped.report()
    k = oracle.kernel("scaling_forward")
    moving = lambda c: np.ptp(k.reference(**c.inputs)[0], axis=0).any()  # noqa: E731 - h_L != h_0 (ReLU may be 0)
    assert _failed(oracle.verify("scaling_forward", _scaling_alpha_one)) == _names(
        "scaling_forward", lambda c: c.params["L"] > 1 and moving(c))
    # a library's default slope (PyTorch's 0.01) fails exactly the leaky cases at another slope
    fixed = oracle.verify("scaling_forward", lambda **kw: planted.numpy_scaling_forward(**kw, fixed_slope=0.01))
    assert _failed(fixed) == _names("scaling_forward", lambda c: leaky(c) and c.inputs["slope"] != 0.01)
    # x_+ + s max(-x, 0) (the nonnegative negative part): pass s = -slope
    part = lambda **kw: planted.numpy_scaling_forward(**kw, negative_part=True)  # noqa: E731
    assert oracle.verify("scaling_forward", part, adapter=lambda fn: lambda slope, **kw: fn(slope=-slope, **kw)).ok
    assert _failed(oracle.verify("scaling_forward", part)) == _names("scaling_forward", leaky)
    # theory.scaling.forward itself takes W = None for res1 (an empty W raises): W = None if W.size == 0
    from theory.scaling import forward

    assert oracle.verify("scaling_forward", forward, adapter=lambda fn: lambda W, slope, **kw: fn(
        W=None if W.size == 0 else W, slope=slope, **kw)).ok
    unmapped = oracle.verify("scaling_forward", forward)
    assert unmapped.exit_code == 2
    assert _failed(unmapped) == _names("scaling_forward", lambda c: c.inputs["arch"] == "res1")
    # the last state alone is a wrong shape on every case (exit 2): return all L + 1 states
    last = oracle.verify("scaling_forward", lambda **kw: planted.numpy_scaling_forward(**kw)[-1])
    assert last.exit_code == 2 and len(last.failures) == len(last.rows)


# ---- hermite_coefficient: an independent quadrature (scipy.integrate.quad split at the kink), r <= 10


def _sigma(activation, s, gelu="exact"):
    from scipy.special import ndtr

    return {"relu": lambda x: max(x, 0.0), "leaky_relu": lambda x: x if x > 0 else s * x, "identity": lambda x: x,
            "sin": math.sin, "tanh": math.tanh,
            "gelu": (lambda x: x * ndtr(x)) if gelu == "exact" else
            (lambda x: 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))))}[activation]


def _moment(activation, r, negative_slope, poly="He", gelu="exact"):
    """E[sigma(Z) P_r(Z)], Z ~ N(0, 1), P_r = He_r (probabilists') or H_r (physicists'), by quadrature."""
    from scipy.integrate import quad
    from scipy.special import eval_hermite, eval_hermitenorm

    f = _sigma(activation, negative_slope, gelu)
    P = {"He": lambda x: eval_hermitenorm(r, x), "H": lambda x: eval_hermite(r, x),
         "H mapped": lambda x: 2.0 ** (-r / 2) * eval_hermite(r, x / math.sqrt(2))}[poly]
    g = lambda x: f(x) * P(x) * math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    with warnings.catch_warnings():  # quad warns that 1e-15 absolute is beyond its roundoff; it reaches ~1e-16
        warnings.simplefilter("ignore")
        return sum(quad(g, a, b, epsabs=1e-15, epsrel=1e-14, limit=400)[0] for a, b in ((-40.0, 0.0), (0.0, 40.0)))


def test_hermite_conventions_mapped():
    k = oracle.kernel("hermite_coefficient")
    small = sorted(_names("hermite_coefficient", lambda c: c.inputs["r"] <= 10))
    # where sqrt(r!) != 1 and the coefficient is not 0: the normalisations differ there
    high = lambda c: c.name in small and c.inputs["r"] >= 2 and k.reference(**c.inputs)[0] != 0  # noqa: E731

    def run(fn, **kw):
        return oracle.verify("hermite_coefficient", fn, cases=small, **kw)

    assert run(lambda activation, r, negative_slope: _moment(activation, r, negative_slope) / math.sqrt(
        math.factorial(r))).ok
    # the unnormalised moment: divide by sqrt(r!)
    moment = lambda activation, r, negative_slope: _moment(activation, r, negative_slope)  # noqa: E731
    assert run(moment, adapter=lambda fn: lambda r, **kw: fn(r=r, **kw) / math.sqrt(math.factorial(r))).ok
    assert _failed(run(moment)) == _names("hermite_coefficient", high)
    # the expansion coefficient c_r = moment / r!: multiply by sqrt(r!)
    coef = lambda activation, r, negative_slope: _moment(activation, r, negative_slope) / math.factorial(r)  # noqa
    assert run(coef, adapter=lambda fn: lambda r, **kw: fn(r=r, **kw) * math.sqrt(math.factorial(r))).ok
    # physicists' H_r in place of He_r fails; He_r(x) = 2^(-r/2) H_r(x / sqrt(2)) passes
    for poly, ok in (("H", False), ("H mapped", True)):
        result = run(lambda activation, r, negative_slope: _moment(activation, r, negative_slope, poly) / math.sqrt(
            math.factorial(r)))
        assert result.ok is ok, poly
    # GELU's tanh approximation (jax.nn.gelu's default) fails the gelu cases, and only those
    tanh_gelu = run(lambda activation, r, negative_slope: _moment(activation, r, negative_slope, gelu="tanh")
                    / math.sqrt(math.factorial(r)))
    assert _failed(tanh_gelu) and all(c.startswith("gelu_") for c in _failed(tanh_gelu))
    # a fixed slope (PyTorch's 0.01) fails leaky cases at other slopes; passing negative_slope passes them
    fixed = run(lambda activation, r, negative_slope: _moment(activation, r, 0.01) / math.sqrt(math.factorial(r)))
    assert _failed(fixed) and all(c.startswith("leaky_relu_") and not c.endswith("_slope0.01")
                                  for c in _failed(fixed))


# ---- signature, signature_kernel


def _standard_levels(path, depth):
    from theory.signature import signature

    return signature(path, depth, "standard")


def test_signature_conventions_mapped():
    iisignature = pytest.importorskip("iisignature")
    adapter = ROOT / "examples" / "oracle" / "iisignature_sig.py"
    assert oracle.verify("signature", iisignature.sig, adapter=adapter).ok
    # the standard levels, level 0 prepended, fail wherever a level k >= 2 is nonzero
    raw = lambda path, depth: np.concatenate([[1.0], iisignature.sig(path, depth)]) if depth else np.ones(1)  # noqa
    assert _failed(oracle.verify("signature", raw)) == _names(
        "signature", lambda c: c.inputs["depth"] >= 2 and c.name != "constant_path")
    # levels as a list, flattened in C order and concatenated
    assert oracle.verify("signature", lambda path, depth: np.concatenate([
        np.ravel(level) * math.factorial(k) for k, level in enumerate(_standard_levels(path, depth))])).ok
    # a basepoint (the origin prepended) is another path: it fails where the path does not start at 0
    based = oracle.verify("signature", lambda path, depth: oracle.kernel("signature").reference(
        np.vstack([np.zeros(path.shape[1]), path]), depth)[0])
    assert _failed(based) == _names("signature", lambda c: c.inputs["depth"] >= 1 and np.any(c.inputs["path"][0]))


def test_signature_kernel_conventions_mapped():
    def truncated(path_x, path_y, depth, weight):
        a, b = _standard_levels(path_x, depth), _standard_levels(path_y, depth)
        return sum(weight(k) * float(np.sum(x * y)) for k, (x, y) in enumerate(zip(a, b)))

    factorial = lambda k: float(math.factorial(k)) ** 2  # noqa: E731
    assert oracle.verify("signature_kernel", lambda **kw: truncated(**kw, weight=factorial)).ok
    # unweighted standard levels: no case passes (the long walks' tolerance is too wide to decide: inconclusive)
    unweighted = oracle.verify("signature_kernel", lambda **kw: truncated(**kw, weight=lambda k: 1.0))
    assert {"walks_n2_d2_depth10", "walks_n30_d3_depth5"} <= _failed(unweighted)
    assert not any(row.verdict == "pass" for row in unweighted.rows)
    # without level 0 the kernel is 1 too small: add 1
    no_level0 = lambda **kw: truncated(**kw, weight=lambda k: factorial(k) if k else 0.0)  # noqa: E731
    assert oracle.verify("signature_kernel", no_level0, adapter=lambda fn: lambda **kw: fn(**kw) + 1.0).ok
    assert {"walks_n2_d2_depth10", "walks_n30_d3_depth5"} <= _failed(oracle.verify("signature_kernel", no_level0))
    # a time coordinate added inside the kernel is another kernel: the paths are taken as given
    reference = oracle.kernel("signature_kernel").reference
    timed = lambda path_x, path_y, depth: reference(*(np.column_stack([p, np.linspace(0, 1, len(p))])  # noqa: E731
                                                      for p in (path_x, path_y)), depth)[0]
    assert {"walks_n2_d2_depth10", "walks_n30_d3_depth5"} <= _failed(oracle.verify("signature_kernel", timed))


# ---- icl_expected_loss: an independent exact evaluation (the monomials merged in a dict), in either layout


def _icl_exact(C, p, context, layout="pairs", reduce="sum"):
    d, T = C.shape[0], p.shape[0]
    delta = d // 2

    def var(k):
        if context == "unitary":
            return k, 1
        return (k // 2, 1 - 2 * (k % 2)) if layout == "pairs" else (k % delta, 1 if k < delta else -1)

    m = d if context == "unitary" else delta
    loss, dC, dp = 0.0, np.zeros_like(C), np.zeros_like(p)
    for i in range(d):
        vi, si = var(i)
        groups = {}
        for t in range(1, T + 1):
            for j in range(d):
                vj, sj = var(j)
                e = [0] * m
                e[vj] += sj * (t - T + 1)
                e[vi] += si * (t - 1)
                groups.setdefault(tuple(e), []).append((t - 1, j))
        target = [0] * m
        target[vi] += si * T
        groups.setdefault(tuple(target), [])
        for key, members in groups.items():
            c = sum(p[t] * C[i, j] for t, j in members) - (1.0 if key == tuple(target) else 0.0)
            loss += c * c
            for t, j in members:
                dC[i, j] += 2 * c * p[t]
                dp[t] += 2 * c * C[i, j]
    scale = 1.0 / d if reduce == "mean" else 1.0
    return scale * loss, scale * dC, scale * dp


def _halves_to_pairs(fn):
    def call(C, p, context):
        if context == "unitary":
            return fn(C, p, context)
        d = C.shape[0]
        perm = np.r_[np.arange(0, d, 2), np.arange(1, d, 2)]
        inv = np.argsort(perm)
        loss, dC, dp = fn(C[np.ix_(perm, perm)], p, context)
        return loss, dC[np.ix_(inv, inv)], dp
    return call


def test_icl_conventions_mapped():
    assert oracle.verify("icl_expected_loss", _icl_exact).ok
    halves = lambda C, p, context: _icl_exact(C, p, context, "halves")  # noqa: E731
    assert oracle.verify("icl_expected_loss", halves, adapter=_halves_to_pairs).ok
    failing = _failed(oracle.verify("icl_expected_loss", halves))
    assert failing and failing <= _names("icl_expected_loss", lambda c: c.inputs["context"] == "orthogonal")
    assert {"orthogonal_d4_T6", "orthogonal_d10_T15"} <= failing  # d = 2: the two layouts coincide
    mean = lambda C, p, context: _icl_exact(C, p, context, reduce="mean")  # noqa: E731
    times_d = lambda fn: lambda C, p, context: tuple(C.shape[0] * np.asarray(o) for o in fn(C, p, context))  # noqa
    assert oracle.verify("icl_expected_loss", mean, adapter=times_d).ok
    assert _failed(oracle.verify("icl_expected_loss", mean)) == _names("icl_expected_loss",
                                                                       lambda c: c.inputs["C"].shape[0] > 1)

    half = lambda C, p, context: tuple(0.5 * np.asarray(o) for o in _icl_exact(C, p, context))  # noqa: E731
    assert oracle.verify("icl_expected_loss", half, adapter=lambda fn: lambda **kw: tuple(
        2 * np.asarray(o) for o in fn(**kw))).ok
    # p indexed from the last token backwards: reverse p, and dp back
    backwards = lambda C, p, context: (lambda r: (r[0], r[1], r[2][::-1]))(_icl_exact(C, p[::-1], context))  # noqa
    assert oracle.verify("icl_expected_loss", backwards, adapter=lambda fn: lambda C, p, context: (
        lambda r: (r[0], r[1], r[2][::-1]))(fn(C, p[::-1], context))).ok
    assert oracle.verify("icl_expected_loss", backwards).exit_code == 1

    def monte_carlo(C, p, context, draws=20000):
        """The loss averaged over sampled phases (gradient from the exact evaluation)."""
        r = np.random.default_rng(0)
        d, T = C.shape[0], p.shape[0]
        phase = np.exp(2j * np.pi * r.random((draws, d if context == "unitary" else d // 2)))
        lam = phase if context == "unitary" else np.stack([phase, phase.conj()], axis=-1).reshape(draws, d)
        pred = sum(p[t - 1] * (lam ** (t - T + 1)) @ C.T * lam ** (t - 1) for t in range(1, T + 1))
        loss = float(np.mean(np.sum(np.abs(pred - lam ** T) ** 2, axis=1)))
        return (loss,) + _icl_exact(C, p, context)[1:]

    assert oracle.verify("icl_expected_loss", monte_carlo).exit_code == 1


# ---- sinkhorn, sinkhorn_attention


def test_sinkhorn_conventions_mapped():
    ot = pytest.importorskip("ot")
    adapter = ROOT / "examples" / "oracle" / "pot_sinkhorn.py"
    assert oracle.verify("sinkhorn", ot.sinkhorn, adapter=adapter).ok
    n_cases = lambda keep: _names("sinkhorn", lambda c: keep(c) and c.inputs["C"].shape[0] > 1)  # noqa: E731

    def pot(marginals_map=True, shift=True, **options):
        def adapt(fn):
            def call(C, marginals):
                n = C.shape[0]
                a = np.full(n, 1.0 / n)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # POT warns when it stops unconverged, and on overflow
                    P = fn(a, a, (C.max() - C) if shift else -C, 1.0, **options)
                return P if marginals == "uniform" or not marginals_map else n * P
            return call
        return adapt

    # POT's defaults stop unconverged: the generic cases fail
    defaults = _failed(oracle.verify("sinkhorn", ot.sinkhorn, adapter=pot()))
    assert {"gauss_n30_scale1", "gauss_n50_scale5", "gauss_n30_scale1_uniform"} <= defaults
    converged = {"stopThr": 1e-14, "numItermax": 10**6}
    # the plan returned where the doubly stochastic matrix is asked: every 'ones' case but n = 1 fails
    assert _failed(oracle.verify("sinkhorn", ot.sinkhorn, adapter=pot(False, **converged))) == n_cases(
        lambda c: c.inputs["marginals"] == "ones")
    # M = -C unshifted: exp(-M) overflows near 1e300 (a NaN: an ERROR of that case alone)
    unshifted = oracle.verify("sinkhorn", ot.sinkhorn, adapter=pot(shift=False, **converged))
    assert _failed(unshifted) == {"huge_offset_n6"} and unshifted.exit_code == 2


def test_sinkhorn_attention_conventions_mapped():
    assert oracle.verify("sinkhorn_attention", planted.numpy_attention).ok
    # the marginals ignored: exactly the plan's cases fail (but n = 1)
    ignored = oracle.verify("sinkhorn_attention", lambda marginals, **kw: planted.numpy_attention(**kw))
    assert _failed(ignored) == _names("sinkhorn_attention", lambda c: c.inputs["marginals"] == "uniform"
                                      and c.inputs["X"].shape[0] > 1)
    # unnormalised exp(C) V for kind 'kernel': divide by n
    def raw_kernel(X, WQ, WK, WV, kind, marginals):
        T = planted.numpy_attention(X, WQ, WK, WV, kind, marginals)
        return T * X.shape[0] if kind == "kernel" else T

    assert oracle.verify("sinkhorn_attention", raw_kernel, adapter=lambda fn: lambda X, kind, **kw: fn(
        X=X, kind=kind, **kw) / (X.shape[0] if kind == "kernel" else 1)).ok
    assert _failed(oracle.verify("sinkhorn_attention", raw_kernel)) == _names(
        "sinkhorn_attention", lambda c: c.inputs["kind"] == "kernel" and c.inputs["X"].shape[0] > 1)
    # column tokens (X of shape (d, n)): pass X.T and transpose back
    columns = lambda X, **kw: planted.numpy_attention(X.T, **kw).T  # noqa: E731
    assert oracle.verify("sinkhorn_attention", columns, adapter=lambda fn: lambda X, **kw: fn(X.T, **kw).T).ok
    assert oracle.verify("sinkhorn_attention", columns).exit_code == 2
    # the residual block x + T in place of the field T fails everywhere
    residual = oracle.verify("sinkhorn_attention", lambda X, **kw: X + planted.numpy_attention(X, **kw))
    # (but where the kernel's T is 1e16 times X: there x + T is T to rounding)
    assert _failed(residual) == _names("sinkhorn_attention", lambda c: np.any(c.inputs["X"])) - {
        "kernel_n20_large_logits_x2.5"}


# ---- momentum_forward, momentum_inverse, momentum_gradient, momentum_psi


def _eps_form(x0, v0, theta, residual, eps):
    """Sec. 4.3.4's form: v_{n+1} = v_n + (f(x_n) - v_n) / eps, x_{n+1} = x_n + v_{n+1}."""
    xs, vs = [np.asarray(x0, float)], [np.asarray(v0, float)]
    for th in theta:
        vs.append(vs[-1] + (planted._f(residual, xs[-1], th) - vs[-1]) / eps)
        xs.append(xs[-1] + vs[-1])
    return np.array(xs), np.array(vs)


def test_momentum_conventions_mapped():
    to_eps = lambda fn: lambda gamma, **kw: fn(eps=1.0 / (1.0 - gamma) if gamma < 1 else math.inf, **kw)  # noqa
    assert oracle.verify("momentum_forward", _eps_form, adapter=to_eps).ok
    # the heavy-ball form (no factor 1 - gamma): theta * (1 - gamma) maps it where f is linear in theta
    heavy = planted.momentum_forward_without_1_minus_gamma
    linear_in_theta = sorted(_names("momentum_forward", lambda c: c.inputs["residual"] in ("linear", "tanh_out")))
    mapped = oracle.verify("momentum_forward", heavy, cases=linear_in_theta,
                           adapter=lambda fn: lambda theta, gamma, **kw: fn(theta=theta * (1 - gamma), gamma=gamma,
                                                                            **kw))
    assert mapped.ok, mapped.report()
    assert _failed(oracle.verify("momentum_forward", heavy, cases=linear_in_theta)) == {
        c for c in linear_in_theta if "gamma0_" not in c}

    # the explicit order x_{n+1} = x_n + v_n is another network
    def explicit(x0, v0, theta, residual, gamma):
        xs, vs = [np.asarray(x0, float)], [np.asarray(v0, float)]
        for th in theta:
            xs.append(xs[-1] + vs[-1])
            vs.append(gamma * vs[-1] + (1 - gamma) * planted._f(residual, xs[-2], th))
        return np.array(xs), np.array(vs)

    assert oracle.verify("momentum_forward", explicit).exit_code == 1
    # theta_n applied to row vectors (x @ theta_n, not torch.nn.Linear's weight x): transpose the weights
    rows = lambda theta, **kw: planted.numpy_momentum_forward(theta=theta.transpose(0, 2, 1), **kw)  # noqa: E731
    assert oracle.verify("momentum_forward", rows, adapter=lambda fn: lambda theta, **kw: fn(
        theta=theta.transpose(0, 2, 1), **kw)).ok
    assert oracle.verify("momentum_forward", rows).exit_code == 1
    # an initial velocity fixed inside the network (v0 = 0) fails wherever the given v0 is not 0
    assert _failed(oracle.verify("momentum_forward", lambda v0, **kw: planted.numpy_momentum_forward(
        v0=np.zeros_like(v0), **kw))) == _names("momentum_forward", lambda c: np.any(c.inputs["v0"]))
    # the inverse returned in the order of its reconstruction: reverse it
    backwards = lambda **kw: tuple(a[::-1] for a in planted.numpy_momentum_inverse(**kw))  # noqa: E731
    assert oracle.verify("momentum_inverse", backwards, adapter=lambda fn: lambda **kw: tuple(
        a[::-1] for a in fn(**kw))).ok
    assert oracle.verify("momentum_inverse", backwards).exit_code == 1

    # the loss without its 1/2 (reduction='sum'): loss and gradients by 1/2
    summed = lambda **kw: tuple(2 * np.asarray(o) for o in oracle.kernel("momentum_gradient").reference(**kw))  # noqa
    assert oracle.verify("momentum_gradient", summed, adapter=lambda fn: lambda **kw: tuple(
        0.5 * np.asarray(o) for o in fn(**kw))).ok
    assert oracle.verify("momentum_gradient", summed).exit_code == 1
    # v0 left undifferentiated (dv0 = 0) fails wherever v0 matters (gamma > 0)
    def frozen_v0(**kw):
        loss, dtheta, dx0, dv0 = oracle.kernel("momentum_gradient").reference(**kw)
        return loss, dtheta, dx0, np.zeros_like(dv0)

    assert _failed(oracle.verify("momentum_gradient", frozen_v0)) == _names(
        "momentum_gradient", lambda c: c.inputs["gamma"] > 0 and np.any(oracle.kernel("momentum_gradient")
                                                                          .reference(**c.inputs)[3]))


def test_momentum_psi_conventions_mapped():
    from scipy.linalg import expm

    def phase_space(theta, eps):
        d = theta.shape[0]
        if eps == 0:
            return expm(theta)
        A = np.block([[np.zeros((d, d)), np.eye(d)], [theta / eps, -np.eye(d) / eps]])
        return expm(A)[:d, :d]

    cases = ["d2_*", "d4_*", "oscillating_eps1"]
    assert oracle.verify("momentum_psi", phase_space, cases=cases).ok
    rows = lambda theta, eps: phase_space(theta, eps).T  # noqa: E731 - the row-vector convention
    assert oracle.verify("momentum_psi", rows, cases=cases, adapter=lambda fn: lambda **kw: fn(**kw).T).ok
    assert _failed(oracle.verify("momentum_psi", rows, cases=cases)) == _names(
        "momentum_psi", lambda c: c.name.startswith(("d2_", "d4_")))

    # x'(0) = theta x_0 (the initial velocity f(x_0) of Prop. 4.2) is another map: it fails wherever eps > 0 (but
    # at theta = -pi^2 - 1/4, eps = 1, where the velocity's contribution sin(pi t) vanishes at t = 1)
    def moving_start(theta, eps):
        d = theta.shape[0]
        if eps == 0:
            return expm(theta)
        A = np.block([[np.zeros((d, d)), np.eye(d)], [theta / eps, -np.eye(d) / eps]])
        E = expm(A)
        return E[:d, :d] + E[:d, d:] @ theta
    assert _failed(oracle.verify("momentum_psi", moving_start, cases=cases)) == _names(
        "momentum_psi", lambda c: c.name.startswith(("d2_", "d4_")) and c.inputs["eps"] > 0)


# ----------------------------------------------------------------------------------------------
# isotonic, top-k, soft sort/rank, ResNet, linear and implicit kernels: every stated mapping of a convention
# verified (an implementation following the alternative passes with the mapping and fails without it), and the
# cases at the user's parameters (the built-in cases reproduced by the generator at their own values, named
# errors, extremes, a fuzz of the parameters)

import _oracle_planted as planted1  # noqa: E402


def _k_names(k, predicate=lambda c: True):
    return {c.name for c in oracle.kernel(k).cases() if predicate(c)}


def _k_failing(result):
    return {r.case for r in result.rows if r.verdict in ("FAIL", "ERROR")}


def _k_passing(result):
    return {r.case for r in result.rows if r.verdict == "pass"}


def test_isotonic_mappings():
    import scipy.optimize

    k = "isotonic_regression"
    # the weights of a (w r)^2 loss are sqrt(w)
    assert oracle.verify(k, planted1.isotonic_squared_weights, adapter=lambda fn: lambda y, w, increasing: fn(
        y, np.sqrt(w), increasing)).ok
    bad = oracle.verify(k, planted1.isotonic_squared_weights)
    assert bad.exit_code == 1 and {"weighted_n100", "nearly_singular_weights_n100"} <= _k_failing(bad)
    # an increasing-only fit: x = -fn(-y, w) for the decreasing cases
    adapter = lambda fn: lambda y, w, increasing: fn(y, w) if increasing else -fn(-y, w)  # noqa: E731
    assert oracle.verify(k, planted1.isotonic_increasing_only, adapter=adapter).ok
    bad = oracle.verify(k, planted1.isotonic_increasing_only, adapter=lambda fn: lambda y, w, increasing: fn(y, w))
    assert _k_failing(bad) == _k_names(k, lambda c: not c.inputs["increasing"])
    # SciPy's OptimizeResult: .x
    raw = oracle.verify(k, scipy.optimize.isotonic_regression,
                        adapter=lambda fn: lambda y, w, increasing: fn(y, weights=w, increasing=increasing))
    assert raw.exit_code == 2 and "dtype object" in raw.report()


def test_isotonic_covariate_mapping():
    """In a child process: scikit-learn is kept out of the test process (see tests/_data.py)."""
    out = run_with_sklearn("""
        import numpy as np
        import sklearn.isotonic as sk
        from theory import oracle

        def with_covariate(y, w, increasing):
            return sk.IsotonicRegression(increasing=increasing).fit_transform(np.arange(y.size), y,
                                                                               sample_weight=w)

        result = oracle.verify("isotonic_regression", with_covariate, cases=["random_n*", "decreasing_n*", "ties_*"])
        print("ok" if result.ok else result.report())
    """)
    assert out.strip() == "ok", out


def test_topk_mask_mappings():
    k = "topk_mask"
    hard = _k_names(k, lambda c: c.name.startswith("hard_"))
    soft = _k_names(k, lambda c: c.name.startswith(("partial_", "smooth_")))
    # a temperature: tau = reg
    assert oracle.verify(k, planted1.topk_mask_with_temperature,
                         adapter=lambda fn: lambda x, k, reg, p: fn(x, k, reg, p)).ok
    assert oracle.verify(k, planted1.topk_mask_with_temperature,
                         adapter=lambda fn: lambda x, k, reg, p: fn(x, k, 1.0, p)).exit_code == 1
    # a hard top-k agrees in the hard regime
    result = oracle.verify(k, planted1.topk_hard_mask, adapter=lambda fn: lambda x, k, reg, p: fn(x, k))
    assert hard <= _k_passing(result) and soft <= _k_failing(result)
    # the masked scores x * mask: divide by x where x != 0
    def unmask(fn):
        def call(x, k, reg, p):
            z = fn(x, k, reg, p)
            return np.divide(z, x, out=np.zeros_like(z), where=x != 0)
        return call
    assert oracle.verify(k, planted1.topk_masked_scores, adapter=unmask).ok
    assert oracle.verify(k, planted1.topk_masked_scores).exit_code == 1
    # a bottom-k: call it with -x
    assert oracle.verify(k, planted1.bottomk_mask, adapter=lambda fn: lambda x, k, reg, p: fn(-x, k, reg, p)).ok
    assert oracle.verify(k, planted1.bottomk_mask).exit_code == 1


def test_topk_magnitude_rescale_mappings():
    """The public code's rescaled variant and the thesis operator map onto each other through `rescale`:
    z = y + reg sign(y)|y|^(p-1) (z = (1 + reg) y at p = 2), inverted entrywise."""
    k = "topk_magnitude"
    rescaled = _k_names(k, lambda c: c.inputs["rescale"])
    thesis = _k_names(k) - rescaled
    regimes = _k_names(k, lambda c: c.name.startswith(("partial_", "smooth_")))
    assert len(rescaled) == len(thesis) and oracle.kernel(k).conventions[0].parameter == "rescale"

    def from_rescaled(fn):
        return lambda x, k, reg, p, rescale: fn(x, k, reg, p) if rescale else planted1.unrescale(fn(x, k, reg, p), reg, p)

    def to_rescaled(fn):
        def call(x, k, reg, p, rescale):
            y = fn(x, k, reg, p)
            return y + reg * np.sign(y) * np.abs(y) ** (p - 1.0) if rescale else y
        return call

    for fn, adapter, wrong in ((planted1.topk_magnitude_rescaled_only, from_rescaled, thesis),
                               (planted1.topk_magnitude_thesis_only, to_rescaled, rescaled)):
        assert oracle.verify(k, fn, adapter=adapter).ok, fn.__name__
        bad = oracle.verify(k, fn, adapter=lambda fn: lambda x, k, reg, p, rescale: fn(x, k, reg, p))
        assert wrong & regimes <= _k_failing(bad) <= wrong, fn.__name__
    # the hard top-k in magnitude and x * mask(|x|) agree with the rescaled variant's hard cases only
    hard_rescaled = {n for n in rescaled if n.startswith("hard_")}
    hard = oracle.verify(k, planted1.topk_hard_magnitude, adapter=lambda fn: lambda x, k, reg, p, rescale: fn(x, k))
    times = oracle.verify(k, planted1.mask_of_abs_times_x,
                          adapter=lambda fn: lambda x, k, reg, p, rescale: fn(x, k, reg, p))
    for result in (hard, times):
        assert hard_rescaled <= _k_passing(result) and regimes <= _k_failing(result)
    assert {n for n in thesis if n.startswith("hard_")} <= _k_failing(times)


def test_topk_jacobian_layout_and_rescale_mappings():
    k = "topk_jacobian"
    rescaled = _k_names(k, lambda c: c.inputs["rescale"])
    assert rescaled and all(c.inputs["mode"] == "magnitude" for c in oracle.kernel(k).cases() if c.inputs["rescale"])
    stacked = planted1.topk_jacobian_stacked_jvps
    # mask_huge_1e300_p2_n10: theory.topk.jacobian used to lose the rank-one term alpha alpha^T / sum(alpha) of the
    # pooled block to underflow (alpha = 1/reg = 1e-300, alpha^2 = 0) and return diag(1/reg); the JVPs give the block
    # (I - 1 1^T/2)/reg, and so does the reference now (the term is scaled before the product)
    J_ref = oracle.kernel(k).reference(**{c.name: c for c in oracle.kernel(k).cases()}["mask_huge_1e300_p2_n10"].inputs)
    assert np.count_nonzero(J_ref[0]) == 4
    fine = sorted(_k_names(k))
    assert oracle.verify(k, stacked, adapter=lambda fn: lambda **a: fn(**a).T, cases=fine).ok
    from theory.topk import vjp

    def stacked_vjps(x, k, reg, p, mode, rescale):  # rows e_i^T J: the layout as it is
        return np.stack([vjp(x, k, e, reg, p, mode, rescale=rescale) for e in np.eye(x.size)])

    assert oracle.verify(k, stacked_vjps, cases=fine).ok
    # untransposed: wrong where the Jacobian is not symmetric (the rescaled variant's)
    bad = oracle.verify(k, stacked, cases=fine)
    assert bad.exit_code == 1 and _k_failing(bad) <= rescaled
    # rescale ignored: wrong on the rescaled cases (but where reg is negligible, 1 + reg = 1)
    from theory.topk import jacobian

    bad = oracle.verify(k, lambda x, k, reg, p, mode, rescale: jacobian(x, k, reg, p, mode=mode), cases=fine)
    assert bad.exit_code == 1 and _k_failing(bad) <= rescaled
    assert {n for n in rescaled if "partial" in n or "smooth" in n} <= _k_failing(bad)


def test_soft_sort_and_rank_mappings():
    for k, fn, flip in (("soft_sort", planted1.soft_sort_increasing_only, lambda fn: lambda x, reg, p, descending: (
                             fn(x, reg, p)[::-1] if descending else fn(x, reg, p))),
                        ("soft_rank", planted1.soft_rank_increasing_only, lambda fn: lambda x, reg, p, descending: (
                             fn(-x, reg, p) if descending else fn(x, reg, p)))):
        assert oracle.verify(k, fn, adapter=flip).ok, k
        bad = oracle.verify(k, fn, adapter=lambda fn: lambda x, reg, p, descending: fn(x, reg, p))
        desc = _k_names(k, lambda c: c.inputs["descending"])
        assert _k_failing(bad) <= desc and {n for n in desc if n.startswith(("hard_", "partial_"))} <= _k_failing(bad)
    batched = planted1.soft_sort_batched
    assert oracle.verify("soft_sort", batched, adapter=lambda fn: lambda x, **a: fn(x[None], **a)[0]).ok
    assert oracle.verify("soft_sort", batched).exit_code == 2  # shape (1, n)


def _fixed_step_adapter(fn, kind="trajectory"):
    """The mapping of the resnet step convention for a function with its own step h0 = 1/K (K weight slices):
    c = step / h0, theta scaled by c (mlp: its V block only, and the V block of the gradient); for tanh the state
    by c too."""
    def scaled(t, residual, d, c):
        if residual != "mlp":
            return c * t
        t = np.array(t, dtype=float)
        t[:, : d * (t.shape[-1] // (2 * d + 1))] *= c
        return t

    def call(**a):
        theta, residual = a["theta"], a["residual"]
        c = a.pop("step") * theta.shape[0]
        s = c if residual == "tanh" else 1.0
        if kind == "trajectory":
            x = a.pop("x0") if "x0" in a else a.pop("xN")
            return s * np.asarray(fn(x / s, scaled(theta, residual, x.size, c), residual, a["scheme"]))
        d = a["x0"].size
        g_theta, g_x0 = fn(a["x0"] / s, scaled(theta, residual, d, c), a["y"] / s, residual, a["scheme"])
        if residual == "mlp":
            return scaled(g_theta, residual, d, c), np.asarray(g_x0)
        return s * s * c * np.asarray(g_theta), s * np.asarray(g_x0)
    return call


def _matrix_cases(kernel):
    """The cases of a resnet kernel whose theta_n is a (d, d) matrix (the layouts x @ W and nn.Linear apply)."""
    return _k_names(kernel, lambda c: c.inputs["residual"] in ("linear", "tanh", "tanh_out"))


def test_resnet_step_mapping_for_a_fixed_step_network():
    """Public HeunNet code steps by 1/(N+1) over its N + 1 weight slices: with the mapping of the step convention it
    passes every case of resnet_forward and resnet_reverse (each step rule); without it exactly the cases whose
    step is not 1/K fail."""
    for k, fn in (("resnet_forward", planted1.numpy_forward_fixed_step),
                  ("resnet_reverse", lambda xN, theta, residual, scheme: planted1.numpy_reverse_computed_order(
                      xN, theta, residual, scheme, 1.0 / theta.shape[0])[::-1])):
        result = oracle.verify(k, fn, adapter=_fixed_step_adapter)
        assert result.ok and all(r.verdict == "pass" for r in result.rows), result.report()
        bad = oracle.verify(k, fn, adapter=lambda fn: lambda step, **a: fn(**a))
        other = _k_names(k, lambda c: abs(c.inputs["step"] * c.inputs["theta"].shape[0] - 1.0) > 1e-12)
        assert _k_failing(bad) == other and {n for n in other if n.startswith("heun_") and "step" not in n}


def test_resnet_gradient_step_and_loss_mappings():
    torch = pytest.importorskip("torch")
    import importlib.util

    from pathlib import Path

    spec = importlib.util.spec_from_file_location("torch_resnet", Path(__file__).resolve().parents[1] / "examples"
                                                  / "oracle" / "torch_resnet.py")
    net = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(net)

    def fixed(method):
        def fn(x0, theta, y, residual, scheme):
            t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (x0, theta, y)]
            g = method(*t, residual, scheme, 1.0 / theta.shape[0])
            return tuple(v.numpy() for v in g)
        return fn

    for k, method in (("resnet_gradient", net.gradient), ("resnet_gradient_adjoint", net.adjoint_gradient)):
        result = oracle.verify(k, fixed(method), adapter=lambda fn: _fixed_step_adapter(fn, "gradient"))
        assert result.ok and all(r.verdict == "pass" for r in result.rows), result.report()
        bad = oracle.verify(k, fixed(method), adapter=lambda fn: lambda step, **a: fn(**a))
        assert _k_failing(bad) == _k_names(k, lambda c: abs(c.inputs["step"] * c.inputs["theta"].shape[0] - 1.0) > 1e-12)

    def mse_mean(x0, theta, y, residual, scheme, step):  # torch's default mse_loss: the mean over the d coordinates
        x0, theta = (torch.from_numpy(a).requires_grad_(True) for a in (x0, theta))
        loss = torch.nn.functional.mse_loss(net.forward(x0, theta, residual, scheme, step)[-1], torch.from_numpy(y))
        return tuple(g.numpy() for g in torch.autograd.grad(loss, (theta, x0)))

    scaled = lambda fn: lambda **a: tuple(g * a["x0"].size / 2 for g in fn(**a))  # noqa: E731
    assert oracle.verify("resnet_gradient", mse_mean, adapter=scaled).ok
    assert oracle.verify("resnet_gradient", mse_mean).exit_code == 1

    def mse_sum(x0, theta, y, residual, scheme, step):  # reduction='sum': ||x_N - y||^2, twice ours
        x0, theta = (torch.from_numpy(a).requires_grad_(True) for a in (x0, theta))
        loss = torch.nn.functional.mse_loss(net.forward(x0, theta, residual, scheme, step)[-1], torch.from_numpy(y),
                                            reduction="sum")
        return tuple(g.numpy() for g in torch.autograd.grad(loss, (theta, x0)))

    assert oracle.verify("resnet_gradient", mse_sum, adapter=lambda fn: lambda **a: tuple(g / 2 for g in fn(**a))).ok
    assert oracle.verify("resnet_gradient", mse_sum).exit_code == 1

    def row_vectors(x0, theta, y, residual, scheme, step):  # f = x @ W: its weight gradient is in W's layout
        x0, W = (torch.from_numpy(np.ascontiguousarray(a)).requires_grad_(True) for a in (x0, theta))
        f = {"linear": lambda x, w: x @ w, "tanh": lambda x, w: torch.tanh(x @ w),
             "tanh_out": lambda x, w: torch.tanh(x) @ w}[residual]
        x = x0
        for n in range(W.shape[0] - (scheme == "heun")):
            k1 = f(x, W[n])
            x = x + step * k1 if scheme == "euler" else x + (step / 2) * (k1 + f(x + step * k1, W[n + 1]))
        loss = 0.5 * torch.sum((x - torch.from_numpy(y)) ** 2)
        return tuple(g.numpy() for g in torch.autograd.grad(loss, (W, x0)))

    def transposed(fn):
        def call(theta, **a):
            g_w, g_x0 = fn(theta=theta.transpose(0, 2, 1), **a)
            return g_w.transpose(0, 2, 1), g_x0
        return call

    matrix = sorted(_matrix_cases("resnet_gradient"))
    assert oracle.verify("resnet_gradient", row_vectors, adapter=transposed, cases=matrix).ok
    assert oracle.verify("resnet_gradient", row_vectors, cases=matrix).exit_code == 1

    def with_modules(x0, theta, residual, scheme, step):  # torch.nn.Linear layers, weight = theta[n]
        layers = []
        for th in theta:
            lin = torch.nn.Linear(th.shape[1], th.shape[0], bias=False).double()
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(th))
            layers.append(lin)
        f = {"linear": lambda x, lin: lin(x), "tanh": lambda x, lin: torch.tanh(lin(x)),
             "tanh_out": lambda x, lin: lin(torch.tanh(x))}[residual]
        xs = [torch.from_numpy(x0)]
        with torch.no_grad():
            for n in range(len(layers) - (scheme == "heun")):
                x = xs[-1]
                k1 = f(x, layers[n])
                xs.append(x + step * k1 if scheme == "euler" else
                          x + (step / 2) * (k1 + f(x + step * k1, layers[n + 1])))
        return torch.stack(xs).numpy()

    assert oracle.verify("resnet_forward", with_modules, cases=sorted(_matrix_cases("resnet_forward"))).ok


def test_resnet_layout_and_output_mappings():
    k = "resnet_forward"
    transposed = lambda fn: lambda theta, **a: fn(theta=theta.transpose(0, 2, 1), **a)  # noqa: E731
    matrix = sorted(_matrix_cases(k))
    assert oracle.verify(k, planted1.numpy_forward_row_vectors, adapter=transposed, cases=matrix).ok
    assert oracle.verify(k, planted1.numpy_forward_row_vectors, cases=matrix).exit_code == 1
    with_x0 = lambda fn: lambda **a: np.vstack([a["x0"], fn(**a)])  # noqa: E731
    assert oracle.verify(k, planted1.numpy_forward_states_only, adapter=with_x0).ok
    assert oracle.verify(k, planted1.numpy_forward_states_only).exit_code == 2  # shape (N, d)
    reverse = planted1.numpy_reverse_computed_order
    assert oracle.verify("resnet_reverse", reverse, adapter=lambda fn: lambda **a: fn(**a)[::-1]).ok
    assert oracle.verify("resnet_reverse", reverse).exit_code == 1
    # the exact inverse is not the reverse scheme: no mapping, it fails
    # (bias excluded: f = theta does not depend on x, so there the exact inverse is the reverse scheme)
    euler = sorted(_k_names("resnet_reverse", lambda c: c.inputs["scheme"] == "euler" and c.params["N"] > 1
                            and c.inputs["residual"] != "bias"))
    bad = oracle.verify("resnet_reverse", planted1.numpy_exact_inverse, cases=euler)
    assert _k_failing(bad) == set(euler)


def test_linear_mappings():
    N = lambda theta: theta.shape[0]  # noqa: E731
    assert oracle.verify("linear_product", planted1.numpy_linear_product_left_to_right,
                         adapter=lambda fn: lambda theta: fn(theta[::-1])).ok
    bad = oracle.verify("linear_product", planted1.numpy_linear_product_left_to_right)
    assert bad.exit_code == 1 and "random_N10_d3" in _k_failing(bad)
    assert oracle.verify("linear_product", planted1.numpy_linear_product_unscaled,
                         adapter=lambda fn: lambda theta: fn(theta / N(theta))).ok
    assert oracle.verify("linear_product", planted1.numpy_linear_product_unscaled).exit_code == 1
    # the gradient of the unscaled network at theta / N, divided by N; a left-to-right gradient reversed back
    assert oracle.verify("linear_gradient", planted1.numpy_linear_gradient_unscaled, adapter=lambda fn: (
        lambda theta, Sigma, B: fn(theta / N(theta), Sigma, B) / N(theta))).ok
    bad = oracle.verify("linear_gradient", planted1.numpy_linear_gradient_unscaled)  # unmapped: overflows at N = 1000
    assert not bad.ok and "random_N10_d3" in _k_failing(bad)
    left_to_right = lambda theta, Sigma, B: planted1.numpy_linear_gradient(theta[::-1], Sigma, B)[::-1]  # noqa: E731
    assert oracle.verify("linear_gradient", left_to_right, adapter=lambda fn: lambda theta, Sigma, B: (
        fn(theta[::-1], Sigma, B)[::-1])).ok
    assert oracle.verify("linear_gradient", left_to_right).exit_code == 1
    # a 1/2-loss times 2; the display of Section 3.2 times 2/N
    assert oracle.verify("linear_loss", planted1.numpy_linear_loss_half, adapter=lambda fn: lambda **a: 2 * fn(**a)).ok
    assert oracle.verify("linear_loss", planted1.numpy_linear_loss_half).exit_code == 1
    assert oracle.verify("linear_gradient", planted1.numpy_linear_gradient_display, adapter=lambda fn: (
        lambda theta, Sigma, B: 2 * fn(theta, Sigma, B) / N(theta))).ok
    assert oracle.verify("linear_gradient", planted1.numpy_linear_gradient_display).exit_code == 1


def _torch_implicit(torch, *, scaled=True, gelu="none", loss="paper", flow=False, columns=False):
    """The implicit-reg network in torch, its layers torch.nn.functional.linear (nn.Linear's layout, weight
    (out, in): W_k is the weight of the first layer, V_k of the second), autograd for the gradients; the keywords
    select the alternative conventions."""
    acts = {"tanh": torch.tanh, "relu": torch.relu, "sin": torch.sin, "identity": lambda u: u,
            "gelu": lambda u: torch.nn.functional.gelu(u, approximate=gelu)}
    linear = torch.nn.functional.linear

    def run(X, A, V, W, B, activation):
        L, q, m = V.shape
        h = X @ A.T if not columns else (A @ X).T
        hs = [h]
        for k in range(L):
            u = linear(h / q ** 0.5, W[k]) if scaled else linear(h, W[k])
            r = linear(acts[activation](u), V[k])
            h = h + (r / (L * m ** 0.5) if scaled else r)
            hs.append(h)
        F = h @ B.T
        if columns:  # every state and the output with the samples in columns
            return torch.stack(hs).transpose(1, 2), F.T, None
        return torch.stack(hs), F, None

    def forward(X, Y, A, V, W, B, activation):
        t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (X, A, V, W, B)]
        h, F, _ = run(*t, activation)
        return h.detach().numpy(), F.detach().numpy()

    def gradient(X, Y, A, V, W, B, activation):
        t = [torch.from_numpy(np.ascontiguousarray(a)).requires_grad_(True) for a in (X, A, V, W, B)]
        _, F, _ = run(*t, activation)
        Yt = torch.from_numpy(Y)
        value = (torch.nn.functional.mse_loss(F, Yt) if loss == "mse" else
                 torch.sum((F - Yt) ** 2) / X.shape[0] * (0.5 if loss == "half" else 1.0))
        grads = torch.autograd.grad(value, t[1:])
        grads = [g.numpy() for g in grads]
        if flow:  # the velocities of the gradient flow of Eq. (4): V and W move L times faster
            grads = [-g * (V.shape[0] if i in (1, 2) else 1.0) for i, g in enumerate(grads)]
        return (value.detach().numpy(), *grads)

    return forward, gradient


def test_implicit_independent_torch_and_mappings():
    torch = pytest.importorskip("torch")
    forward, gradient = _torch_implicit(torch)
    for k, fn in (("implicit_forward", forward), ("implicit_gradient", gradient)):
        result = oracle.verify(k, fn)
        assert result.ok and all(r.verdict == "pass" for r in result.rows), result.report()
    # no explicit scaling factors: V / (L sqrt(m)), W / sqrt(q) in, the gradients in V and W scaled back
    fwd_u, grad_u = _torch_implicit(torch, scaled=False)

    def unscaled_in(fn):
        def call(X, Y, A, V, W, B, activation):
            L, q, m = V.shape
            return fn(X, Y, A, V / (L * np.sqrt(m)), W / np.sqrt(q), B, activation)
        return call

    def unscaled_grad(fn):
        def call(X, Y, A, V, W, B, activation):
            L, q, m = V.shape
            loss, dA, dV, dW, dB = unscaled_in(fn)(X, Y, A, V, W, B, activation)
            return loss, dA, dV / (L * np.sqrt(m)), dW / np.sqrt(q), dB
        return call

    assert oracle.verify("implicit_forward", fwd_u, adapter=unscaled_in).ok
    assert oracle.verify("implicit_forward", fwd_u).exit_code == 1
    assert oracle.verify("implicit_gradient", grad_u, adapter=unscaled_grad).ok
    assert oracle.verify("implicit_gradient", grad_u, adapter=unscaled_in).exit_code == 1
    # samples in columns: X.T in, h and F transposed back
    fwd_c, _ = _torch_implicit(torch, columns=True)
    assert oracle.verify("implicit_forward", fwd_c, adapter=lambda fn: lambda X, **a: (
        lambda h, F: (h.transpose(0, 2, 1), F.T))(*fn(X.T, **a))).ok
    assert oracle.verify("implicit_forward", fwd_c, adapter=lambda fn: lambda X, **a: fn(X.T, **a)).exit_code == 2
    # the tanh approximation of GELU fails the gelu cases only
    fwd_t, _ = _torch_implicit(torch, gelu="tanh")
    bad = oracle.verify("implicit_forward", fwd_t)
    assert _k_failing(bad) == _k_names("implicit_forward", lambda c: c.inputs["activation"] == "gelu")
    # torch's mse_loss: loss and gradients times d'; the flow's velocities: V and W divided by L, sign changed
    _, grad_mse = _torch_implicit(torch, loss="mse")
    times_dout = lambda fn: lambda **a: tuple(np.asarray(g) * a["Y"].shape[1] for g in fn(**a))  # noqa: E731
    assert oracle.verify("implicit_gradient", grad_mse, adapter=times_dout).ok
    assert oracle.verify("implicit_gradient", grad_mse).exit_code == 1
    _, grad_half = _torch_implicit(torch, loss="half")
    assert oracle.verify("implicit_gradient", grad_half, adapter=lambda fn: lambda **a: tuple(
        2 * np.asarray(g) for g in fn(**a))).ok
    assert oracle.verify("implicit_gradient", grad_half).exit_code == 1
    _, grad_flow = _torch_implicit(torch, flow=True)

    def from_flow(fn):
        def call(**a):
            loss, dA, dV, dW, dB = fn(**a)
            L = a["V"].shape[0]
            return loss, -dA, -dV / L, -dW / L, -dB
        return call

    assert oracle.verify("implicit_gradient", grad_flow, adapter=from_flow).ok
    assert oracle.verify("implicit_gradient", grad_flow).exit_code == 1
    # the states without h_0: h_0 = X A^T put first
    def states_only(**a):
        h, F = forward(**a)
        return h[1:], F

    assert oracle.verify("implicit_forward", states_only, adapter=lambda fn: lambda **a: (
        lambda h, F: (np.concatenate([(a["X"] @ a["A"].T)[None], h]), F))(*fn(**a))).ok
    assert oracle.verify("implicit_forward", states_only).exit_code == 2


#: the kernels of this section whose cases are generated, with the parameter values at which the generator
#: reproduces built-in cases (names and inputs bit for bit: one code path)
_BUILT_IN_AT = {
    "isotonic_regression": [{"n": n} for n in (10, 100, 1000)],
    "topk_mask": [{"n": n, "p": p} for n in (5, 100) for p in (2.0, 4.0 / 3.0)],
    "topk_magnitude": [{"n": 100, "rescale": r} for r in (False, True)],
    "topk_jacobian": [{"n": 5, "mode": m} for m in ("mask", "magnitude")] + [{"n": 5, "mode": "magnitude",
                                                                              "rescale": True}],
    "soft_sort": [{"n": n, "p": p} for n in (5, 100) for p in (2.0, 4.0 / 3.0)],
    "soft_rank": [{"n": 100, "reg": 1.0}],
    "resnet_forward": [{"N": N} for N in (1, 10, 100, 10_000)] + [{"N": 10, "scheme": "heun", "step": "1/(N+1)"},
                                                                  {"N": 3, "scheme": "euler", "step": "1"}],
    "resnet_reverse": [{"N": 100}, {"N": 1, "step": "1/(N+1)", "scheme": "heun"}],
    "resnet_gradient": [{"N": 10}, {"N": 2, "step": "1", "scheme": "euler"}],
    "resnet_gradient_adjoint": [{"N": 100, "residual": "tanh"}],
    "linear_product": [{"N": N, "d": d} for N, d in ((1, 1), (1, 3), (10, 3), (100, 5), (1000, 3))],
    "linear_loss": [{"N": 100, "d": 5}],
    "linear_gradient": [{"N": 10, "d": 3}],
    "implicit_forward": [{"L": 1, "n": 3, "d": 2, "q": 4, "m": 3}, {"L": 200, "n": 4, "d": 2, "q": 5, "m": 4}],
    "implicit_gradient": [{}],
}


def _same_case(a, b):
    if a.name != b.name or set(a.inputs) != set(b.inputs):
        return False
    for key, v in a.inputs.items():
        w = b.inputs[key]
        if isinstance(v, np.ndarray):
            if not (isinstance(w, np.ndarray) and v.dtype == w.dtype and np.array_equal(v, w)):
                return False
        elif type(v) is not type(w) or v != w:
            return False
    return True


@pytest.mark.parametrize("name", sorted(_BUILT_IN_AT))
def test_generator_reproduces_the_built_in_cases(name):
    k = oracle.kernel(name)
    built_in = {c.name: c for c in k.cases()}
    for values in _BUILT_IN_AT[name]:
        generated = oracle.cases_at(k, values)
        assert generated, values
        for case in generated:
            assert case.name in built_in and _same_case(case, built_in[case.name]), (values, case.name)


@pytest.mark.parametrize("name, values, names", [
    ("isotonic_regression", {"n": "1,7"}, ["random_n1", "weighted_n1", "decreasing_n1", "random_n7", "weighted_n7",
                                           "decreasing_n7"]),
    ("topk_mask", {"n": 2, "reg": "0.01"}, ["reg0.01_p2_n2"]),
    ("topk_magnitude", {"n": 30, "k": 5, "p": 1.5, "reg": 1000.0, "rescale": "true,false"},
     ["smooth_p1.5_n30_k5_rescaled", "smooth_p1.5_n30_k5"]),
    ("topk_jacobian", {"n": 12, "k": 11, "mode": "magnitude", "rescale": True, "reg": 0.3},
     ["magnitude_reg0.3_p2_n12_k11_rescaled"]),
    ("soft_rank", {"n": "1,40", "p": 3.0, "reg": 0.5}, ["reg0.5_p3_n1_desc", "reg0.5_p3_n1_asc", "reg0.5_p3_n40_desc",
                                                        "reg0.5_p3_n40_asc"]),
    ("resnet_forward", {"N": 7, "d": 1, "scheme": "heun", "residual": "tanh", "step": "1/N,1/(N+1),1"},
     ["heun_tanh_N7_d1", "heun_tanh_N7_d1_step_1_over_Nplus1", "heun_tanh_N7_d1_step_1"]),
    ("resnet_gradient_adjoint", {"N": 1, "d": 2, "residual": "linear"},
     ["euler_linear_N1_d2", "heun_linear_N1_d2"]),
    ("linear_gradient", {"N": "2,3", "d": 1}, ["random_N2_d1", "random_N3_d1"]),
    ("implicit_gradient", {"L": 3, "n": 1, "d": 1, "q": 2, "m": 1, "activation": "relu,gelu"},
     ["relu_L3_n1_d1_q2_m1", "gelu_L3_n1_d1_q2_m1"]),
])
def test_cases_at_the_users_values_are_named_by_them_and_pass(name, values, names):
    """Extremes included (n = 1, 2; k = n - 1; N = 1; d = 1; q = 2): the package's own implementation passes the
    generated cases, the tolerance rule unchanged."""
    generated = oracle.cases_at(oracle.kernel(name), values)
    assert [c.name for c in generated] == names
    result = oracle.verify(name, oracle.kernel(name).implementation, params=values)
    assert result.ok and [r.case for r in result.rows] == names, result.report()


@pytest.mark.parametrize("name, values, needle", [
    ("isotonic_regression", {"n": 0}, "`n`"),
    ("isotonic_regression", {"n": 10**12}, "`n` of the oracle's isotonic_regression cases = 1000000000000 needs"),
    ("topk_mask", {"n": 5, "k": 5}, "`k` must lie in [1, n - 1]"),
    ("topk_mask", {"n": 1}, "`n`"),
    ("topk_mask", {"n": 10**6}, "memory"),
    ("topk_magnitude", {"p": 1.0}, "`p`"),
    ("topk_magnitude", {"reg": -1.0}, "`reg`"),
    ("topk_jacobian", {"mode": "mask", "rescale": True}, "mode='magnitude' only"),
    ("soft_sort", {"n": 10**6}, "memory"),
    ("resnet_forward", {"step": "2"}, "`step`"),
    ("resnet_forward", {"scheme": "rk4"}, "`scheme`"),
    ("resnet_gradient", {"N": 10**9}, "`N`"),
    ("linear_product", {"d": 0}, "`d`"),
    ("linear_loss", {"N": 10**8, "d": 30}, "`N`"),
    ("implicit_forward", {"q": 2, "d": 3}, "hidden width q must be at least"),
    ("implicit_gradient", {"L": 10**9}, "`L`"),
])
def test_parameters_out_of_their_domain_are_named(name, values, needle):
    with pytest.raises(OracleInputError) as info:
        oracle.cases_at(oracle.kernel(name), values)
    assert needle in str(info.value)


def test_param_from_the_command_line_for_a_step_rule(capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    args = ["oracle", "verify", "resnet_forward", "_oracle_planted:numpy_forward", "--param", "N=7,20",
            "--param", "step=1/(N+1)", "--param", "scheme=heun"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "heun_tanh_N20_step_1_over_Nplus1" in out and "heun_mlp_N7_step_1_over_Nplus1" in out
    assert "10 of 10 cases pass" in out  # 2 depths x the 5 residuals (linear, tanh, tanh_out, bias, mlp)
    assert main(["oracle", "verify", "resnet_forward", "_oracle_planted:numpy_forward", "--param", "step=1/K"]) == 2
    assert "`step`" in capsys.readouterr().err


def test_show_names_the_convention_parameters():
    text = oracle.show("topk_magnitude")
    assert "(argument `rescale`)" in text and "hard_p2_n5_rescaled" in text
    text = oracle.show("resnet_forward")
    assert "(argument `step`)" in text and "heun_tanh_N10_step_1_over_Nplus1" in text and "step: one of" in text


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["isotonic_regression", "topk_mask", "topk_magnitude", "soft_sort", "resnet_forward",
                        "resnet_gradient", "linear_gradient", "implicit_forward"]),
       st.integers(1, 40), st.integers(1, 5), st.sampled_from([1.25, 4.0 / 3.0, 2.0, 3.0]),
       st.sampled_from([None, 1e-3, 0.7, 50.0]), st.sampled_from(["1/N", "1/(N+1)"]))
def test_fuzz_generated_cases_are_distinct_and_pass(name, size, width, p, reg, step):
    """Random parameters within their domains: distinct names, each case passed by the package's implementation."""
    k = oracle.kernel(name)
    declared = {q.name for q in k.parameters}
    values = {"n": max(2, size), "p": p, "reg": reg, "N": size, "d": width, "step": step, "L": size,
              "q": max(width, 2), "m": width}
    values = {key: v for key, v in values.items() if key in declared}
    cases = oracle.cases_at(k, values)
    assert cases and len({c.name for c in cases}) == len(cases)
    result = oracle.verify(name, k.implementation, params=values)
    assert result.exit_code in (0, 2) and not any(r.verdict in ("FAIL", "ERROR") for r in result.rows), result.report()


def test_cases_checked_at_generation_carry_their_reference_and_verification_reuses_it(monkeypatch):
    """A generator that computes each case's reference to check it against the package's limits keeps it in the
    case: verifying the case does not compute it again (the references of large user-chosen cases are costly)."""
    from theory.oracle import _core

    k = oracle.kernel("signature")
    cases = oracle.cases_at(k, {"n": 40, "d": 3, "depth": 3})
    assert cases and all(c.reference is not None for c in cases)
    for c in cases:
        for kept, fresh in zip(c.reference, _core.reference_outputs(k, c.inputs)):
            np.testing.assert_array_equal(kept, fresh)
    calls = []
    monkeypatch.setattr(_core, "reference_outputs", lambda *a, **kw: calls.append(a) or (_ for _ in ()).throw(
        AssertionError("recomputed")))
    assert all(_core._reference_for(k, c) is c.reference for c in cases) and not calls
