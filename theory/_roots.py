"""Safeguarded Newton-bisection on a bracket: the one root-finding iteration of :mod:`theory.isotonic`
(the per-block pooled values of the p-norm problem, paper key ``topk``, Eq. (7.6)) and :mod:`theory.topk`
(the threshold equation of the mask, the singleton equation g + reg g^(p-1) = s and the block equations
of the magnitude in the anchored form, Eqs. (7.5)-(7.6)).

Private: plain floats and integers only, no validation, no defaults.

Problem: a root of an increasing F on a bracket [a, b] with F(a) <= 0 <= F(b). The caller evaluates F
and F' (reverse communication: no function argument, so that every caller's kernel keeps its own
compiled evaluation and stays cacheable) and hands the values to :func:`_step`, which returns the
next point to evaluate and the new bracket:

1. F(x) = 0: x is the root (code ROOT).
2. The bracket is updated by the sign of F(x) (a = x if F(x) < 0, else b = x), and its midpoint m
   formed (``mid`` kind: (a + b)/2, a/2 + b/2, or a geometric mean sqrt(a) sqrt(b) while the ends span
   a ratio > 4, see :func:`_mid`).
3. Stop (code BRACKET, x = m) when b - a <= tol * max(|a|, |b|, floor), or m is not strictly inside
   (a, b) (the ends are adjacent floats).
4. Newton candidate x_N = x - F/F' (m where F' is not in (0, inf)). If x_N lies in (a, b): stop (code
   STEP, x = x_N) when the step |x_N - x| is small (``step`` kind: never; <= rel max(|x_N|, floor_s);
   <= tol/2 max(|a|, |b|, floor)); otherwise every second iteration x_N is replaced by m unless the
   bracket halved over the last two iterations (so the bracket at least halves every three
   evaluations). Outside (a, b) the next point is m.
5. After iteration ``max_iter`` without a stop: code CAP (the caller reports non-convergence and
   returns its estimate from the last bracket).

A small Newton step is not a proof of convergence where F' blows up near the root; a caller for which
this matters (the isotonic block solve) verifies a STEP by evaluating F on both sides of x_N and, if the
sign does not change there, shrinks the bracket and resumes with :func:`_resume`.
"""

import math

from numba import njit

# Same flags as the callers (theory._pav, theory.topk._kernels): no fast-math flag, so that the
# iteration is the arithmetic the code writes (no fused multiply-add), identical in every caller.
_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}

#: codes returned by _step and _resume
CONTINUE, ROOT, BRACKET, STEP, CAP = 0, 1, 2, 3, 4
#: midpoint kinds (see _mid)
MID_HALF, MID_HALVES, MID_LOG, MID_SIGNED_LOG = 0, 1, 2, 3
#: small-step rules (see _step)
STEP_NONE, STEP_REL, STEP_TOL = 0, 1, 2


@njit(**_JIT)
def _cap(max_iter, default):
    """The iteration cap: ``max_iter`` if it is >= 1, else the solve's own ``default``."""
    return max_iter if max_iter >= 1 else default


@njit(**_JIT)
def _tol(tol, default):
    """The relative bracket tolerance: ``tol`` if it is >= 0, else the solve's own ``default``."""
    return tol if tol >= 0.0 else default


@njit(**_JIT)
def _mid(a, b, kind):
    """Midpoint of the bracket [a, b]: MID_HALF (a + b)/2; MID_HALVES a/2 + b/2; MID_LOG (0 <= a < b):
    b 2^-30 for a = 0, sqrt(a) sqrt(b) for b > 4a, else a/2 + b/2 (bisection in the ratio of the
    ends, for roots spread over many binades); MID_SIGNED_LOG: 0 when the bracket straddles 0, the
    geometric mean of a same-sign bracket whose ends span a ratio > 4 (-sqrt(-a) sqrt(-b) below 0; an
    end at 0 gives 2^-30 times the other), else a/2 + b/2."""
    if kind == MID_HALF:
        return 0.5 * (a + b)
    if kind == MID_LOG:
        if a == 0.0:
            return b * 2.0 ** -30
        if b > 4.0 * a:
            return math.sqrt(a) * math.sqrt(b)
        return 0.5 * a + 0.5 * b
    if kind == MID_SIGNED_LOG:
        if a < 0.0 and b > 0.0:
            return 0.0
        if a >= 0.0 and (a == 0.0 or b > 4.0 * a):
            mid = b * 2.0 ** -30 if a == 0.0 else math.sqrt(a) * math.sqrt(b)
            if not (mid > a and mid < b):
                mid = 0.5 * a + 0.5 * b
            return mid
        if b <= 0.0 and (b == 0.0 or a < 4.0 * b):
            mid = a * 2.0 ** -30 if b == 0.0 else -math.sqrt(-a) * math.sqrt(-b)
            if not (mid > a and mid < b):
                mid = 0.5 * a + 0.5 * b
            return mid
    return 0.5 * a + 0.5 * b


@njit(**_JIT)
def _step(x, a, b, it, width_old, f, df, max_iter, tol, floor, mid_kind, step_kind, step_rel, step_floor):
    """One iteration (see the module docstring) from F(x) = f, F'(x) = df on the bracket [a, b], at
    iteration ``it`` (1-based) of at most ``max_iter``; ``width_old`` is the bracket width recorded at the
    last even iteration (start: the initial width). Returns (x, a, b, it, width_old, code): with code
    CONTINUE, x is the next point to evaluate and it the next iteration's number; ROOT: x is a zero of F;
    BRACKET: x is the midpoint of the final bracket; STEP: x is the Newton point of a small step; CAP:
    ``max_iter`` iterations are spent (x meaningless)."""
    if f == 0.0:
        return x, a, b, it, width_old, ROOT
    if f < 0.0:
        a = x
    else:
        b = x
    mid = _mid(a, b, mid_kind)
    scale = max(abs(a), abs(b), floor)
    if b - a <= tol * scale or not (mid > a and mid < b):
        return mid, a, b, it, width_old, BRACKET
    xn = x - f / df if (df > 0.0 and df < math.inf) else mid
    if xn > a and xn < b:
        if step_kind == STEP_REL:
            if abs(xn - x) <= step_rel * max(abs(xn), step_floor):
                return xn, a, b, it, width_old, STEP
        elif step_kind == STEP_TOL:
            if abs(xn - x) <= 0.5 * tol * scale:
                return xn, a, b, it, width_old, STEP
        if it % 2 == 0:  # safeguard: bisect unless the bracket halved over the last two iterations
            if b - a > 0.5 * width_old:
                xn = mid
            width_old = b - a
        x = xn
    else:
        x = mid
    if it >= max_iter:
        return x, a, b, it, width_old, CAP
    return x, a, b, it + 1, width_old, CONTINUE


@njit(**_JIT)
def _resume(it, max_iter):
    """After a rejected STEP at iteration ``it``: (next iteration, CONTINUE), or (it, CAP) when
    ``max_iter`` iterations are spent."""
    if it >= max_iter:
        return it, CAP
    return it + 1, CONTINUE
