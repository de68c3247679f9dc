"""Experiments of the ``momentum`` paper key: Momentum ResNets, Sander's thesis, chapter 4.

Registered as ``"momentum.<name>"``:

* ``momentum.inversion`` (``momentum/eq-4.3``): the inverse (4.3) reconstructs the forward pass (4.2)
  to round-off, for the residual families of :mod:`theory.resnet`.
* ``momentum.psi`` (``momentum/prop-4.3``): Psi_eps of Prop. 4.3 agrees with its series and is the
  limit, at rate 1/N, of depth-N Momentum ResNets with gamma = 1 - 1/(N eps) and residual theta x / N.
* ``momentum.representable`` (``momentum/thm-4.4``): maps built independently of the library's criterion, from
  the proof of Thm 4.4 (f_eps of real matrices assembled block by block, random f_eps(X), and maps with a single
  eigenvalue below lambda_eps), classified by the theorem and by :func:`theory.momentum.representable`.
* ``momentum.memory`` (``momentum/sec-4.3.2``): the peak memory of memory-free backpropagation is flat
  in the depth N, while storing the activations grows linearly; both give the same gradients.
* ``momentum.prop42`` (``momentum/prop-4.2``): a solution of x' = f(x) also solves
  eps x'' + x' = f_hat(x) = eps J_f(x) f(x) + f(x) from (x_0, f(x_0)).
* ``momentum.lambda_range`` (``momentum/thm-4.4/lambda``): the minimum of the scalar Psi_eps over the real
  line, found by scanning theta with the block exponential, is lambda_eps.
* ``momentum.prop41`` (``momentum/prop-4.1``): the Jacobian of a tied-weight RevNet step at a fixed point, by
  complex steps of the map, is the formula J(A, B), which has an eigenvalue != 1 of modulus >= 1 (random pairs and
  a worst-case search of the hypotheses).
* ``momentum.bits`` (``momentum/sec-4.3.2/bits``): with exact fixed-point multiplication the inverse is bit
  exact and the buffer holds about N log2(1/gamma) bits per coordinate, at most the bound :func:`bits_upper`
  (random weights and a worst-case search).
* ``momentum.prop411`` (``momentum/prop-4.11``): theta = eps (-pi^2 - 1/(4 eps^2)) gives
  Psi_eps(theta) = -exp(-1/(2 eps)), so every x -> lambda x with -1 < lambda < 0 is reached with v0 = 0 at
  eps = -1 / (2 ln|lambda|) (the remark after Prop. 4.2).
* ``momentum.lambda_table`` (``momentum/fig-4.4/erratum``): lambda_eps over a grid of eps; the caption
  of Fig. 4.4 says lambda_eps is "close to -1 when eps >= 2".
"""

from __future__ import annotations

import cmath
import dataclasses
import math

import numpy as np

from theory.claims import Verdict, erratum_verdict, threshold_verdict, worst_case_verdict

from .. import register
from ..config import Choice, Choices, Config, Custom, Int, Ints, Real, Reals, Seed, field

__all__ = [
    "InversionConfig", "InversionResult", "measure_inversion", "inversion_verdict",
    "PsiConfig", "PsiResult", "measure_psi", "psi_verdict", "psi_figure",
    "RepresentableConfig", "RepresentableResult", "measure_representable", "representable_verdict",
    "representable_figure",
    "LambdaConfig", "LambdaResult", "measure_lambda", "lambda_printed_verdict", "lambda_corrected_verdict",
    "lambda_verdict",
    "lambda_figure", "LambdaRangeConfig", "LambdaRangeResult", "measure_lambda_range", "lambda_range_verdict",
    "Prop411Config", "Prop411Result", "measure_prop411", "prop411_verdict",
    "BitsConfig", "BitsResult", "measure_bits", "bits_verdict", "bits_upper",
    "Prop41Config", "Prop41Result", "measure_prop41", "prop41_verdict", "revnet_jacobian", "momentum_jacobian",
    "PROP41_ROUND", "PROP41_JACOBIAN_TOL",
    "Prop42Config", "Prop42Result", "measure_prop42", "prop42_verdict",
    "MemoryConfig", "MemoryResult", "measure_memory", "memory_verdict", "memory_figure",
]


# --------------------------------------------------------------------------- inversion, Eq. (4.3)

@dataclasses.dataclass(frozen=True)
class InversionConfig(Config):
    """Forward pass (4.2) then inverse (4.3) on random weights."""

    d: int = field(Int(low=1), 8, "State dimension.")
    batch: int = field(Int(low=1), 16, "Inputs per network.")
    depths: tuple = field(Ints(low=1), (10, 50, 100), "Depths N.")
    gammas: tuple = field(Reals(0, 1, closed="right"), (0.9, 0.99), "Momentum terms gamma.")
    families: tuple = field(Choices("linear", "tanh", "tanh_out", "mlp"), ("linear", "tanh", "tanh_out", "mlp"),
                            'Residual families ("mlp" of hidden width ``width``).')
    width: int = field(Int(low=1), 16, 'Hidden width of the "mlp" family.')
    seed: int = field(Seed(), 0, "Seed of the weights and inputs.")
    inverse_gamma_offset: float = field(Real(), 0.0, "Added to gamma in the inverse only (0 for the claim; a "
                                        "negative control sets it != 0).")


@dataclasses.dataclass(frozen=True)
class InversionResult:
    """Reconstruction errors of (4.3), relative to max(1, max |x_n|, max |v_n|), per gamma.

    ``max_ratio`` is the largest ratio error / (N e_ulp), where e_ulp is the error of the same inverse
    started from (x_N, v_N) perturbed by one unit in the last place (random signs): the spread of one
    rounding of the output through the N inverse steps. A reconstruction "to round-off" has N roundings,
    each spread at most like that one, so the ratio stays below 1.
    """

    gammas: tuple
    max_rel_error: tuple  # per gamma, over depths, families and inputs
    max_ratio: tuple  # per gamma
    worst: float

    def to_measured(self):
        return {"gammas": list(self.gammas), "max_rel_error": list(self.max_rel_error),
                "max_ratio_to_N_ulp_spread": list(self.max_ratio), "worst": self.worst}


def measure_inversion(cfg: InversionConfig) -> InversionResult:
    """Run (4.2) from (x0, v0 = f(x0, theta_0)), invert with (4.3) from (x_N, v_N), compare all layers."""
    import theory.momentum as M
    from theory.resnet import mlp

    rng = np.random.default_rng(cfg.seed)
    errs, ratios = [], []
    for gamma in cfg.gammas:
        worst = worst_ratio = 0.0
        for fam in cfg.families:
            res = mlp(cfg.width) if fam == "mlp" else fam
            for N in cfg.depths:
                shape = (N, 2 * cfg.d * cfg.width + cfg.width) if fam == "mlp" else (N, cfg.d, cfg.d)
                theta = rng.standard_normal(shape) / math.sqrt(cfg.d)
                x0 = rng.standard_normal((cfg.batch, cfg.d))
                xs, vs = M.forward(x0, "f", theta, res, gamma)
                g_inv = min(1.0, gamma + cfg.inverse_gamma_offset)
                rx, rv = M.inverse(xs[-1], vs[-1], theta, res, g_inv)
                scale = max(1.0, float(np.abs(xs).max()), float(np.abs(vs).max()))
                err = max(float(np.abs(rx - xs).max()), float(np.abs(rv - vs).max())) / scale
                ulp = np.finfo(float).eps
                px = xs[-1] * (1 + ulp * rng.choice([-1.0, 1.0], xs[-1].shape))
                pv = vs[-1] * (1 + ulp * rng.choice([-1.0, 1.0], vs[-1].shape))
                qx, qv = M.inverse(px, pv, theta, res, g_inv)
                spread = max(float(np.abs(qx - rx).max()), float(np.abs(qv - rv).max())) / scale
                worst = max(worst, err)
                worst_ratio = max(worst_ratio, err / (N * max(spread, ulp)))
        errs.append(worst)
        ratios.append(worst_ratio)
    return InversionResult(tuple(cfg.gammas), tuple(errs), tuple(ratios), max(errs))


def inversion_verdict(result: InversionResult) -> Verdict:
    """An identity to round-off: for every gamma, the reconstruction error of (4.3) is at most N times the spread
    of one output rounding through the inverse (ratio <= 1)."""
    measured = {f"ratio_gamma={g:g}": float(r) for g, r in zip(result.gammas, result.max_ratio)}
    measured.update({f"max_rel_error_gamma={g:g}": float(e) for g, e in zip(result.gammas, result.max_rel_error)})
    return threshold_verdict("identity", measured, {f"ratio_gamma={g:g}_max": 1.0 for g in result.gammas},
                             context="inverse (4.3) of forward (4.2): max relative error over depths, families and "
                                     "inputs, as a ratio to N x (spread of one ulp at the output)")


INVERSION_PRESETS = {
    "check": InversionConfig(),
    # Sec. 4.5 trains depth-101/152 networks with gamma = 0.9
    "paper": InversionConfig(d=64, batch=256, depths=(101, 152), gammas=(0.9,)),
}


# ------------------------------------------------------------------------------ Psi_eps, Prop. 4.3

@dataclasses.dataclass(frozen=True)
class PsiConfig(Config):
    """Psi_eps against its series (Prop. 4.3) and against depth-N Momentum ResNets."""

    d: int = field(Int(low=1), 3, "Dimension of theta.")
    eps_values: tuple = field(Reals(0, closed="neither"), (0.5, 1.0, 2.0), "Values of eps.")
    depths: tuple = field(Ints(low=1, min_len=3), (50, 100, 200, 400, 800, 1600, 3200), "Depths N of the "
                          "discretisation (at least 3 for a slope; each N eps >= 1 so that gamma = 1 - 1/(N eps) "
                          ">= 0).")
    seed: int = field(Seed(), 0, "Seed of theta (Gaussian, entries of variance 1/d) and x0.")
    v0: str = field(Choice("zero", "f"), "zero", '"zero" for the initial velocity of (4.7); "f" (v0 = f(x0)) is '
                    "the negative control, whose limit is another ODE solution.")
    series_terms: int = field(Int(low=1), 80, "Terms of the series of Prop. 4.3.")

    def check(self):
        if min(self.depths) * min(self.eps_values) < 1:
            raise self.invalid("depths", f"satisfy N eps >= 1 (gamma >= 0) at eps = {min(self.eps_values)}")


@dataclasses.dataclass(frozen=True)
class PsiResult:
    """Errors of Prop. 4.3: series vs block exponential, and ||x_N - Psi_eps(theta) x0|| over N per eps."""

    eps_values: tuple
    depths: tuple
    series_error: float
    errors: tuple  # per eps: tuple over depths
    slopes: tuple  # least-squares slope of log error vs log N, per eps

    def to_measured(self):
        return {"eps": list(self.eps_values), "series_error": self.series_error, "slopes": list(self.slopes),
                "errors_first_last": [[e[0], e[-1]] for e in self.errors]}


def measure_psi(cfg: PsiConfig) -> PsiResult:
    """Compute Psi_eps(theta) by the block exponential and the series; run the depth-N discretisation.

    The depth-N Momentum ResNet with gamma = 1 - 1/(N eps), residual theta x / N (linear family with
    slices theta / N) and v0 = 0 is the step-1/N scheme of eps x'' + x' = theta x on [0, 1] (Sec. 4.3.4 of
    the thesis, the momentum network as a discretisation of the second-order ODE), so x_N -> Psi_eps(theta) x0.
    """
    import theory.momentum as M

    rng = np.random.default_rng(cfg.seed)
    theta = rng.standard_normal((cfg.d, cfg.d)) / math.sqrt(cfg.d)
    x0 = rng.standard_normal(cfg.d)
    series_err = 0.0
    errors, slopes = [], []
    for eps in cfg.eps_values:
        P = M.psi(theta, eps)
        S = M.psi_series(theta, eps, cfg.series_terms)
        series_err = max(series_err, float(np.abs(P - S).max() / max(1.0, np.abs(P).max())))
        target = P @ x0
        errs = []
        for N in cfg.depths:
            slices = np.broadcast_to(theta / N, (N, cfg.d, cfg.d))
            gamma = 1.0 - 1.0 / (N * eps)
            v0 = None if cfg.v0 == "zero" else "f"
            xs, _ = M.forward(x0, v0, slices, "linear", gamma)
            errs.append(float(np.linalg.norm(xs[-1] - target)))
        errors.append(tuple(errs))
        slopes.append(float(np.polyfit(np.log(cfg.depths), np.log(errs), 1)[0]))
    return PsiResult(tuple(cfg.eps_values), tuple(cfg.depths), series_err, tuple(errors), tuple(slopes))


def psi_verdict(result: PsiResult) -> Verdict:
    """A rate (Prop. 4.3): ||x_N - Psi_eps(theta) x0|| ~ C N^b with b in [-1.1, -0.9] for every eps (least-squares
    slope of log error against log N over the depths), and the series of Prop. 4.3 equals the block exponential
    to 1e-11 (relative)."""
    measured = {"series_error": float(result.series_error)}
    expected = {"series_error_max": 1e-11}
    for e, s in zip(result.eps_values, result.slopes):
        measured[f"slope_eps={e:g}"] = float(s)
        expected.update({f"slope_eps={e:g}_min": -1.1, f"slope_eps={e:g}_max": -0.9})
    return threshold_verdict("rate", measured, expected, context=(
        f"series vs block exponential; slopes of ||x_N - Psi_eps(theta) x0|| vs N = {result.depths[0]}.."
        f"{result.depths[-1]} ({len(result.depths)} depths), expected -1"))


def psi_figure(result: PsiResult, claim_id: str = "momentum/prop-4.3"):
    """Log-log plot of the discretisation error against N, one line per eps, with a slope -1 guide."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    N = np.asarray(result.depths, float)
    for eps, errs, s in zip(result.eps_values, result.errors, result.slopes):
        ax.loglog(N, errs, "o-", label=f"eps = {eps} (fitted slope {s:.3f})")
    e0 = result.errors[0][0]
    ax.loglog(N, 0.5 * e0 * N[0] / N, "k--", label="slope -1, predicted (guide, offset)")
    ax.set_xlabel("depth N")
    ax.set_ylabel("||x_N - Psi_eps(theta) x_0||")
    ax.set_title(f"{claim_id}: depth-N Momentum ResNet vs Psi_eps(theta)", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


PSI_PRESETS = {
    "check": PsiConfig(),
    # Prop. 4.3 has no sizes; Fig. 4.4 uses d = 2 and eps up to about 5
    "paper": PsiConfig(d=2, eps_values=(0.25, 0.5, 1.0, 2.0, 5.0), depths=(50, 100, 200, 400, 800, 1600, 3200, 6400)),
}


# -------------------------------------------------------------------------- representability, Thm 4.4
#
# The check of Thm 4.4 does not test theory.momentum's criterion against itself: the maps it classifies are built
# independently, from the statement and its proof (App. 4.A.3.2), with their own closed forms and solvers:
#
# * reached maps: D = f_eps(X) for a real X assembled as in the sufficiency proof (a real 2 x 2 block of a
#   non-real z with f_eps(z) real below lambda_eps, i.e. a doubled eigenvalue there; a block of a random non-real
#   z; real z on the real line), and for random real X with an eigenvalue at the minimiser x_eps of f_eps on R.
#   f_eps(X) = Psi_eps(eps X - I/(4 eps)) is the exponential of the phase-space matrix (proof of Prop. 4.3),
#   taken here with scipy; each of these D is representable, with the witness theta = eps X - I/(4 eps);
# * excluded maps: D with a single (odd-multiplicity) real eigenvalue below lambda_eps.
#
# lambda_eps is the minimum of the closed form G_eps (Sec. 4.4.3) found by a scan. The theorem's dichotomy is
# then measured both ways: every reached map passes the criterion (the library's, and the pairing of its
# eigenvalues below lambda_eps counted here: the necessity direction), every excluded one is refused.


def _g_closed(alpha, eps):
    """G_eps(alpha) = e^{-1/(2 eps)} (cos alpha + sin alpha / (2 eps alpha)) = f_eps(-alpha^2) (Sec. 4.4.3)."""
    return math.exp(-0.5 / eps) * (math.cos(alpha) + math.sin(alpha) / (2 * eps * alpha))


def _lambda_by_scan(eps):
    """(lambda_eps, alpha*, alpha_0): the minimum of G_eps over (0, 3 pi] by a scan refined by bounded minimisation,
    its argmin, and the first zero alpha_0 < alpha* of G_eps (f_eps < 0 on (-alpha*^2, -alpha_0^2))."""
    import scipy.optimize

    a = np.linspace(1e-3, 3 * math.pi, 6000)
    g = np.exp(-0.5 / eps) * (np.cos(a) + np.sin(a) / (2 * eps * a))
    k = int(np.argmin(g))
    opt = scipy.optimize.minimize_scalar(lambda t: _g_closed(t, eps), bounds=(a[max(k - 1, 0)], a[k + 1]),
                                         method="bounded", options={"xatol": 1e-12})
    alpha = float(opt.x)
    zero = scipy.optimize.brentq(lambda t: _g_closed(t, eps), 1e-3, alpha, xtol=1e-14)
    return min(float(opt.fun), float(g[k])), alpha, float(zero)


def _f_closed(w, eps):
    """F_eps(w) = e^{-1/(2 eps)} (cosh w + sinh w / (2 eps w)) = f_eps(w^2) (proof of Lemma 4.5), complex w != 0."""
    return cmath.exp(-0.5 / eps) * (cmath.cosh(w) + cmath.sinh(w) / (2 * eps * w))


def _df_closed(w, eps):
    """F_eps'(w)."""
    return cmath.exp(-0.5 / eps) * (cmath.sinh(w) + (w * cmath.cosh(w) - cmath.sinh(w)) / (2 * eps * w * w))


def _paired_preimage(lam, eps, lam_e, alpha):
    """A non-real z with f_eps(z) = lam, for a real lam < lambda_eps (the first case of the sufficiency proof).

    Continuation in lam from lambda_eps: near the minimum w = i alpha* of F_eps on the imaginary axis,
    F_eps(i alpha* + delta) = lambda_eps - G_eps''(alpha*) delta^2 / 2 + O(delta^3), so w leaves the axis along the
    real direction delta = sqrt(2 (lambda_eps - lam) / G_eps''(alpha*)); Newton's method on F_eps(w) = lam follows
    the branch in 40 steps. z = w^2 is non-real since both parts of w are nonzero.
    """
    c = math.exp(-0.5 / eps)
    s, co = math.sin(alpha), math.cos(alpha)
    g2 = c * (-co + (-s / alpha - 2 * co / alpha ** 2 + 2 * s / alpha ** 3) / (2 * eps))
    targets = lam_e + (lam - lam_e) * np.linspace(0.025, 1.0, 40)
    w = complex(math.sqrt(2 * (lam_e - targets[0]) / g2), alpha)
    for t in targets:
        for _ in range(60):
            step = (_f_closed(w, eps) - t) / _df_closed(w, eps)
            w -= step
            if abs(step) < 1e-15 * max(1.0, abs(w)):
                break
    z = w * w
    if abs(_f_closed(w, eps) - lam) > 1e-12 * max(1.0, abs(lam)) or abs(z.imag) < 1e-6:
        raise ArithmeticError(f"no non-real preimage of {lam} found at eps = {eps}")  # pragma: no cover
    return z


def _f_eps_matrix(X, eps):
    """f_eps(X) = Psi_eps(eps X - I/(4 eps)), the top-left block of exp([[0, I], [theta/eps, -I/eps]]) (scipy)."""
    import scipy.linalg

    d = X.shape[0]
    theta = eps * X - np.eye(d) / (4 * eps)
    A = np.block([[np.zeros((d, d)), np.eye(d)], [theta / eps, -np.eye(d) / eps]])
    return scipy.linalg.expm(A)[:d, :d], theta


def _block(z):
    """The real 2 x 2 form [[Re z, -Im z], [Im z, Re z]] of a complex z (its eigenvalues z and its conjugate)."""
    return np.array([[z.real, -z.imag], [z.imag, z.real]])


def _unpaired_below(D, threshold):
    """Real eigenvalues of D below ``threshold`` whose multiplicity is odd (clusters within 1e-7 max(1, |Sp D|)
    count as one eigenvalue), counted from the eigenvalues directly: the necessity direction of Thm 4.4 says 0 for
    every reached D."""
    lam = np.linalg.eigvals(D)
    tol = 1e-7 * max(1.0, float(np.abs(lam).max()))
    real = np.sort(lam.real[(np.abs(lam.imag) <= tol) & (lam.real < threshold - tol)])
    odd, k = 0, 0
    while k < real.size:
        j = k
        while j + 1 < real.size and real[j + 1] - real[k] <= tol:
            j += 1
        odd += (j - k + 1) % 2
        k = j + 1
    return odd


def _match_gap(values, targets):
    """Largest distance from a value to its nearest target, relative to max(1, |targets|)."""
    values, targets = np.asarray(values), np.asarray(targets)
    return float(np.abs(values[:, None] - targets[None, :]).min(axis=1).max() / max(1.0, np.abs(targets).max()))


@dataclasses.dataclass(frozen=True)
class RepresentableConfig(Config):
    """Independently built maps that Thm 4.4 says are / are not representable, and the library's and the theorem's
    classification of them."""

    d: int = field(Int(low=4), 4, "Matrix size (>= 4: one doubled real eigenvalue below lambda_eps, one complex "
                   "pair).")
    eps_values: tuple = field(Reals(0, closed="neither"), (0.25, 1.0, 3.0), "Values of eps.")
    trials: int = field(Int(low=1), 20, "Maps per eps and per family (built from the proof, random reached, "
                        "excluded).")
    seed: int = field(Seed(), 0, "Seed of the eigenvectors and eigenvalues.")
    eps_offset: float = field(Real(), 0.0, "Psi is evaluated at eps + eps_offset when the library's preimage is "
                              "checked (0 for the claim; a negative control sets it != 0).")
    lambda_shift: float = field(Real(), 0.0, "Added to lambda_eps in the classification (0 for the theorem; a "
                                "positive shift asserts a larger excluded set, which the reached maps with an "
                                "eigenvalue just above lambda_eps contradict: a negative control).")


@dataclasses.dataclass(frozen=True)
class RepresentableResult:
    """Counts over the independently built maps, and the errors of the constructions.

    ``n_constructed``: maps built by the sufficiency proof that the library accepts and whose library preimage
    theta gives Psi_eps(theta) = D within 1e-9 cond(Q) max(1, |D|) (``max_scaled_error``); ``construction_gap``:
    their spectra against the targets f_eps(z) of the construction; ``n_reached_refused``: random reached maps
    f_eps(X) the library refuses; ``n_unpaired``: reached maps (of either family) with an odd-multiplicity real
    eigenvalue below the threshold; ``n_refused``: excluded maps that the library's criterion refuses and whose
    preimage raises; ``lambda_gap``: |lambda_eps of the library - lambda_eps by scan|.
    """

    n_constructed: int
    max_scaled_error: float
    n_excluded: int
    n_refused: int
    n_first_order_excluded: int  # the reached ones that eps = 0 excludes (a single negative eigenvalue)
    n_expected: int = 0  # maps built by the proof (trials x number of eps)
    construction_gap: float = 0.0
    n_reached: int = 0
    n_reached_refused: int = 0
    n_unpaired: int = 0
    lambda_gap: float = 0.0

    def to_measured(self):
        return dataclasses.asdict(self)


def _proof_built(rng, d, eps, kind, lam_e, alpha, alpha0):
    """X of the sufficiency proof and the target spectrum of f_eps(X): a doubled eigenvalue below lambda_eps
    (``kind="paired"``) or a single one in (lambda_eps, 0) (``"negative"``), a complex pair, reals above."""
    blocks, targets = [], []
    x_eps = -alpha * alpha
    if kind == "paired":
        lam = rng.uniform(-3.0, lam_e - 0.02)
        blocks.append(_block(_paired_preimage(lam, eps, lam_e, alpha)))
        targets += [lam, lam]
    else:
        x = -rng.uniform(alpha0 + 0.05 * (alpha - alpha0), alpha - 0.05 * (alpha - alpha0)) ** 2
        blocks.append(np.array([[x]]))
        targets.append(_f_closed(cmath.sqrt(x), eps).real)
    z = complex(rng.uniform(-8.0, 4.0), rng.uniform(0.3, 3.0))
    blocks.append(_block(z))
    fz = _f_closed(cmath.sqrt(z), eps)
    targets += [fz, fz.conjugate()]
    for _ in range(d - sum(b.shape[0] for b in blocks)):
        x = rng.uniform(x_eps + 0.5, 6.0)
        blocks.append(np.array([[x]]))
        targets.append(_f_closed(cmath.sqrt(complex(x)), eps).real)
    import scipy.linalg

    return scipy.linalg.block_diag(*blocks), np.asarray(targets, dtype=complex)


def _excluded(rng, d, threshold):
    """D = P B P^{-1} with one real eigenvalue below ``threshold`` (single), a complex pair, reals above."""
    lam = rng.uniform(threshold + 0.02, 3.0, d)
    B = np.diag(lam)
    B[0, 0] = rng.uniform(-3.0, threshold - 0.02)
    a, b = rng.standard_normal(2)
    B[2:4, 2:4] = [[a, b], [-b, a]]
    P = rng.standard_normal((d, d))
    return P @ B @ np.linalg.inv(P)


def measure_representable(cfg: RepresentableConfig) -> RepresentableResult:
    """Build the three families of maps per eps and classify them (see the comment above the config)."""
    import theory.momentum as M

    rng = np.random.default_rng(cfg.seed)
    d = cfg.d
    n_c = n_x = n_r = n_fo = n_reached = n_reached_ref = n_odd = 0
    worst = gap = lam_gap = 0.0
    for eps in cfg.eps_values:
        lam_e, alpha, alpha0 = _lambda_by_scan(eps)
        lam_gap = max(lam_gap, abs(M.lambda_eps(eps)[0] - lam_e))
        threshold = lam_e + cfg.lambda_shift
        for t in range(cfg.trials):
            # reached, built by the sufficiency proof
            kind = ("paired", "negative")[t % 2]
            Y, targets = _proof_built(rng, d, eps, kind, lam_e, alpha, alpha0)
            Q = rng.standard_normal((d, d))
            D, _ = _f_eps_matrix(Q @ Y @ np.linalg.inv(Q), eps)
            cond = np.linalg.cond(Q)
            gap = max(gap, _match_gap(np.linalg.eigvals(D), targets) / cond)
            n_odd += _unpaired_below(D, threshold) > 0
            if _unpaired_below(D, threshold) == 0 and M.representable(D, eps):
                theta = M.preimage(D, eps)
                err = float(np.abs(M.psi(theta, eps + cfg.eps_offset) - D).max())
                worst = max(worst, err / (cond * max(1.0, float(np.abs(D).max()))))
                n_c += 1
                if kind == "negative" and not M.representable(D, 0.0):
                    n_fo += 1
            # reached, random real X with an eigenvalue at the minimiser of f_eps on the real line
            Q = rng.standard_normal((d, d))
            Y = np.zeros((d, d))
            Y[0, 0] = -alpha * alpha + rng.uniform(-0.5, 0.5)
            Y[1:, 1:] = rng.uniform(0.5, 3.0) * rng.standard_normal((d - 1, d - 1))
            D, _ = _f_eps_matrix(Q @ Y @ np.linalg.inv(Q), eps)
            n_reached += 1
            n_odd += _unpaired_below(D, threshold) > 0
            n_reached_ref += not M.representable(D, eps)
            # excluded: a single eigenvalue below the threshold
            D = _excluded(rng, d, threshold)
            n_x += 1
            if _unpaired_below(D, threshold) == 1 and not M.representable(D, eps):
                try:
                    M.preimage(D, eps)
                except ValueError:
                    n_r += 1
    return RepresentableResult(n_c, float(worst), n_x, n_r, n_fo, cfg.trials * len(cfg.eps_values), float(gap),
                               n_reached, n_reached_ref, n_odd, float(lam_gap))


def representable_verdict(result: RepresentableResult) -> Verdict:
    """An identity of classifications (Thm 4.4, diagonalizable case), on maps built independently of the library:
    every map built by the sufficiency proof has the spectrum it was built for (gap <= 1e-9 per unit of cond(Q)),
    has its eigenvalues below lambda_eps paired and is accepted and reconstructed by the library (all of them,
    error <= 1e-9 cond(Q) max(1, |D|)); no reached map, proof-built or random, has an unpaired eigenvalue below
    lambda_eps or is refused; every map with a single eigenvalue below lambda_eps is refused; the library's
    lambda_eps is the minimum of G_eps (to 1e-10)."""
    measured = {k: v for k, v in result.to_measured().items() if k not in ("n_expected", "n_reached")}
    return threshold_verdict("identity", measured, {
        "n_constructed_min": result.n_expected, "n_constructed_max": result.n_expected,
        "max_scaled_error_max": 1e-9, "construction_gap_max": 1e-9, "n_reached_refused_max": 0,
        "n_unpaired_max": 0, "n_refused_min": result.n_excluded, "lambda_gap_max": 1e-10}, context=(
        f"{result.n_expected} maps built by the proof of Thm 4.4 and {result.n_reached} random f_eps(X), real X "
        f"(reached); {result.n_excluded} with a single eigenvalue below lambda_eps (excluded); "
        f"{result.n_first_order_excluded} reached maps have a single negative eigenvalue (not reachable at eps = 0)"))


def representable_figure(eps_values=(0.0, 0.5, 1.0, 3.0), grid=81, claim_id="momentum/thm-4.4"):
    """Fig. 4.4 (right) of the thesis redrawn: real eigenvalue pairs (l1, l2) with diag(l1, l2) representable."""
    import theory.momentum as M
    from theory.plots import save_figure, subplots

    lam = np.linspace(-1.5, 1.5, grid)
    _, fig, axes = subplots(len(eps_values), figsize=(3.0 * len(eps_values), 3.2))
    for ax, eps in zip(axes, eps_values):
        ok = np.array([[M.representable(np.diag([a, b]), eps) for a in lam] for b in lam])
        ax.imshow(ok, origin="lower", extent=(lam[0], lam[-1], lam[0], lam[-1]), cmap="Greys", vmin=0, vmax=1.6)
        if eps > 0:
            le = M.lambda_eps(eps)[0]
            ax.axvline(le, color="red", lw=0.8, ls="--", label=f"lambda_eps = {le:.3f}")
            ax.axhline(le, color="red", lw=0.8, ls="--")
            ax.legend(fontsize=6, loc="upper left")
        ax.set_title(f"eps = {eps}", fontsize=9)
        ax.set_xlabel("lambda_1")
        ax.set_ylabel("lambda_2")
    fig.suptitle(f"{claim_id}: representable diag(lambda_1, lambda_2) (grey), by theory.momentum.representable",
                 fontsize=9)
    return save_figure(fig, claim_id)


REPRESENTABLE_PRESETS = {
    "check": RepresentableConfig(),
    # Fig. 4.4 (right) shows d = 2 and several eps; d = 4 is the smallest size holding both block kinds
    "paper": RepresentableConfig(d=6, eps_values=(0.1, 0.25, 0.5, 1.0, 2.0, 5.0), trials=200),
}


# -------------------------------------------------------------------------- lambda_eps, Fig. 4.4 left

@dataclasses.dataclass(frozen=True)
class LambdaConfig(Config):
    """lambda_eps on a grid of eps (Fig. 4.4, left)."""

    eps_values: tuple = field(Reals(0, closed="neither", increasing=True),
                              (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 50.0),
                              "Values of eps (the caption's claim concerns those >= ``from_eps``).")
    from_eps: float = field(Real(0, closed="neither"), 2.0, "The caption's threshold, 2.")
    closeness: float = field(Real(0, closed="neither"), 0.1, 'What "close to -1" is taken to mean: '
                             "|lambda_eps + 1| <= closeness (0.1, a tenth of the range (-1, 0) of lambda_eps).")

    def check(self):
        if not any(e >= self.from_eps for e in self.eps_values):
            raise self.invalid("eps_values", f"contain a value >= from_eps = {self.from_eps}")


@dataclasses.dataclass(frozen=True)
class LambdaResult:
    """lambda_eps, its argmin alpha* and the bound -exp(-1/(2 eps)) = G_eps(pi), per eps."""

    eps_values: tuple
    lambdas: tuple
    alphas: tuple
    upper: tuple  # -exp(-1/(2 eps)), an upper bound of lambda_eps
    from_eps: float
    closeness: float

    def to_measured(self):
        return {"eps": list(self.eps_values), "lambda_eps": list(self.lambdas), "argmin_alpha": list(self.alphas)}


def measure_lambda(cfg: LambdaConfig) -> LambdaResult:
    """lambda_eps by :func:`theory.momentum.lambda_eps` for every eps of the grid."""
    import theory.momentum as M

    lam, al = zip(*(M.lambda_eps(e) for e in cfg.eps_values))
    upper = tuple(-math.exp(-0.5 / e) for e in cfg.eps_values)
    return LambdaResult(tuple(cfg.eps_values), tuple(lam), tuple(al), upper, cfg.from_eps, cfg.closeness)




def _monotone(values, bound: float, *, strict: bool = False) -> tuple[dict, dict]:
    """The measured largest step max_k (v_{k+1} - v_k) (NaN propagated) and its threshold ``bound`` (``< bound``
    where ``strict``, else ``<= bound``); empty for fewer than two values, where nothing can increase."""
    steps = np.diff(np.asarray(values, dtype=float))
    key = "largest_step_below" if strict else "largest_step_max"
    return ({"largest_step": float(np.max(steps))}, {key: bound}) if steps.size else ({}, {})


def lambda_printed_verdict(result: LambdaResult) -> Verdict:
    """The caption as printed (a bound): 1 + lambda_eps <= closeness for every eps >= from_eps, and lambda_eps
    non-increasing on the grid (largest step lambda_{k+1} - lambda_k <= 0)."""
    gaps = [(e, 1 + l) for e, l in zip(result.eps_values, result.lambdas) if e >= result.from_eps]
    worst_e, worst = max(gaps, key=lambda t: t[1])
    step, step_max = _monotone(result.lambdas, 0.0)
    return threshold_verdict("bound", {"gap_from_eps": float(np.max([g for _, g in gaps])), **step},
                             {"gap_from_eps_max": result.closeness, **step_max},
                             context=f"printed: 1 + lambda_eps within {result.closeness} for eps >= "
                                     f"{result.from_eps}, largest gap at eps = {worst_e}")


def lambda_corrected_verdict(result: LambdaResult) -> Verdict:
    """Corrected (a bound): -1 < lambda_eps < -exp(-1/(2 eps)) and lambda_eps strictly decreasing on the grid.

    So 1 + lambda_eps < 1 - exp(-1/(2 eps)) <= 1/(2 eps): lambda_eps tends to -1 at rate O(1/eps); it is
    within 0.1 of -1 only from eps of about 5 on (lambda_2 = -0.781). The strict inequalities are compared as
    ``min(lambda_eps) > -1``, ``max(lambda_eps + exp(-1/(2 eps))) < 0`` and ``max(lambda_{k+1} - lambda_k) < 0``.
    """
    lam, up = np.asarray(result.lambdas, dtype=float), np.asarray(result.upper, dtype=float)
    close_from = next((e for e, l in zip(result.eps_values, result.lambdas) if 1 + l <= result.closeness), None)
    step, step_max = _monotone(lam, 0.0, strict=True)
    measured = {"min_lambda": float(np.min(lam)), "max_lambda_minus_upper": float(np.max(lam - up)), **step}
    return threshold_verdict("bound", measured, {
        "min_lambda_above": -1.0, "max_lambda_minus_upper_below": 0.0, **step_max}, context=(
        f"corrected: -1 < lambda_eps < -exp(-1/(2 eps)), strictly decreasing, on all {len(result.lambdas)} eps; "
        f"within {result.closeness} of -1 from eps = {close_from} of the grid"))


def lambda_verdict(result: LambdaResult) -> Verdict:
    """The erratum record of Fig. 4.4's caption: the printed form fails and the corrected one holds (the halves
    are the verdict's ``parts``)."""
    return erratum_verdict(lambda_printed_verdict(result), lambda_corrected_verdict(result))


def lambda_figure(result: LambdaResult, claim_id: str = "momentum/fig-4.4/erratum"):
    """lambda_eps against eps with the bound -exp(-1/(2 eps)), the value -1 and the 'close' band."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    e = np.geomspace(min(result.eps_values), max(result.eps_values), 200)
    ax.semilogx(result.eps_values, result.lambdas, "o-", label="lambda_eps (measured)")
    ax.semilogx(e, -np.exp(-0.5 / e), "g--", label="-exp(-1/(2 eps)), upper bound")
    ax.axhline(-1.0, color="k", lw=0.8, label="-1, lower bound")
    ax.axhspan(-1.0, -1.0 + result.closeness, color="red", alpha=0.15, label=f"within {result.closeness} of -1")
    ax.axvline(result.from_eps, color="red", ls=":", label=f"eps = {result.from_eps} (caption)")
    ax.set_xlabel("eps")
    ax.set_ylabel("lambda_eps")
    ax.set_title(f"{claim_id}: lambda_eps vs eps (thesis Fig. 4.4 left)", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


LAMBDA_PRESETS = {
    "check": LambdaConfig(),
    # Fig. 4.4 (left) plots eps from 0 to about 5
    "paper": LambdaConfig(eps_values=tuple(float(x) for x in np.round(np.geomspace(0.01, 50.0, 60), 6))),
}


# -------------------------------------------------------------------------- memory, Sec. 4.3.2

@dataclasses.dataclass(frozen=True)
class MemoryConfig(Config):
    """Peak memory of one gradient computation against depth (Sec. 4.3.2 and Fig. 4.2 of the thesis)."""

    d: int = field(Int(low=1), 32, "State dimension.")
    batch: int = field(Int(low=1), 64, "Batch size.")
    width: int = field(Int(low=1), 32, "Hidden width p of the residual f(x) = V tanh(W x + b) (the toy block of "
                       "Sec. 4.3.2).")
    depths: tuple = field(Ints(low=1, min_len=2), (50, 100, 200, 400, 800), "Depths N (tied weights: one "
                          "parameter set repeated N times).")
    gamma_scale: float = field(Real(0, closed="neither"), 50.0, "gamma = 1 - 1/(gamma_scale N) at depth N (Fig. 4.2 "
                               "uses 50); gamma_scale N >= 1 so that gamma >= 0.")
    method: str = field(Choice("memory_free", "backprop"), "memory_free", '"memory_free" for the claim; "backprop" '
                        "(storing the activations) is the negative control.")
    seed: int = field(Seed(), 0, "Seed of the weights, inputs and targets.")

    def check(self):
        if self.gamma_scale * min(self.depths) < 1:
            raise self.invalid("gamma_scale", f"make gamma = 1 - 1/(gamma_scale N) >= 0 at N = {min(self.depths)}")


@dataclasses.dataclass(frozen=True)
class MemoryResult:
    """Working memory per depth: peak traced bytes (numpy buffers included) minus the N P 8 bytes of the
    returned parameter gradient (an output of either method), for the method and for stored backpropagation."""

    depths: tuple
    method: str
    peak_method: tuple
    peak_backprop: tuple
    grad_rel_diff: float  # max over depths of ||grad_method - grad_backprop|| / ||grad_backprop||
    activation_bytes: tuple  # 8 (N + 1) B d * 2: the stored positions and velocities

    def to_measured(self):
        n0, n1 = self.depths[0], self.depths[-1]
        return {"depths": list(self.depths), "method": self.method,
                "peak_method_MB": [round(p / 1e6, 3) for p in self.peak_method],
                "peak_backprop_MB": [round(p / 1e6, 3) for p in self.peak_backprop],
                f"method_ratio_N{n1}_vs_N{n0}": self.peak_method[-1] / self.peak_method[0],
                f"backprop_ratio_N{n1}_vs_N{n0}": self.peak_backprop[-1] / self.peak_backprop[0],
                "grad_rel_diff": self.grad_rel_diff}


def _peak(fn):
    import tracemalloc

    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return out, peak - base


def measure_memory(cfg: MemoryConfig) -> MemoryResult:
    """Run :func:`theory.momentum.gradient` under tracemalloc (which counts numpy's buffers) at each depth.

    The kernels are compiled by a warm-up call first, so that compilation is not measured. theta is
    passed as a float64 C-contiguous (N, P) array, which the API uses without copying; the parameter
    gradient it returns (N P 8 bytes, one slice per layer) is an output of both methods and is
    subtracted, so the figure is the working memory of the gradient computation.
    """
    import theory.momentum as M
    from theory.resnet import mlp

    rng = np.random.default_rng(cfg.seed)
    res = mlp(cfg.width)
    P = 2 * cfg.d * cfg.width + cfg.width
    layer = rng.standard_normal(P) / math.sqrt(cfg.d)
    x0 = rng.standard_normal((cfg.batch, cfg.d))
    y = rng.standard_normal((cfg.batch, cfg.d))
    for method in ("backprop", cfg.method):  # compile outside the measurement
        M.gradient(x0[:1], None, np.broadcast_to(layer, (2, P)), res, 0.5, y[:1], method=method)
    pm, pb, diffs, act = [], [], [], []
    for N in cfg.depths:
        theta = np.ascontiguousarray(np.broadcast_to(layer, (N, P)))
        gamma = 1.0 - 1.0 / (cfg.gamma_scale * N)
        work = 8.0 * N * cfg.batch * P  # four passes of 2 B P operations per layer (paper sizes: above the default)
        gm, peak_m = _peak(lambda: M.gradient(x0, None, theta, res, gamma, y, method=cfg.method, max_work=work))
        gb, peak_b = _peak(lambda: M.gradient(x0, None, theta, res, gamma, y, method="backprop", max_work=work))
        out_bytes = gm[1].nbytes  # the returned dtheta, (N, P) float64
        pm.append(peak_m - out_bytes)
        pb.append(peak_b - out_bytes)
        # tied weights: the gradient of the shared layer is the sum over layers
        a, b = gm[1].sum(axis=0), gb[1].sum(axis=0)
        diffs.append(float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)))
        act.append(16 * (N + 1) * cfg.batch * cfg.d)
    return MemoryResult(tuple(cfg.depths), cfg.method, tuple(pm), tuple(pb), max(diffs), tuple(act))


def memory_verdict(result: MemoryResult) -> Verdict:
    """Pass iff the method's peak grows by < 1.5x over the depth range while stored backpropagation's peak
    grows by at least half the depth ratio, and the gradients agree to 1e-8 (bounds; the growth of the method is
    compared as ``< 1.5``)."""
    ratio_n = result.depths[-1] / result.depths[0]
    measured = {"method_growth": result.peak_method[-1] / result.peak_method[0],
                "backprop_growth": result.peak_backprop[-1] / result.peak_backprop[0],
                "grad_rel_diff": float(result.grad_rel_diff)}
    return threshold_verdict("qualitative", measured, {
        "method_growth_below": 1.5, "backprop_growth_min": 0.5 * ratio_n,
        "grad_rel_diff_max": 1e-8}, context=(
        f"peak working memory at N = {result.depths[-1]} over N = {result.depths[0]} (x{ratio_n:g}) of "
        f"{result.method} (flat) and of stored backprop (linear); gradient relative difference"))


def memory_figure(result: MemoryResult, claim_id: str = "momentum/sec-4.3.2"):
    """Peak memory against depth for both methods, with the stored-activation count."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    N = np.asarray(result.depths, float)
    ax.plot(N, np.asarray(result.peak_backprop) / 1e6, "o-", label="backprop, activations stored (measured)")
    ax.plot(N, np.asarray(result.peak_method) / 1e6, "s-", label=f"{result.method} (measured)")
    ax.plot(N, np.asarray(result.activation_bytes) / 1e6, "k--", label="16 (N+1) B d bytes (count of x_n, v_n)")
    ax.set_xlabel("depth N (gamma = 1 - 1/(50 N))")
    ax.set_ylabel("peak traced memory - returned dtheta (MB)")
    ax.set_title(f"{claim_id}: memory of one gradient vs depth", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


MEMORY_PRESETS = {
    "check": MemoryConfig(),
    # Fig. 4.2: d = 500, n_batch = 500, gamma = 1 - 1/(50 k), depths up to about 1000
    "paper": MemoryConfig(d=500, batch=500, width=500, depths=(100, 200, 400, 600, 800, 1000)),
}


# -------------------------------------------------------------------------- Prop. 4.2

@dataclasses.dataclass(frozen=True)
class Prop42Config(Config):
    """First-order solutions as second-order solutions (Prop. 4.2 of the thesis, autonomous case)."""

    d: int = field(Int(low=1), 2, "State dimension.")
    width: int = field(Int(low=1), 8, "Hidden width of f(x) = V tanh(W x + b) (Gaussian V, W, b, entries of "
                       "variance 1/d, 1/d, 1).")
    eps_values: tuple = field(Reals(0, closed="neither"), (0.1, 1.0, 5.0), "Values of eps.")
    instances: int = field(Int(low=1), 3, "Random (f, x_0) per eps.")
    seed: int = field(Seed(), 0, "Seed of the instances.")
    v0: str = field(Choice("f", "zero"), "f", '"f": x\'(0) = f(x_0), the initial velocity of the proposition; '
                    '"zero" is the negative control.')
    rtol: float = field(Real(1e-14, 1e-3), 1e-11, "Relative tolerance of the ODE solver (absolute tolerance "
                        "rtol / 10).")


@dataclasses.dataclass(frozen=True)
class Prop42Result:
    """Max over 11 times in [0, 1] of |x_first(t) - x_second(t)|, relative to max(1, |x|), per eps."""

    eps_values: tuple
    deviation: tuple
    v0: str

    def to_measured(self):
        return {"eps": list(self.eps_values), "max_deviation": list(self.deviation), "v0": self.v0}


def measure_prop42(cfg: Prop42Config) -> Prop42Result:
    """Solve x' = f(x) and eps x'' + x' = eps J_f(x) f(x) + f(x) (scipy's DOP853) and compare them."""
    from scipy.integrate import solve_ivp

    rng = np.random.default_rng(cfg.seed)
    d, m = cfg.d, cfg.width
    times = np.linspace(0.0, 1.0, 11)
    devs = []
    for eps in cfg.eps_values:
        worst = 0.0
        for _ in range(cfg.instances):
            V = rng.standard_normal((d, m)) / math.sqrt(m)
            W = rng.standard_normal((m, d)) / math.sqrt(d)
            b = rng.standard_normal(m)
            x0 = rng.standard_normal(d)

            def f(x):
                return V @ np.tanh(W @ x + b)

            def f_hat(x):
                a = np.tanh(W @ x + b)
                J = V @ ((1.0 - a * a)[:, None] * W)
                return eps * (J @ f(x)) + f(x)

            first = solve_ivp(lambda t, x: f(x), (0.0, 1.0), x0, method="DOP853", t_eval=times,
                              rtol=cfg.rtol, atol=cfg.rtol / 10)
            v0 = f(x0) if cfg.v0 == "f" else np.zeros(d)
            second = solve_ivp(lambda t, z: np.concatenate([z[d:], (f_hat(z[:d]) - z[d:]) / eps]), (0.0, 1.0),
                               np.concatenate([x0, v0]), method="DOP853", t_eval=times, rtol=cfg.rtol,
                               atol=cfg.rtol / 10)
            scale = max(1.0, float(np.abs(first.y).max()))
            worst = max(worst, float(np.abs(first.y - second.y[:d]).max()) / scale)
        devs.append(worst)
    return Prop42Result(tuple(cfg.eps_values), tuple(devs), cfg.v0)


def prop42_verdict(result: Prop42Result) -> Verdict:
    """An identity (Prop. 4.2): every deviation max_t |x_first(t) - x_second(t)| / max(1, |x|) is <= 1e-8 (solver
    tolerance 1e-11, with room for its global error)."""
    measured = {f"deviation_eps={e:g}": float(x) for e, x in zip(result.eps_values, result.deviation)}
    return threshold_verdict("identity", measured, {f"{k}_max": 1e-8 for k in measured}, context=(
        f"max |x_first - x_second| / max(1, |x|) over t in [0, 1] with x'(0) = "
        f"{'f(x0)' if result.v0 == 'f' else '0'}"))


PROP42_PRESETS = {
    "check": Prop42Config(),
    # Prop. 4.2 has no sizes; Fig. 4.1 and the rings of Fig. 4.5 live in d = 2 with hidden width 16
    "paper": Prop42Config(d=2, width=16, eps_values=(0.1, 0.5, 1.0, 2.0, 5.0, 10.0), instances=20),
}


# -------------------------------------------------------------- Psi_eps(R) = [lambda_eps, inf)

@dataclasses.dataclass(frozen=True)
class LambdaRangeConfig(Config):
    """Scan the scalar map theta -> Psi_eps(theta) to find its minimum (Sec. 4.4.3 and Thm 4.4)."""

    eps_values: tuple = field(Reals(0, closed="neither"), (0.25, 1.0, 2.0, 5.0), "Values of eps.")
    grid: int = field(Int(low=10), 300, "Points of the scan of theta over [-eps (4 pi)^2 - 1/(4 eps), 5] (three "
                      "local minima of Psi_eps); the best point is refined by a bounded scalar minimisation.")
    candidate: str = field(Choice("lambda", "g_pi"), "lambda", "Which value is compared with the scanned minimum: "
                           '"lambda" (lambda_eps of :func:`theory.momentum.lambda_eps`, the claim) or "g_pi" '
                           "(-exp(-1/(2 eps)) = G_eps(pi), the value at the first sign change, a negative control).")


@dataclasses.dataclass(frozen=True)
class LambdaRangeResult:
    """Scanned minimum of Psi_eps over the real line, its argmin theta, and the candidate, per eps."""

    eps_values: tuple
    scanned_min: tuple
    scanned_theta: tuple
    candidate: tuple
    candidate_name: str

    def to_measured(self):
        return {"eps": list(self.eps_values), "scanned_min": list(self.scanned_min),
                "scanned_theta": list(self.scanned_theta), self.candidate_name: list(self.candidate)}


def measure_lambda_range(cfg: LambdaRangeConfig) -> LambdaRangeResult:
    """Psi_eps on scalars by the block exponential (no use of G_eps), scanned then refined."""
    import scipy.linalg
    import scipy.optimize

    import theory.momentum as M

    def psi_scalar(th, eps):
        th = np.atleast_1d(np.asarray(th, float))
        A = np.zeros((th.size, 2, 2))
        A[:, 0, 1] = 1.0
        A[:, 1, 0] = th / eps
        A[:, 1, 1] = -1.0 / eps
        return scipy.linalg.expm(A)[:, 0, 0]

    mins, thetas, cands = [], [], []
    for eps in cfg.eps_values:
        lo = -eps * (4 * math.pi) ** 2 - 1 / (4 * eps)
        th = np.linspace(lo, 5.0, cfg.grid)
        vals = psi_scalar(th, eps)
        k = int(np.argmin(vals))
        a, b = th[max(k - 1, 0)], th[min(k + 1, th.size - 1)]
        opt = scipy.optimize.minimize_scalar(lambda t: float(psi_scalar(t, eps)[0]), bounds=(a, b),
                                             method="bounded", options={"xatol": 1e-10})
        mins.append(float(min(opt.fun, vals[k])))
        thetas.append(float(opt.x))
        cands.append(M.lambda_eps(eps)[0] if cfg.candidate == "lambda" else -math.exp(-0.5 / eps))
    name = "lambda_eps" if cfg.candidate == "lambda" else "G_eps(pi)"
    return LambdaRangeResult(tuple(cfg.eps_values), tuple(mins), tuple(thetas), tuple(cands), name)


def lambda_range_verdict(result: LambdaRangeResult) -> Verdict:
    """An identity (Thm 4.4): the scanned minimum of Psi_eps over the real line equals the candidate within 1e-9
    (relative to max(1, |value|)) at every eps."""
    measured = {f"rel_diff_eps={e:g}": abs(m - c) / max(1.0, abs(c))
                for e, m, c in zip(result.eps_values, result.scanned_min, result.candidate)}
    return threshold_verdict("identity", measured, {f"{k}_max": 1e-9 for k in measured}, context=(
        f"min over real theta of Psi_eps(theta) vs {result.candidate_name}: " + ", ".join(
            f"eps={e}: {m:.10f} vs {c:.10f}" for e, m, c in
            zip(result.eps_values, result.scanned_min, result.candidate))))


LAMBDA_RANGE_PRESETS = {
    "check": LambdaRangeConfig(),
    # Fig. 4.4 (left) shows eps in (0, 5]
    "paper": LambdaRangeConfig(eps_values=(0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0), grid=20000),
}


# -------------------------------------------------------------------------- Prop. 4.1

#: float64 round-off allowed on the moduli of the eigenvalues of the 2d x 2d Jacobian (entries up to about 1e4):
#: the statement's bound |lambda| >= 1 is compared as radius_floor / |lambda| <= 1 + PROP41_ROUND
PROP41_ROUND = 1e-10
#: largest relative gap max |J_formula - J_complex_step| / max(1, max |J|) that counts as equal (complex-step
#: derivatives are exact to round-off; the formula's product BA rounds once per entry)
PROP41_JACOBIAN_TOL = 1e-12


def revnet_jacobian(A, B):
    """The Jacobian J(A, B) = [[I, A], [B, I + BA]] that Prop. 4.1 gives the tied-weight RevNet step (4.4) at a fixed
    point, in the (v, x) order, where A (resp. B) is the Jacobian of phi at x* (resp. of psi at v*)."""
    eye = np.eye(A.shape[0])
    return np.block([[eye, A], [B, eye + B @ A]])


def momentum_jacobian(A, gamma):
    """The Jacobian [[gamma I, (1 - gamma) A], [gamma I, I + (1 - gamma) A]] of the tied-weight Momentum ResNet step
    (4.2), (v, x) -> (gamma v + (1 - gamma) f(x), x + gamma v + (1 - gamma) f(x)), at a fixed point (v* = 0, f(x*) =
    0) where the Jacobian of f is A (the negative control of Prop. 4.1: this map can contract)."""
    eye = np.eye(A.shape[0])
    return np.block([[gamma * eye, (1 - gamma) * A], [gamma * eye, eye + (1 - gamma) * A]])


def _prop41_step(model, A, B, C1, C2, xs, vs, gamma):
    """The step map, vectorised over rows z = (v, x) (complex allowed), with nonlinear residuals that vanish at the
    fixed point (v*, x*) with the Jacobians A and B there.

    RevNet (4.4): phi(x) = A tanh(x - x*) + C1 (x - x*)^2, psi(v) = B sin(v - v*) + C2 (v - v*)^2 (squares
    entrywise) and Psi(v, x) = (v + phi(x), x + psi(v + phi(x))). Momentum ResNet (4.2): f = phi, v* = 0.
    """
    d = A.shape[0]

    def step(z):
        v, x = z[:, :d], z[:, d:]
        dx = x - xs
        phi = np.tanh(dx) @ A.T + (dx * dx) @ C1.T
        if model == "revnet":
            w = v + phi
            dv = w - vs
            return np.concatenate([w, x + np.sin(dv) @ B.T + (dv * dv) @ C2.T], axis=1)
        w = gamma * v + (1 - gamma) * phi
        return np.concatenate([w, x + w], axis=1)

    return step


def _complex_step_jacobian(step, z0, h=1e-30):
    """The Jacobian of ``step`` at the real point z0 by complex steps, J[:, k] = Im step(z0 + i h e_k) / h (no
    subtraction, so exact to round-off for an analytic map)."""
    n = z0.size
    Z = np.tile(z0.astype(complex), (n, 1)) + 1j * h * np.eye(n)
    return (step(Z).imag / h).T


def _prop41_one(model, A, B, C1, C2, xs, vs, gamma):
    """One fixed point: (largest |lambda| over eigenvalues lambda != 1 of the formula's Jacobian, relative gap
    between the formula and the complex-step Jacobian of the map, gap between the spectrum and the roots of
    l^2 - (2 + mu) l + 1, mu in Sp(AB), of the proof (RevNet; NaN otherwise))."""
    step = _prop41_step(model, A, B, C1, C2, xs, vs, gamma)
    z0 = np.concatenate([vs, xs])
    if not np.allclose(step(z0[None, :]).real[0], z0, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(z0).max()))):
        raise ArithmeticError("(v*, x*) is not a fixed point of the step map")  # pragma: no cover - construction
    J = revnet_jacobian(A, B) if model == "revnet" else momentum_jacobian(A, gamma)
    J_cs = _complex_step_jacobian(step, z0)
    jac_gap = float(np.abs(J - J_cs).max() / max(1.0, float(np.abs(J_cs).max())))
    lam = np.linalg.eigvals(J)
    away = lam[np.abs(lam - 1.0) > 1e-8]
    radius = float(np.abs(away).max()) if away.size else 0.0
    root_gap = math.nan
    if model == "revnet":
        mu = np.linalg.eigvals(A @ B)
        roots = np.concatenate([np.roots([1.0, -(2.0 + m), 1.0]) for m in mu])
        # match each eigenvalue of J to its nearest root (both multisets have 2d elements)
        dist = np.abs(lam[:, None] - roots[None, :])
        root_gap = float(dist.min(axis=1).max() / max(1.0, np.abs(lam).max()))
    return radius, jac_gap, root_gap


def _prop41_extras(rng, d):
    """The nonlinear parts C1, C2 and the fixed point (x*, v*) of one instance."""
    C1, C2 = rng.standard_normal((2, d, d)) / math.sqrt(d)
    xs, vs = rng.standard_normal((2, d))
    return C1, C2, xs, vs


def _prop41_search_instance(model, inst, gamma):
    """(A, B, C1, C2, x*, v*) of one point of the search box, or None where B is not invertible (outside the
    hypotheses).

    A = scale_a U diag(1, ..., 1 / cond_a) V^T (U, V random orthogonal), B = (1 - mix) scale_b G - mix t A^{-1}
    (G Gaussian): at mix = 1, AB = -t I, whose every eigenvalue mu = -t in [-4, 0) puts both roots of
    l^2 - (2 + mu) l + 1 on the unit circle, where the bound is an equality. The Momentum ResNet control takes
    A = -scale_a (I + G G^T / d) instead (B unused).
    """
    d = int(inst["d"])
    rng = np.random.default_rng(int(inst["seed"]))
    U, _ = np.linalg.qr(rng.standard_normal((d, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    G = rng.standard_normal((d, d)) / math.sqrt(d)
    C1, C2, xs, vs = _prop41_extras(rng, d)
    if model == "momentum":
        A = -inst["scale_a"] * (np.eye(d) + G @ G.T / d)
        return A, np.eye(d), C1, C2, xs, np.zeros(d)
    sig = np.geomspace(1.0, 1.0 / inst["cond_a"], d)
    A = inst["scale_a"] * (U * sig) @ V.T
    B = (1.0 - inst["mix"]) * inst["scale_b"] * G - inst["mix"] * inst["t"] * np.linalg.inv(A)
    if np.linalg.cond(B) > 1e12:
        return None
    return A, B, C1, C2, xs, vs


@dataclasses.dataclass(frozen=True)
class Prop41Config(Config):
    """Fixed points of tied-weight RevNets (Prop. 4.1 of the thesis, chapter 4): the Jacobian formula against
    complex-step derivatives of the step map, and the bound on the spectrum, on random draws and over a
    worst-case search of the hypotheses (A, B invertible)."""

    d: int = field(Int(low=1), 4, "Dimension of x and v of the random draws.")
    trials: int = field(Int(low=1), 500, "Random Gaussian pairs (A, B) (invertible almost surely), each with random "
                        "nonlinear parts and fixed point.")
    seed: int = field(Seed(), 0, "Seed of the draws.")
    model: str = field(Choice("revnet", "momentum"), "revnet", '"revnet": the RevNet step (4.4), whose Jacobian the '
                       'proposition gives as J(A, B) = [[I, A], [B, I + BA]] in (v, x) order; "momentum": the '
                       "tied-weight Momentum ResNet step (4.2) at a fixed point, Jacobian [[gamma I, (1 - gamma) A], "
                       "[gamma I, I + (1 - gamma) A]], with A = -I - (random PSD) / d (a negative control: its "
                       "spectral radius is below 1).")
    gamma: float = field(Real(0, 1, closed="neither"), 0.9, 'Momentum term of the "momentum" model.')
    radius_floor: float = field(Real(0, closed="neither"), 1.0, "The modulus that the proposition guarantees to "
                                "some eigenvalue != 1 (1); a control raises it, which the tight instances violate.")
    search_budget: int = field(Int(low=1), 400, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")
    search_max_d: int = field(Int(low=1), 8, "Largest dimension d of the search box.")


@dataclasses.dataclass(frozen=True)
class Prop41Result:
    """Over the random trials: the smallest largest modulus among eigenvalues != 1, the largest gap between the
    Jacobian formula and the complex-step Jacobian of the step map, the largest gap between the spectrum and the
    roots of lambda^2 - (2 + mu) lambda + 1, mu in Sp(AB) (RevNet only; NaN otherwise); and the worst-case search
    of radius_floor / |lambda|, with the largest Jacobian gap over the searched instances."""

    model: str
    radius_floor: float
    min_radius: float
    jacobian_gap: float
    root_mismatch: float
    trials: int
    search: object = dataclasses.field(default=None, repr=False)
    search_jacobian_gap: float = math.nan

    def to_measured(self):
        out = {"model": self.model, "radius_floor": self.radius_floor, "min_radius": self.min_radius,
               "ratio": self.radius_floor / self.min_radius if self.min_radius > 0 else math.inf,
               "jacobian_gap": max(self.jacobian_gap, self.search_jacobian_gap), "root_mismatch": self.root_mismatch,
               "trials": self.trials}
        if self.search is not None:
            out["search"] = self.search.to_measured()
        return out


def measure_prop41(cfg: Prop41Config) -> Prop41Result:
    """Random (A, B) and a worst-case search over the hypotheses: at each fixed point, the Jacobian of the step
    map by complex steps against the formula, and the largest |lambda|, lambda != 1, of the formula's spectrum.

    The search maximises radius_floor / max{|lambda| : lambda in Sp(J(A, B)), lambda != 1} over the box of
    :func:`_prop41_search_instance` (d, the scales of A and B over four decades, the condition number of A up to
    1e3, the weight and size of the aligned part B = -t A^{-1} that reaches the equality case, a seed).
    """
    from theory.worst_case import Dim, search_worst_case

    rng = np.random.default_rng(cfg.seed)
    d = cfg.d
    radius, jac, mismatch = math.inf, 0.0, 0.0 if cfg.model == "revnet" else math.nan
    for _ in range(cfg.trials):
        A = rng.standard_normal((d, d))
        B = rng.standard_normal((d, d))
        if cfg.model == "momentum":
            A = -np.eye(d) - (A @ A.T) / d
        C1, C2, xs, vs = _prop41_extras(rng, d)
        r, g, m = _prop41_one(cfg.model, A, B, C1, C2, xs, vs if cfg.model == "revnet" else np.zeros(d), cfg.gamma)
        radius, jac = min(radius, r), max(jac, g)
        if cfg.model == "revnet":
            mismatch = max(mismatch, m)
    gaps = [0.0]

    def ratio(inst):
        built = _prop41_search_instance(cfg.model, inst, cfg.gamma)
        if built is None:
            return None
        r, g, _ = _prop41_one(cfg.model, *built, cfg.gamma)
        gaps[0] = max(gaps[0], g)
        return cfg.radius_floor, max(r, 1e-300)

    dims = [Dim("d", 1, cfg.search_max_d, "int"), Dim("scale_a", 1e-2, 1e2, "log"), Dim("scale_b", 1e-2, 1e2, "log"),
            Dim("cond_a", 1.0, 1e3, "log"), Dim("mix", 0.0, 1.0), Dim("t", 1e-3, 16.0, "log"),
            Dim("seed", 0, 2 ** 20, "int")]
    search = search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed)
    return Prop41Result(cfg.model, cfg.radius_floor, radius, jac, mismatch, cfg.trials, search, gaps[0])


def prop41_verdict(result: Prop41Result) -> Verdict:
    """A bound (Prop. 4.1): at every fixed point, random or searched, some eigenvalue != 1 of J(A, B) has modulus
    >= radius_floor (ratio radius_floor / |lambda| <= 1 + PROP41_ROUND, the float64 round-off of the moduli), the
    formula J(A, B) is the Jacobian of the step map (complex-step gap <= PROP41_JACOBIAN_TOL, random and searched
    instances) and, for the RevNet, the spectrum is the roots of the quadratics l^2 - (2 + mu) l + 1 of the proof
    (to 1e-6)."""
    measured = result.to_measured()
    measured.pop("search", None)
    expected = {"ratio_max": 1.0 + PROP41_ROUND, "jacobian_gap_max": PROP41_JACOBIAN_TOL}
    if result.model == "revnet":
        expected["root_mismatch_max"] = 1e-6
    verdict = threshold_verdict("bound", measured, expected, context=(
        f"{result.model}: radius_floor / (largest |eigenvalue != 1|) over {result.trials} random (A, B); "
        "Jacobian formula vs complex steps of the map; spectrum vs roots of l^2 - (2 + mu) l + 1, mu in Sp(AB)"))
    return worst_case_verdict(verdict, result.search, ratio_max=1.0 + PROP41_ROUND)


PROP41_PRESETS = {
    "check": Prop41Config(),
    # Prop. 4.1 has no sizes; the LISTA experiment of Sec. 4.3.3 uses p = 32 sparse codes
    "paper": Prop41Config(d=32, trials=2000, search_budget=4000, search_max_d=32),
}


# ---------------------------------------------------------------- bits of the exact inverse, Sec. 4.3.2

def _fractions(value):
    """``value`` as a tuple of integer pairs (num, den) with 1 <= num < den, or a TypeError/ValueError."""
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple) or not all(isinstance(g, (tuple, list)) for g in value):
        raise TypeError("not a tuple of pairs")
    out = []
    for g in value:
        if len(g) != 2 or not all(isinstance(t, int) and not isinstance(t, bool) for t in g):
            raise TypeError("not a pair of integers")
        if not 1 <= g[0] < g[1]:
            raise ValueError("not 1 <= num < den")
        out.append((int(g[0]), int(g[1])))
    if not out:
        raise ValueError("empty")
    return tuple(out)


def _parse_fractions(text):
    """``"1/2|9/10"`` as ((1, 2), (9, 10))."""
    try:
        return tuple(tuple(int(t) for t in part.split("/")) for part in text.split("|") if part.strip())
    except ValueError:
        raise ValueError(f"`gammas` must be fractions num/den separated by |; got {text.strip()!r}") from None


def bits_upper(depth, num, den, form="recursion"):
    """The bound on the buffer's bits per coordinate after ``depth`` exact multiplications by gamma = num / den.

    The forward step buf <- (buf den + r) div num with 0 <= r < den gives, from buf = 0,
    buf_N <= (den - 1)/(den - num) ((den/num)^N - 1) < (den/num)^N / (1 - gamma), so its bit length is at most
    N log2(1/gamma) + log2(1/(1 - gamma)) + 1 (``form="recursion"``): the count N log2(1/gamma) of Sec. 4.3.2 plus
    the recursion's additive terms. ``form="leading"`` is the count alone (a negative control: buffers exceed it).
    """
    lead = depth * math.log2(den / num)
    return lead if form == "leading" else lead + math.log2(den / (den - num)) + 1


@dataclasses.dataclass(frozen=True)
class BitsConfig(Config):
    """Bit-exact inversion and the buffer size of Sec. 4.3.2 (exact multiplication of App. 4.C)."""

    d: int = field(Int(low=1), 8, "State dimension.")
    batch: int = field(Int(low=1), 4, "Batch size.")
    depth: int = field(Int(low=1), 200, "Depth N.")
    gammas: tuple = field(Custom(_fractions, "a non-empty tuple of integer pairs (num, den) with 1 <= num < den",
                                 type_name="tuple of (int, int)", parse=_parse_fractions,
                                 invalid=[(0.5, TypeError), (((1.0, 2),), TypeError), ((), ValueError),
                                          (((2, 2),), ValueError), (((0, 3),), ValueError)],
                                 boundary=[((1, 2),)]),
                          ((1, 2), (9, 10), (99, 100)), "Momentum terms gamma = num / den.")
    frac_bits: int = field(Int(low=1), 52, "Fixed-point fraction bits.")
    seed: int = field(Seed(), 0, "Seed of the weights (tanh residual, entries of variance 1/d) and inputs.")
    inverse_den_offset: int = field(Int(low=0), 0, "Added to den in the inverse only (0 for the claim; a negative "
                                    "control sets it != 0).")
    bound_form: str = field(Choice("recursion", "leading"), "recursion", 'The upper bound on the buffer bits: '
                            '"recursion", N log2(1/gamma) + log2(1/(1 - gamma)) + 1 (the claim, see '
                            ':func:`bits_upper`); "leading", N log2(1/gamma) alone (a control that drops the '
                            "recursion's terms).")
    search_budget: int = field(Int(low=1), 300, "Evaluations of the worst-case search over the hypotheses.")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")
    search_max_depth: int = field(Int(low=1), 200, "Largest depth N of the search box.")


@dataclasses.dataclass(frozen=True)
class BitsResult:
    """Per gamma: bit-exact reconstruction, buffer bits (mean, max over coordinates) and the predictions; the
    worst-case search of max bits / upper bound, with the inexact inversions it met."""

    gammas: tuple
    depth: int
    exact: tuple
    mean_bits: tuple
    max_bits: tuple
    predicted: tuple  # N log2(1/gamma), the count of Sec. 4.3.2
    predicted_linear: tuple  # N (1 - gamma) / ln 2, its form for gamma close to 1
    upper: tuple  # bits_upper(N, num, den, bound_form)
    search: object = dataclasses.field(default=None, repr=False)
    search_inexact: int = 0

    def to_measured(self):
        out = {"gammas": [f"{a}/{b}" for a, b in self.gammas], "depth": self.depth, "exact": list(self.exact),
               "mean_bits": list(self.mean_bits), "max_bits": list(self.max_bits),
               "N_log2_1_over_gamma": list(self.predicted), "N_1mgamma_over_ln2": list(self.predicted_linear),
               "search_inexact": self.search_inexact}
        if self.search is not None:
            out["search"] = self.search.to_measured()
        return out


def _bits_run(theta, x0, v0, num, den, frac_bits, den_offset):
    """Forward exact, then inverse: (buffer bits per coordinate, whether the inverse gave the rounded inputs back
    and an empty buffer)."""
    import theory.momentum as M

    x, v, buf = M.forward_exact(x0, v0, theta, "tanh", num, den, frac_bits)
    bits = [int(b).bit_length() for b in buf.ravel()]
    rx, rv, rb = M.inverse_exact(x, v, buf, theta, "tanh", num, den + den_offset, frac_bits)
    v_ref = 0 if v0 is None else M.to_fixed(v0, frac_bits)
    exact = bool((rx == M.to_fixed(x0, frac_bits)).all() and (rv == v_ref).all() and (rb == 0).all())
    return bits, exact


def measure_bits(cfg: BitsConfig) -> BitsResult:
    """Run :func:`theory.momentum.forward_exact`, invert, and count the buffer's bits per coordinate; then search the
    hypotheses for the largest ratio max bits / :func:`bits_upper`.

    The search box: N in [1, search_max_depth] and den in [2, 1000] (log scales), gamma's position num / den in
    (0, 1), d in [1, 8], frac_bits in [8, 60], the scales of the weights (1e-2 to 10), of x0 and of v0 (1e-3 to
    1e3, log scales), and a seed; every searched instance is also inverted and must be bit exact.
    """
    from theory.worst_case import Dim, search_worst_case

    rng = np.random.default_rng(cfg.seed)
    theta = rng.standard_normal((cfg.depth, cfg.d, cfg.d)) / math.sqrt(cfg.d)
    x0 = rng.standard_normal((cfg.batch, cfg.d))
    exact, mean_b, max_b, pred, lin, up = [], [], [], [], [], []
    for num, den in cfg.gammas:
        bits, ok = _bits_run(theta, x0, None, num, den, cfg.frac_bits, cfg.inverse_den_offset)
        exact.append(ok)
        g = num / den
        mean_b.append(float(np.mean(bits)))
        max_b.append(int(max(bits)))
        pred.append(cfg.depth * math.log2(den / num))
        lin.append(cfg.depth * (1 - g) / math.log(2))
        up.append(bits_upper(cfg.depth, num, den, cfg.bound_form))
    inexact = [0]

    def ratio(inst):
        den = int(inst["den"])
        num = min(den - 1, max(1, int(round(inst["gamma"] * den))))
        N, d = int(inst["depth"]), int(inst["d"])
        r = np.random.default_rng(int(inst["seed"]))
        th = inst["w_scale"] * r.standard_normal((N, d, d)) / math.sqrt(d)
        xs = inst["x_scale"] * r.standard_normal((2, d))
        vs = inst["v_scale"] * r.standard_normal((2, d))
        bits, ok = _bits_run(th, xs, vs, num, den, int(inst["frac_bits"]), cfg.inverse_den_offset)
        inexact[0] += not ok
        return max(bits), bits_upper(N, num, den, cfg.bound_form)

    dims = [Dim("depth", 1, cfg.search_max_depth, "log-int"), Dim("den", 2, 1000, "log-int"), Dim("gamma", 0.0, 1.0),
            Dim("d", 1, 8, "int"), Dim("frac_bits", 8, 60, "int"), Dim("w_scale", 1e-2, 10.0, "log"),
            Dim("x_scale", 1e-3, 1e3, "log"), Dim("v_scale", 1e-3, 1e3, "log"), Dim("seed", 0, 2 ** 20, "int")]
    search = search_worst_case(ratio, dims, budget=cfg.search_budget, seed=cfg.search_seed)
    return BitsResult(tuple(cfg.gammas), cfg.depth, tuple(exact), tuple(mean_b), tuple(max_b), tuple(pred),
                      tuple(lin), tuple(up), search, inexact[0])


def bits_verdict(result: BitsResult) -> Verdict:
    """Bounds (Sec. 4.3.2): every inversion, of the random draws and of the searched instances, is bit exact (no
    inexact one); every buffer is within the upper bound :func:`bits_upper`, at the draws and over the worst-case
    search (max bits / bound <= 1); and at the draws the mean bits per coordinate lie within log2(1/(1 - gamma)) + 2
    below N log2(1/gamma) (digits of the buffer are not systematically small: a property of generic data, not
    searched, since v = 0 throughout leaves the buffer empty)."""
    measured = {"n_inexact": sum(not e for e in result.exact) + result.search_inexact,
                "ratio": max(m / u for m, u in zip(result.max_bits, result.upper))}
    expected = {"n_inexact_max": 0}
    for (num, den), m, mx, p, u in zip(result.gammas, result.mean_bits, result.max_bits, result.predicted,
                                       result.upper):
        g, key = num / den, f"{num}/{den}"
        measured.update({f"max_bits_{key}": mx, f"mean_bits_{key}": float(m)})
        expected.update({f"max_bits_{key}_max": u, f"mean_bits_{key}_min": p - math.log2(1 / (1 - g)) - 2})
    verdict = threshold_verdict("bound", measured, expected, context=(
        f"buffer bits per coordinate at N = {result.depth} vs N log2(1/gamma) = "
        + ", ".join(f"{p:.1f}" for p in result.predicted)
        + " (N(1-gamma)/ln2 = " + ", ".join(f"{v:.1f}" for v in result.predicted_linear) + ")"))
    return worst_case_verdict(verdict, result.search, ratio_max=1.0)


BITS_PRESETS = {
    "check": BitsConfig(),
    # Fig. 4.2: gamma = 1 - 1/(50 k) at depth k; d = 500 is far beyond a pure-integer CPU loop
    "paper": BitsConfig(d=64, batch=8, depth=1000, gammas=((1, 2), (9, 10), (49999, 50000)), search_budget=3000,
                        search_max_depth=1000),
}


# -------------------------------------------------------------------------- Prop. 4.11

@dataclasses.dataclass(frozen=True)
class Prop411Config(Config):
    """Negative scalings with v0 = 0 (Prop. 4.11 and the remark after Prop. 4.2 of the thesis)."""

    lambdas: tuple = field(Reals(-1, 0, closed="neither"), (-0.05, -0.2, -0.5, -0.8, -0.95, -0.99), "Targets lambda.")
    theta_scale: str = field(Choice("eps", "one"), "eps", '"eps": theta = eps (-pi^2 - 1/(4 eps^2)), Eq. (4.14) '
                             'written in the form (4.7) (the claim); "one": theta = -pi^2 - 1/(4 eps^2), which '
                             "forgets that (4.14) divides (4.7) by eps (negative control).")


@dataclasses.dataclass(frozen=True)
class Prop411Result:
    """Per target lambda: eps = -1/(2 ln|lambda|), Psi_eps(theta), and lambda_eps (Thm 4.4's threshold)."""

    lambdas: tuple
    eps: tuple
    reached: tuple
    lambda_eps: tuple

    def to_measured(self):
        return {"lambda": list(self.lambdas), "eps": list(self.eps), "Psi_eps(theta)": list(self.reached),
                "lambda_eps": list(self.lambda_eps)}


def measure_prop411(cfg: Prop411Config) -> Prop411Result:
    """Psi_eps of the scalar theta of Eq. (4.14), by the block exponential."""
    import theory.momentum as M

    eps_l, reached, lam_e = [], [], []
    for lam in cfg.lambdas:
        eps = -1.0 / (2.0 * math.log(-lam))
        theta = -math.pi ** 2 - 1.0 / (4.0 * eps * eps)
        if cfg.theta_scale == "eps":
            theta *= eps
        eps_l.append(eps)
        reached.append(float(M.psi([[theta]], eps)[0, 0]))
        lam_e.append(M.lambda_eps(eps)[0])
    return Prop411Result(tuple(cfg.lambdas), tuple(eps_l), tuple(reached), tuple(lam_e))


def prop411_verdict(result: Prop411Result) -> Verdict:
    """An identity (Prop. 4.11): Psi_eps(theta) = lambda to 1e-12 for every target, and lambda_eps <= lambda at each
    eps (Thm 4.4's consistency)."""
    errs = np.abs(np.asarray(result.reached, dtype=float) - np.asarray(result.lambdas, dtype=float))
    excess = np.asarray(result.lambda_eps, dtype=float) - np.asarray(result.lambdas, dtype=float)
    measured = {"max_abs_error": float(np.max(errs)), "max_lambda_eps_minus_lambda": float(np.max(excess))}
    return threshold_verdict("identity", measured, {"max_abs_error_max": 1e-12,
                                                    "max_lambda_eps_minus_lambda_max": 0.0},
                             context=f"|Psi_eps(theta) - lambda| over lambda in {list(result.lambdas)}")


PROP411_PRESETS = {
    "check": Prop411Config(),
    # Prop. 4.11 has no sizes: the paper preset is a finer grid of (-1, 0)
    "paper": Prop411Config(lambdas=tuple(float(-t) for t in np.round(np.linspace(0.01, 0.999, 100), 6))),
}


register("momentum.inversion", config=InversionConfig, presets=INVERSION_PRESETS, measure=measure_inversion,
         verdict=inversion_verdict, claims=("momentum/eq-4.3",),
         summary=lambda r: {"worst": r.worst, **{f"ratio gamma={g}": x for g, x in zip(r.gammas, r.max_ratio)}})
register("momentum.psi", config=PsiConfig, presets=PSI_PRESETS, measure=measure_psi, verdict=psi_verdict,
         claims=("momentum/prop-4.3",),
         summary=lambda r: {"series_error": r.series_error, **{f"slope eps={e}": s for e, s in
                                                               zip(r.eps_values, r.slopes)}})
register("momentum.representable", config=RepresentableConfig, presets=REPRESENTABLE_PRESETS,
         measure=measure_representable,
         verdict=representable_verdict, claims=("momentum/thm-4.4",),
         summary=lambda r: {"n_constructed": r.n_constructed, "max_scaled_error": r.max_scaled_error,
                            "n_excluded": r.n_excluded, "n_refused": r.n_refused})
register("momentum.lambda_table", config=LambdaConfig, presets=LAMBDA_PRESETS, measure=measure_lambda,
         verdict=lambda_verdict,
         claims=("momentum/fig-4.4/erratum",),
         summary=lambda r: {f"lambda eps={e}": l for e, l in zip(r.eps_values, r.lambdas)})
register("momentum.memory", config=MemoryConfig, presets=MEMORY_PRESETS, measure=measure_memory,
         verdict=memory_verdict, claims=("momentum/sec-4.3.2",),
         summary=lambda r: {"peak_method": r.peak_method[-1] / r.peak_method[0],
                            "peak_backprop": r.peak_backprop[-1] / r.peak_backprop[0],
                            "grad_rel_diff": r.grad_rel_diff})
register("momentum.prop42", config=Prop42Config, presets=PROP42_PRESETS, measure=measure_prop42,
         verdict=prop42_verdict, claims=("momentum/prop-4.2",),
         summary=lambda r: {f"deviation eps={e}": x for e, x in zip(r.eps_values, r.deviation)})
register("momentum.lambda_range", config=LambdaRangeConfig, presets=LAMBDA_RANGE_PRESETS,
         measure=measure_lambda_range, verdict=lambda_range_verdict, claims=("momentum/thm-4.4/lambda",),
         summary=lambda r: {f"scanned_min eps={e}": m for e, m in zip(r.eps_values, r.scanned_min)})
register("momentum.prop41", config=Prop41Config, presets=PROP41_PRESETS, measure=measure_prop41,
         verdict=prop41_verdict, claims=("momentum/prop-4.1",),
         summary=lambda r: {"min_radius": r.min_radius, "root_mismatch": r.root_mismatch})
register("momentum.bits", config=BitsConfig, presets=BITS_PRESETS, measure=measure_bits, verdict=bits_verdict,
         claims=("momentum/sec-4.3.2/bits",),
         summary=lambda r: {f"mean_bits {a}/{b}": m for (a, b), m in zip(r.gammas, r.mean_bits)})
register("momentum.prop411", config=Prop411Config, presets=PROP411_PRESETS, measure=measure_prop411,
         verdict=prop411_verdict, claims=("momentum/prop-4.11",),
         summary=lambda r: {"max_error": max(abs(a - b) for a, b in zip(r.reached, r.lambdas))})

# the appendix results of chapter 4 (Lemmas 4.5, 4.6, Props. 4.8-4.10, Thms 4.7 and 4.14)
from ._theory import *  # noqa: E402,F401,F403
from ._theory import __all__ as _theory_all  # noqa: E402

__all__ = __all__ + list(_theory_all)

from . import rings, memory_depth, reversible, prop415, lista, fig41_erratum  # noqa: E402,F401  (figure experiments)
from . import images  # noqa: E402,F401  (the image-dataset experiments)
from . import figures  # noqa: E402,F401  (the figure declarations of theory reproduce)
