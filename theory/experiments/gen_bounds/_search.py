"""Worst-case searches of the bounds of the ``gen-bounds`` key (thesis (Marion), chapter 4).

Each bound's measurement runs :func:`theory.worst_case.search_worst_case` over the statement's hypothesis set,
in coordinates that reach its extremes; this module builds the instances. Conventions shared by the searches:

* maps and activations carry their Lipschitz constant as a scale ``c``: the maps of (4.5) are
  f_ij(h) = (b + c tanh(h_j)) e_i (K_f = c, M = b + c tanh(R_X) on the ball X of radius R_X), the activation of
  (4.8) and (4.10) is c act with act one of tanh, relu, identity (K_sigma = c, sigma(0) = 0,
  M = c sup_{|z| <= R_X} |act(z)|); a network with activation c act is the network with weights c W and act;
* parameters are put on the edge of the class: a direction that concentrates on one coordinate (``conc``
  = 1: the aligned case where Gronwall's inequality is tight) blended with a Gaussian one (``seed``),
  rescaled to the radius;
* the generalization bounds (Thm 4.4, Cor. 4.5, Thm 4.8) are searched on two-point data laws,
  (x_1, y_1) with probability p and (x_2, y_2) with probability 1 - p, points on the spheres of radii R_X
  and R_Y, loss l(a, b) = ||a - b|| (K_l = 1: both sides of the bounds are proportional to K_l). Then
  R(theta) - R_n(theta) = (p - N / n) (l_1(theta) - l_2(theta)) with N ~ Binomial(n, p), so the law of the
  deviation is exact (no Monte Carlo) and its upper delta-quantile is computed from the binomial weights.
"""

from __future__ import annotations

import math

import numpy as np

from theory.worst_case import Dim, search_worst_case

__all__ = ["ACTIVATIONS", "upper_quantile", "two_point_quantile", "unit", "blend", "maps", "sup_activation",
           "thm44_corrected_constant", "cor45_corrected_constant",
           "prop42_searches", "prop43_searches", "prop46_searches", "cor49_search", "golowich_search",
           "golowich_lower", "frobenius_log_product", "thm44_searches", "cor45_searches", "thm48_search"]

#: the activations of the searches of (4.8) and (4.10), by index of the ``act`` coordinate
ACTIVATIONS = ("tanh", "relu", "identity")

#: smallest perturbation ||theta - theta'|| / R of a Lipschitz quotient (below it, a quotient of rounding errors)
_RESOLVED = 1e-6

#: binomial mass dropped at each end when the law of the sample counts is tabulated (far below any delta)
_TAIL = 1e-16


# ------------------------------------------------------------------------------------------ shared pieces

def upper_quantile(values, probs, delta):
    """The largest value v of a discrete law with P(V >= v) > delta.

    Then P(V > v) <= delta: a bound b holds with probability at least 1 - delta iff v <= b, and where v > b,
    P(V > b) > delta.

    Parameters
    ----------
    values : array_like, shape (k,)
        The support of V.
    probs : array_like, shape (k,)
        Their probabilities.
    delta : float
        The level, in (0, 1).

    Returns
    -------
    float
        The upper delta-quantile v.
    """
    values = np.asarray(values, dtype=float)
    order = np.argsort(-values, kind="stable")
    cum = np.cumsum(np.asarray(probs, dtype=float)[order])
    j = int(np.searchsorted(cum, delta, side="right"))
    return float(values[order][min(j, values.size - 1)])


def two_point_quantile(n, p, delta, deviation):
    """Upper delta-quantile (:func:`upper_quantile`) of ``deviation(g)``, g = p - N / n, N ~ Binomial(n, p).

    The counts of binomial mass below 1e-16 at either end are left out.

    Parameters
    ----------
    n : int
        Sample size.
    p : float
        Probability of the first point, in (0, 1).
    delta : float
        The level, in (0, 1).
    deviation : callable
        Maps the array of the gaps g (one per count N) to the deviations.

    Returns
    -------
    float
    """
    from scipy.stats import binom

    lo = int(max(0, binom.ppf(_TAIL, n, p) - 1))
    hi = int(min(n, binom.isf(_TAIL, n, p) + 1))
    k = np.arange(lo, hi + 1)
    probs = binom.pmf(k, n, p)
    return upper_quantile(deviation(p - k / n), probs, delta)


def unit(d, angle):
    """The unit vector of R^d at ``angle`` in the plane (e_1, e_2) (d = 1: the sign of cos(angle))."""
    u = np.zeros(d)
    if d == 1:
        u[0] = 1.0 if math.cos(angle) >= 0 else -1.0
    else:
        u[0], u[1] = math.cos(angle), math.sin(angle)
    return u


def blend(conc, aligned, noise):
    """conc * aligned + (1 - conc) * noise, rescaled to (1,1)-norm 1 along the last two axes (or the last)."""
    v = conc * aligned + (1.0 - conc) * noise
    axes = tuple(range(1, v.ndim)) if v.ndim > 1 else (0,)
    s = np.abs(v).sum(axis=axes, keepdims=True)
    return v / np.where(s > 0, s, 1.0)


def maps(d, b, c):
    """The d^2 maps f_ij(h) = (b + c tanh(h_j)) e_i of (4.5), as the ``fields`` of
    :func:`theory.generalization.parameterized_ode` (K_f = c, M = b + c tanh(R_X))."""
    m = d * d

    def fields(h):
        g = b + c * np.tanh(h)  # (batch, d)
        F = np.zeros((m, h.shape[0], d))
        for i in range(d):
            F[i * d:(i + 1) * d, :, i] = g.T
        return F

    return fields


def sup_activation(act, R_X):
    """sup_{|z| <= R_X} |act(z)|: tanh(R_X) for tanh, R_X for relu and the identity."""
    return math.tanh(R_X) if act == "tanh" else R_X


def _inputs(d, R_X, rng, extra=4):
    """A batch on the sphere of radius R_X: +-R_X e_j and ``extra`` Gaussian directions."""
    e = np.eye(d)
    g = rng.normal(size=(extra, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return R_X * np.vstack([e, -e, g])


def thm44_corrected_constant(K_l, K_f, R_theta, R_X, R_Y, M):
    r"""The constant B of Thm 4.4 that its proof gives once Prop. 4.2's constant is the one its proof
    establishes: :math:`B = 3 \max(K_\ell C, 2 \bar M)`, with :math:`C = M (K_f R e^{K_f R} + 1) e^{K_f R}` and
    :math:`\bar M = K_\ell (R_X + M R e^{K_f R} + R_Y)`.

    The proof (Sec. 4.A.4) needs a B~ with C K_l <= B~ and 2 M-bar <= B~ and takes B = 3 B~; the printed
    B = 6 K_l K_f e^{K_f R} (R_X + M R e^{K_f R} + R_Y) = 3 (2 M-bar K_f e^{K_f R}) is such a B~ only when
    K_f e^{K_f R} >= 1 (and, through the printed C, K_f R e^{K_f R} >= 1).

    Parameters
    ----------
    K_l, K_f, R_theta, R_X, R_Y : float
        Lipschitz constants of the loss and the maps, radii of the parameters, inputs and targets (> 0).
    M : float
        Bound on the maps on the ball of radius R_X (>= 0).

    Returns
    -------
    float
        B.
    """
    import theory.generalization as G

    C = G.prop_4_2_lipschitz_proof(M, K_f, R_theta)
    M_bar = K_l * (G.prop_4_2_output_bound(R_X, M, K_f, R_theta) + R_Y)
    return 3.0 * max(K_l * C, 2.0 * M_bar)


def cor45_corrected_constant(K_l, K_sigma, R_W, R_X, R_Y, M):
    r"""The constant of Cor. 4.5 that its proof (Thm 4.4 with m = d^2, K_Theta = 0, then
    :math:`\sqrt{d^2 + 1} \le d + 1` and :math:`\log(R_W d^2 n) \le 2 \log(R_W d n)`) gives with the corrected
    constant of Thm 4.4: :math:`\sqrt 2` times :func:`thm44_corrected_constant`."""
    return math.sqrt(2.0) * thm44_corrected_constant(K_l, K_sigma, R_W, R_X, R_Y, M)


def _two_point_data(d, inst):
    """(x_1, y_1, x_2, y_2) on the spheres of radii R_X, R_Y: x_1 = R_X u, y_1 = -R_Y u (the largest loss of the
    identity map, R_X + R_Y) and x_2 = R_X v, y_2 = R_Y v (the smallest, |R_X - R_Y|), u and v at the angles
    phi1, phi2 of the instance; the members then move the two losses apart or together."""
    RX, RY = inst["R_X"], inst["R_Y"]
    u, v = unit(d, inst["phi1"]), unit(d, inst["phi2"])
    return RX * u, -RY * u, RX * v, RY * v


def _data_dims():
    two_pi = 2 * math.pi
    return [Dim("R_X", 0.1, 10.0, "log"), Dim("R_Y", 0.1, 10.0, "log"), Dim("phi1", 0.0, two_pi),
            Dim("phi2", 0.0, two_pi)]


def _law_dims(n_low, n_high):
    return [Dim("n", n_low, n_high, "log-int"), Dim("delta", 1e-6, 0.9, "log"), Dim("p", 1e-3, 1 - 1e-3)]


def _uniform_deviation(inst, outputs, data):
    """Upper delta-quantile of sup over the members of R - R_n, from the members' outputs at x_1 and x_2."""
    x1, y1, x2, y2 = data
    gaps = np.array([np.linalg.norm(o[0] - y1) - np.linalg.norm(o[1] - y2) for o in outputs])
    hi, lo = float(gaps.max()), float(gaps.min())
    return two_point_quantile(inst["n"], inst["p"], inst["delta"], lambda g: np.maximum(g * hi, g * lo))


def _erm_lower(inst, data, rho):
    r"""Upper delta-quantile of a lower bound on the gap R - R_n of every member, hence of the ERM's.

    With F_0 the identity (theta = 0), |l(F_theta(x), y) - l(x, y)| <= ||F_theta(x) - x|| <= rho for every
    member and every x in X (rho = M R e^{K R}, Prop. 4.2's first estimate, whose proof holds for every
    K_f > 0), so R(theta) - R_n(theta) >= g Delta_0 - 2 |g| rho, g = p - N/n, Delta_0 = ||x_1 - y_1|| - ||x_2 - y_2||.
    """
    x1, y1, x2, y2 = data
    d0 = float(np.linalg.norm(x1 - y1) - np.linalg.norm(x2 - y2))
    return two_point_quantile(inst["n"], inst["p"], inst["delta"], lambda g: g * d0 - 2.0 * np.abs(g) * rho)


# ------------------------------------------------------------------------------------------ Prop. 4.2

def prop42_searches(cfg):
    """Three searches of Prop. 4.2 over d, the maps (b, K_f), R_Theta, R_X and the parameters: the Lipschitz
    constant against the proof's constant (the claim), the output bound, and the Lipschitz constant against
    the printed constant (the erratum). Returns (lipschitz, output, printed) WorstCase."""
    import theory.generalization as G

    S = cfg.search_steps
    t = np.linspace(0.0, 1.0, 2 * S + 1)

    def build(inst):
        d, R, c, b, RX = inst["d"], inst["R_theta"], inst["K_f"], inst["b"], inst["R_X"]
        m = d * d
        rng = np.random.default_rng(inst["seed"])
        e0 = np.eye(m)[0]
        u = blend(inst["conc"], e0, rng.normal(size=m))
        v = blend(inst["conc"], e0, rng.normal(size=m))
        s = (1.0 - inst["gamma"]) + inst["gamma"] * np.cos(math.pi * t)  # |s| <= 1, s(0) = 1
        th = R * s[:, None] * u[None, :]
        th2 = th - inst.get("eta", 0.0) * R * s[:, None] * v[None, :]
        th2 *= min(1.0, R / max(G.norm_1_inf(th2), 1e-300))
        M = b + c * math.tanh(RX)
        return th, th2, maps(d, b, c), _inputs(d, RX, rng), M

    def lipschitz(inst, printed=False):
        th, th2, fields, x, M = build(inst)
        dist = G.norm_1_inf(th - th2)
        if dist < _RESOLVED * inst["R_theta"]:  # theta' ~ theta: the quotient would be one of rounding errors
            return None
        diff = float(np.linalg.norm(G.parameterized_ode(x, th, fields) - G.parameterized_ode(x, th2, fields),
                                    axis=1).max())
        c, R = inst["K_f"], inst["R_theta"]
        const = G.prop_4_2_lipschitz_printed(M, c, R) if printed else G.prop_4_2_lipschitz_proof(M, c, R)
        return diff, const * dist

    def output(inst):
        th, _, fields, x, M = build(inst)
        out = float(np.linalg.norm(G.parameterized_ode(x, th, fields), axis=1).max())
        return out, G.prop_4_2_output_bound(inst["R_X"], M, inst["K_f"], inst["R_theta"])

    dims = [Dim("d", 1, 3, "int"), Dim("b", 0.0, 2.0), Dim("K_f", 1e-3, 3.0, "log"), Dim("R_theta", 1e-2, 3.0, "log"),
            Dim("R_X", 0.1, 10.0, "log"), Dim("gamma", 0.0, 1.0), Dim("eta", 1e-3, 2.0, "log"), Dim("conc", 0.0, 1.0),
            Dim("seed", 0, 2**20, "int")]
    kw = dict(budget=cfg.search_budget, seed=cfg.search_seed)
    lip = search_worst_case(lipschitz, dims, **kw)
    out = search_worst_case(output, [dm for dm in dims if dm.name != "eta"], **kw)
    printed = search_worst_case(lambda i: lipschitz(i, printed=True), dims,
                                constant=("2 (of 2 M K_f R e^(2 K_f R))", 2.0), **kw)
    return lip, out, printed


# ------------------------------------------------------------------------------------------ Prop. 4.3

def _zigzag(t, start, K, period, phase, bound):
    """A K-Lipschitz triangle wave from ``start`` (slopes +-K, half-period ``period``), clipped to [-bound, bound]."""
    u = (t / period + phase) % 2.0
    tri = np.where(u < 1.0, u, 2.0 - u) * period * K
    tri -= tri[0]
    return np.clip(start + tri, -bound, bound)


def prop43_searches(cfg):
    """Two searches of Prop. 4.3: the distance of a function to its greedy centre over eps (zigzag functions of
    slope +-K_Theta started anywhere in [-R/m, R/m], their half-period a multiple of the kink spacing, shifted
    by a phase), and the log size of the construction over the bound (m, R_Theta, K_Theta, eps).
    Returns (distance, size) WorstCase."""
    import theory.generalization as G

    t = np.linspace(0.0, 1.0, cfg.grid)

    def distance(inst):
        m, R, K, eps = inst["m"], inst["R_theta"], inst["K_theta"], inst["eps"]
        e = cfg.eps_factor * eps / m
        if e > 4 * R:  # the grid G_y of the construction is empty: eps outside the proof's range
            return None
        rng = np.random.default_rng(inst["seed"])
        spacing = eps / m / (2 * K)
        cols = []
        for i in range(m):
            start = (inst["start"] if i == 0 else rng.uniform(-1, 1)) * R / m
            phase = inst["phase"] if i == 0 else rng.uniform(0, 2)
            cols.append(_zigzag(t, start, K, inst["period"] * spacing, phase, R / m))
        f = np.column_stack(cols)
        c = G.cover_member(t, f, R, K, cfg.eps_factor * eps)
        return float(np.abs(f - c).sum(axis=1).max()), eps

    def size(inst):
        m, R, K, eps = inst["m"], inst["R_theta"], inst["K_theta"], inst["eps"]
        if eps > 4 * R * m:
            return None
        return G.cover_log_size(m, R, K, eps), G.prop_4_3_log_covering(m, R, K, eps)

    kw = dict(budget=cfg.search_budget, seed=cfg.search_seed)
    dist = search_worst_case(distance, [
        Dim("m", 1, 3, "int"), Dim("R_theta", 0.1, 10.0, "log"), Dim("K_theta", 0.1, 5.0, "log"),
        Dim("eps", 0.05, 2.0, "log"), Dim("start", -1.0, 1.0), Dim("period", 0.1, 8.0, "log"),
        Dim("phase", 0.0, 2.0), Dim("seed", 0, 2**20, "int")], **kw)
    sz = search_worst_case(size, [Dim("m", 1, 9, "int"), Dim("R_theta", 1e-2, 1e2, "log"),
                                  Dim("K_theta", 1e-3, 1e2, "log"), Dim("eps", 1e-3, 10.0, "log")], **kw)
    return dist, sz


# ------------------------------------------------------------------------------------------ Prop. 4.6

def prop46_searches(cfg):
    """Two searches of Prop. 4.6 over d, L, R_W, R_X, the activation (tanh, relu, identity; K_sigma = 1,
    sigma(0) = 0) and the weights: the Lipschitz bound and the output bound. Returns (lipschitz, output)."""
    import theory.generalization as G

    def build(inst):
        d, L, R = inst["d"], inst["L"], inst["R_W"]
        rng = np.random.default_rng(inst["seed"])
        E = np.zeros((d, d))
        E[0, 0] = 1.0
        W = R * blend(inst["conc"], E[None], rng.normal(size=(L, d, d)))
        return W, E, rng

    def net(x, W, act):
        return G.resnet_forward(x, W * W.shape[0] ** (1 - cfg.scaling), act)

    def lipschitz(inst):
        W, E, rng = build(inst)
        R = inst["R_W"]
        W2 = W - inst["eta"] * R * blend(inst["conc"], E[None], rng.normal(size=W.shape))
        W2 *= np.minimum(1.0, R / np.abs(W2).sum(axis=(1, 2), keepdims=True))
        dist = G.norm_11inf(W - W2)
        if dist < _RESOLVED * R:  # W' ~ W: the quotient would be one of rounding errors
            return None
        x = _inputs(W.shape[1], inst["R_X"], rng)
        act = ACTIVATIONS[inst["act"]]
        diff = float(np.linalg.norm(net(x, W, act) - net(x, W2, act), axis=1).max())
        return diff, G.prop_4_6_lipschitz(inst["R_X"], 1.0, R) * dist

    def output(inst):
        W, _, rng = build(inst)
        x = _inputs(W.shape[1], inst["R_X"], rng)
        out = float(np.linalg.norm(net(x, W, ACTIVATIONS[inst["act"]]), axis=1).max())
        return out, G.prop_4_6_output_bound(inst["R_X"], 1.0, inst["R_W"])

    dims = [Dim("d", 1, 4, "int"), Dim("L", 1, max(cfg.depths), "log-int"), Dim("R_W", 0.02, 5.0, "log"),
            Dim("R_X", 0.1, 10.0, "log"), Dim("act", 0, 2, "int"), Dim("conc", 0.0, 1.0), Dim("eta", 1e-3, 2.0, "log"),
            Dim("seed", 0, 2**20, "int")]
    kw = dict(budget=cfg.search_budget, seed=cfg.search_seed)
    return (search_worst_case(lipschitz, dims, **kw),
            search_worst_case(output, [dm for dm in dims if dm.name != "eta"], **kw))


# ------------------------------------------------------------------------------------------ Cor. 4.9

def cor49_search(cfg):
    """Search of A(W) <= 2 R e^R sqrt(L) over d, L, R <= L and the weights (aligned rank one blended with
    Gaussian layers, ||W_k||_(1,1) = R, the first ``neg`` fraction of the layers negated, which shrinks
    ||I + W_k / L|| towards 1 - R/L)."""
    import theory.generalization as G

    def ratio(inst):
        d, L, R = inst["d"], inst["L"], inst["R"]
        if L < R:
            return None
        rng = np.random.default_rng(inst["seed"])
        E = np.zeros((d, d))
        E[0, 0] = 1.0
        W = R * blend(inst["conc"], E[None], rng.normal(size=(L, d, d)))
        W[: int(round(inst["neg"] * L))] *= -1.0
        return G.spectral_complexity(W), G.corollary_4_9_complexity_bound(R, L)

    dims = [Dim("d", 1, 5, "int"), Dim("L", 1, max(cfg.depths), "log-int"), Dim("R", 0.01, 20.0, "log"),
            Dim("conc", 0.0, 1.0), Dim("neg", 0.0, 1.0), Dim("seed", 0, 2**20, "int")]
    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("c (of c R e^R sqrt(L))", 2.0))


# ------------------------------------------------------------------------------------------ Sec. 4.4.2

def frobenius_log_product(W):
    """log prod_k ||I + W_k / L||_F for W of shape (L, d, d)."""
    L, d, _ = W.shape
    return float(np.log(np.linalg.norm(np.eye(d)[None] + W / L, axis=(1, 2))).sum())


def golowich_lower(d, R, L):
    """The lower bound of Sec. 4.4.2 on log prod_k ||I + W_k / L||_F: L log(sqrt(d) - R / L) (R / L < sqrt(d))."""
    return L * math.log(math.sqrt(d) - R / L)


def golowich_search(cfg):
    """Search of prod_k ||I + W_k / L||_F >= (sqrt(d) - R/L)^L over d, L, R < L sqrt(d) and the weights
    (-I blended with Gaussian layers, ||W_k||_(1,1) = R: -R I / d minimises the product). Both sides are divided
    by d^(L/2) (LHS (1 - R/(L sqrt d))^L, RHS prod ||I + W_k/L||_F / sqrt(d)), so that neither overflows."""

    def ratio(inst):
        d, L, R = inst["d"], inst["L"], inst["R"]
        if R >= L * math.sqrt(d):
            return None
        rng = np.random.default_rng(inst["seed"])
        W = R * blend(inst["conc"], -np.eye(d)[None], rng.normal(size=(L, d, d)))
        half = 0.5 * L * math.log(d)
        return math.exp(golowich_lower(d, R, L) - half), math.exp(frobenius_log_product(W) - half)

    dims = [Dim("d", 1, 16, "int"), Dim("L", 1, max(cfg.depths), "log-int"), Dim("R", 1e-2, 100.0, "log"),
            Dim("conc", 0.0, 1.0), Dim("seed", 0, 2**20, "int")]
    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed)


# ------------------------------------------------------------------------------------------ Thm 4.4

def thm44_searches(cfg):
    """Two searches of Thm 4.4 on two-point laws, over d (m = d^2 maps (b + K_f tanh(h_j)) e_i), n above the
    theorem's threshold, delta, p, K_f, b, R_Theta, K_Theta, R_X, R_Y and the data's directions:

    * ``corrected``: the upper delta-quantile of sup_theta (R - R_n) over the members 0, +-R_Theta e_i and
      the ramps +-clip(-R + K_Theta t, -R, R) e_i (the extreme points of the class and its steepest members),
      against the bound with :func:`thm44_corrected_constant`;
    * ``printed``: the upper delta-quantile of a lower bound on the gap of every member (hence of the ERM,
      :func:`_erm_lower`), against the bound with the printed constant.

    Returns (corrected, printed) WorstCase.
    """
    import theory.generalization as G

    t = np.linspace(0.0, 1.0, 2 * cfg.steps + 1)

    def common(inst):
        d = inst["d"]
        m, R, c, b = d * d, inst["R_theta"], inst["K_f"], inst["b"]
        if inst["n"] < 9 * max(1.0 / (m * R) ** 2, 1.0):
            return None
        return m, R, c, b, b + c * math.tanh(inst["R_X"]), _two_point_data(d, inst)

    def gap(inst, B):
        return G.theorem_4_4_gap(inst["n"], inst["delta"], inst["d"] ** 2, inst["K_theta"], inst["R_theta"], B)

    def corrected(inst):
        got = common(inst)
        if got is None:
            return None
        m, R, c, b, M, data = got
        fields = maps(inst["d"], b, c)
        x = np.vstack([data[0], data[2]])
        ramp = np.clip(-R + inst["K_theta"] * t, -R, R)
        members = [np.zeros((t.size, m))]
        for i in range(m):
            for prof in (np.full(t.size, R), ramp):
                for sgn in (1.0, -1.0):
                    th = np.zeros((t.size, m))
                    th[:, i] = sgn * prof
                    members.append(th)
        outputs = [G.parameterized_ode(x, th, fields) for th in members]
        B = thm44_corrected_constant(1.0, c, R, inst["R_X"], inst["R_Y"], M)
        return _uniform_deviation(inst, outputs, data), gap(inst, B)

    def printed(inst):
        got = common(inst)
        if got is None:
            return None
        m, R, c, b, M, data = got
        B = G.theorem_4_4_constant(1.0, c, R, inst["R_X"], inst["R_Y"], M)
        return _erm_lower(inst, data, M * R * math.exp(c * R)), gap(inst, B)

    dims = [Dim("d", 1, 2, "int"), *_law_dims(9, 10**8), Dim("K_f", 1e-3, 3.0, "log"), Dim("b", 0.0, 2.0),
            Dim("R_theta", 0.05, 5.0, "log"), Dim("K_theta", 1e-4, 10.0, "log"), *_data_dims()]
    kw = dict(budget=cfg.search_budget, seed=cfg.search_seed)
    return (search_worst_case(corrected, dims, constant=("3 (of the corrected B = 3 max(K_l C, 2 M-bar))", 3.0), **kw),
            search_worst_case(printed, dims, constant=("6 (of B = 6 K_l K_f e^(K_f R) (...))", 6.0), **kw))


# ------------------------------------------------------------------------------------------ Cor. 4.5

def cor45_searches(cfg):
    """Two searches of Cor. 4.5 on two-point laws, over d, n above both thresholds, delta, p, the activation
    K_sigma act (act one of tanh, relu, identity), R_W, R_X, R_Y and the data's directions; as
    :func:`thm44_searches`, members 0 and +-R_W E_ij (the extreme points of the ball (4.9)).
    Returns (corrected, printed) WorstCase."""
    import theory.generalization as G

    def common(inst):
        d, R, c = inst["d"], inst["R_W"], inst["K_sigma"]
        n = inst["n"]
        if n < 9 / R * max(1.0 / (d ** 4 * R), 1.0) or n < 9 * max(1.0 / (d ** 4 * R * R), 1.0):
            return None
        act = ACTIVATIONS[inst["act"]]
        return d, R, c, act, c * sup_activation(act, inst["R_X"]), _two_point_data(d, inst)

    def gap(inst, B):
        return G.corollary_4_5_gap(inst["n"], inst["delta"], inst["d"], inst["R_W"], B)

    def corrected(inst):
        got = common(inst)
        if got is None:
            return None
        d, R, c, act, M, data = got
        x = np.vstack([data[0], data[2]])
        members = [np.zeros((d, d))]
        for i in range(d):
            for j in range(d):
                for sgn in (1.0, -1.0):
                    W = np.zeros((d, d))
                    W[i, j] = sgn * R
                    members.append(W)
        outputs = [G.neural_ode(x, c * W, act, cfg.steps) for W in members]
        B = cor45_corrected_constant(1.0, c, R, inst["R_X"], inst["R_Y"], M)
        return _uniform_deviation(inst, outputs, data), gap(inst, B)

    def printed(inst):
        got = common(inst)
        if got is None:
            return None
        d, R, c, act, M, data = got
        B = G.corollary_4_5_constant(1.0, c, R, inst["R_X"], inst["R_Y"], M)
        return _erm_lower(inst, data, M * R * math.exp(c * R)), gap(inst, B)

    dims = [Dim("d", 1, 3, "int"), *_law_dims(1, 10**8), Dim("K_sigma", 1e-3, 3.0, "log"), Dim("act", 0, 2, "int"),
            Dim("R_W", 0.05, 5.0, "log"), *_data_dims()]
    kw = dict(budget=cfg.search_budget, seed=cfg.search_seed)
    return (search_worst_case(corrected, dims, constant=("3 sqrt 2 (of the corrected B = 3 sqrt 2 max(K_l C, 2 M-bar))",
                                                         3.0 * math.sqrt(2.0)), **kw),
            search_worst_case(printed, dims, constant=("6 sqrt 2 (of B = 6 sqrt 2 K_l K_sigma e^(K_sigma R) (...))",
                                                       6.0 * math.sqrt(2.0)), **kw))


# ------------------------------------------------------------------------------------------ Thm 4.8

def thm48_search(cfg):
    """Search of (4.13) on two-point laws, over d, L, n above the threshold, delta, p, the activation K_sigma act
    (sigma(0) = 0), R_W, K_W, R_X, R_Y and the data's directions: the upper delta-quantile of sup_W (R - R_n)
    over the members 0, +-R_W E_ij at every layer, and the ramps W_k = +-clip(-R + K_W k / L, -R, R) E_ij
    (steps K_W / L between layers, the edge of (4.12))."""
    import theory.generalization as G

    def ratio(inst):
        d, L, R, c, K = inst["d"], inst["L"], inst["R_W"], inst["K_sigma"], inst["K_W"]
        n = inst["n"]
        if n < 9 / R * max(1.0 / (d ** 4 * R), 1.0):
            return None
        act = ACTIVATIONS[inst["act"]]
        data = _two_point_data(d, inst)
        x = np.vstack([data[0], data[2]])
        k = np.arange(1, L + 1)
        ramp = np.clip(-R + K * k / L, -R, R)
        members = [np.zeros((L, d, d))]
        for i in range(d):
            for j in range(d):
                for prof in (np.full(L, R), ramp):
                    for sgn in (1.0, -1.0):
                        W = np.zeros((L, d, d))
                        W[:, i, j] = sgn * prof
                        members.append(W)
        outputs = [G.resnet_forward(x, c * W, act) for W in members]
        B = G.theorem_4_8_constant(1.0, c, R, inst["R_X"], inst["R_Y"])
        return _uniform_deviation(inst, outputs, data), G.theorem_4_8_gap(n, inst["delta"], d, R, K, B)

    dims = [Dim("d", 1, 2, "int"), Dim("L", 1, cfg.search_max_depth, "log-int"), *_law_dims(1, 10**8),
            Dim("K_sigma", 1e-3, 3.0, "log"), Dim("act", 0, 2, "int"), Dim("R_W", 0.05, 10.0, "log"),
            Dim("K_W", 1e-4, 10.0, "log"), *_data_dims()]
    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("6 sqrt 2 (of B = 6 sqrt 2 K_l max(e^(K_sigma R)/R, 1) (...))",
                                       6.0 * math.sqrt(2.0)))
