"""Negative controls of the ``implicit-reg`` PL checks (DESIGN rule 5, STYLE 19).

Each control feeds a check's own predicate a setting that breaks the claim: m < n for Lemma 21, the
identity activation (rank <= d < n) for the transition, the factor L of Definition 1 dropped for
Prop. 5 and Thm 6. The predicate must answer ``fail`` with the measured figure outside tolerance.
"""

from __future__ import annotations

import numpy as np

from checks import test_implicit_reg_pl as chk
from theory.claims import frequency_verdict, identity_verdict, rate_verdict
from theory.pl import hermite_coefficient
from theory.rates import fit_rate, frequency, identity_error


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_lemma21_rejects_width_below_n():
    """m = n/2 violates m >= c1 n: sigma(WX) has rank m < n and the event fails on every draw."""
    viol, _ = chk.lemma21_violations(ratios=(0.5,), seeds=range(50))
    result = frequency(viol, delta=chk.EXPECTED_L21["delta"])
    _assert_fails(frequency_verdict(result, chk.EXPECTED_L21))
    assert result.freq > 0.9


def test_lemma21_transition_rejects_identity_activation():
    """sigma = identity (eta_r = 0 for r >= 2) with d = 8 < n: lambda_min(G/m) = 0 at every width."""
    ratios = (0.5, 1.0, 2.0, 4.0, 64.0)
    lam, lim = chk.transition_table(ratios=ratios, seeds=range(3), d=8, activation="identity")
    eta = abs(float(hermite_coefficient("sin", chk.R_ORDER)))
    ok, msg = chk.transition_predicate(ratios, lam, lim, eta)
    assert not ok, msg
    assert np.max(lam[:, -1]) < 1e-10


def test_prop5_rejects_missing_depth_factor():
    """Without the factor L of Definition 1 the ratio at init shrinks with L and misses the closed form."""
    got, ref = chk.p5_ratios(seeds=range(2), depth_factor=False)
    result = identity_error(got, ref)
    _assert_fails(identity_verdict(result, chk.EXPECTED_P5))
    assert result.max_rel_err > 1e-3


def test_thm6_rejects_missing_depth_factor():
    """G computed without the factor L is not the flow's dissipation: the residual is O(1) at every lr."""
    fit = fit_rate(chk.T6_LRS, chk.t6_residuals(seeds=range(1), depth_factor=False))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_T6_IDENTITY))
    assert abs(fit.slope) < 0.1


def test_thm6_exponential_rejects_missing_depth_factor():
    """Same swap in the long run: the log-loss slope is L times the mis-scaled ratio G/l."""
    t, losses, _ = chk.gd_run(**chk.T6_LONG)
    _, _, G1 = chk.gd_run(**chk.T6_LONG, depth_factor=False)
    ok, msg = chk.exponential_predicate(chk.exponential_phase(t, losses, G1))
    assert not ok, msg
