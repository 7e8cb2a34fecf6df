"""The README's Python examples and shell commands run as written (issue 16, item 13)."""

from __future__ import annotations

import csv
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from confidence.calls.extract import extract_document
from confidence.cli import build_parser, main
from confidence.datasets.synthetic import SCHEMA
from confidence.documents import load_document
from confidence.engine import ConfidenceEngine, default_model_dir
from confidence.errors import ModelError
from confidence.llm.base import Completion, TokenLogprob
from confidence.llm.replay import CachedClient
from confidence.sample import dataset_dir
from confidence.schema import Schema

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_has_a_python_example():
    assert BLOCKS


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code, capsys):
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()


# -- shell commands -------------------------------------------------------------------------
def _shell_commands() -> list[list[str]]:
    """Every command of the README's ``bash`` blocks (continuations joined, comments dropped)."""
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                out.append(argv)
    return out


COMMANDS = _shell_commands()
CLI = [c for c in COMMANDS if Path(c[0]).name == "extractconf"]
ONE_FILE = [c for c in CLI if c[0] == ".venv/bin/extractconf"]


def _one_file_folder(tmp_path: Path) -> Path:
    """The README's ``invoice.pdf`` (a digital PDF) and ``scan.jpg`` (a scan), from the sample."""
    files = dataset_dir() / "files"
    shutil.copy(files / "synth-7-00001.pdf", tmp_path / "invoice.pdf")
    shutil.copy(files / "synth-7-00000.jpg", tmp_path / "scan.jpg")
    return tmp_path


def test_readme_commands_are_found():
    assert {c[1] for c in CLI} >= {"inspect", "score", "synth", "extract", "train", "evaluate",
                                   "review"}  # fmt: skip
    assert [c[1] for c in ONE_FILE] == ["inspect", "inspect", "score"]
    assert {c[0] for c in COMMANDS} <= {"make", "extractconf", ".venv/bin/extractconf"}


@pytest.mark.parametrize("argv", CLI, ids=[" ".join(c[1:3]) for c in CLI])
def test_every_readme_command_parses(argv):
    """Every option the README shows exists (the whole workflow needs data and an LLM server,
    so its commands are checked against the parser; the one-file ones also run below)."""
    args = build_parser().parse_args(argv[1:])
    assert args.func


@pytest.mark.parametrize("argv", ONE_FILE[:2], ids=["inspect", "inspect-json"])
def test_readme_one_file_inspect_runs_as_written(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_one_file_folder(tmp_path))
    assert main(argv[1:]) == 0
    out = capsys.readouterr().out
    if "--json" in argv:
        assert json.loads(out)["pages"][0]["source"] == "ocr"
    else:
        assert "pdf" in out


class _FirstOption:
    """A deterministic stand-in LLM: picks the first allowed value of every field."""

    model = "first-option"

    def chat(self, messages, *, schema=None, n=1, **kwargs):
        out = {}
        for k, spec in ((schema or {}).get("properties") or {}).items():
            options = spec.get("enum") or spec.get("anyOf", [{}])[0].get("enum") or [None]
            out[k] = options[0]
        text = json.dumps(out)
        toks = tuple(TokenLogprob(text[i : i + 4], -0.3) for i in range(0, len(text), 4))
        return [Completion(text, toks, model=self.model) for _ in range(n)]


def _check_scored(folder: Path) -> None:
    with open(folder / "scored.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["field"] for r in rows] == list(SCHEMA.names)  # the model's invoice schema
    assert all(r["status"] == "ok" and r["decision"] in ("accept", "review") for r in rows)


def test_readme_one_file_score_fast(tmp_path, monkeypatch):
    """The README's score command with only ``--llm local`` swapped for a replay of recorded
    replies (the real model runs in the slow test below): no --schema needed."""
    [argv] = ONE_FILE[2:]
    folder = _one_file_folder(tmp_path)
    replies = tmp_path / "replies.jsonl"
    client = CachedClient(_FirstOption(), replies)
    document = load_document(folder / "invoice.pdf")
    assert extract_document(document, SCHEMA, client).status == "ok"
    argv = [f"replay:{replies}" if a == "local" else a for a in argv]
    monkeypatch.chdir(folder)
    assert main(argv[1:]) == 0
    _check_scored(folder)


@pytest.mark.slow
@pytest.mark.llm
def test_readme_one_file_score_runs_as_written(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp")
    [argv] = ONE_FILE[2:]
    monkeypatch.chdir(_one_file_folder(tmp_path))
    assert main(argv[1:]) == 0
    _check_scored(tmp_path)


def test_the_shipped_model_carries_the_invoice_schema(tmp_path):
    folder = default_model_dir()
    assert Schema.load(folder / "schema.json") == SCHEMA
    assert "schema.json" in json.loads((folder / "manifest.json").read_text())["files"]
    copy = shutil.copytree(folder, tmp_path / "model")
    (copy / "schema.json").write_text(SCHEMA.to_dict()["name"] + "\n")
    with pytest.raises(ModelError, match=r"schema.json: checksum mismatch"):
        ConfidenceEngine.load(copy)


def test_readme_review_export_import_run_as_written(tmp_path, monkeypatch, capsys):
    """The README's export and import commands, in order, on a scored.parquet (the serving
    command blocks; tests/review runs it as a server)."""
    from confidence.output import write_rows
    from confidence.review.log import read_log

    runs = [c for c in CLI if c[1] == "review" and ("--export" in c or "--import" in c)]
    assert len(runs) == 2
    monkeypatch.chdir(tmp_path)
    write_rows("scored.parquet", [
        {"doc_id": "a", "field": "total", "field_type": "amount", "value": "9.00",
         "confidence": 0.3, "decision": "review", "reasons": ["Hunter and Mapper disagree"]},
        {"doc_id": "a", "field": "date", "field_type": "date", "value": "2024-01-02",
         "confidence": 0.99, "decision": "accept", "reasons": []},
    ])  # fmt: skip
    assert main(runs[0][1:]) == 0
    with open("queue.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["doc_id"], r["field"]) for r in rows] == [("a", "total")]
    rows[0]["action"] = "accept"  # what the other tool fills in
    with open("queue.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(runs[1][1:]) == 0
    [d] = read_log("review.jsonl")
    assert (d.doc_id, d.field, d.action, d.final_value) == ("a", "total", "accept", "9.00")
