"""Text tesseract's page segmentation leaves unread is read again (issue 12, candidate recall).

Tesseract's automatic segmentation classes some text blocks as non-text, typically the
right-aligned amount column of a receipt: the label "GRAND TOTAL" is read, the total beside it is
not. :func:`confidence.documents._ocr._reread` reads the ink left outside the word boxes, and
:func:`~confidence.documents._ocr._merge_words` puts those words on the lines beside them.
"""

from __future__ import annotations

import pytest
from reportlab.lib.pagesizes import A6
from reportlab.pdfgen import canvas

from confidence.datasets.synthetic.receipts import receipt_document
from confidence.documents import _ocr, load_document
from confidence.documents.lines import document_lines
from confidence.types import Word
from tests.fixtures import docs as fx

DPI = 200.0


@pytest.fixture(scope="module")
def two_columns(tmp_path_factory):
    """Grey raster of labels on the left and amounts on the right, and its full tesseract read."""
    path = tmp_path_factory.mktemp("cols") / "cols.pdf"
    c = canvas.Canvas(str(path), pagesize=A6)
    c.setFont("Helvetica", 11)
    for i, (label, amount) in enumerate((("Subtotal", "138.97"), ("GRAND TOTAL", "152.87"))):
        y = 300 - 24 * i
        c.drawString(20, y, label)
        c.drawRightString(280, y, amount)
    c.save()
    gray = fx.render_pdf(path, DPI)
    words = _ocr._tesseract(gray, DPI, "eng", 60.0, path, 1)
    return gray, words, path


def test_unread_column_is_read_and_merged(two_columns):
    gray, words, path = two_columns
    # The reading as tesseract's segmentation gives it on such receipts: the amounts dropped.
    left = [w for w in words if w.bbox[2] < 0.5]
    assert {w.text for w in left} >= {"Subtotal", "GRAND", "TOTAL"}
    assert not any(any(ch.isdigit() for ch in w.text) for w in left)
    regions = _ocr._unread_regions(gray, left)
    assert len(regions) == 2 and all(x > 0.5 * gray.shape[1] for x, _, _, _ in regions)
    extra = _ocr._reread(gray, left, DPI, "eng", 60.0, path, 1)
    assert sorted(w.text for w in extra) == ["138.97", "152.87"]
    assert all(w.bbox[0] > 0.5 for w in extra)  # page coordinates, not the crop's
    merged = _ocr._merge_words(left, extra)
    doc_words = [(w.text, w.line_id, w.block_id) for w in merged]
    lines = {}
    for text, *key in doc_words:
        lines.setdefault(tuple(key), []).append(text)
    assert sorted(" ".join(v) for v in lines.values()) == ["GRAND TOTAL 152.87", "Subtotal 138.97"]


def test_complete_reading_reads_nothing_again(two_columns):
    gray, words, path = two_columns
    assert _ocr._unread_regions(gray, words) == []
    assert _ocr._reread(gray, words, DPI, "eng", 60.0, path, 1) == []


def test_merge_without_a_line_to_the_left_keeps_reading_order():
    a = Word("HEAD", (0.1, 0.10, 0.3, 0.12), line_id=0, block_id=0)
    b = Word("FOOT", (0.1, 0.80, 0.3, 0.82), line_id=1, block_id=0)
    mid = Word("12.50", (0.7, 0.50, 0.9, 0.52))
    merged = _ocr._merge_words([a, b], [mid])
    assert [w.text for w in merged] == ["HEAD", "12.50", "FOOT"]
    assert (merged[1].block_id, merged[1].line_id) not in {(0, 0), (0, 1)}


def test_generated_receipt_total_is_read(tmp_path, monkeypatch):
    """End to end through load_document: a generated receipt whose amount column tesseract's
    segmentation drops (seed 7, receipt 54) has its total on the "GRAND TOTAL" line."""
    doc = receipt_document(54, seed=7)
    total = doc.fields["total"]
    pdf = tmp_path / "r.pdf"
    pdf.write_bytes(doc.data)
    png = fx.save_image(fx.render_pdf(pdf, 300.0), tmp_path / "r.png", 300.0)
    lines = [ln.text for ln in document_lines(load_document(png))]
    assert any(total in t and "TOTAL" in t.upper() for t in lines), lines
    monkeypatch.setattr(_ocr, "_reread", lambda *a, **k: [])
    before = [ln.text for ln in document_lines(load_document(png))]
    assert not any(total in t for t in before)  # the case this test is about
