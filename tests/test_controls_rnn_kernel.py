"""Negative controls of the ``rnn-kernel`` checks: rerun each measurement with a broken input (a hypothesis
violated, a kernel or a right-hand side broken by monkeypatching, a wrong setting) and assert that its verdict fails.

For every bound with a worst-case search, a mutation control breaks the bound's right side (its constant divided by
4, or a term dropped) or the computation of its left side, reruns the measurement, and asserts that the search
itself finds an instance above 1.

They import the package only (theory.experiments.rnn_kernel), never checks/.
"""

import dataclasses

import numpy as np
import pytest

import theory.experiments.rnn_kernel as ex
import theory.signature as S
from theory.claims import Verdict, bound_verdict, erratum_verdict, identity_verdict, rate_verdict
from theory.experiments.rnn_kernel import _search as ws
from theory.experiments.rnn_kernel import seq2seq as q


def _fails(verdict):
    assert verdict.status == "fail", verdict.message


def _search_finds_it(search):
    assert search is not None and search.ratio > 1.0, (search.ratio, search.instance)


def _frozen_input_rnn(monkeypatch):
    """A broken RNN kernel: every step reads the first input x_1 (a zeroth-order scheme, error O(1))."""
    orig = S.rnn

    def broken(xs, U, V, b, activation="tanh", h0=None, **kw):
        xs = np.asarray(xs, dtype=float)
        return orig(np.repeat(xs[:1], len(xs), axis=0), U, V, b, activation, h0, **kw)

    monkeypatch.setattr(S, "rnn", broken)


def _quarter_c1(monkeypatch):
    orig = ex._c1
    monkeypatch.setattr(ex, "_c1", lambda *a, **kw: orig(*a, **kw) / 4.0)


# ------------------------------------------------------------------------------ signature identities

def test_chen_without_binomials_is_rejected():
    # the plain tensor product is Chen's relation of the standard normalization, not of the chapter's
    cfg = dataclasses.replace(ex.SIGNATURE_PRESETS["check"], n_paths=3, chen_binomial=False)
    result = ex.measure_signature(cfg)
    _fails(ex.prop521_chen_verdict(result))
    _fails(ex.signature_verdict(result))


def test_standard_normalization_breaks_segment_and_kernel():
    b = np.array([0.3, -0.4, 0.5])
    std = S.signature(np.vstack([np.zeros(3), b]), 4, normalization="standard")
    ref = [np.ones(())]
    for _ in range(4):
        ref.append(np.multiply.outer(ref[-1], b))
    from theory.rates import identity_error
    res = identity_error(np.concatenate([s.ravel() for s in std]), np.concatenate([r.ravel() for r in ref]))
    _fails(identity_verdict(res, ex.SIGNATURE_EXPECTED["segment"]))
    # kernel in the standard normalization: sum_k <a,b>^k / (k!)^2, not the closed form
    a, c = np.array([0.5, 0.2, 0.0]), np.array([0.6, -0.1, 0.3])
    sa = S.to_standard(S.signature(np.vstack([np.zeros(3), a]), 8))
    sc = S.to_standard(S.signature(np.vstack([np.zeros(3), c]), 8))
    ip = float(a @ c)
    truncated = S.linear_kernel(a, c) * (1 - ip ** 9)
    assert abs(S.signature_inner(sa, sc) - truncated) > 1e-3


# ------------------------------------------------------------------------------ Prop. 5.6

def test_prop56_rejects_paths_beyond_L():
    # single segments (n_points = 2): level k has norm exactly ||b_bar||^k, above ((1+L)/2)^k once TV > L
    cfg = dataclasses.replace(ex.PROP56_PRESETS["check"], tv_factor=2.5, n_paths=5, n_points=2, search_budget=20)
    _fails(ex.prop56_verdict(ex.measure_prop56(cfg)))


def test_prop56_search_finds_a_quartered_bound(monkeypatch):
    lb, nb = ws.level_bound, ws.norm_bound
    monkeypatch.setattr(ws, "level_bound", lambda L, k: lb(L, k) / 4.0)
    monkeypatch.setattr(ws, "norm_bound", lambda L: nb(L) / 4.0)
    result = ex.measure_prop56(dataclasses.replace(ex.PROP56_PRESETS["check"], n_paths=2))
    _search_finds_it(result.search)
    _fails(ex.prop56_verdict(result))


# ------------------------------------------------------------------------------ Prop. 5.1 / 5.2

def test_prop51_rejects_a_zeroth_order_scheme(monkeypatch):
    # the RNN reading x_1 at every step: its error does not shrink with T, the rate and the bound must fail
    _frozen_input_rnn(monkeypatch)
    cfg = dataclasses.replace(ex.EULER_PRESETS["check"], seeds=(2,), search_budget=10)
    result = ex.measure_prop51(cfg)
    _fails(ex.prop51_rate_verdict(result))
    _fails(ex.prop51_bound_verdict(result))


def test_prop51_search_finds_a_quartered_c1(monkeypatch):
    _quarter_c1(monkeypatch)
    result = ex.measure_prop51(dataclasses.replace(ex.EULER_PRESETS["check"], seeds=(2,)))
    _search_finds_it(result.search)
    _fails(ex.prop51_bound_verdict(result))


def test_prop52_rejects_a_gap(monkeypatch):
    # a CDE solver off by 1e-6: the identity with the ODE must fail
    orig = S.cde_solution
    monkeypatch.setattr(S, "cde_solution", lambda *a, **kw: orig(*a, **kw) + 1e-6)
    cfg = dataclasses.replace(ex.EULER_PRESETS["check"], seeds=(2,), fine=320, Ts=(10, 20, 40, 80))
    _fails(ex.prop52_verdict(ex.measure_prop52(cfg)))
    assert not ex.prop52_verdict(float("nan")).passed


def test_prop52_experiment_measures_the_gap_of_prop51():
    # the check of prop-5.2 runs rnn_kernel.prop52; its gap is the one in rnn_kernel.prop51's result
    cfg = dataclasses.replace(ex.EULER_PRESETS["check"], seeds=(2,), fine=320, Ts=(10, 20, 40, 80))
    assert ex.measure_prop52(cfg) == ex.measure_prop51(cfg, search=False).cde_gap


# ------------------------------------------------------------------------------ Prop. 5.9, Figure 5.1

def test_prop59_search_finds_a_wrong_solver(monkeypatch):
    # a CDE solver whose field (5.5) carries 2/(1-L') with L' = (1+L)/2 (the time coordinate scaled for the wrong L):
    # its solution drifts away from the expansion by O(||f||) while the (5.9) bound decays like 1/(N+1)!; the
    # search must find an instance where the drift exceeds it
    orig = S.cde_solution
    monkeypatch.setattr(S, "cde_solution", lambda path_bar, U, V, b, L, *a, **kw: orig(path_bar, U, V, b,
                                                                                        (1 + L) / 2, *a, **kw))
    cfg = dataclasses.replace(ex.TAYLOR_PRESETS["check"], n_rnns=1, Ns=(1, 2, 3), activations=("tanh",), n_lambda=1)
    result = ex.measure_prop59(cfg)
    _search_finds_it(result.search)
    _fails(ex.prop59_bound_verdict(result))


def test_fig51_rejects_a_slow_decay(monkeypatch):
    # star products of the logistic cut at level 2: its expansion error stops decaying beyond N = 2 while tanh's
    # keeps its geometric decay; the slowest activation decides
    orig = S.star_products

    def broken(U, V, b, L, depth, activation="tanh", hbar0=None, **kw):
        # the products at h_bar_0 = 0 of the expansion; those sampled for Lambda (hbar0 given) stay exact
        out = orig(U, V, b, L, depth, activation, hbar0, **kw)
        if activation != "logistic" or hbar0 is not None:
            return out
        return out[:2] + [np.zeros_like(p) for p in out[2:]]

    cfg = dataclasses.replace(ex.TAYLOR_PRESETS["check"], n_rnns=2, n_lambda=1, search_budget=1)
    assert ex.prop59_rate_verdict(ex.measure_prop59(cfg)).passed
    monkeypatch.setattr(S, "star_products", broken)
    v = ex.prop59_rate_verdict(ex.measure_prop59(cfg))
    _fails(v)
    assert v.kind == "rate" and v.measured["slowest_activation"] == "logistic"


# ------------------------------------------------------------------------------ Lemmas 5.19, 5.20

def _scaled_bound(monkeypatch, which, factor, only_n=None, value=None):
    orig = S.derivative_bound

    def broken(activation, n):
        out = orig(activation, n)
        if activation != which or (only_n is not None and n != only_n):
            return out
        return value if value is not None else out * factor

    monkeypatch.setattr(S, "derivative_bound", broken)


def test_lemma519_erratum_fails_if_the_printed_form_held(monkeypatch):
    result = ex.measure_activations(ex.ACTIVATION_PRESETS["check"])
    assert ex.lemma519_erratum_verdict(result).passed and ex.lemma519_erratum_verdict(result).kind == "erratum"
    # the bound at n = 0 raised from 1/2 to 1: the printed range n >= 0 holds, so the erratum record must fail
    _scaled_bound(monkeypatch, "logistic", None, only_n=0, value=1.0)
    result = ex.measure_activations(ex.ACTIVATION_PRESETS["check"])
    assert ex.lemma519_printed_verdict(result).passed
    _fails(ex.lemma519_erratum_verdict(result))


def test_lemma519_erratum_fails_if_the_corrected_form_failed(monkeypatch):
    # an exact sup of 1e3 at n = 3 (a broken derivative_sup): the corrected form fails, so does the erratum record
    orig = S.derivative_sup
    monkeypatch.setattr(S, "derivative_sup", lambda act, n: 1e3 if (act, n) == ("logistic", 3) else orig(act, n))
    result = ex.measure_activations(dataclasses.replace(ex.ACTIVATION_PRESETS["check"], search_budget=10))
    _fails(ex.lemma519_verdict(result))
    _fails(ex.lemma519_erratum_verdict(result))


def test_lemma519_search_finds_an_eighth_of_the_bound(monkeypatch):
    # a quarter is not enough: sup sigma' = 1/4 equals the bound 2^0 1! / 4 at n = 1 (x = 0)
    _scaled_bound(monkeypatch, "logistic", 1 / 8)
    result = ex.measure_activations(ex.ACTIVATION_PRESETS["check"])
    _search_finds_it(result.search_logistic)
    _fails(ex.lemma519_verdict(result))


def test_lemma520_search_finds_a_quartered_bound(monkeypatch):
    _scaled_bound(monkeypatch, "tanh", 1 / 4)
    result = ex.measure_activations(ex.ACTIVATION_PRESETS["check"])
    _search_finds_it(result.search_tanh)
    _fails(ex.lemma520_verdict(result))


# ------------------------------------------------------------------------------ Prop. 5.10

def test_prop510_erratum_fails_if_the_printed_bound_held():
    cfg = dataclasses.replace(ex.LAMBDA_PRESETS["check"], n_rnns=2, n_points=2, search_budget=10)
    assert ex.prop510_erratum_verdict(ex.measure_prop510(cfg)).passed
    # a large negative bias: sigma(b) ~ 0 (logistic), |tanh(b)| <= 1, and Lambda_1 = 1 or 2 sqrt(e)/(1-L) stays under
    # the printed sqrt(2) a: the printed form holds, so the erratum record must fail
    held = ex.measure_prop510(dataclasses.replace(cfg, bias=-100.0))
    assert ex.prop510_printed_verdict(held).passed
    _fails(ex.prop510_erratum_verdict(held))


def test_prop510_search_finds_a_quartered_bound(monkeypatch):
    orig = S.lambda_bound
    monkeypatch.setattr(S, "lambda_bound", lambda *a, **kw: orig(*a, **kw) / 4.0)
    result = ex.measure_prop510(dataclasses.replace(ex.LAMBDA_PRESETS["check"], n_rnns=1, n_points=1))
    _search_finds_it(result.search)
    _fails(ex.prop510_corrected_verdict(result))


# ------------------------------------------------------------------------------ Example 5.13

def test_ex513_erratum_fails_if_the_printed_B_held():
    cfg = dataclasses.replace(ex.EX513_PRESETS["check"], n_rnns=3, search_budget=10)
    assert ex.ex513_erratum_verdict(ex.measure_ex513(cfg)).passed
    # b = 0: sigma(b) = 1/2, the first level of alpha is K_psi/(1-L) ~ 1 below the printed sqrt(2): the printed B
    # holds, so the erratum record must fail
    held = ex.measure_ex513(dataclasses.replace(cfg, K_b=0.0))
    assert ex.ex513_printed_verdict(held).passed
    _fails(ex.ex513_erratum_verdict(held))


def test_ex513_search_finds_a_quartered_B(monkeypatch):
    orig = ws.corrected_B
    monkeypatch.setattr(ws, "corrected_B", lambda *a: orig(*a) / 4.0)
    result = ex.measure_ex513(dataclasses.replace(ex.EX513_PRESETS["check"], n_rnns=1))
    _search_finds_it(result.search)
    _fails(ex.ex513_corrected_verdict(result))


# ------------------------------------------------------------------------------ Thm 5.11, (5.14)

def test_thm511_rejects_a_zeroth_order_scheme(monkeypatch):
    _frozen_input_rnn(monkeypatch)
    result = ex.measure_thm511(dataclasses.replace(ex.THM511_PRESETS["check"], seeds=(2,), search_budget=5))
    _fails(ex.thm511_rate_verdict(result))
    _fails(ex.thm511_bound_verdict(result))


def test_thm511_search_finds_a_quartered_c1(monkeypatch):
    _quarter_c1(monkeypatch)
    result = ex.measure_thm511(dataclasses.replace(ex.THM511_PRESETS["check"], seeds=(2,)))
    _search_finds_it(result.search)
    _fails(ex.thm511_bound_verdict(result))


def test_relu_verdict_fails_with_a_zeroth_order_scheme(monkeypatch):
    # the ReLU RNN reading x_1 at every step: inside one linear region the error no longer decays like 1/T
    orig = ex._relu_rnn
    monkeypatch.setattr(ex, "_relu_rnn", lambda xs, U, V, b: orig(np.repeat(xs[:1], len(xs), axis=0), U, V, b))
    cfg = dataclasses.replace(ex.RELU_PRESETS["check"], n_rnns=1)
    _fails(ex.relu_verdict(ex.measure_relu(cfg)))


def test_relu_verdict_fails_if_the_expansion_followed_the_kinks(monkeypatch):
    # were the expansion the ReLU RNN's own ODE solution (as if the a.e. products captured the kinks), the error of
    # the crossing RNNs would decay like 1/T: the predicted failure would not show and the record must fail
    orig_case = ex._relu_case

    def case(cfg, X, sig, U, V, b):
        errs, limit, c1, tail, changes = orig_case(cfg, X, sig, U, V, b)
        H = ex._relu_ode(X, U, V, b)[-1]
        errs = [float(np.linalg.norm(ex._relu_rnn(X[cfg.fine // T::cfg.fine // T], U, V, b) - H)) for T in cfg.Ts]
        return errs, limit, c1, tail, changes

    monkeypatch.setattr(ex, "_relu_case", case)
    _fails(ex.relu_verdict(ex.measure_relu(dataclasses.replace(ex.RELU_PRESETS["check"], n_rnns=1))))


def test_eq514_rejects_a_truncated_expansion():
    # the expansion cut at depth 1 misses the RNN by far more than c1 / T
    cfg = dataclasses.replace(ex.EQ514_PRESETS["check"], search_budget=5)
    bound, gap = ex.measure_eq514(cfg, depth=1)
    _fails(bound_verdict(bound, {"ratio_max": 1.0}))
    _fails(ex.eq514_verdict((bound, gap)))
    assert gap <= 1e-12


def test_eq514_rejects_a_stopped_path_gap(monkeypatch):
    # a signature kernel that mistakes a path stopped at its end (repeated last point) by 1e-6 at level 1
    orig = S.signature

    def broken(path, depth, *a, **kw):
        out = orig(path, depth, *a, **kw)
        path = np.asarray(path)
        if len(path) > 2 and np.array_equal(path[-1], path[-2]):
            out[1] = out[1] + 1e-6
        return out

    monkeypatch.setattr(S, "signature", broken)
    cfg = dataclasses.replace(ex.EQ514_PRESETS["check"], seeds=(2,), search_budget=3)
    bound, gap = ex.measure_eq514(cfg, T=20)
    assert gap > 1e-12
    _fails(ex.eq514_verdict((bound, gap)))


def test_eq514_search_finds_a_quartered_c1(monkeypatch):
    _quarter_c1(monkeypatch)
    bound, gap = ex.measure_eq514(dataclasses.replace(ex.EQ514_PRESETS["check"], seeds=(2,)), T=20)
    _search_finds_it(bound.search)
    _fails(ex.eq514_verdict((bound, gap)))


# ------------------------------------------------------------------------------ section 5.3.2

def test_stability_rejects_an_incomplete_feature_map():
    # without the 2 ||psi|| c1 / T term and with alpha, S cut at level 1 (the perturbations vanish at t = 1, so
    # level 1 barely moves), the right side no longer covers |z_T - z'_T|
    cfg = dataclasses.replace(ex.STABILITY_PRESETS["check"], c1_factor=0.0, eps_values=(0.2,), n_pairs=3, depth=1,
                              search_budget=5)
    _fails(ex.stability_verdict(ex.measure_stability(cfg)))


def test_stability_search_finds_the_dropped_feature_term():
    # the right side without ||xi_alpha|| ||S(X_bar) - S(X_bar')||: only the discretisation term 2 ||psi|| c1 / T is
    # left, which the search must beat with distant inputs and a long sequence
    cfg = dataclasses.replace(ex.STABILITY_PRESETS["check"], feature_factor=0.0, n_pairs=1, eps_values=(0.01,))
    result = ex.measure_stability(cfg)
    _search_finds_it(result.search)
    _fails(ex.stability_verdict(result))


# ------------------------------------------------------------------------------ Thm 5.12

def test_rademacher_rejects_all_plus_signs():
    # eps = 1 instead of Rademacher signs: (1/n) ||sum_i S(X_i)|| does not decay, the rate and the bound must fail
    cfg = dataclasses.replace(ex.RADEMACHER_PRESETS["check"], ns=(8, 16, 32, 64), seeds=(0,), draws=200,
                              signs="ones", search_budget=10)
    res = ex.measure_rademacher(cfg)
    _fails(ex.rademacher_rate_verdict(res))
    _fails(ex.rademacher_bound_verdict(res))


def test_rademacher_search_finds_a_quartered_bound(monkeypatch):
    orig = ws.rademacher_rhs
    monkeypatch.setattr(ws, "rademacher_rhs", lambda L, n: orig(L, n) / 4.0)
    cfg = dataclasses.replace(ex.RADEMACHER_PRESETS["check"], ns=(8, 16, 32), seeds=(0,), draws=200)
    res = ex.measure_rademacher(cfg)
    _search_finds_it(res.search)
    _fails(ex.rademacher_bound_verdict(res))


def test_generalization_rejects_the_zero_one_loss_without_the_complexity_terms():
    # the empirical 0-1 risk (not Lipschitz: outside the hypotheses) with c2/T and the complexity terms dropped: the
    # population error exceeds the empirical one on about half of the samples, far more than delta
    cfg = dataclasses.replace(ex.GENERALIZATION_PRESETS["check"], loss="zero-one", terms_factor=0.0, draws=100)
    _fails(ex.generalization_verdict(ex.measure_generalization(cfg)))


def test_thm514_end_to_end_fails_without_the_terms_of_the_bound():
    # c3/T and the complexity terms dropped: the empirical risk minimiser's population risk exceeds its empirical
    # risk on about half of the samples (the optimism of the minimiser), far more than delta
    cfg = dataclasses.replace(q.THM514_PRESETS["check"], terms_factor=0.0, draws=100, n_theta=8)
    _fails(q.thm514_verdict(q.measure_thm514(cfg)))


def test_thm514_step_erratum_is_not_confirmed_where_the_printed_constant_holds():
    # at ||psi||_op <= 100 the printed c3 still covers the risk difference (ratio 0.03): the record must not pass
    cfg = dataclasses.replace(q.THM514_STEP_PRESETS["check"], psi_norms=(1.0, 10.0, 100.0))
    _fails(q.thm514_step_erratum_verdict(q.measure_thm514_step(cfg)))


def test_thm514_configs_name_the_field():
    with pytest.raises(ValueError, match="`psi_norms` of Thm514StepConfig"):
        q.Thm514StepConfig(psi_norms=(10.0, 1.0, 100.0))
    with pytest.raises(ValueError, match="`c3` of Thm514Config"):
        q.Thm514Config(c3="sum")
    with pytest.raises(ValueError, match="`L` of Thm514Config"):
        q.Thm514Config(L=1.0)


# ------------------------------------------------------------------------------ machinery

def test_erratum_verdict_needs_both_halves():
    assert not erratum_verdict(Verdict("pass", "printed holds"), Verdict("pass", "x")).passed
    assert not erratum_verdict(Verdict("fail", "printed fails"), Verdict("fail", "corrected fails")).passed
    assert bound_verdict is not None and rate_verdict is not None


def test_configs_refuse_wrong_kinds_values_and_cross_field_rules():
    with pytest.raises(TypeError, match="`chen_binomial` of SignatureConfig"):
        ex.SignatureConfig(chen_binomial=1)
    with pytest.raises(ValueError, match="`Ts` of EulerConfig must all divide `fine` = 1280"):
        ex.EulerConfig(Ts=(10, 20, 30))
    with pytest.raises(ValueError, match="`Ts` of Thm511Config must all divide `fine` = 1280"):
        ex.Thm511Config(Ts=(10, 20, 30))
    with pytest.raises(ValueError, match="`T` of StabilityConfig must divide `fine` = 400"):
        ex.StabilityConfig(T=3)
    with pytest.raises(ValueError, match="`Ns` of TaylorConfig"):
        ex.TaylorConfig(Ns=(1, 2, 10))
    with pytest.raises(ValueError, match="`e` of LambdaConfig"):
        ex.LambdaConfig(e=5)
    with pytest.raises(ValueError, match="`activation` of EulerConfig"):
        ex.EulerConfig(activation="relu")
    with pytest.raises(ValueError, match="`signs` of RademacherConfig"):
        ex.RademacherConfig(signs="gauss")
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
        "rnn-kernel/thm-5.11/relu": ("rnn_kernel.thm511_relu", ex.relu_verdict),
        "rnn-kernel/eq-5.14": ("rnn_kernel.eq514", ex.eq514_verdict),
        "rnn-kernel/sec-5.3.2": ("rnn_kernel.stability", ex.stability_verdict),
        "rnn-kernel/thm-5.12": ("rnn_kernel.rademacher", ex.rademacher_bound_verdict),
        "rnn-kernel/thm-5.12/rate": ("rnn_kernel.rademacher", ex.rademacher_rate_verdict),
        "rnn-kernel/thm-5.12/end-to-end": ("rnn_kernel.generalization", ex.generalization_verdict),
        "rnn-kernel/thm-5.14/end-to-end": ("rnn_kernel.thm514", q.thm514_verdict),
        "rnn-kernel/thm-5.14/proof/erratum": ("rnn_kernel.thm514_step", q.thm514_step_erratum_verdict),
    }
    for claim_id, (name, verdict) in expected.items():
        exp = experiment_of(claim_id)
        assert exp.name == name, claim_id
        assert exp.verdict_for(claim_id) is verdict, claim_id
