"""Review decisions -> a labelled dataset folder (``extractconf feedback``).

The review log (:mod:`confidence.review.log`) says what reviewers decided; the scored file says
what the engine showed them and how each field came to be reviewed. Joined on (doc_id, field),
they make a dataset folder in the project's format (``schema.json`` + ``labels.jsonl`` +
``files/``, :mod:`confidence.datasets.folder`):

* a reviewed field is labelled with the reviewer's final value: the shown value for ``accept``,
  the typed value for ``correct``, ``null`` (absent from the document) for ``absent``; the last
  decision on a field wins; ``skip`` is no decision;
* every other field of a scored document is unlabelled (its key is missing);
* each document's ``meta["review"]`` keeps, per reviewed field, how it was sampled:
  ``p_sample`` (probability it was sent to review: 1 when routed by its threshold, the audit
  rate when audited), ``p_floor`` (the smallest probability of the design it was drawn under:
  1 when its field had no threshold, i.e. everything was reviewed, else the batch's audit
  rate), ``audit``, ``action``, ``decision_id``, ``reviewer``, ``time``, ``confidence``.
  :mod:`confidence.feedback.recalibration` weights by them.

``FeedbackSummary.n_pending`` counts the fields routed to review that have no decision yet. The
sequential guarantee assumes that which reviews are done when ``recalibrate`` runs does not
depend on the values' confidence: review batches in full (the app shows the lowest confidence
first, so a half-reviewed batch holds the least confident fields).

Document files are linked (or copied) from ``documents``: a dataset folder (its
``labels.jsonl`` names the files) or a folder of files named ``<doc_id>.<suffix>``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confidence.datasets.folder import Dataset, DatasetWriter
from confidence.errors import DatasetError
from confidence.monitoring import read_rows
from confidence.review.log import Decision, latest_decisions, read_log
from confidence.schema import Field, Schema

__all__ = ["REVIEW_META", "FeedbackSummary", "build_feedback_dataset", "review_meta"]

REVIEW_META = "review"
"""Key of ``LabelRecord.meta`` holding the per-field sampling record."""


@dataclass(frozen=True)
class FeedbackSummary:
    """What :func:`build_feedback_dataset` wrote.

    Examples
    --------
    >>> s = FeedbackSummary("out", 2, 3, Counter({"accept": 2, "absent": 1}), 1)
    >>> FeedbackSummary.from_dict(s.to_dict()) == s
    True
    """

    out_dir: str
    n_documents: int
    n_labelled: int
    actions: Counter = field(default_factory=Counter)
    n_audit: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    n_pending: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "n_documents": self.n_documents,
            "n_labelled": self.n_labelled,
            "actions": dict(self.actions),
            "n_audit": self.n_audit,
            "skipped": [list(s) for s in self.skipped],
            "n_pending": self.n_pending,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FeedbackSummary:
        return cls(
            str(d["out_dir"]),
            int(d["n_documents"]),
            int(d["n_labelled"]),
            Counter(d.get("actions") or {}),
            int(d.get("n_audit", 0)),
            tuple((str(a), str(b)) for a, b in d.get("skipped", ())),
            int(d.get("n_pending", 0)),
        )


def _float(v: Any) -> float | None:
    if v is None or v == "":
        return None
    x = float(v)
    return None if math.isnan(x) else x


def review_meta(row: Mapping[str, Any] | None, decision: Decision) -> dict[str, Any]:
    """The sampling record of one reviewed field (see the module docstring).

    Examples
    --------
    >>> d = Decision("a", "total", "9", "9", "accept", "ana", audit=True, p_sample=0.05)
    >>> m = review_meta({"threshold": 0.9, "audit_rate": 0.05, "p_sample": 0.05}, d)
    >>> m["p_sample"], m["p_floor"], m["audit"]
    (0.05, 0.05, True)
    >>> review_meta({"threshold": None, "p_sample": 1.0}, Decision("a", "total", "9", "9",
    ...             "accept", "ana"))["p_floor"]
    1.0
    """
    row = row or {}
    p = decision.p_sample if decision.p_sample is not None else _float(row.get("p_sample"))
    p = 1.0 if p is None else float(p)
    if _float(row.get("threshold")) is None:
        floor = 1.0  # the field was reviewed always: every row had p = 1
    else:
        floor = min(p, _float(row.get("audit_rate")) or 0.0)
    return {
        "p_sample": p,
        "p_floor": floor,
        "audit": bool(decision.audit or row.get("audit") in (True, "true", "True", 1)),
        "action": decision.action,
        "decision_id": decision.decision_id,
        "reviewer": decision.reviewer,
        "time": decision.time,
        "confidence": decision.confidence
        if decision.confidence is not None
        else _float(row.get("confidence")),
    }


def _label(decision: Decision) -> str | None:
    return None if decision.action == "absent" else decision.final_value


def _document_files(documents: str | Path) -> tuple[dict[str, Path], Schema | None]:
    """doc_id -> file under ``documents`` (a dataset folder or a folder of files)."""
    root = Path(documents)
    if not root.is_dir():
        raise DatasetError(f"{root}: --documents must be a folder (of files or a dataset)")
    if (root / "labels.jsonl").is_file():
        ds = Dataset.open(root, check_files=False)
        return {r.doc_id: ds.path_of(r) for r in ds.records}, ds.schema
    out: dict[str, Path] = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.startswith("."):
            out.setdefault(p.stem, p)
    return out, None


def _schema_of(rows: Sequence[Mapping[str, Any]]) -> Schema:
    types = {}
    for r in rows:
        types.setdefault(str(r["field"]), str(r.get("field_type") or "text"))
    return Schema("feedback", tuple(Field(n, t) for n, t in types.items()))


def build_feedback_dataset(
    log: str | Path | Iterable[Decision],
    scored: str | Path | Sequence[str | Path],
    out_dir: str | Path,
    *,
    documents: str | Path,
    schema: Schema | None = None,
    overwrite: bool = False,
    link: bool = True,
) -> FeedbackSummary:
    """Write the labelled dataset of the reviewed fields (see the module docstring).

    Parameters
    ----------
    log : path or iterable of Decision
        The review log (``read_log``), or decisions.
    scored : path or list of paths
        The scored file(s) the reviews came from (``extractconf score --out``).
    out_dir : path
        Dataset folder to write (refused if it holds a dataset, unless ``overwrite``).
    documents : path
        Where the documents are: a dataset folder or a folder of ``<doc_id>.<suffix>`` files.
    schema : Schema or None
        Defaults to the documents dataset's schema, else the fields and types of the scored rows.
    """
    decisions = list(read_log(log) if isinstance(log, str | Path) else log)
    latest = latest_decisions(decisions)
    paths = [scored] if isinstance(scored, str | Path) else list(scored)
    rows = [r for p in paths for r in read_rows(p)]
    if not rows:
        raise DatasetError(f"{paths[0]}: no scored rows")
    by_key = {(str(r["doc_id"]), str(r["field"])): r for r in rows}
    files, ds_schema = _document_files(documents)
    schema = schema or ds_schema or _schema_of(rows)
    skipped: list[tuple[str, str]] = []
    per_doc: dict[str, dict[str, Decision]] = {}
    for (doc_id, name), dec in latest.items():
        if (doc_id, name) not in by_key:
            skipped.append((f"{doc_id}/{name}", "decision on a field not in the scored file(s)"))
        elif name not in schema:
            skipped.append((f"{doc_id}/{name}", "field not in the schema"))
        else:
            per_doc.setdefault(doc_id, {})[name] = dec
    actions: Counter = Counter()
    n_labelled = n_audit = n_docs = 0
    with DatasetWriter(out_dir, schema, overwrite=overwrite, link=link) as w:
        for doc_id in dict.fromkeys(str(r["doc_id"]) for r in rows):
            if doc_id not in files:
                skipped.append((doc_id, f"no file for this document under {documents}"))
                continue
            decided = per_doc.get(doc_id, {})
            meta = {n: review_meta(by_key[(doc_id, n)], d) for n, d in decided.items()}
            w.add(
                doc_id,
                {n: _label(d) for n, d in decided.items()},
                source=files[doc_id],
                meta={REVIEW_META: meta} if meta else None,
            )
            n_docs += 1
            n_labelled += len(decided)
            n_audit += sum(m["audit"] for m in meta.values())
            actions.update(d.action for d in decided.values())
    pending = sum(
        r.get("decision") == "review" and r.get("status") != "error" and k not in latest
        for k, r in by_key.items()
    )
    return FeedbackSummary(
        str(out_dir), n_docs, n_labelled, actions, n_audit, tuple(skipped), pending
    )
