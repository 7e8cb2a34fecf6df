"""Digital PDF pages that carry ``/Rotate`` (a viewer's "rotate and save"): read as the page is
written, turned upright like a sideways scan, every word's box on its ink in the page's raster.

The pages are a small reportlab invoice (``tests/fixtures/docs.py``) with ``/Rotate`` set by
pypdfium2, and the same invoice written turned a quarter (no external data).
"""

from __future__ import annotations

import numpy as np
import pytest

from confidence.documents import load_document
from tests.fixtures import docs as fx

TURNS = (0, 90, 180, 270)


def _ink(gray: np.ndarray, bbox) -> float:
    """Share of dark pixels of ``gray`` inside a normalised box."""
    h, w = gray.shape
    x0, y0, x1, y1 = bbox
    crop = gray[int(y0 * h) : int(np.ceil(y1 * h)), int(x0 * w) : int(np.ceil(x1 * w))]
    return float((crop < 128).mean()) if crop.size else 0.0


def _note(deg: int) -> str:
    return (
        f"page shown turned by /Rotate {deg}; its text read as written, "
        f"turned {(360 - deg) % 360} deg clockwise to make text upright"
    )


@pytest.fixture(scope="module")
def invoices(tmp_path_factory):
    """The invoice as written and with ``/Rotate`` 90, 180 and 270: (spec, {turn: path})."""
    d = tmp_path_factory.mktemp("rotate")
    spec = fx.make_invoice_pdf(d / "r0.pdf", lines=fx.TOTAL_LINES, page_size=fx.TOTAL_PAGE_SIZE)
    paths = {0: spec.path}
    for deg in TURNS[1:]:
        paths[deg] = fx.set_rotate(spec.path, deg, d / f"r{deg}.pdf")
    return spec, paths


@pytest.fixture(scope="module")
def pages(invoices):
    return {deg: load_document(p, keep_images=True).pages[0] for deg, p in invoices[1].items()}


@pytest.mark.parametrize("deg", TURNS)
def test_a_page_shown_turned_reads_as_the_page_written(pages, deg):
    page, written = pages[deg], pages[0]
    lines = page.text.split("\n")
    assert "Invoice Total 1,234.50" in lines  # was "latoT eciovnI" at 180, one line a block at 90
    assert lines == written.text.split("\n")
    assert [(w.text, w.line_id, w.block_id) for w in page.words] == [
        (w.text, w.line_id, w.block_id) for w in written.words
    ]
    assert page.source == "pdf" and page.rotation == (360 - deg) % 360
    assert (page.width, page.height) == (written.width, written.height)
    assert [n for n in page.notes if "/Rotate" in n] == ([_note(deg)] if deg else [])


@pytest.mark.parametrize("deg", TURNS)
def test_every_word_box_is_on_its_ink(invoices, pages, deg):
    spec, paths = invoices
    page = pages[deg]
    # the raster is the page as PDFium shows it (turned by /Rotate), turned upright
    shown = fx.render_pdf(paths[deg], page.dpi)
    assert np.array_equal(np.rot90(shown, k=-page.rotation // 90), page.image)
    width, height = fx.TOTAL_PAGE_SIZE
    for w in page.words:
        assert _ink(page.image, w.bbox) > 0.1, w.text
        drawn = min(
            (d for d in spec.words if d.text == w.text),
            key=lambda d: abs(d.bbox[0] - w.bbox[0]) + abs(d.bbox[1] - w.bbox[1]),
        )
        for a, b, scale in zip(w.bbox, drawn.bbox, (width, height) * 2, strict=True):
            assert abs(a - b) * scale < 1.5, w.text  # where reportlab drew it, in points


def _written_turned(path, lines=fx.TOTAL_LINES, size=fx.TOTAL_PAGE_SIZE):
    """The invoice written a quarter turn counter-clockwise on a page as tall as the invoice
    is wide: shown sideways, or upright under ``/Rotate 90`` (a landscape page)."""
    from reportlab.pdfgen import canvas

    width, height = size
    c = canvas.Canvas(str(path), pagesize=(height, width))
    c.translate(height, 0)
    c.rotate(90)
    for x, y_top, font_size, text in lines:
        c.setFont("Helvetica", font_size)
        c.drawString(x, height - y_top, text)
    c.save()
    return path


def test_text_that_rotate_shows_upright_is_read_as_shown(tmp_path, pages):
    written = _written_turned(tmp_path / "landscape.pdf")
    page = load_document(fx.set_rotate(written, 90, tmp_path / "l90.pdf"), keep_images=True)
    page = page.pages[0]
    assert page.rotation == 0 and page.text == pages[0].text
    assert page.notes == ("page shown turned by /Rotate 90; its text read as shown",)
    assert all(_ink(page.image, w.bbox) > 0.1 for w in page.words)


def test_sideways_text_without_rotate_reads_in_its_own_direction(tmp_path):
    page = load_document(_written_turned(tmp_path / "sideways.pdf"), keep_images=True).pages[0]
    assert page.rotation == 0 and not any("/Rotate" in n for n in page.notes)
    assert "Invoice Total 1,234.50" in page.text.split("\n")  # one printed line, turned
    total = next(w for w in page.words if w.text == "Total")
    x0, y0, x1, y1 = total.bbox
    assert (y1 - y0) * page.height > 1.5 * (x1 - x0) * page.width  # up the page, as printed
    assert all(_ink(page.image, w.bbox) > 0.1 for w in page.words)
