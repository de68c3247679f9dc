"""Batches of the soft sort and soft rank (``topk`` §7.3, Prop. 7.5) and their Jacobians in one pass
(Prop. 7.8): every row of a batch equals the 1-D call bit for bit (serial and multi-threaded row
loops, the fallback rows), the outputs do not depend on the order of ties, the hard regime is the
exact sort, value-and-Jacobian against central finite differences and the transpose identity,
agreement with torchsort where both compute the same operator, and the errors of bad batches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from theory.isotonic import ConvergenceWarning
from theory.topk import (SoftJacobian, soft_rank, soft_rank_jvp, soft_rank_with_jacobian, soft_sort, soft_sort_jvp,
                         soft_sort_with_jacobian)
from theory.topk import _batch, _soft

P_SOME = (2.0, 1.5, 4.0 / 3.0, 3.0)


def _batch_x(seed, shape, ties=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    if ties:  # rounding makes ties, some rows constant
        X = np.round(X, 1)
        X.reshape(-1, shape[-1])[0] = 0.25
    return X


def _rows(X):
    return X.reshape(-1, X.shape[-1])


@pytest.mark.parametrize("p", P_SOME)
@pytest.mark.parametrize("shape", [(5, 9), (2, 3, 7), (1, 1), (64, 1000)])  # the last one runs on every core
@pytest.mark.parametrize("desc", [True, False])
def test_rows_equal_1d_bit_for_bit(p, shape, desc):
    if shape == (64, 1000) and p != 2.0:
        pytest.skip("other p loop over rows with the 1-D code; the size only matters for the compiled p = 2 path")
    X = _batch_x(1, shape)
    T = np.random.default_rng(2).standard_normal(shape)
    reg = 0.3
    for f, fj, fv in ((soft_sort, soft_sort_with_jacobian, soft_sort_jvp),
                      (soft_rank, soft_rank_with_jacobian, soft_rank_jvp)):
        Y = f(X, reg, p, desc)
        Y2, jac = fj(X, reg, p, desc)
        G = fv(X, T, reg, p, desc)
        assert Y.shape == G.shape == X.shape and isinstance(jac, SoftJacobian)
        np.testing.assert_array_equal(Y2, Y)
        np.testing.assert_array_equal(jac.jvp(T), G)
        for x, y, t, g in zip(_rows(X), _rows(Y), _rows(T), _rows(G)):
            np.testing.assert_array_equal(y, f(x, reg, p, desc))
            np.testing.assert_array_equal(g, fv(x, t, reg, p, desc))
        V = jac.vjp(T)
        for x, t, v in zip(_rows(X), _rows(T), _rows(V)):
            np.testing.assert_array_equal(v, fj(x, reg, p, desc)[1].vjp(t))


@pytest.mark.parametrize("desc", [True, False])
def test_compiled_rows_equal_reference_path(desc):
    """p = 2: the compiled rows reproduce the NumPy reference (_sort_core, _rank_core: stable argsort,
    np.add.reduceat) bit for bit, with ties, over scales from 1e-300 to 1e300."""
    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(1, 200))
        x = np.round(rng.standard_normal(n) * 3, int(rng.integers(0, 3))) * 10.0 ** rng.integers(-300, 300)
        reg = float(10.0 ** rng.uniform(-3, 3))
        _, ys = _soft._sort_core(x, reg, 2.0, "f")
        np.testing.assert_array_equal(soft_sort(x, reg, 2.0, desc), ys if desc else ys[::-1])
        try:
            _, yr = _soft._rank_core(x if desc else -x, reg, 2.0, "f")
        except ValueError:
            with pytest.raises(ValueError, match="`reg`"):
                soft_rank(x, reg, 2.0, desc)
            continue
        np.testing.assert_array_equal(soft_rank(x, reg, 2.0, desc), yr)


def test_fallback_row_in_batch():
    """A row whose pooled sums overflow (x / reg near 1e308) is recomputed by the rescaling 1-D path;
    the other rows stay compiled; each equals its 1-D call."""
    X = np.array([[1e308, -1e308, 1e308, -1e308], [0.1, 0.3, 0.2, 0.4], [1.0, 1.0, 1.0, 1.0]])
    status = np.empty(3, dtype=np.intp)
    _batch._rank_rows(X, np.argsort(X, axis=1), 1.0, np.empty((3, 4)), np.empty((3, 5), dtype=np.intp),
                      np.empty(3, dtype=np.intp), status)
    assert status.tolist() == [_batch.FALLBACK, _batch.OK, _batch.OK]
    Y = soft_rank(X, 1.0)
    for x, y in zip(X, Y):
        np.testing.assert_array_equal(y, soft_rank(x, 1.0))
    G = soft_rank_with_jacobian(X, 1.0)[1].vjp(np.ones_like(X))
    for x, g in zip(X, G):
        np.testing.assert_array_equal(g, soft_rank_jvp(x, np.ones(4), 1.0))


def test_npsum_is_numpy_reduceat():
    rng = np.random.default_rng(4)
    for trial in range(300):
        n = int(rng.integers(1, 2000))
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
        if trial % 7 == 0:
            a[:] = -0.0
        cuts = np.unique(np.r_[0, rng.integers(0, n, int(rng.integers(0, 6)))])
        b = np.r_[cuts, n]
        mine = np.array([_batch._npsum(a, b[k], b[k + 1]) for k in range(cuts.size)])
        assert np.array_equal(mine.view(np.int64), np.add.reduceat(a, cuts).view(np.int64))


def test_stable_ties_is_stable_argsort():
    rng = np.random.default_rng(5)
    for n in (1, 2, 17, 1000, 20000):
        key = rng.integers(0, max(1, n // 5), n).astype(float)
        key[rng.integers(0, n, n // 3 + 1)] = -0.0  # -0.0 and 0.0 are one tie
        key[rng.integers(0, n, n // 3 + 1)] = 0.0
        o = np.argsort(key)
        _batch._stable_ties(key, o)
        np.testing.assert_array_equal(o, np.argsort(key, kind="stable"))
        o = np.argsort(key)[::-1].copy()  # decreasing: ties by increasing index, the stable argsort of -key
        _batch._stable_ties(key, o)
        np.testing.assert_array_equal(o, np.argsort(-key, kind="stable"))


@pytest.mark.parametrize("p", P_SOME)
def test_outputs_do_not_depend_on_tie_order(p):
    """Permuting x (many ties) permutes the soft rank and leaves the soft sort unchanged, bit for bit,
    whichever order the unstable sort gives the ties."""
    rng = np.random.default_rng(6)
    x = rng.integers(0, 5, 300).astype(float)
    y, r = soft_sort(x, 0.7, p), soft_rank(x, 0.7, p)
    for _ in range(5):
        perm = rng.permutation(x.size)
        np.testing.assert_array_equal(soft_sort(x[perm], 0.7, p), y)
        np.testing.assert_array_equal(soft_rank(x[perm], 0.7, p), r[perm])


@pytest.mark.parametrize("p", P_SOME)
def test_hard_regime_is_exact_sort_in_batches(p):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 40)) * 10.0 ** rng.uniform(-5, 5, (50, 1))
    S = np.sort(X, axis=1)
    g = np.sign(S) * np.abs(S) ** (p - 1.0)
    thr = 1.0 / np.max(np.diff(g, axis=1))  # every row's hard threshold (topk_soft docstring)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        Y = soft_sort(X, 0.5 * thr, p, descending=False)
    np.testing.assert_array_equal(Y, S)
    x = rng.standard_normal(10**5)
    np.testing.assert_array_equal(soft_sort(x, 1e-9, 2.0, descending=False), np.sort(x))


@pytest.mark.parametrize("p", P_SOME)
@pytest.mark.parametrize("which", ["sort", "rank"])
@pytest.mark.parametrize("desc", [True, False])
def test_value_and_vjp_against_finite_differences(p, which, desc):
    """One call gives y and J; J v matches central differences of the value, and <u, J v> = <J^T u, v>
    (the VJP is the transpose of the JVP), row by row of a batch."""
    f = soft_sort if which == "sort" else soft_rank
    fj = soft_sort_with_jacobian if which == "sort" else soft_rank_with_jacobian
    rng = np.random.default_rng(9)
    X = rng.standard_normal((4, 8))
    reg = 0.8
    Y, jac = fj(X, reg, p, desc)
    np.testing.assert_array_equal(Y, f(X, reg, p, desc))
    V, U = rng.standard_normal(X.shape), rng.standard_normal(X.shape)
    h = 1e-6
    fd = (f(X + h * V, reg, p, desc) - f(X - h * V, reg, p, desc)) / (2 * h)
    np.testing.assert_allclose(jac.jvp(V), fd, rtol=1e-6, atol=1e-7)
    lhs = np.sum(U * jac.jvp(V), axis=-1)
    rhs = np.sum(jac.vjp(U) * V, axis=-1)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-12)
    D = jac.todense()
    assert D.shape == X.shape + (8,)
    np.testing.assert_allclose(np.einsum("rij,ri->rj", D, U), jac.vjp(U), rtol=1e-12, atol=1e-14)


def test_torchsort_agreement():
    """Where both compute the same operator (torchsort's "l2" soft sort and soft rank are the
    increasing p = 2 operators; rank 1 for the smallest), agreement to 1e-11 relative on a batch;
    the derivative (torch autograd) too."""
    torch = pytest.importorskip("torch")
    torchsort = pytest.importorskip("torchsort")
    rng = np.random.default_rng(10)
    X = rng.standard_normal((16, 200))
    U = rng.standard_normal(X.shape)
    for reg in (0.05, 1.0, 20.0):
        for which in ("sort", "rank"):
            xt = torch.tensor(X, dtype=torch.float64, requires_grad=True)
            tf = torchsort.soft_sort if which == "sort" else torchsort.soft_rank
            yt = tf(xt, regularization="l2", regularization_strength=reg)
            (yt * torch.tensor(U)).sum().backward()
            fj = soft_sort_with_jacobian if which == "sort" else soft_rank_with_jacobian
            y, jac = fj(X, reg, 2.0, False)
            ref = yt.detach().numpy()
            assert np.max(np.abs(y - ref)) <= 1e-11 * np.max(np.abs(ref))
            g_ref = xt.grad.numpy()
            assert np.max(np.abs(jac.vjp(U) - g_ref)) <= 1e-11 * max(1.0, np.max(np.abs(g_ref)))


@pytest.mark.parametrize("f", [soft_sort, soft_rank, soft_sort_with_jacobian, soft_rank_with_jacobian])
def test_bad_batches(f):
    X = np.zeros((3, 4))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"`x` of theory\.topk\.\w+ must be finite; row 2 "):
        f(X)
    Z = np.zeros((2, 3, 4))
    Z[1, 0, 3] = -np.inf
    with pytest.raises(ValueError, match=r"`x`.*row \(1, 0\)"):
        f(Z)
    with pytest.raises(ValueError, match=r"`x`.*non-empty last axis"):
        f(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="`x`"):
        f(2.0)
    with pytest.raises(TypeError, match="`x`"):
        f(np.zeros((2, 2), dtype=complex))
    assert (f(np.zeros((0, 3)))[0] if f.__name__.endswith("jacobian") else f(np.zeros((0, 3)))).shape == (0, 3)
    big = np.array([[1.0, 2.0], [1e300, -1e300]])
    if "sort" in f.__name__:
        with pytest.raises(ValueError, match="`reg`.*row 1"):  # reg * max|x| overflows in row 1 only
            f(big, reg=1e300)
    else:
        with pytest.raises(ValueError, match="`reg`"):  # x / reg overflows in row 1
            f(big, reg=1e-300)


def test_bad_vectors_of_the_jacobian():
    X = np.zeros((3, 4))
    _, jac = soft_sort_with_jacobian(X)
    with pytest.raises(ValueError, match="`tangent`"):
        jac.jvp(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="`cotangent`"):
        jac.vjp(np.full((3, 4), np.nan))
    with pytest.raises(TypeError, match="`cotangent`"):
        jac.vjp(np.full((3, 4), "a"))
    with pytest.raises(ValueError, match="`tangent`"):
        soft_rank_jvp(X, np.zeros(4))


# ------------------------------------------------------------------------ top-k operators on batches

@pytest.mark.parametrize("p", [2.0, 4.0 / 3.0, 1.5])
def test_topk_rows_equal_1d(p):
    from theory.topk import jacobian, jvp, topk_magnitude, topk_mask, vjp

    X = _batch_x(11, (2, 3, 9))
    T = np.random.default_rng(12).standard_normal(X.shape)
    k, reg = 3, 0.4
    out = {"mask": topk_mask(X, k, reg, p), "mag": topk_magnitude(X, k, reg, p),
           "jvp": jvp(X, k, T, reg, p), "vjp": vjp(X, k, T, reg, p, "magnitude"), "jac": jacobian(X, k, reg, p)}
    assert out["jac"].shape == X.shape + (9,)
    for i, (x, t) in enumerate(zip(_rows(X), _rows(T))):
        np.testing.assert_array_equal(_rows(out["mask"])[i], topk_mask(x, k, reg, p))
        np.testing.assert_array_equal(_rows(out["mag"])[i], topk_magnitude(x, k, reg, p))
        np.testing.assert_array_equal(_rows(out["jvp"])[i], jvp(x, k, t, reg, p))
        np.testing.assert_array_equal(_rows(out["vjp"])[i], vjp(x, k, t, reg, p, "magnitude"))
        np.testing.assert_array_equal(out["jac"].reshape(-1, 9, 9)[i], jacobian(x, k, reg, p))


def test_topk_bad_batches():
    from theory.topk import jvp, topk_mask

    X = np.zeros((3, 4))
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"`x` of theory\.topk\.topk_mask must be finite; row 1 "):
        topk_mask(X, 2)
    with pytest.raises(ValueError, match="`k`"):
        topk_mask(np.zeros((3, 4)), 4)  # k outside 1..n-1 for rows of length 4
    with pytest.raises(ValueError, match="`k`"):
        topk_mask(np.zeros((0, 4)), 0)  # checked even without rows
    with pytest.raises(ValueError, match="`x`.*last axis"):
        topk_mask(np.zeros((3, 1)), 1)
    with pytest.raises(ValueError, match="`x`.*last axis"):
        topk_mask(np.zeros((3, 0)), 1)
    with pytest.raises(ValueError, match="`tangent`"):
        jvp(np.zeros((3, 4)), 1, np.zeros(4))
    assert topk_mask(np.zeros((0, 4)), 2).shape == (0, 4)


@pytest.mark.parametrize("k", [1, 3, 70, 199])  # k > 64 selects by np.partition inside the kernel
def test_topk_mask_compiled_rows_equal_1d(k):
    """p = 2: the compiled first window reproduces the 1-D code bit for bit (ties, every scale, both
    accepted and rejected first windows; rejected rows run the 1-D code)."""
    from theory.topk import topk_mask

    rng = np.random.default_rng(13)
    status_seen = set()
    for trial in range(40):
        X = np.round(rng.standard_normal((3, 200)) * 3, int(rng.integers(0, 3))) * 10.0 ** rng.integers(-3, 3)
        reg = float(10.0 ** rng.uniform(-3, 3))
        st = np.empty(3, dtype=np.intp)
        _batch._mask_rows(X, k, reg, np.empty_like(X), st)
        status_seen.update(st.tolist())
        Y = topk_mask(X, k, reg)
        for x, y in zip(X, Y):
            np.testing.assert_array_equal(y, topk_mask(x, k, reg))
    assert _batch.OK in status_seen


def test_kth_largest():
    rng = np.random.default_rng(14)
    for n, k in ((2, 1), (50, 1), (50, 49), (1000, 10), (1000, 64), (1000, 65)):
        x = np.round(rng.standard_normal(n), 1)
        assert _batch._kth_largest(x, k) == np.partition(x, n - k)[n - k]


def test_parallel_kernels_are_distinct_functions():
    """Regression: the serial and parallel row loops were two dispatchers of one Python function; Numba's
    on-disk cache keys on the function (name and line), not on the parallel flag, so with a warm cache
    the parallel dispatcher loaded the serial code (it never started a thread). Now every parallel loop
    is its own function, and calling one starts Numba's threading layer."""
    import numba

    for name in ("_sort_rows", "_rank_rows", "_avg_rows", "_mask_rows"):
        ser, par = getattr(_batch, name), getattr(_batch, name + "_par")
        assert ser.py_func is not par.py_func
        assert par.targetoptions.get("parallel") and not ser.targetoptions.get("parallel")
    X = np.random.default_rng(15).standard_normal((8, 50))
    _batch._mask_rows_par(X, 3, 1.0, np.empty_like(X), np.empty(8, dtype=np.intp))
    assert numba.threading_layer() in ("omp", "tbb", "workqueue")


# ----------------------------------------------- the radix rows: zeros, the closed-form rank sums, phase 1

def _bits_equal(a, b):
    """Equal bit for bit, the sign of zero included (assert_array_equal takes -0.0 == 0.0)."""
    a, b = np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize("n", [2048, 5000, 140_000])  # radix rows: the kernel's scratch, then NumPy's
@pytest.mark.parametrize("desc", [True, False])
def test_radix_rows_with_signed_zeros_equal_reference_bit_for_bit(n, desc):
    """Rows sorted inside the kernel decode every value from its key and read only the run of zero keys back
    from x (the sign of a zero): soft sort (values only, and with its Jacobian) and soft rank equal the
    NumPy reference bit for bit, zeros' signs included, with many +0.0 and -0.0, ties, tiny and huge
    magnitudes, and rows without any zero."""
    rng = np.random.default_rng(n + desc)
    regs = (1e-3, 1.0, 1e250) if n < 10_000 else (1.0,)
    for trial in range(3):
        x = np.round(rng.standard_normal(n), 2) * 10.0 ** rng.integers(-5, 5)
        if trial == 0:
            x[rng.integers(0, n, n // 4)] = -0.0
            x[rng.integers(0, n, n // 4)] = 0.0
        elif trial == 1:
            x[rng.integers(0, n, 3)] = -0.0
            x[x == 0.0] = -0.0
            x[:2] = (1e-300, -1e-300)
        else:
            x[x == 0.0] = 0.5
        for reg in regs:
            _, ys = _soft._sort_core(x, reg, 2.0, "f")
            want = ys if desc else ys[::-1]
            assert _bits_equal(soft_sort(x, reg, 2.0, desc), want)
            assert _bits_equal(soft_sort_with_jacobian(x, reg, 2.0, desc)[0], want)
            _, yr = _soft._rank_core(x if desc else -x, reg, 2.0, "f")
            assert _bits_equal(soft_rank(x, reg, 2.0, desc), yr)
            assert _bits_equal(soft_rank_with_jacobian(x, reg, 2.0, desc)[0], yr)


def test_zero_run_finds_the_keys_of_zero():
    from theory.topk import _radix

    rng = np.random.default_rng(41)
    for n in (1, 2, 3, 10, 1000):
        for x in (rng.standard_normal(n), np.zeros(n), -np.zeros(n), np.r_[np.zeros(n // 2), -np.ones(n - n // 2)]):
            for desc in (False, True):
                order, keys = _radix._radix_argsort(x, desc)
                lo, hi = _batch._zero_run(keys, desc)
                zeros = np.flatnonzero(x[order] == 0.0)
                if zeros.size:
                    assert (lo, hi) == (zeros[0], zeros[-1] + 1)
                else:
                    assert lo == hi


def test_rank_mean_closed_form_is_the_pairwise_sum():
    """The mean of the ranks n - i over a block, in closed form for n <= 2^26, equals the pairwise sum of
    those values divided by the block's length bit for bit; longer rows take the sum itself."""
    rng = np.random.default_rng(43)
    for trial in range(400):
        n = int(rng.choice([1, 2, 7, 1000, 10**6, 2**26]))
        a = int(rng.integers(0, n))
        b = int(rng.integers(a + 1, min(n, a + 5000) + 1))
        rho = (n - np.arange(a, b)).astype(np.float64)  # the pairwise order depends on the offsets from a only
        want = _batch._npsum(rho, 0, b - a) / float(b - a)
        assert _batch._rank_mean(np.empty(0), a, b, n) == want  # the closed form touches no scratch
    n = 2**26 + 1  # the summing branch
    d = np.empty(300)
    rho = np.array([float(n - i) for i in range(300)])
    assert _batch._rank_mean(d, 3, 300, n) == _batch._npsum(rho, 3, 300) / 297.0


@pytest.mark.parametrize("n", [1, 2, 5000, 70_000])
def test_radix_phase_one_every_pass_count(n):
    """Phase 1 computes the keys on the fly and lands in keys/order after any number of passes: none (every
    high half equal), an even number (8-bit digits, or a shared digit skipped) and an odd one (11-bit
    digits); the permutation is the stable argsort and the keys are the order keys of the sorted values."""
    from theory.topk import _radix

    rng = np.random.default_rng(n)
    cases = [1.0 + rng.integers(0, 2**20, n) * 2.0**-52,  # one high half: no pass in phase 1
             np.round(rng.standard_normal(n), 3),
             rng.integers(0, 3, n).astype(float) * 2.0**-20 + 1.0,  # low high-half digit only
             rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)]
    for x in cases:
        for desc in (False, True):
            for bits in (0, 8, 11, 16):
                order, keys = _radix._radix_argsort(x, desc, bits)
                np.testing.assert_array_equal(order, np.argsort(-x if desc else x, kind="stable"))
                np.testing.assert_array_equal(_radix._values(keys, desc), x[order] + 0.0)  # -0.0 reads as +0.0
