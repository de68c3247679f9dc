"""The documents' figures and tables, each declared once: what runs it, what it prints, how it is judged.

A :class:`Figure` names one figure (or table, or panel) of a paper key by the document's own numbering
(``momentum/fig-4.5``), the registered experiment whose result draws it, the claims whose checks record its
verdict, the numbers the document prints for it (:class:`Printed`, each beside the measured number of the
same name), the criterion that decides it (stated before any data is looked at), and, where the document
uses a dataset, the dataset (:mod:`theory.datasets`) it needs. A run on a stand-in for that dataset
(scikit-learn's digits for MNIST, synthetic rings for CIFAR-10) is a figure of its own with ``substitute``
set, whose claims are proxies.

``theory reproduce KEY [FIGURE ...]`` (:mod:`theory.reproduce`) runs the declarations: the experiment through
the sweep cache at the ``check`` or ``paper`` preset, the figure in the document's layout, and the table of
printed against measured numbers. Every label of a paper's inventory (:attr:`theory.papers.Paper.figures`)
has a declaration; a figure without numerical content (a diagram) is declared with ``illustration`` set
to what it shows, and no claim.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable, Mapping
from typing import Any

from theory.papers import PAPER_KEYS, paper

__all__ = ["Figure", "Printed", "register_figure", "figure", "figure_of_claim", "figures"]

_LABEL = re.compile(r"(?:fig-[0-9]+(?:\.[0-9]+)?[a-z]?|table-[0-9]+(?:\.[0-9]+)?)(?:/[a-z0-9]+(?:-[a-z0-9]+)*)?")

_FIGURES: dict[str, Figure] = {}


@dataclasses.dataclass(frozen=True)
class Printed:
    """One number the document prints for a figure, and the measured number set beside it.

    Attributes
    ----------
    name : str
        What the number is, in words (``"Momentum ResNet test accuracy"``).
    value : float or None
        The printed value; None where the document shows the quantity only as a curve (its reading from the
        plot then goes in ``note``, never as a number that looks printed).
    where : str
        Where the document prints it: ``"caption of Fig. 4.5"``, ``"Table 4.2, row Momentum ResNet"``,
        ``"Section 4.5.1, text"``.
    measured : str or None
        The key of the measured numbers (:meth:`Figure.numbers_of`) shown beside it; None where this run
        cannot measure it (``note`` says why).
    note : str
        A remark shown in the table (a unit, why a preset cannot reach the document's value).
    """

    name: str
    value: float | None
    where: str
    measured: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        for attr in ("name", "where"):
            if not isinstance(getattr(self, attr), str) or not getattr(self, attr).strip():
                raise ValueError(f"`{attr}` of theory.experiments.Printed must be a non-empty string; got "
                                 f"{getattr(self, attr)!r}")
        if self.value is not None:
            if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
                raise TypeError(f"`value` of Printed {self.name!r} must be a number or None; got {self.value!r}")
            object.__setattr__(self, "value", float(self.value))
        if self.measured is not None and (not isinstance(self.measured, str) or not self.measured):
            raise ValueError(f"`measured` of Printed {self.name!r} must be a key of the measured numbers or None; "
                             f"got {self.measured!r}")


@dataclasses.dataclass(frozen=True)
class Figure:
    """One figure, panel or table of a document, as :func:`register_figure` declares it.

    Attributes
    ----------
    key : str
        The paper key (``"momentum"``).
    label : str
        The document's numbering, ``fig-N[.M][panel]`` or ``table-N[.M]``, optionally followed by
        ``/<qualifier>`` for a second run of the same figure (``fig-4/digits``: on a substitute dataset).
        The part before the qualifier is a label of the paper's inventory.
    title : str
        What the figure shows, in our words.
    claims : tuple of str
        The claim IDs whose checks record this figure's verdict (the figure's own claim first). Empty only for
        an ``illustration``.
    experiment : str or None
        The registered experiment whose result draws the figure (None only for an ``illustration``).
    draw : callable or None
        ``draw(result) -> path``: the figure in the document's layout, saved with
        :func:`theory.plots.save_figure` (``theory reproduce`` chooses the folder).
    criterion : str
        The verdict's criterion in words, fixed before the data was looked at (``"Momentum ResNet test
        accuracy >= 0.99 while the ResNet of the same depth stays <= 0.75"``).
    printed : tuple of Printed
        The document's numbers for this figure.
    numbers : callable or None
        ``numbers(result) -> dict`` of the measured numbers; by default the experiment's summary merged with
        the measured numbers of the claims' verdicts.
    grid : mapping or None
        A sweep grid (``{"seed": (0, 1, 2)}``) when the figure is several tasks of its experiment (then
        ``draw``, ``numbers`` and ``verdict`` take the :class:`theory.sweep.SweepResult`); None: one task.
    verdict : callable or None
        For a grid figure, ``verdict(sweep_result) -> Verdict``; for a one-task figure the claims' verdicts
        (``Experiment.verdict_for``) are used.
    data : str or None
        The dataset it needs (a name of ``theory.datasets.DATASETS``); the experiment's config then has a
        ``data`` field that receives the dataset's folder.
    substitute : str or None
        For a run on a stand-in for the document's data or model: what stands in (its claims are proxies).
    preset_note : str
        Where the ``paper`` preset differs from the document's sizes, and why.
    illustration : str or None
        For a figure with no numerical content (a diagram): what it depicts; no claim, no experiment.
    """

    key: str
    label: str
    title: str
    claims: tuple[str, ...] = ()
    experiment: str | None = None
    draw: Callable[[Any], Any] | None = None
    criterion: str = ""
    printed: tuple[Printed, ...] = ()
    numbers: Callable[[Any], Mapping[str, Any]] | None = None
    grid: Mapping[str, tuple] | None = None
    verdict: Callable[[Any], Any] | None = None
    data: str | None = None
    substitute: str | None = None
    preset_note: str = ""
    illustration: str | None = None

    def __post_init__(self) -> None:
        from theory.claims import parse_claim_id

        where = f"figure {self.key}/{self.label}"
        if self.key not in PAPER_KEYS:
            raise ValueError(f"`key` of {where} must be one of {', '.join(PAPER_KEYS)}")
        if not isinstance(self.label, str) or not _LABEL.fullmatch(self.label):
            raise ValueError(f"`label` of {where} must be 'fig-N[.M][panel]' or 'table-N[.M]', optionally with "
                             f"'/qualifier'; got {self.label!r}")
        inventory = paper(self.key).figures
        if self.base not in inventory:
            raise ValueError(f"{where}: {self.base!r} is not in the inventory of {self.key} "
                             f"(theory.papers: {', '.join(inventory) or 'none declared'})")
        if not self.title.strip():
            raise ValueError(f"`title` of {where} must be a non-empty string")
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "printed", tuple(self.printed))
        for c in self.claims:
            if parse_claim_id(c)[0] != self.key:
                raise ValueError(f"claim {c!r} of {where} belongs to another paper key")
        if self.illustration is not None:
            if self.claims or self.experiment is not None or self.draw is not None:
                raise ValueError(f"{where} is an illustration: it has no claim, experiment or drawing")
        else:
            if not self.claims or self.experiment is None or self.draw is None:
                raise ValueError(f"{where} needs `claims`, `experiment` and `draw` (or `illustration`)")
            if not self.criterion.strip():
                raise ValueError(f"{where} needs its `criterion`, in words")
        for p in self.printed:
            if not isinstance(p, Printed):
                raise TypeError(f"`printed` of {where} must hold theory.experiments.Printed; got {p!r}")
        if self.grid is not None:
            object.__setattr__(self, "grid", {k: tuple(v) for k, v in dict(self.grid).items()})
            if self.verdict is None:
                raise ValueError(f"{where} is a grid of tasks: it needs `verdict(sweep_result)`")
        if self.data is not None:
            from theory.datasets import DATASETS

            if self.data not in DATASETS:
                raise ValueError(f"`data` of {where} must be one of {', '.join(sorted(DATASETS))}; got {self.data!r}")

    @property
    def id(self) -> str:
        """``"<key>/<label>"``, the name ``theory reproduce`` prints."""
        return f"{self.key}/{self.label}"

    @property
    def base(self) -> str:
        """The label without its qualifier: the inventory entry (``"fig-4"`` for ``"fig-4/digits"``)."""
        return self.label.partition("/")[0]

    @property
    def kind(self) -> str:
        """``"table"`` or ``"figure"``."""
        return "table" if self.label.startswith("table-") else "figure"

    @property
    def number(self) -> str:
        """The document's name of it: ``"Fig. 4.5"``, ``"Table 4.2"``, ``"Fig. 3(a)"``."""
        head, _, num = self.base.partition("-")
        panel = re.fullmatch(r"([0-9.]+)([a-z]?)", num)
        text = f"{'Table' if head == 'table' else 'Fig.'} {panel.group(1)}"
        return text + (f"({panel.group(2)})" if panel.group(2) else "")

    def numbers_of(self, result: Any, verdicts: Mapping[str, Any] = (), config: Any = None) -> dict:
        """The measured numbers of ``result``: ``numbers(result)`` if declared, else the experiment's summary
        merged with the measured numbers (flattened to ``name`` and ``name.sub``) of ``verdicts``; with the run's
        ``config``, also its settings as ``config.<field>`` (those a grid does not vary), so that a setting the
        document prints (a depth, k) stands beside the value the run used."""
        out: dict = {} if config is None else _settings(config, self.grid)
        if self.numbers is not None:
            out.update(self.numbers(result))
            return out
        from ._registry import experiment

        exp = experiment(self.experiment)
        if exp.summary is not None and self.grid is None:
            out.update(exp.summary(result))
        for v in dict(verdicts).values():
            _flatten(v.measured, "", out)
        return out


def _settings(config: Any, grid: Mapping | None) -> dict:
    out = {}
    for f in dataclasses.fields(config):
        if grid and f.name in grid:
            continue
        value = getattr(config, f.name)
        if isinstance(value, (bool, int, float, str)) or (
                isinstance(value, tuple) and len(value) <= 12 and all(isinstance(v, (int, float)) for v in value)):
            out[f"config.{f.name}"] = list(value) if isinstance(value, tuple) else value
    return out


def _flatten(mapping: Mapping, prefix: str, out: dict) -> None:
    for k, v in mapping.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            _flatten(v, name + ".", out)
        elif name not in out:
            out[name] = v


def register_figure(key: str, label: str, title: str, **fields: Any) -> Figure:
    """Declare figure ``label`` of paper ``key`` (fields as in :class:`Figure`) and return it.

    Declaring the same figure again with the same experiment is a no-op (module reloads); with another one
    it is an error.
    """
    fig = Figure(key, label, title, **fields)
    previous = _FIGURES.get(fig.id)
    if previous is not None and (previous.experiment, previous.claims) != (fig.experiment, fig.claims):
        raise ValueError(f"figure {fig.id} is declared twice, for {previous.experiment} and {fig.experiment}")
    _FIGURES[fig.id] = fig
    return fig


def _load(key: str) -> None:
    importlib.import_module(f"theory.experiments.{paper(key).module}")


def figure(figure_id: str) -> Figure:
    """The figure declared as ``figure_id`` (``"momentum/fig-4.5"``).

    Raises
    ------
    ValueError
        For an unknown paper key or figure; the message lists the key's declared figures.
    """
    if not isinstance(figure_id, str) or "/" not in figure_id:
        raise ValueError(f"a figure is named '<paper-key>/<label>' (momentum/fig-4.5); got {figure_id!r}")
    key = figure_id.partition("/")[0]
    if key not in PAPER_KEYS:
        raise ValueError(f"unknown paper key {key!r} in {figure_id!r}; known keys: {', '.join(PAPER_KEYS)}")
    _load(key)
    if figure_id not in _FIGURES:
        known = [f.label for f in figures(key)]
        raise ValueError(f"no figure {figure_id!r}; {key} declares: {', '.join(known) or 'none'}")
    return _FIGURES[figure_id]


def figures(key: str | None = None) -> list[Figure]:
    """The declared figures of paper ``key`` (all keys when None), in the order of the paper's inventory."""
    keys = PAPER_KEYS if key is None else (key,)
    out = []
    for k in keys:
        if k not in PAPER_KEYS:
            raise ValueError(f"unknown paper key {k!r}; known keys: {', '.join(PAPER_KEYS)}")
        _load(k)
        order = {label: i for i, label in enumerate(paper(k).figures)}
        mine = [f for f in _FIGURES.values() if f.key == k]
        out += sorted(mine, key=lambda f: (order[f.base], f.label))
    return out


def figure_of_claim(claim_id: str) -> Figure | None:
    """The figure whose own claim is ``claim_id`` (the first of its ``claims``), or None.

    A claim that only shares a figure's verdict (its second or later claim) maps to None: the figure's
    criterion is not its prediction. Unknown or malformed IDs map to None too.

    Examples
    --------
    >>> figure_of_claim("momentum/fig-4.5").label
    'fig-4.5'
    >>> figure_of_claim("momentum/not-a-claim") is None
    True
    """
    key = claim_id.partition("/")[0] if isinstance(claim_id, str) else None
    if key not in PAPER_KEYS:
        return None
    return next((f for f in figures(key) if f.claims[:1] == (claim_id,)), None)

