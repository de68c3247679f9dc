"""Checks of the PL / long-time results of ``implicit-reg``: Lemma 21, Proposition 5, Theorem 6.

Numbering of the ICLR paper (004); the theses number them Lemma 3.24, Prop 3.6, Thm 3.7 (aliases).

* Lemma 21: for sigma bounded, W (m x d) standard Gaussian and X (d x n) with i.i.d. unit columns,
  w.p. >= 1 - delta, s_min(sigma(WX)) >= sqrt(m) |eta_r(sigma)| / 4. The printed delta is > 1 (vacuous)
  at CPU sizes, so the frequency check tests the stronger statement "violation frequency <= 0.05" for
  m >= 2n and records the printed delta. The transition check follows lambda_min(sigma(WX)^T sigma(WX)/m)
  along a ladder of m/n: 0 (rank <= m) below n, bounded away from 0 from m = 2n, and at m = 64 n close to
  its m -> infinity limit lambda_min(K), K_ij = E[sigma(g_i) sigma(g_j)] = sum_r eta_r^2 <x_i, x_j>^r,
  which for sigma = sin is e^{-1} sinh(X^T X) (checked against the Hermite series of theory.pl).
* Prop 5: at the initialisation of Section 3 the PL ratio G/l (G with the factor L of Definition 1) has
  a closed form that does not depend on L; checked against backpropagation for L = 1 .. 64, and
  recorded against the proposition's lower bound c4 / (n sqrt(nq)) (true, and loose by ~10 orders).
* Thm 6: along GD of Eq. (4) (Euler steps of the flow) dl/dt = -G holds up to O(lr) (rate check,
  slope +1 in lr), and at large t log l decays linearly with slope -mean(G/l) (exponential convergence).
* Prop 5 against width (prop-5/width): n = 16, d = 32, sin; the proof's certificate (theory.pl.certified_ratio:
  (1/(L m l)) sum_k s_min(S_k)^2 ||p_k||^2) is 0 for m < n (rank), >= eta_3^2/(16 n) from m = 2n along a
  short training (the proof's s_min >= sqrt(m) eta_r / 8 with ||p_k||^2 = 4 l / n), the PL ratio at init is
  width-independent (its A, B part dominates), and both are 10^10 .. 10^13 times Prop. 5's mu.
* Prop 5 against n (prop-5/samples): the worst case over target directions of the V-part PL ratio at init,
  4 s_min(S)^2 / (n m), with m = 4n and d = 2n (so that Lemma 21's delta stays small): slope -1 in n,
  beating the proof's n^-3/2 (fixed q; n^-2 here since q grows with n): the proof loses a factor
  sqrt(nq) by keeping only the first L eta_r / (C2 sqrt(nq)) layers.
* Prop 5, ball version (prop-5/ball): theory.pl.ball_pl (random + adversarial) on a Euclidean ball inside
  Definition 1's ball of radius M = c3 / sqrt(nq) around the init, in the metric of the flow; the
  certificate at each argmin is below the ratio there, and the ball's constant is above Prop. 5's mu.
* Thm 6 (i)-(iv) (thm-6/long-time, /depth-limit, /smoothness), Setup A of the catalogue resized (A, B
  trained, small targets y = 0.01 N, ||x_i|| = sqrt q, sin, n = 8, d = 16, q = 18, m = 32, lr = 0.02, flow
  time 8): increments decay like e^{-mu t/2} with mu the measured PL ratio, the loss follows
  exp(-int G/l), the relative interpolation error is < 1e-3 at T; weights (sup over t), hidden states and
  outputs at depths L and 2L differ by O(1/L), and max_{t,k} ||Z_{k+1} - Z_k|| = O(1/L). With d >= n the
  A, B blocks can fit the data alone, and they do most of it: Z moves by ~1e-3 (recorded) and successive
  layers differ by ~1e-8, yet its depth structure is the one the theorem predicts.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from theory.claims import qualitative_verdict, rate_verdict
from theory.implicit import Params, forward, initialize, loss_and_gradient, synthetic_data, train
from theory.pl import (
    backward_states,
    ball_pl,
    certified_ratio,
    hermite_coefficient,
    hermite_coefficients,
    init_ratio,
    integrated_pl,
    prop5_constants,
)
from theory.plots import new_axes, plot_rate, save_figure
from theory.rates import fit_rate, frequency, identity_error


def _aliases(number):
    return (f"marion-thesis/{number}", f"sander-thesis/{number}")


# --------------------------------------------------------------------------- Lemma 21

ACTS = {"sin": np.sin, "identity": lambda z: z}
R_ORDER = 3  # eta_3(sin) = -e^{-1/2}/sqrt(6); eta_2(sin) = 0, so r = 3 is the first usable order
L21_N, L21_D = 16, 32
L21_RATIOS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 64.0)
EXPECTED_L21 = {"delta": 0.05}  # stronger than the printed delta (> 1 here): see the module docstring
EXPECTED_TRANSITION = {"below_n_max": 1e-10, "from_2n_min_over_eta2": 1.0 / 16.0, "limit_rtol": 0.25}


def unit_columns(n, d, rng):
    """X (d x n) with i.i.d. columns uniform on the unit sphere."""
    X = rng.standard_normal((d, n))
    return X / np.linalg.norm(X, axis=0)


def gram_min_eig(m, n, d, seed, activation="sin"):
    """(s_min(sigma(WX)), lambda_min(sigma(WX)^T sigma(WX)/m), X) for one seeded draw.

    s_min is taken as in the proof of Lemma 21, s_min = sqrt(lambda_min(M)) with M = sigma(WX)^T sigma(WX)
    (n x n): the n-th singular value, 0 when m < n."""
    rng = np.random.default_rng(seed)
    X = unit_columns(n, d, rng)
    W = rng.standard_normal((m, d))
    S = ACTS[activation](W @ X)
    lam = float(np.linalg.eigvalsh(S.T @ S / m)[0])
    s_min = float(np.linalg.svd(S, compute_uv=False)[n - 1]) if m >= n else 0.0
    return s_min, lam, X


def sin_kernel(X):
    """K = E_w[sin(X^T w) sin(w^T X)] = e^{-1} sinh(X^T X) for unit columns."""
    return np.exp(-1.0) * np.sinh(X.T @ X)


def hermite_kernel(X, activation="sin", rmax=120):
    """The same kernel as the Hermite series sum_r eta_r^2 (X^T X)^{o r}."""
    eta = hermite_coefficients(activation, rmax)
    G = X.T @ X
    return sum(eta[r] ** 2 * G**r for r in range(rmax + 1))


def printed_delta(m, n, d, eta, m_sigma=1.0, v_x=1.0, r=R_ORDER):
    """The delta of Lemma 21 (v_x = 1 is optimistic for uniform columns: the delta is still > 1)."""
    return n * np.exp(-3 * m * eta**2 / (64 * m_sigma**2 * n)) + 2 * n**2 * np.exp(-d / (2 * v_x * n ** (2 / r)))


def lemma21_violations(ratios=(2.0, 4.0), seeds=range(200), n=L21_N, d=L21_D, activation="sin"):
    """Violation indicators of s_min(sigma(WX)) >= sqrt(m) |eta_3(sin)| / 4 over seeds and m = ratio n."""
    eta = abs(float(hermite_coefficient("sin", R_ORDER)))
    out, smin = [], []
    for ratio in ratios:
        m = int(round(ratio * n))
        for s in seeds:
            v, _, _ = gram_min_eig(m, n, d, 10_000 * m + s, activation)
            out.append(v < np.sqrt(m) * eta / 4)
            smin.append(v / np.sqrt(m))
    return np.array(out), np.array(smin)


@pytest.mark.claim("implicit-reg/lemma-21", kind="frequency", aliases=_aliases("lemma-3.24"),
                   title="sigma = sin, m >= 2n: s_min(sigma(WX)) >= sqrt(m) |eta_3| / 4 except with small probability")
def test_lemma21_frequency(claim):
    eta = abs(float(hermite_coefficient("sin", R_ORDER)))
    viol, smin = lemma21_violations()
    claim.measured["n"], claim.measured["d"], claim.measured["m_over_n"] = L21_N, L21_D, [2.0, 4.0]
    claim.measured["threshold_s_min_over_sqrt_m"] = eta / 4
    claim.measured["median_s_min_over_sqrt_m"] = float(np.median(smin))
    claim.measured["min_s_min_over_sqrt_m"] = float(np.min(smin))
    claim.measured["printed_delta"] = [float(printed_delta(int(k * L21_N), L21_N, L21_D, eta)) for k in (2, 4)]
    claim.frequency(frequency(viol, delta=EXPECTED_L21["delta"]), EXPECTED_L21)


def transition_table(ratios=L21_RATIOS, seeds=range(20), n=L21_N, d=L21_D, activation="sin"):
    """lambda_min(G/m) per (seed, ratio) and lambda_min(K) per seed (the m -> infinity limit, sin kernel)."""
    lam = np.empty((len(seeds), len(ratios)))
    lim = np.empty(len(seeds))
    for i, s in enumerate(seeds):
        for j, ratio in enumerate(ratios):
            _, lam[i, j], X = gram_min_eig(int(round(ratio * n)), n, d, 7 * s + 1, activation)
        lim[i] = np.linalg.eigvalsh(sin_kernel(X))[0]  # same X for every ratio (drawn first from the seed)
    return lam, lim


def transition_predicate(ratios, lam, lim, eta, expected=EXPECTED_TRANSITION):
    """(ok, message): 0 below m = n, >= eta^2/16 from m = 2n (every seed), within rtol of the limit at the top."""
    ratios = np.asarray(ratios)
    below = lam[:, ratios < 1.0]
    above = lam[:, ratios >= 2.0]
    top = lam[:, -1]
    below_max = float(np.max(np.abs(below)))
    above_min = float(np.min(above))
    gap = float(np.max(np.abs(top / lim - 1.0)))
    ok = (below_max <= expected["below_n_max"] and above_min >= expected["from_2n_min_over_eta2"] * eta**2
          and gap <= expected["limit_rtol"])
    msg = (f"max |lambda_min| below m = n: {below_max:.2e} (<= {expected['below_n_max']:g}); min from m = 2n: "
           f"{above_min:.4g} (>= eta_3^2/16 = {eta**2 / 16:.4g}); at m/n = {ratios[-1]:g} max rel gap to "
           f"lambda_min(K) {gap:.3f} (<= {expected['limit_rtol']})")
    return bool(ok), msg


@pytest.mark.claim("implicit-reg/lemma-21/transition", kind="qualitative", aliases=_aliases("lemma-3.24"),
                   title="lambda_min(sigma(WX)^T sigma(WX)/m): 0 for m < n, >= eta_3^2/16 from m = 2n, "
                         "-> lambda_min(E K) >= eta_3^2/8 as m grows")
def test_lemma21_transition(claim):
    eta = abs(float(hermite_coefficient("sin", R_ORDER)))
    lam, lim = transition_table()
    # the closed-form limit kernel against the Hermite series of the toolkit (one seed's X)
    X = unit_columns(L21_N, L21_D, np.random.default_rng(0))
    series = identity_error(hermite_kernel(X), sin_kernel(X))
    claim.expected = {**EXPECTED_TRANSITION, "kernel_series_atol": 1e-12}
    ok, msg = transition_predicate(L21_RATIOS, lam, lim, eta)
    ok = ok and series.max_abs_err <= 1e-12
    measured = {"m_over_n": list(L21_RATIOS), "median_lambda_min": np.median(lam, axis=0).tolist(),
                "limit_lambda_min_K": lim.tolist(), "eta3_sq_over_8": eta**2 / 8,
                "bound_ratio_eta3sq_over_8_to_limit": float(np.max(eta**2 / 8 / lim)),
                "kernel_series_max_abs_err": series.max_abs_err}
    ax = new_axes()
    ax.semilogx(L21_RATIOS, np.maximum(np.median(lam, axis=0), 1e-18), "o-", label="median lambda_min(G/m)")
    ax.axhline(float(np.median(lim)), ls="--", label="lambda_min(K) (median)")
    ax.axhline(eta**2 / 16, ls=":", label="eta_3^2/16")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("m / n")
    ax.legend()
    fig = save_figure(ax.figure, "implicit-reg/lemma-21/transition")
    claim.qualitative(ok, measured, msg + f"; kernel vs Hermite series {series.max_abs_err:.1e}", figure=fig)


# --------------------------------------------------------------------------- Proposition 5

P5_N, P5_D, P5_DOUT, P5_Q, P5_M = 16, 6, 2, 8, 64
P5_DEPTHS = (1, 4, 16, 64)
EXPECTED_P5 = {"rtol": 1e-12}


def p5_sample(seed):
    """n samples with ||x_i|| = sqrt(q) (Prop. 5's normalisation), small Gaussian targets."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((P5_N, P5_D))
    X *= np.sqrt(P5_Q) / np.linalg.norm(X, axis=1, keepdims=True)
    return X, 0.1 * rng.standard_normal((P5_N, P5_DOUT))


def pl_lhs(g: Params, L, depth_factor=True):
    """G of Definition 1: ||dA||^2 + L sum_k ||dZ_k||^2 + ||dB||^2 (factor L dropped if depth_factor=False)."""
    f = L if depth_factor else 1
    return float(np.sum(g.A**2) + f * (np.sum(g.V**2) + np.sum(g.W**2)) + np.sum(g.B**2))


def p5_ratios(seeds=range(5), depth_factor=True, activation="sin"):
    """(backprop ratios per (seed, L), closed-form ratio per seed repeated over L)."""
    got, ref = [], []
    for s in seeds:
        X, Y = p5_sample(s)
        for L in P5_DEPTHS:
            p = initialize(P5_D, P5_M, L, np.random.default_rng(100 + s), q=P5_Q, d_out=P5_DOUT)
            loss, g = loss_and_gradient(X, Y, p, activation)
            got.append(pl_lhs(g, L, depth_factor) / loss)
            ref.append(init_ratio(X, Y, p, activation))
    return np.array(got), np.array(ref)


@pytest.mark.claim("implicit-reg/prop-5", kind="identity", aliases=_aliases("prop-3.6"),
                   title="At the init of Section 3 the PL ratio G/l (Def. 1, factor L) is L-independent, equal to "
                         "its closed form, and above Prop. 5's mu = c4/(n sqrt(nq))")
def test_prop5_init_ratio(claim):
    got, ref = p5_ratios()
    mu_bound = prop5_constants("sin", R_ORDER).mu(P5_N, P5_Q)
    claim.measured["depths"] = list(P5_DEPTHS)
    claim.measured["ratios"] = got.tolist()
    claim.measured["prop5_mu"] = float(mu_bound)
    claim.measured["max_mu_over_ratio"] = float(mu_bound / got.min())
    assert mu_bound < got.min()  # the proposition's (very loose) lower bound, recorded above
    claim.identity(identity_error(got, ref), EXPECTED_P5)


# --------------------------------------------------------------------------- Theorem 6

T6_N, T6_D, T6_M, T6_L = 10, 8, 32, 8
T6_LRS = np.array([0.04, 0.02, 0.01, 0.005, 0.0025])
T6_T = 2.0
EXPECTED_T6_IDENTITY = {"slope": 1.0, "tol": 0.1}  # Euler step of the flow: dl/dt + G = O(lr)
T6_LONG = {"lr": 0.02, "steps": 4000}  # flow time 80 (catalogue setup B)
EXPECTED_T6_EXP = {"slope_rtol": 0.05, "r2_min": 0.99, "mu_spread_min": 0.5}


def gd_run(lr, steps, seed=0, m=T6_M, L=T6_L, activation="gelu", depth_factor=True):
    """GD of Eq. (4) on the Z blocks (A = B = I frozen, as in Section 5.1); returns t, losses, G."""
    return _gd_run(float(lr), int(steps), int(seed), int(m), int(L), activation, bool(depth_factor))


@functools.lru_cache(maxsize=None)
def _gd_run(lr, steps, seed, m, L, activation, depth_factor):
    X, Y = synthetic_data(T6_N, T6_D, np.random.default_rng(500 + seed))
    p = initialize(T6_D, m, L, np.random.default_rng(seed))
    V, W = p.V.copy(), p.W.copy()
    losses, G = np.empty(steps + 1), np.empty(steps + 1)
    for j in range(steps + 1):
        losses[j], g = loss_and_gradient(X, Y, Params(p.A, V, W, p.B), activation)
        G[j] = (L if depth_factor else 1) * (np.sum(g.V**2) + np.sum(g.W**2))
        V -= lr * L * g.V
        W -= lr * L * g.W
    return lr * np.arange(steps + 1), losses, G


def t6_residuals(lrs=T6_LRS, seeds=range(3), **kw):
    """max relative residual of dl/dt = -G (theory.pl.integrated_pl) per (seed, lr), flow time T6_T."""
    return np.array([[integrated_pl(*gd_run(lr, round(T6_T / lr), s, **kw)).max_relative_residual for lr in lrs]
                     for s in seeds])


@pytest.mark.claim("implicit-reg/thm-6", kind="rate", aliases=_aliases("thm-3.7"),
                   title="Along GD of Eq. (4) the flow identity dl/dt = -G (G of Def. 1) holds to first order in lr")
def test_thm6_flow_identity(claim):
    fit = fit_rate(T6_LRS, t6_residuals())
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=1.0, label="GELU, L = 8, m = 32", xlabel="learning rate",
              ylabel=r"$\max_t |d\ell/dt + G| / G$", title="implicit-reg/thm-6")
    claim.rate(fit, EXPECTED_T6_IDENTITY, figure=save_figure(ax.figure, "implicit-reg/thm-6"), grid_label="lr")


def exponential_phase(t, losses, G, start=0.5):
    """On the last (1 - start) of the run: fitted slope of log l, r^2 of the fit, mean and spread of G/l."""
    k = int(start * t.size)
    tt, ll = t[k:], np.log(losses[k:])
    slope, icpt = np.polyfit(tt, ll, 1)
    r2 = 1.0 - np.sum((ll - (slope * tt + icpt)) ** 2) / np.sum((ll - ll.mean()) ** 2)
    mu = G[k:] / losses[k:]
    return {"slope": float(slope), "r2": float(r2), "mu_mean": float(mu.mean()),
            "mu_spread": float(mu.min() / mu.max()), "final_loss": float(losses[-1]), "initial_loss": float(losses[0])}


def exponential_predicate(res, expected=EXPECTED_T6_EXP):
    ok = (abs(-res["slope"] / res["mu_mean"] - 1.0) <= expected["slope_rtol"] and res["r2"] >= expected["r2_min"]
          and res["mu_spread"] >= expected["mu_spread_min"])
    msg = (f"log-loss slope {res['slope']:.4g} vs -mean(G/l) {-res['mu_mean']:.4g} (rtol {expected['slope_rtol']}), "
           f"r^2 {res['r2']:.4f} (>= {expected['r2_min']}), min/max G/l {res['mu_spread']:.3f} "
           f"(>= {expected['mu_spread_min']}); loss {res['initial_loss']:.3g} -> {res['final_loss']:.3g}")
    return bool(ok), msg


@pytest.mark.claim("implicit-reg/thm-6/exponential", kind="qualitative", aliases=_aliases("thm-3.7"),
                   title="Long-time training: log l decays linearly, with slope -mean(G/l) (the PL rate)")
def test_thm6_exponential(claim):
    res = exponential_phase(*gd_run(**T6_LONG))
    claim.expected = dict(EXPECTED_T6_EXP)
    ok, msg = exponential_predicate(res)
    claim.qualitative(ok, res, msg)


# --------------------------------------------------------------------------- Prop. 5 against width m and sample size n

ETA3 = abs(float(hermite_coefficient("sin", R_ORDER)))
P5W_N, P5W_D, P5W_DOUT, P5W_L = 16, 32, 2, 4
P5W_Q = P5W_D + P5W_DOUT
P5W_RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
P5W_TRAIN = {"lr": 0.1, "chunk": 10, "chunks": 5}  # flow time 5, A and B trained (Eq. (4))
EXPECTED_P5W = {"below_n_max": 1e-10, "from_2n_min_n_cert_over_eta2": 1.0 / 16.0, "init_ratio_over_mu_min": 1.0}


def sphere_sample(n, d, d_out, q, seed, target_scale=0.01):
    """x_i uniform on the sphere of radius sqrt(q) in R^d (Prop. 5's normalisation), y_i ~ N(0, s^2 I)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X *= np.sqrt(q) / np.linalg.norm(X, axis=1, keepdims=True)
    return X, target_scale * rng.standard_normal((n, d_out))


def certificate_any_width(X, Y, p, activation="sin"):
    """The certificate of theory.pl.certified_ratio, also for m < n: (1/(L m l)) sum_k lambda_min(S_k S_k^T)_+
    ||p_k||^2 with S_k (n x m) (for m < n, S_k S_k^T has rank <= m < n and lambda_min is 0 up to rounding,
    clipped at 0). For m >= n it equals certified_ratio(...).certificate (checked in the claim)."""
    if p.m >= X.shape[0]:
        return certified_ratio(X, Y, p, activation).certificate
    h, P = backward_states(X, Y, p, activation)
    loss = float(loss_and_gradient(X, Y, p, activation)[0])
    total = 0.0
    for k in range(p.L):
        S = ACTS[activation](h[k] @ p.W[k].T / np.sqrt(p.q))
        total += max(float(np.linalg.eigvalsh(S @ S.T)[0]), 0.0) * float(np.sum(P[k + 1] ** 2))
    return total / (p.L * p.m * loss)


def width_table(ratios=P5W_RATIOS, seeds=range(3), n=P5W_N, d=P5W_D, activation="sin"):
    """Per (seed, m/n): the PL ratio at init (init_ratio) and min / max of the certificate along a short GD run."""
    q = d + P5W_DOUT
    init = np.empty((len(seeds), len(ratios)))
    cmin = np.empty_like(init)
    cmax = np.empty_like(init)
    for i, s in enumerate(seeds):
        X, Y = sphere_sample(n, d, P5W_DOUT, q, 300 + s)
        for j, ratio in enumerate(ratios):
            p = initialize(d, int(round(ratio * n)), P5W_L, np.random.default_rng(400 + s), q=q, d_out=P5W_DOUT)
            init[i, j] = init_ratio(X, Y, p, activation)
            certs = []
            for _ in range(P5W_TRAIN["chunks"] + 1):
                certs.append(certificate_any_width(X, Y, p, activation))
                p, _ = train(X, Y, p, activation, lr=P5W_TRAIN["lr"], steps=P5W_TRAIN["chunk"])
            cmin[i, j], cmax[i, j] = min(certs), max(certs)
    return init, cmin, cmax


def width_predicate(ratios, init, cmin, n, mu, eta, expected=EXPECTED_P5W):
    """(ok, message): certificate 0 below m = n, n cert / eta^2 >= 1/16 from m = 2n along training, and the
    PL ratio at init above Prop. 5's mu at every width."""
    ratios = np.asarray(ratios)
    below = float(np.max(np.abs(cmin[:, ratios < 1.0]))) if (ratios < 1.0).any() else 0.0
    above = float(np.min(cmin[:, ratios >= 2.0])) * n / eta**2
    init_over_mu = float(np.min(init)) / mu
    ok = (below <= expected["below_n_max"] and above >= expected["from_2n_min_n_cert_over_eta2"]
          and init_over_mu >= expected["init_ratio_over_mu_min"])
    msg = (f"certificate below m = n: max {below:.1e} (<= {expected['below_n_max']:g}); from m = 2n: min n cert / "
           f"eta_3^2 = {above:.3g} (>= {expected['from_2n_min_n_cert_over_eta2']:.4g}); min PL ratio at init / "
           f"Prop. 5's mu = {init_over_mu:.3g}")
    return bool(ok), msg


@pytest.mark.claim("implicit-reg/prop-5/width", kind="qualitative", aliases=_aliases("prop-3.6"),
                   title="PL against width: the proof's certificate is 0 for m < n, >= eta_3^2/(16 n) from m = 2n "
                         "along training, and every estimate is far above mu = c4/(n sqrt(nq))")
def test_prop5_width(claim):
    c = prop5_constants("sin", R_ORDER)
    mu = c.mu(P5W_N, P5W_Q)
    init, cmin, cmax = width_table()
    # the general-width helper and theory.pl.certified_ratio agree where both apply (one point)
    X, Y = sphere_sample(P5W_N, P5W_D, P5W_DOUT, P5W_Q, 300)
    p = initialize(P5W_D, 2 * P5W_N, P5W_L, np.random.default_rng(400), q=P5W_Q, d_out=P5W_DOUT)
    h, P = backward_states(X, Y, p, "sin")
    loss = loss_and_gradient(X, Y, p, "sin")[0]
    S = np.sin(h[0] @ p.W[0].T / np.sqrt(P5W_Q))
    via_eig = np.linalg.eigvalsh(S @ S.T)[0] * sum(np.sum(P[k + 1] ** 2) for k in range(P5W_L)) / (P5W_L * 2 * P5W_N * loss)
    agree = identity_error(via_eig, certified_ratio(X, Y, p, "sin").certificate)
    claim.expected = {**EXPECTED_P5W, "helper_rtol": 1e-9}
    ok, msg = width_predicate(P5W_RATIOS, init, cmin, P5W_N, mu, ETA3)
    ok = ok and agree.max_rel_err <= 1e-9
    from_2n = np.asarray(P5W_RATIOS) >= 2.0
    measured = {"n": P5W_N, "d": P5W_D, "q": P5W_Q, "L": P5W_L, "m_over_n": list(P5W_RATIOS),
                "init_ratio_median": np.median(init, axis=0).tolist(),
                "certificate_min_along_training": np.min(cmin, axis=0).tolist(),
                "certificate_max_along_training": np.max(cmax, axis=0).tolist(),
                "prop5_mu": mu, "eta3_sq_over_16n": ETA3**2 / (16 * P5W_N),
                "min_certificate_over_prop5_mu_from_2n": float(np.min(cmin[:, from_2n]) / mu),
                "min_init_ratio_over_prop5_mu": float(np.min(init) / mu), "helper_vs_certified_rel_err": agree.max_rel_err}
    ax = new_axes()
    r = np.asarray(P5W_RATIOS)
    ax.loglog(r, np.median(init, axis=0), "s-", label="PL ratio $G/\\ell$ at init (init_ratio)")
    ax.loglog(r, np.maximum(np.min(cmin, axis=0), 1e-14), "o-", label="certificate, min along training")
    ax.axhline(ETA3**2 / (16 * P5W_N), ls=":", color="k", label=r"$\eta_3^2/(16n)$ (proof, ball)")
    ax.axhline(mu, ls="--", color="r", label=r"Prop. 5: $\mu = c_4/(n\sqrt{nq})$")
    ax.axvline(1.0, color="grey", lw=0.5)
    ax.set_xticks(r, [f"{v:g}" for v in r])
    ax.minorticks_off()
    ax.set_xlabel("m / n   (n = 16, d = 32, sin; 0 drawn at 1e-14)")
    ax.set_ylabel("PL ratio")
    ax.set_title("implicit-reg/prop-5/width")
    ax.legend(fontsize=7)
    fig = save_figure(ax.figure, "implicit-reg/prop-5/width")
    claim.qualitative(ok, measured, msg + f"; helper vs certified_ratio {agree.max_rel_err:.1e}", figure=fig)


P5N_SIZES = (6, 9, 12, 18, 24, 36, 48)
P5N_SEEDS = range(6)
P5N_DOUT = 2
EXPECTED_P5N = {"slope": -1.0, "tol": 0.2}  # n^-1 asymptotically; lambda_min of the kernel still drifts
P5N_PROOF_EXPONENT = -1.5  # mu = c4 / (n sqrt(nq)) at fixed q


def samples_table(sizes=P5N_SIZES, seeds=P5N_SEEDS, d_of_n=lambda n: 2 * n, m_over_n=4, activation="sin"):
    """Certificate at init (= the worst case over target directions of the V-part PL ratio at V = 0,
    4 s_min(S)^2 / (n m)) and the full PL ratio at init, per (seed, n), with d = d_of_n(n), q = d + 2, m = 4 n."""
    cert = np.empty((len(seeds), len(sizes)))
    full = np.empty_like(cert)
    for i, s in enumerate(seeds):
        for j, n in enumerate(sizes):
            d = d_of_n(n)
            q = d + P5N_DOUT
            X, Y = sphere_sample(n, d, P5N_DOUT, q, 1000 * n + s)
            p = initialize(d, m_over_n * n, 1, np.random.default_rng(7 * n + s), q=q, d_out=P5N_DOUT)
            res = certified_ratio(X, Y, p, activation)
            cert[i, j], full[i, j] = res.certificate, res.ratio
    return cert, full


@pytest.mark.claim("implicit-reg/prop-5/samples", kind="rate", aliases=_aliases("prop-3.6"),
                   title="Local PL constant at init against n (m = 4n, d = 2n): ~ n^-1, beating the proof's "
                         "n^-3/2 lower bound")
def test_prop5_samples(claim):
    cert, full = samples_table()
    fit = fit_rate(P5N_SIZES, cert)
    fit_full = fit_rate(P5N_SIZES, full)
    c = prop5_constants("sin", R_ORDER)
    mus = np.array([c.mu(n, 2 * n + P5N_DOUT) for n in P5N_SIZES])
    claim.measured["estimator"] = "4 s_min(S)^2/(n m) at init = min over target directions of the V-part PL ratio"
    claim.measured["proof_exponent_fixed_q"] = P5N_PROOF_EXPONENT
    claim.measured["proof_exponent_q_prop_n"] = -2.0
    claim.measured["beats_proof_exponent"] = bool(fit.ci[0] > P5N_PROOF_EXPONENT)
    claim.measured["full_ratio_slope"], claim.measured["full_ratio_ci"] = fit_full.slope, list(fit_full.ci)
    claim.measured["min_certificate_over_prop5_mu"] = float(np.min(cert / mus))
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=-1.0, label="certificate at init (worst target)", xlabel="sample size n",
              ylabel="PL constant", title="implicit-reg/prop-5/samples (m = 4n, d = 2n, sin)")
    ax.loglog(P5N_SIZES, mus * (cert[:, 0].mean() / mus[0]), ":", color="r",
              label="proof's $c_4/(n\\sqrt{nq})$, rescaled to the first point")
    ax.legend(fontsize=7)
    claim.rate(fit, EXPECTED_P5N, figure=save_figure(ax.figure, "implicit-reg/prop-5/samples"), grid_label="n")


# --------------------------------------------------------------------------- Prop. 5, ball version (Definition 1)

P5B_N, P5B_D, P5B_DOUT, P5B_M, P5B_L = 4, 6, 1, 8, 2
P5B_Q = P5B_D + P5B_DOUT
P5B_RADII = (1.0, 30.0, 1000.0)  # multiples of M = c3 / sqrt(nq)
P5B_SEARCH = {"n_random": 32, "n_adversarial": 1, "n_steps": 4}


def _blocks(p):
    return np.concatenate([p.A.ravel(), p.V.ravel(), p.W.ravel(), p.B.ravel()])


def _unblocks(w, p):
    sizes = np.cumsum([p.A.size, p.V.size, p.W.size])
    A, V, W, B = np.split(w, sizes)
    return Params(A.reshape(p.A.shape), V.reshape(p.V.shape), W.reshape(p.W.shape), B.reshape(p.B.shape))


def ball_run(X, Y, center, radius, seed, activation="sin"):
    """theory.pl.ball_pl on the Euclidean ball of radius M / sqrt 2 around ``center``, in the metric of the
    flow (4): the gradient is returned with the Z blocks scaled by sqrt(L), so that ||grad||^2 / l = G / l of
    Definition 1. The Euclidean ball lies inside Definition 1's ball of radius M (per Z_k block,
    ||V_k|| + ||W_k|| <= sqrt 2 (||V_k||^2 + ||W_k||^2)^{1/2}). Returns the BallPL result and the proof's
    certificate at every argmin (certified_ratio), which is a pointwise lower bound."""
    L = center.L
    scale = np.concatenate([np.ones(center.A.size), np.full(center.V.size + center.W.size, np.sqrt(L)),
                            np.ones(center.B.size)])

    def loss_fn(w):
        return loss_and_gradient(X, Y, _unblocks(w, center), activation)[0]

    def grad_fn(w):
        return _blocks(loss_and_gradient(X, Y, _unblocks(w, center), activation)[1]) * scale

    res = ball_pl(loss_fn, grad_fn, _blocks(center), radius / np.sqrt(2.0), rng=seed, **P5B_SEARCH)
    cert = certified_ratio(X, Y, _unblocks(res.argmin, center), activation)
    return res, cert


def ball_table(X, Y, center, M, radii=P5B_RADII, seed=0):
    rows = []
    for k in radii:
        res, cert = ball_run(X, Y, center, k * M, seed)
        rows.append({"radius_over_M": k, "mu_random": res.mu_random, "mu_adversarial": res.mu_adversarial,
                     "mu_min": res.mu_min, "certificate_at_argmin": cert.certificate, "ratio_at_argmin": cert.ratio,
                     "n_evaluations": res.n_evaluations})
    return rows


def ball_predicate(rows, mu, rtol=1e-9):
    """(ok, message): at every radius, certificate at the argmin <= ratio there = mu_min (pointwise chain of
    the proof) and, on the ball of radius M, the measured constant >= Prop. 5's mu."""
    chain = all(r["certificate_at_argmin"] <= r["ratio_at_argmin"] * (1 + rtol) and
                abs(r["ratio_at_argmin"] - r["mu_min"]) <= rtol * r["mu_min"] for r in rows)
    at_M = rows[0]
    ok = chain and at_M["mu_min"] >= mu
    msg = (f"certificate <= ratio at every argmin: {chain}; ball of radius M: mu_min {at_M['mu_min']:.4g} "
           f"(random {at_M['mu_random']:.4g}, adversarial {at_M['mu_adversarial']:.4g}) vs Prop. 5's mu {mu:.3g}; "
           f"radius {rows[-1]['radius_over_M']:g} M: mu_min {rows[-1]['mu_min']:.4g}")
    return bool(ok), msg


@pytest.mark.claim("implicit-reg/prop-5/ball", kind="qualitative", aliases=_aliases("prop-3.6"),
                   title="(M, mu)-local PL on the ball M = c3/sqrt(nq): certificate <= adversarial <= random "
                         "estimates, and the measured ball constant >= mu = c4/(n sqrt(nq))")
def test_prop5_ball(claim):
    c = prop5_constants("sin", R_ORDER)
    M, mu = c.radius(P5B_N, P5B_Q), c.mu(P5B_N, P5B_Q)
    X, Y = sphere_sample(P5B_N, P5B_D, P5B_DOUT, P5B_Q, 11)
    center = initialize(P5B_D, P5B_M, P5B_L, np.random.default_rng(12), q=P5B_Q, d_out=P5B_DOUT)
    rows = ball_table(X, Y, center, M)
    claim.expected = {"certificate_le_ratio_rtol": 1e-9, "mu_min_at_M_over_prop5_mu_min": 1.0}
    ok, msg = ball_predicate(rows, mu)
    measured = {"M": M, "prop5_mu": mu, "init_ratio": init_ratio(X, Y, center, "sin"), "rows": rows,
                "mu_min_at_M_over_prop5_mu": rows[0]["mu_min"] / mu}
    ax = new_axes()
    k = np.array([r["radius_over_M"] for r in rows])
    ax.loglog(k, [r["mu_random"] for r in rows], "s-", label="random search (upper estimate)")
    ax.loglog(k, [r["mu_adversarial"] for r in rows], "o-", label="adversarial search (upper estimate)")
    ax.loglog(k, [r["certificate_at_argmin"] for r in rows], "^-", label="certificate at the argmin (lower)")
    ax.axhline(mu, ls="--", color="r", label=r"Prop. 5: $\mu = c_4/(n\sqrt{nq})$")
    ax.set_xlabel("ball radius / M,  M = c3/sqrt(nq)")
    ax.set_ylabel("PL ratio G / l")
    ax.set_title("implicit-reg/prop-5/ball (n = 4, m = 8, L = 2, sin)")
    ax.legend(fontsize=7)
    claim.qualitative(ok, measured, msg, figure=save_figure(ax.figure, "implicit-reg/prop-5/ball"))


# --------------------------------------------------------------------------- Theorem 6 (i)-(iv): limits in t and L

T6L = {"n": 8, "d": 16, "d_out": 2, "q": 18, "m": 32, "lr": 0.02, "chunk": 20, "chunks": 20}  # flow time 8
T6L_DEPTHS = (2, 4, 8, 16, 32)  # each compared with 2L
# interp_rel_max: ||F - Y|| / ||Y|| at T. The PL bound with the ratio measured after the transient (G/l >= 2.8
# from t ~ 1 on) predicts exp(-2.8 (T - 1) / 2) ~ 1e-4.3 at T = 8; 1e-3 leaves a factor 20 for the transient and
# GD's discretisation and still means the targets (scale 0.01) are fitted to ~1e-5 in absolute terms.
# loss_decay_slack: GD with lr G/l ~ 0.06 follows exp(-int G/l) to a few per cent (descent lemma).
EXPECTED_T6_LONG = {"increment_slope_rtol": 0.05, "r2_min": 0.99, "loss_decay_slack": 0.9, "interp_rel_max": 1e-3}
EXPECTED_T6_DEPTH = {"slope": -1.0, "tol": 0.1}


def t6_runs(kind="paper", depths=T6L_DEPTHS, chunks=T6L["chunks"], data="sphere"):
    return _t6_runs(kind, tuple(depths) + (2 * depths[-1],), int(chunks), data)


@functools.lru_cache(maxsize=None)
def _t6_runs(kind, depths, chunks, data):
    """GD of Eq. (4) (A, B trained) from the init of Section 3 (or i.i.d.), recorded every ``chunk`` steps:
    {L: (times, list of Params, losses, G)}. data="sphere": Setup A's data (||x|| = sqrt q, y = 0.01 N);
    "conflict": x_2 = x_1 with y_2 = -y_1 (no interpolation possible)."""
    X, Y = sphere_sample(T6L["n"], T6L["d"], T6L["d_out"], T6L["q"], 21)
    if data == "conflict":
        X[1], Y[1] = X[0], -Y[0]
    out = {}
    for L in depths:
        p = initialize(T6L["d"], T6L["m"], L, np.random.default_rng(22), q=T6L["q"], d_out=T6L["d_out"], kind=kind)
        snaps, losses, G = [p], [], []
        for _ in range(chunks):
            p, _ = train(X, Y, p, "sin", lr=T6L["lr"], steps=T6L["chunk"])
            snaps.append(p)
        for s in snaps:
            loss, g = loss_and_gradient(X, Y, s, "sin")
            losses.append(loss)
            G.append(pl_lhs(g, L))
        t = T6L["lr"] * T6L["chunk"] * np.arange(chunks + 1)
        out[L] = (t, snaps, np.array(losses), np.array(G), X, Y)
    return out


def _flat(p):
    return np.concatenate([p.A.ravel(), p.V.ravel(), p.W.ravel(), p.B.ravel()])


def long_time_stats(t, snaps, losses, G, Y, start=0.5):
    """Increments ||theta(t_{j+1}) - theta(t_j)|| (all blocks) on the last half: log-slope and r^2, against
    -mean(G/l)/2 (Prop. 8 (iv): ||theta_inf - theta(t)|| <= (M/2) e^{-mu t/2}); loss decay on the second half
    against exp(-int G/l dt) (trapezoid; Prop. 8 (v) with the trajectory's own PL ratio); relative
    interpolation error sqrt(l(T) / l(0)) = ||F - Y||_F / ||Y||_F
    (F(0) = 0 here)."""
    inc = np.array([np.linalg.norm(_flat(b) - _flat(a)) for a, b in zip(snaps[:-1], snaps[1:])])
    tm = 0.5 * (t[:-1] + t[1:])
    k = int(start * inc.size)
    slope, icpt = np.polyfit(tm[k:], np.log(inc[k:]), 1)
    resid = np.log(inc[k:]) - (slope * tm[k:] + icpt)
    r2 = 1.0 - np.sum(resid**2) / np.sum((np.log(inc[k:]) - np.log(inc[k:]).mean()) ** 2)
    mu = G / losses
    j = int(start * t.size)  # second half: mu varies slowly there, so the trapezoid rule is accurate
    int_mu = float(np.sum(0.5 * (mu[j + 1:] + mu[j:-1]) * np.diff(t[j:])))
    return {"increment_slope": float(slope), "minus_half_mean_mu": float(-0.5 * mu[-(inc.size - k):].mean()),
            "r2": float(r2), "log_loss_drop": float(np.log(losses[j] / losses[-1])), "int_mu": int_mu,
            "interp_rel": float(np.sqrt(losses[-1] / losses[0])), "final_loss": float(losses[-1]),
            "mu_final": float(mu[-1])}


def long_time_predicate(stats, expected=EXPECTED_T6_LONG):
    s = stats
    ok = (abs(s["increment_slope"] / s["minus_half_mean_mu"] - 1) <= expected["increment_slope_rtol"]
          and s["r2"] >= expected["r2_min"] and s["log_loss_drop"] >= expected["loss_decay_slack"] * s["int_mu"]
          and s["interp_rel"] <= expected["interp_rel_max"])
    msg = (f"increment log-slope {s['increment_slope']:.4g} vs -mean(G/l)/2 {s['minus_half_mean_mu']:.4g}, r^2 "
           f"{s['r2']:.4f}; log l(T/2)/l(T) {s['log_loss_drop']:.3g} vs int G/l dt {s['int_mu']:.3g}; "
           f"||F - Y|| / ||Y|| at T: {s['interp_rel']:.2e} (<= {expected['interp_rel_max']:g})")
    return bool(ok), msg


@pytest.mark.claim("implicit-reg/thm-6/long-time", kind="qualitative", aliases=_aliases("thm-3.7"),
                   title="Thm 6 (i)-(iv) in t: parameter increments decay like e^{-mu t/2} with mu the PL ratio, "
                         "and the network interpolates the data (small targets, every L)")
def test_thm6_long_time(claim):
    runs = t6_runs()
    claim.expected = dict(EXPECTED_T6_LONG)
    results, oks, msgs = {}, [], []
    for L in T6L_DEPTHS:
        t, snaps, losses, G, X, Y = runs[L]
        st = long_time_stats(t, snaps, losses, G, Y)
        ok, msg = long_time_predicate(st)
        results[f"L={L}"] = st
        oks.append(ok)
        msgs.append(f"L = {L}: {msg}")
    ax = new_axes()
    for L in T6L_DEPTHS:
        t, snaps, losses, G, X, Y = runs[L]
        inc = [np.linalg.norm(_flat(b) - _flat(a)) for a, b in zip(snaps[:-1], snaps[1:])]
        ax.semilogy(0.5 * (t[:-1] + t[1:]), inc, "o-", ms=3, label=f"L = {L}: increments")
    t, _, losses, G, _, _ = runs[T6L_DEPTHS[-1]]
    st = results[f"L={T6L_DEPTHS[-1]}"]
    ax.semilogy(t, np.exp(st["minus_half_mean_mu"] * (t - t[-1])) * inc[-1], "k--", label="slope -mean(G/l)/2")
    ax.semilogy(t, losses / losses[0], "r:", label="loss l(t)/l(0)")
    ax.set_xlabel("flow time t")
    ax.set_ylabel("||theta(t + 0.4) - theta(t)||, l(t)/l(0)")
    ax.set_title("implicit-reg/thm-6/long-time (n = 8, m = 32, sin)")
    ax.legend(fontsize=7)
    fig = save_figure(ax.figure, "implicit-reg/thm-6/long-time")
    claim.qualitative(all(oks), results, "; ".join(m for ok, m in zip(oks, msgs) if not ok) or msgs[-1], figure=fig)


def depth_distances(runs, depths=T6L_DEPTHS):
    """Per L: sup over recorded t of ||A^L - A^2L|| + ||B^L - B^2L|| + max_k ||Z^L_k - Z^2L_2k|| (sum norm,
    matched at s = k/L), and at the final time max_{k,i} ||h^L_k(x_i) - h^2L_2k(x_i)|| and max_i ||F^L - F^2L||."""
    par, hid, out = [], [], []
    for L in depths:
        a, b = runs[L], runs[2 * L]
        e = 0.0
        for pa, pb in zip(a[1], b[1]):
            z = np.max(np.linalg.norm(pa.V - pb.V[1::2], axis=(1, 2)) + np.linalg.norm(pa.W - pb.W[1::2], axis=(1, 2)))
            e = max(e, np.linalg.norm(pa.A - pb.A) + np.linalg.norm(pa.B - pb.B) + z)
        par.append(e)
        ha, Fa = forward(a[4], a[1][-1], "sin")
        hb, Fb = forward(b[4], b[1][-1], "sin")
        hid.append(float(np.max(np.linalg.norm(ha - hb[::2], axis=2))))
        out.append(float(np.max(np.linalg.norm(Fa - Fb, axis=1))))
    return np.array(par), np.array(hid), np.array(out)


@pytest.mark.claim("implicit-reg/thm-6/depth-limit", kind="rate", aliases=_aliases("thm-3.7"),
                   title="Thm 6 (i)-(iii) in L: weights (uniformly in t) and hidden states at depth L and 2L differ "
                         "by O(1/L)")
def test_thm6_depth_limit(claim):
    par, hid, out = depth_distances(t6_runs())
    fit = fit_rate(T6L_DEPTHS, par)
    fit_h = fit_rate(T6L_DEPTHS, hid)
    fit_f = fit_rate(T6L_DEPTHS, out)
    ok_h = rate_verdict(fit_h, EXPECTED_T6_DEPTH)
    claim.measured["hidden_states_slope"], claim.measured["hidden_states_ci"] = fit_h.slope, list(fit_h.ci)
    claim.measured["outputs_slope"], claim.measured["outputs_ci"] = fit_f.slope, list(fit_f.ci)
    claim.measured["hidden_states_verdict"] = ok_h.status
    runs = t6_runs()
    claim.measured["max_Z_displacement"] = {f"L={L}": float(np.max(
        np.linalg.norm(runs[L][1][-1].V - runs[L][1][0].V, axis=(1, 2))
        + np.linalg.norm(runs[L][1][-1].W - runs[L][1][0].W, axis=(1, 2)))) for L in T6L_DEPTHS}
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=-1.0, label="weights: sup over t", xlabel="depth L")
    plot_rate(fit_h, ax=ax, label="hidden states: max over k, i at T", xlabel="depth L")
    plot_rate(fit_f, ax=ax, label="outputs: max over i at T", xlabel="depth L", ylabel="distance between depths L and 2L",
              title="implicit-reg/thm-6/depth-limit")
    fig = save_figure(ax.figure, "implicit-reg/thm-6/depth-limit")
    if ok_h.status != "pass":  # the hidden states are part of the claim
        fit = fit_h
    claim.rate(fit, EXPECTED_T6_DEPTH, figure=fig, grid_label="L")


def smoothness(runs, depths=T6L_DEPTHS):
    """max over recorded t and k of ||V_{k+1} - V_k||_F + ||W_{k+1} - W_k||_F (Prop. 8 (ii))."""
    return np.array([max(float(np.max(np.linalg.norm(np.diff(p.V, axis=0), axis=(1, 2))
                                      + np.linalg.norm(np.diff(p.W, axis=0), axis=(1, 2)))) for p in runs[L][1])
                     for L in depths])


@pytest.mark.claim("implicit-reg/thm-6/smoothness", kind="rate", aliases=_aliases("thm-3.7"),
                   title="Along the unclipped flow, max_{t,k} ||Z_{k+1} - Z_k|| = O(1/L) uniformly in t (Prop. 8 (ii))")
def test_thm6_smoothness(claim):
    fit = fit_rate(T6L_DEPTHS, smoothness(t6_runs()))
    ax = new_axes()
    plot_rate(fit, ax=ax, expected_slope=-1.0, label="weight-tied init, sin, A and B trained", xlabel="depth L",
              ylabel=r"$\max_{t,k}\|Z_{k+1}-Z_k\|$", title="implicit-reg/thm-6/smoothness")
    claim.rate(fit, EXPECTED_T6_DEPTH, figure=save_figure(ax.figure, "implicit-reg/thm-6/smoothness"), grid_label="L")


# --------------------------------------------------------------------------- Prop. 5 constants as printed (signed eta_r)


def printed_prop5_constants(activation="sin", r=R_ORDER, k_sigma=1.0):
    """c2, c3, c4 of Appendix B.5 with eta_r as printed (signed): c2 = 128 K^2 e^{2 sqrt2 K} / eta_r,
    c3 = min(eta_r / (32 sqrt2 K), 1/2), c4 = eta_r^3 / (2^14 K^2 e^{6 sqrt2 K})."""
    eta = float(hermite_coefficient(activation, r))
    e = np.exp(2 * np.sqrt(2) * k_sigma)
    return {"eta_r": eta, "c2": 128 * k_sigma**2 * e / eta, "c3": min(eta / (32 * np.sqrt(2) * k_sigma), 0.5),
            "c4": eta**3 / (2**14 * k_sigma**2 * e**3)}


@pytest.mark.claim("implicit-reg/prop-5/erratum", kind="erratum", aliases=_aliases("prop-3.6"),
                   title="B.5 prints c2, c3, c4 (and Lemma 21's bound sqrt(m) eta_r / 4) with the signed eta_r: for "
                         "sin and tanh at their first admissible order r = 3, eta_3 < 0 and they are negative")
def test_prop5_constants_erratum(claim):
    printed = {a: printed_prop5_constants(a) for a in ("sin", "tanh")}
    ok = all(v["c2"] > 0 and v["c3"] > 0 and v["c4"] > 0 for v in printed.values())
    measured = {a: {**v, "corrected_c3": prop5_constants(a, R_ORDER).c3, "corrected_c4": prop5_constants(a, R_ORDER).c4}
                for a, v in printed.items()}
    msg = "; ".join(f"{a}: eta_3 = {v['eta_r']:.4g}, printed c3 = {v['c3']:.3g}, c4 = {v['c4']:.3g}"
                    for a, v in printed.items())
    claim.erratum(qualitative_verdict(ok, msg), measured, {"c1..c4": "> 0 (Prop. 5)"})
