r"""Solvers of the isotonic problem (7.5) (M. E. Sander's thesis, chapter 7): PAV against Dykstra's projections and
dual block coordinate ascent (§7.5, App. 7.A.8), and Algorithm 7.7 (Dykstra), corrected, its linear rate, and
the printed form (an erratum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.claims import Verdict, identity_verdict, threshold_verdict
from theory.isotonic import isotonic_regression
from theory.rates import fit_rate, identity_error
from theory.topk import dual_coordinate_ascent, dykstra, dykstra_printed, topk_magnitude, topk_mask

from ..config import Config, Int, Ints, Reals, Seed, Seeds, field
from ._common import ErratumOutcome, Outcome, cases_nkr, int_range, real_range, reg_grids, shapes_nk

__all__ = [
    "PAV_ATOL", "PAV_P_MASK", "pav_v", "pav_errors", "draw_pav_x", "PavConfig", "PAV_PRESETS", "pav", "pav_outcome",
    "pav_verdict", "DualDykstraConfig", "APP7A8_PRESETS", "app7a8", "app7a8_verdict",
    "DYK_N", "DYK_K", "DYK_SEEDS", "DYK_GRIDS", "DYK_FLOOR", "dykstra_error_curves", "geometric_fit",
    "alg77_rate_predicate", "Alg77RateConfig", "ALG77_RATE_PRESETS", "Alg77RateResult", "alg77_rate",
    "alg77_rate_verdict", "printed_alg77_errors", "alg77_cases", "ALG77_ATOL", "corrected_alg77_errors",
    "Alg77Config", "ALG77_PRESETS", "alg77", "alg77_verdict", "alg77_erratum", "alg77_erratum_outcome",
    "PAV_EXPECTED", "APP7A8_EXPECTED", "ALG77_EXPECTED", "ALG77_RATE_EXPECTED",
]

# =========================================================================== §7.5: PAV is exact

#: reference agreement, relative to max(1, max|s|). Reference solvers stop at a change of 4e-15 relative
#: and bisect to adjacent floats; observed <= ~1e-14.
PAV_ATOL = 1e-11
#: p = 1.2 is left out: where an order constraint is nearly tight with a tiny multiplier, (h_i^*)' has
#: slope ~ |g - w|^(p-2) (infinite at 0) and the ascent converges sublinearly (observed 1.5e-10 after the
#: stopping test on a tie-free instance): a limit of the reference, not of PAV
PAV_P_MASK = (2.0, 4.0 / 3.0, 1.5, 3.0)


def pav_v(x, k, reg, p, mode):
    """Solution of Eq. (7.5) in sorted coordinates by PAV (theory.isotonic): mask any p (linear term
    reg^(q-1) 1_k), magnitude p = 2 (weights 1 + reg 1_k, targets s/(1 + reg 1_k)). Returns (v, s)."""
    n = x.size
    w = (np.arange(n) < k).astype(float)
    q = p / (p - 1.0)
    if mode == "mask":
        s = np.sort(x)[::-1]
        return isotonic_regression(s, p=p, c=reg ** (q - 1.0) * w, increasing=False)[0], s
    s = np.sort(np.abs(x))[::-1]
    omega = 1.0 + reg * w
    return isotonic_regression(s / omega, w=omega, increasing=False)[0], s


def pav_errors(x, k, reg, general_p=True):
    """Relative max |v_PAV - v_ref| for every (solver, p, mode) combination available; dict.

    ``general_p=False`` skips p != 2: on inputs with ties the ascent can meet a tight order constraint
    with a zero multiplier, where (h_i^*)' has an infinite slope for p < 2 and the ascent converges only
    sublinearly (observed: p = 1.2, x with ties, 1e-10 per sweep after 2000 sweeps); PAV is unaffected."""
    out = {}
    for mode in ("mask", "magnitude"):
        v, s = pav_v(x, k, reg, 2.0, mode)
        scale = max(1.0, float(np.max(np.abs(s))))
        r = dykstra(x, k, reg, mode, max_iter=400_000)
        out[f"dykstra/{mode}/p=2"] = np.max(np.abs(r.v - v)) / scale
        # the operator outputs too (PAV path of theory.topk); reg * y is on the scale of s
        y = (topk_mask if mode == "mask" else topk_magnitude)(x, k, reg)
        out[f"dykstra/{mode}/p=2/y"] = reg * np.max(np.abs(r.y - y)) / scale
        r = dual_coordinate_ascent(x, k, reg, 2.0, mode, max_iter=400_000)
        out[f"ascent/{mode}/p=2"] = np.max(np.abs(r.v - v)) / scale
    for p in PAV_P_MASK[1:] if general_p else ():
        v, s = pav_v(x, k, reg, p, "mask")
        scale = max(1.0, float(np.max(np.abs(s))))
        r = dual_coordinate_ascent(x, k, reg, p, "mask", max_iter=400_000)
        out[f"ascent/mask/p={p:.4g}"] = np.max(np.abs(r.v - v)) / scale
        # operator outputs of theory.topk (PAV path) against the ascent's, mask and magnitude; y is
        # reg^(1-q) |x - u|^(q-1): compared relative to max(1, |y|)
        for mode, op in (("mask", topk_mask), ("magnitude", topk_magnitude)):
            r = r if mode == "mask" else dual_coordinate_ascent(x, k, reg, p, mode, max_iter=400_000)
            y = op(x, k, reg, p)
            out[f"ascent/{mode}/p={p:.4g}/y"] = np.max(np.abs(r.y - y)) / max(1.0, float(np.max(np.abs(y))))
    return out


def draw_pav_x(inst):
    """x of an instance dict {"n", "scale", "ties", "seed"}: scale * integers in -2..2 (ties) or scale * N(0, I)."""
    rng = np.random.default_rng(inst["seed"])
    if inst["ties"]:
        return inst["scale"] * rng.integers(-2, 3, inst["n"]).astype(float)
    return inst["scale"] * rng.standard_normal(inst["n"])


@dataclass(frozen=True)
class PavConfig(Config):
    """Instances of (7.5) on which PAV is compared with Dykstra and dual ascent."""

    n_range: tuple = field(int_range(2, 100_000), (2, 10), "(low, high) of n; k in 1..n-1.")
    log10_reg: tuple = field(real_range(-3.0, 3.0), (-1.5, 1.0), "reg = 10**U(low, high).")
    log10_scale: tuple = field(real_range(-3.0, 3.0), (-1.0, 1.0), "x scale = 10**U(low, high).")
    draws: int = field(Int(low=1), 40, "Instances (every second one with ties; p != 2 on the tie-free ones).")
    seed: int = field(Seed(), 75, "Seed of the numpy Generator.")


#: "check": the Hypothesis hunt's size (40 examples, n <= 10); "paper": the MoE size of §7.6 (n = 400)
PAV_PRESETS = {"check": PavConfig(), "paper": PavConfig(n_range=(2, 400), draws=200)}


def pav_outcome(worst: dict, n_instances: int) -> Outcome:
    """The worst error per solver (over the instances) against 0."""
    extras = {"max_error_by_solver": {key: float(f"{e:.3g}") for key, e in sorted(worst.items())},
              "compared": "max|v_PAV - v_ref| / max(1, max|s|) (sorted coordinates), and reg*|y - y_ref|"}
    return Outcome(identity_error(np.array(list(worst.values())), 0.0, n_instances=n_instances), extras)


def pav(config: PavConfig) -> Outcome:
    """Draw instances by ``config`` and record the worst :func:`pav_errors` per solver (§7.5, (7.5) solved exactly)."""
    rng = np.random.default_rng(config.seed)
    worst = {}
    for i in range(config.draws):
        n = int(rng.integers(config.n_range[0], config.n_range[1] + 1))
        inst = {"n": n, "k": int(rng.integers(1, n)), "reg": float(10.0 ** rng.uniform(*config.log10_reg)),
                "scale": float(10.0 ** rng.uniform(*config.log10_scale)), "ties": bool(i % 2),
                "seed": int(rng.integers(2**16))}
        for key, e in pav_errors(draw_pav_x(inst), inst["k"], inst["reg"], general_p=not inst["ties"]).items():
            worst[key] = max(worst.get(key, 0.0), float(e))
    return pav_outcome(worst, config.draws)


PAV_EXPECTED = {"atol": PAV_ATOL}


def pav_verdict(result: Outcome) -> Verdict:
    """Pass iff every reference agrees with PAV to PAV_ATOL."""
    return identity_verdict(result.result, PAV_EXPECTED)


# =========================================================================== App. 7.A.8


@dataclass(frozen=True)
class DualDykstraConfig(Config):
    """App. 7.A.8: dual block coordinate ascent and Dykstra's projections, same iterates at p = 2."""

    cases: tuple = field(cases_nkr(), ((6, 2, 0.5), (12, 3, 1.5), (40, 5, 1.0), (101, 10, 3.0)), "The (n, k, reg).")
    iterations: int = field(Int(low=1), 60, "Iterations compared.")
    seed: int = field(Seed(), 78, "Seed of the numpy Generator of x.")


#: "paper": the MoE size of §7.6 (n = 400, k = 28) added
APP7A8_PRESETS = {"check": DualDykstraConfig(),
                  "paper": DualDykstraConfig(cases=DualDykstraConfig().cases + ((400, 28, 1.0),), iterations=200)}


def app7a8(config: DualDykstraConfig, *, solver=dual_coordinate_ascent) -> Outcome:
    """max |Dykstra iterate - ascent iterate| / max(1, |x|) over the iterations. ``solver`` (controls)
    replaces the dual ascent by any solver with the same signature as :func:`theory.topk.dykstra`."""
    errs = []
    rng = np.random.default_rng(config.seed)
    for n, k, reg in config.cases:
        x = rng.standard_normal(n)
        a = dykstra(x, k, reg, max_iter=config.iterations, tol=None, record=True)
        if solver is dual_coordinate_ascent:
            b = dual_coordinate_ascent(x, k, reg, 2.0, max_iter=config.iterations, tol=None, record=True)
        else:
            b = solver(x, k, reg, max_iter=config.iterations, tol=None, record=True)
        errs.append(np.max(np.abs(a.iterates[1:] - b.iterates[1:])) / max(1.0, np.max(np.abs(x))))
    return Outcome(identity_error(np.array(errs), 0.0))


APP7A8_EXPECTED = {"atol": 1e-12}


def app7a8_verdict(result: Outcome) -> Verdict:
    """Pass iff the two solvers' iterates agree to 1e-12 (App. 7.A.8)."""
    return identity_verdict(result.result, APP7A8_EXPECTED)


# =========================================================================== Algorithm 7.7 (Dykstra)

#: the MoE setup of §7.6: n = 400 tokens, k = 28 per expert, x ~ N(0, 1)
DYK_N, DYK_K = 400, 28
DYK_SEEDS = range(5)
#: iteration grids per reg, inside the linear regime and above the float64 floor (errors observed:
#: reg = 0.1, 1e-2..1e-8 over t = 4..40; reg = 1, 3e-2..1e-7 over t = 500..4000)
DYK_GRIDS = {0.1: np.arange(4, 44, 6), 1.0: np.arange(500, 4001, 500)}
DYK_FLOOR = 1e-13


def dykstra_error_curves(reg, grid, solver=dykstra, seeds=DYK_SEEDS, n=DYK_N, k=DYK_K):
    """errors[s, g] = max_i |y^t_i - y*_i| at t = grid[g] (y* from PAV), one row per seed."""
    out = np.empty((len(seeds), grid.size))
    for r, seed in enumerate(seeds):
        x = np.random.default_rng(seed).standard_normal(n)
        v_star, _ = pav_v(x, k, reg, 2.0, "mask")
        it = solver(x, k, reg, max_iter=int(grid.max()), tol=None, record=True).iterates
        out[r] = np.max(np.abs(it[grid] - v_star), axis=1) / reg  # y = (s - v)/reg in sorted coordinates
    return out


def geometric_fit(grid, errors):
    """Linear convergence err_t ~ C rho^t: a least-squares fit of log err on t (seeds resampled by the
    bootstrap of theory.rates.fit_rate, fed u = exp(t / t_max) so that its log-log slope is t_max log rho).
    Returns (rho, (lo, hi), fit)."""
    t_max = float(grid.max())
    fit = fit_rate(np.exp(grid / t_max), errors, floor=DYK_FLOOR, seed=7)
    rho = math.exp(fit.slope / t_max)
    return rho, (math.exp(fit.ci[0] / t_max), math.exp(fit.ci[1] / t_max)), fit


def alg77_rate_predicate(curves):
    """(ok, measured): for every reg, rho's CI lies below 1 and the error falls by >= 1e3 over the grid."""
    ok, measured = True, {}
    for reg, (grid, errors) in curves.items():
        rho, ci, fit = geometric_fit(grid, errors)
        mean = np.exp(np.mean(np.log(np.maximum(errors, DYK_FLOOR)), axis=0))
        drop = float(mean[-1] / mean[0])
        ok = ok and ci[1] < 1.0 and drop <= 1e-3
        measured[f"reg={reg:g}"] = {"rho": rho, "ci": list(ci), "r2": fit.r2, "grid": [int(grid[0]), int(grid[-1])],
                                    "error_first": float(mean[0]), "error_last": float(mean[-1]),
                                    "dropped": list(fit.dropped)}
    return bool(ok), measured


@dataclass(frozen=True)
class Alg77RateConfig(Config):
    """The linear rate of the corrected Algorithm 7.7 on the MoE setup of §7.6."""

    n: int = field(Int(low=2), DYK_N, "Tokens (the thesis: 400).")
    k: int = field(Int(low=1), DYK_K, "Selected tokens, k < n (the thesis: 28).")
    seeds: tuple = field(Seeds(), tuple(DYK_SEEDS), "Seeds of x ~ N(0, I_n).")
    grids: tuple = field(reg_grids(3), tuple((reg, tuple(int(t) for t in grid)) for reg, grid in DYK_GRIDS.items()),
                         "(reg, iteration grid) pairs.")
    at: int = field(Int(low=1), 100, "The iteration at which the error is also reported (the thesis: 100).")

    def check(self):
        if self.k > self.n - 1:
            raise self.invalid("k", "be at most n - 1")


#: "check" = "paper": the thesis' MoE setup (n = 400, k = 28, Fig. 7.4's 100 iterations); "paper" adds seeds
ALG77_RATE_PRESETS = {"check": Alg77RateConfig(), "paper": Alg77RateConfig(seeds=tuple(range(20)))}


@dataclass(frozen=True)
class Alg77RateResult:
    """Outcome of :func:`alg77_rate`: per reg the grid and the errors (seeds x grid), the predicate and its figures."""

    curves: dict
    ok: bool
    measured: dict
    config: Alg77RateConfig

    def to_measured(self):
        return dict(self.measured)


def alg77_rate(config: Alg77RateConfig, *, solver=dykstra) -> Alg77RateResult:
    """Error of Dykstra's iterates to the PAV solution over the iteration grids; linear fit per reg.
    ``solver`` (controls) replaces :func:`theory.topk.dykstra` (e.g. the printed form)."""
    curves = {reg: (np.array(grid), dykstra_error_curves(reg, np.array(grid), solver, config.seeds, config.n,
                                                         config.k))
              for reg, grid in config.grids}
    ok, measured = alg77_rate_predicate(curves)
    # the thesis' "100 iterations give the output of PAV" (Fig. 7.4, lambda not stated) at both reg
    for reg, _ in config.grids:
        measured[f"reg={reg:g}"]["error_at_100"] = float(np.max(dykstra_error_curves(
            reg, np.array([config.at]), solver, config.seeds, config.n, config.k)))
    return Alg77RateResult(curves, ok, measured, config)


#: linear convergence for every reg: the upper end of the 95% CI of ρ strictly below 1, and the error falling by at
#: least 1e3 over the grid
ALG77_RATE_EXPECTED = {"rho_ci_high_below": 1.0, "error_drop_max": 1e-3}


def alg77_rate_verdict(result: Alg77RateResult) -> Verdict:
    """A rate (Algorithm 7.7 corrected, §7.6's MoE setup): for every reg the error decays geometrically,
    err_t ~ C ρ^t with the upper end of the 95% CI of ρ below 1 (:func:`geometric_fit`, on >= 3 iterations, 7 and
    8 in the presets) and a drop error_last / error_first <= 1e-3 over the grid (:data:`ALG77_RATE_EXPECTED`)."""
    measured, expected = {}, {}
    for key, m in result.measured.items():
        tag = key.replace("reg=", "reg_")
        measured[f"rho_{tag}"] = m["rho"]
        measured[f"rho_ci_high_{tag}"] = m["ci"][1]
        measured[f"error_drop_{tag}"] = m["error_last"] / m["error_first"]
        measured[f"error_at_{result.config.at}_{tag}"] = m["error_at_100"]
        expected[f"rho_ci_high_{tag}_below"] = ALG77_RATE_EXPECTED["rho_ci_high_below"]
        expected[f"error_drop_{tag}_max"] = ALG77_RATE_EXPECTED["error_drop_max"]
    context = "; ".join(f"{key}: ρ = {m['rho']:.5f} [{m['ci'][0]:.5f}, {m['ci'][1]:.5f}], error {m['error_first']:.2g} "
                        f"→ {m['error_last']:.2g}, at t = {result.config.at}: {m['error_at_100']:.2g}"
                        for key, m in result.measured.items())
    return threshold_verdict("rate", measured, expected, context=context)


def printed_alg77_errors(cases):
    """(err to v*, err to the projection of s - 2 reg w) for Algorithm 7.7 as printed, run to convergence."""
    err_star, err_double = [], []
    for x, k, reg in cases:
        r = dykstra_printed(x, k, reg, max_iter=400_000)
        s = np.sort(x)[::-1]
        w = (np.arange(x.size) < k).astype(float)
        v_star = isotonic_regression(s - reg * w, increasing=False)[0]
        v_double = isotonic_regression(s - 2 * reg * w, increasing=False)[0]
        err_star.append(np.max(np.abs(r.v - v_star)) / reg)
        err_double.append(np.max(np.abs(r.v - v_double)) / reg)
    return np.array(err_star), np.array(err_double)


def alg77_cases(shapes=((8, 2), (50, 5), (400, 28)), regs=(0.1, 1.0), seed=77):
    """(x, k, reg) with x ~ N(0, I_n), for the (n, k) of ``shapes`` and every reg."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n), k, reg) for n, k in shapes for reg in regs]


ALG77_ATOL = 1e-9  # y-error of a converged run (stopping test 4e-15 relative, divided by reg >= 0.1)


def corrected_alg77_errors(cases, solver=dykstra):
    """max |y - y_PAV| / max(1, max|x|/reg) of the corrected Dykstra (start s - reg w, plain projections) run to
    convergence on the same instances as the printed form (mask case)."""
    errs = []
    for x, k, reg in cases:
        r = solver(x, k, reg, max_iter=400_000)
        errs.append(np.max(np.abs(r.y - topk_mask(x, k, reg))) / max(1.0, np.max(np.abs(x)) / reg))
    return np.array(errs)


@dataclass(frozen=True)
class Alg77Config(Config):
    """Algorithm 7.7 (corrected and printed) run to convergence."""

    shapes: tuple = field(shapes_nk(), ((8, 2), (50, 5), (400, 28)), "The (n, k) (the largest: the MoE setup n = 400, "
                          "k = 28 of §7.6).")
    regs: tuple = field(Reals(0.0, closed="neither"), (0.1, 1.0), "The reg values.")
    seed: int = field(Seed(), 77, "Seed of the numpy Generator of x.")


#: "check": the check's six instances; "paper": the MoE size (n = 400, k = 28) with more reg values
ALG77_PRESETS = {"check": Alg77Config(), "paper": Alg77Config(shapes=((400, 28),), regs=(0.01, 0.1, 1.0, 10.0))}


def alg77(config: Alg77Config) -> Outcome:
    """Corrected Dykstra (mask and magnitude) against the PAV outputs, with the iteration counts."""
    errs, iters = [], []
    for x, k, reg in alg77_cases(config.shapes, config.regs, config.seed):
        for mode in ("mask", "magnitude"):
            r = dykstra(x, k, reg, mode, max_iter=400_000)
            y = (topk_mask if mode == "mask" else topk_magnitude)(x, k, reg)
            errs.append(np.max(np.abs(r.y - y)) / max(1.0, np.max(np.abs(x)) / reg))
            iters.append(r.n_iter)
    return Outcome(identity_error(np.array(errs), 0.0),
                   {"iterations_to_converge": [int(min(iters)), int(max(iters))]})


ALG77_EXPECTED = {"atol": ALG77_ATOL}


def alg77_verdict(result: Outcome) -> Verdict:
    """Pass iff the corrected Algorithm 7.7 reaches the PAV outputs to ALG77_ATOL."""
    return identity_verdict(result.result, ALG77_EXPECTED)


def alg77_erratum_outcome(err_star, err_double, err_corrected) -> ErratumOutcome:
    """The printed and corrected verdicts of the Algorithm 7.7 erratum, with the measured figures."""
    printed = identity_verdict(identity_error(err_star, 0.0), ALG77_EXPECTED)
    corrected = identity_verdict(identity_error(err_corrected, 0.0), ALG77_EXPECTED)
    measured = {"max_error_to_v_star": float(err_star.max()), "min_error_to_v_star": float(err_star.min()),
                "max_error_to_doubled_weight_solution": float(err_double.max()),
                "max_error_corrected": float(err_corrected.max()), "n_instances": int(err_star.size)}
    return ErratumOutcome(printed, corrected, measured)


def alg77_erratum(config: Alg77Config, *, corrected_solver=dykstra) -> ErratumOutcome:
    """The two halves with their verdicts (:func:`alg77_erratum_outcome`): the printed algorithm against v*, the corrected one on the same
    instances (``corrected_solver``, for the controls)."""
    cases = alg77_cases(config.shapes, config.regs, config.seed)
    err_star, err_double = printed_alg77_errors(cases)
    return alg77_erratum_outcome(err_star, err_double, corrected_alg77_errors(cases, solver=corrected_solver))
