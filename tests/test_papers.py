"""The table of paper keys (theory.papers) is the one list: every other list of keys is read from it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from theory import claims, papers
from theory.experiments import _registry

ROOT = Path(__file__).resolve().parents[1]


def test_every_list_of_keys_is_the_table():
    keys = tuple(p.key for p in papers.PAPERS)
    assert claims.PAPER_KEYS == papers.PAPER_KEYS == keys and len(set(keys)) == len(keys)
    assert _registry.MODULES == tuple(p.module for p in papers.PAPERS)


def test_each_paper_has_its_pieces():
    """An experiments module, a check module, kernel subpackages and (where named) a benchmark."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        publish = importlib.import_module("publish")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for p in papers.PAPERS:
        importlib.import_module(f"theory.experiments.{p.module}")
        assert list((ROOT / "checks").glob(f"test_{p.module}*.py")), p.key
        for kernel in p.kernels:
            importlib.import_module(f"theory.{kernel}")
        assert p.benchmark is None or p.benchmark in publish.SCRIPTS, p


def test_lookups_and_refusals():
    assert papers.paper("icl-ar").module == "icl_ar" and papers.paper_of_module("gen_bounds").key == "gen-bounds"
    with pytest.raises(ValueError, match="unknown paper key 'icl'; known keys: resnet-node"):
        papers.paper("icl")
    with pytest.raises(ValueError, match="experiments module"):
        papers.paper_of_module("icl")
    with pytest.raises(ValueError, match="must be 'a_b'"):
        papers.Paper("a-b", "ab", "t", "s", (), None)
    with pytest.raises(ValueError, match="lower-case words"):
        papers.Paper("A", "A", "t", "s", (), None)


def test_readme_table_of_papers_follows_the_table():
    """The README's "Papers covered" lists the keys in the table's order, each with its kernel subpackages."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Papers covered", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    keys = [row.split("`")[1] for row in rows]
    assert keys == list(papers.PAPER_KEYS)
    for row, p in zip(rows, papers.PAPERS):
        for kernel in p.kernels:
            assert f"`theory.{kernel}`" in row, (p.key, kernel)
