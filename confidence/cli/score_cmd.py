"""``extractconf score``: documents in, one scored row per (document, field) out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from confidence.cli._engine_common import add_document_args, add_model_arg

EPILOG = """\
Full pipeline: ingest each document (PDF text layer or OCR), read it with the Hunter and the
Mapper (--llm), compute the features, fuse, calibrate and route every schema field to accept or
review with reasons. With --runs the recorded LLM readings are reused instead of calling an LLM.

Inputs are files, folders of files, or a dataset folder (schema.json + labels.jsonl + files/;
its schema and doc_ids are used). The schema is --schema, else the dataset's, else the one the
model was trained with. A document that cannot be read or extracted becomes rows with
status=error and the batch carries on (exit code 1 when any document failed).

Output columns: doc_id, field, field_type, value, hunter_value, mapper_value, confidence,
decision, threshold, threshold_source, reasons, status, error, straight_through (all fields of
the document accepted). Format by suffix: .jsonl, .csv, .parquet.

examples:
  extractconf score invoices/*.pdf --out scored.csv --llm local
  extractconf score data/synth-test --runs runs/test.jsonl --out scored.jsonl
  extractconf score scans/ --schema schema.json --llm http://localhost:8000/v1 \\
      --model models/mine --thresholds thresholds.json --out scored.parquet
"""

_SUFFIXES = {".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp"}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "score",
        help="score documents: accept/review per field with confidence and reasons",
        description="Ingest, extract (Hunter + Mapper), score and route every field.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("inputs", nargs="+", metavar="FILES_OR_DATASET")
    p.add_argument("--out", required=True, help="scored.jsonl / .csv / .parquet")
    p.add_argument(
        "--llm",
        default="local",
        help="local | local:PATH.gguf | openai:MODEL | URL (default local)",
    )
    p.add_argument("--llm-model", default=None, help="model name for a URL endpoint")
    add_model_arg(p)
    p.add_argument("--thresholds", default=None, help="thresholds.json from `extractconf tune`")
    p.add_argument("--runs", nargs="+", default=None, help="reuse recorded runs.jsonl files")
    p.add_argument("--schema", default=None, help="schema.json (fields and types)")
    p.add_argument("--no-reasons", action="store_true", help="skip the reasons (faster)")
    add_document_args(p)
    p.set_defaults(func=run)


def _inputs(args):
    """(schema or None, [(doc_id, path)]) from the positional inputs."""
    from confidence.datasets.folder import Dataset
    from confidence.errors import DatasetError

    schema, items = None, []
    for raw in args.inputs:
        p = Path(raw)
        if p.is_dir() and (p / "labels.jsonl").exists():
            ds = Dataset.open(p, check_files=False)
            schema = schema or ds.schema
            items += [(r.doc_id, ds.path_of(r)) for r in ds.records]
        elif p.is_dir():
            items += [(f.stem, f) for f in sorted(p.iterdir()) if f.suffix.lower() in _SUFFIXES]
        elif p.exists() or p.suffix.lower() in _SUFFIXES:
            items.append((p.stem, p))  # a missing file becomes an error row, not a crash
        else:
            raise DatasetError(f"{p}: no such file or folder")
    if not items:
        raise DatasetError("no documents found in the inputs (.pdf, .png, .jpg, .tif ...)")
    return schema, items


def _extract(document, schema, client):
    from confidence.calls.extract import extract_document

    return extract_document(document, schema, client)


def run(args) -> int:
    from confidence.engine import ConfidenceEngine
    from confidence.errors import DatasetError, DocumentError, ExtractConfError
    from confidence.output import write_rows
    from confidence.readings import RunRecord
    from confidence.routing import straight_through
    from confidence.schema import Schema

    engine = ConfidenceEngine.load(None if args.model in (None, "default") else args.model)
    if args.thresholds:
        from confidence.calibration import ThresholdSelector

        engine = engine.with_thresholds(ThresholdSelector.load(args.thresholds))
    ds_schema, items = _inputs(args)
    schema = Schema.load(args.schema) if args.schema else ds_schema or engine.schema_
    if schema is None:
        raise DatasetError("no schema: pass --schema schema.json (or score a dataset folder)")
    runs = None
    if args.runs:
        from confidence.records import load_runs

        runs = load_runs(args.runs)
    client = None
    if runs is None:
        from confidence.llm import make_client

        try:
            client = make_client(args.llm, model=args.llm_model)
        except (ValueError, ImportError, OSError) as e:
            raise ExtractConfError(f"--llm {args.llm}: {e}") from e

    docs: dict = {}
    records: list[RunRecord] = []
    failed = 0
    from confidence.documents.cache import DocumentCache

    cache = DocumentCache(args.cache_dir, enabled=not args.no_cache)
    need_docs = not args.no_documents or client is not None
    ids = [d for d, _ in items]
    loaded = (
        cache.load_many([p for _, p in items], ids, n_jobs=args.n_jobs)
        if need_docs
        else iter([None] * len(items))
    )
    from tqdm import tqdm

    show = not args.quiet and sys.stderr.isatty()
    bar = tqdm(total=len(items), unit="doc", desc="documents", disable=not show)
    for (doc_id, path), doc in zip(items, loaded, strict=True):
        bar.update(1)
        if isinstance(doc, DocumentError):
            records.append(RunRecord(doc_id, None, None, status="error", error=str(doc)))
            failed += 1
            continue
        if runs is not None:
            rec = runs.get(doc_id)
            if rec is None:
                records.append(
                    RunRecord(doc_id, None, None, status="error", error=f"{path}: not in --runs")
                )
                failed += 1
                continue
        else:
            try:
                rec = _extract(doc, schema, client)
            except ExtractConfError as e:
                rec = RunRecord(doc_id, None, None, status="error", error=f"{path}: {e}")
            if rec.status == "error":
                failed += 1
        records.append(rec)
        if doc is not None and not args.no_documents:
            docs[doc_id] = doc
    bar.close()
    scores = engine.score(records, schema, docs, explain=not args.no_reasons)
    through = straight_through(
        [s.doc_id for s in scores],
        [s.decision if s.status == "ok" else "review" for s in scores],
    )
    rows = []
    for s in scores:
        d = s.to_dict()
        d["straight_through"] = through[s.doc_id]
        rows.append(d)
    n = write_rows(args.out, rows)
    n_acc = sum(s.decision == "accept" for s in scores)
    print(
        f"scored {len(items)} documents, {n} fields: {n_acc} accepted, {n - n_acc} to review; "
        f"{sum(through.values())}/{len(through)} documents straight through"
        + (f"; {failed} failed" if failed else "")
    )
    print(f"wrote {args.out}")
    return 1 if failed else 0
