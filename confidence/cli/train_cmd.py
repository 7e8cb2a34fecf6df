"""``extractconf train``: fit the confidence engine on labelled datasets and recorded runs."""

from __future__ import annotations

import argparse
import math

from confidence.cli._args import check_out
from confidence.cli._engine_common import (
    add_document_args,
    add_fusion_params_arg,
    add_guarantee_args,
    add_runs_args,
    check_guarantee_args,
    fusion_params_of,
    load_table,
    open_datasets,
)
from confidence.errors import ExtractConfError

EPILOG = """\
Documents are split three ways (never cutting a document). The fusion model (LightGBM) learns
on the first two shares together, and the calibrator is fitted on their out-of-fold scores (each
document scored by the cross-validation fold model that never saw it). The per-field thresholds
are chosen on the third share, so the accuracy guarantee of the thresholds holds on documents the
model never saw. --separate-calibration fits the fusion model on the first share alone and the
calibrator on the second.
The folder written holds no pickle: fusion.lgb.txt, fusion.json, calibrator.json,
thresholds.json, engine.json (versions, features, schema, held-out metrics) and manifest.json
(sha256 and format version of every file; a changed file is refused when loading).

examples:
  extractconf extract data/synth --out runs/synth.jsonl --llm local
  extractconf train data/synth --runs runs/synth.jsonl --out models/mine
  extractconf train data/a data/b --runs runs/a.jsonl runs/b.jsonl --out models/ab \\
      --calibrator platt --target-accuracy 0.98 --confidence-level 0.9
  extractconf train data/synth --runs runs/synth.jsonl --out models/byo --single-reading
  extractconf train data/synth --runs runs/synth.jsonl --out models/small \\
      --fusion-params '{"num_leaves": 7, "min_child_samples": 50}'
"""


def _split(text: str) -> tuple[float, float, float]:
    try:
        parts = tuple(float(x) for x in text.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 3 or min(parts) <= 0:
        raise argparse.ArgumentTypeError("pass three positive shares, e.g. 0.6,0.2,0.2")
    return parts  # type: ignore[return-value]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "train",
        help="train the confidence engine on labelled datasets + recorded runs",
        description="Fit fusion, calibration and per-field thresholds; write a model folder.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("datasets", nargs="+", metavar="DATASET_DIR", help="labelled dataset folders")
    add_runs_args(p)
    p.add_argument("--out", required=True, metavar="MODEL_DIR", help="model folder to write")
    p.add_argument("--calibrator", choices=("isotonic", "platt"), default="isotonic")
    add_guarantee_args(p)
    p.add_argument(
        "--split",
        type=_split,
        default=(0.6, 0.2, 0.2),
        help="document shares for fusion,calibration,thresholds (default 0.6,0.2,0.2)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--single-reading",
        action="store_true",
        help="also train the fusion model on one-reading copies of every run (the Hunter with "
        "the library's layout Mapper; the same with some values taken from another document, "
        "as a pipeline's LLM reports values that are not on the page; the Hunter alone with "
        "its page and the Hunter alone without it), as third-party records are scored",
    )
    p.add_argument(
        "--separate-calibration",
        action="store_true",
        help="fit the fusion model on the first share of --split and the calibrator on the "
        "second, instead of pooling them (the calibrator on out-of-fold scores)",
    )
    p.add_argument(
        "--average-folds",
        action="store_true",
        help="the fusion model is the mean of its 5 cross-validation fold models instead of one "
        "refit (bagging over documents: steadier scores on unlike documents, 5x the trees, "
        "slower scoring)",
    )
    p.add_argument(
        "--exclude-features",
        nargs="+",
        default=[],
        metavar="NAME",
        help="train the fusion model without these features (names or shell patterns, e.g. "
        "'q_*' for every image-quality feature; the default model leaves those out)",
    )
    add_fusion_params_arg(p, " (with --average-folds, average_folds is true)")
    add_document_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from confidence.engine import kept_features
    from confidence.evaluation.crossfit import fit_engine

    check_guarantee_args(args)
    fusion_params = fusion_params_of(args.fusion_params)
    if args.average_folds:
        fusion_params["average_folds"] = True
    try:
        kept_features(args.exclude_features)
    except ValueError as e:
        raise ExtractConfError(f"--exclude-features: {e}") from e
    check_out(args.out, folder=True)
    datasets = open_datasets(args.datasets)
    from confidence.records import load_runs

    runs = load_runs(args.runs)
    table = load_table(args, datasets, runs=runs)
    extra = []
    if args.single_reading:
        extra = [
            load_table(args, datasets, readings="library_mapper", runs=runs),
            # a pipeline's confident values that are not on the page (another document's)
            load_table(args, datasets, readings="foreign_values", runs=runs),
            # with its page but no second reading (score(..., library_mapper=False)): without
            # these rows the model only ever saw a missing Mapper on page-less rows
            load_table(args, datasets, readings="hunter_only", runs=runs),
            load_table(args, datasets, readings="hunter_only", use_documents=False, runs=runs),
        ]
    engine = fit_engine(
        table,
        extra=extra,
        calibrator=args.calibrator,
        target_accuracy=args.target_accuracy,
        confidence_level=args.confidence_level,
        split=args.split,
        calibrate_out_of_fold=not args.separate_calibration,
        random_state=args.seed,
        fusion_params=fusion_params or None,
        exclude_features=tuple(args.exclude_features),
    )
    engine.schema_ = datasets[0].schema if len(datasets) == 1 else None
    engine.metrics_["datasets"] = [str(d.path) for d in datasets]
    engine.metrics_["llm_calls_per_doc"] = table.calls.get("extractconf")
    engine.save(args.out)
    m = engine.metrics_["held_out"]
    nd = engine.metrics_["n_documents"]
    if engine.metrics_.get("calibrated_out_of_fold"):
        how = (
            f"fusion and calibration on {nd['fusion']} documents (out of fold), thresholds on "
            f"{nd['thresholds']}"
        )
    else:
        how = (
            f"split fusion/calibration/thresholds {nd['fusion']}/{nd['calibration']}/"
            f"{nd['thresholds']} documents"
        )
    print(
        f"trained on {table.n_documents} documents, {len(table)} fields "
        f"(failure rate {1 - table.y.mean():.1%}); {how}"
    )
    print(
        f"held-out: AUROC {m['auroc']:.3f}  AURC {m['aurc']:.4f}  "
        f"coverage@99% {m['coverage_at_accuracy_0.99']:.3f}  ECE {m['ece']:.3f}"
    )
    sel = engine.thresholds_
    for f, lam in sel.thresholds_.items():
        shown = "review all" if not math.isfinite(lam) else f"{lam:.3f}"
        print(
            f"  {f:24} threshold {shown:>10} ({sel.sources_[f]}), coverage {sel.coverage_[f]:.0%}"
        )
    print(f"wrote {args.out}")
    return 0
