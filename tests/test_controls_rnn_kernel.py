"""Negative controls of the ``rnn-kernel`` checks: feed each verdict something that breaks its claim.

They import the package only (theory.experiments.rnn_kernel), never checks/.
"""

import dataclasses

import numpy as np
import pytest

import theory.experiments.rnn_kernel as ex
from theory.claims import Verdict, bound_verdict, erratum_verdict, identity_verdict, rate_verdict
from theory.rates import fit_rate


def test_chen_without_binomials_is_rejected():
    # the plain tensor product is Chen's relation of the standard normalization, not of the chapter's
    cfg = dataclasses.replace(ex.SIGNATURE_PRESETS["check"], n_paths=3, chen_binomial=False)
    result = ex.measure_signature(cfg)
    assert not ex.prop521_chen_verdict(result).passed
    assert not ex.signature_verdict(result).passed


def test_standard_normalization_breaks_segment_and_kernel():
    import theory.signature as S
    b = np.array([0.3, -0.4, 0.5])
    std = S.signature(np.vstack([np.zeros(3), b]), 4, normalization="standard")
    ref = [np.ones(())]
    for _ in range(4):
        ref.append(np.multiply.outer(ref[-1], b))
    from theory.rates import identity_error
    res = identity_error(np.concatenate([s.ravel() for s in std]), np.concatenate([r.ravel() for r in ref]))
    assert not identity_verdict(res, ex.SIGNATURE_EXPECTED["segment"]).passed
    # kernel in the standard normalization: sum_k <a,b>^k / (k!)^2, not the closed form
    a, c = np.array([0.5, 0.2, 0.0]), np.array([0.6, -0.1, 0.3])
    sa = S.to_standard(S.signature(np.vstack([np.zeros(3), a]), 8))
    sc = S.to_standard(S.signature(np.vstack([np.zeros(3), c]), 8))
    ip = float(a @ c)
    truncated = S.linear_kernel(a, c) * (1 - ip ** 9)
    assert abs(S.signature_inner(sa, sc) - truncated) > 1e-3


def test_prop56_rejects_paths_beyond_L():
    # single segments (n_points = 2): level k has norm exactly ||b_bar||^k, above ((1+L)/2)^k once TV > L
    cfg = dataclasses.replace(ex.PROP56_PRESETS["check"], tv_factor=2.5, n_paths=5, n_points=2)
    assert not ex.prop56_verdict(ex.measure_prop56(cfg)).passed


def test_prop51_rate_rejects_a_zeroth_order_error():
    # a scheme whose error does not shrink with T (constant) must fail the rate
    T = np.array([10, 20, 40, 80, 160])
    fit = fit_rate(T, 0.01 * np.ones_like(T, dtype=float) * (1 + 0.01 * np.arange(5)))
    result = ex.EulerResult(tuple(T), np.ones((1, 5)) * 0.01, np.array([1.0]), 0.0, fit)
    assert not ex.prop51_rate_verdict(result).passed
    # and T * error = 0.01 * T exceeds c1 = 1 at T >= 160
    assert not ex.prop51_bound_verdict(result).passed


def test_prop52_rejects_a_gap():
    assert ex.prop52_verdict(1e-14).passed and ex.prop52_verdict(1e-14).kind == "identity"
    assert not ex.prop52_verdict(1e-6).passed
    assert not ex.prop52_verdict(float("nan")).passed


def test_prop59_rejects_a_bound_below_the_error():
    cfg = dataclasses.replace(ex.TAYLOR_PRESETS["check"], n_rnns=2, Ns=(1, 2, 3), activations=("tanh",), n_lambda=1)
    result = ex.measure_prop59(cfg)
    shrunk = dataclasses.replace(result, bounds=result.errors * 0.5)
    assert not ex.prop59_bound_verdict(shrunk).passed


def test_fig51_rejects_a_slow_decay():
    # errors decaying like 1/N (a power law, not geometric) must fail the decay verdict
    Ns = (1, 2, 3, 4, 5, 6)
    errs = np.array([[[1.0 / n for n in Ns]] * 2])
    fit = fit_rate(np.exp(np.array(Ns, dtype=float)), errs[0])
    result = ex.TaylorResult(Ns, ("tanh",), errs, errs * 10, (fit,))
    assert not ex.prop59_rate_verdict(result).passed
    # one activation decaying geometrically, the other like 1/N: the slowest one decides
    grid = np.exp(np.array(Ns, dtype=float))
    fast = fit_rate(grid, np.exp(-2.0 * np.array(Ns, dtype=float))[None, :] * np.ones((2, 1)))
    both = ex.TaylorResult(Ns, ("tanh", "logistic"), np.concatenate([errs, errs]), errs * 10, (fast, fit))
    v = ex.prop59_rate_verdict(both)
    assert not v.passed and v.kind == "rate" and v.measured["slowest_activation"] == "logistic"
    assert ex.prop59_rate_verdict(dataclasses.replace(both, fits=(fast, fast))).passed


def test_lemma519_erratum_both_halves():
    result = ex.measure_activations(ex.ACTIVATION_PRESETS["check"])
    printed, corrected = ex.lemma519_printed_verdict(result), ex.lemma519_verdict(result)
    assert erratum_verdict(printed, corrected).passed
    assert ex.lemma519_erratum_verdict(result).passed and ex.lemma519_erratum_verdict(result).kind == "erratum"
    # if the printed form held (n = 0 bound raised to 1), the erratum record must fail
    fixed = dataclasses.replace(result, bound_logistic=(1.0,) + result.bound_logistic[1:])
    assert not erratum_verdict(ex.lemma519_printed_verdict(fixed), ex.lemma519_verdict(fixed)).passed
    # if the corrected form failed (a sup above the bound at n = 3), the erratum record must fail
    broken = dataclasses.replace(result, sup_logistic=result.sup_logistic[:3] + (1e3,) + result.sup_logistic[4:])
    assert not ex.lemma519_verdict(broken).passed
    assert not erratum_verdict(ex.lemma519_printed_verdict(broken), ex.lemma519_verdict(broken)).passed
    assert not ex.lemma519_erratum_verdict(fixed).passed and not ex.lemma519_erratum_verdict(broken).passed


def test_lemma520_rejects_a_smaller_bound():
    result = ex.measure_activations(ex.ACTIVATION_PRESETS["check"])
    halved = dataclasses.replace(result, bound_tanh=tuple(0.5 * b for b in result.bound_tanh))
    assert not ex.lemma520_verdict(halved).passed


def test_prop510_erratum_both_halves():
    cfg = dataclasses.replace(ex.LAMBDA_PRESETS["check"], n_rnns=2, n_points=2)
    result = ex.measure_prop510(cfg)
    assert erratum_verdict(ex.prop510_printed_verdict(result), ex.prop510_corrected_verdict(result)).passed
    assert ex.prop510_erratum_verdict(result).passed
    # if the printed bound held on every instance, the erratum record must fail
    small = dataclasses.replace(result, lam=0.5 * np.minimum(result.printed, result.corrected))
    assert ex.prop510_printed_verdict(small).passed
    assert not erratum_verdict(ex.prop510_printed_verdict(small), ex.prop510_corrected_verdict(small)).passed
    assert not ex.prop510_erratum_verdict(small).passed
    # weights outside (5.11) (Lambda grows): the corrected bound must be able to fail
    inflated = dataclasses.replace(result, lam=result.lam * 10)
    assert not ex.prop510_corrected_verdict(inflated).passed


def test_ex513_erratum_both_halves():
    result = ex.measure_ex513(dataclasses.replace(ex.EX513_PRESETS["check"], n_rnns=3))
    assert erratum_verdict(ex.ex513_printed_verdict(result), ex.ex513_corrected_verdict(result)).passed
    assert ex.ex513_erratum_verdict(result).passed
    # if the printed B held, the erratum record must fail
    small = dataclasses.replace(result, norms=np.full(3, 0.5 * result.printed_B))
    assert not erratum_verdict(ex.ex513_printed_verdict(small), ex.ex513_corrected_verdict(small)).passed
    assert not ex.ex513_erratum_verdict(small).passed
    assert not ex.ex513_corrected_verdict(dataclasses.replace(result, corrected_B=result.norms.max() / 2)).passed


def test_thm511_rejects_a_missing_time_step():
    # the RNN fed x_j but compared at the wrong index: a per-step offset of 1/T in time is still O(1/T), so the
    # control instead drops the 1/T scaling of the rate: a constant error must fail
    T = np.array([10, 20, 40, 80, 160, 320])
    errs = np.full((2, 6), 0.02)
    result = ex.EulerResult(tuple(T), errs, np.array([1.0, 1.0]), float("nan"), fit_rate(T, errs))
    assert not ex.thm511_rate_verdict(result).passed
    assert not ex.thm511_bound_verdict(result).passed


def test_stability_rejects_an_incomplete_feature_map():
    # without the 2 ||psi|| c1 / T term and with alpha, S cut at level 1 (the perturbations vanish at t = 1, so
    # level 1 barely moves), the right side no longer covers |z_T - z'_T|
    cfg = dataclasses.replace(ex.STABILITY_PRESETS["check"], c1_factor=0.0, eps_values=(0.2,), n_pairs=3, depth=1)
    assert not ex.stability_verdict(ex.measure_stability(cfg)).passed


def test_rademacher_rejects_a_non_decaying_term():
    res = ex.measure_rademacher(dataclasses.replace(ex.RADEMACHER_PRESETS["check"], ns=(8, 16, 32), seeds=(0,),
                                                    draws=200))
    flat = dataclasses.replace(res, rad=res.rad[:, :1] * np.ones_like(res.rad) * 10,
                               fit=fit_rate(np.array(res.ns), res.rad[:, :1] * np.ones_like(res.rad) * 10))
    assert not ex.rademacher_rate_verdict(flat).passed
    assert not ex.rademacher_bound_verdict(flat).passed


def test_erratum_verdict_needs_both_halves():
    assert not erratum_verdict(Verdict("pass", "printed holds"), Verdict("pass", "x")).passed
    assert not erratum_verdict(Verdict("fail", "printed fails"), Verdict("fail", "corrected fails")).passed
    assert bound_verdict is not None and rate_verdict is not None


def test_eq514_rejects_a_truncated_expansion():
    # the expansion cut at depth 1 misses the RNN by far more than c1 / T
    bound, gap = ex.measure_eq514(ex.THM511_PRESETS["check"], depth=1)
    assert not bound_verdict(bound, {"ratio_max": 1.0}).passed
    assert not ex.eq514_verdict((bound, gap)).passed
    assert gap <= 1e-12


def test_eq514_rejects_a_stopped_path_gap():
    # a bound that holds, but the signature of the stopped path differing from the prefix's: the verdict fails
    from theory.rates import bound_ratio
    ok = bound_ratio([0.5], [1.0], [{"seed": 0}])
    assert ex.eq514_verdict((ok, 0.0)).passed
    assert not ex.eq514_verdict((ok, 1e-6)).passed


def test_configs_refuse_wrong_kinds_values_and_cross_field_rules():
    with pytest.raises(TypeError, match="`chen_binomial` of SignatureConfig"):
        ex.SignatureConfig(chen_binomial=1)
    with pytest.raises(ValueError, match="`Ts` of EulerConfig must all divide `fine` = 1280"):
        ex.EulerConfig(Ts=(10, 20, 30))
    with pytest.raises(ValueError, match="`T` of StabilityConfig must divide `fine` = 400"):
        ex.StabilityConfig(T=3)
    with pytest.raises(ValueError, match="`Ns` of TaylorConfig"):
        ex.TaylorConfig(Ns=(1, 2, 10))
    with pytest.raises(ValueError, match="`e` of LambdaConfig"):
        ex.LambdaConfig(e=5)
    with pytest.raises(ValueError, match="`activation` of EulerConfig"):
        ex.EulerConfig(activation="relu")
    assert ex.Ex513Config(K_b=0.0).K_b == 0.0 and ex.StabilityConfig(c1_factor=0).c1_factor == 0.0


def test_each_claim_has_the_experiment_and_verdict_its_check_records():
    from theory.experiments import experiment_of

    expected = {
        "rnn-kernel/ex-5.5": ("rnn_kernel.signature", ex.ex55_segment_verdict),
        "rnn-kernel/prop-5.21": ("rnn_kernel.signature", ex.prop521_chen_verdict),
        "rnn-kernel/ex-5.5/kernel": ("rnn_kernel.signature", ex.ex55_kernel_verdict),
        "rnn-kernel/prop-5.6": ("rnn_kernel.prop56", ex.prop56_verdict),
        "rnn-kernel/prop-5.1": ("rnn_kernel.prop51", ex.prop51_rate_verdict),
        "rnn-kernel/prop-5.1/bound": ("rnn_kernel.prop51", ex.prop51_bound_verdict),
        "rnn-kernel/prop-5.2": ("rnn_kernel.prop52", ex.prop52_verdict),
        "rnn-kernel/prop-5.9": ("rnn_kernel.prop59", ex.prop59_bound_verdict),
        "rnn-kernel/fig-5.1": ("rnn_kernel.prop59", ex.prop59_rate_verdict),
        "rnn-kernel/lemma-5.19": ("rnn_kernel.activations", ex.lemma519_verdict),
        "rnn-kernel/lemma-5.19/erratum": ("rnn_kernel.activations", ex.lemma519_erratum_verdict),
        "rnn-kernel/lemma-5.20": ("rnn_kernel.activations", ex.lemma520_verdict),
        "rnn-kernel/prop-5.10": ("rnn_kernel.prop510", ex.prop510_corrected_verdict),
        "rnn-kernel/prop-5.10/erratum": ("rnn_kernel.prop510", ex.prop510_erratum_verdict),
        "rnn-kernel/ex-5.13": ("rnn_kernel.ex513", ex.ex513_corrected_verdict),
        "rnn-kernel/ex-5.13/erratum": ("rnn_kernel.ex513", ex.ex513_erratum_verdict),
        "rnn-kernel/thm-5.11": ("rnn_kernel.thm511", ex.thm511_rate_verdict),
        "rnn-kernel/thm-5.11/bound": ("rnn_kernel.thm511", ex.thm511_bound_verdict),
        "rnn-kernel/eq-5.14": ("rnn_kernel.eq514", ex.eq514_verdict),
        "rnn-kernel/sec-5.3.2": ("rnn_kernel.stability", ex.stability_verdict),
        "rnn-kernel/thm-5.12": ("rnn_kernel.rademacher", ex.rademacher_bound_verdict),
        "rnn-kernel/thm-5.12/rate": ("rnn_kernel.rademacher", ex.rademacher_rate_verdict),
    }
    for claim_id, (name, verdict) in expected.items():
        exp = experiment_of(claim_id)
        assert exp.name == name, claim_id
        assert exp.verdict_for(claim_id) is verdict, claim_id


def test_prop52_experiment_measures_the_gap_of_prop51():
    # the check of prop-5.2 runs rnn_kernel.prop52; its gap is the one in rnn_kernel.prop51's result
    cfg = dataclasses.replace(ex.EULER_PRESETS["check"], seeds=(2,), fine=320, Ts=(10, 20, 40, 80))
    assert ex.measure_prop52(cfg) == ex.measure_prop51(cfg).cde_gap
