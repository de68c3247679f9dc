"""Sweeps on Dask: a 2-worker LocalCluster, and a running scheduler reached by its address, give the
numbers of the process pool and of a serial loop bit for bit (skipped without dask[distributed];
`make test` installs it)."""

import io

import numpy as np
import pytest

pytest.importorskip("distributed")

import _sweep_toy  # noqa: E402,F401  (registers scaling.sweep_toy)
from theory.cli import main  # noqa: E402
from theory.sweep import sweep  # noqa: E402

GRID = "beta=0.3|0.8,hurst=0.3|0.7,depth=30,width=4,draws=2"


def _run(out, **kw):
    return sweep("scaling.fig7_cell", GRID, out=out, stream=io.StringIO(), **kw)


def test_local_cluster_pool_and_serial_agree_bit_for_bit(tmp_path):
    serial = _run(tmp_path / "serial", scheduler="serial")
    pool = _run(tmp_path / "pool", scheduler="local", workers=2)
    dask = _run(tmp_path / "dask", scheduler="dask", workers=2)
    assert serial.computed == pool.computed == dask.computed == 4
    assert serial.summaries == pool.summaries == dask.summaries
    for i in range(4):
        a, b, c = serial.result(i), pool.result(i), dask.result(i)
        assert np.array_equal(a.hidden_draws, b.hidden_draws) and np.array_equal(a.hidden_draws, c.hidden_draws)
        assert np.array_equal(a.gradient_draws, c.gradient_draws)
    # the cache written through Dask is the same cache: a serial rerun computes nothing
    again = _run(tmp_path / "dask", scheduler="serial")
    assert (again.computed, again.cached) == (0, 4)


def test_address_of_a_running_scheduler_and_failures(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        stream = io.StringIO()
        res = sweep("scaling.sweep_toy", "x=0:3:4,fail_above=1.5", scheduler=cluster.scheduler_address,
                    out=tmp_path, stream=stream)
        assert [p["x"] for p, _ in res.failures] == [2.0, 3.0] and res.summaries[1]["x2"] == 1.0
        assert "FAILED x=2, fail_above=1.5: ValueError" in stream.getvalue()
        assert main(["sweep", "scaling.sweep_toy", "--grid", "x=0|1", "--scheduler", cluster.scheduler_address,
                     "--out", str(tmp_path)]) == 0


def test_a_finished_dask_sweep_prints_its_final_line_only(tmp_path):
    """No shutdown warnings of Dask's nannies and workers after the sweep's own last line (run in a child process,
    where Dask's logging goes to stderr as it does for a user)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    code = ("import sys, _sweep_toy\nfrom theory.cli import main\n"
            "sys.exit(main(['sweep', 'scaling.sweep_toy', '--grid', 'x=0:1:4,sleep=0.2', '--scheduler', 'dask', "
            "'--workers', '2', '--out', sys.argv[1]]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("scaling.sweep_toy: 4/4 tasks"), done.stderr
