"""Oracle kernels: the exactly reversible Momentum ResNet in fixed-point arithmetic (theory.momentum.forward_exact
and inverse_exact; Sander's thesis, chapter 4, Sec. 4.3.2 and App. 4.C): the forward pass, its inverse and the
round trip, all integer outputs compared exactly (tolerance 0)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Int
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _validated

#: the buffer travels as little-endian base-2^LIMB_BITS digits (each exact in int64 and in float64)
LIMB_BITS = 32
#: theta's entries are multiples of 2^-THETA_BITS in the cases of forward and inverse: with positions of at most
#: EXACT_BITS - THETA_BITS - log2(d) bits on the grid, f = theta_n x is exact in float64 in any order of summation
THETA_BITS = 12
EXACT_BITS = 52
#: the grid of the built-in cases
_FRAC_BITS = 30
#: (num, den, N) of the built-in cases with their seeds; any other triple uses _OTHER_SEED
_SEEDS = {(1, 2, 10): 701, (9, 10, 100): 702, (99, 100, 1000): 703, (1, 1, 10): 704, (1, 10, 40): 705,
          (99, 100, 5000): 706, (3, 4, 1): 707}
_OTHER_SEED = 709
_D = 3


def limbs_of(buffer, limbs: int) -> np.ndarray:
    """Non-negative Python ints as an int64 array of ``limbs`` base-2^32 digits, least significant first (last
    axis)."""
    flat = [int(b) for b in np.asarray(buffer, dtype=object).ravel()]
    mask = (1 << LIMB_BITS) - 1
    out = np.array([[(b >> (LIMB_BITS * k)) & mask for k in range(limbs)] for b in flat], dtype=np.int64)
    return out.reshape(np.shape(buffer) + (limbs,))


def int_of(digits) -> list:
    """The Python ints of an array of base-2^32 digits (last axis, least significant first)."""
    a = np.asarray(digits)
    return [sum(int(t) << (LIMB_BITS * k) for k, t in enumerate(row)) for row in a.reshape(-1, a.shape[-1])]


def _limbs_needed(N: int, num: int, den: int) -> int:
    """Digits that hold any buffer after N layers: buf' <= (buf + 1) den / num, so buf_N < (den/num)^N den/(den-num)
    + 1: N log2(den/num) + log2(den) + 2 bits (den = num: the buffer stays 0)."""
    bits = 1 if num == den else N * (math.log2(den) - math.log2(num)) + math.log2(den) + 2
    return max(1, math.ceil(bits / LIMB_BITS))


def _row(num: int, den: int, N: int, d: int = _D, frac_bits: int = _FRAC_BITS):
    """(name, params, inputs): theta_n ~ N(0, 4/(d N^2)) rounded to multiples of 2^-12, x0 ~ N(0, 1), v0 ~ N(0, 1)
    (0 for N >= 1000), seeded by (num, den, N); named ``gamma{num}_{den}_N{N}``, suffixed ``_d{d}``, ``_fb{fb}``
    off the built-in width and grid."""
    seed = _SEEDS.get((num, den, N), _OTHER_SEED)
    r = _rng(seed)
    q = 2.0 ** THETA_BITS
    theta = np.round(q * 2.0 * r.standard_normal((N, d, d)) / (np.sqrt(d) * N)) / q
    x0, v0 = r.standard_normal(d), r.standard_normal(d)
    if N >= 1000:
        v0 = np.zeros(d)
    name = f"gamma{num}_{den}_N{N}" + ("" if d == _D else f"_d{d}") + ("" if frac_bits == _FRAC_BITS else
                                                                      f"_fb{frac_bits}")
    return (name, {"seed": seed, "N": N, "d": d, "num": num, "den": den, "frac_bits": frac_bits,
                   "law": "theta ~ N(0, 4/(d N^2)) on multiples of 2^-12, x0 ~ N(0, 1), "
                          + ("v0 = 0" if N >= 1000 else "v0 ~ N(0, 1)")},
            {"x0": x0, "v0": v0, "theta": theta, "num": num, "den": den, "frac_bits": frac_bits})


def _exact_enough(name, inputs):
    """Refuse a case whose positions leave the bits where theta_n x is exact in float64 (the float trajectory,
    with a factor 2 of margin)."""
    from theory.momentum import forward

    d = inputs["theta"].shape[-1]
    xs, vs = forward(inputs["x0"], inputs["v0"], inputs["theta"], "linear", inputs["num"] / inputs["den"])
    top = 2.0 * max(float(np.max(np.abs(xs))), float(np.max(np.abs(vs))), 1.0)
    bits = math.log2(top) + inputs["frac_bits"] + THETA_BITS + math.ceil(math.log2(d)) if d > 1 else \
        math.log2(top) + inputs["frac_bits"] + THETA_BITS
    if bits > EXACT_BITS:
        raise ValueError(f"`frac_bits` of the oracle's exact momentum cases ({name}) must keep the positions below "
                         f"2^{EXACT_BITS - THETA_BITS} / d on the grid (theta_n x exact in float64): max |x| = "
                         f"{top / 2:.3g} needs frac_bits <= {inputs['frac_bits'] - math.ceil(bits - EXACT_BITS)}.")


def _forward_of(rows) -> list[Case]:
    cases = []
    for name, params, inputs in rows:
        _exact_enough(name, inputs)
        limbs = _limbs_needed(inputs["theta"].shape[0], inputs["num"], inputs["den"])
        cases.append(Case(name, {**params, "limbs": limbs}, {**inputs, "limbs": limbs}))
    return cases


def _rows():
    rows = [_row(num, den, N) for (num, den, N) in _SEEDS]
    rows.append(_row(9, 10, 10, d=1))
    rows.append(_row(1, 2, 10, frac_bits=1))
    rows.append(_row(1, 2, 10, d=1, frac_bits=34))
    return rows


def _sized(kernel, N, d, num, den, frac_bits):
    """The memory and work of a case at the user's parameters, refused naming ``N`` above the limits. The work is
    the oracle's own estimate of the dominant term, about 20 operations per bit of buffer, per coordinate and
    layer, forward and inverse (the buffer holds about N log2(den/num) bits at the end, half of it on average);
    the package's exact functions check their own cost model again when the reference runs."""
    bits = N * (math.log2(den) - math.log2(num)) + frac_bits
    _guard(kernel, "N", N, nbytes=8.0 * N * d * d + d * bits / 8.0, ops=2.0 * 20.0 * N * d * (0.5 * bits + 64),
           hint=f"Python-integer arithmetic over N = {N} layers with buffers of about {bits:.3g} bits.")


def _generate(kernel, cases_of):
    def generate(N: int, d: int, num: int, den: int, frac_bits: int) -> list[Case]:
        if num > den:
            raise ValueError(f"`num` of the oracle's {kernel} cases must be <= `den` (gamma = num / den in (0, 1]); "
                             f"got {num} / {den}.")
        _sized(kernel, N, d, num, den, frac_bits)
        return _validated(kernel, cases_of([_row(num, den, N, d, frac_bits)]))
    return generate


def _forward_ref(x0, v0, theta, num, den, frac_bits, limbs):
    from theory.momentum import forward_exact

    x, v, buf = forward_exact(x0, v0, theta, "linear", int(num), int(den), int(frac_bits))
    return (np.array(x[0], dtype=np.int64), np.array(v[0], dtype=np.int64), limbs_of(buf[0], int(limbs)))


def _zero_tol(inputs, ref, eps):
    return tuple(0.0 for _ in ref)


_GRID = Convention(
    "the integer representation",
    "positions and velocities are integers in units of 2^-frac_bits: X = round(x 2^frac_bits), to nearest, ties to "
    "even (theory.momentum.to_fixed), returned as int64 (every case keeps them below 2^53, so float64 holds them "
    "exactly); the buffer of dropped digits is a non-negative integer per coordinate of any size, returned as "
    "`limbs` little-endian base-2^32 digits (int64 values in [0, 2^32))",
    "a float grid (x stored as the float X 2^-frac_bits); a buffer as one int64 (it overflows past 63 bits: the "
    "gamma99_100_N5000 and gamma1_10_N40 cases); big-endian digits",
    "from float code return np.round(x * 2**frac_bits).astype(np.int64); a Python-int buffer b as "
    "[(b >> (32 k)) & (2**32 - 1) for k in range(limbs)]")
_MULTIPLY = Convention(
    "the exact multiplication by gamma = num / den (App. 4.C)",
    "per coordinate: buf <- buf den + (v mod den); v <- (v div den) num + (buf mod num); buf <- buf div num (floor "
    "division and non-negative modulus, Python's // and %), before the residual is added (Maclaurin, Duvenaud and "
    "Adams, 2015)",
    "C's truncating / and % (negative remainders for negative v); the order buf mod num taken before buf den",
    "use floor division: in C, q = v / den - (v % den < 0), r = v - q den; none for another order (another map)")
_RESIDUAL_GRID = Convention(
    "the residual on the grid",
    "(4.2) v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}, the residual added as "
    "round((c f) 2^frac_bits) with c = 1.0 - num/den in float64 and f = theta_n x_n computed in float64 from "
    "x_n = X_n 2^-frac_bits; theta's entries are multiples of 2^-12 and the positions small enough that theta_n x_n "
    "is exact in float64 in any summation order",
    "the residual scaled by the exact rational (den - num)/den; a residual rounded toward zero; float32 arithmetic "
    "for f",
    "compute c = 1.0 - num / den and f in float64 (in float32 mode too: the inputs are then float32 values, the "
    "integer map is the same), multiply, scale by 2**frac_bits, round half to even")

_NUM = Argument("num", "scalar", "int", "gamma = num / den, 1 <= num <= den")
_DEN = Argument("den", "scalar", "int", "the denominator of gamma")
_FB = Argument("frac_bits", "scalar", "int", "bits after the binary point of the grid, in [1, 200]")
_THETA = Argument("theta", "(N, d, d)", "float64", "theta[n] = theta_n, the weight of the linear residual "
                  "f(x, theta_n) = theta_n x (multiples of 2^-12)")
_PARAMS = (Parameter("N", Int(low=1), 10, "the depth (built-in: 1, 10, 40, 100, 1000, 5000)"),
           Parameter("d", Int(low=1), _D, "the width (built-in: 1, 3)"),
           Parameter("num", Int(low=1), 1, "gamma = num / den (built-in: 1/2, 3/4, 9/10, 99/100, 1/10, 1/1)"),
           Parameter("den", Int(low=1), 2, "the denominator of gamma, >= num"),
           Parameter("frac_bits", Int(low=1, high=200), _FRAC_BITS, "the grid (built-in 30; 1 and 34); the "
                     "positions must stay below 2^40 / d units of it"))

_WHY = ("exactness is the point of App. 4.C: every operation is on integers, and the one float step, the residual "
        "c f rounded to the grid, is an exact product theta_n x_n followed by one IEEE rounding of c f in float64 "
        "and a rounding to nearest, which every IEEE float64 implementation reproduces; so the integers are "
        "determined and the tolerance is 0 (a tolerance of one unit would hide a wrong multiplication, which "
        "changes v by units)")

register(Kernel(
    name="momentum_exact_forward",
    module="theory.momentum",
    signature="fn(x0, v0, theta, num, den, frac_bits, limbs) -> (xN, vN, buffer)   (integers in units of "
              "2^-frac_bits; buffer: (d, limbs) base-2^32 digits, least significant first)",
    make_cases=lambda: _forward_of(_rows()),
    reference=_forward_ref,
    tolerance=_zero_tol,
    rule="xN, vN and buffer equal to the reference's, exactly (tolerance 0)",
    why=_WHY,
    arguments=(Argument("x0", "(d,)", "float64", "the input x_0 (rounded to the grid by the function)"),
               Argument("v0", "(d,)", "float64", "the initial velocity v_0 (rounded to the grid)"),
               _THETA, _NUM, _DEN, _FB,
               Argument("limbs", "scalar", "int", "the base-2^32 digits to return the buffer in: enough for "
                        "N log2(den/num) + log2(den) + 2 bits")),
    returns=(Argument("xN", "(d,)", "int64", "x_N in units of 2^-frac_bits"),
             Argument("vN", "(d,)", "int64", "v_N in units of 2^-frac_bits"),
             Argument("buffer", "(d, limbs)", "int64", "the buffer of dropped digits, base-2^32 digits, least "
                      "significant first")),
    conventions=(_GRID, _MULTIPLY, _RESIDUAL_GRID),
    parameters=_PARAMS,
    generate=_generate("momentum_exact_forward", lambda rows: _forward_of(rows)),
))


def _inverse_of(rows) -> list[Case]:
    """The inverse's cases: the forward pass's output (the inverse returns the rounded input and a zero buffer),
    and the same with the buffer's lowest digit changed by a seeded amount (any integer state has an inverse:
    the map is a bijection), named ``*_other_buffer`` where the result stays below 2^52 units."""
    from theory.momentum import forward_exact

    cases = []
    for name, params, inputs in rows:
        _exact_enough(name, inputs)
        x, v, buf = forward_exact(inputs["x0"], inputs["v0"], inputs["theta"], "linear", inputs["num"],
                                  inputs["den"], inputs["frac_bits"])
        limbs = _limbs_needed(inputs["theta"].shape[0], inputs["num"], inputs["den"])
        common = {"theta": inputs["theta"], "num": inputs["num"], "den": inputs["den"],
                  "frac_bits": inputs["frac_bits"]}
        xN, vN, digits = np.array(x[0], dtype=np.int64), np.array(v[0], dtype=np.int64), limbs_of(buf[0], limbs)
        cases.append(Case(name, {**params, "xN, vN, buffer": "momentum_exact_forward of (x0, v0)"},
                          {"xN": xN, "vN": vN, "buffer": digits, **common}))
        other = digits.copy()
        other[:, 0] = (other[:, 0] + _rng(params["seed"] + 50).integers(1, 1000, other.shape[0])) % (1 << LIMB_BITS)
        try:  # the perturbed digits enter v and grow like gamma^-N: kept where the integers stay below 2^52
            back = _inverse_ref(xN, vN, other, **common)
        except (OverflowError, ValueError, ArithmeticError):
            continue
        if max(float(np.max(np.abs(back[0]))), float(np.max(np.abs(back[1])))) >= 2.0 ** EXACT_BITS:
            continue
        cases.append(Case(name + "_other_buffer", {**params, "xN, vN": "momentum_exact_forward of (x0, v0)",
                                                   "buffer": "the forward's, lowest digit + U{1..999}"},
                          {"xN": xN, "vN": vN, "buffer": other, **common}))
    return cases


def _inverse_ref(xN, vN, buffer, theta, num, den, frac_bits):
    from theory.momentum import inverse_exact

    limbs = np.asarray(buffer).shape[-1]
    x, v, buf = inverse_exact(np.asarray(xN, dtype=np.int64)[None], np.asarray(vN, dtype=np.int64)[None],
                              np.array([int_of(buffer)], dtype=object), theta, "linear", int(num), int(den),
                              int(frac_bits))
    return (np.array(x[0], dtype=np.int64), np.array(v[0], dtype=np.int64), limbs_of(buf[0], limbs))


register(Kernel(
    name="momentum_exact_inverse",
    module="theory.momentum",
    signature="fn(xN, vN, buffer, theta, num, den, frac_bits) -> (x0, v0, buffer0)   (the inverse (4.3) with the "
              "exact division by gamma; integers as in momentum_exact_forward)",
    make_cases=lambda: _inverse_of(_rows()),
    reference=_inverse_ref,
    tolerance=_zero_tol,
    rule="x0, v0 and buffer0 equal to the reference's, exactly (tolerance 0)",
    why=_WHY,
    arguments=(Argument("xN", "(d,)", "int64", "x_N in units of 2^-frac_bits"),
               Argument("vN", "(d,)", "int64", "v_N in units of 2^-frac_bits"),
               Argument("buffer", "(d, L)", "int64", "the buffer as L base-2^32 digits, least significant first"),
               _THETA, _NUM, _DEN, _FB),
    returns=(Argument("x0", "(d,)", "int64", "x_0 in units of 2^-frac_bits"),
             Argument("v0", "(d,)", "int64", "v_0 in units of 2^-frac_bits"),
             Argument("buffer0", "(d, L)", "int64", "the buffer left (0 after a forward pass), L digits as given")),
    conventions=(_GRID, Convention(
        "the exact division by gamma = num / den (App. 4.C)",
        "layer n = N-1, ..., 0: x <- x - v; v <- v - residual(x, theta_n); then per coordinate buf <- buf num + "
        "(v mod num); v <- (v div num) den + (buf mod den); buf <- buf div den (floor division, non-negative "
        "modulus)",
        "division in floating point (momentum_inverse: ill-conditioned like gamma^-N, and not exact)",
        "none: without the buffer the dropped digits are lost"), _RESIDUAL_GRID),
    parameters=_PARAMS,
    generate=_generate("momentum_exact_inverse", _inverse_of),
))


def _trip_of(rows) -> list[Case]:
    """The round trip's cases: the forward rows with the linear residual and, the same weights unrounded, with
    tanh (``*_tanh``): the round trip is exact for any residual the two passes compute alike."""
    cases = []
    for name, params, inputs in rows:
        base = {"x0": inputs["x0"], "v0": inputs["v0"], "num": inputs["num"], "den": inputs["den"],
                "frac_bits": inputs["frac_bits"]}
        cases.append(Case(name, {**params, "residual": "linear"}, {**base, "theta": inputs["theta"],
                                                                   "residual": "linear"}))
        cases.append(Case(name + "_tanh", {**params, "residual": "tanh"}, {**base, "theta": inputs["theta"],
                                                                           "residual": "tanh"}))
    return cases


def _trip_rows():
    rows = _rows()
    rows.append(_row(1, 2, 10, frac_bits=52))
    return rows


def _trip_ref(x0, v0, theta, residual, num, den, frac_bits):
    from theory.momentum import forward_exact, inverse_exact

    x, v, buf = forward_exact(x0, v0, theta, residual, int(num), int(den), int(frac_bits))
    x, v, buf = inverse_exact(x, v, buf, theta, residual, int(num), int(den), int(frac_bits))
    back = np.array([float(b) for b in buf[0]])
    return (np.array([float(t) for t in x[0]]), np.array([float(t) for t in v[0]]), back)


register(Kernel(
    name="momentum_exact_roundtrip",
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, num, den, frac_bits) -> (x0_fixed, v0_fixed, buffer0)   "
              "(inverse_exact(forward_exact(x0, v0)): the rounded input, bit for bit, and a zero buffer)",
    make_cases=lambda: _trip_of(_trip_rows()),
    reference=_trip_ref,
    tolerance=_zero_tol,
    rule="x0_fixed = round(x0 2^frac_bits), v0_fixed = round(v0 2^frac_bits) and buffer0 = 0, exactly (tolerance 0)",
    why="the inverse undoes each integer operation of the forward pass and recomputes the same residual from the "
        "same integer positions, so the round trip is the identity on the grid whatever the residual's float "
        "arithmetic: the tolerance is 0 for every residual (tanh too, whose float value may differ by an ulp "
        "between libraries)",
    arguments=(Argument("x0", "(d,)", "float64", "the input x_0"),
               Argument("v0", "(d,)", "float64", "the initial velocity v_0"),
               Argument("theta", "(N, d, d)", "float64", "the weights theta_n"),
               Argument("residual", "scalar", "str", "f(x, theta_n): 'linear' theta_n x or 'tanh' tanh(theta_n x)"),
               _NUM, _DEN, _FB),
    returns=(Argument("x0_fixed", "(d,)", "int64", "x_0 back, in units of 2^-frac_bits"),
             Argument("v0_fixed", "(d,)", "int64", "v_0 back, in units of 2^-frac_bits"),
             Argument("buffer0", "(d,)", "int64", "the buffer after the inverse (0)")),
    conventions=(_GRID, _MULTIPLY, Convention(
        "what is composed",
        "your own forward and inverse passes, the buffer handed from one to the other; the residual computed "
        "alike in both (any float arithmetic)",
        "an inverse that recomputes the residual from float positions carried separately",
        "compute the residual from the integer positions in both passes")),
    parameters=_PARAMS,
    generate=_generate("momentum_exact_roundtrip", _trip_of),
))
