"""Tiny labelled datasets with recorded (simulated) runs for the engine and CLI tests.

The documents are real digital PDFs (reportlab) read by the real ingestion; the runs are
RunRecords whose Hunter/Mapper readings are drawn around the gold values with a known error
process (wrong values get low token logprobs and usually a disagreeing Mapper), so a working
engine must find the signal and a broken one cannot.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from confidence.datasets.folder import DatasetWriter
from confidence.llm.base import TokenLogprob
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.schema import Field, Schema

SCHEMA = Schema(
    "mini-invoice",
    (
        Field("invoice_number", "id", "Invoice number"),
        Field("invoice_date", "date", "Date of issue"),
        Field("vendor", "text", "Seller name"),
        Field("total", "amount", "Total amount due"),
        Field("po_number", "id", "Purchase order number"),
    ),
)
_VENDORS = ("Acme Tools Ltd", "Blue River GmbH", "Nordic Paper AB", "Sunrise Foods", "Kappa Labs")


def _gold(rng: random.Random, i: int) -> dict[str, str | None]:
    return {
        "invoice_number": f"INV-{rng.randint(1000, 9999)}",
        "invoice_date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "vendor": rng.choice(_VENDORS),
        "total": f"{rng.randint(10, 9000)}.{rng.randint(0, 99):02d}",
        "po_number": f"PO{rng.randint(10000, 99999)}" if rng.random() < 0.5 else None,
    }


def _pdf(path: Path, gold: dict[str, str | None]) -> None:
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, 770, gold["vendor"] or "")
    c.setFont("Helvetica", 11)
    y = 730
    for label, key in (
        ("Invoice number:", "invoice_number"),
        ("Date:", "invoice_date"),
        ("PO number:", "po_number"),
    ):
        if gold[key] is not None:
            c.drawString(72, y, label)
            c.drawString(200, y, gold[key])
            y -= 18
    c.drawString(72, 600, "Consulting services")
    c.drawString(400, 600, "12.00")
    c.drawString(72, 560, "Total due:")
    c.drawString(400, 560, gold["total"] or "")
    c.save()


def make_dataset(root: Path, n_docs: int = 40, seed: int = 0) -> Path:
    """Write a dataset folder of ``n_docs`` small digital invoices."""
    rng = random.Random(seed)
    tmp = root / "_src"
    tmp.mkdir(parents=True, exist_ok=True)
    out = root / "ds"
    with DatasetWriter(out, SCHEMA) as w:
        for i in range(n_docs):
            gold = _gold(rng, i)
            src = tmp / f"d{i:03d}.pdf"
            _pdf(src, gold)
            w.add(f"d{i:03d}", gold, data=src.read_bytes(), suffix=".pdf")
    return out


def _tokens(value: str, lp: float, rng: random.Random) -> tuple[TokenLogprob, ...]:
    parts = [value[i : i + 3] for i in range(0, len(value), 3)] or [value]
    out = []
    for p in parts:
        v = min(-1e-4, lp + rng.gauss(0, 0.15))
        out.append(TokenLogprob(p, v, ((p, v), ("x", v - 1.0))))
    return tuple(out)


def _wrong(value: str | None, ftype: str, rng: random.Random) -> str:
    if value is None:  # a hallucinated value for an absent field
        return {"id": f"PO{rng.randint(10000, 99999)}"}.get(ftype, "N-123")
    if ftype == "amount":
        return f"{float(value) * rng.choice((0.1, 1.19, 10)):.2f}"
    if ftype == "date":
        return value[:5] + f"{(int(value[5:7]) % 12) + 1:02d}" + value[7:]
    return value[::-1]


def simulate_run(doc_id: str, gold: dict, rng: random.Random, *, logprobs: bool = True):
    """One RunRecord: Hunter right ~75%, wrong values low-logprob and mostly contradicted."""
    h_fields, m_fields, samples = {}, {}, [{}, {}]
    verbal = {}
    for f in SCHEMA.fields:
        g = gold[f.name]
        right = rng.random() < (0.75 if g is not None else 0.35)
        hv = g if right else _wrong(g, f.type, rng)
        if hv is None:
            hv = _wrong(None, f.type, rng)
            right = False
        # logprobs separate right from wrong only partly, as with real models
        lp = (-0.05 if rng.random() < 0.9 else -0.8) if right else rng.choice((-1.2, -0.1))
        h_fields[f.name] = FieldReading(hv, _tokens(hv, lp, rng) if logprobs else None)
        # the Mapper reports what is on the page: gold (or nothing) most of the time
        if rng.random() < 0.85:
            mv = g
        else:
            mv = None if rng.random() < 0.5 else hv
        m_fields[f.name] = FieldReading(mv, None)
        for s in samples:
            s[f.name] = FieldReading(hv if rng.random() < (0.9 if right else 0.5) else "other")
        verbal[f.name] = 95.0 if rng.random() < 0.8 else 60.0
    return RunRecord(
        doc_id,
        CallResult("hunter", h_fields),
        CallResult("mapper", m_fields, mode="pairs"),
        samples=tuple(CallResult("sample", s) for s in samples),
        verbalized=verbal,
        model="simulated",
    )


def make_runs(dataset_dir: Path, path: Path, seed: int = 0, *, logprobs: bool = True) -> Path:
    """Write ``runs.jsonl`` with one simulated RunRecord per labelled document."""
    rng = random.Random(seed + 1)
    with path.open("w", encoding="utf-8") as fh:
        for line in (dataset_dir / "labels.jsonl").read_text().splitlines():
            rec = json.loads(line)
            run = simulate_run(rec["doc_id"], rec["fields"], rng, logprobs=logprobs)
            fh.write(json.dumps(run.to_dict()) + "\n")
    return path
