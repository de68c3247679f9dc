"""Unit tests of the figure experiments of paper key icl-ar (theory.experiments.icl_ar.processes, .training, .panels,
.figures): the declarations cover the inventory, the least-squares AR fit and the GD baseline are right on known
cases, Fig. 6.4's loader path runs end to end on monkeypatched data, and every drawing writes a PNG."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from theory import datasets
from theory.experiments import figures
from theory.experiments.icl_ar import figures as F
from theory.experiments.icl_ar import gd_floor, processes, training
from theory.papers import paper
from theory.plots import figure_directory


def test_every_inventory_label_is_declared():
    declared = {f.base for f in figures("icl-ar")}
    assert set(paper("icl-ar").figures) <= declared


def test_fit_mse_exact_ar_is_zero_and_inconsistent_repeat_is_not():
    rng = np.random.default_rng(0)
    W = np.linalg.qr(rng.normal(size=(6, 6)))[0]
    s = np.empty((1, 5, 6))
    s[0, 0] = rng.normal(size=6)
    for t in range(1, 5):
        s[0, t] = W @ s[0, t - 1]
    assert processes.fit_mse(s)[0] < 1e-20
    a, b, c = rng.normal(size=(3, 6))
    bad = np.array([[a, b, a, c, a]])        # a -> b and a -> c: no W fits both
    assert processes.fit_mse(bad)[0] > 1e-3
    good = np.array([[a, b, c, a, b]])       # a -> b twice: consistent
    assert processes.fit_mse(good)[0] < 1e-20


def test_gd_mse_one_step_matches_closed_form():
    s = training.orthogonal_sequences(8, 5, 3, seed=0)
    eta = 0.05
    got = training.gd_mse(s, 1, np.array([eta]))[0, 0]
    ref = 0.0
    for T in range(2, 5):
        R = np.einsum("nti,ntj->nij", s[:, 1:T], s[:, :T - 1])
        pred = np.einsum("nij,nj->ni", eta * R, s[:, T - 1])
        ref += np.mean((pred - s[:, T]) ** 2)
    assert got == pytest.approx(ref / 3, rel=1e-12)


def test_orthogonal_sequences_start_at_ones_and_keep_norm():
    s = training.orthogonal_sequences(4, 10, 5, seed=1)
    assert np.all(s[:, 0] == 1.0)
    assert np.allclose(np.linalg.norm(s, axis=-1), np.sqrt(5), rtol=1e-12)


def _fake_data(monkeypatch):
    rng = np.random.default_rng(0)
    text = " ".join(f"w{i}" for i in rng.integers(30, size=1000))
    emb = rng.normal(size=(30, 12)).astype(np.float32)
    calls = []

    def load(name, data=None, **options):
        calls.append((name, data))
        if name == "moby-dick":
            return text
        return emb, (lambda t: [int(w[1:]) for w in t.split()])

    monkeypatch.setattr(datasets, "load", load)
    return calls


def test_fig64_loader_path_end_to_end(monkeypatch, tmp_path):
    calls = _fake_data(monkeypatch)
    cfg = dataclasses.replace(processes.FIG64_PRESETS["check"], data=str(tmp_path))
    result = processes.ar_fit(cfg)
    assert [c[0] for c in calls] == ["moby-dick", "gpt2"] and all(c[1] == str(tmp_path) for c in calls)
    assert result.n == 200 and result.tokens == 1000
    verdict = processes.fig64_verdict(result)
    assert verdict.status in ("pass", "fail") and "ratio" in verdict.measured
    with figure_directory(tmp_path):
        path = F.draw_fig64(result)
    assert Path(path).suffix == ".png" and Path(path).exists()


def test_fig64_without_data_raises_dataset_missing(monkeypatch, tmp_path):
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    with pytest.raises(datasets.DatasetMissing):
        processes.ar_fit(dataclasses.replace(processes.FIG64_PRESETS["check"], data=str(tmp_path)))


_TINY = {
    "fig61": (processes.orbits, processes.FIG61_PRESETS, {}, F.draw_fig61),
    "fig62": (processes.trigonometric, processes.FIG62_PRESETS, dict(seeds=(0,), tmax=4), F.draw_fig62),
    "fig64s": (processes.ar_fit_synthetic, processes.FIG64_SYNTHETIC_PRESETS, dict(n=256), F.draw_fig64_synthetic),
    "fig65": (training.depth, training.FIG65_PRESETS,
              dict(depths=(1, 2), tmax=5, n_train=32, n_test=16, epochs=1, gd_etas=4), F.draw_fig65),
    "fig65_erratum": (gd_floor.gd_floor, gd_floor.FIG65_ERRATUM_PRESETS, dict(n=16, tmax=8, split_n=4),
                      F.draw_fig65_erratum),
    "fig610": (training.depth, training.FIG610_PRESETS,
               dict(depths=(1, 2), tmax=5, n_train=32, n_test=16, epochs=1, gd_etas=4), F.draw_fig610),
    "fig67": (training.heads, training.FIG67_PRESETS, dict(heads=(1, 2), tmax=5, n_train=32, n_test=16, epochs=1),
              F.draw_fig67),
    "fig68": (training.head_gram, training.FIG68_PRESETS, dict(tmax=5, n_train=32, n_test=16, epochs=1),
              F.draw_fig68),
    "fig69": (training.softmax_mlp, training.FIG69_PRESETS, dict(n_train=32, epochs=2), F.draw_fig69),
}


@pytest.mark.parametrize("name", sorted(_TINY))
def test_drawing_writes_png(name, tmp_path):
    measure, presets, small, draw = _TINY[name]
    result = measure(dataclasses.replace(presets["check"], **small))
    with figure_directory(tmp_path):
        path = draw(result)
    assert Path(path).suffix == ".png" and Path(path).exists() and Path(path).parent == tmp_path


def test_fig63_and_fig66_drawings_write_png(tmp_path):
    from theory.experiments import icl_ar as ex

    r63 = ex.fig63_panels(dataclasses.replace(ex.FIG63_PANELS_PRESETS["check"], unitary_seeds=(0,),
                                              orthogonal_seeds=(0,)))
    r66 = ex.fig66(dataclasses.replace(ex.FIG66_PRESETS["check"], tmax=6, mus=(50.0, 100.0)))
    with figure_directory(tmp_path):
        paths = [F.draw_fig63(r63), F.draw_fig66(r66)]
    assert all(Path(p).exists() for p in paths)


def test_offblock_fraction():
    M = np.eye(4)
    M[0, 2] = M[2, 0] = 1.0                  # i ≡ j (mod 2): kept
    assert training.offblock_fraction(M, 2) == 0.0
    M[0, 1] = 1.0
    assert training.offblock_fraction(M, 2) == pytest.approx(1 / np.sqrt(7))
