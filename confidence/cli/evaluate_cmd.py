"""``extractconf evaluate``: extractconf and the baselines side by side on the same extractions."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from confidence.calibration.metrics import aurc_oracle
from confidence.cli._engine_common import (
    add_document_args,
    add_guarantee_args,
    add_model_arg,
    add_runs_args,
    load_table,
    open_datasets,
    require_rows,
)
from confidence.jsonsafe import jsonable

EPILOG = """\
Writes OUT_DIR/metrics.json and OUT_DIR/scores.jsonl.

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
    add_model_arg(p)
    p.add_argument("--out", required=True, metavar="OUT_DIR")
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (default 5)")
    p.add_argument("--calibrator", choices=("isotonic", "platt"), default="isotonic")
    add_guarantee_args(p)
    p.add_argument("--seed", type=int, default=0)
    add_document_args(p)
    p.set_defaults(func=run)


def evaluate_table(table, conf: np.ndarray, accepted: np.ndarray) -> tuple[dict, list[dict]]:
    """metrics.json content and scores.jsonl rows for a table and extractconf's scores."""
    from confidence.baselines import fill_missing
    from confidence.calibration import evaluate_scores

    cols, missing = fill_missing(table.baselines)
    cols = {"extractconf": conf, **cols}
    methods = {}
    for name, s in cols.items():
        m = evaluate_scores(table.y, s)
        m["llm_calls_per_doc"] = table.calls.get(name)
        m["missing_share"] = missing.get(name, 0.0)
        methods[name] = m
    n_acc = int(accepted.sum())
    docs = np.asarray(table.rows.doc_ids)
    all_acc = {d: True for d in docs}
    for d, a in zip(docs, accepted, strict=True):
        all_acc[d] = all_acc[d] and bool(a)
    routing = {
        "coverage": float(accepted.mean()),
        "accuracy_of_accepted": float(table.y[accepted].mean()) if n_acc else None,
        "straight_through_documents": float(np.mean(list(all_acc.values()))),
    }
    oracle = float(table.y.mean())  # an oracle accepts every correct field and nothing else
    # The oracle's AURC (correct fields ranked first) is the floor of every method's AURC;
    # excess AURC (E-AURC, Geifman et al. 2019) removes it so domains with different failure
    # rates compare.
    aurc_floor = aurc_oracle(table.y) if len(table) else None
    for m in methods.values():
        m["coverage_at_accuracy_0.99_of_oracle"] = (
            m["coverage_at_accuracy_0.99"] / oracle if oracle > 0 else None
        )
        m["aurc_oracle"] = aurc_floor
        m["excess_aurc"] = (
            m["aurc"] - aurc_floor
            if aurc_floor is not None and m["aurc"] is not None and np.isfinite(m["aurc"])
            else None
        )
    rows = []
    r = table.rows
    for i in range(len(table)):
        row = {"doc_id": r.doc_ids[i], "field": r.fields[i], "value": r.values[i]}
        row["correct"] = bool(table.y[i])
        for name, s in cols.items():
            row[name] = float(s[i])
        rows.append(row)
    return {"methods": methods, "routing": routing}, rows


def run(args) -> int:
    from confidence.engine import ConfidenceEngine
    from confidence.errors import DatasetError
    from confidence.training import cross_fit

    if args.folds < 2:
        raise DatasetError(f"--folds {args.folds}: pass at least 2")
    datasets = open_datasets(args.datasets)
    table = load_table(args, datasets)
    require_rows(table)
    if args.model is None:
        conf, accepted = cross_fit(
            table,
            n_splits=args.folds,
            seed=args.seed,
            calibrator=args.calibrator,
            target_accuracy=args.target_accuracy,
            confidence_level=args.confidence_level,
        )
        how = f"cross-fitted, {min(args.folds, table.n_documents)} document folds"
    else:
        engine = ConfidenceEngine.load(None if args.model == "default" else args.model)
        conf = engine.predict_confidence(table.rows.X)
        accepted = np.array(
            [s.decision == "accept" for s in engine.route_rows(table.rows, explain=False)]
        )
        how = f"model {args.model}"
    metrics, rows = evaluate_table(table, conf, accepted)
    metrics.update(
        {
            "evaluation": how,
            "datasets": [str(d.path) for d in datasets],
            "n_documents": table.n_documents,
            "n_fields": len(table),
            "skipped_documents": dict(table.skipped),
            "missing_fill": 0.0,
        }
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(jsonable(metrics), indent=2, allow_nan=False)
    (out / "metrics.json").write_text(text + "\n")
    with (out / "scores.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
    print(
        f"{how}: {table.n_documents} documents, {len(table)} fields, failure rate "
        f"{1 - table.y.mean():.1%}"
    )
    print(f"{'method':18} {'auroc':>6} {'aurc':>7} {'cov@99':>7} {'ece':>6} {'calls':>6}")
    for name, m in sorted(
        metrics["methods"].items(), key=lambda kv: -np.nan_to_num(kv[1]["auroc"])
    ):
        ece = "-" if m["ece"] is None else f"{m['ece']:.3f}"
        calls = "-" if m["llm_calls_per_doc"] is None else f"{m['llm_calls_per_doc']:.1f}"
        print(
            f"{name:18} {m['auroc']:6.3f} {m['aurc']:7.4f} "
            f"{m['coverage_at_accuracy_0.99']:7.3f} {ece:>6} {calls:>6}"
        )
    rt = metrics["routing"]
    print(
        f"routing: coverage {rt['coverage']:.1%}, straight-through documents "
        f"{rt['straight_through_documents']:.1%}"
    )
    print(f"wrote {out / 'metrics.json'} and {out / 'scores.jsonl'}")
    return 0
