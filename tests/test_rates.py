"""Tests of theory.rates: rate fits, bound ratios, frequencies, identity errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from theory.rates import (
    BoundResult,
    BoundTracker,
    FrequencyResult,
    IdentityResult,
    RateFit,
    bound_ratio,
    fit_rate,
    frequency,
    identity_error,
    to_plain,
)

GRID = 2 ** np.arange(3, 11)  # 8 .. 1024, the usual depth ladder


# --------------------------------------------------------------------------- fit_rate


def test_exact_power_law_slope_and_collapsed_ci():
    fit = fit_rate(GRID, 3.0 * GRID**-2.0)
    assert fit.slope == pytest.approx(-2.0, abs=1e-12)
    assert fit.intercept == pytest.approx(math.log(3.0), abs=1e-11)
    assert fit.ci[1] - fit.ci[0] < 1e-10
    assert fit.ci[0] <= fit.slope + 1e-12 and fit.slope - 1e-12 <= fit.ci[1]
    assert fit.r2 == pytest.approx(1.0, abs=1e-12)
    assert fit.dropped == ()


@settings(derandomize=True, database=None, deadline=None, max_examples=40)
@given(
    slope=st.floats(-4.0, 2.0),
    constant=st.floats(1e-3, 1e3),
    sizes=st.integers(3, 10),
    ratio=st.sampled_from([1.5, 2.0, 4.0]),
)
def test_exact_power_laws_recovered(slope, constant, sizes, ratio):
    grid = 4.0 * ratio ** np.arange(sizes)
    fit = fit_rate(grid, constant * grid**slope, n_boot=200)
    assert fit.slope == pytest.approx(slope, abs=1e-9)
    assert fit.ci[1] - fit.ci[0] < 1e-8


def test_noisy_single_seed_ci_contains_truth():
    rng = np.random.default_rng(12345)
    errors = 2.0 * GRID**-1.0 * np.exp(0.05 * rng.standard_normal(GRID.size))
    fit = fit_rate(GRID, errors, seed=7)
    assert fit.ci[0] < -1.0 < fit.ci[1]
    assert abs(fit.slope + 1.0) < 0.05
    assert 0.99 < fit.r2 < 1.0


def test_noisy_several_seeds_ci_contains_truth_and_uses_all_points():
    rng = np.random.default_rng(2024)
    errors = GRID**-0.5 * np.exp(0.2 * rng.standard_normal((30, GRID.size)))
    fit = fit_rate(GRID, errors)
    assert fit.ci[0] < -0.5 < fit.ci[1]
    assert fit.kept.shape == errors.shape and fit.kept.all()
    assert fit.to_measured()["errors"] == pytest.approx(errors.mean(axis=0).tolist())


def test_bootstrap_is_deterministic_and_seeded():
    rng = np.random.default_rng(3)
    errors = GRID**-1.0 * np.exp(0.1 * rng.standard_normal((5, GRID.size)))
    assert fit_rate(GRID, errors, seed=1).ci == fit_rate(GRID, errors, seed=1).ci
    assert fit_rate(GRID, errors, seed=1).ci != fit_rate(GRID, errors, seed=2).ci


def test_wider_level_gives_wider_interval():
    rng = np.random.default_rng(5)
    errors = GRID**-1.0 * np.exp(0.1 * rng.standard_normal(GRID.size))
    narrow, wide = fit_rate(GRID, errors, level=0.5), fit_rate(GRID, errors, level=0.99)
    assert wide.ci[0] <= narrow.ci[0] and narrow.ci[1] <= wide.ci[1]


def test_points_at_floor_and_nonfinite_are_dropped_and_listed():
    errors = GRID**-2.0
    errors[-2:] = [1e-17, 0.0]  # at the float64 floor
    errors[0] = np.nan
    fit = fit_rate(GRID, errors, floor=1e-15)
    assert fit.slope == pytest.approx(-2.0, abs=1e-12)
    assert fit.dropped == (8.0, 512.0, 1024.0)
    assert fit.to_measured()["dropped"] == [8, 512, 1024]
    assert fit.to_measured()["errors"][0] is None


def test_partly_dropped_grid_size_is_listed_but_kept():
    errors = np.vstack([GRID**-1.0, 1.05 * GRID**-1.0])
    errors[1, -1] = 0.0
    fit = fit_rate(GRID, errors)
    assert fit.dropped == (1024.0,)
    assert fit.kept[0, -1] and not fit.kept[1, -1]
    assert fit.slope == pytest.approx(-1.0, abs=0.01)


def test_too_few_kept_points_raise():
    errors = np.array([1e-3, 1e-4, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="3 or more grid sizes; 2 kept"):
        fit_rate([8, 16, 32, 64, 128], errors)
    with pytest.raises(ValueError, match="2 kept"):
        fit_rate([8, 16], [0.1, 0.01])


def test_to_measured_is_plain_json():
    import json

    measured = fit_rate(GRID, GRID**-1.0).to_measured()
    assert list(measured) == ["slope", "ci", "r2", "grid", "errors", "dropped"]
    json.dumps(measured, allow_nan=False)
    assert all(type(v) is int for v in measured["grid"])
    assert fit_rate([0.5, 0.25, 0.125], [1.0, 0.5, 0.25]).to_measured()["grid"] == [0.5, 0.25, 0.125]


def test_hand_built_fit_measured_nan_is_none():
    fit = RateFit(math.nan, 0.0, (math.nan, math.inf), math.nan, [1, 2, 4], [1.0, 0.5, 0.25], ())
    measured = fit.to_measured()
    assert measured["slope"] is None and measured["ci"] == [None, None] and measured["r2"] is None


@pytest.mark.parametrize(
    "grid, errors, kwargs, message",
    [
        ([8, 16, -32], [1, 1, 1], {}, r"`grid` of theory.rates.fit_rate must be positive"),
        ([8, 16, np.inf], [1, 1, 1], {}, r"`grid` .* must be positive and finite"),
        ([8, 16, 16], [1, 1, 1], {}, r"`grid` .* distinct"),
        ([[8, 16, 32]], [1, 1, 1], {}, r"`grid` .* one-dimensional"),
        (["a", "b", "c"], [1, 1, 1], {}, r"`grid` .* real numbers"),
        ([8, 16, 32], [1, 1], {}, r"`errors` .* shape \(3,\) or \(n_seeds, 3\)"),
        ([8, 16, 32], np.ones((2, 2, 3)), {}, r"`errors` .* shape"),
        ([8, 16, 32], [1, -1, 1], {}, r"`errors` .* non-negative"),
        ([8, 16, 32], [1, 0.5, 0.2], {"floor": -1.0}, r"`floor` .* non-negative"),
        ([8, 16, 32], [1, 0.5, 0.2], {"floor": np.nan}, r"`floor`"),
        ([8, 16, 32], [1, 0.5, 0.2], {"n_boot": 0}, r"`n_boot` .* positive integer"),
        ([8, 16, 32], [1, 0.5, 0.2], {"n_boot": 2.5}, r"`n_boot`"),
        ([8, 16, 32], [1, 0.5, 0.2], {"level": 1.0}, r"`level` .* \(0, 1\)"),
        ([8, 16, 32], [1, 0.5, 0.2], {"seed": -1}, r"`seed` .* non-negative integer"),
    ],
)
def test_fit_rate_validation(grid, errors, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_rate(grid, errors, **kwargs)


def test_fit_rate_does_not_mutate_inputs():
    grid, errors = GRID.copy(), GRID**-1.0
    errors_copy = errors.copy()
    fit = fit_rate(grid, errors)
    assert np.array_equal(errors, errors_copy) and np.array_equal(grid, GRID)
    assert not fit.errors.flags.writeable


# --------------------------------------------------------------------------- bounds


def test_bound_ratio_max_and_worst_instance():
    lhs, rhs = np.array([0.1, 0.9, 0.5]), np.array([1.0, 1.0, 0.6])
    result = bound_ratio(lhs, rhs, instances=[{"N": 1}, {"N": 2}, {"N": 3}])
    assert result.ratio == pytest.approx(0.9)
    assert result.n_instances == 3
    assert result.worst == {"N": 2}
    assert result.to_measured() == {"ratio": pytest.approx(0.9), "n_instances": 3, "worst": {"N": 2}}
    assert bound_ratio(lhs, rhs).worst == 1


def test_bound_ratio_nan_lhs_is_reported_not_hidden():
    result = bound_ratio([0.1, np.nan, 5.0], [1.0, 1.0, 1.0])
    assert math.isnan(result.ratio) and result.worst == 1
    assert result.to_measured()["ratio"] is None


@pytest.mark.parametrize(
    "lhs, rhs, instances, message",
    [
        ([1.0], [0.0], None, r"`rhs` of theory.rates.bound_ratio must be positive"),
        ([1.0], [np.inf], None, r"`rhs` .* positive and finite"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], None, r"same shape"),
        ([], [], None, r"at least one instance"),
        ([1.0, 2.0], [1.0, 1.0], ["a"], r"`instances` .* one entry per instance \(2\)"),
        (["x"], [1.0], None, r"`lhs` .* real numbers"),
    ],
)
def test_bound_ratio_validation(lhs, rhs, instances, message):
    with pytest.raises(ValueError, match=message):
        bound_ratio(lhs, rhs, instances)


def test_bound_tracker_keeps_running_max_and_instance():
    tracker = BoundTracker()
    assert tracker.add(1.0, 4.0, {"seed": 0}) == 0.25
    assert tracker.add(3.0, 4.0, {"seed": 1}) == 0.75
    assert tracker.add(2.0, 4.0, {"seed": 2}) == 0.5
    tracker.add([0.1, 0.2], [1.0, 1.0])  # an array of instances without a description
    result = tracker.result()
    assert isinstance(result, BoundResult)
    assert (result.ratio, result.n_instances, result.worst) == (0.75, 5, {"seed": 1})
    assert result.lhs.tolist() == [1.0, 3.0, 2.0, 0.1, 0.2]
    tracker.add([0.1, 0.95], [1.0, 1.0])
    assert tracker.result().worst == 6  # running index of the instance


def test_bound_tracker_nan_wins_and_empty_raises():
    tracker = BoundTracker()
    with pytest.raises(ValueError, match="no instance"):
        tracker.result()
    tracker.add(np.nan, 1.0, "bad")
    tracker.add(5.0, 1.0, "big")
    assert math.isnan(tracker.result().ratio) and tracker.result().worst == "bad"


# --------------------------------------------------------------------------- frequency


def test_frequency_clopper_pearson_known_values():
    # 0 of 100 at 95 %: upper end 1 - 0.025**(1/100) = 0.036217 (closed form for k = 0).
    r = frequency(np.zeros(100, dtype=bool), delta=0.05)
    assert (r.freq, r.runs, r.violations, r.delta) == (0.0, 100, 0, 0.05)
    assert r.ci[0] == 0.0
    assert r.ci[1] == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-12)
    assert r.ci[1] == pytest.approx(0.0362, abs=1e-4)
    # 100 of 100: lower end 0.025**(1/100) by symmetry.
    r = frequency(np.ones(100, dtype=bool))
    assert r.ci == (pytest.approx(0.025 ** (1 / 100), rel=1e-12), 1.0)


def test_frequency_matches_scipy_binomtest():
    violations = np.zeros(250, dtype=bool)
    violations[:17] = True
    r = frequency(violations, level=0.9)
    ci = stats.binomtest(17, 250).proportion_ci(confidence_level=0.9, method="exact")
    assert r.freq == pytest.approx(17 / 250)
    assert r.ci == (pytest.approx(ci.low, rel=1e-10), pytest.approx(ci.high, rel=1e-10))
    assert r.to_measured() == {"freq": 0.068, "runs": 250, "violations": 17, "ci": list(r.ci)}
    assert isinstance(r, FrequencyResult)


def test_frequency_accepts_zero_one_integers_and_any_shape():
    assert frequency(np.array([[0, 1], [1, 1]])).violations == 3


@pytest.mark.parametrize(
    "violations, kwargs, message",
    [
        ([], {}, r"`violations` of theory.rates.frequency must hold at least one run"),
        ([0, 2], {}, r"`violations` .* booleans"),
        (["x"], {}, r"`violations` .* booleans"),
        ([True], {"delta": 1.5}, r"`delta` .* \[0, 1\]"),
        ([True], {"level": 0.0}, r"`level`"),
    ],
)
def test_frequency_validation(violations, kwargs, message):
    with pytest.raises(ValueError, match=message):
        frequency(violations, **kwargs)


# --------------------------------------------------------------------------- identities


def test_identity_error_abs_rel_and_zero_reference():
    r = identity_error([1.0, 0.0, -2.0], [1.0, 0.0, -2.5])
    assert (r.max_abs_err, r.max_rel_err, r.n_instances) == (0.5, 0.2, 3)
    # relative errors only where the reference is nonzero; a zero reference's error is absolute
    zero = identity_error([1e-20], [0.0])
    assert math.isnan(zero.max_rel_err) and math.isnan(zero.norm_rel_err) and zero.zero_ref_abs_err == 1e-20
    mixed = identity_error([1.0, 3e-15], [1.0 + 2e-16, 0.0])
    assert mixed.max_rel_err == pytest.approx(2e-16, rel=0.2) and mixed.zero_ref_abs_err == 3e-15
    assert identity_error([1.0, 1e-15], [2.0, 0.0]).norm_rel_err == 0.5
    assert identity_error(np.inf, np.inf).max_abs_err == 0.0
    assert math.isnan(identity_error([np.nan, 1.0], [1.0, 1.0]).max_abs_err)
    assert identity_error(np.ones((4, 3, 3)), np.ones((4, 3, 3))).n_instances == 4


def test_identity_merge_and_measured():
    a = IdentityResult(1e-16, 2e-16, 3)
    b = identity_error([2.0], [2.0 + 4e-16])
    merged = a.merge(b)
    assert merged.n_instances == 4 and merged.max_abs_err == pytest.approx(4.44e-16, rel=0.01)
    assert list(merged.to_measured()) == ["max_abs_err", "max_rel_err", "norm_rel_err", "zero_ref_abs_err",
                                          "n_instances"]
    # an undefined relative error (zero reference) does not hide a defined one
    merged = identity_error([1e-20], [0.0]).merge(identity_error([1.5], [1.0]))
    assert merged.max_rel_err == 0.5 and merged.zero_ref_abs_err == 1e-20


@pytest.mark.parametrize(
    "computed, reference, message",
    [
        ([1.0, 2.0], [1.0, 2.0, 3.0], r"same shape"),
        ([], [], r"must not be empty"),
        (["a"], [1.0], r"`computed` of theory.rates.identity_error must hold numbers"),
        ([1.0], [True], r"`reference` .* numbers"),
    ],
)
def test_identity_error_validation(computed, reference, message):
    with pytest.raises(ValueError, match=message):
        identity_error(computed, reference)


def test_to_plain_records_notes():
    notes = []
    plain = to_plain({"a": [np.float64(np.inf), 1], "b": object}, notes, "measured")
    assert plain["a"] == [None, 1] and isinstance(plain["b"], str)
    assert notes[0] == "measured.a[0] was inf; written as null"
    assert "measured.b" in notes[1]
