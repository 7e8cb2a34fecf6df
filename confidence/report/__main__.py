"""``python -m confidence.report OUT_DIR``: (re)build report.html of an evaluate output folder."""

from __future__ import annotations

import sys

from confidence.errors import ExtractConfError
from confidence.report import build_report


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: python -m confidence.report OUT_DIR  (the folder of `extractconf evaluate`)")
        return 2
    try:
        print(build_report(args[0]))
    except ExtractConfError as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
