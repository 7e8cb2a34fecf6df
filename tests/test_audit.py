"""Audit sampling: a seeded, order-free draw of accepted fields, through the engine and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence.audit import AUDIT_REASON, audit_mask, audit_uniforms, check_audit_rate
from confidence.cli import main
from confidence.engine import ConfidenceEngine
from tests.fixtures.engine import SCHEMA, lenient, make_runs


def test_draw_depends_on_the_pair_and_seed_only():
    docs = [f"d{i}" for i in range(200)]
    u = audit_uniforms(docs, ["total"] * 200, seed=3)
    perm = np.random.default_rng(0).permutation(200)
    v = audit_uniforms([docs[i] for i in perm], ["total"] * 200, seed=3)
    assert np.array_equal(u[perm], v)  # order and batching do not matter
    assert not np.array_equal(u, audit_uniforms(docs, ["total"] * 200, seed=4))
    assert not np.array_equal(u, audit_uniforms(docs, ["date"] * 200, seed=3))


def test_share_audited_matches_the_rate():
    u = audit_uniforms([f"d{i}" for i in range(20000)], ["f"] * 20000, seed=0)
    share = audit_mask(["accept"] * 20000, u, rate=0.02).mean()
    assert abs(share - 0.02) < 3 * np.sqrt(0.02 * 0.98 / 20000)
    assert not audit_mask(["review"] * 5, u[:5], rate=1.0).any()
    assert not audit_mask(["accept"] * 5, u[:5], rate=0.0).any()


def test_rate_validation():
    assert check_audit_rate("0.5") == 0.5
    for bad in (-0.1, 1.5, "x"):
        with pytest.raises(ValueError, match="between 0 and 1"):
            check_audit_rate(bad)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    labels = root / "labels.jsonl"
    rng = np.random.default_rng(0)
    with labels.open("w") as fh:
        for i in range(40):
            gold = {"invoice_number": f"INV-{1000 + i}", "invoice_date": f"2024-03-0{1 + i % 9}",
                    "vendor": "Acme Tools Ltd", "total": f"{rng.integers(10, 900)}.00",
                    "po_number": None}  # fmt: skip
            fh.write(json.dumps({"doc_id": f"d{i:03d}", "file": "x.pdf", "fields": gold}) + "\n")
    return make_runs(root, root / "runs.jsonl", seed=5)


def _records(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.filterwarnings("ignore:.*unlike the calibration documents")
def test_engine_marks_audited_rows(runs):
    eng = lenient(ConfidenceEngine.load())  # some fields accepted, whatever the shipped ones
    recs = _records(runs)
    plain = eng.score(recs, SCHEMA, explain=False)
    audited = eng.score(recs, SCHEMA, explain=True, audit_rate=0.5, audit_seed=1)
    n_acc = 0
    for a, b in zip(plain, audited, strict=True):
        assert b.audit_rate == 0.5
        if a.decision == "review":
            assert (b.decision, b.audit, b.p_sample) == ("review", False, 1.0)
        else:
            n_acc += 1
            assert b.p_sample == 0.5
            assert b.decision == ("review" if b.audit else "accept")
            if b.audit:
                assert b.reasons[0] == AUDIT_REASON
    assert n_acc > 10 and 0 < sum(s.audit for s in audited) < n_acc
    # a batch split in two draws the same audits
    halves = eng.score(recs[:20], SCHEMA, audit_rate=0.5, audit_seed=1, explain=False) + eng.score(
        recs[20:], SCHEMA, audit_rate=0.5, audit_seed=1, explain=False
    )
    same = {(s.doc_id, s.field) for s in audited if s.audit}
    assert {(s.doc_id, s.field) for s in halves if s.audit} == same
    assert all(s.p_sample == (0.0 if s.decision == "accept" else 1.0) for s in plain)


def test_cli_score_audit_columns(runs, tmp_path, capsys):
    schema = tmp_path / "schema.json"
    SCHEMA.save(schema)
    files = []
    for i in range(40):
        f = tmp_path / f"d{i:03d}.pdf"
        f.write_bytes(b"%PDF-1.4")
        files.append(str(f))
    out = tmp_path / "scored.jsonl"
    loose = lenient(ConfidenceEngine.load()).thresholds_.save(tmp_path / "thresholds.json")
    args = ["score", *files, "--runs", str(runs), "--schema", str(schema), "--no-documents",
            "--quiet", "--no-reasons", "--out", str(out), "--thresholds", str(loose)]  # fmt: skip
    assert main([*args, "--audit-rate", "0.3", "--audit-seed", "2"]) == 0
    rows = _records(out)
    assert {"audit", "p_sample", "audit_rate"} <= set(rows[0])
    audit = [r for r in rows if r["audit"]]
    assert audit and all(r["decision"] == "review" and r["p_sample"] == 0.3 for r in audit)
    assert "sampled for audit" in capsys.readouterr().out
    assert main([*args, "--audit-rate", "1.5"]) == 2
    assert "--audit-rate 1.5" in capsys.readouterr().err
