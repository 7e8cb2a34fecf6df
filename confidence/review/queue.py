"""The review queue: which fields a person should look at, in which order, and who holds which.

Built from the scored rows of ``extractconf score``: every field whose ``decision`` is
``review`` plus every row marked ``audit`` (a share of the auto-accepted fields sampled by
``score --audit-rate``, with its sampling probability ``p_sample``). Documents that went
straight through have no such row, so they never appear.

Order: ``"confidence"`` (lowest first: most likely wrong, most valuable to check; rows without a
confidence first of all) or ``"document"`` (documents in file order, fields in row order, so a
reviewer finishes a document before the next). Skipped fields go to the back.

Leases: :meth:`ReviewQueue.next` hands a field to one client for ``lease`` seconds; no other
client gets it until the lease is submitted or expires. The lease id becomes the decision id, so
submitting the same lease twice is logged once (:mod:`confidence.review.log`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confidence.errors import ExtractConfError
from confidence.review.log import Decision, append_decision, latest_decisions, read_log

ORDERS = ("confidence", "document")


class LeaseError(ExtractConfError):
    """A submission for a lease that another reviewer now holds (or that never existed)."""


def _flag(v: Any) -> bool:
    """A boolean column read from JSONL, CSV or Parquet (``True``, ``"true"``, ``1`` ...)."""
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v) if v is not None else False


def _num(v: Any) -> float | None:
    if v is None or v == "":
        return None
    x = float(v)
    return None if x != x else x


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def _reasons(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):  # CSV joins the list with "; "
        return tuple(r.strip() for r in v.split(";") if r.strip())
    return tuple(str(r) for r in v)


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One field to review (built by :func:`queue_items` from a scored row).

    ``hunter_line`` / ``mapper_line``: index of the document line (reading order,
    :func:`~confidence.documents.lines.document_lines`) each call read the value from, when the
    runs are given (:func:`with_lines`); the app boxes that line when the value itself is not
    found on the page.
    """

    doc_id: str
    field: str
    field_type: str
    value: str | None
    hunter_value: str | None
    mapper_value: str | None
    confidence: float | None
    threshold: float | None
    reasons: tuple[str, ...]
    audit: bool
    p_sample: float
    status: str
    hunter_line: int | None = None
    mapper_line: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.doc_id, self.field)


def queue_items(rows: Iterable[Mapping[str, Any]]) -> list[QueueItem]:
    """The rows to review, as :class:`QueueItem` in file order.

    Examples
    --------
    >>> rows = [{"doc_id": "a", "field": "total", "value": "9", "decision": "accept"},
    ...         {"doc_id": "a", "field": "date", "value": "x", "decision": "review",
    ...          "confidence": 0.4, "reasons": "Hunter and Mapper disagree"},
    ...         {"doc_id": "b", "field": "total", "value": "1", "decision": "accept",
    ...          "audit": True, "p_sample": 0.02}]
    >>> [(i.doc_id, i.field, i.audit, i.p_sample) for i in queue_items(rows)]
    [('a', 'date', False, 1.0), ('b', 'total', True, 0.02)]
    """
    out = []
    for i, r in enumerate(rows, start=1):
        audit = _flag(r.get("audit"))
        if r.get("decision") != "review" and not audit:
            continue
        if not r.get("doc_id") or not r.get("field"):
            raise ExtractConfError(f"scored row {i}: needs doc_id and field")
        p = _num(r.get("p_sample")) if audit else None
        out.append(
            QueueItem(
                doc_id=str(r["doc_id"]),
                field=str(r["field"]),
                field_type=str(r.get("field_type") or "text"),
                value=_text(r.get("value")),
                hunter_value=_text(r.get("hunter_value")),
                mapper_value=_text(r.get("mapper_value")),
                confidence=_num(r.get("confidence")),
                threshold=_num(r.get("threshold")),
                reasons=_reasons(r.get("reasons")),
                audit=audit,
                p_sample=1.0 if p is None else p,
                status=str(r.get("status") or "ok"),
            )
        )
    return out


def with_lines(items: list[QueueItem], runs: Mapping[str, Any]) -> list[QueueItem]:
    """``items`` with the line index each reading came from, from recorded runs
    (doc_id -> :class:`~confidence.readings.RunRecord`, as :func:`confidence.records.load_runs`
    returns them); items of documents without a run are kept as they are."""
    from dataclasses import replace

    out = []
    for it in items:
        rec = runs.get(it.doc_id)
        lines = []
        for call in (getattr(rec, "hunter", None), getattr(rec, "mapper", None)):
            reading = call.fields.get(it.field) if call is not None else None
            lines.append(reading.line if reading is not None else None)
        out.append(replace(it, hunter_line=lines[0], mapper_line=lines[1]) if rec else it)
    return out


def order_items(items: list[QueueItem], order: str) -> list[QueueItem]:
    """``items`` in review order (see the module docstring)."""
    if order not in ORDERS:
        raise ExtractConfError(f"unknown order {order!r}; use one of: {', '.join(ORDERS)}")
    if order == "document":
        first: dict[str, int] = {}
        for i, it in enumerate(items):
            first.setdefault(it.doc_id, i)
        return sorted(items, key=lambda it: first[it.doc_id])
    return sorted(items, key=lambda it: -1.0 if it.confidence is None else it.confidence)


@dataclass
class _Lease:
    lease_id: str
    client: str
    key: tuple[str, str]
    expires: float


@dataclass(frozen=True)
class Progress:
    """Counts shown to the reviewer: over the whole queue and for one document."""

    done: int
    left: int
    doc_done: int
    doc_total: int


class ReviewQueue:
    """Queue state: what is decided (from the log), who holds which field, what was skipped.

    Parameters
    ----------
    items : list of QueueItem
        In review order.
    log_path : path
        The review log; decisions already in it are done (a restart resumes there).
    lease : float, default 300
        Seconds a field stays reserved for the client it was handed to.
    clock : callable, default time.monotonic
        For tests.
    """

    def __init__(
        self,
        items: list[QueueItem],
        log_path: str | Path,
        *,
        lease: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if lease <= 0:
            raise ExtractConfError(f"--lease must be above 0 seconds, got {lease}")
        self.items = items
        self.log_path = Path(log_path)
        self.lease = float(lease)
        self._clock = clock
        self._lock = threading.Lock()
        self._by_key = {it.key: it for it in items}
        self._doc_total: dict[str, int] = {}
        for it in items:
            self._doc_total[it.doc_id] = self._doc_total.get(it.doc_id, 0) + 1
        self._leases: dict[tuple[str, str], _Lease] = {}
        self._lease_ids: dict[str, _Lease] = {}
        self._skipped: dict[tuple[str, str], int] = {}
        self._done: set[tuple[str, str]] = set()
        self._doc_done: dict[str, int] = {}
        self._ids: set[str] = set()
        for d in read_log(self.log_path):
            self._note(d)

    def _note(self, d: Decision) -> None:
        self._ids.add(d.decision_id)
        key = (d.doc_id, d.field)
        if key not in self._by_key:
            return
        if d.action == "skip":
            if key not in self._done:
                self._skipped[key] = len(self._skipped) + 1
        elif key not in self._done:
            self._done.add(key)
            self._skipped.pop(key, None)
            self._doc_done[d.doc_id] = self._doc_done.get(d.doc_id, 0) + 1

    def _expire(self, now: float) -> None:
        for key in [k for k, ls in self._leases.items() if ls.expires <= now]:
            self._lease_ids.pop(self._leases.pop(key).lease_id, None)

    def next(self, client: str) -> tuple[QueueItem, str] | None:
        """The field to show ``client`` and its lease id; None when nothing is left for it.

        A client that already holds a live lease gets the same field again (a page reload).
        """
        with self._lock:
            now = self._clock()
            self._expire(now)
            for ls in self._leases.values():
                if ls.client == client:
                    ls.expires = now + self.lease
                    return self._by_key[ls.key], ls.lease_id
            best = self._pick()
            if best is None:
                return None
            ls = _Lease(uuid.uuid4().hex, client, best.key, now + self.lease)
            self._leases[best.key] = ls
            self._lease_ids[ls.lease_id] = ls
            return best, ls.lease_id

    def _pick(self) -> QueueItem | None:
        """The first field in review order that is neither done nor leased (skips last)."""
        best, best_rank = None, None
        for pos, it in enumerate(self.items):
            if it.key in self._done or it.key in self._leases:
                continue
            rank = (self._skipped.get(it.key, 0), pos)
            if best_rank is None or rank < best_rank:
                best, best_rank = it, rank
                if rank[0] == 0:
                    break
        return best

    def peek(self) -> QueueItem | None:
        """The field the next :meth:`next` of a new client would get (nothing is leased); for
        preparing its page picture while the reviewer looks at the current one."""
        with self._lock:
            self._expire(self._clock())
            return self._pick()

    def submit(
        self, lease_id: str, action: str, final_value: str | None, reviewer: str
    ) -> Decision | None:
        """Log the decision on the field of ``lease_id``; None if that lease was logged already.

        Raises :class:`LeaseError` when the lease is unknown or expired and the field has since
        been handed to another client.
        """
        with self._lock:
            if lease_id in self._ids:
                return None  # a double submit: logged once
            self._expire(self._clock())
            ls = self._lease_ids.get(lease_id)
            if ls is None:
                raise LeaseError(
                    "this field's lease expired or is unknown; reload for the next field"
                )
            it = self._by_key[ls.key]
            if action == "accept":
                final_value = it.value
            d = Decision(
                it.doc_id,
                it.field,
                it.value,
                final_value,
                action,
                reviewer,
                audit=it.audit,
                p_sample=it.p_sample,
                confidence=it.confidence,
                decision_id=lease_id,
            )
            append_decision(self.log_path, d)
            self._note(d)
            del self._leases[ls.key]
            del self._lease_ids[lease_id]
            return d

    def release(self, client: str) -> None:
        """Drop every lease ``client`` holds (the field goes back to the queue)."""
        with self._lock:
            for key in [k for k, ls in self._leases.items() if ls.client == client]:
                self._lease_ids.pop(self._leases.pop(key).lease_id, None)

    def progress(self, doc_id: str | None = None) -> Progress:
        with self._lock:
            done = len(self._done)
            return Progress(
                done,
                len(self.items) - done,
                self._doc_done.get(doc_id, 0) if doc_id else 0,
                self._doc_total.get(doc_id, 0) if doc_id else 0,
            )

    def documents(self) -> list[tuple[str, int, int]]:
        """(doc_id, done, total) per document of the queue, in queue order."""
        with self._lock:
            return [(d, self._doc_done.get(d, 0), n) for d, n in self._doc_total.items()]

    def decided(self) -> dict[tuple[str, str], Decision]:
        """The last non-skip decision per field, from the log."""
        return latest_decisions(read_log(self.log_path))
