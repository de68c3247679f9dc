"""Unit tests of the searched-bound machinery of the two-timescale experiments: the instance builders stay inside
the hypotheses they claim, every searched claim is named by its check, the constants of the proofs match the
document's arithmetic at hand-computed points."""

import math
from pathlib import Path

import numpy as np
import pytest

import theory.experiments.two_timescale as ex
import theory.two_timescale as T
from theory.experiments.two_timescale import _instances as I

ROOT = Path(__file__).resolve().parents[1]


def _points(dims, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield {d.name: d.value(x) for d, x in zip(dims, rng.uniform(size=len(dims)))}


@pytest.mark.parametrize("mode", ["free", "near", "half"])
def test_positions_lie_in_u_with_their_neurons_per_piece(mode):
    dims = I.target_dims() + I.position_dims()
    if mode == "near":
        from theory.worst_case import Dim
        dims.append(Dim("near", 0.0, 1 - 1e-9))
    built = 0
    for inst in _points(dims, 400, 1):
        t = I.build_target(inst)
        p = None if t is None else I.build_positions(t, inst, mode)
        if p is None:
            continue
        built += 1
        eta = inst["eta"]
        assert T.separation(p.u, eta) > 2 * eta
        edges = np.concatenate(([0.0], t.v, [1.0]))
        counts = [np.count_nonzero((p.u > lo) & (p.u < hi)) for lo, hi in zip(edges[:-1], edges[1:])]
        assert min(counts) >= inst["per_piece"]
        i = t.focus
        dl, dr = t.v[i] - p.u[p.left[i]], p.u[p.right[i]] - t.v[i]
        assert math.isclose(dl + dr, inst["w"] * eta, rel_tol=1e-9)
        if mode == "near":
            assert all(min(t.v[j] - p.u[p.left[j]], p.u[p.right[j]] - t.v[j]) < eta for j in range(t.v.size))
        if mode == "half":
            assert min(dl, dr) >= eta / 2
    assert built >= 20


def test_targets_are_in_the_class():
    for inst in _points(I.target_dims(), 200, 2):
        t = I.build_target(inst)
        if t is None:
            continue
        assert t.n == inst["n"] and 0 < t.v[0] and t.v[-1] < 1 and np.all(np.diff(t.v) > 0)
        assert t.M >= 1 and np.all(np.abs(t.f) <= t.M) and t.df > 0
        if inst["alternate"] == 1:
            assert np.allclose(np.abs(np.diff(t.f)), 2 * inst["M"])


def test_hessian_positions_have_the_asked_smallest_gap():
    u = ex.hessian_positions(20, 1e-3, 3.0, 0.01, 0)
    assert math.isclose(T.separation(u, 1e-3), 3e-3, rel_tol=1e-6) or T.separation(u, 1e-3) >= 3e-3
    assert ex.hessian_positions(2000, 1e-3, 3.0, 1.0, 0) is None


def test_recovery_positions_put_the_focus_pair_where_asked():
    inst = {"n": 2, "target_seed": 0, "M": 1.0, "f_left": -1.0, "f_right": 1.0, "alternate": 0, "v_shift": 0.5,
            "per_piece": 3, "frac_left": 0.9, "frac_right": 0.9, "pos_seed": 0}
    t = I.build_target(inst)
    u = ex.recovery_positions(t, inst)
    L, R = T.flanking(u, t.v)
    assert math.isclose(u[L[0]], 0.5 - 0.45, rel_tol=1e-12) and math.isclose(u[R[0]], 0.5 + 0.45, rel_tol=1e-12)
    # symmetric pair spanning 0.9: Heaviside hitting time 8 * 0.45 / jump^2 = 0.9, against 6 / Delta f^2 = 1.5. The
    # two distances differ by a rounding (c = d_far^3 - d_near^3 ~ 3e-17), and the hitting time moves by about
    # c^(1/3) ~ 3e-6 of itself there (the boundary layer the quadrature resolves): 0.6 to 1e-5, not to 1e-9
    ratio = ex._recovery_ratio(ex.RECOVERY_PRESETS["check"])(inst)
    assert math.isclose(ratio[0] / ratio[1], 0.6, rel_tol=1e-5) and ratio[0] / ratio[1] < 0.6


def test_constants_at_a_hand_computed_point():
    # delta = 1/2, n = 2, Delta v = 1/2, M = 1, Delta f = 2 (f = -1, 1), m = ceil((6.2)), xi = 1
    inst = {"delta": 0.5, "n": 2, "dv_frac": 1.0, "M": 1.0, "df_frac": 1.0, "m_mult": 1.0, "xi": 1.0}
    k = ex._bounds._theorem_point(inst, ex.ConstantsConfig())
    m = math.ceil(12 * (4 + math.log(2) + math.log(2)))
    assert k["m"] == m and math.isclose(k["D"], 0.5 / (6 * (m + 1) ** 2))
    assert math.isclose(k["Q"], 2 ** -19 * min(0.25 * 4 / (m + 1) ** 5, 0.5))
    # Thm 6.8's proof: D(Q) <= delta / (8 (m+1)^2), i.e. 3/4 of Lemma 6.19's D when Q is the first branch
    lhs, rhs = ex._bounds._thm68_separation(inst, ex.ConstantsConfig())
    assert math.isclose(lhs / rhs, 0.75, rel_tol=1e-12)
    # the printed link 1/n <= Delta v is an equality for equal pieces, the corrected chain holds
    assert ex._bounds._lemma618_chain(inst, ex.ConstantsConfig(), True) == (0.5, 0.5)
    lhs, rhs = ex._bounds._lemma618_chain(inst, ex.ConstantsConfig(), False)
    assert lhs < rhs
    # Prop. 6.7: 8 eta <= D/2 with ratio 16 eta Delta f / (2^(13/2) sqrt(m+1) M eta^(1/2)), 0.25 at eta = 1, m = 1
    lhs, rhs = ex._bounds._prop67_separation({"eta": 1.0, "m": 1, "M": 1.0, "df_frac": 1.0}, ex.ConstantsConfig())
    assert math.isclose(lhs / rhs, 0.25, rel_tol=1e-12)


def test_lemma615_weights_approaches_2m_at_the_jump():
    inst = {"n": 2, "target_seed": 0, "M": 1.0, "f_left": -1.0, "f_right": 1.0, "alternate": 0, "v_shift": 0.5,
            "eta": 1e-3, "gap": 3.0, "w": 100.0, "t": 1e-6, "per_piece": 2, "pos_seed": 0}
    lhs, rhs = ex._bounds._lemma615_weights(inst, ex.SearchedBoundConfig())
    assert 0.999 < lhs / rhs < 1.0


def test_every_searched_claim_is_named_by_its_check():
    text = (ROOT / "checks" / "test_two_timescale_steps.py").read_text(encoding="utf-8")
    for claim_id in list(ex.SPECS) + list(ex.ERRATA):
        assert f'"{claim_id}"' in text, claim_id


def test_eta_floor_refuses_unresolved_sharpness():
    inst = {"n": 2, "target_seed": 0, "M": 1.0, "f_left": -1.0, "f_right": 1.0, "alternate": 0, "v_shift": 0.5,
            "unit": 1e-3, "eta_frac": 1e-3, "gap": 3.0, "w": 10.0, "t": 0.3, "per_piece": 3, "pos_seed": 0}
    out = ex._bounds._prop67_state(inst)
    assert out is None or out[2] >= ex._bounds.ETA_FLOOR
