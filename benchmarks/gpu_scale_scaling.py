"""Figures 1-5, 8 and 9 of ``scaling`` on the torch backend, for benchmarks/gpu_scale.py.

``run(device, size)`` times each experiment on the torch backend (float64, ``backend.synchronize()``
around the timers), records its verdict where it has one, and draws the figures into benchmarks/out/
(``gpu_scale_scaling_<figure>_<device>_<size>.png``). Sizes:

``"paper"`` (one GPU)
    the ``"paper"`` presets: Figure 8 (3 setups trained together, L = 1000, d = 30, 500 Adam steps),
    Figure 9 (7 Hurst indices x 12 betas x 5 learning rates = 420 res-1 networks, L = 1000, d = 30,
    10 epochs of 1437 digits in batches of 128: 120 steps, every network of the grid in one batch),
    Figures 1 and 3 (50 draws, 15 depths from 10 to 1000, 3 betas), Figure 4 (50 smooth draws per depth,
    15 depths; Figure 5 has the same draws and twice the device work, and is run at the check preset),
    Figure 2 (10^4 runs, L = 1000, d = 100).
``"cpu"``
    a dry run at reduced sizes that finishes in well under a minute on a CPU.

Estimated time of the ``"paper"`` size on one H100 (an estimate from the operation counts and the CPU
times at reduced size, not a measurement): the GPU work is bound by kernel launches (about 10 small
kernels per layer and step, ~10 us each): Figure 8 ~12k launches per step x 500 steps, about 60 s with
its records (the variogram of the weights every 10 steps is computed on the host); Figure 9 ~11k
launches per step on tensors of 420 x 128 x 30, 120 steps, about 20-30 s; Figures 1 and 3 about 1 s
each; Figure 4 is bound by its host draws (1500 smooth-law draws of up to 1000 x 40 x 40 on the
host, about 20-40 s); Figure 2 by its host draws (5 x 10^4 numbers per layer, about 5 s). About 2 minutes
in all: above the 60-90 s target by the host-bound Figure 4; pass ``--size cpu`` for a dry run.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out"

#: overrides of the "check" presets for the CPU dry run (sizes that run in seconds)
CPU = {
    "scaling.fig8": dict(),
    "scaling.fig9": dict(hurst=(0.2, 0.5, 0.8), beta=(0.3, 0.7, 1.1), lrs=(1e-2,), L=50, d=16, epochs=2,
                         batch=128, n_train=512),
    "scaling.fig1": dict(seeds=tuple(range(4)), d=20),
    "scaling.fig3": dict(seeds=tuple(range(4)), d=20),
    "scaling.fig45": dict(seeds=tuple(range(4)), d=20),
    "scaling.fig2": dict(runs=2000, L=300),
}


def _timed(backend, fn):
    backend.synchronize()
    t = time.perf_counter()
    out = fn()
    backend.synchronize()
    return out, time.perf_counter() - t


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _fig8(r, path, label):
    plt = _plt()
    c = r.config
    fig, axes = plt.subplots(1, len(c.setups), figsize=(4 * len(c.setups), 3.2), constrained_layout=True)
    for ax, (law, beta), p0, p1, e0, e1 in zip(np.atleast_1d(axes), c.setups, r.path_init, r.path_trained,
                                              r.exponent_init, r.exponent_trained):
        k = np.arange(1, c.L + 1)
        ax.plot(k, p0, lw=0.7, color="0.6", label=f"initialisation (variogram exponent {e0:.2f})")
        ax.plot(k, p1, lw=0.8, color="C0", label=f"after training ({e1:.2f})")
        ax.set_title(f"{law} initialisation, beta = {beta:g}", fontsize=9)
        ax.set_xlabel("layer k")
        ax.legend(fontsize=7)
    np.atleast_1d(axes)[0].set_ylabel("one coordinate of V_k")
    fig.suptitle(f"scaling/fig-8 (torch, {label}): L = {c.L}, d = {c.d}, {c.steps} Adam steps", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fig9(r, path, label):
    plt = _plt()
    c = r.config
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    im = ax.pcolormesh(c.hurst, c.beta, r.best.T, cmap="viridis", vmin=0.0, vmax=1.0, shading="nearest")
    H = np.linspace(min(c.hurst), max(c.hurst), 50)
    ax.plot(H, np.maximum(H, 0.5), "w--", label="max(H, 1/2), the critical line of Figure 7")
    ax.set_xlabel("Hurst index H of the initialisation")
    ax.set_ylabel("beta")
    fig.colorbar(im, ax=ax, label="best test accuracy over the learning rates")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"scaling/fig-9 (torch, {label}): res-1 on digits, L = {c.L}, d = {c.d}", fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ladder(r_by_beta, depths_by_beta, path, title, ylabel):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    for beta, lr in r_by_beta.items():
        med = np.exp(np.median(lr, axis=0))
        ax.loglog(depths_by_beta[beta], med, "o-", ms=3, label=f"beta = {beta:g} (median over draws)")
    ax.set_xlabel("depth L")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fig2(r, path, label):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    ax.hist(r.ratios, bins=80, color="C0")
    q1, q3 = np.quantile(r.ratios, [0.25, 0.75])
    ax.axvline(q1, color="k", ls="--", lw=0.8, label=f"quartiles, measured: {q1:.3f}, {q3:.3f}")
    ax.axvline(q3, color="k", ls="--", lw=0.8)
    ax.axvline(1.21, color="C3", ls=":", lw=1.0, label="quartiles, printed in the text: 1.21, 1.34")
    ax.axvline(1.34, color="C3", ls=":", lw=1.0)
    ax.legend(fontsize=7)
    c = r.config
    ax.set_xlabel("||h_L|| / ||h_0||")
    ax.set_title(f"scaling/fig-2 (torch, {label}): beta = {c.beta:g}, L = {c.L}, d = {c.d}, {c.runs} runs", fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(device: str, size: str) -> dict:
    """Time Figures 1-5, 8 and 9 of ``scaling`` on torch ``device`` at ``size`` ("paper" or "cpu")."""
    from theory.backends import resolve
    from theory.experiments import experiment

    if size not in ("paper", "cpu"):
        raise ValueError(f"`size` must be 'paper' or 'cpu'; got {size!r}")
    backend = resolve("torch", device, "float64")
    OUT.mkdir(exist_ok=True)
    tag = f"{device.replace(':', '')}_{size}"
    label = f"{device}, {size} size"
    out = {}
    import torch

    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)  # small tensors: several threads on a shared CPU spin-wait
    try:
        _run_jobs(backend, device, size, tag, label, out)
    finally:
        torch.set_num_threads(threads)
    return out


def _run_jobs(backend, device, size, tag, label, out):
    from theory.experiments import experiment

    jobs = [("fig8", "scaling.fig8", "paper", {}), ("fig9", "scaling.fig9", "paper", {}),
            ("fig1", "scaling.fig1", "paper", {}), ("fig3", "scaling.fig3", "paper", {}),
            ("fig4", "scaling.fig45", "paper", {}), ("fig5", "scaling.fig45", "check", {"quantity": "gradient"}),
            ("fig2", "scaling.fig2", "paper", {})]
    for key, name, preset, extra in jobs:
        e = experiment(name)
        kw = dict(extra, backend="torch", device=device)
        if size == "cpu":
            preset = "check"
            kw.update(CPU[name])
        try:
            result, seconds = _timed(backend, lambda: e.run(preset, **kw))
        except ValueError as exc:  # Figure 9 without scikit-learn's digits: recorded, not fatal
            if "scikit-learn" not in str(exc):
                raise
            out[key] = {"experiment": name, "preset": preset, "skipped": str(exc)}
            print(f"scaling {key} ({name}): skipped: {exc}")
            continue
        entry = {"experiment": name, "preset": preset, "overrides": {k: v for k, v in kw.items()
                                                                       if k not in ("backend", "device")},
                 "seconds": round(seconds, 3)}
        if e.verdict is not None:
            verdict = e.verdict(result)
            entry["verdict"] = {"status": verdict.status, "message": verdict.message[:600]}
        out[key] = entry
        png = OUT / f"gpu_scale_scaling_{key}_{tag}.png"
        if key == "fig8":
            _fig8(result, png, label)
        elif key == "fig9":
            _fig9(result, png, label)
        elif key in ("fig1", "fig3"):
            _ladder(result.logs, result.depths, png, f"scaling/{key.replace('fig', 'fig-')} (torch, {label}): "
                    f"uniform i.i.d. res-3, d = {result.config.d}, {result.seeds} draws",
                    "||h_L - h_0|| / ||h_0||" if key == "fig1" else "||p_0 - p_L|| / ||p_L||")
        elif key in ("fig4", "fig5"):
            c = result.config
            _ladder({b: np.log(t) for b, t in result.table.items()}, {b: c.grid for b in result.table}, png,
                    f"scaling/{key.replace('fig', 'fig-')} (torch, {label}): smooth res-3, d = {c.d}, "
                    f"{len(c.seeds)} draws", "||h_L - h_0|| / ||h_0||" if key == "fig4" else "||p_0 - p_L|| / ||p_L||")
        else:
            _fig2(result, png, label)
        entry["figure"] = png.name
        status = entry.get("verdict", {}).get("status", "-")
        print(f"scaling {key} ({name}, preset {preset}) on torch {device}: {seconds:.2f} s; verdict {status}")


if __name__ == "__main__":
    import json
    import sys

    dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    sz = sys.argv[2] if len(sys.argv) > 2 else "cpu"
    print(json.dumps(run(dev, sz), indent=1, default=str))
