"""The review log: an append-only JSONL file, one reviewer decision per line.

Every decision a reviewer makes in ``extractconf review`` (or imports from another labelling tool)
is appended here and nothing is ever rewritten, so the log is the one record the app resumes from
and ``extractconf feedback`` learns from. Each line is ``Decision.to_dict()``:

``decision_id``, ``doc_id``, ``field``, ``shown_value``, ``final_value`` (None when the value is
absent from the document), ``action`` (``accept`` / ``correct`` / ``absent`` / ``skip``),
``reviewer``, ``time`` (ISO 8601, UTC), ``audit`` (the field was sampled from the auto-accepted
ones), ``p_sample`` (probability the field was sent to review; None when unknown) and
``confidence`` (the calibrated confidence shown to the reviewer).

Durability: :func:`append_decision` writes one whole line under an exclusive file lock
(``fcntl.flock``, so two threads or two processes never interleave), then flushes and fsyncs
before returning. A crash can only cut the last line short; :func:`read_log` skips such a line
with a warning and the next append drops it. The same ``decision_id`` twice (a double submit, a
re-import) counts once.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from confidence.errors import ExtractConfError

ACTIONS = ("accept", "correct", "absent", "skip")


class ReviewLogError(ExtractConfError):
    """A review log line or decision is malformed."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_decision_id() -> str:
    """A fresh random decision id (32 hex characters)."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Decision:
    """One reviewer decision on one (document, field).

    Parameters
    ----------
    doc_id, field : str
        What was reviewed.
    shown_value : str or None
        The value the app showed (the engine's value).
    final_value : str or None
        The value the reviewer settled on: ``shown_value`` for ``accept``, the typed value for
        ``correct``, None for ``absent`` (not on the page) and ``skip`` (no decision).
    action : {"accept", "correct", "absent", "skip"}
    reviewer : str
    time : str
        ISO 8601 timestamp (UTC); now by default.
    audit : bool
        The field was auto-accepted and sent to review by audit sampling.
    p_sample : float or None
        Probability that this field was sent to review (1.0 for fields routed to review).
    confidence : float or None
        The calibrated confidence shown to the reviewer.
    decision_id : str
        Unique id; a decision logged twice with the same id counts once.

    Examples
    --------
    >>> d = Decision("inv-1", "total", "12.50", "12.50", "accept", "ana")
    >>> Decision.from_dict(d.to_dict()) == d
    True
    >>> Decision("inv-1", "total", "12.50", "9", "absent", "ana")
    Traceback (most recent call last):
    ...
    confidence.review.log.ReviewLogError: inv-1/total: an 'absent' decision has final_value ...
    """

    doc_id: str
    field: str
    shown_value: str | None
    final_value: str | None
    action: str
    reviewer: str
    time: str = field(default_factory=_now)
    audit: bool = False
    p_sample: float | None = None
    confidence: float | None = None
    decision_id: str = field(default_factory=new_decision_id)

    def __post_init__(self) -> None:
        where = f"{self.doc_id}/{self.field}"
        if not self.doc_id or not self.field:
            raise ReviewLogError(f"{where}: a decision needs a doc_id and a field")
        if self.action not in ACTIONS:
            raise ReviewLogError(
                f"{where}: unknown action {self.action!r}; use one of: {', '.join(ACTIONS)}"
            )
        if self.action in ("absent", "skip") and self.final_value is not None:
            raise ReviewLogError(
                f"{where}: an {self.action!r} decision has final_value None, "
                f"got {self.final_value!r}"
            )
        if self.action == "accept" and self.final_value != self.shown_value:
            raise ReviewLogError(
                f"{where}: an 'accept' keeps the shown value {self.shown_value!r}, "
                f"got final_value {self.final_value!r} (use action 'correct')"
            )
        if self.action == "correct" and self.final_value is None:
            raise ReviewLogError(f"{where}: a 'correct' decision needs a final_value")
        if self.p_sample is not None and not 0.0 < self.p_sample <= 1.0:
            raise ReviewLogError(f"{where}: p_sample must be in (0, 1], got {self.p_sample}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict written as one log line."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Decision:
        """Inverse of :meth:`to_dict`; unknown keys are an error naming them."""
        known = set(cls.__dataclass_fields__)
        extra = sorted(set(d) - known)
        if extra:
            raise ReviewLogError(f"unknown decision keys {extra}; expected some of {sorted(known)}")
        missing = [k for k in ("doc_id", "field", "action") if k not in d]
        if missing:
            raise ReviewLogError(f"decision lacks {missing}")
        d = dict(d)
        for k in ("shown_value", "final_value"):
            d.setdefault(k, None)
        d.setdefault("reviewer", "")
        d["audit"] = bool(d.get("audit", False))
        if d.get("p_sample") is not None:
            d["p_sample"] = float(d["p_sample"])
        if d.get("confidence") is not None:
            d["confidence"] = float(d["confidence"])
        return cls(**d)


def append_decision(path: str | Path, decision: Decision) -> None:
    """Append one decision to the log at ``path``, durably (flush + fsync) and atomically.

    The write happens under an exclusive ``flock``, so concurrent appends from threads or
    processes never interleave. A last line cut short by an earlier crash (no trailing newline)
    was never acknowledged; it is dropped with a warning before the new line is written.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "review.jsonl")
    >>> append_decision(p, Decision("a", "total", "1", None, "absent", "ana"))
    >>> [d.action for d in read_log(p)]
    ['absent']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(decision.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            if end:
                _drop_partial_tail(fd, end, path)
            os.lseek(fd, 0, os.SEEK_END)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _drop_partial_tail(fd: int, end: int, path: Path) -> None:
    """Truncate a last line without its newline (a write cut short by a crash)."""
    if os.pread(fd, 1, end - 1) == b"\n":
        return
    pos, chunk = end, 4096
    while pos > 0:
        start = max(0, pos - chunk)
        cut = os.pread(fd, pos - start, start).rfind(b"\n")
        if cut >= 0:
            pos = start + cut + 1
            break
        pos = start
    warnings.warn(
        f"{path}: dropping a last line cut short by a crash ({end - pos} bytes)", stacklevel=3
    )
    os.ftruncate(fd, pos)


def read_log(path: str | Path) -> list[Decision]:
    """All decisions in the log at ``path``, in order; a missing file is an empty log.

    A decision id seen before is skipped (idempotent re-submits). A last line cut short by a
    crash is skipped with a warning; any other line that is not a decision raises
    :class:`ReviewLogError` naming the file and line number.
    """
    path = Path(path)
    if not path.exists():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    out: list[Decision] = []
    seen: set[str] = set()
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        last_cut = i == len(lines) and not raw.endswith(b"\n")
        try:
            d = Decision.from_dict(json.loads(line.decode("utf-8")))
        except (ValueError, TypeError, ExtractConfError) as e:
            if last_cut:
                warnings.warn(
                    f"{path}:{i}: ignoring a last line cut short by a crash", stacklevel=2
                )
                continue
            raise ReviewLogError(f"{path}:{i}: not a review decision ({e})") from None
        if d.decision_id not in seen:
            seen.add(d.decision_id)
            out.append(d)
    return out


def latest_decisions(
    decisions: Iterable[Decision], *, skips: bool = False
) -> dict[tuple[str, str], Decision]:
    """The last decision per ``(doc_id, field)``; a later decision replaces an earlier one.

    Skips are not decisions about the value: they are ignored unless ``skips=True``, so a skip
    never hides an earlier accept or correction. Repeated decision ids count once.

    Examples
    --------
    >>> a = Decision("d", "total", "1", "1", "accept", "ana")
    >>> b = Decision("d", "total", "1", "2", "correct", "bo")
    >>> s = Decision("d", "total", "1", None, "skip", "cy")
    >>> latest_decisions([a, b, s])[("d", "total")].final_value
    '2'
    >>> latest_decisions([a, b, s], skips=True)[("d", "total")].action
    'skip'
    """
    out: dict[tuple[str, str], Decision] = {}
    seen: set[str] = set()
    for d in decisions:
        if d.decision_id in seen or (d.action == "skip" and not skips):
            continue
        seen.add(d.decision_id)
        out[(d.doc_id, d.field)] = d
    return out
