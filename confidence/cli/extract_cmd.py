"""``extractconf extract``: run the Hunter and Mapper over a dataset into a resumable runs.jsonl."""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from confidence.cli._args import check_out, non_negative_int, positive_int
from confidence.cli._engine_common import add_read_once_arg, load_options
from confidence.cli._llm_args import add_llm_args, llm_options

EPILOG = """\
Each document of DATASET_DIR (schema.json + labels.jsonl + files/) is ingested (PDF text layer or
OCR; cached), read by the Hunter (every schema slot filled; --hunter-mode grounded constrains values
to strings copied from the document, free lets the model write them) and by the Mapper (the
document's own label/value pairs mapped to schema fields), and written as one line of --out.

Each document gets a status: ok, partial (one of the Hunter and the Mapper failed: unreachable
endpoint, HTTP error, unusable reply, --doc-timeout) or error (both failed, or the file could not
be read); every partial or failed document is named on stderr with the reason. Re-running with the
same --out skips the ok documents and retries the partial and failed ones; the retried line is
appended and replaces the old one wherever runs are read.

examples:
  extractconf extract data/synth --out runs/synth.jsonl --llm local --n-jobs 2
  extractconf extract data/sroie --out runs.jsonl --llm openai:gpt-4o-mini --hunter-mode free \\
      --samples 5 --verbalized --concurrency 8
  extractconf extract data/sroie --out runs.jsonl --llm http://127.0.0.1:8000/v1 \\
      --llm-model smollm2 --llm-timeout 20 --llm-retries 2 --doc-timeout 120
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "extract",
        help="read every document with the Hunter and the Mapper into runs.jsonl",
        description="Run the LLM calls over a dataset folder; one runs.jsonl line per document.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dataset", metavar="DATASET_DIR")
    p.add_argument("--out", required=True, help="runs.jsonl to write (appended; resumable)")
    add_llm_args(p)
    # --model names the confidence model folder in every other command: refuse it here.
    p.add_argument("--model", dest="old_model", default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--concurrency", type=positive_int, default=1, help="documents in flight per process"
    )
    p.add_argument(
        "--n-jobs", type=positive_int, default=1, help="processes (local model: one per core)"
    )
    p.add_argument(
        "--samples", type=non_negative_int, default=0, help="self-consistency samples (default 0)"
    )
    p.add_argument("--verbalized", action="store_true", help="also ask for 0-100 confidences")
    p.add_argument("--limit", type=positive_int, default=None, help="only the first N documents")
    p.add_argument(
        "--hunter-mode",
        choices=("grounded", "free"),
        default=None,
        help="default: grounded for the local model, free for remote ones",
    )
    p.add_argument("--no-mapper", action="store_true", help="skip the Mapper call")
    p.add_argument(
        "--redo-mapper",
        action="store_true",
        help="for doc_ids already in --out, recompute only the Mapper (Hunter, samples and "
        "verbalized kept) and rewrite --out atomically; --llm none for a layout-only Mapper",
    )
    p.add_argument("--cache-dir", default=None, help="ingested-document cache folder")
    add_read_once_arg(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


_STATE: dict = {}


def _init_worker(
    llm: str, model: str | None, kw: dict, opts: dict, schema_dict, cache_dir, load_opts: dict
):
    from confidence.documents.cache import DocumentCache
    from confidence.llm import make_client
    from confidence.schema import Schema

    _STATE.update(
        client=make_client(llm, model=model, **kw),
        schema=Schema.from_dict(schema_dict),
        opts=opts,
        cache=DocumentCache(cache_dir, **load_opts) if cache_dir is not False else None,
        load_options=load_opts,
    )


def _one(doc_id: str, path: str) -> dict:
    """Ingest and extract one document; any fault becomes an error record (never raises)."""
    from confidence.calls.extract import extract_document
    from confidence.documents import load_document
    from confidence.readings import RunRecord

    t0 = time.perf_counter()
    try:
        cache = _STATE["cache"]
        doc = (
            cache.load(path, doc_id=doc_id)
            if cache is not None
            else load_document(path, doc_id=doc_id, **_STATE["load_options"])
        )
        rec = extract_document(doc, _STATE["schema"], _STATE["client"], **_STATE["opts"])
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:
        rec = RunRecord(
            doc_id,
            None,
            None,
            model=str(getattr(_STATE["client"], "model", "")),
            status="error",
            error=f"{type(e).__name__}: {e}",
            seconds=time.perf_counter() - t0,
        )
    return rec.to_dict()


def run(args) -> int:
    from tqdm import tqdm

    from confidence.calls.extract import RunsFile
    from confidence.datasets.folder import Dataset
    from confidence.errors import DatasetError
    from confidence.llm import REMOTE_SCHEMES
    from confidence.readings import RunRecord

    if args.old_model is not None:
        raise DatasetError(
            "--model names the confidence model folder (score, evaluate, tune); give the LLM "
            f"model id as --llm-model {args.old_model}"
        )
    if args.redo_mapper and args.llm == "none":
        kw = {}
    else:
        kw = llm_options(args)
    check_out(args.out, suffixes=(".jsonl",))
    ds = Dataset.open(args.dataset)
    if args.redo_mapper:
        return _redo_mapper(args, ds, kw)
    remote = args.llm.partition(":")[0] in REMOTE_SCHEMES
    if remote:
        kw["concurrency"] = args.concurrency
    mode = args.hunter_mode or ("free" if remote else "grounded")
    opts = {
        "hunter_mode": mode,
        "mapper": not args.no_mapper,
        "samples": args.samples,
        "verbalized": args.verbalized,
        "deadline": args.doc_timeout,
    }
    runs = RunsFile(args.out)
    records = ds.records if args.limit is None else ds.records[: args.limit]
    todo = [r for r in records if r.doc_id not in runs.done]
    retried = sum(r.doc_id in runs.retry for r in todo)
    if len(todo) < len(records) or retried:
        print(
            f"resuming: {len(records) - len(todo)} document(s) already done in {args.out}"
            + (f"; retrying {retried} partial or failed" if retried else ""),
            file=sys.stderr,
        )
    init = (args.llm, args.llm_model, kw, opts, ds.schema.to_dict(), args.cache_dir,
            load_options(args))  # fmt: skip
    if args.n_jobs == 1 or remote:  # a missing key or bad option: one error now, not per worker
        try:
            _init_worker(*init)
        except (ValueError, ImportError, OSError) as e:
            raise DatasetError(f"--llm {args.llm}: {e}") from None
        if args.n_jobs > 1:
            _STATE.pop("client").close()
    bar = tqdm(total=len(todo), disable=args.quiet, desc="extract", unit="doc")
    totals = {"docs": 0, "partial": 0, "error": 0, "calls": 0, "tokens": 0, "seconds": 0.0}

    def done(d: dict) -> None:
        rec = RunRecord.from_dict(d)
        runs.append(rec)
        usage = rec.meta.get("usage", {})
        totals["docs"] += 1
        totals["calls"] += rec.llm_calls
        totals["tokens"] += sum(usage.values())
        totals["seconds"] += rec.seconds
        if rec.status != "ok":
            totals["partial" if rec.status == "partial" else "error"] += 1
            tqdm.write(f"{rec.doc_id}: {rec.status}: {rec.error}", file=sys.stderr)
        bar.update(1)

    t0 = time.perf_counter()
    with runs:
        if args.n_jobs == 1:
            for r in todo:
                done(_one(r.doc_id, str(ds.path_of(r))))
        else:
            with ProcessPoolExecutor(args.n_jobs, initializer=_init_worker, initargs=init) as ex:
                futs = [ex.submit(_one, r.doc_id, str(ds.path_of(r))) for r in todo]
                for f in as_completed(futs):
                    done(f.result())
    bar.close()
    n = max(1, totals["docs"])
    print(
        f"{totals['docs']} document(s) in {time.perf_counter() - t0:.1f}s: "
        f"{totals['docs'] - totals['partial'] - totals['error']} ok, {totals['partial']} "
        f"partial, {totals['error']} failed; per document: {totals['calls'] / n:.2f} LLM calls, "
        f"{totals['tokens'] / n:.0f} tokens, {totals['seconds'] / n:.2f}s -> {Path(args.out)}"
    )
    return 1 if totals["partial"] or totals["error"] else 0


def _redo_mapper(args, ds, kw: dict) -> int:
    """Recompute the Mapper of every record of --out, keep everything else, rewrite atomically."""
    import json
    import os
    import tempfile
    from dataclasses import replace

    from tqdm import tqdm

    from confidence.calls.extract import REPORTED_BY_MODE, record_usage
    from confidence.calls.mapper import run_mapper
    from confidence.documents.cache import DocumentCache
    from confidence.documents.lines import document_lines
    from confidence.errors import DatasetError
    from confidence.llm import make_client
    from confidence.readings import CallResult, RunRecord, document_status

    out = Path(args.out)
    if not out.exists():
        raise DatasetError(f"--redo-mapper needs an existing runs file; {out} does not exist")
    client = None if args.llm == "none" else make_client(args.llm, model=args.llm_model, **kw)
    cache = DocumentCache(args.cache_dir, **load_options(args))
    by_id = {r.doc_id: r for r in ds.records}
    raw = [x for x in out.read_text(encoding="utf-8").split("\n") if x]  # not at U+2028
    rewritten, n_done, n_failed = [], 0, 0
    for line in tqdm(raw, disable=args.quiet, desc="redo mapper", unit="doc"):
        try:
            rec = RunRecord.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError):
            rewritten.append(line)  # a line cut short stays as it was (extract skips it)
            continue
        r = by_id.get(rec.doc_id)
        if r is None or rec.hunter is None:
            rewritten.append(line)
            continue
        t0 = time.perf_counter()
        try:
            doc = cache.load(ds.path_of(r), doc_id=rec.doc_id)
            mode = rec.meta.get("hunter_mode", "grounded")
            reader = "ranker" if mode == "grounded" else "layout"  # as extract_document does
            mapped = run_mapper(ds.schema, document_lines(doc), client, reader=reader)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # a failed Mapper is recorded and the batch goes on
            mapped = CallResult("mapper", {}, status="error", error=f"{type(e).__name__}: {e}")
        meta = dict(rec.meta, mapper_seconds=round(time.perf_counter() - t0, 4))
        meta["reported"] = REPORTED_BY_MODE.get(rec.meta.get("hunter_mode", "grounded"), "hunter")
        new = replace(rec, mapper=mapped, meta=meta, status="ok", error=None)
        status, error = document_status(new)
        new = replace(new, status=status, error=error, meta=dict(meta, usage=record_usage(new)))
        if status != "ok":
            n_failed += 1
            tqdm.write(f"{rec.doc_id}: {status}: {error}", file=sys.stderr)
        rewritten.append(json.dumps(new.to_dict(), ensure_ascii=False))
        n_done += 1
    fd, tmp = tempfile.mkstemp(prefix=out.name, suffix=".tmp", dir=out.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{x}\n" for x in rewritten))
    os.replace(tmp, out)
    print(f"mapper recomputed for {n_done} record(s), {n_failed} partial or failed -> {out}")
    return 1 if n_failed else 0
