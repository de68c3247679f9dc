"""Unit tests of theory.icl (thesis, chapter 6): exact expectations against Monte Carlo (loose tolerances),
closed forms against the merged-monomial computation, gradients against finite differences, forward passes
against each other (Lemma 6.6 from the explicit heads), extremes and bad input."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from theory import NonFiniteError
from theory import icl


def _fd(f, x, h=1e-6):
    x = np.array(x, float)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _mc_loss(C, p, lam):
    """Monte Carlo of l_T(C, p) from Lemma 6.6's output on sampled contexts lam (n, d)."""
    T = len(p)
    t = np.arange(1, T + 1)
    out = np.einsum("t,ij,ntj,nti->ni", p, C, lam[:, None, :] ** (t - T + 1)[None, :, None],
                    lam[:, None, :] ** (t - 1)[None, :, None])
    v = np.sum(np.abs(out - lam ** T) ** 2, axis=1)
    return v.mean(), v.std() / np.sqrt(len(v))


# ---------------------------------------------------------------- torus moments

def test_torus_moment_and_expected_abs2():
    assert icl.torus_moment([1, 2], [1, 2]) == 1 and icl.torus_moment([1, 0], [0, 1]) == 0
    e = [[1, 0], [0, 1], [1, 0], [0, 0]]
    assert icl.expected_abs2([Fraction(1, 2), 2, Fraction(1, 3), -1], e) == Fraction(25, 36) + 4 + 1
    assert icl.expected_abs2([1, 1, 1], [[1], [1], [2]]) == 5
    assert icl.expected_abs2([0.5 + 1j, 1.0], [[1], [2]]) == pytest.approx(1.25 + 1.0)
    rng = np.random.default_rng(0)
    z = np.exp(2j * np.pi * rng.random((200000, 2)))
    f = 0.5 * z[:, 0] + 2 * z[:, 1] + z[:, 0] / 3 - 1
    assert np.mean(np.abs(f) ** 2) == pytest.approx(float(Fraction(25, 36) + 5), rel=0.02)


def test_group_monomials():
    ids, n = icl.group_monomials(np.array([[1, 0], [0, 1], [1, 0], [-3, 2]]))
    assert n == 3 and ids[0] == ids[2] and len({ids[0], ids[1], ids[3]}) == 3


# ---------------------------------------------------------------- non-augmented loss (Prop. 6.8)

@pytest.mark.parametrize("d, T", [(1, 2), (2, 3), (3, 4), (3, 6)])
def test_expected_loss_unitary_matches_closed_form_and_monte_carlo(d, T):
    rng = np.random.default_rng(d * 10 + T)
    C, p = rng.normal(size=(d, d)), rng.normal(size=T)
    exact = icl.expected_loss(C, p)
    assert icl.quadratic_loss(C, p) == pytest.approx(exact, rel=1e-13)
    assert icl.printed_quadratic_loss(C, p) - exact == pytest.approx(p[-2] ** 2 * np.sum(C ** 2), rel=1e-12)
    mean, se = _mc_loss(C, p, icl.unitary_contexts(d, 100000, rng))
    assert abs(mean - exact) < 5 * se


def test_expected_loss_complex_C_matches_monte_carlo():
    rng = np.random.default_rng(3)
    C = rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2))
    p = rng.normal(size=4)
    exact = icl.expected_loss(C, p)
    assert icl.quadratic_loss(C, p) == pytest.approx(exact, rel=1e-13)
    mean, se = _mc_loss(C, p, icl.unitary_contexts(2, 100000, rng))
    assert abs(mean - exact) < 5 * se


@pytest.mark.parametrize("delta, T", [(1, 3), (2, 4)])
def test_expected_loss_orthogonal_matches_monte_carlo(delta, T):
    rng = np.random.default_rng(delta + T)
    d = 2 * delta
    C, p = rng.normal(size=(d, d)), rng.normal(size=T)
    exact = icl.expected_loss(C, p, "orthogonal")
    mean, se = _mc_loss(C, p, icl.orthogonal_contexts(delta, 100000, rng))
    assert abs(mean - exact) < 5 * se
    assert abs(icl.quadratic_loss(C, p) - exact) > 1e-3  # the unitary closed form does not apply


def test_expected_loss_exact_rational():
    C = [[Fraction(1, 3), Fraction(-1, 2)], [Fraction(2, 5), 1]]
    p = [Fraction(1, 7), Fraction(-2, 3), Fraction(3, 2)]
    for context in icl.CONTEXTS:
        exact = icl.expected_loss_exact(C, p, context)
        assert isinstance(exact, Fraction)
        assert float(exact) == pytest.approx(icl.expected_loss(np.array(C, float), np.array(p, float), context),
                                             rel=1e-14)


@pytest.mark.parametrize("context", icl.CONTEXTS)
def test_expected_loss_gradient_vs_finite_differences(context):
    rng = np.random.default_rng(7)
    C, p = rng.normal(size=(4, 4)), rng.normal(size=5)
    _, gC, gp = icl.expected_loss(C, p, context, return_gradient=True)
    assert np.allclose(gC, _fd(lambda x: icl.expected_loss(x, p, context), C), rtol=1e-6, atol=1e-6)
    assert np.allclose(gp, _fd(lambda x: icl.expected_loss(C, x, context), p), rtol=1e-6, atol=1e-6)
    if context == "unitary":
        qC, qp = icl.quadratic_loss_gradient(C, p)
        assert np.allclose(qC, gC, rtol=1e-12, atol=1e-12) and np.allclose(qp, gp, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("context", icl.CONTEXTS)
def test_population_loss_gradient_and_monte_carlo(context):
    rng = np.random.default_rng(11)
    H, d, Tmax = 3, 4, 5
    A, B, P = rng.normal(size=(H, d)), rng.normal(size=(H, d)), rng.normal(size=(Tmax, Tmax))
    L, gA, gB, gP = icl.population_loss(A, B, P, context=context, return_gradient=True)
    assert np.allclose(gA, _fd(lambda x: icl.population_loss(x, B, P, context=context), A), rtol=1e-6, atol=1e-5)
    assert np.allclose(gB, _fd(lambda x: icl.population_loss(A, x, P, context=context), B), rtol=1e-6, atol=1e-5)
    assert np.allclose(gP, _fd(lambda x: icl.population_loss(A, B, x, context=context), P), rtol=1e-6, atol=1e-5)
    # Monte Carlo with the explicit multi-head forward pass (6.6), diagonal heads (Assumption 2)
    draw = icl.unitary_contexts if context == "unitary" else (lambda d_, n, r: icl.orthogonal_contexts(d_ // 2, n, r))
    lam = draw(d, 4000, rng)
    Ah = np.stack([np.diag(a) for a in A])
    Bh = np.stack([np.diag(b) for b in B])
    vals = []
    for x in lam:
        s = icl.ar_sequence(x, Tmax + 1)
        vals.append(sum(np.sum(np.abs(icl.attention_forward(Ah, Bh, P, s[:T]) - s[T]) ** 2) for T in range(2, Tmax + 1)))
    vals = np.array(vals)
    assert abs(vals.mean() - L) < 5 * vals.std() / np.sqrt(len(vals))


def test_lemma66_diagonal_forward_equals_explicit_heads():
    rng = np.random.default_rng(5)
    H, d, T = 4, 3, 5
    A, B, p = rng.normal(size=(H, d)), rng.normal(size=(H, d)), rng.normal(size=T)
    lam = icl.unitary_contexts(d, rng=rng)
    s = icl.ar_sequence(lam, T)
    out = icl.attention_forward(np.stack([np.diag(a) for a in A]), np.stack([np.diag(b) for b in B]), p, s)
    assert np.allclose(out, icl.diagonal_forward(A, B, p, lam), atol=1e-13)


# ---------------------------------------------------------------- augmented model (Props. 6.4, 6.5)

@pytest.mark.parametrize("s0", icl.S0_CONVENTIONS)
def test_augmented_loss_matches_monte_carlo_of_the_forward_pass(s0):
    rng = np.random.default_rng(13)
    d, Tmax = 2, 4
    a, b = rng.normal(size=4), rng.normal(size=2)
    L = icl.augmented_loss(a, b, d, Tmax, s0)
    assert float(icl.augmented_loss_exact(a, b, d, Tmax, s0)) == pytest.approx(L, rel=1e-12)
    A, B = icl.block_parameters(a, b, d)
    vals = []
    for lam in icl.unitary_contexts(d, 4000, rng):
        s = icl.ar_sequence(lam, Tmax + 1)
        tot = 0.0
        for T in range(2, Tmax + 1):
            e = icl.augmented_tokens(s[:T], s0, lam)
            tot += np.sum(np.abs(icl.augmented_forward(A, B, e) - s[T]) ** 2)
        vals.append(tot)
    vals = np.array(vals)
    assert abs(vals.mean() - L) < 5 * vals.std() / np.sqrt(len(vals))


def test_augmented_loss_gradient():
    rng = np.random.default_rng(17)
    a, b = rng.normal(size=4), rng.normal(size=2)
    _, ga, gb = icl.augmented_loss(a, b, 3, 5, return_gradient=True)
    assert np.allclose(ga, _fd(lambda x: icl.augmented_loss(x, b, 3, 5), a), rtol=1e-6, atol=1e-6)
    assert np.allclose(gb, _fd(lambda x: icl.augmented_loss(a, x, 3, 5), b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("d, Tmax", [(1, 2), (2, 4), (3, 7), (5, 50), (10, 15)])
def test_eta_star_exact(d, Tmax):
    assert icl.eta_star(d, Tmax) == icl.eta_star_printed(d, Tmax)
    Ts = range(2, Tmax + 1)
    assert icl.eta_star(d, Tmax, "zero") == Fraction(sum(T - 1 for T in Ts),
                                                     sum((T - 1) ** 2 + (d - 1) * (T - 1) for T in Ts))
    eta = icl.eta_star(d, Tmax)
    if Tmax <= 7:
        assert icl.augmented_loss_exact([0, 0, eta, 0], [1, 0], d, Tmax) == icl.augmented_min_loss(d, Tmax)
    assert icl.augmented_min_loss(d, Tmax) == d * (Tmax - 1 - Fraction(sum(Ts) ** 2, sum(T * T + (d - 1) * T for T in Ts)))


def test_eta_star_known_values():
    assert icl.eta_star(5, 50) == Fraction(13, 490) and icl.augmented_min_loss(5, 50) == 76
    assert icl.eta_star(10, 15) == Fraction(17, 330)


def test_gd_construction_is_one_gradient_step_with_s0_zero():
    rng = np.random.default_rng(19)
    W = icl.haar_orthogonal(4, rng=rng)
    s = icl.ar_sequence(W, 6)
    A, B = icl.gd_construction(4, 0.7)
    out = icl.augmented_forward(A, B, icl.augmented_tokens(s, "zero"))
    assert np.allclose(out, icl.gd_step_prediction(s, 0.7), atol=1e-14)
    out_inv = icl.augmented_forward(A, B, icl.augmented_tokens(s, "inverse", W))
    assert np.allclose(out_inv - out, 0.7 * s[0] * (W.T @ s[0]) @ s[-1], atol=1e-13)


# ---------------------------------------------------------------- PE-only problem (Prop. 6.12)

def test_pe_moment_and_loss_vs_monte_carlo():
    rng = np.random.default_rng(23)
    mu, T = 7.0, 6
    lam = np.exp(1j * 2 * np.pi * rng.random(200000) / mu)
    for k in (1, 3):
        assert abs(np.mean(lam ** (2 * k)) - icl.pe_moment(k, mu)) < 0.01
    p = rng.normal(size=T)
    t = np.arange(1, T + 1)
    vals = np.abs((lam[:, None] ** (2 * t - T)[None, :]) @ p - lam ** T) ** 2
    assert abs(vals.mean() - icl.pe_loss(p, mu)) < 5 * vals.std() / np.sqrt(len(vals))
    assert np.allclose(icl.pe_hessian(T, mu), np.real(icl.pe_moment(t[None, :] - t[:, None], mu)), atol=1e-15)


@pytest.mark.parametrize("mu", [1.0, 4.0 / 3.0, 2.0, 4.0])
def test_pe_hessian_identity_when_4_over_mu_integer(mu):
    assert np.allclose(icl.pe_hessian(9, mu), np.eye(9), atol=1e-15)


def test_pe_hessian_extremes():
    H = icl.pe_hessian(30, 1e8)
    assert np.allclose(H, 1.0, atol=1e-10)  # μ → ∞: H → 11ᵀ, σ_1 → T
    assert np.trace(icl.pe_hessian(30, 50.0)) == pytest.approx(30.0)
    assert np.allclose(icl.pe_hessian_printed(5, 10.0), icl.pe_hessian_printed(5, 300.0))


# ---------------------------------------------------------------- gradient flow

def test_gradient_flow_decreases_loss_and_matches_population_loss():
    rng = np.random.default_rng(29)
    A0, B0, P0 = 0.1 * rng.normal(size=(3, 3)), 0.1 * rng.normal(size=(3, 3)), 0.1 * rng.normal(size=(5, 5))
    r = icl.gradient_flow(A0, B0, P0, lr=0.01, steps=200)
    assert r.steps == 200 and np.all(np.diff(r.losses) <= 1e-12)
    assert r.losses[-1] == pytest.approx(icl.population_loss(r.Amat, r.Bmat, r.P), rel=1e-12)
    frozen = icl.gradient_flow(A0, B0, P0, lr=0.01, steps=5, train_P=False)
    assert np.array_equal(frozen.P, P0)


def test_gradient_flow_overflow_raises():
    with pytest.raises(NonFiniteError):
        icl.gradient_flow(np.ones((2, 2)), np.ones((2, 2)), np.ones((3, 3)), lr=10.0, steps=200)


def test_scalar_flow_prop69():
    out = icl.scalar_flow(0.9, 1.3, 0.7, 50.0, 5000)
    a, b, p = out[-1]
    assert abs(p * a * b - 1) < 1e-12
    inv = out[:, 0] ** 2 - out[:, 1] ** 2
    assert np.max(np.abs(inv - inv[0])) < 1e-9  # balancedness is conserved by the flow


# ---------------------------------------------------------------- processes

def test_contexts_and_sequences():
    rng = np.random.default_rng(31)
    lam = icl.orthogonal_contexts(3, rng=rng)
    assert np.allclose(lam[1::2], lam[0::2].conj()) and np.allclose(np.abs(lam), 1)
    W = icl.rotation_blocks(lam)
    assert np.allclose(W.T @ W, np.eye(6)) and np.allclose(np.sort_complex(np.linalg.eigvals(W)), np.sort_complex(lam))
    s = icl.ar_sequence(lam, 4)
    assert np.allclose(s[3], lam ** 3)
    Q = icl.haar_orthogonal(5, size=3, rng=rng)
    assert Q.shape == (3, 5, 5) and np.allclose(Q[1].T @ Q[1], np.eye(5))


# ---------------------------------------------------------------- extremes and bad input

def test_extremes():
    assert icl.expected_loss([[0.0]], [0.0, 0.0]) == 1.0  # zero model: the loss is ||λ^T||² = d
    assert icl.expected_loss(np.eye(3), [0.0, 1.0]) == 0.0
    with pytest.raises(NonFiniteError):
        icl.expected_loss([[1e200]], [1e200, 1e200])


@pytest.mark.parametrize("call, match", [
    (lambda: icl.ar_sequence(np.eye(2), 0), "`T`"),
    (lambda: icl.ar_sequence(2 * np.eye(2), 3), "`W`.*unitary"),
    (lambda: icl.ar_sequence(np.array([1.0, 1.1]), 3), "`W`.*unit circle"),
    (lambda: icl.ar_sequence(np.eye(2), 3, s1=np.ones(3)), "`s1`"),
    (lambda: icl.expected_loss(np.ones((2, 3)), [1.0, 2.0]), "`C`"),
    (lambda: icl.expected_loss(np.eye(2), [1.0]), "`p`"),
    (lambda: icl.expected_loss(np.eye(3), [1.0, 2.0], "orthogonal"), "`C`.*even"),
    (lambda: icl.expected_loss(np.eye(2), [1.0, 2.0], "real"), "`context`"),
    (lambda: icl.expected_loss(np.eye(2), [np.nan, 2.0]), "`p`"),
    (lambda: icl.population_loss(np.ones((2, 3)), np.ones((2, 2)), np.eye(4)), "`Bmat`"),
    (lambda: icl.population_loss(np.ones((2, 2)), np.ones((2, 2)), np.eye(4), Tmax=5), "`Tmax`"),
    (lambda: icl.attention_forward(np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones(2), np.ones((1, 2))), "`s`"),
    (lambda: icl.attention_forward(np.ones((1, 3, 3)), np.ones((1, 3, 3)), np.ones(3), np.ones((3, 2))), "`A`"),
    (lambda: icl.diagonal_forward(np.ones((1, 2)), np.ones((1, 2)), np.ones(3), 1.5 * np.ones(2)), "`lam`"),
    (lambda: icl.augmented_forward(np.eye(6), np.eye(6), np.ones((3, 5))), "`e`"),
    (lambda: icl.augmented_forward(np.eye(3), np.eye(6), np.ones((3, 6))), "`A`"),
    (lambda: icl.augmented_tokens(np.ones((3, 2)), "inverse"), "`W`"),
    (lambda: icl.augmented_tokens(np.ones((3, 2)), "previous"), "`s0`"),
    (lambda: icl.augmented_loss(np.ones(3), np.ones(2), 2, 4), "`a`"),
    (lambda: icl.eta_star(0, 4), "`d`"),
    (lambda: icl.eta_star(2, 1), "`Tmax`"),
    (lambda: icl.pe_hessian(5, 0.5), "`mu`"),
    (lambda: icl.pe_moment(1.5, 3.0), "`k`"),
    (lambda: icl.gradient_flow(np.ones((2, 2)), np.ones((2, 2)), np.eye(3), lr=0.0), "`lr`"),
    (lambda: icl.expected_loss_exact([["x"]], [1, 2]), "`C`"),
    (lambda: icl.orthogonal_contexts(0), "`delta`"),
    (lambda: icl.torus_moment([1, 2], [1]), "`a`"),
])
def test_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_pe_loss_hessian_is_twice_H():
    """Prop. 6.12's H is the quadratic form's matrix: the Hessian of l (finite differences of the exact loss) is 2H."""
    mu, T = 20.0, 6
    p0 = np.random.default_rng(37).normal(size=T)
    h = 1e-4
    Hfd = np.zeros((T, T))
    for i in range(T):
        for j in range(T):
            ei, ej = np.eye(T)[i] * h, np.eye(T)[j] * h
            Hfd[i, j] = (icl.pe_loss(p0 + ei + ej, mu) - icl.pe_loss(p0 + ei - ej, mu)
                         - icl.pe_loss(p0 - ei + ej, mu) + icl.pe_loss(p0 - ei - ej, mu)) / (4 * h * h)
    assert np.allclose(Hfd, 2 * icl.pe_hessian(T, mu), atol=1e-6)


# ---------------------------------------------------------------- exact functions: every integer and bool dtype

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def _big(dtype, k=1):
    """A value of ``dtype`` whose products overflow it (half its maximum; 1 for bool), and k - 1 below it."""
    if dtype is np.bool_:
        return 1
    return int(np.iinfo(dtype).max) // 2 - (k - 1)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda t: np.dtype(t).name)
def test_exact_functions_convert_every_integer_and_bool_dtype(dtype):
    """augmented_loss_exact([0.1, 0.2, 0.3, 0.4], np.array([1, 1]), 2, 3) returned 2.5e-14 instead of 59.96 and
    expected_loss_exact overflowed: a NumPy integer inside a Fraction keeps its fixed width. Every exact function
    now equals its Python-int call exactly and the float kernel to rounding, for every integer and bool dtype."""
    v = [_big(dtype, k) for k in (1, 2, 3, 4)]
    b = [_big(dtype, 1), _big(dtype, 2)]
    # augmented model: float a with integer b (the reported case), and integer a and b
    for a_in in ([0.1, 0.2, 0.3, 0.4], np.array(v, dtype)):
        a_py = a_in if isinstance(a_in, list) else v
        for s0 in icl.S0_CONVENTIONS:
            got = icl.augmented_loss_exact(a_in, np.array(b, dtype), 2, 3, s0)
            assert got == icl.augmented_loss_exact(a_py, b, 2, 3, s0)
            assert float(got) == pytest.approx(icl.augmented_loss(np.array(a_py, float), np.array(b, float), 2, 3, s0),
                                               rel=1e-12)
    assert float(icl.augmented_loss_exact([0.1, 0.2, 0.3, 0.4], np.array([1, 1], dtype), 2, 3)) == pytest.approx(59.96)
    if dtype is not np.bool_:
        assert float(icl.augmented_loss_exact([0.1, 0.2, 0.3, 0.4], np.array([2, 2], dtype), 2, 3)) == pytest.approx(
            239.84)
    small = [1, 0, 1, 1] if dtype is np.bool_ else [1, 0, 2, 1]
    # non-augmented model, both contexts
    C = np.array([[v[0], v[1]], [v[2], v[3]]], dtype)
    p = np.array([v[3], v[0], v[1]], dtype)
    for context in icl.CONTEXTS:
        got = icl.expected_loss_exact(C, p, context)
        assert got == icl.expected_loss_exact(C.tolist(), [int(x) for x in p], context)
        assert float(got) == pytest.approx(icl.expected_loss(C.astype(float), p.astype(float), context), rel=1e-12)
    # exact moments: integer coefficients and exponents of the dtype
    e = np.array([[1, 0], [1, 0], [0, 1]], dtype)
    coef = np.array(v[:3], dtype)
    got = icl.expected_abs2(coef, e)
    assert got == icl.expected_abs2(v[:3], e.astype(np.int64).tolist()) and isinstance(got, int)
    assert float(got) == pytest.approx(icl.expected_abs2(coef.astype(float), e.astype(np.int64)), rel=1e-12)
    assert icl.torus_moment(np.array(small, dtype), small) == 1
    assert icl.torus_moment(np.array(small, dtype), np.array(small[::-1], dtype)) == int(small == small[::-1])
    # integer sizes as NumPy scalars (a bool is not a size)
    if dtype is np.bool_:
        with pytest.raises(TypeError, match="`d`"):
            icl.eta_star(np.bool_(True), 4)
    else:
        assert icl.eta_star(dtype(3), dtype(6)) == icl.eta_star(3, 6)
        assert icl.augmented_min_loss(dtype(3), dtype(6), "zero") == icl.augmented_min_loss(3, 6, "zero")
        assert icl.eta_star_printed(dtype(3), dtype(6)) == icl.eta_star(3, 6)
        assert icl.augmented_loss_exact(v, b, dtype(2), dtype(3)) == icl.augmented_loss_exact(v, b, 2, 3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble], ids=lambda t: np.dtype(t).name)
def test_exact_functions_take_every_float_dtype_exactly(dtype):
    """A NumPy float is read exactly (its as_integer_ratio), as its Python float would be: np.float32 used to be
    refused by Fraction, and np.longdouble is not rounded to float64 first."""
    a = np.array([0.1, 0.2, 0.3, 0.4], dtype)
    as_fractions = [Fraction(*x.as_integer_ratio()) for x in a]
    assert icl.augmented_loss_exact(a, [1, 1], 2, 3) == icl.augmented_loss_exact(as_fractions, [1, 1], 2, 3)
    assert icl.expected_loss_exact(a.reshape(2, 2), a[:3]) == icl.expected_loss_exact(
        [as_fractions[:2], as_fractions[2:]], as_fractions[:3])
    assert icl.expected_abs2(list(a[:2]), [[1], [1]]) == pytest.approx(float(sum(as_fractions[:2]) ** 2), rel=1e-6)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: icl.expected_loss_exact([["1"]], [1, 2]), TypeError, "`C`"),
    (lambda: icl.expected_loss_exact([[1]], ["1/2", 2]), TypeError, "`p`"),
    (lambda: icl.expected_loss_exact([[1j]], [1, 2]), TypeError, "`C`"),
    (lambda: icl.expected_loss_exact([[None]], [1, 2]), TypeError, "`C`"),
    (lambda: icl.expected_loss_exact([[float("inf")]], [1, 2]), ValueError, "`C`"),
    (lambda: icl.expected_loss_exact([[1.0]], [np.nan, 2]), ValueError, "`p`"),
    (lambda: icl.augmented_loss_exact(["0.1", 0, 0, 0], [1, 1], 2, 3), TypeError, "`a`"),
    (lambda: icl.augmented_loss_exact([0, 0, 0, 0], np.array([1 + 0j, 1]), 2, 3), TypeError, "`b`"),
    (lambda: icl.augmented_loss_exact([0, 0, 0], [1, 1], 2, 3), ValueError, "`a`"),
    (lambda: icl.expected_abs2(["1"], [[1]]), TypeError, "`coefficients`"),
    (lambda: icl.expected_abs2([10 ** 400, 0.5], [[1], [2]]), ValueError, "`coefficients`"),
    (lambda: icl.torus_moment([1.0], [1]), TypeError, "`a`"),
    (lambda: icl.torus_moment([1], [None]), TypeError, "`b`"),
    (lambda: icl.group_monomials([[1.5, 0.0]]), TypeError, "`exponents`"),
])
def test_exact_functions_refuse_what_is_not_a_number(call, exc, match):
    """Strings used to reach Fraction (which parses "1/2"); inf raised OverflowError; a huge int mixed with floats
    raised OverflowError."""
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------- huge sizes are refused up front

@pytest.mark.parametrize("call, name", [
    (lambda: icl.augmented_loss([0.1, 0.2, 0.3, 0.4], [1.0, 1.0], 2, 10 ** 5), "Tmax"),
    (lambda: icl.augmented_loss_exact([1, 2, 3, 4], [1, 1], 2, 10 ** 5), "Tmax"),
    (lambda: icl.eta_star(2, 10 ** 7), "Tmax"),
    (lambda: icl.augmented_min_loss(2, 10 ** 7, "zero"), "Tmax"),
    (lambda: icl.augmented_ray_loss(0.5, 2, 10 ** 12), "T"),
    (lambda: icl.expected_loss(np.eye(100), np.ones(10 ** 4)), "C"),
    (lambda: icl.expected_loss_exact(np.eye(30, dtype=int), np.ones(10 ** 4, dtype=int)), "p"),
    (lambda: icl.population_loss(np.ones((1, 50)), np.ones((1, 50)), np.zeros((200, 200))), "P"),
    (lambda: icl.gradient_flow(np.ones((1, 2)), np.ones((1, 2)), np.eye(3), steps=10 ** 12), "steps"),
    (lambda: icl.gradient_flow(np.ones((1, 2)), np.ones((1, 2)), np.eye(3), steps=10 ** 9), "steps"),
    (lambda: icl.scalar_flow(1.0, 1.0, 1.0, 1.0, 10 ** 9), "n_steps"),
    (lambda: icl.ar_sequence([1.0, 1j], 10 ** 12), "T"),
    (lambda: icl.ar_sequence([1.0, 1j], 10 ** 8), "T"),
    (lambda: icl.unitary_contexts(10 ** 12), "d"),
    (lambda: icl.orthogonal_contexts(2, size=(10 ** 6, 10 ** 6)), "size"),
    (lambda: icl.haar_orthogonal(10 ** 5), "d"),
    (lambda: icl.haar_orthogonal(30, size=10 ** 6), "size"),
    (lambda: icl.block_parameters(np.ones(4), np.ones(2), 10 ** 6), "d"),
    (lambda: icl.gd_construction(10 ** 6, 0.5), "d"),
    (lambda: icl.pe_hessian(10 ** 6, 3.0), "T"),
    (lambda: icl.pe_hessian_printed(10 ** 6, 3.0), "T"),
    (lambda: icl.pe_loss(np.zeros(10 ** 5), 3.0), "p"),
    (lambda: icl.gd_step_prediction(np.ones((2, 10 ** 5)), 0.5), "s"),
    (lambda: icl.rotation_blocks(np.ones(10 ** 5)), "lam"),
])
def test_huge_sizes_are_refused_up_front(call, name):
    """augmented_loss(..., Tmax=1e5) ran for hours, pe_hessian(1e6) asked for 8 TB, scalar_flow(n_steps=1e9)
    ran for a day: each is now refused before any loop or allocation, naming the argument, in milliseconds."""
    import signal
    import time

    def alarm(signum, frame):
        raise TimeoutError("not refused within 5 s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(5)
    try:
        t0 = time.process_time()  # CPU time of this process: other load on the machine does not count
        with pytest.raises(ValueError, match=f"`{name}` of theory.icl"):
            call()
        assert time.process_time() - t0 < 1.0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_eta_star_printed_takes_any_size():
    """Closed-form power sums: Tmax = 10**30 is exact and instant (the loop over T would never end)."""
    n = 10 ** 30
    s1, s2 = n * (n + 1) // 2 - 1, n * (n + 1) * (2 * n + 1) // 6 - 1
    assert icl.eta_star_printed(3, n) == Fraction(s1, s2 + 2 * s1)
    assert icl.eta_star_printed(7, 40) == Fraction(sum(range(2, 41)), sum(T * T + 6 * T for T in range(2, 41)))
