"""A model saved before features were added keeps scoring: it reads the columns it was trained on.

The older model is made the way an earlier extractconf made it: the same engine, its fusion
trained on the feature set of that time (here: today's features without the four added last),
saved in the same format. It must load, score through the CLI and the API as it did, explain
itself with zero contributions from the features it never saw, and a model that needs a feature
this version does not compute must be refused with a clear error.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence.cli import main
from confidence.datasets.folder import Dataset
from confidence.documents.cache import DocumentCache
from confidence.domain import DomainReference, domain_columns
from confidence.domain_schemas import row_schema_keys
from confidence.engine import ConfidenceEngine
from confidence.errors import ModelError
from confidence.evaluation import build_table
from confidence.features.build import DOCUMENT_FEATURES, FEATURE_NAMES, MONOTONE
from confidence.fusion import FusionClassifier
from confidence.records import read_runs
from tests.fixtures.engine import dataset_with_runs

ADDED = (
    "cons_part_of",
    "val_digit_share",
    "val_lead_digit",
    "val_n_words",
    "val_open_end",
    "ocr_alone_alt",
)
OLD = [n for n in FEATURE_NAMES if n not in ADDED]
COLS = [FEATURE_NAMES.index(n) for n in OLD]


def _age(model_dir, table, out):
    """Rebuild ``model_dir`` as a version without :data:`ADDED` would have saved it."""
    eng = ConfidenceEngine.load(model_dir)
    r = table.rows
    X, y, g = r.X, table.y, np.asarray(r.doc_ids)
    eng.fusion_ = FusionClassifier(
        n_estimators=60, monotone={k: v for k, v in MONOTONE.items() if k in OLD}
    ).fit(X[:, COLS], y, groups=g, feature_names=OLD)
    eng.feature_names_ = list(OLD)
    eng._fit_calibrator(X, y, g, "isotonic")
    cols = domain_columns(X[:, COLS], OLD)
    keys = row_schema_keys(g, np.asarray(r.fields), np.asarray(r.field_types))
    eng.domain_ = DomainReference(
        columns=cols, optional_columns=[c for c in cols if OLD[c] in DOCUMENT_FEATURES]
    ).fit(X[:, COLS], groups=g, schemas=keys)
    return eng.save(out)


@pytest.fixture(scope="module")
def old(tmp_path_factory):
    root = tmp_path_factory.mktemp("upgrade")
    ds, runs, common = dataset_with_runs(root)
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(root / "model"),
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    recs = {r.doc_id: r for r in read_runs(runs)}
    table = build_table(Dataset.open(ds), recs, cache=DocumentCache(root / "cache"))
    return root, ds, runs, common, table, _age(root / "model", table, root / "old")


def test_the_old_model_is_saved_with_its_own_features_and_says_so(old):
    *_, model = old
    meta = json.loads((model / "engine.json").read_text())["data"]
    assert meta["feature_names"] == OLD and len(OLD) == len(FEATURE_NAMES) - len(ADDED)
    warning = rf"trained before {len(ADDED)} of .*cons_part_of.*retrain"
    with pytest.warns(UserWarning, match=warning):
        assert ConfidenceEngine.load(model).feature_names_ == OLD


def test_score_cli_reads_the_old_model_with_its_columns(old, tmp_path, capsys):
    _, ds, runs, common, table, model = old
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(ds), "--runs", str(runs), "--model", str(model),
                 "--out", str(out), *common]) == 0  # fmt: skip
    rows = {(r["doc_id"], r["field"]): r for r in map(json.loads, out.read_text().splitlines())}
    assert len(rows) == len(table)
    # what the old model computes on its own columns, by hand
    eng = ConfidenceEngine.load(model)
    s = eng.fusion_.predict_proba(table.rows.X[:, COLS])[:, 1]
    want = eng.calibrator_.predict_proba(s)[:, 1]
    got = [
        rows[(d, f)]["confidence"]
        for d, f in zip(table.rows.doc_ids, table.rows.fields, strict=True)
    ]
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert all(isinstance(r["reasons"], list) for r in rows.values())
    err = capsys.readouterr().err  # the user is told once, and why
    assert err.count(f"trained before {len(ADDED)} of this extractconf's features") == 1


def test_evaluate_and_explain_with_the_old_model(old, tmp_path):
    _, ds, runs, common, table, model = old
    assert main(["evaluate", str(ds), "--runs", str(runs), "--model", str(model),
                 "--out", str(tmp_path / "ev"), *common]) == 0  # fmt: skip
    assert (tmp_path / "ev" / "metrics.json").exists()
    eng = ConfidenceEngine.load(model)
    expl = eng.explain(table.rows)
    assert expl.values.shape == (len(table), len(FEATURE_NAMES))
    added = [FEATURE_NAMES.index(n) for n in ADDED]
    assert not expl.values[:, added].any()  # features it never saw contribute nothing
    margin = expl.values.sum(1) + expl.base_values
    p = 1 / (1 + np.exp(-margin))
    np.testing.assert_allclose(p, eng.fused_scores(table.rows.X), atol=1e-6)
    assert set(eng.top_features(10)) <= set(OLD)


def test_a_model_that_needs_an_unknown_feature_is_refused(old, tmp_path, capsys):
    _, ds, runs, common, _, model = old
    eng = ConfidenceEngine.load(model)  # as a later version would save it
    eng.feature_names_ = ["zz_feature_of_a_later_version", *eng.feature_names_[1:]]
    d = eng.save(tmp_path / "future")
    with pytest.raises(ModelError, match=r"zz_feature_of_a_later_version.*retrain"):
        ConfidenceEngine.load(d)
    rc = main(["score", str(ds), "--runs", str(runs), "--model", str(d),
               "--out", str(tmp_path / "s.jsonl"), *common])  # fmt: skip
    assert rc != 0
    assert "zz_feature_of_a_later_version" in capsys.readouterr().err
