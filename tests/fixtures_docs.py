"""Builders for test documents: a reportlab invoice whose word positions are known, its raster and
degraded copies (blur, noise, rotation, JPEG, low resolution).

Other test modules import these directly (``from fixtures_docs import make_invoice_pdf``; the
``tests`` folder is on ``sys.path`` through ``conftest.py``) or use the session fixtures in
``conftest.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

# (x in pt from the left, baseline y in pt from the top, font size, text)
DEFAULT_LINES: tuple[tuple[float, float, float, str], ...] = (
    (40, 50, 18, "ACME Supplies Ltd"),
    (40, 72, 10, "12 Harbour Road, Bristol BS1 4QA"),
    (40, 110, 12, "INVOICE"),
    (40, 132, 11, "Invoice Number: INV-2024-0042"),
    (40, 150, 11, "Invoice Date: 15 March 2024"),
    (40, 168, 11, "Due Date: 14 April 2024"),
    (40, 200, 11, "Bill To: Jane Doe"),
    (40, 218, 11, "Northwind Trading, 5 Mill Lane, Leeds"),
    (40, 260, 11, "Description"),
    (300, 260, 11, "Amount"),
    (40, 280, 11, "Printer paper A4 (10 boxes)"),
    (300, 280, 11, "245.00"),
    (40, 298, 11, "Toner cartridge black"),
    (300, 298, 11, "389.50"),
    (40, 316, 11, "Delivery"),
    (300, 316, 11, "15.00"),
    (40, 350, 11, "Subtotal"),
    (300, 350, 11, "649.50"),
    (40, 368, 11, "VAT 20%"),
    (300, 368, 11, "129.90"),
    (40, 392, 13, "Total Due"),
    (300, 392, 13, "779.40 GBP"),
    (40, 440, 9, "Payment within 30 days by bank transfer."),
)
PAGE_SIZE = (420.0, 500.0)  # points; small page keeps OCR fast


@dataclass(frozen=True)
class DrawnWord:
    """A word reportlab drew, with its normalised box (x0, y0, x1, y1), origin top-left."""

    text: str
    bbox: tuple[float, float, float, float]
    font_size: float


@dataclass(frozen=True)
class InvoiceSpec:
    path: Path
    page_size: tuple[float, float]
    words: tuple[DrawnWord, ...]


def make_invoice_pdf(
    path: str | Path,
    *,
    lines: tuple[tuple[float, float, float, str], ...] = DEFAULT_LINES,
    page_size: tuple[float, float] = PAGE_SIZE,
    n_pages: int = 1,
    font: str = "Helvetica",
) -> InvoiceSpec:
    """Draw ``lines`` with reportlab and return where every word went.

    Word boxes span the font's ascent to descent around the baseline, horizontally the string width,
    in normalised page coordinates.
    """
    from reportlab.pdfbase.pdfmetrics import getAscentDescent, stringWidth
    from reportlab.pdfgen import canvas

    path = Path(path)
    width, height = page_size
    c = canvas.Canvas(str(path), pagesize=page_size)
    drawn: list[DrawnWord] = []
    for page in range(n_pages):
        for x, y_top, size, text in lines:
            c.setFont(font, size)
            c.drawString(x, height - y_top, text)
            if page:
                continue
            ascent, descent = getAscentDescent(font, size)
            cursor = x
            space = stringWidth(" ", font, size)
            for word in text.split(" "):
                w = stringWidth(word, font, size)
                drawn.append(
                    DrawnWord(
                        word,
                        (
                            cursor / width,
                            (y_top - ascent) / height,
                            (cursor + w) / width,
                            (y_top - descent) / height,
                        ),
                        size,
                    )
                )
                cursor += w + space
        c.showPage()
    c.save()
    return InvoiceSpec(path, page_size, tuple(drawn))


def render_pdf(path: str | Path, dpi: float = 200.0, page: int = 0) -> np.ndarray:
    """Grey raster of one PDF page at ``dpi``."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        bitmap = pdf[page].render(scale=dpi / 72.0, grayscale=True)
        return np.array(bitmap.to_pil().convert("L"))
    finally:
        pdf.close()


def rotate(gray: np.ndarray, angle_deg: float) -> np.ndarray:
    """Rotate counter-clockwise by ``angle_deg`` (PIL convention), white fill, canvas expanded."""
    return np.array(
        Image.fromarray(gray).rotate(angle_deg, resample=Image.BICUBIC, expand=True, fillcolor=255)
    )


def blur(gray: np.ndarray, radius: float = 2.0) -> np.ndarray:
    return np.array(Image.fromarray(gray).filter(ImageFilter.GaussianBlur(radius)))


def add_noise(gray: np.ndarray, sigma: float = 25.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noisy = gray.astype(np.float64) + rng.normal(0.0, sigma, gray.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def downscale(gray: np.ndarray, factor: float) -> np.ndarray:
    img = Image.fromarray(gray)
    return np.array(
        img.resize((round(img.width * factor), round(img.height * factor)), Image.LANCZOS)
    )


def save_image(gray: np.ndarray, path: str | Path, dpi: float = 200.0, **kwargs) -> Path:
    """Save a grey raster with its resolution (format from the suffix; ``quality=`` for JPEG)."""
    path = Path(path)
    Image.fromarray(gray).save(path, dpi=(dpi, dpi), **kwargs)
    return path
