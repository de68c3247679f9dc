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

The public functions validate their arguments (float64 arrays, finite; a valid target; the positions each
statement needs) and raise :class:`~theory.NonFiniteError` rather than return NaN or inf.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import NonFiniteError, as_float_array, check_finite_output, check_interval, check_memory

from ._network import _flanking, _params
from ._target import _target

__all__ = ["heaviside_gram", "heaviside_weights", "heaviside_loss", "heaviside_loss_closed_form",
           "heaviside_velocities", "heaviside_invariant", "heaviside_hitting_time", "heaviside_flow"]

_PKG = "theory.two_timescale."

_OVERFLOW = "Reduce the magnitude of `f`."

#: the smallest relative tolerance SciPy's integrators accept without raising it (100 eps)
_RTOL_MIN = 100 * np.finfo(float).eps


def _positions(u, func, name="u"):
    """Positions as a 1-d float64 array, finite (may be empty)."""
    return as_float_array(u, name, func=func, ndim=1)


def _piece_integrals(a, b, v, f):
    """int_a^b f* and int_a^b f*^2 for 0 <= a <= b <= 1."""
    edges = np.concatenate(([0.0], v, [1.0]))
    lo = np.clip(edges[:-1], a, b)
    hi = np.clip(edges[1:], a, b)
    w = hi - lo
    return float(np.sum(w * f)), float(np.sum(w * f * f))


def heaviside_gram(u, v, f, eta=0.0):
    r"""The Gram matrix and moments of the Heaviside features (Lemma 6.11's :math:`H_0`), bias first with
    :math:`u_0 = -\eta/2`: :math:`H_{0,ij} = 1 - \max(u_i, u_j, 0)` (clipped to [0, 1]) and
    :math:`b_{0,j} = \int_{\max(u_j, 0)}^1 f^*`.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, finite (any reals: the features are clipped to [0, 1]).
    v, f : array_like
        The target: jumps (n - 1,) and values (n,) (:func:`~theory.two_timescale.validate_target`).
    eta : float
        Sharpness in [0, 1]; it places the bias at u_0 = -eta/2 <= 0, so the result does not depend on it.

    Returns
    -------
    H : ndarray, shape (m + 1, m + 1)
        H_0(u).
    b : ndarray, shape (m + 1,)
        b_0(u).

    Raises
    ------
    TypeError
        An array that is not real, ``eta`` not a real number.
    ValueError
        ``u`` not 1-d or with NaN or inf, an invalid target, ``eta`` outside [0, 1], a matrix above the memory
        limit.
    NonFiniteError
        A moment overflows float64.
    """
    func = _PKG + "heaviside_gram"
    u = _positions(u, func)
    v, f = _target(v, f, func)
    eta = check_interval(eta, "eta", 0.0, 1.0, func=func, closed="both")
    check_memory(8 * (u.size + 1) ** 2, "u", u.shape, func=func, hint=f"H_0 has shape ({u.size + 1}, {u.size + 1}).")
    w = np.concatenate(([-eta / 2], u))
    H = 1 - np.clip(np.maximum.outer(w, w), 0.0, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        b = np.array([_piece_integrals(min(max(x, 0.0), 1.0), 1.0, v, f)[0] for x in w])
    return H, check_finite_output(b, "b_0", func=func, hint=_OVERFLOW)


def heaviside_weights(u, v, f):
    r"""The optimal Heaviside output weights :math:`a^*_0(u) = H_0(u)^{-1} b_0(u)`: the bias is the mean of f*
    on the first cell of the partition of [0, 1] by u, then each weight is the jump between the means of the
    two cells its position separates.

    Parameters
    ----------
    u : array_like, shape (m,)
        Distinct positions inside (0, 1).
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).

    Returns
    -------
    ndarray, shape (m + 1,)
        a*_0(u), bias first, then one weight per position (in the order of ``u``).

    Raises
    ------
    TypeError
        An array that is not real.
    ValueError
        ``u`` not 1-d, not finite, or not of distinct positions inside (0, 1); an invalid target.
    NonFiniteError
        A mean overflows float64.
    """
    func = _PKG + "heaviside_weights"
    u = _positions(u, func)
    v, f = _target(v, f, func)
    if np.any(u <= 0) or np.any(u >= 1) or np.unique(u).size != u.size:
        raise ValueError(f"`u` of {func} must hold distinct positions inside (0, 1).")
    order = np.argsort(u)
    cuts = np.concatenate(([0.0], u[order], [1.0]))
    with np.errstate(over="ignore", invalid="ignore"):
        means = np.array([_piece_integrals(lo, hi, v, f)[0] / (hi - lo) for lo, hi in zip(cuts[:-1], cuts[1:])])
        a = np.empty(u.size + 1)
        a[0] = means[0]
        a[1 + order] = np.diff(means)
    return check_finite_output(a, "a*_0(u)", func=func, hint=_OVERFLOW)


def heaviside_loss(u, v, f):
    r"""The Heaviside reduced loss :math:`\min_a L_0(a, u)` (with its 1/2): the L2 error of the best
    piecewise-constant fit of f* on the partition of [0, 1] by the positions u (any number of neurons per piece),
    :math:`\frac12 \sum_{\text{cells } C} (\int_C f^{*2} - (\int_C f^*)^2 / |C|)`.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, finite (clipped to [0, 1]; m = 0 allowed: one cell).
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).

    Returns
    -------
    float
        The loss, >= 0.

    Raises
    ------
    TypeError
        An array that is not real.
    ValueError
        ``u`` not 1-d or with NaN or inf, an invalid target.
    NonFiniteError
        The loss overflows float64.
    """
    func = _PKG + "heaviside_loss"
    u = _positions(u, func)
    v, f = _target(v, f, func)
    cuts = np.unique(np.concatenate(([0.0], np.clip(u, 0.0, 1.0), [1.0])))
    total = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            s1, s2 = _piece_integrals(lo, hi, v, f)
            total += s2 - s1 * s1 / (hi - lo)
    out = 0.5 * max(total, 0.0)
    if not (np.isfinite(total) and np.isfinite(out)):
        raise NonFiniteError(f"{func}: the loss overflowed to NaN or inf. {_OVERFLOW}")
    return out


def _require_two_per_piece(u, v, func, name="u"):
    edges = np.concatenate(([0.0], v, [1.0]))
    su = np.sort(u)
    inside = np.searchsorted(su, edges[1:], side="left") - np.searchsorted(su, edges[:-1], side="right")
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        if inside[i] < 2:
            raise ValueError(f"`{name}` of {func}: piece {i} ({lo:g}, {hi:g}) of the target holds fewer than two "
                             "neurons; (6.6)-(6.7) do not apply (Section 6.4.2 assumes two per piece).")


def heaviside_loss_closed_form(u, v, f):
    r"""The closed form (6.6) of the Heaviside reduced loss, valid when every piece of f* holds at least two
    positions: :math:`\frac12 \sum_i \frac{(v_i - u^L_i)(u^R_i - v_i)}{u^R_i - u^L_i} (f^*_i - f^*_{i-1})^2`,
    with :math:`u^L_i`, :math:`u^R_i` the positions flanking the jump v_i.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, finite, at least two strictly inside each piece (v_(i-1), v_i) of the target.
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).

    Returns
    -------
    float
        (6.6).

    Raises
    ------
    TypeError
        An array that is not real.
    ValueError
        ``u`` not 1-d, not finite, or with fewer than two positions in a piece; an invalid target.
    NonFiniteError
        A squared jump overflows float64.
    """
    func = _PKG + "heaviside_loss_closed_form"
    u = _positions(u, func)
    v, f = _target(v, f, func)
    _require_two_per_piece(u, v, func)
    L, R = _flanking(u, v)
    uL, uR = u[L], u[R]
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(0.5 * np.sum((v - uL) * (uR - v) / (uR - uL) * np.diff(f) ** 2))
    return float(check_finite_output(np.float64(out), "the loss", func=func, hint=_OVERFLOW))


def _velocities(u, v, f, L, R):
    uL, uR = u[L], u[R]
    j2 = np.diff(f) ** 2
    out = np.zeros_like(u)
    out[L] = 0.5 * (uR - v) ** 2 / (uR - uL) ** 2 * j2
    out[R] = -0.5 * (v - uL) ** 2 / (uR - uL) ** 2 * j2
    return out


def heaviside_velocities(u, v, f):
    r"""The Heaviside dynamics (6.7): du/dtau of every position, zero except at the flanking positions,
    :math:`\dot u^L_i = \frac12 \frac{(u^R_i - v_i)^2}{(u^R_i - u^L_i)^2} (f^*_i - f^*_{i-1})^2` and
    :math:`\dot u^R_i = -\frac12 \frac{(v_i - u^L_i)^2}{(u^R_i - u^L_i)^2} (f^*_i - f^*_{i-1})^2`.

    Parameters
    ----------
    u : array_like, shape (m,)
        Positions, finite, at least two strictly inside each piece of the target.
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).

    Returns
    -------
    ndarray, shape (m,)
        du/dtau, float64.

    Raises
    ------
    TypeError
        An array that is not real.
    ValueError
        ``u`` not 1-d, not finite, or with fewer than two positions in a piece; an invalid target.
    NonFiniteError
        A squared jump overflows float64.
    """
    func = _PKG + "heaviside_velocities"
    u = _positions(u, func)
    v, f = _target(v, f, func)
    _require_two_per_piece(u, v, func)
    L, R = _flanking(u, v)
    with np.errstate(over="ignore", invalid="ignore"):
        out = _velocities(u, v, f, L, R)
    return check_finite_output(out, "the velocities", func=func, hint=_OVERFLOW)


def _real_array(x, name, func):
    """``x`` as a finite float64 array of its own shape (a scalar stays 0-d)."""
    arr = as_float_array(x, name, func=func)
    return arr.reshape(np.asarray(x).shape)


def heaviside_invariant(u_left, u_right, v):
    r"""The invariant of (6.7) at one jump: :math:`(u^R - v)^3 - (v - u^L)^3`, constant along the dynamics
    (elementwise, e.g. along a computed trajectory).

    Parameters
    ----------
    u_left, u_right : array_like
        Positions of the flanking neurons, finite, of broadcastable shapes (any reals: the identity is
        algebraic, so values just past v at a hitting time are accepted).
    v : float
        The jump, in (0, 1).

    Returns
    -------
    float or ndarray
        The invariant, float64, of the broadcast shape (a NumPy float for scalars).

    Raises
    ------
    TypeError
        ``u_left`` or ``u_right`` not a real array, ``v`` not a real number.
    ValueError
        NaN or inf in the positions, shapes that do not broadcast, ``v`` outside (0, 1).
    NonFiniteError
        A cube overflows float64 (positions beyond about 1e102).
    """
    func = _PKG + "heaviside_invariant"
    u_left = _real_array(u_left, "u_left", func)
    u_right = _real_array(u_right, "u_right", func)
    v = check_interval(v, "v", 0.0, 1.0, func=func)
    try:
        np.broadcast_shapes(u_left.shape, u_right.shape)
    except ValueError:
        raise ValueError(f"`u_right` of {func} must broadcast with `u_left`; got shapes {u_right.shape} and "
                         f"{u_left.shape}.") from None
    with np.errstate(over="ignore", invalid="ignore"):
        out = (u_right - v) ** 3 - (v - u_left) ** 3
    check_finite_output(out, "the invariant", func=func, hint="Bring the positions closer to `v`.")
    return out


def heaviside_hitting_time(u_left, u_right, v, jump):
    r"""The hitting time of one jump under (6.7): from flanking positions :math:`0 \le u^L < v < u^R \le 1`, the
    closer neuron reaches v first (a tie: both at once), at

    .. math::

        \tau^* = \frac{2}{\mathrm{jump}^2} \int_0^{d_{\mathrm{near}}} \frac{(s + \beta(s))^2}{\beta(s)^2}\,ds,
        \qquad \beta(s) = (s^3 + c)^{1/3},\ c = d_{\mathrm{far}}^3 - d_{\mathrm{near}}^3,

    where the other stops at distance :math:`c^{1/3}` from v (adaptive quadrature, relative tolerance 1e-12).

    Parameters
    ----------
    u_left : float
        Position of u^L, in [0, v).
    u_right : float
        Position of u^R, in (v, 1].
    v : float
        The jump, in (0, 1).
    jump : float
        Its height f*_i - f*_(i-1), non-zero, finite.

    Returns
    -------
    tau : float
        The hitting time tau*.
    other : float
        The position of the other neuron at tau*.

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument out of range, NaN or infinite; ``jump`` = 0.
    NonFiniteError
        tau* overflows float64 (a jump below about 1e-154).
    """
    from scipy.integrate import quad

    func = _PKG + "heaviside_hitting_time"
    v = check_interval(v, "v", 0.0, 1.0, func=func)
    u_left = check_interval(u_left, "u_left", 0.0, v, func=func, closed="left")
    u_right = check_interval(u_right, "u_right", v, 1.0, func=func, closed="right")
    jump = abs(check_interval(jump, "jump", -np.inf, np.inf, func=func))
    if jump == 0.0:
        raise ValueError(f"`jump` of {func} must be non-zero (f*_i != f*_(i-1)); got 0.")
    dl, dr = v - u_left, u_right - v
    near, far = min(dl, dr), max(dl, dr)
    c = far ** 3 - near ** 3

    def integrand(s):
        beta = np.cbrt(s ** 3 + c)
        return (s + beta) ** 2 / beta ** 2

    # where c^(1/3) << near the integrand falls from 4 to 1 in a layer of width ~ c^(1/3) at s = 0, which the
    # adaptive rule misses from [0, near] alone (5.6e-6 relative at c = 7e-18, near = 0.2): break the interval
    # at c^(1/3) and its decades up to near
    r = float(np.cbrt(c))
    points = [r * 10.0 ** k for k in range(17) if 0.0 < r * 10.0 ** k < near]
    val, _ = quad(integrand, 0.0, near, epsabs=0.0, epsrel=1e-12, limit=200, points=points or None)
    try:
        tau = 2.0 / jump ** 2 * val
    except OverflowError:  # jump^2 beyond float64: tau* is below the smallest float
        tau = 0.0
    except ZeroDivisionError:  # jump^2 underflows to 0
        tau = math.inf
    if not math.isfinite(tau):
        raise NonFiniteError(f"{func}: tau* overflowed float64; `jump` = {jump:g} is too small.")
    rest = float(np.cbrt(c))
    other = v + rest if dl <= dr else v - rest
    return float(tau), float(other)


def heaviside_flow(u0, v, f, taus, *, rtol=1e-10):
    r"""Positions under the Heaviside dynamics (6.7) at the times ``taus``: each flanking pair
    :math:`(u^L_i, u^R_i)` is integrated numerically (SciPy's DOP853, absolute tolerance 1e-13) until one of them
    reaches v_i, where both stop (the loss of that jump is then 0); the other positions stay at rest.

    Parameters
    ----------
    u0 : array_like, shape (m,)
        Initial positions, finite, at least two strictly inside each piece of the target.
    v, f : array_like
        The target: jumps (n - 1,) and values (n,).
    taus : array_like, shape (T,)
        Times, finite, non-negative and non-decreasing, T >= 1.
    rtol : float
        Relative tolerance of the integrator, in [100 eps, 1) = [2.2e-14, 1) (SciPy's smallest).

    Returns
    -------
    ndarray, shape (T, m)
        The positions at the times ``taus``.

    Raises
    ------
    TypeError
        An array that is not real, ``rtol`` not a real number.
    ValueError
        Wrong shapes, NaN or inf, ``u0`` with fewer than two positions in a piece, ``taus`` decreasing or
        negative, an invalid target, ``rtol`` outside [100 eps, 1), an output above the memory limit.
    NonFiniteError
        The integration overflowed (a jump of f beyond about 1e154).
    """
    from scipy.integrate import solve_ivp

    func = _PKG + "heaviside_flow"
    u0 = _positions(u0, func, "u0")
    v, f = _target(v, f, func)
    taus = as_float_array(taus, "taus", func=func, ndim=1, min_size=1)
    rtol = check_interval(rtol, "rtol", _RTOL_MIN, 1.0, func=func, closed="left")
    if np.any(taus < 0) or np.any(np.diff(taus) < 0):
        raise ValueError(f"`taus` of {func} must be non-negative and non-decreasing; got {taus.tolist()}.")
    _require_two_per_piece(u0, v, func, "u0")
    check_memory(8 * taus.size * u0.size, "taus", taus.shape, func=func,
                 hint=f"The positions have shape ({taus.size}, {u0.size}).")
    L, R = _flanking(u0, v)
    out = np.repeat(u0[None, :], taus.size, axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(v.size):
            j2 = (f[i + 1] - f[i]) ** 2
            if not np.isfinite(j2):
                raise NonFiniteError(f"{func}: the squared jump {i} of `f` overflowed float64. {_OVERFLOW}")
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
    return check_finite_output(out, "the positions", func=func, hint=_OVERFLOW)
