r"""Reduced Figure 4.1 of Sander's thesis, chapter 4: learning x -> -x^3 in one dimension.

Figure 4.1 trains a ResNet (4.1) and a Momentum ResNet (4.2) with gamma = 0.9, both with tied weights
(theta_n = theta) and depth 15, to map x to -x^3 on the real line.  Its caption explains the ResNet's failure by
the first-order ODE that its iterations approximate: the flow of x' = f(x) is an increasing homeomorphism of
the line (trajectories do not cross), while the second-order flow eps x'' + x' = f(x) of a Momentum ResNet
(eps = 1 / (1 - gamma)) can reverse the order of points.

The statement is about those continuous flows: a depth-15 ResNet with step 1 is not order preserving once
|f'| > 1 and can then fit a decreasing map.  The experiment therefore integrates both ODEs over the horizon
T = 15 of the figure (the time of 15 unit steps) with ``refine`` steps per unit of time, so step
h = 1 / refine:

    ResNet:           x_{n+1} = x_n + h f(x_n),
    Momentum ResNet:  v_{n+1} = (1 - h / eps) v_n + (h / eps) f(x_n),   x_{n+1} = x_n + h v_{n+1},  v_0 = 0,

which for refine = 1 is exactly (4.1) and (4.2) with gamma = 1 - 1 / eps, and as refine grows tends to the two
ODEs.  The residual is a one-hidden-layer network f(x) = sum_j a_j tanh(w_j x + b_j), shared by all steps.
Both models are trained by Adam on the mean squared error on a grid of [-1, 1].

The statistic is the final training error of each model against the floor
E_mono = min over nondecreasing maps g of mean (g(x_i) - y_i)^2 (isotonic regression of the targets), which
bounds the error of every order-preserving map, hence of every first-order flow.  For y = -x^3 the floor is
the variance of the targets: the best order-preserving map is a constant.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from theory.claims import Verdict, threshold_verdict

from ..config import Config, Int, Real, Seeds, field

__all__ = ["Fig41Config", "Fig41Result", "measure_fig41", "fig41_verdict", "fig41_figure", "FIG41_PRESETS",
           "isotonic_floor", "FIG41_RESNET_FLOOR_FRACTION", "FIG41_MOMENTUM_FLOOR_FRACTION"]

#: the ResNet fails when its error is at least this fraction of the order-preserving floor
FIG41_RESNET_FLOOR_FRACTION = 0.99
#: the Momentum ResNet succeeds when its error is at most this fraction of the floor
FIG41_MOMENTUM_FLOOR_FRACTION = 0.3


@njit(cache=True)
def _flow_loss_grad(params, x0, y, horizon, n_steps, eps, second, xs, vs, grad):
    """Loss mean (x_N - y)^2 of the tied-weight flow and its gradient in params = (a, w, b) (adjoint sweep)."""
    m = params.shape[0] // 3
    B = x0.shape[0]
    h = horizon / n_steps
    g = 1.0 - h / eps if second else 0.0
    for i in range(B):
        xs[0, i] = x0[i]
        vs[0, i] = 0.0
    for n in range(n_steps):
        for i in range(B):
            x = xs[n, i]
            f = 0.0
            for j in range(m):
                f += params[j] * math.tanh(params[m + j] * x + params[2 * m + j])
            if second:
                v = g * vs[n, i] + (1.0 - g) * f
                vs[n + 1, i] = v
                xs[n + 1, i] = x + h * v
            else:
                vs[n + 1, i] = f
                xs[n + 1, i] = x + h * f
    loss = 0.0
    ax = np.empty(B)
    av = np.zeros(B)
    for k in range(3 * m):
        grad[k] = 0.0
    for i in range(B):
        r = xs[n_steps, i] - y[i]
        loss += r * r / B
        ax[i] = 2.0 * r / B
    for n in range(n_steps - 1, -1, -1):
        for i in range(B):
            x = xs[n, i]
            if second:
                bv = av[i] + h * ax[i]
                c = (1.0 - g) * bv
                av[i] = g * bv
            else:
                c = h * ax[i]
            fp = 0.0
            for j in range(m):
                t = math.tanh(params[m + j] * x + params[2 * m + j])
                s = params[j] * (1.0 - t * t)
                fp += s * params[m + j]
                grad[j] += c * t
                grad[m + j] += c * s * x
                grad[2 * m + j] += c * s
            ax[i] += c * fp
    return loss


def isotonic_floor(y) -> float:
    """Smallest mean squared error of a nondecreasing sequence against ``y`` (pool adjacent violators)."""
    y = np.asarray(y, float)
    blocks = []  # (mean, count)
    for v in y:
        blocks.append([float(v), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    fit = np.concatenate([np.full(c, m) for m, c in blocks])
    return float(np.mean((fit - y) ** 2))


@dataclasses.dataclass(frozen=True)
class Fig41Config(Config):
    """Settings of the reduced Figure 4.1 (thesis, chapter 4)."""

    depth: int = field(Int(low=1), 15, "Number of unit-time layers of the figure (15); the horizon of both flows "
                       "is T = depth.")
    refine: int = field(Int(low=1), 4, "Steps per unit of time (step h = 1 / refine); 1 is the figure's discrete "
                        "networks, larger values approach the first- and second-order ODEs of the caption.")
    gamma: float = field(Real(0, 1, closed="left"), 0.9, "Momentum term of the figure (0.9); eps = 1 / (1 - gamma) "
                         "in units of layers. gamma = 0 makes the second model a ResNet (the negative control).")
    width: int = field(Int(low=1), 16, "Hidden width of the tied residual f(x) = sum_j a_j tanh(w_j x + b_j).")
    points: int = field(Int(low=2), 32, "Training inputs, a uniform grid of [-1, 1]; targets -x^3.")
    seeds: tuple = field(Seeds(), (0, 1, 2, 3), "Seeds of the initialisation (a_j ~ N(0, 1/width), "
                         "w_j, b_j ~ N(0, 1)); one training per seed and model.")
    iterations: int = field(Int(low=1), 800, "Adam iterations.")
    lr: float = field(Real(0, 1, closed="right"), 0.03, "Adam learning rate (betas 0.9, 0.999).")


@dataclasses.dataclass(frozen=True)
class Fig41Result:
    """Final training errors per seed of both models, the order-preserving floor, and seed 0's trajectories.

    ``resnet_order_preserving[k]`` tells whether the trained ResNet map is nondecreasing on the grid (up to
    1e-9), ``trajectories`` holds the activations (time, x) of both models for the first seed.
    """

    config: Fig41Config
    floor: float
    resnet_errors: tuple
    momentum_errors: tuple
    resnet_order_preserving: tuple
    times: np.ndarray = dataclasses.field(repr=False)
    resnet_path: np.ndarray = dataclasses.field(repr=False)
    momentum_path: np.ndarray = dataclasses.field(repr=False)

    def to_measured(self):
        c = self.config
        return {"depth": c.depth, "step": 1.0 / c.refine, "gamma": c.gamma, "seeds": len(c.seeds),
                "floor": self.floor, "resnet_error": list(self.resnet_errors),
                "momentum_error": list(self.momentum_errors),
                "resnet_ratio_max": max(self.resnet_errors) / self.floor if self.floor > 0 else math.inf,
                "momentum_ratio_max": max(self.momentum_errors) / self.floor if self.floor > 0 else math.inf,
                "resnet_order_preserving": sum(self.resnet_order_preserving)}


def _train(cfg, seed, second, x0, y):
    rng = np.random.default_rng(seed)
    m = cfg.width
    p = np.concatenate([rng.standard_normal(m) / math.sqrt(m), rng.standard_normal(m), rng.standard_normal(m)])
    n_steps = cfg.depth * cfg.refine
    eps = 1.0 / (1.0 - cfg.gamma)
    xs = np.empty((n_steps + 1, x0.size))
    vs = np.empty_like(xs)
    grad = np.empty_like(p)
    mom = np.zeros_like(p)
    sq = np.zeros_like(p)
    for k in range(1, cfg.iterations + 1):
        _flow_loss_grad(p, x0, y, float(cfg.depth), n_steps, eps, second, xs, vs, grad)
        mom = 0.9 * mom + 0.1 * grad
        sq = 0.999 * sq + 0.001 * grad * grad
        p = p - cfg.lr * (mom / (1.0 - 0.9 ** k)) / (np.sqrt(sq / (1.0 - 0.999 ** k)) + 1e-8)
    loss = _flow_loss_grad(p, x0, y, float(cfg.depth), n_steps, eps, second, xs, vs, grad)
    if not math.isfinite(loss):
        from theory._errors import NonFiniteError
        raise NonFiniteError("Training of the Fig. 4.1 flow overflowed; reduce `lr`.")
    return loss, xs.copy()


def measure_fig41(cfg: Fig41Config) -> Fig41Result:
    """Train the ResNet and the Momentum ResNet flows on x -> -x^3 for every seed; errors vs the floor."""
    x0 = np.linspace(-1.0, 1.0, cfg.points)
    y = -x0 ** 3
    floor = isotonic_floor(y)
    res_err, mom_err, order = [], [], []
    paths = None
    for seed in cfg.seeds:
        lr_, xr = _train(cfg, seed, False, x0, y)
        lm, xm = _train(cfg, seed, True, x0, y)
        res_err.append(float(lr_))
        mom_err.append(float(lm))
        order.append(bool(np.all(np.diff(xr[-1]) >= -1e-9)))
        if paths is None:
            paths = (xr, xm)
    times = np.arange(cfg.depth * cfg.refine + 1) / cfg.refine
    return Fig41Result(cfg, floor, tuple(res_err), tuple(mom_err), tuple(order), times, paths[0], paths[1])


def fig41_verdict(result: Fig41Result) -> Verdict:
    """A bound at both ends: in every seed the ResNet stays at the order-preserving floor (error >= 0.99 E_mono,
    ``resnet_worst_ratio_min``) and the Momentum ResNet goes well below it (error <= 0.3 E_mono,
    ``momentum_worst_ratio_max``); a zero floor (a nondecreasing target) makes both ratios NaN, a fail."""
    f = result.floor
    ratio = (lambda errors, worst: worst(errors) / f if f > 0 and all(map(math.isfinite, errors)) else math.nan)
    measured = {"floor": f, "resnet_worst_ratio": ratio(result.resnet_errors, min),
                "momentum_worst_ratio": ratio(result.momentum_errors, max),
                "resnet_best_ratio": ratio(result.resnet_errors, max),
                "momentum_best_ratio": ratio(result.momentum_errors, min), "seeds": len(result.resnet_errors)}
    c = result.config
    return threshold_verdict("qualitative", measured, {"resnet_worst_ratio_min": FIG41_RESNET_FLOOR_FRACTION,
                                                 "momentum_worst_ratio_max": FIG41_MOMENTUM_FLOOR_FRACTION},
                             context=f"training error / order-preserving floor E_mono = {f:.4f} over "
                                     f"{len(result.resnet_errors)} seeds; x -> -x^3 on [-1, 1], tied weights, horizon "
                                     f"{c.depth}, step 1/{c.refine}, gamma {c.gamma}")


def fig41_figure(result: Fig41Result, claim_id: str = "momentum/fig-4.1"):
    """Activations against time for both models (first seed), with the targets -x^3 marked at the end."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(9.0, 3.8))
    c = result.config
    target = -result.resnet_path[0] ** 3
    f = result.floor
    for ax, path, name, err in ((axes[0], result.resnet_path, "ResNet (first order)", result.resnet_errors[0]),
                                (axes[1], result.momentum_path, f"Momentum ResNet, gamma = {c.gamma}",
                                 result.momentum_errors[0])):
        ax.plot(result.times, path, color="tab:blue", lw=0.8, alpha=0.8)
        ax.plot(np.full(target.shape, result.times[-1]), target, "x", color="tab:red", ms=4,
                label="target -x^3")
        ax.set_xlabel(f"time (layers, step 1/{c.refine})")
        ax.set_ylabel("activation x")
        ax.set_title(f"{name}: error {err:.3f} ({err / f:.2f} E_mono)", fontsize=8)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{claim_id}: learning x -> -x^3 with tied weights, horizon {c.depth}", fontsize=9)
    return save_figure(fig, claim_id)


FIG41_PRESETS = {
    "check": Fig41Config(),
    # the figure itself (Fig. 4.1: depth 15, tied weights, gamma = 0.9) with step 1, i.e. the discrete networks
    # (4.1) and (4.2); more seeds and iterations.  At step 1 the ResNet is not an ODE flow: for several seeds it
    # reverses the order of points and fits -x^3, so the verdict is expected to fail on this preset.
    "paper": Fig41Config(depth=15, refine=1, gamma=0.9, seeds=tuple(range(10)), iterations=1500),
}
