"""The explicit constants of the convergence results of chapter 6 of the thesis (Marion).

* (6.2), Thm 6.2 / Thm 6.8: m >= 6 / Delta v (4 + log n + log(1/delta)) neurons.
* Thm 6.2: Q_1 = C_1 / (M^2 (m+1)) min(delta^2 Delta f^2 / (m+1)^4, xi),
  Q_2 = C_2 delta^2 / (M^4 (m+1)^(17/2)) min(delta Delta f^2 / (m+1), xi), with C_1 = 2^-21, C_2 = 2^-36 (proof).
* Thm 6.8: Q = C / M^2 min(delta^2 Delta f^2 / (m+1)^5, xi / n), C = 2^-19 (proof).
* Prop. 6.7: initial separation D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f; horizon tau = 6 / Delta f^2.
* Prop. 6.9: ||a(t) - a*(u(t))|| <= 3 M sqrt(m+1) exp(-D t / 16) + 2^17 M^3 (m+1)^3 eps / D^2, when
  eps <= 2^-16 D^2 M^-2 (m+1)^(-5/2), D >= 32 eta, Delta(u(s)) >= D/2 and two neurons per piece on [0, t].
* Lemma 6.18: int |f_eta(.; a*_eta(u), u) - f*|^2 <= 6 M^2 eta n when a neuron lies within eta of each jump
  and 3 eta <= Delta v.
* Lemma 6.19: u i.i.d. uniform is D-good with probability >= 1 - delta for D = delta / (6 (m+1)^2).

Each function validates its constants at the door and evaluates the printed formula in float64; a value beyond
the float64 range raises :class:`~theory.NonFiniteError` instead of returning inf.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import NonFiniteError, as_float_array, check_int, check_interval, finite_value

__all__ = ["neurons_required", "theorem_6_2_thresholds", "theorem_6_8_threshold", "prop_6_7_separation",
           "prop_6_9_bound", "prop_6_9_eps_max", "lemma_6_18_bound", "lemma_6_19_separation", "recovery_horizon"]

_PKG = "theory.two_timescale."

#: largest accepted number of neurons or pieces: every integer up to it is exact in float64
_MAX_COUNT = 2**53


def _count(k, name, func, minimum):
    return check_int(k, name, func=func, minimum=minimum, maximum=_MAX_COUNT)


def _pos(x, name, func):
    return check_interval(x, name, 0.0, np.inf, func=func)


def _M(M, func):
    return check_interval(M, "M", 1.0, np.inf, func=func, closed="left")


def _value(func, compute):
    """``compute()`` as a finite number, or :class:`NonFiniteError` when the formula leaves the float64 range."""
    return finite_value(compute, func=func, what="the constant", hint="its arguments are too large or too small")


def _min(compute, cap):
    """min(compute(), cap), where a term overflowing float64 (an OverflowError of Python's float power) is above
    the finite cap."""
    try:
        return min(compute(), cap)
    except OverflowError:
        return cap


def neurons_required(n, dv, delta):
    r"""The width condition (6.2) of Thm 6.2 and Thm 6.8: the smallest real m allowed,
    :math:`m \ge \frac{6}{\Delta v} (4 + \log n + \log(1/\delta))`.

    Parameters
    ----------
    n : int
        Number of pieces of the target, 2 <= n <= 2**53.
    dv : float
        Shortest piece Delta v, in (0, 1).
    delta : float
        Failure probability, in (0, 1).

    Returns
    -------
    float
        6 / Delta v (4 + log n + log(1/delta)).

    Raises
    ------
    TypeError
        ``n`` not an integer, ``dv`` or ``delta`` not a real number.
    ValueError
        An argument out of range, NaN or infinite.
    NonFiniteError
        The bound overflows float64.
    """
    func = _PKG + "neurons_required"
    n = _count(n, "n", func, 2)
    dv = check_interval(dv, "dv", 0.0, 1.0, func=func)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    return _value(func, lambda: 6.0 / dv * (4.0 + math.log(n) + math.log(1.0 / delta)))


def theorem_6_2_thresholds(xi, delta, m, df, M, *, n=None, dv=None, C1=2.0 ** -21, C2=2.0 ** -36):
    r"""The thresholds (Q_1, Q_2) of Thm 6.2 (the theorem holds for eta <= Q_1 and eps <= Q_2):

    .. math::

        Q_1 = \frac{C_1}{M^2 (m+1)} \min\Big(\frac{\delta^2 \Delta f^2}{(m+1)^4}, \xi\Big), \qquad
        Q_2 = \frac{C_2 \delta^2}{M^4 (m+1)^{17/2}} \min\Big(\frac{\delta \Delta f^2}{m+1}, \xi\Big),

    with the constants C_1 = 2^-21, C_2 = 2^-36 of its proof by default.

    Parameters
    ----------
    xi : float
        Target accuracy xi > 0.
    delta : float
        Failure probability, in (0, 1).
    m : int
        Number of neurons, 1 <= m <= 2**53.
    df : float
        Smallest jump Delta f > 0.
    M : float
        Bound M >= 1 on the target.
    n : int, optional
        Number of pieces (2 <= n <= 2**53), given together with ``dv``: then m is checked against (6.2).
    dv : float, optional
        Shortest piece, in (0, 1), given together with ``n``.
    C1, C2 : float
        The constants, > 0.

    Returns
    -------
    Q1 : float
        The threshold on eta.
    Q2 : float
        The threshold on eps.

    Raises
    ------
    TypeError
        An argument of a wrong kind.
    ValueError
        An argument out of range, NaN or infinite; ``n`` without ``dv`` or the reverse; ``m`` below (6.2) (the
        theorem does not apply).
    NonFiniteError
        A threshold overflows float64.
    """
    func = _PKG + "theorem_6_2_thresholds"
    xi = _pos(xi, "xi", func)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    m = _count(m, "m", func, 1)
    if (n is None) != (dv is None):
        raise ValueError(f"`n` and `dv` of {func} go together (both or neither); got n={n!r}, dv={dv!r}.")
    if n is not None:
        n = _count(n, "n", func, 2)
        dv = check_interval(dv, "dv", 0.0, 1.0, func=func)
        need = _value(func, lambda: 6.0 / dv * (4.0 + math.log(n) + math.log(1.0 / delta)))
        if m < need:
            raise ValueError(f"`m` of {func} = {m} is below (6.2), 6/dv (4 + log n + log 1/delta) = "
                             f"{need:.1f}: Thm 6.2 does not apply.")
    df = _pos(df, "df", func)
    M = _M(M, func)
    C1 = _pos(C1, "C1", func)
    C2 = _pos(C2, "C2", func)
    q1 = _value(func, lambda: C1 / (M ** 2 * (m + 1)) * _min(lambda: delta ** 2 * df ** 2 / (m + 1) ** 4, xi))
    q2 = _value(func, lambda: C2 * delta ** 2 / (M ** 4 * (m + 1) ** 8.5) * _min(lambda: delta * df ** 2 / (m + 1), xi))
    return q1, q2


def theorem_6_8_threshold(xi, delta, m, n, df, M, *, C=2.0 ** -19):
    r"""The threshold Q of Thm 6.8 (the theorem holds for eta <= Q):
    :math:`Q = \frac{C}{M^2} \min\Big(\frac{\delta^2 \Delta f^2}{(m+1)^5}, \frac{\xi}{n}\Big)`, C = 2^-19 (proof).

    Parameters
    ----------
    xi : float
        Target accuracy xi > 0.
    delta : float
        Failure probability, in (0, 1).
    m : int
        Number of neurons, 1 <= m <= 2**53.
    n : int
        Number of pieces, 2 <= n <= 2**53.
    df : float
        Smallest jump Delta f > 0.
    M : float
        Bound M >= 1 on the target.
    C : float
        The constant, > 0.

    Returns
    -------
    float
        Q.

    Raises
    ------
    TypeError
        An argument of a wrong kind.
    ValueError
        An argument out of range, NaN or infinite.
    NonFiniteError
        Q overflows float64.
    """
    func = _PKG + "theorem_6_8_threshold"
    xi = _pos(xi, "xi", func)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    m = _count(m, "m", func, 1)
    n = _count(n, "n", func, 2)
    df = _pos(df, "df", func)
    M = _M(M, func)
    C = _pos(C, "C", func)
    return _value(func, lambda: C / M ** 2 * _min(lambda: delta ** 2 * df ** 2 / (m + 1) ** 5, xi / n))


def recovery_horizon(df):
    r"""The recovery horizon :math:`\tau = 6 / \Delta f^2` of Prop. 6.7 and Thm 6.8, in slow time
    (T = tau / eps in the time of (6.1), Thm 6.2).

    Parameters
    ----------
    df : float
        Smallest jump Delta f > 0.

    Returns
    -------
    float
        6 / Delta f^2.

    Raises
    ------
    TypeError
        ``df`` not a real number.
    ValueError
        ``df`` not positive and finite.
    NonFiniteError
        The horizon overflows float64 (Delta f below about 1e-154).
    """
    func = _PKG + "recovery_horizon"
    df = _pos(df, "df", func)
    return _value(func, lambda: 6.0 / df ** 2)


def prop_6_7_separation(eta, m, M, df):
    r"""The initial separation of Prop. 6.7: :math:`D = 2^{13/2} (m+1)^{1/2} M \eta^{1/2} / \Delta f`.

    Parameters
    ----------
    eta : float
        Sharpness, in (0, 1].
    m : int
        Number of neurons, 1 <= m <= 2**53.
    M : float
        Bound M >= 1 on the target.
    df : float
        Smallest jump Delta f > 0.

    Returns
    -------
    float
        D.

    Raises
    ------
    TypeError
        An argument of a wrong kind.
    ValueError
        An argument out of range, NaN or infinite.
    NonFiniteError
        D overflows float64.
    """
    func = _PKG + "prop_6_7_separation"
    eta = check_interval(eta, "eta", 0.0, 1.0, func=func, closed="right")
    m = _count(m, "m", func, 1)
    M = _M(M, func)
    df = _pos(df, "df", func)
    return _value(func, lambda: 2.0 ** 6.5 * math.sqrt(m + 1) * M * math.sqrt(eta) / df)


def _eps_max(D, M, m):
    return 2.0 ** -16 * D ** 2 / M ** 2 / (m + 1) ** 2.5


def prop_6_9_eps_max(D, M, m):
    r"""The largest eps Prop. 6.9 allows: :math:`2^{-16} D^2 M^{-2} (m+1)^{-5/2}`.

    Parameters
    ----------
    D : float
        Separation D > 0.
    M : float
        Bound M >= 1 on the target.
    m : int
        Number of neurons, 1 <= m <= 2**53.

    Returns
    -------
    float
        The threshold on eps.

    Raises
    ------
    TypeError
        An argument of a wrong kind.
    ValueError
        An argument out of range, NaN or infinite.
    NonFiniteError
        The threshold overflows float64.
    """
    func = _PKG + "prop_6_9_eps_max"
    D = _pos(D, "D", func)
    M = _M(M, func)
    m = _count(m, "m", func, 1)
    return _value(func, lambda: _eps_max(D, M, m))


def prop_6_9_bound(t, eps, D, M, m):
    r"""The bound of Prop. 6.9 on :math:`\|a(t) - a^*(u(t))\|`, elementwise in t:
    :math:`3 M \sqrt{m+1} e^{-D t / 16} + 2^{17} M^3 (m+1)^3 \varepsilon / D^2`, valid when
    eps <= 2^-16 D^2 M^-2 (m+1)^(-5/2) (:func:`prop_6_9_eps_max`).

    Parameters
    ----------
    t : array_like
        Times, finite, >= 0, any shape.
    eps : float
        Step-size ratio eps > 0, at most :func:`prop_6_9_eps_max`.
    D : float
        Separation D > 0.
    M : float
        Bound M >= 1 on the target.
    m : int
        Number of neurons, 1 <= m <= 2**53.

    Returns
    -------
    float or ndarray
        The bound, float64, of the shape of ``t`` (a NumPy float for a scalar).

    Raises
    ------
    TypeError
        ``t`` not a real array, another argument of a wrong kind.
    ValueError
        ``t`` negative, NaN or infinite; an argument out of range; ``eps`` above the threshold (the proposition
        does not apply).
    NonFiniteError
        The bound overflows float64.
    """
    func = _PKG + "prop_6_9_bound"
    eps = _pos(eps, "eps", func)
    D = _pos(D, "D", func)
    M = _M(M, func)
    m = _count(m, "m", func, 1)
    eps_max = _value(func, lambda: _eps_max(D, M, m))
    if eps > eps_max:
        raise ValueError(f"`eps` of {func} = {eps:g} exceeds 2^-16 D^2 M^-2 (m+1)^-5/2 = {eps_max:.3g}: "
                         "Prop. 6.9 does not apply.")
    t_in = t
    t = as_float_array(t, "t", func=func)
    t = t.reshape(np.asarray(t_in).shape)
    if np.any(t < 0):
        raise ValueError(f"`t` of {func} must be finite and >= 0.")
    offset = _value(func, lambda: 2.0 ** 17 * M ** 3 * (m + 1) ** 3 * eps / D ** 2)
    scale = _value(func, lambda: 3 * M * math.sqrt(m + 1))
    with np.errstate(over="ignore", under="ignore"):
        out = scale * np.exp(-D * t / 16) + offset
    if not np.all(np.isfinite(out)):
        raise NonFiniteError(f"{func}: the bound overflowed float64.")
    return out


def lemma_6_18_bound(M, eta, n):
    r"""The bound of Lemma 6.18: :math:`\int |f_\eta(\cdot; a^*_\eta(u), u) - f^*|^2 \le 6 M^2 \eta n` when a
    neuron lies within eta of each jump and 3 eta <= Delta v.

    Parameters
    ----------
    M : float
        Bound M >= 1 on the target.
    eta : float
        Sharpness, in (0, 1].
    n : int
        Number of pieces, 2 <= n <= 2**53.

    Returns
    -------
    float
        6 M^2 eta n.

    Raises
    ------
    TypeError
        An argument of a wrong kind.
    ValueError
        An argument out of range, NaN or infinite.
    NonFiniteError
        The bound overflows float64.
    """
    func = _PKG + "lemma_6_18_bound"
    M = _M(M, func)
    eta = check_interval(eta, "eta", 0.0, 1.0, func=func, closed="right")
    n = _count(n, "n", func, 2)
    return _value(func, lambda: 6.0 * M ** 2 * eta * n)


def lemma_6_19_separation(delta, m):
    r"""The separation of Lemma 6.19: m i.i.d. uniform positions are D-good with probability at least 1 - delta
    for :math:`D = \delta / (6 (m+1)^2)`.

    Parameters
    ----------
    delta : float
        Failure probability, in (0, 1).
    m : int
        Number of neurons, 1 <= m <= 2**53.

    Returns
    -------
    float
        D.

    Raises
    ------
    TypeError
        An argument of a wrong kind.
    ValueError
        An argument out of range, NaN or infinite.
    """
    func = _PKG + "lemma_6_19_separation"
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    m = _count(m, "m", func, 1)
    return delta / (6.0 * (m + 1) ** 2)
