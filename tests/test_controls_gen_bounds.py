"""Negative controls of the gen-bounds claim checks: each reruns a measurement with a broken input (a violated
hypothesis in the config, or a bound, a kernel or a constant monkeypatched with a wrong one) and asserts that the
verdict fails. For every bound with a worst-case search, a mutation of its right-hand side (the constant divided by
4, or dropped terms where the bound is too loose for that) must be found by the search itself, within the budget
of the "check" preset."""

import dataclasses
import math

import numpy as np
import pytest

import theory.experiments.gen_bounds as ex
import theory.generalization as G
from theory.experiments.gen_bounds import _search

def _quarter(monkeypatch, name, owner=G):
    """Replace ``owner.name`` (a right-hand side) by a quarter of itself."""
    original = getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a, **k: original(*a, **k) / 4)


def _small_prop42(**kw):
    return dataclasses.replace(ex.PROP42_PRESETS["check"], pairs=2, batch=8, steps=20, **kw)


@pytest.fixture(scope="module")
def prop42_small():
    return ex.measure_prop42(_small_prop42(kappas=(0.05, 1.0), radii=(0.5, 1.0)))


def test_prop42_control_shrunk_proof_constant_is_found_by_the_search(monkeypatch, prop42_small):
    assert ex.prop42_verdict(prop42_small).status == "pass"
    _quarter(monkeypatch, "prop_4_2_lipschitz_proof")
    r = ex.measure_prop42(_small_prop42(kappas=(0.05, 1.0), radii=(0.5, 1.0)))
    assert r.search.ratio > 1.0
    assert ex.prop42_verdict(r).status == "fail"


def test_prop42_control_shrunk_output_bound_is_found_by_the_search(monkeypatch):
    _quarter(monkeypatch, "prop_4_2_output_bound")
    r = ex.measure_prop42(_small_prop42(kappas=(0.05,), radii=(0.5,)))
    assert r.output_search.ratio > 1.0
    assert ex.prop42_verdict(r).status == "fail"


def test_prop42_erratum_record_both_halves(monkeypatch, prop42_small):
    v = ex.prop42_erratum_verdict(prop42_small)
    assert v.status == "pass" and v.kind == "erratum"
    assert prop42_small.printed_search.ratio > 1.0  # the search finds the printed form false by itself
    # a printed constant that holds (the proof's): the record must fail
    with monkeypatch.context() as m:
        m.setattr(G, "prop_4_2_lipschitz_printed", G.prop_4_2_lipschitz_proof)
        holds = ex.measure_prop42(_small_prop42(kappas=(0.05, 1.0), radii=(0.5, 1.0)))
    assert ex.prop42_printed_verdict(holds).status == "pass"
    assert ex.prop42_erratum_verdict(holds).status == "fail"
    # the corrected form failing (the proof's constant divided by 4): the record must fail
    _quarter(monkeypatch, "prop_4_2_lipschitz_proof")
    broken = ex.measure_prop42(_small_prop42(kappas=(0.05, 1.0), radii=(0.5, 1.0)))
    assert ex.prop42_verdict(broken).status == "fail"
    assert ex.prop42_erratum_verdict(broken).status == "fail"


def _small_prop43(**kw):
    return dataclasses.replace(ex.PROP43_PRESETS["check"], trials=30, **kw)


def test_prop43_control_coarse_centres_fail():
    r = ex.measure_prop43(_small_prop43(eps_factor=4.0))
    assert r.distance_search.ratio > 1.0
    assert ex.prop43_verdict(r).status == "fail"


def test_prop43_control_shrunk_covering_bound_is_found_by_the_search(monkeypatch):
    _quarter(monkeypatch, "prop_4_3_log_covering")
    r = ex.measure_prop43(_small_prop43(ms=(1,)))
    assert r.search.ratio > 1.0
    assert ex.prop43_verdict(r).status == "fail"


def _small_prop46(**kw):
    return dataclasses.replace(ex.PROP46_PRESETS["check"], ds=(2,), radii=(1.0,), pairs=1, batch=8, **kw)


def test_prop46_control_unscaled_resnet_fails():
    # residual scaling 1/sqrt(L) instead of 1/L: the bound is no longer uniform in the depth
    cfg = dataclasses.replace(_small_prop46(), scaling=0.5, radii=(2.0,), tied=True)
    r = ex.measure_prop46(cfg)
    assert r.output_search.ratio > 1.0
    assert ex.prop46_verdict(r).status == "fail"


@pytest.mark.parametrize("name, attr", [("prop_4_6_lipschitz", "search"), ("prop_4_6_output_bound", "output_search")])
def test_prop46_control_shrunk_bound_is_found_by_the_search(monkeypatch, name, attr):
    _quarter(monkeypatch, name)
    r = ex.measure_prop46(_small_prop46())
    assert getattr(r, attr).ratio > 1.0
    assert ex.prop46_verdict(r).status == "fail"


def test_prop47_control_broken_isometry_fails(monkeypatch):
    cfg = dataclasses.replace(ex.PROP47_PRESETS["check"], depths=(10,))
    assert ex.prop47_verdict(ex.measure_prop47(cfg)).status == "pass"
    original = G.resnet_to_path
    with monkeypatch.context() as m:  # phi scaled by 1 + 1e-3: neither an isometry nor Lipschitz-preserving
        m.setattr(G, "resnet_to_path", lambda W, *a: (lambda tp: (tp[0], tp[1] * (1 + 1e-3)))(original(W, *a)))
        r = ex.measure_prop47(cfg)
    assert r.norm_error > 1e-12 and r.lipschitz_error > 1e-12
    assert ex.prop47_verdict(r).status == "fail"
    with monkeypatch.context() as m:  # phi shifted by a constant: affine, not linear
        m.setattr(G, "resnet_to_path", lambda W, *a: (lambda tp: (tp[0], tp[1] + 1e-3))(original(W, *a)))
        r = ex.measure_prop47(cfg)
    assert r.linearity_error > 1e-12
    assert ex.prop47_verdict(r).status == "fail"


def test_cor49_control_halved_constant_is_found_by_the_search_only(monkeypatch):
    _quarter(monkeypatch, "corollary_4_9_complexity_bound")
    r = ex.measure_cor49(dataclasses.replace(ex.COR49_PRESETS["check"], depths=(10, 100), draws=2))
    assert r.ratio <= 1.0 < r.search.ratio  # the random draws miss it, the search does not
    assert ex.cor49_verdict(r).status == "fail"


def _small_kw(**kw):
    return dataclasses.replace(ex.KW_RATES_PRESETS["check"], depths=(50, 100, 200), draws=1, **kw)


def test_kw_rates_control_swapped_laws_fail(monkeypatch):
    iid, smooth = G.iid_weights, G.smooth_weights
    with monkeypatch.context() as m:  # the "smooth" draws are i.i.d.: K_W grows like L
        m.setattr(G, "smooth_weights", lambda L, d, bandwidth=0.1, rng=None: iid(L, d, rng))
        r = ex.measure_kw_rates(_small_kw())
    assert r.smooth_slope > 0.2 and ex.kw_rates_verdict(r).status == "fail"
    with monkeypatch.context() as m:  # the "i.i.d." draws are smooth: K_W stays O(1)
        m.setattr(G, "iid_weights", lambda L, d, rng=None: smooth(L, d, 0.1, rng))
        r = ex.measure_kw_rates(_small_kw())
    assert r.iid_slope < 0.8 and ex.kw_rates_verdict(r).status == "fail"


@pytest.mark.parametrize("power", [0.5, -0.5])
def test_kw_rates_control_misscaled_lipschitz_constant_fails(monkeypatch, power):
    original = G.weight_lipschitz
    monkeypatch.setattr(G, "weight_lipschitz", lambda W: original(W) * W.shape[0] ** power)  # K_W L^power
    r = ex.measure_kw_rates(_small_kw())
    assert ex.kw_rates_verdict(r).status == "fail"
    if power > 0:
        assert r.smooth_slope > 0.2 and r.iid_slope > 1.3
    else:
        assert r.smooth_slope < -0.2 and r.iid_slope < 0.8


def test_thm48_control_dropped_terms_are_found_by_the_search(monkeypatch):
    # (4.13) without its log term and its confidence term: B d^2 sqrt(K_W) / n^(1/4) alone, small as K_W -> 0
    monkeypatch.setattr(G, "theorem_4_8_gap", lambda n, delta, d, R_W, K_W, B: B * d * d * math.sqrt(K_W) / n ** 0.25)
    r = ex.measure_thm48(dataclasses.replace(ex.THM48_PRESETS["check"], ns=(100,), members=10, mc=5000, seeds=3))
    assert r.search.ratio > 1.0
    assert ex.thm48_verdict(r).status == "fail"


def test_thm48_control_squared_rates_are_found_by_the_search(monkeypatch):
    # the rates n^(-1/2) and n^(-1/4) of (4.13) squared: the search must reach the large n where this fails
    def squared(n, delta, d, R_W, K_W, B):
        return B * ((d + 1) ** 2 * math.log(R_W * d * n) / n + d ** 4 * K_W / n ** 0.5 + math.log(1 / delta) / n)

    monkeypatch.setattr(G, "theorem_4_8_gap", squared)
    r = ex.measure_thm48(dataclasses.replace(ex.THM48_PRESETS["check"], ns=(100,), members=10, mc=5000, seeds=3))
    assert r.search.ratio > 1.0 and r.search.instance["n"] > 100
    assert ex.thm48_verdict(r).status == "fail"


def test_fig41_control_reversed_penalty_fails(monkeypatch):
    from theory.generalization import _training

    original = _training._penalty
    monkeypatch.setattr(_training, "_penalty", lambda W: tuple(-v for v in original(W)))  # rewards the differences
    r = ex.measure_fig41(dataclasses.replace(ex.FIG41_PRESETS["check"], seeds=(0,), repeats=1, epochs=8))
    v = ex.fig41_verdict(r)
    assert v.measured["min_max_diff_drop"] < 0
    assert v.status == "fail"


def _small_gap(preset, **kw):
    return dataclasses.replace(preset, ns=(100,), members=5, mc=2000, seeds=2, **kw)


def test_cor45_control_squared_rates_are_found_by_the_search(monkeypatch):
    # the rate n^(-1/2) of Cor. 4.5 squared: the search must reach the large n where this fails
    def squared(n, delta, d, R_W, B):
        return B * ((d + 1) ** 2 * math.log(R_W * d * n) / n + math.log(1 / delta) / n)

    monkeypatch.setattr(G, "corollary_4_5_gap", squared)
    r = ex.measure_cor45(_small_gap(ex.COR45_PRESETS["check"]))
    assert r.search.ratio > 1.0 and r.search.instance["n"] > 100
    assert ex.thm48_verdict(r).status == "fail"


def test_cor45_erratum_record_both_halves(monkeypatch):
    r = ex.measure_cor45(_small_gap(ex.COR45_PRESETS["check"]))
    v = ex.printed_gap_erratum_verdict(r)
    assert v.status == "pass" and v.kind == "erratum"
    assert r.printed_search.ratio > 1.0 and r.printed_search.instance["K_sigma"] < 0.1
    # a printed constant that holds (the corrected one): the record must fail
    monkeypatch.setattr(G, "corollary_4_5_constant", _search.cor45_corrected_constant)
    holds = ex.measure_cor45(_small_gap(ex.COR45_PRESETS["check"]))
    assert ex.printed_gap_verdict(holds).status == "pass"
    assert ex.printed_gap_erratum_verdict(holds).status == "fail"


def test_golowich_control_raised_lower_bound_is_found_by_the_search(monkeypatch):
    r = ex.measure_golowich(ex.GOLOWICH_PRESETS["check"])
    assert ex.golowich_verdict(r).status == "pass"
    original = _search.golowich_lower
    monkeypatch.setattr(_search, "golowich_lower", lambda d, R, L: original(d, R, L) + math.log(4.0))  # 4 x (...)^L
    r = ex.measure_golowich(ex.GOLOWICH_PRESETS["check"])
    assert r.margin < 0 and r.search.ratio > 1.0
    assert ex.golowich_verdict(r).status == "fail"


def test_golowich_control_spectral_instead_of_frobenius_fails(monkeypatch):
    # the product of spectral norms does not grow like d^(L/2): the slope is about 0, not log(d)/2
    def spectral(W):
        L, d, _ = W.shape
        return float(np.log(np.linalg.norm(np.eye(d)[None] + W / L, ord=2, axis=(1, 2))).sum())

    monkeypatch.setattr(_search, "frobenius_log_product", spectral)
    r = ex.measure_golowich(ex.GOLOWICH_PRESETS["check"])
    assert abs(r.slope) < 0.1
    assert ex.golowich_verdict(r).status == "fail"


def test_thm44_control_dropped_terms_are_found_by_the_search(monkeypatch):
    # Thm 4.4 without its log term and its confidence term: B m sqrt(K_Theta) / n^(1/4) alone, small as K_Theta -> 0
    monkeypatch.setattr(G, "theorem_4_4_gap", lambda n, delta, m, K, R, B: B * m * math.sqrt(K) / n ** 0.25)
    r = ex.measure_thm44(_small_gap(ex.THM44_PRESETS["check"]))
    assert r.search.ratio > 1.0
    assert ex.thm48_verdict(r).status == "fail"
    assert ex.printed_gap_erratum_verdict(r).status == "fail"  # the corrected form fails too: no erratum


def test_thm44_erratum_record_both_halves(monkeypatch):
    r = ex.measure_thm44(_small_gap(ex.THM44_PRESETS["check"]))
    v = ex.printed_gap_erratum_verdict(r)
    assert v.status == "pass" and v.kind == "erratum"
    assert r.printed_search.ratio > 1.0 and r.printed_search.instance["K_f"] < 0.1
    # a printed constant that holds (the corrected one): the record must fail
    monkeypatch.setattr(G, "theorem_4_4_constant", _search.thm44_corrected_constant)
    holds = ex.measure_thm44(_small_gap(ex.THM44_PRESETS["check"]))
    assert ex.printed_gap_verdict(holds).status == "pass"
    assert ex.printed_gap_erratum_verdict(holds).status == "fail"


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
    with pytest.raises(ValueError, match="`search_budget` of Thm44Config"):
        ex.Thm44Config(search_budget=0)


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
        "gen-bounds/cor-4.5/erratum": ("gen_bounds.cor45", ex.printed_gap_erratum_verdict),
        "gen-bounds/sec-4.4.2": ("gen_bounds.golowich", ex.golowich_verdict),
        "gen-bounds/thm-4.4": ("gen_bounds.thm44", ex.thm48_verdict),
        "gen-bounds/thm-4.4/erratum": ("gen_bounds.thm44", ex.printed_gap_erratum_verdict),
    }
    for claim_id, (name, verdict) in expected.items():
        exp = experiment_of(claim_id)
        assert exp.name == name, claim_id
        assert exp.verdict_for(claim_id) is verdict, claim_id
