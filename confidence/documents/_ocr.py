"""OCR side of ingestion: orientation, deskew and tesseract on one grey raster.

Orientation is decided by comparing tesseract readings, not by tesseract's OSD (it costs about
twice a full ``image_to_data`` run) nor by projection profiles (the monospaced columns of receipts
make as much vertical structure as a sideways page). Measured on real receipts and invoices turned
by 0/90/180/270 degrees (see ``docs/ingestion.md``), a reading of a page as it lies is enough to
tell the cases apart:

* upright: the words of three or more letters or digits have boxes wider than tall and a mean
  confidence of 0.5 or more. The page is kept: an upright page of ordinary quality costs one
  tesseract run;
* upside down: the boxes are still wide but the confidence is poor (0.2-0.35): the page turned
  180 degrees is read;
* sideways: tesseract reads vertical lines top to bottom, so the boxes are taller than wide. When
  it reads them confidently the text does run top to bottom (the page needs a 270-degree turn),
  otherwise bottom to top (90 degrees); that turn is read first and the opposite one only if it
  does not read upright.

Of the readings made, the one with the most confidently read characters in left-to-right word
boxes (:func:`_judge`) is kept; the page as it lies wins near ties.

Tesseract's automatic page segmentation sometimes drops whole text blocks: a right-aligned column
of amounts on a receipt is classed as non-text and never read ("GRAND TOTAL" is read, "152.87"
beside it is not). Measured on the 200 held-out synthetic receipts, every one of the 45 totals
missing from the candidates had lost its digits this way or to misread digits. After each
reading the ink left outside the word boxes is therefore looked at (:func:`_unread_regions`):
text-like regions are read again with sparse-text segmentation and their words merged into the
lines beside them (:func:`_merge_words`). A page read completely costs one threshold and one
connected-components pass more.

Tesseract also misreads small glyphs: digits a dozen pixels tall come back as letters or as other
digits (``RSLIDESA`` for ``RSLIDE5A``, ``2618`` for ``2018``), and whole lines of an IBAN or an
e-mail address are dropped. Low-resolution scans are common (a receipt photographed or faxed, an
invoice scanned at 100-150 dpi): the median word box of the held-out synthetic invoice scans is
15 px tall, and 76 % of them are under 20 px. A reading whose median word box is under 20 px is
therefore made again on the raster enlarged (cubic interpolation) to put it at 32 px, at most
3 times and at most 24 MP, and the enlarged reading is kept when it scores more confidently read
characters (:func:`_judge`); its word boxes are page fractions like every reading's and its font
sizes come from the enlarged resolution, so nothing downstream changes. Measured with the
shipped candidate ranker, same documents (``docs/ingestion.md``): fields read right on the 200
held-out synthetic invoices 0.833 → 0.845 (right value among the candidates 0.863 → 0.873), on
the 200 held-out receipts 0.943 → 0.948. Pages with larger text cost nothing more.

Last, a zero that follows letters is often read as the letter it resembles (``FAQ2/2015/...``
for ``FA02/2015/...``): where the word prints the suspect letter with the very glyph of its own
zeros, it is read as a zero (:mod:`confidence.documents.glyphs`; the page's notes count them).
Then every word with a digit is read a second time, cut out and read alone in one more
tesseract call per page (:mod:`confidence.documents.alone`); the second reading is kept beside
the first as evidence for the confidence features, and the page's notes count the words it
reads otherwise. ``enlarge_small_text=False`` skips it with the other second readings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from confidence.documents.alone import agrees, read_alone
from confidence.documents.glyphs import repair_glyphs
from confidence.documents.quality import measure_page
from confidence.errors import DocumentError
from confidence.types import ImageQuality, QualityGrid, Word

_DESKEW_MIN_DEG = 0.3  # below this tesseract copes and resampling would only blur
# A reading is upright when its long words (3+ letters or digits) mostly have boxes wider than tall
# and a mean confidence of at least _UPRIGHT_CONF. Measured on 30 real scans: upright readings
# have 0.91-1.0 wide boxes and confidence 0.52-0.92; upside-down ones 0.92-1.0 and 0.18-0.34;
# sideways ones 0.0-0.08 wide boxes.
_UPRIGHT_CONF = 0.5
_WIDE_SHARE = 0.5
_MIN_LETTERS = 3  # shorter words (digits, "a", "of") are square or tall even when upright
_KEEP_MARGIN = 1.2  # a turned reading must score this much more than the page as it lies
_TURNS = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}
_DARK_SHARE = 0.5  # a page with more of its pixels darker than mid-grey is also read inverted
_DENOISE_ABOVE = 0.05  # noise sigma (0-1) above which tesseract's binarisation falls apart
BLANK_NOTE = "blank page: OCR skipped"
"""The :attr:`Page.notes` entry of a page with no ink, which is not read."""
FAINT_PRINT_NOTE = "faint print read again"
"""Start of the :attr:`Page.notes` entry of a page whose words come from a restored raster."""
_BLANK_INK = 0.0005  # ink fraction under which a page is blank and tesseract is skipped
# Tesseract line boxes span ascender to descender of the glyphs present; on average that is about
# 0.85 of the font's em size for mixed-case text.
_LINE_HEIGHT_PER_EM = 0.85
# Unread ink: a region is text-like when its height is 0.5-3 times the median word height, it
# is at least 0.6 of that wide (a dashed rule is too thin, a speck too small) and 15 % inked.
_UNREAD_MIN_H, _UNREAD_MAX_H, _UNREAD_MIN_W, _UNREAD_FILL = 0.5, 3.0, 0.6, 0.15
_REREAD_MIN_CONF = 0.3  # words of the second reading below this confidence are noise
# Small text: a reading whose median word box (words of 2+ letters or digits, at least 5 of them)
# is under _SMALL_WORD_PX pixels tall is made again on the raster enlarged (cubic) to put that
# median at _TARGET_WORD_PX, by at most _MAX_UPSCALE and to at most _MAX_UPSCALED_PIXELS.
_SMALL_WORD_PX, _TARGET_WORD_PX, _MAX_UPSCALE, _UPSCALE_MIN_WORDS = 20.0, 32.0, 3.0, 5
_MAX_UPSCALED_PIXELS = 24_000_000
_ADAPTIVE_C = 10  # grey levels under the local mean that count as ink (paper noise stays white)
# Faint print: a reading whose long words have a mean confidence under _FAINT_CONF (or that has no
# long words) is made again on two restored rasters (:func:`_restorations`); a restored reading is
# kept when it scores _FAINT_KEEP times the confidently read characters of the first.
_FAINT_CONF, _FAINT_KEEP = 0.7, 1.1


@dataclass(frozen=True)
class OcrPage:
    gray: np.ndarray
    words: tuple[Word, ...]
    rotation: int
    deskew_deg: float
    quality: ImageQuality
    grid: QualityGrid
    notes: tuple[str, ...]


def _tesseract(
    gray: np.ndarray, dpi: float, lang: str, timeout: float, path: Path, page_no: int
) -> list[Word]:
    # tesseract's own OpenMP threads fight the process-level parallelism of load_many.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    data = _run_tesseract(gray, f"--dpi {round(dpi)}", lang, timeout, path, page_no)
    return _words_from_data(data, gray.shape, dpi)


def _run_tesseract(gray: np.ndarray, config: str, lang: str, timeout: float, path, page_no):
    import pytesseract
    from PIL import Image

    img = Image.fromarray(gray)
    img.format = "PPM"  # uncompressed temp file for pytesseract: PNG encoding costs ~100 ms/page
    try:
        return pytesseract.image_to_data(
            img, lang=lang, config=config, output_type=pytesseract.Output.DICT, timeout=timeout
        )
    except pytesseract.TesseractNotFoundError:
        raise DocumentError(
            path, "tesseract is not installed or not on PATH (apt install tesseract-ocr)"
        ) from None
    except RuntimeError as e:
        if "timeout" in str(e).lower():
            raise DocumentError(
                path, f"OCR of page {page_no} timed out after {timeout:g} s"
            ) from None
        raise DocumentError(path, f"OCR of page {page_no} failed: {e}") from None


def _unread_regions(gray: np.ndarray, words: list[Word]) -> list[tuple[int, int, int, int]]:
    """Pixel boxes ``(x, y, w, h)`` of text-like ink outside every word box of a reading."""
    h, w = gray.shape
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    heights = sorted((x.bbox[3] - x.bbox[1]) * h for x in words)
    lh = max(4.0, heights[len(heights) // 2]) if heights else max(4.0, 0.015 * h)
    pad = max(1, int(0.15 * lh))
    for x in words:
        x0, y0, x1, y1 = x.bbox
        ink[max(0, int(y0 * h) - pad) : int(y1 * h) + pad + 1,
            max(0, int(x0 * w) - pad) : int(x1 * w) + pad + 1] = 0  # fmt: skip
    # Close the gaps between letters and words of one line, not between lines.
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (max(3, int(0.8 * lh)), 1))
    blobs = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, kernel)
    n, _, stats, _ = cv2.connectedComponentsWithStats(blobs, connectivity=8)
    return [
        (int(x), int(y), int(bw), int(bh))
        for x, y, bw, bh, area in stats[1:n]
        if _UNREAD_MIN_H * lh <= bh <= _UNREAD_MAX_H * lh
        and bw >= _UNREAD_MIN_W * lh
        and area >= _UNREAD_FILL * bw * bh
    ]


def _reread(
    gray: np.ndarray, words: list[Word], dpi: float, lang: str, timeout: float, path, page_no
) -> list[Word]:
    """Words of the text-like regions a reading left unread (sparse-text segmentation)."""
    regions = _unread_regions(gray, words)
    if not regions:
        return []
    h, w = gray.shape
    lh = min(bh for _, _, _, bh in regions)
    m = max(2, int(0.3 * lh))
    x0 = max(0, min(x for x, _, _, _ in regions) - m)
    y0 = max(0, min(y for _, y, _, _ in regions) - m)
    x1 = min(w, max(x + bw for x, _, bw, _ in regions) + m)
    y1 = min(h, max(y + bh for _, y, _, bh in regions) + m)
    # Only the unread regions on blank paper: the words already read are not read twice.
    canvas = np.full((y1 - y0, x1 - x0), int(np.percentile(gray, 95)), dtype=gray.dtype)
    for x, y, bw, bh in regions:
        ya, yb, xa, xb = max(y0, y - m), min(y1, y + bh + m), max(x0, x - m), min(x1, x + bw + m)
        canvas[ya - y0 : yb - y0, xa - x0 : xb - x0] = gray[ya:yb, xa:xb]
    data = _run_tesseract(canvas, f"--dpi {round(dpi)} --psm 11", lang, timeout, path, page_no)
    ch, cw = canvas.shape
    out = []
    for x in _words_from_data(data, canvas.shape, dpi):
        if x.ocr_conf < _REREAD_MIN_CONF or not any(c.isalnum() for c in x.text):
            continue
        bx = x.bbox
        box = ((bx[0] * cw + x0) / w, (bx[1] * ch + y0) / h,
               min((bx[2] * cw + x0) / w, 1.0), min((bx[3] * ch + y0) / h, 1.0))  # fmt: skip
        out.append(replace(x, bbox=box))
    return out


def _merge_words(words: list[Word], extra: list[Word]) -> list[Word]:
    """Put re-read words on the line to their left whose band holds their centre (``"GRAND
    TOTAL"`` + ``"152.87"``), else on a line of their own in top-to-bottom reading order.

    Examples
    --------
    >>> a = Word("TOTAL", (0.1, 0.50, 0.3, 0.52), line_id=0)
    >>> b = Word("THANKS", (0.1, 0.60, 0.3, 0.62), line_id=1)
    >>> merged = _merge_words([a, b], [Word("9.00", (0.8, 0.501, 0.9, 0.521))])
    >>> [(x.text, x.line_id) for x in merged]
    [('TOTAL', 0), ('9.00', 0), ('THANKS', 1)]
    """
    out = list(words)
    next_line = 1 + max((x.line_id for x in out), default=-1)
    next_block = 1 + max((x.block_id for x in out), default=-1)
    for e in sorted(extra, key=lambda x: x.bbox[0]):
        cy = 0.5 * (e.bbox[1] + e.bbox[3])
        starts: dict[tuple[int, int], int] = {}  # line key -> index of its first word
        ends: dict[tuple[int, int], int] = {}  # line key -> index of its last word
        members: dict[tuple[int, int], list[Word]] = {}
        for i, x in enumerate(out):
            starts.setdefault((x.block_id, x.line_id), i)
            ends[(x.block_id, x.line_id)] = i
            members.setdefault((x.block_id, x.line_id), []).append(x)
        best, best_right = None, -1.0
        for key, ws in members.items():
            k = len(ws) // 2
            top, bot = sorted(x.bbox[1] for x in ws)[k], sorted(x.bbox[3] for x in ws)[k]
            right = max(x.bbox[2] for x in ws)
            if top <= cy <= bot and right <= e.bbox[0] + 0.01 and right > best_right:
                best, best_right = key, right
        if best is not None:
            out.insert(ends[best] + 1, replace(e, block_id=best[0], line_id=best[1]))
            continue
        below = (i for key, i in starts.items() if 0.5 * sum(out[i].bbox[1::2]) > cy)
        at = min(below, default=len(out))  # before the first line starting below it
        out.insert(at, replace(e, block_id=next_block, line_id=next_line))
        next_line += 1
        next_block += 1
    return out


def _words_from_data(data: dict, shape: tuple[int, int], dpi: float) -> list[Word]:
    h, w = shape
    line_height: dict[tuple[int, int, int], int] = {}
    for i, level in enumerate(data["level"]):
        if level == 4:
            key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
            line_height[key] = int(data["height"][i])
    line_ids: dict[tuple[int, int, int], int] = {}
    block_ids: dict[int, int] = {}
    words = []
    for i, level in enumerate(data["level"]):
        text = str(data["text"][i]).strip()
        conf = float(data["conf"][i])
        if level != 5 or not text or conf < 0:
            continue
        key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        left, top = int(data["left"][i]), int(data["top"][i])
        right, bottom = left + int(data["width"][i]), top + int(data["height"][i])
        lh = line_height.get(key, bottom - top)
        words.append(
            Word(
                text=text,
                bbox=(left / w, top / h, min(right / w, 1.0), min(bottom / h, 1.0)),
                ocr_conf=min(max(conf / 100.0, 0.0), 1.0),
                font_size=round(lh / dpi * 72.0 / _LINE_HEIGHT_PER_EM, 2),
                line_id=line_ids.setdefault(key, len(line_ids)),
                block_id=block_ids.setdefault(data["block_num"][i], len(block_ids)),
            )
        )
    return words


def _letters(word: Word) -> int:
    return sum(c.isalnum() for c in word.text)


@dataclass(frozen=True)
class _Reading:
    """How a page reads: share of wide long-word boxes, their mean confidence and the score."""

    n_long: int
    wide_share: float
    conf: float
    score: float

    @property
    def horizontal(self) -> bool:
        return self.n_long > 0 and self.wide_share >= _WIDE_SHARE

    @property
    def upright(self) -> bool:
        return self.horizontal and self.conf >= _UPRIGHT_CONF


def _judge(words: tuple[Word, ...], shape: tuple[int, int]) -> _Reading:
    """Judge a reading; the score counts confidently read characters in left-to-right boxes.

    Tesseract also reads text lines that run top to bottom, so a sideways page comes back with
    words whose boxes are taller than wide (and often with a good confidence): they score nothing.
    An upside-down page gives wide boxes but garbled, unconfident words: about a third of the
    upright score.
    """
    h, w = shape
    long = [x for x in words if _letters(x) >= _MIN_LETTERS]
    if not long:
        return _Reading(0, 0.0, 0.0, 0.0)
    wide = [x for x in long if (x.bbox[2] - x.bbox[0]) * w > (x.bbox[3] - x.bbox[1]) * h]
    return _Reading(
        n_long=len(long),
        wide_share=len(wide) / len(long),
        conf=sum(x.ocr_conf for x in long) / len(long),
        score=sum(x.ocr_conf * _letters(x) for x in wide),
    )


def _deskew(gray: np.ndarray, skew_deg: float) -> np.ndarray:
    h, w = gray.shape
    # cv2 angles are counter-clockwise; undo the measured counter-clockwise skew.
    m = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), -skew_deg, 1.0)
    paper = int(np.percentile(gray[:: max(1, h // 200), :: max(1, w // 200)], 95))
    return cv2.warpAffine(
        gray, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=paper
    )


def dark_page(gray: np.ndarray) -> bool:
    """Whether most of a page raster is darker than mid-grey (:data:`_DARK_SHARE`).

    Examples
    --------
    >>> dark_page(np.full((40, 40), 30, np.uint8)), dark_page(np.full((40, 40), 230, np.uint8))
    (True, False)
    """
    return float((gray[::4, ::4] < 128).mean()) > _DARK_SHARE


def light_print(gray: np.ndarray, words: tuple[Word, ...]) -> bool:
    """Whether the words read on ``gray`` sit on a dark ground: the median grey inside their
    boxes (mostly the ground between strokes) is below mid-grey. True when no word was read, so
    that a page read as nothing is tried inverted too.

    Examples
    --------
    >>> page = np.full((100, 100), 20, np.uint8)
    >>> page[10:30, 10:90] = 235  # a light paper under the only word
    >>> w = Word("Total", (0.1, 0.1, 0.9, 0.3))
    >>> light_print(page, (w,)), light_print(255 - page, (w,)), light_print(page, ())
    (False, True, True)
    """
    if not words:
        return True
    h, w = gray.shape
    inside = [
        gray[int(b[1] * h) : max(int(b[3] * h), int(b[1] * h) + 1),
             int(b[0] * w) : max(int(b[2] * w), int(b[0] * w) + 1)].ravel()
        for b in (x.bbox for x in words)
    ]  # fmt: skip
    return float(np.median(np.concatenate(inside))) < 128


def ocr_page(
    gray: np.ndarray,
    dpi: float,
    *,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    grid_shape: tuple[int, int],
    enlarge_small_text: bool = True,
) -> OcrPage:
    """Orient, deskew and OCR one page raster; measure its quality on the way.

    ``enlarge_small_text=False`` reads every raster once, as it is (no second reading of small
    text on an enlarged raster, :func:`_upscale_factor`, nor of faint print on restored rasters,
    :func:`_restore_faint`).
    """
    args = (dpi, lang, timeout, path, page_no, grid_shape, enlarge_small_text)
    restore_args = (dpi, lang, timeout, path, page_no, enlarge_small_text)
    page = _read(gray, 0, *args)
    first = _judge(page.words, page.gray.shape)
    if dark_page(gray) and light_print(page.gray, page.words):
        # light print on a dark page (a dark-mode screenshot, a negative scan): tesseract reads
        # much of it as it lies, but every later reading here (re-reads, digit checks,
        # restorations) looks for dark ink, so the inverted page is kept unless it reads clearly
        # worse. A receipt photographed on a dark table is dark around its paper, but its
        # words sit on light paper: it is read as it lies.
        inverted = _read(255 - gray, 0, *args)
        flipped = _judge(inverted.words, inverted.gray.shape)
        if flipped.score * _KEEP_MARGIN >= first.score and flipped.score > 0:
            note = (
                f"light print on a dark page: read inverted (scores {flipped.score:.0f} "
                f"inverted, {first.score:.0f} as it lies)"
            )
            gray, first = 255 - gray, flipped
            page = replace(inverted, notes=(note, *inverted.notes))
    checked = _checker(lang, timeout, path, page_no, enlarge_small_text)
    if first.upright or not page.words:  # blank, or no text to judge by in any orientation
        return checked(_restored(page, *restore_args))
    if first.horizontal:
        turns: tuple[int, ...] = (180,)
    elif first.n_long:
        # tesseract reads vertical lines top to bottom: a confident reading of them means the
        # text runs that way, i.e. the page lies turned 90 degrees clockwise.
        turns = (270, 90) if first.conf >= _UPRIGHT_CONF else (90, 270)
    else:
        turns = (90, 270, 180)
    best, best_score = page, first.score * _KEEP_MARGIN
    tried = [f"0: {first.score:.0f}"]
    for turn in turns:
        turned = _read(cv2.rotate(gray, _TURNS[turn]), turn, *args)
        reading = _judge(turned.words, turned.gray.shape)
        tried.append(f"{turn}: {reading.score:.0f}")
        if reading.score > best_score:
            best, best_score = turned, reading.score
        if reading.upright:
            break
    note = f"orientation scores by clockwise turn ({', '.join(tried)})"
    kept = _restored(
        replace(best, notes=(f"{note}; kept {best.rotation}", *best.notes)), *restore_args
    )
    if best is not page and _judge(kept.words, kept.gray.shape).conf < _FAINT_CONF:
        # a faint upright page can read worse than noise turned around (one SROIE-dev receipt
        # read 0 confident characters as it lay, 5 turned): its restored reading competes
        note = f"{note}; kept 0 read again restored"
        as_lies = _restored(replace(page, notes=(note, *page.notes)), *restore_args)
        score = _judge(as_lies.words, as_lies.gray.shape).score
        if (
            len(as_lies.notes) > len(page.notes) + 1
            and score > _judge(kept.words, kept.gray.shape).score
        ):
            kept = as_lies
    return checked(kept)


def _checker(
    lang: str, timeout: float, path: Path, page_no: int, read_again: bool
) -> Callable[[OcrPage], OcrPage]:
    """The checks of a page's final reading: zeros read as letters (:func:`_glyphs_checked`), then
    the words with a digit read again alone (:func:`_alone_checked`, skipped with
    ``read_again=False``: one reading per raster)."""

    def check(page: OcrPage) -> OcrPage:
        page = _glyphs_checked(page)
        return _alone_checked(page, lang, timeout, path, page_no) if read_again else page

    return check


def _alone_checked(page: OcrPage, lang: str, timeout: float, path: Path, page_no: int) -> OcrPage:
    """``page`` with its words with a digit read a second time, each alone
    (:func:`confidence.documents.alone.read_alone`), and a note naming those read otherwise.
    When that reading fails (a timeout on a page of many numbers), the page keeps its first
    reading without a second one, and its note says why: the feature is then unknown (NaN)."""
    if not page.words or BLANK_NOTE in page.notes:
        return page

    def read(canvas: np.ndarray) -> dict:
        return _run_tesseract(canvas, "--psm 6 --dpi 300", lang, timeout, path, page_no)

    try:
        words = read_alone(page.gray, page.words, read)
    except DocumentError as e:  # the page was read: only the check of its reading is lost
        note = f"words with a digit not read again alone: {e.reason}"
        return replace(page, notes=(*page.notes, note))
    again = [w for w in words if w.alone is not None]
    if not again:
        return page
    differ = [f"{w.text} -> {w.alone or '(nothing)'}" for w in again if not agrees(w.text, w.alone)]
    note = f"{len(again)} word(s) with a digit read again alone, {len(differ)} read otherwise"
    if differ:
        more = f", and {len(differ) - 5} more" if len(differ) > 5 else ""
        note += f" ({', '.join(differ[:5])}{more})"
    return replace(page, words=words, notes=(*page.notes, note))


def _glyphs_checked(page: OcrPage) -> OcrPage:
    """``page`` with the letters read for a zero its word prints as a zero
    (:func:`confidence.documents.glyphs.repair_glyphs`), noted when there are any."""
    words, n = repair_glyphs(page.gray, page.words)
    if not n:
        return page
    changed = [f"{a.text} -> {b.text}" for a, b in zip(page.words, words, strict=True) if a != b]
    more = f", and {len(changed) - 5} more" if len(changed) > 5 else ""
    note = f"{n} word(s) read with a zero where the word prints its zero's glyph"
    note += f" ({', '.join(changed[:5])}{more})"
    return replace(page, words=words, notes=(*page.notes, note))


def _restored(
    page: OcrPage,
    dpi: float,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    enlarge: bool,
) -> OcrPage:
    """``page`` read again on restored rasters when it reads weakly (:func:`_restore_faint`);
    the same object when not (always with ``enlarge=False``: one reading per raster, and for a
    page skipped as blank). A page that was read and gave no word at all is restored too: a
    faded scan with sensor noise can read nothing as it lies and most of its text restored."""
    if not enlarge or BLANK_NOTE in page.notes:
        return page
    notes = list(page.notes)
    words = _restore_faint(
        page.gray,
        list(page.words),
        dpi,
        lambda raster, nts: _read_words(
            raster, page.quality, dpi, lang, timeout, path, page_no, nts, enlarge
        ),
        notes,
    )
    if len(notes) == len(page.notes):
        return page
    return replace(page, words=tuple(words), notes=tuple(notes))


def _read_words(
    gray: np.ndarray,
    quality: ImageQuality,
    dpi: float,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    notes: list[str],
    enlarge: bool = True,
) -> list[Word]:
    """Tesseract on one raster as it will be kept, plus the re-read of the ink it left."""
    # Measured: at noise sigma ~0.09 raw tesseract reads nothing; a 3x3 median restores it.
    ocr_input = cv2.medianBlur(gray, 3) if quality.noise >= _DENOISE_ABOVE else gray
    words = _tesseract(ocr_input, dpi, lang, timeout, path, page_no)
    factor = _upscale_factor(words, ocr_input.shape) if enlarge else 1.0
    if factor > 1.0:
        big = cv2.resize(ocr_input, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)
        bigger = _tesseract(big, dpi * factor, lang, timeout, path, page_no)
        if _judge(tuple(bigger), big.shape).score > _judge(tuple(words), ocr_input.shape).score:
            words, ocr_input, dpi = bigger, big, dpi * factor
            notes.append(f"small text read again enlarged {factor:.2f}x")
    if words:
        extra = _reread(ocr_input, words, dpi, lang, timeout, path, page_no)
        if extra:
            words = _merge_words(words, extra)
            notes.append(f"re-read {len(extra)} words the page segmentation left unread")
    return words


def _upscale_factor(words: list[Word], shape: tuple[int, int]) -> float:
    """How much to enlarge a raster whose words are too small for tesseract (1.0: not at all).

    Examples
    --------
    >>> small = [Word("Total", (0.1, 0.1 * i, 0.3, 0.1 * i + 0.016)) for i in range(6)]
    >>> round(_upscale_factor(small, (1000, 800)), 2)  # 16 px words: enlarged to 32 px
    2.0
    >>> _upscale_factor(small, (2000, 1600))  # 32 px words: read as they are
    1.0
    >>> _upscale_factor(small[:3], (1000, 800))  # too few words to measure
    1.0
    """
    h, w = shape
    heights = sorted((x.bbox[3] - x.bbox[1]) * h for x in words if _letters(x) >= 2)
    if len(heights) < _UPSCALE_MIN_WORDS:
        return 1.0
    px = heights[len(heights) // 2]
    if px >= _SMALL_WORD_PX:
        return 1.0
    limit = (_MAX_UPSCALED_PIXELS / max(h * w, 1)) ** 0.5
    factor = min(_MAX_UPSCALE, _TARGET_WORD_PX / max(px, 1.0), limit)
    return factor if factor > 1.05 else 1.0


def _read_binarised(
    gray: np.ndarray,
    dpi: float,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    notes: list[str],
) -> list[Word]:
    """Last try for a page that read no words: a local (adaptive) threshold before tesseract.

    Tesseract binarises a page with one global threshold; under uneven lighting (a shadowed or
    tinted scan) the paper of the dark part falls below it and nothing is read. A threshold over
    a window of a few character heights follows the lighting (measured: a synthetic scan with a
    shaded sidebar and a lighting gradient read 0 words, 78 after). Only pages that read no words
    get here, so every other page reads as before.
    """
    block = max(15, round(dpi / 5)) | 1  # odd, about two character heights at 10 pt
    binary = cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, block, _ADAPTIVE_C
    )
    # as for the re-read ink, low-confidence words are noise: a page with no text (a photo, a
    # texture) keeps reading nothing rather than glyphs made of its grain
    words = [
        w
        for w in _tesseract(binary, dpi, lang, timeout, path, page_no)
        if w.ocr_conf >= _REREAD_MIN_CONF
    ]
    if words:
        notes.append(f"read after a local threshold ({block} px window): no words read before")
    return words


def _flatten(gray: np.ndarray, dpi: float) -> np.ndarray:
    """Paper divided out, contrast stretched, strokes thickened (see :func:`_restorations`)."""
    k = max(15, round(dpi / 20)) | 1
    paper = cv2.morphologyEx(
        gray, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    )
    flat = gray.astype(np.float32) / np.maximum(paper, 1).astype(np.float32) * 255.0
    lo, hi = np.percentile(flat, 1), np.percentile(flat, 99.5)
    flat = np.clip((flat - lo) * 255.0 / max(hi - lo, 1.0), 0, 255).astype(np.uint8)
    return cv2.erode(flat, np.ones((2, 2), np.uint8))


def _restorations(gray: np.ndarray, dpi: float) -> list[tuple[str, np.ndarray]]:
    """Three rasters of a faded page, each named after what it does.

    * ``"flattened"``: the paper is estimated by a grey closing over a window wider than any
      stroke (about a twentieth of an inch) and divided out, the contrast is stretched between the
      1st and 99.5th percentiles, and a 2x2 minimum darkens and thickens thin strokes (the dots of
      a dot-matrix print join up). Faded thermal and dot-matrix receipts come back legible.
    * ``"smoothed, flattened"``: the same after a Gaussian blur of about a 250th of an inch. On a
      noisy faded scan the stretch and the minimum above turn sensor noise into dark specks that
      drown the strokes; smoothed first, the strokes stand out (a faded synthetic receipt with
      noise of 11 grey levels: 6 words read flattened, 80 smoothed and flattened).
    * ``"local threshold"``: a threshold over a window of about two character heights
      (``dpi / 5`` px), which follows uneven lighting.

    Examples
    --------
    >>> import numpy as np
    >>> page = np.full((60, 80), 200, np.uint8)
    >>> page[20:24, 10:70] = 170  # a faint stroke on grey paper
    >>> [(name, int(r[22, 40]), int(r[5, 5])) for name, r in _restorations(page, 300)]
    [('flattened', 0, 255), ('smoothed, flattened', 0, 255), ('local threshold', 0, 255)]
    """
    smooth = cv2.GaussianBlur(gray, (0, 0), max(dpi / 250.0, 0.5))
    block = max(15, round(dpi / 5)) | 1
    local = cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, block, _ADAPTIVE_C
    )
    return [
        ("flattened", _flatten(gray, dpi)),
        ("smoothed, flattened", _flatten(smooth, dpi)),
        ("local threshold", local),
    ]


def _restore_faint(
    gray: np.ndarray,
    words: list[Word],
    dpi: float,
    read: Callable[[np.ndarray, list[str]], list[Word]],
    notes: list[str],
) -> list[Word]:
    """Read a weakly read page again on restored rasters; keep the reading that reads best.

    Faded thermal paper and worn dot-matrix ribbons print strokes a few grey levels under the
    paper: tesseract's global threshold loses them and reads little, with low confidence
    (measured on the 126 SROIE-dev receipts, a dev set: 19 read with a mean confidence under
    0.7, among them most of the receipts whose date or total no candidate held). Such a reading
    (long words' mean confidence under ``_FAINT_CONF``) is made again on each raster of
    :func:`_restorations`, and the one with the most confidently read characters
    (:func:`_judge`) is kept if it beats the first by ``_FAINT_KEEP``. A page that reads well
    costs nothing more; a weak one two readings more. ``read(raster, notes)`` reads a raster
    as the first reading was made (:func:`_read_words`).
    """
    first = _judge(tuple(words), gray.shape)
    if first.n_long and first.conf >= _FAINT_CONF:
        return words
    best, best_score, kept = words, first.score * _FAINT_KEEP, None
    for name, restored in _restorations(gray, dpi):
        alt_notes: list[str] = []
        alt = read(restored, alt_notes)
        score = _judge(tuple(alt), restored.shape).score
        if score > best_score:
            best, best_score, kept = alt, score, (name, alt_notes)
    if kept is not None:
        notes.append(
            f"{FAINT_PRINT_NOTE} {kept[0]} (confidently read characters "
            f"{first.score:.0f} -> {best_score:.0f})"
        )
        notes.extend(kept[1])
    return best


def _read(
    gray: np.ndarray,
    rotation: int,
    dpi: float,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    grid_shape: tuple[int, int],
    enlarge: bool = True,
) -> OcrPage:
    notes: list[str] = []
    quality, grid = measure_page(gray, dpi, rows=grid_shape[0], cols=grid_shape[1])
    if quality.ink_ratio < _BLANK_INK:
        notes.append(BLANK_NOTE)
        return OcrPage(gray, (), rotation, 0.0, quality, grid, tuple(notes))
    deskew = 0.0
    if quality.noise >= _DENOISE_ABOVE:
        notes.append(f"denoised before OCR (noise {quality.noise:.3f})")
    if abs(quality.skew_deg) >= _DESKEW_MIN_DEG:
        straight = _deskew(gray, quality.skew_deg)
        words = _read_words(straight, quality, dpi, lang, timeout, path, page_no, notes, enlarge)
        if words:
            gray, deskew = straight, -quality.skew_deg
            notes.insert(0, f"deskewed by {deskew:+.2f} deg")
        else:
            # The skew estimate follows the edges of all dark pixels; a shaded sidebar or a
            # tinted panel can outweigh the text lines and give a large false angle (measured: a
            # readable scan turned by 16 degrees read no words). The page as it lies is read
            # instead; nothing changes for a page whose straightened reading has words.
            notes.insert(0, f"deskew by {-quality.skew_deg:+.2f} deg dropped: it read no words")
            words = _read_words(gray, quality, dpi, lang, timeout, path, page_no, notes, enlarge)
    else:
        words = _read_words(gray, quality, dpi, lang, timeout, path, page_no, notes, enlarge)
    if not words:
        words = _read_binarised(gray, dpi, lang, timeout, path, page_no, notes)
    if rotation:
        notes.append(f"turned {rotation} deg clockwise to make text upright")
    if not words:
        notes.append("no text found")
    return OcrPage(gray, tuple(words), rotation, deskew, quality, grid, tuple(notes))
