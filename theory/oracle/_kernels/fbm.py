"""Oracle kernels: fractional Brownian motion paths (theory.fbm.fbm), verified statistically like fgn."""

from __future__ import annotations

import numpy as np

from ..._validation import check_interval
from .._core import Case, Kernel, register
from .fgn import ALPHA, FBM_ALTERNATIVES, _FGN_DRAWS, _check_power_args, _fgn_judge, _whitened_power


def _fbm_cases():
    cases = []
    for hurst, length, seed in ((0.5, 1.0, 141), (0.3, 1.0, 142), (0.8, 1.0, 143), (0.8, 10.0, 145), (0.95, 1.0, 146)):
        n = 64
        cases.append(Case(f"fbm_H{hurst}_n{n}_T{length:g}", {"n": n, "hurst": hurst, "length": length,
                                                             "draws": _FGN_DRAWS, "seed": seed},
                          {"n": n, "hurst": hurst, "length": length, "size": _FGN_DRAWS, "seed": seed}))
    return cases


def _fbm_cov(n, hurst, length):
    t = np.arange(1, n + 1) * (length / n)
    h2 = 2.0 * hurst
    return 0.5 * (t[:, None] ** h2 + t[None, :] ** h2 - np.abs(t[:, None] - t[None, :]) ** h2)


def fbm_power(n, hurst, length, draws, alternative):
    r"""Power of the oracle's fBm-path test (the ``fbm`` kernel) against ``alternative``.

    As :func:`fgn_power`, with :math:`G` the covariance :math:`\frac12(t_i^{2H}+t_j^{2H}-|t_i-t_j|^{2H})`
    of fBm at the times :math:`t_i=i\,\mathrm{length}/n`, i = 1..n (the path's value at 0 is tested apart).

    Parameters
    ----------
    n : int >= 2
        Number of steps of each path.
    hurst : float in (0, 1)
        Hurst index H of the null.
    length : float > 0
        The paths' time horizon.
    draws : int >= 1
        Number M of independent paths.
    alternative : {"H+0.05", "H-0.05", "brownian", "unscaled"}
        fBm with H shifted by +0.05 or -0.05 (clipped to [0.01, 0.99]), Brownian motion (H = 1/2), or
        increments of unit variance (a path on [0, n] instead of [0, length]).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    TypeError
        ``n`` or ``draws`` not an integer, ``hurst`` or ``length`` not a real number, ``alternative``
        not a string.
    ValueError
        ``n`` < 2, ``draws`` < 1, ``hurst`` outside (0, 1), ``length`` not positive and finite,
        ``alternative`` not one of the four names (any other string used to be taken for "H-0.05");
        n above the memory or work limit.
    """
    func = "theory.oracle.fbm_power"
    n, hurst, draws, alternative = _check_power_args(n, hurst, draws, alternative, FBM_ALTERNATIVES, func)
    length = check_interval(length, "length", 0.0, np.inf, func=func)
    G = _fbm_cov(n, hurst, length)
    if alternative == "brownian":
        G1 = _fbm_cov(n, 0.5, length)
    elif alternative == "unscaled":
        G1 = _fbm_cov(n, hurst, float(n))
    else:
        G1 = _fbm_cov(n, min(0.99, max(0.01, hurst + (0.05 if alternative == "H+0.05" else -0.05))), length)
    return _whitened_power(G, G1, draws, func)


def _fbm_judge(inputs, ref, got):
    if not np.all(got[:, 0] == 0.0):
        bad = float(got[np.flatnonzero(got[:, 0] != 0.0)[0], 0])
        return "FAIL", np.inf, 0.0, np.inf, f"a path starts at {bad!r}, not at B(0) = 0"
    verdict, stat, p, crit, msg = _fgn_judge(inputs, ref, got[:, 1:])
    return verdict, stat, p, crit, msg.replace("fGn(", "fBm(")


register(Kernel(
    name="fbm",
    module="theory.fbm",
    signature="fn(n, hurst, size, length, rng) -> paths   ((size, n + 1) fBm at times 0, length/n, ..., length; "
              "rng a numpy Generator)",
    outputs=("paths",),
    make_cases=_fbm_cases,
    reference=lambda n, hurst, length, size, seed: (_fbm_cov(n, hurst, length),),
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule=f"statistical: B(0) = 0 exactly, and {_FGN_DRAWS} paths whitened by the exact covariance; false alarms "
         f"<= {ALPHA:.0%}",
    why="B(t_1..t_n) at t_j = j length/n is centred Gaussian with covariance (t_i^2H + t_j^2H - |t_i - t_j|^2H)/2; "
        "the paths are whitened by its Cholesky factor and go through the fgn test (exact chi-square variance "
        "test and lag-1 test, each two-sided at 0.005). Power (M = 1000, n = 64), stated by "
        "`theory.oracle.fbm_power`: >= 0.99 against H + 0.05, H - 0.05, unscaled increments (a path on [0, n]), and "
        "Brownian motion in place of fBm (H != 1/2)",
    prepare=lambda inputs: {"n": int(inputs["n"]), "hurst": float(inputs["hurst"]), "size": int(inputs["size"]),
                            "length": float(inputs["length"]), "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["size"]), int(inputs["n"]) + 1),
    judge=_fbm_judge,
    own=lambda n, hurst, size, length, rng: __import__("theory.fbm", fromlist=["fbm"]).fbm(n, hurst, size=size,
                                                                                          length=length, rng=rng),
))
