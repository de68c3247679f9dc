"""Skips for tests that need a data set the environment may lack."""

import pytest

from theory.experiments import _digits


def skip_without_digits():
    """Skip the calling test where scikit-learn's installation (which ships the digits) is missing; the digits
    are read from its file, so scikit-learn itself is never imported into the test process."""
    if not _digits.sklearn_available():
        pytest.skip("the digits ship with scikit-learn (pip install 'theory[gpu]')")
