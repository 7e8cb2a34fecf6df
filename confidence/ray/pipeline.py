"""Whole scoring jobs on Ray: documents or recorded runs in, a folder of Parquet rows out.

The output folder ``OUT`` holds the final rows (``*.parquet``, readable as one table by
pandas/pyarrow/Ray) and ``OUT/_parts/``, the rows of each scored batch written atomically under a
name that is a hash of its documents: a batch a dead worker retried rewrites the same file, so
no document is lost or duplicated. A job run again on the same ``OUT`` skips the documents
already scored ``ok`` (a killed job resumes; failed and partial documents are retried, their new
rows replacing the old) and then rewrites the final rows, whose batch columns
(``batch_shift_p``, ``on_shift="review"``) need every document's novelty p-value.
"""

from __future__ import annotations

import json
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confidence.ray._runtime import require_ray
from confidence.ray.stages import _finalize_batch, extract, ingest, scored_table
from confidence.ray.stages import score as score_stage

# documents per block and per model call when scoring recorded runs without OCR: big enough
# that the engine's per-call cost is small, small enough that both CPUs stay busy to the end
_RUNS_BLOCK = 512
_PART = re.compile(r"part-(\d{5})-[0-9a-f]{16}\.parquet$")
_DOC_ID = re.compile(rb'^\{\s*"doc_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass
class RayJob:
    """What a job wrote: per document ``(status, error)``; counts for the summary line."""

    out: Path
    status: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    n_fields: int = 0
    n_accepted: int = 0
    n_through: int = 0
    n_out_of_domain: int = 0
    n_audit: int = 0
    n_skipped: int = 0
    batch_shift_p: float | None = None
    shifted: bool = False

    def dataset(self):
        """The rows written, as a ``ray.data.Dataset`` (read from the Parquet files of ``out``)."""
        return require_ray().data.read_parquet(str(self.out), file_extensions=["parquet"])

    def summary(self) -> str:
        """The summary line of ``extractconf score``."""
        n_partial = sum(s == "partial" for s, _ in self.status.values())
        n_failed = sum(s == "error" for s, _ in self.status.values())
        return (
            f"scored {len(self.status)} documents, {self.n_fields} fields: {self.n_accepted} "
            f"accepted, {self.n_fields - self.n_accepted} to review; "
            f"{self.n_through}/{len(self.status)} documents straight through"
            + (f"; {n_partial} partial" if n_partial else "")
            + (f"; {n_failed} failed" if n_failed else "")
        )


# -------------------------------------------------------------------------------------- parts
def _scan(parts: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """Per document the summary of its latest run's rows in ``parts``, and the last run id."""
    import pyarrow.parquet as pq

    docs: dict[str, dict[str, Any]] = {}
    last = 0
    cols = ["doc_id", "status", "error", "decision", "novelty_p", "out_of_domain",
            "straight_through", "audit", "_run"]  # fmt: skip
    for f in sorted(parts.glob("part-*.parquet")):
        m = _PART.search(f.name)
        if m is None:
            continue
        last = max(last, int(m.group(1)))
        for b in pq.ParquetFile(f).iter_batches(columns=cols):
            for r in b.to_pylist():
                d = docs.get(r["doc_id"])
                if d is None or r["_run"] > d["run"]:  # a later run replaces the document
                    d = docs[r["doc_id"]] = {
                        "run": r["_run"], "status": r["status"], "error": r["error"],
                        "p": r["novelty_p"], "ood": bool(r["out_of_domain"]),
                        "through": bool(r["straight_through"]), "n": 0, "acc": 0, "audit": 0,
                        "runs": d["runs"] if d is not None else set(),
                    }  # fmt: skip
                elif r["_run"] < d["run"]:
                    d["runs"].add(r["_run"])
                    continue
                d["runs"].add(r["_run"])
                d["n"] += 1
                d["acc"] += r["decision"] == "accept"
                d["audit"] += bool(r["audit"])
    return docs, last


# ------------------------------------------------------------------------------------ the job
def _prepare(out) -> tuple[Path, Path, dict[str, dict[str, Any]], int]:
    out = Path(out)
    parts = out / "_parts"
    parts.mkdir(parents=True, exist_ok=True)
    docs, last = _scan(parts)
    return out, parts, docs, last + 1


def _cpus(ray) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _finish(ray, out: Path, parts: Path, engine_domain, on_shift: str, n_skipped: int) -> RayJob:
    docs, _ = _scan(parts)
    p = [d["p"] for d in docs.values() if d["status"] != "error" and d["p"] is not None]
    batch_p, shifted = None, False
    if engine_domain is not None and p:
        share, batch_p, shifted = engine_domain.batch_verdict(p)
        if shifted:
            from confidence.domain import shift_warning

            warnings.warn(shift_warning(share, len(p), batch_p), stacklevel=3)
    winners = {k: d["run"] for k, d in docs.items() if len(d["runs"]) > 1}
    for f in out.glob("*.parquet"):  # the previous final rows: rewritten whole below
        f.unlink()
    _write_final(out, parts, batch_p=batch_p, shifted=shifted, on_shift=on_shift, winners=winners)
    through_all = not (shifted and on_shift == "review")
    return RayJob(
        out=out,
        status={
            k: (d["status"], d["error"] if d["status"] != "ok" else None) for k, d in docs.items()
        },
        n_fields=sum(d["n"] for d in docs.values()),
        n_accepted=sum(d["acc"] for d in docs.values()) if through_all else 0,
        n_through=sum(d["through"] for d in docs.values()) if through_all else 0,
        n_out_of_domain=sum(d["ood"] for d in docs.values()),
        # a shifted batch under on_shift="review": every field reviewed, none as an audit
        n_audit=sum(d["audit"] for d in docs.values()) if through_all else 0,
        n_skipped=n_skipped,
        batch_shift_p=batch_p,
        shifted=shifted,
    )


def _write_final(out: Path, parts: Path, **verdict) -> None:
    """The final rows: each part with the batch columns filled (:func:`finalize`'s work),
    one part at a time into ``OUT/rows-NNNNN.parquet`` (written atomically).

    Done here rather than as a Ray Data job: the parts are already on storage the driver reads
    (it scanned them), the work is a column fill at disk speed, and a Ray Data read/map/write
    costs worker start-up and scheduling that measured several times the fill itself.
    """
    import pyarrow.parquet as pq

    k = 0
    for f in sorted(parts.glob("part-*.parquet")):
        if _PART.search(f.name) is None:
            continue
        table = _finalize_batch(pq.read_table(f), **verdict)
        if not table.num_rows:  # every document of the part scored again in a later run
            continue
        tmp = out / f".rows-{k:05d}.parquet.tmp"
        pq.write_table(table, tmp)
        tmp.replace(out / f"rows-{k:05d}.parquet")
        k += 1


def _score_and_write(ds, schema, parts: Path, run: int, **score_kw) -> None:
    # each score actor writes its batches into the parts itself: no writer tasks (on a small
    # machine Ray would start a fresh worker process for each) and no rows through the store
    ds = score_stage(ds, schema, parts=str(parts), run=run, **score_kw)
    for _ in ds.iter_batches(batch_size=None):  # run the job; the rows are in the parts
        pass


def _items_ds(ray, items: list[dict[str, Any]], per_block: int = 1, cpus: int = 1):
    """Items as a dataset of blocks of about ``per_block`` rows, never fewer blocks than the
    ``2 * cpus`` that keep every worker busy (nor more than rows)."""
    cols = ("doc_id", "path", "problem", "meta", "run", "run_file", "run_offset")
    rows = [{c: it.get(c) for c in cols} for it in items]
    n = max(-(-len(rows) // per_block), 2 * cpus)
    return ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows), n)))


def ingest_block(n_docs: int, cpus: int) -> int:
    """Documents per block (one ingestion task) for ``n_docs`` documents on ``cpus`` CPUs.

    Two to four documents per task halve the per-task cost of Ray's scheduling (measured on 40
    scans, 2 CPUs: 46.8 s with one per task, 40.4 s with two; benchmarks/bench_ray.py) while
    about eight blocks per CPU keep the last tasks short; past 200 blocks, bigger blocks keep
    the driver's bookkeeping flat.

    Examples
    --------
    >>> [ingest_block(n, 2) for n in (1, 10, 40, 200, 10_000)]
    [1, 1, 2, 4, 50]
    """
    return max(1, min(4, n_docs // (8 * cpus)), -(-n_docs // 200))


def _engine_domain(model):
    from confidence.engine import ConfidenceEngine

    return getattr(ConfidenceEngine.load(model), "domain_", None)


def _options(kw: dict[str, Any]) -> dict[str, Any]:
    keys = ("model", "thresholds", "explain", "on_shift", "features", "audit_rate", "audit_seed")
    return {k: kw[k] for k in keys if k in kw}


def score_documents(
    items,
    schema,
    out,
    *,
    llm="local",
    llm_options: dict | None = None,
    doc_timeout: float | None = None,
    llm_concurrency: int = 1,
    documents: bool = True,
    cache_dir: str | None = None,
    use_cache: bool = True,
    load_options: dict | None = None,
    **score_kw,
) -> RayJob:
    """Ingest, extract and score documents on Ray into the folder ``out`` (resumable).

    ``items`` are paths, dicts ``{"doc_id", "path", "problem", "meta"}``, or a
    ``ray.data.Dataset`` of such rows (``bytes`` instead of a readable ``path`` too; see
    :mod:`confidence.ray.stages`); ``llm`` as for :func:`~confidence.ray.stages.extract`;
    ``score_kw`` (``model``, ``thresholds``, ``explain``, ``on_shift``, ``features``) as for
    :func:`~confidence.ray.stages.score`. Ray must be running (:func:`~confidence.ray.init_ray`).
    :meth:`RayJob.dataset` gives the rows written as a ``ray.data.Dataset``.
    """
    ray = require_ray()
    out, parts, done, run = _prepare(out)
    ok = {d for d, v in done.items() if v["status"] == "ok"}
    if isinstance(items, ray.data.Dataset):
        src, n_skipped = items.filter(lambda r: r["doc_id"] not in ok), len(ok)
    else:
        items = [
            it if isinstance(it, dict) else {"doc_id": Path(it).stem, "path": str(it)}
            for it in items
        ]
        todo = [it for it in items if it["doc_id"] not in ok]
        n_skipped = len(items) - len(todo)
    cpus = _cpus(ray)
    if not isinstance(items, ray.data.Dataset):
        src = _items_ds(ray, todo, ingest_block(len(todo), cpus), cpus) if todo else None
    if src is not None:
        ds = ingest(src, cache_dir=cache_dir, use_cache=use_cache, load_options=load_options)
        remote = isinstance(llm, str) and llm.startswith(("http://", "https://", "openai:"))
        ds = extract(
            ds, schema, llm=llm, llm_options=llm_options, doc_timeout=doc_timeout,
            actors=(1, cpus), concurrency=llm_concurrency, num_cpus=0.1 if remote else 0.5,
        )  # fmt: skip
        # fractional CPUs: the two actor pools at their minimum leave a whole core to ingestion
        _score_and_write(ds, schema, parts, run, documents=documents, actors=(1, cpus),
                         num_cpus=0.25, batch_size=16, **_options(score_kw))  # fmt: skip
    return _finish(ray, out, parts, _engine_domain(score_kw.get("model")),
                   score_kw.get("on_shift", "warn"), n_skipped)  # fmt: skip


def _index_runs(
    files: list[str], items: dict[str, Any], skip: set[str], spool: Path
) -> dict[str, tuple[str, int]]:
    """doc_id -> (plain file, byte offset) of its runs line: a later line wins, a later file too.

    One streamed pass over each file; only offsets are kept (the scorers read the lines
    themselves, so the runs never travel through the driver or Ray's object store). A
    compressed file is spooled once, decompressed, into ``spool``. The last line cut short (a
    writer killed mid-line) is skipped with a warning, as :func:`~confidence.records.read_runs`
    does.
    """
    from confidence.records import _OPENERS

    out: dict[str, tuple[str, int]] = {}
    for k, f in enumerate(files):
        opener = _OPENERS.get(Path(f).suffix)
        plain = f
        if opener is not None:
            plain = str(spool / f"runs-{k}.jsonl")
            with opener(f, "rb") as src, open(plain, "wb") as dst:
                while chunk := src.read(1 << 22):
                    dst.write(chunk)
        with open(plain, "rb") as fh:
            offset, i = 0, 0
            for raw in fh:
                i += 1
                at, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                if not raw.endswith(b"\n") and not _is_json(raw):
                    # the last line cut short by a writer killed mid-line: skipped, as read_runs
                    warnings.warn(f"{f}: line {i} is cut short; skipped", stacklevel=2)
                    continue
                doc_id = _line_id(raw)
                if doc_id is not None and doc_id in items and doc_id not in skip:
                    out[doc_id] = (plain, at)
    return out


def _is_json(line: bytes | str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _line_id(line: bytes) -> str | None:
    m = _DOC_ID.match(line)  # the usual layout, without parsing the whole line
    if m is not None:
        return json.loads(b'"' + m.group(1) + b'"')
    try:
        return str(json.loads(line)["doc_id"])
    except (ValueError, KeyError, TypeError):
        return None


def score_runs(
    items,
    runs,
    schema,
    out,
    *,
    documents: bool = False,
    cache_dir: str | None = None,
    use_cache: bool = True,
    load_options: dict | None = None,
    **score_kw,
) -> RayJob:
    """Score recorded runs (``runs.jsonl`` files) on Ray into the folder ``out`` (resumable).

    ``items`` as for :func:`score_documents`: the documents to score (a dataset's records);
    the driver finds each one's line in ``runs`` (one streamed pass; a compressed file is
    spooled decompressed into ``out``) and the scorers of an actor pool read the lines
    themselves. A document without a line is an error row ("not in --runs").
    ``documents=True`` also ingests each file for the page features. On a cluster, ``runs`` and
    ``out`` must be on storage every node sees.
    """
    ray = require_ray()
    out, parts, done, run = _prepare(out)
    items = [
        it if isinstance(it, dict) else {"doc_id": Path(it).stem, "path": str(it)} for it in items
    ]
    skip = {d for d, v in done.items() if v["status"] == "ok"}
    todo = [it for it in items if it["doc_id"] not in skip]
    if todo:
        cpus = _cpus(ray)
        # without ingestion the scorers get every CPU; with it, half a CPU each beside the OCR
        actors, num_cpus = ((1, cpus), 0.5) if documents else ((cpus, cpus), 1)
        kw = dict(runs=True, documents=documents, actors=actors, **_options(score_kw))
        with tempfile.TemporaryDirectory(prefix="_spool-", dir=out) as spool:
            # only (file, offset) per document travels: the scorers read their own lines
            where = _index_runs([str(r) for r in runs], {it["doc_id"] for it in todo}, skip,
                                Path(spool))  # fmt: skip
            rows = [
                {**it, "run_file": where.get(it["doc_id"], (None, None))[0],
                 "run_offset": where.get(it["doc_id"], (None, None))[1]}
                for it in todo
            ]  # fmt: skip
            # big blocks for the scorers (one model call each); small ones when OCR runs first
            per_block = ingest_block(len(rows), cpus) if documents else _RUNS_BLOCK
            ds = _items_ds(ray, rows, per_block=per_block, cpus=cpus)
            if documents:
                ds = ingest(ds, cache_dir=cache_dir, use_cache=use_cache, load_options=load_options)
            batch = 16 if documents else _RUNS_BLOCK
            _score_and_write(ds, schema, parts, run, num_cpus=num_cpus, batch_size=batch, **kw)
    return _finish(ray, out, parts, _engine_domain(score_kw.get("model")),
                   score_kw.get("on_shift", "warn"), len(items) - len(todo))  # fmt: skip


__all__ = ["RayJob", "score_documents", "score_runs", "scored_table"]
