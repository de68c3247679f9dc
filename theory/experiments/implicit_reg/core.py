r"""Propositions 2 and 3, Theorem 4 and Appendix D of ``implicit-reg`` (ICLR 2024 numbering; Props. 3.2,
3.3 and Thm 3.4 of chapter 3 of Marion's and Sander's theses).

Common synthetic setting (a reduced Section 5.1 / Appendix E): n = 20 Gaussian samples, q = d = d' = 8,
m = 16, A = B = I not trained, full-batch clipped GD of Eq. (5) (Euler steps of the clipped flow, the
setting of Prop. 3 and Thm 4) with pi the coordinatewise clip at 1 and lr = 0.05 (the residual weights
take L lr), 200 steps, i.e. flow time T = 10; depths L = 8 .. 256, five seeds. The clip level does not
depend on L, as the statements require. Every run reports the largest coordinate of its update direction
before clipping (:func:`clip_summary`): at these sizes it stays below the clip, so the runs coincide with
plain GD of Eq. (4) and compare with the unclipped experiments of Section 5.1. With ``train_outer=True``
A and B are trained too, with the same clip, which then acts.

Experiments (registered as ``implicit_reg.<name>``):

* ``training`` (:class:`TrainingConfig`, :func:`measure_training`): the runs of Prop. 3 and Thm 4, measured
  at every step of the training trajectory (both statements hold for every t in [0, T]; the verdicts are on
  the worst time): :math:`\sup_t\max_k\|Z_{k+1}(t) - Z_k(t)\|` (O(1/L), Prop. 3),
  :math:`\sup_t\max_k\|Z_k(t) - Z_k(0)\|` (bounded), :math:`\sup_t\|\mathcal Z^L(t) - \mathcal Z^{2L}(t)\|_{L^2(ds)}`
  (O(1/L), Thm 4 (ii)), the slope of each quantity at each time of the grid, clip statistics; the same
  measurement with one field changed (:data:`TRAINING_VARIANTS`) as ``training_gelu``, ``training_active_clip``
  (A and B trained), ``training_iid`` and ``training_relu`` (the records prop-3/gelu, /active-clip, /iid, /relu);
* ``prop2`` (:class:`Prop2Config`, :func:`measure_prop2`): Euler discretisation of the neural ODE (6) with
  smooth weights, :math:`\sup_x\|F(x) - F^L(x)\| = O(1/L)`;
* ``app_d`` (:class:`AppDConfig`, :func:`measure_app_d`): the ReLU counter-example of Appendix D against
  its closed form (56).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np
from scipy.integrate import solve_ivp

from theory.claims import Verdict, identity_verdict, rate_verdict, threshold_verdict
from theory.implicit import Params, TrainStats, forward, initialize, loss_and_gradient, synthetic_data, train
from theory.rates import fit_rate, identity_error

from ..config import Bool, Choice, Config, Int, Ints, Real, field
from ._common import rates_verdict, seeds_field, with_measured

# --------------------------------------------------------------------------- common setting

N_SAMPLES, D, M = 20, 8, 16
LR, STEPS = 0.05, 200  # flow time T = LR * STEPS = 10
CLIP = 1.0  # pi of Eq. (5): each coordinate of the update direction clipped to [-1, 1]; fixed for every L
GRID = np.array([8, 16, 32, 64, 128, 256])
SEEDS = range(5)  # five (data, W) draws per depth; rates average over seeds

ACTIVATIONS = ("tanh", "gelu", "relu", "sin", "identity")
INIT_KINDS = ("paper", "iid", "smooth")


def _data(seed, n=N_SAMPLES, d=D):
    return synthetic_data(n, d, np.random.default_rng(1000 + seed))


def max_successive_difference(p: Params) -> float:
    r""":math:`\max_k \|Z_{k+1} - Z_k\|` with the paper's sum-norm :math:`\|Z\| = \|V\|_F + \|W\|_F`."""
    dv = np.linalg.norm(np.diff(p.V, axis=0), axis=(1, 2))
    dw = np.linalg.norm(np.diff(p.W, axis=0), axis=(1, 2))
    return float(np.max(dv + dw))


def max_displacement(p: Params, p0: Params) -> float:
    r""":math:`\max_k \|Z_k(T) - Z_k(0)\|` (sum-norm): how far training moved the residual weights."""
    return float(np.max(np.linalg.norm(p.V - p0.V, axis=(1, 2)) + np.linalg.norm(p.W - p0.W, axis=(1, 2))))


def interpolant_distance(p: Params, r: Params) -> float:
    r"""L^2(ds) distance between the weights' depth embeddings, Eq. (8), computed exactly.

    :math:`\mathcal Z^L(s) = Z_{\lfloor (L-1)s\rfloor + 1}` is piecewise constant with pieces of length
    1/(L-1); on the merged breakpoints both embeddings are constant, so
    :math:`\big(\int_0^1 (\|V^L(s) - V^{L'}(s)\|_F + \|W^L(s) - W^{L'}(s)\|_F)^2 ds\big)^{1/2}` is a finite sum.
    """
    La, Lb = p.L, r.L
    cuts = np.unique(np.r_[np.arange(La) / (La - 1), np.arange(Lb) / (Lb - 1)])
    mids, widths = 0.5 * (cuts[1:] + cuts[:-1]), np.diff(cuts)
    ia = np.minimum(np.floor((La - 1) * mids).astype(int), La - 1)
    ib = np.minimum(np.floor((Lb - 1) * mids).astype(int), Lb - 1)
    gap = (np.linalg.norm(p.V[ia] - r.V[ib], axis=(1, 2)) + np.linalg.norm(p.W[ia] - r.W[ib], axis=(1, 2)))
    return float(np.sqrt(np.sum(widths * gap**2)))


def trained(L, seed, activation="tanh", kind="paper", lr=LR, steps=STEPS, clip=CLIP, train_outer=False,
            n=N_SAMPLES, d=D, m=M):
    """Clipped GD of Eq. (5) from the initialisation of Section 3 (``kind="paper"``: V = 0, one shared W) or i.i.d.

    Returns (p(0), p(T), losses, stats) with ``stats`` the :class:`theory.implicit.TrainStats` of the run
    (largest unclipped update coordinate, number of steps where the clip was active). ``train_outer=False``
    (default) keeps A = B = I, as in Section 5.1: the flow of Eq. (5) with the bounded Lipschitz operator
    pi = 0 on the A and B blocks (pi acts on each block's own space, so Eq. (5) has one operator per block);
    True trains them with the same clip. The run is a deterministic function of its arguments and is
    memoised, so that the experiments of Prop. 3 and Thm 4 share it; treat the arrays as read-only.
    """
    return _trained(int(L), int(seed), activation, kind, float(lr), int(steps), float(clip), bool(train_outer),
                    int(n), int(d), int(m))


#: the memo of :func:`trained`: (L, seed, activation, kind, lr, steps, clip, train_outer, n, d, m) -> (p(0), p(T),
#: losses, stats); :func:`trajectories` fills it with the runs it makes (bit for bit those of ``train``)
_RUNS: dict = {}


def _trained(L, seed, activation, kind, lr, steps, clip, train_outer, n, d, m):
    key = (L, seed, activation, kind, lr, steps, clip, train_outer, n, d, m)
    if key not in _RUNS:
        X, Y = _data(seed, n, d)
        p0 = initialize(d, m, int(L), np.random.default_rng(seed), kind=kind)
        _RUNS[key] = (p0, *train(X, Y, p0, activation, lr=lr, steps=steps, train_outer=train_outer,
                                 method="clipped", clip=clip, return_stats=True))
    return _RUNS[key]


@dataclass(frozen=True)
class Trajectory:
    r"""The quantities of Prop. 3 and Thm 4 at every step of one seed's clipped-GD runs (:func:`trajectories`).

    Attributes
    ----------
    grid : tuple of int
        The depths, trained side by side.
    difference, displacement : ndarray, shape (depths, steps + 1)
        :math:`\max_k\|Z_{k+1}(t_j) - Z_k(t_j)\|` and :math:`\max_k\|Z_k(t_j) - Z_k(0)\|` (sum norm) after j steps.
    doubling_weights, doubling_outputs : ndarray, shape (doubling depths, steps + 1)
        :math:`\|\mathcal Z^L(t_j) - \mathcal Z^{2L}(t_j)\|_{L^2(ds)}` and :math:`\max_i\|F^L(x_i; t_j) -
        F^{2L}(x_i; t_j)\|` for the depths L whose 2L is in the grid.
    """

    grid: tuple
    difference: np.ndarray
    displacement: np.ndarray
    doubling_weights: np.ndarray
    doubling_outputs: np.ndarray


@functools.lru_cache(maxsize=None)
def trajectories(seed, grid, activation="tanh", kind="paper", lr=LR, steps=STEPS, clip=CLIP, train_outer=False,
                 n=N_SAMPLES, d=D, m=M) -> Trajectory:
    r"""Clipped GD of Eq. (5) at every depth of ``grid`` side by side, the statements' quantities at every step.

    The same runs as :func:`trained` (the same initialisation, the step of :func:`theory.implicit.train` with
    ``method="clipped"``, one gradient per step: bit for bit its iterates), observed after each step so that
    the bounds of Prop. 3 and the convergence of Thm 4, which hold for every :math:`t \in [0, T]`, are read on
    the whole time grid :math:`t_j = j\,\mathrm{lr}`; the final states, losses and clip statistics go to the memo
    of :func:`trained`. Memoised; treat the arrays as read-only.
    """
    grid = tuple(int(L) for L in grid)
    lr, clip, steps = float(lr), float(clip), int(steps)
    X, Y = _data(seed, n, d)
    start = {L: initialize(d, m, L, np.random.default_rng(seed), kind=kind) for L in grid}
    state = {L: [p.A.copy(), p.V.copy(), p.W.copy(), p.B.copy()] for L, p in start.items()}
    pairs = [L for L in grid if 2 * L in grid]
    diff, disp = np.empty((len(grid), steps + 1)), np.empty((len(grid), steps + 1))
    dz, df = np.empty((len(pairs), steps + 1)), np.empty((len(pairs), steps + 1))
    losses = {L: np.empty(steps + 1) for L in grid}
    top, active = dict.fromkeys(grid, 0.0), dict.fromkeys(grid, 0)
    for j in range(steps + 1):
        now = {L: Params(*state[L]) for L in grid}
        for i, L in enumerate(grid):
            diff[i, j] = max_successive_difference(now[L])
            disp[i, j] = max_displacement(now[L], start[L])
        outputs = {L: forward(X, now[L], activation)[1] for L in {*pairs, *(2 * L for L in pairs)}}
        for i, L in enumerate(pairs):
            dz[i, j] = interpolant_distance(now[L], now[2 * L])
            df[i, j] = np.max(np.linalg.norm(outputs[L] - outputs[2 * L], axis=1))
        for L in grid:
            A, V, W, B = state[L]
            losses[L][j], g = loss_and_gradient(X, Y, now[L], activation)
            if j == steps:
                continue
            up = L * max(float(np.max(np.abs(g.V))), float(np.max(np.abs(g.W))))  # as train's return_stats
            if train_outer:
                up = max(up, float(np.max(np.abs(g.A))), float(np.max(np.abs(g.B))))
            top[L], active[L] = max(top[L], up), active[L] + int(up > clip)
            with np.errstate(over="ignore", invalid="ignore"):  # the step of theory.implicit.train, clipped
                V += lr * np.clip(-L * g.V, -clip, clip)
                W += lr * np.clip(-L * g.W, -clip, clip)
                if train_outer:
                    A += lr * np.clip(-g.A, -clip, clip)
                    B += lr * np.clip(-g.B, -clip, clip)
    for L in grid:
        key = (L, int(seed), activation, kind, lr, steps, clip, bool(train_outer), int(n), int(d), int(m))
        _RUNS.setdefault(key, (start[L], Params(*state[L]), losses[L], TrainStats(top[L], active[L], steps)))
    return Trajectory(grid, diff, disp, dz, df)


def clip_summary(runs, clip=CLIP):
    """Over the runs' :class:`~theory.implicit.TrainStats`: the largest update coordinate before clipping, the
    clip level and the total number of steps where the clip was active."""
    runs = list(runs)
    return {"max_update_coordinate": max(r.max_update for r in runs), "clip": float(clip),
            "clip_active_steps": int(sum(r.clipped_steps for r in runs))}


def clip_never_active(runs, clip=CLIP):
    """True when no step of any run had a coordinate of its update direction above ``clip``: the clipped
    runs of Eq. (5) are then exactly the plain runs of Eq. (4)."""
    s = clip_summary(runs, clip)
    return s["clip_active_steps"] == 0 and s["max_update_coordinate"] <= clip


def clip_verdict(runs, clip=CLIP) -> Verdict:
    """A bound: the clip was never active in the runs (the runs are then plain GD of Eq. (4), comparable with
    Section 5.1): no step clipped, and the largest coordinate of an update direction <= ``clip``."""
    s = clip_summary(list(runs), clip)
    return threshold_verdict("bound", s, {"clip_active_steps_max": 0, "max_update_coordinate_max": float(clip)},
                             context=f"clip at {clip} of Eq. (5); when it acts the runs differ from plain GD of "
                                     "Eq. (4)")


def clip_was_active(runs):
    """True when the clip changed at least one step of at least one run (the active-clip record needs it)."""
    return any(r.clipped_steps > 0 for r in runs)


def run_stats(activation="tanh", kind="paper", grid=GRID, seeds=SEEDS, **kw):
    """The TrainStats of every run of a difference table."""
    return [trained(int(L), s, activation, kind, **kw)[3] for L in grid for s in seeds]


def difference_table(activation, kind="paper", grid=GRID, seeds=SEEDS, **kw):
    """max_k ||Z_{k+1}(T) - Z_k(T)||, one row per seed, one column per depth."""
    return np.array([[max_successive_difference(trained(int(L), s, activation, kind, **kw)[1]) for L in grid]
                     for s in seeds])


def doubling_distances(activation="tanh", kind="paper", grid=GRID[:-1], seeds=SEEDS, **kw):
    """||Z^L(T) - Z^{2L}(T)||_{L^2(ds)} of the depth embeddings (Eq. (8)) and max_i ||F^L - F^{2L}||."""
    grid = np.asarray(grid)
    dz = np.empty((len(seeds), grid.size))
    df = np.empty_like(dz)
    n, d = kw.get("n", N_SAMPLES), kw.get("d", D)
    for i, s in enumerate(seeds):
        X = _data(s, n, d)[0]
        for j, L in enumerate(grid):
            p, r = trained(int(L), s, activation, kind, **kw)[1], trained(2 * int(L), s, activation, kind, **kw)[1]
            dz[i, j] = interpolant_distance(p, r)
            df[i, j] = np.max(np.linalg.norm(forward(X, p, activation)[1] - forward(X, r, activation)[1], axis=1))
    return dz, df


# --------------------------------------------------------------------------- experiment: Prop. 3 and Thm 4


@dataclass(frozen=True)
class TrainingConfig(Config):
    """Clipped GD runs of Eq. (5) on model (3) at several depths (Prop. 3, Thm 4)."""

    activation: str = field(Choice(*ACTIVATIONS), "tanh", "sigma of model (3): \"tanh\" (Section 3's assumptions), "
                            "\"gelu\" (Section 5's), \"relu\" (Appendix D), ...")
    kind: str = field(Choice(*INIT_KINDS), "paper", "Initialisation: \"paper\" (Section 3: V = 0, one W shared by the "
                      "layers), \"iid\" or \"smooth\".")
    train_outer: bool = field(Bool(), False, "Train A and B too (with the same clip, which then acts); False keeps "
                              "A = B = I (Section 5.1).")
    grid: tuple = field(Ints(low=2, min_len=2, increasing=True), (8, 16, 32, 64, 128, 256), "Depths L (geometric); "
                        "Thm 4 compares each L whose 2L is in the grid with 2L.")
    seeds: tuple = seeds_field((0, 1, 2, 3, 4), "Draws of data (seed 1000 + s) and initialisation (seed s).")
    n: int = field(Int(low=1), N_SAMPLES, "Number of samples.")
    d: int = field(Int(low=1), D, "q = d = d', the width of the hidden states.")
    m: int = field(Int(low=1), M, "Residual width.")
    lr: float = field(Real(0, closed="neither"), LR, "Learning rate; the residual weights take L lr (the factor L "
                      "of Eq. (4)).")
    steps: int = field(Int(low=0), STEPS, "GD steps; flow time T = lr * steps.")
    clip: float = field(Real(0, closed="neither"), CLIP, "pi of Eq. (5): coordinatewise clip of the update direction "
                        "at this level (independent of L).")

    @property
    def doubling_grid(self):
        """The depths L of the grid whose 2L is in the grid too (Thm 4's ladder)."""
        return tuple(L for L in self.grid if 2 * L in self.grid)

    @property
    def run_kwargs(self):
        return {"lr": self.lr, "steps": self.steps, "clip": self.clip, "train_outer": self.train_outer,
                "n": self.n, "d": self.d, "m": self.m}


@dataclass(frozen=True)
class TrainingResult:
    """Outcome of :func:`measure_training` (tables: one row per seed, one column per depth; trajectories: one more
    axis, the steps j = 0 .. steps, flow time t_j = j lr).

    Prop. 3 and Thm 4 hold for every t in [0, T]: each table is the sup over the time grid (every step) of its
    trajectory, the worst time, and the verdicts also read the slope at each time of the grid.

    Attributes
    ----------
    grid, doubling_grid : ndarray
        Depths of the tables, and of the depth-doubling tables.
    times : ndarray
        The time grid t_j = j lr, j = 0 .. steps.
    difference : ndarray
        sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| (sum norm ||V||_F + ||W||_F).
    displacement : ndarray
        sup_t max_k ||Z_k(t) - Z_k(0)||.
    doubling_weights, doubling_outputs : ndarray
        sup_t ||Z^L(t) - Z^{2L}(t)||_{L^2(ds)} and sup_t max_i ||F^L(x_i; t) - F^{2L}(x_i; t)||.
    difference_t, displacement_t, doubling_weights_t, doubling_outputs_t : ndarray
        The same quantities at every time of the grid, shape (seeds, depths, steps + 1).
    final_loss : list of float
        Loss at T of each seed at the largest depth.
    stats : list
        TrainStats of every run (clip statistics).
    """

    config: TrainingConfig = _field(repr=False)
    grid: np.ndarray
    doubling_grid: np.ndarray
    difference: np.ndarray
    displacement: np.ndarray
    doubling_weights: np.ndarray
    doubling_outputs: np.ndarray
    final_loss: list
    stats: list = _field(repr=False)
    times: np.ndarray = _field(default=None, repr=False)
    difference_t: np.ndarray = _field(default=None, repr=False)
    displacement_t: np.ndarray = _field(default=None, repr=False)
    doubling_weights_t: np.ndarray = _field(default=None, repr=False)
    doubling_outputs_t: np.ndarray = _field(default=None, repr=False)

    def clip_summary(self):
        return clip_summary(self.stats, self.config.clip)


def measure_training(config: TrainingConfig) -> TrainingResult:
    """Train model (3) by clipped GD of Eq. (5) at every depth and seed, observed at every step; the tables of
    Prop. 3 and Thm 4 (sup over the time grid) and their trajectories."""
    c = config
    kw = c.run_kwargs
    grid, dgrid = np.array(c.grid), np.array(c.doubling_grid)
    runs = [trajectories(s, tuple(c.grid), c.activation, c.kind, **kw) for s in c.seeds]
    diff_t = np.array([r.difference for r in runs])
    disp_t = np.array([r.displacement for r in runs])
    dz_t = np.array([r.doubling_weights for r in runs]).reshape(len(c.seeds), dgrid.size, c.steps + 1)
    df_t = np.array([r.doubling_outputs for r in runs]).reshape(len(c.seeds), dgrid.size, c.steps + 1)
    final = [float(trained(int(grid[-1]), s, c.activation, c.kind, **kw)[2][-1]) for s in c.seeds]
    stats = run_stats(c.activation, c.kind, grid=grid, seeds=c.seeds, **kw)
    return TrainingResult(c, grid, dgrid, diff_t.max(axis=2), disp_t.max(axis=2), dz_t.max(axis=2),
                          df_t.max(axis=2), final, stats, c.lr * np.arange(c.steps + 1), diff_t, disp_t, dz_t, df_t)


def slopes_over_time(grid, table_t):
    r"""The least-squares slope of :math:`\log e` against :math:`\log L` (all seeds' points, as
    :func:`theory.rates.fit_rate` fits them) at each time of the grid, shape (steps + 1,); NaN at the times where
    some entry is 0 (t = 0 and the first step from the weight-tied init, where the quantity vanishes at every
    depth and the bound holds trivially)."""
    grid = np.asarray(grid, dtype=float)
    x = np.log(np.broadcast_to(grid[None, :], table_t.shape[:2])).ravel()
    out = np.full(table_t.shape[2], np.nan)
    for j in range(table_t.shape[2]):
        e = table_t[:, :, j].ravel()
        if np.all(e > 0) and np.all(np.isfinite(e)):
            out[j] = np.polyfit(x, np.log(e), 1)[0]
    return out


def worst_time(grid, table_t, expected, times):
    """The time of the grid whose slope deviates most from ``expected["slope"]``: a dict with that deviation
    (``worst_time_slope_dev``, inf if no time has a slope), its slope, its time, and the number of times read."""
    slopes = slopes_over_time(grid, table_t)
    ok = np.isfinite(slopes)
    if not ok.any():
        return {"worst_time_slope_dev": math.inf, "worst_time_slope": math.nan, "worst_time": math.nan,
                "times_read": 0, "times_trivial": int(slopes.size)}
    dev = np.where(ok, np.abs(slopes - expected["slope"]), -np.inf)
    j = int(np.argmax(dev))
    return {"worst_time_slope_dev": float(dev[j]), "worst_time_slope": float(slopes[j]), "worst_time": float(times[j]),
            "times_read": int(ok.sum()), "times_trivial": int((~ok).sum()),
            "slope_range_over_time": [float(np.nanmin(slopes)), float(np.nanmax(slopes))]}


# Predicted slope -1 (Prop. 3: ||Z_{k+1} - Z_k|| <= K / L on [0, T]). Tolerance 0.15: the fit runs
# from L = 8, where the O(1/L^2) part of the consecutive differences still bends the line slightly;
# measured slopes lie in [-1.02, -0.98]; ReLU and i.i.d. init lie above -0.6.
EXPECTED_PROP3 = {"slope": -1.0, "tol": 0.15}
# i.i.d. contrast: the differences are ~ sqrt(2 q m) at every depth (slope 0); same tolerance.
EXPECTED_IID = {"slope": 0.0, "tol": 0.15}
# boundedness: max_k ||Z_k(T) - Z_k(0)|| does not grow with L (slope 0 within 0.1 on the ladder).
EXPECTED_BOUNDED = {"slope": 0.0, "tol": 0.1}
EXPECTED_THM4 = {"slope": -1.0, "tol": 0.15}  # tolerance as for Prop. 3 (same runs, same curvature)


def difference_fit(result: TrainingResult):
    """The fit of sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| against L (Prop. 3; the sup over the time grid)."""
    return fit_rate(result.grid, result.difference)


def displacement_fit(result: TrainingResult):
    """The fit of sup_t max_k ||Z_k(t) - Z_k(0)|| against L (boundedness in Prop. 3)."""
    return fit_rate(result.grid, result.displacement)


def doubling_fits(result: TrainingResult):
    """(fit of sup_t ||Z^L(t) - Z^{2L}(t)||_{L^2(ds)}, fit of sup_t max_i ||F^L(x_i; t) - F^{2L}(x_i; t)||) against L
    (Thm 4 (ii) and (iv): uniformly over t)."""
    return (fit_rate(result.doubling_grid, result.doubling_weights),
            fit_rate(result.doubling_grid, result.doubling_outputs))


def _over_time_verdict(fit, grid, table_t, times, expected, what, **extra) -> Verdict:
    """A rate on the worst time: the fit of the sup over the time grid within ``expected`` (its CI recorded), and
    the slope at every time of the grid (where the quantity is not 0 at every depth) within the same tolerance
    (``worst_time_slope_dev``, the largest deviation over the times, against ``tol``)."""
    worst = worst_time(grid, table_t, expected, times)
    measured = {**fit.to_measured(), **worst, **extra}
    return rates_verdict({"L": fit}, {"L": expected}, measured=measured,
                         thresholds={"worst_time_slope_dev_max": float(expected["tol"])},
                         context=f"{what}: sup over the {len(times)} times of the grid, and the slope at each time")


def prop3_verdict(result: TrainingResult, expected=EXPECTED_PROP3) -> Verdict:
    """A rate, Prop. 3: the slope of sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| against L, predicted -1, and the slope at
    every time of the grid within the same tolerance (the statement holds for every t in [0, T]);
    ``expected=EXPECTED_IID`` for the i.i.d. contrast, predicted 0."""
    return _over_time_verdict(difference_fit(result), result.grid, result.difference_t, result.times, expected,
                              "max_k ||Z_{k+1}(t) - Z_k(t)||")


def bounded_verdict(result: TrainingResult, expected=EXPECTED_BOUNDED) -> Verdict:
    """A rate: the slope of sup_t max_k ||Z_k(t) - Z_k(0)|| against L, predicted 0 (bounded in L), and at every
    time of the grid."""
    return _over_time_verdict(displacement_fit(result), result.grid, result.displacement_t, result.times, expected,
                              "max_k ||Z_k(t) - Z_k(0)||")


def thm4_verdict(result: TrainingResult, expected=EXPECTED_THM4) -> Verdict:
    """A rate, Thm 4 (ii): the slope of sup_t ||Z^L(t) - Z^{2L}(t)||_{L^2(ds)} against L, predicted -1, and at every
    time of the grid; the outputs' slope (sup over t) and its CI are recorded in ``measured``
    (``output_doubling_slope``, ``output_doubling_ci``)."""
    fit, fit_out = doubling_fits(result)
    return _over_time_verdict(fit, result.doubling_grid, result.doubling_weights_t, result.times, expected,
                              "||Z^L(t) - Z^2L(t)||_L2", output_doubling_slope=float(fit_out.slope),
                              output_doubling_ci=[float(c) for c in fit_out.ci])


def iid_verdict(result: TrainingResult, expected=EXPECTED_IID) -> Verdict:
    """A rate, prop-3/iid: from i.i.d. init the consecutive differences do not shrink (slope 0)."""
    return prop3_verdict(result, expected)


def relu_breaks_rate(fit, expected=EXPECTED_PROP3):
    """Predicate of prop-3/relu: the whole 95% CI of the slope lies above the smooth tolerance band."""
    return bool(fit.ci[0] > expected["slope"] + expected["tol"])


def relu_verdict(result: TrainingResult, expected=EXPECTED_PROP3) -> Verdict:
    """A bound, prop-3/relu: the lower end of the 95% CI of the slope of sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| lies
    strictly above the smooth band, ``ci_low > slope + tol`` (= -0.85): the O(1/L) law fails for ReLU.
    ``measured`` carries the fit, the per-seed slopes and L times the differences."""
    fit = difference_fit(result)
    per_seed = [float(fit_rate(result.grid, row).slope) for row in result.difference]
    band = expected["slope"] + expected["tol"]
    measured = {**fit.to_measured(), "slope_ci_low": float(fit.ci[0]), "per_seed_slopes": per_seed,
                "L_times_difference": (result.difference * result.grid).tolist(),
                **worst_time(result.grid, result.difference_t, expected, result.times)}
    # strictly above the band: the smallest float above it as a ">=" threshold
    return threshold_verdict("qualitative", measured, {"slope_ci_low_above": band},
                             context=f"{rate_verdict(fit, expected, grid_label='L').message}; per-seed slopes "
                                     f"{np.round(per_seed, 2).tolist()}")


def _training_summary(r: TrainingResult):
    out = {"difference_slope": float(fit_rate(r.grid, r.difference).slope),
           "displacement_slope": float(fit_rate(r.grid, r.displacement).slope), **r.clip_summary()}
    if r.doubling_grid.size >= 2:
        out["doubling_slope"] = float(fit_rate(r.doubling_grid, r.doubling_weights).slope)
    return out


# --------------------------------------------------------------------------- experiment: Prop. 2


def fourier_path(shape, rng, n_features=16, lengthscale=0.3):
    r"""A fixed smooth matrix path s -> sqrt(2/R) sum_r a_r cos(w_r s + b_r) (random Fourier features of the
    squared-exponential kernel of Section 4.3, length scale ``lengthscale``); usable at every depth."""
    a = rng.standard_normal((n_features, *shape))
    w = rng.standard_normal(n_features) / lengthscale
    b = rng.uniform(0.0, 2.0 * np.pi, n_features)

    def path(s):
        s = np.atleast_1d(np.asarray(s, dtype=float))
        c = np.sqrt(2.0 / n_features) * np.cos(np.outer(s, w) + b)  # (len(s), R)
        return np.tensordot(c, a, axes=(1, 0))

    return path


def ode_output(X, Vpath, Wpath, rtol=1e-12, atol=1e-12):
    r"""F(x) = H(1) of Eq. (6) with A = B = I and sigma = tanh: DOP853 on all samples at once."""
    n, q = X.shape
    m = Vpath(0.0).shape[-1]

    def rhs(s, y):
        H = y.reshape(n, q)
        return (np.tanh(H @ Wpath(s)[0].T / np.sqrt(q)) @ Vpath(s)[0].T / np.sqrt(m)).ravel()

    sol = solve_ivp(rhs, (0.0, 1.0), X.ravel(), method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the DOP853 reference of Eq. (6) failed: {sol.message}")
    return sol.y[:, -1].reshape(n, q)


def euler_output(X, Vpath, Wpath, L, depth_scale=1.0):
    """F^L(x) of Eq. (3) with V_k = depth_scale * V(k/L), W_k = W(k/L) (right end points), A = B = I."""
    s = np.arange(1, L + 1) / L
    q = X.shape[1]
    p = Params(np.eye(q), depth_scale * Vpath(s), Wpath(s), np.eye(q))
    return forward(X, p, "tanh")[1]


PROP2_GRID = np.array([8, 16, 32, 64, 128, 256, 512])
EXPECTED_PROP2 = {"slope": -1.0, "tol": 0.1}  # Euler's first order; the reference error is ~1e-12


def prop2_errors(depth_scale=lambda L: 1.0, seeds=SEEDS, grid=PROP2_GRID, n=N_SAMPLES, d=D, m=M):
    """max_i ||F^L(x_i) - F(x_i)||, one row per seed (smooth paths and samples from seed 2000 + s)."""
    out = np.empty((len(seeds), len(grid)))
    for i, seed in enumerate(seeds):
        rng = np.random.default_rng(2000 + seed)
        Vpath, Wpath = fourier_path((d, m), rng), fourier_path((m, d), rng)
        X = rng.standard_normal((n, d))
        ref = ode_output(X, Vpath, Wpath)
        for j, L in enumerate(grid):
            out[i, j] = np.max(np.linalg.norm(euler_output(X, Vpath, Wpath, int(L), depth_scale(L)) - ref, axis=1))
    return out


@dataclass(frozen=True)
class Prop2Config(Config):
    """Sizes of :func:`measure_prop2` (tanh, A = B = I, smooth random Fourier weight paths)."""

    grid: tuple = field(Ints(low=1, min_len=2, increasing=True), (8, 16, 32, 64, 128, 256, 512), "Depths L "
                        "(geometric).")
    seeds: tuple = seeds_field((0, 1, 2, 3, 4), "Draws of the weight paths and samples (seed 2000 + s).")
    n: int = field(Int(low=1), N_SAMPLES, "Number of samples.")
    d: int = field(Int(low=1), D, "q = d = d', the width of the hidden states.")
    m: int = field(Int(low=1), M, "Residual width.")


@dataclass(frozen=True)
class Prop2Result:
    """``errors`` (seeds x depths) = max_i ||F^L(x_i) - F(x_i)|| against the DOP853 solution of Eq. (6)."""

    grid: np.ndarray
    errors: np.ndarray


def measure_prop2(config: Prop2Config) -> Prop2Result:
    """Euler (depth L) against the neural ODE (6) with Lipschitz weights V(s), W(s)."""
    c = config
    grid = np.array(c.grid)
    return Prop2Result(grid, prop2_errors(seeds=c.seeds, grid=grid, n=c.n, d=c.d, m=c.m))


def prop2_fit(result: Prop2Result):
    """The fit of the Euler error against L (floor 1e-10, the reference's accuracy)."""
    return fit_rate(result.grid, result.errors, floor=1e-10)


def prop2_verdict(result: Prop2Result, expected=EXPECTED_PROP2) -> Verdict:
    """A rate, Prop. 2: slope of sup_x ||F(x) - F^L(x)|| against L, predicted -1 (Euler's first order)."""
    return rate_verdict(prop2_fit(result), expected, grid_label="L")


# --------------------------------------------------------------------------- experiment: Appendix D

APPD_C, APPD_LR, APPD_STEPS = 2.0, 0.05, 4000  # flow time 200 of the depth-scaled flow
APPD_GRID = (4, 8, 16)
EXPECTED_APPD = {"atol": 1e-8}


def appendix_d_weights(L, activation="relu", c=APPD_C, lr=APPD_LR, steps=APPD_STEPS):
    r"""GD on the scalar depth-2L network of Appendix D, with the toolkit's exact gradient.

    q = d = d' = m = 1, A = B = 1, V_k = 1 (not trained), so that
    :math:`h_{k+1} = h_k + \frac1{2L}\sigma(w_{k+1} h_k)`; one sample (x, y) = (1, C);
    init :math:`w_k(0) = (-1)^k / (2L)`; update :math:`w \leftarrow w - \eta\,2L\,\partial_w\ell`.
    Returns w_1 .. w_{2L} after ``steps`` steps.
    """
    depth = 2 * L
    k = np.arange(1, depth + 1)
    W = ((-1.0) ** k / depth).reshape(depth, 1, 1)
    V = np.ones((depth, 1, 1))
    X, Y = np.ones((1, 1)), np.full((1, 1), c)
    for _ in range(steps):
        _, g = loss_and_gradient(X, Y, Params(np.ones((1, 1)), V, W, np.ones((1, 1))), activation)
        W = W - lr * depth * g.W
    return W[:, 0, 0]


def appendix_d_result(activation="relu", grid=APPD_GRID, c=APPD_C, lr=APPD_LR, steps=APPD_STEPS):
    """Measured weights against (56): even layers -> w* = 2L(C^{1/L} - 1), odd layers stay -1/(2L).
    Returns (identity result, max |w_{k+1} - w_k| per L)."""
    computed, reference, jumps = [], [], []
    for L in grid:
        w = appendix_d_weights(L, activation, c, lr, steps)
        computed.append(w)
        ref = np.where(np.arange(1, 2 * L + 1) % 2 == 0, 2 * L * (c ** (1.0 / L) - 1.0), -1.0 / (2 * L))
        reference.append(ref)
        jumps.append(float(np.max(np.abs(np.diff(w)))))
    return identity_error(np.concatenate(computed), np.concatenate(reference)), jumps


@dataclass(frozen=True)
class AppDConfig(Config):
    """Sizes of :func:`measure_app_d` (the scalar depth-2L network of Appendix D)."""

    grid: tuple = field(Ints(low=1, increasing=True), APPD_GRID, "Values of L (the network has 2L layers).")
    activation: str = field(Choice(*ACTIVATIONS), "relu", "\"relu\" (the counter-example); another activation "
                            "breaks the closed form (56).")
    C: float = field(Real(1, closed="neither"), APPD_C, "The target y = C for x = 1 (C > 1, Appendix D's target).")
    lr: float = field(Real(0, closed="neither"), APPD_LR, "GD learning rate, with the depth-scaled step 2L lr.")
    steps: int = field(Int(low=0), APPD_STEPS, "GD steps; flow time lr * steps (long enough to converge).")


@dataclass(frozen=True)
class AppDResult:
    """``identity``: the computed weights against (56) (an IdentityResult); ``jumps``: max_k |w_{k+1} - w_k|
    per L."""

    grid: tuple
    identity: object
    jumps: list


def measure_app_d(config: AppDConfig) -> AppDResult:
    """Train the network of Appendix D and compare with the closed form (56)."""
    c = config
    ident, jumps = appendix_d_result(c.activation, c.grid, c.C, c.lr, c.steps)
    return AppDResult(tuple(c.grid), ident, jumps)


def app_d_verdict(result: AppDResult, expected=EXPECTED_APPD) -> Verdict:
    """An identity, Appendix D: the trained weights equal the closed form (56) to ``atol``; ``measured`` also
    carries max_k |w_{k+1} - w_k| per L (``max_successive_difference``) and L times it."""
    return with_measured(identity_verdict(result.identity, expected), grid_L=list(result.grid),
                         max_successive_difference=list(result.jumps),
                         L_times_max_difference=[L * j for L, j in zip(result.grid, result.jumps)])


# --------------------------------------------------------------------------- presets and registry

_TRAINING_PAPER = TrainingConfig(activation="gelu", n=100, d=16, m=32, lr=0.01, steps=500,
                                 grid=(8, 16, 32, 64, 128, 256, 512, 1024))
#: the variants of the training runs that single records measure (one registered experiment each): the check
#: preset with these fields changed; the paper preset is Section 5.1's with the same change
TRAINING_VARIANTS = {"training_gelu": {"activation": "gelu"}, "training_active_clip": {"train_outer": True},
                     "training_iid": {"kind": "iid"}, "training_relu": {"activation": "relu"}}

PRESETS = {
    "training": {
        "check": TrainingConfig(),
        # Section 5.1 "Large-depth limit" (Appendix E): n = 100, d = 16, m = 32, 500 iterations of lr L x 1e-2
        # (flow time 5), GELU; depths of Figure 1 (left)
        "paper": _TRAINING_PAPER,
    },
    **{name: {"check": TrainingConfig(**change), "paper": dataclasses.replace(_TRAINING_PAPER, **change)}
       for name, change in TRAINING_VARIANTS.items()},
    "prop2": {
        "check": Prop2Config(),
        # the sizes of Section 5.1 (n = 100, d = 16, m = 32) on a longer depth ladder
        "paper": Prop2Config(n=100, d=16, m=32, grid=(8, 16, 32, 64, 128, 256, 512, 1024, 2048)),
    },
    "app_d": {
        "check": AppDConfig(),
        # Appendix D states the limit for every L; a longer ladder
        "paper": AppDConfig(grid=(4, 8, 16, 32, 64)),
    },
}


def _register():
    from theory.experiments import register

    register("implicit_reg.training", config=TrainingConfig, presets=PRESETS["training"], measure=measure_training,
             verdict=prop3_verdict,
             claims={"implicit-reg/prop-3": None, "implicit-reg/prop-3/bounded": bounded_verdict,
                     "implicit-reg/thm-4": thm4_verdict},
             summary=_training_summary)
    for name, claim_id, verdict in (("training_gelu", "implicit-reg/prop-3/gelu", prop3_verdict),
                                    ("training_active_clip", "implicit-reg/prop-3/active-clip", prop3_verdict),
                                    ("training_iid", "implicit-reg/prop-3/iid", iid_verdict),
                                    ("training_relu", "implicit-reg/prop-3/relu", relu_verdict)):
        register(f"implicit_reg.{name}", config=TrainingConfig, presets=PRESETS[name], measure=measure_training,
                 verdict=verdict, claims=(claim_id,), summary=_training_summary)
    register("implicit_reg.prop2", config=Prop2Config, presets=PRESETS["prop2"], measure=measure_prop2,
             verdict=prop2_verdict, claims=("implicit-reg/prop-2",),
             summary=lambda r: {"slope": float(prop2_fit(r).slope)})
    register("implicit_reg.app_d", config=AppDConfig, presets=PRESETS["app_d"], measure=measure_app_d,
             verdict=app_d_verdict, claims=("implicit-reg/app-d",),
             summary=lambda r: {"max_abs_err": float(r.identity.max_abs_err), "jumps": list(r.jumps)})


_register()
