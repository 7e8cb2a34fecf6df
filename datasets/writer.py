"""Writing dataset folders one document at a time (used by converters and the generator).

Examples
--------
>>> import tempfile, pathlib
>>> from confidence.schema import Field, Schema
>>> out = pathlib.Path(tempfile.mkdtemp()) / "ds"
>>> with DatasetWriter(out, Schema("s", (Field("total", "amount"),))) as w:
...     rec = w.add("r1", {"total": "9.00"}, data=b"%PDF-1.4", suffix=".pdf")
>>> rec.file, w.summary().n_written
('files/r1.pdf', 1)
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confidence.datasets.labels import (
    FILES,
    FORBIDDEN_ID_CHARS,
    LABELS,
    SCHEMA,
    LabelRecord,
    coerce_value,
)
from confidence.errors import DatasetError, DocumentError
from confidence.schema import Schema


@dataclass(frozen=True)
class WriteSummary:
    """What a :class:`DatasetWriter` wrote and what the caller skipped, with reasons."""

    out_dir: str
    n_written: int
    skipped: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "n_written": self.n_written,
            "skipped": [list(s) for s in self.skipped],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WriteSummary:
        return cls(
            str(d["out_dir"]),
            int(d["n_written"]),
            tuple((str(a), str(b)) for a, b in d.get("skipped", ())),
        )

    def __str__(self) -> str:
        lines = [f"converted {self.n_written} document(s) into {self.out_dir}"]
        if self.skipped:
            lines.append(f"skipped {len(self.skipped)}:")
            lines += [f"  {what}: {why}" for what, why in self.skipped[:20]]
            if len(self.skipped) > 20:
                lines.append(f"  ... and {len(self.skipped) - 20} more")
        return "\n".join(lines)


class DatasetWriter:
    """Write a dataset folder one document at a time (a context manager).

    ``schema.json`` is written on entry; each :meth:`add` copies (or hard-links) the document into
    ``files/`` and appends its ``labels.jsonl`` line at once, so an interrupted conversion leaves a
    valid, shorter dataset.

    Parameters
    ----------
    out_dir : str or Path
        Created if needed. An existing dataset there is refused unless ``overwrite=True``.
    schema : Schema
        Every written field must be declared in it.
    overwrite : bool
        Replace an existing dataset folder's ``labels.jsonl``, ``schema.json`` and ``files/``.
    link : bool
        Hard-link source files instead of copying them (falls back to a copy across devices).
    """

    def __init__(
        self, out_dir: str | Path, schema: Schema, *, overwrite: bool = False, link: bool = False
    ) -> None:
        self.out_dir = Path(out_dir)
        self.schema = schema
        self.overwrite = overwrite
        self.link = link
        self.files_dir = self.out_dir / FILES
        self.skipped: list[tuple[str, str]] = []
        self._ids: set[str] = set()
        self._fh = None

    def __enter__(self) -> DatasetWriter:
        labels = self.out_dir / LABELS
        if labels.exists() or (self.out_dir / SCHEMA).exists():
            if not self.overwrite:
                raise DatasetError(
                    f"{self.out_dir}: already holds a dataset; choose another folder or overwrite"
                )
            # Only a folder that is a dataset gets its files/ cleared, never an arbitrary one.
            shutil.rmtree(self.files_dir, ignore_errors=True)
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.schema.save(self.out_dir / SCHEMA)
        self._fh = labels.open("w", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @property
    def n_written(self) -> int:
        return len(self._ids)

    def file_path(self, doc_id: str, suffix: str) -> Path:
        """Where :meth:`add` stores ``doc_id``'s file; write there directly to avoid a copy."""
        self._check_id(doc_id)
        return self.files_dir / f"{doc_id}{suffix.lower()}"

    def _check_id(self, doc_id: str) -> None:
        if not doc_id or set(doc_id) & FORBIDDEN_ID_CHARS or doc_id in (".", ".."):
            raise DatasetError(
                f"doc_id {doc_id!r} cannot name a file; use letters, digits, '-', '_' or '.'"
            )

    def add(
        self,
        doc_id: str,
        fields: Mapping[str, str | None],
        *,
        source: str | Path | None = None,
        data: bytes | None = None,
        suffix: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> LabelRecord:
        """Store one document and append its label line.

        Give exactly one of ``source`` (a file to copy or link; a file already at
        :meth:`file_path` is used in place) or ``data`` (bytes, with ``suffix``).
        """
        if self._fh is None:
            raise DatasetError(
                "DatasetWriter is not open; use it as 'with DatasetWriter(...) as w'"
            )
        if (source is None) == (data is None):
            raise ValueError("give exactly one of source= or data=")
        self._check_id(doc_id)
        if doc_id in self._ids:
            raise DatasetError(f"doc_id {doc_id!r} written twice; ids must be unique")
        unknown = [k for k in fields if k not in self.schema]
        if unknown:
            raise DatasetError(
                f"doc {doc_id!r}: fields not in schema {self.schema.name!r}: {', '.join(unknown)}"
            )
        values = {k: coerce_value(k, v) for k, v in fields.items()}
        if source is not None:
            source = Path(source)
            if not source.is_file():
                raise DocumentError(source, "file not found")
            target = self.file_path(doc_id, suffix or source.suffix)
            if not (target.exists() and target.samefile(source)):
                self._store(source, target)
        else:
            if not suffix:
                raise ValueError("data= needs suffix= (e.g. '.pdf')")
            target = self.file_path(doc_id, suffix)
            target.write_bytes(data)
        rec = LabelRecord(
            doc_id, target.relative_to(self.out_dir).as_posix(), values, dict(meta or {})
        )
        self._fh.write(json.dumps(rec.to_dict(), ensure_ascii=False) + "\n")
        self._fh.flush()
        self._ids.add(doc_id)
        return rec

    def _store(self, source: Path, target: Path) -> None:
        if target.exists():
            target.unlink()
        if self.link:
            try:
                os.link(source, target)
                return
            except OSError:  # other filesystem, or links not allowed: copy instead
                pass
        shutil.copyfile(source, target)

    def skip(self, what: str | Path, reason: str) -> None:
        """Record a source document the caller could not convert (reported in :meth:`summary`)."""
        self.skipped.append((str(what), reason))

    def summary(self) -> WriteSummary:
        return WriteSummary(str(self.out_dir), self.n_written, tuple(self.skipped))


def write_dataset(
    out_dir: str | Path,
    schema: Schema,
    records: Iterable[LabelRecord],
    *,
    source_dir: str | Path | None = None,
    overwrite: bool = False,
    link: bool = False,
) -> WriteSummary:
    """Write records whose ``file`` points at existing documents into a new dataset folder.

    Each ``record.file`` is resolved against ``source_dir`` (or taken as is when absolute or no
    ``source_dir`` is given) and copied to ``files/<doc_id><suffix>``. A record whose file is
    missing is skipped and reported in the returned summary; the rest are written.
    """
    base = Path(source_dir) if source_dir is not None else None
    with DatasetWriter(out_dir, schema, overwrite=overwrite, link=link) as w:
        for rec in records:
            src = Path(rec.file)
            if base is not None and not src.is_absolute():
                src = base / src
            if not src.is_file():
                w.skip(rec.doc_id, f"file {str(src)!r} not found")
                continue
            w.add(rec.doc_id, rec.fields, source=src, meta=rec.meta)
    return w.summary()
