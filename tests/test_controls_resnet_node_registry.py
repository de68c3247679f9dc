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


def test_measurements_are_deterministic():
    a = rn.prop5_erratum(rn.Prop5ErratumConfig(depths=(256,)))
    b = rn.prop5_erratum(rn.Prop5ErratumConfig(depths=(256,)))
    assert a.to_measured() == b.to_measured()
    assert experiment("resnet_node.prop1_tightness").run().to_measured() == rn.prop1_tightness().to_measured()


def test_fig_configs_are_the_training_defaults():
    """The "check" presets are the configs the training functions default to."""
    assert rn.FIG1_PRESETS["check"] == rn.Fig1Config() and rn.FIG4_PRESETS["check"] == rn.Fig4Config()
    assert rn.FIG1_PRESETS["paper"].N == 300  # the paper's Figure 1 networks have 300 layers


def test_prop2_verdict_rejects_instances_outside_the_assumption():
    rows = (((0, "zero", 8), {"weight": 0.5, "loss": 0.5, "smoothness": 0.5, "pl": 0.5, "tail": 0.5}),)
    assert rn.prop2_verdict(rn.Prop2Result(rows, 0)).status == "pass"
    assert rn.prop2_verdict(rn.Prop2Result(rows, 1)).status == "fail"
    assert all(rn.prop2_claim_verdict(rn.Prop2Result(rows, 0), k).status == "pass" for k in rn.PROP2_KEYS)
    assert all(rn.prop2_claim_verdict(rn.Prop2Result(rows, 1), k).status == "fail" for k in rn.PROP2_KEYS)
    broken = (((0, "zero", 8), {"weight": 1.2, "loss": 0.5, "smoothness": 0.5, "pl": 0.5, "tail": 0.5}),)
    assert rn.prop2_verdict(rn.Prop2Result(broken, 0)).status == "fail"
    assert rn.prop2_claim_verdict(rn.Prop2Result(broken, 0), "weight").status == "fail"
    assert rn.prop2_claim_verdict(rn.Prop2Result(broken, 0), "loss").status == "pass"


def test_adjoint_rates_verdict_rejects_swapped_weights():
    """Heun errors of smooth weights read as the i.i.d. claims (slow rate predicted): rejected."""
    config = rn.AdjointRatesConfig("heun", "smooth", depths=(8, 16, 32, 64, 128), seeds=(0,))
    result = rn.adjoint_rates(config)
    assert rn.adjoint_rates_verdict(result).status == "pass"
    assert all(rn.adjoint_rate_verdict(result, p).status == "pass" for p in ("prop-5", "prop-6"))
    swapped = dataclasses.replace(result, config=dataclasses.replace(config, weights="iid"))
    assert rn.adjoint_rates_verdict(swapped).status == "fail"
    assert all(rn.adjoint_rate_verdict(swapped, p).status == "fail" for p in ("prop-5", "prop-6"))


def test_fig2_verdict_rejects_a_distance_that_does_not_decrease():
    config = rn.Fig2Config()
    t = np.linspace(0, 1, config.t_points)
    flat = np.ones((len(config.depths), config.t_points))
    from theory.rates import fit_rate
    result = rn.Fig2Result(config, t, flat, False, fit_rate(np.array(config.depths), flat[:, 1:].mean(axis=1)))
    assert rn.fig2_verdict(result).status == "fail"


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
    rows = (((0, "zero", 8), {"weight": 1.2, "loss": 0.5, "smoothness": 0.5, "pl": 0.5, "tail": 0.5}),)
    prop2 = experiment("resnet_node.prop2")
    for key, cid in rn.PROP2_KEYS.items():
        got = prop2.verdict_for(cid)(rn.Prop2Result(rows, 0))
        assert got == rn.prop2_claim_verdict(rn.Prop2Result(rows, 0), key)
        assert got.status == ("fail" if key == "weight" else "pass")
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
