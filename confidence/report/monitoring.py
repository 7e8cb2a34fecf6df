"""The monitoring section: :func:`confidence.monitoring.monitor`'s report as HTML.

:func:`monitoring_section` renders one ``<section>`` (verdict, fingerprint changes, audit
accuracy with its Clopper-Pearson interval, the drifted tests and the per-field table) for any
page; :func:`write_monitoring_html` writes it as a self-contained page (``extractconf monitor
--html``).

Examples
--------
>>> html = monitoring_section({"verdict": "ok", "tests": [], "changes": [], "audit": None,
...                            "n_reference": 10, "n_current": 12, "fingerprints": {}})
>>> "Monitoring" in html and "ok" in html
True
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from confidence import __version__
from confidence.report.html import _CSS, _fmt, _note, _pct, _section, _table

__all__ = ["monitoring_section", "write_monitoring_html"]

_COLOUR = {"ok": "#1a7f37", "drift": "#9a6700", "guarantee violated": "#cf222e"}


def _audit(a: dict[str, Any] | None) -> str:
    if not a:
        return _note("no review log given: realised accuracy not checked (pass --reviews)")
    if not a["n"]:
        return _note("no audited accepted field in the review log")
    lo, hi = a["interval"]
    words = "violated" if a["violated"] else "holds (not rejected)"
    return (
        f"<p>Audited accepted fields: {a['n']:,}, realised accuracy {_pct(a['accuracy'])}, "
        f"{a['confidence_level']:.0%} Clopper-Pearson interval [{_pct(lo)}, {_pct(hi)}] "
        f"against the target {_pct(a['target'])}: <b>{words}</b>.</p>"
    )


def monitoring_section(report: dict[str, Any]) -> str:
    """One HTML ``<section id="monitoring">`` for a :func:`confidence.monitoring.monitor` report."""
    v = report["verdict"]
    head = (
        f'<p>Verdict: <b style="color:{_COLOUR.get(v, "#000")}">{escape(v)}</b> '
        f"({report['n_reference']:,} reference rows, {report['n_current']:,} current rows)</p>"
    )
    changes = "".join(
        _note(
            f"{k} changed: {', '.join(report['fingerprints'][k]['reference']) or '—'} -> "
            f"{', '.join(report['fingerprints'][k]['current']) or '—'}"
        )
        for k in report.get("changes", [])
    )
    tested = [t for t in report["tests"] if "p" in t]
    keys = [k for k in ("field", report.get("settings", {}).get("group")) if k]
    rows = [
        [
            *(escape(str(t.get(k, ""))) for k in keys),
            escape(t["column"]),
            f"{t['n_ref']:,} / {t['n_cur']:,}",
            _fmt(t["p_holm"], 4),
            _fmt(t.get("psi"))
            if "psi" in t
            else f"{_pct(t['share_ref'])} → {_pct(t['share_cur'])}",
            ("<b>" if t["drift"] else "") + ("drift" if t["drift"] else "ok"),
        ]
        for t in sorted(tested, key=lambda t: (not t["drift"], t["p_holm"]))
    ]
    table = (
        _table(
            [*keys, "column", "n ref / cur", "p (Holm)", "PSI / accepted", "verdict"],
            rows,
            left=tuple(range(len(keys) + 1)),
        )
        if rows
        else _note("too few rows to test (at least 20 on each side per field)")
    )
    return _section(
        "monitoring", "Monitoring", head + changes + _audit(report.get("audit")) + table
    )


def write_monitoring_html(report: dict[str, Any], path: str | Path) -> Path:
    """Write the monitoring section as a self-contained HTML page."""
    p = Path(path)
    p.write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>extractconf monitoring</title><style>{_CSS}</style></head><body><main>"
        f'<h1>extractconf monitoring report</h1><p class="sub">extractconf {__version__}</p>'
        f"{monitoring_section(report)}</main></body></html>\n",
        encoding="utf-8",
    )
    return p
