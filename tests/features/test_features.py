"""Feature families and the assembler: hand-computed values, missing-as-NaN, invariances."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from confidence.errors import DatasetError
from confidence.features import logprobs
from confidence.features.build import (
    FEATURE_NAMES,
    feature_matrix,
    field_features,
    reported_value,
)
from confidence.llm.base import TokenLogprob
from confidence.readings import FieldReading
from confidence.schema import FIELD_TYPES, Field
from confidence.types import Document, ImageQuality, Page, QualityGrid, Word

DOCS = Path(__file__).resolve().parents[2] / "docs" / "features.md"


def W(text, x0, y0, x1, y1, conf=1.0, line=0, font=None):
    return Word(text, (x0, y0, x1, y1), ocr_conf=conf, line_id=line, font_size=font)


def make_doc(words=None, quality=None, grid=None, source="ocr"):
    words = words or (
        W("ACME", 0.10, 0.05, 0.20, 0.08, 0.99, line=0, font=16.0),
        W("Corp", 0.21, 0.05, 0.30, 0.08, 0.98, line=0, font=16.0),
        W("Date:", 0.10, 0.15, 0.16, 0.17, 0.95, line=1, font=10.0),
        W("25/12/2018", 0.20, 0.15, 0.32, 0.17, 0.85, line=1, font=10.0),
        W("Total", 0.50, 0.80, 0.56, 0.82, 0.93, line=2, font=10.0),
        W("1,234.50", 0.70, 0.80, 0.80, 0.82, 0.70, line=2, font=12.0),
    )
    page = Page(1, 850, 1100, tuple(words), source, 100.0, quality=quality, grid=grid)
    return Document("doc-1", "doc-1.png", (page,))


def tok(token, lp, *top):
    return TokenLogprob(token, lp, tuple(top))


def same(a, b):
    """Equal rows with NaN == NaN."""
    return np.array_equal(np.asarray(a, float), np.asarray(b, float), equal_nan=True)


# -- logprobs -------------------------------------------------------------------------------------
def test_logprob_stats_hand_computed_three_tokens():
    r = FieldReading(
        "12.0",
        (
            tok("1", -0.1, ("1", -0.1), ("7", -2.5)),
            tok("2", -0.5, ("3", -1.2), ("2", -0.5)),  # alternatives in any order
            tok(".0", -0.05),  # no alternatives: skipped by the top-k statistics
        ),
    )
    mean, mn, total, first, ent, margin, top1, n = logprobs.token_stats(r)
    assert mean == pytest.approx(-0.65 / 3)
    assert (mn, first, n) == (-0.5, -0.1, 3.0)
    assert total == pytest.approx(-0.65)

    def h(*lps):
        ps = [math.exp(v) for v in lps]
        tail = 1 - sum(ps)
        return -sum(p * math.log(p) for p in ps) - tail * math.log(tail)

    assert ent == pytest.approx((h(-0.1, -2.5) + h(-0.5, -1.2)) / 2)
    m1 = math.exp(-0.1) - math.exp(-2.5)
    m2 = math.exp(-0.5) - math.exp(-1.2)
    assert margin == pytest.approx((m1 + m2) / 2)
    assert top1 == 1.0


def test_logprob_chosen_token_not_top1_and_outside_topk():
    r = FieldReading("x", (tok("x", -3.0, ("y", -0.1), ("z", -2.0)),))
    stats = dict(zip(logprobs._STATS, logprobs.token_stats(r), strict=True))
    assert stats["top1_rate"] == 0.0
    # The chosen token joins the alternatives; the entropy stays below log(k + 1).
    assert 0 < stats["entropy"] <= math.log(4)


def test_missing_logprobs_are_nan_not_zero():
    stats = logprobs.token_stats(FieldReading("9.00", None))
    assert all(math.isnan(v) for v in stats)
    absent = logprobs.token_stats(FieldReading(None, ()))
    assert all(math.isnan(v) for v in absent[:-1]) and absent[-1] == 0.0
    assert all(math.isnan(v) for v in logprobs.token_stats(None))
    f = field_features(Field("total", "amount"), make_doc(), FieldReading("9.00", None), None)
    assert all(math.isnan(f[k]) for k in logprobs.NAMES)


# -- assembler ------------------------------------------------------------------------------------
def test_vector_length_and_names():
    f = field_features(Field("total", "amount"), make_doc(), FieldReading("1,234.50"), None)
    assert list(f) == list(FEATURE_NAMES)
    assert len(FEATURE_NAMES) == len(set(FEATURE_NAMES)) >= 35
    assert all(isinstance(v, float) for v in f.values())


def test_features_independent_of_field_name():
    doc = make_doc()
    h, m = FieldReading("1,234.50", (tok("1", -0.2),)), FieldReading("1234.50")
    a = field_features(Field("total", "amount"), doc, h, m)
    b = field_features(Field("grand_total_eur", "amount", "other words"), doc, h, m)
    assert same(list(a.values()), list(b.values()))
    assert not any("total" in name for name in FEATURE_NAMES)


def test_type_one_hot():
    doc = make_doc()
    for t in FIELD_TYPES:
        f = field_features(Field("x", t), doc, FieldReading("ACME Corp"), None)
        hot = [f[f"type_{u}"] for u in FIELD_TYPES]
        assert sum(hot) == 1.0 and f[f"type_{t}"] == 1.0


def test_agreement_and_location_found_value():
    doc = make_doc()
    f = field_features(
        Field("total", "amount"),
        doc,
        FieldReading("1,234.50"),
        FieldReading("1234.5", label="Total"),
    )
    assert f["agree_both_present"] == 1.0 and f["agree_hunter_only"] == 0.0
    assert f["agree_equal"] == 1.0
    assert f["agree_num_reldiff"] == 0.0
    assert math.isnan(f["agree_date_diff_days"])
    assert f["agree_mapper_has_label"] == 1.0
    assert f["ocr_h_found"] == 1.0 and f["ocr_h_exact"] == 1.0 and f["ocr_h_score"] == 1.0
    assert f["ocr_h_conf_mean"] == f["ocr_h_conf_min"] == 0.70
    assert f["ocr_h_n_occurrences"] == 1.0
    assert f["ocr_label_conf"] == 0.93
    assert f["ocr_source_pdf"] == 0.0
    assert f["lay_x_center"] == pytest.approx(0.75) and f["lay_y_center"] == pytest.approx(0.81)
    assert f["lay_label_left"] == 1.0 and f["lay_label_dx"] == pytest.approx(0.14)
    assert f["lay_line_rank"] == 1.0  # last of three lines
    assert f["lay_font_rel"] == pytest.approx(12.0 / 11.0)  # median of 16,16,10,10,10,12 is 11
    assert f["lay_n_words"] == 1.0 and f["lay_in_table"] == 0.0


def test_dates_compared_by_type():
    doc = make_doc()
    f = field_features(
        Field("d", "date"), doc, FieldReading("2018-12-25"), FieldReading("27/12/2018")
    )
    assert f["agree_equal"] == 0.0 and f["agree_date_diff_days"] == 2.0
    # The Hunter's ISO date is found through its type: 25/12/2018 is printed.
    assert f["ocr_h_found"] == 1.0 and f["ocr_h_exact"] == 0.0 and f["ocr_h_score"] == 1.0
    assert f["lay_label_left"] == 1.0
    assert f["ocr_m_found"] == 1.0 and f["ocr_m_score"] < 1.0


def test_hallucinated_absent_field():
    f = field_features(Field("po", "id"), make_doc(), FieldReading("PO-99812"), FieldReading(None))
    assert f["agree_hunter_only"] == 1.0 and f["agree_both_present"] == 0.0
    assert f["ocr_h_found"] == 0.0 and f["ocr_h_score"] == 0.0
    assert math.isnan(f["ocr_h_conf_mean"])
    assert all(math.isnan(f[k]) for k in FEATURE_NAMES if k.startswith("lay_"))
    assert all(math.isnan(f[k]) for k in FEATURE_NAMES if k.startswith("ocr_m_"))
    assert math.isnan(f["agree_mapper_has_label"])


def test_both_empty():
    f = field_features(Field("po", "id"), make_doc(), None, FieldReading("  "))
    assert f["agree_both_empty"] == 1.0
    assert reported_value(None, FieldReading("  ")) is None


def test_swapping_calls_swaps_per_call_features():
    doc = make_doc()
    a, b = FieldReading("ACME Corp", (tok("A", -0.3),)), FieldReading("ACME Co", (tok("B", -1.0),))
    f = field_features(Field("c", "text"), doc, a, b)
    g = field_features(Field("c", "text"), doc, b, a)
    for k in ("agree_string_sim", "agree_len_ratio", "agree_place_distance", "agree_same_place"):
        assert same([f[k]], [g[k]])
    for fam in ("lp_", "ocr_"):
        for k in FEATURE_NAMES:
            if k.startswith(fam + "h_"):
                assert same([f[k]], [g[k.replace("_h_", "_m_", 1)]])


def test_word_order_permutation_invariance():
    doc = make_doc()
    words = list(doc.pages[0].words)
    random.Random(0).shuffle(words)
    shuffled = make_doc(tuple(words))
    h, m = FieldReading("1,234.50"), FieldReading("ACME Corp")
    for field in (Field("t", "amount"), Field("c", "text")):
        assert same(
            list(field_features(field, doc, h, m).values()),
            list(field_features(field, shuffled, h, m).values()),
        )


def test_feature_matrix_row_permutation_and_dtype():
    doc = make_doc()
    rows = [
        (Field("t", "amount"), doc, FieldReading("1,234.50"), None),
        (Field("d", "date"), doc, FieldReading("25/12/2018"), FieldReading("25.12.2018")),
        (Field("c", "text"), doc, None, FieldReading("ACME Corp")),
    ]
    X = feature_matrix(rows)
    assert X.dtype == np.float64 and X.shape == (3, len(FEATURE_NAMES))
    Y = feature_matrix(rows[::-1])
    assert np.array_equal(X[::-1], Y, equal_nan=True)
    assert same(X[0], list(field_features(*rows[0]).values()))


def test_quality_page_and_local():
    q = ImageQuality(99.0, 0.3, 0.9, 0.01, -1.5, 300.0, 20.0, 4.8, 1.2, 0.05)
    nan = float("nan")
    grid = QualityGrid(
        2, 2, (nan, 1.0, 3.0, 9.0), (0.1, 0.2, 0.3, 0.4), (0, 0, 0, 0.2), (0, 0, 0, 0.1)
    )
    doc = make_doc(quality=q, grid=grid)
    f = field_features(Field("t", "amount"), doc, FieldReading("1,234.50"), None)
    assert f["q_sharpness_log"] == pytest.approx(math.log(100.0))
    assert f["q_skew_abs"] == 1.5 and f["q_blockiness"] == 1.2
    # The total sits in the bottom-right tile.
    assert f["q_local_sharpness_log"] == pytest.approx(math.log(10.0))
    assert f["q_local_contrast"] == 0.4 and f["q_local_noise"] == 0.2
    assert f["q_local_sharpness_rel"] == pytest.approx(9.0 / 99.0)
    bare = field_features(Field("t", "amount"), make_doc(), FieldReading("1,234.50"), None)
    assert all(math.isnan(bare[k]) for k in FEATURE_NAMES if k.startswith("q_"))


def test_document_without_pages():
    doc = Document("empty", "empty.pdf", ())
    f = field_features(Field("t", "amount"), doc, FieldReading("9.00"), FieldReading("9.00"))
    assert f["ocr_h_found"] == 0.0 and math.isnan(f["ocr_source_pdf"])
    assert f["agree_equal"] == 1.0


def test_bad_rows_name_position_and_document():
    doc = make_doc()
    with pytest.raises(DatasetError, match=r"row 1 \(document doc-1, field t\).*FieldReading"):
        feature_matrix(
            [(Field("t", "amount"), doc, None, None), (Field("t", "amount"), doc, "9.00", None)]
        )
    with pytest.raises(DatasetError, match="Document"):
        field_features(Field("t", "amount"), {"pages": []}, None, None)


def test_every_feature_documented():
    text = DOCS.read_text(encoding="utf-8")
    for name in FEATURE_NAMES:
        documented = f"`{name}`" in text
        if not documented and "_m_" in name:  # Mapper rows share the Hunter rows' text
            documented = f"`{name.replace('_m_', '_h_', 1)}`" in text
        if not documented and name.startswith("type_"):
            documented = f"`{name[5:]}`" in text
        assert documented, f"{name} missing from docs/features.md"


@pytest.mark.slow
def test_end_to_end_digital_pdf(tmp_path):
    from confidence import documents
    from tests.fixtures.docs import make_invoice_pdf

    spec = make_invoice_pdf(tmp_path / "inv.pdf")
    doc = documents.load_document(spec.path)
    rows = [
        (Field("total", "amount"), doc, FieldReading("779.40"), FieldReading("779.40 GBP")),
        (Field("date", "date"), doc, FieldReading("2024-03-15"), None),
        (Field("po", "id"), doc, FieldReading("PO-4471"), None),
    ]
    X = feature_matrix(rows)
    f = dict(zip(FEATURE_NAMES, X[0], strict=True))
    assert f["ocr_h_exact"] == 1.0 and f["ocr_source_pdf"] == 1.0 and f["agree_equal"] == 1.0
    assert f["lay_label_left"] == 1.0 and f["lay_y_center"] > 0.7
    d = dict(zip(FEATURE_NAMES, X[1], strict=True))
    assert d["ocr_h_found"] == 1.0  # "15 March 2024" is printed
    p = dict(zip(FEATURE_NAMES, X[2], strict=True))
    assert p["ocr_h_found"] == 0.0 and math.isnan(p["lay_x_center"])


def test_page_features_describe_the_reported_reading():
    """A record reporting its Mapper (the embedded extraction) is described where the Mapper's
    value is on the page, not where the Hunter's is; hand-checked positions of make_doc."""
    from confidence.features.build import pageless_matrix, record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    doc = make_doc()
    schema = Schema("s", (Field("when", "date"),))
    hunter = CallResult("hunter", {"when": FieldReading("1,234.50")})  # the total's place
    mapper = CallResult("mapper", {"when": FieldReading("25/12/2018", label="Date:")})
    col = {n: i for i, n in enumerate(FEATURE_NAMES)}

    def one(meta):
        rec = RunRecord("doc-1", hunter, mapper, meta=meta)
        return record_rows([rec], schema, documents={"doc-1": doc})

    by_mapper, by_hunter = one({"reported": "mapper"}), one({})
    assert by_mapper.values == ["25/12/2018"] and by_hunter.values == ["1,234.50"]
    assert by_mapper.X[0, col["lay_y_center"]] == pytest.approx(0.16)
    assert by_hunter.X[0, col["lay_y_center"]] == pytest.approx(0.81)
    assert by_mapper.X[0, col["ocr_value_chars"]] == len("25122018")  # folded: digits only
    assert by_hunter.X[0, col["ocr_value_chars"]] == len("123450")
    # the per-reading columns do not depend on which one is reported
    per_call = [i for n, i in col.items() if n.startswith(("ocr_h_", "ocr_m_", "agree_", "lp_"))]
    assert same(by_mapper.X[0, per_call], by_hunter.X[0, per_call])
    # without the page only the value length follows the reported reading
    f = Field("when", "date")
    h, m = hunter.fields["when"], mapper.fields["when"]
    rows = pageless_matrix([(f, doc, h, m, "mapper"), (f, doc, h, m)])
    assert rows[:, col["ocr_value_chars"]].tolist() == [8.0, 6.0]
    with pytest.raises(DatasetError, match="reported"):
        feature_matrix([(f, doc, h, m, "neither")])


def test_the_mappers_own_probability_is_a_feature_with_and_without_the_page():
    from confidence.features.build import FEATURE_NAMES, record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    schema = Schema("s", (Field("total", "amount"), Field("po", "id"), Field("vat", "amount")))
    hunter = CallResult("hunter", {k: FieldReading("9.00") for k in ("total", "po", "vat")})
    mapper = CallResult(
        "mapper", {"total": FieldReading("9.00", prob=0.75), "po": FieldReading(None, prob=0.5)}
    )
    col = FEATURE_NAMES.index("rd_m_prob")
    doc = make_doc()
    rec = RunRecord(doc.doc_id, hunter, mapper)
    for docs in (None, {doc.doc_id: doc}):
        got = record_rows([rec], schema, docs).X[:, col]
        assert got[:2].tolist() == [0.75, 0.5] and math.isnan(got[2])  # vat: the Mapper gave none
    # and it survives the record's round trip
    back = RunRecord.from_dict(rec.to_dict())
    assert back.mapper.fields["po"].prob == 0.5 and back.hunter.fields["total"].prob is None


def test_a_value_reported_for_two_fields_is_flagged_for_both():
    from confidence.features.consistency import values_batch

    doc = make_doc()
    f = {n: Field(n, t) for n, t in (("gross", "amount"), ("due", "amount"), ("po", "id"))}
    col = 2  # cons_shared
    rows = [
        (f["gross"], doc, FieldReading("1,234.50"), FieldReading("1 234.50"), "mapper"),
        (f["due"], doc, FieldReading("99.00"), FieldReading("1234.50"), "mapper"),
        (f["po"], doc, FieldReading("A-1"), FieldReading(None), "mapper"),
    ]
    got = values_batch(rows)[:, col]
    assert got[:2].tolist() == [1.0, 1.0] and math.isnan(got[2])  # po: nothing reported
    # the Hunter's values are reported by default: 99.00 is read once
    hunter_rows = [r[:4] for r in rows]
    assert values_batch(hunter_rows)[:, col].tolist() == [0.0, 0.0, 0.0]
    # another document's equal value does not count
    other = Document("doc-2", "doc-2.png", doc.pages)
    apart = [rows[0], (rows[1][0], other, *rows[1][2:])]
    assert values_batch(apart)[:, col].tolist() == [0.0, 0.0]


def test_a_page_read_on_a_restored_raster_is_a_feature():
    """``ocr_page_restored``: 1 on a page whose words come from a restored raster (the note
    ingestion writes, :data:`confidence.documents.FAINT_PRINT_NOTE`), 0 on a page read as it
    lies, NaN without the document."""
    from dataclasses import replace

    from confidence.documents import FAINT_PRINT_NOTE
    from confidence.features.build import record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    doc = make_doc()
    faded = replace(
        doc,
        pages=tuple(
            replace(p, notes=(f"{FAINT_PRINT_NOTE} flattened (1 -> 2)",)) for p in doc.pages
        ),
    )
    schema = Schema("s", (Field("when", "date"),))
    reading = CallResult("mapper", {"when": FieldReading("25/12/2018", label="Date:")})
    rec = RunRecord(doc.doc_id, reading, reading)
    col = FEATURE_NAMES.index("ocr_page_restored")
    got = [
        record_rows([rec], schema, docs).X[0, col]
        for docs in ({doc.doc_id: doc}, {doc.doc_id: faded}, None)
    ]
    assert got[:2] == [0.0, 1.0] and math.isnan(got[2])


@pytest.mark.parametrize(
    "field_type,printed,alone,expected",
    [
        ("date", "25/12/2018", "26/12/2018", 1.0),  # another real date: one of them misread
        ("date", "25/12/2018", "25/12/2O18", 0.0),  # the second reading is no date
        ("date", "25/12/2018", "25-12-2018", 0.0),  # the same digits: agrees
        ("date", "25/12/2018", "", 0.0),  # read as nothing alone
        ("date", "25/12/2018", "45/12/2018", 0.0),  # no calendar date
        ("amount", "55.20", "53.20", 1.0),
        ("amount", "RM8.60", "8.60", 0.0),  # the same amount spelt otherwise
        ("id", "INV-1234", "INV-1284", 1.0),  # no syntax: any letters or digits
        ("id", "INV-1234", "--", 0.0),
    ],
)
def test_a_value_read_alone_as_another_value_of_its_type(field_type, printed, alone, expected):
    """``ocr_alone_alt``: the reported value's words read alone make another well-formed value
    of the field's type (NaN when no word was read again)."""
    from dataclasses import replace

    from confidence.features.build import record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    word = replace(W(printed, 0.3, 0.1, 0.45, 0.12, 0.9, line=0), alone=alone)
    label = W("Ref", 0.1, 0.1, 0.2, 0.12, 0.9, line=0)
    doc = Document("doc-1", "doc-1.png", (Page(1, 850, 1100, (label, word), "ocr", 100.0),))
    schema = Schema("s", (Field("v", field_type),))
    rec = RunRecord("doc-1", *(CallResult("mapper", {"v": FieldReading(printed)}),) * 2)
    col = FEATURE_NAMES.index("ocr_alone_alt")
    assert record_rows([rec], schema, {"doc-1": doc}).X[0, col] == expected
    plain = replace(doc, pages=(replace(doc.pages[0], words=(label, replace(word, alone=None))),))
    assert math.isnan(record_rows([rec], schema, {"doc-1": plain}).X[0, col])
    assert math.isnan(record_rows([rec], schema, None).X[0, col])


def test_a_value_read_otherwise_alone_is_a_feature():
    """``ocr_alone_agree``: the share of the reported value's words whose second reading alone
    (``Word.alone``, ingestion version 11) says the same letters and digits; NaN when none of its
    words was read again, or without the document."""
    from dataclasses import replace

    from confidence.features.build import record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    def with_alone(**alone):
        doc = make_doc()
        words = tuple(replace(w, alone=alone.get(w.text)) for w in doc.pages[0].words)
        return replace(doc, pages=(replace(doc.pages[0], words=words),))

    schema = Schema("s", (Field("when", "date"), Field("who", "text")))
    reading = CallResult(
        "mapper", {"when": FieldReading("25/12/2018"), "who": FieldReading("ACME Corp")}
    )
    rec = RunRecord("doc-1", reading, reading)
    col = FEATURE_NAMES.index("ocr_alone_agree")

    def got(doc):
        return record_rows([rec], schema, None if doc is None else {"doc-1": doc}).X[:, col]

    when, who = got(with_alone(**{"25/12/2018": "25-12-2018"}))  # punctuation aside: the same
    assert when == 1.0 and math.isnan(who)  # a name has no digit: never read again
    assert got(with_alone(**{"25/12/2018": "26/12/2018"}))[0] == 0.0
    assert got(with_alone(**{"25/12/2018": ""}))[0] == 0.0  # read as nothing alone
    assert math.isnan(got(make_doc())[0])  # a page ingested before the second reading
    assert math.isnan(got(None)[0])
    # two words, one read otherwise: half agree
    words = (
        replace(W("12", 0.1, 0.1, 0.15, 0.12, 0.9, line=0), alone="12"),
        replace(W("500", 0.16, 0.1, 0.2, 0.12, 0.9, line=0), alone="600"),
    )
    two = Document("doc-1", "doc-1.png", (Page(1, 850, 1100, words, "ocr", 100.0),))
    rec2 = RunRecord("doc-1", *(CallResult("mapper", {"n": FieldReading("12 500")}),) * 2)
    x = record_rows([rec2], Schema("s", (Field("n", "id"),)), {"doc-1": two}).X
    assert x[0, col] == 0.5


def _receipt(*rows):
    words = []
    for i, (label, amount) in enumerate(rows):
        y = 0.1 + 0.05 * i
        words += [W(label, 0.1, y, 0.3, y + 0.02, line=i), W(amount, 0.6, y, 0.7, y + 0.02, line=i)]
    return Document("doc-1", "doc-1.png", (Page(1, 850, 1100, tuple(words), "ocr", 100.0),))


def test_page_sum_says_whether_an_amount_adds_up_as_its_role_says():
    """``page_sum``: a total is the sum of two other printed amounts, a net or a tax a part of a
    printed sum (hand-computed: 100.00 + 19.00 = 119.00; 119.00 + 81.00 = 200.00); the role comes
    from the field's concept, so a renamed total keeps it and a field with no role is NaN, as is a
    row without its document."""
    from confidence.features.build import record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    doc = _receipt(
        ("Subtotal", "100.00"), ("Tax", "19.00"), ("Total", "119.00"),
        ("Cash", "200.00"), ("Change", "81.00"),
    )  # fmt: skip
    col = FEATURE_NAMES.index("page_sum")

    def got(field, value, document=doc):
        rec = RunRecord("doc-1", *(CallResult("mapper", {field.name: FieldReading(value)}),) * 2)
        docs = None if document is None else {"doc-1": document}
        return record_rows([rec], Schema("s", (field,)), docs).X[0, col]

    total, tax = Field("total", "amount"), Field("tax_amount", "amount", "Total tax amount")
    assert got(total, "119.00") == 1.0
    assert got(Field("grand_total_eur", "amount", "Amount to pay"), "RM 119.00") == 1.0
    assert got(total, "19.00") == 0.0  # the tax read as the total: no two amounts make it
    assert got(total, "81,00") == 0.0  # the change
    assert got(tax, "19.00") == 1.0 and got(tax, "119.00") == 1.0  # parts of 119.00, 200.00
    assert got(tax, "81.00") == 1.0 and got(tax, "7.00") == 0.0
    assert math.isnan(got(total, "0.00"))  # zero adds up with anything
    assert math.isnan(got(Field("note", "text"), "119.00"))  # no role
    # a unit price beside the total: both read as totals, so neither takes the role
    price = Field("unit_price", "amount", "Price of one unit")
    both = CallResult("mapper", {"total": FieldReading("119.00"), "unit_price": FieldReading("9")})
    x = record_rows([RunRecord("doc-1", both, both)], Schema("s", (total, price)), {"doc-1": doc})
    assert np.isnan(x.X[:, col]).all()
    assert math.isnan(got(total, "119.00", None))  # no page
    assert math.isnan(got(total, None))
    # the arithmetic is over the document's printed amounts: without the tax line, no sum
    alone = _receipt(("Subtotal", "100.00"), ("Total", "119.00"))
    assert got(total, "119.00", alone) == 0.0


def _header(*lines):
    """A receipt header: one OCR line per ``(y, text)``, words 0.05 wide from x = 0.1."""
    words = []
    for n, (y, text) in enumerate(lines):
        for k, tok in enumerate(text.split()):
            x = 0.1 + 0.06 * k
            words.append(W(tok, x, y, x + 0.05, y + 0.02, line=n))
    return Document("doc-1", "doc-1.png", (Page(1, 850, 1100, tuple(words), "ocr", 100.0),))


def test_block_edges_say_what_is_printed_right_above_and_below_a_block():
    """``edge_*`` (hand-computed: lines 0.02 high, 0.01 apart): an address cut before its
    postcode line has an address-like line right below it (1.0 for ``Leeds LS1 4AB``); the
    whole address has the phone line 0.5 line heights below (-1.5) and the name above; a total
    and a row without its document have none."""
    from confidence.features import block_edges
    from confidence.features.build import record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    doc = _header(
        (0.10, "Corner Shop"), (0.13, "12 Elm Street"), (0.16, "Leeds LS1 4AB"),
        (0.19, "Tel 0113 496 0000"), (0.40, "Total 9.00"),
    )  # fmt: skip
    cols = [FEATURE_NAMES.index(n) for n in block_edges.NAMES]

    def got(field, value, document=doc):
        rec = RunRecord("doc-1", *(CallResult("mapper", {field.name: FieldReading(value)}),) * 2)
        docs = None if document is None else {"doc-1": document}
        return [round(v, 2) for v in record_rows([rec], Schema("s", (field,)), docs).X[0, cols]]

    address = Field("address", "address")
    assert got(address, "12 Elm Street") == [0.5, 0.0, 0.5, 1.0]  # cut: a postcode line below
    assert got(address, "12 Elm Street Leeds LS1 4AB") == [0.5, 0.0, 0.5, -1.5]  # phone below
    whole = got(address, "Corner Shop 12 Elm Street Leeds LS1 4AB")
    assert all(map(math.isnan, whole[:2])) and whole[2:] == [0.5, -1.5]  # nothing above it
    assert got(Field("name", "text"), "Corner Shop")[2:] == [0.5, 0.4]  # a street line below
    assert all(math.isnan(v) for v in got(Field("total", "amount"), "9.00"))
    assert all(math.isnan(v) for v in got(address, "12 Elm Street", None))


def test_label_concept_says_whether_the_label_beside_a_value_names_its_field():
    """``lbl_*`` (hand-computed from the label vocabulary): the total before tax reported for
    the total with it sits beside a label naming the net amount (``names_other``); the total
    with tax beside one naming the field, the tax beside one naming the tax; a field of no
    concept and a row without its document have none."""
    from confidence.features import label_concept
    from confidence.features.build import record_rows
    from confidence.readings import CallResult, RunRecord
    from confidence.schema import Schema

    doc = _header(
        (0.10, "Corner Shop"), (0.30, "Total (excl. VAT) 8.00"), (0.33, "VAT 20% 1.60"),
        (0.36, "Grand total 9.60"), (0.40, "Cash 10.00"),
    )  # fmt: skip
    cols = [FEATURE_NAMES.index(n) for n in label_concept.NAMES]

    def got(field, value, document=doc):
        rec = RunRecord("doc-1", *(CallResult("mapper", {field.name: FieldReading(value)}),) * 2)
        docs = None if document is None else {"doc-1": document}
        return [float(v) for v in record_rows([rec], Schema("s", (field,)), docs).X[0, cols]]

    total = Field("total", "amount", "Total amount paid, tax included")
    assert got(total, "8.00") == [0.0, 1.0]  # "Total (excl. VAT)": a net amount
    assert got(total, "9.60") == [1.0, 0.0]
    assert got(total, "1.60") == [0.0, 1.0]  # the tax
    assert got(Field("net", "amount", "Total before tax"), "8.00") == [1.0, 0.0]
    assert all(math.isnan(v) for v in got(Field("remark", "text"), "Corner Shop"))
    assert all(math.isnan(v) for v in got(total, "9.60", None))
