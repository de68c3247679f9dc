r"""The searches of the bound claims of ``implicit-reg`` (Lemma 18, (35)-(36) of Prop. 11, Prop. 7, B.5), as
registered experiments.

Each bound is measured twice over its hypothesis set, inside the experiment's ``measure`` (so that ``theory run``
redraws both):

* over instances that Hypothesis draws and steers towards large ratios with ``target`` (the random instances of
  the record, a :class:`theory.rates.BoundResult`); the package computes the sides of one instance
  (:func:`.general.lemma18_sides`, :func:`.general.p11_bound_sides`, :func:`.general.p7_run`,
  :func:`.section5.b5_sides`);
* by the worst-case search :func:`theory.worst_case.search_worst_case` over a declared box of the statement's
  parameters, reaching its extremes (the equality cases of Lemma 18, a saturated tanh in (36), the edges of
  (47)-(48) and aligned data in B.5, small and large clip levels, training times and data scales in Prop. 7),
  with a fixed budget and seed (config fields ``search_budget``, ``search_seed``); its
  :class:`~theory.worst_case.WorstCase` is attached to the BoundResult (``with_search``), and the verdict passes
  only if both stay within the bound.

The experiments:

* ``implicit_reg.lemma18_search`` (:class:`Lemma18SearchConfig`): ``implicit-reg/lemma-18``;
* ``implicit_reg.prop11_bound_search`` (:class:`Prop11BoundSearchConfig`): ``implicit-reg/prop-11/bound``;
* ``implicit_reg.prop7_search`` (:class:`Prop7SearchConfig`): the four records ``implicit-reg/prop-7``,
  ``.../displacement``, ``.../intermediate``, ``.../gronwall`` (one set of clipped-GD runs, one search and one
  verdict each);
* ``implicit_reg.b5_search`` (:class:`B5SearchConfig`): ``implicit-reg/prop-5/b5``.

Determinism. Derandomised Hypothesis seeds a search from the source text of its inner test (decorators
included): the inner ``hunt`` functions below are the checks' own, character for character, and must stay so
(their draws, hence the records, change otherwise). Their ``settings(...)`` are built on a fixed parent
(:data:`SEARCH_SETTINGS` over Hypothesis's ``"default"`` profile: derandomised, no example database, no
deadline), so a search draws the same instances under any Hypothesis profile and outside pytest
(``theory run``); the pool of constants Hypothesis takes from the source of the imported modules is emptied
during a search (as the suite's ``conftest.py`` does for the whole session), so the draws do not depend on what
else is imported. Hypothesis is needed only when a search runs (it is a test extra of the package). The
worst-case search is deterministic given its seed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from theory.claims import Verdict, bound_verdict
from theory.rates import BoundTracker
from theory.worst_case import search_worst_case

from .._hypothesis import require, without_source_constants
from ..config import Bool, Choice, Config, Int, Real, field
from ._common import box, search_budget_field, search_seed_field, with_measured
from .general import (EXPECTED_L18, EXPECTED_P11_BOUND, LEMMA18_BOX, P7_BOX, P7_GROUPS, P11_BOX, lemma18_search_sides,
                      lemma18_sides, p7_measured, p7_run, p7_search_sides, p11_bound_sides, p11_search_sides)
from .section5 import B5_BOX, B5_CONSTANT, b5_search_sides, b5_sides

__all__ = ["SEARCH_SETTINGS", "strategies", "lemma18_hunt", "p11_hunt", "p7_hunt_all", "b5_hunt",
           "Lemma18SearchConfig", "Lemma18SearchResult", "measure_lemma18_search", "lemma18_search_verdict",
           "Prop11BoundSearchConfig", "Prop11BoundSearchResult", "measure_prop11_bound_search",
           "prop11_bound_search_verdict", "Prop7SearchConfig", "Prop7SearchResult", "measure_prop7_search",
           "prop7_search_verdict", "prop7_norm_verdict", "prop7_displacement_verdict", "prop7_intermediate_verdict",
           "prop7_gronwall_verdict", "B5SearchConfig", "B5SearchResult", "measure_b5_search", "b5_search_verdict",
           "EXPECTED_B5", "PRESETS"]

#: the settings every search runs under (over Hypothesis's "default" profile; ``max_examples`` and the
#: deadline come from the search): derandomised and without the example database, so that two runs on any
#: machine draw the same instances; no deadline and no too-slow health check (one instance may train a network)
SEARCH_SETTINGS = {"derandomize": True, "database": None, "deadline": None, "print_blob": True}

EXPECTED_B5 = {"ratio_max": 1.0}


def _hypothesis():
    """(settings, given, target, note) of Hypothesis, ``settings(**kw)`` built on the fixed parent."""
    hypothesis = require("theory.experiments.implicit_reg.searches")
    parent = hypothesis.settings(hypothesis.settings.get_profile("default"), **SEARCH_SETTINGS,
                                 suppress_health_check=[hypothesis.HealthCheck.too_slow])

    def settings(**kw):
        return hypothesis.settings(parent, **kw)

    return settings, hypothesis.given, hypothesis.target, hypothesis.note


@functools.lru_cache(maxsize=None)
def strategies() -> SimpleNamespace:
    """The Hypothesis strategies of the searches: ``lemma18()``, ``p11()``, ``p7()``, ``b5()`` (each a function
    returning the strategy, as the checks called them)."""
    from hypothesis import strategies as st

    @st.composite
    def lemma18_instances(draw):
        """Shapes m, r, n in 1..8; Gaussian or ill-conditioned (condition up to 1e8) A and B; A' of size 1e-4..1."""
        return {"m": draw(st.integers(1, 8)), "r": draw(st.integers(1, 8)), "n": draw(st.integers(1, 8)),
                "kind": draw(st.sampled_from(["gaussian", "ill"])), "scale": draw(st.sampled_from([1.0, 1e-2, 1e-4])),
                "seed": draw(st.integers(0, 2**31 - 1))}

    @st.composite
    def p11_instances(draw):
        return {"seed": draw(st.integers(0, 10_000)), "L": draw(st.sampled_from([2, 3, 5, 10, 40, 200, 1000])),
                "scale": draw(st.sampled_from([0.3, 1.0, 2.0])), "omega": draw(st.sampled_from([1.0, 3.0, 6.0])),
                "perturb": draw(st.booleans())}

    @st.composite
    def p7_instances(draw):
        return (draw(st.integers(0, 1000)), draw(st.sampled_from([1, 2, 4, 8, 16, 32])),
                draw(st.sampled_from(["paper", "smooth"])), draw(st.sampled_from([0.05, 0.2, 1.0])),
                draw(st.sampled_from([0.02, 0.05])), draw(st.sampled_from([10, 40])))

    @st.composite
    def b5_instances(draw):
        """Points inside the assumptions (47)-(48) of B.5: q >= d + d', m >= n, ||x_i|| = sqrt(q),
        ||A - A_bar||_F <= 1/2, ||V_k||_F <= 1, ||W_k - W_bar||_F <= 1/2, ||W_bar||_F <= sqrt(2 q m), sigma = tanh."""
        d = draw(st.integers(1, 4))
        d_out = draw(st.integers(1, 3))
        q = d + d_out + draw(st.integers(0, 3))
        n = draw(st.integers(1, 12))
        m = n + draw(st.integers(0, 12))
        return {"d": d, "d_out": d_out, "q": q, "n": n, "m": m, "L": draw(st.sampled_from([1, 2, 4, 8, 16])),
                "v_radius": draw(st.floats(0.5, 1.0)), "aligned": draw(st.booleans()),
                "seed": draw(st.integers(0, 2**16))}

    return SimpleNamespace(lemma18=lemma18_instances, p11=p11_instances, p7=p7_instances, b5=b5_instances)


# --------------------------------------------------------------------------- the searches (inner tests unchanged)


def lemma18_hunt(strategy=None, max_examples=300, enforce=True):
    """Running max of LHS/RHS per statement of Lemma 18 over Hypothesis-drawn instances (``strategy``, by default
    :func:`strategies` ``.lemma18()``); (BoundResult, per-statement max)."""
    settings, given, target, note = _hypothesis()
    lemma18_instances = strategies().lemma18
    tracker = BoundTracker()
    per = {}

    @settings(max_examples=max_examples, deadline=None)
    @given(strategy if strategy is not None else lemma18_instances())
    def hunt(inst):
        for name, lhs, rhs in lemma18_sides(inst, enforce):
            rhs = max(rhs, 1e-300)  # AB = 0 only outside the hypothesis (control); ratio then huge
            ratio = tracker.add(lhs, rhs, {**inst, "statement": name})
            per[name] = max(per.get(name, 0.0), ratio)
            target(ratio, label=name)
        note(str(inst))

    with without_source_constants():
        hunt()
    return tracker.result(), per


def p11_hunt(max_examples=40, shrink=None):
    """Running max of LHS/RHS of (35)-(36) over Hypothesis-drawn problems; (BoundResult, per-bound max, rows
    (L, bound, ratio)); ``shrink="L"`` divides the right-hand sides by L (a wrong O(1/L^2) form, control)."""
    settings, given, target, _ = _hypothesis()
    p11_instances = strategies().p11
    tracker, per, rows = BoundTracker(), {}, []

    @settings(max_examples=max_examples, deadline=None)
    @given(p11_instances())
    def hunt(inst):
        for name, lhs, rhs in p11_bound_sides(inst, inst["L"] if shrink == "L" else 1.0):
            ratio = tracker.add(lhs, rhs, {**inst, "bound": name})
            per[name] = max(per.get(name, 0.0), ratio)
            rows.append((inst["L"], name, ratio))
            target(ratio, label=name)

    with without_source_constants():
        hunt()
    return tracker.result(), per, rows


def p7_hunt_all(max_examples=25):
    """The Hypothesis-drawn clipped-GD runs shared by the Prop. 7 bound records: tuple of (instance, run), the
    instance being (seed, L, init, clip, lr, steps) of :func:`.general.p7_run`."""
    settings, given, target, _ = _hypothesis()
    p7_instances = strategies().p7
    runs = []

    @settings(max_examples=max_examples, deadline=None)
    @given(p7_instances())
    def hunt(inst):
        res = p7_run(*inst)
        target(max(res["ratios"][k] for k in ("norm (17)", "h (21)", "dp (K1/L)", "dh (K1/L)")))
        runs.append((inst, res))

    with without_source_constants():
        hunt()
    return tuple(runs)


def b5_hunt(max_examples=60):
    """LHS/RHS of B.5 over Hypothesis-drawn instances inside (47)-(48): (tracker against the sqrt(qn) bound,
    tracker against the paper's sqrt(qm) one, left-hand sides, sqrt(qn) right-hand sides)."""
    settings, given, target, note = _hypothesis()
    b5_instances = strategies().b5
    tracker, printed = BoundTracker(), BoundTracker()
    lhs_all, rhs_all = [], []

    @settings(max_examples=max_examples)
    @given(b5_instances())
    def hunt(inst):
        lhs, rhs_qn, rhs_qm = b5_sides(inst)
        note(f"instance {inst}: lhs {lhs:.3e}, sqrt(qn) bound {rhs_qn:.3e}")
        target(lhs / rhs_qn, label="LHS/RHS")
        tracker.add(lhs, rhs_qn, instance=inst)
        printed.add(lhs, rhs_qm, instance=inst)
        lhs_all.append(lhs)
        rhs_all.append(rhs_qn)

    with without_source_constants():
        hunt()
    return tracker, printed, np.array(lhs_all), np.array(rhs_all)


# --------------------------------------------------------------------------- Lemma 18


@dataclass(frozen=True)
class Lemma18SearchConfig(Config):
    """The searches of Lemma 18: Hypothesis (shapes m, r, n in 1..8, Gaussian or ill-conditioned A and B) and the
    worst-case search over :data:`.general.LEMMA18_BOX` (its equality cases inside)."""

    max_examples: int = field(Int(low=1), 300, "Hypothesis examples (instances drawn).")
    enforce: bool = field(Bool(), True, "Check the product statements only where they apply (m >= r, n >= r); False "
                          "keeps them outside their hypothesis (a negative control).")
    search_budget: int = search_budget_field(300)
    search_seed: int = search_seed_field()
    rhs_factor: float = field(Real(0, closed="neither"), 1.0, "Multiplies the right-hand sides of the worst-case "
                              "search (1: the lemma; a negative control lowers it, and the search alone must find the "
                              "violation).")


@dataclass(frozen=True)
class Lemma18SearchResult:
    """``bound``: the BoundResult over every (instance, statement) Hypothesis drew, with the worst-case search
    attached (``bound.search``); ``per``: the max ratio per statement over the drawn instances."""

    bound: object
    per: dict


def measure_lemma18_search(config: Lemma18SearchConfig) -> Lemma18SearchResult:
    c = config
    bound, per = lemma18_hunt(max_examples=c.max_examples, enforce=c.enforce)
    search = search_worst_case(functools.partial(lemma18_search_sides, rhs_factor=c.rhs_factor), box(LEMMA18_BOX),
                               budget=c.search_budget, seed=c.search_seed)
    return Lemma18SearchResult(bound.with_search(search), per)


def lemma18_search_verdict(result: Lemma18SearchResult) -> Verdict:
    """A bound, lemma-18: max LHS/RHS over the drawn instances and the three statements, and over the worst-case
    search, <= 1 + 1e-10 (the equality cases, up to rounding); ``measured`` adds the max per statement."""
    return with_measured(bound_verdict(result.bound, EXPECTED_L18), ratio_per_statement=result.per)


# --------------------------------------------------------------------------- Prop. 11, (35)-(36)


@dataclass(frozen=True)
class Prop11BoundSearchConfig(Config):
    """The searches of the explicit gaps (35), (36) of Prop. 11 (g = theta tanh(u), drawn Theta, L up to 1000 for
    Hypothesis, up to 2000 in the worst-case search over :data:`.general.P11_BOX`)."""

    max_examples: int = field(Int(low=1), 40, "Hypothesis examples (problems drawn).")
    shrink: str = field(Choice("none", "L"), "none", "\"L\" divides the right-hand sides by L (a wrong O(1/L^2) "
                        "form: a negative control), in both searches.")
    search_budget: int = search_budget_field(200)
    search_seed: int = search_seed_field()


@dataclass(frozen=True)
class Prop11BoundSearchResult:
    """``bound``: the BoundResult of the drawn problems with the worst-case search attached; ``per``: the max ratio
    per bound ("35", "36"); ``rows``: (L, bound, ratio)."""

    bound: object
    per: dict
    rows: list


def measure_prop11_bound_search(config: Prop11BoundSearchConfig) -> Prop11BoundSearchResult:
    c = config
    bound, per, rows = p11_hunt(max_examples=c.max_examples, shrink=c.shrink)
    search = search_worst_case(functools.partial(p11_search_sides, shrink="L" if c.shrink == "L" else 1.0),
                               box(P11_BOX), budget=c.search_budget, seed=c.search_seed)
    return Prop11BoundSearchResult(bound.with_search(search), per, rows)


def prop11_bound_search_verdict(result: Prop11BoundSearchResult) -> Verdict:
    """A bound, prop-11/bound: max LHS/RHS of (35) and (36) <= 1 over the drawn problems and the worst-case search;
    ``measured`` adds the max per bound and the number of problems."""
    return with_measured(bound_verdict(result.bound, EXPECTED_P11_BOUND), ratio_per_bound=result.per,
                         n_problems=len(result.rows) // 2)


# --------------------------------------------------------------------------- Prop. 7


@dataclass(frozen=True)
class Prop7SearchConfig(Config):
    """The searches of the Prop. 7 bounds: clipped GD of model (3), tanh, from Hypothesis-drawn (seed, L, init,
    clip, lr, steps), and one worst-case search per record over :data:`.general.P7_BOX`."""

    max_examples: int = field(Int(low=1), 25, "Hypothesis examples (clipped-GD runs drawn).")
    search_budget: int = search_budget_field(120)
    search_seed: int = search_seed_field()
    search_steps: int = field(Int(low=1), 20, "GD steps of a run of the worst-case search (lr = T / steps).")
    rhs_scale: float = field(Real(0, closed="neither"), 1.0, "Multiplies the right-hand sides of the worst-case "
                             "searches (1: the statement; a negative control lowers it).")
    gronwall_terms: str = field(Choice("printed", "initial-only"), "printed", "The Gronwall bound of the worst-case "
                                "search: \"printed\" (||Z_{k+1}(0) - Z_k(0)|| + beta T / L) e^{alpha T}, or "
                                "\"initial-only\" ||Z_{k+1}(0) - Z_k(0)|| (both terms dropped: a negative control).")


@dataclass(frozen=True)
class Prop7SearchResult:
    """``runs``: (instance, :func:`.general.p7_run` result) per drawn run; ``searches``: the worst-case search of
    each record (a :class:`~theory.worst_case.WorstCase` per claim ID of :data:`.general.P7_GROUPS`)."""

    runs: tuple
    searches: dict = None


def measure_prop7_search(config: Prop7SearchConfig) -> Prop7SearchResult:
    c = config
    # the four searches share the seed and the box, hence their exploration points (the runs are memoised)
    searches = {cid: search_worst_case(functools.partial(p7_search_sides, cid=cid, steps=c.search_steps,
                                                         rhs_scale=c.rhs_scale, gronwall_terms=c.gronwall_terms),
                                       box(P7_BOX), budget=c.search_budget, seed=c.search_seed)
                for cid in P7_GROUPS}
    return Prop7SearchResult(p7_hunt_all(c.max_examples), searches)


def prop7_search_verdict(result: Prop7SearchResult, cid: str = "implicit-reg/prop-7") -> Verdict:
    """A bound, the Prop. 7 record ``cid`` (a key of :data:`.general.P7_GROUPS`): max over the drawn runs and over
    the record's worst-case search of the ratios it asserts (printed constants) <= 1 (the displacement bound:
    1 + 1e-12, attained up to rounding); ``measured`` adds every ratio and the ranges of the constants."""
    if cid not in P7_GROUPS:
        raise ValueError(f"`cid` of prop7_search_verdict must be one of {sorted(P7_GROUPS)}; got {cid!r}")
    bound, expected, measured = p7_measured(result.runs, cid)
    if result.searches is not None:
        bound = bound.with_search(result.searches[cid])
    return with_measured(bound_verdict(bound, expected), **measured)


def prop7_norm_verdict(result: Prop7SearchResult) -> Verdict:
    """prop-7: the norm bound (17), ||A||_F, ||Z_k||, ||B||_F <= M = M_0 + T M_pi."""
    return prop7_search_verdict(result, "implicit-reg/prop-7")


def prop7_displacement_verdict(result: Prop7SearchResult) -> Verdict:
    """prop-7/displacement: each block moves at most t M_pi by time t."""
    return prop7_search_verdict(result, "implicit-reg/prop-7/displacement")


def prop7_intermediate_verdict(result: Prop7SearchResult) -> Verdict:
    """prop-7/intermediate: the bounds on h_k, p_k and their increments of the proof."""
    return prop7_search_verdict(result, "implicit-reg/prop-7/intermediate")


def prop7_gronwall_verdict(result: Prop7SearchResult) -> Verdict:
    """prop-7/gronwall: the derivative bound and the Gronwall bound on consecutive weights."""
    return prop7_search_verdict(result, "implicit-reg/prop-7/gronwall")


# --------------------------------------------------------------------------- B.5


@dataclass(frozen=True)
class B5SearchConfig(Config):
    """The searches of B.5's bound ||h_k - A x||_F <= (4 sqrt2 K k / L) e^{2 sqrt2 K} sqrt(qn) under (47)-(48):
    Hypothesis, and the worst-case search over :data:`.section5.B5_BOX` (the edges of (47)-(48), aligned data)."""

    max_examples: int = field(Int(low=1), 60, "Hypothesis examples (instances drawn).")
    search_budget: int = search_budget_field(1000)
    search_seed: int = search_seed_field()
    constant: float = field(Real(0, closed="neither"), float(B5_CONSTANT), "The constant of the worst-case search's "
                            "right-hand side, constant x sqrt(qn) (the printed 4 sqrt2 e^{2 sqrt2} for tanh; a "
                            "negative control lowers it below the smallest constant found).")


@dataclass(frozen=True)
class B5SearchResult:
    """``bound`` / ``printed``: BoundResults of the drawn instances against the sqrt(qn) bound (with the worst-case
    search attached) and the paper's sqrt(qm) one; ``lhs``, ``rhs``: the left-hand sides and the sqrt(qn)
    right-hand sides per drawn instance."""

    bound: object
    printed: object
    lhs: np.ndarray
    rhs: np.ndarray


def measure_b5_search(config: B5SearchConfig) -> B5SearchResult:
    c = config
    tracker, printed, lhs, rhs = b5_hunt(c.max_examples)
    search = search_worst_case(functools.partial(b5_search_sides, constant=c.constant), box(B5_BOX),
                               budget=c.search_budget, seed=c.search_seed,
                               constant=("4 sqrt2 K e^{2 sqrt2 K}", c.constant))
    return B5SearchResult(tracker.result().with_search(search), printed.result(), lhs, rhs)


def b5_search_verdict(result: B5SearchResult) -> Verdict:
    """A bound, prop-5/b5: max LHS/RHS against the sqrt(qn) form <= 1 over the drawn instances and the worst-case
    search; ``measured`` adds the ratio against the paper's looser sqrt(qm)."""
    return with_measured(bound_verdict(result.bound, EXPECTED_B5), printed_sqrt_qm_ratio=result.printed.ratio)


# --------------------------------------------------------------------------- presets and registry

PRESETS = {
    # the documents print no search; "paper" searches ten times as many instances, with ten times the budget
    "lemma18_search": {"check": Lemma18SearchConfig(),
                       "paper": Lemma18SearchConfig(max_examples=3000, search_budget=3000)},
    "prop11_bound_search": {"check": Prop11BoundSearchConfig(),
                            "paper": Prop11BoundSearchConfig(max_examples=400, search_budget=2000)},
    "prop7_search": {"check": Prop7SearchConfig(), "paper": Prop7SearchConfig(max_examples=250, search_budget=1200)},
    "b5_search": {"check": B5SearchConfig(), "paper": B5SearchConfig(max_examples=600, search_budget=10000)},
}


def _register():
    from theory.experiments import register

    register("implicit_reg.lemma18_search", config=Lemma18SearchConfig, presets=PRESETS["lemma18_search"],
             measure=measure_lemma18_search, verdict=lemma18_search_verdict, claims=("implicit-reg/lemma-18",),
             summary=lambda r: {"ratio": float(r.bound.ratio), "search_ratio": float(r.bound.search.ratio),
                                **{k: float(v) for k, v in r.per.items()}})
    register("implicit_reg.prop11_bound_search", config=Prop11BoundSearchConfig,
             presets=PRESETS["prop11_bound_search"], measure=measure_prop11_bound_search,
             verdict=prop11_bound_search_verdict, claims=("implicit-reg/prop-11/bound",),
             summary=lambda r: {"ratio": float(r.bound.ratio), "search_ratio": float(r.bound.search.ratio),
                                **{k: float(v) for k, v in r.per.items()}})
    register("implicit_reg.prop7_search", config=Prop7SearchConfig, presets=PRESETS["prop7_search"],
             measure=measure_prop7_search, verdict=prop7_norm_verdict,
             claims={"implicit-reg/prop-7": prop7_norm_verdict,
                     "implicit-reg/prop-7/displacement": prop7_displacement_verdict,
                     "implicit-reg/prop-7/intermediate": prop7_intermediate_verdict,
                     "implicit-reg/prop-7/gronwall": prop7_gronwall_verdict},
             summary=lambda r: {**{cid.rpartition("/")[2]: float(prop7_search_verdict(r, cid).measured["ratio"])
                                   for cid in P7_GROUPS},
                                **{f"search_{cid.rpartition('/')[2]}": float(w.ratio)
                                   for cid, w in r.searches.items()}})
    register("implicit_reg.b5_search", config=B5SearchConfig, presets=PRESETS["b5_search"], measure=measure_b5_search,
             verdict=b5_search_verdict, claims=("implicit-reg/prop-5/b5",),
             summary=lambda r: {"ratio": float(r.bound.ratio), "search_ratio": float(r.bound.search.ratio),
                                "printed_sqrt_qm_ratio": float(r.printed.ratio)})


_register()
