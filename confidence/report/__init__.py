"""The evaluation report: one self-contained ``report.html`` beside the evaluate output.

:func:`build_report` reads only files in the evaluate output folder (the contract, also in
``docs/report.md``):

``metrics.json`` (required unless ``scores.jsonl`` is there)
    ``{method: {auroc, aurc, accuracy_at_coverage_0.8, coverage_at_accuracy_0.99, ece, brier,
    n_fields, failure_rate, llm_calls_per_doc}}``, at the top level or nested under any key.
    Recomputed from ``scores.jsonl`` when missing.
``scores.jsonl``
    One row per judged (doc_id, field): ``doc_id``, ``field``, ``value``, ``correct`` and one
    numeric column per method (``extractconf``, ``logprob_mean``, ...; higher = more likely
    correct). Optional keys, at the top level or inside a nested ``"extra"`` object:
    ``field_type``, ``extractconf_raw`` (uncalibrated fused score: reliability diagram before
    calibration), ``threshold``, ``threshold_source``, ``decision``, ``reasons`` (list of str),
    ``gold``, ``group`` (the document group of ``extractconf tune --groups``).
``feature_importance.json`` (optional)
    ``{feature_name: mean |SHAP|}``.
``thresholds.json`` (optional)
    :meth:`confidence.calibration.ThresholdSelector.save` output (checked when read).
``shap.json`` (optional)
    ``{"feature_names", "rows", "values", "base_values", "data"}``: fusion contributions
    (log-odds) of a sample of the rows of ``scores.jsonl`` (``rows`` = their line indices), for
    shap's own beeswarm and waterfall plots.
``monitor.json`` (optional)
    An ``extractconf monitor --out`` report: rendered as the monitoring section (verdict,
    fingerprint changes, audited accuracy against the target, per-field tests).

Sections: metrics table (every method), reliability diagrams before/after calibration,
risk-coverage curves (every method on one plot), coverage at 95/98/99/99.5% accuracy, per-field
table, per-group coverage and accuracy (rows with a ``group``, thresholds tuned with
``--groups``), top SHAP features with shap's beeswarm and a waterfall of the most confident
wrong field, the ten most confident wrong fields with their reasons, monitoring (drift and
guarantee verdict of ``monitor.json``). A section whose input is
missing shows a note instead; images are inline base64 PNGs, so the file works offline
and can be mailed as is.

Examples
--------
>>> import json, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"doc_id": f"d{i}", "field": "total", "correct": i % 4 != 0,
...          "extractconf": (i % 4 != 0) * 0.5 + i / 40} for i in range(20)]
>>> _ = (d / "scores.jsonl").write_text("\\n".join(json.dumps(r) for r in rows))
>>> build_report(d).name
'report.html'
"""

from __future__ import annotations

from pathlib import Path

from confidence.report.html import SECTIONS, TARGET_ACCURACIES, render
from confidence.report.inputs import ReportInputs, load_inputs

__all__ = [
    "REPORT_FILE",
    "SECTIONS",
    "TARGET_ACCURACIES",
    "ReportInputs",
    "build_report",
    "load_inputs",
]

REPORT_FILE = "report.html"


def build_report(out_dir: str | Path, *, path: str | Path | None = None) -> Path:
    """Write ``report.html`` for an ``extractconf evaluate`` output folder.

    Parameters
    ----------
    out_dir : str or Path
        The folder ``extractconf evaluate --out`` wrote.
    path : str or Path, optional
        Where to write the report; ``out_dir / "report.html"`` by default.

    Returns
    -------
    Path
        The written file.

    Raises
    ------
    confidence.errors.DatasetError
        When ``out_dir`` holds neither ``metrics.json`` nor a usable ``scores.jsonl``.
    ImportError
        When matplotlib is missing (``pip install extractconf[report]``).
    """
    inp = load_inputs(out_dir)
    target = Path(path) if path is not None else inp.out_dir / REPORT_FILE
    html = render(inp)
    # Write beside, then rename: a reader never sees half a report.
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(target)
    return target
