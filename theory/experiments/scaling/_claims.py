"""Registered experiments of the i.i.d.-initialisation results and of Propositions 10 and 11 of paper key
``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth Regime", preprint 2022;
chapter 2 of P. Marion's thesis): one frozen, validated config per measurement, its presets (``"check"``:
exactly what the checks run; ``"paper"``: the document's own sizes where it has any), ``measure`` and the
verdict beside it. The measurements themselves are the functions of :mod:`._iid` and
:mod:`._limits`; this module gives them configs and names.

Every bound's measurement also runs the worst-case search of :mod:`._search` over the statement's hypotheses
(``search_budget`` and ``search_seed`` are fields of its config; the result's ``search``), and its verdict asks
the worst instance found to stay within the bound too. The bound of the weight-tied linear case of
Proposition 11 (``scaling/prop-11/constant``) is searched by a Hypothesis strategy, run by the experiment
``scaling.prop11_constant`` (:func:`prop11_constant`, derandomised: the same instances on every run) and recorded
as a :class:`theory.worst_case.WorstCase` like the others (:func:`prop11_worst_case`); its per-instance
computation is :func:`theory.experiments.scaling._limits.tied_linear_instance` (:data:`HYPOTHESIS_DRIVEN`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

import numpy as np

from theory.claims import Verdict, bound_verdict, erratum_verdict, rate_verdict
from theory.claims import frequency_verdict as _frequency_verdict
from theory.experiments.scaling import _iid as iid
from theory.experiments.scaling import _limits as lim
from theory.experiments.scaling import _search as srch
from theory.experiments._hypothesis import require, without_source_constants
from theory.experiments._registry import register
from theory.experiments.scaling._scale import BackendConfig, backend_field, device_field, dtype_field
from theory.experiments.config import (
    Bool, Choice, Choices, Config, Custom, Int, Ints, OrNone, Real, Reals, Seed, Seeds, field,
)
from theory.rates import BoundTracker, fit_rate
from theory.worst_case import Dim, WorstCase

#: the expectation every Monte-Carlo bound record takes (every comparison's ratio at most 1)
BOUND_EXPECTED = {"ratio_max": 1.0}
#: claims whose experiment searches its instances with Hypothesis, with the package function computing one instance
HYPOTHESIS_DRIVEN = {"scaling/prop-11/constant": lim.tied_linear_instance}

_LAWS = iid.IID_LAWS + tuple(iid.EXTRA_LAWS)
_ARCH_NAMES = ("res1", "res2", "res3")


# --------------------------------------------------------------------------- declared fields


def _is_int(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer))


def _is_num(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))


def _items(value):
    """``value`` as a tuple (a list or an array too), or a TypeError."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (tuple, list)):
        raise TypeError("not a tuple")
    return tuple(value)


def _rows(rule, non_empty=True):
    """A Custom rule: a tuple whose every item (a tuple) passes ``rule`` (which returns the normal item)."""
    def check(value):
        items = _items(value)
        if non_empty and not items:
            raise ValueError("empty")
        out = []
        for item in items:
            if not isinstance(item, (tuple, list)):
                raise ValueError("an item is not a tuple")
            normal = rule(tuple(item))
            if normal is None:
                raise ValueError("an item is out of range")
            out.append(normal)
        return tuple(out)
    return check


def _size(item):
    if len(item) == 2 and _is_int(item[0]) and item[0] >= 1 and _is_int(item[1]) and item[1] >= 2:
        return (int(item[0]), int(item[1]))
    return None


def _arch(item):
    if len(item) == 2 and item[0] in _ARCH_NAMES and isinstance(item[1], str):
        return item
    return None


def _plan_item(item):
    if (len(item) == 2 and _is_num(item[0]) and math.isfinite(item[0]) and item[0] > 0
            and isinstance(item[1], (tuple, list)) and len(item[1]) > 0
            and all(_is_int(L) and L >= 1 for L in item[1])):
        return (float(item[0]), tuple(int(L) for L in item[1]))
    return None


def _fast_item(item):
    if len(item) == 6 and item[0] in _ARCH_NAMES and _is_int(item[4]) and item[4] >= 2:
        return item
    return None


def _extra_item(item):
    if len(item) == 5 and item[0] in _ARCH_NAMES and item[3] in _LAWS:
        return item
    return None


def _pair_item(item):
    if (len(item) == 3 and isinstance(item[0], str) and all(_is_num(v) and math.isfinite(v) and v > 0
                                                          for v in item[1:])):
        return (item[0], float(item[1]), float(item[2]))
    return None


def _rows_field(rule, description, type_name, default, doc, invalid_item, boundary):
    return field(Custom(_rows(rule), description, type_name=type_name,
                        invalid=[(3, TypeError), ((), ValueError), ((invalid_item,), ValueError)],
                        boundary=boundary), default, doc)


def _instance(cls, many=False):
    """A Custom rule: an instance of the config class ``cls`` (``many``: a non-empty tuple of them)."""
    def check(value):
        if many:
            items = _items(value)
            if not items or not all(isinstance(v, cls) for v in items):
                raise TypeError(f"not a tuple of {cls.__name__}")
            return items
        if not isinstance(value, cls):
            raise TypeError(f"not a {cls.__name__}")
        return value
    return check


def _laws_field(default, doc, options=None):
    return field(Choices(*(options or _LAWS)), default, doc)


def _law_field(default, doc):
    return field(Choice(*_LAWS), default, doc)


def _positive(default, doc):
    return field(Real(0, closed="neither"), default, doc)


def _seed(default, doc="Base seed of the draws."):
    return field(Seed(), default, doc)


def _search_budget(default):
    return field(Int(low=1), default, "Evaluations of the worst-case search over the statement's hypotheses "
                 "(theory.experiments.scaling._search; the paper preset spends 10 times more).")


def _search_seed():
    return field(Seed(), 0, "Seed of the worst-case search (the scrambling of its Sobol points).")


_SIZES = dict(description="a non-empty tuple of (d >= 1, draws >= 2) pairs", type_name="tuple of (int, int)",
              invalid_item=(0, 10), boundary=[((1, 2),)])
_ARCHS = dict(description=f"a non-empty tuple of (arch in {_ARCH_NAMES}, activation) pairs",
              type_name="tuple of (str, str)", invalid_item=("res4", "relu"), boundary=[(("res3", "relu"),)])


@dataclass(frozen=True)
class TrackerResult:
    """A Monte-Carlo bound measurement: ``tracker`` holds every comparison (instance, ratio LHS/RHS),
    ``table`` the per-instance estimates the figures draw, ``info`` further plain figures, ``search`` the
    worst-case search of the bound over its hypotheses (:mod:`._search`; a
    :class:`theory.worst_case.WorstCase`, or None)."""

    config: Any
    tracker: Any
    table: tuple = ()
    info: dict = _field(default_factory=dict)
    search: Any = None


def _with_search(tracker, search):
    r = tracker.result()
    return r if search is None else r.with_search(search)


def _searched_verdict(tracker, search):
    """:func:`theory.claims.bound_verdict` of the tracker with the search attached (``measured["search"]``; its
    worst instance names the architecture, law and input direction: the boxes' categorical coordinates)."""
    return bound_verdict(_with_search(tracker, search), BOUND_EXPECTED)


def tracker_verdict(result: TrackerResult):
    """Every Monte-Carlo comparison within its window and the worst case found by the search at most 1:
    :func:`theory.claims.bound_verdict` at ratio <= 1 (``measured["search"]`` holds the search)."""
    return _searched_verdict(result.tracker, result.search)


def _tracker_summary(result: TrackerResult) -> dict:
    r = result.tracker.result()
    out = {"ratio_max": float(r.ratio), "n_instances": int(r.n_instances)}
    if result.search is not None:
        out["search_ratio_max"] = float(result.search.ratio)
    return out


def _check_type(config, cls, fn):
    if not isinstance(config, cls):
        raise TypeError(f"`config` of theory.experiments.scaling.{fn} must be a {cls.__name__}; "
                        f"got {type(config).__name__}")


# =========================================================================== one layer: (A2), (A4), Lemmas 15-17


@dataclass(frozen=True)
class MomentConfig(Config):
    """One-layer Monte Carlo of (A2) (Proposition 1) or (A4) (Proposition 5), thesis Props. 2.1 and 2.5."""

    laws: tuple = _laws_field(iid.IID_LAWS, "Weight laws (entries times sqrt(d) of unit variance): 'gaussian', "
                              "'uniform', 'rademacher', or a law outside (A1) ('student5', 'centered_exponential', "
                              "'laplace', 'shifted_gaussian').")
    sizes: tuple = _rows_field(_size, default=((16, 20_000), (64, 2_000)), doc="(width d, number of weight draws) "
                               "pairs.", **_SIZES)
    archs: tuple = _rows_field(_arch, default=iid.ARCHS, doc="(architecture res1/res2/res3, activation) pairs of "
                               "Table 1.", **_ARCHS)
    slope: float = _positive(iid.SLOPE, "Leaky-ReLU slope (0.8: a >= 1/sqrt 2 as (A2) needs).")
    seed: int = _seed(1)
    search_budget: int = _search_budget(120)
    search_seed: int = _search_seed()


PROP1_PRESETS = {
    "check": MomentConfig(),
    # Proposition 1 has no experiment; Table 2's width (d = 40) and 10^5 draws
    "paper": MomentConfig(sizes=((40, 100_000),), search_budget=1200),
}
PROP5_PRESETS = {"check": MomentConfig(seed=5),
                 "paper": MomentConfig(sizes=((40, 100_000),), seed=5, search_budget=1200)}


def prop1(config: MomentConfig) -> TrackerResult:
    """(A2) for every (law, d, arch, h): 1/2 <= E||g||^2/||h||^2 <= 1 (1/2 for res-3), E||g||^8 <= C||h||^8."""
    _check_type(config, MomentConfig, "prop1")
    tracker, table = iid.prop1_tracker(config.laws, config.sizes, config.archs, config.slope, config.seed)
    return TrackerResult(config, tracker, tuple(table),
                         search=srch.search("prop-1", config.search_budget, config.search_seed))


def prop5(config: MomentConfig) -> TrackerResult:
    """(A4) for every (law, d, arch, h, q), and the atom of Rademacher weights at h = flat (``info``)."""
    _check_type(config, MomentConfig, "prop5")
    tracker, table = iid.prop5_tracker(config.laws, config.sizes, config.archs, config.slope, config.seed)
    return TrackerResult(config, tracker, tuple(table), {"atom": iid.a4_atom()},
                         search=srch.search("prop-5", config.search_budget, config.search_seed))


def _moment_summary(result):
    res3 = [r for r in result.table if r["arch"] == "res3"]
    out = _tracker_summary(result)
    if res3:
        out["max_abs_z_res3"] = max(abs(r["kappa"] - 0.5) / r["se"] for r in res3)
    return out


@dataclass(frozen=True)
class Lemma15Config(Config):
    """Conditional moments (E1)-(E7) of Lemma 15 (thesis Lemma 2.15) at fixed h."""

    laws: tuple = _laws_field(iid.IID_LAWS, "Laws of V and W (see MomentConfig).")
    d: int = field(Int(low=1), 16, "Width.")
    alpha: float = _positive(0.1, "Scaling factor alpha_L.")
    n: int = field(Int(low=2), 40_000, "Draws of (V, W).")
    archs: tuple = _rows_field(_arch, default=iid.LEMMA15_ARCHS, doc="(architecture, activation) pairs.", **_ARCHS)
    v_law: str | None = field(OrNone(Choice(*_LAWS), "the same law as W's"), None, "Overrides the law of V (None: "
                              "the same as W's).")
    seed: int = _seed(15)
    search_budget: int = _search_budget(120)
    search_seed: int = _search_seed()


LEMMA15_PRESETS = {"check": Lemma15Config(),
                   "paper": Lemma15Config(d=40, alpha=40 ** -0.5, n=100_000, search_budget=1200)}


def lemma15(config: Lemma15Config) -> TrackerResult:
    """Monte Carlo of (E1)-(E7) over (V, W) for every law, h and architecture."""
    _check_type(config, Lemma15Config, "lemma15")
    c = config
    tracker, table = iid.lemma15_tracker(c.laws, c.d, c.alpha, c.n, c.archs, c.v_law, c.seed)
    return TrackerResult(c, tracker, tuple(table), search=srch.search("lemma-15", c.search_budget, c.search_seed))


@dataclass(frozen=True)
class Lemma16Config(Config):
    """Lemma 16 (thesis Lemma 2.16): E||sigma(Wx)||^2 in [E||Wx||^2/2, E||Wx||^2], ReLU at 1/2."""

    laws: tuple = _laws_field(iid.IID_LAWS + ("student5",), "Laws of W (symmetric for the lemma).")
    d: int = field(Int(low=1), 16, "Width.")
    n: int = field(Int(low=2), 20_000, "Draws of W.")
    slope: float = _positive(iid.SLOPE, "Leaky-ReLU slope.")
    seed: int = _seed(16)
    search_budget: int = _search_budget(150)
    search_seed: int = _search_seed()


LEMMA16_PRESETS = {"check": Lemma16Config(), "paper": Lemma16Config(d=40, n=100_000, search_budget=1500)}


def lemma16(config: Lemma16Config) -> TrackerResult:
    """Lemma 16's bounds and the ReLU equality (paired difference) per law and input."""
    _check_type(config, Lemma16Config, "lemma16")
    c = config
    return TrackerResult(c, iid.lemma16_tracker(c.laws, c.d, c.n, c.slope, c.seed),
                         search=srch.search("lemma-16", c.search_budget, c.search_seed))


@dataclass(frozen=True)
class Lemma16ErratumConfig(Config):
    """Thesis Lemma 2.16 as printed ("centered" entries) against the preprint's symmetric entries."""

    printed_law: str = _law_field("centered_exponential", "A centered, asymmetric law the printed form admits.")
    corrected_law: str = _law_field("uniform", "A symmetric law (the corrected hypothesis).")
    d: int = field(Int(low=1), 16, "Width.")
    n: int = field(Int(low=2), 20_000, "Draws of W.")


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


def lemma16_erratum_verdict(result: Lemma16ErratumResult) -> Verdict:
    """The erratum (:func:`theory.claims.erratum_verdict`): Lemma 16's bounds (ratio <= 1) must fail under the
    printed (centered, asymmetric) law and hold under the corrected (symmetric) one."""
    return erratum_verdict(bound_verdict(result.printed.result(), BOUND_EXPECTED),
                           bound_verdict(result.corrected.result(), BOUND_EXPECTED))


@dataclass(frozen=True)
class Lemma17Config(Config):
    """Lemma 17 (thesis Lemma 2.17): E||Wx||^2 = s^2 d ||x||^2 for centered i.i.d. entries of variance s^2."""

    laws: tuple = _laws_field(iid.IID_LAWS + ("centered_exponential", "student5"), "Laws (centered; the lemma needs "
                              "no symmetry).")
    scales: tuple = field(Reals(0, closed="neither"), (1.0, 3.0), "Entries of variance scale^2/d.")
    d: int = field(Int(low=1), 16, "Width.")
    n: int = field(Int(low=2), 20_000, "Draws of W.")
    seed: int = _seed(17)
    search_budget: int = _search_budget(150)
    search_seed: int = _search_seed()


LEMMA17_PRESETS = {"check": Lemma17Config(), "paper": Lemma17Config(d=40, n=100_000, search_budget=1500)}


def lemma17(config: Lemma17Config) -> TrackerResult:
    """|mean - s^2 d ||x||^2| within Z standard errors per law, scale and input."""
    _check_type(config, Lemma17Config, "lemma17")
    c = config
    return TrackerResult(c, iid.lemma17_tracker(c.laws, c.scales, c.d, c.n, c.seed),
                         search=srch.search("lemma-17", c.search_budget, c.search_seed))


# =========================================================================== Appendix C: Lemmas 19-21


@dataclass(frozen=True)
class Lemma19Config(Config):
    """Lemma 19 (thesis Lemma 2.19): eps|X - X'| is 2 s^2-sub-Gaussian."""

    laws: tuple = _laws_field(iid.IID_LAWS, "Scalar laws with a closed-form MGF.",
                              options=("gaussian", "uniform", "rademacher", "laplace"))
    s: float = _positive(iid.S, "Sub-Gaussian parameter of the laws.")
    lambdas: tuple = field(Reals(0, closed="neither"), tuple(float(x) for x in iid.LEMMA19_LAMBDAS), "Grid of lambda.")
    n: int = field(Int(low=2), 200_000, "Draws of the literal Monte-Carlo confirmation.")
    seed: int = _seed(19, "Seed.")
    search_budget: int = _search_budget(200)
    search_seed: int = _search_seed()


LEMMA19_PRESETS = {"check": Lemma19Config(), "paper": Lemma19Config(n=10**7, search_budget=2000)}


def lemma19(config: Lemma19Config) -> TrackerResult:
    """ln E e^{lam eps|X - X'|} <= lam^2 s^2 on the grid (closed forms), with a Monte-Carlo confirmation."""
    _check_type(config, Lemma19Config, "lemma19")
    c = config
    return TrackerResult(c, iid.lemma19_tracker(c.laws, c.s, np.asarray(c.lambdas), c.n, c.seed),
                         search=srch.search("lemma-19", c.search_budget, c.search_seed))


@dataclass(frozen=True)
class Lemma20Config(Config):
    """Lemma 20 (thesis Lemma 2.20): P(<Vx, y>/(||x|| ||y||) >= t) <= 2 exp(-d t^2/(4 s^2))."""

    laws: tuple = _laws_field(iid.IID_LAWS, "Laws of V.")
    d: int = field(Int(low=1), 16, "Width.")
    n: int = field(Int(low=2), 20_000, "Draws of V.")
    scale: float = _positive(1.0, "Entries of variance scale^2/d (1 for the lemma).")
    s: float = _positive(iid.S, "Sub-Gaussian parameter the bound uses.")
    seed: int = _seed(20)
    search_budget: int = _search_budget(150)
    search_seed: int = _search_seed()


LEMMA20_PRESETS = {"check": Lemma20Config(), "paper": Lemma20Config(d=40, n=100_000, search_budget=1500)}


def lemma20(config: Lemma20Config) -> TrackerResult:
    """Tail frequencies against the bound (and the Gaussian closed form at scale 1)."""
    _check_type(config, Lemma20Config, "lemma20")
    c = config
    return TrackerResult(c, iid.lemma20_tracker(c.laws, c.d, c.n, c.scale, c.s, c.seed),
                         search=srch.search("lemma-20", c.search_budget, c.search_seed))


@dataclass(frozen=True)
class Lemma21Config(Config):
    """Lemma 21 (thesis Lemma 2.21): moments 4 and 8 of ||Vx||/||x||."""

    laws: tuple = _laws_field(iid.IID_LAWS, "Laws of V.")
    sizes: tuple = _rows_field(_size, default=iid.LEMMA21_SIZES, doc="(width d, draws) pairs.", **_SIZES)
    scale: float = _positive(1.0, "Entries of variance scale^2/d.")
    s: float = _positive(iid.S, "Sub-Gaussian parameter the bounds use.")
    seed: int = _seed(21)
    search_budget: int = _search_budget(150)
    search_seed: int = _search_seed()


LEMMA21_PRESETS = {"check": Lemma21Config(),
                   "paper": Lemma21Config(sizes=((40, 100_000),), search_budget=1500)}


def lemma21(config: Lemma21Config) -> TrackerResult:
    """E||Vx||^4 and E||Vx||^8 against the bounds (Gaussian exact moments within Z s.e.)."""
    _check_type(config, Lemma21Config, "lemma21")
    c = config
    return TrackerResult(c, iid.lemma21_tracker(c.laws, c.sizes, c.scale, c.s, c.seed),
                         search=srch.search("lemma-21", c.search_budget, c.search_seed))


# =========================================================================== explicit networks (Figures 1-3)


@dataclass(frozen=True)
class NetConfig(Config):
    """The explicit res-3 networks of Figures 1 and 3 (Table 2, reduced), used by Corollaries 4, 8,
    Figures 1, 3, Lemma 14, Corollary 4's limit and Proposition 7 (thesis chapter 2 numbers alike)."""

    seeds: tuple = field(Seeds(), iid.FIG_SEEDS, "One network draw per seed.")
    plan: tuple = _rows_field(_plan_item, "a non-empty tuple of (beta > 0, (depths >= 1, ...)) pairs",
                              "tuple of (float, tuple of int)", iid.FIG_PLAN, "(beta, depths) pairs; a seed's "
                              "depth-L network uses the first L layers of its deepest draw.", (0.5, (0,)),
                              [((0.5, (1,)),)])
    law: str = _law_field("uniform", "Weight law.")
    d: int = field(Int(low=2), 40, "Width.")
    seed0: int = _seed(2022, "Offset of the seeds.")
    quantity: str = field(Choice("h", "p"), "h", "'h': ||h_L - h_0||/||h_0|| (Cor. 4, Fig. 1); 'p': "
                          "||p_0 - p_L||/||p_L|| (Cor. 8, Fig. 3).")
    figure_depths: tuple = field(Ints(low=1, increasing=True), iid.FIG_DEPTHS, "The figures' depth grid (Figures "
                                 "1 and 3 keep these depths of every panel).")
    reference: bool = field(Bool(), False, "Also compute the exact-in-law Gaussian reference slope at beta = 1/4 "
                            "(Corollary 4's record).")
    slope_shift: float = field(Real(), 0.0, "Added to every predicted slope of the regimes (0 for the claims; "
                               "+-0.05 in the negative controls, which must then fail).")


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


def regimes_verdict(result: RegimeResult) -> Verdict:
    """A rate (:func:`theory.claims.rate_verdict`) of the regime farthest from its prediction in units of its
    tolerance, so the verdict passes iff all three do; ``measured`` adds every regime (``regimes``), the
    worst one (``worst_regime``) and the Gaussian reference slope where computed."""
    b = iid.worst_regime(result.fits)
    v = rate_verdict(*result.fits[b], grid_label="L")
    regimes = {
        f"beta={beta:g} ({iid.regime(beta)})": {
            "slope": f.slope, "ci": list(f.ci), "expected": e["slope"], "tol": e["tol"],
            "asymptotic": iid.predicted_slope(beta), "grid": [int(g) for g in f.grid],
            "status": rate_verdict(f, e, grid_label="L").status}
        for beta, (f, e) in result.fits.items()}
    return dataclasses.replace(v, message=f"beta={b:g} (worst of {len(result.fits)} regimes): {v.message}",
                               measured={"regimes": regimes, **result.reference, "worst_regime": f"beta={b:g}",
                                         **v.measured})


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
class FigNetConfig(NetConfig, BackendConfig):
    """:class:`NetConfig` of Figures 1 and 3 with an array backend: ``"numpy"`` (default: the shared table of
    the corollaries' checks, :func:`theory.experiments.scaling._iid.fig_table`) or ``"torch"``
    (:func:`theory.backends.scaling_figs.log_ratios`: only the figure's depths and quantity, every draw of a
    chunk at once); the draws are the same NumPy draws on every backend."""

    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()


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


def fig13_verdict(result: FigResult) -> Verdict:
    """The bounds of :func:`_scaling_iid.fig_verdict` on the medians of the three panels; ``measured`` adds the
    depths and the number of seeds."""
    v = iid.fig_verdict(result.logs, result.depths)
    return dataclasses.replace(v, measured={**v.measured, "seeds": result.seeds,
                                            "depths": {f"beta={b:g}": list(d) for b, d in result.depths.items()}})


# "paper": Table 2 of Appendix E (d = 40, L from 10 to 1000, beta in {0.25, 0.5, 1}, uniform weights) and the
# 50 randomisations of the captions of Figures 1 and 3, on 15 depths
FIG1_PRESETS = {"check": FigNetConfig(), "paper": FigNetConfig(plan=_PAPER_PLAN, figure_depths=_PAPER_PLAN[0][1])}
FIG3_PRESETS = {"check": FigNetConfig(quantity="p"),
                "paper": FigNetConfig(plan=_PAPER_PLAN, quantity="p", figure_depths=_PAPER_PLAN[0][1])}


_NET = Custom(_instance(NetConfig), "a NetConfig", type_name="NetConfig", invalid=[(3, TypeError)],
              boundary=[NetConfig()])


@dataclass(frozen=True)
class Lemma14Config(Config):
    """Lemma 14 (thesis Lemma 2.14) and the limit of Corollary 4 at beta = 1/2."""

    net: NetConfig = field(_NET, NetConfig(), "The explicit res-3 networks.")
    fast: tuple = _rows_field(_fast_item, "a non-empty tuple of (arch, activation, slope, beta, runs >= 2, kappa)",
                              "tuple of tuple", iid.LEMMA14_FAST, "Exact-in-law Gaussian sampler runs: (arch, "
                              "activation, slope, beta, runs, kappa) each.", ("res3", "relu", 0.8, 0.5, 1, 0.5),
                              [(("res3", "relu", 0.8, 0.5, 2, 0.5),)])
    fast_depths: tuple = field(Ints(low=1, increasing=True), iid.LEMMA14_DEPTHS, "Depths of the sampler runs.")
    search_budget: int = _search_budget(100)
    search_seed: int = _search_seed()


LEMMA14_PRESETS = {"check": Lemma14Config(),
                   "paper": Lemma14Config(net=NetConfig(plan=_PAPER_PLAN), search_budget=1000)}


def lemma14(config: Lemma14Config) -> TrackerResult:
    """Lemma 14's sandwich on the explicit networks and the sampler runs; ``table`` the points drawn."""
    _check_type(config, Lemma14Config, "lemma14")
    c = config
    fast = iid.fast_table(c.fast, c.fast_depths, 40, 14)
    tracker, points = iid.lemma14_tracker(_table(c.net), fast, c.fast, c.fast_depths)
    return TrackerResult(c, tracker, tuple(points), search=srch.search("lemma-14", c.search_budget, c.search_seed))


def cor4_limit(config: Lemma14Config) -> TrackerResult:
    """beta = 1/2: the mean of ||h_L - h_0||^2/||h_0||^2 against e^{1/2} - 1 for L >= 100."""
    _check_type(config, Lemma14Config, "cor4_limit")
    c = config
    fast = iid.fast_table(c.fast, c.fast_depths, 40, 14)
    tracker, rows = iid.cor4_limit_tracker(_table(c.net), fast, c.fast_depths)
    return TrackerResult(c, tracker, tuple(rows), search=srch.search("cor-4/limit", c.search_budget, c.search_seed))


@dataclass(frozen=True)
class Prop7Config(Config):
    """Proposition 7 (thesis Prop. 2.7) on (1/d)||dh_L/dh_0 - I||_F^2."""

    net: NetConfig = field(_NET, NetConfig(), "The explicit res-3 networks (their Jacobians at beta in {1/2, 1}).")
    extra: tuple = field(Custom(_rows(_extra_item, non_empty=False), "a tuple of (arch, activation, slope, law, "
                                "kappa')", type_name="tuple of tuple",
                                invalid=[(3, TypeError), ((("res4", "relu", 0.8, "gaussian", 1.0),), ValueError)],
                                boundary=[()]),
                         iid.PROP7_EXTRA, "Further networks at beta = 1/2: (arch, activation, slope, law, kappa') "
                         "each.")
    search_budget: int = _search_budget(80)
    search_seed: int = _search_seed()


PROP7_PRESETS = {"check": Prop7Config(),
                 "paper": Prop7Config(net=NetConfig(plan=_PAPER_PLAN), search_budget=800)}


def prop7(config: Prop7Config) -> TrackerResult:
    """Proposition 7's sandwich (exact where kappa' is known); ``table`` the points."""
    _check_type(config, Prop7Config, "prop7")
    tracker, points = iid.prop7_tracker(_table(config.net), config.extra)
    return TrackerResult(config, tracker, tuple(points),
                         search=srch.search("prop-7", config.search_budget, config.search_seed))


# =========================================================================== high probability: Props. 2, 3, 6, Cor. 4(iii)


@dataclass(frozen=True)
class IdentityConfig(Config):
    """Propositions 2 and 6 (thesis Props. 2.2, 2.6): Markov bounds in the identity regime L alpha^2 <= 1."""

    seeds: tuple = field(Seeds(), iid.PROP2_SEEDS, "One network per seed.")
    betas: tuple = field(Reals(0.5), iid.PROP2_BETAS, "Scaling exponents (>= 1/2 so that L alpha_L^2 <= 1).")
    depths: tuple = field(Ints(low=1, increasing=True), iid.PROP2_DEPTHS, "Depths (nested draws).")
    law: str = _law_field("uniform", "Weight law.")
    seed0: int = _seed(2, "Offset of the seeds.")
    deltas: tuple = field(Reals(0, 1, closed="right"), iid.PROP2_DELTAS, "Confidence levels.")
    quantity: str = field(Choice("h", "p"), "h", "'h' (Proposition 2) or 'p' (Proposition 6).")


@dataclass(frozen=True)
class FrequencyRun:
    """Violation frequencies: ``items`` = ((instance, FrequencyResult), ...); ``worst`` the item with the
    largest freq - delta (every statement holds iff it does); ``sample`` the runs the figures draw."""

    config: Any
    items: tuple
    worst: tuple
    sample: Any = None
    info: dict = _field(default_factory=dict)


def identity(config: IdentityConfig) -> FrequencyRun:
    """Violations of ||x_L - x_0||^2/||x_ref||^2 <= 2 L alpha_L^2 / delta per (beta, L, delta)."""
    _check_type(config, IdentityConfig, "identity")
    c = config
    table = iid.net_table(c.seeds, tuple((b, c.depths) for b in c.betas), law=c.law, seed0=c.seed0)
    items = tuple(iid.markov_items(table, c.quantity, c.deltas))
    return FrequencyRun(c, items, iid.worst(items), table)


def frequency_verdict(result: FrequencyRun) -> Verdict:
    """A frequency (:func:`theory.claims.frequency_verdict`) of the worst instance (largest freq - delta):
    it passes iff every instance's violation frequency is at most its delta."""
    res = result.worst[1]
    return _frequency_verdict(res, {"delta": res.delta})


def _frequency_summary(result):
    inst, res = result.worst
    return {"worst_freq": float(res.freq), "worst_delta": float(res.delta), "worst_ci_high": float(res.ci[1])}


PROP2_PRESETS = {"check": IdentityConfig(), "paper": IdentityConfig(seeds=tuple(range(1000)), depths=(10, 100, 1000))}
PROP6_PRESETS = {"check": IdentityConfig(quantity="p"),
                 "paper": IdentityConfig(seeds=tuple(range(1000)), depths=(10, 100, 1000), quantity="p")}


@dataclass(frozen=True)
class Res1Config(Config):
    """res-1 (leaky ReLU 0.8, Gaussian V) runs of the exact-in-law sampler for Proposition 3 and
    Corollary 4(iii) (thesis Prop. 2.3, Cor. 2.4)."""

    d: int = field(Int(low=1), iid.RES1["d"], "Width (>= 64 for the statements).")
    L: int = field(Int(low=1), iid.RES1["L"], "Depth.")
    beta: float = _positive(iid.RES1["beta"], "Scaling exponent.")
    runs: int = field(Int(low=2), iid.RES1["runs"], "Independent networks.")
    seed: int = _seed(iid.RES1["seed"], "Seed.")
    deltas: tuple = field(Reals(0, 1, closed="right"), iid.DELTAS, "Confidence levels.")
    form: str = field(Choice("proved", "stated", "cor4-iii"), "proved", "'proved' (Prop. 3 for ||h_L||^2, as "
                      "Appendix A.3 shows it), 'stated' (Prop. 3 as printed, for ||h_L - h_0||^2) or 'cor4-iii' (the "
                      "two-sided statement of Corollary 4(iii)).")

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
class ThresholdConfig(Config):
    """The width threshold of the remark after Corollary 4 (thesis Cor. 2.4): the lower bound of (iii) is
    positive iff d > 1408/(9 delta) (printed: 99/(64 delta))."""

    above: Res1Config = field(Custom(_instance(Res1Config), "a Res1Config", type_name="Res1Config",
                                     invalid=[(3, TypeError)], boundary=[Res1Config(form="cor4-iii")]),
                              Res1Config(**iid.THRESHOLD_WIDE, deltas=iid.THRESHOLD_ABOVE, form="cor4-iii"),
                              "Runs at a width at/above the corrected threshold for every delta of its deltas.")
    between: tuple = field(Custom(_instance(Res1Config, many=True), "a non-empty tuple of Res1Config",
                                  type_name="tuple of Res1Config", invalid=[(3, TypeError), ((), TypeError)],
                                  boundary=[(Res1Config(form="cor4-iii"),)]),
                           (Res1Config(form="cor4-iii"),
                            Res1Config(**iid.THRESHOLD_WIDE, deltas=iid.THRESHOLD_BETWEEN[256], form="cor4-iii")),
                           "Runs at widths between the printed and the corrected thresholds for their deltas.")


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


def threshold_erratum_verdict(result: ThresholdResult) -> Verdict:
    """The erratum: the printed threshold admits trivial bounds (fails), the corrected one holds."""
    return erratum_verdict(iid.nontrivial_lower_bound_verdict(result.between),
                           iid.nontrivial_lower_bound_verdict(result.above))


def _threshold_summary(result):
    return {"min_lower_bound_above": min(i["lower_bound"] for i, _ in result.above),
            "max_lower_bound_between": max(i["lower_bound"] for i, _ in result.between),
            "max_freq_above": max(r.freq for _, r in result.above)}


# =========================================================================== Figure 2


@dataclass(frozen=True)
class Fig2Config(BackendConfig):
    """Figure 2a (thesis Fig. 2.2): ||h_L||/||h_0|| at beta = 1/2 by the exact-in-law Gaussian sampler; the
    torch backend runs the sampler's recursion (:func:`theory.backends.scaling_figs.exact_law_log_norms`) on
    the same NumPy draws."""

    runs: int = field(Int(low=8), iid.FIG2["runs"], "Independent networks.")
    d: int = field(Int(low=1), iid.FIG2["d"], "Width.")
    L: int = field(Int(low=1), iid.FIG2["L"], "Depth.")
    beta: float = _positive(iid.FIG2["beta"], "Scaling exponent.")
    seed: int = _seed(2, "Seed.")
    backend: str = backend_field()
    device: str = device_field()
    dtype: str = dtype_field()


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


def fig2_verdict(result: Fig2Result) -> Verdict:
    """:func:`_scaling_iid.fig2_verdict`: quartiles, bounds, normality of the log."""
    c = result.config
    return iid.fig2_verdict(result.ratios, c.d, c.L, c.beta)


# =========================================================================== Corollary 8(iii) at small depth


@dataclass(frozen=True)
class SmallDepthConfig(Config):
    """Corollary 8(iii) (thesis Cor. 2.8) at small depth, beta = 1/2: res-3 and res-1 identity networks."""

    res3_seeds: int = field(Int(low=2), 400, "res-3 networks (uniform weights).")
    res1_seeds: int = field(Int(low=2), 200, "res-1 identity networks (Gaussian weights).")
    depths: tuple = field(Ints(low=1, increasing=True), iid.SMALL_DEPTHS, "Depths (nested draws).")
    law: str = _law_field("uniform", "Law of the res-3 weights.")
    search_budget: int = _search_budget(80)
    search_seed: int = _search_seed()


SMALL_PRESETS = {"check": SmallDepthConfig(),
                 "paper": SmallDepthConfig(res3_seeds=4000, res1_seeds=2000, depths=(1, 2, 4, 8, 16, 32, 64, 128),
                                           search_budget=800)}


@dataclass(frozen=True)
class SmallDepthResult:
    """The two net tables (their Jacobian means at beta = 1/2), the corrected tracker and the printed one, and
    the worst-case search of the corrected form over its hypotheses (``search``, :mod:`._search`)."""

    config: SmallDepthConfig
    res3: Any
    res1: Any
    corrected: Any
    printed: Any
    search: Any = None


def small_depth(config: SmallDepthConfig) -> SmallDepthResult:
    """Corrected sandwich (1 + 1/(2L))^L - 1 <= E <= (1 + 1/L)^L - 1 <= e - 1 and the printed e^{1/2} - 1."""
    _check_type(config, SmallDepthConfig, "small_depth")
    c = config
    plan = ((0.5, c.depths),)
    res3 = iid.net_table(tuple(range(c.res3_seeds)), plan, law=c.law, jac_betas=(0.5,), seed0=8)
    res1 = iid.net_table(tuple(range(c.res1_seeds)), plan, law="gaussian", arch="res1", activation="identity",
                         jac_betas=(0.5,), seed0=9)
    return SmallDepthResult(c, res3, res1, iid.cor8iii_tracker(res3, res1), iid.cor8_printed_tracker(res3),
                            srch.search("cor-8/iii", c.search_budget, c.search_seed))


def cor8iii_verdict(result: SmallDepthResult):
    """The corrected (finite-L) form of Corollary 8(iii), on the networks and over the search."""
    return _searched_verdict(result.corrected, result.search)


def cor8_erratum_verdict(result: SmallDepthResult) -> Verdict:
    """The erratum: the printed lower bound e^{1/2} - 1 must fail, the finite-L form hold (on the networks and
    over the search of the corrected form)."""
    return erratum_verdict(bound_verdict(result.printed.result(), BOUND_EXPECTED),
                           _searched_verdict(result.corrected, result.search))


def _small_summary(result):
    out = {"ratio_max_corrected": float(result.corrected.result().ratio),
           "ratio_max_printed": float(result.printed.result().ratio)}
    if result.search is not None:
        out["search_ratio_max_corrected"] = float(result.search.ratio)
    return out


# =========================================================================== Proposition 10


@dataclass(frozen=True)
class Prop10Config(Config):
    """Proposition 10 (thesis Prop. 2.10): res-1, beta = 1/2, N(0, v/d) weights against the SDE
    dH = sqrt(v'/d) sigma(H) dB, strong error on the natural coupling (width 4, leaky ReLU 0.8)."""

    pairs: tuple = _rows_field(_pair_item, "a non-empty tuple of (label, v_net > 0, v_sde > 0)",
                               "tuple of (str, float, float)", tuple((k, *v) for k, v in lim.P10_VARIANCES.items()),
                               "(label, v of the weights, v' of the SDE) pairs; each gets one rate fit.",
                               ("x", 0.0, 1.0), [(("x", 1.0, 1.0),)])
    paths: int = field(Int(low=2), lim.P10["paths"], "Brownian paths (a multiple of groups).")
    groups: int = field(Int(low=2), lim.P10["groups"], "Rows of the rate fit: means over paths/groups consecutive "
                        "paths.")
    L_ref: int = field(Int(low=1), lim.P10["L_ref"], "Steps of the Euler-Maruyama reference (a multiple of every "
                       "depth).")
    grid: tuple = field(Ints(low=1, min_len=3, increasing=True), tuple(int(g) for g in lim.P10["grid"]), "Depths L.")
    seed: int = _seed(10, "Seed.")
    level: float = field(Real(0, 1, closed="neither"), 0.99, "Two-sided level of the slope windows (Bonferroni "
                         "over the pairs).")
    slope_shift: float = field(Real(), 0.0, "Added to the predicted slope -1/2 (0 for the claims; +-0.05 in the "
                               "negative controls).")

    def check(self):
        if self.paths % self.groups:
            raise self.invalid("paths", f"be a multiple of groups = {self.groups}")
        if any(self.L_ref % L for L in self.grid):
            raise self.invalid("L_ref", "be a multiple of every depth of grid")


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


def prop10_verdict(result: Prop10Result) -> Verdict:
    """A rate (:func:`theory.claims.rate_verdict`) of the pair farthest from slope -1/2 in units of its window
    (so the verdict passes iff every pair does); ``measured`` adds its index ``recorded_pair``."""
    i = lim.worst_rate(result.fits, list(result.expected))
    v = rate_verdict(result.fits[i], result.expected[i], grid_label="L")
    label = result.config.pairs[i][0]
    return dataclasses.replace(v, message=f"{label} (worst of {len(result.fits)} pairs): {v.message}",
                               measured={"recorded_pair": i, **v.measured})


def prop10_erratum_verdict(result: Prop10Result) -> Verdict:
    """The erratum for pairs ((printed), (corrected)): the printed pair must fail
    (:func:`_scaling_limits.prop10_printed_verdict`), the corrected one decay at rate 1/2."""
    (bound, se) = result.bounds[0]
    printed = lim.prop10_printed_verdict(result.fits[0], bound, se, result.expected[0])
    return erratum_verdict(printed, rate_verdict(result.fits[1], result.expected[1], grid_label="L"))


def _prop10_summary(result):
    return {**{f"slope_{label}": float(f.slope) for (label, _, _), f in zip(result.config.pairs, result.fits)},
            **{f"tol_{label}": float(e["tol"]) for (label, _, _), e in zip(result.config.pairs, result.expected)}}


# =========================================================================== Proposition 11


@dataclass(frozen=True)
class Prop11Config(Config):
    """Proposition 11 (thesis Prop. 2.11): res-2 tanh with trigonometric weights (A5), beta = 1, against
    the neural ODE (14): max_k ||H_{k/L} - h_k|| = O(1/L)."""

    seeds: tuple = field(Seeds(min_len=2), tuple(lim.P11["seeds"]), "Path draws (at least 2: the window is "
                         "their scatter).")
    grid: tuple = field(Ints(low=1, min_len=3, increasing=True), tuple(int(g) for g in lim.P11["grid"]), "Depths L "
                        "(powers of 2: each divides the largest).")
    d: int = field(Int(low=1), lim.P11["d"], "Width.")
    beta: float = _positive(1.0, "Scaling exponent of the network (1 for the statement).")
    noise: float = field(Real(0), 0.0, "Standard deviation times sqrt(d) of i.i.d. noise added to every layer (0: "
                         "smooth weights).")
    level: float = field(Real(0, 1, closed="neither"), 0.99, "Two-sided level of the window on the slope.")

    def check(self):
        if any(self.grid[-1] % L for L in self.grid):
            raise self.invalid("grid", "be depths dividing the largest")


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


# =========================================================================== Proposition 11, the constant


@dataclass(frozen=True)
class Prop11ConstantConfig(Config):
    """Proposition 11's explicit constant in the weight-tied linear case (Appendix A.10): a Hypothesis search over
    instances (d, scale of Vbar, L, seed, ||h_0||) of :func:`_scaling_limits.tied_linear_instance` for the largest
    ratio of max_k ||e^{k Vbar/L} h_0 - (I + Vbar/L)^k h_0|| to e^{K_1} (K_2 + 1) K_1 / (2L)."""

    examples: int = field(Int(low=1), 100, "Hypothesis examples (``max_examples``).")
    widths: tuple = field(Ints(low=1, min_len=2, max_len=2, increasing=True), (1, 6), "Smallest and largest width "
                          "d drawn.")
    scales: tuple = field(Reals(0, closed="neither", min_len=2, max_len=2, increasing=True), (0.01, 3.0),
                          "Range of the scale of Vbar (entries N(0, scale^2 / d)).")
    depths: tuple = field(Ints(low=1, distinct=True), (4, 10, 100, 1000), "Depths L sampled from.")
    seed_max: int = field(Seed(), 2**16, "Seeds of the instances are drawn in [0, seed_max].")
    log10_h0_norms: tuple = field(Reals(min_len=2, max_len=2, increasing=True), (-2.0, 4.0), "Range of "
                                  "log10 ||h_0|| (the bound is not homogeneous in h_0).")
    beta: float = _positive(1.0, "Scaling exponent of the network, alpha = L^-beta, against the same ODE (1 for the "
                            "statement; another value is a wrong scaling, for the controls).")
    derandomize: bool = field(Bool(), True, "Derandomised search (the same instances on every run, as the check "
                              "records them); False draws afresh (exploration).")


PROP11_CONSTANT_PRESETS = {
    "check": Prop11ConstantConfig(),
    # no experiment in the paper for the constant; a longer search
    "paper": Prop11ConstantConfig(examples=1000),
}


@dataclass(frozen=True)
class Prop11ConstantResult:
    """``tracker`` (:class:`theory.rates.BoundTracker`) of every instance Hypothesis tried, with its worst one;
    ``lhs`` and ``rhs`` the errors and bounds in the order tried; ``search`` the same search as a
    :class:`theory.worst_case.WorstCase` (:func:`prop11_worst_case`), so that the report shows it as it shows
    the other bounds' searches."""

    config: Prop11ConstantConfig
    tracker: Any
    lhs: np.ndarray
    rhs: np.ndarray
    search: Any = None


#: the right-hand side e^{K_1} (K_2 + 1) K_1 / (2L) is 1/2 times e^{K_1} (K_2 + 1) K_1 / L
PROP11_CONSTANT = ("1/2 in e^K1 (K2 + 1) K1 / (2L)", 0.5)


def prop11_worst_case(config: Prop11ConstantConfig, tracker, lhs, rhs) -> WorstCase:
    """The Hypothesis search of :func:`prop11_constant` as a :class:`theory.worst_case.WorstCase`: its largest
    ratio, the instance and both sides there, the instances tried (all within ``examples``), the box of the
    strategies and the running maximum of LHS/RHS in the order tried (seed 0: the search is derandomised)."""
    r = tracker.result()
    ratios = np.asarray(lhs, dtype=float) / np.asarray(rhs, dtype=float)
    i = int(np.argmax(np.isnan(ratios))) if np.isnan(ratios).any() else int(np.argmax(ratios))
    c = config
    dims = (Dim("d", *c.widths, "int"), Dim("scale", *c.scales), Dim("L", min(c.depths), max(c.depths), "log-int"),
            Dim("seed", 0, c.seed_max, "int"), Dim("log10_h0_norm", *c.log10_h0_norms))
    method = (f"Hypothesis ({'derandomised' if c.derandomize else 'random'}), target(LHS/RHS), "
              f"L sampled from {list(c.depths)}")
    return WorstCase(ratio=float(r.ratio), instance=r.worst, lhs=float(lhs[i]), rhs=float(rhs[i]),
                     evaluations=int(len(lhs)), budget=c.examples, seed=0, method=method, dims=dims,
                     constant=PROP11_CONSTANT, outside=0, trace=np.maximum.accumulate(ratios))


def prop11_constant(config: Prop11ConstantConfig) -> Prop11ConstantResult:
    """Search the instances with Hypothesis (``target`` on LHS/RHS), every one added to a BoundTracker."""
    _check_type(config, Prop11ConstantConfig, "prop11_constant")
    require("scaling.prop11_constant")
    from hypothesis import HealthCheck, given, note, settings, target
    from hypothesis import strategies as st

    c = config
    tracker = BoundTracker()
    lhs, rhs = [], []

    @settings(max_examples=c.examples, derandomize=c.derandomize, database=None, deadline=None, print_blob=False,
              suppress_health_check=[HealthCheck.too_slow])
    @given(d=st.integers(*c.widths), scale=st.floats(*c.scales), L=st.sampled_from(c.depths),
           seed=st.integers(0, c.seed_max), log_norm=st.floats(*c.log10_h0_norms))
    def hunt(d, scale, L, seed, log_norm):
        err, bound = lim.tied_linear_instance(d, scale, L, seed, 10.0**log_norm, beta=c.beta)
        note(f"d={d} scale={scale} L={L} seed={seed} ||h0||=1e{log_norm}: error {err:.3e}, bound {bound:.3e}")
        target(err / bound, label="LHS/RHS")
        tracker.add(err, bound, instance={"d": d, "scale": scale, "L": L, "seed": seed, "log10_h0_norm": log_norm})
        lhs.append(err)
        rhs.append(bound)

    with without_source_constants(clear_cache=True):
        hunt()
    lhs, rhs = np.array(lhs), np.array(rhs)
    return Prop11ConstantResult(c, tracker, lhs, rhs, prop11_worst_case(c, tracker, lhs, rhs))


def prop11_constant_verdict(result: Prop11ConstantResult):
    """Every instance's LHS/RHS at most 1 (:func:`theory.claims.bound_verdict`), the search recorded as a
    :class:`theory.worst_case.WorstCase` (``measured["search"]``)."""
    return bound_verdict(_with_search(result.tracker, result.search), BOUND_EXPECTED)


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
register("scaling.prop11_constant", config=Prop11ConstantConfig, presets=PROP11_CONSTANT_PRESETS,
         measure=prop11_constant, verdict=prop11_constant_verdict, claims=("scaling/prop-11/constant",),
         summary=lambda r: {"ratio_max": float(r.tracker.result().ratio), "instances": int(r.lhs.size)})
