"""Writing scored rows (:class:`~confidence.scores.FieldScore` dicts) as JSONL, CSV or Parquet,
chosen by the file suffix."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from confidence.errors import ExtractConfError
from confidence.scores import SCORED_COLUMNS

_WRITERS = ("jsonl", "csv", "parquet")


def output_format(path: str | Path) -> str:
    """The format a path asks for, from its suffix.

    Examples
    --------
    >>> output_format("scored.csv")
    'csv'
    >>> output_format("out/scored.jsonl")
    'jsonl'
    """
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix == "json":
        suffix = "jsonl"
    if suffix not in _WRITERS:
        raise ExtractConfError(
            f"{path}: cannot tell the output format from the suffix {suffix!r}; "
            f"use one of: {', '.join('.' + w for w in _WRITERS)}"
        )
    return suffix


def write_rows(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write scored rows to ``path`` in the format its suffix names; returns the row count.

    ``reasons`` (a list of strings) is kept as a list in JSONL and Parquet and joined with ``"; "``
    in CSV.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> write_rows(os.path.join(d, "s.csv"), [{"doc_id": "a", "field": "total", "reasons": ["x"]}])
    1
    """
    fmt = output_format(path)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    elif fmt == "csv":
        cols = _columns(rows)
        with path.open("w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: "; ".join(v) if isinstance(v, list) else v for k, v in r.items()})
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "writing Parquet needs pyarrow: pip install 'extractconf[parquet]'"
            ) from None
        cols = _columns(rows)
        table = pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in rows])
        pq.write_table(table, path)
    return len(rows)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    cols = [c for c in SCORED_COLUMNS if any(c in r for r in rows)]
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    return cols
