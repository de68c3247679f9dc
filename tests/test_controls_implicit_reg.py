"""Negative controls of the ``implicit-reg`` checks (each control breaks the claim and asserts that the check rejects it).

Each control reruns a check's measurement with a setting that breaks the claim and feeds the result to the
check's own verdict (with the check's own expected figure): i.i.d. instead of weight-tied initialisation, the
depth-scaled metric of Eq. (4) removed, the 1/L residual scaling replaced by 1/sqrt(L), a smooth
activation where the claim is about ReLU, GELU where the closed form is ReLU's. The verdict must
answer ``fail`` with the measured figure outside the tolerance. Short ladders and training horizons
keep the controls cheap; the effects they show are of order one. The Prop. 3 and Thm 4 records read every step
of the training trajectory; their controls rerun :func:`~theory.experiments.implicit_reg.core.measure_training`.
"""

from __future__ import annotations

import numpy as np

from theory.experiments.implicit_reg import core as chk
from theory.claims import identity_verdict, rate_verdict
from theory.rates import fit_rate

GRID = np.array([8, 16, 32, 64])
SEEDS = range(2)
SHORT = {"steps": 50}  # flow time 2.5


def _training(**change):
    """:func:`measure_training` on the short ladder (L = 8..64, two seeds, 50 steps) with ``change``."""
    return chk.measure_training(chk.TrainingConfig(grid=tuple(int(L) for L in GRID), seeds=tuple(SEEDS), **SHORT,
                                                   **change))


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_prop3_rejects_iid_init():
    """Prop. 3 needs Z^init(k/L) Lipschitz in k/L; i.i.d. W_k are not: the differences stay ~ sqrt(2qm), at the
    worst time (the sup over the trajectory) and at every time of the grid."""
    result = _training(kind="iid")
    verdict = chk.prop3_verdict(result)
    _assert_fails(verdict)
    assert abs(verdict.measured["slope"]) < 0.2 and verdict.measured["worst_time_slope_dev"] > 0.8


def test_prop3_gelu_rejects_iid_init():
    _assert_fails(chk.prop3_verdict(_training(kind="iid", activation="gelu")))


def test_prop3_iid_contrast_rejects_weight_tied_init():
    """The contrast claim (slope 0) must fail where the theory applies (weight-tied init, slope -1)."""
    verdict = chk.iid_verdict(_training())
    _assert_fails(verdict)
    assert verdict.measured["slope"] < -0.8


def test_prop3_relu_predicate_rejects_tanh():
    """The ReLU claim's verdict (CI of the slope above -0.85) must fail for a C^2 activation."""
    result = _training()
    assert not chk.relu_breaks_rate(chk.difference_fit(result))
    _assert_fails(chk.relu_verdict(result))


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
    """From i.i.d. init the weights at depths L and 2L do not approach each other, at any time of the trajectory."""
    verdict = chk.thm4_verdict(_training(kind="iid"))
    _assert_fails(verdict)
    assert verdict.measured["slope"] > -0.3 and verdict.measured["worst_time_slope_dev"] > 0.7


def test_trajectories_are_the_runs_of_train():
    """The time-resolved runs of the Prop. 3 / Thm 4 records are bit for bit those of theory.implicit.train (and
    their final values are the tables' last time), so reading every step changes what is read, not the runs."""
    from theory.implicit import initialize, train

    L, seed = int(GRID[1]), 1
    traj = chk.trajectories(seed, (L,), "tanh", "paper", steps=7)
    X, Y = chk._data(seed)
    p, _ = train(X, Y, initialize(chk.D, chk.M, L, np.random.default_rng(seed)), "tanh", lr=chk.LR, steps=7,
                 method="clipped", clip=chk.CLIP, train_outer=False)
    assert traj.difference[0, -1] == chk.max_successive_difference(p)
    memo = chk.trained(L, seed, steps=7)[1]
    assert np.array_equal(memo.V, p.V) and np.array_equal(memo.W, p.W)


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
    _assert_fails(chk.prop3_verdict(_training(kind="iid", train_outer=True)))
