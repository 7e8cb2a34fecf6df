"""``extractconf review``: the local review app for the fields routed to people."""

from __future__ import annotations

import argparse
import gc
import sys

from confidence.cli._args import positive_float
from confidence.cli._engine_common import add_read_once_arg, load_options

EPILOG = """\
Opens a local web app (http://127.0.0.1:8765/ by default) that shows, one at a time, the fields
`extractconf score` sent to review (decision=review) and the audit sample (`score --audit-rate`,
marked "audit"): the page with the value's box (blue; the Mapper's box dashed orange when it
read another place), the field, its type and description, the Hunter and Mapper values, the
confidence and the reasons. Straight-through documents are not shown.

Keys: Enter accepts the shown value; typing replaces it (Enter saves the correction); Alt+N
marks the field "not on the page"; Esc (or Alt+S) skips it for now (it comes back at the end).

Every decision is appended to the review log (--log, JSONL, fsynced) before the app answers;
restarting resumes where the log ends; a double submit is logged once. Each field is leased to
one browser for --lease seconds, so two reviewers never get the same field at the same time.

Security: binds 127.0.0.1. Any other --host needs --token SECRET; every request must then
carry it (open http://HOST:PORT/?token=SECRET once; a cookie keeps it). Only files under
--documents are served.

For teams using another labelling tool: --export QUEUE.csv|.jsonl writes the fields still to
review (with empty action / final_value columns) and exits; --import FILE.csv|.jsonl appends the
filled-in rows to the log as decisions and exits (re-importing a file logs nothing twice).

examples:
  extractconf review scored.jsonl --documents invoices/
  extractconf review scored.csv --documents invoices/ --order document --reviewer ana
  extractconf review scored.jsonl --documents data/ --host 0.0.0.0 --token "$(openssl rand -hex 16)"
  extractconf review scored.jsonl --export queue.csv
  extractconf review scored.jsonl --import queue.csv --log review.jsonl
"""

EXIT = """\
exit codes:
  0  the app stopped normally, or the export/import was written
  2  bad invocation or unreadable input (one line on stderr); nothing was done
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "review",
        help="review app: check the fields routed to review, decisions to a log",
        description="Serve the review queue of a scored file in a local web app.",
        epilog=EPILOG + "\n" + EXIT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scored", metavar="SCORED", help="scored.jsonl / .csv / .parquet from score")
    p.add_argument("--documents", metavar="DIR", help="folder with the documents (or dataset)")
    p.add_argument("--log", default="review.jsonl", help="review log (default review.jsonl)")
    p.add_argument("--port", type=int, default=8765, help="default 8765")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (others need --token)")
    p.add_argument("--token", default=None, help="required by every request; needed off loopback")
    p.add_argument("--reviewer", default="reviewer", help="name logged with each decision")
    p.add_argument("--order", choices=("confidence", "document"), default="confidence",
                   help="lowest confidence first (default) or document by document")  # fmt: skip
    p.add_argument("--lease", type=positive_float, default=300.0, metavar="SECONDS",
                   help="seconds a field stays reserved for one browser (default 300)")  # fmt: skip
    p.add_argument("--schema", default=None, help="schema.json for the field descriptions")
    p.add_argument("--runs", nargs="+", default=None,
                   help="the runs.jsonl scored: box the line a value was read from when the "
                        "value itself is not found on the page")  # fmt: skip
    p.add_argument("--cache-dir", default=None, help="OCR cache folder")
    add_read_once_arg(p)  # read the pages as score read them
    g = p.add_mutually_exclusive_group()
    g.add_argument("--export", metavar="QUEUE", help="write the queue to .csv/.jsonl and exit")
    g.add_argument("--import", dest="import_", metavar="FILE",
                   help="append the decisions of a .csv/.jsonl to --log and exit")  # fmt: skip
    p.set_defaults(func=run)


def run(args) -> int:
    from confidence.errors import DatasetError
    from confidence.monitoring import read_rows
    from confidence.review.queue import ReviewQueue, order_items, queue_items

    rows = read_rows(args.scored)
    items = order_items(queue_items(rows), args.order)
    if args.runs:
        from confidence.records import load_runs
        from confidence.review.queue import with_lines

        items = with_lines(items, load_runs(args.runs))
    if args.import_:
        from confidence.review.exchange import import_decisions

        scored = {(str(r.get("doc_id")), str(r.get("field"))): r for r in rows}
        added, dup = import_decisions(args.import_, scored, args.log, reviewer=args.reviewer)
        print(
            f"imported {added} decisions into {args.log}"
            + (f" ({dup} already there)" if dup else "")
        )
        return 0
    del rows  # the queue keeps one small record per field; the full rows are not needed
    gc.collect()
    queue = ReviewQueue(items, args.log, lease=args.lease)
    decided = queue.decided()
    pending = [it for it in items if it.key not in decided]
    if args.export:
        from confidence.review.exchange import export_queue

        files = {}
        if args.documents:
            from confidence.review.pages import DocumentFolder

            folder = DocumentFolder(args.documents)
            files = {d: str(p) for d, p in folder.files.items()}
        n = export_queue(args.export, pending, files)
        print(f"wrote {n} fields to review to {args.export}")
        return 0
    if not args.documents:
        raise DatasetError("--documents DIR is needed to show the pages (or use --export)")
    from confidence.documents.cache import DocumentCache
    from confidence.review.app import serve
    from confidence.review.pages import DocumentFolder
    from confidence.schema import Schema

    folder = DocumentFolder(
        args.documents, cache=DocumentCache(args.cache_dir, **load_options(args))
    )
    schema = Schema.load(args.schema) if args.schema else None
    url = f"http://{'[' + args.host + ']' if ':' in args.host else args.host}:{args.port}/"
    p = queue.progress()
    print(
        f"{p.left} fields to review ({p.done} done in {args.log}); open {url}"
        + (f"?token={args.token}" if args.token else "")
        + " (Ctrl+C stops)",
        file=sys.stderr,
    )
    serve(
        {"queue": queue, "folder": folder, "schema": schema, "reviewer": args.reviewer},
        host=args.host,
        port=args.port,
        token=args.token,
    )
    return 0
