"""Documents for the review app: doc_id -> file, no way out of the folder, pictures whose boxes
land on the words (also for a scan ingestion turned and straightened)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from confidence.errors import ExtractConfError
from confidence.review.pages import DocumentFolder, PageRenderer, locate


def test_folder_maps_names_and_relative_paths(tmp_path):
    for rel in ("a/inv.pdf", "b/inv.pdf", "c/solo.png", "notes.txt", ".hidden.pdf"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    f = DocumentFolder(tmp_path)
    assert set(f.files) == {"a/inv", "b/inv", "c/solo", "solo"}  # inv is ambiguous
    assert f.path_of("solo") == (tmp_path / "c/solo.png").resolve()
    assert f.safe_file("a/inv.pdf") == (tmp_path / "a/inv.pdf").resolve()
    for bad in ("../x", "a/../../etc/passwd", "/etc/passwd", "a", "missing.pdf", "a/\0"):
        assert f.safe_file(bad) is None, bad
    with pytest.raises(ExtractConfError, match="no such folder"):
        DocumentFolder(tmp_path / "nope")


def _ink_in(gray: np.ndarray, bbox) -> float:
    h, w = gray.shape
    x0, y0, x1, y1 = bbox
    crop = gray[int(y0 * h) : int(np.ceil(y1 * h)), int(x0 * w) : int(np.ceil(x1 * w))]
    return float((crop < 128).mean())


@pytest.mark.parametrize("name", ["clean", "rot90", "rot2", "jpeg30"])
def test_rendered_pages_put_the_value_box_on_its_ink(scans, loaded_scans, tmp_path, name):
    doc = loaded_scans[name]
    page = doc.pages[0]
    word = max(page.words, key=lambda w: len(w.text) * (w.ocr_conf > 0.8))
    found = locate(doc, word.text, None)
    assert found is not None and found[0] == 0
    pic = PageRenderer(width=800).picture(scans[name], doc, 0)
    gray = cv2.imdecode(np.frombuffer(pic, np.uint8), cv2.IMREAD_GRAYSCALE)
    assert abs(gray.shape[1] / gray.shape[0] - page.width / page.height) < 0.01
    assert _ink_in(gray, found[1]) > 0.08  # the box covers the word's ink ...
    x0, y0, x1, y1 = found[1]
    dy = (y1 - y0) * 3
    below = (x0, min(1.0, y1 + dy), x1, min(1.0, y1 + 2 * dy))
    assert _ink_in(gray, found[1]) > _ink_in(gray, below)  # ... more than its neighbourhood


def test_renderer_keeps_a_bounded_cache(scans, loaded_scans):
    r = PageRenderer(width=300, keep=1)
    a = r.picture(scans["clean"], loaded_scans["clean"], 0)
    assert r.picture(scans["clean"], loaded_scans["clean"], 0) is a
    r.picture(scans["rot90"], loaded_scans["rot90"], 0)
    assert len(r._cache) == 1
    with pytest.raises(ExtractConfError, match="has no page 2"):
        r.picture(scans["clean"], loaded_scans["clean"], 1)


def test_locate_nothing_for_empty_values(loaded_scans):
    assert locate(loaded_scans["clean"], None, "amount") is None
    assert locate(loaded_scans["clean"], "  ", "text") is None


@pytest.mark.parametrize("suffix", [".png", ".jpg"])
def test_a_photographed_page_is_shown_flattened(invoice_gray, tmp_path, suffix):
    from confidence.documents import load_document
    from tests.documents.test_perspective import AT_AN_ANGLE
    from tests.fixtures import docs as fx

    path = fx.save_image(fx.photograph(invoice_gray, AT_AN_ANGLE), tmp_path / f"p{suffix}", 200.0)
    doc = load_document(path)
    page = doc.pages[0]
    assert page.outline is not None
    word = max(page.words, key=lambda w: len(w.text) * (w.ocr_conf > 0.8))
    found = locate(doc, word.text, None)
    gray = cv2.imdecode(
        np.frombuffer(PageRenderer(width=800).picture(path, doc, 0), np.uint8),
        cv2.IMREAD_GRAYSCALE,
    )
    assert abs(gray.shape[1] / gray.shape[0] - page.width / page.height) < 0.01
    assert gray.shape[1] >= 700  # decoded large enough for the paper, not for the picture
    x0, y0, x1, y1 = found[1]
    dy = (y1 - y0) * 3
    below = (x0, min(1.0, y1 + dy), x1, min(1.0, y1 + 2 * dy))
    assert _ink_in(gray, found[1]) > 0.08 and _ink_in(gray, found[1]) > _ink_in(gray, below)


@pytest.mark.parametrize("deg", [90, 180, 270])
def test_a_digital_page_shown_turned_by_rotate_has_its_boxes_on_its_ink(tmp_path, deg):
    from confidence.documents import load_document
    from tests.fixtures import docs as fx

    spec = fx.make_invoice_pdf(
        tmp_path / "r0.pdf", lines=fx.TOTAL_LINES, page_size=fx.TOTAL_PAGE_SIZE
    )
    path = fx.set_rotate(spec.path, deg, tmp_path / f"r{deg}.pdf")
    doc = load_document(path)
    page = doc.pages[0]
    assert page.rotation == 360 - deg  # turned upright like a sideways scan
    gray = cv2.imdecode(
        np.frombuffer(PageRenderer(width=800).picture(path, doc, 0), np.uint8),
        cv2.IMREAD_GRAYSCALE,
    )
    assert abs(gray.shape[1] / gray.shape[0] - page.width / page.height) < 0.01
    for word in page.words:
        assert _ink_in(gray, word.bbox) > 0.08, word.text
    found = locate(doc, "1,234.50", "amount")
    x0, y0, x1, y1 = found[1]
    dy = (y1 - y0) * 3
    below = (x0, min(1.0, y1 + dy), x1, min(1.0, y1 + 2 * dy))
    assert _ink_in(gray, found[1]) > 0.08 and _ink_in(gray, found[1]) > _ink_in(gray, below)


def test_a_fax_is_shown_with_square_pixels_and_its_boxes_on_the_ink(invoice_gray, tmp_path):
    from PIL import Image

    from confidence.documents import load_document

    fax = Image.fromarray(invoice_gray).resize(
        (invoice_gray.shape[1], invoice_gray.shape[0] // 2), Image.BILINEAR
    )
    path = tmp_path / "fax.png"
    fax.save(path, dpi=(200, 100))
    doc = load_document(path)
    page = doc.pages[0]
    gray = cv2.imdecode(
        np.frombuffer(PageRenderer(width=800).picture(path, doc, 0), np.uint8),
        cv2.IMREAD_GRAYSCALE,
    )
    # the page's shape as read, not the file's squashed one
    assert abs(gray.shape[1] / gray.shape[0] - page.width / page.height) < 0.01
    found = locate(doc, "ACME", None)
    assert found is not None and _ink_in(gray, found[1]) > 0.08


def test_white_print_on_a_transparent_ground_is_shown_not_blank(invoice_gray, tmp_path):
    from PIL import Image

    from confidence.documents import load_document

    rgba = np.zeros((*invoice_gray.shape, 4), np.uint8)
    rgba[..., :3] = 255
    rgba[..., 3] = 255 - invoice_gray
    path = tmp_path / "clear.png"
    Image.fromarray(rgba, "RGBA").save(path, dpi=(200, 200))
    doc = load_document(path)
    gray = cv2.imdecode(
        np.frombuffer(PageRenderer(width=800).picture(path, doc, 0), np.uint8),
        cv2.IMREAD_GRAYSCALE,
    )
    assert gray.std() > 20  # light print on black, as ingestion laid it
    found = locate(doc, "ACME", None)
    assert found is not None and _ink_in(255 - gray, found[1]) > 0.08


def test_a_page_printed_turned_without_rotate_is_shown_upright(tmp_path):
    from confidence.documents import load_document
    from tests.documents.test_pdf_rotate import _written_turned

    path = _written_turned(tmp_path / "sideways.pdf", quarter=-90)
    doc = load_document(path)
    page = doc.pages[0]
    assert page.rotation == 270
    gray = cv2.imdecode(
        np.frombuffer(PageRenderer(width=800).picture(path, doc, 0), np.uint8),
        cv2.IMREAD_GRAYSCALE,
    )
    assert abs(gray.shape[1] / gray.shape[0] - page.width / page.height) < 0.01
    for word in page.words:
        assert _ink_in(gray, word.bbox) > 0.08, word.text
