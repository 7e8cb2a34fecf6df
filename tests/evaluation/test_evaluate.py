"""confidence.evaluation: the library behind `extractconf evaluate` (tables, cross-fitting)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence.datasets.folder import Dataset
from confidence.documents.cache import DocumentCache
from confidence.engine import ConfidenceEngine
from confidence.errors import DatasetError
from confidence.evaluation import (
    BASELINES,
    Evaluation,
    build_table,
    cross_fit,
    evaluate,
    evaluate_table,
    fit_engine,
)
from confidence.records import load_runs
from tests.fixtures.engine import make_dataset, make_runs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaluation")
    ds = make_dataset(root, n_docs=40)
    runs = load_runs(make_runs(ds, root / "runs.jsonl"))
    return build_table(Dataset.open(ds), runs, cache=DocumentCache(root / "cache"))


def test_build_table_judges_every_labelled_field(table):
    assert len(table) == 200 and table.n_documents == 40
    assert set(table.baselines) == set(BASELINES)
    assert set(np.unique(table.y)) == {0, 1}


def test_cross_fit_scores_every_row_out_of_fold(table):
    cf = cross_fit(table, n_splits=3, explain=True, target_accuracy=0.9)
    assert np.isfinite(cf.confidence).all() and cf.accepted.dtype == bool
    assert cf.contributions.shape == (len(table), table.rows.X.shape[1] + 1)
    again = cross_fit(table, n_splits=3, target_accuracy=0.9)
    np.testing.assert_array_equal(again.confidence, cf.confidence)  # deterministic
    assert again.contributions is None


def test_evaluate_with_a_model_equals_the_table_functions(table, tmp_path):
    eng = fit_engine(table, target_accuracy=0.9)
    result = evaluate(table, model=eng)
    conf = eng.predict_confidence(table.rows.X)
    acc = np.array([s.decision == "accept" for s in eng.score_rows(table.rows, explain=False)])
    metrics, rows = evaluate_table(table, conf, acc)
    assert result.metrics["methods"] == metrics["methods"]
    assert [{k: v for k, v in r.items() if k != "extra"} for r in result.rows] == rows
    extra = result.rows[0]["extra"]
    assert {"field_type", "threshold", "threshold_source", "decision", "reasons"} <= set(extra)
    out = result.write(tmp_path / "eval")
    names = {p.name for p in out.iterdir()}
    assert names == {"metrics.json", "scores.jsonl", "feature_importance.json", "shap.json",
                     "thresholds.json"}  # fmt: skip
    shap_rows = json.loads((out / "shap.json").read_text())
    margin = eng.fusion_.decision_function(table.rows.X)[shap_rows["rows"]]
    total = np.sum(shap_rows["values"], axis=1) + shap_rows["base_values"]
    np.testing.assert_allclose(total, margin, atol=1e-9)
    assert "routing: coverage" in result.summary()


def test_evaluate_cross_fitted_and_errors(table):
    result = evaluate(table, folds=3, target_accuracy=0.9)
    assert isinstance(result, Evaluation) and result.thresholds is None
    assert result.metrics["evaluation"].startswith("cross-fitted, 3")
    with pytest.raises(DatasetError, match="folds=1"):
        evaluate(table, folds=1)
    with pytest.raises(DatasetError, match="no judged fields"):
        evaluate(table.subset(np.zeros(len(table), dtype=bool)), model=ConfidenceEngine())
