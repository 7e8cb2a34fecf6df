"""``extractconf evaluate --out DIR`` writes report.html with every section filled, for ``--model``
and for cross-fitted evaluation, on the bundled sample (issue 16, item 3)."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import pytest

from confidence.cli import main
from confidence.report import SECTIONS
from confidence.sample import dataset_dir, runs_path

COPIES = 4  # cross-fitting needs more than the sample's three documents: each is used 4 times


def _section(html: str, sid: str) -> str:
    return html.split(f'<section id="{sid}">')[1].split("</section>")[0]


def _cells(body: str, column: str) -> list[str]:
    """The text of one column of a section's table."""
    head = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", body)
    j = head.index(column)
    rows = re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1], re.S)
    return [re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)[j]) for r in rows]


def _replicated_sample(root):
    """The sample dataset and runs, each document under ``COPIES`` doc_ids."""
    ds = root / "ds"
    shutil.copytree(dataset_dir(), ds)
    labels = [json.loads(x) for x in (ds / "labels.jsonl").read_text().splitlines()]
    with gzip.open(runs_path(), "rt", encoding="utf-8") as fh:
        runs = [json.loads(x) for x in fh]
    with (ds / "labels.jsonl").open("w") as lab, (root / "runs.jsonl").open("w") as run:
        for k in range(COPIES):
            for d in labels:
                lab.write(json.dumps(dict(d, doc_id=f"{d['doc_id']}-{k}")) + "\n")
            for r in runs:
                run.write(json.dumps(dict(r, doc_id=f"{r['doc_id']}-{k}")) + "\n")
    return ds, root / "runs.jsonl"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    common = ["--quiet", "--cache-dir", str(root / "cache")]
    out = {}
    argv = ["evaluate", str(dataset_dir()), "--runs", str(runs_path()), "--model", "default"]
    assert main([*argv, "--out", str(root / "model"), *common]) == 0
    out["model"] = root / "model"
    ds, runs = _replicated_sample(root)
    argv = ["evaluate", str(ds), "--runs", str(runs), "--folds", "3", "--target-accuracy", "0.5"]
    assert main([*argv, "--out", str(root / "crossfit"), *common]) == 0
    out["crossfit"] = root / "crossfit"
    return {k: (d / "report.html").read_text(encoding="utf-8") for k, d in out.items()}


@pytest.mark.parametrize("how", ["model", "crossfit"])
def test_evaluate_writes_the_report_with_no_section_skipped(reports, how):
    html = reports[how]
    for sid, _, _ in SECTIONS:
        assert f'<section id="{sid}">' in html
    # the per-group and monitoring sections only say how to fill them when evaluate ran without
    # groups and no monitor report was added (tests/test_monitoring.py covers the filled section)
    hints = ("--groups", "extractconf monitor")
    notes = [
        n for n in re.findall(r'class="note">(.*?)</p>', html) if not any(h in n for h in hints)
    ]
    assert not notes, notes
    assert "this section failed" not in html


@pytest.mark.parametrize("how", ["model", "crossfit"])
def test_every_section_has_content(reports, how):
    html = reports[how]
    assert len(_cells(_section(html, "metrics"), "method")) >= 4  # extractconf + baselines
    reliability = _section(html, "reliability")  # no note: the before-calibration panel is there
    assert reliability.count("<img") == 1 and "extractconf_raw" not in reliability
    assert "<img" in _section(html, "risk-coverage")
    assert _cells(_section(html, "coverage-at-accuracy"), "method")
    shap = _section(html, "shap")
    for alt in ("top SHAP features", "SHAP beeswarm", "SHAP waterfall"):
        assert f'alt="{alt}"' in shap


@pytest.mark.parametrize("how", ["model", "crossfit"])
def test_per_field_thresholds_are_filled(reports, how):
    body = _section(reports[how], "per-field")
    fields = _cells(body, "field")
    assert len(fields) == 21  # every field of the invoice schema
    thresholds = _cells(body, "threshold")
    assert all(t == "review all" or 0 <= float(t) <= 1 for t in thresholds)
    assert any(t != "review all" for t in thresholds)
    assert set(_cells(body, "source")) <= {"field", "type", "global", "none"}
    assert all(c.endswith("%") for c in _cells(body, "coverage"))


@pytest.mark.parametrize("how", ["model", "crossfit"])
def test_confident_wrong_fields_carry_reasons_and_gold(reports, how):
    body = _section(reports[how], "confident-wrong")
    reasons = _cells(body, "reasons")
    assert len(reasons) == 10 and all(r.strip() for r in reasons)
    assert _cells(body, "gold")
