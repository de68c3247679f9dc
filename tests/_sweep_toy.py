"""A toy experiment for the sweep tests: cheap, importable by worker processes, able to fail on demand."""

import dataclasses
import math
import time

import numpy as np

from theory.experiments import register


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    x: float = 0.0
    n: int = 3
    fail_above: float = math.inf
    sleep: float = 0.0
    label: str = "a"
    seed: int = 0

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"`n` of ToyConfig must be >= 1; got {self.n}")
        if self.sleep < 0:
            raise ValueError(f"`sleep` of ToyConfig must be >= 0; got {self.sleep}")


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
