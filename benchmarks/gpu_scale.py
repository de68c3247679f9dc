"""The scale experiments of ``scaling`` at the papers' sizes on one GPU, with the baselines in the same run.

Usage (on a machine with a CUDA build of torch 2.13.0 and one GPU; about 2 to 4 minutes on an H100
or H200 is the design target, not yet measured)::

    python benchmarks/gpu_scale.py                   # --device cuda --size paper
    python benchmarks/gpu_scale.py --device cpu --size cpu   # the same script at reduced sizes (a dry run)

It runs, in this order:

1. :func:`bench_backends.run`: the Figure 7 grid (51 H x 70 beta, 5 draws x 64 inputs, L = 1000,
   d = 40) and Figure 2 with explicit matrices (10^4 runs, L = 1000, d = 100), each against the
   straightforward PyTorch loop, repeats interleaved, float64; the phase-diagram figure;
2. the Figure 7 grid again in float32 (time and largest change of beta*(H) against float64);
3. the claim experiment ``scaling.fig7`` at its ``"paper"`` preset (11 Hurst indices, 32 draws,
   15 betas, NumPy draws, torch forward and backward on the device) with its verdict: the claim's
   own comparison at more draws than the check can afford;
4. ``resnet-node`` (benchmarks/gpu_scale_resnet_node.py): Figure 3(c) on networks trained on
   scikit-learn's digits and Figure 4 over depths 2 ... 64, at their ``"paper"`` presets.
5. Figures 1-5, 8 and 9 of ``scaling`` (:mod:`gpu_scale_scaling`): their ``"paper"`` presets on the
   torch backend, timed, with verdicts and figures (stored under ``"scaling_figs"``).
6. the experiments of ``implicit-reg`` (Figures 1 and 2, Table 1 on digits) with their verdicts and
   figures: benchmarks/gpu_scale_implicit_reg.py (under the key ``implicit_reg``).

Writes benchmarks/out/gpu_scale_<device>_<size>.json (timings, ratios, beta*(H), quartiles, the
verdict) beside the files of bench_backends.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_backends  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", choices=sorted(bench_backends.SIZES), default="paper")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    from theory.backends import resolve
    from theory.experiments import experiment

    try:
        backend = resolve("torch", a.device, "float64")
    except ValueError as exc:
        print(f"gpu_scale: {exc}", file=sys.stderr)
        return 2
    out = {"device": a.device, "size": a.size}
    out["bench"] = bench_backends.run(a.device, a.size, "float64", a.repeats)

    f7 = bench_backends.SIZES[a.size]["fig7"]
    hurst, beta = bench_backends._grids(f7["nh"], f7["nb"])
    g7 = dict(hurst=hurst, beta=beta, L=f7["L"], d=f7["d"], draws=f7["draws"], n_inputs=f7["n_inputs"],
              backend="torch", device=a.device, draws_on="device")
    e7 = experiment("scaling.fig7_grid")
    runs = {}
    for dtype in ("float64", "float32"):
        backend.synchronize()
        t = time.perf_counter()
        runs[dtype] = e7.run("check", **g7, dtype=dtype)
        backend.synchronize()
        out[f"fig7_grid_{dtype}_seconds"] = time.perf_counter() - t
    out["fig7_grid_beta_star_hidden"] = dict(zip(map(str, hurst), runs["float64"].critical_hidden.tolist()))
    out["fig7_grid_beta_star_gradient"] = dict(zip(map(str, hurst), runs["float64"].critical_gradient.tolist()))
    out["fig7_grid_float32_max_beta_star_change"] = float(np.nanmax(np.abs(
        runs["float32"].critical_hidden - runs["float64"].critical_hidden)))

    e = experiment("scaling.fig7")
    preset = "paper" if a.size == "paper" else "check"
    backend.synchronize()
    t = time.perf_counter()
    result = e.run(preset, backend="torch", device=a.device)
    backend.synchronize()
    out["fig7_claim_seconds"] = time.perf_counter() - t
    verdict = e.verdict(result)
    out["fig7_claim_verdict"] = {"status": verdict.status, "kind": verdict.kind, "message": verdict.message}
    print(f"fig7 grid float64 {out['fig7_grid_float64_seconds']:.2f} s, float32 {out['fig7_grid_float32_seconds']:.2f} s "
          f"(largest change of beta*(H): {out['fig7_grid_float32_max_beta_star_change']:.2g})")
    print(f"scaling.fig7 preset {preset} on torch {a.device}: {out['fig7_claim_seconds']:.1f} s; {verdict.status}: "
          f"{verdict.message[:300]}")
    import gpu_scale_resnet_node  # resnet-node: Figure 3(c) on digits, Figure 4 over depths 2 ... 64

    out["resnet_node"] = gpu_scale_resnet_node.run(a.device, "paper" if a.size == "paper" else "cpu")
    import gpu_scale_scaling  # Figures 1-5, 8 and 9 of scaling (their own module)

    out["scaling_figs"] = gpu_scale_scaling.run(a.device, a.size)
    import gpu_scale_implicit_reg  # implicit-reg: Figures 1-2 and Table 1 on digits (its own sizes, "cpu" or "paper")

    out["implicit_reg"] = gpu_scale_implicit_reg.run(a.device, "paper" if a.size == "paper" else "cpu")
    print(f"implicit_reg: {json.dumps(out['implicit_reg'], default=str)[:600]}")
    path = Path(__file__).resolve().parent / "out" / f"gpu_scale_{a.device.replace(':', '')}_{a.size}.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
