"""``evaluate``: extractconf and the baselines side by side on the same judged fields.

Without a model the engine is cross-fitted (every document scored by an engine that never saw
it); with one, that engine scores every document as it is. :meth:`Evaluation.write` writes the
files ``extractconf evaluate`` promises and :mod:`confidence.report` reads: ``metrics.json``,
``scores.jsonl``, ``feature_importance.json`` and ``shap.json`` (feature contributions of up to
:data:`SHAP_ROWS` fields, for shap's beeswarm and waterfall plots), and with a model its
``thresholds.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from confidence.calibration import ThresholdSelector
from confidence.engine import ConfidenceEngine
from confidence.errors import DatasetError
from confidence.evaluation.crossfit import cross_fit
from confidence.evaluation.table import LabelledTable
from confidence.evaluation.tables import evaluate_table
from confidence.features.build import FEATURE_NAMES
from confidence.jsonsafe import jsonable

__all__ = ["SHAP_ROWS", "Evaluation", "evaluate"]

SHAP_ROWS = 1000
"""Rows of ``shap.json`` (an even sample of the judged fields): enough for a beeswarm plot."""


@dataclass
class Evaluation:
    """What :func:`evaluate` measured.

    Attributes
    ----------
    metrics : dict
        The content of ``metrics.json``.
    rows : list of dict
        The rows of ``scores.jsonl``; each also carries ``"extra"``: ``field_type``, ``gold``,
        ``extractconf_raw`` (the fused score before calibration), and the routing of the
        engine that scored the row (the model, or the row's cross-fitting fold engine):
        ``decision``, ``threshold``, ``threshold_source`` and ``reasons``.
    X : ndarray of shape (n, n_features)
        The feature rows.
    contributions : ndarray of shape (n, n_features + 1)
        Fusion contributions of every row (last column the base value).
    thresholds : ThresholdSelector or None
        The model's threshold selector, when a model was given.
    """

    metrics: dict[str, Any]
    rows: list[dict[str, Any]]
    X: np.ndarray
    contributions: np.ndarray
    thresholds: ThresholdSelector | None = None

    def write(self, out_dir: str | Path) -> Path:
        """Write the evaluation files into ``out_dir`` (created if needed)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        _dump(out / "metrics.json", self.metrics)
        with (out / "scores.jsonl").open("w", encoding="utf-8") as fh:
            for row in self.rows:
                fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        C = self.contributions
        ok = np.isfinite(C).all(axis=1)
        _dump(
            out / "feature_importance.json",
            dict(zip(FEATURE_NAMES, np.abs(C[ok, :-1]).mean(axis=0).tolist(), strict=True)),
        )
        idx = np.flatnonzero(ok)
        if len(idx) > SHAP_ROWS:
            idx = idx[np.linspace(0, len(idx) - 1, SHAP_ROWS).round().astype(int)]
        _dump(
            out / "shap.json",
            {
                "feature_names": list(FEATURE_NAMES),
                "rows": [int(i) for i in idx],
                "values": C[idx, :-1].tolist(),
                "base_values": C[idx, -1].tolist(),
                "data": jsonable(self.X[idx].tolist()),
            },
        )
        if self.thresholds is not None:
            self.thresholds.save(out / "thresholds.json")
        return out

    def summary(self) -> str:
        """The printed table: one line per method (by AUROC) and the routing."""
        m, rt = self.metrics, self.metrics["routing"]
        lines = [
            f"{m['evaluation']}: {m['n_documents']} documents, {m['n_fields']} fields, failure "
            f"rate {m['methods']['extractconf']['failure_rate']:.1%}",
            f"{'method':18} {'auroc':>6} {'aurc':>7} {'cov@99':>7} {'ece':>6} {'calls':>6}",
        ]
        for name, x in sorted(m["methods"].items(), key=lambda kv: -np.nan_to_num(kv[1]["auroc"])):
            ece = "-" if x["ece"] is None else f"{x['ece']:.3f}"
            calls = "-" if x["llm_calls_per_doc"] is None else f"{x['llm_calls_per_doc']:.1f}"
            lines.append(
                f"{name:18} {x['auroc']:6.3f} {x['aurc']:7.4f} "
                f"{x['coverage_at_accuracy_0.99']:7.3f} {ece:>6} {calls:>6}"
            )
        lines.append(
            f"routing: coverage {rt['coverage']:.1%}, straight-through documents "
            f"{rt['straight_through_documents']:.1%}"
        )
        return "\n".join(lines)


def _dump(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(jsonable(obj), indent=2, allow_nan=False) + "\n")


def evaluate(
    table: LabelledTable,
    *,
    model: ConfidenceEngine | None = None,
    folds: int = 5,
    seed: int = 0,
    **params,
) -> Evaluation:
    """Evaluate extractconf and the baselines on a labelled table.

    Parameters
    ----------
    table : LabelledTable
        From :func:`~confidence.evaluation.table.build_table`.
    model : ConfidenceEngine, optional
        Score with this engine; None cross-fits engines over ``folds`` document folds.
    folds, seed : int
        Cross-fitting folds and seed.
    **params
        :class:`~confidence.engine.ConfidenceEngine` parameters of the cross-fitted engines
        (``calibrator``, ``target_accuracy``, ``confidence_level``, ...).

    Returns
    -------
    Evaluation
    """
    if len(table) == 0:
        why = ", ".join(f"{v} {k}" for k, v in table.skipped.items()) or "empty dataset"
        raise DatasetError(f"no judged fields ({why}); check the dataset and the runs")
    thresholds = None
    if model is None:
        if folds < 2:
            raise DatasetError(f"folds={folds}: pass at least 2")
        cf = cross_fit(table, n_splits=folds, seed=seed, explain=True, **params)
        conf, accepted, contrib, raw, scored = (
            cf.confidence,
            cf.accepted,
            cf.contributions,
            cf.raw,
            cf.scores,
        )
        how = f"cross-fitted, {min(folds, table.n_documents)} document folds"
    else:
        conf = model.predict_confidence(table.rows.X)
        raw = model.fused_scores(table.rows.X)
        scored = model.score_rows(table.rows)
        accepted = np.array([s.decision == "accept" for s in scored], dtype=bool)
        contrib = model.contributions(table.rows.X)
        thresholds = model.thresholds_
        how = "model"
    # the report's inputs: reliability before calibration, per-field thresholds, reasons
    extra = [
        {
            "field_type": t,
            "gold": g,
            "extractconf_raw": float(r),
            "threshold": sc.threshold,
            "threshold_source": sc.threshold_source,
            "decision": sc.decision,
            "reasons": list(sc.reasons),
        }
        for t, g, r, sc in zip(table.rows.field_types, table.gold, raw, scored, strict=True)
    ]
    metrics, rows = evaluate_table(table, conf, accepted)
    for row, e in zip(rows, extra, strict=True):  # the report's per-field and reasons inputs
        row["extra"] = e
    metrics.update(
        {
            "evaluation": how,
            "n_documents": table.n_documents,
            "n_fields": len(table),
            "skipped_documents": dict(table.skipped),
            "missing_fill": 0.0,
        }
    )
    return Evaluation(metrics, rows, table.rows.X, contrib, thresholds)
