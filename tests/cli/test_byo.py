"""Bring your own extraction through the CLI: train --single-reading, then score third-party
records with one reading (values + logprobs, no Mapper) with and without their documents."""

from __future__ import annotations

import json

import pytest

from confidence.calls.second_reading import LIBRARY_MAPPER_NAME
from confidence.cli import main
from confidence.scores import FEATURE_PREFIX
from tests.fixtures.engine import dataset_with_runs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def byo(tmp_path_factory):
    root = tmp_path_factory.mktemp("byo")
    ds, runs, common = dataset_with_runs(root)
    # a third-party pipeline's records: the Hunter's values and logprobs, no Mapper
    third = root / "third_party.jsonl"
    with third.open("w") as fh:
        for line in runs.read_text().splitlines():
            rec = json.loads(line)
            fields = {
                k: {"value": r["value"], "logprobs": r["tokens"]}
                for k, r in rec["hunter"]["fields"].items()
            }
            fh.write(json.dumps({"doc_id": rec["doc_id"], "fields": fields}) + "\n")
    return root, ds, runs, third, common


def test_train_single_reading_then_score_third_party_records(byo, capsys):
    root, ds, runs, third, common = byo
    model = root / "model"
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(model), "--single-reading",
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    meta = json.loads((model / "engine.json").read_text())["data"]
    assert meta["metrics"]["n_fields"] == 200  # extra rows train the fusion only

    out = root / "scored.jsonl"
    assert main(["score", str(ds), "--runs", str(third), "--model", str(model),
                 "--out", str(out), "--features", "200", *common]) == 0  # fmt: skip
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 200
    assert all(LIBRARY_MAPPER_NAME in r["llm"] for r in rows)
    # the library's Mapper read the labelled values: disagreement and page features exist
    assert sum(r["mapper_value"] is not None for r in rows) >= 100
    assert all(FEATURE_PREFIX + "agree_both_empty" in r for r in rows)
    assert sum(FEATURE_PREFIX + "ocr_m_found" in r for r in rows) >= 100
    total = [r for r in rows if r["field"] == "total"]
    assert all(r["mapper_value"] for r in total)

    # without the documents there is no second reading
    bare = root / "bare.jsonl"
    assert main(["score", str(ds), "--runs", str(third), "--model", str(model),
                 "--out", str(bare), "--no-documents", *common]) == 0  # fmt: skip
    rows = [json.loads(x) for x in bare.read_text().splitlines()]
    assert all(r["mapper_value"] is None and LIBRARY_MAPPER_NAME not in r["llm"] for r in rows)


def test_score_warns_of_record_field_names_the_schema_lacks(byo, capsys):
    """A pipeline that writes ``TOTAL`` for the schema's ``total``: its values are not scored
    (the library's reading stands in), and ``score`` says so on stderr, naming the field."""
    root, ds, _runs, third, common = byo
    shouted = root / "shouted.jsonl"
    lines = []
    for line in third.read_text().splitlines():
        rec = json.loads(line)
        rec["fields"] = {k.upper() if k == "total" else k: v for k, v in rec["fields"].items()}
        lines.append(json.dumps(rec))
    shouted.write_text("\n".join(lines) + "\n")
    out = root / "shouted_scored.jsonl"
    assert main(["score", str(ds), "--runs", str(shouted), "--out", str(out),
                 "--no-documents", *common]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert (
        "40 of 40 record(s) name fields the schema does not have: 'TOTAL' (the schema has "
        "'total')" in err
    )
    assert main(["score", str(ds), "--runs", str(third), "--out", str(out),
                 "--no-documents", *common]) == 0  # fmt: skip
    assert "the schema does not have" not in capsys.readouterr().err
