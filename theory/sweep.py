r"""Parameter sweeps of a registered experiment, on one machine or a Dask cluster, cached on disk.

A sweep runs ``experiment.measure(experiment.config_for(preset, **point))`` for every point of a
grid (the Cartesian product of one list of values per parameter) and keeps each result's
``summary`` (a dict of plain numbers) and the full result::

    from theory.sweep import sweep
    res = sweep("scaling.fig7_cell", "beta=0.2:1.3:12,hurst=0.05:0.97:10", workers=2)
    res.array("hidden").shape          # (12, 10): the grid's shape, in the order of the grid
    res.summaries[0]                   # the summary dict of the first point (beta=0.2, hurst=0.05)

Grid syntax
    Parameters separated by ``,``; each is ``name=start:stop:count`` (``count`` values evenly spaced
    from start to stop inclusive, ``count >= 1``), ``name=v1|v2|v3`` (a list) or ``name=v`` (one
    value). Integer parameters get integers (a range is rounded to the nearest integers and must not
    repeat one), booleans take ``true``/``false``. The points are ordered as ``itertools.product``
    orders them: the last parameter varies fastest. From Python a grid may also be a mapping
    ``{name: [values]}`` (or ``{name: "start:stop:count"}``); the empty mapping ``{}`` is the preset
    itself, one task (how ``theory reproduce`` caches a figure of one run).

Schedulers
    ``"local"`` (default): a process pool of ``workers`` processes (default ``os.cpu_count()``);
    ``"dask"``: a ``dask.distributed.LocalCluster`` of ``workers`` processes with one thread each;
    ``"tcp://HOST:PORT"`` (any address with ``://``): the Dask scheduler running there, so the same
    sweep runs on a cluster (its workers need ``theory`` installed; results travel back to this
    process, which alone writes the cache); ``"serial"`` (or ``workers=1``): a loop in this process,
    for debugging. Dask is the optional extra ``pip install 'theory[sweep]'``. Every task is a pure
    function of its config (seeds included), so every scheduler gives the same numbers bit for bit.

Cache
    ``OUT/tasks/<key>.pkl``, one file per task (default ``OUT = reports/sweeps/<experiment>/``),
    ``key`` the SHA-256 of the experiment's name and its full config (every field, seed included,
    not only the grid point). The file is a line of JSON with the format and a SHA-256 checksum, a
    line of JSON with the header (experiment, preset, config, key, package version, seconds, the
    byte lengths of the two parts, the code fingerprint), then two pickles: the summary and the full
    result. The checksum covers every byte after the first line and is verified before anything is unpickled; the
    header's experiment and config must give the file's own key. A file that fails either test (a flipped bit, a
    truncated file, one task's file copied over another's) is never served: :func:`sweep` recomputes
    it with a warning naming the file, :func:`load_sweep` treats it as missing with a warning, and
    :meth:`SweepResult.result` raises :class:`SweepCacheError`. A task whose file is valid is not
    recomputed: an interrupted sweep resumes, a finished one replots for free. A file written by
    another version of ``theory`` (or in another format) is recomputed (and the sweep says how many), and
    so is one whose code has changed since: the header records a SHA-256 of the source of every module of
    ``theory`` that the experiment's modules import (``theory._code_fingerprint``), so a fixed kernel or a
    result class given a field is never served from a cache written before (the sweep names the modules
    that changed, from ``sweep.json``).
    Files are written to a temporary name, fsynced and renamed (``theory._files.write_atomic``),
    so a killed sweep leaves no half-written file. ``OUT/sweep.json`` records the last sweep (grid,
    preset, status of each point) for :func:`plot_sweep`. The checksum detects damage, not
    tampering: the cache holds pickles, read only caches you wrote.

Size
    A grid has at most :data:`MAX_POINTS` points (and a range at most as many values), refused
    before anything is allocated.

Bad input raises :class:`SweepInputError` (a ValueError) before any task starts: an unknown
experiment or preset, a parameter the experiment does not take, a value outside its domain (every
config is constructed up front), a count beyond the guards (``Experiment.config_for``), a malformed or
oversized grid, an unreachable scheduler, an unwritable output
folder. A task that raises does not stop the others: it is listed in :attr:`SweepResult.failures`
with its parameters and message, and its summary is None.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import itertools
import json
import math
import multiprocessing
import os
import pickle
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from theory import _code_fingerprint
from theory._files import write_atomic
from theory.experiments import config as _config

__all__ = [
    "SweepInputError",
    "SweepCacheError",
    "SweepCacheWarning",
    "SweepResult",
    "parse_grid",
    "grid_points",
    "task_key",
    "sweep",
    "load_sweep",
    "plot_sweep",
    "CACHE_FORMAT",
    "MAX_POINTS",
    "SweepTerminated",
]

#: Format tag of the cache files; a file of another format is recomputed.
CACHE_FORMAT = "theory-sweep/2"
#: Most points of one grid (and values of one range): a larger grid is refused before anything is
#: allocated (10**6 points of scaling.fig7_cell's check preset, 0.095 s each, take about a core-day).
MAX_POINTS = _config.MAX_RANGE
#: Longest header line of a cache file read (bytes); a longer one is a damaged file.
_MAX_HEADER = 1 << 24
#: Seconds to wait for a remote Dask scheduler before calling it unreachable.
CONNECT_TIMEOUT = 5.0


class SweepInputError(ValueError):
    """Bad input to a sweep, found before any task ran (the ``theory sweep`` command exits 2)."""


class SweepCacheError(ValueError):
    """A cache file that cannot be served: missing, damaged, of another task, format or version."""


class SweepCacheWarning(UserWarning):
    """A damaged cache file (or one of another task) was found, and is treated as missing."""


# =========================================================================== grids


def _parse_value(text, name, kind):
    text = text.strip()
    try:
        if kind == "int":
            value = float(text)
            if not value.is_integer():
                raise ValueError
            return int(value)
        if kind == "float":
            value = float(text)
            if not math.isfinite(value):
                raise ValueError
            return value
        if kind == "bool":
            low = text.lower()
            if low not in ("true", "false", "1", "0"):
                raise ValueError
            return low in ("true", "1")
    except ValueError:
        expected = {"int": "an integer", "float": "a finite number", "bool": "true or false"}[kind]
        raise SweepInputError(f"grid value {text!r} of parameter {name!r} must be {expected}") from None
    return text


def _range_values(text, name, kind, option="--grid"):
    parts = text.split(":")
    if len(parts) != 3:
        raise SweepInputError(f"grid range of {name!r} must be start:stop:count; got {text!r}")
    if kind not in ("int", "float"):
        raise SweepInputError(f"parameter {name!r} is not a number; give a list v1|v2|... instead of {text!r}")
    start, stop = (_parse_value(p, name, "float") for p in parts[:2])
    try:
        count = int(parts[2])
    except ValueError:
        count = 0
    if count < 1:
        raise SweepInputError(f"count of the grid range of {name!r} must be an integer >= 1; got {parts[2]!r}")
    if count > MAX_POINTS:
        raise SweepInputError(f"count of the range of {name!r} ({option}) must be at most {MAX_POINTS} "
                              f"(theory.sweep.MAX_POINTS); got {count}")
    values = np.linspace(start, stop, count) if count > 1 else np.array([start])
    if kind == "int":
        ints = [int(v) for v in np.rint(values)]
        if len(set(ints)) < len(ints):
            raise SweepInputError(f"grid range {text!r} of the integer parameter {name!r} repeats values "
                                  f"once rounded ({ints}); use fewer points or a list")
        return ints
    return [float(v) for v in values]


def _declared_values(experiment, name, constraint, spec) -> list:
    """The values of one grid axis of a field with a declared constraint, each validated by it."""
    from theory.experiments.config import Int, OrNone, Real

    if not constraint.scalar:
        raise SweepInputError(f"parameter {name!r} of experiment {experiment.name!r} is not a scalar "
                              f"(a sweep varies numbers, booleans and choices; it is {constraint.describe()})")
    inner = constraint.inner if isinstance(constraint, OrNone) else constraint
    kind = "int" if isinstance(inner, Int) else "float" if isinstance(inner, Real) else None
    try:
        if isinstance(spec, str):
            if ":" in spec and kind is not None:
                values = _range_values(spec, name, kind)
            else:
                values = [constraint.parse(v, name) for v in spec.split("|")]
        else:
            many = isinstance(spec, (list, tuple, np.ndarray, range))
            if many and len(spec) > MAX_POINTS:
                raise SweepInputError(f"grid axis {name!r} has {len(spec)} values, more than {MAX_POINTS} "
                                      "(theory.sweep.MAX_POINTS)")
            values = list(spec) if many else [spec]
            if not values:
                raise SweepInputError(f"grid axis {name!r} has no value")
        return [constraint.validate(v, name, experiment.config.__name__) for v in values]
    except (TypeError, ValueError) as exc:
        if isinstance(exc, SweepInputError):
            raise
        raise SweepInputError(f"grid value of parameter {name!r}: {exc}") from None


def parse_grid(grid, experiment) -> dict[str, list]:
    """The axes of ``grid`` (a string in the syntax of the module docstring, or a mapping) for
    ``experiment`` (an :class:`theory.experiments.Experiment`): an ordered dict name -> values.

    Raises
    ------
    SweepInputError
        A malformed grid, a parameter the experiment does not take (the message lists those it
        takes), a repeated parameter, a value of the wrong type, a range or a grid of more than
        :data:`MAX_POINTS` points.

    Examples
    --------
    >>> from theory.experiments import experiment
    >>> parse_grid("beta=0.2:1.2:3,depth=100|200", experiment("scaling.fig7_cell"))
    {'beta': [0.2, 0.7, 1.2], 'depth': [100, 200]}
    """
    if isinstance(grid, str):
        items = []
        for part in grid.split(","):
            if not part.strip():
                continue
            name, sep, spec = part.partition("=")
            if not sep or not name.strip() or not spec.strip():
                raise SweepInputError(f"grid entry {part.strip()!r} must be name=start:stop:count, "
                                      "name=v1|v2|... or name=value")
            items.append((name.strip(), spec.strip()))
    elif isinstance(grid, Mapping):
        items = list(grid.items())
    else:
        raise SweepInputError(f"`grid` must be a string such as 'beta=0.2:1.3:70,hurst=0.1|0.5' or a mapping; "
                              f"got {type(grid).__name__}")
    if not items:
        if isinstance(grid, Mapping):  # from Python, {}: the preset itself, one task
            return {}
        raise SweepInputError("`grid` names no parameter")
    axes: dict[str, list] = {}
    for name, spec in items:
        if name not in experiment.fields:
            raise SweepInputError(f"experiment {experiment.name!r} has no parameter {name!r}; its parameters: "
                                  f"{', '.join(experiment.fields)}")
        if name in axes:
            raise SweepInputError(f"parameter {name!r} appears twice in the grid")
        declared = experiment.constraint(name)
        if declared is None:  # pragma: no cover - every registered field is declared (tests/test_config_fields.py)
            raise SweepInputError(f"parameter {name!r} of experiment {experiment.name!r} declares no constraint")
        axes[name] = _declared_values(experiment, name, declared, spec)
    total = math.prod(len(v) for v in axes.values())
    if total > MAX_POINTS:
        raise SweepInputError(f"the grid (--grid) has {total} points "
                              f"({' x '.join(str(len(v)) for v in axes.values())}), more than the {MAX_POINTS} "
                              f"of one sweep (theory.sweep.MAX_POINTS); split it into several sweeps")
    return axes


def grid_points(axes: Mapping[str, Sequence]) -> list[dict]:
    """The points of the Cartesian product of ``axes``, the last axis varying fastest."""
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def _plain(value):
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _config_dict(config) -> dict:
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


def task_key(name: str, config) -> str:
    """Cache key of one task: SHA-256 (24 hex digits) of the experiment name and every config field."""
    text = json.dumps({"experiment": name, "config": _config_dict(config)}, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _point_text(point: Mapping) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items())


# =========================================================================== tasks


class _Registered:
    """An experiment's ``measure`` or ``summary`` sent to a worker by the experiment's name, for a function that
    cannot be pickled (a lambda, a closure): the worker looks it up in its own registry."""

    def __init__(self, name: str, attribute: str):
        self.name, self.attribute = name, attribute

    def __call__(self, *args):
        from theory.experiments import experiment

        return getattr(experiment(self.name), self.attribute)(*args)


def _sendable(exp, scheduler, workers):
    """(measure, summary) as the workers receive them: the functions, or their names where they do not pickle."""
    measure, summary = exp.measure, exp.summary
    if scheduler == "serial" or (scheduler == "local" and workers == 1):
        return measure, summary
    try:
        pickle.dumps((measure, summary))
    except Exception:  # noqa: BLE001 - PicklingError, AttributeError, TypeError for lambdas and closures
        measure = _Registered(exp.name, "measure")
        summary = _Registered(exp.name, "summary") if summary is not None else None
    return measure, summary


def _run_task(measure, summary, config):
    """Run one task in a worker; never raises for the task's own errors (they are returned)."""
    from theory._openmp import share_openmp_runtime

    share_openmp_runtime()  # a worker process: before the experiment imports PyTorch (see theory._openmp)
    start = time.perf_counter()
    try:
        result = measure(config)
        plain = _plain(summary(result)) if summary is not None else {}
        if not isinstance(plain, dict):
            raise TypeError(f"summary must return a dict; got {type(plain).__name__}")
        blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - reported with the task's parameters
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                "seconds": time.perf_counter() - start}
    return {"ok": True, "summary": plain, "result": blob, "seconds": time.perf_counter() - start}


def _key_of(name: str, config: Mapping) -> str:
    """:func:`task_key` of a config given as its field dict (as :func:`_config_dict` makes it)."""
    text = json.dumps({"experiment": name, "config": config}, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _canonical(header: Mapping) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":"), default=repr).encode("utf-8")


def _task_bytes(header: dict, summary, result_blob: bytes) -> bytes:
    """The content of a cache file: a first JSON line with the format and the checksum, the header as
    a second JSON line, then the summary pickle and the result pickle.

    The checksum is the SHA-256 of every byte after the first line (header line, summary, result),
    so that no bit of them can change unnoticed, not even one that leaves a number's value as it was."""
    summary_blob = pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)
    header = {**header, "summary_bytes": len(summary_blob), "result_bytes": len(result_blob)}
    body = _canonical(header) + b"\n" + summary_blob + result_blob
    first = _canonical({"format": CACHE_FORMAT, "sha256": hashlib.sha256(body).hexdigest()})
    return first + b"\n" + body


@dataclasses.dataclass
class _Task:
    """What :func:`_read_task` found: ``status`` is "ok", "missing", "stale" (another format or
    version of theory: recomputed silently, counted) or "damaged" (a wrong checksum, a truncated file,
    another task's file: recomputed with a warning naming the file); ``reason`` says why."""

    status: str
    reason: str = ""
    header: dict | None = None
    summary: object = None
    result: object = None


def _read_task(path: Path, name: str, key: str, version: str, code: str, *, result: bool = False) -> _Task:
    """Read and verify the cache file ``path`` of task ``key`` of experiment ``name``.

    The checksum is verified over the whole file before anything is unpickled; the summary (and,
    with ``result``, the full result) is unpickled only then."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return _Task("missing", "no such file")
    except OSError as exc:
        return _Task("damaged", f"it cannot be read ({exc.strerror or exc})")
    with fh:
        try:
            first = fh.readline(256)
            if first.startswith(b"\x80"):  # a pickle: the format theory-sweep/1
                return _Task("stale", "it is in an older format")
            stamp = json.loads(first)
            if not isinstance(stamp, dict):
                raise ValueError("not an object")
        except (OSError, ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            return _Task("damaged", f"its first line is not the JSON of a cache file ({type(exc).__name__})")
        if stamp.get("format") != CACHE_FORMAT:
            if isinstance(stamp.get("format"), str) and stamp["format"].startswith("theory-sweep/"):
                return _Task("stale", f"it is in the format {stamp['format']!r}")
            return _Task("damaged", "its first line names no known format")
        expected = stamp.get("sha256")
        if not isinstance(expected, str):
            return _Task("damaged", "its first line has no checksum")
        try:
            line = fh.readline(_MAX_HEADER)
            digest = hashlib.sha256(line)
            if not line.endswith(b"\n"):
                return _Task("damaged", "its header line is cut off or too long")
            header = json.loads(line)  # JSON only: nothing is unpickled before the checksum is verified
            if not isinstance(header, dict):
                raise ValueError("not an object")
        except (OSError, ValueError, RecursionError) as exc:
            return _Task("damaged", f"its header is not valid JSON ({type(exc).__name__})")
        sizes = header.get("summary_bytes"), header.get("result_bytes")
        if not all(type(n) is int and n >= 0 for n in sizes):
            return _Task("damaged", "its header has no part lengths")
        try:
            summary_blob = fh.read(sizes[0])
            digest.update(summary_blob)
            rest = 0
            result_blob = io.BytesIO() if result else None
            while chunk := fh.read(1 << 20):
                rest += len(chunk)
                digest.update(chunk)
                if result_blob is not None and rest <= sizes[1]:
                    result_blob.write(chunk)
        except OSError as exc:
            return _Task("damaged", f"it cannot be read ({exc.strerror or exc})")
        if len(summary_blob) != sizes[0] or rest != sizes[1]:
            return _Task("damaged", f"it holds {len(summary_blob) + rest} bytes after its header, not the "
                                    f"{sizes[0] + sizes[1]} its header records (truncated or extended)")
        if digest.hexdigest() != expected:
            return _Task("damaged", "its checksum does not match its content")
    config = header.get("config")
    if header.get("experiment") != name or not isinstance(config, dict) or _key_of(name, config) != key \
            or header.get("key") != key:
        return _Task("damaged", f"it holds another task (experiment {header.get('experiment')!r}, key "
                                f"{header.get('key')!r}), not task {key} of {name!r}")
    if header.get("version") != version:
        return _Task("stale", f"it was written by theory {header.get('version')}", header)
    if header.get("code") != code:
        return _Task("stale", "the code it ran has changed since it was written", header)
    try:
        summary = pickle.loads(summary_blob)
        full = pickle.loads(result_blob.getvalue()) if result else None
    except Exception as exc:  # noqa: BLE001 - a valid checksum over a pickle that does not load
        return _Task("damaged", f"its content does not unpickle ({type(exc).__name__}: {exc})", header)
    if not isinstance(summary, dict):
        return _Task("damaged", f"its summary is a {type(summary).__name__}, not a dict", header)
    return _Task("ok", "", header, summary, full)


def _version() -> str:
    import theory

    return theory.__version__


def _code_sources(exp) -> dict[str, str]:
    """Module -> SHA-256 of its source, for every module of theory that ``exp``'s measure, summary and config run."""
    return _code_fingerprint.module_sources(_code_fingerprint.modules_of(exp.measure, exp.summary, exp.config))


def _code(exp) -> str:
    """The code fingerprint of experiment ``exp`` recorded in (and required of) its cache files."""
    return _code_fingerprint.fingerprint(_code_sources(exp))


def _changed_modules(out: Path, sources: Mapping[str, str]) -> list[str]:
    """The modules whose source differs from the one recorded by the last sweep in ``out`` (none if unrecorded)."""
    try:
        recorded = json.loads((out / "sweep.json").read_text(encoding="utf-8")).get("modules")
    except (OSError, ValueError, RecursionError, AttributeError):
        return []
    if not isinstance(recorded, dict):
        return []
    return sorted(name for name in set(recorded) | set(sources) if recorded.get(name) != sources.get(name))


# =========================================================================== results


@dataclasses.dataclass
class SweepResult:
    """The outcome of :func:`sweep` (or :func:`load_sweep`), in grid order.

    Attributes
    ----------
    experiment : str
    preset : str
    axes : dict of str to list
        The grid: parameter -> values, in order.
    points : list of dict
        The grid points (last parameter fastest).
    configs : list
        The full config of each point.
    summaries : list of (dict or None)
        Each point's summary; None for a failed or (in :func:`load_sweep`) missing task.
    failures : list of (dict, str)
        (point, "ExceptionType: message") of each failed task.
    computed, cached, stale : int
        Tasks computed now, read from the cache, and recomputed because their file was written by
        another version of theory (or in another format, or before the code it runs changed) or is
        damaged (unreadable, a checksum that does not match, another task's content).
    seconds : float
        Wall-clock time of the sweep.
    out : pathlib.Path
        The cache folder.
    """

    experiment: str
    preset: str
    axes: dict
    points: list
    configs: list
    summaries: list
    failures: list
    computed: int
    cached: int
    stale: int
    seconds: float
    out: Path
    keys: list = dataclasses.field(default_factory=list, repr=False)
    task_seconds: list = dataclasses.field(default_factory=list, repr=False)
    #: The code fingerprint its cache files must carry (computed on first use when empty).
    code: str = dataclasses.field(default="", repr=False)

    def __len__(self) -> int:
        return len(self.summaries)

    def __getitem__(self, index):
        return self.summaries[index]

    def __iter__(self):
        return iter(self.summaries)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.axes.values())

    def array(self, field: str) -> np.ndarray:
        """The summary field ``field`` over the grid, shape ``self.shape`` (NaN where a task failed)."""
        known = sorted({k for s in self.summaries if s for k in s})
        if field not in known:
            raise ValueError(f"`field` must be a summary field of {self.experiment!r}: {', '.join(known)}; "
                             f"got {field!r}")
        values = [float(s[field]) if s is not None and s.get(field) is not None else np.nan for s in self.summaries]
        return np.array(values, dtype=float).reshape(self.shape)

    def result(self, index: int):
        """The full result of point ``index``, unpickled from the cache once its file is verified.

        Parameters
        ----------
        index : int
            Position of the point in grid order (``self.points[index]``).

        Returns
        -------
        object
            What the experiment's ``measure`` returned for this point's config.

        Raises
        ------
        SweepCacheError
            When the point's file is missing (a failed task), damaged (its SHA-256 checksum, recorded in
            its header, does not match its content; a truncated file), holds another task, or was
            written by another version of theory or before the code it runs changed; the message names
            the file. Run the sweep again to recompute it.
        """
        index = range(len(self.keys))[index]
        path = self.out / "tasks" / f"{self.keys[index]}.pkl"
        if not self.code:
            from theory.experiments import experiment

            self.code = _code(experiment(self.experiment))
        task = _read_task(path, self.experiment, self.keys[index], _version(), self.code, result=True)
        if task.status != "ok":
            raise SweepCacheError(f"the result of point {_point_text(self.points[index])} cannot be read: {path} "
                                  f"{'does not exist' if task.status == 'missing' else task.reason}; run the "
                                  "sweep again to recompute it")
        return task.result


# =========================================================================== progress


class _Progress:
    """A carriage-return progress line on stderr (only on a terminal) and a final line."""

    #: computed tasks before the time left is estimated (the first ones carry the workers' start and compiling)
    WARMUP = 3

    def __init__(self, total, stream, live):
        self.total, self.stream, self.live = total, stream, live
        self.start = time.perf_counter()
        self.done = self.computed = 0
        self.last = 0.0
        self.first = None  # when the first computed task finished

    def rate(self, now: float) -> float | None:
        """Computed tasks per second since the first one finished, once WARMUP of them have; else None."""
        if self.computed < self.WARMUP or self.first is None or now <= self.first:
            return None
        return (self.computed - 1) / (now - self.first)

    def update(self, computed: bool) -> None:
        self.done += 1
        self.computed += computed
        now = time.perf_counter()
        if computed and self.first is None:
            self.first = now
        if self.live and (now - self.last > 0.2 or self.done == self.total):
            self.last = now
            rate = self.rate(now)
            if rate is None:
                tail = "estimating the time left"
            else:
                left = (self.total - self.done) / rate
                tail = f"{rate:.2f}/s  {int(left // 60)}:{int(left % 60):02d} left"
            self.stream.write(f"\r{self.done}/{self.total} tasks  {tail}   ")
            self.stream.flush()

    def close(self, line: str) -> None:
        if self.live:
            self.stream.write("\r" + " " * 60 + "\r")
        self.stream.write(line + "\n")
        self.stream.flush()


# =========================================================================== schedulers


def _start_method() -> str:
    # fork is quick (the workers inherit the imported modules and JIT-loaded kernels) but unsafe once
    # threads run (a Dask client's), and Python >= 3.12 warns about it whenever the process has
    # threads (BLAS pools included): spawn there
    if sys.version_info < (3, 12) and "fork" in multiprocessing.get_all_start_methods() \
            and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _dask_client(scheduler, workers):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SweepInputError(f"scheduler {scheduler!r} needs Dask: pip install 'theory[sweep]' "
                              "(dask[distributed])") from None
    if scheduler == "dask":
        import dask

        with dask.config.set({"distributed.worker.daemon": False}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        return Client(cluster), cluster
    try:
        client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise SweepInputError(f"scheduler {scheduler!r} is unreachable ({type(exc).__name__}: {exc})") from None
    return client, None


def _outcome(future):
    """A finished future's outcome; a lost worker (killed, out of memory) fails only its tasks."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, KilledWorker, ...
        return {"ok": False, "error": f"worker lost ({type(exc).__name__}: {exc})", "seconds": float("nan")}


def _execute(jobs, scheduler, workers, on_done, client=None):
    """Run ``jobs`` (list of (index, measure, summary, config)) and call ``on_done(index, outcome)``
    as each finishes (in this process)."""
    if not jobs:
        return
    if scheduler == "serial" or (scheduler == "local" and workers == 1):
        for index, measure, summary, config in jobs:
            on_done(index, _run_task(measure, summary, config))
        return
    if scheduler == "local":
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        ctx = multiprocessing.get_context(_start_method())
        pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx)
        try:
            futures = {pool.submit(_run_task, m, s, c): i for i, m, s, c in jobs}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    on_done(futures[fut], _outcome(fut))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return
    from distributed import as_completed

    futures = {client.submit(_run_task, m, s, c, pure=False): i for i, m, s, c in jobs}
    try:
        for fut in as_completed(list(futures)):
            on_done(futures[fut], _outcome(fut))
    finally:
        client.cancel(list(futures))


# =========================================================================== the sweep


def _default_out(name: str) -> Path:
    from theory._files import find_root

    root = find_root() or Path.cwd()
    return root / "reports" / "sweeps" / name


def _check_out(out: Path) -> Path:
    try:
        (out / "tasks").mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out / "tasks", prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise SweepInputError(f"output folder {str(out)!r} is not writable ({exc.strerror or exc})") from None
    return out


def _prepare(name, grid, preset):
    from theory.experiments import experiment as lookup

    try:
        exp = lookup(name)
    except (ValueError, TypeError) as exc:
        raise SweepInputError(str(exc)) from None
    if preset not in exp.presets:
        raise SweepInputError(f"experiment {name!r} has no preset {preset!r}; its presets: {', '.join(sorted(exp.presets))}")
    axes = parse_grid(grid, exp)
    points = grid_points(axes)
    configs = []
    for point in points:
        try:
            config = exp.config_for(preset, **point)
        except (ValueError, TypeError) as exc:
            raise SweepInputError(f"grid point {_point_text(point)}: {exc}") from None
        configs.append(config)
    return exp, axes, points, configs


def _check_scheduler(scheduler, workers):
    if isinstance(workers, bool) or workers is not None and (not isinstance(workers, (int, np.integer)) or workers < 1):
        raise SweepInputError(f"`workers` must be an int >= 1; got {workers!r}")
    if not isinstance(scheduler, str) or (scheduler not in ("local", "dask", "serial") and "://" not in scheduler):
        raise SweepInputError(f"`scheduler` must be 'local', 'dask', 'serial' or a Dask scheduler address "
                              f"such as 'tcp://host:8786'; got {scheduler!r}")
    return int(workers) if workers is not None else (os.cpu_count() or 1)


def sweep(name: str, grid, *, preset: str = "check", scheduler: str = "local", workers: int | None = None,
          out: str | os.PathLike | None = None, progress: bool | None = None, stream=None) -> SweepResult:
    """Run experiment ``name`` over ``grid``; cached tasks are read, the others computed.

    Parameters
    ----------
    name : str
        A registered experiment (:func:`theory.experiments.experiments` lists them).
    grid : str or mapping
        The grid, e.g. ``"beta=0.2:1.3:70,hurst=0.05:0.97:51"`` (module docstring).
    preset : str
        The preset whose config the grid points modify ("check", "paper", ...).
    scheduler : {"local", "dask", "serial"} or str
        Or the address of a running Dask scheduler ("tcp://host:8786").
    workers : int, optional
        Processes (default ``os.cpu_count()``; ignored for a remote scheduler).
    out : path, optional
        Cache folder (default ``reports/sweeps/<name>/`` in the repository, else in the cwd).
    progress : bool, optional
        Show the live progress line (default: when ``stream`` is a terminal). The final line is
        always written.
    stream : file, optional
        Where progress and failures are written (default ``sys.stderr``).

    Returns
    -------
    SweepResult
        Summaries in grid order; failed tasks have None and are listed in ``failures``.

    Raises
    ------
    SweepInputError
        Bad input, before any task runs.
    """
    stream = stream or sys.stderr
    workers = _check_scheduler(scheduler, workers)
    exp, axes, points, configs = _prepare(name, grid, preset)
    out = _check_out(Path(out) if out is not None else _default_out(name))
    client = cluster = None
    if scheduler not in ("local", "serial"):
        client, cluster = _dask_client(scheduler, workers)
    try:
        with _terminate_as_interrupt():
            return _sweep(exp, preset, axes, points, configs, out, scheduler, workers, progress, stream, client)
    finally:
        _close_quietly(client, cluster)


class SweepTerminated(KeyboardInterrupt):
    """The sweep's process got SIGTERM: the tasks that finished are cached, the same call resumes."""


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM (a scheduler's or a user's ``kill``) stops the sweep like Ctrl-C: the cache and the manifest of what
    finished are written and the final line says how to resume; without this the process ended silently. Only in
    the main thread, and only where SIGTERM has its default action."""
    import signal

    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def stop(signum, frame):
        raise SweepTerminated("SIGTERM")

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _close_quietly(client, cluster) -> None:
    """Close a Dask client and cluster without the warnings its nannies log while their workers stop (the
    sweep's results are already written; a worker killed after its grace period is not news)."""
    import logging

    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.nanny", "distributed.worker",
                                                    "distributed.scheduler", "distributed.core")]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
    finally:
        for log, level in zip(loggers, levels):
            log.setLevel(level)


def _sweep(exp, preset, axes, points, configs, out, scheduler, workers, progress, stream, client):
    start = time.perf_counter()
    version = _version()
    sources = _code_sources(exp)
    code = _code_fingerprint.fingerprint(sources)
    tasks = out / "tasks"
    keys = [task_key(exp.name, c) for c in configs]
    summaries: list = [None] * len(points)
    seconds: list = [None] * len(points)
    jobs, stale, changed, seen = [], 0, 0, {}
    measure, summary = _sendable(exp, scheduler, workers)
    for i, (key, config) in enumerate(zip(keys, configs)):
        if key in seen:  # the same config twice in one grid: computed once
            continue
        seen[key] = i
        path = tasks / f"{key}.pkl"
        task = _read_task(path, exp.name, key, version, code)
        if task.status == "ok":
            summaries[i] = task.summary
            seconds[i] = task.header.get("seconds")
            continue
        if task.status == "damaged":
            stream.write(f"warning: the cache file {path} is not used: {task.reason}; recomputing it\n")
        if task.status != "missing":
            stale += 1
            changed += task.status == "stale" and task.header is not None and task.header.get("version") == version
        jobs.append((i, measure, summary, config))
    if changed:
        modules = _changed_modules(out, sources)
        stream.write(f"{exp.name}: {changed} cached task(s) ran code that has changed since"
                     + (f" ({', '.join(modules)})" if modules else "") + "; recomputing them\n")
    if stale - changed:
        stream.write(f"{exp.name}: {stale - changed} cached task(s) were written by another version of theory (or "
                     f"are unreadable or damaged); recomputing them with theory {version}\n")
    live = progress if progress is not None else bool(getattr(stream, "isatty", lambda: False)())
    bar = _Progress(len(seen), stream, live)
    for _ in range(len(seen) - len(jobs)):
        bar.update(False)
    failures = []

    def on_done(i, outcome):
        seconds[i] = outcome["seconds"]
        if outcome["ok"]:
            header = {"format": CACHE_FORMAT, "experiment": exp.name, "preset": preset, "key": keys[i],
                      "config": json.loads(_canonical(_config_dict(configs[i]))), "version": version,
                      "code": code, "seconds": outcome["seconds"]}
            write_atomic(tasks / f"{keys[i]}.pkl", _task_bytes(header, outcome["summary"], outcome["result"]))
            summaries[i] = outcome["summary"]
        else:
            failures.append((points[i], outcome["error"]))
            stream.write(("\n" if live else "") + f"FAILED {_point_text(points[i])}: {outcome['error']}\n")
        bar.update(True)

    stopped = None
    try:
        _execute(jobs, scheduler, workers, on_done, client)
    except SweepTerminated:
        stopped = "stopped by SIGTERM; the finished tasks are cached: run the same command again to resume"
        raise
    except KeyboardInterrupt:
        stopped = "interrupted; the finished tasks are cached: run the same command again to resume"
        raise
    except BaseException as exc:
        stopped = f"stopped by {type(exc).__name__}; run it again to resume"
        raise
    finally:
        for i, key in enumerate(keys):  # repeated configs share the first one's outcome
            first = seen[key]
            if first != i:
                summaries[i], seconds[i] = summaries[first], seconds[first]
        elapsed = time.perf_counter() - start
        done = bar.done
        computed = bar.computed
        _write_manifest(out, exp.name, preset, axes, keys, summaries, version, sources)
        status = stopped or f"{len(failures)} failed"
        bar.close(f"{exp.name}: {done}/{len(seen)} tasks ({computed} computed, "
                  f"{len(seen) - len(jobs)} from the cache, {status}) in {elapsed:.1f} s -> {out}")
    failures.sort(key=lambda f: points.index(f[0]))
    return SweepResult(exp.name, preset, axes, points, configs, summaries, failures, len(jobs), len(seen) - len(jobs),
                       stale, elapsed, out, keys, seconds, code)


def _write_manifest(out, name, preset, axes, keys, summaries, version, sources):
    manifest = {"format": CACHE_FORMAT, "experiment": name, "preset": preset, "version": version,
                "code": _code_fingerprint.fingerprint(sources), "modules": sources,
                "axes": _plain(axes), "keys": keys, "done": [s is not None for s in summaries]}
    try:
        write_atomic(out / "sweep.json", json.dumps(manifest, indent=1).encode("utf-8"))
    except OSError:
        pass


# =========================================================================== reading and plotting


def load_sweep(name: str, grid=None, *, preset: str | None = None, out: str | os.PathLike | None = None,
               stream=None) -> SweepResult:
    """The cached summaries of a sweep, without computing anything.

    Parameters
    ----------
    name : str
        The experiment.
    grid : str or mapping, optional
        The grid; with None, the grid (and preset) of the last sweep in ``out`` (its ``sweep.json``).
    preset : str, optional
        The preset the grid modifies (default: the recorded one, else "check").
    out : path, optional
        The cache folder (default as in :func:`sweep`).
    stream : file, optional
        Where a damaged file is reported; default: a :class:`SweepCacheWarning`.

    Returns
    -------
    SweepResult
        Points whose task is not cached (or cached by another version of theory, or before the code it
        runs changed) have summary None.
        So have the points whose file is damaged (its SHA-256 checksum does not match its content, it
        is truncated, or it holds another task): each is reported, naming the file.

    Raises
    ------
    SweepInputError
        Bad input, or no cached task at all.
    """
    out = Path(out) if out is not None else _default_out(name)
    if grid is None:
        try:
            manifest = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
            grid, recorded = manifest["axes"], manifest["preset"]
            if not isinstance(grid, Mapping) or not isinstance(recorded, str):
                raise TypeError
        except (OSError, ValueError, RecursionError):
            raise SweepInputError(f"no sweep recorded in {out}; give its --grid or run the sweep first") from None
        except (KeyError, TypeError):
            raise SweepInputError(f"{out / 'sweep.json'} is not a sweep record; give the --grid") from None
        preset = preset or recorded
    exp, axes, points, configs = _prepare(name, grid, preset or "check")
    version = _version()
    code = _code(exp)
    keys = [task_key(exp.name, c) for c in configs]
    summaries = []
    for key in keys:
        path = out / "tasks" / f"{key}.pkl"
        task = _read_task(path, exp.name, key, version, code)
        if task.status == "damaged":
            message = f"the cache file {path} is not used: {task.reason}; its point is missing"
            if stream is not None:
                stream.write(f"warning: {message}\n")
            else:
                warnings.warn(message, SweepCacheWarning, stacklevel=2)
        summaries.append(task.summary if task.status == "ok" else None)
    if not any(s is not None for s in summaries):
        raise SweepInputError(f"no task of this grid is cached in {out} (for theory {version} and its "
                               "current code); run the sweep first")
    return SweepResult(exp.name, preset or "check", axes, points, configs, summaries, [], 0,
                       sum(s is not None for s in summaries), 0, 0.0, out, keys, [], code)


#: Axis labels of summary fields in plots: experiment -> field -> label.
FIELD_LABELS = {
    "scaling.fig7_cell": {
        "hidden": r"$\log_{10}$ RMS $\|h_L - h_0\| / \|h_0\|$",
        "gradient": r"$\log_{10}$ RMS $\|p_0 - p_L\| / \|p_L\|$",
    },
}

#: Figure titles of sweeps: experiment -> title.
TITLES = {
    "scaling.fig7_cell": "Figure 7 of scaling (thesis Fig. 2.7): res-3 with fGn weights, explosion (> 0) and "
                         "identity (< 0) over (H, beta)",
}

#: Reference lines drawn on sweep heatmaps: experiment -> ((x, y) parameters, label, y = f(x)).
GUIDES = {
    "scaling.fig7_cell": (("hurst", "beta"), r"$\beta = \max(H, 1/2)$ (the paper's observed boundary)",
                          lambda h: np.maximum(h, 0.5)),
}


def plot_sweep(result: SweepResult, fields: Sequence[str], path: str | os.PathLike | None = None) -> Path:
    """Draw ``fields`` of a sweep: a heatmap per field for a 2-D grid (x the last parameter, y the
    first), a line per field for a 1-D grid. Saved to ``path`` (default ``OUT/<fields>.png``).

    A field whose values take both signs is drawn with a diverging colour map centred on 0 and its
    zero contour (for the Figure 7 cell: explosion positive, identity negative).
    """
    from theory.plots import import_matplotlib

    import_matplotlib()
    import matplotlib.pyplot as plt

    fields = list(fields)
    if not fields:
        raise SweepInputError("no summary field to plot")
    arrays = {}
    for field in fields:
        try:
            arrays[field] = result.array(field)
        except ValueError as exc:
            raise SweepInputError(str(exc)) from None
    names = list(result.axes)
    varying = [n for n in names if len(result.axes[n]) > 1]
    if len(varying) > 2 or not varying:
        raise SweepInputError(f"plotting needs a grid with 1 or 2 parameters of several values; got {result.shape}")
    fig, axs = plt.subplots(1, len(fields), figsize=(5.2 * len(fields), 4.2), squeeze=False)
    for ax, field in zip(axs[0], fields):
        values = arrays[field].squeeze() if arrays[field].ndim > len(varying) else arrays[field]
        values = values.reshape([len(result.axes[n]) for n in varying])
        if len(varying) == 1:
            x = np.asarray(result.axes[varying[0]], dtype=float)
            ax.plot(x, values, marker="o", ms=3)
            ax.set_xlabel(varying[0])
            ax.set_ylabel(FIELD_LABELS.get(result.experiment, {}).get(field, field))
            ax.grid(alpha=0.3)
        else:
            yname, xname = varying
            x = np.asarray(result.axes[xname], dtype=float)
            y = np.asarray(result.axes[yname], dtype=float)
            finite = values[np.isfinite(values)]
            if finite.size and finite.min() < 0 < finite.max():
                from matplotlib.colors import TwoSlopeNorm

                norm = TwoSlopeNorm(vmin=float(finite.min()), vcenter=0.0, vmax=float(finite.max()))
                mesh = ax.pcolormesh(x, y, values, shading="nearest", cmap="RdBu_r", norm=norm)
                ax.contour(x, y, values, levels=[0.0], colors="k", linewidths=1.4)
                ax.plot([], [], "-", color="k", lw=1.4, label=f"{field} = 0 (measured)")
            else:
                mesh = ax.pcolormesh(x, y, values, shading="nearest", cmap="viridis")
            ticks = None
            if finite.size and finite.min() < 0 < finite.max():  # ticks on both sides of 0
                lo, hi = float(finite.min()), float(finite.max())
                ticks = np.unique(np.round(np.r_[np.linspace(lo, 0, 4), np.linspace(0, hi, 5)], 1))
            fig.colorbar(mesh, ax=ax, ticks=ticks, label=FIELD_LABELS.get(result.experiment, {}).get(field, field))
            guide = GUIDES.get(result.experiment)
            if guide is not None and guide[0] == (xname, yname):
                xs = np.linspace(x.min(), x.max(), 200)
                ax.plot(xs, guide[2](xs), "--", color="0.35", lw=1.2, label=guide[1])
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="upper left", fontsize=7)
            ax.set_xlabel(xname)
            ax.set_ylabel(yname)
        missing = int(np.sum(~np.isfinite(values)))
        ax.set_title(f"{result.experiment}: {field}" + (f" ({missing} missing)" if missing else ""), fontsize=10)
    title = TITLES.get(result.experiment, f"sweep of {result.experiment}")
    fig.suptitle(f"{title}, preset {result.preset!r}", fontsize=10)
    fig.tight_layout()
    path = Path(path) if path is not None else result.out / f"{'_'.join(fields)}.png"
    image = io.BytesIO()
    try:
        fig.savefig(image, format=path.suffix.lstrip(".").lower() or "png", dpi=120)
    except ValueError as exc:  # an image format matplotlib does not write
        raise SweepInputError(f"the image path {str(path)!r} (--png): {exc}") from None
    finally:
        plt.close(fig)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, image.getvalue())
    except OSError as exc:
        raise SweepInputError(f"the image {str(path)!r} (--png) cannot be written ({exc.strerror or exc})") from None
    return path
