"""Pytest plugin: the ``claim`` marker and fixture, and the claims report of a run.

PYTEST_DONT_REWRITE (the assertions here carry their own messages; the marker keeps pytest
from warning when the module was imported before it is registered as a plugin)

Loaded by ``checks/conftest.py`` (``pytest_plugins = ["theory.pytest_plugin"]``) or with
``-p theory.pytest_plugin``. A check declares its claim and asserts through the fixture::

    @pytest.mark.claim("resnet-node/prop-3", kind="rate", title="Euler reconstruction error is O(1/N)")
    def test_prop3(claim):
        exp = experiment("resnet_node.adjoint_euler_smooth")
        claim.record(exp.verdict_for(claim.id)(exp.run("check")), figure=path)

``claim.record`` takes the typed :class:`theory.claims.Verdict` of the experiment as it is (its kind, predicted
and measured numbers), fills ``claim.expected``, ``claim.measured`` and ``claim.figure`` from it, then asserts it
(``claim.rate``, ``claim.bound``, ``claim.identity`` and ``claim.frequency`` build the verdict of a measurement
of :mod:`theory.rates` first), so the record exists before the assertion
(a failing check still leaves its record). A check whose claim a declared figure's experiment decides is one line,
``claim.reproduce()``: it runs that experiment at its "check" preset, skips when the figure's dataset is absent, and
records the verdict with the figure's drawing. A hook wrapper on ``pytest_runtest_makereport`` turns each claim test into
a :class:`theory.claims.ClaimRecord` whose status follows the pytest outcome (a crash or a
setup error is a ``fail``); at the end of the session the report is written to
``--claims-report DIR`` (default ``reports/`` under the rootdir) unless ``--no-claims-report``.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from theory._files import locked
from theory.claims import (
    KINDS,
    PAPER_KEYS,
    WRONG_IN,
    ClaimRecord,
    Verdict,
    bound_verdict,
    erratum_verdict,
    frequency_verdict,
    identity_verdict,
    merge_records,
    parse_claim_id,
    qualitative_verdict,
    rate_verdict,
)
from theory.report import (
    build_report,
    claim_line,
    collect_environment,
    load_report,
    merge_with_previous,
    render_table,
    summary_line,
    write_report,
)

__all__ = ["Claim"]

_MARKER = (
    "claim(id, kind, title, aliases=(), proxy=None, wrong_in=None, step_of=()): declares the claim a check "
    "measures (see theory.claims); step_of names the theorems whose proof it is a step of"
)
_MARKER_ARGS = ("id", "kind", "title", "aliases", "proxy", "wrong_in", "step_of")


class Claim:
    """The claim a check measures: identity from the marker, record filled by the check.

    Attributes
    ----------
    id, paper, kind, title, aliases
        From the ``claim`` marker.
    expected, measured : dict
        Filled by :meth:`record` (or a helper) from the verdict. Keys put in ``measured`` before stay
        (the verdict adds its own); ``expected`` is the verdict's.
    figure : str or None
        Path of the figure, relative to the repository root.
    proxy : str or None
        From the marker, or set by the check: why its instances lie outside the statement's
        hypotheses. A proxy record never counts as verifying the statement.
    wrong_in : str or None
        Erratum records: where the printed error lies (:data:`theory.claims.WRONG_IN`).
    verdict : Verdict or None
        The verdict of the last helper call.
    notes : list of str
        Remarks copied into the record.

    Notes
    -----
    Each helper records first, then asserts ``verdict.status == "pass"`` with the message
    ``"<id>: <verdict message>"``. The fixture is function-scoped: a Hypothesis-driven bound
    check draws its instances in an inner ``@given`` function feeding a
    :class:`theory.rates.BoundTracker`, then calls :meth:`bound` once.
    """

    def __init__(
        self,
        claim_id: str,
        kind: str,
        title: str,
        aliases: tuple[str, ...] = (),
        proxy: str | None = None,
        wrong_in: str | None = None,
        step_of: tuple[str, ...] = (),
    ) -> None:
        self.id = claim_id
        self.proxy = proxy
        self.wrong_in = wrong_in
        self.step_of = tuple(step_of)
        self.paper, _ = parse_claim_id(claim_id)
        self.kind = kind
        self.title = title
        self.aliases = tuple(aliases)
        self.expected: dict = {}
        self.measured: dict = {}
        self.figure: str | None = None
        self.verdict: Verdict | None = None
        self.notes: list[str] = []
        self._figure_dir: Path | None = None

    def __repr__(self) -> str:
        return f"Claim({self.id!r}, kind={self.kind!r})"

    # -- helpers, one per kind
    def rate(self, fit: Any, expected: dict, figure: str | None = None, *, grid_label: str = "N") -> Verdict:
        """Record a :class:`~theory.rates.RateFit` and assert :func:`~theory.claims.rate_verdict`."""
        __tracebackhide__ = True
        return self._conclude("rate", fit, expected, figure, lambda: rate_verdict(fit, expected, grid_label=grid_label))

    def bound(self, result: Any, expected: dict, figure: str | None = None) -> Verdict:
        """Record a :class:`~theory.rates.BoundResult` and assert :func:`~theory.claims.bound_verdict`."""
        __tracebackhide__ = True
        return self._conclude("bound", result, expected, figure, lambda: bound_verdict(result, expected))

    def frequency(self, result: Any, expected: dict, figure: str | None = None) -> Verdict:
        """Record a :class:`~theory.rates.FrequencyResult` and assert :func:`~theory.claims.frequency_verdict`."""
        __tracebackhide__ = True
        return self._conclude("frequency", result, expected, figure, lambda: frequency_verdict(result, expected))

    def identity(self, result: Any, expected: dict, figure: str | None = None) -> Verdict:
        """Record an :class:`~theory.rates.IdentityResult` and assert :func:`~theory.claims.identity_verdict`."""
        __tracebackhide__ = True
        return self._conclude("identity", result, expected, figure, lambda: identity_verdict(result, expected))

    def record(self, verdict: Verdict, figure: str | None = None, *, measured: Any = None) -> Verdict:
        """Record a typed :class:`~theory.claims.Verdict` as it is, and assert it.

        The record's ``expected`` and ``measured`` are the verdict's (``measured`` adds further numbers: a
        dict or a result object with ``to_measured()``, for the report and its figures); its kind must be the
        kind the marker declares. This is the one way a check records an experiment's verdict::

            claim.record(ex.prop51_verdict(ex.prop51(ex.PROP51_PRESETS["check"])))
        """
        __tracebackhide__ = True
        if not isinstance(verdict, Verdict):
            raise TypeError(f"{self.id}: claim.record takes a theory.claims.Verdict; got {type(verdict).__name__}")
        if verdict.kind is None:
            raise ValueError(f"{self.id}: the verdict has no kind; build it with a verdict function of "
                             "theory.claims (rate_verdict, bound_verdict, threshold_verdict, ...)")
        if verdict.kind == "erratum" and len(verdict.parts) != 2:
            raise ValueError(f"{self.id}: an erratum record asserts both halves; build it with "
                             "theory.claims.erratum_verdict(printed, corrected), the corrected statement's verdict on "
                             "the same instances included")
        extra = measured.to_measured() if hasattr(measured, "to_measured") else dict(measured or {})
        return self._conclude(verdict.kind, {**extra, **verdict.measured}, verdict.expected, figure,
                              lambda: verdict, source=verdict)

    def reproduce(self, experiment: str | None = None, *, preset: str = "check", draw: Any = True) -> Any:
        """Run the experiment that measures this claim at ``preset``, record its verdict with the figure, return
        the result: the body of a check whose claim an experiment's verdict decides.

        Parameters
        ----------
        experiment : str, optional
            The registered experiment (``"momentum.rings"``); by default the experiment of the figure declaring
            this claim (:func:`theory.experiments.register_figure`).
        preset : str
            The preset run (``"check"``).
        draw : bool or callable
            True: the declaring figure's drawing, when there is one; a callable: ``draw(result) -> path``;
            False: no figure.

        The dataset a declaring figure names is located first (``--data`` / ``$THEORY_DATA``); when it is absent
        the check is skipped with the message of :class:`theory.datasets.DatasetMissing` (what is missing and
        where it is published)::

            @pytest.mark.claim("momentum/fig-4.5", kind="qualitative", title="...")
            def test_fig45(claim):
                claim.reproduce()
        """
        __tracebackhide__ = True
        from theory import datasets
        from theory.experiments import experiment as lookup
        from theory.experiments import figure_of_claim, figures

        declared = figure_of_claim(self.id)        # the figure whose own claim this is, else one sharing its verdict
        if declared is None or declared.grid is not None:
            declared = next((f for f in figures(self.paper) if self.id in f.claims and f.grid is None), None)
        name = experiment if experiment is not None else getattr(declared, "experiment", None)
        if name is None:
            raise ValueError(f"{self.id}: no figure declares this claim; name its experiment: "
                             "claim.reproduce('<key>.<name>')")
        if declared is not None and declared.data is not None:
            try:
                datasets.locate(declared.data, None)
            except datasets.DatasetMissing as exc:
                pytest.skip(str(exc))
            if datasets.dataset(declared.data).loader is None:
                pytest.skip(f"dataset {declared.data}: {datasets.dataset(declared.data).published}")
        exp = lookup(name)
        result = exp.run(preset)
        verdict = exp.verdict_for(self.id)(result)
        if callable(draw):
            path = draw(result)
        elif draw and declared is not None and declared.draw is not None:
            path = declared.draw(result)
        else:
            path = None
        self.record(verdict, figure=path)
        return result

    def _conclude(self, kind: str, result: Any, expected: Any, figure: Any, verdict_of, source: Any = None) -> Verdict:
        __tracebackhide__ = True
        if kind != self.kind:
            raise ValueError(f"{self.id} is declared with kind={self.kind!r}, but claim.{kind}() was called")
        if self.verdict is not None:
            self.notes.append(f"claim.{kind}() was called more than once; the last call is recorded")
        self.expected = dict(expected) if isinstance(expected, dict) else expected
        # keys the check put in claim.measured beforehand stay, beside the measurement's own
        measured = result.to_measured() if hasattr(result, "to_measured") else dict(result)
        self.measured = {**self.measured, **measured}
        self.notes.extend(_nonfinite_fields(result if source is None else self.measured))
        if figure is not None:
            self.figure = str(figure)
            self._figure_dir = Path.cwd()  # a relative figure path is relative to the cwd now
        self.verdict = verdict_of()
        if kind != "qualitative" and not (self.expected and self.measured):
            raise ValueError(f"{self.id}: a {kind} record needs the predicted value (expected) and the measured one "
                             f"(measured); got expected={self.expected!r}, measured={self.measured!r}")
        if kind == "bound" and self.proxy is None and not _has_search(self.measured):
            raise ValueError(f"{self.id}: a bound records the worst-case search of its hypothesis set beside its "
                             "random instances (theory.worst_case.search_worst_case, attached with "
                             "BoundResult.with_search or theory.claims.worst_case_verdict); a statement with no "
                             "LHS <= RHS to search is not a bound (qualitative, with its thresholds)")
        if self.verdict.status != "pass":
            raise AssertionError(f"{self.id}: {self.verdict.message}")
        return self.verdict


def _has_search(measured: Mapping) -> bool:
    """Whether a measurement holds a worst-case search (its own, a part's, or one in each half)."""
    from theory.report import searches_of

    return isinstance(measured, Mapping) and bool(searches_of(measured))


def _nonfinite_fields(result: Any) -> list[str]:
    """Notes for the non-finite numbers of a result object, which its report shows as null."""
    names = getattr(result, "__dataclass_fields__", {})
    notes = []
    for name in names:
        value = getattr(result, name)
        if isinstance(value, (float, np.floating)) and not math.isfinite(value):
            notes.append(f"measured {name} is {float(value)!r} (written as null)")
        elif isinstance(value, tuple) and any(isinstance(v, float) and not math.isfinite(v) for v in value):
            notes.append(f"measured {name} has non-finite entries (written as null)")
    return notes


class _ItemState:
    """Claim and outcome of one test item, assembled across its setup, call and teardown."""

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.status: str | None = None
        self.message = ""
        self.seconds = 0.0
        self.notes: list[str] = []

    def update(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.seconds = report.duration
        if report.failed:
            verdict = self.claim.verdict
            if report.when == "call" and verdict is not None and verdict.status == "fail":
                self.message = verdict.message
            elif self.status != "fail":
                self.message = _crash_message(report)
            self.status = "fail"
        elif report.skipped:
            if hasattr(report, "wasxfail"):
                self.status = "fail"
                self.message = f"expected to fail (xfail): {report.wasxfail}".rstrip(": ")
            elif self.status is None:
                self.status = "skip"
                self.message = _skip_reason(report)
        elif report.when == "call" and self.status is None:
            self.status = "pass"
            if self.claim.verdict is not None:
                self.message = self.claim.verdict.message

    def record(self, item: pytest.Item) -> ClaimRecord:
        claim = self.claim
        notes = list(claim.notes) + self.notes
        figure = claim.figure
        if figure is not None:
            figure, note = _figure_path(figure, claim._figure_dir or Path.cwd(), item.config.rootpath)
            notes += [note] if note else []
        return ClaimRecord(
            id=claim.id,
            paper=claim.paper,
            aliases=claim.aliases,
            title=claim.title,
            kind=claim.kind,
            status=self.status or "skip",
            expected=claim.expected or (_declared_expectation(claim.id) if claim.verdict is None else None) or {},
            measured=claim.measured,
            figure=figure,
            seconds=round(self.seconds, 3),
            message=self.message,
            test=item.nodeid,
            notes=tuple(notes),
            proxy=claim.proxy,
            wrong_in=claim.wrong_in,
            step_of=claim.step_of,
            **_experiment_of(claim.id),
        )


def _declared_expectation(claim_id: str) -> dict | None:
    """What a claim that recorded nothing (skipped, or crashed before its verdict) predicts, from its figure.

    A figure's claim (``theory.experiments.register_figure``) states its criterion in words before any data;
    the report shows it in the Predicted column, so a claim skipped for want of its dataset still says what
    it would test. None where the claim is no figure's own claim.
    """
    from theory.experiments import figure_of_claim

    declared = figure_of_claim(claim_id)
    if declared is None or not declared.criterion:
        return None
    return {"criterion": declared.criterion}


def _experiment_of(claim_id: str) -> dict:
    """The record's experiment, preset and parameters, from the registry (empty where none is registered)."""
    from theory.experiments import experiment_of

    try:
        exp = experiment_of(claim_id)
    except (ValueError, TypeError):
        return {}
    return {"experiment": exp.name, "preset": "check", "parameters": exp.fields}


def _crash_message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else (str(report.longrepr).strip().splitlines() or [""])[-1]
    prefix = "crashed" if report.when == "call" else f"error in {report.when}"
    return f"{prefix}: {' '.join(text.split())}"


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _figure_path(figure: str, cwd: Path, root: Path) -> tuple[str, str | None]:
    """The figure path relative to ``root`` (as posix), and a note if the file is missing."""
    path = Path(figure)
    path = path if path.is_absolute() else cwd / path
    note = None if path.is_file() else f"figure {figure} was not found when the check ended"
    try:
        return path.resolve().relative_to(root.resolve()).as_posix(), note
    except ValueError:
        return path.as_posix(), note


def _claim_from_marker(item: pytest.Item) -> Claim | None:
    """The item's :class:`Claim`, or a ``pytest.UsageError`` naming the test."""
    marks = list(item.iter_markers("claim"))
    if not marks:
        return None
    where = f"{item.nodeid}: @pytest.mark.claim"
    if len(marks) > 1:
        ids = [m.args[0] if m.args else m.kwargs.get("id") for m in marks]
        raise pytest.UsageError(f"{where} is given {len(marks)} times ({ids}); a test measures one claim")
    mark = marks[0]
    if len(mark.args) > len(_MARKER_ARGS):
        raise pytest.UsageError(f"{where} takes at most {len(_MARKER_ARGS)} arguments {_MARKER_ARGS}")
    values = dict(zip(_MARKER_ARGS, mark.args))
    for key, value in mark.kwargs.items():
        if key not in _MARKER_ARGS:
            raise pytest.UsageError(f"{where} got unknown keyword {key!r}; allowed: {', '.join(_MARKER_ARGS)}")
        if key in values:
            raise pytest.UsageError(f"{where} got {key!r} twice")
        values[key] = value
    missing = [k for k in ("id", "kind", "title") if k not in values]
    if missing:
        raise pytest.UsageError(f"{where} is missing {', '.join(missing)}")
    claim_id, kind, title = values["id"], values["kind"], values["title"]
    try:
        _, local = parse_claim_id(claim_id)
    except ValueError as exc:
        raise pytest.UsageError(f"{where}: {exc}") from None
    if kind not in KINDS:
        raise pytest.UsageError(f"{where} has unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    if (kind == "erratum") != local.endswith("/erratum"):
        raise pytest.UsageError(
            f"{where}: kind 'erratum' goes with IDs ending in '/erratum' and only with them; "
            f"got {claim_id!r} with kind {kind!r}"
        )
    if not isinstance(title, str) or not title.strip():
        raise pytest.UsageError(f"{where} needs a non-empty title (the statement in one line)")
    aliases = values.get("aliases", ())
    aliases = (aliases,) if isinstance(aliases, str) else aliases
    if not isinstance(aliases, (tuple, list)) or not all(isinstance(a, str) and "/" in a for a in aliases):
        raise pytest.UsageError(f"{where}: aliases must be IDs like 'sander-thesis/prop-2.9'; got {aliases!r}")
    proxy = values.get("proxy")
    if proxy is not None and (not isinstance(proxy, str) or not proxy.strip()):
        raise pytest.UsageError(f"{where}: proxy must be a non-empty reason (the hypotheses the instances violate)")
    wrong_in = values.get("wrong_in")
    if wrong_in is not None and (kind != "erratum" or wrong_in not in WRONG_IN):
        raise pytest.UsageError(
            f"{where}: wrong_in is for erratum claims only and must be one of {', '.join(WRONG_IN)}; got {wrong_in!r}"
        )
    step_of = values.get("step_of", ())
    step_of = (step_of,) if isinstance(step_of, str) else step_of
    if not isinstance(step_of, (tuple, list)) or not all(isinstance(t, str) for t in step_of):
        raise pytest.UsageError(f"{where}: step_of must be claim IDs of theorems, e.g. 'implicit-reg/thm-6'; "
                                f"got {step_of!r}")
    for target in step_of:
        try:
            parse_claim_id(target)
        except ValueError as exc:
            raise pytest.UsageError(f"{where}: step_of: {exc}") from None
        if target == claim_id:
            raise pytest.UsageError(f"{where}: step_of names the claim itself")
    return Claim(claim_id, kind, title.strip(), tuple(aliases), proxy=proxy, wrong_in=wrong_in,
                 step_of=tuple(step_of))


# --------------------------------------------------------------------------- hooks


class _Session:
    """Records collected during a run, and the lines the terminal summary prints."""

    def __init__(self) -> None:
        self.records: list[ClaimRecord] = []
        self.line: str | None = None
        self.table: str | None = None
        self.extra_lines: list[str] = []
        self.started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self.environment: dict | None = None
        self.slow_cleared = False
        self.named_nodes: list[str] = []


_SESSION = pytest.StashKey[_Session]()
_ITEM = pytest.StashKey[_ItemState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claims", "claims report (theory)")
    group.addoption(
        "--claims-report",
        metavar="DIR",
        default=None,
        help="write claims.json and claims.md to DIR (default: reports/ under the rootdir); "
        "spell it --claims-report=DIR, since pytest finds its rootdir before it loads this plugin",
    )
    group.addoption(
        "--no-claims-report",
        action="store_true",
        default=False,
        help="do not write the claims report",
    )
    group.addoption(
        "--claim",
        action="append",
        default=[],
        metavar="ID",
        dest="claim_ids",
        help="run the check of this claim ID exactly as the report prints it (repeatable; slow ones too)",
    )
    group.addoption(
        "--paper",
        action="append",
        default=[],
        metavar="KEY",
        dest="claim_papers",
        help=f"run the claims of this paper key (repeatable): {', '.join(PAPER_KEYS)}",
    )
    group.addoption(
        "--slow",
        action="store_true",
        default=False,
        dest="claim_slow",
        help="include the heavy reproductions marked slow",
    )
    group.addoption(
        "--claims-list",
        default=None,
        metavar="FILE",
        help="write the selected claims (ID, test, slow, proxy, not_reproduced) as JSON to FILE instead of running them",
    )


def pytest_configure(config: pytest.Config) -> None:
    from theory._openmp import share_openmp_runtime

    share_openmp_runtime()  # before the check modules import PyTorch (see theory._openmp)
    if not any(line.split("(")[0].split(":")[0].strip() == "claim" for line in config.getini("markers")):
        config.addinivalue_line("markers", _MARKER)
    state = _Session()
    config.stash[_SESSION] = state
    for key in config.getoption("claim_papers", None) or []:
        if key not in PAPER_KEYS:
            raise pytest.UsageError(f"--paper {key!r} is not a paper key; known keys: {', '.join(PAPER_KEYS)}")
    for claim_id in config.getoption("claim_ids", None) or []:
        try:
            parse_claim_id(claim_id)
        except ValueError as exc:
            raise pytest.UsageError(f"--claim: {exc}") from None
    # a test named by its node ID (path::test) runs even when it is marked slow
    state.named_nodes = [a.split("::", 1)[1].split("[")[0] for a in config.args if "::" in a]
    named = config.getoption("claim_ids", None) or config.getoption("claim_slow", False) or state.named_nodes
    listing = config.getoption("claims_list", None)
    # setup.cfg deselects slow checks with -m "not slow"; a claim named on the command line, --slow and
    # --claims-list must see them, so that default is lifted here and the plugin decides instead
    if (named or listing) and (getattr(config.option, "markexpr", "") or "").strip() == "not slow":
        config.option.markexpr = ""
        state.slow_cleared = True


def _selected(item: pytest.Item, claim_id: str, paper: str, config: pytest.Config, slow_cleared: bool) -> bool:
    ids = config.getoption("claim_ids", None) or []
    papers = config.getoption("claim_papers", None) or []
    slow = item.get_closest_marker("slow") is not None
    if claim_id in ids:
        return True
    if ids and not papers:
        return False
    if papers and paper not in papers:
        return False
    if slow and slow_cleared and not (config.getoption("claim_slow", False) or config.getoption("claims_list", None)):
        named_nodes = getattr(config.stash.get(_SESSION, None), "named_nodes", [])
        base = item.nodeid.split("[")[0]
        return any(base.endswith("::" + name) for name in named_nodes)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Claim IDs and paper keys as keywords (for -k), then the --claim/--paper/--slow selection."""
    state = config.stash.get(_SESSION, None)
    ids = config.getoption("claim_ids", None) or []
    selecting = bool(ids or config.getoption("claim_papers", None) or (state and state.slow_cleared))
    keep, drop, found, listing = [], [], set(), []
    for item in items:
        mark = item.get_closest_marker("claim")
        claim_id = (mark.args[0] if mark and mark.args else mark.kwargs.get("id")) if mark else None
        paper = None
        if isinstance(claim_id, str):
            paper = claim_id.partition("/")[0]
            item.extra_keyword_matches.add(claim_id)
            item.extra_keyword_matches.add(paper)
        if not selecting:
            keep.append(item)
        elif _selected(item, claim_id, paper, config, bool(state and state.slow_cleared)):
            keep.append(item)
            found.add(claim_id)
        else:
            drop.append(item)
        if claim_id is not None and (item in keep[-1:]):
            marker = item.get_closest_marker("claim")
            unreproduced = item.get_closest_marker("not_reproduced")
            listing.append({"id": claim_id, "test": item.nodeid, "slow": item.get_closest_marker("slow") is not None,
                            "proxy": (marker.kwargs.get("proxy") if marker is not None else None),
                            "not_reproduced": (unreproduced.kwargs.get("reason", "") if unreproduced is not None
                                               else None)})
    missing = [i for i in ids if i not in found]
    if missing:
        raise pytest.UsageError(
            f"--claim {', '.join(missing)}: no check declares this claim ID; `theory check --list` prints them all"
        )
    list_file = config.getoption("claims_list", None)
    if list_file:
        Path(list_file).write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
        drop, keep = drop + keep, []
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    claim = _claim_from_marker(item)
    if claim is not None:
        item.stash[_ITEM] = _ItemState(claim)


@pytest.fixture
def claim(request: pytest.FixtureRequest):
    """The :class:`Claim` declared by the test's ``@pytest.mark.claim``.

    A test that passes without recording a verdict through a helper errors at teardown
    (every check compares a measurement with the statement).
    """
    state = request.node.stash.get(_ITEM, None)
    if state is None:
        pytest.fail(f"{request.node.nodeid} uses the `claim` fixture without @pytest.mark.claim(...)", pytrace=False)
    yield state.claim
    if state.status == "pass" and state.claim.verdict is None:
        pytest.fail(
            f"{state.claim.id}: the check passed without recording a verdict; call claim.record(verdict) (or "
            "claim.rate(), claim.bound(), claim.frequency(), claim.identity())",
            pytrace=False,
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    state = item.stash.get(_ITEM, None)
    session = item.config.stash.get(_SESSION, None)
    if state is None or session is None:
        return
    report = outcome.get_result()
    state.update(report)
    if report.when == "teardown":
        if "claim" not in getattr(item, "fixturenames", ()):
            state.notes.append("the test does not use the `claim` fixture, so no verdict was recorded")
        session.records.append(state.record(item))


def _report_dir(config: pytest.Config) -> Path:
    option = config.getoption("--claims-report")
    if option is None:
        return config.rootpath / "reports"
    path = Path(option)
    return path if path.is_absolute() else config.invocation_params.dir / path


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(_SESSION, None)
    if state is None or config.getoption("--no-claims-report") or config.getoption("collectonly", False):
        return
    if hasattr(config, "workerinput"):  # an xdist worker: the controller writes the report
        return
    if config.getoption("claims_list", None):
        return
    if not state.records:
        state.line = "claims report: no claim checks ran; nothing written"
        return
    environment = collect_environment()
    commit = environment.get("git_commit")
    run = [
        ClaimRecord(**{**r.as_dict(), "measured_at": state.started, "commit": commit})
        for r in merge_records(state.records)
    ]
    this_run = build_report(run, generated=state.started, environment=environment)
    directory = _report_dir(config)
    try:
        report, md_path, dropped, note = write_cumulative(this_run, directory, config.rootpath)
    except OSError as exc:
        # exit 2: the input or the environment is wrong (1 means a claim failed)
        state.line = f"claims report could not be written to {directory}: {exc}"
        session.exitstatus = pytest.ExitCode.INTERRUPTED
        return
    state.table = render_table(report, ids=[r.id for r in run])
    state.extra_lines += run_notes(report, [r.id for r in run], dropped, note)
    try:
        shown = md_path.resolve().relative_to(config.invocation_params.dir.resolve())
    except ValueError:
        shown = md_path
    state.line = f"claims report: {shown.parent / 'claims.json'} and {shown} ({summary_line(report)})"


def run_notes(report: Mapping, ids: list[str], dropped: list[str], note: str | None) -> list[str]:
    """The lines under a run's claims table: the unreadable report moved aside, the records dropped, and
    how many records of the cumulative report this run did not measure."""
    lines = [note] if note else []
    if dropped:
        lines.append(f"dropped {len(dropped)} record(s) whose check no longer exists: {', '.join(dropped)}")
    kept = len(report["claims"]) - len(ids)
    if kept:
        lines.append(f"partial run: {len(ids)} of {len(report['claims'])} claims measured now; the other {kept} "
                     "keep their earlier records")
    return lines


_LOCK_NAME = ".claims.lock"


def write_cumulative(this_run: Mapping, directory: Path, root: Path) -> tuple[dict, Path, list[str], str | None]:
    """Merge a run's report into the cumulative one in ``directory``, under its lock; write it atomically.

    ``this_run`` is a report document (:func:`theory.report.build_report`) of the claims just measured; the
    records on disk that it does not hold are kept (unless their check no longer exists under ``root``). One
    lock covers the read, the merge and the write, so concurrent runs keep all their records. Returns the
    report written, the path of its Markdown, the IDs of the records dropped, and a note (an unreadable
    previous report moved aside) or None.

    Raises
    ------
    OSError
        The folder or the report cannot be written (the note is then in the message).
    """
    directory.mkdir(parents=True, exist_ok=True)
    ids = [c["id"] for c in this_run["claims"]]
    with locked(directory / _LOCK_NAME):
        previous, note = _read_previous(directory)
        claims, dropped = merge_with_previous(this_run["claims"], previous, lambda rec: _check_exists(rec, root))
        commit = (this_run.get("environment") or {}).get("git_commit")
        report = {**{k: v for k, v in this_run.items() if k != "claims"},
                  "last_run": {"at": this_run.get("generated"), "commit": commit, "claims": ids},
                  "claims": claims}
        try:
            _, md_path = write_report(report, directory, root=root)
        except OSError as exc:
            raise OSError(f"{exc}{'; ' + note if note else ''}") from None
    return report, md_path, dropped, note


def _read_previous(directory: Path) -> tuple[dict | None, str | None]:
    """The report on disk, or (None, note) when there is none or it cannot be used.

    An unreadable report (invalid JSON, not a claims report, unreadable bytes) is never silently
    replaced: it is renamed to ``claims.json.unreadable-<UTC time>`` in the same folder, and the
    note names that file.
    """
    path = directory / "claims.json"
    if not path.is_file():
        return None, None
    try:
        return load_report(directory), None
    except ValueError as exc:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        aside = path.with_name(f"claims.json.unreadable-{stamp}")
        try:
            os.replace(path, aside)
        except OSError as move:
            raise OSError(f"the previous report {path} is unreadable ({exc}) and could not be moved aside "
                          f"({move}); it is left as it is") from None
        return None, (f"the previous report was unreadable ({exc}); it was moved to {aside} and a new "
                      "report was started")


def _check_exists(record: dict, root: Path) -> bool:
    """Whether the check that measured an older record is still in the checkout."""
    test = record.get("test")
    if not isinstance(test, str) or "::" not in test:
        return False
    path, _, name = test.partition("::")
    name = name.split("::")[-1].split("[")[0]
    file = root / path
    if not file.is_file():
        return False
    text = file.read_text(encoding="utf-8", errors="replace")
    local = str(record.get("id", "")).partition("/")[2]
    return f"def {name}(" in text and local.rsplit("/erratum", 1)[0].split("/")[0] in text


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None:
        return
    if state.table:
        terminalreporter.write_sep("-", "claims measured by this run (predicted | measured)")
        for line in state.table.splitlines():
            terminalreporter.write_line(line)
    for line in state.extra_lines:
        terminalreporter.write_line(line)
    if state.line:
        terminalreporter.write_sep("-", state.line)
