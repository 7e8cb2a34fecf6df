"""PDF side of ingestion: open with pypdfium2 (validation, rendering), words with pdfplumber."""

from __future__ import annotations

import copy
import itertools
import math
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from confidence.errors import DocumentError
from confidence.types import Word

# A page whose text layer has fewer words than this while images cover most of it is treated as a
# scan with a stray text layer (e.g. a page number stamped by the scanner) and OCR'd.
_MIN_WORDS_OVER_IMAGE = 3
_IMAGE_COVER = 0.5
# A page whose text is this invisible (share of its text objects drawn with render mode 3, neither
# filled nor stroked, or 7, a clip path only) over images covering most of it is a scan under
# another program's OCR layer (a "searchable PDF").
HIDDEN_TEXT_SHARE = 0.9
_INVISIBLE_MODES = (3, 7)
# A text layer with this share of characters that have no Unicode (pdfminer's "(cid:N)" for a
# font without a ToUnicode map, private-use code points, U+FFFD, control characters) is
# unreadable: the page is read by OCR instead.
UNMAPPED_SHARE = 0.2
_MIN_CHARS_TO_JUDGE = 10

PDFIUM_LOCK = threading.RLock()
"""Held by every pdfium call in this process: pdfium is not thread-safe, not even on two
different documents (two threads rendering at once crash the process). Re-entrant, so a caller
may hold it around :func:`open_pdf` and :func:`render`."""


@contextmanager
def open_pdf(path: Path) -> Iterator[Any]:
    """Open a PDF with pypdfium2, mapping its failures to :class:`DocumentError`."""
    import pypdfium2 as pdfium

    try:
        with PDFIUM_LOCK:
            pdf = pdfium.PdfDocument(str(path))
            n_pages = len(pdf)
    except pdfium.PdfiumError:
        raise DocumentError(path, _why_unreadable(path)) from None
    try:
        if n_pages == 0:
            raise DocumentError(path, "PDF has no pages")
        yield pdf
    finally:
        with PDFIUM_LOCK:
            pdf.close()


def _why_unreadable(path: Path) -> str:
    """Why PDFium refused a file, asked of pdfminer instead of PDFium's last-error code.

    PDFium's error code is process-wide and not reset on success, so after one bad file the next
    one can be reported with the previous file's reason; pdfminer is asked afresh per file.
    """
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

    try:
        with pdfplumber.open(str(path)) as pdf:
            if len(pdf.pages) == 0:
                return "PDF has no pages"
    except Exception as e:  # pdfminer fails in many ways on broken files; pdfplumber wraps them
        while e is not None:
            if isinstance(e, PDFPasswordIncorrect | PDFEncryptionError):
                return "PDF is password-protected; decrypt it first"
            e = e.__cause__ or e.__context__
    return "not a readable PDF (truncated or corrupt)"


def render(pdf: Any, index: int, dpi: float, max_pixels: int) -> tuple[np.ndarray, float, str]:
    """Grey raster of page ``index``; lowers the dpi if the page would exceed ``max_pixels``."""
    with PDFIUM_LOCK:
        page = pdf[index]
        try:
            w_pt, h_pt = page.get_size()
            note = ""
            pixels = (w_pt * dpi / 72.0) * (h_pt * dpi / 72.0)
            if pixels > max_pixels:
                new_dpi = dpi * (max_pixels / pixels) ** 0.5
                note = (
                    f"page {w_pt:.0f}x{h_pt:.0f} pt too large at {dpi:.0f} dpi; "
                    f"rendered at {new_dpi:.0f} dpi"
                )
                dpi = new_dpi
            bitmap = page.render(scale=dpi / 72.0, grayscale=True)
            arr = bitmap.to_numpy()
            gray = np.ascontiguousarray(arr[..., 0] if arr.ndim == 3 else arr)
            return gray, dpi, note
        finally:
            page.close()


def _group_lines(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Cluster words into text lines by vertical overlap, then split lines at wide gaps.

    pdfplumber gives no line structure; two words share a line when their vertical centres are
    within half a word height. A horizontal gap wider than ~2.5 font sizes starts a new segment so
    that side-by-side columns ("Description ... Amount") become separate lines, like tesseract's.
    """
    lines: list[list[dict[str, Any]]] = []
    for w in sorted(words, key=lambda w: ((w["top"] + w["bottom"]) / 2, w["x0"])):
        mid = (w["top"] + w["bottom"]) / 2
        if lines:
            last = lines[-1]
            ref = sum((v["top"] + v["bottom"]) / 2 for v in last) / len(last)
            height = max(v["bottom"] - v["top"] for v in last)
            if abs(mid - ref) <= 0.5 * max(height, w["bottom"] - w["top"]):
                last.append(w)
                continue
        lines.append([w])
    segments: list[list[dict[str, Any]]] = []
    for line in lines:
        line.sort(key=lambda w: w["x0"])
        seg = [line[0]]
        for prev, w in itertools.pairwise(line):
            size = max(prev.get("size") or 0.0, prev["bottom"] - prev["top"], 1.0)
            if w["x0"] - prev["x1"] > 2.5 * size:
                segments.append(seg)
                seg = []
            seg.append(w)
        segments.append(seg)
    return segments


def _group_blocks(segments: list[list[dict[str, Any]]]) -> list[int]:
    """Block id per segment: segments stacked closely with horizontal overlap share a block."""
    boxes = [
        (
            min(w["x0"] for w in s),
            min(w["top"] for w in s),
            max(w["x1"] for w in s),
            max(w["bottom"] for w in s),
        )
        for s in segments
    ]
    parent = list(range(len(segments)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            height = max(a[3] - a[1], b[3] - b[1])
            gap = b[1] - a[3]
            if gap > 1.2 * height:
                continue
            if min(a[2], b[2]) > max(a[0], b[0]) and gap > -0.5 * height:
                parent[find(j)] = find(i)
    roots: dict[int, int] = {}
    return [roots.setdefault(find(i), len(roots)) for i in range(len(segments))]


# Text turned a quarter: (pdfplumber direction of its characters, of its successive lines) by the
# sign of the character matrix's b term. b > 0: turned counter-clockwise, read bottom to top.
_TURNED = {1: ("btt", "ltr"), -1: ("ttb", "rtl")}


def _sideways_segments(plumber_page: Any) -> list[list[dict[str, Any]]]:
    """Runs of text printed a quarter turn from upright (a margin's legal notice or e-mail), one
    segment per printed line, words in reading order.

    pdfplumber reads every non-upright character top to bottom, so a line turned counter-clockwise
    came out reversed (``moc.elpmaxe@ofni``). Each direction is read with its own character order;
    a word's ``size`` is its glyph height across the line (its box's width)."""
    out: list[list[dict[str, Any]]] = []
    for sign, (char_dir, line_dir) in _TURNED.items():

        def keep(obj: dict[str, Any], sign: int = sign) -> bool:
            if obj.get("object_type") != "char":
                return False
            b = obj["matrix"][1]
            return not obj["upright"] and b != 0 and (b > 0) == (sign > 0)

        turned = plumber_page.filter(keep)
        if not turned.chars:
            continue
        words = [
            {**w, "size": float(w["x1"]) - float(w["x0"])}
            for w in turned.extract_words(char_dir_rotated=char_dir, line_dir_rotated=line_dir)
            if w["text"].strip()
        ]
        columns: list[list[dict[str, Any]]] = []
        for w in sorted(words, key=lambda w: (w["x0"] + w["x1"]) / 2):
            mid = (w["x0"] + w["x1"]) / 2
            if columns:
                last = columns[-1]
                ref = sum((v["x0"] + v["x1"]) / 2 for v in last) / len(last)
                if abs(mid - ref) <= 0.5 * max(w["size"], last[0]["size"]):
                    last.append(w)
                    continue
            columns.append([w])
        for col in columns:
            # reading order along the line; a gap of over 2.5 glyph heights starts a new segment
            col.sort(key=(lambda w: -w["bottom"]) if sign > 0 else (lambda w: w["top"]))
            seg = [col[0]]
            for prev, w in itertools.pairwise(col):
                gap = prev["top"] - w["bottom"] if sign > 0 else w["top"] - prev["bottom"]
                if gap > 2.5 * max(prev["size"], 1.0):
                    out.append(seg)
                    seg = []
                seg.append(w)
            out.append(seg)
    return out


def _quarter(matrix: tuple[float, ...]) -> int:
    """Quarter turns (counter-clockwise, as PDF space has y up) of a character's baseline."""
    return round(math.degrees(math.atan2(matrix[1], matrix[0])) / 90) % 4


def _with_rotate(plumber_page: Any, rotate: int) -> Any:
    """A pdfplumber page over a copy of ``plumber_page``'s pdfminer page with ``/Rotate``
    ``rotate``: its characters come out turned as a viewer would show that page."""
    import pdfplumber.page

    turned = copy.copy(plumber_page.page_obj)  # pdfminer turns characters by ``rotate``
    turned.rotate = rotate
    turned.attrs = {**turned.attrs, "Rotate": rotate}  # pdfplumber sizes the page by ``/Rotate``
    return pdfplumber.page.Page(
        plumber_page.pdf, turned, plumber_page.page_number, plumber_page.initial_doctop
    )


def reading_frame(plumber_page: Any) -> tuple[Any, int, str]:
    """The page to read a digital page's words from, the clockwise turn in degrees that takes
    the page as shown to that page, and a note for ``Page.notes`` ("" when nothing was done).

    A page's ``/Rotate`` turns it clockwise when shown ("rotate and save" in a viewer writes it),
    and pdfminer gives its characters as shown: text written upright on a page shown upside
    down came out marked upright with every word reversed (``latoT``), and on a page shown
    sideways one line per block, lines in the wrong order. When more characters are upright on
    the page as written than as shown, the page is read as written (``/Rotate`` set aside),
    through the same code as any page, so its words and normalised boxes are those of the same
    page without ``/Rotate``; the caller turns the rendered raster (which PDFium renders as shown)
    by the returned turn and records it in ``Page.rotation``, as for a sideways scan. Text that
    ``/Rotate`` makes upright (a landscape page written turned) is read as shown, as before. A
    page without ``/Rotate`` whose characters are mostly printed turned (at least
    :data:`_MIN_CHARS_TO_JUDGE` of them, more than upright ones) is read as if ``/Rotate`` showed
    it upright; one whose text is mostly upright is returned as it is (a turned margin notice
    keeps the sideways-text path).

    Examples
    --------
    >>> class P:  # text that /Rotate 180 shows upright: written upside down
    ...     rotation = 180
    ...     chars = [{"text": "T", "matrix": (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)}]
    >>> reading_frame(P)[1:]
    (0, 'page shown turned by /Rotate 180; its text read as shown')
    >>> P.rotation = 0
    >>> reading_frame(P)[1:]
    (0, '')
    """
    shown = int(plumber_page.rotation) % 360
    quarters = Counter(_quarter(ch["matrix"]) for ch in plumber_page.chars if ch["text"].strip())
    if shown not in (90, 180, 270):
        # no /Rotate, but most of the text printed turned (a landscape page drawn a quarter
        # round on a portrait one): read it as a viewer would show it turned upright
        q, n = max(((k, v) for k, v in quarters.items() if k), key=lambda kv: kv[1], default=(0, 0))
        if n <= quarters[0] or n < _MIN_CHARS_TO_JUDGE:
            return plumber_page, 0, ""
        turn = 90 * q
        note = (
            f"text printed turned on the page ({n} of {sum(quarters.values())} characters); "
            f"read turned {turn} deg clockwise to make it upright"
        )
        return _with_rotate(plumber_page, turn), turn, note
    as_written = (-shown // 90) % 4  # the quarter of text written upright, as shown
    if quarters[as_written] <= quarters[0]:
        return plumber_page, 0, f"page shown turned by /Rotate {shown}; its text read as shown"
    page = _with_rotate(plumber_page, 0)
    turn = (360 - shown) % 360
    note = (
        f"page shown turned by /Rotate {shown}; its text read as written, "
        f"turned {turn} deg clockwise to make text upright"
    )
    return page, turn, note


def image_cover(plumber_page: Any) -> float:
    """Share of the page's area under its images (overlaps counted twice, at most 1)."""
    width, height = float(plumber_page.width), float(plumber_page.height)
    area = sum(
        max(0.0, float(im["x1"]) - float(im["x0"]))
        * max(0.0, float(im["bottom"]) - float(im["top"]))
        for im in plumber_page.images
    )
    return min(1.0, area / (width * height)) if width > 0 and height > 0 else 0.0


def _unmapped(text: str) -> bool:
    if text.startswith("(cid:"):
        return True
    return any(
        "\ue000" <= ch <= "\uf8ff" or ch == "\ufffd" or (ch < " " and ch not in "\t\n\r")
        for ch in text
    )


def unmapped_share(plumber_page: Any) -> float:
    """Share of the page's text characters that have no Unicode, 0 for fewer than 10 characters.

    A font without a ToUnicode map (common in PDFs made by some invoicing and printing systems)
    leaves pdfminer only its codes: ``(cid:36)(cid:38)`` for ``AC``. The page prints its words
    but its text layer cannot be read.

    Examples
    --------
    >>> class P:
    ...     chars = [{"text": t} for t in "Total 9.00"] + [{"text": "(cid:7)"}] * 3
    >>> unmapped_share(P())  # 3 of the 12 characters that are not spaces
    0.25
    >>> P.chars = P.chars[:10]  # 9 characters: too few to judge
    >>> unmapped_share(P())
    0.0
    """
    texts = [c["text"] for c in plumber_page.chars if not c["text"].isspace()]
    if len(texts) < _MIN_CHARS_TO_JUDGE:
        return 0.0
    return sum(map(_unmapped, texts)) / len(texts)


def hidden_text(pdf: Any, index: int, plumber_page: Any) -> bool:
    """Whether page ``index`` is a scan under an invisible text layer (a "searchable PDF").

    Scanners and OCR programs write the words they read as invisible text over the page image,
    so that the page can be searched and copied: in text render mode 3 (neither filled nor
    stroked) or 7 (a clip path only), or drawn first and covered by the image drawn after it.
    That text is another program's OCR, with its misreads and without confidences; this
    module's callers read such a page with tesseract instead, as a scan
    (``load_document(hidden_text="ocr")``). A page qualifies when images cover at least half
    of it and at least :data:`HIDDEN_TEXT_SHARE` of its text objects are hidden; visible text
    over a background image (a letterhead drawn as a picture) does not.
    """
    if image_cover(plumber_page) < _IMAGE_COVER:
        return False
    import pypdfium2.raw as pdfium_c

    with PDFIUM_LOCK:
        page = pdf[index]
        try:
            width, height = page.get_size()
            # in drawing order: a text object is covered by a page-sized image drawn later
            objects = [
                (
                    obj.type,
                    pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw)
                    if obj.type == pdfium_c.FPDF_PAGEOBJ_TEXT
                    else None,
                    obj.get_bounds(),
                )
                for obj in page.get_objects()
                if obj.type in (pdfium_c.FPDF_PAGEOBJ_TEXT, pdfium_c.FPDF_PAGEOBJ_IMAGE)
            ]
        finally:
            page.close()
    n_text = hidden = 0
    covered_from = len(objects)  # index of the last page-sized image; text before it is hidden
    for i, (kind, _, (left, bottom, right, top)) in enumerate(objects):
        area = max(0.0, right - left) * max(0.0, top - bottom)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE and area >= _IMAGE_COVER * width * height:
            covered_from = i
    for i, (kind, mode, _) in enumerate(objects):
        if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
            n_text += 1
            hidden += mode in _INVISIBLE_MODES or i < covered_from
    return n_text > 0 and hidden >= HIDDEN_TEXT_SHARE * n_text


def _overprinted(chars: list[dict[str, Any]]) -> bool:
    """Whether some character is drawn twice within 1 pt (checked before pdfplumber's
    ``dedupe_chars``, which doubles the time a page's words take, is run).

    Examples
    --------
    >>> c = lambda t, x: {"text": t, "x0": x, "top": 10.0}
    >>> _overprinted([c("l", 10.0), c("l", 13.0)]), _overprinted([c("B", 10.0), c("B", 10.4)])
    (False, True)
    """
    seen: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    for ch in chars:
        x, y = float(ch["x0"]), float(ch["top"])
        key = (ch["text"], int(x // 2), int(y // 2))
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for ox, oy in seen.get((key[0], key[1] + dx, key[2] + dy), ()):
                    if abs(ox - x) <= 1.0 and abs(oy - y) <= 1.0:
                        return True
        seen.setdefault(key, []).append((x, y))
    return False


def text_layer_words(plumber_page: Any) -> tuple[list[Word], bool]:
    """Words of a digital page in reading order, and whether the page should be OCR'd instead.

    Text turned a quarter from upright is read in its own direction (:func:`_sideways_segments`)
    and follows the upright text, one line and block per printed line. A character drawn twice
    or more at (nearly) the same place, as some programs draw bold type, counts once
    (pdfplumber's ``dedupe_chars``: ``IInnvvooiiccee`` was read for ``Invoice``)."""
    width, height = float(plumber_page.width), float(plumber_page.height)
    if _overprinted(plumber_page.chars):
        plumber_page = plumber_page.dedupe_chars()
    upright_page = plumber_page.filter(
        lambda obj: obj.get("object_type") != "char" or bool(obj["upright"])
    )
    raw = [
        w
        for w in upright_page.extract_words(extra_attrs=["size"], keep_blank_chars=False)
        if w["text"].strip()
    ]
    sideways = _sideways_segments(plumber_page)
    n_words = len(raw) + sum(len(s) for s in sideways)
    scanned = image_cover(plumber_page) >= _IMAGE_COVER and n_words < _MIN_WORDS_OVER_IMAGE
    if not n_words:
        return [], True
    segments = _group_lines(raw) if raw else []
    blocks = _group_blocks(segments)
    # Blocks in order of their first line's top, then left edge; lines top-down within a block.
    block_key: dict[int, tuple[float, float]] = {}
    for i in range(len(segments)):
        top, left = min(w["top"] for w in segments[i]), min(w["x0"] for w in segments[i])
        b = blocks[i]
        block_key[b] = min(block_key.get(b, (top, left)), (top, left))
    order = sorted(
        range(len(segments)),
        key=lambda i: (block_key[blocks[i]], min(w["top"] for w in segments[i])),
    )
    renumber: dict[int, int] = {}
    placed = [(segments[i], renumber.setdefault(blocks[i], len(renumber))) for i in order]
    placed += [(seg, len(renumber) + k) for k, seg in enumerate(sideways)]
    out: list[Word] = []
    for line_id, (segment, block_id) in enumerate(placed):
        for w in segment:
            bbox = (
                min(max(float(w["x0"]) / width, 0.0), 1.0),
                min(max(float(w["top"]) / height, 0.0), 1.0),
                min(max(float(w["x1"]) / width, 0.0), 1.0),
                min(max(float(w["bottom"]) / height, 0.0), 1.0),
            )
            size = w.get("size")
            out.append(
                Word(
                    text=w["text"],
                    bbox=bbox,
                    ocr_conf=1.0,
                    font_size=None if size is None else round(float(size), 2),
                    line_id=line_id,
                    block_id=block_id,
                )
            )
    return out, scanned


def scan_dpi(pdf: Any, index: int) -> float | None:
    """Resolution at which page ``index``'s scan was made: the pixels per inch of the largest
    image covering at least half of the page, as drawn there; None when no image does.

    A scanner (or a program that shrank the scan) may store a page at 72-150 dpi. Rendering such
    a page at 300 dpi interpolates pixels that were never scanned, and the raster looks sharp
    and large to everything downstream, which then reads and measures it as a good scan. The
    caller renders it at this resolution instead, so OCR enlarges its small text as it does for
    a low-resolution image file (``_ocr``), and the page's quality records what was scanned.
    An image drawn turned by a quarter (its pixel rows along the page's height) is measured
    with its axes swapped; an image stretched unevenly gives the geometric mean of its two
    resolutions.
    """
    import pypdfium2.raw as pdfium_c

    with PDFIUM_LOCK:
        page = pdf[index]
        try:
            width, height = page.get_size()
            images = [
                (obj.get_bounds(), obj.get_px_size())
                for obj in page.get_objects()
                if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE
            ]
        finally:
            page.close()
    best, best_area = None, _IMAGE_COVER * width * height
    for (left, bottom, right, top), (px_w, px_h) in images:
        w_in, h_in = (right - left) / 72.0, (top - bottom) / 72.0
        if w_in * h_in * 72.0 * 72.0 < best_area or min(w_in, h_in, px_w, px_h) <= 0:
            continue
        straight = (px_w / w_in, px_h / h_in)
        turned = (px_h / w_in, px_w / h_in)
        # the pairing whose two axes agree is how the image is drawn
        x, y = min(straight, turned, key=lambda d: max(d) / min(d))
        best, best_area = (x * y) ** 0.5, w_in * h_in * 72.0 * 72.0
    return best
