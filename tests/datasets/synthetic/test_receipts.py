"""Synthetic till receipts: schema, determinism, printed gold, absence, scans, CLI."""

from __future__ import annotations

import io
import json
import re
import statistics
from decimal import Decimal
from itertools import pairwise

import pdfplumber
import pytest

from confidence.cli import main
from confidence.datasets.folder import Dataset
from confidence.datasets.matching import is_correct
from confidence.datasets.synthetic import generate
from confidence.datasets.synthetic.receipts import (
    ADDRESS_PRINTS,
    NAME_PRINTS,
    RECEIPT_ABSENCE,
    RECEIPT_SCHEMA,
    receipt_document,
)
from confidence.errors import DatasetError

N = 60


@pytest.fixture(scope="module")
def receipts():
    return [receipt_document(i, seed=5) for i in range(N)]


def _words(data: bytes) -> list[str]:
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        (page,) = pdf.pages
        return [ln for ln in (page.extract_text() or "").splitlines()]


def _amount(printed: str) -> Decimal:
    s = printed.replace(" ", "")
    if re.search(r",\d{2}$", s):
        s = s.replace(".", "").replace(",", ".")
    return Decimal(s.replace(",", ""))


def test_schema_is_four_typed_fields():
    assert [(f.name, f.type) for f in RECEIPT_SCHEMA] == [
        ("merchant_name", "text"),
        ("merchant_address", "address"),
        ("purchase_date", "date"),
        ("total", "amount"),
    ]
    assert set(RECEIPT_ABSENCE) == set(RECEIPT_SCHEMA.names)


def test_pure_function_of_seed_and_index():
    a, b = receipt_document(3, seed=1), receipt_document(3, seed=1)
    assert a.data == b.data and a.fields == b.fields
    assert receipt_document(4, seed=1).fields != a.fields


def test_every_present_gold_value_is_printed_as_labelled(receipts):
    for d in receipts:
        lines = _words(d.data)
        text = "\n".join(lines)
        for name, value in d.fields.items():
            if value is None:
                continue
            if name == "merchant_address":  # printed one part per line, joined by ", "
                parts = value.split(", ")
                assert all(p in text for p in parts), (d.doc_id, value)
            else:
                assert value in text, (d.doc_id, name, value)
        assert d.meta["page_size"][0] == pytest.approx(226.8)
        # positions of drawn fields are page fractions
        for box in d.meta["positions"].values():
            assert box[0] == 1 and all(0 <= v <= 1 for v in box[1:])


def test_absence_and_normalised_values(receipts):
    absent = {name: sum(d.fields[name] is None for d in receipts) for name in RECEIPT_SCHEMA.names}
    assert absent["total"] == 0
    assert 0 < absent["merchant_address"] < N // 3
    for d in receipts:
        assert sorted(d.meta["absent"]) == sorted(k for k, v in d.fields.items() if v is None)
        norm = d.meta["normalized"]
        assert _amount(d.fields["total"]) == Decimal(norm["total"])
        if d.fields["purchase_date"] is not None:
            order = d.meta["date_order"] if d.meta["date_order"] != "ymd" else None
            assert is_correct(
                "date", d.fields["purchase_date"], norm["purchase_date"], date_order=order
            )


def test_total_is_not_the_only_amount(receipts):
    # receipts print competing amounts (items, subtotal, tax, cash, change) around the total
    amounts = [len(re.findall(r"\d+[.,]\d{2}\b", "\n".join(_words(d.data)))) for d in receipts]
    assert sum(a >= 3 for a in amounts) > 0.8 * N


def test_scans_use_receipt_resolutions():
    d = receipt_document(0, seed=2, scan_ratio=1.0)
    assert d.suffix in (".png", ".jpg") and d.meta["source"] == "scan"
    assert d.meta["scan"]["dpi"] >= 150


def test_bad_arguments():
    with pytest.raises(DatasetError, match="scan_ratio"):
        receipt_document(0, scan_ratio=2.0)
    with pytest.raises(DatasetError, match="language"):
        receipt_document(0, languages=("it",))
    with pytest.raises(DatasetError, match="kind"):
        generate("/nonexistent", 1, kind="letter")


def test_cli_kind_receipt_writes_a_readable_dataset(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["synth", str(out), "--n", "5", "--kind", "receipt", "--seed", "3"]) == 0
    ds = Dataset.open(out)
    assert ds.schema.names == RECEIPT_SCHEMA.names and len(ds) == 5
    first = json.loads((out / "labels.jsonl").read_text().splitlines()[0])
    assert first["doc_id"] == "receipt-3-00000"
    assert "wrote 5" in capsys.readouterr().out


def _cli_receipts(tmp_path, n: int, option: str, **kw):
    """Receipts written by ``extractconf synth --kind receipt --seed 4 OPTION 1.0``, each checked
    against :func:`receipt_document` with ``kw`` and returned as made by it."""
    out = tmp_path / option.strip("-")
    argv = ["synth", str(out), "--n", str(n), "--kind", "receipt", "--seed", "4"]
    assert main([*argv, option, "1.0"]) == 0
    docs = []
    for rec in Dataset.open(out).records:
        d = receipt_document(int(rec.doc_id[-5:]), seed=4, **kw)
        assert d.fields == rec.fields
        docs.append(d)
    return docs


def test_header_styles_wrap_the_name_or_tag_it_with_a_number(tmp_path):
    seen = set()
    for d in _cli_receipts(tmp_path, 12, "--header-variety", header_variety=1.0):
        name, style = d.fields["merchant_name"], d.meta["header_style"]
        seen.add(style)
        if name is None:
            continue
        lines = _words(d.data)
        if style == "wrapped":
            assert name not in lines and any(f"{a} {b}" == name for a, b in pairwise(lines))
        elif style == "tagged":
            assert any(re.fullmatch(re.escape(name) + r" \(\d{7}-[A-Z]\)", ln) for ln in lines)
    assert {"wrapped", "tagged"} <= seen
    plain = receipt_document(0, seed=4)
    assert "header_style" not in plain.meta  # the default keeps earlier corpora unchanged
    with pytest.raises(DatasetError, match="header_variety"):
        receipt_document(0, header_variety=1.5)


def test_total_styles_print_a_tax_summary_whose_total_row_is_not_the_total(tmp_path):
    import hashlib

    out = tmp_path / "t"
    argv = ["synth", str(out), "--n", "12", "--kind", "receipt", "--seed", "4"]
    assert main([*argv, "--total-variety", "1.0"]) == 0
    ds = Dataset.open(out)
    for rec in ds.records:
        d = receipt_document(int(rec.doc_id[-5:]), seed=4, total_variety=1.0)
        assert d.fields == rec.fields and d.meta["total_style"] == "summary"
        lines = _words(d.data)
        rows = [
            ln for ln in lines if re.fullmatch(r"(Total|TOTAL|Total:|Summe|Gesamt) \S+ \S+", ln)
        ]
        assert rows, lines  # the summary's "Total" row: the net and the tax column
        net, tax = (_amount(x) for x in rows[-1].split()[1:])
        total = _amount(d.fields["total"])
        assert abs(net + tax - total) <= Decimal("0.05")  # the total paid, rounded at most
        assert net != total or tax == 0  # the row's first amount is the net, not the total
    # the default draws nothing: a corpus of the same seed is the one made before the style
    plain = receipt_document(3, seed=7)  # its sha-256 before the style existed (commit e446304)
    assert "total_style" not in plain.meta
    assert hashlib.sha256(plain.data).hexdigest()[:16] == "9d12b8ca06f2a144"
    with pytest.raises(DatasetError, match="total_variety"):
        receipt_document(0, total_variety=-0.1)
    assert main(["synth", str(tmp_path / "i"), "--n", "2", "--total-variety", "0.5"]) == 2


def _grey(d):
    import cv2
    import numpy as np

    return cv2.imdecode(np.frombuffer(d.data, np.uint8), cv2.IMREAD_GRAYSCALE)


def test_faded_scans_print_pale_ink_and_say_so(tmp_path):
    """``--fade-ratio 1``: every scanned receipt records its fade and its darkest strokes are far
    lighter than the same receipt's unfaded scan; the default draws nothing, so the scans of a
    seeded corpus are the ones made before the option existed."""
    import hashlib

    import numpy as np

    out = tmp_path / "f"
    argv = ["synth", str(out), "--n", "6", "--kind", "receipt", "--seed", "4", "--scan-ratio", "1"]
    assert main([*argv, "--fade-ratio", "1.0"]) == 0
    ds = Dataset.open(out)
    assert len(ds) == 6
    compared = 0
    for rec in ds.records:
        fade = rec.meta["scan"]["fade"]
        assert 0.2 <= fade["ink"] <= 0.5 and 0 <= fade["dropout"] <= 0.35
        i = int(rec.doc_id[-5:])
        faded = receipt_document(i, seed=4, scan_ratio=1.0, fade_ratio=1.0)
        plain = receipt_document(i, seed=4, scan_ratio=1.0)
        assert faded.fields == plain.fields == rec.fields
        if rec.meta["scan"]["binarise"]:  # a binarised scan is black and white, faded or not
            continue
        dark_f, dark_p = (float(np.percentile(_grey(d), 1)) for d in (faded, plain))
        assert dark_f > dark_p + 60, (rec.doc_id, dark_f, dark_p)
        compared += 1
    assert compared >= 3
    # scans of the default (no fade drawn) are byte for byte those of commit 28aed81
    d = receipt_document(1, seed=7, scan_ratio=1.0)
    assert "fade" not in d.meta["scan"]
    assert hashlib.sha256(d.data).hexdigest()[:16] == "963a08309c47bff9"
    with pytest.raises(DatasetError, match="fade_ratio"):
        receipt_document(0, fade_ratio=1.5)
    assert main(["synth", str(tmp_path / "i"), "--n", "2", "--fade-ratio", "0.5"]) == 2


def _sizes(d) -> dict[str, float]:
    """Each printed line's largest font size (PDF points)."""
    with pdfplumber.open(io.BytesIO(d.data)) as pdf:
        (page,) = pdf.pages
        return {ln["text"]: max(c["size"] for c in ln["chars"]) for ln in page.extract_text_lines()}


def test_name_prints_put_the_merchant_name_at_body_size_some_under_a_logo(tmp_path):
    import hashlib

    seen = set()
    for d in _cli_receipts(tmp_path, 16, "--name-variety", name_variety=1.0):
        name, kind = d.fields["merchant_name"], d.meta["name_print"]
        seen.add(kind)
        if name is None:
            continue
        sizes = _sizes(d)
        lines = list(sizes)
        body = statistics.mode(sizes.values())  # the body text's size
        assert sizes[name] == body  # the name as large as the body text
        above = lines[: lines.index(name)]
        if kind == "logo":  # a line of large glyphs above the name, part of no field
            assert above and sizes[above[-1]] > 1.5 * body
            assert above[-1] not in d.fields.values()
        else:
            assert not above
    assert seen == {"body", "logo"} and set(seen) <= set(NAME_PRINTS)
    large = next(d for i in range(9) if (d := receipt_document(i, seed=4)).fields["merchant_name"])
    assert "name_print" not in large.meta
    sizes = _sizes(large)  # the default: the name larger than the body text
    assert sizes[large.fields["merchant_name"]] >= 1.3 * statistics.mode(sizes.values())
    # the default draws nothing: corpora made before the option are reproduced byte for byte
    # (the training receipts of scripts/train_default.py; sha-256 at commit 77308a7)
    faded = receipt_document(
        3, seed=17, scan_ratio=0.8, header_variety=0.5, total_variety=0.5, fade_ratio=0.5
    )
    assert hashlib.sha256(faded.data).hexdigest()[:16] == "b52a75fe82bc5baf"
    with pytest.raises(DatasetError, match="name_variety"):
        receipt_document(0, name_variety=1.5)
    assert main(["synth", str(tmp_path / "i"), "--n", "2", "--name-variety", "0.5"]) == 2


def test_address_prints_end_lines_in_commas_and_the_gold_joins_them_without(tmp_path):
    seen, wrapped = set(), 0
    for d in _cli_receipts(tmp_path, 16, "--address-variety", address_variety=1.0):
        gold, kind = d.fields["merchant_address"], d.meta["address_print"]
        seen.add(kind)
        if gold is None:
            continue
        with pdfplumber.open(io.BytesIO(d.data)) as pdf:
            (page,) = pdf.pages
            printed = [ln["text"] for ln in page.extract_text_lines()]
        parts = gold.split(", ")
        # the printed address: consecutive lines that, read back and joined, are the gold
        block = next(
            printed[i:j]
            for i in range(len(printed))
            for j in range(i + 1, len(printed) + 1)
            if ", ".join(t.rstrip(",") for t in printed[i:j]) == gold
        )
        assert all(t.endswith(",") for t in block[:-1]) and not block[-1].endswith(",")
        wrapped += len(block) != len(parts)  # some lines hold several comma-separated parts
    assert seen == {"comma_ends"} and set(seen) <= set(ADDRESS_PRINTS)
    assert wrapped  # half are one run wrapped at its commas
    # the default draws nothing: the corpora made before the option are reproduced
    plain = receipt_document(5, seed=4)
    assert "address_print" not in plain.meta
    assert receipt_document(5, seed=4, address_variety=0.0).data == plain.data
    with pytest.raises(DatasetError, match="address_variety"):
        receipt_document(0, address_variety=1.5)
    with pytest.raises(DatasetError, match="address_variety applies to receipts"):
        generate(tmp_path / "inv", 1, address_variety=0.5)
    assert main(["synth", str(tmp_path / "i"), "--n", "2", "--address-variety", "0.5"]) == 2
