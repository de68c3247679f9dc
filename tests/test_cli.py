"""Tests of the `theory` command (theory.cli)."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from _check_files import check_file
from theory.claims import ClaimRecord
from theory.cli import find_root, main
from theory.experiments import Choice, Config, Int, field
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
    assert out.splitlines()[0].startswith("SKIP  topk/prop-3") and "3 claims: 2 pass, 0 fail, 1 skip" in out
    assert main(["report", "--dir", str(tmp_path), "--format", "markdown"]) == 0
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
    assert main(["plots", "a_good"]) == 0 and "1 of 1 figure scripts ran" in capsys.readouterr().out
    assert main(["plots", "nope"]) == 2 and "no figure script nope" in capsys.readouterr().err


def test_plots_touch_the_gallery_only_when_asked(tmp_path, monkeypatch, capsys):
    (tmp_path / "checks").mkdir()
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "fig.py").write_text(textwrap.dedent('''
        """Draw one figure.

        Run time: about 2 s on 2 cores.
        """
        from pathlib import Path
        from theory.plots import to_gallery
        Path("figures/out").mkdir(parents=True, exist_ok=True)
        Path("figures/out/x.png").write_bytes(b"png")
        to_gallery("figures/out/x.png")
    '''))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("THEORY_GALLERY", "1")  # ignored without --gallery
    assert main(["plots"]) == 0 and not (figures / "gallery").exists()
    assert main(["plots", "--gallery"]) == 0 and (figures / "gallery" / "x.png").is_file()
    capsys.readouterr()
    assert main(["plots", "--list"]) == 0
    assert capsys.readouterr().out.split() == ["fig", "about", "2", "s", "Draw", "one", "figure."]


def test_check_runs_pytest_on_checks_and_writes_the_report(tmp_path):
    """`python -m theory.cli check` in a small repository: exit code and report of pytest's run."""
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "conftest.py").write_text('pytest_plugins = ["theory.pytest_plugin"]\n')
    (checks / "test_topk.py").write_text(check_file("""
        import pytest

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
    # cumulative: the subset run replaces topk/prop-1's record and keeps topk/prop-2's
    assert "(2 claims: 1 pass, 1 fail, 0 skip)" in run.stdout
    assert "partial run: 1 of 2 claims measured now" in run.stdout
    assert "PASS  topk/prop-1" in run.stdout


MINI_SETUP = """
[tool:pytest]
addopts = -m "not slow" -p no:cacheprovider
markers =
    slow: heavy
    claim(id, kind, title, aliases=(), proxy=None, wrong_in=None): claim
"""

MINI_CHECKS = check_file("""
import pytest

@pytest.mark.claim("topk/prop-7.2", kind="bound", title="a")
def test_a(claim):
    claim.bound(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0})

@pytest.mark.claim("topk/prop-7.8", kind="bound", title="b")
def test_b(claim):
    claim.bound(bound_ratio([0.25], [1.0]), {"ratio_max": 1.0})

@pytest.mark.slow
@pytest.mark.claim("topk/fig-7.1", kind="bound", title="slow")
def test_slow(claim):
    claim.bound(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0})

@pytest.mark.claim("resnet-node/prop-1", kind="bound", title="c")
def test_c(claim):
    claim.bound(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0})
""")


@pytest.fixture
def mini(tmp_path):
    """A small checkout: setup.cfg deselecting slow checks, three topk claims (one slow), one resnet-node claim."""
    (tmp_path / "setup.cfg").write_text(MINI_SETUP)
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "conftest.py").write_text('pytest_plugins = ["theory.pytest_plugin"]\n')
    (checks / "test_mixed.py").write_text(MINI_CHECKS)

    def run(*args, cwd=tmp_path):
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run([sys.executable, "-m", "theory.cli", *args], cwd=cwd, env=env,
                              capture_output=True, text=True)

    run.root = tmp_path
    return run


def _ids(root):
    return [c["id"] for c in json.loads((root / "reports" / "claims.json").read_text())["claims"]]


def test_check_paper_then_claim_keeps_the_report_whole(mini):
    done = mini("check", "--paper", "topk")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ids(mini.root) == ["topk/prop-7.2", "topk/prop-7.8"]  # the slow one is not named
    done = mini("check", "--claim", "resnet-node/prop-1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ids(mini.root) == ["resnet-node/prop-1", "topk/prop-7.2", "topk/prop-7.8"]
    shown = mini("report")
    assert "partial: 1 of 3 claims measured by the last run" in shown.stdout
    assert all(len(line) <= 100 for line in shown.stdout.splitlines())
    report = json.loads((mini.root / "reports" / "claims.json").read_text())
    assert report["last_run"]["claims"] == ["resnet-node/prop-1"]
    assert all(c["measured_at"] for c in report["claims"])


def test_check_named_slow_claim_runs_and_slow_adds_them(mini):
    done = mini("check", "--claim", "topk/fig-7.1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ids(mini.root) == ["topk/fig-7.1"]
    done = mini("check", "--paper", "topk", "--slow")
    assert "3 passed" in done.stdout, done.stdout


def test_check_unknown_claim_or_paper_exits_2(mini):
    done = mini("check", "--claim", "topk/prop-9.9")
    assert done.returncode == 2 and "no check declares this claim ID" in done.stdout + done.stderr
    done = mini("check", "--paper", "nope")
    assert done.returncode == 2 and "invalid choice" in done.stderr
    done = mini("check", "--claim", "nope/prop-1")
    assert done.returncode == 2 and "unknown paper key" in done.stderr


def test_check_list(mini):
    done = mini("check", "--list", "--paper", "topk")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("3 claims; `theory run CLAIM-ID --set NAME=VALUE` reruns")
    assert any(line.startswith("topk/fig-7.1") and " slow " in line for line in lines)
    assert not (mini.root / "reports").exists()


def test_check_from_a_subfolder_with_relative_paths(mini):
    done = mini("check", "-q", "test_mixed.py::test_b", cwd=mini.root / "checks")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ids(mini.root) == ["topk/prop-7.8"]


def test_pytest_k_matches_claim_ids_and_paper_keys(mini):
    done = mini("check", "-k", "topk/prop-7.8")
    assert "1 passed" in done.stdout and _ids(mini.root) == ["topk/prop-7.8"]
    done = mini("check", "-k", "resnet-node")
    assert "1 passed" in done.stdout


def test_report_drops_records_of_removed_checks(mini):
    assert mini("check").returncode == 0
    source = (mini.root / "checks" / "test_mixed.py").read_text().replace("def test_c(", "def test_renamed(")
    (mini.root / "checks" / "test_mixed.py").write_text(source)
    done = mini("check", "--paper", "topk")
    assert "dropped 1 record(s) whose check no longer exists: resnet-node/prop-1" in done.stdout
    assert "resnet-node/prop-1" not in _ids(mini.root)


def test_report_formats_and_malformed_reports(mini):
    assert mini("check").returncode == 0
    assert json.loads(mini("report", "--format", "json").stdout)["claims"]
    assert mini("report", "--format", "markdown").stdout.startswith("# Claims report")
    path = mini.root / "reports" / "claims.json"
    for bad in ('{"claims": [{"id": "topk/prop-7.2"}]}', "[1, 2, 3]", '{"claims": [3]}', "not json"):
        path.write_text(bad)
        done = mini("report")
        assert done.returncode == 2 and "claims.json" in done.stderr and "Traceback" not in done.stderr, bad


def test_check_help_shows_our_options_first():
    run = subprocess.run([sys.executable, "-m", "theory.cli", "check", "--help"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("usage: theory check")
    assert "--paper KEY" in run.stdout and "--pytest-help" in run.stdout and len(run.stdout.splitlines()) < 40


@pytest.mark.parametrize("command", ["report", "plots"])
def test_module_entry_point_help(command):
    run = subprocess.run([sys.executable, "-m", "theory.cli", command, "--help"], capture_output=True, text=True)
    assert run.returncode == 0 and "usage: theory" in run.stdout


def test_import_theory_gives_its_subpackages_lazily():
    code = ("import sys, theory; assert 'numba' not in sys.modules; "
            "print(theory.isotonic.isotonic_regression([3.0, 1.0])[0].tolist()); "
            "assert 'isotonic' in dir(theory)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[2.0, 2.0]"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        import theory

        theory.nope


def test_plain_pytest_runs_a_slow_check_named_by_node_id(mini):
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "checks/test_mixed.py::test_slow"], cwd=mini.root,
                          env=env, capture_output=True, text=True)
    assert "1 passed" in done.stdout, done.stdout + done.stderr
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "checks/test_mixed.py"], cwd=mini.root,
                          env=env, capture_output=True, text=True)
    assert "3 passed, 1 deselected" in done.stdout, done.stdout + done.stderr


# Malformed claims.json: before, a claim without a status, a claim that is not an object, a claim
# with a field of the wrong form ended in a traceback with exit 1 (which means "a claim failed").
_GOOD = {"id": "topk/prop-1", "paper": "topk", "title": "t", "kind": "bound", "status": "pass",
         "expected": {"ratio_max": 1.0}, "measured": {"ratio": 0.5, "n_instances": 3}}


@pytest.mark.parametrize("content, pattern", [
    ("{not json", r"is not valid JSON"),
    (b"\xff\xfe\x00{", r"is not (UTF-8 text|valid JSON)"),
    ("[1, 2, 3]", r"is not a claims report \(no 'claims' list\)"),
    ('{"claims": [1, 2]}', r"claims\[0\] is int, not a record"),
    ('{"claims": [{"id": "a/b"}]}', r"claims\[0\] has no status"),
    ('{"claims": [{"status": "pass"}]}', r"claims\[0\] has no id"),
    (json.dumps({"claims": [{**_GOOD, "status": "maybe"}]}), r"has status 'maybe'"),
    (json.dumps({"claims": [{**_GOOD, "expected": [1]}]}), r"claims\[0\].expected is list"),
    (json.dumps({"claims": [{**_GOOD, "aliases": "x"}]}), r"claims\[0\].aliases is str"),
    (json.dumps({"claims": [_GOOD], "environment": 3}), r"'environment' is int, not dict"),
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
    assert code == 2, err
    assert str(target) in err and "theory report:" in err
    assert __import__("re").search(pattern, err), err


def test_report_on_a_directory_named_claims_json_exits_2(tmp_path, capsys):
    (tmp_path / "claims.json").mkdir()
    assert main(["report", "--dir", str(tmp_path)]) == 2


def test_bad_arguments_exit_2_without_traceback(capsys):
    for argv in (["report", "--bogus"], ["nonsense"], ["report", "--format", "yaml"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert "Traceback" not in capsys.readouterr().err


def test_report_renders_a_measured_dict_of_an_unexpected_form(tmp_path, capsys):
    # a record whose measured dict has a field of another form: shown as key = value, not a traceback
    content = json.dumps({"claims": [{**_GOOD, "kind": "rate", "measured": {"slope": 1.0, "ci": 5}}]})
    (tmp_path / "claims.json").write_text(content)
    assert main(["report", "--dir", str(tmp_path)]) == 0
    assert "topk/prop-1                          slope 1.00" in capsys.readouterr().out


# Exit codes of `theory run` and `theory report` for bad input or environment. Before: a size far
# beyond the guards (`--set depth=1000000000000`) and a size refused by a kernel's guard ended in a
# traceback with exit 1 (which means "a claim failed"), --json onto a folder or into a missing folder
# failed only after the whole run, a tuple range of 10**12 values tried to allocate 7 TiB, and a
# report nested too deeply to render raised RecursionError.


def _one_line_exit_2(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    return captured


def test_run_refuses_a_count_beyond_the_guards_before_running(capsys):
    err = _one_line_exit_2(["run", "scaling.fig7_cell", "--set", "depth=1000000000000"], capsys).err
    assert "`depth` of scaling.fig7_cell = 1000000000000 is above 2147483648" in err
    err = _one_line_exit_2(["run", "scaling.fig7_grid", "--set", "beta=0.2:1.3:1000000000000"], capsys).err
    assert "`beta`: the count of the range '0.2:1.3:1000000000000' must be at most 1000000" in err


def test_run_reports_a_kernel_guard_refusal_in_one_line(capsys):
    # below the count limit, refused by theory.scaling.phase.phase_diagram's memory guard at its door
    captured = _one_line_exit_2(["run", "scaling.fig7_cell", "--set", "depth=1000000000"], capsys)
    assert "scaling.fig7_cell is refused at these sizes: `L` of theory.scaling.phase.phase_diagram" in captured.err
    assert "theory._validation.MAX_BYTES" in captured.err and captured.out == ""


@dataclasses.dataclass(frozen=True)
class _SizeConfig(Config):
    """A toy whose kernel refuses its size, or fails."""

    mode: str = field(Choice("guard", "work", "numpy", "memory", "bug"), "guard", "How the kernel ends.")
    n: int = field(Int(low=1), 1, "A size.")


def _size_measure(config):
    from theory._validation import check_memory, check_work

    def kernel():
        if config.mode == "guard":
            check_memory(8 * 10**12, "n", config.n, func="a.kernel")
        if config.mode == "work":
            try:
                check_work(10**15, "n", config.n, func="a.kernel")
            except ValueError as exc:
                raise ValueError(f"stage 2: {exc}") from exc
        if config.mode == "numpy":
            np.empty((10**10, 10**10))
        if config.mode == "memory":
            raise MemoryError
        if config.mode == "bug":
            raise ValueError("a bug, not a size")
        return config.n

    return kernel()


def test_run_size_refusals_exit_2_and_other_errors_still_raise(capsys):
    from theory.experiments import register

    register("scaling.cli_size_toy", config=_SizeConfig, presets={"check": _SizeConfig(), "paper": _SizeConfig()},
             measure=_size_measure)
    for mode, words in (("guard", "`n` of a.kernel = 1 needs 7.3 TiB of memory"),
                        ("work", "stage 2: `n` of a.kernel = 1 needs about 1e+15 floating-point operations"),
                        ("numpy", "array is too big"), ("memory", "ran out of memory")):
        err = _one_line_exit_2(["run", "scaling.cli_size_toy", "--set", f"mode={mode}"], capsys).err
        assert words in err, (mode, err)
    with pytest.raises(ValueError, match="a bug, not a size"):
        main(["run", "scaling.cli_size_toy", "--set", "mode=bug"])


def test_run_json_output_is_checked_before_running_and_written_atomically(tmp_path, capsys, monkeypatch):
    import _sweep_toy  # noqa: F401  (registers scaling.sweep_toy)

    (tmp_path / "folder").mkdir()
    for target, words in ((tmp_path / "folder", "--json"), (tmp_path / "missing" / "x.json", "does not exist")):
        captured = _one_line_exit_2(["run", "scaling.sweep_toy", "--json", str(target)], capsys)
        assert words in captured.err and str(target) in captured.err
        assert captured.out == ""                                    # refused before the run
    out = tmp_path / "run.json"
    assert main(["run", "scaling.sweep_toy", "--set", "x=2", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["experiment"] == "scaling.sweep_toy" and data["summary"]["x2"] == 4.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "run.json"]     # no temporary file left
    capsys.readouterr()

    def full(path, data, **kw):
        raise OSError(28, "No space left on device")

    import theory._files

    monkeypatch.setattr(theory._files, "write_atomic", full)
    code = main(["run", "scaling.sweep_toy", "--set", "x=3", "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "could not be written (No space left on device)" in err and "Traceback" not in err
    assert json.loads(out.read_text())["summary"]["x2"] == 4.0      # the previous file is intact


@pytest.mark.parametrize("depth", [900, 100000])
@pytest.mark.parametrize("options", [[], ["--quiet"], ["--format", "markdown"], ["--format", "json"]])
def test_report_nested_too_deeply_exits_2_in_one_line(tmp_path, capsys, depth, options):
    nested = "{\"a\": " * depth + "1" + "}" * depth
    (tmp_path / "claims.json").write_text('{"claims": [{"id": "topk/prop-1", "paper": "topk", "kind": "bound", '
                                          f'"status": "pass", "expected": {{}}, "measured": {nested}}}]}}')
    code = main(["report", "--dir", str(tmp_path), *options])
    captured = capsys.readouterr()
    if code == 0:   # --quiet does not show the measured values; the JSON format prints them as they are
        assert options in (["--quiet"], ["--format", "json"]) and depth == 900
        return
    assert code == 2 and captured.err.count("\n") == 1 and "nested too deeply" in captured.err
    assert str(tmp_path / "claims.json") in captured.err


def test_version_and_help_texts_explain_themselves(capsys):
    import argparse

    from theory import __version__
    from theory.cli import _parser

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"theory {__version__}"

    def walk(parser, path):
        text = parser.format_help()
        assert "``" not in text and ":func:" not in text and ":class:" not in text, (path, text)
        assert parser.description, f"`theory {' '.join(path)}` has no description"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, path + [name])

    walk(_parser(), [])


def test_a_claim_id_typo_is_refused_before_collecting_the_checks(capsys):
    import time

    start = time.perf_counter()
    assert main(["check", "--claim", "topk/prop-7.88"]) == 2
    err = capsys.readouterr().err
    assert "no check declares this claim ID" in err and "did you mean topk/prop-7.8" in err
    assert time.perf_counter() - start < 10


def test_check_jobs_splits_the_files_and_merges_one_report(mini):
    (mini.root / "checks" / "test_other.py").write_text(check_file("""
        import pytest

        @pytest.mark.claim("scaling/prop-1", kind="bound", title="holds")
        def test_d(claim):
            claim.bound(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0})

        @pytest.mark.claim("scaling/prop-2", kind="bound", title="fails")
        def test_e(claim):
            claim.bound(bound_ratio([1.5], [1.0]), {"ratio_max": 1.0})
    """))
    done = mini("check", "--jobs", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "theory check: 2 processes" in done.stdout
    assert "FAILED checks/test_other.py::test_e" in done.stdout
    assert "(5 claims: 4 pass, 1 fail, 0 skip)" in done.stdout
    report = json.loads((mini.root / "reports" / "claims.json").read_text())
    assert sorted(report["last_run"]["claims"]) == _ids(mini.root)  # one run, both groups' records
    assert {c["id"]: c["status"] for c in report["claims"]}["scaling/prop-2"] == "fail"
    assert (mini.root / "reports" / "logs" / "check-1.log").is_file()
    # a selection runs only the files holding it, and keeps the others' records
    done = mini("check", "--jobs", "2", "--paper", "topk")
    assert done.returncode == 0 and "1 process," in done.stdout, done.stdout + done.stderr
    assert "partial run: 2 of 5 claims measured now" in done.stdout
    done = mini("check", "--jobs", "0")
    assert done.returncode == 2 and "--jobs must be a positive integer or 'auto'; got '0'" in done.stderr


def test_split_files_balances_the_durations():
    from theory._check_pool import split_files

    files = [Path(f"test_{c}.py") for c in "abcdef"]
    durations = dict(zip(files, [10.0, 9.0, 4.0, 3.0, 2.0, 1.0]))
    groups = split_files(files, durations, 2)
    loads = sorted(sum(durations[f] for f in g) for g in groups)
    assert loads == [14.0, 15.0] and sorted(f for g in groups for f in g) == files
    assert split_files(files, {}, 4) == [[files[0], files[4]], [files[1], files[5]], [files[2]], [files[3]]]
    assert split_files(files[:1], durations, 3) == [[files[0]]]
    with pytest.raises(ValueError, match="`jobs` must be at least 1"):
        split_files(files, durations, 0)
