"""Ray Data benchmark: ``extractconf score --engine ray`` against the single-process path.

Usage::

    .venv/bin/python benchmarks/bench_ray.py [--fields 1000000] [--pages 200,40]

1. Scoring recorded runs (``--no-documents --no-reasons``): the committed runs
   ``scripts/default_runs.jsonl.xz`` (600 invoices, 21 fields each) are repeated under new doc_ids
   until ``--fields`` fields, in a dataset folder of labels without files. What the
   single-process ``extractconf score`` does (``load_runs``, ``ConfidenceEngine.score``,
   ``write_rows``) and what ``--engine ray --num-cpus 2`` does (``confidence.ray.score_runs``)
   run the same job in fresh processes, ``--score-repeat`` times interleaved at ``--fields``;
   reported: wall time, throughput ratio of the median pair (goal >= 1.7x) and the driver's
   peak RSS at ``--fields`` and a quarter of it (goal: flat in the number of fields, the rows
   are streamed).
2. OCR ingestion of ``--pages`` synthetic scans (``extractconf synth --scan-ratio 1.0``; the
   first size is the goal's measurement, ``ingest``; each other size N is ``ingest_N_files``), no
   cache: the Ray ``ingest`` stage on 1 and on 2 CPUs (goal >= 1.7x) and ``load_many(n_jobs=2)``,
   the process pool of ``--n-jobs 2`` (goal: Ray within 1.15x of it), each ``--repeat`` times
   (interleaved; the fastest kept, every time recorded). Ray's start-up is timed apart. The
   documents go in blocks as ``extractconf score --engine ray`` makes them
   (:func:`confidence.ray.pipeline.ingest_block`).

All numbers come from one run on the same machine; it is shared, so the load average before
and after each measurement is recorded with it. Writes ``benchmarks/results/ray.json``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

HERE = Path(__file__).resolve().parent
RUNS = HERE.parent / "scripts" / "default_runs.jsonl.xz"
SCHEMA = HERE.parent / "confidence" / "models" / "default" / "schema.json"


def make_runs_dataset(folder: Path, n_fields: int) -> tuple[Path, Path, int]:
    """(dataset folder, runs.jsonl, n_docs): the committed runs repeated under new doc_ids."""
    with lzma.open(RUNS, "rt", encoding="utf-8") as fh:
        base = [json.loads(line) for line in fh if line.strip()]
    n_fields_per = len(json.loads(SCHEMA.read_text())["fields"])
    n_docs = -(-n_fields // n_fields_per)
    templates = []
    for rec in base:
        rec["doc_id"] = "@@ID@@"
        templates.append(json.dumps(rec, separators=(",", ":")))
    ds = folder / "ds"
    ds.mkdir(parents=True)
    (ds / "schema.json").write_text(SCHEMA.read_text())
    runs = folder / "runs.jsonl"
    with (ds / "labels.jsonl").open("w") as lab, runs.open("w") as out:
        for i in range(n_docs):
            doc_id = f"r{i:07d}"
            lab.write(json.dumps({"doc_id": doc_id, "file": f"files/{doc_id}.pdf", "fields": {}}))
            lab.write("\n")
            out.write(templates[i % len(templates)].replace("@@ID@@", doc_id) + "\n")
    return ds, runs, n_docs


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def child(mode: str, ds: str, runs: str, out: str) -> None:
    """In a fresh process: score recorded runs (``single`` or ``ray2``) as ``extractconf score
    DS --runs RUNS --no-documents --no-reasons`` does; print wall time and peak RSS."""
    from confidence.datasets.folder import Dataset
    from confidence.engine import ConfidenceEngine

    t = time.perf_counter()
    data = Dataset.open(ds, check_files=False)
    if mode == "single":
        from confidence.output import write_rows
        from confidence.readings import RunRecord
        from confidence.records import load_runs
        from confidence.routing import straight_through

        engine = ConfidenceEngine.load()
        recorded = load_runs([runs])
        records = [
            recorded.get(r.doc_id)
            or RunRecord(r.doc_id, None, None, status="error", error="not in --runs")
            for r in data.records
        ]
        scores = engine.score(records, data.schema, None, explain=False)
        through = straight_through([s.doc_id for s in scores], [s.decision for s in scores])
        n = write_rows(
            out, ({**s.to_dict(), "straight_through": through[s.doc_id]} for s in scores)
        )
    else:
        from confidence.ray import init_ray, score_runs

        init_ray(None, 2, quiet=True)
        items = [{"doc_id": r.doc_id, "path": str(data.path_of(r))} for r in data.records]
        job = score_runs(items, [runs], data.schema, out, explain=False)
        n = job.n_fields
    secs = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps({"rows": n, "seconds": secs, "driver_rss_mb": rss}))


def run_child(args: list[str]) -> dict:
    load0 = _load()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    if not line:
        raise SystemExit(f"benchmark child failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    out = json.loads(line[-1][len("RESULT ") :])
    out.update(load_before=load0, load_after=_load())
    return out


def bench_scoring(
    tmp: Path,
    n_fields: int,
    res: dict | None = None,
    save=None,
    only_full: bool = False,
    repeat: int = 1,
) -> dict:
    """Score ``n_fields // 4`` (once) and ``n_fields`` (``repeat`` times, interleaved: single,
    Ray, single, Ray, ...) fields. The ratio of each pair is recorded; the reported
    ``throughput_ratio`` is the median pair's, ``fastest_ratio`` that of the fastest times."""
    res = res if res is not None else {"sizes": {}}
    n_per = len(json.loads(SCHEMA.read_text())["fields"])
    for size in (n_fields,) if only_full else (n_fields // 4, n_fields):
        ds, runs, n_docs = make_runs_dataset(tmp / f"s{size}", size)
        n = n_docs * n_per
        pairs = []
        for k in range(repeat if size == n_fields else 1):
            single = run_child(["single", str(ds), str(runs), str(tmp / f"single{size}-{k}.jsonl")])
            ray = run_child(["ray2", str(ds), str(runs), str(tmp / f"ray{size}-{k}")])
            pairs.append({"single": single, "ray_2cpu": ray,
                          "ratio": round(single["seconds"] / ray["seconds"], 3)})  # fmt: skip
            (tmp / f"single{size}-{k}.jsonl").unlink(missing_ok=True)
            print(
                f"  scoring {n:>8} fields: single {single['seconds']:7.1f}s "
                f"({single['driver_rss_mb']:.0f} MB)  ray {ray['seconds']:7.1f}s "
                f"({ray['driver_rss_mb']:.0f} MB driver)  ratio {pairs[-1]['ratio']:.2f}x",
                flush=True,
            )
        mid = sorted(pairs, key=lambda q: q["ratio"])[(len(pairs) - 1) // 2]
        fast_single = min(q["single"]["seconds"] for q in pairs)
        fast_ray = min(q["ray_2cpu"]["seconds"] for q in pairs)
        row = {
            "n_docs": n_docs,
            "n_fields": n,
            "single": mid["single"],
            "ray_2cpu": mid["ray_2cpu"],
            "single_fields_per_s": round(n / mid["single"]["seconds"], 1),
            "ray_fields_per_s": round(n / mid["ray_2cpu"]["seconds"], 1),
            "throughput_ratio": mid["ratio"],
            "fastest_ratio": round(fast_single / fast_ray, 3),
            "pair_ratios": [q["ratio"] for q in pairs],
            "pairs": [
                {
                    "single_s": round(q["single"]["seconds"], 1),
                    "ray_s": round(q["ray_2cpu"]["seconds"], 1),
                    "load_before": [q["single"]["load_before"], q["ray_2cpu"]["load_before"]],
                }
                for q in pairs
            ],
            "max_driver_rss_mb": max(q["ray_2cpu"]["driver_rss_mb"] for q in pairs),
        }
        row["load_avg"] = os.getloadavg()[0]
        res["sizes"][str(n)] = row
        if save is not None:  # each size is kept as soon as it is measured
            save()
    return res


def ingest_child(mode: str, paths: list[str]) -> None:
    """In a fresh process: ingest ``paths`` with ``mode`` (ray1, ray2, pool2); print timings."""
    t0 = time.perf_counter()
    if mode == "pool2":
        from confidence.documents import load_many

        ok = sum(not isinstance(r, Exception) for r in load_many(paths, n_jobs=2))
        start = 0.0
    else:
        from confidence.ray import ingest, init_ray

        init_ray(None, int(mode[-1]), quiet=True)
        import ray

        start = time.perf_counter() - t0
        t0 = time.perf_counter()
        from confidence.ray.pipeline import _items_ds, ingest_block

        items = [{"doc_id": Path(p).stem, "path": p} for p in paths]
        cpus = int(mode[-1])  # blocks as `extractconf score --engine ray` makes them
        ds = ingest(_items_ds(ray, items, ingest_block(len(items), cpus), cpus), use_cache=False)
        ok = sum(r["error"] is None for r in ds.select_columns(["error"]).iter_rows())
        ray.shutdown()
    print("RESULT " + json.dumps({"ok": ok, "seconds": time.perf_counter() - t0, "start_s": start}))


def bench_ingest(tmp: Path, n_pages: int, repeat: int = 1) -> dict:
    ds = tmp / f"scans{n_pages}"
    subprocess.run(
        [sys.executable, "-m", "confidence.cli", "synth", str(ds), "--n", str(n_pages),
         "--seed", "11", "--scan-ratio", "1.0", "--quiet"],
        check=True,
    )  # fmt: skip
    paths = sorted(str(p) for p in (ds / "files").iterdir())
    import pypdfium2 as pdfium

    pages = sum(len(pdfium.PdfDocument(p)) if p.endswith(".pdf") else 1 for p in paths)
    res: dict = {"n_files": len(paths), "n_pages": pages, "repeat": repeat}
    tries: dict[str, list[dict]] = {}
    for _ in range(repeat):  # interleaved, so a busy spell of the shared machine hits every mode
        for mode in ("ray1", "ray2", "pool2"):
            load0 = _load()
            proc = subprocess.run(
                [sys.executable, __file__, "--ingest-child", mode, *paths],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                raise SystemExit(f"ingest child failed:\n{proc.stderr[-4000:]}")
            got = {**json.loads(line[-1][7:]), "load_before": load0, "load_after": _load()}
            tries.setdefault(mode, []).append(got)
            print(f"  ingest {mode}: {got['seconds']:.1f}s ({got['ok']} ok)", flush=True)
    for mode, runs in tries.items():
        # the fastest of the repetitions (as timeit): other tenants only ever slow a run down
        res[mode] = {**min(runs, key=lambda r: r["seconds"]), "all_seconds": [
            round(r["seconds"], 2) for r in runs]}  # fmt: skip
    res["ray_2cpu_vs_1cpu"] = round(res["ray1"]["seconds"] / res["ray2"]["seconds"], 3)
    res["ray_2cpu_vs_pool2"] = round(res["ray2"]["seconds"] / res["pool2"]["seconds"], 3)
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fields", type=int, default=1_000_000)
    p.add_argument(
        "--pages",
        default="200,40",
        help="ingestion: scans per measurement, comma-separated; the first is the goal's",
    )
    p.add_argument(
        "--repeat", type=int, default=2, help="ingestion: each mode K times, the fastest kept"
    )
    p.add_argument(
        "--score-repeat",
        type=int,
        default=3,
        help="scoring --fields: K interleaved pairs (single, Ray), the median pair reported",
    )
    p.add_argument(
        "--skip",
        choices=("scoring", "ingest"),
        default=None,
        help="measure only the other part (the skipped one is kept from --out)",
    )
    p.add_argument(
        "--only-full", action="store_true", help="score only --fields, not also a quarter of it"
    )
    p.add_argument("--out", default=str(HERE / "results" / "ray.json"))
    args = p.parse_args()
    res: dict = {}
    if args.skip and Path(args.out).is_file():  # keep the part measured by an earlier run
        res = {k: v for k, v in json.loads(Path(args.out).read_text()).items() if args.skip in k}
    res["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    import ray

    res["machine"]["ray"] = ray.__version__
    with tempfile.TemporaryDirectory() as tmp:
        if args.skip != "ingest":
            for k, n in enumerate(int(x) for x in str(args.pages).split(",")):
                key = "ingest" if k == 0 else f"ingest_{n}_files"
                res[key] = bench_ingest(Path(tmp), n, args.repeat)
                _write(res, args.out)  # each part is kept as soon as it is measured
        if args.skip != "scoring":
            res["scoring"] = {"sizes": {}}
            bench_scoring(
                Path(tmp), args.fields, res["scoring"], lambda: _write(res, args.out),
                only_full=args.only_full, repeat=args.score_repeat,
            )  # fmt: skip
    _write(res, args.out)
    print(json.dumps({k: v for k, v in res.items() if k.startswith("summary")}, indent=2))


def _write(res: dict, out: str) -> None:
    if "scoring" in res:
        sizes = list(res["scoring"]["sizes"].values())
        res["summary_scoring"] = {
            "throughput_ratio": sizes[-1]["throughput_ratio"],
            "pair_ratios": sizes[-1].get("pair_ratios"),
            "fastest_ratio": sizes[-1].get("fastest_ratio"),
            "goal_ratio": 1.7,
            "driver_rss_mb": {s["n_fields"]: s["ray_2cpu"]["driver_rss_mb"] for s in sizes},
            "single_rss_mb": {s["n_fields"]: s["single"]["driver_rss_mb"] for s in sizes},
        }
    for key in [k for k in res if k == "ingest" or k.startswith("ingest_")]:
        got = res[key]
        secs = {
            m: got[m].get("all_seconds", [got[m]["seconds"]]) for m in ("ray1", "ray2", "pool2")
        }
        res["summary_" + key] = {
            "n_files": got["n_files"],
            "n_pages": got["n_pages"],
            "ray_2cpu_vs_1cpu": got["ray_2cpu_vs_1cpu"],
            "goal_speedup": 1.7,
            "ray_2cpu_vs_pool2": got["ray_2cpu_vs_pool2"],
            "goal_overhead": 1.15,
            "per_repetition": {  # the ratios of each interleaved repetition alone
                "ray_2cpu_vs_1cpu": [
                    round(a / b, 3) for a, b in zip(secs["ray1"], secs["ray2"], strict=False)
                ],
                "ray_2cpu_vs_pool2": [
                    round(a / b, 3) for a, b in zip(secs["ray2"], secs["pool2"], strict=False)
                ],
            },
        }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:6])
    elif len(sys.argv) > 1 and sys.argv[1] == "--ingest-child":
        ingest_child(sys.argv[2], sys.argv[3:])
    else:
        main()
