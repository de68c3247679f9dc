"""The reference oracle (theory.oracle, `theory oracle`): verification, export, planted bugs, bad input."""

import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from theory import oracle
from theory.cli import main

import _oracle_planted as planted
from _data import run_with_sklearn

ROOT = Path(__file__).resolve().parents[1]
SCIPY_ADAPTER = ROOT / "examples" / "oracle" / "scipy_isotonic.py"
SKLEARN_ADAPTER = ROOT / "examples" / "oracle" / "sklearn_isotonic.py"


@pytest.fixture()
def importable(monkeypatch):
    """Make tests/_oracle_planted importable as `_oracle_planted` for the command line."""
    monkeypatch.syspath_prepend(str(ROOT / "tests"))


def test_list(capsys):
    assert main(["oracle", "list"]) == 0
    out = capsys.readouterr().out
    for name in oracle.kernels():
        assert name in out
    assert "eps" in out


def test_scipy_isotonic_passes_through_adapter(capsys):
    import scipy.optimize

    result = oracle.verify("isotonic_regression", scipy.optimize.isotonic_regression, adapter=SCIPY_ADAPTER)
    assert result.ok, result.report()
    names = {r.case for r in result.rows}
    assert {"n1", "ties_n300", "huge_1e300_n50", "nearly_singular_weights_n100", "decreasing_n100"} <= names
    code = main(["oracle", "verify", "isotonic_regression", "scipy.optimize:isotonic_regression",
                 "--adapter", str(SCIPY_ADAPTER)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "max abs err" in out and "pass" in out


def test_sklearn_isotonic_passes_through_adapter():
    """In a child process: scikit-learn is kept out of the test process (see tests/_data.py)."""
    out = run_with_sklearn(f"""
        import sklearn.isotonic as sk
        from theory import oracle
        result = oracle.verify("isotonic_regression", sk.isotonic_regression, adapter={str(SKLEARN_ADAPTER)!r})
        print("ok" if result.ok else result.report())
    """)
    assert out.strip() == "ok", out


def test_own_kernel_passes_every_kernel_float64_and_float32():
    for name in oracle.kernels():
        k = oracle.kernel(name)
        for dtype in ("float64", "float32"):
            result = oracle.verify(name, k.implementation, dtype=dtype)
            assert result.ok, result.report()


def test_planted_isotonic_bug_fails_readably(capsys, importable):
    result = oracle.verify("isotonic_regression", planted.isotonic_no_cascade)
    assert not result.ok and result.exit_code == 1
    assert any(r.verdict == "pass" for r in result.rows)  # n = 1, sorted inputs still agree
    report = result.report()
    assert "FAIL" in report and "first failing case" in report and "input y" in report
    code = main(["oracle", "verify", "isotonic_regression", "_oracle_planted:isotonic_no_cascade"])
    out = capsys.readouterr().out
    assert code == 1
    assert "first failing case: " + result.failures[0].case in out
    assert "expected x" in out and "got      x" in out


@pytest.mark.parametrize("name, needle", [
    ("isotonic_wrong_shape", "shape"),
    ("isotonic_nan", "non-finite"),
    ("isotonic_strings", "dtype"),
    ("isotonic_raises", "raised RuntimeError"),
])
def test_bad_function_exit_2_names_the_case(name, needle, capsys, importable):
    code = main(["oracle", "verify", "isotonic_regression", f"_oracle_planted:{name}"])
    out = capsys.readouterr().out
    assert code == 2, out
    assert "first failing case: " in out and needle in out
    result = oracle.verify("isotonic_regression", getattr(planted, name))
    assert result.exit_code == 2 and not result.ok


def test_bad_module_and_names_exit_2(capsys, tmp_path):
    assert main(["oracle", "verify", "isotonic_regression", "no_such_module_xyz:f"]) == 2
    assert "cannot import module 'no_such_module_xyz'" in capsys.readouterr().err
    assert main(["oracle", "verify", "isotonic_regression", "numpy:no_such_function"]) == 2
    assert "no attribute" in capsys.readouterr().err
    assert main(["oracle", "verify", "no_such_kernel", "numpy:sort"]) == 2
    assert "unknown kernel" in capsys.readouterr().err
    assert main(["oracle", "verify", "isotonic_regression", "numpy.sort"]) == 2
    assert "module:function" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("raise ImportError('missing dependency foo')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert main(["oracle", "verify", "isotonic_regression", "broken:f"]) == 2
        assert "missing dependency foo" in capsys.readouterr().err
    finally:
        sys.path.remove(str(tmp_path))
    assert main(["oracle", "verify", "isotonic_regression", "numpy:sort", "--adapter", str(tmp_path / "nope.py")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_export_is_byte_identical_and_verifies(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["oracle", "export", str(a), "--kernel", "isotonic_regression"]) == 0
    assert main(["oracle", "export", str(b), "--kernel", "isotonic_regression"]) == 0
    capsys.readouterr()
    files = sorted(p.name for p in a.iterdir())
    assert files == ["isotonic_regression.npz", "manifest.json"]
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes()
    manifest = json.loads((a / "manifest.json").read_text())
    entry = manifest["kernels"]["isotonic_regression"]
    assert manifest["format"] == oracle.FORMAT_VERSION and manifest["version"]
    assert entry["sha256"] == hashlib.sha256((a / entry["file"]).read_bytes()).hexdigest()
    assert entry["tolerance"]["rule"] and entry["tolerance"]["why"] and entry["signature"]
    assert any(c["params"].get("seed") is not None for c in entry["cases"])
    with np.load(a / entry["file"]) as data:  # a plain npz that NumPy reads
        assert "n1/in/y" in data.files and "n1/ref/x" in data.files
    code = main(["oracle", "verify", "isotonic_regression", "scipy.optimize:isotonic_regression",
                 "--adapter", str(SCIPY_ADAPTER), "--vectors", str(a), "--json", str(tmp_path / "r.json")])
    assert code == 0, capsys.readouterr().out
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["ok"] and len(saved["rows"]) == len(entry["cases"])


def test_vectors_edited_or_newer_exit_2(tmp_path, capsys):
    d = tmp_path / "v"
    oracle.export(d, ["isotonic_regression"])
    data = bytearray((d / "isotonic_regression.npz").read_bytes())
    data[-200] ^= 1
    (d / "isotonic_regression.npz").write_bytes(bytes(data))
    args = ["oracle", "verify", "isotonic_regression", "scipy.optimize:isotonic_regression",
            "--adapter", str(SCIPY_ADAPTER), "--vectors", str(d)]
    assert main(args) == 2
    assert "was modified" in capsys.readouterr().err
    oracle.export(d, ["isotonic_regression"], overwrite=True)
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["format"] = oracle.FORMAT_VERSION + 1
    (d / "manifest.json").write_text(json.dumps(manifest))
    assert main(args) == 2
    assert "newer" in capsys.readouterr().err
    assert main(args[:-1] + [str(tmp_path / "empty")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


def test_float32_mode_skips_out_of_range_cases():
    import scipy.optimize

    result = oracle.verify("isotonic_regression", scipy.optimize.isotonic_regression, adapter=SCIPY_ADAPTER,
                           dtype="float32")
    assert result.ok
    skipped = {r.case for r in result.rows if r.verdict == "skip"}
    assert skipped == {"huge_1e300_n50", "tiny_1e-300_n50"}


def test_speed_under_2s_beyond_the_function():
    """Overhead of verifying all cases of each kernel (references, tolerances, comparison): the least of three
    warm runs, so that a moment of load on a shared machine does not count as the oracle's cost."""
    slow = {}
    for name in oracle.kernels():
        k = oracle.kernel(name)
        oracle.verify(name, k.implementation)  # warm the JIT and the case cache
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            result = oracle.verify(name, k.implementation)
            runs.append(time.perf_counter() - start - result.seconds_user)
        if min(runs) >= 2.0:
            slow[name] = min(runs)
    assert not slow, slow


def _not_huge(kernel):
    return [c.name for c in oracle.kernel(kernel).cases() if "1e300" not in c.name and "1e-300" not in c.name]


def test_independent_numpy_implementations_pass():
    for kernel, fn in (("resnet_forward", planted.numpy_forward), ("linear_product", planted.numpy_linear_product),
                       ("linear_gradient", planted.numpy_linear_gradient)):
        result = oracle.verify(kernel, fn)
        assert result.ok, result.report()


def test_planted_topk_float32_fails_in_float64_passes_in_float32():
    cases = _not_huge("topk_mask")
    result = oracle.verify("topk_mask", planted.topk_in_float32, cases=cases)
    assert result.exit_code == 1, result.report()
    assert sum(r.verdict == "FAIL" for r in result.rows) >= len(cases) // 2
    assert "first failing case" in result.report()
    result32 = oracle.verify("topk_mask", planted.topk_in_float32, dtype="float32")
    assert result32.ok, result32.report()


def test_planted_heun_as_euler_fails_only_on_heun_cases(capsys, importable):
    result = oracle.verify("resnet_forward", planted.heun_as_euler)
    assert result.exit_code == 1
    failing = {r.case for r in result.failures}
    heun = {c.name for c in oracle.kernel("resnet_forward").cases() if c.inputs["scheme"] == "heun"}
    assert failing == heun
    assert main(["oracle", "verify", "resnet_forward", "_oracle_planted:heun_as_euler"]) == 1
    out = capsys.readouterr().out
    assert "first failing case: heun_" in out and "input scheme = 'heun'" in out


def test_planted_linear_gradient_without_factor_2_fails():
    result = oracle.verify("linear_gradient", planted.linear_gradient_without_2)
    assert result.exit_code == 1
    # every case with a nonzero gradient disagrees, by half the gradient
    for row in result.rows:
        assert row.verdict == "FAIL" and row.max_rel == pytest.approx(0.5, rel=1e-6)


FBM_ADAPTER = ROOT / "examples" / "oracle" / "fbm_fgn.py"
FRACBM_ADAPTER = ROOT / "examples" / "oracle" / "fracbm_fgn.py"


def test_fgn_test_false_alarm_rate_and_power():
    """The sampler test's stated false-alarm rate (<= 1 %) on the exact sampler, and its stated power."""
    from theory.fbm import fgn

    k = oracle.kernel("fgn")
    rejections, runs = 0, 200
    for seed in range(runs):
        case = k.cases()[seed % len(k.cases())]
        inputs = {**case.inputs, "size": 200}
        draws = fgn(inputs["n"], inputs["hurst"], size=200, rng=np.random.default_rng(10_000 + seed))
        verdict = k.judge(inputs, oracle.reference_outputs(k, inputs), draws)[0]
        rejections += verdict == "FAIL"
    # 1 % of 200 runs is 2 expected; P(Binomial(200, 0.01) > 7) < 1e-3
    assert rejections <= 7, rejections
    for case in k.cases():
        n, hurst, draws = case.inputs["n"], case.inputs["hurst"], case.inputs["size"]
        assert oracle.fgn_power(n, hurst, draws, "H+0.05") > 0.99
        assert oracle.fgn_power(n, hurst, draws, "H-0.05") > 0.99
        if hurst != 0.5:
            assert oracle.fgn_power(n, hurst, draws, "white") > 0.99
    # at H = 0.5 white noise is fGn: the power is the false-alarm rate of the five quadratic statistics (each at
    # ALPHA / 7, the battery's Bonferroni share; the two Kolmogorov-Smirnov tests have no closed-form power)
    null = oracle.fgn_power(64, 0.5, 1000, "white")
    assert null <= oracle.ALPHA and null == pytest.approx(1 - (1 - oracle.ALPHA / 7) ** 5, abs=1e-5)


def white_noise(n, hurst, size, rng):
    return rng.standard_normal((size, n))


def test_planted_white_noise_in_place_of_fgn_fails():
    result = oracle.verify("fgn", white_noise)
    assert result.exit_code == 1
    failing = {r.case for r in result.failures}
    assert failing == {c.name for c in oracle.kernel("fgn").cases() if c.inputs["hurst"] != 0.5}
    assert "do not have fGn" in result.report()


def test_fracbm_davies_harte_fails_at_095_passes_at_05():
    fracbm = pytest.importorskip("fracbm.daviesharte")
    result = oracle.verify("fgn", fracbm.noise, adapter=FRACBM_ADAPTER)
    verdicts = {r.case: r.verdict for r in result.rows}
    assert verdicts["fgn_H0.95_n64"] == "FAIL" and verdicts["fgn_H0.5_n64"] == "pass"
    assert result.exit_code == 1


def test_fbm_package_passes_at_05_and_095():
    fbm = pytest.importorskip("fbm")
    result = oracle.verify("fgn", fbm.fgn, adapter=FBM_ADAPTER, cases=["fgn_H0.5_n64", "fgn_H0.95_n64"])
    assert result.ok, result.report()


def test_scaling_forward_in_float32_fails_in_float64_passes_in_float32():
    assert oracle.verify("scaling_forward", planted.scaling_forward_float32).exit_code == 1
    assert oracle.verify("scaling_forward", planted.scaling_forward_float32, dtype="float32").ok


def test_every_kernel_from_exported_vectors(tmp_path):
    oracle.export(tmp_path)
    for name in oracle.kernels():
        k = oracle.kernel(name)
        result = oracle.verify(name, k.implementation, vectors=tmp_path)
        assert result.ok, result.report()
        assert [r.case for r in result.rows] == [c.name for c in k.cases()]


def test_scaling_weights_laws_statistical():
    from theory.scaling import weights

    k = oracle.kernel("scaling_weights")
    assert {c.inputs["law"] for c in k.cases()} == {"gaussian", "uniform", "rademacher", "smooth", "fbm"}
    assert oracle.verify("scaling_weights", k.implementation).ok

    def gaussian_for_every_law(L, d, law, hurst, rng):  # planted: every law drawn i.i.d. Gaussian
        return weights(L, d, "gaussian", None, rng)

    result = oracle.verify("scaling_weights", gaussian_for_every_law)
    assert {r.case for r in result.failures} == {"fbm_H0.3_L64_d32", "fbm_H0.9_L64_d32", "uniform_L64_d32",
                                                  "rademacher_L64_d32", "smooth_L64_d32"}
    report = result.report()
    assert "not +-1" in report and "not smooth across layers" in report and "KS against U(" in report

    def uniform_for_gaussian(L, d, law, hurst, rng):  # planted: the same two moments, another law
        return weights(L, d, "uniform" if law == "gaussian" else law, hurst if law == "fbm" else None, rng)

    result = oracle.verify("scaling_weights", uniform_for_gaussian)
    assert {r.case for r in result.failures} == {"gaussian_L64_d32"}


def test_sampler_false_alarm_rates_weights_and_fbm_paths():
    """The stated false-alarm rate (<= 1 %) of the weight-law and fBm-path tests on the package's exact samplers."""
    from theory.fbm import fbm
    from theory.scaling import weights

    k = oracle.kernel("scaling_weights")
    rejections, runs = 0, 140
    for seed in range(runs):
        inputs = k.cases()[seed % len(k.cases())].inputs
        V = weights(64, 32, inputs["law"], inputs["hurst"] if inputs["law"] == "fbm" else None,
                    np.random.default_rng(60_000 + seed))
        rejections += k.judge(inputs, oracle.reference_outputs(k, inputs), V)[0] == "FAIL"
    assert rejections <= 5, rejections  # P(Binomial(140, 0.01) > 5) < 0.002
    k = oracle.kernel("fbm")
    rejections, runs = 0, 200
    for seed in range(runs):
        inputs = {**k.cases()[seed % len(k.cases())].inputs, "size": 300}
        paths = fbm(inputs["n"], inputs["hurst"], size=300, length=inputs["length"],
                    rng=np.random.default_rng(50_000 + seed))
        rejections += k.judge(inputs, oracle.reference_outputs(k, inputs), paths)[0] == "FAIL"
    assert rejections <= 7, rejections  # P(Binomial(200, 0.01) > 7) < 1e-3


def test_fbm_paths_kernel_power_and_planted_bugs():
    from theory.fbm import fbm, fgn

    k = oracle.kernel("fbm")
    assert oracle.verify("fbm", k.implementation).ok
    for case in k.cases():
        i = case.inputs
        for alternative in ("H+0.05", "H-0.05", "unscaled"):
            assert oracle.fbm_power(i["n"], i["hurst"], i["length"], i["size"], alternative) > 0.99
        if i["hurst"] != 0.5:
            assert oracle.fbm_power(i["n"], i["hurst"], i["length"], i["size"], "brownian") > 0.99

    def brownian(n, hurst, size, length, rng):  # planted: Brownian motion whatever H
        return fbm(n, 0.5, size=size, length=length, rng=rng)

    def unscaled(n, hurst, size, length, rng):  # planted: cumulative fGn without the step Delta^H
        return np.concatenate([np.zeros((size, 1)), np.cumsum(fgn(n, hurst, size=size, rng=rng), axis=1)], axis=1)

    def shifted(n, hurst, size, length, rng):  # planted: the path does not start at 0
        return fbm(n, hurst, size=size, length=length, rng=rng) + 1e-3

    result = oracle.verify("fbm", brownian)
    assert {r.case for r in result.failures} == {c.name for c in k.cases() if c.inputs["hurst"] != 0.5}
    assert {r.case for r in oracle.verify("fbm", unscaled).failures} == {c.name for c in k.cases()}
    result = oracle.verify("fbm", shifted)
    assert result.exit_code == 1 and "not at B(0) = 0" in result.report()


def test_implicit_gradient_in_float32_fails_in_float64_passes_in_float32():
    result = oracle.verify("implicit_gradient", planted.implicit_gradient_float32)
    assert result.exit_code == 1
    assert all(r.verdict == "FAIL" for r in result.rows if r.case.endswith("L1_q4_m3"))
    assert oracle.verify("implicit_gradient", planted.implicit_gradient_float32, dtype="float32").ok


def test_sampler_that_raises_or_returns_bad_shape_exit_2():
    def raises(n, hurst, size, rng):
        raise ValueError("hurst out of range")

    def transposed(n, hurst, size, rng):
        return rng.standard_normal((n, size))

    for fn, needle in ((raises, "raised ValueError"), (transposed, "shape")):
        result = oracle.verify("fgn", fn)
        assert result.exit_code == 2 and needle in result.report()


def test_jax_linear_product_through_adapter():
    """JAX code through an adapter (skipped where JAX is not installed; it is not a test dependency)."""
    pytest.importorskip("jax")
    from examples.oracle import jax_nets

    adapter = ROOT / "examples" / "oracle" / "jax_linear_product.py"
    assert oracle.verify("linear_product", jax_nets.product, adapter=adapter).ok
    result = oracle.verify("resnet_forward", jax_nets.euler_tanh, adapter=ROOT / "examples" / "oracle" / "jax_resnet_tanh.py",
                           cases=["euler_tanh_N1", "euler_tanh_N100", "euler_tanh_N10000"])
    assert result.ok, result.report()


def test_adjoint_and_backprop_gradients_are_distinct_kernels():
    """The adjoint's vectors reject an exact backprop (its O(1/N^2) difference is far above rounding), and the
    exact gradient's vectors reject the adjoint; each passes its own, Euler and Heun."""
    adjoint = oracle.kernel("resnet_gradient_adjoint")
    backprop = oracle.kernel("resnet_gradient")
    assert {c.inputs["scheme"] for c in adjoint.cases()} == {"euler", "heun"}
    assert oracle.verify(adjoint, adjoint.implementation).ok
    assert oracle.verify(adjoint, backprop.implementation).exit_code == 1
    assert oracle.verify(backprop, adjoint.implementation).exit_code == 1


def test_sinkhorn_kernels_independent_numpy_passes_planted_bugs_fail():
    for dtype in ("float64", "float32"):
        assert oracle.verify("sinkhorn", planted.numpy_sinkhorn, dtype=dtype).ok
        result = oracle.verify("sinkhorn_attention", planted.numpy_attention, dtype=dtype)
        assert result.ok, result.report()
    result = oracle.verify("sinkhorn", planted.sinkhorn_five_iterations)
    assert result.exit_code == 1
    failing = {r.case for r in result.failures}
    # five normalisations converge only where the limit is reached at once (n = 1, separable, constant logits)
    assert {"gauss_n50_scale5", "gauss_n200_scale1", "symmetric_n10"} <= failing
    assert not failing & {"n1", "separable_n8", "constant_n6"}
    result = oracle.verify("sinkhorn_attention", planted.attention_softmax_over_columns)
    failing = {r.case for r in result.failures}
    assert result.exit_code == 1 and all(c.startswith("softmax_") for c in failing)
    assert {"softmax_n5", "softmax_n200", "softmax_assumption_5_2_n12"} <= failing
    kinds = {c.inputs["kind"] for c in oracle.kernel("sinkhorn_attention").cases()}
    assert kinds == {"kernel", "softmax", "sinkhorn"}
    # the doubly stochastic matrix where the plan is asked fails exactly the plan's cases (but n = 1, where K = P)
    result = oracle.verify("sinkhorn", planted.sinkhorn_marginals_ignored)
    assert {r.case for r in result.failures} == {
        c.name for c in oracle.kernel("sinkhorn").cases() if c.inputs["marginals"] == "uniform"} - {"n1_uniform"}


def test_momentum_kernels_independent_numpy_passes_planted_bugs_fail():
    for dtype in ("float64", "float32"):
        assert oracle.verify("momentum_forward", planted.numpy_momentum_forward, dtype=dtype).ok
        assert oracle.verify("momentum_inverse", planted.numpy_momentum_inverse, dtype=dtype).ok
    result = oracle.verify("momentum_forward", planted.momentum_forward_without_1_minus_gamma)
    assert result.exit_code == 1
    # the forgotten factor 1 - gamma is 1 at gamma = 0: those cases (and only those) still agree
    assert {r.case for r in result.rows if r.verdict == "pass"} == {
        c.name for c in oracle.kernel("momentum_forward").cases() if c.inputs["gamma"] == 0.0}
    result = oracle.verify("momentum_inverse", planted.momentum_inverse_without_division)
    assert result.exit_code == 1
    assert {r.case for r in result.rows if r.verdict == "pass"} == {
        c.name for c in oracle.kernel("momentum_inverse").cases() if c.inputs["gamma"] == 1.0}
    assert "first failing case" in result.report()


def test_momentum_psi_series_passes_first_order_map_fails():
    """Prop. 4.3's series (an independent evaluation) agrees with Psi_eps on every case, eps = 0.01 included
    (its terms from n = 86 on, where (2n)! leaves float64, are the zeros they are in float64, not 0 * inf)."""
    result = oracle.verify("momentum_psi", planted.psi_by_series)
    assert result.ok, result.report()
    result = oracle.verify("momentum_psi", planted.psi_ignoring_eps)
    assert result.exit_code == 1
    assert {r.case for r in result.rows if r.verdict == "pass"} == {
        c.name for c in oracle.kernel("momentum_psi").cases() if c.inputs["eps"] == 0.0} | {"zero_eps0.3"}


def test_public_fbm_path_samplers():
    """The `fbm` package's paths pass every case; fracbm's Davies-Harte motion (negative circulant eigenvalues
    clipped) fails at H = 0.95 only."""
    fbm = pytest.importorskip("fbm")
    result = oracle.verify("fbm", fbm.fbm, adapter=ROOT / "examples" / "oracle" / "fbm_paths.py")
    assert result.ok, result.report()
    fracbm = pytest.importorskip("fracbm.daviesharte")
    result = oracle.verify("fbm", fracbm.motion, adapter=ROOT / "examples" / "oracle" / "fracbm_paths.py")
    assert {r.case for r in result.failures} == {"fbm_H0.95_n64_T1"} and result.exit_code == 1


def test_momentum_memory_free_gradient_passes_the_exact_gradient_vectors():
    """Both gradient methods of theory.momentum: the memory-free one (activations rebuilt by the inverse (4.3))
    agrees with backpropagation's vectors within the rule wherever gamma > 0; gamma = 0 has no inverse and the
    method refuses it, which the oracle reports as an error (exit 2), not as a disagreement."""
    from theory.momentum import gradient

    def memory_free(x0, v0, theta, residual, gamma, y):
        loss, dtheta, dx0, dv0 = gradient(x0, v0, theta, residual, gamma, y, method="memory_free")
        return np.asarray(loss), dtheta, dx0, dv0

    cases = oracle.kernel("momentum_gradient").cases()
    result = oracle.verify("momentum_gradient", memory_free, cases=[c.name for c in cases if c.inputs["gamma"] > 0])
    assert result.ok, result.report()
    result = oracle.verify("momentum_gradient", memory_free, cases=[c.name for c in cases if c.inputs["gamma"] == 0])
    assert result.exit_code == 2 and "gamma" in result.report()


class _TensorLike:
    """A foreign array (as torch's tensors are): a dtype NumPy cannot interpret, values through detach()."""

    def __init__(self, a):
        self.a, self.dtype = a, "foreign.float32"

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def test_foreign_tensor_outputs_are_read_and_their_dtype_reported():
    """Regression: a returned tensor whose dtype is not a NumPy dtype raised TypeError inside verify."""
    from theory.isotonic import isotonic_regression

    def as_float32_tensor(y, w, increasing):
        return _TensorLike(isotonic_regression(y, w, increasing=increasing)[0].astype(np.float32))

    result = oracle.verify("isotonic_regression", as_float32_tensor, cases=_not_huge("isotonic_regression"))
    assert result.exit_code == 1
    assert "returned float32 in float64 mode" in result.report()


# ----------------------------------------------------------------------------------------------
# bad input to the power functions; user code that exits; runs that compare nothing; output paths


@pytest.mark.parametrize("call, exc", [
    (lambda: oracle.fgn_power(64, 0.5, 1000, "H-0.5"), ValueError),
    (lambda: oracle.fgn_power(64, 0.5, 1000, "brownian"), ValueError),
    (lambda: oracle.fgn_power(64, 0.5, 1000, None), TypeError),
    (lambda: oracle.fbm_power(64, 0.5, 1.0, 1000, "H+0.5"), ValueError),
    (lambda: oracle.fbm_power(64, 0.5, 1.0, 1000, "white"), ValueError),
])
def test_power_refuses_an_unknown_alternative(call, exc):
    """Any alternative but the declared ones was silently taken for "H-0.05"."""
    with pytest.raises(exc, match="`alternative`"):
        call()


@pytest.mark.parametrize("kwargs, name", [
    ({"n": 1}, "n"), ({"n": "64"}, "n"), ({"hurst": 1.0}, "hurst"), ({"hurst": None}, "hurst"),
    ({"draws": 0}, "draws"), ({"draws": 2.5}, "draws"), ({"n": 10**6}, "n"),
])
def test_power_validates_its_other_arguments(kwargs, name):
    args = {"n": 64, "hurst": 0.5, "draws": 1000, "alternative": "H+0.05", **kwargs}
    with pytest.raises((TypeError, ValueError), match=f"`{name}`"):
        oracle.fgn_power(**args)
    with pytest.raises((TypeError, ValueError), match=f"`{name}`"):
        oracle.fbm_power(length=1.0, **args)
    with pytest.raises(ValueError, match="`length`"):
        oracle.fbm_power(64, 0.5, -1.0, 1000, "H+0.05")


_EXITING = '''
import sys

from theory.isotonic import isotonic_regression


def exits(y, w, increasing=True):
    sys.exit(0)


def exits_on_one_point(y, w, increasing=True):
    if len(y) == 1:
        sys.exit(0)
    return isotonic_regression(y, w, increasing=increasing)[0]


def interrupts_on_one_point(y, w, increasing=True):
    if len(y) == 1:
        raise KeyboardInterrupt
    return isotonic_regression(y, w, increasing=increasing)[0]


def sampler_exits(n, hurst, size, rng):
    sys.exit(3)


calls = []


def recorded(y, w, increasing=True):
    calls.append(len(y))
    return isotonic_regression(y, w, increasing=increasing)[0]
'''


@pytest.fixture()
def exiting(tmp_path, monkeypatch):
    """A module of functions under test that call sys.exit or raise KeyboardInterrupt, importable as
    `oracle_exiting`."""
    (tmp_path / "oracle_exiting.py").write_text(_EXITING)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("oracle_exiting", None)
    module = importlib.import_module("oracle_exiting")
    yield module
    sys.modules.pop("oracle_exiting", None)


def _verify(*args, **kwargs):
    try:
        return oracle.verify(*args, **kwargs)
    except (SystemExit, KeyboardInterrupt) as exc:  # what the oracle did before: the run ended silently
        pytest.fail(f"{type(exc).__name__} escaped from verify")


def test_sys_exit_in_the_function_is_an_error_of_the_case(exiting, capsys):
    """`theory oracle verify` exited 0 with no output when the function under test called sys.exit(0)."""
    try:
        code = main(["oracle", "verify", "isotonic_regression", "oracle_exiting:exits_on_one_point"])
    except SystemExit as exc:
        pytest.fail(f"SystemExit({exc.code}) escaped from the command")
    out = capsys.readouterr().out
    assert code == 2, out
    assert "n1" in out and "SystemExit(0)" in out
    assert "first failing case: n1" in out
    result = _verify("isotonic_regression", exiting.exits)
    assert result.exit_code == 2 and not result.ok
    assert all(r.verdict == "ERROR" and "SystemExit(0)" in r.message for r in result.rows)
    result = _verify("fgn", exiting.sampler_exits, cases=["fgn_H0.5_n64"])
    assert result.exit_code == 2 and "SystemExit(3)" in result.rows[0].message


def test_keyboard_interrupt_in_the_function_stops_the_run_as_an_error(exiting):
    cases = [c.name for c in oracle.kernel("isotonic_regression").cases()]
    at = cases.index("n1")
    result = _verify("isotonic_regression", exiting.interrupts_on_one_point)
    assert result.exit_code == 2 and not result.ok
    assert [r.verdict for r in result.rows[:at]] == ["pass"] * at
    assert result.rows[at].verdict == "ERROR" and "KeyboardInterrupt" in result.rows[at].message
    assert all(r.verdict == "skip" and "not run" in r.message for r in result.rows[at + 1:])
    assert len(result.rows) == len(cases)
    assert "the remaining cases are not run" in result.report()


def test_adapter_or_module_that_exits_is_bad_input(exiting, tmp_path, capsys):
    def adapt(fn):
        sys.exit(1)

    with pytest.raises(oracle.OracleInputError, match="SystemExit"):
        _verify("isotonic_regression", exiting.recorded, adapter=adapt)
    (tmp_path / "exits_at_import.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "adapter_exits.py").write_text("import sys\nsys.exit(0)\n")
    try:
        assert main(["oracle", "verify", "isotonic_regression", "exits_at_import:f"]) == 2
        assert main(["oracle", "verify", "isotonic_regression", "oracle_exiting:recorded",
                     "--adapter", str(tmp_path / "adapter_exits.py")]) == 2
    except SystemExit as exc:
        pytest.fail(f"SystemExit({exc.code}) escaped from the command")
    assert capsys.readouterr().err.count("SystemExit(0)") == 2


def test_a_run_that_compared_nothing_is_not_a_success(exiting, capsys):
    """Every selected case skipped (float32 mode, cases outside float32's range), or none selected,
    was reported as a pass with exit code 0."""
    result = _verify("isotonic_regression", exiting.recorded, dtype="float32",
                     cases=["huge_1e300_n50", "tiny_1e-300_n50"])
    assert [r.verdict for r in result.rows] == ["skip", "skip"]
    assert not result.ok and result.exit_code == 2
    assert "nothing was compared" in result.summary()
    empty = _verify("isotonic_regression", exiting.recorded, cases=[])
    assert not empty.ok and empty.exit_code == 2 and "no case selected" in empty.summary()
    code = main(["oracle", "verify", "isotonic_regression", "oracle_exiting:recorded", "--dtype", "float32",
                 "--case", "huge_1e300_n50"])
    assert code == 2 and "nothing was compared" in capsys.readouterr().out
    assert exiting.calls == []


@pytest.mark.parametrize("target", ["missing/x.json", ".", "a_file/x.json"])
def test_json_path_checked_before_the_run(target, exiting, tmp_path, capsys):
    """--json /nonexistent/x.json ended a run whose every case passed with a traceback (exit 1)."""
    (tmp_path / "a_file").write_text("not a folder")
    path = tmp_path / target
    code = main(["oracle", "verify", "isotonic_regression", "oracle_exiting:recorded", "--json", str(path)])
    captured = capsys.readouterr()
    assert code == 2
    assert exiting.calls == []  # refused before the function under test ran
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and "--json" in captured.err


def test_json_written_atomically(exiting, tmp_path, capsys):
    out = tmp_path / "r.json"
    out.write_text("an older result")
    assert main(["oracle", "verify", "isotonic_regression", "oracle_exiting:recorded", "--case", "n1",
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text())["exit_code"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["oracle_exiting.py", "r.json"]  # no temporary left


def test_export_onto_a_file_or_an_earlier_export(tmp_path, capsys):
    """`theory oracle export` onto an existing file ended in a traceback (FileExistsError, exit 1); onto an
    earlier export it replaced the vectors silently."""
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    for target in (f, f / "sub"):
        assert main(["oracle", "export", str(target), "--kernel", "isotonic_regression"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and str(f) in err
    assert f.read_text() == "keep me"
    d = tmp_path / "v" / "deeper"  # missing parents are created
    assert main(["oracle", "export", str(d), "--kernel", "isotonic_regression"]) == 0
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    assert main(["oracle", "export", str(d), "--kernel", "isotonic_regression"]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and "manifest.json" in err
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert main(["oracle", "export", str(d), "--kernel", "isotonic_regression", "--force"]) == 0
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before  # byte-identical, nothing else left


def test_export_that_fails_half_way_leaves_the_earlier_export(tmp_path, monkeypatch, capsys):
    """A write that fails (a full disk) leaves the earlier vectors as they were and exits 2, not 1."""
    from theory import _files

    d = tmp_path / "v"
    names = ["isotonic_regression", "topk_mask"]
    oracle.export(d, names)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    real, count = _files._staged, []

    def full_disk(path, data):
        count.append(path)
        if len(count) == 2:
            raise OSError(28, "No space left on device", str(path))
        return real(path, data)

    monkeypatch.setattr(_files, "_staged", full_disk)
    args = ["oracle", "export", str(d), "--force"] + [a for n in names for a in ("--kernel", n)]
    assert main(args) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


def test_a_missing_library_of_an_implementation_is_named_with_its_install_line(tmp_path, monkeypatch):
    """The README's JAX example without JAX installed: exit 2, one line with the pip command."""
    import importlib.util

    from theory.oracle import OracleInputError, load_function

    if importlib.util.find_spec("jax") is not None:
        pytest.skip("JAX is installed here")
    with pytest.raises(OracleInputError, match=r"No module named 'jax'; install it with `pip install 'jax\[cpu\]'`"):
        load_function("examples.oracle.jax_nets:product")
