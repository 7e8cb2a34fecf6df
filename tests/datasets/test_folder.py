"""Dataset folder format: LabelRecord, Dataset.open (strict and lenient), split, DatasetWriter."""

from __future__ import annotations

import json
import string
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.datasets.folder import (
    Dataset,
    DatasetWriter,
    LabelRecord,
    Problem,
    WriteSummary,
    write_dataset,
)
from confidence.errors import DatasetError, DocumentError
from confidence.schema import Field, Schema

SCHEMA = Schema("t", (Field("total", "amount"), Field("date", "date"), Field("name", "text")))


def make_dataset(tmp_path, lines, schema=SCHEMA, files=None):
    """A dataset folder with raw label lines (strings or dicts) and empty document files."""
    root = tmp_path / "ds"
    (root / "files").mkdir(parents=True)
    schema.save(root / "schema.json")
    for name in files if files is not None else [f"d{i}.pdf" for i in range(10)]:
        (root / "files" / name).write_bytes(b"%PDF-1.4\n")
    text = "\n".join(ln if isinstance(ln, str) else json.dumps(ln) for ln in lines)
    (root / "labels.jsonl").write_text(text + "\n", encoding="utf-8")
    return root


def line(i, **fields):
    return {"doc_id": f"d{i}", "file": f"files/d{i}.pdf", "fields": fields}


# ---------------------------------------------------------------- LabelRecord


def test_record_semantics_null_absent_missing_unlabelled():
    r = LabelRecord("a", "files/a.pdf", {"total": "9.00", "date": None})
    assert r.present == ("total",)
    assert r.absent == ("date",)
    assert r.labelled == ("total", "date")
    assert not r.is_labelled("name")
    assert "meta" not in r.to_dict()  # optional key only written when there is meta


values = st.one_of(st.none(), st.text(max_size=20))
names = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=8)
metas = st.dictionaries(names, st.one_of(st.integers(), st.text(max_size=5), st.booleans()))


@settings(max_examples=60, deadline=None)
@given(
    doc_id=st.text(min_size=1, max_size=10).filter(str.strip),
    fields=st.dictionaries(names, values, max_size=5),
    meta=metas,
)
def test_record_round_trip_through_json(doc_id, fields, meta):
    r = LabelRecord(doc_id, "files/x.png", fields, meta)
    back = LabelRecord.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r
    assert hash(back) == hash(r)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1, 2], "JSON object"),
        ({"file": "f", "fields": {}}, "doc_id"),
        ({"doc_id": "a", "fields": {}}, "'file'"),
        ({"doc_id": "a", "file": "f", "fields": ["x"]}, "'fields'"),
        ({"doc_id": "a", "file": "f", "fields": {"x": [1]}}, "list value"),
        ({"doc_id": "a", "file": "f", "fields": {}, "meta": "x"}, "'meta'"),
    ],
)
def test_record_from_dict_refuses_bad_shapes(obj, message):
    with pytest.raises(DatasetError, match=message):
        LabelRecord.from_dict(obj)


def test_record_numbers_become_text():
    r = LabelRecord.from_dict({"doc_id": "a", "file": "f", "fields": {"total": 9.5, "n": 3}})
    assert r.fields == {"total": "9.5", "n": "3"}


# ---------------------------------------------------------------- Dataset.open


def test_open_valid_dataset(tmp_path):
    root = make_dataset(
        tmp_path,
        [
            line(0, total="9.00", date=None),
            {**line(1, total="1"), "meta": {"layout": "a", "degradations": ["blur"]}},
            "",
        ],
    )
    ds = Dataset.open(root, strict=True)
    assert len(ds) == 2 and ds.doc_ids == ("d0", "d1")
    assert ds.schema == SCHEMA
    assert ds["d0"].absent == ("date",) and not ds["d0"].is_labelled("name")
    assert ds["d1"].meta == {"layout": "a", "degradations": ["blur"]}
    assert ds.path_of("d0") == (root / "files" / "d0.pdf").resolve()
    assert ds.path_of(ds["d1"]).is_file()
    assert [r.doc_id for r in ds] == ["d0", "d1"] and "d1" in ds and ds.problems == ()
    with pytest.raises(KeyError, match="no document 'zz'"):
        ds["zz"]


BAD_LINES = [
    ("{not json", "line 2: not valid JSON"),
    (json.dumps({"doc_id": "", "file": "files/d1.pdf", "fields": {}}), "line 2: 'doc_id'"),
    (json.dumps(line(1, bogus="x")), "line 2: doc 'd1': fields not in schema.json: bogus"),
    (json.dumps({**line(1), "file": "files/none.pdf"}), "line 2: doc 'd1': file 'files/none.pdf'"),
    (json.dumps(line(0)), "line 2: duplicate doc_id 'd0' \\(first on line 1\\)"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_LINES)
def test_strict_open_names_line_and_reason(tmp_path, bad, message):
    root = make_dataset(tmp_path, [line(0, total="1"), bad, line(2, total="3")])
    with pytest.raises(DatasetError, match=message):
        Dataset.open(root, strict=True)


@pytest.mark.parametrize(("bad", "message"), BAD_LINES)
def test_lenient_open_skips_reports_and_keeps_the_rest(tmp_path, bad, message):
    root = make_dataset(tmp_path, [line(0, total="1"), bad, line(2, total="3")])
    with pytest.warns(UserWarning, match="1 label problem"):
        ds = Dataset.open(root)
    assert len(ds.problems) == 1
    p = ds.problems[0]
    assert isinstance(p, Problem) and p.line == 2
    assert pytest.importorskip("re").search(message, str(p))
    assert "d0" in ds and "d2" in ds
    if "bogus" in bad:  # unknown fields are dropped, the record is kept
        assert ds["d1"].fields == {}


def test_open_without_file_check_and_missing_parts(tmp_path):
    root = make_dataset(tmp_path, [line(0, total="1")], files=[])
    assert len(Dataset.open(root, check_files=False, strict=True)) == 1
    with pytest.raises(DatasetError, match="dataset folder not found"):
        Dataset.open(tmp_path / "nope")
    (root / "labels.jsonl").unlink()
    with pytest.raises(DatasetError, match="labels file not found"):
        Dataset.open(root)


def test_schema_with_unknown_type_is_fatal_even_when_lenient(tmp_path):
    root = make_dataset(tmp_path, [line(0, total="1")])
    (root / "schema.json").write_text('{"name": "s", "fields": [{"name": "x", "type": "money"}]}')
    with pytest.raises(DatasetError, match="unknown type 'money'"):
        Dataset.open(root)


def test_no_warning_when_clean(tmp_path):
    root = make_dataset(tmp_path, [line(0, total="1")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Dataset.open(root)


# ---------------------------------------------------------------- split


def _ds(n, meta=None):
    recs = [
        LabelRecord(f"d{i:03d}", f"files/d{i}.pdf", {}, (meta or {}) and meta(i)) for i in range(n)
    ]
    return Dataset(".", SCHEMA, recs)


def test_split_sizes_disjoint_and_deterministic():
    train, test = _ds(50).split(test_size=0.2, seed=3)
    assert (len(train), len(test)) == (40, 10)
    assert not set(train.doc_ids) & set(test.doc_ids)
    assert set(train.doc_ids) | set(test.doc_ids) == set(_ds(50).doc_ids)
    assert test.doc_ids == _ds(50).split(test_size=0.2, seed=3)[1].doc_ids
    assert test.doc_ids != _ds(50).split(test_size=0.2, seed=4)[1].doc_ids


def test_split_does_not_depend_on_line_order():
    ds = _ds(30)
    shuffled = Dataset(".", SCHEMA, reversed(ds.records))
    assert set(ds.split(seed=1)[1].doc_ids) == set(shuffled.split(seed=1)[1].doc_ids)


def test_split_by_meta_keeps_groups_together():
    ds = _ds(40, meta=lambda i: {"layout": f"L{i % 8}"})
    train, test = ds.split(by="meta.layout", test_size=0.25, seed=0)
    layouts = lambda d: {r.meta["layout"] for r in d}  # noqa: E731
    assert len(layouts(test)) == 2 and not layouts(train) & layouts(test)
    assert len(train) + len(test) == 40


def test_split_validation():
    with pytest.raises(ValueError, match="test_size"):
        _ds(5).split(test_size=1.0)
    with pytest.raises(ValueError, match=r"meta\.KEY"):
        _ds(5).split(by="layout")
    with pytest.raises(DatasetError, match="need at least 2"):
        _ds(5, meta=lambda i: {"k": 1}).split(by="meta.k")


# ---------------------------------------------------------------- writer


def test_writer_round_trip_and_line_by_line(tmp_path):
    src = tmp_path / "scan.PNG"
    src.write_bytes(b"\x89PNG fake")
    out = tmp_path / "out"
    with DatasetWriter(out, SCHEMA) as w:
        w.add("a", {"total": "1.00", "date": None}, source=src, meta={"k": 1})
        # the line is on disk before the writer closes: an interrupted run keeps what it wrote
        assert (out / "labels.jsonl").read_text().count("\n") == 1
        target = w.file_path("b", ".pdf")
        target.write_bytes(b"%PDF")
        w.add("b", {"name": "x"}, source=target)
        w.add("c", {}, data=b"%PDF-1.4", suffix=".pdf")
        w.skip("d", "unreadable")
    ds = Dataset.open(out, strict=True)
    assert ds.doc_ids == ("a", "b", "c")
    assert ds["a"].file == "files/a.png" and ds.path_of("a").read_bytes() == b"\x89PNG fake"
    assert ds["a"].meta == {"k": 1} and ds["a"].absent == ("date",)
    s = w.summary()
    assert (s.n_written, s.skipped) == (3, (("d", "unreadable"),))
    assert WriteSummary.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert "skipped 1" in str(s) and "d: unreadable" in str(s)


def test_writer_refuses_bad_input(tmp_path):
    src = tmp_path / "a.pdf"
    src.write_bytes(b"%PDF")
    with DatasetWriter(tmp_path / "o", SCHEMA) as w:
        w.add("a", {}, source=src)
        with pytest.raises(DatasetError, match="written twice"):
            w.add("a", {}, source=src)
        with pytest.raises(DatasetError, match="not in schema 't': bogus"):
            w.add("b", {"bogus": "1"}, source=src)
        with pytest.raises(DatasetError, match="cannot name a file"):
            w.add("x/y", {}, source=src)
        with pytest.raises(DocumentError, match="file not found"):
            w.add("c", {}, source=tmp_path / "missing.pdf")
        with pytest.raises(ValueError, match="exactly one"):
            w.add("d", {})
    with pytest.raises(DatasetError, match="already holds a dataset"):
        DatasetWriter(tmp_path / "o", SCHEMA).__enter__()
    assert len(Dataset.open(tmp_path / "o", strict=True)) == 1


def test_writer_overwrite_replaces_files(tmp_path):
    src = tmp_path / "a.pdf"
    src.write_bytes(b"%PDF")
    with DatasetWriter(tmp_path / "o", SCHEMA) as w:
        w.add("old", {}, source=src)
    with DatasetWriter(tmp_path / "o", SCHEMA, overwrite=True) as w:
        w.add("new", {}, source=src)
    assert sorted(p.name for p in (tmp_path / "o" / "files").iterdir()) == ["new.pdf"]
    assert Dataset.open(tmp_path / "o").doc_ids == ("new",)


def test_writer_hard_links(tmp_path):
    src = tmp_path / "a.pdf"
    src.write_bytes(b"%PDF")
    with DatasetWriter(tmp_path / "o", SCHEMA, link=True) as w:
        w.add("a", {}, source=src)
    assert (tmp_path / "o" / "files" / "a.pdf").samefile(src)


def test_write_dataset_copies_and_reports_missing(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "x.pdf").write_bytes(b"%PDF")
    recs = [
        LabelRecord("x", "x.pdf", {"total": "2"}, {"m": 1}),
        LabelRecord("y", "y.pdf", {"total": "3"}),
    ]
    s = write_dataset(tmp_path / "o", SCHEMA, recs, source_dir=docs)
    assert s.n_written == 1 and s.skipped[0][0] == "y" and "not found" in s.skipped[0][1]
    ds = Dataset.open(tmp_path / "o", strict=True)
    assert ds["x"] == LabelRecord("x", "files/x.pdf", {"total": "2"}, {"m": 1})


# ---------------------------------------------------------------- ingestion (real components)


@pytest.mark.slow
def test_load_document_and_documents_stream(tmp_path):
    documents = pytest.importorskip("confidence.documents")
    if not hasattr(documents, "load_many"):
        pytest.skip("confidence.documents is not complete yet")
    reportlab_canvas = pytest.importorskip("reportlab.pdfgen.canvas")
    pdf = tmp_path / "inv.pdf"
    c = reportlab_canvas.Canvas(str(pdf))
    c.drawString(72, 720, "Invoice total 42.00")
    c.save()
    with DatasetWriter(tmp_path / "o", SCHEMA) as w:
        w.add("good", {"total": "42.00"}, source=pdf)
        w.add("bad", {"total": None}, data=b"", suffix=".pdf")  # zero bytes: a DocumentError
    ds = Dataset.open(tmp_path / "o")
    doc = ds.load_document("good")
    assert doc.doc_id == "good" and "42.00" in " ".join(w.text for w in doc.pages[0].words)
    got = list(ds.documents(n_jobs=1))
    assert [r.doc_id for r, _ in got] == ["good", "bad"]
    assert isinstance(got[1][1], DocumentError)
    assert got[0][1].doc_id == "good" and got[0][1].to_dict() == doc.to_dict()
