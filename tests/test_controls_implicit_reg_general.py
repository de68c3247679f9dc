"""Negative controls of the ``implicit-reg`` general-model checks (DESIGN rule 5, STYLE 19).

Each control feeds a check's own predicate (the verdict function with the check's own expected figure)
a setting that breaks the claim: a hypothesis of the statement violated (m < r in Lemma 18, M_W < sqrt 2
in Lemma 20, Theta^L not converging in Prop. 11), a wrong printed form (a larger exponent in Lemma 20, an
O(1/L^2) bound in Prop. 11), or a wrong index map. The predicate must answer ``fail``.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from checks import test_implicit_reg_general as chk
from theory.claims import bound_verdict, frequency_verdict, rate_verdict
from theory.rates import fit_rate, frequency


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


# --------------------------------------------------------------------------- Lemma 18

def test_lemma18_rejects_product_bound_without_m_ge_r():
    """m < r: A has a kernel, so ||AB||_F can fall below s_min(A) ||B||_F."""
    narrow = st.builds(lambda m, extra, n, seed: {"m": m, "r": m + extra, "n": n, "kind": "gaussian",
                                                  "scale": 1.0, "seed": seed},
                       st.integers(1, 4), st.integers(1, 4), st.integers(1, 8), st.integers(0, 10_000))
    result, per = chk.lemma18_hunt(narrow, max_examples=60, enforce=False)
    _assert_fails(bound_verdict(result, chk.EXPECTED_L18))
    assert per["left"] > 1.01


# --------------------------------------------------------------------------- Lemma 20

def test_lemma20_rejects_larger_exponent():
    """exp(-(M_W^2 - 1) qm / 4) (a quarter instead of a sixteenth) is below the true tail."""
    result = chk.lemma20_result(divisor=4.0)
    _assert_fails(bound_verdict(result, chk.EXPECTED_L20))
    assert result.ratio > 10


def test_lemma20_rejects_mw_below_sqrt2():
    """M_W = 1.1 < sqrt 2: the chi-square tail decays like exp(-qm (x - 1 - log x)/2), x = M_W^2, slower
    than exp(-(x - 1) qm / 16), so the bound fails for large qm."""
    result = chk.lemma20_result(qm=np.arange(1, 3001), mw=np.array([1.1]))
    _assert_fails(bound_verdict(result, chk.EXPECTED_L20))


def test_lemma20_monte_carlo_rejects_larger_exponent():
    """q = m = 2, M_W = sqrt 2: the frequency ~0.09 exceeds exp(-(M_W^2 - 1) qm) = e^-4."""
    q, m, mw = 2, 2, math.sqrt(2.0)
    delta = math.exp(-(mw**2 - 1) * q * m)
    _assert_fails(frequency_verdict(frequency(chk.lemma20_mc(q, m, mw), delta=delta), {"delta": delta}))


# --------------------------------------------------------------------------- Proposition 11

def test_prop11_rejects_nonconvergent_parameters():
    """theta_k = Theta((k-1)/(L-1)) + i.i.d. N(0, 0.5^2): Theta^L does not converge; the gap is O(L^-1/2)."""
    fit = fit_rate(chk.P11_GRID, chk.p11_rate_table(seeds=range(2), noise=0.5))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_P11_RATE))
    assert fit.ci[0] > -0.8


def test_prop11_rejects_reversed_index_map():
    """theta_{k+1} = Theta(1 - k/(L-1)): the scheme follows the ODE of Theta(1 - s); the gap does not vanish."""
    fit = fit_rate(chk.P11_GRID, chk.p11_rate_table(seeds=range(2), index_map="reversed"))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_P11_RATE))
    assert abs(fit.slope) < 0.1


def test_prop11_bound_rejects_order_two_form():
    """The right-hand sides divided by L (an O(1/L^2) claim) are exceeded at large L."""
    result, _, _ = chk.p11_hunt(max_examples=25, shrink="L")
    _assert_fails(bound_verdict(result, chk.EXPECTED_P11_BOUND))
