r"""The AR processes of M. E. Sander's thesis, chapter 6 (paper key ``icl-ar``), as figures: Figs. 6.1, 6.2, 6.4.

* :func:`orbits`: Fig. 6.1, the AR process :math:`s_{t+1}=Ws_t` in :math:`\mathbb R^3` for two orthogonal W
  from :math:`s_1=\mathbf 1_3`: the tokens stay on the sphere of radius :math:`|s_1|` and the two orbits differ.
* :func:`trigonometric`: Fig. 6.2 and Prop. 6.11, the minima of the training loss (6.3) with orthogonal
  contexts of dimension 2 and one head implement :math:`2\cos\theta R_\theta-I_2=R_{2\theta}`: the trained
  :math:`p_TC\lambda` equals :math:`2\cos\theta` and :math:`p_{T-1}C\mathbf 1` equals -1.
* :func:`ar_fit` (Fig. 6.4, Moby Dick embedded by GPT-2) and :func:`ar_fit_synthetic` (its stand-in): the
  least-squares fit of an AR process (6.5) to each sequence of T = 5 tokens, original and shuffled, and the
  number of sequences whose fitting MSE exceeds 1e-12.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _field

import numpy as np

from ... import datasets, icl
from ...claims import Verdict, threshold_verdict
from .. import register
from ..config import Bool, Config, Int, Real, Seed, Seeds, field
from . import _random_start

__all__ = [
    "OrbitConfig", "OrbitResult", "orbits", "fig61_verdict", "FIG61_PRESETS",
    "TrigConfig", "TrigResult", "trigonometric", "fig62_verdict", "FIG62_PRESETS",
    "ARFitConfig", "SyntheticFitConfig", "ARFitResult", "ar_fit", "ar_fit_synthetic", "fit_mse", "fig64_verdict",
    "FIG64_PRESETS", "FIG64_SYNTHETIC_PRESETS", "FIT_THRESHOLD",
]


# ------------------------------------------------------------------------------------------ Fig. 6.1

@dataclass(frozen=True)
class OrbitConfig(Config):
    r"""Fig. 6.1: two AR processes :math:`s_{t+1}=Ws_t` in :math:`\mathbb R^3`, W Haar orthogonal,
    :math:`s_1=\mathbf 1_3`."""

    d: int = field(Int(low=2), 3, "Dimension (Fig. 6.1: 3).")
    T: int = field(Int(low=2), 50, "Number of tokens per sequence.")
    gain: float = field(Real(0, closed="neither"), 1.0, "W is gain times a Haar orthogonal matrix: 1 is the "
                        "figure's (norm preserving); another value, which a negative control uses, leaves the sphere.")
    seed: int = field(Seed(), 0, "Seed of the two matrices.")


FIG61_PRESETS = {"check": OrbitConfig(), "paper": OrbitConfig(T=200)}


@dataclass(frozen=True)
class OrbitResult:
    """Two orbits and their norms.

    Attributes
    ----------
    s : ndarray, shape (2, T, d)
    norm_dev : float
        max over both orbits and t of | |s_t| - |s_1| | / |s_1|.
    separation : float
        max over t of |s_t - s'_t| / |s_1|: the two orbits differ.
    """

    s: np.ndarray = _field(repr=False)
    norm_dev: float = 0.0
    separation: float = 0.0

    def to_measured(self):
        return {"norm_dev": self.norm_dev, "separation": self.separation}


def orbits(config: OrbitConfig) -> OrbitResult:
    r"""Measure Fig. 6.1 (thesis, ch. 6): iterate :math:`s_{t+1}=Ws_t` for two W (float64)."""
    W = config.gain * icl.haar_orthogonal(config.d, size=2, rng=np.random.default_rng(config.seed))
    s = np.empty((2, config.T, config.d))
    s[:, 0] = 1.0
    for t in range(1, config.T):
        s[:, t] = np.einsum("kij,kj->ki", W, s[:, t - 1])
    r0 = np.sqrt(config.d)
    norms = np.linalg.norm(s, axis=-1)
    return OrbitResult(s, float(np.max(np.abs(norms - r0)) / r0),
                       float(np.max(np.linalg.norm(s[0] - s[1], axis=-1)) / r0))


#: Fig. 6.1: the tokens stay on the sphere to round-off; the two orbits are apart by at least 10% of the radius
FIG61_TOL = {"norm": 1e-12, "separation": 0.1}


def fig61_verdict(result: OrbitResult, tol=FIG61_TOL) -> Verdict:
    """Fig. 6.1: relative norm deviation <= ``norm`` and separation of the two orbits >= ``separation``."""
    return threshold_verdict("identity", result, {"norm_dev_max": tol["norm"], "separation_min": tol["separation"]},
                             context="two Haar-orthogonal W in R^3 from s_1 = 1_3")


# ------------------------------------------------------------------------------------------ Fig. 6.2

@dataclass(frozen=True)
class TrigConfig(Config):
    r"""Fig. 6.2: gradient flow on the exact loss (6.3), orthogonal contexts of dimension d = 2δ, H heads, then the
    in-context relation implemented at the minimum reached."""

    delta: int = field(Int(low=1), 2, "Conjugate pairs δ (d = 2δ).")
    heads: int = field(Int(low=1), 3, "H; δ <= H < d is the rank-δ case of Prop. 6.11 where the relation is the "
                       "trigonometric one; H >= d allows full-rank minima (a negative control).")
    tmax: int = field(Int(low=3), 6, "T_max.")
    seeds: tuple = field(Seeds(), (0, 1, 2), "Seeds of the initialisations (entries i.i.d. N(0, 0.3²)).")
    lr: float = field(Real(0, closed="neither"), 0.01, "Euler step of the flow.")
    steps: int = field(Int(low=1), 200000, "Largest number of steps.")
    thetas: int = field(Int(low=2), 64, "Contexts (θ_1, ..., θ_δ), i.i.d. uniform on [0, 2π), where the relation "
                        "is evaluated.")


FIG62_PRESETS = {"check": TrigConfig(), "paper": TrigConfig(delta=5, heads=8, tmax=15, lr=0.002,
                                                           seeds=tuple(range(10)))}


@dataclass(frozen=True)
class TrigResult:
    r"""The trained relation against :math:`2\cos\theta R_\theta-I_2=R_{2\theta}`.

    Attributes
    ----------
    final_loss : tuple of float
    cos_err : tuple of float
        Per seed, max over T, contexts and i of :math:`|p_T(C\lambda)_i-2\cos\theta_{k(i)}|`,
        :math:`\lambda=(e^{i\theta_1},e^{-i\theta_1},\dots)`, k(i) the pair of coordinate i.
    identity_err : tuple of float
        Per seed, max over T of :math:`|p_{T-1}(C\mathbf 1)_i+1|`.
    formula_err : float
        max over θ of :math:`\|2\cos\theta R_\theta-I_2-R_{2\theta}\|`.
    theta, g : ndarray
        The angles and the trained :math:`p_T(C\lambda)_1` at T = T_max (first seed), for the figure.
    """

    final_loss: tuple
    cos_err: tuple
    identity_err: tuple
    formula_err: float
    theta: np.ndarray = _field(repr=False)
    g: np.ndarray = _field(repr=False)
    h: float = 0.0
    heads: int = 1
    delta: int = 1

    def to_measured(self):
        return {"max_final_loss": max(self.final_loss), "max_cos_err": max(self.cos_err),
                "max_identity_err": max(self.identity_err), "formula_err": self.formula_err, "heads": self.heads,
                "delta": self.delta}


def _rot(t):
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


def trigonometric(config: TrigConfig) -> TrigResult:
    r"""Measure Fig. 6.2 (thesis, ch. 6): train (A, B, P) by :func:`theory.icl.gradient_flow` (exact loss,
    orthogonal contexts, δ = 1) and read off the in-context map: by Lemma 6.6 the prediction is
    :math:`(p_T\,C\lambda\odot\lambda+p_{T-1}C\mathbf 1)\odot\lambda^{T-2}`, which is
    :math:`(2\cos\theta R_\theta-I_2)s_{T-1}` when :math:`p_TC\lambda=2\cos\theta` and :math:`p_{T-1}C\mathbf 1=-1`."""
    d = 2 * config.delta
    grid = np.random.default_rng(config.seeds[0] + 10**6).uniform(0, 2 * np.pi, (config.thetas, config.delta))
    grid[:, 0] = 2 * np.pi * np.arange(config.thetas) / config.thetas       # θ_1 on a regular grid (the figure)
    lam = np.repeat(np.exp(1j * grid), 2, axis=1)
    lam[:, 1::2] = lam[:, 1::2].conj()                                        # (contexts, d)
    two_cos = np.repeat(2 * np.cos(grid), 2, axis=1)
    theta = grid[:, 0]
    formula = max(float(np.linalg.norm(2 * np.cos(t) * _rot(t) - np.eye(2) - _rot(2 * t))) for t in theta)
    out = {"final_loss": [], "cos_err": [], "identity_err": []}
    first = None
    for seed in config.seeds:
        A0, B0, P0 = _random_start(config.heads, d, config.tmax, 0.3, seed)
        r = icl.gradient_flow(A0, B0, P0, config.tmax, "orthogonal", lr=config.lr, steps=config.steps, tol=1e-12)
        C = r.Bmat.T @ r.Amat
        ce, ie = 0.0, 0.0
        for T in range(3, config.tmax + 1):
            pT, pm = r.P[T - 2, T - 1], r.P[T - 2, T - 2]
            g = pT * (lam @ C.T)                                              # p_T C λ, per context
            ce = max(ce, float(np.max(np.abs(g - two_cos))))
            ie = max(ie, float(np.max(np.abs(pm * C.sum(axis=1) + 1.0))))
            if T == config.tmax and first is None:
                first = (g[:, 0].real, float(np.mean(pm * C.sum(axis=1))))
        out["final_loss"].append(float(r.losses[-1]))
        out["cos_err"].append(ce)
        out["identity_err"].append(ie)
    return TrigResult(**{k: tuple(v) for k, v in out.items()}, formula_err=formula, theta=theta, g=first[0],
                      h=first[1], heads=config.heads, delta=config.delta)


#: Fig. 6.2: loss at the minimum, and the trained coefficients against 2cos θ and -1
FIG62_TOL = {"loss": 1e-8, "coef": 1e-3, "formula": 1e-13}


def fig62_verdict(result: TrigResult, tol=FIG62_TOL) -> Verdict:
    r"""Fig. 6.2: every seed reaches loss <= ``loss`` with :math:`|p_TC\lambda-2\cos\theta|\le` ``coef`` and
    :math:`|p_{T-1}C\mathbf 1+1|\le` ``coef`` at every T and θ, and :math:`2\cos\theta R_\theta-I_2=R_{2\theta}`
    holds to ``formula``."""
    return threshold_verdict("identity", result, {"max_final_loss_max": tol["loss"], "max_cos_err_max": tol["coef"],
                                                  "max_identity_err_max": tol["coef"],
                                                  "formula_err_max": tol["formula"]},
                             context=f"H = {result.heads}, d = {2 * result.delta}, {len(result.final_loss)} seeds")


# ------------------------------------------------------------------------------------------ Fig. 6.4

#: the thesis's display threshold of the fitting MSE (Fig. 6.4)
FIT_THRESHOLD = 1e-12


def fit_mse(seqs, chunk=1024):
    r"""Per sequence of ``seqs`` (n, T, d), the MSE of the least-squares AR fit (6.5):
    :math:`\min_W\frac1{(T-1)d}\sum_{t<T}\|s_{t+1}-Ws_t\|^2`, solved through the Gram matrix of
    :math:`(s_1,\dots,s_{T-1})` (float64; pseudo-inverse with relative cut-off 1e-10)."""
    out = []
    for i in range(0, len(seqs), chunk):
        s = np.asarray(seqs[i:i + chunk], dtype=np.float64)
        X, Y = s[:, :-1], s[:, 1:]                                     # rows s_t, s_{t+1}
        G = np.einsum("nti,nui->ntu", X, X)
        Pi = np.linalg.pinv(G, rcond=1e-10, hermitian=True) @ G        # projector onto the span of the s_t
        R = Y - np.einsum("ntu,nui->nti", np.swapaxes(Pi, 1, 2), Y)    # Y (I - Π): residual of Y on row space
        out.append(np.mean(R ** 2, axis=(1, 2)))
    return np.concatenate(out) if out else np.zeros(0)


@dataclass(frozen=True)
class ARFitConfig(Config):
    """Fig. 6.4 (§6.6): AR fits of Moby Dick tokens embedded by GPT-2 (large, d = 1280), T = 5, original and
    shuffled."""

    T: int = field(Int(low=2), 5, "Tokens per sequence (§6.6: 5).")
    max_tokens: int = field(Int(low=0), 0, "Tokens kept from the start of the book (0: all, about 325 000 in "
                            "§6.6).")
    shuffle: bool = field(Bool(), True, "Shuffle the tokens for D_shuffle (False: D_shuffle = D, a negative "
                          "control).")
    seed: int = field(Seed(), 0, "Seed of the permutation.")
    data: str | None = datasets.data_field("Moby Dick (gutenberg/) and GPT-2 large (gpt2-large/)")


FIG64_PRESETS = {"check": ARFitConfig(max_tokens=50000), "paper": ARFitConfig()}


@dataclass(frozen=True)
class SyntheticFitConfig(Config):
    r"""A stand-in for Fig. 6.4: sequences of T one-hot tokens of a vocabulary of V that follow an AR process
    :math:`s_{t+1}=P_\sigma s_t` (σ a random permutation of the vocabulary, one per sequence, the start token
    uniform), original and shuffled across sequences."""

    vocab: int = field(Int(low=2), 64, "Vocabulary size V (= d, one-hot embeddings).")
    n: int = field(Int(low=1), 4096, "Number of sequences.")
    T: int = field(Int(low=2), 5, "Tokens per sequence (§6.6: 5).")
    shuffle: bool = field(Bool(), True, "Shuffle the tokens for D_shuffle (False: a negative control).")
    seed: int = field(Seed(), 0, "Seed.")


FIG64_SYNTHETIC_PRESETS = {"check": SyntheticFitConfig(), "paper": SyntheticFitConfig(vocab=1280, n=65000)}


@dataclass(frozen=True)
class ARFitResult:
    """Fitting MSEs, original and shuffled.

    Attributes
    ----------
    mse, mse_shuffled : ndarray
    count, count_shuffled : int
        Sequences with MSE > 1e-12.
    n : int
        Number of sequences.
    tokens : int
        Number of tokens before the cut into sequences.
    """

    mse: np.ndarray = _field(repr=False)
    mse_shuffled: np.ndarray = _field(repr=False)
    count: int = 0
    count_shuffled: int = 0
    n: int = 0
    tokens: int = 0

    def to_measured(self):
        return {"count": self.count, "count_shuffled": self.count_shuffled, "n": self.n, "tokens": self.tokens,
                "ratio": self.count_shuffled / max(self.count, 1)}


def _fits(tokens, T, shuffle, seed, embed):
    n = len(tokens) // T
    ids = np.asarray(tokens[:n * T])
    perm = np.random.default_rng(seed).permutation(n * T) if shuffle else np.arange(n * T)
    a = fit_mse(_Embedded(ids.reshape(n, T), embed))
    b = fit_mse(_Embedded(ids[perm].reshape(n, T), embed))
    return ARFitResult(a, b, int(np.sum(a > FIT_THRESHOLD)), int(np.sum(b > FIT_THRESHOLD)), n, len(tokens))


class _Embedded:
    """Lazy (n, T, d) view: token ids embedded chunk by chunk."""

    def __init__(self, ids, embed):
        self.ids, self.embed = ids, embed

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, sl):
        return self.embed(self.ids[sl])


def ar_fit(config: ARFitConfig) -> ARFitResult:
    r"""Measure Fig. 6.4 (thesis, ch. 6, §6.6): Moby Dick tokenised by GPT-2's tokenizer, each token replaced by
    its GPT-2 embedding, cut into sequences of T tokens (D) and the same after a permutation of all tokens
    (D_shuffle); fit (6.5) to each sequence by least squares.

    Raises
    ------
    theory.datasets.DatasetMissing
        Without the book or GPT-2's files.
    """
    text = datasets.load("moby-dick", config.data)
    emb, encode = datasets.load("gpt2", config.data)
    ids = encode(text)
    if config.max_tokens:
        ids = ids[:config.max_tokens]
    emb = np.asarray(emb)
    return _fits(ids, config.T, config.shuffle, config.seed, lambda i: emb[i])


def ar_fit_synthetic(config: SyntheticFitConfig) -> ARFitResult:
    """Measure the stand-in of Fig. 6.4: one-hot tokens following a per-sequence permutation of the vocabulary."""
    rng = np.random.default_rng(config.seed)
    ids = np.empty((config.n, config.T), dtype=np.int64)
    ids[:, 0] = rng.integers(config.vocab, size=config.n)
    for i in range(config.n):
        sigma = rng.permutation(config.vocab)
        for t in range(1, config.T):
            ids[i, t] = sigma[ids[i, t - 1]]
    eye = np.eye(config.vocab)
    return _fits(ids.ravel(), config.T, config.shuffle, config.seed + 1, lambda i: eye[i])


#: Fig. 6.4: shuffled sequences are at least twice as often badly fitted (MSE > 1e-12) as original ones (the
#: thesis prints "4 times more")
FIG64_TOL = {"ratio": 2.0}


def fig64_verdict(result: ARFitResult, tol=FIG64_TOL) -> Verdict:
    """Fig. 6.4: count(MSE > 1e-12, shuffled) / max(count(MSE > 1e-12, original), 1) >= ``ratio``."""
    return threshold_verdict("qualitative", result, {"ratio_min": tol["ratio"]},
                             context=f"{result.n} sequences: {result.count} original and {result.count_shuffled} "
                                     f"shuffled with fitting MSE > {FIT_THRESHOLD:g}")


def _summary(r):
    return {k: v for k, v in r.to_measured().items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


for _name, _cfg, _presets, _measure, _verdict, _claims in (
    ("fig61", OrbitConfig, FIG61_PRESETS, orbits, fig61_verdict, ("icl-ar/fig-6.1",)),
    ("fig62", TrigConfig, FIG62_PRESETS, trigonometric, fig62_verdict, ("icl-ar/fig-6.2",)),
    ("fig64", ARFitConfig, FIG64_PRESETS, ar_fit, fig64_verdict, ("icl-ar/fig-6.4",)),
    ("fig64_synthetic", SyntheticFitConfig, FIG64_SYNTHETIC_PRESETS, ar_fit_synthetic, fig64_verdict,
     ("icl-ar/fig-6.4/synthetic",)),
):
    register(f"icl_ar.{_name}", config=_cfg, presets=_presets, measure=_measure, verdict=_verdict, claims=_claims,
             summary=_summary)
