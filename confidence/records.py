"""Reading recorded extractions: ``runs.jsonl`` lines and third-party dicts.

:func:`as_run_record` accepts

* a :class:`~confidence.readings.RunRecord`, or its ``to_dict`` form (a ``runs.jsonl`` line);
* a third-party extraction ``{"doc_id": ..., "fields": {name: value}}`` where each value is a
  string/None or ``{"value": ..., "logprobs": [{"token": ..., "logprob": ...}, ...]}``; an
  optional ``"mapper": {name: value}`` gives a second, document-guided reading. Without it the
  Mapper is missing and the disagreement features say so (``agree_*`` as for "only one reading").

:func:`read_runs` streams a ``runs.jsonl`` file (plain, ``.gz`` or ``.xz``), naming the line of
any malformed record.
"""

from __future__ import annotations

import gzip
import json
import lzma
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from confidence.errors import DatasetError
from confidence.llm.base import TokenLogprob
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.types import Document

__all__ = ["align_documents", "as_call_result", "as_run_record", "load_runs", "read_runs"]


def _reading(name: str, v: Any) -> FieldReading:
    if isinstance(v, FieldReading):
        return v
    if v is None or (isinstance(v, str | int | float) and not isinstance(v, bool)):
        return FieldReading(None if v is None else str(v), None)
    if isinstance(v, Mapping):
        toks = v.get("logprobs", v.get("tokens"))
        tokens = None
        if toks is not None:
            tokens = tuple(
                t if isinstance(t, TokenLogprob) else TokenLogprob.from_dict(dict(t)) for t in toks
            )
        value = v.get("value")
        return FieldReading(None if value is None else str(value), tokens)
    raise DatasetError(
        f"field {name!r}: value must be a string, null or {{'value', 'logprobs'}}, "
        f"got {type(v).__name__}"
    )


def as_run_record(record: RunRecord | Mapping[str, Any]) -> RunRecord:
    """A :class:`RunRecord` from a run record, a runs.jsonl dict or a third-party dict.

    Examples
    --------
    >>> r = as_run_record({"doc_id": "x", "fields": {"total": "9.00", "iban": None}})
    >>> r.hunter.fields["total"].value, r.mapper
    ('9.00', None)
    >>> as_run_record({"doc_id": "x", "fields": {"t": "1"}, "mapper": {"t": "1"}}).mapper.kind
    'mapper'
    """
    if isinstance(record, RunRecord):
        return record
    if not isinstance(record, Mapping):
        raise DatasetError(f"a record must be a RunRecord or a dict, got {type(record).__name__}")
    doc_id = record.get("doc_id")
    if not isinstance(doc_id, str) or not doc_id:
        raise DatasetError("record has no 'doc_id' string")
    try:
        if "hunter" in record:
            return RunRecord.from_dict(dict(record))
        fields = record.get("fields")
        if not isinstance(fields, Mapping):
            raise DatasetError("needs 'hunter'/'mapper' (runs.jsonl) or 'fields': {name: value}")
        hunter = CallResult(
            "hunter", {str(k): _reading(str(k), v) for k, v in fields.items()}, mode="external"
        )
        mapper = None
        if record.get("mapper") is not None:
            m = record["mapper"]
            if not isinstance(m, Mapping):
                raise DatasetError("'mapper' must be an object {name: value}")
            mapper = CallResult(
                "mapper", {str(k): _reading(str(k), v) for k, v in m.items()}, mode="external"
            )
        return RunRecord(doc_id, hunter, mapper, model=str(record.get("model", "external")))
    except DatasetError as e:
        raise DatasetError(f"document {doc_id}: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise DatasetError(f"document {doc_id}: malformed record ({e!r})") from None


def as_call_result(kind: str, call) -> CallResult | None:
    """A :class:`CallResult` from a CallResult, a dict name -> value (as in third-party
    extractions), or None.

    Examples
    --------
    >>> as_call_result("mapper", {"total": "9.00"}).fields["total"].value
    '9.00'
    """
    if call is None or isinstance(call, CallResult):
        return call
    if isinstance(call, Mapping):
        rec = as_run_record({"doc_id": "x", "fields": dict(call)})
        return replace(rec.hunter, kind=kind)
    raise DatasetError(f"{kind} must be a CallResult, a dict name -> value, or None")


def align_documents(
    records: Sequence[RunRecord],
    documents: Mapping[str, Document] | Sequence[Document | None] | None,
) -> Mapping[str, Document] | None:
    """doc_id -> Document from a mapping, or from a list aligned with ``records`` (None = no
    document for that record).

    Examples
    --------
    >>> recs = [as_run_record({"doc_id": "a", "fields": {}})]
    >>> align_documents(recs, [None])
    {}
    """
    if documents is None or isinstance(documents, Mapping):
        return documents
    docs = list(documents)
    if len(docs) != len(records):
        raise DatasetError(f"{len(docs)} documents for {len(records)} records; align them")
    return {r.doc_id: d for r, d in zip(records, docs, strict=True) if d is not None}


_OPENERS = {".gz": gzip.open, ".xz": lzma.open}


def read_runs(path: str | Path) -> Iterator[RunRecord]:
    """Stream the records of a ``runs.jsonl`` file, plain or compressed (``.gz``, ``.xz``).

    Raises :class:`DatasetError` naming the file and line of a malformed record, or the file of
    a truncated or corrupt compressed stream.
    """
    p = Path(path)
    opener = _OPENERS.get(p.suffix, open)
    try:
        fh = opener(p, "rt", encoding="utf-8")
    except OSError as e:
        raise DatasetError(f"{p}: cannot read runs file ({e})") from None
    with fh:
        i = 0
        try:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield as_run_record(json.loads(line))
                except json.JSONDecodeError as e:
                    raise DatasetError(f"{p}:{i}: not valid JSON ({e})") from None
                except DatasetError as e:
                    raise DatasetError(f"{p}:{i}: {e}") from None
        except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError) as e:
            raise DatasetError(
                f"{p}: cannot read runs file after line {i} (truncated or corrupt: {e})"
            ) from None


def load_runs(paths) -> dict[str, RunRecord]:
    """doc_id -> RunRecord over several runs files (a later file wins for a repeated doc_id)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    out: dict[str, RunRecord] = {}
    for p in paths:
        for r in read_runs(p):
            out[r.doc_id] = r
    return out
