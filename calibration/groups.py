"""Document groups for group-conditional (Mondrian) thresholds.

A :class:`Grouping` names one piece of document metadata and turns a document into a group label,
the same way when thresholds are tuned (``extractconf tune --groups KEY``) and when a new document
is scored; it is saved inside the thresholds file, so ``score`` resolves groups exactly as
``tune`` did. Keys:

* ``"source"`` -- ``"scan"`` when any page was read by OCR (scan, photo, image-only PDF), else
  ``"digital"`` (every page has a PDF text layer).
* ``"quality"`` -- an image-quality tier of the pages read from their image (OCR), from the
  page measurements (:class:`~confidence.types.ImageQuality`), the worst over the three
  measurements below and over the pages: ``"poor"`` when ``sharpness < 2000`` (variance of the
  Laplacian on the text) or ``noise > 0.005`` or ``blockiness > 1.35`` (strong JPEG blocking),
  ``"fair"`` when ``sharpness < 15000`` or ``noise > 0.001`` or ``blockiness > 1.2``, else
  ``"good"``. A page with a PDF text layer is ``"good"``: its words do not come from the image
  (its render can still show grid-aligned rules as "blockiness"). The cut points are stored with
  the thresholds (``quality_cuts``), so later changes of these defaults do not move the groups of
  a saved thresholds file.
* ``"language"`` -- ``meta["language"]`` of the dataset's ``labels.jsonl`` record.
* ``"meta.KEY"`` -- ``meta[KEY]`` of the ``labels.jsonl`` record (``"meta.vendor"``, ...),
  written as text (JSON for lists and objects).

A document whose group cannot be computed (no ingested pages, no quality measurement, no such
metadata) has group ``None`` and is routed with the thresholds without a group.

Examples
--------
>>> from confidence.types import Document, Page
>>> scan = Document("d", "d.png", (Page(1, 100, 100, (), "ocr", 300.0),))
>>> Grouping("source").group_of(scan)
'scan'
>>> Grouping("meta.vendor").group_of(scan, {"vendor": "acme"})
'acme'
>>> Grouping("language").group_of(None, {}) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confidence.types import Document, ImageQuality

__all__ = ["GROUP_KEYS", "QUALITY_CUTS", "QUALITY_TIERS", "Grouping"]

GROUP_KEYS = ("source", "quality", "language", "meta.KEY")
"""Accepted ``--groups`` keys (``meta.KEY`` with any metadata key)."""

QUALITY_TIERS = ("good", "fair", "poor")
"""Quality tiers, best first."""

QUALITY_CUTS: dict[str, tuple[str, float, float]] = {
    # measurement: (direction, fair if beyond, poor if beyond)
    "sharpness": ("below", 15000.0, 2000.0),
    "noise": ("above", 0.001, 0.005),
    "blockiness": ("above", 1.2, 1.35),
}
"""Default quality-tier cut points (see the module docstring)."""


@dataclass(frozen=True)
class Grouping:
    """How a document's group is computed (see the module docstring for the keys).

    Parameters
    ----------
    key : str
        ``"source"``, ``"quality"``, ``"language"`` or ``"meta.KEY"``.
    quality_cuts : dict, optional
        ``{measurement: (direction, fair_cut, poor_cut)}`` for ``key="quality"``;
        :data:`QUALITY_CUTS` by default.

    Examples
    --------
    >>> g = Grouping("quality")
    >>> Grouping.from_dict(g.to_dict()) == g
    True
    >>> Grouping("vendor")
    Traceback (most recent call last):
    ...
    ValueError: unknown group key 'vendor'; use one of source, quality, language, meta.KEY \
(e.g. meta.vendor)
    """

    key: str
    quality_cuts: Mapping[str, tuple[str, float, float]] = field(
        default_factory=lambda: dict(QUALITY_CUTS)
    )

    def __post_init__(self) -> None:
        k = self.key
        if not (k in ("source", "quality", "language") or (k.startswith("meta.") and len(k) > 5)):
            raise ValueError(
                f"unknown group key {k!r}; use one of {', '.join(GROUP_KEYS)} (e.g. meta.vendor)"
            )

    @property
    def needs_documents(self) -> bool:
        """True when the group comes from the ingested pages (not from labels metadata)."""
        return self.key in ("source", "quality")

    def group_of(
        self, document: Document | None, meta: Mapping[str, Any] | None = None
    ) -> str | None:
        """The group of one document (``None`` when it cannot be computed)."""
        if self.key == "source":
            if document is None or not document.pages:
                return None
            return "scan" if any(p.source != "pdf" for p in document.pages) else "digital"
        if self.key == "quality":
            if document is None or not document.pages:
                return None
            tiers = [QUALITY_TIERS[0] if p.source == "pdf" else self._tier(p.quality)
                     for p in document.pages]  # fmt: skip
            if any(t is None for t in tiers):
                return None
            return max(tiers, key=QUALITY_TIERS.index)
        name = "language" if self.key == "language" else self.key[5:]
        value = (meta or {}).get(name)
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)

    def _tier(self, q: ImageQuality | None) -> str | None:
        if q is None:
            return None
        worst = 0
        for name, (direction, fair, poor) in self.quality_cuts.items():
            v = getattr(q, name)
            if v != v:  # NaN measurement: says nothing
                continue
            sign = -1.0 if direction == "below" else 1.0
            if sign * v > sign * poor:
                worst = 2
            elif sign * v > sign * fair:
                worst = max(worst, 1)
        return QUALITY_TIERS[worst]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "quality_cuts": {k: list(v) for k, v in self.quality_cuts.items()}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Grouping:
        cuts = {k: (str(v[0]), float(v[1]), float(v[2])) for k, v in d["quality_cuts"].items()}
        return cls(str(d["key"]), cuts)
