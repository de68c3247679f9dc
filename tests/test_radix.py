"""The stable radix argsort of float64 keys (theory.topk._radix), the sort of the quadratic soft sort and
soft rank: its permutation is NumPy's stable argsort exactly (increasing, and of -x for decreasing),
ties by increasing index, -0.0 and +0.0 one tie, on random, tied, signed-zero, huge and subnormal
inputs, long and short runs of keys that share their high half (the second phase), n = 0 and 1,
every digit width, and the keys decode to the sorted values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from theory.topk import _radix
from theory.topk._radix import radix_argsort


def _stable(x, descending):
    return np.argsort(-x if descending else x, kind="stable")


def _check(x, bits=_radix.BITS):
    x = np.asarray(x, dtype=np.float64)
    for desc in (False, True):
        order, keys = _radix._radix_argsort(np.ascontiguousarray(x), desc, bits)
        np.testing.assert_array_equal(order, _stable(x, desc))
        vals = _radix._values(keys, desc)
        # the decoded values are x[order] (bit for bit), a negative zero reading back as +0.0
        want = x[order] + 0.0
        assert np.array_equal(vals.view(np.int64), want.view(np.int64))


def _inputs():
    rng = np.random.default_rng(0)
    yield rng.standard_normal(1000)
    yield np.round(rng.standard_normal(5000), 1)  # many ties
    yield rng.choice([0.0, -0.0, 1.0, -1.0], 3000)  # signed zeros in long runs of ties
    yield np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, -0.0])
    yield np.array([np.finfo(float).max, -np.finfo(float).max, 5e-324, -5e-324, 0.0, -0.0, 1e-300, -1e-310])
    yield rng.standard_normal(2000) * 10.0 ** rng.integers(-307, 307, 2000)  # every exponent
    yield rng.integers(-3, 4, 4000) * 5e-324  # subnormals only
    yield np.full(50, 2.5)  # one key: every digit skipped, the identity
    yield np.full(50, -0.0)
    yield np.ones(1)
    yield np.empty(0)
    yield np.arange(20000, dtype=float)[::-1].copy()  # reversed: every pass moves every entry
    yield 1.0 + np.arange(3000) * 2.0**-52  # differ in the lowest digit only
    # equal high halves of the keys: one long run finished on the low halves (ties inside)
    yield 1.0 + rng.integers(0, 100, 3000) * 2.0**-52
    yield -(1.0 + rng.integers(0, 100, 3000) * 2.0**-52)
    # many runs of 17 to 255 entries (the short-digit pass) and of 2 to 16 (insertion), with ties
    yield (rng.integers(0, 40, 5000) + 1.0) * (1.0 + rng.integers(0, 30, 5000) * 2.0**-52)
    yield np.repeat(rng.standard_normal(300), rng.integers(1, 40, 300)) * (1.0 + rng.integers(0, 3, 1) * 2.0**-52)


@pytest.mark.parametrize("idx", range(len(list(_inputs()))))
def test_radix_argsort_is_stable_argsort(idx):
    x = list(_inputs())[idx]
    _check(x)


@pytest.mark.parametrize("bits", [1, 4, 8, 16])
def test_radix_argsort_other_digit_widths(bits):
    rng = np.random.default_rng(bits)
    _check(np.round(rng.standard_normal(3000), 2), bits)
    _check(np.array([0.0, -0.0, -1.0, 1e-310, -1e308]), bits)


def test_radix_argsort_public_helper():
    x = np.array([2.0, -0.0, 1.0, 0.0, 2.0])
    np.testing.assert_array_equal(radix_argsort(x), [1, 3, 2, 0, 4])
    np.testing.assert_array_equal(radix_argsort(x, descending=True), [0, 4, 2, 1, 3])
    order, vals = radix_argsort(x, return_values=True)
    assert vals.tolist() == [0.0, 0.0, 1.0, 2.0, 2.0] and not np.signbit(vals).any()
    np.testing.assert_array_equal(radix_argsort([3, 1, 2]), [1, 2, 0])  # converted to float64
    with pytest.raises(ValueError, match="1-D"):
        radix_argsort(np.zeros((2, 2)))


def test_order_key_is_monotone():
    """Keys compare as the numbers: increasing keys for increasing values, complemented for descending."""
    vals = np.array([-np.finfo(float).max, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, np.finfo(float).max])
    inc = [int(_radix.order_key(v, False)) for v in vals]
    dec = [int(_radix.order_key(v, True)) for v in vals]
    assert inc[3] == inc[4] and dec[3] == dec[4]  # -0.0 and +0.0 one key
    assert all(inc[i] < inc[i + 1] for i in range(len(vals) - 1) if i != 3)
    assert all(dec[i] > dec[i + 1] for i in range(len(vals) - 1) if i != 3)


_floats = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True, width=64)


@settings(deadline=None, max_examples=300)
@given(hnp.arrays(np.float64, st.integers(0, 300),
                  elements=st.one_of(_floats, st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324]),
                                     st.integers(-40, 40).map(lambda k: 1.5 + k * 2.0**-52))),
       st.sampled_from([3, 8, 11]))
def test_radix_argsort_property(x, bits):
    """Property: for every finite array (ties, signed zeros, subnormals and runs of keys sharing their
    high half drawn often), every digit width, both directions: the permutation is NumPy's stable
    argsort and the keys decode to x[order]."""
    _check(x, bits)


# ------------------------------------------------- the soft sort / rank kernels that sort by radix
# theory.topk._batch._rows_rx* sort inside the kernel; they must give the bits of the kernels fed
# NumPy's stable argsort (_batch._rank_rows / _batch._sort_rows, the reference's arithmetic).

from theory.topk import _batch  # noqa: E402


def _kernel_rows(seed, m, n):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    X[0] = np.round(X[0], 1)  # ties
    if m > 1:
        X[1] = rng.choice([0.0, -0.0, 1.0, -1.0], n)  # signed zeros tied with each other
    if m > 2:
        X[2] = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)  # every magnitude
    if m > 3:
        X[3] = 7.0  # constant row: one key, no pass
    if m > 4:
        X[4, : n // 2] = 1e308  # overflowing pooled sums: FALLBACK, like the old kernel
        X[4, n // 2:] = -1e308
    return X


def _old_rank(X, reg):
    m, n = X.shape
    O = np.argsort(X, axis=1, kind="stable")
    Y, R = np.empty((m, n)), np.empty((m, n + 1), dtype=np.intp)
    NB, st = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.intp)
    _batch._rank_rows(X, O, reg, Y, R, NB, st)
    return Y, O, R, NB, st


def _old_sort(X, reg, desc):
    m, n = X.shape
    O = np.argsort(-X, axis=1, kind="stable")
    S = np.take_along_axis(X, O[:, ::-1], axis=1)
    Y, R = np.empty((m, n)), np.empty((m, n + 1), dtype=np.intp)
    NB, st = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.intp)
    _batch._sort_rows(S, reg, desc, Y, R, NB, st)
    return Y, O, R, NB, st


def _new(X, kind, flag, reg, parallel, keep=True):
    m, n = X.shape
    Y, O, R = np.empty((m, n)), np.empty((m, n), dtype=np.intp), np.empty((m, n + 1), dtype=np.intp)
    NB, st = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.intp)
    if parallel:
        _batch._rows_rx_par(X, kind, flag, reg, Y, O, R, NB, st, keep, 3)
    else:
        _batch._rows_rx(X, kind, flag, reg, Y, O, R, NB, st, keep, 0, m)
    return Y, O, R, NB, st


def _same(new, old):
    Yn, On, Rn, NBn, stn = new
    Yo, Oo, Ro, NBo, sto = old
    np.testing.assert_array_equal(stn, sto)
    ok = sto == _batch.OK
    assert np.array_equal(Yn[ok].view(np.int64), Yo[ok].view(np.int64))
    np.testing.assert_array_equal(NBn[ok], NBo[ok])
    np.testing.assert_array_equal(On[ok], Oo[ok])
    for r in np.flatnonzero(ok):
        np.testing.assert_array_equal(Rn[r, :NBn[r] + 1], Ro[r, :NBo[r] + 1])


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("n", [1, 2, 9, 1000, 5000])
def test_radix_kernels_equal_stable_argsort_kernels(n, parallel):
    """Each row of the radix kernels (rank of x and of -x, sort with its permutation, decreasing and
    increasing, and the values-only sort, from NumPy's sort or by radix) equals the kernels fed NumPy's stable argsort bit for bit:
    values, permutation, blocks and row status (fallback rows included)."""
    X = _kernel_rows(n, 6, n)
    for reg in (1e-3, 1.0, 40.0):
        _same(_new(X, 0, False, reg, parallel), _old_rank(X, reg))
        _same(_new(X, 0, True, reg, parallel), _old_rank(-X, reg))
        for desc in (True, False):
            old = _old_sort(X, reg, desc)
            _same(_new(X, 1, desc, reg, parallel), old)
            for kind, Xin in ((2, np.sort(X, axis=1)), (1, X)):  # values only: NumPy's sort, or radix
                Yv, _, _, NBv, stv = _new(Xin, kind, desc, reg, parallel, keep=False)
                np.testing.assert_array_equal(stv, old[4])
                ok = stv == _batch.OK
                assert np.array_equal(Yv[ok].view(np.int64), old[0][ok].view(np.int64))
