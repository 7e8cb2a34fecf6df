"""Reading-order lines and visual rows of a page: the one rows/lines algorithm.

A *line* is a run of words ingestion put on one text line (same ``block_id`` and ``line_id``);
both calls see the document as numbered lines (:func:`document_lines`). Layout reasoning ("the
value to the right of a label") needs *rows*: lines whose vertical bands line up, whatever OCR
block they were put in, because receipts and invoices often print a label and its value in two
blocks. :func:`rows` groups :class:`Line` objects and :func:`group_lines` a page's word indices,
with the same rule: a band (median top and bottom edges of its words) joins the row being built
when its centre lies inside the band of the row's first member. The calls once used a second rule
(box unions overlapping by half the smaller height, any of the last three rows); measured on
synthetic invoices and receipts, SROIE and generated invoice scans the two agree to within two
fields in 2,500, and this one keeps the shipped model's feature values unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from confidence.types import BBox, Document, Word

__all__ = ["Line", "document_lines", "group_lines", "rows"]


@dataclass(frozen=True)
class Line:
    """One reading-order line.

    Parameters
    ----------
    index : int
        0-based position in the document's reading order (over all pages).
    text : str
        Words joined by single spaces.
    bbox : BBox
        Union of the word boxes (normalised, origin top-left).
    page : int
        1-based page number.
    words : tuple of Word
    """

    index: int
    text: str
    bbox: BBox
    page: int
    words: tuple[Word, ...]


def _union(boxes: list[BBox]) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def document_lines(document: Document) -> list[Line]:
    """Split a document into reading-order lines.

    Examples
    --------
    >>> from confidence.types import Page
    >>> ws = (Word("Total", (0.1, 0.5, 0.2, 0.52), line_id=1),
    ...       Word("9.00", (0.7, 0.5, 0.8, 0.52), line_id=1))
    >>> doc = Document("d", "d.png", (Page(1, 100, 100, ws, "ocr", 300.0),))
    >>> [ln.text for ln in document_lines(doc)]
    ['Total 9.00']
    """
    out: list[Line] = []
    for page in document.pages:
        groups: list[list[Word]] = []
        last = None
        for w in page.words:
            if not w.text.strip():
                continue
            key = (w.block_id, w.line_id)
            if key != last:
                groups.append([])
                last = key
            groups[-1].append(w)
        for g in groups:
            out.append(
                Line(
                    index=len(out),
                    text=" ".join(w.text for w in g),
                    bbox=_union([w.bbox for w in g]),
                    page=page.number,
                    words=tuple(g),
                )
            )
    return out


def _band(boxes: Sequence[BBox]) -> tuple[float, float]:
    """Vertical band ``(top, bottom)`` of a group of boxes: median edges of two or more.

    Median edges keep one tall word or a skewed line from stretching the band.
    """
    if len(boxes) == 1:
        return boxes[0][1], boxes[0][3]
    k = len(boxes) // 2
    return sorted(b[1] for b in boxes)[k], sorted(b[3] for b in boxes)[k]


def _visual_rows(items: Sequence[tuple[int, float, float, float]]) -> list[list[int]]:
    """Indices of ``(page, top, bottom, left)`` bands grouped into visual rows (in join order).

    Bands are taken top to bottom by centre (left to right on ties); a band joins the row being
    built when it is on the same page and its centre lies within the vertical extent of the
    row's first band, else it starts a new row. Only the row being built is joined, so a label
    far above a table row never joins it.
    """
    order = sorted(
        range(len(items)),
        key=lambda i: (items[i][0], 0.5 * (items[i][1] + items[i][2]), items[i][3]),
    )
    out: list[list[int]] = []
    page, top, bot = -1, 0.0, 0.0
    for i in order:
        p, y0, y1, _ = items[i]
        if out and p == page and top <= 0.5 * (y0 + y1) <= bot:
            out[-1].append(i)
        else:
            out.append([i])
            page, top, bot = p, y0, y1
    return out


def _line_band(ln: Line) -> tuple[float, float]:
    if len(ln.words) > 1:
        return _band([w.bbox for w in ln.words])
    return ln.bbox[1], ln.bbox[3]


def rows(lines: list[Line]) -> list[list[Line]]:
    """Lines of the same page grouped into visual rows, top to bottom, each left to right.

    Examples
    --------
    >>> a = Line(0, "TOTAL", (0.1, 0.50, 0.2, 0.52), 1, ())
    >>> b = Line(1, "9.00", (0.7, 0.505, 0.8, 0.525), 1, ())
    >>> c = Line(2, "CASH 10.00", (0.1, 0.60, 0.8, 0.62), 1, ())
    >>> [[ln.text for ln in r] for r in rows([a, b, c])]
    [['TOTAL', '9.00'], ['CASH 10.00']]
    """
    items = [(ln.page, *_line_band(ln), ln.bbox[0]) for ln in lines]
    return [
        sorted((lines[i] for i in row), key=lambda ln: ln.bbox[0]) for row in _visual_rows(items)
    ]


def group_lines(words: tuple[Word, ...]) -> list[list[int]]:
    """Visual lines of one page's word indices, top to bottom, each left to right.

    Words are first grouped by ``(block_id, line_id)`` (each word alone when the page has no
    line ids), then the groups are put into visual rows like :func:`rows` does, so a label
    column and a value column in different blocks still share a line.

    Examples
    --------
    >>> group_lines((Word("b", (0.5, 0.3, 0.6, 0.32)), Word("top", (0.1, 0.1, 0.2, 0.12)),
    ...              Word("a", (0.1, 0.302, 0.2, 0.322))))
    [[1], [2, 0]]
    """
    if not words:
        return []
    by_id: dict[tuple[int, int], list[int]] = {}
    for i, w in enumerate(words):
        by_id.setdefault((w.block_id, w.line_id), []).append(i)
    groups = list(by_id.values()) if len(by_id) > 1 else [[i] for i in range(len(words))]
    items = []
    for g in groups:
        boxes = [words[i].bbox for i in g]
        items.append((0, *_band(boxes), boxes[0][0]))
    out = []
    for row in _visual_rows(items):
        line = [i for r in row for i in groups[r]]
        line.sort(key=lambda i: words[i].bbox[0])
        out.append(line)
    return out
