"""Each word with a digit is read a second time, alone (:mod:`confidence.documents.alone`,
issue 12: a check of the page reading for the confidence features)."""

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
from confidence.documents.alone import (
    MAX_WORDS,
    ROW_HEIGHT,
    agrees,
    key,
    layout_rows,
    read_alone,
    with_digit,
)
from confidence.types import Word

FONT = cv2.FONT_HERSHEY_SIMPLEX


def _data(found: list[tuple[str, int, int]]) -> dict:
    """``image_to_data`` output of words ``(text, left, top)``, each ROW_HEIGHT tall."""
    return {
        "text": [t for t, _, _ in found],
        "left": [x for _, x, _ in found],
        "top": [y for _, _, y in found],
        "width": [50] * len(found),
        "height": [ROW_HEIGHT] * len(found),
    }


WORDS = (
    Word("TOTAL", (0.1, 0.1, 0.3, 0.2)),
    Word("12.60", (0.5, 0.1, 0.7, 0.2)),
    Word("Date", (0.1, 0.5, 0.3, 0.6)),
    Word("11/05/2018", (0.5, 0.5, 0.9, 0.6)),
)
PAGE = np.full((200, 400), 255, np.uint8)


def test_key_and_agreement_ignore_case_spaces_and_punctuation():
    assert key("RM 8.60") == "rm860" and key("Rm8,60") == "rm860"
    assert agrees("RM 8.60", "rm8,60")
    assert not agrees("11/06/2018", "11/05/2018")
    assert not agrees("12.50", "")
    assert with_digit("A1") and not with_digit("TOTAL") and not with_digit("")


@given(st.text(max_size=20), st.text(alphabet=" .,:/-", max_size=5))
def test_agreement_is_symmetric_and_blind_to_added_punctuation(text, extra):
    assert agrees(text, text + extra) and agrees(text + extra, text)
    assert agrees(text, text.upper()) == agrees(text.upper(), text)


def test_each_word_with_a_digit_gets_the_reading_of_its_own_row():
    """Two cut-outs: tesseract's words are given back by the row their centre lies in, in
    left-to-right order, whatever order tesseract lists them in."""
    rows = layout_rows(2)

    def read(canvas):
        assert canvas.shape[0] == rows[-1][1] + 24  # two rows, one call
        return _data([("2018", 130, rows[1][0]), ("12.60", 24, rows[0][0]),
                      ("11/05/", 24, rows[1][0] + 3), ("", 200, rows[0][0])])  # fmt: skip

    out = read_alone(PAGE, WORDS, read)
    assert [w.alone for w in out] == [None, "12.60", None, "11/05/ 2018"]
    assert [replace(w, alone=None) for w in out] == list(WORDS)  # nothing else changes


def test_a_row_read_as_nothing_is_an_empty_second_reading():
    out = read_alone(PAGE, WORDS, lambda canvas: _data([("12.60", 24, layout_rows(2)[0][0])]))
    assert [w.alone for w in out] == [None, "12.60", None, ""]


def test_a_page_without_digits_is_not_read_again():
    def read(canvas):
        raise AssertionError("no call expected")

    words = (WORDS[0], WORDS[2])
    assert read_alone(PAGE, words, read) == words


def test_at_most_max_words_are_read_again():
    many = tuple(Word(str(i), (0.1, 0.1, 0.2, 0.2)) for i in range(MAX_WORDS + 5))
    seen = []

    def read(canvas):
        seen.append(canvas.shape[0])
        return _data([])

    out = read_alone(PAGE, many, read)
    assert seen == [layout_rows(MAX_WORDS)[-1][1] + 24]
    assert sum(w.alone is not None for w in out) == MAX_WORDS


def _printed_page(lines: list[str]) -> np.ndarray:
    page = np.full((120 * len(lines) + 80, 1200), 255, np.uint8)
    for i, text in enumerate(lines):
        cv2.putText(page, text, (40, 100 + 120 * i), FONT, 1.6, 0, 3)
    return page


def test_tesseract_reads_printed_words_alone_as_printed():
    """The real reader on a real raster: each word's box read alone gives its print back."""
    page = _printed_page(["Total 12.50", "Date 11/05/2018"])
    words = _ocr._tesseract(page, 300.0, "eng", 60.0, "scan.png", 1)
    assert {"12.50", "11/05/2018"} <= {w.text for w in words}

    def read(canvas):
        return _ocr._run_tesseract(canvas, "--psm 6 --dpi 300", "eng", 60.0, "scan.png", 1)

    out = read_alone(page, words, read)
    again = {w.text: w.alone for w in out if w.alone is not None}
    assert again == {"12.50": "12.50", "11/05/2018": "11/05/2018"}
    assert all(w.alone is None for w in out if not with_digit(w.text))


@pytest.fixture
def misread_scan(tmp_path, monkeypatch):
    """A scan printing a date whose 5 the (patched) first OCR reading reads as a 6."""
    png = tmp_path / "scan.png"
    cv2.imwrite(str(png), _printed_page(["Total 12.50", "Date 11/05/2018"]))
    real = _ocr._tesseract

    def misreading(*a, **k):
        return [replace(w, text=w.text.replace("11/05", "11/06")) for w in real(*a, **k)]

    monkeypatch.setattr(_ocr, "_tesseract", misreading)
    return png


def test_load_document_keeps_the_second_reading_beside_the_first_and_notes_it(misread_scan):
    words = {w.text: w for w in load_document(misread_scan).pages[0].words}
    assert words["11/06/2018"].alone == "11/05/2018"  # evidence, not a correction
    assert words["12.50"].alone == "12.50" and words["Total"].alone is None
    notes = load_document(misread_scan).pages[0].notes
    assert any("read again alone, 1 read otherwise (11/06/2018 -> 11/05/2018)" in n for n in notes)


def test_reading_once_skips_the_second_reading(misread_scan):
    doc = load_document(misread_scan, enlarge_small_text=False)
    assert all(w.alone is None for w in doc.pages[0].words)
    assert not any("read again alone" in n for n in doc.pages[0].notes)


def test_inspect_shows_the_second_reading(misread_scan, capsys):
    assert main(["inspect", str(misread_scan), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("1 read otherwise" in n for n in out["pages"][0]["notes"])


def test_a_second_reading_that_fails_keeps_the_page_and_says_so(misread_scan, monkeypatch):
    """A timeout of the second reading loses only the check: the document loads with its first
    reading, no word carries a second one, and the page's note says why."""
    real = _ocr._run_tesseract

    def slow_canvas(gray, config, *a, **k):
        if "--psm 6" in config:
            raise _ocr.DocumentError("scan.png", "OCR of page 1 timed out after 60 s")
        return real(gray, config, *a, **k)

    monkeypatch.setattr(_ocr, "_run_tesseract", slow_canvas)
    page = load_document(misread_scan).pages[0]
    assert "11/06/2018" in [w.text for w in page.words]
    assert all(w.alone is None for w in page.words)
    assert any(
        n == "words with a digit not read again alone: OCR of page 1 timed out after 60 s"
        for n in page.notes
    )
