"""Does the value-kinds classifier know names and addresses from countries it never trained on?

Usage::

    python benchmarks/bench_value_kinds.py [--model DIR] [--before DIR] [--n 30]
        [--out benchmarks/results/value_kinds.json]

The classifier (``confidence.documents.value_kinds``; trained by ``scripts/train_value_kinds.py``)
feeds the ranker's and the fusion's ``kind_*`` features: whether a line reads like a name, an
address, an id, payment terms or none of them. Real documents carry names and addresses from
anywhere, so this measures it on texts drawn by Faker from two groups of locales, with a seed
no training run uses:

- ``unseen``: Latin-script locales in neither ``FAKER_LOCALES`` (the languages the synthetic
  documents are printed in) nor ``NAME_LOCALES`` (the extra locales the classifier learns names
  and addresses from);
- ``table``: the ``NAME_LOCALES`` themselves, new draws.

Per group and locale: the share of company names (half in capitals) and person names (half in
capitals) read as ``name``, and of one-line postal addresses read as ``address``. ``--before``
adds the same table for another model folder (e.g. the classifier a change replaces).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "value_kinds.json"
SEED = 4321  # not a seed of scripts/train_value_kinds.py (7, 8) nor of the generator
UNSEEN = (
    "ro_RO", "hu_HU", "cs_CZ", "sk_SK", "hr_HR", "sl_SI", "lv_LV", "lt_LT", "et_EE", "no_NO",
    "en_TH", "fr_CA", "de_AT", "es_MX", "fil_PH", "zu_ZA",
)  # fmt: skip


def draws(locale: str, n: int) -> dict[str, list[str]]:
    """``n`` company names, ``n`` person names and ``n`` one-line addresses of one locale."""
    from faker import Faker

    fake = Faker(locale)
    fake.seed_instance(SEED)
    half = n // 2
    company = [fake.company() for _ in range(n)]
    person = [fake.name() for _ in range(n)]
    address = [", ".join(x for x in fake.address().split("\n") if x.strip()) for _ in range(n)]
    return {
        "company": [c.upper() if i < half else c for i, c in enumerate(company)],
        "person": [p.upper() if i < half else p for i, p in enumerate(person)],
        "address": address,
    }


def measure(model, groups: dict[str, tuple[str, ...]], n: int) -> dict:
    """Share of each sort read as its kind, per group (mean over locales) and per locale."""
    import numpy as np

    classes = model.classes_.tolist()
    want = {"company": "name", "person": "name", "address": "address"}
    out = {}
    for group, locales in groups.items():
        per = {}
        for loc in locales:
            texts = draws(loc, n)
            per[loc] = {
                sort: round(
                    float(np.mean(model.predict_proba(xs).argmax(1) == classes.index(want[sort]))),
                    4,
                )
                for sort, xs in texts.items()
            }
        out[group] = {
            "mean": {s: round(float(np.mean([v[s] for v in per.values()])), 4) for s in want},
            "per_locale": per,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None, help="value-kinds folder (the shipped)")
    ap.add_argument("--before", type=Path, default=None, help="another folder to compare with")
    ap.add_argument("--n", type=int, default=30, help="texts of each sort per locale")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    from faker.config import AVAILABLE_LOCALES

    from confidence.datasets.synthetic.locales import FAKER_LOCALES, NAME_LOCALES
    from confidence.documents.value_kinds import DEFAULT_DIR, ValueKinds

    taught = set(NAME_LOCALES) | {x for xs in FAKER_LOCALES.values() for x in xs}
    unseen = tuple(x for x in UNSEEN if x in AVAILABLE_LOCALES and x not in taught)
    groups = {"unseen": unseen, "table": tuple(NAME_LOCALES)}
    t0 = time.perf_counter()
    result = {
        "about": __doc__.split("\n\n")[0],
        "seed": SEED,
        "texts_per_sort_per_locale": args.n,
        "model": measure(ValueKinds.load(args.model or DEFAULT_DIR), groups, args.n),
    }
    if args.before is not None:
        result["before"] = measure(ValueKinds.load(args.before), groups, args.n)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"{'group':8} {'model':7} {'company':>8} {'person':>8} {'address':>8}")
    for which in ("model", "before"):
        for group, r in result.get(which, {}).items():
            m = r["mean"]
            print(f"{group:8} {which:7} {m['company']:8.3f} {m['person']:8.3f} {m['address']:8.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
