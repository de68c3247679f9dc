r"""Figure 4.11 of Sander's thesis (chapter 4): the paradox of Prop. 4.15, in numbers.

Prop. 4.15: A = diag(-1, -lambda), lambda > 0, lambda != 1, has det A = lambda > 0 but no autonomous first-order
flow x' = f(x) has A as its time-1 map. The proof (illustrated by Fig. 4.11): the trajectory of (0, 1) must reach
A(0, 1) = (0, -lambda), so it crosses the axis y = 0 at some (x, 0) at a time t_0 in (0, 1); autonomy makes the
time-t maps commute with A, and A^2 fixes the axis y = 0 pointwise, so the trajectory of A^2 (0, 1) = (0, lambda^2)
is at A^2 (x, 0) = (x, 0) at t_0 too: two distinct points meet, which uniqueness of trajectories forbids.

Measured here, for each lambda of a grid:

* the proof's steps that are computations: det A > 0; A^2 fixes the axis y = 0 (||A^2 e_1 - e_1|| = 0) and maps
  (0, 1) to (0, lambda^2) != (0, 1);
* the linear case, through the package's criterion (:func:`theory.momentum.representable` at eps = 0, Culver's
  condition of Sec. 4.4.3): A is not the time-1 map of any x' = theta x; scipy's principal logarithm of A has an
  imaginary part of Frobenius norm pi sqrt(2) (each single negative eigenvalue has log = i pi (2k + 1) + log|.|);
* the contrast of Thm 4.4: alpha A, with alpha chosen so that -alpha and -alpha lambda lie above lambda_eps, is
  reached by the second-order model (4.7): representable at eps, and Psi_eps(preimage) = alpha A.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.claims import Verdict, threshold_verdict

from .. import register
from ..config import Config, Real, Reals, field

__all__ = ["Prop415Config", "Prop415Result", "measure_prop415", "prop415_verdict", "prop415_figure",
           "PROP415_PRESETS"]


@dataclasses.dataclass(frozen=True)
class Prop415Config(Config):
    """The matrices diag(-1, -lambda) of Prop. 4.15 over a grid of lambda."""

    lambdas: tuple = field(Reals(0, closed="neither"), (0.1, 0.25, 0.5, 0.8, 1.25, 2.0, 4.0, 10.0),
                           "Values of lambda (lambda = 1 gives A = -I, a square of a rotation: the negative control).")
    eps: float = field(Real(0, closed="neither"), 1.0, "eps of the second-order model (4.7) for the contrast.")


@dataclasses.dataclass(frozen=True)
class Prop415Result:
    """Per lambda: det A, the axis defect of A^2, whether the first-order (eps = 0) and second-order criteria
    accept A and alpha A, the imaginary part of log A, and the error of Psi_eps(preimage(alpha A))."""

    lambdas: tuple
    det: tuple
    axis_defect: tuple
    first_order: tuple  # representable(A, 0)
    imag_log: tuple  # ||Im logm(A)||_F
    second_order: tuple  # representable(alpha A, eps)
    second_error: tuple  # |Psi_eps(preimage(alpha A)) - alpha A| / |alpha A|
    alphas: tuple
    eps: float

    def to_measured(self):
        return {"lambda": list(self.lambdas), "n_first_order_representable": int(sum(self.first_order)),
                "n_second_order_refused": int(sum(not s for s in self.second_order)),
                "min_imag_log": float(min(self.imag_log)), "max_second_error": float(max(self.second_error)),
                "min_det": float(min(self.det)), "max_axis_defect": float(max(self.axis_defect))}


def measure_prop415(cfg: Prop415Config) -> Prop415Result:
    """Evaluate the proof's steps and both criteria for every lambda."""
    import scipy.linalg

    import theory.momentum as M

    lam_e = M.lambda_eps(cfg.eps)[0]
    det, axis, first, imag, second, err, alphas = [], [], [], [], [], [], []
    for lam in cfg.lambdas:
        A = np.diag([-1.0, -lam])
        det.append(float(np.linalg.det(A)))
        A2 = A @ A
        axis.append(float(np.linalg.norm(A2 @ [1.0, 0.0] - [1.0, 0.0])))
        first.append(bool(M.representable(A, 0.0)))
        imag.append(float(np.linalg.norm(np.imag(scipy.linalg.logm(A.astype(complex))))))
        alpha = 0.5 * abs(lam_e) / max(1.0, lam)
        alphas.append(alpha)
        ok = bool(M.representable(alpha * A, cfg.eps))
        second.append(ok)
        if ok:
            P = M.psi(M.preimage(alpha * A, cfg.eps), cfg.eps)
            err.append(float(np.abs(P - alpha * A).max() / np.abs(alpha * A).max()))
        else:
            err.append(math.inf)
    return Prop415Result(tuple(cfg.lambdas), tuple(det), tuple(axis), tuple(first), tuple(imag), tuple(second),
                         tuple(err), tuple(alphas), cfg.eps)


def prop415_verdict(result: Prop415Result) -> Verdict:
    """Fig. 4.11 / Prop. 4.15 (criterion fixed before the runs), every lambda of the grid: det A > 0, A^2 fixes the
    axis y = 0 to 1e-15, no A is accepted by the first-order criterion (count 0), ||Im log A||_F >= pi sqrt(2) -
    1e-9, and every alpha A is reached by the second-order model: refused count 0, relative error <= 1e-9."""
    m = result.to_measured()
    measured = {k: m[k] for k in ("min_det", "max_axis_defect", "n_first_order_representable", "min_imag_log",
                                  "n_second_order_refused", "max_second_error")}
    return threshold_verdict("identity", measured, {
        "min_det_above": 0.0, "max_axis_defect_max": 1e-15, "n_first_order_representable_max": 0,
        "min_imag_log_min": math.pi * math.sqrt(2) - 1e-9, "n_second_order_refused_max": 0,
        "max_second_error_max": 1e-9}, context=f"A = diag(-1, -lambda), lambda in {list(result.lambdas)}; "
                                                f"second-order model at eps = {result.eps:g}")


def prop415_figure(result: Prop415Result, claim_id: str = "momentum/fig-4.11"):
    """Fig. 4.11's picture: the points (0, 1), (0, lambda^2), A (0, 1) = (0, -lambda) and the crossing (x, 0).

    The trajectory drawn from (0, 1) is the path X(t) (0, 1) of the time-dependent linear flow X(t) = R(pi t)
    diag(1, lambda^t), which does reach A at t = 1 (A is in GL_2^+); an autonomous flow would also carry
    (0, lambda^2) to the crossing point (x, 0) at the same time t_0 (dashed), the contradiction of the proof.
    """
    from theory.plots import save_figure, subplots

    lam = min(result.lambdas, key=lambda l: abs(l - 0.5))
    t = np.linspace(0.0, 1.0, 200)
    path = np.array([[-math.sin(math.pi * s) * lam ** s, math.cos(math.pi * s) * lam ** s] for s in t])
    x_cross = path[100]
    _, fig, axes = subplots(1, figsize=(4.2, 4.0))
    ax = axes[0]
    ax.axhline(0.0, color="0.7", lw=0.8)
    ax.axvline(0.0, color="0.7", lw=0.8)
    ax.plot(path[:, 0], path[:, 1], "b-", label="trajectory of (0, 1), reaching A(0, 1)")
    ax.plot([0.0, x_cross[0]], [lam ** 2, 0.0], "r--", label="what autonomy forces on (0, lambda^2)")
    for (px, py), name in (((0, 1), "(0, 1)"), ((0, lam ** 2), "(0, lambda^2)"), ((0, -lam), "(0, -lambda)"),
                           ((x_cross[0], 0.0), "(x, 0) at t_0")):
        ax.plot(px, py, "ko", ms=4)
        ax.annotate(name, (px, py), textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.set_aspect("equal")
    ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    ax.set_title(f"{claim_id}: Prop. 4.15, lambda = {lam:g}", fontsize=9)
    return save_figure(fig, claim_id)


PROP415_PRESETS = {
    "check": Prop415Config(),
    # Prop. 4.15 has no sizes: a finer grid of lambda on both sides of 1 (1 itself excluded)
    "paper": Prop415Config(lambdas=tuple(float(x) for x in np.round(np.geomspace(0.01, 100.0, 41), 6)
                                         if abs(x - 1.0) > 1e-9)),
}

register("momentum.prop415", config=Prop415Config, presets=PROP415_PRESETS, measure=measure_prop415,
         verdict=prop415_verdict, claims=("momentum/fig-4.11",),
         summary=lambda r: {k: v for k, v in r.to_measured().items() if k != "lambda"})
