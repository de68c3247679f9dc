"""Run every benchmark, print the machine, the timings and the ratios, write ``out/results.json``.

Usage::

    python benchmarks/run.py            # full sizes (a few minutes on a 2-core machine)
    python benchmarks/run.py --quick    # small sizes: a smoke test of the harness, still prints ratios
    python benchmarks/run.py --only linear   # one family (resnet, linear, fbm, isotonic, implicit or topk); combines with --quick

``python benchmarks/publish.py kernels`` runs this script at full sizes and publishes what it prints in
``benchmarks/results/kernels.md`` with the machine line (the ResNet size grid is ``bench_resnet.py``,
published as ``resnet``). ``--quick`` writes ``results-quick.json`` and ``resnet_memory-quick.png`` so that it never overwrites
the full results; ``--only FAMILY`` writes ``results-FAMILY[-quick].json`` so that it never
overwrites the results of every family. Never part of ``make test``; pytest does not collect this
directory.
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

import bench_fbm  # noqa: E402
import bench_implicit  # noqa: E402
import bench_isotonic  # noqa: E402
import bench_linear  # noqa: E402
import bench_resnet  # noqa: E402
import bench_topk  # noqa: E402
from _harness import fmt_bytes, fmt_time, format_table, load_average, machine_info  # noqa: E402
from plot_sorting import plot_sorting  # noqa: E402

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
    # theory.linear: gradient cost exponent 1.0 +- 0.1 over N = 256..16384 at d = 8; prefix/suffix
    # products >= 50x the per-layer kernel at N = 4096; the flow at N = 1024 in seconds.
    "linear": {
        "scaling": dict(d=8, Ns=[256 * 2**k for k in range(7)], target=1.0, tolerance=0.1),
        "naive": dict(d=8, N=4096, target=50.0, rounds=3),
        "flow": dict(N=1024, d=8, t_end=20.0, n_times=21, B_size=0.6, rounds=2),
        "compile": None,
    },
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
    "linear": {
        "scaling": dict(d=8, Ns=[64 * 2**k for k in range(5)], target=1.0, tolerance=0.1),
        "naive": dict(d=8, N=256, target=50.0, rounds=3),
        "flow": dict(N=128, d=8, t_end=20.0, n_times=21, B_size=0.6, rounds=2),
        "compile": ["linear gradient"],
    },
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


def _ci_text(r):
    lo, hi = r["slope_ci"]
    return f"[{lo:.3f}, {hi:.3f}]"


def _faults(n):
    return "-" if n is None else f"{n:.0f}"


def print_linear_compile(result):
    rows = [[name, fmt_time(t)] for name, t in result["seconds"].items()]
    print(format_table(["entry point", "first call"], rows, title="Cold JIT compilation, theory.linear: first call "
                       "in a fresh interpreter with an empty Numba cache (includes one tiny run, d = 4, N = 8)"))
    print()


def print_linear_scaling(r):
    rows = []
    for run in r["runs"]:
        t = run["timing"]
        rows.append([str(r["params"]["d"]), str(run["N"]), fmt_time(t["first_call"]),
                     f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})",
                     fmt_time(run["per_layer"]), f"{run['per_layer_ratio']:.2f}",
                     _faults(run["page_faults_per_call"]), fmt_time(run["kernel_per_layer"]),
                     _faults(run["kernel_page_faults_per_call"])])
    print(format_table(
        ["d", "N", "1st call", "median (IQR, rounds)", "per layer", "per layer / anchor", "faults/call",
         "kernel per layer", "kernel faults/call"],
        rows, title="Gradient cost vs depth: theory.linear.gradient (prefix/suffix products)",
        align=[">", ">", ">", ">", ">", ">", ">", ">", ">"]))
    print(f"  Anchor: {r['anchor']}.")
    target = f"{r['target']:g} +- {r['tolerance']:g}"
    print(f"  Log-log exponent of median time vs N: {r['slope']:.3f}, {r['slope_ci_level']:.0%} bootstrap CI "
          f"{_ci_text(r)}, R^2 {r['r2']:.4f}; target {target}: {'met' if r['target_met'] else 'NOT met'}"
          f" (CI {'inside' if r['ci_within_target'] else 'not inside'} the target band).")
    lo, hi = r["kernel_slope_ci"]
    print(f"  'kernel per layer': {r['kernel_definition']}; its exponent {r['kernel_slope']:.3f}, "
          f"CI [{lo:.3f}, {hi:.3f}].")
    print("  The gap to the public call is its validation and its fresh grad/scratch arrays; 'faults/call' counts "
          "the minor page faults of first touching them (getrusage over 5 extra calls).")
    print()


def print_linear_naive(r):
    p, t, n = r["params"], r["theory"], r["naive"]
    rows = [[str(p["d"]), str(p["N"]), fmt_time(t["first_call"]),
             f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})",
             f"{fmt_time(n['median'])} ({fmt_time(n['iqr'])}, {n['rounds']})",
             f"{r['ratio']:.1f}x", f"{r['ratio_range'][0]:.1f}-{r['ratio_range'][1]:.1f}", _target_text(r)]]
    print(format_table(
        ["d", "N", "theory 1st call", "theory median (IQR, rounds)", "naive median (IQR, rounds)",
         "naive/theory", "ratio IQR span", "target"],
        rows, title="Gradient: theory.linear.gradient (O(N d^3)) vs the per-layer kernel (O(N^2 d^3))",
        align=[">", ">", ">", ">", ">", ">", ">", "<"]))
    print("  naive = theory.linear._kernels.gradient_per_layer_products (recomputes the products for each layer).")
    print("  'ratio IQR span' = naive q1 / theory q3 .. naive q3 / theory q1.")
    print(f"  max |theory - naive| / max |naive| = {r['max_rel_diff']:.2e}; "
          f"theory minor page faults per call: {_faults(r['theory_page_faults_per_call'])}")
    print()


def print_linear_flow(r):
    p, t, g = r["params"], r["theory"], r["gradient"]
    rows = [[str(p["d"]), str(p["N"]), f"[0, {p['t_end']:g}] ({p['n_times']})", fmt_time(t["first_call"]),
             f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})", str(r["nfev"]),
             f"{r['loss_initial']:.3g}", f"{r['loss_final']:.3g}", fmt_time(g["median"]),
             f"{r['overhead_ratio']:.2f}", f"< {p['limit_s']:g} s: {'met' if r['target_met'] else 'NOT met'}"]]
    print(format_table(
        ["d", "N", "t (points)", "1st call", "median (IQR, rounds)", "nfev", "loss(0)", "loss(end)",
         "gradient", "flow/(nfev x gradient)", "target"],
        rows, title="Gradient flow: theory.linear.gradient_flow (DOP853, rtol 1e-10, atol 1e-12, full_output)",
        align=[">", ">", ">", ">", ">", ">", ">", ">", ">", ">", "<"]))
    print(f"  theta0 = 0, Sigma = {p['Sigma']}, B = {p['B']} (||B||_F = {p['B_fro']:.3f}).")
    print("  'gradient' is one public gradient call at the same N and d, timed in the same run.")
    print()


def run_linear(cfg, timing, quick=False):
    """Every theory.linear benchmark of a configuration; prints the tables, returns the results."""
    lin = cfg["linear"]
    if quick:
        print("theory.linear, quick mode: the targets are set for the full sizes; at these small N the fixed cost "
              "of a call (input validation, allocation) weighs more, so a missed target here is expected.\n")
    compile_result = bench_linear.bench_compile(lin["compile"])
    print_linear_compile(compile_result)
    scaling = bench_linear.bench_gradient_scaling(**lin["scaling"], timing=timing)
    print_linear_scaling(scaling)
    naive = bench_linear.bench_naive(**lin["naive"], timing=timing)
    print_linear_naive(naive)
    flow = bench_linear.bench_flow(**lin["flow"])
    print_linear_flow(flow)
    return [compile_result, scaling, naive, flow]


def main(argv=None):
    code, _, _ = _main(argv)
    return code


def _main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test of the harness")
    parser.add_argument("--only", choices=["resnet", "linear", "fbm", "isotonic", "implicit", "topk"], help="run one family of benchmarks only")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="output directory (default: benchmarks/out)")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    suffix = "-quick" if args.quick else ""
    families = [args.only] if args.only else ["resnet", "linear", "fbm", "isotonic", "implicit", "topk"]
    args.out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    info = machine_info()
    print_machine(info)
    print(f"Mode: {'quick (smoke test, small sizes)' if args.quick else 'full'}; families: {', '.join(families)}\n")

    benchmarks, plot = [], None
    if "resnet" in families:
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
        benchmarks += [compile_result] + forward_results + [memory]
        plot = str(plot_path.relative_to(HERE.parent)) if plot_path.is_relative_to(HERE.parent) else str(plot_path)
        print()
    if "linear" in families:
        benchmarks += run_linear(cfg, cfg["timing"], quick=args.quick)
    if "fbm" in families:  # sizes and targets live in bench_fbm.FULL / QUICK
        benchmarks += bench_fbm.run(quick=args.quick, timing=cfg["timing"])
    if "isotonic" in families:  # sizes and targets live in bench_isotonic.FULL / QUICK
        benchmarks += bench_isotonic.run(quick=args.quick, timing=cfg["timing"])
    if "implicit" in families:  # sizes and targets live in bench_implicit.FULL / QUICK
        benchmarks += bench_implicit.run(quick=args.quick, timing=cfg["timing"])
    if "topk" in families:  # sizes and targets live in bench_topk.FULL / QUICK
        benchmarks += bench_topk.run(quick=args.quick, timing=cfg["timing"])
    if "topk" in families or "isotonic" in families:
        by_name = {b.get("name"): b for b in benchmarks}
        sorting = plot_sorting(by_name.get("topk_mask_scaling"), by_name.get("isotonic_vs_scipy"),
                               args.out / f"sorting{'-' + args.only if args.only else ''}{suffix}.png")
        print(f"Plot: {sorting}")
        if not args.quick and {"topk", "isotonic"} <= set(families):  # both panels: the README's figure
            shutil.copy(sorting, HERE.parent / "figures" / "gallery" / "benchmark__sorting.png")

    doc = {
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "families": families,
        "machine": info,
        "benchmarks": benchmarks,
        "load_average_end": load_average(),
        "plot": plot,
        "seconds": time.perf_counter() - started,
    }
    only = f"-{args.only}" if args.only else ""
    json_path = args.out / f"results{only}{suffix}.json"
    json_path.write_text(json.dumps(_clean(doc), indent=1, default=_json_default) + "\n")
    print(f"Results: {json_path} ({doc['seconds']:.0f} s)")
    return 0, doc, args


if __name__ == "__main__":
    sys.exit(main())
