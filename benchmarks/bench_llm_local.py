"""LocalLlamaClient speed: top-k logprob capture vs none, for a Hunter-sized call.

A ~300-token prompt and 60 generated tokens (free text with a fixed length), greedy, after a
warm-up call. Reports wall time and process CPU time: on a shared machine wall time swings with
the load, CPU time does not, so the capture overhead is read from CPU time.

Run: ``.venv/bin/python benchmarks/bench_llm_local.py``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from confidence.documents.patterns import AMOUNT_PATTERN
from confidence.llm import LocalLlamaClient
from confidence.llm.token_capture import TopKCapture

LINES = [
    "ACME Supplies Ltd, 12 Harbour Road, Bristol BS1 4XX, United Kingdom",
    "Invoice No. INV-2024-0042    Date: 12 March 2024    Due: 11 April 2024",
    "Bill to: Northwind Traders, 400 Market Street, Springfield",
    "Item                         Qty   Unit price   Amount",
    "Printer paper A4 (box)         4        23.50    94.00",
    "Toner cartridge black          2        61.25   122.50",
    "Delivery                       1        15.00    15.00",
    "Subtotal 231.50   VAT 20% 46.30   Total due 277.80 GBP",
    "Payment by bank transfer to IBAN GB33 BUKB 2020 1555 5555 55 within 30 days.",
]
MSGS = [
    {"role": "system", "content": "You read invoices and describe them in plain words."},
    {"role": "user", "content": "Document:\n" + "\n".join(LINES + LINES[3:8]) + "\nDescribe it."},
]
SCHEMA = {
    "type": "object",
    "properties": {
        "invoice_number": {"type": ["string", "null"], "maxLength": 32},
        "total": {"type": ["string", "null"], "pattern": AMOUNT_PATTERN},
    },
    "required": ["invoice_number", "total"],
}


def call(client, msgs, evict: bool, **kw):
    if evict:  # another prompt first, so this call pays for its whole prompt
        client.chat([{"role": "user", "content": "x"}], max_tokens=1, logprobs=False)
    wall, cpu = time.perf_counter(), time.process_time()
    [c] = client.chat(msgs, max_tokens=60, **kw)
    return time.perf_counter() - wall, time.process_time() - cpu, c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="calls per mode (default 3)")
    reps = ap.parse_args(argv).reps
    client = LocalLlamaClient(n_ctx=2048)
    call(client, MSGS, False)  # load + warm up
    n_prompt = len(client.tokenize(client.format_prompt(MSGS)))
    print(f"prompt {n_prompt} tokens, up to 60 generated, greedy, median of {reps}")
    modes = {"no capture": {"logprobs": False}, "top-5     ": {"top_logprobs": 5}}
    full: dict[str, list] = {m: [] for m in modes}
    cached: dict[str, list] = {m: [] for m in modes}
    for _ in range(reps):  # interleave the modes so both see the same machine load
        for label, kw in modes.items():
            full[label].append(call(client, MSGS, True, **kw))
            cached[label].append(call(client, MSGS, False, **kw))
    for label in modes:
        n = full[label][0][2].usage["completion_tokens"]
        fw, fc = (statistics.median(r[i] for r in full[label]) for i in (0, 1))
        cw, cc = (statistics.median(r[i] for r in cached[label]) for i in (0, 1))
        print(
            f"{label}: full call wall {fw:5.2f}s cpu {fc:5.2f}s | decode only (prompt cached) "
            f"wall {cw:5.2f}s cpu {cc:5.2f}s = {n / cw:5.1f} tok/s wall ({n} tokens)"
        )
    cap, row = TopKCapture(5), np.random.default_rng(0).normal(size=49152).astype(np.float32)
    t0 = time.process_time()
    for _ in range(200):
        cap(None, row)
    print(f"capture alone: {(time.process_time() - t0) / 200 * 1000:.2f} ms CPU per token")
    ext = [MSGS[0] | {"content": "Extract the fields as JSON."}, MSGS[1]]
    w, c, comp = call(client, ext, True, schema=SCHEMA)
    print(f"schema call (first, builds grammar): wall {w:.2f}s cpu {c:.2f}s -> {comp.text}")
    w, c, comp = call(client, ext, True, schema=SCHEMA)
    print(f"schema call (again): wall {w:.2f}s cpu {c:.2f}s, {comp.usage}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
