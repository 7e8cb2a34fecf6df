"""Typed document model shared by every layer.

Bounding boxes
--------------
Every ``bbox`` in extractconf is ``(x0, y0, x1, y1)`` **normalised to 0-1 of the page**, origin at
the **top-left** corner, x to the right, y downwards, after the page was rotated upright.
Multiply by ``Page.width`` / ``Page.height`` to get pixels of the page raster at ``Page.dpi``.

All containers are frozen dataclasses with ``to_dict`` / ``from_dict`` that round-trip through JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

BBox = tuple[float, float, float, float]
"""``(x0, y0, x1, y1)``, normalised 0-1, origin top-left."""

PageSource = Literal["pdf", "ocr"]


def _bbox(value: Any) -> BBox:
    x0, y0, x1, y1 = (float(v) for v in value)
    return (x0, y0, x1, y1)


@dataclass(frozen=True)
class Word:
    """One word on a page.

    Parameters
    ----------
    text : str
        The word as read (pdf text layer or OCR).
    bbox : BBox
        Normalised ``(x0, y0, x1, y1)``, origin top-left.
    ocr_conf : float
        Recognition confidence in 0-1; 1.0 for words from a digital text layer.
    font_size : float or None
        Height of the text in points (1/72 inch): from the PDF, or estimated from the OCR box.
    line_id, block_id : int
        Reading-order line and block the word belongs to (unique within the page).
    alone : str or None
        The word read a second time, cut out of the page and read by itself
        (:mod:`confidence.documents.alone`; ``""`` when that reading found nothing). None when it
        was not read again: words without a digit, and words from a digital text layer.

    Examples
    --------
    >>> w = Word("Total", (0.1, 0.2, 0.2, 0.22), ocr_conf=0.96, font_size=10.0, line_id=3)
    >>> Word.from_dict(w.to_dict()) == w
    True
    >>> v = Word("12.60", (0.3, 0.2, 0.4, 0.22), ocr_conf=0.93, alone="12.50")
    >>> Word.from_dict(v.to_dict()) == v, "alone" in w.to_dict()
    (True, False)
    """

    text: str
    bbox: BBox
    ocr_conf: float = 1.0
    font_size: float | None = None
    line_id: int = 0
    block_id: int = 0
    alone: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bbox"] = list(self.bbox)
        if self.alone is None:
            del d["alone"]  # most words: kept out of caches and JSON output
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Word:
        return cls(
            text=str(d["text"]),
            bbox=_bbox(d["bbox"]),
            ocr_conf=float(d.get("ocr_conf", 1.0)),
            font_size=None if d.get("font_size") is None else float(d["font_size"]),
            line_id=int(d.get("line_id", 0)),
            block_id=int(d.get("block_id", 0)),
            alone=None if d.get("alone") is None else str(d["alone"]),
        )


def _same(a: Any, b: Any) -> bool:
    """Equality of serialised values where NaN equals NaN (tiles without ink hold NaN)."""
    return type(a) is type(b) and _nan_token(a.to_dict()) == _nan_token(b.to_dict())


def _nan_token(v: Any) -> Any:
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, dict):
        return {k: _nan_token(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nan_token(x) for x in v]
    return v


@dataclass(frozen=True, eq=False)
class ImageQuality:
    """Image-quality measurements of a page or of a region of it.

    Parameters
    ----------
    sharpness : float
        Variance of the Laplacian of the grey image (higher = sharper).
    contrast : float
        Standard deviation of grey levels, 0-1 scale.
    brightness : float
        Mean grey level, 0-1 scale.
    noise : float
        Estimated standard deviation of additive noise, 0-1 grey scale.
    skew_deg : float
        Dominant text-line angle in degrees (positive = counter-clockwise), before deskewing.
    dpi : float
        Resolution of the raster the page was analysed at.
    char_height_px : float
        Median character (x-height box) height in pixels; NaN when no text.
    effective_resolution : float
        ``char_height_px / dpi * 72``: median character height in points, as the camera saw it.
    blockiness : float
        JPEG 8x8 blocking artefact strength (block-boundary / in-block gradients; 1 = none).
    ink_ratio : float
        Fraction of dark (ink) pixels after Otsu binarisation.

    Examples
    --------
    >>> q = ImageQuality(120.0, 0.3, 0.9, 0.01, 0.0, 300.0, 20.0, 4.8, 1.0, 0.05)
    >>> ImageQuality.from_dict(q.to_dict()) == q
    True
    """

    sharpness: float
    contrast: float
    brightness: float
    noise: float
    skew_deg: float
    dpi: float
    char_height_px: float
    effective_resolution: float
    blockiness: float
    ink_ratio: float

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    def __hash__(self) -> int:
        return hash(tuple(_nan_token(v) for v in self.to_dict().values()))

    def to_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ImageQuality:
        return cls(**{f.name: float(d[f.name]) for f in fields(cls)})


@dataclass(frozen=True, eq=False)
class QualityGrid:
    """Coarse local image quality: the page cut into ``rows x cols`` tiles.

    Lets features ask "how blurry is the region around this value" without keeping the image.
    Each metric is a row-major tuple of ``rows * cols`` floats (NaN for tiles without ink).

    Examples
    --------
    >>> g = QualityGrid(1, 2, (1.0, 2.0), (0.1, 0.2), (0.0, 0.0), (0.1, 0.0))
    >>> g.at((0.6, 0.1, 0.9, 0.2))["sharpness"]
    2.0
    >>> QualityGrid.from_dict(g.to_dict()) == g
    True
    """

    rows: int
    cols: int
    sharpness: tuple[float, ...]
    contrast: tuple[float, ...]
    noise: tuple[float, ...]
    ink_ratio: tuple[float, ...]

    def at(self, bbox: BBox) -> dict[str, float]:
        """Mean of each metric over the tiles that a normalised bbox overlaps (NaN-ignoring)."""
        import math

        c0 = min(self.cols - 1, max(0, int(bbox[0] * self.cols)))
        c1 = min(self.cols - 1, max(0, int(bbox[2] * self.cols)))
        r0 = min(self.rows - 1, max(0, int(bbox[1] * self.rows)))
        r1 = min(self.rows - 1, max(0, int(bbox[3] * self.rows)))
        idx = [r * self.cols + c for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)]
        out = {}
        for name in ("sharpness", "contrast", "noise", "ink_ratio"):
            vals = [getattr(self, name)[i] for i in idx]
            vals = [v for v in vals if not math.isnan(v)]
            out[name] = sum(vals) / len(vals) if vals else math.nan
        return out

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    def __hash__(self) -> int:
        return hash((self.rows, self.cols))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("sharpness", "contrast", "noise", "ink_ratio"):
            d[k] = [None if v != v else float(v) for v in d[k]]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QualityGrid:
        def tup(v):
            return tuple(float("nan") if x is None else float(x) for x in v)

        return cls(
            rows=int(d["rows"]),
            cols=int(d["cols"]),
            sharpness=tup(d["sharpness"]),
            contrast=tup(d["contrast"]),
            noise=tup(d["noise"]),
            ink_ratio=tup(d["ink_ratio"]),
        )


@dataclass(frozen=True)
class Page:
    """One page, upright, with its words and measured image quality.

    Parameters
    ----------
    number : int
        1-based page number in the file.
    width, height : int
        Size in pixels of the page raster at ``dpi`` (the raster OCR and quality were measured on).
    words : tuple of Word
        In reading order.
    source : {"pdf", "ocr"}
        ``"pdf"`` when words came from a digital text layer, ``"ocr"`` when tesseract read them.
    dpi : float
        Resolution of the raster (the file's own for images, the render resolution for PDFs).
    rotation : int
        Clockwise rotation in degrees (0, 90, 180, 270) applied to make the page upright.
    deskew_deg : float
        Small rotation in degrees applied to straighten text lines before OCR (0 when none).
    quality : ImageQuality or None
        Page-level image quality.
    grid : QualityGrid or None
        Local image quality tiles.
    notes : tuple of str
        What ingestion did or noticed (``"downscaled from 20000x20000"``, ``"no text found"``).
    outline : tuple of four (x, y) or None
        A photographed page's paper outline on the picture as read (fractions, top left, top
        right, bottom right, bottom left), which ingestion flattened to a rectangle before
        turning and deskewing it (:mod:`confidence.documents.perspective`); None otherwise.
    image : numpy.ndarray or None
        The upright grey raster, only when ``load(..., keep_images=True)``; never serialised.

    Examples
    --------
    >>> p = Page(1, 850, 1100, (Word("Hi", (0.1, 0.1, 0.2, 0.12)),), "pdf", 100.0)
    >>> Page.from_dict(p.to_dict()) == p
    True
    """

    number: int
    width: int
    height: int
    words: tuple[Word, ...]
    source: PageSource
    dpi: float
    rotation: int = 0
    deskew_deg: float = 0.0
    quality: ImageQuality | None = None
    grid: QualityGrid | None = None
    notes: tuple[str, ...] = ()
    outline: tuple[tuple[float, float], ...] | None = None
    image: Any = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """Words joined by spaces within a line and newlines between lines."""
        lines: list[list[str]] = []
        last = None
        for w in self.words:
            key = (w.block_id, w.line_id)
            if key != last:
                lines.append([])
                last = key
            lines[-1].append(w.text)
        return "\n".join(" ".join(ln) for ln in lines)

    @property
    def mean_ocr_conf(self) -> float:
        """Mean word confidence (NaN for a page without words)."""
        if not self.words:
            return float("nan")
        return sum(w.ocr_conf for w in self.words) / len(self.words)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "width": self.width,
            "height": self.height,
            "words": [w.to_dict() for w in self.words],
            "source": self.source,
            "dpi": float(self.dpi),
            "rotation": self.rotation,
            "deskew_deg": float(self.deskew_deg),
            "quality": None if self.quality is None else self.quality.to_dict(),
            "grid": None if self.grid is None else self.grid.to_dict(),
            "notes": list(self.notes),
            **({} if self.outline is None else {"outline": [list(c) for c in self.outline]}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Page:
        return cls(
            number=int(d["number"]),
            width=int(d["width"]),
            height=int(d["height"]),
            words=tuple(Word.from_dict(w) for w in d.get("words", [])),
            source=d["source"],
            dpi=float(d["dpi"]),
            rotation=int(d.get("rotation", 0)),
            deskew_deg=float(d.get("deskew_deg", 0.0)),
            quality=None if d.get("quality") is None else ImageQuality.from_dict(d["quality"]),
            grid=None if d.get("grid") is None else QualityGrid.from_dict(d["grid"]),
            notes=tuple(d.get("notes", ())),
            outline=(
                None
                if d.get("outline") is None
                else tuple((float(x), float(y)) for x, y in d["outline"])
            ),
        )


@dataclass(frozen=True)
class Document:
    """A loaded document: its identity and its upright pages.

    Examples
    --------
    >>> doc = Document("inv-1", "inv-1.pdf", ())
    >>> Document.from_dict(doc.to_dict()) == doc
    True
    """

    doc_id: str
    path: str
    pages: tuple[Page, ...]

    @property
    def text(self) -> str:
        """All pages' text, pages separated by a form feed."""
        return "\f".join(p.text for p in self.pages)

    @property
    def n_words(self) -> int:
        return sum(len(p.words) for p in self.pages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "path": self.path,
            "pages": [p.to_dict() for p in self.pages],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Document:
        return cls(
            doc_id=str(d["doc_id"]),
            path=str(d["path"]),
            pages=tuple(Page.from_dict(p) for p in d.get("pages", [])),
        )
