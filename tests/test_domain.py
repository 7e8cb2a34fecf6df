"""Out-of-domain check at score time: the reference sketch, novelty, batch shift, routing."""

from __future__ import annotations

import json
import lzma
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from confidence import persistence
from confidence.cli import main
from confidence.datasets.synthetic.fields import SCHEMA
from confidence.domain import DomainReference, domain_columns
from confidence.domain_schemas import POOLED, row_schema_keys
from confidence.engine import ConfidenceEngine
from confidence.features.build import record_rows
from confidence.records import as_run_record
from confidence.routing import EMPTY_UNCERTIFIED, overrides
from confidence.schema import Schema

RUNS = Path(__file__).resolve().parents[1] / "scripts" / "default_runs.jsonl.xz"


def _sim(rng, n_docs, shift=0.0):
    X = rng.normal(size=(n_docs * 5, 4))
    X[:, 0] = rng.integers(0, 2, size=len(X))  # a binary flag: ties
    X[:, 1] += shift
    X[rng.uniform(size=len(X)) < 0.2, 2] = np.nan  # missing values
    return X, np.repeat([f"d{i}" for i in range(n_docs)], 5)


def test_in_domain_batches_rarely_alarm_and_shift_is_flagged():
    rng = np.random.default_rng(0)
    X, g = _sim(rng, 600)
    ref = DomainReference(columns=[0, 1, 2, 3]).fit(X, groups=g)
    alarms = sum(ref.check(*_sim(rng, 50)).shifted for _ in range(200))
    assert alarms / 200 <= 0.05
    moved = ref.check(*_sim(rng, 50, shift=1.5))
    assert moved.shifted and moved.share_novel > 0.3


def test_pvalues_are_conformal_and_missing_is_not_novel():
    rng = np.random.default_rng(1)
    X, g = _sim(rng, 600)
    ref = DomainReference(columns=[0, 1, 2, 3]).fit(X, groups=g)
    _, p = ref.novelty_p(*_sim(rng, 400))
    assert abs(np.mean(p < 0.1) - 0.1) < 0.05  # about uniform in domain
    Xn, gn = _sim(rng, 50)
    Xn[:, 2:] = np.nan  # a caller without those signals
    assert not ref.check(Xn, gn).shifted


def test_roundtrip_and_validation():
    rng = np.random.default_rng(2)
    X, g = _sim(rng, 100)
    ref = DomainReference(columns=[1, 3]).fit(X, groups=g)
    back = persistence.from_dict(persistence.to_dict(ref))
    np.testing.assert_array_equal(back.novelty_p(X, g)[1], ref.novelty_p(X, g)[1])
    with pytest.raises(ValueError, match="at least 20"):
        DomainReference(columns=[0]).fit(X[:50], groups=g[:50])
    assert domain_columns(np.array([[1.0, 0.0], [2.0, 0.0]]), ["a", "b"]) == [0]


def test_empty_value_needs_certified_absence():
    assert overrides(["", "9"], ["date", "total"]) == [EMPTY_UNCERTIFIED, None]
    assert overrides([None], ["date"], absence_certified=["date"]) == [None]
    with pytest.raises(ValueError, match="on_shift"):
        overrides(["9"], ["total"], on_shift="block")


@pytest.fixture(scope="module")
def records():
    with lzma.open(RUNS, "rt") as f:
        return [as_run_record(json.loads(x)) for _, x in zip(range(80), f, strict=False)]


@pytest.fixture(scope="module")
def engine():
    return ConfidenceEngine.load()


def _swapped(recs):
    """The same documents with another reader's Mapper: a shifted batch."""
    return [replace(r, mapper=recs[(i + 1) % len(recs)].mapper) for i, r in enumerate(recs)]


def test_score_flags_a_shifted_batch_and_stays_quiet_in_domain(engine, records):
    quiet = engine.score(records[:40], SCHEMA)
    assert quiet[0].batch_shift_p > 0.01 and sum(s.out_of_domain for s in quiet) <= 2 * 21
    assert not any(s.value in (None, "") and s.decision == "accept" for s in quiet)
    with pytest.warns(UserWarning, match="unlike the calibration documents"):
        shifted = engine.score(_swapped(records[:40]), SCHEMA)
    assert shifted[0].batch_shift_p < 1e-3
    assert {s.model_sha for s in shifted} == {engine.fingerprints()["model_sha"]}
    assert {s.llm for s in shifted} == {"SmolLM2-135M-Instruct.Q4_1"}


def test_shipped_reference_is_per_schema_and_unseen_schemas_fall_back(engine, records):
    """Invoices are compared with the training invoices (no warning); a schema the reference
    was not built on (one field fewer) with the pooled reference documents, and it says so."""
    key = row_schema_keys(["d"] * len(SCHEMA.fields), [f.name for f in SCHEMA.fields],
                          [f.type for f in SCHEMA.fields])[0]  # fmt: skip
    assert key in engine.domain_.schemas_ and len(engine.domain_.schemas_) == 2
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        engine.score(records[:40], SCHEMA)
    assert not any("not built on" in str(w.message) for w in seen)
    fewer = Schema(SCHEMA.name, SCHEMA.fields[:-1])
    with pytest.warns(UserWarning, match="40 document.* the out-of-domain reference was not built"):
        scored = engine.score(records[:40], fewer)
    assert all(s.novelty_p is not None for s in scored)
    rows = record_rows(records[:40], fewer)
    assert engine.check_domain(rows).reference == (POOLED,) * 40


def test_on_shift_review_routes_to_review(engine, records):
    with pytest.warns(UserWarning):
        warn = engine.score(_swapped(records[:40]), SCHEMA)
    with pytest.warns(UserWarning):
        rev = engine.score(_swapped(records[:40]), SCHEMA, on_shift="review")
    assert any(s.decision == "accept" for s in warn)
    assert all(s.decision == "review" for s in rev)
    moved = [s for s, w in zip(rev, warn, strict=True) if w.decision == "accept"]
    assert all("unlike the calibration documents" in s.reasons[0] for s in moved)


def test_score_cli_on_shift_review(records, tmp_path, capsys):
    ds = tmp_path / "ds"
    ds.mkdir()
    SCHEMA.save(ds / "schema.json")
    recs = _swapped(records[:40])
    (ds / "labels.jsonl").write_text(
        "".join(
            json.dumps({"doc_id": r.doc_id, "file": f"files/{r.doc_id}.pdf", "fields": {}}) + "\n"
            for r in recs
        )
    )
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in recs))
    out = tmp_path / "s.jsonl"
    argv = ["score", str(ds), "--runs", str(runs), "--no-documents", "--out", str(out)]
    assert main([*argv, "--on-shift", "review", "--features", "3"]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "unlike the calibration documents" in err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(r["decision"] == "review" for r in rows)
    assert all(r["batch_shift_p"] < 1e-3 for r in rows)
    # --features 3: the model's three most used features, where a row has them (NaN left out)
    written = {k for r in rows for k in r if k.startswith("feature.")}
    top = {f"feature.{n}" for n in ConfidenceEngine.load().top_features(3)}
    assert written and written <= top


def test_field_score_features_are_columns_and_round_trip():
    from confidence.scores import SCORED_COLUMNS, FieldScore

    s = FieldScore("d", "total", "amount", "9", "9", "9", 0.9, "accept", 0.5, "field",
                   novelty_p=0.3, out_of_domain=False, features={"agree_equal": 1.0})  # fmt: skip
    d = s.to_dict()
    assert d["feature.agree_equal"] == 1.0 and "features" not in d
    assert FieldScore.from_dict(d) == s
    assert "features" not in SCORED_COLUMNS and "novelty_p" in SCORED_COLUMNS


def test_documents_without_optional_columns_keep_calibrated_pvalues():
    """A caller without pages is compared on the other columns, against matching distances."""
    rng = np.random.default_rng(3)
    X, g = _sim(rng, 600)
    ref = DomainReference(columns=[0, 1, 2, 3], optional_columns=[3]).fit(X, groups=g)
    Xq, gq = _sim(rng, 400)
    Xq[:, 3] = np.nan
    _, p = ref.novelty_p(Xq, gq)
    assert abs(np.mean(p < 0.1) - 0.1) < 0.05
    Xs, gs = _sim(rng, 50, shift=1.5)
    Xs[:, 3] = np.nan
    assert ref.check(Xs, gs).shifted
    back = persistence.from_dict(persistence.to_dict(ref))
    np.testing.assert_array_equal(back.novelty_p(Xq, gq)[1], p)
