"""The oracle's kernels, one module per family: cases (generic and hard), the float64 reference and the
tolerance rule of each. Importing this package registers them, in the order ``theory oracle list`` shows."""

from __future__ import annotations

from . import isotonic, topk, resnet, linear, fgn, soft, scaling, hermite, scaling_weights, fbm, implicit, signature, sinkhorn, momentum, momentum_exact, attention, two_timescale  # noqa: F401 - each registers its kernels
from .fbm import fbm_power
from .fgn import ALPHA, fgn_power

__all__ = ["ALPHA", "fbm_power", "fgn_power"]
