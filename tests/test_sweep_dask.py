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
