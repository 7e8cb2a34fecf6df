"""One document through the Hunter and the Mapper: the LLM half of ``extractconf score``.

:func:`extract_document` uses ``confidence.calls.extract_document`` when that package provides
it (the project's extraction entry point, also behind ``extractconf extract``); otherwise it
runs the Hunter (:func:`confidence.calls.hunter.run_hunter`, grounded mode) and the Mapper
(:func:`confidence.calls.mapper.run_mapper`) directly and packs them into a
:class:`~confidence.readings.RunRecord`, the ``runs.jsonl`` line format.
"""

from __future__ import annotations

import time

from confidence.readings import RunRecord
from confidence.schema import Schema
from confidence.types import Document

__all__ = ["extract_document"]


def extract_document(document: Document, schema: Schema, client) -> RunRecord:
    """Hunter + Mapper readings of one document (never raises for a failed call).

    A failed call becomes a ``status="error"`` CallResult; the record is ``"error"`` only when
    both calls failed.
    """
    try:
        from confidence.calls import extract_document as calls_extract
    except ImportError:
        calls_extract = None
    if calls_extract is not None:
        return calls_extract(document, schema, client)
    from confidence.calls.hunter import run_hunter
    from confidence.calls.mapper import run_mapper
    from confidence.documents.lines import document_lines

    t0 = time.perf_counter()
    lines = document_lines(document)
    [hunter] = run_hunter(schema, lines, client, mode="grounded")[:1]
    mapper = run_mapper(schema, lines, client)
    failed = hunter.status == "error" and mapper.status == "error"
    return RunRecord(
        document.doc_id,
        hunter,
        mapper,
        model=str(getattr(client, "model", "")),
        status="error" if failed else "ok",
        error="; ".join(e for e in (hunter.error, mapper.error) if e) if failed else None,
        seconds=time.perf_counter() - t0,
    )
