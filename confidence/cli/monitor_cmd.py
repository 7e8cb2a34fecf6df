"""``extractconf monitor``: drift and guarantee check of a scored batch against a reference."""

from __future__ import annotations

import argparse
import json
import sys

from confidence.cli._args import check_out

EPILOG = """\
Compares two outputs of `extractconf score` (REF_SCORED: a batch the thresholds were validated
on; NEW_SCORED: the batch to check), per field and, with --group COLUMN, per (field, group):

  * confidence distribution: two-sample Kolmogorov-Smirnov p-value + PSI effect size;
  * top features: the same on each feature.<name> column (`score --features K` writes them);
  * accepted share: Fisher's exact test + the change of share;
  * all p-values Holm-corrected as one family; a test drifts when significant at --level AND
    its effect reaches --min-psi (or --min-share-change);
  * with --reviews: realised accuracy of the audited accepted fields (review log, audit=true)
    with an exact Clopper-Pearson interval; below --target with confidence --confidence-level
    is `guarantee violated`;
  * a change of model_sha, thresholds_sha or llm between the batches is reported (drift).

Writes the JSON report (--out, else stdout) and, with --html, an HTML page with the
monitoring section. One summary line on stderr.

exit codes (for cron / CI):
  0  ok
  1  drift, or guarantee violated
  2  bad invocation or unreadable input (one line on stderr)

examples:
  extractconf monitor --reference scored-march.jsonl --current scored-april.jsonl
  extractconf monitor --reference ref.parquet --current new.parquet --reviews reviews.jsonl \\
      --target 0.9 --out monitor.json --html monitor.html
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "monitor",
        help="drift and guarantee check: a scored batch against a reference batch",
        description="Is a new scored batch still like the reference, and does the guarantee hold?",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--reference", required=True, metavar="REF_SCORED", help="scored rows")
    p.add_argument("--current", required=True, metavar="NEW_SCORED", help="scored rows")
    p.add_argument("--reviews", default=None, metavar="REVIEW_LOG", help="review log (JSONL)")
    p.add_argument("--group", default=None, metavar="COLUMN", help="also test per group")
    p.add_argument("--level", type=float, default=0.05, help="family-wise level (default 0.05)")
    p.add_argument("--min-psi", type=float, default=0.1, help="PSI for drift (default 0.1)")
    p.add_argument("--min-share-change", type=float, default=0.05,
                   help="accepted-share change for drift (default 0.05)")  # fmt: skip
    p.add_argument("--target", type=float, default=0.9, help="accuracy promised (default 0.9)")
    p.add_argument("--confidence-level", type=float, default=0.95,
                   help="level of the Clopper-Pearson interval (default 0.95)")  # fmt: skip
    p.add_argument("--out", default=None, help="report.json (default: stdout)")
    p.add_argument("--html", default=None, help="also write an HTML page")
    p.set_defaults(func=run)


def run(args) -> int:
    from confidence.errors import DatasetError
    from confidence.monitoring import monitor, read_rows

    for name in ("level", "target", "confidence_level"):
        if not 0 < getattr(args, name) < 1:
            raise DatasetError(f"--{name.replace('_', '-')} must be between 0 and 1")
    for out in (args.out, args.html):
        if out:
            check_out(out)
    report = monitor(
        read_rows(args.reference),
        read_rows(args.current),
        read_rows(args.reviews) if args.reviews else None,
        group=args.group,
        level=args.level,
        min_psi=args.min_psi,
        min_share_change=args.min_share_change,
        target=args.target,
        confidence_level=args.confidence_level,
    )
    text = json.dumps(report, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    if args.html:
        from confidence.report.monitoring import write_monitoring_html

        write_monitoring_html(report, args.html)
    a = report["audit"]
    print(
        f"monitor: {report['verdict']}: {len(report['drifted'])} drifted test(s)"
        + (f", changed: {', '.join(report['changes'])}" if report["changes"] else "")
        + (f", audited accuracy {a['accuracy']:.3f} (n={a['n']})" if a and a["n"] else "")
        + (f"; {report['untested']} test(s) with too few rows" if report["untested"] else "")
        + (
            f"; fields only in the current batch: {', '.join(only)}"
            if (only := report["fields_only_in"]["current"])
            else ""
        ),
        file=sys.stderr,
    )
    return report["exit_code"]
