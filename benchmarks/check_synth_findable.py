"""Are synthetic gold values really on the page? Fraction found verbatim in the loaded text.

Generates (or reads) a synthetic dataset, loads every digital PDF with
``confidence.documents.load_document`` and reports, per field, the fraction of present gold
values that occur in the document text. Comparison collapses whitespace (pdf words are re-joined
by spaces, and address lines by newlines, so ``", "`` joins are compared with the comma removed).
Fields printed non-saliently (footer, sideways, tiny, grey) are counted separately.

Usage::

    python benchmarks/check_synth_findable.py [DATASET_DIR] [--n 120] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path


def _norm(text: str) -> str:
    # Gold excludes currency signs ("-£1.50" is printed, "-1.50" is gold) and joins lines by ", ".
    return re.sub(r"\s+", " ", re.sub(r"[$£€]", "", text).replace(",", " ")).strip()


def _geometric_text(doc) -> str:
    """Words re-ordered top-to-bottom, left-to-right by their boxes (ignores the loader's
    block/line grouping), to tell reading-order effects from values missing on the page."""
    out = []
    for page in doc.pages:
        words = sorted(page.words, key=lambda w: (round((w.bbox[1] + w.bbox[3]) * 150), w.bbox[0]))
        out.append(" ".join(w.text for w in words))
    return " ".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", nargs="?", help="existing synthetic dataset folder")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from confidence.datasets.synthetic import SCHEMA, generate
    from confidence.documents import load_document

    tmp = None
    root = Path(args.dataset) if args.dataset else None
    if root is None:
        tmp = tempfile.TemporaryDirectory()
        root = Path(tmp.name)
        generate(root, args.n, seed=args.seed, n_jobs=2)
    found, total = defaultdict(int), defaultdict(int)
    ns_found, ns_total, geo_found = defaultdict(int), defaultdict(int), defaultdict(int)
    misses: list[str] = []
    for line in (root / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["meta"]["source"] != "digital":
            continue
        doc = load_document(root / rec["file"], doc_id=rec["doc_id"])
        text, geo = _norm(doc.text), _norm(_geometric_text(doc))
        for name, value in rec["fields"].items():
            if value is None:
                continue
            hit = _norm(value) in text
            if name in rec["meta"]["non_salient"]:
                ns_total[name] += 1
                ns_found[name] += hit
                continue
            total[name] += 1
            found[name] += hit
            geo_found[name] += hit or _norm(value) in geo
            if not hit and len(misses) < 15:
                misses.append(f"{rec['doc_id']} {rec['meta']['layout_family']} {name}={value!r}")
    print(f"{'field':26s} {'text':>6s} {'either':>7s} {'n':>5s}   non-salient found/n")
    for name in SCHEMA.names:
        n = max(1, total[name])
        print(
            f"{name:26s} {found[name] / n:6.3f} {geo_found[name] / n:7.3f} {total[name]:5d}   "
            f"{ns_found[name]}/{ns_total[name]}"
        )
    n_all = max(1, sum(total.values()))
    overall = sum(found.values()) / n_all
    print(f"{'ALL (salient)':26s} {overall:6.3f} {sum(geo_found.values()) / n_all:7.3f} {n_all:5d}")
    print("text = in document.text; either = in document.text or in the geometric word order")
    for m in misses:
        print("miss:", m)
    if tmp is not None:
        tmp.cleanup()
    return 0 if overall >= 0.98 else 1


if __name__ == "__main__":
    sys.exit(main())
