"""``extractconf recalibrate``: refit the calibration and re-certify thresholds from reviews."""

from __future__ import annotations

import argparse

from confidence.cli._args import check_out
from confidence.cli._engine_common import add_document_args, add_model_arg, add_runs_args

EPILOG = """\
Input: the dataset folder `extractconf feedback` wrote (reviewed fields labelled, with their
sampling probabilities) and the runs of its documents. Output: a full model folder (--out,
manifest recomputed) usable by `extractconf score --model`.

1. The model's calibrator (same family: isotonic for the shipped model) is refitted on the
   reviewed fields, each weighted by 1 / p_sample, so that the low-confidence fields the
   reviewers saw most do not stand for all fields. The fusion model stays as it is.
2. Each field's threshold is certified by an anytime-valid sequential test (a betting
   confidence sequence on the accuracy above each candidate threshold, inverse-probability
   weighted): with probability at least --confidence-level, at every run, every unlocked field's
   accuracy above its threshold is at least --target-accuracy. The test's state is saved in the
   model folder (unlocking.json), so re-running recalibrate on the new model as reviews
   accumulate adds evidence without spending the guarantee: a field is unlocked (auto-accept
   above its threshold) as soon as the evidence reaches the bar. A field not unlocked, or never
   reviewed, is reviewed always. Start: a model without the state (e.g. the shipped one) starts
   every field locked. A review log that keeps growing can be turned into the dataset again:
   reviews already counted are not counted twice.

Printed per field: reviews so far (+ new), status (locked / unlocked), threshold, estimated
accuracy, and how many more reviews would likely unlock it if the current accuracy estimate
holds. Audited accepted fields (score --audit-rate) keep evidence flowing for unlocked fields;
without audits their accepted values are never reviewed and add no evidence.

examples:
  extractconf recalibrate --model models/start --data data/reviewed --runs runs/b7.jsonl \\
      --out models/day1
  extractconf recalibrate --model models/day1 --data data/reviewed --runs runs/*.jsonl \\
      --out models/day2 --no-documents
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "recalibrate",
        help="refit calibration and re-certify thresholds from reviewed fields (anytime-valid)",
        description="Recalibrate a model from review feedback and unlock fields progressively.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_arg(p)
    p.add_argument(
        "--data",
        required=True,
        metavar="DATASET_DIR",
        help="dataset folder from `extractconf feedback`",
    )
    add_runs_args(p)
    p.add_argument("--out", required=True, metavar="MODEL_DIR", help="model folder to write")
    p.add_argument(
        "--target-accuracy",
        type=float,
        default=None,
        help="default: the model's (fixed once the sequential test has started)",
    )
    p.add_argument("--confidence-level", type=float, default=None, help="default: the model's")
    add_document_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from confidence.cli._engine_common import load_table, open_datasets
    from confidence.engine import ConfidenceEngine, default_model_dir
    from confidence.errors import DatasetError
    from confidence.feedback.recalibration import (
        load_state,
        recalibrate,
        save_recalibrated,
        status_lines,
    )

    for name in ("target_accuracy", "confidence_level"):
        v = getattr(args, name)
        if v is not None and not 0 < v < 1:
            raise DatasetError(f"--{name.replace('_', '-')} {v}: pass a number between 0 and 1")
    model_dir = default_model_dir() if args.model in (None, "default") else Path(args.model)
    if Path(args.out).resolve() == model_dir.resolve():
        raise DatasetError(f"--out {args.out}: is the input model; write a new folder")
    check_out(args.out, folder=True)
    engine = ConfidenceEngine.load(model_dir)
    [dataset] = open_datasets([args.data])
    table = load_table(args, [dataset])
    result = recalibrate(
        engine,
        table,
        dataset,
        certifier=load_state(model_dir),
        target_accuracy=args.target_accuracy,
        confidence_level=args.confidence_level,
    )
    out = save_recalibrated(result, args.out)
    cal = result.calibration
    cert = result.certifier
    print(
        f"{cal['n_reviews']} reviewed fields; calibrator {cal['calibrator']} "
        + ("refitted (weights 1/p_sample)" if cal["refitted"] else "kept (one class only)")
        + f", weighted ECE on the reviews (in-sample) {cal['weighted_ece_before']:.3f} -> "
        f"{cal['weighted_ece_after']:.3f}"
    )
    print(
        f"sequential test: target accuracy {cert.target_accuracy:.1%} with probability "
        f"{cert.confidence_level:.0%} at every look"
    )
    if cal["n_without_evidence"]:
        print(
            f"note: {cal['n_without_evidence']} new reviews were of fields scored under a "
            "threshold without audits (score --audit-rate 0): the accepted values of those "
            "fields were never reviewable, so these reviews add no evidence to the test; score "
            "with --audit-rate, or with thresholds that review everything (a new domain)"
        )
    for line in status_lines(result.fields):
        print(line)
    print(f"wrote {out}")
    return 0
