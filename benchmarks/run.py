"""Run every benchmark, print the machine, the timings and the ratios, write ``out/results.json``.

Usage::

    python benchmarks/run.py            # full sizes (a few minutes on a 2-core machine)
    python benchmarks/run.py --quick    # small sizes: a smoke test of the harness, still prints ratios

``--quick`` writes ``results-quick.json`` and ``resnet_memory-quick.png`` so that it never overwrites
the full results. Never part of ``make test``; pytest does not collect this directory.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import bench_resnet  # noqa: E402
from _harness import fmt_bytes, fmt_time, format_table, load_average, machine_info  # noqa: E402

# Targets of the brief: one trajectory at d = 16, N = 1e4 at least 5x NumPy (goal 10x); a batch of
# 256 at least as fast as NumPy's BLAS-backed loop. Heun has no target ("for completeness").
FULL = {
    "forward": [
        dict(d=16, N=10_000, B=None, scheme="euler", target=5.0, goal=10.0),
        dict(d=16, N=10_000, B=256, scheme="euler", target=1.0),
        dict(d=16, N=10_000, B=None, scheme="heun"),
        dict(d=16, N=10_000, B=256, scheme="heun"),
    ],
    # d = 64 at N = 1e5: theta is 3.3 GB and grad_theta another 3.3 GB, inside the 8 GB budget.
    # bench_memory checks each point against the budget itself and lists any skipped one.
    "memory": dict(grids={64: [100, 1_000, 10_000, 100_000], 16: [100, 1_000, 10_000, 100_000]},
                   budget_bytes=8 * 2**30),
    "timing": dict(warmup=2, min_time=0.5, max_rounds=200, min_rounds=5),
    "compile": None,  # every entry point
}
QUICK = {
    "forward": [
        dict(d=16, N=1_000, B=None, scheme="euler", target=5.0, goal=10.0),
        dict(d=16, N=1_000, B=32, scheme="euler", target=1.0),
        dict(d=16, N=1_000, B=None, scheme="heun"),
        dict(d=16, N=1_000, B=32, scheme="heun"),
    ],
    "memory": dict(grids={16: [10, 100, 1_000]}, budget_bytes=2**30),
    "timing": dict(warmup=1, min_time=0.05, max_rounds=50, min_rounds=3),
    "compile": ["forward euler"],
}


def _json_default(obj):
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    raise TypeError(f"not serialisable: {type(obj).__name__}")


def _clean(obj):
    """Non-finite floats become null (JSON has no NaN)."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def print_machine(info):
    flags = ", ".join(info["cpu_flags"] or []) or "?"
    mem = fmt_bytes(info["memory_bytes"]) if info["memory_bytes"] else "?"
    commit = info["commit"]["id"] or "?"
    if info["commit"]["dirty"]:
        commit += " (dirty)"
    print("Machine")
    print(f"  CPU      {info['cpu']} ({info['machine']}; {flags})")
    print(f"  cores    {info['cores']} ({info['cores_usable']} usable); memory {mem}")
    print(f"  system   {info['system']}")
    print(f"  Python   {info['python']} ({info['python_build']})")
    print(f"  NumPy    {info['numpy']} (BLAS: {info['blas']}); SciPy {info['scipy']}; Numba {info['numba']}")
    print(f"  theory   {info['theory']} at commit {commit}")
    if info["load_average"]:
        la = info["load_average"]
        busy = la[0] > 0.5 * (info["cores_usable"] or info["cores"] or 1)
        print(f"  load     {la[0]} {la[1]} {la[2]} (1, 5, 15 min)"
              + ("  WARNING: other processes are using the cores; timings will be noisy" if busy else ""))
    if info["thread_env"]:
        print(f"  threads  {info['thread_env']}")
    print()


def _target_text(r):
    if r["target"] is None:
        return "-"
    text = f">= {r['target']:g}: {'met' if r['target_met'] else 'NOT met'}"
    if r["goal"] is not None:
        text += f"; goal {r['goal']:g}: {'met' if r['goal_met'] else 'not met'}"
    return text


def print_forward(results):
    rows = []
    for r in results:
        p = r["params"]
        t, n = r["theory"], r["numpy"]
        rows.append([
            p["scheme"], "1" if p["B"] is None else str(p["B"]), f"{p['d']}", f"{p['N']}",
            fmt_time(t["first_call"]),
            f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})",
            f"{fmt_time(n['median'])} ({fmt_time(n['iqr'])}, {n['rounds']})",
            f"{r['ratio']:.2f}x",
            f"{r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}",
            _target_text(r),
        ])
    print(format_table(
        ["scheme", "B", "d", "N", "theory 1st call", "theory median (IQR, rounds)",
         "NumPy median (IQR, rounds)", "NumPy/theory", "ratio IQR span", "target"],
        rows, title="Forward speed: theory.resnet.forward vs a NumPy loop (tanh residual)",
        align=["<", ">", ">", ">", ">", ">", ">", ">", ">", "<"]))
    print("  'theory 1st call' is the first call alone: JIT compilation, or loading the kernel from "
          "Numba's on-disk cache.")
    print("  'ratio IQR span' = NumPy q1 / theory q3 .. NumPy q3 / theory q1.")
    for r in results:
        print(f"  {r['name']}: max |theory - NumPy| over the trajectory = {r['max_abs_diff']:.2e}")
    print()


def print_memory(result):
    params = result["params"]
    print("Memory: theory.resnet.gradient, adjoint vs backprop (tanh residual, Euler, one input)")
    print(f"  Grid: {params['grids']} (d: list of N); budget {fmt_bytes(params['budget_bytes'])} per point.")
    for s in result["skipped"]:
        print(f"  Skipped d = {s['d']}, N = {s['N']}: needs about {fmt_bytes(s['needed_bytes'])} "
              f"(input theta, the API's copy of it, grad_theta), over the budget.")
    print("  working = peak - size of grad_theta (8 N d^2 bytes, an unavoidable output);")
    print("  beyond validation = working - peak of final_state (the memory-free forward) on the same inputs.")
    rows = []
    for r in result["runs"]:
        rows.append([
            str(r["d"]), str(r["N"]), r["method"], fmt_bytes(r["theta_bytes"]), fmt_bytes(r["peak"]),
            fmt_bytes(r["working"]), f"{r['working'] / r['theta_bytes']:.3f}",
            fmt_bytes(r["validation_peak"]), fmt_bytes(r["beyond_validation"]),
            fmt_bytes(r["trajectory_bytes"]),
        ])
    print(format_table(
        ["d", "N", "method", "theta", "peak", "working", "working/theta", "validation peak",
         "beyond validation", "trajectory"],
        rows, align=[">", ">", "<", ">", ">", ">", ">", ">", ">", ">"]))
    rows = [[str(s["d"]), s["method"], f"{min(s['N'])}..{max(s['N'])}", f"{s['slope_peak']:.3f}",
             f"{s['slope_working']:.3f}", f"{s['slope_beyond_validation']:.3f}"] for s in result["slopes"]]
    print()
    print(format_table(["d", "method", "N", "slope peak", "slope working", "slope beyond validation"],
                       rows, title="Log-log slopes against N (flat: 0, linear: 1)",
                       align=[">", "<", ">", ">", ">", ">"]))
    print()


def print_compile(result):
    rows = [[name, fmt_time(t)] for name, t in result["seconds"].items()]
    print(format_table(["entry point", "first call"], rows, title="Cold JIT compilation: first call in a fresh "
                       "interpreter with an empty Numba cache (includes one tiny run, d = 4, N = 8)"))
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test of the harness")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="output directory (default: benchmarks/out)")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    suffix = "-quick" if args.quick else ""
    args.out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    info = machine_info()
    print_machine(info)
    print(f"Mode: {'quick (smoke test, small sizes)' if args.quick else 'full'}\n")

    compile_result = bench_resnet.bench_compile(cfg["compile"])
    print_compile(compile_result)

    forward_results = []
    for spec in cfg["forward"]:
        forward_results.append(bench_resnet.bench_forward(**spec, **cfg["timing"]))
    print_forward(forward_results)

    memory = bench_resnet.bench_memory(**cfg["memory"])
    print_memory(memory)
    plot_path = args.out / f"resnet_memory{suffix}.png"
    bench_resnet.plot_memory(memory, plot_path)
    print(f"Plot: {plot_path}")
    if not args.quick:  # the README shows the full-size memory curve from the gallery
        gallery = HERE.parent / "figures" / "gallery" / "benchmark__resnet-memory.png"
        gallery.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(plot_path, gallery)

    doc = {
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "machine": info,
        "benchmarks": [compile_result] + forward_results + [memory],
        "load_average_end": load_average(),
        "plot": str(plot_path.relative_to(HERE.parent)) if plot_path.is_relative_to(HERE.parent) else str(plot_path),
        "seconds": time.perf_counter() - started,
    }
    json_path = args.out / f"results{suffix}.json"
    json_path.write_text(json.dumps(_clean(doc), indent=1, default=_json_default) + "\n")
    print(f"Results: {json_path} ({doc['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
