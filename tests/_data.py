"""Skips for tests that need a data set the environment may lack, and a child process for scikit-learn.

scikit-learn is never imported into the test process: it loads its own copy of the OpenMP runtime beside the
one Numba's ``omp`` threading layer and PyTorch share. The digits are read from its data file
(:mod:`theory.experiments._digits`), and the tests of scikit-learn's own functions run in a child process.
"""

import subprocess
import sys
import textwrap

import pytest

from theory.experiments import _digits

_NO_DIGITS = "the digits ship with scikit-learn (pip install 'theory[gpu]')"

#: mark a test (or ``pytestmark``) that trains on the digits
needs_digits = pytest.mark.skipif(not _digits.sklearn_available(), reason=_NO_DIGITS)


def skip_without_digits():
    """Skip the calling test where scikit-learn's installation (which ships the digits) is missing."""
    if not _digits.sklearn_available():
        pytest.skip(_NO_DIGITS)


def run_with_sklearn(code: str, timeout: float = 600.0) -> str:
    """Run ``code`` (Python source, dedented) in a child process and return its standard output; skip where
    scikit-learn is missing, fail with the child's output where it exits non-zero."""
    if not _digits.sklearn_available():
        pytest.skip("scikit-learn is not installed (pip install 'theory[oracle]')")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
