"""The claims report: records to a JSON document to a Markdown table, all pure functions.

``build_report`` turns :class:`theory.claims.ClaimRecord` objects into the document of
the README ("The claims report"); ``render_markdown`` renders that document, and nothing else,
as the table a person reads first; ``write_report`` and ``load_report`` are the only functions
touching files. The pytest layer is ``theory.pytest_plugin``.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import re
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from theory._files import write_atomic_many
from theory.claims import STATUSES, THRESHOLDS, ClaimRecord
from theory.rates import to_plain

__all__ = [
    "collect_environment",
    "build_report",
    "count_statuses",
    "count_proxies",
    "summary_line",
    "render_markdown",
    "write_report",
    "load_report",
    "merge_with_previous",
    "freshness",
    "render_table",
    "claim_line",
    "worst_cases",
    "worst_case_table",
    "searches_of",
    "proof_chains",
    "predicted_text",
    "measured_text",
    "decisive",
    "rerun_command",
    "git_commit",
]

_RESERVED = ("generated", "version", "environment", "claims")


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
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
        "git_commit": git_commit(),
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


def count_proxies(report: Mapping) -> int:
    """Number of passing records marked as proxies (instances outside the statement's hypotheses)."""
    return sum(1 for c in report["claims"] if c.get("proxy") and c.get("status") == "pass")


def summary_line(report: Mapping) -> str:
    """One line: ``"12 claims: 10 pass, 1 fail, 1 skip"``, and how many passes are proxies.

    Examples
    --------
    >>> summary_line({"claims": [{"status": "pass"}, {"status": "skip"}]})
    '2 claims: 1 pass, 0 fail, 1 skip'
    >>> summary_line({"claims": [{"status": "pass"}, {"status": "pass", "proxy": "m << 4.8e6 n"}]})
    '2 claims: 2 pass, 0 fail, 0 skip (1 pass is a proxy outside the hypotheses, verifying nothing)'
    """
    counts = count_statuses(report)
    total = sum(counts.values())
    line = f"{total} claim{'s' if total != 1 else ''}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    proxies = count_proxies(report)
    if proxies:
        line += (f" ({proxies} pass{'es are proxies' if proxies != 1 else ' is a proxy'}"
                 " outside the hypotheses, verifying nothing)")
    return line


# --------------------------------------------------------------------------- Markdown





def _num(x: Any, spec: str = ".3g") -> str:
    """A number of the report, ``n/a`` where it could not be computed (written as null)."""
    if x is None:
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    return format(x, spec)


def _short(value: Any) -> str:
    """A value in a few characters: floats to 4 significant digits, long text cut."""
    if isinstance(value, float):
        text = format(value, ".4g")
    elif isinstance(value, list):
        text = "[" + ", ".join(_short(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k}: {_short(v)}" for k, v in value.items()) + "}"
    else:
        text = "n/a" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _generic(d: Mapping, skip: tuple = ()) -> str:
    return "; ".join(f"{key} = {_short(value)}" for key, value in d.items() if key not in skip)


def predicted_text(expected: Mapping) -> str:
    """The ``expected`` dict of a record of any kind in a few words (key = value for an unexpected layout).

    Examples
    --------
    >>> predicted_text({"slope": -1.0, "tol": 0.1})
    'slope -1.00 ± 0.10'
    >>> predicted_text({"max_diff_max": 1e-12, "gap_min": 0.01})
    'max_diff ≤ 1e-12; gap ≥ 0.01'
    """
    if not isinstance(expected, Mapping):
        return _short(expected)
    try:
        return _predicted_known(expected)
    except (TypeError, ValueError, KeyError, IndexError):
        return _generic(expected)


def measured_text(measured: Mapping) -> str:
    """The ``measured`` dict of a record of any kind in a few words (key = value for an unexpected layout).

    Examples
    --------
    >>> measured_text({"slope": -0.99, "ci": [-1.0, -0.98], "grid": [8, 512]})
    'slope -0.99 [-1.00, -0.98], 8..512'
    """
    if not isinstance(measured, Mapping):
        return _short(measured)
    try:
        return _measured_known(measured)
    except (TypeError, ValueError, KeyError, IndexError):
        return _generic(measured)


def _predicted_known(expected: Mapping) -> str:
    if not expected:
        return ""
    if set(expected) == {"criterion"}:  # a figure's criterion in words (a claim that recorded no verdict)
        return str(expected["criterion"])
    if "printed" in expected and isinstance(expected["printed"], Mapping):  # an erratum's two halves
        text = f"printed: {predicted_text(expected['printed'])} (should fail)"
        if isinstance(expected.get("corrected"), Mapping):
            text += f"; corrected: {predicted_text(expected['corrected'])}"
        return text
    parts, used = [], {"search"}
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
    for key, value in expected.items():  # thresholds on named measurements (theory.claims.threshold_verdict)
        for suffix, (symbol, _) in THRESHOLDS.items():
            if key not in used and key.endswith(suffix) and len(key) > len(suffix):
                parts.append(f"{key[: -len(suffix)]} {symbol} {_num(value, '.3g')}")
                used.add(key)
    if isinstance(expected.get("search"), Mapping):
        parts.append(f"worst case searched ≤ {_num(expected['search'].get('ratio_max'), 'g')}")
    rest = _generic(expected, tuple(used))
    return "; ".join(parts + ([rest] if rest else []))


def _measured_known(measured: Mapping) -> str:
    if not measured:
        return ""
    if "slope" in measured:
        text = f"slope {_num(measured['slope'], '.2f')}{_interval(measured.get('ci'), '.2f')}"
        grid = measured.get("grid") or []
        if grid:
            text += f", {_num(min(grid), 'g')}..{_num(max(grid), 'g')}"
        if measured.get("dropped"):
            text += f" ({len(measured['dropped'])} dropped)"
        return text
    if "ratio" in measured:
        return (f"max ratio {_num(measured['ratio'], '.4g')} (n = {measured.get('n_instances', '?')})"
                + _searched(measured))
    if "freq" in measured:
        return (
            f"{_num(measured['freq'])}{_interval(measured.get('ci'), '.3g')} "
            f"({measured.get('violations', '?')}/{measured.get('runs', '?')})"
        )
    if "max_abs_err" in measured:
        rel = measured.get("norm_rel_err", measured.get("max_rel_err"))
        rel_text = f"rel {_num(rel, '.2e')}" if rel is not None else "rel n/a (zero reference)"
        return f"abs {_num(measured['max_abs_err'], '.2e')}, {rel_text} (n = {measured.get('n_instances', '?')})"
    return _generic(measured, ("search",)) + _searched(measured)


def _searched(measured: Mapping) -> str:
    """The worst-case search of a bound in a few words (empty without one)."""
    search = measured.get("search")
    if not isinstance(search, Mapping):
        return ""
    return f"; searched worst {_num(search.get('ratio'), '.4g')} ({_num(search.get('evaluations'))} evaluations)"


def _interval(ci: Any, spec: str) -> str:
    if not isinstance(ci, (list, tuple)) or len(ci) < 2:
        return ""
    if ci[0] is None or ci[1] is None:
        return " (no interval: the bootstrap had too few finite resamples)"
    return f" [{_num(ci[0], spec)}, {_num(ci[1], spec)}]"


def _threshold_margin(value: Any, bound: Any, above: bool) -> float:
    """How far a measured value is inside its threshold, relative to the threshold (negative: violated).

    An infinite bound (``x_max = inf``, stored in the JSON report as null) only asks for a finite value: it is
    never the closest threshold unless the value is not a finite number.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        return -math.inf
    if bound is None or (isinstance(bound, float) and math.isinf(bound)):
        return math.inf if math.isfinite(value) else -math.inf
    if not isinstance(bound, (int, float)) or isinstance(bound, bool):
        return -math.inf
    if value > 0 and bound > 0:  # positive quantities (errors, ratios, counts): orders of magnitude inside
        return math.log(value / bound) if above else math.log(bound / value)
    gap = (value - bound) if above else (bound - value)
    scale = abs(bound) if bound else (abs(value) or 1.0)
    return gap / scale


_SYMBOLS = {"_max": ("≤", False), "_min": ("≥", True), "_below": ("<", False), "_above": (">", True)}


def _decisive_of(expected: Mapping, measured: Mapping) -> tuple[str, str]:
    e, m = expected or {}, measured or {}
    if "slope" in m and ("slope" in e or "slope_max" in e):
        grid = m.get("grid") or []
        over = f", {_num(min(grid), 'g')}..{_num(max(grid), 'g')}" if grid else ""
        parts = []
        if "slope" in e:
            parts.append(f"slope {_num(e['slope'], '.2f')} ± {_num(e.get('tol'), '.2f')}")
        if "slope_max" in e:
            parts.append(f"slope ≤ {_num(e['slope_max'], '.2f')}")
        return f"slope {_num(m['slope'], '.2f')}{_interval(m.get('ci'), '.2f')}{over}", " and ".join(parts)
    if "ratio" in m and "ratio_max" in e:
        return (f"max LHS/RHS {_num(m['ratio'], '.4g')} ({_num(m.get('n_instances', '?'))} instances)"
                + _searched(m), f"LHS/RHS ≤ {_num(e['ratio_max'], 'g')}")
    if "freq" in m and "delta" in e:
        return (f"violations {_num(m['freq'])}{_interval(m.get('ci'), '.3g')} "
                f"({_num(m.get('violations', '?'))}/{_num(m.get('runs', '?'))})", f"P(violation) ≤ {_num(e['delta'], 'g')}")
    if "max_abs_err" in m and ("atol" in e or "rtol" in e):
        parts, got = [], []
        if "atol" in e:
            parts.append(f"abs err ≤ {_num(e['atol'], '.2g')}")
            got.append(f"max abs err {_num(m['max_abs_err'], '.2e')}")
        if "rtol" in e:
            parts.append(f"rel err ≤ {_num(e['rtol'], '.2g')}")
            rel = m.get("max_rel_err")
            got.append(f"rel {_num(rel, '.2e')}" if rel is not None else "rel n/a (zero reference)")
        return f"{', '.join(got)} ({_num(m.get('n_instances', '?'))} instances)", ", ".join(parts)
    thresholds = []
    for key, bound in e.items():
        for suffix, (symbol, above) in _SYMBOLS.items():
            name = key[: -len(suffix)]
            if key.endswith(suffix) and name and name in m:
                thresholds.append((_threshold_margin(m[name], bound, above), name, symbol, bound))
    if thresholds:
        margin, name, symbol, bound = min(thresholds, key=lambda t: t[0])
        rest = f" (closest of {len(thresholds)} thresholds)" if len(thresholds) > 1 else ""
        return f"{name} {_num(m[name])}{rest}" + _searched(m), f"{name} {symbol} {_num(bound)}"
    return measured_text(m), predicted_text(e)


def decisive(claim: Mapping) -> tuple[str, str]:
    """The figure that decides a record, and the prediction it is compared with: ``(measured, predicted)``.

    A rate's fitted slope with its interval and grid against the predicted slope; a bound's worst ratio; a
    frequency with its interval; an identity's largest error; of several thresholds the one closest to being
    violated; for an erratum both halves (the printed prediction should fail). A number that could not be computed
    reads ``n/a``, an interval that could not be computed says so.

    Examples
    --------
    >>> decisive({"kind": "rate", "expected": {"slope": -1.0, "tol": 0.1},
    ...           "measured": {"slope": -0.99, "ci": [-1.0, -0.98], "grid": [8, 16, 32, 64, 512]}})
    ('slope -0.99 [-1.00, -0.98], 8..512', 'slope -1.00 ± 0.10')
    >>> decisive({"kind": "identity", "expected": {"a_max": 1e-12, "b_min": 0.01}, "measured": {"a": 3e-16, "b": 0.02}})
    ('b 0.02 (closest of 2 thresholds)', 'b ≥ 0.01')
    """
    e, m = claim.get("expected") or {}, claim.get("measured") or {}
    if isinstance(e.get("printed"), Mapping):
        halves = []
        for half, label in (("printed", "printed"), ("corrected", "corrected")):
            if not isinstance(e.get(half), Mapping):
                continue
            mh = m.get(half) if isinstance(m.get(half), Mapping) else m
            got, want = _decisive_of(e[half], mh)
            halves.append((f"{label}: {got}", f"{label}: {want}" + (" (should fail)" if half == "printed" else "")))
        return "; ".join(h[0] for h in halves), "; ".join(h[1] for h in halves)
    return _decisive_of(e, m)


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
    env_head = (report.get("environment") or {}).get("git_commit")
    lines += [f"*{line}*" for line in freshness(report, env_head)]
    if lines[-1] != "":
        lines.append("")
    env = report.get("environment") or {}
    stamp = [f"generated {report.get('generated', '?')}", f"theory {report.get('version', '?')}"]
    stamp += [f"{k} {env[k]}" for k in ("python", "numpy", "scipy", "numba") if env.get(k)]
    if env.get("git_commit"):
        stamp.append(f"commit {str(env['git_commit'])[:12]}")
    lines += [", ".join(stamp), ""]
    lines += ["| Claim | Statement | Predicted | Measured | Verdict | Figure |",
              "|---|---|---|---|---|---|"]
    chains = proof_chains(report)
    for c in report["claims"]:
        claim = f"`{c['id']}`"
        if c.get("aliases"):
            claim += " (also " + ", ".join(f"`{a}`" for a in c["aliases"]) + ")"
        measured, predicted = decisive(c)
        if c.get("kind") == "erratum" and predicted and not predicted.startswith("printed"):
            predicted = f"printed: {predicted} (should fail)"
        if c.get("kind") == "erratum" and c.get("wrong_in"):
            claim += f" (error in the {c['wrong_in']})"
        verdict = {"pass": "pass", "fail": "**FAIL**", "skip": "skip"}.get(c["status"], c["status"])
        if c.get("proxy"):
            verdict += " (proxy)"
        chain = chains.get(c["id"])
        if chain:
            verdict += f"; proof: {chain['passed']} of {len(chain['steps'])} steps pass"
        if c["status"] == "skip":
            measured = "not measured (skipped)"
        cells = [claim, c.get("title", ""), predicted, measured, verdict, _link(c.get("figure"), link_base)]
        lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    lines += _worst_case_section(report)
    lines += _proof_chain_section(report)
    if report["claims"]:
        lines += ["", "## Details", "", "What each check compared, and the command that reruns its measurement "
                  "(`--set NAME=VALUE` changes a parameter; `theory run CLAIM-ID --help` lists the options).", ""]
        for c in report["claims"]:
            text = f"- `{c['id']}` ({c['status']}, {c.get('kind', '?')}): {' '.join(str(c.get('message') or '').split())}"
            if c.get("test"):
                text += f" [`{c['test']}`]"
            lines.append(text)
            rerun = rerun_command(c)
            if rerun:
                lines.append(f"  - rerun: `{rerun}`")
            if c.get("proxy"):
                lines.append(f"  - proxy (does not verify the statement): {' '.join(str(c['proxy']).split())}")
            lines += [f"  - note: {' '.join(str(n).split())}" for n in c.get("notes") or []]
    return "\n".join(lines) + "\n"


def searches_of(measured: Mapping) -> list[tuple[str, Mapping]]:
    """The worst-case searches a record's measurement holds, with the part of the statement each belongs to:
    ``search`` (the record's), ``<part>_search`` and ``<part>: {"search": ...}`` (a statement with several
    inequalities)."""
    found = []
    for key, value in measured.items():
        if not isinstance(value, Mapping):
            continue
        if key == "search" and "evaluations" in value:
            found.append(("", value))
        elif key.endswith("_search") and "evaluations" in value:
            found.append((key[: -len("_search")], value))
        elif isinstance(value.get("search"), Mapping) and "evaluations" in value["search"]:
            found.append((key, value["search"]))
    return found


def _number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def worst_cases(report: Mapping) -> list[dict]:
    """One row per worst-case search of a bound record (or per bound record without one).

    Each row: ``id``, ``part`` (the inequality of the statement the search belongs to, ``""`` for the record's
    own), ``status``, ``random`` (largest LHS/RHS over the random or gridded instances, None for a bound
    recorded by thresholds or for a part), ``searched`` (the search's largest ratio, None without a search),
    ``evaluations``, ``budget``, ``instance``, ``constant`` (name, stated, smallest found, or None) and
    ``loose`` (the largest ratio is below :data:`theory.claims.LOOSE_RATIO` of the allowed one) and ``redrawn``
    (median ratio and count of the redraws at the worst instance of a Monte-Carlo search, or None), ``proxy``
    (the record is a proxy: its instances lie outside the statement's hypotheses, so it is not searched).

    Examples
    --------
    >>> rows = worst_cases({"claims": [{"id": "k/thm-1", "kind": "bound", "status": "pass",
    ...     "expected": {"ratio_max": 1.0, "search": {"ratio_max": 1.0}},
    ...     "measured": {"ratio": 0.01, "search": {"ratio": 0.97, "evaluations": 200, "budget": 200},
    ...                  "output_search": {"ratio": 0.02, "evaluations": 100, "budget": 100}}}]})
    >>> [(r["part"], r["searched"], r["loose"]) for r in rows]
    [('', 0.97, False), ('output', 0.02, True)]
    """
    from theory.claims import LOOSE_RATIO

    rows = []
    for c in report["claims"]:
        if c.get("kind") != "bound":
            continue
        m, e = c.get("measured"), c.get("expected")
        m = m if isinstance(m, Mapping) else {}
        e = e if isinstance(e, Mapping) else {}
        random = _number_or_none(m.get("ratio"))
        allowed = _number_or_none((e.get("search") if isinstance(e.get("search"), Mapping) else {}).get(
            "ratio_max", e.get("ratio_max")))
        allowed = allowed if allowed is not None and math.isfinite(allowed) and allowed > 0 else 1.0
        searches = searches_of(m) or [("", None)]
        for part, search in searches:
            searched = _number_or_none(search.get("ratio")) if search else None
            own = random if part == "" else None
            values = [v for v in (own, searched) if v is not None and math.isfinite(v)]
            rows.append({
                "id": c["id"], "part": part, "status": c.get("status"), "random": own, "searched": searched,
                "evaluations": search.get("evaluations") if search else None,
                "budget": search.get("budget") if search else None,
                "instance": search.get("instance") if search else None,
                "constant": search.get("constant") if search and isinstance(search.get("constant"), Mapping) else None,
                "loose": bool(values) and searched is not None and max(values) < LOOSE_RATIO * allowed,
                "redrawn": _redrawn(search),
                "proxy": bool(c.get("proxy")),
            })
    return rows


def _redrawn(search) -> tuple | None:
    """(median ratio, count) of the redraws at a search's worst instance, or None."""
    r = search.get("redraws") if isinstance(search, Mapping) else None
    if not isinstance(r, Mapping) or not isinstance(r.get("ratios"), list) or not r["ratios"]:
        return None
    median = _number_or_none(r.get("median"))
    return None if median is None else (median, len(r["ratios"]))


def proof_chains(report: Mapping) -> dict:
    """The steps of each theorem's proof recorded in the report (records naming it in ``step_of``).

    Returns
    -------
    dict
        Theorem ID -> ``{"steps": [(step ID, status), ...], "passed": number of passing steps,
        "status": the theorem's own status or None if the report has no record of it, "proxy": its proxy
        reason or None}``, in the order the steps appear.

    Examples
    --------
    >>> chains = proof_chains({"claims": [{"id": "k/thm-6", "status": "pass", "proxy": "m << 4.8e6 n"},
    ...     {"id": "k/lemma-21", "status": "pass", "step_of": ["k/thm-6"]},
    ...     {"id": "k/prop-5", "status": "fail", "step_of": ["k/thm-6"]}]})
    >>> chains["k/thm-6"]["passed"], len(chains["k/thm-6"]["steps"])
    (1, 2)
    """
    by_id = {c.get("id"): c for c in report["claims"]}
    chains: dict = {}
    for c in report["claims"]:
        for target in c.get("step_of") or []:
            entry = chains.setdefault(target, {"steps": [], "passed": 0, "status": None, "proxy": None})
            entry["steps"].append((c["id"], c.get("status")))
            entry["passed"] += c.get("status") == "pass"
    for target, entry in chains.items():
        theorem = by_id.get(target) or {}
        entry["status"], entry["proxy"] = theorem.get("status"), theorem.get("proxy")
    return chains


def _proof_chain_section(report: Mapping) -> list[str]:
    chains = proof_chains(report)
    if not chains:
        return []
    lines = ["", "## Proof chains", "",
             "Theorems whose hypotheses this machine cannot reach are checked through their proofs: each lemma "
             "and intermediate estimate the proof chains is a claim of its own, checked at reachable sizes "
             "(`step_of` in the record). The theorem's own record keeps its proxy flag where its statement is "
             "not reached.", "",
             "| Theorem | Its own record | Steps passing | Steps |", "|---|---|---|---|"]
    for target, entry in chains.items():
        own = "no record" if entry["status"] is None else entry["status"] + (" (proxy)" if entry["proxy"] else "")
        steps = ", ".join(f"`{sid}` ({status})" for sid, status in entry["steps"])
        lines.append("| " + " | ".join([f"`{target}`", _cell(own), f"{entry['passed']} of {len(entry['steps'])}",
                                        steps.replace("|", "\\|")]) + " |")
    return lines


def worst_case_table(report: Mapping) -> list[str]:
    """The Markdown table of :func:`worst_cases`, one row per search (``claims.md`` and the documentation's
    bounds page both show it): claim and part, verdict, the random instances' worst ratio, the searched worst
    (``loose`` below :data:`theory.claims.LOOSE_RATIO`), the evaluations, the smallest constant beside the stated
    one, and the instance.

    Examples
    --------
    >>> worst_case_table({"claims": [{"id": "k/thm-1", "kind": "bound", "status": "pass",
    ...     "measured": {"ratio": 0.5, "search": {"ratio": 0.97, "evaluations": 20, "budget": 20}}}]})[2]
    '| `k/thm-1` | pass | 0.5 | 0.97 | 20 of 20 |  |  |'
    """
    lines = ["| Claim | Verdict | Random instances | Searched worst | Evaluations | Smallest constant (stated) | "
             "Instance |", "|---|---|---|---|---|---|---|"]
    for r in worst_cases(report):
        const = r["constant"]
        const_text = (f"{const.get('name')} = {_num(const.get('smallest'), '.4g')} ({_num(const.get('stated'), '.4g')})"
                      if const else "")
        if r["searched"] is None:
            found = "not searched (a proxy: outside the hypotheses)" if r["proxy"] else "not searched"
            evals = ""
        else:
            found = _num(r["searched"], ".4g") + (" (loose)" if r["loose"] else "")
            if r["redrawn"] is not None:
                found += f"; median {_num(r['redrawn'][0], '.4g')} over {r['redrawn'][1]} redraws"
            evals = f"{_num(r['evaluations'])} of {_num(r['budget'])}"
        inst = json.dumps(r["instance"], allow_nan=True) if r["instance"] is not None else ""
        claim = f"`{r['id']}`" + (f" ({r['part']})" if r["part"] else "")
        random = _num(r["random"], ".4g") if r["random"] is not None else ("thresholds" if not r["part"] else "")
        cells = [claim, r["status"], random, found, evals, const_text,
                 f"`{inst if len(inst) <= 120 else inst[:117] + '...'}`" if inst else ""]
        lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    return lines


def _worst_case_section(report: Mapping) -> list[str]:
    rows = worst_cases(report)
    if not rows:
        return []
    searched = len({r["id"] for r in rows if r["searched"] is not None})
    return ["", "## Worst cases of the bounds", "",
            f"{searched} of {len({r['id'] for r in rows})} bounds searched their hypothesis set for the instance "
            "maximising LHS/RHS (a fixed budget and seed; the largest ratio found is a lower bound on the supremum, "
            "not the supremum). The smallest constant is the stated one times the largest ratio found.", "",
            *worst_case_table(report)]


def rerun_command(claim: Mapping) -> str | None:
    """The command that reruns a record's measurement at other sizes, from its experiment's parameters.

    Examples
    --------
    >>> rerun_command({"id": "sinkformers/prop-5.1", "experiment": "sinkformers.prop51", "preset": "check",
    ...                "parameters": ["n", "d", "draws", "seed"]})
    'theory run sinkformers/prop-5.1 --set n=... (parameters: n, d, draws, seed)'
    """
    if not claim.get("experiment"):
        return None
    params = [p for p in claim.get("parameters") or [] if isinstance(p, str)]
    preset = claim.get("preset") or "check"
    text = f"theory run {claim['id']}" + (f" --preset {preset}" if preset != "check" else "")
    if params:
        counts = [p for p in params if p not in ("seed", "backend", "device", "dtype", "draws_on")]
        text += f" --set {(counts or params)[0]}=... (parameters: {', '.join(params)})"
    return text


# --------------------------------------------------------------------------- terminal


_VERDICT = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}


def claim_line(claim: Mapping, width: int = 100) -> str:
    """One claim in one line of at most ``width`` characters: verdict, ID, the decisive measured figure and the
    prediction it is compared with (:func:`decisive`).

    Examples
    --------
    >>> claim_line({"id": "resnet-node/prop-3", "status": "pass", "kind": "rate",
    ...             "expected": {"slope": -1.0, "tol": 0.1},
    ...             "measured": {"slope": -0.99, "ci": [-1.0, -0.98], "grid": [8, 512]}})
    'PASS  resnet-node/prop-3                   slope -0.99 [-1.00, -0.98], 8..512 vs -1.00 ± 0.10'
    """
    verdict = _VERDICT.get(claim.get("status"), str(claim.get("status")).upper())
    if claim.get("proxy") and claim.get("status") == "pass":
        verdict = "PROXY"
    measured, predicted = decisive(claim)
    measured = re.sub(r" \(closest of \d+ thresholds\)", "", measured)
    first = measured.split(" ", 1)[0]
    if predicted.startswith(first + " ") and not measured.startswith(("printed", "corrected")):
        predicted = predicted[len(first) + 1:]  # "slope -0.99 [...] vs -1.00 ± 0.10": the name once
    if claim.get("kind") == "erratum" and predicted and not predicted.startswith("printed"):
        predicted = f"printed {predicted}"
    if claim.get("status") == "skip":
        measured, predicted = " ".join(str(claim.get("message") or "").split()), ""
    text = f"{verdict:<6}{claim['id']:<36} {measured}" + (f" vs {predicted}" if predicted else "")
    return text if len(text) <= width else text[: width - 1] + "…"


def render_table(report: Mapping, *, ids: Iterable[str] | None = None, width: int = 100) -> str:
    """The claims as terminal lines of at most ``width`` columns, failures first.

    Parameters
    ----------
    report : dict
        The report document.
    ids : iterable of str, optional
        Only these claims (default: all).
    width : int
        Line width.
    """
    wanted = None if ids is None else set(ids)
    claims = [c for c in report["claims"] if wanted is None or c["id"] in wanted]
    order = {"fail": 0, "skip": 1, "pass": 2}
    claims.sort(key=lambda c: (order.get(c.get("status"), 0), c["id"]))
    return "\n".join(claim_line(c, width) for c in claims)


# --------------------------------------------------------------------------- cumulative report


def merge_with_previous(
    records: Iterable[Mapping], previous: Mapping | None, still_exists
) -> tuple[list[dict], list[str]]:
    """The records of this run plus those of ``previous`` that this run did not measure.

    Parameters
    ----------
    records : iterable of dict
        This run's records (JSON-safe dicts, as in a report's ``claims``).
    previous : dict or None
        The report on disk before this run.
    still_exists : callable
        ``still_exists(record) -> bool``: whether the check of an older record still exists; a
        record whose check was removed or renamed is dropped.

    Returns
    -------
    (claims, dropped) : list of dict, list of str
        All records (this run's win), and the IDs of the older records dropped.
    """
    claims = {c["id"]: dict(c) for c in records}
    dropped = []
    if previous:
        env = previous.get("environment") or {}
        for old in previous.get("claims") or []:
            if not isinstance(old, Mapping) or "id" not in old or old["id"] in claims:
                continue
            if not still_exists(old):
                dropped.append(old["id"])
                continue
            old = dict(old)
            old.setdefault("measured_at", previous.get("generated"))
            old.setdefault("commit", env.get("git_commit"))
            claims[old["id"]] = old
    return [claims[k] for k in sorted(claims)], dropped


def freshness(report: Mapping, head: str | None = None) -> list[str]:
    """Lines saying whether the report is partial or stale (empty when it is neither).

    ``partial``: the last run measured fewer claims than the report holds. ``stale``: some
    records were measured on another commit than ``head`` (the checkout's commit now).

    Examples
    --------
    >>> report = {"last_run": {"claims": ["topk/prop-7.2"]},
    ...           "claims": [{"id": "topk/prop-7.2", "commit": "abc"}, {"id": "topk/prop-7.4", "commit": "old"}]}
    >>> freshness(report, head="abc")
    ['partial: 1 of 2 claims measured by the last run', 'stale: 1 claim measured on an older commit than abc']
    """
    lines = []
    claims = report.get("claims") or []
    last = report.get("last_run") or {}
    ran = last.get("claims")
    if isinstance(ran, list) and len(ran) < len(claims):
        lines.append(f"partial: {len(ran)} of {len(claims)} claims measured by the last run")
    if head:
        stale = sum(1 for c in claims if c.get("commit") and c.get("commit") != head)
        if stale:
            lines.append(f"stale: {stale} claim{'s' if stale != 1 else ''} measured on an older commit than "
                         f"{head[:12]}")
    return lines


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

    Raises
    ------
    OSError
        When a file cannot be written in full; both files are then as they were before the call.

    Notes
    -----
    Each file is replaced atomically: its whole content goes to a temporary file in ``directory``,
    which is flushed to disk and renamed over the old file, so that a reader sees the old report
    or the new one, never a part. Concurrent writers are serialised by the caller
    (``theory.pytest_plugin`` holds a lock file across read, merge and write).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    base = os.path.relpath(Path(root or os.getcwd()).resolve(), directory.resolve())
    link_base = "" if base == "." else Path(base).as_posix() + "/"
    json_path, md_path = directory / "claims.json", directory / "claims.md"
    # both texts are complete before either file changes; each is written to a temporary file,
    # fsynced and renamed over the old one (theory._files), so that a failure at any point leaves
    # the previous pair of files as it was
    json_text = json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    md_text = render_markdown(report, link_base=link_base)
    write_atomic_many([(json_path, json_text), (md_path, md_text)])
    return json_path, md_path


_FIELD_TYPES = {
    "title": str, "kind": str, "message": str, "figure": str, "test": str, "proxy": str, "wrong_in": str,
    "commit": str, "measured_at": str, "paper": str, "aliases": list, "notes": list, "expected": dict,
    "measured": dict, "seconds": (int, float), "step_of": list,
}


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
    except RecursionError:
        raise ValueError(f"{path} is not a claims report: its JSON is nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc}") from exc
    if not isinstance(report, dict) or not isinstance(report.get("claims"), list):
        raise ValueError(f"{path} is not a claims report (no 'claims' list)")
    for key, kind in (("environment", dict), ("last_run", dict), ("generated", str), ("version", str)):
        if report.get(key) is not None and not isinstance(report[key], kind):
            raise ValueError(f"{path} is not a claims report: '{key}' is {type(report[key]).__name__}, "
                             f"not {kind.__name__}")
    last = report.get("last_run") or {}
    if "claims" in last and not (isinstance(last["claims"], list) and all(isinstance(c, str) for c in last["claims"])):
        raise ValueError(f"{path} is not a claims report: 'last_run.claims' is not a list of claim IDs")
    for i, claim in enumerate(report["claims"]):
        if isinstance(claim, dict):
            for key, kinds in _FIELD_TYPES.items():
                if claim.get(key) is not None and not isinstance(claim[key], kinds):
                    raise ValueError(f"{path} is not a claims report: claims[{i}].{key} is "
                                     f"{type(claim[key]).__name__}")
            for key in ("aliases", "notes", "step_of"):
                if claim.get(key) is not None and not all(isinstance(a, str) for a in claim[key]):
                    raise ValueError(f"{path} is not a claims report: claims[{i}].{key} must hold strings")
        if not isinstance(claim, dict):
            raise ValueError(f"{path} is not a claims report: claims[{i}] is {type(claim).__name__}, not a record")
        missing = [key for key in ("id", "status") if not isinstance(claim.get(key), str)]
        if missing:
            raise ValueError(f"{path} is not a claims report: claims[{i}] has no {' or '.join(missing)}")
        if claim["status"] not in STATUSES:
            raise ValueError(f"{path} is not a claims report: claims[{i}] ({claim['id']}) has status "
                             f"{claim['status']!r}, not one of {', '.join(STATUSES)}")
    return report
