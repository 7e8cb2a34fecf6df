"""Reading the files ``extractconf evaluate`` writes, tolerating missing optional pieces.

Only ``scores.jsonl`` or ``metrics.json`` is required; everything else is optional and its
absence becomes a note in the report. A malformed line of ``scores.jsonl`` is skipped with a note
naming the line, never aborting the report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from confidence.calibration import evaluate_scores
from confidence.errors import DatasetError

__all__ = [
    "EXTRA_COLUMNS",
    "METRICS_FILE",
    "SCORES_FILE",
    "ReportInputs",
    "load_inputs",
]

METRICS_FILE = "metrics.json"
SCORES_FILE = "scores.jsonl"
IMPORTANCE_FILE = "feature_importance.json"
THRESHOLDS_FILE = "thresholds.json"
SHAP_FILE = "shap.json"
MONITOR_FILE = "monitor.json"

EXTRA_COLUMNS: tuple[str, ...] = ("correct", "extractconf_raw", "threshold", "confidence")
"""Numeric columns of ``scores.jsonl`` that are not confidence methods."""

_MAX_NOTES_PER_FILE = 5


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report shows, as read from one evaluate output folder.

    Attributes
    ----------
    out_dir : Path
    metrics : dict method -> dict of metric -> value
    rows : list of dict
        ``scores.jsonl`` rows, with the keys of a nested ``"extra"`` dict lifted to the top.
    methods : tuple of str
        Score columns, ``extractconf`` first when present.
    importance : dict feature -> mean |SHAP|, or None
    thresholds : dict (``ThresholdSelector.to_dict()``), or None
    shap : dict or None
        ``shap.json``: ``feature_names``, ``values`` (rows x features, log-odds),
        ``base_values``, ``data`` (the feature values).
    monitor : dict or None
        ``monitor.json``: an ``extractconf monitor --out`` report (verdict, per-field tests).
    meta : dict
        The other top-level keys of ``metrics.json`` (``evaluation``, ``routing``, ...).
    notes : tuple of str
        What was missing or skipped, in words.
    """

    out_dir: Path
    metrics: dict[str, dict[str, Any]]
    rows: list[dict[str, Any]]
    methods: tuple[str, ...]
    importance: dict[str, float] | None = None
    thresholds: dict[str, Any] | None = None
    shap: dict[str, Any] | None = None
    monitor: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def labels(self) -> np.ndarray:
        """0/1 correctness of every row."""
        return np.array([int(bool(r["correct"])) for r in self.rows], dtype=int)

    def column(self, name: str) -> np.ndarray:
        """A numeric column as floats (NaN where a row lacks it)."""
        return np.array([_num(r.get(name)) for r in self.rows], dtype=float)

    def has_column(self, name: str) -> bool:
        return any(_is_number(r.get(name)) for r in self.rows)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _num(v: Any) -> float:
    return float(v) if _is_number(v) else math.nan


def _read_json(path: Path, notes: list[str]) -> Any:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        notes.append(f"{path.name}: unreadable ({e}); section skipped")
        return None


def _read_thresholds(path: Path, notes: list[str]) -> dict[str, Any] | None:
    if not path.exists():
        return None
    from confidence.calibration import ThresholdSelector
    from confidence.errors import ModelError

    try:
        return ThresholdSelector.load(path).to_dict()
    except ModelError as e:
        notes.append(f"{e}; section skipped")
        return None


def _find_methods(obj: Any) -> dict[str, dict[str, Any]]:
    """The ``{method: {auroc, ...}}`` mapping, at the top level or nested one or two levels."""
    if not isinstance(obj, Mapping):
        return {}
    found = {str(k): dict(v) for k, v in obj.items() if isinstance(v, Mapping) and "auroc" in v}
    if found:
        return found
    for v in obj.values():
        inner = _find_methods(v)
        if inner:
            return inner
    return {}


def _read_rows(path: Path, notes: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not path.exists():
        return rows
    bad = 0
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError("not a JSON object")
                extra = row.pop("extra", None)
                if isinstance(extra, Mapping):
                    row = {**row, **extra}
                if "correct" not in row or row["correct"] is None:
                    raise ValueError("no 'correct' key")
                if not {"doc_id", "field"} <= row.keys():
                    raise ValueError("needs 'doc_id' and 'field'")
            except (json.JSONDecodeError, ValueError) as e:
                bad += 1
                if bad <= _MAX_NOTES_PER_FILE:
                    notes.append(f"{path.name} line {i}: skipped ({e})")
                continue
            rows.append(row)
    if bad > _MAX_NOTES_PER_FILE:
        notes.append(f"{path.name}: {bad} malformed lines skipped in all")
    return rows


def _score_columns(rows: list[dict[str, Any]], metrics: Mapping[str, Any]) -> tuple[str, ...]:
    numeric = dict.fromkeys(
        k for r in rows for k, v in r.items() if _is_number(v) and k not in EXTRA_COLUMNS
    )
    if metrics:
        cols = [m for m in metrics if m in numeric] if rows else list(metrics)
    else:
        cols = list(numeric)
    if "extractconf" in cols:
        cols.remove("extractconf")
        cols.insert(0, "extractconf")
    return tuple(cols)


def load_inputs(out_dir: str | Path) -> ReportInputs:
    """Read an evaluate output folder.

    Raises
    ------
    DatasetError
        When the folder has neither ``metrics.json`` nor a usable ``scores.jsonl``.

    Examples
    --------
    >>> import tempfile, json, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [{"doc_id": "a", "field": "total", "correct": c, "extractconf": s}
    ...         for c, s in [(1, 0.9), (0, 0.2), (1, 0.7)]]
    >>> _ = (d / "scores.jsonl").write_text("\\n".join(json.dumps(r) for r in rows))
    >>> inp = load_inputs(d)
    >>> inp.methods, round(inp.metrics["extractconf"]["auroc"], 2)
    (('extractconf',), 1.0)
    """
    d = Path(out_dir)
    if not d.is_dir():
        raise DatasetError(f"{d}: not a folder; pass the --out folder of `extractconf evaluate`")
    notes: list[str] = []
    raw = _read_json(d / METRICS_FILE, notes)
    metrics = _find_methods(raw)
    meta = {
        k: v
        for k, v in (raw.items() if isinstance(raw, Mapping) else ())
        if k not in metrics and not (isinstance(v, Mapping) and _find_methods(v) == metrics)
    }
    rows = _read_rows(d / SCORES_FILE, notes)
    if not metrics and not rows:
        raise DatasetError(
            f"{d}: neither {METRICS_FILE} nor a usable {SCORES_FILE}; "
            "run `extractconf evaluate DATASET --runs RUNS --out` into this folder first"
        )
    methods = _score_columns(rows, metrics)
    if not metrics:
        notes.append(f"{METRICS_FILE} missing: metrics recomputed from {SCORES_FILE}")
        y = np.array([int(bool(r["correct"])) for r in rows])
        for m in methods:
            s = np.array([_num(r.get(m)) for r in rows])
            metrics[m] = evaluate_scores(y, s)
    if not rows:
        notes.append(f"{SCORES_FILE} missing: only the metrics table can be shown")
    importance = _read_json(d / IMPORTANCE_FILE, notes)
    if importance is not None and not (
        isinstance(importance, Mapping) and all(_is_number(v) for v in importance.values())
    ):
        notes.append(f"{IMPORTANCE_FILE}: expected {{feature: mean |SHAP|}}; section skipped")
        importance = None
    thresholds = _read_thresholds(d / THRESHOLDS_FILE, notes)
    shap_values = _read_json(d / SHAP_FILE, notes)
    if shap_values is not None and not (
        isinstance(shap_values, Mapping)
        and {"feature_names", "values", "base_values", "data"} <= set(shap_values)
    ):
        notes.append(f"{SHAP_FILE}: expected feature_names, values, base_values, data; skipped")
        shap_values = None
    monitor = _read_json(d / MONITOR_FILE, notes)
    if monitor is not None and not (isinstance(monitor, Mapping) and "verdict" in monitor):
        notes.append(f"{MONITOR_FILE}: not an `extractconf monitor` report; skipped")
        monitor = None
    return ReportInputs(
        out_dir=d,
        metrics=metrics,
        rows=rows,
        methods=methods,
        importance=None
        if importance is None
        else {str(k): float(v) for k, v in importance.items()},
        thresholds=thresholds,
        shap=shap_values,
        monitor=None if monitor is None else dict(monitor),
        meta=meta,
        notes=tuple(notes),
    )
