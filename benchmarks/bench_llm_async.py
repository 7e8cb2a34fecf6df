"""Throughput of OpenAIClient.chat_many against a fixed-latency local endpoint.

40 requests, each answered after 0.2 s, at concurrency 8: the ideal wall time is
40 / 8 * 0.2 = 1.0 s. Prints the measured time and efficiency (ideal / measured); goal >= 90%.
The fake endpoint runs in its own process so the server's Python work does not share the
client's GIL (as with any real server).

Run: ``.venv/bin/python benchmarks/bench_llm_async.py``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from confidence.llm import OpenAIClient

N, CONCURRENCY, LATENCY, REPEATS = 40, 8, 0.2, 5
SERVER = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "llm_servers.py"


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--delay", str(LATENCY)], stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = proc.stdout.readline().strip()
        if not base_url:
            raise SystemExit(f"the fake endpoint {SERVER} did not start (exit {proc.wait(10)})")
        msgs = [{"role": "user", "content": "Invoice total 12.50"}]
        with OpenAIClient("fake", base_url=base_url, concurrency=CONCURRENCY) as client:
            client.chat_many([{"messages": msgs}] * CONCURRENCY)  # open the connections
            times = []
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                out = client.chat_many([{"messages": msgs}] * N)
                times.append(time.perf_counter() - t0)
                assert len(out) == N
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ideal = N / CONCURRENCY * LATENCY
    med = statistics.median(times)
    print(f"{N} requests x {LATENCY}s at concurrency {CONCURRENCY}: ideal {ideal:.2f}s")
    print(f"measured median {med:.3f}s (min {min(times):.3f}s) -> efficiency {ideal / med:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
