"""The feedback loop measured: simulated reviewers -> feedback -> recalibrate, batch by batch.

Usage::

    python benchmarks/bench_feedback.py --invoices INV_DIR --receipts REC_DIR
        [--cache-dir DIR] [--histories 3] [--batch 20] [--eval-docs 50] [--audit-rate 0.05]
        [--target 0.9] [--out benchmarks/results/feedback.json]

``INV_DIR`` / ``REC_DIR`` as for ``benchmarks/bench_groups.py`` (``extractconf synth`` seed 7);
only the 200 + 200 documents ``scripts/train_default.py`` held out are used (the default model
never saw them; they are still its training *distribution*, so this measures the loop's
mechanics and guarantee, not a domain shift).

Protocol, per set and per history (a seeded shuffle of the held-out documents):

1. ``--eval-docs`` documents are set aside as the held-out evaluation batch; the rest arrive in
   batches of ``--batch`` documents.
2. Start as a user in a new domain: the default model with every field locked (review all,
   :func:`confidence.feedback.recalibration.locked`).
3. Each batch is scored by the current model with ``audit_rate``; a simulated reviewer
   (:func:`confidence.feedback.simulate.review_from_gold`) decides every field sent to review;
   the whole review log so far becomes a feedback dataset
   (:func:`~confidence.feedback.dataset.build_feedback_dataset`) and
   :func:`~confidence.feedback.recalibration.recalibrate` refits the calibrator (IPW) and
   updates the sequential test, giving the next model.
4. After every batch, on the evaluation batch: ECE and AUROC of the model's confidence, the
   share of fields accepted, the realised accuracy of the accepted fields, and the fields
   unlocked. The default model as shipped (its own calibration and thresholds, certified on the
   training distribution) is measured on the same batch for reference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_groups import SETS, held_out  # noqa: E402  (the same held-out split)


def _evaluate(engine, table) -> dict:
    from confidence.calibration import auroc, ece

    scores = engine.score_rows(table.rows, explain=False)
    conf = np.array([s.confidence for s in scores], dtype=float)
    acc = np.array([s.decision == "accept" for s in scores])
    y = table.y
    fields = np.asarray(table.rows.fields, dtype=object)
    per_field = {
        str(f): {
            "accepted": int((acc & (fields == f)).sum()),
            "accepted_accuracy": round(float(y[acc & (fields == f)].mean()), 4),
        }
        for f in dict.fromkeys(fields[acc])
    }
    return {
        "ece": round(ece(y, conf), 4),
        "auroc": round(auroc(y, conf), 4),
        "coverage": round(float(acc.mean()), 4),
        "accepted_accuracy": round(float(y[acc].mean()), 4) if acc.any() else None,
        "n_fields": len(y),
        "per_field": per_field,
    }


def _history(name, folder, ds, runs, cache, args, seed, work: Path) -> dict:
    from confidence.datasets.folder import Dataset
    from confidence.engine import ConfidenceEngine
    from confidence.evaluation import build_table
    from confidence.feedback import build_feedback_dataset, recalibrate
    from confidence.feedback.recalibration import locked
    from confidence.feedback.simulate import review_from_gold
    from confidence.output import write_rows
    from confidence.types import Document

    rng = np.random.default_rng(seed)
    records = list(ds.records)
    order = rng.permutation(len(records))
    eval_ids = [records[i].doc_id for i in order[: args.eval_docs]]
    stream = [records[i] for i in order[args.eval_docs :]]
    eval_table = build_table(ds.subset(eval_ids), runs, cache=cache)
    gold = {r.doc_id: r.fields for r in records}
    shipped = ConfidenceEngine.load()
    model = locked(shipped)
    cert = None
    log, scored = work / "review.jsonl", work / "scored.jsonl"
    rows_all: list[dict] = []
    out = {"seed": seed, "shipped": _evaluate(shipped, eval_table), "batches": []}
    for b in range(0, len(stream), args.batch):
        batch = stream[b : b + args.batch]
        loaded = cache.load_many([ds.path_of(r) for r in batch], [r.doc_id for r in batch])
        docs = {r.doc_id: d for r, d in zip(batch, loaded, strict=True) if isinstance(d, Document)}
        recs = [runs[r.doc_id] for r in batch if r.doc_id in runs]
        scored_batch = model.score(
            recs, ds.schema, docs, explain=False, audit_rate=args.audit_rate, audit_seed=seed
        )
        rows = [s.to_dict() for s in scored_batch]
        rows_all += rows
        write_rows(scored, rows_all)
        n_rev = review_from_gold(rows, gold, log)
        fb = work / f"data-{b}"
        build_feedback_dataset(log, scored, fb, documents=folder)
        fb_ds = Dataset.open(fb)
        table = build_table(fb_ds, runs, cache=cache)
        res = recalibrate(model, table, fb_ds, certifier=cert, target_accuracy=args.target,
                          confidence_level=0.9)  # fmt: skip
        model, cert = res.engine, res.certifier
        st = {f: v["status"] for f, v in res.fields.items()}
        out["batches"].append(
            {
                "documents_seen": b + len(batch),
                "reviews": int(n_rev),
                "audited": int(sum(r["audit"] for r in rows)),
                "fields_scored": len(rows),
                "unlocked": sorted(f for f, v in st.items() if v == "unlocked"),
                "eval": _evaluate(model, eval_table),
            }
        )
        e = out["batches"][-1]["eval"]
        print(f"{name} seed {seed} docs {b + len(batch):4d}: reviews {n_rev:3d}, unlocked "
              f"{out['batches'][-1]['unlocked']}, eval ECE {e['ece']:.3f} coverage "
              f"{e['coverage']:.2f} accuracy {e['accepted_accuracy']}", flush=True)  # fmt: skip
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--invoices", required=True)
    ap.add_argument("--receipts", required=True)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--histories", type=int, default=3)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--eval-docs", type=int, default=50)
    ap.add_argument("--audit-rate", type=float, default=0.05)
    ap.add_argument("--target", type=float, default=0.9)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "feedback.json"))
    args = ap.parse_args(argv)
    # out-of-domain warnings of the default model on part of each batch: not this benchmark's topic
    warnings.filterwarnings("ignore", message=".*unlike the calibration documents")

    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.records import load_runs

    cache = DocumentCache(args.cache_dir)
    t0 = time.time()
    results = {}
    for name, folder in (("invoices", args.invoices), ("receipts", args.receipts)):
        runs_path, n_held = SETS[name]
        ds = held_out(Dataset.open(folder), runs_path, n_held)
        runs = load_runs([runs_path])
        hist = []
        for seed in range(args.histories):
            with tempfile.TemporaryDirectory() as tmp:
                hist.append(_history(name, folder, ds, runs, cache, args, seed, Path(tmp)))
        last = [h["batches"][-1]["eval"] for h in hist]
        # every (history, field) accepted on the evaluation batch after the last look: how
        # often its realised accuracy there reaches the target (a finite-sample estimate)
        cells = [v for h in hist for v in h["batches"][-1]["eval"]["per_field"].values()]
        results[name] = {
            "fields_unlocked_at_end": [len(h["batches"][-1]["unlocked"]) for h in hist],
            "accepted_field_cells": len(cells),
            "cells_meeting_target": round(
                float(np.mean([c["accepted_accuracy"] >= args.target for c in cells])), 4
            )
            if cells
            else None,
            "histories": hist,
            "final_mean": {
                k: round(float(np.mean([x[k] for x in last if x[k] is not None])), 4)
                if any(x[k] is not None for x in last)
                else None
                for k in ("ece", "auroc", "coverage", "accepted_accuracy")
            },
            "shipped_mean": {
                k: round(float(np.mean([h["shipped"][k] for h in hist])), 4)
                for k in ("ece", "auroc", "coverage", "accepted_accuracy")
            },
        }
    payload = {
        "benchmark": "feedback",
        "protocol": __doc__.split("Protocol, ")[1].strip(),
        "params": {k: v for k, v in vars(args).items() if k not in ("invoices", "receipts")},
        "seconds": round(time.time() - t0, 1),
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
