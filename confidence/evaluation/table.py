"""Labelled feature tables: datasets (gold labels) joined with recorded runs (LLM readings).

:func:`build_table` joins dataset folders (gold labels, document files) with ``runs.jsonl``
records (the LLM readings) into one row per judged (document, field): the feature row, the
reported value, its correctness under :func:`confidence.datasets.matching.is_correct`, and every
baseline score the runs allow. Documents are ingested through :class:`~confidence.documents.cache.
DocumentCache`, so a second training or evaluation run does not OCR again.

Only labelled fields are judged (a missing key in ``labels.jsonl`` = unlabelled). Documents
without a run, whose run failed, or whose file cannot be read are skipped and counted in
:attr:`LabelledTable.skipped`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from confidence.calls.second_reading import add_library_mapper, drop_mapper, foreign_values
from confidence.datasets import matching
from confidence.datasets.folder import Dataset
from confidence.documents.cache import DocumentCache
from confidence.errors import DatasetError
from confidence.evaluation.baselines import BASELINES, baseline_scores, llm_calls
from confidence.features.build import RecordRows, record_rows
from confidence.readings import RunRecord, document_status
from confidence.types import Document

__all__ = ["READINGS", "LabelledTable", "build_table"]

READINGS: tuple[str, ...] = ("recorded", "library_mapper", "hunter_only", "foreign_values")
"""Which readings of each run a table is built on: the recorded ones; the Hunter with the
library's layout Mapper as second reading (as :meth:`~confidence.engine.ConfidenceEngine.score`
does for one-reading records with documents); the Hunter alone; the Hunter with some of its
values taken from another document of the same chunk
(:func:`~confidence.calls.second_reading.foreign_values`: a pipeline's confident values that
are not on the page), with the library's Mapper."""

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
            pick(r.instructions),
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
        return RecordRows(np.empty((0, len(FEATURE_NAMES))), [], [], [], [], [], [], [], [], [])
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
    readings: str = "recorded",
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
    readings : {"recorded", "library_mapper", "hunter_only"}
        Readings the rows are built on (:data:`READINGS`); the last two turn every run into a
        one-reading record first, as a third-party pipeline would send it.
    """
    if readings not in READINGS:
        raise ValueError(f"readings={readings!r}; use one of: {', '.join(READINGS)}")
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    cache = cache or DocumentCache()
    seen: set[str] = set()
    parts, ys, golds = [], [], []
    base: dict[str, list[float]] = {k: [] for k in BASELINES}
    calls: dict[str, list[float]] = {}
    skipped: Counter = Counter()
    total = sum(len(ds) for ds in datasets)
    bar = tqdm(total=total, unit="doc", desc="features", disable=not progress)
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
            elif document_status(run)[0] == "error":
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
            kept = _with_readings(kept, readings, schema, docs)
            rows = record_rows([run for _, run in kept], schema, docs)
            gold_of = {r.doc_id: r.fields for r, _ in kept}
            run_of = {run.doc_id: run for _, run in kept}
            keep = np.zeros(len(rows), dtype=bool)
            for i in range(len(rows)):
                g = gold_of[rows.doc_ids[i]]
                name = rows.fields[i]
                if name not in g or rows.status[i] == "error":
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


def _with_readings(kept: list, readings: str, schema, docs: dict[str, Document]) -> list:
    if readings == "recorded":
        return kept
    runs = drop_mapper(run for _, run in kept)
    if readings == "foreign_values":
        runs = foreign_values(runs)
    if readings in ("library_mapper", "foreign_values"):
        runs = add_library_mapper(runs, schema, docs)
    return [(r, run) for (r, _), run in zip(kept, runs, strict=True)]


def _take(rows: RecordRows, keep: np.ndarray) -> RecordRows:
    idx = np.flatnonzero(keep)
    lists = [[getattr(rows, a)[i] for i in idx] for a in list(RecordRows.__dataclass_fields__)[1:]]
    return RecordRows(rows.X[idx], *lists)
