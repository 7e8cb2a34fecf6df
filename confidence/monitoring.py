"""Monitoring: has a new batch of scored rows drifted from a reference, does the guarantee hold?

:func:`monitor` compares two scored outputs (``extractconf score``) and, optionally, the audit
reviews of the current batch (DESIGN.md "Review log"), per field and per group:

* **confidence distribution** - the two-sample Kolmogorov-Smirnov test (``scipy.stats.ks_2samp``,
  exact for small samples): distribution-free, it sees a move of location *or* shape of the
  confidences, and needs no binning. Its p-value decides significance; the **population
  stability index** (PSI over the reference's deciles) is the effect size, because a p-value
  alone flags negligible moves in large batches. A pair drifts when its Holm-adjusted p-value
  is below ``level`` *and* its PSI is at least ``min_psi`` (0.1, the usual "moderate" mark);
* **top features** - the same test on each ``feature.<name>`` column the rows carry
  (``extractconf score --features K`` writes the K fused features with the largest gain);
* **accepted share** - Fisher's exact test on accepted / reviewed counts, effect size the
  difference of shares (at least ``min_share_change``);
* every p-value of the report is one family, corrected with **Holm** (controls the chance of
  any false alarm, so a pair of batches without drift alarms in about ``level`` of cases or
  less, however many fields are tested);
* **realised accuracy** of accepted fields from audit reviews (``audit`` true; ``accept`` is
  correct, ``correct``/``absent`` with another final value is wrong, ``skip`` is left out) with
  an exact **Clopper-Pearson** interval at ``confidence_level``: the guarantee is *violated*
  when the upper bound is below ``target``. Audits are taken as a uniform sample of accepted
  fields (``p_sample`` is reported, not used as a weight);
* **fingerprints** - a different ``model_sha``, ``thresholds_sha`` or ``llm`` between the two
  batches is reported and counts as drift (the reference no longer describes the pipeline).

The verdict is ``"guarantee violated"``, else ``"drift"``, else ``"ok"``;
:data:`EXIT_CODES` maps it to the exit code of ``extractconf monitor``.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> def rows(shift, n=300):
...     c = np.clip(rng.normal(0.7 - shift, 0.15, n), 0, 1)
...     return [{"doc_id": str(i), "field": "total", "confidence": float(x),
...              "decision": "accept" if x >= 0.8 else "review"} for i, x in enumerate(c)]
>>> monitor(rows(0.0), rows(0.0))["verdict"]
'ok'
>>> monitor(rows(0.0), rows(0.3))["verdict"]
'drift'
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from confidence.errors import DatasetError
from confidence.scores import FEATURE_PREFIX

__all__ = [
    "EXIT_CODES",
    "FINGERPRINTS",
    "VERDICTS",
    "audit_accuracy",
    "holm",
    "monitor",
    "psi",
    "read_rows",
]

VERDICTS = ("ok", "drift", "guarantee violated")
EXIT_CODES = {"ok": 0, "drift": 1, "guarantee violated": 1}
"""Verdict -> exit code of ``extractconf monitor`` (2 is a bad input)."""
FINGERPRINTS = ("model_sha", "thresholds_sha", "llm")
MIN_ROWS = 20
"""Fewer rows on either side: the pair is listed but not tested."""


_TEXT_COLUMNS = (
    "doc_id", "field", "field_type", "value", "hunter_value", "mapper_value", "decision",
    "threshold_source", "reasons", "status", "error", "group", "model_sha", "thresholds_sha",
    "llm", "gold", "instructions", "reviewer", "action", "final_value", "shown_value", "lease",
)  # fmt: skip
_TEXT_DTYPES = dict.fromkeys(_TEXT_COLUMNS, str)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Scored rows (or review-log lines) from JSONL, CSV or Parquet, by suffix."""
    p = Path(path)
    if not p.is_file():
        raise DatasetError(f"{p}: no such file")
    suffix = p.suffix.lower().lstrip(".")
    try:
        if suffix in ("jsonl", "json"):
            import json

            # lines end at "\n" only: a value may hold U+2028 or U+0085, which splitlines() cuts
            text = p.read_text(encoding="utf-8")
            return [json.loads(x) for x in text.split("\n") if x.strip()]
        import pandas as pd

        if suffix == "csv":
            # text columns stay text: an id "007" is not the number 7
            df = pd.read_csv(p, keep_default_na=False, na_values=[""], dtype=_TEXT_DTYPES)
        elif suffix == "parquet":
            df = pd.read_parquet(p)
        else:
            raise DatasetError(f"{p}: unsupported suffix; use .jsonl, .csv or .parquet")
        df = df.astype(object).where(df.notna(), None)
        return df.to_dict(orient="records")
    except (ValueError, OSError) as e:
        raise DatasetError(f"{p}: unreadable ({e})") from None


def psi(reference, current, *, bins: int = 10, eps: float = 1e-4) -> float:
    """Population stability index of ``current`` against ``reference`` (reference quantile bins).

    Examples
    --------
    >>> x = np.linspace(0, 1, 1000)
    >>> psi(x, x)
    0.0
    >>> psi(x, x ** 3) > 0.25
    True
    """
    r = np.asarray(reference, dtype=float)
    c = np.asarray(current, dtype=float)
    edges = np.unique(np.quantile(r, np.linspace(0, 1, bins + 1)[1:-1]))
    pr = np.bincount(np.searchsorted(edges, r, side="right"), minlength=len(edges) + 1) / len(r)
    pc = np.bincount(np.searchsorted(edges, c, side="right"), minlength=len(edges) + 1) / len(c)
    pr, pc = np.maximum(pr, eps), np.maximum(pc, eps)
    return round(float(np.sum((pc - pr) * np.log(pc / pr))), 10)


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error control).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p)
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def _correct(review: Mapping[str, Any]) -> bool | None:
    action = review.get("action")
    if action == "accept":
        return True
    if action in ("correct", "absent"):
        final, shown = review.get("final_value"), review.get("shown_value")
        return (final or "") == (shown or "")
    return None  # skip or unknown


def audit_accuracy(
    rows: Iterable[Mapping[str, Any]],
    reviews: Iterable[Mapping[str, Any]],
    *,
    target: float,
    confidence_level: float = 0.95,
) -> dict[str, Any]:
    """Realised accuracy of the accepted rows that were audited, with a Clopper-Pearson interval.

    Examples
    --------
    >>> rows = [{"doc_id": str(i), "field": "f", "decision": "accept"} for i in range(100)]
    >>> revs = [{"doc_id": str(i), "field": "f", "action": "accept" if i >= 30 else "correct",
    ...          "shown_value": "a", "final_value": "b", "audit": True} for i in range(100)]
    >>> a = audit_accuracy(rows, revs, target=0.9)
    >>> a["n"], a["accuracy"], a["violated"]
    (100, 0.7, True)
    """
    accepted = {(str(r["doc_id"]), str(r["field"])) for r in rows if r.get("decision") == "accept"}
    seen: dict[tuple[str, str], bool] = {}
    p_sample: list[float] = []
    for rv in reviews:  # the last decision on a field wins (the log is append-only)
        key = (str(rv.get("doc_id")), str(rv.get("field")))
        ok = _correct(rv)
        if rv.get("audit") in (True, "true", "True", 1) and key in accepted and ok is not None:
            seen[key] = ok
            if rv.get("p_sample") is not None:
                p_sample.append(float(rv["p_sample"]))
    n, k = len(seen), sum(seen.values())
    out: dict[str, Any] = {"n": n, "n_correct": k, "target": target}
    out["confidence_level"] = confidence_level
    if n == 0:
        return {**out, "accuracy": None, "interval": None, "violated": False}
    ci = stats.binomtest(k, n).proportion_ci(confidence_level, method="exact")
    out.update(
        accuracy=k / n,
        interval=[float(ci.low), float(ci.high)],
        violated=bool(ci.high < target),
        mean_p_sample=float(np.mean(p_sample)) if p_sample else None,
    )
    return out


def _values(rows: Sequence[Mapping[str, Any]], column: str) -> np.ndarray:
    v = np.array([r.get(column) for r in rows], dtype=object)
    v = np.array([np.nan if x is None or x == "" else float(x) for x in v], dtype=float)
    return v[np.isfinite(v)]


def _shift_tests(ref, cur, columns: list[str]) -> list[dict[str, Any]]:
    out = []
    for col in columns:
        a, b = _values(ref, col), _values(cur, col)
        t: dict[str, Any] = {
            "kind": "distribution",
            "column": col,
            "n_ref": len(a),
            "n_cur": len(b),
        }
        if min(len(a), len(b)) >= MIN_ROWS:
            with warnings.catch_warnings():  # scipy falls back from exact to asymptotic: fine
                warnings.simplefilter("ignore", RuntimeWarning)
                p = float(stats.ks_2samp(a, b).pvalue)
            t.update(test="ks", p=p, psi=psi(a, b))
        out.append(t)
    acc_a = sum(r.get("decision") == "accept" for r in ref)
    acc_b = sum(r.get("decision") == "accept" for r in cur)
    t = {"kind": "accepted_share", "column": "decision", "n_ref": len(ref), "n_cur": len(cur)}
    if min(len(ref), len(cur)) >= MIN_ROWS:
        table = [[acc_a, len(ref) - acc_a], [acc_b, len(cur) - acc_b]]
        t.update(
            test="fisher",
            p=float(stats.fisher_exact(table).pvalue),
            share_ref=acc_a / len(ref),
            share_cur=acc_b / len(cur),
        )
    out.append(t)
    return out


def _group_by(rows, keys: Sequence[str]) -> dict[tuple, list]:
    out: dict[tuple, list] = {}
    for r in rows:
        if r.get("status", "ok") == "error":
            continue
        out.setdefault(tuple(str(r.get(k)) for k in keys), []).append(r)
    return out


def monitor(
    reference: Sequence[Mapping[str, Any]],
    current: Sequence[Mapping[str, Any]],
    reviews: Iterable[Mapping[str, Any]] | None = None,
    *,
    group: str | None = None,
    level: float = 0.05,
    min_psi: float = 0.1,
    min_share_change: float = 0.05,
    target: float = 0.9,
    confidence_level: float = 0.95,
) -> dict[str, Any]:
    """Drift and guarantee report of ``current`` scored rows against ``reference`` ones.

    Parameters
    ----------
    reference, current : sequences of dict
        Scored rows (``doc_id``, ``field``, ``confidence``, ``decision``, optional fingerprints,
        ``feature.<name>`` columns and a ``group`` column).
    reviews : iterable of dict, optional
        Review-log lines of the current batch; audited accepted fields give realised accuracy.
    group : str, optional
        Column whose values split each field further (tests per (field, group) as well).
    level : float, default 0.05
        Family-wise error level of the Holm-corrected tests.
    min_psi, min_share_change : float
        Effect sizes a significant change must also reach to count as drift.
    target, confidence_level : float
        Accuracy the thresholds promise, and the level of the Clopper-Pearson interval.

    Returns
    -------
    dict
        ``verdict``, ``exit_code``, ``tests`` (one per (field[, group], column) with ``p``,
        ``p_holm``, ``psi`` or shares, ``drift``), ``untested`` (pairs with too few rows),
        ``fields_only_in`` either batch, ``fingerprints`` and ``changes``, ``audit``.
    """
    if not reference or not current:
        raise DatasetError("monitor needs rows in both the reference and the current batch")
    for name, rows in (("reference", reference), ("current", current)):
        if not {"field", "confidence", "decision"} <= set(rows[0]):
            raise DatasetError(
                f"{name} rows lack field/confidence/decision columns; pass the output of "
                "`extractconf score`"
            )
    feats = sorted({k for r in reference[:1] for k in r if k.startswith(FEATURE_PREFIX)})
    columns = ["confidence", *feats]
    keysets = [("field",)] + ([("field", group)] if group else [])
    tests: list[dict[str, Any]] = []
    for keys in keysets:
        ref_g, cur_g = _group_by(reference, keys), _group_by(current, keys)
        for key in sorted(set(ref_g) | set(cur_g)):
            for t in _shift_tests(ref_g.get(key, []), cur_g.get(key, []), columns):
                tests.append({**dict(zip(keys, key, strict=True)), **t})
    tested = [t for t in tests if "p" in t]
    for t, p in zip(tested, holm([t["p"] for t in tested]) if tested else [], strict=True):
        t["p_holm"] = float(p)
        big = (
            t["psi"] >= min_psi
            if t["kind"] == "distribution"
            else abs(t["share_cur"] - t["share_ref"]) >= min_share_change
        )
        t["drift"] = bool(p < level and big)
    prints = {
        k: {
            "reference": sorted({str(r[k]) for r in reference if r.get(k) is not None}),
            "current": sorted({str(r[k]) for r in current if r.get(k) is not None}),
        }
        for k in FINGERPRINTS
    }
    changes = [k for k, v in prints.items() if v["reference"] != v["current"]]
    audit = None
    if reviews is not None:
        audit = audit_accuracy(current, reviews, target=target, confidence_level=confidence_level)
    drift = any(t.get("drift") for t in tests) or bool(changes)
    verdict = "guarantee violated" if audit and audit["violated"] else "drift" if drift else "ok"
    return {
        "verdict": verdict,
        "exit_code": EXIT_CODES[verdict],
        "n_reference": len(reference),
        "n_current": len(current),
        "settings": {
            "test": "two-sample Kolmogorov-Smirnov + PSI; Fisher exact for accepted share",
            "correction": "Holm",
            "level": level,
            "min_psi": min_psi,
            "min_share_change": min_share_change,
            "group": group,
        },
        "fingerprints": prints,
        "changes": changes,
        "drifted": [t for t in tests if t.get("drift")],
        "untested": sum("p" not in t for t in tests),
        "fields_only_in": {
            "reference": sorted({r["field"] for r in reference} - {r["field"] for r in current}),
            "current": sorted({r["field"] for r in current} - {r["field"] for r in reference}),
        },
        "tests": tests,
        "audit": audit,
    }
