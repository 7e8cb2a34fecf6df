"""DocILE invoices (KILE task) → dataset folder.

Native layout (the rossumai/docile release)::

    SRC/annotations/<docid>.json   {"field_extractions": [{"fieldtype", "text", "bbox", "page"}],
                                    "line_item_extractions": [...], "metadata": {...}}
    SRC/pdfs/<docid>.pdf           the document
    SRC/ocr/<docid>.json           DocILE's OCR (not needed: we run our own ingestion)
    SRC/train.json, val.json, ...  split files: JSON lists of document ids

Every KILE field type becomes a schema field with the same name and a type (see ``KILE_TYPES``);
line items are not converted. DocILE annotates every KILE field present on an annotated document,
so a field type without an extraction is *absent* (null). When a field type has several
extractions their distinct texts are joined with newlines in reading order (page, then top, then
left): a value split over several boxes becomes one value, a value printed twice is kept once.
The ``tax_detail_*`` types describe one row per tax rate (several values of one field) and are
left out unless asked for. ``meta`` keeps DocILE's document type, language, currency and cluster.

Examples
--------
>>> fields_from_annotation({"field_extractions": [
...     {"fieldtype": "vendor_name", "text": "ACME", "bbox": [0.1, 0.1, 0.2, 0.12], "page": 0},
...     {"fieldtype": "vendor_address", "text": "Main St 1", "bbox": [0.1, 0.2, 0.3, 0.22],
...      "page": 0},
...     {"fieldtype": "vendor_address", "text": "Springfield", "bbox": [0.1, 0.23, 0.3, 0.25],
...      "page": 0}]}, ("vendor_name", "vendor_address", "iban"))
{'vendor_name': 'ACME', 'vendor_address': 'Main St 1\\nSpringfield', 'iban': None}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tqdm import tqdm

from confidence.datasets.folder import DatasetWriter, WriteSummary
from confidence.errors import DatasetError
from confidence.schema import Field, Schema

KILE_TYPES: dict[str, str] = {
    "account_num": "id",
    "amount_due": "amount",
    "amount_paid": "amount",
    "amount_total_gross": "amount",
    "amount_total_net": "amount",
    "amount_total_tax": "amount",
    "bank_num": "id",
    "bic": "id",
    "currency_code_amount_due": "currency",
    "customer_billing_address": "address",
    "customer_billing_name": "text",
    "customer_delivery_address": "address",
    "customer_delivery_name": "text",
    "customer_id": "id",
    "customer_order_id": "id",
    "customer_other_address": "address",
    "customer_other_name": "text",
    "customer_registration_id": "id",
    "customer_tax_id": "id",
    "date_due": "date",
    "date_issue": "date",
    "document_id": "id",
    "iban": "iban",
    "order_id": "id",
    "payment_reference": "id",
    "payment_terms": "text",
    "vendor_address": "address",
    "vendor_email": "email",
    "vendor_name": "text",
    "vendor_order_id": "id",
    "vendor_registration_id": "id",
    "vendor_tax_id": "id",
}
"""KILE field type → schema field type."""

TAX_DETAIL_TYPES: dict[str, str] = {
    "tax_detail_gross": "amount",
    "tax_detail_net": "amount",
    "tax_detail_rate": "percent",
    "tax_detail_tax": "amount",
}


def _describe(name: str) -> str:
    words = name.replace("_", " ")
    for short, long in (("num", "number"), ("id", "ID"), ("bic", "BIC"), ("iban", "IBAN")):
        words = " ".join(long if w == short else w for w in words.split())
    return words[0].upper() + words[1:]


def make_schema(fields: tuple[str, ...] | None = None, *, tax_details: bool = False) -> Schema:
    """The DocILE schema: all KILE fields (or the named ones), optionally with tax details."""
    types = {**KILE_TYPES, **(TAX_DETAIL_TYPES if tax_details else {})}
    if fields:
        unknown = [f for f in fields if f not in {**KILE_TYPES, **TAX_DETAIL_TYPES}]
        if unknown:
            raise DatasetError(
                f"not DocILE KILE field types: {', '.join(unknown)}; "
                f"use some of: {', '.join(sorted(KILE_TYPES))}"
            )
        types = {f: {**KILE_TYPES, **TAX_DETAIL_TYPES}[f] for f in fields}
    return Schema("docile-kile", tuple(Field(n, t, _describe(n)) for n, t in types.items()))


def fields_from_annotation(
    annotation: dict[str, Any], names: tuple[str, ...]
) -> dict[str, str | None]:
    """Schema fields from a DocILE annotation object (fields without extraction → None)."""
    extractions = annotation.get("field_extractions")
    if not isinstance(extractions, list):
        raise DatasetError("no 'field_extractions' list; is this a DocILE annotation?")
    by_type: dict[str, list[tuple[int, float, float, str]]] = {}
    for ex in extractions:
        if not isinstance(ex, dict) or ex.get("fieldtype") not in names:
            continue
        text = str(ex.get("text") or "").strip()
        if not text:
            continue
        bbox = ex.get("bbox") or (0.0, 0.0, 0.0, 0.0)
        key = (int(ex.get("page", 0)), round(float(bbox[1]), 3), float(bbox[0]), text)
        by_type.setdefault(ex["fieldtype"], []).append(key)
    out: dict[str, str | None] = {}
    for name in names:
        parts = sorted(by_type.get(name, []))
        texts = list(dict.fromkeys(p[3] for p in parts))
        out[name] = "\n".join(texts) if texts else None
    return out


def read_split(src: str | Path, split: str) -> list[str]:
    """Document ids of a DocILE split file ``SRC/<split>.json``."""
    path = Path(src) / f"{split}.json"
    if not path.is_file():
        found = sorted(p.stem for p in Path(src).glob("*.json"))
        raise DatasetError(
            f"{path}: split file not found; splits here: {', '.join(found) or 'none'}"
        )
    try:
        ids = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not valid JSON ({e.msg})") from None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise DatasetError(f"{path}: expected a JSON list of document ids")
    return ids


def convert(
    src: str | Path,
    out_dir: str | Path,
    *,
    split: str | None = None,
    fields: tuple[str, ...] | None = None,
    tax_details: bool = False,
    limit: int | None = None,
    overwrite: bool = False,
    link: bool = False,
    progress: bool = False,
) -> WriteSummary:
    """Convert DocILE documents (all annotated ones, or those of ``split``) to a dataset folder.

    Documents of a split without an annotation file (DocILE's test split) are skipped.
    """
    src = Path(src)
    ann_dir, pdf_dir = src / "annotations", src / "pdfs"
    if not ann_dir.is_dir():
        raise DatasetError(f"{src}: no annotations/ folder; is this a DocILE folder?")
    schema = make_schema(fields, tax_details=tax_details)
    ids = read_split(src, split) if split else sorted(p.stem for p in ann_dir.glob("*.json"))
    ids = ids[:limit]
    with DatasetWriter(out_dir, schema, overwrite=overwrite, link=link) as w:
        for doc_id in tqdm(ids, desc="docile", unit="doc", disable=not progress):
            ann_path, pdf = ann_dir / f"{doc_id}.json", pdf_dir / f"{doc_id}.pdf"
            if not ann_path.is_file():
                w.skip(doc_id, "no annotation file (unlabelled document)")
                continue
            if not pdf.is_file():
                w.skip(doc_id, f"PDF {pdf} not found")
                continue
            try:
                annotation = json.loads(ann_path.read_text(encoding="utf-8"))
                values = fields_from_annotation(annotation, schema.names)
            except json.JSONDecodeError as e:
                w.skip(doc_id, f"{ann_path}: not valid JSON ({e.msg})")
                continue
            except DatasetError as e:
                w.skip(doc_id, f"{ann_path}: {e}")
                continue
            md = annotation.get("metadata") or {}
            meta = {"source": "docile", **({"split": split} if split else {})}
            for key in ("document_type", "language", "currency", "cluster_id", "page_count"):
                if key in md:
                    meta[key] = md[key]
            w.add(doc_id, values, source=pdf, meta=meta)
    return w.summary()
