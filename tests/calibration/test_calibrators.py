"""Calibrators: fit quality on synthetic miscalibrated scores, JSON round trips, validation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.special import expit, logit
from sklearn.isotonic import IsotonicRegression

from confidence import persistence
from confidence.calibration import (
    CALIBRATORS,
    IsotonicCalibrator,
    LassoRecalibrator,
    PlattCalibrator,
    ece,
    make_calibrator,
)
from confidence.errors import ModelError


def _miscalibrated(n, seed, a=2.0, b=-0.5):
    """Scores whose true P(correct) is expit(a * logit(s) + b): over-confident near 1."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < expit(a * logit(s) + b)).astype(int)
    return s, y


def _oriented(n: int, increasing: bool):
    """:func:`_miscalibrated` scores, reversed when higher must mean less likely correct."""
    s, y = _miscalibrated(n, 0)
    return (s if increasing else 1.0 - s), y


def _roundtrip(cal):
    d = json.loads(json.dumps(persistence.to_dict(cal), allow_nan=False))
    return persistence.from_dict(d)


def test_isotonic_matches_sklearn_and_is_monotone():
    s, y = _miscalibrated(500, 0)
    cal = IsotonicCalibrator(tie_break=0.0, interpolation="steps").fit(s, y)
    grid = np.linspace(-0.5, 1.5, 301)  # includes out-of-range scores: clipped
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(s, y).predict(grid)
    p = cal.predict(grid)
    np.testing.assert_allclose(p, ref)
    assert np.all(np.diff(p) >= 0) and p.min() >= 0 and p.max() <= 1
    np.testing.assert_array_equal(_roundtrip(cal).predict(grid), p)


def test_isotonic_centres_hand_computed():
    # blocks {0.1, 0.3} -> 0 (centre 0.2), {0.5} -> 0.5 (one right, one wrong at the same
    # score), {0.7, 0.9} -> 1 (centre 0.8)
    s = [0.1, 0.3, 0.5, 0.5, 0.7, 0.9]
    y = [0, 0, 1, 0, 1, 1]
    cal = IsotonicCalibrator(tie_break=0.0).fit(s, y)
    assert cal.X_thresholds_.tolist() == pytest.approx([0.2, 0.5, 0.8])
    assert cal.y_thresholds_.tolist() == pytest.approx([0.0, 0.5, 1.0])
    p = cal.predict([0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 1.0])
    np.testing.assert_allclose(p, [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0])
    one = IsotonicCalibrator(tie_break=0.0).fit([0.2, 0.4], [1, 1])  # a single block
    np.testing.assert_allclose(one.predict([0.0, 0.3, 1.0]), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("increasing", [True, False])
def test_isotonic_centres_resolve_inside_a_step_and_stay_calibrated(increasing):
    s, y = _oriented(2000, increasing)
    steps = IsotonicCalibrator(increasing=increasing, tie_break=0.0, interpolation="steps")
    cent = IsotonicCalibrator(increasing=increasing, tie_break=0.0)
    steps.fit(s[:1000], y[:1000])
    cent.fit(s[:1000], y[:1000])
    lo, hi = cent.X_thresholds_[0], cent.X_thresholds_[-1]
    inner = np.linspace(lo, hi, 400)
    p = cent.predict(inner)
    d = np.diff(p) if increasing else -np.diff(p)
    assert np.all(d > 0)  # strictly monotone between the first and the last centre
    assert len(np.unique(cent.predict(s))) > 3 * len(np.unique(steps.predict(s)))
    # the same isotonic fit, evaluated on fresh samples: no worse calibrated than the steps
    brier_c = np.mean((cent.predict(s[1000:]) - y[1000:]) ** 2)
    brier_s = np.mean((steps.predict(s[1000:]) - y[1000:]) ** 2)
    assert brier_c <= brier_s + 0.005
    np.testing.assert_array_equal(_roundtrip(cent).predict(inner), p)


def test_isotonic_saved_without_interpolation_predicts_its_knots():
    cal = IsotonicCalibrator(interpolation="steps").fit(*_miscalibrated(300, 1))
    d = json.loads(json.dumps(persistence.to_dict(cal)))
    d["data"]["params"].pop("interpolation")  # a calibrator saved before the parameter existed
    d["sha256"] = persistence._sha(persistence._canonical(d["data"]))
    old = persistence.from_dict(d)
    grid = np.linspace(0, 1, 101)
    np.testing.assert_array_equal(old.predict(grid), cal.predict(grid))


@pytest.mark.parametrize("increasing", [True, False])
def test_isotonic_tie_break_keeps_the_score_order_within_eps(increasing):
    s, y = _oriented(500, increasing)
    plain = IsotonicCalibrator(increasing=increasing, tie_break=0.0, interpolation="steps")
    plain.fit(s, y)
    cal = IsotonicCalibrator(increasing=increasing, interpolation="steps").fit(s, y)
    grid = np.linspace(-0.5, 1.5, 301)
    p, q = cal.predict(grid), plain.predict(grid)
    assert len(np.unique(q)) < 100  # steps: ties
    d = np.diff(p) if increasing else -np.diff(p)
    assert np.all(d > 0)  # strictly monotone: the ranking of the scores survives
    assert np.max(np.abs(p - q)) <= 1e-6 and p.min() >= 0 and p.max() <= 1
    np.testing.assert_array_equal(_roundtrip(cal).predict(grid), p)
    with pytest.raises(ValueError, match="tie_break"):
        IsotonicCalibrator(tie_break=0.5).fit(s, y)


def test_platt_recovers_known_sigmoid():
    s, y = _miscalibrated(20000, 1, a=2.0, b=-0.5)
    cal = PlattCalibrator().fit(s, y)
    assert cal.coef_ == pytest.approx(2.0, abs=0.1)
    assert cal.intercept_ == pytest.approx(-0.5, abs=0.1)
    back = _roundtrip(cal)
    np.testing.assert_array_equal(back.predict_proba(s[:50]), cal.predict_proba(s[:50]))


def test_platt_raw_margins_and_input_validation():
    rng = np.random.default_rng(2)
    z = rng.normal(0, 3, 2000)
    y = (rng.uniform(size=z.size) < expit(0.5 * z + 1)).astype(int)
    cal = PlattCalibrator(input="raw").fit(z, y)
    assert cal.coef_ == pytest.approx(0.5, abs=0.1)
    with pytest.raises(ValueError, match='input="raw"'):
        PlattCalibrator().fit(z, y)


@pytest.mark.parametrize("name", ["isotonic", "platt"])
def test_calibration_reduces_ece_on_held_out_data(name):
    s, y = _miscalibrated(4000, 3)
    s_test, y_test = _miscalibrated(4000, 4)
    cal = make_calibrator(name).fit(s, y)
    before, after = ece(y_test, s_test), ece(y_test, cal.predict_proba(s_test)[:, 1])
    assert after < 0.5 * before, (before, after)


def test_lasso_keeps_useful_signal_and_drops_noise():
    rng = np.random.default_rng(5)
    n = 1500
    s = rng.uniform(0.05, 0.95, n)
    agree = rng.integers(0, 2, n).astype(float)
    noise = rng.normal(size=n)
    y = (rng.uniform(size=n) < expit(logit(s) + 2.0 * agree - 1.0)).astype(int)
    groups = np.repeat(np.arange(n // 5), 5)
    cal = LassoRecalibrator().fit(s, y, signals={"agree": agree, "noise": noise}, groups=groups)
    assert cal.feature_names_ == ["logit_score", "agree", "noise"]
    assert cal.C_ in cal.Cs
    coef = dict(zip(cal.feature_names_, cal.coef_, strict=True))
    assert coef["agree"] > 0.3 and coef["logit_score"] > 0.3
    assert abs(coef["noise"]) < 0.1
    sig = {"agree": agree[:20], "noise": noise[:20]}
    back = _roundtrip(cal)
    np.testing.assert_allclose(
        back.predict_proba(s[:20], signals=sig), cal.predict_proba(s[:20], signals=sig)
    )
    with pytest.raises(ValueError, match="missing"):
        cal.predict_proba(s[:20], signals={"agree": agree[:20]})
    with pytest.raises(ValueError, match="needs signals"):
        cal.predict_proba(s[:20])


def test_lasso_score_penalty_and_one_se_rule():
    rng = np.random.default_rng(8)
    n = 600
    s = rng.uniform(0.05, 0.95, n)
    sig = {"weak": rng.normal(size=n)}
    y = (rng.uniform(size=n) < expit(logit(s) + 0.2 * sig["weak"])).astype(int)
    groups = np.repeat(np.arange(n // 4), 4)

    def score_coef(cal):  # coefficient of logit(score) in standardised units
        return cal.coef_[0] / cal.score_penalty  # its column was divided by score_penalty

    strong = dict(C=0.01, signals=sig, groups=groups)
    plain = LassoRecalibrator(C=0.01).fit(s, y, signals=sig, groups=groups)
    light = LassoRecalibrator(C=0.01, score_penalty=0.1).fit(s, y, signals=sig, groups=groups)
    # under a strong penalty a smaller penalty factor shrinks the score's weight less
    assert score_coef(light) > score_coef(plain) >= 0
    assert strong["C"] == plain.C_
    back = _roundtrip(light)
    np.testing.assert_allclose(
        back.predict_proba(s[:9], signals={"weak": sig["weak"][:9]}),
        light.predict_proba(s[:9], signals={"weak": sig["weak"][:9]}),
    )
    one_se = LassoRecalibrator(selection="1se").fit(s, y, signals=sig, groups=groups)
    best = LassoRecalibrator(selection="min").fit(s, y, signals=sig, groups=groups)
    assert one_se.C_ <= best.C_  # never a weaker penalty than the best-mean choice
    with pytest.raises(ValueError, match="score_penalty"):
        LassoRecalibrator(score_penalty=0).fit(s, y, signals=sig)
    with pytest.raises(ValueError, match="selection"):
        LassoRecalibrator(selection="max").fit(s, y, signals=sig)


def test_lasso_array_signals_and_small_sample_default_c():
    rng = np.random.default_rng(6)
    s = rng.uniform(0.1, 0.9, 12)
    y = np.array([0, 1, 1] * 4)  # 4 wrong: fewer than the 5 folds
    cal = LassoRecalibrator().fit(s, y, signals=rng.normal(size=(12, 2)))
    assert cal.C_ == 1.0  # too few per class for 5-fold CV: documented default
    assert cal.feature_names_ == ["logit_score", "signal_0", "signal_1"]
    with pytest.raises(ValueError, match="'C' parameter"):
        LassoRecalibrator(C=-1).fit(s, y)


@pytest.mark.parametrize("cls", [PlattCalibrator, LassoRecalibrator])
def test_one_class_is_a_clear_error(cls):
    with pytest.raises(ValueError, match="both correct and wrong"):
        cls().fit([0.2, 0.8], [1, 1])


def test_input_validation():
    with pytest.raises(ValueError, match="one label per score"):
        IsotonicCalibrator().fit([0.1, 0.2], [1])
    with pytest.raises(ValueError, match="0 samples"):
        IsotonicCalibrator().fit([], [])
    with pytest.raises(ValueError, match="NaN"):
        IsotonicCalibrator().fit([0.1, np.nan], [0, 1])
    with pytest.raises(ValueError, match="0/1"):
        IsotonicCalibrator().fit([0.1, 0.2], [0, 3])


def test_make_calibrator_choice_map():
    assert set(CALIBRATORS) == {"isotonic", "platt", "lasso"}
    assert isinstance(make_calibrator("lasso", C=0.5), LassoRecalibrator)
    own = IsotonicCalibrator()
    assert make_calibrator(own) is own
    with pytest.raises(ValueError, match="isotonic, lasso, platt"):
        make_calibrator("beta")
    with pytest.raises(TypeError, match="fit and predict_proba"):
        make_calibrator(3)
    with pytest.raises(ModelError, match="unknown part kind 'beta'"):
        persistence.from_dict({"kind": "beta", "format_version": 2, "data": {}})


@pytest.mark.parametrize("name", ["isotonic", "platt", "lasso"])
def test_predict_proba_has_two_columns_like_a_classifier(name):
    s, y = _miscalibrated(300, 9)
    cal = make_calibrator(name).fit(s, y)
    P = cal.predict_proba(s[:7])
    assert P.shape == (7, 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(P[:, 1], cal.predict(s[:7]))


@pytest.mark.parametrize(
    "cal, match",
    [
        (IsotonicCalibrator(increasing="yes"), "'increasing' parameter"),
        (PlattCalibrator(input="probit"), "'input' parameter"),
        (LassoRecalibrator(n_splits=1), "'n_splits' parameter"),
    ],
)
def test_parameters_are_validated_in_one_place(cal, match):
    s, y = _miscalibrated(50, 10)
    with pytest.raises(ValueError, match=match):
        cal.fit(s, y)


@pytest.mark.parametrize(
    "make",
    [lambda: IsotonicCalibrator(), lambda: PlattCalibrator(), lambda: LassoRecalibrator(C=1.0)],
    ids=["isotonic", "platt", "lasso"],
)
def test_integer_sample_weight_equals_repeated_rows(make):
    """Inverse-probability weights (feedback): weight 3 on a row = the row three times."""
    rng = np.random.default_rng(0)
    s = rng.uniform(0.05, 0.95, 60)
    y = (rng.uniform(size=60) < s).astype(int)
    w = rng.integers(1, 4, 60)
    grid = np.linspace(0.05, 0.95, 7)
    weighted = make().fit(s, y, sample_weight=w).predict(grid)
    repeated = make().fit(np.repeat(s, w), np.repeat(y, w)).predict(grid)
    assert np.allclose(weighted, repeated, atol=2e-3)
    with pytest.raises(ValueError, match="sample_weight"):
        make().fit(s, y, sample_weight=w[:5])
