"""Image side of ingestion: sniff the format, guard memory, decode frames to grey rasters."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from confidence.errors import DocumentError

_ASSUMED_DPI = 300.0
_DPI_RANGE = (50.0, 1200.0)  # file resolutions outside this are placeholders, not measurements
_ANISOTROPY = 1.1
"""Horizontal and vertical resolutions further apart than this factor are resampled square."""

# Magic numbers of the formats we read, and what other common content looks like.
_MAGIC = {
    b"%PDF": "pdf",
    b"\x89PNG\r\n\x1a\n": "png",
    b"\xff\xd8\xff": "jpeg",
    b"II*\x00": "tiff",
    b"MM\x00*": "tiff",
    b"BM": "bmp",
}


def sniff(path: Path, head: bytes) -> str:
    """Format of the file from its first bytes: ``pdf``, ``png``, ``jpeg``, ``tiff`` or ``bmp``."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    # A PDF may have junk before the header (allowed within the first 1024 bytes).
    if b"%PDF-" in head[:1024]:
        return "pdf"
    sample = head[:512]
    if sample and all(32 <= b < 127 or b in (9, 10, 13) for b in sample):
        raise DocumentError(path, "file holds plain text, not an image or PDF")
    raise DocumentError(path, "content is not a PDF, PNG, JPEG, TIFF, BMP or WebP image")


def _uniform(image) -> bool:
    """Whether an image shows (almost) nothing: its grey values spread by under 2 levels."""
    return float(np.asarray(image.convert("L"), dtype=np.float32).std()) < 2.0


def _to_gray(frame) -> np.ndarray:
    from PIL import Image

    if frame.mode in ("RGBA", "LA") or (frame.mode == "P" and "transparency" in frame.info):
        rgba = frame.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        on_white = Image.alpha_composite(white, rgba)
        if _uniform(on_white) and not _uniform(rgba.getchannel("A")):
            # light print on a transparent ground (an export for a dark background): the
            # print is in the alpha channel and vanishes on white, so it is laid on black
            black = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
            frame = Image.alpha_composite(black, rgba)
        else:
            frame = on_white
    if frame.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        arr = np.asarray(frame, dtype=np.float64)
        hi = float(arr.max()) or 1.0
        return (arr / hi * 255.0).astype(np.uint8)
    return np.asarray(frame.convert("L"))


def _frame_dpi(frame) -> tuple[float, float, bool]:
    """``(horizontal dpi, vertical dpi, recorded)``; both assumed when the file holds none."""
    dpi = frame.info.get("dpi")
    try:
        x = float(dpi[0]) if dpi else 0.0
        y = float(dpi[1]) if dpi and len(dpi) > 1 else x
    except (TypeError, ValueError, IndexError):
        x = y = 0.0
    if _DPI_RANGE[0] <= x <= _DPI_RANGE[1]:
        return x, (y if _DPI_RANGE[0] <= y <= _DPI_RANGE[1] else x), True
    return _ASSUMED_DPI, _ASSUMED_DPI, False


def square_pixels(gray: np.ndarray, x_dpi: float, y_dpi: float) -> tuple[np.ndarray, float, bool]:
    """Resample a raster whose pixels are not square to the finer of its two resolutions.

    A fax is scanned at about 204 x 98 dpi ("normal" mode): each pixel is twice as tall as it is
    wide, and OCR, which assumes square pixels, sees every letter squashed to half its height.
    Resolutions within :data:`_ANISOTROPY` of each other are left alone. Returns the raster,
    its (now single) resolution and whether it was resampled.

    Examples
    --------
    >>> g, dpi, done = square_pixels(np.zeros((98, 204), np.uint8), 204.0, 98.0)
    >>> g.shape, dpi, done
    ((204, 204), 204.0, True)
    >>> square_pixels(np.zeros((10, 10), np.uint8), 300.0, 299.0)[1:]
    (300.0, False)
    """
    import cv2

    lo, hi = sorted((x_dpi, y_dpi))
    if hi <= lo * _ANISOTROPY:
        return gray, x_dpi, False
    h, w = gray.shape
    size = (round(w * hi / x_dpi), round(h * hi / y_dpi))
    return cv2.resize(gray, size, interpolation=cv2.INTER_CUBIC), hi, True


def iter_frames(path: Path, max_pixels: int) -> Iterator[tuple[np.ndarray, float, list[str]]]:
    """Yield ``(grey raster, dpi, notes)`` per frame, checking the size before decoding."""
    from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

    with warnings.catch_warnings():
        # The size is checked below against max_pixels, before any pixel is decoded.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
        try:
            img = Image.open(path)
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
            raise DocumentError(path, f"not a readable image: {e}") from None
        finally:
            Image.MAX_IMAGE_PIXELS = limit
        with img:
            for index, frame in enumerate(ImageSequence.Iterator(img)):
                notes: list[str] = []
                drafted = False
                w, h = frame.size
                if w < 1 or h < 1:
                    raise DocumentError(path, f"frame {index + 1} has no pixels ({w}x{h})")
                if w * h > max_pixels:
                    if frame.format == "JPEG":
                        # JPEG can decode at 1/2, 1/4 or 1/8 scale without the full raster.
                        factor = (max_pixels / (w * h)) ** 0.5
                        frame.draft("L", (int(w * factor), int(h * factor)))
                        drafted = True
                        notes.append(f"downscaled from {w}x{h} at decode")
                    else:
                        raise DocumentError(
                            path,
                            f"image is {w}x{h} ({w * h / 1e6:.0f} MP), above the "
                            f"{max_pixels / 1e6:.0f} MP limit; downscale it or raise the limit "
                            "(--max-megapixels, or load_document(max_pixels=...))",
                        )
                dpi, y_dpi, known = _frame_dpi(frame)
                if not known:
                    notes.append(f"resolution not recorded in file; assumed {dpi:.0f} dpi")
                try:
                    orientation = frame.getexif().get(0x0112, 1) if index == 0 else 1
                    if orientation != 1:
                        frame = ImageOps.exif_transpose(frame)
                        notes.append("EXIF orientation applied")
                        if orientation in (5, 6, 7, 8):  # turned a quarter: the axes swap
                            dpi, y_dpi = y_dpi, dpi
                    gray = _to_gray(frame)
                except (OSError, SyntaxError, ValueError) as e:
                    raise DocumentError(
                        path, f"image data is truncated or corrupt (frame {index + 1}): {e}"
                    ) from None
                if not drafted:
                    gray, square, resampled = square_pixels(gray, dpi, y_dpi)
                    if resampled:
                        notes.append(
                            f"pixels not square ({dpi:.0f} x {y_dpi:.0f} dpi, as in a fax); "
                            f"resampled to {square:.0f} dpi both ways"
                        )
                        dpi = square
                        h, w = gray.shape
                if gray.size > max_pixels:  # draft only reaches powers of two
                    factor = (max_pixels / gray.size) ** 0.5
                    size = (
                        max(1, int(gray.shape[1] * factor)),
                        max(1, int(gray.shape[0] * factor)),
                    )
                    gray = np.asarray(Image.fromarray(gray).resize(size, Image.BILINEAR))
                if gray.shape[1] != w and gray.shape[0] != h:  # downscaled: fewer px per inch
                    dpi = dpi * max(gray.shape) / max(w, h)
                yield gray, dpi, notes
