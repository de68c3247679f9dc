"""Finiteness of theta and of the trajectory on every Euler kernel path of theory.resnet.

The update passes test finiteness with one flag ((s - s) + (v - v) != 0 for a product s and a new state v)
and count exactly only when it is set; these tests pin what the counts decide, on the three paths: one input
(row products), a small-d batch (transposed, vectorised along the batch) and a wide batch (BLAS products):
a NaN or infinite theta entry is a ValueError naming ``theta``; finite weights whose products overflow
saturate the tanh (tanh(+-inf) = +-1) and are not an error; an overflowing state is a NonFiniteError."""

import numpy as np
import pytest

import theory.resnet as R
from theory import NonFiniteError

PATHS = [(16, 1), (16, 64), (64, 8)]  # row path, small-d batch, wide batch (BLAS)
N = 20


def _problem(d, B, seed=0):
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((N, d, d)) / np.sqrt(d)
    x = rng.standard_normal((B, d)) if B > 1 else rng.standard_normal(d)
    return x, theta


def _calls(x, theta, residual):
    y = np.zeros_like(x)
    return {"forward": lambda: R.forward(x, theta, residual),
            "reverse": lambda: R.reverse(x, theta, residual),
            "gradient": lambda: R.gradient(x, theta, y, residual)}


@pytest.mark.parametrize("d, B", PATHS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("residual", ["tanh", "linear"])
def test_a_non_finite_weight_in_one_layer_is_a_theta_error(d, B, bad, residual):
    x, theta = _problem(d, B)
    theta[7, 3, 5] = bad
    for name, call in _calls(x, theta, residual).items():
        with pytest.raises(ValueError, match="`theta`") as info:
            call()
        assert not isinstance(info.value, NonFiniteError), name


@pytest.mark.parametrize("d, B", PATHS)
@pytest.mark.parametrize("scale", [1e300, "inf products"])
def test_overflowing_products_saturate_the_tanh(d, B, scale):
    """Finite weights whose products theta_n x are huge (1e300 times the weights) or overflow to +inf (every
    entry of theta_0 at 1e308 and a positive input): the tanh saturates, and the states move by +-1/N a
    layer there, as a NumPy loop with np.tanh gives. Neither is an error."""
    x, theta = _problem(d, B)
    if scale == "inf products":
        x = np.abs(x) + 0.5
        theta[0] = 1e308
    else:
        theta *= scale
    xs = R.forward(x, theta, "tanh")
    ref = np.empty_like(xs)
    ref[0] = x
    saw_inf = False
    for n in range(N):
        with np.errstate(over="ignore", invalid="ignore"):
            prod = ref[n] @ theta[n].T
            saw_inf |= bool(np.isinf(prod).any())
            ref[n + 1] = ref[n] + np.tanh(prod) / N
    assert saw_inf == (scale == "inf products")
    assert np.all(np.isfinite(xs))
    np.testing.assert_allclose(xs, ref, rtol=0, atol=4 * N * np.finfo(float).eps * np.max(np.abs(ref)))


@pytest.mark.parametrize("d, B", PATHS)
def test_an_overflowing_state_is_a_non_finite_error(d, B):
    x, theta = _problem(d, B)
    for name, call in _calls(1e300 * x, 1e10 * theta, "linear").items():
        with pytest.raises(NonFiniteError):
            call()


@pytest.mark.parametrize("d, B", PATHS)
def test_finite_inputs_pass_untouched(d, B):
    x, theta = _problem(d, B)
    x0, th0 = x.copy(), theta.copy()
    for name, call in _calls(x, theta, "tanh").items():
        out = call()
        for a in (out if isinstance(out, tuple) else (out,)):
            if isinstance(a, np.ndarray):
                assert np.all(np.isfinite(a)), name
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(theta, th0)


@pytest.mark.parametrize("d, B", PATHS)
def test_a_state_overflowing_from_finite_products_is_a_non_finite_error(d, B):
    """One linear layer with theta = +-0.9 I from x = 1e308: every product (0.9e308) is finite and only the new
    state x + h theta x (1.9e308) overflows, so only the test of the new states can see it."""
    x = np.full((B, d) if B > 1 else d, 1e308)
    y = np.zeros_like(x)
    eye = 0.9 * np.eye(d)[None]
    calls = {"forward": lambda: R.forward(x, eye, "linear"),
             "reverse": lambda: R.reverse(x, -eye, "linear"),
             "gradient": lambda: R.gradient(x, eye, y, "linear")}
    for name, call in calls.items():
        with pytest.raises(NonFiniteError):
            call()
