"""``extractconf tune``: choose per-field thresholds with a finite-sample accuracy guarantee."""

from __future__ import annotations

import argparse
import math

from confidence.cli._args import check_out
from confidence.cli._engine_common import (
    add_document_args,
    add_guarantee_args,
    add_model_arg,
    add_runs_args,
    check_guarantee_args,
    load_table,
    open_datasets,
    require_rows,
)

EPILOG = """\
The model (fusion + calibrator) stays as it is; only the thresholds are chosen, on the labelled
documents given here, which the model must not have been trained on. With probability at least
--confidence-level over the draw of these documents, the accuracy of the values each field
accepts on new documents of the same kind is at least --target-accuracy (Learn then Test with
exact binomial tests). Fields with too few samples borrow their field type's or the global
threshold; a field that cannot reach the target is reviewed always (threshold null).

Use the result with `extractconf score ... --thresholds thresholds.json`.

examples:
  extractconf tune data/my-invoices --runs runs/mine.jsonl --target-accuracy 0.98 \\
      --confidence-level 0.9 --out thresholds.json
  extractconf tune data/synth-test --runs runs/test.jsonl --model models/mine --out t.json
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
    add_document_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from confidence.engine import ConfidenceEngine

    check_guarantee_args(args)
    check_out(args.out, suffixes=(".json",))
    engine = ConfidenceEngine.load(None if args.model in (None, "default") else args.model)
    table = load_table(args, open_datasets(args.datasets))
    require_rows(table)
    r = table.rows
    tuned = engine.tune(
        r.X,
        table.y,
        fields=r.fields,
        field_types=r.field_types,
        target_accuracy=args.target_accuracy,
        confidence_level=args.confidence_level,
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
    print(f"wrote {path}")
    return 0
