"""Feature rows for recorded runs, with or without the ingested documents.

:func:`record_rows` turns run records and a schema into the inputs of the confidence model: one
feature row per (document, schema field), plus the values and identities of each row. When a
record's document is not given, the features that look at the page (``ocr_*``, ``q_*``,
``lay_*``, ``agree_same_place``, ``agree_place_distance``) are NaN — *unknown*, not "not found" —
and the model falls back on disagreement, logprob and type features (it is trained with such rows,
see ``ConfidenceEngine(augment=...)``). ``ocr_value_chars`` only needs the value and is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from confidence.documents.text import fold
from confidence.features import disagreement, logprobs
from confidence.features.build import FEATURE_NAMES, feature_matrix, reported_value
from confidence.readings import RunRecord
from confidence.schema import Schema
from confidence.types import Document

__all__ = [
    "DOCUMENT_FEATURES",
    "LOGPROB_FEATURES",
    "RecordRows",
    "document_mask",
    "pageless_matrix",
    "record_rows",
]

_PAGE_PREFIXES = ("ocr_", "q_", "lay_")
DOCUMENT_FEATURES: tuple[str, ...] = tuple(
    n
    for n in FEATURE_NAMES
    if (n.startswith(_PAGE_PREFIXES) and n != "ocr_value_chars")
    or n in ("agree_same_place", "agree_place_distance")
)
"""Features that need the ingested document (NaN without it)."""

LOGPROB_FEATURES: tuple[str, ...] = tuple(n for n in FEATURE_NAMES if n.startswith("lp_"))
"""Features that need token logprobs (NaN when the provider gives none)."""


def document_mask(names: Sequence[str] = FEATURE_NAMES) -> np.ndarray:
    """Boolean column mask of :data:`DOCUMENT_FEATURES` within ``names``."""
    doc = set(DOCUMENT_FEATURES)
    return np.array([n in doc for n in names], dtype=bool)


@dataclass(frozen=True)
class RecordRows:
    """Feature rows of recorded runs: ``X[i]`` describes ``fields[i]`` of ``doc_ids[i]``.

    ``status[i]`` is ``"ok"`` or ``"error"`` (the run failed for that document; its row of ``X``
    is NaN and must not be scored), ``error[i]`` the reason or a note.
    """

    X: np.ndarray
    doc_ids: list[str]
    fields: list[str]
    field_types: list[str]
    values: list[str | None]
    hunter_values: list[str | None]
    mapper_values: list[str | None]
    status: list[str]
    error: list[str | None]

    def __len__(self) -> int:
        return len(self.doc_ids)


_COL = {n: i for i, n in enumerate(FEATURE_NAMES)}
_AGREE = slice(_COL[disagreement.NAMES[0]], _COL[disagreement.NAMES[-1]] + 1)
_LP = slice(_COL[logprobs.NAMES[0]], _COL[logprobs.NAMES[-1]] + 1)
_CHARS = _COL["ocr_value_chars"]


def pageless_matrix(rows: list[tuple]) -> np.ndarray:
    """:func:`~confidence.features.build.feature_matrix` for rows without a document, fast.

    Only the families that need no page are computed (disagreement, logprobs, value length,
    type); everything in :data:`DOCUMENT_FEATURES` is NaN. Equal to ``feature_matrix`` on an
    empty document with those columns blanked (tested), at a fraction of the cost.
    """
    X = np.full((len(rows), len(FEATURE_NAMES)), np.nan)
    for i, (f, _, h, m) in enumerate(rows):
        hv = h.value if h is not None and disagreement.present(h.value) else None
        mv = m.value if m is not None and disagreement.present(m.value) else None
        label = m.label if m is not None else None
        X[i, _AGREE] = disagreement.values(f.type, hv, mv, None, None, label)
        rv = hv if hv is not None else mv
        if rv is not None:
            X[i, _CHARS] = len(fold(rv))
    # one batched pass over every reading's tokens (Hunter, Mapper interleaved)
    readings = [r for _, _, h, m in rows for r in (h, m)]
    X[:, _LP] = logprobs.token_stats_batch(readings).reshape(len(rows), -1)
    types = np.array([f.type for f, *_ in rows], dtype=object)
    for t in set(types):
        col = _COL.get(f"type_{t}")
        if col is not None:
            X[:, col] = (types == t).astype(float)
    type_cols = [i for n, i in _COL.items() if n.startswith("type_")]
    X[:, type_cols] = np.nan_to_num(X[:, type_cols], nan=0.0)
    return X


def _empty_document(doc_id: str) -> Document:
    return Document(doc_id, "", ())


def record_rows(
    records: Iterable[RunRecord],
    schema: Schema,
    documents: Mapping[str, Document] | None = None,
) -> RecordRows:
    """Build feature rows for every schema field of every record.

    Parameters
    ----------
    records : iterable of RunRecord
    schema : Schema
    documents : mapping doc_id -> Document, optional
        Ingested documents; records without one get NaN page features.

    Examples
    --------
    >>> from confidence.readings import CallResult, FieldReading
    >>> from confidence.schema import Field
    >>> rec = RunRecord("d1", CallResult("hunter", {"total": FieldReading("9.00", None)}), None)
    >>> rows = record_rows([rec], Schema("s", (Field("total", "amount"), Field("date", "date"))))
    >>> rows.fields, rows.values, rows.error[1]
    (['total', 'date'], ['9.00', None], 'field not in the run; scored as not extracted')
    """
    documents = documents or {}
    todo: list[tuple] = []
    rows_doc_missing: list[bool] = []
    out = RecordRows(np.empty(0), [], [], [], [], [], [], [], [])
    for rec in records:
        doc = documents.get(rec.doc_id)
        have_doc = doc is not None
        if doc is None:
            doc = _empty_document(rec.doc_id)
        failed = rec.status == "error" or (
            (rec.hunter is None or rec.hunter.status == "error")
            and (rec.mapper is None or rec.mapper.status == "error")
        )
        for f in schema.fields:
            h = rec.hunter.fields.get(f.name) if rec.hunter is not None else None
            m = rec.mapper.fields.get(f.name) if rec.mapper is not None else None
            out.doc_ids.append(rec.doc_id)
            out.fields.append(f.name)
            out.field_types.append(f.type)
            out.hunter_values.append(None if h is None else h.value)
            out.mapper_values.append(None if m is None else m.value)
            out.values.append(reported_value(h, m))
            if failed:
                out.status.append("error")
                out.error.append(rec.error or "the LLM calls failed for this document")
                continue
            out.status.append("ok")
            out.error.append(None if h is not None or m is not None else _NOT_IN_RUN)
            todo.append((f, doc, h, m))
            rows_doc_missing.append(not have_doc)
    X = np.full((len(out.doc_ids), len(FEATURE_NAMES)), np.nan)
    ok = np.array([s == "ok" for s in out.status], dtype=bool)
    if todo:
        miss = np.array(rows_doc_missing, dtype=bool)
        Xok = np.empty((len(todo), len(FEATURE_NAMES)))
        if miss.any():
            Xok[miss] = pageless_matrix([r for r, m in zip(todo, miss, strict=True) if m])
        if (~miss).any():
            Xok[~miss] = feature_matrix([r for r, m in zip(todo, miss, strict=True) if not m])
        X[ok] = Xok
    return RecordRows(
        X,
        out.doc_ids,
        out.fields,
        out.field_types,
        out.values,
        out.hunter_values,
        out.mapper_values,
        out.status,
        out.error,
    )


_NOT_IN_RUN = "field not in the run; scored as not extracted"
