"""Synthetic generator benchmark: speed (digital and scans) and dataset statistics.

Usage::

    python benchmarks/bench_synth.py [--n 200] [--scans 20] [--seed 0] [--out DIR]

Prints docs/s on one process for digital PDFs and for scans, then over the ``--n`` digital set:
per-field absence rate, layout-family counts, page counts, non-salient and distractor counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--scans", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="keep the digital dataset here")
    args = ap.parse_args(argv)

    from confidence.datasets.synthetic import SCHEMA, generate

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or Path(tmp) / "digital")
        t = time.perf_counter()
        generate(out, args.n, seed=args.seed, overwrite=True)
        digital = args.n / (time.perf_counter() - t)
        t = time.perf_counter()
        generate(Path(tmp) / "scans", args.scans, seed=args.seed, scan_ratio=1.0)
        scans = args.scans / (time.perf_counter() - t)
        recs = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]

    print(f"speed, 1 process: digital {digital:.1f} docs/s, scans {scans:.2f} docs/s")
    print(f"\nabsence rate per field over {len(recs)} docs:")
    for name in SCHEMA.names:
        rate = sum(r["fields"][name] is None for r in recs) / len(recs)
        print(f"  {name:26s} {rate:.3f}")
    fams = Counter(r["meta"]["layout_family"] for r in recs)
    print("\nlayout families:", dict(sorted(fams.items())))
    print("languages:", dict(Counter(r["meta"]["language"] for r in recs)))
    print("pages:", dict(Counter(r["meta"]["n_pages"] for r in recs)))
    print("fonts:", dict(Counter(r["meta"]["font"] for r in recs)))
    ns = Counter(m for r in recs for m in r["meta"]["non_salient"].values())
    print("non-salient field placements:", dict(ns))
    print("distractors:", dict(Counter(d for r in recs for d in r["meta"]["distractors"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
