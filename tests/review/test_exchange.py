"""Export the queue and import decisions from another labelling tool, through the CLI."""

from __future__ import annotations

import csv
import json

import pytest

from confidence.cli import main
from confidence.review.log import read_log
from tests.fixtures.review import SCRIPT, row

ROWS = [
    row("a", "total", "9.00", 0.98, decision="accept"),
    row("a", "date", "2024-01-01", 0.40, field_type="date"),
    row("b", "total", "1.00", 0.10, reasons=["x", "y"]),
    row("b", "vendor", SCRIPT, 0.95, decision="accept", audit=True, p_sample=0.05),
    row("c", "total", None, None),
]


@pytest.fixture
def scored(tmp_path):
    p = tmp_path / "scored.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return p


def _read_csv(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_export_csv_then_import_filled_rows(tmp_path, scored, capsys):
    out = tmp_path / "queue.csv"
    assert main(["review", str(scored), "--export", str(out)]) == 0
    rows = _read_csv(out)
    assert [(r["doc_id"], r["field"]) for r in rows] == [
        ("c", "total"), ("b", "total"), ("a", "date"), ("b", "vendor"),
    ]  # fmt: skip
    assert rows[1]["reasons"] == "x; y" and rows[3]["audit"] == "True"
    assert rows[3]["shown_value"] == SCRIPT and rows[3]["p_sample"] == "0.05"
    assert all(r["action"] == "" and r["final_value"] == "" for r in rows)

    rows[0].update(action="absent")
    rows[1].update(action="correct", final_value="1.50", reviewer="bo")
    rows[3].update(action="accept")
    # rows[2] left blank: not reviewed yet
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    log = tmp_path / "review.jsonl"
    assert main(["review", str(scored), "--import", str(filled), "--log", str(log)]) == 0
    got = {(d.doc_id, d.field): d for d in read_log(log)}
    assert set(got) == {("c", "total"), ("b", "total"), ("b", "vendor")}
    assert got[("c", "total")].final_value is None
    assert (got[("b", "total")].final_value, got[("b", "total")].reviewer) == ("1.50", "bo")
    audit = got[("b", "vendor")]
    assert audit.audit and audit.p_sample == 0.05 and audit.final_value == SCRIPT
    assert "imported 3 decisions" in capsys.readouterr().out

    # importing the same file again logs nothing twice
    assert main(["review", str(scored), "--import", str(filled), "--log", str(log)]) == 0
    assert len(log.read_text().splitlines()) == 3
    # the next export has only what is left
    again = tmp_path / "left.jsonl"
    assert main(["review", str(scored), "--export", str(again), "--log", str(log)]) == 0
    left = [json.loads(x) for x in again.read_text().splitlines()]
    assert [(r["doc_id"], r["field"]) for r in left] == [("a", "date")]
    assert left[0]["reasons"] == ["Hunter and Mapper disagree"]


def test_import_jsonl_with_bad_rows_names_the_line(tmp_path, scored, capsys):
    bad = tmp_path / "d.jsonl"
    good = {"doc_id": "a", "field": "date", "action": "accept"}
    bad.write_text(json.dumps(good) + "\n" + json.dumps({**good, "doc_id": "zz"}) + "\n")
    log = tmp_path / "review.jsonl"
    assert main(["review", str(scored), "--import", str(bad), "--log", str(log)]) == 2
    assert "d.jsonl:2: zz/date is not a row of the scored file" in capsys.readouterr().err
    assert not log.exists()  # nothing appended when any row is bad
    bad.write_text(json.dumps({**good, "action": "correct"}) + "\n")
    assert main(["review", str(scored), "--import", str(bad), "--log", str(log)]) == 2
    assert "d.jsonl:1: a/date: a 'correct' decision needs a final_value" in capsys.readouterr().err


def test_review_without_documents_or_with_bad_suffix_is_refused(tmp_path, scored, capsys):
    assert main(["review", str(scored)]) == 2
    assert "--documents" in capsys.readouterr().err
    assert main(["review", str(scored), "--export", str(tmp_path / "q.txt")]) == 2
    assert "use a .csv or .jsonl file" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_value_with_a_unicode_line_separator_survives_export_and_import(tmp_path, fmt):
    """``str.splitlines`` cuts at U+2028 and U+0085: a value holding one (OCR of a name on two
    lines) must not split a JSONL line or a CSV row in two."""
    from confidence.output import write_rows

    scored = tmp_path / "scored.jsonl"
    write_rows(scored, [row("a", "vendor", "Acme\u2028Ltd", 0.2),
                        row("b", "vendor", "Beta\u0085Co", 0.3)])  # fmt: skip
    queue = tmp_path / f"queue.{fmt}"
    assert main(["review", str(scored), "--export", str(queue)]) == 0
    if fmt == "jsonl":
        rows = [json.loads(x) for x in queue.read_text(encoding="utf-8").split("\n") if x]
        for r in rows:
            r["action"] = "accept"
        queue.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    else:
        with queue.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            r["action"] = "accept"
        with queue.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    log = tmp_path / "review.jsonl"
    assert main(["review", str(scored), "--import", str(queue), "--log", str(log)]) == 0
    got = {d.doc_id: d.final_value for d in read_log(log)}
    assert got == {"a": "Acme\u2028Ltd", "b": "Beta\u0085Co"}
