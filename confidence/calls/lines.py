"""Reading-order lines and visual rows of a :class:`~confidence.types.Document`.

Both calls see the document as numbered *lines* (the reading-order lines ingestion produced).
Layout reasoning ("the value to the right of a label") needs *rows*: words whose vertical
extents overlap, whatever OCR block they were put in, because receipts often split a label and
its amount into two blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from confidence.types import BBox, Document, Word


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


def rows(lines: list[Line]) -> list[list[Line]]:
    """Group lines of the same page whose vertical extents overlap by half, left to right.

    Examples
    --------
    >>> a = Line(0, "TOTAL", (0.1, 0.50, 0.2, 0.52), 1, ())
    >>> b = Line(1, "9.00", (0.7, 0.505, 0.8, 0.525), 1, ())
    >>> c = Line(2, "CASH 10.00", (0.1, 0.60, 0.8, 0.62), 1, ())
    >>> [[ln.text for ln in r] for r in rows([a, b, c])]
    [['TOTAL', '9.00'], ['CASH 10.00']]
    """
    out: list[list[Line]] = []
    for ln in sorted(lines, key=lambda x: (x.page, (x.bbox[1] + x.bbox[3]) / 2)):
        placed = False
        for row in out[-3:]:
            ref = row[0]
            if ref.page != ln.page:
                continue
            top, bot = max(ref.bbox[1], ln.bbox[1]), min(ref.bbox[3], ln.bbox[3])
            h = min(ref.bbox[3] - ref.bbox[1], ln.bbox[3] - ln.bbox[1])
            if h > 0 and bot - top >= 0.5 * h:
                row.append(ln)
                placed = True
                break
        if not placed:
            out.append([ln])
    for row in out:
        row.sort(key=lambda x: x.bbox[0])
    return out
