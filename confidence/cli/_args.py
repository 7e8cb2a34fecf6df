"""Argument checks shared by the commands: counts, ``--out`` paths, the exit-code epilog.

Every check runs before any work and raises :class:`~confidence.errors.DatasetError` (one line
on stderr, exit code 2 from :func:`confidence.cli.main`).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from confidence.errors import DatasetError

EXIT_CODES = """\
exit codes:
  0  every document ok
  1  some document partial (one of its two readings failed) or failed; one line each on stderr
  2  bad invocation or unreadable input (one line on stderr); nothing was done
"""


def _number(text: str, cast, kind: str, ok, need: str):
    try:
        x = cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
    if not ok(x):
        raise argparse.ArgumentTypeError(f"{text}: {need}")
    return x


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1 (``--n-jobs``, ``--concurrency``)."""
    return _number(text, int, "an integer", lambda n: n >= 1, "pass at least 1")


def megapixels(text: str) -> float:
    """argparse type: an image size limit in megapixels, at least 0.01 (``--max-megapixels``)."""
    return _number(text, float, "a number", lambda x: x >= 0.01, "pass at least 0.01")


def positive_float(text: str) -> float:
    """argparse type: a number of seconds greater than 0 (``--llm-timeout``, ``--doc-timeout``)."""
    return _number(text, float, "a number", lambda x: x > 0, "pass a number of seconds above 0")


def non_negative_int(text: str) -> int:
    """argparse type: an integer of at least 0 (``--llm-retries``, ``--samples``)."""
    return _number(text, int, "an integer", lambda n: n >= 0, "pass 0 or more")


def check_out(path: str | Path, *, suffixes: tuple[str, ...] = (), folder: bool = False) -> Path:
    """Refuse an ``--out`` that cannot be written, before any work.

    ``suffixes`` lists the accepted file suffixes (empty = any); ``folder`` asks for a folder
    (existing or to create). The parent folders are created, and writing in the target folder
    is tried, so an unwritable place fails now rather than after the LLM calls.
    """
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise DatasetError(f"--out {p}: use a {' / '.join(suffixes)} file")
    if folder and p.exists() and not p.is_dir():
        raise DatasetError(f"--out {p}: exists and is not a folder")
    if not folder and p.is_dir():
        raise DatasetError(f"--out {p}: is a folder; give a file name")
    where = p if folder else p.parent
    above = next((a for a in (where, *where.parents) if a.exists()), None)
    if above is not None and not above.is_dir():
        raise DatasetError(f"--out {p}: {above} is a file, not a folder")
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=where):
            pass
        if not folder and p.exists():
            with p.open("a"):
                pass
    except OSError as e:
        raise DatasetError(f"--out {p}: cannot write there ({e.strerror or e})") from None
    return p
