"""``extractconf synth``: write a dataset folder of realistic synthetic invoices."""

from __future__ import annotations

import argparse
import sys
import time

EPILOG = """\
The folder holds schema.json (21 typed invoice fields), labels.jsonl and files/. Gold values
are the strings as printed (amounts without currency sign, dates in the printed format); null
means the field is absent from the page. Each label line's "meta" records the layout family,
language, fonts, absent / non-salient / distractor choices, page count, normalised values,
where each field was drawn, and for scans the degradations applied.

The same --seed gives byte-identical output whatever --n-jobs. Exit code 0 when every document
was written, 1 when some failed (listed), 2 on bad arguments.

examples:
  extractconf synth data/synth --n 500 --seed 0
  extractconf synth data/synth-scans --n 200 --scan-ratio 0.5 --languages de,fr --n-jobs 2
  extractconf synth data/letters --n 50 --families letter,receipt
  extractconf synth data/receipts --n 200 --kind receipt --scan-ratio 0.7
  extractconf synth data/faded --n 50 --kind receipt --scan-ratio 1 --fade-ratio 0.5
"""


def _csv(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def register(subparsers: argparse._SubParsersAction) -> None:
    from confidence.datasets.synthetic import FAMILIES
    from confidence.datasets.synthetic.locales import LANGUAGES

    p = subparsers.add_parser(
        "synth",
        help="generate synthetic invoices with exact labels (digital PDFs and degraded scans)",
        description="Generate realistic synthetic invoices (en/de/fr, "
        f"{len(FAMILIES)} layout families) with gold labels, as a dataset folder.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("out_dir", metavar="OUT_DIR", help="dataset folder to create")
    p.add_argument("--n", type=int, default=100, help="number of documents (default 100)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--scan-ratio",
        type=float,
        default=0.0,
        help="share of documents delivered as degraded scans, 0-1 (default 0)",
    )
    p.add_argument(
        "--languages",
        type=_csv,
        default=LANGUAGES,
        help=f"comma-separated languages (default {','.join(LANGUAGES)})",
    )
    p.add_argument(
        "--families",
        type=_csv,
        default=None,
        help=f"comma-separated layout families (default all: {', '.join(FAMILIES)})",
    )
    p.add_argument(
        "--kind",
        choices=("invoice", "receipt"),
        default="invoice",
        help="invoice (21 fields) or till receipt (merchant name/address, date, total)",
    )
    p.add_argument(
        "--header-variety",
        type=float,
        default=0.0,
        help="receipts: share with a wrapped name or a registration number beside it, 0-1 "
        "(default 0: the plain header of earlier corpora)",
    )
    p.add_argument(
        "--layout-variety",
        type=float,
        default=0.0,
        help="invoices: share drawn with an untitled customer address window and/or the "
        "references as a header-row table, 0-1 (default 0: the layouts of earlier corpora)",
    )
    p.add_argument(
        "--total-variety",
        type=float,
        default=0.0,
        help="receipts: share with tax-qualified total captions and a tax summary table whose "
        "'Total' row sums the net amounts, 0-1 (default 0: the totals of earlier corpora)",
    )
    p.add_argument(
        "--fade-ratio",
        type=float,
        default=0.0,
        help="receipts: share of the scanned ones whose thermal print has faded (pale, patchy, "
        "broken strokes), 0-1 (default 0: the scans of earlier corpora)",
    )
    p.add_argument(
        "--name-variety",
        type=float,
        default=0.0,
        help="receipts: share with the merchant's name at the body text's size (half of them "
        "under a logo line), 0-1 (default 0: the large names of earlier corpora)",
    )
    p.add_argument(
        "--address-variety",
        type=float,
        default=0.0,
        help="receipts: share whose address lines end in commas (half of them broken at their "
        "commas into short lines), 0-1 (default 0: the addresses of earlier corpora)",
    )
    p.add_argument("--n-jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--overwrite", action="store_true", help="replace a dataset already in OUT_DIR")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from confidence.datasets.synthetic import generate

    start = time.perf_counter()
    summary = generate(
        args.out_dir,
        args.n,
        seed=args.seed,
        scan_ratio=args.scan_ratio,
        languages=args.languages,
        families=args.families,
        n_jobs=args.n_jobs,
        overwrite=args.overwrite,
        progress=not args.quiet and sys.stderr.isatty(),
        kind=args.kind,
        header_variety=args.header_variety,
        layout_variety=args.layout_variety,
        total_variety=args.total_variety,
        fade_ratio=args.fade_ratio,
        name_variety=args.name_variety,
        address_variety=args.address_variety,
    )
    took = time.perf_counter() - start
    print(
        f"wrote {summary.n_written} synthetic document(s) to {summary.out_dir} "
        f"in {took:.1f} s ({summary.n_written / max(took, 1e-9):.1f} docs/s)"
    )
    for what, why in summary.skipped:
        print(f"failed: {what}: {why}", file=sys.stderr)
    return 1 if summary.skipped else 0
