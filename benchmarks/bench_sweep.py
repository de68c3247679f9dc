"""Cost of ``theory.sweep``: per-task overhead of the schedulers and the speed-up of 2 workers over 1.

Overhead (``bench_overhead``)
    N = 2 w rounds of tasks that each sleep 1 s (``time.sleep``: the measure is the sweep's own cost,
    scheduling, transfer of the result and the cache write, not the CPU contention of a loaded
    machine) on w = 2 workers, through :func:`theory.sweep.sweep` with an empty cache. Overhead per
    task = (wall - ideal) w / N with ideal = ceil(N / w) x 1 s, reported as a fraction of the 1 s task;
    target < 5 %. Schedulers: the local process pool (its start is inside the timed call: it is part
    of every sweep) and a 2-process Dask ``LocalCluster`` started beforehand and reached through its
    address (its start, a few seconds, is reported apart: ``--scheduler dask`` pays it once per
    sweep), twice: fresh workers (they import the task's modules on first contact) and again. The same measure with real compute tasks (``scaling.fig7_cell`` at depth 1000, width 40,
    2 draws, about 1 s) is reported too: there wall x w - sum of the task times (measured inside the
    workers) per task, which also counts the contention between the two workers.

Speed-up (``bench_speedup``)
    ``theory sweep scaling.fig7_cell --grid 'beta=0.2:1.3:12,hurst=0.05:0.97:10'`` (120 cells of the
    reduced Figure 7 grid, preset ``check``), as a user runs it (a fresh process: start, imports and
    the Numba cache load included), with ``--workers 1`` and ``--workers 2``, each into an empty cache
    folder, alternated ``--repeats`` times; the ratio of the medians. Target >= 1.7 on 2 idle cores.
    The load average is recorded before and after: on a machine shared with other jobs the ratio
    measures the cores the sweep got, not the sweep.

Run: ``python benchmarks/bench_sweep.py [--quick] [--repeats R]``; writes ``benchmarks/out/sweep.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import math
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
        # compute tasks of about 1 s: the real cell at the paper's size with 2 draws
        cell = "beta=0.3:1.2:8,depth=1000,width=40,draws=2"
        for label, scheduler in (("local pool, fig7_cell ~1 s (+contention)", "local"),
                                 ("dask LocalCluster, fig7_cell ~1 s (+contention)", cluster.scheduler_address)):
            _sweep_once("scaling.fig7_cell", "beta=0.5,depth=60,width=4,draws=1", scheduler, workers)  # warm
            wall, res = _sweep_once("scaling.fig7_cell", cell, scheduler, workers)
            busy = sum(res.task_seconds)
            rows.append({"scheduler": label, "tasks": len(res), "wall_s": wall, "mean_task_s": busy / len(res),
                         "overhead_per_task": (wall * workers - busy) / busy})
    return rows


def bench_speedup(repeats=2, grid=GRID):
    times = {1: [], 2: []}
    loads = [load_average()]
    for _ in range(repeats):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "theory.cli", "sweep", "scaling.fig7_cell", "--grid", grid,
                                       "--workers", str(workers), "--out", tmp], cwd=ROOT, capture_output=True,
                                      text=True)
                times[workers].append(time.perf_counter() - start)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr)
            loads.append(load_average())
    one, two = statistics.median(times[1]), statistics.median(times[2])
    return {"grid": grid, "tasks": 120 if grid == GRID else None, "seconds_1_worker": times[1],
            "seconds_2_workers": times[2], "speedup": one / two, "load_average": loads}


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
    print(f"theory sweep scaling.fig7_cell --grid '{speed['grid']}': 1 worker {speed['seconds_1_worker']} s, "
          f"2 workers {speed['seconds_2_workers']} s, speed-up {speed['speedup']:.2f} (target >= 1.7); "
          f"load average {speed['load_average']}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "sweep.json").write_text(json.dumps({"machine": info, "overhead": over, "speedup": speed}, indent=1) + "\n")
    print(f"Results: {out / 'sweep.json'}")


if __name__ == "__main__":
    main()
