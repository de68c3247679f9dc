"""The declared config fields (theory.experiments.config): the vocabulary, and one generic test of every field of
every registered experiment with an invalid and a boundary value of its declaration."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from theory.experiments import (
    Bool,
    Choice,
    Choices,
    Config,
    Custom,
    Int,
    Ints,
    OrNone,
    Real,
    Reals,
    Seed,
    experiment,
    experiments,
    field,
)
from theory.experiments.config import constraint_of


@dataclasses.dataclass(frozen=True)
class Toy(Config):
    """A toy config."""

    n: int = field(Int(low=2), 10, "Number of tokens.")
    p: float = field(Real(0, 1, closed="neither"), 0.5, "A probability.")
    sizes: tuple = field(Ints(low=1, min_len=3, increasing=True), (1, 2, 4), "Sizes.")
    hursts: tuple = field(Reals(0, 1, closed="neither", min_len=2), (0.2, 0.8), "Hurst indices.")
    act: str = field(Choice("relu", "tanh"), "relu", "Activation.")
    acts: tuple = field(Choices("relu", "tanh", distinct=True), ("relu",), "Activations.")
    limit: int | None = field(OrNone(Int(low=1)), None, "Iterations; None for the limit.")
    flag: bool = field(Bool(), False, "A switch.")
    even: int = field(Custom(lambda v: None if isinstance(v, int) and v % 2 == 0 else (_ for _ in ()).throw(
        ValueError("odd")), "an even integer"), 2, "An even number.")
    seed: int = field(Seed(), 0, "Seed.")

    def check(self):
        if self.n > 100:
            raise self.invalid("n", "be at most 100")


def test_docstring_is_generated_from_the_declarations():
    doc = Toy.__doc__
    assert doc.startswith("A toy config.\n\nAttributes\n----------\n")
    assert "n : int\n    Number of tokens. Must be an integer >= 2; default 10." in doc
    assert "p : float\n    A probability. Must be a finite number in (0, 1); default 0.5." in doc
    assert "limit : int or None\n    Iterations; None for the limit. Must be None or an integer >= 1" in doc


@pytest.mark.parametrize("kwargs, exc, text", [
    ({"n": 1}, ValueError, "`n` of Toy must be an integer >= 2; got 1."),
    ({"n": True}, TypeError, "`n` of Toy must be an integer >= 2; got True."),
    ({"n": 2.0}, TypeError, "`n` of Toy"),
    ({"p": 1.0}, ValueError, "`p` of Toy must be a finite number in (0, 1); got 1.0."),
    ({"p": math.nan}, ValueError, "`p` of Toy"),
    ({"p": "0.5"}, TypeError, "`p` of Toy"),
    ({"sizes": (3, 2, 1)}, ValueError, "strictly increasing"),
    ({"sizes": (1, 2)}, ValueError, "at least 3"),
    ({"sizes": (1, 2, "a")}, TypeError, "`sizes` of Toy"),
    ({"sizes": 5}, TypeError, "`sizes` of Toy"),
    ({"act": "gelu"}, ValueError, "one of ('relu', 'tanh')"),
    ({"acts": ("relu", "relu")}, ValueError, "distinct"),
    ({"limit": 0}, ValueError, "None or an integer >= 1"),
    ({"flag": 1}, TypeError, "True or False"),
    ({"even": 3}, ValueError, "an even integer"),
    ({"seed": -1}, ValueError, "`seed` of Toy"),
    ({"n": 200}, ValueError, "`n` of Toy must be at most 100; got 200."),
])
def test_each_refusal_names_field_and_class(kwargs, exc, text):
    with pytest.raises(exc) as info:
        Toy(**kwargs)
    assert text in str(info.value)
    assert type(info.value) is exc


def test_values_are_normalised():
    t = Toy(n=np.int64(5), p=np.float64(0.25), sizes=[1, 2, 3], hursts=np.array([0.1, 0.3]), flag=np.bool_(True))
    assert (type(t.n), type(t.p), t.sizes, t.hursts, type(t.flag)) == (int, float, (1, 2, 3), (0.1, 0.3), bool)
    assert Toy(p=np.float32(0.5)) == Toy(p=0.5) and hash(Toy(sizes=[1, 2, 4])) == hash(Toy())
    assert type(Toy(hursts=(1 / 4, 1 / 2)).hursts[0]) is float


@pytest.mark.parametrize("name, text, value", [
    ("n", "1e3", 1000), ("n", "12", 12), ("p", "0.25", 0.25), ("sizes", "1:9:5", (1, 3, 5, 7, 9)),
    ("sizes", "2|4|8", (2, 4, 8)), ("hursts", "0.1|0.9", (0.1, 0.9)), ("limit", "none", None), ("limit", "7", 7),
    ("act", "tanh", "tanh"), ("flag", "true", True), ("acts", "relu|tanh", ("relu", "tanh")),
])
def test_text_is_parsed_by_the_declaration(name, text, value):
    assert Toy.parse(name, text) == value


@pytest.mark.parametrize("name, text", [("n", "1.5"), ("n", "x"), ("n", "1"), ("p", "1"), ("sizes", "3|2|1"),
                                        ("flag", "yes"), ("act", "gelu")])
def test_bad_text_is_refused_naming_the_field(name, text):
    with pytest.raises((TypeError, ValueError), match=f"`{name}`"):
        Toy.parse(name, text)


def test_seeds_are_not_counts():
    assert not Seed().counts and Int().counts and Ints().counts and not Real().counts
    assert OrNone(Int(low=1)).counts and not OrNone(Seed()).counts


def _declared_fields():
    out = []
    for name in experiments():
        exp = experiment(name)
        for fname in exp.fields:
            c = constraint_of(exp.config, fname)
            if c is not None:
                out.append((name, fname))
    return out


def test_every_registered_config_declares_every_field():
    """Every registered experiment's config derives from Config and declares each field (the registry refuses
    any other), and no config types its own validation any more."""
    missing = []
    for name in experiments():
        exp = experiment(name)
        assert issubclass(exp.config, Config), name
        missing += [f"{name}: {f}" for f in exp.fields if constraint_of(exp.config, f) is None]
        assert "__post_init__" not in vars(exp.config) or exp.config.__post_init__ is Config.__post_init__, name
    assert not missing, missing


def test_registering_an_undeclared_config_is_refused():
    from theory.experiments import register

    @dataclasses.dataclass(frozen=True)
    class Plain:
        n: int = 1

    @dataclasses.dataclass(frozen=True)
    class Half(Config):
        """Half declared."""

        n: int = field(Int(), 1, "A count.")
        m: int = 2

    for cfg in (Plain, Half):
        with pytest.raises(TypeError, match="declare|deriving from"):
            register("topk.undeclared", config=cfg, presets={"check": cfg(), "paper": cfg()}, measure=lambda c: 0)


@pytest.mark.parametrize("name, fname", _declared_fields())
def test_every_declared_field_refuses_invalid_and_takes_boundary_values(name, fname):
    exp = experiment(name)
    c = constraint_of(exp.config, fname)
    owner = exp.config.__name__
    for value, exc in c.invalid():
        with pytest.raises(exc) as info:
            exp.config_for("check", **{fname: value})
        assert f"`{fname}` of {owner}" in str(info.value), str(info.value)
    for value in c.boundary():
        try:
            exp.config_for("check", **{fname: value})
        except ValueError as exc:  # only a rule between fields may refuse a value of the field's own domain
            assert getattr(exc, "between_fields", False) or "largest count" in str(exc), (value, str(exc))
