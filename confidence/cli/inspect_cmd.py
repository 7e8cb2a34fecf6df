"""``extractconf inspect FILE``: what ingestion read from a document, page by page."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from confidence.types import Document, Page

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
    """``{"file", "doc_id", "pages": [page_summary, ...]}``."""
    return {
        "file": doc.path,
        "doc_id": doc.doc_id,
        "pages": [page_summary(p, text=text) for p in doc.pages],
    }


def format_page(page: Page, *, max_lines: int = 0) -> str:
    """Human-readable lines for one page; ``max_lines`` > 0 appends the first lines of text."""
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


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="show what ingestion reads from a document (words, OCR confidence, image quality)",
        description=(
            "Load a PDF or image the way the pipeline does and report, per page: where the words "
            "came from (pdf text layer or ocr), how many, their mean OCR confidence, the rotation "
            "and deskew applied and the image-quality metrics. Use it to check why a document "
            "scores low before blaming the LLM."
        ),
    )
    p.add_argument("file", help="a .pdf, .png, .jpg, .tif/.tiff, .bmp or .webp file")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument(
        "--text", type=int, default=5, metavar="N", help="print the first N lines of text per page"
    )
    p.add_argument("--dpi", type=float, default=300.0, help="render dpi for PDF pages needing OCR")
    p.add_argument("--lang", default="eng", help="tesseract language(s), e.g. eng+fra")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from confidence.documents import load

    try:
        doc = load(args.file, dpi=args.dpi, lang=args.lang)
    except ValueError as e:  # an option out of range; DocumentError is handled by the dispatcher
        print(f"extractconf inspect: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(document_summary(doc, text=args.text > 0), ensure_ascii=False))
        return 0
    print(f"{doc.path}: {len(doc.pages)} page(s), {doc.n_words} words")
    for page in doc.pages:
        print(format_page(page, max_lines=args.text))
    return 0
