r"""The explicit inequalities of chapter 6 (thesis of Marion): each on random instances and under a worst-case
search of its hypothesis set.

One :class:`BoundSpec` per inequality: the claim it records, the searched box (the statement's hypotheses in
coordinates that reach their edges: widths, separations down to the edge 2 eta of U, flanking neurons next
to their jump, values of the target at +-M), the function ``instance -> (LHS, RHS)`` (None outside the
hypotheses), the printed constant where the right-hand side is one constant times a function, and the
theorems whose proofs chain it (``step_of``). Three families:

* the lemmas of App. 6.A (Lemmas 6.10, 6.12, 6.14-6.18), one claim per inequality;
* the estimates of the proof of Prop. 6.7 (App. 6.B.3) that hold at one state u of the flow, checked at the
  sharpness eta the proposition allows (D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f, Delta(u) >= D/2): the
  velocity error (6.14), the first-phase decrease of d^L + d^R, the growth of d^R - d^L, the second phase
  (6.15) and the collision bound; and the bounds (6.19) and (6.24) of the proofs of Prop. 6.9 and Thm 6.2;
* the inequalities between constants that the proofs of Prop. 6.7, Thm 6.8 and Thm 6.2 (App. 6.B.3, 6.B.4,
  6.B.6) chain, evaluated at the theorems' own thresholds (eta = Q, Q_1, eps = Q_2 with the proofs' constants)
  over a box of targets, widths m >= (6.2), failure probabilities delta and accuracies xi.

Each spec is registered as ``"two_timescale.<name>"``; its check records :func:`bound_verdict_for`. Errata
(:class:`ErratumSpec`) search the printed and the corrected forms of a step over the same box.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from theory.claims import Verdict, bound_verdict, erratum_verdict

from .. import register
from ..config import Config, Int, Real, Seed, field
from ._instances import (build_free_positions, build_positions, build_target, free_dims, position_dims,
                         target_dims)

__all__ = ["ETA_FLOOR", "BoundSpec", "ErratumSpec", "SearchedBoundConfig", "ConstantsConfig", "ErratumResult",
           "SPECS", "ERRATA", "MEASURES", "VERDICTS", "PRESETS", "experiment_presets", "spec", "measure_spec",
           "bound_verdict_for", "measure_erratum", "erratum_verdict_for", "THM_62", "THM_68", "PROP_67", "PROP_69"]

THM_62 = "two-timescale/thm-6.2"
THM_68 = "two-timescale/thm-6.8"
PROP_67 = "two-timescale/prop-6.7"
PROP_69 = "two-timescale/prop-6.9"
ALL3 = (PROP_67, THM_68, THM_62)

_ETA = Real(0, 1, closed="right")
_POSITIVE = Real(0, closed="neither")
_TINY = 1e-300


@dataclasses.dataclass(frozen=True)
class SearchedBoundConfig(Config):
    """An explicit inequality of chapter 6 on random instances and under a worst-case search of its hypothesis
    set (the box of its :class:`BoundSpec`)."""

    trials: int = field(Int(low=1), 10, "Random instances: the App. 6.C target at sharpness `eta` where the "
                        "statement has a target of the class, the other coordinates uniform in the box.")
    eta: float = field(_ETA, 0.004, "Sharpness of the random instances (App. 6.C: 4e-3), where the box has one "
                       "(the search ranges over its own).")
    seed: int = field(Seed(), 0, "Seed of the random instances.")
    search_budget: int = field(Int(low=1), 120, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")
    rhs_scale: float = field(_POSITIVE, 1.0, "Multiplies the right-hand side (1 for the claim; a control divides "
                             "its printed constant by 4).")


@dataclasses.dataclass(frozen=True)
class ConstantsConfig(Config):
    """An inequality between the constants of a proof of chapter 6, on random points of its box (targets,
    widths, delta, xi) and under a worst-case search of it."""

    trials: int = field(Int(low=1), 20, "Random points of the box (uniform in each coordinate's scale).")
    seed: int = field(Seed(), 0, "Seed of the random points.")
    search_budget: int = field(Int(low=1), 2000, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")
    rhs_scale: float = field(_POSITIVE, 1.0, "Multiplies the right-hand side (1 for the claim; a control shrinks "
                             "it).")
    constant_scale: float = field(_POSITIVE, 1.0, "Multiplies the theorem's threshold constants (C of Thm 6.8, C_1 "
                                  "and C_2 of Thm 6.2; 1 for the claim: the proofs' 2^-19, 2^-21, 2^-36; a control "
                                  "raises them, breaking the hypothesis eta <= Q).")


@dataclasses.dataclass(frozen=True)
class BoundSpec:
    """One explicit inequality LHS <= RHS: its claim, box and ``ratio(instance, cfg) -> (LHS, RHS) or None``."""

    name: str
    claim: str
    title: str
    dims: Callable[[], list]
    ratio: Callable[[dict, object], tuple | None]
    constant: tuple | None = None
    step_of: tuple = ()
    thesis: bool = False
    budget: int = 250
    trials: int = 10
    ratio_max: float = 1.0
    constants: bool = False
    aliases: tuple = ()

    @property
    def config(self):
        return ConstantsConfig if self.constants else SearchedBoundConfig


def _random_instances(spec, cfg, dims):
    """``cfg.trials`` instances inside the hypotheses: coordinates uniform in the box (the App. 6.C target and
    ``cfg.eta`` where the spec says so), redrawn when outside."""
    from theory.rates import to_plain

    rng = np.random.default_rng(cfg.seed)
    lhs, rhs, insts = [], [], []
    for _ in range(200 * cfg.trials):
        inst = {d.name: d.value(x) for d, x in zip(dims, rng.uniform(size=len(dims)))}
        if spec.thesis:
            inst["thesis"] = True
            if "eta" in inst:
                inst["eta"] = cfg.eta
        out = spec.ratio(inst, cfg)
        if out is None:
            continue
        lhs.append(float(out[0]))
        rhs.append(float(out[1]))
        insts.append(to_plain(inst))
        if len(insts) == cfg.trials:
            break
    if not insts:
        raise ValueError(f"{spec.claim}: no random instance of the box lies inside the hypotheses "
                         f"(`eta` = {getattr(cfg, 'eta', None)!r} too large for the App. 6.C target?).")
    return lhs, rhs, insts


def measure_spec(spec: BoundSpec, cfg):
    """The bound of ``spec`` on random instances, with the worst-case search of its box attached
    (a :class:`theory.rates.BoundResult`)."""
    from theory.rates import bound_ratio
    from theory.worst_case import search_worst_case

    dims = spec.dims()
    lhs, rhs, insts = _random_instances(spec, cfg, dims)
    constant = None if spec.constant is None else (spec.constant[0], spec.constant[1] * cfg.rhs_scale)
    search = search_worst_case(lambda inst: spec.ratio(inst, cfg), dims, budget=cfg.search_budget,
                               seed=cfg.search_seed, constant=constant)
    return bound_ratio(lhs, rhs, insts).with_search(search)


def bound_verdict_for(spec: BoundSpec, result) -> Verdict:
    """A bound: the largest LHS/RHS over the random instances and over the search is <= ``spec.ratio_max``
    (1 for the inequality as printed)."""
    return bound_verdict(result, {"ratio_max": spec.ratio_max})


# ------------------------------------------------------------------------------ helpers

def _T():
    import theory.two_timescale as T

    return T


def _u_instance(inst, mode="free", min_per_piece=2):
    """(target, placement) of a U-instance, or None."""
    t = build_target(inst)
    if t is None:
        return None
    p = build_positions(t, inst, mode)
    if p is None:
        return None
    return t, p


def _sqrt1(m):
    return math.sqrt(m + 1)


# ------------------------------------------------------------------------------ Lemma 6.10

def _b_pair(inst):
    T = _T()
    t = build_target(inst)
    if t is None:
        return None
    p = build_free_positions(t, inst)
    _, b = T.gram(p.u, p.eta, t.v, t.f)
    _, b0 = T.heaviside_gram(p.u, t.v, t.f, p.eta)
    return t, p, b, b0


def _lemma610(inst, cfg):
    out = _b_pair(inst)
    if out is None:
        return None
    t, p, b, b0 = out
    return float(np.linalg.norm(b - b0)), cfg.rhs_scale * t.M * p.eta * _sqrt1(p.u.size)


def _lemma610_norm(inst, cfg):
    out = _b_pair(inst)
    if out is None:
        return None
    t, p, b, _ = out
    return float(np.linalg.norm(b)), cfg.rhs_scale * t.M * _sqrt1(p.u.size)


# ------------------------------------------------------------------------------ Lemma 6.12

def _jacobian(u, eta, v, f):
    """d a*_eta / du ((m + 1) x m) by central differences, step 1e-4 eta."""
    T = _T()
    h = 1e-4 * eta
    cols = []
    for k in range(u.size):
        e = np.zeros(u.size)
        e[k] = h
        cols.append((T.optimal_weights(u + e, eta, v, f) - T.optimal_weights(u - e, eta, v, f)) / (2 * h))
    return np.column_stack(cols)


def _lemma612(inst, cfg):
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    m = p.u.size
    a = T.optimal_weights(p.u, p.eta, t.v, t.f)
    J = _jacobian(p.u, p.eta, t.v, t.f)
    D = T.separation(p.u, p.eta)
    return float(np.linalg.norm(J, 2)), cfg.rhs_scale * 8.0 / D * (2 * (m + 1) * np.linalg.norm(a) + t.M)


# ------------------------------------------------------------------------------ Lemma 6.14

def _lemma614(inst, cfg):
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    a0 = T.heaviside_weights(p.u, t.v, t.f)
    cuts = np.concatenate(([0.0], p.u, [1.0]))
    x = np.unique(np.clip(np.concatenate([np.linspace(0, 1, 2001), (cuts[:-1] + cuts[1:]) / 2,
                                          p.u - p.eta / 4, p.u + p.eta / 4, p.u]), 0, 1))
    return float(np.abs(T.network(x, a0, p.u, p.eta)).max()), cfg.rhs_scale * t.M


# ------------------------------------------------------------------------------ Lemma 6.15

def _lemma615_weights(inst, cfg):
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    a0 = T.heaviside_weights(p.u, t.v, t.f)
    return float(np.abs(a0).max()), cfg.rhs_scale * 2 * t.M


def _direction(inst, size):
    """A unit vector: ``align`` of the all-ones direction mixed with a Gaussian one drawn from ``a_seed``."""
    g = np.random.default_rng(int(inst["a_seed"])).standard_normal(size)
    g /= np.linalg.norm(g)
    al = float(inst["align"])
    d = (1 - al) * g + al * np.ones(size) / math.sqrt(size)
    n = np.linalg.norm(d)
    return d / n if n > 0 else np.ones(size) / math.sqrt(size)


def _a_dims(r=(1e-6, 1e2)):
    from theory.worst_case import Dim

    return [Dim("r", r[0], r[1], "log"), Dim("a_seed", 0, 2**20, "int"), Dim("align", 0.0, 1.0)]


def _lemma615(inst, cfg):
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    m = p.u.size
    a0 = T.heaviside_weights(p.u, t.v, t.f)
    r = float(inst["r"]) * t.M
    a = a0 + r * _direction(inst, m + 1)
    g0 = T.gradient(a0, p.u, p.eta, t.v, t.f)[1]
    g = T.gradient(a, p.u, p.eta, t.v, t.f)[1]
    s = _sqrt1(m)
    return float(np.abs(g - g0).max()), cfg.rhs_scale * (2 * t.M * (s + 1) * r + s * r * r)


# ------------------------------------------------------------------------------ Lemma 6.16

def _lemma616(inst, cfg):
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    a = T.optimal_weights(p.u, p.eta, t.v, t.f)
    a0 = T.heaviside_weights(p.u, t.v, t.f)
    D = T.separation(p.u, p.eta)
    return float(np.linalg.norm(a - a0)), cfg.rhs_scale * 16 * t.M * _sqrt1(p.u.size) * p.eta / D


# ------------------------------------------------------------------------------ Lemma 6.17

def _free_a(inst):
    T = _T()
    t = build_target(inst)
    if t is None:
        return None
    p = build_free_positions(t, inst)
    a = float(inst["r"]) * t.M * _direction(inst, p.u.size + 1)
    ga, gu = T.gradient(a, p.u, p.eta, t.v, t.f)
    return t, p, a, ga, gu


def _lemma617(inst, cfg):
    out = _free_a(inst)
    if out is None:
        return None
    t, p, a, _, gu = out
    na = float(np.linalg.norm(a))
    return float(np.linalg.norm(gu)), cfg.rhs_scale * (_sqrt1(p.u.size) * na * na + t.M * na)


def _lemma617_grad_a(inst, cfg):
    out = _free_a(inst)
    if out is None:
        return None
    t, p, a, ga, _ = out
    s = _sqrt1(p.u.size)
    return float(np.linalg.norm(ga)), cfg.rhs_scale * s * (float(np.linalg.norm(a)) * s + t.M)


def _lemma617_loss(inst, cfg):
    """The consequence |L(a, u) - L(a', u)| <= sqrt(m+1)(max(||a||, ||a'||) sqrt(m+1) + M) ||a - a'||."""
    T = _T()
    out = _free_a(inst)
    if out is None:
        return None
    t, p, a, _, _ = out
    g = np.random.default_rng(int(inst["a_seed"]) + 1).standard_normal(a.size)
    b = a + float(inst["r2"]) * t.M * g / np.linalg.norm(g)
    s = _sqrt1(p.u.size)
    lhs = abs(T.loss(a, p.u, p.eta, t.v, t.f) - T.loss(b, p.u, p.eta, t.v, t.f))
    big = max(float(np.linalg.norm(a)), float(np.linalg.norm(b)))
    return lhs, cfg.rhs_scale * s * (big * s + t.M) * float(np.linalg.norm(a - b))


# ------------------------------------------------------------------------------ Lemma 6.18

def _lemma618(inst, cfg):
    T = _T()
    t = build_target(inst)
    if t is None or not 3 * float(inst["eta"]) <= t.dv:
        return None
    p = build_positions(t, inst, "near")
    if p is None:
        return None
    err = 2 * T.reduced_loss(p.u, p.eta, t.v, t.f)
    return float(err), cfg.rhs_scale * 6 * t.M ** 2 * p.eta * t.n


# ------------------------------------------------------------------------------ Prop. 6.7's proof, one state

#: the smallest sharpness of the searched states of Prop. 6.7's proof: below it float64 no longer resolves the
#: transition [u_j - eta/2, u_j + eta/2] of positions of order 1 (the exact quadrature of sigma_eta' loses
#: 1e-16 / eta of its digits: 2e-7 relative at 1e-10, against the proof's margins of D / 30 >= 4e-5 there)
ETA_FLOOR = 1e-10


def _prop67_state(inst, mode="free"):
    """A state of the flow in the hypotheses of the proof of Prop. 6.7: positions placed at the unit
    ``unit`` (the box's ``gap``, ``w`` in that unit), then eta = ``eta_frac`` times the largest sharpness with
    D/2 <= Delta(u), D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f, and eta >= :data:`ETA_FLOOR`. Returns
    (target, placement at eta, eta, D) or None."""
    T = _T()
    t = build_target(inst)
    if t is None:
        return None
    placed = dict(inst, eta=float(inst["unit"]))
    p = build_positions(t, placed, mode)
    if p is None:
        return None
    m = p.u.size
    sep = T.separation(p.u, float(inst["unit"]))
    eta_max = (sep * t.df / (2 ** 5.5 * _sqrt1(m) * t.M)) ** 2
    eta = min(1.0, float(inst["eta_frac"]) * eta_max)
    if eta < ETA_FLOOR:
        return None
    D = T.prop_6_7_separation(eta, m, t.M, t.df)
    if not (T.separation(p.u, eta) >= D / 2 and D <= 1):
        return None
    return t, dataclasses.replace(p, eta=eta), eta, D


def _prop67_dims(per_piece=(2, 6)):
    from theory.worst_case import Dim

    dims = position_dims(eta=None, per_piece=per_piece)
    return target_dims() + [Dim("unit", 1e-3, 2e-2, "log"), Dim("eta_frac", 1e-3, 1.0, "log")] + dims


def _reduced(u, eta, t):
    """G(u) = (grad_u L)(a*_eta(u), u) and G_0 = (grad_u L)(a*_0(u), u)."""
    T = _T()
    a = T.optimal_weights(u, eta, t.v, t.f)
    a0 = T.heaviside_weights(u, t.v, t.f)
    return T.gradient(a, u, eta, t.v, t.f)[1], T.gradient(a0, u, eta, t.v, t.f)[1]


def _eq614(inst, cfg):
    out = _prop67_state(inst)
    if out is None:
        return None
    t, p, eta, D = out
    G, G0 = _reduced(p.u, eta, t)
    return float(np.abs(G - G0).max()), cfg.rhs_scale * D * t.df ** 2 / 60


def _focus_flanks(t, p):
    i = t.focus
    return int(p.left[i]), int(p.right[i]), float(t.v[i]), float(t.f[i + 1] - t.f[i])


def _sum_decrease(inst, cfg):
    """First phase: d/dtau (d^L + d^R) = G_L - G_R <= -Delta f^2 / 5 while both flanking neurons are more than
    eta/2 from the jump; as a bound, Delta f^2 / 5 <= G_R - G_L."""
    out = _prop67_state(inst)
    if out is None:
        return None
    t, p, eta, D = out
    L, R, v, _ = _focus_flanks(t, p)
    if not (v - p.u[L] > eta / 2 and p.u[R] - v > eta / 2):
        return None
    G, _ = _reduced(p.u, eta, t)
    return t.df ** 2 / 5, cfg.rhs_scale * max(G[R] - G[L], _TINY)


def _gap_parts(inst):
    """(d_close, d_far, jump, rate of d_far - d_close, Delta g) at a first-phase state with d_far - d_close >= D."""
    out = _prop67_state(inst)
    if out is None:
        return None
    t, p, eta, D = out
    L, R, v, jump = _focus_flanks(t, p)
    dL, dR = v - p.u[L], p.u[R] - v
    if not (dL > eta / 2 and dR > eta / 2 and abs(dR - dL) >= D):
        return None
    G, _ = _reduced(p.u, eta, t)
    rate = (-G[R] - G[L]) if dR >= dL else (G[R] + G[L])
    return min(dL, dR), max(dL, dR), jump, rate, D * t.df ** 2 / 60


def _gap_increase(inst, cfg, half=0.5):
    """d/dtau (d^R - d^L) >= half ((d^R)^2 - (d^L)^2) (delta f)^2 / (d^L + d^R)^2 - 2 Delta g (the corrected
    display has half = 1/2; the printed one half = 1), as (the first term) <= rate + 2 Delta g."""
    out = _gap_parts(inst)
    if out is None:
        return None
    dc, df_, jump, rate, dg = out
    lhs = half * (df_ ** 2 - dc ** 2) * jump ** 2 / (dc + df_) ** 2
    return lhs, cfg.rhs_scale * max(rate + 2 * dg, _TINY)


def _second_phase_state(inst):
    """A state with the closer flanking neuron of the focus jump at exactly eta from it (the proof's
    u^L = v - eta, or its mirror), Delta(u) >= D/2: (t, p, eta, D, index of that neuron, d_far, sign)."""
    out = _prop67_state(inst)
    if out is None:
        return None
    t, p, eta, D = out
    L, R, v, jump = _focus_flanks(t, p)
    u = p.u.copy()
    close_left = v - u[L] <= u[R] - v
    if close_left:
        u[L], k, far = v - eta, L, u[R] - v
    else:
        u[R], k, far = v + eta, R, v - u[L]
    T = _T()
    if not T.separation(u, eta) >= D / 2:
        return None
    return t, dataclasses.replace(p, u=u), eta, D, k, far, 1.0 if close_left else -1.0, jump


def _eq615(inst, cfg):
    """(6.15): at u^L = v - eta, du^L/dtau >= Delta g (mirrored: du^R/dtau <= -Delta g)."""
    out = _second_phase_state(inst)
    if out is None:
        return None
    t, p, eta, D, k, far, sign, jump = out
    G, _ = _reduced(p.u, eta, t)
    dg = D * t.df ** 2 / 60
    return dg, cfg.rhs_scale * max(-sign * G[k], _TINY)


def _eq615_display(inst, cfg, half=0.5):
    """The display before (6.15): du^L/dtau >= half (d^R)^2 (delta f)^2 / (d^R + eta)^2 - Delta g (Lemma 6.13
    gives half = 1/2; the printed display has half = 1), as (the first term) <= du^L/dtau + Delta g."""
    out = _second_phase_state(inst)
    if out is None:
        return None
    t, p, eta, D, k, far, sign, jump = out
    G, _ = _reduced(p.u, eta, t)
    dg = D * t.df ** 2 / 60
    return half * far ** 2 * jump ** 2 / (far + eta) ** 2, cfg.rhs_scale * max(-sign * G[k] + dg, _TINY)


def _collision(inst, cfg):
    """Second phase, u^L crossed to [v, v + eta]: du^LL/dtau <= 16 eta^2 M^2 / D^2 + Delta g (u^LL: the next
    neuron on the left, now flanking v; mirrored on the right)."""
    T = _T()
    out = _prop67_state(inst)
    if out is None:
        return None
    t, p, eta, D = out
    L, R, v, _ = _focus_flanks(t, p)
    u = p.u.copy()
    s = float(inst["cross"])
    if v - u[L] <= u[R] - v:  # the closer is u^L: it crosses to v + s eta; u^LL is the neuron below it
        u[L] = v + s * eta
        order = np.argsort(u)
        below = order[np.searchsorted(u[order], v) - 1]
        k, sign = int(below), 1.0
    else:
        u[R] = v - s * eta
        order = np.argsort(u)
        above = order[np.searchsorted(u[order], v, side="right")]
        k, sign = int(above), -1.0
    if not T.separation(u, eta) >= D / 2:
        return None
    G, _ = _reduced(u, eta, t)
    dg = D * t.df ** 2 / 60
    return -sign * G[k], cfg.rhs_scale * (16 * eta ** 2 * t.M ** 2 / D ** 2 + dg)


# ------------------------------------------------------------------------------ Props 6.9 / Thm 6.2, one state

def _weights_norm(inst, cfg):
    """(6.24) / proof of Prop. 6.9: ||a*_eta(u)|| <= 3 M sqrt(m+1) when Delta(u) >= D/2, D >= 32 eta, two
    neurons per piece."""
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    a = T.optimal_weights(p.u, p.eta, t.v, t.f)
    return float(np.linalg.norm(a)), cfg.rhs_scale * 3 * t.M * _sqrt1(p.u.size)


def _eq619(inst, cfg):
    """(6.19): ||grad_u L(a, u)|| <= 2^6 M^2 (m+1)^(3/2) when ||a|| <= 6 M sqrt(m+1)."""
    T = _T()
    out = _u_instance(inst)
    if out is None:
        return None
    t, p = out
    m = p.u.size
    a = float(inst["r"]) * 6 * t.M * _sqrt1(m) * _direction(inst, m + 1)
    gu = T.gradient(a, p.u, p.eta, t.v, t.f)[1]
    return float(np.linalg.norm(gu)), cfg.rhs_scale * 2 ** 6 * t.M ** 2 * (m + 1) ** 1.5


# ------------------------------------------------------------------------------ constants of the proofs

def _theorem_dims(with_xi=True):
    """delta, n, Delta v = dv_frac / n, M, Delta f = df_frac * 2 M, m = ceil(m_mult * (6.2)), xi."""
    from theory.worst_case import Dim

    dims = [Dim("delta", 1e-6, 1 - 1e-9, "log"), Dim("n", 2, 64, "log-int"), Dim("dv_frac", 1e-3, 1.0, "log"),
            Dim("M", 1.0, 1e3, "log"), Dim("df_frac", 1e-4, 1.0, "log"), Dim("m_mult", 1.0, 100.0, "log")]
    return dims + ([Dim("xi", 1e-8, 1e2, "log")] if with_xi else [])


def _theorem_point(inst, cfg):
    """The theorem's constants at a point of the box: dict with delta, n, dv, M, df, m, xi, D (Lemma 6.19's
    delta / (6 (m+1)^2)), Q (Thm 6.8), Q1, Q2 (Thm 6.2) with the proofs' constants times ``constant_scale``."""
    T = _T()
    d = float(inst["delta"])
    n = int(inst["n"])
    dv = float(inst["dv_frac"]) / n
    M = float(inst["M"])
    df = float(inst["df_frac"]) * 2 * M
    m = int(math.ceil(float(inst["m_mult"]) * T.neurons_required(n, dv, d)))
    xi = float(inst.get("xi", 1.0))
    c = cfg.constant_scale
    Q = T.theorem_6_8_threshold(xi, d, m, n, df, M, C=2.0 ** -19 * c)
    Q1, Q2 = T.theorem_6_2_thresholds(xi, d, m, df, M, n=n, dv=dv, C1=2.0 ** -21 * c, C2=2.0 ** -36 * c)
    return {"delta": d, "n": n, "dv": dv, "M": M, "df": df, "m": m, "xi": xi, "D": d / (6.0 * (m + 1) ** 2),
            "Q": Q, "Q1": Q1, "Q2": Q2, "s": _sqrt1(m)}


def _thm68_separation(inst, cfg):
    """Proof of Thm 6.8: at eta = Q, Prop. 6.7's D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f is
    <= delta / (6 (m+1)^2)."""
    T = _T()
    k = _theorem_point(inst, cfg)
    return T.prop_6_7_separation(min(k["Q"], 1.0), k["m"], k["M"], k["df"]), cfg.rhs_scale * k["D"]


def _lemma618_applies(inst, cfg):
    """Proofs of Thm 6.8 and Thm 6.2: 3 eta <= Delta v at eta = Q (Thm 6.8) and eta = Q_1 (Thm 6.2), so that
    Lemma 6.18 applies; the worse of the two."""
    k = _theorem_point(inst, cfg)
    eta = max(k["Q"], k["Q1"])
    return 3 * eta, cfg.rhs_scale * k["dv"]


def _lemma618_chain(inst, cfg, printed=True):
    """The printed chain 3 eta <= 1/(m+1) <= 1/n <= Delta v: its last link 1/n <= Delta v (printed), or the
    corrected chain 3 eta <= 1/(m+1) <= Delta v (the last link from (6.2): m >= 24 / Delta v): the worse link."""
    k = _theorem_point(inst, cfg)
    if printed:
        return 1.0 / k["n"], cfg.rhs_scale * k["dv"]
    eta = max(k["Q"], k["Q1"])
    links = [(3 * eta, 1.0 / (k["m"] + 1)), (1.0 / (k["m"] + 1), k["dv"])]
    lhs, rhs = max(links, key=lambda p: p[0] / p[1])
    return lhs, cfg.rhs_scale * rhs


def _thm68_accuracy(inst, cfg):
    """Proof of Thm 6.8: 6 M^2 eta n <= xi at eta = Q."""
    k = _theorem_point(inst, cfg)
    return 6 * k["M"] ** 2 * k["Q"] * k["n"], cfg.rhs_scale * k["xi"]


def _eq622(inst, cfg):
    """(6.22): D = delta / (6 (m+1)^2) >= 32 eta at eta = Q_1."""
    k = _theorem_point(inst, cfg)
    return 32 * k["Q1"], cfg.rhs_scale * k["D"]


def _eps_threshold(inst, cfg):
    """Proof of Thm 6.2: eps = Q_2 satisfies Prop. 6.9's eps <= 2^-16 D^2 M^-2 (m+1)^(-5/2)."""
    k = _theorem_point(inst, cfg)
    return k["Q2"], cfg.rhs_scale * 2.0 ** -16 * k["D"] ** 2 / k["M"] ** 2 / (k["m"] + 1) ** 2.5


def _T0(k):
    return 16 / k["D"] * math.log(2 ** 16 * k["M"] ** 2 * (k["m"] + 1) ** 3 / (k["delta"] * k["df"] ** 2))


def _first_phase(inst, cfg):
    """Proof of Thm 6.2, first phase: each neuron moves by at most 2^6 eps T_0 M^2 (m+1)^(3/2) <= D/8 (eps = Q_2)."""
    k = _theorem_point(inst, cfg)
    return 2 ** 6 * k["Q2"] * _T0(k) * k["M"] ** 2 * (k["m"] + 1) ** 1.5, cfg.rhs_scale * k["D"] / 8


def _eq625(inst, cfg):
    """(6.25): T_0 <= T / 12, T = 6 / (eps Delta f^2), at eps = Q_2."""
    k = _theorem_point(inst, cfg)
    return _T0(k), cfg.rhs_scale * 6 / (k["Q2"] * k["df"] ** 2) / 12


def _delta_a(k):
    return k["D"] * k["df"] ** 2 / (2 ** 9 * k["M"] * k["s"])


def _exponential_term(inst, cfg):
    """Proof of Thm 6.2, second phase: 3 M sqrt(m+1) exp(-D t / 16) <= Delta a / 4 for t >= T_0,
    Delta a = D Delta f^2 / (2^9 M sqrt(m+1))."""
    k = _theorem_point(inst, cfg)
    return 3 * k["M"] * k["s"] * math.exp(-k["D"] * _T0(k) / 16), cfg.rhs_scale * _delta_a(k) / 4


def _lag_term(inst, cfg):
    """Proof of Thm 6.2: 2^17 M^3 (m+1)^3 eps / D^2 <= Delta a / 4 at eps = Q_2."""
    k = _theorem_point(inst, cfg)
    return 2 ** 17 * k["M"] ** 3 * (k["m"] + 1) ** 3 * k["Q2"] / k["D"] ** 2, cfg.rhs_scale * _delta_a(k) / 4


def _heaviside_weights_step(inst, cfg):
    """Proof of Thm 6.2: Lemma 6.16 at Delta(u) >= D/2 and eta = Q_1: 2^5 M sqrt(m+1) eta / D <= Delta a / 2."""
    k = _theorem_point(inst, cfg)
    return 2 ** 5 * k["M"] * k["s"] * k["Q1"] / k["D"], cfg.rhs_scale * _delta_a(k) / 2


def _velocity_constants_62(inst, cfg):
    """Proof of Thm 6.2: 2 M (sqrt(m+1) + 1) Delta a + sqrt(m+1) Delta a^2 <= D Delta f^2 / 120."""
    k = _theorem_point(inst, cfg)
    da = _delta_a(k)
    return 2 * k["M"] * (k["s"] + 1) * da + k["s"] * da ** 2, cfg.rhs_scale * k["D"] * k["df"] ** 2 / 120


def _thm62_accuracy(inst, cfg):
    """Proof of Thm 6.2: 6 M^2 eta n <= xi / 2 at eta = Q_1."""
    k = _theorem_point(inst, cfg)
    return 6 * k["M"] ** 2 * k["Q1"] * k["n"], cfg.rhs_scale * k["xi"] / 2


def _loss_difference(inst, cfg):
    """Proof of Thm 6.2: 16 M (m+1)^(3/2) ||a(T) - a*_eta(u(T))|| <= xi / 4, the norm bounded by (6.23) at
    eps = Q_2 and T = 6 / (eps Delta f^2)."""
    k = _theorem_point(inst, cfg)
    e = k["Q2"]
    T_ = 6 / (e * k["df"] ** 2)
    with np.errstate(under="ignore"):
        gap = (3 * k["M"] * k["s"] * math.exp(-k["D"] * T_ / 16)
               + 2 ** 17 * k["M"] ** 3 * (k["m"] + 1) ** 3 * e / k["D"] ** 2)
    return 16 * k["M"] * (k["m"] + 1) ** 1.5 * gap, cfg.rhs_scale * k["xi"] / 4


def _prop67_dims_constants():
    from theory.worst_case import Dim

    return [Dim("eta", 1e-14, 1.0, "log"), Dim("m", 1, 10**6, "log-int"), Dim("M", 1.0, 1e3, "log"),
            Dim("df_frac", 1e-4, 1.0, "log")]


def _prop67_separation(inst, cfg):
    """Proof of Prop. 6.7: D/2 >= 8 eta (> 2 eta), D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f, eta <= 1."""
    T = _T()
    M, df = float(inst["M"]), float(inst["df_frac"]) * 2 * float(inst["M"])
    D = T.prop_6_7_separation(float(inst["eta"]), int(inst["m"]), M, df)
    return 8 * float(inst["eta"]), cfg.rhs_scale * D / 2


def _prop67_dims_D():
    from theory.worst_case import Dim

    return [Dim("D", 1e-12, 1.0, "log"), Dim("m", 1, 10**6, "log-int"), Dim("M", 1.0, 1e3, "log"),
            Dim("df_frac", 1e-4, 1.0, "log")]


def _prop67_velocity_constants(inst, cfg):
    """Proof of Prop. 6.7: with b = D Delta f^2 / (2^8 M sqrt(m+1)) (Lemma 6.16 at Delta(u) >= D/2),
    2 M (sqrt(m+1) + 1) b + sqrt(m+1) b^2 <= D Delta f^2 / 60 =: Delta g, for D <= 1, Delta f <= 2M."""
    D, m, M = float(inst["D"]), int(inst["m"]), float(inst["M"])
    df = float(inst["df_frac"]) * 2 * M
    s = _sqrt1(m)
    b = D * df ** 2 / (2 ** 8 * M * s)
    return 2 * M * (s + 1) * b + s * b * b, cfg.rhs_scale * D * df ** 2 / 60


def _prop67_collision_constants(inst, cfg):
    """Proof of Prop. 6.7, no collision: with eta = Delta f^2 D^2 / (2^13 (m+1) M^2), T = 6 / Delta f^2 and
    Delta g = D Delta f^2 / 60, both u^L - u^LL >= 4D/5 - T (16 eta^2 M^2 / D^2 + Delta g) and
    u^R - u^L >= D - eta - T (16 eta^2 M^2 / D^2 + Delta g) stay above D/2; the worse of the two."""
    D, m, M = float(inst["D"]), int(inst["m"]), float(inst["M"])
    df = float(inst["df_frac"]) * 2 * M
    eta = df ** 2 * D ** 2 / (2 ** 13 * (m + 1) * M ** 2)
    drift = 6 / df ** 2 * (16 * eta ** 2 * M ** 2 / D ** 2 + D * df ** 2 / 60)
    pairs = [(D / 2 + drift, cfg.rhs_scale * 4 * D / 5), (D / 2 + eta + drift, cfg.rhs_scale * D)]
    return max(pairs, key=lambda p: p[0] / p[1])


# ------------------------------------------------------------------------------ the table

def _dims(*parts):
    def make():
        out = []
        for p in parts:
            out.extend(p() if callable(p) else p)
        return out

    return make


def _cross_dim():
    from theory.worst_case import Dim

    return [Dim("cross", 0.0, 1.0)]


def _near_dim():
    from theory.worst_case import Dim

    return [Dim("near", 0.0, 1 - 1e-9)]


def _r2_dim():
    from theory.worst_case import Dim

    return [Dim("r2", 1e-6, 1e2, "log")]


_U = _dims(target_dims, position_dims)

SPECS: dict[str, BoundSpec] = {}


def spec(s: BoundSpec) -> BoundSpec:
    SPECS[s.claim] = s
    return s


_LEMMA = "(searched: targets of the class, widths, separations down to 2 eta, flanking neurons at their jump)"

spec(BoundSpec("lemma610", "two-timescale/lemma-6.10", "Lemma 6.10: ||b_eta(u) - b_0(u)|| <= M eta sqrt(m+1) "
               "for every u in R^m", _dims(target_dims, free_dims), _lemma610, ("C", 1.0), ALL3, thesis=True,
               budget=600, aliases=("marion-thesis/lemma-6.10",)))
spec(BoundSpec("lemma610_norm", "two-timescale/lemma-6.10/norm", "Lemma 6.10: ||b_eta(u)|| <= M sqrt(m+1) for "
               "every u in R^m", _dims(target_dims, free_dims), _lemma610_norm, ("C", 1.0), ALL3, thesis=True,
               aliases=("marion-thesis/lemma-6.10",)))
spec(BoundSpec("lemma612", "two-timescale/lemma-6.12", "Lemma 6.12: ||d a*_eta / du|| <= 8/Delta(u) "
               "(2(m+1) ||a*_eta(u)|| + M) on U_eta (central differences)", _U, _lemma612, ("C", 8.0), ALL3,
               thesis=True, budget=250, aliases=("marion-thesis/lemma-6.12",)))
spec(BoundSpec("lemma614", "two-timescale/lemma-6.14", "Lemma 6.14: |f_eta(x; a*_0(u), u)| <= M on [0, 1] for u "
               "in U_eta with two neurons per piece (attained)", _U, _lemma614, ("C", 1.0), ALL3, thesis=True,
               budget=200, ratio_max=1.0 + 1e-12, aliases=("marion-thesis/lemma-6.14",)))
spec(BoundSpec("lemma615_weights", "two-timescale/lemma-6.15/weights", "Lemma 6.15: |a*_0j(u)| <= 2M for u in "
               "U_eta with two neurons per piece (approached as a flanking neuron nears its jump)", _U,
               _lemma615_weights,
               ("C", 2.0), ALL3, thesis=True, ratio_max=1.0 + 1e-12, aliases=("marion-thesis/lemma-6.15",)))
spec(BoundSpec("lemma615", "two-timescale/lemma-6.15", "Lemma 6.15: |d_uj L(a, u) - d_uj L(a*_0, u)| <= "
               "2M(sqrt(m+1)+1)||a - a*_0|| + sqrt(m+1)||a - a*_0||^2 for every a, u in U_eta with two neurons per "
               "piece", _dims(_U, _a_dims), _lemma615, None, ALL3, thesis=True, budget=300,
               aliases=("marion-thesis/lemma-6.15",)))
spec(BoundSpec("lemma616", "two-timescale/lemma-6.16", "Lemma 6.16: ||a*_eta(u) - a*_0(u)|| <= 16 M sqrt(m+1) "
               "eta / Delta(u) on U_eta", _U, _lemma616, ("C", 16.0), ALL3, thesis=True,
               aliases=("marion-thesis/lemma-6.16",)))
spec(BoundSpec("lemma617", "two-timescale/lemma-6.17", "Lemma 6.17: ||grad_u L(a, u)|| <= sqrt(m+1)||a||^2 + "
               "M||a|| for every a and u in R^m", _dims(target_dims, free_dims, lambda: _a_dims((1e-4, 1e3))),
               _lemma617, None, (THM_62,), thesis=True, budget=300, aliases=("marion-thesis/lemma-6.17",)))
spec(BoundSpec("lemma617_grad_a", "two-timescale/lemma-6.17/grad-a", "Lemma 6.17: ||grad_a L(a, u)|| <= "
               "sqrt(m+1)(sqrt(m+1)||a|| + M) for every a and u in R^m",
               _dims(target_dims, free_dims, lambda: _a_dims((1e-4, 1e3))), _lemma617_grad_a, None, (THM_62,),
               thesis=True, budget=300, aliases=("marion-thesis/lemma-6.17",)))
spec(BoundSpec("lemma617_loss", "two-timescale/lemma-6.17/loss", "Lemma 6.17 (consequence): |L(a, u) - L(a', u)| "
               "<= sqrt(m+1)(max(||a||, ||a'||) sqrt(m+1) + M)||a - a'||",
               _dims(target_dims, free_dims, lambda: _a_dims((1e-4, 1e3)), _r2_dim), _lemma617_loss, None,
               (THM_62,), thesis=True, budget=250, aliases=("marion-thesis/lemma-6.17",)))
spec(BoundSpec("lemma618", "two-timescale/lemma-6.18", "Lemma 6.18: int |f_eta(.; a*_eta(u), u) - f*|^2 <= "
               "6 M^2 eta n for u in U_eta with a neuron within eta of each jump, 3 eta <= Delta v",
               _dims(_U, _near_dim), _lemma618,
               ("C", 6.0), (THM_68, THM_62), thesis=True, aliases=("marion-thesis/lemma-6.18",)))

_P67 = "Proof of Prop. 6.7 (App. 6.B.3), at a state u with Delta(u) >= D/2, two neurons per piece, and the eta " \
       "of the proposition, D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f (eta >= 1e-10, where float64 resolves " \
       "sigma_eta at positions of order 1)"
spec(BoundSpec("eq614", "two-timescale/eq-6.14", f"(6.14): |d_uj L(a*_eta(u), u) - d_uj L(a*_0(u), u)| <= "
               f"D Delta f^2 / 60 =: Delta g. {_P67}", _dims(_prop67_dims), _eq614, ("c", 1 / 60), (PROP_67, THM_68),
               budget=300))
spec(BoundSpec("sum_decrease", "two-timescale/prop-6.7/step-sum-decrease", "First phase: d/dtau (d^L + d^R) <= "
               f"-Delta f^2 / 5 while both flanking neurons are > eta/2 from the jump. {_P67}",
               _dims(_prop67_dims), _sum_decrease, None, (PROP_67, THM_68, THM_62), budget=300))
spec(BoundSpec("gap_increase", "two-timescale/prop-6.7/step-gap-increase", "First phase: d/dtau (d^R - d^L) >= "
               "(1/2)((d^R)^2 - (d^L)^2)(delta f)^2/(d^L + d^R)^2 - 2 Delta g when d^R - d^L >= D (the corrected "
               f"display). {_P67}", _dims(_prop67_dims), _gap_increase, None, (PROP_67, THM_68, THM_62), budget=300))
spec(BoundSpec("eq615", "two-timescale/eq-6.15", "(6.15): at u^L = v - eta (the closer neuron at eta from its "
               f"jump), du^L/dtau >= Delta g. {_P67}", _dims(_prop67_dims), _eq615, None, (PROP_67, THM_68, THM_62),
               budget=300))
spec(BoundSpec("eq615_display", "two-timescale/eq-6.15/display", "Before (6.15): at u^L = v - eta, du^L/dtau >= "
               "(1/2)(u^R - v)^2 (delta f)^2 / (u^R - v + eta)^2 - Delta g (the corrected display, with the 1/2 of "
               f"Lemma 6.13). {_P67}", _dims(_prop67_dims), _eq615_display, None, (PROP_67, THM_68, THM_62),
               budget=300))
spec(BoundSpec("collision", "two-timescale/prop-6.7/step-collision", "Second phase, u^L crossed into [v, v + eta]: "
               f"du^LL/dtau <= 16 eta^2 M^2 / D^2 + Delta g. {_P67}", _dims(_prop67_dims, _cross_dim), _collision,
               None, (PROP_67, THM_68, THM_62), budget=300))
spec(BoundSpec("eq624", "two-timescale/eq-6.24", "(6.24), proof of Prop. 6.9: ||a*_eta(u)|| <= 3 M sqrt(m+1) when "
               "Delta(u) >= D/2 >= 16 eta and two neurons per piece",
               _dims(target_dims, lambda: position_dims(gap_min=16.0, gap_max=400.0, w_max=800.0)), _weights_norm,
               ("C", 3.0),
               (PROP_69, THM_62), budget=300))
spec(BoundSpec("eq619", "two-timescale/eq-6.19", "(6.19), proof of Prop. 6.9: ||grad_u L(a, u)|| <= 2^6 M^2 "
               "(m+1)^(3/2) when ||a|| <= 6 M sqrt(m+1), u in U_eta with two neurons per piece",
               _dims(_U, lambda: _a_dims((1e-4, 1.0))), _eq619, ("C", 64.0), (PROP_69, THM_62), thesis=True,
               budget=300))

_C68 = "Proof of Thm 6.8 (App. 6.B.4) at eta = Q = 2^-19 M^-2 min(delta^2 Delta f^2 / (m+1)^5, xi / n), over " \
       "targets, delta, xi and m >= (6.2)"
_C62 = "Proof of Thm 6.2 (App. 6.B.6) at eta = Q_1, eps = Q_2 (C_1 = 2^-21, C_2 = 2^-36), D = delta / (6(m+1)^2), " \
       "over targets, delta, xi and m >= (6.2)"
_CK = dict(constants=True, trials=20, budget=2000)
spec(BoundSpec("thm68_separation", "two-timescale/thm-6.8/step-separation", f"Prop. 6.7's D at eta = Q is <= "
               f"delta / (6 (m+1)^2) (so Lemma 6.19's initialisation is D-good). {_C68}", _dims(_theorem_dims),
               _thm68_separation, None, (THM_68,), **_CK))
spec(BoundSpec("lemma618_applies", "two-timescale/thm-6.8/step-lemma-6-18-applies", "3 eta <= Delta v at eta = Q "
               "(Thm 6.8) and eta = Q_1 (Thm 6.2): Lemma 6.18 applies at the end of the dynamics. Proofs of Thm 6.8 "
               "and Thm 6.2, over targets, delta, xi and m >= (6.2)", _dims(_theorem_dims), _lemma618_applies, None,
               (THM_68, THM_62), **_CK))
spec(BoundSpec("thm68_accuracy", "two-timescale/thm-6.8/step-accuracy", f"6 M^2 eta n <= xi at eta = Q. {_C68}",
               _dims(_theorem_dims), _thm68_accuracy, None, (THM_68,), **_CK))
spec(BoundSpec("eq622", "two-timescale/eq-6.22", f"(6.22): D >= 32 eta at eta = Q_1. {_C62}", _dims(_theorem_dims),
               _eq622, None, (THM_62,), **_CK))
spec(BoundSpec("eps_threshold", "two-timescale/thm-6.2/step-eps-threshold", "eps = Q_2 satisfies Prop. 6.9's "
               f"eps <= 2^-16 D^2 M^-2 (m+1)^(-5/2). {_C62}", _dims(_theorem_dims), _eps_threshold, None, (THM_62,),
               **_CK))
spec(BoundSpec("first_phase", "two-timescale/thm-6.2/step-first-phase", "First phase: each neuron moves by at most "
               f"2^6 eps T_0 M^2 (m+1)^(3/2) <= D/8 before T_0. {_C62}", _dims(_theorem_dims), _first_phase, None,
               (THM_62,), **_CK))
spec(BoundSpec("eq625", "two-timescale/eq-6.25", f"(6.25): T_0 <= T/12. {_C62}", _dims(_theorem_dims), _eq625,
               None, (THM_62,), **_CK))
spec(BoundSpec("exponential_term", "two-timescale/thm-6.2/step-exponential-term", "Second phase: the first term of "
               f"(6.23) is <= Delta a / 4 from T_0 on. {_C62}", _dims(_theorem_dims), _exponential_term, None,
               (THM_62,), **_CK))
spec(BoundSpec("lag_term", "two-timescale/thm-6.2/step-lag-term", "Second phase: the second term of (6.23), "
               f"2^17 M^3 (m+1)^3 eps / D^2, is <= Delta a / 4. {_C62}", _dims(_theorem_dims), _lag_term, None,
               (THM_62,), **_CK))
spec(BoundSpec("heaviside_weights", "two-timescale/thm-6.2/step-heaviside-weights", "Second phase: Lemma 6.16's "
               f"bound 2^5 M sqrt(m+1) eta / D is <= Delta a / 2. {_C62}", _dims(_theorem_dims),
               _heaviside_weights_step, None, (THM_62,), **_CK))
spec(BoundSpec("velocity_constants_62", "two-timescale/thm-6.2/step-velocity-constants", "Second phase: "
               f"2M(sqrt(m+1)+1) Delta a + sqrt(m+1) Delta a^2 <= D Delta f^2 / 120. {_C62}", _dims(_theorem_dims),
               _velocity_constants_62, None, (THM_62,), **_CK))
spec(BoundSpec("thm62_accuracy", "two-timescale/thm-6.2/step-accuracy", f"6 M^2 eta n <= xi / 2 at eta = Q_1. "
               f"{_C62}", _dims(_theorem_dims), _thm62_accuracy, None, (THM_62,), **_CK))
spec(BoundSpec("loss_difference", "two-timescale/thm-6.2/step-loss-difference", "16 M (m+1)^(3/2) ||a(T) - "
               f"a*_eta(u(T))|| <= xi / 4 with the norm bounded by (6.23) at T = 6 / (eps Delta f^2). {_C62}",
               _dims(_theorem_dims), _loss_difference, None, (THM_62,), **_CK))
spec(BoundSpec("prop67_separation", "two-timescale/prop-6.7/step-separation", "Proof of Prop. 6.7: D/2 >= 8 eta "
               "(so Delta(u) >= D/2 keeps u in U_eta), for eta <= 1, m >= 1, Delta f <= 2M",
               _dims(_prop67_dims_constants), _prop67_separation, None, (PROP_67, THM_68), **_CK))
spec(BoundSpec("prop67_velocity_constants", "two-timescale/prop-6.7/step-velocity-constants", "Proof of Prop. 6.7: "
               "2M(sqrt(m+1)+1) b + sqrt(m+1) b^2 <= D Delta f^2 / 60, b = D Delta f^2 / (2^8 M sqrt(m+1)) (Lemma "
               "6.16 at Delta(u) >= D/2), for D <= 1, Delta f <= 2M", _dims(_prop67_dims_D),
               _prop67_velocity_constants, None, (PROP_67, THM_68), **_CK))
spec(BoundSpec("prop67_collision_constants", "two-timescale/prop-6.7/step-collision-constants", "Proof of Prop. "
               "6.7: no two neurons come within D/2 before T: 4D/5 - T(16 eta^2 M^2/D^2 + Delta g) and D - eta - "
               "T(16 eta^2 M^2/D^2 + Delta g) exceed D/2, for D <= 1, Delta f <= 2M", _dims(_prop67_dims_D),
               _prop67_collision_constants, None, (PROP_67, THM_68), **_CK))


# ------------------------------------------------------------------------------ errata

@dataclasses.dataclass(frozen=True)
class ErratumSpec:
    """A printed step of a proof and its correction, searched over the same box."""

    name: str
    claim: str
    title: str
    dims: Callable[[], list]
    printed: Callable
    corrected: Callable
    constants: bool = False
    thesis: bool = False
    budget: int = 100
    trials: int = 10

    @property
    def config(self):
        return ConstantsConfig if self.constants else SearchedBoundConfig


@dataclasses.dataclass(frozen=True)
class ErratumResult:
    """The printed and the corrected forms, each a :class:`theory.rates.BoundResult` with its search."""

    printed: object
    corrected: object

    def to_measured(self):
        return {"printed": self.printed.to_measured(), "corrected": self.corrected.to_measured()}


def measure_erratum(es: ErratumSpec, cfg) -> ErratumResult:
    """Both forms on the same random instances and under searches of the same box."""
    parts = []
    for fn in (es.printed, es.corrected):
        s = BoundSpec(es.name, es.claim, es.title, es.dims, fn, None, (), thesis=es.thesis, constants=es.constants)
        parts.append(measure_spec(s, cfg))
    return ErratumResult(*parts)


def erratum_verdict_for(result: ErratumResult) -> Verdict:
    """An erratum (both halves asserted): the printed form fails (its largest ratio, random or searched, above 1)
    and the corrected form holds (random and searched ratios <= 1)."""
    printed = bound_verdict(result.printed, {"ratio_max": 1.0})
    corrected = bound_verdict(result.corrected, {"ratio_max": 1.0})
    return erratum_verdict(printed, corrected)


ERRATA: dict[str, ErratumSpec] = {}
for _es in (
    ErratumSpec("lemma618_chain_erratum", "two-timescale/thm-6.8/step-lemma-6-18-applies/erratum",
                "Proofs of Thm 6.8 and Thm 6.2 (final step): the printed chain 3 eta <= 1/(m+1) <= 1/n <= Delta v "
                "has a false last link (Delta v <= 1/n for every target: the shortest piece is at most the mean); "
                "corrected: 3 eta <= 1/(m+1) <= Delta v, the last link from (6.2) (m >= 24 / Delta v)",
                _dims(_theorem_dims), lambda i, c: _lemma618_chain(i, c, True),
                lambda i, c: _lemma618_chain(i, c, False), constants=True, budget=250, trials=20),
    ErratumSpec("gap_increase_erratum", "two-timescale/prop-6.7/step-gap-increase/erratum",
                "Proof of Prop. 6.7, first phase: the printed d/dtau (d^R - d^L) >= ((d^R)^2 - (d^L)^2)(delta f)^2 / "
                "(d^L + d^R)^2 - 2 Delta g drops the 1/2 of (6.7) and Lemma 6.13; corrected with (1/2) (the "
                "conclusion, d^R - d^L increasing, still follows: (1/2) D Delta f^2 - 2 Delta g > 0)",
                _dims(_prop67_dims), lambda i, c: _gap_increase(i, c, 1.0), lambda i, c: _gap_increase(i, c, 0.5)),
    ErratumSpec("eq615_erratum", "two-timescale/eq-6.15/erratum",
                "Proof of Prop. 6.7, (6.15): the printed du^L/dtau >= (u^R - v)^2 (delta f)^2 / (u^R - v + eta)^2 - "
                "Delta g at u^L = v - eta drops the 1/2 of Lemma 6.13; corrected with (1/2) (the conclusion "
                "du^L/dtau >= Delta g still follows)",
                _dims(_prop67_dims), lambda i, c: _eq615_display(i, c, 1.0), lambda i, c: _eq615_display(i, c, 0.5)),
):
    ERRATA[_es.claim] = _es


# ------------------------------------------------------------------------------ registration

def _factory(obj, kind):
    if kind == "bound":
        def measure(cfg):
            return measure_spec(obj, cfg)

        def verdict(result):
            return bound_verdict_for(obj, result)
    else:
        def measure(cfg):
            return measure_erratum(obj, cfg)

        def verdict(result):
            return erratum_verdict_for(result)
    measure.__name__ = measure.__qualname__ = f"measure_{obj.name}"
    verdict.__name__ = verdict.__qualname__ = f"verdict_{obj.name}"
    measure.__doc__ = f"Measure {obj.claim}: {obj.title}"
    return measure, verdict


def _presets(obj):
    cls = obj.config
    base = dict(trials=obj.trials, search_budget=obj.budget)
    return {"check": cls(**base), "paper": cls(trials=10 * obj.trials, search_budget=10 * obj.budget)}


MEASURES: dict = {}
VERDICTS: dict = {}
PRESETS: dict = {}
for _obj, _kind in [(s, "bound") for s in SPECS.values()] + [(e, "erratum") for e in ERRATA.values()]:
    _m, _v = _factory(_obj, _kind)
    MEASURES[_obj.claim], VERDICTS[_obj.claim], PRESETS[_obj.claim] = _m, _v, _presets(_obj)
    register(f"two_timescale.{_obj.name}", config=_obj.config, presets=PRESETS[_obj.claim], measure=_m, verdict=_v,
             claims=(_obj.claim,), summary=lambda r: r.to_measured())


def experiment_presets(claim_id):
    """The presets ("check", "paper") of the experiment measuring ``claim_id`` (a spec or an erratum)."""
    return PRESETS[claim_id]
