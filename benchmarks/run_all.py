"""Run every benchmark (``make bench``): each ``benchmarks/bench_*.py`` in turn, in its own process.

Each benchmark prints its own table and writes its JSON into ``benchmarks/results/``; this script
only runs them and sums up which finished. Pass names to run a subset::

    python benchmarks/run_all.py            # all
    python benchmarks/run_all.py engine     # bench_engine.py only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    known = [s.stem.removeprefix("bench_") for s in scripts]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default all): {' '.join(known)}")
    names = ap.parse_args(argv).names
    unknown = sorted(set(names) - set(known))
    if unknown:
        ap.error(f"no such benchmark: {', '.join(unknown)} (there are: {', '.join(known)})")
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    env = dict(os.environ, OMP_THREAD_LIMIT=os.environ.get("OMP_THREAD_LIMIT", "1"))
    status = []
    for s in scripts:
        print(f"\n######## {s.name}", flush=True)
        t = time.perf_counter()
        rc = subprocess.call([sys.executable, str(s)], env=env)
        status.append((s.name, rc, time.perf_counter() - t))
    print("\n######## summary")
    for name, rc, secs in status:
        print(f"{name:28} {'ok' if rc == 0 else f'exit {rc}':8} {secs:7.0f} s")
    return int(any(rc for _, rc, _ in status))


if __name__ == "__main__":
    sys.exit(main())
