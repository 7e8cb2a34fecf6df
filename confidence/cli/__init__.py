"""``extractconf`` command line.

Each sub-command lives in its own module of this package and exposes ``register(subparsers)``,
which adds its parser and sets ``func(args) -> int`` as the parser default.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from confidence.cli._args import EXIT_CODES
from confidence.errors import ExtractConfError

# Order is the order shown in --help.
_COMMANDS = (
    "inspect",
    "synth",
    "convert",
    "extract",
    "train",
    "evaluate",
    "tune",
    "score",
    "review",
    "feedback",
    "recalibrate",
    "monitor",
    "demo",
)


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line (and exit code 2), as every other error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="extractconf",
        description=(
            "Field-level confidence for LLM document extraction: read a document twice (Hunter "
            "and Mapper), fuse disagreement, logprobs, OCR, image quality and layout into a "
            "calibrated P(correct), and route each field to accept or review."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from confidence import __version__

    parser.add_argument("--version", action="version", version=f"extractconf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"confidence.cli.{name}_cmd").register(sub)
    for p in sub.choices.values():  # every command documents its exit codes (its own, or these)
        if "exit codes" not in (p.epilog or ""):
            p.epilog = f"{p.epilog.rstrip()}\n\n{EXIT_CODES}" if p.epilog else EXIT_CODES
        p.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 1 some documents partial or failed,
    2 bad invocation or unreadable input). Errors and warnings are one line each on stderr."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error already printed
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    prog = f"extractconf {args.command}"

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = " ".join(str(message).split())
        print(f"{prog}: warning: {text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        try:
            return int(args.func(args) or 0)
        except ExtractConfError as e:
            print(f"{prog}: error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return 130


if __name__ == "__main__":
    sys.exit(main())
