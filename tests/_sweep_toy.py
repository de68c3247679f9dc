"""A toy experiment for the sweep tests: cheap, importable by worker processes, able to fail on demand."""

import dataclasses
import math
import time

import numpy as np

from theory.experiments import Choice, Config, Custom, Int, Real, Seed, field, register


@dataclasses.dataclass(frozen=True)
class ToyConfig(Config):
    """A toy sweep task."""

    x: float = field(Real(), 0.0, "The scale of the values.")
    n: int = field(Int(low=1), 3, "Number of values.")
    fail_above: float = field(Custom(lambda v: _extended_real(v), "a number or inf", type_name="float",
                                     parse=float, scalar=True), math.inf, "The task raises when x is above this.")
    sleep: float = field(Real(0), 0.0, "Seconds to sleep in the task.")
    label: str = field(Choice("a", "b", "c"), "a", "A label.")
    seed: int = field(Seed(), 0, "Seed.")


def _extended_real(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
        raise TypeError("not a number")
    return float(v)


@dataclasses.dataclass(frozen=True)
class ToyResult:
    config: ToyConfig
    values: np.ndarray


def toy_measure(config):
    if config.x > config.fail_above:
        raise ValueError(f"x = {config.x} is above fail_above = {config.fail_above}")
    if config.sleep:
        time.sleep(config.sleep)
    rng = np.random.default_rng([config.seed, config.n])
    return ToyResult(config, config.x * rng.standard_normal(config.n))


def toy_summary(result):
    return {"sum": float(result.values.sum()), "x2": result.config.x ** 2, "n": result.config.n}


TOY = register("scaling.sweep_toy", config=ToyConfig, presets={"check": ToyConfig(), "paper": ToyConfig(n=5)},
               measure=toy_measure, summary=toy_summary)


def dying_measure(config):
    """Kills its worker process when x > fail_above (a crash, not an exception)."""
    import os

    if config.x > config.fail_above:
        os._exit(3)
    return toy_measure(config)


DYING = register("scaling.sweep_toy_dying", config=ToyConfig, presets={"check": ToyConfig(), "paper": ToyConfig()},
                 measure=dying_measure, summary=toy_summary)
