"""Check the converters on the shared reference data (a script, not a test).

Converts ``../shared/data/sroie-dev/native`` (+ its images in ``../files``) and
``../shared/data/docile-sample`` into a temporary folder, then

* compares the SROIE result with the curated ``sroie-dev/labels.jsonl`` (same documents, same
  values, byte-identical files);
* checks the DocILE result loads strictly and that its present gold values can be found in the
  PDF's text layer (pdfplumber), i.e. that the conversion kept what is printed.

Usage: ``python benchmarks/check_converters.py [--data ../shared/data] [--out /tmp/convert-check]``
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path

from confidence.datasets import docile, sroie
from confidence.datasets.folder import Dataset


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def check_sroie(data: Path, out: Path) -> dict:
    t0 = time.perf_counter()
    summary = sroie.convert(
        data / "sroie-dev" / "native", out / "sroie", images=data / "sroie-dev" / "files"
    )
    seconds = time.perf_counter() - t0
    ours = Dataset.open(out / "sroie", strict=True)
    ref = Dataset.open(data / "sroie-dev", strict=True)
    fields_equal = fields_total = files_equal = 0
    mismatches = []
    for r in ref:
        if r.doc_id not in ours:
            mismatches.append((r.doc_id, "missing from conversion"))
            continue
        o = ours[r.doc_id]
        for name in ref.schema.names:
            fields_total += 1
            if o.fields.get(name, "<unlabelled>") == r.fields.get(name, "<unlabelled>"):
                fields_equal += 1
            else:
                mismatches.append(
                    (r.doc_id, f"{name}: {o.fields.get(name)!r} != {r.fields.get(name)!r}")
                )
        files_equal += ours.path_of(o).read_bytes() == ref.path_of(r).read_bytes()
    return {
        "converted": summary.n_written,
        "skipped": len(summary.skipped),
        "seconds": round(seconds, 2),
        "reference_docs": len(ref),
        "extra_docs": len(set(ours.doc_ids) - set(ref.doc_ids)),
        "schema_equal": ours.schema == ref.schema,
        "fields_equal": f"{fields_equal}/{fields_total}",
        "files_identical": f"{files_equal}/{len(ref)}",
        "mismatches": mismatches[:10],
    }


def check_docile(data: Path, out: Path) -> dict:
    import pdfplumber

    summary = docile.convert(data / "docile-sample", out / "docile", split="dev")
    ds = Dataset.open(out / "docile", strict=True)
    found = present = 0
    missing = []
    for rec in ds:
        with pdfplumber.open(ds.path_of(rec)) as pdf:
            text = _squash(" ".join(p.extract_text() or "" for p in pdf.pages))
        for name, value in rec.fields.items():
            if value is None:
                continue
            present += 1
            if _squash(value) in text:
                found += 1
            else:
                missing.append((rec.doc_id, name, value))
    return {
        "converted": summary.n_written,
        "skipped": len(summary.skipped),
        "schema_fields": len(ds.schema),
        "present_fields": present,
        "absent_fields": sum(len(r.absent) for r in ds),
        "present_found_in_pdf_text": f"{found}/{present}",
        "not_found": missing[:10],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parents[1]
    ap.add_argument("--data", type=Path, default=here.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=Path("/tmp/convert-check"))
    args = ap.parse_args(argv)
    if not (args.data / "sroie-dev" / "native").is_dir():
        print(f"{args.data}: shared reference data not found", file=sys.stderr)
        return 2
    shutil.rmtree(args.out, ignore_errors=True)
    report = {
        "sroie": check_sroie(args.data, args.out),
        "docile": check_docile(args.data, args.out),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    s = report["sroie"]
    ok = s["fields_equal"].split("/")[0] == s["fields_equal"].split("/")[1] and s["schema_equal"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
