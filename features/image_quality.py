"""Image-quality features (``q_*``) of the page holding the reported value and of its surroundings.

Reads the measurements ingestion stored on the page (:attr:`Page.quality`, :attr:`Page.grid`;
the metrics themselves live in :mod:`confidence.documents.quality`). Sharpness (variance of
the Laplacian) spans orders of magnitude, so it enters as ``log1p``. Page-level values come from
the page the value was found on, or the first page when it was not found; local values
(``q_local_*``, the grid tiles the value's box overlaps) are NaN when the value was not found or
the page has no grid. Everything is NaN when ingestion measured nothing.
"""

from __future__ import annotations

import math

from confidence.documents.page_index import Match
from confidence.types import Document

__all__ = ["NAMES", "values"]

NAMES: tuple[str, ...] = (
    "q_sharpness_log",
    "q_contrast",
    "q_brightness",
    "q_noise",
    "q_skew_abs",
    "q_effective_resolution",
    "q_blockiness",
    "q_ink_ratio",
    "q_local_sharpness_log",
    "q_local_contrast",
    "q_local_noise",
    "q_local_ink_ratio",
    "q_local_sharpness_rel",
)
_NAN = math.nan


def _log1p(v: float) -> float:
    return math.log1p(v) if v == v and v > -1 else _NAN


def values(document: Document, match: Match | None) -> list[float]:
    """Feature values in :data:`NAMES` order.

    Examples
    --------
    >>> from confidence.types import Document, Page
    >>> values(Document("d", "d.pdf", ()), None)[0]
    nan
    """
    if not document.pages:
        return [_NAN] * len(NAMES)
    page = document.pages[match.page if match is not None else 0]
    q = page.quality
    if q is None:
        out = [_NAN] * 8
    else:
        out = [
            _log1p(q.sharpness),
            q.contrast,
            q.brightness,
            q.noise,
            abs(q.skew_deg),
            q.effective_resolution,
            q.blockiness,
            q.ink_ratio,
        ]
    if match is None or page.grid is None:
        return [*out, _NAN, _NAN, _NAN, _NAN, _NAN]
    local = page.grid.at(match.bbox)
    sharp = local["sharpness"]
    rel = sharp / q.sharpness if q is not None and q.sharpness > 0 and sharp == sharp else _NAN
    return [
        *out,
        _log1p(sharp),
        local["contrast"],
        local["noise"],
        local["ink_ratio"],
        rel,
    ]
