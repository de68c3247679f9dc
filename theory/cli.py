"""The ``theory`` command: run the claim checks, read their report, draw the figures.

Usage::

    theory check [--paper KEY] [--claim ID] [--slow] [--list] [pytest arguments]
    theory report [--dir DIR] [--format table|markdown|json] [--quiet]
    theory plots [NAME ...]
    theory run EXPERIMENT [--preset P] [--set NAME=VALUE ...] [--backend numpy|torch] [--device cpu|cuda]
               [--dtype float64|float32] [--draws-on host|device] [--json OUT]
    theory sweep EXPERIMENT --grid GRID [--preset P] [--scheduler S] [--workers N] [--out DIR] [--plot [FIELD]]
    theory oracle list | show KERNEL | export DIR [--kernel K ...] [--force] | verify KERNEL module:function [--vectors DIR]
                  [--adapter FILE] [--dtype float64|float32] [--json OUT]

``python -m theory.cli ...`` does the same. Exit codes: 0 all selected claims pass, 1 a claim
fails, 2 the input or the environment is wrong (no checkout, an unknown claim ID, a malformed
report).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from theory._files import find_root

__all__ = ["main", "find_root"]


def _say(text: str, stream=None) -> None:
    """Print ``text``, replacing what the stream's encoding cannot show."""
    stream = stream or sys.stdout
    try:
        stream.write(text + "\n")
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "replace").decode(encoding) + "\n")


def _absolute_paths(args: list[str], here: Path) -> list[str]:
    """Pytest arguments with the test paths made absolute (they are typed relative to ``here``)."""
    out = []
    for arg in args:
        target, sep, rest = arg.partition("::")
        if not arg.startswith("-") and target and (here / target).exists():
            arg = str((here / target).resolve()) + sep + rest
        out.append(arg)
    return out


def _names_a_path(args: list[str]) -> bool:
    """Whether the pytest arguments name a test path (then ``checks`` is not added)."""
    return any(not a.startswith("-") and ("::" in a or Path(a.split("::")[0]).is_absolute()) for a in args)


def _check_parser() -> argparse.ArgumentParser:
    from theory.claims import PAPER_KEYS

    parser = argparse.ArgumentParser(
        prog="theory check",
        allow_abbrev=False,
        description="Run the claim checks (pytest on checks/) and update reports/claims.json and claims.md. "
        "The report is cumulative: a run replaces the records of the claims it ran and keeps the others.",
        epilog="Every other argument goes to pytest (a test path, -x, -k EXPR, -q, ...); "
        "`theory check --pytest-help` prints pytest's own options.",
    )
    parser.add_argument("--paper", action="append", default=[], metavar="KEY", choices=PAPER_KEYS,
                        help=f"run the claims of this paper key (repeatable): {', '.join(PAPER_KEYS)}")
    parser.add_argument("--claim", action="append", default=[], metavar="ID",
                        help="run the check of this claim, ID as the report prints it, e.g. topk/prop-7.8 "
                        "(repeatable; a slow check runs when named)")
    parser.add_argument("--slow", action="store_true", help="include the heavy reproductions marked slow")
    parser.add_argument("--list", action="store_true",
                        help="print the claim IDs (with --paper: of those papers), whether they are slow, the "
                        "experiment and preset that measure each and their tests; run nothing")
    parser.add_argument("--jobs", default="auto", metavar="N",
                        help="run the check files in N pytest processes, split by their last durations, and merge "
                        "their records into one report (default auto: one per core, at most 4; 1: one process). "
                        "A run naming test paths or --claim runs in one process")
    parser.add_argument("--pytest-help", action="store_true", help="print pytest's help and exit")
    return parser


def _jobs(value: str) -> int:
    """The number of processes of ``theory check --jobs``; ValueError naming the option for a bad value."""
    if value == "auto":
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not Linux
            cores = os.cpu_count() or 1
        return max(1, min(cores, 4))
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise ValueError(f"--jobs must be a positive integer or 'auto'; got {value!r}")
    return jobs


def _run_pytest(args: list[str], root: Path) -> int:
    import pytest

    previous = os.getcwd()
    os.chdir(root)
    try:
        return int(pytest.main(args))
    finally:
        os.chdir(previous)


def _list_claims(pytest_args: list[str], root: Path) -> int:
    import contextlib
    import io
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "claims.json"
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            code = _run_pytest(pytest_args + ["--collect-only", "-q", f"--claims-list={out}"], root)
        if code not in (0, 5) or not out.is_file():
            _say(captured.getvalue().rstrip(), sys.stderr)
            _say(f"theory check --list: collecting the checks failed (pytest exit code {code})", sys.stderr)
            return 2
        listing = json.loads(out.read_text(encoding="utf-8"))
    from theory.experiments import experiment_of

    def measured_by(claim_id: str) -> str:
        try:
            return f"{experiment_of(claim_id).name} (check)"
        except ValueError:
            return "(no experiment)"

    from theory.experiments import figures

    figure_of = {}
    for fig in figures():
        for claim_id in fig.claims:
            figure_of.setdefault(claim_id, f"{fig.key} {fig.label}")
    claims = sorted({c["id"]: c for c in listing}.values(), key=lambda c: c["id"])

    def flag(c) -> str:
        return "fails" if c.get("not_reproduced") is not None else "slow" if c["slow"] else ""

    rows = [(c["id"], flag(c), measured_by(c["id"]), figure_of.get(c["id"], ""), c["test"]) for c in claims]
    heads = ("claim", "", "experiment (preset)", "figure (theory reproduce)")
    widths = [max([len(r[i]) for r in rows] + [len(h)]) for i, h in enumerate(heads)]
    _say("  ".join(f"{h:<{w}}" for h, w in zip(heads, widths)) + "  test")
    for row in rows:
        _say("  ".join(f"{v:<{w}}" for v, w in zip(row[:4], widths)) + f"  {row[4]}")
    failing = sum(c.get("not_reproduced") is not None for c in claims)
    _say(f"{len(rows)} claims; `theory run CLAIM-ID --set NAME=VALUE` reruns a claim's experiment with a parameter "
         "changed; `theory reproduce KEY LABEL` draws a figure beside the document's numbers"
         + (f"; {failing} marked 'fails': figures that do not reproduce at their check sizes (slow, run by "
            "`make check-all`)" if failing else ""))
    return 0


def _check(args: list[str]) -> int:
    options, rest = _check_parser().parse_known_args(args)
    if options.pytest_help:
        import pytest

        return int(pytest.main(["--help"])) and 2
    try:
        jobs = _jobs(options.jobs)
    except ValueError as exc:
        _say(f"theory check: {exc}", sys.stderr)
        return 2
    root = find_root()
    if root is None:
        _say(f"theory check: no checks/ directory at or above {os.getcwd()}; run it inside the repository", sys.stderr)
        return 2
    from theory.claims import parse_claim_id

    for claim_id in options.claim:
        try:
            parse_claim_id(claim_id)
        except ValueError as exc:
            _say(f"theory check: --claim {exc}", sys.stderr)
            return 2
    if options.claim:  # an ID no experiment measures is refused in a few seconds, before collecting the checks
        from theory.experiments import experiment_of

        for claim_id in options.claim:
            try:
                experiment_of(claim_id)
            except ValueError as exc:
                _say(f"theory check: --claim {claim_id}: no check declares this claim ID ({exc})", sys.stderr)
                return 2
    rest = _absolute_paths(rest, Path.cwd())
    pytest_args = ["-p", "theory.pytest_plugin"]
    if not any(a.startswith("--claims-report") or a == "--no-claims-report" for a in rest):
        # one word: a separate DIR would be read as a test path before `-p` loads the plugin
        pytest_args.append(f"--claims-report={root / 'reports'}")
    pytest_args += [f"--paper={key}" for key in options.paper]
    pytest_args += [f"--claim={claim_id}" for claim_id in options.claim]
    pytest_args += ["--slow"] if options.slow else []
    if not _names_a_path(rest):
        pytest_args.append(str(root / "checks"))
    if options.list:
        return _list_claims(pytest_args + rest, root)
    files = sorted((root / "checks").glob("test_*.py"))
    if jobs > 1 and not options.claim and not _names_a_path(rest) and "--no-claims-report" not in rest \
            and len(files) > 1:
        from theory._check_pool import run_groups

        given = [a.partition("=")[2] for a in rest if a.startswith("--claims-report=")]
        report_dir = Path(given[-1]) if given else root / "reports"
        base = [a for a in pytest_args if not a.startswith("--claims-report") and a != str(root / "checks")]
        rest = [a for a in rest if not a.startswith("--claims-report")]
        return run_groups(base, rest, files, root, report_dir.resolve(), jobs, say=_say)
    code = _run_pytest(pytest_args + rest, root)
    if code in (0, 1):
        return code
    if code == 5:
        _say("theory check: no claim check was selected; `theory check --list` prints the claim IDs", sys.stderr)
    return 2


def _report(args: argparse.Namespace) -> int:
    from theory.report import load_report, render_markdown, summary_line

    if args.dir is not None:
        directory = Path(args.dir)
    else:
        root = find_root()
        directory = (root or Path.cwd()) / "reports"
    try:
        report = load_report(directory)
    except FileNotFoundError:
        _say(f"theory report: no claims report in {directory}; run `theory check` first", sys.stderr)
        return 2
    except ValueError as exc:
        _say(f"theory report: {exc}; run `theory check` to write a new one", sys.stderr)
        return 2
    except OSError as exc:
        _say(f"theory report: {directory} cannot be read ({exc.strerror or exc})", sys.stderr)
        return 2
    from theory.report import freshness, git_commit, render_table

    try:
        failed = [c for c in report["claims"] if c.get("status") == "fail"]
        status = freshness(report, git_commit())
        if args.quiet:
            lines = [f"{summary_line(report)} ({directory / 'claims.md'})", *status]
            lines += [f"FAIL {c['id']}: {' '.join(str(c.get('message', '')).split())}" for c in failed]
        elif args.format == "markdown":
            lines = [render_markdown(report).rstrip("\n")]
        elif args.format == "json":
            import json

            lines = [json.dumps(report, indent=2, ensure_ascii=False)]
        else:
            lines = [render_table(report), summary_line(report), *status,
                     "rerun one: theory run CLAIM-ID [--set NAME=VALUE] (each claim's command: claims.md)"]
    except RecursionError:
        # a field nested too deeply to render (it loaded within Python's recursion limit)
        _say(f"theory report: {directory / 'claims.json'} is malformed (a field is nested too deeply to show); "
             "run `theory check` to write a new one", sys.stderr)
        return 2
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        # a field of an unexpected form (a hand-edited or foreign file): exit 2 is "no usable report"
        _say(f"theory report: {directory / 'claims.json'} is malformed ({type(exc).__name__}: {exc}); "
             "run `theory check` to write a new one", sys.stderr)
        return 2
    for line in lines:
        _say(line)
    return 1 if failed else 0


_IMAGES = (".png", ".pdf", ".svg")


def _snapshot(directory: Path) -> dict[Path, int]:
    if not directory.is_dir():
        return {}
    return {p: p.stat().st_mtime_ns for p in directory.rglob("*") if p.suffix in _IMAGES and p.is_file()}


def _figure_scripts(root: Path | None = None) -> list[tuple[str, str, str]]:
    """(name, first docstring line, run time) of each figures/*.py script, read without running it."""
    import ast

    root = root or find_root()
    if root is None or not (root / "figures").is_dir():
        return []
    scripts = []
    for path in sorted((root / "figures").glob("*.py")):
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        except (SyntaxError, OSError, UnicodeDecodeError):
            doc = ""
        lines = [line.strip() for line in doc.splitlines()]
        runtime = next((line.split(":", 1)[1].strip().rstrip(".").removesuffix(" on 2 cores") for line in lines
                        if line.lower().startswith("run time:")), "?")
        scripts.append((path.stem, lines[0] if lines else "", runtime))
    return scripts


def _plots(args: argparse.Namespace) -> int:
    root = find_root()
    if root is None or not (root / "figures").is_dir():
        _say(f"theory plots: no figures/ directory in the repository at or above {os.getcwd()}", sys.stderr)
        return 2
    known = {name: (doc, runtime) for name, doc, runtime in _figure_scripts(root)}
    if args.list:
        for name, (doc, runtime) in known.items():
            _say(f"{name:<28} {runtime:<10} {doc}")
        return 0
    unknown = [n for n in args.names if n.removesuffix(".py") not in known]
    if unknown:
        _say(f"theory plots: no figure script {', '.join(unknown)}; known: {', '.join(known)}", sys.stderr)
        return 2
    names = [n.removesuffix(".py") for n in args.names] or list(known)
    if not names:
        _say("theory plots: no figure scripts in figures/")
        return 0
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if args.gallery:
        env["THEORY_GALLERY"] = "1"
    else:
        env.pop("THEORY_GALLERY", None)
    out = root / "figures"
    failures = 0
    for stem in names:
        script = root / "figures" / f"{stem}.py"
        before = _snapshot(out)
        done = subprocess.run([sys.executable, str(script)], cwd=root, env=env)
        after = _snapshot(out)
        written = sorted(p.relative_to(root).as_posix() for p, t in after.items() if before.get(p) != t)
        name = script.relative_to(root).as_posix()
        if done.returncode != 0:
            failures += 1
            _say(f"{name}: FAILED (exit code {done.returncode})")
        else:
            _say(f"{name}: wrote {', '.join(written) if written else 'no figure'}")
    _say(f"{len(names) - failures} of {len(names)} figure scripts ran")
    return 1 if failures else 0


def _plain(text: str) -> str:
    """Help text without reST markup: ``name`` and :func:`name` read as name in a terminal."""
    import re

    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    return text.replace("``", "")


def _describe_all(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand a description (its one-line help where it has none) and strip reST markup."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if sub.description is None and helps.get(name):
                    text = helps[name]
                    sub.description = text[0].upper() + text[1:] + "."
                sub.description = _plain(sub.description) if sub.description else sub.description
                sub.epilog = _plain(sub.epilog) if sub.epilog else sub.epilog
                _describe_all(sub)


def _parser() -> argparse.ArgumentParser:
    from theory import __version__

    parser = argparse.ArgumentParser(prog="theory", description=_plain(__doc__.split("\n")[0]))
    parser.add_argument("--version", action="version", version=f"theory {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("check", help="run the claim checks and update reports/claims.{json,md}; "
                   "`theory check --help` for its options", add_help=False)
    report = sub.add_parser("report", help="print the claims report; exit 1 if a claim fails, 2 if none exists")
    report.add_argument("--dir", default=None, help="report directory (default: reports/ in the repository)")
    report.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                        help="table: one line per claim, failures first (default); markdown: claims.md; json")
    report.add_argument("--quiet", action="store_true", help="print only the summary line and the failing claims")
    scripts = _figure_scripts()
    listing = "\n".join(f"  {name:<27} {runtime:<11} {doc[:58]}" for name, doc, runtime in scripts)
    plots = sub.add_parser(
        "plots",
        help="run the figure scripts of figures/ (output under figures/out/)",
        description="Run the figure scripts of figures/ with the Agg backend. They write under\n"
        "figures/out/ only; --gallery also refreshes the committed copies in figures/gallery/.",
        epilog=("figure scripts (name, run time, what it draws):\n" + listing) if listing else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plots.add_argument("names", nargs="*", metavar="NAME", help="run only these scripts (default: all)")
    plots.add_argument("--list", action="store_true", help="list the scripts with their run time and exit")
    plots.add_argument("--gallery", action="store_true", help="also copy the gallery figures to figures/gallery/")
    _run_parser(sub)
    _sweep_parser(sub)
    _reproduce_parser(sub)
    _oracle_parser(sub)
    _describe_all(parser)
    return parser


def _run_parser(sub) -> None:
    run = sub.add_parser(
        "run",
        help="run one experiment once (a preset, some fields changed), e.g. at the paper's size on a GPU",
        description="Run a registered experiment once and print its summary, its verdict (if it has one) and\n"
        "the time it took. The scale experiments (those with a `backend` field) run on PyTorch with\n"
        "--backend torch, on a CUDA device with --device cuda. Exit codes: 0 done (verdict passed or none),\n"
        "1 the verdict failed, 2 bad input (an unknown experiment, preset, field or value; a size beyond the\n"
        "work or memory guards; a --json path that cannot be written; a backend the experiment does not\n"
        "support; a CUDA device where none exists).",
        epilog="examples:\n  theory run resnet-node/prop-3 --set depths=8|16|32|64|128|256   # a claim at other sizes\n"
        "  theory run scaling.fig7_grid --preset paper --backend torch --device cuda --draws-on device",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("experiment", nargs="?", metavar="EXPERIMENT|CLAIM-ID",
                     help="a registered experiment (--list prints them), or a claim ID as the report prints it "
                     "(its experiment, and the verdict its check records)")
    run.add_argument("--preset", default="check", help="the preset to start from (default: check)")
    run.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                     help="change one field (repeatable); a tuple field takes v1|v2|... or start:stop:count")
    run.add_argument("--backend", default=None, help="numpy or torch (experiments with a backend field)")
    run.add_argument("--device", default=None, help="cpu, cuda or cuda:N (torch backend)")
    run.add_argument("--dtype", default=None, help="float64 (default) or float32 (torch backend)")
    run.add_argument("--draws-on", default=None, dest="draws_on",
                     help="host (NumPy draws, identical on every backend) or device (torch only)")
    run.add_argument("--json", default=None, metavar="OUT", help="also write the summary and timing as JSON")
    run.add_argument("--list", action="store_true", help="list the experiments that take --backend and exit")


#: How NumPy refuses an array whose size overflows (a ValueError, not a MemoryError)
_NUMPY_TOO_BIG = ("array is too big", "Maximum allowed size exceeded")


def _size_refusal(exc: BaseException) -> BaseException | None:
    """The refusal by a size guard of theory._validation (``check_work``, ``check_memory``) that
    ``exc`` is or was raised from, else None.

    Experiments call the public kernels, which refuse at their door a call whose estimated work or
    memory is beyond :data:`theory._validation.MAX_WORK` / :data:`~theory._validation.MAX_BYTES`
    before computing or allocating anything: such a refusal is bad input (a config too large), not
    a failed claim. It is recognised by the frame that raised it, so that no other ValueError is
    taken for one; so is NumPy's refusal of an array whose byte size overflows."""
    from theory import _validation

    guards = {_validation.check_work.__code__, _validation.check_memory.__code__}
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb, last = exc.__traceback__, None
        while tb is not None:
            last, tb = tb, tb.tb_next
        if isinstance(exc, ValueError) and last is not None and last.tb_frame.f_code in guards:
            return exc
        if isinstance(exc, ValueError) and str(exc).startswith(_NUMPY_TOO_BIG):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _run(args: argparse.Namespace) -> int:
    import json
    import time

    from theory._files import check_writable_file, write_atomic
    from theory.experiments import experiment, experiments
    from theory.sweep import SweepInputError

    if args.list:
        for name in experiments():
            if "backend" in experiment(name).fields:
                _say(f"{name:<28} {', '.join(sorted(experiment(name).presets))}")
        return 0
    if not args.experiment:
        _say("theory run: name an EXPERIMENT (`theory sweep --list` prints them all)", sys.stderr)
        return 2
    claim_id = args.experiment if "/" in args.experiment else None
    try:
        if claim_id is not None:  # a claim ID: its experiment, and the verdict its check records
            from theory.experiments import experiment_of

            exp = experiment_of(claim_id)
        else:
            exp = experiment(args.experiment)
        if args.preset not in exp.presets:
            raise ValueError(f"--preset must be one of {sorted(exp.presets)}; got {args.preset!r}")
        overrides = {}
        for item in args.set:
            name, sep, text = item.partition("=")
            if not sep or name.strip() not in exp.fields:
                raise ValueError(f"--set {item!r}: expected NAME=VALUE with NAME one of {', '.join(exp.fields)}")
            overrides[name.strip()] = exp.parse(name.strip(), text)  # parsed and validated by its declaration
        for flag, name in (("--backend", "backend"), ("--device", "device"), ("--dtype", "dtype"),
                           ("--draws-on", "draws_on")):
            value = getattr(args, name)
            if value is None:
                continue
            if name not in exp.fields:
                raise ValueError(f"{flag}: experiment {exp.name} has no `{name}` field (the experiments that take "
                                 f"one: `theory run --list`)")
            overrides[name] = value
        if "device" in overrides and "backend" not in overrides and overrides["device"] != "cpu":
            overrides["backend"] = "torch"  # --device cuda alone means the torch backend
        config = exp.config_for(args.preset, **overrides)  # counts beyond the guards refused there
        if args.json is not None:  # before the run, not after it
            check_writable_file(args.json, "--json")
        from theory.backends import resolve

        backend = resolve(config.backend, config.device, config.dtype) if "backend" in exp.fields else None
    except (ValueError, TypeError, ImportError, SweepInputError) as exc:
        _say(f"theory run: {exc}", sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        result = exp.measure(config)
        if backend is not None:
            backend.synchronize()
    except ValueError as exc:
        if _size_refusal(exc) is None:
            raise
        _say(f"theory run: {exp.name} is refused at these sizes: {' '.join(str(exc).split())}", sys.stderr)
        return 2
    except MemoryError:
        _say(f"theory run: {exp.name} ran out of memory; choose smaller sizes with --set", sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    where = f"{backend.name} {backend.device} {backend.dtype}" if backend is not None else "numpy"
    shown = [f"{k}={v}" if not isinstance(v, tuple) else f"{k}=({len(v)} values)" for k, v in overrides.items()]
    measures = f"{claim_id}: " if claim_id is not None else ""
    _say(f"{measures}{exp.name} (preset {', '.join([args.preset] + shown)}) on {where}: {elapsed:.3f} s")
    try:
        summary = exp.summary(result) if exp.summary is not None else {}
    except ValueError as exc:  # a summary that fits a rate needs enough grid sizes, for instance
        _say(f"theory run: the summary of {exp.name} cannot be formed at these sizes: {' '.join(str(exc).split())}",
             sys.stderr)
        return 2
    for key, value in summary.items():
        _say(f"  {key} = {value:.6g}" if isinstance(value, float) else f"  {key} = {value}")
    code = 0
    verdict_of = exp.verdict_for(claim_id) if claim_id is not None else exp.verdict
    if verdict_of is not None:
        from theory.claims import Verdict

        try:
            verdict = verdict_of(result)
        except ValueError as exc:
            _say(f"theory run: the verdict of {exp.name} cannot be formed at these sizes: "
                 f"{' '.join(str(exc).split())}", sys.stderr)
            return 2
        if not isinstance(verdict, Verdict):
            raise TypeError(f"the verdict of experiment {exp.name} returned {type(verdict).__name__}, not a "
                            "theory.claims.Verdict")
        _say(f"verdict: {verdict.status} ({verdict.kind or 'untyped'}): {verdict.message}")
        code = 0 if verdict.passed else 1
    if args.json is not None:
        from theory.rates import to_plain

        text = json.dumps({"experiment": exp.name, "preset": args.preset, "backend": where, "seconds": elapsed,
                           "summary": to_plain(summary)}, indent=1, default=repr, allow_nan=False) + "\n"
        try:
            write_atomic(args.json, text)
        except OSError as exc:
            _say(f"theory run: --json {args.json} could not be written ({exc.strerror or exc})", sys.stderr)
            return 2
    return code


def _oracle_parser(sub) -> None:
    oracle = sub.add_parser(
        "oracle",
        help="check another implementation against the float64 kernels; export test vectors",
        description="The reference oracle. Exit codes: 0 every case decided agrees, 1 your implementation disagrees\n"
        "on a case, 2 the input is wrong (a module that does not import, a function that raises, calls sys.exit\n"
        "or returns a wrong shape, dtype or NaN, a modified or newer vectors folder, an unknown kernel, an output\n"
        "path that cannot be written) or nothing was decided (no case compared, or every compared case\n"
        "inconclusive). A case is inconclusive, not a pass, when its tolerance is too wide to tell an error of\n"
        "1 % of the output from rounding; inconclusive cases alone never give exit code 1.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    osub = oracle.add_subparsers(dest="oracle_command")
    osub.add_parser("list", help="every kernel with its number of cases and its tolerance rule")
    show = osub.add_parser("show", help="a kernel's call, argument shapes and dtypes, conventions, tolerance rule, "
                                        "parameters and case names")
    show.add_argument("kernel", metavar="KERNEL")
    export = osub.add_parser("export", help="write one .npz per kernel and manifest.json (byte-reproducible)")
    export.add_argument("dir", metavar="DIR")
    export.add_argument("--kernel", action="append", default=[], metavar="K", help="only this kernel (repeatable)")
    export.add_argument("--force", action="store_true",
                        help="replace the manifest.json and .npz files of an earlier export in DIR (default: refuse)")
    verify = osub.add_parser("verify", help="call module:function on every case of KERNEL and compare")
    verify.add_argument("kernel", metavar="KERNEL")
    verify.add_argument("function", metavar="module:function")
    verify.add_argument("--vectors", default=None, metavar="DIR",
                        help="exported vectors (default: the cases generated in memory, the same ones)")
    verify.add_argument("--adapter", default=None, metavar="FILE",
                        help="a Python file defining adapt(fn) -> a callable taking the oracle's keyword arguments")
    verify.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                        help="float32: inputs rounded to float32 and the float32 tolerance rule")
    verify.add_argument("--case", action="append", default=None, metavar="NAME",
                        help="only the cases of this name or shell glob, e.g. 'fgn_H0.5*' (repeatable)")
    verify.add_argument("--param", action="append", default=None, metavar="NAME=V1,V2",
                        help="generate the cases at these values of a parameter of the kernel (repeatable; every "
                             "combination; `theory oracle show KERNEL` lists its parameters)")
    verify.add_argument("--outputs", choices=("all", "last"), default="all",
                        help="last: your function returns only the last state of each trajectory output (a model "
                             "returning x_N), compared with the reference's last row (default: all)")
    verify.add_argument("--memory-cap", default=None, metavar="SIZE",
                        help="stop a call of your function whose memory grows by more than SIZE (e.g. 4GiB; inf: no "
                             "cap) and report its case as ERROR (default: theory.oracle.MEMORY_CAP, or MEMORY_CAP_FACTOR "
                             "times the bytes of the case's arrays if larger)")
    verify.add_argument("--json", default=None, metavar="OUT", help="also write the result as JSON")


def _oracle(args: argparse.Namespace) -> int:
    from theory import oracle

    try:
        if args.oracle_command == "list":
            for name in oracle.kernels():
                k = oracle.kernel(name)
                params = f"; parameters: {', '.join(p.name for p in k.parameters)}" if k.parameters else ""
                _say(f"{name:<24} {len(k.cases()):>3} cases  {k.rule}\n{'':<24}     {k.signature}{params}")
            _say("`theory oracle show KERNEL` prints a kernel's arguments, conventions, tolerance and case names.")
            return 0
        if args.oracle_command == "show":
            _say(oracle.show(args.kernel))
            return 0
        if args.oracle_command == "export":
            path = oracle.export(args.dir, args.kernel or None, overwrite=args.force)
            _say(f"wrote {path} and {len(args.kernel) or len(oracle.kernels())} .npz files")
            return 0
        if args.oracle_command == "verify":
            oracle.kernel(args.kernel)
            if args.json:  # before the run: an unwritable --json must not cost the run, nor end it with a traceback
                from theory._files import check_writable_file

                try:
                    check_writable_file(args.json, "--json")
                except ValueError as exc:
                    raise oracle.OracleInputError(str(exc)) from None
            if args.function.endswith(".py") or ":" not in args.function:
                raise oracle.OracleInputError(
                    f"expected module:function (e.g. scipy.optimize:isotonic_regression), got {args.function!r}")
            import sys as _sys

            if os.getcwd() not in _sys.path and "" not in _sys.path:
                _sys.path.insert(0, os.getcwd())  # as `python -m` would: the user's modules in the cwd import
            fn = oracle.load_function(args.function)
            result = oracle.verify(args.kernel, fn, vectors=args.vectors, adapter=args.adapter,
                                   dtype=args.dtype, cases=args.case, params=_oracle_params(args.param),
                                   outputs=args.outputs, memory_cap=_oracle_memory_cap(args.memory_cap))
            _say(result.report())
            if args.json:
                import json

                from theory._files import write_atomic

                write_atomic(args.json, json.dumps(result.to_json(), indent=1) + "\n")
            return result.exit_code
    except oracle.OracleInputError as exc:
        _say(f"theory oracle: {exc}", sys.stderr)
        return 2
    except OSError as exc:  # the environment (a full disk, a folder removed meanwhile): exit 2, not a traceback
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        _say(f"theory oracle: cannot read or write a file{where}: {exc.strerror or exc}", sys.stderr)
        return 2
    _say("theory oracle: name a subcommand: list, show, export or verify (`theory oracle --help`)", sys.stderr)
    return 2


def _oracle_memory_cap(text):
    """``--memory-cap SIZE`` as bytes (None: the default rule of theory.oracle.verify)."""
    if text is None:
        return None
    from theory.oracle import parse_memory_cap

    return parse_memory_cap(text)


def _oracle_params(items):
    """``--param NAME=V1,V2`` options as {NAME: "V1,V2"} (parsed by the kernel's declared constraints), or None."""
    from theory import oracle

    if not items:
        return None
    out = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name.strip() or not values.strip():
            raise oracle.OracleInputError(f"--param expects NAME=V1,V2 (e.g. hurst=0.3,0.7); got {item!r}")
        if name.strip() in out:
            raise oracle.OracleInputError(f"--param {name.strip()} is given twice; list its values once, comma-separated")
        out[name.strip()] = values
    return out


def _sweep_parser(sub) -> None:
    sweep = sub.add_parser(
        "sweep",
        help="run an experiment over a parameter grid (cached; resumable; local processes or Dask)",
        description="Run a registered experiment at every point of a grid; each point is one task, cached in\n"
        "OUT/tasks/ (an interrupted sweep resumes; a finished one replots for free).\n"
        "Exit codes: 0 done, 1 a task failed, 2 bad input (before any task runs: a grid of more than\n"
        "10**6 points, a size beyond the guards, an unwritable --out or --png) or a cache file that\n"
        "cannot be written. A damaged cache file is never used: it is recomputed with a warning.",
        epilog="grid: comma-separated name=start:stop:count (count values evenly spaced, both ends\n"
        "included), name=v1|v2|v3 (a list) or name=value; the last parameter varies fastest. Examples:\n"
        "  theory sweep scaling.fig7_cell --grid 'beta=0.2:1.3:70,hurst=0.05:0.97:51' --preset paper\n"
        "  theory sweep scaling.fig7_cell --plot hidden,gradient",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sweep.add_argument("experiment", nargs="?", metavar="EXPERIMENT",
                       help="a registered experiment, e.g. scaling.fig7_cell (--list prints them)")
    sweep.add_argument("--grid", default=None, help="the grid (see below); with --plot, default: the last sweep's")
    sweep.add_argument("--preset", default=None, help="the preset the grid modifies (default: check)")
    sweep.add_argument("--scheduler", default="local",
                       help="local (a process pool, default), dask (a Dask LocalCluster), serial, or the address "
                       "of a running Dask scheduler, tcp://HOST:PORT")
    sweep.add_argument("--workers", type=int, default=None, help="worker processes (default: the CPU count)")
    sweep.add_argument("--out", default=None, help="cache folder (default: reports/sweeps/EXPERIMENT/)")
    sweep.add_argument("--plot", nargs="?", const="", default=None, metavar="FIELD[,FIELD]",
                       help="draw summary fields from the cache (no computing): a heatmap for a 2-D grid, a line "
                       "for a 1-D one; default field: the first of the summary")
    sweep.add_argument("--png", default=None, help="with --plot: the image path (default OUT/FIELDS.png)")
    sweep.add_argument("--list", action="store_true", help="list the experiments with their parameters and exit")


def _sweep(args: argparse.Namespace) -> int:
    from theory._files import check_writable_file
    from theory.sweep import SweepInputError, load_sweep, plot_sweep, sweep

    if args.list:
        from theory.experiments import experiment, experiments

        for name in experiments():
            _say(f"{name:<32} {', '.join(experiment(name).fields)}")
        return 0
    if not args.experiment:
        _say("theory sweep: name an EXPERIMENT (`theory sweep --list` prints them)", sys.stderr)
        return 2
    try:
        if args.png is not None:
            if args.plot is None:
                raise SweepInputError("--png names the image of --plot; give --plot too")
            png = Path(args.png)
            if png.is_dir() or png.parent.is_dir():  # a missing folder is created when the image is saved
                try:
                    check_writable_file(png, "--png")
                except ValueError as exc:
                    raise SweepInputError(str(exc)) from None
        if args.plot is not None:
            result = load_sweep(args.experiment, args.grid, preset=args.preset, out=args.out, stream=sys.stderr)
            fields = [f.strip() for f in args.plot.split(",") if f.strip()]
            if not fields:
                first = next(s for s in result.summaries if s is not None)
                fields = list(first)[:1]
            path = plot_sweep(result, fields, args.png)
            missing = sum(s is None for s in result.summaries)
            _say(f"{path}" + (f" ({missing} of {len(result)} points not cached, left blank)" if missing else ""))
            return 0
        if args.grid is None:
            _say("theory sweep: --grid is required (e.g. --grid 'beta=0.2:1.3:12,hurst=0.1|0.5|0.9')", sys.stderr)
            return 2
        result = sweep(args.experiment, args.grid, preset=args.preset or "check", scheduler=args.scheduler,
                       workers=args.workers, out=args.out)
    except SweepInputError as exc:
        _say(f"theory sweep: {exc}", sys.stderr)
        return 2
    except OSError as exc:  # the cache folder filled up or went away during the sweep
        _say(f"theory sweep: a cache file could not be written ({exc}); what finished is kept, run it again "
             "to resume", sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        from theory.sweep import SweepTerminated

        return 143 if isinstance(exc, SweepTerminated) else 130
    return 1 if result.failures else 0


def _reproduce_parser(sub) -> None:
    from theory.datasets import DATA_ENV

    rep = sub.add_parser(
        "reproduce",
        help="reproduce a document's figures and tables beside the numbers it prints (cached; local pool or Dask)",
        description="Run the experiments of a paper key's figures (through the sweep cache: an interrupted run\n"
        "resumes), judge each by its claims' criteria, draw it in the document's layout and write beside it\n"
        "the table of the document's printed numbers against the measured ones: OUT/KEY/LABEL.{png,md,json}\n"
        "and OUT/KEY/README.md. A figure on a dataset that is not under the data root is skipped, naming the\n"
        "dataset and where it is published; a run on a stand-in is a figure of its own, marked proxy.\n"
        "Exit codes: 0 every figure run passed (or was skipped for its data), 1 a figure's claim failed,\n"
        "2 bad input (an unknown key, figure or preset; an unwritable --out; a named figure whose dataset\n"
        "is missing), 130 interrupted (the finished tasks are cached).",
        epilog="examples:\n"
        "  theory reproduce --list                       every figure and table, by paper key\n"
        "  theory reproduce momentum fig-4.5             the nested rings at the check preset\n"
        "  theory reproduce resnet-node --preset paper --data ~/datasets --out results\n"
        "  theory reproduce implicit-reg fig-1 --preset paper --backend torch --device cuda   on a GPU",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("key", nargs="?", metavar="KEY", help="a paper key (theory reproduce --list prints them)")
    rep.add_argument("figures", nargs="*", metavar="FIGURE",
                     help="figures by the document's numbering, e.g. fig-4.5 table-4.2 (default: all of KEY's)")
    rep.add_argument("--preset", default="check",
                     help="paper: the document's sizes; check: the sizes of the checks (default)")
    rep.add_argument("--data", default=None, metavar="DIR",
                     help=f"the folder holding the datasets (default: ${DATA_ENV}); nothing is downloaded")
    rep.add_argument("--scheduler", default="local",
                     help="local (a process pool, default), dask, serial, or a Dask scheduler address tcp://HOST:PORT")
    rep.add_argument("--workers", type=int, default=None, help="worker processes (default: the CPU count)")
    rep.add_argument("--out", default=None, help="output folder (default: reports/reproduce/PRESET/)")
    rep.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                     help="change one field of the experiments that have it (repeatable), as in theory run")
    rep.add_argument("--backend", default=None, help="numpy or torch (the experiments with a backend field)")
    rep.add_argument("--device", default=None,
                     help="cpu, cuda or cuda:N (PyTorch training and the torch backend; cuda alone implies --backend "
                          "torch where the experiment has one)")
    rep.add_argument("--list", action="store_true", help="list the figures (all keys, or KEY's) with their claims")


def _reproduce_list(key) -> int:
    from theory.experiments import figures
    from theory.papers import PAPERS

    for p in PAPERS:
        if key is not None and p.key != key:
            continue
        declared = figures(p.key)
        covered = len({f.base for f in declared})
        _say(f"{p.key}: {covered} of the document's {len(p.figures)} figures and tables declared "
             f"({len(declared)} declarations)" if p.figures else f"{p.key}: inventory not declared yet")
        for label in p.figures:
            ours = [f for f in declared if f.base == label]
            if not ours:
                _say(f"  {label:<18} not declared")
            for f in ours:
                what = ("illustration" if f.illustration else f"proxy: {f.substitute}" if f.substitute
                        else f"needs {f.data}" if f.data else "measured")
                claims = ", ".join(f.claims) or "no claim"
                _say(f"  {f.label:<18} {f.title[:52]:<52} [{what[:40]}] {claims}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from theory.reproduce import ReproduceInputError, headline, reproduce, select_figures
    from theory.sweep import SweepInputError

    if args.list:
        if args.key is not None:
            try:
                select_figures(args.key)
            except ReproduceInputError as exc:
                _say(f"theory reproduce: {exc}", sys.stderr)
                return 2
        return _reproduce_list(args.key)
    if not args.key:
        _say("theory reproduce: name a paper KEY (`theory reproduce --list` prints the figures of every key)",
             sys.stderr)
        return 2
    settings = {}
    for item in args.set:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            _say(f"theory reproduce: --set {item!r}: expected NAME=VALUE", sys.stderr)
            return 2
        settings[name.strip()] = text.strip()
    for name in ("backend", "device"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    try:
        results = reproduce(args.key, args.figures, preset=args.preset, scheduler=args.scheduler,
                            workers=args.workers, data=args.data, out=args.out, settings=settings)
    except (ReproduceInputError, SweepInputError) as exc:
        _say(f"theory reproduce: {exc}", sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        from theory.sweep import SweepTerminated

        _say("theory reproduce: interrupted; the finished tasks are cached: run the same command again to resume",
             sys.stderr)
        return 143 if isinstance(exc, SweepTerminated) else 130
    code = 0
    for r in results:
        tag = r.status + (" (proxy)" if r.proxy else "")
        shown = headline(r.verdicts) or "; ".join(f"{row['name']} {_reproduce_number(row['measured'])} (printed "
                                                  f"{_reproduce_number(row['printed'])})" for row in r.rows[:2])
        where = f" -> {r.png}" if r.png else ""
        _say(f"{tag:<14} {r.figure.id:<28} {r.seconds:7.1f} s  {shown or r.message[:90]}{where}")
        if r.status == "fail":
            code = 1
        if r.status == "skip":
            _say(f"               {r.message}")
            if args.figures and code == 0:
                code = 2  # a figure named on the command line could not be run: its data is missing
    out = results[0].record.parent if results and results[0].record is not None else None
    passed = sum(r.status == "pass" for r in results)
    _say(f"{len(results)} figure(s) of {args.key} at preset {args.preset}: {passed} pass, "
         f"{sum(r.status == 'fail' for r in results)} fail, {sum(r.status == 'skip' for r in results)} skipped "
         f"(data missing), {sum(r.status == 'illustration' for r in results)} illustrations"
         + (f"; tables and figures in {out}" if out else ""))
    return code


def _reproduce_number(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


#: the subcommands that call kernels, and so may compile them (theory._compile_notice says so while they do)
_COMPILING = ("check", "run", "sweep", "oracle", "reproduce")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``theory`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _COMPILING and not any(a in ("-h", "--help", "--pytest-help") for a in argv[1:2]):
        from theory._compile_notice import notice
        from theory._openmp import share_openmp_runtime

        share_openmp_runtime()  # before an experiment imports PyTorch (see theory._openmp)
        with notice():
            return _main(argv)
    return _main(argv)


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "check":  # everything after `check` belongs to pytest
        return _check(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args)
    if args.command == "plots":
        return _plots(args)
    if args.command == "sweep":
        return _sweep(args)
    if args.command == "run":
        return _run(args)
    if args.command == "reproduce":
        return _reproduce(args)
    if args.command == "oracle":
        return _oracle(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
