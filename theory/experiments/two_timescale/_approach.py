r"""Prop. 6.7 inside its hypotheses, and the approach of Prop. 6.7, Thm 6.8 and Thm 6.2 to their thresholds
(thesis of Marion, chapter 6).

* ``prop67_flow`` (``two-timescale/prop-6.7/step-first-phase``): the two-timescale limit (6.8) integrated
  (LSODA) from D-good initialisations with D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f, i.e. at the sharpness
  eta the proposition allows (down to 1e-10), until the closer flanking neuron reaches eta/2 from its jump (the
  first phase of the proof): it does so before T = 6 / Delta f^2, it is the closer one, and Delta(u) >= D/2 on
  the way. A searched bound over targets of two pieces and D-good initialisations. (The second phase, where
  the neuron sits on its jump, is stiff, curvature of order 1/eta, and in the positions its right-hand side
  carries a rounding of 1e-16/eta: LSODA stalls there below eta = 1e-6. It is integrated with the neuron's
  offset from the jump as a state, by Radau, in :mod:`._second_phase`; its estimates (6.15) and the collision
  bound are also checked at one state each, :mod:`._bounds`.)
* ``prop67_approach`` (``two-timescale/prop-6.7/approach``): one D-good initialisation, eta decreasing until the
  hypotheses' ratio x = D_good(u(0)) / D(eta) approaches 1; the distance of the closest neuron to the jump at T
  over eta (the conclusion: < 1) against x on log-log axes, fitted and extrapolated to x = 1 (the ladder stops
  at x = 2^-4, where the distance, about 4e-3 eta^2, reaches the float64 floor of positions of order 1).
* ``thm68_approach`` (``two-timescale/thm-6.8/approach``, ``two-timescale/thm-6.8``): u(0) i.i.d. uniform with m
  from (6.2), the limit (6.8) to T at sharpness eta from Delta(u(0))/4 down; the error
  int |f* - f(.; a*(u(T)), u(T))|^2 against x = Q / eta (Thm 6.8's threshold), extrapolated to x = 1.
* ``thm62_approach`` (``two-timescale/thm-6.2/approach``, ``two-timescale/thm-6.2``): gradient descent at ratio
  eps from a = 0 against the limit (6.8), both to T = 6 / (eps Delta f^2), from one D-good initialisation of m
  = 24 neurons (check preset; 66 >= (6.2) in the paper preset); the distance of the positions at T against
  x = Q_2 / eps (Thm 6.2's threshold on eps), extrapolated to x = 1. The cost grows as m^4 (m^2 per step of
  the exact quadrature, and the eps where the distance is O(eps) and the steps 6 lambda_max(H) / eps both
  scale with m): 0.8 s at m = 12, 7.5 s at m = 24.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.claims import Verdict, bound_verdict, threshold_verdict

from .. import register
from ..config import Config, Int, Real, Reals, Seed, field
from ._bounds import ETA_FLOOR, PROP_67, THM_62, THM_68

__all__ = ["FlowConfig", "measure_prop67_flow", "prop67_flow_verdict", "flow_dims", "limit_flow_lsoda",
           "d_good_separation", "ApproachConfig", "ApproachResult", "measure_prop67_approach",
           "Thm68ApproachConfig", "measure_thm68_approach", "Thm62ApproachConfig", "measure_thm62_approach",
           "approach_verdict", "approach_figure", "thm68_verdict", "thm62_verdict", "FLOW_PRESETS",
           "PROP67_APPROACH_PRESETS", "THM68_APPROACH_PRESETS", "THM62_APPROACH_PRESETS", "d_good_positions",
           "FirstPhase", "first_phase_solution", "first_phase"]

_POSITIVE = Real(0, closed="neither")


def limit_flow_lsoda(u0, tau_end, eta, v, f, *, rtol=1e-9, atol=None, samples=400):
    """The two-timescale limit (6.8), du/dtau = -(grad_u L)(a*(u), u), by SciPy's LSODA (stiff once a neuron sits on
    its jump: the curvature there is of order 1 / eta) with absolute tolerance ``atol`` (default 1e-3 eta). Returns
    (final positions, the smallest separation Delta(u(tau)) / eta over ``samples`` times and the solver's steps,
    solver status)."""
    import theory.two_timescale as T
    from scipy.integrate import solve_ivp

    def rhs(_t, u):
        return -T.gradient(T.optimal_weights(u, eta, v, f), u, eta, v, f)[1]

    sol = solve_ivp(rhs, (0.0, tau_end), np.asarray(u0, float), method="LSODA", rtol=rtol,
                    atol=1e-3 * eta if atol is None else atol,
                    dense_output=True)
    if sol.status != 0:
        raise RuntimeError(f"LSODA failed on the limit (6.8) at eta = {eta:g}: {sol.message}")
    grid = np.linspace(0.0, tau_end, samples)
    states = np.concatenate([sol.sol(grid).T, sol.y.T])
    sep = min(T.separation(x, eta) for x in states) / eta
    return sol.y[:, -1], float(sep), sol.status


def d_good_separation(u, v, eta):
    """The largest D for which u is D-good (Definition 6.6, condition (a) assumed): min(Delta(u),
    min_i |u^R_i + u^L_i - 2 v_i|)."""
    import theory.two_timescale as T

    L, R = T.flanking(u, v)
    asym = np.abs(u[R] + u[L] - 2 * np.asarray(v))
    return float(min(T.separation(u, eta), float(asym.min())))


def _eta_for(D, m, M, df):
    """The sharpness at which Prop. 6.7's D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f equals ``D``."""
    return (D * df / (2 ** 6.5 * math.sqrt(m + 1) * M)) ** 2


# ------------------------------------------------------------------------------ Prop. 6.7's first phase

@dataclasses.dataclass(frozen=True)
class FlowConfig(Config):
    """The first phase of the proof of Prop. 6.7 at the sharpness the proposition allows: the limit (6.8) from
    D-good initialisations, D = D(eta), until the closer flanking neuron reaches eta/2 from its jump."""

    trials: int = field(Int(low=1), 3, "Random instances (coordinates uniform in the box).")
    seed: int = field(Seed(), 0, "Seed of the random instances.")
    search_budget: int = field(Int(low=1), 60, "Integrations of the worst-case search over the hypotheses (targets "
                               "of two pieces, six or seven neurons per piece, flanking pairs from touching their "
                               "jump to spread, eta from 1e-3 of the largest allowed up to it).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")
    horizon_scale: float = field(_POSITIVE, 1.0, "Multiplies the horizon T = 6 / Delta f^2 (1 for the claim; a "
                                 "control takes T/4).")


def flow_dims():
    """The box of ``prop-6.7/step-first-phase``: targets of two pieces (one jump), positions placed at the unit
    ``unit``, eta as a fraction of the largest that keeps the initialisation D-good."""
    from theory.worst_case import Dim

    from ._instances import position_dims, target_dims

    return (target_dims(n_max=2) + [Dim("unit", 2e-3, 5e-2, "log"), Dim("eta_frac", 1e-3, 1.0, "log")]
            + position_dims(eta=None, per_piece=(6, 7), gap_max=20.0, w_max=60.0))


def _flow_instance(inst):
    """(target, u0, eta, D) of a point of the box, or None outside the hypotheses."""
    import theory.two_timescale as T

    from ._instances import build_positions, build_target

    t = build_target(inst)
    p = None if t is None else build_positions(t, dict(inst, eta=inst["unit"]))
    if p is None:
        return None
    m = p.u.size
    D_good = d_good_separation(p.u, t.v, float(inst["unit"]))
    eta = float(inst["eta_frac"]) * _eta_for(D_good, m, t.M, t.df)
    if not ETA_FLOOR <= eta <= 1.0:
        return None
    D = T.prop_6_7_separation(eta, m, t.M, t.df)
    if not T.is_d_good(p.u, t.v, D, eta):
        return None
    return t, p.u, eta, D


@dataclasses.dataclass(frozen=True)
class FirstPhase:
    """The first phase of the proof of Prop. 6.7 along one trajectory of (6.8): its end ``tau`` (inf if it has not
    ended by the horizon), whether the neuron that got within eta/2 of the jump was the closer one at the start
    (``same``), that neuron's index ``k`` (-1 if none), the positions ``u`` at the end, the smallest Delta(u(tau))
    and the fewest neurons on a piece on the way."""

    tau: float
    same: bool
    k: int
    u: np.ndarray
    separation: float
    per_piece: int


def first_phase_solution(u0, eta, v, f, horizon, *, rtol=1e-10):
    """The limit (6.8) from u0 (one jump v_1) until the closer flanking neuron comes within eta/2 of v_1 (LSODA,
    absolute tolerance 1e-3 eta, terminal event), or until ``horizon``; a :class:`FirstPhase`. A flanking neuron
    already within eta/2 at the start ends it at tau = 0 (the proof's T_i = 0)."""
    import theory.two_timescale as T
    from scipy.integrate import solve_ivp

    u0 = np.asarray(u0, float)
    L, R = (int(i[0]) for i in T.flanking(u0, v))
    vi = float(v[0])
    edges = np.concatenate(([-np.inf], np.asarray(v, float), [np.inf]))

    def per_piece(states):
        return int(min(np.histogram(x, bins=edges)[0].min() for x in states))

    closer = L if vi - u0[L] <= u0[R] - vi else R
    if min(vi - u0[L], u0[R] - vi) <= eta / 2:
        return FirstPhase(0.0, True, closer, u0.copy(), T.separation(u0, eta), per_piece([u0]))

    def rhs(_t, u):
        return -T.gradient(T.optimal_weights(u, eta, v, f), u, eta, v, f)[1]

    def landed(_t, u):
        return min(vi - u[L], u[R] - vi) - eta / 2

    landed.terminal = True
    sol = solve_ivp(rhs, (0.0, horizon), u0, method="LSODA", rtol=rtol, atol=1e-3 * eta,
                    events=landed, dense_output=True)
    if sol.status == -1:
        raise RuntimeError(f"LSODA failed on the limit (6.8) at eta = {eta:g}: {sol.message}")
    end = sol.t[-1]
    states = np.concatenate([sol.sol(np.linspace(0.0, end, 200)).T, sol.y.T])
    sep = float(min(T.separation(x, eta) for x in states))
    uT = sol.y[:, -1].copy()
    if sol.status != 1:
        return FirstPhase(math.inf, True, -1, uT, sep, per_piece(states))
    k = L if vi - uT[L] <= uT[R] - vi else R
    return FirstPhase(float(sol.t_events[0][0]), k == closer, k, uT, sep, per_piece(states))


def first_phase(u0, eta, v, f, horizon, *, rtol=1e-10):
    """(time of the end of the first phase or inf, whether the neuron that got within eta/2 of v_1 was the closer
    one at the start, the smallest Delta(u(tau)) on the way): :func:`first_phase_solution` in short."""
    out = first_phase_solution(u0, eta, v, f, horizon, rtol=rtol)
    return out.tau, out.same, out.separation


def _flow_ratio(cfg):
    import theory.two_timescale as T

    def ratio(inst):
        out = _flow_instance(inst)
        if out is None:
            return None
        t, u0, eta, D = out
        horizon = cfg.horizon_scale * T.recovery_horizon(t.df)
        tau, same, sep = first_phase(u0, eta, t.v, t.f, horizon)
        if not same:  # the farther neuron got there first: the proof's d^R - d^L > 0 broke
            return math.inf, horizon
        # the worse of: the first phase ends by T, and Delta(u) >= D/2 on the way (the proof's invariant)
        return max([(tau, horizon), (D / 2, sep)], key=lambda p: p[0] / p[1])

    return ratio


def measure_prop67_flow(cfg):
    """The first phase's length over T and (D/2) / min Delta(u(tau)), the worse of the two, on random instances and
    under the worst-case search (a BoundResult)."""
    from theory.rates import bound_ratio, to_plain
    from theory.worst_case import search_worst_case

    dims = flow_dims()
    ratio = _flow_ratio(cfg)
    rng = np.random.default_rng(cfg.seed)
    lhs, rhs, insts = [], [], []
    for _ in range(500 * cfg.trials):
        inst = {d.name: d.value(x) for d, x in zip(dims, rng.uniform(size=len(dims)))}
        out = ratio(inst)
        if out is None:
            continue
        lhs.append(out[0])
        rhs.append(out[1])
        insts.append(to_plain(inst))
        if len(insts) == cfg.trials:
            break
    search = search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed, starts=2)
    return bound_ratio(lhs, rhs, insts).with_search(search)


def prop67_flow_verdict(result) -> Verdict:
    """A bound (the first phase of the proof of Prop. 6.7, inside the proposition's hypotheses): the closer flanking
    neuron reaches eta/2 from the jump before T = 6 / Delta f^2, it is the one that was closer at the start, and
    Delta(u(tau)) >= D/2 on the way; the worse ratio <= 1 on the random instances and over the search."""
    return bound_verdict(result, {"ratio_max": 1.0})


FLOW_PRESETS = {"check": FlowConfig(), "paper": FlowConfig(trials=30, search_budget=600)}


# ------------------------------------------------------------------------------ approaches

def d_good_positions(v, per_piece, spacing, close):
    """A D-good initialisation for one jump ``v``: ``per_piece`` neurons on each side, ``spacing`` apart, the
    left flanking one at ``close`` from the jump, the right one at ``close + spacing`` (so that Delta(u) and
    |u^R + u^L - 2 v| are both ``spacing``)."""
    left = v - close - spacing * np.arange(per_piece)[::-1]
    right = v + close + spacing + spacing * np.arange(per_piece)
    return np.concatenate((left, right))


@dataclasses.dataclass(frozen=True)
class ApproachResult:
    """The conclusion's quantity along a ladder of the hypotheses' ratio x (< 1 outside the hypotheses, 1 at
    their edge), its log-log fit, and the extrapolation to x = 1 against the conclusion's threshold there."""

    x: tuple
    quantity: tuple
    threshold_at_1: float
    extrapolated: float
    fit: object
    expected: dict
    label: str
    xlabel: str
    extra: dict = dataclasses.field(default_factory=dict)

    def to_measured(self):
        return {**self.fit.to_measured(), "x": [float(a) for a in self.x],
                "quantity": [float(q) for q in self.quantity], "extrapolated_at_1": float(self.extrapolated),
                "threshold_at_1": float(self.threshold_at_1),
                "extrapolated_ratio": float(self.extrapolated / self.threshold_at_1), "rate_points": len(self.x),
                **{k: v for k, v in self.extra.items() if isinstance(v, (int, float))}}


def _fit(x, q):
    from theory.rates import fit_rate

    fit = fit_rate(np.asarray(x, float), np.asarray(q, float), n_boot=400)
    return fit, float(math.exp(fit.intercept))  # log q = intercept + slope log x: at x = 1, q = e^intercept


def approach_verdict(result: ApproachResult) -> Verdict:
    """A rate (the approach of a theorem to its hypotheses): the log-log slope of the conclusion's quantity in the
    hypotheses' ratio x meets the statement's law (``result.expected``: a slope and tolerance, or the largest slope
    the conclusion allows), over at least 5 points, and the fit extrapolated to x = 1 stays below the conclusion's
    threshold there."""
    m = result.to_measured()
    expected = dict(result.expected)
    if "slope" in expected:
        m["slope_deviation"] = abs(m["slope"] - expected.pop("slope"))
        expected["slope_deviation_max"] = expected.pop("tol")
    return threshold_verdict("rate", m, {**expected, "rate_points_min": 5, "extrapolated_ratio_max": 1.0},
                             context=f"{result.label} against x = {result.xlabel}, x = {min(result.x):.3g}.."
                                     f"{max(result.x):.3g}; extrapolated to x = 1: {result.extrapolated:.3g} against "
                                     f"{result.threshold_at_1:.3g}")


def approach_figure(result: ApproachResult, claim_id: str):
    """The quantity against x (log-log), the fit extrapolated to x = 1, and the threshold at x = 1."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    x = np.asarray(result.x)
    xx = np.geomspace(min(x.min(), 1.0) / 1.5, 1.5, 100)
    ax.loglog(x, result.quantity, "o", label=f"{result.label}, measured")
    ax.loglog(xx, np.exp(result.fit.intercept) * xx ** result.fit.slope, "C0--",
              label=f"fit, slope {result.fit.slope:.2f} [{result.fit.ci[0]:.2f}, {result.fit.ci[1]:.2f}], "
                    "extrapolated")
    ax.axvline(1.0, color="k", ls=":", label="x = 1: the hypotheses hold")
    ax.plot([1.0], [result.threshold_at_1], "rv", ms=9,
            label=f"conclusion's threshold at x = 1: {result.threshold_at_1:.2g}")
    ax.plot([1.0], [result.extrapolated], "C0*", ms=11, label=f"extrapolated: {result.extrapolated:.2g}")
    ax.set_xlabel(f"x = {result.xlabel} (hypotheses' ratio)")
    import textwrap

    ax.set_ylabel("\n".join(textwrap.wrap(result.label, 36)), fontsize=8)
    ax.set_title(f"{claim_id}: approach to the hypotheses", fontsize=9)
    ax.legend(fontsize=6)
    return save_figure(fig, claim_id)


@dataclasses.dataclass(frozen=True)
class ApproachConfig(Config):
    """Prop. 6.7's approach: one D-good initialisation (one jump, ``per_piece`` neurons on each side), eta decreasing
    until D_good(u(0)) / D(eta) reaches the last of ``ratios``."""

    jump: float = field(Real(0, 1, closed="neither"), 0.5, "The jump v_1 of the target (two pieces, values 0 and 1: "
                        "Delta f = M = 1).")
    per_piece: int = field(Int(low=6), 6, "Neurons on each side (>= 6, Definition 6.6 (a)).")
    spacing: float = field(Real(0, 0.2, closed="right"), 0.07, "Gap between neurons, also |u^R + u^L - 2 v|: the D "
                           "for which u(0) is D-good.")
    close: float = field(Real(0, 0.2, closed="right"), 0.005, "Distance of the left flanking neuron to the jump.")
    ratios: tuple = field(Reals(0, 1, closed="right", min_len=5, increasing=True),
                          (2.0 ** -8, 2.0 ** -7, 2.0 ** -6, 2.0 ** -5, 2.0 ** -4), "Hypotheses' ratios x = D_good / "
                          "D(eta) (1: inside the hypotheses; a rate needs at least 5; above 2^-4 the distance falls "
                          "to the float64 floor).")


def _one_jump(jump):
    return (float(jump),), (0.0, 1.0)


def measure_prop67_approach(cfg: ApproachConfig) -> ApproachResult:
    """Along the ladder of ratios: the distance of the closest neuron to the jump at T = 6 / Delta f^2 over eta (the
    conclusion: < 1), the flow integrated with tolerances 1e-12 relative, 1e-15 absolute."""
    import theory.two_timescale as T

    v, f = _one_jump(cfg.jump)
    n, dv, df, M = T.target_constants(v, f)
    u0 = d_good_positions(cfg.jump, cfg.per_piece, cfg.spacing, cfg.close)
    if u0[0] <= 0 or u0[-1] >= 1:
        raise ValueError(f"`spacing` of {type(cfg).__name__}: the {u0.size} neurons do not fit in (0, 1).")
    m = u0.size
    D_good = d_good_separation(u0, v, 1e-12)
    dist, seps = [], []
    for x in cfg.ratios:
        eta = _eta_for(D_good / x, m, M, df)
        if not T.separation(u0, eta) > 2 * eta:
            raise ValueError(f"`ratios` of {type(cfg).__name__}: at x = {x:g} (eta = {eta:.3g}) u(0) is not in U.")
        uT, sep, _ = limit_flow_lsoda(u0, T.recovery_horizon(df), eta, v, f, rtol=1e-12, atol=1e-15)
        dist.append(float(np.min(np.abs(uT - v[0]))) / eta if sep > 2 else math.inf)
        seps.append(sep)
    fit, at1 = _fit(cfg.ratios, dist)
    return ApproachResult(tuple(cfg.ratios), tuple(dist), 1.0, at1, fit, {"slope_max": 0.0},
                          "distance of the closest neuron to the jump at T, over eta", "D_good(u(0)) / D(eta)",
                          {"eta_at_1": _eta_for(D_good, m, M, df), "D_good": D_good, "m": m,
                           "smallest_separation_over_eta": min(seps)})


PROP67_APPROACH_PRESETS = {"check": ApproachConfig(),
                           "paper": ApproachConfig(ratios=tuple(2.0 ** k for k in range(-9, -3)))}


@dataclasses.dataclass(frozen=True)
class Thm68ApproachConfig(Config):
    """Thm 6.8's approach: u(0) i.i.d. uniform with m from (6.2), the limit (6.8) to T at sharpness eta from
    Delta(u(0)) / 4 down by halves."""

    jump: float = field(Real(0, 1, closed="neither"), 0.5, "The jump v_1 of the target (values 0 and 1).")
    delta: float = field(Real(0, 1, closed="neither"), 0.5, "Failure probability delta of (6.2) and Q.")
    xi: float = field(_POSITIVE, 1e-3, "Target accuracy xi of Thm 6.8 (Q depends on it).")
    n_eta: int = field(Int(low=5), 5, "Sharpness values (halving from Delta(u(0)) / 4; a rate needs at least 5).")
    seed: int = field(Seed(), 0, "Seed of the initial positions.")


def measure_thm68_approach(cfg: Thm68ApproachConfig) -> ApproachResult:
    """int |f* - f(.; a*(u(T)), u(T))|^2 along the ladder of eta, against x = Q / eta."""
    import theory.two_timescale as T

    v, f = _one_jump(cfg.jump)
    n, dv, df, M = T.target_constants(v, f)
    m = math.ceil(T.neurons_required(n, dv, cfg.delta))
    u0 = np.sort(np.random.default_rng(cfg.seed).uniform(0, 1, m))
    Q = T.theorem_6_8_threshold(cfg.xi, cfg.delta, m, n, df, M)
    sep0 = T.separation(u0, 1e-12)
    etas = [sep0 / 4 * 2.0 ** -k for k in range(cfg.n_eta)]
    errs, seps = [], []
    for eta in etas:
        uT, sep, _ = limit_flow_lsoda(u0, T.recovery_horizon(df), eta, v, f)
        errs.append(2 * T.reduced_loss(uT, eta, v, f) if sep > 2 else math.inf)
        seps.append(sep)
    x = [Q / e for e in etas][::-1]
    errs = errs[::-1]
    fit, at1 = _fit(x, errs)
    proof = [6 * M ** 2 * e * n for e in etas][::-1]
    return ApproachResult(tuple(x), tuple(errs), cfg.xi, at1, fit, {"slope": -1.0, "tol": 0.15},
                          "int |f* - f(.; a*(u(T)), u(T))|^2", "Q / eta",
                          {"Q": Q, "m": m, "largest_error_over_lemma_6_18": max(e / p for e, p in zip(errs, proof)),
                           "smallest_separation_over_eta": min(seps), "eta_min": min(etas), "eta_max": max(etas)})


def thm68_verdict(result: ApproachResult) -> Verdict:
    """A bound (Thm 6.8's conclusion at sharpness far above Q): from u(0) i.i.d. uniform with m from (6.2), the
    solution of (6.8) stays in U until T and int |f* - f(.; a*(u(T)), u(T))|^2 <= 6 M^2 eta n (the accuracy the
    proof delivers at that eta, through Lemma 6.18), at every eta of the ladder."""
    ratio = result.extra["largest_error_over_lemma_6_18"]
    return threshold_verdict("bound", {"ratio": ratio, "n_instances": len(result.x),
                                       "smallest_separation_over_eta": result.extra["smallest_separation_over_eta"]},
                             {"ratio_max": 1.0, "smallest_separation_over_eta_above": 2.0},
                             context=f"m = {result.extra['m']} from (6.2), eta = {result.extra['eta_min']:.3g}.."
                                     f"{result.extra['eta_max']:.3g} (Q = {result.extra['Q']:.3g}); max error / "
                                     "(6 M^2 eta n); smallest Delta(u(tau)) / eta on [0, T]")


THM68_APPROACH_PRESETS = {"check": Thm68ApproachConfig(), "paper": Thm68ApproachConfig(n_eta=8)}


@dataclasses.dataclass(frozen=True)
class Thm62ApproachConfig(Config):
    """Thm 6.2's approach: gradient descent at ratio eps from a = 0 and the limit (6.8) from one D-good
    initialisation (one jump, ``per_piece`` neurons on each side), both to T = 6 / (eps Delta f^2), eps
    decreasing."""

    jump: float = field(Real(0, 1, closed="neither"), 0.5, "The jump v_1 of the target (values 0 and 1).")
    eta: float = field(Real(0, 1, closed="right"), 1e-4, "Sharpness.")
    delta: float = field(Real(0, 1, closed="neither"), 0.5, "Failure probability delta of Q_2.")
    xi: float = field(_POSITIVE, 1e-3, "Target accuracy xi of Q_2.")
    eps_values: tuple = field(Reals(0, closed="neither", min_len=5), (5e-3, 2.5e-3, 1.25e-3, 6.25e-4, 3.125e-4),
                              "Ratios eps (a rate needs at least 5; the distance is O(eps) below about 0.1 / m).")
    per_piece: int = field(Int(low=6), 12, "Neurons on each side of the jump (>= 6, Definition 6.6 (a)): m = "
                           "2 per_piece.")
    spacing: float = field(Real(0, 0.2, closed="right"), 0.035, "Gap between neurons, also |u^R + u^L - 2 v|: the "
                           "D for which u(0) is D-good.")
    max_work: float = field(_POSITIVE, 1e11, "Work budget of each gradient-descent run (floating-point operations, "
                            "theory.two_timescale.gradient_descent; the paper preset's m = 66 needs 2e12).")


def measure_thm62_approach(cfg: Thm62ApproachConfig) -> ApproachResult:
    """max_j |u_GD,j(T) - u_limit,j(T)| along the ladder of eps, against x = Q_2 / eps."""
    import theory.two_timescale as T

    v, f = _one_jump(cfg.jump)
    n, dv, df, M = T.target_constants(v, f)
    u0 = d_good_positions(cfg.jump, cfg.per_piece, cfg.spacing, 0.005)
    if u0[0] <= 0 or u0[-1] >= 1:
        raise ValueError(f"`spacing` of {type(cfg).__name__}: the {u0.size} neurons do not fit in (0, 1).")
    m = u0.size
    tau = T.recovery_horizon(df)
    uL, sep, _ = limit_flow_lsoda(u0, tau, cfg.eta, v, f, rtol=1e-10)
    err_limit = 2 * T.reduced_loss(uL, cfg.eta, v, f)
    H, _ = T.gram(u0, cfg.eta, v, f)
    h = 1.0 / float(np.linalg.eigvalsh(H)[-1])
    _, Q2 = T.theorem_6_2_thresholds(cfg.xi, cfg.delta, m, df, M)
    dist, errs = [], []
    for e in cfg.eps_values:
        steps = max(1, int(round(tau / (e * h))))
        tr = T.gradient_descent(np.zeros(m + 1), u0, e, tau / (e * steps), steps, cfg.eta, v, f, record_every=steps,
                                max_work=cfg.max_work)
        dist.append(float(np.abs(tr.u[-1] - uL).max()))
        errs.append(2 * T.loss(tr.a[-1], tr.u[-1], cfg.eta, v, f))
    order = np.argsort([Q2 / e for e in cfg.eps_values])
    x = [Q2 / cfg.eps_values[i] for i in order]
    dist = [dist[i] for i in order]
    fit, at1 = _fit(x, dist)
    return ApproachResult(tuple(x), tuple(dist), cfg.eta, at1, fit, {"slope": -1.0, "tol": 0.15},
                          "max_j |u_GD,j(T) - u_limit,j(T)|", "Q_2 / eps",
                          {"Q2": Q2, "m": m, "eta": cfg.eta, "error_limit": err_limit,
                           "error_gd_smallest_eps": errs[int(np.argmin(cfg.eps_values))],
                           "proof_accuracy": 2 * 6 * M ** 2 * cfg.eta * n, "limit_separation_over_eta": sep})


def thm62_verdict(result: ApproachResult) -> Verdict:
    """A bound (Thm 6.2's conclusion at eps and eta far above Q_2, Q_1): gradient descent from a = 0 at the smallest
    eps of the ladder ends, at T = 6 / (eps Delta f^2), with int |f* - f(.; a(T), u(T))|^2 <= 12 M^2 eta n (twice
    the Lemma 6.18 accuracy: the proof's xi/2 + xi/2 at that eta)."""
    e = result.extra
    return threshold_verdict("bound", {"ratio": e["error_gd_smallest_eps"] / e["proof_accuracy"], "n_instances": 1},
                             {"ratio_max": 1.0},
                             context=f"m = {e['m']}, eta = {e['eta']:g}, "
                                     f"eps = {min(1 / np.asarray(result.x)) * e['Q2']:.3g}"
                                     f" (Q_2 = {e['Q2']:.3g}): error {e['error_gd_smallest_eps']:.3g} against "
                                     f"12 M^2 eta n = {e['proof_accuracy']:.3g} (the limit's: {e['error_limit']:.3g})")


#: check: m = 24, 7.5 s (slope -1.00); paper: m = 66 >= (6.2) (Delta v = 1/2, n = 2, delta = 1/2: m >= 64.6), the
#: distance O(eps) from eps = 1.25e-3 on (at 5e-3 and 2.5e-3 it is still 0.019), 12 minutes (slope -0.94)
THM62_APPROACH_PRESETS = {"check": Thm62ApproachConfig(),
                          "paper": Thm62ApproachConfig(per_piece=33, spacing=0.0145, max_work=2e12,
                                                       eps_values=(1.25e-3, 6.25e-4, 3.125e-4, 1.5625e-4, 7.8125e-5))}


register("two_timescale.prop67_flow", config=FlowConfig, presets=FLOW_PRESETS, measure=measure_prop67_flow,
         verdict=prop67_flow_verdict, claims=(f"{PROP_67}/step-first-phase",), summary=lambda r: r.to_measured())
register("two_timescale.prop67_approach", config=ApproachConfig, presets=PROP67_APPROACH_PRESETS,
         measure=measure_prop67_approach, verdict=approach_verdict, claims=(f"{PROP_67}/approach",),
         summary=lambda r: r.to_measured())
register("two_timescale.thm68_approach", config=Thm68ApproachConfig, presets=THM68_APPROACH_PRESETS,
         measure=measure_thm68_approach, verdict=approach_verdict,
         claims={f"{THM_68}/approach": None, THM_68: thm68_verdict}, summary=lambda r: r.to_measured())
register("two_timescale.thm62_approach", config=Thm62ApproachConfig, presets=THM62_APPROACH_PRESETS,
         measure=measure_thm62_approach, verdict=approach_verdict,
         claims={f"{THM_62}/approach": None, THM_62: thm62_verdict}, summary=lambda r: r.to_measured())
