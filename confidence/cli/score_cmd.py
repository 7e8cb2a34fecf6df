"""``extractconf score``: documents in, one scored row per (document, field) out."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from confidence.cli._args import check_out, positive_int
from confidence.cli._engine_common import add_document_args, add_model_arg, load_options
from confidence.cli._llm_args import add_llm_args, llm_options, make_llm

EPILOG = """\
Full pipeline: ingest each document (PDF text layer or OCR), read it with the Hunter and the
Mapper (--llm), compute the features, fuse, calibrate and route every schema field to accept or
review with reasons. With --runs the recorded LLM readings are reused instead of calling an LLM.

Inputs are files, folders of files, or a dataset folder (schema.json + labels.jsonl + files/;
its schema and doc_ids are used). A file's doc_id is its name without the suffix
(matching --runs and dataset doc_ids) when those names are unique in the batch; otherwise every
file's doc_id is its path, without the suffix, relative to the folder all the inputs share
(`score a/inv.pdf b/inv.pdf` gives a/inv and b/inv). Inputs that would still share a doc_id
(inv.pdf and inv.png in one folder) are refused. The schema
is --schema, else the dataset's, else the one the model was trained with (the shipped model
carries the invoice schema of `extractconf synth`).

A document that cannot be read (missing file, unsupported file type in a folder, corrupt file)
or whose LLM calls failed becomes rows with status=error and the batch carries on; when only one
of the Hunter and the Mapper failed its rows are status=partial, scored on the surviving reading
and never straight through. Each such document is named on stderr with the reason.

Out of domain: when the model keeps a reference sketch (the default model does), every
document gets a novelty p-value against the calibration documents (novelty_p; out_of_domain
when below 0.01) and the batch a shift p-value (batch_shift_p); a shifted batch is one warning
line on stderr. --on-shift review sends the fields of out-of-domain documents - and of every
document of a shifted batch - to review with the reason. An empty value is never accepted
unless absence was certified for its field. See docs/monitoring.md.

Audit sampling: --audit-rate 0.02 sends 2% of the auto-accepted fields to review too (decision
review, audit true, first reason "audit sample"), drawn by a hash of doc_id, field and
--audit-seed (the same draw whatever the batching). p_sample is each row's probability of
being sampled into review (1 when routed by its threshold, the rate when accepted), which
`extractconf feedback` and `recalibrate` use to weight the reviews (docs/feedback.md).

Output columns: doc_id, field, field_type, value, hunter_value, mapper_value, confidence,
decision, threshold, threshold_source, reasons, status, error, group, novelty_p, out_of_domain,
batch_shift_p, model_sha, thresholds_sha, llm (fingerprints for `extractconf monitor`),
audit, p_sample, audit_rate (review sampling, above), straight_through (all fields of the
document accepted), and with --features K one feature.<name> column per top fused feature.
With thresholds from `tune --groups KEY`, each document's group is computed as tune did
(source and quality from the pages; language and meta.NAME from the labels.jsonl of a dataset
input) and its (field, group) threshold applies when certified (threshold_source=group), else
field -> type -> global. Format by suffix: .jsonl, .csv, .parquet.

--engine ray runs the same job on Ray Data (pip install 'extractconf[ray]'): ingestion in CPU
tasks, the LLM in an actor pool (--llm-concurrency requests in flight per actor for a remote
endpoint), scoring in an actor pool. Without --ray-address it starts an embedded local Ray with
--num-cpus CPUs (no dashboard); --ray-address auto or ray://HOST:10001 joins a cluster. --out is
then a folder of Parquet files (the same rows and columns); running the same command again on
it skips the documents already scored ok, so a killed job resumes. See docs/scale.md.

examples:
  extractconf score invoices/*.pdf --out scored.csv --llm local
  extractconf score data/synth-test --runs runs/test.jsonl --out scored.jsonl
  extractconf score data/batch-7 --runs runs/b7.jsonl --audit-rate 0.02 --out scored.jsonl
  extractconf score scans/ --schema schema.json --llm http://localhost:8000/v1 \\
      --llm-model smollm2 --llm-timeout 20 --doc-timeout 120 \\
      --model models/mine --thresholds thresholds.json --out scored.parquet
  extractconf score data/synth-test --runs runs/test.jsonl --out scored/ --engine ray \
      --num-cpus 2
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
    p.add_argument(
        "--out", required=True, help="scored.jsonl / .csv / .parquet (a folder with --engine ray)"
    )
    add_llm_args(p)
    add_model_arg(p)
    p.add_argument("--thresholds", default=None, help="thresholds.json from `extractconf tune`")
    p.add_argument("--runs", nargs="+", default=None, help="reuse recorded runs.jsonl files")
    p.add_argument("--schema", default=None, help="schema.json (fields and types)")
    p.add_argument("--no-reasons", action="store_true", help="skip the reasons (faster)")
    p.add_argument(
        "--on-shift",
        choices=("warn", "review"),
        default="warn",
        help="out-of-domain documents: only warn (default) or send their fields to review",
    )
    p.add_argument(
        "--audit-rate",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="also send this share of the auto-accepted fields to review, marked audit "
        "(e.g. 0.02), so their accuracy can be measured; default 0",
    )
    p.add_argument(
        "--audit-seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the audit draw (a hash of doc_id, field and S: reproducible)",
    )
    p.add_argument(
        "--features",
        type=int,
        default=0,
        metavar="K",
        help="also write the K most used fused features (for `extractconf monitor`)",
    )
    add_document_args(p)
    g = p.add_argument_group("Ray")
    g.add_argument(
        "--engine",
        choices=("process", "ray"),
        default="process",
        help="process: this machine (default); ray: Ray Data, one machine or a cluster",
    )
    g.add_argument(
        "--ray-address",
        default=None,
        metavar="auto|ray://HOST:PORT",
        help="join a running Ray cluster (default: start an embedded local Ray)",
    )
    g.add_argument(
        "--num-cpus", type=positive_int, default=None, help="CPUs of the embedded Ray (default all)"
    )
    g.add_argument(
        "--llm-concurrency",
        type=positive_int,
        default=1,
        metavar="K",
        help="LLM requests in flight per Ray actor (remote endpoints; default 1)",
    )
    p.set_defaults(func=run)


def _inputs(args):
    """(schema or None, [(doc_id, path, problem or None)]) from the positional inputs.

    A missing file or an unsupported file type is kept with its problem (it becomes error
    rows); doc_ids are checked unique (see the epilog for how they are made).
    """
    from confidence.datasets.folder import Dataset
    from confidence.errors import DatasetError

    schema, items, files, bases = None, [], [], []
    for raw in args.inputs:
        p = Path(raw)
        if p.is_dir() and (p / "labels.jsonl").exists():
            ds = Dataset.open(p, check_files=False)
            schema = schema or ds.schema
            items += [(r.doc_id, ds.path_of(r), None) for r in ds.records]
        elif p.is_dir():
            bases.append(p)
            entries = [f for f in sorted(p.iterdir()) if not f.name.startswith(".")]
            files += [f for f in entries if f.is_file()]
            if subs := [f.name for f in entries if f.is_dir()]:  # not read: say so
                more = f" and {len(subs) - 5} more" if len(subs) > 5 else ""
                shown = ", ".join(subs[:5]) + more
                print(
                    f"{p}: warning: {len(subs)} subfolder(s) not read ({shown}); "
                    "pass them as inputs to score what they hold",
                    file=sys.stderr,
                )
        else:
            bases.append(p.parent)
            files.append(p)
    stems = [f.stem for f in files]
    if len(set(stems)) < len(stems):  # same name in two folders: qualify every id by its folder
        root = Path(os.path.commonpath([os.path.abspath(b) for b in bases]))
        stems = [
            Path(os.path.relpath(os.path.abspath(f), root)).with_suffix("").as_posix()
            for f in files
        ]
    items += [(d, f, _problem(f)) for d, f in zip(stems, files, strict=True)]
    if not items:
        raise DatasetError("no documents found in the inputs (.pdf, .png, .jpg, .tif ...)")
    if all(problem == "no such file or folder" for *_, problem in items):
        raise DatasetError(f"{args.inputs[0]}: no such file or folder")
    first: dict[str, Path] = {}
    for doc_id, path, _ in items:
        if doc_id in first:
            raise DatasetError(
                f"{first[doc_id]} and {path} would both be document {doc_id!r}; rename one or "
                "score them in separate runs"
            )
        first[doc_id] = path
    return schema, items


def _meta(inputs) -> dict:
    """doc_id -> labels.jsonl metadata of the dataset folders among the inputs (for groups)."""
    from confidence.datasets.folder import Dataset

    out = {}
    for raw in inputs:
        p = Path(raw)
        if p.is_dir() and (p / "labels.jsonl").exists():
            out.update((r.doc_id, r.meta) for r in Dataset.open(p, check_files=False).records)
    return out


def _problem(path: Path) -> str | None:
    if not path.exists():
        return "no such file or folder"
    if path.suffix.lower() not in _SUFFIXES:
        return f"unsupported file type {path.suffix or '(none)'!r}; use " + ", ".join(
            sorted(_SUFFIXES)
        )
    return None


def _model_schema(args, engine):
    """The schema the model was trained with, or the ``schema.json`` shipped in its folder
    (the default model, trained on two schemas, ships the invoice one); None if neither."""
    from confidence.engine import default_model_dir
    from confidence.schema import Schema

    if engine.schema_ is not None:
        return engine.schema_
    folder = default_model_dir() if args.model in (None, "default") else Path(args.model)
    path = folder / "schema.json"  # covered by the folder's manifest, checked at load
    return Schema.load(path) if path.is_file() else None


def _extract(document, schema, client, deadline):
    from confidence.calls.extract import extract_document

    return extract_document(document, schema, client, deadline=deadline)


def run(args) -> int:
    from confidence.engine import ConfidenceEngine
    from confidence.errors import DatasetError, DocumentError, ExtractConfError
    from confidence.output import output_format, write_rows
    from confidence.readings import RunRecord
    from confidence.routing import straight_through
    from confidence.schema import Schema

    if not 0.0 <= args.audit_rate <= 1.0:
        raise DatasetError(f"--audit-rate {args.audit_rate}: pass a share between 0 and 1")
    if args.engine == "ray":
        return _run_ray(args)
    if args.ray_address or args.num_cpus or args.llm_concurrency != 1:
        raise DatasetError("--ray-address, --num-cpus, --llm-concurrency: only with --engine ray")
    output_format(args.out)
    check_out(args.out)
    if not args.runs:
        llm_options(args)  # a bad --llm is refused before the model and the documents load
    engine = ConfidenceEngine.load(None if args.model in (None, "default") else args.model)
    if args.thresholds:
        from confidence.calibration import ThresholdSelector

        engine = engine.with_thresholds(ThresholdSelector.load(args.thresholds))
    ds_schema, items = _inputs(args)
    schema = Schema.load(args.schema) if args.schema else ds_schema or _model_schema(args, engine)
    if schema is None:
        raise DatasetError("no schema: pass --schema schema.json (or score a dataset folder)")
    runs = None
    if args.runs:
        from confidence.records import load_runs

        runs = load_runs(args.runs)
    client = None if runs is not None else make_llm(args)

    docs: dict = {}
    records: list[RunRecord] = []
    from confidence.documents.cache import DocumentCache

    cache = DocumentCache(args.cache_dir, enabled=not args.no_cache, **load_options(args))
    need_docs = not args.no_documents or client is not None
    readable = [(d, p) for d, p, problem in items if problem is None]
    loaded = iter(
        cache.load_many([p for _, p in readable], [d for d, _ in readable], n_jobs=args.n_jobs)
        if need_docs and readable
        else [None] * len(readable)
    )
    from tqdm import tqdm

    show = not args.quiet and sys.stderr.isatty()
    bar = tqdm(total=len(items), unit="doc", desc="documents", disable=not show)
    for doc_id, path, problem in items:
        bar.update(1)
        doc = DocumentError(path, problem) if problem is not None else next(loaded)
        if isinstance(doc, DocumentError):
            records.append(RunRecord(doc_id, None, None, status="error", error=str(doc)))
            continue
        if runs is not None:
            rec = runs.get(doc_id)
            if rec is None:
                rec = RunRecord(doc_id, None, None, status="error", error=f"{path}: not in --runs")
        else:
            try:
                rec = _extract(doc, schema, client, args.doc_timeout)
            except ExtractConfError as e:
                rec = RunRecord(doc_id, None, None, status="error", error=f"{path}: {e}")
        records.append(rec)
        if doc is not None and not args.no_documents:
            docs[doc_id] = doc
    bar.close()
    if runs is not None and (unused := sorted(set(runs) - {d for d, _, _ in items})):
        # records of documents that are not among the inputs: never scored, so say so
        more = f" and {len(unused) - 5} more" if len(unused) > 5 else ""
        print(
            f"extractconf score: warning: {len(unused)} record(s) in --runs name documents not "
            f"among the inputs and were not scored ({', '.join(map(repr, unused[:5]))}{more})",
            file=sys.stderr,
        )
    scores = engine.score(
        records,
        schema,
        docs,
        explain=not args.no_reasons,
        meta=_meta(args.inputs),
        on_shift=args.on_shift,
        features=args.features,
        audit_rate=args.audit_rate,
        audit_seed=args.audit_seed,
    )
    status = {}
    for s in scores:  # a document's rows share its status and reason
        status.setdefault(s.doc_id, (s.status, s.error if s.status != "ok" else None))
    for doc_id, (st, why) in status.items():
        if st != "ok":
            print(f"{doc_id}: {st}: {why}", file=sys.stderr)
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
    n_partial = sum(st == "partial" for st, _ in status.values())
    n_failed = sum(st == "error" for st, _ in status.values())
    print(
        f"scored {len(items)} documents, {n} fields: {n_acc} accepted, {n - n_acc} to review; "
        f"{sum(through.values())}/{len(through)} documents straight through"
        + (f"; {n_partial} partial" if n_partial else "")
        + (f"; {n_failed} failed" if n_failed else "")
    )
    if args.audit_rate:
        print(_audit_line(sum(s.audit for s in scores), args.audit_rate))
    n_ood = len({s.doc_id for s in scores if s.out_of_domain})
    if n_ood:
        print(f"{n_ood}/{len(through)} documents out of domain (novelty p < the model's level)")
    print(f"wrote {args.out}")
    return 1 if n_partial or n_failed else 0


def _audit_line(n_audit: int, rate: float) -> str:
    return f"{n_audit} accepted fields sampled for audit (rate {rate:g}), in review"


def _run_ray(args) -> int:
    """``--engine ray``: the same job through :mod:`confidence.ray`, into the folder ``--out``."""
    from confidence.engine import ConfidenceEngine
    from confidence.errors import DatasetError, ExtractConfError
    from confidence.ray import init_ray, require_ray, score_documents, score_runs
    from confidence.schema import Schema

    try:
        require_ray()
    except ImportError as e:
        raise ExtractConfError(f"--engine ray: {e}") from None
    check_out(args.out, folder=True)
    if not args.runs:
        llm_options(args)
    if args.ray_address and args.num_cpus:
        raise DatasetError("--num-cpus: only for the embedded Ray (the cluster has its own CPUs)")
    engine = ConfidenceEngine.load(None if args.model in (None, "default") else args.model)
    ds_schema, items = _inputs(args)
    schema = Schema.load(args.schema) if args.schema else ds_schema or _model_schema(args, engine)
    if schema is None:
        raise DatasetError("no schema: pass --schema schema.json (or score a dataset folder)")
    del engine
    meta = _meta(args.inputs)
    rows = [
        {
            "doc_id": d,
            "path": str(p),
            "problem": problem,
            "meta": json.dumps(meta[d], default=str) if meta.get(d) else None,
        }
        for d, p, problem in items
    ]
    kw = {
        "model": None if args.model in (None, "default") else args.model,
        "thresholds": args.thresholds,
        "explain": not args.no_reasons,
        "on_shift": args.on_shift,
        "features": args.features,
        "audit_rate": args.audit_rate,
        "audit_seed": args.audit_seed,
        "cache_dir": args.cache_dir,
        "use_cache": not args.no_cache,
        "load_options": load_options(args),
    }
    started = init_ray(args.ray_address, args.num_cpus, quiet=args.quiet)
    try:
        if args.runs:
            job = score_runs(
                rows, args.runs, schema, args.out, documents=not args.no_documents, **kw
            )
        else:
            job = score_documents(
                rows,
                schema,
                args.out,
                llm=args.llm,
                llm_options={"model": args.llm_model, **llm_options(args)},
                doc_timeout=args.doc_timeout,
                llm_concurrency=args.llm_concurrency,
                documents=not args.no_documents,
                **kw,
            )
    finally:
        if started:
            require_ray().shutdown()
    for doc_id, (st, why) in job.status.items():
        if st != "ok":
            print(f"{doc_id}: {st}: {why}", file=sys.stderr)
    if job.n_skipped:
        print(f"{job.n_skipped} documents already scored in {args.out}: skipped")
    print(job.summary())
    if args.audit_rate:
        print(_audit_line(job.n_audit, args.audit_rate))
    if job.n_out_of_domain:
        print(
            f"{job.n_out_of_domain}/{len(job.status)} documents out of domain "
            "(novelty p < the model's level)"
        )
    print(f"wrote {args.out}")
    return 1 if any(st != "ok" for st, _ in job.status.values()) else 0
