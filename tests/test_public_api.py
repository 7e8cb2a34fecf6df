"""The public API: ``from confidence import ...`` names, loaded lazily (PEP 562)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import confidence

HEAVY = ("lightgbm", "llama_cpp", "openai", "cv2", "sklearn", "pdfplumber")


def test_import_is_light():
    code = (
        "import json, sys, confidence; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


def test_lazy_name_imports_its_module_on_first_use():
    code = (
        "import sys, confidence; "
        "assert 'confidence.records' not in sys.modules; "
        "f = confidence.read_runs; "
        "assert 'confidence.records' in sys.modules; "
        "assert f.__module__ == 'confidence.records'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", confidence.__all__)
def test_every_exported_name_resolves(name):
    assert getattr(confidence, name) is not None


def test_pipeline_names_are_exported():
    guessed = {
        "ConfidenceEngine",
        "Schema",
        "Field",
        "load_document",
        "extract_document",
        "make_client",
        "read_runs",
        "load_runs",
        "Dataset",
        "RunRecord",
        "FieldScore",
        "Document",
    }
    assert guessed <= set(confidence.__all__)
    assert guessed <= set(dir(confidence))


def test_from_import_matches_the_defining_module():
    from confidence import ConfidenceEngine, extract_document, load_document, make_client
    from confidence.calls.extract import extract_document as defined_extract
    from confidence.documents import load_document as defined_load
    from confidence.engine import ConfidenceEngine as DefinedEngine
    from confidence.llm import make_client as defined_make_client

    assert ConfidenceEngine is DefinedEngine
    assert extract_document is defined_extract
    assert load_document is defined_load
    assert make_client is defined_make_client


def test_all_is_sorted_and_unique():
    assert list(confidence.__all__) == sorted(set(confidence.__all__))


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'load'"):
        confidence.load  # noqa: B018
    with pytest.raises(ImportError):
        from confidence import not_a_name  # noqa: F401
