"""Oracle kernels: random samplers, verified statistically: fractional Gaussian noise (theory.fbm.fgn).

The draws X (M x n) are whitened by the exact covariance, Z = L^-1 X with L L^T the Toeplitz covariance of fGn(H),
which makes them i.i.d. N(0, 1) under the null. A battery of seven statistics (``BATTERY``), each with an exact
or a conservative null law and each tested at ALPHA / 7 (Bonferroni), keeps the false-alarm rate at or below ALPHA
by construction and has power against each class of defect that exact samplers really have (the planted samplers of
:mod:`theory.oracle._defects`, the measured table in ``docs/howto/oracle_power.md``). The fBm paths of the ``fbm``
kernel go through the same battery: whitening a path by its covariance is whitening its increments by fGn's.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import warnings
import zlib

import numpy as np

from ..._validation import check_choice, check_finite_output, check_int, check_interval, check_memory, check_work
from ...experiments.config import Int, OrNone, Real, Seed
from .._core import Argument, Case, Convention, Kernel, Parameter, register


#: false-alarm rate of a statistical case: the statistics of ``BATTERY``, each at ALPHA / len(BATTERY)
ALPHA = 0.01
#: draws of a built-in case: with these every defect class of the power table is rejected with probability >= 0.99
#: at n = 64 (stated lower bounds: a Nyquist weight off by c = 0.005 at H = 0.2 needs 1856 draws, a variance off by
#: 2 % 2432, the frequency-0 weight without its sqrt 2 at H = 0.2 3840)
_FGN_DRAWS = 4000
#: length of the built-in cases, and their Hurst indices with the seeds of their draws
_FGN_N = 64
_FGN_SEEDS = {0.5: 51, 0.2: 52, 0.75: 53, 0.95: 54}
#: the Hurst index of a case generated at the user's other parameters only (``--param n=1000``)
_FGN_DEFAULT_HURST = 0.75


@dataclasses.dataclass(frozen=True)
class Statistic:
    """One statistic of the sampler battery: ``key``, ``name`` (in the messages), its exact or conservative null
    law (``null``) and the defects it is built to see (``sees``)."""

    key: str
    name: str
    null: str
    sees: str


#: the battery that judges whitened draws Z (M x n), each statistic two-sided (the two Kolmogorov-Smirnov tests
#: one-sided in the distance) at ALPHA / len(BATTERY): the false-alarm rate is at most ALPHA by Bonferroni whatever
#: the dependence between the statistics, since each null law is exact or conservative
BATTERY = (
    Statistic("variance", "variance statistic", "sum Z^2 ~ chi^2(M n), exact",
              "a wrong scale, increments for paths or paths for increments, a missing step factor n^-H"),
    Statistic("lag1", "lag-1 statistic",
              "sum_m sum_i Z_mi Z_m,i+1 = sum_k cos(pi k/(n+1)) chi^2_k(M) with independent chi^2_k(M), exact "
              "(Imhof's integral; beyond 6 standard deviations a Chernoff bound, conservative)",
              "a wrong H, a correlation error at short lags"),
    Statistic("zero", "zero-frequency projection",
              "sum_m (u_0^T z_m)^2 ~ chi^2(M), u_0 = L^-1 1 normalised, exact",
              "a wrong H (long-range dependence), a wrong weight of the embedding's frequency 0"),
    Statistic("nyquist", "Nyquist projection",
              "sum_m (u_n^T z_m)^2 ~ chi^2(M), u_n = L^-1 ((-1)^i) normalised, exact",
              "a wrong weight at the embedding's Nyquist frequency (a covariance error c (-1)^(i-j)), clipped "
              "eigenvalues"),
    Statistic("frequencies", "frequency projections",
              "at each frequency pi j/n of the 2n-point embedding, j = 1..n-1, the energy of the whitened draws in "
              "the plane L^-1 (cos(pi j i/n), sin(pi j i/n)) ~ chi^2(2M), exact; Bonferroni over the n - 1",
              "a wrong weight at one interior frequency of the embedding, clipped eigenvalues"),
    Statistic("marginal", "marginal law",
              "Kolmogorov-Smirnov distance D of the M n pooled values from N(0, 1), p = 2 exp(-2 M n D^2) (the "
              "Dvoretzky-Kiefer-Wolfowitz bound with Massart's constant: conservative at every sample size)",
              "non-Gaussian innovations of the right covariance"),
    Statistic("energy", "energy law",
              "Kolmogorov-Smirnov distance D of the M energies |z_m|^2 from chi^2(n), p = 2 exp(-2 M D^2) "
              "(conservative)",
              "non-Gaussian innovations (a wrong kurtosis), a random scale per draw"),
)
#: each statistic's level (Bonferroni)
LEVEL = ALPHA / len(BATTERY)
#: the statistics whose law under a Gaussian alternative is a weighted sum of chi-squares (the stated power)
QUADRATIC = ("variance", "lag1", "zero", "nyquist", "frequencies")
#: beyond this many standard deviations the weighted chi-square tail is bounded (Chernoff) instead of integrated
_IMHOF_RANGE = 6.0


def _battery_why(draws: int, n: int) -> str:
    """The battery in words (the kernel's ``why``), derived from ``BATTERY``."""
    stats = "; ".join(f"({i}) the {s.name}: {s.null}" for i, s in enumerate(BATTERY, 1))
    return (f"draws X (M x n) are whitened, Z = L^-1 X with L L^T the exact Toeplitz covariance of fGn(H); under the "
            f"null Z is i.i.d. N(0, 1). {len(BATTERY)} statistics, each with an exact or conservative null law: "
            f"{stats}. Each is "
            f"tested at {ALPHA:g}/{len(BATTERY)} = {LEVEL:.3g} (two-sided), so the false-alarm rate is <= {ALPHA:g} by "
            f"Bonferroni whatever their dependence. Power (M = {draws}, n = {n}) against each defect class of exact "
            f"samplers (wrong scale, wrong H, a wrong weight at one frequency of the embedding, clipped negative "
            f"eigenvalues, increments vs paths, non-Gaussian marginals): stated (Gaussian classes, closed form) and "
            f"measured by `theory.oracle.power_table`, tabulated in docs/howto/oracle_power.md")


# ----------------------------------------------------------------------------------------------
# cases


def _case_seed(kernel: str, values: tuple) -> int:
    """A fixed seed for the case of ``kernel`` at parameter ``values`` that is not a built-in one (stable across
    runs and platforms: a CRC of the values' text)."""
    return 10_000 + zlib.crc32(repr((kernel,) + tuple(values)).encode()) % 1_000_000


def _check_sampler_size(n: int, draws: int, func: str) -> None:
    """Refuse a case whose judge would exceed the limits: the draws, their whitened copy and projections (about
    five M x n arrays) plus about six n x n matrices (the covariance, its factor, the 2n projection directions);
    work: the whitening and the projections (3 M n^2), the factor and the directions (2 n^3)."""
    name, value = ("draws", draws) if draws > n else ("n", n)
    check_memory(8 * (5 * draws * n + 6 * n * n), name, value, func=func,
                 hint=f"A case holds about five draws x n arrays of float64 (draws = {draws}, n = {n}).")
    check_work(3.0 * draws * n * n + 2.0 * n**3, name, value, func=func,
               hint="The judge whitens each draw and projects it on 2n directions.")


def _fgn_case(hurst: float, n: int, draws: int, seed: int | None = None) -> Case:
    """The case fgn_H{hurst}_n{n} (with _M{draws} when draws is not the built-in number, _s{seed} for an explicit
    seed); the built-in seed at the built-in (hurst, n, draws), a fixed derived one otherwise."""
    name = f"fgn_H{hurst!r}_n{n}" + (f"_M{draws}" if draws != _FGN_DRAWS else "")
    if seed is None:
        builtin = n == _FGN_N and draws == _FGN_DRAWS and hurst in _FGN_SEEDS
        seed = _FGN_SEEDS[hurst] if builtin else _case_seed("fgn", (hurst, n, draws))
    else:
        name += f"_s{seed}"
    return Case(name, {"n": n, "hurst": hurst, "draws": draws, "seed": seed},
                {"n": n, "hurst": hurst, "size": draws, "seed": seed})


def _fgn_cases():
    return [_fgn_case(hurst, _FGN_N, _FGN_DRAWS) for hurst in _FGN_SEEDS]


def _fgn_generate(hurst, n, draws, seed=None):
    """The case at one value of each parameter (``--param hurst=0.3,0.7 --param n=1000``)."""
    _check_sampler_size(n, draws, "the oracle's fgn cases")
    return [_fgn_case(hurst, n, draws, seed)]


#: the parameters a user may set; their domains validate --param values
def _hurst_parameter(builtin) -> Parameter:
    return Parameter("hurst", Real(0.0, 1.0, closed="neither"), _FGN_DEFAULT_HURST,
                     f"the Hurst index H (built-in cases: {', '.join(map(repr, builtin))})")


_HURST = _hurst_parameter(sorted(_FGN_SEEDS))
_DRAWS = Parameter("draws", Int(low=2), _FGN_DRAWS,
                   f"the number M of independent draws of the case (built-in: {_FGN_DRAWS}); the power grows with M")
_SEED = Parameter("seed", OrNone(Seed(), "the case's fixed seed"), None,
                  "the seed of the Generator the sampler is given (default: the case's fixed seed); several seeds "
                  "give independent runs, each with false-alarm rate <= 1 %")


def _fgn_cov(n, hurst):
    from scipy.linalg import toeplitz

    from theory.fbm import autocovariance

    return toeplitz(autocovariance(np.arange(n), hurst))


# ----------------------------------------------------------------------------------------------
# weighted sums of chi-squares: the exact null law of the lag-1 statistic and every power of a quadratic statistic


def _quadform_sf(x: float, lam, dof, *, bound: str = "upper") -> float:
    """P(sum_k lam_k chi^2(dof_k) > x) for independent central chi-squares.

    Imhof's integral (Imhof 1961, Biometrika 48, 419-426) within :data:`_IMHOF_RANGE` standard deviations of the
    mean, to an absolute error below 1e-9 from four degrees of freedom in all on (checked against chi-square laws;
    below 1e-6 under four), one weight as the scaled chi-square itself; the tail beyond :math:`u` = 1, 2, 4, ...
    where rho(u) > e^8 as Fourier integrals (QUADPACK's QAWF). Farther out than that range the tail beyond x is
    bounded by Chernoff's exp(-sup_t (t x - log E e^(tQ))), and the value returned is an upper bound of the
    probability (``bound="upper"``: p-values, conservative) or a lower bound (``bound="lower"``: powers).
    """
    from scipy import integrate, optimize

    lam = np.asarray(lam, dtype=np.float64).ravel()
    dof = np.broadcast_to(np.asarray(dof, dtype=np.float64), lam.shape)
    keep = lam != 0
    lam, dof = lam[keep], dof[keep]
    if lam.size == 0:
        return 1.0 if x < 0 else 0.0
    mean = float(np.sum(dof * lam))
    s = math.sqrt(float(np.sum(dof * lam * lam)))     # Var Q = 2 s^2
    t_std = (x - mean) / (math.sqrt(2.0) * s)
    if abs(t_std) > _IMHOF_RANGE:
        sign = 1.0 if t_std > 0 else -1.0                # the tail beyond x: P(sign Q >= sign x)
        top, y = lam * sign, sign * x
        cap = float(top.max())
        if cap <= 0 and y > 0:                           # sign Q <= 0 < y almost surely
            tail = 0.0
        else:
            def negrate(t):                               # -(t y - K(t)), K the cumulant generating function of sign Q
                return -(t * y + 0.5 * float(np.sum(dof * np.log1p(-2.0 * t * top))))
            # K is finite below 1/(2 cap); with no positive weight the minimiser lies below sum(dof)/|y|
            t_max = 0.5 / cap * (1 - 1e-12) if cap > 0 else float(np.sum(dof)) / abs(y)
            res = optimize.minimize_scalar(negrate, bounds=(0.0, t_max), method="bounded",
                                           options={"xatol": 1e-14 * t_max})
            tail = min(1.0, math.exp(min(0.0, float(res.fun))))
        if sign > 0:                                     # sf in [0, tail]
            return tail if bound == "upper" else 0.0
        return 1.0 if bound == "upper" else 1.0 - tail  # sf in [1 - tail, 1]
    ls, xs = lam / s, x / s

    def logrho(u):
        return 0.25 * float(np.sum(dof * np.log1p((ls * u) ** 2)))

    def integrand(u):
        if u == 0.0:
            return 0.5 * (float(np.sum(dof * ls)) - xs)
        theta = 0.5 * float(np.sum(dof * np.arctan(ls * u))) - 0.5 * xs * u
        return math.sin(theta) * math.exp(-logrho(u)) / u

    if np.all(lam == lam[0]):                            # one weight: a scaled chi-square, exactly
        from scipy.special import chdtrc

        return float(chdtrc(float(np.sum(dof)), x / lam[0])) if lam[0] > 0 else float(x < 0)
    # sin(theta(u)) / (u rho(u)), theta(u) = A(u) - xs u / 2 with A slowly varying: integrated piecewise over [0, 1],
    # [1, 2], [2, 4], ... while rho(u) < e^8, the tail beyond as two Fourier integrals of the smooth factors
    # sin A / (u rho) and cos A / (u rho) (QUADPACK's QAWF, which handles the oscillation of any length)
    def amplitude(u, part):
        a = 0.5 * float(np.sum(dof * np.arctan(ls * u)))
        return (math.sin(a) if part == "sin" else math.cos(a)) * math.exp(-logrho(u)) / u

    value, left, right = 0.0, 0.0, 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        while logrho(left) < 8.0 or left == 0.0:
            piece, _ = integrate.quad(integrand, left, right, limit=200, epsabs=1e-15, epsrel=1e-12)
            value += piece
            left, right = right, 2.0 * right
        omega = 0.5 * abs(xs)
        if omega == 0.0:
            tail, _ = integrate.quad(amplitude, left, np.inf, args=("sin",), limit=200, epsabs=1e-15)
        else:                                           # sin(A - w u) = sin A cos(w u) - cos A sin(w u), w = xs / 2
            c, _ = integrate.quad(amplitude, left, np.inf, args=("sin",), weight="cos", wvar=omega, epsabs=1e-15)
            d, _ = integrate.quad(amplitude, left, np.inf, args=("cos",), weight="sin", wvar=omega, epsabs=1e-15)
            tail = c - math.copysign(1.0, xs) * d
        value += tail
    return min(1.0, max(0.0, 0.5 + value / math.pi))


def _lag1_weights(n: int) -> np.ndarray:
    """The eigenvalues cos(pi k/(n+1)), k = 1..n, of K (half the first off-diagonals): z^T K z = sum_i z_i z_i+1."""
    return np.cos(np.pi * np.arange(1, n + 1) / (n + 1))


@functools.lru_cache(maxsize=64)
def _lag1_critical(n: int, draws: int) -> float:
    """The critical value of the lag-1 sum: P(|T| > c) = LEVEL under the null (its law is symmetric)."""
    from scipy import optimize

    lam = _lag1_weights(n)
    sd = math.sqrt(draws * (n - 1))
    return float(optimize.brentq(lambda c: _quadform_sf(c, lam, draws) - LEVEL / 2, 0.0, 8 * sd, xtol=1e-9 * sd))


# ----------------------------------------------------------------------------------------------
# the battery


@dataclasses.dataclass(frozen=True)
class _Setup:
    """What the battery needs of the null covariance G: its Cholesky factor and the orthonormal projection
    directions (whitened) of the embedding's frequencies: ``zero`` (n,), ``nyquist`` (n,), ``pairs`` (n, n - 1, 2)."""

    L: np.ndarray
    Linv_T: np.ndarray
    zero: np.ndarray
    nyquist: np.ndarray
    pairs: np.ndarray


def _setup_of(G: np.ndarray, func: str = "the oracle's fgn judge") -> _Setup:
    key = (G.shape, hashlib.sha1(np.ascontiguousarray(G).tobytes()).hexdigest())
    return _setup_cached(key, G, func)


_SETUPS: dict = {}


def _setup_cached(key, G, func) -> _Setup:
    if key in _SETUPS:
        return _SETUPS[key]
    from scipy.linalg import solve_triangular

    n = G.shape[0]
    try:
        L = np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        raise ValueError(f"{func}: the covariance (n = {n}) is numerically singular (its Cholesky factorisation "
                         f"fails); use a smaller `n` or a `hurst` further from 1") from None
    i = np.arange(n)[:, None]
    j = np.arange(n + 1)[None, :]
    cos = np.cos(np.pi * ((i * j) % (2 * n)) / n)        # (n, n + 1): frequencies pi j/n, j = 0..n
    sin = np.sin(np.pi * ((i * j[:, 1:n]) % (2 * n)) / n)  # (n, n - 1): j = 1..n-1
    W = solve_triangular(L, np.concatenate([cos, sin], axis=1), lower=True)
    zero = W[:, 0] / np.linalg.norm(W[:, 0])
    nyq = W[:, n] / np.linalg.norm(W[:, n])
    a, b = W[:, 1:n], W[:, n + 1:]
    q1 = a / np.linalg.norm(a, axis=0)
    b = b - q1 * np.sum(q1 * b, axis=0)
    q2 = b / np.linalg.norm(b, axis=0)
    Linv_T = np.ascontiguousarray(solve_triangular(L, np.eye(n), lower=True).T)
    setup = _Setup(L, Linv_T, zero, nyq, np.stack([q1, q2], axis=-1))
    if len(_SETUPS) >= 16:
        _SETUPS.pop(next(iter(_SETUPS)))
    _SETUPS[key] = setup
    return setup


def _two_sided_chi2(x: float, dof: float) -> float:
    from scipy.stats import chi2

    return float(min(1.0, 2 * min(chi2.sf(x, dof), chi2.cdf(x, dof))))


def _ks_distance(sorted_cdf: np.ndarray) -> float:
    """sup |F_N - F| from the null CDF at the sorted sample."""
    N = sorted_cdf.size
    k = np.arange(1, N + 1)
    return float(max(np.max(k / N - sorted_cdf), np.max(sorted_cdf - (k - 1) / N)))


def _massart(D: float, N: int) -> float:
    return float(min(1.0, 2.0 * math.exp(-2.0 * N * D * D)))


def battery(Z: np.ndarray, setup: _Setup) -> dict:
    """The statistics of ``BATTERY`` on whitened draws Z (M x n): key -> (value, p-value, words).

    ``value`` is the statistic as a number (standardised for the variance and lag-1 statistics, a ratio to the null
    mean for the projections, the Kolmogorov distance for the two laws), ``p`` its p-value under the null (for the
    frequency family the Bonferroni-adjusted smallest one), ``words`` how the message shows it.
    """
    from scipy.special import ndtr
    from scipy.stats import chi2

    M, n = Z.shape
    out = {}
    ss = float(np.sum(Z * Z))
    A = (ss - M * n) / math.sqrt(2.0 * M * n)
    out["variance"] = (A, _two_sided_chi2(ss, M * n), f"{A:+.2f}")
    T = float(np.sum(Z[:, 1:] * Z[:, :-1]))
    B = T / math.sqrt(M * (n - 1))
    pB = min(1.0, 2.0 * _quadform_sf(abs(T), _lag1_weights(n), M))  # the null law is symmetric
    out["lag1"] = (B, pB, f"{B:+.2f}")
    for key, u in (("zero", setup.zero), ("nyquist", setup.nyquist)):
        s = float(np.sum((Z @ u) ** 2))
        out[key] = (s / M, _two_sided_chi2(s, M), f"ratio {s / M:.3f}")
    P = Z @ setup.pairs.reshape(n, -1)                    # (M, 2(n - 1)): the two coordinates of each plane
    energy = np.sum((P * P).reshape(M, n - 1, 2), axis=(0, 2))  # (n - 1,): chi^2(2M) each under the null
    p_each = 2 * np.minimum(chi2.sf(energy, 2 * M), chi2.cdf(energy, 2 * M))
    j = int(np.argmin(p_each))
    pF = float(min(1.0, (n - 1) * p_each[j]))
    out["frequencies"] = (energy[j] / (2 * M), pF, f"smallest p at pi {j + 1}/{n} (ratio {energy[j] / (2 * M):.3f})")
    D = _ks_distance(ndtr(np.sort(Z, axis=None)))
    out["marginal"] = (D, _massart(D, M * n), f"KS D = {D:.2g}")
    E = np.sort(np.sum(Z * Z, axis=1))
    DE = _ks_distance(chi2.cdf(E, n))
    out["energy"] = (DE, _massart(DE, M), f"KS D = {DE:.2g}")
    return out


def _judge_whitened(Z: np.ndarray, setup: _Setup, law: str):
    """The verdict of the battery on whitened draws: (verdict, |z| of the smallest p, smallest p, critical z, msg)."""
    from scipy.stats import norm

    stats = battery(Z, setup)
    parts = [f"{s.name} {stats[s.key][2]} (p = {stats[s.key][1]:.2g})" for s in BATTERY]
    rejected = [s for s in BATTERY if stats[s.key][1] < LEVEL]
    p = min(v[1] for v in stats.values())
    msg = "; ".join(parts) + f"; reject when a p < {LEVEL:.3g} ({ALPHA:g}/{len(BATTERY)}, Bonferroni)"
    if rejected:
        first = min(rejected, key=lambda s: stats[s.key][1])   # the most significant (the battery's order on ties)
        msg += (f": the draws do not have {law}'s law (rejected by the " + ", ".join(s.name for s in rejected)
                + f"; the {first.name} sees {first.sees})")
    z = float(norm.isf(max(p, 1e-300) / 2))
    return ("FAIL" if rejected else "pass"), z, p, float(norm.isf(LEVEL / 2)), msg


def _whiten(setup: _Setup, X: np.ndarray) -> np.ndarray:
    """Z = X L^-T (each draw whitened, Z_m = L^-1 X_m), one product with the triangular inverse."""
    return X @ setup.Linv_T


def _fgn_judge(inputs, ref, got):
    setup = _setup_of(np.asarray(ref[0], dtype=np.float64))
    return _judge_whitened(_whiten(setup, got), setup, f"fGn(H={inputs['hurst']})")


# ----------------------------------------------------------------------------------------------
# power under Gaussian alternatives (closed form)


def _alternative_weights(setup: _Setup, C: np.ndarray) -> dict:
    """The weights of each quadratic statistic of :data:`QUADRATIC` when the whitened draws are N(0, C): each
    statistic is then sum_k w_k chi^2_k(M) with independent chi-squares (the frequency family: one pair of weights
    per frequency). They do not depend on the number of draws M."""
    n = C.shape[0]
    C = (C + C.T) / 2
    w, V = np.linalg.eigh(C)
    R = V * np.sqrt(np.clip(w, 0.0, None))               # C = R R^T
    K = (np.eye(n, k=1) + np.eye(n, k=-1)) / 2
    U = setup.pairs
    CU = np.einsum("ik,kjl->ijl", C, U)
    planes = np.einsum("ijk,ijl->jkl", U, CU)            # (n - 1, 2, 2): U_j^T C U_j
    return {"variance": np.clip(w, 0.0, None), "lag1": np.linalg.eigvalsh(R.T @ K @ R),
            "zero": np.array([float(setup.zero @ C @ setup.zero)]),
            "nyquist": np.array([float(setup.nyquist @ C @ setup.nyquist)]),
            "frequencies": np.clip(np.linalg.eigvalsh(planes), 0.0, None)}


def _powers_at(weights: dict, n: int, draws: int, *, family: str = "all") -> dict:
    """The exact rejection probability of each quadratic statistic at M = ``draws`` (lower bounds where a tail is
    beyond Imhof's range): the frequency family as ``frequencies_each`` (the largest single frequency's) and, for
    ``family="all"``, ``frequencies`` (one of the n - 1 rejects, the frequencies taken as independent); with
    ``family="max"`` only the three frequencies farthest from the null (by their standardised mean) are integrated."""
    from scipy.special import chdtr, chdtri

    M = int(draws)
    out = {}
    lo, hi = chdtri(M * n, 1 - LEVEL / 2), chdtri(M * n, LEVEL / 2)
    out["variance"] = _quadform_sf(hi, weights["variance"], M, bound="lower") + 1.0 - _quadform_sf(
        lo, weights["variance"], M)
    c = _lag1_critical(n, M)
    out["lag1"] = _quadform_sf(c, weights["lag1"], M, bound="lower") + 1.0 - _quadform_sf(-c, weights["lag1"], M)
    lo1, hi1 = chdtri(M, 1 - LEVEL / 2), chdtri(M, LEVEL / 2)
    for key in ("zero", "nyquist"):
        v = float(weights[key][0])
        out[key] = float(1.0 - chdtr(M, hi1 / v) + chdtr(M, lo1 / v)) if v > 0 else 1.0
    each = LEVEL / (n - 1)
    lo2, hi2 = chdtri(2 * M, 1 - each / 2), chdtri(2 * M, each / 2)
    mu = weights["frequencies"]
    order = range(n - 1)
    if family == "max":
        score = np.abs(np.sum(mu, axis=1) - 2.0) / np.sqrt(np.sum(mu * mu, axis=1) + 1e-300)
        order = np.argsort(-score)[:3]
    powers = np.array([_quadform_sf(hi2, mu[j], M, bound="lower") + 1.0 - _quadform_sf(lo2, mu[j], M)
                       for j in order])
    powers = np.clip(powers, 0.0, 1.0)
    out["frequencies_each"] = float(powers.max())
    if family == "all":
        out["frequencies"] = float(1.0 - np.prod(1.0 - powers))
    return {k: float(min(1.0, max(0.0, v))) for k, v in out.items()}


def _lower_bound(per: dict) -> float:
    return max(per[k] for k in ("variance", "lag1", "zero", "nyquist", "frequencies_each"))


def stated_power(G: np.ndarray, G1: np.ndarray, draws: int) -> tuple[float, float, dict]:
    """The power of the battery for null covariance G against the Gaussian alternative of covariance G1.

    Returns ``(lower, independent, per)``: ``lower`` = the largest exact rejection probability of one quadratic
    statistic (a rigorous lower bound of the battery's power: the battery rejects when any statistic does),
    ``independent`` = 1 - prod(1 - p_i) over the quadratic statistics (the statistics taken as independent; the
    two Kolmogorov-Smirnov tests, which also see Gaussian alternatives, are left out), ``per`` each statistic's.
    """
    setup = _setup_of(G)
    Linv = setup.Linv_T.T
    per = _powers_at(_alternative_weights(setup, Linv @ G1 @ Linv.T), G.shape[0], draws)
    independent = 1.0 - math.prod(1.0 - per[k] for k in QUADRATIC)
    return float(_lower_bound(per)), float(independent), per


def draws_needed(G: np.ndarray, G1: np.ndarray, target: float = 0.99, *, most: int = 10**6) -> int | None:
    """The smallest number of draws M at which the stated lower bound of the power reaches ``target`` (bisection
    on M, the bound increasing with M), or None when even ``most`` draws do not reach it."""
    setup = _setup_of(G)
    Linv = setup.Linv_T.T
    n = G.shape[0]
    weights = _alternative_weights(setup, Linv @ G1 @ Linv.T)

    def ok(M):
        return _lower_bound(_powers_at(weights, n, M, family="max")) >= target

    if not ok(most):
        return None
    lo, hi = 1, 2
    while not ok(hi):
        lo, hi = hi, min(most, 2 * hi)
    while hi - lo > max(1, hi // 50):                     # to 2 %
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return int(hi)


#: the alternatives of :func:`fgn_power` and :func:`fbm_power`
FGN_ALTERNATIVES = ("H+0.05", "H-0.05", "white")
FBM_ALTERNATIVES = ("H+0.05", "H-0.05", "brownian", "unscaled")


def _check_power_args(n, hurst, draws, alternative, choices, func):
    """The arguments of the power functions, validated; the n x n covariances (a handful of them, the 2n
    projection directions, and a Cholesky factor, an inverse and eigendecompositions at about n^3 operations
    each) checked against the limits."""
    n = check_int(n, "n", func=func, minimum=2)
    hurst = check_interval(hurst, "hurst", 0.0, 1.0, func=func)
    draws = check_int(draws, "draws", func=func, minimum=1, maximum=2**53)
    alternative = check_choice(alternative, "alternative", choices, func=func)
    check_memory(8 * 12 * n * n, "n", n, func=func, hint="The power holds about twelve n x n matrices.")
    check_work(10 * n**3, "n", n, func=func, hint="A Cholesky factor, an inverse, eigendecompositions and products "
                                                  "of n x n matrices.")
    return n, hurst, draws, alternative


def _whitened_power(G, G1, draws, func):
    """The power of the battery's quadratic statistics for the null covariance G against the alternative G1
    (independence approximation, as :func:`stated_power`)."""
    try:
        _, independent, _ = stated_power(G, G1, draws)
    except ValueError:
        raise ValueError(f"`hurst` and `n` of {func} give a covariance that is numerically singular (its "
                         f"Cholesky factorisation fails); use a smaller `n` or a `hurst` further from 1.") from None
    return float(check_finite_output(np.float64(independent), "the power", func=func))


def fgn_power(n, hurst, draws, alternative):
    r"""Power of the oracle's fGn test (the ``fgn`` kernel) against ``alternative``.

    The draws are whitened by the exact covariance :math:`G` of fGn(H), so that under an alternative of
    covariance :math:`G_1` the whitened draws have covariance :math:`C=L^{-1}G_1L^{-\top}` (:math:`LL^\top=G`).
    Each quadratic statistic of the battery (``BATTERY``: variance, lag-1, the zero-frequency, Nyquist and
    interior-frequency projections) is then a weighted sum of independent :math:`\chi^2(M)` variables whose
    weights are eigenvalues of :math:`C` compressed by the statistic; its rejection probability at level
    ALPHA/7 is computed exactly (Imhof's integral). The power returned takes the statistics as independent,
    :math:`1-\prod_i(1-p_i)`; the two Kolmogorov-Smirnov statistics are left out (their power is not in closed
    form), so under the null (white noise at H = 1/2) it is 5/7 of ALPHA. A rigorous lower bound,
    :math:`\max_i p_i`, and the measured power of every defect class: :func:`theory.oracle.power_table`.

    Parameters
    ----------
    n : int >= 2
        Length of each draw.
    hurst : float in (0, 1)
        Hurst index H of the null.
    draws : int >= 1
        Number M of independent draws.
    alternative : {"H+0.05", "H-0.05", "white"}
        fGn with H shifted by +0.05 or -0.05 (clipped to [0.01, 0.99]), or white noise (i.i.d. N(0, 1)).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    TypeError
        ``n`` or ``draws`` not an integer, ``hurst`` not a real number, ``alternative`` not a string.
    ValueError
        ``n`` < 2, ``draws`` < 1, ``hurst`` outside (0, 1), ``alternative`` not one of the three names
        (any other string used to be taken for "H-0.05"); n above the memory or work limit.
    """
    func = "theory.oracle.fgn_power"
    n, hurst, draws, alternative = _check_power_args(n, hurst, draws, alternative, FGN_ALTERNATIVES, func)
    G = _fgn_cov(n, hurst)
    if alternative == "white":
        G1 = np.eye(n)
    else:
        G1 = _fgn_cov(n, min(0.99, max(0.01, hurst + (0.05 if alternative == "H+0.05" else -0.05))))
    return _whitened_power(G, G1, draws, func)


register(Kernel(
    name="fgn",
    module="theory.fbm",
    signature="fn(n, hurst, size, rng) -> draws   ((size, n) unit-variance fGn; rng a numpy Generator)",
    make_cases=_fgn_cases,
    reference=lambda n, hurst, size, seed: (_fgn_cov(n, hurst),),
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule=f"statistical: {_FGN_DRAWS} draws whitened by the exact covariance, {len(BATTERY)} statistics with exact "
         f"or conservative null laws at {ALPHA:g}/{len(BATTERY)} each; false alarms <= {ALPHA:.0%}",
    why=_battery_why(_FGN_DRAWS, _FGN_N),
    prepare=lambda inputs: {"n": int(inputs["n"]), "hurst": float(inputs["hurst"]), "size": int(inputs["size"]),
                            "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["size"]), int(inputs["n"])),
    judge=_fgn_judge,
    own=lambda n, hurst, size, rng: __import__("theory.fbm", fromlist=["fgn"]).fgn(n, hurst, size=size, rng=rng),
    arguments=(
        Argument("n", "scalar", "int", "the length of each draw"),
        Argument("hurst", "scalar", "float64", "the Hurst index H in (0, 1)"),
        Argument("size", "scalar", "int", "the number M of independent draws"),
        Argument("rng", "scalar", "numpy Generator", "the source of randomness: draw every random number from it"),
    ),
    returns=(Argument("draws", "(size, n)", "float64", "independent draws of unit-variance fGn(H): Cov(X_i, X_j) = "
                      "gamma_H(|i - j|), gamma_H(0) = 1"),),
    conventions=(
        Convention("the scale of the noise",
                   "unit-variance fGn: the increments B(j + 1) - B(j) of an fBm at unit step, Var X_j = 1 "
                   "(theory.fbm.fgn)",
                   "the increments of an fBm on [0, 1] (variance n^-2H: the fbm package's fgn(n, hurst) with its "
                   "default length=1), or the fBm path B(1), ..., B(n) itself",
                   "multiply increments on [0, 1] by n**hurst (the fbm package: pass length=n, "
                   "examples/oracle/fbm_fgn.py); difference a path, prepending B(0) = 0"),
        Convention("the random numbers",
                   "every draw from the Generator `rng` the oracle passes (a fixed seed per case)",
                   "libraries drawing from NumPy's global state (fbm, fracbm) or their own seed",
                   "seed the global state from rng: np.random.seed(int(rng.integers(2**32))), as "
                   "examples/oracle/fracbm_fgn.py does", parameter="rng"),
    ),
    parameters=(
        _HURST,
        Parameter("n", Int(low=2), _FGN_N, f"the length of each draw (built-in cases: {_FGN_N})"),
        _DRAWS,
        _SEED,
    ),
    generate=_fgn_generate,
))
