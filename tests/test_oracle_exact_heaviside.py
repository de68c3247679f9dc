"""The oracle's kernels of the exactly reversible Momentum ResNet (momentum_exact_forward, _inverse, _roundtrip;
Sander's thesis, Sec. 4.3.2 and App. 4.C) and of the Heaviside two-timescale limit (heaviside_hitting_time,
heaviside_loss; Marion's thesis, (6.6)-(6.7)): independent implementations pass, planted bugs fail where they
should, the hard cases are there, the parameters generate cases and bad ones are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import _oracle_planted as planted
from theory import oracle
from theory.oracle import OracleInputError
from theory.oracle._kernels import momentum_exact, two_timescale

INDEPENDENT = {
    "momentum_exact_forward": planted.numpy_exact_forward,
    "momentum_exact_inverse": planted.numpy_exact_inverse,
    "momentum_exact_roundtrip": planted.numpy_exact_roundtrip,
    "heaviside_hitting_time": planted.numpy_hitting_time,
    "heaviside_loss": planted.numpy_heaviside_loss,
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(INDEPENDENT))
def test_an_independent_implementation_passes(name, dtype):
    result = oracle.verify(name, INDEPENDENT[name], dtype=dtype)
    assert result.ok and result.exit_code == 0, result.report()
    if name.startswith("momentum_exact"):  # exactness: a zero tolerance on every case, and nothing inconclusive
        assert all(r.tol == 0.0 for r in result.rows if r.verdict == "pass")
        assert result.counts["inconclusive"] == 0


def _failed(result):
    return {r.case for r in result.failures}


def test_an_int64_buffer_fails_exactly_where_the_buffer_passes_63_bits():
    k = oracle.kernel("momentum_exact_forward")
    result = oracle.verify(k.name, planted.planted_exact_forward_int64_buffer)
    big = {c.name for c in k.cases()
           if c.inputs["theta"].shape[0] * np.log2(c.inputs["den"] / c.inputs["num"]) > 63}
    assert big == {"gamma99_100_N5000", "gamma1_10_N40"}
    assert _failed(result) == big, result.report()


def test_truncating_division_fails():
    result = oracle.verify("momentum_exact_forward", planted.planted_exact_forward_truncating)
    assert result.exit_code == 1 and "gamma1_1_N10" not in _failed(result)  # gamma = 1 multiplies by 1/1
    assert len(_failed(result)) >= 5, result.report()


def test_a_float_division_inverse_fails_and_a_float_residual_breaks_the_round_trip():
    inv = oracle.verify("momentum_exact_inverse", planted.planted_exact_inverse_float_division)
    names = {r.case for r in inv.rows}
    assert _failed(inv) == names - {"gamma1_1_N10"}, inv.report()  # (an ERROR where its own v overflows int64)
    trip = oracle.verify("momentum_exact_roundtrip", planted.planted_exact_roundtrip_float_residual)
    assert trip.exit_code == 1 and {"gamma1_2_N10_fb1", "gamma1_2_N10_fb1_tanh"} <= _failed(trip), trip.report()


def test_left_first_fails_exactly_the_right_nearer_cases():
    k = oracle.kernel("heaviside_hitting_time")
    result = oracle.verify(k.name, planted.planted_hitting_time_left_first)
    right = {c.name for c in k.cases() if c.inputs["u_right"] - c.inputs["v"] < c.inputs["v"] - c.inputs["u_left"]}
    assert right and _failed(result) == right, result.report()


def test_the_closed_form_fails_where_a_cell_holds_two_jumps():
    """(6.6) is exact when no cell between consecutive neurons holds two jumps (two neurons per piece, or one):
    it fails the cases with a piece left empty."""
    k = oracle.kernel("heaviside_loss")
    result = oracle.verify(k.name, planted.planted_heaviside_loss_closed_form)
    failed = _failed(result)
    assert {"no_neurons", "pieces50_m100_scale1", "pieces200_m50_scale1"} <= failed
    assert not failed & {"thesis_target_two_per_piece", "pieces20_two_per_piece", "thesis_target_one_per_piece"}, \
        result.report()


def test_hard_cases_are_there():
    hit = {c.name: c.inputs for c in oracle.kernel("heaviside_hitting_time").cases()}
    gaps = [min(i["v"] - i["u_left"], i["u_right"] - i["v"]) for i in hit.values()]
    assert min(gaps) < 1e-12
    ties = [max(i["v"] - i["u_left"], i["u_right"] - i["v"]) / min(i["v"] - i["u_left"], i["u_right"] - i["v"])
            for i in hit.values()]
    assert any(1.0 < t < 1.0 + 1e-11 for t in ties) and 1.0 in ties
    assert {np.sign(i["jump"]) for i in hit.values()} == {-1.0, 1.0}
    loss = {c.name: c.inputs for c in oracle.kernel("heaviside_loss").cases()}
    assert max(i["f"].size for i in loss.values()) >= 200 and min(i["u"].size for i in loss.values()) == 0
    fw = {c.name: c.inputs for c in oracle.kernel("momentum_exact_forward").cases()}
    assert {(i["num"], i["den"]) for i in fw.values()} >= {(99, 100), (1, 10), (1, 1)}
    assert min(i["theta"].shape[0] for i in fw.values()) == 1 and min(i["x0"].size for i in fw.values()) == 1
    assert max(i["limbs"] for i in fw.values()) >= 3  # 5000 log2(100/99) = 72.5 bits


def test_limbs_round_trip():
    b = [0, 1, 2 ** 32, 3 ** 90]
    assert momentum_exact.int_of(momentum_exact.limbs_of(np.array(b, dtype=object), 5)) == b


def test_parameters_generate():
    for name, params in [("momentum_exact_forward", {"N": [1, 3], "d": 1, "num": 7, "den": 8}),
                         ("momentum_exact_inverse", {"num": 1, "den": 1, "frac_bits": 10}),
                         ("momentum_exact_roundtrip", {"N": 200, "num": 199, "den": 200}),
                         ("heaviside_hitting_time", {"near": [1e-9, 0.125], "ratio": [1.0, 2.5], "jump": -4.0}),
                         ("heaviside_loss", {"pieces": [1, 30], "m": [0, 40], "scale": 1e-3})]:
        result = oracle.verify(name, INDEPENDENT[name], params=params)
        assert result.ok, result.report()


@pytest.mark.parametrize("name, params, match", [
    ("momentum_exact_forward", {"num": 3, "den": 2}, "`num`"),
    ("momentum_exact_forward", {"frac_bits": 60}, "`frac_bits`"),
    ("momentum_exact_forward", {"frac_bits": 201}, "`frac_bits`"),
    ("momentum_exact_inverse", {"N": 0}, "`N`"),
    ("momentum_exact_roundtrip", {"N": 10 ** 7}, "`N`"),
    ("heaviside_hitting_time", {"near": 0.0}, "`near`"),
    ("heaviside_hitting_time", {"near": 0.3, "ratio": 2.0}, "`ratio`"),
    ("heaviside_hitting_time", {"ratio": 0.5}, "`ratio`"),
    ("heaviside_loss", {"pieces": 0}, "`pieces`"),
    ("heaviside_loss", {"m": 10 ** 9}, "`m`"),
])
def test_bad_parameters_are_refused_by_name(name, params, match):
    with pytest.raises(OracleInputError, match=match):
        oracle.cases_at(oracle.kernel(name), params)


def test_the_quadrature_accuracy_is_the_reference_s():
    assert two_timescale.QUAD_RTOL == 1e-12


def test_the_boundary_layer_of_a_near_tie():
    """At near = 0.2, ratio = 1 the distances 0.5 - 0.3 and 0.7 - 0.5 differ by one rounding: c = 6.9e-18, and the
    integrand drops from 4 to 1 on s < c^(1/3) = 1.9e-6. The independent quadrature (panels graded from c^(1/3))
    agrees with 40-digit mpmath, tau = 0.0999994352..."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    near, far = sorted((0.5 - 0.3, 0.7 - 0.5))
    c = mp.mpf(far ** 3 - near ** 3)  # as float code computes it
    near = mp.mpf(near)
    g = lambda s: ((s + mp.cbrt(s ** 3 + c)) / mp.cbrt(s ** 3 + c)) ** 2  # noqa: E731
    exact = float(mp.quad(g, [0, mp.cbrt(c), 10 * mp.cbrt(c), near]) * 2 / 16)
    assert planted.numpy_hitting_time(0.3, 0.7, 0.5, -4.0)[0] == pytest.approx(exact, rel=1e-13)
    assert two_timescale._integral(float(near), float(c)) * 2 / 16 == pytest.approx(exact, rel=1e-13)


def test_the_reference_resolves_the_boundary_layer():
    """theory.two_timescale.heaviside_hitting_time used to integrate over [0, d_near] without a break at c^(1/3),
    and SciPy's quad missed the boundary layer (relative error 5.6e-6); it now breaks the interval there."""
    from theory.two_timescale import heaviside_hitting_time

    assert heaviside_hitting_time(0.3, 0.7, 0.5, -4.0)[0] == pytest.approx(0.0999994352038355, rel=1e-11)
