"""CLI train / evaluate / tune / score on a tiny dataset of real PDFs with recorded runs."""

from __future__ import annotations

import csv
import json
import math

import pytest

from confidence.cli import main
from tests.fixtures.engine import make_dataset, make_runs

pytestmark = pytest.mark.slow

METRIC_KEYS = {
    "auroc",
    "aurc",
    "accuracy_at_coverage_0.8",
    "coverage_at_accuracy_0.99",
    "ece",
    "brier",
    "n_fields",
    "failure_rate",
    "llm_calls_per_doc",
}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    ds = make_dataset(root, n_docs=60)
    runs = make_runs(ds, root / "runs.jsonl")
    cache = root / "cache"
    common = ["--cache-dir", str(cache), "--quiet"]
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(root / "model"),
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    return root, ds, runs, common


def test_train_writes_model(work):
    root, *_ = work
    meta = json.loads((root / "model" / "engine.json").read_text())["data"]
    assert meta["schema"]["name"] == "mini-invoice"
    assert meta["metrics"]["n_fields"] == 300


def test_train_calibrates_out_of_fold_unless_told_to_separate(work, tmp_path, capsys):
    """``train`` pools the fusion and calibration shares (the calibrator on out-of-fold
    scores); ``--separate-calibration`` keeps them apart. The threshold share is the same."""
    root, ds, runs, common = work
    meta = json.loads((root / "model" / "engine.json").read_text())["data"]["metrics"]
    m = tmp_path / "sep"
    capsys.readouterr()
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(m), "--separate-calibration",
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    out = capsys.readouterr().out
    sep = json.loads((m / "engine.json").read_text())["data"]["metrics"]
    assert meta["calibrated_out_of_fold"] is True and sep["calibrated_out_of_fold"] is False
    pooled, split = meta["n_documents"], sep["n_documents"]
    assert pooled["thresholds"] == split["thresholds"]
    assert pooled["fusion"] == pooled["calibration"] == split["fusion"] + split["calibration"]
    assert (
        f"split fusion/calibration/thresholds {split['fusion']}/{split['calibration']}/"
        f"{split['thresholds']} documents" in out
    )
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(tmp_path / "p"),
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    assert (
        f"fusion and calibration on {pooled['fusion']} documents (out of fold), thresholds on "
        f"{pooled['thresholds']}" in capsys.readouterr().out
    )


def test_train_average_folds_then_score(work, tmp_path):
    """``train --average-folds``: the saved fusion is the mean of the 5 CV fold models (5x the
    trees of one), and ``score`` reads with it, reasons included."""
    root, ds, runs, common = work
    m = tmp_path / "avg"
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(m), "--average-folds",
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    fusion = json.loads((m / "fusion.json").read_text())["data"]
    plain = json.loads((root / "model" / "fusion.json").read_text())["data"]
    assert fusion["params"]["average_folds"] is True and fusion["n_members"] == 5
    assert plain["params"]["average_folds"] is False and plain["n_members"] == 1
    trees = (m / "fusion.lgb.txt").read_text().count("\nTree=")
    assert trees == 5 * fusion["best_iteration"]
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(ds), "--runs", str(runs), "--model", str(m), "--out", str(out),
                 "--no-documents", *common]) == 0  # fmt: skip
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 300 and all(0 <= r["confidence"] <= 1 for r in rows)


def test_train_and_evaluate_take_fusion_params(work, tmp_path, capsys):
    """``--fusion-params``: ``train`` writes a fusion model with those parameters (7 leaves, no
    monotone constraints, a LightGBM option) and ``evaluate`` cross-fits with them; bad JSON, an
    unknown parameter, a value out of range, and ``evaluate --model`` with them are one-line
    usage errors before any work."""
    root, ds, runs, common = work
    m = tmp_path / "seven"
    params = '{"num_leaves": 7, "monotone": null, "lgbm_params": {"extra_trees": true}}'
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(m), "--fusion-params", params,
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    got = json.loads((m / "fusion.json").read_text())["data"]["params"]
    plain = json.loads((root / "model" / "fusion.json").read_text())["data"]["params"]
    assert (got["num_leaves"], got["monotone"], got["lgbm_params"]) == (
        7,
        None,
        {"extra_trees": True},
    )
    assert plain["num_leaves"] == 15 and plain["monotone"] and plain["lgbm_params"] is None
    booster = (m / "fusion.lgb.txt").read_text()
    assert "[num_leaves: 7]" in booster and "[extra_trees: 1]" in booster
    methods = []
    for extra in ([], ["--fusion-params", '{"num_leaves": 2, "n_estimators": 5}']):
        out = tmp_path / f"ev{len(extra)}"
        assert main(["evaluate", str(ds), "--runs", str(runs), "--out", str(out), *extra,
                     "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
        methods.append(json.loads((out / "metrics.json").read_text())["methods"]["extractconf"])
    assert methods[0] != methods[1]  # five 2-leaf trees do not score as the default model does
    capsys.readouterr()
    for bad, words in (
        ("{num_leaves: 7}", "not JSON"),
        ("[7]", "pass a JSON object"),
        ('{"leaves": 7}', "unknown parameter(s) 'leaves'; the fusion model takes"),
        ('{"num_leaves": 1}', "num_leaves"),
    ):
        assert main(["train", str(ds), "--runs", str(runs), "--out", str(tmp_path / "bad"),
                     "--fusion-params", bad, *common]) == 2  # fmt: skip
        err = capsys.readouterr().err
        assert "--fusion-params: " in err and words in err, err
        assert not (tmp_path / "bad").exists()
    assert main(["evaluate", str(ds), "--runs", str(runs), "--out", str(tmp_path / "ev"),
                 "--model", str(m), "--fusion-params", "{}", *common]) == 0  # fmt: skip
    seven = '{"num_leaves": 7}'
    assert main(["evaluate", str(ds), "--runs", str(runs), "--out", str(tmp_path / "ev2"),
                 "--model", str(m), "--fusion-params", seven, *common]) == 2  # fmt: skip
    assert "a --model has its own" in capsys.readouterr().err


def test_train_without_some_features_then_score(work, tmp_path, capsys):
    """``train --exclude-features``: the model is fitted without them, says so in engine.json,
    loads without the "trained before these features existed" warning, and scores; a pattern
    that names no feature is a one-line usage error."""
    _, ds, runs, common = work
    m = tmp_path / "noq"
    assert main(["train", str(ds), "--runs", str(runs), "--out", str(m), "--exclude-features",
                 "q_*", "lay_page_index", "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    meta = json.loads((m / "engine.json").read_text())["data"]
    assert meta["params"]["exclude_features"] == ["q_*", "lay_page_index"]
    names = meta["feature_names"]
    assert not [n for n in names if n.startswith("q_") or n == "lay_page_index"]
    assert "lay_width" in names and "agree_equal" in names
    fusion = json.loads((m / "fusion.json").read_text())["data"]
    assert not any(n.startswith("q_") for n in fusion["feature_names"])
    capsys.readouterr()
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(ds), "--runs", str(runs), "--model", str(m), "--out", str(out),
                 *common]) == 0  # fmt: skip
    assert "trained before" not in capsys.readouterr().err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 300 and all(0 <= r["confidence"] <= 1 for r in rows)
    for cmd in (
        ["train", str(ds), "--runs", str(runs), "--out", str(tmp_path / "bad")],
        ["evaluate", str(ds), "--runs", str(runs), "--out", str(tmp_path / "bad")],
    ):
        assert main([*cmd, "--exclude-features", "no_such_*", *common]) == 2  # fmt: skip
        err = capsys.readouterr().err
        assert "--exclude-features: exclude_features: 'no_such_*' names no feature" in err
        assert not (tmp_path / "bad" / "engine.json").exists()
    assert main(["evaluate", str(ds), "--runs", str(runs), "--out", str(tmp_path / "ev"),
                 "--model", str(m), "--exclude-features", "q_*", *common]) == 2  # fmt: skip
    assert "a --model has its own" in capsys.readouterr().err


def test_evaluate_cross_fit(work, capsys):
    root, ds, runs, common = work
    out = root / "eval"
    assert main(["evaluate", str(ds), "--runs", str(runs), "--out", str(out), "--folds", "3",
                 "--target-accuracy", "0.9", *common]) == 0  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    methods = metrics["methods"]
    assert set(methods) == {
        "extractconf",
        "logprob_mean",
        "logprob_min",
        "agreement",
        "verbalized",
        "self_consistency",
    }
    for m in methods.values():
        assert METRIC_KEYS <= set(m)
    assert methods["extractconf"]["auroc"] > 0.8
    assert methods["extractconf"]["llm_calls_per_doc"] == 2
    assert methods["self_consistency"]["llm_calls_per_doc"] == 3
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 300
    for r in rows:
        assert {"doc_id", "field", "value", "correct", "extractconf"} <= set(r)
        assert isinstance(r["correct"], bool)
        for k in methods:
            assert isinstance(r[k], float) and r[k] == r[k]
    # the referee's contract: every numeric column is a score with one value per judged row
    acc = sum(r["correct"] for r in rows) / len(rows)
    assert metrics["methods"]["extractconf"]["failure_rate"] == pytest.approx(1 - acc)
    # the oracle ranks every correct field first: its risk is 0 up to coverage acc, then
    # (c - acc) / c, whose area is (1 - acc) + acc * ln(acc) in the continuum limit
    oracle = methods["extractconf"]["aurc_oracle"]
    assert oracle == pytest.approx((1 - acc) + acc * math.log(acc), abs=0.01)
    for m in methods.values():
        assert m["aurc_oracle"] == oracle
        assert m["excess_aurc"] == pytest.approx(m["aurc"] - oracle)
    # a floor for scores without ties; a tied block's curve is interpolated below the true one,
    # and identical fields (same features) get the same score, so allow a hair below
    assert methods["extractconf"]["excess_aurc"] >= -1e-3
    assert "cross-fitted" in capsys.readouterr().out


def test_evaluate_with_model_and_tune(work):
    root, ds, runs, common = work
    out = root / "eval-model"
    assert main(["evaluate", str(ds), "--runs", str(runs), "--model", str(root / "model"),
                 "--out", str(out), *common]) == 0  # fmt: skip
    assert "model" in json.loads((out / "metrics.json").read_text())["evaluation"]
    t = root / "thresholds.json"
    assert main(["tune", str(ds), "--runs", str(runs), "--model", str(root / "model"),
                 "--target-accuracy", "0.8", "--confidence-level", "0.8", "--out", str(t),
                 *common]) == 0  # fmt: skip
    d = json.loads(t.read_text())["data"]
    assert d["params"]["target_accuracy"] == 0.8 and "total" in d["fields"]
    # evaluate wrote the inputs of the report's SHAP and per-field sections too
    for name in ("feature_importance.json", "shap.json", "thresholds.json", "report.html"):
        assert (out / name).exists(), name
    shap_rows = json.loads((out / "shap.json").read_text())
    assert len(shap_rows["values"]) == len(shap_rows["base_values"]) == 300


def test_score_from_runs_with_a_bad_document(work, capsys):
    root, ds, runs, common = work
    bad = root / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not a pdf")
    files = sorted((ds / "files").iterdir())[:3]
    out = root / "scored.csv"
    rc = main(["score", *map(str, files), str(bad), "--runs", str(runs), "--schema",
               str(ds / "schema.json"), "--model", str(root / "model"), "--out", str(out),
               *common])  # fmt: skip
    assert rc == 1  # one document failed, the others were scored
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 4 * 5
    errs = [r for r in rows if r["status"] == "error"]
    assert len(errs) == 5 and all(r["doc_id"] == "broken" for r in errs)
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(r["decision"] in ("accept", "review") and r["reasons"] for r in ok)
    assert {r["straight_through"] for r in errs} == {"False"}
    assert "1 failed" in capsys.readouterr().out


def test_score_dataset_folder_jsonl(work):
    root, ds, runs, common = work
    out = root / "scored.jsonl"
    t = root / "thresholds.json"
    args = ["score", str(ds), "--runs", str(runs), "--model", str(root / "model"),
            "--out", str(out), "--no-documents", *common]  # fmt: skip
    if t.exists():
        args += ["--thresholds", str(t)]
    assert main(args) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 300 and isinstance(rows[0]["reasons"], list)


def test_train_errors_are_one_line(work, tmp_path, capsys):
    _, ds, runs, common = work
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["train", str(ds), "--runs", str(empty), "--out", str(tmp_path / "m"),
                 *common]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "no judged fields" in err and "60 no run" in err
    assert main(["evaluate", str(tmp_path), "--runs", str(runs), "--out", str(tmp_path / "e"),
                 *common]) == 2  # fmt: skip


class _FirstOption:
    """A deterministic stand-in LLM: picks the first allowed value of every field."""

    model = "first-option"

    def chat(self, messages, *, schema=None, n=1, **kwargs):
        from confidence.llm.base import Completion, TokenLogprob

        out = {}
        for k, spec in ((schema or {}).get("properties") or {}).items():
            options = spec.get("enum") or spec.get("anyOf", [{}])[0].get("enum") or [None]
            out[k] = options[0]
        text = json.dumps(out)
        toks = tuple(TokenLogprob(text[i : i + 4], -0.3) for i in range(0, len(text), 4))
        return [Completion(text, toks, model=self.model) for _ in range(n)]


def test_score_full_pipeline_with_replayed_llm(work, tmp_path):
    """ingest -> Hunter + Mapper through a recorded LLM -> score, with the CLI."""
    from confidence.calls.extract import extract_document
    from confidence.datasets.folder import Dataset
    from confidence.llm.replay import CachedClient

    root, ds, _, common = work
    data = Dataset.open(ds)
    rec_path = tmp_path / "llm.jsonl"
    client = CachedClient(_FirstOption(), rec_path)
    for r in data.records[:2]:  # record the calls once
        run = extract_document(data.load_document(r), data.schema, client)
        assert run.hunter is not None and run.status == "ok"
    out = tmp_path / "live.jsonl"
    files = [str(data.path_of(r)) for r in data.records[:2]]
    rc = main(["score", *files, "--llm", f"replay:{rec_path}", "--schema", str(ds / "schema.json"),
               "--model", str(root / "model"), "--out", str(out), *common])  # fmt: skip
    assert rc == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 10 and all(r["status"] == "ok" for r in rows)
    assert all(0 <= r["confidence"] <= 1 for r in rows)
