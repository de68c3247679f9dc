r"""The proof of Proposition 5 of ``implicit-reg`` (Appendix B.5, with Lemma 21 of Appendix C), step by step.

Proposition 5 (and through it Theorem 6) needs :math:`m \ge c_1 n` with :math:`c_1 \approx 4.8\cdot10^6` and
:math:`L \ge c_2\sqrt{nq}` with :math:`c_2 \approx 8.7\cdot10^3` (sin, r = 3): no CPU reaches them, so the records
of the two statements are proxies. Their proof, though, chains deterministic estimates whose own hypotheses hold
at any size; each one is a claim here, checked under its own hypotheses (so not a proxy), with a worst-case
search (:func:`theory.worst_case.search_worst_case`) over the set those hypotheses allow. Numbering of the ICLR
paper (the theses: Prop. 3.6, Lemma 3.24). Notation: the matrix network (46), row convention (``h[k]`` is the
n x q transpose of the proof's :math:`\mathbf h_k`, ``P[k]`` that of :math:`\mathbf p_k = \partial\ell/\partial
\mathbf h_k`, the loss's 1/n included), :math:`\bar A, \bar B` the initial A, B of Section 3, :math:`\bar W` the
tied initial W, and the ball of Definition 1 around them (each block within its radius; for Z the sum norm
:math:`\|V_k\|_F + \|W_k - \bar W\|_F`).

* ``eq-48`` (:class:`Eq48Config`): in a ball of radius at most 1/2, with :math:`\|\bar W\|_F \le \sqrt{2qm}` (the
  event of Lemma 20), :math:`\|A\|_2 \le 2`, :math:`s_{\min}(B) \ge 1/2`, :math:`\|B\|_2 \le 3/2`,
  :math:`\|V_k\|_F \le 1`, :math:`\|W_k\|_F \le 2\sqrt{2qm}` (47)-(48).
* ``eq-50`` (:class:`Eq50Config`): under the bounds (48) and :math:`\|x_i\| = \sqrt q`, with sigma
  :math:`K_\sigma`-Lipschitz and :math:`\sigma(0) = 0`: :math:`\|\mathbf h_k\|_F \le 2e^{2\sqrt2K_\sigma}\sqrt{qn}`
  ((49) is k = 0). The activations searched are :math:`\sigma(u) = K\,s(au)/a` with s = tanh or sin (Lipschitz
  K, bounded by K/a, C^2, :math:`\sigma(0) = 0`): a small a makes sigma nearly linear on the states, where the
  proof's per-layer factor :math:`1 + 2\sqrt2K/L` is attained.
* ``eq-51`` (:class:`Eq51Config`): in the proof's ball (radius :math:`M = \min(\eta_r/(32K_\sigma\sqrt{2nq}),
  1/2)`, sigma = sin or tanh) with the Lemma 20 event,
  :math:`\|\mathbf p_k\|_F \ge e^{-2\sqrt2K_\sigma}\sqrt{\ell/n}`, and the companion upper bound
  :math:`\|\mathbf p_k\|_F \le 3e^{2\sqrt2K_\sigma}\sqrt{\ell/n}`.
* ``eq-51/erratum`` (:class:`Eq51ErratumConfig`): the proof derives (51) from (48) through
  :math:`\|\mathbf p_k\|_F \ge (1 - 2\sqrt2K_\sigma/L)\|\mathbf p_{k+1}\|_F`, then writes "it follows that
  :math:`\|\mathbf p_k\|_F \ge e^{-2\sqrt2K_\sigma}\|\mathbf p_L\|_F`": false, since
  :math:`(1 - x/L)^L < e^{-x}` (and the factor is negative for :math:`L < 2\sqrt2K_\sigma`). Over the set (48)
  allows, (51) fails (the search finds it); the corrected step, for :math:`L \ge 4\sqrt2K_\sigma` (the
  proposition's :math:`L \ge c_2\sqrt{nq}` is far larger), uses :math:`1 - x \ge e^{-2x}` on [0, 1/2]:
  :math:`\|\mathbf p_k\|_F \ge e^{-4\sqrt2K_\sigma}\sqrt{\ell/n}`, and holds. Proposition 5 itself is not
  affected: in its ball (``eq-51``) the printed (51) holds.
* ``eq-52`` (:class:`Eq52Config`): for m >= n, :math:`\|\partial\ell/\partial V_{k+1}\|_F \ge
  \frac{1}{L\sqrt m}\|\mathbf p_{k+1}\|_F\,s_{\min}(\sigma(W_{k+1}\mathbf h_k/\sqrt q))`, at any parameters
  (the gradient by the package's backpropagation, :func:`theory.implicit.loss_and_gradient`).
* ``thm-6/step-feature-perturbation`` (:class:`FeatureConfig`): under the premises the proof takes it from, (47)
  (:math:`\|V_k\|_F \le 1`, :math:`\|W_k - \bar W\|_F \le 1/2`) with :math:`\|A - \bar A\|_F \le M`, the
  Lemma 20 event and :math:`\|x_i\| = \sqrt q`, :math:`\|\sigma(W_{k+1}\mathbf h_k/\sqrt q) - \sigma(\bar W\bar A\mathbf x/\sqrt
  q)\|_F \le C_1\sqrt n + C_2\sqrt{nqm}\,k/(16L) + \sqrt m\,\eta_r/32` (the display before "Thus, when
  :math:`C_1\sqrt n \le \ldots`"; where the conversion prints :math:`\bar A\mathbf x - \bar A\mathbf x` and
  :math:`\mathbf h_k - \bar A\mathbf x`, the chain needs :math:`A\mathbf x - \bar A\mathbf x` and
  :math:`\mathbf h_k - A\mathbf x`, which is what is computed).
* ``thm-6/step-chernoff`` and its erratum (:class:`ChernoffConfig`): the proof of Lemma 21 applies the matrix
  Chernoff bound (Tropp, 2012, Remark 5.3) as :math:`P(\lambda_{\min}(M) \le t\mu) \le n\,e^{-(1-t^2)\mu/(2R)}`;
  the remark has :math:`(1-t)^2`. Checked exactly (no sampling) on sums of m independent diagonal matrices
  :math:`R\,\mathrm{diag}(b_1, \dots, b_n)` with Bernoulli(p) entries (independent, positive semi-definite,
  :math:`\lambda_{\max} \le R`: the remark's hypotheses), whose :math:`\lambda_{\min}` is R times the least of
  n independent Binomial(m, p): the printed exponent fails, :math:`(1-t)^2` holds. At t = 1/2 the printed
  :math:`3m\eta_r^2/(64M_\sigma^2n)` in Lemma 21's (and Proposition 5's) delta should read
  :math:`m\eta_r^2/(64M_\sigma^2n)`. For n = 1 these sums are Lemma 21's own :math:`M = \sum_i\sigma(w_ix)^2` for
  the bounded :math:`\sigma = M_\sigma\mathbf 1\{u > z\}`, so the printed step fails inside the lemma's setting.
* ``lemma-21/printed-delta`` (:class:`Lemma21DeltaConfig`): Lemma 21 with its printed delta, at sizes where that
  delta is below 1 (n = 2, m = 2000, d = 64, sigma = sin, columns uniform on the sphere, whose
  :math:`\sqrt d x` has sub-Gaussian variance proxy 1 in the paper's definition): the frequency of
  :math:`s_{\min}(\sigma(WX)) < \sqrt m|\eta_3|/4` stays below delta.

Every bound record passes only if its random instances and its search both stay within the bound. The searched
boxes hold the sizes (n <= 8, d <= 4, d' <= 3, q <= d + d' + 4, m <= 32, L <= 64), the fractions of each radius
and the alignments of each perturbation as their log-spaced distance to the edge (``<name>_gap``, down to 1e-4:
the extremal instances sit at those edges), the activation's K and a, and a seed for the Gaussian parts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np

from theory.claims import Verdict, bound_verdict, erratum_verdict, frequency_verdict
from theory.pl import backward_states, hermite_coefficient, prop5_constants
from theory.rates import BoundTracker, frequency
from theory.worst_case import Dim, search_worst_case

from ..config import Choice, Config, Int, Real, Seed, field
from ._common import with_measured

__all__ = [
    "activation", "states", "costates", "Eq48Config", "Eq50Config", "Eq51Config", "Eq51ErratumConfig",
    "Eq52Config", "FeatureConfig", "ChernoffConfig", "Lemma21DeltaConfig", "BoundSearchResult", "ErratumSearchResult",
    "measure_eq48", "measure_eq50", "measure_eq51", "measure_eq51_erratum", "measure_eq52", "measure_feature",
    "measure_chernoff", "measure_lemma21_delta", "bound_search_verdict", "erratum_search_verdict",
    "chernoff_verdict", "chernoff_erratum_verdict", "lemma21_delta_verdict", "PRESETS", "ROUNDING",
]

SQRT2 = math.sqrt(2.0)
#: allowance for an equality the bound attains, computed through two routes (SVD, products): a few ulps
ROUNDING = 1e-12
_BASES = ("tanh", "sin")


# --------------------------------------------------------------------------- the network (46)


def activation(base, K=1.0, a=1.0):
    r"""sigma(u) = K s(a u) / a and its derivative, s = tanh or sin: Lipschitz K, bounded by K/a, C^2, sigma(0) = 0.

    Parameters
    ----------
    base : {"tanh", "sin"}
    K, a : float > 0

    Returns
    -------
    (callable, callable)
        sigma and sigma'.
    """
    if base not in _BASES:
        raise ValueError(f"`base` of activation must be one of {_BASES}; got {base!r}")
    if not (K > 0 and a > 0):
        raise ValueError(f"`K` and `a` of activation must be > 0; got K = {K!r}, a = {a!r}")
    if base == "tanh":
        return (lambda u: (K / a) * np.tanh(a * u)), (lambda u: K * (1.0 - np.tanh(a * u) ** 2))
    return (lambda u: (K / a) * np.sin(a * u)), (lambda u: K * np.cos(a * u))


def states(X, A, V, W, sigma):
    r"""Hidden states of the matrix network (46), rows: h[0] = X A^T, h[k+1] = h[k] + sigma(h[k] W_k^T/sqrt q) V_k^T /
    (L sqrt m); shape (L + 1, n, q). ``V`` (L, q, m), ``W`` (L, m, q): index k is the paper's layer k + 1."""
    L, q, m = V.shape
    h = np.empty((L + 1, X.shape[0], q))
    h[0] = X @ A.T
    c = 1.0 / (L * math.sqrt(m))
    for k in range(L):
        h[k + 1] = h[k] + c * (sigma(h[k] @ W[k].T / math.sqrt(q)) @ V[k].T)
    return h


def costates(h, Y, B, V, W, dsigma):
    r"""Backward states of (46), rows: P[L] = (2/n)(h[L] B^T - Y) B and the chain rule of Appendix B.5,
    P[k] = P[k+1] + ((P[k+1] V_k) * sigma'(h[k] W_k^T/sqrt q)) W_k / (L sqrt(qm)); shape (L + 1, n, q)."""
    L, q, m = V.shape
    n = Y.shape[0]
    P = np.empty_like(h)
    P[L] = (2.0 / n) * ((h[L] @ B.T - Y) @ B)
    c = 1.0 / (L * math.sqrt(q * m))
    for k in range(L - 1, -1, -1):
        P[k] = P[k + 1] + c * (((P[k + 1] @ V[k]) * dsigma(h[k] @ W[k].T / math.sqrt(q))) @ W[k])
    return P


# --------------------------------------------------------------------------- instance builders


def _fro_unit(M):
    s = float(np.linalg.norm(M))
    return M / s if s > 0 else M


def _mix(aligned, rand, alpha):
    """Frobenius-unit mix of a (unit) aligned structure and a random matrix: alpha = 1 is the aligned one."""
    return _fro_unit(alpha * _fro_unit(aligned) + (1.0 - alpha) * _fro_unit(rand))


def _init_blocks(d, d_out, q):
    A0 = np.zeros((q, d))
    A0[:d, :d] = np.eye(d)
    B0 = np.zeros((d_out, q))
    B0[:, q - d_out:] = np.eye(d_out)
    return A0, B0


def _sphere_rows(n, d, radius, align, rng):
    """n points of norm ``radius`` in R^d: align = 1 puts them all on e_1, 0 draws them uniformly."""
    e = np.zeros(d)
    e[0] = 1.0
    G = rng.standard_normal((n, d))
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    X = align * e + (1.0 - align) * G
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = np.where(norms > 0, X / np.where(norms > 0, norms, 1.0), e)
    return radius * X


#: coordinates searched as their distance to the edge of the hypotheses, log-spaced (``<name>_gap`` = 1 - value,
#: ``b_gap`` = s_min(B) - 1/2): the extremal instances sit at those edges, which Sobol points then reach
GAP_LOW = 1e-4


def _gap(name):
    return Dim(f"{name}_gap", GAP_LOW, 1.0, "log")


def _edges(inst):
    """The instance with each ``<name>_gap`` turned into ``<name>`` = 1 - gap and ``b_gap`` into b_min = 1/2 + gap."""
    out = {}
    for k, v in inst.items():
        if k == "b_gap":
            out["b_min"] = 0.5 + v
        elif k.endswith("_gap"):
            out[k[:-4]] = 1.0 - v
        else:
            out[k] = v
    return out


def _sign(v):
    """A sign coordinate: 1 is +1, 0 is -1."""
    return 1.0 if v >= 1 else -1.0


def _sizes(inst):
    d, d_out = int(inst["d"]), int(inst["d_out"])
    return d, d_out, d + d_out + int(inst["extra"]), int(inst["m"]), int(inst["L"])


def _point(inst, rA, rB, rV, rW, rng):
    r"""Parameters around the init of Section 3 with ||A - A_bar||_F = rA, ||B - B_bar||_F = rB, ||V_k||_F = rV and
    ||W_k - W_bar||_F = rW, W_bar in the event ||W_bar||_F <= sqrt(2qm) of Lemma 20. Every perturbation is an
    ``alpha``-mix of an aligned structure (A, B: a rank-one change of a singular value, of sign ``sign``; V: -u c^T
    with u the first output direction read by B_bar, orthogonal to the range of A_bar as q >= d + d'; W - W_bar:
    along W_bar) and a Gaussian. W_bar: ``wbar`` sqrt(2qm) times a ``beta``-mix of the rank-one c u^T and a
    Gaussian (beta = 0, wbar ~ 1/sqrt 2: the Gaussian of Section 3 at its typical norm)."""
    d, d_out, q, m, L = _sizes(inst)
    A0, B0 = _init_blocks(d, d_out, q)
    u = np.zeros(q)
    u[q - d_out] = 1.0
    c = np.zeros(m)
    c[0] = 1.0
    sign = _sign(inst["sign"])
    EA = np.zeros((q, d))
    EA[0, 0] = sign
    EB = np.zeros((d_out, q))
    EB[0, q - d_out] = sign
    A = A0 + rA * _mix(EA, rng.standard_normal((q, d)), inst["alpha"])
    B = B0 + rB * _mix(EB, rng.standard_normal((d_out, q)), inst["alpha"])
    Wbar = inst["wbar"] * math.sqrt(2.0 * q * m) * _mix(np.outer(c, u), rng.standard_normal((m, q)), inst["beta"])
    V = np.stack([rV * _mix(-np.outer(u, c), rng.standard_normal((q, m)), inst["alpha"]) for _ in range(L)])
    W = np.stack([Wbar + rW * _mix(Wbar, rng.standard_normal((m, q)), inst["alpha"]) for _ in range(L)])
    return A0, B0, Wbar, A, B, V, W


def _ball_point(inst, radius, rng):
    """Parameters in the ball of Definition 1 of radius ``radius`` (each block at its own fraction t_A, t_B, t_Z of
    the radius, Z split between V (``split``) and W - W_bar): :func:`_point`."""
    zv = radius * inst["tZ"] * inst["split"]
    zw = radius * inst["tZ"] * (1.0 - inst["split"])
    return _point(inst, radius * inst["tA"], radius * inst["tB"], zv, zw, rng)


def _dims_ball(n_max=8, m_max=32, L_max=64, with_n=True):
    dims = [Dim("d", 1, 4, "int"), Dim("d_out", 1, 3, "int"), Dim("extra", 0, 4, "int"),
            Dim("m", 1, m_max, "log-int"), Dim("L", 1, L_max, "log-int"),
            _gap("tA"), _gap("tB"), _gap("tZ"), Dim("split", 0.0, 1.0),
            _gap("alpha"), Dim("sign", 0, 1, "int"), _gap("wbar"), _gap("beta"),
            Dim("seed", 0, 2**20, "int")]
    return ([Dim("n", 1, n_max, "int")] if with_n else []) + dims


def _random_ball_instance(rng, with_n=True):
    """A 'typical' instance: uniform directions, Gaussian W_bar at its typical norm, random fractions."""
    inst = {"d": int(rng.integers(1, 5)), "d_out": int(rng.integers(1, 4)), "extra": int(rng.integers(0, 5)),
            "m": int(rng.integers(1, 33)), "L": int(rng.choice([1, 2, 4, 8, 16])), "tA": float(rng.uniform()),
            "tB": float(rng.uniform()), "tZ": float(rng.uniform()), "split": float(rng.uniform()), "alpha": 0.0,
            "sign": int(rng.integers(0, 2)), "wbar": 2**-0.5, "beta": 0.0, "seed": int(rng.integers(2**20))}
    if with_n:
        inst["n"] = int(rng.integers(1, 9))
    return inst


@dataclass(frozen=True)
class BoundSearchResult:
    """A bound's measurement: ``bound`` (random instances with the worst-case search attached, a BoundResult);
    ``parts``: the worst ratio per inequality of the record at the searched worst instance; ``extra``: more
    numbers (searches of companion inequalities)."""

    bound: object
    parts: dict
    extra: dict = _field(default_factory=dict)


def _run_bound(sides, dims, cfg, random_instances, constant=None):
    """Random instances then the search, both through ``sides(inst) -> (lhs, rhs)`` (or None)."""
    tracker = BoundTracker()
    for inst in random_instances:
        out = sides(inst)
        if out is not None:
            tracker.add(out[0], out[1], inst)
    search = search_worst_case(sides, dims, budget=cfg.search_budget, seed=cfg.search_seed, constant=constant)
    return tracker.result().with_search(search)


def bound_search_verdict(result: BoundSearchResult, ratio_max: float = 1.0) -> Verdict:
    """A bound: the random instances and the search both <= ``ratio_max``; ``measured`` adds the ratio per
    inequality at the worst instance found and the companion searches."""
    v = bound_verdict(result.bound, {"ratio_max": ratio_max})
    return with_measured(v, ratio_per_inequality=result.parts, **result.extra)


def _rhs_factor_field():
    return field(Real(0, closed="neither"), 1.0, "Factor on the right-hand side as printed (1: as printed; a "
                 "negative control divides it by 4).")


# --------------------------------------------------------------------------- (47)-(48)


@dataclass(frozen=True)
class Eq48Config(Config):
    """The bounds (48) on the ball of Definition 1 of radius <= 1/2 around the init (W_bar in Lemma 20's event)."""

    radius_max: float = field(Real(0, closed="neither"), 0.5, "Largest ball radius searched (the proof: M <= 1/2; a "
                              "control searches beyond).")
    draws: int = field(Int(low=1), 16, "Random instances (uniform directions, Gaussian W_bar).")
    rhs_factor: float = _rhs_factor_field()
    search_budget: int = field(Int(low=1), 1500, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")


def eq48_parts(inst, factor=1.0):
    """{inequality: (lhs, rhs)} of (48) at one instance of the ball (radius ``inst["rho"]``)."""
    inst = _edges(inst)
    rng = np.random.default_rng(int(inst["seed"]))
    d, d_out, q, m, L = _sizes(inst)
    _, _, _, A, B, V, W = _ball_point(inst, float(inst["rho"]), rng)
    sB = np.linalg.svd(B, compute_uv=False)
    return {"||A||_2 <= 2": (float(np.linalg.norm(A, 2)), 2.0 * factor),
            "s_min(B) >= 1/2": (0.5, float(sB[-1]) * factor),
            "||B||_2 <= 3/2": (float(sB[0]), 1.5 * factor),
            "||V_k||_F <= 1": (float(np.max(np.linalg.norm(V, axis=(1, 2)))), factor),
            "||W_k||_F <= 2 sqrt(2qm)": (float(np.max(np.linalg.norm(W, axis=(1, 2)))),
                                         2.0 * math.sqrt(2.0 * q * m) * factor)}


def _worst(parts):
    key = max(parts, key=lambda k: parts[k][0] / parts[k][1])
    return parts[key]


def measure_eq48(config: Eq48Config) -> BoundSearchResult:
    c = config
    dims = [d for d in _dims_ball(with_n=False) if d.name != "L"] + [Dim("L", 1, 8, "log-int"),
                                                                     Dim("rho", 1e-4, c.radius_max, "log")]

    def sides(inst):
        return _worst(eq48_parts(inst, c.rhs_factor))

    rng = np.random.default_rng(12345)
    rand = [{**_random_ball_instance(rng, with_n=False), "rho": float(np.exp(rng.uniform(np.log(1e-4),
                                                                                       np.log(c.radius_max))))}
            for _ in range(c.draws)]
    bound = _run_bound(sides, dims, c, rand)
    parts = {k: l / r for k, (l, r) in eq48_parts(bound.search.instance, c.rhs_factor).items()}
    return BoundSearchResult(bound, parts)


# --------------------------------------------------------------------------- (49)-(50)


@dataclass(frozen=True)
class Eq50Config(Config):
    """The forward bound (50) (and (49)) over the parameters the bounds (48) allow."""

    L_max: int = field(Int(low=1), 64, "Largest depth searched (the proof's factor (1 + 2 sqrt2 K/L)^L tends to its "
                       "bound e^{2 sqrt2 K} as L grows).")
    draws: int = field(Int(low=1), 16, "Random instances.")
    rhs_factor: float = _rhs_factor_field()
    search_budget: int = field(Int(low=1), 1000, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")


def _premise48_point(inst, rng, u_on="B"):
    r"""Parameters under the bounds (48) (not necessarily in a ball): ||A||_2 = 2 fa, s_min(B) = b_min in [1/2, 3/2]
    and the other singular values of B in [b_min, 3/2], ||V_k||_F = fv, ||W_k||_F = fw 2 sqrt(2qm); each an
    ``alpha``-mix of an aligned structure and a Gaussian: A along e_1 e_1^T, V_k = -u c^T and W_k = c u^T with u
    the row of B of smallest singular value (``u_on="B"``: orthogonal to the range of the aligned A), so that each
    layer scales the backward state along u by 1 - fv fw 2 sqrt2 K / L (sigma'(0) = K), or u = e_1 (``u_on="A"``,
    where the states are) with V_k = +u c^T (``vsign``), so that a nearly linear sigma scales the forward state
    along u by up to 1 + 2 sqrt2 K / L. Data x_i of norm sqrt q, ``xalign``-mix of e_1 and uniform."""
    d, d_out, q, m, L = _sizes(inst)
    n = int(inst["n"])
    alpha = inst["alpha"]
    EA = np.zeros((q, d))
    EA[0, 0] = 1.0
    GA = rng.standard_normal((q, d))
    Amix = alpha * EA + (1.0 - alpha) * GA / max(np.linalg.norm(GA, 2), 1e-300)
    A = 2.0 * inst["fa"] * Amix / max(np.linalg.norm(Amix, 2), 1e-300)
    # B = U diag(s) R with R orthonormal rows: alpha-mix of B_bar's rows and random ones
    R0 = np.zeros((d_out, q))
    R0[:, q - d_out:] = np.eye(d_out)
    Rr = np.linalg.qr(rng.standard_normal((q, d_out)))[0].T
    R = np.linalg.qr((alpha * R0 + (1.0 - alpha) * Rr).T)[0].T
    b_min = inst.get("b_min", 1.0)  # (50) does not involve B
    s = np.sort(np.concatenate([[b_min], b_min + (1.5 - b_min) * rng.uniform(size=d_out - 1)]))
    U = np.linalg.qr(rng.standard_normal((d_out, d_out)))[0]
    B = U @ np.diag(s) @ R
    if u_on == "B":
        u = R[0] / np.linalg.norm(R[0])
    else:  # along the aligned range of A, where the states are
        u = np.zeros(q)
        u[0] = 1.0
    c = np.zeros(m)
    c[0] = 1.0
    vs = _sign(inst.get("vsign", 0))
    V = np.stack([inst["fv"] * _mix(vs * np.outer(u, c), rng.standard_normal((q, m)), alpha) for _ in range(L)])
    W = np.stack([inst["fw"] * 2.0 * math.sqrt(2.0 * q * m) * _mix(np.outer(c, u), rng.standard_normal((m, q)), alpha)
                  for _ in range(L)])
    X = _sphere_rows(n, d, math.sqrt(q), inst["xalign"], rng)
    # residuals r_i = F(x_i) - y_i: ``ralign``-mix of U[:, 0] (B's weakest direction) and Gaussian, unit norm
    Rres = inst.get("ralign", 0.0) * U[:, 0] + (1.0 - inst.get("ralign", 0.0)) * rng.standard_normal((n, d_out))
    Rres /= max(np.linalg.norm(Rres), 1e-300)
    return A, B, V, W, X, Rres, (d, d_out, q, m, L, n)


def _dims_premise48(L_low=1, L_max=64, K_range=(0.25, 2.0), backward=True):
    dims = [Dim("n", 1, 8, "int"), Dim("d", 1, 4, "int"), Dim("d_out", 1, 3, "int"), Dim("extra", 0, 4, "int"),
            Dim("m", 1, 32, "log-int"), Dim("L", L_low, L_max, "log-int"), Dim("base", 0, 1, "int"),
            Dim("K", K_range[0], K_range[1], "log"), Dim("a", 1e-4, 1.0, "log"), _gap("alpha"),
            _gap("fa"), Dim("b_gap", GAP_LOW, 1.0, "log"), _gap("fv"), _gap("fw"),
            Dim("vsign", 0, 1, "int"), _gap("xalign"), _gap("ralign"), Dim("seed", 0, 2**20, "int")]
    # the forward bound (50) involves neither B nor the residuals
    return dims if backward else [d for d in dims if d.name not in ("b_gap", "ralign_gap")]


def _random_premise48(rng, L_low=1):
    return {"n": int(rng.integers(1, 9)), "d": int(rng.integers(1, 5)), "d_out": int(rng.integers(1, 4)),
            "extra": int(rng.integers(0, 5)), "m": int(rng.integers(1, 33)),
            "L": int(max(L_low, rng.choice([1, 2, 4, 8, 16, 32]))), "base": int(rng.integers(0, 2)),
            "K": float(rng.uniform(0.25, 2.0)), "a": 1.0, "alpha": 0.0, "fa": float(rng.uniform()),
            "b_min": float(rng.uniform(0.5, 1.5)), "fv": float(rng.uniform()), "fw": float(rng.uniform()),
            "vsign": int(rng.integers(0, 2)), "xalign": 0.0, "ralign": 0.0, "seed": int(rng.integers(2**20))}


def eq50_sides(inst, factor=1.0):
    """(max_k ||h_k||_F, 2 e^{2 sqrt2 K} sqrt(qn)) at one instance under (48)."""
    inst = _edges(inst)
    rng = np.random.default_rng(int(inst["seed"]))
    A, B, V, W, X, _, (d, d_out, q, m, L, n) = _premise48_point(inst, rng, u_on="A")
    sigma, _ = activation(_BASES[int(inst["base"])], inst["K"], inst["a"])
    h = states(X, A, V, W, sigma)
    lhs = float(np.max(np.linalg.norm(h, axis=(1, 2))))
    return lhs, 2.0 * factor * math.exp(2.0 * SQRT2 * inst["K"]) * math.sqrt(q * n)


def measure_eq50(config: Eq50Config) -> BoundSearchResult:
    c = config
    dims = _dims_premise48(L_max=c.L_max, backward=False)
    rng = np.random.default_rng(5050)
    rand = [_random_premise48(rng) for _ in range(c.draws)]
    bound = _run_bound(lambda i: eq50_sides(i, c.rhs_factor), dims, c, rand,
                       constant=("2 (in 2 e^{2 sqrt2 K} sqrt(qn))", 2.0 * c.rhs_factor))
    lhs, rhs = eq50_sides(bound.search.instance, c.rhs_factor)
    L, K = int(bound.search.instance["L"]), float(bound.search.instance["K"])
    return BoundSearchResult(bound, {"(50)": lhs / rhs}, {
        "proof_factor_at_worst": (1.0 + 2.0 * SQRT2 * K / L) ** L / math.exp(2.0 * SQRT2 * K)})


# --------------------------------------------------------------------------- (51), in the proof's ball


def _eta(base):
    return abs(float(hermite_coefficient(base, 3)))


def proof_radius(n, q, base="sin"):
    """The proof's radius M = min(eta_3 / (32 K sqrt(2nq)), 1/2) (K = 1 for sin and tanh)."""
    return min(_eta(base) / (32.0 * math.sqrt(2.0 * n * q)), 0.5)


@dataclass(frozen=True)
class Eq51Config(Config):
    """(51) and its companion upper bound in the proof's ball (sigma = sin or tanh, K = 1)."""

    radius_factor: float = field(Real(0, closed="neither"), 1.0, "Ball radius over the proof's M (1: the "
                                 "hypothesis; a control searches a larger ball).")
    draws: int = field(Int(low=1), 16, "Random instances.")
    search_budget: int = field(Int(low=1), 400, "Evaluations of each worst-case search (lower and upper bound).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case searches.")


def eq51_sides(inst, radius_factor=1.0):
    """((sqrt(l/n), e^{2 sqrt2} min_k ||p_k||_F), (max_k ||p_k||_F, 3 e^{2 sqrt2} sqrt(l/n))) in the ball, or None
    (a zero loss)."""
    inst = _edges(inst)
    rng = np.random.default_rng(int(inst["seed"]))
    d, d_out, q, m, L = _sizes(inst)
    n = int(inst["n"])
    base = _BASES[int(inst["base"])]
    A0, B0, Wbar, A, B, V, W = _ball_point(inst, radius_factor * proof_radius(n, q, base), rng)
    X = _sphere_rows(n, d, math.sqrt(q), inst["xalign"], rng)
    sigma, dsigma = activation(base)
    h = states(X, A, V, W, sigma)
    F = h[L] @ B.T
    Rres = inst["ralign"] * np.linalg.svd(B)[0][:, -1] + (1.0 - inst["ralign"]) * rng.standard_normal((n, d_out))
    Rres /= max(np.linalg.norm(Rres), 1e-300)
    Y = F - Rres
    loss = float(np.sum((F - Y) ** 2) / n)
    if not loss > 0:
        return None
    P = costates(h, Y, B, V, W, dsigma)
    norms = np.linalg.norm(P, axis=(1, 2))
    e = math.exp(2.0 * SQRT2)
    g = math.sqrt(loss / n)
    return (g, e * max(float(norms.min()), 1e-300)), (float(norms.max()), 3.0 * e * g)


def _dims_eq51():
    return _dims_ball() + [Dim("base", 0, 1, "int"), _gap("xalign"), _gap("ralign")]


def measure_eq51(config: Eq51Config) -> BoundSearchResult:
    c = config
    dims = _dims_eq51()
    rng = np.random.default_rng(5151)
    rand = [{**_random_ball_instance(rng), "base": int(rng.integers(0, 2)), "xalign": 0.0, "ralign": 0.0}
            for _ in range(c.draws)]

    def lower(i):
        out = eq51_sides(i, c.radius_factor)
        return None if out is None else out[0]

    def upper(i):
        out = eq51_sides(i, c.radius_factor)
        return None if out is None else out[1]

    bound = _run_bound(lower, dims, c, rand, constant=("e^{2 sqrt2 K} (K = 1)", math.exp(2.0 * SQRT2)))
    up = _run_bound(upper, dims, c, rand, constant=("3 e^{2 sqrt2 K} (K = 1)", 3.0 * math.exp(2.0 * SQRT2)))
    up_v = bound_verdict(up, {"ratio_max": 1.0})
    return BoundSearchResult(bound, {"(51) lower": float(bound.search.ratio), "upper": float(up.search.ratio)},
                             {"upper_bound": dict(up_v.measured), "upper_status": up_v.status})


def eq51_verdict(result: BoundSearchResult) -> Verdict:
    """A bound, eq-51: the lower bound (51) and its companion upper bound, each over random instances and a
    search of the proof's ball, <= 1."""
    v = bound_search_verdict(result)
    if result.extra["upper_status"] != "pass" and v.passed:
        import dataclasses

        return dataclasses.replace(v, status="fail", message=v.message + "; the companion upper bound fails: "
                                   f"max ratio {result.parts['upper']:.4g}")
    return v


# --------------------------------------------------------------------------- (51) from (48): the erratum


@dataclass(frozen=True)
class Eq51ErratumConfig(Config):
    """(51) over the set the bounds (48) allow: as printed (every L), and corrected (L >= 4 sqrt2 K, e^{-4 sqrt2 K})."""

    corrected_exponent: float = field(Real(0, closed="neither"), 4.0, "The corrected bound is "
                                      "e^{-c sqrt2 K} sqrt(l/n) for L >= 4 sqrt2 K, c this number (4; a control "
                                      "puts back the printed 2).")
    L_max: int = field(Int(low=12), 64, "Largest depth searched.")
    draws: int = field(Int(low=1), 16, "Random instances.")
    search_budget: int = field(Int(low=1), 300, "Evaluations of each worst-case search (printed and corrected).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case searches.")


def eq51_premise_sides(inst, exponent=2.0, L_min_factor=0.0):
    """(sqrt(l/n), e^{exponent sqrt2 K} min_k ||p_k||_F) under (48), or None for L < L_min_factor sqrt2 K."""
    inst = _edges(inst)
    if inst["L"] < L_min_factor * SQRT2 * inst["K"]:
        return None
    rng = np.random.default_rng(int(inst["seed"]))
    A, B, V, W, X, Rres, (d, d_out, q, m, L, n) = _premise48_point(inst, rng)
    sigma, dsigma = activation(_BASES[int(inst["base"])], inst["K"], inst["a"])
    h = states(X, A, V, W, sigma)
    Y = h[L] @ B.T - Rres
    loss = float(np.sum(Rres**2) / n)
    P = costates(h, Y, B, V, W, dsigma)
    pmin = float(np.min(np.linalg.norm(P, axis=(1, 2))))
    return math.sqrt(loss / n), math.exp(exponent * SQRT2 * inst["K"]) * max(pmin, 1e-300)


@dataclass(frozen=True)
class ErratumSearchResult:
    """An erratum of a bound: ``printed`` and ``corrected`` BoundResults (each with its search)."""

    printed: object
    corrected: object
    notes: dict = _field(default_factory=dict)


def measure_eq51_erratum(config: Eq51ErratumConfig) -> ErratumSearchResult:
    c = config
    rng = np.random.default_rng(5152)
    rand = [_random_premise48(rng) for _ in range(c.draws)]
    printed = _run_bound(lambda i: eq51_premise_sides(i, 2.0), _dims_premise48(L_max=c.L_max), c, rand,
                         constant=("C in sqrt(l/n) <= C e^{2 sqrt2 K} ||p_k||_F", 1.0))
    # corrected: L >= 4 sqrt2 K; with K <= 2 the box starts at L = 12 (>= 8 sqrt2 = 11.3)
    rand_c = [_random_premise48(rng, L_low=12) for _ in range(c.draws)]
    corrected = _run_bound(lambda i: eq51_premise_sides(i, c.corrected_exponent, 4.0),
                           _dims_premise48(L_low=12, L_max=c.L_max), c, rand_c,
                           constant=(f"C in sqrt(l/n) <= C e^{{{c.corrected_exponent:g} sqrt2 K}} ||p_k||_F", 1.0))
    return ErratumSearchResult(printed, corrected, {"corrected_exponent": c.corrected_exponent})


def erratum_search_verdict(result: ErratumSearchResult) -> Verdict:
    """An erratum: the printed bound fails (random instances or search above 1) and the corrected one holds (both
    <= 1)."""
    return with_measured(erratum_verdict(bound_verdict(result.printed, {"ratio_max": 1.0}),
                                         bound_verdict(result.corrected, {"ratio_max": 1.0})), **result.notes)


# --------------------------------------------------------------------------- (52), first inequality


@dataclass(frozen=True)
class Eq52Config(Config):
    """||dl/dV_{k+1}||_F >= ||p_{k+1}||_F s_min(S_{k+1}) / (L sqrt m) for m >= n (backprop against the SVD)."""

    draws: int = field(Int(low=1), 12, "Random instances.")
    rhs_factor: float = _rhs_factor_field()
    search_budget: int = field(Int(low=1), 300, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")


def eq52_sides(inst, factor=1.0):
    r"""(max_k ||p_{k+1}||_F s_min(S_{k+1}) / (L sqrt m) / ||dl/dV_{k+1}||_F, 1) as (lhs, rhs) of the worst layer.

    The gradient is :func:`theory.implicit.loss_and_gradient`'s, the backward states
    :func:`theory.pl.backward_states`', the singular values numpy's."""
    from theory.implicit import Params, loss_and_gradient

    rng = np.random.default_rng(int(inst["seed"]))
    n = int(inst["n"])
    d, d_out, q, _, L = _sizes({**inst, "m": 1})
    m = n + int(inst["m_extra"])
    base = _BASES[int(inst["base"])]
    A0, B0 = _init_blocks(d, d_out, q)
    A = A0 + inst["sA"] * rng.standard_normal((q, d))
    B = B0 + inst["sB"] * rng.standard_normal((d_out, q))
    Wt = rng.standard_normal((m, q))
    V = inst["sV"] * rng.standard_normal((L, q, m))
    W = Wt + inst["sW"] * rng.standard_normal((L, m, q))
    X = _sphere_rows(n, d, math.sqrt(q), inst["xalign"], rng)
    Y = rng.standard_normal((n, d_out))
    p = Params(A, V, W, B)
    _, g = loss_and_gradient(X, Y, p, base)
    h, P = backward_states(X, Y, p, base)
    best = (0.0, 1.0)
    for k in range(L):
        S = np.sin(h[k] @ W[k].T / math.sqrt(q)) if base == "sin" else np.tanh(h[k] @ W[k].T / math.sqrt(q))
        smin = float(np.linalg.svd(S, compute_uv=False)[n - 1])
        lhs = float(np.linalg.norm(P[k + 1])) * smin / (L * math.sqrt(m))
        rhs = factor * float(np.linalg.norm(g.V[k]))
        if rhs > 0 and lhs / rhs > best[0] / best[1]:
            best = (lhs, rhs)
    return best


def measure_eq52(config: Eq52Config) -> BoundSearchResult:
    c = config
    dims = [Dim("n", 1, 6, "int"), Dim("m_extra", 0, 16, "int"), Dim("d", 1, 4, "int"), Dim("d_out", 1, 3, "int"),
            Dim("extra", 0, 4, "int"), Dim("L", 1, 16, "log-int"), Dim("base", 0, 1, "int"),
            Dim("sA", 1e-3, 1.0, "log"), Dim("sB", 1e-3, 1.0, "log"), Dim("sV", 1e-3, 3.0, "log"),
            Dim("sW", 1e-3, 3.0, "log"), Dim("xalign", 0.0, 1.0), Dim("seed", 0, 2**20, "int")]
    rng = np.random.default_rng(5252)
    rand = [{"n": int(rng.integers(2, 7)), "m_extra": int(rng.integers(0, 17)), "d": int(rng.integers(1, 5)),
             "d_out": int(rng.integers(1, 4)), "extra": int(rng.integers(0, 5)), "L": int(rng.choice([1, 2, 4, 8])),
             "base": int(rng.integers(0, 2)), "sA": 0.1, "sB": 0.1, "sV": 0.5, "sW": 0.1, "xalign": 0.0,
             "seed": int(rng.integers(2**20))} for _ in range(c.draws)]
    bound = _run_bound(lambda i: eq52_sides(i, c.rhs_factor), dims, c, rand)
    lhs, rhs = eq52_sides(bound.search.instance, c.rhs_factor)
    return BoundSearchResult(bound, {"(52), first line": lhs / rhs})


# --------------------------------------------------------------------------- the feature perturbation


@dataclass(frozen=True)
class FeatureConfig(Config):
    """||S_{k+1} - S_bar||_F <= C1 sqrt n + C2 sqrt(nqm) k/(16L) + sqrt m eta_3/32 under the premises the proof
    takes it from: (47) (||V_k||_F <= 1, ||W_k - W_bar||_F <= 1/2, ||A - A_bar||_F <= M), Lemma 20's event,
    ||x_i|| = sqrt q (sigma = sin or tanh)."""

    radius_factor: float = field(Real(0, closed="neither"), 1.0, "Factor on the radii of (47) and on M (1: the "
                                 "hypothesis; a control searches a larger set).")
    drop_term: str = field(Choice("none", "C1"), "none", "A term of the right-hand side left out (\"none\": as "
                           "printed; \"C1\": without C1 sqrt n, a negative control).")
    draws: int = field(Int(low=1), 16, "Random instances.")
    search_budget: int = field(Int(low=1), 400, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")


def feature_sides(inst, radius_factor=1.0, drop_term="none"):
    """(LHS, RHS) of the worst layer k = 0..L-1 of the feature perturbation bound."""
    inst = _edges(inst)
    rng = np.random.default_rng(int(inst["seed"]))
    d, d_out, q, m, L = _sizes(inst)
    n = int(inst["n"])
    base = _BASES[int(inst["base"])]
    eta = _eta(base)
    consts = prop5_constants(base, 3)
    # the premises of the display: (47) (||V_k||_F <= 1, ||W_k - W_bar||_F <= 1/2) with ||A - A_bar||_F <= M
    A0, B0, Wbar, A, B, V, W = _point(inst, radius_factor * proof_radius(n, q, base) * inst["tA"], 0.0,
                                      radius_factor * inst["fv"], radius_factor * 0.5 * inst["fw"], rng)
    X = _sphere_rows(n, d, math.sqrt(q), inst["xalign"], rng)
    sigma, _ = activation(base)
    h = states(X, A, V, W, sigma)
    Sbar = sigma(X @ A0.T @ Wbar.T / math.sqrt(q))
    best = (0.0, 1.0)
    for k in range(L):
        lhs = float(np.linalg.norm(sigma(h[k] @ W[k].T / math.sqrt(q)) - Sbar))
        c1_term = 0.0 if drop_term == "C1" else consts.C1 * math.sqrt(n)
        rhs = c1_term + consts.C2 * math.sqrt(n * q * m) * k / (16.0 * L) + math.sqrt(m) * eta / 32.0
        if lhs / rhs > best[0] / best[1]:
            best = (lhs, rhs)
    return best


def measure_feature(config: FeatureConfig) -> BoundSearchResult:
    c = config
    dims = [d for d in _dims_ball() if d.name not in ("tB_gap", "tZ_gap", "split")] + [
        _gap("fv"), _gap("fw"), Dim("base", 0, 1, "int"), _gap("xalign")]
    rng = np.random.default_rng(5353)
    rand = [{**_random_ball_instance(rng), "base": int(rng.integers(0, 2)), "xalign": 0.0,
             "fv": float(rng.uniform()), "fw": float(rng.uniform())} for _ in range(c.draws)]
    bound = _run_bound(lambda i: feature_sides(i, c.radius_factor, c.drop_term), dims, c, rand)
    lhs, rhs = feature_sides(bound.search.instance, c.radius_factor, c.drop_term)
    return BoundSearchResult(bound, {"feature perturbation": lhs / rhs})


# --------------------------------------------------------------------------- the matrix Chernoff step of Lemma 21


@dataclass(frozen=True)
class ChernoffConfig(Config):
    """P(lambda_min(sum_i X_i) <= t mu_min) against n exp(-e(t) mu_min / (2R)) on Bernoulli diagonal sums, exactly."""

    exponent: str = field(Choice("(1-t)^2", "1-t^2"), "(1-t)^2", "The exponent's factor e(t): \"(1-t)^2\" (Tropp's "
                          "remark) or \"1-t^2\" (as the proof of Lemma 21 prints it).")
    m_max: int = field(Int(low=1), 100_000, "Largest number of summands searched.")
    rhs_factor: float = _rhs_factor_field()
    search_budget: int = field(Int(low=1), 200, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")


def chernoff_sides(inst, exponent="(1-t)^2", factor=1.0):
    """(P / bound, 1): the exact P(min_j Bin_j(m, p) <= t m p) over n independent coordinates, divided by
    n exp(-e(t) m p / 2); computed in logarithms (both sides underflow beyond m p ~ 1400), so the left side is the
    ratio and the right side 1. The ratio is capped at e^700 (so that it stays a float64; any value near the cap is
    a counterexample by hundreds of orders)."""
    from scipy.stats import binom

    n, m, p, t = int(inst["n"]), int(inst["m"]), float(inst["p"]), float(inst["t"])
    k = math.floor(t * m * p)
    log_f = float(binom.logcdf(k, m, p))
    if log_f > -30.0:
        f = math.exp(log_f)
        log_prob = math.log(-math.expm1(n * math.log1p(-f))) if f < 1.0 else 0.0
    else:  # 1 - (1 - F)^n = n F (1 + O(n F))
        log_prob = math.log(n) + log_f
    e = (1.0 - t) ** 2 if exponent == "(1-t)^2" else 1.0 - t * t
    log_bound = math.log(factor * n) - e * m * p / 2.0
    return math.exp(min(log_prob - log_bound, 700.0)), 1.0


def _chernoff_dims(m_max):
    return [Dim("n", 1, 64, "log-int"), Dim("m", 1, m_max, "log-int"), Dim("p", 1e-5, 1.0, "log"),
            Dim("t", 0.0, 1.0)]


def measure_chernoff(config: ChernoffConfig) -> BoundSearchResult:
    c = config
    grid = [{"n": n, "m": m, "p": p, "t": 0.5} for n in (1, 4, 16) for m in (10, 100, 1000) for p in (0.01, 0.1, 0.5)]
    bound = _run_bound(lambda i: chernoff_sides(i, c.exponent, c.rhs_factor), _chernoff_dims(c.m_max), c, grid)
    # the step as Lemma 21 uses it: t = 1/2, searched apart
    half = search_worst_case(lambda i: chernoff_sides({**i, "t": 0.5}, c.exponent, c.rhs_factor),
                             _chernoff_dims(c.m_max)[:3], budget=max(1, c.search_budget // 2), seed=c.search_seed)
    return BoundSearchResult(bound, {f"exponent {c.exponent}": float(bound.search.ratio)},
                             {"at_t_one_half": half.to_measured(), "exponent": c.exponent})


def chernoff_verdict(result: BoundSearchResult) -> Verdict:
    """A bound, thm-6/step-chernoff: exact tail / n exp(-(1-t)^2 mu/(2R)) <= 1 on the grid and the search."""
    return bound_search_verdict(result)


def chernoff_erratum_verdict(result: tuple) -> Verdict:
    """An erratum, thm-6/step-chernoff/erratum: (printed result, corrected result) of :func:`measure_chernoff`."""
    printed, corrected = result
    return erratum_verdict(bound_search_verdict(printed), bound_search_verdict(corrected))


@dataclass(frozen=True)
class ChernoffErratumConfig(Config):
    """The Chernoff step twice: with the printed exponent 1 - t^2 (must fail) and Tropp's (1 - t)^2 (must hold)."""

    m_max: int = field(Int(low=1), 100_000, "Largest number of summands searched.")
    printed_exponent: str = field(Choice("(1-t)^2", "1-t^2"), "1-t^2", "The exponent taken as printed (\"1-t^2\"; a "
                                  "control puts the correct one there).")
    search_budget: int = field(Int(low=1), 200, "Evaluations of each worst-case search.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case searches.")


def measure_chernoff_erratum(config: ChernoffErratumConfig) -> tuple:
    c = config
    kw = {"m_max": c.m_max, "search_budget": c.search_budget, "search_seed": c.search_seed}
    return (measure_chernoff(ChernoffConfig(exponent=c.printed_exponent, **kw)),
            measure_chernoff(ChernoffConfig(exponent="(1-t)^2", **kw)))


# --------------------------------------------------------------------------- Lemma 21 with its printed delta


@dataclass(frozen=True)
class Lemma21DeltaConfig(Config):
    """Lemma 21 at a size where its printed delta is < 1 (sigma = sin, r = 3, uniform unit columns, v_x = 1)."""

    n: int = field(Int(low=1), 2, "Number of columns of X.")
    d: int = field(Int(low=1), 64, "Dimension of the columns.")
    m: int = field(Int(low=1), 2000, "Rows of W.")
    draws: int = field(Int(low=1), 200, "Independent draws of (W, X).")
    columns: str = field(Choice("sphere", "equal"), "sphere", "\"sphere\": i.i.d. uniform unit columns (the "
                         "hypothesis whose proxy v_x = 1 enters delta); \"equal\": one column repeated (a control).")
    seed: int = field(Seed(), 0, "Seed of numpy's default_rng.")


@dataclass(frozen=True)
class Lemma21DeltaResult:
    """``violations`` per draw, ``s_min_over_sqrt_m`` per draw, ``delta`` printed, ``delta_corrected`` (the
    Chernoff exponent m eta^2/(64 M^2 n))."""

    config: Lemma21DeltaConfig = _field(repr=False)
    violations: np.ndarray
    s_min_over_sqrt_m: np.ndarray
    delta: float
    delta_corrected: float


def lemma21_delta(n, m, d, eta, corrected=False, m_sigma=1.0, v_x=1.0, r=3):
    """Lemma 21's delta, n e^{-3 m eta^2 / (64 M^2 n)} + 2 n^2 e^{-d / (2 v_x n^{2/r})} (without the 3 if corrected)."""
    a = 1.0 if corrected else 3.0
    return n * math.exp(-a * m * eta**2 / (64.0 * m_sigma**2 * n)) + 2.0 * n**2 * math.exp(-d / (2.0 * v_x * n ** (2.0 / r)))


def measure_lemma21_delta(config: Lemma21DeltaConfig) -> Lemma21DeltaResult:
    c = config
    eta = _eta("sin")
    rng = np.random.default_rng(c.seed)
    viol, ratio = [], []
    for _ in range(c.draws):
        X = rng.standard_normal((c.d, c.n))
        if c.columns == "equal":
            X[:] = X[:, :1]
        X /= np.linalg.norm(X, axis=0)
        W = rng.standard_normal((c.m, c.d))
        s = float(np.linalg.svd(np.sin(W @ X), compute_uv=False)[c.n - 1]) if c.m >= c.n else 0.0
        viol.append(s < math.sqrt(c.m) * eta / 4.0)
        ratio.append(s / math.sqrt(c.m))
    return Lemma21DeltaResult(c, np.array(viol), np.array(ratio), lemma21_delta(c.n, c.m, c.d, eta),
                              lemma21_delta(c.n, c.m, c.d, eta, corrected=True))


def lemma21_delta_verdict(result: Lemma21DeltaResult) -> Verdict:
    """A frequency, lemma-21/printed-delta: violation frequency <= the printed delta (< 1 at these sizes)."""
    v = frequency_verdict(frequency(result.violations, delta=result.delta), {"delta": result.delta})
    c = result.config
    return with_measured(v, n=c.n, d=c.d, m=c.m, printed_delta=result.delta,
                         delta_with_corrected_chernoff=result.delta_corrected,
                         threshold_s_min_over_sqrt_m=_eta("sin") / 4.0,
                         min_s_min_over_sqrt_m=float(np.min(result.s_min_over_sqrt_m)))


# =========================================================================== presets and registry

STEP_OF = ("implicit-reg/prop-5", "implicit-reg/thm-6")

PRESETS = {
    # "paper": the documents print no search; ten times the check's budget (and deeper networks where it matters)
    "eq48": {"check": Eq48Config(), "paper": Eq48Config(draws=160, search_budget=15_000)},
    "eq50": {"check": Eq50Config(), "paper": Eq50Config(L_max=256, draws=160, search_budget=10_000)},
    "eq51": {"check": Eq51Config(), "paper": Eq51Config(draws=160, search_budget=4000)},
    "eq51_erratum": {"check": Eq51ErratumConfig(), "paper": Eq51ErratumConfig(L_max=256, draws=160,
                                                                             search_budget=3000)},
    "eq52": {"check": Eq52Config(), "paper": Eq52Config(draws=120, search_budget=3000)},
    "feature": {"check": FeatureConfig(), "paper": FeatureConfig(draws=160, search_budget=4000)},
    "chernoff": {"check": ChernoffConfig(), "paper": ChernoffConfig(search_budget=2000)},
    "chernoff_erratum": {"check": ChernoffErratumConfig(), "paper": ChernoffErratumConfig(search_budget=2000)},
    "lemma21_delta": {"check": Lemma21DeltaConfig(), "paper": Lemma21DeltaConfig(draws=3000)},
}


def _register():
    from theory.experiments import register

    def reg(name, config, measure, verdict, claims, summary):
        register(f"implicit_reg.{name}", config=config, presets=PRESETS[name], measure=measure, verdict=verdict,
                 claims=claims, summary=summary)

    def ratio(r):
        return {"ratio": float(r.bound.ratio), "search_ratio": float(r.bound.search.ratio)}

    def rounding_verdict(r):
        return bound_search_verdict(r, 1.0 + ROUNDING)

    reg("eq48", Eq48Config, measure_eq48, rounding_verdict, ("implicit-reg/eq-48",), ratio)
    reg("eq50", Eq50Config, measure_eq50, bound_search_verdict, ("implicit-reg/eq-50",), ratio)
    reg("eq51", Eq51Config, measure_eq51, eq51_verdict, ("implicit-reg/eq-51",), ratio)
    reg("eq51_erratum", Eq51ErratumConfig, measure_eq51_erratum, erratum_search_verdict,
        ("implicit-reg/eq-51/erratum",), lambda r: {"printed_search_ratio": float(r.printed.search.ratio),
                                                    "corrected_search_ratio": float(r.corrected.search.ratio)})
    reg("eq52", Eq52Config, measure_eq52, rounding_verdict, ("implicit-reg/eq-52",), ratio)
    reg("feature", FeatureConfig, measure_feature, bound_search_verdict,
        ("implicit-reg/thm-6/step-feature-perturbation",), ratio)
    reg("chernoff", ChernoffConfig, measure_chernoff, chernoff_verdict, ("implicit-reg/thm-6/step-chernoff",), ratio)
    reg("chernoff_erratum", ChernoffErratumConfig, measure_chernoff_erratum, chernoff_erratum_verdict,
        ("implicit-reg/thm-6/step-chernoff/erratum",),
        lambda r: {"printed_search_ratio": float(r[0].bound.search.ratio),
                   "corrected_search_ratio": float(r[1].bound.search.ratio)})
    reg("lemma21_delta", Lemma21DeltaConfig, measure_lemma21_delta, lemma21_delta_verdict,
        ("implicit-reg/lemma-21/printed-delta",), lambda r: {"freq": float(np.mean(r.violations)), "delta": r.delta})


_register()
