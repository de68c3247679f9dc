"""The ``implicit-reg`` experiments of :mod:`theory.experiments.implicit_reg`: registration, presets, config
validation (errors name the field) and summaries of small runs."""

from __future__ import annotations

import json
import math

import pytest

from theory.experiments import experiment, experiment_of, experiments
from theory.experiments.implicit_reg import core, general, pl, searches, section5, supplement

#: claims checked over Hypothesis-drawn instances and a worst-case search: registered searches
#: (theory.experiments.implicit_reg.searches) over the sides of one instance that the package computes (Lemma 18,
#: (35)-(36) of Prop. 11, Prop. 7, B.5)
HYPOTHESIS_DRIVEN = {"implicit-reg/lemma-18": "lemma18_search", "implicit-reg/prop-11/bound": "prop11_bound_search",
                     "implicit-reg/prop-7": "prop7_search", "implicit-reg/prop-7/displacement": "prop7_search",
                     "implicit-reg/prop-7/intermediate": "prop7_search", "implicit-reg/prop-7/gronwall": "prop7_search",
                     "implicit-reg/prop-5/b5": "b5_search"}

#: claims whose record is not their experiment's own ``verdict``, and the function the registry gives them
CLAIM_VERDICTS = {
    "implicit-reg/prop-3/bounded": core.bounded_verdict, "implicit-reg/thm-4": core.thm4_verdict,
    "implicit-reg/fig-1/limit": section5.fig1_limit_verdict,
    "implicit-reg/sec-5.1/horizon": section5.horizon_steps_verdict,
    "implicit-reg/fig-2/loss": section5.fig2_loss_verdict, "implicit-reg/table-1/relu": section5.table1_relu_verdict,
    "implicit-reg/eq-13/erratum": section5.backprop_erratum_verdict, "implicit-reg/eq-15": section5.eq15_verdict,
    "implicit-reg/eq-15/erratum": section5.eq15_erratum_verdict,
    "implicit-reg/eq-44/erratum": section5.adjoint_erratum_verdict,
    "implicit-reg/app-d/gradient/erratum": section5.app_d_gradient_erratum_verdict,
    "implicit-reg/prop-8/bounded": general.prop8_bounded_verdict,
    "implicit-reg/prop-8/differences": general.prop8_differences_verdict,
    "implicit-reg/prop-8/convergence": general.prop8_convergence_verdict,
    "implicit-reg/prop-8/erratum": general.prop8_erratum_verdict,
    "implicit-reg/thm-6/depth-limit": pl.thm6_depth_verdict, "implicit-reg/thm-6/smoothness": pl.thm6_smoothness_verdict,
    "implicit-reg/prop-7/displacement": searches.prop7_displacement_verdict,
    "implicit-reg/prop-7/intermediate": searches.prop7_intermediate_verdict,
    "implicit-reg/prop-7/gronwall": searches.prop7_gronwall_verdict,
}


def _implicit():
    return [experiment(name) for name in experiments() if name.startswith("implicit_reg.")]


def test_every_claim_has_one_registered_experiment_with_a_verdict():
    claims = [c for e in _implicit() for c in e.claims]
    assert len(claims) == len(set(claims)), "a claim is registered by two experiments"
    # the proof chains (modules proof_*) register claims of their own, checked with them
    mine = [c for e in _implicit() if ".proof_" not in e.measure.__module__ for c in e.claims]
    assert len(mine) == 58
    assert all(c.startswith("implicit-reg/") for c in claims)
    for cid, name in HYPOTHESIS_DRIVEN.items():
        assert experiment_of(cid).name == f"implicit_reg.{name}"
    for cid in mine:
        exp = experiment_of(cid)
        assert exp.verdict_for(cid) is CLAIM_VERDICTS.get(cid, exp.verdict), cid
    for fn in (general.lemma18_sides, general.p11_bound_sides, general.p7_run, section5.b5_sides):
        assert callable(fn)


@pytest.mark.parametrize("name", sorted(core.TRAINING_VARIANTS))
def test_training_variants_change_one_field_of_the_training_presets(name):
    change = core.TRAINING_VARIANTS[name]
    base, exp = experiment("implicit_reg.training"), experiment(f"implicit_reg.{name}")
    for preset in ("check", "paper"):
        assert exp.presets[preset] == base.config_for(preset, **change)
    assert exp.measure is base.measure


def test_a_search_draws_the_same_instances_twice():
    exp = experiment("implicit_reg.b5_search")
    a, b = exp.run("check", max_examples=5), exp.run("check", max_examples=5)
    assert a.bound.n_instances == b.bound.n_instances == 5
    assert a.lhs.tolist() == b.lhs.tolist() and a.bound.worst == b.bound.worst
    # and the worst-case search, deterministic given its seed, finds the same instance with the same budget
    assert a.bound.search.instance == b.bound.search.instance and a.bound.search.ratio == b.bound.search.ratio
    assert a.bound.search.evaluations <= a.bound.search.budget == exp.presets["check"].search_budget


@pytest.mark.parametrize("exp", _implicit(), ids=lambda e: e.name)
def test_presets_are_valid_configs(exp):
    assert {"check", "paper"} <= set(exp.presets)
    for preset in exp.presets.values():
        assert isinstance(preset, exp.config)
        assert exp.config_for("check") == exp.presets["check"]


BAD = [
    (core.TrainingConfig, {"grid": (8, 4)}, ValueError, "`grid`"),
    (core.TrainingConfig, {"activation": "swish"}, ValueError, "`activation`"),
    (core.TrainingConfig, {"lr": -1.0}, ValueError, "`lr`"),
    (core.TrainingConfig, {"train_outer": 1}, TypeError, "`train_outer`"),
    (core.Prop2Config, {"seeds": ()}, ValueError, "`seeds`"),
    (core.AppDConfig, {"C": 0.5}, ValueError, "`C`"),
    (section5.Fig1Config, {"ref": 64}, ValueError, "`ref`"),
    (section5.Fig1Config, {"chunk": 7}, ValueError, "`chunk`"),
    (section5.HorizonConfig, {"flow_time": math.inf}, ValueError, "`flow_time`"),
    (section5.Fig2Config, {"depths": (16, 32, 64)}, ValueError, "`depths`"),
    (section5.Table1Config, {"activations": ("gelu", "swish")}, ValueError, "`activations`"),
    (section5.BackpropConfig, {"n_instances": 0}, ValueError, "`n_instances`"),
    (section5.AdjointConfig, {"erratum_stride": 10}, ValueError, "`erratum_stride`"),
    (section5.AppDGradientConfig, {"n_states": 2.5}, TypeError, "`n_states`"),
    (general.Lemma20Config, {"mw_max": 1.0}, ValueError, "`mw_max`"),
    (general.Lemma20MCConfig, {"cases": ((1, 1, 1.0),)}, ValueError, "`cases`"),
    (general.Prop11Config, {"index_map": "shuffled"}, ValueError, "`index_map`"),
    (general.Prop7RateConfig, {"every": 0}, ValueError, "`every`"),
    (general.Prop8Config, {"M": 1.5}, ValueError, "`M`"),
    (general.Prop8CertifiedConfig, {"seeds": (-1,)}, ValueError, "`seeds`"),
    (pl.Lemma21Config, {"ratios": ()}, ValueError, "`ratios`"),
    (pl.TransitionConfig, {"draws": 0}, ValueError, "`draws`"),
    (pl.Prop5InitConfig, {"seeds": (0.5, 1)}, TypeError, "`seeds`"),
    (pl.Thm6Config, {"T": 0.0}, ValueError, "`T`"),
    (pl.Thm6ExpConfig, {"steps": 2}, ValueError, "`steps`"),
    (pl.WidthConfig, {"ratios": (1.0,)}, ValueError, "`ratios`"),
    (pl.SamplesConfig, {"m_over_n": 0}, ValueError, "`m_over_n`"),
    (pl.Thm6LimitsConfig, {"data": "noisy"}, ValueError, "`data`"),
    (pl.Prop5ErratumConfig, {"activations": ("relu",)}, ValueError, "`activations`"),
    (supplement.Thm14Config, {"init": "zeros"}, ValueError, "`init`"),
    (section5.HorizonConfig, {"steps_reading": "both"}, ValueError, "`steps_reading`"),
    (searches.Lemma18SearchConfig, {"max_examples": 0}, ValueError, "`max_examples`"),
    (searches.Lemma18SearchConfig, {"enforce": 1}, TypeError, "`enforce`"),
    (searches.Prop11BoundSearchConfig, {"shrink": "L2"}, ValueError, "`shrink`"),
    (searches.Prop7SearchConfig, {"max_examples": 2.5}, TypeError, "`max_examples`"),
    (searches.B5SearchConfig, {"max_examples": -1}, ValueError, "`max_examples`"),
]


@pytest.mark.parametrize("cls, change, error, field", BAD, ids=[f"{c.__name__}-{f}" for c, _, _, f in BAD])
def test_configs_reject_bad_fields(cls, change, error, field):
    with pytest.raises(error, match=field):
        cls(**change)


@pytest.mark.parametrize("name, overrides", [
    ("implicit_reg.app_d", {"grid": (2,), "steps": 50}),
    ("implicit_reg.backprop", {"n_instances": 1}),
    ("implicit_reg.lemma20", {"qm_max": 20, "mw_points": 5}),
    ("implicit_reg.lemma20_mc", {"runs": 500}),
    ("implicit_reg.prop11", {"grid": (8, 16, 32), "seeds": (0,)}),
    ("implicit_reg.prop5_erratum", {"seeds": (0,)}),
    ("implicit_reg.app_d_gradient", {"n_states": 2}),
    ("implicit_reg.lemma18_search", {"max_examples": 5}),
    ("implicit_reg.prop11_bound_search", {"max_examples": 2}),
    ("implicit_reg.b5_search", {"max_examples": 5}),
])
def test_small_runs_summarise_to_plain_numbers(name, overrides):
    exp = experiment(name)
    result = exp.run("check", **overrides)
    json.dumps(exp.summary(result))  # plain numbers, lists and bools only
    assert exp.verdict(result) is not None
