"""Unit tests of theory.momentum (Momentum ResNets, Sander's thesis ch. 4)."""

import math
import time

import numpy as np
import pytest

import theory.momentum as M
from theory.resnet import mlp


def _f_ref(name, x, th, width=0):
    if name == "linear":
        return th @ x
    if name == "tanh":
        return np.tanh(th @ x)
    if name == "tanh_out":
        return th @ np.tanh(x)
    d = x.shape[0]
    V = th[: d * width].reshape(d, width)
    W = th[d * width: 2 * d * width].reshape(width, d)
    b = th[2 * d * width:]
    return V @ np.tanh(W @ x + b)


def _reference(name, x0, v0, theta, gamma, width=0):
    xs, vs = [np.array(x0, float)], [np.array(v0, float)]
    for n in range(theta.shape[0]):
        v = gamma * vs[-1] + (1 - gamma) * _f_ref(name, xs[-1], theta[n], width)
        vs.append(v)
        xs.append(xs[-1] + v)
    return np.array(xs), np.array(vs)


FAMILIES = [("linear", "linear", 0), ("tanh", "tanh", 0), ("tanh_out", "tanh_out", 0), ("mlp", mlp(5), 5)]


@pytest.mark.parametrize("name,residual,width", FAMILIES)
@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9, 1.0])
def test_forward_matches_numpy_loop(name, residual, width, gamma):
    rng = np.random.default_rng(3)
    d, N = 3, 12
    shape = (N, 2 * d * width + width) if width else (N, d, d)
    theta = rng.standard_normal(shape) / math.sqrt(d)
    x0, v0 = rng.standard_normal(d), rng.standard_normal(d)
    xs, vs = M.forward(x0, v0, theta, residual, gamma)
    theta2 = theta.reshape(N, -1) if width else theta
    rx, rv = _reference(name, x0, v0, theta2, gamma, width)
    np.testing.assert_allclose(xs, rx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vs, rv, rtol=1e-12, atol=1e-12)
    # batch rows agree with single calls
    X0 = rng.standard_normal((4, d))
    bx, bv = M.forward(X0, np.zeros((4, d)), theta, residual, gamma)
    sx, sv = M.forward(X0[2], None, theta, residual, gamma)
    np.testing.assert_allclose(bx[:, 2], sx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bv[:, 2], sv, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,residual,width", FAMILIES)
@pytest.mark.parametrize("gamma", [0.5, 0.9, 0.99, 1.0])
def test_inverse_reconstructs_forward(name, residual, width, gamma):
    rng = np.random.default_rng(4)
    d, N = 4, 30
    shape = (N, 2 * d * width + width) if width else (N, d, d)
    theta = rng.standard_normal(shape) / math.sqrt(d)
    x0 = rng.standard_normal((3, d))
    xs, vs = M.forward(x0, "f", theta, residual, gamma)
    rx, rv = M.inverse(xs[-1], vs[-1], theta, residual, gamma)
    scale = max(1.0, np.abs(xs).max())
    # rounding errors are amplified by at most gamma^{-N} (times a modest Lipschitz factor)
    tol = 1e-13 * scale * gamma ** (-N) * 10
    assert np.abs(rx - xs).max() <= tol
    assert np.abs(rv - vs).max() <= tol


def test_v0_f_is_first_residual():
    rng = np.random.default_rng(5)
    theta = rng.standard_normal((3, 2, 2))
    x0 = rng.standard_normal(2)
    _, vs = M.forward(x0, "f", theta, "tanh", 0.9)
    np.testing.assert_allclose(vs[0], np.tanh(theta[0] @ x0), rtol=1e-14)
    np.testing.assert_allclose(M.residual_f(x0, theta[0], "tanh"), np.tanh(theta[0] @ x0), rtol=1e-14)


def test_gamma_zero_is_resnet():
    rng = np.random.default_rng(6)
    theta = rng.standard_normal((5, 2, 2)) / 2
    x0 = rng.standard_normal(2)
    xs, _ = M.forward(x0, rng.standard_normal(2), theta, "tanh", 0.0)
    x = x0.copy()
    for n in range(5):
        x = x + np.tanh(theta[n] @ x)
        np.testing.assert_allclose(xs[n + 1], x, rtol=1e-13)


@pytest.mark.parametrize("kwargs,name", [
    (dict(gamma=1.5), "gamma"), (dict(gamma=-0.1), "gamma"), (dict(gamma=float("nan")), "gamma"),
    (dict(theta=np.zeros((0, 2, 2))), "theta"), (dict(theta=np.zeros((3, 3, 3))), "theta"),
    (dict(x0=np.array([1.0, np.inf])), "x0"), (dict(v0=np.zeros(3)), "v0"), (dict(v0="g"), "v0"),
    (dict(residual="nope"), "residual"),
])
def test_forward_validation(kwargs, name):
    args = dict(x0=np.ones(2), v0=None, theta=np.zeros((3, 2, 2)), residual="linear", gamma=0.5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"`{name}`"):
        M.forward(**args)


def test_inverse_refuses_gamma_zero_and_none():
    with pytest.raises(ValueError, match="`gamma`"):
        M.inverse(np.ones(2), np.ones(2), np.zeros((3, 2, 2)), "linear", 0.0)
    with pytest.raises(TypeError, match="`vN`"):
        M.inverse(np.ones(2), None, np.zeros((3, 2, 2)), "linear", 0.5)


def test_overflow_raises_nonfinite():
    from theory._errors import NonFiniteError
    with pytest.raises(NonFiniteError):
        M.forward(np.ones(1), None, np.full((2000, 1, 1), 10.0), "linear", 0.0)


# ------------------------------------------------------------------- Psi_eps, lambda_eps

@pytest.mark.parametrize("eps", [0.2, 0.5, 1.0, 3.0])
def test_psi_block_exp_matches_series(eps):
    rng = np.random.default_rng(7)
    theta = rng.standard_normal((3, 3))
    np.testing.assert_allclose(M.psi(theta, eps), M.psi_series(theta, eps), rtol=1e-11, atol=1e-12)


def test_psi_eps_zero_is_exp_and_small_eps_limit():
    import scipy.linalg
    theta = np.array([[0.3, -1.0], [0.5, 0.1]])
    np.testing.assert_allclose(M.psi(theta, 0.0), scipy.linalg.expm(theta), rtol=1e-14)
    e1 = np.abs(M.psi(theta, 1e-3) - scipy.linalg.expm(theta)).max()
    e2 = np.abs(M.psi(theta, 5e-4) - scipy.linalg.expm(theta)).max()
    assert 1.7 < e1 / e2 < 2.3  # first order in eps


def test_psi_closed_form_scalar():
    # Prop. 4.11: theta = eps (-pi^2 - 1/(4 eps^2)) gives -exp(-1/(2 eps))
    for eps in (0.3, 1.0, 5.0):
        theta = eps * (-math.pi ** 2 - 1 / (4 * eps ** 2))
        assert abs(M.psi([[theta]], eps)[0, 0] + math.exp(-0.5 / eps)) < 1e-13


@pytest.mark.parametrize("eps", [0.05, 0.1, 0.5, 1.0, 2.0, 10.0, 50.0])
def test_lambda_eps_against_grid_scan(eps):
    lam, alpha = M.lambda_eps(eps)
    a = np.linspace(1e-6, 60.0, 600001)
    G = math.exp(-0.5 / eps) * (np.cos(a) + np.sin(a) / (2 * eps * a))
    # the true minimum lies below every grid value, by at most the grid's second-order error
    assert lam <= G.min() + 1e-15 and G.min() - lam <= 1e-8 * max(abs(lam), 1e-300)
    assert abs(a[np.argmin(G)] - alpha) < 1e-3
    # the minimum is reached by Psi_eps at the real theta* = -eps alpha^2 - 1/(4 eps)
    theta_star = -eps * alpha ** 2 - 1 / (4 * eps)
    assert abs(M.psi([[theta_star]], eps)[0, 0] - lam) <= 1e-10
    assert -1 < lam < -math.exp(-0.5 / eps) < 0 or eps < 0.1


def test_lambda_eps_reference_values():
    # values of an independent bounded minimisation, 11 digits
    for eps, lam in [(1.0, -0.61349860317), (2.0, -0.78114713998), (5.0, -0.90528668861)]:
        assert abs(M.lambda_eps(eps)[0] - lam) < 1e-10


def test_lambda_eps_validation():
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="`eps`"):
            M.lambda_eps(bad)
    with pytest.raises(TypeError, match="`eps`"):
        M.lambda_eps("1")


# ----------------------------------------------------------------- representable, preimage

def test_representable_scalar_cases():
    lam = M.lambda_eps(1.0)[0]
    assert M.representable([[lam + 1e-3]], 1.0)
    assert not M.representable([[lam - 1e-3]], 1.0)
    assert M.representable(np.zeros((2, 2)), 1.0)       # singular maps are reachable for eps > 0
    assert not M.representable(np.zeros((2, 2)), 0.0)
    assert M.representable(-0.9 * np.eye(2), 1.0)        # a doubled eigenvalue below lambda_eps
    assert M.representable(-np.eye(2), 0.0)
    assert not M.representable(np.diag([-1.0, -2.0]), 5.0)  # Prop. 4.15's matrix
    assert M.representable(np.diag([-0.5, 2.0]), 1.0) and not M.representable(np.diag([-0.5, 2.0]), 0.0)


def test_representable_refuses_jordan_block():
    with pytest.raises(ValueError, match="`D`.*diagonalizable"):
        M.representable([[1.0, 1.0], [0.0, 1.0]], 1.0)


@pytest.mark.parametrize("eps", [0.0, 0.2, 1.0, 4.0])
def test_preimage_roundtrip(eps):
    rng = np.random.default_rng(8)
    lam_e = M.lambda_eps(eps)[0] if eps else 0.0
    count = 0
    for _ in range(30):
        d = 4
        P = rng.standard_normal((d, d))
        lam = rng.uniform(lam_e + 0.01, 3.0, d) if eps else rng.uniform(0.1, 3.0, d)
        if rng.random() < 0.5:
            lam[:2] = rng.uniform(-3.0, lam_e - 0.01)  # a doubled low eigenvalue
        B = np.diag(lam)
        if rng.random() < 0.5:
            a, b = rng.standard_normal(2)
            B[2:, 2:] = [[a, b], [-b, a]]
        D = P @ B @ np.linalg.inv(P)
        assert M.representable(D, eps)
        theta = M.preimage(D, eps)
        assert theta.dtype == np.float64 and np.isrealobj(theta)
        err = np.abs(M.psi(theta, eps) - D).max()
        assert err <= 1e-9 * np.linalg.cond(P) * max(1.0, np.abs(D).max())
        count += 1
    assert count == 30


def test_preimage_refuses_non_representable():
    with pytest.raises(ValueError, match="not representable"):
        M.preimage(np.diag([-0.9, 1.0]), 1.0)
    with pytest.raises(ValueError, match="not representable"):
        M.preimage(np.diag([-0.5, 1.0]), 0.0)
    with pytest.raises(ValueError, match="`D`"):
        M.preimage(np.ones((2, 3)), 1.0)


# ------------------------------------------------------------------------------ gradients

@pytest.mark.parametrize("name,residual,width", FAMILIES)
def test_gradient_matches_finite_differences_and_memory_free(name, residual, width):
    rng = np.random.default_rng(9)
    d, N, gamma = 3, 15, 0.9
    shape = (N, 2 * d * width + width) if width else (N, d, d)
    theta = rng.standard_normal(shape) / 2
    x0, v0, y = (rng.standard_normal((2, d)) for _ in range(3))
    loss, gt, gx, gv = M.gradient(x0, v0, theta, residual, gamma, y)
    loss2, gt2, gx2, gv2 = M.gradient(x0, v0, theta, residual, gamma, y, method="memory_free")
    assert loss == loss2
    for a, b in ((gt, gt2), (gx, gx2), (gv, gv2)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(a).max()))

    def L(th, x, v):
        xs, _ = M.forward(x, v, th, residual, gamma)
        return 0.5 * float(((xs[-1] - y) ** 2).sum())

    h = 1e-6
    for arr, grad, which in ((theta, gt, 0), (x0, gx, 1), (v0, gv, 2)):
        for k in rng.choice(arr.size, 4, replace=False):
            E = np.zeros_like(arr)
            E.flat[k] = h
            args_p = [theta, x0, v0]
            args_m = [theta, x0, v0]
            args_p[which] = arr + E
            args_m[which] = arr - E
            fd = (L(*args_p) - L(*args_m)) / (2 * h)
            assert abs(fd - grad.flat[k]) <= 1e-6 * max(1.0, abs(fd))


def test_gradient_validation():
    args = (np.ones(2), None, np.zeros((3, 2, 2)), "linear", 0.5, np.zeros(2))
    with pytest.raises(ValueError, match="`method`"):
        M.gradient(*args, method="adjoint")
    with pytest.raises(ValueError, match="`y`"):
        M.gradient(*args[:5], np.zeros(3))
    with pytest.raises(ValueError, match="`gamma`"):
        M.gradient(*args[:4], 0.0, args[5], method="memory_free")
    with pytest.raises(ValueError, match="`v0`"):
        M.gradient(args[0], "f", *args[2:])


# ------------------------------------------------------------------------- exact inversion

@pytest.mark.parametrize("num,den", [(1, 2), (9, 10), (3, 3)])
def test_exact_inverse_is_bit_exact(num, den):
    rng = np.random.default_rng(10)
    theta = rng.standard_normal((30, 3, 3))
    x0, v0 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    x, v, buf = M.forward_exact(x0, v0, theta, "tanh_out", num, den)
    rx, rv, rb = M.inverse_exact(x, v, buf, theta, "tanh_out", num, den)
    assert (rx == M.to_fixed(x0)).all() and (rv == M.to_fixed(v0)).all() and (rb == 0).all()
    # the fixed-point forward pass follows the float one to rounding
    xs, _ = M.forward(x0, v0, theta, "tanh_out", num / den)
    assert np.abs(M.from_fixed(x) - xs[-1]).max() < 1e-9 * max(1.0, np.abs(xs).max())


def test_exact_validation():
    with pytest.raises(ValueError, match="`num`"):
        M.forward_exact(np.ones((1, 2)), None, np.zeros((2, 2, 2)), "linear", 3, 2)
    with pytest.raises(ValueError, match="`den`"):
        M.forward_exact(np.ones((1, 2)), None, np.zeros((2, 2, 2)), "linear", 1, 0)
    with pytest.raises(ValueError, match="`theta`"):
        M.forward_exact(np.ones((1, 2)), None, np.zeros((2, 3, 3)), "linear", 1, 2)


def test_small_eps_and_overflow_are_handled():
    # regression: e^{1/(2 eps)} overflowed (OverflowError) in the preimage for eps = 1e-4
    D = np.diag([0.5, 2.0])
    theta = M.preimage(D, 1e-4)
    np.testing.assert_allclose(M.psi(theta, 1e-4), D, rtol=1e-8)
    D = np.diag([-0.5, -0.5, 2.0])
    np.testing.assert_allclose(M.psi(M.preimage(D, 1e-2), 1e-2), D, atol=1e-10)
    from theory._errors import NonFiniteError
    with pytest.raises(NonFiniteError):
        M.psi([[1e6]], 1.0)
    with pytest.raises(NonFiniteError):
        M.psi_series([[1.0]], 1e-4)


def test_tied_weights_equal_repeated_slices_bit_for_bit():
    rng = np.random.default_rng(5)
    th1 = rng.standard_normal((1, 6, 6)) / 3.0
    x0 = rng.standard_normal((3, 6))
    a = M.forward(x0, "f", th1, "tanh", 0.9, depth=40)
    b = M.forward(x0, "f", np.repeat(th1, 40, axis=0), "tanh", 0.9)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    ra = M.inverse(a[0][-1], a[1][-1], th1, "tanh", 0.9, depth=40)
    rb = M.inverse(b[0][-1], b[1][-1], np.repeat(th1, 40, axis=0), "tanh", 0.9)
    assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1])


@pytest.mark.parametrize("layer", [0, 7, 19])
@pytest.mark.parametrize("which", ["forward", "inverse"])
def test_nonfinite_theta_in_any_layer_refused_by_the_fused_check(layer, which):
    rng = np.random.default_rng(6)
    theta = rng.standard_normal((20, 4, 4))
    theta[layer, 1, 2] = np.nan
    x = rng.standard_normal(4)
    fn = M.forward if which == "forward" else M.inverse
    with pytest.raises(ValueError, match="`theta`.*finite.*layer"):
        fn(x, np.zeros(4), theta, "tanh", 0.9)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("which", ["forward", "inverse"])
@pytest.mark.parametrize("residual", ["tanh", "linear"])
def test_nonfinite_theta_refused_on_the_streaming_row_path(value, which, residual):
    """d >= 32, one input: theta is read once and only a row whose product is not finite is counted; an
    infinity met by a zero coordinate of the state (inf * 0 = NaN) is still found, in any layer and row."""
    rng = np.random.default_rng(16)
    d = 40
    x = rng.standard_normal(d)
    x[5] = 0.0
    for layer, row in ((0, 0), (11, 39), (29, 17)):
        theta = rng.standard_normal((30, d, d)) / (4 * d)
        theta[layer, row, 5 if layer == 0 else row] = value  # layer 0: against x's zero coordinate
        fn = M.forward if which == "forward" else M.inverse
        with pytest.raises(ValueError, match=rf"`theta`.*finite.*layer {layer}"):
            fn(x, np.zeros(d), theta, residual, 0.9)


def test_streaming_row_path_matches_in_order_sums_to_rounding():
    """The single-input path (row products in a compiler-chosen order) against the batch path of the same
    rows (in-order sums), forward and inverse, d = 64: equal to rounding, and a finite theta whose products
    overflow is not reported as a non-finite theta."""
    rng = np.random.default_rng(17)
    d, N = 64, 200
    theta = rng.standard_normal((N, d, d)) / np.sqrt(d)
    x = rng.standard_normal((2, d))
    xs1, vs1 = M.forward(x[0], None, theta, "tanh", 0.99)  # gamma^-N = 7.5: the float inverse is stable
    xsb, vsb = M.forward(x, None, theta, "tanh", 0.99)
    np.testing.assert_allclose(xs1, xsb[:, 0], rtol=1e-12, atol=1e-13)
    r1 = M.inverse(xs1[-1], vs1[-1], theta, "tanh", 0.99)
    rb = M.inverse(xsb[-1], vsb[-1], theta, "tanh", 0.99)
    np.testing.assert_allclose(r1[0], rb[0][:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r1[0], xs1, rtol=0, atol=1e-11)
    big = np.full((3, d, d), 1e300)
    xs, _ = M.forward(np.ones(d), None, big, "tanh", 0.5)  # theta x overflows to inf; tanh(inf) = 1
    assert np.isfinite(xs).all()


@pytest.mark.parametrize("kw, theta_n", [({"depth": 0}, 1), ({"depth": 2.5}, 1), ({"depth": True}, 1),
                                         ({"depth": 5}, 3)])
def test_bad_depth_refused(kw, theta_n):
    # a depth of the wrong kind (2.5, True) is a TypeError, one out of range or with several slices a ValueError
    with pytest.raises(TypeError if isinstance(kw["depth"], (bool, float)) else ValueError, match="`depth`"):
        M.forward(np.ones(3), None, np.zeros((theta_n, 3, 3)), "tanh", 0.5, **kw)


# ------------------------------------------------------------------ reduced Figure 4.1

def test_fig41_isotonic_floor():
    import theory.experiments.momentum as ex

    y = -np.linspace(-1.0, 1.0, 9) ** 3
    assert ex.isotonic_floor(y) == pytest.approx(np.var(y), rel=1e-12)
    assert ex.isotonic_floor(np.arange(5.0)) == 0.0
    assert ex.isotonic_floor([1.0, 3.0, 2.0]) == pytest.approx(1.0 / 6.0, rel=1e-12)


@pytest.mark.parametrize("second", [False, True])
def test_fig41_flow_gradient_matches_finite_differences(second):
    from theory.experiments.momentum._fig41 import _flow_loss_grad

    rng = np.random.default_rng(3)
    m, B, n = 4, 7, 12
    p = rng.standard_normal(3 * m)
    x0 = np.linspace(-1.0, 1.0, B)
    y = -x0 ** 3
    xs, vs, g = np.empty((n + 1, B)), np.empty((n + 1, B)), np.empty(3 * m)
    _flow_loss_grad(p, x0, y, 3.0, n, 2.5, second, xs, vs, g)
    fd = np.empty(3 * m)
    for k in range(3 * m):
        e = np.zeros(3 * m)
        e[k] = 1e-6
        lp = _flow_loss_grad(p + e, x0, y, 3.0, n, 2.5, second, xs, vs, np.empty(3 * m))
        lm = _flow_loss_grad(p - e, x0, y, 3.0, n, 2.5, second, xs, vs, np.empty(3 * m))
        fd[k] = (lp - lm) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_fig41_unit_step_is_eq42():
    # refine = 1: the second-order scheme is the Momentum ResNet (4.2) with gamma = 1 - 1/eps, v0 = 0
    from theory.experiments.momentum._fig41 import _flow_loss_grad

    rng = np.random.default_rng(4)
    m, B, n, gamma = 3, 5, 15, 0.9
    p = rng.standard_normal(3 * m)
    x0 = np.linspace(-1.0, 1.0, B)
    xs, vs, g = np.empty((n + 1, B)), np.empty((n + 1, B)), np.empty(3 * m)
    _flow_loss_grad(p, x0, np.zeros(B), float(n), n, 1.0 / (1.0 - gamma), True, xs, vs, g)
    x, v = x0.copy(), np.zeros(B)
    for _ in range(n):
        f = np.tanh(np.outer(x, p[m:2 * m]) + p[2 * m:]) @ p[:m]
        v = gamma * v + (1.0 - gamma) * f
        x = x + v
    np.testing.assert_allclose(xs[-1], x, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("field, value", [("depth", 0), ("refine", 0), ("gamma", 1.0), ("gamma", -0.1),
                                          ("width", 0), ("points", 1), ("seeds", ()), ("seeds", (-1,)),
                                          ("iterations", 0), ("lr", 0.0), ("refine", 2.5)])
def test_fig41_config_rejects_bad_fields(field, value):
    import dataclasses

    import theory.experiments.momentum as ex

    # a value of the wrong type (2.5 for an integer) is a TypeError, one out of range a ValueError
    with pytest.raises(TypeError if value == 2.5 else ValueError, match=f"`{field}`"):
        dataclasses.replace(ex.FIG41_PRESETS["check"], **{field: value})


# ------------------------------------------------------------- validation at the door, work and memory

def test_to_fixed_refuses_a_fractional_or_bool_frac_bits():
    """A fractional number of bits was accepted (to_fixed(x, 2.5) rounded to a grid of 2^-2.5)."""
    for bad in (2.5, True, "52", None):
        with pytest.raises(TypeError, match="`frac_bits`"):
            M.to_fixed([0.5], bad)
    for bad in (0, -3, 201):
        with pytest.raises(ValueError, match="`frac_bits`"):
            M.to_fixed([0.5], bad)
    assert M.to_fixed([0.75, -1.5], 2).tolist() == [3, -6]
    assert M.to_fixed(0.75, 2).shape == ()  # a scalar keeps its shape


def test_to_fixed_refuses_values_beyond_the_float_range_of_the_grid():
    """x 2^frac_bits overflowed to inf inside the rounding: an OverflowError naming nothing."""
    with pytest.raises(ValueError, match="`x`.*frac_bits"):
        M.to_fixed([1e300], 200)
    with pytest.raises(ValueError, match="`x0`"):
        M.forward_exact(np.full((1, 2), 1e300), None, np.zeros((1, 2, 2)), "linear", 1, 2, frac_bits=200)


def test_from_fixed_takes_integers_only():
    """from_fixed had no validation: floats were accepted and None or a string raised a bare float() error."""
    assert M.from_fixed(np.array([3, -6], dtype=np.int64), 2).tolist() == [0.75, -1.5]
    assert M.from_fixed([[3], [2 ** 80]], 2).dtype == np.float64
    for bad in (None, "3", [1.5], np.array([1.0]), [True], 1j):
        with pytest.raises(TypeError, match="`z`"):
            M.from_fixed(bad, 2)
    with pytest.raises(TypeError, match="`frac_bits`"):
        M.from_fixed([3], 2.5)
    with pytest.raises(ValueError, match="`z`"):
        M.from_fixed([2 ** 1100], 2)


def test_inverse_exact_refuses_float_arrays():
    """Float arrays were taken as the integers of the grid and a float 'exact' inverse was returned."""
    x, v, buf = M.forward_exact(np.ones((1, 2)), None, 0.1 * np.ones((3, 2, 2)), "tanh", 9, 10)
    for name, kw in (("xN", {"xN": np.ones((1, 2))}), ("vN", {"vN": [[0.5, 1.0]]}), ("buffer", {"buffer": None})):
        args = {"xN": x, "vN": v, "buffer": buf, **kw}
        with pytest.raises(TypeError, match=f"`{name}`"):
            M.inverse_exact(args["xN"], args["vN"], args["buffer"], 0.1 * np.ones((3, 2, 2)), "tanh", 9, 10)
    # NumPy integer arrays are integers
    rx, rv, rb = M.inverse_exact(x, v, np.asarray(buf, dtype=np.int64), 0.1 * np.ones((3, 2, 2)), "tanh", 9, 10)
    assert (rx == M.to_fixed(np.ones((1, 2)))).all() and (rv == 0).all() and (rb == 0).all()


def test_forward_exact_refuses_a_growing_buffer_up_front():
    """The buffer gains log2(den / num) bits per layer: 10**7 bits per layer over 10**4 layers ran for hours."""
    theta = np.zeros((10 ** 4, 1, 1))
    t = time.perf_counter()
    with pytest.raises(ValueError, match="`den`.*max_work"):
        M.forward_exact(np.ones((1, 1)), None, theta, "linear", 1, 2 ** (10 ** 7))
    assert time.perf_counter() - t < 1.0
    with pytest.raises(ValueError, match="`den`.*memory"):
        M.forward_exact(np.ones((1, 1)), None, theta, "linear", 1, 2 ** (10 ** 8))
    with pytest.raises(ValueError, match="`num`.*integer of"):  # a message that Python can print
        M.forward_exact(np.ones((1, 1)), None, theta, "linear", 2 ** 20000, 2)


def test_psi_series_terms_validated_and_stops_where_the_factorials_overflow():
    """terms = 10**12 looped for hours and True counted as one term; beyond n = 86 every term is 0 * M^n."""
    theta = np.array([[0.3, -0.2], [0.1, 0.4]])
    ref = M.psi_series(theta, 0.7, 80)
    t = time.perf_counter()
    assert np.array_equal(M.psi_series(theta, 0.7, 10 ** 12), ref)
    assert time.perf_counter() - t < 1.0
    assert np.array_equal(M.psi_series(theta, 0.7, np.int64(80)), ref)
    for bad in (True, 2.5, "80"):
        with pytest.raises(TypeError, match="`terms`"):
            M.psi_series(theta, 0.7, bad)
    with pytest.raises(ValueError, match="`terms`"):
        M.psi_series(theta, 0.7, 0)


def test_eps_below_the_normal_range_is_refused():
    """lambda_eps(5e-324) returned (nan, ...)."""
    for f, args in ((M.lambda_eps, ()), (M.psi, ([[0.1]],)), (M.representable, ([[0.5]],)),
                    (M.preimage, ([[0.5]],))):
        with pytest.raises(ValueError, match="`eps`"):
            f(*args, 5e-324) if args else f(5e-324)
    lam, alpha = M.lambda_eps(2.3e-308)
    assert lam == 0.0 and math.isfinite(alpha)


def test_preimage_at_extreme_eps_names_its_arguments():
    """eps = 1e-300 raised a message naming no argument; eps = 1.7e308 a NaN from scipy's root finder."""
    with pytest.raises(ValueError, match="`eps`"):
        M.preimage([[0.9]], 1e-300)
    for eps in (1e300, 1.7e308):  # 2 eps s overflowed in the complex arithmetic of f_eps
        theta = M.preimage([[0.9]], eps)
        assert np.isfinite(theta).all() and abs(M.psi(theta, eps)[0, 0] - 0.9) < 1e-12


def test_gradient_loss_overflow_is_an_error_not_a_warning():
    """0.5 * sum((x_N - y)^2) overflowed with a RuntimeWarning (an error under the test configuration)."""
    from theory._errors import NonFiniteError
    for method in ("backprop", "memory_free"):
        with pytest.raises(NonFiniteError, match="loss"):
            M.gradient(np.array([1e200]), None, np.zeros((1, 1, 1)), "linear", 0.5, np.zeros(1), method=method)
    with pytest.raises(TypeError, match="`method`"):
        M.gradient(np.ones(1), None, np.zeros((1, 1, 1)), "linear", 0.5, np.zeros(1), method=np.zeros((2, 0)))


def test_tied_depth_over_the_work_budget_is_refused_up_front():
    """A tied theta of width 100 and depth 10**7 fits in memory (16 GB) but is 2e11 operations."""
    t = time.perf_counter()
    with pytest.raises(ValueError, match="`depth`.*max_work"):
        M.forward(np.ones(100), None, np.zeros((1, 100, 100)), "tanh", 0.5, depth=10 ** 7)
    assert time.perf_counter() - t < 1.0
    with pytest.raises(ValueError, match="`theta`.*max_work"):
        M.forward(np.ones(2), None, np.zeros((100, 2, 2)), "tanh", 0.5, max_work=100)


def _private_imports(path):
    """(module, imported theory.* module) pairs for the imports of ``path`` naming a private module (a part
    starting with one underscore) below a package of theory, relative imports resolved."""
    import ast
    from pathlib import Path

    root = Path(M.__file__).resolve().parents[1]
    rel = path.resolve().relative_to(root.parent).with_suffix("")
    mod = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "theory" and len(parts) >= 3 and any(p.startswith("_") and not p.startswith("__")
                                                                   for p in parts[2:]):
                found.append((mod, name))
    return found


def test_resnet_and_momentum_reach_into_no_other_package_private_module():
    """The residual families and their kernels are shared through theory._residuals / theory._residual_kernels
    (and the scalar f_eps through theory._f_eps): no module of theory.resnet, theory.momentum or of their
    experiments imports a private module of another package (theory.<package>._name)."""
    from pathlib import Path

    root = Path(M.__file__).resolve().parents[1]
    files = [*(root / "resnet").glob("*.py"), *(root / "momentum").glob("*.py"),
             *(root / "experiments" / "resnet_node").glob("*.py"), root / "experiments" / "momentum" / "_theory.py"]
    bad = []
    for path in files:
        for mod, name in _private_imports(path):
            own = ".".join(mod.split(".")[:2])  # theory.resnet, theory.momentum or theory.experiments
            if not name.startswith(own + "."):
                bad.append(f"{mod} imports {name}")
    assert not bad, bad


# ------------------------------------------------ the streaming row products with next-slice requests

def _loop_round_trip(x0, theta, gamma):
    """Eq. (4.2) then (4.3) with f = tanh(theta_n x), one NumPy statement per update (the bench's loop)."""
    N = theta.shape[0]
    xs, vs = [np.asarray(x0, float)], [np.zeros_like(x0, dtype=float)]
    c = 1.0 - gamma
    for n in range(N):
        vs.append(gamma * vs[-1] + c * np.tanh(theta[n] @ xs[-1]))
        xs.append(xs[-1] + vs[-1])
    rx, rv = [xs[-1]], [vs[-1]]
    for n in range(N - 1, -1, -1):
        rx.append(rx[-1] - rv[-1])
        rv.append((rv[-1] - c * np.tanh(theta[n] @ rx[-1])) / gamma)
    return np.array(xs), np.array(vs), np.array(rx[::-1]), np.array(rv[::-1])


@pytest.mark.parametrize("d, N", [(32, 1), (64, 1), (64, 2), (64, 37), (33, 9), (100, 5)])
def test_streaming_path_with_prefetch_matches_the_numpy_loop(d, N):
    """The single-input path at d >= 32 (row products that request the next slice of the pass while they sum
    this one: slice k + 1 forwards, k - 1 for the inverse, none past either end) against the NumPy loop, whole
    trajectories, depth 1 and 2 included and widths that are not multiples of the cache line's 8 floats."""
    rng = np.random.default_rng(d * 100 + N)
    theta = rng.standard_normal((N, d, d)) / np.sqrt(d)
    x0 = rng.standard_normal(d)
    gamma = 0.97
    xs, vs = M.forward(x0, None, theta, "tanh", gamma)
    rx, rv = M.inverse(xs[-1], vs[-1], theta, "tanh", gamma)
    ref = _loop_round_trip(x0, theta, gamma)
    for got, want in zip((xs, vs, rx, rv), ref):
        assert np.abs(got - want).max() <= 1e-13
    assert np.abs(rx[0] - x0).max() <= 1e-13


def test_streaming_path_tied_weights_equal_repeated_slices_bit_for_bit():
    """Tied weights (no requests: the one slice stays in cache) and the same slice repeated (requests for the
    next slice) run the same sums: equal bit for bit, forward and inverse, at d = 64."""
    rng = np.random.default_rng(23)
    th1 = rng.standard_normal((1, 64, 64)) / 8.0
    x0 = rng.standard_normal(64)
    a = M.forward(x0, None, th1, "tanh", 0.9, depth=30)
    b = M.forward(x0, None, np.repeat(th1, 30, axis=0), "tanh", 0.9)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    ra = M.inverse(a[0][-1], a[1][-1], th1, "tanh", 0.9, depth=30)
    rb = M.inverse(b[0][-1], b[1][-1], np.repeat(th1, 30, axis=0), "tanh", 0.9)
    assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1])


def test_streaming_path_takes_non_contiguous_theta_and_linear_family():
    rng = np.random.default_rng(29)
    big = rng.standard_normal((12, 64, 128)) / 16.0
    theta = big[::2, :, ::2]  # neither C- nor F-contiguous
    x0 = rng.standard_normal(64)
    xs, vs = M.forward(x0, None, theta, "linear", 0.8)
    xc, vc = M.forward(x0, None, np.ascontiguousarray(theta), "linear", 0.8)
    assert np.array_equal(xs, xc) and np.array_equal(vs, vc)
    x, v = x0.copy(), np.zeros(64)
    for n in range(theta.shape[0]):
        v = 0.8 * v + 0.2 * (theta[n] @ x)
        x = x + v
    assert np.abs(xs[-1] - x).max() <= 1e-13 * max(1.0, np.abs(x).max())
    rx, _ = M.inverse(xs[-1], vs[-1], theta, "linear", 0.8)
    assert np.abs(rx[0] - x0).max() <= 1e-12


@pytest.mark.parametrize("nxt", [-1, 0, 1, 2, 5])
def test_row_products_are_the_same_with_and_without_requests(nxt):
    """The request of another slice (in range, the slice itself, or past the end: none) changes no bit of the
    products."""
    from theory.momentum._kernels import _matvec_prefetch

    rng = np.random.default_rng(31)
    d = 40
    theta = rng.standard_normal((3, d * d))
    xs = rng.standard_normal((2, 1, d))
    plain, hinted = np.empty((1, d)), np.empty((1, d))
    _matvec_prefetch(theta, 1, xs, 1, plain, d)
    _matvec_prefetch(theta, 1, xs, 1, hinted, d, nxt)
    assert np.array_equal(plain, hinted)
    np.testing.assert_allclose(plain[0], theta[1].reshape(d, d) @ xs[1, 0], rtol=0, atol=1e-13)


def test_streaming_path_huge_and_tiny_magnitudes():
    rng = np.random.default_rng(37)
    for scale in (1e-150, 1e150):
        theta = rng.standard_normal((4, 64, 64)) / 8.0
        x0 = rng.standard_normal(64) * scale
        xs, vs = M.forward(x0, None, theta, "linear", 0.5)
        x, v = x0.copy(), np.zeros(64)
        for n in range(4):
            v = 0.5 * v + 0.5 * (theta[n] @ x)
            x = x + v
        np.testing.assert_allclose(xs[-1], x, rtol=1e-12, atol=0)
    from theory._errors import NonFiniteError

    theta = np.full((3, 64, 64), 1e300)  # finite weights whose products overflow: an overflow, not a bad theta
    with pytest.raises(NonFiniteError, match="positions overflowed"):
        M.forward(np.ones(64), None, theta, "linear", 0.5)
