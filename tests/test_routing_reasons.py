"""Image-quality reasons only speak of pages that are images (issue 16, item 12).

Scored through :meth:`ConfidenceEngine.score` on the bundled sample: ``synth-7-00001`` is a
digital (vector) PDF, the two others are scans.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from confidence import ConfidenceEngine, Dataset
from confidence.features.build import FEATURE_NAMES
from confidence.routing import _MISSING, PHRASES, phrase, reasons
from confidence.sample import dataset_dir

DIGITAL = "synth-7-00001"
IMAGE_WORDS = {w for prefix, low, high in PHRASES if prefix.startswith("q_") for w in (low, high)}
IMAGE_WORDS |= {w for prefix, w in _MISSING if prefix == "q_"}  # "no image-quality ..."


def _sample_model():
    """The bundled sample model, trained on every feature, image quality included (the default
    model leaves the absolute image-quality measurements out, ``docs/features.md``)."""
    from pathlib import Path

    import confidence.sample

    return ConfidenceEngine.load(Path(confidence.sample.__file__).parent / "model")


@pytest.fixture(scope="module", params=["default", "sample"])
def scored(request):
    """Each sample document read two ways (gold values by both calls; by the Hunter only),
    scored by the default model and by the sample model."""
    engine = ConfidenceEngine.load() if request.param == "default" else _sample_model()
    ds = Dataset.open(dataset_dir())
    records, documents, source = [], {}, {}
    for r in ds.records:
        doc = ds.load_document(r)
        for suffix, mapper in (("", dict(r.fields)), ("-hunter-only", None)):
            doc_id = r.doc_id + suffix
            records.append({"doc_id": doc_id, "fields": dict(r.fields), "mapper": mapper})
            documents[doc_id] = replace(doc, doc_id=doc_id)
            source[doc_id] = {p.source for p in doc.pages}
    scores = engine.score(records, ds.schema, documents)
    return scores, source, request.param


def test_the_sample_has_a_digital_pdf_and_scans(scored):
    _, source, _ = scored
    assert source[DIGITAL] == {"pdf"}
    assert all(s == {"ocr"} for d, s in source.items() if not d.startswith(DIGITAL))


def test_a_digital_pdf_gets_no_image_quality_reason(scored):
    scores, _, _ = scored
    digital = [s for s in scores if s.doc_id.startswith(DIGITAL)]
    assert digital and all(s.reasons for s in digital)
    cited = {w for s in digital for w in s.reasons}
    assert not cited & IMAGE_WORDS, cited & IMAGE_WORDS


def test_a_scan_still_gets_image_quality_reasons(scored):
    scores, _, model = scored
    if model == "default":
        pytest.skip("the default model reads only relative blur, not cited on these scans")
    cited = {w for s in scores if not s.doc_id.startswith(DIGITAL) for w in s.reasons}
    assert cited & IMAGE_WORDS


def test_jpeg_artefacts_only_for_an_image_page():
    names = list(FEATURE_NAMES)
    X = np.zeros((2, len(names)))
    C = np.zeros((2, len(names)))
    src, block = names.index("ocr_source_pdf"), names.index("q_blockiness")
    X[:, block], C[:, block] = 8.0, -2.0
    X[1, src] = 1.0
    scan, digital = reasons(C, X, names, ["review", "review"])
    assert scan == ["JPEG artefacts"] and digital == []


def test_the_shipped_model_knows_every_feature_and_reads_restored_pages(recwarn):
    """The default model is trained on this release's features, ``ocr_page_restored`` (faint
    print read on a restored raster) included, but for the absolute image-quality measurements
    it leaves out on purpose: it loads without the "trained before" warning, and a restored page
    changes the score of the same reading through ``score``."""
    from confidence.documents import FAINT_PRINT_NOTE
    from confidence.engine import kept_features

    engine = ConfidenceEngine.load()
    assert engine.feature_names_ == kept_features(engine.exclude_features)
    assert set(FEATURE_NAMES) - set(engine.feature_names_) <= {
        n for n in FEATURE_NAMES if n.startswith("q_")
    }
    assert "ocr_page_restored" in engine.feature_names_
    assert "q_local_sharpness_rel" in engine.feature_names_  # blur relative to its page
    assert not [w for w in recwarn if "trained before" in str(w.message)]
    ds = Dataset.open(dataset_dir())
    rec = next(r for r in ds.records if r.doc_id != DIGITAL)
    doc = ds.load_document(rec)
    note = f"{FAINT_PRINT_NOTE} flattened (confidently read characters 100 -> 200)"
    faded = replace(doc, pages=tuple(replace(p, notes=(*p.notes, note)) for p in doc.pages))
    records = [{"doc_id": rec.doc_id, "fields": dict(rec.fields), "mapper": dict(rec.fields)}]
    plain_s, faded_s = (
        [s.confidence for s in engine.score(records, ds.schema, {rec.doc_id: d})]
        for d in (doc, faded)
    )
    assert plain_s != faded_s


def _scanned_date(feature: str):
    """The default engine (which must use ``feature``), the sample dataset, a scanned record's
    date field and its value, and a maker of that document whose date words read alone as
    ``alone_of(text)``."""
    from confidence.documents.search import document_index

    engine = ConfidenceEngine.load()
    assert feature in engine.feature_names_
    ds = Dataset.open(dataset_dir())
    rec = next(r for r in ds.records if r.doc_id != DIGITAL)
    doc = ds.load_document(rec)
    field = next(f.name for f in ds.schema if f.type == "date" and rec.fields.get(f.name))
    value = rec.fields[field]
    m = document_index(doc).find(value, "date")
    assert m is not None

    def read_alone_as(alone_of):
        page = doc.pages[m.page]
        words = list(page.words)
        for i in m.indices:
            words[i] = replace(words[i], alone=alone_of(words[i].text))
        pages = list(doc.pages)
        pages[m.page] = replace(page, words=tuple(words))
        return replace(doc, pages=tuple(pages))

    records = [{"doc_id": rec.doc_id, "fields": dict(rec.fields), "mapper": dict(rec.fields)}]
    row = [s.field for s in engine.score(records, ds.schema, {rec.doc_id: doc})].index(field)
    return engine, ds, rec, field, value, records, row, read_alone_as


def test_a_value_read_otherwise_alone_lowers_its_confidence_and_says_so():
    """The default model uses ``ocr_alone_agree`` (ingestion version 11): through ``score``, the
    same reading of a scanned invoice gets a lower confidence when the second reading of its
    date, read alone, says another date; ``explain`` shows the feature pulling it down, in the
    words a review reason would use."""
    engine, ds, rec, field, _, records, row, read_alone_as = _scanned_date("ocr_alone_agree")

    def shifted(t):  # each digit shifted by one (2024 -> 3135)
        return "".join(str((int(c) + 1) % 10) if c.isdigit() else c for c in t)

    docs = (read_alone_as(lambda t: t), read_alone_as(shifted))
    same, otherwise = (
        next(s for s in engine.score(records, ds.schema, {rec.doc_id: d}) if s.field == field)
        for d in docs
    )
    assert otherwise.confidence < same.confidence
    col = FEATURE_NAMES.index("ocr_alone_agree")
    pushes = [engine.explain(records, ds.schema, {rec.doc_id: d}).values[row, col] for d in docs]
    assert pushes[1] < 0 <= pushes[0]  # the feature itself pulls the value down
    # a field sent to review is explained by what pulled it down: this feature's words
    assert phrase("ocr_alone_agree", 0.0, pushes[1]) == "reads otherwise when read again alone"


def test_a_value_read_alone_as_another_date_is_trusted_less_than_a_garbled_reading():
    """``ocr_alone_alt`` through ``score``: the same date whose year, read alone, is another
    year (a date too: one of the two readings misread a digit) gets a lower confidence than when
    the second reading is garbled (no date: more likely the second reading's own failure), and
    ``explain`` shows the feature pulling it down, in a review reason's words."""
    import re

    engine, ds, rec, field, value, records, row, read_alone_as = _scanned_date("ocr_alone_alt")
    year = re.search(r"(19|20)\d\d", value).group()

    def year_as(y):
        return lambda t: t.replace(year, y)

    docs = {
        "another": read_alone_as(year_as(str(int(year) - 1))),
        "garbled": read_alone_as(year_as("2O?A")),
    }
    got = {
        k: next(s for s in engine.score(records, ds.schema, {rec.doc_id: d}) if s.field == field)
        for k, d in docs.items()
    }
    assert got["another"].confidence < got["garbled"].confidence
    col = FEATURE_NAMES.index("ocr_alone_alt")
    expl = {k: engine.explain(records, ds.schema, {rec.doc_id: d}) for k, d in docs.items()}
    assert expl["another"].data[row, col] == 1.0 and expl["garbled"].data[row, col] == 0.0
    push = expl["another"].values[row, col]
    assert push < 0
    assert phrase("ocr_alone_alt", 1.0, push) == (
        "read again alone, it reads as another value of its type"
    )


def test_a_total_the_page_does_not_add_up_to_loses_confidence_and_says_so():
    """The default model uses ``page_sum``: through ``score``, the same reading of an invoice's
    gross total gets a lower confidence when the page's printed amounts no longer add up to it
    (the net amount's digits changed on the page, nothing else), and ``explain`` shows the
    feature pulling it down, in the words a review reason would use."""
    from confidence.calls.consistency import field_roles
    from confidence.documents.search import document_index
    from confidence.features.page_arithmetic import document_amounts

    engine = ConfidenceEngine.load()
    assert "page_sum" in engine.feature_names_
    ds = Dataset.open(dataset_dir())
    roles = {r: n for n, r in field_roles(ds.schema).items()}
    gross, net = roles["gross"], roles["net"]
    col = FEATURE_NAMES.index("page_sum")

    def broken(doc, value):
        """The document with the printed net amount's digits shifted by one (``100`` -> ``211``)."""
        m = document_index(doc).find(value, "amount")
        page = doc.pages[m.page]
        words = list(page.words)
        for i in m.indices:
            t = words[i].text
            words[i] = replace(words[i], text="".join(
                str((int(c) + 1) % 10) if c.isdigit() else c for c in t))  # fmt: skip
        pages = list(doc.pages)
        pages[m.page] = replace(page, words=tuple(words))
        return replace(doc, pages=tuple(pages))

    checked = 0
    for rec in ds.records:
        doc = ds.load_document(rec)
        if not (rec.fields.get(gross) and rec.fields.get(net)):
            continue
        other = broken(doc, rec.fields[net])
        records = [{"doc_id": rec.doc_id, "fields": {gross: rec.fields[gross]},
                    "mapper": {gross: rec.fields[gross]}}]  # fmt: skip
        rows = [engine.explain(records, ds.schema, {rec.doc_id: d}) for d in (doc, other)]
        i = [s.field for s in engine.score(records, ds.schema, {rec.doc_id: doc})].index(gross)
        if [r.data[i, col] for r in rows] != [1.0, 0.0]:
            continue  # the total is the sum of other printed amounts too
        assert document_amounts(other) != document_amounts(doc)
        same, less = (
            next(s for s in engine.score(records, ds.schema, {rec.doc_id: d}) if s.field == gross)
            for d in (doc, other)
        )
        assert less.confidence < same.confidence
        push = rows[1].values[i, col]
        assert push < 0
        assert phrase("page_sum", 0.0, push) == "does not add up with the page's amounts"
        checked += 1
    assert checked >= 1
