"""The generated page of a paper key (docs/_ext/theory_docs.py) carries the report's partial/stale notice, the
decisive figure against its prediction, what each check compared and the command that reruns it (skipped
without Sphinx; `make docs` installs it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("sphinx")

ROOT = Path(__file__).resolve().parents[1]


def _ext():
    spec = importlib.util.spec_from_file_location("theory_docs", ROOT / "docs" / "_ext" / "theory_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_paper_page_of_a_partial_report_says_so(tmp_path):
    ext = _ext()
    record = {"id": "topk/prop-7.8", "paper": "topk", "status": "pass", "kind": "rate", "title": "t",
              "expected": {"slope": -1.0, "tol": 0.1}, "message": "slope -0.99 [95% CI -1.0, -0.98]",
              "measured": {"slope": -0.99, "ci": [-1.0, -0.98], "grid": [8, 16, 32, 64, 128]},
              "experiment": "topk.prop78", "preset": "check", "parameters": ["n", "seed"]}
    other = {**record, "id": "topk/prop-7.2", "commit": "0" * 40}
    report = {"claims": [record, other], "last_run": {"claims": ["topk/prop-7.8"]}}
    page = ext.paper_page("topk", [record, other], report, tmp_path)
    assert "```{warning}" in page and "This page reads a partial: 1 of 2 claims measured by the last run." in page
    assert "stale: 1 claim measured on an older commit" in page
    assert ext._cell("slope -0.99 [-1.00, -0.98], 8..128") in page and "slope -1.00 ± 0.10" in page
    assert "- what was compared: " + ext._cell("slope -0.99 [95% CI -1.0, -0.98]") in page
    assert "- rerun: ``theory run topk/prop-7.8 --set n=... (parameters: n, seed)``" in page
    fresh = ext.paper_page("topk", [record], {"claims": [record], "last_run": {"claims": ["topk/prop-7.8"]}}, tmp_path)
    assert "{warning}" not in fresh
