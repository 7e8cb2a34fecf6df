"""CORD (Consolidated Receipt Dataset, v1/v2) → dataset folder with a receipt-totals schema.

Native layout (the CORD release; optional split folders)::

    SRC/[train|dev|test/]json/<name>.json    {"valid_line": [...], "gt_parse": {...}, "meta": {...}}
    SRC/[train|dev|test/]image/<name>.png    the receipt photo (or .jpg; image/ or images/)

Each JSON may also be a Hugging Face ``cord-v2`` row saved as JSON (``{"ground_truth": "<json>"}``).
Values come from ``gt_parse`` when present, otherwise from ``valid_line`` (the words of the
lines of each category, ``is_key`` words such as "TOTAL" left out, joined with spaces).

Mapping (CORD category → field, all type ``amount``)::

    total.total_price → total_price      sub_total.subtotal_price → subtotal
    sub_total.tax_price → tax            sub_total.service_price → service_charge
    sub_total.discount_price → discount  total.cashprice → cash
    total.changeprice → change           total.creditcardprice → credit_card
    total.emoneyprice → emoney

CORD labels every text element of a receipt, so a category that is not annotated is *absent*
(null). A category annotated with several different values (two tax lines) is ambiguous as a
single gold value: it is left *unlabelled* and named in ``meta["ambiguous"]``.

Examples
--------
>>> fields_from_gt_parse({"total": {"total_price": "60,000"}, "sub_total": {"tax_price": "5"}})
({'total_price': '60,000', 'subtotal': None, 'tax': '5', 'service_charge': None, \
'discount': None, 'cash': None, 'change': None, 'credit_card': None, 'emoney': None}, [])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tqdm import tqdm

from confidence.datasets.folder import DatasetWriter, WriteSummary
from confidence.datasets.images import find_image
from confidence.errors import DatasetError
from confidence.schema import Field, Schema

# field name -> (CORD super-class, CORD sub-class, description)
MAPPING: dict[str, tuple[str, str, str]] = {
    "total_price": ("total", "total_price", "Total amount to pay"),
    "subtotal": ("sub_total", "subtotal_price", "Subtotal before tax, service and discounts"),
    "tax": ("sub_total", "tax_price", "Tax amount"),
    "service_charge": ("sub_total", "service_price", "Service charge"),
    "discount": ("sub_total", "discount_price", "Discount on the whole receipt"),
    "cash": ("total", "cashprice", "Cash handed over by the customer"),
    "change": ("total", "changeprice", "Change given back"),
    "credit_card": ("total", "creditcardprice", "Amount paid by credit card"),
    "emoney": ("total", "emoneyprice", "Amount paid by e-money"),
}
SCHEMA = Schema("cord-receipt", tuple(Field(n, "amount", d) for n, (_, _, d) in MAPPING.items()))
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
SPLITS = ("train", "dev", "valid", "validation", "test")


def _resolve(values: list[str]) -> tuple[str | None, bool]:
    """One gold value from the annotated strings: (value, ambiguous)."""
    distinct = list(dict.fromkeys(v.strip() for v in values if v and v.strip()))
    if not distinct:
        return None, False
    return (distinct[0], False) if len(distinct) == 1 else (None, True)


def _fields(collected: dict[str, list[str]]) -> tuple[dict[str, str | None], list[str]]:
    fields: dict[str, str | None] = {}
    ambiguous: list[str] = []
    for name in MAPPING:
        value, amb = _resolve(collected.get(name, []))
        if amb:
            ambiguous.append(name)
        else:
            fields[name] = value
    return fields, ambiguous


def fields_from_gt_parse(gt: dict[str, Any]) -> tuple[dict[str, str | None], list[str]]:
    """Fields (and the names left unlabelled as ambiguous) from a CORD ``gt_parse`` object."""
    collected: dict[str, list[str]] = {}
    for name, (sup, sub, _) in MAPPING.items():
        groups = gt.get(sup) or []
        for g in groups if isinstance(groups, list) else [groups]:
            v = g.get(sub) if isinstance(g, dict) else None
            for item in v if isinstance(v, list) else [v]:
                if isinstance(item, str | int | float):
                    collected.setdefault(name, []).append(str(item))
    return _fields(collected)


def fields_from_valid_line(lines: list[dict[str, Any]]) -> tuple[dict[str, str | None], list[str]]:
    """Fields from CORD ``valid_line`` annotations (for files without ``gt_parse``)."""
    by_category = {f"{sup}.{sub}": name for name, (sup, sub, _) in MAPPING.items()}
    collected: dict[str, list[str]] = {}
    for line in lines:
        name = by_category.get(str(line.get("category", "")))
        if name is None:
            continue
        words = [w for w in line.get("words", []) if not w.get("is_key")]
        words.sort(key=lambda w: (w.get("row_id", 0), (w.get("quad") or {}).get("x1", 0)))
        text = " ".join(str(w.get("text", "")).strip() for w in words).strip()
        collected.setdefault(name, []).append(text)
    return _fields(collected)


def read_annotation(path: str | Path) -> tuple[dict[str, str | None], list[str]]:
    """Parse one CORD JSON file (raises DatasetError when it has no usable annotation)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
        if isinstance(data, dict) and isinstance(data.get("ground_truth"), str):
            data = json.loads(data["ground_truth"])
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if isinstance(data, dict) and isinstance(data.get("gt_parse"), dict):
        return fields_from_gt_parse(data["gt_parse"])
    if isinstance(data, dict) and isinstance(data.get("valid_line"), list):
        return fields_from_valid_line(data["valid_line"])
    raise DatasetError(f"{path}: neither 'gt_parse' nor 'valid_line' found; is this a CORD file?")


def _parts(src: Path, split: str | None) -> list[tuple[str | None, Path]]:
    """(split name, folder holding json/) pairs found under ``src``."""
    if (src / "json").is_dir():
        return [(None, src)]
    parts = [(s, src / s) for s in SPLITS if (src / s / "json").is_dir()]
    if split is not None:
        parts = [p for p in parts if p[0] == split]
    if not parts:
        which = f" for split {split!r}" if split else ""
        raise DatasetError(
            f"{src}: no json/ folder (or {'/'.join(SPLITS)}/json){which}; is this a CORD folder?"
        )
    return parts


def convert(
    src: str | Path,
    out_dir: str | Path,
    *,
    split: str | None = None,
    images: str | Path | None = None,
    limit: int | None = None,
    overwrite: bool = False,
    link: bool = False,
    progress: bool = False,
) -> WriteSummary:
    """Convert a CORD folder; ids are ``<split>-<name>`` when the folder has split sub-folders."""
    src = Path(src)
    jobs: list[tuple[str, Path, list[Path]]] = []
    for split_name, part in _parts(src, split):
        image_dirs = [Path(images)] if images is not None else []
        image_dirs += [part / d for d in ("image", "images") if (part / d).is_dir()]
        for js in sorted((part / "json").glob("*.json")):
            doc_id = f"{split_name}-{js.stem}" if split_name else js.stem
            jobs.append((doc_id, js, image_dirs))
    jobs = jobs[:limit]
    with DatasetWriter(out_dir, SCHEMA, overwrite=overwrite, link=link) as w:
        for doc_id, js, image_dirs in tqdm(jobs, desc="cord", unit="doc", disable=not progress):
            try:
                fields, ambiguous = read_annotation(js)
            except DatasetError as e:
                w.skip(doc_id, str(e))
                continue
            image = find_image(js.stem, image_dirs, IMAGE_SUFFIXES)
            if image is None:
                w.skip(doc_id, f"no image {js.stem}.png/.jpg beside {js.parent} (use --images DIR)")
                continue
            meta: dict[str, Any] = {"source": "cord"}
            if ambiguous:
                meta["ambiguous"] = ambiguous
            w.add(doc_id, fields, source=image, meta=meta)
    return w.summary()
