r"""The linear maximisation oracle (Prop. 7.1), the conjugate of :math:`f_\varphi` (Prop. 7.3) and the
biconjugate of Prop. 7.4 with its erratum (M. E. Sander's thesis, chapter 7), with their independent references.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize, minimize_scalar

from theory.claims import Verdict, identity_verdict
from theory.rates import identity_error
from theory.topk import ksupport_norm_squared

from ..config import Config, Int, Real, Seed, field
from ._common import ErratumOutcome, Outcome, int_range, shapes_nk

__all__ = [
    "lmo_brute_force", "lmo_sorting", "prop71_instance", "LmoConfig", "PROP71_PRESETS", "prop71", "prop71_outcome",
    "prop71_verdict", "ksupport_by_z", "ksupport_closed_form", "conjugate_direct", "prop73_instance", "Prop73Config",
    "PROP73_PRESETS", "prop73", "prop73_outcome", "prop73_verdict", "phi_k_star", "biconjugate", "prop74_cases",
    "phi_half_square", "phi_shifted", "PROP74_RTOL", "Prop74Config", "PROP74_PRESETS", "prop74", "prop74_verdict",
    "prop74_erratum_sides", "prop74_erratum", "prop74_erratum_outcome", "PROP74_ERRATUM_PRESETS",
    "PROP71_EXPECTED", "PROP73_EXPECTED", "PROP74_EXPECTED",
]

# =========================================================================== Proposition 7.1 (LMO)


def lmo_brute_force(x, w):
    """(max, argmax) of <x, w_sigma> over all n! permutations (the vertices of P(w))."""
    best, arg = -np.inf, None
    for perm in itertools.permutations(range(x.size)):
        val = float(x @ w[list(perm)])
        if val > best:
            best, arg = val, w[list(perm)]
    return best, arg


def lmo_sorting(x, w, sort_w=True):
    """Prop. 7.1: f = sum_i w_i x_[i] (w sorted decreasingly), y = w_{rank(x)} (rank 1 = largest).
    ``sort_w=False`` drops the proposition's assumption w_1 >= ... >= w_n (for the negative control)."""
    ws = np.sort(w)[::-1] if sort_w else w
    rank = np.empty(x.size, dtype=np.intp)
    rank[np.argsort(-x, kind="stable")] = np.arange(x.size)
    return float(ws @ np.sort(x)[::-1]), ws[rank]


def prop71_instance(x, w, sort_w=True):
    """(computed, reference): [f, y] by sorting and by brute force over the n! vertices."""
    f_b, y_b = lmo_brute_force(x, w)
    f_s, y_s = lmo_sorting(x, w, sort_w)
    return np.concatenate(([f_s], y_s)), np.concatenate(([f_b], y_b))


@dataclass(frozen=True)
class LmoConfig(Config):
    """Prop. 7.1 on x, w ~ N(0, I_n) (tie-free almost surely)."""

    n: int = field(Int(2, 8), 5, "Dimension (the reference enumerates the n! vertices).")
    draws: int = field(Int(low=1), 50, "Instances.")
    seed: int = field(Seed(), 71, "Seed of the numpy Generator.")


#: "check": the Hypothesis hunt's size (50 examples, n = 5); "paper": no sizes in the thesis
PROP71_PRESETS = {"check": LmoConfig(), "paper": LmoConfig(n=8, draws=200)}


def prop71_outcome(pairs) -> Outcome:
    """Pooled [f, y] of the sorting LMO against brute force over the (computed, reference) pairs (Prop. 7.1)."""
    return Outcome(identity_error(np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs]),
                                  n_instances=len(pairs)))


def prop71(config: LmoConfig) -> Outcome:
    """Draw (x, w) and compare the sorting LMO with brute force."""
    rng = np.random.default_rng(config.seed)
    return prop71_outcome([prop71_instance(rng.standard_normal(config.n), rng.standard_normal(config.n))
                           for _ in range(config.draws)])


PROP71_EXPECTED = {"atol": 1e-13}


def prop71_verdict(result: Outcome) -> Verdict:
    """Pass iff value and maximiser agree with brute force to 1e-13."""
    return identity_verdict(result.result, PROP71_EXPECTED)


# =========================================================================== Proposition 7.3 (conjugate)


def ksupport_by_z(y, k):
    """Prop. 7.3 with phi = x^2/2, w = 1_k: (1/2) min_{z in [0,1]^n, sum z = k} sum y_i^2 / z_i, with the
    minimiser z_i = min(1, |y_i|/nu), nu > 0 the root of sum_i z_i = k (KKT of the convex program)."""
    a = np.abs(y)
    if np.count_nonzero(a) <= k:
        return 0.5 * float(a @ a)
    nu = brentq(lambda nu: np.minimum(1.0, a / nu).sum() - k, 1e-300, 2.0 * a.sum() / k, xtol=1e-300, rtol=1e-15)
    z = np.minimum(1.0, a / nu)
    return 0.5 * float(np.sum(np.where(z > 0, a**2 / np.where(z > 0, z, 1.0), 0.0)))


def ksupport_closed_form(y, k):
    """Argyriou et al. (2012): ||y||_(k)^2 / 2 with the unique r in {0..k-1} of their Prop. 2.1."""
    a = np.sort(np.abs(y))[::-1]
    a = np.concatenate(([np.inf], a))  # 1-based, a_0 = inf
    n = a.size - 1
    for r in range(k):
        tail = a[k - r:n + 1].sum() / (r + 1)
        if a[k - r - 1] > tail >= a[k - r]:
            return 0.5 * (float(np.sum(a[1:k - r] ** 2)) + (r + 1) * tail**2)
    raise ValueError("ksupport_closed_form: no r satisfies the k-support condition (`y` must be finite, 1 <= k < n)")


def conjugate_direct(y, k):
    """sup_x <x, y> - (1/2) sum_{i<=k} (x^2)_[i], from (1/2) top-k sum of a = min_tau k tau + sum (a_i - tau)_+:
    the sup over x is max_{tau >= 0} -k tau + sum_i g(tau, y_i), g = y^2/2 + tau if |y| >= sqrt(2 tau) else
    sqrt(2 tau)|y| (concave in tau; bounded scalar maximisation)."""
    a = np.abs(y)

    def neg(tau):
        r = math.sqrt(2 * tau)
        return k * tau - float(np.sum(np.where(a >= r, 0.5 * a**2 + tau, r * a)))

    # the maximiser is <= (sum a / k)^2 / 2 (beyond max a^2 / 2 every g is sqrt(2 tau)|y|)
    hi = 0.5 * max(float(a.max()), float(a.sum()) / k) ** 2
    res = minimize_scalar(neg, bounds=(0.0, hi), method="bounded", options={"xatol": 1e-14 * max(1.0, hi)})
    return -min(res.fun, neg(0.0))


def prop73_instance(y, k):
    """(computed, references): the package's closed form three times, and the z-program's KKT root,
    Argyriou et al.'s closed form and the direct conjugate."""
    value = ksupport_norm_squared(y, k)
    return [value, value, value], [ksupport_by_z(y, k), ksupport_closed_form(y, k), conjugate_direct(y, k)]


@dataclass(frozen=True)
class Prop73Config(Config):
    """Prop. 7.3 (φ = x²/2, w = 1_k) on y ~ N(0, I_n)."""

    n_range: tuple = field(int_range(2, 100_000), (3, 9), "(low, high) of n; k in 1..n-1.")
    draws: int = field(Int(low=1), 40, "Instances.")
    seed: int = field(Seed(), 73, "Seed of the numpy Generator.")


PROP73_PRESETS = {"check": Prop73Config(), "paper": Prop73Config(n_range=(3, 200), draws=400)}


def prop73_outcome(comp, ref) -> Outcome:
    # the direct route is a bounded scalar maximisation (xatol 1e-14 relative): its value is accurate to
    # about 1e-10 relative; the closed form and the z-route agree to rounding
    """The closed form against the three references of Prop. 7.3, pooled (n_instances = len(comp) / 3)."""
    return Outcome(identity_error(np.array(comp), np.array(ref), n_instances=len(comp) // 3))


def prop73(config: Prop73Config) -> Outcome:
    """Draw (y, k) by ``config`` and compare the squared k-support norm / 2 with the three references (Prop. 7.3)."""
    rng = np.random.default_rng(config.seed)
    comp, ref = [], []
    for _ in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        c, r = prop73_instance(rng.standard_normal(n), int(rng.integers(1, n)))
        comp.extend(c)
        ref.extend(r)
    return prop73_outcome(comp, ref)


PROP73_EXPECTED = {"rtol": 1e-9}


def prop73_verdict(result: Outcome) -> Verdict:
    """Pass iff the closed form agrees with the three references to 1e-9 relative."""
    return identity_verdict(result.result, PROP73_EXPECTED)


# =========================================================================== Proposition 7.4 (biconjugate)


def phi_k_star(x, k, phi, phi_star0):
    """Phi_k^*(x) = sup_y <x, y> - sum_i phi^*(y_i) - delta_{S_k}(y), by brute force over the supports S,
    |S| <= k: on S the sup is phi^**(x_i) = phi(x_i) (phi convex, closed), off S y_i = 0 costs -phi^*(0)."""
    n = x.size
    vals = phi(x)
    best = -np.inf
    for size in range(k + 1):
        for S in itertools.combinations(range(n), size):
            best = max(best, float(vals[list(S)].sum()) - (n - size) * phi_star0)
    return best


def biconjugate(y, k, phi, phi_star0, dphi):
    """Phi_k^**(y) = sup_x <x, y> - Phi_k^*(x), as the smooth epigraph program max_{x, t} <x, y> - t subject to
    t >= sum_{i in S} phi(x_i) - (n - |S|) phi^*(0) for every support |S| <= k (SLSQP, n <= 5)."""
    n = y.size
    cons = []
    for size in range(k + 1):
        for S in itertools.combinations(range(n), size):
            idx = list(S)

            def fun(z, idx=idx, size=size):
                return z[n] - float(phi(z[idx]).sum()) + (n - size) * phi_star0

            def jac(z, idx=idx):
                g = np.zeros(n + 1)
                g[idx] = -dphi(z[idx])
                g[n] = 1.0
                return g

            cons.append({"type": "ineq", "fun": fun, "jac": jac})
    z0 = np.concatenate((y, [phi_k_star(y, k, phi, phi_star0)]))
    res = minimize(lambda z: z[n] - z[:n] @ y, z0, jac=lambda z: np.concatenate((-y, [1.0])), method="SLSQP",
                   constraints=cons, options={"ftol": 1e-15, "maxiter": 1000})
    return -float(res.fun)


def prop74_cases(shapes=((3, 1), (4, 2), (5, 2), (5, 3)), seed=74):
    """(y, k) with y ~ N(0, I_n) for the (n, k) in ``shapes``."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n), k) for n, k in shapes]


def phi_half_square(x):
    """φ(x) = x²/2 (min φ = 0: Prop. 7.4 holds as printed)."""
    return 0.5 * x**2


def phi_shifted(x):
    """φ(x) = x²/2 + 1 (convex, min φ = 1: the counterexample of the Prop. 7.4 erratum)."""
    return 0.5 * x**2 + 1.0  # convex, min 1: phi^*(y) = y^2/2 - 1, phi^*(0) = -1


PROP74_RTOL = 1e-8  # SLSQP on the epigraph program, ftol 1e-15


@dataclass(frozen=True)
class Prop74Config(Config):
    """Prop. 7.4 with φ = x²/2 + ``inf_phi`` (φ*(0) = −inf_phi) on the (n, k) of ``shapes``."""

    shapes: tuple = field(shapes_nk(6), ((3, 1), (4, 2), (5, 2), (5, 3)), "The (n, k) (the reference enumerates "
                          "the supports).")
    inf_phi: float = field(Real(), 0.0, "min φ: 0 for the proposition's claim, 1 for its erratum.")
    seed: int = field(Seed(), 74, "Seed of the numpy Generator of y.")


#: "check": the four shapes of the check; "paper": no sizes in the thesis, all shapes up to n = 6
PROP74_PRESETS = {"check": Prop74Config(),
                  "paper": Prop74Config(shapes=tuple((n, k) for n in range(2, 7) for k in range(1, n)))}
PROP74_ERRATUM_PRESETS = {"check": Prop74Config(inf_phi=1.0),
                          "paper": Prop74Config(shapes=PROP74_PRESETS["paper"].shapes, inf_phi=1.0)}


def prop74_erratum_sides(phi=None, phi_star0=None, inf_phi=1.0, cases=None):
    """(biconjugates, f*_phi(y, 1_k), n - k) over ``cases`` (default :func:`prop74_cases`) for
    phi = x^2/2 + inf_phi (phi^*(0) = -inf_phi)."""
    phi = (lambda x: 0.5 * x**2 + inf_phi) if phi is None else phi
    phi_star0 = -inf_phi if phi_star0 is None else phi_star0
    comp, ref, nk = [], [], []
    for y, k in (prop74_cases() if cases is None else cases):
        comp.append(biconjugate(y, k, phi, phi_star0, lambda x: x))
        # f*_phi(y, 1_k) by Prop. 7.3: min_{z in P(1_k)} sum z_i (y_i^2/(2 z_i^2) - inf_phi) = ksupport - k inf_phi
        ref.append(ksupport_norm_squared(y, k) - k * inf_phi)
        nk.append(y.size - k)
    return np.array(comp), np.array(ref), np.array(nk, dtype=float)


def prop74(config: Prop74Config) -> Outcome:
    """Biconjugate (SLSQP) against f*_φ(y, 1_k) (Prop. 7.3), φ = x²/2 + inf_phi."""
    cases = prop74_cases(config.shapes, config.seed)
    if config.inf_phi == 0.0:
        phi = phi_half_square
    else:
        phi = lambda x: 0.5 * x**2 + config.inf_phi  # noqa: E731
    comp, ref, nk = prop74_erratum_sides(phi, -config.inf_phi, config.inf_phi, cases)
    return Outcome(identity_error(comp, ref), {"n_minus_k": nk.tolist(), "biconjugate": comp.tolist(),
                                               "fstar": ref.tolist(), "inf_phi": float(config.inf_phi)})


PROP74_EXPECTED = {"rtol": PROP74_RTOL}


def prop74_verdict(result: Outcome) -> Verdict:
    """Pass iff the biconjugate equals f*_φ(·, 1_k) to 1e-8 relative (the statement as printed)."""
    return identity_verdict(result.result, PROP74_EXPECTED)


def prop74_erratum_outcome(comp, ref, nk, inf_phi=1.0) -> ErratumOutcome:
    """The two halves and the measured figures: printed Φ_k** = f*_φ(·, 1_k); corrected Φ_k** = f*_φ − (n − k) inf φ."""
    printed = identity_verdict(identity_error(comp, ref), PROP74_EXPECTED)
    corrected = identity_verdict(identity_error(comp, ref - nk * inf_phi), PROP74_EXPECTED)
    measured = {"biconjugate_minus_fstar": (comp - ref).round(9).tolist(), "n_minus_k": nk.tolist(),
                "max_abs_after_adding_n_minus_k": float(np.max(np.abs(comp - ref + nk)))}
    return ErratumOutcome(printed, corrected, measured)


def prop74_erratum(config: Prop74Config) -> ErratumOutcome:
    """The erratum's sides on ``config`` (inf_phi != 0), with their verdicts (:func:`prop74_erratum_outcome`)."""
    cases = prop74_cases(config.shapes, config.seed)
    comp, ref, nk = prop74_erratum_sides(None, None, config.inf_phi, cases)
    return prop74_erratum_outcome(comp, ref, nk, config.inf_phi)
