"""The oracle's kernels for what implementations do: Sinkhorn at a fixed number of normalisations and a temperature
(`sinkhorn_iterations`), batched multi-head masked attention (`attention_heads`), and the bias and perceptron
residuals of the four `resnet_*` kernels. Independent NumPy implementations pass in float64 and float32 mode, the
planted bugs (tests/_oracle_planted.py, its last two sections) fail exactly where the bug exists, the parameters
generate cases, and bad values are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _oracle_planted as planted
from theory import oracle
from theory.cli import main
from theory.oracle import OracleInputError
from theory.oracle._kernels import attention as att
from theory.oracle._kernels import resnet as rk


def _cases(kernel, keep=lambda c: True):
    return {c.name for c in oracle.kernel(kernel).cases() if keep(c)}


def _failed(result):
    return {r.case for r in result.failures}


def _trivial(c):
    """Cases where the order of the normalisations and the temperature cannot matter: one entry, or logits whose
    matrix is uniform from the second normalisation on."""
    return c.inputs["C"].shape[0] == 1 or c.name.startswith(("separable_", "constant_"))


# ---------------------------------------------------------------------------------------------- sinkhorn_iterations

def test_sinkhorn_iterations_cover_the_declared_grid():
    cases = oracle.kernel("sinkhorn_iterations").cases()
    assert {c.inputs["n_iter"] for c in cases} == set(att.ITERATIONS)
    assert {c.inputs["eps"] for c in cases} == set(att.TEMPERATURES)
    assert {c.inputs["marginals"] for c in cases} == {"ones", "uniform"}
    assert min(c.inputs["C"].shape[0] for c in cases) == 1


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_independent_sinkhorn_iterations_pass(dtype):
    result = oracle.verify("sinkhorn_iterations", planted.numpy_sinkhorn_iterations, dtype=dtype)
    assert result.ok and not result.failures, result.report()
    undecided = {r.case for r in result.inconclusive}
    if dtype == "float64":
        assert not undecided
    else:  # the worst-case rule grows like n_iter (n + 2) max|C| / eps: 21 normalisations at eps = 0.1, and 1e6
        assert undecided == {"gauss_n30_scale1_iter21_eps0.1", "gauss_n8_scale5_iter21_eps0.1",
                             "gauss_n30_scale1_iter21_eps0.1_uniform", "offset_1e6_n6_iter3_eps1"}


def test_sinkhorn_iterations_planted_bugs_fail_where_they_exist():
    ordered = oracle.verify("sinkhorn_iterations", planted.sinkhorn_iterations_columns_first)
    pairs = oracle.verify("sinkhorn_iterations", planted.sinkhorn_iterations_pairs)
    for result in (ordered, pairs):
        assert result.exit_code == 1
        # the order and the count matter at 1 and 3 normalisations; at 21 they mostly converged to the same limit
        assert _cases("sinkhorn_iterations", lambda c: c.inputs["n_iter"] in (1, 3) and not _trivial(c)) <= \
            _failed(result)
        assert not _failed(result) & _cases("sinkhorn_iterations", lambda c: c.inputs["n_iter"] == 0 or _trivial(c))
    inverse = oracle.verify("sinkhorn_iterations", planted.sinkhorn_iterations_temperature_times)
    assert _failed(inverse) == _cases("sinkhorn_iterations", lambda c: c.inputs["eps"] != 1.0 and not (
        _trivial(c) and (c.inputs["n_iter"] >= 1 or c.name.startswith(("separable_", "constant_")))))


def test_sinkhorn_iterations_reference_identities():
    """n_iter = 1 is the row SoftMax of C / eps; n_iter = 0 is exp(C / eps); odd counts have unit row sums."""
    C = np.random.default_rng(0).standard_normal((5, 5))
    K1 = oracle.kernel("sinkhorn_iterations").reference(C=C, n_iter=1, eps=0.5, marginals="ones")[0]
    E = np.exp(C / 0.5)
    np.testing.assert_allclose(K1, E / E.sum(axis=1, keepdims=True), rtol=1e-14)
    K0 = oracle.kernel("sinkhorn_iterations").reference(C=C, n_iter=0, eps=0.5, marginals="uniform")[0]
    np.testing.assert_allclose(K0, E / 5, rtol=1e-15)
    K3 = oracle.kernel("sinkhorn_iterations").reference(C=C, n_iter=3, eps=10.0, marginals="ones")[0]
    np.testing.assert_allclose(K3.sum(axis=1), 1.0, rtol=1e-14)


def test_sinkhorn_iterations_generated_at_the_users_values():
    k = oracle.kernel("sinkhorn_iterations")
    generated = oracle.cases_at(k, {"n": "1,12", "n_iter": "0,7", "eps": 0.25})
    assert [c.name for c in generated] == ["gauss_n1_scale1_iter0_eps0.25", "gauss_n1_scale1_iter7_eps0.25",
                                           "gauss_n12_scale1_iter0_eps0.25", "gauss_n12_scale1_iter7_eps0.25"]
    built_in = {c.name: c for c in k.cases()}
    again = oracle.cases_at(k, {"n": 8, "n_iter": 21, "eps": 0.1})[0]
    assert np.array_equal(again.inputs["C"], built_in[again.name].inputs["C"])  # one code path
    result = oracle.verify("sinkhorn_iterations", planted.numpy_sinkhorn_iterations,
                           params={"n": "1,12", "n_iter": "0,7", "eps": 0.25, "marginals": "ones,uniform"})
    assert result.ok, result.report()


@pytest.mark.parametrize("values, needle", [
    ({"n": 0}, "`n`"), ({"eps": 0.0}, "eps"), ({"n_iter": -1}, "n_iter"),
    ({"n_iter": 0, "eps": 0.001, "scale": 5.0}, "`n_iter` = 0: K^0 = exp(C / eps) overflows"),
    ({"eps": 1e-308, "scale": 1e10}, "C / eps overflows"), ({"n": 10**6}, "`n`"), ({"n_iter": 10**12}, "`n_iter`"),
    ({"marginals": "plan"}, "marginals"),
])
def test_sinkhorn_iterations_bad_values_named(values, needle):
    with pytest.raises(OracleInputError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("^", r"\^")):
        oracle.cases_at(oracle.kernel("sinkhorn_iterations"), values)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 12), n_iter=st.integers(0, 25), eps=st.sampled_from([0.05, 0.3, 1.0, 4.0, 50.0]),
       scale=st.sampled_from([0.0, 0.5, 2.0]))
def test_fuzz_sinkhorn_iterations_independent_passes(n, n_iter, eps, scale):
    result = oracle.verify("sinkhorn_iterations", planted.numpy_sinkhorn_iterations,
                           params={"n": n, "n_iter": n_iter, "eps": eps, "scale": scale})
    assert not result.failures and result.exit_code in (0, 2), result.report()


# ---------------------------------------------------------------------------------------------- attention_heads

def _heads(keep=lambda c: True):
    return _cases("attention_heads", keep)


def _masked(c):
    return not np.all(c.inputs["mask"])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_independent_attention_heads_pass(dtype):
    result = oracle.verify("attention_heads", planted.numpy_attention_heads, dtype=dtype)
    assert result.ok and not result.failures, result.report()
    undecided = {r.case for r in result.inconclusive}
    if dtype == "float64":
        assert not undecided
    else:  # g = 2 n_iter of the rule: 21 Sinkhorn normalisations, and 3 with the large logits
        assert undecided == {"sinkhorn21_B2_n6_d8_h2_dh4", "sinkhorn21_B3_n10_d6_h1_dh6", "sinkhorn21_B2_n12_d8_h4_dh2",
                             "sinkhorn3_B2_n8_d4_h2_dh3_large_logits_x4",
                             "sinkhorn21_B2_n8_d4_h2_dh3_large_logits_x4"}


def test_attention_heads_hard_cases_present():
    cases = oracle.kernel("attention_heads").cases()
    assert any(c.inputs["WQ"].shape[0] == 1 for c in cases)           # one head
    assert any(c.inputs["X"].shape[1] == 1 for c in cases)            # one token
    assert any(c.params["mask"] == "causal" for c in cases) and any(c.params["mask"] == "padding" for c in cases)
    assert any("large_logits" in c.name for c in cases)
    assert all(not _masked(c) for c in cases if c.inputs["kind"] == "sinkhorn")


def test_attention_heads_planted_bugs_fail_exactly_where_they_exist():
    scaled = oracle.verify("attention_heads", planted.attention_heads_scaled)
    assert _failed(scaled) == _heads(lambda c: c.inputs["WQ"].shape[2] > 1 and c.inputs["X"].shape[1] > 1)
    after = oracle.verify("attention_heads", planted.attention_heads_mask_after)
    assert _failed(after) == _heads(_masked)
    inter = oracle.verify("attention_heads", planted.attention_heads_interleaved)
    assert _failed(inter) == _heads(lambda c: c.inputs["WQ"].shape[0] > 1 and c.inputs["WQ"].shape[2] > 1)


def test_attention_heads_one_sinkhorn_normalisation_is_the_softmax():
    k = oracle.kernel("attention_heads")
    by = {c.name: c for c in k.cases()}
    one, soft = by["sinkhorn1_B2_n6_d8_h2_dh4"], by["softmax_B2_n6_d8_h2_dh4"]
    np.testing.assert_allclose(k.reference(**one.inputs)[0], k.reference(**soft.inputs)[0], rtol=1e-13, atol=1e-15)


def test_masked_softmax_reduction_is_exact_on_a_causal_mask():
    """The masked SoftMax of the reference equals the SoftMax over the kept keys, its masked entries exactly 0."""
    C = 30.0 * np.random.default_rng(1).standard_normal((7, 7))
    keep = np.tril(np.ones((7, 7), dtype=bool))
    A = att._masked_softmax(C, keep)
    assert np.all(A[~keep] == 0.0)
    for i in range(7):
        row = np.exp(C[i, : i + 1] - C[i, : i + 1].max())
        np.testing.assert_allclose(A[i, : i + 1], row / row.sum(), rtol=1e-13)


def _inputs(**change):
    case = next(c for c in oracle.kernel("attention_heads").cases() if c.name == "softmax_B2_n6_d8_h2_dh4")
    return {**case.inputs, **change}


@pytest.mark.parametrize("change, needle", [
    ({"mask": np.zeros((6, 6), dtype=bool)}, "`mask` masks every key of query 0"),
    ({"mask": np.ones((3, 6, 6), dtype=bool)}, "`mask` must be a boolean array of shape"),
    ({"mask": np.ones((6, 6))}, "`mask` must be a boolean"),
    ({"kind": "sinkhorn", "n_iter": 3, "mask": np.tril(np.ones((6, 6), dtype=bool))}, "`mask` with `kind` = 'sinkhorn'"),
    ({"kind": "kernel"}, "`kind` must be one of"), ({"n_iter": 2}, "`n_iter` must be 1"),
    ({"WV": np.ones((2, 8, 3))}, "`WQ`, `WK` and `WV`"), ({"X": np.ones((6, 8))}, "`X` must have shape"),
])
def test_attention_heads_reference_refuses_by_name(change, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        oracle.kernel("attention_heads").reference(**_inputs(**change))


def test_attention_heads_generated_and_refused():
    k = oracle.kernel("attention_heads")
    generated = oracle.cases_at(k, {"B": 1, "n": "1,9", "h": 3, "d_h": 1, "mask": "causal,padding"})
    assert [c.name for c in generated] == ["softmax_B1_n1_d8_h3_dh1_causal", "softmax_B1_n1_d8_h3_dh1_padding",
                                           "softmax_B1_n9_d8_h3_dh1_causal", "softmax_B1_n9_d8_h3_dh1_padding"]
    built_in = {c.name: c for c in k.cases()}
    again = oracle.cases_at(k, {"B": 2, "n": 12, "d": 8, "h": 4, "d_h": 2, "mask": "causal"})[0]
    assert all(np.array_equal(v, built_in[again.name].inputs[key]) for key, v in again.inputs.items()
               if isinstance(v, np.ndarray))
    result = oracle.verify("attention_heads", planted.numpy_attention_heads,
                           params={"n": "1,9", "kind": "sinkhorn", "n_iter": "2,5"})
    assert result.ok, result.report()
    for values, needle in (({"kind": "sinkhorn", "n_iter": 3, "mask": "causal"}, "`mask` = 'causal' with `kind`"),
                           ({"n_iter": 4}, "`n_iter` = 4 with `kind` = 'softmax'"), ({"h": 0}, "`h`"),
                           ({"n": 10**5}, "`n`"), ({"mask": "random"}, "mask")):
        with pytest.raises(OracleInputError, match=needle):
            oracle.cases_at(k, values)


def test_show_reads_for_the_new_kernels(capsys):
    for name in ("sinkhorn_iterations", "attention_heads"):
        assert main(["oracle", "show", name]) == 0
        out = capsys.readouterr().out
        assert "conventions" in out and "tolerance" in out and "n_iter" in out
    assert "~mask" in oracle.show("attention_heads") and "sqrt(d_h)" in oracle.show("attention_heads")


# ---------------------------------------------------------------------------------------------- resnet: bias, mlp

def _new_residual(c):
    return c.inputs["residual"] in ("bias", "mlp")


def test_resnet_kernels_have_bias_and_mlp_cases_at_every_depth_scheme_and_step():
    for name in ("resnet_forward", "resnet_reverse", "resnet_gradient", "resnet_gradient_adjoint"):
        cases = [c for c in oracle.kernel(name).cases() if _new_residual(c)]
        assert {c.inputs["residual"] for c in cases} == {"bias", "mlp"}
        assert {c.inputs["scheme"] for c in cases} == set(rk.SCHEMES)
        assert {c.params["N"] for c in cases} >= {1, 10, 100}
        assert any(c.name.endswith("_step_1") for c in cases) and any(c.name.endswith("_over_Nplus1") for c in cases)
        for c in cases:
            K = c.inputs["theta"].shape[0]
            shape = (K, 4) if c.inputs["residual"] == "bias" else (K, 2 * 4 * rk.MLP_WIDTH + rk.MLP_WIDTH)
            assert c.inputs["theta"].shape == shape, c.name


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_independent_numpy_forward_and_reverse_pass_the_new_residuals(dtype):
    for kernel, fn in (("resnet_forward", planted.numpy_forward_any), ("resnet_reverse", planted.numpy_reverse_any)):
        names = sorted(_cases(kernel, _new_residual))
        result = oracle.verify(kernel, fn, dtype=dtype, cases=names)
        assert result.ok and not result.failures, result.report()
        if dtype == "float64":
            assert all(r.verdict == "pass" for r in result.rows), result.report()


def test_mlp_planted_bugs_fail_exactly_the_mlp_cases():
    v_wrong = oracle.verify("resnet_forward", planted.mlp_forward_v_column_major)
    assert _failed(v_wrong) == _cases("resnet_forward", lambda c: c.inputs["residual"] == "mlp")
    scaled = oracle.verify("resnet_forward", planted.mlp_forward_fixed_step_all_scaled)
    # scaling all of theta is right for linear, tanh_out and bias; wrong for mlp (and tanh) where step K != 1
    assert _failed(scaled) == _cases("resnet_forward", lambda c: c.inputs["residual"] in ("mlp", "tanh") and abs(
        c.inputs["step"] * c.inputs["theta"].shape[0] - 1.0) > 1e-12)


def test_mlp_layout_matches_the_packing_of_the_package():
    from theory.resnet import mlp

    r = np.random.default_rng(2)
    V, W, b = r.standard_normal((4, 3)), r.standard_normal((3, 4)), r.standard_normal(3)
    theta = mlp(3).pack(V, W, b)
    assert np.array_equal(theta, np.concatenate([V.ravel(), W.ravel(), b]))
    x = r.standard_normal(4)
    np.testing.assert_allclose(planted._f_any("mlp", x, theta), V @ np.tanh(W @ x + b), rtol=1e-15)


def test_resnet_generated_mlp_cases_at_another_width_and_d1():
    k = oracle.kernel("resnet_gradient")
    generated = oracle.cases_at(k, {"N": 3, "d": 1, "residual": "mlp,bias", "width": 5, "scheme": "heun"})
    assert [c.name for c in generated] == ["heun_mlp_N3_d1_m5", "heun_bias_N3_d1"]
    assert generated[0].inputs["theta"].shape == (4, 2 * 5 + 5)
    result = oracle.verify("resnet_gradient", k.implementation,
                           params={"N": 3, "d": 1, "residual": "mlp,bias", "width": 5, "step": "1/N,1/(N+1),1"})
    assert result.ok, result.report()
    with pytest.raises(OracleInputError, match="width"):
        oracle.cases_at(k, {"residual": "mlp", "width": 0})
    with pytest.raises(OracleInputError, match="residual"):
        oracle.cases_at(k, {"residual": "mlp3"})


def test_resnet_reference_refuses_a_misshapen_mlp_theta():
    case = next(c for c in oracle.kernel("resnet_forward").cases() if c.name == "euler_mlp_N10")
    with pytest.raises(ValueError, match="`theta` of an mlp residual"):
        oracle.kernel("resnet_forward").reference(**{**case.inputs, "theta": case.inputs["theta"][:, :-1]})


def test_mlp_step_mapping_scales_the_v_block_only():
    """The step convention's mapping for mlp (show: V -> c V): a network with its own fixed step 1/K, called on theta
    with its V block times c = step K, passes every mlp case of resnet_forward; scaling all of theta fails (above)."""
    def mapped(x0, theta, residual, scheme, step):
        K, d = theta.shape[0], x0.shape[-1]
        t = np.array(theta, dtype=float)
        t[:, : d * (t.shape[-1] // (2 * d + 1))] *= step * K
        return planted.numpy_forward_any(x0, t, residual, scheme, 1.0 / K)

    names = sorted(_cases("resnet_forward", lambda c: c.inputs["residual"] == "mlp"))
    assert any(abs(c.inputs["step"] * c.inputs["theta"].shape[0] - 1.0) > 1e-12
               for c in oracle.kernel("resnet_forward").cases() if c.name in names)
    result = oracle.verify("resnet_forward", mapped, cases=names)
    assert result.ok and all(r.verdict == "pass" for r in result.rows), result.report()


def test_vectors_round_trip_with_the_boolean_mask(tmp_path):
    """Exported vectors keep the mask boolean; verifying against them equals verifying in memory."""
    oracle.export(tmp_path, ["attention_heads", "sinkhorn_iterations"])
    stored = oracle.load_vectors(tmp_path, "attention_heads")
    assert stored and all(case.inputs["mask"].dtype == bool for case, _ in stored)
    for name, fn in (("attention_heads", planted.attention_heads_mask_after),
                     ("sinkhorn_iterations", planted.numpy_sinkhorn_iterations)):
        assert [r.verdict for r in oracle.verify(name, fn, vectors=tmp_path).rows] == \
            [r.verdict for r in oracle.verify(name, fn).rows]


def test_sinkhorn_iterations_count_and_order_mappings():
    """The mappings `show` states: columns-first code on C.T, transposed back, passes every case; pair-counting
    code called with k = n_iter / 2 pairs passes every case with an even n_iter."""
    transposed = lambda fn: lambda C, **a: fn(C=C.T, **a).T  # noqa: E731
    assert oracle.verify("sinkhorn_iterations", planted.sinkhorn_iterations_columns_first, adapter=transposed).ok
    even = sorted(_cases("sinkhorn_iterations", lambda c: c.inputs["n_iter"] % 2 == 0))
    halved = lambda fn: lambda n_iter, **a: fn(n_iter=n_iter // 2, **a)  # noqa: E731
    result = oracle.verify("sinkhorn_iterations", planted.sinkhorn_iterations_pairs, adapter=halved, cases=even)
    assert result.ok and not result.failures, result.report()
