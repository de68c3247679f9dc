"""The README's speed table quotes the published benchmark results, and its verdicts follow from them.

Every row of the table under "## Speed" names a results file (benchmarks/results/<name>.md, written by
``benchmarks/publish.py`` with the machine it ran on); the measured figure of the row must appear in that
file verbatim, and the "met" column must be what the figure and the target say. A re-measurement that
changes a figure thus fails this test until the README is updated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _speed_rows():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Speed\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert m, "README.md has no '## Speed' section"
    rows = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and not set(cells[0]) <= set("-: ") and cells[0] != "kernel":
            rows.append(cells)
    return rows


def test_speed_table_exists():
    assert len(_speed_rows()) >= 10


@pytest.mark.parametrize("row", _speed_rows(), ids=lambda r: f"{r[0]} {r[1]}"[:60])
def test_speed_row_quotes_its_results_file(row):
    kernel, case, measured, target, met, source = row
    path = ROOT / "benchmarks" / "results" / f"{source.strip('`')}.md"
    assert path.exists(), f"{kernel} {case}: no results file {path.name}"
    assert measured in path.read_text(encoding="utf-8"), f"{kernel} {case}: {measured!r} is not in {path.name}"
    value = float(re.sub(r"[^0-9.eE+-]", "", measured))
    tm = re.fullmatch(r"([≥≤])\s*([0-9.]+)\s*×?", target)
    assert tm, f"target {target!r} is not '≥ x' or '≤ x'"
    bound = float(tm.group(2))
    holds = value >= bound if tm.group(1) == "≥" else value <= bound
    assert met == ("yes" if holds else "no"), f"{kernel} {case}: {measured} vs {target} says {met!r}"
