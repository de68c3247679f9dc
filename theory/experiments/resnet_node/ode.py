r"""Proposition 1 of ``resnet-node`` (thesis Prop. 2.2): a ResNet against its interpolating neural ODE.

For a ResNet :math:`x_{n+1} = x_n + f(x_n, \theta_n)/N` and a neural ODE
:math:`\dot x = \varphi(x, s)` that interpolates it (:math:`\varphi(\cdot, n/N) = f(\cdot, \theta_n)`),
Prop. 1 bounds :math:`\max_n \|x_n - x(n/N)\| \le (e^L - 1) C_N / (2NL)`, with L the Lipschitz
constant of :math:`\varphi` in x and :math:`C_N` a bound on the time derivative of
:math:`\varphi` along the solution. Four measurements:

* :func:`prop1_instance` / :func:`prop1`: the gap and the bound on one network, and on a seeded draw of
  networks plus a Hypothesis search of the same space steered towards the largest gap/bound ratio (the
  check's preset is the search alone);
* :func:`prop1_tightness`: :math:`\varphi(x, s) = a s + b` attains the bound;
* :func:`prop1_non_smooth`: without smoothness in depth the gap does not vanish (1/2 and 2/3);
* :func:`prop1_rate`: with weights smooth in depth the gap is O(1/N).
"""

from __future__ import annotations

from dataclasses import MISSING as _MISSING
from dataclasses import dataclass

import numpy as np

from theory.claims import Verdict, bound_verdict, identity_verdict, rate_verdict
from theory.experiments._registry import register
from theory.rates import BoundResult, BoundTracker, IdentityResult, RateFit, fit_rate, identity_error
from theory.worst_case import Dim, search_worst_case
from theory.resnet import forward, interpolating_ode
from theory.resnet.errors import iid_weights, smooth_weights

from ..config import Choice, Config, Int, Ints, Real, Reals, Seed, Seeds, field
from ._common import _require
from ._search import hypothesis_search

__all__ = [
    "PROP1_BOX", "PROP1_CONSTANT", "PROP1_PRESETS", "PROP1_RATE_PRESETS", "prop1_sides",
    "PROP1_EXPECTED", "PROP1_RATE_EXPECTED", "PROP1_IDENTITY_EXPECTED",
    "Prop1Instance", "Prop1Config", "Prop1Result", "prop1_instance", "prop1", "prop1_from_rows", "prop1_verdict",
    "Prop1TightnessConfig", "Prop1TightnessResult", "prop1_tightness", "prop1_tightness_verdict",
    "Prop1NonSmoothConfig", "Prop1NonSmoothResult", "prop1_non_smooth", "prop1_non_smooth_verdict",
    "Prop1RateConfig", "prop1_rate", "prop1_rate_verdict",
]

#: expected figures of the records: largest gap/bound ratio; rate of the smooth case; identities
PROP1_EXPECTED = {"ratio_max": 1.0}
PROP1_RATE_EXPECTED = {"slope": -1.0, "tol": 0.1}
PROP1_IDENTITY_EXPECTED = {"atol": 1e-9}

_RESIDUALS = ("tanh_out", "tanh", "linear")


@dataclass(frozen=True)
class Prop1Instance(Config):
    """One network of the bound search of Prop. 1 (inside its assumptions: phi C^1 in x, globally Lipschitz)."""

    residual: str = field(Choice(*_RESIDUALS), _MISSING, "The residual family f(x, theta).")
    weights: str = field(Choice("smooth", "iid"), _MISSING, ":func:`theory.resnet.errors.smooth_weights` or "
                         "``iid_weights``.")
    interpolation: str = field(Choice("weights", "residuals"), _MISSING, "How the ODE interpolates the layers "
                               "(linearly in the weights or in the residuals).")
    d: int = field(Int(low=1), _MISSING, "State dimension.")
    N: int = field(Int(low=1), _MISSING, "Depth.")
    scale: float = field(Real(0, 100, closed="right"), _MISSING, "Multiplies the weights.")
    seed: int = field(Seed(), _MISSING, "Seed of the generator drawing the weights and then x_0.")
    x_scale: float = field(Real(0, 1e3, closed="right"), 1.0, "Multiplies x_0 (a standard normal draw).")


def prop1_instance(inst: Prop1Instance) -> tuple[float, float]:
    r"""``(gap, bound)``: :math:`\max_n \|x_n - x(n/N)\|` and :math:`(e^L - 1) C_N / (2NL)` of one network."""
    _require(inst, Prop1Instance, "prop1_instance")
    rng = np.random.default_rng(inst.seed)
    gen = smooth_weights if inst.weights == "smooth" else iid_weights
    # the interpolating ODE needs theta_0 .. theta_N: draw the Heun-sized family, Euler uses N of them
    theta = gen(inst.N, inst.d, rng, scheme="heun", scale=inst.scale)
    x0 = inst.x_scale * rng.standard_normal(inst.d)
    sol = interpolating_ode(x0, theta, inst.residual, inst.interpolation)
    x = forward(x0, theta[:-1], inst.residual)
    err = float(np.max(np.linalg.norm(x - sol.x, axis=1)))
    return err, _prop1_rhs(sol)


def _prop1_rhs(sol) -> float:
    """The right-hand side of Prop. 1 on a solved ODE (one place, so that a control can break it)."""
    return sol.prop1_bound()


#: the box of the worst-case search of Prop. 1 (every point satisfies its hypotheses: the residual families are C^1
#: in x and globally Lipschitz, both interpolations are continuous in s): the residual family (an index into
#: ``("tanh_out", "tanh", "linear")``), the weights (0 smooth in depth, 1 i.i.d. across layers), the interpolation
#: (0 linear in the weights, 1 in the residuals), the dimension, the depth (1 to 64, at most a few tenths of a second
#: of ODE solves), the weight scale over decades (small weights: L -> 0, where the bound is attained by a field
#: affine in s), the scale of x_0 and a seed
PROP1_BOX = (Dim("residual", 0, 2, "int"), Dim("weights", 0, 1, "int"), Dim("interpolation", 0, 1, "int"),
             Dim("d", 1, 6, "int"), Dim("N", 1, 64, "log-int"), Dim("scale", 1e-3, 5.0, "log"),
             Dim("x_scale", 1e-2, 10.0, "log"), Dim("seed", 0, 2**20, "int"))
#: the printed constant 1/2 of Prop. 1's right-hand side (e^L - 1) C_N / (2 N L)
PROP1_CONSTANT = ("1/2 in (e^L - 1) C_N / (2 N L)", 0.5)


def prop1_sides(instance: dict) -> tuple[float, float]:
    """``(gap, bound)`` of :func:`prop1_instance` at one point of :data:`PROP1_BOX` (indices decoded)."""
    return prop1_instance(Prop1Instance(
        residual=_RESIDUALS[int(instance["residual"])], weights=("smooth", "iid")[int(instance["weights"])],
        interpolation=("weights", "residuals")[int(instance["interpolation"])], d=int(instance["d"]),
        N=int(instance["N"]), scale=float(instance["scale"]), seed=int(instance["seed"]),
        x_scale=float(instance["x_scale"])))


@dataclass(frozen=True)
class Prop1Config(Config):
    """Networks for :func:`prop1`: a seeded draw and a Hypothesis search of the same space."""

    n_instances: int = field(Int(low=0), 40, "Number of networks of the seeded draw.")
    dims: tuple = field(Ints(low=1), (1, 2, 3, 4), "Dimensions drawn from.")
    depths: tuple = field(Ints(low=1), (2, 4, 8, 16, 32), "Depths drawn from.")
    scale_range: tuple = field(Reals(0, 100, closed="right", min_len=2, max_len=2), (0.1, 2.0),
                               "(low, high) of the uniform weight scale, low <= high.")
    seed: int = field(Seed(), 0, "Seed of the generator drawing the instances.")
    search_examples: int = field(Int(low=0), 0, "Examples of the Hypothesis search of the same space, steered "
                                 "towards the largest gap/bound ratio (derandomized; 0: none, and no Hypothesis "
                                 "needed). n_instances + search_examples >= 1.")
    search_budget: int = field(Int(low=0), 0, "Evaluations of the worst-case search of :data:`PROP1_BOX` (scrambled "
                               "Sobol points, then Nelder-Mead; 0: none).")
    search_seed: int = field(Seed(), 0, "Seed of the worst-case search.")

    def check(self):
        if self.scale_range[0] > self.scale_range[1]:
            raise self.invalid("scale_range", "be (low, high) with low <= high")
        if self.n_instances + self.search_examples < 1:
            raise self.invalid("n_instances", "be >= 1 when search_examples is 0 (no network to measure)")

    def instances(self) -> list:
        """The drawn :class:`Prop1Instance` list of the seeded draw (deterministic in ``seed``)."""
        rng = np.random.default_rng(self.seed)
        return [Prop1Instance(residual=str(rng.choice(_RESIDUALS)), weights=str(rng.choice(["smooth", "iid"])),
                              interpolation=str(rng.choice(["weights", "residuals"])), d=int(rng.choice(self.dims)),
                              N=int(rng.choice(self.depths)), scale=float(rng.uniform(*self.scale_range)),
                              seed=int(rng.integers(0, 2**16))) for _ in range(self.n_instances)]

    def strategy(self, st):
        """The Hypothesis strategy of the search (``st``: ``hypothesis.strategies``): dicts of the fields of
        :class:`Prop1Instance` over the same space as :meth:`instances`."""
        return st.fixed_dictionaries({
            "residual": st.sampled_from(_RESIDUALS),
            "weights": st.sampled_from(["smooth", "iid"]),
            "interpolation": st.sampled_from(["weights", "residuals"]),
            "d": st.sampled_from(self.dims),
            "N": st.sampled_from(self.depths),
            "scale": st.floats(*self.scale_range),
            "seed": st.integers(0, 2**16),
        })


PROP1_PRESETS = {
    # the check's bound searches: 40 Hypothesis examples steered towards the largest ratio, and the worst-case
    # search of PROP1_BOX (200 evaluations, about a second)
    "check": Prop1Config(n_instances=0, search_examples=40, search_budget=200),
    # the documents give no sizes for Prop. 1; a wider seeded draw for sweeps and ten times the search
    "paper": Prop1Config(n_instances=400, dims=(1, 2, 4, 8), depths=(2, 4, 8, 16, 32, 64, 128, 256),
                         search_budget=2000),
}


@dataclass(frozen=True)
class Prop1Result:
    """Gaps and bounds of the networks of a bound search.

    Attributes
    ----------
    bound : BoundResult
        Largest gap/bound ratio and the instance attaining it, with the worst-case search of :data:`PROP1_BOX`
        attached (``bound.search``) where one ran.
    lhs, rhs : ndarray
        Every gap and every bound of the seeded draw and the Hypothesis search (for the figure).
    """

    bound: BoundResult
    lhs: np.ndarray
    rhs: np.ndarray

    def to_measured(self) -> dict:
        return self.bound.to_measured()


def prop1_from_rows(rows, search=None) -> Prop1Result:
    """Collect ``(instance_dict, gap, bound)`` rows (e.g. from a Hypothesis search) into a result, with the worst-case
    search ``search`` (a :class:`theory.worst_case.WorstCase`, optional) attached to its bound."""
    tracker = BoundTracker()
    lhs, rhs = [], []
    for inst, err, bound in rows:
        tracker.add(err, bound, instance=inst)
        lhs.append(err)
        rhs.append(bound)
    bound = tracker.result()
    return Prop1Result(bound if search is None else bound.with_search(search), np.array(lhs), np.array(rhs))


def _prop1_row(inst: dict):
    err, bound = prop1_instance(Prop1Instance(**inst))
    return (inst, err, bound), err / bound, f"instance {inst}: error {err:.3e}, bound {bound:.3e}"


def prop1(config: Prop1Config = PROP1_PRESETS["check"]) -> Prop1Result:
    """Gap and bound of Prop. 1 on each network of the seeded draw, then on each of the Hypothesis search
    (:func:`theory.experiments.resnet_node._search.hypothesis_search`, target: the gap/bound ratio), and the
    worst-case search of :data:`PROP1_BOX` (:func:`theory.worst_case.search_worst_case`, ``search_budget``
    evaluations) attached to the result's bound."""
    _require(config, Prop1Config, "prop1")
    rows = []
    for inst in config.instances():
        rows.append((dict(inst.__dict__), *prop1_instance(inst)))
    rows += hypothesis_search(config.strategy, _prop1_row, config.search_examples, label="LHS/RHS",
                              where="theory.experiments.resnet_node.prop1")
    search = None
    if config.search_budget:
        search = search_worst_case(prop1_sides, PROP1_BOX, budget=config.search_budget, seed=config.search_seed,
                                   constant=PROP1_CONSTANT)
    return prop1_from_rows(rows, search)


def prop1_verdict(result: Prop1Result) -> Verdict:
    """Pass iff every gap is at most its bound."""
    return bound_verdict(result.bound, PROP1_EXPECTED)


# --------------------------------------------------------------------------- tightness


@dataclass(frozen=True)
class Prop1TightnessConfig(Config):
    """phi(x, s) = a s + b (the ``bias`` family with weights a n/N + b), a, b, x_0 standard normal."""

    seed: int = field(Seed(), 7, "Seed of the generator drawing a, b, x_0.")
    d: int = field(Int(low=1), 3, "Dimension.")
    depths: tuple = field(Ints(low=1), (4, 16, 64, 256), "Depths N.")


@dataclass(frozen=True)
class Prop1TightnessResult:
    """``identity``: gap/bound ratios against 1; ``gap_minus_predicted``: largest entry of
    x_N - x(1) - (-a/(2N)) over the depths."""

    identity: IdentityResult
    gap_minus_predicted: float

    def to_measured(self) -> dict:
        return {**self.identity.to_measured(), "gap_minus_predicted": self.gap_minus_predicted}


def prop1_tightness(config: Prop1TightnessConfig = Prop1TightnessConfig()) -> Prop1TightnessResult:
    """Gap of the Euler ResNet to the ODE x(s) = b s + a s^2/2 and its ratio to the bound of Prop. 1."""
    _require(config, Prop1TightnessConfig, "prop1_tightness")
    rng = np.random.default_rng(config.seed)
    a, b, x0 = rng.standard_normal((3, config.d))
    ratios, gaps, predicted = [], [], []
    for N in config.depths:
        theta = a * (np.arange(N + 1)[:, None] / N) + b  # f(x, theta_n) = a n/N + b, "bias" family
        sol = interpolating_ode(x0, theta, "bias", "weights")
        x = forward(x0, theta[:-1], "bias")
        # the gap at every n is a n / (2 N^2) (Taylor remainder of x(s) = b s + a s^2 / 2 at each Euler
        # step), the bound C_N/(2N) with C_N = ||a||
        gaps.append(x[-1] - sol.x[-1])
        predicted.append(-a / (2 * N))
        ratios.append(np.linalg.norm(x[-1] - sol.x[-1]) / sol.prop1_bound())
    return Prop1TightnessResult(identity_error(np.array(ratios), np.ones(len(ratios))),
                                float(np.max(np.abs(np.array(gaps) - np.array(predicted)))))


def prop1_tightness_verdict(result: Prop1TightnessResult) -> Verdict:
    """Pass iff gap/bound = 1 at every depth (to 1e-9)."""
    return identity_verdict(result.identity, PROP1_IDENTITY_EXPECTED)


# --------------------------------------------------------------------------- non-smooth weights


@dataclass(frozen=True)
class Prop1NonSmoothConfig(Config):
    """Two 1-D networks whose weights are not smooth in depth."""

    depths: tuple = field(Ints(low=1), (4, 16, 64, 256), "Depths N. (a): f(x, theta_n) = n with residual "
                          "interpolation (gap 1/2 = C_N/(2N)); (b): f(x, theta) = theta^2 with theta_n = (-1)^n and "
                          "weight interpolation (gap 2/3).")


@dataclass(frozen=True)
class Prop1NonSmoothResult:
    """Gaps of (a) and (b) per depth, (a)'s ratio to the bound, and the identity against (1/2, 2/3)."""

    identity: IdentityResult
    grid: tuple
    gap_a: tuple
    gap_b: tuple
    bound_ratio_a: tuple

    def to_measured(self) -> dict:
        return {**self.identity.to_measured(), "grid": list(self.grid), "gap_a": list(self.gap_a),
                "gap_b": list(self.gap_b), "bound_ratio_a": list(self.bound_ratio_a)}


def prop1_non_smooth(config: Prop1NonSmoothConfig = Prop1NonSmoothConfig()) -> Prop1NonSmoothResult:
    """Gaps of two networks with weights of order 1 differences between layers (see the config)."""
    _require(config, Prop1NonSmoothConfig, "prop1_non_smooth")
    gaps_a, gaps_b, ratios = [], [], []
    for N in config.depths:
        theta = np.arange(N + 1.0)[:, None]
        sol = interpolating_ode([0.0], theta, "bias", "residuals")
        gaps_a.append(abs(sol.x[-1, 0] - forward([0.0], theta[:-1], "bias")[-1, 0]))
        ratios.append(gaps_a[-1] / sol.prop1_bound())
        theta = ((-1.0) ** np.arange(N + 1))[:, None]
        sol = interpolating_ode([0.0], theta, "bias_sq", "weights")
        gaps_b.append(abs(sol.x[-1, 0] - forward([0.0], theta[:-1], "bias_sq")[-1, 0]))
    n = len(config.depths)
    result = identity_error(np.r_[gaps_a, gaps_b], np.r_[[0.5] * n, [2 / 3] * n])
    return Prop1NonSmoothResult(result, tuple(config.depths), tuple(gaps_a), tuple(gaps_b), tuple(ratios))


def prop1_non_smooth_verdict(result: Prop1NonSmoothResult) -> Verdict:
    """Pass iff the gaps are 1/2 and 2/3 at every depth (to 1e-9)."""
    return identity_verdict(result.identity, PROP1_IDENTITY_EXPECTED)


# --------------------------------------------------------------------------- rate for smooth weights


@dataclass(frozen=True)
class Prop1RateConfig(Config):
    """Gap of f(x, theta) = theta tanh(x) to its weight-interpolating ODE, weights smooth in depth."""

    depths: tuple = field(Ints(low=1, min_len=5, increasing=True), (8, 16, 32, 64, 128, 256),
                          "Increasing depths (at least 5).")
    seeds: tuple = field(Seeds(), (0, 1, 2), "Weight path ``default_rng(seed)``, x_0 from "
                         "``default_rng(100 + seed)``.")
    d: int = field(Int(low=1), 4, "Dimension.")


PROP1_RATE_PRESETS = {"check": Prop1RateConfig(),
                      # no sizes in the documents; a longer ladder and more seeds for sweeps
                      "paper": Prop1RateConfig(depths=(8, 16, 32, 64, 128, 256, 512, 1024), seeds=tuple(range(10)))}


def prop1_rate(config: Prop1RateConfig = PROP1_RATE_PRESETS["check"]) -> RateFit:
    r"""Fit of :math:`\max_n \|x_n - x(n/N)\|` against N (one row per seed)."""
    _require(config, Prop1RateConfig, "prop1_rate")
    grid = np.array(config.depths)
    errors = np.empty((len(config.seeds), grid.size))
    for i, seed in enumerate(config.seeds):
        for j, N in enumerate(grid):
            theta = smooth_weights(int(N), config.d, np.random.default_rng(seed), scheme="heun")
            x0 = np.random.default_rng(100 + seed).standard_normal(config.d)
            sol = interpolating_ode(x0, theta, "tanh_out", "weights")
            errors[i, j] = np.max(np.linalg.norm(forward(x0, theta[:-1], "tanh_out") - sol.x, axis=1))
    return fit_rate(grid, errors)


def prop1_rate_verdict(fit: RateFit) -> Verdict:
    """Pass iff the slope is -1 +- 0.1."""
    return rate_verdict(fit, PROP1_RATE_EXPECTED)


register("resnet_node.prop1", config=Prop1Config, presets=PROP1_PRESETS, measure=prop1, verdict=prop1_verdict,
         claims=("resnet-node/prop-1",), summary=lambda r: {"ratio": r.bound.ratio, "n_instances": r.bound.n_instances})
register("resnet_node.prop1_tightness", config=Prop1TightnessConfig,
         presets={"check": Prop1TightnessConfig(), "paper": Prop1TightnessConfig(depths=(4, 16, 64, 256, 1024))},
         measure=prop1_tightness, verdict=prop1_tightness_verdict, claims=("resnet-node/prop-1/tightness",),
         summary=lambda r: {"max_abs_err": r.identity.max_abs_err, "gap_minus_predicted": r.gap_minus_predicted})
register("resnet_node.prop1_non_smooth", config=Prop1NonSmoothConfig,
         presets={"check": Prop1NonSmoothConfig(), "paper": Prop1NonSmoothConfig(depths=(4, 16, 64, 256, 1024))},
         measure=prop1_non_smooth, verdict=prop1_non_smooth_verdict, claims=("resnet-node/prop-1/non-smooth",),
         summary=lambda r: {"max_abs_err": r.identity.max_abs_err})
register("resnet_node.prop1_rate", config=Prop1RateConfig, presets=PROP1_RATE_PRESETS, measure=prop1_rate,
         verdict=prop1_rate_verdict, claims=("resnet-node/prop-1/rate",),
         summary=lambda r: {"slope": r.slope, "ci_low": r.ci[0], "ci_high": r.ci[1]})
