"""A tiny sample bundled with extractconf so the notebooks run offline (``confidence.sample``).

* :func:`dataset_dir` — three synthetic invoices as a dataset folder (one is a scan);
* :func:`runs_path` — their Hunter + Mapper runs recorded with the embedded SmolLM2 model;
* :func:`tuning_scores_path` — a cross-fitted evaluation table (``doc_id, field, field_type,
  value, correct, extractconf, group``; group = scan or digital) of a few hundred other
  synthetic invoices read without an LLM;
* :func:`model_dir` — a small engine trained on those, for when no default model is installed.

``python -m confidence.sample.make_sample`` rebuilds everything (see its docstring for how).

Examples
--------
>>> dataset_dir().joinpath("schema.json").exists()
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["dataset_dir", "model_dir", "runs_path", "tuning_scores_path"]

_HERE = Path(__file__).resolve().parent


def dataset_dir() -> Path:
    """Dataset folder of the three sample invoices."""
    return _HERE / "dataset"


def runs_path() -> Path:
    """``runs.jsonl.gz`` of the sample invoices (embedded model)."""
    return _HERE / "runs.jsonl.gz"


def tuning_scores_path() -> Path:
    """Gzipped JSONL evaluation table for the threshold notebook."""
    return _HERE / "tuning_scores.jsonl.gz"


def model_dir() -> Path:
    """Engine folder trained on the sample's heuristic runs."""
    return _HERE / "model"
