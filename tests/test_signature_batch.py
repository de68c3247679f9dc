"""Tests of the fast signature kernels: signature_batch (the batch API), the natural-order Horner kernel with
deferred top-level updates, and the fused kernel of two paths, against independent references (segment
exponentials multiplied with Chen's relation in NumPy, pysiglib 4.0 and iisignature where installed), with the
edge cases (n = 2 points, d = 1, depth 0, 1, 2, batches of 1, chunk boundaries, huge and tiny magnitudes,
non-contiguous input) and the validation of the batch API."""

import math

import numba
import numpy as np
import pytest
from hypothesis import strategies as st

import theory.signature as S
from theory import NonFiniteError
from _fuzz import Spec, seed


def _flat(levels):
    return np.concatenate([np.ravel(lv) for lv in levels])


def _walk(rng, shape, scale=0.3):
    return np.cumsum(rng.standard_normal(shape) * scale, axis=-2)


def _reference(path, depth):
    """Standard signature by brute force: exp(delta) of every segment (levels delta^(x)k / k!, NumPy outer
    products) multiplied left to right with Chen's relation (plain NumPy, independent of the kernels)."""
    path = np.asarray(path, dtype=float)
    d = path.shape[1]
    sig = [np.ones(())] + [np.zeros((d,) * k) for k in range(1, depth + 1)]
    for delta in np.diff(path, axis=0):
        seg = [np.ones(())]
        for k in range(1, depth + 1):
            seg.append(np.multiply.outer(seg[-1], delta) / k)
        sig = [sum(np.multiply.outer(sig[j], seg[k - j]) for j in range(k + 1)) for k in range(depth + 1)]
    return sig


def _level_error(ours, ref):
    err = 0.0
    for a, b in zip(ours[1:], ref[1:]):
        scale = float(np.max(np.abs(b)))
        err = max(err, float(np.max(np.abs(np.asarray(a) - b))) / (scale if scale > 0 else 1.0))
    return err


# ------------------------------------------------------------------------------- single path

@pytest.mark.parametrize("d, depth", [(1, 0), (1, 1), (1, 5), (2, 1), (2, 2), (3, 2), (4, 2), (2, 3), (3, 4),
                                      (5, 3), (2, 6), (8, 3), (16, 2)])
@pytest.mark.parametrize("n", [2, 3, 9, 10, 17, 25])
def test_signature_matches_brute_force_chen_products(d, depth, n):
    """Segment counts 1, 2, 8, 9, 16, 24 cross the deferred top-level chunk of 8 segments."""
    X = _walk(np.random.default_rng(100 * d + depth + n), (n, d))
    ours = S.signature(X, depth, "standard")
    ref = _reference(X, depth)
    assert [lv.shape for lv in ours] == [(d,) * k for k in range(depth + 1)]
    assert _level_error(ours, ref) < 1e-14
    fac = S.signature(X, depth)
    for k in range(depth + 1):
        np.testing.assert_allclose(fac[k], ref[k] * math.factorial(k), rtol=1e-13, atol=1e-14)


def test_chunk_smaller_than_eight_for_a_large_top_level():
    """d = 2, depth 19: the top level's deferred vectors (2^18 entries each) are held four at a time."""
    X = _walk(np.random.default_rng(5), (12, 2), scale=0.5)
    ours = S.signature(X, 19, "standard")
    # reference: Chen products of the two halves (each computed by the kernel at a chunk of 4 segments or fewer,
    # checked against the brute force of a shorter depth) and the whole path at depth 6 (chunk of 8)
    ref = S.chen(S.signature(X[:6], 19, "standard"), S.signature(X[5:], 19, "standard"), "standard")
    assert _level_error(ours, ref) < 1e-13
    assert _level_error(ours[:7], _reference(X, 6)) < 1e-14


@pytest.mark.parametrize("d, n", [(2, 4097), (2, 4098), (3, 8194), (16, 1025), (16, 1026), (16, 2050),
                                  (128, 17), (128, 18), (128, 34), (129, 18)])
def test_depth_two_blocks_of_segments(d, n):
    """Depth 2 is a matrix product over blocks of segments (4096 for d <= 8, 2^18 / d^2 beyond: 1024 for d = 16,
    16 for d = 128, the largest d it serves; d = 129 takes the Horner kernel): the segment counts cross a block
    boundary by 0, 1 and 2 segments, against the brute-force Chen products; a batch gives the same bits."""
    rng = np.random.default_rng(7 * d + n)
    X = _walk(rng, (n, d), scale=1 / math.sqrt(n))
    ours = S.signature(X, 2, "standard")
    assert _level_error(ours, _reference(X, 2)) < 1e-14
    np.testing.assert_array_equal(ours[1], X[-1] - X[0])
    batch = S.signature_batch(np.stack([X, X[::-1]]), 2, "standard", n_threads=2)
    np.testing.assert_array_equal(batch[2][0], ours[2])
    np.testing.assert_array_equal(batch[2][1], S.signature(X[::-1], 2, "standard")[2])


def test_levels_are_row_major_in_time_order():
    """Level 2 of a two-segment path: a (x) b is entry (i, j) = a_i b_j with a the earlier increment."""
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    sig = S.signature(np.vstack([np.zeros(2), a, a + b]), 2, "standard")
    np.testing.assert_allclose(sig[2], np.outer(a, a) / 2 + np.outer(a, b) + np.outer(b, b) / 2, atol=1e-15)
    assert sig[2][0, 1] == 1.0 and sig[2][1, 0] == 0.0


def test_non_contiguous_and_integer_input_give_the_same_values():
    rng = np.random.default_rng(3)
    X = _walk(rng, (30, 3))
    ref = _flat(S.signature(X, 4))
    for view in (np.asfortranarray(X), np.repeat(X, 2, axis=0)[::2], X.astype(np.float32).astype(float)):
        out = _flat(S.signature(view, 4))
        np.testing.assert_allclose(out, _flat(S.signature(np.ascontiguousarray(view), 4)), rtol=0, atol=0)
    np.testing.assert_array_equal(_flat(S.signature(np.asfortranarray(X), 4)), ref)
    ints = np.array([[0, 0], [1, 2], [3, -1]])
    np.testing.assert_allclose(_flat(S.signature(ints, 3)), _flat(S.signature(ints.astype(float), 3)), rtol=0)


def test_tiny_and_huge_magnitudes():
    X = _walk(np.random.default_rng(4), (20, 2))
    base = S.signature(X, 5, "standard")
    for scale in (2.0 ** -160, 2.0 ** 130):  # powers of two: every rounding scales exactly (level 5 stays normal)
        out = S.signature(X * scale, 5, "standard")
        for k in range(6):
            np.testing.assert_array_equal(out[k], base[k] * scale ** k)
    with pytest.raises(NonFiniteError, match="overflow"):
        S.signature(X * 1e100, 5)
    with pytest.raises(NonFiniteError, match="overflow"):
        S.kernel(X * 1e100, X, 5)


def test_against_pysiglib_to_1e_14_of_each_level():
    pysiglib = pytest.importorskip("pysiglib")
    rng = np.random.default_rng(6)
    for n, d, depth in [(2, 1, 3), (50, 2, 8), (200, 3, 6), (40, 8, 4), (10, 16, 3), (1000, 2, 2)]:
        X = _walk(rng, (n, d), scale=1 / math.sqrt(n))
        ours = S.signature(X, depth, "standard")
        ref = np.asarray(pysiglib.sig(X, depth))
        flat = _flat(ours[1:])
        pos = 0
        for k in range(1, depth + 1):
            sl = slice(pos, pos + d ** k)
            assert np.max(np.abs(flat[sl] - ref[sl])) <= 1e-14 * np.max(np.abs(ref[sl])), (n, d, depth, k)
            pos += d ** k


# ------------------------------------------------------------------------------- kernel of two paths

@pytest.mark.parametrize("d, depth", [(1, 0), (1, 4), (2, 1), (2, 6), (3, 5), (8, 3)])
def test_kernel_equals_the_inner_product_of_factorial_signatures(d, depth):
    rng = np.random.default_rng(d + depth)
    X, Y = _walk(rng, (11, d)), _walk(rng, (23, d))
    ref = S.signature_inner(S.signature(X, depth), S.signature(Y, depth))
    scale = S.signature_inner([np.abs(a) for a in S.signature(X, depth)], [np.abs(b) for b in S.signature(Y, depth)])
    assert abs(S.kernel(X, Y, depth) - ref) <= 1e-14 * scale
    assert isinstance(S.kernel(X, Y, depth), float)


def test_kernel_is_symmetric_and_positive_on_the_diagonal():
    rng = np.random.default_rng(9)
    X, Y = _walk(rng, (15, 3)), _walk(rng, (8, 3))
    assert S.kernel(X, Y, 4) == pytest.approx(S.kernel(Y, X, 4), rel=1e-14)
    assert S.kernel(X, X, 4) >= 1.0


# ------------------------------------------------------------------------------- batch

@pytest.mark.parametrize("d, depth", [(1, 0), (1, 3), (2, 1), (2, 2), (3, 2), (2, 5), (3, 4), (8, 3), (16, 2)])
@pytest.mark.parametrize("normalization", ["factorial", "standard"])
def test_batch_equals_one_call_per_path_bit_for_bit(d, depth, normalization):
    rng = np.random.default_rng(10 * d + depth)
    P = _walk(rng, (7, 13, d))
    out = S.signature_batch(P, depth, normalization)
    assert [lv.shape for lv in out] == [(7,) + (d,) * k for k in range(depth + 1)]
    for b in range(7):
        single = S.signature(P[b], depth, normalization)
        for k in range(depth + 1):
            np.testing.assert_array_equal(out[k][b], single[k])


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_of_one_and_thread_counts(threads):
    threads = min(threads, numba.config.NUMBA_NUM_THREADS)
    rng = np.random.default_rng(11)
    P = _walk(rng, (1, 2, 3))
    out = S.signature_batch(P, 3, n_threads=threads)
    np.testing.assert_array_equal(_flat([lv[0] for lv in out]), _flat(S.signature(P[0], 3)))
    P = _walk(rng, (5, 20, 2))
    before = numba.get_num_threads()
    a = S.signature_batch(P, 4, n_threads=threads)
    assert numba.get_num_threads() == before
    b = S.signature_batch(P, 4, n_threads=1)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_batch_non_contiguous_input_and_pysiglib():
    rng = np.random.default_rng(12)
    P = _walk(rng, (6, 40, 3), scale=0.15)
    ref = S.signature_batch(P, 5, "standard")
    for view in (np.asfortranarray(P), np.repeat(P, 2, axis=1)[:, ::2], np.transpose(np.transpose(P, (2, 1, 0)).copy(),
                                                                                      (2, 1, 0))):
        for x, y in zip(S.signature_batch(view, 5, "standard"), ref):
            np.testing.assert_array_equal(x, y)
    pysiglib = pytest.importorskip("pysiglib")
    flat = np.concatenate([lv.reshape(6, -1) for lv in ref[1:]], axis=1)
    ps = np.asarray(pysiglib.sig(P, 5))
    pos = 0
    for k in range(1, 6):
        sl = slice(pos, pos + 3 ** k)
        assert np.all(np.max(np.abs(flat[:, sl] - ps[:, sl]), axis=1) <= 1e-14 * np.max(np.abs(ps[:, sl]), axis=1))
        pos += 3 ** k


def test_batch_overflow_and_input_not_modified():
    P = _walk(np.random.default_rng(13), (3, 6, 2))
    keep = P.copy()
    S.signature_batch(P, 4)
    np.testing.assert_array_equal(P, keep)
    P[1] *= 1e100
    with pytest.raises(NonFiniteError, match="overflow"):
        S.signature_batch(P, 6)


@pytest.mark.parametrize("call, name", [
    (lambda: S.signature_batch(np.zeros((3, 2)), 2), "paths"),
    (lambda: S.signature_batch(np.zeros((0, 4, 2)), 2), "paths"),
    (lambda: S.signature_batch(np.zeros((2, 1, 2)), 2), "paths"),
    (lambda: S.signature_batch(np.zeros((2, 4, 0)), 2), "paths"),
    (lambda: S.signature_batch(np.full((2, 4, 2), np.nan), 2), "paths"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), -1), "depth"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), 2.5), "depth"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), 65), "depth"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), 2, "iisignature"), "normalization"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), 2, n_threads=0), "n_threads"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), 2, n_threads=10 ** 6), "n_threads"),
    (lambda: S.signature_batch(np.zeros((2, 4, 2)), 2, n_threads=1.5), "n_threads"),
    (lambda: S.signature_batch(np.zeros((2000, 2, 10)), 7), "paths"),
    (lambda: S.signature_batch(np.zeros((2, 10 ** 5, 4)), 8), "depth"),
    (lambda: S.signature_batch("x", 2), "paths"),
])
def test_batch_bad_input_names_the_argument(call, name):
    with pytest.raises((TypeError, ValueError), match=f"`{name}`"):
        call()


def _batch_valid(draw):
    rng = seed(draw)
    shape = (draw(st.integers(1, 4), label="batch"), draw(st.integers(2, 6), label="n_points"),
             draw(st.integers(1, 3), label="d"))
    return {"paths": _walk(rng, shape), "depth": draw(st.integers(0, 4), label="depth"),
            "normalization": draw(st.sampled_from(["factorial", "standard"]), label="normalization"),
            "n_threads": 1}


def _batch_check(out, kw):
    nb, _, d = np.shape(kw["paths"])
    assert isinstance(out, list) and len(out) == kw["depth"] + 1
    for k, lv in enumerate(out):
        assert lv.shape == (nb,) + (d,) * k and lv.dtype == np.float64, (k, lv.shape)


#: the bad-input contract of tests/_fuzz.py for signature_batch (run by tests/test_fuzz_signature.py)
BATCH_SPEC = Spec(S.signature_batch, _batch_valid, check=_batch_check, examples=40)
