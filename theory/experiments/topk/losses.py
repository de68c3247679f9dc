r"""Losses and dual forms of the relaxed top-k (M. E. Sander's thesis, chapter 7): the smooth top-k loss of §7.6
and its erratum, the zero duality gap of Prop. 7.2, and the LP forms (7.2) and (7.4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.claims import Verdict, identity_verdict
from theory.rates import identity_error
from theory.topk import fenchel_young_gradient, fenchel_young_loss, ksupport_norm_squared, topk_magnitude, topk_mask

from ..config import Config, Int, Reals, Seed, field
from ._common import ErratumOutcome, Outcome, int_range, real_range, shapes_nk
from .magnitude import hard_topkmag

__all__ = [
    "FY_P", "FY_H", "FY_ATOL", "fd_gradient", "fy_residuals", "fy_instance", "FyConfig", "FY_PRESETS", "fy_loss",
    "fy_outcome", "fy_verdict", "printed_loss_shift_slopes", "fy_erratum_cases", "corrected_loss_shift_values",
    "FyErratumConfig", "FY_ERRATUM_PRESETS", "fy_erratum", "primal_dual_gap", "DualityConfig", "DUALITY_PRESETS",
    "duality", "duality_outcome", "duality_verdict", "lp_argmax_p1k", "lp_forms_errors", "LpConfig", "LP_PRESETS",
    "lp_forms", "lp_forms_outcome", "lp_forms_verdict",
]

# =========================================================================== §7.6: smooth top-k loss

FY_P = (2.0, 4.0 / 3.0)
FY_H = 1e-6
FY_ATOL = 1e-6  # central differences of a C^1 function with a 1/reg-Lipschitz gradient: <= h/reg + rounding


def fd_gradient(f, x, h):
    """Central finite differences of the scalar function f at x."""
    g = np.empty(x.size)
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        g[j] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def fy_residuals(x, t, k, reg, p):
    """[grad - FD grad, (-L)_+, L(x, y*(x))] for the Fenchel-Young form L = f_R(x) + R(t) - <x, t>, t in P(1_k)."""
    g = fenchel_young_gradient(x, t, k, reg, p)
    g_fd = fd_gradient(lambda z: fenchel_young_loss(z, t, k, reg, p, form="fy"), x, FY_H)
    loss = fenchel_young_loss(x, t, k, reg, p, form="fy")
    at_pred = fenchel_young_loss(x, topk_mask(x, k, reg, p), k, reg, p, form="fy")
    return np.concatenate((reg * (g - g_fd), [max(0.0, -loss), abs(at_pred)]))


def fy_instance(n, k, reg, p, seed):
    """The residuals of :func:`fy_residuals` at x = 2 N(0, I_n) and t a random point of P(1_k) (a mixture of
    three k-hot vertices), both drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    x = 2.0 * rng.standard_normal(n)
    verts = np.array([np.isin(np.arange(n), rng.permutation(n)[:k]).astype(float) for _ in range(3)])
    t = rng.dirichlet(np.ones(3)) @ verts
    return fy_residuals(x, t, k, reg, p)


@dataclass(frozen=True)
class FyConfig(Config):
    """The smooth top-k loss (§7.6) in its Fenchel-Young form."""

    ps: tuple = field(Reals(1.0, closed="neither"), FY_P, "Exponents p of R = (λ/p)||.||_p^p.")
    n_range: tuple = field(int_range(2, 100_000), (2, 9), "(low, high) of n; k in 1..n-1.")
    log10_reg: tuple = field(real_range(-3.0, 3.0), (-1.0, 1.0), "reg = 10**U(low, high).")
    draws: int = field(Int(low=1), 60, "Instances.")
    seed: int = field(Seed(), 76, "Seed of the numpy Generator.")


#: "check": the Hypothesis hunt's size; "paper": the MoE size of §7.6 (n up to 400)
FY_PRESETS = {"check": FyConfig(), "paper": FyConfig(n_range=(2, 400), draws=300)}


def fy_outcome(res) -> Outcome:
    """The residuals of :func:`fy_residuals` pooled against 0 (§7.6)."""
    return Outcome(identity_error(np.concatenate(res), 0.0, n_instances=len(res)),
                   {"compared": "reg*(grad - FD), max(0, -L), |L(x, y*(x))|"})


def fy_loss(config: FyConfig) -> Outcome:
    """Draw instances by ``config`` and measure :func:`fy_instance` on each (§7.6, Fenchel-Young form)."""
    rng = np.random.default_rng(config.seed)
    res = []
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        res.append(fy_instance(n, int(rng.integers(1, n)), float(10.0 ** rng.uniform(*config.log10_reg)),
                               float(config.ps[int(rng.integers(len(config.ps)))]), int(rng.integers(2**16))))
    return fy_outcome(res)


def fy_verdict(result: Outcome) -> Verdict:
    """Pass iff gradient, sign and zero residuals vanish to FY_ATOL."""
    return identity_verdict(result.result, {"atol": FY_ATOL})


def printed_loss_shift_slopes(cases, shifts=np.array([0.0, 10.0, 100.0, 1000.0])):
    """(values, slopes): the printed loss at x - c 1 and its slope in c (least squares), one-hot t."""
    values, slopes = [], []
    for x, t, k, reg, p in cases:
        vals = np.array([fenchel_young_loss(x - c, t, k, reg, p) for c in shifts])
        values.append(vals)
        slopes.append(np.polyfit(shifts, vals, 1)[0])
    return np.array(values), np.array(slopes)


def fy_erratum_cases(shapes=((5, 2), (10, 3), (100, 3), (100, 10)), ps=FY_P, seed=76):
    """(x, one-hot t, k, reg, p): x ~ N(0, I_n) per (n, k), reg = 10**U(-1, 1), for each p."""
    rng = np.random.default_rng(seed)
    out = []
    for n, k in shapes:
        x = rng.standard_normal(n)
        for p in ps:
            out.append((x, np.eye(n)[rng.integers(n)], k, float(10 ** rng.uniform(-1, 1)), p))
    return out


def corrected_loss_shift_values(cases, shifts=np.array([0.0, 10.0, 100.0, 1000.0]), form="fy"):
    """The corrected loss L = f_R(x) + R(t) - <x, t> (form "fy") at x - c 1 on the same instances, with the one-hot
    target completed to a k-hot t in P(1_k) (its class plus the k - 1 next indices, cyclically)."""
    values = []
    for x, t, k, reg, p in cases:
        n = x.size
        tk = np.zeros(n)
        tk[(int(np.argmax(t)) + np.arange(k)) % n] = 1.0
        values.append([fenchel_young_loss(x - c, tk, k, reg, p, form=form) for c in shifts])
    return np.array(values)


@dataclass(frozen=True)
class FyErratumConfig(Config):
    """The printed smooth top-k loss under shifts x − c1."""

    shapes: tuple = field(shapes_nk(), ((5, 2), (10, 3), (100, 3), (100, 10)), "The (n, k).")
    ps: tuple = field(Reals(1.0, closed="neither"), FY_P, "Exponents p of R = (λ/p)||.||_p^p.")
    shifts: tuple = field(Reals(min_len=2, distinct=True), (0.0, 10.0, 100.0, 1000.0), "The shifts c.")
    seed: int = field(Seed(), 76, "Seed of the numpy Generator.")


#: "paper": the MoE size of §7.6 (n = 400, k = 28) added
FY_ERRATUM_PRESETS = {"check": FyErratumConfig(),
                      "paper": FyErratumConfig(shapes=FyErratumConfig().shapes + ((400, 28),))}


def fy_erratum(config: FyErratumConfig, *, form="fy") -> ErratumOutcome:
    """The two halves with their verdicts and the measured figures: the printed loss (one-hot t) goes negative along x − c1 with slope
    −(k − 1); the corrected one (``form``, k-hot t in P(1_k)) is >= 0 and shift invariant on the same inputs."""
    shifts = np.array(config.shifts, dtype=float)
    cases = fy_erratum_cases(config.shapes, config.ps, config.seed)
    values, slopes = printed_loss_shift_slopes(cases, shifts)
    ks = np.array([c[2] for c in cases])
    printed = identity_verdict(identity_error(np.maximum(0.0, -values).ravel(), 0.0), {"atol": 1e-12})
    fixed = corrected_loss_shift_values(cases, shifts, form=form)
    # L >= 0 and L(x - c1) = L(x): both residuals must vanish (relative to max(1, L))
    resid = np.concatenate((np.maximum(0.0, -fixed).ravel(),
                            (np.abs(fixed - fixed[:, :1]) / np.maximum(1.0, np.abs(fixed[:, :1]))).ravel()))
    corrected = identity_verdict(identity_error(resid, 0.0, n_instances=len(cases)), {"atol": 1e-9})
    measured = {"min_loss": float(values.min()), "shifts": [int(c) if float(c).is_integer() else float(c)
                                                             for c in config.shifts],
                "slope_minus_predicted_max": float(np.max(np.abs(slopes + (ks - 1)))),
                "slopes": slopes.round(9).tolist(), "k": ks.tolist(),
                "corrected_min_loss": float(fixed.min()), "corrected_max_shift_change": float(resid.max())}
    return ErratumOutcome(printed, corrected, measured)


# =========================================================================== Proposition 7.2: zero duality gap


def primal_dual_gap(x, k, reg, p, mode, rng, op=None):
    """(gap, min weak-duality margin): P(u) = R^*(x - u) + f_phi(u, 1_k) at u* = x - grad R(y*) against
    D(y*) = <y*, x> - f_phi^*(y*, 1_k) - R(y*), with f_phi^* = 0 on P(1_k) (mask) or the squared k-support
    norm / 2 (magnitude, Prop. 7.3); and min over random u of P(u) - D(y*) (>= 0 by weak duality)."""
    q = p / (p - 1.0)
    op = op or (topk_mask if mode == "mask" else topk_magnitude)
    y = op(x, k, reg, p)
    u_star = x - reg * np.sign(y) * np.abs(y) ** (p - 1.0)

    def primal(u):
        z = x - u
        f_phi = np.sort(u if mode == "mask" else 0.5 * u**2)[::-1][:k].sum()
        return float(np.sum(np.abs(z) ** q) / q * reg ** (1.0 - q) + f_phi)

    f_star = 0.0 if mode == "mask" else ksupport_norm_squared(y, k)
    dual = float(y @ x) - f_star - reg / p * float(np.sum(np.abs(y) ** p))
    scale = max(1.0, abs(dual))
    margin = min(primal(u_star + 1e-3 * rng.standard_normal(x.size)) - dual for _ in range(20))
    return (primal(u_star) - dual) / scale, margin / scale


@dataclass(frozen=True)
class DualityConfig(Config):
    """Prop. 7.2's zero duality gap."""

    ps: tuple = field(Reals(1.0, closed="neither"), (2.0, 4.0 / 3.0), "Exponents p of R = (λ/p)||.||_p^p.")
    n_range: tuple = field(int_range(2, 100_000), (2, 9), "(low, high) of n; k in 1..n-1.")
    log10_reg: tuple = field(real_range(-3.0, 3.0), (-1.0, 1.0), "reg = 10**U(low, high).")
    draws: int = field(Int(low=1), 60, "Instances.")
    seed: int = field(Seed(), 72, "Seed of the numpy Generator (instances and perturbations).")


DUALITY_PRESETS = {"check": DualityConfig(), "paper": DualityConfig(ps=(1.25, 4.0 / 3.0, 1.5, 2.0, 3.0),
                                                                    n_range=(2, 400), draws=400)}


def duality_outcome(gaps, margins) -> Outcome:
    # the gap must vanish; the margins must be >= 0 (their negative parts are compared with 0)
    """Duality gaps (must vanish) and weak-duality margins (must be >= 0) of Prop. 7.2, as one identity."""
    vals = np.concatenate((np.abs(gaps), np.maximum(0.0, -np.array(margins))))
    return Outcome(identity_error(vals, 0.0, n_instances=len(gaps)),
                   {"max_abs_gap": float(np.max(np.abs(gaps))), "min_weak_duality_margin": float(min(margins))})


def duality(config: DualityConfig) -> Outcome:
    """Draw instances by ``config`` and measure :func:`primal_dual_gap` on each (Prop. 7.2)."""
    rng = np.random.default_rng(config.seed)
    gaps, margins = [], []
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        g, m = primal_dual_gap(rng.standard_normal(n), int(rng.integers(1, n)),
                               float(10.0 ** rng.uniform(*config.log10_reg)),
                               float(config.ps[int(rng.integers(len(config.ps)))]),
                               ("mask", "magnitude")[int(rng.integers(2))], rng)
        gaps.append(g)
        margins.append(m)
    return duality_outcome(gaps, margins)


def duality_verdict(result: Outcome) -> Verdict:
    """Pass iff the gap vanishes and weak duality holds to 1e-12."""
    return identity_verdict(result.result, {"atol": 1e-12})


# =========================================================================== Eqs. (7.2) and (7.4): LP forms


def lp_argmax_p1k(z, k):
    """argmax_{y in P(1_k)} <z, y> by scipy's HiGHS LP over {0 <= y <= 1, sum y = k}."""
    from scipy.optimize import linprog

    n = z.size
    res = linprog(-z, A_eq=np.ones((1, n)), b_eq=[k], bounds=[(0.0, 1.0)] * n, method="highs")
    return res.x


def lp_forms_errors(x, k):
    """(|LP argmax - topkmask(x)|, |x o LP argmax(x^2/2) - topkmag(x)|) for tie-free x (Eqs. (7.2), (7.4))."""
    hard = np.zeros(x.size)
    hard[np.argsort(-x, kind="stable")[:k]] = 1.0
    e72 = float(np.max(np.abs(lp_argmax_p1k(x, k) - hard)))
    e74 = float(np.max(np.abs(x * lp_argmax_p1k(0.5 * x**2, k) - hard_topkmag(x, k))))
    return e72, e74


@dataclass(frozen=True)
class LpConfig(Config):
    """Eqs. (7.2)/(7.4) on x ~ N(0, I_n)."""

    n_range: tuple = field(int_range(2, 10**7), (2, 12), "(low, high) of n; k in 1..n-1.")
    draws: int = field(Int(low=1), 40, "Instances.")
    seed: int = field(Seed(), 720, "Seed of the numpy Generator.")


LP_PRESETS = {"check": LpConfig(), "paper": LpConfig(n_range=(2, 400), draws=200)}


def lp_forms(config: LpConfig) -> Outcome:
    """Draw tie-free x by ``config`` and measure :func:`lp_forms_errors` (Eqs. (7.2), (7.4))."""
    rng = np.random.default_rng(config.seed)
    errs = []
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        errs.extend(lp_forms_errors(rng.standard_normal(n), int(rng.integers(1, n))))
    return lp_forms_outcome(errs)


def lp_forms_outcome(errs) -> Outcome:
    """The LP-form errors (pairs) pooled against 0."""
    return Outcome(identity_error(np.array(errs), 0.0, n_instances=len(errs) // 2))


def lp_forms_verdict(result: Outcome) -> Verdict:
    """Pass iff both LP forms equal the hard operators to 1e-9."""
    return identity_verdict(result.result, {"atol": 1e-9})
