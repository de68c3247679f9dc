r"""Experiments of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in the
Large-depth Regime"; chapter 2 of P. Marion's thesis): Figures 7 and 8 and claim E-2 as library functions.

Figure 7 (thesis Figure 2.7), :func:`fig7` and :func:`fig7_verdict`
    res-3, :math:`h_{k+1} = h_k + L^{-\beta} V_{k+1}\mathrm{ReLU}(W_{k+1} h_k)`, whose weight sequences
    over the layers are unit-variance fractional Gaussian noises (fGn) of Hurst index H. The paper
    observes the transition between identity and explosion at :math:`\beta^*(H) \approx \max(H, 1/2)`.

    At finite depth every crossing of a fixed level sits below that line by an amount of order
    :math:`1/\ln L`, so a window around the line cannot tell H from H + 0.05. The finite-L location
    is predicted here in closed form on the identity side of the boundary. To first order in
    :math:`\alpha = L^{-\beta}` the hidden states stay at :math:`h_0`, and

    .. math::
        \mathbb E\frac{\|h_L - h_0\|^2}{\|h_0\|^2} = \alpha^2 \sum_{k,j=1}^{L} \rho_H(k-j)\,\kappa_1(\rho_H(k-j))
        \,(1 + O(\alpha^2 L)),
        \qquad \kappa_1(r) = \frac{\sqrt{1-r^2} + r(\pi - \arccos r)}{2\pi},

    with :math:`\rho_H` the fGn autocovariance (V and W independent, Gaussian; :math:`\kappa_1(r)` is
    :math:`\mathbb E[\mathrm{ReLU}(X)\mathrm{ReLU}(Y)]` for standard normals of correlation r). For
    the gradients :math:`p_0 - p_L \approx \alpha\sum_k W_k^\top D_k V_k^\top p_L`,
    :math:`D_k = \mathrm{diag}(1\{W_k h_0 > 0\})`, and

    .. math::
        \mathbb E\frac{\|p_0 - p_L\|^2}{\|p_L\|^2} = \frac{\alpha^2}{d} \sum_{k,j} \rho\,
        \Big[(d-1)\,\rho\,\Big(\frac14 + \frac{\arcsin\rho}{2\pi}\Big) + \kappa_1(\rho)\Big],\quad \rho = \rho_H(k-j).

    Both sums are :func:`linearized_mean_square`. At H = 1/2 they are :math:`\alpha^2 L/2`, the
    first-order term of Lemma 14 / Proposition 7. Their growth in L gives the critical line: the
    hidden sum grows like :math:`L^{2\max(H, 1/2)}`; in the gradient sum the term that grows like
    :math:`L^{2H}` carries a factor 1/d, so at L = 1000 and d = 40 the gradients still cross near
    1/2 for H up to about 0.7 (the lag seen in the figure), and reach the line only at larger depth.
    The verdict compares the depth-L crossing of the level :math:`\log_{10}` RMS ratio = -1 (ratio
    0.1, identity side) with the closed form, for both panels and every H, within a simultaneous
    interval over weight draws: the jackknife standard error of the crossing (leave one draw out)
    times the Student quantile :math:`t_{n-1}` at the Bonferroni level
    :math:`1 - (1 - \mathrm{ci\_level})/(2 \cdot 2 n_H)` (2 n_H comparisons). It also records the
    crossing of level 0 (the figure's colour boundary) with the same kind of interval, as measured.

    The neglected term is of relative order :math:`\alpha^2` (the :math:`\alpha^3` term of the mean
    square is odd in V and vanishes), so it falls by :math:`L^{-0.2}` per step of 0.1 in beta. With
    160 draws per H (L = 1000, d = 40) the measured mean square exceeds the first-order one by
    about 10% one grid step (0.1) right of the level-0 crossing, hence by < 1% at the level -1
    crossing, two steps further: a shift of the crossing below 0.001, against a jackknife standard
    error of about 0.004 at 16 draws. The 160-draw crossings match the closed form within
    2 standard errors (0.0013 to 0.0020) at H = 0.2, 0.5, 0.7, 0.9, both panels.

Claim E-2 (the identity side of Figure 7 as a rate), :func:`e2` and :func:`e2_verdict`
    Section 4.1 reads the critical beta as :math:`\max(H, 1/2)`; on the identity side,
    :math:`\beta > \max(H, 1/2)`, the ratio :math:`\|h_L - h_0\|/\|h_0\|` then decays like
    :math:`L^{\max(H, 1/2) - \beta}`. Its RMS is :math:`L^{-\beta}\sqrt{S_L}` to first order, with the
    hidden-state sum :math:`S_L` above (:func:`e2_closed_form`), so the least-squares slope on a finite
    depth grid is predicted in closed form; for H > 1/2 it lies below the asymptotic slope by about
    0.04 on L = 64..1024 (at H = 0.8: -0.446 against -0.4), as much as the change from H to H + 0.05,
    so a fixed margin around the asymptotic slope cannot tell the two apart. The verdict asks the
    closed-form slope to lie in the bootstrap interval (over weight draws) of the measured one.

Figure 8 (thesis Figure 2.8 and Figure 1.1), :func:`fig8` and :func:`fig8_verdict`
    One coordinate of the weights as a function of the layer index after training: smooth
    initialisation with beta = 1 stays smooth (ODE-like), i.i.d. initialisations stay rough.
    Reduced here to a synthetic regression task trained with Adam (the paper: MNIST, L = 1000). With
    ``backend="torch"`` the setups are trained together as one batch
    (:func:`theory.backends.scaling_train.train`, which also trains the (H, beta) grid of Figure 9:
    ``scaling.fig9`` in :mod:`theory.experiments.scaling._train`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from theory.claims import Verdict, rate_verdict, threshold_verdict
from theory.experiments.scaling import _claims, _fbm, _iid, _limits  # noqa: F401 (their experiments)
from theory.experiments.scaling import _scale  # noqa: F401 (the scale experiments of the backends)
from theory.experiments.scaling import _train  # noqa: F401 (Figure 9: training over the (H, beta) grid)
from theory.experiments._registry import register
from theory.fbm import autocovariance
from theory.rates import RateFit
from theory.scaling import log_norm_ratio, weights
from theory.backends import resolve
from theory.backends.scaling import phase_grid
from theory.experiments.scaling._scale import BackendConfig, backend_field, device_field, dtype_field
from theory.experiments.config import Choice, Config, Custom, Int, Ints, OrNone, Real, Reals, Seed, field

__all__ = [
    "Fig7Config",
    "Fig7Result",
    "FIG7_PRESETS",
    "FIG7_FINE_PRESETS",
    "fig7",
    "fig7_verdict",
    "linearized_mean_square",
    "crossing",
    "Fig8Config",
    "Fig8Result",
    "FIG8_PRESETS",
    "FIG8_ACCEPT",
    "fig8",
    "fig8_verdict",
    "variogram_exponent",
    "E2Config",
    "E2Result",
    "E2_PRESETS",
    "e2",
    "e2_closed_form",
    "e2_expected",
    "e2_verdict",
]

QUANTITIES = ("hidden", "gradient")


# =========================================================================== closed forms


def _kappa1(r):
    r = np.clip(r, -1.0, 1.0)
    return (np.sqrt(1.0 - r * r) + r * (np.pi - np.arccos(r))) / (2.0 * np.pi)


def linearized_mean_square(L, hurst, d, quantity="hidden"):
    r"""First-order (in alpha^2) value of :math:`\mathbb E\|h_L - h_0\|^2/\|h_0\|^2` (``"hidden"``) or
    :math:`\mathbb E\|p_0 - p_L\|^2/\|p_L\|^2` (``"gradient"``) of res-3 with fGn weights, divided by
    :math:`\alpha^2`: the double sums of the module docstring,
    :math:`S_L = L f(1) + 2\sum_{m=1}^{L-1} (L - m) f(\rho_H(m))`.

    Parameters
    ----------
    L : int
        Depth, >= 1.
    hurst : float
        Hurst index in (0, 1).
    d : int
        Width, >= 1.
    quantity : {"hidden", "gradient"}

    Returns
    -------
    float
        :math:`S_L`; L/2 at H = 1/2 for both quantities.

    Examples
    --------
    >>> round(linearized_mean_square(1000, 0.5, 40), 10)
    500.0
    """
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"`L` of theory.experiments.scaling.linearized_mean_square must be an int >= 1; got {L!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"`d` of theory.experiments.scaling.linearized_mean_square must be an int >= 1; got {d!r}")
    if quantity not in QUANTITIES:
        raise ValueError(f"`quantity` of theory.experiments.scaling.linearized_mean_square must be one of "
                         f"{QUANTITIES}; got {quantity!r}")
    rho = autocovariance(np.arange(int(L)), float(hurst))
    if quantity == "hidden":
        f = rho * _kappa1(rho)
    else:
        f = rho * ((d - 1) * rho * (0.25 + np.arcsin(np.clip(rho, -1, 1)) / (2 * np.pi)) + _kappa1(rho)) / d
    weights_m = np.r_[float(L), 2.0 * (L - np.arange(1, int(L)))]
    return float(np.dot(weights_m, f))


def crossing(beta, values, level):
    """First downward crossing of ``level`` by the curve ``values`` over the increasing grid ``beta``,
    by linear interpolation; NaN when there is none."""
    v = np.asarray(values, dtype=float) - level
    down = np.flatnonzero((v[:-1] >= 0.0) & (v[1:] < 0.0))
    if down.size == 0:
        return float("nan")
    i = int(down[0])
    return float(beta[i] + (beta[i + 1] - beta[i]) * v[i] / (v[i] - v[i + 1]))


# =========================================================================== Figure 7


@dataclass(frozen=True)
class Fig7Config(BackendConfig):
    """Configuration of the Figure 7 experiment (res-3, fGn weights, phase boundary over (H, beta))."""

    hurst: tuple = field(Reals(0, 1, closed="neither"), (0.2, 0.5, 0.7, 0.9), "Hurst indices at which the "
                         "boundary is located.")
    L: int = field(Int(low=2), 1000, "Depth (the paper: 1000).")
    d: int = field(Int(low=1), 40, "Width (the paper: 40).")
    draws: int = field(Int(low=4), 16, "Independent weight draws (V, W, h_0, p_L) per Hurst index, shared by every "
                       "beta; the jackknife leaves them out one at a time.")
    offsets: tuple = field(Reals(min_len=2, increasing=True), (-0.25, -0.15, -0.05, 0.05, 0.15, 0.25, 0.35),
                           "The beta grid of one Hurst index is max(H, 1/2) + offsets: it must bracket the crossings "
                           "of both levels for both quantities (and keep every beta positive).")
    betas: tuple = field(OrNone(Reals(0, closed="neither", min_len=2, increasing=True),
                                "the grid of each Hurst index is max(H, 1/2) + offsets"), None,
                         "A beta grid shared by every Hurst index (the document's heatmap: 0.2 to 1.3), used instead "
                         "of max(H, 1/2) + offsets; it must bracket the crossings of both levels.")
    level: float = field(Real(high=0, closed="neither"), -1.0, "The identity-side level of log10 RMS ratio whose "
                         "crossing is compared with the closed form (-1 is a ratio of 0.1, where the first-order "
                         "term is exact to ~1%).")
    ci_level: float = field(Real(0, 1, closed="neither"), 0.99, "Simultaneous (family-wise) level of the 2 n_H "
                            "intervals compared with the closed form; each interval has level "
                            "1 - (1 - ci_level)/(2 n_H) (Bonferroni).")
    seed: int = field(Seed(), 7, "Seed of the numpy Generator of every draw.")
    hurst_shift: float = field(Real(), 0.0, "Weights are drawn with Hurst index H + hurst_shift while the "
                               "prediction uses H (0 for the claim; the negative controls mis-specify the kernel "
                               "with it); every H + hurst_shift must lie in (0, 1).")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()

    def check(self):
        super().check()
        if any(not (0.0 < h + self.hurst_shift < 1.0) for h in self.hurst):
            raise self.invalid("hurst_shift", "keep every H + shift in (0, 1)")
        if self.betas is None and any(max(h, 0.5) + self.offsets[0] <= 0.0 for h in self.hurst):
            raise self.invalid("offsets", "keep every beta = max(H, 1/2) + offset positive")


FIG7_PRESETS = {
    # what the check runs: 4 Hurst indices (rough, Brownian, two smooth), 16 draws, 7 betas (~11 s CPU)
    "check": Fig7Config(),
    # the paper's Table 3 sizes (L = 1000, d = 40, H from 0.05 to 0.97), more draws, a finer beta grid
    "paper": Fig7Config(hurst=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97), draws=32,
                        offsets=tuple(np.round(np.arange(-0.3, 0.401, 0.05), 3))),
}


@dataclass(frozen=True)
class Fig7Result:
    """Measured and predicted crossings, per Hurst index (arrays of shape (nH,)) and quantity.

    ``crit[q][lev]`` the crossing of log10 RMS ratio = lev (lev in {level, 0}) of the mean over draws,
    ``se[q][lev]`` its jackknife standard error over draws, ``ci[q][lev]`` its simultaneous interval
    (nH, 2), crit -/+ ``t_quantile`` * se; ``predicted[q]`` the closed-form crossing of
    ``level``; ``linear_zero[q]`` the closed-form crossing of 0 (first order only: a reference, the
    ratio is not small there); ``asymptotic[q]`` the closed form's local exponent
    ln(S_{4L}/S_L)/(2 ln 4) at L = 10^4 (-> the critical line as L -> infinity); ``curves[q]`` the
    log10 RMS curves (nH, nB) and ``betas`` the grids (nH, nB).
    """

    config: Fig7Config
    betas: np.ndarray
    curves: dict
    crit: dict
    ci: dict
    predicted: dict
    linear_zero: dict
    asymptotic: dict
    se: dict
    t_quantile: float


def _rms_log10(values):
    """log10 of the RMS over draws of 10**values (values: log10 ratios, draws on the last axis)."""
    m = values.max(axis=-1, keepdims=True)
    return (m[..., 0] + 0.5 * np.log10(np.mean(10.0 ** (2.0 * (values - m)), axis=-1)))


def fig7(config: Fig7Config) -> Fig7Result:
    """Run the Figure 7 experiment of ``config`` (pure: no files, no globals)."""
    if not isinstance(config, Fig7Config):
        raise TypeError(f"`config` of theory.experiments.scaling.fig7 must be a Fig7Config; got {type(config).__name__}")
    c = config
    rng = np.random.default_rng(c.seed)
    nH = len(c.hurst)
    if c.betas is not None:
        betas = np.array([np.array(c.betas, dtype=float) for _ in c.hurst])
    else:
        betas = np.array([np.round(max(H, 0.5) + np.array(c.offsets), 6) for H in c.hurst])
    levels = (c.level, 0.0)
    curves = {q: np.empty(betas.shape) for q in QUANTITIES}
    crit = {q: {lev: np.empty(nH) for lev in levels} for q in QUANTITIES}
    se = {q: {lev: np.empty(nH) for lev in levels} for q in QUANTITIES}
    ci = {q: {lev: np.empty((nH, 2)) for lev in levels} for q in QUANTITIES}
    n = c.draws
    t_q = float(stats.t.ppf(1.0 - (1.0 - c.ci_level) / (2.0 * 2 * nH), n - 1))
    keep = ~np.eye(n, dtype=bool)  # row i: every draw but the i-th
    shift = c.hurst_shift

    def draw_fn(L, d, H, g):
        return weights(L, d, "fbm", H + shift, rng=g)

    backend = resolve(c.backend, c.device, c.dtype)
    for i, H in enumerate(c.hurst):
        pd_hidden, pd_gradient = phase_grid([H], betas[i], L=c.L, d=c.d, n_seeds=c.draws, rng=rng,
                                            weights_fn=draw_fn, backend=backend)
        for q in QUANTITIES:
            vals = (pd_hidden if q == "hidden" else pd_gradient)[0]  # (nB, draws) log10 ratios
            curves[q][i] = _rms_log10(vals)
            loo = np.stack([_rms_log10(vals[:, keep[k]]) for k in range(n)])  # (draws, nB)
            for lev in levels:
                crit[q][lev][i] = crossing(betas[i], curves[q][i], lev)
                jk = np.array([crossing(betas[i], row, lev) for row in loo])
                if np.all(np.isfinite(jk)) and math.isfinite(crit[q][lev][i]):
                    se[q][lev][i] = math.sqrt((n - 1) / n * float(np.sum((jk - jk.mean()) ** 2)))
                    ci[q][lev][i] = crit[q][lev][i] + t_q * se[q][lev][i] * np.array([-1.0, 1.0])
                else:
                    se[q][lev][i] = np.nan
                    ci[q][lev][i] = (np.nan, np.nan)
    log10L = math.log10(c.L)
    predicted, linear_zero, asymptotic = {}, {}, {}
    for q in QUANTITIES:
        S = np.array([linearized_mean_square(c.L, H, c.d, q) for H in c.hurst])
        predicted[q] = (0.5 * np.log10(S) - c.level) / log10L
        linear_zero[q] = 0.5 * np.log10(S) / log10L
        big = 10**4
        asymptotic[q] = np.array([math.log(linearized_mean_square(4 * big, H, c.d, q)
                                           / linearized_mean_square(big, H, c.d, q)) / (2 * math.log(4))
                                  for H in c.hurst])
    return Fig7Result(c, betas, curves, crit, ci, predicted, linear_zero, asymptotic, se, t_q)


def fig7_verdict(result: Fig7Result) -> Verdict:
    """An identity with its tolerances (:func:`theory.claims.threshold_verdict`, kind ``"identity"``): for both
    quantities and every H the closed-form crossing of ``level`` lies inside the simultaneous jackknife-t
    interval of the measured one, i.e. ``|crossing - closed form| / (t se) <= 1`` (measured as
    ``max_standardised_deviation``, NaN without an interval, which fails); the measured level-0 crossing of the
    hidden states is not above max(H, 1/2) (lower end of its interval minus the line, ``<= 0``) and increases
    with H on H >= 1/2 (both ends of consecutive intervals increase: their smallest step ``> 0``)."""
    c = result.config
    H = np.array(c.hurst)
    line = np.maximum(H, 0.5)
    parts = []
    dev = []
    for q in QUANTITIES:
        lo, hi = result.ci[q][c.level].T
        pred = result.predicted[q]
        inside = np.isfinite(lo) & (lo <= pred) & (pred <= hi)
        dev.append(np.abs(result.crit[q][c.level] - pred) / (result.t_quantile * result.se[q][c.level]))
        parts.append(f"{q}: level {c.level:g} crossing " + ", ".join(
            f"H={h:g} {m:.3f} [{a:.3f}, {b:.3f}] vs closed form {p:.3f}"
            for h, m, a, b, p in zip(H, result.crit[q][c.level], lo, hi, pred))
            + f" ({int(inside.sum())}/{H.size} inside)")
    dev = np.concatenate(dev)
    z = result.crit["hidden"][0.0]
    zlo, zhi = result.ci["hidden"][0.0].T
    upper = H >= 0.5
    order = np.argsort(H[upper])
    zl, zh = zlo[upper][order], zhi[upper][order]
    parts.append("hidden level-0 crossing (measured) " + ", ".join(
        f"H={h:g} {m:.3f} [{a:.3f}, {b:.3f}] (line {l:g})" for h, m, a, b, l in zip(H, z, zlo, zhi, line)))
    measured = {
        "max_standardised_deviation": float(np.max(dev)) if np.all(np.isfinite(dev)) else math.nan,
        "level0_lower_minus_line": float(np.max(zlo - line)) if np.all(np.isfinite(zlo)) else math.nan,
        "hurst": H.tolist(), "L": c.L, "d": c.d, "draws": c.draws, "ci_level": c.ci_level,
        "hurst_shift": c.hurst_shift, "t_quantile_bonferroni": result.t_quantile,
        **{f"{q}_level{c.level:g}_standardised_deviation":
           ((result.crit[q][c.level] - result.predicted[q]) / result.se[q][c.level]).tolist() for q in QUANTITIES},
        **{f"{q}_level{c.level:g}_crossing": result.crit[q][c.level].tolist() for q in QUANTITIES},
        **{f"{q}_level{c.level:g}_ci": result.ci[q][c.level].tolist() for q in QUANTITIES},
        **{f"{q}_level{c.level:g}_closed_form": result.predicted[q].tolist() for q in QUANTITIES},
        **{f"beta_star_{q}": result.crit[q][0.0].tolist() for q in QUANTITIES},
        **{f"beta_star_{q}_ci": result.ci[q][0.0].tolist() for q in QUANTITIES},
        "offset_beta_star_hidden_minus_line_measured": (result.crit["hidden"][0.0] - line).tolist(),
        **{f"first_order_level0_{q}": result.linear_zero[q].tolist() for q in QUANTITIES},
        **{f"closed_form_exponent_L1e4_{q}": result.asymptotic[q].tolist() for q in QUANTITIES},
    }
    expected = {"max_standardised_deviation_max": 1.0, "level0_lower_minus_line_max": 0.0}
    if upper.sum() > 1:
        steps = np.concatenate([np.diff(zl), np.diff(zh)])
        measured["level0_ci_min_step"] = float(np.min(steps)) if np.all(np.isfinite(steps)) else math.nan
        # the ends must strictly increase: the smallest positive double is the threshold of "> 0"
        expected["level0_ci_min_step_above"] = 0.0
    return threshold_verdict("identity", measured, expected, context="; ".join(parts))


# =========================================================================== Figure 8

LAWS_FIG8 = ("smooth", "gaussian", "uniform")


def _setups(value):
    """(law, beta) pairs of Figure 8: law in LAWS_FIG8, beta a finite number >= 0."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (tuple, list)):
        raise TypeError("not a tuple")
    out = []
    for pair in value:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError("not a pair")
        law, beta = pair
        if isinstance(beta, bool) or not isinstance(beta, (int, float, np.integer, np.floating)):
            raise ValueError("beta is not a number")
        if law not in LAWS_FIG8 or not (math.isfinite(beta) and beta >= 0):
            raise ValueError("law or beta out of range")
        out.append((str(law), float(beta)))
    if not out:
        raise ValueError("empty")
    return tuple(out)


@dataclass(frozen=True)
class Fig8Config(BackendConfig):
    """Configuration of the Figure 8 experiment: train res-3 from three (initialisation, beta) choices
    and compare the regularity in the layer index k of the weights before and after training."""

    setups: tuple = field(Custom(_setups, f"a non-empty tuple of (law in {LAWS_FIG8}, beta >= 0) pairs",
                                 type_name="tuple of (str, float)",
                                 invalid=[(3, TypeError), ((), ValueError), ((("fbm", 1.0),), ValueError),
                                          ((("smooth", -1.0),), ValueError)],
                                 boundary=[(("smooth", 0.0),), (("gaussian", 1.0), ("uniform", 0.5))]),
                          (("smooth", 1.0), ("gaussian", 0.5), ("gaussian", 1.0)),
                          "(weight law of theory.scaling.weights, beta) pairs. The figure's message: a smooth "
                          "initialisation (with beta = 1) stays smooth, i.i.d. ones stay rough.")
    L: int = field(Int(low=8), 200, "Depth (the paper: 1000).")
    d: int = field(Int(low=2), 12, "Width of the residual stack.")
    n_in: int = field(Int(low=1), 16, "Input dimension; h_0 = A x with A uniform of fan-in n_in (Table 2), fixed.")
    n: int = field(Int(low=2), 64, "Training samples (full batch), x ~ N(0, I).")
    steps: int = field(Int(low=1), 70, "Adam steps (the paper: Adam, 10 epochs of MNIST).")
    lr: float = field(Real(0), 0.002, "Adam learning rate (beta1 = 0.9, beta2 = 0.999, eps = 1e-8).")
    update_noise: float = field(Real(0), 0.0, "Standard deviation of i.i.d. Gaussian noise added to every weight "
                                "at every step, relative to lr (0 for the claim; the negative controls use it to "
                                "train with updates that are rough in k).")
    seed: int = field(Seed(), 8, "Seed of every draw (data, teacher, read-out, weights, plotted coordinate).")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()


FIG8_PRESETS = {
    # what the check runs: L = 200, d = 12, 64 samples, 70 Adam steps at lr 2e-3 (~6 s)
    "check": Fig8Config(),
    # the paper's depth L = 1000 (Figure 8: "k ranging from 1 to the depth L = 1000") and width d = 30
    # (Table 4 of Appendix E); its data set, MNIST, is not used: a synthetic teacher instead
    "paper": Fig8Config(L=1000, d=30, n_in=64, n=256, steps=500),
}


@dataclass(frozen=True)
class Fig8Result:
    """Per setup (lists in the order of ``config.setups``): losses before/after, relative weight
    change ||theta_T - theta_0|| / ||theta_0||, :func:`variogram_exponent` of (V, W) before/after, and one
    coordinate path of V before/after (shape (L,)) for the figure. ``losses`` holds the loss curve of
    each setup, ``exponent_curve`` the exponent every 10 steps (step, exponent)."""

    config: Fig8Config
    loss_init: list
    loss_final: list
    relative_change: list
    exponent_init: list
    exponent_trained: list
    path_init: list
    path_trained: list
    losses: list
    exponent_curve: list


#: Lags (in layers) of the variogram whose log-log slope is the regularity exponent.
FIG8_LAGS = (1, 2, 4, 8)


def variogram_exponent(theta, lags=FIG8_LAGS):
    r"""Median over coordinates of the least-squares slope of :math:`\log \frac1{L-\ell}\sum_k
    (\theta_{k+\ell} - \theta_k)^2` against :math:`\log\ell` over ``lags``, for layer weights ``theta`` of
    shape (L, ...): twice the Hölder index of the path k -> theta_k at the scale of a few layers.
    About 0 for weights i.i.d. across layers (flat variogram), 1 for a Brownian path (fGn increments
    of H = 1/2 summed), 2 for a differentiable path sampled finely (the smooth initialisation)."""
    t = np.asarray(theta, dtype=float).reshape(theta.shape[0], -1)
    lags = np.asarray(lags)
    vg = np.array([np.mean((t[lag:] - t[:-lag]) ** 2, axis=0) for lag in lags])
    x = np.log(lags) - np.mean(np.log(lags))
    slopes = x @ np.log(np.maximum(vg, np.finfo(float).tiny)) / (x @ x)
    return float(np.median(slopes))


def fig8(config: Fig8Config) -> Fig8Result:
    """Run the Figure 8 experiment of ``config`` (pure: no files, no globals)."""
    from theory.scaling.training import loss_and_gradient

    if not isinstance(config, Fig8Config):
        raise TypeError(f"`config` of theory.experiments.scaling.fig8 must be a Fig8Config; got {type(config).__name__}")
    c = config
    rng = np.random.default_rng(c.seed)
    A = rng.uniform(-math.sqrt(3 / c.n_in), math.sqrt(3 / c.n_in), (c.d, c.n_in))
    X = rng.standard_normal((c.n, c.n_in))
    teacher = rng.standard_normal(c.n_in)
    y = np.tanh(2.0 * X @ teacher / np.linalg.norm(teacher))
    H0 = X @ A.T
    b = rng.standard_normal(c.d) / math.sqrt(c.d)
    coord = tuple(rng.integers(0, c.d, 2))
    out = {k: [] for k in ("loss_init", "loss_final", "relative_change", "exponent_init", "exponent_trained",
                           "path_init", "path_trained", "losses", "exponent_curve")}
    backend = resolve(c.backend, c.device, c.dtype)
    if backend.is_torch:
        return _fig8_batched(c, backend, H0, b, y, coord, out)
    for law, beta in c.setups:
        g = np.random.default_rng([c.seed, LAWS_FIG8.index(law), int(round(1000 * beta))])
        theta = np.stack([weights(c.L, c.d, law, rng=g), weights(c.L, c.d, law, rng=g)])  # V, W
        theta0 = theta.copy()
        m = np.zeros_like(theta)
        v = np.zeros_like(theta)
        curve = []
        ecurve = [(0, variogram_exponent(theta0.transpose(1, 0, 2, 3)))]
        for t in range(1, c.steps + 1):
            loss, gV, gW = loss_and_gradient(H0, theta[0], theta[1], b, y, beta)
            curve.append(loss)
            grad = np.stack([gV, gW])
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad * grad
            step = c.lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
            theta = theta - step
            if c.update_noise:
                theta = theta + c.lr * c.update_noise * g.standard_normal(theta.shape)
            if t % 10 == 0 or t == c.steps:
                ecurve.append((t, variogram_exponent(theta.transpose(1, 0, 2, 3))))
        final, _, _ = loss_and_gradient(H0, theta[0], theta[1], b, y, beta)
        curve.append(final)
        out["loss_init"].append(curve[0])
        out["loss_final"].append(final)
        out["relative_change"].append(float(np.linalg.norm(theta - theta0) / np.linalg.norm(theta0)))
        out["exponent_init"].append(ecurve[0][1])
        out["exponent_trained"].append(ecurve[-1][1])
        out["exponent_curve"].append(np.array(ecurve))
        out["path_init"].append(theta0[0][:, coord[0], coord[1]].copy())
        out["path_trained"].append(theta[0][:, coord[0], coord[1]].copy())
        out["losses"].append(np.array(curve))
    return Fig8Result(c, **out)


def _fig8_batched(c, backend, H0, b, y, coord, out):
    """:func:`fig8` with every setup trained at once by :func:`theory.backends.scaling_train.train`
    (same draws, same Adam, same records)."""
    from theory.backends.scaling_train import budget, networks_per_chunk, train

    gens, V0, W0 = [], [], []
    for law, beta in c.setups:
        g = np.random.default_rng([c.seed, LAWS_FIG8.index(law), int(round(1000 * beta))])
        V0.append(weights(c.L, c.d, law, rng=g))
        W0.append(weights(c.L, c.d, law, rng=g))
        gens.append(g)
    V0, W0 = np.stack(V0), np.stack(W0)
    G = len(c.setups)
    curves = [[] for _ in range(G)]
    per = networks_per_chunk("res3", c.L, c.d, c.n, dtype=c.dtype, memory=budget(backend), n_eval=c.n)
    V, W = np.empty_like(V0), np.empty_like(W0)
    losses = np.empty((c.steps + 1, G))
    alphas = [float(c.L) ** (-beta) for _, beta in c.setups]
    for s0 in range(0, G, per):  # the setups that fit the device's memory train together
        s1 = min(G, s0 + per)

        def record(t, theta, s0=s0, s1=s1):
            for s in range(s0, s1):
                curves[s].append((t, variogram_exponent(np.stack([theta[0][s - s0], theta[1][s - s0]], axis=1))))

        def noise(t, s0=s0, s1=s1):
            if not c.update_noise:
                return None
            z = np.stack([g.standard_normal((2, c.L, c.d, c.d)) for g in gens[s0:s1]]) * (c.lr * c.update_noise)
            return z[:, 0], z[:, 1]

        (V[s0:s1], W[s0:s1]), losses[:, s0:s1], _ = train(
            "res3", (V0[s0:s1], W0[s0:s1]), alphas[s0:s1], [c.lr] * (s1 - s0), H0, b[:, None], y, steps=c.steps,
            backend=backend, loss="mse", noise=noise, record_every=10, record=record)
    for s in range(G):
        theta0 = np.stack([V0[s], W0[s]])
        theta = np.stack([V[s], W[s]])
        out["loss_init"].append(float(losses[0, s]))
        out["loss_final"].append(float(losses[-1, s]))
        out["relative_change"].append(float(np.linalg.norm(theta - theta0) / np.linalg.norm(theta0)))
        out["exponent_init"].append(curves[s][0][1])
        out["exponent_trained"].append(curves[s][-1][1])
        out["exponent_curve"].append(np.array(curves[s]))
        out["path_init"].append(V0[s][:, coord[0], coord[1]].copy())
        out["path_trained"].append(V[s][:, coord[0], coord[1]].copy())
        out["losses"].append(losses[:, s].copy())
    return Fig8Result(c, **out)


#: Acceptance of Figure 8's message, fixed before the check was run, with their reasons. Training must
#: do something: final loss at most half the initial one, weights moved by at least 5% (else "the
#: structure is kept" is empty). The regularity classes of the variogram exponent are 0 (i.i.d.), 1
#: (Brownian) and 2 (smooth); the thresholds are the midpoints: a trained smooth initialisation must stay
#: in the smooth class (exponent >= 1.5, "ODE-like"), a trained i.i.d. one in the i.i.d. class (<= 0.5).
FIG8_ACCEPT = {"loss_ratio_max": 0.5, "relative_change_min": 0.05, "smooth_min": 1.5, "iid_max": 0.5}


def fig8_verdict(result: Fig8Result, accept=FIG8_ACCEPT) -> Verdict:
    """Bounds of :data:`FIG8_ACCEPT` on every setup (:func:`theory.claims.threshold_verdict`, kind
    ``"bound"``): the largest final/initial loss ratio at most ``loss_ratio_max``, the smallest relative weight
    change at least ``relative_change_min``, the smallest trained exponent of the smooth setups at least
    ``smooth_min`` and the largest of the i.i.d. setups at most ``iid_max``."""
    c = result.config
    parts = []
    ratios = []
    for s, (law, beta) in enumerate(c.setups):
        ratio = result.loss_final[s] / result.loss_init[s]
        ratios.append(ratio)
        e0, e1 = result.exponent_init[s], result.exponent_trained[s]
        bound = f">= {accept['smooth_min']:g}" if law == "smooth" else f"<= {accept['iid_max']:g}"
        parts.append(f"{law} init, beta = {beta:g}: loss x{ratio:.3f}, weights moved {result.relative_change[s]:.2f}, "
                     f"variogram exponent {e0:.2f} -> {e1:.2f} (expected {bound})")
    smooth = [e for (law, _), e in zip(c.setups, result.exponent_trained) if law == "smooth"]
    iid = [e for (law, _), e in zip(c.setups, result.exponent_trained) if law != "smooth"]
    measured = {"max_loss_ratio": float(np.max(ratios)), "min_relative_change": float(np.min(result.relative_change))}
    expected = {"max_loss_ratio_max": accept["loss_ratio_max"],
                "min_relative_change_min": accept["relative_change_min"]}
    if smooth:
        measured["min_exponent_smooth"] = float(np.min(smooth))
        expected["min_exponent_smooth_min"] = accept["smooth_min"]
    if iid:
        measured["max_exponent_iid"] = float(np.max(iid))
        expected["max_exponent_iid_max"] = accept["iid_max"]
    measured.update({"setups": [list(s) for s in c.setups], "L": c.L, "d": c.d, "n": c.n, "steps": c.steps,
                     "lr": c.lr, "update_noise": c.update_noise, "loss_init": result.loss_init,
                     "loss_final": result.loss_final, "relative_change": result.relative_change,
                     "exponent_init": result.exponent_init, "exponent_trained": result.exponent_trained,
                     "exponent_every_10_steps": [e.tolist() for e in result.exponent_curve]})
    return threshold_verdict("qualitative", measured, expected, context="; ".join(parts))


def _fig7_summary(result: Fig7Result) -> dict:
    out = {}
    for q in QUANTITIES:
        for H, m, p in zip(result.config.hurst, result.crit[q][result.config.level], result.predicted[q]):
            out[f"{q}_crossing_H{H:g}"] = float(m)
            out[f"{q}_closed_form_H{H:g}"] = float(p)
        for H, z in zip(result.config.hurst, result.crit[q][0.0]):
            out[f"{q}_level0_H{H:g}"] = float(z)
    return out


def _fig8_summary(result: Fig8Result) -> dict:
    return {f"{k}_{i}": float(v) for k in ("loss_final", "relative_change")
            for i, v in enumerate(getattr(result, k))}


register("scaling.fig7", config=Fig7Config, presets=FIG7_PRESETS, measure=fig7, verdict=fig7_verdict,
         claims=("scaling/fig-7",), summary=_fig7_summary)
#: ``scaling/fig-7/fine`` (a slow check): Figure 7 at the paper's range of Hurst indices and a finer beta grid, the
#: "paper" preset of ``scaling.fig7``, as its own experiment whose "check" preset is that config
FIG7_FINE_PRESETS = {"check": FIG7_PRESETS["paper"], "paper": FIG7_PRESETS["paper"]}
register("scaling.fig7_fine", config=Fig7Config, presets=FIG7_FINE_PRESETS, measure=fig7, verdict=fig7_verdict,
         claims=("scaling/fig-7/fine",), summary=_fig7_summary)
register("scaling.fig8", config=Fig8Config, presets=FIG8_PRESETS, measure=fig8, verdict=fig8_verdict,
         claims=("scaling/fig-8",), summary=_fig8_summary)

# =========================================================================== claim E-2 (Figure 7's identity side)

LAWS_E2 = ("fbm", "gaussian", "uniform", "rademacher")


def e2_closed_form(grid, hurst, beta):
    r"""Closed-form prediction of E-2 on a depth grid: the first-order RMS ratio and its fitted slope.

    In the identity regime the RMS of :math:`\|h_L - h_0\|/\|h_0\|` of res-3 with fGn weights of
    Hurst index H is :math:`L^{-\beta}\sqrt{S_L}` to first order in :math:`\alpha_L^2`, with
    :math:`S_L` the double sum of :func:`linearized_mean_square` (hidden states; the module
    docstring gives it). Since :math:`S_L \sim c_H L^{2\max(H, 1/2)}`, the slope of the log RMS in
    log L tends to :math:`\max(H, 1/2) - \beta`; at finite L the least-squares slope over ``grid``
    differs from it where :math:`S_L` is not yet a pure power (visibly for H > 1/2, where a term
    linear in L competes with the :math:`L^{2H}` one).

    Parameters
    ----------
    grid : sequence of int
        Depths L >= 1 (at least 2 distinct).
    hurst : float
        Hurst index in (0, 1).
    beta : float
        Scaling exponent, :math:`\alpha_L = L^{-\beta}`.

    Returns
    -------
    rms : ndarray, shape (len(grid),)
        :math:`L^{-\beta}\sqrt{S_L}` at each depth.
    slope : float
        Least-squares slope of log rms against log L over the grid (the finite-L prediction).

    Examples
    --------
    >>> rms, slope = e2_closed_form([100, 400, 1600], 0.5, 1.0)   # S_L = L/2 at H = 1/2
    >>> round(slope, 12)
    -0.5
    """
    where = "theory.experiments.scaling.e2_closed_form"
    g = np.asarray(grid)
    if g.ndim != 1 or g.size < 2 or not np.issubdtype(g.dtype, np.integer) or np.any(g < 1) \
            or np.unique(g).size != g.size:
        raise ValueError(f"`grid` of {where} must be at least 2 distinct ints >= 1; got {grid!r}")
    if not (isinstance(beta, (int, float, np.floating, np.integer)) and not isinstance(beta, bool)
            and math.isfinite(beta)):
        raise ValueError(f"`beta` of {where} must be a finite number; got {beta!r}")
    if isinstance(hurst, bool) or not isinstance(hurst, (int, float, np.integer, np.floating)) \
            or not (0.0 < hurst < 1.0):
        raise ValueError(f"`hurst` of {where} must be a number in (0, 1); got {hurst!r}")
    S = np.array([linearized_mean_square(int(L), float(hurst), 1, "hidden") for L in g])
    x = np.log(g.astype(float))
    y = 0.5 * np.log(S) - float(beta) * x
    xc = x - x.mean()
    return np.exp(y), float(xc @ (y - y.mean()) / (xc @ xc))


@dataclass(frozen=True)
class E2Config(Config):
    r"""Configuration of claim E-2: slope in log L of the RMS of :math:`\|h_L - h_0\|/\|h_0\|` for
    res-3 with fGn weights, in the identity regime :math:`\beta > \max(H, 1/2)`."""

    hurst: tuple = field(Reals(0, 1, closed="neither", distinct=True), (0.2, 0.5, 0.8, 0.9), "Hurst indices, "
                         "one case each.")
    beta: float = field(Real(), 1.2, "Scaling exponent, the same for every case; must exceed max(H, 1/2) for every "
                        "H (the identity regime, where the first-order closed form applies).")
    grid: tuple = field(Ints(low=2, min_len=5, increasing=True), (64, 128, 256, 512, 1024), "Depths (a geometric "
                        "ladder). The weights of one draw are drawn once at the largest depth and the network of "
                        "depth L uses their first L layers (a prefix of fGn is fGn), so each draw gives a whole "
                        "curve.")
    d: int = field(Int(low=1), 12, "Width.")
    inputs: int = field(Int(low=1), 12, "Gaussian inputs h_0 per weight draw.")
    draws: int = field(Int(low=8), 64, "Independent weight draws (V, W, inputs) per case; the bootstrap resamples "
                       "them.")
    n_boot: int = field(Int(low=100), 1000, "Bootstrap resamples of the draws.")
    ci_level: float = field(Real(0, 1, closed="neither"), 0.99, "Level of the percentile interval of the slope.")
    seed: int = field(Seed(), 2, "Seed of the numpy Generators; a case's draws depend on (seed, H) only, not on "
                      "the other cases, so a reduced configuration repeats the draws of the full one.")
    hurst_shift: float = field(Real(), 0.0, "The weights are drawn with Hurst index H + hurst_shift while the "
                               "prediction uses H (0 for the claim; the negative controls mis-specify the law "
                               "with it). Law 'fbm' only; every H + hurst_shift must lie in (0, 1).")
    law: str = field(Choice(*LAWS_E2), "fbm", "Weight law of theory.scaling.weights; 'fbm' for the claim, an "
                     "i.i.d. law for the negative controls (the prediction still uses H).")

    def check(self):
        if any(self.beta <= max(h, 0.5) for h in self.hurst):
            raise self.invalid("beta", f"exceed max(H, 1/2) for every H of hurst = {self.hurst!r} (identity regime)")
        if self.law != "fbm" and self.hurst_shift != 0.0:
            raise self.invalid("hurst_shift", f"be 0 with law {self.law!r} (it applies to law 'fbm' only)")
        if any(not (0.0 < h + self.hurst_shift < 1.0) for h in self.hurst):
            raise self.invalid("hurst_shift", "keep every H + shift in (0, 1)")


E2_PRESETS = {
    # what the check runs: 4 cases (rough, Brownian, two smooth), d = 12, 12 inputs, 64 draws of
    # depth 1024 per case: the 99% interval of a slope is about +- 0.015 (H <= 1/2) to +- 0.026
    # (H = 0.8), half the change of the closed-form slope from H to H + 0.05 for H > 1/2 (~0.05);
    # the cost is the fGn draws (2 d^2 L normals per draw); ~6-10 s warm on 2 shared cores
    "check": E2Config(),
    # the paper's width (d = 40, Table 3) and a longer ladder up to L = 4096, more draws
    "paper": E2Config(hurst=(0.2, 0.5, 0.6, 0.7, 0.8, 0.9), grid=(128, 256, 512, 1024, 2048, 4096), d=40,
                      inputs=16, draws=128),
}


@dataclass(frozen=True)
class E2Result:
    """Per case (tuples in the order of ``config.hurst``).

    ``fits`` the :class:`theory.rates.RateFit` of the log RMS over draws and inputs against log L
    (``errors`` the RMS curve, ``ci`` the bootstrap interval over draws); ``rms_ci`` the pointwise
    bootstrap intervals of the RMS (G, 2); ``slope_geometric`` the slope of the mean log ratio
    (the statistic of earlier versions, not what the closed form predicts); ``closed_form_rms``
    the first-order RMS curves; ``predicted`` their fitted slopes over the grid (finite L);
    ``asymptotic`` max(H, 1/2) - beta; ``local_exponent`` the closed form's local slope
    ln(S_{4L}/S_L)/(2 ln 4) - beta at L = 10^5 (-> the asymptotic slope).
    """

    config: E2Config
    fits: tuple
    rms_ci: tuple
    slope_geometric: tuple
    closed_form_rms: tuple
    predicted: tuple
    asymptotic: tuple
    local_exponent: tuple


def _ls_slopes(x, Y):
    """Least-squares slopes of the rows of Y (..., G) on x (G,)."""
    xc = x - x.mean()
    return (Y - Y.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)


def e2(config: E2Config) -> E2Result:
    r"""Run claim E-2 for ``config`` (pure: no files, no globals).

    For each case H and each draw: V, W of depth max(grid) from :func:`theory.scaling.weights`,
    ``inputs`` Gaussian :math:`h_0`; for each L of the grid the log ratio
    :math:`\log(\|h_L - h_0\|/\|h_0\|)` of res-3 with :math:`\alpha_L = L^{-\beta}` and the first L
    layers (:func:`theory.scaling.log_norm_ratio`). The measured curve is the RMS of the ratio over
    draws and inputs; its slope in log L is fitted by least squares and bootstrapped over draws.
    """
    if not isinstance(config, E2Config):
        raise TypeError(f"`config` of theory.experiments.scaling.e2 must be an E2Config; got {type(config).__name__}")
    c = config
    grid = np.array(c.grid)
    x = np.log(grid.astype(float))
    Lmax = int(grid[-1])
    alpha = (1.0 - c.ci_level) / 2.0
    fits, rms_ci, geo, cf_rms, pred, asym, local = [], [], [], [], [], [], []
    for H in c.hurst:
        key = int(round(1e6 * H))
        rng = np.random.default_rng([c.seed, key])
        logs = np.empty((c.draws, grid.size, c.inputs))
        for s in range(c.draws):
            if c.law == "fbm":
                V = weights(Lmax, c.d, "fbm", H + c.hurst_shift, rng=rng)
                W = weights(Lmax, c.d, "fbm", H + c.hurst_shift, rng=rng)
            else:
                V, W = weights(Lmax, c.d, c.law, rng=rng), weights(Lmax, c.d, c.law, rng=rng)
            h0 = rng.standard_normal((c.inputs, c.d))
            for j, L in enumerate(grid):
                logs[s, j] = log_norm_ratio(h0, V[:L], W[:L], beta=c.beta, arch="res3")
        if not np.all(np.isfinite(logs)):
            raise ValueError(f"theory.experiments.scaling.e2: a ratio was 0 or not finite at H = {H:g} "
                             "(h_L = h_0 exactly or an overflow); widen d or change beta")
        # mean over inputs of the squared ratio, per draw and depth, scaled by its maximum for safety
        m = logs.max()
        sq = np.mean(np.exp(2.0 * (logs - m)), axis=2)  # (draws, G)
        y = m + 0.5 * np.log(sq.mean(axis=0))
        slope = float(_ls_slopes(x, y))
        intercept = float(y.mean() - slope * x.mean())
        resid = y - intercept - slope * x
        r2 = 1.0 - float(resid @ resid) / float((y - y.mean()) @ (y - y.mean()))
        boot = np.random.default_rng([c.seed, key, 1])
        idx = boot.integers(0, c.draws, size=(c.n_boot, c.draws))
        yb = m + 0.5 * np.log(sq[idx].mean(axis=1))  # (n_boot, G)
        sb = _ls_slopes(x, yb)
        ci = tuple(float(v) for v in np.quantile(sb, [alpha, 1.0 - alpha]))
        fits.append(RateFit(slope=slope, intercept=intercept, ci=ci, r2=r2, grid=grid, errors=np.exp(y),
                            dropped=(), level=c.ci_level))
        rms_ci.append(np.exp(np.quantile(yb, [alpha, 1.0 - alpha], axis=0).T))
        geo.append(float(_ls_slopes(x, logs.mean(axis=(0, 2)))))
        rms, p = e2_closed_form(grid, H, c.beta)
        cf_rms.append(rms)
        pred.append(p)
        asym.append(max(H, 0.5) - c.beta)
        big = 10**5
        local.append(math.log(linearized_mean_square(4 * big, H, 1) / linearized_mean_square(big, H, 1))
                     / (2 * math.log(4)) - c.beta)
    return E2Result(c, tuple(fits), tuple(rms_ci), tuple(geo), tuple(cf_rms), tuple(pred), tuple(asym),
                    tuple(local))


def e2_expected(result: E2Result) -> list:
    """The rate expectation of each case: ``{"slope": closed-form finite-L slope, "tol": t}`` with t
    the distance from the measured slope to the end of its bootstrap interval on the prediction's
    side (>= 0), so that :func:`theory.claims.rate_verdict` passes iff the prediction lies in the
    interval: the acceptance window is the scatter of the draws, not a fixed margin."""
    out = []
    for fit, p in zip(result.fits, result.predicted):
        lo, hi = fit.ci
        tol = (fit.slope - lo) if p < fit.slope else (hi - fit.slope)
        out.append({"slope": round(float(p), 6), "tol": round(max(float(tol), 0.0), 6)})
    return out


def e2_cases(result: E2Result) -> dict:
    """The measured dict of E-2: every case (slope, interval, closed-form slope, asymptotic slope), the
    worst case (farthest outside, or least inside, its interval: ``recorded_case``, index ``worst``) and
    the sizes."""
    c = result.config
    expected = e2_expected(result)
    excess = [abs(f.slope - e["slope"]) - e["tol"] for f, e in zip(result.fits, expected)]
    worst = int(np.argmax(excess))
    cases = {}
    for H, f, e, g, a, loc in zip(c.hurst, result.fits, expected, result.slope_geometric, result.asymptotic,
                                  result.local_exponent):
        cases[f"H={H:g},beta={c.beta:g}"] = {
            "slope": round(f.slope, 4), "ci": [round(f.ci[0], 4), round(f.ci[1], 4)],
            "closed_form_slope": round(e["slope"], 4), "inside": bool(abs(f.slope - e["slope"]) <= e["tol"]),
            "asymptotic_slope": round(a, 4), "closed_form_local_slope_L1e5": round(loc, 4),
            "finite_L_minus_asymptotic": round(e["slope"] - a, 4),
            "slope_of_mean_log": round(g, 4)}
    return {"cases": cases, "recorded_case": f"H={c.hurst[worst]:g},beta={c.beta:g}", "worst": worst,
            "d": c.d, "inputs": c.inputs, "draws": c.draws, "ci_level": c.ci_level, "law": c.law,
            "hurst_shift": c.hurst_shift}


def e2_verdict(result: E2Result) -> Verdict:
    """A rate (:func:`theory.claims.rate_verdict` on the grid of at least 5 depths): the closed-form finite-L
    slope lies inside the bootstrap interval of the measured slope (:func:`e2_expected`) for the worst case,
    hence for every case; ``measured`` adds :func:`e2_cases`."""
    info = e2_cases(result)
    w = info["worst"]
    v = rate_verdict(result.fits[w], e2_expected(result)[w], grid_label="L")
    return dataclasses.replace(v, measured={**info, **v.measured},
                               message=f"{info['recorded_case']} (worst of {len(result.fits)} cases): {v.message}")


register("scaling.e2", config=E2Config, presets=E2_PRESETS, measure=e2, verdict=e2_verdict, claims=("scaling/e-2",),
         summary=lambda r: {f"slope_H{H:g}": f.slope for H, f in zip(r.config.hurst, r.fits)}
         | {f"closed_form_slope_H{H:g}": float(p) for H, p in zip(r.config.hurst, r.predicted)})


# =========================================================================== Figure 7, one cell


@dataclass(frozen=True)
class Fig7CellConfig(BackendConfig):
    r"""One cell (beta, H) of the Figure 7 phase diagram (thesis Figure 2.7): res-3 with fGn weights.

    Every field is a scalar, so that a sweep (:mod:`theory.sweep`) can vary any of them; the grid
    of the paper's figure is ``beta`` from 0.2 to 1.3 against ``hurst`` from 0.05 to 0.97 (its
    Table 3), at depth 1000 and width 40.
    """

    beta: float = field(Real(0, closed="neither"), 0.5, r"Scaling exponent: the residual branch is multiplied by "
                        r":math:`L^{-\beta}`.")
    hurst: float = field(Real(0, 1, closed="neither"), 0.5, "Hurst index of the fractional Gaussian noises of V and "
                         "W along the layers.")
    depth: int = field(Int(low=2), 200, "Number of layers L (the paper: 1000).")
    width: int = field(Int(low=1), 20, "Width d (the paper: 40).")
    draws: int = field(Int(low=1), 4, "Independent draws of (V, W, h_0, p_L); the cell reports the RMS over them.")
    seed: int = field(Seed(), 7, "Seed of the numpy Generator of every draw. The draws depend on (seed, hurst, "
                      "depth, width) and not on beta, so the cells of one Hurst index share their weights, as the "
                      "columns of theory.scaling.phase.phase_diagram do.")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()


FIG7_CELL_PRESETS = {
    # a reduced cell, ~0.15 s on one core: depth 200, width 20, 8 draws
    "check": Fig7CellConfig(draws=8),
    # the sizes of the paper's Figure 7 (Table 3: L = 1000, d = 40); the paper does not state how many
    # draws a cell averages, 4 here (~2 s per cell on one core)
    "paper": Fig7CellConfig(depth=1000, width=40, draws=4),
}


@dataclass(frozen=True)
class Fig7CellResult:
    """Log10 ratios of one cell: per draw (shape (draws,)) and their RMS, ``log10 sqrt(mean ratio^2)``.

    ``hidden`` is :math:`\\log_{10}(\\|h_L - h_0\\|/\\|h_0\\|)`, ``gradient`` is
    :math:`\\log_{10}(\\|p_0 - p_L\\|/\\|p_L\\|)`; positive values are the explosion regime, negative
    ones the identity regime (the two colours of the paper's figure).
    """

    config: Fig7CellConfig
    hidden_draws: np.ndarray
    gradient_draws: np.ndarray
    hidden: float
    gradient: float


def fig7_cell(config: Fig7CellConfig) -> Fig7CellResult:
    """One cell of Figure 7: :func:`theory.scaling.phase.phase_diagram` at the single point (hurst, beta)
    with ``draws`` weight draws from ``numpy.random.default_rng(seed)``, reduced to the log10 of the
    RMS ratio over the draws (pure: no files, no globals)."""
    if not isinstance(config, Fig7CellConfig):
        raise TypeError(f"`config` of theory.experiments.scaling.fig7_cell must be a Fig7CellConfig; "
                        f"got {type(config).__name__}")
    c = config
    pd_hidden, pd_gradient = phase_grid([c.hurst], [c.beta], L=c.depth, d=c.width, n_seeds=c.draws,
                                        rng=np.random.default_rng(c.seed), backend=resolve(c.backend, c.device, c.dtype))
    hidden = np.array(pd_hidden[0, 0])
    gradient = np.array(pd_gradient[0, 0])
    return Fig7CellResult(c, hidden, gradient, float(_rms_log10(hidden)), float(_rms_log10(gradient)))


def fig7_cell_summary(result: Fig7CellResult) -> dict:
    """Plain numbers of one cell: ``hidden`` and ``gradient`` (log10 RMS ratios), their means over the
    draws of the log10 ratios (``hidden_mean``, ``gradient_mean``) and the spread over draws
    (``hidden_std``, ``gradient_std``)."""
    return {
        "hidden": result.hidden,
        "gradient": result.gradient,
        "hidden_mean": float(np.mean(result.hidden_draws)),
        "gradient_mean": float(np.mean(result.gradient_draws)),
        "hidden_std": float(np.std(result.hidden_draws)),
        "gradient_std": float(np.std(result.gradient_draws)),
    }


def _register_fig7_cell():
    from theory.experiments._registry import register

    # no check runs it (claims=()): the scaling/fig-7 check measures crossings with :func:`fig7`
    return register("scaling.fig7_cell", config=Fig7CellConfig, presets=FIG7_CELL_PRESETS, measure=fig7_cell,
                    summary=fig7_cell_summary)


FIG7_CELL = _register_fig7_cell()
__all__ += ["Fig7CellConfig", "Fig7CellResult", "FIG7_CELL_PRESETS", "fig7_cell", "fig7_cell_summary"]


# =========================================================================== the names the checks use
# The checks of ``scaling`` import from this module only; the measurements and verdicts of the other
# experiments of the paper key live in its private modules and are re-exported here.

from theory.experiments.scaling._claims import BOUND_EXPECTED  # noqa: E402
from theory.experiments.scaling._fbm import (  # noqa: E402
    FIG6, FIG6_PRESETS, Fig6Config, Fig6Result, fig6, fig6_case, fig6_claim_verdict, fig6_expected, fig6_verdict,
)
from theory.experiments.scaling._iid import (  # noqa: E402
    ALIASES, ARCHS, FIG2_P_MIN, FIG2_PRINTED, FIG_DEPTHS, LEMMA14_FAST, PROP2_DELTAS, THRESHOLD_BETWEEN, Z,
    jac_means, predicted_slope, regime, worst, worst_regime,
)
from theory.experiments.scaling._iid import _alpha as alpha  # noqa: E402
from theory.experiments.scaling._iid import _exact as exact_mean_square  # noqa: E402
from theory.experiments.scaling._iid import _grid as light_grid  # noqa: E402
from theory.experiments.scaling._limits import (  # noqa: E402
    CRITICAL_PRESETS, EXPLOSION_PRESETS, FIG5_PRESETS, FIG8_PROXY, FIG45, FIG45_EXPECTED, FIG45_PRESETS, P10,
    P12_CRITICAL_RTOL, PROP12_PRESETS, PROP13_PRESETS, critical, critical_verdict, explosion,
    explosion_result_verdict, fig45, fig45_result_verdict, smooth_rate, smooth_rate_cases, smooth_rate_expected, smooth_rate_verdict,
    tied_linear_instance,
)
from theory.experiments.scaling._limits import _cases as slope_cases  # noqa: E402

__all__ += [
    "BOUND_EXPECTED", "FIG6", "FIG6_PRESETS", "Fig6Config", "Fig6Result", "fig6", "fig6_case", "fig6_claim_verdict",
    "fig6_expected", "fig6_verdict",
    "ALIASES", "ARCHS", "FIG2_P_MIN", "FIG2_PRINTED", "FIG_DEPTHS", "LEMMA14_FAST", "PROP2_DELTAS",
    "THRESHOLD_BETWEEN", "Z", "jac_means", "predicted_slope", "regime", "worst", "worst_regime", "alpha",
    "exact_mean_square", "light_grid", "CRITICAL_PRESETS", "EXPLOSION_PRESETS", "FIG5_PRESETS", "FIG8_PROXY",
    "FIG45", "FIG45_EXPECTED", "FIG45_PRESETS", "P10", "P12_CRITICAL_RTOL", "PROP12_PRESETS", "PROP13_PRESETS", "critical",
    "critical_verdict", "explosion", "explosion_result_verdict", "fig45", "fig45_result_verdict", "smooth_rate",
    "smooth_rate_cases", "smooth_rate_expected", "smooth_rate_verdict", "tied_linear_instance", "slope_cases",
    "e2_cases",
]

from . import figures  # noqa: E402,F401  (the figure declarations of theory reproduce; Fig. 2(b), 7 grid, 9 claims)
