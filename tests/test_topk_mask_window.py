"""The p = 2 top-k mask's batch kernel (theory.topk._batch._mask_row): the cut window (scores above a
lower bound on the pooled value), its fallback to the whole first window, the insertion sort and the
output assignment by score must give each row's 1-D result bit for bit."""

import numpy as np
import pytest

from theory.topk import topk_mask
from theory.topk import _batch


def _rows_equal(X, k, reg):
    Y = topk_mask(X, k, reg)
    for r in range(X.shape[0]):
        np.testing.assert_array_equal(Y[r], topk_mask(X[r], k, reg))
    return Y


@pytest.mark.parametrize("m,n,k,reg", [(256, 1000, 10, 1.0), (3, 2, 1, 1.0), (1, 50, 1, 0.1), (7, 100, 99, 3.0),
                                       (20, 300, 30, 0.01), (10, 200, 5, 100.0), (4, 64, 63, 1e-300),
                                       (6, 500, 70, 1.0), (6, 500, 200, 5.0), (1, 1000, 10, 1.0)])
def test_batch_rows_match_1d(m, n, k, reg):
    X = np.random.default_rng(n + k).standard_normal((m, n))
    Y = _rows_equal(X, k, reg)
    np.testing.assert_allclose(Y.sum(axis=1), k, rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1.0, 1e150, 1e300])
def test_magnitudes(scale):
    X = np.random.default_rng(1).standard_normal((8, 120)) * scale
    _rows_equal(X, 7, scale)
    _rows_equal(X, 7, scale * 0.05)


def test_ties_at_the_cut_and_in_the_block():
    rng = np.random.default_rng(2)
    _rows_equal(np.round(rng.standard_normal((40, 200)), 1), 7, 0.5)
    _rows_equal(rng.integers(0, 5, (40, 100)).astype(float), 12, 1.0)
    X = np.zeros((3, 30))
    X[:, :5] = 1.0  # the k-th largest tied with the next ones
    _rows_equal(X, 3, 0.25)
    # scores exactly on the grid of the lower bound (t = -1/4, -1/2, -3/4): the cut's gap test
    x = np.concatenate([[1.0] * 3, [0.0], -np.array([0.25, 0.5, 0.75, 1.0]) + 0.0, -np.linspace(1.5, 3, 20)])
    _rows_equal(np.tile(x, (2, 1)), 4, 1.0)


def test_non_contiguous():
    X = np.random.default_rng(3).standard_normal((30, 400))
    Xs = X[::2, ::2]
    np.testing.assert_array_equal(topk_mask(Xs, 9, 1.0), topk_mask(np.ascontiguousarray(Xs), 9, 1.0))
    _rows_equal(np.ascontiguousarray(Xs), 9, 1.0)


def test_sort_desc():
    rng = np.random.default_rng(4)
    for m in (1, 2, 5, 48, 49, 90):
        a = np.round(rng.standard_normal(m), 1)
        out = _batch._sort_desc(a, np.empty(m + 3))
        np.testing.assert_array_equal(out, -np.sort(-a))


def test_mask_pav_matches_pav_decreasing():
    rng = np.random.default_rng(5)
    for K, k in ((2, 1), (12, 3), (40, 10), (41, 40)):
        s = -np.sort(-np.round(rng.standard_normal(K), 1))
        t = np.empty(K)
        a0, b0, gam, vk, st = _batch._mask_pav(s, k, s[k - 1], 0.7, t, np.empty(K + 1), np.empty(K + 1),
                                               np.empty(K + 1), np.empty(K + 1, dtype=np.intp))
        tr = np.clip((s - s[k - 1]) / 0.7, -4.0, 4.0)
        np.testing.assert_array_equal(t, tr)
        v = np.empty(K)
        rr = np.empty(K + 1, dtype=np.intp)
        nb, st2 = _batch._pav_decreasing(tr - (np.arange(K) < k), v, np.empty(K), np.empty(K + 1, dtype=np.intp), rr)
        r = int(np.searchsorted(rr[:nb + 1], k - 1, side="right")) - 1
        assert (st, a0, b0) == (st2, rr[r], rr[r + 1])
        assert gam == v[rr[r]] and vk == v[k - 1]


def test_parallel_kernel_equals_serial():
    X = np.random.default_rng(6).standard_normal((64, 300))
    Y1, Y2 = np.empty_like(X), np.empty_like(X)
    s1, s2 = np.empty(64, dtype=np.intp), np.empty(64, dtype=np.intp)
    _batch._mask_rows(X, 5, 1.0, Y1, s1)
    _batch._mask_rows_par(X, 5, 1.0, Y2, s2)
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(Y1, Y2)
