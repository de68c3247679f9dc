r"""Figure 4.2 of Sander's thesis (chapter 4): the memory needed for the gradient, against the depth.

The toy architecture of Sec. 4.3.2: tied weights, f(x, theta) = W_2^T tanh(W_1 x + b) with x in R^d,
n_batch = 500 inputs, d = 500 and gamma = 1 - 1/(50 k) at depth k (the caption). A ResNet stores the activations
(memory O(k d n_batch)); a Momentum ResNet rebuilds them with the inverse (4.3) during the backward pass (memory
O((1 - gamma) k d n_batch) = O(d n_batch / 50), nearly constant in k). The memory is measured by the package's
measurement :func:`theory.experiments.momentum.measure_memory` (peak traced bytes of one call of
:func:`theory.momentum.gradient`, numpy buffers included, the returned parameter gradient subtracted), at the
depths and hidden width p = 8 of the authors' published script (the document does not print p or the depths).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.claims import Verdict, threshold_verdict

from .. import register

__all__ = ["FIG42_PRESETS", "fig42_verdict", "fig42_figure", "FIG42_FLAT_MAX", "FIG42_SLOPE_MIN"]

#: "nearly constant": the memory-free peak at the largest depth over the one at the smallest, at most this
FIG42_FLAT_MAX = 1.5
#: "O(k d n_batch)": the stored peak grows by at least this many bytes per layer and per coordinate of the batch
FIG42_SLOPE_MIN = 0.9 * 8.0


def _memory():
    from . import MemoryConfig, measure_memory

    return MemoryConfig, measure_memory


def fig42_verdict(result) -> Verdict:
    """Fig. 4.2 (criterion fixed before the runs): the Momentum ResNet's (memory-free) peak at the largest depth
    is at most 1.5 x its peak at the smallest depth; the ResNet's (stored) peak grows by at least 0.9 x 8 bytes
    per layer per coordinate of the batch, (peak(N_max) - peak(N_min)) / ((N_max - N_min) B d) >= 7.2 (one
    float64 d-vector per sample per layer); the two gradients agree to 1e-8."""
    n0, n1 = result.depths[0], result.depths[-1]
    per = (result.peak_backprop[-1] - result.peak_backprop[0]) / ((n1 - n0) * result.batch_d)
    measured = {"momentum_growth": result.peak_method[-1] / result.peak_method[0],
                "resnet_bytes_per_layer_per_coordinate": float(per), "grad_rel_diff": float(result.grad_rel_diff)}
    return threshold_verdict("qualitative", measured, {"momentum_growth_max": FIG42_FLAT_MAX,
                                                       "resnet_bytes_per_layer_per_coordinate_min": FIG42_SLOPE_MIN,
                                                       "grad_rel_diff_max": 1e-8}, context=(
        f"peak memory of one gradient, depths {n0}..{n1}, B d = {result.batch_d}; gamma = 1 - 1/(50 k)"))


@dataclasses.dataclass(frozen=True)
class Fig42Result:
    """The memory result of :func:`measure_memory` with the batch size times the dimension (B d)."""

    memory: object
    batch_d: int
    batch: int = 0
    d: int = 0

    def __getattr__(self, name):
        if name.startswith("__") or name == "memory":
            raise AttributeError(name)
        return getattr(self.memory, name)

    def to_measured(self):
        return self.memory.to_measured()


def measure_fig42(cfg) -> Fig42Result:
    """:func:`theory.experiments.momentum.measure_memory` at the figure's sizes (config ``MemoryConfig``; its
    ``method`` is the Momentum ResNet's, "memory_free", and "backprop", storing its activations too, is the negative
    control)."""
    _, measure_memory = _memory()
    return Fig42Result(measure_memory(cfg), cfg.batch * cfg.d, cfg.batch, cfg.d)


def fig42_figure(result, claim_id: str = "momentum/fig-4.2"):
    """Fig. 4.2's layout: memory (MiB, log scale) against depth, ResNet and Momentum ResNet."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1, figsize=(5.0, 2.6))
    ax = axes[0]
    N = np.asarray(result.depths, float)
    ax.plot(N, np.asarray(result.peak_backprop) / 2 ** 20, "-", lw=3, color="darkblue", label="ResNet")
    ax.plot(N, np.asarray(result.peak_method) / 2 ** 20, "-", lw=3, color="red", label="Momentum ResNet")
    ax.set_yscale("log")
    ax.set_xlabel("Depth")
    ax.set_ylabel("Memory (MiB)")
    ax.legend(fontsize=8)
    ax.set_title(f"{claim_id}: memory of one gradient, B d = {result.batch_d}", fontsize=9)
    return save_figure(fig, claim_id)


def _presets():
    MemoryConfig, _ = _memory()
    depths = (1, 101, 201, 301, 401)
    return {
        # the figure's depths and width at B = d = 100 (a twenty-fifth of the buffers)
        "check": MemoryConfig(d=100, batch=100, width=8, depths=depths),
        # the caption's n_batch = 500, d = 500; p = 8 and the depths of the authors' script
        "paper": MemoryConfig(d=500, batch=500, width=8, depths=depths),
    }


FIG42_PRESETS = _presets()


def _config_cls():
    return _memory()[0]


register("momentum.fig42", config=_config_cls(), presets=FIG42_PRESETS, measure=measure_fig42, verdict=fig42_verdict,
         claims=("momentum/fig-4.2",),
         summary=lambda r: {"batch": r.batch, "d": r.d, "momentum_peak_MiB_at_max_depth": r.peak_method[-1] / 2 ** 20,
                            "resnet_peak_MiB_at_max_depth": r.peak_backprop[-1] / 2 ** 20,
                            "momentum_growth": r.peak_method[-1] / r.peak_method[0],
                            "resnet_growth": r.peak_backprop[-1] / r.peak_backprop[0]})
