"""The claims report: records to a JSON document to a Markdown table, all pure functions.

``build_report`` turns :class:`theory.claims.ClaimRecord` objects into the document of
DESIGN.md ("The claims report"); ``render_markdown`` renders that document, and nothing else,
as the table a person reads first; ``write_report`` and ``load_report`` are the only functions
touching files. The pytest layer is :mod:`theory.pytest_plugin` (STYLE practice 16).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from theory.claims import STATUSES, ClaimRecord
from theory.rates import to_plain

__all__ = [
    "collect_environment",
    "build_report",
    "count_statuses",
    "summary_line",
    "render_markdown",
    "write_report",
    "load_report",
]

_RESERVED = ("generated", "version", "environment", "claims")


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    """Commit of the repository holding this package, or None outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parents[1],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def collect_environment() -> dict:
    """Versions of Python, NumPy, SciPy and Numba, the platform and the git commit (or None)."""
    return {
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "numba": _version("numba"),
        "platform": platform.platform(),
        "git_commit": _git_commit(),
    }


def build_report(
    records: Iterable[ClaimRecord | Mapping],
    *,
    generated: str | None = None,
    version: str | None = None,
    extra: Mapping | None = None,
    environment: Mapping | None = None,
) -> dict:
    """Build the claims report document from claim records.

    Parameters
    ----------
    records : iterable of ClaimRecord or dict
        One record per claim ID (merge duplicates first with
        :func:`theory.claims.merge_records`).
    generated : str, optional
        ISO time stamp; defaults to now, in UTC.
    version : str, optional
        Package version; defaults to ``theory.__version__``.
    extra : dict, optional
        Further top-level entries (not ``generated``, ``version``, ``environment``, ``claims``).
    environment : dict, optional
        Defaults to :func:`collect_environment`.

    Returns
    -------
    dict
        ``{"generated", "version", "environment", **extra, "claims": [...]}``, claims sorted by
        ID, each with the key order of :class:`ClaimRecord`; JSON-safe: non-finite floats are
        null, with a note in the record.

    Raises
    ------
    ValueError
        On a duplicate claim ID or a reserved key in ``extra``.
    """
    claims = []
    for record in records:
        data = record.as_dict() if isinstance(record, ClaimRecord) else dict(record)
        notes = list(data.get("notes") or [])
        for key in ("expected", "measured", "seconds"):
            data[key] = to_plain(data.get(key), notes, key)
        data["notes"] = notes
        claims.append(to_plain(data))
    claims.sort(key=lambda c: c["id"])
    ids = [c["id"] for c in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(
            f"theory.report.build_report got duplicate claim IDs {duplicates}; "
            "merge them first with theory.claims.merge_records"
        )
    if version is None:
        from theory import __version__ as version
    report = {
        "generated": generated
        or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "version": version,
        "environment": to_plain(dict(environment if environment is not None else collect_environment())),
    }
    for key, value in (extra or {}).items():
        if key in _RESERVED:
            raise ValueError(f"`extra` of theory.report.build_report must not set {key!r}")
        report[key] = to_plain(value)
    report["claims"] = claims
    return report


def count_statuses(report: Mapping) -> dict:
    """Number of claims per status: ``{"pass": p, "fail": f, "skip": s}``."""
    counts = dict.fromkeys(STATUSES, 0)
    for claim in report["claims"]:
        counts[claim["status"]] = counts.get(claim["status"], 0) + 1
    return counts


def summary_line(report: Mapping) -> str:
    """One line: ``"12 claims: 10 pass, 1 fail, 1 skip"``.

    Examples
    --------
    >>> summary_line({"claims": [{"status": "pass"}, {"status": "skip"}]})
    '2 claims: 1 pass, 0 fail, 1 skip'
    """
    counts = count_statuses(report)
    total = sum(counts.values())
    return f"{total} claim{'s' if total != 1 else ''}: " + ", ".join(f"{n} {s}" for s, n in counts.items())


# --------------------------------------------------------------------------- Markdown


def _num(x: Any, spec: str = ".3g") -> str:
    return "null" if x is None else format(x, spec) if isinstance(x, (int, float)) else str(x)


def _short(value: Any) -> str:
    """A value in a few characters: floats to 4 significant digits, long text cut."""
    if isinstance(value, float):
        text = format(value, ".4g")
    elif isinstance(value, list):
        text = "[" + ", ".join(_short(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k}: {_short(v)}" for k, v in value.items()) + "}"
    else:
        text = "null" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _generic(d: Mapping, skip: tuple = ()) -> str:
    return "; ".join(f"{key} = {_short(value)}" for key, value in d.items() if key not in skip)


def _predicted(expected: Mapping) -> str:
    """The ``expected`` dict of any kind in a few words."""
    if not expected:
        return ""
    parts, used = [], set()
    if "slope" in expected and "tol" in expected:
        parts.append(f"slope {_num(expected['slope'], '.2f')} ± {_num(expected['tol'], '.2f')}")
        used |= {"slope", "tol"}
    if "slope_max" in expected:
        parts.append(f"slope ≤ {_num(expected['slope_max'], '.2f')}")
        used.add("slope_max")
    if "ratio_max" in expected:
        parts.append(f"LHS/RHS ≤ {_num(expected['ratio_max'], 'g')}")
        used.add("ratio_max")
    if "delta" in expected:
        parts.append(f"P(violation) ≤ {_num(expected['delta'], 'g')}")
        used.add("delta")
    if "atol" in expected:
        parts.append(f"abs err ≤ {_num(expected['atol'], '.2g')}")
        used.add("atol")
    if "rtol" in expected:
        parts.append(f"rel err ≤ {_num(expected['rtol'], '.2g')}")
        used.add("rtol")
    rest = _generic(expected, tuple(used))
    return "; ".join(parts + ([rest] if rest else []))


def _measured(measured: Mapping) -> str:
    """The ``measured`` dict of any kind in a few words."""
    if not measured:
        return ""
    if "slope" in measured:
        lo, hi = (measured.get("ci") or [None, None])[:2]
        text = f"slope {_num(measured['slope'], '.2f')} [{_num(lo, '.2f')}, {_num(hi, '.2f')}]"
        grid = measured.get("grid") or []
        if grid:
            text += f", {_num(min(grid), 'g')}..{_num(max(grid), 'g')}"
        if measured.get("dropped"):
            text += f" ({len(measured['dropped'])} dropped)"
        return text
    if "ratio" in measured:
        return f"max ratio {_num(measured['ratio'], '.4g')} (n = {measured.get('n_instances', '?')})"
    if "freq" in measured:
        lo, hi = (measured.get("ci") or [None, None])[:2]
        return (
            f"{_num(measured['freq'])} [{_num(lo)}, {_num(hi)}] "
            f"({measured.get('violations', '?')}/{measured.get('runs', '?')})"
        )
    if "max_abs_err" in measured:
        return (
            f"abs {_num(measured['max_abs_err'], '.2e')}, rel {_num(measured.get('max_rel_err'), '.2e')} "
            f"(n = {measured.get('n_instances', '?')})"
        )
    return _generic(measured)


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _link(figure: str | None, link_base: str) -> str:
    if not figure:
        return ""
    target = figure if os.path.isabs(figure) or "://" in figure else link_base + figure
    return f"[png]({target.replace(' ', '%20')})"


def render_markdown(report: Mapping, *, link_base: str = "") -> str:
    """Render the report document as Markdown: summary line, table, then the details.

    Parameters
    ----------
    report : dict
        As returned by :func:`build_report` or :func:`load_report`.
    link_base : str, optional
        Prefix of the figure links (figure paths are relative to the repository root; from
        ``reports/claims.md`` the prefix is ``"../"``).

    Returns
    -------
    str
    """
    lines = ["# Claims report", "", f"**{summary_line(report)}**", ""]
    env = report.get("environment") or {}
    stamp = [f"generated {report.get('generated', '?')}", f"theory {report.get('version', '?')}"]
    stamp += [f"{k} {env[k]}" for k in ("python", "numpy", "scipy", "numba") if env.get(k)]
    if env.get("git_commit"):
        stamp.append(f"commit {str(env['git_commit'])[:12]}")
    lines += [", ".join(stamp), ""]
    lines += ["| Claim | Statement | Predicted | Measured | Verdict | Figure |",
              "|---|---|---|---|---|---|"]
    for c in report["claims"]:
        claim = f"`{c['id']}`"
        if c.get("aliases"):
            claim += " (also " + ", ".join(f"`{a}`" for a in c["aliases"]) + ")"
        predicted = _predicted(c.get("expected") or {})
        if c.get("kind") == "erratum" and predicted:
            predicted = f"printed: {predicted} (should fail)"
        verdict = {"pass": "pass", "fail": "**FAIL**", "skip": "skip"}.get(c["status"], c["status"])
        cells = [claim, c.get("title", ""), predicted, _measured(c.get("measured") or {}),
                 verdict, _link(c.get("figure"), link_base)]
        lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    details = [c for c in report["claims"] if c["status"] != "pass" or c.get("notes")]
    if details:
        lines += ["", "## Details", ""]
        for c in details:
            text = f"- `{c['id']}` ({c['status']}): {' '.join(str(c.get('message') or '').split())}"
            if c.get("test"):
                text += f" [`{c['test']}`]"
            lines.append(text)
            lines += [f"  - note: {' '.join(str(n).split())}" for n in c.get("notes") or []]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- files


def write_report(
    report: Mapping, directory: str | os.PathLike, *, root: str | os.PathLike | None = None
) -> tuple[Path, Path]:
    """Write ``claims.json`` and ``claims.md`` into ``directory`` (created if needed).

    Parameters
    ----------
    report : dict
        From :func:`build_report`.
    directory : path
        Output directory.
    root : path, optional
        Directory the figure paths are relative to (the repository root); defaults to the
        current directory. Figure links in ``claims.md`` are made relative to ``directory``.

    Returns
    -------
    (json_path, md_path) : tuple of Path
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    base = os.path.relpath(Path(root or os.getcwd()).resolve(), directory.resolve())
    link_base = "" if base == "." else Path(base).as_posix() + "/"
    json_path, md_path = directory / "claims.json", directory / "claims.md"
    json_path.write_text(json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(report, link_base=link_base), encoding="utf-8")
    return json_path, md_path


def load_report(path: str | os.PathLike) -> dict:
    """Read a claims report: ``path`` is ``claims.json`` or the directory holding it.

    Raises
    ------
    FileNotFoundError
        If there is no report there.
    ValueError
        If the file is not a claims report.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "claims.json"
    if not path.is_file():
        raise FileNotFoundError(f"no claims report at {path}")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc}") from exc
    if not isinstance(report, dict) or not isinstance(report.get("claims"), list):
        raise ValueError(f"{path} is not a claims report (no 'claims' list)")
    for i, claim in enumerate(report["claims"]):
        where = f"{path}: claim {i}"
        if not isinstance(claim, dict):
            raise ValueError(f"{where} is not an object; got {type(claim).__name__} {claim!r:.60}")
        if not isinstance(claim.get("id"), str):
            raise ValueError(f"{where} has no string 'id'")
        if claim.get("status") not in STATUSES:
            raise ValueError(f"{where} ({claim['id']}) has status {claim.get('status')!r}, not one of {list(STATUSES)}")
        for key in ("expected", "measured", "environment"):
            if claim.get(key) is not None and not isinstance(claim[key], dict):
                raise ValueError(f"{where} ({claim['id']}): '{key}' must be an object; got {type(claim[key]).__name__}")
        if not isinstance(claim.get("aliases") or [], list) or not isinstance(claim.get("notes") or [], list):
            raise ValueError(f"{where} ({claim['id']}): 'aliases' and 'notes' must be lists")
    if report.get("environment") is not None and not isinstance(report["environment"], dict):
        raise ValueError(f"{path}: 'environment' must be an object")
    return report
