"""The ``extractconf demo`` tours, offline.

:func:`pipeline_tour` is the main job on the embedded defaults: it generates a few synthetic
invoices (a digital PDF and a degraded scan), ingests them (PDF text layer / tesseract OCR), reads
each with the Hunter and the Mapper on the embedded SmolLM2 model, scores every field with the
shipped default model and prints decisions, confidences and reasons beside the gold values.
:func:`inspect_tour` shows ingestion only (no LLM).
"""

from __future__ import annotations

import tempfile
import time
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


def inspect_tour(out: Path | None = None, *, lines: int = 6) -> int:
    """Ingestion only: a generated invoice PDF and a simulated scan, what is read from each."""
    from confidence.documents import load_document
    from confidence.documents.describe import format_page

    out = out or Path(tempfile.mkdtemp(prefix="extractconf-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    pdf = write_sample_invoice(out / "invoice.pdf")
    scan = make_scan(pdf, out / "invoice_scan.jpg")
    print(f"demo files in {out}")
    for title, path in (("digital PDF", pdf), ("simulated scan", scan)):
        doc = load_document(path)
        print(f"\n== {title}: {path.name}")
        for page in doc.pages:
            print(format_page(page, max_lines=lines))
    return 0


def _short(v, n=22) -> str:
    s = "-" if v is None else str(v)
    return (s if len(s) <= n else s[: n - 1] + "…").ljust(n)


def pipeline_tour(
    *,
    n: int = 2,
    seed: int = 3,
    llm: str = "local",
    model: str | None = None,
    out: str | None = None,
) -> int:
    """Synthetic invoices -> Hunter + Mapper on ``llm`` -> scored table with reasons."""
    from confidence.datasets import matching
    from confidence.datasets.synthetic import SCHEMA, synth_document
    from confidence.documents import load_document
    from confidence.engine import ConfidenceEngine
    from confidence.llm import make_client
    from confidence.output import write_rows

    engine = ConfidenceEngine.load(model)
    print(f"loading the LLM ({llm}) ...", flush=True)
    client = make_client(llm)
    tmp = Path(tempfile.mkdtemp(prefix="extractconf-demo-"))
    all_rows = []
    for i in range(n):
        # alternate digital PDFs and degraded scans
        sd = synth_document(i, seed=seed, scan_ratio=float(i % 2))
        path = tmp / f"{sd.doc_id}{sd.suffix}"
        path.write_bytes(sd.data)
        t = time.perf_counter()
        doc = load_document(path, doc_id=sd.doc_id)
        scores = engine.extract_and_score(doc, SCHEMA, client)
        kind = "scan" if doc.pages and doc.pages[0].source == "ocr" else "digital PDF"
        through = ConfidenceEngine.straight_through(scores)[doc.doc_id]
        print(
            f"\n{sd.doc_id} ({kind}, {sd.meta.get('layout_family', '?')}, "
            f"{time.perf_counter() - t:.0f} s): "
            f"{'straight through' if through else 'needs review'}"
        )
        print(f"  {'field':24} {'value':22} {'gold':22} {'conf':>5} {'decision':8} reasons")
        for s in scores:
            gold = sd.fields.get(s.field)
            ok = matching.is_correct(s.field_type, s.value, gold)
            conf = "-" if s.confidence is None else f"{s.confidence:.2f}"
            mark = "ok " if ok else "BAD"
            print(
                f"  {_short(s.field, 24)} {_short(s.value)} {_short(gold)} {conf:>5} "
                f"{s.decision:8} {mark} {'; '.join(s.reasons)}"
            )
        all_rows += [s.to_dict() for s in scores]
    n_acc = sum(r["decision"] == "accept" for r in all_rows)
    print(f"\n{len(all_rows)} fields: {n_acc} accepted, {len(all_rows) - n_acc} sent to review")
    if out:
        write_rows(out, all_rows)
        print(f"wrote {out}")
    return 0
