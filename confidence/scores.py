"""The engine's output: one :class:`FieldScore` per (document, field).

A row of the scored output (DESIGN.md "Scored output"): the reported value and both readings,
the calibrated confidence, the decision with its threshold, reasons, and the row's status.
:data:`SCORED_COLUMNS` is its column order in files (:mod:`confidence.output` writes them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["SCORED_COLUMNS", "FieldScore"]


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

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["reasons"] = list(self.reasons)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FieldScore:
        kw = {f.name: d.get(f.name) for f in fields(cls) if f.name in d}
        kw["reasons"] = tuple(d.get("reasons") or ())
        return cls(**kw)


SCORED_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(FieldScore))
"""Columns of the scored output, in order (see DESIGN.md "Scored output")."""
