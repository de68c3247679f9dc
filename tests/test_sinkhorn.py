"""Unit tests of theory.sinkhorn: the log-domain Sinkhorn kernel against a NumPy reference, SciPy's softmax and
POT (when installed), its input validation and extremes, and the attention fields and energies."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from theory import sinkhorn as sk
from theory._errors import NonFiniteError


def _logits(n, seed=0, scale=2.0):
    return scale * np.random.default_rng(seed).normal(size=(n, n))


@pytest.mark.parametrize("n", [1, 2, 10, 40])
def test_limit_is_doubly_stochastic(n):
    K = sk.sinkhorn(_logits(n, seed=n))
    assert np.all(K > 0)
    assert np.max(np.abs(K.sum(axis=1) - 1)) < 1e-12
    assert np.max(np.abs(K.sum(axis=0) - 1)) < 1e-12


def test_one_iteration_is_row_softmax():
    C = _logits(12, seed=3)
    np.testing.assert_allclose(sk.sinkhorn(C, n_iter=1), softmax(C, axis=1), rtol=0, atol=1e-15)


@pytest.mark.parametrize("n_iter", [1, 2, 3, 8, 21])
def test_matches_numpy_reference(n_iter):
    C = _logits(9, seed=n_iter)
    np.testing.assert_allclose(sk.sinkhorn(C, n_iter=n_iter), sk.sinkhorn_reference(C, n_iter), rtol=0, atol=1e-14)


def test_odd_counts_row_stochastic_even_counts_column_stochastic():
    C = _logits(7, seed=5)
    assert np.max(np.abs(sk.sinkhorn(C, n_iter=5).sum(axis=1) - 1)) < 1e-14
    assert np.max(np.abs(sk.sinkhorn(C, n_iter=4).sum(axis=0) - 1)) < 1e-14


def test_limit_matches_long_reference_and_symmetric_for_symmetric_logits():
    C = _logits(8, seed=11)
    np.testing.assert_allclose(sk.sinkhorn(C), sk.sinkhorn_reference(C, 4001), rtol=0, atol=1e-12)
    S = C + C.T
    K = sk.sinkhorn(S)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-12)


def test_against_pot():
    ot = pytest.importorskip("ot")
    C = _logits(10, seed=2, scale=1.0)
    n = C.shape[0]
    a = np.full(n, 1.0 / n)
    plan = ot.sinkhorn(a, a, -C, reg=1.0, numItermax=100000, stopThr=1e-14)
    np.testing.assert_allclose(sk.sinkhorn(C), n * plan, rtol=0, atol=1e-9)


def test_info_and_max_iter():
    C = _logits(10, seed=4)
    K, info = sk.sinkhorn(C, return_info=True)
    assert info["n_iter"] % 2 == 1 and info["col_error"] <= 1e-13
    with pytest.raises(ValueError, match="max_iter"):
        sk.sinkhorn(_logits(10, seed=4, scale=20.0), max_iter=3)


def test_huge_logits_handled_without_nan():
    # a constant 1e300 shift: uniform
    np.testing.assert_allclose(sk.sinkhorn(np.full((4, 4), 1e300)), 0.25, rtol=0, atol=1e-15)
    # a spread of 1e300 at the limit of the accepted range: a permutation-like matrix, finite, no NaN
    C = np.zeros((3, 3))
    C[[0, 1, 2], [2, 0, 1]] = 1e300
    K = sk.sinkhorn(C, n_iter=9)
    assert np.all(np.isfinite(K))
    np.testing.assert_allclose(K, np.eye(3)[[2, 0, 1]], atol=1e-15)
    Kinf = sk.sinkhorn(C)
    assert np.all(np.isfinite(Kinf)) and np.max(np.abs(Kinf.sum(axis=0) - 1)) < 1e-12


def test_large_but_finite_logits_finite_or_refused():
    C = _logits(6, seed=8, scale=300.0)
    K = sk.sinkhorn(C, n_iter=51)
    assert np.all(np.isfinite(K)) and np.max(np.abs(K.sum(axis=1) - 1)) < 1e-14
    with pytest.raises(ValueError, match="max_iter"):  # slow convergence is reported, never a NaN
        sk.sinkhorn(C, max_iter=1001)


@pytest.mark.parametrize("C, match", [
    (np.full((3, 3), np.nan), "`C`"),
    (np.array([[1e300, -1e300], [0.0, 0.0]]), "`C`"),
    (np.array([[np.inf, 0.0], [0.0, 0.0]]), "`C`"),
    (np.zeros((2, 3)), "`C`"),
    (np.zeros(3), "`C`"),
    (np.zeros((0, 0)), "`C`"),
])
def test_bad_logits_refused(C, match):
    with pytest.raises(ValueError, match=match):
        sk.sinkhorn(C)


@pytest.mark.parametrize("kw, exc, match", [
    ({"n_iter": 0}, ValueError, "n_iter"), ({"n_iter": -3}, ValueError, "n_iter"),
    ({"n_iter": 1.5}, TypeError, "n_iter"), ({"n_iter": True}, TypeError, "n_iter"),
    ({"tol": 0.0}, ValueError, "tol"), ({"tol": float("nan")}, ValueError, "tol"),
    ({"max_iter": 0}, ValueError, "max_iter"),
])
def test_bad_arguments_refused(kw, exc, match):
    with pytest.raises(exc, match=match):
        sk.sinkhorn(np.zeros((3, 3)), **kw)


def test_input_not_modified():
    C = _logits(5)
    C0 = C.copy()
    sk.sinkhorn(C)
    np.testing.assert_array_equal(C, C0)


def _setup(n=6, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = 0.7 * rng.normal(size=(n, d))
    WQ, WK, WV = (0.6 * rng.normal(size=(2, d)), 0.6 * rng.normal(size=(2, d)), rng.normal(size=(d, d)))
    return X, WQ, WK, WV


def test_attention_fields_match_definitions():
    X, WQ, WK, WV = _setup()
    n = X.shape[0]
    C = (X @ WQ.T) @ (X @ WK.T).T
    V = X @ WV.T
    np.testing.assert_allclose(sk.attention(X, WQ, WK, WV, "kernel"), np.exp(C) @ V / n, atol=1e-14)
    np.testing.assert_allclose(sk.attention(X, WQ, WK, WV, "softmax"), softmax(C, axis=1) @ V, atol=1e-14)
    np.testing.assert_allclose(sk.attention(X, WQ, WK, WV, "sinkhorn"), sk.sinkhorn_reference(C, 3001) @ V,
                               atol=1e-12)
    np.testing.assert_allclose(sk.attention(X, WQ, WK, WV, "sinkhorn", n_iter=1),
                               sk.attention(X, WQ, WK, WV, "softmax"), atol=0)
    np.testing.assert_allclose(sk.logits(X, WQ, WK), C, atol=0)


def test_one_token_sinkformer_equals_transformer():
    X, WQ, WK, WV = _setup(n=1)
    np.testing.assert_allclose(sk.attention(X, WQ, WK, WV, "sinkhorn"), sk.attention(X, WQ, WK, WV, "softmax"),
                               atol=0)


def test_attention_validation():
    X, WQ, WK, WV = _setup()
    with pytest.raises(ValueError, match="kind"):
        sk.attention(X, WQ, WK, WV, "soft")
    with pytest.raises(ValueError, match="WK"):
        sk.attention(X, WQ, WK[:, :2], WV)
    with pytest.raises(ValueError, match="WV"):
        sk.attention(X, WQ, WK, WV[:2])
    with pytest.raises(ValueError, match="`X`"):
        sk.attention(np.full_like(X, np.nan), WQ, WK, WV)
    with pytest.raises(NonFiniteError):
        sk.attention(100 * X, 10 * WQ, 10 * WK, WV, "kernel")
    with pytest.raises(ValueError, match="kind"):
        sk.energy(X, WQ, WK, "softmax")


def test_energies_match_definitions():
    X, WQ, WK, _ = _setup()
    n = X.shape[0]
    C = (X @ WQ.T) @ (X @ WK.T).T
    assert sk.energy(X, WQ, WK, "kernel") == pytest.approx(np.exp(C).sum() / (2 * n * n), rel=1e-14)
    K = sk.sinkhorn_reference(C, 3001)
    k = n * K
    e_inf = -np.sum(k * np.log(k / np.exp(C))) / (2 * n * n)
    assert sk.energy(X, WQ, WK, "sinkhorn") == pytest.approx(e_inf, rel=1e-11, abs=1e-13)


def test_l2_softmax_field_matches_definition_and_validates():
    rng = np.random.default_rng(1)
    nodes, x = rng.normal(size=(30, 2)), rng.normal(size=(4, 2))
    w = rng.uniform(0.5, 1.5, size=30)
    WQ, WK, WV = rng.normal(size=(2, 2)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    eps = 0.3
    cost = -0.5 * np.sum(((x @ WQ.T)[:, None, :] - (nodes @ WK.T)[None, :, :]) ** 2, axis=2)
    A = softmax(cost / eps + np.log(w)[None, :], axis=1)
    np.testing.assert_allclose(sk.l2_softmax_field(x, nodes, w, WQ, WK, WV, eps), A @ nodes @ WV.T / eps,
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="weights"):
        sk.l2_softmax_field(x, nodes, -w, WQ, WK, WV, eps)
    with pytest.raises(ValueError, match="eps"):
        sk.l2_softmax_field(x, nodes, w, WQ, WK, WV, 0.0)
    with pytest.raises(ValueError, match="`x`"):
        sk.l2_softmax_field(x[:, :1], nodes, w, WQ, WK, WV, eps)


@pytest.mark.parametrize("n_iter", [1, 2, 7, 40, 0])
def test_scaling_kernel_matches_log_domain_kernel(n_iter):
    """The matrix-vector form (with absorption of large scalings into the logits) runs the same iterations as the
    log-domain kernel: same L to 1e-12, same count and column error."""
    from theory.sinkhorn import _kernels

    rng = np.random.default_rng(3)
    C = rng.normal(size=(37, 37)) * 3.0
    C[:5] -= 450.0  # rows far below the others: their scalings exceed 1e100 and get absorbed
    C[:, -3:] -= 100.0
    L0 = C - C.max()
    assert L0.min() >= -_kernels.SCALING_MAX_RANGE
    La, Lb = L0.copy(), L0.copy()
    ra = _kernels.sinkhorn_log(La, n_iter, 1e-12, 20001)
    rb = _kernels.sinkhorn_scaling(Lb, n_iter, 1e-12, 20001)
    assert ra[0] == rb[0]
    assert abs(ra[1] - rb[1]) <= 1e-12
    np.testing.assert_allclose(np.exp(Lb), np.exp(La), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Lb[np.exp(La) > 1e-200], La[np.exp(La) > 1e-200], rtol=1e-12, atol=1e-9)


# ------------------------------------------------------------------ validation at the door, guards


@pytest.mark.parametrize("call, exc, match", [
    (lambda C: sk.sinkhorn_reference(np.zeros((4, 3)), 3), ValueError, "`C`.*square"),
    (lambda C: sk.sinkhorn_reference(C, "20"), TypeError, "`n_iter`"),
    (lambda C: sk.sinkhorn_reference(C, 2.5), TypeError, "`n_iter`"),
    (lambda C: sk.sinkhorn_reference(C, None), TypeError, "`n_iter`"),
    (lambda C: sk.sinkhorn_reference(C, True), TypeError, "`n_iter`"),
    (lambda C: sk.sinkhorn_reference(C, 0), ValueError, "`n_iter`"),
    (lambda C: sk.sinkhorn_reference(C + 1j, 3), TypeError, "`C`"),
    (lambda C: sk.sinkhorn_reference("C", 3), TypeError, "`C`"),
    (lambda C: sk.sinkhorn_reference(np.full((2, 2), np.nan), 3), ValueError, "`C`"),
    (lambda C: sk.sinkhorn_reference(C, 3, max_work="big"), TypeError, "`max_work`"),
    (lambda C: sk.sinkhorn(C, n_iter="20"), TypeError, "`n_iter`"),
    (lambda C: sk.sinkhorn(C + 0j), TypeError, "`C`"),
    (lambda C: sk.sinkhorn(None), TypeError, "`C`"),
    (lambda C: sk.sinkhorn(C, tol="1e-13"), TypeError, "`tol`"),
    (lambda C: sk.sinkhorn(C, max_iter=None), TypeError, "`max_iter`"),
    (lambda C: sk.sinkhorn(C, return_info="yes"), TypeError, "`return_info`"),
    (lambda C: sk.sinkhorn(C, max_work=0.0), ValueError, "`max_work`"),
    (lambda C: sk.sinkhorn(C, max_work=1j), TypeError, "`max_work`"),
])
def test_every_argument_validated(call, exc, match):
    """sinkhorn_reference accepted a (4, 3) matrix, n_iter="20" and 2.5 (int() of them) and complex logits (their
    real part); sinkhorn accepted return_info="yes" into a NumPy error."""
    with pytest.raises(exc, match=match):
        call(_logits(4, seed=1))


def test_lists_and_float32_computed_in_float64():
    C = _logits(5, seed=6)
    K = sk.sinkhorn(C)
    assert np.array_equal(sk.sinkhorn(C.tolist()), K)
    C32 = C.astype(np.float32)
    K32 = sk.sinkhorn(C32, n_iter=3)
    assert K32.dtype == np.float64 and np.array_equal(K32, sk.sinkhorn(C32.astype(np.float64), n_iter=3))
    R = sk.sinkhorn_reference(C32, 3)
    assert R.dtype == np.float64 and np.array_equal(R, sk.sinkhorn_reference(C32.astype(np.float64), 3))


@pytest.mark.parametrize("n_iter", [None, 1, 4, 9])
def test_public_function_is_the_kernel_bit_for_bit(n_iter):
    """The validation adds no arithmetic: the result is exp of the kernel's iterate, to the last bit."""
    from theory.sinkhorn import _kernels

    C = _logits(11, seed=7)
    L = C - C.max()
    if n_iter is None:
        _kernels.sinkhorn_scaling(L, 0, 1e-13, 100_000)
    else:
        _kernels.sinkhorn_scaling(L, n_iter, 0.0, 1)
    assert np.array_equal(sk.sinkhorn(C, n_iter=n_iter), np.exp(L))


def test_huge_counts_and_sizes_refused_up_front():
    """n_iter = 10**12 ran 10**12 normalisations (hours); a million tokens allocated a 7 TiB matrix."""
    import time

    C = _logits(4, seed=2)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="`n_iter`.*max_work"):
        sk.sinkhorn(C, n_iter=10**12)
    with pytest.raises(ValueError, match="`n_iter`.*max_work"):
        sk.sinkhorn_reference(C, 10**9)
    with pytest.raises(ValueError, match="`n_iter`"):
        sk.attention(*_setup(), n_iter=10**30)
    X = np.zeros((10**6, 1))
    with pytest.raises(ValueError, match="`X`.*memory"):
        sk.attention(X, np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="`X`.*memory"):
        sk.energy(X, np.ones((1, 1)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="`X`.*memory"):
        sk.logits(X, np.ones((1, 1)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="`x`.*memory"):
        sk.l2_softmax_field(X, X[:10**5], np.ones(10**5), np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)), 1.0)
    with pytest.raises(ValueError, match="`C`.*memory"):
        sk.sinkhorn(np.broadcast_to(0.0, (10**5, 10**5)))
    assert time.perf_counter() - t0 < 5.0


def test_convergence_stops_where_the_budget_is_spent():
    """Slowly converging logits with a huge max_iter stop at the work budget, naming max_work."""
    C = _logits(6, seed=8, scale=300.0)
    with pytest.raises(ValueError, match="`max_work`"):
        sk.sinkhorn(C, max_iter=10**12, max_work=1e8)
    with pytest.raises(ValueError, match="`max_work`"):
        sk.sinkhorn(C, max_work=1.0)  # not even one normalisation
    K, info = sk.sinkhorn(_logits(6, seed=8), max_iter=10**12, max_work=1e8, return_info=True)
    assert info["col_error"] <= 1e-13


def test_arguments_unused_by_a_kind_are_still_validated():
    """attention(kind="kernel", n_iter="x") and energy("kernel", tol=None) were accepted."""
    X, WQ, WK, WV = _setup()
    with pytest.raises(TypeError, match="`n_iter`"):
        sk.attention(X, WQ, WK, WV, "kernel", n_iter="x")
    with pytest.raises(TypeError, match="`tol`"):
        sk.energy(X, WQ, WK, "kernel", tol=None)
    with pytest.raises(TypeError, match="`tol`"):
        sk.energy(X, WQ, WK, tol="x")  # was a Numba typing error
    with pytest.raises(TypeError, match="`WV`"):
        sk.attention(X, WQ, WK, None)  # was an AttributeError
    with pytest.raises(TypeError, match="`max_iter`"):
        sk.energy(X, WQ, WK, max_iter=2.0)


def test_overflowing_logits_never_give_nan():
    """Logits spanning beyond the float64 range gave an energy of NaN, and an attention error naming `C`,
    an argument attention does not have."""
    X, W = np.array([[1e154], [-1e154]]), np.array([[1.0]])
    with pytest.raises(ValueError, match="`X`"):
        sk.energy(X, W, W)
    with pytest.raises(ValueError, match="`X`"):
        sk.attention(X, W, W, W)
    with pytest.raises(NonFiniteError, match="overflow"):
        sk.attention(X, W, W, W, "kernel")


def test_l2_field_with_weights_near_the_float64_maximum():
    """Weights whose sum overflows are normalised by their maximum first (the field depends on the ratios only)."""
    rng = np.random.default_rng(4)
    x, nodes, w = rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.uniform(0.5, 1.5, size=5)
    WQ, WK, WV = rng.normal(size=(2, 2)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    big = sk.l2_softmax_field(x, nodes, w * 1e308, WQ, WK, WV, 0.5)
    np.testing.assert_allclose(big, sk.l2_softmax_field(x, nodes, w, WQ, WK, WV, 0.5), rtol=1e-13, atol=1e-13)
