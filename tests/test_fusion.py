"""FusionClassifier: sklearn contract, NaN handling, grouped CV, contributions, pickle-free save."""

from __future__ import annotations

import json
import warnings

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from confidence.calibration import IsotonicCalibrator, ThresholdSelector, evaluate_scores
from confidence.errors import ModelError
from confidence.fusion import FusionClassifier, average_boosters

NAMES = ["agree", "lp_min", "ocr_conf", "noise"]


def _data(n_docs=150, per_doc=4, seed=0):
    """Rows of 4 signals; ``ocr_conf`` is NaN for a third of the documents (digital PDFs)."""
    rng = np.random.default_rng(seed)
    n = n_docs * per_doc
    docs = np.repeat(np.arange(n_docs), per_doc)
    agree = rng.integers(0, 2, n).astype(float)
    lp_min = rng.normal(size=n)
    ocr = rng.uniform(size=n)
    digital = np.repeat(rng.uniform(size=n_docs) < 1 / 3, per_doc)
    ocr[digital] = np.nan
    logit = 2.0 * agree + 1.0 * lp_min + np.where(digital, 1.0, 2.0 * (ocr - 0.5)) - 0.5
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = np.column_stack([agree, lp_min, ocr, rng.normal(size=n)])
    return X, y, docs


@pytest.fixture(scope="module")
def fitted():
    X, y, docs = _data()
    clf = FusionClassifier(n_estimators=300).fit(X, y, groups=docs, feature_names=NAMES)
    return clf, X, y, docs


def _expected_failures(estimator):
    if not estimator.average_folds:
        return {}
    # as for sklearn's own bagging estimators: repeating a row moves documents between the CV
    # folds whose models are averaged, so weights and repeats give other fold models
    why = "averaged CV fold models are fitted on other rows when rows are repeated"
    return {"check_sample_weight_equivalence_on_dense_data": why}


@parametrize_with_checks(
    [FusionClassifier(n_estimators=30), FusionClassifier(n_estimators=30, average_folds=True)],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_learns_signals_and_handles_nan(fitted):
    clf, _, _, _ = fitted
    X_test, y_test, _ = _data(seed=1)
    p = clf.predict_proba(X_test)[:, 1]
    assert roc_auc_score(y_test, p) > 0.75
    assert np.all((p >= 0) & (p <= 1))
    assert clf.feature_names_ == NAMES and clf.n_features_in_ == 4
    gain = dict(zip(NAMES, clf.feature_importances_, strict=True))
    assert gain["agree"] > gain["noise"]


def test_early_stopping_picks_fewer_rounds_with_cv(fitted):
    clf, _, _, _ = fitted
    assert 1 <= clf.best_iteration_ < 300
    assert clf.n_members_ == 1 and clf.booster_.num_trees() == clf.best_iteration_
    assert clf.cv_logloss_ is not None and clf.cv_logloss_ < np.log(2)


def test_out_of_fold_scores_feed_calibration_and_thresholds(fitted):
    """Real pipeline: fusion refit on every row -> isotonic on out-of-fold scores -> thresholds
    fitted on a held-out calibration set scored by the final pipeline -> metrics on a test set.
    (Out-of-fold scores are single fold models', a proxy for a refit, not for their average.)"""
    clf, _, y, _ = fitted
    assert not np.isnan(clf.oof_proba_).any()
    assert roc_auc_score(y, clf.oof_proba_) > 0.75
    cal = IsotonicCalibrator().fit(clf.oof_proba_, y)

    def score(X):
        return cal.predict_proba(clf.predict_proba(X)[:, 1])[:, 1]

    X_cal, y_cal, _ = _data(n_docs=200, seed=3)
    sel = ThresholdSelector(target_accuracy=0.85, min_samples=50)
    sel.fit(score(X_cal), y_cal, ["total"] * len(y_cal), ["amount"] * len(y_cal))
    X_test, y_test, _ = _data(n_docs=300, seed=7)
    p = score(X_test)
    m = evaluate_scores(y_test, p)
    assert m["auroc"] > 0.75 and m["ece"] < 0.08
    accept = sel.predict(p, ["total"] * len(p))
    assert 0.1 < accept.mean() < 0.9
    assert y_test[accept].mean() >= 0.85 - 0.04  # one draw: allow sampling error of 1200 rows


def test_folds_keep_documents_together():
    _, y, docs = _data(n_docs=40)
    folds = FusionClassifier()._folds(y, docs)
    assert len(folds) == 5
    for train, val in folds:
        assert not set(docs[train]) & set(docs[val])


def test_without_cv_trains_n_estimators():
    X, y, _ = _data(n_docs=30)
    clf = FusionClassifier(n_estimators=7, early_stopping_rounds=None).fit(X, y)
    assert clf.best_iteration_ == 7 and clf.cv_logloss_ is None


def test_contributions_sum_to_log_odds_and_match_shap(fitted):
    clf, X, _, _ = fitted
    contrib = clf.contributions(X[:25])
    assert contrib.shape == (25, 5)
    np.testing.assert_allclose(contrib.sum(axis=1), clf.decision_function(X[:25]), atol=1e-9)
    shap = pytest.importorskip("shap")
    with warnings.catch_warnings():  # shap notes its LightGBM binary output format changed
        warnings.simplefilter("ignore", UserWarning)
        ref = shap.TreeExplainer(clf.booster_).shap_values(X[:25])
    ref = ref[1] if isinstance(ref, list) else ref
    np.testing.assert_allclose(clf.shap_values(X[:25]), ref, atol=1e-6)


def test_string_labels_map_to_classes():
    X, y, docs = _data(n_docs=40)
    labels = np.where(y == 1, "right", "wrong")
    clf = FusionClassifier(n_estimators=20).fit(X, labels, groups=docs)
    assert list(clf.classes_) == ["right", "wrong"]
    assert set(clf.predict(X)) <= {"right", "wrong"}


def test_clear_errors_on_bad_training_input():
    X, y, _ = _data(n_docs=10)
    with pytest.raises(ValueError, match=r"one class is present.*label both"):
        FusionClassifier().fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="0 sample"):
        FusionClassifier().fit(np.empty((0, 4)), [])
    with pytest.raises(ValueError, match="3 names for 4 columns"):
        FusionClassifier().fit(X, y, feature_names=NAMES[:3])
    with pytest.raises(ValueError, match="rename"):
        FusionClassifier().fit(X, y, feature_names=["a", "b:c", "d", "e"])
    with pytest.raises(ValueError, match="one document id per row"):
        FusionClassifier().fit(X, y, groups=[1, 2])


def test_save_load_roundtrip_without_pickle(fitted, tmp_path):
    clf, X, _, _ = fitted
    clf.save(tmp_path / "model")
    files = sorted(p.name for p in (tmp_path / "model").iterdir())
    assert files == ["fusion.json", "fusion.lgb.txt", "manifest.json"]
    meta = json.loads((tmp_path / "model" / "fusion.json").read_text())
    assert meta["kind"] == "fusion" and meta["format_version"] == 2
    assert meta["data"]["feature_names"] == NAMES
    assert meta["data"]["booster"]["file"] == "fusion.lgb.txt"
    assert {"extractconf", "lightgbm", "scikit-learn", "numpy"} <= set(meta["data"]["versions"])
    back = FusionClassifier.load(tmp_path / "model")
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(back.contributions(X[:5]), clf.contributions(X[:5]))
    assert back.get_params() == clf.get_params()


def test_load_rejects_corruption(fitted, tmp_path):
    clf, _, _, _ = fitted
    d = clf.save(tmp_path / "m")
    with pytest.raises(ModelError, match="nowhere: no such file"):
        FusionClassifier.load(tmp_path / "nowhere")
    model = d / "fusion.lgb.txt"
    text = model.read_text()
    model.write_text(text.replace("num_leaves", "num_leafs", 1))
    with pytest.raises(ModelError, match=r"fusion\.lgb\.txt: checksum"):
        FusionClassifier.load(d)
    model.write_text(text)
    (d / "fusion.json").write_text("{not json")
    with pytest.raises(ModelError, match=r"fusion\.json: checksum"):
        FusionClassifier.load(d)


def test_monotone_constraints_hold_everywhere_and_survive_save(tmp_path):
    # ``noise`` secretly anti-correlates with y in training; a +1 constraint forbids learning it
    X, y, docs = _data(seed=3)
    X = X.copy()
    X[:, 3] = -1.5 * y + np.random.default_rng(3).normal(size=len(y))
    clf = FusionClassifier(n_estimators=200, monotone={"noise": 1, "lp_min": 1}).fit(
        X, y, groups=docs, feature_names=NAMES
    )
    grid = np.linspace(-4, 4, 41)
    for row in X[:40]:
        probe = np.repeat(row[None, :], len(grid), axis=0)
        for col in (1, 3):
            z = probe.copy()
            z[:, col] = grid
            p = clf.predict_proba(z)[:, 1]
            assert np.all(np.diff(p) >= -1e-12), f"column {NAMES[col]} not monotone"
    free = FusionClassifier(n_estimators=200).fit(X, y, groups=docs, feature_names=NAMES)
    z = np.repeat(X[:1], len(grid), axis=0)
    z[:, 3] = grid
    assert np.any(np.diff(free.predict_proba(z)[:, 1]) < -1e-6)  # the reversal it would learn
    clf.save(tmp_path / "m")
    back = FusionClassifier.load(tmp_path / "m")
    assert back.monotone == {"noise": 1, "lp_min": 1}
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize(
    ("monotone", "match"),
    [({"nope": 1}, "not feature names"), ({"agree": 2}, "-1, 0 or 1")],
)
def test_monotone_rejects_unknown_names_and_directions(monotone, match):
    X, y, docs = _data(n_docs=30)
    with pytest.raises(ValueError, match=match):
        FusionClassifier(n_estimators=5, monotone=monotone).fit(
            X, y, groups=docs, feature_names=NAMES
        )


def test_engine_default_monotone_names_are_features():
    from confidence.features.build import FEATURE_NAMES, MONOTONE

    assert set(MONOTONE) <= set(FEATURE_NAMES)
    assert set(MONOTONE.values()) <= {-1, 1}


def test_sample_weight_shifts_the_prior_and_is_validated():
    X, y, docs = _data(n_docs=80)
    base = FusionClassifier(n_estimators=40).fit(X, y, groups=docs)
    w = np.where(y == 0, 4.0, 1.0)  # wrong rows count four times
    heavy = FusionClassifier(n_estimators=40).fit(X, y, groups=docs, sample_weight=w)
    assert heavy.predict_proba(X)[:, 1].mean() < base.predict_proba(X)[:, 1].mean() - 0.1
    same = FusionClassifier(n_estimators=40).fit(X, y, groups=docs, sample_weight=np.ones(len(y)))
    np.testing.assert_allclose(same.predict_proba(X), base.predict_proba(X))
    for bad, match in (
        (np.ones(3), "one weight per row"),
        (-np.ones(len(y)), "non-negative"),
        (np.zeros(len(y)), "all zero"),
    ):
        with pytest.raises(ValueError, match=match):
            FusionClassifier().fit(X, y, sample_weight=bad)


# ----------------------------------------------------------------------------- fold averaging
def test_averaged_folds_match_the_mean_of_the_fold_models():
    """The merged booster is the fold models' mean: scores, contributions and expected value."""
    X, y, docs = _data(n_docs=80)
    folds = FusionClassifier()._folds(y, docs)
    params = {**FusionClassifier()._lgb_params(), "seed": 0}
    hist = lgb.cv(params, lgb.Dataset(X, y), num_boost_round=40, folds=folds,
                  return_cvbooster=True)  # fmt: skip
    members = hist["cvbooster"].boosters
    merged = average_boosters(members, 40)
    raw = np.mean([b.predict(X, raw_score=True, num_iteration=40) for b in members], axis=0)
    np.testing.assert_allclose(merged.predict(X, raw_score=True), raw, atol=1e-12)
    contrib = np.mean([b.predict(X, pred_contrib=True, num_iteration=40) for b in members], 0)
    np.testing.assert_allclose(merged.predict(X, pred_contrib=True), contrib, atol=1e-12)
    assert merged.num_trees() == 40 * len(members)
    # the merged model is an ordinary text model: it reloads to the same scores
    again = lgb.Booster(model_str=merged.model_to_string())
    np.testing.assert_allclose(again.predict(X, raw_score=True), raw, atol=1e-12)
    with pytest.raises(ValueError, match="at least one booster"):
        average_boosters([])


@pytest.fixture(scope="module")
def averaged():
    X, y, docs = _data()
    clf = FusionClassifier(n_estimators=300, average_folds=True)
    return clf.fit(X, y, groups=docs, feature_names=NAMES), X, y, docs


def test_averaging_folds_gives_other_scores_than_a_refit(averaged, fitted):
    clf, X, _, _ = averaged
    refit = fitted[0]
    assert refit.best_iteration_ == clf.best_iteration_  # same CV, same rounds
    # the 5 CV fold models, each of best_iteration_ rounds, averaged into one booster
    assert clf.n_members_ == 5 and clf.booster_.num_trees() == 5 * clf.best_iteration_
    assert not np.allclose(clf.decision_function(X), refit.decision_function(X))
    X_test, y_test, _ = _data(seed=1)
    assert roc_auc_score(y_test, clf.predict_proba(X_test)[:, 1]) > 0.75
    # contributions still add up to the averaged model's log-odds
    C = clf.contributions(X[:50])
    np.testing.assert_allclose(C.sum(axis=1), clf.decision_function(X[:50]), atol=1e-9)


def test_without_cv_the_model_is_refit():
    X, y, docs = _data(n_docs=40)
    clf = FusionClassifier(n_estimators=20, early_stopping_rounds=None, average_folds=True)
    clf.fit(X, y, groups=docs)
    assert clf.n_members_ == 1 and clf.booster_.num_trees() == 20


def test_members_round_trip_and_older_models_load_as_refits(averaged, tmp_path):
    clf, X, _, _ = averaged
    clf.save(tmp_path / "m")
    back = FusionClassifier.load(tmp_path / "m")
    assert back.n_members_ == 5 and back.average_folds is True
    np.testing.assert_allclose(back.predict_proba(X), clf.predict_proba(X), atol=1e-12)
    d = clf.to_dict()
    del d["n_members"]
    d["params"] = {k: v for k, v in d["params"].items() if k != "average_folds"}
    old = FusionClassifier.from_dict(d)  # a model saved before fold averaging existed
    assert old.n_members_ == 1 and old.average_folds is False
