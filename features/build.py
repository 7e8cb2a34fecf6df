"""Feature assembler: one row of floats per (document, field), in :data:`FEATURE_NAMES` order.

:func:`record_rows` is the entry point for recorded runs: run records and a schema in, one
feature row per (document, schema field) out, with the values and identities of each row
(:class:`RecordRows`). :func:`feature_matrix` and :func:`field_features` assemble rows from a
field, its document and the two readings.

Families (one module each, documented in ``docs/features.md``): disagreement (``agree_*``),
logprobs (``lp_*``), arithmetic consistency of each reading (``cons_*``), OCR evidence
(``ocr_*``), image quality (``q_*``), layout (``lay_*``), the field type one-hot (``type_*``),
the Mapper's own probability of its choice (``rd_*``, NaN for LLM-only readings), whether the
value is well formed (``val_*``), what the page prints right above and below a name or an
address (``edge_*``), what the label printed beside the value names (``lbl_*``), whether an
amount adds up with the document's printed amounts
as its role says (``page_sum``) and whether the value reads like a value of its field's kind
(``kind_*``). The field *name* never enters by itself: renaming a field leaves its row unchanged
unless the new name changes what the field stands for (its concept, which ties it to the roles
of ``cons_*`` and ``page_sum`` and the kinds of ``kind_*``).

The *reported value* is the Hunter's when it is present, else the Mapper's, or the Mapper's
alone for records that report it (``meta["reported"] == "mapper"``, the embedded extraction:
:func:`reported_value`); the OCR-page, quality and layout families describe that value.
Per-document work (normalised words, lines, labels, table cells) is done once per
:class:`~confidence.types.Document` object and reused for all its fields.

When a record's document is not given, the features that look at the page (``ocr_*``, ``q_*``,
``lay_*``, ``agree_same_place``, ``agree_place_distance``) are NaN -- *unknown*, not "not found" --
and the model falls back on disagreement, logprob and type features (it is trained with such rows,
see ``ConfidenceEngine(augment=...)``). ``ocr_value_chars`` only needs the value and is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from confidence.documents.instructions import instruction_near
from confidence.documents.normalize import is_empty
from confidence.documents.search import document_index
from confidence.documents.text import fold
from confidence.errors import DatasetError
from confidence.features import (
    block_edges,
    consistency,
    disagreement,
    image_quality,
    label_concept,
    layout,
    logprobs,
    ocr,
    page_arithmetic,
    reader,
    validity,
    value_kinds,
)
from confidence.readings import FieldReading, RunRecord, document_status
from confidence.schema import FIELD_TYPES, Field, Schema
from confidence.types import Document

__all__ = [
    "DOCUMENT_FEATURES",
    "FEATURE_NAMES",
    "LOGPROB_FEATURES",
    "MONOTONE",
    "RecordRows",
    "document_mask",
    "feature_matrix",
    "field_features",
    "pageless_matrix",
    "record_rows",
    "reported_value",
]

_TYPE_NAMES = tuple(f"type_{t}" for t in FIELD_TYPES)
FEATURE_NAMES: tuple[str, ...] = (
    *disagreement.NAMES,
    *logprobs.NAMES,
    *consistency.NAMES,
    *ocr.NAMES,
    *image_quality.NAMES,
    *layout.NAMES,
    *_TYPE_NAMES,
    *reader.NAMES,
    *validity.NAMES,
    *block_edges.NAMES,
    *label_concept.NAMES,
    *page_arithmetic.NAMES,
    *value_kinds.NAMES,
)
"""Every feature, in column order of :func:`feature_matrix`."""

MONOTONE: dict[str, int] = {
    **dict.fromkeys(
        (
            "agree_equal", "agree_similarity", "agree_string_sim", "agree_same_place",
            "lp_h_mean", "lp_h_min", "lp_h_first", "lp_h_margin", "lp_h_top1_rate",
            "lp_m_mean", "lp_m_min", "lp_m_first", "lp_m_margin", "lp_m_top1_rate",
            "ocr_h_score", "ocr_h_conf_mean", "ocr_h_conf_min",
            "ocr_m_score", "ocr_m_conf_mean", "ocr_m_conf_min",
            "ocr_label_conf", "ocr_page_conf_mean", "ocr_alone_agree", "val_valid", "page_sum",
        ),
        1,
    ),
    "ocr_alone_alt": -1,
    **dict.fromkeys(
        ("lp_h_entropy", "lp_m_entropy", "agree_num_reldiff", "agree_date_diff_days",
         "agree_place_distance"),
        -1,
    ),
}  # fmt: skip
"""Features whose effect on P(correct) has a known sign (1 up, -1 down), all else equal: more
agreement, token probability, OCR match and confidence never make a value less trustworthy;
more entropy and a larger Hunter/Mapper gap never make it more. The engine passes this to
:class:`~confidence.fusion.FusionClassifier` as monotone constraints (measured: same
in-domain AUROC, better zero-shot on receipts; ``docs/features.md``)."""

_ONE_HOT = {t: [float(t == u) for u in FIELD_TYPES] for t in FIELD_TYPES}


REPORTED_READINGS = ("hunter", "mapper")
"""Which reading a record reports (``RunRecord.meta["reported"]``; ``"hunter"`` when unset)."""


def reported_value(
    hunter: FieldReading | None, mapper: FieldReading | None, *, prefer: str = "hunter"
) -> str | None:
    """The value reported for a field.

    ``prefer="hunter"``: the Hunter's when present, else the Mapper's, else None.
    ``prefer="mapper"`` (records whose Mapper is the candidate ranker's reading, which measures
    more accurate than the embedded model's Hunter, see ``benchmarks/results/ranker.json``):
    the Mapper's value, None when it found the field absent.

    Examples
    --------
    >>> reported_value(FieldReading(" "), FieldReading("9.00"))
    '9.00'
    >>> reported_value(FieldReading("8.00"), FieldReading("9.00"), prefer="mapper")
    '9.00'
    >>> reported_value(FieldReading("8.00"), None, prefer="mapper") is None
    True
    """
    if prefer not in REPORTED_READINGS:
        raise ValueError(f"prefer={prefer!r}; use one of: {', '.join(REPORTED_READINGS)}")
    if prefer == "mapper":
        return mapper.value if mapper is not None and disagreement.present(mapper.value) else None
    for r in (hunter, mapper):
        if r is not None and disagreement.present(r.value):
            return r.value
    return None


# logprob and consistency columns follow the disagreement ones (computed over whole documents)
_N_BEFORE_LP = len(disagreement.NAMES)


def _row(
    field: Field,
    document: Document,
    hunter: FieldReading | None,
    mapper: FieldReading | None,
    prefer: str = "hunter",
) -> list[float]:
    """Every feature of one row except the logprob and consistency families (batched in
    :func:`_matrix`); the page families describe the reported value (:func:`reported_value`
    with ``prefer``)."""
    index = document_index(document)
    ftype = field.type
    hv = hunter.value if hunter is not None and disagreement.present(hunter.value) else None
    mv = mapper.value if mapper is not None and disagreement.present(mapper.value) else None
    hm = index.find(hv, ftype) if hv is not None else None
    mm = index.find(mv, ftype) if mv is not None else None
    if prefer == "mapper":  # the Mapper's value is reported, absent when it found none
        rv, rm = mv, mm
    else:
        rv, rm = (hv, hm) if hv is not None else (mv, mm)
    label = index.pages[rm.page].label_of(rm) if rm is not None else None
    return [
        *disagreement.values(ftype, hv, mv, hm, mm, mapper.label if mapper is not None else None),
        *ocr.values(index, hv, mv, hm, mm, rv, rm, label, ftype),
        *image_quality.values(document, rm),
        *layout.values(index, rm, label),
        *_ONE_HOT[ftype],
        *reader.values(mapper),
        *validity.values(ftype, rv),
        *block_edges.values(index, rm, ftype),
        *label_concept.values(index, rm, label, field),
    ]


def _where(i: int, row: object) -> str:
    doc = getattr(row[1], "doc_id", "?") if isinstance(row, tuple) and len(row) > 1 else "?"
    name = getattr(row[0], "name", "?") if isinstance(row, tuple) and row else "?"
    return f"feature row {i} (document {doc}, field {name})"


def _matrix(rows: Iterable[tuple]) -> np.ndarray:
    out: list[list[float]] = []
    readings: list[FieldReading | None] = []
    kept: list[tuple] = []
    for i, row in enumerate(rows):
        try:
            field, document, hunter, mapper, *more = row
            _check(field, document, hunter, mapper)
            out.append(_row(field, document, hunter, mapper, _prefer(more)))
        except (DatasetError, TypeError, ValueError) as e:
            raise DatasetError(f"{_where(i, row)}: {e}") from e
        readings += (hunter, mapper)
        kept.append(row)
    if not out:
        return np.empty((0, len(FEATURE_NAMES)), dtype=np.float64)
    try:
        lp = logprobs.token_stats_batch(readings).reshape(len(out), -1)
    except (TypeError, ValueError, AttributeError):
        for i, row in enumerate(kept):  # find the row with malformed tokens, to name it
            try:
                logprobs.token_stats_batch(row[2:4])
            except (TypeError, ValueError, AttributeError) as e:
                raise DatasetError(f"{_where(i, row)}: malformed tokens: {e}") from e
        raise
    rest = np.asarray(out, dtype=np.float64)
    cons = consistency.values_batch(kept)
    reported = [reported_value(r[2], r[3], prefer=_prefer(list(r[4:]))) for r in kept]
    sums = page_arithmetic.values_batch(kept, reported)
    kinds = value_kinds.values_batch([r[0] for r in kept], reported)
    return np.hstack((rest[:, :_N_BEFORE_LP], lp, cons, rest[:, _N_BEFORE_LP:], sums, kinds))


def _prefer(more: list) -> str:
    """The optional fifth element of a row: which reading is reported (default the Hunter)."""
    prefer = more[0] if more else "hunter"
    if prefer not in REPORTED_READINGS or len(more) > 1:
        raise ValueError(f"a row is (field, document, hunter, mapper[, reported]); got {more!r}")
    return prefer


def _check(field: object, document: object, hunter: object, mapper: object) -> None:
    if not isinstance(field, Field):
        raise DatasetError(f"field must be a confidence.schema.Field, got {type(field).__name__}")
    if not isinstance(document, Document):
        raise DatasetError(
            "document must be a confidence.types.Document (use confidence.load_document), "
            f"got {type(document).__name__}"
        )
    for who, r in (("hunter", hunter), ("mapper", mapper)):
        if r is not None and not isinstance(r, FieldReading):
            raise DatasetError(
                f"{who} reading must be a FieldReading or None, got {type(r).__name__}"
            )


def field_features(
    field: Field, document: Document, hunter: FieldReading | None, mapper: FieldReading | None
) -> dict[str, float]:
    """Features of one field of one document, keyed by :data:`FEATURE_NAMES` (NaN = missing).

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> page = Page(1, 850, 1100, (Word("Total:", (0.1, 0.5, 0.2, 0.52), line_id=1),
    ...                            Word("9.00", (0.3, 0.5, 0.4, 0.52), line_id=1)), "pdf", 100.0)
    >>> doc = Document("d1", "d1.pdf", (page,))
    >>> f = field_features(Field("total", "amount"), doc, FieldReading("9.00", None), None)
    >>> f["agree_hunter_only"], f["ocr_h_exact"], f["lay_label_left"], f["lp_h_mean"]
    (1.0, 1.0, 1.0, nan)
    """
    _check(field, document, hunter, mapper)
    row = _matrix([(field, document, hunter, mapper)])[0]
    return dict(zip(FEATURE_NAMES, row.tolist(), strict=True))


def feature_matrix(
    rows: Iterable[tuple[Field, Document, FieldReading | None, FieldReading | None]],
) -> np.ndarray:
    """Stack :func:`field_features` of many rows into a float64 array (NaN = missing).

    A row may carry a fifth element, ``"hunter"`` (default) or ``"mapper"``: which reading is
    reported (:func:`reported_value`); the OCR-page, quality and layout families describe it.

    Rows of one document should share the same :class:`Document` object so its index is built
    once. A malformed row raises :class:`~confidence.errors.DatasetError` naming its position,
    document and field.

    Examples
    --------
    >>> feature_matrix([]).shape == (0, len(FEATURE_NAMES))
    True
    """
    return _matrix(rows)


_PAGE_PREFIXES = ("ocr_", "q_", "lay_", "edge_", "lbl_", "page_")
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

    ``status[i]`` is the document's :func:`~confidence.readings.document_status`: ``"ok"``,
    ``"partial"`` (one reading survived; the row is scored on it) or ``"error"`` (the run failed
    for that document; its row of ``X`` is NaN and must not be scored); ``error[i]`` the reason
    or a note. ``instructions[i]`` says whether instruction-like text (a prompt injection) sits
    near the value: ``"near"``, ``"document"`` (the document has some and the value is not on
    the page) or None (see :func:`~confidence.documents.instructions.instruction_near`); it is
    a routing signal, not a model feature.
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
    instructions: list[str | None]

    def __len__(self) -> int:
        return len(self.doc_ids)


_COL = {n: i for i, n in enumerate(FEATURE_NAMES)}
_AGREE = slice(_COL[disagreement.NAMES[0]], _COL[disagreement.NAMES[-1]] + 1)
_LP = slice(_COL[logprobs.NAMES[0]], _COL[logprobs.NAMES[-1]] + 1)
_CONS = slice(_COL[consistency.NAMES[0]], _COL[consistency.NAMES[-1]] + 1)
_CHARS = _COL["ocr_value_chars"]
_READER = slice(_COL[reader.NAMES[0]], _COL[reader.NAMES[-1]] + 1)
_VALID = slice(_COL[validity.NAMES[0]], _COL[validity.NAMES[-1]] + 1)
_KINDS = slice(_COL[value_kinds.NAMES[0]], _COL[value_kinds.NAMES[-1]] + 1)


def pageless_matrix(rows: list[tuple]) -> np.ndarray:
    """:func:`feature_matrix` for rows without a document, fast.

    Only the families that need no page are computed (disagreement, logprobs, consistency,
    value length, type); everything in :data:`DOCUMENT_FEATURES` is NaN. Equal to
    ``feature_matrix`` on an empty document with those columns blanked (tested), at a fraction
    of the cost.
    """
    hv = _present([None if r[2] is None else r[2].value for r in rows])
    mv = _present([None if r[3] is None else r[3].value for r in rows])
    prefer = [_prefer(list(r[4:])) if len(r) > 4 else "hunter" for r in rows]
    rv = [
        m if p == "mapper" else (h if h is not None else m)
        for h, m, p in zip(hv, mv, prefer, strict=True)
    ]
    return _pageless(rows, hv, mv, rv)


def _present(values: Sequence[str | None]) -> list[str | None]:
    """Each value where it is present (not :func:`~confidence.documents.normalize.is_empty`),
    else None; each distinct value is looked at once."""
    absent = {v for v in set(values) if is_empty(v)}
    return [None if v in absent else v for v in values]


def _each(func, keys: Sequence[tuple]) -> np.ndarray:
    """Rows ``func(*key)`` of every key, computed once per distinct key of the batch (the
    families below are pure functions of their arguments)."""
    index: dict[tuple, int] = {}
    rows = [index.setdefault(k, len(index)) for k in keys]
    return np.array([func(*k) for k in index], dtype=np.float64)[rows]


def _pageless(
    rows: Sequence[tuple],
    hv: Sequence[str | None],
    mv: Sequence[str | None],
    rv: Sequence[str | None],
) -> np.ndarray:
    """:func:`pageless_matrix` from the rows and their present Hunter, Mapper and reported
    values, column family by column family over the whole batch."""
    X = np.full((len(rows), len(FEATURE_NAMES)), np.nan)
    if not rows:
        return X
    fields = [r[0] for r in rows]
    types = [f.type for f in fields]
    mappers = [r[3] for r in rows]
    labels = [None if m is None else m.label for m in mappers]
    X[:, _AGREE] = _each(
        lambda t, h, m, label: disagreement.values(t, h, m, None, None, label),
        list(zip(types, hv, mv, labels, strict=True)),
    )
    X[:, _READER] = reader.values_batch(mappers)
    X[:, _VALID] = _each(validity.values, list(zip(types, rv, strict=True)))
    X[:, _CHARS] = [np.nan if v is None else len(fold(v)) for v in rv]
    # one batched pass over every reading's tokens (Hunter, Mapper interleaved)
    readings = [x for r in rows for x in (r[2], r[3])]
    X[:, _LP] = logprobs.token_stats_batch(readings).reshape(len(rows), -1)
    doc_ids = [getattr(r[1], "doc_id", "") for r in rows]
    X[:, _CONS] = consistency.values_of(fields, doc_ids, hv, mv, rv)
    X[:, _KINDS] = value_kinds.values_batch(fields, rv)
    tarr = np.array(types, dtype=object)
    for t in set(types):
        col = _COL.get(f"type_{t}")
        if col is not None:
            X[:, col] = (tarr == t).astype(float)
    type_cols = [i for n, i in _COL.items() if n.startswith("type_")]
    X[:, type_cols] = np.nan_to_num(X[:, type_cols], nan=0.0)
    return X


_NOT_IN_RUN = "field not in the run; scored as not extracted"


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
    fields = schema.fields
    names = [f.name for f in fields]
    types = [f.type for f in fields]
    k = len(fields)
    recs: list[tuple] = []  # (doc_id, document or None, status, why, reported reading)
    hs: list[FieldReading | None] = []  # every row's Hunter and Mapper readings
    ms: list[FieldReading | None] = []
    for rec in records:
        status, why = document_status(rec)
        prefer = rec.meta.get("reported", "hunter")
        if rec.mapper is None or rec.mapper.status == "error":
            prefer = "hunter"  # no Mapper reading survived: the Hunter's is all there is
        if prefer not in REPORTED_READINGS and k:
            reported_value(None, None, prefer=prefer)  # raises, naming the valid choices
        h, m = rec.hunter, rec.mapper
        hs.extend([h.fields.get(n) for n in names] if h is not None else [None] * k)
        ms.extend([m.fields.get(n) for n in names] if m is not None else [None] * k)
        recs.append((rec.doc_id, documents.get(rec.doc_id), status, why, prefer))
    # the values of the whole batch at once (reported_value, row by row)
    hraw = [None if h is None else h.value for h in hs]
    mraw = [None if m is None else m.value for m in ms]
    hv, mv = _present(hraw), _present(mraw)
    prefer_of = [r[4] for r in recs for _ in range(k)]
    rv = [
        m if p == "mapper" else (h if h is not None else m)
        for h, m, p in zip(hv, mv, prefer_of, strict=True)
    ]
    doc_ids = [r[0] for r in recs for _ in range(k)]
    out = RecordRows(
        np.empty(0), doc_ids, names * len(recs), types * len(recs), rv, hraw, mraw, [], [], []
    )
    todo: list[tuple] = []
    rows_doc_missing: list[bool] = []
    for j, (doc_id, doc, status, why, prefer) in enumerate(recs):
        a, b = j * k, (j + 1) * k
        if status == "error":
            out.status.extend(["error"] * k)
            out.error.extend([why] * k)
            out.instructions.extend([None] * k)
            continue
        values = zip(rv[a:b], hraw[a:b], mraw[a:b], strict=True)
        out.instructions.extend(
            [instruction_near(doc, v, t) for v, t in zip(values, types, strict=True)]
            if doc is not None
            else [None] * k
        )
        out.status.extend([status] * k)
        readings = list(zip(fields, hs[a:b], ms[a:b], strict=True))
        read = [h is not None or m is not None for _, h, m in readings]
        out.error.extend([why or (None if r else _NOT_IN_RUN) for r in read])
        page = doc if doc is not None else _empty_document(doc_id)
        todo.extend([(f, page, h, m, prefer) for f, h, m in readings])
        rows_doc_missing.extend([doc is None] * k)
    ok = [s != "error" for s in out.status]
    if todo and all(rows_doc_missing):  # no document at all: the fast path, on the values above
        Xok = _pageless(todo, *(list(compress(c, ok)) for c in (hv, mv, rv)))
    elif todo:
        miss = np.array(rows_doc_missing, dtype=bool)
        Xok = np.empty((len(todo), len(FEATURE_NAMES)))
        if miss.any():
            Xok[miss] = pageless_matrix([r for r, m in zip(todo, miss, strict=True) if m])
        Xok[~miss] = feature_matrix([r for r, m in zip(todo, miss, strict=True) if not m])
    if todo and len(todo) == len(ok):
        X = Xok  # every row scorable: no copy
    else:
        X = np.full((len(out.doc_ids), len(FEATURE_NAMES)), np.nan)
        if todo:
            X[np.array(ok, dtype=bool)] = Xok
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
        out.instructions,
    )
