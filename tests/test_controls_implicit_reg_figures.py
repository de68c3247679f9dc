"""Negative controls of the figure and table claims of ``implicit-reg`` added with the figure declarations
(:mod:`theory.experiments.implicit_reg.figures`): each reruns the measurement with the figure's defining
ingredient broken and asserts that the verdict (or the part of it that the ingredient decides) fails.

The claims of Figures 1-4 and of Table 1 on synthetic data have their controls in
tests/test_controls_implicit_reg_experiments.py and tests/test_controls_implicit_reg_new.py."""

from __future__ import annotations

import dataclasses

import pytest

from theory.experiments import experiment
from theory.experiments.implicit_reg import table1_digits as T
from _data import needs_digits

pytestmark = needs_digits

_SMALL = dict(depths=(8, 16), seeds=(0, 1), n_train=200, m=16, lr=0.1, steps=100)
_PART_SMOOTH = "1 smooth: identity/tied, gelu/tied"
_PART_FIG4 = "3 fig-4 iid/tied >= 10"


def test_table1_digits_control_iid_in_place_of_tied_fails(monkeypatch):
    """Every row drawn i.i.d. (the weight-tied initialisation replaced): the smooth rows are lost and Figure 4's
    ratio i.i.d./tied falls to about 1, so parts 1 and 3 fail and with them the verdict."""
    real = T.initialize

    def iid_only(*args, **kw):
        kw["kind"] = "iid"
        return real(*args, **kw)

    monkeypatch.setattr(T, "initialize", iid_only)
    cfg = dataclasses.replace(T.PRESETS["table1_digits"]["check"], **_SMALL)
    verdict = T.table1_digits_verdict(T.measure_table1_digits(cfg))
    parts = verdict.measured["parts"]
    assert verdict.status == "fail" and not parts[_PART_SMOOTH] and not parts[_PART_FIG4]


def test_table1_digits_control_the_same_sizes_unbroken_pass_parts_1_to_3():
    """The same small run with the tied initialisation intact: parts 1-3 hold (the control above fails because of
    the broken ingredient, not because of the sizes)."""
    cfg = dataclasses.replace(T.PRESETS["table1_digits"]["check"], **_SMALL)
    parts = T.table1_digits_verdict(T.measure_table1_digits(cfg)).measured["parts"]
    assert parts[_PART_SMOOTH] and parts["2 not smooth: */iid, relu/tied"] and parts[_PART_FIG4]


def test_table1_digits_claim_is_registered_with_its_verdict():
    exp = experiment("implicit_reg.table1_digits")
    assert "implicit-reg/table-1/digits" in exp.claims
    assert exp.verdict_for("implicit-reg/table-1/digits") is T.table1_digits_verdict


def test_fig2_drawing_without_kept_states_recomputes_them(tmp_path):
    """A Fig. 2 result cached before the states were kept is drawn from the (memoised) rerun of its first seed."""
    from theory.experiments.implicit_reg import section5 as E
    from theory.experiments.implicit_reg.figures import fig2_figure

    cfg = dataclasses.replace(E.PRESETS["fig2"]["check"], record=(10, 20), seeds=(0,))
    result = dataclasses.replace(E.measure_fig2(cfg), states=None)
    from theory.plots import figure_directory

    with figure_directory(tmp_path):
        path = fig2_figure(result)
    assert path.endswith("implicit-reg__fig-2.png")
