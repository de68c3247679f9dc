"""Negative controls of the checks in checks/test_icl_ar.py: each reruns the experiment with a setting that breaks
the claim (a hypothesis violated, a closed form or a loss broken by monkeypatching) and asserts that the verdict
fails. They import theory.experiments.icl_ar, never checks/."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import theory.icl as icl
from theory.experiments import icl_ar as ex


def _fails(verdict):
    assert verdict.status == "fail", verdict.message


# ---------------------------------------------------------------- Prop. 6.4

def test_prop64_rejects_inverse_s0():
    """With s_0 = W^-1 s_1 the construction (6.8) adds η s_1 s_0^* s_T: not one gradient step."""
    cfg = dataclasses.replace(ex.PROP64_PRESETS["check"], s0="inverse", draws=3)
    result = ex.prop64(cfg)
    assert min(result.rel_err_orthogonal, result.rel_err_unitary) > 1e-3
    _fails(ex.prop64_verdict(result))


def test_prop64_passes_small():
    assert ex.prop64_verdict(ex.prop64(dataclasses.replace(ex.PROP64_PRESETS["check"], draws=3))).passed


# ---------------------------------------------------------------- Prop. 6.5

_SMALL65 = dict(sizes=((2, 4),), starts=2, rate_tmax=(100, 200, 400), curve_tmax=6)


def test_prop65_rejects_zero_s0():
    """With s_0 = 0 every context sum loses its t = 1 term: the exact η* is not the printed fraction."""
    result = ex.prop65(dataclasses.replace(ex.PROP65_PRESETS["check"], s0="zero", **_SMALL65))
    assert result.eta_exact != result.eta_printed
    _fails(ex.prop65_verdict(result))


def test_prop65_passes_small():
    assert ex.prop65_verdict(ex.prop65(dataclasses.replace(ex.PROP65_PRESETS["check"], **_SMALL65))).passed


def test_prop65_rejects_argmin_off_the_relations(monkeypatch):
    """A broken loss, l + 0.05 (a_2 - 0.3)^2 + 0.01: its BFGS minimiser moves a_2 towards 0.3 (off the relations) and
    its minimum away from the exact l*, so both the relations and the BFGS gap must fail."""
    orig = icl.augmented_loss

    def tilted(a, b, d, Tmax, s0="inverse", *, return_gradient=False, **kw):
        out = orig(a, b, d, Tmax, s0, return_gradient=return_gradient, **kw)
        extra = 0.05 * (a[1] - 0.3) ** 2 + 0.01
        if not return_gradient:
            return out + extra
        L, ga, gb = out
        return L + extra, ga + np.array([0.0, 0.1 * (a[1] - 0.3), 0.0, 0.0]), gb

    monkeypatch.setattr(icl, "augmented_loss", tilted)
    r = ex.prop65(dataclasses.replace(ex.PROP65_PRESETS["check"], **_SMALL65))
    assert r.relations > ex.PROP65_TOL["relations"] and r.bfgs_gap > ex.PROP65_TOL["loss"]
    _fails(ex.prop65_verdict(r))


# ---------------------------------------------------------------- Prop. 6.8

_SMALL68 = dict(dims=(2,), lengths=(3, 4), draws=2, rational_draws=1)


def test_prop68_rejects_orthogonal_contexts():
    """The unitary closed form is not the loss of orthogonal contexts (conjugate pairs merge more monomials)."""
    result = ex.prop68(dataclasses.replace(ex.PROP68_PRESETS["check"], context="orthogonal", **_SMALL68))
    _fails(ex.prop68_verdict(result))


def test_prop68_erratum_passes_small():
    assert ex.prop68_erratum_verdict(ex.prop68(dataclasses.replace(ex.PROP68_PRESETS["check"], **_SMALL68))).passed


def test_prop68_erratum_fails_when_printed_form_holds(monkeypatch):
    """As if the exact loss were the printed form (a broken expectation, float and rational): the printed half holds,
    so the erratum record must fail."""
    monkeypatch.setattr(icl, "expected_loss", lambda C, p, context="unitary", **kw: icl.printed_quadratic_loss(C, p))

    def printed_exact(C, p, context="unitary", **kw):
        fro = sum(x * x for row in C for x in row)
        return ex._corrected_fraction(C, p) + p[-2] ** 2 * fro

    monkeypatch.setattr(icl, "expected_loss_exact", printed_exact)
    r = ex.prop68(dataclasses.replace(ex.PROP68_PRESETS["check"], **_SMALL68))
    assert r.printed_rel < 1e-12 and r.rational_printed_exact == r.n_rational
    _fails(ex.prop68_erratum_verdict(r))


def test_prop68_erratum_fails_when_corrected_form_fails(monkeypatch):
    """The corrected closed form replaced by the printed one (float), then the rational corrected form off by
    1/36: the corrected half fails each time, so the record fails; and orthogonal contexts break it too."""
    with monkeypatch.context() as m:
        m.setattr(icl, "quadratic_loss", icl.printed_quadratic_loss)
        _fails(ex.prop68_erratum_verdict(ex.prop68(dataclasses.replace(ex.PROP68_PRESETS["check"], **_SMALL68))))
    with monkeypatch.context() as m:
        orig = ex._corrected_fraction
        m.setattr(ex, "_corrected_fraction", lambda C, p: orig(C, p) + ex.Fraction(1, 36))
        r = ex.prop68(dataclasses.replace(ex.PROP68_PRESETS["check"], **_SMALL68))
        assert r.rational_exact == 0
        _fails(ex.prop68_erratum_verdict(r))
    o = ex.prop68(dataclasses.replace(ex.PROP68_PRESETS["check"], context="orthogonal", **_SMALL68))
    _fails(ex.prop68_erratum_verdict(o))


# ---------------------------------------------------------------- Lemma 6.10, Prop. 6.11

def test_lemma610_rejects_unitary_contexts():
    """With independent phases (no conjugate pairs) the rank-δ parameters do not reach zero loss."""
    result = ex.lemma610(dataclasses.replace(ex.LEMMA610_PRESETS["check"], context="unitary", deltas=(1, 2), tmax=4))
    assert all(x != "0/1" for x in result.exact_losses)
    _fails(ex.lemma610_verdict(result))


def test_prop611_rejects_full_rank_heads():
    """H = d heads: full-rank solutions exist (b = -p_(T-1)/(1 + p_(T-1)) free), the ratio is not -1/2."""
    cfg = dataclasses.replace(ex.PROP611_PRESETS["check"], heads=4, seeds=(1,), steps=20000)
    result = ex.prop611(cfg)
    assert result.final_loss[0] <= 1e-8  # zero loss is reached, at another solution
    _fails(ex.prop611_verdict(result))


def test_prop611_passes_one_seed():
    assert ex.prop611_verdict(ex.prop611(dataclasses.replace(ex.PROP611_PRESETS["check"], seeds=(2,)))).passed


# ---------------------------------------------------------------- Fig. 6.3 / Prop. 6.7

def test_fig63_rejects_orthogonal_contexts():
    """Orthogonal contexts with H = d: the learned C is not diagonal (the pair entries survive)."""
    cfg = ex.UnitaryFlowConfig(d=4, heads=4, tmax=6, seeds=(0,), init_scale=0.3, steps=20000, context="orthogonal")
    _fails(ex.fig63_verdict(ex.fig63(cfg)))


def test_fig63_rejects_short_training():
    """Ten steps of the flow: the loss is far from zero."""
    _fails(ex.fig63_verdict(ex.fig63(dataclasses.replace(ex.FIG63_PRESETS["check"], seeds=(0,), steps=10))))


def test_fig63_panels_config_is_the_two_check_presets():
    """The check of Fig. 6.3 combines the "check" presets of fig63 and prop611; its config holds both, field by
    field, and names its own fields in a refusal between fields."""
    cfg = ex.FIG63_PANELS_PRESETS["check"]
    assert cfg == ex.Fig63PanelsConfig()
    assert cfg.unitary() == ex.FIG63_PRESETS["check"] and cfg.orthogonal() == ex.PROP611_PRESETS["check"]
    paper = ex.FIG63_PANELS_PRESETS["paper"]
    assert paper.unitary() == ex.FIG63_PRESETS["paper"] and paper.orthogonal() == ex.PROP611_PRESETS["paper"]
    with pytest.raises(ValueError, match="`unitary_d` of Fig63PanelsConfig"):
        ex.Fig63PanelsConfig(unitary_d=3, unitary_context="orthogonal")


def test_fig63_panels_rejects_one_failing_panel():
    """Short training of the left panel fails the combined verdict although the right panel passes."""
    cfg = ex.Fig63PanelsConfig(unitary_seeds=(0,), unitary_steps=10, orthogonal_seeds=(2,))
    result = ex.fig63_panels(cfg)
    assert ex.prop611_verdict(result.orthogonal).passed
    verdict = ex.fig63_panels_verdict(result)
    _fails(verdict)
    assert verdict.measured == ex.fig63_combined_verdict(result.unitary, result.orthogonal).measured


# ---------------------------------------------------------------- Prop. 6.12

_SMALL612 = dict(T=12, mus=(3.0, 50.0), rate_mus=(300.0, 600.0, 1200.0, 2400.0, 4800.0))  # a rate needs 5 points


def test_prop612_rejects_printed_formula():
    """The printed H does not depend on μ: no quadrature agreement and no μ^-2 decay."""
    result = ex.prop612(ex.ConditioningConfig(formula="printed", **_SMALL612))
    _fails(ex.prop612_verdict(result))


def test_prop612_rejects_a_rate_on_too_few_points():
    """A slope fitted on 4 values of μ is not a rate the verdict accepts, however close to -2."""
    result = ex.prop612(ex.ConditioningConfig(**{**_SMALL612, "rate_mus": (300.0, 600.0, 1200.0, 2400.0)}))
    assert abs(result.fit_gap.slope + 2) < 0.05
    _fails(ex.prop612_verdict(result))


def test_prop612_erratum_passes_small():
    r = ex.prop612(ex.ConditioningConfig(**_SMALL612))
    assert ex.prop612_verdict(r).passed
    assert ex.prop612_erratum_verdict(r).passed


def test_prop612_erratum_fails_when_printed_holds(monkeypatch):
    """The printed closed form computed as the corrected one (as if the print were right): the record must fail."""
    monkeypatch.setattr(icl, "pe_hessian_printed", icl.pe_hessian)
    _fails(ex.prop612_erratum_verdict(ex.prop612(ex.ConditioningConfig(**_SMALL612))))


def test_prop612_erratum_fails_when_corrected_fails(monkeypatch):
    """The corrected closed form computed as the printed one: its entries miss the quadrature, the record fails."""
    monkeypatch.setattr(icl, "pe_hessian", icl.pe_hessian_printed)
    _fails(ex.prop612_erratum_verdict(ex.prop612(ex.ConditioningConfig(**_SMALL612))))


# ---------------------------------------------------------------- Lemma 6.6, Prop. 6.9

def test_lemma66_rejects_conjugating_the_key():
    """The other Hermitian convention (conjugate the key s_t): exponents λ^(T-1-t) instead of λ^(t-T+1)."""
    cfg = dataclasses.replace(ex.LEMMA66_PRESETS["check"], hermitian="first", draws=2)
    _fails(ex.lemma66_verdict(ex.lemma66(cfg)))


def test_prop69_rejects_saddle_start():
    """a = b = 0 (|pab - 1| = 1, outside the hypothesis) is stationary: the flow stays at loss 1."""
    cfg = dataclasses.replace(ex.PROP69_PRESETS["check"], init="saddle", draws=2, n_steps=200)
    _fails(ex.prop69_verdict(ex.prop69(cfg)))


def test_prop69_rejects_too_short_flow():
    cfg = dataclasses.replace(ex.PROP69_PRESETS["check"], draws=2, t_end=0.1, n_steps=10)
    _fails(ex.prop69_verdict(ex.prop69(cfg)))


# ---------------------------------------------------------------- Fig. 6.6

def test_fig66_rejects_well_conditioned_contexts():
    """μ in {1, 2}: H = I, gradient descent reaches p* = e_T, nothing is smoothed."""
    _fails(ex.fig66_verdict(ex.fig66(ex.PEOnlyConfig(tmax=10, mus=(1.0, 2.0)))))


def test_fig66_rejects_unfinished_training():
    result = ex.fig66(ex.PEOnlyConfig(tmax=10, mus=(50.0, 100.0), max_steps=3))
    assert max(result.final_loss) > result.stop
    _fails(ex.fig66_verdict(result))


# ---------------------------------------------------------------- configs and registry

@pytest.mark.parametrize("cls, kw, name", [
    (ex.GDStepConfig, {"T": 1}, "T"), (ex.GDStepConfig, {"s0": "one"}, "s0"), (ex.GDStepConfig, {"eta": 0.0}, "eta"),
    (ex.EtaStarConfig, {"sizes": ()}, "sizes"), (ex.EtaStarConfig, {"rate_tmax": (10, 5, 20)}, "rate_tmax"),
    (ex.QuadraticLossConfig, {"lengths": (1,)}, "lengths"),
    (ex.QuadraticLossConfig, {"context": "orthogonal", "dims": (3,)}, "dims"),
    (ex.RankDeltaConfig, {"deltas": (0,)}, "deltas"), (ex.OrthogonalFlowConfig, {"tmax": 2}, "tmax"),
    (ex.OrthogonalFlowConfig, {"lr": -1.0}, "lr"), (ex.UnitaryFlowConfig, {"context": "real"}, "context"),
    (ex.ConditioningConfig, {"mus": (0.5,)}, "mus"), (ex.ConditioningConfig, {"formula": "other"}, "formula"),
    (ex.DiagonalHeadsConfig, {"hermitian": "none"}, "hermitian"), (ex.DiagonalHeadsConfig, {"lengths": (1,)}, "lengths"),
    (ex.ScalarFlowConfig, {"t_end": 0.0}, "t_end"), (ex.ScalarFlowConfig, {"init": "outside"}, "init"),
    (ex.PEOnlyConfig, {"mus": (100.0, 50.0)}, "mus"), (ex.PEOnlyConfig, {"stop": 0.0}, "stop"),
])
def test_configs_validate(cls, kw, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        cls(**kw)


@pytest.mark.parametrize("cls, kw, name", [
    (ex.GDStepConfig, {"d": 2.0}, "d"), (ex.GDStepConfig, {"eta": "0.3"}, "eta"),
    (ex.EtaStarConfig, {"sizes": ((2.0, 4),)}, "sizes"), (ex.EtaStarConfig, {"sizes": 3}, "sizes"),
    (ex.OrthogonalFlowConfig, {"steps": True}, "steps"), (ex.PEOnlyConfig, {"mus": 50.0}, "mus"),
])
def test_configs_refuse_wrong_kinds_with_type_error(cls, kw, name):
    with pytest.raises(TypeError, match=f"`{name}`"):
        cls(**kw)


def test_icl_ar_experiments_registered():
    from theory.experiments import experiment, experiments

    names = {n for n in experiments() if n.startswith("icl_ar.")}
    assert names == {f"icl_ar.{n}" for n in ("prop64", "prop65", "prop68", "prop68_erratum", "lemma610", "prop611",
                                             "fig63", "fig63_panels", "prop612", "prop612_erratum", "lemma66", "prop69",
                                             "fig66",
                                             # the document's figures (theory.experiments.icl_ar.figures)
                                             "fig61", "fig62", "fig63_full", "fig63_local_minimum", "fig64",
                                             "fig64_synthetic", "fig65", "fig65_erratum",
                                             "fig67", "fig68", "fig69", "fig610")}
    for name in names:
        e = experiment(name)
        assert {"check", "paper"} <= set(e.presets)
        assert all(c.startswith("icl-ar/") for c in e.claims)
    e = experiment("icl_ar.lemma610")
    assert e.verdict(e.run(deltas=(1,), tmax=4, draws=2)).passed
    assert e.verdict(e.run(deltas=(1,), tmax=4, draws=2)).kind == "identity"
