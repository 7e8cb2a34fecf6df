"""``extractconf tune``: choose per-field thresholds with a finite-sample accuracy guarantee."""

from __future__ import annotations

import argparse
import math
import sys

from confidence.cli._args import check_out
from confidence.cli._engine_common import (
    add_document_args,
    add_guarantee_args,
    add_model_arg,
    add_runs_args,
    check_guarantee_args,
    load_table,
    make_cache,
    open_datasets,
    require_rows,
)
from confidence.errors import DatasetError

EPILOG = """\
The model (fusion + calibrator) stays as it is; only the thresholds are chosen, on the labelled
documents given here, which the model must not have been trained on. With probability at least
--confidence-level over the draw of these documents, the accuracy of the values each field
accepts on new documents of the same kind is at least --target-accuracy (Learn then Test with
exact binomial tests). Fields with too few samples borrow their field type's or the global
threshold; a field that cannot reach the target is reviewed always (threshold null).

With --groups KEY the thresholds are also certified per (field, group) of documents
(group-conditional, "Mondrian"), so the guarantee holds within each group, e.g. on scans as well
as on digital PDFs, not only on average over the mix. KEY is one of
  source      scan (any page read by OCR) or digital (PDF text layer)
  quality     image-quality tier good / fair / poor of the OCR pages (sharpness, noise, JPEG
              blockiness; cut points in docs/calibration.md, saved in the file); text-layer
              pages are good
  language    meta.language of labels.jsonl (skipped with a warning when no record has it)
  meta.NAME   any meta.NAME of labels.jsonl, e.g. meta.vendor
A (field, group) with fewer samples than the field level needs (the fewest with which the
binomial test could certify any threshold, times 4) uses the field's threshold, which walks
field -> type -> global as before (certified on the mix: no guarantee for the group). With
--group-fallback pooled it first uses the group's threshold pooled over the field's type, then
over all fields of the group (each certified on that group's rows when they are enough).
`score` computes a new document's group the same way (saved in the thresholds file) and
writes it, with the level used (threshold_source), per row.

Use the result with `extractconf score ... --thresholds thresholds.json`.

examples:
  extractconf tune data/my-invoices --runs runs/mine.jsonl --target-accuracy 0.98 \\
      --confidence-level 0.9 --out thresholds.json
  extractconf tune data/synth-test --runs runs/test.jsonl --model models/mine --out t.json
  extractconf tune data/mixed --runs runs/mixed.jsonl --groups source --out t.json
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "tune",
        help="choose per-field accept thresholds on labelled documents (accuracy guarantee)",
        description="Select per-field thresholds on calibrated confidences with a "
        "finite-sample guarantee; write thresholds.json.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("datasets", nargs="+", metavar="DATASET_DIR")
    add_runs_args(p)
    add_model_arg(p)
    add_guarantee_args(p)
    p.add_argument("--out", required=True, metavar="THRESHOLDS_JSON")
    p.add_argument(
        "--groups",
        default=None,
        metavar="KEY",
        help="also certify a threshold per (field, group): source, quality, language or "
        "meta.NAME (see below)",
    )
    p.add_argument(
        "--group-fallback",
        choices=("field", "pooled"),
        default="field",
        help="a (field, group) with too few samples uses the field's threshold (field, default) "
        "or first the group's pooled type / all-fields threshold (pooled)",
    )
    add_document_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from confidence.engine import ConfidenceEngine

    check_guarantee_args(args)
    check_out(args.out, suffixes=(".json",))
    grouping = _grouping(args.groups)
    engine = ConfidenceEngine.load(None if args.model in (None, "default") else args.model)
    datasets = open_datasets(args.datasets)
    table = load_table(args, datasets)
    require_rows(table)
    r = table.rows
    groups = None if grouping is None else _row_groups(args, datasets, table, grouping)
    if groups is not None and all(g is None for g in groups):
        print(
            f"warning: no document has a {args.groups} group; tuning without groups",
            file=sys.stderr,
        )
        groups = grouping = None
    tuned = engine.tune(
        r.X,
        table.y,
        fields=r.fields,
        field_types=r.field_types,
        target_accuracy=args.target_accuracy,
        confidence_level=args.confidence_level,
        groups=groups,
        grouping=grouping,
        group_fallback=args.group_fallback,
    )
    sel = tuned.thresholds_
    path = sel.save(args.out)
    print(
        f"{table.n_documents} documents, {len(table)} fields; target accuracy "
        f"{args.target_accuracy:.1%} with probability {args.confidence_level:.0%}"
    )
    for f, lam in sel.thresholds_.items():
        shown = "review all" if not math.isfinite(lam) else f"{lam:.3f}"
        acc = sel.accuracy_[f]
        acc_s = "-" if math.isnan(acc) else f"{acc:.1%}"
        print(
            f"  {f:24} {shown:>10} ({sel.sources_[f]:6}) n={sel.n_samples_[f]:<5} "
            f"coverage {sel.coverage_[f]:.0%} accuracy {acc_s}"
        )
        for g, st in sel.group_stats_.get(f, {}).items():
            shown = "review all" if not math.isfinite(st["threshold"]) else f"{st['threshold']:.3f}"
            acc_s = "-" if math.isnan(st["accuracy"]) else f"{st['accuracy']:.1%}"
            print(
                f"    {args.groups}={g:15} {shown:>10} ({st['source']:6}) n={st['n_samples']:<5} "
                f"coverage {st['coverage']:.0%} accuracy {acc_s}"
            )
    print(f"wrote {path}")
    return 0


def _grouping(key):
    from confidence.calibration.groups import Grouping

    if key is None:
        return None
    try:
        return Grouping(key)
    except ValueError as e:
        raise DatasetError(f"--groups {e}") from None


def _row_groups(args, datasets, table, grouping):
    """The group of each table row's document (None where it cannot be computed)."""
    from confidence.types import Document

    meta = {r.doc_id: r.meta for ds in datasets for r in ds.records}
    wanted = set(table.rows.doc_ids)
    docs = {}
    if grouping.needs_documents and not args.no_documents:
        cache = make_cache(args)
        for ds in datasets:
            recs = [r for r in ds.records if r.doc_id in wanted]
            paths = (ds.path_of(r) for r in recs)
            loaded = cache.load_many(paths, (r.doc_id for r in recs), args.n_jobs)
            docs.update(
                (r.doc_id, d) for r, d in zip(recs, loaded, strict=True) if isinstance(d, Document)
            )
    of = {d: grouping.group_of(docs.get(d), meta.get(d)) for d in wanted}
    return [of[d] for d in table.rows.doc_ids]
