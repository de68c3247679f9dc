"""A tiny timing and memory harness for the benchmarks.

* :func:`time_call` times the first call on its own (for a Numba kernel: JIT compilation, or loading
  it from the on-disk cache when ``cache=True`` already holds it), then warms up, then times rounds
  and reports their median and interquartile range.
* :func:`peak_memory` reports the peak of the memory traced by :mod:`tracemalloc` during one call,
  after an untraced warm-up call so that JIT compilation is excluded. NumPy registers its data
  buffers with tracemalloc, so every array allocated during the call counts; arrays that exist
  before the call (the inputs) do not. Numba kernels in ``theory`` allocate nothing themselves:
  they receive their buffers from the Python side, where tracemalloc sees them.
* :func:`machine_info` records the machine and the versions next to the numbers.
* :func:`format_table` and the ``fmt_*`` helpers print the results.

Not a test module: pytest never collects this directory (``testpaths = tests checks``, and no file
here starts with ``test_``), and ``make test`` never runs it.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import gc
import math
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "Memory",
    "cold_first_call",
    "Timing",
    "fmt_bytes",
    "fmt_time",
    "format_table",
    "load_average",
    "loglog_slope",
    "machine_info",
    "peak_memory",
    "time_call",
]


@dataclass(frozen=True)
class Timing:
    """Timings of one callable, in seconds.

    Attributes
    ----------
    first_call : float
        The first call, timed alone: JIT compilation (or cache load) plus one run for a Numba kernel.
    median, q1, q3, iqr : float
        Median, quartiles and interquartile range of the per-call time over the rounds.
    min, mean : float
        Smallest and mean per-call time over the rounds.
    rounds : int
        Number of timed rounds.
    iterations : int
        Calls per round (more than one only for calls shorter than ``min_round_time``); every
        statistic is per call.
    warmup : int
        Untimed calls between the first call and the rounds.
    times : list of float
        Per-call time of each round.
    """

    first_call: float
    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    mean: float
    rounds: int
    iterations: int
    warmup: int
    times: list = field(repr=False)

    def as_dict(self) -> dict:
        return asdict(self)


def time_call(fn, *, warmup=2, min_time=0.5, max_rounds=200, min_rounds=5, min_round_time=1e-3):
    """Time ``fn()``: first call alone, ``warmup`` untimed calls, then rounds.

    Rounds continue until at least ``min_rounds`` rounds and ``min_time`` seconds of rounds, or
    ``max_rounds`` rounds, whichever comes first. A call shorter than ``min_round_time`` is repeated
    within a round (calibrated on the last warm-up call) so that the timer's resolution does not
    matter. The garbage collector is switched off during the rounds, as in pytest-benchmark.
    """
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    last = first
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        last = time.perf_counter() - t0
    iterations = 1 if last >= min_round_time else max(1, math.ceil(min_round_time / max(last, 1e-9)))
    times = []
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        while len(times) < max_rounds:
            t0 = time.perf_counter()
            for _ in range(iterations):
                fn()
            times.append((time.perf_counter() - t0) / iterations)
            if len(times) >= min_rounds and time.perf_counter() - start >= min_time:
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    arr = np.asarray(times)
    q1, med, q3 = (float(v) for v in np.percentile(arr, [25, 50, 75]))
    return Timing(first_call=first, median=med, q1=q1, q3=q3, iqr=q3 - q1, min=float(arr.min()),
                  mean=float(arr.mean()), rounds=len(times), iterations=iterations, warmup=warmup,
                  times=[float(t) for t in times])


@dataclass(frozen=True)
class Memory:
    """Memory traced by tracemalloc during one call, in bytes.

    Attributes
    ----------
    peak : int
        Largest traced total during the call (inputs allocated before it excluded).
    retained : int
        Traced total when the call has returned and its result is still held: the outputs.
    """

    peak: int
    retained: int

    def as_dict(self) -> dict:
        return asdict(self)


def peak_memory(fn, *, warmup=True):
    """Peak traced memory of ``fn()``, after one untraced warm-up call (JIT compilation excluded)."""
    if warmup:
        fn()
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = fn()
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    gc.collect()
    return Memory(peak=int(peak), retained=int(retained))


def loglog_slope(x, y):
    """Least-squares slope of log y against log x (y must be positive)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2 or np.any(y <= 0):
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_flags(wanted=("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512vl")):
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return [f for f in wanted if f in have]
    except OSError:
        pass
    return None


def _mem_total():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _git_commit():
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip() != ""
        return {"id": commit or None, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"id": None, "dirty": None}


def _blas():
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # older NumPy or an unusual build: not worth failing a benchmark for
        return None


def machine_info() -> dict:
    """CPU, cores, memory, Python, NumPy, SciPy and Numba versions, BLAS, and the git commit."""
    import numba
    import scipy

    try:
        import theory

        theory_version = getattr(theory, "__version__", None)
    except ImportError:
        theory_version = None
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                           "NUMBA_NUM_THREADS") if k in os.environ}
    return {
        "cpu": _cpu_model(),
        "cpu_flags": _cpu_flags(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "cores_usable": affinity,
        "memory_bytes": _mem_total(),
        "system": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_build": " ".join(platform.python_build()),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "blas": _blas(),
        "thread_env": threads,
        "theory": theory_version,
        "commit": _git_commit(),
        "load_average": load_average(),
        "executable": sys.executable,
    }


def load_average():
    """1-, 5- and 15-minute load averages (other processes competing for the cores), or None."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def cold_first_call(code, *, timeout=600):
    """Seconds taken by the first call in a fresh interpreter with an empty Numba cache.

    ``code`` is Python source that prints one number, the time of the call it measures; it runs in a
    subprocess whose ``NUMBA_CACHE_DIR`` is a new temporary directory, so that every kernel it
    reaches is compiled, not loaded from the on-disk cache. Returns ``None`` if the run fails.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        try:
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                 timeout=timeout)
            return float(res.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            return None


def fmt_time(t):
    """Seconds in the most readable unit."""
    if t is None or not np.isfinite(t):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def fmt_bytes(n):
    """Bytes with binary prefixes; negative values keep their sign."""
    if n is None:
        return "-"
    sign = "-" if n < 0 else ""
    n = abs(float(n))
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{sign}{n:.4g} {unit}" if unit != "B" else f"{sign}{int(n)} B"
        n /= 1024
    return f"{sign}{n:.4g} TiB"


def format_table(headers, rows, *, title=None, align=None):
    """A plain-text table; ``rows`` are sequences of strings (or values, formatted with ``str``)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    align = align or ["<"] + [">"] * (len(headers) - 1)
    line = "  ".join(f"{h:{a}{w}}" for h, a, w in zip(headers, align, widths))
    out = []
    if title:
        out.append(title)
    out.append(line)
    out.append("  ".join("-" * w for w in widths))
    for row in cells:
        out.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(row, align, widths)))
    return "\n".join(out)


RESULTS = Path(__file__).resolve().parent / "results"


def machine_line(info: dict | None = None) -> str:
    """One line naming the machine a table was measured on (CPU, cores, memory, versions, load)."""
    info = info or machine_info()
    mem = fmt_bytes(info["memory_bytes"]) if info.get("memory_bytes") else "?"
    commit = (info.get("commit") or {}).get("id") or "?"
    load = info.get("load_average")
    parts = [f"{info.get('cpu')} ({info.get('cores_usable') or info.get('cores')} cores usable, {mem})",
             info.get("python"), f"NumPy {info.get('numpy')} (BLAS {info.get('blas')})",
             f"SciPy {info.get('scipy')}", f"Numba {info.get('numba')}", f"theory at {str(commit)[:12]}"]
    if load:
        parts.append(f"load average {load[0]} at the start")
    return "; ".join(str(p) for p in parts)


def publish(name: str, title: str, command: str, text: str, *, info: dict | None = None,
            images: tuple = ()) -> Path:
    """Write ``benchmarks/results/<name>.md``: the table(s) a benchmark printed, with its machine.

    The documentation's benchmark page is built from these files, so no measured figure is copied
    by hand. ``text`` is the script's own output (kept verbatim in a code block); ``images`` are
    plots to copy beside it as ``<name>*.png``.
    """
    RESULTS.mkdir(parents=True, exist_ok=True)
    body = [f"## {title}", "", f"`{command}`, measured {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC on: "
            f"{machine_line(info)}.", "", "```text", "".join(text).strip("\n"), "```", ""]
    path = RESULTS / f"{name}.md"
    path.write_text("\n".join(body), encoding="utf-8")
    for i, image in enumerate(images):
        image = Path(image)
        target = RESULTS / (f"{name}.png" if len(images) == 1 else f"{name}-{i + 1}.png")
        shutil.copy(image, target)
    return path
