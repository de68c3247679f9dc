"""Negative controls of the ``topk`` checks (every check has one).

Each control feeds a check's own predicate (the verdict with the check's own tolerance) a setting that
breaks the claim: the wrong operator or scaling, the printed form of a corrected statement, a shifted
threshold, a smooth or discontinuous curve. The predicate must answer ``fail``.
"""

from __future__ import annotations

import numpy as np

from theory.experiments import topk as chk
from theory.claims import erratum_verdict, identity_verdict, rate_verdict
from theory.rates import fit_rate, identity_error
from theory.topk import jacobian, topk_mask


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def _smooth_cases():
    rng = np.random.default_rng(3)
    out = []
    for n, k, reg in ((5, 2, 0.3), (6, 3, 2.0), (8, 2, 10.0)):
        x = rng.standard_normal(n)
        h = chk.FD_STEP * max(1.0, np.max(np.abs(x)))
        for mode in ("mask", "magnitude"):
            assert chk.smooth_point(x, k, reg, mode, h)
            out.append((x, k, reg, mode, h))
    return out


def test_prop78_rejects_rescaled_jacobian():
    """The (1 + reg)-rescaled magnitude Jacobian against finite differences of the thesis operator."""
    comp, ref = [], []
    for x, k, reg, mode, h in _smooth_cases():
        if mode == "magnitude":
            comp.append(reg * jacobian(x, k, reg, mode=mode, rescale=True).ravel())
            ref.append(reg * chk.fd_jacobian(x, k, reg, mode, h).ravel())
    _assert_fails(identity_verdict(identity_error(np.concatenate(comp), np.concatenate(ref)), {"atol": chk.FD_ATOL}))


def test_prop78_rejects_mask_jacobian_for_magnitude():
    """Scheme swapped: the mask Jacobian (weights 1/|B|, sorted by x, not |x|) for the magnitude operator."""
    errs = [reg * np.max(np.abs(jacobian(x, k, reg, mode="mask") - chk.fd_jacobian(x, k, reg, "magnitude", h)))
            for x, k, reg, mode, h in _smooth_cases() if mode == "magnitude"]
    _assert_fails(identity_verdict(identity_error(np.array(errs), 0.0), {"atol": chk.FD_ATOL}))


def test_prop78_symmetric_psd_rejects_literal_printed_jacobian():
    """The literal printed weights |B| + reg w_i depend on the row: the matrix is not symmetric."""
    x = np.array([3.0, 2.9, 2.8, 0.1, -0.2])
    k, reg = 2, 1.0
    _, Jl = chk.printed_magnitude_jacobians(x, k, reg)
    asym = reg * np.max(np.abs(Jl - Jl.T))
    _assert_fails(identity_verdict(identity_error(np.array([asym]), 0.0), {"atol": 1e-12}))


def test_prop78_erratum_rejects_corrected_form():
    """Fed the corrected Jacobian as the 'printed' one (so the printed form holds), the erratum record must fail."""
    errs = [reg * np.max(np.abs(jacobian(x, k, reg, mode=mode) - chk.fd_jacobian(x, k, reg, mode, h)))
            for x, k, reg, mode, h in _smooth_cases()]
    printed = identity_verdict(identity_error(np.array(errs), 0.0), {"atol": chk.FD_ATOL})
    assert printed.status == "pass"
    _assert_fails(erratum_verdict(printed, printed))


def test_prop78_erratum_rejects_failing_correction():
    """The printed readings fail, but a 'corrected' Jacobian that is wrong too (the (1 + reg)-rescaled one) makes the
    erratum record fail: both halves are asserted."""
    x = np.array([3.0, 2.9, 2.8, 0.1, -0.2])
    k, reg = 2, 1.0
    h = chk.FD_STEP * 3.0
    Jfd = chk.fd_jacobian(x, k, reg, "magnitude", h)
    inst = {"k": k, "reg": reg, "mode": "magnitude"}
    printed, corrected = chk.erratum_outcome_verdict(
        chk.prop78_erratum_outcome([(inst, x, h, jacobian(x, k, reg, mode="magnitude"), Jfd)])).parts
    assert printed.status == "fail" and corrected.status == "pass"
    bad = identity_verdict(identity_error(reg * jacobian(x, k, reg, mode="magnitude", rescale=True), reg * Jfd),
                           {"atol": chk.FD_ATOL})
    _assert_fails(erratum_verdict(printed, bad))
    assert erratum_verdict(printed, corrected).status == "pass"


def test_prop78_erratum_printed_forms_fail_on_pooled_block():
    """The two printed readings differ from finite differences on a pooled block containing top-k entries."""
    x = np.array([3.0, 2.9, 2.8, 0.1, -0.2])
    k, reg = 2, 1.0
    h = chk.FD_STEP * 3.0
    assert chk.smooth_point(x, k, reg, "magnitude", h)
    Jfd = chk.fd_jacobian(x, k, reg, "magnitude", h)
    for J in chk.printed_magnitude_jacobians(x, k, reg):
        _assert_fails(identity_verdict(identity_error(reg * J, reg * Jfd), {"atol": chk.FD_ATOL}))


def test_prop72_rejects_unregularised_scaling():
    """The projection of x instead of x / reg (reg dropped) against the regularised LP."""
    rng = np.random.default_rng(5)
    comp, ref = [], []
    for n, k, reg in ((4, 2, 0.5), (5, 1, 3.0), (6, 3, 0.2)):
        x = rng.standard_normal(n)
        comp.append(topk_mask(x, k, 1.0))
        ref.append(chk.slsqp_mask(x, k, reg))
    _assert_fails(identity_verdict(identity_error(np.concatenate(comp), np.concatenate(ref)), {"atol": chk.SLSQP_ATOL}))


def _regime_verdict(table, side):
    inputs = chk.regime_inputs()
    comp = np.array([table(x, k, op=lambda x, k, r: topk_mask(x, k, 2.0 * r if side == "affine" else 0.5 * r))
                     for x, k in inputs])
    pred = np.tile(((chk.REGIME_RATIOS >= 1.0) if side == "affine" else (chk.REGIME_RATIOS <= 1.0)).astype(float),
                   (len(inputs), 1))
    return identity_verdict(identity_error(comp, pred), {"atol": 0.0})


def test_hard_regime_rejects_shifted_threshold():
    """An operator whose hard regime extends to twice the threshold: equality persists beyond it."""
    _assert_fails(_regime_verdict(chk.hard_regime_table, "hard"))


def test_affine_regime_rejects_shifted_threshold():
    """An operator whose affine regime starts at half the threshold: equality already below it."""
    _assert_fails(_regime_verdict(chk.affine_regime_table, "affine"))


def test_fig71_rejects_smooth_curve():
    """A smooth (sigmoid) transition has non-vanishing second differences everywhere and no exact zero."""
    s = np.linspace(0.0, 5.0, 1001)
    curve = 1.0 / (1.0 + np.exp(4 * (s - 1.0))) + 1.0 / (1.0 + np.exp(-4 * (s - 4.0)))
    ok, _ = chk.fig71_predicate(s, curve)
    assert not ok


def test_fig71_rejects_hard_curve():
    """The unregularised (jump) curve: two discontinuities, not four kinks."""
    s = np.linspace(0.0, 5.0, 1001)
    ok, measured = chk.fig71_predicate(s, chk.fig71_curve(s, reg=1e-9))
    assert not ok, measured


def test_fig71_smooth_rejects_kinked_curve():
    """p = 2 (kinks): the jump of the difference quotient stays 1/(2 reg) as h shrinks, slope 0, not 1."""
    fit = fit_rate(chk.FIG71_STEPS, chk.fig71_jumps(2.0))
    _assert_fails(rate_verdict(fit, chk.FIG71_SMOOTH, grid_label="h"))


def test_fig71_smooth_rejects_smooth_but_dense_curve():
    """A C^1 curve without exact zeros (a sigmoid) fails the sparsity part of the predicate."""
    s = np.linspace(0.0, 5.0, 1001)
    curve = 1.0 / (1.0 + np.exp(4 * (s - 1.0))) + 1.0 / (1.0 + np.exp(-4 * (s - 4.0)))
    fit = fit_rate(chk.FIG71_STEPS, chk.FIG71_STEPS * 3.0)  # a perfect slope-1 jump sequence
    ok, measured = chk.fig71_smooth_predicate(fit, curve, s, 0.0)
    assert not ok, measured
