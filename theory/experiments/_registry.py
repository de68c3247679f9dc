"""The registry of experiments: one name per measurement, shared by checks, figures, sweeps and the oracle.

An :class:`Experiment` bundles a frozen config dataclass (validated on construction), its named
presets (at least ``"check"``: what ``pytest checks/`` runs within its budget, and ``"paper"``: the
documents' own sizes), the pure ``measure(config) -> result`` function, and optionally the
verdict beside it (result -> :class:`theory.claims.Verdict` or the measurement a claim helper
takes) and a ``summary(result) -> dict`` of plain numbers for sweeps and tables.

Modules of :mod:`theory.experiments` register their experiments at import with :func:`register`;
:func:`experiment` looks one up by name (importing the modules on first use) and
:func:`experiments` lists them.
"""

from __future__ import annotations

import dataclasses
import importlib
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from theory.papers import PAPERS


__all__ = ["Experiment", "register", "experiment", "experiments", "experiment_of", "MODULES"]

#: the modules that register experiments, one per paper key (theory.papers), imported on the first look-up
MODULES = tuple(p.module for p in PAPERS)

_REGISTRY: dict[str, Experiment] = {}


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One measurement as a library function.

    Attributes
    ----------
    name : str
        ``"<module>.<name>"``, e.g. ``"scaling.fig7"``.
    config : type
        The frozen dataclass of its parameters; constructing one validates it.
    presets : mapping of str to config
        Named configurations, at least ``"check"`` and ``"paper"``.
    measure : callable
        ``measure(config) -> result``: pure (no globals, no files, no assertions).
    verdict : callable or None
        ``verdict(result)``: the comparison with the statement, as the check records it.
    claims : tuple of str
        The claim IDs whose checks run this experiment.
    claim_verdicts : mapping of str to callable
        For a claim whose record is not ``verdict(result)`` itself (one part of a combined verdict, another
        tolerance), the function ``result -> Verdict`` its check records; :meth:`verdict_for` reads it.
    summary : callable or None
        ``summary(result) -> dict`` of plain numbers (for sweeps, tables and exports).
    """

    name: str
    config: type
    presets: Mapping[str, Any]
    measure: Callable[[Any], Any]
    verdict: Callable[[Any], Any] | None = None
    claims: tuple[str, ...] = ()
    summary: Callable[[Any], dict] | None = None
    claim_verdicts: Mapping[str, Callable[[Any], Any]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        from .config import Config

        if not isinstance(self.config, type) or not dataclasses.is_dataclass(self.config) or not issubclass(
                self.config, Config):
            raise TypeError(f"`config` of experiment {self.name!r} must be a dataclass deriving from "
                            f"theory.experiments.config.Config (every field declared); got {self.config!r}")
        undeclared = [f.name for f in dataclasses.fields(self.config) if not self.config.declared().get(f.name)]
        if undeclared:
            raise TypeError(f"`config` of experiment {self.name!r} declares no constraint for "
                            f"{', '.join(undeclared)} (theory.experiments.config.field)")
        for key in ("check", "paper"):
            if key not in self.presets:
                raise ValueError(f"experiment {self.name!r} needs a {key!r} preset; has {sorted(self.presets)}")
        for key, preset in self.presets.items():
            if not isinstance(preset, self.config):
                raise TypeError(f"preset {key!r} of experiment {self.name!r} is not a {self.config.__name__}")
        object.__setattr__(self, "presets", dict(self.presets))
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "claim_verdicts", dict(self.claim_verdicts))
        stray = sorted(set(self.claim_verdicts) - set(self.claims))
        if stray:
            raise ValueError(f"experiment {self.name!r} has verdicts for claims it does not list: {stray}")

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the config's fields (the parameters a sweep may vary)."""
        return tuple(f.name for f in dataclasses.fields(self.config))

    def config_for(self, preset: str = "check", **overrides: Any) -> Any:
        """The preset's config with some fields replaced (validated again).

        Raises
        ------
        ValueError
            For an unknown preset, a field the config does not have, or a count above ``MAX_BYTES // 8``
            (``Experiment._check_counts``).
        """
        if preset not in self.presets:
            raise ValueError(
                f"`preset` of experiment {self.name!r} must be one of {sorted(self.presets)}; got {preset!r}"
            )
        unknown = sorted(set(overrides) - set(self.fields))
        if unknown:
            raise ValueError(
                f"experiment {self.name!r} has no parameter {', '.join(unknown)}; its parameters: "
                f"{', '.join(self.fields)}"
            )
        config = dataclasses.replace(self.presets[preset], **overrides)
        self._check_counts(config)
        return config

    def _check_counts(self, config: Any) -> None:
        r"""Refuse a config with an integer field above ``MAX_BYTES // 8`` (:math:`2^{31}`).

        Every integer field of a config whose declaration counts (``Constraint.counts``: all but the
        ``Seed`` and ``Seeds`` fields) counts something
        (layers, width, samples, draws, steps, bootstrap resamples), and each unit costs at least one float64
        or one pass of a loop: as an array length a count above the limit alone needs more than ``MAX_BYTES``
        (16 GiB), as a loop count of even 50 floating-point operations a pass more than ``MAX_WORK``
        (:math:`10^{11}`). The largest count of any registered preset is below :math:`2 \cdot 10^7`. Smaller
        configs that are still too large are refused by the kernels' own guards when they are called.
        Tuple fields are checked entry by entry.
        """
        from theory import _validation

        from .config import constraint_of

        limit = _validation.MAX_BYTES // 8
        for f in dataclasses.fields(config):
            if not constraint_of(type(config), f.name).counts:  # seeds, reals, choices
                continue
            value = getattr(config, f.name)
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > limit:
                    raise ValueError(f"`{f.name}` of {self.name} = {_validation.plain(v)!r} is above {limit}, the "
                                     "largest count a run takes (theory._validation.MAX_BYTES / 8): as an array "
                                     "length it alone needs more memory than MAX_BYTES, as a loop count more work "
                                     "than MAX_WORK")

    def constraint(self, name: str):
        """The declared constraint of parameter ``name`` (a :class:`theory.experiments.Constraint`),
        or None for a field declared without one."""
        from .config import constraint_of

        if name not in self.fields:
            raise ValueError(f"experiment {self.name!r} has no parameter {name!r}; its parameters: "
                             f"{', '.join(self.fields)}")
        return constraint_of(self.config, name)

    def parse(self, name: str, text: str) -> Any:
        """The value of parameter ``name`` typed as ``text`` (``theory run --set NAME=TEXT``), validated by its
        declaration: ``1e3`` for an integer, ``0.1|0.5`` or ``0.1:0.9:5`` for a tuple, ``none`` where None is
        allowed.

        Raises
        ------
        ValueError
            Text that is not a value of the field (TypeError for a value of the wrong kind), or a field without
            a declared constraint.
        """
        c = self.constraint(name)
        if c is None:
            raise ValueError(f"parameter {name!r} of {self.name} declares no constraint and cannot be set from text")
        return c.validate(c.parse(text, name), name, self.config.__name__)

    def verdict_for(self, claim_id: str) -> Callable[[Any], Any]:
        """The function ``result -> Verdict`` that the check of ``claim_id`` records.

        Raises
        ------
        ValueError
            If the experiment does not measure that claim, or has no verdict for it.
        """
        if claim_id not in self.claims:
            raise ValueError(f"experiment {self.name!r} does not measure {claim_id!r}; it measures "
                             f"{', '.join(self.claims) or 'no claim'}")
        verdict = self.claim_verdicts.get(claim_id, self.verdict)
        if verdict is None:
            raise ValueError(f"experiment {self.name!r} has no verdict for {claim_id!r}")
        return verdict

    def run(self, preset: str = "check", **overrides: Any) -> Any:
        """``measure(config_for(preset, **overrides))``."""
        return self.measure(self.config_for(preset, **overrides))


def register(
    name: str,
    *,
    config: type,
    presets: Mapping[str, Any],
    measure: Callable[[Any], Any],
    verdict: Callable[[Any], Any] | None = None,
    claims: tuple[str, ...] | Mapping[str, Callable[[Any], Any] | None] = (),
    summary: Callable[[Any], dict] | None = None,
) -> Experiment:
    """Register an experiment under ``name`` (``"<module>.<name>"``) and return it.

    ``claims`` lists the claim IDs whose checks record this experiment's verdict; a mapping gives, for a claim
    whose check records something else than ``verdict(result)``, that function (None: ``verdict`` itself).

    Registering the same name again with the same measure function is a no-op (module reloads);
    with another function it is an error.
    """
    module = name.partition(".")[0]
    if module not in MODULES or "." not in name:
        raise ValueError(f"experiment name {name!r} must be '<module>.<name>' with a module of {MODULES}")
    claim_verdicts = {}
    if isinstance(claims, Mapping):
        claim_verdicts = {k: v for k, v in claims.items() if v is not None}
        claims = tuple(claims)
    entry = Experiment(name, config, presets, measure, verdict, claims, summary, claim_verdicts)
    previous = _REGISTRY.get(name)
    if previous is not None and previous.measure.__qualname__ != measure.__qualname__:
        raise ValueError(f"experiment {name!r} is registered twice, by {previous.measure} and {measure}")
    _REGISTRY[name] = entry
    return entry


def _load_all() -> None:
    for module in MODULES:
        importlib.import_module(f"theory.experiments.{module}")


def experiment(name: str) -> Experiment:
    """The experiment registered under ``name``.

    Raises
    ------
    ValueError
        If there is none; the message lists the known names.
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` of theory.experiments.experiment must be a string; got {type(name).__name__}")
    if name not in _REGISTRY:
        module = name.partition(".")[0]
        if module in MODULES:
            importlib.import_module(f"theory.experiments.{module}")
    if name not in _REGISTRY:
        _load_all()
        raise ValueError(f"no experiment named {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def experiments() -> list[str]:
    """Names of every registered experiment, sorted."""
    _load_all()
    return sorted(_REGISTRY)


def experiment_of(claim_id: str) -> Experiment:
    """The registered experiment that measures claim ``claim_id`` (``theory run CLAIM-ID`` reruns it).

    Raises
    ------
    ValueError
        If no experiment measures it; the message names the claims of the same paper that have one.
    """
    if not isinstance(claim_id, str):
        raise TypeError(f"`claim_id` of theory.experiments.experiment_of must be a string; got "
                        f"{type(claim_id).__name__}")
    paper = claim_id.partition("/")[0]
    module = paper.replace("-", "_")
    if module in MODULES:
        importlib.import_module(f"theory.experiments.{module}")
    found = [e for e in _REGISTRY.values() if claim_id in e.claims]
    if not found:
        _load_all()
        found = [e for e in _REGISTRY.values() if claim_id in e.claims]
    if not found:
        import difflib

        known = sorted({c for e in _REGISTRY.values() for c in e.claims})
        near = difflib.get_close_matches(claim_id, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise ValueError(f"no experiment measures the claim {claim_id!r}{hint} (`theory check --list` prints every "
                         "claim with its experiment)")
    return found[0]
