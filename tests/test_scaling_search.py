"""The worst-case searches of the ``scaling`` bounds (theory.experiments.scaling._search): exact pieces against
independent values, determinism and budget, the Hypothesis search of Proposition 11 recorded as a WorstCase,
the labels of the categorical coordinates in the worst instance. Their negative controls are in
``tests/test_controls_scaling_search.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments.scaling import _search as srch


def test_prop11_constant_records_its_hypothesis_search_as_a_worst_case():
    exp = experiment("scaling.prop11_constant")
    result = exp.run("check", examples=15)
    wc = result.search
    tracked = result.tracker.result()
    assert wc.ratio == tracked.ratio and wc.instance == tracked.worst and wc.evaluations == result.lhs.size
    assert wc.lhs / wc.rhs == pytest.approx(wc.ratio, rel=1e-12)
    assert np.all(np.diff(wc.trace) >= 0) and wc.trace[-1] == wc.ratio
    assert {d.name for d in wc.dims} == {"d", "scale", "L", "seed", "log10_h0_norm"}
    verdict = exp.verdict(result)
    assert verdict.passed and verdict.measured["search"]["constant"]["smallest"] == pytest.approx(0.5 * wc.ratio)


def test_searches_are_deterministic_and_stay_within_their_budget():
    a, b = srch.search("lemma-16", 30, 3), srch.search("lemma-16", 30, 3)
    assert a.ratio == b.ratio and a.instance == b.instance and a.evaluations <= 30
    assert srch.search("lemma-16", 30, 4).instance != a.instance
    with pytest.raises(ValueError, match="`claim`"):
        srch.search("lemma-99", 10, 0)


def test_the_exact_lemma21_moments_are_attained_in_the_limit():
    """At x = e_1 Rademacher entries give ||Vx|| = 1 exactly; Gaussian moments are the chi-square ones."""
    x = np.zeros(5)
    x[0] = 1.0
    assert srch.exact_quadratic_moments("rademacher", x) == pytest.approx((1.0, 1.0), abs=1e-14)
    d = 7
    q2, q4 = srch.exact_quadratic_moments("gaussian", np.arange(1.0, d + 1))
    assert q2 == pytest.approx(1 + 2 / d, rel=1e-14)
    assert q4 == pytest.approx((d + 2) * (d + 4) * (d + 6) / d**3, rel=1e-14)
    lhs, rhs = srch.lemma21_ratio({"law": "gaussian", "d": 10**5, "x": "flat", "seed": 0})
    assert 0.998 < lhs / rhs < 1.0


def test_the_lemma19_closed_forms_have_no_cancellation():
    """ln E e^{lam X} at tiny and huge lambda against its series and asymptotics: the ratio of Lemma 19 for the
    uniform and Rademacher laws tends to 1 from below as lambda -> 0 and must never cross it by round-off."""
    for lam in (1e-8, 1e-4, 1e-2):
        assert srch.log_mgf("rademacher", lam) == pytest.approx(lam**2 / 2 - lam**4 / 12, rel=1e-10)
        assert srch.log_mgf("uniform", lam) == pytest.approx(lam**2 / 2 - lam**4 / 20, rel=1e-10)
    assert srch.log_mgf("rademacher", 800.0) == pytest.approx(800.0 - math.log(2.0), rel=1e-15)
    for law in srch.LAWS:
        for lam in np.geomspace(1e-6, 1e3, 50):
            lhs, rhs = srch.lemma19_ratio({"law": law, "lambda": float(lam), "s": 1.0})
            assert lhs <= rhs


def test_the_worst_instance_carries_the_labels_of_the_categorical_coordinates():
    wc = srch.search("prop-5", 12, 0)
    inst = wc.instance
    assert inst["arch"] in srch.ARCHS and inst["law"] in srch.LAWS and inst["h"] in srch.A4_H
    assert inst["q"] in srch.A4_Q and isinstance(inst["seed"], int)
    box = wc.to_measured()["box"]
    assert box["arch"] == list(srch.ARCHS) and box["q"] == list(srch.A4_Q) and box["seed"] == [0, 2**20, "int"]


def test_the_box_directions_are_validated():
    with pytest.raises(ValueError, match="`kind`"):
        srch.direction("diagonal", 3, 0)
    assert srch.direction("-flat", 4, 0) == pytest.approx(-np.ones(4) / 2)
