r"""Fig. 7.2 of M. E. Sander's thesis (chapter 7): the permutohedron :math:`P(\mathbf w)` is the polytope whose
vertices are the permutations of :math:`\mathbf w`; for n = 3 it is the probability simplex
(:math:`\mathbf w = (1, 0, 0)`), the capped simplex (:math:`(\frac12, \frac12, 0)`, top-2) or a hexagon
(:math:`(\frac23, \frac13, 0)`, partial ranking).

The figure is measured through the Euclidean projection onto :math:`P(\mathbf w)`, computed by the reduction of
§7.3/§7.5 to isotonic regression (:func:`theory.isotonic.isotonic_regression`):
:math:`\Pi_{P(\mathbf w)}(\mathbf z) = \mathbf z - \mathbf v_{\sigma^{-1}}`, with :math:`\sigma` sorting
:math:`\mathbf z` in decreasing order and :math:`\mathbf v` the decreasing isotonic regression of
:math:`\mathbf z_\sigma - \mathbf w` (w sorted decreasingly). Three facts are measured per polytope:

* far-away points :math:`t\mathbf d` (t large) project exactly onto the vertex :math:`\mathbf w_{\mathrm{rank}(\mathbf d)}`,
  and the distinct landing points are the distinct permutations of :math:`\mathbf w` (3, 3 and 6 vertices);
* points inside :math:`P(\mathbf w)` (random convex combinations of the vertices) are their own projection;
* the support function :math:`\max_{\mathbf y \in P(\mathbf w)} \langle \mathbf x, \mathbf y\rangle` is the sorted
  formula :math:`\sum_i w_i x_{[i]}` of Proposition 7.1 (compared with the maximum over the vertices).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from theory.claims import Verdict, threshold_verdict
from theory.isotonic import isotonic_regression

from ..config import Config, Int, Real, Seed, field

__all__ = ["FIG72_POLYTOPES", "project_permutohedron", "Fig72Config", "FIG72_PRESETS", "Fig72Result", "fig72",
           "fig72_verdict", "FIG72_EXPECTED"]

#: the three polytopes of Fig. 7.2, by name: w (sorted decreasingly)
FIG72_POLYTOPES = {"simplex": (1.0, 0.0, 0.0), "capped simplex": (0.5, 0.5, 0.0), "hexagon": (2.0 / 3.0, 1.0 / 3.0, 0.0)}


def project_permutohedron(z, w):
    r"""Euclidean projection of ``z`` onto :math:`P(\mathbf w)` by the isotonic reduction.

    Parameters
    ----------
    z, w : array_like, shape (n,)
        The point and the vector whose permutations span the polytope (any order).

    Returns
    -------
    ndarray, shape (n,)
    """
    z = np.asarray(z, dtype=float)
    w = np.sort(np.asarray(w, dtype=float))[::-1]
    if z.shape != w.shape or z.ndim != 1:
        raise ValueError(f"`z` and `w` of project_permutohedron must be vectors of one length; got {z.shape}, {w.shape}")
    order = np.argsort(-z, kind="stable")
    v = isotonic_regression(z[order] - w, increasing=False)[0]
    out = np.empty_like(z)
    out[order] = z[order] - v
    return out


@dataclass(frozen=True)
class Fig72Config(Config):
    """Fig. 7.2: far-away, inside and random points against the three permutohedra of R^3."""

    directions: int = field(Int(low=6), 400, "Random directions d (in the plane sum = 0) of the far-away points (those "
                            "within 2 range(w) / t of a tie are left out: they land on an edge).")
    distance: float = field(Real(1.0, 1e4), 1e3, "t of the far-away points t d / |d| (|w| <= 1: t >> 1 is far).")
    inside: int = field(Int(low=1), 200, "Random convex combinations of the vertices per polytope.")
    seed: int = field(Seed(), 72, "Seed of numpy's default_rng.")


FIG72_PRESETS = {"check": Fig72Config(), "paper": Fig72Config(directions=20_000, inside=20_000)}


@dataclass(frozen=True)
class Fig72Result:
    """Outcome of :func:`fig72`.

    Attributes
    ----------
    landing : dict
        Per polytope, the projections of the far-away points, shape (directions, 3).
    vertices : dict
        Per polytope, the distinct permutations of w, shape (m, 3).
    far_err, inside_err, support_err : dict
        Per polytope, max |Π(t d) - w_rank(d)|, max |Π(y) - y| over inside points y, and
        max |Σ w_i x_[i] - max over the vertices <x, w_σ>| over the directions.
    n_landing : dict
        Per polytope, the number of distinct landing points (rounded to 1e-9).
    n_far : dict
        Per polytope, the directions kept as far away: every gap of t d exceeds twice the range of w (a
        direction nearer a tie lands on an edge, in the normal cone of a face, not of a vertex).
    """

    landing: dict
    vertices: dict
    far_err: dict
    inside_err: dict
    support_err: dict
    n_landing: dict
    n_far: dict

    def to_measured(self) -> dict:
        out = {"far_err": max(self.far_err.values()), "inside_err": max(self.inside_err.values()),
               "support_err": max(self.support_err.values())}
        for name in FIG72_POLYTOPES:
            tag = name.replace(" ", "_")
            out[f"n_vertices_{tag}"] = float(len(self.vertices[name]))
            out[f"n_landing_{tag}"] = float(self.n_landing[name])
            out[f"n_far_{tag}"] = float(self.n_far[name])
            out[f"landing_excess_{tag}"] = float(abs(self.n_landing[name] - len(self.vertices[name])))
        return out


def fig72(config: Fig72Config) -> Fig72Result:
    """Project far-away and inside points onto the three permutohedra of Fig. 7.2 and compare with the vertices."""
    rng = np.random.default_rng(config.seed)
    d = rng.standard_normal((config.directions, 3))
    d -= d.mean(axis=1, keepdims=True)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    landing, vertices, far_err, inside_err, support_err, n_landing, n_far = {}, {}, {}, {}, {}, {}, {}
    for name, w in FIG72_POLYTOPES.items():
        w = np.array(w)
        verts = np.unique(np.array(list(itertools.permutations(w))).round(15), axis=0)
        vertices[name] = verts
        centre = np.full(3, w.mean())
        # far away: t d lies in the normal cone of one vertex when every gap of t d exceeds the range of w
        sd = np.sort(d, axis=1)
        gaps = np.min(np.diff(sd, axis=1), axis=1)
        far = config.distance * gaps > 2.0 * (w.max() - w.min())
        n_far[name] = int(far.sum())
        pts = np.array([project_permutohedron(centre + config.distance * di, w) for di in d[far]])
        # rank(d): the largest w goes where d is largest
        expect = np.empty_like(pts)
        for i, di in enumerate(d[far]):
            expect[i, np.argsort(-di, kind="stable")] = w
        landing[name] = pts
        far_err[name] = float(np.max(np.abs(pts - expect)))
        n_landing[name] = int(len(np.unique(pts.round(9), axis=0)))
        lam = rng.dirichlet(np.ones(len(verts)), size=config.inside)
        inner = lam @ verts
        inside_err[name] = float(max(np.max(np.abs(project_permutohedron(y, w) - y)) for y in inner))
        sorted_formula = np.sort(d, axis=1)[:, ::-1] @ w
        support_err[name] = float(np.max(np.abs(sorted_formula - np.max(d @ verts.T, axis=1))))
    return Fig72Result(landing, vertices, far_err, inside_err, support_err, n_landing, n_far)


#: the criterion of Fig. 7.2, fixed before the run: exact vertices (rounding only), as many landing points as
#: distinct permutations of w, inside points fixed, the support function the sorted formula
FIG72_EXPECTED = {"far_err_max": 1e-12, "inside_err_max": 1e-12, "support_err_max": 1e-12,
                  **{f"landing_excess_{n.replace(' ', '_')}_max": 0.0 for n in FIG72_POLYTOPES}}


def fig72_verdict(result: Fig72Result) -> Verdict:
    """Fig. 7.2's verdict: the thresholds of :data:`FIG72_EXPECTED`."""
    return threshold_verdict("identity", result, FIG72_EXPECTED,
                             context="n = 3; w = (1,0,0), (1/2,1/2,0), (2/3,1/3,0): 3, 3, 6 vertices")
