"""The Heaviside two-timescale limit of Section 6.4.2 of the thesis (Marion): eta -> 0.

With sigma_0 the Heaviside step, a*(u) gives the best piecewise-constant approximation of f* on the
partition of [0, 1] by the positions u, so the reduced loss is, for any positions,
L(a*(u), u) = 1/2 sum_cells (int_cell f*^2 - (int_cell f*)^2 / |cell|).   (heaviside_loss)
When every piece of f* holds at least two neurons, only the cells (u^L_i, u^R_i) around the jumps carry
an error, and (6.6): L = 1/2 sum_i (v_i - u^L_i)(u^R_i - v_i) / (u^R_i - u^L_i) (f*_i - f*_{i-1})^2,
with the dynamics (6.7): du^L_i/dtau = 1/2 (u^R_i - v_i)^2 / (u^R_i - u^L_i)^2 (f*_i - f*_{i-1})^2,
du^R_i/dtau = -1/2 (v_i - u^L_i)^2 / (u^R_i - u^L_i)^2 (f*_i - f*_{i-1})^2, the other neurons at rest.
Along (6.7), with d^L = v_i - u^L_i and d^R = u^R_i - v_i, (d^R)^3 - (d^L)^3 is constant, so the closer
neuron reaches v_i first, at tau* = 2 / jump^2 int_0^{d_near} (s + beta(s))^2 / beta(s)^2 ds,
beta(s) = (s^3 + c)^(1/3), c = d_far^3 - d_near^3, and the other stops at distance c^(1/3) from v_i.
"""

from __future__ import annotations

import numpy as np

from theory._validation import as_float_array, check_interval

from .network import flanking
from .target import validate_target

__all__ = ["heaviside_gram", "heaviside_weights", "heaviside_loss", "heaviside_loss_closed_form", "heaviside_velocities", "heaviside_invariant",
           "heaviside_hitting_time", "heaviside_flow"]


def _piece_integrals(a, b, v, f):
    """int_a^b f* and int_a^b f*^2 for 0 <= a <= b <= 1."""
    edges = np.concatenate(([0.0], v, [1.0]))
    lo = np.clip(edges[:-1], a, b)
    hi = np.clip(edges[1:], a, b)
    w = hi - lo
    return float(np.sum(w * f)), float(np.sum(w * f * f))


def heaviside_gram(u, v, f, eta=0.0):
    """(H_0(u), b_0(u)) of the Heaviside features (bias first, u_0 = -eta/2):
    H_0,ij = 1 - max(u_i, u_j, 0), b_0,j = int_{max(u_j, 0)}^1 f* (Lemma 6.11's H_0)."""
    u = as_float_array(u, "u", func="heaviside_gram", ndim=1)
    v, f = validate_target(v, f, func="heaviside_gram")
    w = np.concatenate(([-eta / 2], u))
    H = 1 - np.clip(np.maximum.outer(w, w), 0.0, 1.0)
    b = np.array([_piece_integrals(min(max(x, 0.0), 1.0), 1.0, v, f)[0] for x in w])
    return H, b


def heaviside_weights(u, v, f):
    """a*_0(u) = H_0(u)^-1 b_0(u): bias = mean of f* on the first cell, then the jumps between the means of
    consecutive cells of the partition by u (distinct positions in (0, 1) required, ValueError naming ``u``)."""
    u = as_float_array(u, "u", func="heaviside_weights", ndim=1)
    v, f = validate_target(v, f, func="heaviside_weights")
    if np.any(u <= 0) or np.any(u >= 1) or np.unique(u).size != u.size:
        raise ValueError("`u` of heaviside_weights must hold distinct positions inside (0, 1).")
    order = np.argsort(u)
    cuts = np.concatenate(([0.0], u[order], [1.0]))
    means = np.array([_piece_integrals(lo, hi, v, f)[0] / (hi - lo) for lo, hi in zip(cuts[:-1], cuts[1:])])
    a = np.empty(u.size + 1)
    a[0] = means[0]
    a[1 + order] = np.diff(means)
    return a


def heaviside_loss(u, v, f):
    """min_a of the Heaviside network's loss (with its 1/2): the L2 error of the best piecewise-constant
    fit of f* on the partition of [0, 1] by the positions u (any number of neurons per piece)."""
    u = as_float_array(u, "u", func="heaviside_loss", ndim=1)
    v, f = validate_target(v, f, func="heaviside_loss")
    cuts = np.unique(np.concatenate(([0.0], np.clip(u, 0.0, 1.0), [1.0])))
    total = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        s1, s2 = _piece_integrals(lo, hi, v, f)
        total += s2 - s1 * s1 / (hi - lo)
    return 0.5 * max(total, 0.0)


def _require_two_per_piece(u, v, func):
    edges = np.concatenate(([0.0], v, [1.0]))
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        if np.count_nonzero((u > lo) & (u < hi)) < 2:
            raise ValueError(f"`u` of {func}: piece {i} ({lo:g}, {hi:g}) of the target holds fewer than two "
                             "neurons; (6.6)-(6.7) do not apply (Section 6.4.2 assumes two per piece).")


def heaviside_loss_closed_form(u, v, f):
    """(6.6): 1/2 sum_i (v_i - u^L_i)(u^R_i - v_i)/(u^R_i - u^L_i) (f*_i - f*_(i-1))^2 (>= 2 neurons per piece)."""
    func = "heaviside_loss_closed_form"
    u = as_float_array(u, "u", func=func, ndim=1)
    v, f = validate_target(v, f, func=func)
    _require_two_per_piece(u, v, func)
    L, R = flanking(u, v)
    uL, uR = u[L], u[R]
    return float(0.5 * np.sum((v - uL) * (uR - v) / (uR - uL) * np.diff(f) ** 2))


def heaviside_velocities(u, v, f):
    """(6.7): du/dtau of every neuron (zero except at the neurons flanking a jump)."""
    func = "heaviside_velocities"
    u = as_float_array(u, "u", func=func, ndim=1)
    v, f = validate_target(v, f, func=func)
    _require_two_per_piece(u, v, func)
    L, R = flanking(u, v)
    uL, uR = u[L], u[R]
    j2 = np.diff(f) ** 2
    out = np.zeros_like(u)
    out[L] = 0.5 * (uR - v) ** 2 / (uR - uL) ** 2 * j2
    out[R] = -0.5 * (v - uL) ** 2 / (uR - uL) ** 2 * j2
    return out


def heaviside_invariant(u_left, u_right, v):
    """(u_right - v)^3 - (v - u_left)^3: constant along (6.7)."""
    return (np.asarray(u_right, float) - v) ** 3 - (v - np.asarray(u_left, float)) ** 3


def heaviside_hitting_time(u_left, u_right, v, jump):
    """(tau*, position of the other neuron at tau*) for one jump of height ``jump`` at ``v`` under (6.7),
    from flanking positions u_left < v < u_right; the closer neuron reaches v first (tie: both at once)."""
    from scipy.integrate import quad

    func = "heaviside_hitting_time"
    v = check_interval(v, "v", 0.0, 1.0, func=func)
    u_left = check_interval(u_left, "u_left", -np.inf, v, func=func)
    u_right = check_interval(u_right, "u_right", v, np.inf, func=func)
    jump = abs(check_interval(jump, "jump", -np.inf, np.inf, func=func))
    if jump == 0.0:
        raise ValueError(f"`jump` of {func} must be non-zero (f*_i != f*_(i-1)); got 0.")
    dl, dr = v - u_left, u_right - v
    near, far = min(dl, dr), max(dl, dr)
    c = far ** 3 - near ** 3

    def integrand(s):
        beta = np.cbrt(s ** 3 + c)
        return (s + beta) ** 2 / beta ** 2

    val, _ = quad(integrand, 0.0, near, epsabs=0.0, epsrel=1e-12, limit=200)
    tau = 2.0 / jump ** 2 * val
    rest = float(np.cbrt(c))
    other = v + rest if dl <= dr else v - rest
    return float(tau), float(other)


def heaviside_flow(u0, v, f, taus, *, rtol=1e-10):
    """Positions under (6.7) at the times ``taus``, integrating each pair (u^L_i, u^R_i) numerically
    (scipy's DOP853) until one of them reaches v_i, where both stop (the loss of that jump is then 0)."""
    from scipy.integrate import solve_ivp

    func = "heaviside_flow"
    u0 = as_float_array(u0, "u0", func=func, ndim=1)
    v, f = validate_target(v, f, func=func)
    taus = as_float_array(taus, "taus", func=func, ndim=1, min_size=1)
    if np.any(taus < 0) or np.any(np.diff(taus) < 0):
        raise ValueError(f"`taus` of {func} must be non-negative and non-decreasing; got {taus.tolist()}.")
    _require_two_per_piece(u0, v, func)
    L, R = flanking(u0, v)
    out = np.repeat(u0[None, :], taus.size, axis=0)
    for i in range(v.size):
        j2 = (f[i + 1] - f[i]) ** 2
        vi = v[i]

        def rhs(_t, y, vi=vi, j2=j2):
            w = (y[1] - y[0]) ** 2
            return [0.5 * (y[1] - vi) ** 2 / w * j2, -0.5 * (vi - y[0]) ** 2 / w * j2]

        def hit(_t, y, vi=vi):
            return min(vi - y[0], y[1] - vi)

        hit.terminal = True
        sol = solve_ivp(rhs, (0.0, float(taus[-1]) + 1e-300), [u0[L[i]], u0[R[i]]], method="DOP853",
                        rtol=rtol, atol=1e-13, dense_output=True, events=hit)
        t_stop = sol.t[-1]
        y_stop = sol.y[:, -1]
        for k, t in enumerate(taus):
            y = sol.sol(t) if t <= t_stop else y_stop
            out[k, L[i]], out[k, R[i]] = y[0], y[1]
    return out
