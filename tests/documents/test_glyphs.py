"""A letter OCR read for a zero is a zero when the word prints the same glyph as its zeros
(:mod:`confidence.documents.glyphs`, issue 12: candidate recall of ids)."""

from __future__ import annotations

import json
from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.cli import main
from confidence.documents import _ocr, load_document
from confidence.documents.glyphs import SUSPECTS, repair_glyphs, suspect_positions
from confidence.types import Word

FONT = cv2.FONT_HERSHEY_SIMPLEX


def _printed(text: str, *, scale: float = 1.0, width: int = 600) -> tuple[np.ndarray, Word]:
    """A white raster printing ``text`` once, and a Word whose box hugs its ink (text = as
    printed; tests change the text to what OCR would have read)."""
    page = np.full((80, width), 255, np.uint8)
    cv2.putText(page, text, (10, 50), FONT, scale, 0, 2)
    ys, xs = np.where(page < 128)
    h, w = page.shape
    box = (xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h)
    return page, Word(text, box, ocr_conf=0.9)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FAQ2/2015/020059", [2]),  # between a letter and a digit
        ("INVO012", [3]),
        ("10O5", [2]),  # between digits
        ("Q20", [0]),  # at the start, before a digit
        ("BCO9218", [2]),  # no zero of its own: its line's words may have one
        ("TOTAL", []),
        ("Oo0", []),  # a lower-case o is no suspect, the O has no digit beside it
        ("", []),
    ],
)
def test_suspect_positions(text, expected):
    assert suspect_positions(text) == expected


@given(st.text(alphabet="OQo0123ABC/-", max_size=12))
def test_suspects_are_the_o_and_q_beside_a_digit(text):
    found = suspect_positions(text)
    for i in found:
        assert text[i] in SUSPECTS
        assert (i > 0 and text[i - 1].isdigit()) or (i + 1 < len(text) and text[i + 1].isdigit())
    if not any(c.isdigit() for c in text):
        assert found == []


def test_a_zero_read_as_a_letter_is_read_as_a_zero():
    page, word = _printed("FA02/2015/020059")
    for misread in ("FAQ2/2015/020059", "FAO2/2015/020059"):
        fixed, n = repair_glyphs(page, (replace(word, text=misread),))
        assert (fixed[0].text, n) == ("FA02/2015/020059", 1)
        assert fixed[0].bbox == word.bbox and fixed[0].ocr_conf == word.ocr_conf


@pytest.mark.parametrize("printed", ["PO019817", "FAO2/2015/020059", "FAQ2/2015/020059"])
def test_a_printed_letter_stays_a_letter(printed):
    """The letter O is wider than the zero and Q has a tail: a word that prints them keeps them."""
    page, word = _printed(printed)
    fixed, n = repair_glyphs(page, (word,))
    assert (fixed[0].text, n) == (printed, 0)


def _line(*texts: str, scales=None) -> tuple[np.ndarray, list[Word]]:
    """One printed line of words (one line_id; ``scales``: each word's font scale, default 1),
    each Word's box hugging its ink."""
    page = np.full((80, 900), 255, np.uint8)
    words, x = [], 10
    for t, scale in zip(texts, scales or [1.0] * len(texts), strict=True):
        cv2.putText(page, t, (x, 50), FONT, scale, 0, 2)
        (tw, _), _ = cv2.getTextSize(t, FONT, scale, 2)
        ys, xs = np.where(page[:, x - 2 : x + tw + 4] < 128)
        x0, x1 = x - 2 + xs.min(), x - 2 + xs.max() + 1
        words.append(Word(t, (x0 / 900, ys.min() / 80, x1 / 900, (ys.max() + 1) / 80), 0.9))
        x += tw + 40
    return page, words


def test_a_word_without_a_zero_compares_with_the_zeros_of_its_line():
    page, words = _line("27/08/2015", "BC09218")
    misread = [words[0], replace(words[1], text="BCO9218")]
    fixed, n = repair_glyphs(page, tuple(misread))
    assert [w.text for w in fixed] == ["27/08/2015", "BC09218"] and n == 1


def test_the_zeros_of_another_line_or_another_size_are_not_compared():
    page, words = _line("27/08/2015", "BC09218")
    other_line = (words[0], replace(words[1], text="BCO9218", line_id=1))
    assert repair_glyphs(page, other_line)[1] == 0
    page, words = _line("27/08/2015", "BC09218", scales=(0.6, 1.0))  # smaller print beside it
    both = (words[0], replace(words[1], text="BCO9218"))
    assert repair_glyphs(page, both)[1] == 0


def test_a_run_of_zeros_read_as_letters_is_read_whole():
    page, word = _printed("R000110133")
    fixed, n = repair_glyphs(page, (replace(word, text="ROOO110133"),))
    assert (fixed[0].text, n) == ("R000110133", 1)


def test_a_letter_o_of_its_line_stays_a_letter():
    page, words = _line("27/08/2015", "PO9218")
    assert repair_glyphs(page, tuple(words)) == (tuple(words), 0)


def test_glyphs_that_cannot_be_told_apart_one_by_one_leave_the_word_alone():
    """OCR read one character too many or too few: glyphs and characters do not pair up."""
    page, word = _printed("FA02/2015")
    for text in ("FAQ2/20150", "FAQ2/201"):
        fixed, n = repair_glyphs(page, (replace(word, text=text),))
        assert (fixed[0].text, n) == (text, 0)


@given(
    texts=st.lists(st.text(alphabet="OQo0123AB/ ", min_size=1, max_size=10), max_size=4),
    boxes=st.lists(st.tuples(*[st.floats(0, 1, allow_nan=False)] * 4), min_size=4, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_any_words_on_any_raster_only_ever_turn_o_or_q_into_zero(texts, boxes, seed):
    """Noise, empty and out-of-page boxes, spaces: nothing raises, nothing else changes."""
    raster = np.random.default_rng(seed).integers(0, 256, (60, 200), dtype=np.uint8)
    words = tuple(
        Word(t, (min(a, c), min(b, d), max(a, c), max(b, d)), 0.5, line_id=i % 2)
        for i, (t, (a, b, c, d)) in enumerate(zip(texts, boxes, strict=False))
    )
    fixed, n = repair_glyphs(raster, words)
    assert n == sum(a.text != b.text for a, b in zip(words, fixed, strict=True))
    for a, b in zip(words, fixed, strict=True):
        assert len(a.text) == len(b.text) and a.bbox == b.bbox
        for x, y in zip(a.text, b.text, strict=True):
            assert x == y or (x in SUSPECTS and y == "0")


def test_an_empty_box_or_a_word_without_suspects_is_kept():
    page, word = _printed("FA02/2015")
    nothing = replace(word, text="FAQ2/2015", bbox=(0.99, 0.99, 0.995, 0.995))
    plain = replace(word, text="FA02/2015")
    fixed, n = repair_glyphs(page, (nothing, plain))
    assert fixed == (nothing, plain) and n == 0


def test_the_repair_does_not_depend_on_where_the_word_sits():
    page, word = _printed("FA02/2015")
    shifted = np.full((80, 700), 255, np.uint8)
    shifted[:, 100:] = page
    x0, y0, x1, y1 = word.bbox
    moved = replace(
        word, text="FAQ2/2015", bbox=((x0 * 600 + 100) / 700, y0, (x1 * 600 + 100) / 700, y1)
    )
    assert repair_glyphs(shifted, (moved,))[0][0].text == "FA02/2015"


@pytest.fixture
def misread_scan(tmp_path, monkeypatch):
    """A scan printing an invoice number whose first zero the (patched) OCR reads as a Q."""
    page = np.full((400, 1200), 255, np.uint8)
    cv2.putText(page, "Invoice FA02/2015/020059", (40, 120), FONT, 1.6, 0, 3)
    cv2.putText(page, "Order PO019817", (40, 240), FONT, 1.6, 0, 3)
    png = tmp_path / "scan.png"
    cv2.imwrite(str(png), page)
    real = _ocr._tesseract

    def misreading(*a, **k):
        words = real(*a, **k)
        return [replace(w, text=w.text.replace("FA0", "FAQ")) for w in words]

    monkeypatch.setattr(_ocr, "_tesseract", misreading)
    return png


def test_load_document_reads_the_zero_and_notes_it(misread_scan):
    doc = load_document(misread_scan)
    texts = [w.text for w in doc.pages[0].words]
    assert "FA02/2015/020059" in texts and not any("FAQ" in t for t in texts)
    assert any(t.startswith("PO") for t in texts)  # a real letter O beside digits stays
    assert any("FAQ2/2015/020059 -> FA02/2015/020059" in n for n in doc.pages[0].notes)


def test_inspect_shows_the_repair(misread_scan, capsys):
    assert main(["inspect", str(misread_scan), "--json", "--text", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    page = out["pages"][0]
    assert any("zero" in n for n in page["notes"])
    assert "FA02/2015/020059" in json.dumps(out)
