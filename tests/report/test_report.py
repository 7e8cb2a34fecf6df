"""The evaluation report builds from a small recorded evaluate run, with every section."""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from confidence.calibration import ThresholdSelector, evaluate_scores, make_calibrator
from confidence.errors import DatasetError
from confidence.features.build import FEATURE_NAMES
from confidence.report import SECTIONS, build_report, load_inputs

FIELDS = {"total": "amount", "invoice_date": "date", "vendor": "text", "iban": "id"}
METHODS = ("extractconf", "logprob_mean", "agreement")


def write_eval_dir(d, *, n_docs=120, seed=0, nested=False, with_optional=True):
    """A recorded ``extractconf evaluate`` output: metrics, scores, importance, thresholds."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_docs):
        for name, ftype in FIELDS.items():
            correct = bool(rng.uniform() < (0.7 if name == "iban" else 0.88))
            raw = float(np.clip(rng.normal(0.75 if correct else 0.35, 0.18), 0, 1))
            rows.append(
                {
                    "doc_id": f"doc-{i:03d}",
                    "field": name,
                    "value": f"{name}-{i}" if rng.uniform() > 0.05 else None,
                    "correct": correct,
                    "raw": raw,
                    "logprob_mean": float(np.clip(rng.normal(0.8 if correct else 0.6, 0.2), 0, 1)),
                    "agreement": float(rng.uniform() < (0.9 if correct else 0.4)),
                    "field_type": ftype,
                    "group": "scan" if i % 3 == 0 else "digital",
                }
            )
    y = np.array([r["correct"] for r in rows], dtype=int)
    raw = np.array([r["raw"] for r in rows])
    cal = make_calibrator("isotonic").fit(raw, y)
    conf = cal.predict_proba(raw)[:, 1]
    sel = ThresholdSelector(target_accuracy=0.9, confidence_level=0.8).fit(
        conf,
        y,
        [r["field"] for r in rows],
        [r["field_type"] for r in rows],
        groups=[r["group"] for r in rows],
        grouping="source",
    )
    out = []
    for r, p in zip(rows, conf, strict=True):
        lam = sel.lookup(r["field"], r["field_type"], r["group"])[0]
        extra = {
            "field_type": r.pop("field_type"),
            "group": r.pop("group"),
            "extractconf_raw": r.pop("raw"),
            "threshold": lam if np.isfinite(lam) else None,
            "decision": "accept" if p >= lam else "review",
            "reasons": ["Hunter and Mapper disagree", "low token probability"],
        }
        r["extractconf"] = float(p)
        out.append({**r, "extra": extra} if nested else {**r, **extra})
    metrics = {
        m: {
            **evaluate_scores(y, [r[m] for r in out]),
            "llm_calls_per_doc": 2.0 if m != "logprob_mean" else 1.0,
        }
        for m in METHODS
    }
    d.mkdir(parents=True, exist_ok=True)
    meta = {
        "evaluation": "cross-fitted, 5 document folds",
        "routing": {
            "coverage": 0.8,
            "accuracy_of_accepted": 0.97,
            "straight_through_documents": 0.4,
        },
    }
    (d / "metrics.json").write_text(json.dumps({"methods": metrics, **meta} if nested else metrics))
    (d / "scores.jsonl").write_text("\n".join(json.dumps(r) for r in out) + "\n")
    if with_optional:
        imp = {
            n: float(v)
            for n, v in zip(FEATURE_NAMES, rng.exponential(0.1, len(FEATURE_NAMES)), strict=True)
        }
        (d / "feature_importance.json").write_text(json.dumps(imp))
        sel.save(d / "thresholds.json")
        k = len(FEATURE_NAMES)
        values = rng.normal(0, 0.3, (len(out), k))
        data = rng.uniform(size=(len(out), k)).tolist()
        data[0][0] = None  # a missing feature (NaN) is written as null
        shap_json = {
            "feature_names": list(FEATURE_NAMES),
            "rows": list(range(len(out))),
            "values": values.tolist(),
            "base_values": [1.5] * len(out),
            "data": data,
        }
        (d / "shap.json").write_text(json.dumps(shap_json))  # fmt: skip
        (d / "monitor.json").write_text(json.dumps(_monitor_report(out)))
    return out


def _monitor_report(rows) -> dict:
    """An ``extractconf monitor`` report of the rows against themselves (no drift)."""
    from confidence.monitoring import monitor

    scored = [
        {"doc_id": r["doc_id"], "field": r["field"], "confidence": r["extractconf"],
         "decision": "accept" if r["extractconf"] > 0.5 else "review"}
        for r in rows
    ]  # fmt: skip
    audits = [
        {"doc_id": r["doc_id"], "field": r["field"], "shown_value": "x", "final_value": "x",
         "action": "accept", "audit": True, "p_sample": 0.05, "reviewer": "t",
         "time": "2026-01-01T00:00:00Z"}
        for r in scored
        if r["decision"] == "accept"
    ]  # fmt: skip
    return monitor(scored, scored, audits)


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


@pytest.mark.parametrize("nested", [False, True])
def test_report_has_every_section_and_valid_pngs(tmp_path, nested):
    rows = write_eval_dir(tmp_path, nested=nested)
    path = build_report(tmp_path)
    assert path == tmp_path / "report.html"
    html = path.read_text()
    for sid, _, _ in SECTIONS:
        assert f'<section id="{sid}">' in html
    assert 'class="note"' not in html  # every input is present: no section was skipped
    imgs = _images(html)
    assert len(imgs) == 5  # reliability, risk-coverage, SHAP bars, shap beeswarm + waterfall
    for png in imgs:
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        im = Image.open(io.BytesIO(png))
        im.verify()
    # self-contained: no fetch of anything
    assert not re.search(r'(src|href)="(https?:)?//', html)
    for m in METHODS:
        assert f"<code>{m}</code>" in html
    for f in FIELDS:
        assert f"<code>{f}</code>" in html
    for t in ("95% accuracy", "98% accuracy", "99% accuracy", "99.5% accuracy"):
        assert t in html
    assert "before / after calibration" in html
    # the most confident wrong field is listed first in its section
    wrong = max((r for r in rows if not r["correct"]), key=lambda r: r["extractconf"])
    section = html.split('id="confident-wrong"')[1]
    assert section.index(f"{wrong['doc_id']}") < section.index("</tbody>")
    assert "Hunter and Mapper disagree" in section
    shap_section = html.split('id="shap"')[1].split("</section>")[0]
    assert 'alt="SHAP beeswarm"' in shap_section and 'alt="SHAP waterfall"' in shap_section
    assert f"({wrong['doc_id']}, {wrong['field']})" in shap_section


def test_inputs_read_nested_extra_and_method_order(tmp_path):
    write_eval_dir(tmp_path, nested=True)
    inp = load_inputs(tmp_path)
    assert inp.methods == METHODS
    assert inp.has_column("extractconf_raw")
    assert set(inp.metrics) == set(METHODS)
    assert inp.thresholds is not None and set(inp.thresholds["fields"]) == set(FIELDS)


def test_per_field_coverage_matches_decisions(tmp_path):
    rows = write_eval_dir(tmp_path, n_docs=60, seed=3)
    html = build_report(tmp_path).read_text()
    per_field = html.split('id="per-field"')[1].split("</section>")[0]
    total = [r for r in rows if r["field"] == "total"]
    cov = np.mean([r["decision"] == "accept" for r in total])
    row = per_field.split("<code>total</code>")[1].split("</tr>")[0]
    assert f"{100 * cov:.1f}%" in row
    assert f"{len(total)}" in row


def test_missing_optional_pieces_become_notes(tmp_path):
    rows = write_eval_dir(tmp_path, with_optional=False)
    (tmp_path / "metrics.json").unlink()
    # strip the extras so only the DESIGN.md minimum is left, and add a broken line
    lines = [
        json.dumps({k: r[k] for k in ("doc_id", "field", "value", "correct", *METHODS)})
        for r in rows
    ]
    lines.insert(5, "{not json")
    (tmp_path / "scores.jsonl").write_text("\n".join(lines) + "\n")
    html = build_report(tmp_path).read_text()
    for sid, _, _ in SECTIONS:
        assert f'<section id="{sid}">' in html
    assert "line 6: skipped" in html
    assert "metrics recomputed" in html
    assert "feature_importance.json missing" in html
    assert "no extractconf_raw column" in html
    assert len(_images(html)) == 2
    # metrics recomputed from scores equal the library's
    inp = load_inputs(tmp_path)
    y = np.array([r["correct"] for r in rows], dtype=int)
    assert inp.metrics["extractconf"]["auroc"] == pytest.approx(
        evaluate_scores(y, [r["extractconf"] for r in rows])["auroc"]
    )


def test_metrics_only_and_empty_folder(tmp_path):
    (tmp_path / "metrics.json").write_text(
        json.dumps({"extractconf": {"auroc": 0.9, "aurc": 0.05, "n_fields": 10}})
    )
    html = build_report(tmp_path).read_text()
    assert "0.900" in html and "scores.jsonl missing" in html
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match="run `extractconf evaluate"):
        build_report(empty)
    with pytest.raises(DatasetError, match="not a folder"):
        build_report(tmp_path / "nope")


def test_values_are_escaped(tmp_path):
    rows = write_eval_dir(tmp_path, n_docs=40)
    worst = max((r for r in rows if not r["correct"]), key=lambda r: r["extractconf"])
    worst["value"] = "<script>alert(1)</script>"
    (tmp_path / "scores.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    html = build_report(tmp_path).read_text()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_metrics_meta_is_shown(tmp_path):
    write_eval_dir(tmp_path, nested=True)
    html = build_report(tmp_path).read_text()
    assert "cross-fitted, 5 document folds" in html
    assert "accepts 80.0% of fields at 97.0% accuracy" in html
    assert "40.0% of documents go straight through" in html


def test_module_entry_point(tmp_path, capsys):
    from confidence.report.__main__ import main

    write_eval_dir(tmp_path, n_docs=30)
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "report.html").exists()
    assert main([str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err


@pytest.mark.slow
def test_report_from_a_real_evaluate_run(tmp_path):
    """synth -> ingest -> heuristic runs -> `extractconf evaluate` -> report.html."""
    from confidence.cli import main
    from confidence.datasets.folder import Dataset
    from confidence.datasets.synthetic import generate
    from confidence.documents.cache import DocumentCache
    from confidence.sample.make_sample import heuristic_run

    generate(tmp_path / "ds", 16, seed=3, languages=("en",))
    ds = Dataset.open(tmp_path / "ds")
    cache = DocumentCache(tmp_path / "cache")
    with (tmp_path / "runs.jsonl").open("w") as fh:
        for rec in ds.records:
            run = heuristic_run(cache.load(ds.path_of(rec), rec.doc_id), ds.schema)
            fh.write(json.dumps(run.to_dict()) + "\n")
    out = tmp_path / "eval"
    argv = ["evaluate", str(tmp_path / "ds"), "--runs", str(tmp_path / "runs.jsonl")]
    argv += ["--out", str(out), "--folds", "2", "--quiet", "--cache-dir", str(tmp_path / "cache")]
    argv += ["--target-accuracy", "0.9"]
    assert main(argv) == 0
    html = build_report(out).read_text()
    for sid, _, _ in SECTIONS:
        assert f'<section id="{sid}">' in html
    assert "<code>extractconf</code>" in html and "<code>agreement</code>" in html
    assert len(_images(html)) >= 2
    assert "this section failed" not in html
    inp = load_inputs(out)
    assert len(inp.rows) == 16 * len(ds.schema.fields)


def test_per_group_coverage_and_accuracy(tmp_path):
    rows = write_eval_dir(tmp_path)
    section = build_report(tmp_path).read_text().split('id="per-group"')[1].split("</section>")[0]
    scans = [r for r in rows if r["group"] == "scan"]
    accepted = [r for r in scans if r["decision"] == "accept"]
    cov = f"{100 * len(accepted) / len(scans):.1f}%"
    acc = f"{100 * sum(r['correct'] for r in accepted) / len(accepted):.1f}%"
    assert f'<td class="l">scan</td><td class="">{len(scans)}</td>' in section
    assert cov in section and acc in section
    assert "source=digital" in section and "source=scan" in section  # calibration cells
