"""ICDAR 2019 SROIE scanned receipts → dataset folder.

Native layout (task 3 of the competition)::

    SRC/key/<id>.txt     entities JSON: {"company", "date", "address", "total"}   (or entities/)
    SRC/box/<id>.txt     OCR lines: x1,y1,x2,y2,x3,y3,x4,y4,text                   (optional)
    SRC/img/<id>.jpg     the scan (or images/, SRC itself, or --images DIR)

Values are kept exactly as labelled (outer whitespace stripped). A key missing from a key file
is left *unlabelled*; an empty value is *absent* (null). ``meta`` records the source corpus and,
when a box file exists, its number of OCR lines.

Examples
--------
>>> SCHEMA.names
('company', 'date', 'address', 'total')
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm

from confidence.datasets.folder import DatasetWriter, WriteSummary
from confidence.errors import DatasetError
from confidence.schema import Field, Schema

SCHEMA = Schema(
    "sroie-receipt",
    (
        Field("company", "text", "Name of the company or shop that issued the receipt"),
        Field("date", "date", "Date of the purchase printed on the receipt"),
        Field("address", "address", "Postal address of the issuing company"),
        Field("total", "amount", "Total amount paid, as printed (without currency)"),
    ),
)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff")


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:  # a few SROIE files are Latin-1
        return raw.decode("latin-1")


def read_key(path: str | Path) -> dict[str, str | None]:
    """Parse one ``key/<id>.txt`` into schema fields (raises DatasetError when malformed)."""
    path = Path(path)
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected a JSON object of entities")
    out: dict[str, str | None] = {}
    for name in SCHEMA.names:
        if name in data:
            value = str(data[name]).strip() if data[name] is not None else ""
            out[name] = value or None
    return out


def count_box_lines(path: str | Path) -> int:
    """Number of well-formed ``x1,y1,...,y4,text`` lines in a SROIE box file."""
    n = 0
    for line in _read_text(Path(path)).splitlines():
        parts = line.split(",", 8)
        if len(parts) == 9 and all(p.strip().lstrip("-").isdigit() for p in parts[:8]):
            n += 1
    return n


def _find_dir(src: Path, *names: str) -> Path | None:
    return next((src / n for n in names if (src / n).is_dir()), None)


def _find_image(doc_id: str, dirs: list[Path]) -> Path | None:
    for d in dirs:
        for suffix in IMAGE_SUFFIXES:
            for cand in (d / f"{doc_id}{suffix}", d / f"{doc_id}{suffix.upper()}"):
                if cand.is_file():
                    return cand
    return None


def convert(
    src: str | Path,
    out_dir: str | Path,
    *,
    images: str | Path | None = None,
    limit: int | None = None,
    overwrite: bool = False,
    link: bool = False,
    progress: bool = False,
) -> WriteSummary:
    """Convert a SROIE folder; documents without a readable key or an image are skipped.

    Parameters
    ----------
    src : path
        Folder with ``key/`` (or ``entities/``), optional ``box/`` and ``img/``.
    out_dir : path
        New dataset folder.
    images : path, optional
        Folder of ``<id>.jpg`` scans when they are not in ``src/img``.
    limit : int, optional
        Convert at most this many documents (sorted by id).
    """
    src = Path(src)
    keys = _find_dir(src, "key", "entities")
    if keys is None:
        raise DatasetError(f"{src}: no key/ (or entities/) folder; is this a SROIE folder?")
    boxes = _find_dir(src, "box")
    image_dirs = [Path(images)] if images is not None else []
    if images is not None and not image_dirs[0].is_dir():
        raise DatasetError(f"{images}: images folder not found")
    image_dirs += [d for d in (_find_dir(src, "img", "images"), src) if d is not None]
    key_files = sorted(keys.glob("*.txt"))[:limit]
    if not key_files:
        raise DatasetError(f"{keys}: no <id>.txt key files")
    with DatasetWriter(out_dir, SCHEMA, overwrite=overwrite, link=link) as w:
        for key in tqdm(key_files, desc="sroie", unit="doc", disable=not progress):
            doc_id = key.stem
            try:
                fields = read_key(key)
            except DatasetError as e:
                w.skip(doc_id, str(e))
                continue
            image = _find_image(doc_id, image_dirs)
            if image is None:
                where = ", ".join(str(d) for d in image_dirs)
                w.skip(doc_id, f"no image {doc_id}.jpg/.png in {where} (use --images DIR)")
                continue
            meta: dict[str, object] = {"source": "sroie"}
            if boxes is not None and (boxes / key.name).is_file():
                meta["n_box_lines"] = count_box_lines(boxes / key.name)
            w.add(doc_id, fields, source=image, meta=meta)
    return w.summary()
