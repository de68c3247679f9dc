"""Adapter: POT's entropic transport plan (`ot.sinkhorn`, POT 0.9) as the oracle's sinkhorn(C, marginals) -> K.

    theory oracle verify sinkhorn ot:sinkhorn --adapter examples/oracle/pot_sinkhorn.py

POT scales exp(-M / reg) for a cost M to marginals a, b. The oracle's logits are costs of the other sign:
M = max C - C with reg = 1 (adding a constant to C changes nothing, Prop. 5.1 of the thesis, chapter 5, and the
shift keeps exp(-M) <= 1 where C is near 1e300). With a = b = 1/n POT returns the plan (marginals 'uniform');
n times it is the doubly stochastic Sinkhorn(C) (marginals 'ones'). POT's defaults (stopThr=1e-9,
numItermax=1000) stop far from the limit the oracle checks and fail the generic cases: converge instead.
"""

import numpy as np


def adapt(fn):
    def call(C, marginals):
        n = C.shape[0]
        a = np.full(n, 1.0 / n)
        P = fn(a, a, C.max() - C, 1.0, stopThr=1e-14, numItermax=10**6)
        return P if marginals == "uniform" else n * P
    return call
