"""``extractconf`` command line.

Each sub-command lives in its own module of this package and exposes ``register(subparsers)``,
which adds its parser and sets ``func(args) -> int`` as the parser default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from confidence.errors import ExtractConfError

# Order is the order shown in --help.
_COMMANDS = ("inspect", "synth", "convert", "extract", "train", "evaluate", "tune", "score", "demo")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="extractconf",
        description=(
            "Field-level confidence for LLM document extraction: read a document twice (Hunter "
            "and Mapper), fuse disagreement, logprobs, OCR, image quality and layout into a "
            "calibrated P(correct), and route each field to accept or review."
        ),
    )
    from confidence import __version__

    parser.add_argument("--version", action="version", version=f"extractconf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"confidence.cli.{name}_cmd").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 1 some items failed, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ExtractConfError as e:
        print(f"extractconf {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"extractconf {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
