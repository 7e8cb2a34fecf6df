"""``extractconf evaluate``: extractconf and the baselines side by side on the same extractions."""

from __future__ import annotations

import argparse

from confidence.cli._args import check_out
from confidence.cli._engine_common import (
    add_document_args,
    add_fusion_params_arg,
    add_guarantee_args,
    add_model_arg,
    add_runs_args,
    check_guarantee_args,
    fusion_params_of,
    load_table,
    open_datasets,
    require_rows,
)
from confidence.errors import ExtractConfError

EPILOG = """\
Writes OUT_DIR/metrics.json, OUT_DIR/scores.jsonl and OUT_DIR/report.html, with the report's
inputs feature_importance.json, shap.json (feature contributions) and, with --model,
thresholds.json.

Without --model the engine is cross-fitted: documents are split into --folds folds and each fold
is scored by an engine trained on the others, so the numbers are honest. With --model (a folder,
or "default" for the shipped model) that engine scores every document as it is.

metrics.json: {"methods": {METHOD: {auroc, aurc, accuracy_at_coverage_0.8,
coverage_at_accuracy_0.99, ece, ece_equal_mass, brier, n_fields, failure_rate,
llm_calls_per_doc, missing_share}}, "routing": ..., ...} for extractconf and every baseline the
runs allow (logprob_mean, logprob_min, agreement, verbalized, self_consistency).
scores.jsonl: one row per judged (doc_id, field): doc_id, field, value, correct and one score
column per method (higher = more likely correct). A baseline a row cannot have (e.g. no
logprobs) is written as 0.0, its lowest value; metrics use the same filled column, so
`python tools/referee.py DATASET_DIR OUT_DIR/scores.jsonl` reproduces them.

examples:
  extractconf evaluate data/synth-test --runs runs/test.jsonl --out eval/cv
  extractconf evaluate data/sroie --runs runs/sroie.jsonl --model default --out eval/sroie
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="metrics of extractconf vs baselines (cross-fitted or with a trained model)",
        description="Score every labelled field with extractconf and each baseline; write "
        "metrics.json and scores.jsonl.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("datasets", nargs="+", metavar="DATASET_DIR")
    add_runs_args(p)
    add_model_arg(p, '"default" for the shipped one; without it the engine is cross-fitted')
    p.add_argument("--out", required=True, metavar="OUT_DIR")
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (default 5)")
    p.add_argument("--calibrator", choices=("isotonic", "platt"), default="isotonic")
    add_guarantee_args(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--exclude-features",
        nargs="+",
        default=[],
        metavar="NAME",
        help="cross-fitted engines leave out these features, as `extractconf train "
        "--exclude-features` (not with --model)",
    )
    add_fusion_params_arg(p, " (cross-fitting only, as `extractconf train --fusion-params`)")
    add_document_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from confidence.engine import ConfidenceEngine
    from confidence.errors import DatasetError
    from confidence.evaluation import evaluate

    if args.folds < 2:
        raise DatasetError(f"--folds {args.folds}: pass at least 2")
    if args.exclude_features:
        from confidence.engine import kept_features

        if args.model is not None:
            raise ExtractConfError("--exclude-features is for cross-fitting; a --model has its own")
        try:
            kept_features(args.exclude_features)
        except ValueError as e:
            raise ExtractConfError(f"--exclude-features: {e}") from e
    fusion_params = fusion_params_of(args.fusion_params)
    if fusion_params and args.model is not None:
        raise ExtractConfError("--fusion-params is for cross-fitting; a --model has its own")
    check_guarantee_args(args)
    check_out(args.out, folder=True)
    datasets = open_datasets(args.datasets)
    table = load_table(args, datasets)
    require_rows(table)
    model = None
    if args.model is not None:
        model = ConfidenceEngine.load(None if args.model == "default" else args.model)
    result = evaluate(
        table,
        model=model,
        folds=args.folds,
        seed=args.seed,
        calibrator=args.calibrator,
        target_accuracy=args.target_accuracy,
        confidence_level=args.confidence_level,
        **({"exclude_features": tuple(args.exclude_features)} if args.exclude_features else {}),
        **({"fusion_params": fusion_params} if fusion_params else {}),
    )
    if model is not None:
        result.metrics["evaluation"] = f"model {args.model}"
    result.metrics["datasets"] = [str(d.path) for d in datasets]
    out = result.write(args.out)
    print(result.summary())
    print(f"wrote {out / 'metrics.json'} and {out / 'scores.jsonl'}")
    try:
        from confidence.report import build_report

        print(f"wrote {build_report(out)}")
    except ImportError as e:  # matplotlib is the report extra
        print(f"no report.html: {e}")
    return 0
