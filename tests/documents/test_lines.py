"""The one rows/lines algorithm: calls (Line rows) and features (word lines) agree."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from confidence.documents.lines import Line, document_lines, group_lines, rows
from confidence.types import Document, Page, Word


def W(text, x0, y0, x1, y1, line=0, block=0):
    return Word(text, (x0, y0, x1, y1), line_id=line, block_id=block)


def _doc(words):
    return Document("d", "d.png", (Page(1, 100, 100, tuple(words), "ocr", 300.0),))


def test_document_lines_follow_block_and_line_ids():
    ws = [
        W("Total", 0.1, 0.50, 0.2, 0.52, line=1),
        W("9.00", 0.7, 0.50, 0.8, 0.52, line=1),
        W(" ", 0.8, 0.50, 0.81, 0.52, line=1),
        W("CASH", 0.1, 0.60, 0.2, 0.62, line=2),
    ]
    lines = document_lines(_doc(ws))
    assert [(ln.index, ln.text, ln.page) for ln in lines] == [(0, "Total 9.00", 1), (1, "CASH", 1)]
    assert lines[0].bbox == (0.1, 0.50, 0.8, 0.52)


def test_label_and_value_in_two_blocks_share_a_row():
    # A receipt prints the label in one OCR block and the amount in another, slightly lower.
    ws = [
        W("TOTAL", 0.1, 0.500, 0.2, 0.520, line=1, block=1),
        W("9.00", 0.7, 0.505, 0.8, 0.525, line=1, block=2),
        W("CASH", 0.1, 0.600, 0.2, 0.620, line=2, block=1),
    ]
    lines = document_lines(_doc(ws))
    assert [[ln.text for ln in r] for r in rows(lines)] == [["TOTAL", "9.00"], ["CASH"]]
    assert group_lines(tuple(ws)) == [[0, 1], [2]]


def test_rows_and_group_lines_agree():
    ws = [
        W("Invoice", 0.10, 0.100, 0.20, 0.120, line=1, block=1),
        W("No:", 0.21, 0.100, 0.25, 0.120, line=1, block=1),
        W("INV-7", 0.60, 0.103, 0.70, 0.123, line=1, block=2),
        W("Date", 0.10, 0.130, 0.20, 0.150, line=2, block=1),
        W("25/12/2018", 0.60, 0.131, 0.70, 0.151, line=2, block=2),
    ]
    lines = document_lines(_doc(ws))
    by_rows = [[w.text for ln in r for w in ln.words] for r in rows(lines)]
    by_words = [[ws[i].text for i in g] for g in group_lines(tuple(ws))]
    assert by_rows == by_words == [["Invoice", "No:", "INV-7"], ["Date", "25/12/2018"]]


def test_pages_never_share_a_row():
    a = Line(0, "a", (0.1, 0.5, 0.2, 0.52), 1, ())
    b = Line(1, "b", (0.5, 0.5, 0.6, 0.52), 2, ())
    assert [[ln.index for ln in r] for r in rows([a, b])] == [[0], [1]]


def test_empty():
    assert rows([]) == []
    assert group_lines(()) == []
    assert document_lines(_doc([])) == []


boxes = st.tuples(
    st.floats(0, 0.9), st.floats(0, 0.95), st.floats(0.01, 0.1), st.floats(0.005, 0.05)
).map(lambda t: (t[0], t[1], t[0] + t[2], t[1] + t[3]))


@given(st.lists(st.tuples(boxes, st.integers(0, 3)), max_size=12))
def test_group_lines_is_a_partition_sorted_left_to_right(items):
    ws = tuple(W(f"w{i}", *b, line=li) for i, (b, li) in enumerate(items))
    out = group_lines(ws)
    assert sorted(i for g in out for i in g) == list(range(len(ws)))
    for g in out:
        xs = [ws[i].bbox[0] for i in g]
        assert xs == sorted(xs)


@given(st.lists(boxes, max_size=10))
def test_rows_is_a_partition_top_to_bottom(bs):
    lines = [Line(i, f"l{i}", b, 1, ()) for i, b in enumerate(bs)]
    out = rows(lines)
    assert sorted(ln.index for r in out for ln in r) == list(range(len(lines)))
    firsts = [min((ln.bbox[1] + ln.bbox[3]) / 2 for ln in r) for r in out]
    assert firsts == sorted(firsts)
