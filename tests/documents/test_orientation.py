"""Page orientation: scans turned by 90, 180 and 270 degrees are read upright, upright ones once.

The scans are a generated monospaced till receipt and the reportlab invoice of ``conftest.py``,
rendered and turned here (no external data).
"""

from __future__ import annotations

from collections import Counter

import pytest

from confidence.datasets.synthetic.receipts import receipt_document
from confidence.documents import _ocr, load_document
from confidence.types import Word
from tests.fixtures import docs as fx

DPI = 200.0


@pytest.fixture(scope="module")
def receipt_gray(tmp_path_factory):
    """A monospaced (Courier) synthetic receipt rendered as a perfect 200 dpi scan."""
    doc = receipt_document(0, seed=0)
    assert doc.meta["font"] == "Courier"
    path = tmp_path_factory.mktemp("receipt") / "receipt.pdf"
    path.write_bytes(doc.data)
    return fx.render_pdf(path, DPI)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def tesseract_runs(monkeypatch_module):
    calls = []
    real = _ocr._tesseract

    def counting(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch_module.setattr(_ocr, "_tesseract", counting)
    return calls


@pytest.fixture(scope="module")
def receipts(receipt_gray, tmp_path_factory, tesseract_runs):
    """The receipt turned counter-clockwise by 0/90/180/270 degrees, loaded; the tesseract
    readings each took at the raster's own resolution (orientation). Readings of the raster
    enlarged for its small text (``test_small_text.py``) are not orientation readings and are
    counted apart, in ``enlarged_runs``."""
    d = tmp_path_factory.mktemp("turned")
    own = max(receipt_gray.shape)
    out = {}
    for angle in (0, 90, 180, 270):
        path = fx.save_image(fx.rotate(receipt_gray, angle), d / f"r{angle}.png", DPI)
        tesseract_runs.clear()
        page = load_document(path).pages[0]
        at_size = sum(1 for shape in tesseract_runs if max(shape) <= own)
        out[angle] = (page, at_size)
        enlarged_runs[angle] = len(tesseract_runs) - at_size
    return out


enlarged_runs: dict[int, int] = {}


def _long_words(page) -> Counter:
    return Counter(w.text for w in page.words if sum(c.isalnum() for c in w.text) >= 3)


def _recovered(page, reference) -> float:
    ref = _long_words(reference)
    return sum((_long_words(page) & ref).values()) / sum(ref.values())


def _wide_share(page) -> float:
    long = [w for w in page.words if sum(c.isalnum() for c in w.text) >= 3]
    wide = [
        w
        for w in long
        if (w.bbox[2] - w.bbox[0]) * page.width > (w.bbox[3] - w.bbox[1]) * page.height
    ]
    return len(wide) / len(long)


def test_upright_monospaced_receipt_is_read_once(receipts, receipt_gray):
    page, runs = receipts[0]
    assert runs == 1
    assert enlarged_runs[0] <= 1  # at most one more reading, of the raster enlarged
    assert page.rotation == 0 and (page.height, page.width) == receipt_gray.shape
    assert _wide_share(page) > 0.9
    assert not any("orientation" in n for n in page.notes)
    assert len(_long_words(page)) >= 20


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_turned_receipt_is_read_upright(receipts, angle):
    upright, _ = receipts[0]
    page, runs = receipts[angle]
    assert page.rotation == angle  # the clockwise turn that undid the counter-clockwise one
    assert (page.width, page.height) == (upright.width, upright.height)
    assert _wide_share(page) > 0.9
    assert _recovered(page, upright) >= 0.9
    assert 2 <= runs <= 3
    assert any(
        n.startswith("orientation scores") and n.endswith(f"kept {angle}") for n in page.notes
    )


@pytest.mark.slow
def test_invoice_turned_270_is_read_upright(tmp_path, invoice_gray, loaded_scans):
    # 90 and 180 degrees: test_documents.py (test_sideways_page_is_turned_upright and
    # test_upside_down_page_is_turned)
    path = fx.save_image(fx.rotate(invoice_gray, 270), tmp_path / "turned.png", DPI)
    page = load_document(path).pages[0]
    assert page.rotation == 270
    assert _recovered(page, loaded_scans["clean"].pages[0]) >= 0.9


def test_judge_looks_at_word_box_shape_and_confidence():
    def words(box, conf, text="word"):
        return tuple(
            Word(text, (box[0], 0.1 * i, box[1], 0.1 * i + box[2]), ocr_conf=conf) for i in range(6)
        )

    wide = _ocr._judge(words((0.1, 0.3, 0.02), 0.9), (1000, 1000))
    assert wide.upright and wide.wide_share == 1.0 and wide.score == pytest.approx(6 * 4 * 0.9)
    tall = _ocr._judge(words((0.1, 0.12, 0.08), 0.9), (1000, 1000))
    assert not tall.horizontal and tall.score == 0.0 and tall.conf == pytest.approx(0.9)
    weak = _ocr._judge(words((0.1, 0.3, 0.02), 0.2), (1000, 1000))
    assert weak.horizontal and not weak.upright
    # boxes are page fractions: 0.02 wide and 0.05 tall is wide on a raster 3x wider than tall
    assert _ocr._judge(words((0.1, 0.12, 0.05), 0.9), (1000, 3000)).horizontal
    # short words (digits, "of") are square even when upright and are not judged
    assert _ocr._judge(words((0.1, 0.12, 0.08), 0.9, "12"), (1000, 1000)).n_long == 0
