"""``extractconf inspect FILE``: what ingestion read from a document, page by page."""

from __future__ import annotations

import argparse
import json
import sys

from confidence.cli._engine_common import add_read_once_arg, load_options
from confidence.documents.describe import document_summary, format_page


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="show what ingestion reads from a document (words, OCR confidence, image quality)",
        description=(
            "Load a PDF or image the way the pipeline does and report, per page: where the words\n"
            "came from (pdf text layer or ocr), how many, their mean OCR confidence, the rotation\n"
            "and deskew applied and the image-quality metrics. Use it to check why a document\n"
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
    add_read_once_arg(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from confidence.documents import load_document

    try:
        doc = load_document(args.file, dpi=args.dpi, lang=args.lang, **load_options(args))
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
