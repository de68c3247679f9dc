"""``theory check`` on several processes: the check files split into balanced groups, one pytest process each.

A first run compiles the Numba kernels its checks call (about three CPU-minutes) and every run then measures the
claims (about five); both are one core's work in a single pytest process. With ``--jobs N`` the check files are
split into N groups of about equal duration (the durations of the last report, ``reports/claims.json``; a file it
does not know counts as the mean), each group runs in its own pytest process with its own temporary claims report,
and the records of all groups are merged into the cumulative report under its lock
(:func:`theory.pytest_plugin.write_cumulative`), exactly as one process would have written them. The kernels a
group needs are compiled in that group's process, so the compilation is shared among the cores too (two groups
needing the same kernel may both compile it; Numba writes its cache atomically, so neither breaks the other). On an
empty cache, a full run first compiles the kernel families that several check files share (the residual and
momentum networks), each once, spread over the processes (:mod:`theory._shared_kernels`).

The terminal shows, for each group, its compile notice and its result line while the groups run, then the claims
table of the run (failures first) and the summary line; the full output of each group is kept in
``<report dir>/logs/check-<i>.log``. Exit codes: 0 every check passed or skipped, 1 a claim failed, 2 a group
could not run (its log's end is shown), 130 interrupted (the groups are stopped).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["split_files", "file_durations", "run_groups"]

_PERCENT = re.compile(r"\[\s*(\d+)%\]\s*$")
_RESULT = re.compile(r"^=*\s*(?:\d+ (?:passed|failed|skipped|deselected|errors?|xfailed|xpassed)\b.*) in [0-9.]+s")


def split_files(files: list[Path], durations: dict[Path, float], jobs: int) -> list[list[Path]]:
    """``files`` in ``jobs`` groups of about equal total duration (longest first, each to the lightest group).

    Deterministic: ties are broken by the file name. Groups that would be empty are left out.

    Examples
    --------
    >>> [[p.name for p in g] for g in split_files([Path("a"), Path("b"), Path("c")], {Path("a"): 3.0,
    ...                                             Path("b"): 2.0, Path("c"): 2.0}, 2)]
    [['a'], ['b', 'c']]
    """
    if jobs < 1:
        raise ValueError(f"`jobs` must be at least 1; got {jobs}")
    known = [d for d in durations.values() if d > 0]
    default = sum(known) / len(known) if known else 1.0
    order = sorted(files, key=lambda f: (-durations.get(f, default), f.name))
    groups: list[list[Path]] = [[] for _ in range(min(jobs, len(files)))]
    loads = [0.0] * len(groups)
    for f in order:
        i = min(range(len(groups)), key=lambda k: (loads[k], k))
        groups[i].append(f)
        loads[i] += durations.get(f, default)
    return [sorted(g, key=lambda f: f.name) for g in groups if g]


def file_durations(report_dir: Path, root: Path, selected: set[str] | None = None) -> dict[Path, float]:
    """Seconds per check file from the claims report in ``report_dir``, counting only the claim IDs of
    ``selected`` when given (empty when there is no report or it is unreadable: the split then counts files)."""
    from theory.report import load_report

    try:
        claims = load_report(report_dir)["claims"]
    except (OSError, ValueError):  # none yet, or unreadable (the run's own write moves it aside and says so)
        return {}
    out: dict[Path, float] = {}
    for c in claims:
        test, seconds = c.get("test"), c.get("seconds")
        if selected is not None and c.get("id") not in selected:
            continue
        if isinstance(test, str) and "::" in test and isinstance(seconds, (int, float)):
            path = root / test.partition("::")[0]
            out[path] = out.get(path, 0.0) + float(seconds)
    return out


def _selection(base_args: list[str], rest: list[str], root: Path, tmp: Path) -> list[dict] | None:
    """The claims the run selects (``--claims-list`` of a collection), or None when collecting fails."""
    out = tmp / "selected.json"
    done = subprocess.run([sys.executable, "-m", "pytest", *base_args, *rest, "--collect-only", "-q",
                           f"--claims-list={out}", str(root / "checks")], cwd=root, capture_output=True, text=True)
    if done.returncode not in (0, 5) or not out.is_file():
        return None
    return json.loads(out.read_text(encoding="utf-8"))


class _Group:
    """One pytest process: its command, its output (kept in memory and in its log), its progress."""

    def __init__(self, index: int, files: list[Path], command: list[str], log: Path, env: dict, root: Path,
                 say) -> None:
        self.index, self.files, self.log, self.say = index, files, log, say
        self.percent = 0
        self.result = ""
        self.lines: list[str] = []
        self.started = time.perf_counter()
        self.seconds = 0.0
        self.process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, encoding="utf-8", errors="replace", bufsize=1)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.log, "w", encoding="utf-8", buffering=1) as log:  # line-buffered: `tail -f` follows it
            for line in self.process.stdout:
                log.write(line)
                line = line.rstrip("\n")
                self.lines.append(line)
                found = _PERCENT.search(line)
                if found:
                    self.percent = int(found.group(1))
                text = line.strip()
                if "compiling the Numba kernels" in text or (text.startswith("compiled ") and "Numba kernel" in text):
                    self.say(f"[group {self.index}] {text}")
                elif _RESULT.match(text):
                    self.result = text.strip("= ")
        self.process.wait()
        self.seconds = time.perf_counter() - self.started

    def wait(self) -> int:
        self.thread.join()
        return self.process.returncode

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _group_env(jobs: int) -> dict:
    """The environment of a group: the cores shared among the groups (BLAS and Numba threads), unless set."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the group's lines reach its log as they are written
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    threads = str(max(1, cores // jobs))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env.setdefault(name, threads)
    return env


def _compile_shared(jobs: int, env: dict, root: Path, logs: Path, say) -> None:
    """On an empty cache, compile the kernels that several check files share once, in ``jobs`` processes, before
    the groups start (:mod:`theory._shared_kernels`); nothing when they are cached. A failure is only reported:
    the groups then compile what is missing, as without this step."""
    from theory._shared_kernels import cold, parts

    todo = parts(cold(), jobs)
    if not todo:
        return
    names = "; ".join(", ".join(f.name for f in p) for p in todo)
    say(f"theory check: compiling the Numba kernels several check files share, once, in {len(todo)} "
        f"process{'es' if len(todo) > 1 else ''} ({names})")
    start = time.perf_counter()
    procs = []
    try:
        for i, part in enumerate(todo, start=1):
            with open(logs / f"shared-{i}.log", "w", encoding="utf-8") as log:
                procs.append(subprocess.Popen([sys.executable, "-m", "theory._shared_kernels", *[f.name for f in part]],
                                              cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT))
        codes = [p.wait() for p in procs]
    except BaseException:
        for p in procs:
            if p.poll() is None:
                p.kill()
        raise
    failed = [str(logs / f"shared-{i}.log") for i, c in enumerate(codes, start=1) if c != 0]
    say(f"theory check: shared kernels compiled in {time.perf_counter() - start:.0f} s"
        + (f" (failures, the groups compile what is missing: {', '.join(failed)})" if failed else ""))


def run_groups(base_args: list[str], rest: list[str], files: list[Path], root: Path, report_dir: Path, jobs: int,
               *, say=print, stream=None) -> int:
    """Run the checks of ``files`` in ``jobs`` pytest processes and merge their records into ``report_dir``.

    Parameters
    ----------
    base_args : list of str
        The plugin's options (``-p theory.pytest_plugin``, ``--paper``, ``--slow``, ...), without a report folder.
    rest : list of str
        The user's further pytest arguments (``-x``, ``-k EXPR``, ...), given to every group.
    files : list of Path
        The check files.
    root : Path
        The repository root (the groups' working directory).
    report_dir : Path
        The cumulative claims report's folder.
    jobs : int
        Number of groups (at most the number of files).
    say : callable
        Where the lines go.

    Returns
    -------
    int
        The exit code (see the module's docstring).
    """
    from theory.pytest_plugin import run_notes, write_cumulative
    from theory.report import load_report, render_table, summary_line

    with tempfile.TemporaryDirectory(prefix="theory-check-") as tmp:
        selected = _selection(base_args, rest, root, Path(tmp))
        if selected is not None:  # only the files holding a selected claim, weighed by those claims
            held = {root / c["test"].partition("::")[0] for c in selected if "::" in str(c.get("test"))}
            files = [f for f in files if f in held] or files
            durations = file_durations(report_dir, root, {c["id"] for c in selected})
        else:  # the groups' own collection will say what is wrong
            durations = file_durations(report_dir, root)
        groups_files = split_files(files, durations, jobs)
        logs = report_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        env = _group_env(len(groups_files))
        live = bool(getattr(stream or sys.stderr, "isatty", lambda: False)())
        say(f"theory check: {len(groups_files)} process{'es' if len(groups_files) > 1 else ''}, the check files "
            f"split by their last durations (logs in {logs})")
        groups: list[_Group] = []
        try:
            if len(groups_files) > 1 and not any(a.startswith(("--paper", "-k", "-m")) for a in base_args + rest):
                _compile_shared(len(groups_files), env, root, logs, say)
            for i, group in enumerate(groups_files, start=1):
                command = [sys.executable, "-u", "-m", "theory._check_pool", *base_args, f"--claims-report={Path(tmp) / str(i)}",
                           *rest, *[str(f) for f in group]]
                groups.append(_Group(i, group, command, logs / f"check-{i}.log", env, root, say))
            while any(g.thread.is_alive() for g in groups):
                if live:
                    status = ", ".join(f"group {g.index} {g.percent}%" for g in groups)
                    (stream or sys.stderr).write(f"\r{status}")
                    (stream or sys.stderr).flush()
                time.sleep(0.5)
            if live:
                (stream or sys.stderr).write("\n")
            codes = [g.wait() for g in groups]
        except KeyboardInterrupt:
            for g in groups:
                g.stop()
            say("theory check: interrupted; no report written for this run")
            return 130
        for g, code in zip(groups, codes):
            say(f"[group {g.index}] {len(g.files)} files: {g.result or f'exit code {code}'} ({g.seconds:.0f} s wall)")
        broken = [(g, c) for g, c in zip(groups, codes) if c not in (0, 1, 5)]
        for g, code in broken:
            say(f"[group {g.index}] pytest exit code {code}; the end of {g.log}:")
            for line in g.lines[-40:]:
                say(f"    {line}")
        records, header = [], None
        for i in range(1, len(groups) + 1):
            folder = Path(tmp) / str(i)
            if (folder / "claims.json").is_file():
                part = load_report(folder)
                header = header or part
                records += part["claims"]
        if not records:
            if not broken:
                say("theory check: no claim check was selected; `theory check --list` prints the claim IDs")
            return 2
    this_run = {**{k: v for k, v in header.items() if k not in ("claims", "last_run")},
                "claims": sorted(records, key=lambda c: c["id"])}
    try:
        report, md_path, dropped, note = write_cumulative(this_run, report_dir, root)
    except OSError as exc:
        say(f"theory check: the claims report could not be written to {report_dir}: {exc}")
        return 2
    for g, code in zip(groups, codes):
        if code == 1:
            failed = [line for line in g.lines if line.startswith(("FAILED ", "ERROR "))]
            for line in failed:
                say(f"[group {g.index}] {line}")
    ids = [c["id"] for c in records]
    say("-" * 14 + " claims measured by this run (predicted | measured) " + "-" * 14)
    say(render_table(report, ids=ids))
    for line in run_notes(report, ids, dropped, note):
        say(line)
    say(f"claims report: {md_path.parent / 'claims.json'} and {md_path} ({summary_line(report)})")
    if broken:
        return 2
    return 1 if any(c == 1 for c in codes) else 0


def _main(args: list[str]) -> int:
    """One group: pytest on ``args`` with the compile notice of :mod:`theory._compile_notice` (its lines are what
    the parent shows of the group while it runs)."""
    import pytest

    from theory._compile_notice import notice

    with notice():  # a copy of the stderr descriptor (the parent's pipe), which pytest's capture does not take
        return int(pytest.main(args))


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
