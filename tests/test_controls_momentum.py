"""Negative controls of the momentum claim checks: broken inputs make each verdict fail."""

import dataclasses
import math

import numpy as np
import pytest

import theory.experiments.momentum as ex
from theory.claims import erratum_verdict


def test_inversion_control_wrong_gamma_fails():
    cfg = dataclasses.replace(ex.INVERSION_PRESETS["check"], inverse_gamma_offset=1e-6, depths=(10, 50))
    assert ex.inversion_verdict(ex.measure_inversion(cfg)).status == "fail"
    ok = dataclasses.replace(ex.INVERSION_PRESETS["check"], depths=(10, 50))
    assert ex.inversion_verdict(ex.measure_inversion(ok)).status == "pass"


def test_psi_control_wrong_initial_velocity_fails():
    cfg = dataclasses.replace(ex.PSI_PRESETS["check"], v0="f")
    assert ex.psi_verdict(ex.measure_psi(cfg)).status == "fail"


def test_representable_control_wrong_eps_fails():
    cfg = dataclasses.replace(ex.REPRESENTABLE_PRESETS["check"], eps_offset=1e-3, trials=4)
    r = ex.measure_representable(cfg)
    assert r.max_scaled_error > 1e-9 and ex.representable_verdict(r).status == "fail"


def _no_multiplicity_criterion(D, eps, **kwargs):
    """A broken criterion of Thm 4.4: every D is representable (the multiplicity rule forgotten)."""
    return True


def _no_pairs_criterion(D, eps, **kwargs):
    """A broken criterion of Thm 4.4: no real eigenvalue below lambda_eps at all (pairs refused too)."""
    import theory.momentum as M

    lam = np.linalg.eigvals(np.asarray(D, dtype=float))
    low = M.lambda_eps(eps)[0] if eps > 0 else 0.0
    return not bool(np.any((np.abs(lam.imag) <= 1e-9) & (lam.real < low)))


def test_representable_control_criterion_without_multiplicity_fails(monkeypatch):
    """A criterion that accepts every D is refuted by the independently built excluded maps."""
    import theory.momentum as M

    cfg = dataclasses.replace(ex.REPRESENTABLE_PRESETS["check"], trials=4)
    assert ex.representable_verdict(ex.measure_representable(cfg)).status == "pass"
    monkeypatch.setattr(M, "representable", _no_multiplicity_criterion)
    r = ex.measure_representable(cfg)
    assert r.n_refused < r.n_excluded and ex.representable_verdict(r).status == "fail"


def test_representable_control_criterion_refusing_pairs_fails(monkeypatch):
    """A criterion that refuses doubled eigenvalues below lambda_eps is refuted by the maps built by the proof."""
    import theory.momentum as M

    monkeypatch.setattr(M, "representable", _no_pairs_criterion)
    cfg = dataclasses.replace(ex.REPRESENTABLE_PRESETS["check"], trials=4)
    r = ex.measure_representable(cfg)
    assert r.n_constructed < r.n_expected and ex.representable_verdict(r).status == "fail"


def test_representable_control_wrong_threshold_fails():
    """A theorem with a larger excluded set (lambda_eps + 0.05) is refuted by reached maps f_eps(X) with an
    eigenvalue of X near the minimiser of f_eps: their single eigenvalue just above lambda_eps is unpaired."""
    cfg = dataclasses.replace(ex.REPRESENTABLE_PRESETS["check"], trials=4, lambda_shift=0.05)
    r = ex.measure_representable(cfg)
    assert r.n_unpaired > 0 and ex.representable_verdict(r).status == "fail"


def _lambda_record(result):
    record = ex.lambda_verdict(result)
    assert record.kind == "erratum" and [p.kind for p in record.parts] == ["bound", "bound"]
    return record


def test_lambda_erratum_passes_on_measurement():
    assert _lambda_record(ex.measure_lambda(ex.LAMBDA_PRESETS["check"])).status == "pass"


def test_lambda_erratum_fails_when_printed_form_holds():
    # 'close to -1' read as within 0.25 (lambda_2 = -0.781 is then close): the printed caption holds, the record fails
    r = ex.measure_lambda(dataclasses.replace(ex.LAMBDA_PRESETS["check"], closeness=0.25))
    assert ex.lambda_printed_verdict(r).status == "pass"
    assert _lambda_record(r).status == "fail"


def test_lambda_erratum_fails_when_corrected_form_fails(monkeypatch):
    # a broken lambda_eps kernel that leaves (-1, 0) at large eps: the corrected bracket fails, and so does the record
    import theory.momentum as M

    true_lambda = M.lambda_eps
    monkeypatch.setattr(M, "lambda_eps", lambda eps: (-1.01, true_lambda(eps)[1]) if eps >= 50 else true_lambda(eps))
    r = ex.measure_lambda(ex.LAMBDA_PRESETS["check"])
    assert ex.lambda_corrected_verdict(r).status == "fail"
    assert _lambda_record(r).status == "fail"


@pytest.mark.parametrize("cls,kwargs,name", [
    (ex.InversionConfig, dict(gammas=(1.5,)), "gammas"), (ex.InversionConfig, dict(d=0), "d"),
    (ex.InversionConfig, dict(families=("relu",)), "families"), (ex.PsiConfig, dict(depths=(1, 2, 3)), "depths"),
    (ex.PsiConfig, dict(v0="x"), "v0"), (ex.RepresentableConfig, dict(d=3), "d"),
    (ex.LambdaConfig, dict(eps_values=(2.0, 1.0)), "eps_values"), (ex.LambdaConfig, dict(closeness=-1.0), "closeness"),
])
def test_config_validation(cls, kwargs, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        cls(**kwargs)


@pytest.mark.parametrize("cls,kwargs,name", [
    (ex.InversionConfig, dict(d=2.0), "d"), (ex.PsiConfig, dict(seed=True), "seed"),
    (ex.LambdaConfig, dict(closeness="0.1"), "closeness"), (ex.BitsConfig, dict(gammas=((1.0, 2),)), "gammas"),
    (ex.Prop49Config, dict(depths=5), "depths"), (ex.Thm47Config, dict(block=2.5), "block"),
])
def test_config_wrong_kind_is_a_type_error(cls, kwargs, name):
    with pytest.raises(TypeError, match=f"`{name}`"):
        cls(**kwargs)


def test_config_rules_between_fields():
    with pytest.raises(ValueError, match="`eps_values` of LambdaConfig"):
        ex.LambdaConfig(eps_values=(0.5, 1.0), from_eps=2.0)
    with pytest.raises(ValueError, match="`gamma_scale` of MemoryConfig"):
        ex.MemoryConfig(gamma_scale=0.01)
    assert ex.BitsConfig(gammas=[[1, 3]]).gammas == ((1, 3),)


def test_every_verdict_is_typed():
    """Each experiment's verdict has the kind its check records (the erratum halves are in ``parts``)."""
    from theory.experiments import experiment

    kinds = {"momentum.inversion": "identity", "momentum.lambda_range": "identity", "momentum.prop411": "identity",
             "momentum.prop41": "bound", "momentum.thm47": "identity", "momentum.lambda_table": "erratum"}
    for name, kind in kinds.items():
        v = experiment(name).verdict(experiment(name).run())
        assert v.kind == kind and v.passed and v.measured and v.expected, (name, v)


def test_registered():
    from theory.experiments import experiment
    for name in ("momentum.inversion", "momentum.psi", "momentum.representable", "momentum.lambda_table",
                 "momentum.memory", "momentum.prop42", "momentum.lambda_range",
                 "momentum.prop41", "momentum.bits", "momentum.prop411", "momentum.lemma45", "momentum.lemma46",
                 "momentum.prop48", "momentum.prop49", "momentum.prop410", "momentum.thm414", "momentum.thm47"):
        e = experiment(name)
        assert "check" in e.presets and "paper" in e.presets


def test_memory_control_storing_activations_fails():
    cfg = dataclasses.replace(ex.MEMORY_PRESETS["check"], method="backprop", depths=(50, 400), d=16, batch=32)
    assert ex.memory_verdict(ex.measure_memory(cfg)).status == "fail"
    ok = dataclasses.replace(cfg, method="memory_free")
    assert ex.memory_verdict(ex.measure_memory(ok)).status == "pass"


def test_prop42_control_zero_initial_velocity_fails():
    cfg = dataclasses.replace(ex.PROP42_PRESETS["check"], v0="zero", instances=1)
    assert ex.prop42_verdict(ex.measure_prop42(cfg)).status == "fail"


def test_lambda_range_control_wrong_candidate_fails():
    cfg = dataclasses.replace(ex.LAMBDA_RANGE_PRESETS["check"], candidate="g_pi", eps_values=(1.0,))
    assert ex.lambda_range_verdict(ex.measure_lambda_range(cfg)).status == "fail"


def test_prop41_control_momentum_jacobian_fails():
    # the tied-weight Momentum ResNet can have a contracting fixed point (radius sqrt(gamma) for A = -I)
    cfg = dataclasses.replace(ex.PROP41_PRESETS["check"], model="momentum", trials=50)
    r = ex.measure_prop41(cfg)
    assert r.min_radius < 1 and r.search.ratio > 1 and ex.prop41_verdict(r).status == "fail"
    assert r.jacobian_gap <= ex.PROP41_JACOBIAN_TOL  # its own formula is its Jacobian: the spectrum fails


def _revnet_jacobian_without_ba(A, B):
    """J(A, B) with the term BA of the lower-right block dropped (a wrong formula)."""
    eye = np.eye(A.shape[0])
    return np.block([[eye, A], [B, eye]])


def test_prop41_control_formula_without_ba_fails(monkeypatch):
    """A Jacobian formula with a dropped term disagrees with the complex-step Jacobian of the RevNet step."""
    monkeypatch.setattr(ex, "revnet_jacobian", _revnet_jacobian_without_ba)
    cfg = dataclasses.replace(ex.PROP41_PRESETS["check"], trials=20)
    r = ex.measure_prop41(cfg)
    assert r.jacobian_gap > 1e-3 and ex.prop41_verdict(r).status == "fail"


def test_prop41_control_larger_radius_found_by_the_search():
    """The bound raised to |lambda| >= 1.01 holds at every random pair; the search finds the pairs with AB -> -t I
    (0 < t <= 4), whose spectrum lies on the unit circle, by itself."""
    cfg = dataclasses.replace(ex.PROP41_PRESETS["check"], radius_floor=1.01)
    r = ex.measure_prop41(cfg)
    assert r.min_radius > 1.01  # the random draws miss it
    assert r.search.ratio > 1 and ex.prop41_verdict(r).status == "fail"


def test_bits_control_wrong_inverse_fails():
    cfg = dataclasses.replace(ex.BITS_PRESETS["check"], inverse_den_offset=1, depth=20, search_budget=20)
    r = ex.measure_bits(cfg)
    assert not any(r.exact) and r.search_inexact > 0 and ex.bits_verdict(r).status == "fail"


def test_bits_control_leading_count_alone_found_by_the_search():
    """The buffer bound without the recursion's terms, N log2(1/gamma): the search finds buffers above it."""
    cfg = dataclasses.replace(ex.BITS_PRESETS["check"], bound_form="leading", gammas=((1, 2),), depth=20)
    r = ex.measure_bits(cfg)
    assert r.search.ratio > 1 and ex.bits_verdict(r).status == "fail"


def test_prop411_control_unscaled_theta_fails():
    cfg = dataclasses.replace(ex.PROP411_PRESETS["check"], theta_scale="one")
    assert ex.prop411_verdict(ex.measure_prop411(cfg)).status == "fail"


def test_representable_default_expectation_counts_every_draw(monkeypatch):
    """The verdict expects every proof-built map reached: a preimage that fails for one of them turns it red."""
    import theory.momentum as M

    cfg = dataclasses.replace(ex.REPRESENTABLE_PRESETS["check"], trials=2)
    r = ex.measure_representable(cfg)
    assert r.n_expected == 2 * len(cfg.eps_values) and ex.representable_verdict(r).status == "pass"
    true_preimage, calls = M.preimage, []

    def preimage_failing_once(D, eps, **kwargs):
        calls.append(eps)
        return true_preimage(D, eps, **kwargs) * (1.0 if len(calls) > 1 else 1.01)

    monkeypatch.setattr(M, "preimage", preimage_failing_once)
    r = ex.measure_representable(cfg)
    assert ex.representable_verdict(r).status == "fail"


# ---------------------------------------------------------------- appendix results of chapter 4

def test_lemma45_control_exp_misses_zero():
    cfg = dataclasses.replace(ex.LEMMA45_PRESETS["check"], family="exp", eps_values=(1.0,), targets=5)
    assert ex.lemma45_verdict(ex.measure_lemma45(cfg)).status == "fail"
    ok = dataclasses.replace(cfg, family="f_eps")
    assert ex.lemma45_verdict(ex.measure_lemma45(ok)).status == "pass"


def test_lemma46_control_nonreal_critical_points_fail():
    cfg = dataclasses.replace(ex.LEMMA46_PRESETS["check"], function="cubic", eps_values=(1.0,))
    r = ex.measure_lemma46(cfg)
    assert r.box_zeros == (2,) and r.real_zeros == (0,)
    assert ex.lemma46_verdict(r).status == "fail"


def _psi_printed_form(theta, eps, **kwargs):
    """A broken Psi_eps kernel on scalars theta = -eps a^2 - 1/(4 eps): the printed closed form of the proof of
    Lemma 4.6, e^{-1/(2 eps)} (cos a + sin a / (2 eps)), instead of Psi_eps."""
    t = float(np.asarray(theta, dtype=float).reshape(-1)[0])
    a = math.sqrt(-(t + 0.25 / eps) / eps)
    return np.array([[math.exp(-0.5 / eps) * (math.cos(a) + math.sin(a) / (2 * eps))]])


LEMMA46_ONE_EPS = dataclasses.replace(ex.LEMMA46_PRESETS["check"], eps_values=(1.0,))


def test_lemma46_erratum_control_both_halves():
    r = ex.measure_lemma46(LEMMA46_ONE_EPS)
    assert erratum_verdict(ex.lemma46_printed_verdict(r), ex.lemma46_corrected_verdict(r)).status == "pass"
    record = ex.lemma46_erratum(r)
    assert record.passed and record.kind == "erratum" and [p.status for p in record.parts] == ["fail", "pass"]


def test_lemma46_erratum_control_printed_form_holds_fails(monkeypatch):
    """With a reference kernel that computes the printed closed form, the printed half holds and the record fails."""
    import theory.momentum as M

    monkeypatch.setattr(M, "psi", _psi_printed_form)
    r = ex.measure_lemma46(LEMMA46_ONE_EPS)
    assert ex.lemma46_printed_verdict(r).status == "pass" and ex.lemma46_erratum(r).status == "fail"


def test_lemma46_erratum_control_corrected_form_fails(monkeypatch):
    """With a reference kernel off by 1e-3, the corrected half fails and so does the record."""
    import theory.momentum as M

    true_psi = M.psi
    monkeypatch.setattr(M, "psi", lambda theta, eps, **kw: true_psi(theta, eps, **kw) + 1e-3)
    r = ex.measure_lemma46(LEMMA46_ONE_EPS)
    assert ex.lemma46_corrected_verdict(r).status == "fail" and ex.lemma46_erratum(r).status == "fail"


def test_prop48_control_fixed_damping_fails():
    cfg = dataclasses.replace(ex.PROP48_PRESETS["check"], damping_power=0.0, draws=1)
    assert ex.prop48_verdict(ex.measure_prop48(cfg)).status == "fail"


def test_prop49_control_zero_velocity_fails():
    cfg = dataclasses.replace(ex.PROP49_PRESETS["check"], v0_rule="zero", points=5)
    assert ex.prop49_verdict(ex.measure_prop49(cfg)).status == "fail"


def test_prop410_control_free_velocity_fails():
    cfg = dataclasses.replace(ex.PROP410_PRESETS["check"], f_scale=0.0, v0_gain=-4.0, eps_values=(1.0,), draws=1,
                              search_budget=20)
    assert ex.prop410_verdict(ex.measure_prop410(cfg)).status == "fail"


def test_prop410_control_quarter_threshold_found_by_the_search():
    """The obstruction with c = 1/4 (phi_1(x0) <= -x0/4 and x0/4 <= phi_1(-x0)) is false: the random draws keep a
    negative margin, the search finds a damped oscillator that flips x0 by more than a quarter."""
    cfg = dataclasses.replace(ex.PROP410_PRESETS["check"], threshold=0.25, eps_values=(1.0,), draws=1)
    r = ex.measure_prop410(cfg)
    assert max(r.max_margin) < 0  # the random draws miss it
    assert r.search.ratio > 1 and ex.prop410_verdict(r).status == "fail"


def test_thm414_control_nonautonomous_identity_fails():
    # f(x, t) = cos(2 pi t) x^2 exp(-x^2) is nonlinear but its time-1 map is the identity
    cfg = dataclasses.replace(ex.THM414_PRESETS["check"], a_values=(1.0,), time_profile="cos")
    assert ex.thm414_verdict(ex.measure_thm414(cfg)).status == "fail"


def test_thm47_control_shifted_preimage_fails():
    cfg = dataclasses.replace(ex.THM47_PRESETS["check"], z_offset=1e-3, eps_values=(1.0,))
    assert ex.thm47_verdict(ex.measure_thm47(cfg)).status == "fail"


@pytest.mark.parametrize("cls, kwargs", [
    ("Lemma45Config", {"eps_values": (0.0,)}), ("Lemma45Config", {"family": "log"}),
    ("Lemma46Config", {"height": -1.0}), ("Prop48Config", {"eps_values": (3.0, 2.0, 1.0)}),
    ("Prop49Config", {"depths": (10,)}), ("Prop410Config", {"draws": 0}),
    ("Thm414Config", {"a_values": (-1.0,)}), ("Thm47Config", {"below": 0.1}),
])
def test_appendix_configs_refuse_bad_fields(cls, kwargs):
    with pytest.raises((ValueError, TypeError), match="`" + next(iter(kwargs)) + "`"):
        getattr(ex, cls)(**kwargs)


def test_fig41_control_without_momentum_fails():
    # gamma = 0 turns the second model into a ResNet: it stays at the order-preserving floor as well
    cfg = dataclasses.replace(ex.FIG41_PRESETS["check"], gamma=0.0, seeds=(0,), iterations=200)
    result = ex.measure_fig41(cfg)
    assert min(result.momentum_errors) >= 0.99 * result.floor
    assert ex.fig41_verdict(result).status == "fail"


def test_fig41_control_untrained_momentum_fails():
    # seed 0 passes after 300 Adam iterations; after 2 the Momentum ResNet has not left the floor, a fail
    cfg = dataclasses.replace(ex.FIG41_PRESETS["check"], seeds=(0,), iterations=300)
    assert ex.fig41_verdict(ex.measure_fig41(cfg)).status == "pass"
    result = ex.measure_fig41(dataclasses.replace(cfg, iterations=2))
    assert max(result.momentum_errors) > 0.3 * result.floor and ex.fig41_verdict(result).status == "fail"


def test_fig41_control_unit_step_resnet_crosses():
    # the figure's own discrete networks (step 1): the ResNet is no longer an ODE flow and, for this seed, learns
    # the decreasing map by reversing the order of points, so the first-order half of the verdict rejects it
    cfg = dataclasses.replace(ex.FIG41_PRESETS["paper"], seeds=(0,))
    result = ex.measure_fig41(cfg)
    assert result.resnet_errors[0] < 0.5 * result.floor and not result.resnet_order_preserving[0]
    assert ex.fig41_verdict(result).status == "fail"


def test_claims_map_to_the_verdicts_their_checks_record():
    """``theory run CLAIM-ID`` records what the check does: the erratum of Lemma 4.6 is lemma46_erratum, the
    other claims the experiment's own verdict."""
    from theory.experiments import experiment, experiment_of

    assert experiment_of("momentum/lemma-4.6/erratum").verdict_for("momentum/lemma-4.6/erratum") is ex.lemma46_erratum
    assert experiment_of("momentum/lemma-4.6").verdict_for("momentum/lemma-4.6") is ex.lemma46_verdict
    exp = experiment("momentum.representable")
    assert exp.verdict_for("momentum/thm-4.4") is ex.representable_verdict
    assert exp.presets["check"] is ex.REPRESENTABLE_PRESETS["check"]
