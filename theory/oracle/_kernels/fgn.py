"""Oracle kernels: random samplers, verified statistically: fractional Gaussian noise (theory.fbm.fgn)."""

from __future__ import annotations

import numpy as np

from ..._validation import check_choice, check_finite_output, check_int, check_interval, check_memory, check_work
from .._core import Case, Kernel, register


#: false-alarm rate of a statistical case: two statistics, each two-sided at ALPHA/2 (Bonferroni)
ALPHA = 0.01
_FGN_DRAWS = 1000


def _fgn_cases():
    cases = []
    for hurst, seed in ((0.5, 51), (0.2, 52), (0.75, 53), (0.95, 54)):
        n = 64
        cases.append(Case(f"fgn_H{hurst}_n{n}", {"n": n, "hurst": hurst, "draws": _FGN_DRAWS, "seed": seed},
                          {"n": n, "hurst": hurst, "size": _FGN_DRAWS, "seed": seed}))
    return cases


def _fgn_cov(n, hurst):
    from scipy.linalg import toeplitz

    from theory.fbm import autocovariance

    return toeplitz(autocovariance(np.arange(n), hurst))


def _fgn_statistics_moments(C, draws):
    """Mean and standard deviation of the two standardized statistics when the whitened draws have covariance C
    (C = I under the null): A = (sum z^2 - M n)/sqrt(2 M n), B = sum_m z_m^T K z_m / sqrt(M (n - 1))."""
    n = C.shape[0]
    K = (np.eye(n, k=1) + np.eye(n, k=-1)) / 2
    KC = K @ C
    meanA = draws * (np.trace(C) - n) / np.sqrt(2 * draws * n)
    sdA = np.sqrt(2 * draws * np.sum(C * C.T) / (2 * draws * n))
    meanB = draws * np.trace(KC) / np.sqrt(draws * (n - 1))
    sdB = np.sqrt(draws * 2 * np.sum(KC * KC.T) / (draws * (n - 1)))
    return (meanA, sdA), (meanB, sdB)


def _power(moments, crit):
    from scipy.stats import norm

    p = 1.0
    for mean, sd in moments:
        p *= norm.cdf(crit, mean, sd) - norm.cdf(-crit, mean, sd)  # accept both (independence approximation)
    return 1.0 - p


#: the alternatives of :func:`fgn_power` and :func:`fbm_power`
FGN_ALTERNATIVES = ("H+0.05", "H-0.05", "white")
FBM_ALTERNATIVES = ("H+0.05", "H-0.05", "brownian", "unscaled")


def _check_power_args(n, hurst, draws, alternative, choices, func):
    """The arguments of the power functions, validated; the n x n covariances (a handful of them, and
    a Cholesky factor and an inverse at about n^3 operations each) checked against the limits."""
    n = check_int(n, "n", func=func, minimum=2)
    hurst = check_interval(hurst, "hurst", 0.0, 1.0, func=func)
    draws = check_int(draws, "draws", func=func, minimum=1, maximum=2**53)
    alternative = check_choice(alternative, "alternative", choices, func=func)
    check_memory(8 * 8 * n * n, "n", n, func=func, hint="The test holds about eight n x n covariance matrices.")
    check_work(4 * n**3, "n", n, func=func, hint="A Cholesky factor, an inverse and two products of n x n matrices.")
    return n, hurst, draws, alternative


def _whitened_power(G, G1, draws, func):
    """The power of the two statistics for the null covariance G against the alternative G1."""
    from scipy.stats import norm

    try:
        Linv = np.linalg.inv(np.linalg.cholesky(G))
    except np.linalg.LinAlgError:
        raise ValueError(f"`hurst` and `n` of {func} give a covariance that is numerically singular (its "
                         f"Cholesky factorisation fails); use a smaller `n` or a `hurst` further from 1.") from None
    power = _power(_fgn_statistics_moments(Linv @ G1 @ Linv.T, draws), norm.isf(ALPHA / 4))
    return float(check_finite_output(np.float64(power), "the power", func=func))


def fgn_power(n, hurst, draws, alternative):
    r"""Power of the oracle's fGn test (the ``fgn`` kernel) against ``alternative``.

    The draws are whitened by the exact covariance :math:`G` of fGn(H), so that under an alternative of
    covariance :math:`G_1` the whitened draws have covariance :math:`C=L^{-1}G_1L^{-\top}` (:math:`LL^\top=G`).
    The variance statistic :math:`A=(\sum z^2-Mn)/\sqrt{2Mn}` and the lag-1 statistic
    :math:`B=\sum_mz_m^\top Kz_m/\sqrt{M(n-1)}` (:math:`K` half the first off-diagonals) are taken as
    independent normals with the means and variances they have under :math:`C`; the power is the
    probability that one of them leaves :math:`\pm z_{1-\alpha/4}` (:data:`ALPHA` = 0.01).

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


def _fgn_judge(inputs, ref, got):
    from scipy.linalg import solve_triangular
    from scipy.stats import chi2, norm

    G = ref[0]
    n, M = G.shape[0], got.shape[0]
    L = np.linalg.cholesky(G)
    Z = solve_triangular(L, got.T, lower=True).T          # whitened draws: i.i.d. N(0, 1) under the null
    ss = float(np.sum(Z * Z))
    pA = 2 * min(chi2.sf(ss, M * n), chi2.cdf(ss, M * n))  # exact: sum z^2 ~ chi^2(M n)
    u = np.sum(Z[:, 1:] * Z[:, :-1], axis=1)               # lag-1 products; var(sum) = M (n - 1) exactly
    B = float(np.sum(u)) / np.sqrt(M * (n - 1))
    pB = 2 * norm.sf(abs(B))
    p = min(pA, pB)
    A = (ss - M * n) / np.sqrt(2 * M * n)
    crit = float(norm.isf(ALPHA / 4))
    verdict = "pass" if p >= ALPHA / 2 else "FAIL"
    msg = (f"variance statistic {A:+.2f} (p = {pA:.2g}), lag-1 statistic {B:+.2f} (p = {pB:.2g}); "
           f"reject when either p < {ALPHA / 2:g}")
    if verdict == "FAIL":
        msg += f": the draws do not have fGn(H={inputs['hurst']})'s covariance"
    return verdict, max(abs(A), abs(B)), p, crit, msg


register(Kernel(
    name="fgn",
    module="theory.fbm",
    signature="fn(n, hurst, size, rng) -> draws   ((size, n) unit-variance fGn; rng a numpy Generator)",
    outputs=("draws",),
    make_cases=_fgn_cases,
    reference=lambda n, hurst, size, seed: (_fgn_cov(n, hurst),),
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule=f"statistical: {_FGN_DRAWS} draws whitened by the exact covariance; false alarms <= {ALPHA:.0%}",
    why=f"draws X (M x n) are whitened, Z = L^-1 X with L L^T the exact Toeplitz covariance of fGn(H); under the "
        f"null Z is i.i.d. N(0, 1), so sum Z^2 ~ chi^2(M n) exactly (the variance test) and the lag-1 sum "
        f"sum_m sum_i Z_mi Z_m,i+1 has mean 0 and variance M (n - 1) (normal by the CLT over M draws). Each test is "
        f"two-sided at {ALPHA / 2:g}: false-alarm rate <= {ALPHA:g}. Power (M = {_FGN_DRAWS}, n = 64): against white "
        f"noise in place of fGn and against H shifted by 0.05 it is stated per case by `theory.oracle.fgn_power` "
        f"(>= 0.99 for every case here against H + 0.05 and H - 0.05, and against white noise except at H = 0.5, "
        f"where white noise is fGn)",
    prepare=lambda inputs: {"n": int(inputs["n"]), "hurst": float(inputs["hurst"]), "size": int(inputs["size"]),
                            "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["size"]), int(inputs["n"])),
    judge=_fgn_judge,
    own=lambda n, hurst, size, rng: __import__("theory.fbm", fromlist=["fgn"]).fgn(n, hurst, size=size, rng=rng),
))
