"""Negative controls of the gen-bounds claim checks: broken inputs make each verdict fail."""

import dataclasses

import pytest

import theory.experiments.gen_bounds as ex
from theory.claims import erratum_verdict


def _small_prop42(**kw):
    return dataclasses.replace(ex.PROP42_PRESETS["check"], pairs=2, batch=8, steps=20, **kw)


def test_prop42_control_shrunk_constant_fails():
    r = ex.measure_prop42(_small_prop42(kappas=(0.1, 1.0), radii=(1.0,)))
    assert ex.prop42_verdict(r).status == "pass"
    shrunk = dataclasses.replace(r, proof=tuple(0.1 * p for p in r.proof))
    assert ex.prop42_verdict(shrunk).status == "fail"


def test_prop42_erratum_record_both_halves():
    r = ex.measure_prop42(_small_prop42(kappas=(0.05, 1.0), radii=(0.5, 1.0)))
    assert erratum_verdict(ex.prop42_printed_verdict(r), ex.prop42_verdict(r)).status == "pass"
    assert ex.prop42_erratum_verdict(r).status == "pass" and ex.prop42_erratum_verdict(r).kind == "erratum"
    # printed form holding (only instances with K_f R e^(K_f R) >= 1): the record must fail
    big = ex.measure_prop42(_small_prop42(kappas=(1.0, 2.0), radii=(1.0, 2.0)))
    assert ex.prop42_printed_verdict(big).status == "pass"
    assert erratum_verdict(ex.prop42_printed_verdict(big), ex.prop42_verdict(big)).status == "fail"
    assert ex.prop42_erratum_verdict(big).status == "fail"
    # corrected form failing: the record must fail
    broken = dataclasses.replace(r, proof=tuple(0.01 * p for p in r.proof))
    assert erratum_verdict(ex.prop42_printed_verdict(broken), ex.prop42_verdict(broken)).status == "fail"
    assert ex.prop42_erratum_verdict(broken).status == "fail"


def test_prop43_control_coarse_centres_fail():
    cfg = dataclasses.replace(ex.PROP43_PRESETS["check"], eps_factor=4.0, trials=30)
    assert ex.prop43_verdict(ex.measure_prop43(cfg)).status == "fail"


def test_prop46_control_unscaled_resnet_fails():
    # residual scaling 1/sqrt(L) instead of 1/L: the bound is no longer uniform in the depth
    cfg = dataclasses.replace(ex.PROP46_PRESETS["check"], scaling=0.5, ds=(2,), radii=(2.0,), pairs=1, tied=True)
    assert ex.prop46_verdict(ex.measure_prop46(cfg)).status == "fail"


def test_prop47_control_defect_fails():
    r = ex.measure_prop47(dataclasses.replace(ex.PROP47_PRESETS["check"], depths=(10,)))
    assert ex.prop47_verdict(r).status == "pass"
    assert ex.prop47_verdict(dataclasses.replace(r, lipschitz_error=1e-3)).status == "fail"
    assert ex.prop47_verdict(dataclasses.replace(r, linearity_error=float("nan"))).status == "fail"


def test_cor49_control_fails_above_bound():
    r = ex.measure_cor49(dataclasses.replace(ex.COR49_PRESETS["check"], depths=(10,), draws=2))
    assert ex.cor49_verdict(r).status == "pass"
    assert ex.cor49_verdict(dataclasses.replace(r, ratio=1.5)).status == "fail"


def test_kw_rates_control_swapped_laws_fail():
    r = ex.measure_kw_rates(dataclasses.replace(ex.KW_RATES_PRESETS["check"], depths=(50, 100, 200), draws=1))
    swapped = dataclasses.replace(r, smooth_slope=r.iid_slope, iid_slope=r.smooth_slope)
    assert ex.kw_rates_verdict(swapped).status == "fail"
    # each of the four thresholds rejects on its own
    base = dataclasses.replace(r, smooth_slope=0.0, iid_slope=1.0)
    assert ex.kw_rates_verdict(base).status == "pass" and ex.kw_rates_verdict(base).kind == "rate"
    for kw in ({"smooth_slope": 0.25}, {"smooth_slope": -0.25}, {"iid_slope": 0.75}, {"iid_slope": 1.35}):
        assert ex.kw_rates_verdict(dataclasses.replace(base, **kw)).status == "fail", kw


def test_thm48_control_bound_below_deviation_fails():
    r = ex.measure_thm48(dataclasses.replace(ex.THM48_PRESETS["check"], ns=(100,), members=10, mc=5000, seeds=3))
    assert ex.thm48_verdict(r).status == "pass"
    tiny = dataclasses.replace(r, bound=tuple(1e-6 for _ in r.bound),
                               max_ratio=max(a / 1e-6 for a in r.deviation))
    assert ex.thm48_verdict(tiny).status == "fail"


def test_fig41_control_penalty_without_effect_fails():
    cfg = dataclasses.replace(ex.FIG41_PRESETS["check"], seeds=(0,), repeats=1, epochs=8)
    r = ex.measure_fig41(cfg)
    reversed_gap = dataclasses.replace(r, gap=tuple(row[::-1] for row in r.gap))
    assert ex.fig41_verdict(reversed_gap).status == "fail"
    anti = dataclasses.replace(r, final_spearman=-0.5)
    assert ex.fig41_verdict(anti).status == "fail"
    assert "min_gap_drop" in ex.fig41_verdict(r).measured


def test_cor45_control_bound_below_deviation_fails():
    r = ex.measure_cor45(dataclasses.replace(ex.COR45_PRESETS["check"], ns=(100,), members=10, mc=5000, seeds=3))
    assert ex.thm48_verdict(r).status == "pass"
    assert ex.thm48_verdict(dataclasses.replace(r, max_ratio=2.0)).status == "fail"


def test_golowich_control_wrong_growth_fails():
    r = ex.measure_golowich(ex.GOLOWICH_PRESETS["check"])
    assert ex.golowich_verdict(r).status == "pass"
    assert ex.golowich_verdict(dataclasses.replace(r, slope=0.0)).status == "fail"
    assert ex.golowich_verdict(dataclasses.replace(r, margin=-0.1)).status == "fail"
    assert ex.golowich_verdict(dataclasses.replace(r, slope=2 * r.half_log_d)).status == "fail"


def test_thm44_control_bound_below_deviation_fails():
    r = ex.measure_thm44(dataclasses.replace(ex.THM44_PRESETS["check"], ns=(100,), members=5, mc=2000, seeds=2))
    assert ex.thm48_verdict(r).status == "pass"
    assert ex.thm48_verdict(dataclasses.replace(r, max_ratio=1.5)).status == "fail"


def test_configs_refuse_wrong_kinds_values_and_cross_field_rules():
    with pytest.raises(TypeError, match="`d` of Prop42Config"):
        ex.Prop42Config(d=2.0)
    with pytest.raises(TypeError, match="`tied` of Prop46Config"):
        ex.Prop46Config(tied=1)
    with pytest.raises(ValueError, match="`depths` of Prop47Config"):
        ex.Prop47Config(depths=(1, 10))
    with pytest.raises(ValueError, match=r"`depths` of Cor49Config must be >= max\(radii\)"):
        ex.Cor49Config(depths=(1, 10), radii=(2.0,))
    with pytest.raises(ValueError, match="`lams` of Fig41Config must start with 0"):
        ex.Fig41Config(lams=(0.01, 0.1))
    with pytest.raises(ValueError, match="`lams` of Fig41Config"):
        ex.Fig41Config(lams=(0.0, 0.1, 0.1))
    for cls in (ex.Thm48Config, ex.Cor45Config, ex.Thm44Config):  # delta is a probability in (0, 1)
        with pytest.raises(ValueError, match=f"`delta` of {cls.__name__}"):
            cls(delta=1.0)


def test_each_claim_has_the_experiment_and_verdict_its_check_records():
    from theory.experiments import experiment_of

    expected = {
        "gen-bounds/prop-4.2": ("gen_bounds.prop42", ex.prop42_verdict),
        "gen-bounds/prop-4.2/erratum": ("gen_bounds.prop42", ex.prop42_erratum_verdict),
        "gen-bounds/prop-4.3": ("gen_bounds.prop43", ex.prop43_verdict),
        "gen-bounds/prop-4.6": ("gen_bounds.prop46", ex.prop46_verdict),
        "gen-bounds/prop-4.7": ("gen_bounds.prop47", ex.prop47_verdict),
        "gen-bounds/cor-4.9": ("gen_bounds.cor49", ex.cor49_verdict),
        "gen-bounds/sec-4.4.1": ("gen_bounds.kw_rates", ex.kw_rates_verdict),
        "gen-bounds/thm-4.8": ("gen_bounds.thm48", ex.thm48_verdict),
        "gen-bounds/fig-4.1": ("gen_bounds.fig41", ex.fig41_verdict),
        "gen-bounds/cor-4.5": ("gen_bounds.cor45", ex.thm48_verdict),
        "gen-bounds/sec-4.4.2": ("gen_bounds.golowich", ex.golowich_verdict),
        "gen-bounds/thm-4.4": ("gen_bounds.thm44", ex.thm48_verdict),
    }
    for claim_id, (name, verdict) in expected.items():
        exp = experiment_of(claim_id)
        assert exp.name == name, claim_id
        assert exp.verdict_for(claim_id) is verdict, claim_id
