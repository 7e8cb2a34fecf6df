"""The LLM calls: Hunter (field-guided), Mapper (document-guided) and baseline signals.

Entry point: :func:`extract_document` (one document -> one ``runs.jsonl`` line) and
:class:`RunsFile` (resumable writer). See ``docs/calls.md``.
"""

from confidence.calls.extract import RunsFile, extract_document, record_usage
from confidence.calls.hunter import HUNTER_MODES, run_hunter
from confidence.calls.mapper import run_mapper

__all__ = [
    "HUNTER_MODES",
    "RunsFile",
    "extract_document",
    "record_usage",
    "run_hunter",
    "run_mapper",
]
