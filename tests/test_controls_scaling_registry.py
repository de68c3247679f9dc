"""The ``scaling`` experiments as library functions: every claim of the paper key is covered by a
registered experiment (or is a Hypothesis-driven bound with its per-instance package function), the
presets are valid configs, the configs reject bad fields, and the verdicts beside the measurements
reject broken results."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from theory.experiments.scaling import _claims as sc
from theory.experiments.scaling import _fbm as sc_fbm
from theory.experiments import experiment, experiments

ROOT = pathlib.Path(__file__).resolve().parents[1]
NAMES = [n for n in experiments() if n.startswith("scaling.")]


def _listed_claims():
    run = subprocess.run([sys.executable, "-m", "theory.cli", "check", "--list", "--paper", "scaling"], cwd=ROOT,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return {line.split()[0] for line in run.stdout.splitlines() if line.startswith("scaling/")}


def test_every_listed_claim_is_registered():
    listed = _listed_claims()
    assert len(listed) >= 45
    registered = [c for name in NAMES for c in experiment(name).claims]
    assert len(registered) == len(set(registered)), "a claim is registered by two experiments"
    assert listed - set(registered) == set(), f"claims without a registered experiment: {sorted(listed - set(registered))}"
    assert set(registered) - listed == set(), f"registered claims no check records: {sorted(set(registered) - listed)}"
    # the Hypothesis-driven claims too: their experiment runs the search, the package function one instance
    assert set(sc.HYPOTHESIS_DRIVEN) <= set(registered)
    assert all(callable(f) and f.__module__.startswith("theory.") for f in sc.HYPOTHESIS_DRIVEN.values())


def test_every_claim_records_the_verdict_of_its_experiment():
    """Each claim's experiment gives it a verdict (the experiment's own or one of ``claim_verdicts``)."""
    for name in NAMES:
        exp = experiment(name)
        for claim_id in exp.claims:
            assert callable(exp.verdict_for(claim_id)), claim_id
    fig6 = experiment("scaling.fig6")
    assert set(fig6.claim_verdicts) == {f"scaling/fig-6/{k}" for k in sc_fbm.FIG6}


def test_the_hypothesis_driven_instance_function_computes_one_instance():
    err, bound = sc.HYPOTHESIS_DRIVEN["scaling/prop-11/constant"](3, 1.0, 10, 0)
    assert 0 < err <= bound


def test_prop11_constant_search_is_deterministic_and_rejects_a_wrong_scaling():
    """The derandomised Hypothesis search draws the same instances on every run; at beta = 0.9 against the ODE
    (error O(L^0.1), bound O(1/L)) its worst LHS/RHS exceeds 1."""
    exp = experiment("scaling.prop11_constant")
    a, b = exp.run("check", examples=10), exp.run("check", examples=10)
    assert a.lhs.size == b.lhs.size > 0 and np.array_equal(a.lhs, b.lhs) and np.array_equal(a.rhs, b.rhs)
    assert exp.verdict(a).passed, exp.verdict(a).message
    assert not exp.verdict(exp.run("check", examples=20, beta=0.9)).passed


def test_fig6_case_is_the_run_of_one_hurst_index():
    """The claim of one Hurst index records the verdict of that Hurst index run alone (its own 99% window),
    read from the run of the three."""
    small = sc_fbm.Fig6Config(n=200, paths=40, lags=(1, 2, 4, 8), n_boot=50)
    full = sc_fbm.fig6(small)
    for name, hurst in sc_fbm.FIG6.items():
        alone = sc_fbm.fig6(dataclasses.replace(small, hurst=(hurst,)))
        got, want = sc_fbm.fig6_claim_verdict(full, name), sc_fbm.fig6_verdict(alone)
        assert (got.status, got.expected, got.measured) == (want.status, want.expected, want.measured)
    with pytest.raises(ValueError, match="`name`"):
        sc_fbm.fig6_case(full, "nope")
    with pytest.raises(ValueError, match="Hurst index"):
        sc_fbm.fig6_case(sc_fbm.fig6(dataclasses.replace(small, hurst=(0.3,))), "rough")


@pytest.mark.parametrize("name", NAMES)
def test_presets_are_valid_configs(name):
    exp = experiment(name)
    assert {"check", "paper"} <= set(exp.presets) and exp.summary is not None
    assert exp.verdict is not None or not exp.claims  # a sweep cell (no claim) may have no verdict
    for preset in exp.presets.values():
        assert dataclasses.replace(preset) == preset  # validated again on copy


@pytest.mark.parametrize(("cls", "field", "value"), [
    (sc.MomentConfig, "laws", ()), (sc.MomentConfig, "laws", ("cauchy",)), (sc.MomentConfig, "sizes", ((16, 1),)),
    (sc.MomentConfig, "archs", (("res4", "relu"),)), (sc.MomentConfig, "seed", -1),
    (sc.Lemma15Config, "alpha", 0.0), (sc.Lemma15Config, "v_law", "nope"), (sc.Lemma16Config, "n", 1),
    (sc.Lemma16ErratumConfig, "printed_law", "nope"), (sc.Lemma17Config, "scales", (0.0,)),
    (sc.Lemma19Config, "laws", ("student5",)), (sc.Lemma19Config, "lambdas", (-1.0,)),
    (sc.Lemma20Config, "scale", -1.0), (sc.Lemma21Config, "sizes", ()),
    (sc.NetConfig, "quantity", "q"), (sc.NetConfig, "plan", ((0.5, ()),)), (sc.NetConfig, "d", 1),
    (sc.NetConfig, "figure_depths", (30, 10)), (sc.Lemma14Config, "fast_depths", ()),
    (sc.Lemma14Config, "net", 3), (sc.Prop7Config, "extra", (("res9",),)),
    (sc.IdentityConfig, "betas", (0.25,)), (sc.IdentityConfig, "deltas", (1.5,)),
    (sc.Res1Config, "form", "printed"), (sc.Res1Config, "runs", 1), (sc.ThresholdConfig, "between", (3,)),
    (sc.Fig2Config, "runs", 0), (sc.SmallDepthConfig, "depths", (4, 2)),
    (sc.Prop10Config, "paths", 401), (sc.Prop10Config, "L_ref", 1000), (sc.Prop10Config, "pairs", ()),
    (sc.Prop11Config, "seeds", (0,)), (sc.Prop11Config, "noise", -0.1), (sc.Prop11Config, "grid", (16, 24, 64)),
])
def test_configs_reject_bad_fields(cls, field, value):
    # a value of the wrong kind (a number where a config or a tuple of configs belongs) is a TypeError
    wrong_kind = (cls, field) in ((sc.Lemma14Config, "net"), (sc.ThresholdConfig, "between"))
    with pytest.raises(TypeError if wrong_kind else ValueError, match=f"`{field}`"):
        cls(**{field: value})


def test_measure_rejects_a_foreign_config():
    with pytest.raises(TypeError, match="MomentConfig"):
        sc.prop1(sc.Lemma16Config())
    with pytest.raises(TypeError, match="Prop10Config"):
        sc.prop10(sc.Prop11Config())


def test_small_measurements_are_deterministic_and_their_verdicts_reject_broken_laws():
    small = sc.Lemma16Config(laws=("uniform",), n=2000)
    a, b = sc.lemma16(small), sc.lemma16(small)
    assert a.tracker.result().to_measured() == b.tracker.result().to_measured()
    assert sc.tracker_verdict(a).passed
    # an asymmetric centered law breaks the ReLU equality of Lemma 16
    assert not sc.tracker_verdict(sc.lemma16(dataclasses.replace(small, laws=("centered_exponential",),
                                                                  n=20_000))).passed
    # (A2) under a shifted law: E||g||^2/||h||^2 leaves [1/2, 1]
    shifted = sc.MomentConfig(laws=("shifted_gaussian",), sizes=((16, 4000),), archs=(("res3", "relu"),))
    assert not sc.tracker_verdict(sc.prop1(shifted)).passed


def test_prop11_verdict_rejects_a_wrong_scaling():
    cfg = sc.Prop11Config(seeds=(0, 1, 2), grid=(16, 32, 64, 128, 256))  # a rate needs 5 sizes
    assert sc.prop11_verdict(sc.prop11(cfg)).passed
    assert not sc.prop11_verdict(sc.prop11(dataclasses.replace(cfg, beta=0.5))).passed


@pytest.mark.parametrize("shift", [0.05, -0.05])
def test_prop10_rejects_a_rate_off_by_005(shift):
    """The check's paths against slope -1/2 + shift: the record (the pair farthest out of its scatter
    window, about 0.03) fails; unshifted it passes."""
    exp = experiment("scaling.prop10")
    verdict = exp.verdict(exp.run("check"))
    assert verdict.kind == "rate" and verdict.passed, verdict.message
    verdict = exp.verdict(exp.run("check", slope_shift=shift))
    assert not verdict.passed, verdict.message


def test_prop10_window_is_the_scatter_of_the_groups():
    import numpy as np

    rng = np.random.default_rng(0)
    grid = (16, 32, 64)
    groups = np.exp(-0.5 * np.log(grid) + 0.01 * rng.standard_normal((20, 3)))
    from theory.experiments.scaling._limits import p10_window

    narrow, wide = p10_window(groups, grid), p10_window(groups ** 3, grid)  # 3x the scatter of the log slopes
    assert 0 < narrow < 0.05 and wide == pytest.approx(3 * narrow, rel=1e-9)
    with pytest.raises(ValueError, match="`groups`"):
        p10_window(groups[:1], grid)
