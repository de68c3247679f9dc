"""Instances of the hypothesis sets of chapter 6 (thesis of Marion), built from the coordinates of a searched box.

A worst-case search (:func:`theory.worst_case.search_worst_case`) moves through a box of plain numbers; the
builders here turn one point of it into a target of Definition 6.1 and positions of the neurons:

* :func:`build_target`: ``n`` pieces of Dirichlet lengths, values at the edges ``+-M`` of the class or inside,
  and one *focus* jump whose two values are coordinates (``f_left``, ``f_right`` times ``M``); or the target of
  App. 6.C (``thesis=True``);
* :func:`build_positions`: positions in the state space U_eta = {Delta(u) > 2 eta} with ``per_piece`` neurons
  on every piece, their smallest gap ``gap`` eta, and the two neurons flanking the focus jump at ``w`` eta of
  each other, the left one ``t w`` eta below the jump (the configurations where the lemmas' inequalities are
  tight: a flanking neuron close to its jump, two neurons at the edge 2 eta of U);
* :func:`build_free_positions`: positions anywhere in R (Lemmas 6.10 and 6.17 hold for every u), a cluster of
  ``m`` neurons of spread ``spread`` at ``offset`` eta from the focus jump (``anchor=0``) or at an absolute
  place (``anchor=1``).

Every builder returns None for a point outside the hypotheses (pieces too short for the neurons asked, two
equal consecutive values): the search counts it as outside.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["THESIS_V", "THESIS_F", "Target", "Placement", "build_target", "build_positions",
           "build_free_positions", "target_dims", "position_dims", "free_dims"]

#: the target of App. 6.C: jumps and values
THESIS_V = (0.2, 0.35, 0.5, 0.65, 0.8)
THESIS_F = (1.0, 4.0, 1.0, 2.0, 1.0, 4.0)


@dataclasses.dataclass(frozen=True)
class Target:
    """A target of Definition 6.1 and its constants (n, Delta v, Delta f, M), with the focus jump's index."""

    v: np.ndarray
    f: np.ndarray
    n: int
    dv: float
    df: float
    M: float
    focus: int


@dataclasses.dataclass(frozen=True)
class Placement:
    """Sorted positions ``u`` and the indices of the neurons flanking each jump (``left``, ``right``)."""

    u: np.ndarray
    left: np.ndarray
    right: np.ndarray
    eta: float


def target_dims(n_max=4, M_max=8.0):
    """The box coordinates of :func:`build_target`."""
    from theory.worst_case import Dim

    return [Dim("n", 2, n_max, "int"), Dim("target_seed", 0, 2**20, "int"), Dim("M", 1.0, M_max, "log"),
            Dim("f_left", -1.0, 1.0), Dim("f_right", -1.0, 1.0), Dim("alternate", 0, 1, "int"),
            Dim("v_shift", 0.02, 0.98)]


def position_dims(eta=(1e-4, 2e-2), per_piece=(2, 6), gap_min=2.0 * (1 + 1e-9), gap_max=60.0, w_max=400.0):
    """The box coordinates of :func:`build_positions` (``eta`` a range, or None to leave it out)."""
    from theory.worst_case import Dim

    dims = [] if eta is None else [Dim("eta", eta[0], eta[1], "log")]
    return dims + [Dim("gap", gap_min, gap_max, "log"), Dim("w", gap_min, w_max, "log"),
                   Dim("t", 1e-6, 1 - 1e-6), Dim("per_piece", per_piece[0], per_piece[1], "int"),
                   Dim("pos_seed", 0, 2**20, "int")]


def build_target(inst):
    """The target of the instance: App. 6.C's when ``inst["thesis"]``, else drawn from ``target_seed`` (piece
    lengths Dirichlet(2), values +-M with probability 1/2 each piece, else uniform in [-M, M]) with the focus
    jump's values ``f_left * M`` and ``f_right * M`` and its place ``v_shift`` of the way between its neighbouring
    jumps (0 and 1 at the ends); with ``alternate`` = 1 the values alternate between -M and
    +M instead (every jump 2M, the edge of the class). None if two consecutive values are equal."""
    import theory.two_timescale as T

    if inst.get("thesis"):
        v, f = np.asarray(THESIS_V), np.asarray(THESIS_F)
        focus = int(np.random.default_rng(inst.get("pos_seed", 0)).integers(v.size))
    else:
        n = int(inst["n"])
        rng = np.random.default_rng(int(inst["target_seed"]))
        lengths = rng.dirichlet(np.full(n, 2.0))
        v = np.cumsum(lengths)[:-1]
        w = np.where(rng.random(n) < 0.5, rng.choice([-1.0, 1.0], n), rng.uniform(-1.0, 1.0, n))
        focus = int(rng.integers(n - 1))
        w[focus], w[focus + 1] = inst["f_left"], inst["f_right"]
        if "v_shift" in inst:  # the focus jump moved between its neighbours (0 and 1 at the ends)
            lo = v[focus - 1] if focus >= 1 else 0.0
            hi = v[focus + 1] if focus + 1 < v.size else 1.0
            v = v.copy()
            v[focus] = lo + float(inst["v_shift"]) * (hi - lo)
        if int(inst.get("alternate", 0)) == 1:
            w = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (1.0 if inst["f_left"] >= 0 else -1.0)
        f = float(inst["M"]) * w
        if np.any(np.abs(np.diff(f)) <= 1e-9 * float(inst["M"])) or np.any(np.diff(v) <= 0) or v[0] <= 0 or v[-1] >= 1:
            return None
    n, dv, df, M = T.target_constants(v, f)
    return Target(v, f, n, dv, df, M, focus)


def _flank_distances(rng, target, inst, eta, g, mode):
    """(d_left, d_right) per jump: distances of the flanking neurons below and above it. The focus jump's come
    from ``w`` and ``t``; the others are drawn: at least g/2 each (``"free"``, ``"half"``), or one of them
    within eta of its jump (``"near"``). None if the focus pair breaks the mode's rule."""
    J = target.v.size
    dl, dr = np.empty(J), np.empty(J)
    for j in range(J):
        if j == target.focus:
            w = float(inst["w"]) * eta
            dl[j], dr[j] = float(inst["t"]) * w, (1 - float(inst["t"])) * w
            continue
        if mode == "near":
            near = (float(inst["near"]) if "near" in inst else rng.uniform(0.0, 1.0)) * eta
            far = max(g - near, 0.0) + rng.exponential(g)
            dl[j], dr[j] = (near, far) if rng.random() < 0.5 else (far, near)
        else:
            dl[j], dr[j] = g / 2 + rng.exponential(g), g / 2 + rng.exponential(g)
    f = target.focus
    if mode == "near" and not min(dl[f], dr[f]) < eta:
        return None
    if mode == "half" and not min(dl[f], dr[f]) >= eta / 2:
        return None
    return dl, dr


def build_positions(target, inst, mode="free"):
    """Positions in U_eta for the target: ``per_piece`` neurons on each piece, gaps >= ``gap`` eta, the focus
    jump flanked at ``t w`` eta below and ``(1 - t) w`` eta above it, the other flanking neurons drawn from
    ``pos_seed`` (``mode``: ``"free"``, ``"near"``: a neuron within eta of every jump, ``"half"``: the focus
    neurons >= eta/2 from their jump). None if they do not fit (or the separation is not > 2 eta)."""
    import theory.two_timescale as T

    eta = float(inst["eta"])
    g = float(inst["gap"]) * eta
    k = int(inst["per_piece"])
    rng = np.random.default_rng(int(inst["pos_seed"]))
    d = _flank_distances(rng, target, inst, eta, g, mode)
    if d is None:
        return None
    dl, dr = d
    edges = np.concatenate(([0.0], target.v, [1.0]))
    n = edges.size - 1
    out = []
    for p in range(n):
        fixed_lo = target.v[p - 1] + dr[p - 1] if p >= 1 else None
        fixed_hi = target.v[p] - dl[p] if p <= n - 2 else None
        lo = fixed_lo + g if fixed_lo is not None else -eta / 2 + g
        hi = fixed_hi - g if fixed_hi is not None else 1 + eta / 2 - g
        fixed = [x for x in (fixed_lo, fixed_hi) if x is not None]
        c = k - len(fixed)
        if c < 0 or (len(fixed) == 2 and fixed_hi - fixed_lo < g):
            return None
        if any(not (edges[p] <= x <= edges[p + 1]) for x in fixed):
            return None
        if fixed_lo is None and fixed_hi is not None and fixed_hi < -eta / 2 + g:
            return None
        if fixed_hi is None and fixed_lo is not None and fixed_lo > 1 + eta / 2 - g:
            return None
        free = []
        if c > 0:
            room = hi - lo - (c - 1) * g
            if room < 0:
                return None
            free = list(lo + np.sort(rng.uniform(0.0, 1.0, c)) * room + g * np.arange(c))
        out.extend(fixed + free)
    u = np.sort(np.asarray(out, dtype=float))
    if np.any(u <= 0) or np.any(u >= 1) or not T.separation(u, eta) > 2 * eta:
        return None
    L, R = T.flanking(u, target.v)
    return Placement(u, np.asarray(L), np.asarray(R), eta)


def build_free_positions(target, inst):
    """``m`` positions anywhere on the line: ``center + spread z_j``, z_j standard normal from ``pos_seed``,
    with ``center`` = the focus jump + ``offset`` eta (``anchor`` 0) or ``(offset + 3) / 6 * 1.4 - 0.2``
    (``anchor`` 1, a place in [-0.2, 1.2])."""
    eta = float(inst["eta"])
    m = int(inst["m"])
    rng = np.random.default_rng(int(inst["pos_seed"]))
    if int(inst["anchor"]) == 0:
        center = target.v[target.focus] + float(inst["offset"]) * eta
    else:
        center = (float(inst["offset"]) + 3.0) / 6.0 * 1.4 - 0.2
    u = center + float(inst["spread"]) * rng.standard_normal(m)
    if not np.all(np.isfinite(u)):
        return None
    return Placement(np.sort(u), np.zeros(0, int), np.zeros(0, int), eta)


def free_dims(m_max=48, eta=(1e-5, 1.0)):
    """The box coordinates of :func:`build_free_positions`."""
    from theory.worst_case import Dim

    return [Dim("eta", eta[0], eta[1], "log"), Dim("m", 1, m_max, "log-int"), Dim("anchor", 0, 1, "int"),
            Dim("offset", -3.0, 3.0), Dim("spread", 1e-6, 1.0, "log"), Dim("pos_seed", 0, 2**20, "int")]


def sqrt1(m):
    """sqrt(m + 1)."""
    return math.sqrt(m + 1)
