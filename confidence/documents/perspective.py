"""Photographed documents: find the paper's outline on its background and flatten it.

A receipt photographed on a table is a bright quadrilateral on a darker background, seen at an
angle: its lines converge, so a row's label and amount sit at different heights and no single
deskew angle straightens the page. Tesseract then splits rows and joins a label with the amount
of the row above (``A PAYER 48,80`` for the tax instead of the total). The outline is found
(:func:`find_outline`) and the paper warped to a rectangle (:func:`flatten`) before OCR.

The outline is looked for only where it can be told apart from a scan's own structure:

* a dark background around bright paper (Otsu's threshold on a blurred, reduced copy; the
  paper's median grey at least :data:`MIN_CONTRAST` above the background's);
* one four-cornered convex shape covering :data:`MIN_AREA` to :data:`MAX_AREA` of the picture,
  seen at an angle: two opposite sides converge by :data:`MIN_CONVERGENCE` or more, or a
  corner is :data:`MIN_SKEW` or more off a right angle (a paper lying flat before the lens only
  needs the deskew every page gets);
* nothing else as bright and a fifth as large beside it (two receipts in one picture are read
  as they lie, both of them);
* background on at least three of its sides: a side lying along the picture's edge is no edge
  of the paper. A scan whose dark header band or scanner lid shadow borders the paper on one
  side has three sides on the picture's edges and is read as it is;
* each of those sides an edge: the grey steps up from background to paper at 80 % of the
  points along it. The border of a patch of scanner noise around a faded print does not.

Measured (``benchmarks/bench_photos.py``, ``docs/ingestion.md``): no receipt of SROIE-dev, no
generated invoice and no synthetic scan of the default model's corpora has such an outline. On
40 synthetic receipts photographed at an angle on a dark table, the candidate ranker reads 157
of 160 fields right after flattening (the outline found on 39), 141 as they lie, and 160 on the
receipts' own PDFs.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

__all__ = [
    "MAX_AREA",
    "MIN_AREA",
    "MIN_CONTRAST",
    "MIN_CONVERGENCE",
    "MIN_SKEW",
    "find_outline",
    "flatten",
]

MIN_AREA = 0.15
"""Smallest share of the picture the paper may cover."""
MAX_AREA = 0.97
"""Largest share: a paper filling the picture is a scan, or a photograph with nothing to cut."""
MIN_CONVERGENCE = 0.5
"""Degrees between a pair of opposite sides: a paper seen less at an angle than this is left as
it is (its rotation alone is deskewed; warping would resample faint print for nothing)."""
MIN_SKEW = 1.5
"""Degrees a corner's angle differs from a right angle: a paper whose opposite sides are
parallel but leans (a parallelogram, which deskew cannot straighten either) is flattened from
this on."""
MIN_CONTRAST = 40.0
"""Grey levels (0-255) between the paper's median and the background's."""
_EDGE = 0.02
"""A corner within this share of the picture's size of an edge lies on it."""
_WORK_SIZE = 800
"""Longest side of the reduced copy the outline is looked for on."""
_SECOND_PAPER = 0.2
"""A second bright shape this large beside the paper (another receipt) leaves the picture as it
is."""
_MIN_STEP_SHARE = 0.8
_STEP_SAMPLES = 24
_STEP_REACH = 0.015
"""Each side off the picture's edge must step from background to paper at this share of
:data:`_STEP_SAMPLES` points along it, compared this share of the picture's size away on
either side."""

Outline = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]


def find_outline(gray: np.ndarray) -> Outline | None:
    """Corners of a photographed paper as fractions of the picture, or None.

    Corners are ``(x, y)`` from the top left, in the order top left, top right, bottom right,
    bottom left.

    Examples
    --------
    >>> photo = np.full((400, 300), 60, np.uint8)  # a dark table
    >>> corners = np.array([[60, 40], [240, 60], [230, 360], [70, 350]], np.int32)
    >>> _ = cv2.fillPoly(photo, [corners], 230)  # a sheet of paper seen at an angle
    >>> [(round(x * 299), round(y * 399)) for x, y in find_outline(photo)]  # in pixels, within 1
    [(61, 40), (240, 61), (229, 360), (70, 349)]
    >>> find_outline(np.full((400, 300), 230, np.uint8)) is None  # a plain scan
    True
    >>> two = photo.copy()
    >>> _ = cv2.rectangle(two, (2, 5), (45, 300), 230, -1)  # a second receipt beside it
    >>> find_outline(two) is None
    True
    >>> banded = np.full((400, 300), 230, np.uint8)
    >>> banded[:60] = 90  # a scan with a dark header band: one side only
    >>> find_outline(banded) is None
    True
    """
    h, w = gray.shape[:2]
    if h < 16 or w < 16:
        return None
    scale = min(1.0, _WORK_SIZE / max(h, w))
    small = (
        cv2.resize(gray, (max(1, round(w * scale)), max(1, round(h * scale))), cv2.INTER_AREA)
        if scale < 1.0
        else gray
    )
    sh, sw = small.shape[:2]
    blur = cv2.GaussianBlur(small, (5, 5), 0)
    _, bright = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    k = max(3, round(min(sh, sw) / 50)) | 1  # close the paper over its own dark print
    bright = cv2.morphologyEx(bright, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    contours, _ = cv2.findContours(bright, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    contours = sorted(contours, key=cv2.contourArea, reverse=True)
    paper = contours[0]
    if not MIN_AREA <= cv2.contourArea(paper) / (sh * sw) <= MAX_AREA:
        return None
    if len(contours) > 1 and cv2.contourArea(contours[1]) >= _SECOND_PAPER * cv2.contourArea(paper):
        return None  # two papers in one picture: flattening one would drop the other
    corners = cv2.approxPolyDP(paper, 0.02 * cv2.arcLength(paper, True), True)
    if len(corners) != 4 or not cv2.isContourConvex(corners):
        return None
    pts = corners.reshape(4, 2).astype(np.float64) / [sw - 1, sh - 1]
    total, diff = pts.sum(axis=1), pts[:, 1] - pts[:, 0]
    ordered = pts[[np.argmin(total), np.argmin(diff), np.argmax(total), np.argmax(diff)]]
    if len({tuple(p) for p in ordered.tolist()}) < 4:
        return None
    size = (sw - 1, sh - 1)
    if _convergence(ordered, size) < MIN_CONVERGENCE and _corner_skew(ordered, size) < MIN_SKEW:
        return None  # a flat paper: deskew straightens it, warping would only resample it
    off_edge = [(a, b) for a, b in zip(ordered, np.roll(ordered, -1, axis=0), strict=True)]
    off_edge = [(a, b) for a, b in off_edge if not _on_edge(a, b)]
    if len(off_edge) < 3:
        return None
    centre = ordered.mean(axis=0)
    if any(_step_share(blur, a, b, centre) < _MIN_STEP_SHARE for a, b in off_edge):
        return None
    mask = np.zeros((sh, sw), np.uint8)
    cv2.fillConvexPoly(mask, corners.reshape(4, 2), 255)
    inside, outside = small[mask > 0], small[mask == 0]
    if outside.size == 0 or float(np.median(inside)) - float(np.median(outside)) < MIN_CONTRAST:
        return None
    return tuple((float(x), float(y)) for x, y in ordered)  # type: ignore[return-value]


def _convergence(pts: np.ndarray, size: tuple[float, float]) -> float:
    """The larger angle (degrees) between opposite sides of the quadrilateral."""
    p = pts * np.asarray(size, dtype=np.float64)

    def angle(a: np.ndarray, b: np.ndarray) -> float:
        return math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]))

    return max(
        abs(angle(p[0], p[1]) - angle(p[3], p[2])), abs(angle(p[0], p[3]) - angle(p[1], p[2]))
    )


def _corner_skew(pts: np.ndarray, size: tuple[float, float]) -> float:
    """The largest difference (degrees) between a corner's angle and a right angle."""
    p = pts * np.asarray(size, dtype=np.float64)
    worst = 0.0
    for i in range(4):
        u, v = p[i - 1] - p[i], p[(i + 1) % 4] - p[i]
        cos = float(np.dot(u, v) / max(float(np.linalg.norm(u) * np.linalg.norm(v)), 1e-9))
        worst = max(worst, abs(math.degrees(math.acos(min(1.0, max(-1.0, cos)))) - 90.0))
    return worst


def _on_edge(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the side from ``a`` to ``b`` (fractions) lies along an edge of the picture."""
    return any(
        (a[axis] <= _EDGE and b[axis] <= _EDGE) or (a[axis] >= 1 - _EDGE and b[axis] >= 1 - _EDGE)
        for axis in (0, 1)
    )


def _step_share(blur: np.ndarray, a: np.ndarray, b: np.ndarray, centre: np.ndarray) -> float:
    """Share of points along side ``a``-``b`` (fractions) where the grey just inside the paper
    is at least half of :data:`MIN_CONTRAST` above the grey just outside: a paper's edge steps
    all along, the border of a noisy patch only here and there."""
    sh, sw = blur.shape[:2]
    size = np.array([sw - 1, sh - 1], dtype=np.float64)
    a, b, centre = a * size, b * size, centre * size
    normal = np.array([a[1] - b[1], b[0] - a[0]])
    normal /= max(float(np.linalg.norm(normal)), 1e-9)
    if float(np.dot(centre - (a + b) / 2, normal)) < 0:
        normal = -normal  # pointing into the paper
    reach = _STEP_REACH * max(sh, sw)
    hits = n = 0
    for t in np.linspace(0.1, 0.9, _STEP_SAMPLES):
        p = a + t * (b - a)
        (xi, yi), (xo, yo) = np.rint(p + reach * normal), np.rint(p - reach * normal)
        if not (0 <= xo < sw and 0 <= yo < sh and 0 <= xi < sw and 0 <= yi < sh):
            continue
        n += 1
        hits += float(blur[int(yi), int(xi)]) - float(blur[int(yo), int(xo)]) >= MIN_CONTRAST / 2
    return hits / n if n else 0.0


def flatten(gray: np.ndarray, outline: Outline) -> np.ndarray:
    """The paper inside ``outline`` warped to an upright rectangle.

    Its sides are the longer of each pair of opposite sides of the outline, in pixels of
    ``gray``, so print keeps about its size.

    Examples
    --------
    >>> photo = np.zeros((400, 300), np.uint8)
    >>> flatten(photo, ((0.2, 0.1), (0.8, 0.15), (0.77, 0.9), (0.23, 0.88))).shape  # left, top
    (311, 181)
    """
    h, w = gray.shape[:2]
    src = np.float32([(x * (w - 1), y * (h - 1)) for x, y in outline])
    tl, tr, br, bl = src
    width = max(2, round(max(np.linalg.norm(tr - tl), np.linalg.norm(br - bl))))
    height = max(2, round(max(np.linalg.norm(bl - tl), np.linalg.norm(br - tr))))
    dst = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    matrix = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(
        gray, matrix, (width, height), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
