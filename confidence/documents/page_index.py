"""The per-page index behind every layout lookup: keys, lines, value search, labels, table cells.

A :class:`PageIndex` is built once per page (:func:`confidence.documents.search.page_index` caches
it) and answers many lookups. Only what every lookup needs is built eagerly: the reading-order
lines and the page string of word keys with its boundaries. The rest (look-alike string, labels
per line, font and confidence statistics, table cells, typed spans) is built on first use, and
answers are memoised per key, since Hunter and Mapper often report the same value. The search
steps are documented in :mod:`confidence.documents.search`.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from confidence.documents.lines import group_lines
from confidence.documents.text import SHAPE, fold, numeric_flags, page_keys, page_string
from confidence.documents.typed_spans import TypedSpans
from confidence.documents.vocab import label_flags
from confidence.types import BBox, Page, Word

__all__ = ["Label", "Match", "PageIndex"]

_MEMO_MAX = 4096  # per page: bounds memory when one page is queried with endless values


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
    if len(idx) == 1:
        b = words[idx[0]].bbox
        return b if type(b) is tuple else tuple(b)  # type: ignore[return-value]
    boxes = [words[i].bbox for i in idx]
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


class PageIndex:
    """Pre-normalised view of one page: keys, line structure, labels, table cells.

    Build with :func:`confidence.documents.search.page_index` (cached per page object).

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> p = Page(1, 100, 100, (Word("Total:", (0.1, 0.5, 0.2, 0.52), line_id=1),
    ...                        Word("12.50", (0.3, 0.5, 0.4, 0.52), line_id=1)), "pdf", 72.0)
    >>> m = PageIndex(p).find("12.50")
    >>> m.indices, m.method
    ((1,), 'exact')
    """

    def __init__(self, page: Page, page_no: int = 0) -> None:
        words = page.words
        self.page = page
        self.page_no = page_no
        self.words = words
        self.lines = group_lines(words)
        line_of = [0] * len(words)
        for li, g in enumerate(self.lines):
            for i in g:
                line_of[i] = li
        self.line_of = line_of
        self.order = order = [i for g in self.lines for i in g]
        self._texts = texts = [w.text for w in words]
        self.text, lens, self.bounds = page_string([texts[i] for i in order])
        self.starts = starts = [0, *accumulate(lens)]  # page-string offset of each word in order
        self.ends = starts[1:]
        del starts[-1]
        self._occ: dict[tuple[bool, str], list[int]] = {}
        self._found: dict[tuple[str, str | None, float], Match | None] = {}
        self._fuzzy: dict[tuple[str, float], Match | None] = {}
        self._labels: dict[tuple[int, ...], Label | None] = {}

    # -- lazily built parts ---------------------------------------------------------------------
    @cached_property
    def _keys_digits(self) -> tuple[list[str], list[str | None]]:
        return page_keys(self._texts)

    @cached_property
    def shape(self) -> str:
        """The page string with look-alike letters mapped to digits."""
        return self.text.translate(SHAPE)

    @cached_property
    def line_labels(self) -> list[list[int]]:
        """Label-like words of each line, left to right: label search only looks at a few lines."""
        flags = label_flags(self._texts, *self._keys_digits)
        return [[i for i in g if flags[i]] for g in self.lines]

    @cached_property
    def median_font(self) -> float:
        """Median font size of the words that have one (NaN when none)."""
        sizes = [w.font_size for w in self.words if w.font_size is not None and w.font_size > 0]
        return statistics.median(sizes) if sizes else math.nan

    @cached_property
    def mean_conf(self) -> float:
        """Mean OCR confidence of the page's words (NaN when it has none)."""
        words = self.words
        # fsum: the same words in any order give the same mean, bit for bit.
        return math.fsum(w.ocr_conf for w in words) / len(words) if words else math.nan

    @cached_property
    def typed(self) -> TypedSpans:
        """Typed (date, amount) search over spans of this page's lines."""
        return TypedSpans(self.words, self.lines, self._keys_digits[1])

    # -- finding values -------------------------------------------------------------------------
    def _occurrences(self, key: str, shape: bool = False) -> list[int]:
        """Offsets where ``key`` occurs on key boundaries (in the look-alike string: ``shape``)."""
        ck = (shape, key)
        out = self._occ.get(ck)
        if out is not None:
            return out
        hay = self.shape if shape else self.text
        bounds = self.bounds
        n = len(key)
        out = []
        start = hay.find(key)
        while start >= 0:
            if start in bounds and start + n in bounds:
                out.append(start)
            start = hay.find(key, start + 1)
        if len(self._occ) < _MEMO_MAX:
            self._occ[ck] = out
        return out

    def _span(self, start: int, end: int) -> tuple[int, ...]:
        # Words whose characters overlap [start, end); words without letters or digits have
        # no characters and are skipped.
        starts, ends, order = self.starts, self.ends, self.order
        a = bisect_right(starts, start) - 1
        b = bisect_left(starts, end)
        return tuple(order[k] for k in range(max(a, 0), b) if ends[k] > starts[k])

    def _make(self, idx: tuple[int, ...], score: float, method: str) -> Match:
        words = self.words
        return Match(
            self.page_no,
            idx,
            _union(words, idx),
            float(score),
            method,
            tuple(words[i].ocr_conf for i in idx),
        )

    def find_all(self, value: str) -> list[Match]:
        """Every exact (key-boundary) occurrence of ``value``, in reading order."""
        key = fold(value)
        if not key:
            return []
        n = len(key)
        return [self._make(self._span(s, s + n), 1.0, "exact") for s in self._occurrences(key)]

    def count(self, value: str) -> int:
        """Number of exact occurrences of ``value`` on the page."""
        key = fold(value)
        return len(self._occurrences(key)) if key else 0

    def find(
        self, value: str, field_type: str | None = None, *, min_fuzzy: float = 0.6
    ) -> Match | None:
        """Best match of ``value`` on the page, or None (see the module docstring for the steps)."""
        ck = (value, field_type, min_fuzzy)
        if ck in self._found:
            return self._found[ck]
        m = self._find(value, field_type, min_fuzzy)
        if len(self._found) < _MEMO_MAX:
            self._found[ck] = m
        return m

    def _find(self, value: str, field_type: str | None, min_fuzzy: float) -> Match | None:
        key = fold(value)
        if not key or not self.text:
            return None
        occ = self._occurrences(key)
        if occ:
            return self._make(self._span(occ[0], occ[0] + len(key)), 1.0, "exact")
        occ = self._occurrences(key.translate(SHAPE), shape=True)
        if occ:
            s = occ[0]
            score = fuzz.ratio(key, self.text[s : s + len(key)]) / 100.0
            return self._make(self._span(s, s + len(key)), score, "folded")
        if field_type in ("date", "amount"):
            idx = self.typed.find(field_type, value)
            if idx is not None:
                return self._make(idx, 1.0, "typed")
        return self._find_fuzzy(key, min_fuzzy)

    def _find_fuzzy(self, key: str, min_fuzzy: float) -> Match | None:
        # Depends on the key only: values differing in punctuation share the answer.
        ck = (key, min_fuzzy)
        if ck in self._fuzzy:
            return self._fuzzy[ck]
        m = None
        if 4 <= len(key) <= len(self.text):
            al = fuzz.partial_ratio_alignment(key, self.text, score_cutoff=min_fuzzy * 100)
            if al is not None and al.dest_end > al.dest_start:
                m = self._make(self._span(al.dest_start, al.dest_end), al.score / 100.0, "fuzzy")
        if len(self._fuzzy) < _MEMO_MAX:
            self._fuzzy[ck] = m
        return m

    # -- around a box ---------------------------------------------------------------------------
    def label_of(self, match: Match) -> Label | None:
        """:meth:`nearest_label` of a match on this page, on its own lines, memoised."""
        idx = match.indices
        if idx not in self._labels:
            lines = tuple(sorted({self.line_of[i] for i in idx}))
            self._labels[idx] = self.nearest_label(match.bbox, idx, lines)
        return self._labels[idx]

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
        line_labels = self.line_labels
        best, best_dx = -1, math.inf
        for li in lines:
            for i in line_labels[li]:
                wx1 = words[i].bbox[2]
                if wx1 <= x0 + slack and i not in exclude and max(0.0, x0 - wx1) < best_dx:
                    best, best_dx = i, max(0.0, x0 - wx1)
        if best >= 0:
            w = words[best]
            return Label(best, w.text, best_dx, best_dx, 0.0, "left", w.ocr_conf)
        for li in range(min(lines) - 1, -1, -1):
            best_dy = math.inf
            for i in line_labels[li]:
                wx0, _, wx1, wy1 = words[i].bbox
                if min(x1, wx1) > max(x0, wx0) and wy1 <= y0 + slack and i not in exclude:
                    if max(0.0, y0 - wy1) < best_dy:
                        best, best_dy = i, max(0.0, y0 - wy1)
            if best >= 0:
                w = words[best]
                return Label(best, w.text, best_dy, 0.0, best_dy, "above", w.ocr_conf)
        return None

    @cached_property
    def table_cells(self) -> np.ndarray:
        """Boolean per word: a numeric cell in a table-like region.

        Heuristic: the word is mostly digits, its line has at least two such words, and at
        least two numeric words on other lines share its right or left edge (within 1.5 % of
        the page width) — aligned columns of numbers.
        """
        words = self.words
        cells = np.zeros(len(words), dtype=bool)
        flags = numeric_flags(self._texts, *self._keys_digits)
        ids = [i for i, f in enumerate(flags) if f]
        if len(ids) >= 3:
            line_of = self.line_of
            lines = np.array([line_of[i] for i in ids], dtype=np.int64)
            per_line = np.bincount(lines, minlength=len(self.lines))
            b = np.array([words[i].bbox for i in ids], dtype=np.float64)
            tol = 0.015
            same_r = np.abs(b[:, 2][:, None] - b[:, 2][None, :]) <= tol
            same_l = np.abs(b[:, 0][:, None] - b[:, 0][None, :]) <= tol
            other = lines[:, None] != lines[None, :]
            aligned = ((same_r | same_l) & other).sum(axis=1)
            cells[ids] = (per_line[lines] >= 2) & (aligned >= 2)
        return cells
