#!/usr/bin/env python
"""Train the value-kinds model shipped in ``confidence/models/value_kinds`` (features ``kind_*``).

The model (:class:`confidence.documents.value_kinds.ValueKinds`) learns what names, payment terms,
addresses, ids and the other lines of a document look like, from synthetic documents whose truth
is known. It must not see the fusion model's training documents (the seed-7 corpora of
``scripts/train_default.py``): the fusion learns how far its probabilities hold on documents it
has not seen. So it trains on corpora of another seed::

    extractconf synth /tmp/vk/inv --seed 8 --n 400 --scan-ratio 0.35
    extractconf synth /tmp/vk/rec --seed 8 --n 600 --scan-ratio 0.7 --kind receipt \
        --header-variety 0.5
    python scripts/train_value_kinds.py /tmp/vk/inv /tmp/vk/rec --other-docs 120

Examples of each kind are the true values of the documents' ``text``, ``address`` and ``id``
fields (all documents); examples of ``other`` are lines of ``--other-docs`` documents per folder
(read through the document cache: OCR for the scans) that hold no field's value. A tenth of the
documents is held out to report the accuracy per kind, then the model is refit on all of them.
Names and addresses drawn from the Faker locales of ``NAME_LOCALES``
(``confidence.datasets.synthetic.locales``; ``--per-locale``) are always trained on: the
documents are printed in three languages, the names on real ones come from anywhere.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def examples(folder: Path, other_docs: int, per_doc: int, cache, seed: int = 0):
    """``[(doc_id, text, kind)]`` of one dataset folder."""
    from confidence.datasets.folder import Dataset
    from confidence.documents.lines import document_lines
    from confidence.documents.text import fold
    from confidence.documents.value_kinds import field_kind
    from confidence.errors import DocumentError

    ds = Dataset.open(folder)
    fields = {f.name: f for f in ds.schema.fields}
    recs = list(ds.records)
    random.Random(seed).shuffle(recs)
    out = []
    t0 = time.time()
    for k, rec in enumerate(recs):
        gold = [fold(str(v)) for v in rec.fields.values() if v not in (None, "")]
        for name, v in rec.fields.items():
            kind = field_kind(fields[name]) if name in fields else None
            if kind is not None and v not in (None, ""):
                out.append((rec.doc_id, str(v), kind))
        if k >= other_docs:
            continue
        try:
            doc = cache.load(ds.path_of(rec), rec.doc_id)
        except DocumentError as e:
            print(f"skip {rec.doc_id}: {e}", file=sys.stderr)
            continue
        lines = [ln.text for ln in document_lines(doc) if fold(ln.text)]
        random.Random(f"{seed}-{rec.doc_id}").shuffle(lines)
        n = 0
        for text in lines:
            key = fold(text)
            if any(g and (g in key or key in g) for g in gold):
                continue  # a line holding (part of) a field's value is not "other"
            out.append((rec.doc_id, text, "other"))
            n += 1
            if n >= per_doc:
                break
        if k % 50 == 0:
            print(f"  {folder.name}: {k} docs, {time.time() - t0:.0f}s", flush=True)
    return out


def locale_examples(per_locale: int, seed: int = 3):
    """``[(doc_id, text, kind)]``: company and person names and one-line addresses drawn from
    every Faker locale of ``datasets.synthetic.locales.NAME_LOCALES`` (``per_locale`` names of
    each sort and half as many addresses per locale; about half of them in capitals)."""
    import random

    from faker import Faker

    from confidence.datasets.synthetic.locales import NAME_LOCALES

    rng = random.Random(seed)
    names, addresses = [], []
    for loc in NAME_LOCALES:
        fake = Faker(loc)
        fake.seed_instance(7)
        for _ in range(per_locale):
            company = fake.company()
            names.append((f"faker-{loc}", company.upper() if rng.random() < 0.5 else company))
            person = fake.name()
            names.append((f"faker-{loc}", person.upper() if rng.random() < 0.3 else person))
    for loc in NAME_LOCALES:
        fake = Faker(loc)
        fake.seed_instance(8)
        for _ in range(per_locale // 2):
            a = ", ".join(ln for ln in fake.address().split("\n") if ln.strip())
            addresses.append((f"faker-{loc}", a.upper() if rng.random() < 0.5 else a))
    return [(d, t, "name") for d, t in names] + [(d, t, "address") for d, t in addresses]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="synthetic dataset folders (seed 8)")
    ap.add_argument("--cache", type=Path, default=None, help="document cache folder")
    ap.add_argument("--other-docs", type=int, default=200, help="documents per folder read for")
    ap.add_argument("--per-doc", type=int, default=15, help="'other' lines per document")
    ap.add_argument("--C", type=float, default=4.0, help="inverse L2 regularisation")
    ap.add_argument(
        "--per-locale",
        type=int,
        default=60,
        help="company and person names per locale of NAME_LOCALES (0: none), always trained on",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "confidence" / "models" / "value_kinds")
    args = ap.parse_args(argv)

    from confidence.datasets.synthetic.locales import NAME_LOCALES
    from confidence.documents.cache import DocumentCache
    from confidence.documents.value_kinds import ValueKinds
    from confidence.persistence import attach

    cache = DocumentCache(args.cache)
    data = [x for f in args.folders for x in examples(f, args.other_docs, args.per_doc, cache)]
    docs = sorted({d for d, _, _ in data})  # the held-out tenth is drawn from documents only
    data += locale_examples(args.per_locale) if args.per_locale else []
    held = set(random.Random(1).sample(docs, max(1, len(docs) // 10)))
    train = [(t, k) for d, t, k in data if d not in held]
    test = [(t, k) for d, t, k in data if d in held]
    t0 = time.time()
    vk = ValueKinds(C=args.C).fit(*zip(*train, strict=True))
    pred = vk.predict([t for t, _ in test])
    truth = np.array([k for _, k in test])
    per_kind = {}
    for k in vk.classes_.tolist():
        if (truth == k).any():
            right = float((pred[truth == k] == k).mean())
            per_kind[k] = {"n": int((truth == k).sum()), "accuracy": round(right, 4)}
    print(f"held-out tenth ({len(test)} texts): accuracy {float((pred == truth).mean()):.4f}")
    for k, v in per_kind.items():
        print(f"  {k:8s} {v['n']:5d}  {v['accuracy']:.4f}")
    vk = ValueKinds(C=args.C).fit(*zip(*[(t, k) for _, t, k in data], strict=True))
    seconds = time.time() - t0
    if args.out.exists():
        for p in args.out.iterdir():
            p.unlink()
    vk.save(args.out)
    counts = {k: sum(1 for *_, kk in data if kk == k) for k in vk.classes_.tolist()}
    info = {
        "source": [str(f) for f in args.folders],
        "about": "synthetic documents of seed 8 (never the seed-7 corpora the fusion trains on)",
        "documents": len(docs),
        "texts_per_kind": counts,
        "name_locales": {"per_locale": args.per_locale, "locales": list(NAME_LOCALES)},
        "other_docs_per_folder": args.other_docs,
        "other_lines_per_doc": args.per_doc,
        "held_out_tenth": {
            "texts": len(test),
            "accuracy": round(float((pred == truth).mean()), 4),
            "per_kind": per_kind,
        },
        "kept_buckets": len(vk.buckets_),
        "fit_seconds": round(seconds, 1),
    }
    (args.out / "training.json").write_text(json.dumps(info, indent=1) + "\n")
    attach(args.out, "training.json")
    print(f"wrote {args.out} ({len(vk.buckets_)} weight rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
