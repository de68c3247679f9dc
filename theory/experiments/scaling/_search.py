r"""Worst-case searches of the bounds of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in
the Large-depth Regime", preprint 2022; chapter 2 of P. Marion's thesis) over their hypothesis sets.

Each bound ``LHS <= RHS`` of the key gets a ratio function ``<name>_ratio(instance) -> (lhs, rhs)`` on one
instance of its hypotheses and a box of parameters (:data:`BOXES`) that :func:`search` hands to
:func:`theory.worst_case.search_worst_case`. The measurements of :mod:`._claims` run these searches inside
their experiments (budget and seed are fields of their configs), so that ``theory run CLAIM-ID`` redraws them.

What an instance computes. Where the two sides have a closed form they are computed exactly: Lemma 19 (the
moment generating functions of the Gaussian, uniform and Rademacher laws, evaluated without cancellation at
small and large lambda), Lemma 20 for Gaussian entries (the statistic is N(0, 1/d)), Lemma 21 (the moments of
:math:`\|Vx\|^2` from the cumulants of the entries, exact for every width and every x), res-1 in
Propositions 1 and 5 (deterministic). Lemma 14 and the limit of Corollary 4 draw their networks with the
exact-in-law Gaussian sampler (:func:`theory.scaling.statistics.fast_norms`: Gaussian weights, any depth and
width at O(1) per layer; the checks' random instances hold the explicit uniform networks), Proposition 7 and
Corollary 8(iii) explicit networks of the three laws. Elsewhere the left-hand side is an
expectation over the weights, estimated by Monte Carlo at the instance with the window of the checks
(:data:`theory.experiments.scaling._iid.Z` standard errors: ``bound <= E X`` compares ``bound`` with
``mean + Z se``, ``E X <= bound`` compares ``mean - Z se`` with ``bound``, ``E X = v`` compares
``|mean - v|`` with ``Z se``); the instance's ratio is the largest of its comparisons. Its draws come from
``numpy.random.default_rng([seed, salt])`` with ``seed`` a coordinate of the box, so an instance is one fixed
draw and the search is deterministic. A search over seeds meets the largest fluctuation among its
evaluations: with Z = 4 a bound attained with equality reads at most about 0.75 over a hundred
evaluations, and a ratio above 1 is a 4-standard-error violation.

The boxes are the statements' hypotheses in coordinates that reach their edges: the activation's two
slopes anywhere in :math:`[1/\sqrt2, 1]` (Table 1: :math:`a|x| \le |\sigma(x)| \le b|x|`,
:math:`1/\sqrt2 \le a < b \le 1`; :math:`\sigma(x) = p x_+ - q x_-` with :math:`p, q` in that interval, the
linear :math:`x/\sqrt2` and the identity included), the three (A1) laws (Gaussian, uniform, Rademacher: all
1-sub-Gaussian, s = 1, the smallest s (A1) allows, where the bounds are tightest), widths and depths over
decades, inputs on the coordinate axes, the diagonals and at random, and a seed. Where a Monte-Carlo mean of
a heavy-tailed variable would not be usable (the log-normal hidden states of Lemma 14 and Proposition 7 when
:math:`L\alpha_L^2` is large) the box stops at :math:`L\alpha_L^2 = 1`; it is said at each box.
Architectures, laws and input directions are categorical coordinates
(:meth:`theory.worst_case.Dim.choice`: each label on an equal share of the unit interval), so that the worst
instance a search reports names them.

Printed constants. The right-hand sides read their constants from :data:`PRINTED`; the negative controls
change one (a constant divided by 4, a term dropped, a corrected form put back to the printed one) and the
search must find the violation by itself.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from theory.experiments.scaling import _iid as iid
from theory.scaling import log_gradient_ratio
from theory.scaling.statistics import MCEstimate, fast_norms, mc_mean
from theory.worst_case import Dim, search_worst_case

__all__ = ["BOXES", "PRINTED", "RATIOS", "search", "exact_quadratic_moments"]

SQRT_HALF = 1.0 / math.sqrt(2.0)
#: the three (A1) laws of the searches (unit variance after the sqrt(d) rescaling, 1-sub-Gaussian)
LAWS = iid.IID_LAWS
#: inputs of the one-layer searches: coordinate axes, diagonals, a Gaussian direction (of the seed)
DIRECTIONS = ("e1", "-e1", "flat", "-flat", "random")
#: inputs of (A4) (Proposition 5): non-atomic ones (see iid.A4_DIRECTIONS: h = flat is an atom of W h for
#: Rademacher W, outside the almost-sure statement)
A4_H = ("e1", "-e1", "random")
A4_Q = ("parallel", "orthogonal", "random")
ARCHS = ("res1", "res2", "res3")
SEED = Dim("seed", 0, 2**20, "int")
SLOPES = (Dim("slope_pos", SQRT_HALF, 1.0), Dim("slope_neg", SQRT_HALF, 1.0))

#: The printed constants the searched right-hand sides use (the controls change them).
PRINTED = {
    # (A2): 1/2 <= E||g||^2/||h||^2 <= 1, E||g||^8 <= C ||h||^8 with the proof's C (Proposition 1)
    "prop-1": {"lower": 0.5, "upper": 1.0, "C": dict(iid.C_A2)},
    # (A4): 1/2 <= E||d_h g q||^2/||q||^2 <= 1 (Proposition 5)
    "prop-5": {"lower": 0.5, "upper": 1.0},
    # (E2) alpha^2/2, alpha^2; (E4) 4; (E5) 2048; (E6) 3072, 384, 1; (E7) 128, 1 (Lemma 15)
    "lemma-15": {"E2": (0.5, 1.0), "E4": 4.0, "E5": 2048.0, "E6": (3072.0, 384.0, 1.0), "E7": (128.0, 1.0)},
    # E||Wx||^2 / 2 <= E||sigma(Wx)||^2 <= E||Wx||^2, E||ReLU(Wx)||^2 = E||Wx||^2 / 2 (Lemma 16)
    "lemma-16": {"lower": 0.5, "upper": 1.0, "relu": 0.5},
    # E||Wx||^2 = s^2 d ||x||^2 (Lemma 17): s^2 (d + d_offset) ||x||^2, d_offset = 0
    "lemma-17": {"d_offset": 0.0},
    # eps|X - X'| is (sqrt 2 s)^2 = 2 s^2 sub-Gaussian (Lemma 19): the variance proxy over s^2
    "lemma-19": {"proxy": 2.0},
    # P(<Vx, y>/(||x|| ||y||) >= t) <= 2 exp(-d t^2/(4 s^2)) (Lemma 20): (factor, exponent's denominator)
    "lemma-20": {"factor": 2.0, "denominator": 4.0},
    # 1 + 128 s^4/d and 1 + 384 s^4/d + 3072 s^6/d^2 (Lemma 21): (constant term, 1/d, 1/d^2)
    "lemma-21": {"m4": (1.0, 128.0), "m8": (1.0, 384.0, 3072.0)},
    # (1 + kappa alpha^2)^L - 1 with kappa = 1/2 (lower) and 1 (upper) (Lemma 14, Proposition 7)
    "lemma-14": {"lower": 0.5, "upper": 1.0},
    "prop-7": {"lower": 0.5, "upper": 1.0},
    # beta = 1/2: |E - (e^{1/2} - 1)| within the window and the finite-L gap (Corollary 4, the limit)
    "cor-4/limit": {"limit": math.expm1(0.5), "finite_L_gap": True},
    # beta = 1/2, corrected (iii): (1 + 1/(2L))^L - 1 <= E <= (1 + 1/L)^L - 1 <= e - 1 (Corollary 8);
    # "printed_lower": use the printed lower bound e^{1/2} - 1 instead (false at finite L)
    "cor-8/iii": {"lower": 0.5, "upper": 1.0, "cap": math.e - 1.0, "printed_lower": False},
}


# --------------------------------------------------------------------------- pieces


def direction(kind, d, seed):
    """A nonzero input of width d: ``"e1"``, ``"-e1"``, ``"flat"`` (all ones), ``"-flat"``, ``"random"``
    (standard Gaussian from ``seed``)."""
    if kind in ("e1", "-e1"):
        x = np.zeros(d)
        x[0] = 1.0 if kind == "e1" else -1.0
        return x
    if kind in ("flat", "-flat"):
        return np.full(d, 1.0 if kind == "flat" else -1.0) / math.sqrt(d)
    if kind == "random":
        x = np.random.default_rng([seed, 7]).standard_normal(d)
        return x if np.any(x) else np.ones(d)
    raise ValueError(f"`kind` of theory.experiments.scaling._search.direction must be one of {DIRECTIONS}; "
                     f"got {kind!r}")


def sigma(x, pos, neg):
    """The activation :math:`\\sigma(x) = p x_+ - q x_-` (slopes p = ``pos``, q = ``neg``)."""
    return np.where(x > 0.0, pos * x, neg * x)


def dsigma(x, pos, neg):
    """Its derivative (the left one, q, at 0: the kernels' convention)."""
    return np.where(x > 0.0, pos, neg)


def rows(law, n, d, rng, scale=1.0):
    """At least n i.i.d. rows of a d x d weight matrix of ``law`` (entries of variance scale^2/d), as an
    (m d, d) array: the rows of m independent matrices."""
    m = max(1, -(-n // d))
    return iid.draw(law, m, d, rng, scale=scale).reshape(m * d, d)


def _estimate(samples):
    return iid._est(np.asarray(samples, dtype=float))


def _exact(value):
    return MCEstimate(float(value), 0.0, 1)


def worst(tracker):
    """(lhs, rhs) of the comparison of ``tracker`` with the largest ratio (a NaN one first)."""
    r = tracker.result()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = r.lhs / r.rhs
    i = int(np.argmax(np.isnan(ratios))) if np.isnan(ratios).any() else int(np.argmax(ratios))
    return float(r.lhs[i]), float(r.rhs[i])


def _slopes(inst):
    return float(inst["slope_pos"]), float(inst["slope_neg"])


def _n(d, work, low, high):
    """Draws such that draws * d^2 stays near ``work`` (between low and high)."""
    return int(min(high, max(low, work // (d * d))))


def _power(kappa, alpha, L):
    """(1 + kappa alpha^2)^L - 1 without cancellation."""
    return math.expm1(L * math.log1p(kappa * alpha * alpha))


def _alpha_beta(L, x):
    """alpha = sqrt(x / L) (so that L alpha^2 = x) and the beta with alpha = L^-beta (L >= 2, x < L)."""
    alpha = math.sqrt(x / L)
    return alpha, -math.log(alpha) / math.log(L)


# =========================================================================== one layer: Propositions 1 and 5


def prop1_ratio(inst):
    r"""(A2) at one instance (Proposition 1, thesis Prop. 2.1): :math:`\kappa = E\|g(h, \theta)\|^2/\|h\|^2`
    against 1/2 and 1 (and 1/2 exactly for res-3), :math:`E\|g\|^8/\|h\|^8` against the proof's C (1 for res-1,
    :math:`1 + 384 s^4 + 3072 s^6 = 3457` for res-2/3). res-1 is deterministic (exact); res-2 and res-3 average
    over draws of W (n d^2 entries about 2.6e5)."""
    P = PRINTED["prop-1"]
    arch, law, d = inst["arch"], inst["law"], int(inst["d"])
    h = direction(inst["h"], d, inst["seed"])
    pos, neg = _slopes(inst) if arch != "res3" else (1.0, 0.0)
    hh = float(h @ h)
    t = iid.Tracker()
    if arch == "res1":
        g = sigma(h, pos, neg)
        kappa = _exact(g @ g / hh)
        m8 = _exact(kappa.mean ** 4)
    else:
        W = iid.draw(law, _n(d, 2**18, 250, 4000), d, np.random.default_rng([inst["seed"], 1]))
        g = sigma(W @ h, pos, neg)
        k = np.sum(g * g, axis=1) / hh
        kappa, m8 = _estimate(k), _estimate(k**4)
    iid.lower(t, P["lower"], kappa)
    iid.upper(t, kappa, P["upper"])
    if arch == "res3":
        iid.equal(t, kappa, 0.5)
    iid.upper(t, m8, P["C"][arch])
    return worst(t)


def prop5_ratio(inst):
    r"""(A4) at one instance (Proposition 5, thesis Prop. 2.5): :math:`E\|\partial_h g(h, \theta) q\|^2/\|q\|^2`
    against 1/2 and 1 (1/2 exactly for res-3), for a non-atomic h and q parallel, orthogonal to h or random.
    res-1 is deterministic (:math:`\sigma'(h) \odot q`); res-2 and res-3 average over draws of W of
    :math:`D W q`, :math:`D = \mathrm{diag}(\sigma'(W h))`."""
    P = PRINTED["prop-5"]
    arch, law, d = inst["arch"], inst["law"], int(inst["d"])
    h = direction(inst["h"], d, inst["seed"])
    rng = np.random.default_rng([inst["seed"], 5])
    qkind = inst["q"]
    if qkind == "parallel":
        q = h
    else:
        u = rng.standard_normal(d)
        q = u - (u @ h) / (h @ h) * h if qkind == "orthogonal" else u
        if not np.any(q):
            q = h
    pos, neg = _slopes(inst) if arch != "res3" else (1.0, 0.0)
    qq = float(q @ q)
    t = iid.Tracker()
    if arch == "res1":
        dq = dsigma(h, pos, neg) * q
        kappa = _exact(dq @ dq / qq)
    else:
        W = iid.draw(law, _n(d, 2**18, 250, 4000), d, rng)
        dq = dsigma(W @ h, pos, neg) * (W @ q)
        kappa = _estimate(np.sum(dq * dq, axis=1) / qq)
    iid.lower(t, P["lower"], kappa)
    iid.upper(t, kappa, P["upper"])
    if arch == "res3":
        iid.equal(t, kappa, 0.5)
    return worst(t)


# =========================================================================== Lemmas 15, 16, 17


def lemma15_ratio(inst):
    r"""(E1)-(E7) of Lemma 15 (thesis Lemma 2.15) at one fixed h, labels as its proof uses them:
    :math:`Y_1 = \alpha^2\|V g\|^2/\|h\|^2`, :math:`Y_2 = 2\alpha\langle h, V g\rangle/\|h\|^2` over draws of
    (V, W) of the two laws; (E1) :math:`E Y_2 = 0`, (E2) :math:`\alpha^2/2 \le E Y_1 \le \alpha^2`, (E3)
    :math:`E Y_1 Y_2 = 0`, (E4) :math:`E Y_2^2 \le 4\alpha^2/d`, (E5) :math:`E Y_2^4 \le 2048 s^4\alpha^4/d^2`,
    (E6) :math:`E Y_1^4 \le C(3072 s^6/d^2 + 384 s^4/d + 1)\alpha^8`, (E7)
    :math:`E Y_1^2 \le \sqrt C (128 s^4/d + 1)\alpha^4`, s = 1, C of (A2) (1 for res-1, 3457 for res-2/3)."""
    P = PRINTED["lemma-15"]
    arch, d, alpha = inst["arch"], int(inst["d"]), float(inst["alpha"])
    h = direction(inst["h"], d, inst["seed"])
    pos, neg = _slopes(inst) if arch != "res3" else (1.0, 0.0)
    rng = np.random.default_rng([inst["seed"], 15])
    n = _n(d, 2**17, 200, 4000)
    V = iid.draw(inst["law_v"], n, d, rng)
    if arch == "res1":
        g = np.broadcast_to(sigma(h, pos, neg), (n, d))
    else:
        g = sigma(iid.draw(inst["law_w"], n, d, rng) @ h, pos, neg)
    f = np.einsum("nij,nj->ni", V, g)
    hh = float(h @ h)
    y1 = alpha**2 * np.sum(f * f, axis=1) / hh
    y2 = 2 * alpha * (f @ h) / hh
    C = iid.C_A2[arch]
    e = {k: _estimate(v) for k, v in {"Y2": y2, "Y1": y1, "Y1Y2": y1 * y2, "Y2^2": y2**2, "Y2^4": y2**4,
                                       "Y1^4": y1**4, "Y1^2": y1**2}.items()}
    lo, hi = P["E2"]
    c6, c6b, c6c = P["E6"]
    c7, c7b = P["E7"]
    t = iid.Tracker()
    iid.equal(t, e["Y2"], 0.0)
    iid.lower(t, lo * alpha**2, e["Y1"])
    iid.upper(t, e["Y1"], hi * alpha**2)
    iid.equal(t, e["Y1Y2"], 0.0)
    iid.upper(t, e["Y2^2"], P["E4"] * alpha**2 / d)
    iid.upper(t, e["Y2^4"], P["E5"] * alpha**4 / d**2)
    iid.upper(t, e["Y1^4"], C * (c6 / d**2 + c6b / d + c6c) * alpha**8)
    iid.upper(t, e["Y1^2"], math.sqrt(C) * (c7 / d + c7b) * alpha**4)
    return worst(t)


#: the entry laws of Lemma 16's box: the three (A1) laws and a symmetric law of finite variance outside (A1)
LEMMA16_LAWS = LAWS + ("student5",)


def lemma16_ratio(inst):
    r"""Lemma 16 (thesis Lemma 2.16) at one x: :math:`E\|Wx\|^2/2 \le E\|\sigma(Wx)\|^2 \le E\|Wx\|^2` and
    :math:`E\|\mathrm{ReLU}(Wx)\|^2 = E\|Wx\|^2/2` (paired difference), for symmetric entries of finite
    variance (the three (A1) laws and Student t(5)). The rows of W are i.i.d., so each expectation is d times
    that of one row, estimated over about 8000 rows."""
    P = PRINTED["lemma-16"]
    law, d = inst["law"], int(inst["d"])
    x = direction(inst["x"], d, inst["seed"])
    pos, neg = _slopes(inst)
    X = rows(law, 8000, d, np.random.default_rng([inst["seed"], 16])) @ x
    wx2, sig2, relu2 = d * X**2, d * sigma(X, pos, neg) ** 2, d * np.maximum(X, 0.0) ** 2
    t = iid.Tracker()
    iid.lower(t, P["lower"] * float(wx2.mean()), _estimate(sig2))
    iid.upper(t, _estimate(sig2), P["upper"] * float(wx2.mean()))
    iid.equal(t, _estimate(relu2 - P["relu"] * wx2), 0.0)
    return worst(t)


LEMMA17_LAWS = LAWS + ("centered_exponential", "student5")


def lemma17_ratio(inst):
    r"""Lemma 17 (thesis Lemma 2.17) at one x: :math:`E\|Wx\|^2 = s^2 d\|x\|^2` for centered i.i.d. entries of
    variance :math:`s^2` (symmetric or not: the three (A1) laws, Exp(1) - 1, Student t(5)), within the
    Monte-Carlo window, over about 8000 i.i.d. rows."""
    law, d, scale = inst["law"], int(inst["d"]), float(inst["scale"])
    x = direction(inst["x"], d, inst["seed"])
    X = rows(law, 8000, d, np.random.default_rng([inst["seed"], 17]), scale=scale) @ x
    t = iid.Tracker()
    s2 = scale**2 / d  # the variance of an entry
    iid.equal(t, _estimate(d * X**2), s2 * (d + PRINTED["lemma-17"]["d_offset"]) * float(x @ x))
    return worst(t)


# =========================================================================== Appendix C: Lemmas 19, 20, 21


def log_mgf(law, lam):
    r"""ln E e^{lam X} for the unit-variance ``law`` (Gaussian, uniform on :math:`[-\sqrt3, \sqrt3]`, Rademacher),
    evaluated without cancellation: :math:`\ln\cosh\lambda = \ln(1 + 2\sinh^2(\lambda/2))` and
    :math:`\ln(\sinh x/x)` by its series for small x and :math:`x - \ln 2x + \ln(1 - e^{-2x})` for large x."""
    lam = abs(float(lam))
    if law == "gaussian":
        return lam * lam / 2.0
    if law == "rademacher":
        if lam > 20.0:
            return lam - math.log(2.0) + math.log1p(math.exp(-2.0 * lam))
        return math.log1p(2.0 * math.sinh(lam / 2.0) ** 2)
    if law == "uniform":
        x = math.sqrt(3.0) * lam
        if x < 1e-2:
            x2 = x * x
            return math.log1p(x2 / 6.0 + x2 * x2 / 120.0 + x2**3 / 5040.0)
        if x > 20.0:
            return x - math.log(2.0 * x) + math.log1p(-math.exp(-2.0 * x))
        return math.log1p((math.sinh(x) - x) / x)
    raise ValueError(f"`law` of theory.experiments.scaling._search.log_mgf must be one of {LAWS}; got {law!r}")


def lemma19_ratio(inst):
    r"""Lemma 19 (thesis Lemma 2.19) at one lambda: :math:`\ln E e^{\lambda\varepsilon|X - X'|} \le
    \lambda^2 (2 s^2)/2` (sub-Gaussian diameter :math:`\sqrt 2 s`), s = 1 (the three laws are exactly
    1-sub-Gaussian); :math:`\varepsilon|X - X'|` has the law of :math:`X - X'`, so the left side is
    :math:`\ln M(\lambda) + \ln M(-\lambda)` (closed forms, :func:`log_mgf`)."""
    law, lam, s = inst["law"], float(inst["lambda"]), float(inst["s"])
    lhs = log_mgf(law, lam) + log_mgf(law, -lam)
    return lhs, PRINTED["lemma-19"]["proxy"] * s * s * lam * lam / 2.0 * (1 + 1e-12)


def lemma20_ratio(inst):
    r"""Lemma 20 (thesis Lemma 2.20) at one (x, y, t): :math:`P(\langle Vx, y\rangle/(\|x\|\|y\|) \ge t) \le
    2\exp(-d t^2/(4 s^2))`, s = 1, entries of variance 1/d. Gaussian entries: the statistic is N(0, 1/d), the
    tail :math:`Q(t\sqrt d)` in closed form; uniform and Rademacher: the frequency over 4000 draws of V, compared
    with its window (mean - Z se; a frequency of 0 reads 0). The coordinate ``u`` is :math:`t\sqrt d`."""
    P = PRINTED["lemma-20"]
    law, d, u = inst["law"], int(inst["d"]), float(inst["u"])
    t_ = u / math.sqrt(d)
    rhs = P["factor"] * math.exp(-d * t_**2 / P["denominator"])
    if law == "gaussian":
        return float(stats.norm.sf(u)), rhs
    x = direction(inst["x"], d, inst["seed"])
    y = direction(inst["y"], d, inst["seed"] + 1)
    V = iid.draw(law, _n(d, 2**20, 4000, 4000), d, np.random.default_rng([inst["seed"], 20]))
    stat = np.einsum("i,nij,j->n", y, V, x) / (np.linalg.norm(x) * np.linalg.norm(y))
    t = iid.Tracker()
    iid.upper(t, _estimate((stat >= t_).astype(float)), rhs)
    return worst(t)


def _moments_from_cumulants(k2, k4, k6, k8):
    """E S^2, E S^4, E S^6, E S^8 of a symmetric variable with these cumulants (odd cumulants zero)."""
    m2 = k2
    m4 = k4 + 3 * k2**2
    m6 = k6 + 15 * k4 * k2 + 15 * k2**3
    m8 = k8 + 28 * k6 * k2 + 35 * k4**2 + 210 * k4 * k2**2 + 105 * k2**4
    return m2, m4, m6, m8


#: even moments (2, 4, 6, 8) of the unit-variance entry laws
_ENTRY_MOMENTS = {"gaussian": (1.0, 3.0, 15.0, 105.0), "rademacher": (1.0, 1.0, 1.0, 1.0),
                  "uniform": (1.0, 9.0 / 5.0, 27.0 / 7.0, 9.0)}


def _cumulants(m2, m4, m6, m8):
    """Even cumulants of a symmetric variable from its even moments."""
    k4 = m4 - 3 * m2**2
    k6 = m6 - 15 * m4 * m2 + 30 * m2**3
    k8 = m8 - 28 * m6 * m2 - 35 * m4**2 + 420 * m4 * m2**2 - 630 * m2**4
    return m2, k4, k6, k8


def exact_quadratic_moments(law, x):
    r""":math:`E\|Vx\|^4/\|x\|^4` and :math:`E\|Vx\|^8/\|x\|^8` exactly, for V with i.i.d. entries
    :math:`w/\sqrt d`, w of the unit-variance ``law``.

    The rows give i.i.d. :math:`S_i = \langle V_i, x\rangle/\|x\|` whose cumulants are
    :math:`\kappa_n(S) = d^{-n/2}\kappa_n(w)\sum_j (x_j/\|x\|)^n`; their moments follow, and
    :math:`Q = \sum_i S_i^2` has :math:`E Q^2 = d m_4 + d(d-1) m_2^2` and
    :math:`E Q^4 = d m_8 + 4d(d-1) m_6 m_2 + 3d(d-1) m_4^2 + 6d(d-1)(d-2) m_4 m_2^2 + d(d-1)(d-2)(d-3) m_2^4`.
    Gaussian: :math:`1 + 2/d` and :math:`(d+2)(d+4)(d+6)/d^3` (chi-square moments).

    Examples
    --------
    >>> import numpy as np
    >>> [round(v, 12) for v in exact_quadratic_moments("gaussian", np.ones(4))]
    [1.5, 7.5]
    >>> [round(v, 12) for v in exact_quadratic_moments("rademacher", np.eye(3)[0])]
    [1.0, 1.0]
    """
    x = np.asarray(x, dtype=float)
    d = x.size
    u = x / np.linalg.norm(x)
    k2, k4, k6, k8 = _cumulants(*_ENTRY_MOMENTS[law])
    u2 = u * u
    u4 = u2 * u2
    p = {4: float(np.sum(u4)), 6: float(np.sum(u4 * u2)), 8: float(np.sum(u4 * u4))}
    m2, m4, m6, m8 = _moments_from_cumulants(k2 / d, k4 * p[4] / d**2, k6 * p[6] / d**3, k8 * p[8] / d**4)
    q2 = d * m4 + d * (d - 1) * m2**2
    q4 = (d * m8 + 4 * d * (d - 1) * m6 * m2 + 3 * d * (d - 1) * m4**2 + 6 * d * (d - 1) * (d - 2) * m4 * m2**2
          + d * (d - 1) * (d - 2) * (d - 3) * m2**4)
    return float(q2), float(q4)


def lemma21_ratio(inst):
    r"""Lemma 21 (thesis Lemma 2.21) at one (law, d, x), exactly (:func:`exact_quadratic_moments`):
    :math:`E\|Vx\|^4/\|x\|^4 \le 1 + 128 s^4/d` and :math:`E\|Vx\|^8/\|x\|^8 \le 1 + 384 s^4/d + 3072 s^6/d^2`,
    s = 1. Both are attained as d grows (the ratio tends to 1)."""
    P = PRINTED["lemma-21"]
    law, d = inst["law"], int(inst["d"])
    x = direction(inst["x"], d, inst["seed"])
    q2, q4 = exact_quadratic_moments(law, x)
    a, b = P["m4"]
    a8, b8, c8 = P["m8"]
    t = iid.Tracker()
    iid.upper(t, _exact(q2), a + b / d)
    iid.upper(t, _exact(q4), a8 + b8 / d + c8 / d**2)
    return worst(t)


# =========================================================================== over depth: Lemma 14, Cor. 4, Prop. 7, Cor. 8


def _fast_mean(arch, slope, d, L, beta, runs, h_kind, seed):
    """E||h_L - h_0||^2/||h_0||^2 by the exact-in-law Gaussian sampler (theory.scaling.statistics.fast_norms);
    ``h_kind`` is the direction of h_0 (:func:`direction`), which only res-1 reads."""
    act = "relu" if arch == "res3" else "leaky_relu"
    rng = np.random.default_rng([seed, 14])
    h0 = direction(h_kind, d, seed) if arch == "res1" else None
    f = fast_norms(L, d, beta, runs, arch=arch, activation=act, slope=slope, h0=h0, rng=rng)
    return mc_mean(np.exp(2.0 * f.log_dist_ratio))


def lemma14_ratio(inst):
    r"""Lemma 14 (thesis Lemma 2.14) at one network: :math:`(1 + \alpha^2/2)^L - 1 \le E\|h_L - h_0\|^2/\|h_0\|^2
    \le (1 + \alpha^2)^L - 1`, and the exact value :math:`(1 + \kappa\alpha^2)^L - 1` where
    :math:`\kappa = E\|g\|^2/\|h\|^2` is a constant (res-3: 1/2; res-2 with Gaussian W: :math:`(1 + s^2)/2`).
    Gaussian weights (the exact-in-law sampler: 400 runs, fewer for wide deep res-1), leaky slope s in
    :math:`[1/\sqrt 2, 1]` (1: the identity), the coordinate ``x`` is :math:`L\alpha^2` (up to 1: beyond, the
    log-normal tail makes a mean over a few hundred runs unusable)."""
    P = PRINTED["lemma-14"]
    arch, d, L = inst["arch"], int(inst["d"]), int(inst["L"])
    alpha, beta = _alpha_beta(L, float(inst["x"]))
    slope = float(inst["slope"])
    runs = 400 if arch != "res1" else int(min(400, max(100, 2e6 // (L * d))))
    est = _fast_mean(arch, slope, d, L, beta, runs, inst["h"], inst["seed"])
    t = iid.Tracker()
    iid.lower(t, _power(P["lower"], alpha, L), est)
    iid.upper(t, est, _power(P["upper"], alpha, L))
    if arch != "res1":
        iid.equal(t, est, _power(0.5 if arch == "res3" else (1 + slope**2) / 2, alpha, L))
    return worst(t)


def cor4_limit_ratio(inst):
    r"""The limit of Corollary 4 at beta = 1/2 (thesis Cor. 2.4) at one depth: res-3,
    :math:`|E\|h_L - h_0\|^2/\|h_0\|^2 - (e^{1/2} - 1)|` against Z standard errors plus the finite-L gap
    :math:`|(1 + 1/(2L))^L - e^{1/2}|`, by the exact-in-law Gaussian sampler (400 runs)."""
    P = PRINTED["cor-4/limit"]
    d, L = int(inst["d"]), int(inst["L"])
    est = _fast_mean("res3", 0.8, d, L, 0.5, 400, "e1", inst["seed"])
    gap = abs(_power(0.5, L**-0.5, L) - P["limit"]) if P["finite_L_gap"] else 0.0
    return abs(est.mean - P["limit"]), iid.Z * est.se + gap


def _gradient_mean(arch, slope, law, d, L, beta, seed):
    r"""E||p_0 - p_L||^2/||p_L||^2 over explicit networks of ``law`` with an isotropic p_L ((A3)) and a
    Gaussian h_0 (non-atomic), by the package's backward pass (:func:`theory.scaling.log_gradient_ratio`)."""
    act = "relu" if arch == "res3" else "leaky_relu"
    rng = np.random.default_rng([seed, 7])
    runs = _n(d, 2 * 10**5 // L, 40, 200)
    out = np.empty(runs)
    for r in range(runs):
        V = iid.draw(law, L, d, rng)
        W = None if arch == "res1" else iid.draw(law, L, d, rng)
        h0, pL = rng.standard_normal(d), rng.standard_normal(d)
        out[r] = log_gradient_ratio(h0, V, W, pL, beta=beta, arch=arch, activation=act, slope=slope)
    return mc_mean(np.exp(2.0 * out))


def _gradient_tests(t, est, arch, slope, alpha, L, lower_kappa, upper_kappa):
    iid.lower(t, _power(lower_kappa, alpha, L), est)
    iid.upper(t, est, _power(upper_kappa, alpha, L))
    if arch != "res1":  # kappa' of (A4) is a constant: 1/2 (res-3), (1 + s^2)/2 (res-2, symmetric W)
        iid.equal(t, est, _power(0.5 if arch == "res3" else (1 + slope**2) / 2, alpha, L))


def prop7_ratio(inst):
    r"""Proposition 7 (thesis Prop. 2.7) at one network: :math:`(1 + \alpha^2/2)^L - 1 \le
    E\|p_0 - p_L\|^2/\|p_L\|^2 \le (1 + \alpha^2)^L - 1`, exact at :math:`(1 + \kappa'\alpha^2)^L - 1` where
    :math:`\kappa'` of (A4) is a constant (res-3, res-2). Explicit networks of the three laws (40 to 200 of
    them), isotropic p_L, leaky slope s in :math:`[1/\sqrt 2, 1]`; ``x`` is :math:`L\alpha^2`, up to 1."""
    P = PRINTED["prop-7"]
    arch, d, L = inst["arch"], int(inst["d"]), int(inst["L"])
    alpha, beta = _alpha_beta(L, float(inst["x"]))
    slope = float(inst["slope"])
    est = _gradient_mean(arch, slope, inst["law"], d, L, beta, inst["seed"])
    t = iid.Tracker()
    _gradient_tests(t, est, arch, slope, alpha, L, P["lower"], P["upper"])
    return worst(t)


def cor8iii_ratio(inst):
    r"""Corollary 8(iii) corrected (thesis Cor. 2.8) at one network, beta = 1/2: :math:`(1 + 1/(2L))^L - 1 \le
    E\|p_0 - p_L\|^2/\|p_L\|^2 \le (1 + 1/L)^L - 1 \le e - 1` (Proposition 7 at :math:`\alpha = L^{-1/2}`),
    exact where :math:`\kappa'` is a constant; networks as :func:`prop7_ratio`, L from 1."""
    P = PRINTED["cor-8/iii"]
    arch, d, L = inst["arch"], int(inst["d"]), int(inst["L"])
    alpha, slope = L**-0.5, float(inst["slope"])
    est = _gradient_mean(arch, slope, inst["law"], d, L, 0.5, inst["seed"])
    t = iid.Tracker()
    _gradient_tests(t, est, arch, slope, alpha, L, P["lower"], P["upper"])
    if P["printed_lower"]:
        iid.lower(t, math.expm1(0.5), est)
    iid.upper(t, est, P["cap"])
    return worst(t)


# =========================================================================== the boxes

_D_ONE_LAYER = Dim("d", 1, 32, "log-int")
#: claim -> (ratio function, box, printed constant or None)
BOXES = {
    "prop-1": (prop1_ratio, (Dim.choice("arch", ARCHS), *SLOPES, Dim.choice("law", LAWS), _D_ONE_LAYER,
                             Dim.choice("h", DIRECTIONS), SEED), None),
    "prop-5": (prop5_ratio, (Dim.choice("arch", ARCHS), *SLOPES, Dim.choice("law", LAWS), _D_ONE_LAYER,
                             Dim.choice("h", A4_H), Dim.choice("q", A4_Q), SEED), None),
    "lemma-15": (lemma15_ratio, (Dim.choice("arch", ARCHS), *SLOPES, Dim.choice("law_v", LAWS),
                                 Dim.choice("law_w", LAWS), Dim("d", 1, 16, "log-int"), Dim("alpha", 1e-3, 1.0, "log"),
                                 Dim.choice("h", DIRECTIONS), SEED), None),
    "lemma-16": (lemma16_ratio, (Dim.choice("law", LEMMA16_LAWS), *SLOPES, Dim("d", 1, 64, "log-int"),
                                 Dim.choice("x", DIRECTIONS), SEED), None),
    "lemma-17": (lemma17_ratio, (Dim.choice("law", LEMMA17_LAWS), Dim("scale", 1e-2, 1e2, "log"),
                                 Dim("d", 1, 64, "log-int"), Dim.choice("x", DIRECTIONS), SEED), None),
    "lemma-19": (lemma19_ratio, (Dim.choice("law", LAWS), Dim("lambda", 1e-4, 1e3, "log"), Dim("s", 1.0, 4.0)),
                 ("2 (variance proxy 2 s^2)", 2.0)),
    "lemma-20": (lemma20_ratio, (Dim.choice("law", LAWS), Dim("d", 1, 16, "log-int"), Dim("u", 0.0, 6.0),
                                 Dim.choice("x", DIRECTIONS), Dim.choice("y", DIRECTIONS),
                                 SEED), ("2 (factor of the tail)", 2.0)),
    "lemma-21": (lemma21_ratio, (Dim.choice("law", LAWS), Dim("d", 1, 10**5, "log-int"),
                                 Dim.choice("x", DIRECTIONS), SEED), None),
    "lemma-14": (lemma14_ratio, (Dim.choice("arch", ARCHS), Dim("slope", SQRT_HALF, 1.0), Dim("d", 2, 64, "log-int"),
                                 Dim("L", 2, 300, "log-int"), Dim("x", 1e-3, 1.0, "log"),
                                 Dim.choice("h", DIRECTIONS), SEED), None),
    "cor-4/limit": (cor4_limit_ratio, (Dim("d", 2, 64, "log-int"), Dim("L", 10, 1000, "log-int"), SEED), None),
    "prop-7": (prop7_ratio, (Dim.choice("arch", ARCHS), Dim("slope", SQRT_HALF, 1.0), Dim.choice("law", LAWS),
                             Dim("d", 2, 16, "log-int"), Dim("L", 2, 64, "log-int"), Dim("x", 1e-2, 1.0, "log"),
                             SEED), None),
    "cor-8/iii": (cor8iii_ratio, (Dim.choice("arch", ARCHS), Dim("slope", SQRT_HALF, 1.0), Dim.choice("law", LAWS),
                                  Dim("d", 2, 16, "log-int"), Dim("L", 1, 64, "log-int"), SEED), None),
}
RATIOS = {claim: box[0] for claim, box in BOXES.items()}

def search(claim, budget, seed):
    """The worst-case search of ``claim``'s bound (:data:`BOXES`) under ``budget`` evaluations and ``seed``
    (:func:`theory.worst_case.search_worst_case`). Its categorical coordinates (architecture, law, input
    direction) are :meth:`theory.worst_case.Dim.choice` ones: the worst instance carries their labels."""
    if claim not in BOXES:
        raise ValueError(f"`claim` of theory.experiments.scaling._search.search must be one of {sorted(BOXES)}; "
                         f"got {claim!r}")
    ratio, dims, constant = BOXES[claim]
    return search_worst_case(ratio, dims, budget=budget, seed=seed, constant=constant)
