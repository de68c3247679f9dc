"""Unit tests of theory.two_timescale against independent references (finite differences, fine grids,
closed forms of the thesis (Marion), chapter 6, and scipy's ODE solvers), extremes and bad input."""

import numpy as np
import pytest

import theory.two_timescale as T
from theory import NonFiniteError

V, F = T.THESIS_TARGET


def _u(m=12, seed=0, eta=0.004):
    rng = np.random.default_rng(seed)
    while True:
        u = np.sort(rng.uniform(0.01, 0.99, m))
        if T.separation(u, eta) > 2 * eta:
            return u


def test_activation_properties():
    z = np.linspace(-0.7, 0.7, 2001)
    s = T.activation(z)
    assert s[0] == 0.0 and s[-1] == 1.0 and np.all(np.diff(s) >= 0)
    np.testing.assert_allclose(s - 0.5, -(T.activation(-z) - 0.5), atol=1e-15)  # sigma - 1/2 odd
    h = 1e-6
    fd = (T.activation(z + h) - T.activation(z - h)) / (2 * h)
    np.testing.assert_allclose(fd, T.activation_prime(z), atol=1e-8)
    # C^2: sigma'' vanishes at +-1/2 (t^2 (1-t)^2 has double roots)
    d2 = (T.activation_prime(np.array([0.5 - 1e-7])) - T.activation_prime(np.array([0.5 - 2e-7]))) / 1e-7
    assert abs(d2[0]) < 1e-4


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    u = _u()
    a = rng.normal(size=u.size + 1)
    ga, gu = T.gradient(a, u, 0.004, V, F)
    h = 1e-6
    fa = [(T.loss(a + h * e, u, 0.004, V, F) - T.loss(a - h * e, u, 0.004, V, F)) / (2 * h) for e in np.eye(a.size)]
    fu = [(T.loss(a, u + h * e, 0.004, V, F) - T.loss(a, u - h * e, 0.004, V, F)) / (2 * h) for e in np.eye(u.size)]
    np.testing.assert_allclose(ga, fa, atol=1e-7)
    np.testing.assert_allclose(gu, fu, atol=1e-6 * max(1, np.abs(gu).max()))


def test_exact_quadrature_matches_fine_grid():
    rng = np.random.default_rng(2)
    u = _u(seed=2)
    a = rng.normal(size=u.size + 1)
    ga, gu = T.gradient(a, u, 0.004, V, F)
    gag, gug = T.gradient(a, u, 0.004, V, F, quadrature=200001)
    np.testing.assert_allclose(gu, gug, atol=1e-8)
    np.testing.assert_allclose(ga, gag, atol=1e-4)  # trapezoid error O(h) at the jumps of f*


def test_gram_is_lemma_6_11_closed_form():
    u = _u(m=10, seed=3)
    eta = 0.004
    H, _ = T.gram(u, eta, V, F)
    w = np.concatenate(([-eta / 2], u))
    H0 = 1 - np.maximum(np.maximum.outer(w, w), 0)
    off = ~np.eye(u.size + 1, dtype=bool)
    np.testing.assert_allclose(H[off], H0[off], atol=1e-14)
    # diagonal: H_0 + eta (int_{-1/2}^{1/2} sigma^2 - 1/2) for j >= 1
    z = np.linspace(-0.5, 0.5, 200001)
    corr = eta * (np.trapezoid(T.activation(z) ** 2, z) - 0.5)
    np.testing.assert_allclose(np.diag(H)[1:], np.diag(H0)[1:] + corr, atol=1e-10)


def test_optimal_weights_zero_gradient_and_best_fit():
    u = _u(seed=4)
    a = T.optimal_weights(u, 0.004, V, F)
    assert np.abs(T.gradient(a, u, 0.004, V, F)[0]).max() < 1e-12
    rng = np.random.default_rng(4)
    base = T.loss(a, u, 0.004, V, F)
    for _ in range(5):
        assert T.loss(a + 1e-3 * rng.normal(size=a.size), u, 0.004, V, F) > base


def test_heaviside_loss_closed_form_and_best_fit_on_grid():
    rng = np.random.default_rng(5)
    edges = np.concatenate(([0], V, [1]))
    u = np.sort(np.concatenate([rng.uniform(lo + 0.01, hi - 0.01, 2) for lo, hi in zip(edges[:-1], edges[1:])]))
    assert T.heaviside_loss(u, V, F) == pytest.approx(T.heaviside_loss_closed_form(u, V, F), rel=1e-13)
    # independent: least squares on a fine grid with Heaviside features
    x = (np.arange(400000) + 0.5) / 400000
    Phi = np.column_stack([np.ones_like(x)] + [(x > uj).astype(float) for uj in u])
    y = T.evaluate_target(x, V, F)
    coef = np.linalg.lstsq(Phi, y, rcond=None)[0]
    assert 0.5 * np.mean((Phi @ coef - y) ** 2) == pytest.approx(T.heaviside_loss(u, V, F), rel=1e-4)


def test_heaviside_velocities_are_minus_gradient_of_6_6():
    rng = np.random.default_rng(6)
    edges = np.concatenate(([0], V, [1]))
    u = np.sort(np.concatenate([rng.uniform(lo + 0.01, hi - 0.01, 3) for lo, hi in zip(edges[:-1], edges[1:])]))
    vel = T.heaviside_velocities(u, V, F)
    h = 1e-7
    fd = [-(T.heaviside_loss_closed_form(u + h * e, V, F) - T.heaviside_loss_closed_form(u - h * e, V, F)) / (2 * h)
          for e in np.eye(u.size)]
    np.testing.assert_allclose(vel, fd, atol=1e-7)
    L, R = T.flanking(u, V)
    assert np.count_nonzero(vel) == 2 * len(V) and np.all(vel[L] > 0) and np.all(vel[R] < 0)


def test_heaviside_hitting_time_matches_integration():
    tau, other = T.heaviside_hitting_time(0.15, 0.28, 0.2, 3.0)
    U = T.heaviside_flow(np.array([0.05, 0.1, 0.15, 0.28, 0.3, 0.5, 0.6]), [0.2], [1.0, 4.0],
                         [0.999 * tau, 1.001 * tau, 10.0])
    assert U[0, 2] < 0.2 - 1e-9 and U[1, 2] == pytest.approx(0.2, abs=1e-9)
    assert U[2, 3] == pytest.approx(other, abs=1e-8)
    c = 0.08 ** 3 - 0.05 ** 3
    assert other == pytest.approx(0.2 + c ** (1 / 3), rel=1e-12)
    # symmetric positions: both arrive together
    # (exactly representable distances: c^(1/3) amplifies the rounding of v - u_left, u_right - v)
    tau_s, other_s = T.heaviside_hitting_time(0.25, 0.75, 0.5, 1.0)
    assert other_s == 0.5 and tau_s == pytest.approx(2 * 4 * 0.25, rel=1e-10)


def test_limit_flow_matches_scipy():
    from scipy.integrate import solve_ivp

    u0 = _u(m=8, seed=7, eta=0.02)
    tr = T.limit_flow(u0, 0.05, 2.5e-4, 0.02, V, F, record_every=20)

    def rhs(_t, u):
        a = T.optimal_weights(u, 0.02, V, F)
        return -T.gradient(a, u, 0.02, V, F)[1]

    ref = solve_ivp(rhs, (0, 0.05), u0, rtol=1e-11, atol=1e-13, t_eval=[0.05]).y[:, -1]
    np.testing.assert_allclose(tr.u[-1], ref, atol=1e-9)
    assert np.all(np.diff(tr.loss) <= 1e-15)  # the limit is a gradient flow of L*


def test_gradient_descent_loss_decreases_and_matches_python_loop():
    u0 = _u(m=6, seed=8, eta=0.02)
    tr = T.gradient_descent(np.zeros(7), u0, 0.01, 0.1, 50, 0.02, V, F)
    a, u = np.zeros(7), u0.copy()
    for _ in range(50):
        ga, gu = T.gradient(a, u, 0.02, V, F)
        a, u = a - 0.1 * ga, u - 0.001 * gu
    np.testing.assert_allclose(tr.a[-1], a, atol=1e-13)
    np.testing.assert_allclose(tr.u[-1], u, atol=1e-13)
    assert np.all(np.diff(tr.loss) <= 1e-14)
    assert tr.tau[-1] == pytest.approx(0.01 * 0.1 * 50)


def test_extremes():
    # eta = 1, one neuron, neurons outside [0, 1]
    assert np.isfinite(T.loss([0.0, 1.0], [0.5], 1.0, V, F))
    H, _ = T.gram(np.array([-0.3, 1.4]), 0.01, V, F)
    assert H[1, 1] == pytest.approx(1.0) and H[2, 2] == 0.0
    with pytest.raises(ValueError, match="u"):
        T.optimal_weights(np.array([-0.3, 1.4]), 0.01, V, F)
    with pytest.raises(ValueError, match="u"):
        T.optimal_weights(np.array([0.3, 0.3]), 0.01, V, F)
    assert T.heaviside_loss(np.array([]), [0.5], [0.0, 1.0]) == pytest.approx(0.125)


def test_constants():
    n, dv, df, M = T.target_constants(V, F)
    assert (n, dv, df, M) == (6, pytest.approx(0.15), 1.0, 4.0)
    assert T.neurons_required(6, 0.15, 0.5) == pytest.approx(40 * (4 + np.log(6) + np.log(2)), rel=1e-12)
    assert T.lemma_6_19_separation(0.5, 260) == pytest.approx(0.5 / (6 * 261 ** 2))
    q1, q2 = T.theorem_6_2_thresholds(0.1, 0.5, 260, 1.0, 4.0)
    assert 0 < q2 < q1 < 1e-15
    assert T.recovery_horizon(1.0) == 6.0


@pytest.mark.parametrize("call, name", [
    (lambda: T.loss([0, 1], [0.5], 0.0, V, F), "eta"),
    (lambda: T.loss([0, 1], [0.5], 1.5, V, F), "eta"),
    (lambda: T.loss([0, 1, 2], [0.5], 0.1, V, F), "a"),
    (lambda: T.loss([0, 1], [np.nan], 0.1, V, F), "u"),
    (lambda: T.loss([0, 1], [0.5], 0.1, [0.6, 0.4], [1, 2, 3]), "v"),
    (lambda: T.loss([0, 1], [0.5], 0.1, [0.4], [1, 2, 3]), "f"),
    (lambda: T.loss([0, 1], [0.5], 0.1, [0.4], [1, 1]), "f"),
    (lambda: T.loss([0, 1], [0.5], 0.1, [1.2], [1, 2]), "v"),
    (lambda: T.loss([0, 1], [0.5], 0.1, V, F, quadrature="simpson"), "quadrature"),
    (lambda: T.loss([0, 1], [0.5], 0.1, V, F, quadrature=2), "quadrature"),
    (lambda: T.gradient_descent([0, 0], [0.5], 0.0, 0.1, 10, 0.1, V, F), "eps"),
    (lambda: T.gradient_descent([0, 0], [0.5], 0.1, -0.1, 10, 0.1, V, F), "h"),
    (lambda: T.gradient_descent([0, 0], [0.5], 0.1, 0.1, -1, 0.1, V, F), "steps"),
    (lambda: T.limit_flow([0.5], 1.0, 0.0, 0.1, V, F), "dtau"),
    (lambda: T.heaviside_loss_closed_form([0.1, 0.6], [0.5], [0, 1]), "u"),
    (lambda: T.heaviside_velocities([0.1, 0.6], [0.5], [0, 1]), "u"),
    (lambda: T.heaviside_hitting_time(0.3, 0.4, 0.2, 1.0), "u_left"),
    (lambda: T.heaviside_hitting_time(0.1, 0.4, 0.2, 0.0), "jump"),
    (lambda: T.heaviside_flow([0.1, 0.2, 0.6, 0.7], [0.5], [0, 1], [1.0, 0.5]), "taus"),
    (lambda: T.prop_6_9_bound(1.0, 1e-3, 0.1, 1.0, 6), "eps"),
    (lambda: T.prop_6_9_bound(1.0, 1e-12, 0.1, 0.5, 6), "M"),
    (lambda: T.neurons_required(1, 0.1, 0.5), "n"),
    (lambda: T.neurons_required(3, 0.1, 1.5), "delta"),
    (lambda: T.is_d_good([0.5], [0.5], -1.0, 0.01), "D"),
])
def test_bad_input_names_argument(call, name):
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        call()


def test_divergent_descent_raises_nonfinite():
    with pytest.raises(NonFiniteError):
        T.gradient_descent(np.zeros(13), _u(), 1e-3, 50.0, 2000, 0.004, V, F)


def test_sgd_matches_python_loop_and_is_reproducible():
    u0 = _u(m=5, seed=9, eta=0.02)
    a0 = np.zeros(6)
    tr = T.sgd(a0, u0, 0.1, 0.01, 50, 0.02, V, F, record_every=50, rng=np.random.default_rng(3))
    rng = np.random.default_rng(3)
    X, N = rng.uniform(0, 1, 50), rng.uniform(-1, 1, 50)
    a, u = a0.copy(), u0.copy()
    for x, n in zip(X, N):
        s = T.activation((x - u) / 0.02)
        ds = T.activation_prime((x - u) / 0.02) / 0.02
        r = a[0] + s @ a[1:] - (T.evaluate_target(np.array([x]), V, F)[0] + n)
        ga = np.concatenate(([r], r * s))
        gu = -r * a[1:] * ds
        a, u = a - 0.01 * ga, u - 0.1 * 0.01 * gu
    np.testing.assert_allclose(tr.a[-1], a, atol=1e-13)
    np.testing.assert_allclose(tr.u[-1], u, atol=1e-13)
    tr2 = T.sgd(a0, u0, 0.1, 0.01, 50, 0.02, V, F, record_every=50, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(tr.u, tr2.u)
    with pytest.raises(ValueError, match="`noise`"):
        T.sgd(a0, u0, 0.1, 0.01, 5, 0.02, V, F, noise=-1.0)


def test_theorem_thresholds_refuse_too_few_neurons():
    with pytest.raises(ValueError, match="`m`"):
        T.theorem_6_2_thresholds(0.1, 0.5, 20, 1.0, 4.0, n=6, dv=0.15)
    q1, q2 = T.theorem_6_2_thresholds(0.1, 0.5, 260, 1.0, 4.0, n=6, dv=0.15)
    assert q1 > 0 and q2 > 0
    with pytest.raises(ValueError, match="`n` and `dv`"):
        T.theorem_6_2_thresholds(0.1, 0.5, 260, 1.0, 4.0, n=6)


@pytest.mark.parametrize("kw, name", [
    ({"gaps": (2.2, 4.0, 2.02)}, "gaps"),
    ({"gaps": (4.0, 2.2)}, "gaps"),
    ({"gaps": (4.0, -1.0, -2.0)}, "gaps"),
    ({"spacing": 2.0}, "spacing"),
    ({"pair_radius": 0.5}, "pair_radius"),
    ({"per_piece": 0}, "per_piece"),
    ({"eta": 0.0}, "eta"),
    ({"trials": 1.5}, "trials"),
])
def test_lipschitz_config_rejects_bad_fields(kw, name):
    from theory.experiments.two_timescale import LipschitzConfig

    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        LipschitzConfig(**kw)


def test_lipschitz_quotient_equals_directional_derivative_for_small_pairs():
    # G(u) = (grad_u L)(a*(u), u) is C^1 on U: (G(u + r d) - G(u)) / r -> DG(u) d as r -> 0
    eta = 0.004
    u = _u(seed=3)
    d = np.random.default_rng(1).standard_normal(u.size)
    d /= np.linalg.norm(d)

    def G(w):
        return T.gradient(T.optimal_weights(w, eta, V, F), w, eta, V, F)[1]

    q = [(G(u + r * d) - G(u)) / r for r in (1e-4, 1e-5, 1e-6)]
    assert np.linalg.norm(q[2] - q[1]) < 0.2 * np.linalg.norm(q[1] - q[0])


@pytest.mark.parametrize("kw, name", [
    ({"per_piece": 1}, "per_piece"),
    ({"offsets": ()}, "offsets"),
    ({"offsets": (3.0,)}, "offsets"),
    ({"eta": 2.0}, "eta"),
    ({"v": (0.5, 0.2), "f": (0.0, 1.0, 2.0)}, "v"),
])
def test_flanking_config_rejects_bad_fields(kw, name):
    from theory.experiments.two_timescale import FlankingConfig

    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        FlankingConfig(**kw)


# ------------------------------------------------------------------ validation at the door (regressions)

import signal  # noqa: E402
import time  # noqa: E402


def _refused_fast(call, name, seconds=5):
    def alarm(signum, frame):
        raise AssertionError(f"not refused within {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        start = time.perf_counter()
        with pytest.raises(ValueError, match=f"`{name}`"):
            call()
        assert time.perf_counter() - start < 1.0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("call, name", [
    # before: 168 s for tau_end = 1e300 at dtau = 1e-3 (or forever), now ~1e303 RK4 steps refused up front
    (lambda u: T.limit_flow(u, 1e300, 1e-3, 0.02, V, F), "tau_end"),
    (lambda u: T.limit_flow(u, 1.0, 1e-300, 0.02, V, F), "tau_end"),
    # before: a Numba allocation of 10**12 records, or hours of steps
    (lambda u: T.gradient_descent(np.zeros(u.size + 1), u, 0.01, 0.1, 10**12, 0.02, V, F), "steps"),
    (lambda u: T.sgd(np.zeros(u.size + 1), u, 0.01, 0.1, 10**13, 0.02, V, F), "steps"),
    (lambda u: T.loss(np.zeros(u.size + 1), u, 0.02, V, F, quadrature=10**12), "quadrature"),
    (lambda u: T.heaviside_flow(np.linspace(0.001, 0.999, 3000), [0.5], [0, 1], np.zeros(10**6)), "taus"),
])
def test_huge_sizes_are_refused_up_front(call, name):
    u = _u(m=8, seed=7, eta=0.02)
    _refused_fast(lambda: call(u), name)


@pytest.mark.parametrize("call, name, exc", [
    (lambda: T.heaviside_invariant(None, 0.3, 0.2), "u_left", TypeError),  # before: NaN
    (lambda: T.heaviside_invariant([0.1, np.nan], 0.3, 0.2), "u_left", ValueError),  # before: NaN
    (lambda: T.heaviside_invariant(0.1, "0.3", 0.2), "u_right", TypeError),
    (lambda: T.heaviside_invariant(0.1, 0.3, None), "v", TypeError),
    (lambda: T.heaviside_invariant(np.zeros(2), np.zeros(3), 0.2), "u_right", ValueError),
    (lambda: T.heaviside_hitting_time(-1e300, 0.3, 0.2, 1.0), "u_left", ValueError),  # before: NaN
    (lambda: T.heaviside_hitting_time(0.1, 1e300, 0.2, 1.0), "u_right", ValueError),  # before: NaN
    (lambda: T.gradient_descent(None, [0.5], 0.1, 0.1, 10, 0.1, V, F), "a0", TypeError),  # before: a Numba error
    (lambda: T.sgd(None, [0.5], 0.1, 0.1, 10, 0.1, V, F), "a0", TypeError),  # before: AttributeError
    (lambda: T.target_constants([], [1.0]), "v", ValueError),  # before: Delta f = inf returned
    (lambda: T.prop_6_9_bound("1", 1e-12, 0.1, 1.0, 6), "t", TypeError),  # before: numpy's conversion error
    (lambda: T.is_d_good([0.5], [0.5], 0.1, 5.0), "eta", ValueError),  # before: False, eta never looked at
    (lambda: T.is_d_good([0.5], [0.7, 0.2], 0.1, 0.1), "v", ValueError),  # before: False for decreasing jumps
    (lambda: T.flanking([0.5], [[0.2]]), "v", ValueError),
    (lambda: T.heaviside_gram([0.5], V, F, eta="0"), "eta", TypeError),  # before: TypeError of unary minus
    (lambda: T.heaviside_flow([0.1, 0.2, 0.6, 0.7], [0.5], [0, 1], [1.0], rtol=1e-20), "rtol", ValueError),
    (lambda: T.theorem_6_2_thresholds(0.1, 0.5, 260, 1.0, 4.0, C1=-1.0), "C1", ValueError),  # before: accepted
    (lambda: T.theorem_6_8_threshold(0.1, 0.5, 260, 6, 1.0, 4.0, C=np.nan), "C", ValueError),  # before: NaN
    (lambda: T.sgd(np.zeros(2), [0.5], 0.1, 0.1, 10, 0.1, V, F, noise=1.7e308), "noise", ValueError),
])
def test_every_argument_is_validated(call, name, exc):
    with pytest.raises(exc, match=f"`{name}`"):
        call()


def test_overflow_raises_nonfinite_error_or_gives_the_finite_limit():
    # before: OverflowError of Python's float power (not a ValueError)
    q1, q2 = T.theorem_6_2_thresholds(0.1, 0.5, 260, 1e300, 4.0)
    assert q1 == 2.0 ** -21 / (16 * 261) * 0.1  # min(delta^2 df^2 / (m+1)^4, xi) = xi
    with pytest.raises(NonFiniteError):
        T.recovery_horizon(1e-200)  # before: ZeroDivisionError
    with pytest.raises(NonFiniteError):
        T.prop_6_9_bound(1.0, 1e-300, 1e-100, 1e200, 6)
    with pytest.raises(NonFiniteError):  # before: inf returned
        T.heaviside_loss_closed_form([0.1, 0.2, 0.6, 0.7], [0.5], [-1e200, 1e200])


def test_shapes_of_scalar_input_and_huge_record_every():
    # scalars stay scalars (before: shape (1,))
    assert np.shape(T.activation(0.1)) == () and np.shape(T.network(0.3, [0.0, 1.0], [0.5], 0.1)) == ()
    assert np.shape(T.evaluate_target(0.3, V, F)) == ()
    # before: OverflowError "int too big to convert" in the kernel; the start is the only record
    tr = T.gradient_descent(np.zeros(2), [0.5], 0.1, 0.1, 3, 0.1, V, F, record_every=10**30)
    assert tr.u.shape == (1, 1) and tr.tau.tolist() == [0.0]
    # before: numpy's "high - low < 0" for a noise of -0.0
    assert T.sgd(np.zeros(2), [0.5], 0.1, 0.1, 3, 0.1, V, F, noise=-0.0, rng=0).u.shape == (4, 1)


def test_flanking_and_d_good_match_their_definitions_with_ties():
    rng = np.random.default_rng(11)
    for _ in range(200):
        u = np.round(rng.uniform(-0.1, 1.1, rng.integers(1, 15)), 1)  # ties, and positions at the jumps
        left, right = T.flanking(u, V)
        for i, vi in enumerate(V):
            below, above = np.where(u < vi)[0], np.where(u > vi)[0]
            assert left[i] == (below[np.argmax(u[below])] if below.size else -1)
            assert right[i] == (above[np.argmin(u[above])] if above.size else -1)
        edges = np.concatenate(([0.0], V, [1.0]))
        six = all(np.count_nonzero((u >= lo) & (u <= hi)) >= 6 for lo, hi in zip(edges[:-1], edges[1:]))
        if not six:
            assert not T.is_d_good(u, V, 1e-3, 0.01)
