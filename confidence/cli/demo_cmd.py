"""``extractconf demo``: the whole pipeline offline on a few synthetic invoices."""

from __future__ import annotations

import argparse
from pathlib import Path

from confidence.cli._args import check_out, positive_int
from confidence.cli._llm_args import add_llm_args, make_llm
from confidence.output import output_format


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo",
        help="offline tour: synthetic invoices -> Hunter + Mapper (embedded LLM) -> decisions",
        description=(
            "Generate a few synthetic invoices (a digital PDF and a degraded scan), ingest them,\n"
            "read each with the Hunter and the Mapper on the embedded SmolLM2 model, score every\n"
            "field with the shipped default model and print the decisions, confidences and\n"
            "reasons beside the gold values. --inspect-only shows ingestion alone (no LLM)."
        ),
    )
    p.add_argument("--n", type=positive_int, default=2, help="invoices to generate (default 2)")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--model", default=None, help="engine folder (default: the shipped model)")
    p.add_argument("--out", default=None, help="also write the scored rows (.jsonl/.csv/.parquet)")
    p.add_argument("--inspect-only", action="store_true", help="ingestion tour only, no LLM")
    p.add_argument(
        "--lines", type=positive_int, default=6, help="(--inspect-only) text lines per page"
    )
    add_llm_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from confidence import demo

    if args.out:
        if not args.inspect_only:
            output_format(args.out)
        check_out(args.out, folder=args.inspect_only)
    if args.inspect_only:
        return demo.inspect_tour(Path(args.out) if args.out else None, lines=args.lines)
    return demo.pipeline_tour(
        n=args.n, seed=args.seed, llm=make_llm(args), model=args.model, out=args.out
    )
