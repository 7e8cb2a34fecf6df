"""Per-schema (Mondrian) calibration of the out-of-domain reference.

One pooled reference mixes documents of different schemas: a model trained on many receipts and
fewer invoices gives invoices low novelty p-values only because they are invoices. The
reference (:class:`~confidence.domain.DomainReference`) therefore keeps its calibration
distances **per schema** (a Mondrian, or category-conditional, conformal p-value): a document is
compared with the held-out reference documents of its own schema, so its p-value is
(super-)uniform in domain whatever the mix of schemas the reference was built on. A schema the
reference has not seen falls back to the pooled distances, and the check says so
(:attr:`~confidence.domain.DomainCheck.reference`).

A schema is identified by the set of its fields (name and type, :func:`schema_key`): the key of a
document is the fingerprint of the fields of its rows (:func:`row_schema_keys`). Renaming a field
makes another schema; reordering fields does not.

Examples
--------
>>> schema_key(["total", "date"], ["amount", "date"]) == schema_key(["date", "total"],
...                                                               ["date", "amount"])
True
>>> row_schema_keys(["a", "a", "b"], ["x", "y", "x"], ["id", "id", "id"]).tolist() == [
...     schema_key(["x", "y"], ["id", "id"])] * 2 + [schema_key(["x"], ["id"])]
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

__all__ = ["POOLED", "SchemaCalibration", "row_schema_keys", "schema_key"]

POOLED = "pooled"
"""The reference label of a document compared with the pooled distances (unseen schema)."""


def schema_key(fields: Sequence[str], field_types: Sequence[str]) -> str:
    """Fingerprint of a field set: 16 hex digits of sha256 over the sorted ``name:type`` pairs.

    Examples
    --------
    >>> schema_key(["total"], ["amount"])
    '1e63f48502eb5480'
    """
    if len(fields) != len(field_types):
        raise ValueError("schema_key needs one type per field")
    pairs = sorted({f"{n}:{t}" for n, t in zip(fields, field_types, strict=True)})
    return _key("\n".join(pairs))


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def row_schema_keys(doc_ids, fields, field_types) -> np.ndarray:
    """Per row, the :func:`schema_key` of its document's fields (all its rows' fields)."""
    doc_ids = list(map(str, doc_ids))
    if not len(doc_ids) == len(fields) == len(field_types):
        raise ValueError("doc_ids, fields and field_types need one entry per row")
    pairs = list(map("{}:{}".format, fields, field_types))
    per_doc: dict[str, set[str]] = {d: set() for d in doc_ids}
    # a document's rows mostly come one after the other: add them run by run
    pos = {d: i for i, d in enumerate(per_doc)}
    codes = np.fromiter(map(pos.__getitem__, doc_ids), dtype=np.intp, count=len(doc_ids))
    cuts = [0, *(np.flatnonzero(np.diff(codes)) + 1).tolist(), len(doc_ids)]
    for a, b in pairwise(cuts):
        if b > a:
            per_doc[doc_ids[a]].update(pairs[a:b])
    memo: dict[frozenset[str], str] = {}  # the documents of a batch share a few field sets
    keys = {}
    for d, found in per_doc.items():
        fs = frozenset(found)
        if fs not in memo:
            memo[fs] = _key("\n".join(sorted(fs)))
        keys[d] = memo[fs]
    return np.array(list(map(keys.__getitem__, doc_ids)), dtype=object)


def _floats(a) -> list[float]:
    return [float(x) for x in np.ravel(a)]


@dataclass(frozen=True)
class SchemaCalibration:
    """The held-out reference distances of the documents of one schema.

    ``distances`` (sorted) are their mean row distances with every column; ``core_distances``
    (sorted, or None when the reference has no optional columns) the same without the optional
    (page) columns. ``n_documents`` = ``len(distances)``: the smallest p-value a document of
    this schema can get is ``1 / (n_documents + 1)``.

    Examples
    --------
    >>> cal = SchemaCalibration("k", np.array([3.0, 1.0, 2.0]))
    >>> cal.distances.tolist(), cal.n_documents
    ([1.0, 2.0, 3.0], 3)
    >>> cal.p_values([2.5, 0.0]).tolist()  # (1 + #{d_ref >= d}) / (n + 1)
    [0.5, 1.0]
    >>> SchemaCalibration.from_dict(cal.to_dict()) == cal
    True
    """

    key: str
    distances: np.ndarray
    core_distances: np.ndarray | None = None

    def __post_init__(self) -> None:
        d = np.sort(np.asarray(self.distances, dtype=float))
        if d.ndim != 1 or len(d) == 0 or not np.isfinite(d).all():
            raise ValueError(f"schema {self.key}: distances must be a non-empty finite vector")
        object.__setattr__(self, "distances", d)
        if self.core_distances is not None:
            c = np.sort(np.asarray(self.core_distances, dtype=float))
            if c.shape != d.shape or not np.isfinite(c).all():
                raise ValueError(f"schema {self.key}: core_distances must match distances")
            object.__setattr__(self, "core_distances", c)

    @property
    def n_documents(self) -> int:
        return len(self.distances)

    def p_values(self, d, *, core: bool = False) -> np.ndarray:
        """Conformal p-values of document distances ``d`` against this schema's distances
        (``core=True``: against the distances without the optional columns)."""
        ref = self.core_distances if core else self.distances
        if ref is None:
            raise ValueError(f"schema {self.key} keeps no distances without the optional columns")
        return conformal_p(np.asarray(d, dtype=float), ref)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SchemaCalibration):
            return NotImplemented
        same_core = (self.core_distances is None) == (other.core_distances is None) and (
            self.core_distances is None or np.array_equal(self.core_distances, other.core_distances)
        )
        return (
            self.key == other.key and np.array_equal(self.distances, other.distances) and same_core
        )

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "distances": _floats(self.distances),
            "core_distances": None if self.core_distances is None else _floats(self.core_distances),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SchemaCalibration:
        core = d.get("core_distances")
        return cls(str(d["key"]), np.asarray(d["distances"], dtype=float),
                   None if core is None else np.asarray(core, dtype=float))  # fmt: skip


def conformal_p(d: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``(1 + #{ref >= d}) / (len(ref) + 1)`` per entry of ``d`` (``ref`` sorted).

    Examples
    --------
    >>> conformal_p(np.array([0.5, 2.0, 9.0]), np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 0.75, 0.25]
    """
    n_far = len(ref) - np.searchsorted(ref, d, side="left")
    return (1 + n_far) / (len(ref) + 1)


def unseen_schema_warning(n_documents: int, fields: Sequence[str]) -> str:
    """The warning of documents whose schema the reference has not seen.

    Examples
    --------
    >>> unseen_schema_warning(3, ["a", "b"]).split(":")[0]
    '3 document(s) have a schema the out-of-domain reference was not built on (fields a, b)'
    """
    return (
        f"{n_documents} document(s) have a schema the out-of-domain reference was not built on "
        f"(fields {', '.join(fields)}): their novelty p-values compare them with the pooled "
        "reference documents of every training schema"
    )
