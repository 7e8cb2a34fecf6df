"""Contributions grouped by tree path against LightGBM's own ``pred_contrib``, row by row."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from confidence.contributions import contributions, tree_splits


def _booster(missing: str, seed: int = 0):
    """A booster over values with NaNs, zeros and values within 1e-35 of zero."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 5))
    X[rng.uniform(size=X.shape) < 0.15] = np.nan
    X[rng.uniform(size=X.shape) < 0.1] = 0.0
    X[:7, 1] = 1e-40
    y = (np.nan_to_num(X[:, 0]) + (X[:, 1] > 0) + rng.normal(0, 0.5, 600) > 0.5).astype(int)
    params = {"objective": "binary", "num_leaves": 15, "verbosity": -1, "seed": seed}
    if missing == "zero":
        params["zero_as_missing"] = True
    if missing == "none":
        params["use_missing"] = False
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=40), X


@pytest.mark.parametrize("missing", ["nan", "zero", "none"])
def test_grouped_contributions_equal_lightgbm_row_by_row(missing):
    booster, X = _booster(missing)
    X = np.vstack([X, -X[:50], np.full((3, 5), np.nan)])  # unseen values, all missing
    got = contributions(booster, X, min_rows=1)
    want = np.vstack([booster.predict(x[None, :], pred_contrib=True) for x in X])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got[:, -1], want[:, -1])  # the base value: same sums


def test_what_is_not_grouped_goes_to_lightgbm():
    booster, X = _booster("nan")
    want = booster.predict(X, pred_contrib=True)
    np.testing.assert_array_equal(contributions(booster, X[:5]), want[:5])  # few rows
    cat = lgb.train({"objective": "binary", "verbosity": -1, "min_data_per_group": 5},
                    lgb.Dataset(np.c_[X[:, :2], np.arange(600) % 4], (np.arange(600) % 4 > 1),
                                categorical_feature=[2]), num_boost_round=5)  # fmt: skip
    assert tree_splits(cat) is None
    rf = lgb.train({"objective": "binary", "boosting": "rf", "bagging_freq": 1,
                    "bagging_fraction": 0.5, "verbosity": -1},
                   lgb.Dataset(np.nan_to_num(X), X[:, 0] > 0), num_boost_round=5)  # fmt: skip
    assert tree_splits(rf) is None  # averaged trees
    Xc = np.c_[X[:, :2], np.arange(600) % 4]
    np.testing.assert_array_equal(
        contributions(cat, Xc, min_rows=1), cat.predict(Xc, pred_contrib=True)
    )
