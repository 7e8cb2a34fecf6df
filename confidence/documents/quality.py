"""Image-quality measurements of a page raster (opencv + numpy).

Every function takes a grey ``uint8`` image (``H x W``, 0 = black) and returns plain floats, so
ingestion can record quality once per page and feature code can later ask "how good was the image
around this value" without keeping the image.

Metric definitions (also in :class:`~confidence.types.ImageQuality`):

* ``sharpness`` -- variance of the Laplacian on the 0-255 grey image, measured on the text
  (pixels near ink); blank areas would otherwise dilute it.
* ``contrast`` / ``brightness`` -- standard deviation / mean of grey levels on a 0-1 scale.
* ``noise`` -- Immerkaer's fast noise estimate (sigma of additive noise, 0-1 scale) on background
  pixels only, so text edges are not counted as noise.
* ``skew_deg`` -- dominant text-line angle, positive = counter-clockwise (lines rising to the
  right), found by maximising the peakiness of the projection profile of ink pixels.
* ``char_height_px`` / ``effective_resolution`` -- median height of character-sized connected
  components, and that height in points as the camera saw it (``px / dpi * 72``).
* ``blockiness`` -- mean gradient across 8x8 JPEG block boundaries divided by the mean gradient
  elsewhere (1.0 = no blocking).
* ``ink_ratio`` -- fraction of pixels darker than the Otsu threshold.

Large rasters are measured on a copy downsampled to about 1200 px on the long side for the metrics
that are scale-free (skew, ink ratio, brightness, contrast); sharpness, noise and blockiness are
resolution-dependent and are measured at full resolution on a regular subsample of rows/columns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import cv2
import numpy as np

from confidence.types import BBox, ImageQuality, QualityGrid, Word

__all__ = [
    "estimate_skew",
    "measure",
    "measure_page",
    "measure_region",
    "quality_grid",
]

_WORK_SIDE = 1200  # long side of the downsampled copy used by scale-free metrics
_MIN_CONTRAST = 8.0  # grey std (0-255) below which a region is treated as blank (no ink)...
_FAINT_INK = 16.0  # ...unless its darkest strokes stand this far below the local paper (faded)
_NOISE_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float32)


def _check_gray(gray: np.ndarray) -> np.ndarray:
    gray = np.asarray(gray)
    if gray.ndim == 3 and gray.shape[2] in (3, 4):
        gray = cv2.cvtColor(gray[..., :3], cv2.COLOR_RGB2GRAY)
    if gray.ndim != 2 or gray.size == 0:
        raise ValueError(
            f"expected a non-empty 2-D grey image (H x W), got shape {gray.shape}; "
            "convert with cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)"
        )
    if gray.dtype != np.uint8:
        gray = np.clip(gray, 0, 255).astype(np.uint8)
    return gray


def _downsample(gray: np.ndarray, side: int = _WORK_SIDE) -> tuple[np.ndarray, float]:
    """Return a copy with long side <= ``side`` and the scale factor (small / original)."""
    h, w = gray.shape
    scale = min(1.0, side / max(h, w))
    if scale >= 1.0:
        return gray, 1.0
    small = cv2.resize(gray, (max(1, round(w * scale)), max(1, round(h * scale))), cv2.INTER_AREA)
    return small, scale


def faint_ink(gray: np.ndarray) -> float:
    """How far the darkest strokes of a grey image stand below its local paper, in grey levels.

    The 99.5th percentile of the paper tone (a dilated, blurred background) minus the lightly
    smoothed image. On a page whose grey values vary by under 8 levels (the only pages it is asked
    about), scanner noise stays near 10 levels and a speckle of dust under 19; faded print that
    is still legible (pale thermal paper, a dry ribbon, blurred by the scan) reaches 21 and more.
    Such a page is blank only when this is small too: a false "not blank" costs one OCR pass that
    reads nothing, a false "blank" loses a legible document.

    Examples
    --------
    >>> page = np.full((200, 200), 235, dtype=np.uint8)
    >>> round(faint_ink(page))
    0
    >>> page[90:94, 20:180] = 195  # one pale line of print: std about 6
    >>> bool(page.std() < 8), faint_ink(page) > _FAINT_INK
    (True, True)
    """
    g = np.asarray(gray, dtype=np.float32)
    smooth = cv2.GaussianBlur(g, (0, 0), 1.0)
    paper = cv2.GaussianBlur(cv2.dilate(smooth, np.ones((15, 15), np.uint8)), (0, 0), 10.0)
    return float(np.percentile(paper - smooth, 99.5))


def _ink_mask(gray: np.ndarray, full: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Otsu ink mask (True = ink) and the threshold; all-False for blank images.

    ``gray`` is the downsampled copy (:func:`_downsample`) of ``full``, the page as read.
    Shrinking averages thin pale strokes into the paper (light grey print on an A4 page at
    300 dpi: 15.9 grey levels below the paper on the 1200 px copy, 22.6 on the page itself), so
    a copy that looks blank is judged again on ``full`` before the page is called blank.
    """
    if (
        float(gray.std()) < _MIN_CONTRAST
        and faint_ink(gray) < _FAINT_INK
        and (full is None or full is gray or faint_ink(full) < _FAINT_INK)
    ):
        return np.zeros(gray.shape, dtype=bool), 0.0
    thr, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    return binary > 0, float(thr)


def _profile_score(ys: np.ndarray, xs: np.ndarray, angle_deg: float) -> float:
    # Project ink pixels onto the axis perpendicular to lines tilted by angle_deg: aligned text
    # lines make a peaky histogram, i.e. a large sum of squared bin counts.
    a = math.radians(angle_deg)
    proj = ys * math.cos(a) + xs * math.sin(a)
    counts = np.bincount((proj - proj.min()).astype(np.int64))
    return float(np.dot(counts, counts))


def _ink_points(small_ink: np.ndarray, max_points: int = 60000) -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.nonzero(small_ink)
    if ys.size > max_points:  # a regular subsample keeps the profile shape
        step = ys.size // max_points + 1
        ys, xs = ys[::step], xs[::step]
    return ys.astype(np.float64), xs.astype(np.float64)


def _search_angle(ys: np.ndarray, xs: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """Coarse-to-fine maximisation of the projection score; returns (angle, score)."""
    best_a, best_s = 0.0, -1.0
    step = 1.0
    grid = np.arange(lo, hi + 1e-9, step)
    for _ in range(3):
        for a in grid:
            s = _profile_score(ys, xs, float(a))
            if s > best_s:
                best_a, best_s = float(a), s
        step /= 10.0 if step > 0.15 else 2.0
        grid = np.arange(best_a - 10 * step, best_a + 10 * step + 1e-9, step)
    return best_a, best_s


def estimate_skew(gray: np.ndarray, max_angle: float = 15.0) -> float:
    """Dominant text-line angle in degrees (positive = counter-clockwise), 0.0 for blank images.

    Examples
    --------
    >>> import numpy as np, cv2
    >>> img = np.full((400, 600), 255, np.uint8)
    >>> for y in range(60, 360, 30):
    ...     _ = cv2.line(img, (50, y), (550, y), 0, 3)
    >>> round(estimate_skew(img), 1)
    0.0
    """
    gray = _check_gray(gray)
    small, _ = _downsample(gray)
    ink, _ = _ink_mask(small, gray)
    ys, xs = _ink_points(ink)
    if ys.size < 50:
        return 0.0
    # Lines tilted counter-clockwise by t satisfy y = c - x tan t (rows grow downwards), so the
    # projection y cos a + x sin a is constant along them exactly when a = t.
    return float(_search_angle(ys, xs, -max_angle, max_angle)[0])


_BAND = 32  # rows per sampled band
_PIXEL_BUDGET = 1_200_000  # full-resolution pixels examined by sharpness / noise / the grid


@dataclass(frozen=True)
class _Maps:
    """Full-resolution per-pixel maps on a sample of horizontal bands (all flattened per band)."""

    rows: np.ndarray  # original row index of each sampled row
    gray: np.ndarray
    ink: np.ndarray
    lap: np.ndarray  # Laplacian
    conv: np.ndarray  # |noise kernel response|
    near: np.ndarray  # within a few px of ink (where sharpness is measured)
    background: np.ndarray  # far from ink and off the image border (where noise is measured)


def _bands(h: int, w: int) -> list[tuple[int, int]]:
    if h * w <= _PIXEL_BUDGET:
        return [(0, h)]
    n = max(1, _PIXEL_BUDGET // (_BAND * w))
    stride = h / n
    return [(int(i * stride), min(h, int(i * stride) + _BAND)) for i in range(n)]


def _pixel_maps(gray: np.ndarray, thr: float, has_ink: bool) -> _Maps:
    # Sharpness and noise are means/variances over pixels, so a regular sample of full-resolution
    # bands estimates them without bias while bounding the cost on big rasters.
    h, w = gray.shape
    parts: dict[str, list[np.ndarray]] = {k: [] for k in _Maps.__dataclass_fields__}
    for r0, r1 in _bands(h, w):
        p0, p1 = max(0, r0 - 4), min(h, r1 + 4)
        sub = gray[p0:p1]
        ink = (sub <= thr) if has_ink else np.zeros(sub.shape, dtype=bool)
        ink_u8 = ink.astype(np.uint8)
        lap = cv2.Laplacian(sub, cv2.CV_32F, ksize=1)
        conv = np.abs(cv2.filter2D(sub.astype(np.float32), -1, _NOISE_KERNEL))
        near = cv2.dilate(ink_u8, np.ones((5, 5), np.uint8)) > 0
        bg = cv2.dilate(ink_u8, np.ones((7, 7), np.uint8)) == 0
        bg[:, [0, -1]] = False
        if p0 == 0:
            bg[0] = False
        if p1 == h:
            bg[-1] = False
        keep = slice(r0 - p0, r1 - p0)
        parts["rows"].append(np.arange(r0, r1))
        for name, arr in (
            ("gray", sub),
            ("ink", ink),
            ("lap", lap),
            ("conv", conv),
            ("near", near),
            ("background", bg),
        ):
            parts[name].append(arr[keep])
    return _Maps(**{k: np.concatenate(v, axis=0) for k, v in parts.items()})


def _sharpness(lap: np.ndarray, near: np.ndarray) -> float:
    # Near-ink region only: blank paper would otherwise dominate and make a page with little text
    # look blurry.
    vals = lap[near] if near.any() else lap.ravel()
    return float(vals.var()) if vals.size > 1 else 0.0


def _noise(conv: np.ndarray, background: np.ndarray) -> float:
    vals = conv[background]
    if vals.size == 0:
        vals = conv.ravel()
    if vals.size == 0:
        return 0.0
    # Immerkaer (1996): sigma = sqrt(pi/2) * mean|I * N| / 6 for Gaussian noise.
    return float(math.sqrt(math.pi / 2.0) * float(vals.mean()) / 6.0 / 255.0)


def _blockiness(gray: np.ndarray) -> float:
    # Subsample whole rows / columns: the 8-px block grid is preserved along the other axis.
    h, w = gray.shape
    if h < 24 or w < 24:
        return 1.0
    rows = gray[:: max(1, h // 400)].astype(np.int16)
    cols = gray[:, :: max(1, w // 400)].astype(np.int16)
    dx = np.abs(np.diff(rows, axis=1)).mean(axis=0)  # gradient between column j and j+1
    dy = np.abs(np.diff(cols, axis=0)).mean(axis=1)
    ratios = []
    for d in (dx, dy):
        idx = np.arange(d.size)
        at_edge = d[(idx % 8) == 7].mean()
        inside = d[(idx % 8) != 7].mean()
        if inside > 1e-6:
            ratios.append(at_edge / inside)
    return float(np.mean(ratios)) if ratios else 1.0


def _char_height(small_ink: np.ndarray, scale: float, words_mask: np.ndarray | None) -> float:
    n, _, stats, _ = cv2.connectedComponentsWithStats(small_ink.astype(np.uint8), connectivity=8)
    if n <= 1:
        return math.nan
    stats = stats[1:]
    h = stats[:, cv2.CC_STAT_HEIGHT].astype(np.float64)
    w = stats[:, cv2.CC_STAT_WIDTH].astype(np.float64)
    area = stats[:, cv2.CC_STAT_AREA]
    keep = (h >= 3) & (h <= small_ink.shape[0] / 10) & (w <= 3 * h) & (w >= 1) & (area >= 4)
    if words_mask is not None:
        cy = stats[:, cv2.CC_STAT_TOP] + stats[:, cv2.CC_STAT_HEIGHT] // 2
        cx = stats[:, cv2.CC_STAT_LEFT] + stats[:, cv2.CC_STAT_WIDTH] // 2
        keep &= words_mask[cy, cx]
    if keep.sum() < 5:
        return math.nan
    return float(np.median(h[keep]) / scale)


def _words_mask(shape: tuple[int, int], words: Iterable[Word]) -> np.ndarray | None:
    mask = np.zeros(shape, dtype=bool)
    h, w = shape
    any_word = False
    for word in words:
        x0, y0, x1, y1 = word.bbox
        mask[int(y0 * h) : math.ceil(y1 * h) + 1, int(x0 * w) : math.ceil(x1 * w) + 1] = True
        any_word = True
    return mask if any_word else None


def _page_quality(
    gray: np.ndarray, dpi: float, words: Iterable[Word] | None
) -> tuple[ImageQuality, _Maps]:
    small, scale = _downsample(gray)
    small_ink, thr = _ink_mask(small, gray)
    has_ink = bool(small_ink.any())
    maps = _pixel_maps(gray, thr, has_ink)
    words_mask = _words_mask(small.shape, words) if words is not None else None
    skew = 0.0
    ys, xs = _ink_points(small_ink)
    if ys.size >= 50:
        skew = _search_angle(ys, xs, -15.0, 15.0)[0]
    char_h = _char_height(small_ink, scale, words_mask)
    quality = ImageQuality(
        sharpness=_sharpness(maps.lap, maps.near),
        contrast=float(small.std()) / 255.0,
        brightness=float(small.mean()) / 255.0,
        noise=_noise(maps.conv, maps.background),
        skew_deg=float(skew),
        dpi=float(dpi),
        char_height_px=char_h,
        effective_resolution=char_h / float(dpi) * 72.0 if not math.isnan(char_h) else math.nan,
        blockiness=_blockiness(gray),
        ink_ratio=float(small_ink.mean()),
    )
    return quality, maps


def _grid(maps: _Maps, shape: tuple[int, int], rows: int, cols: int) -> QualityGrid:
    h, w = shape
    sharp, contrast, noise, ink_ratio = [], [], [], []
    rb = np.linspace(0, h, rows + 1)
    cb = np.linspace(0, w, cols + 1).astype(int)
    row_lo = np.searchsorted(maps.rows, rb[:-1], side="left")
    row_hi = np.searchsorted(maps.rows, rb[1:], side="left")
    for r in range(rows):
        for c in range(cols):
            lo, hi = row_lo[r], max(row_hi[r], row_lo[r] + 1)
            sl = (slice(lo, hi), slice(cb[c], max(cb[c + 1], cb[c] + 1)))
            t_ink = maps.ink[sl]
            ratio = float(t_ink.mean()) if t_ink.size else 0.0
            ink_ratio.append(ratio)
            noise.append(_noise(maps.conv[sl], maps.background[sl]))
            if ratio <= 0.0005:
                sharp.append(math.nan)
                contrast.append(math.nan)
                continue
            sharp.append(_sharpness(maps.lap[sl], maps.near[sl]))
            contrast.append(float(maps.gray[sl].std()) / 255.0)
    return QualityGrid(rows, cols, tuple(sharp), tuple(contrast), tuple(noise), tuple(ink_ratio))


def _check_dpi(dpi: float) -> float:
    if not dpi or not math.isfinite(dpi) or dpi <= 0:
        raise ValueError(f"dpi must be a positive number (the raster's resolution), got {dpi!r}")
    return float(dpi)


def measure(gray: np.ndarray, dpi: float, words: Iterable[Word] | None = None) -> ImageQuality:
    """Measure the image quality of a whole page.

    Parameters
    ----------
    gray : numpy.ndarray
        Grey ``uint8`` page raster (RGB is converted).
    dpi : float
        Resolution of ``gray``; used for ``effective_resolution``.
    words : iterable of Word, optional
        Words on the page (normalised boxes); when given, character height is measured only inside
        word boxes, which ignores rules, logos and specks.

    Returns
    -------
    ImageQuality

    Examples
    --------
    >>> import numpy as np
    >>> q = measure(np.full((100, 80), 255, np.uint8), dpi=100)
    >>> q.ink_ratio, q.contrast
    (0.0, 0.0)
    """
    return _page_quality(_check_gray(gray), _check_dpi(dpi), words)[0]


def measure_page(
    gray: np.ndarray,
    dpi: float,
    words: Iterable[Word] | None = None,
    *,
    rows: int = 8,
    cols: int = 6,
) -> tuple[ImageQuality, QualityGrid]:
    """:func:`measure` and :func:`quality_grid` in one pass (what ingestion records per page).

    Examples
    --------
    >>> import numpy as np
    >>> q, g = measure_page(np.full((120, 90), 255, np.uint8), dpi=100, rows=4, cols=3)
    >>> len(g.ink_ratio)
    12
    """
    gray = _check_gray(gray)
    _check_grid(rows, cols)
    quality, maps = _page_quality(gray, _check_dpi(dpi), words)
    return quality, _grid(maps, gray.shape, rows, cols)


def _crop(gray: np.ndarray, bbox: BBox) -> np.ndarray:
    h, w = gray.shape
    x0, y0, x1, y1 = bbox
    if not (0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0):
        raise ValueError(
            f"bbox must be normalised (x0, y0, x1, y1) with 0 <= x0 < x1 <= 1, got {bbox}"
        )
    c0, c1 = int(x0 * w), max(int(x0 * w) + 1, math.ceil(x1 * w))
    r0, r1 = int(y0 * h), max(int(y0 * h) + 1, math.ceil(y1 * h))
    return gray[r0:r1, c0:c1]


def measure_region(gray: np.ndarray, bbox: BBox, *, dpi: float = 300.0) -> ImageQuality:
    """Measure image quality inside a normalised ``bbox`` of the page.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.full((200, 200), 255, np.uint8); img[:, 100:] = 0
    >>> measure_region(img, (0.0, 0.0, 0.5, 1.0), dpi=100).ink_ratio
    0.0
    """
    gray = _check_gray(gray)
    return measure(_crop(gray, bbox), dpi)


def _check_grid(rows: int, cols: int) -> None:
    if rows < 1 or cols < 1:
        raise ValueError(f"rows and cols must be >= 1, got rows={rows}, cols={cols}")


def quality_grid(gray: np.ndarray, rows: int = 8, cols: int = 6) -> QualityGrid:
    """Cut the page into ``rows x cols`` tiles and measure each (row-major).

    ``sharpness`` and ``contrast`` are NaN for tiles without ink; ``noise`` and ``ink_ratio`` are
    always measured. The ink threshold is the page's Otsu threshold, so tiles are comparable.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.full((80, 60), 255, np.uint8); img[5:15, 5:25] = 0
    >>> g = quality_grid(img, rows=2, cols=2)
    >>> g.ink_ratio[0] > 0, g.ink_ratio[3]
    (True, 0.0)
    """
    gray = _check_gray(gray)
    _check_grid(rows, cols)
    small, _ = _downsample(gray)
    small_ink, thr = _ink_mask(small, gray)
    return _grid(_pixel_maps(gray, thr, bool(small_ink.any())), gray.shape, rows, cols)
