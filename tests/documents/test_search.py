"""Layout primitives: finding values, labels, lines, table cells on hand-built pages."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.documents.page_index import Match
from confidence.documents.search import (
    document_index,
    find_all,
    find_value,
    nearest_label,
    page_index,
    reading_lines,
)
from confidence.documents.text import fold
from confidence.documents.vocab import is_label_like
from confidence.types import Document, Page, Word


def W(text, x0, y0, x1, y1, conf=1.0, line=0, font=None):
    return Word(text, (x0, y0, x1, y1), ocr_conf=conf, line_id=line, font_size=font)


@pytest.fixture
def invoice_page():
    words = (
        W("ACME", 0.10, 0.05, 0.20, 0.08, 0.99, line=0, font=14.0),
        W("Corp", 0.21, 0.05, 0.30, 0.08, 0.98, line=0, font=14.0),
        W("Invoice", 0.10, 0.15, 0.18, 0.17, 0.95, line=1),
        W("No:", 0.19, 0.15, 0.22, 0.17, 0.90, line=1),
        W("INV-0042", 0.25, 0.15, 0.35, 0.17, 0.80, line=1),
        W("Date", 0.60, 0.15, 0.65, 0.17, 0.97, line=1),
        W("25/12/2018", 0.66, 0.15, 0.76, 0.17, 0.85, line=1),
        W("Total", 0.50, 0.80, 0.56, 0.82, 0.93, line=2),
        W("1,234.50", 0.70, 0.80, 0.80, 0.82, 0.70, line=2),
    )
    return Page(1, 850, 1100, words, "ocr", 100.0)


def test_fold_examples():
    assert fold("Total: 1,234.50 EUR") == "total123450eur"
    assert fold("INV-0042") == fold("inv 0042") == "inv0042"
    assert fold("") == ""
    assert fold("  ,. ") == ""


@given(st.text())
def test_fold_total_and_idempotent(s):
    k = fold(s)
    assert isinstance(k, str)
    assert fold(k) == k
    assert all(ch.isalnum() for ch in k)


@given(st.text(alphabet=st.characters(categories=["L", "N", "P", "Z"]), max_size=30))
def test_fold_ignores_separators(s):
    assert fold(s) == fold(" " + s.replace(" ", "") + "-")


def test_find_single_word_exact(invoice_page):
    m = find_value(invoice_page, "1,234.50")
    assert m is not None
    assert m.indices == (8,)
    assert m.bbox == (0.70, 0.80, 0.80, 0.82)
    assert m.method == "exact" and m.score == 1.0 and m.exact
    assert m.confs == (0.70,)
    # Separators do not matter for the key.
    assert find_value(invoice_page, "1234.50").indices == (8,)


def test_find_multi_word_union_bbox(invoice_page):
    m = find_value(invoice_page, "Acme Corp")
    assert m.indices == (0, 1)
    assert m.bbox == (0.10, 0.05, 0.30, 0.08)
    assert m.confs == (0.99, 0.98)


def test_find_split_and_fused_words():
    words = (
        W("INV-00", 0.1, 0.1, 0.2, 0.12, 0.9, line=0),
        W("42", 0.21, 0.1, 0.25, 0.12, 0.8, line=0),
        W("Total:12.50", 0.1, 0.3, 0.3, 0.32, 0.7, line=1),
    )
    page = Page(1, 100, 100, words, "ocr", 72.0)
    m = find_value(page, "INV-0042")
    assert m.indices == (0, 1) and m.method == "exact"
    m = find_value(page, "12.50")
    assert m.indices == (2,) and m.method == "exact"
    assert m.bbox == (0.1, 0.3, 0.3, 0.32)


def test_substring_inside_number_is_not_exact():
    page = Page(1, 100, 100, (W("2012", 0.1, 0.1, 0.2, 0.12),), "pdf", 72.0)
    assert find_all(page, "12") == []
    assert page_index(page).count("2012") == 1


def test_fuzzy_on_ocr_noise():
    words = (
        W("T0TAL", 0.1, 0.5, 0.2, 0.52, 0.6, line=0),
        W("1,234.5O", 0.3, 0.5, 0.4, 0.52, 0.55, line=0),
        W("Thank", 0.1, 0.7, 0.2, 0.72, 0.9, line=1),
        W("y0u", 0.21, 0.7, 0.25, 0.72, 0.4, line=1),
    )
    page = Page(1, 100, 100, words, "ocr", 72.0)
    m = find_value(page, "1,234.50")
    assert m.indices == (1,) and m.method == "folded"
    assert m.score == pytest.approx(5 / 6)  # "123450" vs "12345o": one substitution in six
    assert m.confs == (0.55,)
    m = find_value(page, "Thank you")
    assert m.method == "folded" and m.indices == (2, 3)
    m = find_value(page, "Thamk yuo")
    assert m is not None and m.method == "fuzzy" and set(m.indices) <= {2, 3}
    assert 0.6 <= m.score < 1.0
    assert find_value(page, "completely different words") is None


def test_find_all_occurrences_in_reading_order():
    words = (
        W("9.00", 0.7, 0.8, 0.8, 0.82, line=2),
        W("Sub", 0.1, 0.5, 0.2, 0.52, line=1),
        W("9.00", 0.7, 0.5, 0.8, 0.52, line=1),
    )
    page = Page(1, 100, 100, words, "pdf", 72.0)
    ms = find_all(page, "9.00")
    assert [m.indices for m in ms] == [(2,), (0,)]
    assert find_value(page, "9.00").indices == (2,)


def test_nearest_label_left_and_above(invoice_page):
    lab = nearest_label(invoice_page, invoice_page.words[4].bbox, exclude=(4,))
    assert lab.text == "No:" and lab.direction == "left"
    assert lab.dx == pytest.approx(0.03) and lab.dy == 0.0
    assert lab.ocr_conf == 0.90
    lab = nearest_label(invoice_page, invoice_page.words[8].bbox, exclude=(8,))
    assert lab.text == "Total" and lab.distance == pytest.approx(0.14)
    # A value under a label: the label is above.
    words = (
        W("Due date", 0.1, 0.1, 0.3, 0.12, line=0),
        W("01.02.2024", 0.1, 0.15, 0.3, 0.17, line=1),
    )
    page = Page(1, 100, 100, words, "pdf", 72.0)
    lab = nearest_label(page, words[1].bbox, exclude=(1,))
    assert lab.direction == "above" and lab.dy == pytest.approx(0.03)


def test_nearest_label_none_when_only_numbers():
    page = Page(
        1, 100, 100, (W("12", 0.1, 0.1, 0.2, 0.12), W("13", 0.3, 0.1, 0.4, 0.12)), "pdf", 72
    )
    assert nearest_label(page, page.words[1].bbox, exclude=(1,)) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Total:", True),
        ("Date", True),
        ("No.", True),
        ("VAT", True),
        ("Customer", True),
        ("12.50", False),
        ("INV-001", False),
        ("25/12/2018", False),
        ("$", False),
        ("x", False),
    ],
)
def test_is_label_like(text, expected):
    assert is_label_like(text) is expected


def test_lines_by_line_id(invoice_page):
    assert reading_lines(invoice_page) == [[0, 1], [2, 3, 4, 5, 6], [7, 8]]


def test_lines_by_vertical_overlap_without_ids():
    words = (
        W("b", 0.5, 0.300, 0.6, 0.320),
        W("a", 0.1, 0.302, 0.2, 0.322),
        W("top", 0.1, 0.100, 0.2, 0.120),
        W("c", 0.8, 0.298, 0.9, 0.318),
    )
    page = Page(1, 100, 100, words, "ocr", 72.0)
    assert reading_lines(page) == [[2], [1, 0, 3]]


def test_lines_invariant_to_word_order_permutation(invoice_page):
    rev = Page(1, 850, 1100, tuple(reversed(invoice_page.words)), "ocr", 100.0)
    n = len(invoice_page.words)
    mapped = [[n - 1 - i for i in line] for line in reading_lines(rev)]
    assert mapped == reading_lines(invoice_page)
    assert find_value(rev, "Acme Corp").bbox == find_value(invoice_page, "Acme Corp").bbox


def test_table_cells():
    words = []
    for r, y in enumerate((0.40, 0.45, 0.50)):
        words.append(W(f"Item{r}", 0.1, y, 0.2, y + 0.02, line=r))
        words.append(W(f"{r + 1}", 0.55, y, 0.60, y + 0.02, line=r))
        words.append(W(f"{(r + 1) * 3}.00", 0.75, y, 0.85, y + 0.02, line=r))
    words.append(W("Total", 0.1, 0.8, 0.2, 0.82, line=9))
    words.append(W("18.00", 0.75, 0.8, 0.85, 0.82, line=9))
    page = Page(1, 100, 100, tuple(words), "pdf", 72.0)
    cells = page_index(page).table_cells
    assert cells[[1, 2, 4, 5, 7, 8]].all()
    assert not cells[[0, 3, 6, 9]].any()
    # The total shares the right edge but its line has one number only.
    assert not cells[10]


def test_document_index_multi_page_and_cache(invoice_page):
    other = Page(2, 850, 1100, (W("EUR", 0.1, 0.1, 0.2, 0.12, 0.5),), "pdf", 100.0)
    doc = Document("d", "d.pdf", (invoice_page, other))
    di = document_index(doc)
    assert document_index(doc) is di
    m = di.find("EUR")
    assert m.page == 1 and m.indices == (0,)
    assert di.count("1,234.50") == 1
    assert di.find("nothing like it here") is None


def test_empty_page_and_value():
    page = Page(1, 100, 100, (), "ocr", 72.0)
    assert find_value(page, "12") is None
    assert find_value(page, "") is None
    assert reading_lines(page) == []
    assert nearest_label(page, (0.1, 0.1, 0.2, 0.2)) is None
    assert math.isnan(page_index(page).median_font)


def test_match_round_trip(invoice_page):
    m = find_value(invoice_page, "Acme Corp")
    assert Match.from_dict(m.to_dict()) == m


def test_columns_in_different_blocks_share_a_visual_line():
    words = (
        Word("Total", (0.1, 0.50, 0.2, 0.52), line_id=1, block_id=0),
        Word("Amount", (0.7, 0.40, 0.8, 0.42), line_id=0, block_id=1),
        Word("9.00", (0.7, 0.501, 0.8, 0.521), line_id=1, block_id=1),
    )
    page = Page(1, 100, 100, words, "pdf", 72.0)
    assert reading_lines(page) == [[1], [0, 2]]
    # The label on the value's line wins over a nearer column header above.
    lab = nearest_label(page, words[2].bbox, exclude=(2,))
    assert lab.text == "Total" and lab.direction == "left"
