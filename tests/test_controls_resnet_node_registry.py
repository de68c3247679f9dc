"""The ``resnet-node`` experiments as library functions: every claim registered, presets valid,
configs validated, measurements pure, and the verdicts beside them reject broken results."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from theory.experiments import experiment, experiments
from theory.experiments import resnet_node as rn

#: every claim of the paper key (the checks record exactly these)
CLAIMS = {
    "resnet-node/prop-1", "resnet-node/prop-1/tightness", "resnet-node/prop-1/non-smooth", "resnet-node/prop-1/rate",
    "resnet-node/prop-3", "resnet-node/prop-3/iid", "resnet-node/prop-4", "resnet-node/prop-4/iid",
    "resnet-node/prop-5", "resnet-node/prop-5/iid", "resnet-node/prop-6", "resnet-node/prop-6/iid",
    "resnet-node/prop-3/bound", "resnet-node/prop-5/bound", "resnet-node/prop-5/erratum", "resnet-node/prop-6/erratum",
    "resnet-node/sec-3.2/gradient", "resnet-node/sec-3.2/gradient/erratum", "resnet-node/sec-3.2/product",
    "resnet-node/sec-3.2/product/erratum", "resnet-node/assumption-1", "resnet-node/assumption-1/erratum",
    "resnet-node/prop-2", "resnet-node/prop-2/loss", "resnet-node/prop-2/smoothness", "resnet-node/prop-2/pl",
    "resnet-node/prop-2/pl/erratum", "resnet-node/prop-2/large", "resnet-node/prop-2/iid", "resnet-node/prop-2/limit",
    "resnet-node/thm-1", "resnet-node/thm-1/product", "resnet-node/lemma-2", "resnet-node/lemma-1",
    "resnet-node/fig-1", "resnet-node/fig-2", "resnet-node/fig-3c", "resnet-node/fig-4",
    # the document's figures and tables (theory.experiments.resnet_node.figures)
    "resnet-node/fig-3a", "resnet-node/fig-3a/digits", "resnet-node/fig-3b", "resnet-node/fig-3c/cifar",
    "resnet-node/fig-3c/digits", "resnet-node/fig-4/cifar", "resnet-node/table-1", "resnet-node/table-1/imagenet",
    "resnet-node/table-2", "resnet-node/table-2/imagenet",
}

NAMES = [n for n in experiments() if n.startswith("resnet_node.")]


def test_every_claim_is_registered_once():
    claims = [c for name in NAMES for c in experiment(name).claims]
    assert set(claims) == CLAIMS
    assert len(claims) == len(set(claims))


@pytest.mark.parametrize("name", NAMES)
def test_presets_are_valid_configs(name):
    exp = experiment(name)
    assert {"check", "paper"} <= set(exp.presets) and exp.verdict is not None and exp.summary is not None
    for preset in exp.presets.values():
        assert dataclasses.replace(preset) == preset  # validated again on copy


@pytest.mark.parametrize(("cls", "field", "value"), [
    (rn.Prop1Config, "n_instances", 0), (rn.Prop1Config, "scale_range", (2.0, 1.0)),
    (rn.Prop1TightnessConfig, "depths", ()), (rn.Prop1NonSmoothConfig, "depths", (0, 4)),
    (rn.Prop1RateConfig, "depths", (8, 16, 32)), (rn.AdjointRatesConfig, "scheme", "rk4"),
    (rn.AdjointRatesConfig, "weights", "random"), (rn.AdjointRatesConfig, "floor", -1.0),
    (rn.Prop3BoundConfig, "seeds", (-1,)), (rn.Prop5BoundConfig, "depths", ()),
    (rn.Prop5ErratumConfig, "eps_values", (2.0,)), (rn.Prop6ErratumConfig, "N", 0),
    (rn.Sec32GradientConfig, "h", 0.0), (rn.Sec32ProductConfig, "batch", 0),
    (rn.LinearFlowConfig, "inits", ("ones",)), (rn.LinearFlowConfig, "t_points", 1),
    (rn.PLErratumConfig, "eps", -0.1), (rn.LayerDifferenceConfig, "at", "mean"),
    (rn.DoublingConfig, "regime", "small"), (rn.DoublingConfig, "reference", -1),
    (rn.Lemma1Config, "pairs", 0), (rn.Fig2Config, "reference", 0), (rn.Fig1Config, "N", 0),
    (rn.Prop1Config, "search_budget", -1), (rn.Prop3BoundConfig, "search_budget", -1),
    (rn.Prop5BoundConfig, "search_seed", -1), (rn.LinearFlowConfig, "search_budget", -1),
    (rn.Lemma1Config, "search_budget", -1), (rn.Assumption1Config, "search_seed", -1),
    (rn.Fig1Config, "lr", 0.0), (rn.Fig4Config, "depths", (8, 16)), (rn.Fig4Config, "d", 1),
])
def test_configs_reject_bad_fields(cls, field, value):
    with pytest.raises(ValueError, match=f"`{field}`"):
        cls(**{field: value})


def test_measure_rejects_a_foreign_config():
    with pytest.raises(TypeError, match="config"):
        rn.prop2(rn.Fig2Config())
    with pytest.raises(TypeError, match="Lemma1Config"):
        rn.Lemma1Config(flows=rn.Fig2Config())


def test_worst_case_searches_are_part_of_the_measurement_and_reproducible():
    """Every bound's "check" preset runs its worst-case search inside ``measure`` (what ``theory run`` redraws), the
    same instance twice for the same seed, within its budget; another seed explores other points."""
    for name, budget in (("resnet_node.prop3_bound", 40), ("resnet_node.prop5_bound", 40)):
        exp = experiment(name)
        check, paper = exp.presets["check"].search_budget, exp.presets["paper"].search_budget
        assert check > 0 and paper >= 10 * check
        a, b = exp.run("check", search_budget=budget), exp.run("check", search_budget=budget)
        assert a.search.instance == b.search.instance and a.search.ratio == b.search.ratio
        assert a.search.evaluations <= budget and a.search.budget == budget
        assert exp.run("check", search_budget=budget, search_seed=1).search.instance != a.search.instance
        assert exp.run("check", search_budget=0).search is None
    for name in ("resnet_node.prop1", "resnet_node.assumption1", "resnet_node.prop2", "resnet_node.lemma1"):
        exp = experiment(name)
        assert 0 < 10 * exp.presets["check"].search_budget <= exp.presets["paper"].search_budget


def test_measurements_are_deterministic():
    a = rn.prop5_erratum(rn.Prop5ErratumConfig(depths=(256,)))
    b = rn.prop5_erratum(rn.Prop5ErratumConfig(depths=(256,)))
    assert a.to_measured() == b.to_measured()
    assert experiment("resnet_node.prop1_tightness").run().to_measured() == rn.prop1_tightness().to_measured()


def test_fig_configs_are_the_training_defaults():
    """The "check" presets are the configs the training functions default to."""
    assert rn.FIG1_PRESETS["check"] == rn.Fig1Config() and rn.FIG4_PRESETS["check"] == rn.Fig4Config()
    assert rn.FIG1_PRESETS["paper"].N == 300  # the paper's Figure 1 networks have 300 layers


#: one small flow of the assumption regime and short searches: the reruns of the Prop. 2 controls below
SMALL_PROP2 = rn.LinearFlowConfig(seeds=(0,), inits=("zero",), depths=(8,), search_budget=30)


class _Outside:
    """A stand-in for theory.linear.assumption1 that declares every instance outside Assumption 1."""

    holds = False


def test_prop2_verdict_rejects_instances_outside_the_assumption(monkeypatch):
    """Rerun with the check of Assumption 1 broken (every instance declared outside it): the record fails on
    ``n_outside`` alone (the searches then find no instance inside: they are off for this rerun)."""
    config = dataclasses.replace(SMALL_PROP2, search_budget=0)
    result = rn.prop2(config)
    assert rn.prop2_verdict(result).status == "pass"
    assert all(rn.prop2_claim_verdict(result, k).status == "pass" for k in rn.PROP2_KEYS)
    monkeypatch.setattr(rn.linear, "_assumption1_check", lambda theta0, Sigma, B: _Outside())
    outside = rn.prop2(config)
    assert outside.n_outside == 1 and rn.prop2_verdict(outside).status == "fail"
    assert all(rn.prop2_claim_verdict(outside, k).status == "fail" for k in rn.PROP2_KEYS)


def test_prop2_claims_read_their_own_conclusion(monkeypatch):
    """Rerun with the ball's radius broken (1/8 for 1/2): the weight record fails, the other four pass."""
    monkeypatch.setattr(rn.linear, "BALL_RADIUS", 0.125)
    result = rn.prop2(SMALL_PROP2)
    assert rn.prop2_verdict(result).status == "fail"
    assert rn.prop2_claim_verdict(result, "weight").status == "fail"
    assert all(rn.prop2_claim_verdict(result, k).status == "pass" for k in rn.PROP2_KEYS if k != "weight")


def test_adjoint_rates_verdict_rejects_swapped_weights(monkeypatch):
    """Heun errors of smooth weights read as the i.i.d. claims (slow rate predicted): rejected. The rerun draws the
    i.i.d. config's weights from the smooth law (``iid_weights`` replaced by ``smooth_weights``)."""
    from theory.resnet import errors

    config = rn.AdjointRatesConfig("heun", "smooth", depths=(8, 16, 32, 64, 128), seeds=(0,))
    result = rn.adjoint_rates(config)
    assert rn.adjoint_rates_verdict(result).status == "pass"
    assert all(rn.adjoint_rate_verdict(result, p).status == "pass" for p in ("prop-5", "prop-6"))
    monkeypatch.setattr(errors, "iid_weights", errors.smooth_weights)
    swapped = rn.adjoint_rates(dataclasses.replace(config, weights="iid"))
    assert rn.adjoint_rates_verdict(swapped).status == "fail"
    assert all(rn.adjoint_rate_verdict(swapped, p).status == "fail" for p in ("prop-5", "prop-6"))


def test_fig2_verdict_rejects_a_distance_that_does_not_decrease():
    """Rerun with a broken flow: every depth gets the flow of the smallest one (the reference keeps its own), so the
    distance to the reference does not fall with N."""
    config = rn.Fig2Config(depths=(8, 16, 32, 64, 128), reference=256)
    first = config.depths[0]

    def stuck(regime, seed, N, init, t_max, t_points):
        return rn.linear_flow(regime, seed, N if N == config.reference else first, init, t_max, t_points)

    result = rn.fig2(config, flow=stuck)
    assert not result.decreasing and rn.fig2_verdict(result).status == "fail"


def test_bound_searches_have_no_deadline_and_are_reproducible():
    """Regression: the Hypothesis searches of prop-1 and assumption-1 ran with the default 200 ms
    deadline (DeadlineExceeded on a loaded machine with a fresh example database) and depended on
    that database (two machines gave different reports)."""
    from hypothesis import settings

    s = settings(**rn.SEARCH_SETTINGS)
    assert s.deadline is None and s.derandomize and s.database is None and s.max_examples == 40


def test_each_claim_has_the_verdict_its_check_records():
    """The claims that share an experiment each read their own part of the result (verdict_for)."""
    from theory.experiments import experiment_of

    assert experiment_of("resnet-node/prop-3").verdict_for("resnet-node/prop-3") is rn.adjoint_reconstruction_verdict
    assert experiment_of("resnet-node/prop-6/iid").verdict_for("resnet-node/prop-6/iid") is rn.adjoint_gradient_verdict
    product = experiment("resnet_node.sec32_product")
    assert product.verdict_for("resnet-node/sec-3.2/product") is rn.sec32_product_verdict
    assert product.verdict_for("resnet-node/sec-3.2/product/erratum") is rn.sec32_product_erratum_verdict
    prop2 = experiment("resnet_node.prop2")
    result = rn.prop2(dataclasses.replace(SMALL_PROP2, search_budget=0))
    for key, cid in rn.PROP2_KEYS.items():
        assert prop2.verdict_for(cid)(result) == rn.prop2_claim_verdict(result, key)
    config = rn.AdjointRatesConfig("heun", "smooth", depths=(8, 16, 32, 64, 128), seeds=(0,))
    result = rn.adjoint_rates(config)
    assert rn.adjoint_reconstruction_verdict(result) == rn.adjoint_rate_verdict(result, "prop-5")
    assert rn.adjoint_gradient_verdict(result) == rn.adjoint_rate_verdict(result, "prop-6")
    thm1 = experiment("resnet_node.thm1")
    assert {thm1.verdict_for(c).__name__ for c in thm1.claims} == {"thm1_psi_verdict", "thm1_pi_verdict",
                                                                   "thm1_lemma_verdict"}


def test_the_bound_searches_are_part_of_the_measurement_and_reproducible():
    """The Hypothesis searches of prop-1 and assumption-1 run inside ``measure`` (what the checks record is
    ``run("check")``): the same rows twice, the seeded draw alone without them, and Hypothesis's pool of source
    constants left as it was."""
    from hypothesis.internal.conjecture import providers

    before = providers._get_local_constants
    exp = experiment("resnet_node.prop1")
    assert exp.presets["check"].search_examples == 40 and exp.presets["check"].n_instances == 0
    a, b = exp.run("check", search_examples=4), exp.run("check", search_examples=4)
    assert a.bound.n_instances == 4 and np.array_equal(a.lhs, b.lhs) and a.bound.worst == b.bound.worst
    assert exp.run("check", search_examples=0, n_instances=3).bound.n_instances == 3
    assert providers._get_local_constants is before
    with pytest.raises(ValueError, match="`n_instances`"):
        rn.Prop1Config(n_instances=0, search_examples=0)
    with pytest.raises(ValueError, match="`search_rho`"):
        rn.Assumption1Config(search_rho=(0.99, 0.9))
    small = dict(n_instances=2, break_ladder=(4.0,), search_depths=(2,), dims=(1,))
    seeded = rn.assumption1(rn.Assumption1Config(**small))
    searched = rn.assumption1(rn.Assumption1Config(**small, search_examples=3))
    assert seeded.n_hypothesis == 0 and searched.n_hypothesis == 3 and len(searched.instances) == 5
    assert searched.instances[:2] == seeded.instances
    assert rn.assumption1_verdict(searched).measured["n_hypothesis"] == 3
    assert all(r["N"] == 2 and 0.9 <= r["rho"] <= 0.9999 for r in searched.instances[2:])
