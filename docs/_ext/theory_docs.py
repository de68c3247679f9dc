"""Pages generated at build time from what the project measured (local Sphinx extension).

At ``builder-inited`` this writes, under ``docs/_generated/``:

* ``papers/<key>.md``: one page per paper key from ``reports/claims.json`` (claim, statement in
  one line, predicted, measured, verdict, the plot), with the report's stamp (commit, date,
  environment) so that a reader knows where the figures come from;
* in each paper page, the section "Figures and tables of the document": every figure and table of the
  paper's inventory with its declaration (:func:`theory.experiments.figures`: criterion, claims, dataset,
  substitute) and, where ``theory reproduce KEY --preset paper --out results`` ran, the committed figure and
  its table of printed against measured numbers from ``results/<key>/``;
* ``gallery.md``: every figure of ``figures/out/`` grouped by paper key, and the curated
  ``figures/gallery/``;
* ``oracle_kernels.md`` (included by the oracle how-to) and ``oracle_show.md``: the oracle's kernels, from
  their declarations in :mod:`theory.oracle` (the table, and each kernel as ``theory oracle show`` prints it);
* ``bounds.md``: every bound of the ten keys with its worst-case search: the worst ratio on the
  random instances, the worst found by the search, its budget and instance, and the smallest constant
  found beside the printed one (from ``reports/claims.json``);
* ``benchmarks.md``: the tables and plots of ``benchmarks/results/`` (written by the benchmark
  scripts, each with the machine it ran on).

Nothing here types a measured figure: every number comes from those files. A missing report is a
build error (run ``theory check`` first; ``make docs`` does).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from sphinx.errors import ExtensionError

from theory import papers as _papers
from theory import report as _report

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
OUT = DOCS / "_generated"

#: Paper key -> (title, source), from the package's table of paper keys (theory.papers). The documents' own
#: numbering is the claims' numbering.
PAPERS = {p.key: (p.title, p.source) for p in _papers.PAPERS}

VERDICT = {"pass": "pass", "fail": "**FAIL**", "skip": "skip"}


def _rel(path: Path, start: Path) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def _code(text) -> str:
    """Text as inline code in a Markdown table cell."""
    return "``" + " ".join(str(text).split()).replace("|", "\\|") + "``"


def _cell(text) -> str:
    """Text as one Markdown line: characters with a Markdown meaning escaped (claim titles are plain text)."""
    text = " ".join(str(text).split())
    for char in "\\|$[]*<>`_":
        text = text.replace(char, "\\" + char)
    return text


def _write(path: Path, text: str) -> None:
    """Write only when the text changes, so that Sphinx rebuilds only what changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def load_claims(path: Path) -> dict:
    if not path.exists():
        raise ExtensionError(f"{_rel(path, ROOT)} is missing: run `theory check` (or `make check`) before "
                             "building the documentation")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ExtensionError(f"{_rel(path, ROOT)} is not valid JSON: {exc}") from exc
    if not isinstance(report, dict) or not isinstance(report.get("claims"), list):
        raise ExtensionError(f"{_rel(path, ROOT)} has no 'claims' list")
    return report


def _stamp(report: dict) -> str:
    env = report.get("environment") or {}
    parts = [f"generated {report.get('generated', '?')}", f"theory {report.get('version', '?')}"]
    parts += [f"{k} {env[k]}" for k in ("python", "numpy", "scipy", "numba") if env.get(k)]
    if env.get("git_commit"):
        parts.append(f"commit {str(env['git_commit'])[:12]}")
    return ", ".join(parts)


def paper_page(key: str, claims: list[dict], report: dict, folder: Path) -> str:
    from theory.report import count_statuses, decisive, freshness, git_commit, rerun_command

    title, source = PAPERS.get(key, (key, ""))
    counts = count_statuses({"claims": claims})
    proxies = sum(1 for c in claims if c.get("proxy"))
    errata = sum(1 for c in claims if c.get("kind") == "erratum")
    lines = [f"# `{key}`: {title}", "", f"*{source}.*" if source else "", ""]
    if not claims:
        lines += ["No claim of this paper key has been measured yet.", ""]
        return "\n".join(lines)
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    notices = freshness(report, git_commit())
    if notices:  # the report's own partial/stale notice, as `theory report` prints it
        lines += ["```{warning}", *(f"This page reads a {n}." for n in notices),
                  "Run `make check` (or `theory check`) to measure every claim on this commit.", "```", ""]
    lines += figures_section(key, folder, {c["id"] for c in claims})
    lines += ["## Claim records", "",
              f"**{len(claims)} claims: {summary}; {proxies} proxies; {errata} erratum records.**", "",
              f"From `reports/claims.json` ({_stamp(report)}). Rerun one claim with "
              "`theory check --claim ID`; a proxy measures the statement outside its hypotheses and "
              "does not verify it; an erratum record passes when the printed form fails and the "
              "corrected one holds (see {doc}`/errata`).", "",
              "| Claim | Statement | Predicted | Measured | Verdict |", "|---|---|---|---|---|"]
    for c in claims:
        claim = f"[`{c['id']}`](#{_anchor(c['id'])})"
        measured, predicted = decisive(c)
        if c.get("kind") == "erratum" and predicted and not predicted.startswith("printed"):
            predicted = f"printed: {predicted} (should fail)"
        verdict = VERDICT.get(c.get("status"), c.get("status"))
        if c.get("proxy"):
            verdict += " (proxy)"
        texts = [_cell(x) for x in (c.get("title", ""), predicted, measured)]
        lines.append("| " + " | ".join([claim, *texts, verdict]) + " |")
    lines += ["", "## Claims", ""]
    for c in claims:
        lines += [f"({_anchor(c['id'])})=", f"### `{c['id']}`", ""]
        if c.get("aliases"):
            lines += ["Also " + ", ".join(f"`{a}`" for a in c["aliases"]) + ".", ""]
        lines += [_cell(c.get("title", "")), ""]
        verdict = VERDICT.get(c.get("status"), c.get("status"))
        measured, predicted = decisive(c)
        lines += [f"- verdict: {verdict} ({c.get('kind', '?')})",
                  f"- predicted: {_cell(predicted)}; measured: {_cell(measured)}",
                  f"- what was compared: {_cell(c.get('message') or '')}"]
        rerun = rerun_command(c)
        if rerun:
            lines.append(f"- rerun: {_code(rerun)}")
        if c.get("proxy"):
            lines.append(f"- proxy, does not verify the statement: {_cell(c['proxy'])}")
        if c.get("wrong_in"):
            lines.append(f"- the error lies in the {c['wrong_in']}")
        lines += [f"- note: {_cell(n)}" for n in c.get("notes") or []]
        if c.get("test"):
            lines.append(f"- check: `{c['test']}`")
        lines.append("")
        figure = c.get("figure")
        if figure and (ROOT / figure).exists():
            lines += [f"```{{image}} {_rel(ROOT / figure, folder)}", f":alt: {c['id']}", ":width: 640px", "```", ""]
    return "\n".join(lines)


def _format(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value[:6]) + (", ..." if len(value) > 6 else "") + "]"
    return str(value)


def figures_section(key: str, folder: Path, known: set = frozenset()) -> list[str]:
    """The document's figures and tables: each declaration, and its paper-preset record from results/<key>/."""
    from theory.experiments import figures

    inventory = _papers.paper(key).figures
    if not inventory:
        return []
    declared = figures(key)
    results = ROOT / "results" / key
    lines = ["## Figures and tables of the document", "",
             f"The document has {len(inventory)} figures and tables; {len({f.base for f in declared})} are declared "
             "here, each with the criterion its claims apply (fixed before the data). The figures below come from "
             f"`theory reproduce {key} --preset paper --out results` on the machine each record names; rerun one with "
             f"`theory reproduce {key} LABEL` (the check preset) or `--preset paper`.", ""]
    for label in inventory:
        ours = [f for f in declared if f.base == label]
        if not ours:
            lines += [f"### {label}", "", "Not declared yet.", ""]
        for f in ours:
            lines += [f"### {f.number}{' — ' + f.label.partition('/')[2] if '/' in f.label else ''}: {_cell(f.title)}",
                      ""]
            if f.illustration:
                lines += [f"An illustration without numbers: {_cell(f.illustration)}.", ""]
                continue
            lines.append(f"- criterion: {_cell(f.criterion)}")
            lines.append("- claims: " + ", ".join(f"[`{c}`](#{_anchor(c)})" if c in known else f"`{c}` (not in the report)"
                                                  for c in f.claims))
            if f.substitute:
                lines.append(f"- a proxy, on a substitute: {_cell(f.substitute)}")
            if f.data:
                lines.append(f"- dataset: `{f.data}` (see {{doc}}`/howto/datasets`)")
            if f.preset_note:
                lines.append(f"- paper preset: {_cell(f.preset_note)}")
            stem = f.label.replace("/", "__")
            record = results / f"{stem}.json"
            rec = None
            if record.exists():
                try:
                    rec = json.loads(record.read_text(encoding="utf-8"))
                except json.JSONDecodeError as exc:
                    raise ExtensionError(f"{_rel(record, ROOT)} is not valid JSON: {exc}") from exc
            if rec is None:
                lines += [f"- not yet run at the paper preset for the gallery: {_code(f'theory reproduce {key} {f.label} --preset paper')}", ""]
                continue
            lines.append(f"- at preset `{rec['preset']}`: **{rec['status']}**, {rec['seconds']:.1f} s on "
                         f"{_cell(rec['machine'])} ({rec['date']}, theory at {str(rec.get('commit') or '?')[:12]})")
            if rec["status"] == "skip":
                lines.append(f"- skipped: {_cell(rec['message'])}")
            lines.append("")
            if rec.get("rows"):
                lines += ["| the document prints | where | printed | measured | note |", "|---|---|---|---|---|"]
                for r in rec["rows"]:
                    lines.append(f"| {_cell(r['name'])} | {_cell(r['where'])} | {_format(r['printed'])} | "
                                 f"{_format(r['measured'])} | {_cell(r['note'])} |")
                lines.append("")
            png = results / f"{stem}.png"
            if png.exists():
                lines += [f"```{{image}} {_rel(png, folder)}", f":alt: {f.id}", ":width: 640px", "```", ""]
    return lines


def _anchor(claim_id: str) -> str:
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


def gallery_page(folder: Path) -> str:
    lines = ["# Figure gallery", "",
             "Every figure the checks drew in the last run (`figures/out/`), by paper key; each title "
             "carries its claim ID, whose record is on the paper's page.", ""]
    curated = sorted((ROOT / "figures" / "gallery").glob("*.png"))
    if curated:
        lines += ["## Selected figures", "", "Refreshed by `theory plots --gallery`.", ""]
        for png in curated:
            lines += [f"```{{image}} {_rel(png, folder)}", f":alt: {png.stem}", ":width: 480px", "```", ""]
    figures = sorted((ROOT / "figures" / "out").glob("*.png"))
    by_key: dict[str, list[Path]] = {}
    for png in figures:
        by_key.setdefault(png.stem.split("__", 1)[0], []).append(png)
    for key in sorted(by_key):
        lines += [f"## `{key}`", ""]
        for png in by_key[key]:
            lines += [f"```{{figure}} {_rel(png, folder)}", f":alt: {png.stem}", ":width: 480px", "",
                      f"`{png.name}`", "```", ""]
    if not figures:
        lines += ["No figure yet: run `theory check`.", ""]
    return "\n".join(lines)


def benchmarks_page(folder: Path) -> str:
    results = ROOT / "benchmarks" / "results"
    lines = ["# Benchmarks", "",
             "Each kernel is timed against an anchor in the same run (a NumPy loop doing the same "
             "arithmetic, a peer library, or a hardware floor); ratios are anchor time over `theory` "
             "time unless a table says otherwise. The tables below are the files "
             "`benchmarks/results/*.md` written by the benchmark scripts (`make bench`), each with "
             "the machine it ran on.", ""]
    tables = sorted(results.glob("*.md")) if results.exists() else []
    for md in tables:
        text = md.read_text(encoding="utf-8").strip()  # each file starts with its own "## title"
        lines += [text, ""]
        for png in sorted(results.glob(md.stem + "*.png")):
            lines += [f"```{{image}} {_rel(png, folder)}", f":alt: {png.stem}", ":width: 640px", "```", ""]
    if not tables:
        lines += ["No results yet: run `make bench`.", ""]
    return "\n".join(lines)


#: Subpackages documented in the API reference, in reading order: the kernels of each paper key,
#: then the oracle, the experiments and the claim machinery. A name not importable is skipped.
API = (
    ("Kernels", ("resnet", "linear", "fbm", "scaling", "implicit", "pl", "isotonic", "topk", "momentum",
                 "sinkhorn", "icl", "generalization", "two_timescale", "signature")),
    ("Checking other implementations", ("oracle",)),
    ("Experiments, sweeps, figures and backends", ("experiments", "sweep", "reproduce", "datasets", "backends")),
    ("The claim machinery", ("claims", "rates", "worst_case", "report", "plots")),
)


def _describe(value) -> str:
    """A constant in one line: its type and its value, or its keys for a mapping."""
    if isinstance(value, dict):
        keys = ", ".join(f"``{k!r}``" for k in list(value)[:12])
        return f"A ``dict`` with keys {keys}{', ...' if len(value) > 12 else ''}."
    text = repr(value)
    if len(text) > 200:
        text = text[:197] + "..."
    return f"``{text}`` (``{type(value).__name__}``)."


def api_pages(folder: Path) -> None:
    import importlib

    index = ["API reference", "=============", "",
             "Every public name of every subpackage (its ``__all__``), from the docstrings.", "",
             ".. automodule:: theory", "   :no-members:", "",
             ".. autoexception:: theory.NonFiniteError", "", ".. autodata:: theory.__version__",
             "   :no-value:", ""]
    for section, names in API:
        entries = []
        for name in names:
            try:
                module = importlib.import_module(f"theory.{name}")
            except ImportError:
                continue
            public = sorted(getattr(module, "__all__", ()))
            # functions and classes get a page each; constants (tuples, dicts of the module) are listed
            # by name, since their docstring would be that of their type
            objects = [item for item in public if callable(getattr(module, item, None))]
            constants = [item for item in public if item not in objects]
            head = f"``theory.{name}``"
            lines = [head, "=" * len(head), "", f".. automodule:: theory.{name}", "   :no-members:", ""]
            if objects:
                lines += [".. autosummary::", "   :toctree: generated", ""]
                lines += [f"   {item}" for item in objects]
                lines.append("")
            for item in constants:
                lines += [f".. py:data:: {item}", f"   :module: theory.{name}", "", f"   {_describe(getattr(module, item))}", ""]
            _write(folder / f"{name}.rst", "\n".join(lines))
            entries.append(name)
        if entries:
            index += [section, "-" * len(section), "", ".. toctree::", "   :maxdepth: 1", ""]
            index += [f"   {name}" for name in entries] + [""]
    _write(folder / "index.rst", "\n".join(index))


def oracle_table() -> str:
    """The oracle's kernels as ``theory oracle list`` knows them: name, cases, call, tolerance rule."""
    from theory import oracle

    lines = ["| kernel | cases | how your function is called | conventions | parameters | tolerance rule |",
             "|---|---|---|---|---|---|"]
    for name in oracle.kernels():
        k = oracle.kernel(name)
        conventions = "; ".join(c.topic + (f" (`{c.parameter}`)" if c.parameter else "") for c in k.conventions)
        params = ", ".join(_code(p.name) for p in k.parameters)
        lines.append("| " + " | ".join((_code(name), str(len(k.cases())), _code(k.signature), _cell(conventions),
                                        params, _cell(k.rule))) + " |")
    lines += ["", "Each kernel's arguments with their shapes and dtypes, its conventions with the mapping onto the "
              "kernel's, and its case names: {doc}`/_generated/oracle_show` (what `theory oracle show KERNEL` prints)."]
    return "\n".join(lines) + "\n"


def oracle_show_page() -> str:
    """Every kernel as ``theory oracle show`` prints it (one declaration: the kernel's own)."""
    from theory import oracle

    lines = ["# The oracle's kernels, one by one", "",
             "What `theory oracle show KERNEL` prints: the call with every argument's shape and dtype, the "
             "conventions other implementations vary on (with the mapping onto the kernel's), the tolerance rule and "
             "why, the parameters a user may set with `--param NAME=V1,V2`, and the case names (`--case` takes names "
             "or shell globs).", ""]
    for name in oracle.kernels():
        lines += [f"## `{name}`", "", "```text", oracle.show(name), "```", ""]
    return "\n".join(lines) + "\n"


def bounds_page(report: dict) -> str:
    """Stated constants against the smallest found, for every bound of the report (the report's own table)."""
    rows = _report.worst_cases(report)
    searched = {r["id"] for r in rows if r["searched"] is not None}
    lines = ["# Bounds: stated against smallest-found constants", "", _stamp(report), "",
             "Each bound of the documents is checked on random or gridded instances and then searched: a "
             "derivative-free search (scrambled Sobol exploration, then Nelder-Mead from the best points) over "
             "the statement's hypothesis set, under a fixed budget and seed, for the instance maximising "
             "LHS/RHS. The largest ratio found is a lower bound on the supremum over the hypotheses; where the "
             "right-hand side is a stated constant times a function (the printed one, or the corrected one for the "
             "record of a corrected statement), that constant times the ratio is the smallest constant that still "
             "holds over the searched set. A ratio far below 1 measures how loose the constant is; a ratio above "
             "1 is a counterexample (an erratum). A record with several inequalities lists one row per search.", "",
             f"{len(searched)} of {len({r['id'] for r in rows})} bounds carry a search.", "",
             *_report.worst_case_table(report)]
    return "\n".join(lines) + "\n"


def generate(app) -> None:
    _write(OUT / "oracle_kernels.md", oracle_table())
    _write(OUT / "oracle_show.md", oracle_show_page())
    api_pages(OUT / "api")
    # autosummary lists the files to scan before this handler runs; name the generated API pages
    app.config.autosummary_generate = sorted(
        _rel(path, DOCS) for path in (OUT / "api").glob("*.rst") if path.name != "index.rst")
    report = load_claims(Path(app.config.theory_claims_report))
    claims = report["claims"]
    papers = OUT / "papers"
    keys = list(PAPERS)
    for key in keys:
        mine = [c for c in claims if c.get("paper") == key or str(c.get("id", "")).startswith(key + "/")]
        _write(papers / f"{key}.md", paper_page(key, mine, report, papers))
    toc = ["# Papers", "", "One page per paper key, generated from the claims report.", "",
           "```{toctree}", ":maxdepth: 1", ""] + [f"{key}" for key in keys] + ["```", ""]
    _write(papers / "index.md", "\n".join(toc))
    _write(OUT / "gallery.md", gallery_page(OUT))
    _write(OUT / "benchmarks.md", benchmarks_page(OUT))
    _write(OUT / "bounds.md", bounds_page(report))


def setup(app):
    app.add_config_value("theory_claims_report", str(ROOT / "reports" / "claims.json"), "env")
    app.connect("builder-inited", generate, priority=400)  # before autosummary
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
