"""Runs values and the one runs-file reader (issue 16, items 7 and 8), through what users call:
``extractconf score/evaluate``, :meth:`ConfidenceEngine.score` and :func:`confidence.read_runs`."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys

import pytest

from confidence import ConfidenceEngine, RunsFile, read_runs
from confidence.cli import main
from confidence.errors import DatasetError
from confidence.llm.base import TokenLogprob
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.sample import dataset_dir, runs_path
from confidence.schema import Field, Schema

SCHEMA = Schema("s", (Field("total", "amount"), Field("iban", "id")))


def sample_lines() -> list[dict]:
    with gzip.open(runs_path(), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def write_runs(path, lines: list[dict], *, tail: str = "") -> str:
    path.write_text("".join(json.dumps(d) + "\n" for d in lines) + tail, encoding="utf-8")
    return str(path)


def first_token(d: dict) -> dict:
    reading = next(r for r in d["hunter"]["fields"].values() if r.get("tokens"))
    return reading["tokens"][0]


def score(tmp_path, runs: str, *extra: str) -> tuple[int, str]:
    out = tmp_path / "scored.jsonl"
    argv = ["score", str(dataset_dir()), "--runs", runs, "--no-documents", "--quiet"]
    return main([*argv, "--out", str(out), *extra]), str(out)


@pytest.fixture(scope="module")
def engine():
    return ConfidenceEngine.load()


# -- item 7: values -------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan, 2.5])
def test_score_refuses_a_bad_logprob_naming_file_line_and_token(tmp_path, capsys, bad):
    lines = sample_lines()
    first_token(lines[1])["logprob"] = bad
    runs = write_runs(tmp_path / "runs.jsonl", lines)
    rc, _ = score(tmp_path, runs)
    err = capsys.readouterr().err
    assert rc == 2
    assert f"runs.jsonl:2: document {lines[1]['doc_id']}: hunter field" in err
    assert "must be a finite number <= 0" in err and "Traceback" not in err
    assert not (tmp_path / "scored.jsonl").exists()


def test_a_bad_top_alternative_is_refused_too(tmp_path):
    lines = sample_lines()
    first_token(lines[0])["top"][1][1] = math.nan
    with pytest.raises(DatasetError, match=r"runs.jsonl:1: .*logprob nan"):
        list(read_runs(write_runs(tmp_path / "runs.jsonl", lines)))


def test_evaluate_refuses_an_infinite_logprob(tmp_path, capsys):
    lines = sample_lines()
    first_token(lines[2])["logprob"] = -math.inf
    runs = write_runs(tmp_path / "runs.jsonl", lines)
    argv = ["evaluate", str(dataset_dir()), "--runs", runs, "--no-documents", "--quiet"]
    rc = main([*argv, "--model", "default", "--out", str(tmp_path / "eval")])
    err = capsys.readouterr().err
    assert rc == 2 and "runs.jsonl:3: " in err and "logprob -inf" in err
    assert not (tmp_path / "eval" / "metrics.json").exists()


@pytest.mark.parametrize(
    ("value", "kind"), [(["9.00", "10.00"], "list"), ({"a": 1}, "dict"), (True, "bool")]
)
def test_score_refuses_a_list_dict_or_bool_value(tmp_path, capsys, value, kind):
    lines = sample_lines()
    name = next(iter(lines[0]["mapper"]["fields"]))
    lines[0]["mapper"]["fields"][name]["value"] = value
    rc, _ = score(tmp_path, write_runs(tmp_path / "runs.jsonl", lines))
    err = capsys.readouterr().err
    assert rc == 2
    assert f"runs.jsonl:1: document synth-7-00000: mapper field {name!r}: value must be" in err
    assert f"got {kind}" in err


@pytest.mark.parametrize(
    ("value", "text"),
    [(9.0, "9.0"), (9, "9"), ("9.00", "9.00"), (1e21, "1000000000000000000000"),
     (1e-05, "0.00001")],
)  # fmt: skip
def test_engine_score_takes_a_number_as_a_value(engine, value, text):
    [row, _] = engine.score([{"doc_id": "a", "fields": {"total": value, "iban": None}}], SCHEMA)
    assert row.value == text and row.status == "ok" and 0 <= row.confidence <= 1


@pytest.mark.parametrize("value", [math.nan, math.inf, ["9.00"], {"v": 1}, False])
def test_engine_score_refuses_a_bad_third_party_value(engine, value):
    with pytest.raises(DatasetError, match=r"document a: field 'total': (value|an object value)"):
        engine.score([{"doc_id": "a", "fields": {"total": value}}], SCHEMA)


@pytest.mark.parametrize("bad", [math.inf, math.nan, 0.5])
def test_engine_score_refuses_bad_third_party_logprobs(engine, bad):
    value = {"value": "9.00", "logprobs": [{"token": "9", "logprob": -0.1}, {"token": ".00",
             "logprob": bad}]}  # fmt: skip
    with pytest.raises(DatasetError, match=r"document a: hunter field 'total': token 1 \('.00'\)"):
        engine.score([{"doc_id": "a", "fields": {"total": value}}], SCHEMA)


def test_engine_score_refuses_a_runs_line_dict_with_a_nan_logprob(engine):
    reading = FieldReading("9.00", (TokenLogprob("9.00", math.nan),))
    line = RunRecord("a", CallResult("hunter", {"total": reading}), None).to_dict()
    with pytest.raises(DatasetError, match="document a: hunter field 'total': token 0"):
        engine.score([line], SCHEMA)


def test_a_tiny_rounding_excess_above_zero_is_accepted(engine):
    value = {"value": "9.00", "logprobs": [{"token": "9.00", "logprob": 1e-9}]}
    [row] = engine.score(
        [{"doc_id": "a", "fields": {"total": value}}], Schema("s", (Field("total", "amount"),))
    )
    assert row.status == "ok"


# -- item 7: a doc_id twice in one file -----------------------------------------------------
def test_a_doc_id_recorded_ok_twice_is_an_error_naming_both_lines(tmp_path, capsys):
    lines = sample_lines()
    rc, _ = score(tmp_path, write_runs(tmp_path / "runs.jsonl", [*lines, lines[0]]))
    err = capsys.readouterr().err
    assert rc == 2
    assert "runs.jsonl:4: doc_id 'synth-7-00000' again (line 1 already holds its ok record" in err


def test_ok_then_failed_is_an_error(tmp_path):
    lines = sample_lines()
    failed = {"doc_id": lines[0]["doc_id"], "hunter": None, "mapper": None, "status": "error"}
    with pytest.raises(DatasetError, match=r"runs.jsonl:4: .* this one is error"):
        list(read_runs(write_runs(tmp_path / "runs.jsonl", [*lines, failed])))


@pytest.mark.parametrize("status", ["error", "partial"])
def test_a_later_line_replaces_a_failed_or_partial_one(tmp_path, status):
    lines = sample_lines()
    earlier = dict(lines[0], status=status, error="hunter failed: HTTP 500")
    runs = write_runs(tmp_path / "runs.jsonl", [earlier, *lines[1:], lines[0]])
    records = list(read_runs(runs))
    assert [r.doc_id for r in records] == [d["doc_id"] for d in lines]  # first-seen order
    assert records[0].status == "ok" and records[0].error is None


def test_an_old_ok_line_whose_calls_failed_is_replaced_by_its_retry(tmp_path):
    """Older runs files said ``ok`` for a document whose calls had all failed."""
    lines = sample_lines()
    failed = {"kind": "hunter", "fields": {}, "status": "error", "error": "HTTP 500"}
    old = dict(lines[0], hunter=failed, mapper=dict(failed, kind="mapper"), status="ok")
    records = list(read_runs(write_runs(tmp_path / "runs.jsonl", [old, *lines])))
    assert len(records) == 3 and records[0].hunter.status == "ok"


# -- item 8: a cut-short last line ----------------------------------------------------------
def test_score_skips_a_cut_short_last_line_with_a_warning(tmp_path, capsys):
    lines = sample_lines()
    runs = write_runs(tmp_path / "runs.jsonl", lines[:2], tail=json.dumps(lines[2])[:300])
    rc, out = score(tmp_path, runs)
    err = capsys.readouterr().err
    assert f"extractconf score: warning: {runs}: line 3 is cut short" in err and "skipped" in err
    rows = [json.loads(x) for x in open(out, encoding="utf-8")]
    by_doc = {r["doc_id"]: r["status"] for r in rows}
    assert by_doc["synth-7-00000"] == "ok" and by_doc["synth-7-00002"] == "error"
    assert rc == 1  # the document the cut line held counts as failed


def test_the_cut_short_warning_reaches_stderr_of_the_command(tmp_path):
    lines = sample_lines()
    runs = write_runs(tmp_path / "runs.jsonl", lines[:2], tail=json.dumps(lines[2])[:300])
    argv = ["score", str(dataset_dir()), "--runs", runs, "--no-documents", "--quiet"]
    argv += ["--out", str(tmp_path / "scored.csv")]
    done = subprocess.run(
        [sys.executable, "-m", "confidence.cli", *argv], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    assert f"{runs}: line 3 is cut short" in done.stderr
    assert "Traceback" not in done.stderr


def test_evaluate_skips_a_cut_short_last_line(tmp_path, capsys):
    lines = sample_lines()
    runs = write_runs(tmp_path / "runs.jsonl", lines[:2], tail=json.dumps(lines[2])[:100])
    argv = ["evaluate", str(dataset_dir()), "--runs", runs, "--no-documents", "--quiet"]
    rc = main([*argv, "--model", "default", "--out", str(tmp_path / "eval")])
    assert f"extractconf evaluate: warning: {runs}: line 3 is cut short" in capsys.readouterr().err
    assert rc == 0 and (tmp_path / "eval" / "metrics.json").exists()


def test_read_runs_warns_of_a_cut_short_last_line(tmp_path):
    lines = sample_lines()
    runs = write_runs(tmp_path / "runs.jsonl", lines[:2], tail=json.dumps(lines[2])[:100])
    with pytest.warns(UserWarning, match=r"runs.jsonl: line 3 is cut short .*; skipped"):
        assert len(list(read_runs(runs))) == 2


def test_a_malformed_line_in_the_middle_stays_an_error(tmp_path, capsys):
    lines = sample_lines()
    path = tmp_path / "runs.jsonl"
    body = [json.dumps(d) for d in lines]
    body[1] = body[1][:200]
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    rc, _ = score(tmp_path, str(path))
    assert rc == 2 and "runs.jsonl:2: not valid JSON" in capsys.readouterr().err


def test_a_cut_line_that_ends_the_file_with_a_newline_is_an_error(tmp_path):
    lines = sample_lines()
    path = write_runs(tmp_path / "runs.jsonl", lines[:2], tail=json.dumps(lines[2])[:100] + "\n")
    with pytest.raises(DatasetError, match=r"runs.jsonl:3: not valid JSON"):
        list(read_runs(path))


def test_extract_resuming_after_a_cut_line_leaves_a_file_every_command_reads(tmp_path):
    """The resumable writer drops the cut-short line before appending the redone document."""
    lines = sample_lines()
    runs = write_runs(tmp_path / "runs.jsonl", lines[:2], tail=json.dumps(lines[2])[:300])
    writer = RunsFile(runs)
    assert writer.done == {lines[0]["doc_id"], lines[1]["doc_id"]}
    with writer:
        writer.append(RunRecord.from_dict(lines[2]))
    assert [r.doc_id for r in read_runs(runs)] == [d["doc_id"] for d in lines]
    rc, _ = score(tmp_path, runs)
    assert rc == 0


# -- third-party records as pipelines send them (seventeenth session's sweep) ----------------
def test_a_record_the_pipeline_marks_failed_is_an_error_row(engine):
    rows = engine.score(
        [{"doc_id": "a", "status": "error", "error": "LLM timeout", "fields": {}},
         {"doc_id": "b", "fields": {"total": "9.00", "iban": None}}],
        SCHEMA,
    )  # fmt: skip
    assert [(r.doc_id, r.status) for r in rows] == [("a", "error")] * 2 + [("b", "ok")] * 2
    assert rows[0].error == "LLM timeout" and rows[0].confidence is None
    assert rows[0].decision == "review"


def test_engine_score_refuses_two_records_of_one_document(engine):
    recs = [{"doc_id": "a", "fields": {"total": "9.00"}}, {"doc_id": "a", "fields": {"total": "1"}}]
    with pytest.raises(DatasetError, match="doc_id 'a' in more than one record"):
        engine.score(recs, SCHEMA)


def test_documents_listed_in_another_order_than_the_records_are_warned_of(engine):
    from confidence.types import Document, Page

    recs = [{"doc_id": d, "fields": {"total": "9.00"}} for d in ("a", "b")]
    docs = [Document(d, f"{d}.pdf", (Page(1, 100, 100, (), "pdf", 72.0),)) for d in ("b", "a")]
    with pytest.warns(UserWarning, match=r"2 of 2 documents carry another doc_id .*'b' beside"):
        engine.score(recs, SCHEMA, docs)


def test_a_runs_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.jsonl"
    line = json.dumps({"doc_id": "a", "fields": {"total": "9"}})
    path.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    assert [r.doc_id for r in read_runs(path)] == ["a"]  # confidence.read_runs, as score reads


def test_score_says_which_records_name_documents_it_was_not_given(tmp_path, capsys):
    lines = sample_lines()
    stray = {"doc_id": "not-a-document", "fields": {"total": "9.00"}}
    code, _ = score(tmp_path, write_runs(tmp_path / "r.jsonl", [*lines, stray]))
    assert code == 0
    err = capsys.readouterr().err
    assert (
        "1 record(s) in --runs name documents not among the inputs and were not scored "
        "('not-a-document')" in err
    )
    score(tmp_path, write_runs(tmp_path / "r2.jsonl", lines))
    assert "not among the inputs" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "token",
    [{"logprob": -0.1}, {"token": "9"}, {"token": "9", "logprob": None}, "9",
     {"token": "9", "logprob": -0.1, "top": {"9": -0.1}},
     {"token": "9", "logprob": -0.1, "top": {"90": -0.1}}],
)  # fmt: skip
def test_a_malformed_logprob_token_is_refused_naming_field_and_token(engine, token):
    value = {"value": "9.00", "logprobs": [{"token": "9", "logprob": -0.1}, token]}
    with pytest.raises(DatasetError, match=r"document a: field 'total': logprob token 1 is not"):
        engine.score([{"doc_id": "a", "fields": {"total": value}}], SCHEMA)
