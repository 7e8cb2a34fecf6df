"""Routing: decisions, straight-through flag, reasons in words, threshold lookup."""

from __future__ import annotations

import math

import numpy as np
import pytest

from confidence.calibration import ThresholdSelector
from confidence.features.build import FEATURE_NAMES
from confidence.routing import (
    PHRASES,
    decide,
    phrase,
    reasons,
    straight_through,
)


@pytest.mark.parametrize("name", FEATURE_NAMES)
def test_every_feature_has_words(name):
    for value in (0.0, 1.0, 0.37):
        for sign in (-1.0, 1.0):
            w = phrase(name, value, sign)
            assert "_" not in w, f"{name} fell through to its raw name"
    # every feature matches a prefix of the table (no generic fallback)
    assert any(name.startswith(p) for p, _, _ in PHRASES)


def test_phrases_follow_state_and_sign():
    assert phrase("agree_equal", 0.0, -1.0) == "Hunter and Mapper disagree"
    assert phrase("agree_equal", 1.0, 2.0) == "Hunter and Mapper agree"
    assert phrase("agree_hunter_only", 1.0, -1.0) == "Mapper did not find the field"
    assert phrase("ocr_h_found", 0.0, -1.0) == "value not found on the page"
    assert phrase("q_local_sharpness_log", 1.0, -0.5) == "blurry region"
    assert phrase("lp_h_min", -3.0, -0.5) == "low token probability"
    assert phrase("lp_h_min", math.nan, -0.5) == "no token probabilities"
    assert phrase("lp_h_min", math.nan, 0.5) == ""  # a missing signal is never praise
    assert phrase("agree_hunter_only", 0.0, -0.5) == ""  # an "off" flag says nothing


def test_decide_and_nan():
    d = decide([0.95, 0.9, 0.1, math.nan], [0.9, 0.9, 0.0, 0.0])
    assert d.tolist() == ["accept", "accept", "accept", "review"]
    assert decide([0.99], [math.inf]).tolist() == ["review"]


def test_straight_through():
    st = straight_through(["a", "a", "b", "c"], ["accept", "accept", "accept", "review"])
    assert st == {"a": True, "b": True, "c": False}


def test_reasons_pick_the_strongest_in_the_direction_of_the_decision():
    names = ["agree_equal", "lp_h_mean", "q_local_sharpness_log", "ocr_h_found"]
    X = np.array([[0.0, -2.0, 1.0, 0.0], [1.0, -0.01, 3.0, 1.0]])
    C = np.array([[-1.0, -0.5, -0.2, -0.01], [2.0, 0.3, -0.4, 0.01]])
    r = reasons(C, X, names, ["review", "accept"])
    assert r[0] == ["Hunter and Mapper disagree", "low token probability", "blurry region"]
    # accepted: positive ones only; the tiny 0.01 is below min_contribution
    assert r[1] == ["Hunter and Mapper agree", "high token probability"]
    assert reasons(C, X, names, ["review", "accept"], top=1) == [
        ["Hunter and Mapper disagree"],
        ["Hunter and Mapper agree"],
    ]


def test_reasons_dedupe_and_ignore_bias_column():
    names = ["lp_h_mean", "lp_h_min", "agree_equal"]
    X = np.array([[-2.0, -3.0, 0.0]])
    C = np.array([[-0.9, -0.8, -0.7, 5.0]])  # trailing bias column
    assert reasons(C, X, names, ["review"]) == [
        ["low token probability", "Hunter and Mapper disagree"]
    ]


def test_reasons_shape_check():
    with pytest.raises(ValueError, match="feature columns"):
        reasons(np.zeros((1, 2)), np.zeros((1, 3)), ["a", "b", "c"], ["review"])


def test_threshold_lookup_sources():
    rng = np.random.default_rng(0)
    n = 3000
    s = rng.uniform(size=n)
    y = (rng.uniform(size=n) < 0.9 + 0.1 * s).astype(int)
    fields = np.array(["total", "date"])[rng.integers(0, 2, n)]
    types = np.where(fields == "total", "amount", "date")
    sel = ThresholdSelector(target_accuracy=0.95).fit(s, y, fields, types)
    lam, src = sel.lookup_many(["total", "new_amount", "x"], ["amount", "amount", "iban"])
    assert src == ["field", "type", "global"]
    assert lam[1] == sel.type_thresholds_["amount"]
    assert lam[2] == sel.global_threshold_
