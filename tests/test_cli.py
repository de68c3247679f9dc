"""Tests of the `theory` command (theory.cli)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from theory.claims import ClaimRecord
from theory.cli import find_root, main
from theory.report import build_report, write_report


def write_fake_report(directory, statuses):
    records = [
        ClaimRecord(f"topk/prop-{i}", "topk", (), f"statement {i}", "bound", status,
                    {"ratio_max": 1.0}, {"ratio": 0.5 if status == "pass" else 1.5, "n_instances": 10},
                    message=f"message {i}")
        for i, status in enumerate(statuses, start=1)
    ]
    report = build_report(records, generated="2025-01-01T00:00:00+00:00", version="0.1.0", environment={})
    write_report(report, directory, root=directory)


def test_report_pass_only_exits_0(tmp_path, capsys):
    write_fake_report(tmp_path, ["pass", "pass", "skip"])
    assert main(["report", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Claims report") and "**3 claims: 2 pass, 0 fail, 1 skip**" in out


def test_report_with_a_fail_exits_1_and_quiet_lists_it(tmp_path, capsys):
    write_fake_report(tmp_path, ["pass", "fail"])
    assert main(["report", "--dir", str(tmp_path), "--quiet"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("2 claims: 1 pass, 1 fail, 0 skip")
    assert lines[1:] == ["FAIL topk/prop-2: message 2"]


def test_report_missing_exits_2_with_advice(tmp_path, capsys):
    assert main(["report", "--dir", str(tmp_path / "nothing")]) == 2
    assert "run `theory check` first" in capsys.readouterr().err
    (tmp_path / "claims.json").write_text("[]")
    assert main(["report", "--dir", str(tmp_path)]) == 2


def test_report_default_dir_is_under_the_repository_root(tmp_path, monkeypatch, capsys):
    (tmp_path / "checks").mkdir()
    (tmp_path / "sub").mkdir()
    write_fake_report(tmp_path / "reports", ["pass"])
    monkeypatch.chdir(tmp_path / "sub")
    assert find_root() == tmp_path
    assert main(["report", "--quiet"]) == 0
    assert "1 claim: 1 pass" in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "check" in capsys.readouterr().out


def test_check_outside_a_repository(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    assert "no checks/ directory" in capsys.readouterr().err


def test_plots_runs_every_script_and_reports(tmp_path, monkeypatch, capsys):
    (tmp_path / "checks").mkdir()
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "a_good.py").write_text(textwrap.dedent("""
        import os
        from pathlib import Path
        assert os.environ["MPLBACKEND"] == "Agg"
        Path("figures/out").mkdir(parents=True, exist_ok=True)
        Path("figures/out/topk__prop-1.png").write_bytes(b"png")
    """))
    monkeypatch.chdir(figures)
    assert main(["plots"]) == 0
    out = capsys.readouterr().out
    assert "figures/a_good.py: wrote figures/out/topk__prop-1.png" in out
    (figures / "b_bad.py").write_text("raise SystemExit(3)\n")
    assert main(["plots"]) == 1
    assert "figures/b_bad.py: FAILED (exit code 3)" in capsys.readouterr().out


def test_check_runs_pytest_on_checks_and_writes_the_report(tmp_path):
    """`python -m theory.cli check` in a small repository: exit code and report of pytest's run."""
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "conftest.py").write_text('pytest_plugins = ["theory.pytest_plugin"]\n')
    (checks / "test_topk.py").write_text(textwrap.dedent("""
        import pytest
        from theory.rates import bound_ratio

        @pytest.mark.claim("topk/prop-1", kind="bound", title="a bound that holds")
        def test_holds(claim):
            claim.bound(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0})

        @pytest.mark.claim("topk/prop-2", kind="bound", title="a bound that fails")
        def test_fails(claim):
            claim.bound(bound_ratio([1.5], [1.0]), {"ratio_max": 1.0})
    """))
    (tmp_path / "sub").mkdir()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "theory.cli", "check", "-p", "no:cacheprovider", "-q"],
                         cwd=tmp_path / "sub", env=env, capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "claims report:" in run.stdout and "(2 claims: 1 pass, 1 fail, 0 skip)" in run.stdout
    report = json.loads((tmp_path / "reports" / "claims.json").read_text())
    assert [(c["id"], c["status"]) for c in report["claims"]] == [("topk/prop-1", "pass"), ("topk/prop-2", "fail")]
    run = subprocess.run([sys.executable, "-m", "theory.cli", "check", "-p", "no:cacheprovider", "-q",
                          "checks/test_topk.py::test_holds"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "(1 claim: 1 pass, 0 fail, 0 skip)" in run.stdout


@pytest.mark.parametrize("command", ["report", "plots"])
def test_module_entry_point_help(command):
    run = subprocess.run([sys.executable, "-m", "theory.cli", command, "--help"], capture_output=True, text=True)
    assert run.returncode == 0 and "usage: theory" in run.stdout


# Malformed claims.json: before, a claim without a status, a claim that is not an object, a claim
# with a field of the wrong form ended in a traceback with exit 1 (which means "a claim failed").
_GOOD = {"id": "topk/prop-1", "paper": "topk", "title": "t", "kind": "bound", "status": "pass",
         "expected": {"ratio_max": 1.0}, "measured": {"ratio": 0.5, "n_instances": 3}}


@pytest.mark.parametrize("content, pattern", [
    ("{not json", r"is not valid JSON"),
    (b"\xff\xfe\x00{", r"is not (UTF-8 text|valid JSON)"),
    ("[1, 2, 3]", r"is not a claims report \(no 'claims' list\)"),
    ('{"claims": [1, 2]}', r"claim 0 is not an object; got int"),
    ('{"claims": [{"id": "a/b"}]}', r"claim 0 \(a/b\) has status None"),
    ('{"claims": [{"status": "pass"}]}', r"claim 0 has no string 'id'"),
    (json.dumps({"claims": [{**_GOOD, "status": "maybe"}]}), r"has status 'maybe'"),
    (json.dumps({"claims": [{**_GOOD, "expected": [1]}]}), r"'expected' must be an object"),
    (json.dumps({"claims": [{**_GOOD, "aliases": "x"}]}), r"'aliases' and 'notes' must be lists"),
    (json.dumps({"claims": [_GOOD], "environment": 3}), r"'environment' must be an object"),
    # well-formed records whose measured dict lacks a field the table reads: caught when rendering
    (json.dumps({"claims": [{**_GOOD, "kind": "rate", "measured": {"slope": 1.0, "ci": 5}}]}),
     r"is malformed \(TypeError"),
])
@pytest.mark.parametrize("quiet", [False, True])
def test_report_on_a_malformed_file_exits_2_naming_the_file(tmp_path, capsys, content, pattern, quiet):
    target = tmp_path / "claims.json"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    code = main(["report", "--dir", str(tmp_path)] + (["--quiet"] if quiet else []))
    err = capsys.readouterr().err
    if quiet and "malformed" in pattern:  # --quiet reads only id, status, message: nothing to catch
        assert code == 0
        return
    assert code == 2, err
    assert str(target) in err and "theory report:" in err
    assert __import__("re").search(pattern, err), err


def test_report_on_a_directory_named_claims_json_exits_2(tmp_path, capsys):
    (tmp_path / "claims.json").mkdir()
    assert main(["report", "--dir", str(tmp_path)]) == 2


def test_bad_arguments_exit_2_without_traceback(capsys):
    for argv in (["report", "--bogus"], ["nonsense"], ["plots", "extra"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert "Traceback" not in capsys.readouterr().err
