"""Finding a document's scan beside its annotation (shared by the converters).

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "r1.jpg").write_bytes(b"")
>>> find_image("r1", [d / "missing", d], (".png", ".jpg")).name
'r1.jpg'
>>> find_image("r2", [d], (".png", ".jpg")) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path


def find_image(stem: str, dirs: Iterable[Path], suffixes: Sequence[str]) -> Path | None:
    """First ``DIR/STEM+SUFFIX`` that is a file, folders first then suffixes in order; else None."""
    return next(
        (d / f"{stem}{s}" for d in dirs for s in suffixes if (d / f"{stem}{s}").is_file()),
        None,
    )
