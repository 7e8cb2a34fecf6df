"""Export the review queue to CSV/JSONL and import decisions made in another labelling tool.

Export writes one row per field still to review with everything the app shows (``doc_id``,
``field``, ``field_type``, ``file``, ``shown_value``, ``hunter_value``, ``mapper_value``,
``confidence``, ``threshold``, ``reasons``, ``audit``, ``p_sample``) and empty ``action`` /
``final_value`` / ``reviewer`` columns to fill in.

Import reads such a file back (CSV or JSONL by suffix): each row with an ``action`` (``accept``,
``correct``, ``absent``, ``skip``) becomes a :class:`~confidence.review.log.Decision` appended to
the review log; rows with an empty action are not reviewed yet and are left out. ``final_value``
is required for ``correct`` (for ``accept`` the shown value is kept). The (doc_id, field) must be
a row of the scored file (its shown value, audit flag and p_sample are taken from there). A row's
decision id is its ``decision_id`` column, else a hash of its content, so importing the same file
twice logs each decision once.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from confidence.errors import DatasetError, ExtractConfError
from confidence.review.log import Decision, append_decision, read_log
from confidence.review.queue import QueueItem, _flag, _num

EXPORT_COLUMNS = (
    "doc_id",
    "field",
    "field_type",
    "file",
    "shown_value",
    "hunter_value",
    "mapper_value",
    "confidence",
    "threshold",
    "reasons",
    "audit",
    "p_sample",
    "action",
    "final_value",
    "reviewer",
)


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise DatasetError(f"{path}: use a .csv or .jsonl file")


def export_queue(
    path: str | Path, items: Iterable[QueueItem], files: Mapping[str, str] | None = None
) -> int:
    """Write ``items`` to ``path`` (.csv or .jsonl); returns the row count.

    ``files`` maps doc_id to the document's file (written in the ``file`` column).
    """
    path = Path(path)
    fmt = _format(path)
    files = files or {}
    rows = [
        {
            "doc_id": it.doc_id,
            "field": it.field,
            "field_type": it.field_type,
            "file": files.get(it.doc_id),
            "shown_value": it.value,
            "hunter_value": it.hunter_value,
            "mapper_value": it.mapper_value,
            "confidence": it.confidence,
            "threshold": it.threshold,
            "reasons": list(it.reasons),
            "audit": it.audit,
            "p_sample": it.p_sample,
            "action": None,
            "final_value": None,
            "reviewer": None,
        }
        for it in items
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        else:
            w = csv.DictWriter(fh, fieldnames=EXPORT_COLUMNS)
            w.writeheader()
            for r in rows:
                w.writerow({**r, "reasons": "; ".join(r["reasons"])})
    return len(rows)


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    fmt = _format(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    if fmt == "csv":
        # CSV has no null: an empty cell is "nothing" (no action, no final value)
        reader = csv.DictReader(io.StringIO(text, newline=""))  # quoted newlines stay in cells
        return [
            (i, {k: (v if v != "" else None) for k, v in r.items()})
            for i, r in enumerate(reader, start=2)
        ]
    out = []
    for i, line in enumerate(text.split("\n"), start=1):  # not at U+2028 inside a value
        if line.strip():
            try:
                out.append((i, json.loads(line)))
            except ValueError as e:
                raise DatasetError(f"{path}:{i}: not JSON ({e})") from None
    return out


def _decision_id(row: Mapping[str, Any]) -> str:
    content = json.dumps(
        [row.get(k) for k in ("doc_id", "field", "action", "final_value", "reviewer", "time")],
        default=str,
    )
    return hashlib.sha256(content.encode()).hexdigest()[:32]


def import_decisions(
    path: str | Path,
    scored: Mapping[tuple[str, str], Mapping[str, Any]],
    log_path: str | Path,
    *,
    reviewer: str = "import",
) -> tuple[int, int]:
    """Append the decisions of ``path`` to the log; returns (appended, already in the log).

    ``scored`` maps (doc_id, field) to the scored row. Every row is checked before anything is
    appended: a bad row raises :class:`~confidence.errors.DatasetError` naming its line.
    """
    path = Path(path)
    decisions = []
    for line, r in _rows(path):
        action = (str(r.get("action") or "")).strip().lower()
        if not action:
            continue
        where = f"{path}:{line}"
        key = (str(r.get("doc_id") or ""), str(r.get("field") or ""))
        row = scored.get(key)
        if row is None:
            raise DatasetError(f"{where}: {key[0]}/{key[1]} is not a row of the scored file")
        shown = row.get("value")
        shown = None if shown is None else str(shown)
        final = r.get("final_value")
        final = shown if action == "accept" else None if action in ("absent", "skip") else final
        audit = _flag(row.get("audit"))
        p = _num(row.get("p_sample")) if audit else None
        kw = {"time": str(r["time"])} if r.get("time") else {}
        try:
            decisions.append(
                Decision(
                    key[0],
                    key[1],
                    shown,
                    None if final is None else str(final),
                    action,
                    str(r.get("reviewer") or reviewer),
                    audit=audit,
                    p_sample=1.0 if p is None else p,
                    confidence=_num(row.get("confidence")),
                    decision_id=str(r.get("decision_id") or _decision_id({**r, "action": action})),
                    **kw,
                )
            )
        except (ExtractConfError, ValueError) as e:
            raise DatasetError(f"{where}: {e}") from None
    seen = {d.decision_id for d in read_log(log_path)}
    added = 0
    for d in decisions:
        if d.decision_id in seen:
            continue
        append_decision(log_path, d)
        seen.add(d.decision_id)
        added += 1
    return added, len(decisions) - added
