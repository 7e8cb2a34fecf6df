"""The evaluation tables: ``metrics.json`` content and ``scores.jsonl`` rows.

:func:`evaluate_table` puts extractconf's confidences and every baseline the runs allow side by
side on the same judged fields (DESIGN.md "metrics.json" and "scores.jsonl"); missing baseline
scores are filled as :func:`~confidence.evaluation.baselines.fill_missing` documents.
"""

from __future__ import annotations

import numpy as np

from confidence.calibration import evaluate_scores
from confidence.calibration.metrics import aurc_oracle
from confidence.evaluation.baselines import fill_missing
from confidence.evaluation.table import LabelledTable

__all__ = ["evaluate_table", "routing_summary"]


def routing_summary(table: LabelledTable, accepted: np.ndarray) -> dict[str, float | None]:
    """Coverage, accuracy of the accepted fields and share of documents fully accepted.

    Examples
    --------
    >>> from confidence.evaluation.table import LabelledTable
    >>> from confidence.features.build import RecordRows
    >>> rows = RecordRows(np.zeros((3, 1)), ["a", "a", "b"], *[["x"] * 3] * 5, ["ok"] * 3,
    ...                   [None] * 3, [None] * 3)
    >>> t = LabelledTable(rows, np.array([1, 0, 1]), [None] * 3, {}, {})
    >>> routing_summary(t, np.array([True, False, True]))["straight_through_documents"]
    0.5
    """
    n_acc = int(accepted.sum())
    docs = np.asarray(table.rows.doc_ids)
    all_acc = {d: True for d in docs}
    for d, a in zip(docs, accepted, strict=True):
        all_acc[d] = all_acc[d] and bool(a)
    return {
        "coverage": float(accepted.mean()),
        "accuracy_of_accepted": float(table.y[accepted].mean()) if n_acc else None,
        "straight_through_documents": float(np.mean(list(all_acc.values()))),
    }


def evaluate_table(
    table: LabelledTable, conf: np.ndarray, accepted: np.ndarray
) -> tuple[dict, list[dict]]:
    """metrics.json content and scores.jsonl rows for a table and extractconf's scores.

    Parameters
    ----------
    table : LabelledTable
    conf : ndarray of shape (len(table),)
        extractconf's confidence of each row.
    accepted : ndarray of bool
        Whether each row was accepted by its threshold.

    Returns
    -------
    metrics : dict
        ``{"methods": {method: metrics}, "routing": routing_summary}``.
    rows : list of dict
        ``doc_id, field, value, correct`` and one score column per method.
    """
    cols, missing = fill_missing(table.baselines)
    cols = {"extractconf": conf, **cols}
    methods = {}
    for name, s in cols.items():
        m = evaluate_scores(table.y, s)
        m["llm_calls_per_doc"] = table.calls.get(name)
        m["missing_share"] = missing.get(name, 0.0)
        methods[name] = m
    oracle = float(table.y.mean())  # an oracle accepts every correct field and nothing else
    # The oracle's AURC (correct fields ranked first) is the floor of every method's AURC;
    # excess AURC (E-AURC, Geifman et al. 2019) removes it so domains with different failure
    # rates compare.
    aurc_floor = aurc_oracle(table.y) if len(table) else None
    for m in methods.values():
        m["coverage_at_accuracy_0.99_of_oracle"] = (
            m["coverage_at_accuracy_0.99"] / oracle if oracle > 0 else None
        )
        m["aurc_oracle"] = aurc_floor
        m["excess_aurc"] = (
            m["aurc"] - aurc_floor
            if aurc_floor is not None and m["aurc"] is not None and np.isfinite(m["aurc"])
            else None
        )
    rows = []
    r = table.rows
    for i in range(len(table)):
        row = {"doc_id": r.doc_ids[i], "field": r.fields[i], "value": r.values[i]}
        row["correct"] = bool(table.y[i])
        for name, s in cols.items():
            row[name] = float(s[i])
        rows.append(row)
    return {"methods": methods, "routing": routing_summary(table, accepted)}, rows
