"""Label records of a dataset folder: one ``labels.jsonl`` line each.

In ``fields`` a ``null`` value means *the field is absent from the document* while a *missing key*
means *the field is not labelled*; ``meta`` is optional provenance kept verbatim. See
:mod:`confidence.datasets.folder` for the whole folder format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confidence.errors import DatasetError

LABELS = "labels.jsonl"
SCHEMA = "schema.json"
FILES = "files"

FORBIDDEN_ID_CHARS = frozenset('/\\:*?"<>|\0')
"""Characters a doc_id cannot hold: it names a file in ``files/``."""


def coerce_value(name: str, v: Any) -> str | None:
    """Coerce one gold value: strings and None as they are, plain numbers to their text."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return str(v)
    raise DatasetError(f"field {name!r} has a {type(v).__name__} value; use a string or null")


@dataclass(frozen=True)
class LabelRecord:
    """One labelled document: a ``labels.jsonl`` line.

    Parameters
    ----------
    doc_id : str
        Unique id of the document within its dataset.
    file : str
        Path of the document, relative to the dataset folder (``files/<doc_id>.pdf``).
    fields : mapping of str to str or None
        Gold values. ``None`` = absent from the document; a missing key = not labelled.
    meta : mapping
        Optional provenance (layout family, degradations, language, source corpus...).

    Examples
    --------
    >>> r = LabelRecord("a", "files/a.png", {"total": "3.50", "iban": None}, {"lang": "en"})
    >>> r.present, r.absent, r.is_labelled("date")
    (('total',), ('iban',), False)
    >>> LabelRecord.from_dict(r.to_dict()) == r
    True
    """

    doc_id: str
    file: str
    fields: Mapping[str, str | None] = field(default_factory=dict, hash=False)
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def labelled(self) -> tuple[str, ...]:
        """Names of the labelled fields (present or absent)."""
        return tuple(self.fields)

    @property
    def present(self) -> tuple[str, ...]:
        return tuple(k for k, v in self.fields.items() if v is not None)

    @property
    def absent(self) -> tuple[str, ...]:
        return tuple(k for k, v in self.fields.items() if v is None)

    def is_labelled(self, name: str) -> bool:
        return name in self.fields

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"doc_id": self.doc_id, "file": self.file, "fields": dict(self.fields)}
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> LabelRecord:
        """Build from a parsed JSON line; raises DatasetError naming what is wrong."""
        if not isinstance(d, dict):
            raise DatasetError(f"expected a JSON object, got {type(d).__name__}")
        doc_id, file, fields, meta = d.get("doc_id"), d.get("file"), d.get("fields"), d.get("meta")
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise DatasetError("'doc_id' must be a non-empty string")
        if not isinstance(file, str) or not file.strip():
            raise DatasetError(f"doc {doc_id!r}: 'file' must be a non-empty string")
        if not isinstance(fields, dict):
            raise DatasetError(f"doc {doc_id!r}: 'fields' must be an object of name -> value|null")
        if meta is not None and not isinstance(meta, dict):
            raise DatasetError(f"doc {doc_id!r}: 'meta' must be an object when given")
        try:
            values = {str(k): coerce_value(str(k), v) for k, v in fields.items()}
        except DatasetError as e:
            raise DatasetError(f"doc {doc_id!r}: {e}") from None
        return cls(doc_id, file, values, dict(meta or {}))


@dataclass(frozen=True)
class Problem:
    """Something a non-strict :meth:`Dataset.open` skipped, and why."""

    line: int | None
    doc_id: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{LABELS} line {self.line}" if self.line is not None else LABELS
        return f"{where}: {self.reason}"
