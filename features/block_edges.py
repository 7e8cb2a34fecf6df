"""What the page prints right above and right below a multi-line value (``edge_*``).

A name or an address is a block of lines, and a reader can cut it short (``12 Elm Street,``
without its postcode line) or run it into the next block (a shop's name
read as the first line of its address). Both leave a trace at the value's edges: a cut-off
address has an address-like line right under it, a run-on one starts right under the line it
should have started on. For the reported value's place on the page (its first and last visual
row), the words of the row just above and just below that overlap the value's columns give

* ``edge_above_gap`` / ``edge_below_gap`` -- the blank between them and the value in the
  value's own line heights (0 for touching rows, large for a lone block);
* ``edge_above_address`` / ``edge_below_address`` -- how address-like they look, by shape only
  (comma-separated parts, a postcode-like number, a leading house number; a phone number,
  a date or an amount counts against: :func:`confidence.calls.candidates.address_likeness`).

Only ``text`` and ``address`` fields, whose values may span lines, get them; other types, a
value not found on the page, and an edge with nothing printed beyond it give NaN.
"""

from __future__ import annotations

import math
from statistics import median

from confidence.calls.candidates import address_likeness
from confidence.documents.page_index import Match
from confidence.documents.search import DocumentIndex

__all__ = ["NAMES", "values"]

NAMES: tuple[str, ...] = (
    "edge_above_gap",
    "edge_above_address",
    "edge_below_gap",
    "edge_below_address",
)
_TYPES = ("text", "address")
_MAX_GAP = 20.0
"""Gaps are capped here (line heights): beyond it a neighbour is as good as none."""


def values(index: DocumentIndex, match: Match | None, field_type: str) -> list[float]:
    """Feature values in :data:`NAMES` order.

    Examples
    --------
    >>> from confidence.documents.search import document_index
    >>> from confidence.types import Document, Page, Word
    >>> def row(y, text, x=0.1):
    ...     out = []
    ...     for tok in text.split():
    ...         out.append(Word(tok, (x, y, x + 0.05, y + 0.02)))
    ...         x += 0.06
    ...     return out
    >>> words = (*row(0.10, "Corner Shop"), *row(0.13, "12 Elm Street"),
    ...          *row(0.16, "Leeds LS1 4AB"), *row(0.30, "Total 9.00"))
    >>> idx = document_index(Document("d", "d.png", (Page(1, 100, 100, words, "ocr", 300.0),)))
    >>> [round(v, 2) for v in values(idx, idx.find("12 Elm Street", "address"), "address")]
    [0.5, 0.0, 0.5, 1.0]
    >>> [round(v, 2) for v in values(idx, idx.find("12 Elm Street Leeds LS1 4AB", "address"),
    ...                              "address")]
    [0.5, 0.0, 6.0, -1.0]
    >>> all(math.isnan(v) for v in values(idx, idx.find("9.00", "amount"), "amount"))
    True
    """
    if match is None or field_type not in _TYPES:
        return [math.nan] * len(NAMES)
    page = index.pages[match.page]
    words = page.words
    boxes = [words[i].bbox for i in match.indices]
    rows = sorted({page.line_of[i] for i in match.indices})
    height = median(b[3] - b[1] for b in boxes)
    if height <= 0:
        return [math.nan] * len(NAMES)
    x0 = min(b[0] for b in boxes) - height
    x1 = max(b[2] for b in boxes) + height
    top = min(b[1] for b in boxes)
    bottom = max(b[3] for b in boxes)
    out: list[float] = []
    for r, above in ((rows[0] - 1, True), (rows[-1] + 1, False)):
        near = (
            [i for i in page.lines[r] if words[i].bbox[2] > x0 and words[i].bbox[0] < x1]
            if 0 <= r < len(page.lines)
            else []
        )
        if not near:
            out += [math.nan, math.nan]
            continue
        if above:
            gap = (top - max(words[i].bbox[3] for i in near)) / height
        else:
            gap = (min(words[i].bbox[1] for i in near) - bottom) / height
        text = " ".join(words[i].text for i in near)
        out += [min(max(gap, 0.0), _MAX_GAP), address_likeness(text)]
    return out
