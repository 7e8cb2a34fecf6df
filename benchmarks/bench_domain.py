"""Out-of-domain check in domain: pooled vs per-schema (Mondrian) reference distances.

Usage::

    python benchmarks/bench_domain.py [--out benchmarks/results/domain.json]

Rows are built without pages from the committed training runs of the default model
(``scripts/default_runs.jsonl.xz``, invoices; ``scripts/default_receipt_runs.jsonl.xz``,
receipts): half of the documents (seed 7) make a :class:`~confidence.domain.DomainReference`
the way :meth:`~confidence.engine.ConfidenceEngine.fit` makes it, the other half are in domain
by construction. For each schema: the median novelty p-value of the held-out documents (about
0.5 when calibrated), their share below 0.1 (about 0.1), and the share of random batches of
``--batch-size`` documents that the batch verdict calls shifted (a false alarm), for a pooled
reference and a per-schema one, with and without the arithmetic consistency flags (``cons_*``)
among the compared columns. The power side: the same batches with each document's Mapper
reading swapped for another document's (the shift of ``tests/test_domain.py``), and the share of
them called shifted.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]


def _rows(swap: bool = False):
    """name -> (X, doc_ids, schema keys) of every committed run (``swap``: each document with
    the next document's Mapper reading)."""
    from dataclasses import replace

    from confidence.datasets.synthetic.fields import SCHEMA
    from confidence.datasets.synthetic.receipts import RECEIPT_SCHEMA
    from confidence.domain_schemas import row_schema_keys
    from confidence.features.build import record_rows
    from confidence.records import as_run_record

    out = {}
    for name, path, schema in (
        ("invoices", "default_runs.jsonl.xz", SCHEMA),
        ("receipts", "default_receipt_runs.jsonl.xz", RECEIPT_SCHEMA),
    ):
        with lzma.open(ROOT / "scripts" / path, "rt") as f:
            recs = [as_run_record(json.loads(x)) for x in f if x.strip()]
        if swap:
            recs = [replace(r, mapper=recs[(i + 1) % len(recs)].mapper) for i, r in enumerate(recs)]
        rr = record_rows(recs, schema)
        ok = np.array([s != "error" for s in rr.status], dtype=bool)
        keys = row_schema_keys(rr.doc_ids, rr.fields, rr.field_types)
        out[name] = (rr.X[ok], np.asarray(rr.doc_ids, dtype=object)[ok], keys[ok])
    return out


def run(batches: int, batch_size: int, seed: int = 7) -> dict:
    from confidence.domain import DomainReference, domain_columns
    from confidence.features.build import FEATURE_NAMES, document_mask

    sets = _rows()
    moved = _rows(swap=True)
    X = np.vstack([s[0] for s in sets.values()])
    ids = np.concatenate([s[1] for s in sets.values()])
    keys = np.concatenate([s[2] for s in sets.values()])
    which = np.concatenate([[n] * len(s[0]) for n, s in sets.items()])
    rng = np.random.default_rng(seed)
    docs = np.unique(ids)
    ref_m = np.isin(ids, rng.choice(docs, size=len(docs) // 2, replace=False))
    page = document_mask()
    out: dict = {"reference_documents": len(np.unique(ids[ref_m])), "variants": {}}
    for cons in (False, True):
        cols = [
            c for c in domain_columns(X[ref_m]) if cons or not FEATURE_NAMES[c].startswith("cons_")
        ]
        for per_schema in (False, True):
            ref = DomainReference(
                columns=cols, optional_columns=[c for c in cols if page[c]], random_state=seed
            ).fit(X[ref_m], groups=ids[ref_m], schemas=keys[ref_m] if per_schema else None)
            res = {}
            for name in sets:
                m = ~ref_m & (which == name)
                held = np.unique(ids[m])
                _, p = ref.novelty_p(X[m], ids[m], keys[m])
                Xs, ids_s, keys_s = moved[name]
                brng = np.random.default_rng(0)
                alarms = detected = 0
                for _ in range(batches):
                    chosen = brng.choice(held, size=batch_size, replace=False)
                    b = m & np.isin(ids, chosen)
                    alarms += ref.check(X[b], ids[b], keys[b]).shifted
                    b = np.isin(ids_s, chosen)
                    detected += ref.check(Xs[b], ids_s[b], keys_s[b]).shifted
                res[name] = {
                    "held_out_documents": len(held),
                    "median_novelty_p": round(float(np.median(p)), 3),
                    "share_p_below_0.1": round(float(np.mean(p < 0.1)), 3),
                    f"false_alarm_rate_batches_of_{batch_size}": alarms / batches,
                    "swapped_mapper_batches_flagged": detected / batches,
                }
            name = (
                f"{'per_schema' if per_schema else 'pooled'}_{'with' if cons else 'without'}_cons"
            )
            out["variants"][name] = res
            print(name, json.dumps(res), flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "domain.json")
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=40)
    a = ap.parse_args(argv)
    res = {"batches": a.batches, "batch_size": a.batch_size, **run(a.batches, a.batch_size)}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
