"""The library's layout Mapper as second reading of one-reading records."""

from __future__ import annotations

from confidence.calls.second_reading import (
    LIBRARY_MAPPER_MODE,
    add_library_mapper,
    drop_mapper,
    library_mapper,
    needs_mapper,
)
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.schema import Field, Schema
from confidence.types import Document, Page, Word

SCHEMA = Schema("s", (Field("invoice_number", "id"), Field("total", "amount")))


def _doc(doc_id: str = "d1") -> Document:
    words = [
        ("Invoice", 0.10, 0.10), ("No:", 0.20, 0.10), ("INV-0042", 0.30, 0.10),
        ("Total:", 0.10, 0.50), ("9.00", 0.30, 0.50),
    ]  # fmt: skip
    ws = tuple(Word(t, (x, y, x + 0.08, y + 0.02), line_id=int(y * 100)) for t, x, y in words)
    return Document(doc_id, f"{doc_id}.pdf", (Page(1, 850, 1100, ws, "pdf", 100.0),))


def _hunter(values):
    return CallResult("hunter", {k: FieldReading(v) for k, v in values.items()}, mode="external")


def test_library_mapper_reads_labelled_values_without_an_llm():
    m = library_mapper(SCHEMA, _doc())
    assert m.kind == "mapper" and m.mode == LIBRARY_MAPPER_MODE and m.n_calls == 0
    assert m.fields["total"].value == "9.00" and m.fields["total"].tokens is None
    assert m.fields["invoice_number"].value == "INV-0042"


def test_only_one_reading_records_with_a_document_get_it():
    one = RunRecord("d1", _hunter({"total": "9.00"}), None)
    two = RunRecord("d2", _hunter({"total": "9.00"}), CallResult("mapper", {}))
    no_doc = RunRecord("d3", _hunter({"total": "9.00"}), None)
    failed = RunRecord("d4", None, None, status="error", error="unreadable")
    docs = {"d1": _doc("d1"), "d2": _doc("d2"), "d4": _doc("d4")}
    out = add_library_mapper([one, two, no_doc, failed], SCHEMA, docs)
    assert out[0].mapper.mode == LIBRARY_MAPPER_MODE
    assert out[0].meta["second_reading"] == "library_mapper"
    assert out[0].hunter == one.hunter
    assert out[1:] == [two, no_doc, failed]
    assert [needs_mapper(r) for r in (one, two, no_doc, failed)] == [True, False, True, False]


def test_drop_mapper_keeps_a_lone_mapper():
    lone = RunRecord("m", None, CallResult("mapper", {"total": FieldReading("1")}))
    both = RunRecord("b", _hunter({}), CallResult("mapper", {}))
    assert drop_mapper([lone, both]) == [
        lone,
        RunRecord("b", _hunter({}), None, meta={"reported": "hunter"}),
    ]


def test_a_one_reading_copy_reports_its_reading_not_the_second_opinion_added_to_it():
    """The embedded model's runs report the layout reader's value (``meta["reported"]``); the
    one-reading copies that ``extractconf train --single-reading`` and ``bench_byo`` make of them
    stand for a pipeline's own records, so what they report is the Hunter's value, and the
    library's Mapper added to them is a second opinion (it was the value scored, the layout
    reader's, so the model never saw a pipeline's value beside a sure layout reader)."""
    from confidence.features.build import record_rows

    run = RunRecord(
        "d1",
        _hunter({"invoice_number": "INV-0099", "total": "9.00"}),
        CallResult("mapper", {"invoice_number": FieldReading("INV-0042")}),
        meta={"reported": "mapper"},
    )
    docs = {"d1": _doc("d1")}
    assert record_rows([run], SCHEMA, docs).values == ["INV-0042", None]  # as recorded
    copy = add_library_mapper(drop_mapper([run]), SCHEMA, docs)
    rows = record_rows(copy, SCHEMA, docs)
    assert rows.values == ["INV-0099", "9.00"]  # the pipeline's own reading
    assert rows.mapper_values == ["INV-0042", "9.00"]  # the library's, beside it
