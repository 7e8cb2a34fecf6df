"""Labelled feature tables from datasets + recorded runs, and honest (cross-fitted) evaluation.

:func:`build_table` joins dataset folders (gold labels, document files) with ``runs.jsonl``
records (the LLM readings) into one row per judged (document, field): the feature row, the
reported value, its correctness under :func:`confidence.datasets.matching.is_correct`, and every
baseline score the runs allow. Documents are ingested through :class:`~confidence.documents.cache.
DocumentCache`, so a second training or evaluation run does not OCR again.

Only labelled fields are judged (a missing key in ``labels.jsonl`` = unlabelled). Documents
without a run, whose run failed, or whose file cannot be read are skipped and counted in
:attr:`LabelledTable.skipped`.

:func:`cross_fit` scores every row with an engine that never saw its document: documents are
split into K folds, an engine is trained on K-1 folds and scores the held-out fold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import GroupKFold

from confidence.baselines import BASELINES, baseline_scores, llm_calls
from confidence.datasets import matching
from confidence.datasets.folder import Dataset
from confidence.documents.cache import DocumentCache
from confidence.engine import ConfidenceEngine
from confidence.errors import DatasetError
from confidence.features.build import RecordRows, record_rows
from confidence.readings import RunRecord
from confidence.types import Document

__all__ = ["LabelledTable", "build_table", "cross_fit"]

_CHUNK = 32  # documents featurised at a time: bounds memory on large datasets


@dataclass
class LabelledTable:
    """Judged rows: ``rows.X[i]`` with label ``y[i]`` (1 = the reported value is correct).

    Attributes
    ----------
    rows : RecordRows
    y : ndarray of int
    gold : list of str or None
    baselines : dict method -> ndarray (NaN where the run cannot give that baseline)
    calls : dict method -> mean LLM calls per document
    skipped : Counter of reasons documents were left out
    """

    rows: RecordRows
    y: np.ndarray
    gold: list
    baselines: dict[str, np.ndarray]
    calls: dict[str, float]
    skipped: Counter = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.y)

    @property
    def n_documents(self) -> int:
        return len(set(self.rows.doc_ids))

    def subset(self, mask: np.ndarray) -> LabelledTable:
        idx = np.flatnonzero(mask)
        r = self.rows

        def pick(xs):
            return [xs[i] for i in idx]

        rows = RecordRows(
            r.X[idx],
            pick(r.doc_ids),
            pick(r.fields),
            pick(r.field_types),
            pick(r.values),
            pick(r.hunter_values),
            pick(r.mapper_values),
            pick(r.status),
            pick(r.error),
        )
        return LabelledTable(
            rows,
            self.y[idx],
            pick(self.gold),
            {k: v[idx] for k, v in self.baselines.items()},
            dict(self.calls),
            Counter(self.skipped),
        )


def _concat(parts: list[RecordRows]) -> RecordRows:
    from confidence.features.build import FEATURE_NAMES

    if not parts:
        return RecordRows(np.empty((0, len(FEATURE_NAMES))), [], [], [], [], [], [], [], [])
    X = np.vstack([p.X for p in parts])
    names = list(RecordRows.__dataclass_fields__)[1:]
    lists = [[v for p in parts for v in getattr(p, a)] for a in names]
    return RecordRows(X, *lists)


def build_table(
    datasets: Dataset | Sequence[Dataset],
    runs: dict[str, RunRecord],
    *,
    cache: DocumentCache | None = None,
    use_documents: bool = True,
    n_jobs: int = 1,
    progress: bool = False,
) -> LabelledTable:
    """Join datasets and runs into a :class:`LabelledTable`.

    Parameters
    ----------
    datasets : Dataset or list of Dataset
    runs : dict doc_id -> RunRecord (see :func:`confidence.records.load_runs`)
    cache : DocumentCache, optional
        Where ingested documents are cached (default location when None).
    use_documents : bool, default True
        False skips ingestion: page features are NaN (as when scoring third-party extractions).
    n_jobs : int
        Ingestion processes.
    progress : bool
        Show a progress bar.
    """
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    cache = cache or DocumentCache()
    seen: set[str] = set()
    parts, ys, golds = [], [], []
    base: dict[str, list[float]] = {k: [] for k in BASELINES}
    calls: dict[str, list[float]] = {}
    skipped: Counter = Counter()
    total = sum(len(ds) for ds in datasets)
    bar = _bar(total, progress)
    for ds in datasets:
        schema = ds.schema
        records = []
        for rec in ds.records:
            if rec.doc_id in seen:
                raise DatasetError(f"{ds.path}: doc_id {rec.doc_id!r} repeats across datasets")
            seen.add(rec.doc_id)
            run = runs.get(rec.doc_id)
            if run is None:
                skipped["no run"] += 1
            elif run.status == "error":
                skipped["run failed"] += 1
            elif not any(n in schema for n in rec.fields):
                skipped["no labelled field"] += 1
            else:
                records.append((rec, run))
        for start in range(0, len(records), _CHUNK):
            chunk = records[start : start + _CHUNK]
            docs: dict[str, Document] = {}
            if use_documents:
                loaded = cache.load_many(
                    (ds.path_of(r) for r, _ in chunk), (r.doc_id for r, _ in chunk), n_jobs
                )
                for (rec, _), doc in zip(chunk, loaded, strict=True):
                    if isinstance(doc, Document):
                        docs[rec.doc_id] = doc
            kept = [(r, run) for r, run in chunk if not use_documents or r.doc_id in docs]
            if len(kept) < len(chunk):
                skipped["unreadable document"] += len(chunk) - len(kept)
            rows = record_rows([run for _, run in kept], schema, docs)
            gold_of = {r.doc_id: r.fields for r, _ in kept}
            run_of = {run.doc_id: run for _, run in kept}
            keep = np.zeros(len(rows), dtype=bool)
            for i in range(len(rows)):
                g = gold_of[rows.doc_ids[i]]
                name = rows.fields[i]
                if name not in g or rows.status[i] != "ok":
                    continue
                keep[i] = True
                ys.append(int(matching.is_correct(rows.field_types[i], rows.values[i], g[name])))
                golds.append(g[name])
                for k, v in baseline_scores(run_of[rows.doc_ids[i]], schema[name]).items():
                    base[k].append(v)
            for _, run in kept:
                for k, v in llm_calls(run).items():
                    calls.setdefault(k, []).append(v)
            parts.append(_take(rows, keep))
            bar.update(len(chunk))
        bar.update(len(ds) - len(records))
    bar.close()
    return LabelledTable(
        _concat(parts),
        np.asarray(ys, dtype=int),
        golds,
        {k: np.asarray(v, dtype=float) for k, v in base.items()},
        {k: float(np.mean(v)) for k, v in calls.items()},
        skipped,
    )


def _take(rows: RecordRows, keep: np.ndarray) -> RecordRows:
    idx = np.flatnonzero(keep)
    lists = [[getattr(rows, a)[i] for i in idx] for a in list(RecordRows.__dataclass_fields__)[1:]]
    return RecordRows(rows.X[idx], *lists)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, progress: bool):
    if not progress:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", desc="features")


def fit_engine(table: LabelledTable, **params) -> ConfidenceEngine:
    """Fit a :class:`ConfidenceEngine` on a whole table."""
    _check_trainable(table)
    r = table.rows
    return ConfidenceEngine(**params).fit(
        r.X, table.y, groups=np.asarray(r.doc_ids), fields=r.fields, field_types=r.field_types
    )


def _check_trainable(table: LabelledTable) -> None:
    if len(table) == 0:
        why = ", ".join(f"{v} {k}" for k, v in table.skipped.items()) or "no documents"
        raise DatasetError(f"no judged fields to train on ({why}); check the dataset and --runs")


def cross_fit(
    table: LabelledTable, *, n_splits: int = 5, seed: int = 0, **params
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold confidence and accept decisions for every row (doc-grouped K-fold).

    Returns ``(confidence, accepted)``; each fold is scored by an engine (fusion, calibrator and
    thresholds) trained on the other folds only.
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
    for train, test in GroupKFold(n_splits=k).split(table.rows.X, table.y, order_key):
        eng = fit_engine(table.subset(_mask(len(table), train)), random_state=seed, **params)
        sub = table.subset(_mask(len(table), test))
        conf[test] = eng.predict_confidence(sub.rows.X)
        acc[test] = [s.decision == "accept" for s in eng.route_rows(sub.rows, explain=False)]
    return conf, acc


def _mask(n: int, idx: Iterable[int]) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[list(idx)] = True
    return m
