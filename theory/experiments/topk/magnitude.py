r"""The top-k in magnitude and the operators for general p (M. E. Sander's thesis, chapter 7): the example and
bound of §7.5 (App. 7.A.6), the hard regimes and the bound for p != 2, Prop. 7.8 for p in (1, 2), sparsity
(§7.4), and the domain p > 1 of Prop. 7.8 (an erratum).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from theory.claims import Verdict, bound_verdict, identity_verdict, threshold_verdict
from theory.rates import BoundTracker, identity_error
from theory.topk import jacobian, topk_magnitude, topk_mask
from theory.worst_case import Dim, search_worst_case

from ..config import Config, Int, Ints, OrNone, Real, Reals, Seed, field
from ._common import ErratumOutcome, Outcome, int_range, real_range

__all__ = [
    "magnitude_threshold", "hard_topkmag", "magnitude_bound_instance", "MagnitudeBoundConfig",
    "MAGNITUDE_BOUND_PRESETS", "magnitude_bound", "magnitude_bound_verdict", "EXAMPLE_RATIOS",
    "magnitude_regime_table", "magnitude_regime_inputs", "ExampleConfig", "EXAMPLE_PRESETS", "magnitude_example",
    "magnitude_example_verdict", "HARD_P", "hard_magnitude_values", "magnitude_threshold_p", "REGIME_RATIOS_P",
    "hard_regime_table_p", "hard_regime_inputs_p", "HardPConfig", "HARD_P_PRESETS", "hard_regime_p",
    "hard_regime_p_verdict", "magnitude_bound_p_instance", "PNORM_JAC_P", "PNORM_JAC_ATOL", "jacobian_pnorm_instance",
    "prop78_pnorm_outcome", "JacobianPConfig", "PROP78_PNORM_PRESETS", "prop78_pnorm", "prop78_pnorm_verdict",
    "sparsity_violations", "sparsity_instances", "SparsityConfig", "SPARSITY_PRESETS", "sparsity", "sparsity_verdict",
    "relaxed_mask_small_p", "continuity_predicate", "P_DOMAIN_CORRECTED", "p_domain_corrected_jumps",
    "PDomainConfig", "P_DOMAIN_PRESETS", "p_domain_erratum", "MAGNITUDE_BOUND_P_PRESETS", "MAGNITUDE_BOUND_EXPECTED",
    "P_DOMAIN_MAX_JUMP", "P_DOMAIN_VERTEX_ATOL", "bound_search_instance", "bound_search_dims", "BOUND_SEARCH_MIN_REG",
]

# =========================================================================== Example of §7.5 (p = 2, magnitude)


def magnitude_threshold(x, k):
    """reg_c = |x|_[k] / |x|_[k+1] - 1 (inf when |x|_[k+1] = 0): singleton blocks iff reg < reg_c (App. 7.A.6, derived)."""
    a = np.sort(np.abs(x))[::-1]
    return math.inf if a[k] == 0 else a[k - 1] / a[k] - 1.0


def hard_topkmag(x, k):
    """The hard top-k in magnitude: x on the k largest |x_i| (stable order), 0 elsewhere."""
    out = np.zeros_like(x)
    idx = np.argsort(-np.abs(x), kind="stable")[:k]
    out[idx] = x[idx]
    return out


def magnitude_bound_instance(x, k, reg, p=2.0):
    """(LHS, RHS) of the §7.5 bound at exponent p: ||topkmag_R(x) - topkmag(x)||_inf and reg |x|_[1]^(p-1)
    (reg ||x||_inf at p = 2)."""
    return np.max(np.abs(topk_magnitude(x, k, reg, p) - hard_topkmag(x, k))), reg * np.max(np.abs(x)) ** (p - 1.0)


@dataclass(frozen=True)
class MagnitudeBoundConfig(Config):
    """The bound ||topkmag_R(x) − topkmag(x)||_∞ ≤ λ|x|_[1]^{p−1} inside the hard regime (λ = frac × threshold)."""

    ps: tuple = field(Reals(1.0, closed="neither"), (2.0,), "Exponents p (p = 2: §7.5's λ||x||_∞).")
    n_range: tuple = field(int_range(2, 100_000), (2, 12), "(low, high) of n; k in 1..n-1.")
    frac: tuple = field(real_range(0.0, 1.0, "neither"), (0.01, 0.999), "λ = U(frac) × min(threshold, 1e3).")
    log10_scale: tuple = field(real_range(-3.0, 3.0), (-1.0, 2.0), "x = 10**U(low, high) N(0, I).")
    draws: int = field(Int(low=1), 200, "Instances.")
    seed: int = field(Seed(), 75, "Seed of the numpy Generator.")
    outside_log10_reg: tuple | None = field(
        OrNone(real_range(-3.0, 3.0), "no measurement outside the regime"), None,
        "(low, high): on each instance also λ' = 10**U(low, high), any λ' (inside the regime or not), recorded as "
        "``ratio_any_reg`` and not asserted (drawn from a second Generator, so the asserted instances do not "
        "depend on it); None: not measured.")
    search_budget: int = field(Int(low=1), 300, "Evaluations of the worst-case search over the hypotheses (the "
                               "hard regime λ <= threshold, any n, k, ties, near-ties and spreads).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")
    rhs_factor: float = field(Real(0.0, closed="neither"), 1.0, "Multiplies the right-hand side λ|x|_[1]^{p−1} "
                              "(1 for the claim; 1/4, the printed constant divided by 4, is the negative control "
                              "the search must catch).")


HARD_P = (4.0 / 3.0, 1.5, 3.0)
#: "check": the Hypothesis hunts' sizes (200 examples at p = 2, 150 for p in HARD_P); "paper": no sizes in the thesis
MAGNITUDE_BOUND_PRESETS = {
    "check": MagnitudeBoundConfig(outside_log10_reg=(-3.0, 1.0)),
    "paper": MagnitudeBoundConfig(n_range=(2, 400), draws=2000, outside_log10_reg=(-3.0, 1.0)),
}
MAGNITUDE_BOUND_P_PRESETS = {
    "check": MagnitudeBoundConfig(ps=HARD_P, n_range=(2, 10), log10_scale=(-1.0, 1.5), draws=150, seed=710),
    "paper": MagnitudeBoundConfig(ps=HARD_P, n_range=(2, 400), log10_scale=(-1.0, 1.5), draws=2000, seed=710),
}


def magnitude_threshold_p(x, k, p):
    """Largest reg keeping the magnitude output in its hard regime: |x|_[k+1] + reg |x|_[k+1]^(p-1) = |x|_[k]."""
    a = np.sort(np.abs(x))[::-1]
    return math.inf if a[k] == 0 else (a[k - 1] - a[k]) / a[k] ** (p - 1.0)


#: the smallest relative shift ρ = λ|x|_[1]^{p−2} of the search (ρ = λ at p = 2): the largest entry moves by
#: about ρ|x|_[1], so the float64 rounding of the relaxed output (a few ulps of |x|_[1]) is a share ~ 1e-16 / ρ of
#: both sides; at ρ = 1e-6 it is ~1e-10, far below the bound's slack 1 − 1/(1 + ρ) ~ ρ (at smaller ρ rounding alone
#: would push a ratio 1 − ρ above 1)
BOUND_SEARCH_MIN_REG = 1e-6


def bound_search_dims(ps) -> list:
    """The box of the worst-case search of the §7.5 bound (and of its p-norm form when ``ps`` holds p != 2).

    Coordinates: n (2..64), k as a fraction of 1..n-1, the relative shift ρ = λ|x|_[1]^{p−2} of the largest entry
    (:data:`BOUND_SEARCH_MIN_REG`..1e3; λ itself at p = 2), λ / threshold (1e-3..1: the hard regime,
    up to its edge), the spread of the top-k magnitudes |x|_[1] / |x|_[k] (1..1e6), the share of the top-k tied
    with |x|_[k], the spread and the ties of the entries below |x|_[k+1], the scale of x (1e-3..1e3), p (between
    the smallest and the largest of ``ps``) and a seed (signs and order)."""
    dims = [Dim("n", 2, 64, "log-int"), Dim("k_frac", 0.0, 1.0), Dim("rel_shift", BOUND_SEARCH_MIN_REG, 1e3, "log"),
            Dim("reg_over_threshold", 1e-3, 1.0, "log"), Dim("top_spread", 1.0, 1e6, "log"),
            Dim("top_ties", 0.0, 1.0), Dim("tail_spread", 1.0, 1e6, "log"), Dim("tail_ties", 0.0, 1.0),
            Dim("scale", 1e-3, 1e3, "log"), Dim("seed", 0, 2**20, "int")]
    if min(ps) < max(ps):
        dims.append(Dim("p", float(min(ps)), float(max(ps))))
    return dims


def bound_search_instance(inst, p=None):
    r"""(x, k, λ, p) of one point of the box of :func:`bound_search_dims`, or None outside the hard regime.

    λ = rel_shift × |x|_[1]^{2−p}. Magnitudes by rank: |x|_[k] = scale; the k - 1 larger ones scale × top_spread^U
    (a share ``top_ties`` of them equal to |x|_[k]); |x|_[k+1] such that the threshold of the hard regime (App. 7.A.6: λ_c = |x|_[k]/|x|_[k+1] − 1
    at p = 2, (|x|_[k] − |x|_[k+1]) / |x|_[k+1]^{p−1} otherwise) is λ / reg_over_threshold; the rest
    |x|_[k+1] / tail_spread^U (a share ``tail_ties`` tied with |x|_[k+1]); random signs and order (``seed``)."""
    p = float(inst.get("p", 2.0) if p is None else p)
    n = int(inst["n"])
    k = 1 + int(round(inst["k_frac"] * (n - 2)))
    scale = float(inst["scale"])
    rng = np.random.default_rng(int(inst["seed"]))
    top = scale * float(inst["top_spread"]) ** rng.uniform(size=k - 1)
    top[: int(round(inst["top_ties"] * (k - 1)))] = scale
    reg = float(inst["rel_shift"]) * max(scale, float(top.max(initial=scale))) ** (2.0 - p)
    thr = reg / float(inst["reg_over_threshold"])
    if p == 2.0:
        below = scale / (1.0 + thr)
    else:  # (a - b) / b^(p-1) = thr with b = a e^t, t < 0: log(1 - e^t) - (p-1) t = log(thr a^(p-2)), decreasing in t
        c = math.log(thr) + (p - 2.0) * math.log(scale)
        t = brentq(lambda t: math.log(-math.expm1(t)) - (p - 1.0) * t - c, -700.0, -1e-17, xtol=1e-15, rtol=1e-15)
        below = scale * math.exp(t)
    tail = below / float(inst["tail_spread"]) ** rng.uniform(size=n - k - 1)
    tail[: int(round(inst["tail_ties"] * (n - k - 1)))] = below
    mags = np.concatenate([top, [scale, below], tail])
    x = rng.permutation(mags * rng.choice([-1.0, 1.0], size=n))
    exact = magnitude_threshold(x, k) if p == 2.0 else magnitude_threshold_p(x, k, p)
    if not (reg <= exact and np.all(np.isfinite(x)) and np.all(x != 0.0)):
        return None  # outside the hard regime (the construction's rounding at its edge) or an underflow
    return x, k, reg, p


def magnitude_bound(config: MagnitudeBoundConfig) -> Outcome:
    """The largest LHS/RHS over drawn instances and over a worst-case search of the hard regime: an
    :class:`Outcome` whose ``result`` is the :class:`theory.rates.BoundResult` of the regime λ = frac × threshold
    with the search attached (:func:`bound_search_dims`, ``config.search_budget`` evaluations) and whose ``extras``
    hold, when ``config.outside_log10_reg`` is set, ``ratio_any_reg`` (the same ratio at λ' = 10**U(outside_log10_reg)
    on the same x, any λ': recorded, not asserted) and ``exact_value`` (what the ratio is in the regime at p = 2).
    The right-hand side is multiplied by ``config.rhs_factor`` (1 for the claim)."""
    rng = np.random.default_rng(config.seed)
    outside_rng = np.random.default_rng([config.seed, 1])
    tracker, outside = BoundTracker(), BoundTracker()
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        k = int(rng.integers(1, n))
        p = float(config.ps[int(rng.integers(len(config.ps)))])
        x = 10.0 ** rng.uniform(*config.log10_scale) * rng.standard_normal(n)
        thr = magnitude_threshold(x, k) if p == 2.0 else magnitude_threshold_p(x, k, p)
        reg = float(rng.uniform(*config.frac)) * min(thr, 1e3)
        if reg <= 0.0:
            continue
        lhs, rhs = magnitude_bound_instance(x, k, reg, p)
        tracker.add(lhs, config.rhs_factor * rhs, {"n": n, "k": k, "reg": reg, "p": p})
        if config.outside_log10_reg is not None:
            reg2 = float(10.0 ** outside_rng.uniform(*config.outside_log10_reg))
            outside.add(*magnitude_bound_instance(x, k, reg2, p), {"n": n, "k": k, "reg": reg2, "p": p})

    def lhs_rhs(inst):
        built = bound_search_instance(inst, None if len(set(config.ps)) > 1 else config.ps[0])
        if built is None:
            return None
        lhs, rhs = magnitude_bound_instance(*built)
        return lhs, config.rhs_factor * rhs

    search = search_worst_case(lhs_rhs, bound_search_dims(config.ps), budget=config.search_budget,
                               seed=config.search_seed, constant=("C", config.rhs_factor))
    extras = {}
    if config.outside_log10_reg is not None:
        extras = {"exact_value": "λ/(1+λ)·|x|_[1] in the regime, so the ratio is 1/(1+λ)",
                  "ratio_any_reg": float(outside.result().ratio)}
    return Outcome(tracker.result().with_search(search), extras)


MAGNITUDE_BOUND_EXPECTED = {"ratio_max": 1.0}


def magnitude_bound_verdict(result) -> Verdict:
    """Pass iff the largest LHS/RHS is <= 1 (§7.5 bound, or its p-norm form); ``result``: the Outcome of
    :func:`magnitude_bound` or its :class:`theory.rates.BoundResult`."""
    return bound_verdict(result.result if isinstance(result, Outcome) else result, MAGNITUDE_BOUND_EXPECTED)


EXAMPLE_RATIOS = np.array([0.25, 0.9, 0.999, 1.0, 1.001, 1.1, 4.0])


def magnitude_regime_table(x, k, op=topk_magnitude, ratios=EXAMPLE_RATIOS):
    """1.0 where topkmag_R(x) = topkmag(x)/(1 + reg) to 1e-13 relative, at reg = ratio * reg_c."""
    lam_c = magnitude_threshold(x, k)
    hard = hard_topkmag(x, k)
    scale = np.max(np.abs(x))
    return np.array([float(np.max(np.abs(op(x, k, r * lam_c) - hard / (1 + r * lam_c))) <= 1e-13 * scale)
                     for r in ratios])


def magnitude_regime_inputs(ns=(3, 5, 8, 12), k_max=4, seed=75):
    """(x, k) with x ~ N(0, I_n) for n in ``ns`` and k in 1..min(n - 1, k_max)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n), k) for n in ns for k in range(1, n) if k <= k_max]


@dataclass(frozen=True)
class ExampleConfig(Config):
    """The example of §7.5 (p = 2): topkmag_R = topkmag/(1 + λ) exactly iff λ ≤ |x|_[k]/|x|_[k+1] − 1."""

    ns: tuple = field(Ints(low=2), (3, 5, 8, 12), "Dimensions.")
    k_max: int = field(Int(low=1), 4, "k in 1..min(n - 1, k_max).")
    ratios: tuple = field(Reals(0.0, closed="neither"), tuple(EXAMPLE_RATIOS.tolist()), "Multiples of the "
                          "threshold; equality predicted at ratios <= 1.")
    seed: int = field(Seed(), 75, "Seed of the numpy Generator.")


EXAMPLE_PRESETS = {"check": ExampleConfig(), "paper": ExampleConfig(ns=(3, 5, 8, 12, 50, 200), k_max=20)}


def magnitude_example(config: ExampleConfig, *, op=topk_magnitude) -> Outcome:
    """The 0/1 table of exact equality with topkmag/(1 + λ) against the prediction (``op``: controls)."""
    ratios = np.array(config.ratios, dtype=float)
    inputs = magnitude_regime_inputs(config.ns, config.k_max, config.seed)
    comp = np.array([magnitude_regime_table(x, k, op=op, ratios=ratios) for x, k in inputs])
    pred = np.tile((ratios <= 1.0).astype(float), (len(inputs), 1))
    return Outcome(identity_error(comp, pred), {"ratios": ratios.tolist(),
                                                "equal_fraction_per_ratio": comp.mean(axis=0).tolist()})


def magnitude_example_verdict(result: Outcome) -> Verdict:
    """Pass iff equality with topkmag/(1 + λ) holds exactly at ratios <= 1 and nowhere else."""
    return identity_verdict(result.result, {"atol": 0.0})


# =========================================================================== hard regimes, any p


def hard_magnitude_values(x, k, reg, p):
    """The hard-regime magnitude output for general p (derived from Eq. (7.6)): on the top-k of |x|, sign(x) g with
    g + reg g^(p-1) = |x_i| (brentq), 0 elsewhere."""
    out = np.zeros_like(x)
    for i in np.argsort(-np.abs(x), kind="stable")[:k]:
        a = abs(x[i])
        g = 0.0 if a == 0 else brentq(lambda g: g + reg * g ** (p - 1.0) - a, 0.0, a, xtol=1e-300, rtol=1e-15)
        out[i] = math.copysign(g, x[i])
    return out


#: the threshold itself (ratio 1) is left out: there y_(k+1) = reg^(1-q) |x - u|^(q-1) is a 0 computed
#: with rounding, and for p > 2 (q - 1 < 1) a rounding error e of x - u shows as e^(q-1) (6.5e-9 seen at p = 3)
REGIME_RATIOS_P = np.array([0.25, 0.9, 0.999, 1.001, 1.1, 4.0])


def hard_regime_table_p(x, k, p, op_mask=topk_mask, op_mag=topk_magnitude, ratios=REGIME_RATIOS_P):
    """Rows (mask, magnitude): 1.0 where the operator equals its hard-regime form (1e-12 relative) at
    reg = ratio * threshold; mask threshold x_[k] - x_[k+1] for every p, magnitude magnitude_threshold_p."""
    s = np.sort(x)[::-1]
    lam_mask = s[k - 1] - s[k]
    hard = np.zeros(x.size)
    hard[np.argsort(-x, kind="stable")[:k]] = 1.0
    mask_row = [float(np.max(np.abs(op_mask(x, k, r * lam_mask, p) - hard)) <= 1e-12) for r in ratios]
    lam_mag = magnitude_threshold_p(x, k, p)
    scale = np.max(np.abs(x))
    mag_row = [float(np.max(np.abs(op_mag(x, k, r * lam_mag, p) - hard_magnitude_values(x, k, r * lam_mag, p)))
                     <= 1e-12 * scale) for r in ratios]
    return np.array([mask_row, mag_row])


def hard_regime_inputs_p(ns=(3, 6, 10), k_max=3, seed=710):
    """(x, k) with x ~ N(0, I_n) for n in ``ns`` and k in 1..min(n - 1, k_max)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n), k) for n in ns for k in range(1, n) if k <= k_max]


@dataclass(frozen=True)
class HardPConfig(Config):
    """Hard regimes of the mask and the magnitude for p != 2."""

    ps: tuple = field(Reals(1.0, closed="neither"), HARD_P, "Exponents p.")
    ns: tuple = field(Ints(low=2), (3, 6, 10), "Dimensions.")
    k_max: int = field(Int(low=1), 3, "k in 1..min(n - 1, k_max).")
    ratios: tuple = field(Reals(0.0, closed="neither"), tuple(REGIME_RATIOS_P.tolist()), "Multiples of the "
                          "thresholds (1 left out: see REGIME_RATIOS_P).")
    seed: int = field(Seed(), 710, "Seed of the numpy Generator.")


HARD_P_PRESETS = {"check": HardPConfig(), "paper": HardPConfig(ps=(1.25, 4.0 / 3.0, 1.5, 3.0, 4.0), ns=(3, 6, 10, 50),
                                                               k_max=10)}


def hard_regime_p(config: HardPConfig) -> Outcome:
    """The 0/1 table (p, input, operator, ratio) of exact equality with the hard-regime forms, against the prediction."""
    ratios = np.array(config.ratios, dtype=float)
    inputs = hard_regime_inputs_p(config.ns, config.k_max, config.seed)
    comp = np.array([hard_regime_table_p(x, k, p, ratios=ratios) for p in config.ps for x, k in inputs])
    pred = np.tile((ratios <= 1.0).astype(float), (comp.shape[0], 2, 1))
    return Outcome(identity_error(comp, pred, n_instances=comp.shape[0]),
                   {"ratios": ratios.tolist(), "equal_fraction_mask": comp[:, 0].mean(axis=0).tolist(),
                    "equal_fraction_magnitude": comp[:, 1].mean(axis=0).tolist()})


def hard_regime_p_verdict(result: Outcome) -> Verdict:
    """Pass iff both hard regimes hold exactly below their thresholds and nowhere above."""
    return identity_verdict(result.result, {"atol": 0.0})


magnitude_bound_p_instance = magnitude_bound_instance


# =========================================================================== Proposition 7.8 for p != 2

PNORM_JAC_P = (4.0 / 3.0, 1.5)  # 1 < p < 2: the operators are C^1 everywhere, so finite differences apply anywhere
PNORM_JAC_ATOL = 1e-7  # central differences, h = 1e-6 max(1, |x|): O(h^2) truncation + rounding; observed ~5e-10


def jacobian_pnorm_instance(x, k, reg, p, mode):
    """(fd error, asymmetry, negative eigenvalue part), each relative to max(1, |J|), of the package's
    Jacobian at exponent p against central differences."""
    n = x.size
    op = topk_mask if mode == "mask" else topk_magnitude
    J = jacobian(x, k, reg, p, mode)
    h = 1e-6 * max(1.0, float(np.max(np.abs(x))))
    Jfd = np.array([(op(x + h * e, k, reg, p) - op(x - h * e, k, reg, p)) / (2 * h) for e in np.eye(n)]).T
    sc = max(1.0, float(np.max(np.abs(J))))
    return (np.max(np.abs(J - Jfd)) / sc, np.max(np.abs(J - J.T)) / sc,
            max(0.0, -float(np.linalg.eigvalsh(0.5 * (J + J.T)).min())) / sc)


def prop78_pnorm_outcome(res, asym, neg) -> Outcome:
    """Finite-difference errors, asymmetries and negative eigenvalue parts (Prop. 7.8, p != 2) pooled against 0."""
    extras = {"max_fd_error": float(max(res)), "max_asymmetry": float(max(asym)), "max_negative_eig": float(max(neg)),
              "compared": "|J - J_fd| / max(1, |J|), |J - J^T|, negative part of the eigenvalues"}
    return Outcome(identity_error(np.array(list(res) + list(asym) + list(neg)), 0.0, n_instances=len(res)), extras)


@dataclass(frozen=True)
class JacobianPConfig(Config):
    """Prop. 7.8 for p in (1, 2) (C¹ operators: finite differences apply anywhere)."""

    ps: tuple = field(Reals(1.0, 2.0, closed="neither"), PNORM_JAC_P, "Exponents p.")
    n_range: tuple = field(int_range(2, 100_000), (3, 8), "(low, high) of n; k in 1..n-1.")
    log10_reg: tuple = field(real_range(-3.0, 3.0), (-1.0, 1.0), "reg = 10**U(low, high).")
    log10_scale: tuple = field(real_range(-3.0, 3.0), (-1.0, 1.0), "x = 10**U(low, high) N(0, I).")
    draws: int = field(Int(low=1), 60, "Instances.")
    seed: int = field(Seed(), 781, "Seed of the numpy Generator.")


PROP78_PNORM_PRESETS = {"check": JacobianPConfig(), "paper": JacobianPConfig(ps=(1.2, 1.25, 4.0 / 3.0, 1.5, 1.75),
                                                                             n_range=(3, 40), draws=500)}


def prop78_pnorm(config: JacobianPConfig) -> Outcome:
    """Draw instances by ``config`` and measure :func:`jacobian_pnorm_instance` on each."""
    rng = np.random.default_rng(config.seed)
    res, asym, neg = [], [], []
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        k = int(rng.integers(1, n))
        x = 10.0 ** rng.uniform(*config.log10_scale) * rng.standard_normal(n)
        p = float(config.ps[int(rng.integers(len(config.ps)))])
        mode = ("mask", "magnitude")[int(rng.integers(2))]
        a, b, c = jacobian_pnorm_instance(x, k, float(10.0 ** rng.uniform(*config.log10_reg)), p, mode)
        res.append(a)
        asym.append(b)
        neg.append(c)
    return prop78_pnorm_outcome(res, asym, neg)


def prop78_pnorm_verdict(result: Outcome) -> Verdict:
    """Pass iff the Jacobian matches central differences and is symmetric PSD to PNORM_JAC_ATOL."""
    return identity_verdict(result.result, {"atol": PNORM_JAC_ATOL})


# =========================================================================== sparsity (§7.4)


def sparsity_violations(x, k, reg, p, op_mask=topk_mask, op_mag=topk_magnitude):
    """Count of violated facts: mask in P(1_k) with k <= nnz < n (exactly sparse); magnitude with nnz >= k,
    sign(y) in {0, sign(x)}, |y| <= |x|."""
    y = op_mask(x, k, reg, p)
    z = op_mag(x, k, reg, p)
    bad = 0
    bad += int(abs(y.sum() - k) > 1e-9 * k or y.min() < 0 or y.max() > 1 + 1e-12 or np.count_nonzero(y) < k)
    bad += int(np.count_nonzero(y) == y.size)  # no exact zero: not sparse
    bad += int(np.count_nonzero(z) < k or np.any((z != 0) & (np.sign(z) != np.sign(x)))
               or np.any(np.abs(z) > np.abs(x) * (1 + 1e-12)))
    return bad


def sparsity_instances(draws=60, n_range=(4, 30), seed=74):
    """(x, k, reg, p): n in n_range, k <= n/2, reg in [0.01, 1], x ~ N(0, 1), p in {2, 4/3}. Below the affine
    regime: for p = 2 that starts at reg >= (mean - min) n/k >= 2 (mean - min), about 2-5 here."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(draws):
        n = int(rng.integers(n_range[0], n_range[1] + 1))
        out.append((rng.standard_normal(n), int(rng.integers(1, n // 2 + 1)), float(10 ** rng.uniform(-2, 0)),
                    float(rng.choice([2.0, 4.0 / 3.0]))))
    return out


@dataclass(frozen=True)
class SparsityConfig(Config):
    """Sparsity of the relaxed outputs (§7.4)."""

    draws: int = field(Int(low=1), 60, "Instances.")
    n_range: tuple = field(int_range(4, 10**7), (4, 30), "(low, high) of n.")
    seed: int = field(Seed(), 74, "Seed of the numpy Generator.")


SPARSITY_PRESETS = {"check": SparsityConfig(), "paper": SparsityConfig(draws=200, n_range=(4, 400))}


def sparsity(config: SparsityConfig, *, op_mask=topk_mask) -> Outcome:
    """Violations of the sparsity facts of §7.4 (:func:`sparsity_violations`) on the drawn instances; ``op_mask``: controls."""
    bad = [sparsity_violations(x, k, reg, p, op_mask=op_mask)
           for x, k, reg, p in sparsity_instances(config.draws, config.n_range, config.seed)]
    return Outcome(identity_error(np.array(bad, dtype=float), 0.0, n_instances=len(bad)))


def sparsity_verdict(result: Outcome) -> Verdict:
    """Pass iff no instance violates a sparsity fact."""
    return identity_verdict(result.result, {"atol": 0.0})


# =========================================================================== Proposition 7.8: p > 1, not p > 0


def relaxed_mask_small_p(x, k, reg, p):
    """argmax_{y in P(1_k)} <y, x> - (reg/p) sum |y_i|^p for p in (0, 1]: on y >= 0 the objective is convex
    (p < 1) or affine (p = 1), so a maximiser is a vertex of P(1_k), a k-hot vector; enumerate them."""
    best, arg = -np.inf, None
    for S in itertools.combinations(range(x.size), k):
        y = np.zeros(x.size)
        y[list(S)] = 1.0
        val = float(y @ x) - reg / p * float(np.sum(y ** p))
        if val > best:
            best, arg = val, y
    return arg, best


def continuity_predicate(s_grid, curve, max_step=0.05):
    """(ok, max jump): the curve changes by at most max_step between grid neighbours (continuity at the
    grid's resolution; a Lipschitz curve with constant L moves by L * step)."""
    jump = float(np.max(np.abs(np.diff(curve))))
    return jump <= max_step, jump


#: exponents inside the corrected domain p > 1 on which the corrected half is checked (same family, grid)
P_DOMAIN_CORRECTED = (1.25, 4.0 / 3.0, 2.0, 3.0)


def p_domain_corrected_jumps(s_grid, ps=P_DOMAIN_CORRECTED, reg=0.6):
    """Max jump of y_2 + y_3 along θ(s) between grid neighbours for the relaxed mask at p > 1 (theory.topk)."""
    out = {}
    for p in ps:
        curve = np.array([topk_mask(np.array([3.0, 1.0, s - 1.0, s]), 2, reg, p)[1:3].sum() for s in s_grid])
        out[f"p={p:.4g}"] = continuity_predicate(s_grid, curve)[1]
    return out


@dataclass(frozen=True)
class PDomainConfig(Config):
    r"""Prop. 7.8's domain: the family :math:`\theta(s) = (3, 1, s-1, s)` of Fig. 7.1, k = 2, for p <= 1 and p > 1."""

    small_ps: tuple = field(Reals(0.0, 1.0, closed="right"), (0.5, 1.0), "Exponents of the printed domain's part "
                            "where the mask is hard.")
    ps: tuple = field(Reals(1.0, closed="neither"), P_DOMAIN_CORRECTED, "Exponents of the corrected domain.")
    reg: float = field(Real(0.0, closed="neither"), 0.6, "λ (0.6 as in Fig. 7.1).")
    grid: int = field(Int(low=11), 1001, "Points of s on [0, 5].")
    random_points: int = field(Int(low=1), 2000, "Random points of P(1_k) that must not beat the best vertex.")
    seed: int = field(Seed(), 8, "Seed of those points.")


P_DOMAIN_PRESETS = {"check": PDomainConfig(),
                    "paper": PDomainConfig(small_ps=(0.25, 0.5, 0.75, 1.0), ps=(1.1, 1.25, 4.0 / 3.0, 1.5, 2.0, 3.0),
                                           grid=10001, random_points=20000)}


#: continuity at the grid's resolution (a jump between neighbours of at most 0.05; the p > 1 curves move by
#: about 1/(2λ) × 0.005 there) and the tolerance of the random-point confirmation of the vertex enumeration
P_DOMAIN_MAX_JUMP = 0.05
P_DOMAIN_VERTEX_ATOL = 1e-12


def p_domain_erratum(config: PDomainConfig) -> ErratumOutcome:
    """The two halves with their verdicts and the measured figures (both bounds on the largest jump between grid
    neighbours, :data:`P_DOMAIN_MAX_JUMP`): for p <= 1 the curve along θ(s) jumps (the vertex enumeration confirmed
    by random points of P(1_k)); for p > 1 it is continuous."""
    s_grid = np.linspace(0.0, 5.0, config.grid)
    reg = config.reg
    jumps, gaps = {}, []
    for p in config.small_ps:
        curve = []
        for s in s_grid:
            x = np.array([3.0, 1.0, s - 1.0, s])  # the family of Fig. 7.1, k = 2
            y, best = relaxed_mask_small_p(x, 2, reg, p)
            curve.append(y[1] + y[2])
        # independent confirmation that a vertex is optimal: no random point of P(1_k) does better
        rng = np.random.default_rng(config.seed)
        x = np.array([3.0, 1.0, -0.2, 0.8])
        _, best = relaxed_mask_small_p(x, 2, reg, p)
        verts = np.array([np.isin(np.arange(4), S).astype(float) for S in itertools.combinations(range(4), 2)])
        pts = rng.dirichlet(np.ones(len(verts)), size=config.random_points) @ verts
        gaps.append(float(np.max(pts @ x - reg / p * np.sum(pts ** p, axis=1)) - best))
        ok, jumps[f"p={p:g}"] = continuity_predicate(s_grid, np.array(curve))
    printed = threshold_verdict("bound", {"max_jump": max(jumps.values()),
                                          "best_random_point_minus_best_vertex": max(gaps)},
                                {"max_jump_max": P_DOMAIN_MAX_JUMP,
                                 "best_random_point_minus_best_vertex_max": P_DOMAIN_VERTEX_ATOL},
                                context="p <= 1: max jump of y_2 + y_3 along θ(s) between grid points "
                                        + ", ".join(f"{k} {v:.3g}" for k, v in jumps.items()))
    jumps_ok = p_domain_corrected_jumps(s_grid, config.ps, reg)
    corrected = threshold_verdict("bound", {"max_jump": max(jumps_ok.values())}, {"max_jump_max": P_DOMAIN_MAX_JUMP},
                                  context="p > 1: max jump " + ", ".join(f"{k} {v:.3g}" for k, v in jumps_ok.items()))
    measured = {"max_jump": jumps, "max_jump_p_above_1": jumps_ok, "best_random_point_minus_best_vertex": max(gaps)}
    return ErratumOutcome(printed, corrected, measured)
