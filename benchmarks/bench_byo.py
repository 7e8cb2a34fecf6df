"""Bring your own extraction: one-reading records, with and without the library's Mapper.

Usage::

    python benchmarks/bench_byo.py [--work /work/runs] [--model MODEL_DIR ...]
                                   [--real DATASET RUNS ...] [--out benchmarks/results/byo.json]

A third-party pipeline sends one reading per document (values and maybe logprobs, no Mapper).
This benchmark makes such records from the held-out synthetic documents of
``scripts/train_default.py`` (``WORK/split-test`` + ``WORK/runs.jsonl.gz``, invoices;
``WORK/split-rtest`` + ``WORK/receipt-runs.jsonl.gz``, receipts): the recorded Hunter reading
(SmolLM2 values + token logprobs) is kept and the Mapper dropped. Each record set is scored the
ways :meth:`~confidence.engine.ConfidenceEngine.score` can see it
(:data:`confidence.evaluation.table.READINGS`):

* ``library_mapper`` — documents given: the library's layout Mapper is the second reading
  (the default of ``score``); the reported value is the record's (the Hunter's);
* ``foreign_values`` — the same, with about 30 % of each record's values taken from another
  held-out document (:func:`confidence.calls.second_reading.foreign_values`): a pipeline that
  reports, confidently, values that are not on the page;
* ``no_mapper`` — documents given, ``library_mapper=False``: one reading, page features only;
* ``no_page`` — no documents: one reading, no page;
* ``two_readings`` — the recorded Hunter and Mapper (reference, not a one-reading case).

For each: AUROC and AURC of the engine beside ``logprob_mean`` (``exp`` of the mean token
logprob of the Hunter's value, :mod:`confidence.evaluation.baselines`) on the *same rows*
(the rows' correctness is the engine's reported value's: the Hunter's, else the Mapper's), the
oracle's AURC (correct fields first: the floor) and each method's coverage at 99 % accuracy as
a share of the oracle's (the share of correct fields), and for each engine the share of fields
its shipped thresholds accept (``routing``: ``accepted`` and the accuracy of the accepted).
Several ``--model`` folders (``NAME=DIR``) are compared side by side, e.g. a model trained
without ``--single-reading``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]

VARIANTS = {  # name -> (build_table readings, use documents)
    "library_mapper": ("library_mapper", True),
    "foreign_values": ("foreign_values", True),
    "no_mapper": ("hunter_only", True),
    "no_page": ("hunter_only", False),
    "two_readings": ("recorded", True),
}
SETS = {
    "invoices": ("split-test", "runs.jsonl.gz"),
    "receipts": ("split-rtest", "receipt-runs.jsonl.gz"),
}


def _row(name: str, m: dict) -> str:
    def f(v, d=3):
        return "    -" if v is None else f"{v:.{d}f}"

    acc = m.get("routing", {}).get("accepted")
    accepted = "" if acc is None else f"  accepted {f(acc)}"
    return (
        f"  {name:14} AUROC {f(m['auroc'])}  AURC {f(m['aurc'], 4)}  cov@99%/oracle "
        f"{f(m['coverage_at_accuracy_0.99_of_oracle'])}{accepted}"
    )


def run(
    work: Path,
    models: dict[str, Path | None],
    cache_dir: str | None,
    real: list[tuple[Path, Path]] = (),
) -> dict:
    from confidence.calibration import evaluate_scores
    from confidence.calibration.metrics import aurc_oracle
    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.engine import ConfidenceEngine
    from confidence.evaluation.baselines import fill_missing
    from confidence.evaluation.table import build_table
    from confidence.records import load_runs

    engines = {k: ConfidenceEngine.load(v) for k, v in models.items()}
    cache = DocumentCache(cache_dir)
    results: dict = {"models": {k: str(v or "default") for k, v in models.items()}}
    sets = {k: (work / f, work / r) for k, (f, r) in SETS.items()}
    sets.update({f"dev_{d.name}": (d, r) for d, r in real})  # dev sets: measurement only
    for kind, (folder, runs_path) in sets.items():
        if not folder.exists() or not runs_path.exists():
            print(f"(skip {kind}: no {folder} / {runs_path})")
            continue
        ds = Dataset.open(folder)
        runs = load_runs(runs_path)
        results[kind] = {}
        for variant, (readings, docs) in VARIANTS.items():
            t = time.perf_counter()
            table = build_table(ds, runs, cache=cache, use_documents=docs, readings=readings)
            cols, _ = fill_missing(table.baselines)
            out = {
                "n_documents": table.n_documents,
                "n_fields": len(table),
                "failure_rate": float(1 - table.y.mean()),
                "logprob_mean": evaluate_scores(table.y, cols["logprob_mean"]),
            }
            for name, eng in engines.items():
                conf = eng.predict_confidence(table.rows.X)
                out[name] = evaluate_scores(table.y, conf)
                # the engine's own routing (as ``score`` and ``evaluate`` route: an empty value
                # whose absence is not certified, or a record with one reading, is reviewed
                # whatever its confidence: ``score`` passes one-reading documents as ``lone``)
                lone = set(table.rows.doc_ids) if readings == "hunter_only" else ()
                scored = eng.score_rows(table.rows, lone=lone, explain=False)
                acc = np.array([r.decision == "accept" for r in scored])
                # the bare thresholds on the same rows (what they would accept without that rule)
                bare = np.array(
                    [
                        None not in (r.confidence, r.threshold) and r.confidence >= r.threshold
                        for r in scored
                    ]
                )
                out[name]["routing"] = {
                    "accepted": float(acc.mean()),
                    "accuracy_of_accepted": float(table.y[acc].mean()) if acc.any() else None,
                    "above_threshold": float(bare.mean()),
                    "accuracy_above_threshold": float(table.y[bare].mean()) if bare.any() else None,
                }
            out["aurc_oracle"] = aurc_oracle(table.y)
            for name in [*engines, "logprob_mean"]:
                cov = out[name]["coverage_at_accuracy_0.99"]
                out[name]["coverage_at_accuracy_0.99_of_oracle"] = cov / table.y.mean()
            results[kind][variant] = out
            took = time.perf_counter() - t
            print(f"\n== {kind}, {variant} ({table.n_documents} docs, {len(table)} fields, "
                  f"failure rate {out['failure_rate']:.3f}; {took:.0f} s)")  # fmt: skip
            for name in [*engines, "logprob_mean"]:
                print(_row(name, out[name]))
            print(f"  oracle AURC {out['aurc_oracle']:.4f}")
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/work/runs"))
    ap.add_argument("--model", action="append", default=None, metavar="NAME=DIR",
                    help="engine folders to compare (default: the shipped model)")  # fmt: skip
    ap.add_argument("--cache-dir", default=None, help="document cache (default location)")
    ap.add_argument(
        "--real",
        nargs=2,
        action="append",
        type=Path,
        default=[],
        metavar=("DATASET", "RUNS"),
        help="also a labelled dataset folder and its recorded runs (e.g. a dev set extracted "
        "with `extractconf extract`); reported as dev_<folder name>",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "byo.json")
    a = ap.parse_args(argv)
    models: dict[str, Path | None] = {"extractconf": None}
    if a.model:
        models = {}
        for spec in a.model:
            name, _, path = spec.partition("=")
            models[name] = Path(path) if path else None
    results = run(a.work, models, a.cache_dir, [tuple(r) for r in a.real])
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(results, indent=1, default=float) + "\n")
    print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
