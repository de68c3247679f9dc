"""The experiments of ``implicit-reg`` on the torch backend: Figures 1 and 2 (Section 5.1) and Table 1's
message on scikit-learn's digits, timed, with their verdicts and figures.

``run(device, size)`` is called by benchmarks/gpu_scale.py (its dict goes under the key
``"implicit_reg"``); alone::

    python benchmarks/gpu_scale_implicit_reg.py --device cuda --size paper
    python benchmarks/gpu_scale_implicit_reg.py --device cpu --size cpu     # dry run, < 60 s here

Sizes. ``"cpu"``: ``implicit_reg.fig1`` at its check sizes up to L = 64 (L_ref = 512) on both backends (their agreement
and times), ``fig2`` at its check sizes run to flow time 40 instead of 400, and ``table1_digits`` at its
check sizes with 30 steps. ``"paper"``: Appendix E's sizes (Figure 1: n = 100, d = 16, m = 32, 500 steps of
lr 1e-2 times L, 5 seeds; Figure 2: n = 50, d = 16, m = 64, depths 32 and 64, lr 5e-3 times L) and
Table 1 on digits with 1000 training images, m = 64, 5 seeds; three reductions keep the run near
80 s on one H100, because every step is a sequential sweep over the layers of tiny matrix products
(n x q times q x m), which a GPU runs at its kernel-launch latency, not at its FLOP rate:

* Figure 1 up to L = 128 with the reference at L_ref = 1024 instead of 2^14 (the ``"paper"``
  preset itself: grid 8 .. 1024 and L_ref = 2^14);
* Figure 2 to 5000 steps (flow time 25) instead of 80 000;
* Table 1 at depths 16 and 32 and 500 steps instead of 128/256 and 2000.

Estimate (not measured: no GPU run has been recorded). In eager PyTorch one layer costs six kernels
(three forward, three backward) of a few microseconds each plus their launch from Python, about 60 us
per layer and step on an H100 whatever the width at these sizes (float64 FLOPs: Figure 1 at n = 100,
q = 16, m = 32 is 12 n q m = 0.6 MFLOP per layer and seed, far below what a launch costs). Hence:
Figure 1 above: (248 + 1024) layers x 500 steps x 60 us ~ 40 s; Figure 2 above: 96 x 5000 x 60 us
~ 30 s; Table 1 above: 3 x 48 x 500 x 60 us ~ 5 s plus 4e13 FLOP ~ 5 s. The full presets: Figure 1
(2040 + 16384) x 500 x 60 us ~ 9 min, Figure 2 96 x 80 000 x 60 us ~ 8 min, Table 1 on digits
3 x 384 x 2000 x 60 us ~ 2.5 min plus 2e14 FLOP ~ 1 min: run them with ``theory run ... --preset
paper --device cuda``. The NumPy backend on one CPU core takes, measured here at the check sizes,
about as long as torch on the CPU (see the printed table): the full Figure 1 preset is hours there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out"

SIZES = {
    "cpu": {"fig1": dict(grid=(8, 16, 32, 64), ref=512), "fig1_numpy": True,
            "fig2": dict(record=(25, 50, 100, 200, 400)), "fig2_numpy": True,
            "table1_digits": dict(steps=30), "table1_numpy": True},
    "paper": {"fig1": dict(grid=(8, 16, 32, 64, 128), ref=1024, seeds=(0, 1, 2, 3, 4), record=(125, 250, 500),
                           chunk=5, n=100, d=16, m=32, lr=0.01), "fig1_numpy": False,
              "fig2": dict(depths=(32, 64), n=50, d=16, m=64, lr=0.005, record=(250, 500, 1000, 2000, 5000)),
              "fig2_numpy": False,
              "table1_digits": dict(depths=(16, 32), seeds=(0, 1, 2, 3, 4), n_train=1000, m=64, lr=0.1, steps=500),
              "table1_numpy": False},
}


def _timed(backend, fn):
    backend.synchronize()
    t = time.perf_counter()
    out = fn()
    backend.synchronize()
    return out, time.perf_counter() - t


def _max_diff(a, b, names):
    return float(max(np.max(np.abs(np.asarray(getattr(a, q)) - np.asarray(getattr(b, q)))) for q in names))


def _plot_fig1(result, path):
    from theory.experiments.implicit_reg.section5 import fig1_fits, plot_fig1_panel
    from theory.plots import subplots

    _, fig, axes = subplots(ncols=2, figsize=(11, 4))
    for ax, panel, label, title in (
            (axes[0], "left", "max_(k, t<=T) ||Z_(k+1) - Z_k||", "successive weights (Prop. 3)"),
            (axes[1], "right", "||Z^L(T) - Z^(L_ref)(T)||", "distance to the large-depth limit (Thm 4)")):
        plot_fig1_panel(ax, fig1_fits(result, panel), label, title, times=result.times)
    fig.suptitle("implicit-reg/fig-1 on the torch backend (slope -1 line: predicted)")
    fig.savefig(path, dpi=110)


def _plot_fig2(result, states, times, path):
    import matplotlib as mpl

    from theory.plots import subplots

    _, fig, axes = subplots(ncols=3, figsize=(13, 4))
    rng = np.random.default_rng(0)
    V0 = states[0].V
    iv = (rng.integers(V0.shape[1]), rng.integers(V0.shape[2]))
    iw = (rng.integers(V0.shape[2]), rng.integers(V0.shape[1]))
    cmap = mpl.colormaps["Blues"]
    k = np.arange(1, V0.shape[0] + 1)
    for c, (t, p) in enumerate(zip(times[1:], states[1:])):
        col = cmap(0.95 - 0.7 * c / max(len(states) - 2, 1))
        axes[0].plot(k, p.V[:, iv[0], iv[1]], color=col, label=f"t = {t:g}")
        axes[1].plot(k, p.W[:, iw[0], iw[1]], color=col)
    axes[0].set(xlabel="layer k", ylabel=f"V_k[{iv[0]}, {iv[1]}]", title="an entry of V_k")
    axes[1].set(xlabel="layer k", ylabel=f"W_k[{iw[0]}, {iw[1]}]", title="an entry of W_k")
    axes[0].legend(frameon=False, fontsize=7)
    losses = result.losses
    axes[2].semilogy(result.config.lr * np.arange(losses.size), losses, color="C3")
    axes[2].set(xlabel="training time t", ylabel="loss", title="loss (log scale)")
    for ax in axes:
        ax.grid(True, color="0.85", linewidth=0.6)
    fig.suptitle(f"implicit-reg/fig-2 on the torch backend: L = {V0.shape[0]}, lighter = later")
    fig.savefig(path, dpi=110)


def run(device: str = "cpu", size: str = "cpu") -> dict:
    """Time the implicit-reg experiments on ``device`` at ``size`` ("cpu" or "paper"); verdicts, agreement
    with NumPy where both run, figures under benchmarks/out/. Returns a JSON-ready dict."""
    from theory.backends import resolve
    from theory.experiments import experiment
    from theory.experiments.implicit_reg.section5 import (Fig2Result, fig1_fits, fig1_verdict, fig2_loss_verdict,
                                                          fig2_torch_runs, fig2_verdict)
    from theory.experiments.implicit_reg.table1_digits import plot_table1_digits, sklearn_available

    S = SIZES[size]
    b = resolve("torch", device, "float64")
    if device == "cpu":  # one intra-op thread, as the Numba kernels: on a shared CPU more threads spin-wait
        import torch

        torch.set_num_threads(1)
    OUT.mkdir(exist_ok=True)
    tag = f"{device.replace(':', '')}_{size}"
    out = {"device": device, "size": size}

    e1 = experiment("implicit_reg.fig1")
    r1, out["fig1_torch_seconds"] = _timed(b, lambda: e1.run("check", **S["fig1"], backend="torch", device=device))
    if S["fig1_numpy"]:
        n1, out["fig1_numpy_seconds"] = _timed(b, lambda: e1.run("check", **S["fig1"]))
        out["fig1_max_abs_diff_numpy_torch"] = _max_diff(n1, r1, ("left", "right"))
    for panel in ("left", "right"):
        v = fig1_verdict(r1, panel)
        out[f"fig1_{panel}"] = {"ok": v.passed, "slopes": [f.slope for f in fig1_fits(r1, panel)], "message": v.message}
    _plot_fig1(r1, OUT / f"gpu_scale_implicit_reg_fig1_{tag}.png")

    e2 = experiment("implicit_reg.fig2")
    c2 = e2.config_for("check", **S["fig2"], backend="torch", device=device)
    # measure_fig2's torch path, keeping the states for the figure
    (rho, lip, (times, states, losses)), out["fig2_torch_seconds"] = _timed(b, lambda: fig2_torch_runs(c2))
    drift = [float(np.max(np.abs(states[j].V - states[j - 1].V))) for j in range(1, len(states))]
    r2 = Fig2Result(c2, times[1:], rho, lip, drift, losses)
    if S["fig2_numpy"]:
        n2, out["fig2_numpy_seconds"] = _timed(b, lambda: e2.run("check", **S["fig2"]))
        out["fig2_max_abs_diff_numpy_torch"] = _max_diff(n2, r2, ("rho", "lip", "losses"))
    v = fig2_verdict(r2)
    out["fig2"] = {"ok": v.passed, "rho_ratio_max": v.measured["rho_ratio_max"], "message": v.message}
    v = fig2_loss_verdict(r2)
    out["fig2_loss"] = {"ok": v.passed, "message": v.message}
    _plot_fig2(r2, states, times, OUT / f"gpu_scale_implicit_reg_fig2_{tag}.png")

    if sklearn_available():
        e3 = experiment("implicit_reg.table1_digits")
        r3, out["table1_digits_torch_seconds"] = _timed(
            b, lambda: e3.run("check", **S["table1_digits"], backend="torch", device=device))
        if S["table1_numpy"]:
            n3, out["table1_digits_numpy_seconds"] = _timed(b, lambda: e3.run("check", **S["table1_digits"]))
            out["table1_digits_counts_equal"] = all(
                np.array_equal(n3.rows[k]["test_correct"], r3.rows[k]["test_correct"]) for k in r3.rows)
        verdict = e3.verdict(r3)
        out["table1_digits"] = {"status": verdict.status, "message": verdict.message,
                                "parts": verdict.measured["parts"]}
        plot_table1_digits(r3, directory=str(OUT))
    else:
        out["table1_digits"] = "skipped: scikit-learn is absent"
    path = OUT / f"gpu_scale_implicit_reg_{tag}.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", choices=sorted(SIZES), default="paper")
    a = ap.parse_args(argv)
    try:
        out = run(a.device, a.size)
    except ValueError as exc:
        print(f"gpu_scale_implicit_reg: {exc}", file=sys.stderr)
        return 2
    for key, value in out.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
