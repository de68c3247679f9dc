r"""Worst-case searches of the bounds of the ``rnn-kernel`` paper key (thesis (Marion), chapter 5).

Each bound of the chapter is checked at drawn instances by the measurement of its experiment and, beside
them, by a search of its hypothesis set (:func:`theory.worst_case.search_worst_case`) for the instance that
maximises LHS/RHS. The functions here build one instance of each box (paths of :math:`\mathcal X`, RNN
weights, orders, points of the balls) and return both sides; the measurements call them with their config's
``search_budget`` and ``search_seed``.

The boxes share their coordinates:

* paths: ``L`` (the total-variation bound of :math:`\mathcal X`), ``tv_frac`` (the path's total variation
  over L, 1 on the boundary of :math:`\mathcal X`), ``turns`` (0: a straight segment, where
  :math:`\|\bar{\mathbb X}^k\|` equals the total variation to the power k; more: a spiral) and ``rough``
  (the share of a Gaussian random walk mixed in), all from the point 0;
* RNN weights: ``w`` (a norm of W = (U V), see each box), ``bias`` (:math:`\|b\|`), ``bias_align`` (0: a
  random direction, 1: all entries equal and positive, where :math:`\|\sigma(b)\|` is largest for the
  logistic), the activation index ``act`` into :data:`ACTS`, the hidden size ``e``;
* a ``seed`` for the random directions.

Where a left side is computed with the signature and the coefficients alpha truncated at a depth N, the
levels above N are accounted for by an explicit upper estimate (:func:`alpha_tail`), so that a pass is a pass
of the untruncated statement; the boxes keep that estimate small against the right side.
"""

from __future__ import annotations

import math

import numpy as np

import theory.signature as S
from theory.worst_case import Dim, search_worst_case

__all__ = ["ACTS", "K_SIGMA", "A_CONST", "level_bound", "norm_bound", "taylor_factor", "corrected_B",
           "rademacher_rhs", "search_path", "search_weights", "alpha_tail", "prop56_search",
           "SMOOTH_SHARE", "prop51_search", "thm511_search", "eq514_search", "stability_search", "prop59_search",
           "activation_search", "prop510_search", "ex513_search", "rademacher_search"]

#: the activations of the boxes, by index (the coordinate ``act``)
ACTS = ("identity", "tanh", "logistic")
#: Lipschitz constants of the activations
K_SIGMA = {"identity": 1.0, "tanh": 1.0, "logistic": 0.25}
#: the constant a of (5.11) (Appendix 5.A.5: a = 2 for the logistic, 4 for tanh)
A_CONST = {"logistic": 2.0, "tanh": 4.0}


# ----------------------------------------------------------------------------------------- right sides
# (module functions, used by the drawn instances and by the searches alike, so that a control can break one)

def level_bound(L, k):
    """Prop. 5.6: the bound ((1+L)/2)^k on ||X_bar^k|| (Lyons' estimate with TV(X_bar) <= (1+L)/2)."""
    return ((1.0 + L) / 2.0) ** k


def norm_bound(L):
    """Prop. 5.6: the bound 2/(1-L) on ||S(X_bar)||."""
    return 2.0 / (1.0 - L)


def taylor_factor(d, N):
    """Prop. 5.9: the factor d^(N+1)/(N+1)! of Lambda_{N+1} in (5.9) (d: the dimension of the driving path)."""
    return d ** (N + 1) / math.factorial(N + 1)


def corrected_B(d, L, KW, K_psi):
    """Example 5.13 corrected: B = 4 sqrt(2) (d+1) K_psi / (1 - L - 32 (d+1) K_W) (d: the input dimension)."""
    return 4.0 * math.sqrt(2.0) * (d + 1) * K_psi / (1.0 - L - 32.0 * (d + 1) * KW)


def rademacher_rhs(L, n):
    """Proof of Thm 5.12: the bound 2/((1-L) sqrt(n)) on the empirical Rademacher term of the unit ball."""
    return 2.0 / ((1.0 - L) * math.sqrt(n))


def _pkg():
    # the package's helpers (_c1, _M_low, spiral), looked up at call time so that a control can monkeypatch them
    import theory.experiments.rnn_kernel as pkg

    return pkg


# ----------------------------------------------------------------------------------------- instances


def search_path(rng, n_seg, d, L, tv_frac, turns, rough):
    """A path of :math:`\\mathcal X` with ``n_seg`` segments in R^d from 0: a planar spiral of ``turns`` turns
    (a straight segment at 0; its first coordinate alone when d = 1) mixed with a share ``rough`` of a Gaussian
    random walk, rescaled to total variation ``tv_frac * L``."""
    t = np.linspace(0.0, 1.0, n_seg + 1)
    sp = np.zeros((n_seg + 1, d))
    sp[:, 0] = t * np.cos(2 * np.pi * turns * t)
    if d > 1:
        sp[:, 1] = t * np.sin(2 * np.pi * turns * t)
    walk = np.vstack([np.zeros(d), np.cumsum(rng.standard_normal((n_seg, d)), axis=0)])
    X = (1.0 - rough) * sp / S.total_variation(sp) + rough * walk / S.total_variation(walk)
    tv = S.total_variation(X)
    if not tv > 0.0:  # the two parts cancelled (a measure-zero case): the straight segment
        X, tv = sp, S.total_variation(sp)
    return X * (tv_frac * L / tv)


def _direction(rng, shape):
    g = rng.standard_normal(shape)
    return g / np.linalg.norm(g)


def search_weights(rng, e, d, w, norm, bias, bias_align):
    """U, V, b with W = (U V) of norm ``w`` (``norm`` "op": operator norms ||U||_op = ||V||_op = w, so that
    K_f = K_sigma w; "fro": ||W||_F = w) and ||b|| = ``bias`` in the direction mixing a random one with
    (1, ..., 1) by ``bias_align``."""
    if norm == "op":
        U = rng.standard_normal((e, e))
        V = rng.standard_normal((e, d))
        U *= w / np.linalg.norm(U, 2)
        V *= w / np.linalg.norm(V, 2)
    else:
        W = _direction(rng, (e, e + d)) * w
        U, V = W[:, :e], W[:, e:]
    g = rng.standard_normal(e)
    g /= np.linalg.norm(g)
    u = bias_align * np.ones(e) / math.sqrt(e) + (1.0 - bias_align) * g
    nu = np.linalg.norm(u)
    b = bias * (u / nu if nu > 0 else np.ones(e) / math.sqrt(e))
    return U, V, b


def alpha_tail(N, act, U, V, b, L, r, d):
    r"""Upper estimate of the levels above N of :math:`\xi_\alpha(X) = \sum_k \langle\alpha_k, \bar{\mathbb X}^k\rangle`
    (||psi||_op = 1), for a path whose time-augmented total variation is r < 1.

    :math:`|\langle\alpha_k, \bar{\mathbb X}^k\rangle| \le \|\alpha_k\| r^k` (Lyons' estimate, proof of Prop. 5.6)
    and :math:`\|\alpha_k\| \le \frac1{k!}(\sum_I \|F^I(0)\|^2)^{1/2}`. Identity activation (Example 5.8): only
    the products :math:`W_{d+1}^{k-1} b_{i_1}` are non-zero, so
    :math:`\sum_I\|F^I(0)\|^2 \le \|W_{d+1}\|_{op}^{2(k-1)}(d + (\frac{2\|b\|}{1-L})^2)`,
    :math:`W_{d+1} = \frac2{1-L}W`. Smooth activations under (5.11): :math:`\sum_I\|F^I(0)\|^2 \le (d+1)^k
    \Lambda_k^2` with the corrected bound of Prop. 5.10 (:func:`theory.signature.lambda_bound`)."""
    k = np.arange(N + 1, N + 400, dtype=float)
    logfact = np.array([math.lgamma(x + 1.0) for x in k])
    if act == "identity":
        wop = 2.0 / (1.0 - L) * np.linalg.norm(np.hstack([U, V]), 2)
        c = math.sqrt(d + (2.0 * np.linalg.norm(b) / (1.0 - L)) ** 2)
        if wop == 0.0:  # only the first level is non-zero
            return 0.0 if N >= 1 else c * r
        terms = math.log(c) + (k - 1) * math.log(wop) + k * math.log(r) - logfact
    else:
        a = A_CONST[act]
        wf = float(np.linalg.norm(np.hstack([U, V])))
        q = 8.0 * a * a * wf / (1.0 - L)
        if q == 0.0:
            return 0.0
        # Lambda_k <= (2/(1-L)) sqrt(2) a q^(k-1) k!, so ||alpha_k|| r^k <= (d+1)^(k/2) (2/(1-L)) sqrt(2) a q^(k-1) r^k
        terms = (0.5 * k * math.log(d + 1) + math.log(2.0 / (1.0 - L) * math.sqrt(2.0) * a)
                 + (k - 1) * math.log(q) + k * math.log(r))
    return float(np.sum(np.exp(terms)))


def _aug_tv(X, L):
    return S.total_variation(X) + (1.0 - L) / 2.0


def _smooth_weight(inst, act, L, d):
    """||W||_F of a smooth activation's box: ``w`` times the radius (1-L)/(8 a^2 (d+1)) of (5.11), kept strictly
    inside it."""
    return min(float(inst["w"]), 1.0 - 1e-9) * (1.0 - L) / (8.0 * A_CONST[act] ** 2 * (d + 1))


#: share of the radius of (5.11) that the Thm 5.11 boxes give the smooth activations: the estimate of the levels
#: above the truncation (:func:`alpha_tail`, through Prop. 5.10's bound) decays like (w sqrt(d+1) r / (d+1))^k,
#: slowly near the radius, where it would exceed c1/T by far while the measured truncation error is ~1e-15
SMOOTH_SHARE = 0.1


def _rnn_weights(inst, rng, e, d, L, act, w_identity):
    """The weights of an RNN of the Thm 5.11 boxes: identity activation, ||U||_op = ||V||_op = w * w_identity(L);
    tanh / logistic, ||W||_F = w :data:`SMOOTH_SHARE` times the radius of (5.11) (where (A2) holds by
    Prop. 5.10)."""
    if act == "identity":
        return search_weights(rng, e, d, float(inst["w"]) * w_identity(L), "op", inst["bias"], inst["bias_align"])
    wf = SMOOTH_SHARE * _smooth_weight(inst, act, L, d)
    return search_weights(rng, e, d, wf, "fro", inst["bias"], inst["bias_align"])


def _convergent(L):
    # ||W_{d+1}||_op r <= 2 w: the signature expansion's terms shrink geometrically (identity activation)
    return (1.0 - L) / (1.0 + L) / 2.0


def _stability_scale(L):
    # twice the convergent scale: the truncated right side is at most the untruncated one at any weights, so the box
    # may reach weights where the truncation is visible (it then only makes the check harder)
    return (1.0 - L) / (1.0 + L)


_PATH_DIMS = [Dim("L", 0.05, 0.95), Dim("tv_frac", 0.01, 1.0), Dim("turns", 0.0, 4.0), Dim("rough", 0.0, 1.0)]
_BIAS_DIMS = [Dim("bias", 1e-3, 10.0, "log"), Dim("bias_align", 0.0, 1.0)]
_SEED = Dim("seed", 0, 2**20, "int")


# ----------------------------------------------------------------------------------------- Prop. 5.6

def prop56_search(cfg):
    """Prop. 5.6 over paths of :math:`\\mathcal X`: level k (1..depth) against ((1+L)/2)^k, or (level 0) the whole
    norm against 2/(1-L), the levels above ``depth`` added by Lyons' estimate TV^k (an upper estimate)."""
    dims = [Dim("one_minus_L", 1e-3, 0.999, "log"), Dim("tv_frac", 0.01, 1.0), Dim("n_points", 2, 200, "log-int"),
            Dim("turns", 0.0, 4.0), Dim("rough", 0.0, 1.0), Dim("d", 1, 4, "int"), Dim("level", 0, cfg.depth, "int"),
            _SEED]

    def ratio(inst):
        L = 1.0 - inst["one_minus_L"]
        rng = np.random.default_rng(inst["seed"])
        X = search_path(rng, inst["n_points"] - 1, inst["d"], L, inst["tv_frac"], inst["turns"], inst["rough"])
        X = X * cfg.tv_factor
        sig = S.signature(S.time_augment(X, L, check=False), cfg.depth)
        k = inst["level"]
        if k > 0:
            return float(np.linalg.norm(sig[k])), level_bound(L, k)
        tv = _aug_tv(X, L)
        tail2 = tv ** (2 * (cfg.depth + 1)) / (1.0 - tv * tv) if tv < 1.0 else math.inf
        return math.sqrt(S.signature_norm(sig) ** 2 + tail2), norm_bound(L)

    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed)


# ----------------------------------------------------------------------------------------- Prop. 5.1

def _euler_instance(inst):
    """Path (fine knots, a multiple of T), weights and activation of the Prop. 5.1 / Thm 5.11 boxes."""
    T = int(inst["T"])
    fine = T * max(1, math.ceil(640 / T))
    rng = np.random.default_rng(inst["seed"])
    L = float(inst["L"])
    X = search_path(rng, fine, 2, L, inst["tv_frac"], inst["turns"], inst["rough"])
    return T, fine, L, X, rng


def prop51_search(cfg):
    """Prop. 5.1 over its hypotheses: T max_j ||H_{j/T} - h_j|| against c1 (sups sampled from below, so the right
    side is at most the true c1), any Lipschitz f = sigma(U h + V x + b) of the three activations, with
    ||U||_op = ||V||_op = w in [0.01, 3], ||b|| in [1e-3, 10], T in [1, 640], paths of :math:`\\mathcal X`."""
    pkg = _pkg()
    dims = [Dim("act", 0, 2, "int"), Dim("e", 1, 4, "int")] + _PATH_DIMS + [Dim("w", 1e-2, 3.0, "log")] + \
        _BIAS_DIMS + [Dim("T", 1, 640, "log-int"), _SEED]

    def ratio(inst):
        act = ACTS[inst["act"]]
        T, fine, L, X, rng = _euler_instance(inst)
        U, V, b = search_weights(rng, inst["e"], 2, inst["w"], "op", inst["bias"], inst["bias_align"])
        H = S.ode_solution(X, U, V, b, act, substeps=4)
        step = fine // T
        h = S.rnn(X[step::step], U, V, b, act)
        err = float(np.linalg.norm(h - H[::step], axis=1).max())
        return T * err, pkg._c1(U, V, L, act, b, n_samples=cfg.search_samples)

    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed, constant=("c1", 1.0))


# ----------------------------------------------------------------------------------------- Thm 5.11, (5.14)

def _thm511_dims(T_high):
    return [Dim("act", 0, 2, "int"), Dim("e", 1, 3, "int")] + _PATH_DIMS + [Dim("w", 1e-3, 1.0, "log")] + \
        _BIAS_DIMS + [Dim("T", 1, T_high, "log-int"), _SEED]


_THM511_BOX = ("act: identity (any weights: (A2) holds by Prop. 5.10; ||U||_op = ||V||_op = w (1-L)/(2(1+L)), where "
               "the signature terms shrink geometrically and the tail above the truncation is estimated) or "
               "tanh / logistic with ||W||_F = w/10 (1-L)/(8 a^2 (d+1)) (inside (5.11), see SMOOTH_SHARE)")


def thm511_search(cfg, depth):
    """Thm 5.11 ((5.12), psi = identity, ||psi||_op = 1): T (||z_T - <alpha, S(X_bar)>|| ) against c1, alpha and S
    truncated at ``depth`` with the levels above it added by :func:`alpha_tail` (an upper estimate of the left
    side); box :data:`_THM511_BOX`, T in [1, 640]."""
    pkg = _pkg()

    def ratio(inst):
        act = ACTS[inst["act"]]
        T, fine, L, X, rng = _euler_instance(inst)
        U, V, b = _rnn_weights(inst, rng, inst["e"], 2, L, act, _convergent)
        sig = S.signature(S.time_augment(X, L, check=False), depth)
        alpha = S.rkhs_coefficients(np.eye(inst["e"]), S.star_products(U, V, b, L, depth, act))
        xi = sum(np.tensordot(a, s, axes=k) for k, (a, s) in enumerate(zip(alpha, sig)))
        step = fine // T
        h = S.rnn(X[step::step], U, V, b, act)[-1]
        lhs = float(np.linalg.norm(h - xi)) + alpha_tail(depth, act, U, V, b, L, _aug_tv(X, L), 2)
        return T * lhs, pkg._c1(U, V, L, act, b, n_samples=cfg.search_samples)

    return search_worst_case(ratio, _thm511_dims(640), budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("c1", 1.0))


def eq514_search(cfg, depth):
    """(5.14), sequence to sequence: T max_j ||z_j - (<alpha_l, S_[0,j/T](X_bar)>)_l|| against c1 (psi = identity),
    S_[0,j/T] by Chen's relation over the segments of the prefix, levels above ``depth`` added by
    :func:`alpha_tail`; box as :func:`thm511_search` with T in [1, 80]."""
    pkg = _pkg()

    def ratio(inst):
        act = ACTS[inst["act"]]
        T, fine, L, X, rng = _euler_instance(inst)
        U, V, b = _rnn_weights(inst, rng, inst["e"], 2, L, act, _convergent)
        alpha = S.rkhs_coefficients(np.eye(inst["e"]), S.star_products(U, V, b, L, depth, act))
        Xb = S.time_augment(X, L, check=False)
        step = fine // T
        h = S.rnn(X[step::step], U, V, b, act)
        tail = alpha_tail(depth, act, U, V, b, L, _aug_tv(X, L), 2)
        sig, err = None, 0.0
        for j in range(1, T + 1):
            seg = S.signature(Xb[(j - 1) * step: j * step + 1], depth)
            sig = seg if sig is None else S.chen(sig, seg)
            xi = sum(np.tensordot(a, s, axes=k) for k, (a, s) in enumerate(zip(alpha, sig)))
            err = max(err, float(np.linalg.norm(h[j] - xi)))
        return T * (err + tail), pkg._c1(U, V, L, act, b, n_samples=cfg.search_samples)

    return search_worst_case(ratio, _thm511_dims(80), budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("c1", 1.0))


# ----------------------------------------------------------------------------------------- section 5.3.2

def stability_search(cfg):
    """Section 5.3.2: |z_T - z'_T| against 2||psi|| c1/T + ||alpha|| ||S(X_bar) - S(X_bar')||, alpha and the
    signatures truncated at ``cfg.depth`` (both lower than the untruncated ones: the right side is at most the
    printed one), X a path of :math:`\\mathcal X` and X' = X + eps (smooth perturbation), rescaled into
    :math:`\\mathcal X` (the perturbation vanishing at both ends at ``phase`` 0, where the low levels of the
    signature barely move); psi the unit vector maximising the ratio (searched inside each instance); weights as
    :func:`thm511_search` (identity: twice as large, ||U||_op = ||V||_op = w (1-L)/(1+L)); T in [1, 400]."""
    pkg = _pkg()
    dims = [Dim("act", 0, 2, "int"), Dim("e", 1, 3, "int")] + _PATH_DIMS + [Dim("w", 1e-3, 1.0, "log")] + \
        _BIAS_DIMS + [Dim("T", 1, 400, "log-int"), Dim("eps", 1e-4, 1.0, "log"), Dim("freq", 1, 5, "int"),
                      Dim("freq2", 1, 5, "int"), Dim("phase", 0.0, 1.0), _SEED]

    def ratio(inst):
        act = ACTS[inst["act"]]
        T, e = int(inst["T"]), int(inst["e"])
        fine = T * max(1, math.ceil(400 / T))
        rng = np.random.default_rng(inst["seed"])
        L = float(inst["L"])
        X = search_path(rng, fine, 2, L, inst["tv_frac"], inst["turns"], inst["rough"])
        U, V, b = _rnn_weights(inst, rng, e, 2, L, act, _stability_scale)
        t = np.linspace(0, 1, fine + 1)
        ph = inst["phase"] * rng.uniform(0, 2 * np.pi, 2)  # phase 0: the perturbation vanishes at both ends
        pert = inst["eps"] * np.column_stack([np.sin(np.pi * inst["freq"] * t + ph[0]),
                                              np.sin(np.pi * inst["freq2"] * t + ph[1])]) * t[:, None]
        Y = X + pert
        Y *= min(1.0, L / S.total_variation(Y))
        step = fine // T
        delta = S.rnn(X[step::step], U, V, b, act)[-1] - S.rnn(Y[step::step], U, V, b, act)[-1]
        sx = S.signature(S.time_augment(X, L, check=False), cfg.depth)
        sy = S.signature(S.time_augment(Y, L, check=False), cfg.depth)
        dS = math.sqrt(sum(float(np.sum((a - c) ** 2)) for a, c in zip(sx, sy)))
        # alpha is linear in psi: ||alpha(psi)||^2 = psi' G psi; psi is maximised over the unit sphere (sampled, with
        # the directions of delta and G^-1 delta), since the inequality holds for every psi
        P = S.star_products(U, V, b, L, cfg.depth, act)
        rows = [np.concatenate([a.ravel() for a in S.rkhs_coefficients(np.eye(e)[i], P)]) for i in range(e)]
        G = np.array(rows) @ np.array(rows).T
        c1 = pkg._c1(U, V, L, act, b, n_samples=cfg.search_samples)
        psis = [delta, np.linalg.lstsq(G, delta, rcond=None)[0]] + list(rng.standard_normal((200, e)))
        best = (0.0, 1.0)
        for psi in psis:
            nrm = np.linalg.norm(psi)
            if nrm == 0.0:
                continue
            psi = psi / nrm
            lhs = abs(float(psi @ delta))
            rhs = cfg.c1_factor * 2 * c1 / T + cfg.feature_factor * math.sqrt(max(float(psi @ G @ psi), 0.0)) * dS
            if rhs > 0 and lhs * best[1] > best[0] * rhs:
                best = (lhs, rhs)
        return best

    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed)


# ----------------------------------------------------------------------------------------- Prop. 5.9

def prop59_search(cfg):
    """Prop. 5.9 ((5.9)): ||H_1 - H^N_1|| against (d+1)^(N+1)/(N+1)! Lambda_{N+1}, Lambda sampled (from below) at
    0, the trajectory's end and ``cfg.search_lambda`` points of the ball of radius M + L (M from below): the right side
    is at most the true one. Any weights (the statement needs F smooth only): ||U||_op = ||V||_op = w in
    [0.05, 3], the three activations, N in 1..6, paths of :math:`\\mathcal X` with ``cfg.n_points`` points."""
    pkg = _pkg()
    dims = [Dim("act", 0, 2, "int"), Dim("e", 1, 3, "int")] + _PATH_DIMS + [Dim("w", 0.05, 3.0, "log")] + \
        _BIAS_DIMS + [Dim("N", 1, 6, "int"), _SEED]

    def ratio(inst):
        act = ACTS[inst["act"]]
        N, e, L = int(inst["N"]), int(inst["e"]), float(inst["L"])
        rng = np.random.default_rng(inst["seed"])
        X = search_path(rng, cfg.n_points - 1, 2, L, inst["tv_frac"], inst["turns"], inst["rough"])
        U, V, b = search_weights(rng, e, 2, inst["w"], "op", inst["bias"], inst["bias_align"])
        Xb = S.time_augment(X, L, check=False)
        H = S.cde_solution(Xb, U, V, b, L, act, substeps=16)
        sig = S.signature(Xb, N)
        P = S.star_products(U, V, b, L, N + 1, act)
        lhs = float(np.linalg.norm(S.taylor_expansion(sig, P[:N]) - H[-1]))
        Mbar = pkg._M_low(U, V, b, L, act) + L
        pts = [np.zeros(e + 2), H[-1]]
        for _ in range(cfg.search_lambda):
            q = rng.standard_normal(e + 2)
            pts.append(q * Mbar * rng.uniform() ** (1 / (e + 2)) / np.linalg.norm(q))
        lam = 0.0
        for q in pts:
            top = S.star_products(U, V, b, L, N + 1, act, hbar0=q)[N]
            lam = max(lam, float(np.linalg.norm(top.reshape(-1, e + 2), axis=1).max()))
        return lhs, taylor_factor(3, N) * lam

    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed)


# ----------------------------------------------------------------------------------------- Lemmas 5.19, 5.20

def activation_search(cfg, which, budget, orders):
    """Lemma 5.19 (logistic, orders n >= 1 as corrected) or 5.20 (tanh, n >= 0): |sigma^(n)(x)| against the
    printed bound, over the order n in ``orders`` and the point x in [-40, 40] (the sup itself searched, with
    sigma^(n) = p_n(sigma) from :func:`theory.signature.activation_derivatives`)."""
    polys = S.activation_derivatives(which, max(orders))
    sig = (lambda x: 0.5 * (1.0 + math.tanh(0.5 * x))) if which == "logistic" else math.tanh
    dims = [Dim("n", min(orders), max(orders), "int"), Dim("x", -40.0, 40.0)]

    def ratio(inst):
        n = int(inst["n"])
        return abs(float(np.polynomial.polynomial.polyval(sig(inst["x"]), polys[n]))), S.derivative_bound(which, n)

    return search_worst_case(ratio, dims, budget=budget, seed=cfg.search_seed)


# ----------------------------------------------------------------------------------------- Prop. 5.10

def prop510_search(cfg):
    """Prop. 5.10 corrected: ||F^{i_1} * ... * F^{i_N}(h)|| (largest over the index tuples) at a point h of the
    ball of radius M + L (M from below, so h lies in the true ball) against the corrected bound, over
    tanh / logistic RNNs inside (5.11) (||W||_F = w (1-L)/(8 a^2 (d+1)), w < 1), e in 1..4 (so that
    ||sigma||_inf <= sqrt(e) <= a), d in 1..3, ||b|| in [1e-3, 1e3], N in 1..``max(cfg.Ns)``."""
    pkg = _pkg()
    dims = [Dim("act", 1, 2, "int"), Dim("e", 1, 4, "int"), Dim("d", 1, 3, "int"), Dim("L", 0.01, 0.99),
            Dim("w", 1e-3, 1.0, "log"), Dim("bias", 1e-3, 1e3, "log"), Dim("bias_align", 0.0, 1.0),
            Dim("N", 1, max(cfg.Ns), "int"), Dim("radius", 0.0, 1.0), _SEED]

    def ratio(inst):
        act = ACTS[inst["act"]]
        e, d, L, N = int(inst["e"]), int(inst["d"]), float(inst["L"]), int(inst["N"])
        rng = np.random.default_rng(inst["seed"])
        wf = _smooth_weight(inst, act, L, d)
        U, V, b = search_weights(rng, e, d, wf, "fro", inst["bias"], inst["bias_align"])
        Mbar = pkg._M_low(U, V, b, L, act) + L
        q = _direction(rng, e + d) * Mbar * inst["radius"]
        P = S.star_products(U, V, b, L, N, act, hbar0=q)[N - 1]
        lam = float(np.linalg.norm(P.reshape(-1, e + d), axis=1).max())
        return lam, S.lambda_bound(N, A_CONST[act], wf, L, corrected=True)

    # the printed constant sqrt(2) of the bound (2/(1-L)) sqrt(2) a (8 a^2 ||W||_F/(1-L))^(N-1) N!: its value at
    # N = 1, a = 1, L = 1/2 is 4 sqrt(2)
    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("sqrt(2)", S.lambda_bound(1, 1.0, 0.0, 0.5) / 4.0))


# ----------------------------------------------------------------------------------------- Example 5.13

def ex513_search(cfg):
    """Example 5.13 corrected: ||xi_alpha|| (alpha truncated at ``cfg.depth``, the levels above it added through the
    corrected Prop. 5.10, an upper estimate) against B = 4 sqrt(2) (d+1) K_psi / (1 - L - 32 (d+1) K_W), over logistic
    RNNs of the parameter set: ||W||_F = K_W = w (1-L)/(32 (d+1)), ||b|| = K_b in [1e-3, 1e3], ||psi|| = K_psi
    (both sides are proportional to K_psi: K_psi = 1), psi mixing a random direction with that of the first
    level of alpha by ``psi_align``, e in 1..4, d in 1..3."""
    dims = [Dim("e", 1, 4, "int"), Dim("d", 1, 3, "int"), Dim("L", 0.01, 0.99), Dim("w", 1e-3, 1.0, "log"),
            Dim("bias", 1e-3, 1e3, "log"), Dim("bias_align", 0.0, 1.0), Dim("psi_align", 0.0, 1.0), _SEED]

    def ratio(inst):
        e, d, L = int(inst["e"]), int(inst["d"]), float(inst["L"])
        db = d + 1
        rng = np.random.default_rng(inst["seed"])
        KW = min(float(inst["w"]), 1.0 - 1e-9) * (1.0 - L) / (32 * db)
        U, V, b = search_weights(rng, e, d, KW, "fro", inst["bias"], inst["bias_align"])
        P = S.star_products(U, V, b, L, cfg.depth, "logistic")
        first = P[0][d, :e]
        g = _direction(rng, e)
        psi = inst["psi_align"] * first / np.linalg.norm(first) + (1 - inst["psi_align"]) * g
        psi = psi / np.linalg.norm(psi) if np.linalg.norm(psi) > 0 else g
        norm = S.rkhs_norm(S.rkhs_coefficients(psi, P))
        # levels above the depth: ||alpha_k|| <= (d+1)^(k/2) Lambda_k / k! with the corrected Lambda_k bound
        k = np.arange(cfg.depth + 1, cfg.depth + 400, dtype=float)
        q = 8.0 * 4.0 * KW / (1.0 - L)
        tail2 = float(np.sum(np.exp(k * math.log(db) + 2 * math.log(2.0 / (1.0 - L) * math.sqrt(2.0) * 2.0)
                                    + 2 * (k - 1) * math.log(q))))
        return math.sqrt(norm ** 2 + tail2), corrected_B(d, L, KW, 1.0)

    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("4 sqrt(2)", corrected_B(1, 0.0, 0.0, 1.0) / 2.0))


# ----------------------------------------------------------------------------------------- Thm 5.12

def _rademacher_mean(G, draws, rng, signs="rademacher"):
    """E_eps sqrt(eps' G eps): exact over the 2^(n-1) sign vectors (up to the sign) for n <= 12, Monte Carlo
    with ``draws`` draws beyond (``signs`` "ones": eps = 1, the broken draw of a negative control)."""
    n = G.shape[0]
    if signs == "ones":
        eps = np.ones((1, n))
    elif n <= 12:
        m = np.arange(2 ** (n - 1))
        eps = 1.0 - 2.0 * ((m[:, None] >> np.arange(n - 1)[None, :]) & 1)
        eps = np.hstack([eps, np.ones((eps.shape[0], 1))])
    else:
        eps = rng.choice([-1.0, 1.0], (draws, n))
    return float(np.mean(np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", eps, G, eps), 0.0))))


def rademacher_search(cfg):
    """Proof of Thm 5.12: (1/n) E_eps sqrt(eps' K eps) (upper estimate: the truncated Gram plus the tail
    sqrt(n tail), see :func:`measure_rademacher`) against 2/((1-L) sqrt(n)), over n in [1, 256], L, paths of
    :math:`\\mathcal X` (segments to random walks, ``n_points`` in 2..50) and a share ``same`` of the sample equal to
    its first path (aligned features)."""
    dims = [Dim("n", 1, 256, "log-int"), Dim("L", 0.001, 0.99, "log"), Dim("tv_frac", 0.01, 1.0),
            Dim("turns", 0.0, 4.0), Dim("rough", 0.0, 1.0), Dim("n_points", 2, 50, "log-int"),
            Dim("same", 0.0, 1.0), _SEED]

    def ratio(inst):
        n, L = int(inst["n"]), float(inst["L"])
        rng = np.random.default_rng(inst["seed"])
        r = (1 + L) / 2
        tail = r ** (2 * (cfg.depth + 1)) / (1 - r * r)
        feats = []
        n_same = int(round(inst["same"] * (n - 1)))
        for i in range(n):
            if 0 < i <= n_same:
                feats.append(feats[0])
                continue
            X = search_path(rng, inst["n_points"] - 1, 2, L, inst["tv_frac"], inst["turns"], inst["rough"])
            sig = S.signature(S.time_augment(X, L, check=False), cfg.depth)
            feats.append(np.concatenate([s.ravel() for s in sig]))
        F = np.array(feats)
        mean = _rademacher_mean(F @ F.T, cfg.draws, rng, cfg.signs)
        return (mean + math.sqrt(n * tail)) / n, rademacher_rhs(L, n)

    return search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed,
                             constant=("2", rademacher_rhs(0.0, 1.0)))
