"""Registered experiments of the i.i.d.-initialisation results and of Propositions 10 and 11 of paper key
``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth Regime", preprint 2022;
chapter 2 of P. Marion's thesis): one frozen, validated config per measurement, its presets (``"check"``:
exactly what the checks run; ``"paper"``: the document's own sizes where it has any), ``measure`` and the
verdict beside it. The measurements themselves are the functions of :mod:`._scaling_iid` and
:mod:`._scaling_limits`; this module gives them configs and names.

The bound of the weight-tied linear case of Proposition 11 (``scaling/prop-11/constant``) is searched by a
Hypothesis strategy in its check; its per-instance computation is
:func:`theory.experiments._scaling_limits.tied_linear_instance` (:data:`HYPOTHESIS_DRIVEN`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from theory.claims import bound_verdict, rate_verdict
from theory.experiments import _scaling_iid as iid
from theory.experiments import _scaling_limits as lim
from theory.experiments._registry import register
from theory.rates import fit_rate

#: the expectation every Monte-Carlo bound record takes (every comparison's ratio at most 1)
BOUND_EXPECTED = {"ratio_max": 1.0}
#: claims checked by a Hypothesis search in their check, with the package function computing one instance
HYPOTHESIS_DRIVEN = {"scaling/prop-11/constant": lim.tied_linear_instance}

_LAWS = iid.IID_LAWS + tuple(iid.EXTRA_LAWS)
_ARCH_NAMES = ("res1", "res2", "res3")


# --------------------------------------------------------------------------- validation helpers


def _where(cfg) -> str:
    return f"theory.experiments.scaling.{type(cfg).__name__}"


def _fail(cfg, name, expected):
    raise ValueError(f"`{name}` of {_where(cfg)} must be {expected}; got {getattr(cfg, name)!r}")


def _is_int(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer))


def _int(cfg, name, low=1):
    if not _is_int(getattr(cfg, name)) or getattr(cfg, name) < low:
        _fail(cfg, name, f"an int >= {low}")


def _pos(cfg, name):
    v = getattr(cfg, name)
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not (math.isfinite(v) and v > 0):
        _fail(cfg, name, "a positive finite number")


def _tuple(cfg, name):
    v = getattr(cfg, name)
    if not isinstance(v, tuple) or len(v) == 0:
        _fail(cfg, name, "a non-empty tuple")
    return v


def _ints(cfg, name, low=0, increasing=False):
    v = _tuple(cfg, name)
    if not all(_is_int(x) and x >= low for x in v) or (increasing and any(b <= a for a, b in zip(v, v[1:]))):
        _fail(cfg, name, f"a non-empty tuple of {'increasing ' if increasing else ''}ints >= {low}")


def _laws(cfg, name="laws"):
    v = _tuple(cfg, name) if name == "laws" else (getattr(cfg, name),)
    if not all(x in _LAWS for x in v):
        _fail(cfg, name, f"made of the laws {_LAWS}")


def _sizes(cfg, name="sizes"):
    v = _tuple(cfg, name)
    if not all(isinstance(s, tuple) and len(s) == 2 and _is_int(s[0]) and s[0] >= 1 and _is_int(s[1]) and s[1] >= 2
               for s in v):
        _fail(cfg, name, "a non-empty tuple of (d >= 1, draws >= 2) pairs")


def _archs(cfg, name="archs"):
    v = _tuple(cfg, name)
    if not all(isinstance(a, tuple) and len(a) == 2 and a[0] in _ARCH_NAMES and isinstance(a[1], str) for a in v):
        _fail(cfg, name, f"a non-empty tuple of (arch in {_ARCH_NAMES}, activation) pairs")


def _unit(cfg, name):
    v = _tuple(cfg, name)
    if not all(isinstance(x, (int, float)) and 0.0 < x <= 1.0 for x in v):
        _fail(cfg, name, "a non-empty tuple of levels in (0, 1]")


def _plan(cfg, name="plan"):
    v = _tuple(cfg, name)
    ok = all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], (int, float)) and p[0] > 0
             and isinstance(p[1], tuple) and len(p[1]) > 0 and all(_is_int(L) and L >= 1 for L in p[1]) for p in v)
    if not ok:
        _fail(cfg, name, "a non-empty tuple of (beta > 0, (depths >= 1, ...)) pairs")


def _choice(cfg, name, options):
    if getattr(cfg, name) not in options:
        _fail(cfg, name, f"one of {options}")


@dataclass(frozen=True)
class TrackerResult:
    """A Monte-Carlo bound measurement: ``tracker`` holds every comparison (instance, ratio LHS/RHS),
    ``table`` the per-instance estimates the figures draw, ``info`` further plain figures."""

    config: Any
    tracker: Any
    table: tuple = ()
    info: dict = field(default_factory=dict)


def tracker_verdict(result: TrackerResult):
    """Every Monte-Carlo comparison within its window: :func:`theory.claims.bound_verdict` at ratio <= 1."""
    return bound_verdict(result.tracker.result(), BOUND_EXPECTED)


def _tracker_summary(result: TrackerResult) -> dict:
    r = result.tracker.result()
    return {"ratio_max": float(r.ratio), "n_instances": int(r.n_instances)}


def _check_type(config, cls, fn):
    if not isinstance(config, cls):
        raise TypeError(f"`config` of theory.experiments.scaling.{fn} must be a {cls.__name__}; "
                        f"got {type(config).__name__}")


# =========================================================================== one layer: (A2), (A4), Lemmas 15-17


@dataclass(frozen=True)
class MomentConfig:
    """One-layer Monte Carlo of (A2) (Proposition 1) or (A4) (Proposition 5), thesis Props. 2.1 and 2.5.

    Attributes
    ----------
    laws : tuple of str
        Weight laws (entries times sqrt(d) of unit variance): "gaussian", "uniform", "rademacher", or a
        law outside (A1) ("student5", "centered_exponential", "laplace", "shifted_gaussian").
    sizes : tuple of (int, int)
        (width d, number of weight draws) pairs.
    archs : tuple of (str, str)
        (architecture res1/res2/res3, activation) pairs of Table 1.
    slope : float
        Leaky-ReLU slope (0.8: a >= 1/sqrt 2 as (A2) needs).
    seed : int
        Base seed of the draws.
    """

    laws: tuple = iid.IID_LAWS
    sizes: tuple = ((16, 20_000), (64, 2_000))
    archs: tuple = iid.ARCHS
    slope: float = iid.SLOPE
    seed: int = 1

    def __post_init__(self):
        _laws(self)
        _sizes(self)
        _archs(self)
        _pos(self, "slope")
        _int(self, "seed", 0)


PROP1_PRESETS = {
    "check": MomentConfig(),
    # Proposition 1 has no experiment; Table 2's width (d = 40) and 10^5 draws
    "paper": MomentConfig(sizes=((40, 100_000),)),
}
PROP5_PRESETS = {"check": MomentConfig(seed=5), "paper": MomentConfig(sizes=((40, 100_000),), seed=5)}


def prop1(config: MomentConfig) -> TrackerResult:
    """(A2) for every (law, d, arch, h): 1/2 <= E||g||^2/||h||^2 <= 1 (1/2 for res-3), E||g||^8 <= C||h||^8."""
    _check_type(config, MomentConfig, "prop1")
    tracker, table = iid.prop1_tracker(config.laws, config.sizes, config.archs, config.slope, config.seed)
    return TrackerResult(config, tracker, tuple(table))


def prop5(config: MomentConfig) -> TrackerResult:
    """(A4) for every (law, d, arch, h, q), and the atom of Rademacher weights at h = flat (``info``)."""
    _check_type(config, MomentConfig, "prop5")
    tracker, table = iid.prop5_tracker(config.laws, config.sizes, config.archs, config.slope, config.seed)
    return TrackerResult(config, tracker, tuple(table), {"atom": iid.a4_atom()})


def _moment_summary(result):
    res3 = [r for r in result.table if r["arch"] == "res3"]
    out = _tracker_summary(result)
    if res3:
        out["max_abs_z_res3"] = max(abs(r["kappa"] - 0.5) / r["se"] for r in res3)
    return out


@dataclass(frozen=True)
class Lemma15Config:
    """Conditional moments (E1)-(E7) of Lemma 15 (thesis Lemma 2.15) at fixed h.

    Attributes
    ----------
    laws : tuple of str
        Laws of V and W (see :class:`MomentConfig`).
    d : int
        Width.
    alpha : float
        Scaling factor alpha_L.
    n : int
        Draws of (V, W).
    archs : tuple of (str, str)
        (architecture, activation) pairs.
    v_law : str or None
        Overrides the law of V (None: the same as W's).
    seed : int
        Base seed.
    """

    laws: tuple = iid.IID_LAWS
    d: int = 16
    alpha: float = 0.1
    n: int = 40_000
    archs: tuple = iid.LEMMA15_ARCHS
    v_law: str | None = None
    seed: int = 15

    def __post_init__(self):
        _laws(self)
        _int(self, "d")
        _pos(self, "alpha")
        _int(self, "n", 2)
        _archs(self)
        if self.v_law is not None:
            _laws(self, "v_law")
        _int(self, "seed", 0)


LEMMA15_PRESETS = {"check": Lemma15Config(), "paper": Lemma15Config(d=40, alpha=40 ** -0.5, n=100_000)}


def lemma15(config: Lemma15Config) -> TrackerResult:
    """Monte Carlo of (E1)-(E7) over (V, W) for every law, h and architecture."""
    _check_type(config, Lemma15Config, "lemma15")
    c = config
    tracker, table = iid.lemma15_tracker(c.laws, c.d, c.alpha, c.n, c.archs, c.v_law, c.seed)
    return TrackerResult(c, tracker, tuple(table))


@dataclass(frozen=True)
class Lemma16Config:
    """Lemma 16 (thesis Lemma 2.16): E||sigma(Wx)||^2 in [E||Wx||^2/2, E||Wx||^2], ReLU at 1/2.

    Attributes
    ----------
    laws : tuple of str
        Laws of W (symmetric for the lemma).
    d : int
        Width.
    n : int
        Draws of W.
    slope : float
        Leaky-ReLU slope.
    seed : int
        Base seed.
    """

    laws: tuple = iid.IID_LAWS + ("student5",)
    d: int = 16
    n: int = 20_000
    slope: float = iid.SLOPE
    seed: int = 16

    def __post_init__(self):
        _laws(self)
        _int(self, "d")
        _int(self, "n", 2)
        _pos(self, "slope")
        _int(self, "seed", 0)


LEMMA16_PRESETS = {"check": Lemma16Config(), "paper": Lemma16Config(d=40, n=100_000)}


def lemma16(config: Lemma16Config) -> TrackerResult:
    """Lemma 16's bounds and the ReLU equality (paired difference) per law and input."""
    _check_type(config, Lemma16Config, "lemma16")
    c = config
    return TrackerResult(c, iid.lemma16_tracker(c.laws, c.d, c.n, c.slope, c.seed))


@dataclass(frozen=True)
class Lemma16ErratumConfig:
    """Thesis Lemma 2.16 as printed ("centered" entries) against the preprint's symmetric entries.

    Attributes
    ----------
    printed_law : str
        A centered, asymmetric law the printed form admits.
    corrected_law : str
        A symmetric law (the corrected hypothesis).
    d : int
        Width.
    n : int
        Draws of W.
    """

    printed_law: str = "centered_exponential"
    corrected_law: str = "uniform"
    d: int = 16
    n: int = 20_000

    def __post_init__(self):
        _laws(self, "printed_law")
        _laws(self, "corrected_law")
        _int(self, "d")
        _int(self, "n", 2)


LEMMA16_ERRATUM_PRESETS = {"check": Lemma16ErratumConfig(), "paper": Lemma16ErratumConfig(d=40, n=100_000)}


@dataclass(frozen=True)
class Lemma16ErratumResult:
    """``printed`` / ``corrected``: Lemma 16's trackers under the two laws; the consequences of the printed
    hypothesis for Propositions 2.1, 2.5 and Lemma 2.15 (E3) in ``measured``."""

    config: Lemma16ErratumConfig
    printed: Any
    corrected: Any
    measured: dict


def lemma16_erratum(config: Lemma16ErratumConfig) -> Lemma16ErratumResult:
    """Lemma 16, Props. 2.1(ii), 2.5(ii) and (E3) of Lemma 2.15 under the printed law, Lemma 16 under the
    corrected one."""
    _check_type(config, Lemma16ErratumConfig, "lemma16_erratum")
    c = config
    law = (c.printed_law,)
    tracker = iid.lemma16_tracker(laws=law, d=c.d, n=c.n)
    corrected = iid.lemma16_tracker(laws=(c.corrected_law,), d=c.d, n=c.n)
    _, t1 = iid.prop1_tracker(laws=law, sizes=((c.d, c.n),), archs=(("res3", "relu"),))
    _, t5 = iid.prop5_tracker(laws=law, sizes=((c.d, c.n),), archs=(("res3", "relu"),))
    t15, _ = iid.lemma15_tracker(laws=("gaussian",), d=c.d, n=c.n, archs=(("res1", "identity"),), v_law=law[0])
    e3 = [(inst["mean"], inst["se"]) for inst, _ in t15.rows if inst["item"] == "E3" and inst["h"] == "e1"][0]
    measured = {**tracker.result().to_measured(), "exact_2_over_e": 2 / math.e,
                "prop-2.1 kappa res-3 at e1": [r["kappa"] for r in t1 if r["h"] == "e1"][0],
                "prop-2.5 kappa' res-3 at h = q = e1":
                    [r["kappa"] for r in t5 if r["h"] == "e1" and r["q"] == "parallel"][0],
                "lemma-2.15 E3 E(Y1 Y2) at e1 (mean, se)": list(e3)}
    return Lemma16ErratumResult(c, tracker, corrected, measured)


def lemma16_erratum_verdict(result: Lemma16ErratumResult):
    """(printed verdict, corrected verdict): the printed form must fail, the corrected one hold."""
    return (bound_verdict(result.printed.result(), BOUND_EXPECTED),
            bound_verdict(result.corrected.result(), BOUND_EXPECTED))


@dataclass(frozen=True)
class Lemma17Config:
    """Lemma 17 (thesis Lemma 2.17): E||Wx||^2 = s^2 d ||x||^2 for centered i.i.d. entries of variance s^2.

    Attributes
    ----------
    laws : tuple of str
        Laws (centered; the lemma needs no symmetry).
    scales : tuple of float
        Entries of variance scale^2/d.
    d : int
        Width.
    n : int
        Draws of W.
    seed : int
        Base seed.
    """

    laws: tuple = iid.IID_LAWS + ("centered_exponential", "student5")
    scales: tuple = (1.0, 3.0)
    d: int = 16
    n: int = 20_000
    seed: int = 17

    def __post_init__(self):
        _laws(self)
        _tuple(self, "scales")
        if not all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in self.scales):
            _fail(self, "scales", "a non-empty tuple of positive numbers")
        _int(self, "d")
        _int(self, "n", 2)
        _int(self, "seed", 0)


LEMMA17_PRESETS = {"check": Lemma17Config(), "paper": Lemma17Config(d=40, n=100_000)}


def lemma17(config: Lemma17Config) -> TrackerResult:
    """|mean - s^2 d ||x||^2| within Z standard errors per law, scale and input."""
    _check_type(config, Lemma17Config, "lemma17")
    c = config
    return TrackerResult(c, iid.lemma17_tracker(c.laws, c.scales, c.d, c.n, c.seed))


# =========================================================================== Appendix C: Lemmas 19-21


@dataclass(frozen=True)
class Lemma19Config:
    """Lemma 19 (thesis Lemma 2.19): eps|X - X'| is 2 s^2-sub-Gaussian.

    Attributes
    ----------
    laws : tuple of str
        Scalar laws with a closed-form MGF ("gaussian", "uniform", "rademacher", "laplace").
    s : float
        Sub-Gaussian parameter of the laws.
    lambdas : tuple of float
        Grid of lambda.
    n : int
        Draws of the literal Monte-Carlo confirmation.
    seed : int
        Seed.
    """

    laws: tuple = iid.IID_LAWS
    s: float = iid.S
    lambdas: tuple = tuple(float(x) for x in iid.LEMMA19_LAMBDAS)
    n: int = 200_000
    seed: int = 19

    def __post_init__(self):
        _tuple(self, "laws")
        if not all(x in ("gaussian", "uniform", "rademacher", "laplace") for x in self.laws):
            _fail(self, "laws", "made of 'gaussian', 'uniform', 'rademacher', 'laplace'")
        _pos(self, "s")
        _tuple(self, "lambdas")
        if not all(isinstance(x, float) and math.isfinite(x) and x > 0 for x in self.lambdas):
            _fail(self, "lambdas", "a non-empty tuple of positive floats")
        _int(self, "n", 2)
        _int(self, "seed", 0)


LEMMA19_PRESETS = {"check": Lemma19Config(), "paper": Lemma19Config(n=10**7)}


def lemma19(config: Lemma19Config) -> TrackerResult:
    """ln E e^{lam eps|X - X'|} <= lam^2 s^2 on the grid (closed forms), with a Monte-Carlo confirmation."""
    _check_type(config, Lemma19Config, "lemma19")
    c = config
    return TrackerResult(c, iid.lemma19_tracker(c.laws, c.s, np.asarray(c.lambdas), c.n, c.seed))


@dataclass(frozen=True)
class Lemma20Config:
    """Lemma 20 (thesis Lemma 2.20): P(<Vx, y>/(||x|| ||y||) >= t) <= 2 exp(-d t^2/(4 s^2)).

    Attributes
    ----------
    laws : tuple of str
        Laws of V.
    d : int
        Width.
    n : int
        Draws of V.
    scale : float
        Entries of variance scale^2/d (1 for the lemma).
    s : float
        Sub-Gaussian parameter the bound uses.
    seed : int
        Base seed.
    """

    laws: tuple = iid.IID_LAWS
    d: int = 16
    n: int = 20_000
    scale: float = 1.0
    s: float = iid.S
    seed: int = 20

    def __post_init__(self):
        _laws(self)
        _int(self, "d")
        _int(self, "n", 2)
        _pos(self, "scale")
        _pos(self, "s")
        _int(self, "seed", 0)


LEMMA20_PRESETS = {"check": Lemma20Config(), "paper": Lemma20Config(d=40, n=100_000)}


def lemma20(config: Lemma20Config) -> TrackerResult:
    """Tail frequencies against the bound (and the Gaussian closed form at scale 1)."""
    _check_type(config, Lemma20Config, "lemma20")
    c = config
    return TrackerResult(c, iid.lemma20_tracker(c.laws, c.d, c.n, c.scale, c.s, c.seed))


@dataclass(frozen=True)
class Lemma21Config:
    """Lemma 21 (thesis Lemma 2.21): moments 4 and 8 of ||Vx||/||x||.

    Attributes
    ----------
    laws : tuple of str
        Laws of V.
    sizes : tuple of (int, int)
        (width d, draws) pairs.
    scale : float
        Entries of variance scale^2/d.
    s : float
        Sub-Gaussian parameter the bounds use.
    seed : int
        Base seed.
    """

    laws: tuple = iid.IID_LAWS
    sizes: tuple = iid.LEMMA21_SIZES
    scale: float = 1.0
    s: float = iid.S
    seed: int = 21

    def __post_init__(self):
        _laws(self)
        _sizes(self)
        _pos(self, "scale")
        _pos(self, "s")
        _int(self, "seed", 0)


LEMMA21_PRESETS = {"check": Lemma21Config(), "paper": Lemma21Config(sizes=((40, 100_000),))}


def lemma21(config: Lemma21Config) -> TrackerResult:
    """E||Vx||^4 and E||Vx||^8 against the bounds (Gaussian exact moments within Z s.e.)."""
    _check_type(config, Lemma21Config, "lemma21")
    c = config
    return TrackerResult(c, iid.lemma21_tracker(c.laws, c.sizes, c.scale, c.s, c.seed))


# =========================================================================== explicit networks (Figures 1-3)


@dataclass(frozen=True)
class NetConfig:
    """The explicit res-3 networks of Figures 1 and 3 (Table 2, reduced), used by Corollaries 4, 8,
    Figures 1, 3, Lemma 14, Corollary 4's limit and Proposition 7 (thesis chapter 2 numbers alike).

    Attributes
    ----------
    seeds : tuple of int
        One network draw per seed.
    plan : tuple of (float, tuple of int)
        (beta, depths) pairs; a seed's depth-L network uses the first L layers of its deepest draw.
    law : str
        Weight law.
    d : int
        Width.
    seed0 : int
        Offset of the seeds.
    quantity : str
        "h": ||h_L - h_0||/||h_0|| (Cor. 4, Fig. 1); "p": ||p_0 - p_L||/||p_L|| (Cor. 8, Fig. 3).
    figure_depths : tuple of int
        The figures' depth grid (Figures 1 and 3 keep these depths of every panel).
    reference : bool
        Also compute the exact-in-law Gaussian reference slope at beta = 1/4 (Corollary 4's record).
    slope_shift : float
        Added to every predicted slope of the regimes (0 for the claims; +-0.05 in the negative controls,
        which must then fail).
    """

    seeds: tuple = iid.FIG_SEEDS
    plan: tuple = iid.FIG_PLAN
    law: str = "uniform"
    d: int = 40
    seed0: int = 2022
    quantity: str = "h"
    figure_depths: tuple = iid.FIG_DEPTHS
    reference: bool = False
    slope_shift: float = 0.0

    def __post_init__(self):
        _ints(self, "seeds")
        _plan(self)
        _laws(self, "law")
        _int(self, "d", 2)
        _int(self, "seed0", 0)
        _choice(self, "quantity", ("h", "p"))
        _ints(self, "figure_depths", 1, increasing=True)
        if not isinstance(self.reference, bool):
            _fail(self, "reference", "a bool")
        if not (isinstance(self.slope_shift, (int, float)) and math.isfinite(self.slope_shift)):
            _fail(self, "slope_shift", "a finite number")


def _table(c: NetConfig):
    return iid.fig_table(c.seeds, c.plan, c.law, c.d, c.seed0)


# Table 2 / Appendix E of the paper: 50 repetitions, L up to 1000 on a finer grid, d = 40
_PAPER_PLAN = tuple((b, tuple(int(x) for x in np.unique(np.geomspace(10, 1000, 15).round()))) for b in (0.25, 0.5, 1.0))


@dataclass(frozen=True)
class RegimeResult:
    """``fits`` = {beta: (RateFit, expected)} of the three regimes (:func:`_scaling_iid.regime_fits`),
    ``reference`` the Gaussian slope at beta = 1/4 (or empty)."""

    config: NetConfig
    fits: dict
    reference: dict


def regimes(config: NetConfig) -> RegimeResult:
    """Rate fits of the three regimes of Corollary 4 ("h") or 8 ("p") on the explicit networks."""
    _check_type(config, NetConfig, "regimes")
    table = _table(config)
    fits = iid.regime_fits(iid._logs(table, config.quantity), dict(table.plan), config.slope_shift)
    return RegimeResult(config, fits, iid._explosion_reference() if config.reference else {})


def regimes_verdict(result: RegimeResult):
    """(fit, expected, verdict per regime, worst beta): the record is the regime farthest from its
    prediction in units of its tolerance, so the record passes iff all three do."""
    per = {b: rate_verdict(f, e, grid_label="L") for b, (f, e) in result.fits.items()}
    b = iid.worst_regime(result.fits)
    return result.fits[b][0], result.fits[b][1], per, b


def _regime_summary(result):
    return {**{f"slope_beta_{b:g}": float(f.slope) for b, (f, _) in result.fits.items()},
            **{f"finite_L_slope_beta_{b:g}": float(e["slope"]) for b, (_, e) in result.fits.items()},
            **{f"tol_beta_{b:g}": float(e["tol"]) for b, (_, e) in result.fits.items()}}


COR4_PRESETS = {"check": NetConfig(reference=True), "paper": NetConfig(plan=_PAPER_PLAN, reference=True)}
COR8_PRESETS = {"check": NetConfig(quantity="p"), "paper": NetConfig(plan=_PAPER_PLAN, quantity="p")}


@dataclass(frozen=True)
class FigResult:
    """``logs`` = {beta: ln ratio (seeds, depths)} on the figure's grid, ``depths`` = {beta: depths}."""

    config: NetConfig
    logs: dict
    depths: dict
    seeds: int


@dataclass(frozen=True)
class FigNetConfig(NetConfig):
    """:class:`NetConfig` of Figures 1 and 3 with an array backend.

    Attributes
    ----------
    backend, device, dtype : str
        Array backend (:mod:`theory.backends`): ``"numpy"`` (default: the shared table of the
        corollaries' checks, :func:`theory.experiments._scaling_iid.fig_table`) or ``"torch"`` on
        ``"cpu"`` or ``"cuda"`` (:func:`theory.backends.scaling_figs.log_ratios`: only the figure's
        depths and quantity, every draw of a chunk at once), ``"float64"`` (default) or ``"float32"``.
        The draws are the same NumPy draws on every backend.
    """

    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"

    def __post_init__(self):
        super().__post_init__()
        from theory.backends import validate_fields

        validate_fields(self, _where(self))


def _fig13_torch(c: FigNetConfig) -> FigResult:
    from theory.backends import resolve
    from theory.backends.scaling_figs import log_ratios

    Lmax = max(max(ds) for _, ds in c.plan)
    Vs, Ws, H0, PL = [], [], [], []
    for s in c.seeds:
        rng = np.random.default_rng(c.seed0 + s)
        Vs.append(iid.draw(c.law, Lmax, c.d, rng))
        Ws.append(iid.draw(c.law, Lmax, c.d, rng))
        H0.append(iid.network_input(rng, c.d))
        PL.append(iid.readout(rng, c.d))
    depths = {b: tuple(L for L in ds if L in c.figure_depths) for b, ds in c.plan}
    plan = [(L, tuple(b for b in depths if L in depths[b])) for L in sorted({L for ds in depths.values() for L in ds})]
    vals = log_ratios(np.stack(Vs), np.stack(Ws), np.stack(H0), np.stack(PL), plan, quantity=c.quantity,
                      backend=resolve(c.backend, c.device, c.dtype))
    logs = {b: np.stack([vals[(L, b)] for L in ds], axis=1) for b, ds in depths.items()}
    return FigResult(c, logs, depths, len(c.seeds))


def fig13(config: NetConfig) -> FigResult:
    """The panels of Figure 1 ("h") or Figure 3 ("p") (thesis Figs. 2.1, 2.3), reduced."""
    _check_type(config, NetConfig, "fig13")
    if getattr(config, "backend", "numpy") == "torch":
        return _fig13_torch(config)
    table = _table(config)
    logs, depths = {}, {}
    for beta, ds in table.plan:
        keep = np.isin(ds, config.figure_depths)
        logs[beta] = iid._logs(table, config.quantity)[beta][:, keep]
        depths[beta] = tuple(np.array(ds)[keep].tolist())
    return FigResult(config, logs, depths, len(table.seeds))


def fig13_verdict(result: FigResult):
    """(Verdict, medians) of :func:`_scaling_iid.fig_verdict`."""
    return iid.fig_verdict(result.logs, result.depths)


# "paper": Table 2 of Appendix E (d = 40, L from 10 to 1000, beta in {0.25, 0.5, 1}, uniform weights) and the
# 50 randomisations of the captions of Figures 1 and 3, on 15 depths
FIG1_PRESETS = {"check": FigNetConfig(), "paper": FigNetConfig(plan=_PAPER_PLAN, figure_depths=_PAPER_PLAN[0][1])}
FIG3_PRESETS = {"check": FigNetConfig(quantity="p"),
                "paper": FigNetConfig(plan=_PAPER_PLAN, quantity="p", figure_depths=_PAPER_PLAN[0][1])}


@dataclass(frozen=True)
class Lemma14Config:
    """Lemma 14 (thesis Lemma 2.14) and the limit of Corollary 4 at beta = 1/2.

    Attributes
    ----------
    net : NetConfig
        The explicit res-3 networks.
    fast : tuple
        Exact-in-law Gaussian sampler runs: (arch, activation, slope, beta, runs, kappa) each.
    fast_depths : tuple of int
        Depths of the sampler runs.
    """

    net: NetConfig = NetConfig()
    fast: tuple = iid.LEMMA14_FAST
    fast_depths: tuple = iid.LEMMA14_DEPTHS

    def __post_init__(self):
        if not isinstance(self.net, NetConfig):
            _fail(self, "net", "a NetConfig")
        _tuple(self, "fast")
        if not all(isinstance(f, tuple) and len(f) == 6 and f[0] in _ARCH_NAMES and _is_int(f[4]) and f[4] >= 2
                   for f in self.fast):
            _fail(self, "fast", "a tuple of (arch, activation, slope, beta, runs >= 2, kappa)")
        _ints(self, "fast_depths", 1, increasing=True)


LEMMA14_PRESETS = {"check": Lemma14Config(), "paper": Lemma14Config(net=NetConfig(plan=_PAPER_PLAN))}


def lemma14(config: Lemma14Config) -> TrackerResult:
    """Lemma 14's sandwich on the explicit networks and the sampler runs; ``table`` the points drawn."""
    _check_type(config, Lemma14Config, "lemma14")
    c = config
    fast = iid.fast_table(c.fast, c.fast_depths, 40, 14)
    tracker, points = iid.lemma14_tracker(_table(c.net), fast, c.fast, c.fast_depths)
    return TrackerResult(c, tracker, tuple(points))


def cor4_limit(config: Lemma14Config) -> TrackerResult:
    """beta = 1/2: the mean of ||h_L - h_0||^2/||h_0||^2 against e^{1/2} - 1 for L >= 100."""
    _check_type(config, Lemma14Config, "cor4_limit")
    c = config
    fast = iid.fast_table(c.fast, c.fast_depths, 40, 14)
    tracker, rows = iid.cor4_limit_tracker(_table(c.net), fast, c.fast_depths)
    return TrackerResult(c, tracker, tuple(rows))


@dataclass(frozen=True)
class Prop7Config:
    """Proposition 7 (thesis Prop. 2.7) on (1/d)||dh_L/dh_0 - I||_F^2.

    Attributes
    ----------
    net : NetConfig
        The explicit res-3 networks (their Jacobians at beta in {1/2, 1}).
    extra : tuple
        Further networks at beta = 1/2: (arch, activation, slope, law, kappa') each.
    """

    net: NetConfig = NetConfig()
    extra: tuple = iid.PROP7_EXTRA

    def __post_init__(self):
        if not isinstance(self.net, NetConfig):
            _fail(self, "net", "a NetConfig")
        if not isinstance(self.extra, tuple) or not all(
                isinstance(e, tuple) and len(e) == 5 and e[0] in _ARCH_NAMES and e[3] in _LAWS for e in self.extra):
            _fail(self, "extra", "a tuple of (arch, activation, slope, law, kappa')")


PROP7_PRESETS = {"check": Prop7Config(), "paper": Prop7Config(net=NetConfig(plan=_PAPER_PLAN))}


def prop7(config: Prop7Config) -> TrackerResult:
    """Proposition 7's sandwich (exact where kappa' is known); ``table`` the points."""
    _check_type(config, Prop7Config, "prop7")
    tracker, points = iid.prop7_tracker(_table(config.net), config.extra)
    return TrackerResult(config, tracker, tuple(points))


# =========================================================================== high probability: Props. 2, 3, 6, Cor. 4(iii)


@dataclass(frozen=True)
class IdentityConfig:
    """Propositions 2 and 6 (thesis Props. 2.2, 2.6): Markov bounds in the identity regime L alpha^2 <= 1.

    Attributes
    ----------
    seeds : tuple of int
        One network per seed.
    betas : tuple of float
        Scaling exponents (>= 1/2 so that L alpha_L^2 <= 1).
    depths : tuple of int
        Depths (nested draws).
    law : str
        Weight law.
    seed0 : int
        Offset of the seeds.
    deltas : tuple of float
        Confidence levels.
    quantity : str
        "h" (Proposition 2) or "p" (Proposition 6).
    """

    seeds: tuple = iid.PROP2_SEEDS
    betas: tuple = iid.PROP2_BETAS
    depths: tuple = iid.PROP2_DEPTHS
    law: str = "uniform"
    seed0: int = 2
    deltas: tuple = iid.PROP2_DELTAS
    quantity: str = "h"

    def __post_init__(self):
        _ints(self, "seeds")
        _tuple(self, "betas")
        if not all(isinstance(b, (int, float)) and b >= 0.5 for b in self.betas):
            _fail(self, "betas", "a non-empty tuple of betas >= 1/2")
        _ints(self, "depths", 1, increasing=True)
        _laws(self, "law")
        _int(self, "seed0", 0)
        _unit(self, "deltas")
        _choice(self, "quantity", ("h", "p"))


@dataclass(frozen=True)
class FrequencyRun:
    """Violation frequencies: ``items`` = ((instance, FrequencyResult), ...); ``worst`` the item with the
    largest freq - delta (every statement holds iff it does); ``sample`` the runs the figures draw."""

    config: Any
    items: tuple
    worst: tuple
    sample: Any = None
    info: dict = field(default_factory=dict)


def identity(config: IdentityConfig) -> FrequencyRun:
    """Violations of ||x_L - x_0||^2/||x_ref||^2 <= 2 L alpha_L^2 / delta per (beta, L, delta)."""
    _check_type(config, IdentityConfig, "identity")
    c = config
    table = iid.net_table(c.seeds, tuple((b, c.depths) for b in c.betas), law=c.law, seed0=c.seed0)
    items = tuple(iid.markov_items(table, c.quantity, c.deltas))
    return FrequencyRun(c, items, iid.worst(items), table)


def frequency_verdict(result: FrequencyRun):
    """(worst FrequencyResult, expected): the record passes iff its frequency is at most delta."""
    res = result.worst[1]
    return res, {"delta": res.delta}


def _frequency_summary(result):
    inst, res = result.worst
    return {"worst_freq": float(res.freq), "worst_delta": float(res.delta), "worst_ci_high": float(res.ci[1])}


PROP2_PRESETS = {"check": IdentityConfig(), "paper": IdentityConfig(seeds=tuple(range(1000)), depths=(10, 100, 1000))}
PROP6_PRESETS = {"check": IdentityConfig(quantity="p"),
                 "paper": IdentityConfig(seeds=tuple(range(1000)), depths=(10, 100, 1000), quantity="p")}


@dataclass(frozen=True)
class Res1Config:
    """res-1 (leaky ReLU 0.8, Gaussian V) runs of the exact-in-law sampler for Proposition 3 and
    Corollary 4(iii) (thesis Prop. 2.3, Cor. 2.4).

    Attributes
    ----------
    d : int
        Width (>= 64 for the statements).
    L : int
        Depth.
    beta : float
        Scaling exponent.
    runs : int
        Independent networks.
    seed : int
        Seed.
    deltas : tuple of float
        Confidence levels.
    form : str
        "proved" (Prop. 3 for ||h_L||^2, as Appendix A.3 shows it), "stated" (Prop. 3 as printed, for
        ||h_L - h_0||^2) or "cor4-iii" (the two-sided statement of Corollary 4(iii)).
    """

    d: int = iid.RES1["d"]
    L: int = iid.RES1["L"]
    beta: float = iid.RES1["beta"]
    runs: int = iid.RES1["runs"]
    seed: int = iid.RES1["seed"]
    deltas: tuple = iid.DELTAS
    form: str = "proved"

    def __post_init__(self):
        _int(self, "d")
        _int(self, "L")
        _pos(self, "beta")
        _int(self, "runs", 2)
        _int(self, "seed", 0)
        _unit(self, "deltas")
        _choice(self, "form", ("proved", "stated", "cor4-iii"))

    @property
    def setup(self) -> dict:
        return {"d": self.d, "L": self.L, "beta": self.beta, "runs": self.runs, "seed": self.seed}


def res1(config: Res1Config) -> FrequencyRun:
    """Violation frequencies of Prop. 3 (proved or stated form) or Cor. 4(iii) on the res-1 runs;
    ``info["assumptions"]`` the statements' conditions at these sizes."""
    _check_type(config, Res1Config, "res1")
    c = config
    sample = iid.res1_sample(**c.setup)
    if c.form == "cor4-iii":
        conditions = iid.cor4_conditions(c.d, c.L, deltas=c.deltas)
        items = tuple(iid.cor4iii_items(sample, c.d, c.deltas))
    else:
        conditions = iid.prop3_conditions(c.d, c.L, c.beta, deltas=c.deltas)
        items = tuple(iid.prop3_items(sample, c.d, c.L, c.beta, c.form, c.deltas))
    return FrequencyRun(c, items, iid.worst(items), sample, {"assumptions": conditions})


_WIDE = dict(iid.RES1_WIDE)
# the paper's Figure 2 sizes (d = 100, L = 1000) for the statements at beta = 1/2
PROP3_PRESETS = {"check": Res1Config(), "paper": Res1Config(d=100, L=1000, runs=10_000)}
PROP3_STATED_PRESETS = {"check": Res1Config(form="stated"), "paper": Res1Config(d=100, L=1000, runs=10_000, form="stated")}
PROP3_WIDE_PRESETS = {"check": Res1Config(**_WIDE, deltas=iid.WIDE_DELTAS, form="stated"),
                      "paper": Res1Config(**dict(_WIDE, runs=10_000), deltas=iid.WIDE_DELTAS, form="stated")}
COR4III_PRESETS = {"check": Res1Config(form="cor4-iii"),
                   "paper": Res1Config(d=100, L=1100, runs=10_000, form="cor4-iii")}
COR4III_WIDE_PRESETS = {"check": Res1Config(**_WIDE, deltas=(0.7, 0.8, 0.9), form="cor4-iii"),
                        "paper": Res1Config(**dict(_WIDE, runs=10_000), deltas=(0.7, 0.8, 0.9), form="cor4-iii")}


@dataclass(frozen=True)
class ThresholdConfig:
    """The width threshold of the remark after Corollary 4 (thesis Cor. 2.4): the lower bound of (iii) is
    positive iff d > 1408/(9 delta) (printed: 99/(64 delta)).

    Attributes
    ----------
    above : Res1Config
        Runs at a width at/above the corrected threshold for every delta of its ``deltas``.
    between : tuple of Res1Config
        Runs at widths between the printed and the corrected thresholds for their ``deltas``.
    """

    above: Res1Config = Res1Config(**iid.THRESHOLD_WIDE, deltas=iid.THRESHOLD_ABOVE, form="cor4-iii")
    between: tuple = (Res1Config(form="cor4-iii"),
                      Res1Config(**iid.THRESHOLD_WIDE, deltas=iid.THRESHOLD_BETWEEN[256], form="cor4-iii"))

    def __post_init__(self):
        if not isinstance(self.above, Res1Config):
            _fail(self, "above", "a Res1Config")
        if not isinstance(self.between, tuple) or not all(isinstance(b, Res1Config) for b in self.between):
            _fail(self, "between", "a tuple of Res1Config")


THRESHOLD_PRESETS = {
    "check": ThresholdConfig(),
    "paper": ThresholdConfig(above=Res1Config(d=256, L=2800, runs=10_000, seed=5, deltas=iid.THRESHOLD_ABOVE,
                                              form="cor4-iii")),
}


@dataclass(frozen=True)
class ThresholdResult:
    """``above`` / ``between``: items (instance with the lower bound, FrequencyResult) of
    :func:`_scaling_iid.cor4_threshold_items`; ``assumptions`` of (iii) at the ``above`` size."""

    config: ThresholdConfig
    above: tuple
    between: tuple
    assumptions: dict


def threshold(config: ThresholdConfig) -> ThresholdResult:
    """Lower bounds and their violation frequencies above and between the thresholds."""
    _check_type(config, ThresholdConfig, "threshold")
    a = config.above
    above = tuple(iid.cor4_threshold_items(iid.res1_sample(**a.setup), a.d, a.deltas))
    between = tuple(it for b in config.between
                    for it in iid.cor4_threshold_items(iid.res1_sample(**b.setup), b.d, b.deltas))
    return ThresholdResult(config, above, between, iid.cor4_conditions(a.d, a.L, deltas=a.deltas))


def threshold_verdict(result: ThresholdResult):
    """The corrected remark: non-trivial and holding at every instance at/above the threshold."""
    return iid.nontrivial_lower_bound_verdict(result.above)


def threshold_erratum_verdict(result: ThresholdResult):
    """(printed, corrected): the printed threshold admits trivial bounds (fails), the corrected one holds."""
    return iid.nontrivial_lower_bound_verdict(result.between), iid.nontrivial_lower_bound_verdict(result.above)


def _threshold_summary(result):
    return {"min_lower_bound_above": min(i["lower_bound"] for i, _ in result.above),
            "max_lower_bound_between": max(i["lower_bound"] for i, _ in result.between),
            "max_freq_above": max(r.freq for _, r in result.above)}


# =========================================================================== Figure 2


@dataclass(frozen=True)
class Fig2Config:
    """Figure 2a (thesis Fig. 2.2): ||h_L||/||h_0|| at beta = 1/2 by the exact-in-law Gaussian sampler.

    Attributes
    ----------
    runs : int
        Independent networks.
    d : int
        Width.
    L : int
        Depth.
    beta : float
        Scaling exponent.
    seed : int
        Seed.
    backend, device, dtype : str
        Array backend (:mod:`theory.backends`) of the sampler's recursion
        (:func:`theory.backends.scaling_figs.exact_law_log_norms`): ``"numpy"`` (default) or
        ``"torch"`` on ``"cpu"`` or ``"cuda"``, ``"float64"`` (default) or ``"float32"``; the draws are
        the same NumPy draws on every backend.
    """

    runs: int = iid.FIG2["runs"]
    d: int = iid.FIG2["d"]
    L: int = iid.FIG2["L"]
    beta: float = iid.FIG2["beta"]
    seed: int = 2
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"

    def __post_init__(self):
        from theory.backends import validate_fields

        validate_fields(self, _where(self))
        _int(self, "runs", 8)
        _int(self, "d")
        _int(self, "L")
        _pos(self, "beta")
        _int(self, "seed", 0)


# Figure 2a: 10^4 runs at d = 100, L = 1000 (Section 2.3); the check runs the paper's sizes
FIG2_PRESETS = {"check": Fig2Config(), "paper": Fig2Config()}


@dataclass(frozen=True)
class Fig2Result:
    """``ratios`` the sampled ||h_L||/||h_0||."""

    config: Fig2Config
    ratios: np.ndarray


def fig2(config: Fig2Config) -> Fig2Result:
    """Sample the ratios."""
    _check_type(config, Fig2Config, "fig2")
    c = config
    if c.backend == "torch":
        from theory.backends import resolve
        from theory.backends.scaling_figs import exact_law_log_norms

        logs = exact_law_log_norms(c.L, c.d, c.beta, c.runs, c.seed, backend=resolve(c.backend, c.device, c.dtype))
        return Fig2Result(c, np.exp(logs))
    return Fig2Result(c, iid.fig2_sample(c.runs, c.d, c.L, c.beta, c.seed))


def fig2_verdict(result: Fig2Result):
    """(Verdict, measured) of :func:`_scaling_iid.fig2_verdict`: quartiles, bounds, normality of the log."""
    c = result.config
    return iid.fig2_verdict(result.ratios, c.d, c.L, c.beta)


# =========================================================================== Corollary 8(iii) at small depth


@dataclass(frozen=True)
class SmallDepthConfig:
    """Corollary 8(iii) (thesis Cor. 2.8) at small depth, beta = 1/2: res-3 and res-1 identity networks.

    Attributes
    ----------
    res3_seeds : int
        res-3 networks (uniform weights).
    res1_seeds : int
        res-1 identity networks (Gaussian weights).
    depths : tuple of int
        Depths (nested draws).
    law : str
        Law of the res-3 weights.
    """

    res3_seeds: int = 400
    res1_seeds: int = 200
    depths: tuple = iid.SMALL_DEPTHS
    law: str = "uniform"

    def __post_init__(self):
        _int(self, "res3_seeds", 2)
        _int(self, "res1_seeds", 2)
        _ints(self, "depths", 1, increasing=True)
        _laws(self, "law")


SMALL_PRESETS = {"check": SmallDepthConfig(),
                 "paper": SmallDepthConfig(res3_seeds=4000, res1_seeds=2000, depths=(1, 2, 4, 8, 16, 32, 64, 128))}


@dataclass(frozen=True)
class SmallDepthResult:
    """The two net tables (their Jacobian means at beta = 1/2), the corrected tracker and the printed one."""

    config: SmallDepthConfig
    res3: Any
    res1: Any
    corrected: Any
    printed: Any


def small_depth(config: SmallDepthConfig) -> SmallDepthResult:
    """Corrected sandwich (1 + 1/(2L))^L - 1 <= E <= (1 + 1/L)^L - 1 <= e - 1 and the printed e^{1/2} - 1."""
    _check_type(config, SmallDepthConfig, "small_depth")
    c = config
    plan = ((0.5, c.depths),)
    res3 = iid.net_table(tuple(range(c.res3_seeds)), plan, law=c.law, jac_betas=(0.5,), seed0=8)
    res1 = iid.net_table(tuple(range(c.res1_seeds)), plan, law="gaussian", arch="res1", activation="identity",
                         jac_betas=(0.5,), seed0=9)
    return SmallDepthResult(c, res3, res1, iid.cor8iii_tracker(res3, res1), iid.cor8_printed_tracker(res3))


def cor8iii_verdict(result: SmallDepthResult):
    """The corrected (finite-L) form of Corollary 8(iii)."""
    return bound_verdict(result.corrected.result(), BOUND_EXPECTED)


def cor8_erratum_verdict(result: SmallDepthResult):
    """(printed, corrected): the printed lower bound e^{1/2} - 1 must fail, the finite-L form hold."""
    return (bound_verdict(result.printed.result(), BOUND_EXPECTED),
            bound_verdict(result.corrected.result(), BOUND_EXPECTED))


def _small_summary(result):
    return {"ratio_max_corrected": float(result.corrected.result().ratio),
            "ratio_max_printed": float(result.printed.result().ratio)}


# =========================================================================== Proposition 10


@dataclass(frozen=True)
class Prop10Config:
    """Proposition 10 (thesis Prop. 2.10): res-1, beta = 1/2, N(0, v/d) weights against the SDE
    dH = sqrt(v'/d) sigma(H) dB, strong error on the natural coupling (width 4, leaky ReLU 0.8).

    Attributes
    ----------
    pairs : tuple of (str, float, float)
        (label, v of the weights, v' of the SDE) pairs; each gets one rate fit.
    paths : int
        Brownian paths (a multiple of ``groups``).
    groups : int
        Rows of the rate fit: means over ``paths/groups`` consecutive paths.
    L_ref : int
        Steps of the Euler-Maruyama reference (a multiple of every depth).
    grid : tuple of int
        Depths L.
    seed : int
        Seed.
    level : float
        Two-sided level of the slope windows (Bonferroni over the pairs).
    slope_shift : float
        Added to the predicted slope -1/2 (0 for the claims; +-0.05 in the negative controls).
    """

    pairs: tuple = tuple((k, *v) for k, v in lim.P10_VARIANCES.items())
    paths: int = lim.P10["paths"]
    groups: int = lim.P10["groups"]
    L_ref: int = lim.P10["L_ref"]
    grid: tuple = tuple(int(g) for g in lim.P10["grid"])
    seed: int = 10
    level: float = 0.99
    slope_shift: float = 0.0

    def __post_init__(self):
        if not 0 < self.level < 1:
            _fail(self, "level", "in (0, 1)")
        if not (isinstance(self.slope_shift, (int, float)) and math.isfinite(self.slope_shift)):
            _fail(self, "slope_shift", "a finite number")
        _tuple(self, "pairs")
        if not all(isinstance(p, tuple) and len(p) == 3 and isinstance(p[0], str) and p[1] > 0 and p[2] > 0
                   for p in self.pairs):
            _fail(self, "pairs", "a non-empty tuple of (label, v_net > 0, v_sde > 0)")
        _int(self, "groups", 2)
        _int(self, "paths", 2)
        if self.paths % self.groups:
            _fail(self, "paths", f"a multiple of groups = {self.groups}")
        _ints(self, "grid", 1, increasing=True)
        if len(self.grid) < 3:
            _fail(self, "grid", "at least 3 depths")
        _int(self, "L_ref")
        if any(self.L_ref % L for L in self.grid):
            _fail(self, "L_ref", "a multiple of every depth of grid")
        _int(self, "seed", 0)


PROP10_PRESETS = {
    "check": Prop10Config(),
    # no experiment in the paper for Prop. 10; a finer reference and 4x the paths
    "paper": Prop10Config(paths=1600, groups=80, L_ref=2**15, grid=(16, 32, 64, 128, 256, 512, 1024)),
}
PROP10_ERRATUM_PRESETS = {
    "check": Prop10Config(pairs=(("printed", 2.0, 1.0), ("corrected", 1.0, 1.0))),
    "paper": Prop10Config(pairs=(("printed", 2.0, 1.0), ("corrected", 1.0, 1.0)), paths=1600, groups=80,
                          L_ref=2**15, grid=(16, 32, 64, 128, 256, 512, 1024)),
}


@dataclass(frozen=True)
class Prop10Result:
    """``fits[i]`` the rate fit of pair i (rows: group means), ``bounds[i]`` the coupling-free lower bound
    |E||h_L|| - E||H_1||| at the largest L and its standard error, ``expected[i]`` the slope -1/2 (plus the
    config's shift) with the window of :func:`_scaling_limits.p10_window` from the scatter of the groups."""

    config: Prop10Config
    fits: tuple
    bounds: tuple
    expected: tuple = ()


def prop10(config: Prop10Config) -> Prop10Result:
    """Strong errors per pair (:func:`_scaling_limits.strong_errors`), their fits and coupling-free bounds."""
    _check_type(config, Prop10Config, "prop10")
    c = config
    fits, bounds, expected = [], [], []
    for _, v_net, v_sde in c.pairs:
        errors, norm_net, norm_sde = lim.strong_errors(float(v_net), float(v_sde), True, c.paths, c.L_ref, c.grid,
                                                       c.seed)
        groups = lim.grouped_means(errors, c.groups)
        fits.append(fit_rate(np.asarray(c.grid), groups))
        expected.append({"slope": -0.5 + c.slope_shift,
                         "tol": round(lim.p10_window(groups, c.grid, c.level, len(c.pairs)), 6)})
        diff = norm_net[:, -1] - norm_sde
        bounds.append((abs(float(diff.mean())), float(diff.std(ddof=1) / np.sqrt(diff.size))))
    return Prop10Result(c, tuple(fits), tuple(bounds), tuple(expected))


def prop10_verdict(result: Prop10Result):
    """(fit, expected, index) of the pair farthest from slope -1/2 in units of its window (the record passes
    iff every pair does)."""
    i = lim.worst_rate(result.fits, list(result.expected))
    return result.fits[i], result.expected[i], i


def prop10_erratum_verdict(result: Prop10Result):
    """(printed, corrected) for pairs ((printed), (corrected)): the printed pair must fail
    (:func:`_scaling_limits.prop10_printed_verdict`), the corrected one decay at rate 1/2."""
    (bound, se) = result.bounds[0]
    printed = lim.prop10_printed_verdict(result.fits[0], bound, se, result.expected[0])
    return printed, rate_verdict(result.fits[1], result.expected[1], grid_label="L")


def _prop10_summary(result):
    return {**{f"slope_{label}": float(f.slope) for (label, _, _), f in zip(result.config.pairs, result.fits)},
            **{f"tol_{label}": float(e["tol"]) for (label, _, _), e in zip(result.config.pairs, result.expected)}}


# =========================================================================== Proposition 11


@dataclass(frozen=True)
class Prop11Config:
    """Proposition 11 (thesis Prop. 2.11): res-2 tanh with trigonometric weights (A5), beta = 1, against
    the neural ODE (14): max_k ||H_{k/L} - h_k|| = O(1/L).

    Attributes
    ----------
    seeds : tuple of int
        Path draws (at least 2: the window is their scatter).
    grid : tuple of int
        Depths L (powers of 2: each divides the largest).
    d : int
        Width.
    beta : float
        Scaling exponent of the network (1 for the statement).
    noise : float
        Standard deviation times sqrt(d) of i.i.d. noise added to every layer (0: smooth weights).
    level : float
        Two-sided level of the window on the slope.
    """

    seeds: tuple = tuple(lim.P11["seeds"])
    grid: tuple = tuple(int(g) for g in lim.P11["grid"])
    d: int = lim.P11["d"]
    beta: float = 1.0
    noise: float = 0.0
    level: float = 0.99

    def __post_init__(self):
        _ints(self, "seeds")
        if len(self.seeds) < 2:
            _fail(self, "seeds", "at least 2 seeds")
        _ints(self, "grid", 1, increasing=True)
        if len(self.grid) < 3 or any(self.grid[-1] % L for L in self.grid):
            _fail(self, "grid", "at least 3 increasing depths dividing the largest")
        _int(self, "d")
        _pos(self, "beta")
        if not (isinstance(self.noise, (int, float)) and math.isfinite(self.noise) and self.noise >= 0):
            _fail(self, "noise", "a finite number >= 0")
        if not 0 < self.level < 1:
            _fail(self, "level", "in (0, 1)")


# no experiment in the paper for Prop. 11; the width of Figures 4-5 and a deeper ladder
PROP11_PRESETS = {"check": Prop11Config(), "paper": Prop11Config(d=40, grid=tuple(2 ** k for k in range(4, 14)))}


@dataclass(frozen=True)
class Prop11Result:
    """``errors`` (seeds, grid), their rate fit and the expected slope with its scatter window."""

    config: Prop11Config
    errors: np.ndarray
    fit: Any
    expected: dict


def prop11(config: Prop11Config) -> Prop11Result:
    """Errors against the ODE (:func:`_scaling_limits.ode_errors`), fit, window (:func:`p11_expected`)."""
    _check_type(config, Prop11Config, "prop11")
    c = config
    errors = lim.ode_errors(c.seeds, np.asarray(c.grid), c.d, c.beta, c.noise)
    return Prop11Result(c, errors, fit_rate(np.asarray(c.grid), errors), lim.p11_expected(errors, c.grid, c.level))


def prop11_verdict(result: Prop11Result):
    """Slope -1 within the scatter window."""
    return rate_verdict(result.fit, result.expected, grid_label="L")


# =========================================================================== registration

_B = dict(verdict=tracker_verdict, summary=_tracker_summary)
register("scaling.prop1", config=MomentConfig, presets=PROP1_PRESETS, measure=prop1, verdict=tracker_verdict,
         claims=("scaling/prop-1",), summary=_moment_summary)
register("scaling.prop5", config=MomentConfig, presets=PROP5_PRESETS, measure=prop5, verdict=tracker_verdict,
         claims=("scaling/prop-5",), summary=_moment_summary)
register("scaling.lemma15", config=Lemma15Config, presets=LEMMA15_PRESETS, measure=lemma15,
         claims=("scaling/lemma-15",), **_B)
register("scaling.lemma16", config=Lemma16Config, presets=LEMMA16_PRESETS, measure=lemma16,
         claims=("scaling/lemma-16",), **_B)
register("scaling.lemma16_erratum", config=Lemma16ErratumConfig, presets=LEMMA16_ERRATUM_PRESETS,
         measure=lemma16_erratum, verdict=lemma16_erratum_verdict, claims=("scaling/lemma-16/erratum",),
         summary=lambda r: {"ratio_max_printed": float(r.printed.result().ratio),
                            "ratio_max_corrected": float(r.corrected.result().ratio)})
register("scaling.lemma17", config=Lemma17Config, presets=LEMMA17_PRESETS, measure=lemma17,
         claims=("scaling/lemma-17",), **_B)
register("scaling.lemma19", config=Lemma19Config, presets=LEMMA19_PRESETS, measure=lemma19,
         claims=("scaling/lemma-19",), **_B)
register("scaling.lemma20", config=Lemma20Config, presets=LEMMA20_PRESETS, measure=lemma20,
         claims=("scaling/lemma-20",), **_B)
register("scaling.lemma21", config=Lemma21Config, presets=LEMMA21_PRESETS, measure=lemma21,
         claims=("scaling/lemma-21",), **_B)
register("scaling.lemma14", config=Lemma14Config, presets=LEMMA14_PRESETS, measure=lemma14,
         claims=("scaling/lemma-14",), **_B)
register("scaling.cor4_limit", config=Lemma14Config, presets=LEMMA14_PRESETS, measure=cor4_limit,
         claims=("scaling/cor-4/limit",), **_B)
register("scaling.prop7", config=Prop7Config, presets=PROP7_PRESETS, measure=prop7, claims=("scaling/prop-7",), **_B)
register("scaling.cor4", config=NetConfig, presets=COR4_PRESETS, measure=regimes, verdict=regimes_verdict,
         claims=("scaling/cor-4",), summary=_regime_summary)
register("scaling.cor8", config=NetConfig, presets=COR8_PRESETS, measure=regimes, verdict=regimes_verdict,
         claims=("scaling/cor-8",), summary=_regime_summary)
register("scaling.fig1", config=FigNetConfig, presets=FIG1_PRESETS, measure=fig13, verdict=fig13_verdict,
         claims=("scaling/fig-1",), summary=lambda r: {f"median_L{r.depths[b][-1]}_beta_{b:g}":
                                                       float(np.exp(np.median(r.logs[b][:, -1]))) for b in r.logs})
register("scaling.fig3", config=FigNetConfig, presets=FIG3_PRESETS, measure=fig13, verdict=fig13_verdict,
         claims=("scaling/fig-3",), summary=lambda r: {f"median_L{r.depths[b][-1]}_beta_{b:g}":
                                                       float(np.exp(np.median(r.logs[b][:, -1]))) for b in r.logs})
register("scaling.prop2", config=IdentityConfig, presets=PROP2_PRESETS, measure=identity, verdict=frequency_verdict,
         claims=("scaling/prop-2",), summary=_frequency_summary)
register("scaling.prop6", config=IdentityConfig, presets=PROP6_PRESETS, measure=identity, verdict=frequency_verdict,
         claims=("scaling/prop-6",), summary=_frequency_summary)
register("scaling.prop3", config=Res1Config, presets=PROP3_PRESETS, measure=res1, verdict=frequency_verdict,
         claims=("scaling/prop-3",), summary=_frequency_summary)
register("scaling.prop3_stated", config=Res1Config, presets=PROP3_STATED_PRESETS, measure=res1,
         verdict=frequency_verdict, claims=("scaling/prop-3/stated",), summary=_frequency_summary)
register("scaling.prop3_stated_wide", config=Res1Config, presets=PROP3_WIDE_PRESETS, measure=res1,
         verdict=frequency_verdict, claims=("scaling/prop-3/stated/wide",), summary=_frequency_summary)
register("scaling.cor4_iii", config=Res1Config, presets=COR4III_PRESETS, measure=res1, verdict=frequency_verdict,
         claims=("scaling/cor-4/iii",), summary=_frequency_summary)
register("scaling.cor4_iii_wide", config=Res1Config, presets=COR4III_WIDE_PRESETS, measure=res1,
         verdict=frequency_verdict, claims=("scaling/cor-4/iii/wide",), summary=_frequency_summary)
register("scaling.cor4_threshold", config=ThresholdConfig, presets=THRESHOLD_PRESETS, measure=threshold,
         verdict=threshold_verdict, claims=("scaling/cor-4/threshold",), summary=_threshold_summary)
register("scaling.cor4_threshold_erratum", config=ThresholdConfig, presets=THRESHOLD_PRESETS, measure=threshold,
         verdict=threshold_erratum_verdict, claims=("scaling/cor-4/threshold/erratum",), summary=_threshold_summary)
register("scaling.fig2", config=Fig2Config, presets=FIG2_PRESETS, measure=fig2, verdict=fig2_verdict,
         claims=("scaling/fig-2",), summary=lambda r: {"q1": float(np.quantile(r.ratios, 0.25)),
                                                       "q3": float(np.quantile(r.ratios, 0.75))})
register("scaling.cor8_iii", config=SmallDepthConfig, presets=SMALL_PRESETS, measure=small_depth,
         verdict=cor8iii_verdict, claims=("scaling/cor-8/iii",), summary=_small_summary)
register("scaling.cor8_erratum", config=SmallDepthConfig, presets=SMALL_PRESETS, measure=small_depth,
         verdict=cor8_erratum_verdict, claims=("scaling/cor-8/erratum",), summary=_small_summary)
register("scaling.prop10", config=Prop10Config, presets=PROP10_PRESETS, measure=prop10, verdict=prop10_verdict,
         claims=("scaling/prop-10",), summary=_prop10_summary)
register("scaling.prop10_erratum", config=Prop10Config, presets=PROP10_ERRATUM_PRESETS, measure=prop10,
         verdict=prop10_erratum_verdict, claims=("scaling/prop-10/erratum",), summary=_prop10_summary)
register("scaling.prop11", config=Prop11Config, presets=PROP11_PRESETS, measure=prop11, verdict=prop11_verdict,
         claims=("scaling/prop-11",), summary=lambda r: {"slope": float(r.fit.slope), "tol": float(r.expected["tol"])})
