"""Negative controls of the ``implicit-reg`` checks (each control breaks the claim and asserts that the check rejects it).

Each control feeds a check's own predicate (its verdict function with the check's own expected
figure) a setting that breaks the claim: i.i.d. instead of weight-tied initialisation, the
depth-scaled metric of Eq. (4) removed, the 1/L residual scaling replaced by 1/sqrt(L), a smooth
activation where the claim is about ReLU, GELU where the closed form is ReLU's. The predicate must
answer ``fail`` with the measured figure outside the tolerance. Short ladders and training horizons
keep the controls cheap; the effects they show are of order one.
"""

from __future__ import annotations

import numpy as np

from theory.experiments.implicit_reg import core as chk
from theory.claims import identity_verdict, rate_verdict
from theory.rates import fit_rate

GRID = np.array([8, 16, 32, 64])
SEEDS = range(2)
SHORT = {"steps": 50}  # flow time 2.5


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def _differences(activation, kind):
    return chk.difference_table(activation, kind, grid=GRID, seeds=SEEDS, **SHORT)


def test_prop3_rejects_iid_init():
    """Prop. 3 needs Z^init(k/L) Lipschitz in k/L; i.i.d. W_k are not: the differences stay ~ sqrt(2qm)."""
    fit = fit_rate(GRID, _differences("tanh", "iid"))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_PROP3))
    assert abs(fit.slope) < 0.2


def test_prop3_gelu_rejects_iid_init():
    fit = fit_rate(GRID, _differences("gelu", "iid"))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_PROP3))


def test_prop3_iid_contrast_rejects_weight_tied_init():
    """The contrast claim (slope 0) must fail where the theory applies (weight-tied init, slope -1)."""
    fit = fit_rate(GRID, _differences("tanh", "paper"))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_IID))
    assert fit.slope < -0.8


def test_prop3_relu_predicate_rejects_tanh():
    """The ReLU claim's predicate (CI of the slope above -0.85) must be false for a C^2 activation."""
    fit = fit_rate(GRID, _differences("tanh", "paper"))
    assert not chk.relu_breaks_rate(fit)


def test_prop3_bounded_rejects_unscaled_metric():
    """Without the factor L of Eq. (4) (plain GD, residual step lr instead of L lr, same number of steps)
    the weights move by O(1/L): the displacement is not L-independent and the bounded check's predicate fails."""
    disp = np.array([[chk.max_displacement(*chk.trained(int(L), s, lr=chk.LR / L, **SHORT)[:2]) for L in GRID]
                     for s in SEEDS])
    fit = fit_rate(GRID, disp)
    _assert_fails(rate_verdict(fit, chk.EXPECTED_BOUNDED))
    assert fit.slope < -0.8


def test_prop2_rejects_sqrt_depth_scaling():
    """Residual branch scaled by 1/sqrt(L) (the SDE regime) instead of 1/L: F^L does not approach the ODE."""
    grid = np.array([8, 16, 32, 64, 128])
    errors = chk.prop2_errors(depth_scale=np.sqrt, seeds=range(2), grid=grid)
    fit = fit_rate(grid, errors)
    _assert_fails(rate_verdict(fit, chk.EXPECTED_PROP2))
    assert fit.slope > -0.5


def test_thm4_rejects_iid_init():
    """From i.i.d. init the trained weights at depths L and 2L do not approach each other."""
    dz, _ = chk.doubling_distances("tanh", "iid", grid=GRID[:-1], seeds=SEEDS, **SHORT)
    fit = fit_rate(GRID[:-1], dz)
    _assert_fails(rate_verdict(fit, chk.EXPECTED_THM4))
    assert fit.slope > -0.3


def test_appendix_d_rejects_gelu():
    """The closed form (56) is ReLU's: with GELU the odd layers train too and the even ones miss w*."""
    result, jumps = chk.appendix_d_result("gelu", grid=(4, 8))
    _assert_fails(identity_verdict(result, chk.EXPECTED_APPD))
    # and the contrast: L max |w_{k+1} - w_k| stays O(1) with GELU (it doubles with L for ReLU)
    assert 8 * jumps[1] < 1.2 * (4 * jumps[0])


def test_clip_assertion_rejects_an_active_clip():
    """The Prop. 3 / Thm 4 checks run clipped GD of Eq. (5) and assert that the clip is never active (so the
    runs equal plain GD of Eq. (4)). A clip level of 0.1, below the largest update coordinate (~0.46 for tanh,
    at t = 0), is active: the predicate must be false, the clip verdict must fail, and the trajectory
    must differ from the one at the checks' clip level."""
    low = 0.1
    runs = [chk.trained(int(L), s, clip=low, **SHORT) for L in GRID[:2] for s in SEEDS]
    stats = [r[3] for r in runs]
    assert not chk.clip_never_active(stats, low)
    summary = chk.clip_summary(stats, low)
    assert summary["clip_active_steps"] > 0 and summary["max_update_coordinate"] > low

    verdict = chk.clip_verdict(stats, low)
    assert verdict.status == "fail" and verdict.kind == "bound" and "clip_active_steps" in verdict.message
    assert verdict.measured["clip_active_steps"] > 0
    free = chk.trained(int(GRID[0]), SEEDS[0], **SHORT)
    assert chk.clip_never_active([free[3]])
    assert np.max(np.abs(free[1].W - runs[0][1].W)) > 1e-3  # the active clip changed the trained weights


def test_prop3_active_clip_rejects_an_inactive_clip_and_iid_init():
    """The active-clip record needs the clip to act: at the default clip with A and B fixed it never does,
    and its predicate must be false; from i.i.d. init (clip active) the O(1/L) rate must fail."""
    assert not chk.clip_was_active([chk.trained(int(L), s, **SHORT)[3] for L in GRID[:2] for s in SEEDS])
    runs = [chk.trained(int(L), s, train_outer=True, **SHORT)[3] for L in GRID[:2] for s in SEEDS]
    assert chk.clip_was_active(runs)
    fit = fit_rate(GRID, chk.difference_table("tanh", "iid", grid=GRID, seeds=SEEDS, train_outer=True, **SHORT))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_PROP3))
