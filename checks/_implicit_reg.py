"""What the check files of ``implicit-reg`` (``checks/test_implicit_reg*.py``) share: the thesis aliases of a
statement, and one cache of the registered experiments' runs for the whole pytest session.

A check runs its claim's registered experiment ``implicit_reg.<name>`` at its ``"check"`` preset (:func:`run`)
and records the verdict the registry gives the claim on that run (:func:`verdict`, what
``theory run CLAIM-ID`` prints). A run is measured once per session, whichever check file asks for it first:
the records of one experiment (in one file or in several) share it. The module's name does not start with
``test_``, so pytest does not collect it.
"""

from __future__ import annotations

import functools

from theory.experiments import experiment

__all__ = ["aliases", "run", "verdict"]


def aliases(number):
    """The two thesis numberings of a statement of the paper: chapter 3 of Marion's and of Sander's theses number
    it ``number`` (for instance ``"prop-3.3"`` for Proposition 3 of the paper).

    Examples
    --------
    >>> aliases("thm-3.4")
    ('marion-thesis/thm-3.4', 'sander-thesis/thm-3.4')
    """
    return (f"marion-thesis/{number}", f"sander-thesis/{number}")


@functools.lru_cache(maxsize=None)
def run(name):
    """``implicit_reg.<name>`` at its ``"check"`` preset, measured once per session (every record shares it)."""
    return experiment(f"implicit_reg.{name}").run("check")


def verdict(claim, name):
    """The verdict of ``claim`` on the run of ``implicit_reg.<name>`` (the function the registry gives it)."""
    return experiment(f"implicit_reg.{name}").verdict_for(claim.id)(run(name))
