"""Add the out-of-domain reference (``domain.json``) to the default model, without retraining.

``scripts/train_default.py train`` makes it already (``ConfidenceEngine.fit``: every training
document, per schema); this script rebuilds it alone, e.g. from other documents, and measures
its false alarms. Distances are kept per schema as in ``fit``.

Feature rows are rebuilt from the committed runs (``scripts/default_runs.jsonl.xz``,
``scripts/default_receipt_runs.jsonl.xz``), which hold the readings of every training document:

* ``--pages FOLDER ...`` (dataset folders made as in ``train_default.py synth``: same seed, so
  the same documents) gives the rows of those documents **with** their pages (OCR, quality,
  layout); ``--held-out FOLDER ...`` other such folders to measure the false-alarm rate on;
* without ``--pages`` the rows are built **without pages** (agreement, logprobs, value length):
  half of the documents (seed 7) make the reference, the other half measure false alarms.

Prints the measurement as JSON; ``--write`` also stores ``domain.json`` in the default model::

    python scripts/domain_reference.py --pages work/inv-pages work/rec-pages \\
        --held-out work/inv-held work/rec-held --cache-dir work/cache \\
        --held-out-cache-dir work/cache --write
"""

from __future__ import annotations

import argparse
import json
import lzma
from pathlib import Path

import numpy as np

from confidence import persistence
from confidence.datasets.folder import Dataset
from confidence.datasets.synthetic.fields import SCHEMA
from confidence.datasets.synthetic.receipts import RECEIPT_SCHEMA
from confidence.documents.cache import DocumentCache
from confidence.domain import DomainReference, domain_columns
from confidence.domain_schemas import row_schema_keys
from confidence.engine import ConfidenceEngine, default_model_dir
from confidence.features.build import FEATURE_NAMES, document_mask, record_rows
from confidence.records import as_run_record

HERE = Path(__file__).resolve().parent
RUNS = (
    (HERE / "default_runs.jsonl.xz", SCHEMA),
    (HERE / "default_receipt_runs.jsonl.xz", RECEIPT_SCHEMA),
)
SEED = 7


def _records():
    for path, schema in RUNS:
        with lzma.open(path, "rt") as f:
            yield schema, {r.doc_id: r for r in (as_run_record(json.loads(x)) for x in f if x)}


def rows(folders=None, cache_dir=None):
    """(X, doc_ids, schema keys) of the scorable rows: every run without pages, or the
    documents of ``folders`` with their pages."""
    wanted, cache = {}, DocumentCache(cache_dir) if cache_dir else None
    for folder in folders or ():
        ds = Dataset.open(folder, check_files=False)
        wanted.update({r.doc_id: ds.path_of(r) for r in ds.records})
    Xs, ids, keys = [], [], []
    for schema, recs in _records():
        keep = [r for d, r in recs.items() if folders is None or d in wanted]
        docs = None
        if folders is not None:
            loaded = cache.load_many([wanted[r.doc_id] for r in keep], [r.doc_id for r in keep])
            docs = {
                r.doc_id: d
                for r, d in zip(keep, loaded, strict=True)
                if not isinstance(d, Exception)
            }
        rr = record_rows(keep, schema, docs)
        ok = np.array([s != "error" for s in rr.status], dtype=bool)
        Xs.append(rr.X[ok])
        ids += [d for d, k in zip(rr.doc_ids, ok, strict=True) if k]
        keys += list(row_schema_keys(rr.doc_ids, rr.fields, rr.field_types)[ok])
    return np.vstack(Xs), np.asarray(ids, dtype=object), np.asarray(keys, dtype=object)


def false_alarms(ref, X, ids, keys, rng, batches, size) -> dict:
    docs = np.unique(ids)
    size = min(size, len(docs) // 2)
    alarms, shares = 0, []
    for _ in range(batches):
        m = np.isin(ids, rng.choice(docs, size=size, replace=False))
        chk = ref.check(X[m], ids[m], keys[m])
        alarms += chk.shifted
        shares.append(chk.share_novel)
    return {
        "documents": len(docs),
        "batches": batches,
        "batch_size": size,
        "batch_false_alarm_rate": alarms / batches,
        "mean_share_of_documents_flagged": round(float(np.mean(shares)), 4),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="+", default=None, help="dataset folders: reference docs")
    ap.add_argument("--held-out", nargs="+", default=None, help="dataset folders: measure on")
    ap.add_argument("--cache-dir", default=None, help="document cache of --pages")
    ap.add_argument("--held-out-cache-dir", default=None, help="document cache of --held-out")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=50)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(SEED)
    X, ids, keys = rows()  # every run, without pages
    if args.pages:
        Xr, idr, kr = rows(args.pages, args.cache_dir)
        held = ~np.isin(ids, idr)
    else:
        ref_docs = rng.choice(np.unique(ids), size=len(np.unique(ids)) // 2, replace=False)
        held = ~np.isin(ids, ref_docs)
        Xr, idr, kr = X[~held], ids[~held], keys[~held]
    cols = domain_columns(Xr)
    page = document_mask()
    ref = DomainReference(
        columns=cols, optional_columns=[c for c in cols if page[c]], random_state=SEED
    ).fit(Xr, groups=idr, schemas=kr)
    ref = persistence.from_dict(persistence.to_dict(ref))  # measure what is stored
    report = {
        "columns": [FEATURE_NAMES[c] for c in cols],
        "reference_documents": len(np.unique(idr)),
        "held_out_without_pages": false_alarms(
            ref, X[held], ids[held], keys[held], rng, args.batches, args.batch_size
        ),
    }
    if args.held_out:
        Xh, idh, kh = rows(args.held_out, args.held_out_cache_dir)
        report["held_out_with_pages"] = false_alarms(
            ref, Xh, idh, kh, rng, args.batches, args.batch_size
        )
    print(json.dumps(report, indent=1))
    if args.write:
        d = default_model_dir()
        man = json.loads((d / persistence.MANIFEST).read_text())
        attached = [n for n, e in man["files"].items() if e["kind"] == persistence.ATTACHMENT]
        eng = ConfidenceEngine.load(d)
        eng.domain_ = ref
        eng.save(d)
        persistence.attach(d, *attached)
        print(f"wrote {d / 'domain.json'}")


if __name__ == "__main__":
    main()
