"""p-norm regularised isotonic regression (topk Section 7.5, Eqs. (7.5)-(7.6)): x = argmin_{monotone x} sum_i [ w_i/q |x_i - y_i|^q + c_i x_i ], q = p/(p - 1).

Checks: a generic constrained solver (SLSQP, n <= 6), KKT conditions, the p = 4/3 closed-form cubic
against the general root finder, continuity at p = 2, ties and the block convention, the knobs
max_iter/tol, reversal symmetry, the hard-regime closed form of Section 7.5.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from theory.isotonic import ConvergenceWarning, isotonic_regression
from theory import _pav as _kernels

PS = [4 / 3, 1.5, 3.0]


def objective(x, y, w, c, p):
    q = p / (p - 1.0)
    return np.sum(w / q * np.abs(x - y) ** q + c * x)


def fprime(x, y, w, c, p):
    q = p / (p - 1.0)
    d = x - y
    return w * np.sign(d) * np.abs(d) ** (q - 1.0) + c


def slsqp(y, w, c, p, increasing):
    n = y.size
    sgn = 1.0 if increasing else -1.0
    cons = [{"type": "ineq", "fun": (lambda x, i=i: sgn * (x[i + 1] - x[i])),
             "jac": (lambda x, i=i: sgn * (np.eye(n)[i + 1] - np.eye(n)[i]))} for i in range(n - 1)]
    x0 = np.full(n, np.mean(y))
    res = minimize(objective, x0, args=(y, w, c, p), jac=lambda x, *a: fprime(x, *a), method="SLSQP",
                   constraints=cons, options={"ftol": 1e-15, "maxiter": 1000})
    return res.x


def kkt_residual(x, blocks, y, w, c, p, increasing):
    """Max violation of: sum_B f_i'(gamma) = 0 per block, prefix sums of f_i' <= 0 (increasing; >= 0
    decreasing) inside each block (multipliers >= 0), and strict order between blocks."""
    g = fprime(x, y, w, c, p)
    q = p / (p - 1.0)
    d = np.abs(x - y)
    # g_B is known only to the rounding of gamma times its slope: for q < 2 the slope
    # (q - 1) w |d|^(q - 2) is large near a data point, so the residual is scaled by it as well
    with np.errstate(divide="ignore"):
        slope = np.where(d > 0, (q - 1.0) * w * d ** (q - 2.0) * np.maximum(np.abs(x), d), 0.0)
    scale = np.sum(w * d ** (q - 1.0) + np.abs(c) + slope) + 1e-300
    worst = 0.0
    sgn = 1.0 if increasing else -1.0
    for a, b in zip(blocks[:-1], blocks[1:]):
        pre = np.cumsum(g[a:b])
        worst = max(worst, abs(pre[-1]) / scale, np.max(sgn * pre) / scale)
        assert np.all(x[a:b] == x[a])
    vals = x[blocks[:-1]]
    assert np.all(sgn * np.diff(vals) > 0)  # adjacent blocks differ (pooling on >=)
    return worst


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("increasing", [True, False])
def test_against_slsqp(p, increasing):
    rng = np.random.default_rng(1)
    for _ in range(8):
        n = rng.integers(2, 7)
        y = rng.standard_normal(n)
        w = rng.uniform(0.5, 2.0, n)
        c = rng.uniform(-0.5, 0.5, n)
        x, blocks = isotonic_regression(y, w, p=p, increasing=increasing, c=c)
        xr = slsqp(y, w, c, p, increasing)
        # objective: ours never worse than the generic solver (to its ftol), fit close to it
        assert objective(x, y, w, c, p) <= objective(xr, y, w, c, p) + 1e-10
        np.testing.assert_allclose(x, xr, atol=2e-5)  # SLSQP stops at ftol 1e-15 on the objective: ~sqrt


@pytest.mark.parametrize("p", PS + [1.2, 6.0])
@pytest.mark.parametrize("increasing", [True, False])
def test_kkt(p, increasing):
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = 50
        y = np.cumsum(rng.standard_normal(n)) * 0.3 + rng.standard_normal(n)
        w = rng.uniform(0.2, 3.0, n)
        c = rng.uniform(-1.0, 1.0, n)
        x, blocks = isotonic_regression(y, w, p=p, increasing=increasing, c=c)
        assert kkt_residual(x, blocks, y, w, c, p, increasing) < 1e-12


def test_cubic_matches_root_finder():
    # p = 4/3: the closed-form cubic (O(1) merges of centred moments) against the general root finder
    rng = np.random.default_rng(3)
    p = 4 / 3
    worst = 0.0
    for scale in (1e-3, 1.0, 5.0, 1e3):
        for _ in range(30):
            n = 40
            y = scale * (rng.standard_normal(n) + 5.0)  # offset |y| ~ 5: raw power sums would cancel
            w = rng.uniform(0.2, 3.0, n)
            c = scale ** 3 * rng.uniform(-1.0, 1.0, n)
            for inc in (True, False):
                x1, b1 = isotonic_regression(y, w, p=p, increasing=inc, c=c)
                xg = np.empty(n)
                r = np.empty(n + 1, dtype=np.intp)
                yy, ww, cc = (y, w, c) if inc else (y[::-1].copy(), w[::-1].copy(), c[::-1].copy())
                nb, st = _kernels._pav_general(yy, ww, cc, 3.0, 100, 4 * np.finfo(float).eps, xg, r, np.zeros(2))
                assert st == 0
                if not inc:
                    xg = xg[::-1]
                np.testing.assert_array_equal(b1, r[: nb + 1] if inc else n - r[: nb + 1][::-1])
                worst = max(worst, np.max(np.abs(x1 - xg)) / scale)
    assert worst < 1e-13


def test_cubic_root_cancellation_free():
    # z^3 + P z + Q with P >> |Q|: textbook Cardano A - P/(3A) cancels; ours keeps full relative accuracy
    for P, Q in [(1e8, 1e-6), (3.0, 1e-300), (0.0, -8.0), (1e-20, 27.0), (12.0, -16.0)]:
        z = _kernels._cubic_root(P, Q)
        f = (z * z + P) * z + Q
        assert abs(f) <= 4e-16 * max(abs(z) ** 3, P * abs(z), abs(Q))
    assert _kernels._cubic_root(0.0, -8.0) == 2.0
    assert _kernels._cubic_root(12.0, -13.0) == pytest.approx(1.0, rel=1e-15)  # z^3 + 12 z - 13 = (z - 1)(z^2 + z + 13)


def test_continuity_at_p2():
    rng = np.random.default_rng(4)
    n = 30
    y = rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, n)
    c = rng.uniform(-0.3, 0.3, n)
    x2, _ = isotonic_regression(y, w, p=2.0, c=c)
    xs, _ = isotonic_regression(y - c / w, w)  # p = 2 with c: the shifted-target weighted LS fit
    np.testing.assert_array_equal(x2, xs)
    errs = []
    for eps in (1e-2, 1e-3, 1e-4):
        errs.append(np.max(np.abs(isotonic_regression(y, w, p=2.0 + eps, c=c)[0] - x2)))
        errs.append(np.max(np.abs(isotonic_regression(y, w, p=2.0 - eps, c=c)[0] - x2)))
    assert errs[-1] < 1e-3 and errs[-2] < 1e-3
    assert errs[-1] < errs[0] / 10 and errs[-2] < errs[1] / 10  # O(|p - 2|)


@pytest.mark.parametrize("p", PS)
def test_ties_and_blocks(p):
    # tied inputs get tied outputs; pooled values that tie are merged (adjacent blocks differ)
    x, blocks = isotonic_regression([1.0, 1.0, 1.0], p=p)
    assert x.tolist() == [1.0, 1.0, 1.0] and blocks.tolist() == [0, 3]
    x, blocks = isotonic_regression([2.0, 0.0, 1.0, 1.0], p=p)
    assert blocks.tolist() == [0, 4] and np.all(x == x[0]) and x[0] == pytest.approx(1.0, abs=1e-15)
    x, blocks = isotonic_regression([0.0, 1.0, 2.0], p=p, increasing=False)
    assert np.all(x == x[0]) and x[0] == pytest.approx(1.0, abs=1e-15) and blocks.tolist() == [0, 3]
    x, blocks = isotonic_regression([0.0, 1.0, 2.0], p=p)
    assert x.tolist() == [0.0, 1.0, 2.0] and blocks.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("p", PS)
def test_topk_mask_hard_regime(p):
    # hard regime (Section 7.5): mask, w_perm = 1_k, gap x_[k] - x_[k+1] >= reg -> singletons v_i = s_i - reg w_i,
    # i.e. y = ((s - v)/reg)^(q-1) = w_perm exactly; via c = reg^(q-1) w_perm
    q = p / (p - 1.0)
    s = np.array([5.0, 4.0, 3.0, 1.0, 0.5])
    wp = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    reg = 1.5
    v, blocks = isotonic_regression(s, p=p, c=reg ** (q - 1.0) * wp, increasing=False)
    np.testing.assert_allclose(v, s - reg * wp, rtol=0, atol=1e-14)
    ymask = np.sign(s - v) * (np.abs(s - v) / reg) ** (q - 1.0)
    np.testing.assert_allclose(ymask, wp, atol=1e-14)


def test_reversal_symmetry():
    rng = np.random.default_rng(5)
    y = rng.standard_normal(40)
    w = rng.uniform(0.5, 2.0, 40)
    c = rng.uniform(-0.5, 0.5, 40)
    for p in PS:
        xi, bi = isotonic_regression(y, w, p=p, c=c)
        xd, bd = isotonic_regression(y[::-1], w[::-1], p=p, c=c[::-1], increasing=False)
        np.testing.assert_array_equal(xi, xd[::-1])
        np.testing.assert_array_equal(bi, 40 - bd[::-1])


def test_knobs_max_iter_and_tol():
    rng = np.random.default_rng(6)
    y = rng.standard_normal(60)
    x_ref, _ = isotonic_regression(y, p=3.0)
    with pytest.warns(ConvergenceWarning, match="max_iter = 1"):
        x1, _ = isotonic_regression(y, p=3.0, max_iter=1)
    assert np.max(np.abs(x1 - x_ref)) > 1e-8  # max_iter is honoured
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xt, _ = isotonic_regression(y, p=3.0, tol=1e-3)
    assert 0 < np.max(np.abs(xt - x_ref)) < 1e-2  # tol is honoured
    # p = 4/3 and 2 are closed forms: the knobs do not matter there
    np.testing.assert_array_equal(isotonic_regression(y, p=4 / 3, max_iter=1)[0], isotonic_regression(y, p=4 / 3)[0])


@pytest.mark.parametrize("kwargs, exc, pattern", [
    (dict(y=[1.0, 2.0], p=3.0, c=[1.0]), ValueError, "`c` of .* must have shape"),
    (dict(y=[1.0, 2.0], p=3.0, c=[1.0, np.nan]), ValueError, "`c` of "),
    (dict(y=[1.0], p=3.0, max_iter=0), ValueError, "`max_iter` of "),
    (dict(y=[1.0], p=3.0, max_iter=2.5), TypeError, "`max_iter` of "),
    (dict(y=[1.0], p=3.0, tol=-1.0), ValueError, "`tol` of "),
    (dict(y=[1.0], p=3.0, tol="a"), TypeError, "`tol` of "),
])
def test_bad_inputs(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        isotonic_regression(**kwargs)


def test_no_mutation_and_edges():
    y = np.array([3.0, 1.0, 2.0])
    c = np.array([0.1, 0.2, 0.3])
    y0, c0 = y.copy(), c.copy()
    for p in PS:
        isotonic_regression(y, p=p, c=c, increasing=False)
        assert isotonic_regression([], p=p)[1].tolist() == [0]
        assert isotonic_regression(2.0, p=p)[0].tolist() == [2.0]
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(c, c0)


def test_root_near_zero_converges_relative_to_the_data_spread():
    """Regression: p = 73 (q - 1 = 1/72) with y = (-1, 0, 0) puts the pooled root at about -2e-22;
    a stopping rule relative to |root| alone never fired within max_iter (a ConvergenceWarning seen
    by the Hypothesis fuzz in a fresh clone). The width is now measured against the data's spread."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, blocks = isotonic_regression([-1.0, 0.0, 0.0], p=73.0, increasing=False)
    assert list(blocks) == [0, 3]
    assert abs(x[0]) <= 1e-15


@pytest.mark.parametrize("p", [3.0, 6.0])
def test_tiny_newton_step_next_to_a_target_is_not_convergence(p):
    """Regression: for p > 2 the derivative |gamma - y_i|^(q - 2) of a block's equation blows up next
    to a target, so a Newton iterate landing there takes a tiny step while the equation is far from
    solved. With targets ~1e-300 the root finder stopped at -2.2e-151 (residual 0.25) instead of the
    root -1/144 = -0.0069 (p = 3); a small step is now accepted only after a sign change around it."""
    y = np.array([3e-300, 2e-300, 1e-300])
    c = np.array([0.75, 0.25, -0.75])
    w = np.ones(3)
    x, blocks = isotonic_regression(y, p=p, c=c, increasing=False)
    assert list(blocks) == [0, 3]
    q = p / (p - 1.0)
    root = -((0.25 / 3.0) ** (1.0 / (q - 1.0)))  # the three targets are 0 to within 3e-300
    assert x[0] == pytest.approx(root, rel=1e-12)
    assert kkt_residual(x, blocks, y, w, c, p, False) < 1e-12
    # the same with the targets shifted away from 0 by a generic offset and back
    for shift in (1e-3, -0.5, 7.0):
        xs, _ = isotonic_regression(y + shift, p=p, c=c, increasing=False)
        assert xs[0] - shift == pytest.approx(root, rel=1e-9, abs=1e-12)


def _run_kernel(kernel, y, w, c, qm1, max_iter=200, tol=4 * np.finfo(float).eps):
    n = y.size
    x = np.empty(n)
    r = np.empty(n + 1, dtype=np.intp)
    info = np.zeros(2)
    nb, status = kernel(y, w, c, qm1, max_iter, tol, x, r, info)
    return x, r[: nb + 1].copy(), status, info


def test_split_kernel_equals_stack_pav_bitwise():
    """The threshold-splitting kernel (_pav_general_split) and the kernel in use (_pav_general: the stack
    form under a work budget, else the splitting form) against the stack form of pool adjacent
    violators (_pav_general_stack, which re-solves every merged block): same blocks, same bits, over random
    instances with ties, weights, linear terms, scales 1e-3..1e3 and q - 1 from 0.1 (p = 11) to 9."""
    rng = np.random.default_rng(7)
    for trial in range(1500):
        n = int(rng.integers(1, 60))
        y = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3)
        if trial % 3 == 0:
            y = np.round(y)  # ties
        w = rng.uniform(0.1, 3.0, n) if trial % 2 else np.ones(n)
        c = rng.standard_normal(n) * (trial % 4 != 0)
        qm1 = [2.0, 0.5, 1.0 / 3.0, 3.0, 0.1, 9.0][trial % 6]
        x1, r1, s1, _ = _run_kernel(_kernels._pav_general_stack, y, w, c, qm1)
        for kernel in (_kernels._pav_general_split, _kernels._pav_general):
            x2, r2, s2, _ = _run_kernel(kernel, y, w, c, qm1)
            assert s1 == s2 == _kernels.OK
            assert np.array_equal(r1, r2), trial
            assert np.array_equal(x1, x2), trial


@pytest.mark.parametrize("p", [1.5, 3.0])
@pytest.mark.parametrize("n", [10**4, 10**5])
def test_single_large_block_is_fast_and_exact(p, n):
    """A decreasing input fitted increasingly pools into one block of n entries: the stack form
    re-solved it at each of the n - 1 merges (O(n^2): 12-18 s at n = 1e4). The splitting kernel
    solves it once; the KKT residual stays at round-off and the time is bounded (generous, shared CPU)."""
    import time

    rng = np.random.default_rng(3)
    y = -np.sort(rng.standard_normal(n))
    w = rng.uniform(0.5, 2.0, n)
    c = rng.uniform(-0.1, 0.1, n)
    isotonic_regression(y[:10], w[:10], p=p, c=c[:10])  # compiled
    t0 = time.perf_counter()
    x, blocks = isotonic_regression(y, w, p=p, c=c)
    elapsed = time.perf_counter() - t0
    assert list(blocks) == [0, n]
    assert kkt_residual(x, blocks, y, w, c, p, True) < 1e-12
    assert elapsed < 2.0


@pytest.mark.parametrize("p", [1.5, 3.0])
def test_topk_like_many_blocks_large(p):
    """The top-k mask's problem (targets sorted, linear term 1 on the first k) and a random walk with
    noise at n = 2e4: KKT at round-off, bounded time (the stack form is quadratic in the pooled block)."""
    import time

    rng = np.random.default_rng(4)
    n, k = 20000, 100
    t = np.sort(rng.standard_normal(n))[::-1] / 10.0
    c = np.zeros(n)
    c[:k] = 1.0
    walk = np.cumsum(rng.standard_normal(n)) * 0.05 + rng.standard_normal(n)
    for y, cc, inc in [(t, c, False), (walk, rng.uniform(-1, 1, n), True)]:
        w = np.ones(n)
        t0 = time.perf_counter()
        x, blocks = isotonic_regression(y, p=p, c=cc, increasing=inc)
        assert time.perf_counter() - t0 < 2.0
        assert kkt_residual(x, blocks, y, w, cc, p, inc) < 1e-12


@pytest.mark.parametrize("qm1", [2.0, 0.5])
def test_hybrid_many_small_blocks_and_overflowing_spread(qm1):
    """Inputs of many small blocks (adjacent pairs swapped in an increasing sequence: linear, quartic,
    exponential up to e^600) stay on the stack form (linear work) and agree with it; with a spread
    whose block equation overflows over the whole input (y up to 1e153, qm1 = 2), the splitting form
    hands the segment to the stack form instead of cutting at NaN (it looped forever before)."""
    n = 3000
    i = np.arange(n, dtype=float)
    for y in (i, i ** 4, np.exp(i * 600.0 / n), np.exp(np.arange(1000) * 0.5)[:708]):
        y = y.copy()
        y[0::2], y[1::2] = y[1::2].copy(), y[0::2].copy()
        w = np.ones(y.size)
        c = np.zeros(y.size)
        x1, r1, s1, _ = _run_kernel(_kernels._pav_general_stack, y, w, c, qm1)
        for kernel in (_kernels._pav_general_split, _kernels._pav_general):
            x2, r2, s2, _ = _run_kernel(kernel, y, w, c, qm1)
            assert s2 == s1
            assert np.array_equal(r1, r2)
            assert np.array_equal(x1, x2)
        assert r1.size - 1 == y.size // 2
