r"""Hermite coefficients :math:`\eta_r(\sigma)` of an activation (paper key ``implicit-reg``, Section B,
"Hermite transform"; used by Lemma 21 and Proposition 5).

.. math::

    \eta_r(\sigma) = \mathbb E_{Z\sim\mathcal N(0,1)}[\sigma(Z)\,h_r(Z)], \qquad
    h_r = \mathrm{He}_r / \sqrt{r!},

with :math:`\mathrm{He}_r` the probabilists' Hermite polynomials, so that :math:`(h_r)` is an orthonormal
basis of :math:`L^2(\mathcal N(0,1))` and Parseval gives :math:`\sum_r \eta_r^2 = \mathbb E[\sigma(Z)^2]`.

How each activation is computed (no Gauss-Hermite quadrature: it converges slowly at a kink):

* ``relu``: :math:`\eta_0 = \varphi(0)`, :math:`\eta_1 = 1/2` and, for :math:`r \ge 2`, integrating
  :math:`\mathrm{He}_r\varphi = (-1)^r\varphi^{(r)}` twice by parts on :math:`[0, \infty)`,
  :math:`\mathbb E[Z_+\mathrm{He}_r(Z)] = \varphi(0)\,\mathrm{He}_{r-2}(0)`, with
  :math:`\mathrm{He}_{2j}(0) = (-1)^j (2j-1)!!` and :math:`\mathrm{He}_{2j+1}(0) = 0`.
* ``leaky_relu`` :math:`x_+ + s\,x_-` :math:`= s\,x + (1 - s)\,x_+`: the two closed forms combined.
* ``identity``: :math:`\eta_1 = 1`, all others 0.
* ``sin``: by Stein's identity :math:`\mathbb E[f(Z)\mathrm{He}_r(Z)] = \mathbb E[f^{(r)}(Z)]` and
  :math:`\mathbb E[\sin(Z + c)] = e^{-1/2}\sin c`: :math:`\eta_r = e^{-1/2}\sin(r\pi/2)/\sqrt{r!}`.
* ``gelu`` :math:`x\Phi(x)`: with :math:`A_k = \mathbb E[\Phi(Z)\mathrm{He}_k(Z)]`
  (:math:`A_0 = 1/2`; for :math:`k \ge 1`, Stein's identity and :math:`\varphi^2 = \varphi(\cdot\sqrt2)/\sqrt{2\pi}`
  give :math:`A_k = (-1)^{k-1} M_{k-1} / (2\sqrt\pi)`, :math:`M_j = \mathbb E[\mathrm{He}_j(Z/\sqrt2)]
  = (-1)^{j/2} j! / (4^{j/2}(j/2)!)` for even :math:`j`, 0 for odd :math:`j`) and
  :math:`x\mathrm{He}_r = \mathrm{He}_{r+1} + r\,\mathrm{He}_{r-1}`:
  :math:`\eta_r\sqrt{r!} = A_{r+1} + r A_{r-1}`. So :math:`\eta_0 = 1/(2\sqrt\pi)`, :math:`\eta_1 = 1/2`,
  :math:`\eta_r = 0` for odd :math:`r \ge 3` and :math:`\eta_r = (M_r + r M_{r-2})/(2\sqrt{\pi\,r!})` for even
  :math:`r \ge 2`.
* ``tanh`` (no closed form): odd, so :math:`\eta_r = 0` for even :math:`r`; for odd :math:`r`,
  :math:`2\int_0^{Z_{\max}}\tanh(z)h_r(z)\varphi(z)\,dz` by composite Gauss-Legendre on panels of width 1/2
  (tanh is analytic in the strip :math:`|\mathrm{Im}\,z| < \pi/2`, so 40 nodes per panel are exact to
  rounding), :math:`h_r(z)e^{-z^2/4}` by the stable normalised three-term recursion, and
  :math:`Z_{\max} = \sqrt{4r+2} + 12` (beyond the turning point of the Hermite function the integrand is
  below :math:`e^{-70}`). The result is verified against a second rule with 28 nodes per panel.

The closed forms are evaluated with exact rational arithmetic (:class:`fractions.Fraction`) for
:math:`\eta_r^2 \cdot \mathrm{const}`, then one correctly rounded conversion and one square root: the relative
error is a few ulps for every :math:`r \le` :data:`RMAX`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._validation import check_choice, check_finite_output, check_int, check_interval

__all__ = ["ACTIVATIONS", "RMAX", "hermite_coefficient", "hermite_coefficients"]

#: Activation names accepted by :func:`hermite_coefficient`.
ACTIVATIONS = ("gelu", "identity", "leaky_relu", "relu", "sin", "tanh")
#: Largest accepted order r: the tanh quadrature evaluates e^{-z^2/4} up to z = sqrt(4 r + 2) + 12, which
#: must not underflow (z <= ~54); the closed forms would go much further.
RMAX = 300

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_2SQRT_PI = 1.0 / (2.0 * math.sqrt(math.pi))
_EXP_M_HALF = math.exp(-0.5)


def _signed_sqrt(sign, square):
    """sign * sqrt(square) with ``square`` an exact Fraction: one rounding for float(), one for sqrt."""
    return 0.0 if sign == 0 or square == 0 else sign * math.sqrt(float(square))


def _double_factorial_odd(k):
    """(k - 1)!! for even k >= 0, i.e. |He_k(0)|."""
    return math.factorial(k) // (2 ** (k // 2) * math.factorial(k // 2))


def _relu(r):
    if r == 0:
        return _INV_SQRT_2PI
    if r == 1:
        return 0.5
    k = r - 2
    if k % 2:
        return 0.0
    sign = -1 if (k // 2) % 2 else 1
    return _INV_SQRT_2PI * _signed_sqrt(sign, Fraction(_double_factorial_odd(k) ** 2, math.factorial(r)))


def _sin(r):
    if r % 2 == 0:
        return 0.0
    sign = -1 if ((r - 1) // 2) % 2 else 1
    return _EXP_M_HALF * _signed_sqrt(sign, Fraction(1, math.factorial(r)))


def _gelu_M(j):
    """M_j = E[He_j(Z / sqrt 2)] = (-1)^{j/2} j! / (4^{j/2} (j/2)!) for even j, 0 for odd j (exact)."""
    if j % 2:
        return Fraction(0)
    h = j // 2
    return Fraction((-1) ** h * math.factorial(j), 4**h * math.factorial(h))


def _gelu(r):
    if r == 0:
        return _INV_2SQRT_PI
    if r == 1:
        return 0.5  # A_2 + A_0 = 0 + 1/2
    if r % 2:
        return 0.0
    q = _gelu_M(r) + r * _gelu_M(r - 2)
    sign = (q > 0) - (q < 0)
    return _INV_2SQRT_PI * _signed_sqrt(sign, q * q / math.factorial(r))


def _identity(r):
    return 1.0 if r == 1 else 0.0


def _gauss_legendre_panels(zmax, n_nodes, width=0.5):
    """Nodes and weights of composite n-point Gauss-Legendre on [0, zmax], panels of ``width``."""
    x, w = np.polynomial.legendre.leggauss(n_nodes)
    edges = np.arange(0.0, zmax + width, width)
    a, b = edges[:-1, None], edges[1:, None]
    nodes = 0.5 * (b - a) * x[None, :] + 0.5 * (a + b)
    weights = 0.5 * (b - a) * w[None, :]
    return nodes.ravel(), weights.ravel()


def _hermite_functions(z, rmax):
    """psi_k = h_k(z) e^{-z^2/4} for k = 0..rmax, shape (rmax + 1, len(z)), by the recursion of h_k,
    psi_{k+1} = (z psi_k - sqrt(k) psi_{k-1}) / sqrt(k + 1): bounded (|psi_k| <= ~1.1), so no overflow
    where h_k(z) alone would overflow."""
    H = np.empty((rmax + 1, z.size))
    H[0] = np.exp(-0.25 * z * z)
    if rmax >= 1:
        H[1] = z * H[0]
    for k in range(1, rmax):
        H[k + 1] = (z * H[k] - math.sqrt(k) * H[k - 1]) / math.sqrt(k + 1)
    return H


def _tanh_all(rmax, n_nodes=40):
    """eta_0..eta_rmax of tanh by composite Gauss-Legendre on [0, Z_max] (odd integrand doubled)."""
    zmax = math.sqrt(4.0 * rmax + 2.0) + 12.0
    z, w = _gauss_legendre_panels(zmax, n_nodes)
    H = _hermite_functions(z, rmax)
    eta = 2.0 * (H @ (w * np.tanh(z) * np.exp(-0.25 * z * z) * _INV_SQRT_2PI))
    eta[0::2] = 0.0  # tanh is odd: even orders vanish exactly
    return eta


_TANH_CACHE = {"rmax": -1, "eta": np.zeros(0)}


def _tanh(r):
    if r % 2 == 0:
        return 0.0
    if r > _TANH_CACHE["rmax"]:
        rmax = max(r, 2 * _TANH_CACHE["rmax"], 40)
        rmax = min(rmax, RMAX)
        eta = _tanh_all(rmax)
        check = _tanh_all(rmax, n_nodes=28)
        err = np.abs(eta - check).max()
        if not err <= 1e-14:  # never observed; a guard against a future change of the rule
            raise RuntimeError(f"theory.pl.hermite_coefficient: the tanh quadrature failed its self-check "
                               f"(two rules differ by {err:.3g}).")
        _TANH_CACHE.update(rmax=rmax, eta=eta)
    return float(_TANH_CACHE["eta"][r])


_CLOSED = {"gelu": _gelu, "identity": _identity, "relu": _relu, "sin": _sin, "tanh": _tanh}


def _orders(r, name, func):
    """Validated orders: (flat list of Python ints, output shape or None for a scalar)."""
    if np.ndim(r) == 0 and not isinstance(r, np.ndarray):
        return [check_int(r, name, func=func, minimum=0, maximum=RMAX)], None
    try:
        arr = np.asarray(r)
    except Exception:
        raise TypeError(f"`{name}` of {func} must be an integer or an array of integers; got "
                        f"{type(r).__name__}.") from None
    if arr.ndim == 0:
        return [check_int(arr[()], name, func=func, minimum=0, maximum=RMAX)], None
    if arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        raise TypeError(f"`{name}` of {func} must be an integer or an array of integers; got dtype {arr.dtype}.")
    if arr.size and (arr.min() < 0 or arr.max() > RMAX):
        bad = arr.min() if arr.min() < 0 else arr.max()
        raise ValueError(f"`{name}` of {func} must have entries in [0, {RMAX}]; got {int(bad)}.")
    return [int(k) for k in arr.ravel()], arr.shape


def hermite_coefficient(activation, r, *, negative_slope=0.8):
    r"""Hermite coefficient :math:`\eta_r(\sigma) = \mathbb E[\sigma(Z)\,\mathrm{He}_r(Z)]/\sqrt{r!}`,
    :math:`Z \sim \mathcal N(0, 1)`.

    Parameters
    ----------
    activation : {"gelu", "identity", "leaky_relu", "relu", "sin", "tanh"}
        :math:`\sigma`; ``gelu`` is the exact :math:`x\Phi(x)`, ``leaky_relu`` is :math:`x_+ + s\,x_-`.
    r : int or array_like of int
        Order(s), each in ``[0, RMAX]`` (``RMAX`` = 300).
    negative_slope : float, keyword-only
        :math:`s` of ``leaky_relu`` (default 0.8, as in :func:`theory.scaling.forward`); ignored otherwise.

    Returns
    -------
    float, or ndarray of float64 with the shape of ``r``

    Raises
    ------
    TypeError
        ``activation`` not a string, ``r`` not integer (floats, bools and strings are refused), or
        ``negative_slope`` not a real number.
    ValueError
        Unknown ``activation``, ``r`` negative or above ``RMAX``, ``negative_slope`` not finite.

    Notes
    -----
    Closed forms for every activation except tanh (see the module docstring for their derivation);
    tanh by verified composite Gauss-Legendre quadrature. Measured accuracy (tests/test_pl.py): agreement
    with an independent ``scipy.integrate.quad`` split at the kink to below 1e-13 absolute for r <= 30,
    and Parseval :math:`\sum_r \eta_r^2 = \mathbb E[\sigma(Z)^2]` (e.g. 1/2 for ReLU,
    :math:`(1 - e^{-2})/2` for sin) holds to rounding for the smooth activations.
    Prop. 5 and Lemma 21 of ``implicit-reg`` need an order :math:`r \ge 2` with :math:`\eta_r \ne 0`: for odd
    activations (tanh, sin) take odd :math:`r \ge 3`.

    References
    ----------
    ``implicit-reg`` Section B (Hermite transform), Lemma 21, Proposition 5.

    Examples
    --------
    >>> from theory.pl import hermite_coefficient
    >>> float(hermite_coefficient("relu", 1))
    0.5
    >>> round(float(hermite_coefficient("tanh", 3)), 10)
    -0.1484371908
    """
    func = "theory.pl.hermite_coefficient"
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    orders, shape = _orders(r, "r", func)
    if activation == "leaky_relu":
        s = check_interval(negative_slope, "negative_slope", -np.inf, np.inf, func=func)
        vals = [(1.0 - s) * _relu(k) + (s if k == 1 else 0.0) for k in orders]
    else:
        vals = [_CLOSED[activation](k) for k in orders]
    out = np.array(vals, dtype=np.float64)
    check_finite_output(out, "eta_r", func=func)
    return float(out[0]) if shape is None else out.reshape(shape)


def hermite_coefficients(activation, rmax, *, negative_slope=0.8):
    r"""All coefficients :math:`\eta_0(\sigma), \dots, \eta_{r_{\max}}(\sigma)`, shape ``(rmax + 1,)``.

    Parseval: :math:`\sum_{r \ge 0}\eta_r^2 = \mathbb E[\sigma(Z)^2]`, and the partial sums increase to it
    (geometrically for gelu and sin, like :math:`e^{-c\sqrt r}` for tanh, only like :math:`r^{-3/2}` for the
    kinked relu and leaky_relu, whose :math:`\eta_r^2 \sim r^{-5/2}`).

    Parameters and errors as :func:`hermite_coefficient`, with ``rmax`` an integer in ``[0, RMAX]``.

    Examples
    --------
    >>> from theory.pl import hermite_coefficients
    >>> hermite_coefficients("identity", 3).tolist()
    [0.0, 1.0, 0.0, 0.0]
    """
    func = "theory.pl.hermite_coefficients"
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    rmax = check_int(rmax, "rmax", func=func, minimum=0, maximum=RMAX)
    return hermite_coefficient(activation, np.arange(rmax + 1), negative_slope=negative_slope)
