"""Seconds per document of the embedded Hunter + Mapper calls: an older checkout vs this one.

Both run in one benchmark, on the same documents, interleaved document by document (the order
alternates), each in its own worker process with the embedded SmolLM2 on one thread
(``n_threads=1``, ``OMP_THREAD_LIMIT=1``). The old code is a ``git archive`` of ``--old-rev``
(default ``main``) unpacked into a temporary folder and put first on the worker's ``sys.path``;
``--ref-rev`` runs a third checkout beside them the same way (say the speed baseline is an older
revision and the reference for accuracy is today's ``main``).
Reported per corpus: median and mean wall seconds and process CPU seconds per document, the
new/old ratio of each, prompt and reply tokens, how often the two paths report the same value,
and each path's field accuracy against the gold labels (``confidence.datasets.matching``).
On a shared machine wall time swings with the load; CPU time is the steadier measure.
A checkout whose ``LocalLlamaClient`` keeps prompt prefixes on disk
(:mod:`confidence.llm.prefix_cache`) reads them from ``$EXTRACTCONF_CACHE/llm-prefix``: its first
document per schema evaluates only what no earlier process stored; point ``EXTRACTCONF_CACHE``
at a folder without ``llm-prefix`` to time the cold first document.

    extractconf synth /tmp/speed/inv --seed 11 --n 5 --scan-ratio 0.35
    extractconf synth /tmp/speed/rec --seed 11 --n 5 --kind receipt --scan-ratio 0.7
    .venv/bin/python benchmarks/bench_calls_speed.py /tmp/speed/inv /tmp/speed/rec --n 5 \\
        --old-rev 3abb5ff --ref-rev main --json benchmarks/results/calls_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
HERE = Path(__file__).resolve().parent


def worker() -> None:
    """Read one request per stdin line, extract the document, print one JSON result line."""
    import confidence
    from confidence.calls.extract import extract_document
    from confidence.documents.cache import DocumentCache
    from confidence.llm import LocalLlamaClient
    from confidence.schema import Schema

    client = LocalLlamaClient(n_threads=1)
    client.chat([{"role": "user", "content": "hi"}], max_tokens=2)  # load the model
    try:  # load the candidate ranker's model too (a revision before it has none)
        from confidence.calls.ranker import default_ranker

        default_ranker()
    except ImportError:
        pass
    cache = DocumentCache()
    print(json.dumps({"ready": str(Path(confidence.__file__).parent)}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        schema = Schema.from_dict(json.loads(Path(req["schema"]).read_text(encoding="utf-8")))
        doc = cache.load(req["path"], doc_id=req["doc_id"])
        wall, cpu = time.perf_counter(), time.process_time()
        rec = extract_document(doc, schema, client)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        usage: dict[str, int] = {}
        out = {"wall": wall, "cpu": cpu, "usage": usage, "status": rec.status}
        seen: set[int] = set()  # a Mapper may list the Hunter's completion as its source
        for kind in ("hunter", "mapper"):
            call = getattr(rec, kind)
            out[kind] = {} if call is None else {k: r.value for k, r in call.fields.items()}
            for comp in () if call is None else call.completions:
                if id(comp) in seen:
                    continue
                seen.add(id(comp))
                for k, v in comp.usage.items():
                    usage[k] = usage.get(k, 0) + int(v)
        print(json.dumps(out), flush=True)


class Worker:
    def __init__(self, src: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(src), OMP_THREAD_LIMIT="1")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),  # so the current folder's package is not imported
        )
        self.package = json.loads(self.proc.stdout.readline())["ready"]

    def run(self, req: dict) -> dict:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def _old_source(rev: str, into: Path) -> Path:
    repo = HERE.parent
    tar = subprocess.run(
        ["git", "-C", str(repo), "archive", rev, "confidence"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    return into


def _summary(name: str, rows: list[dict], fields: list, accuracy, paths: list[str]) -> dict:
    out = {"corpus": name, "n_docs": len(rows)}
    for path in paths:
        for m in ("wall", "cpu"):
            xs = [r[path][m] for r in rows]
            out[f"{path}_{m}_median"] = statistics.median(xs)
            out[f"{path}_{m}_mean"] = statistics.fmean(xs)
        for k in ("prompt_tokens", "prompt_evaluated", "completion_tokens", "forward_passes"):
            if all(k in r[path]["usage"] for r in rows):
                out[f"{path}_{k}"] = statistics.fmean(r[path]["usage"][k] for r in rows)
        out[f"{path}_hunter_accuracy"] = accuracy(rows, path, "hunter")
        out[f"{path}_mapper_accuracy"] = accuracy(rows, path, "mapper")
    for base in (p for p in paths if p != "new"):
        pre = "" if base == "old" else f"{base}_"
        for m in ("wall", "cpu"):
            out[f"{pre}ratio_{m}_mean"] = out[f"new_{m}_mean"] / out[f"{base}_{m}_mean"]
        for kind in ("hunter", "mapper"):
            same = n = 0
            for r in rows:
                for f in fields:
                    a, b = r[base][kind].get(f.name), r["new"][kind].get(f.name)
                    if a is None and b is None and f.name not in r[base][kind]:
                        continue
                    n += 1
                    same += a == b
            out[f"{pre}{kind}_agreement"] = same / n if n else float("nan")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("datasets", nargs="*", help="labelled dataset folders (extractconf synth)")
    ap.add_argument("--n", type=int, default=5, help="documents per dataset")
    ap.add_argument("--old-rev", default="main", help="git revision of the old code")
    ap.add_argument(
        "--ref-rev",
        default=None,
        help="another revision run beside them (reported as ref_*, ratios new/ref as ref_ratio_*)",
    )
    ap.add_argument("--json", default=None, help="write the per-document rows and summary here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker()
        return 0
    from confidence.datasets.folder import Dataset
    from confidence.datasets.matching import is_correct
    from confidence.documents.cache import DocumentCache

    cache = DocumentCache()
    revs = {"old": args.old_rev} | ({"ref": args.ref_rev} if args.ref_rev else {})
    workers = {}
    for label, rev in revs.items():
        src = _old_source(rev, Path(tempfile.mkdtemp(prefix=f"bench_calls_{label}_")))
        workers[label] = Worker(src)
        print(f"{label} code: {workers[label].package} ({rev})", flush=True)
    workers["new"] = Worker(HERE.parent)
    print(f"new code: {workers['new'].package}", flush=True)
    paths = list(workers)
    report = {"summary": [], "rows": []}
    for ds_path in args.datasets:
        ds = Dataset.open(ds_path)
        rows = []
        for i, rec in enumerate(ds.records[: args.n]):
            path = str(ds.path_of(rec))
            cache.load(path, doc_id=rec.doc_id)  # OCR once, outside the timing
            req = {"path": path, "doc_id": rec.doc_id, "schema": str(Path(ds_path) / "schema.json")}
            order = list(workers.items())
            row = {"doc_id": rec.doc_id, "gold": rec.fields}
            for label, w in order if i % 2 == 0 else order[::-1]:  # alternate who goes first
                row[label] = w.run(req)
            rows.append(row)
            print(
                f"{rec.doc_id}: "
                + " | ".join(
                    f"{p} {row[p]['wall']:6.1f}s wall {row[p]['cpu']:6.1f}s cpu" for p in paths
                ),
                flush=True,
            )

        def accuracy(rows, path, kind, ds=ds):
            hits = n = 0
            for r in rows:
                for f in ds.schema:
                    if f.name in r["gold"]:
                        n += 1
                        hits += is_correct(f.type, r[path][kind].get(f.name), r["gold"][f.name])
            return hits / n if n else float("nan")

        s = _summary(Path(ds_path).name, rows, list(ds.schema), accuracy, paths)
        report["summary"].append(s)
        report["rows"].extend(rows)
        print(json.dumps(s, indent=1), flush=True)
    for w in workers.values():
        w.close()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
