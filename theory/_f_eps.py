"""The scalar map f_eps of Momentum ResNets' linear limit and its inverse (Sander's thesis, chapter 4).

Private: plain Python floats and complex numbers, no validation (the public, validated functions are
:func:`theory.momentum.lambda_eps`, :func:`theory.momentum.representable` and
:func:`theory.momentum.preimage`; the experiments of the thesis' Lemma 4.5 and Thm 4.7 call the solvers
here directly on targets they construct).

For eps > 0, the time-1 map of eps x'' + x' = theta x (Eq. (4.7), Prop. 4.3) on a scalar theta is
Psi_eps(theta) = f_eps(z) with theta = eps z - 1/(4 eps) and

    f_eps(z) = F_eps(sqrt z),    F_eps(s) = e^{-1/(2 eps)} (cosh s + sinh s / (2 eps s)),

which on the negative axis is G_eps(alpha) = f_eps(-alpha^2) = e^{-1/(2 eps)} (cos alpha + sin alpha /
(2 eps alpha)). Its minimum over the reals is lambda_eps = G_eps(alpha*) (Sec. 4.4.3), alpha* the first
critical point after pi; f_eps increases on [-alpha*^2, inf) and is onto C (Lemma 4.5).
"""

import cmath
import math

import numpy as np
import scipy.optimize

__all__ = ["G", "lambda_eps", "F", "F_prime", "f_real", "solve_real", "solve_complex"]


def G(alpha, eps):
    """G_eps(alpha) = e^{-1/(2 eps)} (cos alpha + sin alpha / (2 eps alpha)) = f_eps(-alpha^2)."""
    return math.exp(-0.5 / eps) * (math.cos(alpha) + math.sin(alpha) / (2 * eps * alpha))


def lambda_eps(eps):
    """(lambda_eps, alpha*) for a validated eps > 0: alpha* the root in (pi, 3 pi / 2) of G_eps'(a) = 0,
    i.e. of -sin a + (a cos a - sin a) / (2 eps a^2) = 0, and lambda_eps = G_eps(alpha*) (Sec. 4.4.3)."""

    def dG(a):
        return -math.sin(a) + (a * math.cos(a) - math.sin(a)) / (2 * eps * a * a)

    alpha = scipy.optimize.brentq(dG, math.pi, 1.5 * math.pi, xtol=1e-15, rtol=4 * np.finfo(float).eps,
                                  maxiter=200)
    return G(alpha, eps), alpha


def _inv2(eps, s):
    """1 / (2 eps s); when 2 eps s overflows (eps near the float64 maximum), the same quotient taken in the
    other order, which stays finite (the complex product inf * (a + 0j) holds a NaN)."""
    k = 1.0 / (2 * eps * s)
    if cmath.isnan(k):
        k = (0.5 / eps) / s
    return k


def F(s, eps):
    """F_eps(s), written as (e^{s-c}(1 + 1/(2 eps s)) + e^{-s-c}(1 - 1/(2 eps s))) / 2 with c = 1/(2 eps),
    which stays finite for large s and small eps; inf where it leaves the float range."""
    c = 0.5 / eps
    s = complex(s)
    if abs(s) < 1e-8:
        return complex(math.exp(-c) * (1 + 1 / (2 * eps)))
    if abs(s.real) - c > 700:
        return complex(math.inf, 0.0)
    k = _inv2(eps, s)
    return 0.5 * (cmath.exp(s - c) * (1 + k) + cmath.exp(-s - c) * (1 - k))


def F_prime(s, eps):
    """F_eps'(s) in the same stable form."""
    c = 0.5 / eps
    s = complex(s)
    if abs(s) < 1e-8:
        return s * math.exp(-c) * (1 + 1 / (6 * eps))
    if abs(s.real) - c > 700:
        return complex(math.inf, 0.0)
    k1 = _inv2(eps, s)
    k2 = k1 / s
    return 0.5 * (cmath.exp(s - c) * (1 + k1 - k2) + cmath.exp(-s - c) * (-1 + k1 + k2))


def f_real(x, eps):
    """f_eps(x) for real x (x >= 0: F(sqrt x); x < 0: G(sqrt(-x)))."""
    if x >= 0:
        return F(math.sqrt(x), eps).real
    return G(math.sqrt(-x), eps)


def solve_real(t, eps, lam, alpha, func="theory.momentum.preimage"):
    """The real z >= -alpha^2 with f_eps(z) = t >= lambda_eps (f_eps increases there), by Brent's method;
    ``lam, alpha`` are :func:`lambda_eps` (eps). -alpha^2 for t <= lambda_eps; a ValueError naming ``func``
    when the bracket would pass z = 1e12 (eps too small for t)."""
    lo = -alpha * alpha
    if t <= lam:
        return lo
    hi = 1.0
    while f_real(hi, eps) < t:
        hi *= 2.0
        if hi > 1e12:
            raise ValueError(f"`eps` of {func} = {eps} is too small for the eigenvalue {t} of `D`: its preimage under "
                             f"f_eps leaves the float64 range.")
    return scipy.optimize.brentq(lambda z: f_real(z, eps) - t, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps,
                                 maxiter=500)


def solve_complex(w, eps, need_nonreal, func="theory.momentum.preimage"):
    """A complex z with f_eps(z) = w (Lemma 4.5: f_eps is onto C), non-real when ``need_nonreal``: z = s^2
    for a root s of F_eps(s) = w found by damped Newton steps (at most 2 per step) from acosh(w e^{1/(2 eps)})
    and a few fixed starts; |F_eps(s) - w| <= 1e-13 max(1, |w|). A ValueError naming ``func`` when no start
    converges."""
    c = 0.5 / eps
    target = complex(w)
    # cosh dominates F_eps for large |s|: start from acosh(w e^c) (its logarithmic form when e^c overflows)
    base = cmath.acosh(target * math.exp(c)) if c < 700 else cmath.log(2 * target) + c
    starts = [base, base + 0.3j, base + 0.3]
    for r in (0.5, 1.0, 2.0, 4.0):
        for k in (1, 3):
            starts.append(complex(r, k * math.pi))
    tol = 1e-13 * max(1.0, abs(target))
    for s in starts:
        if abs(s) < 1e-6:
            s += 0.1 + 0.1j
        for _ in range(200):
            Fs = F(s, eps) - target
            if abs(Fs) <= tol:
                break
            dF = F_prime(s, eps)
            if dF == 0 or not cmath.isfinite(dF) or not cmath.isfinite(Fs):
                break
            step = Fs / dF
            if abs(step) > 2.0:
                step *= 2.0 / abs(step)
            s = s - step
        if cmath.isfinite(F(s, eps)) and abs(F(s, eps) - target) <= tol:
            z = s * s
            if not need_nonreal or abs(z.imag) > 1e-6:
                return z
    raise ValueError(f"`D` of {func}: no complex preimage of its eigenvalue {w} under f_eps was found at "
                     f"`eps` = {eps} (Lemma 4.5 of the thesis, ch. 4).")
