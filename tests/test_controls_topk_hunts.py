"""Hypothesis hunts of paper key ``topk``: the instance searches that the checks of checks/test_topk*.py ran before
each check recorded its registered experiment's seeded "check" draw (``theory run CLAIM-ID`` reruns that one).

Each test draws the same family of instances as its claim's experiment (same ranges, same number of examples), with
Hypothesis steering the draws towards edge cases, and asserts the verdict that the claim's check records: a
counterexample here is a counterexample to the claim that the seeded draw missed. Nothing is recorded in the claims
report. They import theory.experiments.topk, never checks/.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

from theory.experiments import topk as ex
from theory.rates import BoundTracker


def _assert_passes(verdict):
    assert verdict.status == "pass", verdict.message


# --------------------------------------------------------------------------- Proposition 7.8 (p = 2)


@st.composite
def jacobian_instances(draw):
    n = draw(st.integers(3, 8))
    return {
        "n": n,
        "k": draw(st.integers(1, n - 1)),
        "reg": 10.0 ** draw(st.floats(-2.0, 2.0)),
        "scale": 10.0 ** draw(st.floats(-1.0, 2.0)),
        "mode": draw(st.sampled_from(["mask", "magnitude"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def hunt_jacobians(max_examples=60):
    """Hypothesis-drawn instances away from kinks: list of (inst, x, h, J, J_fd) (ex.jacobian_case)."""
    found = []

    @settings(max_examples=max_examples, deadline=None)
    @given(jacobian_instances())
    def hunt(inst):
        x = inst["scale"] * np.random.default_rng(inst["seed"]).standard_normal(inst["n"])
        case = ex.jacobian_case(x, inst["k"], inst["reg"], inst["mode"], inst)
        assume(case is not None)
        note(f"{inst}: reg*|J - J_fd| = {inst['reg'] * np.max(np.abs(case[3] - case[4])):.2e}")
        found.append(case)

    hunt()
    return found


def test_hunt_prop78_jacobian_and_erratum():
    cases = hunt_jacobians()
    _assert_passes(ex.prop78_verdict(ex.prop78_outcome(cases)))
    _assert_passes(ex.prop78_psd_verdict(ex.prop78_psd_outcome(cases[:40])))
    magnitude = [c for c in cases if c[0]["mode"] == "magnitude"]
    if magnitude:
        _assert_passes(ex.erratum_outcome_verdict(ex.prop78_erratum_outcome(magnitude)))


# --------------------------------------------------------------------------- Proposition 7.2 (reduction)


def test_hunt_prop72_reduction():
    pairs = []

    @settings(max_examples=30, deadline=None)
    @given(n=st.integers(3, 6), data=st.data(), reg=st.floats(-1.5, 1.5), seed=st.integers(0, 2**16),
           ties=st.booleans())
    def hunt(n, data, reg, seed, ties):
        k = data.draw(st.integers(1, n - 1))
        rng = np.random.default_rng(seed)
        x = rng.integers(-2, 3, n).astype(float) if ties else rng.standard_normal(n)
        y, y_ref = ex.prop72_instance(x, k, 10.0**reg)
        note(f"n={n} k={k} reg={10.0**reg:.3g} x={x}: err {np.max(np.abs(y - y_ref)):.2e}")
        pairs.append((y, y_ref))

    hunt()
    _assert_passes(ex.prop72_verdict(ex.prop72_outcome(pairs)))


# --------------------------------------------------------------------------- Propositions 7.1 and 7.3


def test_hunt_prop71_lmo():
    pairs = []

    @settings(max_examples=50, deadline=None)
    @given(seed=st.integers(0, 2**16))
    def hunt(seed):
        rng = np.random.default_rng(seed)
        pairs.append(ex.prop71_instance(rng.standard_normal(5), rng.standard_normal(5)))

    hunt()
    _assert_passes(ex.prop71_verdict(ex.prop71_outcome(pairs)))


def test_hunt_prop73_conjugate():
    comp, ref = [], []

    @settings(max_examples=40, deadline=None)
    @given(n=st.integers(3, 9), data=st.data(), seed=st.integers(0, 2**16))
    def hunt(n, data, seed):
        k = data.draw(st.integers(1, n - 1))
        c, r = ex.prop73_instance(np.random.default_rng(seed).standard_normal(n), k)
        comp.extend(c)
        ref.extend(r)

    hunt()
    _assert_passes(ex.prop73_verdict(ex.prop73_outcome(comp, ref)))


# --------------------------------------------------------------------------- §7.5: PAV is exact


@st.composite
def pav_instances(draw):
    n = draw(st.integers(2, 10))
    return {"n": n, "k": draw(st.integers(1, n - 1)), "reg": 10.0 ** draw(st.floats(-1.5, 1.0)),
            "scale": 10.0 ** draw(st.floats(-1.0, 1.0)), "ties": draw(st.booleans()),
            "seed": draw(st.integers(0, 2**16))}


def test_hunt_pav_exact():
    worst = {}

    @settings(max_examples=40, deadline=None)
    @given(inst=pav_instances())
    def hunt(inst):
        errs = ex.pav_errors(ex.draw_pav_x(inst), inst["k"], inst["reg"], general_p=not inst["ties"])
        for key, e in errs.items():
            worst[key] = max(worst.get(key, 0.0), float(e))

    hunt()
    _assert_passes(ex.pav_verdict(ex.pav_outcome(worst, 40)))


# --------------------------------------------------------------------------- §7.5: magnitude bounds


def test_hunt_magnitude_error_bound():
    tracker = BoundTracker()

    @settings(max_examples=200, deadline=None)
    @given(n=st.integers(2, 12), data=st.data(), frac=st.floats(0.01, 0.999), seed=st.integers(0, 2**16),
           scale=st.floats(-1.0, 2.0))
    def hunt(n, data, frac, seed, scale):
        k = data.draw(st.integers(1, n - 1))
        x = 10.0**scale * np.random.default_rng(seed).standard_normal(n)
        reg = frac * min(ex.magnitude_threshold(x, k), 1e3)
        if reg <= 0.0:
            return
        tracker.add(*ex.magnitude_bound_instance(x, k, reg), {"n": n, "k": k, "reg": reg, "seed": seed})

    hunt()
    _assert_passes(ex.magnitude_bound_verdict(tracker.result()))


def test_hunt_magnitude_bound_pnorm():
    tracker = BoundTracker()

    @settings(max_examples=150, deadline=None)
    @given(n=st.integers(2, 10), data=st.data(), frac=st.floats(0.01, 0.999), seed=st.integers(0, 2**16),
           scale=st.floats(-1.0, 1.5), p=st.sampled_from(ex.HARD_P))
    def hunt(n, data, frac, seed, scale, p):
        k = data.draw(st.integers(1, n - 1))
        x = 10.0**scale * np.random.default_rng(seed).standard_normal(n)
        reg = frac * min(ex.magnitude_threshold_p(x, k, p), 1e3)
        if reg <= 0.0:
            return
        tracker.add(*ex.magnitude_bound_instance(x, k, reg, p), {"n": n, "k": k, "reg": reg, "p": p, "seed": seed})

    hunt()
    _assert_passes(ex.magnitude_bound_verdict(tracker.result()))


# --------------------------------------------------------------------------- Proposition 7.8 for p != 2


def test_hunt_prop78_pnorm():
    res, asym, neg = [], [], []

    @settings(max_examples=60, deadline=None)
    @given(n=st.integers(3, 8), data=st.data(), reg=st.floats(-1.0, 1.0), scale=st.floats(-1.0, 1.0),
           seed=st.integers(0, 2**16), p=st.sampled_from(ex.PNORM_JAC_P), mode=st.sampled_from(["mask", "magnitude"]))
    def hunt(n, data, reg, scale, seed, p, mode):
        k = data.draw(st.integers(1, n - 1))
        x = 10.0**scale * np.random.default_rng(seed).standard_normal(n)
        a, b, c = ex.jacobian_pnorm_instance(x, k, 10.0**reg, p, mode)
        res.append(a)
        asym.append(b)
        neg.append(c)

    hunt()
    _assert_passes(ex.prop78_pnorm_verdict(ex.prop78_pnorm_outcome(res, asym, neg)))


# --------------------------------------------------------------------------- §7.6, Prop. 7.2's duality, Eqs. (7.2)/(7.4)


def test_hunt_fy_loss():
    res = []

    @settings(max_examples=60, deadline=None)
    @given(n=st.integers(2, 9), data=st.data(), reg=st.floats(-1.0, 1.0), seed=st.integers(0, 2**16),
           p=st.sampled_from(ex.FY_P))
    def hunt(n, data, reg, seed, p):
        k = data.draw(st.integers(1, n - 1))
        res.append(ex.fy_instance(n, k, 10.0**reg, p, seed))

    hunt()
    _assert_passes(ex.fy_verdict(ex.fy_outcome(res)))


def test_hunt_prop72_duality():
    gaps, margins = [], []
    rng = np.random.default_rng(72)

    @settings(max_examples=60, deadline=None)
    @given(n=st.integers(2, 9), data=st.data(), reg=st.floats(-1.0, 1.0), seed=st.integers(0, 2**16),
           p=st.sampled_from([2.0, 4.0 / 3.0]), mode=st.sampled_from(["mask", "magnitude"]))
    def hunt(n, data, reg, seed, p, mode):
        k = data.draw(st.integers(1, n - 1))
        x = np.random.default_rng(seed).standard_normal(n)
        g, m = ex.primal_dual_gap(x, k, 10.0**reg, p, mode, rng)
        gaps.append(g)
        margins.append(m)

    hunt()
    _assert_passes(ex.duality_verdict(ex.duality_outcome(gaps, margins)))


def test_hunt_eq72_lp():
    errs = []

    @settings(max_examples=40, deadline=None)
    @given(n=st.integers(2, 12), data=st.data(), seed=st.integers(0, 2**16))
    def hunt(n, data, seed):
        k = data.draw(st.integers(1, n - 1))
        errs.extend(ex.lp_forms_errors(np.random.default_rng(seed).standard_normal(n), k))

    hunt()
    _assert_passes(ex.lp_forms_verdict(ex.lp_forms_outcome(errs)))


# --------------------------------------------------------------------------- §7.3 soft sort and soft rank


def test_hunt_soft_sort_rank():
    errs = []

    @settings(max_examples=40, deadline=None)
    @given(n=st.integers(2, 6), seed=st.integers(0, 2**16), p=st.sampled_from(ex.SOFT_P),
           log_reg=st.floats(-2.5, 2.5))
    def hunt(n, seed, p, log_reg):
        x = np.random.default_rng(seed).standard_normal(n)
        errs.extend(ex.soft_lp_errors(x, float(10.0**log_reg), p))

    hunt()
    _assert_passes(ex.soft_sort_rank_verdict(ex.soft_sort_rank_outcome(errs)))
