r"""A vectorisable float64 tanh for the Numba kernels.

Numba lowers ``np.tanh`` on a scalar to a libm call, which blocks loop vectorisation and costs
about 15-20 ns per element; this branch-free version lets LLVM vectorise the loops that call it
(under 1 ns per element in a loop compiled with fused multiply-adds, fastmath={"contract"}) and
is within 3 ulp of the exact value (NumPy's tanh: 1 ulp); tests/test_tanh.py measures both
against a 40-digit reference (at 56,000 points: 75 % exact, 24 % at 1 ulp, 0.9 % at 2 and a
handful at 3).

Method. With t = 2 min(|s|, 20) (beyond |s| = 20, tanh s rounds to +-1 in float64), write
t = k ln 2 + r with k = floor(t / ln 2) and r taken in two parts (the high part of ln 2 has
trailing zero bits, so k ln2_hi is exact), 0 <= r < ln 2. On that interval e^r is its diagonal
Pade approximant of order 7, e^r = (U + V) / (U - V) with U = P_e(r^2) the even part and
V = r P_o(r^2) the odd part of P(r) = sum_j c_j r^j, c_j = (14 - j)! 7! / (14! j! (7 - j)!)
(relative error below 1e-18 for r < ln 2). Then, with a = 2^k - 1 and b = 2^k + 1 (exact),

.. math:: \tanh |s| = \frac{2^k e^r - 1}{2^k e^r + 1} = \frac{a U + b V}{b U + a V}
          = 1 - \frac{2 (U - V)}{b U + a V},

one division either way, and every term is positive (r >= 0): no cancellation. The first form is
used for k <= 1 (tanh |s| < 0.6; for k = 0 it is V / U, with V = r/2 + r^3 (...) and
U = 1 + r^2 (...) each rounded once at the end), the second above, where it rounds monotonically
towards 1 as |s| grows. The sign is restored with copysign (so tanh(-0.0) = -0.0); NaN propagates
and +-inf give +-1.
"""

import numpy as np
from numba import njit

# c_1 .. c_7 of the order-7 Pade approximant of e^r (c_0 = 1): c_j = (14 - j)! 7! / (14! j! (7 - j)!)
_PADE = (0.5, 0.11538461538461539, 0.016025641025641024, 0.001456876456876457, 8.741258741258741e-05,
         3.2375032375032376e-06, 5.781255781255781e-08)
_INV_LN2 = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2 rounded to 32 significant bits
_LN2_LO = 1.9082149292705877e-10  # ln 2 - _LN2_HI
_SATURATION = 20.0


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def tanh(s):
    """tanh of one float64, branch-free (see the module docstring for the method and accuracy)."""
    t = 2.0 * min(abs(s), _SATURATION)
    k = int(t * _INV_LN2)  # t >= 0: truncation is the floor, so r >= 0
    r = (t - k * _LN2_HI) - k * _LN2_LO
    r2 = r * r
    c = _PADE  # straight-line code for the vectoriser
    u = ((c[5] * r2 + c[3]) * r2 + c[1]) * r2 + 1.0  # even part of the Pade numerator
    v = (r * r2) * ((c[6] * r2 + c[4]) * r2 + c[2]) + 0.5 * r  # odd part
    scale = float(1 << k)
    a = scale - 1.0
    b = scale + 1.0
    inv = 1.0 / (b * u + a * v)
    out = np.copysign((a * u + b * v) * inv if k < 2 else 1.0 - 2.0 * (u - v) * inv, s)
    return out if s == s else s
