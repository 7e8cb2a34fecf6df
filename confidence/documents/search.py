"""Value search: find values on a page or document, their boxes, nearby labels and lines.

Everything here works on a :class:`PageIndex` (:mod:`confidence.documents.page_index`), built
once per page and cached by page identity, so scoring many fields of one document never re-scans
its words. Keys live in :mod:`confidence.documents.text`, reading-order lines in
:mod:`confidence.documents.lines`, the typed step in :mod:`confidence.documents.typed_spans`;
this module holds the caches, the document-wide index and the convenience functions.

Matching works on *keys*: the text NFKC-normalised, case-folded and stripped to letters and digits
(:func:`~confidence.documents.text.fold`), so ``"1,234.50"`` and ``"1234.50"`` or ``"INV-001"``
and ``"inv 001"`` meet. A page is one string of its word keys in reading order; a value is searched
in it in four steps, the first that succeeds wins (``Match.method``):

``exact``
    the value's key occurs starting and ending on a key boundary (a word edge, a punctuation break
    inside a word such as ``Total:12.50``, or a letter/digit change such as ``INV12``);
``folded``
    the same after mapping look-alike characters to digits (``o→0, i/l→1, s→5, b→8, z→2``), which
    catches OCR slips such as ``1,234.5O``; score is the plain similarity of the two keys;
``typed``
    (dates and amounts, when a field type is given) a span of one to four words whose type-aware
    normal form equals the value's (``25/12/2018`` on the page for ``2018-12-25``); score 1;
``fuzzy``
    best approximate substring (rapidfuzz ``partial_ratio``) scoring at least ``min_fuzzy``; only
    for keys of four or more characters. Words fused with a neighbour or split in two still match
    because the page string has no separators.

Bounding boxes follow :mod:`confidence.types`: normalised ``(x0, y0, x1, y1)``, origin top-left.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

from confidence.documents.page_index import Label, Match, PageIndex
from confidence.types import BBox, Document, Page

__all__ = [
    "DocumentIndex",
    "document_index",
    "find_all",
    "find_value",
    "nearest_label",
    "page_index",
    "reading_lines",
]

_PAGE_CACHE: OrderedDict[int, tuple[weakref.ref, int, PageIndex]] = OrderedDict()
_DOC_CACHE: OrderedDict[int, tuple[weakref.ref, DocumentIndex]] = OrderedDict()
_CACHE_SIZE = 256


def page_index(page: Page, page_no: int = 0) -> PageIndex:
    """The cached :class:`PageIndex` of a page (keyed by object identity, bounded LRU)."""
    key = id(page)
    hit = _PAGE_CACHE.get(key)
    if hit is not None and hit[0]() is page and hit[1] == page_no:
        _PAGE_CACHE.move_to_end(key)
        return hit[2]
    idx = PageIndex(page, page_no)
    _PAGE_CACHE[key] = (weakref.ref(page), page_no, idx)
    if len(_PAGE_CACHE) > _CACHE_SIZE:
        _PAGE_CACHE.popitem(last=False)
    return idx


class DocumentIndex:
    """Page indexes of a document plus document-wide search (best page wins, counts add up).

    Examples
    --------
    >>> from confidence.types import Word
    >>> page = Page(1, 100, 100, (Word("EUR", (0.1, 0.1, 0.2, 0.12)),), "pdf", 72.0)
    >>> di = DocumentIndex(Document("d", "d.pdf", (page, page)))
    >>> di.find("eur").page, di.count("EUR")
    (0, 2)
    """

    def __init__(self, document: Document) -> None:
        self.document = document
        self.pages = [PageIndex(p, i) for i, p in enumerate(document.pages)]
        self.n_words = sum(len(p.words) for p in document.pages)
        self._found: dict[tuple[str, str | None], Match | None] = {}
        self._counts: dict[str, int] = {}

    def find(self, value: str, field_type: str | None = None) -> Match | None:
        """Best match over all pages: highest score, earliest page on ties."""
        ck = (value, field_type)
        if ck in self._found:
            return self._found[ck]
        best: Match | None = None
        for p in self.pages:
            m = p.find(value, field_type)
            if m is not None and (best is None or m.score > best.score):
                best = m
                if m.score >= 1.0:
                    break
        self._found[ck] = best
        return best

    def count(self, value: str) -> int:
        """Number of exact occurrences of ``value`` over all pages."""
        n = self._counts.get(value)
        if n is None:
            n = self._counts[value] = sum(p.count(value) for p in self.pages)
        return n

    def find_all(self, value: str) -> list[Match]:
        """Every exact occurrence of ``value``, page by page in reading order."""
        return [m for p in self.pages for m in p.find_all(value)]


def document_index(document: Document) -> DocumentIndex:
    """The cached :class:`DocumentIndex` of a document (keyed by object identity, bounded LRU)."""
    key = id(document)
    hit = _DOC_CACHE.get(key)
    if hit is not None and hit[0]() is document:
        _DOC_CACHE.move_to_end(key)
        return hit[1]
    idx = DocumentIndex(document)
    _DOC_CACHE[key] = (weakref.ref(document), idx)
    if len(_DOC_CACHE) > _CACHE_SIZE:
        _DOC_CACHE.popitem(last=False)
    return idx


def find_value(page: Page, value: str, field_type: str | None = None) -> Match | None:
    """Best place ``value`` occurs on ``page`` (exact, folded, typed or fuzzy), or None.

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> words = (Word("T0TAL", (0.1, 0.5, 0.2, 0.52), 0.6, line_id=1),
    ...          Word("1,234.5O", (0.3, 0.5, 0.4, 0.52), 0.7, line_id=1))
    >>> p = Page(1, 100, 100, words, "ocr", 72.0)
    >>> m = find_value(p, "1234.50")
    >>> m.indices, m.method, m.confs
    ((1,), 'folded', (0.7,))
    """
    return page_index(page).find(value, field_type)


def find_all(page: Page, value: str) -> list[Match]:
    """Every exact occurrence of ``value`` on ``page``."""
    return page_index(page).find_all(value)


def nearest_label(page: Page, bbox: BBox, exclude: tuple[int, ...] = ()) -> Label | None:
    """Nearest label-like word left of ``bbox`` on its line, else above it; see :class:`Label`."""
    return page_index(page).nearest_label(bbox, exclude)


def reading_lines(page: Page) -> list[list[int]]:
    """Word indices grouped into lines (by ``line_id`` or vertical overlap), in reading order."""
    return [list(g) for g in page_index(page).lines]
