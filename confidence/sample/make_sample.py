"""Rebuild the bundled sample (``python -m confidence.sample.make_sample``; minutes, offline).

What it writes into this folder (see ``README.md`` here):

* ``dataset/`` — three synthetic invoices (schema.json, labels.jsonl, files/), one a scan;
* ``runs.jsonl.gz`` — their Hunter + Mapper runs recorded with the embedded SmolLM2 model
  (``--llm local``; slow: about two minutes per document on a loaded 2-core machine);
* ``tuning_scores.jsonl.gz`` — a cross-fitted evaluation table of ``--n`` further synthetic
  invoices (``doc_id, field, field_type, value, correct, extractconf, group``; ``group`` is the
  document's ``source`` group, scan or digital), used by the threshold notebook. To stay fast
  and offline these documents are read *without* an LLM: the "Hunter" is the best-ranked
  candidate of :func:`confidence.calls.candidates.document_candidates` and the Mapper the
  layout-only label/value reading of :func:`confidence.calls.mapper.run_mapper`; the documents
  are really rendered, OCR-ed and featurised, and the confidence engine is trained and
  calibrated on other documents than the ones it scores;
* ``model/`` — a small :class:`~confidence.engine.ConfidenceEngine` trained on those
  heuristic runs, the fallback of the quickstart notebook when no default model is installed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _synth(out: Path, n: int, seed: int, scan_ratio: float) -> None:
    from confidence.datasets.synthetic import generate

    generate(out, n, seed=seed, scan_ratio=scan_ratio, languages=("en",), n_jobs=1)


def heuristic_run(doc, schema):
    """A RunRecord read without any LLM: top candidate (Hunter) + layout Mapper."""
    from confidence.calls.candidates import document_candidates
    from confidence.calls.mapper import run_mapper
    from confidence.documents.lines import document_lines
    from confidence.readings import CallResult, FieldReading, RunRecord

    lines = document_lines(doc)
    cands = document_candidates(lines, schema)
    fields = {
        name: FieldReading(
            c[0].value, None, raw=lines[c[0].line].text, line=c[0].line, n_candidates=len(c)
        )
        for name, c in cands.items()
        if c
    }
    hunter = CallResult("hunter", fields, mode="top-candidate", n_calls=0)
    return RunRecord(doc.doc_id, hunter, run_mapper(schema, lines, None), model="heuristic")


def build_tuning(n: int, seed: int, work: Path) -> None:
    import numpy as np

    from confidence.calibration.groups import Grouping
    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.evaluation import build_table, cross_fit, fit_engine

    ds_dir = work / "tuning"
    _synth(ds_dir, n, seed, 0.3)
    ds = Dataset.open(ds_dir)
    cache = DocumentCache()
    runs, groups = {}, {}
    for rec in ds.records:
        doc = cache.load(ds.path_of(rec), rec.doc_id)
        runs[rec.doc_id] = heuristic_run(doc, ds.schema)
        groups[rec.doc_id] = Grouping("source").group_of(doc)
    table = build_table(ds, runs, cache=cache)
    params = {"target_accuracy": 0.9, "confidence_level": 0.9}
    conf = cross_fit(table, n_splits=5, seed=seed, **params).confidence
    r = table.rows
    with gzip.open(HERE / "tuning_scores.jsonl.gz", "wt", encoding="utf-8") as fh:
        for i in range(len(table)):
            row = {
                "doc_id": r.doc_ids[i],
                "field": r.fields[i],
                "field_type": r.field_types[i],
                "value": r.values[i],
                "correct": bool(table.y[i]),
                "extractconf": round(float(conf[i]), 6),
                "group": groups[r.doc_ids[i]],
            }
            fh.write(json.dumps(row) + "\n")
    model = HERE / "model"
    shutil.rmtree(model, ignore_errors=True)
    fit_engine(table, random_state=seed, **params).save(model)
    print(
        f"tuning table: {len(table)} fields, {table.n_documents} documents, failure rate "
        f"{1 - np.mean(table.y):.1%}"
    )


def build_quickstart(seed: int, work: Path, llm: str) -> None:
    from confidence.calls.hunter import run_hunter
    from confidence.calls.mapper import run_mapper
    from confidence.datasets.folder import Dataset
    from confidence.documents import load_document
    from confidence.documents.lines import document_lines
    from confidence.llm import make_client
    from confidence.readings import RunRecord

    src = work / "quick"
    _synth(src, 3, seed, 0.34)
    ds = Dataset.open(src)
    out = HERE / "dataset"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, out)
    client = make_client(llm)
    with gzip.open(HERE / "runs.jsonl.gz", "wt", encoding="utf-8") as fh:
        for rec in ds.records:
            t = time.perf_counter()
            lines = document_lines(load_document(ds.path_of(rec), doc_id=rec.doc_id))
            hunter = run_hunter(ds.schema, lines, client)
            mapper = run_mapper(ds.schema, lines, client)
            run = RunRecord(
                rec.doc_id, hunter, mapper, model=llm, seconds=round(time.perf_counter() - t, 2)
            )
            fh.write(json.dumps(run.to_dict()) + "\n")
            fh.flush()
            print(f"{rec.doc_id}: {run.seconds:.0f} s", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("all", "tuning", "quickstart"), default="all")
    p.add_argument("--n", type=int, default=240, help="documents in the tuning table")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--llm", default="local")
    args = p.parse_args(argv)
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("all", "quickstart"):
            build_quickstart(args.seed, Path(tmp), args.llm)
        if args.part in ("all", "tuning"):
            build_tuning(args.n, args.seed + 1, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
