"""Oracle kernels: hermite coefficients of activations (theory.pl.hermite_coefficient)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register


def _hermite_cases():
    from theory.pl import ACTIVATIONS

    return [Case(f"{a}_r{r}", {"activation": a, "r": r}, {"activation": a, "r": r})
            for a in ACTIVATIONS for r in (0, 1, 2, 3, 5, 10, 25, 60)]


register(Kernel(
    name="hermite_coefficient",
    module="theory.pl",
    signature="fn(activation, r) -> eta   (E[sigma(Z) He_r(Z)] / sqrt(r!), Z ~ N(0, 1); a float or 0-d array)",
    outputs=("eta",),
    make_cases=_hermite_cases,
    reference=lambda activation, r: (np.asarray(__import__("theory.pl", fromlist=["hermite_coefficient"])
                                                .hermite_coefficient(activation, r)),),
    tolerance=lambda inputs, ref, eps: (max(2e-12, 64.0 * eps),),
    rule="|eta - eta_ref| <= max(2e-12, 64 eps)",
    why="a well-conditioned integral (|eta_r| <= ||sigma||_L2(gauss)); the reference is accurate to 1e-12 "
        "absolute (closed forms or quadrature split at the kinks), so the bound is that accuracy twice; plain "
        "Gauss-Hermite quadrature of a kinked activation (ReLU) misses it at high r",
))
