"""Photographed pages: the paper's outline found on its background and flattened before OCR
(:mod:`confidence.documents.perspective`), through ``load_document`` and ``extractconf inspect``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence.cli import main
from confidence.documents import load_document
from confidence.documents.perspective import find_outline, flatten
from confidence.types import Document
from tests.fixtures import docs as fx

# the page seen from below its bottom edge: the top side shorter, both sides leaning in
AT_AN_ANGLE = ((0.24, 0.14), (0.78, 0.17), (0.86, 0.86), (0.15, 0.83))
FLAT = ((0.17, 0.17), (0.83, 0.17), (0.83, 0.83), (0.17, 0.83))
# opposite sides parallel, but leaning: a parallelogram no deskew straightens
LEANING = ((0.17, 0.15), (0.79, 0.15), (0.83, 0.85), (0.21, 0.85))


@pytest.fixture(scope="module")
def photo(invoice_gray, tmp_path_factory):
    path = tmp_path_factory.mktemp("photo") / "photo.png"
    return fx.save_image(fx.photograph(invoice_gray, AT_AN_ANGLE), path, 200.0)


def _read(words, drawn) -> float:
    texts = {w.text for w in words}
    return sum(d.text in texts for d in drawn) / len(drawn)


@pytest.mark.parametrize("corners", [AT_AN_ANGLE, LEANING], ids=["converging", "leaning"])
def test_outline_of_a_photographed_page(invoice_gray, corners):
    outline = find_outline(fx.photograph(invoice_gray, corners))
    assert outline is not None
    assert np.allclose(outline, corners, atol=0.01)  # corners where the page was put


@pytest.mark.parametrize(
    "picture",
    [
        lambda g: g,  # a scan: the paper fills the picture
        lambda g: fx.photograph(g, FLAT),  # flat before the lens: nothing to flatten
        lambda g: fx.photograph(g, AT_AN_ANGLE, background=235),  # no darker background
        lambda g: np.vstack([np.full((300, g.shape[1]), 80, np.uint8), g]),  # a dark band
        lambda g: np.hstack([fx.photograph(g, AT_AN_ANGLE)] * 2),  # two receipts, both kept
    ],
    ids=["scan", "flat", "pale-table", "header-band", "two-papers"],
)
def test_no_outline_where_there_is_nothing_to_flatten(invoice_gray, picture):
    assert find_outline(picture(invoice_gray)) is None


def test_flatten_restores_the_page_shape(invoice_gray):
    flat = flatten(fx.photograph(invoice_gray, AT_AN_ANGLE), AT_AN_ANGLE)
    h, w = invoice_gray.shape
    assert abs(flat.shape[1] / flat.shape[0] - w / h) < 0.05


def test_a_photographed_page_is_read_flattened(photo, invoice_pdf):
    doc = load_document(photo)
    page = doc.pages[0]
    assert page.source == "ocr" and page.outline is not None
    assert np.allclose(page.outline, AT_AN_ANGLE, atol=0.01)
    assert any("photographed paper flattened" in n for n in page.notes)
    as_is = load_document(photo, flatten_photos=False).pages[0]
    assert as_is.outline is None and not any("flattened" in n for n in as_is.notes)
    flat_share, as_is_share = (_read(p.words, invoice_pdf.words) for p in (page, as_is))
    assert flat_share >= 0.9 and flat_share > as_is_share
    assert Document.from_dict(doc.to_dict()) == doc  # the outline survives the cache


def test_inspect_says_the_photo_was_flattened(photo, capsys):
    assert main(["inspect", str(photo), "--json"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert "INV-2024-0042" in page["text"]
    assert any("photographed paper flattened" in n for n in page["notes"])
    assert main(["inspect", str(photo), "--json", "--no-flatten"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert not any("flattened" in n for n in page["notes"])
