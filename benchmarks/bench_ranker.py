"""Field accuracy of the candidate ranker's reading against today's layout readings.

For every document and schema field (absent fields included; a value for an absent field and
no value for a present one are both wrong, :func:`confidence.datasets.matching.is_correct`):

* ``ranker``: the shipped :class:`~confidence.calls.ranker.CandidateRanker`'s reading (amounts
  and dates chosen jointly, the Mapper's value); ``ranker_independent``: each field's top-1,
* ``mapper_layout``: the Mapper's layout reading without an LLM (before the ranker),
* ``top_prior``: the best prior candidate
  (:func:`~confidence.calls.candidates.document_candidates`),
* ``hunter_recorded``: the embedded SmolLM2 Hunter's value from the committed runs
  (``scripts/default_*runs.jsonl.xz``; held-out synthetic documents only),
* ``ranker_top4_recall`` / ``pool_recall``: the right value among the ranker's first 4 (what the
  Hunter is offered) / among all its candidates, on fields present on the page.

``--required`` measures the ``--real`` sets once more with every field of their schema marked
``required`` (:class:`confidence.schema.Field`), as ``dev_NAME_required``: what a user gets who
tells the library that the documents always carry the fields.

Held-out synthetic documents are the 200 + 200 that ``scripts/train_default.py`` holds out
(:func:`train_ranker.heldout_split`); the ranker never trained on them. Real corpora are
measured only (dev-set numbers)::

    OMP_THREAD_LIMIT=1 .venv/bin/python benchmarks/bench_ranker.py \\
        --invoices /tmp/g_bench/inv600 --receipts /tmp/g_bench/rec1200 --cache /tmp/g_bench/cache \\
        --real ../shared/data/sroie-dev ../shared/data/invoices-generated --real-cache /tmp/rk_cache
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

METHODS = ("ranker", "mapper_layout", "top_prior", "hunter_recorded")
RUNS = {  # the committed embedded-LLM runs of the seed-7 corpora (scripts/train_default.py)
    "invoices": ROOT / "scripts" / "default_runs.jsonl.xz",
    "receipts": ROOT / "scripts" / "default_receipt_runs.jsonl.xz",
}


def _recorded_hunter(which: str) -> dict[str, dict[str, str | None]]:
    from confidence.records import read_runs

    out = {}
    for rec in read_runs(RUNS[which]):
        if rec.hunter is not None:
            out[rec.doc_id] = {k: r.value for k, r in rec.hunter.fields.items()}
    return out


def measure(ds, cache, ranker, hunter=None, limit=None, cached_only=False) -> dict:
    """Accuracy of every method over ``ds`` (see module docstring), overall and per field."""
    from confidence.calls.candidates import document_candidates
    from confidence.calls.mapper import run_mapper
    from confidence.datasets.matching import is_correct
    from confidence.documents.lines import document_lines
    from confidence.errors import DocumentError

    hits: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    t0, n_docs, t_rank = time.time(), 0, 0.0
    for rec in ds.records:
        if limit is not None and n_docs >= limit:
            break
        caches = cache if isinstance(cache, list) else [cache]
        try:  # any cache that holds the document, else OCR into the first
            doc = next((d for c in caches if (d := c.get(ds.path_of(rec), rec.doc_id))), None)
            if doc is None and cached_only:
                continue
            lines = document_lines(doc or caches[0].load(ds.path_of(rec), rec.doc_id))
        except DocumentError as e:
            print(f"skip {rec.doc_id}: {e}", file=sys.stderr)
            continue
        n_docs += 1
        t = time.time()
        ranked = ranker.rank(lines, ds.schema)
        joint = ranker.read(lines, ds.schema)
        t_rank += time.time() - t
        mapper = run_mapper(ds.schema, lines, reader="layout").fields
        prior = document_candidates(lines, ds.schema, max_candidates=1)
        for f in ds.schema:
            if f.name not in rec.fields:
                continue
            g = rec.fields[f.name]
            m = mapper.get(f.name)
            got = {
                "ranker": joint[f.name].value,
                "ranker_independent": ranked[f.name][0].value,
                "mapper_layout": m.value if m is not None else None,
                "top_prior": prior[f.name][0].value if prior[f.name] else None,
            }
            if hunter is not None and rec.doc_id in hunter:
                got["hunter_recorded"] = hunter[rec.doc_id].get(f.name)
            for k, v in got.items():
                ok = int(is_correct(f.type, v, g))
                hits[k]["all"].append(ok)
                hits[k][f.name].append(ok)
            if g is not None:
                vals = [c.value for c in ranked[f.name]]
                top4 = [v for v in vals if v is not None][:4]
                for k, pool in (("ranker_top4_recall", top4), ("pool_recall", vals)):
                    ok = int(any(is_correct(f.type, v, g) for v in pool if v is not None))
                    hits[k]["all"].append(ok)
                    hits[k][f.name].append(ok)
    out = {k: {f: round(sum(v) / len(v), 4) for f, v in per.items()} for k, per in hits.items()}
    out["n_docs"] = n_docs
    out["n_fields"] = len(hits["ranker"]["all"])
    out["seconds"] = round(time.time() - t0, 1)
    out["ranker_seconds_per_doc"] = round(t_rank / max(1, n_docs), 3)
    return out


def main(argv=None) -> int:
    from train_ranker import heldout_split

    from confidence.calls.ranker import CandidateRanker, default_ranker
    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.schema import Schema

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--invoices", type=Path, default=None)
    ap.add_argument("--receipts", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--real", type=Path, nargs="*", default=[], help="labelled folders (dev)")
    ap.add_argument("--real-cache", type=Path, nargs="*", default=[None], help="OCR cache(s)")
    ap.add_argument("--model", type=Path, default=None, help="ranker folder (default: shipped)")
    ap.add_argument("--limit", type=int, default=None, help="documents per set")
    ap.add_argument(
        "--cached-only", action="store_true", help="skip documents not in an OCR cache yet"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "ranker.json")
    ap.add_argument(
        "--sets",
        nargs="*",
        default=["invoices", "receipts"],
        help="held-out sets to measure (several processes may fill one --out)",
    )
    ap.add_argument(
        "--required",
        action="store_true",
        help="measure the --real sets a second time with every field marked required "
        "(`Field.required`: what a user gets who knows the documents always carry them), "
        "as dev_NAME_required",
    )
    args = ap.parse_args(argv)
    missing = [s for s in args.sets if getattr(args, s) is None]
    if missing:
        ap.error(
            f"--{' --'.join(missing)} needed: the seed-7 corpora of scripts/train_default.py "
            "(extractconf synth DIR --seed 7 --n 600 --scan-ratio 0.35; receipts: --n 1200 "
            "--kind receipt --scan-ratio 0.7), or --sets with only the ones you have"
        )
    ranker = CandidateRanker.load(args.model) if args.model else default_ranker()
    results = {}
    for which, folder in (("invoices", args.invoices), ("receipts", args.receipts)):
        if which not in args.sets:
            continue
        _, test = heldout_split(folder, which)
        cache = DocumentCache(args.cache)
        results[f"heldout_{which}"] = measure(
            test, cache, ranker, _recorded_hunter(which), args.limit
        )
        print(
            which,
            {k: v["all"] for k, v in results[f"heldout_{which}"].items() if isinstance(v, dict)},
        )
    for folder in args.real:
        ds = Dataset.open(folder)
        caches = [DocumentCache(c) for c in args.real_cache]
        r = measure(ds, caches, ranker, None, args.limit, args.cached_only)
        results[f"dev_{folder.name}"] = r
        print(folder.name, {k: v["all"] for k, v in r.items() if isinstance(v, dict)})
        if args.required:
            fields = tuple(dataclasses.replace(f, required=True) for f in ds.schema)
            req = Dataset(ds.path, Schema(ds.schema.name, fields), ds.records)
            r = measure(req, caches, ranker, None, args.limit, args.cached_only)
            results[f"dev_{folder.name}_required"] = r
            print(
                f"{folder.name} (required)",
                {k: v["all"] for k, v in r.items() if isinstance(v, dict)},
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    args.out.write_text(json.dumps({**old, **results}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
