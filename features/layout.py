"""Layout primitives: find values on a page, their boxes, nearby labels and reading-order lines.

Everything here works on a :class:`PageIndex`, built once per page and cached by page identity, so
scoring many fields of one document never re-scans its words.

Matching works on *keys*: the text NFKC-normalised, case-folded and stripped to letters and digits
(:func:`fold`), so ``"1,234.50"`` and ``"1234.50"`` or ``"INV-001"`` and ``"inv 001"`` meet. A page
is one string of its word keys in reading order; a value is searched in it in four steps, the first
that succeeds wins (``Match.method``):

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

import math
import re
import statistics
import unicodedata
import weakref
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from confidence.types import BBox, Document, Page, Word

__all__ = [
    "LABEL_WORDS",
    "DocumentIndex",
    "Label",
    "Match",
    "PageIndex",
    "document_index",
    "find_all",
    "find_value",
    "fold",
    "is_label_like",
    "nearest_label",
    "page_index",
    "reading_lines",
]

_RUN = re.compile(r"\d+|[^\W\d_]+")
_SHAPE = str.maketrans({"o": "0", "i": "1", "l": "1", "s": "5", "b": "8", "z": "2"})
_NUMBER = re.compile(r"^[^\w]*[\d.,'’ -]*\d[\d.,'’ %-]*[^\w]*$")

LABEL_WORDS: frozenset[str] = frozenset(
    """total subtotal sub amount amt tax vat gst tva date due invoice inv no nr number num bill ship
    to from customer client company name address addr tel phone fax email balance paid pay payment
    cash change receipt ref reference order po purchase account iban bic swift currency net gross
    discount rounding qty quantity price unit description item ttc ht montant facture echeance
    rechnung datum betrag summe gesamt mwst""".split()
)
"""Folded words that are labels even without a trailing colon."""


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """Matching key of a string: NFKC, case-folded, letters and digits only.

    Idempotent (``fold(fold(s)) == fold(s)``) and total over any ``str``.

    Examples
    --------
    >>> fold("Total: 1,234.50 EUR")
    'total123450eur'
    >>> fold("INV-0001") == fold("inv 0001")
    True
    """
    out = "".join(_RUN.findall(unicodedata.normalize("NFKC", text).casefold()))
    # NFKC/casefold can recompose or expand characters once separators are gone; iterate to a
    # fixed point so the key is idempotent.
    for _ in range(4):
        nxt = "".join(_RUN.findall(unicodedata.normalize("NFKC", out).casefold()))
        if nxt == out:
            break
        out = nxt
    return out


@lru_cache(maxsize=65536)
def _word_runs(text: str) -> tuple[str, ...]:
    return tuple(_RUN.findall(unicodedata.normalize("NFKC", text).casefold()))


@lru_cache(maxsize=65536)
def _numeric(text: str) -> bool:
    digits = sum(ch.isdigit() for ch in text)
    return digits > 0 and 2 * digits >= sum(ch.isalnum() for ch in text)


@lru_cache(maxsize=65536)
def is_label_like(text: str) -> bool:
    """Whether a word reads like a field label (``Total:``, ``Date``, ``Invoice``), not a value.

    Label-like: ends with ``:`` and has letters, or its folded form is in :data:`LABEL_WORDS`, or
    it is mostly letters (>= 3 letters, >= 80 % of its characters). Numbers never are.

    Examples
    --------
    >>> [is_label_like(w) for w in ("Total:", "Date", "12.50", "INV-001", "No.")]
    [True, True, False, False, True]
    """
    t = text.strip()
    if not t or _NUMBER.match(t):
        return False
    letters = sum(ch.isalpha() for ch in t)
    if letters == 0:
        return False
    if t.endswith(":"):
        return True
    if fold(t) in LABEL_WORDS:
        return True
    digits = sum(ch.isdigit() for ch in t)
    return digits == 0 and letters >= 3 and letters >= 0.8 * len(t)


@dataclass(frozen=True)
class Match:
    """Where a value was found on a page.

    Parameters
    ----------
    page : int
        0-based index of the page in its document.
    indices : tuple of int
        Indices into ``page.words`` of the matched words, in reading order.
    bbox : BBox
        Union of the matched words' boxes.
    score : float
        1.0 for exact and typed matches, else key similarity in 0-1.
    method : {"exact", "folded", "typed", "fuzzy"}
    confs : tuple of float
        OCR confidences of the matched words.
    """

    page: int
    indices: tuple[int, ...]
    bbox: BBox
    score: float
    method: str
    confs: tuple[float, ...]

    @property
    def exact(self) -> bool:
        return self.method == "exact"

    def to_dict(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "indices": list(self.indices),
            "bbox": list(self.bbox),
            "score": self.score,
            "method": self.method,
            "confs": list(self.confs),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Match:
        return cls(
            int(d["page"]),
            tuple(int(i) for i in d["indices"]),
            tuple(float(v) for v in d["bbox"]),  # type: ignore[arg-type]
            float(d["score"]),
            str(d["method"]),
            tuple(float(c) for c in d["confs"]),
        )


@dataclass(frozen=True)
class Label:
    """The label-like word nearest to a box, to its left on the same line or above it.

    ``distance`` is the gap between the boxes in normalised page units (``dx`` horizontal,
    ``dy`` vertical, both >= 0); ``direction`` is ``"left"`` or ``"above"``.
    """

    index: int
    text: str
    distance: float
    dx: float
    dy: float
    direction: str
    ocr_conf: float


def _union(words: tuple[Word, ...], idx: tuple[int, ...]) -> BBox:
    boxes = [words[i].bbox for i in idx]
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _group_lines(words: tuple[Word, ...]) -> list[list[int]]:
    """Visual lines of word indices, top to bottom, each left to right.

    Words are first grouped by ``(block_id, line_id)`` (each word alone when the page has no
    line ids); groups whose vertical centre falls inside the band of the line being built join
    it, so a label column and a value column in different blocks still share a line.
    """
    if not words:
        return []
    x0 = [w.bbox[0] for w in words]
    keys = [(w.block_id, w.line_id) for w in words]
    groups: list[list[int]]
    if len(set(keys)) > 1:
        by_id: dict[tuple[int, int], list[int]] = {}
        for i, k in enumerate(keys):
            by_id.setdefault(k, []).append(i)
        groups = list(by_id.values())
    else:
        groups = [[i] for i in range(len(words))]
    top_ = [w.bbox[1] for w in words]
    bot_ = [w.bbox[3] for w in words]
    bands = []
    for g in groups:
        if len(g) == 1:
            y0, y1 = top_[g[0]], bot_[g[0]]
        else:
            # Median edges: one tall word or a skewed line does not stretch the band.
            y0 = sorted(map(top_.__getitem__, g))[len(g) // 2]
            y1 = sorted(map(bot_.__getitem__, g))[len(g) // 2]
        bands.append((0.5 * (y0 + y1), y0, y1, g))
    bands.sort(key=lambda b: (b[0], x0[b[3][0]]))
    lines: list[list[int]] = []
    top = bot = 0.0
    for mid, y0, y1, g in bands:
        if lines and top <= mid <= bot:
            lines[-1].extend(g)
        else:
            lines.append(list(g))
            top, bot = y0, y1
    for line in lines:
        line.sort(key=x0.__getitem__)
    return lines


class PageIndex:
    """Pre-normalised view of one page: keys, line structure, labels, table cells.

    Build with :func:`page_index` (cached per page object), not directly.

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> p = Page(1, 100, 100, (Word("Total:", (0.1, 0.5, 0.2, 0.52), line_id=1),
    ...                        Word("12.50", (0.3, 0.5, 0.4, 0.52), line_id=1)), "pdf", 72.0)
    >>> m = page_index(p).find("12.50")
    >>> m.indices, m.method
    ((1,), 'exact')
    """

    def __init__(self, page: Page, page_no: int = 0) -> None:
        words = page.words
        self.page = page
        self.page_no = page_no
        self.words = words
        self.lines = _group_lines(words)
        self.line_of = [0] * len(words)
        for li, g in enumerate(self.lines):
            for i in g:
                self.line_of[i] = li
        self.order = [i for g in self.lines for i in g]
        parts: list[str] = []
        starts: list[int] = []  # page-string offset where each word (in self.order) begins
        bounds: set[int] = {0}
        pos = 0
        for i in self.order:
            starts.append(pos)
            for run in _word_runs(words[i].text):
                parts.append(run)
                pos += len(run)
                bounds.add(pos)
        self.text = "".join(parts)
        self.shape = self.text.translate(_SHAPE)
        self.starts = starts
        self.ends = [*starts[1:], pos]
        self.bounds = bounds
        # Label words of each line, left to right: label search only looks at a few lines.
        self.line_labels: list[list[int]] = [[] for _ in self.lines]
        for li, g in enumerate(self.lines):
            self.line_labels[li] = [i for i in g if is_label_like(words[i].text)]
        sizes = [w.font_size for w in words if w.font_size is not None and w.font_size > 0]
        self.median_font = statistics.median(sizes) if sizes else math.nan
        # fsum: the same words in any order give the same mean, bit for bit.
        self.mean_conf = math.fsum(w.ocr_conf for w in words) / len(words) if words else math.nan
        self._table: np.ndarray | None = None
        self._typed: dict[str, dict[Any, tuple[int, ...]]] = {}
        self._cache: dict[tuple[str, str | None, float], Match | None] = {}

    # -- finding values -------------------------------------------------------------------------
    def _occurrences(self, hay: str, key: str) -> list[int]:
        out, start = [], hay.find(key)
        while start >= 0:
            if start in self.bounds and start + len(key) in self.bounds:
                out.append(start)
            start = hay.find(key, start + 1)
        return out

    def _span(self, start: int, end: int) -> tuple[int, ...]:
        # Words whose characters overlap [start, end); words without letters or digits have
        # no characters and are skipped.
        a = bisect_right(self.starts, start) - 1
        b = bisect_left(self.starts, end)
        ends = self.ends
        return tuple(self.order[k] for k in range(max(a, 0), b) if ends[k] > self.starts[k])

    def _make(self, idx: tuple[int, ...], score: float, method: str) -> Match:
        return Match(
            self.page_no,
            idx,
            _union(self.words, idx),
            float(score),
            method,
            tuple(self.words[i].ocr_conf for i in idx),
        )

    def find_all(self, value: str) -> list[Match]:
        """Every exact (key-boundary) occurrence of ``value``, in reading order."""
        key = fold(value)
        if not key:
            return []
        return [
            self._make(self._span(s, s + len(key)), 1.0, "exact")
            for s in self._occurrences(self.text, key)
        ]

    def count(self, value: str) -> int:
        """Number of exact occurrences of ``value`` on the page."""
        key = fold(value)
        return len(self._occurrences(self.text, key)) if key else 0

    def find(
        self, value: str, field_type: str | None = None, *, min_fuzzy: float = 0.6
    ) -> Match | None:
        """Best match of ``value`` on the page, or None (see the module docstring for the steps)."""
        ck = (value, field_type, min_fuzzy)
        if ck in self._cache:
            return self._cache[ck]
        m = self._find(value, field_type, min_fuzzy)
        if len(self._cache) < 4096:
            self._cache[ck] = m
        return m

    def _find(self, value: str, field_type: str | None, min_fuzzy: float) -> Match | None:
        key = fold(value)
        if not key or not self.text:
            return None
        occ = self._occurrences(self.text, key)
        if occ:
            return self._make(self._span(occ[0], occ[0] + len(key)), 1.0, "exact")
        occ = self._occurrences(self.shape, key.translate(_SHAPE))
        if occ:
            s = occ[0]
            score = fuzz.ratio(key, self.text[s : s + len(key)]) / 100.0
            return self._make(self._span(s, s + len(key)), score, "folded")
        if field_type in ("date", "amount"):
            idx = self._find_typed(value, field_type)
            if idx is not None:
                return self._make(idx, 1.0, "typed")
        if len(key) < 4 or len(key) > len(self.text):
            return None
        al = fuzz.partial_ratio_alignment(key, self.text, score_cutoff=min_fuzzy * 100)
        if al is None or al.dest_end <= al.dest_start:
            return None
        return self._make(self._span(al.dest_start, al.dest_end), al.score / 100.0, "fuzzy")

    def _find_typed(self, value: str, field_type: str) -> tuple[int, ...] | None:
        from confidence.datasets.matching import normalize

        target = normalize(field_type, value)
        if target is None:
            return None
        table = self._typed.get(field_type)
        if table is None:
            table = self._typed[field_type] = self._typed_table(field_type, normalize)
        return table.get(target)

    def _typed_table(self, field_type: str, normalize) -> dict[Any, tuple[int, ...]]:
        # Spans of 1-4 words within a line that contain a digit. Shorter spans first, so a
        # value is not credited with the label before it ("Date: 25/12/2018"); then reading
        # order, first occurrence wins.
        table: dict[Any, tuple[int, ...]] = {}
        digit = [any(ch.isdigit() for ch in w.text) for w in self.words]
        for size in range(1, 5):
            for line in self.lines:
                for a in range(len(line) - size + 1):
                    span = tuple(line[a : a + size])
                    if not any(digit[i] for i in span):
                        continue
                    text = " ".join(self.words[i].text for i in span)
                    try:
                        norm = normalize(field_type, text)
                    except Exception:  # a parser bug must not lose the document's features
                        norm = None
                    if norm is not None and norm not in table:
                        table[norm] = span
        return table

    # -- around a box ---------------------------------------------------------------------------
    def nearest_label(
        self, bbox: BBox, exclude: tuple[int, ...] = (), lines: tuple[int, ...] | None = None
    ) -> Label | None:
        """Nearest label-like word left of ``bbox`` on its line(s), else the nearest above it.

        ``lines`` are the reading-order lines the box lies on (the lines of the matched words);
        when omitted, the lines whose words overlap the box vertically. Left: a label on those
        lines ending before the box starts (half a box height of slack for tight OCR boxes).
        Above: the first line upwards holding a label that overlaps the box horizontally.
        ``exclude`` lists word indices never to return (the value's own words). Ties go to the
        earlier word. The left label wins whenever there is one, so a row label ("Total Due")
        beats a column header above ("Amount").
        """
        x0, y0, x1, y1 = bbox
        slack = 0.5 * max(y1 - y0, 1e-6)
        words = self.words
        if lines is None:
            lines = tuple(
                li
                for li, g in enumerate(self.lines)
                if any(min(y1, words[i].bbox[3]) > max(y0, words[i].bbox[1]) for i in g)
            )
        if not lines:
            return None
        best, best_dx = -1, math.inf
        for li in lines:
            for i in self.line_labels[li]:
                wx1 = words[i].bbox[2]
                if wx1 <= x0 + slack and i not in exclude and max(0.0, x0 - wx1) < best_dx:
                    best, best_dx = i, max(0.0, x0 - wx1)
        if best >= 0:
            w = words[best]
            return Label(best, w.text, best_dx, best_dx, 0.0, "left", w.ocr_conf)
        for li in range(min(lines) - 1, -1, -1):
            best_dy = math.inf
            for i in self.line_labels[li]:
                wx0, _, wx1, wy1 = words[i].bbox
                if min(x1, wx1) > max(x0, wx0) and wy1 <= y0 + slack and i not in exclude:
                    if max(0.0, y0 - wy1) < best_dy:
                        best, best_dy = i, max(0.0, y0 - wy1)
            if best >= 0:
                w = words[best]
                return Label(best, w.text, best_dy, 0.0, best_dy, "above", w.ocr_conf)
        return None

    @property
    def table_cells(self) -> np.ndarray:
        """Boolean per word: a numeric cell in a table-like region.

        Heuristic: the word is mostly digits, its line has at least two such words, and at
        least two numeric words on other lines share its right or left edge (within 1.5 % of
        the page width) — aligned columns of numbers.
        """
        if self._table is None:
            n = len(self.words)
            num = np.array([_numeric(w.text) for w in self.words], dtype=bool)
            cells = np.zeros(n, dtype=bool)
            if num.sum() >= 3:
                ids = np.flatnonzero(num)
                lines = np.array([self.line_of[i] for i in ids], dtype=np.int64)
                per_line = np.bincount(lines, minlength=len(self.lines))
                b = np.array([self.words[i].bbox for i in ids], dtype=np.float64)
                tol = 0.015
                same_r = np.abs(b[:, 2][:, None] - b[:, 2][None, :]) <= tol
                same_l = np.abs(b[:, 0][:, None] - b[:, 0][None, :]) <= tol
                other = lines[:, None] != lines[None, :]
                aligned = ((same_r | same_l) & other).sum(axis=1)
                cells[ids] = (per_line[lines] >= 2) & (aligned >= 2)
            self._table = cells
        return self._table


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
    """Page indexes of a document plus document-wide search (best page wins, counts add up)."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.pages = [PageIndex(p, i) for i, p in enumerate(document.pages)]
        self.n_words = sum(len(p.words) for p in document.pages)
        self._cache: dict[tuple[str, str | None], Match | None] = {}

    def find(self, value: str, field_type: str | None = None) -> Match | None:
        """Best match over all pages: highest score, earliest page on ties."""
        ck = (value, field_type)
        if ck in self._cache:
            return self._cache[ck]
        best: Match | None = None
        for p in self.pages:
            m = p.find(value, field_type)
            if m is not None and (best is None or m.score > best.score):
                best = m
                if m.score >= 1.0:
                    break
        self._cache[ck] = best
        return best

    def count(self, value: str) -> int:
        return sum(p.count(value) for p in self.pages)

    def find_all(self, value: str) -> list[Match]:
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
