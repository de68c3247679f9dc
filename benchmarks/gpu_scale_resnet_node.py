"""The scale experiments of ``resnet-node`` on the PyTorch backend: Figure 3(c) on networks trained on
scikit-learn's digits, Figure 4 over the paper's whole depth range (2 ... 64), and the synthetic
Figure 3(c) at its paper preset.

Called by ``benchmarks/gpu_scale.py`` (``run(device, size)``), or alone::

    python benchmarks/gpu_scale_resnet_node.py --device cuda --size paper
    python benchmarks/gpu_scale_resnet_node.py --device cpu --size cpu     # dry run, < 60 s on a CPU

Sizes. ``"paper"``: the presets ``"paper"`` of ``resnet_node.fig3c_digits`` (depths 4 ... 64, 5
seeds, width 64, 90 epochs of SGD on the digits, 540 steps), ``resnet_node.fig4`` (depths 2 ... 64,
5 seeds, 300 Adam steps for each of the 4 variants) and ``resnet_node.fig3c``. ``"cpu"``: the same
experiments at reduced sizes.

Estimate of the paper run on one H100 (an estimate, not yet measured). The tensors are small (the
largest batched product is 5 x 256 x 64 by 64 x 64): the digits training is about 1.3e13 float64
operations (540 steps x 382 layer evaluations x 63 MFLOP, forward and backward), a few seconds at
a realistic fraction of the 50 TFLOP/s peak for products this small; Figure 4 is negligible in
FLOPs (d = 6, width 16). Both are bound by kernel launches and autograd instead: the digits
training issues about 540 steps x 6.7e3 kernels = 3.6e6 kernels, Figure 4 about 300 x 1.6e4 =
4.8e6 kernels and 7.5e4 autograd calls of the adjoint; at 5-10 us per kernel that is 40-80 s for
the two, plus a few seconds for the synthetic Figure 3(c). The dry run on a CPU (``--size cpu``,
one thread) took 45-55 s on a loaded 2-core machine.

Writes benchmarks/out/gpu_scale_resnet_node_<device>_<size>.json and the figures
benchmarks/out/resnet-node__fig-3c-digits_<device>_<size>.png and
benchmarks/out/resnet-node__fig-4_<device>_<size>.png.
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
    "paper": {"fig3c_digits": {}, "fig4": {}, "fig3c": {}},
    "cpu": {"fig3c_digits": dict(depths=(4, 8, 16, 32), seeds=(0,), width=16, epochs=4, decay_every=2),
            "fig4": dict(depths=(2, 4, 8), seeds=(0, 1), steps=200),
            "fig3c": dict(depths=(4, 8, 16, 32, 64), seeds=(0, 1))},
}


def _timed(backend, fn):
    backend.synchronize()
    t = time.perf_counter()
    out = fn()
    backend.synchronize()
    return out, time.perf_counter() - t


def _digits_figure(result, path):
    from theory.plots import STYLE, plot_rate, subplots

    mpl, fig, (ax,) = subplots(1, (6.6, 4.8))
    c = result.config
    with mpl.rc_context(STYLE):
        for scheme, color, shift, label in (("euler", "C0", 0.92, "ResNet (Euler)"), ("heun", "C3", 1.08, "HeunNet")):
            for row in result.errors[scheme]:
                for N, errs in zip(c.depths, row):
                    ax.plot(np.full(errs.size, N * shift), errs, ".", color=color, ms=2.0, alpha=0.15, zorder=1)
            guide = dict(expected_slope=-1.0, expected_label="slope -1: rate of the bound of Prop. 4 (weights O(1))") \
                if scheme == "euler" else {}
            plot_rate(result.fits[scheme], ax=ax, color=color, label=f"{label}: median over tensors", **guide)
        ax.plot([], [], ".", color="0.5", label="one tensor $V_n$, $W_n$ or $b_n$")
        ax.set_xlabel("depth N")
        ax.set_ylabel(r"relative error $\|\tilde g - g\|_F / \|g\|_F$")
        te = {s: 100 * np.median(result.test_error[s]) for s in ("euler", "heun")}
        ax.set_title(f"resnet-node/fig-3c on digits: adjoint vs true gradient after training\n"
                     f"width {c.width}, {c.epochs} epochs, {len(c.seeds)} seed(s); test error "
                     f"ResNet {te['euler']:.1f}%, HeunNet {te['heun']:.1f}%", fontsize=9.5)
        ax.legend(fontsize=7, frameon=False, loc="lower left")
    fig.savefig(path, dpi=120)
    mpl.pyplot.close(fig)


def _fig4_figure(result, path):
    from theory.plots import STYLE, subplots

    styles = {"euler-backprop": ("C0", "-", "o", "ResNet, backprop"),
              "euler-adjoint": ("C0", "--", "s", "ResNet, adjoint"),
              "heun-backprop": ("C3", "-", "o", "HeunNet, backprop"),
              "heun-adjoint": ("C3", "--", "s", "HeunNet, adjoint")}
    mpl, fig, (ax,) = subplots(1, (5.8, 4.0))
    depths = np.asarray(result.table.depths)
    with mpl.rc_context(STYLE):
        for key, (color, ls, marker, label) in styles.items():
            errs = 100 * result.table.errors[key]
            ax.fill_between(depths, errs.min(axis=1), errs.max(axis=1), color=color, alpha=0.08, lw=0)
            ax.plot(depths, 100 * result.table.median(key), ls=ls, marker=marker, color=color, ms=5, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths)
        ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{int(round(v))}"))
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}%"))
        ax.set_xlabel("depth N")
        ax.set_ylabel("test error (median, min-max band)")
        ax.set_title(f"resnet-node/fig-4: two moons, {len(result.config.seeds)} seeds, "
                     f"{result.config.steps} Adam steps", fontsize=10)
        ax.legend(frameon=False, fontsize=8)
    fig.savefig(path, dpi=120)
    mpl.pyplot.close(fig)


def run(device: str, size: str) -> dict:
    """Time the three experiments on the torch backend of ``device`` at ``size`` ("paper" or "cpu"),
    record their verdicts and draw the figures; returns the dict stored under "resnet_node"."""
    from theory.backends import resolve
    from theory.experiments import experiment

    if size not in SIZES:
        raise ValueError(f"`size` must be one of {sorted(SIZES)}; got {size!r}")
    backend = resolve("torch", device, "float64")
    import torch

    threads = torch.get_num_threads()
    if backend.device == "cpu":
        # one intra-op thread: the tensors are small, and several threads on a shared CPU spin-wait
        torch.set_num_threads(1)
    try:
        return _run(backend, device, size)
    finally:
        torch.set_num_threads(threads)


def _run(backend, device, size):
    from theory.experiments import experiment

    preset = "paper" if size == "paper" else "check"
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"{device.replace(':', '')}_{size}"
    out = {"device": device, "size": size}
    for name, draw in (("fig3c_digits", _digits_figure), ("fig4", _fig4_figure), ("fig3c", None)):
        if name == "fig3c_digits":
            from theory.experiments.resnet_node import sklearn_available

            if not sklearn_available():
                out[name] = {"skipped": "scikit-learn is not installed (pip install 'theory[gpu]')"}
                continue
        exp = experiment(f"resnet_node.{name}")
        result, seconds = _timed(backend, lambda: exp.run(preset, **SIZES[size][name], backend="torch", device=device))
        verdict = exp.verdict(result)
        entry = {"seconds": seconds, "status": verdict.status, "message": verdict.message,
                 "summary": exp.summary(result)}
        if hasattr(result, "to_measured"):
            entry["measured"] = result.to_measured()
        if draw is not None:
            stem = name.replace("_", "-").replace("fig3c", "fig-3c").replace("fig4", "fig-4")
            path = OUT / f"resnet-node__{stem}_{tag}.png"
            draw(result, path)
            entry["figure"] = str(path.relative_to(OUT.parent.parent))
        out[name] = entry
        print(f"resnet_node.{name} ({preset} preset{', reduced' if size != 'paper' else ''}) on torch {device}: "
              f"{seconds:.1f} s; {verdict.status}: {verdict.message[:240]}")
    path = OUT / f"gpu_scale_resnet_node_{tag}.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", choices=sorted(SIZES), default="paper")
    a = ap.parse_args(argv)
    try:
        run(a.device, a.size)
    except ValueError as exc:
        print(f"gpu_scale_resnet_node: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
