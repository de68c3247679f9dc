"""Negative controls of checks/test_icl_ar_figures.py: each reruns a figure's experiment (theory.experiments.icl_ar)
with the ingredient that makes the figure removed and asserts that the verdict fails; sizes are reduced where the
broken run fails at any size."""

from __future__ import annotations

import dataclasses

import numpy as np

from theory import datasets
from theory.experiments import icl_ar as ex
from theory.experiments.icl_ar import gd_floor, minima, panels, processes, training


def _fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_fig61_rejects_non_orthogonal_w():
    """W = 1.01 x orthogonal is not norm preserving: the tokens leave the sphere."""
    cfg = dataclasses.replace(processes.FIG61_PRESETS["check"], gain=1.01)
    _fails(processes.fig61_verdict(processes.orbits(cfg)))


def test_fig62_rejects_full_rank_heads():
    """H = d = 4 heads admit full-rank minima: the minimum reached does not implement 2cos θ R_θ - I."""
    cfg = dataclasses.replace(processes.FIG62_PRESETS["check"], heads=4)
    _fails(processes.fig62_verdict(processes.trigonometric(cfg)))


def test_fig63_full_rejects_orthogonal_contexts_on_the_left():
    """Orthogonal contexts on the left panel: the learned C is not diagonal (Prop. 6.7 is for unitary contexts)."""
    cfg = dataclasses.replace(panels.FIG63_FULL_PRESETS["check"], unitary_context="orthogonal", unitary_seeds=(0,),
                              orthogonal_seeds=(0,))
    _fails(ex.fig63_panels_verdict(ex.fig63_panels(cfg)))


_SMALL = dataclasses.replace(minima.LOCAL_MINIMUM_PRESETS["check"], delta=2, heads=3, tmax=6, steps=20000,
                             restarts=1, restart_steps=2000)


def test_fig63_local_minimum_rejects_a_seed_that_reaches_zero():
    """A descent that reaches the zero-loss set (d = 4, H = 3, T = 6, seed 0) is no non-global minimum."""
    result = minima.local_minimum(dataclasses.replace(_SMALL, seed=0))
    assert result.loss < 1e-12
    _fails(minima.local_minimum_verdict(result))


def test_fig63_local_minimum_rejects_a_saddle():
    """The origin A = B = 0, P = 0 is a stationary point of loss d (T_max - 1) with negative curvature (the
    products B^T A): reached by a single step from an initialisation of scale 1e-12, with no polish, it fails the
    curvature test and not the first-order ones."""
    cfg = dataclasses.replace(_SMALL, init_scale=1e-12, steps=1, polish_gtol=1e3, restarts=0)
    result = minima.local_minimum(cfg)
    m = result.to_measured()
    assert m["loss"] >= 1 and m["grad_norm"] < 1e-6 and m["min_eig_over_max"] < -0.1
    _fails(minima.local_minimum_verdict(result))


def test_fig63_local_minimum_rejects_a_point_not_yet_stationary():
    """Stopped after 100 steps of descent with no polish, the gradient has not vanished."""
    result = minima.local_minimum(dataclasses.replace(_SMALL, steps=100, polish_gtol=1e3, restarts=0))
    assert result.grad_norm > 1e-3
    _fails(minima.local_minimum_verdict(result))


def test_fig63_local_minimum_rejects_restarts_that_escape():
    """A restart below the point's loss means a way down: the verdict fails on it alone."""
    result = minima.local_minimum(dataclasses.replace(_SMALL, init_scale=1e-12, steps=1, polish_gtol=1e3))
    lowered = dataclasses.replace(result, restart_losses=(0.5 * result.loss,))
    assert minima.local_minimum_verdict(lowered).measured["restart_min_rel_excess"] == -0.5
    _fails(minima.local_minimum_verdict(lowered))


def test_fig64_synthetic_rejects_no_shuffle():
    """Without the shuffle D_shuffle is D: no more badly fitted sequences."""
    cfg = dataclasses.replace(processes.FIG64_SYNTHETIC_PRESETS["check"], shuffle=False, n=512)
    _fails(processes.fig64_verdict(processes.ar_fit_synthetic(cfg)))


def _fake_moby(monkeypatch, rng_seed=0):
    """Monkeypatch theory.datasets.load: a 'book' of 2000 words over 40 distinct words and a random embedding."""
    rng = np.random.default_rng(rng_seed)
    words = [f"w{i}" for i in range(40)]
    text = " ".join(words[i] for i in rng.integers(40, size=2000))
    emb = rng.normal(size=(40, 16)).astype(np.float32)

    def encode(t):
        return [int(w[1:]) for w in t.split()]

    def load(name, data=None, **options):
        return text if name == "moby-dick" else (emb, encode)

    monkeypatch.setattr(datasets, "load", load)


def test_fig64_rejects_no_shuffle(monkeypatch):
    """Fig. 6.4's loader path with D_shuffle = D (no shuffle): the ratio is 1."""
    _fake_moby(monkeypatch)
    cfg = dataclasses.replace(processes.FIG64_PRESETS["check"], shuffle=False, data="/nonexistent")
    _fails(processes.fig64_verdict(processes.ar_fit(cfg)))


_SMALL_DEPTH = dict(depths=(1, 3), tmax=8, n_train=64, n_test=64, batch=64, gd_etas=8)


def test_fig65_rejects_untrained_layers():
    """Untrained layers (0 epochs) are not competitive with one GD step."""
    cfg = dataclasses.replace(training.FIG65_PRESETS["check"], epochs=0, **_SMALL_DEPTH)
    _fails(training.fig65_verdict(training.depth(cfg)))


def test_fig65_erratum_rejects_a_looser_caption():
    """Granting the trained model an MSE of 30 (instead of the caption's 2) lets 3 GD steps lead by 10x: the
    printed form would hold, so the erratum record fails."""
    cfg = dataclasses.replace(gd_floor.FIG65_ERRATUM_PRESETS["check"], init_mse_max=30.0, n=64, tmax=20, split_n=8)
    _fails(gd_floor.fig65_erratum_verdict(gd_floor.gd_floor(cfg)))


def test_fig65_erratum_rejects_non_orthogonal_contexts(monkeypatch):
    """With W = 1.1 x Haar the prediction error of GD no longer splits into the least-squares error plus the
    unfitted part (|W x| != |x|): the corrected half fails."""
    def stretched(n, T, d, seed):
        s = training.orthogonal_sequences(n, T, d, seed)
        return s * 1.1 ** np.arange(T)[None, :, None]

    monkeypatch.setattr(gd_floor, "orthogonal_sequences", stretched)
    cfg = dataclasses.replace(gd_floor.FIG65_ERRATUM_PRESETS["check"], n=64, tmax=20, split_n=8)
    _fails(gd_floor.fig65_erratum_verdict(gd_floor.gd_floor(cfg)))


def test_fig65_rejects_layers_far_behind_gd():
    """A model level with one GD step at L = 1 but 10x behind 3 GD steps fails the corrected form's bound (and
    only it: the same model 9x behind passes)."""
    cfg = dataclasses.replace(training.FIG65_PRESETS["check"], epochs=0, **_SMALL_DEPTH)
    r = training.depth(cfg)
    _fails(training.fig65_verdict(dataclasses.replace(r, model_mse=(r.gd_mse[0], 10.0 * r.gd_mse[1]))))
    assert training.fig65_verdict(dataclasses.replace(r, model_mse=(r.gd_mse[0], 9.0 * r.gd_mse[1]))).passed


def test_fig610_rejects_untrained_transformer():
    """An untrained vanilla Transformer (0 epochs) does not beat GD."""
    cfg = dataclasses.replace(training.FIG610_PRESETS["check"], epochs=0, **_SMALL_DEPTH)
    _fails(training.fig610_verdict(training.depth(cfg)))


def test_fig67_rejects_plain_tokens():
    """Without duplicating the tokens (e_t = s_t) §6.6 sees no gain with the number of heads."""
    cfg = dataclasses.replace(training.FIG67_PRESETS["check"], duplicate=False, heads=(1, 4), tmax=8, n_train=128,
                              n_test=64, epochs=3)
    _fails(training.fig67_verdict(training.heads(cfg)))


def test_fig68_rejects_untrained_heads():
    """Without training (0 epochs) Σ_h B_hᵀB_h is the initial one: its off-block share does not halve."""
    cfg = dataclasses.replace(training.FIG68_PRESETS["check"], epochs=0, n_train=32, n_test=32)
    _fails(training.fig68_verdict(training.head_gram(cfg)))


def test_fig69_rejects_one_epoch():
    """After one epoch linear attention has not learnt the in-context map: no 10x separation from the softmax."""
    cfg = dataclasses.replace(training.FIG69_PRESETS["check"], epochs=1, n_train=256)
    _fails(training.fig69_verdict(training.softmax_mlp(cfg)))
