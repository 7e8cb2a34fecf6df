"""Feature assembler: one row of floats per (document, field), in :data:`FEATURE_NAMES` order.

Families (one module each, documented in ``docs/features.md``): disagreement (``agree_*``), logprobs
(``lp_*``), OCR evidence (``ocr_*``), image quality (``q_*``), layout (``lay_*``) and the field type
one-hot (``type_*``). The field *name* never enters: renaming a field leaves its row unchanged.

The *reported value* is the Hunter's when it is present, else the Mapper's
(:func:`reported_value`); the OCR-page, quality and layout families describe that value.
Per-document work (normalised words, lines, labels, table cells) is done once per
:class:`~confidence.types.Document` object and reused for all its fields.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from confidence.documents.search import document_index
from confidence.errors import DatasetError
from confidence.features import disagreement, layout, logprobs, ocr, quality_features
from confidence.readings import FieldReading
from confidence.schema import FIELD_TYPES, Field
from confidence.types import Document

__all__ = ["FEATURE_NAMES", "feature_matrix", "field_features", "reported_value"]

_TYPE_NAMES = tuple(f"type_{t}" for t in FIELD_TYPES)
FEATURE_NAMES: tuple[str, ...] = (
    *disagreement.NAMES,
    *logprobs.NAMES,
    *ocr.NAMES,
    *quality_features.NAMES,
    *layout.NAMES,
    *_TYPE_NAMES,
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
            "ocr_label_conf", "ocr_page_conf_mean",
        ),
        1,
    ),
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


def reported_value(hunter: FieldReading | None, mapper: FieldReading | None) -> str | None:
    """The value the features describe: the Hunter's when present, else the Mapper's, else None.

    Examples
    --------
    >>> reported_value(FieldReading(" "), FieldReading("9.00"))
    '9.00'
    """
    for r in (hunter, mapper):
        if r is not None and disagreement.present(r.value):
            return r.value
    return None


_N_BEFORE_LP = len(disagreement.NAMES)  # logprob columns follow the disagreement ones


def _row(
    field: Field, document: Document, hunter: FieldReading | None, mapper: FieldReading | None
) -> list[float]:
    """Every feature of one row except the logprob family (batched in :func:`_matrix`)."""
    index = document_index(document)
    ftype = field.type
    hv = hunter.value if hunter is not None and disagreement.present(hunter.value) else None
    mv = mapper.value if mapper is not None and disagreement.present(mapper.value) else None
    hm = index.find(hv, ftype) if hv is not None else None
    mm = index.find(mv, ftype) if mv is not None else None
    rv, rm = (hv, hm) if hv is not None else (mv, mm)
    label = index.pages[rm.page].label_of(rm) if rm is not None else None
    return [
        *disagreement.values(ftype, hv, mv, hm, mm, mapper.label if mapper is not None else None),
        *ocr.values(index, hv, mv, hm, mm, rv, rm, label),
        *quality_features.values(document, rm),
        *layout.values(index, rm, label),
        *_ONE_HOT[ftype],
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
            field, document, hunter, mapper = row
            _check(field, document, hunter, mapper)
            out.append(_row(field, document, hunter, mapper))
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
                logprobs.token_stats_batch(row[2:])
            except (TypeError, ValueError, AttributeError) as e:
                raise DatasetError(f"{_where(i, row)}: malformed tokens: {e}") from e
        raise
    rest = np.asarray(out, dtype=np.float64)
    return np.hstack((rest[:, :_N_BEFORE_LP], lp, rest[:, _N_BEFORE_LP:]))


def _check(field: object, document: object, hunter: object, mapper: object) -> None:
    if not isinstance(field, Field):
        raise DatasetError(f"field must be a confidence.schema.Field, got {type(field).__name__}")
    if not isinstance(document, Document):
        raise DatasetError(
            f"document must be a confidence.types.Document (use confidence.documents.load), "
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

    Rows of one document should share the same :class:`Document` object so its index is built
    once. A malformed row raises :class:`~confidence.errors.DatasetError` naming its position,
    document and field.

    Examples
    --------
    >>> feature_matrix([]).shape == (0, len(FEATURE_NAMES))
    True
    """
    return _matrix(rows)
