r"""Measurement helpers for the i.i.d. claims of ``scaling``: one layer's branch, Monte-Carlo means,
an exact-in-law fast sampler of the norms, quantile intervals and the log-normal approximation.

Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth Regime" (hal-03697725), Section 2
and Appendices A-C; numbers as in the preprint (the thesis, Chapter 2, prefixes "2.").

* :func:`branch` and :func:`branch_jvp` evaluate, for many draws of the inner weights at once, the
  residual branch :math:`g(h, \theta)` of Table 1 and its derivative :math:`\partial_h g(h, \theta)\,q`
  (Assumptions (A2), (A4); Propositions 1, 5; Lemmas 15, 16). They agree with
  :func:`theory.scaling.forward` and :func:`theory.scaling.jacobian` run on one layer with
  :math:`V = I` (``tests/test_scaling_statistics.py``).
* :func:`mc_mean` returns a Monte-Carlo mean with its standard error (:class:`MCEstimate`).
* :func:`fast_norms` samples :math:`\|h_L\|/\|h_0\|` and :math:`\|h_L - h_0\|/\|h_0\|` in O(L) (res-2,
  res-3) or O(L d) (res-1) per run instead of the O(L d^2) of explicit matrices. It is exact in law
  for **Gaussian** weights :math:`\mathcal N(0, 1/d)` (the paper's Gaussian case), not for the
  uniform or Rademacher laws, and gives norm statistics only (no gradients).
* :func:`quantile_ci` is the distribution-free (order-statistic) confidence interval of a quantile;
  :func:`clt_log_norm` is the Gaussian approximation of :math:`\ln(\|h_L\|/\|h_0\|)`.

Every random draw comes from the :class:`numpy.random.Generator` passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validation import (
    NonFiniteError,
    as_float_array,
    as_generator,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
    check_work,
)

__all__ = [
    "FastNorms",
    "MCEstimate",
    "branch",
    "branch_jvp",
    "clt_log_norm",
    "fast_norms",
    "mc_mean",
    "quantile_ci",
]

_ARCHS = ("res1", "res2", "res3")
_ACTIVATIONS = ("relu", "leaky_relu", "identity", "tanh")
#: activations for which every architecture is positively 1-homogeneous (:func:`fast_norms`)
_HOMOGENEOUS = ("relu", "leaky_relu", "identity")


def _sigma(x, activation, slope):
    """The activation entrywise (the kernels' convention, theory.scaling._kernels)."""
    if activation == "relu":
        return np.maximum(x, 0.0)
    if activation == "leaky_relu":
        return np.where(x > 0.0, x, slope * x)
    if activation == "identity":
        return x
    return np.tanh(x)


def _dsigma(x, activation, slope):
    """sigma'(x) with the left derivative at the kink: ReLU'(0) = 0, leaky'(0) = s (as the kernels)."""
    if activation == "relu":
        return (x > 0.0).astype(np.float64)
    if activation == "leaky_relu":
        return np.where(x > 0.0, 1.0, slope)
    if activation == "identity":
        return np.ones_like(x)
    return 1.0 - np.tanh(x) ** 2


def _arch(func, arch, activation, slope):
    arch = check_choice(arch, "arch", _ARCHS, func=func)
    activation = check_choice(activation, "activation", _ACTIVATIONS, func=func)
    if arch == "res3" and activation != "relu":
        raise ValueError(f"`activation` of {func} must be 'relu' for arch 'res3'; got {activation!r}.")
    slope = check_interval(slope, "slope", -np.inf, np.inf, func=func)
    return arch, activation, slope


def _inner(func, W, arch, d):
    if arch == "res1":
        if W is not None:
            raise ValueError(f"`W` of {func} must be None for arch 'res1' (g = sigma(h) has no weights).")
        return None
    if W is None:
        raise ValueError(f"`W` of {func} is required for arch {arch!r}: draws of shape (n, {d}, {d}).")
    W = as_float_array(W, "W", func=func, ndim=3)
    if W.shape[1:] != (d, d) or W.shape[0] < 1:
        raise ValueError(f"`W` of {func} must have shape (n, {d}, {d}) with n >= 1 and d = {d} from `h`; "
                         f"got {W.shape}.")
    return W


def branch(h, W=None, arch="res3", activation="relu", *, slope=0.8):
    r"""Residual branch :math:`g(h, \theta)` of Table 1 for n draws of the inner weights.

    .. math:: g = \sigma(h)\ \text{(res-1)}, \qquad g = \sigma(W h)\ \text{(res-2)}, \qquad
              g = \mathrm{ReLU}(W h)\ \text{(res-3)}.

    Parameters
    ----------
    h : array_like, shape (d,)
    W : array_like, shape (n, d, d), or None
        Draws of :math:`W_{k+1}` (None for res-1).
    arch : {"res1", "res2", "res3"}
    activation : {"relu", "leaky_relu", "identity", "tanh"}
        "relu" for res-3.
    slope : float
        Negative-side slope of leaky_relu.

    Returns
    -------
    ndarray, shape (n, d), or (d,) for res-1

    Examples
    --------
    >>> import numpy as np
    >>> branch([1.0, -2.0], np.eye(2)[None], "res3")
    array([[1., 0.]])
    """
    func = "theory.scaling.statistics.branch"
    arch, activation, slope = _arch(func, arch, activation, slope)
    h = as_float_array(h, "h", func=func, ndim=1, min_size=1)
    W = _inner(func, W, arch, h.size)
    z = h if W is None else W @ h
    return _sigma(z, activation, slope)


def branch_jvp(h, q, W=None, arch="res3", activation="relu", *, slope=0.8):
    r"""Directional derivative :math:`\partial_h g(h, \theta)\, q` for n draws of the inner weights.

    .. math:: \partial_h g\, q = \sigma'(h) \odot q\ \text{(res-1)}, \qquad
              \partial_h g\, q = \sigma'(W h) \odot (W q)\ \text{(res-2, res-3)},

    with the left derivative at the kink, ReLU'(0) = 0 (as :func:`theory.scaling.jacobian`).

    Parameters
    ----------
    h, q : array_like, shape (d,)
    W, arch, activation, slope
        As in :func:`branch`.

    Returns
    -------
    ndarray, shape (n, d), or (d,) for res-1

    Examples
    --------
    >>> import numpy as np
    >>> branch_jvp([1.0, -2.0], [3.0, 4.0], np.eye(2)[None], "res3")
    array([[3., 0.]])
    """
    func = "theory.scaling.statistics.branch_jvp"
    arch, activation, slope = _arch(func, arch, activation, slope)
    h = as_float_array(h, "h", func=func, ndim=1, min_size=1)
    q = as_float_array(q, "q", func=func, shape=(h.size,))
    W = _inner(func, W, arch, h.size)
    if W is None:
        return _dsigma(h, activation, slope) * q
    return _dsigma(W @ h, activation, slope) * (W @ q)


@dataclass(frozen=True)
class MCEstimate:
    """A Monte-Carlo mean with its standard error.

    Attributes
    ----------
    mean : float
    se : float
        Sample standard deviation over the square root of ``n``.
    n : int
        Number of independent samples.
    """

    mean: float
    se: float
    n: int

    def z(self, value):
        """Standardised distance ``(mean - value) / se`` (``inf`` when se = 0 and they differ)."""
        diff = self.mean - float(value)
        if self.se > 0:
            return diff / self.se
        return 0.0 if diff == 0 else float(np.copysign(np.inf, diff))

    def to_measured(self):
        return {"mean": self.mean, "se": self.se, "n": self.n}


def mc_mean(samples):
    """Mean and standard error of independent samples (a 1-D array of at least two values).

    Examples
    --------
    >>> est = mc_mean([1.0, 2.0, 3.0, 4.0])
    >>> est.mean, round(est.se, 6), est.n
    (2.5, 0.645497, 4)
    """
    func = "theory.scaling.statistics.mc_mean"
    x = as_float_array(samples, "samples", func=func, ndim=1, min_size=2)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.array([x.mean(), x.std(ddof=1) / np.sqrt(x.size)])
    check_finite_output(out, "the mean or its standard error", func=func, hint="Rescale `samples`.")
    return MCEstimate(float(out[0]), float(out[1]), int(x.size))


@dataclass(frozen=True)
class FastNorms:
    r"""Norm statistics of ``runs`` independent networks from :func:`fast_norms`.

    Attributes
    ----------
    log_norm_ratio : ndarray, shape (runs,)
        :math:`\ln(\|h_L\| / \|h_0\|)`.
    log_dist_ratio : ndarray, shape (runs,)
        :math:`\ln(\|h_L - h_0\| / \|h_0\|)`.
    inner : ndarray, shape (runs,)
        :math:`\langle h_L, h_0\rangle / \|h_0\|^2` (``inf``-free only where it fits in float64).
    """

    log_norm_ratio: np.ndarray
    log_dist_ratio: np.ndarray
    inner: np.ndarray

    @property
    def norm_ratio(self):
        r""":math:`\|h_L\| / \|h_0\|`."""
        return np.exp(self.log_norm_ratio)

    @property
    def dist_ratio(self):
        r""":math:`\|h_L - h_0\| / \|h_0\|`."""
        return np.exp(self.log_dist_ratio)


def _log_dist(s, a, b):
    """ln ||e^s (a e0 + b e1) - e0|| for a^2 + b^2 = 1, without overflow."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        pos = s >= 0.0
        e = np.exp(-np.abs(s))
        far = s + 0.5 * np.log((a - e) ** 2 + b**2)  # s >= 0: e = e^{-s}
        near = 0.5 * np.log((e * a - 1.0) ** 2 + (e * b) ** 2)  # s < 0: e = e^{s}
        return np.where(pos, far, near)


def fast_norms(L, d, beta, runs, *, arch="res3", activation="relu", slope=0.8, h0=None, rng=None, max_work=None):
    r"""Sample :math:`\|h_L\|/\|h_0\|` and :math:`\|h_L - h_0\|/\|h_0\|` exactly in law, Gaussian weights.

    For :math:`V_{k+1}` with i.i.d. :math:`\mathcal N(0, 1/d)` entries, independent of
    :math:`u = g(h_k, \theta_{k+1})`, :math:`V_{k+1} u \overset{d}{=} \frac{\|u\|}{\sqrt d} z'` with
    :math:`z' \sim \mathcal N(0, I_d)` independent of u (rotation invariance of the Gaussian). Hence

    * res-1: :math:`h_{k+1} = h_k + \alpha_L \frac{\|\sigma(h_k)\|}{\sqrt d} z'_k` (O(d) per layer);
    * res-2 / res-3 with Gaussian :math:`W_{k+1}` as well: :math:`W h \overset{d}{=} \frac{\|h\|}{\sqrt d}z`
      and, for a positively homogeneous :math:`\sigma`,
      :math:`h_{k+1} = h_k + c_k z'_k` with :math:`c_k = \alpha_L \|h_k\| \|\sigma(z_k)\| / d`. The
      law of the step is invariant under rotations fixing :math:`h_0`, so the pair
      :math:`(a_k, b_k)` = (component along :math:`h_0/\|h_0\|`, norm of the orthogonal part) is a
      Markov chain: :math:`a' = a + c\,\xi_0`, :math:`b'^2 = (b + c\,\xi_1)^2 + c^2 \chi^2_{d-2}`, with
      :math:`\|\sigma(z)\|^2 = \chi^2_M + s^2 \chi^2_{d-M}`, :math:`M \sim \mathrm{Bin}(d, 1/2)` (s = 0
      for ReLU, s = 1 for the identity). O(1) per layer, whatever d.

    The states are renormalised every layer (the layer is positively homogeneous) and the log norms
    accumulated, so nothing overflows.

    Parameters
    ----------
    L : int
        Depth, L >= 1.
    d : int
        Width, d >= 2.
    beta : float
        :math:`\alpha_L = L^{-\beta}`, beta > 0.
    runs : int
        Number of independent networks.
    arch : {"res1", "res2", "res3"}
    activation : {"relu", "leaky_relu", "identity"}
        Positively homogeneous activations only ("relu" for res-3).
    slope : float
        Negative-side slope of leaky_relu.
    h0 : array_like, shape (d,), optional
        Input; required for res-1 (whose law depends on its direction). For res-2 and res-3 the law
        of the statistics does not depend on :math:`h_0` and it must be omitted.
    rng : None, int or numpy.random.Generator
        Source of randomness (NumPy's convention).
    max_work : float, optional
        Budget in floating-point operations (default :data:`theory._validation.MAX_WORK` = 1e11).
        The cost is estimated as L (2e4 + 150 runs) (runs times d for res-1), 1e9 per second of one
        core, and a larger one is refused up front.

    Returns
    -------
    FastNorms

    Notes
    -----
    Exact in law for Gaussian weights only (V, and W for res-2/3); it does not produce the weights
    and cannot give gradients. ``tests/test_scaling_statistics.py`` compares it with
    :func:`theory.scaling.forward` on explicit Gaussian matrices. Claims: ``scaling`` Lemma 14,
    Propositions 3, Corollary 4(iii), Figure 2.

    Examples
    --------
    >>> import numpy as np
    >>> out = fast_norms(100, 16, 0.5, 2000, rng=np.random.default_rng(0))
    >>> out.log_norm_ratio.shape
    (2000,)
    """
    func = "theory.scaling.statistics.fast_norms"
    L = check_int(L, "L", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=2, maximum=2**53)  # binomial draws take int64
    runs = check_int(runs, "runs", func=func, minimum=1)
    beta = check_interval(beta, "beta", 0.0, np.inf, func=func)
    arch, activation, slope = _arch(func, arch, activation, slope)
    if activation not in _HOMOGENEOUS:
        raise ValueError(f"`activation` of {func} must be one of {list(_HOMOGENEOUS)} (positively "
                         f"homogeneous); got {activation!r}.")
    # measured on one core: about 20 us of interpreter work per layer and 0.15 us per layer and run
    # (d times more for res-1), counted at 1e9 operations per second
    ops = L * (2.0e4 + 150.0 * runs * (d if arch == "res1" else 1))
    name = "L" if L >= runs else "runs"
    check_work(ops, name, L if name == "L" else runs, func=func, max_work=max_work)
    check_memory(8 * 6 * runs * (d if arch == "res1" else 1), "runs", runs, func=func)
    rng = as_generator(rng, "rng", func)
    alpha = float(L) ** (-beta)
    if arch == "res1":
        if h0 is None:
            raise ValueError(f"`h0` of {func} is required for arch 'res1' (the law depends on its direction).")
        h0 = as_float_array(h0, "h0", func=func, shape=(d,))
        n0 = np.linalg.norm(h0)
        if n0 == 0.0:
            raise ValueError(f"`h0` of {func} must be nonzero.")
        u0 = h0 / n0
        u = np.tile(u0, (runs, 1))
        s = np.zeros(runs)
        for _ in range(L):
            c = alpha * np.linalg.norm(_sigma(u, activation, slope), axis=1) / np.sqrt(d)
            u += c[:, None] * rng.standard_normal((runs, d))
            n = np.linalg.norm(u, axis=1)
            u /= n[:, None]
            s += np.log(n)
        a = u @ u0
        b = np.sqrt(np.maximum(1.0 - a * a, 0.0))
    else:
        if h0 is not None:
            raise ValueError(f"`h0` of {func} must be omitted for arch {arch!r}: the law of the norms does "
                             f"not depend on it.")
        neg = {"relu": 0.0, "leaky_relu": slope * slope, "identity": 1.0}[activation]
        a, b, s = np.ones(runs), np.zeros(runs), np.zeros(runs)
        for _ in range(L):
            m = rng.binomial(d, 0.5, runs)
            r2 = rng.gamma(m / 2.0, 2.0)  # chi^2_M (a zero shape gives 0)
            if neg:
                r2 = r2 + neg * rng.gamma((d - m) / 2.0, 2.0)
            c = alpha * np.sqrt(r2) / d  # the unit state has ||h_k|| = 1
            xi = rng.standard_normal((2, runs))
            rest = rng.chisquare(d - 2, runs) if d > 2 else np.zeros(runs)
            a = a + c * xi[0]
            b = np.sqrt((b + c * xi[1]) ** 2 + c * c * rest)
            n = np.sqrt(a * a + b * b)
            a, b = a / n, b / n
            s += np.log(n)
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(a))):
        raise NonFiniteError(f"{func}: a norm became zero or non-finite.")
    log_dist = _log_dist(s, a, b)
    with np.errstate(over="ignore"):
        inner = np.exp(s) * a
    return FastNorms(s, log_dist, inner)


def quantile_ci(samples, p, level=0.95):
    """Sample p-quantile and its distribution-free confidence interval from order statistics.

    The interval :math:`[x_{(j)}, x_{(k)}]` has j, k the binomial(n, p) quantiles of (1 -+ level)/2,
    so that it covers the true quantile with probability at least ``level`` for any continuous law.

    Parameters
    ----------
    samples : array_like, shape (n,)
    p : float in (0, 1)
    level : float in (0, 1)

    Returns
    -------
    (float, float, float)
        The sample quantile (linear interpolation) and the interval ends.

    Examples
    --------
    >>> q, lo, hi = quantile_ci(np.arange(1001.0), 0.5)
    >>> q, lo <= 500 <= hi
    (500.0, True)
    """
    func = "theory.scaling.statistics.quantile_ci"
    x = np.sort(as_float_array(samples, "samples", func=func, ndim=1, min_size=2))
    p = check_interval(p, "p", 0.0, 1.0, func=func)
    level = check_interval(level, "level", 0.0, 1.0, func=func)
    n = x.size
    j = int(stats.binom.ppf((1 - level) / 2, n, p))
    k = int(stats.binom.ppf((1 + level) / 2, n, p))
    return float(np.quantile(x, p)), float(x[max(j - 1, 0)]), float(x[min(k, n - 1)])


def clt_log_norm(L, d, beta, kappa=0.5):
    r"""Gaussian approximation of :math:`\ln(\|h_L\|/\|h_0\|)`: its mean and standard deviation.

    With :math:`\ln\|h_{k+1}\|^2 = \ln\|h_k\|^2 + \ln(1 + Y_k)` (``scaling`` Appendix A.3) and
    :math:`\mathbb E(Y_{k,1}|h_k) = \kappa\alpha_L^2`, :math:`\mathbb E(Y_{k,2}^2|h_k) = 4\kappa\alpha_L^2/d`
    (Lemma 15; :math:`\kappa = \mathbb E\|g\|^2/\|h\|^2`, 1/2 for res-3), the second-order expansion
    :math:`\ln(1 + Y) \approx Y - Y^2/2` and the central limit theorem give

    .. math:: \ln\frac{\|h_L\|}{\|h_0\|} \approx \mathcal N\Big(\frac{L\alpha_L^2\kappa}{2}(1 - \tfrac2d),\
              \frac{L\alpha_L^2\kappa}{d}\Big),

    up to O(L alpha^4) (the paper's Figure 2).

    Examples
    --------
    >>> m, sd = clt_log_norm(1000, 100, 0.5)
    >>> round(m, 4), round(sd ** 2, 4)
    (0.245, 0.005)
    """
    func = "theory.scaling.statistics.clt_log_norm"
    L = check_int(L, "L", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    beta = check_interval(beta, "beta", 0.0, np.inf, func=func)
    kappa = check_interval(kappa, "kappa", 0.0, np.inf, func=func)
    x = L * float(L) ** (-2 * beta) * kappa
    return x * (1 - 2 / d) / 2, float(np.sqrt(x / d))
