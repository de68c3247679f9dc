r"""Fig. 6.3 of M. E. Sander's thesis (chapter 6, paper key ``icl-ar``) at the caption's sizes, both panels.

The check of ``icl-ar/fig-6.3`` runs the right (orthogonal) panel reduced (d = 4, H = 3, T = 6). This experiment,
``icl_ar.fig63_full``, runs both panels at the caption's sizes already in its ``"check"`` preset: left d = H = 10,
T = 15 (unitary contexts), right d = 10, H = 8 < d, T = 15 (orthogonal contexts), by gradient flow on the exact
loss (6.3) (:func:`theory.experiments.icl_ar.fig63_panels`). At d = 10, T = 15 the Euler step 0.01 of the
reduced orthogonal run overflows; the step here is 0.002.
"""

from __future__ import annotations

from .. import register
from . import (FIG63_PRESETS, Fig63PanelsConfig, OrthogonalFlowConfig, UnitaryFlowConfig,
               fig63_panels, fig63_panels_verdict)

__all__ = ["FIG63_FULL_PRESETS", "ORTHOGONAL_FULL"]

#: the right panel at the caption's sizes: d = 10 (δ = 5), H = 8, T = 15; Euler step 0.002 (0.01 overflows)
ORTHOGONAL_FULL = OrthogonalFlowConfig(delta=5, heads=8, tmax=15, lr=0.002, steps=100000)

FIG63_FULL_PRESETS = {
    "check": Fig63PanelsConfig.of(FIG63_PRESETS["check"], ORTHOGONAL_FULL),
    "paper": Fig63PanelsConfig.of(UnitaryFlowConfig(seeds=tuple(range(10))),
                                  OrthogonalFlowConfig(**{**{k: getattr(ORTHOGONAL_FULL, k)
                                                             for k in OrthogonalFlowConfig.declared()},
                                                          "seeds": tuple(range(10))})),
}


def _summary(r):
    return {k: v for k, v in r.to_measured().items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


register("icl_ar.fig63_full", config=Fig63PanelsConfig, presets=FIG63_FULL_PRESETS, measure=fig63_panels,
         verdict=fig63_panels_verdict, claims=("icl-ar/fig-6.3/full",), summary=_summary)
