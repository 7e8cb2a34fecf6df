"""The loop through the CLI: score (audit) -> simulated reviewers from gold -> feedback ->
recalibrate -> score with the new model -> more reviews -> recalibrate again."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from confidence import persistence
from confidence.calibration.sequential import SequentialCertifier
from confidence.cli import main
from confidence.engine import ConfidenceEngine
from confidence.feedback import STATE_FILE
from confidence.feedback.simulate import gold_of, review_from_gold
from confidence.monitoring import read_rows
from tests.fixtures.engine import SCHEMA, make_dataset, make_runs

pytestmark = pytest.mark.filterwarnings("ignore:.*unlike the calibration documents")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("feedback")
    ds = make_dataset(root, n_docs=80, seed=4)
    runs = make_runs(ds, root / "runs.jsonl", seed=4)
    schema = root / "schema.json"
    SCHEMA.save(schema)
    return root, ds, runs, schema


def _score(work, model, first, last, out, rate):
    _, ds, runs, schema = work
    files = [str(ds / "files" / f"d{i:03d}.pdf") for i in range(first, last)]
    args = ["score", *files, "--runs", str(runs), "--schema", str(schema), "--out", str(out),
            "--no-documents", "--quiet", "--no-reasons", "--audit-rate", str(rate)]  # fmt: skip
    if model is not None:
        args += ["--model", str(model)]
    assert main(args) == 0
    return read_rows(out)


def _loop(work, model, scored, out_model, capsys, target=None):
    root, ds, runs, _ = work
    data = out_model.parent / f"{out_model.name}-data"
    assert main(["feedback", str(root / "review.jsonl"), "--scored", *map(str, scored),
                 "--documents", str(ds), "--out", str(data), "--overwrite"]) == 0  # fmt: skip
    args = ["recalibrate", "--data", str(data), "--runs", str(runs), "--out", str(out_model),
            "--no-documents", "--quiet"]  # fmt: skip
    if model is not None:
        args += ["--model", str(model)]
    if target is not None:
        args += ["--target-accuracy", str(target)]
    capsys.readouterr()
    assert main(args) == 0
    return capsys.readouterr().out


def test_review_feedback_recalibrate_loop(work, capsys):
    root, ds, _, _ = work
    gold = gold_of(ds)
    # day 1: the shipped model, 30% of its accepted fields audited
    s1 = _score(work, None, 0, 40, root / "s1.jsonl", 0.3)
    n1 = review_from_gold(s1, gold, root / "review.jsonl")
    out = _loop(work, None, [root / "s1.jsonl"], root / "m1", capsys, target=0.7)
    assert f"{n1} reviewed fields" in out and "calibrator isotonic refitted" in out
    for name in ("total", "vendor", "po_number"):
        assert name in out and ("locked" in out or "unlocked" in out)
    m1 = ConfidenceEngine.load(root / "m1")  # a full model folder: manifest checks pass
    man = json.loads((root / "m1" / "manifest.json").read_text())
    assert STATE_FILE in man["files"]
    cert = persistence.load(root / "m1" / STATE_FILE, expect=SequentialCertifier)
    assert sum(cert.n_reviews_.values()) == n1 and cert.target_accuracy == 0.7
    # an unlocked field's confidence threshold is its fused-score threshold through the
    # recalibrated calibrator; a locked one reviews everything
    for name, lam in cert.score_thresholds().items():
        thr = m1.thresholds_.thresholds_[name]
        if math.isfinite(lam):
            expect = m1.calibrator_.predict_proba(np.array([lam]))[0, 1]
            assert thr == pytest.approx(expect)
        else:
            assert thr == math.inf
    locked = {n for n, lam in cert.score_thresholds().items() if not math.isfinite(lam)}
    assert locked, "the small first batch should leave some field locked"

    # day 2: new documents scored with m1; locked fields are reviewed in full (p_sample 1)
    s2 = _score(work, root / "m1", 40, 80, root / "s2.jsonl", 0.2)
    for r in s2:
        if r["field"] in locked:
            assert (r["decision"], r["p_sample"], r["threshold"]) == ("review", 1.0, None)
    n2 = review_from_gold(s2, gold, root / "review.jsonl")
    out = _loop(work, root / "m1", [root / "s1.jsonl", root / "s2.jsonl"], root / "m2", capsys)
    cert2 = persistence.load(root / "m2" / STATE_FILE, expect=SequentialCertifier)
    # day-1 reviews are in the dataset again but counted once
    assert sum(cert2.n_reviews_.values()) == n1 + n2
    assert f"{n1 + n2} reviewed fields" in out
    for name in cert.score_thresholds():
        assert cert2.n_reviews_[name] >= cert.n_reviews_[name]
        assert np.all(cert2.crossed_[name] >= cert.crossed_[name])  # evidence only grows
    _score(work, root / "m2", 0, 10, root / "s3.jsonl", 0.0)

    # the guarantee's parameters cannot change once the test has started
    capsys.readouterr()
    args = ["recalibrate", "--model", str(root / "m2"), "--data", str(root / "m2-data"),
            "--runs", str(work[2]), "--out", str(root / "m3"), "--no-documents", "--quiet",
            "--target-accuracy", "0.95"]  # fmt: skip
    assert main(args) == 2
    assert "cannot be reused" in capsys.readouterr().err


def test_reviews_under_thresholds_without_audits_carry_no_evidence(work, tmp_path, capsys):
    _, ds, runs, _ = work
    rows = _score(work, None, 0, 20, tmp_path / "s.jsonl", 0.0)  # shipped thresholds, no audit
    log = tmp_path / "review.jsonl"
    assert review_from_gold(rows, gold_of(ds), log) > 0
    assert main(["feedback", str(log), "--scored", str(tmp_path / "s.jsonl"), "--documents",
                 str(ds), "--out", str(tmp_path / "data")]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["recalibrate", "--data", str(tmp_path / "data"), "--runs", str(runs), "--out",
                 str(tmp_path / "m"), "--no-documents", "--quiet"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "add no evidence" in out
    cert = persistence.load(tmp_path / "m" / STATE_FILE, expect=SequentialCertifier)
    with_threshold = {r["field"] for r in rows if r["threshold"] is not None}
    for name in with_threshold & set(cert.log_wealth_):
        assert not cert.log_wealth_[name].any()  # wealth still 1 everywhere
