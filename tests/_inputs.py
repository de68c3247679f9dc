"""Shared Hypothesis strategies for the contract tests: arrays of every dtype and shape a user might
pass, so that a public function can be shown to raise only our own TypeError or ValueError."""

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

KINDS = ["float64", "float32", "int64", "bool", "int-list"]


def elements(dtype, bound=None, int_bound=None):
    """Element strategy for ``dtype``: unbounded floats include NaN and inf; ``bound`` caps |value|
    (for float32 at the nearest float32); integers lie in [-int_bound, int_bound] (default 10**6
    with a bound, the full int64 range without)."""
    if dtype == "float64":
        return st.floats(-bound, bound) if bound else st.floats(allow_nan=True, allow_infinity=True)
    if dtype == "float32":
        b32 = float(np.float32(min(bound, 1e38))) if bound else None  # exactly representable
        return st.floats(-b32, b32, width=32) if bound else st.floats(width=32)
    if dtype == "int64":
        if int_bound is None:
            int_bound = 10**6 if bound else 2**63 - 1
        b = min(int(int_bound), 2**63 - 1)
        return st.integers(-b, b)
    if dtype == "complex128":
        return st.complex_numbers(max_magnitude=10.0)
    return None  # bool


@st.composite
def array_like(draw, shapes, shape=None, bound=None, numeric=False, nonfinite=False, extra_kinds=(),
               int_bound=None):
    """An array of float64/float32/int64/bool or an int list; unless ``numeric`` also complex, a list of
    strings or ``extra_kinds`` ("none" gives None). The shape is drawn from ``shapes`` unless given.
    ``nonfinite``: sometimes (1 in 4) put one NaN or inf into a float64 array."""
    kinds = KINDS if numeric else KINDS + ["complex128", "strings", *extra_kinds]
    kind = draw(st.sampled_from(kinds))
    if shape is None:
        shape = draw(shapes)
    if kind == "none":
        return None
    if kind == "strings":
        return draw(st.lists(st.text(max_size=2), max_size=4))
    if kind == "int-list":
        return draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3))).tolist()
    arr = draw(hnp.arrays(np.dtype(kind), shape, elements=elements(kind, bound, int_bound)))
    if nonfinite and kind == "float64" and arr.size and draw(st.integers(0, 3)) == 0:
        arr = arr.copy()
        arr.flat[draw(st.integers(0, arr.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return arr


def assert_outputs_equal(got, expected):
    """Every output is float64, of the expected shape and bit-for-bit equal."""
    for key, value in expected.items():
        assert got[key].dtype == np.float64, key
        assert got[key].shape == value.shape, key
        np.testing.assert_array_equal(got[key], value, err_msg=key)
