#!/usr/bin/env python
"""Train the candidate ranker shipped in ``confidence/models/ranker`` on synthetic documents.

The documents are the default model's synthetic corpora (``scripts/train_default.py synth``:
600 invoices and 1200 receipts, seed 7). The 200 + 200 documents that ``train_default`` holds out
(:func:`heldout_split`, the same rule as ``train_default._split``) are never trained on: the
ranker trains on (a sample of) the other documents and ``benchmarks/bench_ranker.py`` measures it
on the held-out ones. The shipped model is the default (100 invoices + 150 receipts; measured
about 1.2 CPU-seconds of features per invoice and 0.3 per receipt, a minute of fitting), so with a
warm OCR cache it runs in a few minutes on one core; ``--features A.npz B.npz`` keeps the
groups (``--no-fit``: only compute them, e.g. invoices and receipts in two processes) and
refits from them::

    python scripts/train_ranker.py --invoices /tmp/g_bench/inv600 --receipts /tmp/g_bench/rec1200 \\
        --cache /tmp/g_bench/cache

Folders missing? Make them with ``extractconf synth DIR --seed 7 --n 600 --scan-ratio 0.35`` and
``extractconf synth DIR --seed 7 --n 1200 --kind receipt --scan-ratio 0.7``.
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
SEED = 7
HELDOUT_IDS = ROOT / "scripts" / "heldout.json"


def heldout_split(folder: Path, which: str):
    """``(train, test)`` datasets of a seed-7 corpus: the test documents are the ones
    ``train_default`` holds out (``scripts/heldout.json``), the train documents all the others."""
    from confidence.datasets.folder import Dataset

    held = set(json.loads(HELDOUT_IDS.read_text())[which])
    ds = Dataset.open(folder)
    train = ds.subset([r.doc_id for r in ds.records if r.doc_id not in held])
    return train, ds.subset([r.doc_id for r in ds.records if r.doc_id in held])


def groups_of(ds, cache, limit: int | None, seed: int = 0, keep: Path | None = None):
    """Training groups of up to ``limit`` documents of ``ds`` (a seeded sample); with ``keep``,
    the groups so far are written there every 25 documents (a stopped run keeps its work).
    Also returns the ids of the documents read (kept in the features file as ``doc_ids``)."""
    from confidence.calls.ranker import training_groups
    from confidence.documents.lines import document_lines
    from confidence.errors import DocumentError

    recs = list(ds.records)
    random.Random(seed).shuffle(recs)
    Xs, ys, sizes, used = [], [], [], []
    t0 = time.time()
    for k, rec in enumerate(recs[:limit]):
        try:
            doc = cache.load(ds.path_of(rec), rec.doc_id)
        except DocumentError as e:
            print(f"skip {rec.doc_id}: {e}", file=sys.stderr)
            continue
        used.append(rec.doc_id)
        for _, X, y in training_groups(document_lines(doc), ds.schema, rec.fields):
            Xs.append(X)
            ys.append(y)
            sizes.append(len(y))
        if k % 25 == 0:
            print(f"  {ds.schema.name}: {k} docs, {time.time() - t0:.0f}s", flush=True)
            if keep is not None and sizes:
                np.savez_compressed(
                    keep,
                    X=np.vstack(Xs),
                    y=np.concatenate(ys),
                    sizes=np.asarray(sizes),
                    doc_ids=np.asarray(used),
                )
    return Xs, ys, sizes, used


def augment_unseen(X, y, sizes, share: float, seed: int = 0):
    """Append copies of ``share`` of the groups as if their field were unknown to the label
    vocabulary (:func:`confidence.calls.ranker_features.without_vocabulary`)."""
    from confidence.calls.ranker_features import without_vocabulary

    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rng = np.random.default_rng(seed)
    pick = np.flatnonzero(rng.random(len(sizes)) < share)
    if not len(pick):
        return X, y, list(sizes)
    idx = np.concatenate([np.arange(starts[g], starts[g] + sizes[g]) for g in pick])
    X2 = without_vocabulary(X[idx])
    return (
        np.vstack([X, X2]),
        np.concatenate([y, y[idx]]),
        [*sizes, *(sizes[g] for g in pick)],
    )


def augment_unlabelled(X, y, sizes, share: float, seed: int = 1):
    """Append copies of ``share`` of the present-field groups with their labels made
    unrecognisable (:func:`confidence.calls.ranker_features.without_labels`)."""
    from confidence.calls.ranker_features import without_labels

    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rng = np.random.default_rng(seed)
    present = [g for g in range(len(sizes)) if y[starts[g] + sizes[g] - 1] == 0]  # null last
    pick = [g for g in present if rng.random() < share]
    if not pick:
        return X, y, list(sizes)
    blocks = [without_labels(X[starts[g] : starts[g] + sizes[g]]) for g in pick]
    ys = [y[starts[g] : starts[g] + sizes[g]] for g in pick]
    return (
        np.vstack([X, *blocks]),
        np.concatenate([y, *ys]),
        [*sizes, *(sizes[g] for g in pick)],
    )


def keep_absent(X, y, sizes, share: float, seed: int = 2):
    """Keep only ``share`` of the groups whose field is absent (the null candidate right).

    The synthetic generator leaves about a fifth of the invoice fields off the page
    (``ABSENCE_RATES``) so that the confidence model sees absent fields; a ranker trained on all
    of them learns that prior, and on documents whose schema lists fields they do carry it
    returns null where a weakly-labelled value was printed. ``share`` < 1 lowers that prior.
    """
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    rng = np.random.default_rng(seed)
    keep = [
        g
        for g in range(len(sizes))
        if y[starts[g] + sizes[g] - 1] == 0 or rng.random() < share  # null last: absent if 1
    ]
    idx = np.concatenate([np.arange(starts[g], starts[g] + sizes[g]) for g in keep])
    return X[idx], y[idx], [sizes[g] for g in keep]


def main(argv=None) -> int:
    from confidence.calls.ranker import CandidateRanker
    from confidence.calls.ranker_features import FEATURES
    from confidence.documents.cache import DocumentCache
    from confidence.persistence import attach

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--invoices", type=Path, required=True, help="seed-7 synthetic invoices")
    ap.add_argument("--receipts", type=Path, required=True, help="seed-7 synthetic receipts")
    ap.add_argument("--cache", type=Path, default=None, help="OCR cache folder")
    ap.add_argument("--n-invoices", type=int, default=100, help="training invoices (max 395)")
    ap.add_argument("--n-receipts", type=int, default=150, help="training receipts (max 999)")
    ap.add_argument(
        "--extra",
        type=Path,
        nargs="*",
        default=[],
        help="further synthetic dataset folders trained on whole (other seeds, e.g. receipts "
        "made with --header-variety); never the seed-7 corpora",
    )
    ap.add_argument("--n-extra", type=int, default=None, help="documents per extra folder")
    ap.add_argument("--out", type=Path, default=ROOT / "confidence" / "models" / "ranker")
    ap.add_argument(
        "--features",
        type=Path,
        nargs="*",
        default=[],
        help="keep the groups in FILE.npz; several existing files: train on them all",
    )
    ap.add_argument(
        "--unseen-share",
        type=float,
        default=0.3,
        help="share of groups copied as fields the label vocabulary does not know",
    )
    ap.add_argument(
        "--unlabelled-share",
        type=float,
        default=0.2,
        help="share of present-field groups copied with unrecognisable labels",
    )
    ap.add_argument(
        "--absent-share",
        type=float,
        default=1.0,
        help="share of absent-field groups trained on (lowers the ranker's prior of absence)",
    )
    ap.add_argument("--n-estimators", type=int, default=300, help="boosting rounds")
    ap.add_argument("--num-leaves", type=int, default=31, help="leaves per tree")
    ap.add_argument("--min-child-samples", type=int, default=20, help="rows per leaf, at least")
    ap.add_argument("--subsample", type=float, default=1.0, help="share of rows per tree (bagging)")
    ap.add_argument("--colsample", type=float, default=1.0, help="share of features per tree")
    ap.add_argument("--seed", type=int, default=0, help="LightGBM's random_state")
    ap.add_argument(
        "--drop",
        nargs="*",
        default=[],
        metavar="FEATURE",
        help="train without these feature columns (names of ranker_features.FEATURES)",
    )
    ap.add_argument("--no-fit", action="store_true", help="only compute and keep the groups")
    args = ap.parse_args(argv)
    cache = DocumentCache(args.cache)
    t0 = time.time()
    if args.features and all(p.exists() for p in args.features):
        zs = [np.load(p) for p in args.features]
        X, y = np.vstack([z["X"] for z in zs]), np.concatenate([z["y"] for z in zs])
        sizes = [int(s) for z in zs for s in z["sizes"]]
        # what each features file was computed from (files saved before doc_ids were kept: None)
        documents = {
            str(p): (len(z["doc_ids"]) if "doc_ids" in z.files else None)
            for p, z in zip(args.features, zs, strict=True)
        }
    else:
        Xs, ys, sizes, documents, used_all = [], [], [], {}, []
        for which, folder, n in (
            ("invoices", args.invoices, args.n_invoices),
            ("receipts", args.receipts, args.n_receipts),
        ):
            train, test = heldout_split(folder, which)
            n_tr, n_te = len(train.records), len(test.records)
            print(f"{which}: {n_tr} train / {n_te} held out; using {n}", flush=True)
            if not n:
                continue
            x, y, s, used = groups_of(train, cache, n, keep=(args.features or [None])[0])
            Xs += x
            ys += y
            sizes += s
            documents[which] = len(used)
            used_all += used
        for folder in args.extra:
            from confidence.datasets.folder import Dataset

            extra = Dataset.open(folder)
            print(f"{folder}: {len(extra.records)} extra documents", flush=True)
            x, y, s, used = groups_of(extra, cache, args.n_extra, keep=(args.features or [None])[0])
            Xs += x
            ys += y
            sizes += s
            documents[str(folder)] = len(used)
            used_all += used
        X, y = np.vstack(Xs), np.concatenate(ys)
        if args.features:
            np.savez_compressed(
                args.features[0], X=X, y=y, sizes=np.asarray(sizes), doc_ids=np.asarray(used_all)
            )
        if args.no_fit:
            return 0
    print(f"features: {len(sizes)} groups, {len(y)} rows in {time.time() - t0:.0f}s", flush=True)
    X, y, sizes = keep_absent(X, y, sizes, args.absent_share)
    X, y, sizes = augment_unseen(X, y, sizes, args.unseen_share)
    X, y, sizes = augment_unlabelled(X, y, sizes, args.unlabelled_share)
    unknown = sorted(set(args.drop) - set(FEATURES))
    if unknown:
        ap.error(f"--drop: no such features: {', '.join(unknown)}")
    kept = [i for i, n in enumerate(FEATURES) if n not in args.drop]
    ranker = CandidateRanker(
        n_estimators=args.n_estimators,
        num_leaves=args.num_leaves,
        min_child_samples=args.min_child_samples,
        subsample=args.subsample,
        colsample_bytree=args.colsample,
        random_state=args.seed,
    )
    ranker.fit(X[:, kept], y, group=sizes, feature_names=[FEATURES[i] for i in kept])
    if args.out.exists():
        for p in args.out.iterdir():
            p.unlink()
    ranker.save(args.out)
    info = {
        "features_files": [str(p) for p in args.features],
        # documents actually read per source (per features file when trained from saved features;
        # the --n-invoices/--n-receipts arguments do not apply then)
        "documents_read": documents,
        "extra": [str(p) for p in args.extra],
        "source": "seed-7 synthetic corpora of scripts/train_default.py, held-out split excluded",
        "groups": len(sizes),
        "rows": len(y),
        "unseen_share": args.unseen_share,
        "unlabelled_share": args.unlabelled_share,
        "absent_share": args.absent_share,
        "dropped_features": list(args.drop),
        "params": ranker.get_params(),
        "seconds": round(time.time() - t0),
    }
    (args.out / "training.json").write_text(json.dumps(info, indent=1) + "\n")
    attach(args.out, "training.json")
    print(f"saved {args.out} after {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
