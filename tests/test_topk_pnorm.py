"""Tests of :mod:`theory.topk` for every p in (1, inf) (paper key ``topk``, thesis Chapter 7).

What is checked:

1. Both operators against independent oracles of the threshold equation, which know
   nothing of sorting or pooling: mask y_i = min{1, ((x_i - tau)_+/reg)^(q-1)} with sum y = k;
   magnitude from z_i(c) = min{1, ((|x_i| - c)_+/reg)^(q-1)/c}, sum z = k (1-D brentq roots).
2. The exact regimes: hard top-k mask iff reg <= x_[k] - x_[k+1] (every p); the magnitude singleton
   regime |y_i| = g, g + reg g^(p-1) = |x_i| (and the rescaled variant = topkmag exactly).
3. The Jacobian (Proposition 7.8 corrected) against central finite differences, symmetric PSD; jvp and
   vjp against jacobian() @ v and v @ jacobian().
4. The partial-sort window against the full sort, bit for bit, including heavy ties and k near n.
5. Hypothesis properties: mask in [0, 1] summing to k, permutation equivariance, shift invariance
   (mask), oddness and |y| <= |x| (magnitude), extreme magnitudes (1e+-300) work or fail clearly.
6. Bad inputs for the new entry points.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from _fd import central_jacobian
from theory._validation import NonFiniteError
from theory.topk import jacobian, jvp, topk_magnitude, topk_mask, vjp
from theory.topk._api import _forward

PS = [2.0, 4.0 / 3.0, 1.5, 3.0, 1.2]
RTOL = 4 * np.finfo(float).eps


# ---------------------------------------------------------------- independent oracles (threshold equation)

def mask_oracle(x, k, reg, p):
    q = p / (p - 1.0)

    def y(tau):
        return np.minimum(1.0, (np.maximum(x - tau, 0.0) / reg) ** (q - 1.0))

    tau = brentq(lambda t: y(t).sum() - k, x.min() - reg - 1.0, x.max(), xtol=1e-15, rtol=RTOL, maxiter=500)
    return y(tau)


def magnitude_oracle(x, k, reg, p):
    q = p / (p - 1.0)
    a = np.abs(x)

    def z(c):
        with np.errstate(divide="ignore", over="ignore"):
            return np.minimum(1.0, (np.maximum(a - c, 0.0) / reg) ** (q - 1.0) / c)

    c = brentq(lambda c: z(c).sum() - k, 1e-300, a.max(), xtol=1e-300, rtol=RTOL, maxiter=2000)
    out = (np.maximum(a - c, 0.0) / reg) ** (q - 1.0)
    for i in np.flatnonzero(z(c) >= 1.0):
        out[i] = brentq(lambda g: g + reg * g ** (p - 1.0) - a[i], 0.0, a[i], xtol=1e-300, rtol=RTOL)
    return np.sign(x) * out


# ---------------------------------------------------------------- 1. oracles

@pytest.mark.parametrize("p", PS)
def test_mask_matches_threshold_oracle(p):
    rng = np.random.default_rng(1)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        k = int(rng.integers(1, n))
        reg = float(rng.choice([0.01, 0.1, 0.5, 1.0, 3.0, 30.0]))
        x = rng.normal(size=n)
        np.testing.assert_allclose(topk_mask(x, k, reg, p), mask_oracle(x, k, reg, p), atol=1e-11)


@pytest.mark.parametrize("p", PS)
def test_magnitude_matches_threshold_oracle(p):
    rng = np.random.default_rng(2)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        k = int(rng.integers(1, n))
        reg = float(rng.choice([0.01, 0.1, 0.5, 1.0, 3.0, 30.0]))
        x = rng.normal(size=n)
        np.testing.assert_allclose(topk_magnitude(x, k, reg, p), magnitude_oracle(x, k, reg, p), atol=1e-11)


def test_hand_values_p43():
    # mask: y_i = (x_i - tau)^3 with (1 - tau)^3 + (0.5 - tau)^3 = 1 (reg = 1)
    y = topk_mask([1.0, 0.5, 0.0], 1, 1.0, 4 / 3)
    tau = 1.0 - y[0] ** (1 / 3)
    np.testing.assert_allclose([(1 - tau) ** 3 + (0.5 - tau) ** 3, y[2]], [1.0, 0.0], atol=1e-14)
    # magnitude singletons: g + reg g^(1/3) = |x_i|
    m = topk_magnitude([3.0, -2.0, 0.5], 2, 0.5, 4 / 3)
    g = np.abs(m[:2])
    np.testing.assert_allclose(g + 0.5 * g ** (1 / 3), [3.0, 2.0], rtol=1e-15)
    assert m[2] == 0.0 and m[1] < 0


# ---------------------------------------------------------------- 2. exact regimes

@pytest.mark.parametrize("p", PS)
def test_mask_hard_regime_every_p(p):
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, n))
        x = rng.normal(size=n)
        xs = np.sort(x)[::-1]
        gap = xs[k - 1] - xs[k]
        hard = np.zeros(n)
        hard[np.argsort(-x)[:k]] = 1.0
        np.testing.assert_array_equal(topk_mask(x, k, 0.5 * gap, p), hard)
        np.testing.assert_array_equal(topk_mask(x, k, gap * (1 - 1e-12), p), hard)
        assert np.max(np.abs(topk_mask(x, k, 1.5 * gap, p) - hard)) > 1e-6
        np.testing.assert_array_equal(jacobian(x, k, 0.5 * gap, p), np.zeros((n, n)))


@pytest.mark.parametrize("p", PS)
def test_magnitude_singleton_regime_every_p(p):
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, n))
        x = rng.normal(size=n)
        a = np.sort(np.abs(x))[::-1]
        top = np.argsort(-np.abs(x))[:k]
        reg_max = (a[k - 1] - a[k]) / a[k] ** (p - 1.0)  # |x|_[k] > |x|_[k+1] + reg |x|_[k+1]^(p-1)
        reg = 0.5 * reg_max
        y = topk_magnitude(x, k, reg, p)
        assert np.all(y[np.setdiff1d(np.arange(n), top)] == 0.0)
        g = np.abs(y[top])
        np.testing.assert_allclose(g + reg * g ** (p - 1.0), np.abs(x[top]), rtol=1e-14)
        hard = np.where(np.isin(np.arange(n), top), x, 0.0)
        np.testing.assert_allclose(topk_magnitude(x, k, reg, p, rescale=True), hard, rtol=1e-14, atol=0)
        # just above the threshold the k+1-th entry is nonzero
        assert np.count_nonzero(topk_magnitude(x, k, 1.5 * reg_max, p)) > k


# ---------------------------------------------------------------- 3. Jacobian, jvp, vjp

@pytest.mark.parametrize("mode", ["mask", "magnitude"])
@pytest.mark.parametrize("p", PS)
def test_jacobian_finite_differences(p, mode):
    rng = np.random.default_rng(5)
    op = topk_mask if mode == "mask" else topk_magnitude
    worst = 0.0
    for _ in range(6):
        n = 8
        k = int(rng.integers(1, n))
        reg = float(rng.choice([0.3, 1.0, 3.0]))
        x = rng.normal(size=n)
        J = jacobian(x, k, reg, p, mode)
        fd = central_jacobian(lambda z: op(z, k, reg, p), x)
        worst = max(worst, np.max(np.abs(J - fd)) / max(1.0, np.max(np.abs(J))))
        np.testing.assert_allclose(J, J.T, atol=1e-15, rtol=0)
        assert np.linalg.eigvalsh(0.5 * (J + J.T)).min() >= -1e-10 * max(1.0, np.abs(J).max())
        if mode == "mask":
            np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-10 * max(1.0, np.abs(J).max()))
    assert worst <= 1e-6, worst


@pytest.mark.parametrize("p", PS)
def test_jacobian_rescaled_magnitude(p):
    rng = np.random.default_rng(6)
    for _ in range(4):
        x = rng.normal(size=7)
        J = jacobian(x, 3, 0.7, p, "magnitude", rescale=True)
        fd = central_jacobian(lambda z: topk_magnitude(z, 3, 0.7, p, rescale=True), x)
        np.testing.assert_allclose(J, fd, atol=1e-6 * max(1.0, np.abs(J).max()))


@pytest.mark.parametrize("rescale", [False, True])
@pytest.mark.parametrize("mode", ["mask", "magnitude"])
@pytest.mark.parametrize("p", PS)
def test_jvp_vjp_match_jacobian(p, mode, rescale):
    if rescale and mode == "mask":
        return
    rng = np.random.default_rng(7)
    for _ in range(8):
        n = int(rng.integers(2, 30))
        k = int(rng.integers(1, n))
        reg = float(rng.choice([0.05, 0.5, 2.0, 50.0]))
        x = rng.normal(size=n)
        v = rng.normal(size=n)
        J = jacobian(x, k, reg, p, mode, rescale=rescale)
        tol = 1e-13 * max(1.0, np.abs(J).max()) * n
        np.testing.assert_allclose(jvp(x, k, v, reg, p, mode, rescale=rescale), J @ v, atol=tol, rtol=0)
        np.testing.assert_allclose(vjp(x, k, v, reg, p, mode, rescale=rescale), v @ J, atol=tol, rtol=0)


# ---------------------------------------------------------------- 4. window (partial sort) vs full sort

def _x_strategy(max_n=40):
    """Scores with heavy ties (values drawn from a small pool), a wide range of magnitudes, k near n."""
    @st.composite
    def draw(draw_):
        n = draw_(st.integers(2, max_n))
        kind = draw_(st.sampled_from(["pool", "normal", "wide", "clustered"]))
        seed = draw_(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        if kind == "pool":
            x = rng.choice(rng.normal(size=int(rng.integers(1, 5))), size=n)
        elif kind == "normal":
            x = rng.normal(size=n)
        elif kind == "wide":
            x = rng.choice([-1.0, 1.0], size=n) * 10.0 ** rng.uniform(-300, 300, size=n)
        else:
            x = 1.0 + 1e-9 * rng.integers(0, 3, size=n)
        k = draw_(st.sampled_from([1, max(1, n // 2), n - 1, max(1, n - 2)]))
        return x, min(k, n - 1)
    return draw()


@settings(max_examples=200, deadline=None)
@given(xk=_x_strategy(), reg=st.sampled_from([1e-3, 0.1, 1.0, 7.0, 1e4]), p=st.sampled_from(PS),
       mode=st.sampled_from(["mask", "magnitude"]))
def test_window_equals_full_sort_bitwise(xk, reg, p, mode):
    x, k = xk
    func = "test"
    try:
        full, *_ = _forward(x, k, reg, p, mode, func, full=True)
    except (ValueError, NonFiniteError):
        return  # out of range at this scale: the public functions raise (tested below)
    fast, *_ = _forward(x, k, reg, p, mode, func)
    np.testing.assert_array_equal(fast, full)


def test_window_equals_full_sort_large():
    rng = np.random.default_rng(8)
    for n, k, ps in [(20_000, 10, (2.0, 4.0 / 3.0)), (20_000, 300, (2.0, 4.0 / 3.0)), (5_000, 4_990, (2.0, 3.0)),
                     (3_000, 30, (1.5, 3.0))]:
        for x in (rng.normal(size=n), np.round(rng.normal(size=n), 2)):  # the second with many ties
            for p in ps:
                for mode in ("mask", "magnitude"):
                    for reg in (0.05, 1.0):
                        full, *_ = _forward(x, k, reg, p, mode, "test", full=True)
                        fast, *_ = _forward(x, k, reg, p, mode, "test")
                        np.testing.assert_array_equal(fast, full)


# ---------------------------------------------------------------- 5. properties

@settings(max_examples=150, deadline=None)
@given(xk=_x_strategy(), reg=st.floats(1e-3, 1e3), p=st.sampled_from(PS), seed=st.integers(0, 2**32 - 1))
def test_properties(xk, reg, p, seed):
    x, k = xk
    n = x.size
    rng = np.random.default_rng(seed)
    try:
        y = topk_mask(x, k, reg, p)
    except NonFiniteError:
        assume(False)
    assert np.all(y >= 0.0) and np.all(y <= 1.0)
    assert abs(y.sum() - k) <= 1e-9 * k
    perm = rng.permutation(n)
    np.testing.assert_array_equal(topk_mask(x[perm], k, reg, p), y[perm])  # stable order: exact
    if np.max(np.abs(x)) < 1e6:
        c = float(rng.uniform(-10, 10))
        np.testing.assert_allclose(topk_mask(x + c, k, reg, p), y, atol=1e-6)  # shift invariance
        assert abs(y.sum() - k) <= 1e-12 * n
    try:
        m = topk_magnitude(x, k, reg, p)
    except (ValueError, NonFiniteError):
        return
    assert np.all(np.abs(m) <= np.abs(x)) and np.all(np.sign(m) * np.sign(x) >= 0)
    a = np.abs(x[x != 0])
    if a.size and 1e-100 < a.min() and a.max() < 1e100:  # else the true output may underflow to 0
        assert np.count_nonzero(m) >= min(k, a.size)
    np.testing.assert_array_equal(topk_magnitude(-x, k, reg, p), -m)  # odd
    np.testing.assert_array_equal(topk_magnitude(x[perm], k, reg, p), m[perm])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 12), seed=st.integers(0, 2**32 - 1), reg=st.floats(0.05, 20.0),
       p=st.sampled_from(PS))
def test_oracles_hypothesis(n, seed, reg, p):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) * float(rng.choice([1e-3, 1.0, 1e3]))
    k = int(rng.integers(1, n))
    np.testing.assert_allclose(topk_mask(x, k, reg, p), mask_oracle(x, k, reg, p), atol=1e-10)
    np.testing.assert_allclose(topk_magnitude(x, k, reg, p), magnitude_oracle(x, k, reg, p),
                               atol=1e-10 * max(1.0, np.abs(x).max()))


@pytest.mark.parametrize("p", PS)
def test_extreme_magnitudes(p):
    # 1e+-300: the mask works in the normalised scores (x - x_[k])/reg, the magnitude at the scale of
    # |x|_[k] (a power of two); what cannot be represented raises a clear error instead of NaN
    x = np.array([3e300, -1e300, 2e300, 1e-300, 0.0, -2e-300])
    y = topk_mask(x, 2, 1.0, p)
    np.testing.assert_array_equal(y, [1.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(topk_mask(x, 2, 1e300, p) > 0, [True, False, True, False, False, False])
    tiny = np.array([3e-300, 1e-300, 2e-300, -1e-300])
    np.testing.assert_allclose(topk_mask(tiny, 2, 1e-300, p), mask_oracle(tiny * 1e300, 2, 1.0, p), atol=1e-9)
    try:
        m = topk_magnitude(x, 2, 0.5, p)
    except ValueError as exc:
        assert "`reg`" in str(exc)
    else:
        assert np.all(np.isfinite(m)) and np.count_nonzero(m[[0, 1, 2]]) >= 2 and np.all(m[3:] == 0.0)
    m = topk_magnitude(tiny, 2, 0.5, p) if p == 2.0 else topk_magnitude(tiny, 2, 0.5 * 1e-300 ** (2 - p), p)
    np.testing.assert_allclose(m / 1e-300, topk_magnitude(tiny * 1e300, 2, 0.5, p), rtol=1e-12)


# ---------------------------------------------------------------- 6. bad inputs

BAD = [
    ({"x": [1.0, np.nan, 0.0]}, ValueError, "`x`"),
    ({"x": [1.0, -np.inf, 0.0]}, ValueError, "`x`"),
    ({"x": [[1.0], [2.0]]}, ValueError, "`x`"),  # 2-D is a batch of rows; rows of length 1 are refused
    ({"x": [1.0]}, ValueError, "`x`"),
    ({"x": "abc"}, TypeError, "`x`"),
    ({"k": 0}, ValueError, "`k`"),
    ({"k": 3}, ValueError, "`k`"),
    ({"k": 2.0}, TypeError, "`k`"),
    ({"k": True}, TypeError, "`k`"),
    ({"reg": -0.5}, ValueError, "`reg`"),
    ({"reg": 0.0}, ValueError, "`reg`"),
    ({"reg": np.nan}, ValueError, "`reg`"),
    ({"reg": "1"}, TypeError, "`reg`"),
    ({"p": 1.0}, ValueError, "`p`"),
    ({"p": 0.9}, ValueError, "`p`"),
    ({"p": -2.0}, ValueError, "`p`"),
    ({"p": np.nan}, ValueError, "`p`"),
    ({"p": np.inf}, ValueError, "`p`"),
    ({"p": None}, TypeError, "`p`"),
    ({"v": [1.0, 2.0]}, ValueError, "tangent|cotangent"),
    ({"v": [1.0, np.nan, 2.0]}, ValueError, "tangent|cotangent"),
    ({"v": [[1.0, 2.0, 3.0]]}, ValueError, "tangent|cotangent"),
    ({"v": ["a", "b", "c"]}, TypeError, "tangent|cotangent"),
    ({"mode": "top"}, ValueError, "`mode`"),
    ({"mode": 1}, TypeError, "`mode`"),
]


@pytest.mark.parametrize("func", ["jvp", "vjp", "topk_mask", "topk_magnitude", "jacobian"])
@pytest.mark.parametrize("bad,exc,match", BAD)
def test_bad_inputs(func, bad, exc, match):
    args = {"x": [3.0, 1.0, 2.0], "k": 1, "reg": 1.0, "p": 1.5, "v": [1.0, 0.0, 0.0], "mode": "mask"}
    args.update(bad)
    if func in ("topk_mask", "topk_magnitude") and ("v" in bad or "mode" in bad):
        return
    if func == "jacobian" and "v" in bad:
        return
    with pytest.raises(exc, match=match):
        if func in ("jvp", "vjp"):
            {"jvp": jvp, "vjp": vjp}[func](args["x"], args["k"], args["v"], args["reg"], args["p"], args["mode"])
        elif func == "jacobian":
            jacobian(args["x"], args["k"], args["reg"], args["p"], args["mode"])
        else:
            {"topk_mask": topk_mask, "topk_magnitude": topk_magnitude}[func](args["x"], args["k"], args["reg"],
                                                                             args["p"])


def test_rescale_flag_checks():
    with pytest.raises(ValueError, match="`rescale`"):
        jvp([3.0, 1.0, 2.0], 1, [1.0, 0.0, 0.0], mode="mask", rescale=True)
    with pytest.raises(TypeError, match="`rescale`"):
        vjp([3.0, 1.0, 2.0], 1, [1.0, 0.0, 0.0], mode="magnitude", rescale="yes")


@pytest.mark.parametrize("mode", ["mask", "magnitude"])
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("x,k,reg", [([3.0, 0.0, 0.0], 1, 0.1), ([1.0, 1.0, 0.0], 1, 0.5),
                                     ([2.0, 2.0, -0.5, -0.5, -0.5], 2, 0.3), ([1.0, 1.0, 1.0, 0.2], 2, 0.4)])
def test_jacobian_at_ties_every_p(p, mode, x, k, reg):
    # tied inputs where the operator is smooth: equal values pooled by the isotonic solver must not leak
    # into the Jacobian (the block is split where its KKT multiplier vanishes); jvp/vjp agree
    x = np.asarray(x)
    op = topk_mask if mode == "mask" else topk_magnitude
    J = jacobian(x, k, reg, p, mode)
    np.testing.assert_allclose(J, central_jacobian(lambda z: op(z, k, reg, p), x), atol=1e-6)
    v = np.linspace(-1.0, 1.0, x.size)
    np.testing.assert_allclose(jvp(x, k, v, reg, p, mode), J @ v, atol=1e-12)
    np.testing.assert_allclose(vjp(x, k, v, reg, p, mode), v @ J, atol=1e-12)


# ---------------------------------------------------------------- 8. the direct pooled-block path (p not in {2, 4/3})

def _mask_via_isotonic(x, k, reg, p):
    """The mask through the isotonic module on the full sorted input (the former path of topk_mask for
    p not in {2, 4/3}): decreasing fit of the clipped normalised scores with linear term 1_k."""
    from theory.isotonic import isotonic_regression
    from theory.topk._api import _CLIP

    q = p / (p - 1.0)
    order = np.argsort(-x, kind="stable")
    s = x[order]
    t = np.clip((s - s[k - 1]) / reg, -_CLIP, _CLIP)
    w = np.zeros(x.size)
    w[:k] = 1.0
    v, _ = isotonic_regression(t, p=p, c=w, increasing=False)
    d = t - v
    y = np.zeros(x.size)
    y[order] = np.clip(np.sign(d) * np.abs(d) ** (q - 1.0), 0.0, 1.0)
    return y


def test_direct_mask_path_agrees_with_isotonic_path():
    """_mask_pnorm locates the one pooled block by the threshold equation; its outputs come from the
    anchored form (exact score differences), the isotonic path's from t - gamma: the same support and
    saturated entries, and fractional entries equal to rounding for p < 2 (there an absolute error of
    t - gamma moves y = (t - gamma)^(q-1), q - 1 > 1, by less; for p > 2 the isotonic path is the less
    accurate one: tests/test_topk_extremes.py), ties and both regimes included."""
    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(3, 2000))
        k = int(rng.integers(1, n))
        reg = 10.0 ** rng.uniform(-2.0, 1.5)
        p = [1.2, 1.5, 1.8, 1.1][trial % 4]
        x = rng.standard_normal(n)
        if trial % 5 == 0:
            x = np.round(x, 1)
        y, ref = topk_mask(x, k, reg, p), _mask_via_isotonic(x, k, reg, p)
        np.testing.assert_array_equal(y == 0.0, ref == 0.0)
        np.testing.assert_array_equal(y == 1.0, ref == 1.0)
        np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("p", [1.5, 3.0])
@pytest.mark.parametrize("reg", [0.1, 1.0, 10.0])
def test_pnorm_paths_fast_at_large_n(p, reg):
    """n = 1e5, k = 100: mask (formerly 108 s at p = 1.5, reg = 10: the pooled block re-solved at each
    of its ~2e4 merges), magnitude, jvp and vjp in bounded time (generous for a shared CPU); the window
    result equals the full sort bit for bit and the mask matches the threshold oracle."""
    import time

    rng = np.random.default_rng(12)
    n, k = 100_000, 100
    x = rng.standard_normal(n)
    v = rng.standard_normal(n)
    topk_mask(x[:1000], k, reg, p)  # compiled
    for fn in (lambda: topk_mask(x, k, reg, p), lambda: topk_magnitude(x, k, reg, p),
               lambda: jvp(x, k, v, reg, p), lambda: vjp(x, k, v, reg, p, mode="magnitude")):
        t0 = time.perf_counter()
        fn()
        assert time.perf_counter() - t0 < 1.0
    for mode in ("mask", "magnitude"):
        fast, *_ = _forward(x, k, reg, p, mode, "test")
        full, *_ = _forward(x, k, reg, p, mode, "test", full=True)
        np.testing.assert_array_equal(fast, full)
    np.testing.assert_allclose(topk_mask(x, k, reg, p), mask_oracle(x, k, reg, p), rtol=0, atol=1e-12)
