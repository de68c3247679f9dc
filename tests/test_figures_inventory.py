"""Every figure and table of a document's inventory is declared, and every declaration is runnable and judged.

The inventory of a paper key is :attr:`theory.papers.Paper.figures` (the document's numbering); a declaration
(:func:`theory.experiments.register_figure`) names the experiment that draws the figure and the claims that
judge it. Held here: each label of an inventory has a declaration; each declaration's experiment exists, has
the ``check`` and ``paper`` presets and measures the declaration's claims, and those claims have checks;
a figure on a dataset takes the data root as its config's ``data`` field and its dataset is declared; a run on
a substitute (for the data, or for the document's model on its data) is a proxy.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from theory import datasets
from theory.experiments import experiment, figures
from theory.papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]
DECLARED_KEYS = [p.key for p in PAPERS if p.figures]


def _check_claims() -> dict[str, dict]:
    """claim ID -> its record as pytest collects checks/ (``--claims-list``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "claims.json"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                               f"--claims-list={out}", "checks"], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode in (0, 5) and out.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
        return {c["id"]: c for c in json.loads(out.read_text())}


@pytest.fixture(scope="module")
def claims():
    return _check_claims()


@pytest.mark.parametrize("key", DECLARED_KEYS)
def test_every_figure_of_the_inventory_is_declared(key):
    paper = next(p for p in PAPERS if p.key == key)
    declared = {f.base for f in figures(key)}
    missing = [label for label in paper.figures if label not in declared]
    assert not missing, f"{key}: figures of the document without a declaration: {missing}"


@pytest.mark.parametrize("key", DECLARED_KEYS)
def test_every_declaration_runs_an_experiment_that_measures_its_claims(key, claims):
    for fig in figures(key):
        if fig.illustration is not None:
            assert not fig.claims and fig.experiment is None
            continue
        exp = experiment(fig.experiment)
        assert {"check", "paper"} <= set(exp.presets), fig.id
        if fig.grid is None:
            stray = [c for c in fig.claims if c not in exp.claims]
            assert not stray, f"{fig.id}: claims its experiment {exp.name} does not measure: {stray}"
        unchecked = [c for c in fig.claims if c not in claims]
        assert not unchecked, f"{fig.id}: claims without a check in checks/: {unchecked}"
        assert callable(fig.draw) and fig.criterion.strip(), fig.id
        if fig.data is not None:
            assert fig.data in datasets.DATASETS, fig.id
            assert "data" in exp.fields, f"{fig.id} needs {fig.data}: its config needs the `data` field"
        if fig.substitute is not None:
            for c in fig.claims:
                assert claims[c].get("proxy"), f"{fig.id} runs on a substitute: its claim {c} must be a proxy"
        for p in fig.printed:
            assert p.value is not None or p.note, f"{fig.id}: {p.name!r} prints no value and says nothing about it"


def test_check_list_names_each_claims_figure_and_the_figures_that_do_not_reproduce(claims):
    done = subprocess.run([sys.executable, "-m", "theory.cli", "check", "--list", "--paper", "momentum"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:-1]}
    assert "momentum fig-4.11" in rows["momentum/fig-4.11"] and " fails " not in rows["momentum/fig-4.11"]
    unreproduced = sorted(c for c, rec in claims.items() if c.startswith("momentum/") and rec.get("not_reproduced"))
    assert unreproduced and all(" fails " in rows[c] for c in unreproduced)
    assert f"{len(unreproduced)} marked 'fails'" in done.stdout.splitlines()[-1]
