"""The extractconf stages as Ray Data operators over a ``ray.data.Dataset``.

A dataset row is one document. Input rows carry ``doc_id`` and ``path`` (or ``bytes`` with the
file's name in ``path``), and optionally ``problem`` (why the file cannot be read: it becomes an
error row), ``meta`` (the ``labels.jsonl`` metadata as JSON, for threshold groups) and ``run``
(a recorded ``runs.jsonl`` line). Each stage adds columns:

* :func:`ingest` -> ``document`` (:meth:`Document.to_dict` as JSON) or ``error``; CPU tasks,
  one core each, tesseract limited to one thread;
* :func:`extract` -> ``run`` (the Hunter + Mapper :class:`~confidence.readings.RunRecord` as
  JSON); an actor pool, one LLM client per actor, at most ``concurrency`` documents in flight per
  actor (a remote endpoint) or one (the embedded model);
* :func:`score` (rows with ``run``, or ``run_file`` + ``run_offset``: where to read the
  ``runs.jsonl`` line) -> one row per (document, field): the columns of the single-process
  ``extractconf score`` (:data:`~confidence.scores.SCORED_COLUMNS` + ``straight_through``) and
  a private ``_shift`` column; an actor pool holding the engine loaded once;
* :func:`finalize` -> the batch columns (``batch_shift_p``; with ``on_shift="review"`` a shifted
  batch's fields sent to review), once the per-document novelty p-values of the whole batch are
  combined (:meth:`~confidence.domain.DomainReference.batch_verdict`).

A bad document never fails the job: it becomes rows with ``status="error"`` naming the file and
the reason, as in the single-process path.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from confidence.readings import RunRecord
from confidence.routing import SHIFTED_BATCH
from confidence.scores import FEATURE_PREFIX, SCORED_COLUMNS

# Fault tolerance is Ray Data's default, relied on here: an actor that dies is restarted and its
# batch retried (max_restarts=-1, max_task_retries=-1), a task that dies is retried
# (max_retries=-1); the parts writer makes the retried writes idempotent (pipeline.py).


def _pool(actors: int | tuple[int, int]):
    from ray.data import ActorPoolStrategy

    lo, hi = actors if isinstance(actors, tuple) else (actors, actors)
    return ActorPoolStrategy(min_size=lo, max_size=hi)


_PLACEHOLDER = SHIFTED_BATCH.format(p=float("nan"))
_TEXT = {"doc_id", "path", "problem", "meta", "run", "document", "error", "run_file"}


def _rows(batch) -> list[dict[str, Any]]:
    return batch.to_pylist()


def _table(rows: list[dict[str, Any]], columns: list[str]):
    import pyarrow as pa

    fields = [
        pa.field(c, pa.string()) if c in _TEXT else pa.field(c, pa.int64()) if c == "run_offset"
        else None
        for c in columns
    ]  # fmt: skip
    if all(f is not None for f in fields):
        return pa.Table.from_pylist(rows, schema=pa.schema(fields))
    return pa.Table.from_pylist(rows)


# ------------------------------------------------------------------------------------- ingest
def _ingest_batch(
    batch, *, cache_dir: str | None, use_cache: bool, load_options: dict | None = None
):
    from confidence.documents.cache import DocumentCache
    from confidence.errors import DocumentError

    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one core per task: no tesseract threads
    cache = DocumentCache(cache_dir, enabled=use_cache, **(load_options or {}))
    rows = _rows(batch)
    for r in rows:
        r.setdefault("error", None)
        r["document"] = None
        if r.get("problem"):
            r["error"] = str(DocumentError(r["path"], r["problem"]))
            continue
        try:
            if r.get("bytes") is not None:
                r["document"] = _from_bytes(r, cache)
            else:
                doc = cache.load(r["path"], doc_id=r["doc_id"])
                r["document"] = json.dumps(doc.to_dict(), separators=(",", ":"))
        except DocumentError as e:
            r["error"] = str(e)
        r.pop("bytes", None)
    return _table(rows, [c for c in rows[0]] if rows else ["doc_id"])


def _from_bytes(row: dict[str, Any], cache) -> str:
    from dataclasses import replace

    suffix = Path(row["path"]).suffix
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / f"document{suffix}"
        f.write_bytes(row["bytes"])
        doc = replace(cache.load(f, doc_id=row["doc_id"]), path=row["path"])
    return json.dumps(doc.to_dict(), separators=(",", ":"))


def ingest(
    ds, *, cache_dir: str | None = None, use_cache: bool = True, load_options: dict | None = None
):
    """Read every document (PDF text layer or OCR) in CPU tasks of one core each.

    Adds ``document`` (JSON) and ``error`` (a :class:`~confidence.errors.DocumentError` message,
    None when read); ``cache_dir`` as for :class:`~confidence.documents.cache.DocumentCache`,
    ``load_options`` as for :func:`~confidence.documents.load_document` (e.g.
    ``{"enlarge_small_text": False}``).
    """
    return ds.map_batches(
        _ingest_batch,
        batch_size=1,
        batch_format="pyarrow",
        fn_kwargs={
            "cache_dir": cache_dir,
            "use_cache": use_cache,
            "load_options": dict(load_options or {}),
        },
        num_cpus=1,
    )


# ------------------------------------------------------------------------------------ extract
class _Extractor:
    """One LLM client per actor; ``llm`` is a ``make_client`` spec or a zero-argument factory."""

    def __init__(self, llm, llm_options, schema, doc_timeout, concurrency):
        from confidence.llm import make_client
        from confidence.schema import Schema

        self.client = llm() if callable(llm) else make_client(llm, **(llm_options or {}))
        self.schema = Schema.from_dict(schema)
        self.doc_timeout = doc_timeout
        self.pool = ThreadPoolExecutor(concurrency) if concurrency > 1 else None

    def _one(self, r: dict[str, Any]) -> str | None:
        from confidence.calls.extract import extract_document
        from confidence.errors import ExtractConfError
        from confidence.types import Document

        if r.get("error") or r.get("document") is None:
            return None
        doc = Document.from_dict(json.loads(r["document"]))
        try:
            rec = extract_document(doc, self.schema, self.client, deadline=self.doc_timeout)
        except ExtractConfError as e:
            rec = RunRecord(r["doc_id"], None, None, status="error", error=f"{r['path']}: {e}")
        return json.dumps(rec.to_dict(), separators=(",", ":"))

    def __call__(self, batch):
        rows = _rows(batch)
        runs = list(self.pool.map(self._one, rows) if self.pool else map(self._one, rows))
        for r, run in zip(rows, runs, strict=True):
            r["run"] = run
        return _table(rows, list(rows[0]) if rows else ["doc_id"])


def extract(
    ds,
    schema,
    *,
    llm="local",
    llm_options: dict | None = None,
    doc_timeout: float | None = None,
    actors: int = 1,
    concurrency: int = 1,
    num_cpus: float = 1.0,
):
    """Run the Hunter and the Mapper over ingested documents in an actor pool.

    ``llm`` is a :func:`~confidence.llm.make_client` spec (``"local"``, an ``http(s)://`` URL of
    a vLLM or llama.cpp server, ``"replay:PATH"``) or a zero-argument function returning a
    client; each of the ``actors`` actors holds one and keeps ``concurrency`` documents in
    flight (keep 1 for the embedded model). Documents that failed to ingest pass through.
    """
    return ds.map_batches(
        _Extractor,
        batch_size=max(1, concurrency),
        batch_format="pyarrow",
        fn_constructor_args=(llm, llm_options, schema.to_dict(), doc_timeout, concurrency),
        compute=_pool(actors),
        num_cpus=num_cpus,
    )


# -------------------------------------------------------------------------------------- score
def _write_part(batch, *, parts: str, run: int):
    """Write one scored batch to ``parts`` atomically, named by its rows (idempotent): a batch
    retried after a worker died rewrites the same file. Returns its row count as a table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if batch.num_rows == 0:
        return pa.table({"rows": pa.array([], pa.int64())})
    t = batch.append_column("_run", pa.array([run] * batch.num_rows, pa.int64()))
    keys = "\n".join(
        f"{d}\t{f}" for d, f in zip(t["doc_id"].to_pylist(), t["field"].to_pylist(), strict=True)
    )
    name = f"part-{run:05d}-{hashlib.sha256(keys.encode()).hexdigest()[:16]}.parquet"
    fd, tmp = tempfile.mkstemp(dir=parts, suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(t, tmp)
        os.replace(tmp, Path(parts) / name)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return pa.table({"rows": pa.array([t.num_rows], pa.int64())})


class _Scorer:
    """The engine loaded once per actor; one batch of documents scored in one model call."""

    def __init__(self, model, thresholds, schema, options):
        from confidence.engine import ConfidenceEngine
        from confidence.schema import Schema

        eng = ConfidenceEngine.load(model)
        if thresholds is not None:
            from confidence.calibration import ThresholdSelector

            eng = eng.with_thresholds(ThresholdSelector.load(thresholds))
        self.engine, self.schema, self.options = eng, Schema.from_dict(schema), options
        self._files: dict[str, Any] = {}

    def _line(self, path: str, offset: int) -> bytes:
        """The runs line at ``offset`` of the plain file ``path`` (kept open by the actor)."""
        fh = self._files.get(path)
        if fh is None:
            fh = self._files[path] = open(path, "rb")
        fh.seek(offset)
        return fh.readline()

    def _record(self, r: dict[str, Any]) -> RunRecord:
        from confidence.errors import DatasetError
        from confidence.records import as_run_record

        if r.get("problem") and not r.get("error"):  # not ingested (--no-documents)
            from confidence.errors import DocumentError

            r["error"] = str(DocumentError(r["path"], r["problem"]))
        if r.get("error"):
            return RunRecord(r["doc_id"], None, None, status="error", error=r["error"])
        if r.get("run") is None and r.get("run_file") is not None:
            r["run"] = self._line(r["run_file"], r["run_offset"])
        if r.get("run") is None:
            why = "not in --runs" if self.options["runs"] else "no LLM reading"
            return RunRecord(r["doc_id"], None, None, status="error", error=f"{r['path']}: {why}")
        try:
            return as_run_record(json.loads(r["run"]))
        except (ValueError, DatasetError) as e:
            return RunRecord(r["doc_id"], None, None, status="error", error=f"runs line: {e}")

    def __call__(self, batch):
        from confidence.gcpause import paused_gc
        from confidence.routing import straight_through
        from confidence.types import Document

        rows = _rows(batch)
        opts = self.options
        with paused_gc():  # the parsed runs lines: see confidence.gcpause
            records = [self._record(r) for r in rows]
        docs = {
            r["doc_id"]: Document.from_dict(json.loads(r["document"]))
            for r in rows
            if opts["documents"] and r.get("document") and not r.get("error")
        }
        meta = {r["doc_id"]: json.loads(r["meta"]) for r in rows if r.get("meta")}
        kw = {
            "meta": meta,
            "on_shift": opts["on_shift"],
            "features": opts["features"],
            "audit_rate": opts["audit_rate"],
            "audit_seed": opts["audit_seed"],
        }
        scores = self.engine.score(
            records, self.schema, docs, explain=opts["explain"], batch=(None, False), **kw
        )
        shift = [None] * len(scores)
        if opts["on_shift"] == "review":  # what a shifted batch would do to each row
            alt = self.engine.score(
                records, self.schema, docs, explain=False, batch=(float("nan"), True), **kw
            )
            shift = [list(a.reasons) if _PLACEHOLDER in a.reasons else None for a in alt]
        through = straight_through(
            [s.doc_id for s in scores],
            [s.decision if s.status == "ok" else "review" for s in scores],
        )
        top = self.engine.top_features(opts["features"]) if opts["features"] else []
        table = _columns_table(scores, top, through, shift)
        if opts.get("parts") is not None:
            return _write_part(table, parts=opts["parts"], run=opts["run"])
        return table


def _arrow_types() -> dict:
    """Arrow types of the scored columns that are not text (pyarrow is imported lazily)."""
    import pyarrow as pa

    return {
        "confidence": pa.float64(),
        "threshold": pa.float64(),
        "novelty_p": pa.float64(),
        "batch_shift_p": pa.float64(),
        "out_of_domain": pa.bool_(),
        "audit": pa.bool_(),
        "p_sample": pa.float64(),
        "audit_rate": pa.float64(),
        "straight_through": pa.bool_(),
        "reasons": pa.list_(pa.string()),
        "_shift": pa.list_(pa.string()),
        "_run": pa.int64(),
    }


def _columns_table(scores, top: list[str], through: dict[str, bool], shift: list):
    """:func:`scored_table` of :class:`~confidence.scores.FieldScore` rows, built column by
    column (no dict per row): the same table as ``scored_table([s.to_dict() ...])``."""
    import pyarrow as pa

    cols: dict[str, list] = {c: [getattr(s, c) for s in scores] for c in SCORED_COLUMNS}
    cols["reasons"] = [list(s.reasons) for s in scores]
    for n in top:
        cols[FEATURE_PREFIX + n] = [(s.features or {}).get(n) for s in scores]
    cols["straight_through"] = [through[s.doc_id] for s in scores]
    cols["_shift"] = shift
    schema = _schema(list(cols))
    return pa.Table.from_arrays([pa.array(cols[f.name], f.type) for f in schema], schema=schema)


def _schema(cols: list[str]):
    import pyarrow as pa

    types = _arrow_types()
    return pa.schema(
        [
            pa.field(c, types.get(c, pa.float64() if c.startswith("feature.") else pa.string()))
            for c in cols
        ]
    )


def scored_table(rows: list[dict[str, Any]], features: list[str] = ()):
    """Scored rows as an Arrow table with fixed columns and types, the same in every batch:
    :data:`~confidence.scores.SCORED_COLUMNS`, one ``feature.<name>`` per name of ``features``
    (the engine's top features), ``straight_through`` (the single-process order), then the
    private columns the rows carry."""
    import pyarrow as pa

    cols = [*SCORED_COLUMNS, *(FEATURE_PREFIX + n for n in features), "straight_through"]
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    schema = _schema(cols)
    return pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in rows], schema=schema)


def score(
    ds,
    schema,
    *,
    model=None,
    thresholds=None,
    documents: bool = True,
    runs: bool = False,
    explain: bool = True,
    on_shift: str = "warn",
    features: int = 0,
    audit_rate: float = 0.0,
    audit_seed: int = 0,
    actors: int | tuple[int, int] = 1,
    num_cpus: float = 1.0,
    batch_size: int = 64,
    parts: str | None = None,
    run: int = 0,
):
    """Score every document's reading in an actor pool holding the engine (loaded once each).

    Rows need ``doc_id`` and ``run`` (None for a document without a reading: an error row, "not
    in --runs" when ``runs``), and ``document``/``error`` from :func:`ingest` (page features
    only when ``documents``). ``batch_shift_p`` is left empty and ``on_shift`` applies only to
    out-of-domain documents until :func:`finalize` has the whole batch. ``audit_rate`` and
    ``audit_seed`` sample accepted fields into review as in one process (the draw is a hash of
    doc_id and field, so it does not depend on how documents are batched). With ``parts`` (a
    folder) each actor writes every scored batch there itself, atomically, as
    ``part-RUN-HASH.parquet`` (a retried batch rewrites the same file), and the dataset holds
    one row count per batch instead of the rows.
    """
    from confidence.audit import check_audit_rate

    if on_shift not in ("warn", "review"):
        raise ValueError(f"on_shift={on_shift!r}; valid: 'warn', 'review'")
    options = {
        "documents": documents,
        "runs": runs,
        "explain": explain,
        "on_shift": on_shift,
        "features": features,
        "audit_rate": check_audit_rate(audit_rate),
        "audit_seed": int(audit_seed),
        "parts": parts,
        "run": int(run),
    }
    return ds.map_batches(
        _Scorer,
        batch_size=batch_size,
        batch_format="pyarrow",
        fn_constructor_args=(
            None if model is None else str(model),
            None if thresholds is None else str(thresholds),
            schema.to_dict(),
            options,
        ),
        compute=_pool(actors),
        num_cpus=num_cpus,
    )


# ----------------------------------------------------------------------------------- finalize
def _finalize_batch(batch, *, batch_p, shifted, on_shift, winners):
    import pyarrow as pa

    t = batch
    if winners and "_run" in t.column_names:  # a document scored again: keep its latest run
        keep = [
            winners.get(d, r) == r
            for d, r in zip(t["doc_id"].to_pylist(), t["_run"].to_pylist(), strict=True)
        ]
        t = t.filter(pa.array(keep, pa.bool_()))
    n = t.num_rows
    t = t.set_column(
        t.schema.get_field_index("batch_shift_p"),
        "batch_shift_p",
        pa.array([batch_p] * n, pa.float64()),
    )
    if on_shift == "review" and shifted:
        real = SHIFTED_BATCH.format(p=batch_p)
        shift = t["_shift"].to_pylist()
        dec = t["decision"].to_pylist()
        why = t["reasons"].to_pylist()
        moved = [sh is not None for sh in shift]
        for i, sh in enumerate(shift):
            if sh is not None:
                dec[i] = "review"
                why[i] = [real if w == _PLACEHOLDER else w for w in sh]
        t = t.set_column(
            t.schema.get_field_index("decision"), "decision", pa.array(dec, pa.string())
        )
        # as in one process: reviewed by the shift verdict, so sampled into review for sure
        if "p_sample" in t.column_names:
            ps = [1.0 if m else p for m, p in zip(moved, t["p_sample"].to_pylist(), strict=True)]
            t = t.set_column(
                t.schema.get_field_index("p_sample"), "p_sample", pa.array(ps, pa.float64())
            )
        if "audit" in t.column_names:
            au = [False if m else a for m, a in zip(moved, t["audit"].to_pylist(), strict=True)]
            t = t.set_column(t.schema.get_field_index("audit"), "audit", pa.array(au, pa.bool_()))
        t = t.set_column(
            t.schema.get_field_index("reasons"), "reasons", pa.array(why, pa.list_(pa.string()))
        )
        i = t.schema.get_field_index("straight_through")
        t = t.set_column(i, "straight_through", pa.array([False] * n, pa.bool_()))
    return t.drop_columns([c for c in ("_shift", "_run") if c in t.column_names])


def finalize(ds, *, batch_p: float | None, shifted: bool, on_shift: str = "warn", winners=None):
    """Fill the batch columns of scored rows from the batch verdict of all their documents.

    ``batch_p``/``shifted`` come from
    :meth:`~confidence.domain.DomainReference.batch_verdict` over every scored document's
    ``novelty_p`` (None/False when the model keeps no reference); ``winners`` maps a doc_id
    scored in several runs of a resumed job to the run whose rows are kept.
    """
    return ds.map_batches(
        _finalize_batch,
        batch_size=None,
        batch_format="pyarrow",
        fn_kwargs={
            "batch_p": batch_p,
            "shifted": shifted,
            "on_shift": on_shift,
            "winners": winners or {},
        },
    )
