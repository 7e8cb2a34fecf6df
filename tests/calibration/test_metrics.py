"""Selective-prediction metrics: hand-computed cases, invariances, a naive reference, sklearn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from confidence.calibration import metrics as M


def _naive_curve(y, s):
    """Reference: accept every field with score >= t, for each distinct t from high to low."""
    y, s = np.asarray(y, int), np.where(np.isnan(s), -np.inf, np.asarray(s, float))
    cov, acc = [], []
    for t in sorted(set(s.tolist()), reverse=True):
        acc_mask = s >= t
        cov.append(acc_mask.mean())
        acc.append(y[acc_mask].mean())
    return np.array(cov), np.array(acc)


labels_scores = st.integers(2, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        # few distinct values so that ties are common
        st.lists(
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0]), min_size=n, max_size=n
        ),
    )
)


def test_auroc_hand_computed():
    # pairs (pos, neg): (0.35>0.1) (0.35<0.4) (0.8>0.1) (0.8>0.4) -> 3/4
    assert M.auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    # a tie between a positive and a negative counts one half
    assert M.auroc([0, 1, 1], [0.5, 0.5, 0.9]) == 0.75
    assert math.isnan(M.auroc([1, 1], [0.2, 0.3]))


def test_risk_coverage_hand_computed_with_ties():
    cov, acc = M.risk_coverage_curve([1, 0, 1, 1], [0.9, 0.5, 0.5, 0.2])
    np.testing.assert_allclose(cov, [0.25, 0.75, 1.0])
    np.testing.assert_allclose(acc, [1.0, 2 / 3, 0.75])
    # risk 0, 1/3, 1/4: trapezoids 0.5 * (0 + 1/3) / 2 + 0.25 * (1/3 + 1/4) / 2
    assert M.aurc([1, 0, 1, 1], [0.9, 0.5, 0.5, 0.2]) == pytest.approx(0.15625)


def test_aurc_adds_the_rectangle_before_the_first_point():
    # first tie block (2 of 4) has risk 1/2: rectangle 0.5 * 0.5, then trapezoid 0.5 * 0.5
    assert M.aurc([1, 0, 1, 0], [0.9, 0.9, 0.2, 0.2]) == pytest.approx(0.5)


def test_accuracy_and_coverage_targets():
    y, s = [1, 1, 1, 0, 1], [5, 4, 3, 2, 1]
    assert M.accuracy_at_coverage(y, s, 0.8) == 0.75  # first point reaching 80% is 4 of 5
    assert M.accuracy_at_coverage(y, s, 0.6) == 1.0
    assert M.coverage_at_accuracy(y, s, 0.99) == 0.6
    assert M.coverage_at_accuracy(y, s, 0.8) == 1.0  # 4/5 at full coverage
    assert M.coverage_at_accuracy([0, 1], [0.9, 0.1], 0.99) == 0.0


def test_ece_equal_width_hand_computed():
    # bins of width 1/15: 0.9 -> 13, 0.1 -> 1, 0.8 -> 12, 0.6 -> 9; each alone
    # |1-.9| + |0-.1| + |1-.8| + |1-.6| = 0.8, / 4
    assert M.ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6]) == pytest.approx(0.2)
    # 1.0 falls in the last bin, together with 0.95
    assert M.ece([1, 0], [1.0, 0.95]) == pytest.approx(abs(0.5 - 0.975))


def test_ece_equal_mass_hand_computed():
    y = [0, 1, 1, 1]
    p = [0.1, 0.2, 0.8, 0.9]
    # 2 bins split at the median: {0.1, 0.2} acc 0.5 conf 0.15; {0.8, 0.9} acc 1 conf 0.85
    assert M.ece(y, p, n_bins=2, strategy="quantile") == pytest.approx(0.5 * 0.35 + 0.5 * 0.15)
    with pytest.raises(ValueError, match="uniform, quantile"):
        M.ece(y, p, strategy="kde")
    with pytest.raises(ValueError, match="calibrate"):
        M.ece(y, [2.0, 0, 0, 0])


def test_brier():
    assert M.brier([1, 0], [0.75, 0.25]) == 0.0625


def test_nan_scores_rank_last():
    y = [1, 0, 1]
    assert M.auroc(y, [0.9, np.nan, 0.5]) == M.auroc(y, [0.9, -np.inf, 0.5]) == 1.0


def test_evaluate_scores_keys_and_non_probability_columns():
    m = M.evaluate_scores([1, 1, 0, 1], [0.9, 0.8, 0.2, 0.7])
    expected = {"auroc", "aurc", "accuracy_at_coverage_0.8", "coverage_at_accuracy_0.99", "ece"}
    assert expected | {"brier", "n_fields", "failure_rate", "ece_equal_mass"} == set(m)
    assert m["n_fields"] == 4 and m["failure_rate"] == 0.25
    raw = M.evaluate_scores([1, 0, 1], [-3.0, -7.5, 2.0])  # e.g. a sum of logprobs
    assert raw["ece"] is None and raw["brier"] is None and raw["auroc"] == 1.0
    with pytest.raises(ValueError, match="no fields"):
        M.evaluate_scores([], [])
    with pytest.raises(ValueError, match="one score per label"):
        M.auroc([1, 0], [0.5])
    with pytest.raises(ValueError, match="0/1"):
        M.auroc([2, 0], [0.5, 0.1])


@settings(max_examples=150, deadline=None)
@given(labels_scores)
def test_against_naive_reference_and_sklearn(ys):
    y, s = np.array(ys[0]), np.array(ys[1])
    cov, acc = M.risk_coverage_curve(y, s)
    ref_cov, ref_acc = _naive_curve(y, s)
    np.testing.assert_allclose(cov, ref_cov)
    np.testing.assert_allclose(acc, ref_acc)
    if 0 < y.sum() < len(y):
        assert M.auroc(y, s) == pytest.approx(roc_auc_score(y, s))


@settings(max_examples=100, deadline=None)
@given(labels_scores, st.randoms(use_true_random=False))
def test_permutation_and_monotone_invariance(ys, rnd):
    y, s = np.array(ys[0]), np.array(ys[1])
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    t = np.exp(3 * s) - 7.0  # strictly increasing
    base = M.evaluate_scores(y, s)
    for y2, s2 in ((y[perm], s[perm]), (y, t)):
        other = M.evaluate_scores(y2, s2)
        for key in ("auroc", "aurc", "accuracy_at_coverage_0.8", "coverage_at_accuracy_0.99"):
            assert other[key] == pytest.approx(base[key], nan_ok=True), key


def test_vectorised_on_a_large_column_is_fast():
    rng = np.random.default_rng(0)
    s = rng.uniform(size=200_000)
    y = (rng.uniform(size=s.size) < s).astype(int)
    m = M.evaluate_scores(y, s)
    # P(correct | s) = s with s uniform: correct scores have density 2s, wrong 2(1 - s), so
    # AUROC = P(s_correct > s_wrong) = 5/6 analytically; the scores are calibrated, ECE near 0
    assert m["auroc"] == pytest.approx(5 / 6, abs=0.005)
    assert m["ece"] < 0.01


def test_aurc_oracle_hand_computed():
    # f = 1/2 over 4 fields: risks 0, 0, 1/3, 1/2 at coverages 1/4 .. 1
    expected = 0.25 * (1 / 3) / 2 + 0.25 * (1 / 3 + 0.5) / 2
    assert M.aurc_oracle([1, 0, 1, 0]) == pytest.approx(expected)
    assert M.aurc_oracle([1, 1, 1]) == 0.0
    assert M.aurc_oracle([0, 0]) == 1.0
    assert math.isnan(M.aurc_oracle([]))
    # a large sample approaches the continuous formula f - (1 - f) ln(1 / (1 - f))
    f = 0.65
    y = (np.arange(20000) >= f * 20000).astype(int)
    assert M.aurc_oracle(y) == pytest.approx(f - (1 - f) * math.log(1 / (1 - f)), abs=1e-3)
    # scoring by the labels makes two ties whose interpolated area (f**2 / 2) is not a floor
    assert M.aurc(y, y) == pytest.approx(f**2 / 2, abs=1e-3)


@settings(max_examples=100, deadline=None)
@given(labels_scores, st.randoms(use_true_random=False))
def test_aurc_oracle_is_the_floor_of_tie_free_scores(ys, rnd):
    y = np.array(ys[0])
    s = np.array(rnd.sample(range(len(y)), len(y))) / len(y)  # distinct scores, any ranking
    assert M.aurc_oracle(y) <= M.aurc(y, s) + 1e-12
    perfect = y + 0.1 * s  # correct fields first
    assert M.aurc_oracle(y) == pytest.approx(M.aurc(y, perfect))
