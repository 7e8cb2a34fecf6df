"""A folder of documents plus a table of values → dataset folder.

Input::

    SRC/...                      the documents (PDF, PNG, JPEG, TIFF), any sub-folders
    SRC/labels.csv               or labels.jsonl / values.csv / values.jsonl, or --labels FILE

CSV: a ``file`` column (path relative to SRC, or absolute), an optional ``doc_id`` column
(default: the file name without suffix) and one column per field. An empty cell is *absent*
(null) unless ``empty="unlabelled"``; a field column that is missing is simply not a field.

JSONL: one object per line, ``{"file", "doc_id"?, "fields": {...}, "meta"?: {...}}`` with the
dataset-folder meaning (null = absent, missing key = unlabelled), or flat
``{"file": ..., "total": ...}``.

The schema is ``schema`` (a ``schema.json`` path or :class:`Schema`) when given, else inferred:
every field column, typed by ``types`` (``{"total": "amount"}``) or guessed from the name by
:func:`guess_type`.

Examples
--------
>>> guess_type("invoice_date"), guess_type("total_amount"), guess_type("po_number")
('date', 'amount', 'id')
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tqdm import tqdm

from confidence.datasets.folder import DatasetWriter, WriteSummary
from confidence.errors import DatasetError
from confidence.schema import FIELD_TYPES, Field, Schema

LABEL_FILES = ("labels.csv", "labels.jsonl", "values.csv", "values.jsonl")
_RESERVED = {"file", "doc_id", "meta", "fields"}
_TYPE_RULES: tuple[tuple[str, str], ...] = (
    (r"(^|_)(date|dated)(_|$)", "date"),
    (r"(^|_)(address|addr)(_|$)", "address"),
    (r"(^|_)e_?mail(_|$)", "email"),
    (r"(^|_)iban(_|$)", "iban"),
    (r"(^|_)currency(_|$)", "currency"),
    (r"(^|_)(rate|percent|pct)(_|$)", "percent"),
    (r"(^|_)(amount|total|subtotal|price|cost|costs|budget|tax|vat|fee|fees|due)(_|$)", "amount"),
    (r"(^|_)(no|nos|number|num|nr|code|id|ref|reference|zip|phone|fax|tel|bic)(_|$)", "id"),
)


def guess_type(name: str) -> str:
    """A field type guessed from a snake_case field name (first matching rule wins)."""
    name = name.lower()
    for pattern, ftype in _TYPE_RULES:
        if re.search(pattern, name):
            return ftype
    return "text"


def _safe_id(text: str) -> str:
    return re.sub(r'[/\\:*?"<>|\0\s]+', "_", text).strip("_") or "doc"


def read_rows(path: str | Path) -> list[tuple[int, dict[str, Any] | str]]:
    """``(line number, row)`` pairs of a CSV or JSONL values file; a bad row is its error text."""
    path = Path(path)
    rows: list[tuple[int, dict[str, Any] | str]] = []
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames or "file" not in reader.fieldnames:
                raise DatasetError(f"{path}: CSV needs a header with a 'file' column")
            for row in reader:
                if None in row:
                    rows.append((reader.line_num, "more cells than header columns"))
                else:
                    rows.append((reader.line_num, dict(row)))
        return rows
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DatasetError(f"{path}: values file must be .csv or .jsonl")
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            rows.append((n, f"not valid JSON ({e.msg} at column {e.colno})"))
            continue
        rows.append((n, obj if isinstance(obj, dict) else "expected a JSON object"))
    return rows


def _parse(row: dict[str, Any], csv_row: bool, empty: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(fields, meta) of one row."""
    if isinstance(row.get("fields"), dict):
        fields = dict(row["fields"])
    else:
        fields = {k: v for k, v in row.items() if k not in _RESERVED}
    if csv_row:
        fields = {
            k: (v.strip() or None) if isinstance(v, str) else v
            for k, v in fields.items()
            if not (empty == "unlabelled" and isinstance(v, str) and not v.strip())
        }
    meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
    return fields, meta


def _schema(
    schema: Schema | str | Path | None, columns: list[str], types: Mapping[str, str] | None
) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if schema is not None:
        return Schema.load(schema)
    types = dict(types or {})
    bad = {k: t for k, t in types.items() if t not in FIELD_TYPES}
    if bad:
        raise DatasetError(f"unknown field types {bad}; use one of: {', '.join(FIELD_TYPES)}")
    if not columns:
        raise DatasetError("no field columns found besides 'file' and 'doc_id'")
    return Schema(
        "generic",
        tuple(Field(c, types.get(c) or guess_type(c), c.replace("_", " ")) for c in columns),
    )


def convert(
    src: str | Path,
    out_dir: str | Path,
    *,
    labels: str | Path | None = None,
    schema: Schema | str | Path | None = None,
    types: Mapping[str, str] | None = None,
    empty: str = "absent",
    limit: int | None = None,
    overwrite: bool = False,
    link: bool = False,
    progress: bool = False,
) -> WriteSummary:
    """Convert a folder of documents and a values table; bad rows are skipped and reported."""
    src = Path(src)
    if not src.is_dir():
        raise DatasetError(f"{src}: documents folder not found")
    if empty not in ("absent", "unlabelled"):
        raise DatasetError(f"empty must be 'absent' or 'unlabelled', got {empty!r}")
    if labels is None:
        labels = next((src / n for n in LABEL_FILES if (src / n).is_file()), None)
        if labels is None:
            raise DatasetError(
                f"{src}: no {', '.join(LABEL_FILES)}; pass the values file (--labels)"
            )
    labels = Path(labels)
    if not labels.is_file():
        raise DatasetError(f"{labels}: values file not found")
    csv_rows = labels.suffix.lower() == ".csv"
    rows = read_rows(labels)[:limit]
    parsed = [(n, *_parse(r, csv_rows, empty), r) for n, r in rows if isinstance(r, dict)]
    columns = list(dict.fromkeys(k for _, fields, _, _ in parsed for k in fields))
    schema = _schema(schema, columns, types)
    seen: set[str] = set()
    with DatasetWriter(out_dir, schema, overwrite=overwrite, link=link) as w:
        for n, row in rows:
            if isinstance(row, str):
                w.skip(f"{labels.name} line {n}", row)
        for n, fields, meta, row in tqdm(parsed, desc="generic", unit="doc", disable=not progress):
            where = f"{labels.name} line {n}"
            file = row.get("file")
            if not isinstance(file, str) or not file.strip():
                w.skip(where, "no 'file' value")
                continue
            path = Path(file) if Path(file).is_absolute() else src / file
            doc_id = str(row.get("doc_id") or "").strip() or _safe_id(Path(file).stem)
            if not path.is_file():
                w.skip(where, f"document {str(path)!r} not found")
            elif doc_id in seen:
                w.skip(
                    where, f"duplicate doc_id {doc_id!r}; add a doc_id column to tell them apart"
                )
            elif unknown := [k for k in fields if k not in schema]:
                w.skip(where, f"fields not in the schema: {', '.join(unknown)}")
            else:
                try:
                    w.add(doc_id, fields, source=path, meta={"source": "generic", **meta})
                except DatasetError as e:
                    w.skip(where, str(e))
                    continue
                seen.add(doc_id)
    return w.summary()
