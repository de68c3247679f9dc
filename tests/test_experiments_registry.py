"""The experiment registry: lookup, presets, overrides and their validation."""

import dataclasses

import pytest

from theory.experiments import Config, Experiment, Int, Real, experiment, experiments, field, register


@dataclasses.dataclass(frozen=True)
class Cfg(Config):
    """A toy config."""

    n: int = field(Int(low=1), 3, "A count.")
    scale: float = field(Real(), 1.0, "A factor.")


def measure(cfg):
    return cfg.n * cfg.scale


def test_register_run_and_override():
    exp = register("topk.toy", config=Cfg, presets={"check": Cfg(), "paper": Cfg(n=100)}, measure=measure,
                   claims=("topk/prop-7.2",))
    assert experiment("topk.toy") is exp and "topk.toy" in experiments()
    assert exp.fields == ("n", "scale")
    assert exp.run() == 3.0 and exp.run("paper") == 100.0 and exp.run(scale=2.0) == 6.0
    with pytest.raises(ValueError, match="has no parameter nope; its parameters: n, scale"):
        exp.config_for(nope=1)
    with pytest.raises(ValueError, match="`preset` of experiment 'topk.toy' must be one of"):
        exp.config_for("gpu")
    with pytest.raises(ValueError, match="`n` of Cfg must be an integer >= 1; got 0."):
        exp.run(n=0)


def test_bad_registrations_and_lookups():
    with pytest.raises(ValueError, match="needs a 'paper' preset"):
        Experiment("topk.x", Cfg, {"check": Cfg()}, measure)
    with pytest.raises(TypeError, match="is not a Cfg"):
        Experiment("topk.x", Cfg, {"check": Cfg(), "paper": 3}, measure)
    with pytest.raises(ValueError, match="must be '<module>.<name>'"):
        register("nowhere.x", config=Cfg, presets={"check": Cfg(), "paper": Cfg()}, measure=measure)
    with pytest.raises(ValueError, match="no experiment named 'scaling.nope'; known:"):
        experiment("scaling.nope")
