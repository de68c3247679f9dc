"""Cost of ``theory.sweep``: per-task overhead of the schedulers and the speed-up of 2 workers over 1.

Overhead (``bench_overhead``)
    N = 2 w rounds of tasks that each sleep 1 s (``time.sleep``: the measure is the sweep's own cost,
    scheduling, transfer of the result and the cache write, not the CPU contention of a loaded
    machine) on w = 2 workers, through :func:`theory.sweep.sweep` with an empty cache. Overhead per
    task = (wall - ideal) w / N with ideal = ceil(N / w) x 1 s, reported as a fraction of the 1 s task;
    target < 5 %. Schedulers: the local process pool (its start is inside the timed call: it is part
    of every sweep) and a 2-process Dask ``LocalCluster`` started beforehand and reached through its
    address (its start, a few seconds, is reported apart: ``--scheduler dask`` pays it once per
    sweep), twice: fresh workers (they import the task's modules on first contact) and again.
    Compute tasks are not used for this: on a shared machine their duration measures the other jobs.

Speed-up (``bench_speedup``)
    ``theory sweep scaling.fig7_cell --grid 'beta=0.2:1.3:12,hurst=0.05:0.97:10'`` (120 cells of the
    reduced Figure 7 grid, preset ``check``), as a user runs it (a fresh process: start, imports and
    the Numba cache load included), with ``--workers 1`` and ``--workers 2``, each into an empty cache
    folder, alternated ``--repeats`` times; the ratio of the medians. Target >= 1.7 on 2 idle cores.
    The load average is recorded before and after: on a machine shared with other jobs the ratio
    measures the cores the sweep got, not the sweep. Where Linux groups the processes of a session for
    the scheduler (``/proc/sys/kernel/sched_autogroup_enabled``), a loaded machine gives the session
    the same CPU share whatever the number of its workers, and the measured ratio stays near 1. The
    CPU time of the runs (this process's children) is therefore recorded too, with the speed-up it
    implies on 2 idle cores: T1 / (T0 + (T2 - T0) / 2), with T1, T2 the CPU seconds of the 1- and
    2-worker runs and T0 those of a rerun that finds every task cached (start, imports, grid, cache):
    an estimate, labelled as such.

Run: ``python benchmarks/bench_sweep.py [--quick] [--repeats R]``; writes ``benchmarks/out/sweep.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _harness import format_table, load_average, machine_info  # noqa: E402

GRID = "beta=0.2:1.3:12,hurst=0.05:0.97:10"


@dataclass(frozen=True)
class SleepConfig:
    """A task that sleeps ``seconds`` (index only makes the tasks distinct)."""

    index: int = 0
    seconds: float = 1.0


def sleep_measure(config):
    time.sleep(config.seconds)
    return config.seconds


def sleep_summary(result):
    return {"seconds": result}


def _register():
    from theory.experiments import register

    return register("scaling.bench_sleep", config=SleepConfig,
                    presets={"check": SleepConfig(), "paper": SleepConfig()},
                    measure=sleep_measure, summary=sleep_summary)


def _sweep_once(name, grid, scheduler, workers, preset="check"):
    from theory.sweep import sweep

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        res = sweep(name, grid, preset=preset, scheduler=scheduler, workers=workers, out=tmp, stream=io.StringIO())
        wall = time.perf_counter() - start
    assert not res.failures, res.failures
    return wall, res


def bench_overhead(workers=2, rounds=4, task=1.0):
    # as `bench_sweep` (not __main__) so that Dask workers import these functions by name
    import bench_sweep

    bench_sweep._register()
    n = workers * rounds
    grid = f"index=0:{n - 1}:{n},seconds={task}"
    ideal = math.ceil(n / workers) * task
    rows = []
    wall, _ = _sweep_once("scaling.bench_sleep", grid, "local", workers)
    rows.append({"scheduler": "local pool (start included)", "tasks": n, "wall_s": wall,
                 "overhead_per_task": (wall - ideal) * workers / n / task})
    try:
        from distributed import LocalCluster
    except ImportError:
        rows.append({"scheduler": "dask: not installed (pip install 'theory[sweep]')"})
        return rows
    start = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        startup = time.perf_counter() - start
        wall, _ = _sweep_once("scaling.bench_sleep", grid, cluster.scheduler_address, workers)
        rows.append({"scheduler": "dask LocalCluster, fresh workers", "tasks": n, "wall_s": wall,
                     "overhead_per_task": (wall - ideal) * workers / n / task, "cluster_start_s": startup})
        wall, _ = _sweep_once("scaling.bench_sleep", grid, cluster.scheduler_address, workers)
        rows.append({"scheduler": "dask LocalCluster, second sweep", "tasks": n, "wall_s": wall,
                     "overhead_per_task": (wall - ideal) * workers / n / task})
    return rows


def _cli(grid, workers, out):
    """Run the command in a fresh process; (wall seconds, CPU seconds of it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "theory.cli", "sweep", "scaling.fig7_cell", "--grid", grid,
                           "--workers", str(workers), "--out", out], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _autogroup():
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return None


def bench_speedup(repeats=2, grid=GRID):
    wall = {1: [], 2: []}
    cpu = {1: [], 2: [], "cached": []}
    loads = [load_average()]
    for _ in range(repeats):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as tmp:
                w, c = _cli(grid, workers, tmp)
                wall[workers].append(w)
                cpu[workers].append(c)
                if workers == 2:  # everything but the tasks: start, imports, grid, cache reads
                    cpu["cached"].append(_cli(grid, 2, tmp)[1])
            loads.append(load_average())
    one, two = statistics.median(wall[1]), statistics.median(wall[2])
    c1, c2, c0 = (statistics.median(cpu[k]) for k in (1, 2, "cached"))
    return {"grid": grid, "tasks": 120 if grid == GRID else None, "seconds_1_worker": wall[1],
            "seconds_2_workers": wall[2], "speedup": one / two, "load_average": loads,
            "cpu_seconds_1_worker": cpu[1], "cpu_seconds_2_workers": cpu[2], "cpu_seconds_all_cached": cpu["cached"],
            # on 2 idle cores a single-threaded run's wall time is its CPU time; with 2 workers the task part
            # (CPU beyond a fully cached run) splits over the two processes
            "speedup_idle_estimate": c1 / (c0 + (c2 - c0) / 2), "autogroup": _autogroup()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of sleep tasks, 1 repeat of the speed-up")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    info = machine_info()
    print(f"{info['cpu']}, {info['cores']} cores, load average {info['load_average']}")
    over = bench_overhead(rounds=2 if args.quick else 4)
    print(format_table(["scheduler", "tasks", "wall", "overhead / task"],
                       [[r["scheduler"], r.get("tasks", "-"), f"{r['wall_s']:.2f} s" if "wall_s" in r else "-",
                         f"{100 * r['overhead_per_task']:.2f} %" if "overhead_per_task" in r else "-"] for r in over],
                       title="per-task overhead (target < 5 %)"))
    for r in over:
        if "cluster_start_s" in r:
            print(f"Dask LocalCluster start (2 processes): {r['cluster_start_s']:.2f} s, once per --scheduler dask sweep")
    speed = bench_speedup(1 if args.quick else args.repeats)
    r = [f"{t:.1f}" for t in speed["seconds_1_worker"]], [f"{t:.1f}" for t in speed["seconds_2_workers"]]
    print(f"theory sweep scaling.fig7_cell --grid '{speed['grid']}': wall 1 worker {r[0]} s, 2 workers {r[1]} s, "
          f"speed-up {speed['speedup']:.2f} (target >= 1.7); load average {speed['load_average']}")
    print(f"CPU seconds: 1 worker {speed['cpu_seconds_1_worker']}, 2 workers {speed['cpu_seconds_2_workers']}, "
          f"all cached {speed['cpu_seconds_all_cached']}; speed-up on 2 idle cores estimated from CPU time "
          f"{speed['speedup_idle_estimate']:.2f}; sched_autogroup {speed['autogroup']} (if on, the processes of one "
          "session share one CPU slice: on a loaded machine more workers do not get more CPU)")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "sweep.json").write_text(json.dumps({"machine": info, "overhead": over, "speedup": speed}, indent=1) + "\n")
    print(f"Results: {out / 'sweep.json'}")


if __name__ == "__main__":
    main()
