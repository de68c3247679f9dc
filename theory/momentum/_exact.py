r"""Exactly reversible Momentum ResNets in fixed-point arithmetic (thesis, ch. 4, Sec. 4.3.2 and App. 4.C).

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

from .._validation import as_float_array, check_int
from ..resnet._residuals import resolve_residual

__all__ = ["forward_exact", "inverse_exact", "to_fixed", "from_fixed"]


def _check(func, num, den, frac_bits):
    num = check_int(num, "num", func=func, minimum=1)
    den = check_int(den, "den", func=func, minimum=1)
    if num > den:
        raise ValueError(f"`num` of {func} must be <= `den` (gamma = num / den in (0, 1]); got {num} / {den}.")
    frac_bits = check_int(frac_bits, "frac_bits", func=func, minimum=1, maximum=200)
    return num, den, frac_bits


def to_fixed(x, frac_bits=52):
    """Round a float array to integers in units of 2^-frac_bits (an object array of Python ints)."""
    x = as_float_array(x, "x", func="theory.momentum.to_fixed")
    return np.vectorize(lambda t: int(round(t * 2.0 ** frac_bits)), otypes=[object])(x)


def from_fixed(z, frac_bits=52):
    """Float values of fixed-point integers."""
    return np.vectorize(lambda t: float(t) / 2.0 ** frac_bits, otypes=[float])(np.asarray(z, dtype=object))


def _residual_fixed(res, x_int, th, c, frac_bits):
    from ._api import residual_f

    f = residual_f(from_fixed(x_int, frac_bits), th, res)
    return np.vectorize(lambda t: int(round(c * t * 2.0 ** frac_bits)), otypes=[object])(f)


def _theta(func, theta, res, d):
    theta = as_float_array(theta, "theta", func=func)
    pshape = res.param_shape(d)
    if theta.ndim != 1 + len(pshape) or theta.shape[1:] != pshape or theta.shape[0] < 1:
        raise ValueError(f"`theta` of {func} must have shape (N, {', '.join(map(str, pshape))}); got {theta.shape}.")
    return theta


def forward_exact(x0, v0, theta, residual, num, den, frac_bits=52):
    """Exactly reversible (4.2) with gamma = num / den.

    Parameters
    ----------
    x0, v0 : array_like, shape (B, d) (floats, rounded to the grid) -- v0 None means zero
    theta, residual : as in :func:`theory.momentum.forward`
    num, den : int, 1 <= num <= den
    frac_bits : int

    Returns
    -------
    (x_N, v_N, buffer) : object arrays of Python ints, shape (B, d)
    """
    func = "theory.momentum.forward_exact"
    num, den, frac_bits = _check(func, num, den, frac_bits)
    res = resolve_residual(residual, func)
    x = to_fixed(np.atleast_2d(as_float_array(x0, "x0", func=func, ndim=(1, 2))), frac_bits)
    v = np.zeros_like(x) if v0 is None else to_fixed(np.atleast_2d(as_float_array(v0, "v0", func=func,
                                                                                  shape=np.shape(x0))), frac_bits)
    theta = _theta(func, theta, res, x.shape[1])
    buf = np.zeros(x.shape, dtype=object)
    buf[...] = 0
    c = 1.0 - num / den
    for n in range(theta.shape[0]):
        for idx in np.ndindex(x.shape):
            b = buf[idx] * den + v[idx] % den
            w = (v[idx] // den) * num + b % num
            buf[idx], v[idx] = b // num, w
        v = v + _residual_fixed(res, x, theta[n], c, frac_bits)
        x = x + v
    return x, v, buf


def inverse_exact(xN, vN, buffer, theta, residual, num, den, frac_bits=52):
    """Inverse of :func:`forward_exact` (Eq. (4.3) with the exact division by gamma).

    Returns (x_0, v_0, buffer_0) as object arrays of Python ints; from the output of
    :func:`forward_exact` they equal its rounded inputs and a zero buffer exactly.
    """
    func = "theory.momentum.inverse_exact"
    num, den, frac_bits = _check(func, num, den, frac_bits)
    res = resolve_residual(residual, func)
    x = np.array(xN, dtype=object)
    v = np.array(vN, dtype=object)
    buf = np.array(buffer, dtype=object)
    if x.ndim != 2 or v.shape != x.shape or buf.shape != x.shape:
        raise ValueError(f"`xN`, `vN` and `buffer` of {func} must be integer arrays of one shape (B, d); got "
                         f"{x.shape}, {v.shape}, {buf.shape}.")
    theta = _theta(func, theta, res, x.shape[1])
    c = 1.0 - num / den
    for n in range(theta.shape[0] - 1, -1, -1):
        x = x - v
        v = v - _residual_fixed(res, x, theta[n], c, frac_bits)
        for idx in np.ndindex(x.shape):
            b = buf[idx] * num + v[idx] % num
            w = (v[idx] // num) * den + b % den
            buf[idx], v[idx] = b // den, w
    return x, v, buf
