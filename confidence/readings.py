"""What the Hunter and Mapper calls read, as recorded in a runs file.

A :class:`FieldReading` is one call's value for one field with the completion tokens that spell it;
a :class:`CallResult` is one call over one document; a :class:`RunRecord` is one line of
``runs.jsonl``: everything downstream of the LLM can be recomputed from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from confidence.llm.base import Completion, TokenLogprob

CallKind = Literal["hunter", "mapper", "sample"]

DOCUMENT_STATUSES: tuple[str, ...] = ("ok", "partial", "error")
"""Status of a document (a :class:`RunRecord`) and of its scored rows: ``"ok"`` every reading
was made; ``"partial"`` exactly one of the Hunter and the Mapper survived (the rows are scored
on it); ``"error"`` no reading survived (the rows carry the reason and no confidence)."""


@dataclass(frozen=True)
class FieldReading:
    """One call's reading of one field.

    Parameters
    ----------
    value : str or None
        The extracted value as text, ``None`` when the call reported the field absent.
    tokens : tuple of TokenLogprob or None
        The completion tokens that spell ``value`` (aligned by character offsets); ``None`` when the
        provider gave no logprobs, empty when the value is ``None``.
    raw : str or None
        The raw text the value came from (the document's line or label/value pair for the Mapper).
    label : str or None
        The document's own label the value sat next to (Mapper), if any.
    line : int or None
        Index of the document line (reading order) the value was taken from, if known.
    n_candidates : int or None
        Number of candidates the call could choose from in grounded mode.
    prob : float or None
        The reader's own probability that this choice is right, where the reader gives one: the
        candidate ranker's softmax over the field's candidates (the "absent" one included) for the
        value it chose, or for "absent" when ``value`` is None. ``None`` for LLM-only readings.

    Examples
    --------
    >>> r = FieldReading("12.50", (TokenLogprob("12", -0.1), TokenLogprob(".50", -0.3)))
    >>> FieldReading.from_dict(r.to_dict()) == r
    True
    >>> FieldReading.from_dict(FieldReading(None, prob=0.25).to_dict()).prob
    0.25
    """

    value: str | None
    tokens: tuple[TokenLogprob, ...] | None = ()
    raw: str | None = None
    label: str | None = None
    line: int | None = None
    n_candidates: int | None = None
    prob: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "value": self.value,
            "tokens": None if self.tokens is None else [t.to_dict() for t in self.tokens],
            "raw": self.raw,
            "label": self.label,
            "line": self.line,
            "n_candidates": self.n_candidates,
        }
        if self.prob is not None:  # records of readers without one stay as they were
            d["prob"] = self.prob
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FieldReading:
        toks = d.get("tokens", [])
        return cls(
            value=None if d.get("value") is None else str(d["value"]),
            tokens=None if toks is None else tuple(TokenLogprob.from_dict(t) for t in toks),
            raw=d.get("raw"),
            label=d.get("label"),
            line=d.get("line"),
            n_candidates=d.get("n_candidates"),
            prob=None if d.get("prob") is None else float(d["prob"]),
        )


@dataclass(frozen=True)
class CallResult:
    """One call (Hunter, Mapper or an extra sample) over one document.

    Parameters
    ----------
    kind : {"hunter", "mapper", "sample"}
    fields : dict
        Field name -> :class:`FieldReading`, for every schema field the call reported on.
    mode : str
        How the call was made: ``"free"`` (free-form JSON) or ``"grounded"`` (values constrained to
        candidates copied from the document), or a Mapper strategy name.
    completions : tuple of Completion
        The raw completions behind the readings (several for per-line Mapper strategies).
    n_calls : int
        LLM calls made.
    status, error : str
        ``"ok"`` or ``"error"`` and the reason.

    Examples
    --------
    >>> c = CallResult("hunter", {"total": FieldReading("9.00")}, mode="free")
    >>> CallResult.from_dict(c.to_dict()) == c
    True
    """

    kind: CallKind
    fields: dict[str, FieldReading]
    mode: str = "free"
    completions: tuple[Completion, ...] = ()
    n_calls: int = 1
    status: str = "ok"
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "fields": {k: v.to_dict() for k, v in self.fields.items()},
            "mode": self.mode,
            "completions": [c.to_dict() for c in self.completions],
            "n_calls": self.n_calls,
            "status": self.status,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallResult:
        return cls(
            kind=d["kind"],
            fields={k: FieldReading.from_dict(v) for k, v in (d.get("fields") or {}).items()},
            mode=str(d.get("mode", "free")),
            completions=tuple(Completion.from_dict(c) for c in d.get("completions", ())),
            n_calls=int(d.get("n_calls", 1)),
            status=str(d.get("status", "ok")),
            error=d.get("error"),
        )


@dataclass(frozen=True)
class RunRecord:
    """One line of ``runs.jsonl``: all LLM output for one document.

    Parameters
    ----------
    doc_id : str
    hunter, mapper : CallResult or None
    samples : tuple of CallResult
        Extra Hunter samples at temperature > 0 (self-consistency baseline), when asked.
    verbalized : dict or None
        Field -> the model's own 0-100 confidence (verbalized baseline), when asked.
    model : str
    status, error : str
        One of :data:`DOCUMENT_STATUSES` (see :func:`document_status`) and the reason; a failed
        or partial document keeps its line and ``extractconf extract`` retries it on a re-run.
    seconds : float
        Wall-clock time spent on the document.

    Examples
    --------
    >>> r = RunRecord("d1", CallResult("hunter", {}), None, verbalized={"total": 90.0})
    >>> RunRecord.from_dict(r.to_dict()) == r
    True
    """

    doc_id: str
    hunter: CallResult | None
    mapper: CallResult | None
    samples: tuple[CallResult, ...] = ()
    verbalized: dict[str, float] | None = None
    model: str = ""
    status: str = "ok"
    error: str | None = None
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def llm_calls(self) -> int:
        calls = [c for c in (self.hunter, self.mapper, *self.samples) if c is not None]
        return sum(c.n_calls for c in calls) + (1 if self.verbalized is not None else 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "hunter": None if self.hunter is None else self.hunter.to_dict(),
            "mapper": None if self.mapper is None else self.mapper.to_dict(),
            "samples": [s.to_dict() for s in self.samples],
            "verbalized": self.verbalized,
            "model": self.model,
            "status": self.status,
            "error": self.error,
            "seconds": self.seconds,
            "llm_calls": self.llm_calls,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunRecord:
        return cls(
            doc_id=str(d["doc_id"]),
            hunter=None if d.get("hunter") is None else CallResult.from_dict(d["hunter"]),
            mapper=None if d.get("mapper") is None else CallResult.from_dict(d["mapper"]),
            samples=tuple(CallResult.from_dict(s) for s in d.get("samples", ())),
            verbalized=None
            if d.get("verbalized") is None
            else {k: float(v) for k, v in d["verbalized"].items()},
            model=str(d.get("model", "")),
            status=str(d.get("status", "ok")),
            error=d.get("error"),
            seconds=float(d.get("seconds", 0.0)),
            meta=dict(d.get("meta") or {}),
        )


def _survived(call: CallResult) -> bool:
    """True when a call produced a reading: not an error, and a Mapper whose LLM call was made
    (mode ``"layout+llm"`` or ``"ranker+llm"``) actually got a reply (its layout or ranker
    values alone do not count: an unreachable model is a failure, not a quieter reading)."""
    if call.status == "error":
        return False
    llm_mapper = call.kind == "mapper" and call.mode.endswith("+llm")
    return not (llm_mapper and not call.completions)


def document_status(record: RunRecord) -> tuple[str, str | None]:
    """The status a record's readings earn, and the reason when it is not ``"ok"``.

    ``"error"`` when neither the Hunter nor the Mapper survived (or the record carries no call,
    e.g. an unreadable document), ``"partial"`` when one of two survived, else ``"ok"``. A
    record that already says ``"error"`` stays one. Old runs files that recorded a failed call
    as ``"ok"`` get their real status from this function.

    Examples
    --------
    >>> h = CallResult("hunter", {}, status="error", error="HTTP 500 after 6 attempt(s)")
    >>> m = CallResult("mapper", {"total": FieldReading("9.00")}, mode="layout")
    >>> document_status(RunRecord("d1", h, m))
    ('partial', 'hunter failed: HTTP 500 after 6 attempt(s)')
    >>> document_status(RunRecord("d1", None, m))
    ('ok', None)
    """
    calls = [c for c in (record.hunter, record.mapper) if c is not None]
    if record.status == "error" or not calls:
        return "error", record.error or "no reading was made"
    failed = [c for c in calls if not _survived(c)]
    if not failed:
        return "ok", None
    why = "; ".join(f"{c.kind} failed: {c.error or c.status}" for c in failed)
    return ("error" if len(failed) == len(calls) else "partial"), why
