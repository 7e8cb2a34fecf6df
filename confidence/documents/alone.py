"""Each word with a digit read a second time, alone: a check of the page that OCR cannot give.

Tesseract reads a word in the context of its line, and its confidence describes that one reading:
a ``5`` read for a ``6`` in a faded date comes back as confident as the rest (``11/06/2018`` for
``11/05/2018``). Nothing downstream can see such a misread -- the LLM and the layout reader both
read the OCR text -- unless the page is read again in another way. :func:`read_alone` cuts every
word whose text holds a digit (dates, amounts, numbers: the values a single misread character
makes wrong) out of the page raster, scales it to one height (:data:`ROW_HEIGHT` pixels), lays
the cut-outs one under the other on a blank canvas and reads that canvas in one tesseract call
(page segmentation mode 6, a uniform block of text). Each word is thus read without its
neighbours, at another scale, as a line of its own; where the two readings differ, one of them
is wrong. The second reading is kept beside the first (:attr:`confidence.types.Word.alone`),
never in its place: it is evidence for the confidence features (``ocr_alone_agree``, and
``ocr_alone_alt`` when the second reading is another value of the field's type:
:func:`reading_alone`; ``docs/features.md``), not a correction.

:func:`agrees` compares two readings on their letters and digits (case, spaces and punctuation
ignored: ``RM 8.60`` and ``RM8.60`` agree, ``11/06/2018`` and ``11/05/2018`` do not).
:func:`value_read_alone` gives a value as its words read alone, for a reviewer: when OCR read
a date two ways, the second way is often the printed one.

Measured on the reported values of 126 SROIE-dev receipts (a dev set; 263 values with a digit,
prototype of this module): a second reading that differs for 14 % of the right dates and 10 %
of the right totals, and for 10 of the 10 wrong dates and 37 % of the wrong totals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import cv2
import numpy as np

from confidence.types import Document, Word

__all__ = [
    "MAX_WORDS",
    "ROW_HEIGHT",
    "agrees",
    "key",
    "layout_rows",
    "read_alone",
    "reading_alone",
    "value_read_alone",
    "with_digit",
]

ROW_HEIGHT = 40
"""Height in pixels every cut-out is scaled to (tesseract reads best near 30-40 px capitals)."""
MAX_WORDS = 400
"""At most this many words of a page are read again (the first in reading order)."""
_GAP = 28  # blank pixels between two cut-outs: tesseract must not join them into one line
_MARGIN = 24  # blank pixels around the canvas
_PAD = 0.12  # of the word's height, kept around its box: tesseract's boxes hug the ink

Reader = Callable[[np.ndarray], dict]
"""Runs OCR on a grey canvas and returns ``pytesseract.image_to_data`` output as a dict."""


def with_digit(text: str) -> bool:
    """Whether a word is read again: it holds a digit.

    Examples
    --------
    >>> with_digit("11/05/2018"), with_digit("RM8.60"), with_digit("TOTAL")
    (True, True, False)
    """
    return any(c.isdigit() for c in text)


def key(text: str) -> str:
    """The letters and digits of a reading, lower-cased: what two readings are compared on.

    Examples
    --------
    >>> key("RM 8.60"), key("11/05/2018")
    ('rm860', '11052018')
    """
    return "".join(c for c in text.lower() if c.isalnum())


def agrees(first: str, second: str) -> bool:
    """Whether two readings of one word say the same letters and digits.

    Examples
    --------
    >>> agrees("RM8.60", "RM 8.60"), agrees("11/06/2018", "11/05/2018")
    (True, False)
    """
    return key(first) == key(second)


def _cut(gray: np.ndarray, word: Word) -> np.ndarray | None:
    """The word's box (padded) cut out of the raster and scaled to :data:`ROW_HEIGHT`."""
    h, w = gray.shape
    x0, y0, x1, y1 = word.bbox
    pad = max(1, round((y1 - y0) * h * _PAD))
    xa, xb = max(0, int(x0 * w) - pad), min(w, int(np.ceil(x1 * w)) + pad)
    ya, yb = max(0, int(y0 * h) - pad), min(h, int(np.ceil(y1 * h)) + pad)
    crop = gray[ya:yb, xa:xb]
    if crop.shape[0] < 4 or crop.shape[1] < 2:
        return None
    scale = ROW_HEIGHT / crop.shape[0]
    size = (max(1, round(crop.shape[1] * scale)), ROW_HEIGHT)
    method = cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA
    return cv2.resize(crop, size, interpolation=method)


def layout_rows(n: int) -> list[tuple[int, int]]:
    """Top and bottom pixel rows of the ``n`` cut-outs on the canvas.

    Examples
    --------
    >>> layout_rows(2)
    [(24, 64), (92, 132)]
    """
    step = ROW_HEIGHT + _GAP
    return [(_MARGIN + k * step, _MARGIN + k * step + ROW_HEIGHT) for k in range(n)]


def _row_of(top: int, height: int, n: int) -> int | None:
    """Which cut-out a word tesseract found on the canvas belongs to (by its vertical centre)."""
    centre = top + height / 2
    k = int((centre - _MARGIN + _GAP / 2) // (ROW_HEIGHT + _GAP))
    return k if 0 <= k < n else None


def read_alone(gray: np.ndarray, words: Sequence[Word], read: Reader) -> tuple[Word, ...]:
    """``words`` with :attr:`~confidence.types.Word.alone` set for each word with a digit.

    Parameters
    ----------
    gray : numpy.ndarray
        The page raster the words' boxes refer to (uint8, upright as the words were read).
    words : sequence of Word
        The page's words.
    read : callable
        OCR of a grey canvas, returning ``image_to_data`` output (``text``, ``left``, ``top``,
        ``width``, ``height`` lists); one call per page.

    Returns
    -------
    tuple of Word
        The same words; those read again carry the second reading (``""`` when the second
        reading found nothing), the others keep ``alone=None``.

    Examples
    --------
    A reader that reads every cut-out as ``"12.50"``:

    >>> import numpy as np
    >>> from confidence.types import Document, Word
    >>> page = np.full((100, 200), 255, np.uint8)
    >>> words = [Word("TOTAL", (0.1, 0.4, 0.4, 0.5)), Word("12.60", (0.5, 0.4, 0.8, 0.5))]
    >>> def fake(canvas):
    ...     rows = layout_rows(1)
    ...     return {"text": ["12.50"], "left": [24], "top": [rows[0][0]], "width": [60],
    ...             "height": [ROW_HEIGHT]}
    >>> [w.alone for w in read_alone(page, words, fake)]
    [None, '12.50']
    """
    picks: list[tuple[int, np.ndarray]] = []
    for i, word in enumerate(words):
        if len(picks) >= MAX_WORDS:
            break
        if with_digit(word.text):
            cut = _cut(gray, word)
            if cut is not None:
                picks.append((i, cut))
    if not picks:
        return tuple(words)
    rows = layout_rows(len(picks))
    width = max(c.shape[1] for _, c in picks) + 2 * _MARGIN
    canvas = np.full((rows[-1][1] + _MARGIN, width), 255, dtype=np.uint8)
    for (_, cut), (top, bottom) in zip(picks, rows, strict=True):
        canvas[top:bottom, _MARGIN : _MARGIN + cut.shape[1]] = cut
    data = read(canvas)
    found: list[list[tuple[int, str]]] = [[] for _ in picks]
    for text, left, top, height in zip(
        data["text"], data["left"], data["top"], data["height"], strict=True
    ):
        text = str(text).strip()
        k = _row_of(int(top), int(height), len(picks)) if text else None
        if k is not None:
            found[k].append((int(left), text))
    out = list(words)
    for (i, _), got in zip(picks, found, strict=True):
        out[i] = replace(out[i], alone=" ".join(t for _, t in sorted(got)))
    return tuple(out)


def value_read_alone(
    document: Document, value: str | None, field_type: str | None = None
) -> str | None:
    """``value`` as its words on the page read alone, when one of them reads otherwise; else None.

    The value is found on the page (:meth:`confidence.documents.search.DocumentIndex.find`);
    each of its words read otherwise alone, to something, is replaced by that reading. None
    when the value is absent or not found, or when none of its words reads otherwise (words
    read alone as nothing do not count: there is nothing to show).

    Examples
    --------
    >>> from confidence.types import Document, Page, Word
    >>> words = (Word("Date", (0.1, 0.1, 0.2, 0.12)),
    ...          Word("11/06/2018", (0.3, 0.1, 0.5, 0.12), alone="11/05/2018"))
    >>> doc = Document("d", "d.png", (Page(1, 800, 1000, words, "ocr", 300.0),))
    >>> value_read_alone(doc, "11/06/2018", "date")
    '11/05/2018'
    >>> value_read_alone(doc, "Date") is None
    True
    """
    from confidence.documents.search import document_index  # the index reads this module's words

    if value is None or not value.strip():
        return None
    match = document_index(document).find(value, field_type)
    if match is None:
        return None
    return reading_alone([document.pages[match.page].words[i] for i in match.indices])


def reading_alone(words: Sequence[Word]) -> str | None:
    """``words`` joined, each one read otherwise alone (to something) as that reading; None
    when none of them reads otherwise.

    Examples
    --------
    >>> from confidence.types import Word
    >>> box = (0.1, 0.1, 0.2, 0.12)
    >>> reading_alone([Word("RM", box), Word("8.60", box, alone="8.80")])
    'RM 8.80'
    >>> reading_alone([Word("8.60", box, alone="8,60")]) is None  # the same digits
    True
    >>> reading_alone([Word("8.60", box, alone="")]) is None  # read as nothing: nothing to show
    True
    """
    other = [w.alone is not None and w.alone.strip() and not agrees(w.text, w.alone) for w in words]
    if not any(other):
        return None
    return " ".join(str(w.alone) if o else w.text for w, o in zip(words, other, strict=True))
