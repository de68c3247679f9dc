"""Negative controls of the ``implicit-reg`` general-model checks (each control breaks the claim and asserts that the check rejects it).

Each control feeds a check's own predicate (the verdict function with the check's own expected figure)
a setting that breaks the claim: a hypothesis of the statement violated (m < r in Lemma 18, M_W < sqrt 2
in Lemma 20, Theta^L not converging in Prop. 11), a wrong printed form (a larger exponent in Lemma 20, an
O(1/L^2) bound in Prop. 11), or a wrong index map. The predicate must answer ``fail``.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, target
from hypothesis import strategies as st

from theory.experiments import experiment
from theory.experiments.implicit_reg import general as chk
from theory.experiments.implicit_reg import searches
from theory.claims import bound_verdict, erratum_verdict, frequency_verdict, rate_verdict
from theory.rates import BoundTracker, bound_ratio, fit_rate, frequency


def _run(name, **change):
    """``implicit_reg.<name>`` rerun at its ``"check"`` preset with ``change`` (a broken setting)."""
    return experiment(f"implicit_reg.{name}").run("check", **change)


# --------------------------------------------------------------------------- Hypothesis drivers (the checks' searches)


def lemma18_hunt(strategy, max_examples=300, enforce=True):
    """Running max of LHS/RHS per statement of Lemma 18 over ``strategy``'s instances."""
    tracker = BoundTracker()
    per = {}

    @settings(max_examples=max_examples, deadline=None)
    @given(strategy)
    def hunt(inst):
        for name, lhs, rhs in chk.lemma18_sides(inst, enforce):
            ratio = tracker.add(lhs, max(rhs, 1e-300), {**inst, "statement": name})
            per[name] = max(per.get(name, 0.0), ratio)
            target(ratio, label=name)

    hunt()
    return tracker.result(), per


_P11_INSTANCES = st.fixed_dictionaries({
    "seed": st.integers(0, 10_000), "L": st.sampled_from([2, 3, 5, 10, 40, 200, 1000]),
    "scale": st.sampled_from([0.3, 1.0, 2.0]), "omega": st.sampled_from([1.0, 3.0, 6.0]), "perturb": st.booleans()})


def p11_hunt(max_examples=40, shrink=None):
    """Running max of LHS/RHS of (35)-(36) over drawn problems; ``shrink="L"`` divides the right sides by L."""
    tracker = BoundTracker()

    @settings(max_examples=max_examples, deadline=None)
    @given(_P11_INSTANCES)
    def hunt(inst):
        for name, lhs, rhs in chk.p11_bound_sides(inst, inst["L"] if shrink == "L" else 1.0):
            target(tracker.add(lhs, rhs, {**inst, "bound": name}), label=name)

    hunt()
    return tracker.result(), None, None


_P7_INSTANCES = st.tuples(st.integers(0, 1000), st.sampled_from([1, 2, 4, 8, 16, 32]),
                          st.sampled_from(["paper", "smooth"]), st.sampled_from([0.05, 0.2, 1.0]),
                          st.sampled_from([0.02, 0.05]), st.sampled_from([10, 40]))
_P7_RUNS = []


def _p7_runs(max_examples=25):
    """Clipped-GD runs of Prop. 7 on drawn instances (drawn once per session)."""
    if not _P7_RUNS:

        @settings(max_examples=max_examples, deadline=None)
        @given(_P7_INSTANCES)
        def hunt(inst):
            res = chk.p7_run(*inst)
            target(max(res["ratios"][k] for k in ("norm (17)", "h (21)", "dp (K1/L)", "dh (K1/L)")))
            _P7_RUNS.append((inst, res))

        hunt()
    return _P7_RUNS


def _assert_fails(verdict):
    assert verdict.status == "fail", verdict.message


# --------------------------------------------------------------------------- Lemma 18

def test_lemma18_rejects_product_bound_without_m_ge_r():
    """m < r: A has a kernel, so ||AB||_F can fall below s_min(A) ||B||_F."""
    narrow = st.builds(lambda m, extra, n, seed: {"m": m, "r": m + extra, "n": n, "kind": "gaussian",
                                                  "scale": 1.0, "seed": seed},
                       st.integers(1, 4), st.integers(1, 4), st.integers(1, 8), st.integers(0, 10_000))
    result, per = lemma18_hunt(narrow, max_examples=60, enforce=False)
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
    result, _, _ = p11_hunt(max_examples=25, shrink="L")
    _assert_fails(bound_verdict(result, chk.EXPECTED_P11_BOUND))


# --------------------------------------------------------------------------- Proposition 7

def test_prop7_norm_rejects_bound_without_training_term():
    """M = M_0 (the term T M_pi dropped): the trained weights leave that ball."""
    runs = _p7_runs()
    result = bound_ratio([res["max_norm"] for _, res in runs], [res["constants"]["M0"] for _, res in runs])
    _assert_fails(bound_verdict(result, chk.EXPECTED_P7))


def test_prop7_displacement_rejects_unscaled_clip_level():
    """M_pi = clip (forgetting that the clipped gradient has q d, 2 q m, d' q coordinates) is exceeded."""
    lhs, rhs = [], []
    for inst, res in _p7_runs():
        clip = inst[3]
        lhs += [res["speed"][b] for b in ("A", "Z", "B")]
        rhs += [clip] * 3
    _assert_fails(bound_verdict(bound_ratio(lhs, rhs), chk.EXPECTED_P7_DISPLACEMENT))


def test_prop7_intermediate_rejects_order_two_increment():
    """||p_k - p_{k-1}|| <= K_1 ||p_k|| / L^2 (one power of L too many) fails for L >= 8."""
    lhs = [res["ratios"]["dp (K1/L)"] * inst[1] for inst, res in _p7_runs()]
    _assert_fails(bound_verdict(bound_ratio(lhs, 1.0), chk.EXPECTED_P7))


def test_prop7_gronwall_rejects_bound_without_growth():
    """Weight-tied init: ||Z_{k+1}(t) - Z_k(t)|| <= ||Z_{k+1}(0) - Z_k(0)|| = 0 (no beta t / L term) fails."""
    D = chk.p7_differences(0, 16, "paper", **chk.P7_RATE_RUN)
    _assert_fails(bound_verdict(bound_ratio(D[1:], np.full(D.size - 1, max(D[0], 1e-300))), chk.EXPECTED_P7))


def test_prop7_rate_rejects_iid_init():
    """i.i.d. W_k (Z^init not a Lipschitz function): the consecutive differences do not shrink with L
    (their max over the L - 1 pairs even grows slowly)."""
    table, _, _ = chk.p7_rate_table("iid", seeds=range(2))
    fit = fit_rate(chk.P7_GRID, table)
    _assert_fails(rate_verdict(fit, chk.EXPECTED_P7_RATE))
    assert fit.ci[0] > -0.2


# --------------------------------------------------------------------------- Proposition 8

def test_prop8_loss_rejects_uncertified_rate():
    """The largest PL ratio seen (not the certified minimum) overstates the decay: the loss bound fails."""
    tracker = BoundTracker()
    for L in (4, 64):
        t, losses, G, _ = chk.p8_run(0, L)
        tracker.add(losses[1:], losses[0] * np.exp(-np.max(G / losses) * t[1:]))
    _assert_fails(bound_verdict(tracker.result(), chk.EXPECTED_P8))


def test_prop8_hypothesis_rejects_large_targets():
    """Targets 1000x larger: the threshold of (22) grows like sqrt(l(0)) above the PL certificate of the ball,
    so the records' hypothesis assertion must reject the instance (they would then be proxies)."""
    hyps = [chk.p8_hypotheses(s, target_scale=1e3 * chk.P8_TARGET) for s in chk.P8_SEEDS]
    assert not chk.p8_hypotheses_hold(hyps)
    assert chk.p8_hypotheses_hold([chk.p8_hypotheses(s) for s in chk.P8_SEEDS])


def test_prop8_hypothesis_rejects_a_wide_ball():
    """M = 0.3: the input Jacobians may leave the identity by more than the data's conditioning allows, the
    certificate's c turns negative and nothing is certified."""
    hyps = [chk.p8_hypotheses(s, M=0.3) for s in chk.P8_SEEDS]
    assert not chk.p8_hypotheses_hold(hyps)
    assert min(h["c"] for h in hyps) <= 0


def _ball_point(p0, M, rng, mode):
    """A point of Definition 1's block ball around p0 (sum-norm on each Z_k): uniform directions on the
    boundary, or V_k aligned with the top singular pair of W (the largest Jacobian perturbation)."""
    def unit(shape):
        g = rng.standard_normal(shape)
        return g / np.linalg.norm(g)
    A = p0.A + M * rng.uniform() * unit(p0.A.shape)
    B = p0.B + M * rng.uniform() * unit(p0.B.shape)
    V, W = np.empty_like(p0.V), np.empty_like(p0.W)
    for k in range(p0.L):
        a = M * rng.uniform()
        if mode == "aligned":
            u, _, vt = np.linalg.svd(p0.W[k])
            V[k] = a * rng.choice([-1.0, 1.0]) * np.outer(vt[0], u[:, 0])
        else:
            V[k] = a * unit(p0.V[k].shape)
        W[k] = p0.W[k] + (M - a) * unit(p0.W[k].shape)
    return chk.Params(A, V, W, B)


def test_prop8_certificate_is_a_lower_bound_on_the_ball():
    """The PL certificate of the Prop. 8 records (a proof, valid for every target) must lie below G/l at
    every sampled point of the block ball, for several depths and for targets of order one (nonlinear regime);
    the same sampling finds points below a constant 50x the certificate's (the search has power)."""
    rng = np.random.default_rng(7)
    worst = np.inf
    for s in chk.P8_SEEDS:
        h = chk.p8_hypotheses(s)
        for L in (1, 4, 32):
            p0 = chk.p8_init(s, L)
            for scale in (chk.P8_TARGET, 1.0):
                X, Y = chk.p8_data(s, target_scale=scale)
                for i in range(40):
                    p = _ball_point(p0, chk.P8_BALL, rng, "aligned" if i % 2 else "uniform")
                    loss, g = chk.loss_and_gradient(X, Y, p, "sin")
                    G = np.sum(g.A**2) + L * (np.sum(g.V**2) + np.sum(g.W**2)) + np.sum(g.B**2)
                    worst = min(worst, G / loss / h["mu_cert"])
    assert worst >= 1.0, worst
    assert worst < 50.0, worst


def test_prop8_bounded_rejects_layer_summed_displacement():
    """Measured in the sum over layers (not the max over k), the displacement grows like L."""
    def summed(snaps):
        return max(float(np.sum(chk._sum_norm(s[1] - snaps[0][1], s[2] - snaps[0][2]))) for s in snaps)
    fit = fit_rate(chk.P8_GRID, chk.p8_table(summed))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_P8_BOUNDED))
    assert fit.slope > 0.8


def test_prop8_differences_reject_iid_init():
    """i.i.d. W_k: sup_t max_k ||Z_{k+1} - Z_k|| ~ sqrt(2 q m) at every depth."""
    fit = fit_rate(chk.P8_GRID, chk.p8_table(chk.p8_sup_difference, seeds=range(1), steps=50, kind="iid"))
    _assert_fails(rate_verdict(fit, chk.EXPECTED_P8_DIFF))
    assert fit.ci[0] > -0.2


def test_prop8_convergence_rejects_rate_mu():
    """Parameters converge like sqrt(loss), i.e. at mu/2: claiming e^{-mu t} for them is rejected, on the check's
    runs (the rate fraction against mu is about 1/2, below the 0.9 asked of a rate mu, i.e. 1.8 of mu/2) and by
    the worst-case search rerun against mu."""
    result = _run("prop8", convergence_rate="mu")
    verdict = chk.prop8_convergence_verdict(result, expected={**chk.EXPECTED_P8_CONV,
                                                              "rate_fraction_min": 2 * chk.EXPECTED_P8_CONV[
                                                                  "rate_fraction_min"]})
    _assert_fails(verdict)
    assert verdict.measured["rate_fraction"] < 1.8
    assert result.searches["convergence"].ratio > 1.0 / chk.EXPECTED_P8_CONV["rate_fraction_min"]
    _assert_fails(chk.prop8_convergence_verdict(result))  # the search alone fails the record


def test_prop8_certified_rejects_large_targets():
    """Targets 100x larger: mu of (22) grows like sqrt(l(0)) above the PL certificate, and the loss no
    longer decays at that mu."""
    r = chk.p8_certified(0, target_scale=0.1)
    assert r["mu_cert"] < r["mu22"]
    result = bound_ratio(r["losses"][1:], r["losses"][0] * np.exp(-r["mu22"] * r["t"][1:]))
    _assert_fails(bound_verdict(result, chk.EXPECTED_P8))


def test_prop8_erratum_rejects_corrected_statement():
    """The record needs both halves: printed (i) failing and corrected (i) holding on the same runs. With the
    printed bound replaced by the corrected Frobenius form it holds (record fails); with the corrected half fed
    the printed bound (which fails) the record fails too."""
    bad, _ = chk._p8c_tracker(chk.p8_printed_norm_sides)
    good, _ = chk._p8c_tracker(chk.p8_corrected_norm_sides)
    swapped, _ = chk._p8c_tracker(chk.p8_printed_norm_sides, corrected_norms=True)
    vb, vg, vs = (bound_verdict(r, chk.EXPECTED_P8) for r in (bad, good, swapped))
    assert vb.status == "fail" and vg.status == "pass" and vs.status == "pass"
    assert erratum_verdict(vb, vg).status == "pass"
    _assert_fails(erratum_verdict(vs, vg))
    _assert_fails(erratum_verdict(vb, vb))


# --------------------------------------------------------------------------- the worst-case searches (mutations)
#
# Each bound's record passes only if its worst-case search stays within the bound; each control reruns the search
# with a broken ingredient (the right-hand side divided by 4, a dropped term, a wrong constant) and asserts that
# the search finds the violation by itself (its ratio above the bound) and that the record then fails.


def test_lemma18_search_finds_quartered_right_hand_side():
    """The three inequalities with their right-hand sides divided by 4: the search reaches the equality cases
    (ratio 4); Hypothesis's instances, not divided, stay within the bound."""
    result = _run("lemma18_search", rhs_factor=0.25, max_examples=20)
    assert result.bound.search.ratio > 3.9
    assert result.bound.ratio <= chk.EXPECTED_L18["ratio_max"]
    _assert_fails(searches.lemma18_search_verdict(result))


def test_lemma20_search_finds_larger_exponent():
    """exp(-(M_W^2 - 1) qm / 4): the search finds the true tail above it."""
    result = _run("lemma20", divisor=4.0, qm_max=4, mw_points=2, mw_max=1.5)
    assert result.bound.search.ratio > 10
    _assert_fails(chk.lemma20_verdict(result))


def test_prop11_bound_search_finds_order_two_form():
    """(35)-(36) with the right-hand sides divided by L: the search reaches depths where the gap exceeds them."""
    result = _run("prop11_bound_search", shrink="L", max_examples=2)
    assert result.bound.search.ratio > 1.0
    _assert_fails(searches.prop11_bound_search_verdict(result))


def test_prop7_searches_find_quartered_right_hand_sides():
    """The norm bound (17), the displacement bound and the intermediate bounds of the proof with their right-hand
    sides divided by 4: each record's search finds a run above it (the drawn runs are not divided)."""
    result = _run("prop7_search", rhs_scale=0.25)
    for cid in ("implicit-reg/prop-7", "implicit-reg/prop-7/displacement", "implicit-reg/prop-7/intermediate"):
        assert result.searches[cid].ratio > 1.0, cid
        verdict = searches.prop7_search_verdict(result, cid)
        _assert_fails(verdict)
        assert verdict.measured["ratio"] <= 1.0 + 1e-12, cid


def test_prop7_gronwall_search_finds_bound_without_growth():
    """The Gronwall bound with beta T / L and e^{alpha T} dropped (||Z_{k+1}(t) - Z_k(t)|| <= ||Z_{k+1}(0) - Z_k(0)||):
    the search finds runs whose consecutive weights separate."""
    result = _run("prop7_search", gronwall_terms="initial-only")
    assert result.searches["implicit-reg/prop-7/gronwall"].ratio > 1.0
    _assert_fails(searches.prop7_gronwall_verdict(result))


def test_prop8_loss_search_finds_quartered_right_hand_side():
    """l(t) <= e^{-mu t} l(0) / 4: the search finds runs above it (at the first steps)."""
    result = _run("prop8", search_rhs_scale=0.25)
    assert result.searches["loss"].ratio > 1.0
    _assert_fails(chk.prop8_loss_verdict(result))


def test_prop8_certified_search_finds_quartered_right_hand_sides():
    """The conclusions of Prop. 8 on the f = 0 instance with their right-hand sides divided by 4."""
    result = _run("prop8_certified", search_rhs_scale=0.25)
    assert result.search.ratio > 1.0
    _assert_fails(chk.prop8_certified_verdict(result))
