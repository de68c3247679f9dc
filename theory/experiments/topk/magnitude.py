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

from theory.claims import Verdict, identity_verdict, qualitative_verdict
from theory.rates import BoundTracker, identity_error
from theory.topk import jacobian, topk_magnitude, topk_mask

from ._common import ErratumOutcome, Outcome, check_int, check_pair

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
    "PDomainConfig", "P_DOMAIN_PRESETS", "p_domain_erratum",
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
class MagnitudeBoundConfig:
    """The bound ||topkmag_R(x) − topkmag(x)||_∞ ≤ λ|x|_[1]^{p−1} inside the hard regime (λ = frac × threshold).

    Attributes
    ----------
    ps : tuple of float
        Exponents p > 1 (p = 2: §7.5's λ||x||_∞).
    n_range : tuple of int
        (low, high), 2 <= low < high; k in 1..n-1.
    frac : tuple of float
        λ = U(frac) × min(threshold, 1e3), within (0, 1).
    log10_scale : tuple of float
        x = 10**U(...) N(0, I), within [-3, 3].
    draws : int
        Instances, >= 1.
    seed : int
        Seed of the numpy Generator.
    """

    ps: tuple = (2.0,)
    n_range: tuple = (2, 12)
    frac: tuple = (0.01, 0.999)
    log10_scale: tuple = (-1.0, 2.0)
    draws: int = 200
    seed: int = 75

    def __post_init__(self):
        if not isinstance(self.ps, tuple) or not self.ps or any(not float(p) > 1.0 for p in self.ps):
            raise ValueError(f"`ps` of MagnitudeBoundConfig must be a non-empty tuple of p > 1; got {self.ps!r}")
        check_pair("MagnitudeBoundConfig", "n_range", self.n_range, 2, 100_000)
        check_pair("MagnitudeBoundConfig", "frac", self.frac, 0.0, 1.0)
        check_pair("MagnitudeBoundConfig", "log10_scale", self.log10_scale, -3.0, 3.0)
        check_int("MagnitudeBoundConfig", "draws", self.draws, 1)


HARD_P = (4.0 / 3.0, 1.5, 3.0)
#: "check": the Hypothesis hunts' sizes (200 examples at p = 2, 150 for p in HARD_P); "paper": no sizes in the thesis
MAGNITUDE_BOUND_PRESETS = {
    "check": MagnitudeBoundConfig(),
    "paper": MagnitudeBoundConfig(n_range=(2, 400), draws=2000),
}
MAGNITUDE_BOUND_P_PRESETS = {
    "check": MagnitudeBoundConfig(ps=HARD_P, n_range=(2, 10), log10_scale=(-1.0, 1.5), draws=150, seed=710),
    "paper": MagnitudeBoundConfig(ps=HARD_P, n_range=(2, 400), log10_scale=(-1.0, 1.5), draws=2000, seed=710),
}


def magnitude_threshold_p(x, k, p):
    """Largest reg keeping the magnitude output in its hard regime: |x|_[k+1] + reg |x|_[k+1]^(p-1) = |x|_[k]."""
    a = np.sort(np.abs(x))[::-1]
    return math.inf if a[k] == 0 else (a[k - 1] - a[k]) / a[k] ** (p - 1.0)


def magnitude_bound(config: MagnitudeBoundConfig):
    """The largest LHS/RHS over drawn instances (a :class:`theory.rates.BoundResult`)."""
    rng = np.random.default_rng(config.seed)
    tracker = BoundTracker()
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        k = int(rng.integers(1, n))
        p = float(config.ps[int(rng.integers(len(config.ps)))])
        x = 10.0 ** rng.uniform(*config.log10_scale) * rng.standard_normal(n)
        thr = magnitude_threshold(x, k) if p == 2.0 else magnitude_threshold_p(x, k, p)
        reg = float(rng.uniform(*config.frac)) * min(thr, 1e3)
        if reg <= 0.0:
            continue
        tracker.add(*magnitude_bound_instance(x, k, reg, p), {"n": n, "k": k, "reg": reg, "p": p})
    return tracker.result()


MAGNITUDE_BOUND_EXPECTED = {"ratio_max": 1.0}


def magnitude_bound_verdict(result) -> Verdict:
    """Pass iff the largest LHS/RHS is <= 1 (§7.5 bound, or its p-norm form)."""
    from theory.claims import bound_verdict

    return bound_verdict(result, MAGNITUDE_BOUND_EXPECTED)


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
class ExampleConfig:
    """The example of §7.5 (p = 2): topkmag_R = topkmag/(1 + λ) exactly iff λ ≤ |x|_[k]/|x|_[k+1] − 1.

    Attributes
    ----------
    ns : tuple of int
        Dimensions, each >= 2.
    k_max : int
        k in 1..min(n - 1, k_max), >= 1.
    ratios : tuple of float
        Multiples of the threshold (positive); equality predicted at ratios <= 1.
    seed : int
        Seed of the numpy Generator.
    """

    ns: tuple = (3, 5, 8, 12)
    k_max: int = 4
    ratios: tuple = tuple(EXAMPLE_RATIOS.tolist())
    seed: int = 75

    def __post_init__(self):
        if not isinstance(self.ns, tuple) or not self.ns:
            raise ValueError(f"`ns` of ExampleConfig must be a non-empty tuple; got {self.ns!r}")
        for n in self.ns:
            check_int("ExampleConfig", "ns", n, 2)
        check_int("ExampleConfig", "k_max", self.k_max, 1)
        if not isinstance(self.ratios, tuple) or not self.ratios or any(not float(r) > 0 for r in self.ratios):
            raise ValueError(f"`ratios` of ExampleConfig must be a non-empty tuple of positive numbers; got {self.ratios!r}")


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
class HardPConfig:
    """Hard regimes of the mask and the magnitude for p != 2.

    Attributes
    ----------
    ps : tuple of float
        Exponents p > 1.
    ns : tuple of int
        Dimensions, each >= 2.
    k_max : int
        k in 1..min(n - 1, k_max), >= 1.
    ratios : tuple of float
        Multiples of the thresholds (positive, 1 left out: see REGIME_RATIOS_P).
    seed : int
        Seed of the numpy Generator.
    """

    ps: tuple = HARD_P
    ns: tuple = (3, 6, 10)
    k_max: int = 3
    ratios: tuple = tuple(REGIME_RATIOS_P.tolist())
    seed: int = 710

    def __post_init__(self):
        if not isinstance(self.ps, tuple) or not self.ps or any(not float(p) > 1.0 for p in self.ps):
            raise ValueError(f"`ps` of HardPConfig must be a non-empty tuple of p > 1; got {self.ps!r}")
        if not isinstance(self.ns, tuple) or not self.ns:
            raise ValueError(f"`ns` of HardPConfig must be a non-empty tuple; got {self.ns!r}")
        for n in self.ns:
            check_int("HardPConfig", "ns", n, 2)
        check_int("HardPConfig", "k_max", self.k_max, 1)
        if not isinstance(self.ratios, tuple) or not self.ratios or any(not float(r) > 0 for r in self.ratios):
            raise ValueError(f"`ratios` of HardPConfig must be a non-empty tuple of positive numbers; got {self.ratios!r}")


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
class JacobianPConfig:
    """Prop. 7.8 for p in (1, 2) (C¹ operators: finite differences apply anywhere).

    Attributes
    ----------
    ps : tuple of float
        Exponents in (1, 2).
    n_range : tuple of int
        (low, high), 2 <= low < high; k in 1..n-1.
    log10_reg, log10_scale : tuple of float
        Within [-3, 3].
    draws : int
        Instances, >= 1.
    seed : int
        Seed of the numpy Generator.
    """

    ps: tuple = PNORM_JAC_P
    n_range: tuple = (3, 8)
    log10_reg: tuple = (-1.0, 1.0)
    log10_scale: tuple = (-1.0, 1.0)
    draws: int = 60
    seed: int = 781

    def __post_init__(self):
        if not isinstance(self.ps, tuple) or not self.ps or any(not 1.0 < float(p) < 2.0 for p in self.ps):
            raise ValueError(f"`ps` of JacobianPConfig must be a non-empty tuple of p in (1, 2); got {self.ps!r}")
        check_pair("JacobianPConfig", "n_range", self.n_range, 2, 100_000)
        check_pair("JacobianPConfig", "log10_reg", self.log10_reg, -3.0, 3.0)
        check_pair("JacobianPConfig", "log10_scale", self.log10_scale, -3.0, 3.0)
        check_int("JacobianPConfig", "draws", self.draws, 1)


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
class SparsityConfig:
    """Sparsity of the relaxed outputs (§7.4).

    Attributes
    ----------
    draws : int
        Instances, >= 1.
    n_range : tuple of int
        (low, high), 4 <= low < high.
    seed : int
        Seed of the numpy Generator.
    """

    draws: int = 60
    n_range: tuple = (4, 30)
    seed: int = 74

    def __post_init__(self):
        check_int("SparsityConfig", "draws", self.draws, 1)
        check_pair("SparsityConfig", "n_range", self.n_range, 4, 10**7)


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
class PDomainConfig:
    r"""Prop. 7.8's domain: the family :math:`\theta(s) = (3, 1, s-1, s)` of Fig. 7.1, k = 2, for p <= 1 and p > 1.

    Attributes
    ----------
    small_ps : tuple of float
        Exponents in (0, 1] (the printed domain's part where the mask is hard).
    ps : tuple of float
        Exponents > 1 (the corrected domain).
    reg : float
        λ > 0 (0.6 as in Fig. 7.1).
    grid : int
        Points of s on [0, 5], >= 11.
    random_points : int
        Random points of P(1_k) that must not beat the best vertex, >= 1.
    seed : int
        Seed of those points.
    """

    small_ps: tuple = (0.5, 1.0)
    ps: tuple = P_DOMAIN_CORRECTED
    reg: float = 0.6
    grid: int = 1001
    random_points: int = 2000
    seed: int = 8

    def __post_init__(self):
        if not isinstance(self.small_ps, tuple) or not self.small_ps or any(not 0.0 < float(p) <= 1.0
                                                                             for p in self.small_ps):
            raise ValueError(f"`small_ps` of PDomainConfig must be a non-empty tuple in (0, 1]; got {self.small_ps!r}")
        if not isinstance(self.ps, tuple) or not self.ps or any(not float(p) > 1.0 for p in self.ps):
            raise ValueError(f"`ps` of PDomainConfig must be a non-empty tuple of p > 1; got {self.ps!r}")
        if not float(self.reg) > 0:
            raise ValueError(f"`reg` of PDomainConfig must be positive; got {self.reg!r}")
        check_int("PDomainConfig", "grid", self.grid, 11)
        check_int("PDomainConfig", "random_points", self.random_points, 1)


P_DOMAIN_PRESETS = {"check": PDomainConfig(),
                    "paper": PDomainConfig(small_ps=(0.25, 0.5, 0.75, 1.0), ps=(1.1, 1.25, 4.0 / 3.0, 1.5, 2.0, 3.0),
                                           grid=10001, random_points=20000)}


def p_domain_erratum(config: PDomainConfig) -> tuple:
    """``(printed, corrected, measured)``: for p <= 1 the curve along θ(s) jumps (the vertex enumeration confirmed
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
    printed = qualitative_verdict(bool(all(j <= 0.05 for j in jumps.values()) and max(gaps) <= 1e-12),
                                  f"max jump of y_2 + y_3 along θ(s) between grid points 0.005 apart: {jumps}")
    jumps_ok = p_domain_corrected_jumps(s_grid, config.ps, reg)
    corrected = qualitative_verdict(bool(all(j <= 0.05 for j in jumps_ok.values())),
                                    f"p > 1: max jump {', '.join(f'{k} {v:.3g}' for k, v in jumps_ok.items())}")
    measured = {"max_jump": jumps, "max_jump_p_above_1": jumps_ok, "best_random_point_minus_best_vertex": max(gaps)}
    return ErratumOutcome(printed, corrected, measured)
