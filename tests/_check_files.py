"""Small check files for the tests of the claims plugin and of the ``theory`` command (``tests/test_report.py``,
``tests/test_cli.py``): a bound record needs a worst-case search besides its random instances, and these files'
bounds attach the one-instance search of :func:`bound_ratio`.

The files run where this folder is not on the import path (a pytester directory, a temporary checkout run
in a subprocess), so they carry the helper as source: :func:`check_file` puts :data:`SOURCE` at their top.
"""

from __future__ import annotations

import inspect
import textwrap

from theory.rates import bound_ratio as _bound_ratio
from theory.worst_case import WorstCase

__all__ = ["SOURCE", "bound_ratio", "check_file"]


def bound_ratio(lhs, rhs):
    """:func:`theory.rates.bound_ratio` of ``lhs`` and ``rhs`` with the one-instance search a bound record
    needs: the first instance, recorded as a :class:`theory.worst_case.WorstCase` of budget 1."""
    return _bound_ratio(lhs, rhs).with_search(
        WorstCase.from_trials([dict()], lhs[:1], rhs[:1], budget=1, seed=0, method="the instance"))


#: :func:`bound_ratio` and its imports, as the text a generated check file starts with
SOURCE = ("from theory.rates import bound_ratio as _bound_ratio\n"
          "from theory.worst_case import WorstCase\n\n\n" + inspect.getsource(bound_ratio))


def check_file(body: str) -> str:
    """The text of a check file: :data:`SOURCE`, then ``body`` (dedented), whose bounds call ``bound_ratio``.

    Examples
    --------
    >>> text = check_file('''
    ...     def test_it(claim):
    ...         claim.bound(bound_ratio([0.5], [1.0]), {"ratio_max": 1.0})
    ... ''')
    >>> text.startswith(SOURCE) and "\\ndef test_it(claim):" in text
    True
    """
    return SOURCE + "\n\n" + textwrap.dedent(body).lstrip("\n")
