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

from theory._validation import as_float_array, check_int, check_interval

__all__ = ["cover_log_size", "cover_member", "resnet_to_path"]


def _grid_sizes(R, K, eps):
    nx = math.ceil(2 * K / eps) + 1 if K > 0 else 1
    ny = math.floor(4 * R / eps)
    return nx, ny


def cover_log_size(m, R, K, eps):
    """log of the number of centres of the construction: ``m (log |G_y| + |G_x| log 2)`` at eps / m."""
    f = "cover_log_size"
    m = check_int(m, "m", func=f, minimum=1)
    R = check_interval(R, "R", 0.0, np.inf, func=f)
    K = check_interval(K, "K", 0.0, np.inf, func=f, closed="left")
    eps = check_interval(eps, "eps", 0.0, np.inf, func=f)
    nx, ny = _grid_sizes(R, K, eps / m)
    if ny < 1:
        raise ValueError(f"`eps` of {f} must be <= 4 R / m for the grid G_y to be non-empty; got {eps}.")
    return m * (math.log(ny) + (nx if K > 0 else 0) * math.log(2))


def cover_member(t, values, R, K, eps):
    """The greedy centre for the function sampled as ``values`` (shape (T,) or (T, m)) at the increasing
    times ``t`` in [0, 1], evaluated at ``t``. ``values`` must be K-Lipschitz and bounded by R in the
    (1, inf)-norm (checked on the samples; ValueError naming ``values`` otherwise)."""
    f = "cover_member"
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
    if np.abs(V).sum(axis=1).max() > R * (1 + 1e-12):
        raise ValueError(f"`values` of {f} exceed R = {R:g} in the (1, inf)-norm.")
    slopes = np.abs(np.diff(V, axis=0)) / np.diff(t)[:, None]
    if slopes.max() > K * (1 + 1e-9):
        raise ValueError(f"`values` of {f} are not K-Lipschitz (slope {slopes.max():.4g} > K = {K:g}).")
    e = eps / m
    nx, ny = _grid_sizes(R, K, e)
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
    """The isometry phi of the proof of Prop. 4.7: W (L, d, d) -> a path [0, 1] -> R^(d^2), affine on each
    [k/L, (k+1)/L], equal to vec(W_k) at k/L (k = 1..L) and to vec(W_1) at 0. Returns (t, path)."""
    W = as_float_array(W, "W", func="resnet_to_path", ndim=3)
    p = check_int(points_per_layer, "points_per_layer", func="resnet_to_path", minimum=1)
    L, d, _ = W.shape
    knots = np.concatenate((W[:1], W)).reshape(L + 1, d * d)
    tk = np.arange(L + 1) / L
    t = np.linspace(0, 1, L * p + 1)
    path = np.column_stack([np.interp(t, tk, knots[:, i]) for i in range(d * d)])
    return t, path
