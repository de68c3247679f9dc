"""theory reproduce: a declared figure run through the sweep cache, judged, drawn and tabled beside the document.

The figures here are declared by the tests on one quick experiment (``momentum.lambda_table``, the erratum of
Fig. 4.4's caption), under qualified labels of the inventory (``fig-4.4/test...``) so that the key's own
declarations are untouched.
"""

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from theory import datasets
from theory.cli import main
from theory.claims import Verdict
from theory.experiments import Figure, Printed, _figures, register_figure
from theory.papers import paper
from theory.reproduce import ReproduceInputError, reproduce, select_figures

CLAIM = "momentum/fig-4.4/erratum"


def _draw(result):
    from theory.experiments.momentum import lambda_figure

    return lambda_figure(result, CLAIM)


@pytest.fixture
def declared(monkeypatch):
    """Register test figures into a copy of the registry, restored afterwards."""
    from theory.experiments import figures

    figures()  # every key's declarations in the registry first, so that the copy holds them and the original keeps them
    monkeypatch.setattr(_figures, "_FIGURES", dict(_figures._FIGURES))

    def declare(label, **fields):
        base = dict(claims=(CLAIM,), experiment="momentum.lambda_table", draw=_draw,
                    criterion="the printed caption fails and the corrected bounds hold")
        base.update(fields)
        return register_figure("momentum", label, f"test figure {label}", **base)

    return declare


def _printed():
    return (Printed("lambda_2 gap to -1", 0.1, "caption of Fig. 4.4 (read as 'close')", measured="printed.gap_from_eps"),
            Printed("a number this run does not measure", 3.0, "nowhere", measured="absent_key"),
            Printed("eps from which lambda_eps is close to -1", 2.0, "caption of Fig. 4.4", measured="config.from_eps"))


def test_a_figure_is_run_judged_drawn_and_tabled(declared, tmp_path):
    fig = declared("fig-4.4/testa", printed=_printed())
    out, cache = tmp_path / "out", tmp_path / "cache"
    (r,) = reproduce("momentum", ["fig-4.4/testa"], out=out, cache=cache, scheduler="serial")
    assert r.status == "pass" and r.figure is fig and r.computed == 1 and r.cached == 0
    assert set(r.verdicts) == {CLAIM} and r.verdicts[CLAIM].passed
    # the measured number travels from the verdict to the table as a number, beside the printed one
    gap = r.verdicts[CLAIM].parts[0].measured["gap_from_eps"]
    assert r.rows[0]["printed"] == 0.1 and r.rows[0]["measured"] == gap and 0.2 < gap < 0.25
    assert r.rows[1]["measured"] is None and "not measured" in r.rows[1]["note"]
    assert r.rows[2]["measured"] == 2.0  # a setting the document prints, beside the one the run used
    folder = out / "momentum"
    assert r.png == folder / "fig-4.4__testa.png" and r.png.stat().st_size > 1000
    rec = json.loads((folder / "fig-4.4__testa.json").read_text())
    assert rec["status"] == "pass" and rec["verdicts"][CLAIM]["status"] == "pass" and rec["machine"]
    assert rec["rows"][0]["measured"] == gap
    table = (folder / "fig-4.4__testa.md").read_text()
    assert "| lambda_2 gap to -1 | caption of Fig. 4.4" in table and "theory reproduce momentum fig-4.4/testa" in table
    index = (folder / "README.md").read_text()
    assert "[fig-4.4/testa](fig-4.4__testa.md)" in index
    for label in paper("momentum").figures:  # every figure of the inventory has its row, run or not
        assert f"| {label} |" in index or f"[{label}]" in index or f"[{label}/" in index, label
    assert "[momentum](momentum/README.md)" in (out / "README.md").read_text()
    assert not list(folder.glob(".png-*")) and not list(folder.glob(".draw-*"))  # no staged file left
    # the second run reads the task from the cache and redraws
    (again,) = reproduce("momentum", ["fig-4.4/testa"], out=out, cache=cache, scheduler="serial")
    assert (again.computed, again.cached, again.status) == (0, 1, "pass")
    assert again.seconds == r.seconds  # the compute time recorded when the task ran


def test_the_paper_preset_is_run_at_its_own_sizes(declared, tmp_path):
    declared("fig-4.4/testb")
    (r,) = reproduce("momentum", ["fig-4.4/testb"], preset="paper", out=tmp_path, cache=tmp_path / "c",
                     scheduler="serial")
    assert r.status == "pass" and len(r.verdicts[CLAIM].parts[1].measured) >= 2
    assert json.loads(r.record.read_text())["preset"] == "paper"


def test_a_failing_figure_fails_and_the_command_exits_1(declared, tmp_path, monkeypatch, capsys):
    failing = Verdict("fail", "the figure does not reproduce", kind="qualitative")
    declared("fig-4.4/testc", grid={"closeness": (0.1, 0.2)}, verdict=lambda res: failing,
             draw=lambda res: _draw(res.result(1)))  # a grid figure draws from the sweep
    (r,) = reproduce("momentum", ["fig-4.4/testc"], out=tmp_path, cache=tmp_path / "c", scheduler="serial")
    assert r.status == "fail" and r.computed == 2
    monkeypatch.chdir(tmp_path)
    code = main(["reproduce", "momentum", "fig-4.4/testc", "--out", str(tmp_path / "o"), "--scheduler", "serial"])
    assert code == 1 and "fail" in capsys.readouterr().out


def test_a_figure_without_its_dataset_is_skipped_naming_it(declared, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    monkeypatch.setitem(datasets.DATASETS, "test-set", datasets.Dataset(
        "test-set", "a test dataset", "test-set", ("part-1.bin",), "https://example.org/test-set", loader=lambda folder: folder))
    declared("fig-4.4/testd", data="test-set")
    (r,) = reproduce("momentum", ["fig-4.4/testd"], out=tmp_path, cache=tmp_path / "c", scheduler="serial")
    assert r.status == "skip" and "test-set" in r.message and "https://example.org/test-set" in r.message
    assert r.png is None and json.loads(r.record.read_text())["status"] == "skip"
    # named on the command line, a figure that cannot run is an environment error (2)
    assert main(["reproduce", "momentum", "fig-4.4/testd", "--out", str(tmp_path), "--data", str(tmp_path)]) == 2
    assert "not found under" in capsys.readouterr().out


def test_an_illustration_is_listed_without_a_run(declared, tmp_path):
    register_figure("momentum", "fig-4.3/test", "a diagram", illustration="the four paradigms as boxes")
    (r,) = reproduce("momentum", ["fig-4.3/test"], out=tmp_path)
    assert r.status == "illustration" and r.verdicts == {} and r.png is None


def test_bad_input_is_refused_before_anything_runs(declared, tmp_path, capsys):
    declared("fig-4.4/teste")
    with pytest.raises(ReproduceInputError, match="no figure 'fig-9.9'"):
        select_figures("momentum", ["fig-9.9"])
    with pytest.raises(ReproduceInputError, match="unknown paper key"):
        select_figures("moment", [])
    with pytest.raises(ReproduceInputError, match="no preset 'huge'"):
        reproduce("momentum", ["fig-4.4/teste"], preset="huge", out=tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ReproduceInputError, match="not writable"):
        reproduce("momentum", ["fig-4.4/teste"], out=blocker)
    assert main(["reproduce"]) == 2
    assert main(["reproduce", "momentum", "fig-9.9"]) == 2
    assert "no figure" in capsys.readouterr().err


def test_labels_select_their_qualified_runs(declared):
    a = declared("fig-4.4/testf")
    chosen = select_figures("momentum", ["momentum/fig-4.4/testf"])
    assert chosen == [a]
    assert select_figures("momentum", ["fig-4.4"]) == [f for f in _figures._FIGURES.values() if f.label == "fig-4.4"]
    assert a not in select_figures("momentum", ["fig-4.4"])  # the exact label, not its qualified runs


def test_declarations_are_checked():
    with pytest.raises(ValueError, match="not in the inventory"):
        Figure("momentum", "fig-4.99", "x", illustration="y")
    with pytest.raises(ValueError, match="needs `claims`"):
        Figure("momentum", "fig-4.5", "x")
    with pytest.raises(ValueError, match="criterion"):
        Figure("momentum", "fig-4.5", "x", claims=("momentum/fig-4.5",), experiment="momentum.psi", draw=print)
    with pytest.raises(ValueError, match="another paper key"):
        Figure("momentum", "fig-4.5", "x", claims=("topk/fig-7.1",), experiment="momentum.psi", draw=print,
               criterion="c")
    with pytest.raises(ValueError, match="one of"):
        Figure("momentum", "fig-4.5", "x", claims=("momentum/fig-4.5",), experiment="momentum.psi", draw=print,
               criterion="c", data="cifar-11")
    with pytest.raises(ValueError, match="grid of tasks"):
        Figure("momentum", "fig-4.5", "x", claims=("momentum/fig-4.5",), experiment="momentum.psi", draw=print,
               criterion="c", grid={"d": (2,)})
    with pytest.raises(TypeError, match="a number or None"):
        Printed("accuracy", "99 %", "Table 4.2")
    assert Figure("momentum", "table-4.2", "t", illustration="i").number == "Table 4.2"
    assert Figure("resnet-node", "fig-3a/digits", "t", illustration="i").number == "Fig. 3(a)"


def test_an_experiment_whose_summary_is_a_lambda_runs_on_the_process_pool(tmp_path):
    """A lambda cannot be pickled to a worker: the sweep sends the experiment's name, the worker looks it up."""
    import pickle

    from theory.experiments import experiment
    from theory.sweep import sweep

    exp = experiment("momentum.lambda_table")
    with pytest.raises(Exception):
        pickle.dumps(exp.summary)  # the premise: this summary is a lambda
    res = sweep(exp.name, {"closeness": [0.1, 0.2]}, workers=2, out=tmp_path)
    assert not res.failures and res.computed == 2
    serial = sweep(exp.name, {"closeness": [0.1, 0.2]}, scheduler="serial", out=tmp_path / "serial")
    assert res.summaries == serial.summaries


def test_settings_change_the_fields_of_the_experiments_that_have_them(declared, tmp_path, capsys):
    """--set NAME=VALUE (and --backend, --device) change a field of the figures' experiments, parsed by its
    declaration; the record names the change and its rerun command; a name no experiment has is refused."""
    from theory.experiments import experiment

    declared("fig-4.4/testf")
    name = next(n for n in experiment("momentum.lambda_table").fields if n == "closeness")
    (r,) = reproduce("momentum", ["fig-4.4/testf"], out=tmp_path, cache=tmp_path / "c", scheduler="serial",
                     settings={name: "0.2"})
    rec = json.loads(r.record.read_text())
    assert rec["settings"] == {name: 0.2} and f"--set {name}=0.2" in rec["command"]
    assert f"changed from the preset: {name} = 0.2" in (tmp_path / "momentum" / "fig-4.4__testf.md").read_text()
    with pytest.raises(ReproduceInputError, match="no experiment of the chosen figures has"):
        reproduce("momentum", ["fig-4.4/testf"], out=tmp_path, settings={"nonsense": "1"})
    with pytest.raises(ReproduceInputError, match=f"--set {name}=abc"):
        reproduce("momentum", ["fig-4.4/testf"], out=tmp_path, settings={name: "abc"})
    assert main(["reproduce", "momentum", "fig-4.4/testf", "--set", "nonsense", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "momentum", "fig-4.4/testf", "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "no experiment of the chosen figures has" in capsys.readouterr().err


def test_the_index_lists_what_was_not_run_at_the_paper_preset_with_its_command(declared, tmp_path):
    declared("fig-4.4/testg", preset_note="about 3 h on one core.")
    reproduce("momentum", ["fig-4.4/testg"], out=tmp_path, cache=tmp_path / "c", scheduler="serial")
    index = (tmp_path / "momentum" / "README.md").read_text()
    assert "## Not run at the paper preset here" in index
    assert ("- **fig-4.4/testg** (recorded at preset check): about 3 h on one core. "
            "`theory reproduce momentum fig-4.4/testg --preset paper`") in index
    assert "`theory reproduce momentum fig-4.2 --preset paper" in index   # never run here: listed with its command


def test_a_cuda_device_where_none_is_visible_is_refused_before_anything_runs(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible here")
    assert main(["reproduce", "momentum", "fig-4.5", "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "no CUDA device is visible" in capsys.readouterr().err
    assert not list((tmp_path / "momentum").glob("*.json"))


def test_the_summary_line_and_the_index_show_the_criterion_figures_failing_first(declared, tmp_path, monkeypatch,
                                                                                  capsys):
    from theory.claims import threshold_verdict

    verdict = threshold_verdict("qualitative", {"acc_momentum": 0.935, "acc_resnet": 0.846},
                                {"acc_resnet_max": 0.9, "acc_momentum_min": 0.99})
    declared("fig-4.4/testh", verdict=lambda res: verdict, grid={"closeness": (0.1,)},
             draw=lambda res: _draw(res.result(0)), printed=_printed())
    monkeypatch.chdir(tmp_path)
    code = main(["reproduce", "momentum", "fig-4.4/testh", "--out", "o", "--scheduler", "serial"])
    line = [x for x in capsys.readouterr().out.splitlines() if "fig-4.4/testh" in x and x.startswith("fail")][0]
    assert code == 1
    # the term that fails comes first, with its bound; not the first printed row (a setting echoed)
    assert "acc_momentum 0.935 (criterion ≥ 0.99); acc_resnet 0.846 (criterion ≤ 0.9)" in line, line
    index = (tmp_path / "o" / "momentum" / "README.md").read_text()
    row = [x for x in index.splitlines() if "[fig-4.4/testh]" in x][0]
    assert "acc_momentum 0.935 (criterion ≥ 0.99)" in row
    assert "eps from which" not in row  # printed 2.0, measured 2.0: an echo of the preset, left to the md
    rec = json.loads((tmp_path / "o" / "momentum" / "fig-4.4__testh.json").read_text())
    assert rec["png"] == "o/momentum/fig-4.4__testh.png"  # relative to where the command ran: the gallery can move


@settings(max_examples=60, deadline=None)
@given(values=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.floats(-10, 10, allow_nan=False), min_size=1),
       bounds=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["_max", "_min", "_below", "_above"]),
                                 st.floats(-10, 10, allow_nan=False)), min_size=1, max_size=4))
def test_criterion_terms_agree_with_the_verdict(values, bounds):
    from theory.claims import threshold_verdict
    from theory.reproduce import criterion_terms, headline

    expected = {name + suffix: b for name, suffix, b in bounds if name in values}
    assume(expected)
    v = threshold_verdict("qualitative", values, expected)
    terms = criterion_terms({"k/fig-1": v})
    assert len(terms) == len(expected) and all(t["claim"] == "k/fig-1" for t in terms)
    assert all(t["holds"] for t in terms) == v.passed
    holds = [t["holds"] for t in terms]
    assert holds == sorted(holds)  # failing terms first
    assert criterion_terms({"k/fig-1": {"status": v.status, "expected": v.expected, "measured": v.measured}}) == terms
    assert headline({"k/fig-1": v}).count("criterion") == min(2, len(terms))
