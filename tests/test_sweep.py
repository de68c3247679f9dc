"""theory.sweep: grids, the cache (resume, versions, atomic files), failures, bad input, plots."""

import hashlib
import io
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import _sweep_toy  # noqa: F401  (registers scaling.sweep_toy)
import theory
from theory.cli import main
from theory.experiments import experiment
from theory.sweep import (CACHE_FORMAT, SweepCacheError, SweepCacheWarning, SweepInputError, load_sweep, parse_grid,
                          plot_sweep, sweep, task_key)

TOY = "scaling.sweep_toy"
HERE = Path(__file__).resolve().parent


def run(grid, out, **kw):
    kw.setdefault("scheduler", "serial")
    stream = io.StringIO()
    return sweep(TOY, grid, out=out, stream=stream, **kw), stream.getvalue()


# --------------------------------------------------------------------------- grids


def test_grid_syntax_types_and_order(tmp_path):
    exp = experiment(TOY)
    axes = parse_grid("x=0:1:3,n=2|4,label=a|b", exp)
    assert axes == {"x": [0.0, 0.5, 1.0], "n": [2, 4], "label": ["a", "b"]}
    assert all(type(v) is int for v in axes["n"])
    assert parse_grid("n=1:10:4", exp) == {"n": [1, 4, 7, 10]}          # rounded to integers
    assert parse_grid("x=0.25", exp) == {"x": [0.25]}
    assert parse_grid("x=0.3:0.9:1", exp) == {"x": [0.3]}
    assert parse_grid({"x": [1, 2], "n": np.arange(1, 3)}, exp) == {"x": [1.0, 2.0], "n": [1, 2]}
    res, _ = run("x=1|2,n=1|2|3", tmp_path)
    assert res.points[:4] == [{"x": 1.0, "n": 1}, {"x": 1.0, "n": 2}, {"x": 1.0, "n": 3}, {"x": 2.0, "n": 1}]
    assert res.shape == (2, 3) and res.array("n").tolist() == [[1, 2, 3], [1, 2, 3]]


@pytest.mark.parametrize("grid, message", [
    ("x=0:1", "must be start:stop:count"),
    ("x=0:1:0", "count of the grid range of 'x' must be an integer >= 1"),
    ("x=0:1:two", "must be an integer >= 1"),
    ("n=1.5", "must be an integer"),
    ("n=1:3:5", "repeats values once rounded"),
    ("x=abc", "`x` must be a number; got 'abc'"),
    ("x=1,x=2", "appears twice"),
    ("x", "must be name=start:stop:count"),
    ("gamma=1", "has no parameter 'gamma'; its parameters: x, n, fail_above, sleep, label, seed"),
    ("label=0:1:2", "`label` of ToyConfig must be one of"),
    ("", "names no parameter"),
])
def test_malformed_grids(grid, message):
    with pytest.raises(SweepInputError, match=message):
        parse_grid(grid, experiment(TOY))


# --------------------------------------------------------------------------- cache


def read_task_file(path):
    """(header, summary, result) of a cache file, read as its format is documented: a JSON line with the
    format and the sha256 of every later byte, the header's JSON line, then the summary and result pickles."""
    first, _, body = path.read_bytes().partition(b"\n")
    stamp = json.loads(first)
    assert stamp["format"] == CACHE_FORMAT and hashlib.sha256(body).hexdigest() == stamp["sha256"]
    line, _, payload = body.partition(b"\n")
    header = json.loads(line)
    n = header["summary_bytes"]
    assert len(payload) == n + header["result_bytes"]
    return header, pickle.loads(payload[:n]), pickle.loads(payload[n:])


def test_cache_layout_header_and_replot_for_free(tmp_path):
    res, text = run("x=0:1:3", tmp_path)
    assert (res.computed, res.cached, res.failures) == (3, 0, [])
    files = sorted((tmp_path / "tasks").iterdir())
    assert len(files) == 3 and not [f for f in files if f.suffix != ".pkl"]   # no temporary file left
    cfg = experiment(TOY).config_for("check", x=0.5)
    path = tmp_path / "tasks" / f"{task_key(TOY, cfg)}.pkl"
    header, summary, full = read_task_file(path)
    assert header["format"] == CACHE_FORMAT and header["version"] == theory.__version__
    assert header["code"] == res.code == theory.sweep._code(experiment(TOY)) and len(res.code) == 24
    assert header["config"] == {"x": 0.5, "n": 3, "fail_above": float("inf"), "sleep": 0.0, "label": "a", "seed": 0}
    assert header["experiment"] == TOY and header["preset"] == "check" and header["key"] == path.stem
    assert summary == res.summaries[1] and full.config == cfg
    assert res.result(1).values.tolist() == full.values.tolist()
    assert "\r" not in text and text.count("\n") == 1 and "3/3 tasks (3 computed" in text   # not a TTY
    again, _ = run("x=0:1:3", tmp_path)
    assert (again.computed, again.cached) == (0, 3) and again.summaries == res.summaries
    # the key is the full config: another preset (n = 5) is another task
    other, _ = run("x=0:1:3", tmp_path, preset="paper")
    assert other.computed == 3 and len(list((tmp_path / "tasks").iterdir())) == 6


def test_resume_after_losing_some_tasks(tmp_path):
    full, _ = run("x=0:1:6", tmp_path)
    files = sorted((tmp_path / "tasks").iterdir())
    kept = {f: f.stat().st_mtime_ns for f in files[2:]}
    for f in files[:2]:
        f.unlink()
    (tmp_path / "tasks" / files[2].name).write_bytes(b"truncated")   # a damaged file is recomputed
    res, text = run("x=0:1:6", tmp_path)
    assert (res.computed, res.cached, res.stale) == (3, 3, 1) and "unreadable" in text
    assert res.summaries == full.summaries
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items() if f != files[2])


def test_resume_after_a_real_interruption(tmp_path):
    """SIGINT to a running sweep (2 processes, 0.3 s tasks): what finished is kept, the rerun computes the rest."""
    # as from a terminal: a job started in the background by a non-interactive shell (a CI runner) inherits
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler
    code = ("import signal, sys, _sweep_toy\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from theory.sweep import sweep\n"
            f"sweep('{TOY}', 'x=0:1:16', scheduler='local', workers=2, out=sys.argv[1], preset='check')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    grid_sleep = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", code.replace("'x=0:1:16'", "'x=0:1:40,sleep=0.3'"), grid_sleep],
                            env=env, stderr=subprocess.PIPE, text=True)
    tasks = tmp_path / "tasks"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not tasks.is_dir() or len(list(tasks.glob("*.pkl"))) < 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "interrupted; the finished tasks are cached: run the same command again" in err, \
        (proc.returncode, err)
    done = len(list(tasks.glob("*.pkl")))
    assert 4 <= done < 40 and not list(tasks.glob(".*"))    # no half-written file
    res, _ = run("x=0:1:40,sleep=0.3", tmp_path, scheduler="local", workers=2)
    assert (res.computed, res.cached) == (40 - done, done) and not res.failures


def test_cache_of_another_version_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setattr(theory, "__version__", "0.0.0-old")
    old, _ = run("x=0:1:3", tmp_path)
    monkeypatch.undo()
    res, text = run("x=0:1:3", tmp_path)
    assert (res.computed, res.cached, res.stale) == (3, 0, 3)
    assert "3 cached task(s) were written by another version of theory" in text
    again, _ = run("x=0:1:3", tmp_path)
    assert (again.computed, again.cached) == (0, 3)


def test_cache_written_before_a_code_change_is_never_served(tmp_path, monkeypatch):
    import theory.sweep as sweep_module

    real = sweep_module._code_sources
    before = {**real(experiment(TOY)), "theory.rates": "0" * 64}   # as if theory.rates had other source
    monkeypatch.setattr(sweep_module, "_code_sources", lambda exp: before)
    old, _ = run("x=0:1:3", tmp_path)
    assert old.code != sweep_module._code_fingerprint.fingerprint(real(experiment(TOY)))
    monkeypatch.undo()
    with pytest.raises(SweepCacheError, match="the code it ran has changed since it was written"):
        old.__class__(**{**old.__dict__, "code": ""}).result(0)   # the full result is refused too
    with pytest.raises(SweepInputError, match="current code"):
        load_sweep(TOY, out=tmp_path)
    res, text = run("x=0:1:3", tmp_path)
    assert (res.computed, res.cached, res.stale) == (3, 0, 3) and res.summaries == old.summaries
    assert "3 cached task(s) ran code that has changed since (theory.rates); recomputing them" in text
    assert "another version" not in text
    again, _ = run("x=0:1:3", tmp_path)
    assert (again.computed, again.cached) == (0, 3)
    manifest = json.loads((tmp_path / "sweep.json").read_text())
    assert manifest["code"] == res.code and manifest["modules"]["theory.rates"] == real(experiment(TOY))["theory.rates"]


def test_serial_and_process_pool_agree_bit_for_bit(tmp_path):
    a, _ = run("x=0:2:5,seed=1|2", tmp_path / "a", scheduler="serial")
    b, _ = run("x=0:2:5,seed=1|2", tmp_path / "b", scheduler="local", workers=2)
    assert a.summaries == b.summaries
    assert all(np.array_equal(a.result(i).values, b.result(i).values) for i in range(len(a)))


# --------------------------------------------------------------------------- failures


def test_failing_task_is_reported_and_the_others_complete(tmp_path):
    res, text = run("x=0:3:4,fail_above=1.5", tmp_path, scheduler="local", workers=2)
    assert [p["x"] for p, _ in res.failures] == [2.0, 3.0]
    assert "ValueError: x = 2.0 is above fail_above = 1.5" in res.failures[0][1]
    assert "FAILED x=2, fail_above=1.5: ValueError: x = 2.0 is above" in text
    assert res.summaries[:2] == [{"sum": 0.0, "x2": 0.0, "n": 3}, res.summaries[1]] and res.summaries[2:] == [None] * 2
    assert len(list((tmp_path / "tasks").iterdir())) == 2 and np.isnan(res.array("x2")[2:]).all()
    # the command exits 1; the failures are recomputed (not cached), the successes not
    assert main(["sweep", TOY, "--grid", "x=0:3:4,fail_above=1.5", "--scheduler", "serial", "--out",
                 str(tmp_path)]) == 1


# --------------------------------------------------------------------------- bad input: exit 2


@pytest.mark.parametrize("args, message", [
    (["scaling.nope", "--grid", "x=1"], "no experiment named 'scaling.nope'; known: "),
    ([TOY, "--grid", "x=1", "--preset", "gpu"], "has no preset 'gpu'; its presets: check, paper"),
    ([TOY, "--grid", "gamma=1"], "has no parameter 'gamma'; its parameters: x, n, fail_above"),
    ([TOY, "--grid", "x=0:1:3,n=1|0"], "grid value of parameter 'n': `n` of ToyConfig must be an integer >= 1; got 0."),
    ([TOY, "--grid", "x=0:1"], "must be start:stop:count"),
    ([TOY, "--grid", "x=1", "--workers", "0"], "`workers` must be an int >= 1"),
    ([TOY, "--grid", "x=1", "--scheduler", "threads"], "`scheduler` must be 'local', 'dask', 'serial'"),
    ([TOY], "--grid is required"),
])
def test_bad_input_exits_2_before_any_work(args, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", *args, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_fig7_cell_value_outside_its_domain_exits_2(tmp_path, capsys):
    assert main(["sweep", "scaling.fig7_cell", "--grid", "beta=0.5,hurst=0.5:1:3", "--out", str(tmp_path / "o")]) == 2
    assert "grid value of parameter 'hurst': `hurst` of Fig7CellConfig must be a finite number in (0, 1); got 1.0." \
        in capsys.readouterr().err


def test_unwritable_output_folder_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["sweep", TOY, "--grid", "x=1", "--out", str(blocker / "sub")]) == 2
    assert f"output folder {str(blocker / 'sub')!r} is not writable" in capsys.readouterr().err


def test_unreachable_scheduler_exits_2(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    import theory.sweep

    monkeypatch.setattr(theory.sweep, "CONNECT_TIMEOUT", 1.0)
    start = time.perf_counter()
    assert main(["sweep", TOY, "--grid", "x=1", "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)]) == 2
    assert "scheduler 'tcp://127.0.0.1:9' is unreachable" in capsys.readouterr().err
    assert time.perf_counter() - start < 15 and not list((tmp_path / "tasks").iterdir())


# --------------------------------------------------------------------------- plots


def test_plot_from_the_cache_without_computing(tmp_path, capsys):
    run("x=0:1:4,n=1|2|3", tmp_path)
    mtimes = {f: f.stat().st_mtime_ns for f in (tmp_path / "tasks").iterdir()}
    assert main(["sweep", TOY, "--out", str(tmp_path), "--plot", "sum,x2"]) == 0
    png = tmp_path / "sum_x2.png"
    assert png.stat().st_size > 1000 and capsys.readouterr().out.strip() == str(png)
    assert {f: f.stat().st_mtime_ns for f in (tmp_path / "tasks").iterdir()} == mtimes
    run("x=0:1:4", tmp_path / "one")
    assert plot_sweep(load_sweep(TOY, out=tmp_path / "one"), ["x2"]).is_file()
    # a grid partly cached: drawn with blanks; nothing cached: exit 2
    assert main(["sweep", TOY, "--grid", "x=0:1:7,n=1|2|3", "--out", str(tmp_path), "--plot", "x2"]) == 0
    assert "not cached, left blank" in capsys.readouterr().out
    assert main(["sweep", TOY, "--grid", "x=5|6", "--out", str(tmp_path), "--plot"]) == 2
    assert "no task of this grid is cached" in capsys.readouterr().err
    assert main(["sweep", TOY, "--out", str(tmp_path), "--plot", "nope"]) == 2
    assert "`field` must be a summary field" in capsys.readouterr().err


def test_progress_line_on_a_terminal(tmp_path):
    res, text = run("x=0:1:5", tmp_path, progress=True)
    assert "\r5/5 tasks" in text and "/s" in text and "left" in text
    assert text.rstrip("\n").endswith(f"5/5 tasks (5 computed, 0 from the cache, 0 failed) in {res.seconds:.1f} s "
                                      f"-> {tmp_path}")


def test_a_worker_that_dies_fails_its_tasks_not_the_sweep(tmp_path):
    """A task that kills its process (os._exit) breaks the pool: the tasks not finished are reported as
    failed, what finished before is kept in the cache, and a rerun computes only the rest."""
    stream = io.StringIO()
    res = sweep("scaling.sweep_toy_dying", "x=0:1:4,fail_above=2", scheduler="local", workers=2, out=tmp_path,
                stream=stream)
    assert not res.failures and res.computed == 4
    res = sweep("scaling.sweep_toy_dying", "x=0:3:4,fail_above=2.5", scheduler="local", workers=2, out=tmp_path,
                stream=stream)
    assert any(p["x"] == 3.0 for p, _ in res.failures)
    assert all("worker lost (BrokenProcessPool" in msg for _, msg in res.failures)
    failed = [p for p, _ in res.failures]
    assert sum(s is not None for s in res.summaries) >= 1      # the tasks finished before the crash
    assert all((s is None) == (p in failed) for p, s in zip(res.points, res.summaries))


# --------------------------------------------------------------------------- a verified cache
# Before: the cache trusted its files. A flipped bit in a task's result, one task's file copied over
# another's, or a truncated result part were served "from the cache" with exit 0 (the copied file
# gave the other task's values); the truncation was noticed only at result().


def _damage(files):
    """Flip one bit in the result part of files[0], copy files[1] over files[2], cut files[3] short."""
    data = bytearray(files[0].read_bytes())
    data[-40] ^= 0x04
    files[0].write_bytes(bytes(data))
    files[2].write_bytes(files[1].read_bytes())
    files[3].write_bytes(files[3].read_bytes()[:-25])
    return [files[0], files[2], files[3]]


def _by_key(res):
    return {key: i for i, key in enumerate(res.keys)}


def test_damaged_cache_files_are_recomputed_never_served(tmp_path):
    grid = "x=0.5:2.5:5,n=4"
    fresh, _ = run(grid, tmp_path / "fresh")
    first, _ = run(grid, tmp_path / "cache")
    files = [tmp_path / "cache" / "tasks" / f"{k}.pkl" for k in first.keys]
    damaged = _damage(files[:4])
    res, text = run(grid, tmp_path / "cache")
    assert (res.computed, res.cached, res.stale) == (3, 2, 3)
    for path in damaged:
        assert f"warning: the cache file {path} is not used" in text
    assert "checksum does not match" in text and "holds another task" in text and "truncated" in text
    assert res.summaries == fresh.summaries
    for i in range(len(res)):
        assert np.array_equal(res.result(i).values, fresh.result(i).values)
    again, text = run(grid, tmp_path / "cache")
    assert (again.computed, again.cached) == (0, 5) and "warning" not in text


def test_load_sweep_and_result_treat_a_damaged_file_as_missing(tmp_path):
    grid = "x=0.5:2.5:5,n=4"
    first, _ = run(grid, tmp_path)
    files = [tmp_path / "tasks" / f"{k}.pkl" for k in first.keys]
    damaged = _damage(files[:4])
    with pytest.warns(SweepCacheWarning) as caught:
        loaded = load_sweep(TOY, grid, out=tmp_path)
    assert sorted(str(w.message).split(" is not used")[0].split()[-1] for w in caught) == sorted(map(str, damaged))
    assert loaded.summaries == [None, first.summaries[1], None, None, first.summaries[4]]
    for i in (0, 2, 3):
        with pytest.raises(SweepCacheError, match=f"cannot be read: {files[i]} "):
            first.result(i)
    assert first.result(1).values.tolist() == loaded.result(1).values.tolist()
    stream = io.StringIO()
    assert load_sweep(TOY, out=tmp_path, stream=stream).summaries == loaded.summaries   # the recorded grid
    assert stream.getvalue().count("warning: the cache file") == 3


def test_every_single_bit_flip_of_a_task_file_is_detected(tmp_path):
    """No bit of a task file (header, checksum, summary, result) can flip unnoticed: the point is missing."""
    run("x=1.5", tmp_path)
    path = next((tmp_path / "tasks").iterdir())
    original = path.read_bytes()
    assert load_sweep(TOY, "x=1.5", out=tmp_path).summaries[0] is not None
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", SweepCacheWarning)
        for pos in range(len(original)):
            data = bytearray(original)
            data[pos] ^= 1 << (pos % 8)
            path.write_bytes(bytes(data))
            with pytest.raises(SweepInputError, match="no task of this grid is cached"):
                load_sweep(TOY, "x=1.5", out=tmp_path)
    path.write_bytes(original)
    assert load_sweep(TOY, "x=1.5", out=tmp_path).summaries[0] is not None


def test_a_file_of_the_older_pickle_format_is_recomputed_quietly(tmp_path):
    res, _ = run("x=1|2", tmp_path)
    path = tmp_path / "tasks" / f"{res.keys[0]}.pkl"
    path.write_bytes(pickle.dumps({"format": "theory-sweep/1", "experiment": TOY, "version": theory.__version__,
                                   "summary": {"sum": 99.0, "x2": 99.0, "n": 3}}) + pickle.dumps(None))
    again, text = run("x=1|2", tmp_path)
    assert (again.computed, again.cached, again.stale) == (1, 1, 1) and "warning" not in text
    assert again.summaries == res.summaries


# --------------------------------------------------------------------------- sizes and paths: exit 2, one line
# Before: a range of 10**12 values tried to allocate 7 TiB (a MemoryError traceback, exit 1), a count
# of 10**12 went to the tasks, and --png onto a folder or in an unknown format failed after drawing.


@pytest.mark.parametrize("args, message", [
    (["scaling.fig7_cell", "--grid", "beta=0.2:1.3:1000000000000"],
     "count of the range of 'beta' (--grid) must be at most 1000000"),
    ([TOY, "--grid", "x=0:1:1001,n=1:1000:1000"], "the grid (--grid) has 1001000 points (1001 x 1000), more than"),
    (["scaling.fig7_cell", "--grid", "depth=100|1000000000000"],
     "grid point depth=1000000000000: `depth` of scaling.fig7_cell = 1000000000000 is above 2147483648"),
    ([TOY, "--grid", "x=1", "--png", "a.png"], "--png names the image of --plot"),
])
def test_oversized_grids_exit_2_before_any_allocation(args, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not out.exists()


def test_plot_paths_are_checked_before_drawing(tmp_path, capsys):
    run("x=0:1:3", tmp_path)
    (tmp_path / "folder.png").mkdir()
    assert main(["sweep", TOY, "--out", str(tmp_path), "--plot", "x2", "--png", str(tmp_path / "folder.png")]) == 2
    assert "--png" in capsys.readouterr().err
    assert main(["sweep", TOY, "--out", str(tmp_path), "--plot", "x2", "--png", str(tmp_path / "a.nope")]) == 2
    err = capsys.readouterr().err
    assert "(--png)" in err and err.count("\n") == 1
    (tmp_path / "sweep.json").write_text('{"format": "theory-sweep/2"}')
    assert main(["sweep", TOY, "--out", str(tmp_path), "--plot", "x2"]) == 2
    assert "is not a sweep record" in capsys.readouterr().err


def test_a_cache_that_cannot_be_written_exits_2(tmp_path, capsys, monkeypatch):
    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)     # the rename that completes each file's atomic write
    assert main(["sweep", TOY, "--grid", "x=0:1:3", "--scheduler", "serial", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err


def test_sigterm_stops_a_sweep_with_its_cache_and_how_to_resume(tmp_path):
    """SIGTERM (a batch scheduler's stop) ends `theory sweep` like Ctrl-C: exit 143, the final line names the
    cache folder and how to resume, and the rerun computes only what is missing (before: a silent end)."""
    code = ("import sys, _sweep_toy\nfrom theory.cli import main\n"
            f"sys.exit(main(['sweep', '{TOY}', '--grid', 'x=0:1:16,sleep=0.3', '--workers', '2', '--out', "
            "sys.argv[1]]))\n").replace("x=0:1:16", "x=0:1:40")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], env=env, stderr=subprocess.PIPE, text=True)
    tasks = tmp_path / "tasks"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not tasks.is_dir() or len(list(tasks.glob("*.pkl"))) < 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, (proc.returncode, err)
    last = err.strip().splitlines()[-1]
    assert "stopped by SIGTERM; the finished tasks are cached: run the same command again to resume" in last
    assert last.endswith(f"-> {tmp_path}")
    done = len(list(tasks.glob("*.pkl")))
    res, _ = run("x=0:1:40,sleep=0.3", tmp_path, scheduler="local", workers=2)
    assert (res.computed, res.cached) == (40 - done, done) and not res.failures


def test_the_time_left_is_estimated_from_computed_tasks_only_after_a_few():
    from theory.sweep import _Progress

    stream = io.StringIO()
    bar = _Progress(10, stream, live=True)
    bar.update(True)
    assert "estimating the time left" in stream.getvalue()
    bar.first -= 100.0  # a slow first task (workers starting, kernels compiling) ...
    bar.update(True)
    bar.last = 0.0
    bar.update(True)
    bar.first = time.perf_counter() - 2.0  # ... then two tasks a second
    bar.last = 0.0
    bar.update(True)
    rate = bar.rate(time.perf_counter())
    assert rate is not None and 1.0 < rate < 2.0
    assert " left" in stream.getvalue().rsplit("\r", 1)[-1]
