"""Right-hand sides of the generalization bounds of chapter 4 of the thesis (Marion).

Each calculator evaluates the printed formula for the given constants (all validated: radii and Lipschitz
constants must be positive, n a positive integer above the statement's threshold, delta in (0, 1)).

* Prop. 4.2: ||F_theta(x)|| <= R_X + M R_Theta exp(K_f R_Theta) and
  ||F_theta(x) - F_theta'(x)|| <= 2 M K_f R_Theta exp(2 K_f R_Theta) ||theta - theta'||_{1,inf} (printed);
  the proof gives the constant C = M (K_f R_Theta exp(K_f R_Theta) + 1) exp(K_f R_Theta), which is at most
  the printed one only when K_f R_Theta exp(K_f R_Theta) >= 1 (:func:`prop_4_2_lipschitz_proof`).
* Prop. 4.3: log N(eps) <= m log(16 m R_Theta / eps) + m^2 K_Theta log 4 / eps.
* Thm 4.4: gap <= B sqrt((m+1) log(R_Theta m n) / n) + B m sqrt(K_Theta) / n^(1/4) + B sqrt(log(1/delta) / n),
  B = 6 K_l K_f exp(K_f R_Theta) (R_X + M R_Theta exp(K_f R_Theta) + R_Y), n >= 9 max(m^-2 R_Theta^-2, 1).
* Cor. 4.5: gap <= B (d+1) sqrt(log(R_W d n) / n) + B sqrt(log(1/delta) / n),
  B = 6 sqrt 2 K_l K_sigma exp(K_sigma R_W) (R_X + M R_W exp(K_sigma R_W) + R_Y).
* Prop. 4.6: ||F_W(x)|| <= R_X exp(K_sigma R_W), Lipschitz constant R_X exp(2 K_sigma R_W) / R_W.
* Prop. 4.7: log N(eps) <= d^2 log(16 d^2 R_W / eps) + d^4 K_W log 4 / eps.
* Thm 4.8 (4.13): gap <= B (d+1) sqrt(log(R_W d n) / n) + B d^2 sqrt(K_W) / n^(1/4) + B sqrt(log(1/delta) / n),
  B = 6 sqrt 2 K_l max(exp(K_sigma R_W) / R_W, 1) (R_X exp(K_sigma R_W) + R_Y), n >= 9 R_W^-1 max(d^-4 R_W^-1, 1).
* Cor. 4.9 (4.14): the spectral complexity of Bartlett et al. is at most 2 R e^R sqrt(L) when L >= R.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import check_int, check_interval

__all__ = ["prop_4_2_output_bound", "prop_4_2_lipschitz_printed", "prop_4_2_lipschitz_proof",
           "prop_4_3_log_covering", "theorem_4_4_constant", "theorem_4_4_gap", "corollary_4_5_constant",
           "corollary_4_5_gap", "prop_4_6_output_bound", "prop_4_6_lipschitz", "prop_4_7_log_covering",
           "theorem_4_8_constant", "theorem_4_8_gap", "corollary_4_9_complexity_bound"]


def _pos(v, name, func, closed=False):
    return check_interval(v, name, 0.0, np.inf, func=func, closed="left" if closed else "neither")


def prop_4_2_output_bound(R_X, M, K_f, R_theta):
    """R_X + M R_Theta exp(K_f R_Theta) (Prop. 4.2, first bound)."""
    f = "prop_4_2_output_bound"
    R_X, M, K_f, R = _pos(R_X, "R_X", f), _pos(M, "M", f, True), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    return R_X + M * R * math.exp(K_f * R)


def prop_4_2_lipschitz_printed(M, K_f, R_theta):
    """2 M K_f R_Theta exp(2 K_f R_Theta): the constant printed in Prop. 4.2."""
    f = "prop_4_2_lipschitz_printed"
    M, K_f, R = _pos(M, "M", f, True), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    return 2 * M * K_f * R * math.exp(2 * K_f * R)


def prop_4_2_lipschitz_proof(M, K_f, R_theta):
    """M (K_f R_Theta exp(K_f R_Theta) + 1) exp(K_f R_Theta): the constant the proof of Prop. 4.2 establishes
    (Gronwall), valid for every K_f > 0, R_Theta > 0."""
    f = "prop_4_2_lipschitz_proof"
    M, K_f, R = _pos(M, "M", f, True), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    e = math.exp(K_f * R)
    return M * (K_f * R * e + 1) * e


def prop_4_3_log_covering(m, R_theta, K_theta, eps):
    """m log(16 m R_Theta / eps) + m^2 K_Theta log(4) / eps (Prop. 4.3)."""
    f = "prop_4_3_log_covering"
    m = check_int(m, "m", func=f, minimum=1)
    R, K, eps = _pos(R_theta, "R_theta", f), _pos(K_theta, "K_theta", f, True), _pos(eps, "eps", f)
    return m * math.log(16 * m * R / eps) + m * m * K * math.log(4) / eps


def theorem_4_4_constant(K_l, K_f, R_theta, R_X, R_Y, M):
    """B = 6 K_l K_f exp(K_f R_Theta) (R_X + M R_Theta exp(K_f R_Theta) + R_Y) (Thm 4.4; printed R_V read as R_Y)."""
    f = "theorem_4_4_constant"
    K_l, K_f, R = _pos(K_l, "K_l", f), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    R_X, R_Y, M = _pos(R_X, "R_X", f), _pos(R_Y, "R_Y", f), _pos(M, "M", f, True)
    e = math.exp(K_f * R)
    return 6 * K_l * K_f * e * (R_X + M * R * e + R_Y)


def _n_delta(n, delta, func):
    n = check_int(n, "n", func=func, minimum=1)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    return n, delta


def theorem_4_4_gap(n, delta, m, K_theta, R_theta, B):
    """The right-hand side of Thm 4.4 minus the empirical risk. Raises ValueError naming ``n`` below
    n >= 9 max(m^-2 R_Theta^-2, 1) (the theorem does not apply)."""
    f = "theorem_4_4_gap"
    n, delta = _n_delta(n, delta, f)
    m = check_int(m, "m", func=f, minimum=1)
    K, R, B = _pos(K_theta, "K_theta", f, True), _pos(R_theta, "R_theta", f), _pos(B, "B", f)
    need = 9 * max(1 / (m * R) ** 2, 1.0)
    if n < need:
        raise ValueError(f"`n` of {f} must be >= 9 max(m^-2 R_theta^-2, 1) = {need:g}; got {n}.")
    return (B * math.sqrt((m + 1) * math.log(R * m * n) / n) + B * m * math.sqrt(K) / n ** 0.25
            + B * math.sqrt(math.log(1 / delta) / n))


def corollary_4_5_constant(K_l, K_sigma, R_W, R_X, R_Y, M):
    """B = 6 sqrt 2 K_l K_sigma exp(K_sigma R_W) (R_X + M R_W exp(K_sigma R_W) + R_Y) (Cor. 4.5)."""
    f = "corollary_4_5_constant"
    K_l, K_s, R = _pos(K_l, "K_l", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    R_X, R_Y, M = _pos(R_X, "R_X", f), _pos(R_Y, "R_Y", f), _pos(M, "M", f, True)
    e = math.exp(K_s * R)
    return 6 * math.sqrt(2) * K_l * K_s * e * (R_X + M * R * e + R_Y)


def corollary_4_5_gap(n, delta, d, R_W, B):
    """B (d+1) sqrt(log(R_W d n) / n) + B sqrt(log(1/delta) / n) (Cor. 4.5). Requires both the corollary's
    n >= 9 R_W^-1 max(d^-4 R_W^-1, 1) and Thm 4.4's n >= 9 max(d^-4 R_W^-2, 1) (the corollary is Thm 4.4 with
    m = d^2; its printed condition alone allows n = 1 at R_W = 9, d = 1)."""
    f = "corollary_4_5_gap"
    n, delta = _n_delta(n, delta, f)
    d = check_int(d, "d", func=f, minimum=1)
    R, B = _pos(R_W, "R_W", f), _pos(B, "B", f)
    need = max(9 / R * max(1 / (d ** 4 * R), 1.0), 9 * max(1 / (d ** 4 * R * R), 1.0))
    if n < need:
        raise ValueError(f"`n` of {f} must be >= {need:g} (Cor. 4.5 and Thm 4.4 conditions); got {n}.")
    return B * (d + 1) * math.sqrt(math.log(R * d * n) / n) + B * math.sqrt(math.log(1 / delta) / n)


def prop_4_6_output_bound(R_X, K_sigma, R_W):
    """R_X exp(K_sigma R_W) (Prop. 4.6)."""
    f = "prop_4_6_output_bound"
    return _pos(R_X, "R_X", f) * math.exp(_pos(K_sigma, "K_sigma", f) * _pos(R_W, "R_W", f))


def prop_4_6_lipschitz(R_X, K_sigma, R_W):
    """R_X exp(2 K_sigma R_W) / R_W (Prop. 4.6)."""
    f = "prop_4_6_lipschitz"
    R_X, K_s, R = _pos(R_X, "R_X", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    return R_X * math.exp(2 * K_s * R) / R


def prop_4_7_log_covering(d, R_W, K_W, eps):
    """d^2 log(16 d^2 R_W / eps) + d^4 K_W log(4) / eps (Prop. 4.7)."""
    f = "prop_4_7_log_covering"
    d = check_int(d, "d", func=f, minimum=1)
    return prop_4_3_log_covering(d * d, _pos(R_W, "R_W", f), _pos(K_W, "K_W", f, True), _pos(eps, "eps", f))


def theorem_4_8_constant(K_l, K_sigma, R_W, R_X, R_Y):
    """B = 6 sqrt 2 K_l max(exp(K_sigma R_W) / R_W, 1) (R_X exp(K_sigma R_W) + R_Y) (Thm 4.8)."""
    f = "theorem_4_8_constant"
    K_l, K_s, R = _pos(K_l, "K_l", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    R_X, R_Y = _pos(R_X, "R_X", f), _pos(R_Y, "R_Y", f)
    e = math.exp(K_s * R)
    return 6 * math.sqrt(2) * K_l * max(e / R, 1.0) * (R_X * e + R_Y)


def theorem_4_8_gap(n, delta, d, R_W, K_W, B):
    """(4.13) minus the empirical risk; raises ValueError naming ``n`` below 9 R_W^-1 max(d^-4 R_W^-1, 1)."""
    f = "theorem_4_8_gap"
    n, delta = _n_delta(n, delta, f)
    d = check_int(d, "d", func=f, minimum=1)
    R, K, B = _pos(R_W, "R_W", f), _pos(K_W, "K_W", f, True), _pos(B, "B", f)
    need = 9 / R * max(1 / (d ** 4 * R), 1.0)
    if n < need:
        raise ValueError(f"`n` of {f} must be >= 9 R_W^-1 max(d^-4 R_W^-1, 1) = {need:g}; got {n}.")
    return (B * (d + 1) * math.sqrt(math.log(R * d * n) / n) + B * d * d * math.sqrt(K) / n ** 0.25
            + B * math.sqrt(math.log(1 / delta) / n))


def corollary_4_9_complexity_bound(R, L):
    """2 R e^R sqrt(L), the bound on the spectral complexity used for Cor. 4.9 (requires L >= R)."""
    f = "corollary_4_9_complexity_bound"
    R = _pos(R, "R", f)
    L = check_int(L, "L", func=f, minimum=1)
    if L < R:
        raise ValueError(f"`L` of {f} must be >= R = {R:g} (then ||I + W_k / L|| >= 1/2); got {L}.")
    return 2 * R * math.exp(R) * math.sqrt(L)
