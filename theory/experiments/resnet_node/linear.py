r"""The deep linear ResNet of ``resnet-node`` (Section 3.2 of the paper: Assumption 1, Prop. 2, Th. 1,
Lemmas 1-2, Fig. 2; thesis Section 2.3.2, Assumption 2.3 and Appendices 2.A.2-2.A.5) as library
experiments.

The network maps x to :math:`\Pi x` with :math:`\Pi = (I + \theta_N/N)\cdots(I + \theta_1/N)`, the
loss is :math:`\ell = \|\Pi - B\|_\Sigma^2`, and the weights follow the gradient flow of the loss
(with the exact gradient, factor 2 included: :func:`theory.linear.gradient`).

* **Section 3.2 formulas** (:func:`sec32_gradient`, :func:`sec32_gradient_erratum`,
  :func:`sec32_product`): the gradient against finite differences (the printed formula misses a
  factor 2) and the order of the product (the paper prints the reverse order).
* **Prop. 2** (thesis Prop. 2.4; :func:`prop2`): under Assumption 1 the weights stay in the ball
  of radius 1/2, the loss decays like :math:`e^{-4mt/e}`, the layer differences are
  :math:`O(1/N)` uniformly in t, the layer-wise PL sandwich holds and each weight has a limit;
  each conclusion is a ratio to the proof's explicit bound. :func:`prop2_pl_erratum`: the PL
  constants of the proof; :func:`layer_differences`: the layer differences beyond Assumption 1 and
  from an i.i.d. start.
* **Th. 1 and Lemmas 1-2** (thesis Th. 2.5, Lemmas 2.6-2.7; :func:`thm1`, :func:`lemma1`):
  depth doubling of the depth embedding :math:`\psi_N`, of :math:`\Pi^N` and of the weights, and
  the equicontinuity bounds of the Arzela-Ascoli argument.
* **Fig. 2** (thesis Fig. 2.2; :func:`fig2`): distance of :math:`\Psi_N(t,\cdot)` to a deep
  reference over depth and training time.

Two regimes: *assumption* (Assumption 1 holds: Sigma with eigenvalues (1, 0.7, 0.5), B at 90 % of
the allowed distance from the initial product, inits zero, constant and cosine in depth) and
*large* (Sigma = I, B = expm(0.7 G), outside the assumption: what the figures show and what the
theorems do not guarantee). Flows are computed by :func:`linear_flow`; the measure functions take
a ``flow`` argument so that a caller may share flows between experiments (a memoised
:func:`linear_flow`).

* **Assumption 1 along the flow** (:func:`assumption1`, :func:`assumption1_verdict`). Assumption 1
  of the paper (thesis Assumption 2.3) asks :math:`\sqrt{\ell(0)} < m/(4\sqrt{2Me^3})` and
  :math:`\|\theta_n(0)\| \le 1/4`. From it the proof of Prop. 2 (thesis Prop. 2.4, Appendix 2.A.2)
  derives three conclusions, for every :math:`t \ge 0` and layer n:

  - the ball: :math:`\|\theta_n(t)\| < 1/2`;
  - the movement: :math:`\|\theta_n(t) - \theta_n(0)\| < 1/4` (the step ":math:`< 1/4 + 1/4`");
  - the loss: :math:`\ell(t) \le e^{-4mt/e}\ell(0)` (with the exact gradient, factor 2 included;
    see :func:`theory.linear.prop2_constants`).

  The experiment draws instances :math:`(\Sigma, B, \theta(0))` inside the assumption, half with a
  margin and half within 1 % of the threshold, with initial weights on the boundary
  :math:`\|\theta_n(0)\|_F = 1/4` and aligned with the direction in which the flow pushes them (the
  worst case for the ball), runs :func:`theory.linear.gradient_flow` and records the three ratios
  conclusion / bound. It also walks the worst family found (a scalar network whose weights start
  at :math:`\pm 1/4` and are pushed outwards) beyond the threshold and reports the first multiple
  of the threshold at which a conclusion breaks: the assumption is sufficient, not sharp. The
  ``"check"`` preset adds a Hypothesis search near the threshold (``search_examples``), steered
  towards the largest conclusion ratio.

  The bounds of Assumption 1, Prop. 2 and Lemma 1 also search their hypothesis set
  (:func:`linear_search` over :data:`LINEAR_BOX`: dimension, depth, the condition number and scale of Sigma,
  the init on the boundary of the ball of radius 1/4, rho up to 1 - 1e-6, a seed) for the instance maximising
  LHS/RHS; the flows of those searches are memoised, so that the seven searches of the same box share them.

  :func:`assumption1_erratum` compares the thesis' printed constant
  :math:`m/(4\sqrt2\,M e^3)` with the paper's on :math:`\Sigma = cI` with small c, where the
  thesis' threshold is the larger one: an instance it admits leaves the ball, the instance of the
  same family admitted by the paper's threshold does not.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import MISSING as _MISSING
from dataclasses import dataclass

import numpy as np
from scipy.linalg import expm

from theory.claims import (Verdict, bound_verdict, erratum_verdict, identity_verdict, rate_verdict, threshold_verdict,
                           worst_case_verdict)
from theory.experiments._registry import register
from theory.linear import assumption1 as _assumption1_check
from theory.linear import (
    depth_embedding,
    gradient_flow,
    initial_weights,
    prop2_constants,
    product,
)
from theory.linear import gradient as linear_gradient
from theory.linear import loss as linear_loss
from theory.rates import BoundResult, BoundTracker, IdentityResult, RateFit, fit_rate, identity_error
from theory.resnet import final_state
from theory.worst_case import Dim, WorstCase, search_worst_case

from ..config import Choice, Choices, Config, Custom, Int, Ints, Real, Reals, Seed, Seeds, field
from ._common import _check_choice, _require
from ._search import hypothesis_search

__all__ = [
    "SEC32_GRADIENT_EXPECTED", "SEC32_PRODUCT_EXPECTED", "LINEAR_PRESETS", "PROP2_LARGE_PRESETS", "PROP2_IID_PRESETS", "PROP2_IID_EXPECTED",
    "LINEAR_D", "LINEAR_GRID", "PROP2_KEYS", "RATE_EXPECTED",
    "linear_instance", "finite_difference_gradient",
    "Sec32GradientConfig", "Sec32GradientErratumResult", "sec32_gradient", "sec32_gradient_verdict",
    "sec32_gradient_erratum", "sec32_gradient_erratum_verdict",
    "Sec32ProductConfig", "Sec32ProductResult", "sec32_product", "sec32_product_verdict",
    "sec32_product_erratum_verdict",
    "assumption_problem", "large_problem", "linear_flow", "prop2_ratios",
    "LinearFlowConfig", "Prop2Result", "prop2", "prop2_bound", "prop2_verdict", "prop2_claim_verdict",
    "PROP2_CLAIM_VERDICTS", "THM1_CLAIM_VERDICTS",
    "PLErratumConfig", "PLErratumResult", "pl_extremes", "pl_erratum_verdict", "pl_sandwiches", "prop2_pl_erratum",
    "prop2_pl_erratum_verdict",
    "LayerDifferenceConfig", "LayerDifferenceResult", "layer_differences", "layer_difference_fit",
    "prop2_large_verdict", "prop2_iid_verdict",
    "DoublingConfig", "DoublingResult", "doubling_errors", "thm1", "thm1_verdict", "thm1_claim_verdict",
    "Lemma1Config", "lemma1", "lemma1_verdict",
    "Fig2Config", "Fig2Result", "fig2", "fig2_verdict",
    "ASSUMPTION1_PRESETS", "ERRATUM_PRESETS", "Assumption1Config", "Assumption1Instance", "Assumption1Result",
    "ErratumConfig", "ErratumResult", "assumption1", "assumption1_erratum", "assumption1_erratum_verdict",
    "assumption1_verdict", "conclusion_ratios", "paper_threshold", "thesis_threshold", "with_instances",
    "BALL_RADIUS", "MOVEMENT_RADIUS", "LINEAR_BOX", "LINEAR_STARTS", "SEARCH_DECAY", "SEARCH_T_POINTS",
    "PROP2_CONSTANTS",
    "linear_box_instance", "linear_search", "assumption1_sides", "prop2_sides", "prop2_point_sides", "lemma1_sides",
    "lemma1_point_sides",
]

LINEAR_D = 3  # dimension of both regimes
LINEAR_GRID = (8, 16, 32, 64, 128, 256)
RATE_EXPECTED = {"slope": -1.0, "tol": 0.1}
BOUND_EXPECTED = {"ratio_max": 1.0}


def _t_max():
    return field(Real(0, 1e4, closed="right"), 20.0, "Flow horizon (4 m/e ~ 0.74 here: at t = 20 the bound on the "
                 "loss has fallen by e^-15).")


def _t_points():
    return field(Int(low=2), 81, "Equally spaced times in [0, t_max].")


def _t_grid(config) -> np.ndarray:
    return np.linspace(0.0, config.t_max, config.t_points)


# =========================================================================== Section 3.2 formulas


def linear_instance(seed: int, N: int = 6, d: int = 3):
    """``(theta, Sigma, B)``: theta of standard deviation 0.5, Sigma = G G^T + d I, B = I + 0.3 G'."""
    rng = np.random.default_rng(seed)
    theta = 0.5 * rng.standard_normal((N, d, d))
    G = rng.standard_normal((d, d))
    Sigma = G @ G.T + d * np.eye(d)
    B = np.eye(d) + 0.3 * rng.standard_normal((d, d))
    return theta, Sigma, B


def finite_difference_gradient(theta, Sigma, B, h: float = 1e-3) -> np.ndarray:
    """Fourth-order central differences of :func:`theory.linear.loss`: truncation ~h^4, round-off
    ~1e-16 |loss| / h (both ~1e-12 at the default h)."""
    fd = np.empty_like(theta)
    for idx in np.ndindex(theta.shape):
        values = []
        for step in (2 * h, h, -h, -2 * h):
            shifted = theta.copy()
            shifted[idx] += step
            values.append(linear_loss(shifted, Sigma, B))
        fd[idx] = (-values[0] + 8 * values[1] - 8 * values[2] + values[3]) / (12 * h)
    return fd


@dataclass(frozen=True)
class Sec32GradientConfig(Config):
    """Instances of :func:`linear_instance` for the gradient formula."""

    seeds: tuple = field(Seeds(), (0, 1, 2), "One instance per seed.")
    N: int = field(Int(low=1), 6, "Depth.")
    d: int = field(Int(low=1), 3, "Dimension.")
    h: float = field(Real(0, 0.1, closed="right"), 1e-3, "Step of the finite differences.")


SEC32_GRADIENT_EXPECTED = {"rtol": 1e-7}


def sec32_gradient(config: Sec32GradientConfig = Sec32GradientConfig()) -> IdentityResult:
    """:func:`theory.linear.gradient` (N grad_n = 2 Pi_{:n}^T (Pi - B) Sigma Pi_{n:}^T) against
    finite differences, merged over the seeds."""
    _require(config, Sec32GradientConfig, "sec32_gradient")
    result = None
    for seed in config.seeds:
        theta, Sigma, B = linear_instance(seed, config.N, config.d)
        r = identity_error(linear_gradient(theta, Sigma, B), finite_difference_gradient(theta, Sigma, B, config.h))
        result = r if result is None else result.merge(r)
    return result


def sec32_gradient_verdict(result: IdentityResult) -> Verdict:
    """Pass iff the formula matches the finite differences to relative 1e-7."""
    return identity_verdict(result, SEC32_GRADIENT_EXPECTED)


@dataclass(frozen=True)
class Sec32GradientErratumResult:
    """The printed formula (no factor 2) and the corrected one against finite differences.

    ``fd_over_printed``: least-squares factor between the finite differences and the printed form (2)."""

    printed: IdentityResult
    corrected: IdentityResult
    fd_over_printed: float
    N: int

    def to_measured(self) -> dict:
        return {"fd_over_printed": self.fd_over_printed, "N": self.N}


def sec32_gradient_erratum(config: Sec32GradientConfig = Sec32GradientConfig(seeds=(0,))) -> Sec32GradientErratumResult:
    """On the instance of the first seed: printed = corrected / 2, both against finite differences."""
    _require(config, Sec32GradientConfig, "sec32_gradient_erratum")
    theta, Sigma, B = linear_instance(config.seeds[0], config.N, config.d)
    fd = finite_difference_gradient(theta, Sigma, B, config.h)
    corrected = linear_gradient(theta, Sigma, B)  # 2 Pi_{:n}^T (Pi - B) Sigma Pi_{n:}^T / N
    printed = corrected / 2  # the same formula without its factor 2 (transposes as in the thesis' proof)
    ratio = float(np.sum(fd * printed) / np.sum(printed * printed))
    return Sec32GradientErratumResult(identity_error(printed, fd), identity_error(corrected, fd), ratio,
                                      int(theta.shape[0]))


def sec32_gradient_erratum_verdict(result: Sec32GradientErratumResult) -> Verdict:
    """The erratum record: the printed formula (no factor 2) must fail and the corrected one hold, identities
    at relative 1e-7 against finite differences; the halves are ``verdict.parts``."""
    return erratum_verdict(identity_verdict(result.printed, SEC32_GRADIENT_EXPECTED),
                           identity_verdict(result.corrected, SEC32_GRADIENT_EXPECTED))


@dataclass(frozen=True)
class Sec32ProductConfig(Config):
    """The weights of :func:`linear_instance` and a batch of inputs."""

    seed: int = field(Seed(), 1, "Seed of the instance.")
    input_seed: int = field(Seed(), 11, "Seed of the standard normal inputs.")
    batch: int = field(Int(low=1), 5, "Number of inputs.")
    N: int = field(Int(low=1), 6, "Depth.")
    d: int = field(Int(low=1), 3, "Dimension.")


@dataclass(frozen=True)
class Sec32ProductResult:
    """The network's outputs against Pi x in the corrected order (I + theta_N/N)...(I + theta_1/N)
    and in the paper's printed order (I + theta_1/N)...(I + theta_N/N)."""

    corrected: IdentityResult
    printed: IdentityResult
    max_abs_err_printed: float
    max_abs_err_corrected: float

    def to_measured(self) -> dict:
        return {"max_abs_err_printed": self.max_abs_err_printed, "max_abs_err_corrected": self.max_abs_err_corrected}


SEC32_PRODUCT_EXPECTED = {"rtol": 1e-13}


def sec32_product(config: Sec32ProductConfig = Sec32ProductConfig()) -> Sec32ProductResult:
    """Outputs of :func:`theory.resnet.final_state` (layer n applies I + theta_n/N, first layer
    first) against both orders of :func:`theory.linear.product`."""
    _require(config, Sec32ProductConfig, "sec32_product")
    theta, _, _ = linear_instance(config.seed, config.N, config.d)
    x0 = np.random.default_rng(config.input_seed).standard_normal((config.batch, config.d))
    net = final_state(x0, theta, "linear")
    printed = product(theta[::-1])  # reversing the slices gives the printed order
    corrected = product(theta)
    return Sec32ProductResult(identity_error(net, x0 @ corrected.T), identity_error(net, x0 @ printed.T),
                              float(np.abs(net - x0 @ printed.T).max()), float(np.abs(net - x0 @ corrected.T).max()))


def sec32_product_verdict(result: Sec32ProductResult) -> Verdict:
    """Pass iff the network computes the corrected product (relative 1e-13)."""
    return identity_verdict(result.corrected, SEC32_PRODUCT_EXPECTED)


def sec32_product_erratum_verdict(result: Sec32ProductResult) -> Verdict:
    """The erratum record: the printed order (I + theta_1/N)...(I + theta_N/N) must fail and the corrected
    order hold (relative 1e-13); the halves are ``verdict.parts``."""
    return erratum_verdict(identity_verdict(result.printed, SEC32_PRODUCT_EXPECTED),
                           identity_verdict(result.corrected, SEC32_PRODUCT_EXPECTED))



# =========================================================================== flows of the two regimes


def assumption_problem(seed: int, N: int, init: str):
    """(theta0, Sigma, B) inside Assumption 1: Sigma = Q diag(1, 0.7, 0.5) Q^T, theta0 from
    :func:`theory.linear.initial_weights`, ||Pi0 - B||_F = 0.9 m / (4 sqrt(2 M e^3)) / sqrt(M)
    (so that sqrt(l(0)) <= 0.9 times the threshold)."""
    D = LINEAR_D
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((D, D)))
    Sigma = Q @ np.diag([1.0, 0.7, 0.5]) @ Q.T
    m, M = 0.5, 1.0
    theta0 = initial_weights(N, D, init, np.random.default_rng(100 + seed))
    G = rng.standard_normal((D, D))
    threshold = m / (4 * np.sqrt(2 * M * np.e**3))
    B = product(theta0) + 0.9 * threshold / np.sqrt(M) * G / np.linalg.norm(G)
    return theta0, Sigma, B


def large_problem(N: int, init: str = "zero", seed: int = 0):
    """(theta0, I, expm(0.7 G)): outside Assumption 1 (sqrt(l(0)) ~ 1.1 against a threshold ~ 0.04)."""
    D = LINEAR_D
    rng = np.random.default_rng(seed)
    B = expm(0.7 * rng.standard_normal((D, D)))
    theta0 = initial_weights(N, D, init, np.random.default_rng(100 + seed))
    return theta0, np.eye(D), B


_PROBLEMS = {"assumption": assumption_problem, "large": lambda seed, N, init: large_problem(N, init, seed)}


def linear_flow(regime: str, seed: int, N: int, init: str, t_max: float = 20.0, t_points: int = 81):
    """``(theta_t, info)`` of :func:`theory.linear.gradient_flow` (``full_output=True``) on the
    problem of ``regime`` ("assumption" or "large") at ``t_points`` equally spaced times in [0, t_max]."""
    _check_choice(regime, "regime", "theory.experiments.resnet_node.linear_flow", tuple(_PROBLEMS))
    theta0, Sigma, B = _PROBLEMS[regime](seed, N, init)
    return gradient_flow(theta0, Sigma, B, np.linspace(0.0, t_max, t_points), full_output=True)


def _flow_of(config, flow):
    flow = linear_flow if flow is None else flow
    return lambda regime, seed, N, init: flow(regime, seed, N, init, config.t_max, config.t_points)


# =========================================================================== Proposition 2

#: the conclusions of Prop. 2, as keys of :func:`prop2_ratios`, and their claims
PROP2_KEYS = {"weight": "resnet-node/prop-2", "loss": "resnet-node/prop-2/loss",
              "smoothness": "resnet-node/prop-2/smoothness", "pl": "resnet-node/prop-2/pl",
              "tail": "resnet-node/prop-2/limit"}


#: the radius of the ball that the weights never leave (Prop. 2: ||theta_n(t)|| < 1/2) and the largest movement
#: the proof allows each layer (||theta_n(t) - theta_n(0)|| < 1/4); one place each, so that a control can break them
BALL_RADIUS = 0.5
MOVEMENT_RADIUS = 0.25


def prop2_sides(theta0, Sigma, B, theta_t, info) -> dict:
    """Both sides of each conclusion of Prop. 2 on one flow, at the time (and layer) where their ratio is largest
    (:func:`theory.linear.prop2_constants`; each holds iff LHS <= RHS): a dict ``key -> (lhs, rhs)`` with the keys
    of :data:`PROP2_KEYS`.

    ``weight``: max ||theta_n(t)|| against 1/2; ``loss``: l(t) against e^{-4mt/e} l(0) (t > 0); ``smoothness``:
    N max_n ||theta_{n+1}(t) - theta_n(t)|| against C = C_0 + 2 e^{3/2} sqrt(M l0)/m; ``pl``: the layer-wise PL
    sandwich (4/e) m l <= N^2 ||grad_n||^2 <= 4 e M l, as the worse of (4/e) m against N^2 ||grad_n||^2 / l and of
    N^2 ||grad_n||^2 / l against 4 e M; ``tail``: the convergence ||theta_n(t') - theta_n(t)|| against
    e^{3/2} sqrt(M l0)/m exp(-2mt/e), t' > t on the time grid."""
    c = prop2_constants(theta0, Sigma, B)
    t = info.t
    out = {}
    rhs_loss = c["l0"] * np.exp(-c["loss_rate"] * t[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        k = int(np.argmax(info.loss[1:] / rhs_loss)) if np.any(rhs_loss > 0) else 0
    out["loss"] = (float(info.loss[1 + k]), float(rhs_loss[k]))
    pl = info.pl[np.isfinite(info.pl).all(axis=1)]
    low, high = (c["pl_low"], float(pl.min())), (float(pl.max()), c["pl_high"])
    out["pl"] = low if low[0] * high[1] >= high[0] * low[1] else high
    moved = np.linalg.norm(theta_t[None, :] - theta_t[:, None], axis=(-2, -1)).max(axis=-1)  # (t, t')
    later = np.triu(np.ones((len(t), len(t)), bool), 1)
    tail_lhs = np.where(later, moved, 0.0).max(axis=1)[:-1]
    tail_rhs = c["movement"] * np.exp(-c["loss_rate"] / 2 * t[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        k = int(np.argmax(tail_lhs / tail_rhs)) if np.any(tail_rhs > 0) else 0
    out["tail"] = (float(tail_lhs[k]), float(tail_rhs[k]))
    out["weight"] = (float(info.max_weight.max()), BALL_RADIUS)
    out["smoothness"] = (float(info.layer_difference.max()), float(c["smoothness"]))
    return out


def prop2_ratios(theta0, Sigma, B, theta_t, info) -> dict:
    """The conclusions of Prop. 2 for one flow, each as a ratio to the proof's explicit bound
    (:func:`theory.linear.prop2_constants`; each must stay <= 1): LHS/RHS of :func:`prop2_sides`.

    ``weight`` max ||theta_n(t)|| / (1/2); ``loss`` l(t) / (e^{-4mt/e} l(0)); ``smoothness``
    max_n ||theta_{n+1}(t) - theta_n(t)|| over C/N; ``pl`` the layer-wise PL sandwich
    (4/e) m l <= N^2 ||grad_n||^2 <= 4 e M l; ``tail`` the convergence
    ||theta_n(t') - theta_n(t)|| <= e^{3/2} sqrt(M l0)/m exp(-2mt/e) for t' > t."""
    out = {}
    for key, (lhs, rhs) in prop2_sides(theta0, Sigma, B, theta_t, info).items():
        with np.errstate(divide="ignore", invalid="ignore"):
            out[key] = float(lhs / rhs) if rhs > 0 else (0.0 if lhs == 0 else float("inf"))
    return out


@dataclass(frozen=True)
class LinearFlowConfig(Config):
    """Flows of the assumption regime over seeds, initialisations and depths."""

    seeds: tuple = field(Seeds(), (0, 1), "Seeds of :func:`assumption_problem`.")
    inits: tuple = field(Choices("zero", "constant", "cosine"), ("zero", "constant", "cosine"),
                         "Initialisations of :func:`theory.linear.initial_weights`.")
    depths: tuple = field(Ints(low=1), LINEAR_GRID, "Depths N.")
    t_max: float = _t_max()
    t_points: int = _t_points()
    search_budget: int = field(Int(low=0), 0, "Evaluations of each worst-case search of :data:`LINEAR_BOX`, one per "
                               "conclusion of Prop. 2 (scrambled Sobol points, then Nelder-Mead; 0: none; unused "
                               "where the config gives the flows of Lemma 1).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case searches.")

    def instances(self):
        """(seed, init, N) in the order of the records."""
        return [(seed, init, N) for seed in self.seeds for init in self.inits for N in self.depths]


#: the documents give no sizes for the linear experiments; "paper" is a longer ladder for sweeps
LINEAR_PRESETS = {"check": LinearFlowConfig(search_budget=120),
                  "paper": LinearFlowConfig(seeds=(0, 1, 2, 3), depths=LINEAR_GRID + (512, 1024), search_budget=1200)}

#: the printed constants of the conclusions of Prop. 2 whose right-hand side is one constant times a function: the
#: radius 1/2 of the ball and the factor e^{3/2} of the convergence bound (the search reports the smallest that holds)
PROP2_CONSTANTS = {"weight": ("radius 1/2 of the ball", BALL_RADIUS),
                   "tail": ("e^{3/2} in e^{3/2} sqrt(M l0)/m exp(-2mt/e)", float(np.e**1.5))}


@dataclass(frozen=True)
class Prop2Result:
    """Per instance (seed, init, N), the ratios of :func:`prop2_ratios`; ``n_outside``: instances
    that :func:`theory.linear.assumption1` says violate the assumption (0 expected); ``searches``: conclusion key
    (:data:`PROP2_KEYS`) -> the worst-case search of :data:`LINEAR_BOX` for that conclusion (:func:`prop2_point_sides`),
    empty without searches."""

    rows: tuple
    n_outside: int
    searches: dict = dataclasses.field(default_factory=dict)


def prop2(config: LinearFlowConfig = LINEAR_PRESETS["check"], *, flow=None) -> Prop2Result:
    """The conclusions of Prop. 2 on every flow of the config (``flow``: see :func:`linear_flow`), and one
    worst-case search of :data:`LINEAR_BOX` per conclusion (``search_budget`` evaluations each; the searches share
    their flows)."""
    _require(config, LinearFlowConfig, "prop2")
    get = _flow_of(config, flow)
    rows, outside = [], 0
    for seed, init, N in config.instances():
        theta0, Sigma, B = assumption_problem(seed, N, init)
        outside += not _assumption1_check(theta0, Sigma, B).holds
        theta_t, info = get("assumption", seed, N, init)
        rows.append(((seed, init, N), prop2_ratios(theta0, Sigma, B, theta_t, info)))
    searches = {}
    if config.search_budget:
        for key in PROP2_KEYS:
            searches[key] = linear_search(functools.partial(prop2_point_sides, key), config.search_budget,
                                          config.search_seed, constant=PROP2_CONSTANTS.get(key))
    return Prop2Result(tuple(rows), outside, searches)


def prop2_point_sides(key: str, point):
    """``(lhs, rhs)`` of conclusion ``key`` of Prop. 2 (:func:`prop2_sides`) at one point of :data:`LINEAR_BOX`
    (flows on :data:`SEARCH_T_POINTS` times up to the horizon e SEARCH_DECAY / (4m)), or None outside Assumption 1."""
    _check_choice(key, "key", "theory.experiments.resnet_node.prop2_point_sides", tuple(PROP2_KEYS))
    flow = _inside(linear_box_instance(point))
    if flow is None:
        return None
    theta0, Sigma, B, theta_t, info = flow
    return prop2_sides(theta0, Sigma, B, theta_t, info)[key]


def prop2_bound(result: Prop2Result, key: str) -> BoundResult:
    """Largest ratio of conclusion ``key`` (see :data:`PROP2_KEYS`) over the instances."""
    _check_choice(key, "key", "theory.experiments.resnet_node.prop2_bound", tuple(PROP2_KEYS))
    tracker = BoundTracker()
    for (seed, init, N), ratios in result.rows:
        tracker.add(ratios[key], 1.0, instance={"seed": seed, "init": init, "N": N})
    return tracker.result()


def prop2_claim_verdict(result: Prop2Result, key: str) -> Verdict:
    """The record of conclusion ``key`` (see :data:`PROP2_KEYS`): its largest ratio to its bound is at most 1
    on every instance, no instance lies outside Assumption 1 (``n_outside`` = 0), and the largest ratio of the
    conclusion's worst-case search (``result.searches[key]``, where it ran) is at most 1 too."""
    bound = prop2_bound(result, key)
    measured = {**bound.to_measured(), "n_outside": result.n_outside}
    verdict = threshold_verdict("bound", measured, {"ratio_max": BOUND_EXPECTED["ratio_max"], "n_outside_max": 0},
                                context=f"{PROP2_KEYS[key]} over {bound.n_instances} instances, worst "
                                        f"{bound.worst}")
    search = result.searches.get(key)
    return verdict if search is None else worst_case_verdict(verdict, search, ratio_max=BOUND_EXPECTED["ratio_max"])


def _prop2_claim(key: str):
    def verdict(result: Prop2Result) -> Verdict:
        return prop2_claim_verdict(result, key)

    verdict.__name__ = verdict.__qualname__ = f"prop2_{key}_verdict"
    verdict.__doc__ = f"The record of ``{PROP2_KEYS[key]}``: :func:`prop2_claim_verdict` of ``{key!r}``."
    return verdict


#: claim ID -> the function ``result -> Verdict`` its check records (registered with ``resnet_node.prop2``)
PROP2_CLAIM_VERDICTS = {claim_id: _prop2_claim(key) for key, claim_id in PROP2_KEYS.items()}


def prop2_verdict(result: Prop2Result) -> Verdict:
    """Every conclusion of Prop. 2 at once (the experiment's verdict): the largest ratio of each
    (``<key>_ratio``) and of its worst-case search (``<key>_search_ratio``) is at most 1, and no instance lies
    outside Assumption 1; each claim's record is :func:`prop2_claim_verdict`."""
    measured = {f"{key}_ratio": float(prop2_bound(result, key).ratio) for key in PROP2_KEYS}
    measured["n_outside"] = result.n_outside
    expected = {f"{key}_ratio_max": BOUND_EXPECTED["ratio_max"] for key in PROP2_KEYS}
    expected["n_outside_max"] = 0
    for key, search in result.searches.items():
        measured[f"{key}_search_ratio"] = float(search.ratio)
        expected[f"{key}_search_ratio_max"] = BOUND_EXPECTED["ratio_max"]
    return threshold_verdict("bound", measured, expected, context=f"{len(result.rows)} flows")


@dataclass(frozen=True)
class PLErratumConfig(Config):
    """Scalar network (d = 1, Sigma = 1, m = M = 1) with every theta_n = +-eps."""

    N: int = field(Int(low=1), 64, "Depth.")
    eps: float = field(Real(0, 10, closed="right"), 0.49, "Weight size; < 1/2 keeps the weights inside the ball "
                       "the proof works in.")
    B: float = field(Real(-1e3, 1e3), 3.0, "Target.")


def pl_extremes(N: int = 64, eps: float = 0.49, B: float = 3.0) -> tuple[float, float]:
    """The largest N^2 grad_n^2 / l (at theta_n = +eps) and the smallest (at -eps), exact gradient;
    the factor-less velocity v_n = N grad_n / 2 gives a quarter of each."""
    Sigma, target = np.eye(1), np.array([[B]])
    ratios = {}
    for sign in (1.0, -1.0):
        grad, loss = linear_gradient(np.full((N, 1, 1), eps * sign), Sigma, target, return_loss=True)
        ratios[sign] = N**2 * np.sum(grad**2, axis=(1, 2)) / loss
    return float(ratios[1.0].max()), float(ratios[-1.0].min())


def pl_sandwiches(exact_max: float, exact_min: float) -> tuple[BoundResult, BoundResult]:
    """``(printed, corrected)`` bound results of the PL sandwich on the extremes (m = M = 1).

    Printed: (2/e) l <= N^2 ||grad_n||^2 <= 2e l, tested in the convention where each half is
    weakest (upper half with the exact gradient, lower half with the factor-less velocity).
    Corrected: (4/e) l <= N^2 ||grad_n||^2 <= 4e l (exact gradient), equivalently
    (1/e) l <= ||v_n||^2 <= e l (factor-less velocity)."""
    printed, corrected = BoundTracker(), BoundTracker()
    velocity_min = exact_min / 4
    printed.add(exact_max, 2 * np.e, instance={"convention": "exact gradient", "bound": "2 e M l"})
    printed.add(2 / np.e, velocity_min, instance={"convention": "without the factor 2", "bound": "(2/e) m l"})
    corrected.add(exact_max, 4 * np.e, instance={"convention": "exact gradient", "bound": "4 e M l"})
    corrected.add(4 / np.e, exact_min, instance={"convention": "exact gradient", "bound": "(4/e) m l"})
    corrected.add(exact_max / 4, np.e, instance={"convention": "without the factor 2", "bound": "e M l"})
    corrected.add(1 / np.e, velocity_min, instance={"convention": "without the factor 2", "bound": "(1/e) m l"})
    return printed.result(), corrected.result()


def pl_erratum_verdict(exact_max: float, exact_min: float) -> Verdict:
    """The erratum record of the PL sandwich on the extremes: the printed sandwich must fail and the
    corrected one hold (every ratio to its bound at most 1; :func:`pl_sandwiches`); the halves are
    ``verdict.parts``."""
    printed, corrected = pl_sandwiches(exact_max, exact_min)
    return erratum_verdict(bound_verdict(printed, BOUND_EXPECTED), bound_verdict(corrected, BOUND_EXPECTED))


@dataclass(frozen=True)
class PLErratumResult:
    """The extremes of :func:`pl_extremes` and the printed and corrected sandwiches on them."""

    exact_max: float
    exact_min: float
    printed: BoundResult
    corrected: BoundResult

    def to_measured(self) -> dict:
        return {"exact_max_over_l": self.exact_max, "exact_min_over_l": self.exact_min,
                "velocity_min_over_l": self.exact_min / 4, "ratio": self.printed.ratio,
                "n_instances": self.printed.n_instances, "corrected_ratio": self.corrected.ratio}


def prop2_pl_erratum(config: PLErratumConfig = PLErratumConfig()) -> PLErratumResult:
    """The PL extremes of the scalar network and both sandwiches."""
    _require(config, PLErratumConfig, "prop2_pl_erratum")
    exact_max, exact_min = pl_extremes(config.N, config.eps, config.B)
    printed, corrected = pl_sandwiches(exact_max, exact_min)
    return PLErratumResult(exact_max, exact_min, printed, corrected)


def prop2_pl_erratum_verdict(result: PLErratumResult) -> Verdict:
    """The erratum record: the printed sandwich must fail and the corrected one hold; halves in ``verdict.parts``."""
    return erratum_verdict(bound_verdict(result.printed, BOUND_EXPECTED), bound_verdict(result.corrected, BOUND_EXPECTED))


@dataclass(frozen=True)
class LayerDifferenceConfig(Config):
    """Layer differences max_n ||theta_{n+1}(t) - theta_n(t)|| of the large regime against depth."""

    init: str = field(Choice("zero", "constant", "cosine", "iid"), "zero", "Initialisation.")
    seeds: tuple = field(Seeds(), (0, 1), "Seeds of :func:`large_problem`.")
    at: str = field(Choice("max", "final"), "max", "Supremum over t, or the value at the final time.")
    depths: tuple = field(Ints(low=1, min_len=5, increasing=True), LINEAR_GRID, "Increasing depths (at least 5).")
    t_max: float = _t_max()
    t_points: int = _t_points()


@dataclass(frozen=True)
class LayerDifferenceResult:
    """The fit of the layer differences against N, the largest weight and the largest final loss."""

    fit: RateFit
    max_weight: float
    final_loss_max: float


def layer_difference_fit(flows, depths, at: str = "max"):
    """``(grid, errors)``: max_n ||theta_{n+1} - theta_n||, the sup over t (``at="max"``) or at the
    final time, of rows of flows ``(theta_t, info)`` over ``depths``."""
    grid = np.array(depths)
    pick = (lambda v: v.max()) if at == "max" else (lambda v: v[-1])
    errors = np.array([[pick(info.layer_difference) / N for N, (_, info) in zip(grid, row)] for row in flows])
    return grid, errors


def layer_differences(config: LayerDifferenceConfig = LayerDifferenceConfig(), *, flow=None) -> LayerDifferenceResult:
    """Layer differences of the large regime, fitted against N (``flow``: see :func:`linear_flow`)."""
    _require(config, LayerDifferenceConfig, "layer_differences")
    get = _flow_of(config, flow)
    flows = [[get("large", seed, N, config.init) for N in config.depths] for seed in config.seeds]
    grid, errors = layer_difference_fit(flows, config.depths, config.at)
    return LayerDifferenceResult(fit_rate(grid, errors),
                                 float(max(info.max_weight.max() for row in flows for _, info in row)),
                                 float(max(info.loss[-1] for row in flows for _, info in row)))


PROP2_IID_EXPECTED = {"slope": 0.0, "tol": 0.1}


def prop2_large_verdict(result: LayerDifferenceResult) -> Verdict:
    """Beyond Assumption 1 (zero init): layer differences still O(1/N) (slope -1 +- 0.1)."""
    return rate_verdict(result.fit, RATE_EXPECTED)


def prop2_iid_verdict(result: LayerDifferenceResult) -> Verdict:
    """i.i.d. start: the layer differences do not shrink (slope 0 +- 0.1)."""
    return rate_verdict(result.fit, PROP2_IID_EXPECTED)


PROP2_LARGE_PRESETS = {"check": LayerDifferenceConfig(),
                       "paper": LayerDifferenceConfig(seeds=(0, 1, 2, 3), depths=LINEAR_GRID + (512, 1024))}
PROP2_IID_PRESETS = {"check": LayerDifferenceConfig(init="iid", seeds=tuple(range(5)), at="final"),
                     "paper": LayerDifferenceConfig(init="iid", seeds=tuple(range(10)), at="final",
                                                    depths=LINEAR_GRID + (512, 1024))}


# =========================================================================== Theorem 1, Lemmas 1-2


@dataclass(frozen=True)
class DoublingConfig(Config):
    """Depth doubling N -> 2N of the flows of one regime."""

    regime: str = field(Choice(*_PROBLEMS), "assumption", "Problem family (see :func:`linear_flow`).")
    init: str = field(Choice("zero", "constant", "cosine", "iid"), "cosine", "Initialisation (Th. 1 needs one "
                      "smooth in depth).")
    seeds: tuple = field(Seeds(), (0, 1), "Seeds of the problems.")
    depths: tuple = field(Ints(low=1, min_len=5, increasing=True), LINEAR_GRID, "Increasing depths N (at least "
                          "5); the flows of 2N are computed too.")
    reference: int = field(Int(low=0), 1024, "Depth of a reference flow for the distance to the limit recorded "
                           "beside the doubling errors (0: none).")
    t_max: float = _t_max()
    t_points: int = _t_points()


@dataclass(frozen=True)
class DoublingResult:
    """Arrays (seeds, depths): ``psi`` = sup_{s,t} ||psi_N - psi_2N||, ``pi`` = sup_t ||Pi^N - Pi^2N||,
    ``lemma`` = sup_{t,n} ||theta^N_n - theta^{2N}_{2n}||; ``reference_errors`` (mean over seeds of
    sup ||psi_N - psi_ref||, per depth) and ``reference_slope``, or None without a reference."""

    config: DoublingConfig
    psi: np.ndarray
    pi: np.ndarray
    lemma: np.ndarray
    reference_errors: tuple | None = None
    reference_slope: float | None = None

    def fit(self, which: str) -> RateFit:
        """Fit of ``which`` ("psi", "pi" or "lemma") against N."""
        return fit_rate(np.array(self.config.depths), getattr(self, which))


def doubling_errors(flow, seeds, init, depths=LINEAR_GRID):
    """``(psi, pi, lemma)`` of :class:`DoublingResult` from ``flow(seed, N, init) -> (theta_t, info)``."""
    s = (np.arange(4 * 2 * depths[-1]) + 0.5) / (4 * 2 * depths[-1])  # finer than every grid
    psi, pi, lemma = (np.empty((len(seeds), len(depths))) for _ in range(3))
    for i, seed in enumerate(seeds):
        for j, N in enumerate(depths):
            a, _ = flow(seed, N, init)
            b, _ = flow(seed, 2 * N, init)
            psi[i, j] = np.max(np.linalg.norm(depth_embedding(a, s) - depth_embedding(b, s), axis=(-2, -1)))
            pa = np.array([product(x) for x in a])
            pb = np.array([product(x) for x in b])
            pi[i, j] = np.max(np.linalg.norm(pa - pb, axis=(-2, -1)))
            lemma[i, j] = np.max(np.linalg.norm(a - b[:, 1::2], axis=(-2, -1)))  # theta^{2N}_{2n} is index 2n - 1
    return psi, pi, lemma


def thm1(config: DoublingConfig = DoublingConfig(), *, flow=None) -> DoublingResult:
    """Depth-doubling errors of Th. 1 and Lemma 2 (``flow``: see :func:`linear_flow`)."""
    _require(config, DoublingConfig, "thm1")
    get = _flow_of(config, flow)
    one = lambda seed, N, init: get(config.regime, seed, N, init)  # noqa: E731
    psi, pi, lemma = doubling_errors(one, config.seeds, config.init, config.depths)
    if not config.reference:
        return DoublingResult(config, psi, pi, lemma)
    R = config.reference
    s = (np.arange(R) + 0.5) / R
    ref = np.array([depth_embedding(one(seed, R, config.init)[0], s) for seed in config.seeds])
    to_ref = np.array([[np.max(np.linalg.norm(depth_embedding(one(seed, N, config.init)[0], s) - ref[i],
                                              axis=(-2, -1))) for N in config.depths]
                       for i, seed in enumerate(config.seeds)])
    return DoublingResult(config, psi, pi, lemma, tuple(to_ref.mean(axis=0).tolist()),
                          fit_rate(np.array(config.depths), to_ref).slope)


_THM1_CLAIMS = {"psi": "resnet-node/thm-1", "pi": "resnet-node/thm-1/product", "lemma": "resnet-node/lemma-2"}


def thm1_claim_verdict(result: DoublingResult, which: str) -> Verdict:
    """The rate record (slope -1 +- 0.1) of ``which``: "psi" (Th. 1), "pi" (Th. 1, the product) or "lemma"
    (Lemma 2, the weights)."""
    _check_choice(which, "which", "theory.experiments.resnet_node.thm1_claim_verdict", tuple(_THM1_CLAIMS))
    return rate_verdict(result.fit(which), RATE_EXPECTED)


def _thm1_claim(which: str):
    def verdict(result: DoublingResult) -> Verdict:
        return thm1_claim_verdict(result, which)

    verdict.__name__ = verdict.__qualname__ = f"thm1_{which}_verdict"
    verdict.__doc__ = f"The record of ``{_THM1_CLAIMS[which]}``: :func:`thm1_claim_verdict` of ``{which!r}``."
    return verdict


#: claim ID -> the function ``result -> Verdict`` its check records (registered with ``resnet_node.thm1``)
THM1_CLAIM_VERDICTS = {claim_id: _thm1_claim(which) for which, claim_id in _THM1_CLAIMS.items()}


def thm1_verdict(result: DoublingResult) -> Verdict:
    """The three rates at once (the experiment's verdict): the slopes of psi_N, Pi^N and the weights
    (``<which>_slope``) each within -1 +- 0.1; each claim's record is :func:`thm1_claim_verdict`."""
    measured, expected = {}, {}
    for which in _THM1_CLAIMS:
        measured[f"{which}_slope"] = float(result.fit(which).slope)
        expected[f"{which}_slope_min"] = RATE_EXPECTED["slope"] - RATE_EXPECTED["tol"]
        expected[f"{which}_slope_max"] = RATE_EXPECTED["slope"] + RATE_EXPECTED["tol"]
    d = result.config.depths
    return threshold_verdict("rate", measured, expected, context=f"N = {d[0]}..{d[-1]}, {len(result.config.seeds)} seeds")


def _is_flow_config(value):
    if not isinstance(value, LinearFlowConfig):
        raise TypeError("not a LinearFlowConfig")


_FLOWS = Custom(_is_flow_config, "a LinearFlowConfig", type_name="LinearFlowConfig",
                invalid=[("flows", TypeError), (3, TypeError)], boundary=[LinearFlowConfig(seeds=(0,))])


@dataclass(frozen=True)
class Lemma1Config(Config):
    """Random pairs (s1, t1), (s2, t2) on the flows of :class:`LinearFlowConfig`."""

    flows: LinearFlowConfig = field(_FLOWS, LinearFlowConfig(), "The flows.")
    pairs: int = field(Int(low=1), 400, "Pairs per flow.")
    seed: int = field(Seed(), 0, "Seed of the generator drawing the pairs.")
    search_budget: int = field(Int(low=0), 0, "Evaluations of the worst-case search of :data:`LINEAR_BOX` "
                               "(:func:`lemma1_point_sides`; 0: none).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")


def lemma1(config: Lemma1Config = Lemma1Config(), *, flow=None) -> BoundResult:
    """The two ingredients of the Arzela-Ascoli argument with the proof's constants: (i)
    ||psi_N(s1,t1) - psi_N(s2,t2)|| <= C'|t1-t2| + C|s1-s2| + C/N, C = C_0 + 2 e^{3/2} sqrt(M l0)/m,
    C' = 2 sqrt(e M l0) (worst pair per flow), and (ii) ||psi_N|| <= 1/2; then the worst-case search of
    :data:`LINEAR_BOX` (:func:`lemma1_point_sides`, ``search_budget`` evaluations) attached."""
    _require(config, Lemma1Config, "lemma1")
    fc = config.flows
    get = _flow_of(fc, flow)
    T = _t_grid(fc)
    P = config.pairs
    tracker = BoundTracker()
    rng = np.random.default_rng(config.seed)
    for seed, init, N in fc.instances():
        theta0, Sigma, B = assumption_problem(seed, N, init)
        c = prop2_constants(theta0, Sigma, B)
        theta_t, _ = get("assumption", seed, N, init)
        s1, s2 = rng.uniform(0, 1, (2, P))
        k1, k2 = rng.integers(0, len(T), (2, P))
        a = depth_embedding(theta_t, s1)[k1, np.arange(P)]
        b = depth_embedding(theta_t, s2)[k2, np.arange(P)]
        lhs = np.linalg.norm(a - b, axis=(-2, -1))
        rhs = c["time_lipschitz"] * np.abs(T[k1] - T[k2]) + c["smoothness"] * np.abs(s1 - s2) + c["smoothness"] / N
        k = int(np.argmax(lhs / rhs))
        tracker.add(float(lhs[k]), float(rhs[k]), instance={"seed": seed, "init": init, "N": N})
        tracker.add(float(np.linalg.norm(theta_t, axis=(-2, -1)).max()), BALL_RADIUS,
                    instance={"bound": "(ii)", "N": N})
    result = tracker.result()
    if not config.search_budget:
        return result
    return result.with_search(linear_search(functools.partial(lemma1_point_sides, pairs=config.pairs),
                                            config.search_budget, config.search_seed))


def lemma1_sides(theta0, Sigma, B, theta_t, t, *, pairs: int, rng) -> tuple[float, float]:
    r"""``(lhs, rhs)`` of the worse of Lemma 1's two ingredients on one flow, over the pairs where (i) is tightest
    and ``pairs`` random ones.

    (i) :math:`\|\psi_N(s_1,t_1) - \psi_N(s_2,t_2)\| \le C'|t_1-t_2| + C|s_1-s_2| + C/N` on: consecutive layers at
    one time, in the limit :math:`s_1 \to s_2` across the cell boundary (LHS :math:`\|\theta_{n+1}(t) - \theta_n(t)\|`,
    RHS C/N); one layer at consecutive times of ``t`` (RHS :math:`C'|\Delta t| + C/N`); ``pairs`` pairs with
    :math:`s_1, s_2` uniform and :math:`t_1, t_2` on ``t`` (``rng``). (ii) :math:`\|\psi_N\| \le 1/2`."""
    c = prop2_constants(theta0, Sigma, B)
    N = theta_t.shape[1]
    C, Cp = c["smoothness"], c["time_lipschitz"]
    sides = [(float(np.linalg.norm(theta_t, axis=(-2, -1)).max()), BALL_RADIUS)]
    if N > 1:
        sides.append((float(np.linalg.norm(np.diff(theta_t, axis=1), axis=(-2, -1)).max()), C / N))
    step = np.linalg.norm(np.diff(theta_t, axis=0), axis=(-2, -1))  # (T - 1, N)
    k, n = np.unravel_index(int(np.argmax(step / (Cp * np.diff(t)[:, None] + C / N))), step.shape)
    sides.append((float(step[k, n]), float(Cp * (t[k + 1] - t[k]) + C / N)))
    s1, s2 = rng.uniform(0, 1, (2, pairs))
    k1, k2 = rng.integers(0, len(t), (2, pairs))
    a = depth_embedding(theta_t, s1)[k1, np.arange(pairs)]
    b = depth_embedding(theta_t, s2)[k2, np.arange(pairs)]
    lhs = np.linalg.norm(a - b, axis=(-2, -1))
    rhs = Cp * np.abs(t[k1] - t[k2]) + C * np.abs(s1 - s2) + C / N
    j = int(np.argmax(lhs / rhs))
    sides.append((float(lhs[j]), float(rhs[j])))
    return max(sides, key=lambda p: p[0] / p[1])


def lemma1_point_sides(point, *, pairs: int = 400):
    """:func:`lemma1_sides` at one point of :data:`LINEAR_BOX` (flows as in :func:`prop2_point_sides`; the random
    pairs from ``default_rng([seed, 2])``), or None outside Assumption 1."""
    flow = _inside(linear_box_instance(point))
    if flow is None:
        return None
    theta0, Sigma, B, theta_t, info = flow
    return lemma1_sides(theta0, Sigma, B, theta_t, info.t, pairs=pairs,
                        rng=np.random.default_rng([int(point["seed"]), 2]))


def lemma1_verdict(result: BoundResult) -> Verdict:
    """Pass iff both bounds hold on every pair."""
    return bound_verdict(result, BOUND_EXPECTED)


# =========================================================================== Figure 2


@dataclass(frozen=True)
class Fig2Config(Config):
    """The heatmap of Fig. 2 in the large regime (seed 0)."""

    init: str = field(Choice("zero", "constant", "cosine", "iid"), "zero", "Initialisation.")
    depths: tuple = field(Ints(low=1, min_len=5, increasing=True), LINEAR_GRID, "Increasing depths (rows of the "
                          "heatmap, at least 5).")
    reference: int = field(Int(low=1), 1024, "Depth of the reference standing in for the limit Psi; the L2 norm "
                           "over s is taken on its midpoints.")
    t_max: float = _t_max()
    t_points: int = _t_points()


@dataclass(frozen=True)
class Fig2Result:
    """``dist[i, k]`` = ||Psi_N(t_k, .) - Psi_ref(t_k, .)||_{L2} for N = depths[i]; whether it
    decreases strictly in N at every t > 0; the fit over N of its time average (t > 0)."""

    config: Fig2Config
    t: np.ndarray
    dist: np.ndarray
    decreasing: bool
    fit: RateFit

    def to_measured(self) -> dict:
        return {"decreasing_in_N_at_every_t": self.decreasing, "slope_time_averaged": self.fit.slope,
                "ci": list(self.fit.ci), f"distance_N{self.config.depths[0]}": float(self.dist[0, 1:].mean()),
                f"distance_N{self.config.depths[-1]}": float(self.dist[-1, 1:].mean())}


def fig2(config: Fig2Config = Fig2Config(), *, flow=None) -> Fig2Result:
    """Distances of the depth embeddings to the reference over depth and training time."""
    _require(config, Fig2Config, "fig2")
    get = _flow_of(config, flow)
    R = config.reference
    ref, _ = get("large", 0, R, config.init)
    s = (np.arange(R) + 0.5) / R
    psi_ref = depth_embedding(ref, s)
    dist = np.empty((len(config.depths), config.t_points))
    for i, N in enumerate(config.depths):
        theta_t, _ = get("large", 0, N, config.init)
        diff = depth_embedding(theta_t, s) - psi_ref
        dist[i] = np.sqrt(np.mean(np.sum(diff**2, axis=(-2, -1)), axis=-1))
    decreasing = bool(np.all(np.diff(dist[:, 1:], axis=0) < 0))  # t = 0 is exact for the zero init
    fit = fit_rate(np.array(config.depths), dist[:, 1:].mean(axis=1))
    return Fig2Result(config, _t_grid(config), dist, decreasing, fit)


def fig2_verdict(result: Fig2Result) -> Verdict:
    """Pass iff the distance decreases strictly from each N to 2N at every t > 0 and the slope of
    its time average is -1 +- 0.2 (the finite reference steepens it slightly: c (1/N - 1/N_ref))."""
    steps = np.diff(result.dist[:, 1:], axis=0)
    measured = {"n_nondecreasing": int(np.count_nonzero(~(steps < 0))), "slope": float(result.fit.slope),
                "ci_low": float(result.fit.ci[0]), "ci_high": float(result.fit.ci[1])}
    d = result.config.depths
    return threshold_verdict("rate", measured, {"n_nondecreasing_max": 0, "slope_min": -1.2, "slope_max": -0.8},
                             context=f"n_nondecreasing: (N -> 2N, t > 0) cells where the distance does not fall; "
                                     f"slope of the time average over N = {d[0]}..{d[-1]}")


# =========================================================================== Assumption 1

_INITS = ("zero", "constant", "cosine", "aligned")


def paper_threshold(Sigma) -> float:
    r"""The paper's constant of Assumption 1, :math:`m / (4\sqrt{2 M e^3})` (m, M extreme eigenvalues of Sigma)."""
    eig = np.linalg.eigvalsh(np.asarray(Sigma, dtype=float))
    return float(eig[0] / (4 * np.sqrt(2 * eig[-1] * np.e**3)))


def thesis_threshold(Sigma) -> float:
    r"""The constant printed in the thesis' Assumption 2.3, :math:`m / (4\sqrt2\, M e^3)`."""
    eig = np.linalg.eigvalsh(np.asarray(Sigma, dtype=float))
    return float(eig[0] / (4 * np.sqrt(2) * eig[-1] * np.e**3))



# =========================================================================== Assumption 1


@dataclass(frozen=True)
class Assumption1Instance(Config):
    """One problem (Sigma, B, theta(0)) of the deep linear ResNet, described by its parameters."""

    d: int = field(Int(low=1), _MISSING, "Dimension (Sigma, B and each theta_n are d x d).")
    N: int = field(Int(low=1), _MISSING, "Depth.")
    kappa: float = field(Real(1, 1e6), _MISSING, "Condition number M/m of Sigma.")
    M: float = field(Real(0, 1e6, closed="right"), _MISSING, "Largest eigenvalue of Sigma.")
    init: str = field(Choice(*_INITS), _MISSING, "theta(0): zero; one matrix of Frobenius norm 1/4 in every "
                      "layer; 1/4 cos(pi n/N) times a unit matrix; or ``sign`` u v^T / 4 (rank one, Frobenius and "
                      "operator norm 1/4) in every layer with B - Pi(0) along u v^T Sigma^{-1}, so that the flow "
                      "pushes the weights along their own direction (outwards for ``sign`` = +1 and -1 alike).")
    rho: float = field(Real(0, 1e4, closed="right"), _MISSING, "sqrt(l(0)) as a multiple of a threshold; < 1 "
                       "inside the assumption.")
    seed: int = field(Seed(), _MISSING, "Seed of the ``numpy.random.Generator`` drawing Sigma's eigenvectors and "
                      "the directions.")
    sign: float = field(Choice(1.0, -1.0), 1.0, "+1 or -1 (``init=\"aligned\"`` only).")
    threshold: str = field(Choice("paper", "thesis"), "paper", "Which constant ``rho`` multiplies.")

    def build(self):
        """The arrays ``(theta0, Sigma, B)`` of shapes (N, d, d), (d, d), (d, d)."""
        d, N = self.d, self.N
        rng = np.random.default_rng(self.seed)
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        eig = self.M * np.geomspace(1.0 / self.kappa, 1.0, d) if d > 1 else np.array([self.M])
        Sigma = (Q * eig) @ Q.T
        Sigma = (Sigma + Sigma.T) / 2
        u, v = rng.standard_normal((2, d))
        U = np.outer(u, v)
        U /= np.linalg.norm(U)
        G = rng.standard_normal((d, d))
        G /= np.linalg.norm(G)
        if self.init == "zero":
            theta0 = np.zeros((N, d, d))
        elif self.init == "constant":
            theta0 = np.broadcast_to(G / 4, (N, d, d)).copy()
        elif self.init == "cosine":
            n = np.arange(1, N + 1)[:, None, None]
            theta0 = np.cos(np.pi * n / N) * G / 4
        else:
            theta0 = np.broadcast_to(self.sign * U / 4, (N, d, d)).copy()
        # direction of B - Pi(0): along the weights' own direction for "aligned", random otherwise
        D = self.sign * U @ np.linalg.inv(Sigma) if self.init == "aligned" else rng.standard_normal((d, d))
        norm_sigma = np.sqrt(np.trace(D @ Sigma @ D.T))
        thr = paper_threshold(Sigma) if self.threshold == "paper" else thesis_threshold(Sigma)
        B = product(theta0) + self.rho * thr * D / norm_sigma
        return theta0, Sigma, B

    def as_dict(self) -> dict:
        """The parameters as a plain dict (for reports)."""
        return {"d": self.d, "N": self.N, "kappa": round(self.kappa, 4), "M": float(f"{self.M:.4g}"),
                "init": self.init, "sign": self.sign, "rho": float(f"{self.rho:.6g}"), "seed": self.seed,
                "threshold": self.threshold}


def conclusion_ratios(theta0, Sigma, B, *, decay: float = 10.0, t_points: int = 61) -> dict:
    r"""Run the gradient flow and return the three conclusions of Assumption 1 as ratios (each <= 1
    when it holds).

    * ``ball`` = :math:`\max_{t,n} \|\theta_n(t)\|_F / (1/2)`;
    * ``movement`` = :math:`\max_{t,n} \|\theta_n(t) - \theta_n(0)\|_F / (1/4)`;
    * ``loss`` = :math:`\max_{t > 0} \ell(t) / (e^{-4mt/e}\ell(0))`,

    over ``t_points`` equally spaced times in :math:`[0, T]` with :math:`T = e \cdot decay / (4m)`
    (the proved bound on the loss falls by :math:`e^{-decay}` by then). Also returns ``sqrt_loss0``,
    ``final_loss_ratio`` = :math:`\ell(T)/\ell(0)` and ``horizon`` T.
    """
    t = _horizon_grid(Sigma, decay, t_points)
    theta_t, info = gradient_flow(theta0, Sigma, B, t, full_output=True)
    return _conclusions(theta0, Sigma, theta_t, info)


def _horizon_grid(Sigma, decay, t_points) -> np.ndarray:
    """``t_points`` equally spaced times in [0, e decay / (4 m)] (m the smallest eigenvalue of Sigma)."""
    m = float(np.linalg.eigvalsh(Sigma)[0])
    return np.linspace(0.0, np.e * decay / (4 * m), t_points)


def _conclusion_sides(theta0, Sigma, theta_t, info) -> dict:
    """Both sides of the three conclusions of Assumption 1 on one flow (see :func:`conclusion_ratios`): a dict
    ``"ball"``, ``"movement"``, ``"loss"`` -> (lhs, rhs), the loss at the time of its largest ratio."""
    m = float(np.linalg.eigvalsh(Sigma)[0])
    t = info.t
    l0 = float(info.loss[0])
    moved = np.sqrt(np.sum((theta_t - theta0) ** 2, axis=(-2, -1))).max()
    rhs_loss = l0 * np.exp(-4 * m * t[1:] / np.e)
    if l0 > 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            k = int(np.argmax(info.loss[1:] / rhs_loss))
        loss = (float(info.loss[1 + k]), float(rhs_loss[k]))
    else:
        loss = (0.0, 1.0)
    return {"ball": (float(info.max_weight.max()), BALL_RADIUS), "movement": (float(moved), MOVEMENT_RADIUS),
            "loss": loss}


def _conclusions(theta0, Sigma, theta_t, info) -> dict:
    sides = _conclusion_sides(theta0, Sigma, theta_t, info)
    l0 = float(info.loss[0])
    out = {key: float(lhs / rhs) for key, (lhs, rhs) in sides.items()}
    out.update(sqrt_loss0=float(np.sqrt(l0)), final_loss_ratio=float(info.loss[-1] / l0) if l0 > 0 else 0.0,
               horizon=float(info.t[-1]))
    return out


# --------------------------------------------------------------------------- the worst-case searches

#: the box of the worst-case searches of Assumption 1, Prop. 2 and Lemma 1 (coordinates of
#: :class:`Assumption1Instance`): the dimension, the depth (1 to 64: a flow takes at most a few tenths of a second),
#: the condition number M/m of Sigma (log, 1 to 100; the flow's horizon grows like it), its largest eigenvalue M
#: (log, 1e-2 to 1e2), the init (an index into ``("zero", "constant", "cosine", "aligned")``: every non-zero one on
#: the boundary ||theta_n(0)||_F = 1/4 of the assumption, ``aligned`` pushed outwards by the flow), rho =
#: sqrt(l(0)) over the paper's threshold up to 1 - 1e-6 (the edge of the assumption; small rho is where the
#: smoothness bound is tightest, its C_0 term then dominating), the sign of the aligned init and a seed
LINEAR_BOX = (Dim("d", 1, 3, "int"), Dim("N", 1, 64, "log-int"), Dim("kappa", 1.0, 100.0, "log"),
              Dim("M", 1e-2, 1e2, "log"), Dim("init", 0, 3, "int"), Dim("rho", 1e-3, 1.0 - 1e-6),
              Dim("sign", 0, 1, "int"), Dim("seed", 0, 2**20, "int"))
#: Nelder-Mead refinements of the linear searches (two: eight coordinates need ten evaluations a start)
LINEAR_STARTS = 2
#: horizon (the proved loss bound falls by e^-decay) and times of the flows of the Prop. 2 and Lemma 1 searches: those
#: of :class:`Assumption1Config`'s defaults, so that the three searches share their flows
SEARCH_DECAY = 10.0
SEARCH_T_POINTS = 61


def linear_box_instance(point, rho_scale: float = 1.0) -> Assumption1Instance:
    """The :class:`Assumption1Instance` of one point of :data:`LINEAR_BOX` (indices decoded; rho times
    ``rho_scale``)."""
    return Assumption1Instance(d=int(point["d"]), N=int(point["N"]), kappa=float(point["kappa"]),
                               M=float(point["M"]), init=_INITS[int(point["init"])],
                               rho=float(point["rho"]) * rho_scale, seed=int(point["seed"]),
                               sign=(1.0, -1.0)[int(point["sign"])])


@functools.lru_cache(maxsize=256)
def _search_flow(inst: Assumption1Instance, decay: float, t_points: int):
    """``(theta0, Sigma, B, theta_t, info)`` of one instance, the flow on :func:`_horizon_grid` (memoised: the
    searches of Assumption 1, Prop. 2 and Lemma 1 visit the same Sobol points; the arrays are read-only)."""
    theta0, Sigma, B = inst.build()
    theta_t, info = gradient_flow(theta0, Sigma, B, _horizon_grid(Sigma, decay, t_points), full_output=True)
    for a in (theta0, Sigma, B, theta_t, info.t, info.loss, info.max_weight, info.layer_difference, info.pl,
              info.gradient_norm):
        a.setflags(write=False)
    return theta0, Sigma, B, theta_t, info


def _inside(inst: Assumption1Instance, decay: float = SEARCH_DECAY, t_points: int = SEARCH_T_POINTS):
    """The flow of ``inst`` (:func:`_search_flow`) if it satisfies Assumption 1 (:func:`theory.linear.assumption1`),
    else None (the searches' constraint: outside the hypotheses)."""
    theta0, Sigma, B = inst.build()
    if not _assumption1_check(theta0, Sigma, B).holds:
        return None
    return _search_flow(inst, float(decay), int(t_points))


def _worst_side(sides: dict) -> tuple[float, float]:
    """The (lhs, rhs) pair of largest ratio among ``sides`` (a dict of pairs with rhs > 0)."""
    return max(sides.values(), key=lambda p: p[0] / p[1])


def linear_search(sides, budget: int, seed: int, constant=None):
    """:func:`theory.worst_case.search_worst_case` of ``sides(point) -> (lhs, rhs) or None`` over
    :data:`LINEAR_BOX` (two Nelder-Mead starts)."""
    return search_worst_case(sides, LINEAR_BOX, budget=budget, seed=seed, starts=LINEAR_STARTS, constant=constant)


@dataclass(frozen=True)
class Assumption1Config(Config):
    """Configuration of :func:`assumption1`."""

    n_instances: int = field(Int(low=2), 24, "Number of drawn instances (half with a margin, rho uniform in "
                             "[0.1, 0.9]; half within 1 % of the threshold, rho = 1 - 10^-U(2, 4)).")
    dims: tuple = field(Ints(low=1), (1, 2, 3), "Dimensions d drawn from.")
    depths: tuple = field(Ints(low=1), (2, 4, 8, 16, 32), "Depths N drawn from.")
    kappa_max: float = field(Real(1, 1e6), 10.0, "Largest condition number M/m of Sigma (drawn log-uniformly in "
                             "[1, kappa_max]).")
    log10_M: tuple = field(Reals(-6, 6, min_len=2, max_len=2), (-1.0, 1.0), "Range (low, high), low <= high, of "
                           "log10 of the largest eigenvalue M of Sigma.")
    decay: float = field(Real(0, 50, closed="right"), 10.0, "Flow horizon T = e * decay / (4 m): the proved loss "
                         "bound falls by e^-decay.")
    t_points: int = field(Int(low=3), 61, "Number of equally spaced times in [0, T] at which the conclusions are "
                          "evaluated.")
    seed: int = field(Seed(), 0, "Seed of the ``numpy.random.Generator`` that draws the instances.")
    break_depth: int = field(Int(low=1), 16, "Depth of the scalar family walked beyond the threshold.")
    break_ladder: tuple = field(Reals(1, closed="neither", increasing=True),
                                (1.01, 1.5, 2.0, 3.0, 4.0, 4.5, 5.0, 6.0, 8.0, 10.0),
                                "Increasing multiples rho > 1 of the threshold tried on that family.")
    rho_scale: float = field(Real(0, 1e3, closed="right"), 1.0, "Multiplies every drawn rho; 1 keeps the "
                             "instances inside the assumption. Values above 1 give instances beyond the threshold "
                             "(for negative controls only).")
    search_examples: int = field(Int(low=0), 0, "Examples of a Hypothesis search near the threshold (rho in "
                                 "``search_rho``, depths ``search_depths``, the dimensions, condition numbers and "
                                 "M of the draw, every init) steered towards the largest conclusion ratio "
                                 "(derandomized; 0: none, and no Hypothesis needed).")
    search_depths: tuple = field(Ints(low=1), (2, 4, 8, 16), "Depths N of the search.")
    search_rho: tuple = field(Reals(0, 1e4, closed="right", min_len=2, max_len=2), (0.9, 0.9999),
                              "Range (low, high), low <= high, of the search's rho (times ``rho_scale``).")
    search_budget: int = field(Int(low=0), 0, "Evaluations of the worst-case search of :data:`LINEAR_BOX` for the "
                               "largest conclusion ratio (scrambled Sobol points, then Nelder-Mead; rho times "
                               "``rho_scale``; 0: none).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")

    def check(self):
        if self.log10_M[0] > self.log10_M[1]:
            raise self.invalid("log10_M", "be (low, high) with low <= high")
        if self.search_rho[0] > self.search_rho[1]:
            raise self.invalid("search_rho", "be (low, high) with low <= high")

    def instances(self) -> list:
        """The drawn :class:`Assumption1Instance` list (deterministic in ``seed``)."""
        rng = np.random.default_rng(self.seed)
        out = []
        for i in range(self.n_instances):
            boundary = i % 2 == 1
            rho = 1.0 - 10.0 ** (-rng.uniform(2.0, 4.0)) if boundary else rng.uniform(0.1, 0.9)
            out.append(Assumption1Instance(
                d=int(rng.choice(self.dims)), N=int(rng.choice(self.depths)),
                kappa=float(np.exp(rng.uniform(0.0, np.log(self.kappa_max)))),
                M=float(10 ** rng.uniform(*self.log10_M)),
                init=_INITS[i % len(_INITS)] if i % 4 != 3 else "aligned",
                rho=float(rho * self.rho_scale), seed=int(rng.integers(0, 2**31)), sign=float(rng.choice([-1.0, 1.0]))))
        return out

    def strategy(self, st):
        """The Hypothesis strategy of the search (``st``: ``hypothesis.strategies``): :class:`Assumption1Instance`
        near the threshold, weights on the boundary of the ball of radius 1/4 for every non-zero init."""
        return st.builds(
            Assumption1Instance, d=st.sampled_from(self.dims), N=st.sampled_from(self.search_depths),
            kappa=st.floats(1.0, self.kappa_max), M=st.floats(*self.log10_M).map(lambda e: 10 ** e),
            init=st.sampled_from(_INITS), rho=st.floats(*self.search_rho).map(lambda r: r * self.rho_scale),
            seed=st.integers(0, 2**16), sign=st.sampled_from([1.0, -1.0]))


ASSUMPTION1_PRESETS = {
    # the seeded draw, the check's Hypothesis search near the threshold (40 examples) and the worst-case search of
    # LINEAR_BOX (120 evaluations)
    "check": Assumption1Config(search_examples=40, search_budget=120),
    # no sizes in the documents for this statement; a larger draw for sweeps and ten times the search
    "paper": Assumption1Config(n_instances=400, dims=(1, 2, 3, 5, 8), depths=(2, 4, 8, 16, 32, 64, 128),
                               kappa_max=100.0, log10_M=(-3.0, 3.0), search_budget=1200),
}


@dataclass(frozen=True)
class Assumption1Result:
    """Measured by :func:`assumption1`.

    Attributes
    ----------
    instances : tuple of dict
        Each instance's parameters with its three ratios (``ball``, ``movement``, ``loss``).
    bound : BoundResult
        Largest ratio over every instance and conclusion (each must stay <= 1).
    max_ball, max_movement, max_loss : float
        Largest ratio of each conclusion.
    max_rho : float
        Closest approach to the threshold among the instances (sqrt(l(0)) / threshold).
    n_outside : int
        Drawn instances that :func:`theory.linear.assumption1` says violate the assumption (0 expected).
    break_family : tuple of dict
        The scalar family beyond the threshold: rho, sign and the three ratios at each rho.
    break_factor : float or None
        The smallest rho of ``break_ladder`` at which some conclusion fails, over both signs.
    n_hypothesis : int
        Instances added by a Hypothesis search (the last ``n_hypothesis`` of ``instances``; see
        :func:`with_instances`).
    search : WorstCase or None
        The worst-case search of :data:`LINEAR_BOX` for the largest conclusion ratio (:func:`assumption1_sides`),
        where one ran.
    """

    instances: tuple
    bound: BoundResult
    max_ball: float
    max_movement: float
    max_loss: float
    max_rho: float
    n_outside: int
    break_family: tuple
    break_factor: float | None
    n_hypothesis: int = 0
    search: WorstCase | None = None

    def to_measured(self) -> dict:
        """The report's ``measured`` dict."""
        first = min(r["rho"] for r in self.break_family)
        return {**self.bound.to_measured(), "max_ball_ratio": self.max_ball, "max_movement_ratio": self.max_movement,
                "max_loss_ratio": self.max_loss, "closest_rho": self.max_rho, "n_outside_assumption": self.n_outside,
                "break_factor": self.break_factor, "first_rung_rho": first,
                "first_rung_ratio": max(max(r["ball"], r["movement"], r["loss"])
                                        for r in self.break_family if r["rho"] == first)}


def _tracker_add(tracker, instance_dict, ratios):
    for key in ("ball", "movement", "loss"):
        tracker.add(ratios[key], 1.0, instance={**instance_dict, "conclusion": key})


def assumption1(config: Assumption1Config = ASSUMPTION1_PRESETS["check"]) -> Assumption1Result:
    """Draw instances inside Assumption 1, run the flow, and measure the conclusions (module docstring)."""
    if not isinstance(config, Assumption1Config):
        raise TypeError(f"`config` of theory.experiments.resnet_node.assumption1 must be an Assumption1Config; "
                        f"got {type(config).__name__}")
    tracker = BoundTracker()
    rows, outside = [], 0
    for inst in config.instances():
        theta0, Sigma, B = inst.build()
        outside += not _assumption1_check(theta0, Sigma, B).holds
        ratios = conclusion_ratios(theta0, Sigma, B, decay=config.decay, t_points=config.t_points)
        _tracker_add(tracker, inst.as_dict(), ratios)
        rows.append({**inst.as_dict(), **{k: ratios[k] for k in ("ball", "movement", "loss")}})
    family = []
    for sign in (1.0, -1.0):
        for rho in config.break_ladder:
            inst = Assumption1Instance(d=1, N=config.break_depth, kappa=1.0, M=1.0, init="aligned", rho=float(rho),
                                       seed=0, sign=sign)
            ratios = conclusion_ratios(*inst.build(), decay=config.decay, t_points=config.t_points)
            family.append({"rho": float(rho), "sign": sign, **{k: ratios[k] for k in ("ball", "movement", "loss")}})
    broken = [r["rho"] for r in family if max(r["ball"], r["movement"], r["loss"]) > 1.0]
    result = Assumption1Result(
        instances=tuple(rows), bound=tracker.result(),
        max_ball=max(r["ball"] for r in rows), max_movement=max(r["movement"] for r in rows),
        max_loss=max(r["loss"] for r in rows), max_rho=max(r["rho"] for r in rows), n_outside=outside,
        break_family=tuple(family), break_factor=min(broken) if broken else None)

    def evaluate(inst):
        ratios = conclusion_ratios(*inst.build(), decay=config.decay, t_points=config.t_points)
        worst = max(ratios["ball"], ratios["movement"], ratios["loss"])
        return ({**inst.as_dict(), **{k: ratios[k] for k in ("ball", "movement", "loss")}}, worst,
                f"instance {inst.as_dict()}: ratios {ratios}")

    searched = hypothesis_search(config.strategy, evaluate, config.search_examples,
                                 label="largest conclusion ratio", where="theory.experiments.resnet_node.assumption1")
    result = with_instances(result, searched) if searched else result
    if not config.search_budget:
        return result
    search = linear_search(lambda point: assumption1_sides(point, decay=config.decay, t_points=config.t_points,
                                                           rho_scale=config.rho_scale),
                           config.search_budget, config.search_seed)
    return dataclasses.replace(result, search=search)


def assumption1_sides(point, *, decay: float = 10.0, t_points: int = 61, rho_scale: float = 1.0):
    """``(lhs, rhs)`` of the conclusion of largest ratio (ball, movement or loss; :func:`conclusion_ratios`) at one
    point of :data:`LINEAR_BOX`, or None outside Assumption 1."""
    inst = linear_box_instance(point, rho_scale)
    flow = _inside(inst, decay, t_points)
    if flow is None:
        return None
    theta0, Sigma, _, theta_t, info = flow
    return _worst_side(_conclusion_sides(theta0, Sigma, theta_t, info))


def with_instances(result: Assumption1Result, rows) -> Assumption1Result:
    """``result`` with more evaluated instances (dicts of parameters plus the three ratios, as in
    ``result.instances``; e.g. drawn by a Hypothesis search); ``n_outside`` counts those with rho >= 1 and
    ``n_hypothesis`` all of them."""
    tracker = BoundTracker()
    rows = tuple(result.instances) + tuple(dict(r) for r in rows)
    for row in rows:
        _tracker_add(tracker, {k: v for k, v in row.items() if k not in ("ball", "movement", "loss")}, row)
    extra_outside = sum(1 for r in rows[len(result.instances):] if r["rho"] >= 1.0)
    return Assumption1Result(
        instances=rows, bound=tracker.result(), max_ball=max(r["ball"] for r in rows),
        max_movement=max(r["movement"] for r in rows), max_loss=max(r["loss"] for r in rows),
        max_rho=max(r["rho"] for r in rows), n_outside=result.n_outside + extra_outside,
        break_family=result.break_family, break_factor=result.break_factor,
        n_hypothesis=result.n_hypothesis + len(rows) - len(result.instances), search=result.search)


def assumption1_verdict(result: Assumption1Result) -> Verdict:
    """Pass iff every drawn instance lies inside Assumption 1 and every conclusion ratio is <= 1 (also
    measured: ``n_hypothesis``, the instances of the Hypothesis search), and so is the largest ratio of the
    worst-case search where one ran (``measured["search"]``, :func:`theory.claims.worst_case_verdict`)."""
    brk = ("no conclusion breaks on the ladder" if result.break_factor is None
           else f"first break beyond the threshold at rho = {result.break_factor:g}")
    measured = {**result.to_measured(), "n_outside": result.n_outside, "n_hypothesis": result.n_hypothesis}
    verdict = threshold_verdict("bound", measured, {"ratio_max": 1.0, "n_outside_max": 0}, context=(
        f"largest of the ball, movement and loss ratios over {result.bound.n_instances} (instance, conclusion) "
        f"pairs, worst {result.bound.worst}; per conclusion: ball {result.max_ball:.3f}, movement "
        f"{result.max_movement:.3f}, loss {result.max_loss:.3f} (closest approach to the threshold: rho = "
        f"{result.max_rho:.5f}); {brk}"))
    return verdict if result.search is None else worst_case_verdict(verdict, result.search, ratio_max=1.0)


# --------------------------------------------------------------------------- the thesis' constant


@dataclass(frozen=True)
class ErratumConfig(Config):
    """Configuration of :func:`assumption1_erratum`."""

    scales: tuple = field(Reals(0, math.exp(-3), closed="neither"), (1e-5, 1e-6), "Values c of Sigma = c I, each "
                          "below e^-3 (where the thesis' constant is the larger one).")
    d: int = field(Int(low=1), 3, "Dimension.")
    N: int = field(Int(low=1), 16, "Depth.")
    rho: float = field(Real(0, 1, closed="neither"), 0.99, "sqrt(l(0)) as a multiple of each threshold (inside "
                       "each version of the assumption).")
    decay: float = field(Real(0, 50, closed="right"), 10.0, "As in :func:`conclusion_ratios`.")
    t_points: int = field(Int(low=3), 61, "As in :func:`conclusion_ratios`.")


ERRATUM_PRESETS = {"check": ErratumConfig(), "paper": ErratumConfig(scales=(1e-3 / 30, 1e-5, 1e-6, 1e-8))}


@dataclass(frozen=True)
class ErratumResult:
    """Measured by :func:`assumption1_erratum`: per scale c, the instance at ``rho`` times each threshold.

    Attributes
    ----------
    rows : tuple of dict
        ``c``, ``threshold`` ("thesis" or "paper"), its value, sqrt(l(0)), whether the instance
        satisfies the *other* version of the assumption, and the three conclusion ratios.
    thesis : BoundResult
        Largest conclusion ratio over the instances admitted by the thesis' constant.
    paper : BoundResult
        The same over the instances of the same family admitted by the paper's constant.
    """

    rows: tuple
    thesis: BoundResult
    paper: BoundResult

    def to_measured(self) -> dict:
        return {"thesis_ratio": self.thesis.ratio, "paper_ratio": self.paper.ratio,
                "rows": [dict(r) for r in self.rows]}


def assumption1_erratum(config: ErratumConfig = ERRATUM_PRESETS["check"]) -> ErratumResult:
    r"""Sigma = cI, theta(0) = 0, B - I along I: the instance at ``rho`` times the thesis' threshold and
    the one at ``rho`` times the paper's, with the conclusions of :func:`conclusion_ratios`."""
    if not isinstance(config, ErratumConfig):
        raise TypeError(f"`config` of theory.experiments.resnet_node.assumption1_erratum must be an ErratumConfig; "
                        f"got {type(config).__name__}")
    d, N = config.d, config.N
    trackers = {"thesis": BoundTracker(), "paper": BoundTracker()}
    rows = []
    for c in config.scales:
        Sigma = c * np.eye(d)
        thresholds = {"thesis": thesis_threshold(Sigma), "paper": paper_threshold(Sigma)}
        for which, thr in thresholds.items():
            theta0 = np.zeros((N, d, d))
            # ||b I - I||_Sigma = sqrt(c d) |b - 1|
            B = (1.0 + config.rho * thr / np.sqrt(c * d)) * np.eye(d)
            ratios = conclusion_ratios(theta0, Sigma, B, decay=config.decay, t_points=config.t_points)
            other = "paper" if which == "thesis" else "thesis"
            row = {"c": c, "threshold": which, "value": thr, "sqrt_loss0": ratios["sqrt_loss0"],
                   f"inside_{other}_assumption": bool(ratios["sqrt_loss0"] < thresholds[other]),
                   **{k: ratios[k] for k in ("ball", "movement", "loss")}}
            rows.append(row)
            _tracker_add(trackers[which], {"c": c, "threshold": which}, ratios)
    return ErratumResult(tuple(rows), trackers["thesis"].result(), trackers["paper"].result())


def assumption1_erratum_verdict(result: ErratumResult) -> Verdict:
    """The erratum record: the conclusions of Prop. 2 (every ratio at most 1) on the instances admitted by the
    thesis' constant (printed; must fail) and by the paper's (corrected; must hold); halves in ``verdict.parts``."""
    printed = bound_verdict(result.thesis, {"ratio_max": 1.0})
    corrected = bound_verdict(result.paper, {"ratio_max": 1.0})
    return erratum_verdict(dataclasses.replace(printed, message=f"thesis constant: {printed.message}"),
                           dataclasses.replace(corrected, message=f"paper constant: {corrected.message}"))


# =========================================================================== registration
# The paper gives no sizes for its linear experiments (Fig. 2 shows depths and training times
# without listing them): the "paper" presets are longer depth ladders, more seeds and deeper
# references, for sweeps.

register("resnet_node.sec32_gradient", config=Sec32GradientConfig,
         presets={"check": Sec32GradientConfig(), "paper": Sec32GradientConfig(seeds=tuple(range(10)), N=16, d=5)},
         measure=sec32_gradient, verdict=sec32_gradient_verdict, claims=("resnet-node/sec-3.2/gradient",),
         summary=lambda r: {"max_rel_err": r.max_rel_err})
register("resnet_node.sec32_gradient_erratum", config=Sec32GradientConfig,
         presets={"check": Sec32GradientConfig(seeds=(0,)), "paper": Sec32GradientConfig(seeds=(0,), N=16, d=5)},
         measure=sec32_gradient_erratum, verdict=sec32_gradient_erratum_verdict,
         claims=("resnet-node/sec-3.2/gradient/erratum",), summary=lambda r: {"fd_over_printed": r.fd_over_printed})
register("resnet_node.sec32_product", config=Sec32ProductConfig,
         presets={"check": Sec32ProductConfig(), "paper": Sec32ProductConfig(N=64, d=8, batch=32)},
         measure=sec32_product, verdict=sec32_product_verdict,
         claims={"resnet-node/sec-3.2/product": None,
                 "resnet-node/sec-3.2/product/erratum": sec32_product_erratum_verdict},
         summary=lambda r: r.to_measured())
register("resnet_node.prop2", config=LinearFlowConfig, presets=LINEAR_PRESETS, measure=prop2, verdict=prop2_verdict,
         claims=PROP2_CLAIM_VERDICTS,
         summary=lambda r: {key: prop2_bound(r, key).ratio for key in PROP2_KEYS})
register("resnet_node.prop2_pl_erratum", config=PLErratumConfig,
         presets={"check": PLErratumConfig(), "paper": PLErratumConfig(N=1024)},
         measure=prop2_pl_erratum, verdict=prop2_pl_erratum_verdict, claims=("resnet-node/prop-2/pl/erratum",),
         summary=lambda r: {"printed_ratio": r.printed.ratio, "corrected_ratio": r.corrected.ratio})
register("resnet_node.prop2_large", config=LayerDifferenceConfig, presets=PROP2_LARGE_PRESETS,
         measure=layer_differences, verdict=prop2_large_verdict, claims=("resnet-node/prop-2/large",),
         summary=lambda r: {"slope": r.fit.slope, "max_weight": r.max_weight})
register("resnet_node.prop2_iid", config=LayerDifferenceConfig, presets=PROP2_IID_PRESETS,
         measure=layer_differences, verdict=prop2_iid_verdict, claims=("resnet-node/prop-2/iid",),
         summary=lambda r: {"slope": r.fit.slope, "final_loss_max": r.final_loss_max})
register("resnet_node.thm1", config=DoublingConfig,
         presets={"check": DoublingConfig(), "paper": DoublingConfig(seeds=(0, 1, 2, 3), depths=LINEAR_GRID + (512,),
                                                                     reference=4096)},
         measure=thm1, verdict=thm1_verdict, claims=THM1_CLAIM_VERDICTS,
         summary=lambda r: {which: r.fit(which).slope for which in _THM1_CLAIMS})
register("resnet_node.lemma1", config=Lemma1Config,
         presets={"check": Lemma1Config(search_budget=120),
                  "paper": Lemma1Config(flows=LINEAR_PRESETS["paper"], pairs=4000, search_budget=1200)},
         measure=lemma1, verdict=lemma1_verdict, claims=("resnet-node/lemma-1",),
         summary=lambda r: {"ratio": r.ratio, "n_instances": r.n_instances})
register("resnet_node.fig2", config=Fig2Config,
         presets={"check": Fig2Config(), "paper": Fig2Config(depths=LINEAR_GRID + (512,), reference=4096)},
         measure=fig2, verdict=fig2_verdict, claims=("resnet-node/fig-2",),
         summary=lambda r: {"slope": r.fit.slope, "decreasing": float(r.decreasing)})
register("resnet_node.assumption1", config=Assumption1Config, presets=ASSUMPTION1_PRESETS, measure=assumption1,
         verdict=assumption1_verdict, claims=("resnet-node/assumption-1",),
         summary=lambda r: {"ratio": r.bound.ratio, "closest_rho": r.max_rho,
                            "break_factor": r.break_factor if r.break_factor is not None else float("nan")})
register("resnet_node.assumption1_erratum", config=ErratumConfig, presets=ERRATUM_PRESETS,
         measure=assumption1_erratum, verdict=assumption1_erratum_verdict,
         claims=("resnet-node/assumption-1/erratum",),
         summary=lambda r: {"thesis_ratio": r.thesis.ratio, "paper_ratio": r.paper.ratio})
