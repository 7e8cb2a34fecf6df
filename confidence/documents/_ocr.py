"""OCR side of ingestion: orientation, deskew and tesseract on one grey raster.

Cost model (measured on a 2-core machine, see ``benchmarks/bench_ingest.py``): tesseract's OSD
costs about twice a full ``image_to_data`` run, so it is never used. Instead:

* sideways pages are flagged by opencv projection profiles (:func:`text_orientation`, ~20 ms);
  a flagged page is read as it is first and turned 90 degrees clockwise only when the words of
  that reading do not run left to right (the profile has false alarms on receipts);
* upside-down pages (and the 90-vs-270 ambiguity) are found after OCR: only when the mean word
  confidence is poor (< 0.5) is the 180-degree flip read too, and the better reading kept. Upright
  pages of ordinary quality therefore cost exactly one tesseract run plus ~60 ms of opencv.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from confidence.documents.quality import measure_page, text_orientation
from confidence.errors import DocumentError
from confidence.types import ImageQuality, QualityGrid, Word

_DESKEW_MIN_DEG = 0.3  # below this tesseract copes and resampling would only blur
_FLIP_BELOW_CONF = 0.5  # mean word confidence under which the upside-down reading is tried
_DENOISE_ABOVE = 0.05  # noise sigma (0-1) above which tesseract's binarisation falls apart
_BLANK_INK = 0.0005  # ink fraction under which a page is blank and tesseract is skipped
# Tesseract line boxes span ascender to descender of the glyphs present; on average that is about
# 0.85 of the font's em size for mixed-case text.
_LINE_HEIGHT_PER_EM = 0.85


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
    import pytesseract
    from PIL import Image

    # tesseract's own OpenMP threads fight the process-level parallelism of load_many.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    img = Image.fromarray(gray)
    img.format = "PPM"  # uncompressed temp file for pytesseract: PNG encoding costs ~100 ms/page
    try:
        data = pytesseract.image_to_data(
            img,
            lang=lang,
            config=f"--dpi {round(dpi)}",
            output_type=pytesseract.Output.DICT,
            timeout=timeout,
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
    return _words_from_data(data, gray.shape, dpi)


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


def _mean_conf(words: list[Word]) -> float:
    return sum(w.ocr_conf for w in words) / len(words) if words else 0.0


def _deskew(gray: np.ndarray, skew_deg: float) -> np.ndarray:
    h, w = gray.shape
    # cv2 angles are counter-clockwise; undo the measured counter-clockwise skew.
    m = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), -skew_deg, 1.0)
    paper = int(np.percentile(gray[:: max(1, h // 200), :: max(1, w // 200)], 95))
    return cv2.warpAffine(
        gray, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=paper
    )


def _flip_grid(grid: QualityGrid) -> QualityGrid:
    # A 180-degree turn reverses row-major tile order.
    return replace(
        grid,
        sharpness=grid.sharpness[::-1],
        contrast=grid.contrast[::-1],
        noise=grid.noise[::-1],
        ink_ratio=grid.ink_ratio[::-1],
    )


def _reads_horizontally(words: list[Word], shape: tuple[int, int]) -> bool:
    """True when most multi-letter words are wider than tall and confidently read.

    Tesseract also reads text lines that run top to bottom, so a sideways page can come back with
    words, but their boxes are then taller than wide.
    """
    h, w = shape
    long = [x for x in words if sum(c.isalnum() for c in x.text) >= 3]
    if len(long) < 5:
        return False
    wide = sum((x.bbox[2] - x.bbox[0]) * w > (x.bbox[3] - x.bbox[1]) * h for x in long)
    return wide >= 0.6 * len(long) and _mean_conf(long) >= _FLIP_BELOW_CONF


def ocr_page(
    gray: np.ndarray,
    dpi: float,
    *,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    grid_shape: tuple[int, int],
) -> OcrPage:
    """Orient, deskew and OCR one page raster; measure its quality on the way."""
    args = (dpi, lang, timeout, path, page_no, grid_shape)
    sideways, ratio = text_orientation(gray)
    if sideways:
        # The projection profile is a cheap gate with false alarms (monospaced columns of
        # receipts make vertical structure too): read the page as it is first and turn it only
        # when that reading's words do not run left to right (measured: half of the SROIE
        # receipts were flagged, all upright).
        upright = _read(gray, 0, *args)
        if _reads_horizontally(list(upright.words), upright.gray.shape):
            note = f"profile suggested sideways text (ratio {ratio:.2f}) but it reads upright"
            return replace(upright, notes=(note, *upright.notes))
        return _read(cv2.rotate(gray, cv2.ROTATE_90_CLOCKWISE), 90, *args)
    return _read(gray, 0, *args)


def _read(
    gray: np.ndarray,
    rotation: int,
    dpi: float,
    lang: str,
    timeout: float,
    path: Path,
    page_no: int,
    grid_shape: tuple[int, int],
) -> OcrPage:
    notes: list[str] = []
    quality, grid = measure_page(gray, dpi, rows=grid_shape[0], cols=grid_shape[1])
    if quality.ink_ratio < _BLANK_INK:
        notes.append("blank page: OCR skipped")
        return OcrPage(gray, (), rotation, 0.0, quality, grid, tuple(notes))
    deskew = 0.0
    if abs(quality.skew_deg) >= _DESKEW_MIN_DEG:
        gray = _deskew(gray, quality.skew_deg)
        deskew = -quality.skew_deg
        notes.append(f"deskewed by {deskew:+.2f} deg")
    ocr_input = gray
    if quality.noise >= _DENOISE_ABOVE:
        # Measured: at noise sigma ~0.09 raw tesseract reads nothing; a 3x3 median restores it.
        ocr_input = cv2.medianBlur(gray, 3)
        notes.append(f"denoised before OCR (noise {quality.noise:.3f})")
    words = _tesseract(ocr_input, dpi, lang, timeout, path, page_no)
    conf = _mean_conf(words)
    if words and conf < _FLIP_BELOW_CONF:
        flipped = cv2.rotate(gray, cv2.ROTATE_180)
        words_f = _tesseract(
            cv2.rotate(ocr_input, cv2.ROTATE_180), dpi, lang, timeout, path, page_no
        )
        conf_f = _mean_conf(words_f)
        if conf_f > conf + 0.1 and len(words_f) >= 0.5 * len(words):
            notes.append(f"upside down: turned 180 deg (mean conf {conf:.2f} -> {conf_f:.2f})")
            gray, words, conf, grid = flipped, words_f, conf_f, _flip_grid(grid)
            rotation = (rotation + 180) % 360
    if rotation:
        notes.append(f"turned {rotation} deg clockwise to make text upright")
    if not words:
        notes.append("no text found")
    return OcrPage(gray, tuple(words), rotation, deskew, quality, grid, tuple(notes))
