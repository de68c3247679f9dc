"""The ``implicit-reg`` experiments of :mod:`theory.experiments.implicit_reg`: registration, presets, config
validation (errors name the field) and summaries of small runs."""

from __future__ import annotations

import json
import math

import pytest

from theory.experiments import experiment, experiments
from theory.experiments.implicit_reg import core, general, pl, section5, supplement

#: claims checked over Hypothesis-drawn instances: the search stays with the checks, the package computes the
#: sides of one instance (core of Lemma 18, (35)-(36) of Prop. 11, the Prop. 7 bounds, B.5)
HYPOTHESIS_DRIVEN = {"implicit-reg/lemma-18", "implicit-reg/prop-11/bound", "implicit-reg/prop-7",
                     "implicit-reg/prop-7/displacement", "implicit-reg/prop-7/intermediate",
                     "implicit-reg/prop-7/gronwall", "implicit-reg/prop-5/b5"}


def _implicit():
    return [experiment(name) for name in experiments() if name.startswith("implicit_reg.")]


def test_every_claim_has_a_registered_experiment_or_a_package_side_function():
    claims = [c for e in _implicit() for c in e.claims]
    assert len(claims) == len(set(claims)), "a claim is registered by two experiments"
    assert not set(claims) & HYPOTHESIS_DRIVEN
    assert len(set(claims) | HYPOTHESIS_DRIVEN) == 57
    assert all(c.startswith("implicit-reg/") for c in claims)
    for fn in (general.lemma18_sides, general.p11_bound_sides, general.p7_run, section5.b5_sides):
        assert callable(fn)


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
])
def test_small_runs_summarise_to_plain_numbers(name, overrides):
    exp = experiment(name)
    result = exp.run("check", **overrides)
    json.dumps(exp.summary(result))  # plain numbers, lists and bools only
    assert exp.verdict(result) is not None
