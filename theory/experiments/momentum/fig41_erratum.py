"""The reasoning of the captions of Figs. 4.1 and 4.5 (thesis, chapter 4), measured at the depth they draw.

Both captions explain the ResNet's failure (to learn x -> -x^3 with tied weights, Fig. 4.1; to separate nested
rings, Fig. 4.5) by the depth-15 iterations approximating a first-order ODE, whose trajectories cannot cross.
At depth 15 with unit steps, which is the network (4.1) the figures draw, the iterations are not close to the
flow: trained ResNets reverse the order of points (their trajectories cross) and fit -x^3 far below the error
floor of every order-preserving map. The statement holds for ResNets that are close to the ODE, with a step of
1/4 of a layer (60 steps over the same horizon), the construction of the check of ``momentum/fig-4.1``.

The erratum record runs the measurement of ``momentum.fig41`` twice on the same seeds, target and architecture:
printed (step 1, the figure's networks) and corrected (step 1/refine); it passes when the printed form fails
and the corrected form holds (:func:`theory.claims.erratum_verdict`).
"""

from __future__ import annotations

import dataclasses

from theory.claims import Verdict, erratum_verdict

from ..config import Config, Int, Real, Seeds, field
from ._fig41 import Fig41Config, Fig41Result, fig41_verdict, measure_fig41

__all__ = ["Fig41ErratumConfig", "Fig41ErratumResult", "measure_fig41_erratum", "fig41_erratum_verdict",
           "fig41_erratum_figure", "FIG41_ERRATUM_PRESETS"]


@dataclasses.dataclass(frozen=True)
class Fig41ErratumConfig(Config):
    """The two runs of the Fig. 4.1 erratum: the figure's unit-step networks and a step of 1/refine."""

    depth: int = field(Int(low=1), 15, "Layers of the figure (15), the horizon of both runs.")
    refine: int = field(Int(low=2), 4, "Steps per layer of the corrected run (step 1/refine); the printed run has "
                        "one (unit steps, the networks (4.1) and (4.2) of the figure).")
    gamma: float = field(Real(0, 1, closed="left"), 0.9, "Momentum term of the figure (0.9).")
    seeds: tuple = field(Seeds(), tuple(range(10)), "Seeds of the initialisation, the same in both runs.")
    iterations: int = field(Int(low=1), 1500, "Adam iterations of each training.")


@dataclasses.dataclass(frozen=True)
class Fig41ErratumResult:
    """The printed (unit-step) and corrected (step 1/refine) runs of :func:`theory.experiments.momentum.measure_fig41`."""

    printed: Fig41Result
    corrected: Fig41Result

    def to_measured(self):
        return {"printed": self.printed.to_measured(), "corrected": self.corrected.to_measured()}


def _run(cfg: Fig41ErratumConfig, refine: int) -> Fig41Result:
    return measure_fig41(Fig41Config(depth=cfg.depth, refine=refine, gamma=cfg.gamma, seeds=cfg.seeds,
                                     iterations=cfg.iterations))


def measure_fig41_erratum(cfg: Fig41ErratumConfig) -> Fig41ErratumResult:
    """Train the ResNet and the Momentum ResNet of Fig. 4.1 at unit steps and at step 1/refine, same seeds."""
    return Fig41ErratumResult(_run(cfg, 1), _run(cfg, cfg.refine))


def fig41_erratum_verdict(result: Fig41ErratumResult) -> Verdict:
    """Printed: at unit steps the ResNet stays at the order-preserving floor in every seed (expected to fail);
    corrected: at step 1/refine it does, while the Momentum ResNet goes below 0.3 of the floor (expected to
    hold). Both halves are :func:`theory.experiments.momentum.fig41_verdict`."""
    return erratum_verdict(fig41_verdict(result.printed), fig41_verdict(result.corrected))


def fig41_erratum_figure(result: Fig41ErratumResult, claim_id: str = "momentum/fig-4.1/erratum"):
    """Final training error over the order-preserving floor, per seed, of both models in both runs."""
    import numpy as np

    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(9.0, 3.6))
    for ax, run, name in zip(axes, (result.printed, result.corrected),
                             ("unit steps (the figure's networks)", f"step 1/{result.corrected.config.refine}")):
        seeds = np.arange(len(run.resnet_errors))
        ax.semilogy(seeds, np.asarray(run.resnet_errors) / run.floor, "o", label="ResNet")
        ax.semilogy(seeds, np.asarray(run.momentum_errors) / run.floor, "s", label="Momentum ResNet")
        ax.axhline(1.0, color="k", lw=0.8, label="order-preserving floor")
        ax.set_xlabel("seed")
        ax.set_ylabel("training error / floor")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(f"{claim_id}: Fig. 4.1, x -> -x^3 with tied weights, depth {result.printed.config.depth}",
                 fontsize=10)
    return save_figure(fig, claim_id)


FIG41_ERRATUM_PRESETS = {
    # four seeds: at unit steps seeds 0 and 2 reverse the order of the points
    "check": Fig41ErratumConfig(seeds=(0, 1, 2, 3)),
    # ten seeds, and the corrected run closer to the ODE (step 1/8)
    "paper": Fig41ErratumConfig(refine=8),
}


def _summary(result: Fig41ErratumResult) -> dict:
    return {f"{half}_{k}": v for half, run in (("printed", result.printed), ("corrected", result.corrected))
            for k, v in run.to_measured().items() if isinstance(v, (int, float))}


from .._registry import register  # noqa: E402

register("momentum.fig41_erratum", config=Fig41ErratumConfig, presets=FIG41_ERRATUM_PRESETS,
         measure=measure_fig41_erratum, verdict=fig41_erratum_verdict, claims=("momentum/fig-4.1/erratum",),
         summary=_summary)
