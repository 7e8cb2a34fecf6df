"""Honest (cross-fitted) confidences: every row scored by an engine that never saw its document.

Documents are split into K folds; an engine (fusion, calibrator and thresholds) is trained on
K-1 folds and scores the held-out fold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import GroupKFold

from confidence.engine import ConfidenceEngine
from confidence.errors import DatasetError
from confidence.evaluation.table import LabelledTable
from confidence.scores import FieldScore

__all__ = ["CrossFit", "cross_fit", "fit_engine"]


@dataclass(frozen=True)
class CrossFit:
    """Out-of-fold results, one entry per table row.

    Attributes
    ----------
    confidence : ndarray of float
    accepted : ndarray of bool
    contributions : ndarray of shape (n, n_features + 1) or None
        Fusion TreeSHAP contributions (last column the base value) when asked for.
    raw : ndarray of float or None
        The fused score before calibration (the fold engine's fusion ``predict_proba``).
    scores : list of FieldScore or None
        Each row as its fold engine routed it (decision, threshold, threshold source and,
        when ``explain``, reasons).
    """

    confidence: np.ndarray
    accepted: np.ndarray
    contributions: np.ndarray | None = None
    raw: np.ndarray | None = None
    scores: list[FieldScore] | None = None


def fit_engine(
    table: LabelledTable, *, extra: Sequence[LabelledTable] = (), **params
) -> ConfidenceEngine:
    """Fit a :class:`ConfidenceEngine` on a whole table.

    ``extra`` tables hold the same documents read another way (``build_table(readings=...)``);
    their rows join the fusion training only (``ConfidenceEngine.fit(fusion_extra=...)``).
    """
    _check_trainable(table)
    r = table.rows
    more = [t for t in extra if len(t)]
    fusion_extra = None
    if more:
        fusion_extra = (
            np.vstack([t.rows.X for t in more]),
            np.concatenate([t.y for t in more]),
            np.asarray([d for t in more for d in t.rows.doc_ids]),
            np.asarray([f for t in more for f in t.rows.field_types], dtype=object),
        )
    return ConfidenceEngine(**params).fit(
        r.X,
        table.y,
        groups=np.asarray(r.doc_ids),
        fields=r.fields,
        field_types=r.field_types,
        fusion_extra=fusion_extra,
    )


def _check_trainable(table: LabelledTable) -> None:
    if len(table) == 0:
        why = ", ".join(f"{v} {k}" for k, v in table.skipped.items()) or "no documents"
        raise DatasetError(f"no judged fields to train on ({why}); check the dataset and --runs")


def cross_fit(
    table: LabelledTable, *, n_splits: int = 5, seed: int = 0, explain: bool = False, **params
) -> CrossFit:
    """Out-of-fold confidence and accept decisions for every row (doc-grouped K-fold).

    Each fold is scored by an engine (fusion, calibrator and thresholds) trained on the other
    folds only; ``explain`` also keeps that engine's feature contributions and reasons of each
    row. ``params`` go to :class:`~confidence.engine.ConfidenceEngine`.
    """
    _check_trainable(table)
    groups = np.asarray(table.rows.doc_ids)
    n_docs = len(np.unique(groups))
    k = min(n_splits, n_docs)
    if k < 2:
        raise DatasetError(f"cross-fitting needs at least 2 documents, got {n_docs}")
    # shuffle documents deterministically, then GroupKFold keeps each document in one fold
    uniq = np.unique(groups)
    rank = dict(zip(uniq, np.random.default_rng(seed).permutation(len(uniq)), strict=True))
    order_key = np.array([rank[g] for g in groups])
    conf = np.full(len(table), np.nan)
    acc = np.zeros(len(table), dtype=bool)
    contrib = np.full((len(table), table.rows.X.shape[1] + 1), np.nan) if explain else None
    raw = np.full(len(table), np.nan)
    scores: list[FieldScore | None] = [None] * len(table)
    for train, test in GroupKFold(n_splits=k).split(table.rows.X, table.y, order_key):
        eng = fit_engine(table.subset(_mask(len(table), train)), random_state=seed, **params)
        sub = table.subset(_mask(len(table), test))
        conf[test] = eng.predict_confidence(sub.rows.X)
        raw[test] = eng.fused_scores(sub.rows.X)
        routed = eng.score_rows(sub.rows, explain=explain)
        acc[test] = [s.decision == "accept" for s in routed]
        for i, s in zip(test, routed, strict=True):
            scores[i] = s
        if contrib is not None:
            contrib[test] = eng.contributions(sub.rows.X)
    return CrossFit(conf, acc, contrib, raw, scores)  # type: ignore[arg-type]


def _mask(n: int, idx: Iterable[int]) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[list(idx)] = True
    return m
