"""Benchmark the Hunter and Mapper calls on a labelled dataset folder.

Reports, per field and overall: Hunter parse rate, Hunter field accuracy (and the accuracy of the
grounded candidate prior alone, i.e. the best-ranked candidate), Mapper precision and recall on
present fields, LLM calls, tokens and seconds per document.

    .venv/bin/python benchmarks/bench_extract.py ../shared/data/sroie-dev --n 30 --llm local
    .venv/bin/extractconf synth /tmp/synth30 --n 30 --seed 7
    .venv/bin/python benchmarks/bench_extract.py /tmp/synth30 --n 30 --llm local
    .venv/bin/python benchmarks/bench_extract.py /tmp/synth30 --llm none   # layout only, no LLM

``--runs FILE`` keeps each document's RunRecord (resumable), so a re-run only scores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter

os.environ.setdefault("OMP_THREAD_LIMIT", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("dataset")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--llm", default="local", help="local | none | any make_client spec")
    ap.add_argument("--hunter-mode", default="grounded", choices=("grounded", "free"))
    ap.add_argument("--max-candidates", type=int, default=4)
    ap.add_argument("--runs", default=None, help="runs.jsonl to keep/reuse the records")
    ap.add_argument("--json", default=None, help="write the summary here too")
    args = ap.parse_args(argv)

    from confidence.calls.candidates import document_candidates
    from confidence.calls.extract import RunsFile, extract_document
    from confidence.calls.mapper import run_mapper
    from confidence.datasets.folder import Dataset
    from confidence.datasets.matching import is_correct
    from confidence.documents.cache import DocumentCache
    from confidence.documents.lines import document_lines
    from confidence.readings import RunRecord

    ds = Dataset.open(args.dataset)
    schema = ds.schema
    recs = ds.records[: args.n]
    cache = DocumentCache()
    client = None
    if args.llm != "none":
        from confidence.llm import make_client

        client = make_client(args.llm)
    done: dict[str, RunRecord] = {}
    if args.runs and os.path.exists(args.runs):
        for line in open(args.runs, encoding="utf-8"):
            try:
                r = RunRecord.from_dict(json.loads(line))
                done[r.doc_id] = r
            except (ValueError, KeyError):
                pass
    writer = RunsFile(args.runs) if args.runs else None
    c = {k: Counter() for k in ("n", "present", "hunter", "prior", "m_rep", "m_tp")}
    docs = parsed = calls = tokens = 0
    secs = 0.0
    for rec in recs:
        doc = cache.load(ds.path_of(rec), doc_id=rec.doc_id)
        lines = document_lines(doc)
        prior = document_candidates(lines, schema, max_candidates=1)
        if client is None:
            t0 = time.perf_counter()
            run = RunRecord(rec.doc_id, None, run_mapper(schema, lines, None), seconds=0.0)
            run = RunRecord(rec.doc_id, None, run.mapper, seconds=time.perf_counter() - t0)
        elif rec.doc_id in done:
            run = done[rec.doc_id]
        else:
            run = extract_document(
                doc,
                schema,
                client,
                hunter_mode=args.hunter_mode,
                max_candidates=args.max_candidates,
            )
            if writer is not None:
                writer.append(run)
        docs += 1
        secs += run.seconds
        calls += run.llm_calls
        tokens += sum(run.meta.get("usage", {}).values())
        parsed += run.hunter is not None and run.hunter.status == "ok"
        for f in schema:
            if not rec.is_labelled(f.name):
                continue
            gold = rec.fields[f.name]
            c["n"][f.name] += 1
            c["present"][f.name] += gold is not None
            pv = prior[f.name][0].value if prior[f.name] else None
            c["prior"][f.name] += is_correct(f.type, pv, gold)
            if run.hunter is not None:
                h = run.hunter.fields.get(f.name)
                c["hunter"][f.name] += is_correct(f.type, h.value if h else None, gold)
            m = run.mapper.fields.get(f.name) if run.mapper is not None else None
            if m is not None and m.value is not None:
                c["m_rep"][f.name] += 1
                c["m_tp"][f.name] += is_correct(f.type, m.value, gold)
    if writer is not None:
        writer.close()

    def rate(a, b):
        return a / b if b else float("nan")

    rows = {}
    print(f"{'field':28s} {'n':>4s} {'prior':>6s} {'hunter':>6s} {'m_prec':>6s} {'m_rec':>6s}")
    for f in schema:
        n = c["n"][f.name]
        if not n:
            continue
        row = {
            "n": n,
            "prior_acc": rate(c["prior"][f.name], n),
            "hunter_acc": rate(c["hunter"][f.name], n) if client else None,
            "mapper_precision": rate(c["m_tp"][f.name], c["m_rep"][f.name]),
            "mapper_recall": rate(c["m_tp"][f.name], c["present"][f.name]),
        }
        rows[f.name] = row
        print(
            f"{f.name:28s} {n:4d} {row['prior_acc']:6.2f} "
            f"{(row['hunter_acc'] if client else float('nan')):6.2f} "
            f"{row['mapper_precision']:6.2f} {row['mapper_recall']:6.2f}"
        )
    tot = sum(c["n"].values())
    summary = {
        "dataset": args.dataset,
        "docs": docs,
        "llm": args.llm,
        "hunter_mode": args.hunter_mode,
        "hunter_parse_rate": rate(parsed, docs) if client else None,
        "prior_acc": rate(sum(c["prior"].values()), tot),
        "hunter_acc": rate(sum(c["hunter"].values()), tot) if client else None,
        "mapper_precision": rate(sum(c["m_tp"].values()), sum(c["m_rep"].values())),
        "mapper_recall_present": rate(sum(c["m_tp"].values()), sum(c["present"].values())),
        "calls_per_doc": rate(calls, docs),
        "tokens_per_doc": rate(tokens, docs),
        "seconds_per_doc": rate(secs, docs),
        "fields": rows,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "fields"}, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
