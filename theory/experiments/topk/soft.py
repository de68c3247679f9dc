r"""Soft sort and soft rank (§7.3 of M. E. Sander's thesis, chapter 7): the isotonic reduction against the
regularised LP over the permutahedron (SLSQP, the independent reference), and the exact hard regimes.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from theory.claims import Verdict, identity_verdict
from theory.rates import identity_error
from theory.topk import soft_rank, soft_sort

from ..config import Config, Int, Ints, Reals, Seed, field
from ._common import Outcome, int_range, real_range

__all__ = [
    "SOFT_P", "SOFT_LP_ATOL", "SOFT_RATIOS", "permutahedron_lp", "soft_lp_errors", "hard_sort_threshold",
    "hard_rank_threshold", "hard_rank_of", "soft_hard_table", "soft_hard_inputs", "SoftConfig", "SOFT_PRESETS",
    "soft_sort_rank", "soft_sort_rank_outcome", "soft_sort_rank_verdict",
]

#: exponents of the soft sort/rank checks: the closed-form pools (2, 4/3) and the root-finding ones
SOFT_P = (4.0 / 3.0, 1.5, 2.0, 3.0)
#: SLSQP on 2^n - 2 majorisation rows reaches about 1e-8 on these programs (4.4e-8 seen); the tolerance
#: is relative to max(1, max|w|)
SOFT_LP_ATOL = 1e-6
#: multiples of the derived hard threshold: exact below (inclusive of 0.999), not above (1.001)
SOFT_RATIOS = np.array([0.25, 0.999, 1.001, 4.0])


def permutahedron_lp(a, w, reg, p):
    """Independent reference: argmax over P(w) of <a, y> - (reg/p)||y||_p^p by SLSQP, with the permutahedron
    written by its inequalities (Rado): sum y = sum w and, for each nonempty proper subset S,
    sum_S y <= the sum of the |S| largest w (2^n - 2 rows; n <= 6)."""
    n = a.size
    top = np.cumsum(np.sort(w)[::-1])
    rows = [np.isin(np.arange(n), S).astype(float) for m in range(1, n) for S in itertools.combinations(range(n), m)]
    A = np.array(rows).reshape(-1, n)
    b = top[A.sum(axis=1).astype(int) - 1]
    cons = [{"type": "eq", "fun": lambda y: np.array([y.sum() - w.sum()]), "jac": lambda y: np.ones((1, n))}]
    if n > 1:
        cons.append({"type": "ineq", "fun": lambda y: b - A @ y, "jac": lambda y: -A})
    res = minimize(lambda y: -a @ y + reg / p * np.sum(np.abs(y) ** p), np.full(n, w.mean()),
                   jac=lambda y: -a + reg * np.sign(y) * np.abs(y) ** (p - 1.0), constraints=cons,
                   method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000})
    return res.x


def soft_lp_errors(x, reg, p, sort=soft_sort, rank=soft_rank, ref_reg=None):
    """(sort error, rank error) against permutahedron_lp, relative to max(1, max|w|): sort is the LP
    over P(x) with a = rho, rank the LP over P(rho) with a = -x (§7.3). ``ref_reg`` (controls) solves
    the reference at another reg."""
    n = x.size
    rho = np.arange(n, 0, -1, dtype=float)
    r = reg if ref_reg is None else ref_reg
    e_sort = np.max(np.abs(sort(x, reg, p) - permutahedron_lp(rho, x, r, p))) / max(1.0, np.max(np.abs(x)))
    e_rank = np.max(np.abs(rank(x, reg, p) - permutahedron_lp(-x, rho, r, p))) / n
    return float(e_sort), float(e_rank)


def hard_sort_threshold(x, p):
    """Largest reg with soft_sort(x) = sort(x): 1/max_i (g(x_[i]) - g(x_[i+1])), g(y) = sign(y)|y|^(p-1)
    (singleton blocks of the sort's isotonic problem, derived; inf when all entries are equal)."""
    g = np.sign(x) * np.abs(x) ** (p - 1.0)
    gaps = -np.diff(np.sort(g)[::-1])
    return math.inf if gaps.max(initial=0.0) == 0.0 else 1.0 / gaps.max()


def hard_rank_threshold(x, p, power=None):
    """Largest reg with soft_rank(x) = rank(x): min_i (x_(i+1) - x_(i)) / ((n-i+1)^(p-1) - (n-i)^(p-1)),
    x_(i) increasing (derived). ``power`` (controls) replaces the exponent p - 1."""
    n = x.size
    e = p - 1.0 if power is None else power
    i = np.arange(1, n)
    return float(np.min(np.diff(np.sort(x)) / ((n - i + 1.0) ** e - (n - i + 0.0) ** e)))


def hard_rank_of(x):
    """The hard rank (1 = largest, stable order)."""
    r = np.empty(x.size)
    r[np.argsort(-x, kind="stable")] = np.arange(1, x.size + 1)
    return r


def soft_hard_table(x, p, thr_sort=None, thr_rank=None, ratios=SOFT_RATIOS):
    """Rows (sort, rank): 1.0 where the output at reg = ratio * threshold equals the hard operator bit for
    bit, for each ratio (thresholds overridable for the controls)."""
    ts = hard_sort_threshold(x, p) if thr_sort is None else thr_sort
    tr = hard_rank_threshold(x, p) if thr_rank is None else thr_rank
    hs, hr = np.sort(x)[::-1], hard_rank_of(x)
    return np.array([[float(np.array_equal(soft_sort(x, c * ts, p), hs)) for c in ratios],
                     [float(np.array_equal(soft_rank(x, c * tr, p), hr)) for c in ratios]])


def soft_hard_inputs(ns=(2, 4, 7, 12), scales=(0.5, 3.0), seed=730):
    """x ~ s N(0, I_n) for n in ``ns`` and s in ``scales``."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n) * s for n in ns for s in scales]


@dataclass(frozen=True)
class SoftConfig(Config):
    """Soft sort/rank (§7.3): LP reference on random instances, and the hard-regime table."""

    ps: tuple = field(Reals(1.0, closed="neither"), SOFT_P, "Exponents p of R = (λ/p)||.||_p^p.")
    n_range: tuple = field(int_range(1, 7), (2, 6), "(low, high) of the LP instances' n (2^n constraints).")
    log10_reg: tuple = field(real_range(-3.0, 3.0), (-2.5, 2.5), "reg = 10**U(low, high).")
    draws: int = field(Int(low=1), 40, "LP instances.")
    ns: tuple = field(Ints(low=2), (2, 4, 7, 12), "Dimensions of the regime table's inputs.")
    seed: int = field(Seed(), 73, "Seed of the LP instances (the regime inputs use seed 730).")


SOFT_PRESETS = {"check": SoftConfig(), "paper": SoftConfig(n_range=(2, 7), draws=300, ns=(2, 4, 7, 12, 50, 200))}


def soft_sort_rank_outcome(errs, ps=SOFT_P, ns=(2, 4, 7, 12)) -> Outcome:
    """LP errors (pairs sort, rank) against 0 and the 0/1 regime table against the prediction, as one identity
    (a single regime mismatch is an error of 1)."""
    table = np.array([soft_hard_table(x, p) for p in ps for x in soft_hard_inputs(ns)])
    pred = np.tile((SOFT_RATIOS <= 1.0).astype(float), (table.shape[0], 2, 1))
    lp = np.array(errs)
    extras = {"lp_max_err_sort": float(lp[0::2].max()), "lp_max_err_rank": float(lp[1::2].max()),
              "ratios": SOFT_RATIOS.tolist(), "hard_fraction_sort": table[:, 0].mean(axis=0).tolist(),
              "hard_fraction_rank": table[:, 1].mean(axis=0).tolist()}
    return Outcome(identity_error(np.concatenate([lp, table.ravel()]), np.concatenate([0.0 * lp, pred.ravel()]),
                                  n_instances=len(errs) // 2 + table.shape[0]), extras)


def soft_sort_rank(config: SoftConfig) -> Outcome:
    """Draw instances by ``config``: soft sort/rank against the permutahedron LP, and the hard-regime table (§7.3)."""
    rng = np.random.default_rng(config.seed)
    errs = []
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        errs.extend(soft_lp_errors(rng.standard_normal(n), float(10.0 ** rng.uniform(*config.log10_reg)),
                                   float(config.ps[int(rng.integers(len(config.ps)))])))
    return soft_sort_rank_outcome(errs, config.ps, config.ns)


def soft_sort_rank_verdict(result: Outcome) -> Verdict:
    """Pass iff the LP errors are below SOFT_LP_ATOL and the regime table matches the prediction exactly."""
    return identity_verdict(result.result, {"atol": SOFT_LP_ATOL})
