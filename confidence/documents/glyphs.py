"""A letter OCR read where the word prints the same glyph as its zeros is the digit zero.

Tesseract reads a word in context, so a zero that follows letters is often read as the letter
it resembles: ``FA02/2015/020059`` comes back as ``FAQ2/2015/020059`` or ``FAO2/...``,
``INV0012`` as ``INVO012``. The text alone cannot undo it (``PO019817`` is a real order number
whose ``O`` is a letter), but the page can: one word is printed in one font, and in any font the
letter ``O`` (wider, rounder) and ``Q`` (with its tail) are other glyphs than the digit ``0``. When
the suspect letter's glyph is the glyph of the zeros the same word prints, it *is* a zero.

:func:`repair_glyphs` looks at the words whose text has an ``O`` or ``Q`` next to a digit. It
cuts the word's box out of the page raster, splits it into glyphs (connected ink components;
pieces that overlap horizontally, such as a letter and its accent, are one glyph) and goes on
only when there are exactly as many glyphs as characters, so each glyph is known. The zeros to
compare with are the word's own; a word without one (``BCO9218``) borrows those of the words
OCR read on its line (``27/08/2015 FA08/2015/022850 BCO9218``), split the same
way. A suspect letter becomes ``0`` when its glyph has the size and height on the line of one
of those zeros (width, height and top within :data:`SIZE_TOLERANCE`) and its ink, scaled onto
that zero's box, covers the same pixels (intersection over union at least :data:`MIN_IOU`).
Anything else, including a word whose glyphs cannot be told apart one by one, keeps its text.

Where a font draws the letter and the digit alike (some dot-matrix till fonts), the glyph cannot
tell them apart and a letter ``O`` beside a digit is read as a zero.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from confidence.types import Word

__all__ = ["MIN_IOU", "SIZE_TOLERANCE", "SUSPECTS", "repair_glyphs", "suspect_positions"]

SUSPECTS = frozenset("OQ")
"""Letters OCR prints for the digit zero next to other digits."""
SIZE_TOLERANCE = 0.12
"""Largest relative difference of width and of height between a suspect glyph and a zero."""
MIN_IOU = 0.75
"""Least intersection over union of a suspect glyph's ink and a zero's (scaled onto its box)."""
_PAD = 2  # pixels around the word box: tesseract's boxes hug the ink


def suspect_positions(text: str) -> list[int]:
    """Positions of ``O``/``Q`` next to a digit.

    Examples
    --------
    >>> suspect_positions("FAQ2/2015/020059")
    [2]
    >>> suspect_positions("INVO012"), suspect_positions("BCO9218"), suspect_positions("TOTAL")
    ([3], [2], [])
    """
    out = []
    for i, c in enumerate(text):
        if c not in SUSPECTS:
            continue
        before = i > 0 and text[i - 1].isdigit()
        after = i + 1 < len(text) and text[i + 1].isdigit()
        if before or after:
            out.append(i)
    return out


def _glyphs(crop: np.ndarray) -> list[tuple[int, int, int, int, np.ndarray]]:
    """Glyphs of a word crop, left to right: ``(x, y, w, h, ink mask)``."""
    _, ink = cv2.threshold(crop, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    if n <= 1:
        return []
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = [i + 1 for i, a in enumerate(areas) if a >= max(2, 0.02 * areas.max())]
    # merge pieces that overlap horizontally (an accent over its letter, the dot of an i)
    groups: list[list[int]] = []
    for i in sorted(keep, key=lambda i: stats[i, cv2.CC_STAT_LEFT]):
        x0 = stats[i, cv2.CC_STAT_LEFT]
        x1 = x0 + stats[i, cv2.CC_STAT_WIDTH]
        if groups:
            g = groups[-1]
            gx0 = min(stats[j, cv2.CC_STAT_LEFT] for j in g)
            gx1 = max(stats[j, cv2.CC_STAT_LEFT] + stats[j, cv2.CC_STAT_WIDTH] for j in g)
            overlap = min(x1, gx1) - max(x0, gx0)
            if overlap > 0.5 * min(x1 - x0, gx1 - gx0):
                g.append(i)
                continue
        groups.append([i])
    out = []
    for g in groups:
        x0 = min(stats[j, cv2.CC_STAT_LEFT] for j in g)
        y0 = min(stats[j, cv2.CC_STAT_TOP] for j in g)
        x1 = max(stats[j, cv2.CC_STAT_LEFT] + stats[j, cv2.CC_STAT_WIDTH] for j in g)
        y1 = max(stats[j, cv2.CC_STAT_TOP] + stats[j, cv2.CC_STAT_HEIGHT] for j in g)
        mask = np.isin(labels[y0:y1, x0:x1], g).astype(np.uint8)
        out.append((int(x0), int(y0), int(x1 - x0), int(y1 - y0), mask))
    return out


def _same_glyph(a: tuple, b: tuple) -> bool:
    """Whether glyph ``a`` is glyph ``b`` again: same size, same ink."""
    _, ya, wa, ha, ma = a
    _, yb, wb, hb, mb = b
    if min(wa, ha, wb, hb) < 3:
        return False
    if abs(wa - wb) > SIZE_TOLERANCE * wb or abs(ha - hb) > SIZE_TOLERANCE * hb:
        return False
    if abs(ya - yb) > SIZE_TOLERANCE * hb:  # a tail below the line, a raised letter
        return False
    scaled = cv2.resize(ma, (wb, hb), interpolation=cv2.INTER_NEAREST)
    inter = np.logical_and(scaled, mb).sum()
    union = np.logical_or(scaled, mb).sum()
    return bool(union) and inter / union >= MIN_IOU


def _word_glyphs(gray: np.ndarray, word: Word) -> list | None:
    """The glyphs of ``word``, one per character (``x`` within the word's crop, ``y`` on the
    page, so zeros of other words on the line compare), or None when they do not pair up with
    its characters."""
    h, w = gray.shape[:2]
    x0, y0, x1, y1 = word.bbox
    c0, c1 = max(0, int(x0 * w) - _PAD), min(w, int(np.ceil(x1 * w)) + _PAD)
    r0, r1 = max(0, int(y0 * h) - _PAD), min(h, int(np.ceil(y1 * h)) + _PAD)
    crop = gray[r0:r1, c0:c1]
    if crop.size == 0 or crop.ndim != 2 or crop.dtype != np.uint8 or " " in word.text:
        return None
    glyphs = _glyphs(crop)
    if len(glyphs) != len(word.text):
        return None  # glyphs that touch or break apart: which is which is not known
    return [(x, y + r0, gw, gh, m) for x, y, gw, gh, m in glyphs]


def _repaired_text(gray: np.ndarray, word: Word, line_mates: list[Word]) -> str:
    text = word.text
    sus = suspect_positions(text)
    if not sus:
        return text
    glyphs = _word_glyphs(gray, word)
    if glyphs is None:
        return text
    zeros = [glyphs[i] for i, c in enumerate(text) if c == "0"]
    if not zeros:  # the zeros of the words printed beside it on its line, at its size
        height = word.bbox[3] - word.bbox[1]
        for mate in line_mates:
            if mate is word or "0" not in mate.text:
                continue
            if abs((mate.bbox[3] - mate.bbox[1]) - height) > 0.5 * height:
                continue  # another size of print (slashes and commas make boxes taller)
            theirs = _word_glyphs(gray, mate)
            if theirs is not None:
                zeros += [theirs[i] for i, c in enumerate(mate.text) if c == "0"]
    chars, tried = list(text), set()
    while sus:  # a zero read makes the letter before it a suspect too ("ROOO1" -> "R0001")
        for i in sus:
            tried.add(i)
            if any(_same_glyph(glyphs[i], z) for z in zeros):
                chars[i] = "0"
        sus = [i for i in suspect_positions("".join(chars)) if i not in tried]
    return "".join(chars)


def repair_glyphs(gray: np.ndarray, words: tuple[Word, ...]) -> tuple[tuple[Word, ...], int]:
    """``words`` with every suspect letter whose glyph is one of its word's zeros read as ``0``.

    Parameters
    ----------
    gray : ndarray of uint8
        The page raster the words' (normalised) boxes refer to.
    words : tuple of Word

    Returns
    -------
    (tuple of Word, int)
        The words (repaired ones replaced) and how many words were repaired.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> page = np.full((60, 400), 255, np.uint8)
    >>> _ = cv2.putText(page, "FA02/2015", (10, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2)
    >>> word = Word("FAQ2/2015", (10 / 400, 15 / 60, 175 / 400, 45 / 60), ocr_conf=0.9)
    >>> fixed, n = repair_glyphs(page, (word,))
    >>> fixed[0].text, n
    ('FA02/2015', 1)
    """
    by_line: dict[int, list[Word]] = {}
    for word in words:
        by_line.setdefault(word.line_id, []).append(word)
    out, n = [], 0
    for word in words:
        text = _repaired_text(gray, word, by_line[word.line_id])
        if text != word.text:
            word, n = replace(word, text=text), n + 1
        out.append(word)
    return tuple(out), n
