r"""The documents' figures and tables, reproduced beside the numbers they print.

:func:`reproduce` runs declared figures (:func:`theory.experiments.figures`) at a preset: each figure's
experiment through the sweep cache (:func:`theory.sweep.sweep`, so a long run is resumable and a finished one
redraws for free, on a local pool or Dask), its verdicts (the claims' own, as the checks record them), the
figure in the document's layout, and a table of the document's printed numbers beside the measured ones.
``theory reproduce KEY [FIGURE ...]`` is its command line.

Output, under ``out`` (default ``reports/reproduce/<preset>/``)::

    <key>/<label>.png     the figure (label with '/' as '__': fig-4__moons.png)
    <key>/<label>.json    the record: verdicts, printed and measured numbers, config, seconds, machine, commit
    <key>/<label>.md      the side-by-side table
    <key>/README.md       the key's figures in inventory order, with their status
    README.md             the keys run, with their counts by status

Every file is written atomically, the key's index under a lock, so two runs at once keep both their figures.
A figure whose dataset is not under the data root is skipped with a message naming the dataset and where it is
published (:mod:`theory.datasets`); nothing is downloaded and nothing stands in for it silently: a substitute is a
figure of its own, marked proxy.

The committed gallery ``results/`` holds what ``theory reproduce KEY --preset paper --out results`` wrote on the
machine its records name.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Reproduction", "reproduce", "select_figures", "criterion_terms", "headline", "ReproduceInputError",
           "STATUSES"]

#: the outcomes of a figure: its claims pass, one fails, its dataset is missing, or it has no numbers (a diagram)
STATUSES = ("pass", "fail", "skip", "illustration")


class ReproduceInputError(ValueError):
    """A figure, preset, scheduler or folder that cannot be used; raised before anything runs."""


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """What :func:`reproduce` did for one figure.

    Attributes
    ----------
    figure : theory.experiments.Figure
    preset : str
    status : {"pass", "fail", "skip", "illustration"}
    message : str
        The skip reason, or the verdicts in one line.
    verdicts : dict of str to theory.claims.Verdict
        The verdict of each of the figure's claims that its experiment measures.
    numbers : dict
        The measured numbers (:meth:`theory.experiments.Figure.numbers_of`).
    rows : list of dict
        The side-by-side table: ``name``, ``where``, ``printed``, ``measured_key``, ``measured``, ``note``.
    png, record : pathlib.Path or None
        The figure and the JSON record written.
    seconds : float
        Compute time of its tasks (from the cache for tasks computed earlier).
    computed, cached : int
        Tasks computed now and read from the cache.
    """

    figure: Any
    preset: str
    status: str
    message: str
    verdicts: dict
    numbers: dict
    rows: list
    png: Path | None
    record: Path | None
    seconds: float
    computed: int = 0
    cached: int = 0

    @property
    def proxy(self) -> bool:
        """Whether the figure runs on a stand-in for the document's data or model."""
        return self.figure.substitute is not None


def select_figures(key: str, labels: Sequence[str] = ()) -> list:
    """The figures of paper ``key`` named by ``labels`` (all of them when empty).

    A label names a figure as the document numbers it (``fig-4.5``, ``table-4.2``), with a qualifier for a
    second run (``fig-4/moons``), or with the key (``momentum/fig-4.5``); a label of the inventory that
    declares no figure of its own selects its qualified runs (``fig-4.3`` of a key that declares only
    ``fig-4.3/a`` and ``fig-4.3/b`` selects both).

    Raises
    ------
    ReproduceInputError
        An unknown key, or a label the key does not declare (the message lists those it declares).
    """
    from theory.experiments import figures
    from theory.papers import PAPER_KEYS, paper

    if key not in PAPER_KEYS:
        raise ReproduceInputError(f"unknown paper key {key!r}; known keys: {', '.join(PAPER_KEYS)}")
    declared = figures(key)
    if not labels:
        return declared
    chosen = []
    for label in labels:
        text = label.partition("/")[2] if label.startswith(f"{key}/") else label
        found = [f for f in declared if f.label == text] or [f for f in declared if f.base == text]
        if not found:
            inventory = paper(key).figures
            missing = f" ({text} is in the document's inventory but declares no figure yet)" if text in inventory else ""
            raise ReproduceInputError(f"{key} has no figure {text!r}{missing}; it declares: "
                                      f"{', '.join(f.label for f in declared) or 'none'}")
        chosen += [f for f in found if f not in chosen]
    return chosen


def _plain(value: Any) -> Any:
    from theory.rates import to_plain

    return to_plain(value)


def _format(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v) for v in value[:6]) + (", ..." if len(value) > 6 else "") + "]"
    return str(value)


def _number(value: Any) -> Any:
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
    except ImportError:  # pragma: no cover
        pass
    return value


def criterion_terms(verdicts: Mapping) -> list[dict]:
    """The measured numbers of a figure's verdicts beside the bounds its criterion sets them, failing ones first.

    Parameters
    ----------
    verdicts : dict of str to Verdict or dict
        By claim ID, each a :class:`theory.claims.Verdict` or its record (a dict with ``expected``, ``measured``).

    Returns
    -------
    list of dict
        ``claim``, ``name``, ``measured``, ``relation`` (``"≤"``, ``"≥"``, ``"<"``, ``">"``, ``"±"``) and
        ``bound`` (a number; for a slope the pair (slope, tol)), ``holds`` (bool); the terms that do not hold
        come first, otherwise in the order the criterion states them. A verdict whose ``expected`` has no
        bound on a named measurement (an erratum's halves, a search) gives none.

    Examples
    --------
    >>> from theory.claims import threshold_verdict
    >>> v = threshold_verdict("qualitative", {"acc_a": 0.93, "acc_b": 0.85}, {"acc_a_min": 0.99, "acc_b_max": 0.9})
    >>> [(t["name"], t["holds"]) for t in criterion_terms({"k/fig-1": v})]
    [('acc_a', False), ('acc_b', True)]
    """
    from theory.claims import THRESHOLDS

    terms = []
    for claim, v in verdicts.items():
        expected = v.get("expected", {}) if isinstance(v, Mapping) else v.expected
        measured = v.get("measured", {}) if isinstance(v, Mapping) else v.measured
        if not isinstance(expected, Mapping) or not isinstance(measured, Mapping):
            continue
        if "slope" in expected and "tol" in expected and isinstance(measured.get("slope"), (int, float)):
            s, tol, m = float(expected["slope"]), float(expected["tol"]), float(measured["slope"])
            terms.append({"claim": claim, "name": "slope", "measured": m, "relation": "±", "bound": (s, tol),
                          "holds": math.isfinite(m) and abs(m - s) <= tol})
        for key, bound in expected.items():
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                continue
            for suffix, (symbol, holds) in THRESHOLDS.items():
                name = key[: -len(suffix)]
                if key.endswith(suffix) and name and name in measured:
                    m = measured[name]
                    if isinstance(m, bool) or not isinstance(m, (int, float)):
                        continue
                    m = float(m)
                    terms.append({"claim": claim, "name": "ratio" if key == "ratio_max" else name, "measured": m,
                                  "relation": symbol, "bound": float(bound),
                                  "holds": math.isfinite(m) and bool(holds(m, float(bound)))})
    return sorted(terms, key=lambda t: t["holds"])  # stable: failing terms first, each group in order


def headline(verdicts: Mapping, limit: int = 2) -> str:
    """The first ``limit`` of :func:`criterion_terms` in words: ``"acc_a 0.93 (criterion ≥ 0.99); ..."``.

    Empty when the verdicts bound no named measurement.

    Examples
    --------
    >>> from theory.claims import threshold_verdict
    >>> headline({"k/fig-1": threshold_verdict("qualitative", {"acc": 0.93}, {"acc_min": 0.99})})
    'acc 0.93 (criterion ≥ 0.99)'
    """
    parts = []
    for t in criterion_terms(verdicts)[:limit]:
        bound = (f"{_format(t['bound'][0])} ± {_format(t['bound'][1])}" if t["relation"] == "±"
                 else f"{t['relation']} {_format(t['bound'])}")
        parts.append(f"{t['name']} {_format(t['measured'])} (criterion {bound})")
    return "; ".join(parts)


def _rows(fig, numbers: Mapping) -> list[dict]:
    rows = []
    for p in fig.printed:
        measured = _number(numbers.get(p.measured)) if p.measured is not None else None
        note = p.note
        if p.measured is not None and p.measured not in numbers:
            note = (note + "; " if note else "") + f"not measured in this run ({p.measured} absent)"
        rows.append({"name": p.name, "where": p.where, "printed": p.value, "measured_key": p.measured,
                     "measured": measured, "note": note})
    return rows


def _file_stem(fig) -> str:
    return fig.label.replace("/", "__")


def _markdown(rec: Mapping) -> str:
    lines = [f"# {rec['figure']}: {rec['number']} — {rec['title']}", ""]
    status = rec["status"] + (" (proxy)" if rec.get("substitute") else "")
    lines += [f"- status: **{status}** at preset `{rec['preset']}`", f"- criterion: {rec['criterion'] or '—'}"]
    if rec.get("substitute"):
        lines.append(f"- substitute (a proxy): {rec['substitute']}")
    if rec.get("data"):
        lines.append(f"- dataset: {rec['data']}")
    if rec.get("preset_note"):
        lines.append(f"- preset: {rec['preset_note']}")
    if rec.get("settings"):
        lines.append("- changed from the preset: " + ", ".join(f"{k} = {v}" for k, v in rec["settings"].items()))
    if rec.get("illustration"):
        lines.append(f"- illustration: {rec['illustration']}")
    if rec["status"] == "skip":
        lines.append(f"- skipped: {rec['message']}")
    for claim, v in rec.get("verdicts", {}).items():
        lines.append(f"- `{claim}`: {v['status']}: {v['message']}")
    lines.append(f"- run: {rec['seconds']:.1f} s of compute ({rec['computed']} task(s) computed, {rec['cached']} "
                 f"from the cache) on {rec['machine']}; theory at {str(rec.get('commit') or '?')[:12]}, "
                 f"{rec['date']}")
    if rec.get("png"):
        lines += ["", f"![{rec['figure']}]({Path(rec['png']).name})"]
    if rec["rows"]:
        lines += ["", "| the document prints | where | printed | measured | note |", "|---|---|---|---|---|"]
        for r in rec["rows"]:
            lines.append(f"| {r['name']} | {r['where']} | {_format(r['printed'])} | {_format(r['measured'])} | "
                         f"{r['note']} |")
    lines += ["", f"Rerun: `{rec['command']}`", ""]
    return "\n".join(lines)


def _index(folder: Path, key: str) -> str:
    from theory.experiments import figures
    from theory.papers import paper

    records = {}
    for path in sorted(folder.glob("*.json")):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        records[rec.get("figure")] = rec
    declared = {f.id: f for f in figures(key)}
    lines = [f"# `{key}`: {paper(key).title}", "",
             "| figure | title | status | preset | seconds | measured against the criterion | printed vs measured |",
             "|---|---|---|---|---|---|---|"]
    for label in paper(key).figures:
        ours = [f for f in declared.values() if f.base == label]
        if not ours:
            lines.append(f"| {label} | — | not declared | | | | |")
        for f in ours:
            rec = records.get(f.id)
            if rec is None:
                lines.append(f"| [{f.label}] | {f.title} | not run | | | | |")
                continue
            # the printed numbers the run did not just echo (a preset's sizes equal to the document's are in the md)
            shown = "; ".join(f"{r['name']}: " + (f"{_format(r['printed'])} vs " if r["printed"] is not None else "")
                              + _format(r["measured"])
                              for r in rec["rows"] if r["measured"] is not None and r["measured"] != r["printed"])
            criterion = headline(rec.get("verdicts") or {}, 2) or "—"
            status = rec["status"] + (" (proxy)" if rec.get("substitute") else "")
            preset = rec.get("preset") + "".join(f", {k} = {v}" for k, v in (rec.get("settings") or {}).items())
            lines.append(f"| [{f.label}]({_file_stem(f)}.md) | {f.title} | {status} | {preset} | "
                         f"{float(rec.get('seconds') or 0.0):.1f} | {criterion} | {shown} |")
    missing = [f for f in declared.values() if f.illustration is None
               and (records.get(f.id) or {}).get("preset") != "paper"]
    if missing:
        lines += ["", "## Not run at the paper preset here", "",
                  "Each with what its paper preset takes (its preset note) and the command that runs it; the scale "
                  "experiments run on PyTorch on a CUDA device with `--backend torch --device cuda`.", ""]
        for f in missing:  # in the declarations' order
            rec = records.get(f.id)
            done = f" (recorded at preset {rec.get('preset')})" if rec else ""
            note = (f.preset_note or "the paper preset is the document's sizes").rstrip(".")
            lines.append(f"- **{f.label}**{done}: {note}. `{_gpu_command(f)}`")
    return "\n".join(lines) + "\n"


def _command(fig, preset: str, data, settings: Mapping | None = None, texts: Mapping | None = None) -> str:
    parts = ["theory reproduce", fig.key, fig.label]
    if preset != "check":
        parts += ["--preset", preset]
    if fig.data is not None:
        parts += ["--data", "DIR"]
    for name in settings or {}:
        text = (texts or {}).get(name, str((settings or {})[name]))
        parts += [f"--{name}", text] if name in ("backend", "device") else ["--set", f"{name}={text}"]
    return " ".join(parts)


def _gpu_command(fig) -> str:
    """The command of ``fig`` at the paper preset, on a CUDA device where its experiment can run on PyTorch."""
    from theory.experiments import experiment

    fields = experiment(fig.experiment).fields
    texts = {"backend": "torch", "device": "cuda"} if "backend" in fields else {"device": "cuda"} \
        if "device" in fields else {}
    return _command(fig, "paper", None, texts, texts)


def _write(rec: dict, png_tmp: str | None, folder: Path) -> tuple[Path | None, Path]:
    from theory._files import locked, write_atomic

    folder.mkdir(parents=True, exist_ok=True)
    stem = rec["stem"]
    png = None
    if png_tmp is not None:
        png = folder / f"{stem}.png"
        os.replace(png_tmp, png)
        rec["png"] = _portable(png)
    text = json.dumps(_plain(rec), indent=1, allow_nan=False, default=repr) + "\n"
    record = write_atomic(folder / f"{stem}.json", text)
    write_atomic(folder / f"{stem}.md", _markdown(rec))
    with locked(folder.parent / ".index.lock"):
        write_atomic(folder / "README.md", _index(folder, rec["key"]))
        write_atomic(folder.parent / "README.md", _top_index(folder.parent))
    return png, record


def _portable(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it (a gallery moved with its repository
    keeps its links), else as given."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _top_index(out: Path) -> str:
    from theory.papers import PAPERS

    lines = ["# Figures and tables of the documents, reproduced", "",
             "Written by `theory reproduce`; each key's page lists its figures with the machine and time of each run.",
             "", "| paper key | in the inventory | run | pass | fail | skip (data) | illustrations | proxies |",
             "|---|---|---|---|---|---|---|---|"]
    for p in PAPERS:
        folder = out / p.key
        if not folder.is_dir():
            continue
        recs = []
        for path in sorted(folder.glob("*.json")):
            try:
                recs.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
        count = {s: sum(r.get("status") == s for r in recs) for s in STATUSES}
        proxies = sum(bool(r.get("substitute")) for r in recs)
        lines.append(f"| [{p.key}]({p.key}/README.md) | {len(p.figures)} | {len(recs)} | {count['pass']} | "
                     f"{count['fail']} | {count['skip']} | {count['illustration']} | {proxies} |")
    return "\n".join(lines) + "\n"


def _draw(fig, result, folder: Path) -> str | None:
    from theory.plots import figure_directory

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".draw-") as tmp:
        with figure_directory(tmp):
            path = fig.draw(result)
        if path is None or not Path(path).exists():
            raise RuntimeError(f"the drawing of {fig.id} wrote no file (it must save with theory.plots.save_figure)")
        fd, staged = tempfile.mkstemp(dir=folder, prefix=".png-", suffix=".png")
        os.close(fd)
        os.replace(path, staged)
    return staged


def _one(fig, preset: str, *, scheduler: str, workers: int | None, data, out: Path, cache: Path | None,
         stream, settings: Mapping | None = None, texts: Mapping | None = None) -> Reproduction:
    from theory import sweep as _sweep
    from theory._machine import machine_line
    from theory.datasets import DatasetMissing, data_root, locate
    from theory.experiments import experiment
    from theory.report import git_commit

    rec: dict = {"figure": fig.id, "key": fig.key, "label": fig.label, "stem": _file_stem(fig), "number": fig.number,
                 "title": fig.title, "preset": preset, "criterion": fig.criterion, "substitute": fig.substitute,
                 "data": fig.data, "preset_note": fig.preset_note, "illustration": fig.illustration,
                 "claims": list(fig.claims), "verdicts": {}, "rows": [], "numbers": {}, "seconds": 0.0,
                 "computed": 0, "cached": 0, "command": _command(fig, preset, data, settings, texts),
                 "settings": {k: _plain(v) for k, v in (settings or {}).items()},
                 "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    folder = out / fig.key

    def finish(status, message, verdicts=None, numbers=None, png_tmp=None, seconds=0.0, computed=0, cached=0):
        rec.update(status=status, message=message, seconds=float(seconds), computed=computed, cached=cached,
                   machine=machine_line(), commit=git_commit())
        rec["verdicts"] = {c: {"status": v.status, "kind": v.kind, "message": v.message, "expected": v.expected,
                               "measured": v.measured} for c, v in (verdicts or {}).items()}
        rec["numbers"] = {k: _number(v) for k, v in (numbers or {}).items()
                          if isinstance(_number(v), (int, float, str, bool, list, tuple)) or v is None}
        rec["rows"] = _rows(fig, numbers or {})
        png, record = _write(rec, png_tmp, folder)
        return Reproduction(fig, preset, status, message, dict(verdicts or {}), dict(numbers or {}), rec["rows"],
                            png, record, float(seconds), computed, cached)

    if fig.illustration is not None:
        return finish("illustration", fig.illustration)
    stream.write(f"{fig.id} ({fig.number}) at preset {preset} ...\n")
    stream.flush()
    grid = dict(fig.grid or {})
    grid.update({name: (value,) for name, value in (settings or {}).items()})
    exp = experiment(fig.experiment)
    if preset not in exp.presets:
        raise ReproduceInputError(f"--preset: experiment {exp.name} of {fig.id} has no preset {preset!r}; its "
                                  f"presets: {', '.join(sorted(exp.presets))}")
    if fig.data is not None:
        try:
            folder_found = locate(fig.data, data)
        except DatasetMissing as exc:
            return finish("skip", str(exc))
        if "data" in exp.fields:
            grid["data"] = (str(data_root(data) or folder_found.parent),)
    res = _sweep.sweep(exp.name, {k: list(v) for k, v in grid.items()}, preset=preset, scheduler=scheduler,
                       workers=workers, out=cache / exp.name if cache is not None else None, stream=stream)
    seconds = sum(s or 0.0 for s in res.task_seconds)
    if res.failures:
        point, error = res.failures[0]
        return finish("fail", f"the experiment raised at {point or 'the preset'}: {error}", seconds=seconds,
                      computed=res.computed, cached=res.cached)
    result = res if fig.grid is not None else res.result(0)
    if fig.grid is not None:
        verdicts = {fig.claims[0]: fig.verdict(res)}
    else:
        verdicts = {c: exp.verdict_for(c)(result) for c in fig.claims if c in exp.claims}
    numbers = fig.numbers_of(result, verdicts, res.configs[0])
    png_tmp = _draw(fig, result, folder)
    failed = [c for c, v in verdicts.items() if not v.passed]
    status = "fail" if failed else "pass"
    message = "; ".join(f"{c}: {v.status}" for c, v in verdicts.items()) or "no claim of the figure is measured here"
    return finish(status, message, verdicts, numbers, png_tmp, seconds, res.computed, res.cached)


def reproduce(key: str, labels: Sequence[str] = (), *, preset: str = "check", scheduler: str = "local",
              workers: int | None = None, data: str | os.PathLike | None = None,
              out: str | os.PathLike | None = None, cache: str | os.PathLike | None = None,
              settings: Mapping[str, str] | None = None, stream=None) -> list[Reproduction]:
    """Reproduce figures of paper ``key`` at ``preset``: run, judge, draw, and table them beside the document.

    Parameters
    ----------
    key : str
        A paper key (``"momentum"``).
    labels : sequence of str
        Figures by the document's numbering (``"fig-4.5"``, ``"table-4.2"``); all of the key's when empty.
    preset : {"check", "paper"} or str
        ``"paper"``: the document's sizes (each figure's ``preset_note`` says where they differ, and why);
        ``"check"``: the sizes ``pytest checks/`` runs.
    scheduler, workers
        As in :func:`theory.sweep.sweep` (``"local"`` pool, ``"dask"``, a scheduler address, ``"serial"``).
    data : path, optional
        The data root for figures on a dataset (default ``$THEORY_DATA``; :mod:`theory.datasets`).
    out : path, optional
        Output folder (default ``reports/reproduce/<preset>/``); the committed gallery is ``results``.
    cache : path, optional
        Sweep cache root (default ``reports/sweeps/``, one folder per experiment).
    settings : mapping of str to str, optional
        Fields changed from the preset, as ``theory run --set NAME=TEXT`` types them (``{"backend": "torch",
        "device": "cuda"}`` for a GPU run): each applies to the figures whose experiment has that field, parsed
        and validated by its declaration; a name no chosen figure's experiment has is refused. ``device`` other
        than ``cpu`` without ``backend`` means the torch backend, as in ``theory run``. The record names them.
    stream : file, optional
        Where progress lines go (default ``sys.stderr``).

    Returns
    -------
    list of Reproduction
        One per figure, in inventory order.

    Raises
    ------
    ReproduceInputError
        An unknown key, figure or preset, or an unwritable output folder, before anything runs.
    """
    from theory._files import find_root

    stream = stream or sys.stderr
    chosen = select_figures(key, labels)
    if not isinstance(preset, str) or not preset:
        raise ReproduceInputError(f"`preset` must be a preset name such as 'check' or 'paper'; got {preset!r}")
    root = find_root() or Path.cwd()
    out = Path(out) if out is not None else root / "reports" / "reproduce" / preset
    try:
        (out / key).mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=out / key, prefix=".probe.", delete=True)
        probe.close()
    except OSError as exc:
        raise ReproduceInputError(f"--out {str(out)!r} is not writable ({exc.strerror or exc})") from None
    from theory.experiments import experiment

    for fig in chosen:  # every preset exists before anything runs
        if fig.experiment is not None and preset not in experiment(fig.experiment).presets:
            raise ReproduceInputError(f"--preset: experiment {fig.experiment} of {fig.id} has no preset {preset!r}; "
                                      f"its presets: {', '.join(sorted(experiment(fig.experiment).presets))}")
    changes = _settings_of(chosen, settings)
    cache = Path(cache) if cache is not None else None
    return [_one(fig, preset, scheduler=scheduler, workers=workers, data=data, out=out, cache=cache, stream=stream,
                 settings=changes.get(fig.id, {}), texts=dict(settings or {}))
            for fig in chosen]


def _settings_of(chosen, settings) -> dict:
    """Per figure, the fields of its experiment that ``settings`` changes, parsed: ``{figure id: {name: value}}``.

    Raises ReproduceInputError for a name that no chosen figure's experiment has, or a text its declaration
    refuses."""
    from theory.experiments import experiment

    texts = dict(settings or {})
    for name, text in texts.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise ReproduceInputError(f"`settings` maps field names to their text (NAME=VALUE); got {name!r}: {text!r}")
    # --device cuda alone means the torch backend where an experiment has one, as in theory run
    implied = texts.get("device", "cpu") != "cpu" and "backend" not in texts
    out, used = {}, set()
    for fig in chosen:
        if fig.experiment is None:
            continue
        exp = experiment(fig.experiment)
        mine = {}
        for name, text in texts.items():
            if name not in exp.fields:
                continue
            try:
                mine[name] = exp.parse(name, text)
            except (TypeError, ValueError) as exc:
                raise ReproduceInputError(f"--set {name}={text}: {exc} (experiment {exp.name} of {fig.id})") from None
            used.add(name)
        if implied and "device" in mine and "backend" in exp.fields:
            mine["backend"] = exp.parse("backend", "torch")
        out[fig.id] = mine
    device = texts.get("device", "cpu")
    if device != "cpu" and "device" in used:
        try:
            import torch
        except ImportError:
            raise ReproduceInputError(f"--device {device}: PyTorch is not installed (pip install -e '.[gpu]')") from None
        if not torch.cuda.is_available():
            raise ReproduceInputError(f"--device {device}: no CUDA device is visible to PyTorch here") from None
    unknown = [name for name in texts if name not in used]
    if unknown:
        raise ReproduceInputError(f"--set {', '.join(unknown)}: no experiment of the chosen figures has "
                                  f"{'this field' if len(unknown) == 1 else 'these fields'} (`theory run EXPERIMENT "
                                  "--help` and `theory sweep --list` show an experiment's fields)")
    return out
