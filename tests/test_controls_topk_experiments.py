"""Negative controls of the checks in checks/test_topk_experiments.py: each reruns the experiment with a setting that
breaks the claim (a reduction step dropped, a wrong prediction or operator monkeypatched in, another function) and
asserts that the verdict fails. They import theory.experiments.topk, never checks/."""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.experiments import topk as ex


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


SMALL = {"draws": 12}


def test_prop75_rejects_forward_permutation():
    """u = v_sigma instead of v_{sigma^-1}: the generic solver beats it."""
    cfg = dataclasses.replace(ex.PROP75_PRESETS["check"], variant="sigma", **SMALL)
    _assert_fails(ex.prop75_verdict(ex.prop75(cfg)))


def test_prop76_rejects_dropped_sign():
    """u = v_{sigma^-1} without sign(x)."""
    cfg = dataclasses.replace(ex.PROP76_PRESETS["check"], variant="no_sign", **SMALL)
    _assert_fails(ex.prop76_verdict(ex.prop76(cfg)))


def test_prop76_rejects_missing_truncation():
    """phi = |x| solved over the monotone cone without the truncation at 0 (the non-negative cone ignored)."""
    cfg = dataclasses.replace(ex.PROP76_PRESETS["check"], variant="no_clip", phis=("abs",), draws=20)
    result = ex.prop76(cfg)
    assert result.clip_active > 0
    _assert_fails(ex.prop76_verdict(result))


def test_prop75_passes_on_small_preset():
    """The same small draws with the reduction as stated pass (the controls above fail for the broken step)."""
    assert ex.prop75_verdict(ex.prop75(dataclasses.replace(ex.PROP75_PRESETS["check"], **SMALL))).passed


def _small_fig73():
    return ex.fig73(ex.Fig73Config(grid=21, steps=(0.02, 0.01, 0.005)))


def test_fig73_rejects_wrong_zero_square(monkeypatch):
    """The p = 2 half-width 0.5/(1 + reg) predicted for p = 4/3 (a broken prediction): the measured square differs."""
    from theory.experiments.topk import reductions

    orig = reductions.zero_halfwidth_predicted
    monkeypatch.setattr(reductions, "zero_halfwidth_predicted", lambda reg, p: orig(reg, 2.0))
    _assert_fails(ex.fig73_verdict(_small_fig73()))


def _swapped_fig73_op(monkeypatch, target, source):
    """A broken Fig. 7.3: the operator drawn under label ``target`` is the one of ``source``."""
    from theory.experiments.topk import reductions

    orig = reductions._fig73_ops

    def broken(config):
        ops, ps = orig(config)
        labels = list(ops)
        ops[labels[target]] = ops[labels[source]]
        return ops, ps

    monkeypatch.setattr(reductions, "_fig73_ops", broken)


def test_fig73_rejects_discontinuous_map_as_relaxed(monkeypatch):
    """The hard map drawn as p = 2's relaxed map: its modulus of continuity does not vanish (slope 0, not 1)."""
    _swapped_fig73_op(monkeypatch, 1, 0)
    _assert_fails(ex.fig73_verdict(_small_fig73()))


def test_fig73_rejects_kinked_map_as_smooth(monkeypatch):
    """p = 2's map (kinks) drawn as p = 4/3's: the jump of its difference quotient does not vanish."""
    _swapped_fig73_op(monkeypatch, 2, 1)
    _assert_fails(ex.fig73_verdict(_small_fig73()))


def test_fig73_passes_small():
    assert ex.fig73_verdict(_small_fig73()).passed


def test_fig78_rejects_naive_entry_law(monkeypatch):
    """The per-coordinate law h^(q-1) = h^(1/(p-1)) predicted for p > 2 too: p = 3 and 4 enter linearly."""
    from theory.experiments.topk import reductions

    cfg = ex.Fig78Config(ps=(3.0, 4.0), curve_points=11)
    assert ex.fig78_verdict(ex.fig78(cfg)).passed
    monkeypatch.setattr(reductions, "fig78_entry_exponent", lambda p: 1.0 / (p - 1.0))
    _assert_fails(ex.fig78_verdict(ex.fig78(cfg)))


def test_fig78_steps_follow_the_law_at_every_p():
    """The steps of the entry law: increasing, inside h_range, and at the depths of delta_range by the predicted
    law at the domain's ends and across p = 2 (where the law turns linear). Cut by the power law h = λ δ^(p-1)
    at p = 5 instead, the steps fell to 6e-17, below float64's resolution near s = 0.4, and the fitted
    exponent read 0.77."""
    from theory.experiments.topk import reductions

    cfg = ex.Fig78Config(ps=(1.2, 1.99, 2.0, 5.0), curve_points=11)
    for p in cfg.ps:
        h = reductions.fig78_steps(cfg, p)
        assert h.size == cfg.n_steps and np.all(np.diff(h) > 0), (p, h)
        assert cfg.h_range[0] <= h[0] and h[-1] <= cfg.h_range[1] * (1 + 1e-12), (p, h)
        depth = (h / cfg.reg) ** (1.0 / (p - 1.0)) if p < 2 else h * reductions.fig78_kink_slope(cfg.reg, p)
        assert cfg.delta_range[0] * (1 - 1e-12) <= depth[0] and depth[-1] <= cfg.delta_range[1] * (1 + 1e-12), p
    assert ex.fig78_verdict(ex.fig78(ex.Fig78Config(ps=(5.0,), curve_points=11))).passed


def test_fig78_steps_reject_empty_ranges():
    import pytest

    from theory.experiments.topk import reductions

    cfg = ex.Fig78Config(h_range=(1e-10, 1e-9), delta_range=(1e-3, 1e-2))
    with pytest.raises(ValueError, match="h_range"):
        reductions.fig78_steps(cfg, 3.0)


def test_fig78_rejects_p_dependent_thresholds(monkeypatch):
    """A broken mask whose thresholds depend on p (the operator of reg^(p-1) in place of reg): the exact-1 interval
    ends at 1 - reg^(p-1), not at the predicted 1 - reg."""
    from theory.experiments.topk import reductions

    orig = reductions._fig78_value
    monkeypatch.setattr(reductions, "_fig78_value", lambda s, reg, p: orig(s, reg ** (p - 1.0), p))
    # p < 2: reg^(p-1) > reg, so the exact-1 interval ends before the predicted 1 - reg
    _assert_fails(ex.fig78_verdict(ex.fig78(ex.Fig78Config(ps=(1.25, 1.5), curve_points=11))))


def _shannon(y, k):
    y = np.asarray(y, dtype=float)
    return float(np.sum(np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)))


def test_app7b1_rejects_plain_negentropy():
    """sum y log y (k ignored) against the k-support negentropy's references."""
    _assert_fails(ex.app7b1_verdict(ex.app7b1(ex.App7B1Config(draws=10), value=_shannon)))


def test_fig79_rejects_plain_negentropy():
    """The negentropy has no flat minimum: the grid mismatch with {max y <= 1/2} is large."""
    result = ex.fig79(ex.Fig79Config(resolution=20), value=lambda y, k: _shannon(y, k) if k != 3 else _shannon(y, 3))
    assert result.flat_mismatch > 0
    _assert_fails(ex.fig79_verdict(result))


# --------------------------------------------------------------------------- the registry and the experiments' own verdicts

from theory.experiments import experiment, experiments  # noqa: E402
from theory.topk import dykstra_printed, topk_mask  # noqa: E402


def test_every_topk_claim_is_registered():
    """The 43 claims of the four check modules (35, and the 8 of the figures in checks/test_topk_figures.py) each
    have a registered experiment with "check" and "paper"."""
    # the registry's own tests register toys under "topk." too: only the experiments of theory.experiments.topk
    names = [n for n in experiments() if n.startswith("topk.")
             and experiment(n).measure.__module__.startswith("theory.experiments.topk")]
    claims = {c for n in names for c in experiment(n).claims}
    assert len(claims) == 43, sorted(claims)
    for n in names:
        e = experiment(n)
        assert {"check", "paper"} <= set(e.presets) and e.verdict is not None and e.summary is not None


def test_configs_reject_bad_fields():
    import pytest

    for bad in (lambda: ex.JacobianConfig(draws=0), lambda: ex.Prop72Config(n_range=(3, 12)),
                lambda: ex.RegimeConfig(side="soft"), lambda: ex.Fig71Config(p_smooth=2.5),
                lambda: ex.LmoConfig(n=9), lambda: ex.Prop74Config(shapes=((3, 3),)), lambda: ex.PavConfig(draws=-1),
                lambda: ex.Alg77RateConfig(k=400), lambda: ex.Alg77Config(regs=(0.0,)),
                lambda: ex.MagnitudeBoundConfig(ps=(1.0,)), lambda: ex.HardPConfig(ns=()),
                lambda: ex.JacobianPConfig(ps=(2.0,)), lambda: ex.SparsityConfig(n_range=(2, 5)),
                lambda: ex.PDomainConfig(small_ps=(1.5,)), lambda: ex.FyConfig(log10_reg=(1.0, -1.0)),
                lambda: ex.FyErratumConfig(shifts=(0.0,)),
                lambda: ex.LpConfig(n_range=(1, 5)), lambda: ex.SoftConfig(n_range=(2, 9)),
                lambda: ex.DualDykstraConfig(cases=((3, 3, 1.0),)), lambda: ex.Fig71Config(probe=(2.0,)),
                lambda: ex.ReductionConfig(phis=("identity", "abs")), lambda: ex.Fig73Config(grid=22),
                lambda: ex.Fig79Config(resolution=11), lambda: ex.Fig71Config(steps=(0.01, 0.02, 0.04))):
        with pytest.raises(ValueError):
            bad()
    # a value of the wrong kind is a TypeError (a bool or a float for an integer, a string for a number)
    for bad in (lambda: ex.DualityConfig(draws=True), lambda: ex.LmoConfig(n=5.0), lambda: ex.Fig71Config(reg="0.6"),
                lambda: ex.Prop74Config(shapes=((3.0, 1),)), lambda: ex.JacobianConfig(n_range=(3.0, 8.0))):
        with pytest.raises(TypeError):
            bad()


def test_regime_verdict_rejects_shifted_threshold():
    """An operator whose hard regime extends to twice the threshold fails the experiment's verdict."""
    cfg = ex.REGIME_PRESETS["hard"]["check"]
    assert ex.regime_verdict(ex.regimes(cfg)).passed
    _assert_fails(ex.regime_verdict(ex.regimes(cfg, op=lambda x, k, r: topk_mask(x, k, 0.5 * r))))


def test_fig71_verdict_rejects_hard_curve():
    """The unregularised mask (reg -> 0): jumps, not four kinks."""
    _assert_fails(ex.fig71_verdict(ex.fig71(ex.FIG71_PRESETS["check"], op=lambda x, k, r: topk_mask(x, k, 1e-9))))


def test_app7a8_rejects_printed_iterates():
    """The printed Algorithm 7.7's iterates are not Dykstra's."""
    cfg = dataclasses.replace(ex.APP7A8_PRESETS["check"], cases=((12, 3, 1.5),))
    _assert_fails(ex.app7a8_verdict(ex.app7a8(cfg, solver=dykstra_printed)))


def test_alg77_erratum_record_fails_with_printed_solver_as_correction():
    cfg = dataclasses.replace(ex.ALG77_PRESETS["check"], shapes=((8, 2),))
    assert ex.erratum_outcome_verdict(ex.alg77_erratum(cfg)).passed
    _assert_fails(ex.erratum_outcome_verdict(ex.alg77_erratum(cfg, corrected_solver=dykstra_printed)))


def test_fy_erratum_record_fails_when_correction_is_the_printed_loss():
    cfg = dataclasses.replace(ex.FY_ERRATUM_PRESETS["check"], shapes=((5, 2), (10, 3)))
    assert ex.erratum_outcome_verdict(ex.fy_erratum(cfg)).passed
    _assert_fails(ex.erratum_outcome_verdict(ex.fy_erratum(cfg, form="printed")))


def test_prop74_verdict_rejects_shifted_phi():
    """φ = x²/2 + 1: the biconjugate misses f*_φ by n − k (the printed statement fails), the erratum holds."""
    cfg = dataclasses.replace(ex.PROP74_PRESETS["check"], shapes=((3, 1), (4, 2)))
    assert ex.prop74_verdict(ex.prop74(cfg)).passed
    _assert_fails(ex.prop74_verdict(ex.prop74(dataclasses.replace(cfg, inf_phi=1.0))))


def test_sparsity_verdict_rejects_dense_relaxation():
    def dense(x, k, reg, p):
        e = np.exp((x - x.max()) / reg)
        return np.minimum(k * e / e.sum(), 1.0)

    _assert_fails(ex.sparsity_verdict(ex.sparsity(ex.SparsityConfig(draws=10), op_mask=dense)))


def test_measures_are_seeded():
    """Two runs of a registered experiment give the same summary."""
    e = experiment("topk.prop71")
    assert e.summary(e.run("check", draws=5)) == e.summary(e.run("check", draws=5))
