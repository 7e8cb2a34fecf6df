"""Plain-text and JSON descriptions of an ingested document, page by page.

What ``extractconf inspect`` prints and ``extractconf demo --inspect-only`` shows: where the
words came from, how many, their mean OCR confidence, the rotation and deskew applied and the
image-quality measurements of each page.
"""

from __future__ import annotations

import math
from typing import Any

from confidence.types import Document, Page

__all__ = ["document_summary", "format_page", "page_summary"]

_QUALITY_SHOWN = (
    ("sharpness", "{:.0f}"),
    ("contrast", "{:.3f}"),
    ("brightness", "{:.3f}"),
    ("noise", "{:.4f}"),
    ("skew_deg", "{:+.2f}"),
    ("dpi", "{:.0f}"),
    ("effective_resolution", "{:.1f}pt"),
    ("blockiness", "{:.2f}"),
    ("ink_ratio", "{:.3f}"),
)


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def page_summary(page: Page, *, text: bool = False) -> dict[str, Any]:
    """The JSON-able summary of one page printed by ``inspect --json`` (NaN becomes null)."""
    out: dict[str, Any] = {
        "number": page.number,
        "source": page.source,
        "n_words": len(page.words),
        "mean_ocr_conf": _num(round(page.mean_ocr_conf, 4)),
        "width": page.width,
        "height": page.height,
        "rotation": page.rotation,
        "deskew_deg": page.deskew_deg,
        "notes": list(page.notes),
        "quality": None
        if page.quality is None
        else {k: _num(v) for k, v in page.quality.to_dict().items()},
    }
    if text:
        out["text"] = page.text
    return out


def document_summary(doc: Document, *, text: bool = False) -> dict[str, Any]:
    """``{"file", "doc_id", "pages": [page_summary, ...]}``, what ``inspect --json`` prints.

    Examples
    --------
    >>> document_summary(Document("d1", "d1.pdf", ()))
    {'file': 'd1.pdf', 'doc_id': 'd1', 'pages': []}
    """
    return {
        "file": doc.path,
        "doc_id": doc.doc_id,
        "pages": [page_summary(p, text=text) for p in doc.pages],
    }


def format_page(page: Page, *, max_lines: int = 0) -> str:
    """Human-readable lines for one page; ``max_lines`` > 0 appends the first lines of text.

    Examples
    --------
    >>> from confidence.types import Word
    >>> page = Page(1, 850, 1100, (Word("Total", (0.1, 0.5, 0.2, 0.52), line_id=1),), "pdf", 100.0)
    >>> print(format_page(page, max_lines=1))
    page 1: source=pdf  words=1  mean_conf=1.000  size=850x1100px  rotation=0  deskew=+0.00
      | Total
    """
    conf = page.mean_ocr_conf
    head = (
        f"page {page.number}: source={page.source}  words={len(page.words)}  "
        f"mean_conf={'-' if math.isnan(conf) else f'{conf:.3f}'}  "
        f"size={page.width}x{page.height}px  rotation={page.rotation}  "
        f"deskew={page.deskew_deg:+.2f}"
    )
    lines = [head]
    if page.quality is not None:
        q = page.quality.to_dict()
        parts = [
            f"{k}={'-' if math.isnan(q[k]) else fmt.format(q[k])}" for k, fmt in _QUALITY_SHOWN
        ]
        lines.append("  quality: " + "  ".join(parts))
    for note in page.notes:
        lines.append(f"  note: {note}")
    if max_lines > 0:
        text_lines = [ln for ln in page.text.split("\n") if ln.strip()]
        for ln in text_lines[:max_lines]:
            lines.append(f"  | {ln}")
        if len(text_lines) > max_lines:
            lines.append(f"  | ... ({len(text_lines) - max_lines} more lines)")
    return "\n".join(lines)
