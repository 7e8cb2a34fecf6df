"""Add the out-of-domain reference (``domain.json``) to the default model, without retraining.

The default model's feature rows are rebuilt from the committed runs
(``scripts/default_runs.jsonl.xz``, ``scripts/default_receipt_runs.jsonl.xz``) **without pages**
(re-reading 1800 pages with OCR takes hours on the build machine), so the reference compares the
columns a reading alone gives: agreement, logprobs and value length (``docs/monitoring.md``).
Half of the documents (seed 7) make the reference; the other half measure the false-alarm rate
of in-domain batches, printed as JSON::

    python scripts/domain_reference.py            # measure only
    python scripts/domain_reference.py --write    # also write domain.json into the model
"""

from __future__ import annotations

import argparse
import json
import lzma
from pathlib import Path

import numpy as np

from confidence import persistence
from confidence.datasets.synthetic.fields import SCHEMA
from confidence.datasets.synthetic.receipts import RECEIPT_SCHEMA
from confidence.domain import DomainReference, domain_columns
from confidence.engine import ConfidenceEngine, default_model_dir
from confidence.features.build import FEATURE_NAMES, record_rows
from confidence.records import as_run_record

HERE = Path(__file__).resolve().parent
RUNS = (
    (HERE / "default_runs.jsonl.xz", SCHEMA),
    (HERE / "default_receipt_runs.jsonl.xz", RECEIPT_SCHEMA),
)
SEED = 7


def rows():
    """(X, doc_ids) of every scorable row of the committed runs, without pages."""
    Xs, ids = [], []
    for path, schema in RUNS:
        with lzma.open(path, "rt") as f:
            recs = [as_run_record(json.loads(x)) for x in f if x.strip()]
        rr = record_rows(recs, schema, None)
        ok = np.array([s != "error" for s in rr.status])
        Xs.append(rr.X[ok])
        ids += [d for d, k in zip(rr.doc_ids, ok, strict=True) if k]
    return np.vstack(Xs), np.asarray(ids, dtype=object)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=50)
    args = ap.parse_args(argv)
    X, ids = rows()
    docs = np.unique(ids)
    rng = np.random.default_rng(SEED)
    ref_docs = rng.choice(docs, size=len(docs) // 2, replace=False)
    in_ref = np.isin(ids, ref_docs)
    cols = domain_columns(X[in_ref])
    ref = DomainReference(columns=cols, random_state=SEED).fit(X[in_ref], groups=ids[in_ref])
    ref = persistence.from_dict(persistence.to_dict(ref))  # measure what is stored
    held = [d for d in docs if d not in set(ref_docs)]
    alarms, doc_flags = 0, []
    for _ in range(args.batches):
        batch = rng.choice(held, size=args.batch_size, replace=False)
        m = np.isin(ids, batch)
        chk = ref.check(X[m], ids[m])
        alarms += chk.shifted
        doc_flags.append(chk.share_novel)
    report = {
        "columns": [FEATURE_NAMES[c] for c in cols],
        "reference_documents": len(ref_docs),
        "held_out_documents": len(held),
        "batches": args.batches,
        "batch_size": args.batch_size,
        "batch_false_alarm_rate": alarms / args.batches,
        "mean_share_of_documents_flagged": float(np.mean(doc_flags)),
    }
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
