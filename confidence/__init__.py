"""extractconf: field-level confidence for LLM document extraction.

The public API is what this module exports; everything else may move between releases.

* documents: :func:`load_document`, :func:`load_many`, :class:`DocumentCache`, :class:`Document`,
  :class:`Page`, :class:`Word`;
* extraction: :func:`make_client` (an LLM client from a spec such as ``"local"``,
  ``"openai:gpt-4o-mini"`` or a URL), :func:`extract_document` (one document -> one
  :class:`RunRecord`), :class:`RunsFile`, :func:`read_runs`, :func:`load_runs`;
* scoring: :class:`ConfidenceEngine` (``score(records, schema, documents=None)``,
  ``extract_and_score(document, schema, client)``) returning :class:`FieldScore` rows;
* data: :class:`Schema`, :class:`Field`, :class:`Dataset`, :func:`write_rows`.

Only the types, the schema and the errors are imported with the package; every other name is
imported on first use (PEP 562), so ``import confidence`` does not load LightGBM, llama.cpp,
OpenCV or the OpenAI client.

The import package is ``confidence``; sub-packages ``confidence.features``,
``confidence.calibration`` and ``confidence.datasets`` live in the top-level folders of the
same names in the source tree.

Examples
--------
>>> import confidence
>>> confidence.Schema.__name__, confidence.load_document.__module__
('Schema', 'confidence.documents')
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from confidence.errors import (
    DatasetError,
    DocumentError,
    ExtractConfError,
    LLMError,
    ModelError,
)
from confidence.schema import Field, Schema
from confidence.types import Document, ImageQuality, Page, QualityGrid, Word

_LAZY: dict[str, str] = {
    "CallResult": "confidence.readings",
    "ConfidenceEngine": "confidence.engine",
    "Dataset": "confidence.datasets.folder",
    "DocumentCache": "confidence.documents.cache",
    "FieldReading": "confidence.readings",
    "FieldScore": "confidence.scores",
    "RunRecord": "confidence.readings",
    "RunsFile": "confidence.calls.extract",
    "extract_document": "confidence.calls.extract",
    "load_document": "confidence.documents",
    "load_many": "confidence.documents",
    "load_runs": "confidence.records",
    "make_client": "confidence.llm",
    "read_runs": "confidence.records",
    "write_rows": "confidence.output",
}
"""Public name -> module that defines it, imported on first attribute access."""

if TYPE_CHECKING:  # for type checkers and IDEs; at run time these come from __getattr__
    from confidence.calls.extract import RunsFile, extract_document
    from confidence.datasets.folder import Dataset
    from confidence.documents import load_document, load_many
    from confidence.documents.cache import DocumentCache
    from confidence.engine import ConfidenceEngine
    from confidence.llm import make_client
    from confidence.output import write_rows
    from confidence.readings import CallResult, FieldReading, RunRecord
    from confidence.records import load_runs, read_runs
    from confidence.scores import FieldScore

__all__ = [
    "CallResult",
    "ConfidenceEngine",
    "Dataset",
    "DatasetError",
    "Document",
    "DocumentCache",
    "DocumentError",
    "ExtractConfError",
    "Field",
    "FieldReading",
    "FieldScore",
    "ImageQuality",
    "LLMError",
    "ModelError",
    "Page",
    "QualityGrid",
    "RunRecord",
    "RunsFile",
    "Schema",
    "Word",
    "__version__",
    "extract_document",
    "load_document",
    "load_many",
    "load_runs",
    "make_client",
    "read_runs",
    "write_rows",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'confidence' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
