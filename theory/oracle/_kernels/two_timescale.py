"""Oracle kernels: the Heaviside two-timescale limit (theory.two_timescale; Marion's thesis, chapter 6, Section
6.4.2): the hitting time of one jump under the dynamics (6.7) and the reduced loss whose closed form is (6.6)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _tag, _validated

#: the relative accuracy of the reference's adaptive quadrature (theory.two_timescale.heaviside_hitting_time)
QUAD_RTOL = 1e-12
#: the jump position of the generated hitting-time cases
_V = 0.5


def _hit_case(name, u_left, u_right, v, jump, **params) -> Case:
    return Case(name, {**params, "u_left": u_left, "u_right": u_right, "v": v, "jump": jump},
                {"u_left": float(u_left), "u_right": float(u_right), "v": float(v), "jump": float(jump)})


def _hit_rows(near: float, ratio: float, jump: float) -> list[Case]:
    """Two cases at v = 1/2: the left neuron at distance ``near`` and the right one at ``near * ratio`` (named
    ``near{near}_ratio{ratio}_jump{jump}``), and the mirror image (``..._right_nearer``; for ratio = 1 the
    same pair, left out)."""
    far = near * ratio
    tag = f"near{_tag(near)}_ratio{_tag(ratio)}_jump{_tag(jump)}"
    law = "v = 1/2, d_near = near, d_far = near * ratio"
    cases = [_hit_case(tag, _V - near, _V + far, _V, jump, near=near, ratio=ratio, law=law)]
    if ratio != 1.0:
        cases.append(_hit_case(tag + "_right_nearer", _V - far, _V + near, _V, jump, near=near, ratio=ratio, law=law))
    return cases


def _hit_cases() -> list[Case]:
    cases = _hit_rows(0.1, 2.0, 1.0) + _hit_rows(0.2, 1.5, -3.0) + _hit_rows(0.25, 1.0, 2.0)
    cases += _hit_rows(0.3, 1.0 + 1e-6, 1.0) + _hit_rows(0.3, 1.0 + 1e-12, -1.0) + _hit_rows(1e-3, 400.0, 0.5)
    # a neuron within 1e-12 of its jump; float32 numbers (v = 2^-17, one float32 spacing away), so that float32 mode
    # keeps the neuron strictly on its side
    v = 2.0 ** -17
    cases.append(_hit_case("left_within_1e-12_of_v", v - 2.0 ** -41, 0.25, v, 1.0, law="v = 2^-17, u_left = v - 2^-41"))
    cases.append(_hit_case("right_within_1e-12_of_v", 0.0, v + 2.0 ** -40, v, -2.0,
                           law="v = 2^-17, u_right = v + 2^-40, u_left = 0"))
    cases.append(_hit_case("whole_interval_v0.3", 0.0, 1.0, 0.3, 1.0, law="u_left = 0, u_right = 1"))
    cases.append(_hit_case("large_jump_1e100", 0.2, 0.9, 0.5, 1e100, law="tau* about 1e-201"))
    cases.append(_hit_case("small_jump_1e-100", 0.4, 0.55, 0.5, -1e-100, law="tau* about 1e198"))
    return cases


def _hit_generate(near: float, ratio: float, jump: float) -> list[Case]:
    if _V - near * ratio < 0.0:
        raise ValueError(f"`ratio` of the oracle's heaviside_hitting_time cases must keep the far neuron inside "
                         f"[0, 1]: near * ratio <= 1/2; got near = {near:g}, ratio = {ratio:g}.")
    return _validated("heaviside_hitting_time", _hit_rows(near, ratio, jump))


def _hit_ref(u_left, u_right, v, jump):
    from theory.two_timescale import heaviside_hitting_time

    tau, other = heaviside_hitting_time(u_left, u_right, v, jump)
    return (np.asarray(tau), np.asarray(other))


def _integral(near: float, c: float) -> float:
    """int_0^near (s + beta)^2 / beta^2 ds, beta = (s^3 + c)^(1/3) (c = 0: 4 near)."""
    from scipy.integrate import quad

    if c <= 0.0:
        return 4.0 * near

    def g(s):
        beta = np.cbrt(s ** 3 + c)
        return (s + beta) ** 2 / beta ** 2

    # the integrand changes on the scale c^(1/3) near 0 (a boundary layer when c^(1/3) << near): break there
    points = [p for p in np.cbrt(c) * 10.0 ** np.arange(0, 8) if p < near]
    return float(quad(g, 0.0, near, epsabs=0.0, epsrel=QUAD_RTOL, limit=200, points=points or None)[0])


def _hit_tol(inputs, ref, eps):
    u_left, u_right, v, jump = (float(inputs[k]) for k in ("u_left", "u_right", "v", "jump"))
    dl, dr = v - u_left, u_right - v
    near, far = min(dl, dr), max(dl, dr)
    c = max(far ** 3 - near ** 3, 0.0)
    dc = 8.0 * eps * (far ** 3 + near ** 3)  # the cubes and their difference, from distances rounded once each
    # the integral decreases in c: its change over [c - dc, c + dc], plus the change 4 eps near of its upper limit
    spread = _integral(near, max(c - dc, 0.0)) - _integral(near, c + dc) + 4.0 * eps * near
    factor = 2.0 / jump ** 2 if abs(jump) > 1e-150 else math.inf
    with np.errstate(over="ignore"):
        tau = float(ref[0])
        t_tau = tau * (2.0 * QUAD_RTOL + 16.0 * eps) + (factor * spread if tau > 0 else 0.0)
    t_other = 2.0 * eps * abs(float(ref[1])) + float(np.cbrt(c + dc) - np.cbrt(max(c - dc, 0.0))) + 2.0 * eps * near
    return (t_tau if math.isfinite(t_tau) else tau * (2.0 * QUAD_RTOL + 16.0 * eps), t_other)


register(Kernel(
    name="heaviside_hitting_time",
    module="theory.two_timescale",
    signature="fn(u_left, u_right, v, jump) -> (tau, other)   (tau* = 2/jump^2 int_0^{d_near} (s + beta)^2/beta^2 ds, "
              "beta = (s^3 + d_far^3 - d_near^3)^(1/3); other = v -+ (d_far^3 - d_near^3)^(1/3))",
    make_cases=_hit_cases,
    reference=_hit_ref,
    tolerance=_hit_tol,
    rule="|tau - tau_ref| <= (2e-12 + 16 eps) tau_ref + 2/jump^2 (I(c - dc) - I(c + dc) + 4 eps d_near); "
         "|other - other_ref| <= 2 eps |other_ref| + (c + dc)^(1/3) - (c - dc)^(1/3) + 2 eps d_near, with "
         "I(c) = int_0^{d_near} (s + beta)^2/beta^2 ds, c = d_far^3 - d_near^3, dc = 8 eps (d_far^3 + d_near^3)",
    why="the integrand lies in [1, 4], so the quadrature (the reference's SciPy quad to 1e-12 relative: an "
        "implementation must reach relative 1e-12 of the integral too) is well conditioned, except through c: the "
        "difference of two cubes computed from rounded distances carries an absolute error dc of a few eps "
        "d_far^3, and near a tie (d_far -> d_near, c -> 0) I(c) ~ 4 d_near - K c^(1/3) and the stopping distance "
        "c^(1/3) are steep in c: their change over [c - dc, c + dc], computed per case, is the condition term "
        "(relative eps (d_far / d_near - 1)^(-2/3) for a near-tie)",
    arguments=(Argument("u_left", "scalar", "float", "the flanking neuron left of the jump, in [0, v)"),
               Argument("u_right", "scalar", "float", "the flanking neuron right of the jump, in (v, 1]"),
               Argument("v", "scalar", "float", "the jump position v_i, in (0, 1)"),
               Argument("jump", "scalar", "float", "the jump height f*_i - f*_(i-1), non-zero (either sign)")),
    returns=(Argument("tau", "scalar", "float64", "the hitting time tau* (in the slow time of (6.7))"),
             Argument("other", "scalar", "float64", "the position of the other neuron at tau*")),
    conventions=(
        Convention("the time scale of (6.7)",
                   "du^L/dtau = 1/2 (u^R - v)^2/(u^R - u^L)^2 jump^2 (the 1/2 of the loss (6.6) kept), so tau* = "
                   "2/jump^2 times the integral",
                   "the dynamics without the 1/2 (the gradient flow of the loss without its 1/2), or in the fast time "
                   "t = tau / eta",
                   "without the 1/2 return 2 tau (tau* is halved there); in the fast time divide by eta"),
        Convention("which neuron hits",
                   "the nearer one (d_near = min(v - u_left, u_right - v)); a tie: both at once, other = v",
                   "always the left (or right) neuron",
                   "none: the order is fixed by the distances; cases with the right neuron nearer are named "
                   "*_right_nearer"),
        Convention("the jump's sign",
                   "only jump^2 enters: a jump of either sign gives the same tau*",
                   "a signed jump f*_(i-1) - f*_i (the other difference)",
                   "either sign may be passed as given")),
    parameters=(Parameter("near", Real(0.0, 0.5, closed="right"), 0.1, "the distance d_near of the nearer neuron "
                          "(v = 1/2; built-in 1e-3 to 0.3, and 2^-41 at v = 2^-17)"),
                Parameter("ratio", Real(1.0, math.inf, closed="left"), 2.0, "d_far / d_near (built-in 1 to 400, "
                          "1 + 1e-6, 1 + 1e-12); near * ratio <= 1/2"),
                Parameter("jump", Real(-math.inf, math.inf, closed="neither"), 1.0, "the jump height, non-zero "
                          "(built-in -3 to 2, 1e100, -1e-100)")),
    generate=_hit_generate,
))


#: the seeds of the built-in random loss cases at their (pieces, m); any other pair uses _LOSS_OTHER_SEED
_LOSS_SEEDS = {(1, 3): 601, (3, 6): 602, (6, 12): 603, (50, 100): 604, (200, 50): 605}
_LOSS_OTHER_SEED = 609


def _target_of(r, pieces: int, scale: float):
    """Jumps spread over (0, 1) (sorted uniform draws, at least 1e-3 apart) and values in [-scale, scale] with
    every jump non-zero."""
    if pieces == 1:
        return np.zeros(0), np.array([scale * (2.0 * r.random() - 1.0) or scale])
    while True:
        v = np.sort(r.uniform(0.02, 0.98, pieces - 1))
        if np.all(np.diff(v) > 1e-3 / pieces):
            break
    f = scale * (2.0 * r.random(pieces) - 1.0)
    f[np.diff(f, prepend=np.nan) == 0.0] += scale * 0.5
    return v, f


def _loss_row(pieces: int, m: int, scale: float) -> Case:
    """``pieces{pieces}_m{m}_scale{scale}``: m uniform positions on (0, 1) and a random target of ``pieces``
    pieces with values of size ``scale``, seeded by (pieces, m)."""
    seed = _LOSS_SEEDS.get((pieces, m), _LOSS_OTHER_SEED)
    r = _rng(seed)
    v, f = _target_of(r, pieces, scale)
    u = r.uniform(0.0, 1.0, m)
    return Case(f"pieces{pieces}_m{m}_scale{_tag(scale)}",
                {"seed": seed, "pieces": pieces, "m": m, "scale": scale,
                 "law": "u ~ U(0, 1), v sorted U(0.02, 0.98), f ~ U(-scale, scale)"},
                {"u": u, "v": v, "f": f})


def _two_per_piece(v, f, r, per=2):
    """Exactly ``per`` positions strictly inside each piece (the setting of (6.6))."""
    edges = np.concatenate(([0.0], v, [1.0]))
    return np.concatenate([np.sort(r.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo), per))
                           for lo, hi in zip(edges[:-1], edges[1:])])


def _loss_cases() -> list[Case]:
    cases = [_loss_row(p, m, s) for (p, m) in _LOSS_SEEDS for s in (1.0,)]
    cases.append(_loss_row(3, 6, 1e150))
    cases.append(_loss_row(3, 6, 1e-150))

    def add(name, u, v, f, **params):
        cases.append(Case(name, params, {"u": np.asarray(u, dtype=np.float64), "v": np.asarray(v, dtype=np.float64),
                                         "f": np.asarray(f, dtype=np.float64)}))

    from theory.two_timescale import THESIS_TARGET

    tv, tf = (np.asarray(a, dtype=np.float64) for a in THESIS_TARGET)
    r = _rng(606)
    add("thesis_target_two_per_piece", _two_per_piece(tv, tf, r), tv, tf, seed=606,
        law="App. 6.C's target, exactly two neurons inside each piece: (6.6) holds")
    add("thesis_target_one_per_piece", _two_per_piece(tv, tf, r, per=1), tv, tf, seed=606,
        law="one neuron per piece: (6.6) does not hold")
    v20, f20 = _target_of(_rng(607), 20, 1.0)
    add("pieces20_two_per_piece", _two_per_piece(v20, f20, _rng(608)), v20, f20, seed=607,
        law="20 random pieces, two neurons inside each")
    add("no_neurons", np.zeros(0), tv, tf, law="m = 0: one cell, the variance of f* over [0, 1]")
    add("constant_target", [0.3, 0.7], np.zeros(0), [2.5], law="one piece: loss 0")
    add("neurons_on_the_jumps", tv.copy(), tv, tf, law="u = v: every cell inside a piece, loss 0")
    add("outside_and_duplicated", [-1.0, 0.2, 0.2, 0.5, 0.5, 0.7, 3.0], tv, tf,
        law="positions outside [0, 1] (clipped) and duplicated")
    add("within_1e-12_of_the_jumps", np.concatenate([tv - 1e-12, tv + 1e-12]), tv, tf,
        law="two neurons 1e-12 either side of every jump: loss about 1e-12")
    add("single_jump_of_each_sign", [0.1, 0.45, 0.7, 0.9], [0.3, 0.6], [1.0, -1.0, 1.0],
        law="two jumps of opposite signs")
    return cases


def _loss_generate(pieces: int, m: int, scale: float) -> list[Case]:
    _guard("heaviside_loss", "m", m, nbytes=8.0 * 4 * (m + pieces), ops=20.0 * (m + 2) * (pieces + 1),
           hint=f"The reference integrates the {pieces} pieces over each of the m + 1 = {m + 1} cells.")
    return _validated("heaviside_loss", [_loss_row(pieces, m, scale)])


def _loss_ref(u, v, f):
    from theory.two_timescale import heaviside_loss

    return (np.asarray(heaviside_loss(u, v, f)),)


def _loss_tol(inputs, ref, eps):
    u, v, f = (np.asarray(inputs[k], dtype=np.float64) for k in ("u", "v", "f"))
    cuts = np.unique(np.concatenate(([0.0], np.clip(u, 0.0, 1.0), [1.0])))
    lo, hi = cuts[:-1], cuts[1:]
    first = np.searchsorted(v, lo, side="right")  # the pieces first..last meet the cell (lo, hi)
    last = np.searchsorted(v, hi, side="left")
    f2 = f * f
    top = np.array([float(np.max(f2[a:b + 1])) for a, b in zip(first, last)])
    per_cell = float(np.sum((last - first + 4.0) * (hi - lo) * top))
    return (2.0 * eps * per_cell + 2.0 * (cuts.size + 1) * eps * float(ref[0]),)


register(Kernel(
    name="heaviside_loss",
    module="theory.two_timescale",
    signature="fn(u, v, f) -> loss   (1/2 sum over the cells C of [0, 1] cut at u of int_C f*^2 - (int_C f*)^2 / |C|; "
              "f* = f[i] on (v[i-1], v[i]))",
    make_cases=_loss_cases,
    reference=_loss_ref,
    tolerance=_loss_tol,
    rule="|loss - loss_ref| <= 2 eps sum_C (k_C + 3) |C| max_C f*^2 + 2 (m + 2) eps loss_ref, over the cells C "
         "of [0, 1] cut at the clipped positions, k_C the pieces of f* that C meets",
    why="each cell's term |C| Var_C(f*) is a difference int f*^2 - (int f*)^2/|C| of sums over the at most n pieces "
        "it meets, each of size at most |C| max_C f*^2: their roundings are a few eps |C| max_C f*^2 per piece "
        "met (the cells' widths add up to 1); summing the m + 1 non-negative cell terms adds m + 1 roundings of "
        "the loss. The cancellation is the point: a cell inside one piece contributes 0, up to this rounding, so "
        "a tiny loss (neurons 1e-12 from the jumps) is judged on the scale of its own cells",
    arguments=(Argument("u", "(m,)", "float64", "neuron positions, any reals (clipped to [0, 1]; duplicates allowed; "
                        "m = 0 allowed)"),
               Argument("v", "(n-1,)", "float64", "the interior jumps of f*, increasing inside (0, 1)"),
               Argument("f", "(n,)", "float64", "the values of f* on its n pieces")),
    returns=(Argument("loss", "scalar", "float64", "the reduced loss min_a L_0(a, u), with its 1/2"),),
    conventions=(
        Convention("the loss",
                   "the reduced loss with its 1/2, for any number of neurons per piece; (6.6), "
                   "1/2 sum_i (v_i - u^L_i)(u^R_i - v_i)/(u^R_i - u^L_i) jump_i^2, only when every piece holds two "
                   "neurons",
                   "(6.6) used everywhere; the loss without the 1/2; the mean squared error of a fitted network",
                   "without the 1/2 divide by 2; (6.6) agrees only where no cell between consecutive neurons "
                   "holds two jumps (--case '*_per_piece')"),
        Convention("positions",
                   "clipped to [0, 1]; duplicates cut once; a position on a jump cuts there",
                   "positions required inside (0, 1) and distinct",
                   "clip and merge before the cells are formed: np.unique(np.clip(u, 0, 1))")),
    parameters=(Parameter("pieces", Int(low=1), 3, "the pieces n of the random target (built-in: 1, 3, 6, 50, 200)"),
                Parameter("m", Int(low=0), 6, "the neurons, uniform on (0, 1) (built-in: 3 to 100)"),
                Parameter("scale", Real(0.0, 1e150, closed="right"), 1.0, "the size of f*'s values (built-in: 1, "
                          "1e-150, 1e150)")),
    generate=_loss_generate,
))
