"""extractconf monitor: no false alarms on same-batch pairs, drift flagged, guarantee checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence.cli import main
from confidence.monitoring import audit_accuracy, holm, monitor, psi, read_rows
from confidence.report.monitoring import write_monitoring_html

FIELDS = ("total", "date", "vendor", "number")


def batch(rng, n_docs, *, degraded=False, prints=None):
    """Simulated scored rows: clean digital documents, or heavily degraded scans (lower and
    wider confidences, lower OCR confidence feature)."""
    rows = []
    for i in range(n_docs):
        for f in FIELDS:
            c = rng.beta(2, 5) if degraded else rng.beta(8, 2)
            ocr = rng.uniform(0.3, 0.8) if degraded else rng.uniform(0.9, 1.0)
            rows.append(
                {
                    "doc_id": f"d{i}",
                    "field": f,
                    "confidence": float(c),
                    "decision": "accept" if c >= 0.8 else "review",
                    "feature.ocr_h_conf_mean": float(ocr),
                    "group": "scan" if degraded else "digital",
                    **(prints or {"model_sha": "m1", "thresholds_sha": "t1", "llm": "smol"}),
                }
            )
    return rows


def test_holm_and_psi_hand_computed():
    assert holm([0.01, 0.04, 0.03]).tolist() == [0.03, 0.06, 0.06]
    assert holm([0.5]).tolist() == [0.5]
    x = np.linspace(0, 1, 500)
    assert psi(x, x) == 0.0
    assert psi(x, x**3) > psi(x, x**1.2) > 0


def test_no_drift_pairs_rarely_alarm():
    """Two samples of the same batch: an alarm in at most 5 % of 200 resamples."""
    rng = np.random.default_rng(0)
    pool = batch(rng, 400)
    docs = np.array(sorted({r["doc_id"] for r in pool}))
    by_doc: dict[str, list] = {}
    for r in pool:
        by_doc.setdefault(r["doc_id"], []).append(r)
    alarms = 0
    for _ in range(200):
        perm = rng.permutation(docs)
        a = [r for d in perm[:100] for r in by_doc[d]]
        b = [r for d in perm[100:200] for r in by_doc[d]]
        alarms += monitor(a, b)["verdict"] != "ok"
    assert alarms / 200 <= 0.05


def test_clear_drift_is_flagged_per_field_and_group():
    rng = np.random.default_rng(1)
    rep = monitor(batch(rng, 100), batch(rng, 100, degraded=True), group="group")
    assert rep["verdict"] == "drift" and rep["exit_code"] == 1
    drifted = {(t["field"], t["column"]) for t in rep["drifted"]}
    assert {(f, "confidence") for f in FIELDS} <= drifted
    assert {(f, "feature.ocr_h_conf_mean") for f in FIELDS} <= drifted
    assert any(t["kind"] == "accepted_share" for t in rep["drifted"])


def test_fingerprint_change_is_reported():
    rng = np.random.default_rng(2)
    new = {"model_sha": "m1", "thresholds_sha": "t2", "llm": "gpt"}
    rep = monitor(batch(rng, 60), batch(rng, 60, prints=new))
    assert rep["changes"] == ["thresholds_sha", "llm"]
    assert rep["verdict"] == "drift"


def reviews_for(rows, n_wrong, n=200):
    acc = [r for r in rows if r["decision"] == "accept"][:n]
    return [
        {
            "doc_id": r["doc_id"],
            "field": r["field"],
            "shown_value": "x",
            "final_value": "y" if i < n_wrong else "x",
            "action": "correct" if i < n_wrong else "accept",
            "audit": True,
            "p_sample": 0.05,
            "reviewer": "t",
            "time": "2026-01-01T00:00:00Z",
        }
        for i, r in enumerate(acc)
    ]


def test_injected_accuracy_drop_is_guarantee_violated():
    rng = np.random.default_rng(3)
    ref, cur = batch(rng, 150), batch(rng, 150)
    fine = monitor(ref, cur, reviews_for(cur, n_wrong=8), target=0.9)
    assert fine["verdict"] == "ok" and fine["audit"]["n"] == 200
    bad = monitor(ref, cur, reviews_for(cur, n_wrong=60), target=0.9)
    assert bad["verdict"] == "guarantee violated"
    lo, hi = bad["audit"]["interval"]
    assert lo < 0.7 < hi < 0.9


def test_audit_ignores_skips_reviewed_fields_and_non_audits():
    rows = [{"doc_id": "a", "field": "f", "decision": "accept"},
            {"doc_id": "b", "field": "f", "decision": "review"}]  # fmt: skip
    revs = [
        {"doc_id": "a", "field": "f", "action": "skip", "audit": True},
        {"doc_id": "b", "field": "f", "action": "correct", "audit": True, "final_value": "z"},
        {"doc_id": "a", "field": "f", "action": "correct", "audit": False, "final_value": "z"},
    ]
    assert audit_accuracy(rows, revs, target=0.9)["n"] == 0


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_cli_end_to_end_exit_codes(tmp_path, capsys):
    rng = np.random.default_rng(4)
    ref = _write(tmp_path / "ref.jsonl", batch(rng, 80))
    same = _write(tmp_path / "same.jsonl", batch(rng, 80))
    scans = _write(tmp_path / "scans.jsonl", batch(rng, 80, degraded=True))
    cur_rows = batch(rng, 120)
    cur = _write(tmp_path / "cur.jsonl", cur_rows)
    revs = _write(tmp_path / "reviews.jsonl", reviews_for(cur_rows, n_wrong=60))

    out, html = tmp_path / "m.json", tmp_path / "m.html"
    assert main(["monitor", "--reference", ref, "--current", same, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["verdict"] == "ok"
    argv = ["monitor", "--reference", ref, "--current", scans, "--html", str(html)]
    assert main(argv) == 1
    assert '"verdict": "drift"' in capsys.readouterr().out
    assert "Monitoring" in html.read_text() and "drift" in html.read_text()
    assert main(["monitor", "--reference", ref, "--current", cur, "--reviews", revs]) == 1
    assert "guarantee violated" in capsys.readouterr().err
    assert main(["monitor", "--reference", ref, "--current", str(tmp_path / "nope.jsonl")]) == 2
    bad = _write(tmp_path / "bad.jsonl", [{"doc_id": "a"}])
    assert main(["monitor", "--reference", ref, "--current", bad]) == 2
    assert main(["monitor", "--reference", ref, "--current", same, "--level", "2"]) == 2


def test_read_rows_csv_parquet_roundtrip(tmp_path):
    import pandas as pd

    rows = batch(np.random.default_rng(5), 3)
    pd.DataFrame(rows).to_csv(tmp_path / "s.csv", index=False)
    pd.DataFrame(rows).to_parquet(tmp_path / "s.parquet")
    for name in ("s.csv", "s.parquet"):
        back = read_rows(tmp_path / name)
        assert len(back) == len(rows) and back[0]["field"] == "total"
        assert back[0]["confidence"] == pytest.approx(rows[0]["confidence"])


def test_html_page_is_self_contained(tmp_path):
    rng = np.random.default_rng(6)
    rep = monitor(batch(rng, 50), batch(rng, 50, degraded=True))
    text = write_monitoring_html(rep, tmp_path / "m.html").read_text()
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text


def test_monitor_report_becomes_a_section_of_the_evaluation_report(tmp_path):
    from confidence.report import build_report

    rng = np.random.default_rng(7)
    ref = _write(tmp_path / "ref.jsonl", batch(rng, 60))
    scans = _write(tmp_path / "scans.jsonl", batch(rng, 60, degraded=True))
    folder = tmp_path / "eval"
    folder.mkdir()
    rows = [
        {"doc_id": f"d{i}", "field": "total", "correct": i % 4 != 0,
         "extractconf": (i % 4 != 0) * 0.5 + i / 40}
        for i in range(20)
    ]  # fmt: skip
    (folder / "scores.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    before = build_report(folder).read_text()
    assert '<section id="monitoring">' in before and "extractconf monitor" in before
    argv = ["monitor", "--reference", ref, "--current", scans]
    assert main([*argv, "--out", str(folder / "monitor.json")]) == 1
    after = build_report(folder).read_text()
    section = after[after.index('<section id="monitoring">') :]
    section = section[: section.index("</section>")]
    assert "Verdict" in section and "drift" in section


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_rows_the_library_writes_read_back_as_written(tmp_path, suffix):
    """Values holding U+2028 / U+0085 (which ``str.splitlines`` cuts at) and ids of digits with
    leading zeros (which a CSV reader guesses are numbers) come back exactly."""
    from confidence.monitoring import read_rows
    from confidence.output import write_rows

    rows = [
        {"doc_id": "007", "field": "vendor", "value": "Acme\u2028Ltd", "confidence": 0.5},
        {"doc_id": "000", "field": "total", "value": "12\u008550", "confidence": None},
        {"doc_id": "042", "field": "id", "value": '0042, "quoted"\nnext line', "confidence": 1.0},
    ]
    path = tmp_path / f"rows{suffix}"
    write_rows(path, rows)
    back = read_rows(path)
    assert [(r["doc_id"], r["value"], r["confidence"]) for r in back] == [
        (r["doc_id"], r["value"], r["confidence"]) for r in rows
    ]
