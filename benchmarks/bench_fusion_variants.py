"""Fusion-model variants measured on one labelled table: which change moves zero-shot AUROC?

The default model's fusion is a LightGBM model (``confidence.fusion.FusionClassifier``) trained on
the feature rows of the synthetic training documents. This benchmark builds those rows once, as
``extractconf train --single-reading`` builds them (the recorded runs plus their one-reading
copies), and the rows of each evaluation set (recorded runs, ``extractconf evaluate``'s rows),
then fits many fusion variants on them and reports the AUROC of their raw scores on each set
(calibration is monotone: it does not change a ranking).

Each variant is fitted on ``--replicates`` random 70 % shares of the training documents (the
document split is what moves the default model's dev-set AUROC most, ``docs/engine.md``) and
its mean is compared with the base recipe's on the same shares. Variants:

* ``drop:GROUP`` -- a feature group left out (its columns NaN in training and scoring);
* ``params:...`` -- LightGBM parameters other than the default's;
* ``weight:...`` -- training rows weighted by synthetic corpus (the generator's seed in the
  document id: ``synth-7``, ``receipt-23``, ...);
* ``lr_blend`` -- the fused log-odds plus half a logistic regression's (a smoother learner);
* ``fold_average`` -- the mean of 5 fold models on the same share (``average_folds``);
* ``bagged3`` -- the mean of 3 models, each on its own 70 % share (more documents in all);
* ``curve`` -- the base recipe on random 35 % and 50 % shares (``share:0.35``, ``share:0.5``);
* ``corpora`` -- one fit on all the training documents (``all_documents``), then one without
  each synthetic corpus (``without:receipt-23``, ...).

Usage (the work folder of ``scripts/train_default.py train``; dev sets are measurement only)::

    python benchmarks/bench_fusion_variants.py --work /work/runs --cache /work/cache/documents

evaluates on the held-out documents of the work folder (``split-test``, ``split-rtest``) and,
where ``WORK/runs-sroie-dev.jsonl`` and ``WORK/runs-invoices-generated.jsonl`` hold their
recorded runs (as for ``bench_engine.py``), on ``DATA/sroie-dev`` and
``DATA/invoices-generated``; ``--eval NAME=DATASET:RUNS`` names the sets instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TRAIN_SETS = ("split-train", "split-rtrain", "split-ftrain", "split-vtrain")
PARAMS = {
    "extra_trees": {"lgbm_params": {"extra_trees": True}},
    "num_leaves_7": {"num_leaves": 7},
    "min_leaf_200": {"min_child_samples": 200},
    "feature_fraction_0.5": {"lgbm_params": {"feature_fraction": 0.5}},
    "path_smooth_10": {"lgbm_params": {"path_smooth": 10.0}},
    "learning_rate_0.02_x2.4": {"learning_rate": 0.02, "n_estimators": 1200},
}
WEIGHTS = {
    "invoices_x0.5": {"synth-7": 0.5},
    "new_receipts_x2-3": {"receipt-23": 3.0, "receipt-17": 2.0},
}


def groups_of(names: list[str]) -> dict[str, list[str]]:
    """Feature groups (families of ``docs/features.md``, the OCR and layout ones split)."""

    def pre(p):
        return [n for n in names if n.startswith(p)]

    ocr_match = [n for n in names if n.startswith("ocr_") and n.split("_")[-1] in
                 ("found", "exact", "score", "occurrences")]  # fmt: skip
    g = {
        "agree": pre("agree_"), "lp_h": pre("lp_h_"), "lp_m": pre("lp_m_"), "lp": pre("lp_"),
        "cons": pre("cons_"), "ocr_match": ocr_match,
        "ocr_conf": [n for n in names if n.startswith("ocr_") and "_conf" in n
                     and n != "ocr_page_conf_mean"],
        "ocr_page": ["ocr_source_pdf", "ocr_page_conf_mean", "ocr_doc_words_log",
                     "ocr_page_restored"],
        "ocr_value_chars": ["ocr_value_chars"],
        "ocr_alone": ["ocr_alone_agree", "ocr_alone_alt"],
        "q": pre("q_"),
        "lay_pos": ["lay_x_center", "lay_y_center", "lay_page_index", "lay_line_rank"],
        "lay_label": pre("lay_label_"), "lay_size": ["lay_width", "lay_height", "lay_font_rel"],
        "lay_count": ["lay_n_lines", "lay_n_words", "lay_in_table"], "type": pre("type_"),
        "rd": pre("rd_"), "val": pre("val_"), "edge": pre("edge_"), "lbl": pre("lbl_"),
        "page_sum": ["page_sum"], "kind": pre("kind_"),
    }  # fmt: skip
    return {k: [n for n in v if n in names] for k, v in g.items() if any(n in names for n in v)}


def default_evals(work: Path, data: Path) -> list[str]:
    """The held-out sets of the work folder, and the dev sets whose recorded runs it holds."""
    out = []
    for name, folder, runs in (
        ("heldout-invoices", work / "split-test", work / "runs.jsonl.gz"),
        ("heldout-receipts", work / "split-rtest", work / "receipt-runs.jsonl.gz"),
        ("sroie-dev", data / "sroie-dev", work / "runs-sroie-dev.jsonl"),
        ("invoices-generated", data / "invoices-generated", work / "runs-invoices-generated.jsonl"),
    ):
        if (folder / "labels.jsonl").exists() and runs.exists():
            out.append(f"{name}={folder}:{runs}")
        else:
            print(f"skipping {name}: no {folder / 'labels.jsonl'} or no {runs}")
    return out


def tables(work: Path, evals: list[str], cache_dir: Path | None):
    """Training rows (recorded + one-reading copies) and each evaluation set's rows."""
    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.evaluation.table import build_table
    from confidence.records import load_runs

    cache = DocumentCache(cache_dir) if cache_dir else None
    sets = [Dataset.open(work / s) for s in TRAIN_SETS if (work / s / "labels.jsonl").exists()]
    runs = load_runs(sorted(work.glob("*.jsonl.gz")))
    parts = [build_table(sets, runs, cache=cache)]
    parts += [build_table(sets, runs, cache=cache, readings=r) for r in
              ("library_mapper", "hunter_only")]  # fmt: skip
    parts.append(build_table(sets, runs, cache=cache, readings="hunter_only",
                             use_documents=False))  # fmt: skip
    train = (
        np.vstack([t.rows.X for t in parts]),
        np.concatenate([t.y for t in parts]),
        np.array([d for t in parts for d in t.rows.doc_ids]),
    )
    out = {}
    for spec in evals:
        name, rest = spec.split("=", 1)
        folder, runs_path = rest.rsplit(":", 1)
        t = build_table([Dataset.open(folder)], load_runs([runs_path]), cache=cache)
        out[name] = (t.rows.X, t.y)
    return train, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/work/runs"))
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--eval", action="append", default=None, metavar="NAME=DATASET:RUNS")
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--only", nargs="*", default=None, help="variant names to run (and base)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/fusion_variants.json")
    a = ap.parse_args(argv)
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from confidence.engine import kept_features
    from confidence.features.build import FEATURE_NAMES, MONOTONE
    from confidence.fusion import FusionClassifier

    sys.path.insert(0, str(ROOT / "scripts"))
    from train_default import EXCLUDE_FEATURES

    if not any((a.work / s / "labels.jsonl").exists() for s in TRAIN_SETS):
        print(f"no training documents in {a.work} ({', '.join(TRAIN_SETS)}): run "
              "scripts/train_default.py train --work WORK first")  # fmt: skip
        return 1
    a.eval = a.eval or default_evals(a.work, a.data)
    t0 = time.time()
    (X, y, docs), evals = tables(a.work, a.eval, a.cache)
    names = kept_features(EXCLUDE_FEATURES)
    cols = [FEATURE_NAMES.index(n) for n in names]
    X = X[:, cols]
    evals = {k: (Z[:, cols], ys) for k, (Z, ys) in evals.items()}
    print(f"tables: {len(y)} training rows, {len(np.unique(docs))} documents "
          f"({time.time() - t0:.0f} s)", flush=True)  # fmt: skip
    corpus = np.array([d.rsplit("-", 1)[0] for d in docs])
    unique = np.unique(docs)
    shares = [
        np.isin(docs, np.random.default_rng(100 + r).choice(unique, int(0.7 * len(unique)),
                                                             replace=False))
        for r in range(a.replicates + 2)  # two more shares for the bagged variant
    ]  # fmt: skip
    mono = {k: v for k, v in MONOTONE.items() if k in names}

    def fit(mask, drop=(), params=None, weight=None):
        Xt = X[mask].copy()
        idx = [names.index(n) for n in drop]
        Xt[:, idx] = np.nan
        kw = {"n_estimators": a.rounds, "early_stopping_rounds": None, "monotone": mono}
        kw.update(params or {})
        w = None if weight is None else np.array([weight.get(c, 1.0) for c in corpus[mask]])
        clf = FusionClassifier(**kw).fit(Xt, y[mask], feature_names=names, sample_weight=w)

        def score(Z):
            Z = Z.copy()
            Z[:, idx] = np.nan
            p = np.clip(clf.predict_proba(Z)[:, 1], 1e-9, 1 - 1e-9)
            return np.log(p / (1 - p))

        return score

    def aurocs(score_fns):  # mean over replicates of each set's AUROC
        return {k: [float(roc_auc_score(ys, f(Z))) for f in score_fns] for k, (Z, ys) in
                evals.items()}  # fmt: skip

    reps = range(a.replicates)
    variants: dict[str, dict] = {}

    def want(name):
        return a.only is None or name in a.only

    def record(name, per):
        variants[name] = {k: {"mean": float(np.mean(v)), "replicates": v} for k, v in per.items()}
        print(name.ljust(28), " ".join(f"{k} {v['mean']:.4f}" for k, v in
                                       variants[name].items()), flush=True)  # fmt: skip

    record("base", aurocs([fit(shares[r]) for r in reps]))
    for g, members in groups_of(names).items():
        if want(f"drop:{g}"):
            record(f"drop:{g}", aurocs([fit(shares[r], drop=members) for r in reps]))
    for p, params in PARAMS.items():
        if want(f"params:{p}"):
            record(f"params:{p}", aurocs([fit(shares[r], params=params) for r in reps]))
    for w, weight in WEIGHTS.items():
        if want(f"weight:{w}"):
            record(f"weight:{w}", aurocs([fit(shares[r], weight=weight) for r in reps]))
    if want("lr_blend"):
        lo, hi = np.nanpercentile(X, 1, axis=0), np.nanpercentile(X, 99, axis=0)
        med = np.nan_to_num(np.nanmedian(X, axis=0))

        def prep(Z):
            nan = np.isnan(Z)
            return np.hstack([np.where(nan, med, np.clip(Z, lo, hi)), nan.astype(float)])

        fns = []
        for r in reps:
            P = prep(X[shares[r]])
            mu, sd = P.mean(0), np.where(P.std(0) > 0, P.std(0), 1.0)
            lr = LogisticRegression(C=0.1, max_iter=3000).fit((P - mu) / sd, y[shares[r]])
            g = fit(shares[r])
            fns.append(lambda Z, g=g, lr=lr, mu=mu, sd=sd: g(Z) + 0.5 * lr.decision_function(
                (prep(Z) - mu) / sd))  # fmt: skip
        record("lr_blend", aurocs(fns))
    if want("fold_average"):
        record("fold_average", aurocs([fit(shares[r], params={"average_folds": True,
               "early_stopping_rounds": 50}) for r in reps]))  # fmt: skip
    if want("curve"):  # the same recipe on fewer documents: how much would more give?
        for frac in (0.35, 0.5):
            masks = [
                np.isin(docs, np.random.default_rng(100 + r).choice(
                    unique, int(frac * len(unique)), replace=False))
                for r in reps
            ]  # fmt: skip
            record(f"share:{frac}", aurocs([fit(m) for m in masks]))
    if want("corpora"):  # one fit on every training document, then without each corpus
        record("all_documents", aurocs([fit(np.ones(len(y), dtype=bool))]))
        for c in np.unique(corpus):
            record(f"without:{c}", aurocs([fit(corpus != c)]))
    if want("bagged3"):
        fns = []
        for r in reps:
            members = [fit(shares[(r + k) % len(shares)]) for k in range(3)]
            fns.append(lambda Z, m=members: np.mean([f(Z) for f in m], axis=0))
        record("bagged3", aurocs(fns))
    result = {
        "about": __doc__.split("\n\n")[0] + " Mean AUROC of the raw fused score over "
        f"{a.replicates} random 70 % shares of the training documents, {a.rounds} rounds "
        "(early stopping off, except fold_average), the default model's parameters, monotone "
        "constraints and EXCLUDE_FEATURES otherwise.",
        "work": str(a.work),
        "eval": a.eval,
        "n_training_rows": len(y),
        "variants": variants,
        "seconds": round(time.time() - t0, 1),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
