"""Unit tests of theory.generalization: models against scipy and closed forms, the printed constants of
chapter 4 of the thesis (Marion) at reference values, the covering construction, extremes and bad input."""

import math

import numpy as np
import pytest

import theory.generalization as G


def _fields_tanh(d):
    def fields(h):
        F = np.zeros((d * d, h.shape[0], d))
        for i in range(d):
            for j in range(d):
                F[i * d + j, :, i] = np.tanh(h[:, j])
        return F
    return fields


def test_parameterized_ode_matches_scipy():
    from scipy.integrate import solve_ivp

    d, S = 2, 200
    t = np.linspace(0, 1, 2 * S + 1)
    th = np.column_stack([np.cos(3 * t), np.sin(2 * t), 0.5 * t, -np.ones_like(t)])
    x = np.array([[0.3, -0.7]])

    def rhs(s, h):
        w = np.array([np.cos(3 * s), np.sin(2 * s), 0.5 * s, -1.0]).reshape(2, 2)
        return w @ np.tanh(h)

    ref = solve_ivp(rhs, (0, 1), x[0], rtol=1e-12, atol=1e-14).y[:, -1]
    np.testing.assert_allclose(G.parameterized_ode(x, th, _fields_tanh(d))[0], ref, atol=1e-10)


def test_resnet_tends_to_neural_ode_at_rate_one_over_L():
    rng = np.random.default_rng(0)
    d = 3
    W = rng.normal(size=(d, d)) / d
    x = rng.normal(size=(4, d))
    ode = G.parameterized_ode(x, np.tile(W.reshape(1, -1), (401, 1)), _fields_tanh(d))
    errs = [np.abs(G.resnet_forward(x, np.repeat(W[None], L, 0)) - ode).max() for L in (50, 100, 200, 400)]
    slopes = np.diff(np.log(errs)) / np.log(2)
    assert np.all(np.abs(slopes + 1) < 0.05)


def test_printed_constants_reference_values():
    assert G.theorem_4_4_constant(1, 1, 1, 1, 1, 1) == pytest.approx(6 * math.e * (2 + math.e))
    assert G.corollary_4_5_constant(1, 1, 1, 1, 1, 1) == pytest.approx(6 * math.sqrt(2) * math.e * (2 + math.e))
    assert G.theorem_4_8_constant(1, 1, 1, 1, 1) == pytest.approx(6 * math.sqrt(2) * math.e * (math.e + 1))
    assert G.prop_4_3_log_covering(1, 1, 1, 0.1) == pytest.approx(math.log(160 * 4 ** 10))
    assert G.cover_log_size(1, 1, 1, 0.1) == pytest.approx(math.log(40 * 2 ** 21))
    assert G.prop_4_7_log_covering(2, 1, 1, 0.1) == pytest.approx(G.prop_4_3_log_covering(4, 1, 1, 0.1))
    # the printed Lipschitz constant of Prop. 4.2 dominates the proof's only when K_f R e^(K_f R) >= 1
    for KR in (0.3, 0.5, 0.6, 1.0, 2.0):
        ok = G.prop_4_2_lipschitz_printed(1, KR, 1) >= G.prop_4_2_lipschitz_proof(1, KR, 1)
        assert ok == (KR * math.exp(KR) >= 1)


def test_theorem_gaps_and_thresholds():
    g = G.theorem_4_4_gap(100, 0.1, 4, 0.0, 1.0, 10.0)
    assert g == pytest.approx(10 * math.sqrt(5 * math.log(400) / 100) + 10 * math.sqrt(math.log(10) / 100))
    assert G.theorem_4_8_gap(1600, 0.1, 2, 1, 1, 1) < G.theorem_4_8_gap(100, 0.1, 2, 1, 1, 1)
    # Cor. 4.5 at R_W = 9, d = 1: its printed condition allows n = 1, Thm 4.4's needs n >= 9
    with pytest.raises(ValueError, match="`n`"):
        G.corollary_4_5_gap(1, 0.1, 1, 9.0, 1.0)
    assert G.corollary_4_5_gap(9, 0.1, 1, 9.0, 1.0) > 0


def test_prop46_tight_linear_case():
    # d = 1, identity activation, W_k = R vs R - delta: LHS = R_X ((1 + R/L)^L - (1 + (R - delta)/L)^L)
    R, delta, L = 0.5, 1e-3, 1000
    x = np.array([[1.0]])
    W = np.full((L, 1, 1), R)
    lhs = abs(G.resnet_forward(x, W, "identity") - G.resnet_forward(x, W - delta, "identity"))[0, 0]
    assert lhs == pytest.approx((1 + R / L) ** L - (1 + (R - delta) / L) ** L, rel=1e-9)
    assert lhs <= G.prop_4_6_lipschitz(1.0, 1.0, R) * delta


def test_spectral_complexity_scalar_closed_form():
    w = np.array([0.5, -1.0, 2.0])
    L = 3
    s = np.abs(1 + w / L)
    expected = np.prod(s) * np.sum(np.abs(w) ** (2 / 3) / (L ** (2 / 3) * s ** (2 / 3))) ** 1.5
    assert G.spectral_complexity(w.reshape(L, 1, 1)) == pytest.approx(expected)


def test_golowich_frobenius_product_lower_bound():
    # Sec. 4.4.2: prod_k ||I + W_k / L||_F >= (sqrt(d) - R / L)^L when ||W_k||_F <= ||W_k||_{1,1} <= R
    rng = np.random.default_rng(1)
    d, L, R = 4, 50, 2.0
    W = rng.normal(size=(L, d, d))
    W *= R / np.abs(W).sum(axis=(1, 2), keepdims=True)
    prod = np.prod(np.linalg.norm(np.eye(d) + W / L, axis=(1, 2)))
    assert prod >= (math.sqrt(d) - R / L) ** L


def test_weight_lipschitz_and_norms():
    W = np.zeros((4, 2, 2))
    W[2, 0, 1] = 0.5
    assert G.weight_lipschitz(W) == pytest.approx(4 * 0.5)
    assert G.norm_11inf(W) == 0.5
    assert G.weight_lipschitz(W[:1]) == 0.0


def test_cover_member_within_eps():
    rng = np.random.default_rng(2)
    t = np.linspace(0, 1, 3001)
    for _ in range(20):
        R, K, eps = 1.0, rng.uniform(0.5, 3), rng.uniform(0.05, 0.3)
        f = 0.5 * np.sin(K * 1.9 * t + rng.uniform(0, 6)) / 1.0
        f *= min(1.0, K / (0.5 * 1.9 * K))
        c = G.cover_member(t, f, R, K, eps)
        assert np.abs(f - c).max() <= eps


def test_smooth_weights_reproducible():
    a = G.smooth_weights(50, 3, rng=np.random.default_rng(3))
    b = G.smooth_weights(50, 3, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (50, 3, 3)


@pytest.mark.parametrize("call, name", [
    (lambda: G.prop_4_2_output_bound(-1, 1, 1, 1), "R_X"),
    (lambda: G.prop_4_2_lipschitz_printed(1, 0.0, 1), "K_f"),
    (lambda: G.prop_4_2_lipschitz_proof(1, 1, -2), "R_theta"),
    (lambda: G.prop_4_3_log_covering(0, 1, 1, 0.1), "m"),
    (lambda: G.prop_4_3_log_covering(1, 1, -1, 0.1), "K_theta"),
    (lambda: G.prop_4_3_log_covering(1, 1, 1, 0.0), "eps"),
    (lambda: G.theorem_4_4_gap(5, 0.1, 1, 0, 1, 1), "n"),
    (lambda: G.theorem_4_4_gap(100, 1.5, 1, 0, 1, 1), "delta"),
    (lambda: G.theorem_4_8_gap(1, 0.1, 1, 0.5, 1, 1), "n"),
    (lambda: G.theorem_4_8_constant(1, 1, 0, 1, 1), "R_W"),
    (lambda: G.corollary_4_9_complexity_bound(3.0, 2), "L"),
    (lambda: G.resnet_forward(np.zeros((2, 3)), np.zeros((4, 2, 2))), "W"),
    (lambda: G.resnet_forward(np.zeros((2, 2)), np.zeros((4, 2, 2)), "gelu"), "activation"),
    (lambda: G.parameterized_ode(np.zeros((1, 2)), np.zeros((4, 4)), _fields_tanh(2)), "theta"),
    (lambda: G.parameterized_ode(np.zeros((1, 2)), np.zeros((5, 4)), None), "fields"),
    (lambda: G.cover_member(np.linspace(0, 1, 5), np.array([0, 1, 0, 1, 0.0]), 2, 1, 0.1), "values"),
    (lambda: G.cover_member(np.linspace(0, 1, 5), np.array([0, 3, 0, 0, 0.0]), 2, 100, 0.1), "values"),
    (lambda: G.smooth_weights(10, 2, bandwidth=0.0), "bandwidth"),
])
def test_bad_input_names_argument(call, name):
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        call()


def test_training_gradient_matches_finite_differences():
    from theory.generalization import loss_and_gradient

    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(12, 6)), rng.integers(0, 3, 12)
    A, B = rng.normal(size=(4, 6)), rng.normal(size=(3, 4))
    W = rng.normal(size=(5, 4, 4))
    _, g = loss_and_gradient(X, y, A, W, B, lam=0.3)
    h = 1e-6
    for idx in [(0, 0, 0), (2, 1, 3), (4, 3, 2)]:
        e = np.zeros_like(W)
        e[idx] = h
        fd = (loss_and_gradient(X, y, A, W + e, B, 0.3)[0] - loss_and_gradient(X, y, A, W - e, B, 0.3)[0]) / (2 * h)
        assert g[idx] == pytest.approx(fd, rel=1e-5, abs=1e-9)


def test_difference_penalty_value():
    W = np.zeros((3, 1, 1))
    W[1] = 3.0
    val, _ = G.difference_penalty(W)
    assert val == pytest.approx(math.sqrt(18.0))


def test_neural_ode_matches_parameterized_ode_embedding():
    rng = np.random.default_rng(5)
    W = rng.normal(size=(3, 3)) / 3
    x = rng.normal(size=(5, 3))
    emb = G.parameterized_ode(x, np.tile(W.reshape(1, -1), (101, 1)), _fields_tanh(3))
    np.testing.assert_allclose(G.neural_ode(x, W, "tanh", 50), emb, atol=1e-12)
    with pytest.raises(ValueError, match="`W`"):
        G.neural_ode(x, np.zeros((2, 2)))


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(deadline=None, max_examples=40)
@given(d=st.integers(1, 4), L=st.sampled_from([1, 3, 10, 100]), R=st.floats(0.1, 3.0), seed=st.integers(0, 2 ** 16),
       act=st.sampled_from(["tanh", "relu", "identity"]))
def test_prop46_bounds_hold_on_drawn_instances(d, L, R, seed, act):
    # inside the hypotheses: sigma(0) = 0, 1-Lipschitz, ||W||_(1,1,inf) <= R, ||x|| <= R_X = 1
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(L, d, d))
    W *= R / np.abs(W).sum(axis=(1, 2), keepdims=True)
    W2 = rng.normal(size=(L, d, d))
    W2 *= R * rng.uniform(0, 1) / np.abs(W2).sum(axis=(1, 2), keepdims=True)
    x = rng.normal(size=(8, d))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    F1, F2 = G.resnet_forward(x, W, act), G.resnet_forward(x, W2, act)
    assert np.linalg.norm(F1, axis=1).max() <= G.prop_4_6_output_bound(1.0, 1.0, R) * (1 + 1e-12)
    assert np.linalg.norm(F1 - F2, axis=1).max() <= G.prop_4_6_lipschitz(1.0, 1.0, R) * G.norm_11inf(W - W2) * (1 + 1e-12)


@settings(deadline=None, max_examples=25)
@given(kappa=st.floats(0.01, 2.0), R=st.floats(0.1, 2.0), seed=st.integers(0, 2 ** 16))
def test_prop42_proof_constant_holds_on_drawn_instances(kappa, R, seed):
    # maps (1 + kappa tanh(h_j)) e_i: kappa-Lipschitz, bounded by M = 1 + kappa tanh(1) on the unit ball
    rng = np.random.default_rng(seed)
    d, m, S = 2, 4, 40

    def fields(h):
        g = 1 + kappa * np.tanh(h)
        F = np.zeros((m, h.shape[0], d))
        for i in range(d):
            for j in range(d):
                F[i * d + j, :, i] = g[:, j]
        return F

    t = np.linspace(0, 1, 2 * S + 1)[:, None]
    th = rng.normal(size=(1, m)) + rng.normal(size=(1, m)) * np.cos(np.pi * t)
    th *= R / np.abs(th).sum(axis=1).max()
    th2 = th * rng.uniform(0, 1)
    x = rng.normal(size=(8, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    M = 1 + kappa * np.tanh(1.0)
    F1, F2 = G.parameterized_ode(x, th, fields), G.parameterized_ode(x, th2, fields)
    assert np.linalg.norm(F1, axis=1).max() <= G.prop_4_2_output_bound(1.0, M, kappa, R) * (1 + 1e-9)
    lhs = np.linalg.norm(F1 - F2, axis=1).max()
    assert lhs <= G.prop_4_2_lipschitz_proof(M, kappa, R) * G.norm_1_inf(th - th2) * (1 + 1e-9)


# ------------------------------------------------------------------ validation at the door (regressions)

import signal  # noqa: E402
import time  # noqa: E402

from theory import NonFiniteError  # noqa: E402


def _training_problem(n=12, p=6, d=4, L=5, c=3, seed=4):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, p)), rng.integers(0, c, n), rng.normal(size=(d, p)), rng.normal(size=(L, d, d)),
            rng.normal(size=(c, d)))


def _nan_at(a, idx=(0, 0)):
    a = np.array(a, dtype=float)
    a[idx] = np.nan
    return a


@pytest.mark.parametrize("call, name, exc", [
    (lambda X, y, A, W, B: G.loss_and_gradient(_nan_at(X), y, A, W, B), "X", ValueError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y, A, _nan_at(W, (1, 0, 0)), B), "W", ValueError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y, A, W, _nan_at(B)), "B", ValueError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y, A, W, B, lam=np.nan), "lam", ValueError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y.astype(str), A, W, B), "y", TypeError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y.astype(float), A, W, B), "y", TypeError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y + 3, A, W, B), "y", ValueError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X, y[:-1], A, W, B), "y", ValueError),
    (lambda X, y, A, W, B: G.loss_and_gradient(X[:, :-1], y, A, W, B), "X", ValueError),
    (lambda X, y, A, W, B: G.difference_penalty(_nan_at(W, (1, 0, 0))), "W", ValueError),
    (lambda X, y, A, W, B: G.difference_penalty("W"), "W", TypeError),
    (lambda X, y, A, W, B: G.train_resnet(X, y.astype(str), X, y, A, W, B, epochs=1), "ytr", TypeError),
    (lambda X, y, A, W, B: G.train_resnet(X, y, X, y + 3, A, W, B, epochs=1), "yte", ValueError),
    (lambda X, y, A, W, B: G.train_resnet(_nan_at(X), y, X, y, A, W, B, epochs=1), "Xtr", ValueError),
    (lambda X, y, A, W, B: G.train_resnet(X, y, X, y, A, W, B, epochs=1, lr=np.inf), "lr", ValueError),
])
def test_training_functions_validate_every_argument(call, name, exc):
    # before: NaN in, NaN out; string labels parsed as integers; out-of-range labels an IndexError
    with pytest.raises(exc, match=f"`{name}`"):
        call(*_training_problem())


def test_training_functions_accept_lists_and_compute_float32_in_float64():
    X, y, A, W, B = _training_problem()
    loss, g = G.loss_and_gradient(X, y, A, W, B, lam=0.3)
    # lists (before: AttributeError on W.shape)
    loss_l, g_l = G.loss_and_gradient(X.tolist(), y.tolist(), A.tolist(), W.tolist(), B.tolist(), lam=0.3)
    assert loss_l == loss and np.array_equal(g_l, g)
    # float32 input is converted, the arithmetic is float64: equal to the float64 twin (before: float32 throughout)
    X32, A32, W32, B32 = (a.astype(np.float32) for a in (X, A, W, B))
    loss32, g32 = G.loss_and_gradient(X32, y, A32, W32, B32, lam=0.3)
    twin, g_twin = G.loss_and_gradient(*(a.astype(np.float64) for a in (X32,)), y,
                                       *(a.astype(np.float64) for a in (A32, W32, B32)), lam=0.3)
    assert g32.dtype == np.float64 and loss32 == twin and np.array_equal(g32, g_twin)
    val32, gp32 = G.difference_penalty(W32)
    val64, gp64 = G.difference_penalty(W32.astype(np.float64))
    assert gp32.dtype == np.float64 and val32 == val64 and np.array_equal(gp32, gp64)


def _fails_within(seconds):
    def alarm(signum, frame):
        raise AssertionError(f"not refused within {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    return old


@pytest.mark.parametrize("call, name", [
    # Figure 4.1's check sizes (p = 32, d = 16, L = 30, 200 + 1000 samples): 1e5 epochs are ~4e12 operations
    (lambda X, y, Xt, yt, A, W, B: G.train_resnet(X, y, Xt, yt, A, W, B, epochs=10**5), "epochs"),
    (lambda X, y, Xt, yt, A, W, B: G.neural_ode(X[:4, :16], W[0], steps=10**12), "steps"),
    (lambda X, y, Xt, yt, A, W, B: G.resnet_to_path(W, points_per_layer=10**12), "points_per_layer"),
    (lambda X, y, Xt, yt, A, W, B: G.smooth_weights(10**6, 16), "L"),
    (lambda X, y, Xt, yt, A, W, B: G.cover_member(np.linspace(0, 1, 5), np.zeros(5), 1.0, 1e12, 1e-3), "eps"),
])
def test_huge_sizes_are_refused_up_front(call, name):
    # before: train_resnet(epochs=1e5) and neural_ode ran for hours, resnet_to_path asked for 8 TB
    rng = np.random.default_rng(0)
    X, Xt = rng.normal(size=(200, 32)), rng.normal(size=(1000, 32))
    y, yt = rng.integers(0, 10, 200), rng.integers(0, 10, 1000)
    A, W, B = rng.normal(size=(16, 32)), G.smooth_weights(30, 16, rng=1), rng.normal(size=(10, 16))
    old = _fails_within(5)
    try:
        start = time.perf_counter()
        with pytest.raises(ValueError, match=f"`{name}`"):
            call(X, y, Xt, yt, A, W, B)
        assert time.perf_counter() - start < 1.0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_train_resnet_single_layer_and_divergence():
    X, y, A, W, B = _training_problem(L=1)
    # before: max_k ||W_(k+1) - W_k|| of one layer raised "zero-size array" (no argument named)
    rec = G.train_resnet(X, y, X, y, A, W, B, epochs=2, rng=0)
    assert rec.max_diff.tolist() == [0.0, 0.0] and np.all(np.isfinite(rec.train_loss))
    X, y, A, W, B = _training_problem()
    with pytest.raises(NonFiniteError):
        G.train_resnet(1e150 * X, y, X, y, A, W, B, epochs=2, lr=1e300, rng=0)


def test_overflowing_bounds_raise_nonfinite_error():
    # before: OverflowError from math.exp (not a ValueError), or inf returned
    with pytest.raises(NonFiniteError):
        G.prop_4_2_output_bound(1.0, 1.0, 800.0, 1.0)
    with pytest.raises(NonFiniteError):
        G.theorem_4_8_constant(1.0, 1e200, 1e200, 1.0, 1.0)
    with pytest.raises(NonFiniteError):
        G.cover_log_size(1, 1.0, 1e300, 1e-300)
    # before: ZeroDivisionError from (m R)^-2 underflowing to 1/0
    with pytest.raises(ValueError, match="`n`"):
        G.theorem_4_4_gap(10**6, 0.1, 1, 0.0, 1e-200, 1.0)


def test_cover_member_refuses_an_empty_start_grid():
    # before: "attempt to get argmin of an empty sequence" when eps > 4 R m
    with pytest.raises(ValueError, match="`eps`"):
        G.cover_member(np.linspace(0, 1, 3), np.zeros(3), 1.0, 1.0, 5.0)


def test_parameterized_ode_checks_what_fields_returns():
    x, th = np.zeros((2, 2)), np.zeros((5, 4))
    with pytest.raises(ValueError, match="`fields`"):  # before: numpy's einsum error, no argument named
        G.parameterized_ode(x, th, lambda h: np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="`fields`"):  # before: NaN returned
        G.parameterized_ode(x, th, lambda h: np.full((4, 2, 2), np.nan))


def test_spectral_complexity_at_a_singular_layer_is_the_continuous_extension():
    # s_1 = |1 + W_1 / L| = 0: the product form gives 0 * inf = NaN (before); the limit is
    # ((|W_1| / L)^(2/3) s_2^(2/3))^(3/2) = |W_1| s_2 / L
    W = np.array([-2.0, 0.5]).reshape(2, 1, 1)
    assert G.spectral_complexity(W) == pytest.approx(2.0 * 1.25 / 2)
    near = G.spectral_complexity(np.array([-2.0 + 1e-9, 0.5]).reshape(2, 1, 1))
    assert near == pytest.approx(2.0 * 1.25 / 2, rel=1e-6)
