"""Error contract of every public function of theory.topk and theory.isotonic, by Hypothesis.

Each function is called with arguments drawn over its whole domain and beyond it: magnitudes from
1e-320 (subnormal) to 1e300, ties, zeros, NaN and inf entries, empty and one-element arrays, 2-D arrays,
complex, object, string and bool inputs, k from -1 to n + 1, reg from 1e-300 to 1e300 and 0, negative,
NaN, inf, p from 1 + 1e-9 to 1e3 and <= 1, NaN, inf, max_iter up to 10**18. Every call must either

* raise ValueError or TypeError whose message names one of the function's arguments in backquotes and
  prints numbers plainly (no ``np.float64(...)``), or
* return finite output satisfying the function's invariants (mask in [0, 1] summing to k, magnitude
  entrywise bounded by |x| with signs of x and at least min(k, nnz(x)) nonzeros, monotone isotonic fit,
  soft sort summing to sum(x) inside [min x, max x], soft rank summing to n(n + 1)/2 inside [1, n]);

and never modify its inputs. ConvergenceWarning (documented) is allowed; any other warning fails the
test (the suite turns warnings into errors). test_every_public_name_is_fuzzed keeps the list complete.
"""

import inspect
import math
import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import theory.isotonic as iso
import theory.topk as topk
from theory.isotonic import ConvergenceWarning

EPS = np.finfo(float).eps
N_EX = int(os.environ.get("FUZZ_EXAMPLES", "200"))  # per function; ci profile (derandomised): ~15 s

# names of __all__ not fuzzed, with the reason
EXCLUDED = {
    "ReferenceResult": "a result container (dataclass) returned by the reference solvers, not a function",
    "ConvergenceWarning": "a warning class",
    "SoftJacobian": "the result object of soft_sort_with_jacobian and soft_rank_with_jacobian, fuzzed through them",
}

# ------------------------------------------------------------------------------------------- values

_mag = st.sampled_from([0.0, 5e-324, 1e-320, 1e-300, 1e-200, 1e-150, 1e-20, 1e-3, 1.0, 3.0, 1e3, 1e20,
                        1e150, 1e200, 1e300])
_FINITE = st.one_of(
    st.floats(-10.0, 10.0, allow_nan=False, allow_subnormal=False),
    st.builds(lambda m, s, f: s * m * f, _mag, st.sampled_from([-1.0, 1.0]), st.floats(0.5, 1.0)),
)
_bad_entry = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def real_vectors(draw, min_size=0, max_size=6):
    """Finite vectors with extreme magnitudes and ties (one scale for all entries or mixed)."""
    n = draw(st.integers(min_size, max_size))
    if draw(st.booleans()):
        base = np.array(draw(st.lists(_FINITE, min_size=n, max_size=n)), dtype=float)
    else:  # one scale, rounded (ties)
        scale = draw(_mag) or 1.0
        base = np.round(np.array(draw(st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n))), 1) * scale
    return base


@st.composite
def arrays_any(draw, min_size=0, max_size=6):
    """Mostly valid real vectors; sometimes NaN/inf entries, 2-D, complex, object, str, bool, int, list,
    scalar or None."""
    x = draw(real_vectors(min_size, max_size))
    kind = draw(st.sampled_from(["ok"] * 12 + ["nan", "2d", "complex", "object", "str", "bool", "int",
                                                  "list", "scalar", "none", "float32"]))
    if kind == "nan" and x.size:
        x = x.copy()
        x[draw(st.integers(0, x.size - 1))] = draw(_bad_entry)
    elif kind == "2d":
        x = np.stack([x, x])
    elif kind == "complex":
        x = x.astype(complex)
    elif kind == "object":
        x = x.astype(object)
    elif kind == "str":
        x = np.array([str(v) for v in x]) if x.size else "abc"
    elif kind == "bool":
        x = x > 0
    elif kind == "int":
        x = np.clip(x, -1e9, 1e9).astype(np.int64)
    elif kind == "list":
        x = x.tolist()
    elif kind == "scalar":
        x = float(x[0]) if x.size else 1.0
    elif kind == "none":
        x = None
    elif kind == "float32":
        x = np.clip(x, -1e30, 1e30).astype(np.float32)
    return x


def ints_any(lo, hi):
    return st.one_of(st.integers(lo, hi), st.integers(lo, hi), st.integers(lo, hi),
                     st.sampled_from([True, 1.5, np.int64(2), np.float64(1.0), "2", None, 10**18, -10**18]))


REGS = st.one_of(
    st.builds(lambda m: m, st.sampled_from([1e-300, 1e-150, 1e-20, 1e-6, 0.01, 0.5, 1.0, 3.0, 1e6, 1e20, 1e150,
                                            1e300])),
    st.floats(1e-3, 1e3),
    st.sampled_from([0.0, -1.0, np.nan, np.inf, 5e-324, np.float64(2.0), True, "1", None, 1 + 0j]),
)
PS = st.one_of(
    st.sampled_from([2.0, 2.0, 4.0 / 3.0, 1.5, 3.0, 1.0 + 1e-9, 1.0 + 1e-6, 1.001, 1.1, 5.0, 16.0, 50.0,
                     200.0, 1e3]),
    st.floats(1.01, 20.0),
    st.sampled_from([1.0, 0.5, -2.0, np.nan, np.inf, np.float64(2.5), False, "2", None]),
)
BOOLS = st.sampled_from([True, False, np.bool_(True), 1, "yes", None])
MAX_ITERS = st.sampled_from([1, 5, 50, 400, 10**6, 10**18, 0, -1, 2.5, True, None])
TOLS = st.sampled_from([0.0, 4 * EPS, 1e-8, 1.0, -1.0, np.nan, np.inf, None])
#: the root finders' knobs of theory.topk (absent, None = the default, or any value above)
KNOBS = st.fixed_dictionaries({}, optional={"max_iter": MAX_ITERS, "tol": TOLS})


def _default(knobs):
    """The default root finders: the mathematical properties hold (a small cap or a loose tol only
    keeps the error contract: a finite output, or a refusal naming an argument)."""
    return knobs.get("max_iter") is None and knobs.get("tol") is None


# ------------------------------------------------------------------------------------------ harness

def _snapshot(args):
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else (list(a) if isinstance(a, list) else a)
            for a in args]


def _unchanged(before, after):
    for b, a in zip(before, after):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), "input modified"
        elif isinstance(a, list):
            assert len(a) == len(b) and all((u == v) or (u != u and v != v) for u, v in zip(a, b)), "input modified"


_NUMPY_REPR = re.compile(r"np\.(float|int|uint|bool|complex)\w*\(")


def call(func, *args, **kwargs):
    """Call func; return its output, or None after checking the error contract of a refusal."""
    names = set(inspect.signature(func).parameters)
    arrays = list(args) + list(kwargs.values())
    before = _snapshot(arrays)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            out = func(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        named = set(re.findall(r"`(\w+)`", msg))
        assert named & names, f"{func.__name__}: message names no argument of {sorted(names)}: {msg!r}"
        assert not _NUMPY_REPR.search(msg), f"{func.__name__}: numpy scalar repr in message: {msg!r}"
        _unchanged(before, arrays)
        return None
    _unchanged(before, arrays)
    return out


def _finite(a):
    a = np.asarray(a)
    assert a.dtype == np.float64, a.dtype
    assert np.all(np.isfinite(a)), a
    return a


def _vec(x):
    return np.ascontiguousarray(np.asarray(x), np.float64)


# ---------------------------------------------------------------------------- topk: the operators

@settings(max_examples=N_EX)
@given(x=arrays_any(), k=ints_any(-1, 7), reg=REGS, p=PS, knobs=KNOBS)
def test_topk_mask(x, k, reg, p, knobs):
    y = call(topk.topk_mask, x, k, reg, p, **knobs)
    if y is None:
        return
    _finite(y)
    xs = _vec(x)
    assert y.shape == xs.shape
    assert np.all((y >= 0.0) & (y <= 1.0))
    if not _default(knobs):
        return
    rows = y.reshape(-1, xs.shape[-1])  # a batch (2-D x): each row is one mask
    assert np.all(np.abs(rows.sum(axis=1) - k) <= 8 * xs.shape[-1] * EPS * k)


def _check_magnitude(x, y, k, rescale):
    _finite(y)
    xs = _vec(x)
    assert y.shape == xs.shape
    assert np.all((y == 0.0) | (np.sign(y) == np.sign(xs))), "sign(y) not in {0, sign(x)}"
    assert np.count_nonzero(y) >= min(k, np.count_nonzero(xs)), "fewer than k nonzeros"
    if not rescale:
        assert np.all(np.abs(y) <= np.abs(xs)), "|y| > |x|"


@settings(max_examples=N_EX)
@given(x=arrays_any(), k=ints_any(-1, 7), reg=REGS, p=PS, rescale=BOOLS, knobs=KNOBS)
def test_topk_magnitude(x, k, reg, p, rescale, knobs):
    y = call(topk.topk_magnitude, x, k, reg, p, rescale=rescale, **knobs)
    if y is not None:
        if _default(knobs):
            _check_magnitude(x, y, k, bool(rescale))
        else:
            assert _finite(y).shape == _vec(x).shape


MODES = st.sampled_from(["mask", "mask", "magnitude", "magnitude", "other", 3, None])


@settings(max_examples=N_EX)
@given(x=arrays_any(), k=ints_any(-1, 7), reg=REGS, p=PS, mode=MODES, rescale=BOOLS, knobs=KNOBS)
def test_jacobian(x, k, reg, p, mode, rescale, knobs):
    J = call(topk.jacobian, x, k, reg, p, mode, rescale=rescale, **knobs)
    if J is None:
        return
    n = _vec(x).size
    assert _finite(J).shape == (n, n)
    if mode == "mask" and _default(knobs):
        scale = np.max(np.abs(J)) + 1e-300
        assert np.all(np.abs(J.sum(axis=1)) <= 64 * n * EPS * scale)


@st.composite
def with_vector(draw):
    x = draw(arrays_any())
    n = _vec(x).size if isinstance(x, np.ndarray) and x.dtype.kind in "biuf" and x.ndim == 1 else 3
    v = draw(st.one_of(real_vectors(n, n), real_vectors(n, n), arrays_any(n, n)))
    return x, v


@settings(max_examples=N_EX)
@given(xv=with_vector(), k=ints_any(-1, 7), reg=REGS, p=PS, mode=MODES, rescale=BOOLS, knobs=KNOBS)
def test_jvp(xv, k, reg, p, mode, rescale, knobs):
    x, v = xv
    out = call(topk.jvp, x, k, v, reg, p, mode, rescale=rescale, **knobs)
    if out is not None:
        assert _finite(out).shape == _vec(x).shape


@settings(max_examples=N_EX)
@given(xv=with_vector(), k=ints_any(-1, 7), reg=REGS, p=PS, mode=MODES, rescale=BOOLS, knobs=KNOBS)
def test_vjp(xv, k, reg, p, mode, rescale, knobs):
    x, v = xv
    out = call(topk.vjp, x, k, v, reg, p, mode, rescale=rescale, **knobs)
    if out is not None:
        assert _finite(out).shape == _vec(x).shape


# --------------------------------------------------------------------------------- Fenchel-Young

@st.composite
def with_target(draw):
    x = draw(arrays_any())
    n = _vec(x).size if isinstance(x, np.ndarray) and x.dtype.kind in "biuf" and x.ndim == 1 else 3
    k = draw(ints_any(-1, 7))
    kk = k if isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= n else 0
    onehot = np.zeros(n)
    onehot[:kk] = 1.0
    t = draw(st.one_of(st.just(onehot), st.just(onehot[::-1].copy()), real_vectors(n, n), arrays_any(n, n)))
    return x, t, k


@settings(max_examples=N_EX)
@given(xtk=with_target(), reg=REGS, p=PS, form=st.sampled_from(["printed", "fy", "fy", "other", 1]), knobs=KNOBS)
def test_fenchel_young_loss(xtk, reg, p, form, knobs):
    x, t, k = xtk
    out = call(topk.fenchel_young_loss, x, t, k, reg, p, form=form, **knobs)
    if out is not None:
        assert np.isfinite(out) and isinstance(out, float)


@settings(max_examples=N_EX)
@given(xtk=with_target(), reg=REGS, p=PS, knobs=KNOBS)
def test_fenchel_young_gradient(xtk, reg, p, knobs):
    x, t, k = xtk
    out = call(topk.fenchel_young_gradient, x, t, k, reg, p, **knobs)
    if out is not None:
        assert _finite(out).shape == _vec(x).shape


# --------------------------------------------------------------------------- reference solvers

REF_ITERS = st.sampled_from([1, 3, 30, 0, -1, 2.5, True, None])  # small: these are slow references


def _check_reference(res, x, k, mode):
    if res is None:
        return
    y = _finite(res.y)
    assert y.shape == _vec(x).shape


@settings(max_examples=N_EX)
@given(x=arrays_any(), k=ints_any(-1, 7), reg=REGS, mode=MODES, it=REF_ITERS, tol=TOLS, record=BOOLS)
def test_dykstra(x, k, reg, mode, it, tol, record):
    _check_reference(call(topk.dykstra, x, k, reg, mode, max_iter=it, tol=tol, record=record), x, k, mode)


@settings(max_examples=N_EX)
@given(x=arrays_any(), k=ints_any(-1, 7), reg=REGS, it=REF_ITERS, tol=TOLS, record=BOOLS)
def test_dykstra_printed(x, k, reg, it, tol, record):
    _check_reference(call(topk.dykstra_printed, x, k, reg, max_iter=it, tol=tol, record=record), x, k, "mask")


@settings(max_examples=N_EX)
@given(x=arrays_any(), k=ints_any(-1, 7), reg=REGS, p=PS, mode=MODES, it=REF_ITERS, tol=TOLS, record=BOOLS)
def test_dual_coordinate_ascent(x, k, reg, p, mode, it, tol, record):
    res = call(topk.dual_coordinate_ascent, x, k, reg, p, mode, max_iter=it, tol=tol, record=record)
    _check_reference(res, x, k, mode)


@pytest.mark.parametrize("func", [topk.dykstra, topk.dykstra_printed, topk.dual_coordinate_ascent])
def test_reference_record_with_huge_max_iter(func):
    """record=True keeps every iterate: max_iter = 10**18 is refused naming `max_iter` (it was numpy's
    'array is too big' ValueError, which names no argument)."""
    with pytest.raises(ValueError, match="`max_iter`"):
        func([3.0, 1.0, 2.0], 1, 1.0, max_iter=10**18, record=True)


# ---------------------------------------------------------------------------- soft sort and rank

def _check_soft(x, y, kind):
    xs = _vec(x)
    _finite(y)
    assert y.shape == xs.shape
    if xs.ndim > 1:  # a batch: every row is one problem (last axis)
        for xr, yr in zip(xs.reshape(-1, xs.shape[-1]), y.reshape(-1, xs.shape[-1])):
            _check_soft(xr, yr, kind)
        return
    n = xs.size
    if kind == "sort":
        scale = float(np.sum(np.abs(xs))) if n else 0.0
        assert abs(y.sum() - xs.sum()) <= 8 * n * EPS * scale + 1e-300
        if n:
            span = 8 * n * EPS * float(np.max(np.abs(xs)))
            assert np.all(y >= xs.min() - span) and np.all(y <= xs.max() + span)
    else:
        assert abs(y.sum() - n * (n + 1) / 2) <= 8 * n * EPS * n * n
        assert np.all(y >= 1 - 8 * n * EPS * n) and np.all(y <= n + 8 * n * EPS * n)


DESC = st.sampled_from([True, False, np.bool_(False), 0, "no", None])


@settings(max_examples=N_EX)
@given(x=arrays_any(), reg=REGS, p=PS, desc=DESC, knobs=KNOBS)
def test_soft_sort(x, reg, p, desc, knobs):
    y = call(topk.soft_sort, x, reg, p, desc, **knobs)
    if y is not None and _default(knobs):
        _check_soft(x, y, "sort")


@settings(max_examples=N_EX)
@given(x=arrays_any(), reg=REGS, p=PS, desc=DESC, knobs=KNOBS)
def test_soft_rank(x, reg, p, desc, knobs):
    y = call(topk.soft_rank, x, reg, p, desc, **knobs)
    if y is not None and _default(knobs):
        _check_soft(x, y, "rank")


@settings(max_examples=N_EX)
@given(xv=with_vector(), reg=REGS, p=PS, desc=DESC, knobs=KNOBS)
def test_soft_sort_jvp(xv, reg, p, desc, knobs):
    x, v = xv
    out = call(topk.soft_sort_jvp, x, v, reg, p, desc, **knobs)
    if out is not None:
        assert _finite(out).shape == _vec(x).shape


@settings(max_examples=N_EX)
@given(xv=with_vector(), reg=REGS, p=PS, desc=DESC, knobs=KNOBS)
def test_soft_rank_jvp(xv, reg, p, desc, knobs):
    x, v = xv
    out = call(topk.soft_rank_jvp, x, v, reg, p, desc, **knobs)
    if out is not None:
        assert _finite(out).shape == _vec(x).shape


@st.composite
def batches_any(draw):
    """Batches (m, n) and (2, m, n) of finite rows with ties and extreme magnitudes; sometimes a NaN or
    inf in one row, an empty last axis, zero rows, or a 0-D input."""
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 4))
    X = np.stack([draw(real_vectors(n, n)) for _ in range(m)])
    kind = draw(st.sampled_from(["ok"] * 8 + ["nan", "empty_axis", "no_rows", "3d", "scalar", "fortran"]))
    if kind == "nan":
        X[draw(st.integers(0, m - 1)), draw(st.integers(0, n - 1))] = draw(_bad_entry)
    elif kind == "empty_axis":
        X = np.empty((m, 0))
    elif kind == "no_rows":
        X = np.empty((0, n))
    elif kind == "3d":
        X = np.stack([X, X[::-1]])
    elif kind == "scalar":
        X = np.float64(1.5)
    elif kind == "fortran":
        X = np.asfortranarray(X)
    return X


def _rows_equal_1d(f, X, Y, *args):
    """Every row of a batch result equals the 1-D call on that row, bit for bit."""
    Xs = _vec(X).reshape(-1, X.shape[-1])
    for xr, yr in zip(Xs, Y.reshape(Xs.shape)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            np.testing.assert_array_equal(yr, f(xr, *args))


@settings(max_examples=N_EX)
@given(X=batches_any(), reg=REGS, p=PS, desc=DESC, which=st.sampled_from(["sort", "rank"]))
def test_soft_batches(X, reg, p, desc, which):
    f = topk.soft_sort if which == "sort" else topk.soft_rank
    Y = call(f, X, reg, p, desc)
    if Y is None:
        if np.ndim(X) >= 2 and X.shape[-1] and X.size and not np.all(np.isfinite(X)):
            with pytest.raises(ValueError, match=r"`x`.* row "):
                f(X, reg, p, desc)
        return
    if p <= 50.0:  # beyond, a root solve may stop at max_iter (ConvergenceWarning; an open limit of the 1-D code)
        _check_soft(X, Y, which)
    _rows_equal_1d(f, X, Y, reg, p, desc)


@settings(max_examples=N_EX)
@given(X=batches_any(), reg=REGS, p=PS, desc=DESC, which=st.sampled_from(["sort", "rank"]),
       seed=st.integers(0, 3), bad=st.sampled_from(["ok"] * 5 + ["shape", "nan", "str"]), knobs=KNOBS)
def test_soft_with_jacobian(X, reg, p, desc, which, seed, bad, knobs):
    f = topk.soft_sort_with_jacobian if which == "sort" else topk.soft_rank_with_jacobian
    out = call(f, X, reg, p, desc, **knobs)
    if out is None:
        return
    y, jac = out
    if p <= 50.0 and _default(knobs):
        _check_soft(X, y, which)
    np.testing.assert_array_equal(y, call(topk.soft_sort if which == "sort" else topk.soft_rank, X, reg, p, desc,
                                          **knobs))
    u = np.random.default_rng(seed).standard_normal(y.shape)
    if bad == "shape":
        u = u[..., :-1]
    elif bad == "nan" and u.size:
        u.flat[0] = np.nan
    elif bad == "str":
        u = u.astype(str)
    for method in (jac.jvp, jac.vjp):
        g = call(method, u)
        if g is not None:
            assert _finite(g).shape == y.shape
        elif bad == "ok":  # a refusal of valid vectors is an overflow of the derivative only
            pass


AXES = st.one_of(st.integers(-4, 3), st.sampled_from([10**18, -10**18, 1.0, 0.5, True, np.bool_(False), "0", None,
                                                       [0], np.int64(0), np.float64(-1.0)]))
_AXIS_OPS = {
    "soft_sort": lambda X, v, reg, p, axis: topk.soft_sort(X, reg, p, axis=axis),
    "soft_rank": lambda X, v, reg, p, axis: topk.soft_rank(X, reg, p, axis=axis),
    "soft_sort_jvp": lambda X, v, reg, p, axis: topk.soft_sort_jvp(X, v, reg, p, axis=axis),
    "soft_rank_jvp": lambda X, v, reg, p, axis: topk.soft_rank_jvp(X, v, reg, p, axis=axis),
    "soft_sort_with_jacobian": lambda X, v, reg, p, axis: topk.soft_sort_with_jacobian(X, reg, p, axis=axis),
    "soft_rank_with_jacobian": lambda X, v, reg, p, axis: topk.soft_rank_with_jacobian(X, reg, p, axis=axis),
    "topk_mask": lambda X, v, reg, p, axis: topk.topk_mask(X, 1, reg, p, axis=axis),
    "topk_magnitude": lambda X, v, reg, p, axis: topk.topk_magnitude(X, 1, reg, p, axis=axis),
    "jacobian": lambda X, v, reg, p, axis: topk.jacobian(X, 1, reg, p, axis=axis),
    "jvp": lambda X, v, reg, p, axis: topk.jvp(X, 1, v, reg, p, axis=axis),
    "vjp": lambda X, v, reg, p, axis: topk.vjp(X, 1, v, reg, p, axis=axis),
}


@settings(max_examples=N_EX)
@given(X=batches_any(), reg=REGS, p=PS, axis=AXES, name=st.sampled_from(sorted(_AXIS_OPS)),
       vshape=st.sampled_from(["x", "x", "x", "moved", "short"]))
def test_axis_any(X, reg, p, axis, name, vshape):
    """Every operator with an ``axis`` over its whole domain and beyond it: the error contract (the
    message names ``axis`` or another argument), and a result along a valid axis equal to the
    last-axis result on the moved array, bit for bit."""
    V = np.random.default_rng(0).standard_normal(np.shape(X))
    if vshape == "moved" and V.ndim >= 2:
        V = np.moveaxis(V, 0, -1)
    elif vshape == "short" and V.ndim >= 1:
        V = V[..., :-1]
    f = _AXIS_OPS[name]
    names = {"x", "tangent", "cotangent", "k", "reg", "p", "axis"}
    before = _snapshot([X, V])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            out = f(X, V, reg, p, axis)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert set(re.findall(r"`(\w+)`", msg)) & names, f"{name}: message names no argument: {msg!r}"
        assert not _NUMPY_REPR.search(msg), f"{name}: numpy scalar repr in message: {msg!r}"
        _unchanged(before, [X, V])
        event(f"axis: {type(exc).__name__}")
        return
    _unchanged(before, [X, V])
    event("axis: ran")
    a = int(axis) % np.ndim(X)
    Xm = np.ascontiguousarray(np.moveaxis(X, a, -1))
    Vm = np.ascontiguousarray(np.moveaxis(V, a, -1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = f(Xm, Vm, reg, p, -1)
    if name.endswith("with_jacobian"):
        (out, jac), (ref, jacm) = out, ref
        np.testing.assert_array_equal(jac.todense(), jacm.todense())
    if name != "jacobian":
        ref = np.moveaxis(ref, -1, a)
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


# ------------------------------------------------------------------------------------ isotonic

@st.composite
def iso_args(draw):
    y = draw(arrays_any(0, 7))
    n = _vec(y).size if isinstance(y, np.ndarray) and y.dtype.kind in "biuf" and y.ndim == 1 else 3
    w = draw(st.one_of(st.none(), st.just(np.ones(n)),
                       st.lists(st.sampled_from([1e-300, 1e-3, 0.5, 1.0, 7.0, 1e3, 1e300]), min_size=n,
                                max_size=n).map(np.array),
                       arrays_any(n, n)))
    c = draw(st.one_of(st.none(), st.none(), real_vectors(n, n), arrays_any(n, n)))
    return y, w, c


@settings(max_examples=2 * N_EX)
@given(ywc=iso_args(), p=PS, inc=DESC, it=MAX_ITERS, tol=TOLS,
       weights_kw=st.sampled_from([False, False, False, True]))
def test_isotonic_regression(ywc, p, inc, it, tol, weights_kw):
    y, w, c = ywc
    kw = {"weights": w} if weights_kw else {"w": w}
    if tol is None:
        out = call(iso.isotonic_regression, y, p=p, increasing=inc, c=c, max_iter=it, **kw)
    else:
        out = call(iso.isotonic_regression, y, p=p, increasing=inc, c=c, max_iter=it, tol=tol, **kw)
    if out is None:
        return
    fit, blocks = out
    _finite(fit)
    n = fit.size
    assert blocks[0] == 0 and blocks[-1] == n and np.all(np.diff(blocks) > 0 if n else True)
    d = np.diff(fit)
    assert np.all(d >= 0.0) if bool(inc) else np.all(d <= 0.0)


# ------------------------------------------------------------------ topk: k-support functions


@settings(max_examples=N_EX)
@given(y=arrays_any(), k=ints_any(-1, 7), return_z=BOOLS)
def test_ksupport_norm_squared(y, k, return_z):
    out = call(topk.ksupport_norm_squared, y, k, return_z=return_z)
    if out is None:
        return
    value, z = out if return_z else (out, None)
    assert isinstance(value, float) and math.isfinite(value) and value >= 0.0
    if z is not None:
        _finite(z)


@settings(max_examples=N_EX)
@given(y=arrays_any(), k=ints_any(-1, 7), return_z=BOOLS)
def test_ksupport_negentropy(y, k, return_z):
    out = call(topk.ksupport_negentropy, y, k, return_z=return_z)
    if out is None:
        return
    value, z = out if return_z else (out, None)
    assert isinstance(value, float) and math.isfinite(value)
    if z is not None:
        _finite(z)


# ------------------------------------------------------------------------------------ coverage

FUZZED = {
    "topk": {"topk_mask", "topk_magnitude", "jacobian", "jvp", "vjp", "fenchel_young_loss",
             "fenchel_young_gradient", "dykstra", "dykstra_printed", "dual_coordinate_ascent", "soft_sort",
             "soft_rank", "soft_sort_jvp", "soft_rank_jvp", "ksupport_norm_squared", "ksupport_negentropy",
             "soft_sort_with_jacobian", "soft_rank_with_jacobian"},
    "isotonic": {"isotonic_regression"},
}


#: the functions whose specs above draw the root finders' ``max_iter`` and ``tol`` (MAX_ITERS, TOLS): every
#: public function with both keywords (the reference solvers' iteration knobs included)
FUZZED_KNOBS = {"topk_mask", "topk_magnitude", "jacobian", "jvp", "vjp", "fenchel_young_loss",
                "fenchel_young_gradient", "dykstra", "dykstra_printed", "dual_coordinate_ascent",
                "isotonic_regression", "soft_sort", "soft_rank", "soft_sort_jvp", "soft_rank_jvp",
                "soft_sort_with_jacobian", "soft_rank_with_jacobian"}


@pytest.mark.parametrize("mod", [topk, iso], ids=["topk", "isotonic"])
def test_every_max_iter_and_tol_is_fuzzed(mod):
    """A public function taking ``max_iter`` and ``tol`` has them drawn by its spec (FUZZED_KNOBS)."""
    for name in mod.__all__:
        obj = getattr(mod, name)
        if not inspect.isfunction(obj):
            continue
        params = set(inspect.signature(obj).parameters)
        assert ({"max_iter", "tol"} <= params) == (name in FUZZED_KNOBS), name


@pytest.mark.parametrize("mod", [topk, iso], ids=["topk", "isotonic"])
def test_every_public_name_is_fuzzed(mod):
    """Each name of __all__ is fuzzed above or excluded with a reason (a new public function must be added)."""
    key = mod.__name__.rsplit(".", 1)[1]
    names = set(mod.__all__)
    assert names == FUZZED[key] | (names & set(EXCLUDED)), sorted(names - FUZZED[key] - set(EXCLUDED))
    for name in FUZZED[key]:
        assert callable(getattr(mod, name))


# ------------------------------------------------------- regressions of what the fuzzing found

def test_regression_messages_print_plain_numbers():
    """k = np.float64(1.0) was reported as 'got np.float64(1.0)'."""
    with pytest.raises(TypeError, match=r"`k`.*got 1\.0\.$"):
        topk.topk_mask([1.0, 0.0], np.float64(1.0))


def test_regression_soft_rank_ties_tiny_reg():
    """p = 2, three ties, reg = 1e-300: the block mean of s = -x/reg (~1e300) was subtracted from s,
    leaving its rounding (~3e284) in the ranks; the exact soft rank of ties is their mean rank."""
    np.testing.assert_array_equal(topk.soft_rank([2.5, 2.5, 2.5], 1e-300, 2.0), [2.0, 2.0, 2.0])


def test_regression_soft_jvps_singletons():
    """n = 1 and singleton blocks: 0/0 and inf * 0 of the unused block weights raised RuntimeWarning."""
    assert topk.soft_sort_jvp([0.0], [0.0], 1.0, 4.0 / 3.0).tolist() == [0.0]
    assert topk.soft_rank_jvp([1.0], [0.0], 1e-300, 3.0).tolist() == [0.0]
    assert topk.soft_rank_jvp([0.0], [-1e20], 1e-300, 2.0).tolist() == [0.0]


def test_regression_soft_rank_large_p_refusal_names_argument():
    """p = 1000, n = 3: the isotonic problem's pooled values overflow; the refusal named `y` of the
    isotonic function, not an argument of soft_rank."""
    with warnings.catch_warnings(), pytest.raises(ValueError, match="`p` of theory.topk.soft_rank"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        topk.soft_rank([0.0, 5e-324, 1.0], 1e-300, 1000.0)


def test_regression_jacobian_tiny_reg():
    """Mask, p = 2, reg = 1e-300: the rank-one term (1/reg)^2/den overflowed although J = (I - 1/2)/reg
    is finite."""
    J = topk.jacobian([0.0, 0.0], 1, 1e-300, 2.0)
    np.testing.assert_allclose(J, np.array([[0.5, -0.5], [-0.5, 0.5]]) / 1e-300, rtol=4 * EPS)


def test_regression_dual_coordinate_ascent_overflow():
    """reg = 1e-300, p = 4/3: reg ** (1 - q) raised OverflowError (a Python float power)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = topk.dual_coordinate_ascent([0.0, 0.0], 1, 1e-300, 4.0 / 3.0, max_iter=1, tol=0.0)
    assert np.all(np.isfinite(res.y))  # one sweep only: not converged, but no exception


def test_regression_mask_p43_tiny_differences():
    """p = 4/3 with score differences ~1e-24 in normalised units: the closed-form cubic's outputs summed
    to 1 - 3.9e-14; the pooled block's outputs now come from the anchored form (as for other p)."""
    y = topk.topk_mask([0.0, 5e-324], 1, 1e-300, 4.0 / 3.0)
    assert abs(y.sum() - 1.0) <= 2 * EPS
