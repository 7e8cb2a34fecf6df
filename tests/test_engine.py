"""ConfidenceEngine: fit on a known signal, persistence, scoring recorded runs, bad input."""

from __future__ import annotations

import copy
import json
import math
import random
import warnings

import numpy as np
import pytest

from confidence.calibration import auroc
from confidence.documents.cache import DocumentCache
from confidence.engine import ONE_READING, ConfidenceEngine
from confidence.errors import DatasetError, ModelError
from confidence.evaluation.baselines import baseline_scores, fill_missing, llm_calls
from confidence.features.build import FEATURE_NAMES
from confidence.llm.base import TokenLogprob
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.records import as_run_record, read_runs
from confidence.schema import Field, Schema
from confidence.scores import FieldScore
from confidence.types import Document, Page, Word
from tests.fixtures.engine import SCHEMA, simulate_run

COL = {n: i for i, n in enumerate(FEATURE_NAMES)}


def _table(n_docs=500, per_doc=5, seed=0):
    """Feature rows where agree_equal and lp_h_mean carry a known signal; the rest is noise."""
    rng = np.random.default_rng(seed)
    n = n_docs * per_doc
    y = (rng.uniform(size=n) < 0.8).astype(int)
    X = np.full((n, len(FEATURE_NAMES)), np.nan)
    X[:, COL["agree_equal"]] = np.where(rng.uniform(size=n) < 0.85, y, 1 - y)
    X[:, COL["lp_h_mean"]] = np.where(y == 1, -0.1, -1.0) + rng.normal(0, 0.4, n)
    X[:, COL["q_noise"]] = rng.uniform(size=n)  # pure noise
    types = np.array(["amount", "date", "text", "id", "text"])[np.arange(n) % per_doc]
    for t in set(types):
        X[:, COL[f"type_{t}"]] = (types == t).astype(float)
    for t in ("currency", "address", "percent", "email", "iban"):
        X[:, COL[f"type_{t}"]] = 0.0
    groups = np.repeat(np.arange(n_docs), per_doc).astype(str)
    fields = np.array(["total", "date", "vendor", "number", "buyer"])[np.arange(n) % per_doc]
    return X, y, groups, fields, types


@pytest.fixture(scope="module")
def fitted():
    X, y, g, f, t = _table()
    eng = ConfidenceEngine(target_accuracy=0.95, fusion_params={"n_estimators": 300})
    return eng.fit(X, y, groups=g, fields=f, field_types=t), (X, y, g, f, t)


def test_fit_finds_the_signal(fitted):
    eng, _ = fitted
    X, y, *_ = _table(n_docs=200, seed=1)  # fresh documents
    p = eng.predict_confidence(X)
    assert auroc(y, p) > 0.85
    assert 0 <= p.min() and p.max() <= 1
    m = eng.metrics_["held_out"]
    assert m["auroc"] > 0.85 and m["n_fields"] > 0
    assert set(eng.thresholds_.thresholds_) == {"total", "date", "vendor", "number", "buyer"}


def test_save_load_identical_and_no_pickle(fitted, tmp_path):
    eng, (X, *_) = fitted
    eng.save(tmp_path / "m")
    files = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert files == [
        "calibrator.json",
        "domain.json",
        "engine.json",
        "fusion.json",
        "fusion.lgb.txt",
        "manifest.json",
        "thresholds.json",
    ]
    meta = json.loads((tmp_path / "m" / "engine.json").read_text())
    assert meta["kind"] == "engine" and meta["format_version"] == 2
    assert meta["data"]["feature_names"] == list(FEATURE_NAMES)
    assert "held_out" in meta["data"]["metrics"]
    back = ConfidenceEngine.load(tmp_path / "m")
    np.testing.assert_array_equal(back.predict_confidence(X[:300]), eng.predict_confidence(X[:300]))
    assert back.thresholds_.thresholds_ == eng.thresholds_.thresholds_


def test_load_other_format_version(fitted, tmp_path):
    eng, _ = fitted
    d = eng.save(tmp_path / "m")
    meta = json.loads((d / "engine.json").read_text())
    meta["format_version"] = 99
    (d / "engine.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match=r"engine.json: checksum mismatch"):
        ConfidenceEngine.load(d)  # the manifest refuses any edit first
    from confidence import persistence

    persistence.attach(d, "engine.json")  # re-list it: now the version itself is refused
    with pytest.raises(ModelError, match=r"engine.json: engine format version 99.*retrain"):
        ConfidenceEngine.load(d)
    with pytest.raises(ModelError, match="extractconf train"):
        ConfidenceEngine.load(tmp_path / "nothing-here")


def test_recalibrate_and_tune_keep_fusion(fitted):
    eng, (X, y, g, f, t) = fitted
    new = eng.recalibrate(X[:300], y[:300], groups=g[:300], calibrator="lasso")
    assert new.fusion_ is eng.fusion_ and new.calibrator_ is not eng.calibrator_
    assert auroc(y[:300], new.predict_confidence(X[:300])) > 0.85
    tuned = eng.tune(X, y, fields=f, field_types=t, target_accuracy=0.9)
    assert tuned.thresholds_.target_accuracy == 0.9
    assert eng.thresholds_.target_accuracy == 0.95


def test_scored_rows_carry_the_prints_of_the_parts_that_scored_them(fitted):
    """``model_sha`` / ``thresholds_sha`` of scored rows: the same on every call of one engine
    (worked out once), recomputed when a part is another object -- tuned thresholds, a refitted
    calibrator, a part put back -- and never carried into a copy with other parts."""
    eng, (X, y, g, f, t) = fitted
    schema = Schema("s", (Field("total", "amount"),))
    recs = [{"doc_id": "a", "fields": {"total": "9.00"}}]

    def prints(engine):
        row = engine.score(recs, schema, explain=False)[0]
        return row.model_sha, row.thresholds_sha

    first = prints(eng)
    assert prints(eng) == first
    assert eng.fingerprints() == {"model_sha": first[0], "thresholds_sha": first[1]}
    tuned = eng.tune(X, y, fields=f, field_types=t, target_accuracy=0.9)
    assert prints(tuned)[0] == first[0] and prints(tuned)[1] != first[1]
    recal = eng.recalibrate(X[:300], y[:300], groups=g[:300], calibrator="lasso")
    assert prints(recal)[0] != first[0] and prints(recal)[1] == first[1]
    swapped = copy.copy(eng)
    original = swapped.thresholds_
    swapped.thresholds_ = tuned.thresholds_
    assert prints(swapped) == (first[0], prints(tuned)[1])
    swapped.thresholds_ = original
    assert prints(swapped) == first
    assert prints(eng) == first


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda X, y: (X[:0], y[:0]), "no labelled fields"),
        (lambda X, y: (X, np.ones_like(y)), "all .* fields are correct"),
        (lambda X, y: (np.full_like(X, np.nan), y), "every feature is missing"),
        (lambda X, y: (X[:, :5], y), "must have shape"),
    ],
)
def test_bad_training_input(mutate, match):
    X, y, g, f, t = _table(n_docs=20)
    X2, y2 = mutate(X, y)
    n = len(y2)
    with pytest.raises(DatasetError, match=match):
        ConfidenceEngine().fit(X2, y2, groups=g[:n], fields=f[:n], field_types=t[:n])


def test_score_third_party_without_logprobs(fitted):
    eng, _ = fitted
    schema = Schema("s", (Field("total", "amount"), Field("date", "date"), Field("iban", "iban")))
    recs = [
        {"doc_id": "a", "fields": {"total": "12.50", "date": "2024-01-02", "iban": None}},
        {"doc_id": "b", "fields": {"total": "7.00"}, "mapper": {"total": "7.00"}},
    ]
    with pytest.warns(UserWarning, match="not seen in training"):
        out = eng.score(recs, schema)
    assert [(s.doc_id, s.field) for s in out] == [
        ("a", "total"),
        ("a", "date"),
        ("a", "iban"),
        ("b", "total"),
        ("b", "date"),
        ("b", "iban"),
    ]
    for s in out:
        assert s.status == "ok" and 0 <= s.confidence <= 1
        assert s.decision in ("accept", "review")
        assert s.reasons and all(isinstance(r, str) for r in s.reasons)
    assert out[4].error and "not in the run" in out[4].error
    assert out[0].value == "12.50" and out[0].mapper_value is None


def test_the_reported_value_is_the_reading_the_record_names(fitted):
    """Grounded extractions report the Mapper (the candidate ranker), others the Hunter."""
    from confidence.readings import CallResult, FieldReading, RunRecord

    eng, _ = fitted
    schema = Schema("s", (Field("total", "amount"), Field("date", "date")))

    def rec(doc_id, reported, mapper_status="ok"):
        hunter = CallResult(
            "hunter", {"total": FieldReading("8.00"), "date": FieldReading("2024-01-02")}
        )
        mapper = CallResult("mapper", {"total": FieldReading("9.00")}, status=mapper_status)
        meta = {"reported": reported} if reported else {}
        return RunRecord(doc_id, hunter, mapper, meta=meta)

    recs = [rec("m", "mapper"), rec("h", "hunter"), rec("old", None), rec("x", "mapper", "error")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {(s.doc_id, s.field): s for s in eng.score(recs, schema)}
    assert out["m", "total"].value == "9.00" and out["m", "total"].hunter_value == "8.00"
    assert out["m", "date"].value is None  # the ranker found no date: reported absent
    assert out["h", "total"].value == "8.00" and out["old", "total"].value == "8.00"
    assert out["x", "total"].value == "8.00"  # no Mapper reading survived: the Hunter's


def test_score_with_document_and_failed_run(fitted):
    eng, _ = fitted
    page = Page(
        1,
        850,
        1100,
        (
            Word("Total:", (0.1, 0.5, 0.2, 0.52), line_id=1),
            Word("12.50", (0.3, 0.5, 0.4, 0.52), line_id=1),
        ),
        "pdf",
        100.0,
    )
    doc = Document("x", "x.pdf", (page,))
    schema = Schema("s", (Field("total", "amount"),))
    [s] = eng.score_readings(doc, {"total": "12.50"}, {"total": "12.50"}, schema=schema)
    assert s.doc_id == "x" and s.status == "ok" and s.confidence is not None
    failed = RunRecord("y", None, None, status="error", error="LLM timed out")
    [e] = eng.score([failed], schema)
    assert e.status == "error" and e.confidence is None and e.decision == "review"
    assert e.error == "LLM timed out"
    assert FieldScore.from_dict(json.loads(json.dumps(e.to_dict()))) == e
    assert ConfidenceEngine.straight_through([s, e]) == {"x": s.decision == "accept", "y": False}


def test_vectorised_scoring_matches_single(fitted):
    eng, _ = fitted
    rng = random.Random(0)
    gold = {"invoice_number": "INV-1", "invoice_date": "2024-01-02", "vendor": "Acme",
            "total": "12.00", "po_number": None}  # fmt: skip
    runs = [simulate_run(f"d{i}", gold, rng) for i in range(20)]
    together = eng.score(runs, SCHEMA)
    alone = [s for r in runs for s in eng.score([r], SCHEMA)]
    assert [s.confidence for s in together] == pytest.approx([s.confidence for s in alone])


def test_baselines_hand_computed():
    h = CallResult(
        "hunter",
        {"total": FieldReading("9.00", (TokenLogprob("9", -0.2), TokenLogprob(".00", -0.4)))},
    )
    m = CallResult("mapper", {"total": FieldReading(None)})
    samples = (
        CallResult("sample", {"total": FieldReading("9.0")}),
        CallResult("sample", {"total": FieldReading("8.00")}),
    )
    rec = RunRecord("d", h, m, samples=samples, verbalized={"total": 80.0})
    b = baseline_scores(rec, Field("total", "amount"))
    assert b["logprob_mean"] == pytest.approx(math.exp(-0.3))
    assert b["logprob_min"] == pytest.approx(math.exp(-0.4))
    assert b["agreement"] == 0.0
    assert b["verbalized"] == 0.8
    assert b["self_consistency"] == pytest.approx(2 / 3)
    assert llm_calls(rec)["self_consistency"] == 3
    cols, share = fill_missing({"x": [0.3, math.nan], "y": [math.nan, math.nan]})
    assert cols["x"].tolist() == [0.3, 0.0] and share == {"x": 0.5}


def test_records_errors_name_the_line(tmp_path):
    p = tmp_path / "runs.jsonl"
    p.write_text('{"doc_id": "a", "fields": {"t": "1"}}\n{"doc_id": "b", "fields": 3}\n')
    with pytest.raises(DatasetError, match=r"runs.jsonl:2: document b"):
        list(read_runs(p))
    with pytest.raises(DatasetError, match="doc_id"):
        as_run_record({"fields": {}})
    r = as_run_record(
        {
            "doc_id": "c",
            "fields": {"t": {"value": "1", "logprobs": [{"token": "1", "logprob": -1}]}},
        }
    )
    assert r.hunter.fields["t"].tokens[0].logprob == -1


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_read_runs_plain_and_compressed(tmp_path, suffix):
    import gzip
    import lzma

    lines = '{"doc_id": "a", "fields": {"t": "1"}}\n\n{"doc_id": "b", "fields": {"t": null}}\n'
    p = tmp_path / f"runs.jsonl{suffix}"
    opener = {"": open, ".gz": gzip.open, ".xz": lzma.open}[suffix]
    with opener(p, "wt", encoding="utf-8") as fh:
        fh.write(lines)
    assert [r.doc_id for r in read_runs(p)] == ["a", "b"]
    if suffix:  # a truncated compressed file is a clear error naming it, not a raw traceback
        p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
        with pytest.raises(DatasetError, match=r"runs.jsonl.*truncated or corrupt"):
            list(read_runs(p))


def test_document_cache(tmp_path, monkeypatch):
    from reportlab.pdfgen import canvas

    pdf = tmp_path / "a.pdf"
    c = canvas.Canvas(str(pdf))
    c.drawString(72, 720, "Total 12.50")
    c.save()
    monkeypatch.setenv("EXTRACTCONF_CACHE", str(tmp_path / "env"))
    cache = DocumentCache()
    assert cache.directory == tmp_path / "env" / "documents"
    d1 = cache.load(pdf, doc_id="a")
    d2 = cache.load(pdf, doc_id="b")
    assert (cache.hits, cache.misses) == (1, 1) and d2.doc_id == "b"
    assert json.dumps(d2.to_dict()["pages"]) == json.dumps(d1.to_dict()["pages"])
    # a damaged entry is re-ingested, a changed option is another key
    [entry] = list((tmp_path / "env" / "documents").rglob("*.json.gz"))
    entry.write_bytes(b"garbage")
    assert cache.load(pdf).text == "Total 12.50" and cache.misses == 2
    assert DocumentCache(lang="deu").key(pdf) != cache.key(pdf)
    out = list(cache.load_many([pdf, tmp_path / "missing.pdf"], ["a", "m"]))
    assert isinstance(out[0], Document) and type(out[1]).__name__ == "DocumentError"


def test_pageless_fast_path_equals_blanked_feature_matrix():
    from confidence.features.build import document_mask, feature_matrix, pageless_matrix

    rng = random.Random(3)
    gold = {"invoice_number": "INV-7", "invoice_date": "2024-03-02", "vendor": "Kappa Labs",
            "total": "1234.50", "po_number": None}  # fmt: skip
    rows = []
    empty = Document("e", "", ())
    for i in range(30):
        run = simulate_run(f"d{i}", gold, rng, logprobs=i % 2 == 0)
        for f in SCHEMA.fields:
            rows.append((f, empty, run.hunter.fields.get(f.name), run.mapper.fields.get(f.name)))
    slow = feature_matrix(rows)
    slow[:, document_mask()] = np.nan
    np.testing.assert_array_equal(pageless_matrix(rows), slow)


def test_uncertified_field_says_so(fitted):
    import copy

    from confidence.engine import UNCERTIFIED

    eng, _ = fitted
    sel = copy.deepcopy(eng.thresholds_)
    sel.thresholds_["total"] = math.inf
    schema = Schema("s", (Field("total", "amount"), Field("date", "date")))
    fields = {"total": "1.00", "date": "2024-01-01"}
    rec = {"doc_id": "a", "fields": fields, "mapper": fields}  # two readings: not ONE_READING
    total, date = eng.with_thresholds(sel).score([rec], schema)
    assert total.decision == "review" and total.threshold is None
    assert total.reasons[0] == UNCERTIFIED
    assert UNCERTIFIED not in date.reasons


def test_balance_by_type_removes_the_type_prior_from_the_fused_score(tmp_path):
    rng = np.random.default_rng(3)
    X, _, g, f, t = _table(n_docs=300)
    # amounts are right 95 % of the time, the rest 40 %; agree_equal is the evidence
    y = (rng.uniform(size=len(t)) < np.where(t == "amount", 0.95, 0.4)).astype(int)
    X[:, COL["agree_equal"]] = np.where(rng.uniform(size=len(y)) < 0.85, y, 1 - y)
    gap = {}
    for balance in (None, "type"):
        eng = ConfidenceEngine(target_accuracy=0.9, balance=balance, random_state=1)
        eng.fit(X, y, groups=g, fields=f, field_types=t)
        s = eng.fusion_.predict_proba(X)[:, 1]
        agree = X[:, COL["agree_equal"]] == 1
        gap[balance] = s[agree & (t == "amount")].mean() - s[agree & (t == "text")].mean()
        assert 0 <= eng.predict_confidence(X).min()
    assert gap[None] > 0.1 and abs(gap["type"]) < gap[None] / 2
    eng.save(tmp_path / "m")
    assert ConfidenceEngine.load(tmp_path / "m").balance == "type"
    with pytest.raises(ValueError, match="'balance' parameter"):
        ConfidenceEngine(balance="field").fit(X, y, groups=g, fields=f, field_types=t)


def test_excluded_features_are_never_split_on_and_survive_a_save(tmp_path):
    X, y, g, f, t = _table(n_docs=300)
    # q_noise copies the label on the training rows: a model allowed to read it would lean on it
    X[:, COL["q_noise"]] = y + np.random.default_rng(5).normal(0, 0.05, len(y))
    eng = ConfidenceEngine(target_accuracy=0.9, exclude_features=("q_*",), random_state=1)
    eng.fit(X, y, groups=g, fields=f, field_types=t)
    assert not [n for n in eng.feature_names_ if n.startswith("q_")]
    assert "agree_equal" in eng.feature_names_
    C = eng.contributions(X[:50])
    q_cols = [COL[n] for n in FEATURE_NAMES if n.startswith("q_")]
    assert (C[:, q_cols] == 0).all() and (C[:, COL["agree_equal"]] != 0).any()
    # the excluded column changes nothing in the scores
    X2 = X[:50].copy()
    X2[:, q_cols] = 1 - X2[:, q_cols]
    np.testing.assert_array_equal(eng.predict_confidence(X2), eng.predict_confidence(X[:50]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "trained before these features existed"
        back = ConfidenceEngine.load(eng.save(tmp_path / "m"))
    assert back.exclude_features == ("q_*",) and back.feature_names_ == eng.feature_names_
    np.testing.assert_allclose(back.predict_confidence(X[:50]), eng.predict_confidence(X[:50]))
    bad_args = ((("no_such",), "'no_such' names no feature"), ("q_*", "must be an array-like"))
    for bad, match in bad_args:
        with pytest.raises(ValueError, match=match):
            ConfidenceEngine(exclude_features=bad).fit(X, y, groups=g, fields=f, field_types=t)


class _EmptyReplies:
    """An LLM client that answers every call with an empty JSON object."""

    model = "fake"

    def chat(self, messages, **kw):
        from confidence.llm.base import Completion

        return [Completion("{}", None, "fake", {}, 0.0, "stop")]


def _one_line_doc() -> Document:
    words = (
        Word("Total:", (0.1, 0.5, 0.2, 0.52), line_id=1),
        Word("12.50", (0.3, 0.5, 0.4, 0.52), line_id=1),
    )
    return Document("x", "x.pdf", (Page(1, 850, 1100, words, "pdf", 100.0),))


def test_extract_and_score_equals_extract_then_score(fitted):
    from confidence.calls.extract import extract_document

    eng, _ = fitted
    schema = Schema("s", (Field("total", "amount"),))
    doc = _one_line_doc()
    live = eng.extract_and_score(doc, schema, _EmptyReplies())
    rec = extract_document(doc, schema, _EmptyReplies())
    assert live == eng.score([rec], schema, {doc.doc_id: doc})
    assert [s.field for s in live] == ["total"] and live[0].doc_id == "x"


def test_explain_is_a_shap_explanation_summing_to_the_margin(fitted):
    shap = pytest.importorskip("shap")
    eng, (X, *_) = fitted
    expl = eng.explain(X[:40])
    assert isinstance(expl, shap.Explanation)
    assert expl.values.shape == (40, len(FEATURE_NAMES))
    assert list(expl.feature_names) == list(FEATURE_NAMES)
    margin = eng.fusion_.decision_function(X[:40])
    np.testing.assert_allclose(expl.values.sum(axis=1) + expl.base_values, margin, atol=1e-9)
    # records give the same rows as their feature matrix; failed records are left out
    recs = [{"doc_id": "a", "fields": {"total": "9.00"}}, RunRecord("b", None, None,
            status="error", error="x")]  # fmt: skip
    schema = Schema("s", (Field("total", "amount"),))
    by_rec = eng.explain(recs, schema)
    assert by_rec.values.shape == (1, len(FEATURE_NAMES))
    with pytest.raises(ValueError, match="schema"):
        eng.explain(recs)


def test_too_few_documents_for_the_split_is_a_clear_error():
    X, y, g, f, t = _table(n_docs=3)  # 3 documents: 0.6/0.2/0.2 leaves the calibration empty
    with pytest.raises(DatasetError, match="calibration split has no document"):
        ConfidenceEngine().fit(X, y, groups=g, fields=f, field_types=t)


def test_shipped_model_scores_one_reading_records_with_the_library_mapper(tmp_path):
    """Bring your own extraction: values + logprobs of one pipeline, no Mapper, the document."""
    from confidence import load_document
    from confidence.calls.second_reading import LIBRARY_MAPPER_NAME
    from tests.fixtures.docs import make_invoice_pdf

    spec = make_invoice_pdf(tmp_path / "inv.pdf")
    doc = load_document(spec.path, doc_id="inv")
    schema = Schema(
        "invoice",
        (
            Field("invoice_number", "id", "Invoice number."),
            Field("invoice_date", "date", "Date the invoice was issued."),
            Field("subtotal", "amount", "Total before tax."),
            Field("vat", "amount", "Tax amount."),
            Field("total", "amount", "Total including tax."),
        ),
    )

    def lp(v):
        return {"value": v, "logprobs": [{"token": v, "logprob": -0.2}]}

    record = {
        "doc_id": "inv",
        "fields": {
            "invoice_number": lp("INV-2024-0042"),
            "invoice_date": lp("15 March 2024"),
            "subtotal": lp("649.50"),
            "vat": lp("129.90"),
            "total": lp("779.40"),
        },
    }
    engine = ConfidenceEngine.load()
    rows = engine.score([record], schema, documents={"inv": doc}, features=len(FEATURE_NAMES))
    by = {r.field: r for r in rows}
    assert all(r.status == "ok" and LIBRARY_MAPPER_NAME in r.llm for r in rows)
    assert by["subtotal"].mapper_value == "649.50" and by["total"].value == "779.40"
    for name in ("subtotal", "vat", "total"):
        f = by[name].features
        assert f["agree_both_present"] == 1.0 and f["agree_equal"] == 1.0
        assert f["ocr_m_found"] == 1.0 and f["cons_h"] == 1.0 and f["cons_m"] == 1.0
    # without the documents: one reading, no Mapper-based features
    bare = {r.field: r for r in engine.score([record], schema, features=len(FEATURE_NAMES))}
    assert bare["total"].mapper_value is None and LIBRARY_MAPPER_NAME not in bare["total"].llm
    assert "agree_equal" not in bare["total"].features
    # and with the documents but the library's Mapper turned off: still one reading, reviewed
    off = engine.score([record], schema, documents={"inv": doc}, library_mapper=False)
    assert all(r.mapper_value is None for r in off)
    assert all(r.decision == "review" and r.reasons[0] == ONE_READING for r in off)
    assert all(ONE_READING not in r.reasons for r in rows)  # the library's Mapper read it


def test_one_reading_is_never_accepted():
    from confidence.schema import Field, Schema

    eng = ConfidenceEngine.load()
    schema = Schema("s", (Field("total", "amount"), Field("invoice_date", "date")))
    rec = {"doc_id": "a", "fields": {"total": "9.00", "invoice_date": "2026-01-02"}}
    rows = eng.score([rec], schema)
    assert all(r.decision == "review" and r.reasons[0] == ONE_READING for r in rows)
    assert all(r.p_sample == 1.0 and not r.audit for r in rows)
    # a Mapper reading makes the record two-reading: routed on its confidence again
    two = eng.score([{**rec, "mapper": rec["fields"]}], schema)
    assert all(ONE_READING not in r.reasons for r in two)


def test_a_malformed_value_is_never_accepted():
    from confidence.routing import MALFORMED
    from confidence.schema import Field, Schema
    from tests.fixtures.engine import lenient

    eng = lenient(ConfidenceEngine.load())
    eng.thresholds_.global_threshold_ = 0.0  # everything would be accepted on its confidence
    eng.thresholds_.thresholds_ = dict.fromkeys(eng.thresholds_.thresholds_, 0.0)
    eng.thresholds_.type_thresholds_ = dict.fromkeys(eng.thresholds_.type_thresholds_, 0.0)
    schema = Schema("s", (Field("date", "date"), Field("iban", "iban"), Field("total", "amount")))
    good = {"date": "14/04/2018", "iban": "DE89 3704 0044 0532 0130 00", "total": "9.00"}
    bad = {"date": "44/04/2018", "iban": "DE89 3704 0044 0532 0130 07", "total": "9.00"}
    rows = eng.score(
        [
            {"doc_id": "good", "fields": good, "mapper": good},
            {"doc_id": "bad", "fields": bad, "mapper": bad},
        ],
        schema,
    )
    by = {(r.doc_id, r.field): r for r in rows}
    assert all(by["good", f].decision == "accept" for f in good)
    for f in ("date", "iban"):
        assert by["bad", f].decision == "review" and by["bad", f].reasons[0] == MALFORMED
        assert by["bad", f].features["val_valid"] == 0.0 if by["bad", f].features else True
    assert by["bad", "total"].decision == "accept"  # a well-formed value keeps its route


def _noise_table(n_docs=300, per_doc=5, seed=3):
    """Rows whose features say nothing about the label (a fusion model can only overfit)."""
    rng = np.random.default_rng(seed)
    X, y, g, f, t = _table(n_docs, per_doc, seed)
    for name in ("agree_equal", "lp_h_mean", "q_noise"):
        X[:, COL[name]] = rng.normal(size=len(y))
    return X, y, g, f, t


@pytest.mark.parametrize("out_of_fold", [True, False])
def test_the_calibrator_never_sees_in_sample_scores(out_of_fold):
    # deep trees and no early stopping memorise the noise: calibrated on in-sample scores, the
    # fresh rows' probabilities would spread towards 0 and 1; on out-of-fold (or held-out)
    # scores they stay near the base rate (0.8)
    X, y, g, f, t = _noise_table()
    params = {"num_leaves": 63, "min_child_samples": 2, "n_estimators": 300}
    eng = ConfidenceEngine(fusion_params=params, calibrate_out_of_fold=out_of_fold).fit(
        X, y, groups=g, fields=f, field_types=t
    )
    assert eng.metrics_["calibrated_out_of_fold"] is out_of_fold
    Xn, yn, *_ = _noise_table(seed=4)
    p = eng.predict_confidence(Xn)
    assert abs(p.mean() - yn.mean()) < 0.06 and np.percentile(p, 90) - np.percentile(p, 10) < 0.3


def test_out_of_fold_calibration_pools_the_fusion_and_calibration_shares(fitted):
    X, y, g, f, t = _table(n_docs=200)
    pooled = ConfidenceEngine(random_state=1).fit(X, y, groups=g, fields=f, field_types=t)
    split = ConfidenceEngine(random_state=1, calibrate_out_of_fold=False).fit(
        X, y, groups=g, fields=f, field_types=t
    )
    n_p, n_s = pooled.metrics_["n_documents"], split.metrics_["n_documents"]
    # the same threshold share (unseen by fusion and calibrator) either way
    assert n_p["thresholds"] == n_s["thresholds"]
    assert (
        n_p["fusion"]
        == n_p["calibration"]
        == n_s["fusion"] + n_s["calibration"]
        == 200 - (n_s["thresholds"])
    )
    assert (
        pooled.metrics_["calibrated_out_of_fold"] and not split.metrics_["calibrated_out_of_fold"]
    )


def test_out_of_fold_calibration_needs_cross_validation():
    X, y, g, f, t = _table(n_docs=60)
    eng = ConfidenceEngine(fusion_params={"early_stopping_rounds": None, "n_estimators": 50})
    eng.fit(X, y, groups=g, fields=f, field_types=t)
    assert not eng.metrics_["calibrated_out_of_fold"]  # no fold models: the calibration share
    assert eng.metrics_["n_documents"]["calibration"] < eng.metrics_["n_documents"]["fusion"]


def test_without_out_of_fold_scores_the_fusion_learns_on_its_share_alone(monkeypatch):
    # if the fusion cannot cross-validate after all, its scores on the calibration share would
    # be in-sample: the engine refits it on the fusion share and calibrates on the other
    from confidence.fusion import FusionClassifier

    monkeypatch.setattr(FusionClassifier, "_folds", lambda self, y, groups: None)
    X, y, g, f, t = _table(n_docs=100)
    eng = ConfidenceEngine(random_state=1).fit(X, y, groups=g, fields=f, field_types=t)
    nd = eng.metrics_["n_documents"]
    assert not eng.metrics_["calibrated_out_of_fold"]
    # three disjoint shares (pooled, the fusion would count the calibration documents too)
    assert nd["fusion"] + nd["calibration"] + nd["thresholds"] == 100
