"""One OpenMP runtime in the test process (see the root conftest.py): Numba's threading layer and PyTorch share
the system's GNU OpenMP, and scikit-learn (which ships its own copy) is never imported here (tests/_data.py)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit, prange


def _openmp_libraries():
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        pytest.skip("reads /proc/self/maps (Linux)")
    names = set()
    for line in maps.read_text().splitlines():
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        if any(tag in Path(path).name for tag in ("libgomp", "libiomp", "libomp")):
            names.add(path)
    return names


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
