"""The LLM calls: Hunter (field-guided), Mapper (document-guided) and extra baseline samples.

Entry point: :func:`extract_document` (one document -> one :class:`~confidence.readings.RunRecord`,
one ``runs.jsonl`` line) and :class:`RunsFile` (resumable writer). Modules: ``hunter``, ``mapper``,
``prompts``, ``parsing`` (a JSON completion -> field readings), ``samples`` (self-consistency and
verbalized-confidence calls), ``extract``. See ``docs/calls.md``.
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
