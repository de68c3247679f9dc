"""The Hypothesis searches of the bound experiments (Prop. 1, Assumption 1) as part of a measurement.

The checks of ``resnet-node/prop-1`` and ``resnet-node/assumption-1`` search the instances of a statement
with Hypothesis, steered (``hypothesis.target``) towards the largest ratio of a conclusion to its bound.
The search is part of the experiment's measurement (``search_examples`` of :class:`Prop1Config` and
:class:`Assumption1Config`), so that ``theory run CLAIM-ID`` reruns exactly what the check records. It is
reproducible: derandomized, without the example database and without deadline
(:data:`SEARCH_SETTINGS`), on Hypothesis's built-in ``default`` profile whatever profile is loaded, and
with Hypothesis's pool of constants taken from the source of imported modules kept empty while it runs (that
pool depends on which modules happen to be imported, so a run in ``pytest`` and one from the command line
would draw different instances).

Hypothesis is imported only when a search runs (it is a test dependency of the package, not a runtime one):
a config with ``search_examples=0`` measures its seeded draws alone without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._hypothesis import require, without_source_constants

__all__ = ["SEARCH_SETTINGS", "hypothesis_search"]

#: settings of the Hypothesis searches of the bound checks (Prop. 1, Assumption 1): 40 examples; no
#: deadline (one flow or ODE solve may take longer than Hypothesis' default 200 ms on a loaded
#: machine, which failed the check with DeadlineExceeded); derandomized and without the example
#: database, so that two runs on any machine give the same report
SEARCH_SETTINGS = {"max_examples": 40, "deadline": None, "derandomize": True, "database": None}


def hypothesis_search(strategy: Callable[[Any], Any], evaluate: Callable[[Any], tuple], max_examples: int, *,
                      label: str, where: str) -> list:
    """The rows of a reproducible Hypothesis search of ``max_examples`` examples.

    Parameters
    ----------
    strategy : callable
        ``strategy(st)`` -> the Hypothesis strategy of the instances (``st``: ``hypothesis.strategies``).
    evaluate : callable
        ``evaluate(example)`` -> ``(row, score, note)``: the row recorded for the example, the score the
        search is steered to maximise (``hypothesis.target``) and a line for Hypothesis's report.
    max_examples : int
        Number of examples (0: no search, no Hypothesis needed).
    label : str
        Label of the target.
    where : str
        The experiment, for the message when Hypothesis is missing.

    Returns
    -------
    list
        Every row, in the order Hypothesis drew the examples.
    """
    if max_examples == 0:
        return []
    require(f"{where} (set search_examples=0 to measure the seeded draws alone)")
    from hypothesis import HealthCheck, given, note, settings, strategies, target

    rows = []

    @settings(settings.get_profile("default"), **{**SEARCH_SETTINGS, "max_examples": max_examples},
              suppress_health_check=[HealthCheck.too_slow])
    @given(strategy(strategies))
    def hunt(example):
        row, score, line = evaluate(example)
        note(line)
        target(score, label=label)
        rows.append(row)

    with without_source_constants():
        hunt()
    return rows
