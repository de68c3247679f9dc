"""Negative controls of the checks in checks/test_topk_ch7.py.

Each control feeds a check's own predicate (its verdict with its own tolerance) a setting that breaks the
claim: an assumption dropped, a solver stopped early or swapped for the printed one, a wrong constant, a
shifted threshold, the corrected form passed off as the printed one. The predicate must answer ``fail``.
"""

from __future__ import annotations


import numpy as np
import pytest

from theory.experiments import topk as chk71
from theory.experiments import experiment, experiments
from theory.experiments import topk as chk
from theory.claims import bound_verdict, erratum_verdict, identity_verdict, qualitative_verdict
from theory.rates import bound_ratio, identity_error
from theory.topk import (dual_coordinate_ascent, dykstra, dykstra_printed, fenchel_young_gradient,
                         fenchel_young_loss, topk_magnitude, topk_mask)


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


def test_prop71_rejects_unsorted_weights():
    """Prop. 7.1 assumes w sorted decreasingly: with w as drawn, sum_i w_i x_[i] is not the maximum."""
    rng = np.random.default_rng(1)
    comp, ref = [], []
    for _ in range(10):
        x, w = rng.standard_normal(5), rng.standard_normal(5)
        f_b, y_b = chk.lmo_brute_force(x, w)
        f_s, y_s = chk.lmo_sorting(x, w, sort_w=False)
        comp.append(np.concatenate(([f_s], y_s)))
        ref.append(np.concatenate(([f_b], y_b)))
    _assert_fails(identity_verdict(identity_error(np.concatenate(comp), np.concatenate(ref)), {"atol": 1e-13}))


def test_prop73_rejects_wrong_k():
    """The z-route for k against the direct conjugate for k + 1 (P(1_k) swapped for P(1_{k+1}))."""
    rng = np.random.default_rng(2)
    comp, ref = [], []
    for n, k in ((5, 2), (7, 3), (9, 1)):
        y = rng.standard_normal(n)
        comp.append(chk.ksupport_by_z(y, k))
        ref.append(chk.conjugate_direct(y, k + 1))
    _assert_fails(identity_verdict(identity_error(np.array(comp), np.array(ref)), {"rtol": 1e-9}))


def test_pav_rejects_unconverged_reference():
    """Dykstra stopped after 5 iterations (tol=None) is not the PAV solution at the check's tolerance."""
    rng = np.random.default_rng(3)
    errs = []
    for n, k, reg in ((20, 3, 1.0), (40, 5, 2.0)):
        x = rng.standard_normal(n)
        v, s = chk.pav_v(x, k, reg, 2.0, "mask")
        r = dykstra(x, k, reg, max_iter=5, tol=None)
        errs.append(np.max(np.abs(r.v - v)) / max(1.0, np.max(np.abs(s))))
    _assert_fails(identity_verdict(identity_error(np.array(errs), 0.0), {"atol": chk.PAV_ATOL}))


def test_pav_rejects_wrong_p():
    """Dual ascent at p = 1.5 against PAV at p = 4/3 (the exponent of the linear-term scaling swapped)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(8)
    v, s = chk.pav_v(x, 3, 0.7, 4.0 / 3.0, "mask")
    r = dual_coordinate_ascent(x, 3, 0.7, 1.5)
    _assert_fails(identity_verdict(identity_error(np.array([np.max(np.abs(r.v - v))]), 0.0), {"atol": chk.PAV_ATOL}))


def test_dual_ascent_is_dykstra_rejects_printed_iterates():
    """The printed Algorithm 7.7's iterates are not the dual ascent's."""
    x = np.random.default_rng(5).standard_normal(12)
    a = dykstra_printed(x, 3, 1.5, max_iter=60, tol=None, record=True)
    b = dual_coordinate_ascent(x, 3, 1.5, 2.0, max_iter=60, tol=None, record=True)
    err = np.max(np.abs(a.iterates[1:] - b.iterates[1:]))
    _assert_fails(identity_verdict(identity_error(np.array([err]), 0.0), {"atol": 1e-12}))


def test_alg77_rate_rejects_printed_algorithm():
    """The printed iteration's error to v* stalls at O(1): no 1e3 drop over the grid."""
    curves = {reg: (grid, chk.dykstra_error_curves(reg, grid, solver=dykstra_printed, seeds=range(2)))
              for reg, grid in chk.DYK_GRIDS.items()}
    ok, measured = chk.alg77_rate_predicate(curves)
    assert not ok, measured


def test_alg77_rate_rejects_flat_errors():
    """Errors that do not decay (a solver that stopped moving) are rejected."""
    grid = chk.DYK_GRIDS[1.0]
    ok, _ = chk.alg77_rate_predicate({1.0: (grid, np.full((3, grid.size), 0.2))})
    assert not ok


def test_alg77_corrected_rejects_printed():
    err_star, _ = chk.printed_alg77_errors(chk.alg77_cases()[:2])
    _assert_fails(identity_verdict(identity_error(err_star, 0.0), {"atol": chk.ALG77_ATOL}))


def test_alg77_erratum_rejects_corrected_algorithm():
    """Fed the corrected Dykstra as the 'printed' algorithm, the erratum record must fail."""
    errs = []
    for x, k, reg in chk.alg77_cases()[:2]:
        r = dykstra(x, k, reg, max_iter=400_000)
        errs.append(np.max(np.abs(r.y - topk_mask(x, k, reg))))
    printed = identity_verdict(identity_error(np.array(errs), 0.0), {"atol": chk.ALG77_ATOL})
    assert printed.status == "pass"
    _assert_fails(erratum_verdict(printed, printed))


def test_alg77_erratum_rejects_failing_correction():
    """The printed algorithm fails; a 'corrected' half run with the printed solver fails too, so the record fails."""
    cases = chk.alg77_cases()[:2]
    err_star, _ = chk.printed_alg77_errors(cases)
    printed = identity_verdict(identity_error(err_star, 0.0), {"atol": chk.ALG77_ATOL})
    bad = identity_verdict(identity_error(chk.corrected_alg77_errors(cases, solver=dykstra_printed), 0.0),
                           {"atol": chk.ALG77_ATOL})
    good = identity_verdict(identity_error(chk.corrected_alg77_errors(cases), 0.0), {"atol": chk.ALG77_ATOL})
    _assert_fails(erratum_verdict(printed, bad))
    assert erratum_verdict(printed, good).status == "pass"


def test_bound_rejects_reg_outside_regime():
    """Near-tie |x|_[k] ~ |x|_[k+1] with reg above the regime: the relaxed operator pools, error ~ |x|/2."""
    x = np.array([1.0, 0.999, 0.1])
    reg = 0.01  # threshold 1/0.999 - 1 ~ 1e-3
    assert reg > chk.magnitude_threshold(x, 1)
    err = np.max(np.abs(topk_magnitude(x, 1, reg) - chk.hard_topkmag(x, 1)))
    _assert_fails(bound_verdict(bound_ratio([err], [reg * np.max(np.abs(x))]), {"ratio_max": 1.0}))


def test_bound_rejects_halved_constant():
    """Constant 1/2 instead of 1 in the regime: the exact error lambda/(1+lambda)|x|_[1] exceeds it."""
    rng = np.random.default_rng(6)
    lhs, rhs = [], []
    for _ in range(10):
        x = rng.standard_normal(6)
        reg = 0.5 * chk.magnitude_threshold(x, 2)
        lhs.append(np.max(np.abs(topk_magnitude(x, 2, reg) - chk.hard_topkmag(x, 2))))
        rhs.append(0.5 * reg * np.max(np.abs(x)))
    _assert_fails(bound_verdict(bound_ratio(lhs, rhs), {"ratio_max": 1.0}))


def test_example_regime_rejects_shifted_threshold():
    """An operator whose singleton regime extends to twice the threshold."""
    inputs = chk.magnitude_regime_inputs()
    comp = np.array([chk.magnitude_regime_table(x, k, op=lambda x, k, r: topk_magnitude(x, k, 0.5 * r) * (1 + 0.5 * r)
                                                / (1 + r)) for x, k in inputs])
    pred = np.tile((chk.EXAMPLE_RATIOS <= 1.0).astype(float), (len(inputs), 1))
    _assert_fails(identity_verdict(identity_error(comp, pred), {"atol": 0.0}))


def test_p_domain_erratum_rejects_p_above_one():
    """For p = 2 (inside the corrected domain) the curve is continuous: the 'printed' verdict passes and
    the erratum record fails."""
    s_grid = np.linspace(0.0, 5.0, 1001)
    ok, jump = chk.continuity_predicate(s_grid, chk71.fig71_curve(s_grid))
    printed = qualitative_verdict(bool(ok), f"max jump {jump}")
    assert printed.status == "pass"
    _assert_fails(erratum_verdict(printed, printed))


def test_p_domain_erratum_rejects_discontinuous_correction():
    """If the operator were discontinuous for p > 1 as well (here: the hard mask, reg -> 0), the corrected half fails
    and so does the record."""
    s_grid = np.linspace(0.0, 5.0, 1001)
    ok, jump = chk.continuity_predicate(s_grid, chk71.fig71_curve(s_grid, reg=1e-9))
    bad = qualitative_verdict(bool(ok), f"max jump {jump}")
    printed = qualitative_verdict(False, "p <= 1 jumps")
    _assert_fails(erratum_verdict(printed, bad))
    jumps = chk.p_domain_corrected_jumps(s_grid, ps=(2.0,))
    assert erratum_verdict(printed, qualitative_verdict(jumps["p=2"] <= 0.05, "p = 2")).status == "pass"


def test_p_domain_vertex_enumeration_is_not_a_relaxation():
    """The p <= 1 maximiser is a k-hot vertex: the hard mask, for every reg (sum |y|^p = k on vertices)."""
    x = np.array([3.0, 1.0, 0.4, 0.5])
    for p in (0.5, 1.0):
        for reg in (0.1, 1.0, 10.0):
            y, _ = chk.relaxed_mask_small_p(x, 2, reg, p)
            np.testing.assert_array_equal(y, [1.0, 1.0, 0.0, 0.0])


def test_fy_rejects_gradient_without_target():
    """grad = y* (the -t term dropped) against finite differences of the loss."""
    rng = np.random.default_rng(7)
    res = []
    for n, k in ((4, 1), (6, 2)):
        x = rng.standard_normal(n)
        t = np.zeros(n)
        t[:k] = 1.0
        g = fenchel_young_gradient(x, t, k, 1.0) + t
        g_fd = chk.fd_gradient(lambda z: fenchel_young_loss(z, t, k, 1.0, form="fy"), x, chk.FY_H)
        res.append(g - g_fd)
    _assert_fails(identity_verdict(identity_error(np.concatenate(res), 0.0), {"atol": chk.FY_ATOL}))


def test_fy_rejects_printed_loss_as_fy():
    """The printed loss (no R(t) term) in place of L: negative values break L >= 0."""
    x = np.array([0.5, 2.0, -1.0, 0.3])
    t = np.array([0.0, 1.0, 0.0, 0.0])
    loss = fenchel_young_loss(x, t, 1, 1.0)
    _assert_fails(identity_verdict(identity_error(np.array([max(0.0, -loss)]), 0.0), {"atol": chk.FY_ATOL}))


def test_fy_erratum_rejects_fy_form():
    """Fed the Fenchel-Young form with targets in P(1_k) as the 'printed' loss, the erratum record fails."""
    rng = np.random.default_rng(8)
    vals = []
    for n, k in ((5, 2), (10, 3)):
        x = rng.standard_normal(n)
        t = np.zeros(n)
        t[rng.permutation(n)[:k]] = 1.0
        vals += [fenchel_young_loss(x - c, t, k, 1.0, form="fy") for c in (0.0, 10.0, 100.0, 1000.0)]
    printed = identity_verdict(identity_error(np.maximum(0.0, -np.array(vals)), 0.0), {"atol": 1e-12})
    assert printed.status == "pass"
    _assert_fails(erratum_verdict(printed, printed))


def test_fy_erratum_rejects_failing_correction():
    """k-hot targets without the R(t) term (the printed loss): shift invariant but negative, so the corrected half
    fails and the record with it."""
    cases = chk.fy_erratum_cases()[:4]
    vals = chk.corrected_loss_shift_values(cases, form="printed")
    resid = np.concatenate((np.maximum(0.0, -vals).ravel(),
                            (np.abs(vals - vals[:, :1]) / np.maximum(1.0, np.abs(vals[:, :1]))).ravel()))
    bad = identity_verdict(identity_error(resid, 0.0), {"atol": 1e-9})
    printed = identity_verdict(identity_error(np.array([1.0]), 0.0), {"atol": 1e-12})
    _assert_fails(erratum_verdict(printed, bad))


def test_helpers_cover_every_claim():
    """Every claim of the chapter's checks has a registered experiment (and a control in this file)."""
    claims = {c for name in experiments() if name.startswith("topk.") for c in experiment(name).claims}
    assert claims >= {"topk/prop-7.1", "topk/prop-7.3", "topk/sec-7.5/pav", "topk/app-7.A.8", "topk/alg-7.7/rate",
                      "topk/alg-7.7", "topk/alg-7.7/erratum", "topk/sec-7.5/bound", "topk/sec-7.5/example",
                      "topk/prop-7.8/p-domain/erratum", "topk/sec-7.6", "topk/sec-7.6/erratum", "topk/prop-7.4",
                      "topk/prop-7.4/erratum", "topk/sec-7.5/hard/pnorm", "topk/sec-7.5/bound/pnorm",
                      "topk/prop-7.8/pnorm", "topk/sec-7.4/sparsity", "topk/prop-7.2/duality",
                      "topk/eq-7.2", "topk/sec-7.3/soft-sort"}


# --------------------------------------------------------------------------- Prop. 7.4, regimes for any p, Prop. 7.8 for any p, sparsity


def test_prop74_rejects_shifted_phi():
    """phi = x^2/2 + 1 (inf phi = 1): the biconjugate misses f*_phi by n - k."""
    comp, ref = [], []
    for y, k in chk.prop74_cases()[:2]:
        comp.append(chk.biconjugate(y, k, chk.phi_shifted, -1.0, lambda x: x))
        ref.append(chk.ksupport_by_z(y, k) - k)
    _assert_fails(identity_verdict(identity_error(np.array(comp), np.array(ref)), {"rtol": chk.PROP74_RTOL}))


def test_prop74_erratum_rejects_phi_with_zero_minimum():
    """Fed phi = x^2/2 (where the proposition holds) as the 'printed' case, the erratum record fails."""
    comp, ref = [], []
    for y, k in chk.prop74_cases()[:2]:
        comp.append(chk.biconjugate(y, k, chk.phi_half_square, 0.0, lambda x: x))
        ref.append(chk.ksupport_by_z(y, k))
    printed = identity_verdict(identity_error(np.array(comp), np.array(ref)), {"rtol": chk.PROP74_RTOL})
    assert printed.status == "pass"
    _assert_fails(erratum_verdict(printed, printed))


def test_prop74_erratum_rejects_wrong_constant():
    """The corrected constant -(n - k) inf(phi) replaced by -n inf(phi): the corrected half fails, so the record does."""
    comp, ref, nk = chk.prop74_erratum_sides()
    n = nk + np.array([k for _, k in chk.prop74_cases()])
    printed = identity_verdict(identity_error(comp, ref), {"rtol": chk.PROP74_RTOL})
    bad = identity_verdict(identity_error(comp, ref - n), {"rtol": chk.PROP74_RTOL})
    good = identity_verdict(identity_error(comp, ref - nk), {"rtol": chk.PROP74_RTOL})
    _assert_fails(erratum_verdict(printed, bad))
    assert erratum_verdict(printed, good).status == "pass"


def test_hard_regime_pnorm_rejects_p2_threshold():
    """The p = 2 magnitude threshold |x|_[k]/|x|_[k+1] - 1 used at p = 4/3 (scheme swapped): equality breaks."""
    x, k, p = np.array([2.0, 1.5, 0.3, -0.1]), 1, 4.0 / 3.0
    lam2 = np.sort(np.abs(x))[::-1][0] / np.sort(np.abs(x))[::-1][1] - 1.0
    lam_p = chk.magnitude_threshold_p(x, k, p)
    assert lam2 != lam_p
    rows = []
    for r in chk.REGIME_RATIOS_P:
        reg = r * lam2
        rows.append(float(np.max(np.abs(topk_magnitude(x, k, reg, p) - chk.hard_magnitude_values(x, k, reg, p)))
                          <= 1e-12 * 2.0))
    pred = (chk.REGIME_RATIOS_P <= 1.0).astype(float)
    _assert_fails(identity_verdict(identity_error(np.array(rows), pred), {"atol": 0.0}))


def test_bound_pnorm_rejects_p2_bound():
    """The p = 2 bound reg |x|_inf applied at p = 4/3 with |x| < 1: the error reg g^(1/3) exceeds it."""
    rng = np.random.default_rng(9)
    lhs, rhs = [], []
    for _ in range(10):
        x = 0.1 * rng.standard_normal(6)
        reg = 0.5 * chk.magnitude_threshold_p(x, 2, 4.0 / 3.0)
        lhs.append(np.max(np.abs(topk_magnitude(x, 2, reg, 4.0 / 3.0) - chk.hard_topkmag(x, 2))))
        rhs.append(reg * np.max(np.abs(x)))
    _assert_fails(bound_verdict(bound_ratio(lhs, rhs), {"ratio_max": 1.0}))


def test_prop78_pnorm_rejects_p2_weights():
    """The p = 2 Jacobian (block averaging) for the p = 4/3 operator."""
    from theory.topk import jacobian

    rng = np.random.default_rng(10)
    res = []
    for n, k, reg in ((5, 2, 0.5), (7, 3, 2.0)):
        x = rng.standard_normal(n)
        h = 1e-6 * max(1.0, np.max(np.abs(x)))
        J = jacobian(x, k, reg, 2.0)
        Jfd = np.array([(topk_mask(x + h * e, k, reg, 4 / 3) - topk_mask(x - h * e, k, reg, 4 / 3)) / (2 * h)
                        for e in np.eye(n)]).T
        res.append(np.max(np.abs(J - Jfd)))
    _assert_fails(identity_verdict(identity_error(np.array(res), 0.0), {"atol": chk.PNORM_JAC_ATOL}))


def test_sparsity_rejects_dense_relaxation():
    """k * softmax(x / reg) (an entropic relaxation, in P(1_k) when its entries stay <= 1) has no exact zero."""
    def dense(x, k, reg, p):
        e = np.exp((x - x.max()) / reg)
        return np.minimum(k * e / e.sum(), 1.0)

    bad = [chk.sparsity_violations(x, k, reg, p, op_mask=dense) for x, k, reg, p in chk.sparsity_instances()[:10]]
    _assert_fails(identity_verdict(identity_error(np.array(bad, dtype=float), 0.0), {"atol": 0.0}))


def test_prop72_duality_rejects_rescaled_magnitude():
    """The (1 + reg)-rescaled magnitude output (public-code variant) is not the dual solution: the gap opens."""
    rng = np.random.default_rng(11)
    gaps = []
    for n, k, reg in ((5, 2, 0.5), (7, 3, 2.0)):
        x = rng.standard_normal(n)
        g, _ = chk.primal_dual_gap(x, k, reg, 2.0, "magnitude", rng,
                                   op=lambda x, k, r, p: topk_magnitude(x, k, r, p, rescale=True))
        gaps.append(abs(g))
    _assert_fails(identity_verdict(identity_error(np.array(gaps), 0.0), {"atol": 1e-12}))


def test_eq72_rejects_unit_simplex():
    """The LP over the simplex (sum y = 1, the top-1 polytope) instead of P(1_k), k > 1."""
    rng = np.random.default_rng(12)
    errs = []
    for n, k in ((5, 2), (8, 3)):
        x = rng.standard_normal(n)
        hard = np.zeros(n)
        hard[np.argsort(-x)[:k]] = 1.0
        errs.append(np.max(np.abs(chk.lp_argmax_p1k(x, 1) - hard)))
    _assert_fails(identity_verdict(identity_error(np.array(errs), 0.0), {"atol": 1e-9}))


# --------------------------------------------------------------------------- §7.3 soft sort and soft rank

def test_soft_sort_rejects_wrong_reg():
    """The isotonic soft sort/rank at reg against the permutahedron LP solved at 2 reg."""
    rng = np.random.default_rng(13)
    errs = []
    for n, reg, p in ((4, 0.7, 2.0), (5, 1.5, 4.0 / 3.0), (6, 3.0, 3.0)):
        errs.extend(chk.soft_lp_errors(rng.standard_normal(n), reg, p, ref_reg=2.0 * reg))
    _assert_fails(identity_verdict(identity_error(np.array(errs), 0.0), {"atol": chk.SOFT_LP_ATOL}))


def test_soft_sort_rejects_p2_thresholds_for_other_p():
    """The p = 2 hard thresholds (1/max gap for the sort, min gap for the rank) used at p = 3 and 4/3:
    the regime table no longer matches the prediction (exact below, not above)."""
    tables, preds = [], []
    for p in (3.0, 4.0 / 3.0):
        for x in chk.soft_hard_inputs()[2:6]:
            ts = 1.0 / np.max(-np.diff(np.sort(x)[::-1]))
            tr = chk.hard_rank_threshold(x, p, power=1.0)
            tables.append(chk.soft_hard_table(x, p, thr_sort=ts, thr_rank=tr))
            preds.append(np.tile((chk.SOFT_RATIOS <= 1.0).astype(float), (2, 1)))
    _assert_fails(identity_verdict(identity_error(np.array(tables), np.array(preds)), {"atol": chk.SOFT_LP_ATOL}))


# --------------------------------------------------------------------------- worst-case searches of the §7.5 bounds


@pytest.mark.parametrize("name", ["topk.sec75_bound", "topk.sec75_bound_pnorm"])
def test_bound_search_finds_a_quartered_constant(name):
    """The right side λ|x|_[1]^{p−1} divided by 4: the worst-case search over the hard regime must find an instance
    above it by itself (the ratio there is 1/(1 + λ) times 4 at p = 2)."""
    import dataclasses

    from theory.experiments import experiment

    exp = experiment(name)
    out = exp.measure(dataclasses.replace(exp.presets["check"], rhs_factor=0.25, draws=1))
    assert out.result.search.ratio > 1.0, out.result.search.instance
    _assert_fails(chk.magnitude_bound_verdict(out))
    assert chk.magnitude_bound_verdict(exp.measure(dataclasses.replace(exp.presets["check"], draws=1))).passed


def test_bound_search_box_stays_in_the_hard_regime():
    """Every instance the search builds satisfies λ <= threshold (the hypothesis of §7.5) or is refused."""
    from theory.worst_case import search_worst_case

    seen = []

    def ratio(inst):
        built = chk.bound_search_instance(inst)
        if built is None:
            return None
        x, k, reg, p = built
        thr = chk.magnitude_threshold(x, k) if p == 2.0 else chk.magnitude_threshold_p(x, k, p)
        seen.append(reg <= thr and 1 <= k < x.size)
        return chk.magnitude_bound_instance(x, k, reg, p)

    search_worst_case(ratio, chk.bound_search_dims(chk.HARD_P), budget=60, seed=3)
    assert seen and all(seen)
