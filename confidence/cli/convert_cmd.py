"""``extractconf convert``: a public corpus in its native layout → a dataset folder."""

from __future__ import annotations

import argparse
import importlib
import sys

from confidence.errors import DatasetError
from confidence.schema import FIELD_TYPES

# --from choice -> module of confidence.datasets exposing convert(src, out_dir, **options)
CONVERTERS = {
    "sroie": "SROIE receipts: key/<id>.txt, box/<id>.txt, img/<id>.jpg (or --images DIR)",
    "cord": "CORD receipts: [split/]json/*.json with gt_parse or valid_line, [split/]image/",
    "docile": "DocILE invoices: annotations/, pdfs/, split files such as dev.json (--split dev)",
    "funsd": "FUNSD forms: [training_data|testing_data/]annotations/*.json and images/",
    "generic": "a folder of documents + labels.csv/.jsonl (file, doc_id?, one column per field)",
}
# which optional arguments each converter accepts
OPTIONS = {
    "sroie": ("images",),
    "cord": ("images", "split"),
    "docile": ("split", "fields", "tax_details"),
    "funsd": ("images", "split", "min_docs"),
    "generic": ("labels", "schema", "types", "empty"),
}

EPILOG = """\
formats:
{formats}

In the output labels.jsonl a null value means the field is absent from the document and a
missing key means it is not labelled. Documents that cannot be converted are listed with the
reason; the others are written. Exit code 0 when everything converted, 1 when some documents
were skipped, 2 when the input is unusable.

examples:
  extractconf convert --from sroie data/sroie/train data/sroie-ds
  extractconf convert --from sroie native/ out/ --images files/
  extractconf convert --from docile docile/ out/ --split val
  extractconf convert --from generic scans/ out/ --labels values.csv --types total=amount
"""


def _types(text: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, ftype = item.partition("=")
        if not sep or ftype not in FIELD_TYPES:
            raise argparse.ArgumentTypeError(
                f"{item!r}: use NAME=TYPE with TYPE one of {', '.join(FIELD_TYPES)}"
            )
        out[name.strip()] = ftype
    return out


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "convert",
        help="convert SROIE, CORD, DocILE, FUNSD or a generic folder into a dataset folder",
        description="Convert a public corpus in its native layout into a dataset folder "
        "(schema.json + labels.jsonl + files/).",
        epilog=EPILOG.format(formats="\n".join(f"  {k:8s} {v}" for k, v in CONVERTERS.items())),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--from", dest="source", required=True, choices=sorted(CONVERTERS))
    p.add_argument("src", metavar="SRC", help="the corpus folder in its native layout")
    p.add_argument("out_dir", metavar="OUT_DIR", help="the dataset folder to create")
    p.add_argument("--images", help="folder of the scans, if not where the format expects them")
    p.add_argument("--split", help="only this split (DocILE: train/val/dev...; CORD, FUNSD)")
    p.add_argument(
        "--fields", help="DocILE: comma-separated KILE field types to keep (default: all)"
    )
    p.add_argument(
        "--tax-details", action="store_true", help="DocILE: also convert tax_detail_* fields"
    )
    p.add_argument(
        "--min-docs", type=int, default=1, help="FUNSD: keep questions seen in >= N forms"
    )
    p.add_argument("--labels", help="generic: CSV or JSONL values file (default: SRC/labels.*)")
    p.add_argument("--schema", help="generic: schema.json to use instead of inferring one")
    p.add_argument("--types", type=_types, help="generic: field types, e.g. total=amount,date=date")
    p.add_argument(
        "--empty",
        choices=("absent", "unlabelled"),
        default="absent",
        help="generic CSV: what an empty cell means (default: absent, i.e. null)",
    )
    p.add_argument("--limit", type=int, help="convert at most N documents")
    p.add_argument("--link", action="store_true", help="hard-link files instead of copying")
    p.add_argument("--overwrite", action="store_true", help="replace a dataset in OUT_DIR")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"confidence.datasets.{args.source}")
    options = {}
    for name in OPTIONS[args.source]:
        value = getattr(args, name)
        if name == "fields" and value:
            value = tuple(f.strip() for f in value.split(",") if f.strip())
        if value is not None and value is not False:
            options[name] = value
    ignored = [
        f"--{n.replace('_', '-')}"
        for n in ("images", "split", "fields", "labels", "schema", "types")
        if getattr(args, n) and n not in OPTIONS[args.source]
    ]
    if ignored:
        print(f"note: {', '.join(ignored)} ignored for --from {args.source}", file=sys.stderr)
    summary = module.convert(
        args.src,
        args.out_dir,
        limit=args.limit,
        overwrite=args.overwrite,
        link=args.link,
        progress=sys.stderr.isatty(),
        **options,
    )
    print(summary)
    if summary.n_written == 0:
        raise DatasetError(f"{args.src}: no document could be converted (reasons above)")
    return 1 if summary.skipped else 0
