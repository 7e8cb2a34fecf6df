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


def _written_turned(path, lines=fx.TOTAL_LINES, size=fx.TOTAL_PAGE_SIZE, quarter=90):
    """The invoice written a quarter turn (``quarter`` degrees counter-clockwise; -90: clockwise)
    on a page as tall as the invoice is wide: shown sideways, or upright under the matching
    ``/Rotate`` (a landscape page)."""
    from reportlab.pdfgen import canvas

    width, height = size
    c = canvas.Canvas(str(path), pagesize=(height, width))
    if quarter == 90:
        c.translate(height, 0)
    else:
        c.translate(0, width)
    c.rotate(quarter)
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


@pytest.mark.parametrize("quarter", [90, -90])
def test_a_page_printed_turned_without_rotate_is_read_turned_upright(tmp_path, pages, quarter):
    """A landscape invoice drawn a quarter round on a portrait page, no ``/Rotate``: read as a
    viewer turning it upright would show it (before, one block a line, and for one of the two
    directions the lines bottom to top)."""
    path = _written_turned(tmp_path / f"sideways{quarter}.pdf", quarter=quarter)
    page = load_document(path, keep_images=True).pages[0]
    assert page.rotation == (90 if quarter == 90 else 270)
    assert page.text == pages[0].text
    assert [(w.text, w.line_id, w.block_id) for w in page.words] == [
        (w.text, w.line_id, w.block_id) for w in pages[0].words
    ]
    assert any(n.startswith("text printed turned on the page") for n in page.notes)
    shown = fx.render_pdf(path, page.dpi)
    assert np.array_equal(np.rot90(shown, k=-page.rotation // 90), page.image)
    assert all(_ink(page.image, w.bbox) > 0.1 for w in page.words)


def test_a_turned_margin_notice_on_an_upright_page_keeps_its_own_direction(tmp_path):
    """Mostly upright text with a line printed up the margin: the page is not turned."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "margin.pdf"
    c = canvas.Canvas(str(path), pagesize=fx.TOTAL_PAGE_SIZE)
    height = fx.TOTAL_PAGE_SIZE[1]
    for x, y_top, font_size, text in fx.TOTAL_LINES:
        c.setFont("Helvetica", font_size)
        c.drawString(x, height - y_top, text)
    c.saveState()
    c.translate(20, 40)
    c.rotate(90)
    c.setFont("Helvetica", 7)
    c.drawString(0, 0, "Registered office: 1 Quay St")
    c.restoreState()
    c.save()
    page = load_document(path, keep_images=True).pages[0]
    assert page.rotation == 0 and not any("turned" in n for n in page.notes)
    assert "Invoice Total 1,234.50" in page.text.split("\n")
    assert "Registered office: 1 Quay St" in page.text.split("\n")
    assert all(_ink(page.image, w.bbox) > 0.1 for w in page.words)
