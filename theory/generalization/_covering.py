"""The covering of Lipschitz parameter functions built in the proof of Prop. 4.3 (thesis (Marion), chapter 4),
and the isometry of the proof of Prop. 4.7.

For m = 1, radius R, Lipschitz constant K and eps > 0: kinks G_x = {k eps / (2K), 0 <= k <= ceil(2K / eps)},
starting values G_y = {-R + k eps / 2, 1 <= k <= floor(4R / eps)}; the centres are the functions starting at a
point of G_y, piecewise linear between consecutive kinks with slopes +-K. There are ``|G_y| 2^|G_x|`` of them,
at most (16 R / eps) 4^(K / eps). For m > 1 the product of eps/m covers of each coordinate is an eps cover in
the (1, inf)-norm. :func:`cover_member` picks the centre greedily (start within eps/2 of f(0), then at each
kink the slope whose end is closer to f), which keeps ||f - centre||_inf <= eps.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import (NonFiniteError, as_float_array, check_int, check_interval, check_memory,
                                check_work)

__all__ = ["cover_log_size", "cover_member", "resnet_to_path"]

_PKG = "theory.generalization."

#: interpreter work of one kink of the greedy construction, in operations counted at 1e9 per second
#: (measured about 5 us per kink on one core, the grids included)
_KINK_OPS = 1e4


def _grid_ratios(R, K, eps):
    """2 K / eps and 4 R / eps as floats (inf when they overflow): the sizes of G_x and G_y, before rounding."""
    return (2 * K / eps if K > 0 else 0.0), 4 * R / eps


def _grid_sizes(R, K, eps):
    nx = math.ceil(2 * K / eps) + 1 if K > 0 else 1
    ny = math.floor(4 * R / eps)
    return nx, ny


def cover_log_size(m, R, K, eps):
    r"""Logarithm of the number of centres of the covering of Prop. 4.3's proof at radius eps / m per coordinate:
    :math:`m (\log |G_y| + |G_x| \log 2)`, with :math:`|G_x| = \lceil 2 K m / \varepsilon \rceil + 1` (0 kinks
    counted when K = 0) and :math:`|G_y| = \lfloor 4 R m / \varepsilon \rfloor`.

    Parameters
    ----------
    m : int
        Number of coordinates, 1 <= m <= 2**53.
    R : float
        Radius, R > 0.
    K : float
        Lipschitz constant, K >= 0.
    eps : float
        Covering radius, 0 < eps <= 4 R m (so that G_y is non-empty).

    Returns
    -------
    float
        log of the number of centres.

    Raises
    ------
    TypeError
        ``m`` not an integer, another argument not a real number.
    ValueError
        An argument outside its range, NaN or infinite; ``eps`` too large for G_y to be non-empty.
    NonFiniteError
        The grid sizes overflow float64 (K m / eps or R m / eps beyond 1e308).
    """
    f = _PKG + "cover_log_size"
    m = check_int(m, "m", func=f, minimum=1, maximum=2**53)
    R = check_interval(R, "R", 0.0, np.inf, func=f)
    K = check_interval(K, "K", 0.0, np.inf, func=f, closed="left")
    eps = check_interval(eps, "eps", 0.0, np.inf, func=f)
    e = eps / m
    rx, ry = _grid_ratios(R, K, e)
    if not (math.isfinite(rx) and math.isfinite(ry)):
        raise NonFiniteError(f"{f}: the grid sizes 2 K m / eps = {rx:g} and 4 R m / eps = {ry:g} overflowed float64.")
    nx, ny = _grid_sizes(R, K, e)
    if ny < 1:
        raise ValueError(f"`eps` of {f} must be <= 4 R m for the grid G_y to be non-empty; got {eps}.")
    out = m * (math.log(ny) + (nx if K > 0 else 0) * math.log(2))
    if not math.isfinite(out):
        raise NonFiniteError(f"{f}: the log size overflowed float64.")
    return out


def cover_member(t, values, R, K, eps, *, max_work=None):
    r"""The greedy centre of the covering of Prop. 4.3's proof for a function sampled at the times ``t``.

    Per coordinate (radius e = eps / m): start at the point of G_y nearest f(0), then at each kink
    k e / (2K) take the slope +K or -K whose end is closer to f there (f extended by its value at 1 beyond
    t = 1); the result satisfies :math:`\|f - c\|_\infty \le e` per coordinate, so
    :math:`\|f - c\|_{1,\infty} \le \varepsilon`.

    Parameters
    ----------
    t : array_like, shape (T,)
        Sample times, strictly increasing from 0 to 1, T >= 2.
    values : array_like, shape (T,) or (T, m)
        The function at the times ``t`` (m >= 1 coordinates), finite, K-Lipschitz between the samples and
        bounded by R in the (1, inf)-norm (both checked on the samples).
    R : float
        Radius, R > 0.
    K : float
        Lipschitz constant, K > 0.
    eps : float
        Covering radius, 0 < eps <= 4 R m (so that G_y is non-empty).
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the m (2 K m / eps + 4 R m / eps) steps of
        the construction (1e4 operations each, interpreter work included).

    Returns
    -------
    ndarray, shape of ``values``
        The centre at the times ``t``, float64.

    Raises
    ------
    TypeError
        An array that is not real, a constant that is not a real number.
    ValueError
        Wrong shapes, NaN or inf, ``t`` not increasing from 0 to 1, ``values`` not bounded by R or not
        K-Lipschitz, constants out of range, grids above the memory limit or the work budget.
    """
    f = _PKG + "cover_member"
    t = as_float_array(t, "t", func=f, ndim=1, min_size=2)
    vals = as_float_array(values, "values", func=f, ndim=(1, 2))
    R = check_interval(R, "R", 0.0, np.inf, func=f)
    K = check_interval(K, "K", 0.0, np.inf, func=f)
    eps = check_interval(eps, "eps", 0.0, np.inf, func=f)
    if t[0] != 0.0 or t[-1] != 1.0 or np.any(np.diff(t) <= 0):
        raise ValueError(f"`t` of {f} must increase from 0 to 1; got [{t[0]}, ..., {t[-1]}].")
    one = vals.ndim == 1
    V = vals[:, None] if one else vals
    if V.shape[0] != t.size:
        raise ValueError(f"`values` of {f} must have {t.size} rows (one per time); got {V.shape[0]}.")
    m = V.shape[1]
    if m < 1:
        raise ValueError(f"`values` of {f} must have at least one coordinate (column); got shape {vals.shape}.")
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.abs(V).sum(axis=1).max() <= R * (1 + 1e-12):
            raise ValueError(f"`values` of {f} exceed R = {R:g} in the (1, inf)-norm.")
        slopes = np.abs(np.diff(V, axis=0)) / np.diff(t)[:, None]
        if not slopes.max() <= K * (1 + 1e-9):
            raise ValueError(f"`values` of {f} are not K-Lipschitz (slope {slopes.max():.4g} > K = {K:g}).")
    e = eps / m
    rx, ry = _grid_ratios(R, K, e)
    check_memory(8.0 * (2 * rx + ry + 4), "eps", eps, func=f,
                 hint=f"The grids hold 2 K m / eps = {rx:.3g} kinks and 4 R m / eps = {ry:.3g} starting values.")
    check_work(m * _KINK_OPS * (rx + 2) + m * ry, "eps", eps, func=f, max_work=max_work,
               hint=f"The construction visits m = {m} x {rx:.3g} kinks.")
    nx, ny = _grid_sizes(R, K, e)
    if ny < 1:
        raise ValueError(f"`eps` of {f} must be <= 4 R m = {4 * R * m:g} for the grid G_y to be non-empty; got {eps}.")
    kinks = np.arange(nx) * e / (2 * K)
    gy = -R + e / 2 * np.arange(1, ny + 1)
    out = np.empty_like(V)
    for i in range(m):
        fk = np.interp(np.minimum(kinks, 1.0), t, V[:, i])
        c = np.empty(nx)
        c[0] = gy[np.argmin(np.abs(gy - fk[0]))]
        for k in range(nx - 1):
            up, down = c[k] + e / 2, c[k] - e / 2
            target = fk[k + 1]  # f is extended by its value at 1 beyond t = 1 (still K-Lipschitz)
            c[k + 1] = up if abs(up - target) <= abs(down - target) else down
        out[:, i] = np.interp(t, kinks, c)
    return out[:, 0] if one else out


def resnet_to_path(W, points_per_layer=1):
    r"""The isometry :math:`\varphi` of the proof of Prop. 4.7: ResNet weights W (L, d, d) to a path
    :math:`[0, 1] \to \mathbb{R}^{d^2}`, affine on each [k/L, (k+1)/L], equal to vec(W_k) at k/L (k = 1..L)
    and to vec(W_1) at 0; then :math:`\|\varphi(W)\|_{1,\infty} = \|W\|_{1,1,\infty}` and its Lipschitz
    constant is K_W of (4.12).

    Parameters
    ----------
    W : array_like, shape (L, d, d)
        Layer weights, L >= 1, d >= 1, finite.
    points_per_layer : int
        Sample points per layer interval, >= 1.

    Returns
    -------
    t : ndarray, shape (L * points_per_layer + 1,)
        Uniform times of [0, 1].
    path : ndarray, shape (L * points_per_layer + 1, d * d)
        The path at the times t.

    Raises
    ------
    TypeError
        ``W`` not a real array, ``points_per_layer`` not an integer.
    ValueError
        ``W`` not of shape (L, d, d), empty, or with NaN or inf; ``points_per_layer`` < 1 or a path above
        the memory limit.
    """
    f = _PKG + "resnet_to_path"
    W = as_float_array(W, "W", func=f, ndim=3, min_size=1)
    if W.shape[1] != W.shape[2]:
        raise ValueError(f"`W` of {f} must have shape (L, d, d) (square layers); got {W.shape}.")
    p = check_int(points_per_layer, "points_per_layer", func=f, minimum=1)
    L, d, _ = W.shape
    check_memory(8 * (L * p + 1) * (2 * d * d + 2), "points_per_layer", p, func=f,
                 hint=f"The path has shape ({L * p + 1}, {d * d}).")
    knots = np.concatenate((W[:1], W)).reshape(L + 1, d * d)
    tk = np.arange(L + 1) / L
    t = np.linspace(0, 1, L * p + 1)
    path = np.column_stack([np.interp(t, tk, knots[:, i]) for i in range(d * d)])
    return t, path
