"""Experiments of the ``two-timescale`` paper key: the two-timescale regime of a shallow network with a
piecewise-constant target (thesis (Marion), chapter 6).

Registered as ``"two_timescale.<name>"``:

* ``envelope`` (``two-timescale/rem-6.3``): grad of u -> L(a*(u), u) (central differences) equals
  (grad_u L)(a*(u), u).
* ``hessian`` (``two-timescale/prop-6.4``): lambda_min(H(u)) >= Delta(u) / 8 on U.
* ``lipschitz`` (``two-timescale/prop-6.5``): G(u) = (grad_u L)(a*(u), u) is Lipschitz on U: ||DG|| converges
  as a flanking pair closes in on the edge Delta(u) = 2 eta, Lipschitz quotients agree with ||DG||, and the
  proof's bound ||a*(u)|| <= 8 M sqrt(m + 1) / Delta(u) holds.
* ``flanking`` (``two-timescale/lemma-6.13/hypothesis``, ``two-timescale/lemma-6.13/erratum``): Lemma 6.13's
  flanking-neuron formulae are exact when the flanking neurons are >= eta/2 from their jump and not below;
  the printed first display is d/du^L, not d/du^R.
* ``heaviside`` (``two-timescale/eq-6.6``, ``two-timescale/eq-6.7``): the closed forms (6.6)-(6.7) against
  the best piecewise-constant fit, and the limit (6.8) at sharpness eta against them (error O(eta)); the
  invariant (d^R)^3 - (d^L)^3 and the hitting time along a numerical integration of (6.7).
* ``tracking`` (``two-timescale/prop-6.9``): ||a(t) - a*(u(t))|| along gradient descent against Prop. 6.9's
  bound inside its hypotheses, and the quasi-static lag proportional to eps outside them.
* ``eps_limit`` (``two-timescale/sec-6.5.2``): gradient descent at ratio eps tends to the two-timescale
  limit as eps -> 0, at rate eps.
* ``dgood`` (``two-timescale/lemma-6.19``): frequency of D-good uniform initialisations.
* ``fig64`` (``two-timescale/fig-6.4``, ``two-timescale/fig-6.5``): sparse motion and recovery for small
  eps, non-sparse motion for eps = 1 (thesis target of App. 6.C, m = 20, eta = 0.004).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.claims import Verdict, qualitative_verdict

from . import register
from ._fields import integer, positive, positives

__all__ = [
    "EnvelopeConfig", "measure_envelope", "envelope_verdict",
    "HessianConfig", "measure_hessian", "hessian_verdict",
    "HeavisideConfig", "measure_heaviside", "heaviside_loss_verdict", "heaviside_velocity_verdict",
    "heaviside_invariant_verdict", "heaviside_figure",
    "TrackingConfig", "measure_tracking", "tracking_bound_verdict", "tracking_lag_verdict", "tracking_figure",
    "EpsLimitConfig", "measure_eps_limit", "eps_limit_verdict", "eps_limit_figure",
    "DGoodConfig", "measure_dgood", "dgood_verdict",
    "Fig64Config", "measure_fig64", "fig64_verdict", "fig64_figure",
    "Fig63Config", "measure_fig63", "fig63_verdict", "fig63_figure", "fig67_verdict", "fig67_figure", "fig67_transition", "LemmasConfig", "measure_lemmas", "lemma_verdict", "lemma_identity_verdict", "RecoveryConfig", "measure_recovery", "recovery_verdict",
    "LipschitzConfig", "LipschitzResult", "measure_lipschitz", "lipschitz_verdict",
    "FlankingConfig", "FlankingResult", "measure_flanking", "flanking_verdict", "flanking_erratum_verdicts",
]


def _target(v, f, cls):
    from theory.two_timescale import validate_target

    try:
        validate_target(v, f)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`v`/`f` of {cls}: {exc}") from None


def _spread_positions(rng, v, per_piece, margin):
    """Uniform positions, ``per_piece`` in each piece, at least ``margin`` from the jumps and ends."""
    edges = np.concatenate(([0.0], np.asarray(v, float), [1.0]))
    return np.sort(np.concatenate([rng.uniform(lo + margin, hi - margin, per_piece)
                                   for lo, hi in zip(edges[:-1], edges[1:])]))


# ------------------------------------------------------------------------------ Remark 6.3

@dataclasses.dataclass(frozen=True)
class EnvelopeConfig:
    """Envelope identity of Remark 6.3 at random positions.

    Attributes
    ----------
    v, f : tuple of float
        Target jumps and values (default: the target of App. 6.C).
    m : int
        Number of neurons.
    eta : float
        Sharpness of sigma_eta, in (0, 1].
    trials : int
        Random position vectors (sorted uniform, kept when Delta(u) > 2 eta).
    step : float
        Central-difference step.
    seed : int
        Seed of the positions.
    use_partial : bool
        True for the claim; False replaces (grad_u L)(a*, u) by (grad_u L)(a*/2, u) (negative control).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    m: int = 12
    eta: float = 0.004
    trials: int = 5
    step: float = 1e-6
    seed: int = 0
    use_partial: bool = True

    def __post_init__(self):
        cls = "EnvelopeConfig"
        _target(self.v, self.f, cls)
        integer(self.m, "m", cls, 1)
        positive(self.eta, "eta", cls, 1.0)
        integer(self.trials, "trials", cls, 1)
        positive(self.step, "step", cls, 0.1)
        integer(self.seed, "seed", cls, 0)
        if not isinstance(self.use_partial, bool):
            raise TypeError(f"`use_partial` of {cls} must be a bool; got {self.use_partial!r}.")


@dataclasses.dataclass(frozen=True)
class EnvelopeResult:
    """Largest |FD - partial gradient| relative to max |partial gradient|, over the trials."""

    max_rel_error: float
    max_gradient: float
    trials: int

    def to_measured(self):
        return dataclasses.asdict(self)


def _random_u(rng, m, eta):
    """Sorted positions with Delta(u) >= 2.5 eta (u_0 = -eta/2, u_(m+1) = 1 + eta/2 included): uniform
    order statistics on the shortened interval, shifted apart by the gap."""
    g = 2.5 * eta
    room = 1 + eta - (m + 1) * g
    if room <= 0:
        raise ValueError(f"m = {m} neurons cannot be 2.5 eta apart in [0, 1] at eta = {eta}; lower `m` or `eta`.")
    x = np.sort(rng.uniform(0, room, m))
    return -eta / 2 + x + g * np.arange(1, m + 1)


def measure_envelope(cfg: EnvelopeConfig) -> EnvelopeResult:
    """Central differences of u -> L(a*(u), u) against (grad_u L)(a*(u), u)."""
    import theory.two_timescale as T

    rng = np.random.default_rng(cfg.seed)
    worst, gmax = 0.0, 0.0
    for _ in range(cfg.trials):
        u = _random_u(rng, cfg.m, cfg.eta)
        a = T.optimal_weights(u, cfg.eta, cfg.v, cfg.f)
        g = T.gradient(a if cfg.use_partial else 0.5 * a, u, cfg.eta, cfg.v, cfg.f)[1]
        fd = np.empty(cfg.m)
        for j in range(cfg.m):
            e = np.zeros(cfg.m)
            e[j] = cfg.step
            fd[j] = (T.reduced_loss(u + e, cfg.eta, cfg.v, cfg.f) - T.reduced_loss(u - e, cfg.eta, cfg.v, cfg.f)) / (2 * cfg.step)
        scale = max(float(np.abs(g).max()), 1e-300)
        worst = max(worst, float(np.abs(fd - g).max()) / scale)
        gmax = max(gmax, scale)
    return EnvelopeResult(worst, gmax, cfg.trials)


def envelope_verdict(result: EnvelopeResult, tol: float = 1e-6) -> Verdict:
    """Pass iff the relative difference is below ``tol`` (central differences with step 1e-6 reach ~1e-8)."""
    ok = math.isfinite(result.max_rel_error) and result.max_rel_error <= tol
    return qualitative_verdict(ok, f"max |d/du L(a*(u),u) (central diff.) - (grad_u L)(a*(u),u)| / max|grad| = "
                               f"{result.max_rel_error:.2e} over {result.trials} draws, expected <= {tol:g}")


ENVELOPE_PRESETS = {
    "check": EnvelopeConfig(),
    # App. 6.C: m = 20 neurons, eta = 4e-3
    "paper": EnvelopeConfig(m=20, trials=50),
}


# ------------------------------------------------------------------------------ Prop. 6.4

@dataclasses.dataclass(frozen=True)
class HessianConfig:
    """lambda_min(H(u)) against Delta(u)/8 (Prop. 6.4) at random u in U.

    Attributes
    ----------
    v, f : tuple of float
        Target (H does not depend on it; it fixes the quadrature breakpoints).
    m_values : tuple of int
        Numbers of neurons.
    eta : float
        Sharpness, in (0, 1].
    trials : int
        Draws per m.
    seed : int
        Seed.
    bound_factor : float
        The bound is bound_factor * Delta(u) / 8 (1 for the claim; a control raises it).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    m_values: tuple = (3, 6, 12, 20, 25)
    eta: float = 0.004
    trials: int = 20
    seed: int = 0
    bound_factor: float = 1.0

    def __post_init__(self):
        cls = "HessianConfig"
        _target(self.v, self.f, cls)
        if not isinstance(self.m_values, tuple) or not self.m_values:
            raise ValueError(f"`m_values` of {cls} must be a non-empty tuple; got {self.m_values!r}.")
        for m in self.m_values:
            integer(m, "m_values", cls, 1)
        positive(self.eta, "eta", cls, 1.0)
        integer(self.trials, "trials", cls, 1)
        integer(self.seed, "seed", cls, 0)
        positive(self.bound_factor, "bound_factor", cls)


def measure_hessian(cfg: HessianConfig):
    """BoundResult of lambda_min(H(u)) <= ... read as Delta(u)/8 <= lambda_min: ratio = bound / lambda_min."""
    import theory.two_timescale as T
    from theory.rates import bound_ratio

    rng = np.random.default_rng(cfg.seed)
    lhs, rhs, inst = [], [], []
    for m in cfg.m_values:
        for _ in range(cfg.trials):
            u = _random_u(rng, m, cfg.eta)
            lhs.append(cfg.bound_factor * T.separation(u, cfg.eta) / 8)
            rhs.append(T.min_eigenvalue(u, cfg.eta, cfg.v, cfg.f))
            inst.append({"m": m})
    return bound_ratio(lhs, rhs, inst)


def hessian_verdict(result) -> Verdict:
    """Pass iff Delta(u)/8 <= lambda_min(H(u)) at every draw (ratio <= 1)."""
    ok = result.ratio <= 1.0
    return qualitative_verdict(ok, f"max over {result.n_instances} draws of (Delta(u)/8) / lambda_min(H(u)) = "
                               f"{result.ratio:.3f}, expected <= 1")


HESSIAN_PRESETS = {"check": HessianConfig(), "paper": HessianConfig(m_values=(20,), trials=200)}  # App. 6.C: m = 20


# ------------------------------------------------------------------------------ (6.6), (6.7)

@dataclasses.dataclass(frozen=True)
class HeavisideConfig:
    """The Heaviside closed forms (6.6)-(6.7) against the best fit, the eta-limit and an ODE solver.

    Attributes
    ----------
    v, f : tuple of float
        Target (App. 6.C by default).
    per_piece : int
        Neurons per piece (>= 2, the assumption of Section 6.4.2).
    etas : tuple of float
        Sharpness values for the eta -> 0 comparison (geometric ladder).
    trials : int
        Random position vectors.
    tau_end : float
        Horizon of the flow comparison (slow time), before the first neuron reaches its jump.
    dtau : float
        RK4 step of the limit (6.8).
    margin : float
        Smallest initial distance of a neuron to a jump or to 0, 1 (> eta, and > max velocity x tau_end).
    seed : int
        Seed.
    jump_scale : float
        Multiplies the squared jumps in the closed forms (1 for the claim; 2 mimics a loss without the 1/2).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    per_piece: int = 3
    etas: tuple = (8e-4, 4e-4, 2e-4, 1e-4, 5e-5)
    trials: int = 4
    tau_end: float = 0.002
    dtau: float = 1e-4
    margin: float = 0.03
    seed: int = 0
    jump_scale: float = 1.0

    def __post_init__(self):
        cls = "HeavisideConfig"
        _target(self.v, self.f, cls)
        integer(self.per_piece, "per_piece", cls, 2)
        positives(self.etas, "etas", cls, 1.0)
        integer(self.trials, "trials", cls, 1)
        positive(self.tau_end, "tau_end", cls)
        positive(self.dtau, "dtau", cls)
        positive(self.margin, "margin", cls, 0.5)
        if self.margin <= max(self.etas):
            raise ValueError(f"`margin` of {cls} must exceed max(etas) = {max(self.etas)}; got {self.margin}.")
        integer(self.seed, "seed", cls, 0)
        positive(self.jump_scale, "jump_scale", cls)


@dataclasses.dataclass(frozen=True)
class HeavisideResult:
    """Errors of the closed forms.

    loss_identity_error: max |(6.6) - best piecewise-constant fit| (relative);
    loss_eta_error, velocity_eta_error, flow_eta_error: per eta, max over trials of |L*_eta - (6.6)|,
    max |(-grad_u L_eta)(a*_eta) - (6.7)|, max_tau |u_eta(tau) - u_0(tau)|;
    invariant_drift: max relative change of (d^R)^3 - (d^L)^3 along the solver's solution of (6.7);
    hitting_error: max |closed-form hitting time - solver's event time| / hitting time.
    """

    etas: tuple
    loss_identity_error: float
    loss_eta_error: tuple
    velocity_eta_error: tuple
    flow_eta_error: tuple
    invariant_drift: float
    hitting_error: float

    def to_measured(self):
        return dataclasses.asdict(self)


def measure_heaviside(cfg: HeavisideConfig) -> HeavisideResult:
    """Closed forms (6.6)-(6.7) vs exact best fit, vs the eta-limit (6.8), vs a solver of (6.7)."""
    import theory.two_timescale as T
    from scipy.integrate import solve_ivp

    rng = np.random.default_rng(cfg.seed)
    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    us = [_spread_positions(rng, v, cfg.per_piece, cfg.margin) for _ in range(cfg.trials)]
    ident = 0.0
    le = np.zeros(len(cfg.etas))
    ve = np.zeros(len(cfg.etas))
    fe = np.zeros(len(cfg.etas))
    drift = hit = 0.0
    for u in us:
        closed = cfg.jump_scale * T.heaviside_loss_closed_form(u, v, f)
        best = T.heaviside_loss(u, v, f)
        ident = max(ident, abs(closed - best) / best)
        vel = cfg.jump_scale * T.heaviside_velocities(u, v, f)
        taus = np.arange(0, cfg.tau_end + 1e-15, cfg.dtau)
        U0 = u[None, :] + 0 * taus[:, None]
        # reference flow of (6.7) (scaled), DOP853
        L, R = T.flanking(u, v)
        for i in range(v.size):
            j2 = cfg.jump_scale * (f[i + 1] - f[i]) ** 2

            def rhs(_t, y, vi=v[i], j2=j2):
                w = (y[1] - y[0]) ** 2
                return [0.5 * (y[1] - vi) ** 2 / w * j2, -0.5 * (vi - y[0]) ** 2 / w * j2]

            def ev(_t, y, vi=v[i]):
                return min(vi - y[0], y[1] - vi)

            ev.terminal = True
            sol = solve_ivp(rhs, (0, 50.0), [u[L[i]], u[R[i]]], method="DOP853", rtol=1e-12, atol=1e-14,
                            events=ev, dense_output=True)
            yy = sol.sol(taus)
            U0[:, L[i]], U0[:, R[i]] = yy[0], yy[1]
            inv = T.heaviside_invariant(sol.y[0], sol.y[1], v[i])
            drift = max(drift, float(np.max(np.abs(inv - inv[0])) / abs(inv[0])))
            tstar, _ = T.heaviside_hitting_time(u[L[i]], u[R[i]], v[i], f[i + 1] - f[i])
            tstar /= cfg.jump_scale
            hit = max(hit, abs(sol.t_events[0][0] - tstar) / tstar)
        for k, eta in enumerate(cfg.etas):
            le[k] = max(le[k], abs(T.reduced_loss(u, eta, v, f) - closed))
            a = T.optimal_weights(u, eta, v, f)
            ve[k] = max(ve[k], float(np.abs(-T.gradient(a, u, eta, v, f)[1] - vel).max()))
            tr = T.limit_flow(u, cfg.tau_end, cfg.dtau, eta, v, f)
            fe[k] = max(fe[k], float(np.abs(tr.u - U0[: tr.u.shape[0]]).max()))
    return HeavisideResult(tuple(cfg.etas), ident, tuple(le), tuple(ve), tuple(fe), drift, hit)


def _plain_minor_ticks(ax):
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())


def _slope(x, y):
    from theory.rates import fit_rate

    return fit_rate(np.asarray(x, float), np.asarray(y, float), n_boot=200)


def heaviside_loss_verdict(result: HeavisideResult, tol_identity=1e-10, tol_slope=0.15) -> Verdict:
    """(6.6) equals the best fit (relative error <= 1e-10) and |L*_eta - (6.6)| = O(eta) (slope 1 +- 0.15)."""
    fit = _slope(result.etas, result.loss_eta_error)
    ok = result.loss_identity_error <= tol_identity and abs(fit.slope - 1) <= tol_slope
    return qualitative_verdict(ok, f"|(6.6) - best piecewise-constant fit| / fit = {result.loss_identity_error:.1e} "
                               f"(<= {tol_identity:g}); |L(a*_eta(u),u) - (6.6)| ~ eta^{fit.slope:.3f} "
                               f"(expected 1 +- {tol_slope}), eta = {min(result.etas):g}..{max(result.etas):g}")


def heaviside_velocity_verdict(result: HeavisideResult, tol_slope=0.15) -> Verdict:
    """The limit's velocities and trajectories at sharpness eta tend to (6.7) at rate eta (slopes 1 +- 0.15)."""
    fv = _slope(result.etas, result.velocity_eta_error)
    ff = _slope(result.etas, result.flow_eta_error)
    ok = abs(fv.slope - 1) <= tol_slope and abs(ff.slope - 1) <= tol_slope
    return qualitative_verdict(ok, f"max |-(grad_u L_eta)(a*_eta(u),u) - (6.7)| ~ eta^{fv.slope:.3f}, max_tau "
                               f"|u_eta(tau) - u_(6.7)(tau)| ~ eta^{ff.slope:.3f} (expected 1 +- {tol_slope}); at "
                               f"eta = {min(result.etas):g}: {result.velocity_eta_error[-1]:.2e}, "
                               f"{result.flow_eta_error[-1]:.2e}")


def heaviside_invariant_verdict(result: HeavisideResult, tol=1e-8) -> Verdict:
    """(d^R)^3 - (d^L)^3 is conserved by a solver of (6.7) and the closed-form hitting time matches its event."""
    ok = result.invariant_drift <= tol and result.hitting_error <= tol
    return qualitative_verdict(ok, f"relative drift of (d^R)^3 - (d^L)^3 along DOP853 (rtol 1e-12): "
                               f"{result.invariant_drift:.1e}; |tau* closed form - event time| / tau* = "
                               f"{result.hitting_error:.1e} (expected <= {tol:g})")


def heaviside_figure(result: HeavisideResult, claim_id="two-timescale/eq-6.7"):
    """Errors of the eta-limit against the Heaviside closed forms, log-log in eta, slope-1 guide."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    e = np.asarray(result.etas)
    for y, lab in ((result.loss_eta_error, "|L*_eta - (6.6)|"), (result.velocity_eta_error, "velocity vs (6.7)"),
                   (result.flow_eta_error, "trajectory vs (6.7)")):
        ax.loglog(e, y, "o-", label=lab)
    ax.loglog(e, result.velocity_eta_error[0] * e / e[0] * 1.5, "k--", label="slope 1, predicted (guide)")
    _plain_minor_ticks(ax)
    ax.set_xlabel("sharpness eta")
    ax.set_ylabel("max error over draws")
    ax.set_title(f"{claim_id}: eta-limit vs Heaviside closed forms", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


HEAVISIDE_PRESETS = {
    "check": HeavisideConfig(),
    # App. 6.C: eta = 4e-3, m = 20 (about 3 neurons per piece)
    "paper": HeavisideConfig(trials=50, etas=(1.6e-2, 8e-3, 4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4)),
}


# ------------------------------------------------------------------------------ Prop. 6.9

@dataclasses.dataclass(frozen=True)
class TrackingConfig:
    """||a(t) - a*(u(t))|| along gradient descent at ratio eps (Prop. 6.9).

    Attributes
    ----------
    v, f : tuple of float
        Target (one jump by default, so that M = 1 and D can be large).
    per_piece : int
        Neurons per piece, evenly spread.
    eta : float
        Sharpness.
    h : float
        Step of the fast variable (t = k h).
    t_end : float
        Horizon in t.
    lag_eps : tuple of float
        Ratios for the lag measurement (outside the hypotheses: a proxy).
    lag_t_end : float
        Horizon of the lag runs (long enough for the transient to die).
    bound_scale : float
        Multiplies Prop. 6.9's bound (1 for the claim; a control shrinks it).
    """

    v: tuple = (0.5,)
    f: tuple = (0.0, 1.0)
    per_piece: int = 3
    eta: float = 0.001
    h: float = 0.5
    t_end: float = 3000.0
    lag_eps: tuple = (4e-5, 2e-5, 1e-5, 5e-6, 2.5e-6)
    lag_t_end: float = 800.0
    bound_scale: float = 1.0

    def __post_init__(self):
        cls = "TrackingConfig"
        _target(self.v, self.f, cls)
        integer(self.per_piece, "per_piece", cls, 2)
        positive(self.eta, "eta", cls, 1.0)
        positive(self.h, "h", cls)
        positive(self.t_end, "t_end", cls)
        positives(self.lag_eps, "lag_eps", cls)
        positive(self.lag_t_end, "lag_t_end", cls)
        positive(self.bound_scale, "bound_scale", cls)


@dataclasses.dataclass(frozen=True)
class TrackingResult:
    """ratio: max_t ||a - a*|| / bound (inside the hypotheses, eps = the threshold of Prop. 6.9);
    decay_rate: fitted exponential decay rate of ||a - a*|| early on, against D/16;
    lag: per eps of ``lag_eps``, max ||a - a*(u)|| over the last quarter of the run (transient gone)."""

    D: float
    eps: float
    ratio: float
    decay_rate: float
    d_over_16: float
    lag_eps: tuple
    lag: tuple
    t: tuple
    dist: tuple
    bound: tuple

    def to_measured(self):
        d = dataclasses.asdict(self)
        for k in ("t", "dist", "bound", "lag_eps", "lag"):
            d.pop(k)
        d["n_instances"] = len(self.t)
        return d


def _even_positions(v, per_piece):
    edges = np.concatenate(([0.0], np.asarray(v, float), [1.0]))
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        out.extend(lo + (hi - lo) * (np.arange(per_piece) + 0.5 + 0.17) / (per_piece + 0.5))
    return np.sort(np.array(out))


def _dist_to_opt(traj, eta, v, f):
    import theory.two_timescale as T

    return np.array([np.linalg.norm(a - T.optimal_weights(u, eta, v, f)) for a, u in zip(traj.a, traj.u)])


def measure_tracking(cfg: TrackingConfig) -> TrackingResult:
    """Gradient descent from a = 0 at eps = Prop. 6.9's threshold (D = Delta(u(0))), then at larger eps."""
    import theory.two_timescale as T

    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    _, _, _, M = T.target_constants(v, f)
    u0 = _even_positions(v, cfg.per_piece)
    m = u0.size
    D = T.separation(u0, cfg.eta)
    eps = T.prop_6_9_eps_max(D, M, m)
    steps = int(round(cfg.t_end / cfg.h))
    every = max(1, steps // 200)
    tr = T.gradient_descent(np.zeros(m + 1), u0, eps, cfg.h, steps, cfg.eta, v, f, record_every=every)
    t = np.arange(tr.a.shape[0]) * every * cfg.h
    dist = _dist_to_opt(tr, cfg.eta, v, f)
    bound = cfg.bound_scale * T.prop_6_9_bound(t, eps, D, M, m)
    ratio = float(np.max(dist / bound))
    if np.min(T.separation(tr.u[-1], cfg.eta)) < D / 2:
        ratio = math.inf  # hypothesis Delta(u(s)) >= D/2 broken: the measurement does not apply
    keep = (dist > 1e-10 * dist[0]) & (t <= cfg.t_end / 3)
    rate = float(-np.polyfit(t[keep], np.log(dist[keep]), 1)[0])
    lags = []
    for e in cfg.lag_eps:
        n = int(round(cfg.lag_t_end / cfg.h))
        ev = max(1, n // 100)
        tl = T.gradient_descent(np.zeros(m + 1), u0, e, cfg.h, n, cfg.eta, v, f, record_every=ev)
        dl = _dist_to_opt(tl, cfg.eta, v, f)
        lags.append(float(dl[3 * dl.size // 4:].max()))
    return TrackingResult(D, eps, ratio, rate, D / 16, tuple(cfg.lag_eps), tuple(lags), tuple(t), tuple(dist),
                          tuple(bound))


def tracking_bound_verdict(result: TrackingResult) -> Verdict:
    """Pass iff ||a(t) - a*(u(t))|| <= Prop. 6.9's bound for all t and the early decay rate is >= D/16."""
    ok = result.ratio <= 1.0 and result.decay_rate >= result.d_over_16
    return qualitative_verdict(ok, f"max_t ||a(t) - a*(u(t))|| / bound = {result.ratio:.2e} (<= 1) at eps = "
                               f"{result.eps:.2e} (the threshold), D = {result.D:.3f}; decay rate "
                               f"{result.decay_rate:.4f} >= D/16 = {result.d_over_16:.4f}")


def tracking_lag_verdict(result: TrackingResult, tol=0.15):
    """The quasi-static lag max ||a - a*(u)|| (last quarter of the run) is proportional to eps (slope 1 +- tol)."""
    fit = _slope(result.lag_eps, result.lag)
    ok = abs(fit.slope - 1) <= tol
    return qualitative_verdict(ok, f"lag ||a - a*(u)|| ~ eps^{fit.slope:.3f} (expected 1 +- {tol}; Prop. 6.9's "
                               f"second term), eps = {min(result.lag_eps):g}..{max(result.lag_eps):g}")


def tracking_figure(result: TrackingResult, claim_id="two-timescale/prop-6.9"):
    """||a(t) - a*(u(t))|| and the bound of Prop. 6.9 against t; lag against eps."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(10, 4))
    ax = axes[0]
    ax.semilogy(result.t, result.dist, label="||a(t) - a*(u(t))||, measured")
    ax.semilogy(result.t, result.bound, "k--", label="Prop. 6.9 bound")
    ax.set_xlabel("t")
    ax.set_title(f"{claim_id}: eps = {result.eps:.1e} (threshold)", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[1]
    e = np.asarray(result.lag_eps)
    ax.loglog(e, result.lag, "o-", label="lag, measured")
    ax.loglog(e, result.lag[0] * e / e[0], "k--", label="slope 1, predicted (guide)")
    _plain_minor_ticks(ax)
    ax.set_xlabel("eps")
    ax.set_title(f"{claim_id}/lag: lag vs eps (proxy: eps above threshold)", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


TRACKING_PRESETS = {"check": TrackingConfig(), "paper": TrackingConfig(per_piece=10, t_end=20000.0)}  # no sizes in the thesis


# ------------------------------------------------------------------------------ Section 6.5.2

@dataclasses.dataclass(frozen=True)
class EpsLimitConfig:
    """Gradient descent at ratio eps against the two-timescale limit (6.8) on [0, tau_end].

    Attributes
    ----------
    v, f : tuple of float
        Target.
    per_piece : int
        Random neurons per piece.
    eta : float
        Sharpness.
    h : float
        Step of a.
    eps_values : tuple of float
        Ratios (geometric ladder, decreasing).
    tau_end : float
        Slow-time horizon.
    dtau : float
        RK4 step of the limit.
    seed : int
        Seed of the positions.
    a0_optimal : bool
        Start a at a*(u(0)) (True) or at 0 as in Thm 6.2 (False).
    """

    v: tuple = (0.3, 0.6)
    f: tuple = (0.0, 1.0, -0.5)
    per_piece: int = 3
    eta: float = 0.02
    h: float = 0.2
    eps_values: tuple = (1.6e-4, 8e-5, 4e-5, 2e-5, 1e-5)
    tau_end: float = 0.1
    dtau: float = 1e-3
    seed: int = 0
    a0_optimal: bool = False

    def __post_init__(self):
        cls = "EpsLimitConfig"
        _target(self.v, self.f, cls)
        integer(self.per_piece, "per_piece", cls, 1)
        positive(self.eta, "eta", cls, 1.0)
        positive(self.h, "h", cls)
        positives(self.eps_values, "eps_values", cls)
        positive(self.tau_end, "tau_end", cls)
        positive(self.dtau, "dtau", cls)
        integer(self.seed, "seed", cls, 0)


@dataclasses.dataclass(frozen=True)
class EpsLimitResult:
    """errors: per eps, max over the shared tau grid of ||u_GD(tau / eps) - u_limit(tau)||_inf;
    loss_gd / loss_limit: losses along the smallest-eps run and the limit, for the figure."""

    eps_values: tuple
    errors: tuple
    tau: tuple
    loss_gd: tuple
    loss_limit: tuple

    def to_measured(self):
        return {"eps_values": list(self.eps_values), "errors": list(self.errors)}


def measure_eps_limit(cfg: EpsLimitConfig) -> EpsLimitResult:
    """Run the limit with RK4, then gradient descent at each eps, compared on the limit's tau grid."""
    import theory.two_timescale as T

    rng = np.random.default_rng(cfg.seed)
    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    u0 = _spread_positions(rng, v, cfg.per_piece, 3 * cfg.eta)
    m = u0.size
    lim = T.limit_flow(u0, cfg.tau_end, cfg.dtau, cfg.eta, v, f, record_every=10)
    errs, loss_gd = [], None
    a0 = T.optimal_weights(u0, cfg.eta, v, f) if cfg.a0_optimal else np.zeros(m + 1)
    for e in cfg.eps_values:
        per = lim.tau[1] / (e * cfg.h)
        every = max(1, int(round(per)))
        steps = every * (lim.tau.size - 1)
        h = lim.tau[1] / (e * every)  # keeps tau = eps h k exactly on the limit's grid
        tr = T.gradient_descent(a0, u0, e, h, steps, cfg.eta, v, f, record_every=every)
        errs.append(float(np.abs(tr.u - lim.u).max()))
        loss_gd = tr.loss
    return EpsLimitResult(tuple(cfg.eps_values), tuple(errs), tuple(lim.tau), tuple(loss_gd), tuple(lim.loss))


def eps_limit_verdict(result: EpsLimitResult, tol=0.15) -> Verdict:
    """Pass iff max_tau ||u_GD - u_limit|| ~ eps^s with |s - 1| <= tol."""
    fit = _slope(result.eps_values, result.errors)
    ok = abs(fit.slope - 1) <= tol
    return qualitative_verdict(ok, f"max_tau ||u_GD(tau/eps) - u_limit(tau)|| ~ eps^{fit.slope:.3f} (expected 1 +- "
                               f"{tol}); {result.errors[0]:.2e} at eps = {result.eps_values[0]:g}, "
                               f"{result.errors[-1]:.2e} at eps = {result.eps_values[-1]:g}")


def eps_limit_figure(result: EpsLimitResult, claim_id="two-timescale/sec-6.5.2"):
    """Distance to the limit against eps (slope-1 guide) and the two loss curves against tau."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(10, 4))
    ax = axes[0]
    e = np.asarray(result.eps_values)
    ax.loglog(e, result.errors, "o-", label="max_tau ||u_GD - u_limit||, measured")
    ax.loglog(e, result.errors[0] * e / e[0], "k--", label="slope 1, predicted (guide)")
    _plain_minor_ticks(ax)
    ax.set_xlabel("eps")
    ax.legend(fontsize=7)
    ax.set_title(f"{claim_id}: GD at ratio eps vs limit (6.8)", fontsize=9)
    ax = axes[1]
    ax.plot(result.tau, result.loss_limit, "g-", lw=3, alpha=0.5, label="two-timescale limit (6.8)")
    ax.plot(result.tau, result.loss_gd, "C1--", label=f"GD, eps = {result.eps_values[-1]:g}")
    ax.set_xlabel("tau = eps t")
    ax.set_ylabel("loss L")
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


EPS_LIMIT_PRESETS = {
    "check": EpsLimitConfig(),
    # App. 6.C: target of the chapter, m = 20, eta = 4e-3, eps down to 2e-5
    "paper": EpsLimitConfig(v=(0.2, 0.35, 0.5, 0.65, 0.8), f=(1.0, 4.0, 1.0, 2.0, 1.0, 4.0), eta=0.004, h=0.1,
                            eps_values=(1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5, 2e-5), tau_end=1.0),
}


# ------------------------------------------------------------------------------ Lemma 6.19

@dataclasses.dataclass(frozen=True)
class DGoodConfig:
    """Frequency of D-good uniform initialisations (Lemma 6.19), m from (6.2).

    Attributes
    ----------
    v, f : tuple of float
        Target (App. 6.C).
    deltas : tuple of float
        Failure probabilities delta in (0, 1).
    draws : int
        Monte-Carlo draws per delta.
    seed : int
        Seed.
    m_offset : int
        Added to the m of (6.2) (0 for the claim; a control takes fewer neurons).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    deltas: tuple = (0.5, 0.2)
    draws: int = 2000
    seed: int = 0
    m_offset: int = 0

    def __post_init__(self):
        cls = "DGoodConfig"
        _target(self.v, self.f, cls)
        positives(self.deltas, "deltas", cls, 0.999)
        integer(self.draws, "draws", cls, 1)
        integer(self.seed, "seed", cls, 0)
        if isinstance(self.m_offset, bool) or not isinstance(self.m_offset, int):
            raise TypeError(f"`m_offset` of {cls} must be an integer; got {self.m_offset!r}.")


@dataclasses.dataclass(frozen=True)
class DGoodResult:
    """Per delta: m used, D, fraction of D-good draws."""

    deltas: tuple
    m: tuple
    D: tuple
    fraction_good: tuple
    draws: int

    def to_measured(self):
        return dataclasses.asdict(self)


def measure_dgood(cfg: DGoodConfig) -> DGoodResult:
    """Draw u i.i.d. uniform with m = ceil((6.2)) + m_offset; test Definition 6.6 with D = delta/(6 (m+1)^2)."""
    import theory.two_timescale as T

    rng = np.random.default_rng(cfg.seed)
    n, dv, _, _ = T.target_constants(cfg.v, cfg.f)
    ms, Ds, fr = [], [], []
    for d in cfg.deltas:
        m = max(1, math.ceil(T.neurons_required(n, dv, d)) + cfg.m_offset)
        D = T.lemma_6_19_separation(d, m)
        good = sum(T.is_d_good(rng.uniform(0, 1, m), cfg.v, D, 0.0 + 1e-300) for _ in range(cfg.draws))
        ms.append(m)
        Ds.append(D)
        fr.append(good / cfg.draws)
    return DGoodResult(tuple(cfg.deltas), tuple(ms), tuple(Ds), tuple(fr), cfg.draws)


def dgood_verdict(result: DGoodResult) -> Verdict:
    """Pass iff the frequency of D-good draws is >= 1 - delta minus 3 binomial standard errors, every delta."""
    parts, ok = [], True
    for d, m, f in zip(result.deltas, result.m, result.fraction_good):
        se = math.sqrt(max(f * (1 - f), 1e-4) / result.draws)
        ok &= f >= 1 - d - 3 * se
        parts.append(f"delta={d}: m={m}, freq {f:.3f} (>= {1 - d:.2f})")
    return qualitative_verdict(bool(ok), "frequency of D-good u, D = delta/(6(m+1)^2): " + "; ".join(parts))


DGOOD_PRESETS = {"check": DGoodConfig(), "paper": DGoodConfig(deltas=(0.5, 0.2, 0.1, 0.01), draws=20000)}


# ------------------------------------------------------------------------------ Figures 6.4, 6.5, 6.7

@dataclasses.dataclass(frozen=True)
class Fig64Config:
    """Population gradient descent on the thesis target for a small eps and for eps = 1 (Figs 6.4, 6.5),
    from u i.i.d. uniform and a = 0, several seeds.

    Attributes
    ----------
    v, f : tuple of float
        Target (App. 6.C).
    m : int
        Neurons (App. 6.C: 20).
    eta : float
        Sharpness (App. 6.C: 4e-3).
    h : float
        Largest step of a (below 2 / lambda_max(H), about 0.2 for m = 20 uniform positions).
    u_step_max : float
        Largest step eps h of u: the step of a is min(h, u_step_max / eps), so that the positions' update
        stays stable (the curvature of L in u_j is about a_j^2 / eta).
    eps_values : tuple of float
        Ratios; the first is the two-timescale one, the last the "eps = 1" one.
    tau_end : float
        Slow-time horizon tau = eps t (6 / Delta f^2 = 6 for the thesis target, Prop. 6.7).
    t_min : float
        Smallest horizon in t (Table 6.2: P h = 10 for eps = 1).
    seeds : tuple of int
        Seeds of the initial positions.
    move_threshold : float
        A neuron "moves" when |u_j(end) - u_j(0)| exceeds it.
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    m: int = 20
    eta: float = 0.004
    h: float = 0.15
    u_step_max: float = 2.5e-4
    eps_values: tuple = (1e-3, 1.0)
    tau_end: float = 6.0
    t_min: float = 10.0
    seeds: tuple = (0, 1, 2)
    move_threshold: float = 0.01

    def __post_init__(self):
        cls = "Fig64Config"
        _target(self.v, self.f, cls)
        integer(self.m, "m", cls, 1)
        positive(self.eta, "eta", cls, 1.0)
        positive(self.h, "h", cls)
        positive(self.u_step_max, "u_step_max", cls)
        positives(self.eps_values, "eps_values", cls)
        positive(self.tau_end, "tau_end", cls)
        positive(self.t_min, "t_min", cls)
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"`seeds` of {cls} must be a non-empty tuple; got {self.seeds!r}.")
        for s in self.seeds:
            integer(s, "seeds", cls, 0)
        positive(self.move_threshold, "move_threshold", cls)


@dataclasses.dataclass(frozen=True)
class Fig64Result:
    """Per eps (rows) and seed (columns): final squared L2 distance to f*, number of neurons moved,
    number of jumps with a neuron within 2 eta; plus the first seed's trajectories for the figure."""

    eps_values: tuple
    l2: tuple
    moved: tuple
    covered: tuple
    n_jumps: int
    u_paths: tuple
    finals: tuple

    def to_measured(self):
        return {"eps_values": list(self.eps_values), "mean_l2": [float(np.mean(r)) for r in self.l2],
                "mean_moved": [float(np.mean(r)) for r in self.moved],
                "mean_covered": [float(np.mean(r)) for r in self.covered], "n_jumps": self.n_jumps}


def measure_fig64(cfg: Fig64Config) -> Fig64Result:
    """Gradient descent (exact quadrature) to t = max(tau_end / eps, t_min), step min(h, u_step_max / eps),
    for each eps and seed."""
    import theory.two_timescale as T

    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    l2, moved, cov, paths, finals = [], [], [], [], []
    for e in cfg.eps_values:
        rl, rm, rc = [], [], []
        for k, s in enumerate(cfg.seeds):
            u0 = np.sort(np.random.default_rng(s).uniform(0, 1, cfg.m))
            t_end = max(cfg.tau_end / e, cfg.t_min)
            h = min(cfg.h, cfg.u_step_max / e)
            steps = int(round(t_end / h))
            tr = T.gradient_descent(np.zeros(cfg.m + 1), u0, e, h, steps, cfg.eta, v, f,
                                    record_every=max(1, steps // 100))
            u, a = tr.u[-1], tr.a[-1]
            rl.append(2 * T.loss(a, u, cfg.eta, v, f))
            rm.append(int(np.count_nonzero(np.abs(u - u0) > cfg.move_threshold)))
            rc.append(int(sum(np.min(np.abs(u - vi)) <= 2 * cfg.eta for vi in v)))
            if k == 0:
                paths.append(tr.u)
                finals.append((a, u))
        l2.append(tuple(rl))
        moved.append(tuple(rm))
        cov.append(tuple(rc))
    return Fig64Result(tuple(cfg.eps_values), tuple(l2), tuple(moved), tuple(cov), len(cfg.v), tuple(paths),
                       tuple(finals))


def fig64_verdict(result: Fig64Result) -> Verdict:
    """Small eps: every jump covered (neuron within 2 eta) and at most two moving neurons per jump, in every
    seed; eps = 1 (last): more neurons move on average and the mean L2 error is larger."""
    small_ok = all(c == result.n_jumps for c in result.covered[0]) and \
        all(mv <= 2 * result.n_jumps for mv in result.moved[0])
    contrast = np.mean(result.moved[-1]) > np.mean(result.moved[0]) and np.mean(result.l2[-1]) > np.mean(result.l2[0])
    ok = bool(small_ok and contrast)
    e0, e1 = result.eps_values[0], result.eps_values[-1]
    return qualitative_verdict(ok, f"eps={e0:g}: jumps covered {list(result.covered[0])}/{result.n_jumps}, neurons "
                               f"moved {list(result.moved[0])}, mean L2^2 {np.mean(result.l2[0]):.4f}; eps={e1:g}: "
                               f"covered {list(result.covered[-1])}, moved {list(result.moved[-1])}, mean L2^2 "
                               f"{np.mean(result.l2[-1]):.4f}")


def fig64_figure(result: Fig64Result, cfg: Fig64Config, claim_id="two-timescale/fig-6.4"):
    """Neuron trajectories (first seed) and final fits for the small eps and eps = 1."""
    import theory.two_timescale as T
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, nrows=2, figsize=(10, 7))
    axes = np.asarray(axes).reshape(2, 2)
    x = np.linspace(0, 1, 1001)
    for col, (e, path, (a, u)) in enumerate(zip(result.eps_values, result.u_paths, result.finals)):
        ax = axes[0, col]
        ax.plot(path, np.arange(path.shape[0]), "C1", lw=0.8)
        for vi in cfg.v:
            ax.axvline(vi, color="C0", ls=":")
        ax.set_xlabel("neuron position u_j")
        ax.set_ylabel("time, % of the run")
        ax.set_title(f"{claim_id}: eps = {e:g}, positions", fontsize=9)
        ax = axes[1, col]
        ax.plot(x, T.evaluate_target(x, cfg.v, cfg.f), "C0", label="target f*")
        ax.plot(x, T.network(x, a, u, cfg.eta), "C1", label="network, end of GD")
        for uj in u:
            ax.axvline(uj, color="gray", ls=":", lw=0.6)
        ax.set_title(f"eps = {e:g}: final fit (dotted: neurons)", fontsize=9)
        ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


FIG64_PRESETS = {
    "check": Fig64Config(),
    # Tables 6.1-6.2 (App. 6.C): m = 20, eta = 4e-3, eps = 2e-5 and 1, h = 1e-5 (SGD); 20 repeats (Fig. 6.7)
    "paper": Fig64Config(eps_values=(2e-5, 1e-3, 1e-2, 0.1, 0.3, 1.0), h=0.05, u_step_max=1e-5, seeds=tuple(range(20))),
}


# ------------------------------------------------------------------------------ registry

register("two_timescale.envelope", config=EnvelopeConfig, presets=ENVELOPE_PRESETS, measure=measure_envelope,
         verdict=envelope_verdict, claims=("two-timescale/rem-6.3",),
         summary=lambda r: {"max_rel_error": r.max_rel_error})
register("two_timescale.hessian", config=HessianConfig, presets=HESSIAN_PRESETS, measure=measure_hessian,
         verdict=hessian_verdict, claims=("two-timescale/prop-6.4",), summary=lambda r: {"ratio": r.ratio})
register("two_timescale.heaviside", config=HeavisideConfig, presets=HEAVISIDE_PRESETS, measure=measure_heaviside,
         verdict=heaviside_velocity_verdict,
         claims=("two-timescale/eq-6.6", "two-timescale/eq-6.7", "two-timescale/eq-6.7/invariant"),
         summary=lambda r: {"loss_identity_error": r.loss_identity_error, "invariant_drift": r.invariant_drift})
register("two_timescale.tracking", config=TrackingConfig, presets=TRACKING_PRESETS, measure=measure_tracking,
         verdict=tracking_bound_verdict, claims=("two-timescale/prop-6.9", "two-timescale/prop-6.9/lag"),
         summary=lambda r: {"ratio": r.ratio, "decay_rate": r.decay_rate})
register("two_timescale.eps_limit", config=EpsLimitConfig, presets=EPS_LIMIT_PRESETS, measure=measure_eps_limit,
         verdict=eps_limit_verdict, claims=("two-timescale/sec-6.5.2",),
         summary=lambda r: {"errors": list(r.errors)})
register("two_timescale.dgood", config=DGoodConfig, presets=DGOOD_PRESETS, measure=measure_dgood,
         verdict=dgood_verdict, claims=("two-timescale/lemma-6.19",), summary=lambda r: {"fraction_good": list(r.fraction_good)})
register("two_timescale.fig64", config=Fig64Config, presets=FIG64_PRESETS, measure=measure_fig64,
         verdict=fig64_verdict, claims=("two-timescale/fig-6.4",), summary=lambda r: r.to_measured())


# ------------------------------------------------------------------------------ Lemmas 6.10-6.18, Prop. 6.7

LEMMAS = ("lemma-6.10", "lemma-6.12", "lemma-6.14", "lemma-6.15", "lemma-6.16", "lemma-6.17", "lemma-6.18")


@dataclasses.dataclass(frozen=True)
class LemmasConfig:
    """The explicit inequalities of Lemmas 6.10-6.18 at random positions in U_eta with >= 2 neurons per piece.

    Attributes
    ----------
    v, f : tuple of float
        Target (App. 6.C).
    per_piece : int
        Neurons per piece (>= 2, as Lemmas 6.13-6.16 assume).
    eta : float
        Sharpness (3 eta <= Delta v for Lemma 6.18).
    trials : int
        Random position vectors.
    seed : int
        Seed.
    bound_scale : float
        Multiplies every right-hand side (1 for the claims; a control shrinks them).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    per_piece: int = 3
    eta: float = 0.004
    trials: int = 10
    seed: int = 0
    bound_scale: float = 1.0

    def __post_init__(self):
        cls = "LemmasConfig"
        _target(self.v, self.f, cls)
        integer(self.per_piece, "per_piece", cls, 2)
        positive(self.eta, "eta", cls, 1.0)
        integer(self.trials, "trials", cls, 1)
        integer(self.seed, "seed", cls, 0)
        positive(self.bound_scale, "bound_scale", cls)


@dataclasses.dataclass(frozen=True)
class LemmasResult:
    """For each lemma (``names``), the largest LHS / RHS over the trials (all its inequalities)."""

    names: tuple
    ratios: tuple
    trials: int
    lemma611_error: float = math.nan
    lemma613_error: float = math.nan

    def ratio(self, name):
        return self.ratios[self.names.index(name)]

    def to_measured(self):
        return {n: r for n, r in zip(self.names, self.ratios)} | {
            "trials": self.trials, "lemma-6.11 max error": self.lemma611_error,
            "lemma-6.13 max error": self.lemma613_error}


def measure_lemmas(cfg: LemmasConfig) -> LemmasResult:
    """LHS / RHS of each inequality of Lemmas 6.10, 6.12, 6.14-6.18 (exact quadrature, a*_0 in closed form)."""
    import theory.two_timescale as T

    rng = np.random.default_rng(cfg.seed)
    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    n, dv, _, M = T.target_constants(v, f)
    eta, c = cfg.eta, cfg.bound_scale
    r = dict.fromkeys(LEMMAS, 0.0)
    x = np.linspace(0, 1, 20001)
    gz, gw = np.polynomial.legendre.leggauss(8)  # exact for sigma^2 (degree 10) on [-1/2, 1/2]
    d_eta = eta * (0.5 * float(gw @ T.activation(0.5 * gz) ** 2) - 0.5)
    e611 = e613 = 0.0
    for _ in range(cfg.trials):
        while True:
            u = _spread_positions(rng, v, cfg.per_piece, 2 * eta)
            if T.separation(u, eta) > 2 * eta:
                break
        m = u.size
        D = T.separation(u, eta)
        H, b = T.gram(u, eta, v, f)
        H0, b0 = T.heaviside_gram(u, v, f, eta)
        a_eta = np.linalg.solve(H, b)
        a0 = T.heaviside_weights(u, v, f)
        sq = math.sqrt(m + 1)
        # Lemma 6.11: H_eta = H_0 + D_eta, D_eta = diag(0, d_eta, ..., d_eta), |d_eta| <= eta / 2
        Dm = np.diag(np.r_[0.0, np.full(m, d_eta)])
        e611 = max(e611, float(np.abs(H - H0 - Dm).max()) + max(0.0, abs(d_eta) - eta / 2))
        # Lemma 6.13: at a*_0 the gradient is (6.7) exactly (flanking neurons >= eta/2 from their jump)
        e613 = max(e613, float(np.abs(-T.gradient(a0, u, eta, v, f)[1] - T.heaviside_velocities(u, v, f)).max()))
        # Lemma 6.10
        r["lemma-6.10"] = max(r["lemma-6.10"], np.linalg.norm(b - b0) / (c * M * eta * sq),
                              np.linalg.norm(b) / (c * M * sq))
        # Lemma 6.12: Jacobian of a*_eta by central differences
        h = 1e-7
        J = np.column_stack([(T.optimal_weights(u + h * e, eta, v, f) - T.optimal_weights(u - h * e, eta, v, f)) / (2 * h)
                             for e in np.eye(m)])
        r["lemma-6.12"] = max(r["lemma-6.12"], np.linalg.norm(J, 2) / (c * 8 / D * (2 * (m + 1) * np.linalg.norm(a_eta) + M)))
        # Lemma 6.14
        r["lemma-6.14"] = max(r["lemma-6.14"], float(np.abs(T.network(x, a0, u, eta)).max()) / (c * M))
        # Lemma 6.15: |a*_0j| <= 2M and the gradient difference at random a near a*_0
        g0 = T.gradient(a0, u, eta, v, f)[1]
        worst = float(np.abs(a0).max()) / (c * 2 * M)
        for scale in (1e-3, 1e-1, 1.0):
            a = a0 + scale * rng.normal(size=m + 1)
            dist = np.linalg.norm(a - a0)
            gd = np.abs(T.gradient(a, u, eta, v, f)[1] - g0).max()
            worst = max(worst, gd / (c * (2 * M * (sq + 1) * dist + sq * dist ** 2)))
        r["lemma-6.15"] = max(r["lemma-6.15"], worst)
        # Lemma 6.16
        r["lemma-6.16"] = max(r["lemma-6.16"], np.linalg.norm(a_eta - a0) / (c * 16 * M * sq * eta / D))
        # Lemma 6.17: gradient norms at random a
        a = rng.normal(size=m + 1) * rng.uniform(0.1, 5)
        ga, gu = T.gradient(a, u, eta, v, f)
        na = np.linalg.norm(a)
        r["lemma-6.17"] = max(r["lemma-6.17"], np.linalg.norm(gu) / (c * (sq * na ** 2 + M * na)),
                              np.linalg.norm(ga) / (c * sq * (na * sq + M)))
        # Lemma 6.18: one neuron within eta of each jump (3 eta <= Delta v holds for these presets)
        w = u.copy()
        L_, _ = T.flanking(w, v)
        w[L_] = v - rng.uniform(0.0, eta, v.size)
        if T.separation(w, eta) > 2 * eta:
            err = 2 * T.loss(T.optimal_weights(w, eta, v, f), w, eta, v, f)
            r["lemma-6.18"] = max(r["lemma-6.18"], err / (c * T.lemma_6_18_bound(M, eta, n)))
    return LemmasResult(LEMMAS, tuple(float(r[k]) for k in LEMMAS), cfg.trials, e611, e613)


def lemma_identity_verdict(result: LemmasResult, name: str, tol=1e-12) -> Verdict:
    """Lemma 6.11 (H_eta = H_0 + D_eta, |D_eta| <= eta/2) or Lemma 6.13 (exact gradient at a*_0 equal to (6.7)):
    pass iff the largest deviation is <= ``tol`` (exact quadrature: rounding only)."""
    err = {"lemma-6.11": result.lemma611_error, "lemma-6.13": result.lemma613_error}[name]
    what = {"lemma-6.11": "max |H_eta - H_0 - D_eta|", "lemma-6.13": "max |-(d_u L_eta)(a*_0(u), u) - (6.7)|"}[name]
    return qualitative_verdict(bool(err <= tol), f"{name}: {what} = {err:.1e} over {result.trials} draws (<= {tol:g})")


LEMMA_TITLES = {
    "lemma-6.10": "||b_eta - b_0|| <= M eta sqrt(m+1), ||b_eta|| <= M sqrt(m+1)",
    "lemma-6.12": "||d a*_eta / du|| <= 8/Delta(u) (2(m+1) ||a*_eta|| + M)",
    "lemma-6.14": "|f_eta(x; a*_0(u), u)| <= M",
    "lemma-6.15": "|a*_0j| <= 2M and |d_uj L(a,u) - d_uj L(a*_0,u)| <= 2M(sqrt(m+1)+1)||a-a*_0|| + sqrt(m+1)||a-a*_0||^2",
    "lemma-6.16": "||a*_eta(u) - a*_0(u)|| <= 16 M sqrt(m+1) eta / Delta(u)",
    "lemma-6.17": "||grad_u L|| <= sqrt(m+1)||a||^2 + M||a||, ||grad_a L|| <= sqrt(m+1)(sqrt(m+1)||a|| + M)",
    "lemma-6.18": "int |f_eta(.; a*_eta(u), u) - f*|^2 <= 6 M^2 eta n with a neuron within eta of each jump",
}


def lemma_verdict(result: LemmasResult, name: str) -> Verdict:
    """Pass iff the largest LHS / RHS of the lemma ``name`` is <= 1 up to rounding (Lemma 6.14 is attained with
    equality where the fit equals a value of f* of modulus M) and positive (the quantity was measured)."""
    r = result.ratio(name)
    ok = 0.0 < r <= 1.0 + 1e-12
    return qualitative_verdict(ok, f"{name}: max LHS/RHS = {r:.3g} over {result.trials} draws (<= 1): {LEMMA_TITLES[name]}")


LEMMAS_PRESETS = {"check": LemmasConfig(), "paper": LemmasConfig(trials=200, per_piece=4)}  # App. 6.C: eta = 4e-3


@dataclasses.dataclass(frozen=True)
class RecoveryConfig:
    """Hitting times of the Heaviside limit (6.7) against the horizon 6 / Delta f^2 of Prop. 6.7 / Thm 6.8.

    Attributes
    ----------
    v, f : tuple of float
        Target (App. 6.C).
    m : int
        Neurons, i.i.d. uniform (draws without two neurons per piece are skipped).
    draws : int
        Random initialisations.
    seed : int
        Seed.
    horizon_scale : float
        Multiplies the horizon (1 for the claim; a control shortens it).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    m: int = 20
    draws: int = 200
    seed: int = 0
    horizon_scale: float = 1.0

    def __post_init__(self):
        cls = "RecoveryConfig"
        _target(self.v, self.f, cls)
        integer(self.m, "m", cls, 2)
        integer(self.draws, "draws", cls, 1)
        integer(self.seed, "seed", cls, 0)
        positive(self.horizon_scale, "horizon_scale", cls)


@dataclasses.dataclass(frozen=True)
class RecoveryResult:
    """max over draws and jumps of tau*_i / (6 / Delta f^2), the mean, and the number of usable draws."""

    max_ratio: float
    mean_ratio: float
    used: int

    def to_measured(self):
        return dataclasses.asdict(self)


def measure_recovery(cfg: RecoveryConfig) -> RecoveryResult:
    """tau* of each jump from the closed form (invariant of (6.7)) for u i.i.d. uniform with >= 2 per piece."""
    import theory.two_timescale as T

    rng = np.random.default_rng(cfg.seed)
    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    _, _, df, _ = T.target_constants(v, f)
    horizon = cfg.horizon_scale * T.recovery_horizon(df)
    edges = np.concatenate(([0.0], v, [1.0]))
    ratios = []
    for _ in range(cfg.draws):
        u = np.sort(rng.uniform(0, 1, cfg.m))
        if any(np.count_nonzero((u > lo) & (u < hi)) < 2 for lo, hi in zip(edges[:-1], edges[1:])):
            continue
        L, R = T.flanking(u, v)
        for i in range(v.size):
            ratios.append(T.heaviside_hitting_time(u[L[i]], u[R[i]], v[i], f[i + 1] - f[i])[0] / horizon)
    return RecoveryResult(float(max(ratios)) if ratios else math.inf, float(np.mean(ratios)) if ratios else math.inf,
                          len(ratios) // max(v.size, 1))


def recovery_verdict(result: RecoveryResult) -> Verdict:
    """Pass iff every jump is reached by its closer neuron before 6 / Delta f^2."""
    ok = result.used > 0 and result.max_ratio <= 1.0
    return qualitative_verdict(ok, f"max tau*_i / (6/Delta f^2) = {result.max_ratio:.3f} (mean {result.mean_ratio:.3f}) "
                               f"over {result.used} initialisations with >= 2 neurons per piece (<= 1)")


RECOVERY_PRESETS = {"check": RecoveryConfig(), "paper": RecoveryConfig(draws=5000)}  # App. 6.C: m = 20

register("two_timescale.lemmas", config=LemmasConfig, presets=LEMMAS_PRESETS, measure=measure_lemmas,
         verdict=lambda r: lemma_verdict(r, "lemma-6.16"),
         claims=tuple(f"two-timescale/{k}" for k in LEMMAS + ("lemma-6.11", "lemma-6.13")),
         summary=lambda r: r.to_measured())
register("two_timescale.recovery", config=RecoveryConfig, presets=RECOVERY_PRESETS, measure=measure_recovery,
         verdict=recovery_verdict, claims=("two-timescale/prop-6.7",), summary=lambda r: r.to_measured())


# ------------------------------------------------------------------------------ Figure 6.7

def fig67_transition(result: Fig64Result, factor=3.0):
    """The smallest eps whose mean squared L2 error exceeds ``factor`` times that of the smallest eps (inf if none)."""
    means = [float(np.mean(r)) for r in result.l2]
    for e, mval in zip(result.eps_values, means):
        if mval > factor * means[0]:
            return e
    return math.inf


def fig67_verdict(result: Fig64Result) -> Verdict:
    """Pass iff the mean squared L2 error grows with eps (largest eps >= 5 x smallest; every value at least the
    smallest one up to 5 %) and the transition (error tripled) lies in [0.03, 1], around the thesis's 0.1."""
    means = [float(np.mean(r)) for r in result.l2]
    tr = fig67_transition(result)
    ok = means[-1] >= 5 * means[0] and all(m >= 0.95 * means[0] for m in means) and 0.03 <= tr <= 1.0
    parts = ", ".join(f"eps={e:g}: {m:.4f}" for e, m in zip(result.eps_values, means))
    return qualitative_verdict(ok, f"mean ||f - f*||^2 over {len(result.l2[0])} seeds: {parts}; transition (error x3) "
                               f"at eps = {tr:g} (thesis: about 0.1)")


def fig67_figure(result: Fig64Result, claim_id="two-timescale/fig-6.7"):
    """Mean squared L2 error against eps (log axis), seeds as dots."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    e = np.asarray(result.eps_values)
    for k in range(len(result.l2[0])):
        ax.loglog(e, [r[k] for r in result.l2], ".", color="gray", alpha=0.6)
    ax.loglog(e, [np.mean(r) for r in result.l2], "o-", label="mean over seeds, measured")
    ax.axvline(0.1, color="k", ls=":", label="transition reported in the thesis (about 0.1)")
    ax.set_xlabel("eps (ratio of the step sizes of u and a)")
    ax.set_ylabel("||f - f*||^2 at the end of training")
    ax.set_title(f"{claim_id}: error against eps (population GD)", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


FIG67_PRESETS = {
    "check": Fig64Config(eps_values=(1e-2, 0.1, 0.3, 1.0), seeds=(0, 1)),
    # App. 6.C, Fig. 6.7: 20 repeats, eps from 2e-5 to 1
    "paper": Fig64Config(eps_values=(2e-5, 1e-4, 1e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0), h=0.05, u_step_max=1e-5,
                         seeds=tuple(range(20))),
}

register("two_timescale.fig67", config=Fig64Config, presets=FIG67_PRESETS, measure=measure_fig64,
         verdict=fig67_verdict, claims=("two-timescale/fig-6.7",), summary=lambda r: r.to_measured())


# ------------------------------------------------------------------------------ Figure 6.3

@dataclasses.dataclass(frozen=True)
class Fig63Config:
    """One-pass SGD (6.9) against the Heaviside two-timescale limit (6.7) (Figure 6.3), aligned by tau = eps h p.

    Attributes
    ----------
    v, f : tuple of float
        Target (App. 6.C).
    m : int
        Neurons, u i.i.d. uniform: the first seed from ``seed`` on giving two neurons per piece is used.
    eta : float
        Sharpness of the SGD network (Table 6.1: 4e-3).
    eps, h : float
        Ratio and step of SGD (Table 6.1: 2e-5, 1e-5; App. 6.C says h = 1e-3 behaves the same).
    tau_end : float
        Slow-time horizon.
    noise : float
        Half-width of the uniform label noise (Table 6.1: 1).
    seed : int
        First seed tried for the positions; the samples use seed + 1000.
    tau_start : float
        Comparison starts there (after the fast phase of a).
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    m: int = 20
    eta: float = 0.004
    eps: float = 1e-4
    h: float = 1e-3
    tau_end: float = 0.65
    noise: float = 1.0
    seed: int = 0
    tau_start: float = 0.03

    def __post_init__(self):
        cls = "Fig63Config"
        _target(self.v, self.f, cls)
        integer(self.m, "m", cls, 2)
        positive(self.eta, "eta", cls, 1.0)
        positive(self.eps, "eps", cls)
        positive(self.h, "h", cls)
        positive(self.tau_end, "tau_end", cls)
        if isinstance(self.noise, bool) or not isinstance(self.noise, (int, float)) or not 0 <= self.noise < math.inf:
            raise ValueError(f"`noise` of {cls} must be a finite number >= 0; got {self.noise!r}.")
        integer(self.seed, "seed", cls, 0)
        positive(self.tau_start, "tau_start", cls)
        if self.tau_start >= self.tau_end:
            raise ValueError(f"`tau_start` of {cls} must be below tau_end = {self.tau_end}; got {self.tau_start}.")


@dataclasses.dataclass(frozen=True)
class Fig63Result:
    """Loss curves against tau: SGD (population loss of its iterates) and the Heaviside limit; the seed used."""

    tau: tuple
    loss_sgd: tuple
    loss_limit: tuple
    seed: int
    tau_start: float

    def _window(self):
        t = np.asarray(self.tau)
        return t >= self.tau_start

    @property
    def max_gap(self):
        w = self._window()
        return float(np.max(np.abs(np.asarray(self.loss_sgd)[w] - np.asarray(self.loss_limit)[w])))

    def to_measured(self):
        w = self._window()
        ls = np.asarray(self.loss_sgd)[w]
        return {"seed": self.seed, "max_abs_gap": self.max_gap, "limit_loss_initial": float(self.loss_limit[0]),
                "sgd_loss_start": float(ls[0]), "sgd_loss_end": float(np.mean(ls[-max(1, ls.size // 10):])),
                "limit_loss_end": float(self.loss_limit[-1])}


def measure_fig63(cfg: Fig63Config) -> Fig63Result:
    """SGD with exact population losses at 200 records; the limit by numerical integration of (6.7)."""
    import theory.two_timescale as T

    v, f = np.asarray(cfg.v), np.asarray(cfg.f)
    edges = np.concatenate(([0.0], v, [1.0]))
    for s in range(cfg.seed, cfg.seed + 1000):
        u0 = np.sort(np.random.default_rng(s).uniform(0, 1, cfg.m))
        if all(np.count_nonzero((u0 > lo) & (u0 < hi)) >= 2 for lo, hi in zip(edges[:-1], edges[1:])):
            break
    else:
        raise ValueError(f"no seed gives two neurons per piece with m = {cfg.m}; raise `m`.")
    steps = int(round(cfg.tau_end / (cfg.eps * cfg.h)))
    tr = T.sgd(np.zeros(cfg.m + 1), u0, cfg.eps, cfg.h, steps, cfg.eta, v, f, noise=cfg.noise,
               rng=np.random.default_rng(s + 1000))
    U = T.heaviside_flow(u0, v, f, tr.tau)
    lim = [T.heaviside_loss(x, v, f) for x in U]
    return Fig63Result(tuple(tr.tau), tuple(tr.loss), tuple(lim), s, cfg.tau_start)


def fig63_verdict(result: Fig63Result, tol=0.1) -> Verdict:
    """Pass iff after the fast phase (tau >= tau_start) the SGD loss stays within ``tol`` x (the limit's loss at
    u(0), the scale of the problem) of the limit's, and it drops to at most half its value at tau_start (the
    limit reaches 0 within the horizon)."""
    m = result.to_measured()
    ok = m["max_abs_gap"] <= tol * m["limit_loss_initial"] and m["sgd_loss_end"] <= 0.5 * m["sgd_loss_start"]
    return qualitative_verdict(ok, f"max_tau |L_SGD - L_limit| = {m['max_abs_gap']:.4f} (<= {tol} x "
                               f"{m['limit_loss_initial']:.4f}, the limit's loss at u(0)); SGD loss {m['sgd_loss_start']:.4f} -> "
                               f"{m['sgd_loss_end']:.4f} (limit -> {m['limit_loss_end']:.4f})")


def fig63_figure(result: Fig63Result, claim_id="two-timescale/fig-6.3"):
    """Loss against tau = eps h p for SGD and the Heaviside limit."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    ax.plot(result.tau[1:], result.loss_sgd[1:], "C1", label="SGD (6.9), eta = 4e-3")
    ax.plot(result.tau, np.maximum(result.loss_limit, 1e-4), "g", lw=2,
            label="two-timescale limit, Heaviside (6.7) (0 drawn at 1e-4)")
    ax.set_yscale("log")
    ax.set_ylim(bottom=5e-5)
    ax.set_xlabel("tau = eps h p")
    ax.set_ylabel("population loss L")
    ax.set_title(f"{claim_id}: SGD vs two-timescale limit (seed {result.seed})", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


FIG63_PRESETS = {
    "check": Fig63Config(),
    # Table 6.1: eps = 2e-5, h = 1e-5, P = 1.8e8 (tau = 0.036)
    "paper": Fig63Config(eps=2e-5, h=1e-5, tau_end=0.036 * 20),
}

register("two_timescale.fig63", config=Fig63Config, presets=FIG63_PRESETS, measure=measure_fig63,
         verdict=fig63_verdict, claims=("two-timescale/fig-6.3",), summary=lambda r: r.to_measured())


# ------------------------------------------------------------------------------ Prop. 6.5

@dataclasses.dataclass(frozen=True)
class LipschitzConfig:
    """Lipschitz continuity of G(u) = (grad_u L)(a*(u), u) on U = {Delta(u) > 2 eta} (Prop. 6.5).

    The statement gives no constant, so three falsifiable consequences are measured. (i) The Jacobian norm
    ||DG(u)|| (central differences of G) converges, rather than blowing up, when two neurons flanking a jump
    approach each other down to the edge Delta(u) = 2 eta of U: positions u^L = v_i - t g,
    u^R = v_i + (1 - t) g with the gaps g = ``gaps`` * eta tending to 2 eta. (ii) Lipschitz quotients
    ||G(u') - G(u)|| / ||u' - u|| over random pairs of nearby points of U stay below the Jacobian norms
    sampled on their segment (mean-value consistency of the finite estimate). (iii) The bound
    ||a*(u)|| <= 8 M sqrt(m + 1) / Delta(u) used in the proof (Lemma 6.10 with Prop. 6.4).

    Attributes
    ----------
    v, f : tuple of float
        Target jumps and values (default: the target of App. 6.C).
    per_piece : int
        Neurons per piece besides the flanking pair (drawn uniformly, at least ``spacing`` eta apart).
    eta : float
        Sharpness of sigma_eta, in (0, 1].
    gaps : tuple of float
        Distances u^R - u^L of the flanking pair in units of eta, strictly decreasing, at least 3 values
        (the last three decide convergence). All > 2 keeps u in U (the hypothesis).
    trials : int
        Random positions (and jumps) per gap sequence, and random pairs for the quotients.
    spacing : float
        Smallest distance, in units of eta, between the other neurons (>= 2.5 keeps them inside U).
    pair_radius : float
        Distance ||u' - u|| of the random pairs, in units of eta (<= 0.25 keeps the segment inside U).
    step : float
        Central-difference step for DG.
    seed : int
        Seed of the positions.
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    per_piece: int = 2
    eta: float = 0.004
    gaps: tuple = (4.0, 2.2, 2.02, 2.002, 2.0002)
    trials: int = 4
    spacing: float = 5.0
    pair_radius: float = 0.2
    step: float = 1e-7
    seed: int = 0

    def __post_init__(self):
        cls = "LipschitzConfig"
        _target(self.v, self.f, cls)
        integer(self.per_piece, "per_piece", cls, 1)
        positive(self.eta, "eta", cls, 1.0)
        positives(self.gaps, "gaps", cls)
        if len(self.gaps) < 3 or any(b >= a for a, b in zip(self.gaps, self.gaps[1:])):
            raise ValueError(f"`gaps` of {cls} must be strictly decreasing with >= 3 values; got {self.gaps!r}.")
        integer(self.trials, "trials", cls, 1)
        positive(self.spacing, "spacing", cls)
        if self.spacing < 2.5:
            raise ValueError(f"`spacing` of {cls} must be >= 2.5 (eta units); got {self.spacing!r}.")
        positive(self.pair_radius, "pair_radius", cls, 0.25)
        positive(self.step, "step", cls, 1e-3)
        integer(self.seed, "seed", cls, 0)


@dataclasses.dataclass(frozen=True)
class LipschitzResult:
    """jacobian_norms[t][g]: ||DG(u)|| (spectral) for trial t at gap gaps[g] (eta units);
    quotient_ratios[t]: Lipschitz quotient of pair t over the largest ||DG|| at its ends and midpoint;
    max_jacobian: largest ||DG|| sampled; astar_ratio: max ||a*(u)|| / (8 M sqrt(m + 1) / Delta(u));
    inside_u: every gap > 2 (the hypothesis Delta(u) > 2 eta)."""

    gaps: tuple
    jacobian_norms: tuple
    quotient_ratios: tuple
    max_jacobian: float
    astar_ratio: float
    inside_u: bool
    eta: float

    @property
    def edge_ratio(self):
        """max over trials of ||DG|| at the last gap over ||DG|| at the one before (1 when converged)."""
        return max(row[-1] / row[-2] for row in self.jacobian_norms)

    @property
    def increment_ratio(self):
        """max over trials of |N_last - N_prev| / |N_prev - N_prevprev| (about 0.1 per decade of gap - 2 when
        the norms converge linearly). Increments below 1e-6 N (the central-difference noise) count as 0: a
        row that does not move at all gives 0, one that starts moving at the edge gives inf."""
        out = 0.0
        for row in self.jacobian_norms:
            noise = 1e-6 * abs(row[-2])
            d1, d2 = abs(row[-1] - row[-2]), abs(row[-2] - row[-3])
            if d1 <= noise:
                continue
            out = max(out, d1 / d2 if d2 > noise else math.inf)
        return out

    def to_measured(self):
        return {"edge_ratio": self.edge_ratio, "increment_ratio": self.increment_ratio,
                "max_quotient_ratio": max(self.quotient_ratios), "max_jacobian": self.max_jacobian,
                "max_jacobian_times_eta": self.max_jacobian * self.eta, "astar_ratio": self.astar_ratio,
                "inside_u": self.inside_u}


def _reduced_gradient(u, cfg):
    """G(u) = (grad_u L)(a*(u), u) and a*(u)."""
    import theory.two_timescale as T

    a = T.optimal_weights(u, cfg.eta, cfg.v, cfg.f)
    return T.gradient(a, u, cfg.eta, cfg.v, cfg.f)[1], a


def _jacobian_norm(u, cfg):
    """Spectral norm of DG(u) by central differences."""
    m = u.size
    J = np.empty((m, m))
    for k in range(m):
        e = np.zeros(m)
        e[k] = cfg.step
        J[:, k] = (_reduced_gradient(u + e, cfg)[0] - _reduced_gradient(u - e, cfg)[0]) / (2 * cfg.step)
    return float(np.linalg.norm(J, 2))


def _background(rng, cfg, exclude):
    """per_piece uniform positions per piece, >= spacing * eta apart, from the ends and from the jump
    ``exclude``, by rejection."""
    import theory.two_timescale as T

    gap = cfg.spacing * cfg.eta
    for _ in range(10_000):
        u = _spread_positions(rng, cfg.v, cfg.per_piece, gap)
        if T.separation(u, cfg.eta) >= gap and np.min(np.abs(u - exclude)) >= gap:
            return u
    raise ValueError(f"no positions {cfg.spacing} eta apart found: lower `per_piece` or `spacing`.")


def _astar_ratio(u, a, M, cfg):
    import theory.two_timescale as T

    return float(np.linalg.norm(a)) * T.separation(u, cfg.eta) / (8 * M * math.sqrt(u.size + 1))


def measure_lipschitz(cfg: LipschitzConfig) -> LipschitzResult:
    """Jacobian norms of G along gap sequences of a flanking pair, Lipschitz quotients on random pairs in U,
    and the proof's bound on ||a*(u)||."""
    import theory.two_timescale as T

    M = T.target_constants(cfg.v, cfg.f)[3]
    rng = np.random.default_rng(cfg.seed)
    norms, jmax, astar = [], 0.0, 0.0
    for _ in range(cfg.trials):
        vi = float(cfg.v[rng.integers(len(cfg.v))])
        t = float(rng.uniform(0.3, 0.7))
        base = _background(rng, cfg, vi)
        row = []
        for g in cfg.gaps:
            u = np.sort(np.concatenate((base, [vi - t * g * cfg.eta, vi + (1 - t) * g * cfg.eta])))
            row.append(_jacobian_norm(u, cfg))
            astar = max(astar, _astar_ratio(u, _reduced_gradient(u, cfg)[1], M, cfg))
        norms.append(tuple(row))
        jmax = max(jmax, max(row))
    ratios = []
    m = cfg.per_piece * (len(cfg.v) + 1) + 2
    for _ in range(cfg.trials):
        u = _random_u(rng, m, cfg.eta)
        d = rng.standard_normal(m)
        w = u + cfg.pair_radius * cfg.eta * d / np.linalg.norm(d)
        G0, a0 = _reduced_gradient(u, cfg)
        G1, _ = _reduced_gradient(w, cfg)
        q = float(np.linalg.norm(G1 - G0) / np.linalg.norm(w - u))
        local = max(_jacobian_norm(u, cfg), _jacobian_norm(w, cfg), _jacobian_norm((u + w) / 2, cfg))
        ratios.append(q / local)
        jmax = max(jmax, local)
        astar = max(astar, _astar_ratio(u, a0, M, cfg))
    return LipschitzResult(tuple(cfg.gaps), tuple(norms), tuple(ratios), jmax, astar,
                           bool(min(cfg.gaps) > 2), cfg.eta)


def lipschitz_verdict(result: LipschitzResult, edge_tol: float = 0.05, shrink: float = 0.5,
                      slack: float = 1.05) -> Verdict:
    """Pass iff, as the flanking gap tends to the edge 2 eta of U, ||DG|| changes by at most ``edge_tol``
    (relative) over the last step and its increments shrink by at least ``shrink`` (no blow-up), every Lipschitz quotient is
    <= ``slack`` times the largest ||DG|| on its segment, and ||a*|| <= 8 M sqrt(m+1) / Delta(u)."""
    er, ir = result.edge_ratio, result.increment_ratio
    qr = max(result.quotient_ratios)
    ok = (math.isfinite(er) and abs(er - 1) <= edge_tol and ir <= shrink and math.isfinite(qr) and qr <= slack
          and math.isfinite(result.astar_ratio) and result.astar_ratio <= 1.0)
    return qualitative_verdict(
        bool(ok),
        f"gap {result.gaps[-2]:g} -> {result.gaps[-1]:g} eta: ||DG|| ratio {er:.4f} (expected within 1 +- "
        f"{edge_tol:g}), increment ratio {ir:.3g} (expected <= {shrink:g}); max ||DG|| = {result.max_jacobian:.4g} "
        f"(x eta = {result.max_jacobian * result.eta:.3g}); Lipschitz quotient / local max ||DG|| <= {qr:.3f} "
        f"(expected <= {slack:g}); max ||a*|| Delta / (8 M sqrt(m+1)) = {result.astar_ratio:.3g} (expected <= 1)")


LIPSCHITZ_PRESETS = {
    "check": LipschitzConfig(),
    # App. 6.C: m = 20 neurons (3 per piece + the flanking pair), eta = 4e-3
    "paper": LipschitzConfig(per_piece=3, trials=50, gaps=(4.0, 3.0, 2.2, 2.02, 2.002, 2.0002)),
}

register("two_timescale.lipschitz", config=LipschitzConfig, presets=LIPSCHITZ_PRESETS, measure=measure_lipschitz,
         verdict=lipschitz_verdict, claims=("two-timescale/prop-6.5",), summary=lambda r: r.to_measured())


# ------------------------------------------------------------------------------ Lemma 6.13 (flanking neurons)

@dataclasses.dataclass(frozen=True)
class FlankingConfig:
    """Lemma 6.13's flanking-neuron formulae, their hypothesis and the labels of the printed display.

    At the Heaviside-optimal weights a = a*_0(u), the exact gradient of L_eta in the neuron u^L just left of
    a jump v_i is -(1/2) (u^R - v_i)^2 / (u^R - u^L)^2 (f*_i - f*_(i-1))^2 and in u^R it is
    +(1/2) (v_i - u^L)^2 / (u^R - u^L)^2 (f*_i - f*_(i-1))^2, provided both are at least eta/2 from v_i; the
    gradient in every other neuron is 0 (Lemma 6.13 of the thesis, chapter 6; the formulae are computed here
    directly, not through the package's Heaviside closed forms). One flanking neuron is put at distance
    ``offsets`` * eta from its jump: for offsets >= 1/2 the formulae are exact, below 1/2 the jump enters the
    support of sigma_eta'(. - u^L) and they are not (the hypothesis is needed). The printed statement
    labels both displays d/du^R; the first one is d/du^L.

    Attributes
    ----------
    v, f : tuple of float
        Target jumps and values (default: the target of App. 6.C).
    per_piece : int
        Neurons per piece (>= 2, as the lemma assumes), uniform, >= 2 eta from the jumps and Delta(u) > 2 eta.
    eta : float
        Sharpness of sigma_eta, in (0, 1].
    offsets : tuple of float
        Distances of the moved flanking neuron from its jump, in units of eta (each in (0, 2]).
    trials : int
        Random positions (and jump, and side) per offset.
    seed : int
        Seed.
    """

    v: tuple = (0.2, 0.35, 0.5, 0.65, 0.8)
    f: tuple = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)
    per_piece: int = 3
    eta: float = 0.004
    offsets: tuple = (2.0, 1.0, 0.75, 0.5, 0.45, 0.25, 0.1)
    trials: int = 6
    seed: int = 0

    def __post_init__(self):
        cls = "FlankingConfig"
        _target(self.v, self.f, cls)
        integer(self.per_piece, "per_piece", cls, 2)
        positive(self.eta, "eta", cls, 1.0)
        positives(self.offsets, "offsets", cls, 2.0)
        integer(self.trials, "trials", cls, 1)
        integer(self.seed, "seed", cls, 0)


@dataclasses.dataclass(frozen=True)
class FlankingResult:
    """Per offset (eta units), max over trials of the error of the lemma's formulae relative to the largest
    flanking gradient: ``flank_error`` (both flanking neurons, corrected labels), ``other_error`` (max |grad|
    of the non-flanking neurons, same scale), ``weight_error`` (absolute error of a*_0 of the flanking neurons
    against the proof's (u^R - v)/(u^R - u^L) jump and (v - u^L)/(u^R - u^L) jump); ``printed_error``: max
    relative error of the printed first display read as d/du^R, at the offsets >= 1/2."""

    offsets: tuple
    flank_error: tuple
    other_error: tuple
    weight_error: tuple
    printed_error: float
    trials: int

    def to_measured(self):
        return {"offsets": [float(x) for x in self.offsets], "flank_error": [float(x) for x in self.flank_error],
                "other_error": [float(x) for x in self.other_error],
                "weight_error": [float(x) for x in self.weight_error], "printed_error": float(self.printed_error)}


def measure_flanking(cfg: FlankingConfig) -> FlankingResult:
    """Exact gradient of L_eta at a*_0(u) against Lemma 6.13's formulae, one flanking neuron at each offset."""
    import theory.two_timescale as T

    v, f, eta = np.asarray(cfg.v, float), np.asarray(cfg.f, float), cfg.eta
    rng = np.random.default_rng(cfg.seed)
    flank = np.zeros(len(cfg.offsets))
    other = np.zeros(len(cfg.offsets))
    weight = np.zeros(len(cfg.offsets))
    printed = 0.0
    for _ in range(cfg.trials):
        while True:
            base = _spread_positions(rng, v, cfg.per_piece, 2 * eta)
            if T.separation(base, eta) > 2 * eta:
                break
        i = int(rng.integers(v.size))
        side = int(rng.integers(2))
        for k, d in enumerate(cfg.offsets):
            u = base.copy()
            L, R = T.flanking(u, v)
            if side == 0:
                u[L[i]] = v[i] - d * eta
            else:
                u[R[i]] = v[i] + d * eta
            L, R = T.flanking(u, v)
            a0 = T.heaviside_weights(u, v, f)
            g = T.gradient(a0, u, eta, v, f)[1]
            scale = 0.0
            errs = 0.0
            for j in range(v.size):
                uL, uR, jump = u[L[j]], u[R[j]], f[j + 1] - f[j]
                w = uR - uL
                dL = -0.5 * (uR - v[j]) ** 2 / w ** 2 * jump ** 2
                dR = 0.5 * (v[j] - uL) ** 2 / w ** 2 * jump ** 2
                scale = max(scale, abs(dL), abs(dR))
                errs = max(errs, abs(g[L[j]] - dL), abs(g[R[j]] - dR))
                weight[k] = max(weight[k], abs(a0[1 + L[j]] - (uR - v[j]) / w * jump),
                                abs(a0[1 + R[j]] - (v[j] - uL) / w * jump))
                if d >= 0.5:  # the printed first display, read as a formula for d/du^R
                    printed = max(printed, abs(g[R[j]] - dL) / max(abs(dL), abs(dR)))
            mask = np.ones(u.size, bool)
            mask[L] = mask[R] = False
            flank[k] = max(flank[k], errs / scale)
            other[k] = max(other[k], float(np.abs(g[mask]).max()) / scale)
    return FlankingResult(tuple(cfg.offsets), tuple(float(x) for x in flank), tuple(float(x) for x in other),
                          tuple(float(x) for x in weight), float(printed), cfg.trials)


def flanking_verdict(result: FlankingResult, tol: float = 1e-10, visible: float = 1e-6) -> Verdict:
    """Pass iff, at every offset >= 1/2 (the lemma's hypothesis), the flanking formulae, the zero gradient of the
    other neurons and the proof's weights hold to ``tol`` (relative), and at every offset < 1/2 the flanking
    formulae are off by more than ``visible`` (the hypothesis is needed: the check can tell)."""
    inside = [k for k, d in enumerate(result.offsets) if d >= 0.5]
    outside = [k for k, d in enumerate(result.offsets) if d < 0.5]
    worst_in = max([max(result.flank_error[k], result.other_error[k], result.weight_error[k]) for k in inside],
                   default=math.nan)
    least_out = min([result.flank_error[k] for k in outside], default=math.inf)
    ok = bool(inside) and math.isfinite(worst_in) and worst_in <= tol and least_out > visible
    return qualitative_verdict(
        bool(ok),
        f"offsets >= eta/2 ({len(inside)}): max relative error of the flanking formulae, the zero gradients and "
        f"a*_0 = {worst_in:.2e} (expected <= {tol:g}); offsets < eta/2 ({len(outside)}): smallest error "
        f"{least_out:.2e} (expected > {visible:g}, the hypothesis is needed); {result.trials} draws per offset")


def flanking_erratum_verdicts(result: FlankingResult, tol: float = 1e-10):
    """(printed, corrected): the printed first display as d/du^R against the exact gradient, and the same
    display as d/du^L (the corrected label), at the offsets inside the hypothesis."""
    inside = [k for k, d in enumerate(result.offsets) if d >= 0.5]
    worst = max([result.flank_error[k] for k in inside], default=math.nan)
    printed = qualitative_verdict(math.isfinite(result.printed_error) and result.printed_error <= tol,
                                  f"first display read as d/du^R: max relative error {result.printed_error:.3g} "
                                  f"(exact would be <= {tol:g})")
    corrected = qualitative_verdict(math.isfinite(worst) and worst <= tol,
                                    f"first display read as d/du^L: max relative error {worst:.2e} "
                                    f"(expected <= {tol:g})")
    return printed, corrected


FLANKING_PRESETS = {
    "check": FlankingConfig(),
    # App. 6.C: m = 20 neurons (>= 2 per piece; 3 per piece gives m = 18), eta = 4e-3
    "paper": FlankingConfig(trials=100, offsets=(2.0, 1.0, 0.75, 0.6, 0.5, 0.49, 0.45, 0.4, 0.25, 0.1, 0.01)),
}

register("two_timescale.flanking", config=FlankingConfig, presets=FLANKING_PRESETS, measure=measure_flanking,
         verdict=flanking_verdict, claims=("two-timescale/lemma-6.13/hypothesis", "two-timescale/lemma-6.13/erratum"),
         summary=lambda r: r.to_measured())
