r"""A non-global minimum of the orthogonal-context loss (6.3) at the sizes of Fig. 6.3 (right panel).

M. E. Sander's thesis, chapter 6: for orthogonal contexts the zero-loss parameters are those of Prop. 6.11, and
§6.5 offers Fig. 6.3 as "experimental evidence for convergence" of gradient descent from a random
initialisation (global convergence is stated there as an open problem). At the caption's sizes (d = 10,
H = 8 < d, T = 15) gradient descent with a step below the stability limit 2 / λ_max reaches the zero-loss set from
most initialisations (entries i.i.d. N(0, 0.3²)), but not from all: from seed 5 it settles at a point of loss
5.43 where the gradient vanishes and the Hessian has no negative eigenvalue, and perturbed restarts come back to
the same loss. :func:`local_minimum` measures that point; :func:`local_minimum_verdict` judges it:

1. gradient descent with step ``lr`` (``lr`` λ_max < 2 at the end: the iteration is stable there, so the
   point is not an artefact of the discretisation) from the seed's initialisation, then a BFGS polish on the
   same loss (``scipy.optimize.minimize``, the exact gradient of :func:`theory.icl.population_loss`) to the
   stationary point the descent is converging to;
2. the loss there is ``>= 1`` (the global minimum is 0, Prop. 6.11), the gradient norm is small and so is the
   directional derivative by central differences of the loss alone along random directions (no gradient
   kernel involved);
3. the Hessian (central differences of the exact gradient) has smallest eigenvalue ``>= -1e-8 λ_max``, and the
   second difference of the loss alone along its eigenvector is not negative beyond rounding;
4. ``restarts`` perturbed copies (entries + N(0, ``restart_scale``²)) descend again and none reaches a loss
   below the point's (a saddle would let them escape downhill).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np
from scipy.optimize import minimize

from ... import icl
from ...claims import Verdict, threshold_verdict
from .. import register
from ..config import Config, Int, Real, Seed, field
from . import _random_start

__all__ = ["LocalMinimumConfig", "LocalMinimumResult", "local_minimum", "local_minimum_verdict",
           "LOCAL_MINIMUM_PRESETS", "LOCAL_MINIMUM_TOL"]


@dataclass(frozen=True)
class LocalMinimumConfig(Config):
    """The initialisation, the descent and the tests of :func:`local_minimum` (orthogonal contexts, d = 2δ)."""

    delta: int = field(Int(low=1), 5, "Conjugate pairs δ (d = 2δ; Fig. 6.3: d = 10).")
    heads: int = field(Int(low=1), 8, "H (Fig. 6.3: 8 < d).")
    tmax: int = field(Int(low=2), 15, "T_max (Fig. 6.3: 15).")
    seed: int = field(Seed(), 5, "Seed of the initialisation (A, B, P drawn as in icl_ar.prop611).")
    reference_seed: int = field(Seed(), 0, "A seed whose descent reaches zero loss, drawn beside it.")
    init_scale: float = field(Real(0, closed="neither"), 0.3, "Standard deviation of the initial entries.")
    lr: float = field(Real(0, closed="neither"), 5e-4, "Step of gradient descent (below 2 / λ_max at the point).")
    steps: int = field(Int(low=1), 100000, "Gradient-descent steps before the BFGS polish (flow time 50 at the "
                       "default lr; 1.6e6 steps alone end at the polished point's loss to 12 digits).")
    polish_gtol: float = field(Real(0, closed="neither"), 1e-9, "Gradient-norm tolerance of the BFGS polish.")
    fd_step: float = field(Real(0, closed="neither"), 1e-5, "Step of the central differences of the gradient "
                           "(Hessian).")
    directions: int = field(Int(low=1), 4, "Random directions of the loss-only derivative tests.")
    restarts: int = field(Int(low=0), 3, "Perturbed restarts.")
    restart_scale: float = field(Real(0, closed="neither"), 1e-2, "Standard deviation of the perturbations.")
    restart_steps: int = field(Int(low=0), 20000, "Gradient-descent steps of each restart before its polish.")


LOCAL_MINIMUM_PRESETS = {"check": LocalMinimumConfig(), "paper": LocalMinimumConfig()}  # the caption's sizes


@dataclass(frozen=True)
class LocalMinimumResult:
    """The point reached from ``config.seed`` and what was measured there.

    Attributes
    ----------
    loss, loss_descent : float
        Loss at the polished point and at the end of gradient descent.
    grad_norm : float
        Euclidean norm of the exact gradient at the point (moving entries of P only).
    fd_slope : float
        Largest |central difference of the loss| / (2 h) along unit random directions, h = 1e-4.
    eigenvalues : ndarray
        Eigenvalues of the symmetrised finite-difference Hessian, increasing.
    fd_curvature : float
        Second difference of the loss along the eigenvector of the smallest eigenvalue (step 1e-3).
    restart_losses : tuple of float
    losses, reference_losses : ndarray
        Loss along the descent from ``seed`` and from ``reference_seed``, every 100th step.
    rank_singular_values : ndarray
        Singular values of C = BᵀA at the point.
    """

    config: LocalMinimumConfig
    loss: float
    loss_descent: float
    grad_norm: float
    fd_slope: float
    eigenvalues: np.ndarray = _field(repr=False)
    fd_curvature: float = 0.0
    restart_losses: tuple = ()
    losses: np.ndarray = _field(default=None, repr=False)
    reference_losses: np.ndarray = _field(default=None, repr=False)
    rank_singular_values: np.ndarray = _field(default=None, repr=False)

    def to_measured(self) -> dict:
        w = self.eigenvalues
        excess = [(x - self.loss) / self.loss for x in self.restart_losses]
        return {"loss": self.loss, "loss_descent": self.loss_descent, "grad_norm": self.grad_norm,
                "fd_slope": self.fd_slope, "min_eig": float(w[0]), "max_eig": float(w[-1]),
                "min_eig_over_max": float(w[0] / w[-1]), "lr_times_max_eig": float(self.config.lr * w[-1]),
                "fd_curvature": self.fd_curvature, "restart_losses": list(self.restart_losses),
                "restart_min_rel_excess": float(min(excess)) if excess else 0.0,
                "reference_final_loss": float(self.reference_losses[-1]),
                "singular_values_C": [float(s) for s in self.rank_singular_values]}


class _Loss:
    """The loss (6.3) and its gradient as functions of the moving parameters: A, B and the used entries of P."""

    def __init__(self, H, d, T):
        self.H, self.d, self.T = H, d, T
        self.mask = np.zeros((T, T), bool)
        for t in range(2, T + 1):
            self.mask[t - 2, :t] = True

    def pack(self, A, B, P):
        return np.concatenate([A.ravel(), B.ravel(), P[self.mask]])

    def unpack(self, x):
        n = self.H * self.d
        P = np.zeros((self.T, self.T))
        P[self.mask] = x[2 * n:]
        return x[:n].reshape(self.H, self.d), x[n:2 * n].reshape(self.H, self.d), P

    def value(self, x):
        return float(icl.population_loss(*self.unpack(x), self.T, "orthogonal"))

    def value_and_gradient(self, x):
        loss, gA, gB, gP = icl.population_loss(*self.unpack(x), self.T, "orthogonal", return_gradient=True)
        return float(loss), self.pack(gA, gB, gP)

    def descend(self, x, lr, steps, gtol, tol=0.0):
        """Gradient descent (``steps``, or until the loss is <= ``tol``), then BFGS to a stationary point;
        (point, loss after descent, losses)."""
        A, B, P = self.unpack(x)
        flow = icl.gradient_flow(A, B, P, self.T, "orthogonal", lr=lr, steps=steps, tol=tol)
        x = self.pack(flow.Amat, flow.Bmat, flow.P)
        res = minimize(self.value_and_gradient, x, jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 20000})
        return res.x, float(flow.losses[-1]), flow.losses[::100]


def _initial(config, seed, loss):
    return loss.pack(*_random_start(config.heads, 2 * config.delta, config.tmax, config.init_scale, seed))


def local_minimum(config: LocalMinimumConfig = LOCAL_MINIMUM_PRESETS["check"]) -> LocalMinimumResult:
    r"""Descend from ``config.seed`` and test the point reached for a local minimum (module docstring)."""
    if not isinstance(config, LocalMinimumConfig):
        raise TypeError(f"`config` of theory.experiments.icl_ar.local_minimum must be a LocalMinimumConfig; "
                        f"got {type(config).__name__}.")
    c = config
    loss = _Loss(c.heads, 2 * c.delta, c.tmax)
    x, loss_descent, losses = loss.descend(_initial(c, c.seed, loss), c.lr, c.steps, c.polish_gtol)
    value, g = loss.value_and_gradient(x)
    rng = np.random.default_rng([c.seed, 0])
    slope = 0.0
    for _ in range(c.directions):
        u = rng.standard_normal(x.size)
        u /= np.linalg.norm(u)
        slope = max(slope, abs(loss.value(x + 1e-4 * u) - loss.value(x - 1e-4 * u)) / 2e-4)
    n, h = x.size, c.fd_step
    hess = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        hess[:, i] = (loss.value_and_gradient(x + e)[1] - loss.value_and_gradient(x - e)[1]) / (2 * h)
    w, v = np.linalg.eigh(0.5 * (hess + hess.T))
    t = 1e-3
    curvature = (loss.value(x + t * v[:, 0]) - 2 * value + loss.value(x - t * v[:, 0])) / t**2
    restarts = []
    for k in range(c.restarts):
        noise = np.random.default_rng([c.seed, k + 1]).normal(scale=c.restart_scale, size=x.size)
        restarts.append(loss.value(loss.descend(x + noise, c.lr, c.restart_steps, c.polish_gtol)[0]))
    _, _, reference = loss.descend(_initial(c, c.reference_seed, loss), c.lr, c.steps, c.polish_gtol, tol=1e-12)
    A, B, _ = loss.unpack(x)
    return LocalMinimumResult(c, value, loss_descent, float(np.linalg.norm(g)), slope, w, float(curvature),
                              tuple(restarts), losses, reference, np.linalg.svd(B.T @ A, compute_uv=False))


#: thresholds of :func:`local_minimum_verdict`, with their reasons: a loss far from the global minimum 0; the
#: first-order tests near rounding (the loss is about 5, its rounding about 1e-15, divided by the step 1e-4 or the
#: gradient's own rounding); no negative curvature beyond the finite differences' relative error; the step stable
#: at the point; no restart below the point's loss beyond rounding.
LOCAL_MINIMUM_TOL = {"loss_min": 1.0, "grad_norm_max": 1e-6, "fd_slope_max": 1e-6, "min_eig_over_max_min": -1e-8,
                     "fd_curvature_min": -1e-6, "lr_times_max_eig_max": 2.0, "restart_min_rel_excess_min": -1e-9}


def local_minimum_verdict(result: LocalMinimumResult, tol=LOCAL_MINIMUM_TOL) -> Verdict:
    """Every test of the module docstring against :data:`LOCAL_MINIMUM_TOL` (a qualitative finding: the thesis
    prints no number for it)."""
    m = result.to_measured()
    c = result.config
    restarts = (f"; the lowest of {c.restarts} perturbed restarts at {min(m['restart_losses']):.10g}"
                if m["restart_losses"] else "")
    return threshold_verdict("qualitative", m, dict(tol), context=(
        f"d = {2 * c.delta}, H = {c.heads}, T = {c.tmax}, seed {c.seed}: loss {m['loss']:.10g} against 0 at the "
        f"global minima (seed {c.reference_seed} reaches {m['reference_final_loss']:.2g}){restarts}"))


register("icl_ar.fig63_local_minimum", config=LocalMinimumConfig, presets=LOCAL_MINIMUM_PRESETS,
         measure=local_minimum, verdict=local_minimum_verdict, claims=("icl-ar/fig-6.3/local-minimum",),
         summary=lambda r: {k: v for k, v in r.to_measured().items() if isinstance(v, float)})
