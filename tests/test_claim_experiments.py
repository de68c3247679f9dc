"""From a claim to the experiment that measures it: every claim of checks/ has one registered experiment, every
registered claim has a check, and ``theory run CLAIM-ID`` reruns it and prints the verdict the check records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from theory.experiments import experiment_of, experiments, experiment
from theory.papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]


def _check_claims() -> dict[str, bool]:
    """claim ID -> whether its check is marked slow, as pytest collects checks/ (``--claims-list``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "claims.json"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                               f"--claims-list={out}", "checks"], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode in (0, 5) and out.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
        return {c["id"]: c["slow"] for c in json.loads(out.read_text())}


CLAIMS = _check_claims()


def test_every_claim_has_an_experiment_and_every_registered_claim_a_check():
    registered = {}
    for name in experiments():
        for claim_id in experiment(name).claims:
            registered.setdefault(claim_id, []).append(name)
    assert len(CLAIMS) > 250
    missing = sorted(set(CLAIMS) - set(registered))
    assert not missing, f"claims of checks/ that no experiment lists: {missing}"
    stray = sorted(c for c in set(registered) - set(CLAIMS) if not c.startswith(("scaling/sweep", "topk/prop-7.2")))
    assert not stray, f"claims registered by an experiment but checked nowhere: {stray}"
    several = {c: v for c, v in registered.items() if len(v) > 1}
    assert not several, f"claims with several experiments: {several}"
    for claim_id in CLAIMS:
        exp = experiment_of(claim_id)
        assert exp.verdict_for(claim_id) is not None, claim_id


def test_a_typo_in_a_claim_id_is_named_with_its_neighbours():
    with pytest.raises(ValueError, match="did you mean sinkformers/prop-5.1"):
        experiment_of("sinkformers/prop-5.11")


def _records_of(paper: str, tmp_path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--paper", paper,
                           f"--claims-report={tmp_path}", "checks"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return {c["id"]: c for c in json.loads((tmp_path / "claims.json").read_text())["claims"]}


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) <= set(b) and all(_close(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("paper", [p.key for p in PAPERS])
def test_rerunning_a_claims_experiment_gives_the_checks_record(paper, tmp_path):
    """``theory run CLAIM-ID`` at the check preset reproduces the report's record: status, kind, predicted and
    measured numbers (the record may carry more numbers than the verdict)."""
    from theory.rates import to_plain

    records = _records_of(paper, tmp_path)
    mine = [c for c, slow in CLAIMS.items() if c.startswith(paper + "/") and not slow]
    assert mine and not set(mine) - set(records), sorted(set(mine) - set(records))
    mismatched = []
    for claim_id in mine:
        exp = experiment_of(claim_id)
        verdict = exp.verdict_for(claim_id)(exp.run("check"))
        record = records[claim_id]
        same = (verdict.status == record["status"] and verdict.kind == record["kind"]
                and to_plain(verdict.expected) == record["expected"]
                and _close(to_plain(verdict.measured), record["measured"]))
        if not same:
            mismatched.append(claim_id)
    assert not mismatched, mismatched
