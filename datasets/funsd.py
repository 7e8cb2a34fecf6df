"""FUNSD scanned forms → dataset folder with one field per question.

Native layout (``training_data/`` and ``testing_data/`` of the release, or one of them)::

    SRC/[training_data|testing_data/]annotations/<name>.json
        {"form": [{"id", "text", "label": question|answer|header|other, "box", "words",
                   "linking": [[from_id, to_id], ...]}]}
    SRC/[...]/images/<name>.png

Mapping, documented because FUNSD has no fixed schema:

* each ``question`` entity gives a field whose **name** is its text normalised by :func:`key_name`
  (lower case, accents and punctuation dropped, words joined by ``_``, at most 48 characters:
  ``"Date of Birth:"`` → ``date_of_birth``);
* its **value** is the text of the ``answer`` entities linked to it (``linking`` pairs in either
  direction), joined with spaces in reading order (top, then left); a question without a linked
  answer is an empty slot of the form: the field is *absent* (null);
* a question text seen twice in one form joins the answers of both;
* the **type** is guessed from the name (``date`` → date, ``address`` → address, amounts/prices
  → amount, numbers/codes/phone → id, otherwise text) by
  :func:`confidence.datasets.generic.guess_type`;
* the schema is the union over the converted forms of names used in at least ``min_docs`` forms;
  a field from another form's questions is *unlabelled* (missing key) in this one.

Examples
--------
>>> key_name("Date of Birth:"), guess_type("date_of_birth"), guess_type("fax_no")
('date_of_birth', 'date', 'id')
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from confidence.datasets.folder import DatasetWriter, WriteSummary
from confidence.datasets.generic import guess_type
from confidence.datasets.images import find_image
from confidence.errors import DatasetError
from confidence.schema import Field, Schema

SPLITS = {"training_data": "train", "testing_data": "test"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
MAX_KEY = 48


def key_name(question: str) -> str:
    """A field name from a question's text (``""`` when nothing usable is left)."""
    text = unicodedata.normalize("NFKD", question).encode("ascii", "ignore").decode()
    text = text.replace("#", " no ")
    words = re.findall(r"[a-z0-9]+", text.lower())
    name = "_".join(words)[:MAX_KEY].strip("_")
    return name


def _reading_order(entity: dict[str, Any]) -> tuple[float, float]:
    box = entity.get("box") or (0, 0, 0, 0)
    return (float(box[1]), float(box[0]))


def fields_from_form(form: list[dict[str, Any]]) -> dict[str, str | None]:
    """Question → linked-answer fields of one FUNSD form (names normalised by :func:`key_name`)."""
    by_id = {e.get("id"): e for e in form if isinstance(e, dict)}
    answers: dict[str, list[dict[str, Any]]] = {}
    for entity in by_id.values():
        if entity.get("label") != "question":
            continue
        name = key_name(str(entity.get("text", "")))
        if not name:
            continue
        linked = {b if a == entity.get("id") else a for a, b in entity.get("linking", [])}
        found = [
            by_id[i]
            for i in linked
            if i in by_id
            and by_id[i].get("label") == "answer"
            and str(by_id[i].get("text", "")).strip()
        ]
        answers.setdefault(name, []).extend(found)
    return {
        name: " ".join(str(a["text"]).strip() for a in sorted(ans, key=_reading_order)) or None
        for name, ans in answers.items()
    }


def _read(path: Path) -> dict[str, str | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("form"), list):
        raise DatasetError(f"{path}: no 'form' list; is this a FUNSD annotation?")
    return fields_from_form(data["form"])


def _parts(src: Path, split: str | None) -> list[tuple[str | None, Path]]:
    if (src / "annotations").is_dir():
        return [(None, src)]
    parts = [(short, src / d) for d, short in SPLITS.items() if (src / d / "annotations").is_dir()]
    if split is not None:
        parts = [p for p in parts if p[0] == split]
    if not parts:
        raise DatasetError(
            f"{src}: no annotations/ folder (or training_data/, testing_data/ with one)"
            f"{f' for split {split!r}' if split else ''}; is this a FUNSD folder?"
        )
    return parts


def convert(
    src: str | Path,
    out_dir: str | Path,
    *,
    split: str | None = None,
    min_docs: int = 1,
    images: str | Path | None = None,
    limit: int | None = None,
    overwrite: bool = False,
    link: bool = False,
    progress: bool = False,
) -> WriteSummary:
    """Convert FUNSD forms; ``split`` is ``"train"`` or ``"test"`` when both are present."""
    if min_docs < 1:
        raise DatasetError(f"min_docs must be >= 1, got {min_docs}")
    src = Path(src)
    docs: list[tuple[str, Path, dict[str, Any]]] = []
    skipped: list[tuple[str, str]] = []
    for split_name, part in _parts(src, split):
        image_dirs = ([Path(images)] if images is not None else []) + [part / "images"]
        for ann in sorted((part / "annotations").glob("*.json")):
            doc_id = f"{split_name}-{ann.stem}" if split_name else ann.stem
            try:
                values = _read(ann)
            except DatasetError as e:
                skipped.append((doc_id, str(e)))
                continue
            image = find_image(ann.stem, image_dirs, IMAGE_SUFFIXES)
            if image is None:
                skipped.append((doc_id, f"no image {ann.stem}.png in {part / 'images'}"))
                continue
            docs.append((doc_id, image, values))
    docs = docs[:limit]
    counts = Counter(name for _, _, values in docs for name in values)
    names = sorted(n for n, c in counts.items() if c >= min_docs)
    if not names:
        raise DatasetError(f"{src}: no question used in at least {min_docs} form(s)")
    schema = Schema(
        "funsd-form",
        tuple(
            Field(n, guess_type(n), f"Answer to the form question '{n.replace('_', ' ')}'")
            for n in names
        ),
    )
    keep = set(names)
    with DatasetWriter(out_dir, schema, overwrite=overwrite, link=link) as w:
        for what, why in skipped:
            w.skip(what, why)
        for doc_id, image, values in tqdm(docs, desc="funsd", unit="doc", disable=not progress):
            fields = {k: v for k, v in values.items() if k in keep}
            w.add(doc_id, fields, source=image, meta={"source": "funsd"})
    return w.summary()
