#!/usr/bin/env python
"""Reproduce the default model shipped in ``confidence/models/default`` end to end.

Stages (each resumable; run them in order)::

    python scripts/train_default.py synth   --work /work/runs      # 600 invoices + 1200 receipts
    python scripts/train_default.py extract --work /work/runs --shard 0/2 &   # one per core
    python scripts/train_default.py extract --work /work/runs --shard 1/2 &
    python scripts/train_default.py extract --work /work/runs --set receipts --shard 0/2 &
    python scripts/train_default.py extract --work /work/runs --set receipts --shard 1/2 &
    python scripts/train_default.py extract --work /work/runs --set faded --shard 0/2 &
    python scripts/train_default.py extract --work /work/runs --set faded --shard 1/2 &
    python scripts/train_default.py extract --work /work/runs --set variety --shard 0/2 &
    python scripts/train_default.py extract --work /work/runs --set variety --shard 1/2 &
    python scripts/train_default.py extract --work /work/runs --set lines --shard 0/2 &
    python scripts/train_default.py extract --work /work/runs --set lines --shard 1/2 &
    python scripts/train_default.py train   --work /work/runs      # merge runs, train, evaluate

``extract`` reads each document (through the document cache) and records its Hunter and Mapper
readings from the embedded SmolLM2-135M model (``--llm local``) into
``WORK/runs-SHARD.jsonl`` (receipts: ``WORK/receipt-runs-SHARD.jsonl``); re-running it skips
documents already recorded. It reads the held-out documents (``scripts/heldout.json``: 200
invoices, 200 receipts, fixed by id) first; ``--limit N`` stops after the first N documents of
that order (the shipped model: ``--limit 500`` invoices, ``--limit 750`` receipts, 10-12 s per
invoice and 2-3 s per receipt per process, two processes on 2 cores, 2026-12-03; 15 s and 2.2 s
with OCR on 2026-12-06). ``train``
merges the shards into ``WORK/runs.jsonl.gz`` and ``WORK/receipt-runs.jsonl.gz``, trains
the engine on the extracted documents that are not held out, evaluates it on the held-out
ones (metrics in the model card) and writes the model folder and compact copies of the runs
beside this script.

To retrain from the committed runs without extracting again (about 2 core-hours), run ``synth``
then put them where ``extract`` would have::

    xz -dc scripts/default_runs.jsonl.xz > /work/runs/runs-0.jsonl
    xz -dc scripts/default_receipt_runs.jsonl.xz > /work/runs/receipt-runs-0.jsonl
    xz -dc scripts/default_faded_runs.jsonl.xz > /work/runs/faded-runs-0.jsonl
    xz -dc scripts/default_variety_runs.jsonl.xz > /work/runs/variety-runs-0.jsonl
    xz -dc scripts/default_lines_runs.jsonl.xz > /work/runs/lines-runs-0.jsonl

The ``faded`` set (300 receipts of seed 17, faded thermal print among them) and the ``variety``
set (300 receipts of seed 23, merchant names printed like the body text among them) and the
``lines`` set (300 receipts of seed 29, addresses printed as comma-separated runs among them) only
train; a model trained without their runs is trained on the other sets as before.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "confidence" / "models" / "default"
SEED = 7
N_DOCS = 600
SCAN_RATIO = 0.35
# 95 % target accuracy with probability 90 %: with the candidate ranker's reading reported (about
# 81 % of invoice and 93 % of receipt fields right) it certifies thresholds that accept 56.5 % of
# the held-out synthetic fields (measured 2026-12-02: invoices 54.5 % at 96.1 % accuracy, receipts
# 67.0 % at 98.5 %). Users re-tune for their own target and domain with `extractconf tune`.
TARGET_ACCURACY = 0.95
# The fusion model leaves out the absolute image-quality measurements: page sharpness, contrast,
# brightness, noise, skew, resolution, JPEG blocking and ink, and the same of the value's tiles.
# They describe the generator's simulated scanner, and the fusion learned that scanner instead of
# the value. It keeps q_local_sharpness_rel, whether the value sits in a blurrier region than the
# rest of its page, which does not depend on the scanner. Measured on the same training runs
# (2026-12-06, fifth session; docs/features.md, benchmarks/results/fusion_feature_ablation.json):
# over three seeds, zero-shot AUROC on SROIE-dev 0.818 -> 0.836 and on invoices-generated
# 0.829 -> 0.835, for 0.003 less on the held-out synthetic documents (0.944 -> 0.940).
EXCLUDE_FEATURES = (
    "q_sharpness_log", "q_contrast", "q_brightness", "q_noise", "q_skew_abs",
    "q_effective_resolution", "q_blockiness", "q_ink_ratio",
    "q_local_sharpness_log", "q_local_contrast", "q_local_noise", "q_local_ink_ratio",
)  # fmt: skip
# compact copy of the runs the shipped model was trained and evaluated on (kept out of the wheel)
RUNS_COPY = ROOT / "scripts" / "default_runs.jsonl.xz"
# the held-out documents by id, fixed (the ranker never trained on them either): a new extraction,
# partial or not, is evaluated on the same documents (those of them it extracted)
HELDOUT_IDS = ROOT / "scripts" / "heldout.json"
# Synthetic till receipts (a second document kind with a 4-field schema) train the model too, so
# that it has seen short schemas, unlabelled header fields and long multi-line addresses.
N_RECEIPTS = 1200
RECEIPT_SCAN_RATIO = 0.7
RECEIPT_RUNS_COPY = ROOT / "scripts" / "default_receipt_runs.jsonl.xz"
# Receipts of another seed whose scans are often faded thermal print (read again on restored
# rasters by ingestion, docs/ingestion.md step 8), with wrapped and tagged merchant names and
# tax-summary totals: training only (none held out), so the engine has seen restored pages, whose
# misread values look as legible as the rest (a fusion trained without them scored 10 restored
# SROIE receipts' wrong values high, 2026-12-06).
N_FADED = 300
FADED_SEED = 17
FADED_ARGS = ("--scan-ratio", "0.8", "--fade-ratio", "0.5", "--header-variety", "0.5",
              "--total-variety", "0.5")  # fmt: skip
FADED_RUNS_COPY = ROOT / "scripts" / "default_faded_runs.jsonl.xz"
# 300 more receipts that only train (seed 23): half print the merchant's name at the body text's
# size (half of those under a logo line), half wrap or tag it, half qualify their totals. On them
# the ranker makes the mistakes it makes on real tills (a name line read into the address, an
# address cut before its last line), which the seed-7 receipts, whose names are large and bold,
# rarely show the fusion model.
N_VARIETY = 300
VARIETY_SEED = 23
VARIETY_ARGS = ("--scan-ratio", "0.7", "--name-variety", "0.5", "--header-variety", "0.5",
                "--total-variety", "0.5")  # fmt: skip
VARIETY_RUNS_COPY = ROOT / "scripts" / "default_variety_runs.jsonl.xz"
# 300 more receipts that only train (seed 29): 60 % print the address as a comma-separated run,
# every line but the last ending in a comma (half of them wrapped at the commas into short lines),
# as many tills do; the others' styles are drawn as for the variety set at lower shares. On them
# the ranker sometimes stops an address a line early, and such a reading ends in a comma
# (``val_open_end``), which no other synthetic receipt shows the fusion model.
N_LINES = 300
LINES_SEED = 29
LINES_ARGS = ("--scan-ratio", "0.7", "--address-variety", "0.6", "--name-variety", "0.3",
              "--header-variety", "0.3", "--total-variety", "0.3")  # fmt: skip
LINES_RUNS_COPY = ROOT / "scripts" / "default_lines_runs.jsonl.xz"
SETS = {
    "invoices": ("synth", "runs"),
    "receipts": ("receipts", "receipt-runs"),
    "faded": ("receipts-faded", "faded-runs"),
    "variety": ("receipts-variety", "variety-runs"),
    "lines": ("receipts-lines", "lines-runs"),
}


def synth(work: Path) -> None:
    for folder, seed, extra in (
        ("synth", SEED, ["--n", str(N_DOCS), "--scan-ratio", str(SCAN_RATIO)]),
        ("receipts", SEED, ["--n", str(N_RECEIPTS), "--scan-ratio", str(RECEIPT_SCAN_RATIO),
                            "--kind", "receipt"]),
        ("receipts-faded", FADED_SEED, ["--n", str(N_FADED), "--kind", "receipt", *FADED_ARGS]),
        ("receipts-variety", VARIETY_SEED,
         ["--n", str(N_VARIETY), "--kind", "receipt", *VARIETY_ARGS]),
        ("receipts-lines", LINES_SEED, ["--n", str(N_LINES), "--kind", "receipt", *LINES_ARGS]),
    ):  # fmt: skip
        if (work / folder / "labels.jsonl").exists():
            print(f"synth: {folder} already there")
            continue
        subprocess.run(
            [sys.executable, "-m", "confidence.cli", "synth", str(work / folder), "--seed",
             str(seed), *extra],
            check=True,
        )  # fmt: skip


def extract(
    work: Path, shard: str, llm: str, which: str = "invoices", limit: int | None = None
) -> None:
    from confidence.calls.extract import extract_document
    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.errors import DocumentError
    from confidence.llm import make_client
    from confidence.readings import RunRecord

    k, n = (int(x) for x in shard.split("/"))
    folder, prefix = SETS[which]
    ds = Dataset.open(work / folder)
    out = work / f"{prefix}-{k}.jsonl"
    # every shard file counts, so the work can be re-sharded (e.g. 0/2 -> 0/4 + 2/4) mid-way
    done = set()
    for p in work.glob(f"{prefix}-[0-9]*.jsonl"):
        done |= {json.loads(x)["doc_id"] for x in p.read_text().splitlines() if x.strip()}
    # held-out documents first, then the others in corpus order; --limit N keeps the first N of
    # that order (the same for every shard), so a shorter extraction is still evaluated on the
    # whole held-out set and trains on the rest of its budget
    held = set(heldout_ids(which))
    records = [r for r in ds.records if r.doc_id in held]
    records += [r for r in ds.records if r.doc_id not in held]
    records = records[:limit] if limit is not None else records
    todo = [r for i, r in enumerate(records) if i % n == k and r.doc_id not in done]
    print(f"shard {shard}: {len(done)} done, {len(todo)} to go", flush=True)
    client = make_client(llm)
    cache = DocumentCache()
    with out.open("a", encoding="utf-8") as fh:
        for rec in todo:
            t = time.time()
            try:
                doc = cache.load(ds.path_of(rec), rec.doc_id)
                run = extract_document(doc, ds.schema, client)
            except DocumentError as e:
                run = RunRecord(rec.doc_id, None, None, status="error", error=str(e))
            fh.write(json.dumps(run.to_dict(), ensure_ascii=False) + "\n")
            fh.flush()
            print(f"{rec.doc_id} {run.status} {time.time() - t:.0f}s", flush=True)


def _merge(work: Path, prefix: str) -> tuple[Path, list[str]]:
    """Merge the shard files ``WORK/PREFIX-K.jsonl`` into ``WORK/PREFIX.jsonl.gz``."""
    merged = work / f"{prefix}.jsonl.gz"
    lines, seen = [], set()
    for p in sorted(work.glob(f"{prefix}-[0-9]*.jsonl")):  # shards only, not runs-<dataset>
        for x in p.read_text().splitlines():
            if x.strip() and (doc_id := json.loads(x)["doc_id"]) not in seen:
                seen.add(doc_id)  # a document extracted twice (re-sharding) counts once
                lines.append(x)
    with gzip.open(merged, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"merged {len(lines)} runs into {merged}")
    return merged, lines


def heldout_ids(which: str) -> list[str]:
    """Ids of the held-out documents of a set (``"invoices"`` or ``"receipts"``; none of the
    faded or variety receipts, which only train)."""
    return json.loads(HELDOUT_IDS.read_text()).get(which, [])


def _split(work: Path, folder: str, lines: list[str], which: str, names: tuple[str, str]):
    """Write train/test dataset folders (pointing at ``WORK/FOLDER/files``) of the extracted
    documents: the held-out ones (``scripts/heldout.json``) in the test folder."""
    from confidence.datasets.folder import Dataset

    ds = Dataset.open(work / folder)
    # documents whose extraction failed (e.g. a scan so degraded that OCR finds no words: a
    # clear per-document error) cannot be scored, so they are neither trained on nor held out
    have = {r["doc_id"] for r in map(json.loads, lines) if r.get("status") == "ok"}
    held = set(heldout_ids(which))
    test_ds = ds.subset([r.doc_id for r in ds.records if r.doc_id in have & held])
    train_ds = ds.subset([r.doc_id for r in ds.records if r.doc_id in have - held])
    for name, part in zip(names, (train_ds, test_ds), strict=True):
        d = work / name
        d.mkdir(exist_ok=True)
        (d / "schema.json").write_text((work / folder / "schema.json").read_text())
        recs = [r.to_dict() for r in part.records]
        for r in recs:  # point at the shared files folder
            r["file"] = str((work / folder / r["file"]).resolve())
        (d / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def train(work: Path, model_out: Path = MODEL) -> None:
    if model_out.resolve() == (work / "model").resolve():
        # train writes its working copy there and regenerates --model-out whole
        raise SystemExit(f"--model-out must not be {work / 'model'}, the working copy's folder")
    merged, lines = _merge(work, "runs")
    r_merged, r_lines = _merge(work, "receipt-runs")
    _split(work, "synth", lines, "invoices", ("split-train", "split-test"))
    _split(work, "receipts", r_lines, "receipts", ("split-rtrain", "split-rtest"))
    cli = [sys.executable, "-m", "confidence.cli"]
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    tmp_model = work / "model"
    shutil.rmtree(tmp_model, ignore_errors=True)  # no stale file of an earlier run in the copy
    train_sets = [str(work / "split-train"), str(work / "split-rtrain")]
    runs = [str(merged), str(r_merged)]
    extra: dict[str, tuple[Path, list[str]]] = {}  # the faded and variety receipts train only
    for which, tag in (("faded", "f"), ("variety", "v"), ("lines", "l")):
        folder, prefix = SETS[which]
        if list(work.glob(f"{prefix}-[0-9]*.jsonl")):
            extra[which] = _merge(work, prefix)
            _split(work, folder, extra[which][1], which, (f"split-{tag}train", f"split-{tag}test"))
            train_sets.append(str(work / f"split-{tag}train"))
            runs.append(str(extra[which][0]))
    # --single-reading: the fusion also learns from one-reading copies of the training runs (the
    # Hunter with the library's layout Mapper, the Hunter alone with and without its page), read the
    # way `score` reads a third-party pipeline's records, so such records are not scored by a
    # model that only ever saw two LLM readings (issue 12 item 5; benchmarks/bench_byo.py)
    # the cross-fitted evaluation needs no model: it runs beside the training, and the two
    # held-out evaluations beside each other (two cores)
    crossfit = subprocess.Popen(
        [*cli, "evaluate", *train_sets, "--runs", *runs, "--out", str(work / "eval-crossfit"),
         "--exclude-features", *EXCLUDE_FEATURES, "--quiet"],
        env=env,
    )  # fmt: skip
    subprocess.run(
        [*cli, "train", *train_sets, "--runs", *runs, "--out", str(tmp_model), "--seed",
         str(SEED), "--target-accuracy", str(TARGET_ACCURACY), "--single-reading",
         "--exclude-features", *EXCLUDE_FEATURES, "--quiet"],
        check=True, env=env,
    )  # fmt: skip
    held = []
    for test, out in (("split-test", "eval-heldout"), ("split-rtest", "eval-heldout-receipts")):
        held.append(subprocess.Popen(
            [*cli, "evaluate", str(work / test), "--runs", *runs, "--model", str(tmp_model),
             "--out", str(work / out), "--quiet"],
            env=env,
        ))  # fmt: skip
    for proc in (*held, crossfit):
        if proc.wait() != 0:
            raise SystemExit(f"{' '.join(map(str, proc.args))} failed (exit {proc.returncode})")
    if model_out.exists():  # the folder is regenerated whole: no stale file outside the manifest
        shutil.rmtree(model_out)
    model_out.mkdir(parents=True)
    for f in tmp_model.iterdir():
        shutil.copy2(f, model_out / f.name)
    # the runs live beside this script, not in the package: they are for rebuilding, not scoring
    RUNS_COPY.parent.mkdir(parents=True, exist_ok=True)
    _compact_runs(merged, RUNS_COPY)
    _compact_runs(r_merged, RECEIPT_RUNS_COPY)
    for which, copy in (
        ("faded", FADED_RUNS_COPY),
        ("variety", VARIETY_RUNS_COPY),
        ("lines", LINES_RUNS_COPY),
    ):
        if which in extra:
            _compact_runs(extra[which][0], copy)
    shutil.copy2(work / "eval-heldout" / "metrics.json", model_out / "heldout_metrics.json")
    shutil.copy2(
        work / "eval-heldout-receipts" / "metrics.json",
        model_out / "heldout_receipts_metrics.json",
    )
    shutil.copy2(work / "eval-crossfit" / "metrics.json", model_out / "crossfit_metrics.json")
    from confidence.persistence import attach

    # the manifest covers every file of the model folder (a changed byte is refused at load)
    # trained on two schemas, the model keeps none: ship the invoice one for `score` to use
    shutil.copy2(work / "split-train" / "schema.json", model_out / "schema.json")
    attach(model_out, "heldout_metrics.json", "heldout_receipts_metrics.json",
           "crossfit_metrics.json", "schema.json")  # fmt: skip
    n_extra = {k: len(v[1]) for k, v in extra.items()}
    write_card(work, model_out, len(lines), len(r_lines), n_extra.get("faded", 0),
               n_extra.get("variety", 0), n_extra.get("lines", 0))  # fmt: skip
    attach(model_out, "MODEL_CARD.md")
    print(f"model and MODEL_CARD.md written to {model_out}")


def _round(o, nd: int = 4):
    if isinstance(o, float):
        return round(o, nd)
    if isinstance(o, list):
        return [_round(x, nd) for x in o]
    if isinstance(o, dict):
        return {k: _round(v, nd) for k, v in o.items()}
    return o


def _compact_runs(src: Path, dst: Path) -> None:
    """Copy runs without the raw completions' per-token lists (the field readings keep their own
    aligned tokens, which is all the features read) and with numbers rounded to 1e-4, so the
    committed copy stays small. Measured (2026-12-03, second session, pages read on a fresh
    machine): the shipped model's held-out invoice AUROC is the same from the rounded copy as from
    the full runs (0.929) and AURC 0.0248 vs 0.0247; held-out receipts AUROC 0.938 vs 0.942."""
    # xz: a third smaller than gzip -9 on these files (3.6 vs 5.2 MB); read_runs reads both
    with (
        gzip.open(src, "rt", encoding="utf-8") as fin,
        lzma.open(dst, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as fout,
    ):
        for line in fin:
            if not line.strip():
                continue
            rec = json.loads(line)
            for call in [rec.get("hunter"), rec.get("mapper"), *rec.get("samples", [])]:
                for comp in (call or {}).get("completions", []):
                    comp["tokens"] = None
            fout.write(json.dumps(_round(rec), ensure_ascii=False, separators=(",", ":")) + "\n")


def _faded_line(n: int) -> str:
    if not n:
        return "No faded receipts (the `faded` set was not extracted)."
    return (
        f"{N_FADED} synthetic till receipts from `extractconf synth --kind receipt --seed "
        f"{FADED_SEED} {' '.join(FADED_ARGS)}` (faded thermal print, wrapped and tagged "
        f"merchant names, tax-summary totals), training only ({n} documents, "
        "`scripts/default_faded_runs.jsonl.xz`)."
    )


def _variety_line(n: int) -> str:
    if not n:
        return "No variety receipts (the `variety` set was not extracted)."
    return (
        f"{N_VARIETY} synthetic till receipts from `extractconf synth --kind receipt --seed "
        f"{VARIETY_SEED} {' '.join(VARIETY_ARGS)}` (merchant names at the body text's size or "
        f"under a logo line, wrapped and tagged names, tax-summary totals), training only ({n} "
        "documents, `scripts/default_variety_runs.jsonl.xz`)."
    )


def _lines_line(n: int) -> str:
    if not n:
        return "No comma-run address receipts (the `lines` set was not extracted)."
    return (
        f"{N_LINES} synthetic till receipts from `extractconf synth --kind receipt --seed "
        f"{LINES_SEED} {' '.join(LINES_ARGS)}` (addresses printed as comma-separated runs, every "
        f"line but the last ending in a comma), training only ({n} documents, "
        "`scripts/default_lines_runs.jsonl.xz`)."
    )


def _split_words(metrics: dict) -> str:
    nd = metrics["n_documents"]
    if metrics.get("calibrated_out_of_fold"):
        return (
            f"split again: {nd['fusion']} documents for the fusion model and for the calibrator, "
            "fitted on their out-of-fold scores from the fusion's cross-validation folds; "
            f"{nd['thresholds']} threshold documents"
        )
    return (
        f"split again {nd['fusion']} fusion / {nd['calibration']} calibration / "
        f"{nd['thresholds']} threshold documents"
    )


def _row(name: str, m: dict) -> str:
    def f(v, d=3):
        return "-" if v is None else f"{v:.{d}f}"

    return (
        f"| {name} | {f(m['auroc'])} | {f(m['aurc'], 4)} | {f(m.get('excess_aurc'), 4)} "
        f"| {f(m['coverage_at_accuracy_0.99'])} "
        f"| {f(m['coverage_at_accuracy_0.99_of_oracle'])} | {f(m['ece'])} | {f(m['brier'])} "
        f"| {f(m['llm_calls_per_doc'], 1)} |"
    )


def _cross_section(cross, table) -> str:
    if cross is None:
        return (
            "## Cross-fitted over the training documents\n\nNot measured for this model "
            "(`evaluate` of the training sets was not run to the end)."
        )
    return (
        f"## Cross-fitted over the training documents ({cross['n_documents']} documents, "
        f"5 folds)\n\n{table(cross)}"
    )


def write_card(
    work: Path,
    model_out: Path,
    n_runs: int,
    n_receipt_runs: int,
    n_faded_runs: int = 0,
    n_variety_runs: int = 0,
    n_lines_runs: int = 0,
) -> None:
    """MODEL_CARD.md from the engine metadata and the three evaluations."""
    from confidence.engine import ConfidenceEngine

    engine = ConfidenceEngine.load(model_out)
    meta = engine.to_dict()
    held = json.loads((model_out / "heldout_metrics.json").read_text())
    held_r = json.loads((model_out / "heldout_receipts_metrics.json").read_text())
    cross_file = model_out / "crossfit_metrics.json"
    cross = json.loads(cross_file.read_text()) if cross_file.exists() else None
    head = (
        "| method | AUROC | AURC | excess AURC | cov@99% | cov@99% / oracle | ECE | Brier "
        "| LLM calls/doc |"
    )
    sep = "|---" * 9 + "|"
    dom = getattr(engine, "domain_", None)
    domain = "No out-of-domain reference (too few documents)."
    if dom is not None:
        per = ", ".join(f"`{k}` {c.n_documents} documents" for k, c in sorted(dom.schemas_.items()))
        domain = f"""## Out-of-domain reference

`domain.json`: rank sketch of {len(dom.columns)} columns of the training documents' feature rows
(no field-type one-hot), held-out distances kept per schema (field-set fingerprints:
{per}); a document of another schema is compared with the pooled distances, with a warning
(`docs/monitoring.md`)."""

    def table(m):
        rows = sorted(m["methods"].items(), key=lambda kv: -(kv[1]["auroc"] or 0))
        return "\n".join([head, sep, *(_row(k, v) for k, v in rows)])

    th = engine.thresholds_.to_dict()
    accepted = [k for k, v in th["fields"].items() if v["threshold"] is not None]
    certified = ", ".join(accepted) or (
        "none (too few calibration samples to certify the target: every field goes to review "
        "until `extractconf tune` runs on more labelled documents)"
    )
    fail = held["methods"]["extractconf"]["failure_rate"]
    text = f"""# Default extractconf model

Shipped in `confidence/models/default/`, loaded by `ConfidenceEngine.load()` and by the CLI when
no `--model` is given. Rebuild it with `scripts/train_default.py` (synth -> extract -> train).

## Training data

* {N_DOCS} synthetic invoices from `extractconf synth --seed {SEED} --scan-ratio {SCAN_RATIO}`
  (en/de/fr, all layout families; {int(SCAN_RATIO * 100)} % degraded scans), 21 typed fields.
* Hunter and Mapper readings from the embedded SmolLM2-135M-Instruct model (`--llm local`: the
  Hunter chooses among the candidate ranker's top values, the Mapper is the ranker's reading
  with its tokens scored by the LLM; the ranker of `confidence/models/ranker`, with the
  value-kind and page-arithmetic candidate features since 2026-12-03, `docs/calls.md`; its
  value-kinds classifier knows the names and addresses of 20 more Faker locales; the candidates
  and pages of 2026-12-06: pages of ingestion version 8, faint print read again restored,
  digit-heavy payment terms, labels after narrow column gaps; the runs whose reading changed
  since, with ingestion versions 9-10 and the address rule of 2026-12-07, extracted again; the
  features read pages of ingestion version 11, whose words with a digit are also read alone,
  `docs/ingestion.md`) for the
  **{n_runs}**
  documents extracted so far
  (`scripts/default_runs.jsonl.xz` in the source repository, the exact runs used; documents
  whose extraction failed, e.g. scans where OCR finds no words, are left out). Extraction took
  about 15 s per invoice per process, OCR included, two processes on the 2-core build machine
  with other jobs on it (2026-12-06; the 200 held-out invoices are the runs of that day's
  `extractconf extract`);
  `scripts/train_default.py extract` resumes and can be re-sharded.
* {N_RECEIPTS} synthetic till receipts from `extractconf synth --kind receipt --seed {SEED}
  --scan-ratio {RECEIPT_SCAN_RATIO}` (merchant name, merchant address, purchase date, total),
  read the same way ({n_receipt_runs} documents, `scripts/default_receipt_runs.jsonl.xz`; 2.2 s
  per receipt per process, 2026-12-06).
* {_faded_line(n_faded_runs)} {_variety_line(n_variety_runs)} {_lines_line(n_lines_runs)} No
  real document was used for training.
* {held["n_documents"]} invoices and {held_r["n_documents"]} receipts are held out; the others
  train the engine ({_split_words(meta["metrics"])}).

## Model

LightGBM fusion over {len(meta["feature_names"])} features (disagreement, logprobs, arithmetic
consistency of each reading and values read twice, OCR evidence, relative blur, layout,
field-type one-hot, the layout reader's probability of its choice, the value's shape and whether
it reads like a value of its field's kind (a character n-gram classifier trained on synthetic
documents of another seed and on company names, person names and addresses drawn from the Faker
locales of `NAME_LOCALES`, `confidence/models/value_kinds`, `scripts/train_value_kinds.py`);
never the field name by itself — see `docs/features.md`), trained also on one-reading copies
of the training runs (Hunter + the library's layout Mapper; Hunter alone with and without its page:
`train --single-reading`), without the absolute image-quality measurements
({", ".join(f"`{p}`" for p in meta["params"]["exclude_features"])}; `train --exclude-features`:
they describe the generator's simulated scanner more than the value, `docs/features.md`); it
keeps `q_local_sharpness_rel`, whether the value sits in a blurrier region than its page,
`{meta["params"]["calibrator"]}` calibration, per-field thresholds for
{meta["params"]["target_accuracy"]:.0%} accuracy with probability
{meta["params"]["confidence_level"]:.0%} (Learn then Test). Fields with a threshold:
{certified}.

{domain}

## Held-out synthetic documents

{held["n_documents"]} documents, {held["n_fields"]} fields, failure rate {fail:.1%}.

{table(held)}

Oracle AURC (correct fields ranked first; no method can go below it):
{held["methods"]["extractconf"]["aurc_oracle"]:.4f}. Excess AURC = AURC - oracle AURC.

Routing on these documents: {json.dumps(held["routing"])}

## Held-out synthetic receipts

{held_r["n_documents"]} documents, {held_r["n_fields"]} fields, failure rate
{held_r["methods"]["extractconf"]["failure_rate"]:.1%}.

{table(held_r)}

Routing on these documents: {json.dumps(held_r["routing"])}

{_cross_section(cross, table)}

Baselines missing for a field (e.g. an empty value has no value tokens) score 0.0, the lowest
value. Methods absent from a table had no data in the runs (no samples / verbalized calls).

## Limits

* Trained on synthetic invoices and receipts only; expect lower discrimination on real
  documents of other kinds, recalibrate (`engine.recalibrate(..., calibrator="lasso")`) and
  re-tune thresholds (`extractconf tune`) on a few dozen labelled documents of your own.
* The reported reading (the ranker's Mapper value where it is given, else the Hunter's) is wrong
  for {fail:.0%} of the held-out invoice fields and
  {held_r["methods"]["extractconf"]["failure_rate"]:.0%} of the receipt fields; that is the floor
  of every method's AURC and caps coverage at 99 % accuracy. A stronger extraction changes both
  (retrain on its runs).
* Features from other LLMs (logprob scales) differ from SmolLM2's; retrain for another model.
"""
    (model_out / "MODEL_CARD.md").write_text(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage", choices=("synth", "extract", "train"))
    ap.add_argument("--work", type=Path, default=Path("/work/runs"))
    ap.add_argument("--shard", default="0/1", help="K/N: this process extracts docs i %% N == K")
    ap.add_argument("--llm", default="local")
    ap.add_argument("--set", choices=tuple(SETS), default="invoices", help="what extract reads")
    ap.add_argument(
        "--limit", type=int, default=None, help="extract only the first N documents of the set"
    )
    ap.add_argument("--model-out", type=Path, default=MODEL, help="where train writes the model")
    a = ap.parse_args(argv)
    a.work.mkdir(parents=True, exist_ok=True)
    if a.stage == "synth":
        synth(a.work)
    elif a.stage == "extract":
        extract(a.work, a.shard, a.llm, a.set, a.limit)
    else:
        train(a.work, a.model_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
