"""Adapter: iisignature's signature (`iisignature.sig`, 0.24) as the oracle's signature(path, depth) -> sig.

    theory oracle verify signature iisignature:sig --adapter examples/oracle/iisignature_sig.py

iisignature returns the standard levels 1..depth (level k is the iterated integral, b^(x)k / k! for one segment
of increment b) in the oracle's order (C order over (i_1, ..., i_k), levels concatenated). The oracle's levels are
factorial (thesis (Marion), Definition 5.4): prepend level 0 (the constant 1) and multiply level k by k!.
"""

import math

import numpy as np


def adapt(fn):
    def call(path, depth):
        d = path.shape[1]
        standard = np.concatenate([[1.0], fn(path, depth)]) if depth > 0 else np.array([1.0])
        return standard * np.concatenate([np.full(d ** k, float(math.factorial(k))) for k in range(depth + 1)])
    return call
