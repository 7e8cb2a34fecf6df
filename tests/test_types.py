"""Round trips of the document dataclasses through dicts and JSON."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from confidence.types import Document, ImageQuality, Page, QualityGrid, Word

unit = st.floats(0.0, 1.0, allow_nan=False)
words = st.builds(
    Word,
    text=st.text(min_size=1, max_size=12),
    bbox=st.tuples(unit, unit, unit, unit),
    ocr_conf=unit,
    font_size=st.none() | st.floats(1.0, 72.0),
    line_id=st.integers(0, 500),
    block_id=st.integers(0, 50),
)
finite = st.floats(-1e6, 1e6, allow_nan=False)


def _json(obj):
    return json.loads(json.dumps(obj.to_dict()))


@given(words)
def test_word_round_trip(word):
    assert Word.from_dict(_json(word)) == word


@given(st.lists(finite, min_size=10, max_size=10))
def test_image_quality_round_trip(values):
    q = ImageQuality(*values)
    assert ImageQuality.from_dict(_json(q)) == q


def test_image_quality_nan_survives():
    q = ImageQuality(1.0, 0.2, 0.9, 0.0, 0.0, 300.0, math.nan, math.nan, 1.0, 0.0)
    again = ImageQuality.from_dict(json.loads(json.dumps(q.to_dict())))
    assert math.isnan(again.char_height_px) and again.sharpness == 1.0


def test_quality_grid_round_trip_with_nan():
    g = QualityGrid(2, 2, (1.0, math.nan, 3.0, 4.0), (0.1,) * 4, (0.0,) * 4, (0.2, 0.0, 0.1, 0.3))
    d = _json(g)
    assert d["sharpness"][1] is None  # strict JSON: NaN becomes null
    again = QualityGrid.from_dict(d)
    assert again.to_dict() == g.to_dict() and math.isnan(again.sharpness[1])
    assert math.isnan(again.at((0.6, 0.0, 0.9, 0.4))["sharpness"])  # the one NaN tile


def test_grid_at_averages_overlapped_tiles():
    g = QualityGrid(2, 2, (1.0, 3.0, math.nan, 5.0), (0.0,) * 4, (0.0,) * 4, (0.0,) * 4)
    assert g.at((0.1, 0.1, 0.9, 0.9))["sharpness"] == 3.0  # NaN tile ignored


unit = st.floats(0.0, 1.0, allow_nan=False)
outlines = st.none() | st.tuples(*[st.tuples(unit, unit)] * 4)


@given(st.lists(words, max_size=5), st.sampled_from(["pdf", "ocr"]), st.integers(0, 3), outlines)
def test_page_and_document_round_trip(ws, source, quarter, outline):
    q = ImageQuality(10.0, 0.3, 0.9, 0.01, 1.5, 200.0, 12.0, 4.3, 1.0, 0.05)
    g = QualityGrid(1, 2, (1.0, 2.0), (0.1, 0.2), (0.0, 0.0), (0.1, 0.0))
    page = Page(
        1,
        850,
        1100,
        tuple(ws),
        source,
        200.0,
        rotation=90 * quarter,
        deskew_deg=-1.5,
        quality=q,
        grid=g,
        notes=("deskewed by -1.50 deg",),
        outline=outline,
    )
    assert Page.from_dict(_json(page)) == page
    doc = Document("d1", "d1.png", (page, page))
    assert Document.from_dict(_json(doc)) == doc
    assert doc.n_words == 2 * len(ws)


def test_page_text_groups_lines():
    ws = (
        Word("Total", (0.1, 0.1, 0.2, 0.12), line_id=0),
        Word("9.00", (0.3, 0.1, 0.4, 0.12), line_id=0),
        Word("Thanks", (0.1, 0.2, 0.2, 0.22), line_id=1),
    )
    page = Page(1, 100, 100, ws, "ocr", 300.0)
    assert page.text == "Total 9.00\nThanks"
    assert page.mean_ocr_conf == 1.0
