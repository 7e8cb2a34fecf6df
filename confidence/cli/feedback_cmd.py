"""``extractconf feedback``: review decisions -> a labelled dataset folder."""

from __future__ import annotations

import argparse
import sys

from confidence.cli._args import check_out

EPILOG = """\
Joins the review log (written by `extractconf review` or imported) with the scored file(s) the
reviews came from, and writes a dataset folder (schema.json + labels.jsonl + files/): each
reviewed field is labelled with the reviewer's final value (accept: the shown value; correct:
the typed value; absent: null), the last decision on a field wins, skips are no decision, and
every other field is unlabelled (no key). Each document's meta.review keeps, per reviewed field,
p_sample (probability it was sent to review: 1 when routed by its threshold, the audit rate when
audited), p_floor, audit, action, reviewer, time and decision_id, so that `extractconf
recalibrate` can weight the reviews (docs/feedback.md).

The document files are linked (copied across file systems) from --documents: a dataset folder
or a folder of <doc_id>.<suffix> files. A document without a file, or a decision on a field
that is not in the scored file, is named on stderr and left out (exit code 1).

examples:
  extractconf feedback review.jsonl --scored scored.jsonl --documents data/batch-7 \\
      --out data/reviewed
  extractconf feedback review.jsonl --scored day1.jsonl day2.jsonl --documents inbox/ \\
      --out data/reviewed --overwrite
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "feedback",
        help="turn review decisions into a labelled dataset folder (with sampling weights)",
        description="Review log + scored rows -> labelled dataset folder for recalibration.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("log", metavar="REVIEW_LOG", help="review log (JSONL) of decisions")
    p.add_argument(
        "--scored",
        nargs="+",
        required=True,
        metavar="SCORED",
        help="the scored file(s) that were reviewed (.jsonl / .csv / .parquet)",
    )
    p.add_argument(
        "--documents",
        required=True,
        metavar="DIR",
        help="the documents: a dataset folder or a folder of <doc_id>.<suffix> files",
    )
    p.add_argument("--out", required=True, metavar="DATASET_DIR", help="dataset folder to write")
    p.add_argument(
        "--schema",
        default=None,
        help="schema.json (default: the documents "
        "dataset's, else the fields and types of the scored rows)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace a dataset already there")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from confidence.errors import DatasetError
    from confidence.feedback import build_feedback_dataset
    from confidence.schema import Schema

    check_out(args.out, folder=True)
    if not Path(args.log).is_file():
        raise DatasetError(f"{args.log}: no such review log")
    schema = Schema.load(args.schema) if args.schema else None
    summary = build_feedback_dataset(
        args.log,
        args.scored,
        args.out,
        documents=args.documents,
        schema=schema,
        overwrite=args.overwrite,
    )
    for what, why in summary.skipped:
        print(f"{what}: skipped: {why}", file=sys.stderr)
    acts = ", ".join(f"{n} {a}" for a, n in sorted(summary.actions.items())) or "none"
    print(
        f"{summary.n_documents} documents, {summary.n_labelled} reviewed fields labelled "
        f"({acts}; {summary.n_audit} audit samples)"
    )
    if summary.n_pending:
        print(
            f"note: {summary.n_pending} fields routed to review have no decision yet; "
            "`recalibrate`'s guarantee assumes batches reviewed in full (the review queue "
            "shows the least confident fields first)"
        )
    print(f"wrote {summary.out_dir}")
    return 1 if summary.skipped else 0
