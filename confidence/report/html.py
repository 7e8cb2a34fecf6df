"""Assemble the self-contained ``report.html`` (inline CSS, PNGs inlined as base64).

Every section is a function of :class:`~confidence.report.inputs.ReportInputs` returning an HTML
fragment; a section whose inputs are missing renders a one-line note instead of failing.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from html import escape

import numpy as np

from confidence import __version__
from confidence.calibration import auroc, coverage_at_accuracy
from confidence.report import plots
from confidence.report.inputs import ReportInputs

__all__ = ["SECTIONS", "TARGET_ACCURACIES", "render"]

TARGET_ACCURACIES: tuple[float, ...] = (0.95, 0.98, 0.99, 0.995)
N_CONFIDENT_WRONG = 10
N_TOP_FEATURES = 15

# metric key -> (column title, True when higher is better)
_METRIC_COLUMNS: dict[str, tuple[str, bool | None]] = {
    "auroc": ("AUROC ↑", True),
    "aurc": ("AURC ↓", False),
    "accuracy_at_coverage_0.8": ("accuracy @ 80% coverage ↑", True),
    "coverage_at_accuracy_0.99": ("coverage @ 99% accuracy ↑", True),
    "ece": ("ECE ↓", False),
    "brier": ("Brier ↓", False),
    "n_fields": ("fields", None),
    "failure_rate": ("failure rate", None),
    "llm_calls_per_doc": ("LLM calls / doc ↓", False),
    "missing_share": ("score missing", None),
}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9}
main{max-width:1280px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:19px;margin:0 0 10px;color:#0b3d66}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:18px 22px;
margin:18px 0}
.sub{color:#5b6372;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{padding:5px 10px;border-bottom:1px solid #e6e9ee;text-align:right;vertical-align:top}
th{background:#eef1f5;font-weight:600}
td.l,th.l{text-align:left}
tr:nth-child(even) td{background:#fafbfc}
td.best{font-weight:700;color:#0b6b3a}
img{max-width:100%;height:auto;display:block;margin:8px 0}
.note{color:#8a5a00;background:#fff8e6;border-left:3px solid #e0a100;padding:6px 10px;
font-size:13px}
.reasons{text-align:left;color:#364152;max-width:420px}
code{background:#eef1f5;padding:1px 4px;border-radius:3px}
nav a{margin-right:14px;font-size:13px}
"""


def _fmt(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return escape(str(v))


def _pct(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{100 * v:.1f}%"


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _table(head: Sequence[str], body: Iterable[Sequence[str]], left: Sequence[int] = (0,)) -> str:
    """An HTML table; cells are escaped HTML, columns in ``left`` align left.

    A cell starting with ``<b>`` is marked best (bold green) and the marker dropped.
    """
    th = "".join(
        f'<th class="l">{h}</th>' if i in left else f"<th>{h}</th>" for i, h in enumerate(head)
    )
    rows = []
    for r in body:
        tds = []
        for i, c in enumerate(r):
            cls = "l" if i in left else ""
            if c.startswith("<b>"):
                cls += " best"
                c = c[3:]
            tds.append(f'<td class="{cls.strip()}">{c}</td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _drop_empty(head: list[str], body: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """Leave out columns with no value in any row (inputs that evaluate did not write)."""
    keep = [j for j in range(len(head)) if any(r[j] not in ("", "—") for r in body)]
    return [head[j] for j in keep], [[r[j] for j in keep] for r in body]


def _section(sid: str, title: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{escape(title)}</h2>{body}</section>'


# -- sections ------------------------------------------------------------------------------


def _metrics(inp: ReportInputs) -> str:
    methods = list(inp.metrics)
    if "extractconf" in methods:
        methods.insert(0, methods.pop(methods.index("extractconf")))
    keys = [k for k in _METRIC_COLUMNS if any(k in inp.metrics[m] for m in methods)]
    best: dict[str, float] = {}
    for k in keys:
        better = _METRIC_COLUMNS[k][1]
        vals = [inp.metrics[m].get(k) for m in methods]
        vals = [v for v in vals if isinstance(v, int | float) and math.isfinite(v)]
        if better is not None and len(vals) > 1 and len(set(vals)) > 1:
            best[k] = max(vals) if better else min(vals)
    body = []
    for m in methods:
        row = [f"<code>{escape(m)}</code>"]
        for k in keys:
            v = inp.metrics[m].get(k)
            cell = _fmt(v)
            row.append("<b>" + cell if k in best and v == best[k] else cell)
        body.append(row)
    head = ["method"] + [escape(_METRIC_COLUMNS[k][0]) for k in keys]
    return _section(
        "metrics",
        "Metrics, every method side by side",
        _evaluation_note(inp)
        + _table(head, body)
        + '<p class="sub">Best value of each column in bold. ECE and Brier are only defined for '
        "scores that are probabilities. Computed on the evaluated fields as written by "
        "<code>extractconf evaluate</code>.</p>",
    )


def _evaluation_note(inp: ReportInputs) -> str:
    bits = []
    if isinstance(inp.meta.get("evaluation"), str):
        bits.append(f"Evaluation: {escape(inp.meta['evaluation'])}.")
    rt = inp.meta.get("routing")
    if isinstance(rt, dict) and isinstance(rt.get("coverage"), int | float):
        bits.append(f"Routing with the chosen thresholds accepts {_pct(rt['coverage'])} of fields")
        if isinstance(rt.get("accuracy_of_accepted"), int | float):
            bits[-1] += f" at {_pct(rt['accuracy_of_accepted'])} accuracy"
        if isinstance(rt.get("straight_through_documents"), int | float):
            bits[-1] += (
                f"; {_pct(rt['straight_through_documents'])} of documents go straight "
                "through (every field accepted)"
            )
        bits[-1] += "."
    return f'<p class="sub">{" ".join(bits)}</p>' if bits else ""


def _reliability(inp: ReportInputs) -> str:
    if not inp.rows or not inp.has_column("extractconf"):
        return _section(
            "reliability",
            "Reliability diagrams",
            _note("no extractconf scores in scores.jsonl; diagram skipped"),
        )
    y = inp.labels()
    panels = {}
    extra = ""
    if inp.has_column("extractconf_raw"):
        panels["before calibration (fused score)"] = inp.column("extractconf_raw")
    else:
        extra = _note(
            "scores.jsonl has no extractconf_raw column: only the calibrated scores are shown"
        )
    panels["after calibration (P(correct))"] = inp.column("extractconf")
    return _section(
        "reliability",
        "Reliability diagrams (before / after calibration)",
        extra
        + _img(plots.reliability_png(y, panels), "reliability diagrams")
        + '<p class="sub">Bars: fraction of fields correct in each confidence bin; diamonds: '
        "the bin's mean confidence (the orange line is the gap ECE averages). A calibrated "
        "score follows the diagonal. Bottom: number "
        "of fields per bin (log scale).</p>",
    )


def _method_scores(inp: ReportInputs) -> dict[str, np.ndarray]:
    return {m: inp.column(m) for m in inp.methods if inp.has_column(m)}


def _risk_coverage(inp: ReportInputs) -> str:
    scores = _method_scores(inp)
    if not scores:
        return _section(
            "risk-coverage",
            "Risk–coverage curves",
            _note("scores.jsonl missing or without score columns; plot skipped"),
        )
    return _section(
        "risk-coverage",
        "Risk–coverage curves",
        _img(plots.risk_coverage_png(inp.labels(), scores), "risk-coverage curves")
        + '<p class="sub">Accept the most confident fields first; lower is better. Dashed grey '
        "line: error rate when accepting everything. Missing baseline scores count as least "
        "confident.</p>",
    )


def _coverage_targets(inp: ReportInputs) -> str:
    scores = _method_scores(inp)
    if not scores:
        return _section(
            "coverage-at-accuracy",
            "Coverage at target accuracy",
            _note("scores.jsonl missing; table skipped"),
        )
    y = inp.labels()
    table = {
        m: [coverage_at_accuracy(y, s, t) for t in TARGET_ACCURACIES] for m, s in scores.items()
    }
    col = [[v[i] for v in table.values()] for i in range(len(TARGET_ACCURACIES))]
    best = [max(c) for c in col]
    body = []
    for m, covs in table.items():
        body.append(
            [f"<code>{escape(m)}</code>"]
            + [
                ("<b>" if c == best[i] and len(set(col[i])) > 1 else "") + _pct(c)
                for i, c in enumerate(covs)
            ]
        )
    oracle = 1 - y.mean()
    body.append(["oracle (every correct field, no error)"] + [_pct(1 - oracle)] * 4)
    head = ["method"] + [f"{100 * t:g}% accuracy" for t in TARGET_ACCURACIES]
    return _section(
        "coverage-at-accuracy",
        "Coverage at 95 / 98 / 99 / 99.5% target accuracy",
        _table(head, body)
        + '<p class="sub">Largest share of fields that can be accepted while the accepted '
        "ones stay at least that accurate, measured on this evaluation set (the best "
        "achievable in hindsight, no guarantee). The per-field thresholds below carry the "
        "finite-sample guarantee.</p>",
    )


def _field_threshold(inp: ReportInputs, name: str, rows: list[dict]) -> tuple[float | None, str]:
    spec = ((inp.thresholds or {}).get("fields") or {}).get(name)
    if isinstance(spec, dict):
        t = spec.get("threshold")
        return (None if t is None else float(t)), str(spec.get("source", ""))
    # the thresholds rows were routed with: one per model, one per fold when cross-fitted
    ts = [r.get("threshold") for r in rows if isinstance(r.get("threshold"), int | float)]
    sources = Counter(str(r.get("threshold_source") or "") for r in rows if r.get("decision"))
    source = sources.most_common(1)[0][0] if sources else ""
    if ts:
        return float(np.median(ts)), source
    if sources:
        return None, source or "none"
    return None, ""


def _target_note(inp: ReportInputs) -> str:
    params = (inp.thresholds or {}).get("params") or {}
    a, c = params.get("target_accuracy"), params.get("confidence_level")
    if not isinstance(a, int | float) or not isinstance(c, int | float):
        return ""
    return (
        f'<p class="sub">Thresholds target accuracy &ge; {100 * a:g}% among accepted fields '
        f"with probability {100 * c:g}% over the calibration draw (Learn then Test); compare "
        "with the column <i>accuracy of accepted</i>.</p>"
    )


def _per_field(inp: ReportInputs) -> str:
    if not inp.rows:
        return _section("per-field", "Per field", _note("scores.jsonl missing; table skipped"))
    by_field: dict[str, list[dict]] = {}
    for r in inp.rows:
        by_field.setdefault(str(r["field"]), []).append(r)
    has_conf = inp.has_column("extractconf")
    body = []
    for name, rows in sorted(by_field.items()):
        y = np.array([int(bool(r["correct"])) for r in rows])
        s = np.array([r.get("extractconf", math.nan) for r in rows], dtype=float)
        lam, src = _field_threshold(inp, name, rows)
        if any(r.get("decision") for r in rows):
            acc_mask = np.array([r.get("decision") == "accept" for r in rows])
        elif lam is not None and has_conf:
            acc_mask = s >= lam
        else:
            acc_mask = None
        cov = None if acc_mask is None else float(acc_mask.mean())
        acc = None if acc_mask is None or not acc_mask.any() else float(y[acc_mask].mean())
        spec = ((inp.thresholds or {}).get("fields") or {}).get(name) or {}
        ftype = rows[0].get("field_type") or spec.get("field_type") or ""
        body.append(
            [
                f"<code>{escape(name)}</code>",
                escape(str(ftype)),
                _fmt(len(rows)),
                _pct(1 - y.mean()),
                _fmt(auroc(y, s) if has_conf else None),
                "review all" if lam is None and src else _fmt(lam),
                escape(src),
                _pct(cov),
                _pct(acc),
            ]
        )
    head = [
        "field",
        "type",
        "n",
        "failure rate",
        "AUROC",
        "threshold",
        "source",
        "coverage",
        "accuracy of accepted",
    ]
    head, body = _drop_empty(head, body)
    note = ""
    if "threshold" not in head:
        note = _note(
            "no thresholds.json and no routed threshold/decision in scores.jsonl: "
            "threshold, coverage and accuracy columns left out"
        )
    left = tuple(i for i, h in enumerate(head) if h in ("field", "type", "source"))
    return _section(
        "per-field",
        "Per field",
        note
        + _table(head, body, left=left)
        + '<p class="sub">Threshold from thresholds.json (else the one the rows were routed '
        "with: the median over cross-fitting folds, the commonest source); source = field / "
        "type / global / none (none: the data cannot certify the "
        "target, so every value is reviewed). Coverage and accuracy of the routed decisions on "
        "this evaluation set. AUROC is — when a field is always right or always wrong.</p>"
        + _target_note(inp),
    )


def _per_group(inp: ReportInputs) -> str:
    """Coverage and accuracy per document group: realised (rows with a ``group``) and at
    calibration (``thresholds.json`` tuned with ``--groups``)."""
    cells = (inp.thresholds or {}).get("groups") or {}
    key = ((inp.thresholds or {}).get("grouping") or {}).get("key", "group")
    grouped = [r for r in inp.rows if r.get("group") is not None]
    if not cells and not grouped:
        return _section(
            "per-group",
            "Per group",
            _note("no document groups: tune with `extractconf tune --groups KEY` (source, "
                  "quality, language, meta.NAME) and score rows with a group column"),
        )  # fmt: skip
    parts = []
    if grouped:
        from confidence.evaluation.reliability import reliability

        has_decision = any(r.get("decision") for r in grouped)
        data = [
            {
                "group": r["group"],
                "confidence": r.get("extractconf", r.get("confidence")),
                "correct": r["correct"],
                # a routed decision is the acceptance; else the row's threshold decides
                "threshold": (0.0 if r.get("decision") == "accept" else None)
                if has_decision
                else r.get("threshold"),
            }
            for r in grouped
        ]
        body = [
            [
                escape(str(c["group"])),
                _fmt(c["n"]),
                _pct(1 - c["n_correct"] / c["n"]),
                _pct(c.get("coverage")),
                _pct(c.get("accuracy_accepted")),
                f"{_pct(c.get('accuracy_low'))} – {_pct(c.get('accuracy_high'))}",
                _fmt(c["auroc"]),
                _fmt(c["ece"]),
            ]
            for c in reliability(data, by=["group"], n_boot=0)
        ]
        head = ["group", "n", "failure rate", "coverage", "accuracy of accepted",
                "95% interval (exact)", "AUROC", "ECE"]  # fmt: skip
        parts.append(_table(head, body))
        parts.append(
            '<p class="sub">Routed fields of this evaluation set per document group; the '
            "interval is Clopper-Pearson on the accepted fields of the group.</p>"
        )
    if cells:
        body = []
        for name, by_group in sorted(cells.items()):
            for g, st in sorted(by_group.items()):
                t = st.get("threshold")
                body.append(
                    [
                        f"<code>{escape(name)}</code>",
                        escape(f"{key}={g}"),
                        _fmt(st.get("n_samples")),
                        "review all" if t is None else _fmt(t),
                        escape(str(st.get("source", ""))),
                        _pct(st.get("coverage")),
                        _pct(st.get("accuracy")),
                    ]
                )
        head = ["field", "group", "n", "threshold", "source", "coverage", "accuracy of accepted"]
        parts.append(_table(head, body, left=(0, 1, 4)))
        parts.append(
            '<p class="sub">Thresholds per (field, group) from thresholds.json, with coverage and '
            "accuracy on the calibration documents. source = group: certified on the group's own "
            "samples; field / type / global: too few samples, the field's threshold applies; "
            "none: every value of that group is reviewed.</p>"
        )
    return _section("per-group", "Per group", "".join(parts) + _target_note(inp))


def _shap(inp: ReportInputs) -> str:
    if not inp.importance and not inp.shap:
        return _section(
            "shap", "Top SHAP features", _note("feature_importance.json missing; section skipped")
        )
    body = ""
    if inp.importance:
        body += _img(
            plots.importance_png(inp.importance, top=N_TOP_FEATURES), "top SHAP features"
        ) + (
            '<p class="sub">Mean absolute contribution of each feature to the fused log-odds '
            "(LightGBM TreeSHAP) over the evaluated fields.</p>"
        )
    if inp.shap:
        expl = plots.shap_explanation(inp.shap)
        i, what = _waterfall_row(inp)
        body += (
            _img(plots.beeswarm_png(expl, top=N_TOP_FEATURES), "SHAP beeswarm")
            + '<p class="sub">shap beeswarm: one dot per field and feature, its contribution '
            "to the fused log-odds; colour = the feature's value (grey: missing).</p>"
            + _img(plots.waterfall_png(expl[i]), "SHAP waterfall")
            + f'<p class="sub">shap waterfall of {escape(what)}: from the average log-odds to '
            "this field's, feature by feature.</p>"
        )
    return _section("shap", f"Top {N_TOP_FEATURES} SHAP features", body)


def _waterfall_row(inp: ReportInputs) -> tuple[int, str]:
    """Index into ``shap.json`` of the most confident wrong field it holds (else its first)."""
    rows = list(inp.shap.get("rows") or [])
    best, best_p = 0, -1.0
    for k, i in enumerate(rows):
        r = inp.rows[i] if 0 <= i < len(inp.rows) else None
        p = r.get("extractconf") if r else None
        if r and not r["correct"] and isinstance(p, int | float) and p > best_p:
            best, best_p = k, float(p)
    if best_p < 0 or not rows:
        return 0, "the first sampled field"
    r = inp.rows[rows[best]]
    return best, f"the most confident wrong field sampled ({r['doc_id']}, {r['field']})"


def _confident_wrong(inp: ReportInputs) -> str:
    if not inp.rows or not inp.has_column("extractconf"):
        return _section(
            "confident-wrong",
            "Most confident wrong fields",
            _note("no extractconf scores; section skipped"),
        )
    wrong = [
        r for r in inp.rows if not r["correct"] and isinstance(r.get("extractconf"), int | float)
    ]
    wrong.sort(key=lambda r: -r["extractconf"])
    if not wrong:
        return _section(
            "confident-wrong",
            "Most confident wrong fields",
            _note("no wrong field in the evaluation set"),
        )
    has_gold = any("gold" in r for r in wrong)
    body = []
    for r in wrong[:N_CONFIDENT_WRONG]:
        reasons = r.get("reasons") or []
        if isinstance(reasons, str):
            reasons = [reasons]
        row = [
            escape(str(r["doc_id"])),
            f"<code>{escape(str(r['field']))}</code>",
            escape(str(r.get("value"))) if r.get("value") is not None else "<i>empty</i>",
        ]
        if has_gold:
            row.append(escape(str(r.get("gold"))) if r.get("gold") is not None else "<i>absent</i>")
        row += [
            _fmt(float(r["extractconf"])),
            escape(str(r.get("decision") or "—")),
            f'<span class="reasons">{escape("; ".join(map(str, reasons)))}</span>'
            if reasons
            else "—",
        ]
        body.append(row)
    head = (
        ["document", "field", "value"]
        + (["gold"] if has_gold else [])
        + ["confidence", "decision", "reasons"]
    )
    head, body = _drop_empty(head, body)
    return _section(
        "confident-wrong",
        f"The {min(len(wrong), N_CONFIDENT_WRONG)} most confident wrong fields",
        _table(head, body, left=range(len(head)))
        + '<p class="sub">Wrong extractions the model trusted most: where to look for '
        "label noise, matching-rule gaps or blind spots of the features.</p>",
    )


def _monitoring(inp: ReportInputs) -> str:
    if inp.monitor is None:
        return _section(
            "monitoring",
            "Monitoring",
            _note(
                "no monitor.json: compare new scored rows with a reference by "
                "`extractconf monitor --reference REF --current NEW --out DIR/monitor.json`, "
                "then rebuild this report with `python -m confidence.report DIR`"
            ),
        )
    from confidence.report.monitoring import monitoring_section  # it imports this module

    return monitoring_section(inp.monitor)


SECTIONS: tuple[tuple[str, str, Callable[[ReportInputs], str]], ...] = (
    ("metrics", "Metrics", _metrics),
    ("reliability", "Reliability", _reliability),
    ("risk-coverage", "Risk–coverage", _risk_coverage),
    ("coverage-at-accuracy", "Coverage at target", _coverage_targets),
    ("per-field", "Per field", _per_field),
    ("per-group", "Per group", _per_group),
    ("shap", "SHAP", _shap),
    ("confident-wrong", "Confident wrong", _confident_wrong),
    ("monitoring", "Monitoring", _monitoring),
)
"""(anchor id, navigation label, renderer) of every report section, in order."""


def _safe(sid: str, title: str, fn, inp: ReportInputs) -> str:
    # A bug or odd input in one section must not cost the user the rest of the report.
    try:
        return fn(inp)
    except Exception as e:
        return _section(sid, title, _note(f"this section failed: {type(e).__name__}: {e}"))


def render(inp: ReportInputs) -> str:
    """The full HTML document for one evaluate output folder."""
    n_docs = len({r["doc_id"] for r in inp.rows})
    y = inp.labels() if inp.rows else np.zeros(0)
    when = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    summary = (
        f"{len(inp.rows):,} judged fields from {n_docs:,} documents, failure rate "
        f"{_pct(1 - y.mean())}"
        if inp.rows
        else "metrics only"
    )
    notes = "".join(_note(n) for n in inp.notes)
    nav = "".join(f'<a href="#{sid}">{escape(label)}</a>' for sid, label, _ in SECTIONS)
    body = "".join(_safe(sid, label, fn, inp) for sid, label, fn in SECTIONS)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>extractconf evaluation — {escape(inp.out_dir.name)}</title>"
        f"<style>{_CSS}</style></head><body><main>"
        f"<h1>extractconf evaluation report</h1>"
        f'<p class="sub">{escape(str(inp.out_dir))} · {summary} · extractconf {__version__} · '
        f"{when}</p><nav>{nav}</nav>{notes}{body}</main></body></html>\n"
    )
