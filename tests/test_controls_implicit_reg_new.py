"""Negative controls of checks/test_implicit_reg_new.py (Theorem 14, Figures 3 and 4), through the package
theory.experiments.implicit_reg; and a finite-difference test of its general-f backpropagation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from theory.experiments.implicit_reg import supplement as E


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


@pytest.mark.parametrize("family", E.F_FAMILIES)
def test_general_gradient_matches_finite_differences(family):
    rng = np.random.default_rng(3)
    q, m, L, n = 4, 5, 3, 6
    X, Y = rng.standard_normal((n, q)), rng.standard_normal((n, q))
    Z = {k: 0.7 * rng.standard_normal((L, *s)) for k, s in E._f_shapes(family, q, m).items()}
    _, g, _ = E.general_loss_and_gradient(family, X, Y, Z, q, m)
    h = 1e-6
    for key, arr in Z.items():
        fd = np.empty_like(arr)
        for idx in np.ndindex(arr.shape):
            zp = {k: v.copy() for k, v in Z.items()}
            zm = {k: v.copy() for k, v in Z.items()}
            zp[key][idx] += h
            zm[key][idx] -= h
            fd[idx] = (E.general_loss_and_gradient(family, X, Y, zp, q, m)[0]
                       - E.general_loss_and_gradient(family, X, Y, zm, q, m)[0]) / (2 * h)
        assert np.allclose(g[key], fd, rtol=1e-6, atol=1e-8), (key, np.max(np.abs(g[key] - fd)))


def test_thm14_rejects_iid_init():
    """Independent Z_k(0) (no Lipschitz Z^init, a hypothesis violated): depths L and 2L stay O(1) apart."""
    cfg = dataclasses.replace(E.PRESETS["check"]["thm14"], init="iid", depths=(8, 16, 32), seeds=(0,), steps=10,
                              families=("gain",))
    result = E.thm14(cfg)
    verdict = E.thm14_verdict(result)
    _assert_fails(verdict)
    assert verdict.kind == "rate" and abs(E.thm14_fits(result)["gain"].slope) < 0.3


def test_fig3_rejects_swapped_inits(monkeypatch):
    """A broken initialisation monkeypatched in: the weight-tied and the i.i.d. schemes swapped. Rerun, the "tied"
    entries are rough and the "i.i.d." ones smooth, and the verdict must fail."""
    cfg = dataclasses.replace(E.PRESETS["check"]["fig3"], steps=20)
    assert E.fig3_verdict(E.fig3(cfg)).passed
    swap = {"paper": "iid", "iid": "paper"}
    initialize = E.initialize
    monkeypatch.setattr(E, "initialize", lambda *a, kind="paper", **kw: initialize(*a, kind=swap[kind], **kw))
    _assert_fails(E.fig3_verdict(E.fig3(cfg)))


def test_fig4_rejects_short_lengthscale():
    """A smooth init with lengthscale 1/L is as rough as i.i.d. at the layer scale: no order of magnitude."""
    cfg = dataclasses.replace(E.PRESETS["check"]["fig4"], lengthscale=1.0 / 64, seeds=(0, 1), steps=10)
    _assert_fails(E.fig4_verdict(E.fig4(cfg)))


@pytest.mark.parametrize("cls, kw", [(E.Thm14Config, {"n": -1}), (E.Thm14Config, {"depths": (8,)}),
                                     (E.Fig3Config, {"L": 0}), (E.Fig4Config, {"lengthscale": -0.1}),
                                     (E.Prop5BallConfig, {"m": 0}), (E.Prop5BallConfig, {"radii": (2.0,)}),
                                     (E.Thm14Config, {"steps": 10**9})])
def test_configs_reject_bad_sizes(cls, kw):
    with pytest.raises(ValueError):
        cls(**kw)


def test_configs_reject_wrong_types():
    with pytest.raises(TypeError, match="`n`"):
        E.Fig3Config(n=2.5)
