"""What the experiments that search their instances with Hypothesis share (resnet-node Prop. 1 and Assumption 1,
implicit-reg's Lemma 18, Props. 7 and 11 and B.5, scaling's Prop. 11 constant).

A search is part of a measurement so that ``theory run CLAIM-ID`` redraws what the check records: derandomised,
without the example database, on Hypothesis's built-in ``default`` profile, and with Hypothesis's pool of constants
taken from the source of the imported modules kept empty while it runs (that pool depends on which modules happen to
be imported, so a search in pytest and one from the command line would otherwise draw different instances).
Hypothesis is a test extra of the package, imported only when a search runs: :func:`require` says how to install it.
"""

from __future__ import annotations

import contextlib

__all__ = ["require", "without_source_constants"]


def require(where: str):
    """The ``hypothesis`` module, or an ImportError naming ``where`` and the line that installs it."""
    try:
        import hypothesis
    except ImportError as exc:  # pragma: no cover - Hypothesis is installed with the test extra
        raise ImportError(f"{where} searches its instances with Hypothesis, a test extra of theory: "
                          "pip install 'theory[test]' (or pip install hypothesis)") from exc
    return hypothesis


@contextlib.contextmanager
def without_source_constants(*, clear_cache: bool = False):
    """Keep Hypothesis's pool of constants drawn from the source of imported modules empty meanwhile (the suite's
    ``conftest.py`` does the same for a whole session). It replaces an internal of Hypothesis, and is a no-op where
    that internal does not exist; ``clear_cache`` also empties Hypothesis's cache of those constants before and
    after."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        yield
        return
    before = getattr(providers, "_get_local_constants", None)
    if before is None or not hasattr(providers, "Constants"):  # pragma: no cover
        yield
        return
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None) if clear_cache else None
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    if cache is not None:
        cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = before
        if cache is not None:
            cache.clear()
