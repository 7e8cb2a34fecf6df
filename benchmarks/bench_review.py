"""The review app's own speed and memory (a reviewer's throughput is a person's, not measured).

Usage::

    python benchmarks/bench_review.py [--documents DIR] [--cache-dir DIR] [--sizes 1000 10000]
        [--requests 100] [--think 0 1] [--out benchmarks/results/review.json]

``DIR`` is a folder of documents (a dataset folder works); without it 40 synthetic invoices
are made (``confidence.datasets.synthetic.generate``, as ``extractconf synth --seed 11 --n 40
--scan-ratio 0.35``) in a temporary folder.
For each queue size a scored file of that many review fields is written: fields spread evenly
over the documents, each value a word of its document (so the app finds and draws its box),
confidences uniform at random (seed 0), so in confidence order consecutive fields come from
random documents and almost every page picture is a cold render. Then the app runs as a real
server process (uvicorn; built with the library as ``extractconf review`` builds it) and a
client, for ``--requests`` fields: ``GET /`` (the field page: queue pick, lease, document from
the OCR cache, value and Mapper boxes, HTML), ``GET /page`` (the page picture: render + JPEG),
``POST /decide`` (append + fsync). "Page render" is the first two in sequence, what a reviewer
waits for. ``--think`` is the reviewer's time on a field before deciding: with 0 every picture
is rendered while the client waits (the worst case); with a second or more (a person reads the
page) the app has usually rendered the next document's page in the background already. The
server's resident memory (VmRSS, and its peak VmHWM) is read from ``/proc`` after the requests;
memory "flat in queue size" means the 10k-field queue costs about what the 1k one does.

Goal: page render p95 <= 200 ms on this machine.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _words_by_doc(folder, cache_dir: Path, limit: int) -> dict[str, list[str]]:
    from confidence.documents.cache import DocumentCache
    from confidence.review.pages import DocumentFolder

    f = DocumentFolder(folder, cache=DocumentCache(cache_dir))
    out = {}
    for doc_id in sorted(f.files)[:limit]:
        doc = f.document(doc_id)
        if doc is None:
            continue
        words = [w.text for p in doc.pages for w in p.words if len(w.text) >= 3]
        if words:
            out[doc_id] = words
    return out


def _scored(path: Path, words: dict[str, list[str]], n: int) -> None:
    rng = random.Random(0)
    docs = list(words)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            doc = docs[i % len(docs)]
            value, mapper = rng.choice(words[doc]), rng.choice(words[doc])
            fh.write(json.dumps({
                "doc_id": doc, "field": f"field_{i // len(docs):04d}", "field_type": "text",
                "value": value, "hunter_value": value, "mapper_value": mapper,
                "confidence": rng.random(), "decision": "review", "threshold": 0.9,
                "reasons": ["Hunter and Mapper disagree", "low token probability"],
                "status": "ok",
            }) + "\n")  # fmt: skip


def _rss(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            out[k] = int(v.split()[0]) / 1024
    return out


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(xs) -> dict[str, float]:
    a = np.asarray(xs) * 1000
    return {"p50_ms": float(np.percentile(a, 50)), "p95_ms": float(np.percentile(a, 95)),
            "max_ms": float(a.max())}  # fmt: skip


def run_size(folder, cache_dir, words, n: int, requests: int, think: float, work: Path) -> dict:
    scored, log = work / f"scored_{n}.jsonl", work / f"review_{n}_{think}.jsonl"
    _scored(scored, words, n)
    port = _free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(scored), str(folder), str(log),
         str(cache_dir), str(port)],
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/"
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    try:
        while True:
            try:
                opener.open(base + "static/review.css", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - t0 > 120:
                    raise RuntimeError("the review server did not start") from None
                time.sleep(0.05)
        startup = time.perf_counter() - t0
        rss_start = _rss(proc.pid)
        field, picture, render, decide = [], [], [], []
        for _ in range(requests):
            t = time.perf_counter()
            html = opener.open(base, timeout=30).read().decode()
            t1 = time.perf_counter()
            src = html.split('id="page-img" src="')[1].split('"')[0].replace("&amp;", "&")
            pic = opener.open(base.rstrip("/") + src, timeout=30).read()
            t2 = time.perf_counter()
            assert pic[:3] == b"\xff\xd8\xff" and "value-box" in html
            lease = html.split('data-lease="')[1].split('"')[0]
            time.sleep(think)  # the reviewer reads the page
            t_read = time.perf_counter()
            body = json.dumps({"lease": lease, "action": "accept"}).encode()
            head = {"Content-Type": "application/json"}
            req = urllib.request.Request(base + "decide", body, head, method="POST")
            opener.open(req, timeout=30).read()
            t3 = time.perf_counter()
            field.append(t1 - t)
            picture.append(t2 - t1)
            render.append(t2 - t)
            decide.append(t3 - t_read)
        rss_end = _rss(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    logged = len(log.read_text().splitlines())
    assert logged == requests, (logged, requests)
    return {
        "queue_fields": n,
        "think_s": think,
        "requests": requests,
        "startup_s": round(startup, 2),
        "field_page": _pct(field),
        "page_picture": _pct(picture),
        "page_render": _pct(render),
        "decide": _pct(decide),
        "rss_mb_after_start": round(rss_start["VmRSS"], 1),
        "rss_mb_after_requests": round(rss_end["VmRSS"], 1),
        "peak_rss_mb": round(rss_end["VmHWM"], 1),
    }


def serve(scored: str, folder: str, log: str, cache_dir: str, port: str) -> None:
    """The server process: what ``extractconf review SCORED --documents FOLDER`` runs."""
    import gc

    from confidence.documents.cache import DocumentCache
    from confidence.monitoring import read_rows
    from confidence.review.app import serve as run_app
    from confidence.review.pages import DocumentFolder
    from confidence.review.queue import ReviewQueue, order_items, queue_items

    items = order_items(queue_items(read_rows(scored)), "confidence")
    gc.collect()
    queue = ReviewQueue(items, log)
    docs = DocumentFolder(folder, cache=DocumentCache(cache_dir))
    run_app({"queue": queue, "folder": docs}, host="127.0.0.1", port=int(port), token=None)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        serve(*argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--documents", default=None)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--think", type=float, nargs="+", default=[0.0, 1.0])
    ap.add_argument("--max-docs", type=int, default=600)
    ap.add_argument(
        "--n-docs", type=int, default=40, help="synthetic documents without --documents"
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "review.json"))
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_review_"))
    load_before = round(os.getloadavg()[0], 1)
    try:
        folder = Path(args.documents) if args.documents else work / "docs"
        if not args.documents:
            from confidence.datasets.synthetic import generate

            generate(folder, args.n_docs, seed=11, scan_ratio=0.35)
        cache = Path(args.cache_dir) if args.cache_dir else work / "cache"
        words = _words_by_doc(folder, cache, args.max_docs)
        results = [
            run_size(folder, cache, words, n, args.requests, t, work)
            for t in args.think
            for n in args.sizes
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    by_size = [r for r in results if r["think_s"] == args.think[0]]
    small, large = by_size[0], by_size[-1]
    out = {
        "what": (
            f"the review app as a server process (uvicorn); {len(words)} documents "
            f"({args.documents or f'synth --seed 11 --n {args.n_docs} --scan-ratio 0.35'}); "
            "review fields "
            "with values drawn from the documents' words, random confidences; per queue size "
            f"{args.requests} fields served in confidence order, each GET / + GET /page + "
            "POST /decide from one client, think_s seconds between reading and deciding"
        ),
        "machine": f"{os.cpu_count()} cores (shared), python {sys.version.split()[0]}",
        "load_average_1min_before_after": [load_before, round(os.getloadavg()[0], 1)],
        "goal": "page_render p95 <= 200 ms; memory flat in queue size",
        "results": results,
        "page_render_p95_ms": {
            f"{r['queue_fields']} fields, think {r['think_s']:g} s": round(
                r["page_render"]["p95_ms"], 1
            )
            for r in results
        },
        "rss_ratio_largest_vs_smallest": round(
            large["rss_mb_after_requests"] / small["rss_mb_after_requests"], 3
        ),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    for r in results:
        rp = r["page_render"]
        print(
            f"{r['queue_fields']:>6} fields, think {r['think_s']:g} s: page render p50 "
            f"{rp['p50_ms']:.0f} ms p95 {rp['p95_ms']:.0f} ms; decide p95 "
            f"{r['decide']['p95_ms']:.0f} ms; RSS {r['rss_mb_after_requests']:.0f} MB "
            f"(peak {r['peak_rss_mb']:.0f}); startup {r['startup_s']:.1f} s"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
