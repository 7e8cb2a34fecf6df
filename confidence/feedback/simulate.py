"""Simulated reviewers: decisions drawn from gold labels, to try the feedback loop offline.

Before going live (or to measure the loop, ``benchmarks/bench_feedback.py``), a labelled batch
can stand in for the reviewers: :func:`review_from_gold` looks at every field the scored rows
send to review (decision ``review``, audits included), accepts the shown value when it matches
gold (:func:`confidence.datasets.matching.is_correct`), types the gold value when it does not,
and marks the field absent when gold says so; unlabelled fields are left alone. Decisions go to
the review log exactly as the review app writes them.

Examples
--------
>>> import tempfile, pathlib
>>> from confidence.review.log import read_log
>>> log = pathlib.Path(tempfile.mkdtemp()) / "review.jsonl"
>>> rows = [{"doc_id": "a", "field": "total", "field_type": "amount", "value": "9.00",
...          "decision": "review", "status": "ok", "audit": False, "p_sample": 1.0}]
>>> review_from_gold(rows, {"a": {"total": "9"}}, log)
1
>>> [(d.action, d.final_value) for d in read_log(log)]
[('accept', '9.00')]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from confidence.datasets.matching import is_correct
from confidence.review.log import Decision, append_decision

__all__ = ["gold_of", "review_from_gold"]


def gold_of(dataset_dir: str | Path) -> dict[str, dict]:
    """doc_id -> gold fields of a dataset folder's ``labels.jsonl``."""
    out = {}
    for line in (Path(dataset_dir) / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec["doc_id"]] = rec["fields"]
    return out


def review_from_gold(
    scored_rows: Iterable[Mapping[str, Any]],
    gold: Mapping[str, Mapping[str, Any]],
    log: str | Path,
    *,
    reviewer: str = "simulated",
) -> int:
    """Append one decision per reviewed, labelled row to ``log``; returns how many."""
    n = 0
    for r in scored_rows:
        if r["decision"] != "review" or r["status"] == "error":
            continue
        fields = gold.get(r["doc_id"], {})
        if r["field"] not in fields:
            continue
        g, shown = fields[r["field"]], r["value"]
        if is_correct(r["field_type"], shown, g):
            action, final = "accept", shown
        elif g is None:
            action, final = "absent", None
        else:
            action, final = "correct", g
        append_decision(
            log,
            Decision(
                r["doc_id"],
                r["field"],
                shown,
                final,
                action,
                reviewer,
                audit=bool(r.get("audit")),
                p_sample=r.get("p_sample"),
                confidence=r.get("confidence"),
            ),
        )
        n += 1
    return n
