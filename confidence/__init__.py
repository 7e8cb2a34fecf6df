"""extractconf: field-level confidence for LLM document extraction.

The import package is ``confidence``; sub-packages ``confidence.features``,
``confidence.calibration`` and ``confidence.datasets`` live in the top-level folders of the
same names in the source tree.
"""

from __future__ import annotations

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

__all__ = [
    "DatasetError",
    "Document",
    "DocumentError",
    "ExtractConfError",
    "Field",
    "ImageQuality",
    "LLMError",
    "ModelError",
    "Page",
    "QualityGrid",
    "Schema",
    "Word",
    "__version__",
]
