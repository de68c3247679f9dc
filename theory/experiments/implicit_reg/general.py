r"""The general-model results of ``implicit-reg`` (Appendix A and the lemmas of Appendix C): the measurements
behind their checks, as library functions.

Numbering of the ICLR paper; chapter 3 of Marion's and of Sander's theses number the same
statements Lemma 3.21, Lemma 3.23, Prop 3.8, Prop 3.9, Prop 3.12 (aliases).

* Lemma 18: three singular-value inequalities (Weyl with a Frobenius perturbation, and two Frobenius
  lower bounds of a product), over Hypothesis-drawn Gaussian and ill-conditioned matrices of sizes 1..8 and
  by a worst-case search reaching their equality cases (:data:`LEMMA18_BOX`).
* Lemma 20: :math:`P(\|W\|_F \le M_W\sqrt{qm}) \ge 1 - \exp(-(M_W^2-1)qm/16)` for :math:`M_W \ge \sqrt2`,
  exact through the chi-square law of :math:`\|W\|_F^2`, plus a Monte-Carlo frequency.
* Prop 11: the Euler scheme :math:`u_{k+1} = u_k + g(u_k, \theta_{k+1})/L` of a parameterised ODE with
  :math:`\theta^L_{k+1} = \Theta(k/(L-1))` converges at rate 1/L, and the explicit gap bounds (35), (36)
  hold with closed-form constants (toy :math:`g(u, \theta) = \theta\tanh(u)`, u in R^2, theta 2 x 2).
* Prop 7: along clipped GD (Eq. (5), Euler steps) of the model of Eq. (3) (f(h, (V, W)) =
  V tanh(W h / sqrt q) / sqrt m), the norm bound (17) with M = M_0 + T M_pi, the intermediate bounds of
  its proof on h_k, p_k and their increments, and the Gronwall bound on consecutive weights with the
  printed alpha, beta; the constants K_1, K_2, K' are upper-bounded in closed form for this f (see
  :func:`p7_constants`). The Gronwall bound is astronomically loose (log10 log10 of its right-hand side is
  recorded); its informative content, the O(1/L) consecutive differences, is checked as a rate.
* Prop 8: along unclipped GD (Eq. (4)) of model (3) with sigma = sin on small instances where its
  hypothesis is certified: the (M, mu)-local PL condition of Definition 1 holds on the whole M-ball around
  init for every L with mu above the threshold of (22) (a lower bound on ||dl/dA||^2 through the input
  Jacobian, :func:`p8_hypotheses`; asserted in each record). Checked: exponential decay of the loss at the
  certified mu, the parameters staying in the ball uniformly in L, O(1/L) consecutive differences uniformly
  in t, exponential convergence of the parameters at rate mu/2; and, on an instance with f = 0, the bounds
  with the printed constants. Its statement (i) bounds the Frobenius norm of A by ``||A^init||_2 + M``; that
  is false at t = 0 when ||A^init||_F > ||A^init||_2 + M (erratum record).

Every bound is also searched, not only sampled: the measure functions run
:func:`theory.worst_case.search_worst_case` over a declared box of the statement's hypotheses (``*_BOX``, sides
of one instance by ``*_search_sides``), with the budget and seed as config fields, and the verdicts pass only if
the search stays within the bound too (Lemmas 18 and 20, (35)-(36), Prop. 7 through
:mod:`.searches`; the loss bound and the convergence rate of Prop. 8 over :data:`P8_BOX`, its f = 0 instance over
:data:`P8C_BOX`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.stats import chi2

from theory.claims import (Verdict, bound_verdict, erratum_verdict, frequency_verdict, rate_verdict, threshold_verdict,
                           worst_case_verdict)
from theory.implicit import Params, forward, initialize, loss_and_gradient, train
from theory.rates import BoundTracker, bound_ratio, fit_rate, frequency
from theory.worst_case import search_worst_case

from ..config import Choice, Config, Custom, Int, Ints, Real, field
from ._common import box, rates_verdict, require, search_budget_field, search_seed_field, seeds_field, with_measured


def _smin(a):
    """The smallest of the min(rows, cols) singular values (the paper's s_min)."""
    return float(np.linalg.svd(np.atleast_2d(a), compute_uv=False)[-1])


# ============================================================================ Lemma 18

# Equality cases (r = 1, or A' = 0 along a singular direction) give ratios 1 up to rounding.
EXPECTED_L18 = {"ratio_max": 1.0 + 1e-10}


def _matrix(rows, cols, kind, rng):
    if kind == "gaussian":
        return rng.standard_normal((rows, cols))
    U, _ = np.linalg.qr(rng.standard_normal((rows, rows)))
    Vt, _ = np.linalg.qr(rng.standard_normal((cols, cols)))
    k = min(rows, cols)
    S = np.zeros((rows, cols))
    S[np.arange(k), np.arange(k)] = np.logspace(0, -8 * rng.uniform(), k)
    return U @ S @ Vt.T


def lemma18_sides(inst, enforce=True):
    r"""(name, LHS, RHS) of the statements of Lemma 18 that apply to ``inst``.

    weyl: :math:`s_{\min}(A) \le s_{\min}(A + A') + \|A'\|_F`; left: :math:`s_{\min}(A)\|B\|_F \le \|AB\|_F`
    (needs m >= r); right: :math:`\|A\|_F s_{\min}(B) \le \|AB\|_F` (needs n >= r). ``enforce=False``
    keeps the product statements outside their hypothesis (negative control)."""
    rng = np.random.default_rng(inst["seed"])
    m, r, n = inst["m"], inst["r"], inst["n"]
    A = _matrix(m, r, inst["kind"], rng)
    Ap = inst["scale"] * rng.standard_normal((m, r))
    B = _matrix(r, n, inst["kind"], rng)
    AB = np.linalg.norm(A @ B)
    out = [("weyl", _smin(A), _smin(A + Ap) + np.linalg.norm(Ap))]
    if m >= r or not enforce:
        out.append(("left", _smin(A) * np.linalg.norm(B), AB))
    if n >= r or not enforce:
        out.append(("right", np.linalg.norm(A) * _smin(B), AB))
    return out


def _structured(rows, cols, log10_cond, rng):
    """A rows x cols matrix with Haar singular vectors and singular values from 1 down to 10^-log10_cond
    (log-spaced); (matrix, U, singular values, V) with U (rows x rows), V (cols x cols) orthogonal."""
    U, _ = np.linalg.qr(rng.standard_normal((rows, rows)))
    V, _ = np.linalg.qr(rng.standard_normal((cols, cols)))
    k = min(rows, cols)
    S = np.logspace(0.0, -float(log10_cond), k)
    return (U[:, :k] * S) @ V[:, :k].T, U, S, V


def _unit(x):
    nx = np.linalg.norm(x)
    return x / nx if nx > 0 else x


#: the box of the worst-case search of Lemma 18 (:func:`lemma18_search_sides`): which statement, the shapes m, r, n
#: in 1..32 (the product statements only where they apply), the condition number (up to 1e5: the lemma is scale invariant, and
#: at the equality cases the SVD's absolute error eps ||A||_2 is eps x cond of s_min, which stays below the 1e-10
#: the verdict allows for rounding), the size of A' against s_min(A) (up to 1e3: beyond 1 the first statement is
#: trivial), the weight of the extremal direction, a seed
LEMMA18_BOX = (("statement", 0, 2, "int"), ("m", 1, 32, "log-int"), ("r", 1, 32, "log-int"), ("n", 1, 32, "log-int"),
               ("log10_cond", 0.0, 5.0, "linear"), ("pert", 1e-3, 1e3, "log"), ("align", 0.0, 1.0, "linear"),
               ("seed", 0, 2**20, "int"))
LEMMA18_STATEMENTS = ("weyl", "left", "right")


def lemma18_search_sides(inst, rhs_factor=1.0):
    r"""(LHS, RHS) of one statement of Lemma 18 at an instance of :data:`LEMMA18_BOX`, or None outside its
    hypothesis (m < r for the left product bound, n < r for the right one).

    The instances reach the equality cases of the proof: ``align`` mixes a Gaussian direction with the extremal
    one (weyl: :math:`A' = -t\,u_{\min}v_{\min}^\top`, equality for :math:`t \le s_{\min}(A)`; left: the columns of B
    along :math:`v_{\min}(A)`; right: the rows of A along :math:`u_{\min}(B)`), ``log10_cond`` sets the spread of the
    singular values, ``pert`` the Frobenius size of A' in units of :math:`s_{\min}(A)`. ``rhs_factor`` multiplies the
    right-hand side (1: the lemma; a negative control lowers it)."""
    rng = np.random.default_rng(inst["seed"])
    m, r, n, a = inst["m"], inst["r"], inst["n"], inst["align"]
    name = LEMMA18_STATEMENTS[inst["statement"]]
    if (name == "left" and m < r) or (name == "right" and n < r):
        return None
    if name == "right":
        B, UB, SB, _ = _structured(r, n, inst["log10_cond"], rng)
        A = _unit((1 - a) * _unit(rng.standard_normal((m, r))) + a * np.outer(_unit(rng.standard_normal(m)),
                                                                           UB[:, len(SB) - 1]))
        return float(np.linalg.norm(A) * _smin(B)), rhs_factor * float(np.linalg.norm(A @ B))
    A, U, S, V = _structured(m, r, inst["log10_cond"], rng)
    k = len(S) - 1
    if name == "weyl":
        D = _unit((1 - a) * _unit(rng.standard_normal((m, r))) - a * np.outer(U[:, k], V[:, k]))
        Ap = inst["pert"] * S[k] * D
        return float(S[k]), rhs_factor * (_smin(A + Ap) + float(np.linalg.norm(Ap)))
    B = _unit((1 - a) * _unit(rng.standard_normal((r, n))) + a * np.outer(V[:, k], _unit(rng.standard_normal(n))))
    return float(S[k] * np.linalg.norm(B)), rhs_factor * float(np.linalg.norm(A @ B))


# ============================================================================ Lemma 20

L20_QM = np.arange(1, 401)  # q m = 1 .. 400
L20_MW = np.linspace(np.sqrt(2.0), 4.0, 60)  # the lemma's range M_W >= sqrt 2
EXPECTED_L20 = {"ratio_max": 1.0}


def lemma20_ratios(qm=L20_QM, mw=L20_MW, divisor=16.0):
    r"""P(||W||_F > M_W sqrt(qm)) / exp(-(M_W^2 - 1) qm / divisor) on the grid (qm, M_W), exact.

    ||W||_F^2 is chi-square with qm degrees of freedom; the ratio is formed in logs (no underflow)."""
    k = np.asarray(qm, dtype=float)[:, None]
    M2 = np.asarray(mw, dtype=float)[None, :] ** 2
    with np.errstate(over="ignore"):
        return np.exp(chi2.logsf(M2 * k, k) + (M2 - 1.0) * k / divisor)


def lemma20_result(qm=L20_QM, mw=L20_MW, divisor=16.0):
    ratios = lemma20_ratios(qm, mw, divisor)
    grid = [{"qm": int(k), "M_W": float(w)} for k in qm for w in mw]
    return bound_ratio(np.nan_to_num(ratios.ravel(), posinf=1e300), 1.0, grid)


#: the box of the worst-case search of Lemma 20 (:func:`lemma20_search_sides`): q m over five decades, M_W from the
#: lemma's edge sqrt 2 up to 16
LEMMA20_BOX = (("qm", 1, 100_000, "log-int"), ("M_W", math.sqrt(2.0), 16.0, "log"))


def lemma20_search_sides(inst, divisor=16.0):
    """(LHS/RHS, 1) of Lemma 20 at ``inst`` = {"qm", "M_W"}: the exact tail P(||W||_F > M_W sqrt(qm)) over
    exp(-(M_W^2 - 1) qm / divisor), formed in logs (both sides underflow at large q m)."""
    k, M2 = float(inst["qm"]), float(inst["M_W"]) ** 2
    with np.errstate(over="ignore"):
        return float(np.exp(chi2.logsf(M2 * k, k) + (M2 - 1.0) * k / divisor)), 1.0


L20_MC = ((1, 1, np.sqrt(2.0)), (2, 2, np.sqrt(2.0)), (2, 3, 2.0), (4, 4, np.sqrt(2.0)))  # (q, m, M_W)
L20_RUNS = 20000


def lemma20_mc(q, m, mw, runs=L20_RUNS, seed=0):
    """Violation indicators of ||W||_F <= M_W sqrt(qm) over ``runs`` seeded Gaussian draws."""
    W = np.random.default_rng(seed).standard_normal((runs, q, m))
    return np.linalg.norm(W, axis=(1, 2)) > mw * np.sqrt(q * m)


# ============================================================================ Proposition 11

P11_D = 2  # u in R^2, theta in R^{2 x 2}
P11_GRID = np.array([8, 16, 32, 64, 128, 256, 512, 1024])
P11_SEEDS = range(3)
EXPECTED_P11_RATE = {"slope": -1.0, "tol": 0.1}
EXPECTED_P11_BOUND = {"ratio_max": 1.0}


def p11_problem(seed, scale=1.0, omega=3.0, a_scale=1.0):
    """A fixed toy problem: Theta(s) = T0 + T1 sin(omega s + phi) (2 x 2), a in R^2 (times ``a_scale``: a large
    a saturates tanh, where U moves at the speed C_U of (36)), a perturbation b."""
    rng = np.random.default_rng(seed)
    T0, T1 = scale * rng.standard_normal((2, P11_D, P11_D))
    phi = rng.uniform(0, 2 * np.pi)
    a, b = rng.standard_normal((2, P11_D))
    return {"T0": T0, "T1": T1, "phi": phi, "omega": float(omega), "a": float(a_scale) * a, "b": b}


def p11_theta(pb, s):
    """Theta(s), shape (len(s), 2, 2)."""
    s = np.atleast_1d(np.asarray(s, dtype=float))
    return pb["T0"][None] + np.sin(pb["omega"] * s + pb["phi"])[:, None, None] * pb["T1"][None]


def p11_parameters(pb, L, index_map="paper", noise=0.0, rng=None):
    r"""theta_1 .. theta_L: ``"paper"`` theta_{k+1} = Theta(k/(L-1)) (proof of Prop. 11); ``"reversed"``
    theta_{k+1} = Theta(1 - k/(L-1)) (a wrong index map); ``noise`` > 0 adds i.i.d. N(0, noise^2) entries
    (Theta^L no longer converges: a hypothesis of Prop. 11 violated)."""
    s = np.arange(L) / (L - 1)
    theta = p11_theta(pb, s if index_map == "paper" else 1.0 - s)
    if noise:
        theta = theta + noise * rng.standard_normal(theta.shape)
    return theta


def p11_euler(a, theta):
    """Scheme (32): u_0 = a, u_{k+1} = u_k + theta_{k+1} tanh(u_k) / L; returns u_0 .. u_L, shape (L+1, 2)."""
    L = theta.shape[0]
    u = np.empty((L + 1, a.size))
    u[0] = a
    for k in range(L):
        u[k + 1] = u[k] + theta[k] @ np.tanh(u[k]) / L
    return u


@functools.lru_cache(maxsize=None)
def _p11_reference(seed, scale, omega, a_scale=1.0):
    pb = p11_problem(seed, scale, omega, a_scale)
    sol = solve_ivp(lambda s, u: p11_theta(pb, s)[0] @ np.tanh(u), (0.0, 1.0), pb["a"], method="DOP853",
                    rtol=1e-12, atol=1e-13, dense_output=True)
    if not sol.success:
        raise RuntimeError(f"the DOP853 reference of Prop. 11 failed: {sol.message}")
    return pb, sol.sol


def p11_constants(pb, a_L):
    r"""Closed-form upper bounds of the constants of the proof of Prop. 11 for g(u, theta) = theta tanh(u).

    C_u = sup_s ||Theta(s)||_2 <= ||T0||_2 + ||T1||_2 (Lipschitz constant in u); D_E = max(||a||, ||a^L||);
    T_u = sup ||tanh(u)|| <= min(sqrt d, D_E e^{C_u}) (Lipschitz constant in theta, Frobenius norm);
    C = max(C_u, T_u); C_Theta = omega ||T1||_F; C~ = sup ||U''|| <= omega ||T1||_2 T_u + C_u^2 T_u
    (U'' = Theta' tanh U + Theta diag(sech^2 U) U'); C_U = sup ||U'|| <= C_u T_u."""
    Cu = np.linalg.norm(pb["T0"], 2) + np.linalg.norm(pb["T1"], 2)
    DE = max(np.linalg.norm(pb["a"]), np.linalg.norm(a_L))
    Tu = min(np.sqrt(P11_D), DE * np.exp(Cu))
    return {"C": max(Cu, Tu), "C_u": Cu, "C_Theta": pb["omega"] * np.linalg.norm(pb["T1"]),
            "C_tilde": pb["omega"] * np.linalg.norm(pb["T1"], 2) * Tu + Cu**2 * Tu, "C_U": Cu * Tu}


def p11_sup_interp_error(pb, L, fine=64):
    """sup_s ||Theta(s) - Theta^L(s)||_F, Theta^L(s) = theta_{floor((L-1)s)+1}, sampled ``fine`` points per piece
    (a lower estimate of the sup, which makes the bound check stricter)."""
    s = np.linspace(0.0, 1.0, fine * (L - 1) + 1)
    j = np.minimum(np.floor((L - 1) * s + 1e-12), L - 1)
    gap = p11_theta(pb, s) - p11_theta(pb, j / (L - 1))
    return float(np.max(np.linalg.norm(gap, axis=(1, 2))))


def p11_gaps(seed, L, *, scale=1.0, omega=3.0, perturb=False, index_map="paper", noise=0.0, a_scale=1.0):
    """(Delta_0 .. Delta_L, u, U at k/L, sol): the gaps ||U(k/L) - u_k^L|| of the proof of Prop. 11."""
    pb, sol = _p11_reference(int(seed), float(scale), float(omega), float(a_scale))
    a_L = pb["a"] + (pb["b"] / L if perturb else 0.0)
    theta = p11_parameters(pb, L, index_map, noise, np.random.default_rng(10_000 + 7 * seed + L))
    u = p11_euler(a_L, theta)
    U = sol(np.arange(L + 1) / L).T
    return np.linalg.norm(U - u, axis=1), u, a_L, pb, sol


def p11_rate_table(grid=P11_GRID, seeds=P11_SEEDS, **kw):
    """max_k Delta_k^L, one row per seed."""
    return np.array([[np.max(p11_gaps(s, int(L), **kw)[0]) for L in grid] for s in seeds])


def p11_bound_sides(inst, shrink=1.0):
    """(LHS, RHS) of (35) (max_k Delta_k) and of (36) (max over a fine s-grid of the ratio); ``shrink``
    divides the right-hand sides (a wrong O(1/L^2) form for the control uses shrink = L)."""
    L = inst["L"]
    gaps, u, a_L, pb, sol = p11_gaps(inst["seed"], L, scale=inst["scale"], omega=inst["omega"],
                                     perturb=bool(inst["perturb"]), a_scale=inst.get("a_scale", 1.0))
    c = p11_constants(pb, a_L)
    rhs35 = (np.linalg.norm(a_L - pb["a"]) + p11_sup_interp_error(pb, L) + c["C_Theta"] / L
             + c["C_tilde"] / (L * c["C"])) * np.exp(c["C"])
    s = np.linspace(0.0, 1.0, 16 * L + 1)
    ks = np.minimum(np.floor(L * s + 1e-12).astype(int), L)
    lhs36 = np.linalg.norm(sol(s).T - u[ks], axis=1)
    rhs36 = c["C_U"] / L + gaps[ks]
    return [("35", float(np.max(gaps)), rhs35 / shrink), ("36", lhs36, rhs36 / shrink)]


#: the box of the worst-case search of (35)-(36) (:func:`p11_search_sides`): depth up to 2000, the size of Theta
#: and its frequency over decades, the size of a (up to 30: tanh saturated), a perturbed or exact a^L, a seed
P11_BOX = (("L", 2, 2000, "log-int"), ("scale", 0.1, 3.0, "log"), ("omega", 0.3, 30.0, "log"),
           ("a_scale", 0.1, 30.0, "log"), ("perturb", 0, 1, "int"), ("seed", 0, 2**20, "int"))


def p11_search_sides(inst, shrink=1.0):
    """(LHS, RHS) of whichever of (35), (36) has the larger ratio at an instance of :data:`P11_BOX`
    (:func:`p11_bound_sides`, the largest ratio over the s-grid for (36)); ``shrink`` divides the right-hand sides
    (``"L"``: by L, a wrong O(1/L^2) form for a control)."""
    out = []
    for _, lhs, rhs in p11_bound_sides(inst, inst["L"] if shrink == "L" else float(shrink)):
        lhs, rhs = np.broadcast_arrays(np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float))
        i = int(np.argmax(lhs / rhs))
        out.append((float(lhs.flat[i]), float(rhs.flat[i])))
    return max(out, key=lambda lr: lr[0] / lr[1])


# ============================================================================ Proposition 7

P7_N, P7_D, P7_Q, P7_M = 8, 2, 4, 4  # q = d + d': F = 0 at the paper's init
P7_LENGTHSCALE = 0.5  # of the smooth (Section 4.3) initialisation, a Lipschitz Z^init as in Appendix A
TANH = {"K_sigma": 1.0, "M_sigma": 1.0, "sigma2": 4.0 / (3.0 * math.sqrt(3.0))}  # sup|tanh'|, sup|tanh|, sup|tanh''|
EXPECTED_P7 = {"ratio_max": 1.0}
# the displacement bound is attained (up to rounding) when every coordinate is clipped in a fixed direction
EXPECTED_P7_DISPLACEMENT = {"ratio_max": 1.0 + 1e-12}


def _dtanh(u):
    return 1.0 - np.tanh(u) ** 2


def p7_data(seed, x_scale=1.0, y_scale=1.0):
    """n = 8 samples x ~ N(0, x_scale^2 I_2), y ~ N(0, y_scale^2 I_2) (independent)."""
    rng = np.random.default_rng(3000 + seed)
    return x_scale * rng.standard_normal((P7_N, P7_D)), y_scale * rng.standard_normal((P7_N, P7_D))


def p7_init(L, seed, kind):
    """Paper's init (V = 0, one W) or the smooth init Z_k(0) = Z^init(k/L) (one path for every L)."""
    extra = {"lengthscale": P7_LENGTHSCALE} if kind == "smooth" else {}
    return initialize(P7_D, P7_M, L, np.random.default_rng(seed), q=P7_Q, d_out=P7_D, kind=kind, **extra)


@functools.lru_cache(maxsize=None)
def p7_init_sup(seed, kind):
    """sup_s ||Z^init(s)|| (sum-norm ||V||_F + ||W||_F), from the path sampled at s = k/4096."""
    p = p7_init(4096, seed, kind)
    return float(np.max(np.linalg.norm(p.V, axis=(1, 2)) + np.linalg.norm(p.W, axis=(1, 2))))


def backward_states(X, Y, p, activation="tanh"):
    r"""Per-sample hidden states h_{k,i} and backward states p_{k,i} = d l_i / d h_k (Eq. (13), transposed).

    :math:`p_{L,i} = 2B^\top(F(x_i) - y_i)`, :math:`p_{k,i} = p_{k+1,i} + \frac1L\partial_1 f(h_{k,i}, Z_{k+1})^\top
    p_{k+1,i}` with :math:`\partial_1 f^\top p = W^\top((V^\top p)\odot\sigma'(Wh/\sqrt q))/\sqrt{mq}`; no 1/n
    (so :math:`\partial\ell/\partial A = \frac1n\sum_i p_{0,i}x_i^\top`). Only tanh. Returns (h, P), both (L+1, n, q).
    """
    if activation != "tanh":
        raise ValueError(f"`activation` of backward_states must be 'tanh'; got {activation!r}")
    h, F = forward(X, p, activation)
    L, q, m = p.L, p.q, p.m
    P = np.empty_like(h)
    P[L] = 2.0 * (F - Y) @ p.B
    for k in range(L - 1, -1, -1):
        u = h[k] @ p.W[k].T / np.sqrt(q)
        P[k] = P[k + 1] + ((P[k + 1] @ p.V[k]) * _dtanh(u)) @ p.W[k] / (L * np.sqrt(m * q))
    return h, P


def p7_constants(M, M_X, M_Y, q=P7_Q, m=P7_M, act=TANH):
    r"""Upper bounds of the constants of Prop. 7 for f(h, (V, W)) = V sigma(W h / sqrt q) / sqrt m, sum-norm on Z.

    With :math:`\|V\|_F + \|W\|_F \le M` (so :math:`\|V\|_2\|W\|_2 \le M^2/4`), :math:`\|h\| \le R = e^{K_1}MM_X`:

    * :math:`K_1 = \sup\|\partial_1 f\|_2 \le K_\sigma M^2 / (4\sqrt{mq})` (:math:`\partial_1 f = V
      \mathrm{diag}(\sigma')W/\sqrt{mq}`; equality for tanh at h = 0 with rank-one aligned V, W);
    * :math:`K_2 \le M_\sigma + K_\sigma M R/\sqrt{mq}` (V-block of :math:`\partial_2 f^\top p` at most
      :math:`\|\sigma(u)\|\|p\|/\sqrt m \le M_\sigma\|p\|`, W-block at most
      :math:`K_\sigma\|V\|_2\|h\|\|p\|/\sqrt{mq}`);
    * :math:`K' \le \max(2K_\sigma R/\sqrt{mq} + \|\sigma''\|_\infty M R^2/(q\sqrt m),\ K_\sigma M/\sqrt{mq} +
      \|\sigma''\|_\infty (M^2/4) R/(q\sqrt m))` (second derivatives in (z, z) and (z, h); the factor 2 is
      not needed in the sum-norm, kept for safety).

    Returns a dict with K_1, R, K_2, K, K' and the logs of the printed ||p|| bound, alpha and beta (they
    overflow float64 for all but tiny M)."""
    s = math.sqrt(m * q)
    K1 = act["K_sigma"] * M**2 / (4 * s)
    R = math.exp(K1) * M * M_X
    K2 = act["M_sigma"] + act["K_sigma"] * M * R / s
    K = max(K1, K2)
    Kp = max(2 * act["K_sigma"] * R / s + act["sigma2"] * M * R**2 / (q * math.sqrt(m)),
             act["K_sigma"] * M / s + act["sigma2"] * M**2 / 4 * R / (q * math.sqrt(m)))
    log_pL = math.log(2 * M) + np.logaddexp(K + math.log(M**2 * M_X), math.log(M_Y))  # 2M(e^K M^2 M_X + M_Y)
    log_p = K + log_pL
    return {"K1": K1, "R": R, "K2": K2, "K": K, "Kp": Kp, "log_p": float(log_p),
            "log_alpha": float(log_p + math.log(Kp)),
            "log_beta": float(log_p + math.log(K) + np.logaddexp(math.log(K), K + math.log(Kp * M * M_X)))}


def _log(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


def _ratio(log_lhs, log_rhs):
    """max exp(log_lhs - log_rhs); 0 where the left side is 0 (log -inf: the bound holds) or the right side
    overflows to +inf. A NaN (a NaN input) raises instead of vanishing in the maximum."""
    log_lhs, log_rhs = np.broadcast_arrays(np.asarray(log_lhs, dtype=float), np.asarray(log_rhs, dtype=float))
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.where(log_lhs == -np.inf, -np.inf, log_lhs - log_rhs)
        out = np.exp(diff)
    if np.isnan(out).any():
        raise FloatingPointError("a NaN entered a bound ratio of Prop. 7")
    return float(np.max(out, initial=0.0))


def _sum_norm(V, W):
    return np.linalg.norm(V, axis=(-2, -1)) + np.linalg.norm(W, axis=(-2, -1))


@functools.lru_cache(maxsize=None)
def p7_run(seed, L, kind, clip, lr, steps, x_scale=1.0, y_scale=1.0, gronwall_terms="printed"):
    r"""Clipped GD (Eq. (5), step ``lr``) and the LHS/RHS ratios of Prop. 7 at every step.

    Returns a dict of the max ratios over the run (keys as in :data:`P7_BOUNDS`), the constants and the
    trajectory of :math:`D(t) = \max_k \|Z_{k+1}(t) - Z_k(t)\|`. ``x_scale``, ``y_scale`` scale the data (M_X,
    M_Y); ``gronwall_terms="initial-only"`` drops the terms beta T / L and e^{alpha T} of the Gronwall bound (a
    wrong form, for a negative control)."""
    X, Y = p7_data(seed, x_scale, y_scale)
    p0 = p7_init(L, seed, kind)
    A, V, W, B = (a.copy() for a in (p0.A, p0.V, p0.W, p0.B))
    q, m, d, dout = P7_Q, P7_M, P7_D, P7_D
    M_X, M_Y = float(np.max(np.linalg.norm(X, axis=1))), float(np.max(np.linalg.norm(Y, axis=1)))
    T = lr * steps
    M_pi = {"A": clip * math.sqrt(q * d), "Z": 2 * clip * math.sqrt(q * m), "B": clip * math.sqrt(dout * q)}
    M0 = max(np.linalg.norm(A), p7_init_sup(seed, kind), float(np.max(_sum_norm(V, W))), np.linalg.norm(B))
    M = M0 + T * max(M_pi.values())
    c = p7_constants(M, M_X, M_Y)
    dZ0 = _sum_norm(np.diff(V, axis=0), np.diff(W, axis=0))
    r = {k: 0.0 for k in P7_BOUNDS}
    D, max_norm, speed = [], 0.0, {"A": 0.0, "Z": 0.0, "B": 0.0}
    # theta(t) - theta(0) as the sum of the steps taken (the iterates themselves are updated as before): A - A(0)
    # would lose eps ||A(0)|| to cancellation, far more than t M_pi when the clip level is small
    mA, mV, mW, mB = (np.zeros_like(a) for a in (A, V, W, B))
    for j in range(steps + 1):
        t = j * lr
        _, g = loss_and_gradient(X, Y, Params(A, V, W, B), "tanh")
        fA, fB = np.clip(-g.A, -clip, clip), np.clip(-g.B, -clip, clip)
        fV, fW = np.clip(-L * g.V, -clip, clip), np.clip(-L * g.W, -clip, clip)
        norms = max(np.linalg.norm(A), float(np.max(_sum_norm(V, W))), np.linalg.norm(B))
        max_norm = max(max_norm, norms)
        r["norm (17)"] = max(r["norm (17)"], norms / M)
        r["norm at t"] = max(r["norm at t"], norms / (M0 + t * max(M_pi.values())))
        if j:  # the speed of each block, ||theta(t) - theta(0)|| / t, against its M_pi
            moved = {"A": np.linalg.norm(mA), "Z": float(np.max(_sum_norm(mV, mW))), "B": np.linalg.norm(mB)}
            for b in speed:
                speed[b] = max(speed[b], moved[b] / t)
                r["displacement"] = max(r["displacement"], moved[b] / (t * M_pi[b]))
        h, P = backward_states(X, Y, Params(A, V, W, B))
        nh, nP = np.linalg.norm(h, axis=2), np.linalg.norm(P, axis=2)
        dP, dH = np.linalg.norm(np.diff(P, axis=0), axis=2), np.linalg.norm(np.diff(h, axis=0), axis=2)
        r["h (21)"] = max(r["h (21)"], float(np.max(nh)) / c["R"])
        r["p"] = max(r["p"], _ratio(_log(np.max(nP)), c["log_p"]))
        r["dp (K/L)"] = max(r["dp (K/L)"], _ratio(_log(dP), _log(c["K"] / L * nP[1:])))
        r["dp (K1/L)"] = max(r["dp (K1/L)"], _ratio(_log(dP), _log(c["K1"] / L * nP[1:])))
        r["dh (K e^K M M_X/L)"] = max(r["dh (K e^K M M_X/L)"],
                                      _ratio(_log(dH), math.log(c["K"] * M * M_X / L) + c["K"]))
        r["dh (K1/L)"] = max(r["dh (K1/L)"], _ratio(_log(dH), _log(c["K1"] / L * nh[:-1])))
        dZ = _sum_norm(np.diff(V, axis=0), np.diff(W, axis=0))
        D.append(float(np.max(dZ, initial=0.0)))
        if L > 1:
            dF = _sum_norm(np.diff(fV, axis=0), np.diff(fW, axis=0))
            rhs = np.logaddexp(c["log_alpha"] + _log(dZ), c["log_beta"] - math.log(L))
            r["derivative"] = max(r["derivative"], _ratio(_log(dF), rhs))
            with np.errstate(over="ignore"):
                aT = math.exp(min(c["log_alpha"] + math.log(T), 700.0))  # alpha T, capped (e^700 is already inf-like)
            rhs = np.logaddexp(_log(dZ0), c["log_beta"] + math.log(T / L)) + aT
            if gronwall_terms == "initial-only":  # the control's wrong form; 0 on a weight-tied init
                rhs = np.log(np.maximum(dZ0, 1e-300))
            r["gronwall"] = max(r["gronwall"], _ratio(_log(dZ), rhs))
        if j == steps:
            break
        A += lr * fA
        B += lr * fB
        V += lr * fV
        W += lr * fW
        mA += lr * fA
        mB += lr * fB
        mV += lr * fV
        mW += lr * fW
    return {"ratios": r, "constants": {**c, "M": M, "M0": M0, "M_X": M_X, "M_Y": M_Y, "M_pi": M_pi},
            "D": np.array(D), "T": T, "max_norm": max_norm, "speed": speed}


P7_BOUNDS = ("norm (17)", "norm at t", "displacement", "h (21)", "p", "dp (K/L)", "dp (K1/L)",
             "dh (K e^K M M_X/L)", "dh (K1/L)", "derivative", "gronwall")
P7_GROUPS = {  # the bounds each record asserts, with the printed constants; the rest are recorded
    "implicit-reg/prop-7": ("norm (17)",),
    "implicit-reg/prop-7/displacement": ("displacement",),
    "implicit-reg/prop-7/intermediate": ("h (21)", "p", "dp (K/L)", "dh (K e^K M M_X/L)"),
    "implicit-reg/prop-7/gronwall": ("derivative", "gronwall"),
}


def p7_hunt(runs, names):
    """Max over the clipped-GD runs ``runs`` (pairs (instance, :func:`p7_run` result), the instance being
    (seed, L, init, clip, lr, steps)) of the ratios ``names``; (BoundResult, max per bound, constants seen as rows
    (M, K1, K, log10 alpha, log10 beta))."""
    tracker, per, consts = BoundTracker(), {k: 0.0 for k in P7_BOUNDS}, []
    for inst, res in runs:
        for k, v in res["ratios"].items():
            per[k] = max(per[k], v)
        tracker.add(max(res["ratios"][k] for k in names), 1.0,
                    dict(zip(("seed", "L", "init", "clip", "lr", "steps"), inst)))
        c = res["constants"]
        consts.append((c["M"], c["K1"], c["K"], c["log_alpha"] / math.log(10), c["log_beta"] / math.log(10)))
    return tracker.result(), per, np.array(consts)


def p7_measured(runs, cid):
    """(BoundResult, expected, measured) of a Prop. 7 bound record ``cid`` (a key of :data:`P7_GROUPS`): the
    ratios it asserts, every ratio recorded, the ranges of the constants."""
    result, per, consts = p7_hunt(runs, P7_GROUPS[cid])
    measured = {"ratio_per_bound": per,
                "range_M": [float(consts[:, 0].min()), float(consts[:, 0].max())],
                "range_K1": [float(consts[:, 1].min()), float(consts[:, 1].max())],
                "range_K": [float(consts[:, 2].min()), float(consts[:, 2].max())],
                "range_log10_alpha": [float(consts[:, 3].min()), float(consts[:, 3].max())],
                "range_log10_beta": [float(consts[:, 4].min()), float(consts[:, 4].max())]}
    expected = EXPECTED_P7_DISPLACEMENT if cid.endswith("displacement") else EXPECTED_P7
    return result, expected, measured


#: the box of the worst-case searches of Prop. 7 (:func:`p7_search_sides`): the seed of the data and the init,
#: the depth, the init (0: the paper's weight-tied one, 1: a smooth Lipschitz Z^init), the clip level of pi over
#: three decades, the training time T, the scales of the inputs and of the targets
P7_BOX = (("seed", 0, 2**20, "int"), ("L", 1, 64, "log-int"), ("init", 0, 1, "int"), ("clip", 1e-3, 1.0, "log"),
          ("T", 0.05, 4.0, "log"), ("x_scale", 0.1, 10.0, "log"), ("y_scale", 0.1, 10.0, "log"))
P7_INITS = ("paper", "smooth")


def p7_search_sides(inst, cid, steps=20, rhs_scale=1.0, gronwall_terms="printed"):
    """(largest LHS/RHS of the bounds the Prop. 7 record ``cid`` asserts, ``rhs_scale``) over one clipped-GD run of
    :func:`p7_run` at an instance of :data:`P7_BOX` (``steps`` steps of lr = T / steps): the ratio the search
    maximises, with the right-hand sides multiplied by ``rhs_scale`` (1: the statement; a control lowers it).
    Runs are memoised: the four records' searches share the instances they have in common."""
    res = p7_run(int(inst["seed"]), int(inst["L"]), P7_INITS[inst["init"]], float(inst["clip"]),
                 float(inst["T"]) / steps, int(steps), float(inst["x_scale"]), float(inst["y_scale"]), gronwall_terms)
    return max(res["ratios"][k] for k in P7_GROUPS[cid]), float(rhs_scale)


P7_GRID = np.array([8, 16, 32, 64, 128])
P7_RATE_RUN = {"clip": 0.2, "lr": 0.05, "steps": 40, "every": 4}  # flow time T = 2
EXPECTED_P7_RATE = {"slope": -1.0, "tol": 0.1}


@functools.lru_cache(maxsize=None)
def p7_differences(seed, L, kind, clip, lr, steps, every):
    r"""D(t) = max_k ||Z_{k+1}(t) - Z_k(t)|| (sum-norm) at t = 0, every lr, 2 every lr, ... along clipped GD
    (:func:`theory.implicit.train`, ``method="clipped"``, A and B trained)."""
    X, Y = p7_data(seed)
    p = p7_init(L, seed, kind)
    D = [float(np.max(_sum_norm(np.diff(p.V, axis=0), np.diff(p.W, axis=0))))]
    for _ in range(steps // every):
        p, _ = train(X, Y, p, "tanh", lr=lr, steps=every, method="clipped", clip=clip)
        D.append(float(np.max(_sum_norm(np.diff(p.V, axis=0), np.diff(p.W, axis=0)))))
    return np.array(D)


def p7_rate_table(kind="smooth", grid=P7_GRID, seeds=range(3), run=P7_RATE_RUN):
    """max_{t <= T} D^L(t), one row per seed; and the growth max_t D(t) / D(0) per (seed, L)."""
    Ds = [[p7_differences(s, int(L), kind, **run) for L in grid] for s in seeds]
    table = np.array([[float(np.max(D)) for D in row] for row in Ds])
    with np.errstate(divide="ignore", invalid="ignore"):
        growth = np.array([[float(np.max(D) / D[0]) for D in row] for row in Ds])
    return table, growth, Ds


# ============================================================================ Proposition 8

# An instance of model (3) (sin, V and W trained, A and B trained) where Prop. 8's hypothesis is CERTIFIED:
# the (M, mu)-local PL condition of Definition 1 holds on the whole M-ball around init, for every L, with a
# mu at least the threshold of (22) (see :func:`p8_hypotheses`). Small sizes (n = 3 inputs of norm sqrt q in
# d = 4, d' = 1, q = 5 >= d + d' so F = 0 at init, m = 4) keep the constant K of (22) small; the threshold
# of (22) is proportional to sqrt(l(0)), so the targets are small (scale 1e-10: the dynamics are the
# linearised ones, all measured quantities are relative).
P8_N, P8_D, P8_DOUT, P8_Q, P8_M = 3, 4, 1, 5, 2
P8_BALL = 0.1  # M of Definition 1 and of (22)
P8_XNORM = 0.2 * math.sqrt(P8_Q)  # ||x_i||: a small M_X keeps K of (22) small
P8_TARGET = 1e-6
P8_LR, P8_STEPS, P8_EVERY = 0.1, 400, 10  # flow time 40
P8_GRID = np.array([4, 8, 16, 32, 64])
P8_SEEDS = range(3)
EXPECTED_P8 = {"ratio_max": 1.0}
EXPECTED_P8_BOUNDED = {"slope": 0.0, "tol": 0.1}
EXPECTED_P8_DIFF = {"slope": -1.0, "tol": 0.15}
EXPECTED_P8_CONV = {"rate_fraction_min": 0.9, "r2_min": 0.99}


def p8_data(seed, target_scale=P8_TARGET, n=P8_N, d=P8_D):
    """x_i Gaussian rescaled to ||x_i|| = ``P8_XNORM``, y_i = target_scale N(0, I)."""
    rng = np.random.default_rng(4000 + seed)
    X = rng.standard_normal((n, d))
    X *= P8_XNORM / np.linalg.norm(X, axis=1, keepdims=True)
    return X, target_scale * rng.standard_normal((n, P8_DOUT))


def p8_init(seed, L, m=P8_M, kind="paper"):
    return initialize(P8_D, m, L, np.random.default_rng(200 + seed), q=P8_Q, d_out=P8_DOUT, kind=kind)


def p8_hypotheses(seed, M=P8_BALL, target_scale=P8_TARGET, m=P8_M):
    r"""Prop. 8's hypothesis for model (3) with sigma = sin on this instance: a PL constant certified on
    Definition 1's whole M-ball around init, for every L, and the threshold mu of (22).

    Certificate (valid for every L and every parameter of the ball). For Z_k in the ball,
    :math:`\|\partial_1 f(h, Z_k)\|_2 \le \|V_k\|_2\|W_k\|_2/\sqrt{mq} \le M(\|\bar W\|_2 + M)/\sqrt{mq} =: \kappa`
    (|sin'| <= 1, V^init = 0), so the input Jacobian :math:`J_i = \prod_k (I + \partial_1 f/L)` of sample i
    satisfies :math:`\|J_i - I\|_2 \le (1 + \kappa/L)^L - 1 \le e^\kappa - 1 =: \varepsilon`. With
    :math:`\partial\ell/\partial A = (2/n)\sum_i J_i^\top B^\top r_i x_i^\top` (r_i = F(x_i) - y_i),
    :math:`s_{\min}(B) \ge 1 - M`, :math:`\|B\|_2 \le 1 + M` and n <= d (Lemma 18's product bound),
    :math:`\|\partial\ell/\partial A\|_F \ge (2/n)\,c\,\|R\|_F` with
    :math:`c = (1 - M)s_n(X) - \varepsilon(1 + M)M_X\sqrt n`, hence
    :math:`G \ge \|\partial\ell/\partial A\|_F^2 \ge (4c^2/n)\,\ell` when c > 0: mu_cert = 4c^2/n.

    Threshold (22): :math:`\max(M_B K, M_B M_X, M_A M_X)\,8e^K/M\,\sqrt{\ell(0)}`, with l(0) = mean ||y_i||^2
    for every L (F = 0 at init since q >= d + d'), M_A = ||A^init||_2 + M, M_B likewise, M_Z = ||W^init||_F + M,
    and K = max(K_1, K_2) bounded above (a larger K only raises the threshold) by
    :math:`K_1 \le M_Z^2/(4\sqrt{mq})`, :math:`K_2 \le 1 + M_Z e^{K_1} M_A M_X/\sqrt{mq}` (|sin| <= 1).
    """
    X, Y = p8_data(seed, target_scale)
    p = p8_init(seed, int(P8_GRID[0]), m)
    Wb = p.W[0]  # weight-tied: the same W at every depth and every L
    M_X = float(np.max(np.linalg.norm(X, axis=1)))
    s = math.sqrt(m * P8_Q)
    kappa = M * (np.linalg.norm(Wb, 2) + M) / s
    eps = math.expm1(kappa)
    c = (1.0 - M) * _smin(X) - eps * (1.0 + M) * M_X * math.sqrt(P8_N)
    mu_cert = 4.0 * c**2 / P8_N if c > 0 else 0.0
    MA, MB = np.linalg.norm(p.A, 2) + M, np.linalg.norm(p.B, 2) + M
    MZ = float(np.linalg.norm(Wb)) + M
    K1 = MZ**2 / (4 * s)
    K = max(K1, 1.0 + MZ * math.exp(K1) * MA * M_X / s)
    l0 = float(np.mean(np.sum(Y**2, axis=1)))
    mu22 = max(MB * K, MB * M_X, MA * M_X) * 8.0 * math.exp(K) / M * math.sqrt(l0)
    return {"mu_cert": float(mu_cert), "mu22": float(mu22), "K": float(K), "kappa": float(kappa), "c": float(c),
            "M": M, "n_le_d": P8_N <= P8_D}


def p8_hypotheses_hold(hyps):
    """Prop. 8's hypothesis on every instance: n <= d (the certificate's rank condition), c > 0 and the
    certified PL constant at least the threshold of (22)."""
    return all(h["n_le_d"] and h["c"] > 0 and h["mu_cert"] >= h["mu22"] for h in hyps)


@functools.lru_cache(maxsize=None)
def p8_run(seed, L, lr=P8_LR, steps=P8_STEPS, every=P8_EVERY, m=P8_M, activation="sin", target_scale=P8_TARGET,
           depth_factor=True, kind="paper"):
    r"""Unclipped GD of Eq. (4) from the paper's init; the PL ratio G/l of Definition 1 at every step.

    Returns t, losses, G (per step), and at every ``every`` steps the snapshots (A, V, W, B).
    ``depth_factor=False`` drops the factor L of the residual learning rate; ``kind="iid"`` draws
    independent W_k (negative controls)."""
    X, Y = p8_data(seed, target_scale)
    p = p8_init(seed, L, m, kind)
    A, V, W, B = (a.copy() for a in (p.A, p.V, p.W, p.B))
    f = L if depth_factor else 1
    losses, G, snaps = np.empty(steps + 1), np.empty(steps + 1), []
    for j in range(steps + 1):
        losses[j], g = loss_and_gradient(X, Y, Params(A, V, W, B), activation)
        G[j] = np.sum(g.A**2) + L * (np.sum(g.V**2) + np.sum(g.W**2)) + np.sum(g.B**2)
        if j % every == 0:
            snaps.append((A.copy(), V.copy(), W.copy(), B.copy()))
        if j < steps:
            A -= lr * g.A
            B -= lr * g.B
            V -= lr * f * g.V
            W -= lr * f * g.W
    return lr * np.arange(steps + 1), losses, G, tuple(snaps)


def p8_distance(s, r):
    """Blockwise distance max(||A - A'||_F, max_k ||Z_k - Z_k'||, ||B - B'||_F) (sum-norm on Z_k)."""
    return max(np.linalg.norm(s[0] - r[0]), float(np.max(_sum_norm(s[1] - r[1], s[2] - r[2]))),
               np.linalg.norm(s[3] - r[3]))


def p8_loss_ratios(t, losses, G):
    r"""l_j / (exp(-mu_j t_j) l_0), j >= 1, with mu_j = min_{i <= j} G_i / l_i the PL ratio certified on the
    sampled trajectory over [0, t_j] (Prop. 8 (v)); and the same with the trapezoidal integral of G/l.

    Both ends of each GD step count: with the left end only, the first step (G/l = 8..12 at init, the fast
    A/B phase, lr G/l ~ 1) is a discretisation artefact of GD, not a property of the flow."""
    mu = G / losses
    mu_hat = np.minimum.accumulate(mu)[1:]
    lr = t[1] - t[0]
    certified = losses[1:] / (np.exp(-mu_hat * t[1:]) * losses[0])
    integrated = losses[1:] / (np.exp(-np.cumsum(0.5 * lr * (mu[:-1] + mu[1:]))) * losses[0])
    return certified, integrated, mu_hat


def p8_table(quantity, grid=P8_GRID, seeds=P8_SEEDS, **kw):
    """sup over the snapshots of ``quantity(snapshots)`` per (seed, L)."""
    return np.array([[quantity(p8_run(s, int(L), **kw)[3]) for L in grid] for s in seeds])


def p8_sup_displacement(snaps):
    return max(p8_distance(s, snaps[0]) for s in snaps)


def p8_sup_difference(snaps):
    return max(float(np.max(_sum_norm(np.diff(s[1], axis=0), np.diff(s[2], axis=0)))) for s in snaps)


def p8_convergence(t, losses, G, snaps, every=P8_EVERY, window=(0.25, 0.9)):
    """Fitted exponential decay rate of the increments ||theta(t + dt) - theta(t)|| (dt = ``every`` steps) on
    the window of flow times, against half the certified PL ratio. Increments decay like theta_inf - theta(t)
    when the convergence is exponential, and need no estimate of theta_inf."""
    ts = t[::every][: len(snaps) - 1]
    inc = np.array([p8_distance(a, b) for a, b in zip(snaps[1:], snaps[:-1])])
    T = t[-1]
    keep = (ts >= window[0] * T) & (ts <= window[1] * T) & (inc > 0)
    y = np.log(inc[keep])
    slope, icpt = np.polyfit(ts[keep], y, 1)
    r2 = 1.0 - np.sum((y - slope * ts[keep] - icpt) ** 2) / np.sum((y - y.mean()) ** 2)
    mu_hat = float(np.min(G / losses))
    return {"rate": float(-slope), "half_mu": mu_hat / 2, "r2": float(r2), "ts": ts, "dist": inc}


#: the box of the worst-case searches of Prop. 8 on model (3) (:func:`p8_search_sides`): the seed of the data and
#: the init, the depth up to 128, the width, the scale of the targets and the radius M of the ball over decades;
#: an instance where the PL certificate does not cover mu of (22) lies outside the hypotheses (refused)
P8_BOX = (("seed", 0, 2**20, "int"), ("L", 1, 128, "log-int"), ("m", 1, 8, "int"),
          ("target_scale", 1e-10, 1e-4, "log"), ("M", 1e-3, 0.5, "log"))


def p8_search_sides(inst, bound="loss", rhs_scale=1.0, convergence_rate="mu/2", lr=P8_LR, steps=P8_STEPS,
                    every=P8_EVERY):
    r"""(LHS, RHS) of a conclusion of Prop. 8 on one GD run of :func:`p8_run` at an instance of :data:`P8_BOX`, or
    None where the hypothesis is not certified (:func:`p8_hypotheses_hold`).

    ``bound="loss"``: :math:`\ell(t)` against :math:`e^{-\mu_{cert} t}\ell(0)` at the worst t (among the times where
    :math:`\mu_{cert} t \le` :data:`P8_EXPONENT_WINDOW`), times ``rhs_scale``; ``"convergence"``: the fitted decay
    rate of the parameters' increments must reach :math:`\hat\mu/2` (``convergence_rate="mu"``: :math:`\hat\mu`, a
    wrong rate for a control) up to the fraction of :data:`EXPECTED_P8_CONV`: LHS = :math:`\hat\mu/2`, RHS = the
    fitted rate (a non-positive rate gives RHS 1e-300, a failed bound), the ratio's bound being 1 /
    ``rate_fraction_min``."""
    h = p8_hypotheses(int(inst["seed"]), M=float(inst["M"]), target_scale=float(inst["target_scale"]),
                      m=int(inst["m"]))
    if not p8_hypotheses_hold([h]):
        return None
    t, losses, G, snaps = p8_run(int(inst["seed"]), int(inst["L"]), lr, steps, every, int(inst["m"]),
                                 target_scale=float(inst["target_scale"]))
    if bound == "loss":
        read = h["mu_cert"] * t[1:] <= P8_EXPONENT_WINDOW
        lhs, rhs = losses[1:][read], losses[0] * np.exp(-h["mu_cert"] * t[1:][read])
        j = int(np.argmax(lhs / rhs))
        return float(lhs[j]), float(rhs_scale * rhs[j])
    r = p8_convergence(t, losses, G, snaps, every=every)
    lhs = r["half_mu"] * (2.0 if convergence_rate == "mu" else 1.0)
    return float(lhs), max(float(r["rate"]), 1e-300)


def p8_convergence_predicate(results, expected=EXPECTED_P8_CONV):
    """(ok, message): every run's parameters converge at least at fraction * mu/2, with an exponential fit."""
    frac = min(r["rate"] / r["half_mu"] for r in results)
    r2 = min(r["r2"] for r in results)
    ok = frac >= expected["rate_fraction_min"] and r2 >= expected["r2_min"]
    return bool(ok), (f"min over runs of (fitted decay rate of ||theta(t + dt) - theta(t)||) / (mu_hat/2) = {frac:.3f} "
                      f"(>= {expected['rate_fraction_min']}), min r^2 {r2:.4f} (>= {expected['r2_min']})")


# ---------------------------------------------------------------------------- Prop. 8 with a certified PL

# An instance of the general model (12) where the hypothesis of Prop. 8 is certified in the whole ball:
# f = 0 (Z^init = 0; the toolkit's network with V = W = 0 is this model, since sigma(0) = 0 keeps the
# gradients of V and W at 0), so the network is F(x) = B A x. With n <= d, B in the M-ball around
# B^init = (0, I) and Lemma 18: G >= ||dl/dA||^2 >= (4/n) s_min(B)^2 s_min(X)^2 l >= (4/n)(1 - M)^2 s_min(X)^2 l,
# a PL constant on the ball for every L; (22) with K = 0 asks for max(M_B, M_A) M_X (8/M) sqrt(l(0)).
P8C = {"n": 4, "d": 8, "d_out": 2, "q": 10, "M": 0.5, "target_scale": 1e-3, "L": 4, "lr": 0.02, "steps": 1000}


@functools.lru_cache(maxsize=None)
def p8_certified(seed, target_scale=P8C["target_scale"], M=P8C["M"], corrected_norms=False):
    """GD on the f = 0 instance; returns the certificate, mu of (22), the trajectory of A, B and the losses."""
    c = P8C
    rng = np.random.default_rng(5000 + seed)
    X = rng.standard_normal((c["n"], c["d"]))
    X *= np.sqrt(c["q"]) / np.linalg.norm(X, axis=1, keepdims=True)
    Y = target_scale * rng.standard_normal((c["n"], c["d_out"]))
    p0 = initialize(c["d"], 1, c["L"], rng, q=c["q"], d_out=c["d_out"])
    p0 = Params(p0.A, p0.V, np.zeros_like(p0.W), p0.B)  # Z^init = 0: f = 0 along the whole flow
    M_X = float(np.max(np.linalg.norm(X, axis=1)))
    M_A, M_B = np.linalg.norm(p0.A, 2) + M, np.linalg.norm(p0.B, 2) + M
    l0 = float(np.mean(np.sum(Y**2, axis=1)))
    mu22 = max(M_B * 0.0, M_B * M_X, M_A * M_X) * 8.0 / M * math.sqrt(l0)  # (22) with K = 0
    mu_cert = 4.0 / c["n"] * (1.0 - M) ** 2 * _smin(X.T) ** 2
    A, B, losses, p = [p0.A], [p0.B], [], p0
    for _ in range(c["steps"]):
        p, ls = train(X, Y, p, "sin", lr=c["lr"], steps=1)
        losses.append(ls[0])
        A.append(p.A)
        B.append(p.B)
    losses.append(ls[1])
    if not (np.all(p.V == 0) and np.all(p.W == 0)):  # f must stay 0 along the run
        raise RuntimeError("the f = 0 instance of Prop. 8 left f = 0 (V or W moved)")
    if corrected_norms:  # the corrected (i) in the Frobenius norm, for the control of the erratum record
        M_A, M_B = np.linalg.norm(p0.A) + M, np.linalg.norm(p0.B) + M
    return {"mu22": mu22, "mu_cert": mu_cert, "A": np.array(A), "B": np.array(B), "losses": np.array(losses),
            "A0": p0.A, "B0": p0.B, "M": M, "M_A": M_A, "M_B": M_B, "t": c["lr"] * np.arange(c["steps"] + 1)}


#: the exponential bounds of Prop. 8 are read while e^{-mu t} >= 1e-20: below, the loss of float64 GD stalls at its
#: rounding floor (about eps^2 l(0)) and the parameters jitter by rounding at each step, so that neither side of
#: l(t) <= e^{-mu t} l(0) nor of ||theta_inf - theta(t)|| <= (M/2) e^{-mu t/2} is resolved any more
P8_EXPONENT_WINDOW = 20.0 * math.log(10.0)


def p8_certified_sides(r):
    """(name, LHS, RHS) of Prop. 8's conclusions with its printed constants (and (i) corrected), f = 0 instance;
    the exponential bounds (v), (iv) at the times where mu t <= :data:`P8_EXPONENT_WINDOW`."""
    A, B, A0, B0, M, t = r["A"], r["B"], r["A0"], r["B0"], r["M"], r["t"]
    nA = np.linalg.norm(A - A[-1], axis=(1, 2))
    nB = np.linalg.norm(B - B[-1], axis=(1, 2))
    read = r["mu22"] * t <= P8_EXPONENT_WINDOW
    return [
        ("(v) loss", r["losses"][1:][read[1:]], r["losses"][0] * np.exp(-r["mu22"] * t[1:][read[1:]])),
        ("ball A", np.linalg.norm(A - A0, axis=(1, 2)), np.full(t.size, M / 2)),
        ("ball B", np.linalg.norm(B - B0, axis=(1, 2)), np.full(t.size, M / 2)),
        ("(iv) A", nA[read], M / 2 * np.exp(-r["mu22"] * t[read] / 2)),
        ("(iv) B", nB[read], M / 2 * np.exp(-r["mu22"] * t[read] / 2)),
        ("(i) ||A||_2", np.linalg.norm(A, 2, axis=(1, 2)), np.full(t.size, r["M_A"])),
        ("(i) ||B||_2", np.linalg.norm(B, 2, axis=(1, 2)), np.full(t.size, r["M_B"])),
        ("(i) ||A||_F vs ||A^init||_F + M", np.linalg.norm(A, axis=(1, 2)), np.full(t.size, np.linalg.norm(A0) + M)),
        ("(i) ||B||_F vs ||B^init||_F + M", np.linalg.norm(B, axis=(1, 2)), np.full(t.size, np.linalg.norm(B0) + M)),
    ]


def p8_printed_norm_sides(r):
    """Prop. 8 (i) as printed: ||A(t)||_F <= ||A^init||_2 + M, ||B(t)||_F <= ||B^init||_2 + M."""
    return [("printed ||A||_F", np.linalg.norm(r["A"], axis=(1, 2)), np.full(r["t"].size, r["M_A"])),
            ("printed ||B||_F", np.linalg.norm(r["B"], axis=(1, 2)), np.full(r["t"].size, r["M_B"]))]


#: the box of the worst-case search of the f = 0 instance of Prop. 8 (:func:`p8_certified_search_sides`): the seed,
#: the scale of the targets and the radius M of the ball over decades (M < 1: the certificate needs 1 - M > 0)
P8C_BOX = (("seed", 0, 2**20, "int"), ("target_scale", 1e-6, 1e-1, "log"), ("M", 1e-3, 0.95, "log"))


def p8_certified_search_sides(inst, rhs_scale=1.0):
    """(LHS, RHS) of the conclusion of Prop. 8 (:func:`p8_certified_sides`, printed constants, (i) corrected) with
    the largest ratio over t on the f = 0 run at an instance of :data:`P8C_BOX`, the right-hand side times
    ``rhs_scale``; None where the PL certificate is below mu of (22) (outside the hypothesis)."""
    r = p8_certified(int(inst["seed"]), target_scale=float(inst["target_scale"]), M=float(inst["M"]))
    if r["mu_cert"] < r["mu22"]:
        return None
    best = None
    for _, lhs, rhs in p8_certified_sides(r):
        lhs, rhs = np.broadcast_arrays(np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float))
        j = int(np.argmax(lhs / rhs))
        if best is None or lhs.flat[j] / rhs.flat[j] > best[0] / best[1]:
            best = (float(lhs.flat[j]), float(rhs.flat[j]))
    return best[0], rhs_scale * best[1]


P8C_SEEDS = range(3)


def _p8c_tracker(sides_of, seeds=P8C_SEEDS, **kw):
    tracker, per = BoundTracker(), {}
    for s in seeds:
        for name, lhs, rhs in sides_of(p8_certified(s, **kw)):
            per[name] = max(per.get(name, 0.0), tracker.add(lhs, rhs, {"seed": s, "bound": name}))
    return tracker.result(), per


def p8_corrected_norm_sides(r):
    """Prop. 8 (i) corrected: ||A(t)||_2 <= ||A^init||_2 + M and ||A(t)||_F <= ||A^init||_F + M (same for B)."""
    A, B, A0, B0, M, t = r["A"], r["B"], r["A0"], r["B0"], r["M"], r["t"]
    return [("||A||_2 <= ||A^init||_2 + M", np.linalg.norm(A, 2, axis=(1, 2)), np.full(t.size, np.linalg.norm(A0, 2) + M)),
            ("||B||_2 <= ||B^init||_2 + M", np.linalg.norm(B, 2, axis=(1, 2)), np.full(t.size, np.linalg.norm(B0, 2) + M)),
            ("||A||_F <= ||A^init||_F + M", np.linalg.norm(A, axis=(1, 2)), np.full(t.size, np.linalg.norm(A0) + M)),
            ("||B||_F <= ||B^init||_F + M", np.linalg.norm(B, axis=(1, 2)), np.full(t.size, np.linalg.norm(B0) + M))]


# ============================================================================ experiments (configs, measures, verdicts)
#
# Lemma 18, the bounds (35)-(36) of Prop. 11 and the bounds of Prop. 7 are checked over Hypothesis-drawn
# instances and by worst-case searches, registered in :mod:`.searches`; :func:`lemma18_sides`,
# :func:`p11_bound_sides`, :func:`p7_run` and :func:`p7_measured` compute one instance's sides and aggregate the
# runs, the ``*_search_sides`` functions give a search's (LHS, RHS) at one instance of its box.


def p8_hypotheses_measured(seeds=P8_SEEDS, **kw):
    """(ok, hyps, measured): Prop. 8's hypothesis certified on every seed (:func:`p8_hypotheses_hold`) and the
    figures the records carry (certificate, mu of (22), their ratio, K of (22))."""
    hyps = [p8_hypotheses(s, **kw) for s in seeds]
    measured = {"pl_certificate_on_ball": [h["mu_cert"] for h in hyps], "mu_of_eq22": [h["mu22"] for h in hyps],
                "certificate_over_mu22": [h["mu_cert"] / h["mu22"] for h in hyps], "K_of_eq22": [h["K"] for h in hyps]}
    return p8_hypotheses_hold(hyps), hyps, measured


@dataclass(frozen=True)
class Lemma20Config(Config):
    """Grid of :func:`measure_lemma20` (exact, through the chi-square law of ||W||_F^2)."""

    qm_max: int = field(Int(low=1), 400, "q m runs over 1 .. qm_max.")
    mw_max: float = field(Real(math.sqrt(2.0), closed="neither"), 4.0, "M_W runs over `mw_points` points of "
                          "[sqrt 2, mw_max] (the lemma's range M_W >= sqrt 2).")
    mw_points: int = field(Int(low=2), 60, "Number of values of M_W.")
    divisor: float = field(Real(0, closed="neither"), 16.0, "The 16 of exp(-(M_W^2 - 1) qm / 16) (a control "
                           "replaces it), on the grid and in the worst-case search.")
    search_budget: int = search_budget_field(100)
    search_seed: int = search_seed_field()


@dataclass(frozen=True)
class Lemma20Result:
    """``ratios[i, j]`` = P(||W||_F > M_W sqrt(qm)) / bound at (qm[i], mw[j]); ``bound``: the BoundResult of the grid,
    with the worst-case search over :data:`LEMMA20_BOX` attached."""

    qm: np.ndarray
    mw: np.ndarray
    ratios: np.ndarray
    bound: object


def measure_lemma20(config: Lemma20Config) -> Lemma20Result:
    c = config
    qm, mw = np.arange(1, c.qm_max + 1), np.linspace(np.sqrt(2.0), c.mw_max, c.mw_points)
    search = search_worst_case(functools.partial(lemma20_search_sides, divisor=c.divisor), box(LEMMA20_BOX),
                               budget=c.search_budget, seed=c.search_seed)
    return Lemma20Result(qm, mw, lemma20_ratios(qm, mw, c.divisor),
                         lemma20_result(qm, mw, c.divisor).with_search(search))


def lemma20_verdict(result: Lemma20Result) -> Verdict:
    """A bound, lemma-20: the exact failure probability P(||W||_F > M_W sqrt(qm)) over exp(-(M_W^2 - 1) qm / 16),
    max <= 1 over the grid (recorded in ``measured["grid"]``) and over the worst-case search."""
    return with_measured(bound_verdict(result.bound, EXPECTED_L20),
                         grid={"qm": [int(result.qm[0]), int(result.qm[-1])],
                               "M_W": [float(result.mw[0]), float(result.mw[-1])], "points": result.ratios.size})


def _l20_cases(value):
    """Lemma20MCConfig.cases: a non-empty tuple of (q, m, M_W) with integers q, m >= 1 and M_W >= sqrt 2."""
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple):
        raise TypeError("a tuple")
    if not value:
        raise ValueError("non-empty")
    out = []
    for case in value:
        case = tuple(case) if isinstance(case, list) else case
        if not isinstance(case, tuple) or len(case) != 3:
            raise ValueError("triples")
        q, m, mw = case
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in (q, m)):
            raise TypeError("integers q, m")
        if isinstance(mw, bool) or not isinstance(mw, (int, float, np.integer, np.floating)):
            raise TypeError("a number M_W")
        if q < 1 or m < 1 or not math.isfinite(mw) or mw < math.sqrt(2.0) - 1e-15:
            raise ValueError("in range")
        out.append((int(q), int(m), float(mw)))
    return tuple(out)


@dataclass(frozen=True)
class Lemma20MCConfig(Config):
    """Sizes of :func:`measure_lemma20_mc`."""

    cases: tuple = field(Custom(_l20_cases, "a non-empty tuple of (q, m, M_W) with integers q, m >= 1 and M_W >= "
                                "sqrt 2 (Lemma 20's range)", type_name="tuple of (int, int, float)",
                                invalid=[(3, TypeError), ((), ValueError), (((1, 1, 1.0),), ValueError),
                                         (((1.5, 1, 2.0),), TypeError)],
                                boundary=[((1, 1, math.sqrt(2.0)),)]),
                         L20_MC, "Shapes and radii of the cases.")
    runs: int = field(Int(low=1), L20_RUNS, "Gaussian draws per case (seed = index of the case).")


@dataclass(frozen=True)
class Lemma20MCResult:
    """Per case: ``rows`` (q, m, M_W, frequency, CI, exact tail, bound) and the FrequencyResults."""

    rows: list
    results: list


def measure_lemma20_mc(config: Lemma20MCConfig) -> Lemma20MCResult:
    rows, results = [], []
    for i, (q, m, mw) in enumerate(config.cases):
        delta = math.exp(-(mw**2 - 1) * q * m / 16)
        res = frequency(lemma20_mc(q, m, mw, runs=config.runs, seed=i), delta=delta)
        exact = float(chi2.sf(mw**2 * q * m, q * m))
        rows.append({"q": q, "m": m, "M_W": float(mw), "freq": res.freq, "ci": list(res.ci), "exact": exact,
                     "bound": delta})
        results.append(res)
    return Lemma20MCResult(rows, results)


def lemma20_mc_verdict(result: Lemma20MCResult) -> Verdict:
    """A frequency, lemma-20/monte-carlo: the frequency of ||W||_F > M_W sqrt(qm) at the case where the bound is
    tightest against delta = exp(-(M_W^2 - 1) qm / 16) is <= delta; the sampler must be right (the exact
    chi-square tail inside every Clopper-Pearson interval, ``exact_inside_ci``), else the verdict fails."""
    rows = result.rows
    consistent = all(r["ci"][0] <= r["exact"] <= r["ci"][1] for r in rows)
    worst = max(range(len(rows)), key=lambda i: rows[i]["freq"] / rows[i]["bound"])
    return require(frequency_verdict(result.results[worst], {"delta": rows[worst]["bound"]}), consistent,
                   f"chi-square tail outside the Monte-Carlo CI: {rows}", rows=rows, exact_inside_ci=consistent)


@dataclass(frozen=True)
class Prop11Config(Config):
    """Sizes of :func:`measure_prop11` (g(u, theta) = theta tanh(u), u in R^2, Theta(s) = T0 + T1 sin(omega s + phi))."""

    grid: tuple = field(Ints(low=2, min_len=2, increasing=True), tuple(int(L) for L in P11_GRID), "Depths L.")
    seeds: tuple = seeds_field((0, 1, 2), "Problems (seed s).")
    scale: float = field(Real(0, closed="neither"), 1.0, "Size of T0, T1.")
    omega: float = field(Real(0, closed="neither"), 3.0, "Frequency of Theta.")
    index_map: str = field(Choice("paper", "reversed"), "paper", "\"paper\" (theta_{k+1} = Theta(k/(L-1))) or "
                           "\"reversed\" (a wrong map; control).")
    noise: float = field(Real(0), 0.0, "i.i.d. N(0, noise^2) added to the theta_k (0: Prop. 11's hypothesis; > 0 "
                         "violates it).")


@dataclass(frozen=True)
class Prop11Result:
    """``table`` (seeds x depths) = max_k ||U(k/L) - u_k^L||."""

    grid: np.ndarray
    table: np.ndarray


def measure_prop11(config: Prop11Config) -> Prop11Result:
    c = config
    grid = np.array(c.grid)
    return Prop11Result(grid, p11_rate_table(grid, c.seeds, scale=c.scale, omega=c.omega, index_map=c.index_map,
                                             noise=c.noise))


def prop11_fit(result: Prop11Result):
    """The fit of the largest gap max_k ||U(k/L) - u_k^L|| against L (floor 1e-11)."""
    return fit_rate(result.grid, result.table, floor=1e-11)


def prop11_verdict(result: Prop11Result) -> Verdict:
    """A rate, prop-11: slope -1 of the largest gap; ``measured`` adds L times the gap."""
    fit = prop11_fit(result)
    return with_measured(rate_verdict(fit, EXPECTED_P11_RATE, grid_label="L"),
                         L_times_gap=(fit.mean_errors() * result.grid).tolist())


@dataclass(frozen=True)
class Prop7RateConfig(Config):
    """Sizes of :func:`measure_prop7_rate`: clipped GD (A and B trained) of model (3), tanh, n = 8, d = d' = 2,
    q = m = 4, from the smooth init (Z^init Lipschitz, App. A) and from the weight-tied one."""

    grid: tuple = field(Ints(low=2, min_len=2, increasing=True), tuple(int(L) for L in P7_GRID), "Depths L.")
    seeds: tuple = seeds_field((0, 1, 2), "Seeds of the data and the initialisation.")
    clip: float = field(Real(0, closed="neither"), P7_RATE_RUN["clip"], "Clip level of pi.")
    lr: float = field(Real(0, closed="neither"), P7_RATE_RUN["lr"], "Learning rate.")
    steps: int = field(Int(low=1), P7_RATE_RUN["steps"], "GD steps (flow time lr x steps).")
    every: int = field(Int(low=1), P7_RATE_RUN["every"], "Steps between two evaluations of max_k ||Z_{k+1} - Z_k||.")

    @property
    def run(self):
        return {"clip": self.clip, "lr": self.lr, "steps": self.steps, "every": self.every}


@dataclass(frozen=True)
class Prop7RateResult:
    """``table`` / ``tied`` (seeds x depths) = max_{t <= T} max_k ||Z_{k+1}(t) - Z_k(t)|| from the smooth / tied
    init; ``growth`` = max_t D(t) / D(0); ``Ds`` / ``Dt`` the trajectories D(t); ``log10_alpha_T`` the printed
    exponent alpha T of the Gronwall bound at these runs."""

    config: Prop7RateConfig = _field(repr=False)
    grid: np.ndarray
    table: np.ndarray
    growth: np.ndarray
    Ds: list
    tied: np.ndarray
    Dt: list
    log10_alpha_T: float


def measure_prop7_rate(config: Prop7RateConfig) -> Prop7RateResult:
    c = config
    grid = np.array(c.grid)
    table, growth, Ds = p7_rate_table("smooth", grid, c.seeds, c.run)
    tied, _, Dt = p7_rate_table("paper", grid, c.seeds, c.run)
    T = c.lr * c.steps
    X, Y = p7_data(0)
    p0 = p7_init(int(grid[0]), 0, "smooth")
    M = (max(np.linalg.norm(p0.A), p7_init_sup(0, "smooth"), np.linalg.norm(p0.B))
         + T * 2 * c.clip * math.sqrt(P7_Q * P7_M))
    k = p7_constants(M, float(np.max(np.linalg.norm(X, axis=1))), float(np.max(np.linalg.norm(Y, axis=1))))
    return Prop7RateResult(c, grid, table, growth, Ds, tied, Dt, float((k["log_alpha"] + math.log(T)) / math.log(10)))


def prop7_rate_fits(result: Prop7RateResult):
    """(fit from the smooth init, fit from the weight-tied init) of max_{t <= T} max_k ||Z_{k+1} - Z_k|| against L."""
    return fit_rate(result.grid, result.table), fit_rate(result.grid, result.tied)


def prop7_rate_verdict(result: Prop7RateResult) -> Verdict:
    """A rate, prop-7/rate: slope -1 from the smooth init; ``measured`` adds the growth in t, the printed exponent
    alpha T and the weight-tied init's fit."""
    fit, fit_tied = prop7_rate_fits(result)
    return with_measured(rate_verdict(fit, EXPECTED_P7_RATE, grid_label="L"),
                         L_times_max_difference=(fit.mean_errors() * result.grid).tolist(),
                         max_growth_over_T=float(np.max(result.growth)), log10_alpha_T=result.log10_alpha_T,
                         tied_init_slope=float(fit_tied.slope), tied_init_ci=list(fit_tied.ci),
                         tied_init_L_times_max_difference=(fit_tied.mean_errors() * result.grid).tolist())


@dataclass(frozen=True)
class Prop8Config(Config):
    """Sizes of :func:`measure_prop8`: unclipped GD of Eq. (4) on model (3) with sigma = sin (n = 3, d = 4, d' = 1,
    q = 5), where Prop. 8's hypothesis is certified on Definition 1's M-ball (:func:`p8_hypotheses`)."""

    grid: tuple = field(Ints(low=1, min_len=2, increasing=True), tuple(int(L) for L in P8_GRID), "Depths L.")
    seeds: tuple = seeds_field((0, 1, 2), "Seeds of the data and the initialisation.")
    M: float = field(Real(0, 1, closed="neither"), P8_BALL, "Radius of the ball of Definition 1 and of (22) (< 1: the "
                     "certificate needs s_min(B) >= 1 - M > 0).")
    target_scale: float = field(Real(0, closed="neither"), P8_TARGET, "Scale of the targets (the threshold of (22) is "
                                "proportional to sqrt(l(0))).")
    m: int = field(Int(low=1), P8_M, "Residual width.")
    lr: float = field(Real(0, closed="neither"), P8_LR, "Learning rate.")
    steps: int = field(Int(low=1), P8_STEPS, "GD steps (flow time lr x steps).")
    every: int = field(Int(low=1), P8_EVERY, "Steps between two parameter snapshots.")
    search_budget: int = search_budget_field(80)
    search_seed: int = search_seed_field()
    search_rhs_scale: float = field(Real(0, closed="neither"), 1.0, "Multiplies the right-hand side of the loss "
                                    "bound (v) in its worst-case search (1: the statement; a negative control "
                                    "lowers it).")
    convergence_rate: str = field(Choice("mu/2", "mu"), "mu/2", "The rate the parameters' convergence is measured "
                                  "against in its worst-case search: the statement's mu/2, or \"mu\" (a wrong "
                                  "rate: a negative control).")


@dataclass(frozen=True)
class Prop8Result:
    """``runs[(seed, L)]`` = (t, losses, G, snapshots) of :func:`p8_run`; ``hyps`` per seed; ``hypotheses_ok``;
    ``hypotheses_measured``: the certificate against (22); ``searches``: the worst-case searches over
    :data:`P8_BOX` of the loss bound (``"loss"``) and of the convergence rate (``"convergence"``)."""

    config: Prop8Config = _field(repr=False)
    grid: np.ndarray
    runs: dict
    hyps: list
    hypotheses_ok: bool
    hypotheses_measured: dict
    searches: dict = None


def measure_prop8(config: Prop8Config) -> Prop8Result:
    c = config
    ok, hyps, hm = p8_hypotheses_measured(c.seeds, M=c.M, target_scale=c.target_scale, m=c.m)
    runs = {(s, int(L)): p8_run(s, int(L), lr=c.lr, steps=c.steps, every=c.every, m=c.m, target_scale=c.target_scale)
            for s in c.seeds for L in c.grid}
    run = {"lr": c.lr, "steps": c.steps, "every": c.every}
    # both searches share the seed and the box, hence their exploration points (the runs are memoised)
    searches = {
        "loss": search_worst_case(functools.partial(p8_search_sides, bound="loss", rhs_scale=c.search_rhs_scale, **run),
                                  box(P8_BOX), budget=c.search_budget, seed=c.search_seed),
        "convergence": search_worst_case(functools.partial(p8_search_sides, bound="convergence",
                                                           convergence_rate=c.convergence_rate, **run),
                                         box(P8_BOX), budget=c.search_budget, seed=c.search_seed)}
    return Prop8Result(c, np.array(c.grid), runs, hyps, ok, hm, searches)


def prop8_loss_verdict(result: Prop8Result) -> Verdict:
    """A bound, prop-8: l(t) <= exp(-mu_cert t) l(0) on every run; ``measured`` adds the ratios at mu of (22), at
    the trajectory's smallest PL ratio and in the integrated form."""
    c = result.config
    tracker, traj, integ, at22, finals = BoundTracker(), 0.0, 0.0, 0.0, []
    for s, h in zip(c.seeds, result.hyps):
        for L in result.grid:
            t, losses, G, _ = result.runs[s, int(L)]
            read = h["mu_cert"] * t[1:] <= P8_EXPONENT_WINDOW
            tracker.add(losses[1:][read], losses[0] * np.exp(-h["mu_cert"] * t[1:][read]), {"seed": s, "L": int(L)})
            cert, integrated, mu_hat = p8_loss_ratios(t, losses, G)
            traj, integ = max(traj, float(np.max(cert))), max(integ, float(np.max(integrated)))
            at22 = max(at22, float(np.max(losses[1:] / (losses[0] * np.exp(-h["mu22"] * t[1:])))))
            finals.append(float(losses[-1] / losses[0]))
    bound = tracker.result()
    if result.searches is not None:
        bound = bound.with_search(result.searches["loss"])
    return with_measured(bound_verdict(bound, EXPECTED_P8),
                         final_loss_over_initial=[min(finals), max(finals)], max_ratio_at_mu_of_eq22=at22,
                         max_ratio_at_trajectory_min_pl_ratio=traj, max_ratio_integrated_form=integ)


def _p8_table(result, quantity):
    return np.array([[quantity(result.runs[s, int(L)][3]) for L in result.grid] for s in result.config.seeds])


def prop8_bounded_fit(result: Prop8Result):
    """The fit of sup_t max-block ||theta(t) - theta(0)|| against L."""
    return fit_rate(result.grid, _p8_table(result, p8_sup_displacement))


def prop8_bounded_verdict(result: Prop8Result) -> Verdict:
    """A rate, prop-8/bounded: the sup over t of the displacement does not grow with L (slope 0), and the runs
    stay in the M-ball (``max_displacement <= M``)."""
    table = _p8_table(result, p8_sup_displacement)
    M = result.config.M
    return rates_verdict({"L": fit_rate(result.grid, table)}, EXPECTED_P8_BOUNDED,
                         measured={"max_displacement": float(np.max(table)),
                                   "max_displacement_over_M": float(np.max(table) / M)},
                         thresholds={"max_displacement_max": M},
                         context="sup_t max-block ||theta(t) - theta(0)|| against L, and inside the M-ball")


def prop8_differences_fit(result: Prop8Result):
    """The fit of sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| against L."""
    return fit_rate(result.grid, _p8_table(result, p8_sup_difference))


def prop8_differences_verdict(result: Prop8Result) -> Verdict:
    """A rate, prop-8/differences: sup_t max_k ||Z_{k+1}(t) - Z_k(t)|| = O(1/L)."""
    fit = prop8_differences_fit(result)
    return with_measured(rate_verdict(fit, EXPECTED_P8_DIFF, grid_label="L"),
                         L_times_sup_difference=(fit.mean_errors() * result.grid).tolist())


def prop8_convergence_runs(result: Prop8Result):
    """The per-run exponential fits of :func:`p8_convergence` (seeds x depths, in that order)."""
    c = result.config
    return [p8_convergence(*result.runs[s, int(L)], every=c.every) for s in c.seeds for L in result.grid]


def prop8_convergence_verdict(result: Prop8Result, expected=EXPECTED_P8_CONV) -> Verdict:
    """A bound, prop-8/convergence: every run's parameters converge at least at ``rate_fraction_min`` x mu/2
    (fitted decay rate of ||theta(t + dt) - theta(t)|| over mu_hat/2, min over runs), with an exponential fit
    (min r^2 >= ``r2_min``); and over the worst-case search of :data:`P8_BOX`, (mu_hat/2) / rate <= 1 /
    ``rate_fraction_min`` (the same threshold, as a ratio)."""
    results = prop8_convergence_runs(result)
    measured = {"rate_fraction": min(r["rate"] / r["half_mu"] for r in results), "r2": min(r["r2"] for r in results),
                "rates": [r["rate"] for r in results], "half_mu": [r["half_mu"] for r in results],
                "r2_per_run": [r["r2"] for r in results]}
    verdict = threshold_verdict("bound", measured, {"rate_fraction_min": expected["rate_fraction_min"],
                                                    "r2_min": expected["r2_min"]},
                                context=f"{len(results)} runs; min over runs")
    if result.searches is None:
        return verdict
    return worst_case_verdict(verdict, result.searches["convergence"], ratio_max=1.0 / expected["rate_fraction_min"])


@dataclass(frozen=True)
class Prop8CertifiedConfig(Config):
    """Sizes of :func:`measure_prop8_certified`: the f = 0 instance of model (12) (Z^init = 0, n = 4, d = 8,
    d' = 2, q = 10, L = 4, GD lr 0.02 for 1000 steps), where a PL constant holds on the whole ball."""

    seeds: tuple = seeds_field((0, 1, 2), "Seeds of the data and the initialisation.")
    target_scale: float = field(Real(0, closed="neither"), P8C["target_scale"], "Scale of the targets.")
    M: float = field(Real(0, 1, closed="neither"), P8C["M"], "Radius of the ball (< 1).")
    search_budget: int = search_budget_field(40)
    search_seed: int = search_seed_field()
    search_rhs_scale: float = field(Real(0, closed="neither"), 1.0, "Multiplies the right-hand sides in the "
                                    "worst-case search (1: the statement; a negative control lowers it).")


@dataclass(frozen=True)
class Prop8CertifiedResult:
    """``runs``: the :func:`p8_certified` dict per seed; ``search``: the worst-case search over :data:`P8C_BOX`."""

    config: Prop8CertifiedConfig = _field(repr=False)
    runs: list
    search: object = None


def measure_prop8_certified(config: Prop8CertifiedConfig) -> Prop8CertifiedResult:
    c = config
    search = search_worst_case(functools.partial(p8_certified_search_sides, rhs_scale=c.search_rhs_scale),
                               box(P8C_BOX), budget=c.search_budget, seed=c.search_seed)
    return Prop8CertifiedResult(c, [p8_certified(s, target_scale=c.target_scale, M=c.M) for s in c.seeds], search)


def _p8c_bounds(result, sides_of):
    tracker, per = BoundTracker(), {}
    for s, r in zip(result.config.seeds, result.runs):
        for name, lhs, rhs in sides_of(r):
            per[name] = max(per.get(name, 0.0), tracker.add(lhs, rhs, {"seed": s, "bound": name}))
    return tracker.result(), per


def prop8_certified_verdict(result: Prop8CertifiedResult) -> Verdict:
    """A bound, prop-8/certified: the conclusions of Prop. 8 (printed constants, (i) corrected) hold on every run,
    max LHS/RHS <= 1; the instances must meet the hypothesis (the PL certificate covers mu of (22) on every seed,
    ``pl_certificate_over_mu22 >= 1``), else the verdict fails."""
    hyp = [(r["mu_cert"], r["mu22"]) for r in result.runs]
    bound, per = _p8c_bounds(result, p8_certified_sides)
    certified = min(a / b for a, b in hyp) >= 1.0
    if result.search is not None:
        bound = bound.with_search(result.search)
    return require(bound_verdict(bound, EXPECTED_P8), certified, "the PL certificate is below mu of (22)",
                   pl_certificate_over_mu22=[float(a / b) for a, b in hyp], ratio_per_bound=per)


def prop8_erratum_verdict(result: Prop8CertifiedResult) -> Verdict:
    """An erratum, prop-8/erratum: (i) as printed (||A||_F <= ||A^init||_2 + M) fails, (i) with matching norms
    holds, on the same runs."""
    bound, per = _p8c_bounds(result, p8_printed_norm_sides)
    fixed, fixed_per = _p8c_bounds(result, p8_corrected_norm_sides)
    return with_measured(erratum_verdict(bound_verdict(bound, EXPECTED_P8), bound_verdict(fixed, EXPECTED_P8)),
                         ratio_per_bound=per, corrected_ratio_per_bound=fixed_per)


# ============================================================================ presets and registry

PRESETS = {
    "lemma20": {"check": Lemma20Config(), "paper": Lemma20Config(qm_max=16 * 32 * 4, mw_max=8.0, mw_points=200,
                                                               search_budget=1000)},
    "lemma20_mc": {"check": Lemma20MCConfig(),
                   # Section 5.1's width and dimension (q = 16, m = 32) and a few smaller shapes, more draws
                   "paper": Lemma20MCConfig(cases=L20_MC + ((16, 32, math.sqrt(2.0)),), runs=1_000_000)},
    "prop11": {"check": Prop11Config(), "paper": Prop11Config(grid=tuple(2**k for k in range(3, 15)),
                                                              seeds=tuple(range(10)))},
    "prop7_rate": {"check": Prop7RateConfig(),
                   "paper": Prop7RateConfig(grid=(8, 16, 32, 64, 128, 256, 512), seeds=tuple(range(5)), steps=200)},
    "prop8": {"check": Prop8Config(),
              # the searches' runs are ten times longer (4000 steps): the same budget costs ten times as much
              "paper": Prop8Config(grid=(4, 8, 16, 32, 64, 128, 256), seeds=tuple(range(5)), steps=4000)},
    "prop8_certified": {"check": Prop8CertifiedConfig(),
                        "paper": Prop8CertifiedConfig(seeds=tuple(range(10)), search_budget=400)},
}


def _register():
    from theory.experiments import register

    def reg(name, config, measure, verdict, claims, summary):
        register(f"implicit_reg.{name}", config=config, presets=PRESETS[name], measure=measure, verdict=verdict,
                 claims=claims, summary=summary)

    reg("lemma20", Lemma20Config, measure_lemma20, lemma20_verdict, ("implicit-reg/lemma-20",),
        lambda r: {"ratio": float(r.bound.ratio), "search_ratio": float(r.bound.search.ratio)})
    reg("lemma20_mc", Lemma20MCConfig, measure_lemma20_mc, lemma20_mc_verdict, ("implicit-reg/lemma-20/monte-carlo",),
        lambda r: {"freq": [row["freq"] for row in r.rows], "bound": [row["bound"] for row in r.rows]})
    reg("prop11", Prop11Config, measure_prop11, prop11_verdict, ("implicit-reg/prop-11",),
        lambda r: {"slope": float(prop11_fit(r).slope)})
    reg("prop7_rate", Prop7RateConfig, measure_prop7_rate, prop7_rate_verdict, ("implicit-reg/prop-7/rate",),
        lambda r: {"slope": float(prop7_rate_fits(r)[0].slope), "log10_alpha_T": r.log10_alpha_T})
    reg("prop8", Prop8Config, measure_prop8, prop8_loss_verdict,
        {"implicit-reg/prop-8": None, "implicit-reg/prop-8/bounded": prop8_bounded_verdict,
         "implicit-reg/prop-8/differences": prop8_differences_verdict,
         "implicit-reg/prop-8/convergence": prop8_convergence_verdict},
        lambda r: {"hypotheses_ok": r.hypotheses_ok, "loss_ratio": float(prop8_loss_verdict(r).measured["ratio"]),
                   "difference_slope": float(prop8_differences_fit(r).slope),
                   **{f"search_{k}": float(w.ratio) for k, w in r.searches.items()}})
    reg("prop8_certified", Prop8CertifiedConfig, measure_prop8_certified, prop8_certified_verdict,
        {"implicit-reg/prop-8/certified": None, "implicit-reg/prop-8/erratum": prop8_erratum_verdict},
        lambda r: {"ratio": float(prop8_certified_verdict(r).measured["ratio"]), "search_ratio": float(r.search.ratio)})


_register()
