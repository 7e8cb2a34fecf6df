"""Corpus converters on tiny native-format fixtures, and ``extractconf convert``."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from confidence.cli import main
from confidence.datasets import cord, docile, funsd, generic, sroie
from confidence.datasets.folder import Dataset
from confidence.errors import DatasetError


def image(path, size=(60, 40)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", size, 255).save(path)
    return path


def labels(out):
    ds = Dataset.open(out, strict=True)  # every converter output must load strictly
    return {r.doc_id: r for r in ds}, ds


# ---------------------------------------------------------------- SROIE


@pytest.fixture
def sroie_src(tmp_path):
    src = tmp_path / "sroie"
    (src / "key").mkdir(parents=True)
    (src / "box").mkdir()
    keys = {
        "R1": {
            "company": "ACME SDN BHD",
            "date": "25/12/2018",
            "address": " 1 JALAN ",
            "total": "9.00",
        },
        "R2": {"company": "CAFÉ", "date": "01-01-2019", "address": "", "total": "3.50"},  # latin-1
        "R3": {"company": "NO TOTAL", "date": "02/02/2019", "address": "X"},  # total unlabelled
        "R4": {"company": "NO IMAGE", "date": "d", "address": "a", "total": "1"},
    }
    for doc_id, k in keys.items():
        enc = "latin-1" if doc_id == "R2" else "utf-8"
        (src / "key" / f"{doc_id}.txt").write_bytes(json.dumps(k, ensure_ascii=False).encode(enc))
    (src / "key" / "R5.txt").write_text("{broken")
    (src / "box" / "R1.txt").write_text(
        "1,2,3,2,3,4,1,4,ACME, SDN BHD\n5,6,7,6,7,8,5,8,TOTAL 9.00\nbad\n"
    )
    for doc_id in ("R1", "R2", "R5"):
        image(src / "img" / f"{doc_id}.jpg")
    image(tmp_path / "elsewhere" / "R3.jpg")
    return src


def test_sroie_converts_and_reports_skips(sroie_src, tmp_path):
    s = sroie.convert(sroie_src, tmp_path / "out", images=tmp_path / "elsewhere")
    recs, ds = labels(tmp_path / "out")
    assert sorted(recs) == ["R1", "R2", "R3"] and s.n_written == 3
    assert ds.schema == sroie.SCHEMA
    assert recs["R1"].fields == {
        "company": "ACME SDN BHD",
        "date": "25/12/2018",
        "address": "1 JALAN",
        "total": "9.00",
    }
    assert recs["R1"].meta == {"source": "sroie", "n_box_lines": 2}
    assert recs["R2"].fields["company"] == "CAFÉ" and recs["R2"].fields["address"] is None
    assert not recs["R3"].is_labelled("total")
    assert ds.path_of("R3").read_bytes() == (tmp_path / "elsewhere" / "R3.jpg").read_bytes()
    reasons = dict(s.skipped)
    assert "not valid JSON" in reasons["R5"] and "no image R4.jpg" in reasons["R4"]


def test_sroie_refuses_non_sroie_folder(tmp_path):
    with pytest.raises(DatasetError, match="no key/"):
        sroie.convert(tmp_path, tmp_path / "out")


# ---------------------------------------------------------------- CORD


def valid_line(category, *words, is_key=()):
    return {
        "category": category,
        "group_id": 1,
        "words": [
            {"text": w, "is_key": int(i in is_key), "row_id": 1, "quad": {"x1": 10 * i}}
            for i, w in enumerate(words)
        ],
    }


@pytest.fixture
def cord_src(tmp_path):
    src = tmp_path / "cord"
    gt = {
        "gt_parse": {
            "menu": [{"nm": "TEA", "price": "5,000"}],
            "sub_total": {"subtotal_price": "5,000", "tax_price": "500"},
            "total": {"total_price": "5,500", "cashprice": ["10,000", "10,000"]},
        }
    }
    lines = {
        "valid_line": [
            valid_line("menu.nm", "TEA"),
            valid_line("total.total_price", "TOTAL", "12.000", is_key=(0,)),
            valid_line("sub_total.tax_price", "1.000"),
            valid_line("sub_total.tax_price", "200"),  # two different taxes: ambiguous
        ]
    }
    hf = {"ground_truth": json.dumps({"gt_parse": {"total": {"total_price": "7"}}})}
    for split, name, data in (
        ("train", "receipt_00000", gt),
        ("train", "receipt_00001", lines),
        ("dev", "receipt_00000", hf),
        ("dev", "receipt_00002", {"meta": {}}),
        ("dev", "receipt_00003", gt),
    ):
        (src / split / "json").mkdir(parents=True, exist_ok=True)
        (src / split / "json" / f"{name}.json").write_text(json.dumps(data))
        if name != "receipt_00003":
            image(src / split / "image" / f"{name}.png")
    return src


def test_cord_gt_parse_valid_line_and_hf_rows(cord_src, tmp_path):
    s = cord.convert(cord_src, tmp_path / "out")
    recs, _ = labels(tmp_path / "out")
    assert sorted(recs) == ["dev-receipt_00000", "train-receipt_00000", "train-receipt_00001"]
    a = recs["train-receipt_00000"].fields
    assert (a["total_price"], a["subtotal"], a["tax"], a["cash"]) == (
        "5,500",
        "5,000",
        "500",
        "10,000",
    )
    assert a["discount"] is None  # CORD labels every element: not annotated = absent
    b = recs["train-receipt_00001"]
    assert b.fields["total_price"] == "12.000"  # the is_key word "TOTAL" is dropped
    assert not b.is_labelled("tax") and b.meta["ambiguous"] == ["tax"]
    assert recs["dev-receipt_00000"].fields["total_price"] == "7"
    reasons = dict(s.skipped)
    assert "neither 'gt_parse' nor 'valid_line'" in reasons["dev-receipt_00002"]
    assert "no image" in reasons["dev-receipt_00003"]


def test_cord_split_selects_one_folder(cord_src, tmp_path):
    s = cord.convert(cord_src, tmp_path / "out", split="train")
    assert s.n_written == 2 and not s.skipped
    with pytest.raises(DatasetError, match="for split 'test'"):
        cord.convert(cord_src, tmp_path / "o2", split="test")


def test_cord_valid_line_and_gt_parse_agree():
    gt = {
        "sub_total": {"subtotal_price": "1 000", "service_price": "50"},
        "total": {"total_price": "1 050"},
    }
    lines = [
        valid_line("sub_total.subtotal_price", "1", "000"),
        valid_line("sub_total.service_price", "50"),
        valid_line("total.total_price", "1", "050"),
    ]
    assert cord.fields_from_gt_parse(gt) == cord.fields_from_valid_line(lines)


# ---------------------------------------------------------------- DocILE


def ex(fieldtype, text, left, top, page=0):
    return {
        "fieldtype": fieldtype,
        "text": text,
        "bbox": [left, top, left + 0.1, top + 0.01],
        "page": page,
    }


@pytest.fixture
def docile_src(tmp_path):
    reportlab_canvas = pytest.importorskip("reportlab.pdfgen.canvas")
    src = tmp_path / "docile"
    (src / "annotations").mkdir(parents=True)
    (src / "pdfs").mkdir()
    ann = {
        "metadata": {"document_type": "tax_invoice", "language": "eng", "page_count": 1},
        "field_extractions": [
            ex("vendor_address", "Springfield", 0.1, 0.30),  # given out of reading order
            ex("vendor_address", "12 Main St", 0.1, 0.28),
            ex("document_id", "INV-7", 0.7, 0.1),
            ex("document_id", "INV-7", 0.7, 0.9),  # printed twice: kept once
            ex("tax_detail_rate", "20%", 0.5, 0.5),
            ex("amount_due", "1,200.00", 0.7, 0.8),
        ],
        "line_item_extractions": [ex("line_item_quantity", "3", 0.1, 0.5)],
    }
    (src / "annotations" / "docA.json").write_text(json.dumps(ann))
    (src / "annotations" / "docC.json").write_text(json.dumps(ann))  # its PDF is missing
    c = reportlab_canvas.Canvas(str(src / "pdfs" / "docA.pdf"))
    c.drawString(72, 720, "INV-7")
    c.save()
    (src / "dev.json").write_text(json.dumps(["docA", "docB", "docC"]))
    return src


def test_docile_kile_fields_and_absence(docile_src, tmp_path):
    s = docile.convert(docile_src, tmp_path / "out", split="dev")
    recs, ds = labels(tmp_path / "out")
    assert list(recs) == ["docA"]
    f = recs["docA"].fields
    assert f["vendor_address"] == "12 Main St\nSpringfield"
    assert f["document_id"] == "INV-7" and f["amount_due"] == "1,200.00"
    assert f["iban"] is None and len(f) == len(docile.KILE_TYPES)  # all KILE types labelled
    assert "tax_detail_rate" not in ds.schema and ds.schema["date_issue"].type == "date"
    assert recs["docA"].meta["document_type"] == "tax_invoice"
    assert recs["docA"].meta["split"] == "dev"
    reasons = dict(s.skipped)
    assert "no annotation" in reasons["docB"] and "not found" in reasons["docC"]


def test_docile_field_selection_and_tax_details(docile_src, tmp_path):
    docile.convert(docile_src, tmp_path / "o1", fields=("document_id", "tax_detail_rate"))
    recs, ds = labels(tmp_path / "o1")
    assert recs["docA"].fields == {"document_id": "INV-7", "tax_detail_rate": "20%"}
    assert ds.schema["tax_detail_rate"].type == "percent"
    with pytest.raises(DatasetError, match="not DocILE KILE field types: total"):
        docile.convert(docile_src, tmp_path / "o2", fields=("total",))
    with pytest.raises(DatasetError, match="split file not found; splits here: dev"):
        docile.convert(docile_src, tmp_path / "o3", split="val")


# ---------------------------------------------------------------- FUNSD


def entity(i, label, text, box, links=()):
    return {"id": i, "label": label, "text": text, "box": box, "linking": [list(p) for p in links]}


@pytest.fixture
def funsd_src(tmp_path):
    src = tmp_path / "funsd" / "training_data"
    (src / "annotations").mkdir(parents=True)
    form1 = [
        entity(0, "header", "ORDER FORM", [0, 0, 100, 10]),
        entity(1, "question", "Date:", [0, 20, 30, 30], [(1, 2)]),
        entity(2, "answer", "12/03/98", [40, 20, 90, 30], [(1, 2)]),
        entity(3, "question", "Fax #", [0, 40, 30, 50], []),  # empty slot: absent
        entity(4, "question", "Remarks", [0, 60, 30, 70], [(4, 6), (4, 5)]),
        entity(5, "answer", "see attached", [0, 80, 80, 90], [(4, 5)]),
        entity(6, "answer", "urgent", [0, 72, 60, 78], [(4, 6)]),
    ]
    form2 = [
        entity(0, "question", "DATE", [0, 20, 30, 30], [(0, 1)]),
        entity(1, "answer", "1/1/99", [40, 20, 90, 30], [(0, 1)]),
    ]
    for name, form in (("f1", form1), ("f2", form2)):
        (src / "annotations" / f"{name}.json").write_text(json.dumps({"form": form}))
        image(src / "images" / f"{name}.png")
    (src / "annotations" / "f3.json").write_text(json.dumps({"nope": 1}))
    return tmp_path / "funsd"


def test_funsd_questions_become_fields(funsd_src, tmp_path):
    s = funsd.convert(funsd_src, tmp_path / "out")
    recs, ds = labels(tmp_path / "out")
    assert ds.schema.names == ("date", "fax_no", "remarks")
    assert ds.schema["date"].type == "date" and ds.schema["fax_no"].type == "id"
    assert recs["train-f1"].fields == {
        "date": "12/03/98",
        "fax_no": None,
        "remarks": "urgent see attached",  # reading order, not link order
    }
    assert recs["train-f2"].fields == {"date": "1/1/99"}  # other forms' questions: unlabelled
    assert "no 'form' list" in dict(s.skipped)["train-f3"]


def test_funsd_min_docs(funsd_src, tmp_path):
    funsd.convert(funsd_src, tmp_path / "out", min_docs=2)
    recs, ds = labels(tmp_path / "out")
    assert ds.schema.names == ("date",) and recs["train-f1"].fields == {"date": "12/03/98"}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_funsd_key_name_is_a_clean_idempotent_identifier(text):
    name = funsd.key_name(text)
    assert re.fullmatch(r"([a-z0-9]+(_[a-z0-9]+)*)?", name) and len(name) <= funsd.MAX_KEY
    assert funsd.key_name(name) == name


# ---------------------------------------------------------------- generic


@pytest.fixture
def generic_src(tmp_path):
    src = tmp_path / "docs"
    image(src / "a.png")
    image(src / "sub" / "b.png")
    image(src / "c d.png")
    return src


def test_generic_csv(generic_src, tmp_path):
    (generic_src / "labels.csv").write_text(
        "file,invoice_date,total_amount,vendor\n"
        "a.png,2024-01-02,10.00,ACME\n"
        "sub/b.png,,5,\n"
        "missing.png,x,1,y\n"
        "c d.png,2024-03-04,7,Z\n"
        "a.png,1,2,3\n",
        encoding="utf-8",
    )
    s = generic.convert(generic_src, tmp_path / "out", types={"vendor": "text"})
    recs, ds = labels(tmp_path / "out")
    assert [f.type for f in ds.schema] == ["date", "amount", "text"]
    assert recs["a"].fields == {
        "invoice_date": "2024-01-02",
        "total_amount": "10.00",
        "vendor": "ACME",
    }
    assert recs["b"].fields == {"invoice_date": None, "total_amount": "5", "vendor": None}
    assert "c_d" in recs
    reasons = dict(s.skipped)
    assert "not found" in reasons["labels.csv line 4"]
    assert "duplicate doc_id 'a'" in reasons["labels.csv line 6"]
    generic.convert(generic_src, tmp_path / "o2", empty="unlabelled", limit=2)
    recs2, _ = labels(tmp_path / "o2")
    assert recs2["b"].fields == {"total_amount": "5"}


def test_generic_jsonl_with_schema(generic_src, tmp_path):
    from confidence.schema import Field, Schema

    schema = Schema("mine", (Field("total", "amount"), Field("po", "id")))
    rows = [
        {"file": "a.png", "doc_id": "A", "fields": {"total": "1", "po": None}, "meta": {"k": 1}},
        {"file": "sub/b.png", "total": "2"},
        {"file": "c d.png", "fields": {"bogus": "1"}},
    ]
    values = tmp_path / "values.jsonl"
    values.write_text("\n".join(json.dumps(r) for r in rows) + "\n[1]\n{bad\n")
    s = generic.convert(generic_src, tmp_path / "out", labels=values, schema=schema)
    recs, ds = labels(tmp_path / "out")
    assert ds.schema == schema
    assert recs["A"].fields == {"total": "1", "po": None} and recs["A"].meta == {
        "source": "generic",
        "k": 1,
    }
    assert recs["b"].fields == {"total": "2"}  # missing key = unlabelled
    reasons = dict(s.skipped)
    assert "fields not in the schema: bogus" in reasons["values.jsonl line 3"]
    assert "JSON object" in reasons["values.jsonl line 4"]
    assert "not valid JSON" in reasons["values.jsonl line 5"]


@pytest.mark.parametrize(
    ("name", "ftype"),
    [
        ("date_issue", "date"),
        ("vendor_address", "address"),
        ("amount_due", "amount"),
        ("Invoice_No", "id"),
        ("iban", "iban"),
        ("vendor_email", "email"),
        ("tax_rate", "percent"),
        ("customer_name", "text"),
    ],
)
def test_guess_type(name, ftype):
    assert generic.guess_type(name) == ftype


# ---------------------------------------------------------------- CLI


def test_cli_convert_exit_codes_and_summary(sroie_src, tmp_path, capsys):
    out = tmp_path / "cli"
    code = main(
        [
            "convert",
            "--from",
            "sroie",
            str(sroie_src),
            str(out),
            "--images",
            str(tmp_path / "elsewhere"),
        ]
    )
    text = capsys.readouterr().out
    assert code == 1  # some documents skipped
    assert "converted 3 document(s)" in text and "skipped 2" in text and "R4: no image" in text
    assert main(["convert", "--from", "sroie", str(sroie_src), str(out)]) == 2  # already a dataset
    assert "already holds a dataset" in capsys.readouterr().err
    assert main(["convert", "--from", "sroie", str(tmp_path / "nope"), str(tmp_path / "o2")]) == 2


def test_cli_convert_all_ok_and_generic_types(generic_src, tmp_path, capsys):
    (generic_src / "labels.csv").write_text("file,ref\na.png,X1\n")
    code = main(
        [
            "convert",
            "--from",
            "generic",
            str(generic_src),
            str(tmp_path / "o"),
            "--types",
            "ref=text",
            "--link",
        ]
    )
    assert code == 0 and "converted 1 document(s)" in capsys.readouterr().out
    _, ds = labels(tmp_path / "o")
    assert ds.schema["ref"].type == "text"
    argv = ["convert", "--from", "generic", str(generic_src), str(tmp_path / "o3")]
    assert main([*argv, "--types", "ref=money"]) == 2  # a usage error: one line, exit 2


def test_cli_passes_format_options(docile_src, funsd_src, tmp_path, capsys):
    argv = ["convert", "--from", "docile", str(docile_src), str(tmp_path / "d"), "--split", "dev"]
    assert main([*argv, "--fields", "document_id,amount_due", "--images", "x"]) == 1
    assert "--images ignored for --from docile" in capsys.readouterr().err
    recs, _ = labels(tmp_path / "d")
    assert recs["docA"].fields == {"document_id": "INV-7", "amount_due": "1,200.00"}
    argv = ["convert", "--from", "funsd", str(funsd_src), str(tmp_path / "f"), "--min-docs", "2"]
    assert main([*argv, "--split", "train"]) == 1  # f3 is skipped
    _, ds = labels(tmp_path / "f")
    assert ds.schema.names == ("date",)
