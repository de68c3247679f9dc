"""One OpenMP runtime per process for Numba's kernels and PyTorch.

Numba's ``omp`` threading layer (the one chosen where the system has GNU OpenMP, as on Debian with GCC) links the
system's ``libgomp`` under its file name ``libgomp.so.1.0.0``; PyTorch's wheel ships its own ``libgomp.so.1``.
Whichever loads first decides: with Numba's layer started first, PyTorch's request for ``libgomp.so.1`` is served
by the library already loaded (its soname is ``libgomp.so.1``), and the process has one runtime; with PyTorch
imported first, Numba's layer later loads the system's library as a second runtime beside PyTorch's, each with
its own threads. Two runtimes in one process is a configuration neither project supports (a full test run with
two, and scikit-learn's copy as a third, crashed inside PyTorch's backward pass).

:func:`share_openmp_runtime` starts Numba's layer where PyTorch is not imported yet. The ``theory`` commands that
run kernels call it, and so do the test suite's ``conftest.py`` and the claims plugin; a program that imports
PyTorch itself and calls the kernels can call it first (it costs the import of Numba).
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["share_openmp_runtime", "loaded_openmp_libraries"]

_RUNTIME_NAMES = ("libgomp", "libiomp", "libomp")  # GNU, Intel and LLVM OpenMP


def share_openmp_runtime() -> bool:
    """Start Numba's threading layer unless PyTorch is already imported, so that both share one OpenMP runtime.

    Idempotent; after PyTorch's import it does nothing, since the runtime PyTorch loaded cannot be changed any
    more (see the module's docstring for why the order matters).

    Returns
    -------
    bool
        Whether Numba's layer was started by this call with PyTorch not yet imported (False once PyTorch is).

    Examples
    --------
    >>> import theory
    >>> isinstance(theory.share_openmp_runtime(), bool)
    True
    """
    if "torch" in sys.modules:
        return False
    import numba

    numba.get_num_threads()  # selects and loads the threading layer (and with it the OpenMP runtime)
    return True


def loaded_openmp_libraries() -> set[str] | None:
    """The files of the OpenMP runtimes mapped into this process (from ``/proc/self/maps``; None where that file
    does not exist, as outside Linux). More than one means the process runs two runtimes side by side."""
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return None
    found = set()
    for line in maps.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6 and Path(fields[-1]).name.startswith(_RUNTIME_NAMES):
            found.add(fields[-1])
    return found
