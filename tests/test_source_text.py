"""The package's text files hold no control characters besides newlines: a backslash sequence of a
formula (``\\frac``, ``\\top``, ``\\alpha``) typed into a file through a tool that read it as an escape
lands as a form feed, tab or bell, and the rendered formula then silently loses its command."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for folder in ("theory", "tests", "checks", "docs", "figures", "benchmarks", "examples")
               for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md", ".rst", ".txt"}
               and not {"_build", "_generated", "__pycache__", "out"} & set(p.parts))
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def test_files_found():
    assert len(FILES) > 200


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_control_characters(path):
    text = path.read_text(encoding="utf-8")
    bad = [(text.count("\n", 0, m.start()) + 1, repr(m.group())) for m in CONTROL.finditer(text)]
    assert not bad, f"{path.relative_to(ROOT)}: control characters at (line, char) {bad[:5]}"
