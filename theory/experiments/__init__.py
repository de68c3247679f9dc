"""Experiments as library functions: one definition for checks, figures, benchmarks and sweeps.

One module per paper key (``theory.experiments.scaling``, ...). An experiment is a pure function
``measure(config) -> result`` with a frozen, validated config dataclass and named presets
(``"check"``: what ``pytest checks/`` runs; ``"paper"``: the documents' own sizes); its verdict
function (measured against predicted) sits beside it, so that checks/, the negative controls in
tests/ and the figure scripts import the package and never checks/. Each module registers its
experiments by name (:func:`register`); :func:`experiment` finds one, :func:`experiments` lists
them::

    from theory.experiments import experiment
    fig7 = experiment("scaling.fig7")
    result = fig7.run("check", draws=4)        # the "check" preset with one field replaced
"""

from theory._errors import check_package as _check_package  # noqa: F401  (a shadowing folder stops here)

from ._figures import Figure, Printed, figure, figure_of_claim, figures, register_figure
from ._registry import Experiment, experiment, experiment_of, experiments, register
from .config import (
    Bool,
    Choice,
    Choices,
    Config,
    Constraint,
    Custom,
    Int,
    Ints,
    OrNone,
    Real,
    Reals,
    Seed,
    Seeds,
    Tuple,
    field,
)

__all__ = [
    "Experiment", "experiment", "experiment_of", "experiments", "register",
    "Figure", "Printed", "figure", "figure_of_claim", "figures", "register_figure",
    "Config", "Constraint", "field", "Int", "Seed", "Seeds", "Real", "Bool", "Choice", "Tuple", "Ints", "Reals", "Choices",
    "OrNone", "Custom",
]
