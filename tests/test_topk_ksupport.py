"""theory.topk.ksupport_negentropy and ksupport_norm_squared against brute force over the capped coordinates,
limiting cases and input validation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory._errors import NonFiniteError
from theory.topk import ksupport_negentropy, ksupport_norm_squared


def brute_force(y, k, kind):
    """min over the sets C of capped coordinates (|C| < k) of the value with z = 1 on C and z_i = a_i (k - |C|) / T
    elsewhere, among the feasible ones (all z <= 1): the minimiser's structure, enumerated."""
    a = np.abs(y) if kind == "square" else np.asarray(y, dtype=float)
    n = a.size
    best = np.inf
    for m in range(k):
        for C in itertools.combinations(range(n), m):
            rest = [i for i in range(n) if i not in C]
            T = a[rest].sum()
            if T == 0.0:
                z_rest = np.full(len(rest), (k - m) / len(rest))
            else:
                z_rest = a[rest] * (k - m) / T
            if np.any(z_rest > 1.0 + 1e-12):
                continue
            if kind == "square":
                val = 0.5 * np.sum(a[list(C)] ** 2) + (0.5 * T**2 / (k - m) if T > 0 else 0.0)
            else:
                head = a[list(C)]
                val = np.sum(np.where(head > 0, head * np.log(np.where(head > 0, head, 1.0)), 0.0))
                val += T * np.log(T / (k - m)) if T > 0 else 0.0
            best = min(best, val)
    return best


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 7), data=st.data(), seed=st.integers(0, 2**16), zeros=st.booleans())
def test_against_brute_force(n, data, seed, zeros):
    k = data.draw(st.integers(1, n))
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(n)
    if zeros:
        y[rng.random(n) < 0.4] = 0.0
    assert ksupport_norm_squared(y, k) == pytest.approx(brute_force(y, k, "square"), rel=1e-12, abs=1e-300)
    yp = np.abs(y)
    assert ksupport_negentropy(yp, k) == pytest.approx(brute_force(yp, k, "exp"), rel=1e-12, abs=1e-15)


def test_limits_and_minimiser():
    y = np.array([0.5, 0.3, 0.15, 0.05])
    assert ksupport_negentropy(y, 4) == pytest.approx(np.sum(y * np.log(y)), rel=1e-15)
    assert ksupport_negentropy(y, 1) == pytest.approx(0.0, abs=1e-16)  # T log T at T = 1
    assert ksupport_norm_squared(y, 4) == pytest.approx(0.5 * y @ y, rel=1e-15)
    assert ksupport_norm_squared(-y, 1) == pytest.approx(0.5 * y.sum() ** 2, rel=1e-15)
    for f in (ksupport_negentropy, ksupport_norm_squared):
        for k in (1, 2, 3):
            value, z = f(y, k, return_z=True)
            assert z.sum() == pytest.approx(k) and z.min() >= 0 and z.max() <= 1
            if f is ksupport_negentropy:
                assert value == pytest.approx(np.sum(y * np.log(y / z)), rel=1e-13)
            else:
                assert value == pytest.approx(0.5 * np.sum(y**2 / z), rel=1e-13)


def test_validation():
    with pytest.raises(ValueError, match="`y`.*non-negative"):
        ksupport_negentropy([0.5, -0.1], 1)
    with pytest.raises(ValueError, match="`k`"):
        ksupport_negentropy([0.5, 0.1], 3)
    with pytest.raises(ValueError, match="`k`"):
        ksupport_norm_squared([0.5, 0.1], 0)
    with pytest.raises(TypeError, match="`k`"):
        ksupport_norm_squared([0.5, 0.1], 1.5)
    with pytest.raises(ValueError, match="`y`"):
        ksupport_norm_squared([np.nan, 0.1], 1)
    with pytest.raises(NonFiniteError):
        ksupport_norm_squared([1e200, 1e200], 1)
