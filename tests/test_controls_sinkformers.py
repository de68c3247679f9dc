"""Negative controls of the checks in checks/test_sinkformers.py: each reruns the experiment with a setting that breaks
the claim (a hypothesis violated, a kernel broken by monkeypatching) and asserts that its verdict fails. They import
theory.experiments.sinkformers, never checks/."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from theory.experiments import sinkformers as ex


def _fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_prop51_rejects_softmax_as_invariant():
    """The SoftMax (n_iter=1) in place of Sinkhorn's limit: column shifts change it."""
    cfg = dataclasses.replace(ex.PROP51_PRESETS["check"], n_iter=1, draws=5)
    _fails(ex.prop51_verdict(ex.prop51(cfg)))


def test_prop51_rejects_unconverged_sinkhorn():
    """Three Sinkhorn normalisations are not the limit: not invariant either."""
    cfg = dataclasses.replace(ex.PROP51_PRESETS["check"], n_iter=3, draws=5)
    _fails(ex.prop51_verdict(ex.prop51(cfg)))


def test_equivariance_rejects_positional_bias():
    """A fixed position-dependent bias in the logits breaks permutation equivariance."""
    cfg = dataclasses.replace(ex.EQUIVARIANCE_PRESETS["check"], bias_scale=0.5, draws=3)
    _fails(ex.equivariance_verdict(ex.equivariance(cfg)))


def test_prop53_rejects_wrong_value_sign():
    """W_V = +W_Q^T W_K (Assumption 5.2 with the wrong sign): T = +n∇E and the energy increases."""
    cfg = dataclasses.replace(ex.PROP53_PRESETS["check"], value_sign=1.0, draws=1, flow_steps=20)
    _fails(ex.prop53_verdict(ex.prop53(cfg)))


def test_prop53_rejects_non_symmetric_value():
    """A W_V that is not -W_Q^T W_K: the fields are not -n∇E."""
    cfg = dataclasses.replace(ex.PROP53_PRESETS["check"], symmetric_value=False, draws=1, flow_steps=5)
    result = ex.prop53(cfg)
    assert min(result.grad_rel.values()) > 1e-3
    _fails(ex.prop53_verdict(result))


def test_prop54_rejects_non_symmetric_value():
    """Assumption 5.2 broken (W_V non-symmetric): the K^∞ Jacobian is no Hessian, not symmetric."""
    cfg = dataclasses.replace(ex.PROP54_PRESETS["check"], symmetric_value=False, draws=2)
    result = ex.prop54(cfg)
    assert result.asymmetry["sinkhorn"] > 1e-3
    _fails(ex.prop54_verdict(result))


def test_prop54_rejects_softmax_as_symmetric(monkeypatch):
    """A broken attention that computes the row SoftMax where Sinkhorn's limit is asked for: the K^∞ Jacobian is
    then the SoftMax one, not symmetric, and the verdict must fail."""
    orig = ex.attention
    monkeypatch.setattr(ex, "attention", lambda X, WQ, WK, WV, kind="sinkhorn", **kw:
                        orig(X, WQ, WK, WV, "softmax" if kind == "sinkhorn" else kind, **kw))
    r = ex.prop54(dataclasses.replace(ex.PROP54_PRESETS["check"], draws=2))
    assert r.asymmetry["sinkhorn"] >= r.asymmetry["softmax"] > 1e-2  # max over the draws against their min
    _fails(ex.prop54_verdict(r))


def test_presets_pass_small():
    """The same experiments as stated pass on small draws (the controls above fail for the broken setting)."""
    assert ex.prop51_verdict(ex.prop51(dataclasses.replace(ex.PROP51_PRESETS["check"], draws=5))).passed
    assert ex.prop53_verdict(ex.prop53(dataclasses.replace(ex.PROP53_PRESETS["check"], draws=1, flow_steps=20))).passed


@pytest.mark.parametrize("cls, kw, name", [
    (ex.InvarianceConfig, {"n": 1}, "n"), (ex.InvarianceConfig, {"n_iter": 0}, "n_iter"),
    (ex.InvarianceConfig, {"shift_scale": -1.0}, "shift_scale"),
    (ex.EquivarianceConfig, {"bias_scale": -0.1}, "bias_scale"), (ex.EquivarianceConfig, {"draws": 0}, "draws"),
    (ex.GradientFlowConfig, {"value_sign": 0.5}, "value_sign"), (ex.GradientFlowConfig, {"fd_step": 0.0}, "fd_step"),
    (ex.GradientFlowConfig, {"flow_steps": 0}, "flow_steps"),
])
def test_configs_validate(cls, kw, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        cls(**kw)


@pytest.mark.parametrize("cls, kw, name", [
    (ex.EquivarianceConfig, {"n": 8.0}, "n"), (ex.GradientFlowConfig, {"symmetric_value": 1}, "symmetric_value"),
    (ex.DiffusionConfig, {"eps_grid": (0.4, "0.2", 0.1)}, "eps_grid"), (ex.NonlocalConfig, {"points": True}, "points"),
    (ex.NormalisationsConfig, {"noise": "0.5"}, "noise"), (ex.NormalisationConfig, {"sizes": 4}, "sizes"),
])
def test_configs_refuse_wrong_kinds_with_type_errors(cls, kw, name):
    with pytest.raises(TypeError, match=f"`{name}`"):
        cls(**kw)


def test_rules_of_the_configs():
    """The grids of bandwidths decrease strictly; fig. 5.1's n is even; lists become tuples."""
    with pytest.raises(ValueError, match="`eps_grid` of GeneralDiffusionConfig"):
        ex.GeneralDiffusionConfig(eps_grid=(0.4, 0.2, 0.2))
    with pytest.raises(ValueError, match="`n` of NormalisationsConfig must be even"):
        ex.NormalisationsConfig(n=7)
    assert ex.DiffusionConfig(eps_grid=[0.4, 0.2, 0.1]).eps_grid == (0.4, 0.2, 0.1)


def test_erratum_records_keep_their_halves():
    r = _thm55_small()
    record = ex.thm55_erratum(r)
    assert record.kind == "erratum" and [p.kind for p in record.parts] == ["rate", "rate"]
    assert [p.status for p in record.parts] == ["fail", "pass"] and record.parts[1] == ex.thm55_rate_verdict(r)


def _thm55_small():
    return ex.thm55(ex.DiffusionConfig(n=100, eps_grid=(0.4, 0.2, 0.1, 0.05, 0.025)))


def _scaled_centred_field(monkeypatch, factor):
    """A broken Sinkformer whose centred field T - W_V x/ε is multiplied by ``factor`` (its limit too)."""
    orig = ex.attention

    def broken(X, WQ, WK, WV, kind="sinkhorn", **kw):
        T = orig(X, WQ, WK, WV, kind, **kw)
        first = np.asarray(X) @ np.asarray(WV).T  # W_V x / ε: the value matrix is passed divided by ε
        return first + factor * (T - first)

    monkeypatch.setattr(ex, "attention", broken)


def test_thm55_record_fails_when_printed_form_holds(monkeypatch):
    """A field whose centred part is doubled converges at O(ε) to the printed limit 1/σ² (twice the true one): the
    erratum record must fail."""
    _scaled_centred_field(monkeypatch, 2.0)
    r = _thm55_small()
    assert abs(r.slopes[-1] - r.printed_limit) < 0.05
    _fails(ex.thm55_verdict(r))


def test_thm55_record_fails_when_corrected_form_fails(monkeypatch):
    """A centred field at 0.6 of the true one (limit 0.3/σ², neither form): the corrected half fails, so does the
    record."""
    _scaled_centred_field(monkeypatch, 0.6)
    r = _thm55_small()
    _fails(ex.thm55_rate_verdict(r))
    _fails(ex.thm55_verdict(r))


def test_thm55_passes_on_small_preset():
    """The measured halves on the real Sinkformer: printed fails, corrected holds (the record passes)."""
    assert ex.thm55_verdict(_thm55_small()).passed


def test_thm55_config_validates():
    with pytest.raises(ValueError, match="`eps_grid`"):
        ex.DiffusionConfig(eps_grid=(0.1, 0.2, 0.05))
    with pytest.raises(ValueError, match="`a`"):
        ex.DiffusionConfig(a=0.0)


def _prop56_small(**kw):
    return ex.prop56(ex.NonlocalConfig(eps_grid=(0.2, 0.1, 0.05, 0.025, 0.0125), spacing=0.06, half_width=5.0, **kw))


def test_prop56_record_fails_when_printed_form_holds():
    """A symmetric W_K: W_K^{-1} = W_K^{-T}, the printed form holds, so the erratum record must fail."""
    r = _prop56_small(symmetric_key=True)
    assert r.key_asymmetry == 0.0
    _fails(ex.prop56_verdict(r))


def test_prop56_record_fails_when_corrected_form_fails(monkeypatch):
    """A broken L2 field whose centred part is 0.6 of the true one: the errors of the corrected form stall (no O(ε)
    convergence), so the record must fail."""
    import theory.sinkhorn as sk

    orig = sk.l2_softmax_field

    def broken(x, nodes, weights, WQ, WK, WV, eps, *a, **kw):
        first = -np.asarray(x) @ (np.asarray(WQ).T @ np.asarray(WQ)).T / eps
        return first + 0.6 * (orig(x, nodes, weights, WQ, WK, WV, eps, *a, **kw) - first)

    monkeypatch.setattr(sk, "l2_softmax_field", broken)
    r = _prop56_small()
    _fails(ex.prop56_rate_verdict(r))
    _fails(ex.prop56_verdict(r))


def test_prop56_passes_on_small_preset():
    assert ex.prop56_verdict(_prop56_small()).passed


def test_prop56_config_validates():
    with pytest.raises(ValueError, match="`spacing`"):
        ex.NonlocalConfig(spacing=1e-4)
    with pytest.raises(ValueError, match="`points`"):
        ex.NonlocalConfig(points=0)


def test_corrected_rate_records_reject_printed_limits():
    """The rate records of Thm. 5.5 and Prop. 5.6 (corrected forms) judge the fit they are given: fed the printed
    limits' errors (which do not decrease), their verdict fails."""
    from theory.claims import rate_verdict

    r55 = _thm55_small()
    assert rate_verdict(r55.fit_corrected, ex.THM55_RATE).passed
    _fails(rate_verdict(r55.fit_printed, ex.THM55_RATE))
    r56 = _prop56_small()
    assert rate_verdict(r56.fit_corrected, ex.PROP56_RATE).passed
    _fails(rate_verdict(r56.fit_printed, ex.PROP56_RATE))


def test_normalisation_record_passes_small():
    assert ex.normalisation_verdict(ex.normalisation(ex.NormalisationConfig(sizes=(3, 5)))).passed


def test_normalisation_record_fails_when_printed_form_holds(monkeypatch):
    """As if the printed factors were right: Sinkhorn's matrix returned as n K^∞ (so k^p = K^p and the K^∞ field
    (1/n) Σ K V is the gradient) and the energy F^0 multiplied by n (so Σ K^0 V is its gradient): the printed form
    holds, and the record must fail."""
    orig_sinkhorn, orig_energy = ex.sinkhorn, ex.energy
    monkeypatch.setattr(ex, "sinkhorn", lambda C, *a, **kw: np.asarray(C).shape[0] * orig_sinkhorn(C, *a, **kw))
    monkeypatch.setattr(ex, "energy", lambda Y, WQ, WK, kind, **kw: orig_energy(Y, WQ, WK, kind, **kw)
                        * (len(Y) if kind == "kernel" else 1.0))
    r = ex.normalisation(ex.NormalisationConfig(sizes=(3, 5)))
    _fails(ex.normalisation_verdict(r))


def test_normalisation_record_fails_when_corrected_form_fails(monkeypatch):
    """Energies doubled (a broken energy): neither normalisation of the fields is -∇_W F, the corrected half fails,
    so the record fails."""
    orig_energy = ex.energy
    monkeypatch.setattr(ex, "energy", lambda *a, **kw: 2.0 * orig_energy(*a, **kw))
    _fails(ex.normalisation_verdict(ex.normalisation(ex.NormalisationConfig(sizes=(3, 5)))))


def test_normalisation_config_validates():
    with pytest.raises(ValueError, match="`sizes`"):
        ex.NormalisationConfig(sizes=(1, 4))
    with pytest.raises(ValueError, match="`sizes`"):
        ex.NormalisationConfig(sizes=())


def test_sinkformers_experiments_registered():
    from theory.experiments import experiment, experiments

    names = {n for n in experiments() if n.startswith("sinkformers.")}
    assert names == {f"sinkformers.{n}" for n in ("prop51", "equivariance", "prop53", "prop54", "thm55_erratum",
                                                    "prop56_erratum", "normalisation_erratum", "thm55_general", "fig51",
                                                    "thm55_densities",
                                                    # the document's figures and tables (sinkformers.training)
                                                    "vit_digits", "vit_mnist", "vit_cats_dogs", "patch_digits",
                                                    "patch_mnist", "one_patch", "modelnet", "modelnet_pct", "imdb", "iwslt")}
    for name in names:
        exp = experiment(name)
        assert {"check", "paper"} <= set(exp.presets)
        assert all(c.startswith("sinkformers/") for c in exp.claims)
    exp = experiment("sinkformers.prop51")
    assert exp.verdict(exp.run(draws=2)).passed


def test_thm55_general_rejects_softmax_and_wrong_limits():
    """The row SoftMax of the dot-product logits in place of Sinkhorn: no such limits; and, with Sinkhorn, the
    printed factor 1 and the swapped order S⁻¹W_V are rejected by the same rate predicate."""
    from theory.claims import rate_verdict

    cfg = dataclasses.replace(ex.GENERAL_DIFFUSION_PRESETS["check"], n_axis=12, eps_grid=(0.4, 0.2, 0.1))
    bad = ex.thm55_general(dataclasses.replace(cfg, kind="softmax"))
    _fails(ex.thm55_general_verdict(bad))
    _fails(ex.first_order_verdict(bad))
    good = ex.thm55_general(cfg)
    _fails(rate_verdict(good.fit_printed, ex.GENERAL_DIFFUSION_RATE, grid_label="ε"))
    _fails(rate_verdict(good.fit_swapped, ex.GENERAL_DIFFUSION_RATE, grid_label="ε"))


def test_first_order_rejects_l2_field_outside_its_regime():
    """At bandwidths 20 times larger the L2 field is not yet in its O(ε) regime: the rate predicate rejects it."""
    cfg = dataclasses.replace(ex.GENERAL_DIFFUSION_PRESETS["check"], n_axis=12, l2_grid=100, l2_eps_scale=1.0,
                              eps_grid=(0.4, 0.2, 0.1))
    _fails(ex.first_order_verdict(ex.thm55_general(cfg)))


@pytest.mark.parametrize("kwargs", [{"n_axis": 4}, {"eps_grid": (0.1, 0.2, 0.4)}, {"kind": "kernel"},
                                    {"l2_eps_scale": 0.0}, {"window": -1.0}])
def test_general_diffusion_config_refuses_bad_fields(kwargs):
    with pytest.raises(ValueError, match="`" + next(iter(kwargs)) + "`"):
        ex.GeneralDiffusionConfig(**kwargs)


@pytest.mark.parametrize("kwargs", [{"gap": 0.0}, {"n_iter": 3}, {"noise": 0.05}])
def test_fig51_rejects_one_cluster_unconverged_sinkhorn_and_flat_logits(kwargs):
    """One key cluster (nothing ignored), three Sinkhorn steps (not doubly stochastic), nearly equal logits (no
    dominant entry): each breaks one statement of Fig. 5.1."""
    _fails(ex.fig51_verdict(ex.fig51(dataclasses.replace(ex.FIG51_PRESETS["check"], **kwargs))))
    assert ex.fig51_verdict(ex.fig51(ex.FIG51_PRESETS["check"])).status == "pass"


def test_claims_map_to_the_verdicts_their_checks_record():
    """The rate claims share the erratum experiments' results but record their own verdicts (``theory run``)."""
    from theory.experiments import experiment_of

    expected = {"sinkformers/thm-5.5": ex.thm55_rate_verdict, "sinkformers/thm-5.5/erratum": ex.thm55_verdict,
                "sinkformers/prop-5.6": ex.prop56_rate_verdict, "sinkformers/prop-5.6/erratum": ex.prop56_verdict,
                "sinkformers/sec-5.5/first-order": ex.first_order_verdict,
                "sinkformers/thm-5.5/general": ex.thm55_general_verdict,
                "sinkformers/thm-5.5/densities": ex.thm55_densities_verdict,
                "sinkformers/prop-5.3/normalisation/erratum": ex.normalisation_verdict}
    for claim_id, verdict in expected.items():
        assert experiment_of(claim_id).verdict_for(claim_id) is verdict, claim_id
    assert experiment_of("sinkformers/thm-5.5").name == "sinkformers.thm55_erratum"
    assert experiment_of("sinkformers/sec-5.5/first-order").name == "sinkformers.thm55_general"


def _densities_small(**kw):
    return ex.thm55_densities(dataclasses.replace(ex.DENSITIES_PRESETS["check"], **kw))


def test_thm55_densities_passes_small():
    assert ex.thm55_densities_verdict(_densities_small()).passed


@pytest.mark.parametrize("kwargs", [{"limit_factor": 1.0}, {"kind": "softmax"}])
def test_thm55_densities_rejects_the_printed_limit_and_the_softmax(kwargs):
    """The printed limit -∇ρ/ρ (the errors stall at 1), or the row SoftMax in place of Sinkhorn (no such limit):
    no case converges, the record must fail."""
    _fails(ex.thm55_densities_verdict(_densities_small(**kwargs)))


def test_thm55_densities_rejects_a_first_order_field(monkeypatch):
    """A broken Sinkformer without its centred part (T = W_V x/ε): the error against -½∇ρ/ρ stays at 1."""
    monkeypatch.setattr(ex, "attention", lambda X, WQ, WK, WV, kind="sinkhorn", **kw: np.asarray(X) @ np.asarray(WV).T)
    _fails(ex.thm55_densities_verdict(_densities_small()))


@pytest.mark.parametrize("kwargs", [{"dims": (3,)}, {"densities": ("uniform",)}, {"window": 0.5}, {"n_axis": 4}])
def test_densities_config_refuses_bad_fields(kwargs):
    with pytest.raises(ValueError, match="`" + next(iter(kwargs)) + "`"):
        ex.DensitiesConfig(**kwargs)
