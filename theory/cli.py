"""The ``theory`` command: run the claim checks, read their report, draw the figures.

Usage::

    theory check [pytest arguments]     # pytest checks/, report to reports/
    theory report [--dir DIR] [--quiet] # the Markdown table; exit 1 if a claim fails
    theory plots                        # run every figures/*.py with the Agg backend

``python -m theory.cli ...`` does the same.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["main", "find_root"]


def _say(text: str, stream=None) -> None:
    """Print ``text``, replacing what the stream's encoding cannot show."""
    stream = stream or sys.stdout
    try:
        stream.write(text + "\n")
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "replace").decode(encoding) + "\n")


def find_root(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest directory at or above ``start`` (default: the cwd) holding ``checks/``."""
    start = Path(start or os.getcwd()).resolve()
    for directory in (start, *start.parents):
        if (directory / "checks").is_dir():
            return directory
    return None


def _names_a_path(args: list[str], root: Path) -> bool:
    """Whether the pytest arguments name a test path (then ``checks`` is not added)."""
    for arg in args:
        if arg.startswith("-"):
            continue
        target = arg.split("::")[0]
        if "::" in arg or (Path(target).exists() or (root / target).exists()):
            return True
    return False


def _check(args: list[str]) -> int:
    root = find_root()
    if root is None:
        _say(f"theory check: no checks/ directory at or above {os.getcwd()}; run it inside the repository", sys.stderr)
        return 2
    import pytest

    pytest_args = ["-p", "theory.pytest_plugin"]
    if not any(a.startswith("--claims-report") or a == "--no-claims-report" for a in args):
        # one word: a separate DIR would be read as a test path before `-p` loads the plugin
        pytest_args.append(f"--claims-report={root / 'reports'}")
    if not _names_a_path(args, root):
        pytest_args.append("checks")
    previous = os.getcwd()
    os.chdir(root)
    try:
        return int(pytest.main(pytest_args + args))
    finally:
        os.chdir(previous)


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
    failed = [c for c in report["claims"] if c.get("status") == "fail"]
    try:
        if args.quiet:
            lines = [f"{summary_line(report)} ({directory / 'claims.md'})"]
            lines += [f"FAIL {c['id']}: {' '.join(str(c.get('message', '')).split())}" for c in failed]
        else:
            lines = [render_markdown(report).rstrip("\n")]
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


def _plots(args: argparse.Namespace) -> int:
    root = find_root()
    if root is None or not (root / "figures").is_dir():
        _say(f"theory plots: no figures/ directory in the repository at or above {os.getcwd()}", sys.stderr)
        return 2
    scripts = sorted((root / "figures").glob("*.py"))
    if not scripts:
        _say("theory plots: no figure scripts in figures/")
        return 0
    env = {**os.environ, "MPLBACKEND": "Agg"}
    out = root / "figures"
    failures = 0
    for script in scripts:
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
    _say(f"{len(scripts) - failures} of {len(scripts)} figure scripts ran")
    return 1 if failures else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="theory", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("check", help="run pytest on checks/ and write reports/claims.{json,md}; "
                   "further arguments go to pytest", add_help=False)
    report = sub.add_parser("report", help="print the claims report; exit 1 if a claim fails, 2 if none exists")
    report.add_argument("--dir", default=None, help="report directory (default: reports/ in the repository)")
    report.add_argument("--quiet", action="store_true", help="print only the summary line and the failing claims")
    sub.add_parser("plots", help="run every figures/*.py script with the Agg backend")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``theory`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "check":  # everything after `check` belongs to pytest
        return _check(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args)
    if args.command == "plots":
        return _plots(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
