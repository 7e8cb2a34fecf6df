"""reliability(): hand-computed tiny cases, intervals, cells by field and group."""

from __future__ import annotations

import math

import numpy as np
import pytest

from confidence.evaluation import reliability


def _rows(field, group, pairs, threshold=0.5):
    return [
        {"field": field, "group": group, "confidence": c, "correct": y, "threshold": threshold}
        for c, y in pairs
    ]


def test_hand_computed_cells_by_field_and_group():
    rows = (
        _rows("total", "scan", [(0.9, 1), (0.8, 0), (0.4, 1), (0.1, 0)])
        + _rows("total", "digital", [(0.95, 1), (0.7, 1), (0.6, 1)])
        + _rows("date", "scan", [(0.2, 0), (0.9, 1)], threshold=None)  # None = review always
    )
    out = reliability(rows, by=["field", "group"], n_boot=100)
    assert [(r["field"], r["group"]) for r in out] == [
        ("date", "scan"),
        ("total", "digital"),
        ("total", "scan"),
    ]
    date, digital, scan = out
    # scan: positives {0.9, 0.4}, negatives {0.8, 0.1}: 3 of 4 pairs ordered -> 0.75
    assert scan["auroc"] == pytest.approx(0.75)
    # distinct bins: |0.9-1| + |0.8-0| + |0.4-1| + |0.1-0| = 1.6, / 4
    assert scan["ece"] == pytest.approx(0.4)
    assert (scan["n"], scan["n_correct"], scan["n_accepted"]) == (4, 2, 2)
    assert scan["coverage"] == 0.5 and scan["accuracy_accepted"] == 0.5
    # Clopper-Pearson 95 % for 1 of 2: [1 - sqrt(0.975), sqrt(0.975)]
    assert scan["accuracy_low"] == pytest.approx(1 - math.sqrt(0.975))
    assert scan["accuracy_high"] == pytest.approx(math.sqrt(0.975))
    # digital: one class -> AUROC undefined, ECE = mean(0.05, 0.3, 0.4)
    assert math.isnan(digital["auroc"]) and math.isnan(digital["auroc_low"])
    assert digital["ece"] == pytest.approx(0.25)
    assert digital["accuracy_accepted"] == 1.0
    assert digital["accuracy_low"] == pytest.approx(0.025 ** (1 / 3))
    # date: nothing accepted
    assert date["n_accepted"] == 0 and math.isnan(date["accuracy_accepted"])


def test_intervals_bracket_the_estimate_and_shrink_with_n():
    rng = np.random.default_rng(0)

    def cell(n):
        s = rng.uniform(size=n)
        y = (rng.uniform(size=n) < s).astype(int)
        return reliability({"confidence": s, "correct": y}, by=(), threshold=0.7, n_boot=300)[0]

    small, large = cell(100), cell(5000)
    for r in (small, large):
        for m in ("ece", "auroc", "accuracy"):
            point = r["accuracy_accepted"] if m == "accuracy" else r[m]
            assert r[f"{m}_low"] <= point <= r[f"{m}_high"]
    assert (large["auroc_high"] - large["auroc_low"]) < (small["auroc_high"] - small["auroc_low"])
    assert large["auroc"] == pytest.approx(5 / 6, abs=0.02)  # AUROC of s for Bernoulli(s)


def test_missing_scores_are_left_out_and_columns_checked():
    rows = [{"field": "a", "confidence": None, "correct": 1}, {"field": "a", "confidence": 0.9,
            "correct": True}]  # fmt: skip
    [r] = reliability(rows, threshold=None, n_boot=0)
    assert r["n"] == 1 and "n_accepted" not in r
    with pytest.raises(ValueError, match=r"column\(s\) \['extractconf'\] missing"):
        reliability(rows, score="extractconf", threshold=None)


def test_bootstrap_is_reproducible():
    rows = _rows("f", "g", [(0.9, 1), (0.6, 0), (0.3, 1), (0.2, 0), (0.7, 1)])
    assert reliability(rows, random_state=3) == reliability(rows, random_state=3)
