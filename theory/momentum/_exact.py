r"""Exactly reversible Momentum ResNets in fixed-point arithmetic (thesis, ch. 4, Sec. 4.3.2 and App. 4.C).

Private: the integer loops, with no validation (the public functions of :mod:`theory.momentum._api`
check every argument, the work and the memory before calling them).

Positions and velocities are integers in units of 2^-frac_bits. The multiplication of v by a rational
gamma = num / den is made invertible by keeping the digits it drops in an integer buffer, one per
coordinate (the exact multiplication of Maclaurin, Duvenaud and Adams, 2015, which App. 4.C adopts):

    forward:  buf <- buf den + (v mod den);  v <- (v div den) num + (buf mod num);  buf <- buf div num
    inverse:  buf <- buf num + (v mod num);  v <- (v div num) den + (buf mod den);  buf <- buf div den

Each forward multiplication adds log2(den / num) = log2(1/gamma) bits to the buffer, so after N
layers it holds about N log2(1/gamma) ~ N (1 - gamma) / ln 2 bits per coordinate: the memory count
of Sec. 4.3.2. The residual (1 - gamma) f(x_n) is rounded to the grid from the float value of x_n,
which the inverse recomputes identically, so inverse(forward) returns the input bit for bit.
Pure Python integers (arbitrary precision); the float residual uses the kernels of theory.resnet.
"""

from __future__ import annotations

import numpy as np


def to_ints(x, frac_bits):
    """round(x 2^frac_bits) as an object array of Python ints (x a float64 array)."""
    return np.vectorize(lambda t: int(round(t * 2.0 ** frac_bits)), otypes=[object])(x)


def to_floats(z, frac_bits):
    """float(z) / 2^frac_bits of an object array of Python ints (OverflowError beyond the float range)."""
    return np.vectorize(lambda t: float(t) / 2.0 ** frac_bits, otypes=[float])(z)


def forward_loop(x, v, n_layers, num, den, residual):
    """(4.2) with the exact multiplication by num / den; ``residual(x, n)`` is the rounded (1 - gamma) f(x, theta_n)."""
    buf = np.zeros(x.shape, dtype=object)
    buf[...] = 0
    for n in range(n_layers):
        for idx in np.ndindex(x.shape):
            b = buf[idx] * den + v[idx] % den
            w = (v[idx] // den) * num + b % num
            buf[idx], v[idx] = b // num, w
        v = v + residual(x, n)
        x = x + v
    return x, v, buf


def inverse_loop(x, v, buf, n_layers, num, den, residual):
    """(4.3) with the exact division by num / den, undoing :func:`forward_loop` layer by layer."""
    for n in range(n_layers - 1, -1, -1):
        x = x - v
        v = v - residual(x, n)
        for idx in np.ndindex(x.shape):
            b = buf[idx] * num + v[idx] % num
            w = (v[idx] // num) * den + b % den
            buf[idx], v[idx] = b // den, w
    return x, v, buf
