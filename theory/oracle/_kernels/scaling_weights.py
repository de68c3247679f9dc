"""Oracle kernels: the scaling weight laws (theory.scaling.weights), verified statistically like fgn."""

from __future__ import annotations

import numpy as np

from ...experiments.config import Choice, Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from .fgn import _SEED, ALPHA, _fgn_cov


#: smooth law: eigen-directions of the RBF Gram matrix kept for whitening (eigenvalue above this times the largest)
_SMOOTH_KEEP = 1e-6
#: smooth law: the sampler's covariance may differ from the RBF kernel by this much per entry (its pivoted Cholesky)
_SMOOTH_ENTRY_TOL = 1e-12


#: the built-in cases: (law, hurst) -> the seed of their weights, at L = 64 layers of d x d = 32 x 32
_WEIGHT_SEEDS = {("gaussian", None): 81, ("fbm", 0.3): 82, ("fbm", 0.5): 83, ("fbm", 0.9): 84, ("uniform", None): 85,
                 ("rademacher", None): 86, ("smooth", None): 87}
_WEIGHT_L, _WEIGHT_D = 64, 32  # d^2 = 1024 independent entry sequences of length L
_LAWS = ("gaussian", "uniform", "rademacher", "smooth", "fbm")
#: the law and Hurst index of a case generated at the user's other parameters only
_DEFAULT_LAW, _DEFAULT_HURST = "fbm", 0.75


def _weights_case(law: str, hurst, L: int, d: int, seed: int | None = None) -> Case:
    """The case {law}[_H{hurst}]_L{L}_d{d} (hurst only for the fbm law; _s{seed} for an explicit seed); the built-in
    seed at the built-in (law, hurst, L, d), a fixed derived one otherwise."""
    from .fgn import _case_seed

    hurst = float(hurst) if law == "fbm" else None
    name = f"{law}" + ("" if hurst is None else f"_H{hurst!r}") + f"_L{L}_d{d}"
    if seed is None:
        builtin = (L, d) == (_WEIGHT_L, _WEIGHT_D) and (law, hurst) in _WEIGHT_SEEDS
        seed = _WEIGHT_SEEDS[(law, hurst)] if builtin else _case_seed("scaling_weights", (law, hurst, L, d))
    else:
        name += f"_s{seed}"
    inputs = {"L": L, "d": d, "law": law, "hurst": 0.5 if hurst is None else hurst, "seed": seed}
    return Case(name, {"L": L, "d": d, "law": law, "hurst": hurst, "seed": seed}, inputs)


def _weights_cases():
    return [_weights_case(law, 0.5 if hurst is None else hurst, _WEIGHT_L, _WEIGHT_D) for law, hurst in _WEIGHT_SEEDS]


def _weights_generate(law, hurst, L, d, seed=None):
    """The case at one value of each parameter (``--param law=fbm --param hurst=0.3,0.7 --param L=1000``); the
    judge holds the d^2 sequences of length L three times and an L x L covariance (factor or eigenvectors)."""
    from ..._validation import check_memory, check_work

    func = "the oracle's scaling_weights cases"
    name, value = ("L", L) if L >= d * d else ("d", d)
    check_memory(8 * (4 * L * d * d + 4 * L * L), name, value, func=func,
                 hint=f"A case holds about four arrays of L d^2 = {L * d * d} floats and a few L x L matrices.")
    check_work(2.0 * L * L * d * d + 4.0 * L**3, name, value, func=func,
               hint="The judge whitens the d^2 sequences of length L.")
    return [_weights_case(law, hurst, L, d, seed)]


def _rbf_gram(L):
    from theory.scaling import SMOOTH_LENGTHSCALE

    s = np.arange(1, L + 1) / L
    z = (s[:, None] - s[None, :]) / SMOOTH_LENGTHSCALE
    return np.exp(-0.5 * z * z)


def _weights_reference(L, d, law, hurst, seed):
    if law == "smooth":
        return (_rbf_gram(L),)
    return (_fgn_cov(L, hurst if law == "fbm" else 0.5),)


def _variance_lag1(Z):
    """p-values of the exact chi-square variance test and the lag-1 test on whitened draws Z (M, n)."""
    from scipy.stats import chi2, norm

    M, n = Z.shape
    ss = float(np.sum(Z * Z))
    pA = 2 * min(chi2.sf(ss, M * n), chi2.cdf(ss, M * n))
    A = (ss - M * n) / np.sqrt(2 * M * n)
    if n < 2:
        return A, pA, 0.0, 1.0
    B = float(np.sum(Z[:, 1:] * Z[:, :-1])) / np.sqrt(M * (n - 1))
    return A, pA, B, float(2 * norm.sf(abs(B)))


def _weights_judge(inputs, ref, got):
    """Three tests, each at ALPHA/3 (false alarms <= ALPHA): the variance and lag-1 statistics of the entry sequences
    whitened by the law's covariance across layers, and the marginal law (Kolmogorov-Smirnov for the continuous
    laws, the support {-1, +1} and a binomial test of the signs for Rademacher). The smooth law's Gram matrix is
    numerically singular: its sequences are whitened on the eigen-directions above 1e-6 of the largest, and the
    energy in the others must stay below 1.5 times its expectation (plus the sampler's allowed 1e-12 per entry)."""
    from scipy.stats import binomtest, kstest, uniform as unif

    L, d, law = int(inputs["L"]), int(inputs["d"]), str(inputs["law"])
    X = np.sqrt(d) * got.reshape(L, d * d).T  # (d^2, L): each entry's sequence across layers
    M = X.shape[0]
    G = ref[0]
    level = ALPHA / 3
    notes = []
    if law == "smooth":
        lam, U = np.linalg.eigh(G)
        keep = lam > _SMOOTH_KEEP * lam[-1]
        Y = X @ U
        Z = Y[:, keep] / np.sqrt(lam[keep])
        energy = float(np.sum(Y[:, ~keep] ** 2))
        allowed = 1.5 * M * float(np.sum(np.clip(lam[~keep], 0, None))) + M * L * L * _SMOOTH_ENTRY_TOL
        if not energy <= allowed:
            return ("FAIL", np.inf, 0.0, np.inf,
                    f"energy {energy:.3g} outside the RBF kernel's numerical range (allowed {allowed:.3g}): the "
                    f"sequences are not smooth across layers")
    else:
        from scipy.linalg import solve_triangular

        Z = solve_triangular(np.linalg.cholesky(G), X.T, lower=True).T
    A, pA, B, pB = _variance_lag1(Z)
    if law == "rademacher":
        if not np.all(np.abs(np.abs(X) - 1.0) <= 1e-12):
            bad = float(X.ravel()[np.argmax(np.abs(np.abs(X.ravel()) - 1.0))])
            return "FAIL", np.inf, 0.0, np.inf, f"an entry of sqrt(d) V is {bad:.6g}, not +-1"
        pC = binomtest(int(np.sum(X > 0)), X.size, 0.5).pvalue
        notes.append(f"signs: {int(np.sum(X > 0))} of {X.size} positive (p = {pC:.2g})")
    elif law == "uniform":
        pC = kstest(X.ravel(), unif(loc=-np.sqrt(3.0), scale=2 * np.sqrt(3.0)).cdf).pvalue
        notes.append(f"KS against U(-sqrt 3, sqrt 3): p = {pC:.2g}")
    else:
        pC = kstest(Z.ravel(), "norm").pvalue
        notes.append(f"KS of the whitened draws against N(0, 1): p = {pC:.2g}")
    p = min(pA, pB, pC)
    from scipy.stats import norm

    crit = float(norm.isf(level / 2))
    verdict = "pass" if p >= level else "FAIL"
    msg = (f"variance statistic {A:+.2f} (p = {pA:.2g}), lag-1 statistic {B:+.2f} (p = {pB:.2g}), {notes[0]}; "
           f"reject when a p < {level:.3g}")
    if verdict == "FAIL":
        msg += f": the draws do not follow the {law} law"
    return verdict, max(abs(A), abs(B)), p, crit, msg


def _weights_own(L, d, law, hurst, rng):
    from theory.scaling import weights

    return weights(L, d, law, hurst if law == "fbm" else None, rng)


register(Kernel(
    name="scaling_weights",
    module="theory.scaling",
    signature="fn(L, d, law, hurst, rng) -> V   ((L, d, d); law 'gaussian', 'uniform', 'rademacher', 'smooth' (RBF, "
              "length-scale 0.1, V_k at s = k/L) or 'fbm' (hurst given as 0.5 for the other laws, ignore it))",
    make_cases=_weights_cases,
    reference=_weights_reference,
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule="statistical: the d^2 = 1024 entry sequences of sqrt(d) V across layers, whitened by the law's covariance, "
         "plus the marginal law; false alarms <= 1%",
    why="each entry sequence of sqrt(d) V has unit variance and the law's covariance across layers: I for the "
        "i.i.d. laws, fGn(H)'s Toeplitz matrix for fbm, the RBF Gram matrix exp(-(s-s')^2/(2 0.1^2)) at s = k/L for "
        "smooth; the d^2 sequences are independent. Three tests at 1/300 each (Bonferroni): the exact chi-square "
        "variance test and the lag-1 test of the whitened sequences, and the marginal law (KS against N(0, 1) of "
        "the whitened draws, KS against U(-sqrt 3, sqrt 3) for uniform, support +-1 and a binomial sign test for "
        "Rademacher). The smooth law is whitened on the Gram matrix's eigen-directions above 1e-6 of its largest "
        "eigenvalue; the energy in the others must stay below 1.5 times its expectation (exceeded with probability "
        "below 1e-20 for 1024 sequences). Power: against i.i.d. N(0, 1) in place of fbm(H = 0.3 or 0.9) or of the "
        "smooth law, against N(0, 1) in place of uniform (Kolmogorov distance 0.03, 4 times the test's critical "
        "0.007 at 65536 entries) and against any continuous law in place of Rademacher, it is above 0.99",
    prepare=lambda inputs: {"L": int(inputs["L"]), "d": int(inputs["d"]), "law": str(inputs["law"]),
                            "hurst": float(inputs["hurst"]), "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["L"]), int(inputs["d"]), int(inputs["d"])),
    judge=_weights_judge,
    own=_weights_own,
    arguments=(
        Argument("L", "scalar", "int", "the number of layers: V_1, ..., V_L"),
        Argument("d", "scalar", "int", "the width: each V_k is d x d"),
        Argument("law", "scalar", "str", "'gaussian', 'uniform', 'rademacher', 'smooth' or 'fbm'"),
        Argument("hurst", "scalar", "float64", "the Hurst index of the fbm law (given as 0.5 for the other laws: "
                 "ignore it)"),
        Argument("rng", "scalar", "numpy Generator", "the source of randomness: draw every random number from it"),
    ),
    returns=(Argument("V", "(L, d, d)", "float64", "the weights; each entry of sqrt(d) V has unit variance, the d^2 "
                      "entry sequences across layers independent"),),
    conventions=(
        Convention("the scale of the fbm law",
                   "unit-variance fGn across layers: sqrt(d) V_k[i, j], k = 1..L, is fGn(H) of variance 1, whatever L "
                   "(scaling Section 4.1, the scale kept in alpha_L)",
                   "the increments of an fBm on [0, 1], B(k/L) - B((k-1)/L), have variance L^-2H (theory.fbm.fbm's "
                   "paths differenced, or the fbm package's fgn(n, hurst, length=1))",
                   "multiply increments of fBm on [0, 1] by L**hurst (and divide by sqrt(d) for the d x d layer)"),
    ),
    parameters=(
        Parameter("law", Choice(*_LAWS), _DEFAULT_LAW, "the weight law (built-in cases: every law, fbm at H = 0.3, "
                  "0.5, 0.9)"),
        Parameter("hurst", Real(0.0, 1.0, closed="neither"), _DEFAULT_HURST,
                  "the Hurst index of the fbm law (ignored by the other laws)"),
        Parameter("L", Int(low=1), _WEIGHT_L, f"the number of layers (built-in cases: {_WEIGHT_L})"),
        Parameter("d", Int(low=1), _WEIGHT_D, f"the width: d^2 independent entry sequences (built-in cases: "
                  f"{_WEIGHT_D})"),
        _SEED,
    ),
    generate=_weights_generate,
))
