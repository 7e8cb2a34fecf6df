"""``tune --groups KEY`` then ``score`` on the bundled sample: the group is stored and looked up."""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence import sample
from confidence.calibration import ThresholdSelector
from confidence.cli import main
from confidence.schema import Schema

SAMPLE = [str(sample.dataset_dir()), "--runs", str(sample.runs_path())]


@pytest.fixture(scope="module")
def common(tmp_path_factory):
    return ["--cache-dir", str(tmp_path_factory.mktemp("cache")), "--quiet"]


def _score(tmp_path, thresholds, common):
    out = tmp_path / "scored.jsonl"
    args = ["--thresholds", str(thresholds), "--out", str(out), "--no-reasons", *common]
    code = main(["score", *SAMPLE, *args])
    assert code == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_tune_groups_source_then_score(tmp_path, common, capsys):
    t = tmp_path / "t.json"
    code = main(
        [
            "tune",
            *SAMPLE,
            "--groups",
            "source",
            "--target-accuracy",
            "0.9",
            "--out",
            str(t),
            *common,
        ]
    )
    assert code == 0
    assert "source=scan" in capsys.readouterr().out
    sel = ThresholdSelector.load(t)
    assert sel.grouping_.key == "source"
    # 3 documents: no (field, group) cell has enough samples, every group falls back
    stats = [st for cells in sel.group_stats_.values() for st in cells.values()]
    assert stats and all(st["level"] == "fallback" for st in stats)
    assert {g for cells in sel.group_stats_.values() for g in cells} == {"scan", "digital"}
    rows = _score(tmp_path, t, common)
    groups = {r["doc_id"]: r["group"] for r in rows}
    assert sorted(groups.values()) == ["digital", "scan", "scan"]  # one digital, two scans
    assert {r["threshold_source"] for r in rows} <= {"field", "type", "global", "none"}


def test_score_applies_the_group_threshold(tmp_path, common):
    """A thresholds file with certified (field, group) cells routes each document by its group."""
    schema = Schema.load(sample.dataset_dir() / "schema.json")
    names = [f.name for f in schema.fields]
    n = 200
    rng = np.random.default_rng(0)
    fields = np.repeat(names, 2 * n)
    groups = np.tile(np.repeat(["scan", "digital"], n), len(names))
    s = rng.uniform(size=len(fields))
    # digital always right; scans right only above 0.8 -> scans get a high threshold
    y = ((groups == "digital") | (s > 0.8)).astype(int)
    sel = ThresholdSelector(target_accuracy=0.9, min_samples=50).fit(
        s, y, fields, groups=groups, grouping="source"
    )
    t = sel.save(tmp_path / "t.json")
    rows = _score(tmp_path, t, common)
    for r in rows:
        assert r["threshold_source"] == "group"
        assert r["threshold"] == pytest.approx(sel.group_thresholds_[r["field"]][r["group"]])
    by_group = {r["group"]: r["threshold"] for r in rows if r["field"] == "vendor_name"}
    assert by_group["scan"] > 0.75 > by_group["digital"]


def test_tune_meta_key_and_bad_key(tmp_path, common, capsys):
    t = tmp_path / "t.json"
    code = main(
        [
            "tune",
            *SAMPLE,
            "--groups",
            "meta.layout_family",
            "--out",
            str(t),
            "--no-documents",
            *common,
        ]
    )
    assert code == 0
    assert ThresholdSelector.load(t).grouping_.key == "meta.layout_family"
    code = main(
        [
            "tune",
            *SAMPLE,
            "--groups",
            "meta.no_such_key",
            "--out",
            str(t),
            "--no-documents",
            *common,
        ]
    )
    assert code == 0
    assert "no document has a meta.no_such_key group" in capsys.readouterr().err
    assert ThresholdSelector.load(t).grouping_ is None
    code = main(["tune", *SAMPLE, "--groups", "vendor", "--out", str(t), *common])
    assert code == 2
    assert "unknown group key 'vendor'" in capsys.readouterr().err
