"""What the label printed beside the reported value names (``lbl_*``).

A reader that takes the wrong one of several labelled values (the total before tax for the
total with it, the tax for the total, a due date for the issue date) reports a value whose own
label names another concept. The label is the text printed left of the value on its first line,
else the nearest label-like word (:meth:`~confidence.documents.page_index.PageIndex.label_of`,
which may be above it); its concepts come from the label vocabulary, a tax qualifier deciding
an amount label (:func:`~confidence.documents.vocab.label_concepts`: ``Total (excl. VAT)`` names
a net amount).

* ``lbl_names_field`` -- 1 when the label names the field's own concept
  (:func:`~confidence.documents.vocab.field_concept`), else 0;
* ``lbl_names_other`` -- 1 when it names another concept, else 0.

Both are NaN for a field the vocabulary ties to no concept and for a value not found on the
page.
"""

from __future__ import annotations

import math

from confidence.documents.page_index import Label, Match
from confidence.documents.search import DocumentIndex
from confidence.documents.vocab import field_concept, label_concepts
from confidence.schema import Field

__all__ = ["NAMES", "values"]

NAMES: tuple[str, ...] = ("lbl_names_field", "lbl_names_other")


def label_text(index: DocumentIndex, match: Match, label: Label | None) -> str:
    """The words printed left of the match on its first line, else the nearest label's."""
    page = index.pages[match.page]
    words = page.words
    first = page.line_of[match.indices[0]]
    start = min(words[i].bbox[0] for i in match.indices if page.line_of[i] == first)
    own = set(match.indices)
    left = [
        words[i].text
        for i in page.lines[first]
        if i not in own and words[i].bbox[2] <= start + 1e-6
    ]
    if any(c.isalpha() for w in left for c in w):
        return " ".join(left)
    return label.text if label is not None else ""


def values(
    index: DocumentIndex, match: Match | None, label: Label | None, field: Field
) -> list[float]:
    """Feature values in :data:`NAMES` order.

    Examples
    --------
    >>> from confidence.documents.search import document_index
    >>> from confidence.types import Document, Page, Word
    >>> printed = {0.10: "Total (excl. VAT) 8.00", 0.13: "Grand total 9.60"}
    >>> words = tuple(Word(t, (0.1 + 0.06 * k, y, 0.15 + 0.06 * k, y + 0.02))
    ...               for y, text in printed.items() for k, t in enumerate(text.split()))
    >>> idx = document_index(Document("d", "d.png", (Page(1, 100, 100, words, "ocr", 300.0),)))
    >>> total = Field("total", "amount", "Total amount paid")
    >>> def of(v):
    ...     m = idx.find(v, "amount")
    ...     return values(idx, m, idx.pages[0].label_of(m), total)
    >>> of("8.00"), of("9.60")
    ([0.0, 1.0], [1.0, 0.0])
    >>> values(idx, None, None, total), values(idx, idx.find("8.00", "amount"), None,
    ...                                        Field("remark", "text"))
    ([nan, nan], [nan, nan])
    """
    concept = field_concept(field)
    if match is None or concept is None:
        return [math.nan, math.nan]
    found = label_concepts(label_text(index, match, label))
    return [float(concept in found), float(bool(found - {concept}))]
