"""The confidence engine against the baselines, on the same extractions, plus scoring throughput.

Usage::

    python benchmarks/bench_engine.py [--work /work/runs] [--data ../shared/data]
                                      [--model MODEL_DIR] [--out benchmarks/results/engine.json]

Sections (each runs when its inputs exist, and says so when they do not):

1. **held-out synthetic**: the default model (trained by ``scripts/train_default.py`` on the
   other documents) on ``WORK/split-test`` with ``WORK/runs.jsonl.gz`` (invoices) and on
   ``WORK/split-rtest`` with ``WORK/receipt-runs.jsonl.gz`` (receipts); and doc-grouped 5-fold
   cross-fitting over every synthetic document with a run. All methods side by side: AUROC,
   AURC, coverage at 99 % accuracy (and as a share of the oracle coverage 1 - failure rate),
   ECE, Brier, LLM calls per document.
2. **zero-shot** on ``DATA/sroie-dev`` and ``DATA/invoices-generated`` with runs
   ``WORK/runs-<name>.jsonl``: the default model as shipped, then Lasso recalibration on 30
   labelled documents of the new domain (metrics on the remaining documents).
3. **throughput** of :meth:`ConfidenceEngine.score` from recorded runs without
   documents, in fields per CPU second on one core (``time.process_time``; the build machine is
   shared, wall time is also given), with and without reasons.
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


def _metrics(table, conf, accepted=None):
    from confidence.evaluation import evaluate_table

    if accepted is None:
        accepted = np.zeros(len(table), dtype=bool)
    m, _ = evaluate_table(table, conf, accepted)
    return m


def _print(title: str, m: dict) -> None:
    print(f"\n== {title}")
    print(f"{'method':18} {'auroc':>6} {'aurc':>7} {'cov@99':>7} {'%oracle':>8} {'e-aurc':>7} "
          f"{'ece':>6} {'brier':>6} {'calls':>5}")  # fmt: skip
    for name, r in sorted(m["methods"].items(), key=lambda kv: -np.nan_to_num(kv[1]["auroc"])):

        def f(v, w=6, d=3):
            return f"{'-':>{w}}" if v is None else f"{v:{w}.{d}f}"

        print(
            f"{name:18} {f(r['auroc'])} {f(r['aurc'], 7, 4)} {f(r['coverage_at_accuracy_0.99'], 7)}"
            f" {f(r['coverage_at_accuracy_0.99_of_oracle'], 8)} {f(r.get('excess_aurc'), 7, 4)}"
            f" {f(r['ece'])} {f(r['brier'])}"
            f" {f(r['llm_calls_per_doc'], 5, 1)}"
        )
    oracle = next(iter(m["methods"].values())).get("aurc_oracle")
    if oracle is not None:
        print(f"oracle AURC (floor of every method): {oracle:.4f}")
    if "routing" in m:
        print(f"routing: {m['routing']}")


def _table(ds_dirs, runs_paths, use_documents=True):
    from confidence.datasets.folder import Dataset
    from confidence.evaluation import build_table
    from confidence.records import load_runs

    runs = load_runs(runs_paths)
    return build_table([Dataset.open(d) for d in ds_dirs], runs, use_documents=use_documents)


def _held_out(engine, table, key: str, title: str, results: dict) -> None:
    conf = engine.predict_confidence(table.rows.X)
    acc = np.array([s.decision == "accept" for s in engine.score_rows(table.rows, explain=False)])
    m = _metrics(table, conf, acc)
    m["n_documents"] = table.n_documents
    results[key] = m
    _print(f"{title}, default model ({table.n_documents} docs, {len(table)} fields)", m)


def held_out_synthetic(work: Path, engine, results: dict) -> None:
    from confidence.evaluation import cross_fit

    runs = work / "runs.jsonl.gz"
    if not runs.exists() or not (work / "split-test").exists():
        print(f"\n(skip held-out synthetic: no {runs} / split-test; run scripts/train_default.py)")
        return
    _held_out(engine, _table([work / "split-test"], [runs]), "synthetic_heldout",
              "held-out synthetic invoices", results)  # fmt: skip
    sets, all_runs = [work / "split-train", work / "split-test"], [runs]
    r_runs = work / "receipt-runs.jsonl.gz"
    if r_runs.exists() and (work / "split-rtest").exists():
        _held_out(engine, _table([work / "split-rtest"], [r_runs]), "synthetic_receipts_heldout",
                  "held-out synthetic receipts", results)  # fmt: skip
        sets += [work / "split-rtrain", work / "split-rtest"]
        all_runs.append(r_runs)
    full = _table(sets, all_runs)
    cf = cross_fit(full, n_splits=5)
    m = _metrics(full, cf.confidence, cf.accepted)
    m["n_documents"] = full.n_documents
    results["synthetic_crossfit"] = m
    _print(f"synthetic, 5-fold cross-fit ({full.n_documents} docs, {len(full)} fields)", m)


def zero_shot(work: Path, data: Path, engine, results: dict) -> None:
    for name in ("sroie-dev", "invoices-generated"):
        runs = work / f"runs-{name}.jsonl"
        if not runs.exists() or not (data / name).exists():
            print(f"\n(skip zero-shot {name}: no {runs})")
            continue
        table = _table([data / name], [runs])
        conf = engine.predict_confidence(table.rows.X)
        # the shipped thresholds as they are: their guarantee was certified on synthetic
        # invoices, so the accuracy of what they accept here measures the domain shift
        acc = np.array(
            [s.decision == "accept" for s in engine.score_rows(table.rows, explain=False)]
        )
        m = _metrics(table, conf, acc)
        results[f"zeroshot_{name}"] = m
        _print(f"zero-shot {name} ({table.n_documents} docs)", m)
        _lasso(engine, table, name, results)


def _lasso(engine, table, name: str, results: dict, n_docs: int = 30, draws: int = 10) -> None:
    """Lasso recalibration on ``n_docs`` labelled documents of the new domain, metrics on the
    rest; repeated over ``draws`` random draws (a 30-document draw is noisy), reporting the
    mean, min and max of each metric and the first draw's full table."""
    docs = sorted(set(table.rows.doc_ids))
    if len(docs) < 2 * n_docs:
        print(f"(lasso on {name}: {len(docs)} docs, need {2 * n_docs} for {n_docs} + a test set)")
        n_docs = len(docs) // 2
    rng = np.random.default_rng(0)
    per_draw, routing_draws = [], []
    for k in range(draws):
        recal_docs = set(rng.choice(docs, size=n_docs, replace=False))
        in_recal = np.array([d in recal_docs for d in table.rows.doc_ids])
        tr, te = table.subset(in_recal), table.subset(~in_recal)
        try:
            eng2 = engine.recalibrate(
                tr.rows.X, tr.y, groups=np.asarray(tr.rows.doc_ids), calibrator="lasso"
            )
        except Exception as e:  # report, keep benchmarking
            print(f"lasso recalibration failed on draw {k}: {e}")
            continue
        # thresholds re-tuned on the same labelled documents restore the guarantee in the
        # new domain (the shipped ones were certified on synthetic invoices only)
        eng3 = eng2.tune(
            tr.rows.X, tr.y, fields=np.asarray(tr.rows.fields),
            field_types=np.asarray(tr.rows.field_types),
        )  # fmt: skip
        acc = np.array([s.decision == "accept" for s in eng3.score_rows(te.rows, explain=False)])
        m = _metrics(te, eng2.predict_confidence(te.rows.X), acc)
        if k == 0:
            results[f"lasso{n_docs}_{name}"] = m
            _print(f"{name} after Lasso recalibration on {n_docs} docs (draw 0; rest)", m)
        per_draw.append(m["methods"]["extractconf"])
        routing_draws.append(m["routing"])
    if per_draw:
        summary = {}
        for key in ("auroc", "aurc", "coverage_at_accuracy_0.99", "ece", "brier"):
            v = np.array([d[key] for d in per_draw if d[key] is not None], dtype=float)
            if len(v):
                summary[key] = {"mean": v.mean(), "min": v.min(), "max": v.max()}
        routing = [d for d in routing_draws if d["accuracy_of_accepted"] is not None]
        summary["routing_after_tune"] = {
            "coverage_mean": float(np.mean([d["coverage"] for d in routing_draws])),
            "accuracy_of_accepted_mean": (
                float(np.mean([d["accuracy_of_accepted"] for d in routing])) if routing else None
            ),
            "draws_meeting_target": sum(
                d["accuracy_of_accepted"] >= engine.target_accuracy for d in routing
            ),
            "draws_accepting_anything": len(routing),
            "target_accuracy": engine.target_accuracy,
        }
        summary["draws"] = len(per_draw)
        results[f"lasso{n_docs}_{name}_draws"] = summary
        a = summary["auroc"]
        print(f"extractconf after Lasso, {len(per_draw)} draws of {n_docs} docs: AUROC mean "
              f"{a['mean']:.3f} (min {a['min']:.3f}, max {a['max']:.3f}), ECE mean "
              f"{summary['ece']['mean']:.3f}")  # fmt: skip
        print("routing after re-tuning thresholds on the same docs:", summary["routing_after_tune"])


def goals(results: dict) -> None:
    """The issue's goals, checked on the measured numbers (printed and stored)."""
    out = {}
    h = results.get("synthetic_heldout", {}).get("methods", {})
    if h:
        ours, lp = h["extractconf"], h.get("logprob_mean")
        out["heldout_auroc_ge_0.93"] = ours["auroc"] >= 0.93
        if lp:
            ratio = ours["aurc"] / lp["aurc"]
            floor = ours["aurc_oracle"] / lp["aurc"]  # no ranking can go below the oracle
            out["aurc_ratio_vs_logprob_mean"] = ratio
            out["aurc_ratio_floor_oracle"] = floor
            out["aurc_ratio_le_0.30"] = ratio <= 0.30
            out["excess_aurc_ratio_vs_logprob_mean"] = ours["excess_aurc"] / lp["excess_aurc"]
    for key in ("zeroshot_sroie-dev", "synthetic_heldout"):
        m = results.get(key, {}).get("methods", {})
        sc = m.get("self_consistency")
        if sc and sc.get("auroc") is not None:
            out[f"{key}_beats_self_consistency_with_fewer_calls"] = bool(
                m["extractconf"]["auroc"] > sc["auroc"]
                and m["extractconf"]["llm_calls_per_doc"] < sc["llm_calls_per_doc"]
            )
    z = results.get("zeroshot_sroie-dev", {}).get("methods", {})
    if z:
        out["zeroshot_receipts_auroc_ge_0.86"] = z["extractconf"]["auroc"] >= 0.86
    t = results.get("throughput")
    if t:
        out["throughput_ge_20000_fields_per_cpu_s"] = t["no_reasons"]["fields_per_cpu_s"] >= 20_000
    results["goals"] = out
    print("\n== goals")
    for k, v in out.items():
        print(f"{k:55} {v if isinstance(v, bool) else f'{v:.3f}'}")


def throughput(work: Path, engine, results: dict) -> None:
    from confidence.datasets.synthetic import SCHEMA
    from confidence.records import load_runs

    runs_path = work / "runs.jsonl.gz"
    if runs_path.exists():
        runs = [r for r in load_runs([runs_path]).values() if r.status == "ok"]
        schema = SCHEMA
    else:  # simulated runs keep the benchmark runnable anywhere
        import random

        sys.path.insert(0, str(ROOT / "tests"))
        from engine_fixtures import SCHEMA as schema
        from engine_fixtures import _gold, simulate_run

        rng = random.Random(0)
        runs = [simulate_run(f"d{i}", _gold(rng, i), rng) for i in range(400)]
    # each run once: the scorer computes features once per distinct value within a call, so a
    # batch of copies would measure the copies' shared work, not a real batch's
    reps = 1 if runs_path.exists() else max(1, 20_000 // (len(runs) * len(schema)) + 1)
    batch = [r for _ in range(reps) for r in runs]
    n_fields = len(batch) * len(schema)
    engine.score(batch[:10], schema)  # warm-up
    out = {}
    # best of several repetitions (as timeit does): other tenants of the shared machine only ever
    # slow a run down, so the fastest one is the closest to the code's own cost
    for explain, reps in ((False, 7), (True, 3)):
        cpus, walls = [], []
        for _ in range(reps):
            c0, w0 = time.process_time(), time.perf_counter()
            engine.score(batch, schema, explain=explain)
            cpus.append(time.process_time() - c0)
            walls.append(time.perf_counter() - w0)
        key = "with_reasons" if explain else "no_reasons"
        out[key] = {
            "fields_per_cpu_s": n_fields / min(cpus),
            "fields_per_wall_s": n_fields / min(walls),
            "fields_per_cpu_s_median": n_fields / float(np.median(cpus)),
            "repetitions": reps,
        }
    out["n_fields"] = n_fields
    out["runs"] = "recorded" if runs_path.exists() else "simulated"
    results["throughput"] = out
    print(f"\n== scoring throughput from recorded runs ({n_fields} fields, no documents, 1 core)")
    for k in ("no_reasons", "with_reasons"):
        print(f"{k:13} {out[k]['fields_per_cpu_s']:9.0f} fields/CPU-s (best of "
              f"{out[k]['repetitions']}; median {out[k]['fields_per_cpu_s_median']:.0f}) "
              f"{out[k]['fields_per_wall_s']:9.0f} fields/wall-s")  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/work/runs"))
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "engine.json")
    a = ap.parse_args(argv)
    from confidence.engine import ConfidenceEngine
    from confidence.errors import ModelError

    try:
        engine = ConfidenceEngine.load(a.model)
    except ModelError as e:
        print(f"no model: {e}")
        return 1
    results: dict = {}
    held_out_synthetic(a.work, engine, results)
    zero_shot(a.work, a.data, engine, results)
    throughput(a.work, engine, results)
    goals(results)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    from confidence.jsonsafe import jsonable

    a.out.write_text(json.dumps(jsonable(results), indent=2) + "\n")
    print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
