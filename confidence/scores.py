"""The engine's output: one :class:`FieldScore` per (document, field).

A row of the scored output (DESIGN.md "Scored output"): the reported value and both readings,
the calibrated confidence, the decision with its threshold, reasons, and the row's status.
:data:`SCORED_COLUMNS` is its column order in files (:mod:`confidence.output` writes them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from itertools import repeat
from typing import Any

__all__ = ["FEATURE_PREFIX", "SCORED_COLUMNS", "FieldScore", "field_scores"]


@dataclass(frozen=True)
class FieldScore:
    """The verdict on one field of one document (one row of the scored output).

    ``value`` is the reported value (the Hunter's, else the Mapper's); ``confidence`` the
    calibrated P(correct) (None when the field could not be scored, ``status="error"``);
    ``status`` the document's (:data:`~confidence.readings.DOCUMENT_STATUSES`): ``"ok"``,
    ``"partial"`` (one of the Hunter and the Mapper failed; scored on the other, ``error`` says
    which and why) or ``"error"`` (nothing to score; ``error`` says why);
    ``decision`` ``"accept"`` or ``"review"``; ``threshold`` the field's threshold (None = review
    always) and ``threshold_source`` where it came from (group / field / type / global / none:
    see :meth:`~confidence.calibration.ThresholdSelector.lookup`);
    ``reasons`` short phrases from the feature contributions; ``group`` the document's group
    under the thresholds' grouping (``extractconf tune --groups``; None without one or when the
    document's group cannot be computed), whether or not that group has a threshold of its own.

    Domain check (:mod:`confidence.domain`, when the model keeps a reference sketch, else None):
    ``novelty_p`` the document's conformal p-value against the reference documents (small =
    unlike them), ``out_of_domain`` whether it is below the model's level, ``batch_shift_p``
    the batch's shift p-value (the same on every row of a batch). Fingerprints, for
    ``extractconf monitor``: ``model_sha`` (fusion + calibrator), ``thresholds_sha`` and
    ``llm`` (the model ids of the readings, "+"-joined; "" for third-party values).
    ``features`` (``score --features K``): the K fused features with the largest gain, written
    as ``feature.<name>`` columns, for the top-feature shift of ``extractconf monitor``.

    Review sampling (:mod:`confidence.audit`): ``audit`` is True for an auto-accepted field sent
    to review anyway by ``score --audit-rate`` (its decision is ``review``, its first reason
    says so); ``p_sample`` the probability with which the row was sampled into review (1.0 for
    a field routed to review, the audit rate for an accepted one, audited or not);
    ``audit_rate`` the batch's rate (the smallest ``p_sample`` the design could give).

    Examples
    --------
    >>> s = FieldScore("d1", "total", "amount", "9.00", "9.00", "9.00", 0.98, "accept", 0.9,
    ...                "field", ("Hunter and Mapper agree",))
    >>> FieldScore.from_dict(s.to_dict()) == s
    True
    """

    doc_id: str
    field: str
    field_type: str
    value: str | None
    hunter_value: str | None
    mapper_value: str | None
    confidence: float | None
    decision: str
    threshold: float | None
    threshold_source: str
    reasons: tuple[str, ...] = ()
    status: str = "ok"
    error: str | None = None
    group: str | None = None
    novelty_p: float | None = None
    out_of_domain: bool | None = None
    batch_shift_p: float | None = None
    model_sha: str | None = None
    thresholds_sha: str | None = None
    llm: str | None = None
    audit: bool = False
    p_sample: float | None = None
    audit_rate: float | None = None
    features: Mapping[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "features"}
        d["reasons"] = list(self.reasons)
        d.update({FEATURE_PREFIX + k: v for k, v in (self.features or {}).items()})
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FieldScore:
        kw = {f.name: d.get(f.name) for f in fields(cls) if f.name in d}
        kw["reasons"] = tuple(d.get("reasons") or ())
        feats = {k[len(FEATURE_PREFIX) :]: v for k, v in d.items() if k.startswith(FEATURE_PREFIX)}
        kw["features"] = feats or None
        return cls(**kw)


FEATURE_PREFIX = "feature."
"""Column prefix of the feature values ``score --features`` writes."""
SCORED_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(FieldScore) if f.name != "features")
"""Columns of the scored output, in order (see DESIGN.md "Scored output")."""

_FIELDS = tuple(f.name for f in fields(FieldScore))
_DEFAULTS = {f.name: f.default for f in fields(FieldScore)}


def field_scores(
    columns: Mapping[str, Sequence[Any]], constant: Mapping[str, Any] | None = None
) -> list[FieldScore]:
    """:class:`FieldScore` rows from ``columns`` (name -> one value per row) and ``constant``
    (name -> the value of every row); a name in neither takes its default.

    The rows equal those the constructor makes from the same values; they are built without its
    frozen-dataclass assignment of each attribute (24 calls per row, most of the cost of
    building a large batch), which :class:`FieldScore` needs nothing from: it validates
    nothing (no ``__post_init__``).

    Examples
    --------
    >>> rows = field_scores(
    ...     {"doc_id": ["a", "b"], "value": ["1", None], "confidence": [0.9, None],
    ...      "decision": ["accept", "review"]},
    ...     {"field": "total", "field_type": "amount", "hunter_value": None, "mapper_value": None,
    ...      "threshold": 0.8, "threshold_source": "field"})
    >>> rows[1] == FieldScore(
    ...     "b", "total", "amount", None, None, None, None, "review", 0.8, "field")
    True
    """
    constant = constant or {}
    given = set(columns) | set(constant)
    unknown = given - set(_FIELDS)
    if unknown:
        raise TypeError(f"FieldScore has no attribute(s) {sorted(unknown)}")
    missing = [f.name for f in fields(FieldScore) if f.name not in given and f.default is MISSING]
    if missing:
        raise TypeError(f"no value for {missing}")
    n = len(next(iter(columns.values()))) if columns else 0
    if any(len(c) != n for c in columns.values()):
        raise ValueError("every column needs one value per row")
    values = [
        columns[f] if f in columns else repeat(constant.get(f, _DEFAULTS[f]), n) for f in _FIELDS
    ]
    new = object.__new__
    out = []
    for row_values in zip(*values, strict=True):
        row = new(FieldScore)
        row.__dict__.update(zip(_FIELDS, row_values, strict=True))
        out.append(row)
    return out
