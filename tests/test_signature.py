"""Unit tests of theory.signature against independent references (iisignature, closed forms,
finite differences, the algebraic identities of signatures) and its input validation."""

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import theory.signature as S
from theory import NonFiniteError


def _flat(sig):
    return np.concatenate([np.ravel(s) for s in sig])


def _walk(seed, n=12, d=3, scale=0.3):
    return np.cumsum(np.random.default_rng(seed).standard_normal((n, d)) * scale, axis=0)


# ------------------------------------------------------------------------------- references

def test_against_iisignature_after_conversion():
    iisignature = pytest.importorskip("iisignature")
    for seed in range(4):
        X = _walk(seed, n=40)
        fac = S.signature(X, 5)
        ref = iisignature.sig(X, 5)
        np.testing.assert_allclose(_flat(S.to_standard(fac))[1:], ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(_flat(S.signature(X, 5, "standard"))[1:], ref, rtol=1e-12, atol=1e-14)


@settings(deadline=None, max_examples=25)
@given(st.lists(st.floats(-2, 2), min_size=2, max_size=4), st.integers(0, 6))
def test_one_segment_closed_form(b, depth):
    # Example 5.5: level k of a segment with increment b is b^(x)k (factorial normalization)
    b = np.array(b)
    sig = S.signature(np.vstack([np.ones_like(b), 1 + b]), depth)
    ref = np.ones(())
    for k in range(depth + 1):
        np.testing.assert_allclose(sig[k], ref, rtol=1e-13, atol=1e-13)
        ref = np.multiply.outer(ref, b)


def test_conversions_roundtrip():
    sig = S.signature(_walk(1), 4)
    back = S.to_factorial(S.to_standard(sig))
    np.testing.assert_allclose(_flat(back), _flat(sig), rtol=1e-15)
    std = S.to_standard(sig)
    for k in range(5):
        np.testing.assert_allclose(std[k] * math.factorial(k), sig[k], rtol=1e-15)


# --------------------------------------------------------------------------- identities

@pytest.mark.parametrize("normalization", ["factorial", "standard"])
def test_chen_identity(normalization):
    X = _walk(2, n=20)
    for u in (1, 7, 18):
        a = S.signature(X[: u + 1], 5, normalization)
        b = S.signature(X[u:], 5, normalization)
        whole = S.signature(X, 5, normalization)
        np.testing.assert_allclose(_flat(S.chen(a, b, normalization)), _flat(whole), rtol=1e-11, atol=1e-13)


def test_chen_plain_product_is_wrong_for_factorial():
    X = _walk(3, n=10)
    a, b = S.signature(X[:5], 3), S.signature(X[4:], 3)
    assert np.abs(_flat(S.chen(a, b, "standard")) - _flat(S.signature(X, 3))).max() > 1e-3


def _shuffles(u, v):
    if not u:
        return [v]
    if not v:
        return [u]
    return [(u[0],) + w for w in _shuffles(u[1:], v)] + [(v[0],) + w for w in _shuffles(u, v[1:])]


def test_shuffle_identity():
    # standard normalization: S^I S^J = sum over shuffles K of I and J of S^K
    sig = S.signature(_walk(4, n=15), 4, "standard")
    d = 3
    for I in [(0,), (1, 2), (2, 0)]:
        for J in [(1,), (0, 0), (2, 1)]:
            lhs = sig[len(I)][I] * sig[len(J)][J]
            rhs = sum(sig[len(K)][K] for K in _shuffles(I, J))
            assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-14)
    assert d == 3


def test_reparametrisation_invariance():
    X = _walk(5, n=8)
    # insert points inside segments (a reparametrisation of the same piecewise-linear path) and repeat points
    fine = [X[0]]
    for p, q in zip(X[:-1], X[1:]):
        for t in (0.25, 0.5, 1.0):
            fine.append(p + t * (q - p))
        fine.append(q)
    fine = np.array(fine)
    np.testing.assert_allclose(_flat(S.signature(fine, 5)), _flat(S.signature(X, 5)), rtol=1e-11, atol=1e-13)
    # translation invariance
    np.testing.assert_allclose(_flat(S.signature(X + 3.0, 5)), _flat(S.signature(X, 5)), rtol=1e-11, atol=1e-13)


def test_kernel_closed_form_and_normalization():
    a, b = np.array([0.3, 0.4]), np.array([-0.5, 0.6])
    # |<a, b>| = 0.09: the series' tail after depth 18 is below 1e-18
    K = S.kernel(np.vstack([np.zeros(2), a]), np.vstack([np.zeros(2), b]), 18)
    assert K == pytest.approx(S.linear_kernel(a, b), rel=1e-14)
    # the standard normalization gives sum <a,b>^k/(k!)^2 instead
    sa = S.signature(np.vstack([np.zeros(2), a]), 18, "standard")
    sb = S.signature(np.vstack([np.zeros(2), b]), 18, "standard")
    ip = float(a @ b)
    assert S.signature_inner(sa, sb) == pytest.approx(sum(ip ** k / math.factorial(k) ** 2 for k in range(19)))


def test_kernel_matches_inner_product_of_signatures():
    X, Y = _walk(6), _walk(7)
    ref = S.signature_inner(S.signature(X, 4), S.signature(Y, 4))
    assert S.kernel(X, Y, 4) == pytest.approx(ref, rel=1e-13)


# ------------------------------------------------------------------------------- extremes

def test_extremes():
    assert [float(s) for s in S.signature([[0.0], [2.0]], 0)] == [1.0]
    # d = 1: only the increment matters, level k = increment^k (factorial normalization)
    sig = S.signature([[0.0], [1.0], [-0.5], [0.7]], 6)
    np.testing.assert_allclose([float(s[(0,) * k]) for k, s in enumerate(sig)], [0.7 ** k for k in range(7)],
                               rtol=1e-12)
    # a constant path has signature (1, 0, 0, ...)
    sig = S.signature(np.ones((5, 3)), 3)
    assert float(sig[0]) == 1.0 and all(np.all(s == 0) for s in sig[1:])
    with pytest.raises(NonFiniteError):
        S.signature(np.array([[0.0, 0.0], [1e200, 1e200]]), 4)


# ------------------------------------------------------------------------------- RNN side

def _params(seed, e=2, d=2, s=0.5):
    rng = np.random.default_rng(seed)
    return rng.uniform(-s, s, (e, e)), rng.uniform(-s, s, (e, d)), rng.uniform(-s, s, e)


def test_rnn_matches_a_python_loop():
    U, V, b = _params(0)
    xs = np.random.default_rng(1).standard_normal((7, 2))
    h = np.zeros(2)
    for x in xs:
        h = h + np.tanh(U @ h + V @ x + b) / 7
    np.testing.assert_allclose(S.rnn(xs, U, V, b, "tanh")[-1], h, rtol=1e-14)


def test_cde_reproduces_ode():
    U, V, b = _params(2)
    X = np.cumsum(np.random.default_rng(3).standard_normal((30, 2)) * 0.02, axis=0)
    X -= X[0]
    for act in S.ACTIVATIONS:
        H = S.ode_solution(X, U, V, b, act)
        Hb = S.cde_solution(S.time_augment(X, 0.9), U, V, b, 0.9, act)
        np.testing.assert_allclose(Hb[:, :2], H, atol=1e-13)
        np.testing.assert_allclose(Hb[:, 2:], X, atol=1e-13)


def _field(U, V, b, L, act, i):
    e, d = V.shape
    W = np.hstack([U, V])
    f = {"identity": lambda z: z, "tanh": np.tanh, "logistic": lambda z: 1 / (1 + np.exp(-z))}[act]

    def F(h):
        if i < d:
            return np.eye(e + d)[e + i]
        return np.concatenate([2 / (1 - L) * f(W @ h + b), np.zeros(d)])
    return F


def _jac(fun, h, eps=1e-6):
    n = h.size
    return np.column_stack([(fun(h + eps * np.eye(n)[m]) - fun(h - eps * np.eye(n)[m])) / (2 * eps) for m in range(n)])


@pytest.mark.parametrize("act", S.ACTIVATIONS)
def test_star_products_finite_differences(act):
    U, V, b = _params(4)
    L = 0.5
    h0 = np.random.default_rng(5).standard_normal(4) * 0.3
    P = S.star_products(U, V, b, L, 2, act, hbar0=h0)
    for i1, i2 in itertools.product(range(3), repeat=2):
        F1, F2 = _field(U, V, b, L, act, i1), _field(U, V, b, L, act, i2)
        np.testing.assert_allclose(P[0][i1], F1(h0), atol=1e-14)
        np.testing.assert_allclose(P[1][i1, i2], _jac(F2, h0) @ F1(h0), atol=1e-8)


def test_star_products_identity_closed_form():
    # Example 5.8: W_{i_k} ... W_{i_2} (W_{i_1} h + b_{i_1}) with b_i = e_{e+i} for i <= d
    U, V, b = _params(6)
    L, e, d = 0.3, 2, 2
    h0 = np.random.default_rng(7).standard_normal(4)
    P = S.star_products(U, V, b, L, 4, "identity", hbar0=h0)
    c = 2 / (1 - L)
    Wi = [np.zeros((4, 4))] * d + [np.vstack([c * np.hstack([U, V]), np.zeros((d, 4))])]
    bi = [np.eye(4)[e + i] for i in range(d)] + [np.concatenate([c * b, np.zeros(d)])]
    for k in range(1, 5):
        for I in itertools.product(range(3), repeat=k):
            v = Wi[I[0]] @ h0 + bi[I[0]]
            for j in I[1:]:
                v = Wi[j] @ v
            np.testing.assert_allclose(P[k - 1][I], v, atol=1e-12)


def test_taylor_expansion_converges_to_cde():
    U, V, b = _params(8, s=0.4)
    L = 0.5
    t = np.linspace(0, 1, 60)
    X = np.column_stack([np.sin(3 * t), t ** 2]) * 0.1
    X -= X[0]
    X *= 0.4 / S.total_variation(X)
    Xb = S.time_augment(X, L)
    H = S.cde_solution(Xb, U, V, b, L, "tanh", substeps=16)[-1]
    P = S.star_products(U, V, b, L, 7, "tanh")
    sig = S.signature(Xb, 7)
    errs = [np.linalg.norm(S.taylor_expansion(sig[: n + 1], P) - H) for n in range(1, 8)]
    assert errs[-1] < 1e-8 and all(x > y for x, y in zip(errs[:4], errs[1:5]))


def test_rkhs_coefficients_reproduce_the_expansion():
    U, V, b = _params(9)
    L = 0.5
    X = _walk(10, n=10, d=2, scale=0.05)
    X -= X[0]
    Xb = S.time_augment(X, L, check=False)
    P = S.star_products(U, V, b, L, 4, "logistic")
    sig = S.signature(Xb, 4)
    psi = np.array([0.6, -0.8])
    alpha = S.rkhs_coefficients(psi, P)
    xi = sum(float(np.sum(a * s)) for a, s in zip(alpha, sig))
    assert xi == pytest.approx(float(psi @ S.taylor_expansion(sig, P)[:2]), rel=1e-12, abs=1e-15)
    assert S.rkhs_norm(alpha) == pytest.approx(math.sqrt(sum(float(np.sum(a * a)) for a in alpha)))


def test_derivative_sup_against_dense_grid():
    x = np.linspace(-30, 30, 600001)
    s = 1 / (1 + np.exp(-x))
    for n in range(1, 5):
        p = S.activation_derivatives("logistic", n)[-1]
        vals = np.polynomial.polynomial.polyval(s, p)
        # against finite differences of the previous derivative
        prev = np.polynomial.polynomial.polyval(s, S.activation_derivatives("logistic", n - 1)[-1])
        np.testing.assert_allclose(np.gradient(prev, x)[1000:-1000], vals[1000:-1000], atol=1e-6)
        assert S.derivative_sup("logistic", n) == pytest.approx(np.abs(vals).max(), rel=1e-6)
    assert S.derivative_sup("logistic", 0) == 1.0 and S.derivative_sup("tanh", 1) == 1.0
    assert S.derivative_sup("logistic", 1) == pytest.approx(0.25)


def test_lambda_bound_corrected_factor():
    assert S.lambda_bound(1, 2.0, 0.01, 0.5, corrected=False) == pytest.approx(2 * math.sqrt(2))
    assert S.lambda_bound(3, 2.0, 0.01, 0.5) == pytest.approx(4 * S.lambda_bound(3, 2.0, 0.01, 0.5, corrected=False))


# ------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, match", [
    (lambda: S.signature([[0.0, 0.0], [1.0, 1.0]], -1), "depth"),
    (lambda: S.signature([[0.0, 0.0], [1.0, 1.0]], 2.5), "depth"),
    (lambda: S.signature([[0.0, 0.0]], 2), "at least 2 points"),
    (lambda: S.signature([0.0, 1.0], 2), "path"),
    (lambda: S.signature([[0.0, np.nan], [1.0, 1.0]], 2), "finite"),
    (lambda: S.signature([[0.0, 0.0], [1.0, 1.0]], 2, "iisignature"), "normalization"),
    (lambda: S.signature(np.zeros((2, 10)), 9), "depth"),
    (lambda: S.kernel([[0.0], [1.0]], [[0.0, 0.0], [1.0, 1.0]], 2), "path_y"),
    (lambda: S.linear_kernel([1.0, 0.0], [1.0, 0.0]), "converges"),
    (lambda: S.time_augment([[0.0], [2.0]], 0.5), "total variation"),
    (lambda: S.time_augment([[1.0], [1.2]], 0.5), "start at 0"),
    (lambda: S.time_augment([[0.0], [0.2]], 1.0), "`L`"),
    (lambda: S.rnn(np.zeros((3, 2)), np.eye(2), np.eye(3), np.zeros(2)), "`V`"),
    (lambda: S.rnn(np.zeros((3, 2)), np.eye(2), np.eye(2), np.zeros(2), "relu"), "activation"),
    (lambda: S.star_products(np.eye(2), np.eye(2), np.zeros(2), 0.5, 0), "depth"),
    (lambda: S.chen(S.signature([[0.0], [1.0]], 2), S.signature([[0.0], [1.0]], 3)), "sig_b"),
    (lambda: S.derivative_bound("identity", 2), "activation"),
])
def test_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_oracle_accepts_iisignature_after_conversion():
    iisignature = pytest.importorskip("iisignature")
    from theory.oracle import verify

    def sig(path, depth):
        d = path.shape[1]
        flat = np.concatenate([[1.0], iisignature.sig(path, depth)]) if depth > 0 else np.array([1.0])
        w = np.concatenate([np.full(d ** k, float(math.factorial(k))) for k in range(depth + 1)])
        return flat * w

    assert verify("signature", sig).ok
    # the standard normalization, unconverted, is rejected
    assert not verify("signature", lambda path, depth: np.concatenate(
        [[1.0], iisignature.sig(path, depth)]) if depth > 0 else np.array([1.0])).ok


# ------------------------------------------------------------- validation at the door, work and memory

def test_huge_depth_refused_before_any_computation():
    """signature(path, 100000) in dimension 2 summed 2**k up to 30000 digits for 103 s, then failed with
    Python's 4300-digit error while formatting its own message."""
    t = time.perf_counter()
    for depth in (10 ** 5, 10 ** 12, 2 ** 62):
        with pytest.raises(ValueError, match="`depth`"):
            S.signature(np.zeros((2, 2)), depth)
        with pytest.raises(ValueError, match="`depth`"):
            S.kernel(np.zeros((2, 2)), np.ones((2, 2)), depth)
    assert time.perf_counter() - t < 1.0


def test_depth_where_the_factorials_leave_float64_is_refused():
    """In dimension 1 the entry limit allows any depth: the level-k arrays (k axes) failed beyond NumPy's 64 axes
    and (k!)^2 of the kernel raised OverflowError ('Numerical result out of range') beyond 98."""
    path = [[0.0], [0.5]]
    for norm in ("factorial", "standard"):
        assert len(S.signature(path, 64, norm)) == 65
        with pytest.raises(ValueError, match="`depth`.*64"):
            S.signature(path, 65, norm)
    assert math.isfinite(S.kernel(path, path, 98))
    with pytest.raises(ValueError, match="`depth`.*98"):
        S.kernel(path, path, 99)


def test_malformed_signature_levels_named():
    """A level 1 that is a scalar raised IndexError('tuple index out of range')."""
    for f in (S.to_standard, S.signature_norm):
        with pytest.raises(ValueError, match=r"`sig\[1\]`"):
            f([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"`sig_a\[1\]`"):
        S.chen([1.0, 1.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="`sig`"):
        S.to_standard(np.ones(3))
    with pytest.raises(ValueError, match="`sig`"):
        S.to_standard([])


def test_overflowing_sums_are_errors_not_warnings():
    """total_variation, rkhs_norm and the conversions overflowed with a RuntimeWarning and returned inf."""
    with pytest.raises(NonFiniteError):
        S.total_variation([[-1e308, 0.0], [1e308, 0.0]])
    with pytest.raises(NonFiniteError):
        S.rkhs_norm([np.array(1e200), np.array([1e200])])
    with pytest.raises(NonFiniteError):
        S.to_factorial([np.array(1.0), np.array([1e308]), np.full((1, 1), 1e308)])
    with pytest.raises(NonFiniteError):
        S.signature_inner([np.array(1e200), np.array([1.0])], [np.array(1e200), np.array([1.0])])


def test_time_augment_check_is_a_bool():
    with pytest.raises(TypeError, match="`check`"):
        S.time_augment([[0.0], [0.1]], 0.5, check=np.zeros((2, 0)))


def test_solvers_refuse_huge_substeps_up_front():
    """substeps = 10**12 ran inside the jitted RK4 loop, which nothing interrupts."""
    U, V, b = _params(0)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="`substeps`.*max_work"):
        S.ode_solution(np.zeros((3, 2)), U, V, b, substeps=10 ** 12)
    with pytest.raises(ValueError, match="`substeps`.*max_work"):
        S.cde_solution(np.zeros((3, 3)), U, V, b, 0.5, substeps=10 ** 12)
    assert time.perf_counter() - t < 1.0


def test_star_products_refuse_huge_jets_up_front():
    """e = 30 hidden units at depth 12 enumerated the 12**30 exponent tuples of a grid."""
    rng = np.random.default_rng(0)
    U, V, b = rng.uniform(-0.1, 0.1, (30, 30)), rng.uniform(-0.1, 0.1, (30, 1)), np.zeros(30)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="`depth`"):
        S.star_products(U, V, b, 0.5, 12)
    assert time.perf_counter() - t < 1.0


def test_lambda_bound_and_derivative_bound_stay_in_float64():
    """lambda_bound(N = 10**12) computed N! for hours; a = 1.7e308 returned inf; derivative_bound('logistic',
    160) returned inf."""
    t = time.perf_counter()
    with pytest.raises(ValueError, match="`N`"):
        S.lambda_bound(10 ** 12, 1.0, 1.0, 0.5)
    assert time.perf_counter() - t < 1.0
    with pytest.raises(NonFiniteError, match="`a`"):
        S.lambda_bound(3, 1.7e308, 1.0, 0.5)
    with pytest.raises(TypeError, match="`corrected`"):
        S.lambda_bound(3, 1.0, 1.0, 0.5, corrected=np.zeros((2, 0)))
    assert math.isfinite(S.derivative_bound("logistic", 150)) and math.isfinite(S.derivative_bound("tanh", 133))
    for act, n in (("logistic", 151), ("tanh", 134)):
        with pytest.raises(ValueError, match="`n`"):
            S.derivative_bound(act, n)


@pytest.mark.parametrize("f", ["taylor_expansion", "rkhs_coefficients"])
def test_malformed_products_named(f):
    """products = ['x'] raised IndexError('tuple index out of range')."""
    U, V, b = _params(0)
    P = S.star_products(U, V, b, 0.5, 2)
    first = S.signature(np.zeros((2, 3)), 1) if f == "taylor_expansion" else np.ones(2)
    for bad, err in ((["x"], TypeError), ([None], TypeError), ([np.nan], ValueError), ("P", TypeError),
                     ([P[0], P[0]], ValueError)):
        with pytest.raises(err, match="`products"):
            getattr(S, f)(first, bad)
