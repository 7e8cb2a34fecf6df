"""extractconf feedback: decisions + scored rows -> labelled dataset with sampling records."""

from __future__ import annotations

import json

import pytest

from confidence.cli import main
from confidence.datasets.folder import Dataset
from confidence.feedback import REVIEW_META, FeedbackSummary, build_feedback_dataset
from confidence.review.log import Decision, append_decision


def _row(doc, field, decision, *, threshold=0.9, p=1.0, audit=False, value="v"):
    return {"doc_id": doc, "field": field, "field_type": "text", "value": value,
            "confidence": 0.5, "decision": decision, "threshold": threshold, "status": "ok",
            "audit": audit, "p_sample": p, "audit_rate": 0.1}  # fmt: skip


@pytest.fixture
def setup(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for d in ("a", "b", "c"):
        (docs / f"{d}.pdf").write_bytes(b"%PDF-1.4 " + d.encode())
    rows = [
        _row("a", "total", "review"),
        _row("a", "vendor", "review", p=0.1, audit=True),
        _row("a", "date", "accept", p=0.1),
        _row("b", "total", "review", threshold=None),
        _row("b", "vendor", "review"),
        _row("c", "total", "accept", p=0.1),
        _row("c", "vendor", "review"),  # not decided yet
        _row("d", "total", "review"),  # no file for d
    ]
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = tmp_path / "review.jsonl"
    for d in (
        Decision("a", "total", "v", "v", "accept", "ana"),
        Decision("a", "vendor", "v", "w", "correct", "ana", audit=True, p_sample=0.1),
        Decision("b", "total", "v", None, "absent", "bo"),
        Decision("b", "vendor", "v", "x", "correct", "bo"),
        Decision("b", "vendor", "v", "v", "accept", "cy"),  # the last decision wins
        Decision("b", "vendor", "v", None, "skip", "di"),  # a skip is no decision
        Decision("zz", "total", "v", "v", "accept", "ana"),  # not in the scored file
        Decision("d", "total", "v", "v", "accept", "ana"),
    ):
        append_decision(log, d)
    return tmp_path, docs, scored, log


def test_labels_and_sampling_records(setup):
    tmp, docs, scored, log = setup
    summary = build_feedback_dataset(log, scored, tmp / "out", documents=docs)
    ds = Dataset.open(tmp / "out")
    assert [r.doc_id for r in ds.records] == ["a", "b", "c"]
    assert ds["a"].fields == {"total": "v", "vendor": "w"}  # date: unlabelled (no key)
    assert ds["b"].fields == {"total": None, "vendor": "v"}
    assert ds["c"].fields == {}
    meta = ds["a"].meta[REVIEW_META]
    assert (meta["total"]["p_sample"], meta["total"]["p_floor"]) == (1.0, 0.1)
    assert (meta["vendor"]["p_sample"], meta["vendor"]["audit"]) == (0.1, True)
    # a field without threshold was reviewed always: its design's floor is 1
    assert ds["b"].meta[REVIEW_META]["total"]["p_floor"] == 1.0
    assert (ds.path / ds["a"].file).read_bytes() == b"%PDF-1.4 a"
    assert summary.n_labelled == 4 and summary.n_audit == 1
    assert summary.n_pending == 1  # c/vendor
    assert dict(summary.actions) == {"accept": 2, "correct": 1, "absent": 1}
    assert {w for w, _ in summary.skipped} == {"zz/total", "d"}
    assert FeedbackSummary.from_dict(summary.to_dict()) == summary


def test_cli(setup, capsys):
    tmp, docs, scored, log = setup
    out = tmp / "cli"
    args = ["feedback", str(log), "--scored", str(scored), "--documents", str(docs),
            "--out", str(out)]  # fmt: skip
    assert main(args) == 1  # two decisions could not be used: named on stderr
    cap = capsys.readouterr()
    assert "zz/total: skipped" in cap.err and "d: skipped: no file" in cap.err
    assert "4 reviewed fields labelled" in cap.out and "1 fields routed to review" in cap.out
    assert main(args) == 2  # an existing dataset is not overwritten silently
    assert "already holds a dataset" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 1
    assert main(["feedback", str(tmp / "nope.jsonl"), *args[2:]]) == 2
