"""Negative controls of the checks in checks/test_topk_experiments.py: each feeds the experiment's own verdict a
setting that breaks the claim (a reduction step dropped, a wrong prediction, another function) and asserts that
the verdict fails. They import theory.experiments.topk, never checks/."""

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


def test_fig73_rejects_wrong_zero_square():
    """The p = 2 half-width 0.5/(1 + reg) predicted for p = 4/3: the measured square differs."""
    r = _small_fig73()
    p2, ps = r.labels[1], r.labels[2]
    hw = dict(r.halfwidth)
    hw[ps] = [hw[ps][0], hw[p2][1]]
    _assert_fails(ex.fig73_verdict(dataclasses.replace(r, halfwidth=hw)))


def test_fig73_rejects_discontinuous_map_as_relaxed():
    """The hard map's modulus of continuity (a jump) in place of p = 2's: slope 0, not 1."""
    r = _small_fig73()
    mod = dict(r.modulus)
    mod[r.labels[1]] = mod["hard"]
    _assert_fails(ex.fig73_verdict(dataclasses.replace(r, modulus=mod)))


def test_fig73_rejects_kinked_map_as_smooth():
    """p = 2's jump of the difference quotient (kinks) in place of p = 4/3's."""
    r = _small_fig73()
    jump = dict(r.jump)
    jump[r.labels[2]] = jump[r.labels[1]]
    _assert_fails(ex.fig73_verdict(dataclasses.replace(r, jump=jump)))


def test_fig78_rejects_naive_entry_law():
    """The per-coordinate law h^(q-1) = h^(1/(p-1)) predicted for p > 2 too: p = 3 and 4 enter linearly."""
    r = ex.fig78(ex.Fig78Config(ps=(3.0, 4.0), curve_points=11))
    slopes = {k: (fit, 1.0 / (float(k) - 1.0)) for k, (fit, _) in r.slopes.items()}
    _assert_fails(ex.fig78_verdict(dataclasses.replace(r, slopes=slopes)))
    assert ex.fig78_verdict(r).passed


def test_fig78_rejects_p_dependent_thresholds():
    """Endpoints predicted at 1 - reg^(p-1) (a p-dependent guess) instead of 1 - reg."""
    r = ex.fig78(ex.Fig78Config(ps=(1.5, 3.0), curve_points=11))
    one = {k: [m, 1.0 - r.reg ** (float(k) - 1.0)] for k, (m, _) in r.one_end.items()}
    _assert_fails(ex.fig78_verdict(dataclasses.replace(r, one_end=one)))


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
