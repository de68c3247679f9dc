"""Tests of theory.report (pure functions) and of the claims plugin, run through pytester."""

import json
import math
from pathlib import Path

import pytest

import theory.pytest_plugin  # noqa: F401  (imported before pytester snapshots sys.modules)
from _check_files import check_file
from theory.claims import ClaimRecord
from theory.report import (
    build_report,
    collect_environment,
    count_statuses,
    load_report,
    render_markdown,
    summary_line,
    write_report,
)

pytest_plugins = ["pytester"]

# Numba's CPU target loads its typing and lowering modules on the first compilation. Where that happens inside a
# pytester run, pytester drops those modules from sys.modules afterwards, and the next run's re-import registers
# their types a second time (KeyError: duplicate registration). Loaded here, they are in pytester's snapshot.
from numba.core.registry import cpu_target  # noqa: E402

cpu_target.typing_context.refresh()
cpu_target.target_context.refresh()

ENV = {"python": "3.11.7", "numpy": "2.4.0", "scipy": "1.17.0", "numba": "0.68.1", "git_commit": None}


def record(claim_id, status="pass", kind="rate", measured=None, expected=None, **kwargs):
    return ClaimRecord(
        id=claim_id,
        paper=claim_id.split("/")[0],
        aliases=kwargs.pop("aliases", ()),
        title=kwargs.pop("title", f"statement of {claim_id}"),
        kind=kind,
        status=status,
        expected={"slope": -1.0, "tol": 0.1} if expected is None else expected,
        measured={"slope": -1.0, "ci": [-1.02, -0.98], "r2": 1.0, "grid": [8, 1024]} if measured is None else measured,
        **kwargs,
    )


def fixed_report(records):
    return build_report(records, generated="2025-01-01T00:00:00+00:00", version="0.1.0", environment=ENV)


# --------------------------------------------------------------------------- pure functions


def test_build_report_sorts_and_keeps_key_order():
    report = fixed_report([record("topk/prop-7.8"), record("resnet-node/prop-3", aliases=("sander-thesis/prop-2.9",))])
    assert list(report) == ["generated", "version", "environment", "claims"]
    assert [c["id"] for c in report["claims"]] == ["resnet-node/prop-3", "topk/prop-7.8"]
    first = report["claims"][0]
    assert list(first)[:10] == ["id", "paper", "aliases", "title", "kind", "status", "expected",
                                "measured", "figure", "seconds"]
    assert first["aliases"] == ["sander-thesis/prop-2.9"]
    json.dumps(report, allow_nan=False)


def test_build_report_nonfinite_becomes_null_with_note():
    report = fixed_report([record("scaling/cor-4", kind="bound", expected={"ratio_max": 1.0},
                                  measured={"ratio": math.nan, "n_instances": 3, "worst": {"L": math.inf}})])
    claim = report["claims"][0]
    assert claim["measured"] == {"ratio": None, "n_instances": 3, "worst": {"L": None}}
    assert claim["notes"] == ["measured.ratio was nan; written as null", "measured.worst.L was inf; written as null"]
    json.dumps(report, allow_nan=False)


def test_build_report_defaults_extra_and_errors():
    report = build_report([record("topk/prop-1")], extra={"pytest_args": ("-m", "slow")})
    from theory import __version__

    assert report["version"] == __version__ and report["generated"].endswith("+00:00")
    assert set(report["environment"]) >= {"python", "numpy", "scipy", "numba", "git_commit"}
    assert report["pytest_args"] == ["-m", "slow"] and list(report)[-1] == "claims"
    with pytest.raises(ValueError, match="duplicate claim IDs \\['topk/prop-1'\\]"):
        build_report([record("topk/prop-1"), record("topk/prop-1")], environment=ENV)
    with pytest.raises(ValueError, match="must not set 'claims'"):
        build_report([], extra={"claims": []}, environment=ENV)
    assert build_report([record("topk/prop-1").as_dict()], environment=ENV)["claims"][0]["id"] == "topk/prop-1"


def test_collect_environment_versions():
    env = collect_environment()
    import numpy

    assert env["numpy"] == numpy.__version__ and env["python"].count(".") == 2


def test_summary_counts():
    report = fixed_report([record("topk/prop-1"), record("topk/prop-2", "fail"), record("topk/prop-3", "skip"),
                           record("topk/prop-4")])
    assert count_statuses(report) == {"pass": 2, "fail": 1, "skip": 1}
    assert summary_line(report) == "4 claims: 2 pass, 1 fail, 1 skip"


def test_proxies_are_counted_and_shown_apart():
    report = fixed_report([record("implicit-reg/prop-5", proxy="m/n <= 8; the proposition needs m >= 4.8e6 n"),
                           record("implicit-reg/prop-2"),
                           record("implicit-reg/prop-8/erratum", kind="erratum", wrong_in="proof")])
    assert summary_line(report).endswith("(1 pass is a proxy outside the hypotheses, verifying nothing)")
    text = render_markdown(report)
    row = next(line for line in text.splitlines() if line.startswith("| `implicit-reg/prop-5` "))
    assert "pass (proxy)" in row
    assert "  - proxy (does not verify the statement): m/n <= 8; the proposition needs m >= 4.8e6 n" in text
    assert "`implicit-reg/prop-8/erratum` (error in the proof)" in text


def test_render_markdown_from_json_alone(tmp_path):
    records = [
        record("resnet-node/prop-3", aliases=("sander-thesis/prop-2.9",), figure="figures/out/resnet-node__prop-3.png",
               title="Euler error | O(1/N)"),
        record("resnet-node/prop-3/erratum", "pass", kind="erratum", expected={"slope": -2.0, "tol": 0.1}),
        record("scaling/cor-4", "fail", kind="bound", expected={"ratio_max": 1.0},
               measured={"ratio": 1.7, "n_instances": 200, "worst": {"L": 64}}, message="max LHS/RHS 1.7"),
        record("icl-ar/thm-2", "skip", kind="frequency", expected={"delta": 0.05}, measured={}, message="slow"),
        record("topk/prop-7.8", kind="identity", expected={"atol": 1e-12},
               measured={"max_abs_err": 1e-16, "max_rel_err": 2e-16, "n_instances": 9}),
        record("momentum/prop-1", kind="qualitative", expected={}, measured={"steps": 200}),
    ]
    report = fixed_report(records)
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(report))
    text = render_markdown(json.loads(path.read_text()), link_base="../")
    lines = text.splitlines()
    assert lines[0] == "# Claims report"
    assert lines[2] == "**6 claims: 4 pass, 1 fail, 1 skip**"
    assert "| Claim | Statement | Predicted | Measured | Verdict | Figure |" in lines
    row = next(line for line in lines if line.startswith("| `resnet-node/prop-3` "))
    assert "(also `sander-thesis/prop-2.9`)" in row and "Euler error \\| O(1/N)" in row
    assert "slope -1.00 ± 0.10" in row and "slope -1.00 [-1.02, -0.98]" in row
    assert "[png](../figures/out/resnet-node__prop-3.png)" in row
    assert "printed: slope -2.00 ± 0.10 (should fail)" in text
    assert "LHS/RHS ≤ 1" in text and "max LHS/RHS 1.7 (200 instances)" in text and "**FAIL**" in text
    assert "P(violation) ≤ 0.05" in text and "abs err ≤ 1e-12" in text and "steps = 200" in text
    assert "- `scaling/cor-4` (fail, bound): max LHS/RHS 1.7" in text and "- `icl-ar/thm-2` (skip, frequency): slow" in text
    assert "| not measured (skipped) |" in text
    assert render_markdown(report) == render_markdown(json.loads(json.dumps(report)))


def test_write_and_load_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = fixed_report([record("topk/prop-1", figure="figures/out/topk__prop-1.png")])
    json_path, md_path = write_report(report, tmp_path / "reports" / "run")
    assert load_report(json_path) == report == load_report(json_path.parent)
    assert "](../../figures/out/topk__prop-1.png)" in md_path.read_text(encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="no claims report"):
        load_report(tmp_path / "missing")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a claims report"):
        load_report(tmp_path / "bad.json")
    (tmp_path / "worse.json").write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_report(tmp_path / "worse.json")


# --------------------------------------------------------------------------- the plugin, via pytester

CHECKS = '''
from pathlib import Path

import numpy as np
import pytest

from theory.claims import erratum_verdict, rate_verdict
from theory.rates import fit_rate

N = np.array([8, 16, 32, 64, 128, 256])


@pytest.mark.claim("resnet-node/prop-3", kind="rate", title="Euler error is O(1/N)",
                   aliases=("sander-thesis/prop-2.9",))
def test_pass(claim):
    Path("fig.png").write_bytes(b"png")
    claim.rate(fit_rate(N, 2.0 / N), {"slope": -1.0, "tol": 0.1}, figure="fig.png")


@pytest.mark.claim("resnet-node/thm-1", kind="rate", title="Heun error is O(1/N^2)")
def test_fail(claim):
    claim.rate(fit_rate(N, 2.0 / N), {"slope": -2.0, "tol": 0.1})


@pytest.mark.claim("scaling/cor-4", kind="bound", title="a bound")
def test_skip(claim):
    pytest.skip("needs the slow marker")


@pytest.mark.claim("topk/prop-7.8", kind="identity", title="an identity")
def test_crash(claim):
    raise RuntimeError("kernel exploded")


@pytest.mark.claim("resnet-node/thm-1/erratum", kind="erratum", title="printed: Heun error is O(1/N^2)")
def test_erratum(claim):
    fit = fit_rate(N, 2.0 / N)
    printed = {"slope": -2.0, "tol": 0.1}
    claim.record(erratum_verdict(rate_verdict(fit, printed), rate_verdict(fit, {"slope": -1.0, "tol": 0.1})))


def test_without_claim():
    pass
'''


@pytest.fixture
def strict_pytester(pytester):
    """A pytester directory configured like the project: strict markers, warnings are errors."""
    pytester.makeini("[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n")
    return pytester


def run(pytester, out, *args):
    # `--claims-report=DIR` in one word: pytest reads the ini and rootdir before it loads the `-p`
    # plugins, and a separate DIR would be taken for a test path there.
    return pytester.runpytest("-p", "theory.pytest_plugin", f"--claims-report={out}", *args)


def test_plugin_writes_statuses_and_measured(strict_pytester, tmp_path):
    strict_pytester.makepyfile(test_checks=CHECKS)
    out = tmp_path / "out"
    result = run(strict_pytester, out)
    result.assert_outcomes(passed=3, failed=2, skipped=1)
    result.stdout.fnmatch_lines(["*claims report: *claims.md (5 claims: 2 pass, 2 fail, 1 skip)*"])
    result.stdout.fnmatch_lines(["*AssertionError: resnet-node/thm-1: slope -1.00 [95% CI*expected -2.00 ± 0.10*"])
    report = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    claims = {c["id"]: c for c in report["claims"]}
    assert list(claims) == sorted(claims)
    assert {i: c["status"] for i, c in claims.items()} == {
        "resnet-node/prop-3": "pass",
        "resnet-node/thm-1": "fail",
        "resnet-node/thm-1/erratum": "pass",
        "scaling/cor-4": "skip",
        "topk/prop-7.8": "fail",
    }
    passed = claims["resnet-node/prop-3"]
    assert passed["paper"] == "resnet-node" and passed["aliases"] == ["sander-thesis/prop-2.9"]
    assert passed["kind"] == "rate" and passed["title"] == "Euler error is O(1/N)"
    assert passed["expected"] == {"slope": -1.0, "tol": 0.1}
    assert passed["measured"]["slope"] == pytest.approx(-1.0) and passed["measured"]["grid"][0] == 8
    assert set(passed["measured"]) == {"slope", "ci", "r2", "grid", "errors", "dropped"}
    assert passed["figure"] == "fig.png" and passed["seconds"] >= 0 and passed["test"].endswith("::test_pass")
    failed = claims["resnet-node/thm-1"]
    assert failed["measured"]["slope"] == pytest.approx(-1.0)  # recorded before the assertion
    assert failed["message"].startswith("slope -1.00 [95% CI") and "expected -2.00 ± 0.10" in failed["message"]
    assert claims["scaling/cor-4"]["message"] == "needs the slow marker"
    crash = claims["topk/prop-7.8"]
    assert crash["measured"] == {} and crash["message"] == "crashed: RuntimeError: kernel exploded"
    erratum = claims["resnet-node/thm-1/erratum"]
    assert erratum["kind"] == "erratum" and erratum["expected"] == {"printed": {"slope": -2.0, "tol": 0.1},
                                                                    "corrected": {"slope": -1.0, "tol": 0.1}}
    assert erratum["message"].startswith("printed statement fails, as documented: slope -1.00")
    md = (out / "claims.md").read_text(encoding="utf-8")
    assert "**5 claims: 2 pass, 2 fail, 1 skip**" in md
    assert "[png](" in md and "fig.png)" in md


FIGURE_SKIPS = '''
import pytest


@pytest.mark.claim("resnet-node/table-1", kind="qualitative", title="Table 1")
def test_table(claim):
    pytest.skip("dataset cifar-10 not found")


@pytest.mark.claim("resnet-node/prop-3", kind="rate", title="not a figure")
def test_other(claim):
    pytest.skip("slow")
'''


def test_a_skipped_figure_claim_reports_its_declared_criterion_as_predicted(strict_pytester, tmp_path):
    from theory.experiments import figure

    strict_pytester.makepyfile(test_fig=FIGURE_SKIPS)
    out = tmp_path / "out"
    run(strict_pytester, out).assert_outcomes(skipped=2)
    claims = {c["id"]: c for c in json.loads((out / "claims.json").read_text(encoding="utf-8"))["claims"]}
    criterion = figure("resnet-node/table-1").criterion
    assert claims["resnet-node/table-1"]["expected"] == {"criterion": criterion}
    assert claims["resnet-node/prop-3"]["expected"] == {}  # no figure: nothing declared to show
    assert f"| {criterion} | not measured (skipped) |" in (out / "claims.md").read_text(encoding="utf-8")


def test_plugin_merges_duplicate_claims(strict_pytester, tmp_path):
    strict_pytester.makepyfile(
        test_dup=check_file('''
        import pytest

        @pytest.mark.claim("scaling/cor-4", kind="bound", title="a bound")
        @pytest.mark.parametrize("lhs", [0.5, 2.0])
        def test_bound(claim, lhs):
            claim.bound(bound_ratio([lhs], [1.0]), {"ratio_max": 1.0})
        ''')
    )
    result = run(strict_pytester, tmp_path)
    result.assert_outcomes(passed=1, failed=1)
    (claim,) = json.loads((tmp_path / "claims.json").read_text())["claims"]
    assert claim["status"] == "fail" and claim["measured"]["ratio"] == 0.5
    assert "merged from 2 tests" in claim["notes"][-1]


@pytest.mark.parametrize(
    "marker, message",
    [
        ('"resnet/prop-3", kind="rate", title="t"', "unknown paper key 'resnet'"),
        ('"resnet-node/prop-3", kind="theorem", title="t"', "unknown kind 'theorem'"),
        ('"resnet-node/prop-3", kind="rate"', "is missing title"),
        ('"resnet-node/prop-3", kind="rate", title="t", tol=1', "unknown keyword 'tol'"),
        ('"resnet-node/prop-3", kind="erratum", title="t"', "kind 'erratum' goes with IDs ending in '/erratum'"),
        ('"resnet-node/prop-3", kind="rate", title="t", proxy=""', "proxy must be a non-empty reason"),
        ('"resnet-node/prop-3", kind="rate", title="t", wrong_in="proof"', "wrong_in is for erratum claims only"),
        ('"resnet-node/prop-3/erratum", kind="erratum", title="t", wrong_in="typo"', "must be one of statement"),
    ],
)
def test_plugin_rejects_bad_markers_naming_the_test(strict_pytester, tmp_path, marker, message):
    strict_pytester.makepyfile(
        test_bad=f'''
        import pytest

        @pytest.mark.claim({marker})
        def test_it(claim):
            pass
        '''
    )
    result = run(strict_pytester, tmp_path)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*UsageError: test_bad.py::test_it: @pytest.mark.claim*{message}*"])


def test_plugin_requires_a_verdict_and_the_marker(strict_pytester, tmp_path):
    strict_pytester.makepyfile(
        test_misuse='''
        import pytest
        from theory.claims import qualitative_verdict

        @pytest.mark.claim("momentum/prop-1", kind="qualitative", title="t")
        def test_no_verdict(claim):
            pass

        @pytest.mark.claim("momentum/prop-2", kind="qualitative", title="t")
        def test_wrong_helper(claim):
            claim.rate(None, {"slope": -1.0, "tol": 0.1})

        def test_fixture_without_marker(claim):
            pass

        @pytest.mark.claim("momentum/prop-3", kind="qualitative", title="t")
        def test_qualitative(claim):
            claim.measured["seed"] = 3  # set by the check beforehand: kept
            claim.record(qualitative_verdict(True, "energy decreases over 10 steps", measured={"steps": 10},
                                             expected={"statement": "energy decreases"}))
        '''
    )
    result = run(strict_pytester, tmp_path)
    result.assert_outcomes(passed=2, failed=1, errors=2)
    result.stdout.fnmatch_lines(["*momentum/prop-1: the check passed without recording a verdict*"])
    result.stdout.fnmatch_lines(["*test_fixture_without_marker uses the `claim` fixture without @pytest.mark.claim*"])
    claims = {c["id"]: c for c in json.loads((tmp_path / "claims.json").read_text())["claims"]}
    assert claims["momentum/prop-1"]["status"] == "fail"
    assert claims["momentum/prop-2"]["status"] == "fail"
    assert "declared with kind='qualitative', but claim.rate() was called" in claims["momentum/prop-2"]["message"]
    assert claims["momentum/prop-3"]["status"] == "pass"
    assert claims["momentum/prop-3"]["expected"] == {"statement": "energy decreases"}
    assert claims["momentum/prop-3"]["measured"] == {"seed": 3, "steps": 10}


def test_plugin_disabled_or_without_claims_writes_nothing(strict_pytester, tmp_path):
    strict_pytester.makepyfile(test_checks=CHECKS)
    result = run(strict_pytester, tmp_path / "off", "--no-claims-report")
    result.assert_outcomes(passed=3, failed=2, skipped=1)
    assert not (tmp_path / "off").exists()
    result = run(strict_pytester, tmp_path / "none", "-k", "without_claim")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*no claim checks ran; nothing written*"])
    assert not (tmp_path / "none").exists()


def test_plugin_default_directory_is_under_rootdir(strict_pytester):
    strict_pytester.makepyfile(test_checks=CHECKS)
    strict_pytester.runpytest("-p", "theory.pytest_plugin", "-k", "pass")
    assert (strict_pytester.path / "reports" / "claims.json").is_file()
    assert (strict_pytester.path / "reports" / "claims.md").is_file()


def test_plugin_notes_nonfinite_measurements(strict_pytester, tmp_path):
    strict_pytester.makepyfile(
        test_nan=check_file('''
        import math
        import pytest

        @pytest.mark.claim("gen-bounds/thm-1", kind="bound", title="a bound whose LHS is NaN")
        def test_nan(claim):
            claim.bound(bound_ratio([0.5, math.nan], [1.0, 1.0]), {"ratio_max": 1.0})
        ''')
    )
    run(strict_pytester, tmp_path).assert_outcomes(failed=1)
    (claim,) = json.loads((tmp_path / "claims.json").read_text())["claims"]
    assert claim["status"] == "fail" and claim["measured"]["ratio"] is None and claim["measured"]["worst"] == 1
    assert claim["notes"] == ["measured ratio is nan (written as null)"]
    assert claim["message"].startswith("max LHS/RHS nan over 2 instances")


def test_plugin_records_proxy_wrong_in_and_both_erratum_halves(strict_pytester, tmp_path):
    strict_pytester.makepyfile(
        test_halves='''
        import numpy as np
        import pytest
        from theory.claims import erratum_verdict, rate_verdict
        from theory.rates import fit_rate

        N = np.array([8, 16, 32, 64, 128])

        @pytest.mark.claim("implicit-reg/prop-5", kind="rate", title="t", proxy="m/n = 8, far below 4.8e6")
        def test_proxy(claim):
            claim.rate(fit_rate(N, 1.0 / N), {"slope": -1.0, "tol": 0.1})

        @pytest.mark.claim("implicit-reg/prop-8/erratum", kind="erratum", title="t", wrong_in="proof")
        def test_both_halves_hold(claim):
            fit = fit_rate(N, 1.0 / N)
            claim.record(erratum_verdict(rate_verdict(fit, {"slope": -2.0, "tol": 0.1}),
                                         rate_verdict(fit, {"slope": -1.0, "tol": 0.1})))

        @pytest.mark.claim("implicit-reg/prop-2/erratum", kind="erratum", title="t")
        def test_one_half_only_is_refused(claim):
            fit = fit_rate(N, 1.0 / N)
            claim.record(erratum_verdict(rate_verdict(fit, {"slope": -2.0, "tol": 0.1})))

        @pytest.mark.claim("implicit-reg/prop-7/erratum", kind="erratum", title="t")
        def test_corrected_half_fails(claim):
            fit = fit_rate(N, 1.0 / N)
            claim.record(erratum_verdict(rate_verdict(fit, {"slope": -2.0, "tol": 0.1}),
                                         rate_verdict(fit, {"slope": -3.0, "tol": 0.1})))
        '''
    )
    run(strict_pytester, tmp_path).assert_outcomes(passed=2, failed=2)
    claims = {c["id"]: c for c in json.loads((tmp_path / "claims.json").read_text())["claims"]}
    assert claims["implicit-reg/prop-2/erratum"]["status"] == "fail"
    assert "asserts both halves" in claims["implicit-reg/prop-2/erratum"]["message"]
    assert claims["implicit-reg/prop-5"]["proxy"] == "m/n = 8, far below 4.8e6"
    assert claims["implicit-reg/prop-8/erratum"]["wrong_in"] == "proof"
    assert claims["implicit-reg/prop-8/erratum"]["status"] == "pass"
    assert "corrected statement holds" in claims["implicit-reg/prop-8/erratum"]["message"]
    assert claims["implicit-reg/prop-7/erratum"]["wrong_in"] == "statement"
    assert claims["implicit-reg/prop-7/erratum"]["status"] == "fail"
    assert "corrected statement FAILS too" in claims["implicit-reg/prop-7/erratum"]["message"]


# --------------------------------------------------------------------------- nothing lost

def _one_claim(claim_id, name):
    """A check file with one bound that holds: claim ``claim_id``, test ``test_<name>``."""
    return check_file(f'''
        import pytest


        @pytest.mark.claim("{claim_id}", kind="bound", title="a bound that holds")
        def test_{name}(claim):
            claim.bound(bound_ratio([0.5], [1.0]), {{"ratio_max": 1.0}})
        ''')


def _many_claims_report(n):
    return fixed_report([record(f"topk/prop-{i}", message="x" * 200) for i in range(1, n + 1)])


def test_write_report_failing_half_way_keeps_the_previous_pair(tmp_path):
    """A write stopped by a file-size limit (as a full disk would) leaves claims.json and claims.md as they
    were, both readable, and no temporary file behind (the old code truncated claims.json in place)."""
    import subprocess
    import sys
    import textwrap

    old = _many_claims_report(2)
    write_report(old, tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in ("claims.json", "claims.md")}
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_report import _many_claims_report
        from theory.report import write_report
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        big = _many_claims_report(200)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_report(big, {str(tmp_path)!r})
        except OSError as exc:
            print("refused:", exc.errno)
            sys.exit(3)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 3, done.stdout + done.stderr
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert load_report(tmp_path) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.json", "claims.md"]


def test_plugin_exits_2_when_the_report_cannot_be_written(strict_pytester, tmp_path):
    strict_pytester.makepyfile(test_one=_one_claim("topk/prop-1", "one"))
    out = tmp_path / "not-a-folder"
    out.write_text("a file where the report folder should be")
    result = run(strict_pytester, out)
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*claims report could not be written to*"])


def test_plugin_moves_an_unreadable_report_aside_and_names_it(strict_pytester, tmp_path):
    strict_pytester.makepyfile(test_one=_one_claim("topk/prop-1", "one"))
    (tmp_path / "claims.json").write_text('{"claims": [{"id": "topk/prop-2", "status": "pass"}', encoding="utf-8")
    result = run(strict_pytester, tmp_path)
    assert result.ret == 0
    aside = sorted(tmp_path.glob("claims.json.unreadable-*"))
    assert len(aside) == 1
    assert aside[0].read_text(encoding="utf-8") == '{"claims": [{"id": "topk/prop-2", "status": "pass"}'
    result.stdout.fnmatch_lines([f"*previous report was unreadable*moved to {aside[0]}*"])
    assert [c["id"] for c in load_report(tmp_path)["claims"]] == ["topk/prop-1"]


def test_two_concurrent_runs_keep_both_records(tmp_path):
    """Two `pytest` runs writing one report, each pausing 1.5 s between reading the old report and writing the
    merged one: both records survive (without the lock, the later writer drops the earlier one's record)."""
    import subprocess
    import sys

    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (tmp_path / "conftest.py").write_text(
        "import time\n"
        "import theory.pytest_plugin as plugin\n"
        "_merge = plugin.merge_with_previous\n"
        "def _slow_merge(*args, **kwargs):\n"
        "    time.sleep(1.5)\n"
        "    return _merge(*args, **kwargs)\n"
        "plugin.merge_with_previous = _slow_merge\n")
    (tmp_path / "test_a.py").write_text(_one_claim("topk/prop-1", "a"))
    (tmp_path / "test_b.py").write_text(_one_claim("topk/prop-2", "b"))
    out = tmp_path / "reports"
    runs = [subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "theory.pytest_plugin",
                              f"--claims-report={out}", f"test_{name}.py"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for name in "ab"]
    outputs = [r.communicate(timeout=120)[0] for r in runs]
    assert [r.returncode for r in runs] == [0, 0], outputs
    assert [c["id"] for c in load_report(out)["claims"]] == ["topk/prop-1", "topk/prop-2"]
    assert "2 claims" in (out / "claims.md").read_text(encoding="utf-8")


def test_proof_chain_section_and_verdict_cell():
    from theory.report import proof_chains, render_markdown
    report = {"claims": [
        {"id": "implicit-reg/thm-6", "status": "pass", "kind": "rate", "proxy": "m << 4.8e6 n", "title": "t",
         "expected": {}, "measured": {}},
        {"id": "implicit-reg/lemma-21", "status": "pass", "kind": "bound", "step_of": ["implicit-reg/thm-6"],
         "title": "t", "expected": {"ratio_max": 1.0}, "measured": {"ratio": 0.5, "n_instances": 3}},
        {"id": "implicit-reg/prop-5", "status": "fail", "kind": "bound", "step_of": ["implicit-reg/thm-6"],
         "title": "t", "expected": {"ratio_max": 1.0}, "measured": {"ratio": 1.5, "n_instances": 3}},
    ]}
    chains = proof_chains(report)
    assert chains["implicit-reg/thm-6"]["passed"] == 1 and chains["implicit-reg/thm-6"]["proxy"]
    text = render_markdown(report)
    assert "## Proof chains" in text and "| `implicit-reg/thm-6` | pass (proxy) | 1 of 2 |" in text
    assert "pass (proxy); proof: 1 of 2 steps pass" in text


def test_plugin_refuses_a_bound_without_its_search(strict_pytester, tmp_path):
    """A bound that records only random instances fails, naming the worst-case search; a proxy may (its
    instances are outside the statement anyway), and a bound with a search passes."""
    strict_pytester.makepyfile(test_checks='''
import pytest
from theory.rates import bound_ratio
from theory.worst_case import Dim, search_worst_case


@pytest.mark.claim("scaling/cor-4", kind="bound", title="sampled only")
def test_sampled(claim):
    claim.record(__import__("theory.claims").claims.bound_verdict(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0}))


@pytest.mark.claim("scaling/cor-8", kind="bound", title="a proxy", proxy="m far below the hypothesis")
def test_proxy(claim):
    claim.record(__import__("theory.claims").claims.bound_verdict(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0}))


@pytest.mark.claim("scaling/prop-1", kind="bound", title="searched")
def test_searched(claim):
    wc = search_worst_case(lambda i: (i["x"] * (1 - i["x"]), 0.25), [Dim("x", 0.0, 1.0)], budget=30)
    claim.record(__import__("theory.claims").claims.bound_verdict(bound_ratio([0.1], [0.25]).with_search(wc),
                                                                  {"ratio_max": 1.0}))
''')
    result = run(strict_pytester, tmp_path / "out")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*scaling/cor-4: a bound records the worst-case search of its hypothesis set*"])


REPRODUCE_CHECKS = '''
import pytest


@pytest.mark.claim("topk/fig-7.2", kind="identity", title="the permutohedra of R^3")
def test_declared(claim):
    result = claim.reproduce()
    assert claim.figure.endswith(".png") and result is not None


@pytest.mark.claim("topk/fig-7.5", kind="qualitative", title="pruning on MNIST")
def test_missing_data(claim):
    claim.reproduce()


@pytest.mark.claim("resnet-node/prop-3", kind="rate", title="no figure declares it")
def test_undeclared(claim):
    claim.reproduce()
'''


def test_claim_reproduce_runs_the_declared_figure(strict_pytester, tmp_path, monkeypatch):
    """claim.reproduce(): the declaring figure's experiment and drawing; a missing dataset skips, naming it; a claim
    no figure declares needs its experiment named."""
    monkeypatch.delenv("THEORY_DATA", raising=False)
    strict_pytester.makepyfile(test_checks=REPRODUCE_CHECKS)
    out = tmp_path / "out"
    result = run(strict_pytester, out, "-rs")
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*dataset mnist*not found*published at*"])
    result.stdout.fnmatch_lines(["*resnet-node/prop-3: no figure declares this claim; name its experiment*"])
    report = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    claims = {c["id"]: c for c in report["claims"]}
    assert claims["topk/fig-7.2"]["status"] == "pass" and claims["topk/fig-7.2"]["measured"]


def test_an_infinite_bound_is_never_the_closest_threshold():
    """``x_max = inf`` (null in the JSON) only asks for a finite value; the report names a finite threshold."""
    from theory.report import decisive

    claim = {"kind": "qualitative", "expected": {"rise_max": None, "count_max": 0, "other_max": math.inf},
             "measured": {"rise": -3.2, "count": 0, "other": 1.0}}
    assert decisive(claim) == ("count 0 (closest of 3 thresholds)", "count ≤ 0")
    claim["measured"]["rise"] = math.nan
    assert decisive(claim)[1] == "rise ≤ n/a"
