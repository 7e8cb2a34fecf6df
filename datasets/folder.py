"""Dataset folders: ``schema.json`` + ``labels.jsonl`` + ``files/``.

One line of ``labels.jsonl`` describes one document::

    {"doc_id": "inv-001", "file": "files/inv-001.pdf",
     "fields": {"total": "9.00", "po_number": null}, "meta": {"layout": "letter"}}

In ``fields`` a ``null`` value means *the field is absent from the document* (an extractor must
return nothing), while a *missing key* means *the field is not labelled* for that document (it is
left out of every metric). ``meta`` is optional free-form provenance (layout family, degradations,
language, source corpus) and is kept verbatim. ``file`` is relative to the dataset folder.

Examples
--------
>>> import tempfile, pathlib
>>> from confidence.schema import Field, Schema
>>> schema = Schema("receipt", (Field("total", "amount"), Field("date", "date")))
>>> out = pathlib.Path(tempfile.mkdtemp()) / "ds"
>>> with DatasetWriter(out, schema) as w:
...     rec = w.add("r1", {"total": "9.00", "date": None}, data=b"%PDF-1.4", suffix=".pdf")
>>> ds = Dataset.open(out)
>>> len(ds), ds["r1"].fields["total"], ds["r1"].absent
(1, '9.00', ('date',))
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from confidence.datasets.labels import LABELS, SCHEMA, LabelRecord, Problem
from confidence.datasets.writer import DatasetWriter, WriteSummary, write_dataset
from confidence.errors import DatasetError, DocumentError
from confidence.schema import Schema

if TYPE_CHECKING:
    from confidence.types import Document

__all__ = [
    "Dataset",
    "DatasetWriter",
    "LabelRecord",
    "Problem",
    "WriteSummary",
    "write_dataset",
]


class Dataset:
    """A labelled dataset folder, read once and validated.

    Use :meth:`open`; the constructor is for already-validated parts (e.g. :meth:`split`).

    Attributes
    ----------
    path : Path
        The dataset folder.
    schema : Schema
        Fields and their types (``schema.json``).
    records : tuple of LabelRecord
        In ``labels.jsonl`` order.
    problems : tuple of Problem
        What a non-strict load skipped (empty when everything was valid).
    """

    def __init__(
        self,
        path: str | Path,
        schema: Schema,
        records: Iterable[LabelRecord],
        problems: Iterable[Problem] = (),
    ) -> None:
        self.path = Path(path)
        self.schema = schema
        self.records = tuple(records)
        self.problems = tuple(problems)
        self._index = {r.doc_id: r for r in self.records}

    @classmethod
    def open(cls, path: str | Path, *, strict: bool = False, check_files: bool = True) -> Dataset:
        """Read and validate a dataset folder.

        Parameters
        ----------
        path : str or Path
            Folder holding ``schema.json`` and ``labels.jsonl``.
        strict : bool
            Raise :class:`DatasetError` at the first bad line instead of skipping it.
        check_files : bool
            Check that each record's file exists (skip or raise when it does not).

        A non-strict load skips malformed lines, lines whose file is missing and repeated doc_ids,
        drops values of fields the schema does not declare, records each in :attr:`problems` and
        warns once with the count. A bad ``schema.json`` is always an error.
        """
        path = Path(path)
        if not path.is_dir():
            raise DatasetError(f"{path}: dataset folder not found (expected {SCHEMA} + {LABELS})")
        schema = Schema.load(path / SCHEMA)
        labels = path / LABELS
        if not labels.is_file():
            raise DatasetError(f"{labels}: labels file not found")
        records: list[LabelRecord] = []
        problems: list[Problem] = []
        first_line: dict[str, int] = {}

        def problem(line: int, doc_id: str | None, reason: str) -> None:
            if strict:
                raise DatasetError(f"{labels} line {line}: {reason}")
            problems.append(Problem(line, doc_id, reason))

        with labels.open(encoding="utf-8-sig") as fh:
            for n, text in enumerate(fh, start=1):
                if not text.strip():
                    continue
                try:
                    rec = LabelRecord.from_dict(json.loads(text))
                except json.JSONDecodeError as e:
                    problem(n, None, f"not valid JSON ({e.msg} at column {e.colno})")
                    continue
                except DatasetError as e:
                    problem(n, None, str(e))
                    continue
                if rec.doc_id in first_line:
                    problem(
                        n,
                        rec.doc_id,
                        f"duplicate doc_id {rec.doc_id!r} (first on line "
                        f"{first_line[rec.doc_id]}); ids must be unique",
                    )
                    continue
                unknown = [k for k in rec.fields if k not in schema]
                if unknown:
                    problem(
                        n,
                        rec.doc_id,
                        f"doc {rec.doc_id!r}: fields not in {SCHEMA}: "
                        f"{', '.join(unknown)} (add them to the schema or drop them)",
                    )
                    kept = {k: v for k, v in rec.fields.items() if k in schema}
                    rec = LabelRecord(rec.doc_id, rec.file, kept, rec.meta)
                if check_files and not (path / rec.file).is_file():
                    problem(n, rec.doc_id, f"doc {rec.doc_id!r}: file {rec.file!r} not found")
                    continue
                first_line[rec.doc_id] = n
                records.append(rec)
        if problems:
            warnings.warn(
                f"{path}: {len(problems)} label problem(s) skipped; see Dataset.problems "
                f"(first: {problems[0]})",
                stacklevel=2,
            )
        return cls(path, schema, records, problems)

    def __iter__(self) -> Iterator[LabelRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._index

    def __getitem__(self, doc_id: str) -> LabelRecord:
        try:
            return self._index[doc_id]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in dataset {self.path}") from None

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r}, schema={self.schema.name!r}, n_docs={len(self)})"

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return tuple(r.doc_id for r in self.records)

    def _record(self, record_or_id: LabelRecord | str) -> LabelRecord:
        return self[record_or_id] if isinstance(record_or_id, str) else record_or_id

    def path_of(self, record_or_id: LabelRecord | str) -> Path:
        """Absolute path of a record's document file."""
        return (self.path / self._record(record_or_id).file).resolve()

    def subset(self, doc_ids: Iterable[str]) -> Dataset:
        """A dataset of the given documents, in this dataset's order."""
        keep = set(doc_ids)
        missing = keep - set(self._index)
        if missing:
            raise KeyError(f"not in dataset {self.path}: {', '.join(sorted(missing)[:5])}")
        return Dataset(self.path, self.schema, (r for r in self.records if r.doc_id in keep))

    def split(
        self, by: str = "doc", test_size: float = 0.2, seed: int = 0
    ) -> tuple[Dataset, Dataset]:
        """Deterministic train/test split.

        Parameters
        ----------
        by : str
            ``"doc"`` splits documents; ``"meta.KEY"`` (e.g. ``"meta.layout"``) keeps all
            documents sharing ``meta[KEY]`` on the same side, to test generalisation to unseen
            layouts or sources. Records without the key form one group.
        test_size : float
            Share of groups (documents for ``by="doc"``) in the test part, in (0, 1).
        seed : int
            The same seed gives the same split whatever the order of ``labels.jsonl``.

        Examples
        --------
        >>> from confidence.schema import Field, Schema
        >>> recs = [LabelRecord(f"d{i}", f"files/d{i}.pdf", {}) for i in range(10)]
        >>> train, test = Dataset(".", Schema("s", (Field("x"),)), recs).split(test_size=0.3)
        >>> len(train), len(test)
        (7, 3)
        """
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1), got {test_size!r}")
        if by == "doc":
            key = lambda r: r.doc_id  # noqa: E731
        elif by.startswith("meta.") and len(by) > 5:
            name = by[5:]
            key = lambda r: json.dumps(r.meta.get(name), sort_keys=True)  # noqa: E731
        else:
            raise ValueError(f"by must be 'doc' or 'meta.KEY' (e.g. 'meta.layout'), got {by!r}")
        groups = sorted({key(r) for r in self.records})
        if len(groups) < 2:
            raise DatasetError(f"cannot split {len(groups)} group(s) by {by!r}; need at least 2")
        order = np.random.default_rng(seed).permutation(len(groups))
        n_test = min(len(groups) - 1, max(1, round(test_size * len(groups))))
        test_groups = {groups[i] for i in order[:n_test]}
        test = [r.doc_id for r in self.records if key(r) in test_groups]
        train = [r.doc_id for r in self.records if key(r) not in test_groups]
        return self.subset(train), self.subset(test)

    def load_document(self, record_or_id: LabelRecord | str, **kwargs: Any) -> Document:
        """Ingest one record's file with :func:`confidence.documents.load_document`."""
        from confidence.documents import load_document

        rec = self._record(record_or_id)
        return load_document(self.path_of(rec), doc_id=rec.doc_id, **kwargs)

    def documents(
        self, n_jobs: int = 1, **kwargs: Any
    ) -> Iterator[tuple[LabelRecord, Document | DocumentError]]:
        """Stream ``(record, Document or DocumentError)`` in record order, ingesting in parallel.

        A file that cannot be read yields its :class:`DocumentError` instead of stopping the rest.
        """
        from confidence.documents import load_many

        paths = (self.path_of(r) for r in self.records)
        ids = (r.doc_id for r in self.records)
        results = load_many(paths, n_jobs=n_jobs, doc_ids=ids, **kwargs)
        yield from zip(self.records, results, strict=True)
