"""Faults reported as faults, through the command a user runs (issue 16, items 1, 2, 5, 9, 10).

Every case runs ``extractconf ...`` (``confidence.cli.main``) against a fault-injecting local
endpoint and checks what the user sees: the exit code (0 all ok, 1 some document partial or
failed, 2 bad invocation or unreadable input), one stderr line per failed document naming it and
the reason, and the status in runs.jsonl and in the scored rows.
"""

from __future__ import annotations

import json
import shutil

import pytest

from confidence.cli import main
from confidence.records import load_runs
from tests.fixtures.llm_servers import Act, FakeChatServer

FAST = ["--llm-timeout", "0.5", "--llm-retries", "0", "--quiet"]
GOOD = Act(text='{"amount_total_gross": "12.50"}')  # a reply that fills one schema field


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from confidence.datasets.synthetic import generate

    out = tmp_path_factory.mktemp("failures") / "ds"
    generate(out, 2, seed=5)
    return out


@pytest.fixture()
def server():
    s = FakeChatServer(GOOD)
    yield s
    s.close()


def _extract(dataset, out, url, *extra):
    return main(["extract", str(dataset), "--out", str(out), "--llm", url, "--llm-model", "m",
                 "--cache-dir", str(out.parent / "cache"), *FAST, *extra])  # fmt: skip


def _records(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.parametrize(
    "act",
    [None, Act(status=500), Act(raw=b"<html>not json</html>"), Act(delay=3.0)],
    ids=["unreachable", "http-500", "body-not-json", "hanging"],
)
def test_extract_failing_llm_is_a_failure_and_is_retried(dataset, tmp_path, server, act, capsys):
    out = tmp_path / "runs.jsonl"
    url = "http://127.0.0.1:9/v1" if act is None else server.base_url
    server.default = act or GOOD
    assert _extract(dataset, out, url) == 1
    err = capsys.readouterr().err.splitlines()
    recs = _records(out)
    assert [r["status"] for r in recs] == ["error", "error"]
    assert all("hunter failed" in r["error"] and "mapper failed" in r["error"] for r in recs)
    for r in recs:  # one line per document, naming it and the reason
        [line] = [x for x in err if x.startswith(r["doc_id"])]
        assert ": error: hunter failed:" in line
    # a re-run with a working endpoint retries both documents; the new lines win on reading
    server.default = GOOD
    assert _extract(dataset, out, server.base_url) == 0
    assert "retrying 2 partial or failed" in capsys.readouterr().err
    assert len(_records(out)) == 4
    assert {r.status for r in load_runs(out).values()} == {"ok"}
    assert _extract(dataset, out, server.base_url) == 0  # now all done: nothing is redone
    assert len(_records(out)) == 4


def test_extract_one_reading_lost_is_partial(dataset, tmp_path, server, capsys):
    out = tmp_path / "runs.jsonl"
    server.script = [Act(status=500)]  # the first call (the Hunter of the first document) fails
    assert _extract(dataset, out, server.base_url, "--limit", "1") == 1
    [rec] = _records(out)
    assert rec["status"] == "partial" and rec["error"].startswith("hunter failed: m: HTTP 500")
    assert f"{rec['doc_id']}: partial: hunter failed" in capsys.readouterr().err


def test_doc_timeout_bounds_a_hanging_document(dataset, tmp_path, server, capsys):
    out = tmp_path / "runs.jsonl"
    server.default = Act(delay=3.0)
    code = _extract(dataset, out, server.base_url, "--limit", "1", "--llm-timeout", "30",
                    "--doc-timeout", "0.3")  # fmt: skip
    assert code == 1
    [rec] = _records(out)
    assert rec["status"] == "error" and "document deadline of 0.3s" in rec["error"]


def test_score_failing_llm_rows_say_error(dataset, tmp_path, capsys):
    out = tmp_path / "scored.jsonl"
    code = main(["score", str(dataset), "--out", str(out), "--llm", "http://127.0.0.1:9/v1",
                 "--llm-model", "m", "--cache-dir", str(tmp_path / "c"), *FAST])  # fmt: skip
    assert code == 1
    rows = _records(out)
    assert rows and all(r["status"] == "error" and "could not connect" in r["error"] for r in rows)
    assert all(r["confidence"] is None and r["decision"] == "review" for r in rows)
    captured = capsys.readouterr()
    assert "2 failed" in captured.out
    assert sum(": error: hunter failed" in x for x in captured.err.splitlines()) == 2


def test_score_partial_rows_are_scored_and_marked(dataset, tmp_path, server):
    out = tmp_path / "scored.jsonl"
    server.script = [Act(status=500)]
    code = main(["score", str(dataset), "--out", str(out), "--llm", server.base_url,
                 "--llm-model", "m", "--cache-dir", str(tmp_path / "c"), *FAST])  # fmt: skip
    assert code == 1
    rows = _records(out)
    partial = [r for r in rows if r["status"] == "partial"]
    assert partial and all(r["error"].startswith("hunter failed") for r in partial)
    assert all(r["confidence"] is not None and not r["straight_through"] for r in partial)


@pytest.mark.parametrize("spec", ["bogus", "ftp://x", "http://127.0.0.1:8000/v1", "http:x"])
@pytest.mark.parametrize("command", ["extract", "score", "demo"])
def test_bad_llm_is_one_line_exit_2(dataset, tmp_path, capsys, spec, command):
    args = {"extract": ["extract", str(dataset), "--out", str(tmp_path / "r.jsonl")],
            "score": ["score", str(dataset), "--out", str(tmp_path / "s.csv")],
            "demo": ["demo"]}[command]  # fmt: skip
    assert main([*args, "--llm", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"extractconf {command}: error: --llm {spec}")
    assert not (tmp_path / "r.jsonl").exists() and not (tmp_path / "s.csv").exists()


def test_model_option_names(dataset, tmp_path, capsys):
    """--llm-model is the LLM id in extract and score; --model is always the model folder."""
    assert main(["extract", str(dataset), "--out", str(tmp_path / "r.jsonl"), "--model", "x"]) == 2
    assert "--llm-model x" in capsys.readouterr().err
    assert main(["score", str(dataset), "--out", str(tmp_path / "s.csv"),
                 "--model", str(tmp_path / "nope"), "--llm", "bogus"]) == 2  # fmt: skip


def test_llm_api_key_env(dataset, tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("MY_ENDPOINT_KEY", "endpoint-secret")
    out = tmp_path / "runs.jsonl"
    assert _extract(dataset, out, server.base_url, "--limit", "1",
                    "--llm-api-key-env", "MY_ENDPOINT_KEY") == 0  # fmt: skip
    assert server.auth and set(server.auth) == {"Bearer endpoint-secret"}
    assert "secret" not in out.read_text() + capsys.readouterr().out
    monkeypatch.delenv("MY_ENDPOINT_KEY")
    assert _extract(dataset, out, server.base_url, "--llm-api-key-env", "MY_ENDPOINT_KEY") == 2
    assert "MY_ENDPOINT_KEY: that environment variable is not set" in capsys.readouterr().err
    # local models take no key, timeout or retries
    assert main(["extract", str(dataset), "--out", str(out), "--llm-timeout", "3"]) == 2


@pytest.mark.parametrize(
    "out, why",
    [("scored.txt", "cannot tell the output format"), ("file/scored.csv", "is a file")],
)
def test_score_out_checked_before_any_work(dataset, tmp_path, server, capsys, out, why):
    (tmp_path / "file").write_text("x")
    code = main(["score", str(dataset), "--out", str(tmp_path / out), "--llm", server.base_url,
                 "--llm-model", "m", "--quiet"])  # fmt: skip
    assert code == 2 and not server.requests
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err


def test_extract_out_checked_before_any_work(dataset, tmp_path, server, capsys):
    (tmp_path / "file").write_text("x")
    for out in ("runs.csv", "file/runs.jsonl"):
        assert _extract(dataset, tmp_path / out, server.base_url) == 2
    assert not server.requests
    assert capsys.readouterr().err.count("\n") == 2


def test_score_same_name_in_two_folders_gets_two_doc_ids(dataset, tmp_path, server):
    files = sorted((dataset / "files").iterdir())
    for folder, src in (("dupA", files[0]), ("dupB", files[1])):
        (tmp_path / folder).mkdir()
        shutil.copy(src, tmp_path / folder / "inv.pdf")
    out = tmp_path / "scored.jsonl"
    code = main(["score", str(tmp_path / "dupA" / "inv.pdf"), str(tmp_path / "dupB" / "inv.pdf"),
                 "--schema", str(dataset / "schema.json"), "--out", str(out),
                 "--llm", server.base_url, "--llm-model", "m",
                 "--cache-dir", str(tmp_path / "c"), *FAST])  # fmt: skip
    assert code == 0
    rows = _records(out)
    assert {r["doc_id"] for r in rows} == {"dupA/inv", "dupB/inv"}


def test_score_clashing_doc_ids_are_refused(dataset, tmp_path, capsys):
    src = sorted((dataset / "files").iterdir())[0]
    shutil.copy(src, tmp_path / "inv.pdf")
    shutil.copy(src, tmp_path / "inv.png")
    code = main(
        [
            "score",
            str(tmp_path / "inv.pdf"),
            str(tmp_path / "inv.png"),
            "--schema",
            str(dataset / "schema.json"),
            "--out",
            str(tmp_path / "s.csv"),
        ]
    )
    assert code == 2
    assert "would both be document 'inv'" in capsys.readouterr().err


def test_score_batch_with_missing_and_unsupported_files(dataset, tmp_path, server, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(sorted((dataset / "files").iterdir())[0], folder / "a.pdf")
    (folder / "notes.txt").write_text("not a document")
    (folder / "scanned").mkdir()  # a subfolder is not read, and the user is told so
    shutil.copy(sorted((dataset / "files").iterdir())[1], folder / "scanned" / "b.pdf")
    out = tmp_path / "scored.jsonl"
    code = main(["score", str(folder), str(tmp_path / "missing.pdf"),
                 "--schema", str(dataset / "schema.json"), "--out", str(out),
                 "--llm", server.base_url, "--llm-model", "m",
                 "--cache-dir", str(tmp_path / "c"), *FAST])  # fmt: skip
    assert code == 1
    status = {r["doc_id"]: (r["status"], r["error"]) for r in _records(out)}
    assert status["a"][0] == "ok"
    assert status["notes"][0] == "error" and "unsupported file type '.txt'" in status["notes"][1]
    assert status["missing"][0] == "error" and "no such file" in status["missing"][1]
    assert "b" not in status
    err = capsys.readouterr().err
    assert "notes: error:" in err and "missing: error:" in err
    assert f"{folder}: warning: 1 subfolder(s) not read (scanned)" in err


@pytest.mark.parametrize("command", ["extract", "score", "train", "evaluate", "tune"])
@pytest.mark.parametrize("n", ["0", "-2"])
def test_n_jobs_below_one_is_one_line_exit_2(dataset, tmp_path, capsys, command, n):
    runs = ["--runs", str(tmp_path / "r.jsonl")] if command in ("train", "evaluate", "tune") else []
    out = {"extract": "r.jsonl", "score": "s.csv", "tune": "t.json"}.get(command, "dir")
    assert main([command, str(dataset), *runs, "--out", str(tmp_path / out), "--n-jobs", n]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--n-jobs" in err and "Traceback" not in err


def test_dataset_problems_are_one_clean_line(dataset, tmp_path, capsys):
    ds = tmp_path / "ds"
    shutil.copytree(dataset, ds)
    next((ds / "files").iterdir()).unlink()
    assert main(["extract", str(ds), "--out", str(tmp_path / "r.jsonl"), "--llm", "bogus"]) == 2
    main(["extract", str(ds), "--out", str(tmp_path / "r.jsonl"), "--llm",
          "http://127.0.0.1:9/v1", "--llm-model", "m", *FAST])  # fmt: skip
    err = capsys.readouterr().err
    assert "UserWarning" not in err and "warnings.warn" not in err
    assert "extractconf extract: warning: " in err and "label problem(s) skipped" in err


@pytest.mark.parametrize(
    "command", ["inspect", "synth", "convert", "extract", "train", "evaluate", "tune", "score",
                "demo"]
)  # fmt: skip
def test_exit_codes_in_every_help(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out and "  2  bad invocation" in out


def test_redo_mapper_with_a_failing_llm_is_partial(dataset, tmp_path, server, capsys):
    out = tmp_path / "runs.jsonl"
    assert _extract(dataset, out, server.base_url) == 0
    server.default = Act(status=500)
    assert _extract(dataset, out, server.base_url, "--redo-mapper") == 1
    assert {r["status"] for r in _records(out)} == {"partial"}
    assert sum(": partial: mapper failed" in x for x in capsys.readouterr().err.splitlines()) == 2


def test_score_old_runs_that_hid_a_failure(dataset, tmp_path, server, capsys):
    """A runs file written before statuses were derived says ok for a failed document."""
    runs = tmp_path / "runs.jsonl"
    server.default = Act(status=500)
    assert _extract(dataset, runs, server.base_url) == 1
    old = [dict(r, status="ok", error=None) for r in _records(runs)]
    runs.write_text("".join(json.dumps(r) + "\n" for r in old))
    out = tmp_path / "scored.csv"
    code = main(["score", str(dataset), "--runs", str(runs), "--out", str(out), "--no-documents",
                 "--quiet"])  # fmt: skip
    assert code == 1
    assert "2 failed" in capsys.readouterr().out
