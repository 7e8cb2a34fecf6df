"""``extractconf demo``: an offline tour on a generated invoice and a simulated scan of it.

This first version shows ingestion: it writes a digital invoice PDF with reportlab, makes a scanned
copy (rendered, slightly rotated, blurred, noisy, JPEG-compressed), loads both and prints what was
read and how good each image is.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

_LINES = (
    (18, "Lumen Office Supplies GmbH"),
    (10, "Kastanienallee 12, 10435 Berlin"),
    (13, "INVOICE"),
    (11, "Invoice number: LOS-2024-1187"),
    (11, "Invoice date: 2024-05-17"),
    (11, "Customer: Harbor Analytics Ltd"),
    (11, "Printer paper A4, 10 boxes          245.00"),
    (11, "Toner cartridge, black              389.50"),
    (11, "Subtotal                            634.50"),
    (11, "VAT 19%                             120.56"),
    (13, "Total due                    EUR    755.06"),
)


def write_sample_invoice(path: Path) -> Path:
    """Write a one-page invoice PDF with a text layer (reportlab, no network, no fonts needed)."""
    from reportlab.pdfgen import canvas

    width, height = 420.0, 420.0
    c = canvas.Canvas(str(path), pagesize=(width, height))
    y = height - 50
    for size, text in _LINES:
        c.setFont("Courier" if "  " in text else "Helvetica", size)
        c.drawString(36, y, text)
        y -= size + 12
    c.save()
    return path


def make_scan(pdf: Path, out: Path, *, dpi: float = 200.0, seed: int = 0) -> Path:
    """Simulate a mediocre scan of ``pdf``: 1.5 deg rotation, blur, sensor noise, JPEG q=50."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageFilter

    doc = pdfium.PdfDocument(str(pdf))
    try:
        img = doc[0].render(scale=dpi / 72.0, grayscale=True).to_pil().convert("L")
    finally:
        doc.close()
    img = img.rotate(1.5, resample=Image.BICUBIC, expand=True, fillcolor=255)
    img = img.filter(ImageFilter.GaussianBlur(0.9))
    rng = np.random.default_rng(seed)
    noisy = np.asarray(img, dtype=np.float64) + rng.normal(0.0, 10.0, (img.height, img.width))
    Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(
        out, "JPEG", quality=50, dpi=(dpi, dpi)
    )
    return out


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo",
        help="offline tour: generate an invoice and a scan of it, and show what is read",
        description=(
            "Generate a sample invoice PDF and a degraded scan of it, load both with the "
            "ingestion pipeline and print source, word count, OCR confidence, image quality and "
            "the first lines of text. Needs no network and no LLM."
        ),
    )
    p.add_argument("--out", type=Path, help="folder for the generated files (default: a temp dir)")
    p.add_argument("--lines", type=int, default=6, help="lines of text to show per document")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from confidence.cli.inspect_cmd import format_page
    from confidence.documents import load

    out = args.out or Path(tempfile.mkdtemp(prefix="extractconf-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    pdf = write_sample_invoice(out / "invoice.pdf")
    scan = make_scan(pdf, out / "invoice_scan.jpg")
    print(f"demo files in {out}")
    for title, path in (("digital PDF", pdf), ("simulated scan", scan)):
        doc = load(path)
        print(f"\n== {title}: {path.name}")
        for page in doc.pages:
            print(format_page(page, max_lines=args.lines))
    return 0
