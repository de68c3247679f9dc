"""theory._alloc.empty: huge-page aligned float64 outputs for the trajectory kernels."""

import gc
import resource
import sys

import numpy as np
import pytest

from theory import _alloc


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 5), (1,), (7, 3), ((4 << 20) // 8 - 1,)])
def test_small_arrays_are_plain_numpy_arrays(shape):
    a = _alloc.empty(shape)
    assert a.shape == shape and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.owndata


@pytest.mark.parametrize("shape", [((4 << 20) // 8,), (10_001, 1, 64), (191, 256, 64), (3, 5, 7, 11, 13, 37)])
def test_large_arrays_start_on_a_huge_page_and_hold_their_own_memory(shape):
    a = _alloc.empty(shape)
    if a.nbytes < _alloc.MIN_BYTES:
        pytest.skip("below the threshold")
    assert a.shape == shape and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
    assert a.ctypes.data % _alloc.HUGE_PAGE == 0
    raw = a.base
    while raw.base is not None:
        raw = raw.base
    lo, hi = raw.ctypes.data, raw.ctypes.data + raw.nbytes
    assert lo <= a.ctypes.data and a.ctypes.data + a.nbytes <= hi  # inside the buffer it keeps alive
    last = a.ctypes.data + -(-a.nbytes // _alloc.HUGE_PAGE) * _alloc.HUGE_PAGE
    assert last <= hi  # the last huge page the array touches lies inside the buffer
    assert raw.nbytes - a.nbytes <= 2 * _alloc.HUGE_PAGE
    a[...] = 1.5  # every entry writable; sums exactly
    assert a.sum() == 1.5 * a.size


def test_two_arrays_do_not_overlap_and_outlive_their_names():
    a = _alloc.empty((1 << 20,))
    b = _alloc.empty((1 << 20,))
    assert not np.shares_memory(a, b)
    a[:] = 1.0
    b[:] = 2.0
    view = a[::2]
    del a
    gc.collect()
    assert (view == 1.0).all() and (b == 2.0).all()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="page-fault counts of Linux")
def test_no_more_page_faults_than_numpy():
    """Writing an aligned 24 MB array takes no more first-touch faults than np.empty's (far fewer where the
    system backs the madvised range with huge pages; never more anywhere)."""
    def faults(alloc):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        x = alloc((3 << 20,))
        x.fill(0.0)
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0

    plain = min(faults(np.empty) for _ in range(3))
    aligned = min(faults(_alloc.empty) for _ in range(3))
    assert aligned <= plain + 2
