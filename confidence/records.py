"""Reading recorded extractions: ``runs.jsonl`` lines and third-party dicts.

:func:`as_run_record` accepts

* a :class:`~confidence.readings.RunRecord`, or its ``to_dict`` form (a ``runs.jsonl`` line);
* a third-party extraction ``{"doc_id": ..., "fields": {name: value}}`` where each value is a
  string/None or ``{"value": ..., "logprobs": [{"token": ..., "logprob": ...}, ...]}``; an
  optional ``"mapper": {name: value}`` gives a second, document-guided reading. Without it the
  Mapper is missing and the disagreement features say so (``agree_*`` as for "only one reading").

Values are checked, never coerced into garbage:

* a value is a string or ``None``; an int or float (``{"total": 9.0}``, as pipelines send
  amounts) is accepted and written with Python's shortest round-trip form (``9.0`` -> ``"9.0"``,
  which the amount rules read as 9.00); a bool, list or dict, or a NaN/infinite number, is a
  :class:`~confidence.errors.DatasetError` naming the document and field;
* every logprob (chosen token and top alternatives) must be a finite number <= 0 (a rounding
  excess up to ``1e-6`` is tolerated): NaN, infinities and positive logprobs are a
  :class:`~confidence.errors.DatasetError` naming document, field and token; the whole record is
  refused rather than the token dropped, because such a record comes from a broken writer and its
  other numbers cannot be trusted either.

:func:`read_runs` is the one reader of ``runs.jsonl`` files (plain, ``.gz`` or ``.xz``) for every
command; see it for how a cut-short last line and a repeated doc_id are handled.
"""

from __future__ import annotations

import gzip
import json
import lzma
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from confidence.errors import DatasetError
from confidence.gcpause import paused_gc
from confidence.llm.base import TokenLogprob
from confidence.readings import CallResult, FieldReading, RunRecord, document_status
from confidence.types import Document

__all__ = ["align_documents", "as_call_result", "as_run_record", "load_runs", "read_runs"]


_LOGPROB_SLACK = 1e-6
"""How far above 0 a logprob may be (float rounding of log-softmax) before it is refused."""


def _value(v: Any, where: str) -> str | None:
    """A field value as text: strings and None as they are, finite numbers deliberately."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float | Decimal) and not isinstance(v, bool):
        if isinstance(v, float | Decimal) and not math.isfinite(v):
            raise DatasetError(f"{where}: value {v} is not a finite number")
        text = str(v)
        if "e" in text.lower():  # 1e+21, 1e-05: written out, not read as "21" or "-5"
            text = format(Decimal(repr(v)) if isinstance(v, float) else v, "f")
        return text
    raise DatasetError(
        f"{where}: value must be a string, a number or null, got {type(v).__name__} "
        f"{json.dumps(v, default=str)[:60]}"
    )


def _check_tokens(tokens: Sequence[TokenLogprob] | None, where: str) -> None:
    for i, t in enumerate(tokens or ()):
        lp = t.logprob
        if not -math.inf < lp <= _LOGPROB_SLACK:
            _bad_logprob(where, i, t, lp)
        for _, alt in t.top:
            if not -math.inf < alt <= _LOGPROB_SLACK:
                _bad_logprob(where, i, t, alt)


def _bad_logprob(where: str, i: int, t: TokenLogprob, lp: float) -> None:
    raise DatasetError(
        f"{where}: token {i} ({t.token!r}) has logprob {lp}; a logprob must be a finite number <= 0"
    )


def _check_record(rec: RunRecord) -> RunRecord:
    """Refuse non-finite or positive logprobs and verbalized confidences outside 0-100."""
    for call in (rec.hunter, rec.mapper, *rec.samples):
        if call is not None:
            for name, reading in call.fields.items():
                _check_tokens(reading.tokens, f"{call.kind} field {name!r}")
    for name, v in (rec.verbalized or {}).items():
        if not 0 <= v <= 100:
            raise DatasetError(f"verbalized confidence of {name!r} is {v}; it must be 0-100")
    return rec


def _token(t: Any, where: str, i: int) -> TokenLogprob:
    """One token of a value's logprobs, or a DatasetError naming the field and the token."""
    if isinstance(t, TokenLogprob):
        return t
    try:
        if isinstance(t, Mapping) and isinstance(t.get("top"), str | Mapping):
            raise TypeError("'top' must be a list of [text, number] pairs")  # a dict's keys
        return TokenLogprob.from_dict(dict(t))
    except (KeyError, TypeError, ValueError) as e:
        raise DatasetError(
            f'{where}: logprob token {i} is not {{"token": text, "logprob": number, '
            f'"top": [[text, number], ...]}} ({type(e).__name__}: {e}; got {t!r:.80})'
        ) from None


def _reading(name: str, v: Any) -> FieldReading:
    if isinstance(v, FieldReading):
        return v
    where = f"field {name!r}"
    if isinstance(v, Mapping):
        if "value" not in v:
            raise DatasetError(
                f"{where}: an object value needs a 'value' key (and optional 'logprobs'), "
                f"got keys {sorted(map(str, v))[:5]}"
            )
        toks = v.get("logprobs", v.get("tokens"))
        tokens = None
        if toks is not None:
            if isinstance(toks, str | Mapping) or not isinstance(toks, Sequence):
                raise DatasetError(f"{where}: 'logprobs' must be a list of {{token, logprob}}")
            tokens = tuple(_token(t, where, i) for i, t in enumerate(toks))
        return FieldReading(_value(v.get("value"), where), tokens)
    return FieldReading(_value(v, where), None)


def _runs_line_values(d: Mapping[str, Any]) -> dict[str, Any]:
    """A runs.jsonl dict with every reading's value checked and numbers turned into text."""
    out = dict(d)
    for key in ("hunter", "mapper"):
        if isinstance(d.get(key), Mapping):
            out[key] = _call_values(d[key], key)
    if isinstance(d.get("samples"), list):
        out["samples"] = [
            _call_values(c, "sample") if isinstance(c, Mapping) else c for c in d["samples"]
        ]
    return out


def _call_values(call: Mapping[str, Any], kind: str) -> dict[str, Any]:
    fields = call.get("fields")
    if not isinstance(fields, Mapping):
        return dict(call)
    checked = {}
    for name, r in fields.items():
        where = f"{kind} field {name!r}"
        if not isinstance(r, Mapping):
            raise DatasetError(f"{where}: a reading must be an object {{value, tokens, ...}}")
        checked[name] = {**r, "value": _value(r.get("value"), where)}
    return {**call, "fields": checked}


def as_run_record(record: RunRecord | Mapping[str, Any]) -> RunRecord:
    """A :class:`RunRecord` from a run record, a runs.jsonl dict or a third-party dict.

    Dicts are checked (see the module docstring); a :class:`RunRecord` is taken as it is: it was
    checked when read (:func:`read_runs`, or this function on its dict), so records are validated
    once, not again on every scoring call.

    Examples
    --------
    >>> r = as_run_record({"doc_id": "x", "fields": {"total": "9.00", "iban": None}})
    >>> r.hunter.fields["total"].value, r.mapper
    ('9.00', None)
    >>> as_run_record({"doc_id": "x", "fields": {"t": "1"}, "mapper": {"t": "1"}}).mapper.kind
    'mapper'
    >>> as_run_record({"doc_id": "x", "fields": {"total": 9.0}}).hunter.fields["total"].value
    '9.0'
    >>> as_run_record({"doc_id": "x", "fields": {"total": ["9.00", "10.00"]}})
    Traceback (most recent call last):
    ...
    confidence.errors.DatasetError: document x: field 'total': value must be a string, a number or null, got list ["9.00", "10.00"]
    """  # noqa: E501
    if isinstance(record, RunRecord):  # checked when it was read (or made by extract_document)
        return record
    if not isinstance(record, Mapping):
        raise DatasetError(f"a record must be a RunRecord or a dict, got {type(record).__name__}")
    doc_id = record.get("doc_id")
    if not isinstance(doc_id, str) or not doc_id:
        raise DatasetError("record has no 'doc_id' string")
    try:
        if "hunter" in record:
            return _check_record(RunRecord.from_dict(_runs_line_values(record)))
        if record.get("status") == "error":  # the pipeline says it failed on this document
            why = record.get("error")
            why = str(why) if why else "the pipeline reported an error and no reason"
            return RunRecord(doc_id, None, None, status="error", error=why)
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
        return _check_record(
            RunRecord(doc_id, hunter, mapper, model=str(record.get("model", "external")))
        )
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
    other = [(r.doc_id, d.doc_id) for r, d in zip(records, docs, strict=True)
             if d is not None and d.doc_id != r.doc_id]  # fmt: skip
    if other:  # a document's own id says it is another record's: likely another order
        shown = ", ".join(f"{d!r} beside record {r!r}" for r, d in other[:3])
        warnings.warn(
            f"{len(other)} of {len(docs)} documents carry another doc_id than the record they "
            f"are aligned with ({shown}); is the list in the records' order? Pass a mapping "
            "doc_id -> Document to pair them by id",
            UserWarning,
            stacklevel=3,
        )
    return {r.doc_id: d for r, d in zip(records, docs, strict=True) if d is not None}


_OPENERS = {".gz": gzip.open, ".xz": lzma.open}


def _ok(record: RunRecord) -> bool:
    """Recorded ``ok`` and ok by its readings (older files said ``ok`` over failed calls)."""
    return record.status == "ok" and document_status(record)[0] == "ok"


def read_runs(path: str | Path) -> Iterator[RunRecord]:
    """The records of a ``runs.jsonl`` file, plain or compressed (``.gz``, ``.xz``).

    Every command reads runs files through this function, with these rules:

    * a malformed line (not JSON, or a record that fails the checks of :func:`as_run_record`)
      is a :class:`DatasetError` naming the file and line;
    * the **last** line cut short (no final newline and not valid JSON: a writer killed
      mid-line) is skipped with a ``UserWarning`` naming the file and line; the document is
      simply missing (``extractconf extract`` redoes it on the next run);
    * a doc_id may appear again only to replace a failed or partial record (``extract``
      retrying it; an older ``ok`` line whose calls failed, by
      :func:`~confidence.readings.document_status`, counts as failed): the later line wins.
      A line after an ``ok`` record of the same doc_id is a :class:`DatasetError` naming
      both lines;
    * a truncated or corrupt compressed stream is a :class:`DatasetError` naming the file.

    Records come in the order of their doc_id's first line.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "runs.jsonl")
    >>> with open(p, "w") as fh:
    ...     _ = fh.write('{"doc_id": "a", "fields": {"total": "9.00"}}\\n{"doc_id": "b", "fi')
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     [r.doc_id for r in read_runs(p)]
    ['a']
    >>> "line 2 is cut short" in str(caught[0].message)
    True
    """
    p = Path(path)
    opener = _OPENERS.get(p.suffix, open)
    try:
        fh = opener(p, "rt", encoding="utf-8-sig", newline="")  # a BOM (Windows tools) skipped
    except OSError as e:
        raise DatasetError(f"{p}: cannot read runs file ({e})") from None
    kept: dict[str, tuple[int, RunRecord]] = {}
    with fh, paused_gc():  # millions of acyclic token objects: see confidence.gcpause
        i = 0
        try:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = as_run_record(json.loads(line))
                except json.JSONDecodeError as e:
                    if not line.endswith("\n"):  # only the last line can lack it: writer died
                        warnings.warn(
                            f"{p}: line {i} is cut short (the writer stopped mid-line); skipped",
                            UserWarning,
                            stacklevel=2,
                        )
                        break
                    raise DatasetError(f"{p}:{i}: not valid JSON ({e})") from None
                except DatasetError as e:
                    raise DatasetError(f"{p}:{i}: {e}") from None
                earlier = kept.get(rec.doc_id)
                if earlier is not None and _ok(earlier[1]):
                    raise DatasetError(
                        f"{p}:{i}: doc_id {rec.doc_id!r} again (line {earlier[0]} already holds "
                        f"its ok record, this one is {rec.status}); a doc_id may repeat only to "
                        "replace a failed or partial record: remove one of the two lines"
                    )
                kept[rec.doc_id] = (i, rec)
        except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError) as e:
            raise DatasetError(
                f"{p}: cannot read runs file after line {i} (truncated or corrupt: {e})"
            ) from None
    for _, rec in kept.values():
        yield rec


def load_runs(paths) -> dict[str, RunRecord]:
    """doc_id -> RunRecord over several runs files, each read by :func:`read_runs` (a later file
    wins for a doc_id several files hold)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    out: dict[str, RunRecord] = {}
    for p in paths:
        for r in read_runs(p):
            out[r.doc_id] = r
    return out
