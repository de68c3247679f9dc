"""Tests of :mod:`theory.isotonic` (paper key ``topk``, Section 7.5, Eq. (7.5) with p = 2).

What is checked (each kernel against an independent reference, and its input contract):

1. A hand-worked case; SciPy's ``scipy.optimize.isotonic_regression`` as the independent reference,
   x and blocks equal bit for bit on random inputs with many ties, weights, decreasing fits, and
   magnitudes 1e-300 .. 1e300 (and, where SciPy overflows to inf/NaN, a finite fit from the rescaled
   path, compared with SciPy on the scaled-down problem).
2. Properties: monotone output, constant blocks of maximal length (adjacent block values differ),
   each block's value is the weighted mean of its y (Eq. (7.6), p = 2), KKT conditions of the
   isotonic least-squares problem, no feasible small perturbation improves the objective.
3. The private kernel's status code and caller-allocated outputs.
4. The contract: a table of bad inputs, accepted input kinds (lists, ints, float32, read-only,
   strided, Fortran), no mutation, p != 2 raises NotImplementedError, Hypothesis fuzz.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import isotonic_regression as scipy_ir

from theory.isotonic import isotonic_regression
from theory import _pav as _kernels

FUNC = "theory.isotonic.isotonic_regression"


def scipy_ref(y, w=None, increasing=True):
    r = scipy_ir(y, weights=w, increasing=increasing)
    return r.x, r.blocks


def random_case(rng, kind):
    """Random (y, w) of a few kinds; 'ties' draws small integers so that equal values and equal
    pooled means are frequent."""
    n = int(rng.integers(1, 80))
    if kind == "ties":
        y = rng.integers(-2, 3, n).astype(float)
        w = rng.integers(1, 4, n).astype(float)
    elif kind == "normal":
        y = rng.standard_normal(n) + np.linspace(0.0, rng.uniform(0, 3), n)
        w = rng.uniform(0.1, 3.0, n)
    else:  # "scale": one of the extreme magnitudes of the brief, unit-ish weights (SciPy stays finite)
        y = rng.standard_normal(n) * 10.0 ** rng.choice([-300, -150, 0, 150, 300])
        w = rng.uniform(0.5, 2.0, n)
    return y, w


# ---------------------------------------------------------------------------------------------------
# 1. Hand-worked case and SciPy
# ---------------------------------------------------------------------------------------------------


def test_hand_worked():
    # y = (1, 3, 2, 4), w = (1, 1, 3, 1): 3 > 2 violates, pool {3, 2} with weights {1, 3}:
    # (1*3 + 3*2) / 4 = 9/4 = 2.25; 1 <= 2.25 <= 4 holds, so x = (1, 2.25, 2.25, 4), blocks [0, 1, 3, 4].
    x, blocks = isotonic_regression([1.0, 3.0, 2.0, 4.0], w=[1.0, 1.0, 3.0, 1.0])
    assert x.tolist() == [1.0, 2.25, 2.25, 4.0]
    assert blocks.tolist() == [0, 1, 3, 4]
    # decreasing: y = (3, 1, 2): 1 < 2 violates, pool to 1.5; blocks [0, 1, 3]
    x, blocks = isotonic_regression([3, 1, 2], increasing=False)
    assert x.tolist() == [3.0, 1.5, 1.5] and blocks.tolist() == [0, 1, 3]
    # ties are pooled into one block (SciPy's convention): y = (2, 2) -> one block
    assert isotonic_regression([2.0, 2.0])[1].tolist() == [0, 2]
    # all decreasing: one block at the mean
    x, blocks = isotonic_regression([3.0, 2.0, 1.0])
    assert x.tolist() == [2.0, 2.0, 2.0] and blocks.tolist() == [0, 3]


@pytest.mark.parametrize("kind", ["ties", "normal", "scale"])
@pytest.mark.parametrize("increasing", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_bitwise_equal_to_scipy(kind, increasing, weighted):
    rng = np.random.default_rng(hash((kind, increasing, weighted)) % 2**32)
    for _ in range(300):
        y, w = random_case(rng, kind)
        w = w if weighted else None
        x, blocks = isotonic_regression(y, w, increasing=increasing)
        xs, bs = scipy_ref(y, w, increasing)
        np.testing.assert_array_equal(x, xs)
        np.testing.assert_array_equal(blocks, bs)
        assert x.dtype == np.float64 and blocks.dtype == np.intp


def test_large_n_equal_to_scipy():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 50, 200_000).astype(float) + np.linspace(0, 20, 200_000)
    w = rng.uniform(0.5, 2.0, y.size)
    for inc in (True, False):
        x, blocks = isotonic_regression(y, w, increasing=inc)
        xs, bs = scipy_ref(y, w, inc)
        np.testing.assert_array_equal(x, xs)
        np.testing.assert_array_equal(blocks, bs)


def test_overflow_is_rescaled():
    # Pooled weighted sums of values near 1e300 with weights 1e10 overflow: SciPy returns inf/NaN,
    # ours rescales y by a power of two and agrees with SciPy on y / 2^k times 2^k.
    rng = np.random.default_rng(2)
    y = rng.uniform(-1.0, 1.0, 50) * 1e300
    w = rng.uniform(1.0, 2.0, 50) * 1e10
    with np.errstate(all="ignore"):
        xs_raw = scipy_ir(y, weights=w).x
    assert not np.all(np.isfinite(xs_raw))  # the case really overflows in SciPy
    x, blocks = isotonic_regression(y, w)
    k = -(2 ** 10)  # any exact power of two that keeps SciPy finite
    xs, bs = scipy_ref(np.ldexp(y, k), w)
    assert np.all(np.isfinite(x))
    np.testing.assert_array_equal(blocks, bs)
    np.testing.assert_allclose(x, np.ldexp(xs, -k), rtol=1e-13)


def test_tiny_magnitudes():
    # 3 > 1 pools to 2e-300, which ties with the next 2e-300 and absorbs it (ties pool): [0, 3, 4]
    y = np.array([3e-300, 1e-300, 2e-300, 5e-300])
    x, blocks = isotonic_regression(y)
    assert blocks.tolist() == [0, 3, 4]
    np.testing.assert_allclose(x, [2e-300, 2e-300, 2e-300, 5e-300], rtol=1e-15)


# ---------------------------------------------------------------------------------------------------
# 2. Properties
# ---------------------------------------------------------------------------------------------------


def objective(x, y, w):
    return float(np.sum(w * (x - y) ** 2))


@pytest.mark.parametrize("kind", ["ties", "normal"])
def test_properties(kind):
    rng = np.random.default_rng(3 if kind == "ties" else 4)
    for _ in range(200):
        y, w = random_case(rng, kind)
        x, blocks = isotonic_regression(y, w)
        assert np.all(np.diff(x) >= 0)
        assert blocks[0] == 0 and blocks[-1] == y.size and np.all(np.diff(blocks) > 0)
        vals = x[blocks[:-1]]
        assert np.all(np.diff(vals) > 0)  # maximal constant runs: adjacent blocks differ
        for a, b in zip(blocks[:-1], blocks[1:]):
            assert np.all(x[a:b] == x[a])
            # Eq. (7.6), p = 2: the block value is the weighted mean of its y
            np.testing.assert_allclose(x[a], np.sum(w[a:b] * y[a:b]) / np.sum(w[a:b]), rtol=1e-12, atol=1e-12)
            # KKT: with g = w (x - y), partial sums of g inside a block are <= 0 and total 0
            g = np.cumsum(w[a:b] * (x[a:b] - y[a:b]))
            scale = np.sum(w[a:b] * np.abs(y[a:b])) + 1.0
            assert np.all(g[:-1] <= 1e-12 * scale) and abs(g[-1]) <= 1e-12 * scale
        # no small feasible perturbation improves: x + t d for monotone directions d
        f0 = objective(x, y, w)
        for _ in range(5):
            d = np.sort(rng.standard_normal(y.size))  # nondecreasing, so x + t d stays feasible
            for t in (1e-3, 1e-1):
                assert objective(x + t * d, y, w) >= f0 - 1e-12 * (1 + f0)
        assert objective(x, y, w) <= objective(np.full_like(x, np.average(y, weights=w)), y, w) + 1e-12


def test_reversal_symmetry():
    rng = np.random.default_rng(5)
    for _ in range(100):
        y, w = random_case(rng, "normal")
        x_dec, b_dec = isotonic_regression(y, w, increasing=False)
        x_inc, b_inc = isotonic_regression(-y, w)
        np.testing.assert_allclose(x_dec, -x_inc, rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(b_dec, b_inc)


def test_kernel_caller_allocated_and_status():
    y = np.array([1.0, 3.0, 2.0, 4.0])
    w = np.array([1.0, 1.0, 3.0, 1.0])
    x, wb, r = np.empty(4), np.empty(4), np.full(5, -1, dtype=np.intp)
    nb, status = _kernels._pav(y, w, False, x, wb, r)
    assert status == _kernels.OK and nb == 3
    assert r[:4].tolist() == [0, 1, 3, 4] and x.tolist() == [1.0, 2.25, 2.25, 4.0]
    assert y.tolist() == [1.0, 3.0, 2.0, 4.0] and w.tolist() == [1.0, 1.0, 3.0, 1.0]  # inputs untouched
    yb = np.array([1e308, 1.5e308, 1e308])
    with np.errstate(all="ignore"):
        nb, status = _kernels._pav(yb, np.ones(3), True, np.empty(3), np.empty(3), np.empty(4, dtype=np.intp))
    assert status == _kernels.NONFINITE
    x, _ = isotonic_regression(yb)  # the API rescales
    # 1e308 <= 1.5e308, then 1.5e308 >= 1e308 pools to their mean 1.25e308
    np.testing.assert_allclose(x, [1e308, 1.25e308, 1.25e308], rtol=1e-15)


# ---------------------------------------------------------------------------------------------------
# 3. The contract
# ---------------------------------------------------------------------------------------------------

BAD = [
    (dict(y="abc"), TypeError, "`y` of " + FUNC + " must be a real numeric array"),
    (dict(y=[1 + 2j, 3]), TypeError, "`y` of " + FUNC + " must be a real numeric array"),
    (dict(y=[[1.0, 2.0]]), ValueError, "`y` of " + FUNC + " must have 1 dimension"),
    (dict(y=[1.0, np.nan]), ValueError, "`y` of " + FUNC + " must be finite"),
    (dict(y=[1.0, np.inf]), ValueError, "`y` of " + FUNC + " must be finite"),
    (dict(y=[1.0, 2.0], w=[1.0]), ValueError, "`w` of " + FUNC + " must have shape \\(2,\\)"),
    (dict(y=[1.0, 2.0], w=[1.0, 0.0]), ValueError, "`w` of " + FUNC + " must be positive"),
    (dict(y=[1.0, 2.0], w=[1.0, -1.0]), ValueError, "`w` of " + FUNC + " must be positive"),
    (dict(y=[1.0, 2.0], w=[1.0, np.nan]), ValueError, "`w` of " + FUNC + " must be finite"),
    (dict(y=[1.0, 2.0], w=[1e308, 1e308]), ValueError, "`w` of " + FUNC + " must have a finite sum"),
    (dict(y=[1.0, 2.0], w=["a", "b"]), TypeError, "`w` of " + FUNC),
    (dict(y=[1.0], p=1.0), ValueError, "`p` of " + FUNC + " must lie in \\(1, inf\\)"),
    (dict(y=[1.0], p=np.nan), ValueError, "`p` of " + FUNC + " must lie in \\(1, inf\\)"),
    (dict(y=[1.0], p="2"), TypeError, "`p` of " + FUNC + " must be a real number"),
    (dict(y=[1.0], p=True), TypeError, "`p` of " + FUNC + " must be a real number"),
    (dict(y=[1.0], increasing=1), TypeError, "`increasing` of " + FUNC + " must be a bool"),
    (dict(y=[1.0], increasing="no"), TypeError, "`increasing` of " + FUNC + " must be a bool"),
]


@pytest.mark.parametrize("kwargs, exc, pattern", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_inputs(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        isotonic_regression(**kwargs)


def test_p_choices():
    # the documented implemented values are exactly the accepted ones
    from theory.isotonic._api import P_IMPLEMENTED

    assert P_IMPLEMENTED == "(1, inf)"  # p != 2: tests/test_isotonic_pnorm.py
    for p in (2, 2.0, np.float32(2.0), np.int64(2), 4 / 3, 3.0):
        isotonic_regression([2.0, 1.0], p=p)


@pytest.mark.parametrize("make", [
    lambda y: y.tolist(),
    lambda y: np.round(y * 10).astype(np.int64),
    lambda y: y.astype(np.float32),
    lambda y: np.asfortranarray(y),
    lambda y: np.repeat(y, 2)[::2],
    lambda y: np.require(y, requirements="C").copy(),
], ids=["list", "int", "float32", "fortran", "strided", "copy"])
def test_input_kinds(make):
    rng = np.random.default_rng(6)
    y = rng.standard_normal(30)
    w = rng.uniform(0.5, 2.0, 30)
    yy, ww = make(y), make(w)
    if isinstance(yy, np.ndarray) and yy.dtype.kind == "i":
        ww = np.ones(30, dtype=np.int64)
    x, blocks = isotonic_regression(yy, ww)
    xs, bs = scipy_ref(np.asarray(yy, dtype=float), np.asarray(ww, dtype=float))
    assert x.dtype == np.float64
    np.testing.assert_array_equal(x, xs)
    np.testing.assert_array_equal(blocks, bs)


def test_read_only_and_no_mutation():
    rng = np.random.default_rng(7)
    y = rng.standard_normal(40)
    w = rng.uniform(0.5, 2.0, 40)
    y0, w0 = y.copy(), w.copy()
    for inc in (True, False):
        isotonic_regression(y, w, increasing=inc)
        isotonic_regression(y, increasing=inc)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(w, w0)
    y.flags.writeable = False
    w.flags.writeable = False
    x, blocks = isotonic_regression(y, w)
    np.testing.assert_array_equal(x, scipy_ref(y0, w0)[0])
    x[0] = 123.0  # the output is the caller's own array


def test_edge_sizes():
    x, blocks = isotonic_regression([])
    assert x.shape == (0,) and x.dtype == np.float64 and blocks.tolist() == [0]
    x, blocks = isotonic_regression(3.0)
    assert x.tolist() == [3.0] and blocks.tolist() == [0, 1]
    x, blocks = isotonic_regression([5], w=[2.0], increasing=False)
    assert x.tolist() == [5.0] and blocks.tolist() == [0, 1]


@settings(deadline=None, max_examples=200)
@given(
    y=st.one_of(
        hnp.arrays(hnp.scalar_dtypes(), hnp.array_shapes(min_dims=0, max_dims=3, max_side=6)),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8),
        st.none(), st.text(max_size=3)),
    w=st.one_of(st.none(), hnp.arrays(hnp.floating_dtypes(), hnp.array_shapes(max_dims=2, max_side=6)),
                st.floats()),
    p=st.one_of(st.just(2.0), st.floats(), st.integers(-3, 3)),
    increasing=st.one_of(st.booleans(), st.integers(0, 1)),
)
def test_fuzz_only_our_errors(y, w, p, increasing):
    try:
        with np.errstate(all="ignore"):
            x, blocks = isotonic_regression(y, w, p=p, increasing=increasing)
    except NotImplementedError as exc:  # documented: only for a valid p other than 2
        assert isinstance(p, (int, float)) and np.isfinite(p) and p > 1 and p != 2, str(exc)
        return
    except (TypeError, ValueError) as exc:
        assert re.search(r"`(y|w|p|increasing)` of " + FUNC, str(exc)), str(exc)
        return
    assert x.dtype == np.float64 and np.all(np.isfinite(x))
    assert blocks[0] == 0 and blocks[-1] == x.size


# ---------------------------------------------------------------------------------------------------
# 4. Validation fused into the p = 2 kernel (finiteness of y, positivity and finite sum of w)
# ---------------------------------------------------------------------------------------------------


def test_kernel_weight_status():
    y = np.array([3.0, 1.0, 2.0, 0.5, 4.0])
    for w, want in [([1.0, 1.0, 0.0, 1.0, 1.0], _kernels.BAD_WEIGHT),   # absorbed by a look-ahead
                    ([1.0, -1.0, 1.0, 1.0, 1.0], _kernels.BAD_WEIGHT),  # pooled on arrival
                    ([1.0, 1.0, 1.0, 1.0, np.nan], _kernels.BAD_WEIGHT),  # pushed
                    ([-0.0, 1.0, 1.0, 1.0, 1.0], _kernels.BAD_WEIGHT),  # first element
                    ([1e308, 1.0, 1.0, 1.0, 1e308], _kernels.WEIGHT_SUM),
                    ([1.0, 1.0, 1.0, 1.0, 1.0], _kernels.OK)]:
        with np.errstate(all="ignore"):
            _, status = _kernels._pav(y, np.array(w), False, np.empty(5), np.empty(5), np.empty(6, dtype=np.intp))
        assert status == want, (w, status)
    # the same weights with unit=True are ignored
    _, status = _kernels._pav(y, np.array([-1.0]), True, np.empty(5), np.empty(5), np.empty(6, dtype=np.intp))
    assert status == _kernels.OK


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("increasing", [True, False])
def test_nonfinite_y_found_by_the_kernel(bad, weighted, increasing):
    # every position of a sequence that pools heavily (pushed, pooled, absorbed, popped elements),
    # also next to values near the overflow threshold (the rescaling path must not hide the NaN)
    rng = np.random.default_rng(11)
    base = rng.standard_normal(25)[::-1].copy()
    for scale in (1.0, 1.5e308 / np.max(np.abs(base))):
        for j in range(base.size):
            y = base * scale
            y[j] = bad
            w = rng.uniform(0.5, 2.0, y.size) if weighted else None
            with pytest.raises(ValueError, match="`y` of " + FUNC + " must be finite"):
                isotonic_regression(y, w, increasing=increasing)


def test_error_precedence_unchanged():
    # y is reported before w, w before p, as when every check ran up front
    with pytest.raises(ValueError, match="`y` of " + FUNC + " must be finite"):
        isotonic_regression([1.0, np.nan], w=[1.0, -1.0])
    with pytest.raises(ValueError, match="`y` of " + FUNC + " must be finite"):
        isotonic_regression([np.inf, 1.0], w=[1e308, 1e308])
    with pytest.raises(ValueError, match="`w` of " + FUNC + " must be finite"):
        isotonic_regression([1.0, 2.0], w=[np.inf, 1.0])
    with pytest.raises(ValueError, match="`w` of " + FUNC + " must be positive"):
        isotonic_regression([1.0, 2.0, 0.0], w=[1.0, 0.0, 2.0], increasing=False)
    with pytest.raises(ValueError, match="`y` of " + FUNC + " must be finite"):
        isotonic_regression([1.0, np.nan], p=3.0)
    with pytest.raises(ValueError, match="`w` of " + FUNC + " must be positive"):
        isotonic_regression([1.0, 2.0], w=[1.0, 0.0], p=3.0)


def test_large_n_nonfinite_and_bad_weight_at_the_end():
    rng = np.random.default_rng(12)
    n = 200_000
    y = np.linspace(0.0, 3.0, n) + rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, n)
    y_bad = y.copy()
    y_bad[-1] = np.nan
    with pytest.raises(ValueError, match="`y` of " + FUNC + " must be finite"):
        isotonic_regression(y_bad, w)
    w_bad = w.copy()
    w_bad[-1] = 0.0
    with pytest.raises(ValueError, match="`w` of " + FUNC + " must be positive"):
        isotonic_regression(y, w_bad)
    x, blocks = isotonic_regression(y, w)
    xs, bs = scipy_ref(y, w)
    np.testing.assert_array_equal(x, xs)
    np.testing.assert_array_equal(blocks, bs)


def test_fast_path_same_as_generic_path():
    # float64 C-contiguous arrays with p = 2 and valid defaults skip the generic conversion; any other
    # spelling of the same call (lists, p = 2 as an int, np.float64 tol, strided views) takes the generic
    # path: identical fits, blocks and errors
    rng = np.random.default_rng(13)
    y = rng.standard_normal(300) + np.linspace(0.0, 2.0, 300)
    w = rng.uniform(0.5, 2.0, 300)
    for ww in (None, w):
        for inc in (True, False):
            x0, b0 = isotonic_regression(y, ww, increasing=inc)
            wl = None if ww is None else ww.tolist()
            x1, b1 = isotonic_regression(y.tolist(), wl, p=2, increasing=inc, tol=np.float64(1e-12), max_iter=3)
            x2, b2 = isotonic_regression(np.repeat(y, 2)[::2], None if ww is None else np.repeat(ww, 2)[::2],
                                         increasing=inc)
            xs, bs = scipy_ref(y, ww, increasing=inc)
            for x, b in ((x0, b0), (x1, b1), (x2, b2)):
                np.testing.assert_array_equal(x, xs)
                np.testing.assert_array_equal(b, bs)
    for kwargs, exc, pattern in [(dict(max_iter=0), ValueError, "`max_iter`"),
                                 (dict(max_iter=2.0), TypeError, "`max_iter`"),
                                 (dict(tol=-1.0), ValueError, "`tol`"), (dict(tol=np.nan), ValueError, "`tol`"),
                                 (dict(w=w[:-1]), ValueError, "`w` of .* must have shape"),
                                 (dict(w=-w), ValueError, "`w` of .* must be positive")]:
        with pytest.raises(exc, match=pattern):
            isotonic_regression(y, **kwargs)
    y_ro = y.copy()
    y_ro.flags.writeable = False  # generic path (a read-only array is copied): same result
    np.testing.assert_array_equal(isotonic_regression(y_ro)[0], isotonic_regression(y)[0])
