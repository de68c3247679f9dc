"""Oracle kernels: fractional Brownian motion paths (theory.fbm.fbm), verified statistically like fgn.

A path B(t_0..t_n) at t_j = j length/n has B(0) = 0 and increments Delta^H X with X unit-variance fGn(H) and
Delta = length/n. The Cholesky factor of the path's covariance is Delta^H S L (S the lower-triangular matrix of ones,
L L^T fGn's covariance), so whitening the path by it is whitening the increments Delta^-H (B(t_j+1) - B(t_j)) by
fGn's factor: the paths go through the battery of the ``fgn`` kernel (:data:`theory.oracle._kernels.fgn.BATTERY`).
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_interval
from ...experiments.config import Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from .fgn import (ALPHA, BATTERY, FBM_ALTERNATIVES, LEVEL, _DRAWS, _FGN_DRAWS, _FGN_N, _SEED, _battery_why,
                  _case_seed, _check_power_args, _check_sampler_size, _fgn_cov, _hurst_parameter, _judge_whitened,
                  _setup_of, _whiten, _whitened_power)

#: the built-in cases: (hurst, length) -> the seed of their paths
_FBM_SEEDS = {(0.5, 1.0): 141, (0.3, 1.0): 142, (0.8, 1.0): 143, (0.8, 10.0): 145, (0.95, 1.0): 146}
#: the horizon of a case generated at the user's other parameters only
_FBM_DEFAULT_LENGTH = 1.0


def _fbm_case(hurst: float, n: int, length: float, draws: int, seed: int | None = None) -> Case:
    """The case fbm_H{hurst}_n{n}_T{length} (with _M{draws}, _s{seed} as fgn's); the built-in seed at the built-in
    values, a fixed derived one otherwise."""
    tag = f"{length:g}" if float(f"{length:g}") == length else repr(length)
    name = f"fbm_H{hurst!r}_n{n}_T{tag}" + (f"_M{draws}" if draws != _FGN_DRAWS else "")
    if seed is None:
        builtin = n == _FGN_N and draws == _FGN_DRAWS and (hurst, length) in _FBM_SEEDS
        seed = _FBM_SEEDS[(hurst, length)] if builtin else _case_seed("fbm", (hurst, n, length, draws))
    else:
        name += f"_s{seed}"
    return Case(name, {"n": n, "hurst": hurst, "length": length, "draws": draws, "seed": seed},
                {"n": n, "hurst": hurst, "length": length, "size": draws, "seed": seed})


def _fbm_cases():
    return [_fbm_case(hurst, _FGN_N, length, _FGN_DRAWS) for hurst, length in _FBM_SEEDS]


def _fbm_generate(hurst, n, length, draws, seed=None):
    """The case at one value of each parameter (``--param hurst=0.3,0.7 --param n=1000``)."""
    _check_sampler_size(n, draws, "the oracle's fbm cases")
    return [_fbm_case(hurst, n, length, draws, seed)]


def _fbm_cov(n, hurst, length):
    t = np.arange(1, n + 1) * (length / n)
    h2 = 2.0 * hurst
    return 0.5 * (t[:, None] ** h2 + t[None, :] ** h2 - np.abs(t[:, None] - t[None, :]) ** h2)


def _increments_cov(G_path: np.ndarray, hurst: float, length: float) -> np.ndarray:
    """The covariance of the standardised increments Delta^-H (B(t_j+1) - B(t_j)) of paths of covariance G_path."""
    n = G_path.shape[0]
    D = np.eye(n) - np.eye(n, k=-1)                      # B(t_1..t_n) -> increments, B(0) = 0
    return (D @ G_path @ D.T) / (length / n) ** (2.0 * hurst)


def fbm_power(n, hurst, length, draws, alternative):
    r"""Power of the oracle's fBm-path test (the ``fbm`` kernel) against ``alternative``.

    As :func:`fgn_power`, the paths' increments standardised by :math:`\Delta^{-H}` (:math:`\Delta` =
    length/n) and whitened by fGn's covariance, which is whitening the path by the Cholesky factor of its covariance
    :math:`\frac12(t_i^{2H}+t_j^{2H}-|t_i-t_j|^{2H})` at :math:`t_i=i\,\mathrm{length}/n`, i = 1..n (the
    path's value at 0 is tested apart).

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
        The power, in [0, 1] (the quadratic statistics taken as independent, as :func:`fgn_power`).

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
    G = _fgn_cov(n, hurst)
    if alternative == "brownian":
        G1 = _increments_cov(_fbm_cov(n, 0.5, length), hurst, length)
    elif alternative == "unscaled":
        G1 = G / (length / n) ** (2.0 * hurst)
    else:
        h1 = min(0.99, max(0.01, hurst + (0.05 if alternative == "H+0.05" else -0.05)))
        G1 = _fgn_cov(n, h1) * (length / n) ** (2.0 * (h1 - hurst))
    return _whitened_power(G, G1, draws, func)


def _fbm_judge(inputs, ref, got):
    if not np.all(got[:, 0] == 0.0):
        bad = float(got[np.flatnonzero(got[:, 0] != 0.0)[0], 0])
        return "FAIL", np.inf, 0.0, np.inf, f"a path starts at {bad!r}, not at B(0) = 0"
    n, hurst, length = int(inputs["n"]), float(inputs["hurst"]), float(inputs["length"])
    setup = _setup_of(_fgn_cov(n, hurst), "the oracle's fbm judge")
    increments = np.diff(got, axis=1) / (length / n) ** hurst
    return _judge_whitened(_whiten(setup, increments), setup, f"fBm(H={hurst}) on [0, {length:g}]")


register(Kernel(
    name="fbm",
    module="theory.fbm",
    signature="fn(n, hurst, size, length, rng) -> paths   ((size, n + 1) fBm at times 0, length/n, ..., length; "
              "rng a numpy Generator)",
    make_cases=_fbm_cases,
    reference=lambda n, hurst, length, size, seed: (_fbm_cov(n, hurst, length),),
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule=f"statistical: B(0) = 0 exactly, and {_FGN_DRAWS} paths whitened by the exact covariance, the {len(BATTERY)} "
         f"statistics of fgn at {ALPHA:g}/{len(BATTERY)} each; false alarms <= {ALPHA:.0%}",
    why="B(t_1..t_n) at t_j = j length/n is centred Gaussian with covariance (t_i^2H + t_j^2H - |t_i - t_j|^2H)/2 "
        "(the reference); its Cholesky factor is Delta^H S L (Delta = length/n, S the lower-triangular ones, L L^T "
        "fGn's Toeplitz covariance), so the paths are whitened as Z = L^-1 Delta^-H (increments), and B(0) = 0 is "
        f"checked exactly. Then the fgn battery ({LEVEL:.3g} per statistic): " + _battery_why(_FGN_DRAWS, _FGN_N),
    prepare=lambda inputs: {"n": int(inputs["n"]), "hurst": float(inputs["hurst"]), "size": int(inputs["size"]),
                            "length": float(inputs["length"]), "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["size"]), int(inputs["n"]) + 1),
    judge=_fbm_judge,
    own=lambda n, hurst, size, length, rng: __import__("theory.fbm", fromlist=["fbm"]).fbm(n, hurst, size=size,
                                                                                          length=length, rng=rng),
    arguments=(
        Argument("n", "scalar", "int", "the number of steps of each path"),
        Argument("hurst", "scalar", "float64", "the Hurst index H in (0, 1)"),
        Argument("size", "scalar", "int", "the number M of independent paths"),
        Argument("length", "scalar", "float64", "the horizon: the paths live on [0, length]"),
        Argument("rng", "scalar", "numpy Generator", "the source of randomness: draw every random number from it"),
    ),
    returns=(Argument("paths", "(size, n + 1)", "float64", "B(0) = 0 exactly, then B at length/n, ..., length: "
                      "Var B(t) = t^2H"),),
    conventions=(
        Convention("the path's points and horizon",
                   "n + 1 values B(0) = 0, B(length/n), ..., B(length) of a standard fBm, Var B(t) = t^2H",
                   "n values without B(0); unit-variance increments summed without the step (length/n)^H (a path on "
                   "[0, n]); the increments returned instead of the path",
                   "prepend the 0; scale a path on [0, n] by (length/n)**hurst; cumulate increments"),
    ),
    parameters=(
        _hurst_parameter(sorted({h for h, _ in _FBM_SEEDS})),
        Parameter("n", Int(low=2), _FGN_N, f"the number of steps of each path (built-in cases: {_FGN_N})"),
        Parameter("length", Real(0.0, float("inf"), closed="neither"), _FBM_DEFAULT_LENGTH,
                  "the horizon of the paths (built-in cases: 1, and 10 at H = 0.8)"),
        _DRAWS,
        _SEED,
    ),
    generate=_fbm_generate,
))
