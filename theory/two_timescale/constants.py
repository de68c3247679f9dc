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
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import check_int, check_interval

__all__ = ["neurons_required", "theorem_6_2_thresholds", "theorem_6_8_threshold", "prop_6_7_separation",
           "prop_6_9_bound", "prop_6_9_eps_max", "lemma_6_18_bound", "lemma_6_19_separation", "recovery_horizon"]


def _class(n, dv, df, M, func):
    n = check_int(n, "n", func=func, minimum=2)
    dv = check_interval(dv, "dv", 0.0, 1.0, func=func)
    df = check_interval(df, "df", 0.0, np.inf, func=func)
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    return n, dv, df, M


def neurons_required(n, dv, delta):
    """(6.2): the smallest real m allowed, 6 / Delta v (4 + log n + log(1/delta))."""
    n = check_int(n, "n", func="neurons_required", minimum=2)
    dv = check_interval(dv, "dv", 0.0, 1.0, func="neurons_required")
    delta = check_interval(delta, "delta", 0.0, 1.0, func="neurons_required")
    return 6.0 / dv * (4.0 + math.log(n) + math.log(1.0 / delta))


def theorem_6_2_thresholds(xi, delta, m, df, M, *, n=None, dv=None, C1=2.0 ** -21, C2=2.0 ** -36):
    """(Q_1, Q_2) of Thm 6.2 (eta <= Q_1, eps <= Q_2), with the constants of its proof by default.

    With the target's ``n`` (pieces) and ``dv`` (shortest piece) given, raises ValueError naming ``m`` when m is
    below (6.2): the theorem does not apply."""
    func = "theorem_6_2_thresholds"
    xi = check_interval(xi, "xi", 0.0, np.inf, func=func)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    m = check_int(m, "m", func=func, minimum=1)
    if (n is None) != (dv is None):
        raise ValueError(f"`n` and `dv` of {func} go together (both or neither); got n={n!r}, dv={dv!r}.")
    if n is not None and m < neurons_required(n, dv, delta):
        raise ValueError(f"`m` of {func} = {m} is below (6.2), 6/dv (4 + log n + log 1/delta) = "
                         f"{neurons_required(n, dv, delta):.1f}: Thm 6.2 does not apply.")
    df = check_interval(df, "df", 0.0, np.inf, func=func)
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    q1 = C1 / (M ** 2 * (m + 1)) * min(delta ** 2 * df ** 2 / (m + 1) ** 4, xi)
    q2 = C2 * delta ** 2 / (M ** 4 * (m + 1) ** 8.5) * min(delta * df ** 2 / (m + 1), xi)
    return q1, q2


def theorem_6_8_threshold(xi, delta, m, n, df, M, *, C=2.0 ** -19):
    """Q of Thm 6.8 (eta <= Q)."""
    func = "theorem_6_8_threshold"
    xi = check_interval(xi, "xi", 0.0, np.inf, func=func)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    m = check_int(m, "m", func=func, minimum=1)
    n = check_int(n, "n", func=func, minimum=2)
    df = check_interval(df, "df", 0.0, np.inf, func=func)
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    return C / M ** 2 * min(delta ** 2 * df ** 2 / (m + 1) ** 5, xi / n)


def recovery_horizon(df):
    """tau = 6 / Delta f^2 (Prop. 6.7, Thm 6.8), in slow time; T = tau / eps in the time of (6.1) (Thm 6.2)."""
    df = check_interval(df, "df", 0.0, np.inf, func="recovery_horizon")
    return 6.0 / df ** 2


def prop_6_7_separation(eta, m, M, df):
    """D = 2^(13/2) (m+1)^(1/2) M eta^(1/2) / Delta f of Prop. 6.7."""
    func = "prop_6_7_separation"
    eta = check_interval(eta, "eta", 0.0, 1.0, func=func, closed="right")
    m = check_int(m, "m", func=func, minimum=1)
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    df = check_interval(df, "df", 0.0, np.inf, func=func)
    return 2.0 ** 6.5 * math.sqrt(m + 1) * M * math.sqrt(eta) / df


def prop_6_9_eps_max(D, M, m):
    """The largest eps Prop. 6.9 allows: 2^-16 D^2 M^-2 (m+1)^(-5/2)."""
    func = "prop_6_9_eps_max"
    D = check_interval(D, "D", 0.0, np.inf, func=func)
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    m = check_int(m, "m", func=func, minimum=1)
    return 2.0 ** -16 * D ** 2 / M ** 2 / (m + 1) ** 2.5


def prop_6_9_bound(t, eps, D, M, m):
    """3 M sqrt(m+1) exp(-D t / 16) + 2^17 M^3 (m+1)^3 eps / D^2 (Prop. 6.9), elementwise in t.

    Raises ValueError naming ``eps`` when eps exceeds the proposition's threshold (it does not apply)."""
    func = "prop_6_9_bound"
    eps = check_interval(eps, "eps", 0.0, np.inf, func=func)
    D = check_interval(D, "D", 0.0, np.inf, func=func)
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    m = check_int(m, "m", func=func, minimum=1)
    if eps > prop_6_9_eps_max(D, M, m):
        raise ValueError(f"`eps` of {func} = {eps:g} exceeds 2^-16 D^2 M^-2 (m+1)^-5/2 = "
                         f"{prop_6_9_eps_max(D, M, m):.3g}: Prop. 6.9 does not apply.")
    t = np.asarray(t, float)
    if np.any(t < 0) or not np.all(np.isfinite(t)):
        raise ValueError(f"`t` of {func} must be finite and >= 0.")
    return 3 * M * math.sqrt(m + 1) * np.exp(-D * t / 16) + 2.0 ** 17 * M ** 3 * (m + 1) ** 3 * eps / D ** 2


def lemma_6_18_bound(M, eta, n):
    """6 M^2 eta n (Lemma 6.18)."""
    func = "lemma_6_18_bound"
    M = check_interval(M, "M", 1.0, np.inf, func=func, closed="left")
    eta = check_interval(eta, "eta", 0.0, 1.0, func=func, closed="right")
    n = check_int(n, "n", func=func, minimum=2)
    return 6.0 * M ** 2 * eta * n


def lemma_6_19_separation(delta, m):
    """D = delta / (6 (m+1)^2) of Lemma 6.19."""
    delta = check_interval(delta, "delta", 0.0, 1.0, func="lemma_6_19_separation")
    m = check_int(m, "m", func="lemma_6_19_separation", minimum=1)
    return delta / (6.0 * (m + 1) ** 2)
