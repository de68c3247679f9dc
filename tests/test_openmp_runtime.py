"""One OpenMP runtime in the test process (see the root conftest.py): Numba's threading layer and PyTorch share
the system's GNU OpenMP, and scikit-learn (which ships its own copy) is never imported here (tests/_data.py)."""

import sys

import numpy as np
import pytest
from numba import njit, prange

from theory._openmp import loaded_openmp_libraries


def _openmp_libraries():
    found = loaded_openmp_libraries()
    if found is None:
        pytest.skip("reads /proc/self/maps (Linux)")
    return found


@njit(parallel=True, cache=False)
def _parallel_sum(x):
    s = 0.0
    for i in prange(x.size):
        s += x[i]
    return s


def test_numba_and_torch_share_one_openmp_runtime():
    torch = pytest.importorskip("torch")
    assert _parallel_sum(np.ones(10_000)) == 10_000.0
    x = torch.ones(64, 3, 8, 8, requires_grad=True)
    torch.nn.Conv2d(3, 4, 3)(x).sum().backward()
    libraries = _openmp_libraries()
    assert len(libraries) <= 1, sorted(libraries)
    assert "sklearn" not in sys.modules


def test_share_openmp_runtime_in_a_fresh_process():
    """In a child (no conftest): started first, Numba's layer and PyTorch share one runtime; called after PyTorch's
    import, the function does nothing and says so."""
    pytest.importorskip("torch")
    import json
    import subprocess

    code = """if True:
        import json, numpy as np
        from numba import njit, prange
        from theory._openmp import loaded_openmp_libraries, share_openmp_runtime
        started = share_openmp_runtime()
        import torch
        @njit(parallel=True)
        def f(x):
            s = 0.0
            for i in prange(x.size):
                s += x[i]
            return s
        f(np.ones(1000))
        x = torch.ones(8, 3, 8, 8, requires_grad=True)
        torch.nn.Conv2d(3, 4, 3)(x).sum().backward()
        print(json.dumps([started, share_openmp_runtime(), sorted(loaded_openmp_libraries())]))
    """
    _openmp_libraries()  # skips outside Linux
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    started, again, libs = json.loads(out.stdout)
    assert started is True and again is False and len(libs) <= 1, libs
