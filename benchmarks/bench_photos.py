"""Receipts photographed at an angle on a dark table: read flattened, as they lie, and as PDFs.

Usage::

    python benchmarks/bench_photos.py [--n 40] [--seed 5] [--receipts DIR]
        [--out benchmarks/results/photos.json]

Without ``--receipts`` it makes ``--n`` digital synthetic receipts
(:func:`confidence.datasets.synthetic.generate`, ``kind="receipt"``, no scans, seed ``--seed``, as
``extractconf synth --kind receipt`` makes them) in a temporary folder. Each receipt's PDF is
rendered at 200 dpi and "photographed": put on a dark, blurred table (grey 70) at random corners
(each moved up to 4 % of the receipt's width from a rectangle, so its sides converge), lit unevenly,
saved as a JPEG of quality 85 without a resolution. The candidate ranker's reading
(:meth:`~confidence.calls.ranker.CandidateRanker.read`) is then scored field by field
(:func:`~confidence.datasets.matching.is_correct`) on

* ``pdf``: the receipts' own PDFs (their text layer: the best any reading of the photos can do),
* ``photo_as_is``: the photos, ``load_document(flatten_photos=False)`` (before this option),
* ``photo_flattened``: the photos as ingestion reads them by default (the paper's outline found
  and warped to a rectangle, :mod:`confidence.documents.perspective`),

with the share of photos whose outline was found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "photos.json"
DPI = 200.0
TABLE = 70


def photograph(gray, rng):
    """The receipt on a dark table, its corners moved at random, lit unevenly."""
    import cv2
    import numpy as np

    h, w = gray.shape
    out_h, out_w = int(h * 1.5), int(w * 2.2)
    table = cv2.GaussianBlur(rng.normal(TABLE, 12, (out_h, out_w)), (0, 0), 3)
    x0, y0 = (out_w - w) / 2, (out_h - h) / 2
    rect = [[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]]
    dst = np.float32([[x + rng.uniform(-0.04, 0.04) * w, y + rng.uniform(-0.04, 0.04) * w]
                      for x, y in rect])  # fmt: skip
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(src, dst)
    paper = cv2.warpPerspective(gray, m, (out_w, out_h), borderValue=0)
    inside = cv2.warpPerspective(np.full_like(gray, 255), m, (out_w, out_h), borderValue=0)
    photo = np.where(inside > 0, paper, table)
    yy, xx = np.mgrid[0:out_h, 0:out_w]
    light = 0.75 + 0.25 * np.cos((xx / out_w - 0.3) * 2.5) * np.cos((yy / out_h - 0.6) * 1.8)
    return (photo * light).clip(0, 255).astype(np.uint8)


def accuracy(ds, files: dict[str, Path], **load) -> dict:
    from confidence.calls.ranker import default_ranker
    from confidence.datasets.matching import is_correct
    from confidence.documents import load_document
    from confidence.documents.lines import document_lines

    ranker = default_ranker()
    right = total = outlined = 0
    per_field: dict[str, list[int]] = {}
    t0 = time.time()
    for rec in ds.records:
        doc = load_document(files[rec.doc_id], **load)
        outlined += doc.pages[0].outline is not None
        read = ranker.read(document_lines(doc), ds.schema)
        for f in ds.schema:
            if f.name in rec.fields:
                ok = int(is_correct(f.type, read[f.name].value, rec.fields[f.name]))
                right += ok
                total += 1
                per_field.setdefault(f.name, []).append(ok)
    return {
        "right": right,
        "fields": total,
        "accuracy": round(right / max(1, total), 4),
        "per_field": {k: round(sum(v) / len(v), 4) for k, v in per_field.items()},
        "outlined": outlined,
        "documents": len(ds.records),
        "seconds": round(time.time() - t0, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="receipts to make (without --receipts)")
    ap.add_argument("--seed", type=int, default=5, help="generator and photo seed")
    ap.add_argument("--receipts", type=Path, default=None, help="a folder of receipt PDFs")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    import cv2
    import numpy as np

    from confidence.datasets.folder import Dataset
    from confidence.datasets.synthetic import generate
    from confidence.documents._pdf import open_pdf, render

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.receipts
        if folder is None:
            folder = Path(tmp) / "receipts"
            generate(folder, args.n, seed=args.seed, kind="receipt", scan_ratio=0.0)
        ds = Dataset.open(folder)
        ds = type(ds)(ds.path, ds.schema, [r for r in ds.records if ds.path_of(r).suffix == ".pdf"])
        if not ds.records:
            print(f"no receipt PDFs in {folder}", file=sys.stderr)
            return 1
        rng = np.random.default_rng(args.seed)
        pdfs, photos = {}, {}
        for rec in ds.records:
            pdfs[rec.doc_id] = ds.path_of(rec)
            with open_pdf(pdfs[rec.doc_id]) as pdf:
                gray, _, _ = render(pdf, 0, DPI, 60_000_000)
            photos[rec.doc_id] = Path(tmp) / f"{rec.doc_id}.jpg"
            cv2.imwrite(
                str(photos[rec.doc_id]), photograph(gray, rng), [cv2.IMWRITE_JPEG_QUALITY, 85]
            )
        results = {
            "about": __doc__.split("\n\n")[0] + f" (seed {args.seed}, {len(ds.records)} receipts)",
            "pdf": accuracy(ds, pdfs),
            "photo_as_is": accuracy(ds, photos, flatten_photos=False),
            "photo_flattened": accuracy(ds, photos),
        }
    for k in ("pdf", "photo_as_is", "photo_flattened"):
        r = results[k]
        print(f"{k:16} {r['right']:3d} of {r['fields']} fields right ({r['accuracy']:.3f}), "
              f"outline on {r['outlined']} of {r['documents']}, {r['seconds']} s")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
