"""Per-document orchestration of the calls into a :class:`~confidence.readings.RunRecord`.

:func:`extract_document` is what ``extractconf extract`` runs for each document of a dataset and
what ``extractconf score`` runs on a raw document. It never raises for a bad document or a failed
call: every fault ends up in a status/error field so a batch never loses a document.
:class:`RunsFile` is the resumable ``runs.jsonl`` writer (one flushed line per document).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from confidence.calls.hunter import HUNTER_MODES, HunterRequest, build_hunter, send_hunter
from confidence.calls.mapper import run_mapper
from confidence.calls.samples import self_consistency, verbalized_confidence
from confidence.documents.instructions import instruction_lines
from confidence.documents.lines import document_lines
from confidence.llm.base import LLMClient
from confidence.llm.deadline import DeadlineClient
from confidence.readings import CallResult, RunRecord, document_status
from confidence.schema import Schema
from confidence.types import Document

REPORTED_BY_MODE = {"grounded": "mapper", "free": "hunter"}
"""The reading a record reports (``meta["reported"]``), by Hunter mode. With the embedded model
(grounded) the Mapper is the candidate ranker's reading, which measures more accurate than the
Hunter on held-out synthetic invoices and receipts (``benchmarks/bench_ranker.py``: field
accuracy 0.775 vs 0.345 on 200 invoices, 0.854 vs 0.600 on 200 receipts, ``ranker`` vs
``hunter_recorded`` in ``benchmarks/results/ranker.json``); a remote model
(free) reads the page itself and its Hunter stays the reported reading."""


def _guard(kind: str, fn, *args, **kwargs) -> CallResult:
    """Run one call; an unexpected exception becomes an error result instead of a lost document."""
    try:
        return fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:  # a client bug must not take the batch down
        return CallResult(kind, {}, status="error", error=f"{type(e).__name__}: {e}")


def record_usage(record: RunRecord) -> dict[str, int]:
    """Prompt and completion tokens over every completion of a record."""
    calls = [c for c in (record.hunter, record.mapper, *record.samples) if c is not None]
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    seen: set[int] = set()
    for c in calls:
        for comp in c.completions:
            if id(comp) in seen:  # greedy n>1 repeats one completion object
                continue
            seen.add(id(comp))
            for k in usage:
                usage[k] += int(comp.usage.get(k, 0))
    for k in usage:
        usage[k] += int(record.meta.get("verbalized_usage", {}).get(k, 0))
    return usage


def extract_document(
    document: Document,
    schema: Schema,
    client: LLMClient,
    *,
    hunter_mode: str = "grounded",
    mapper: bool = True,
    samples: int = 0,
    sample_temperature: float = 0.7,
    verbalized: bool = False,
    max_candidates: int = 4,
    seed: int = 0,
    deadline: float | None = None,
) -> RunRecord:
    """Hunter, Mapper and (when asked) baseline calls over one document.

    Parameters
    ----------
    document : Document
    schema : Schema
    client : LLMClient
    hunter_mode : {"grounded", "free"}
        ``"grounded"`` constrains values to document candidates (small local models),
        ``"free"`` lets the model write values (strong remote models).
    mapper : bool
        Run the Mapper (layout pairs + one LLM copy call).
    samples : int
        Extra Hunter samples for the self-consistency baseline (0 = none).
    sample_temperature : float
    verbalized : bool
        Ask for a 0-100 confidence per field (one extra call).
    max_candidates : int
        Candidates per field in grounded mode.
    seed : int
        Sampling seed of the extra samples.
    deadline : float, optional
        Seconds all the LLM calls of this document may take together (see
        :class:`~confidence.llm.deadline.DeadlineClient`); a call past it fails like any other.

    Returns
    -------
    RunRecord
        ``status`` (:func:`~confidence.readings.document_status`) is ``"error"`` when the
        document has no text or neither the Hunter nor the Mapper produced a reading,
        ``"partial"`` when only one did, with ``error`` naming the failed call(s) and why; the
        per-call status/errors give the detail. ``meta`` holds ``hunter_mode``, ``n_lines``,
        ``reported`` (which reading the engine reports, :data:`REPORTED_BY_MODE`), ``usage``
        (tokens) and ``warnings``.

    Examples
    --------
    >>> rec = extract_document(doc, schema, client)  # doctest: +SKIP
    >>> rec.hunter.fields["total"].value  # doctest: +SKIP
    '9.00'
    """
    if hunter_mode not in HUNTER_MODES:
        raise ValueError(f"hunter_mode={hunter_mode!r}; use one of: {', '.join(HUNTER_MODES)}")
    if samples < 0:
        raise ValueError(f"samples={samples}; use 0 (none) or a positive count")
    t0 = time.perf_counter()
    model = str(getattr(client, "model", ""))
    if deadline is not None:
        client = DeadlineClient(client, deadline)
    lines = document_lines(document)
    meta: dict[str, Any] = {
        "hunter_mode": hunter_mode,
        "n_lines": len(lines),
        "reported": REPORTED_BY_MODE[hunter_mode] if mapper else "hunter",
    }
    if not lines:
        return RunRecord(
            document.doc_id,
            None,
            None,
            model=model,
            status="error",
            error="document has no text (no words found)",
            meta=meta,
            seconds=time.perf_counter() - t0,
        )
    flagged = instruction_lines(lines)
    warnings: list[str] = [
        f"line {ln.index} looks like an instruction to the model and was withheld: {ln.text[:80]!r}"
        for ln in lines
        if ln.index in flagged
    ]
    built: list[HunterRequest] = []

    def hunt() -> CallResult:
        built.append(build_hunter(schema, lines, hunter_mode, max_candidates=max_candidates))
        return send_hunter(built[0], schema, lines, client)[0]

    hunter = _guard("hunter", hunt)
    # A remote model (free Hunter) keeps today's LLM Mapper; the embedded one reads the ranker's
    # and scores it in the Hunter's prompt (the client reuses that evaluated prefix), taking the
    # Hunter's tokens where the Hunter chose the same value.
    reader = "ranker" if hunter_mode == "grounded" else "layout"
    grounded = (
        {"messages": built[0].messages, "hunter": hunter} if built and reader == "ranker" else {}
    )
    mapped = (
        _guard("mapper", run_mapper, schema, lines, client, reader=reader, **grounded)
        if mapper
        else None
    )
    extra: tuple[CallResult, ...] = ()
    if samples:
        try:
            extra = self_consistency(
                schema,
                lines,
                client,
                samples,
                temperature=sample_temperature,
                mode=hunter_mode,
                seed=seed + 1,
                max_candidates=max_candidates,
            )
        except Exception as e:  # recorded, never raised
            extra = (CallResult("sample", {}, n_calls=samples, status="error", error=str(e)),)
    verbal = None
    if verbalized:
        values = {k: r.value for k, r in hunter.fields.items()}
        try:
            verbal, err = verbalized_confidence(schema, lines, client, values)
        except Exception as e:
            verbal, err = None, f"verbalized call failed: {type(e).__name__}: {e}"
        if err:
            warnings.append(err)
        meta["verbalized_calls"] = 1
    record = RunRecord(
        document.doc_id,
        hunter,
        mapped,
        samples=extra,
        verbalized=verbal,
        model=model,
        seconds=time.perf_counter() - t0,
        meta=meta,
    )
    status, error = document_status(record)
    record = replace(record, status=status, error=error)
    meta["usage"] = record_usage(record)
    if warnings:
        meta["warnings"] = warnings
    return record


class RunsFile:
    """Resumable ``runs.jsonl``: knows which doc_ids are done, appends one flushed line each.

    A document is done when its latest line is ``"ok"`` (by
    :func:`~confidence.readings.document_status`); a ``"partial"`` or ``"error"`` document is
    redone and its new line, appended later, replaces the old one for every reader (see
    :func:`confidence.records.read_runs`). A last line cut short by a crash is ignored (that
    document is simply redone) and removed before the next append, so every reader sees a
    whole file.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "runs.jsonl")
    >>> with RunsFile(p) as runs:
    ...     runs.append(RunRecord("d1", CallResult("hunter", {}), None))
    ...     runs.append(RunRecord("d2", None, None, status="error", error="timed out"))
    >>> sorted(RunsFile(p).done), sorted(RunsFile(p).retry)
    (['d1'], ['d2'])
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.done: set[str] = set()
        self.retry: set[str] = set()  # doc_ids whose latest line is partial or error
        self.bad_lines = 0
        self._fh = None
        if self.path.exists():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        rec = RunRecord.from_dict(json.loads(line))
                    except (ValueError, KeyError, TypeError, AttributeError):
                        self.bad_lines += 1
                        continue
                    self._note(rec)

    def _note(self, record: RunRecord) -> None:
        ok = document_status(record)[0] == "ok"
        (self.done if ok else self.retry).add(record.doc_id)
        (self.retry if ok else self.done).discard(record.doc_id)

    def __enter__(self) -> RunsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def append(self, record: RunRecord) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            needs_nl = self._drop_cut_line()
            self._fh = self.path.open("a", encoding="utf-8")
            if needs_nl:  # a whole record whose newline was lost: finish it
                self._fh.write("\n")
        self._fh.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
        self._fh.flush()
        self._note(record)

    def _drop_cut_line(self) -> bool:
        """Remove a last line a crash cut short (its document is redone), so the file stays
        readable by :func:`~confidence.records.read_runs`; True when the last line is a whole
        record that only lacks its newline."""
        if not self.path.exists():
            return False
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return False
        start = data.rfind(b"\n") + 1
        try:
            json.loads(data[start:])
            return True
        except ValueError:
            with self.path.open("r+b") as fh:
                fh.truncate(start)
            return False

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
