"""Per-field (and per-group) reliability of confidences, each number with an interval and its n.

:func:`reliability` answers "how far can I trust the confidence of this field, on this kind of
document?" from judged rows (a confidence and whether the value was correct):

* ``ece`` -- expected calibration error (:func:`confidence.calibration.ece`, equal-width bins),
  with a percentile bootstrap interval (rows resampled within the cell). The binned ECE is biased
  upward in small cells, and so are its resamples: the interval is widened to include the
  estimate when the resamples all lie above it;
* ``auroc`` -- :func:`sklearn.metrics.roc_auc_score` of the confidence for correctness, with a
  percentile bootstrap interval (resamples holding one class only are left out; NaN when the cell
  holds one class);
* ``accuracy_accepted`` -- accuracy of the accepted rows (``score >= threshold``) with the exact
  Clopper-Pearson interval (:meth:`scipy.stats.binomtest(...).proportion_ci`), ``n_accepted`` and
  ``coverage`` (share of the cell accepted).

Every row of the result also carries ``n`` (rows in the cell) and ``n_correct``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import binomtest
from sklearn.metrics import roc_auc_score

from confidence.calibration import ece

__all__ = ["reliability"]


def _columns(data, names: Sequence[str]) -> dict[str, list]:
    if isinstance(data, Mapping):
        missing = [n for n in names if n not in data]
        cols = {n: list(data[n]) for n in names if n in data}
    else:
        rows = list(data)
        missing = [n for n in names if rows and n not in rows[0]]
        cols = {n: [r.get(n) for r in rows] for n in names if n not in missing}
    if missing:
        raise ValueError(
            f"column(s) {missing} missing; pass rows with {', '.join(names)} (score=, correct=, "
            "by= name the columns)"
        )
    return cols


def reliability(
    data,
    *,
    by: Sequence[str] = ("field",),
    score: str = "confidence",
    correct: str = "correct",
    threshold: float | str | None = "threshold",
    n_bins: int = 15,
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int | None = 0,
) -> list[dict[str, Any]]:
    """Reliability of the confidences per cell of ``by`` (e.g. field and group).

    Parameters
    ----------
    data : sequence of mappings or mapping of columns
        Judged rows, e.g. scored rows (:class:`~confidence.scores.FieldScore` dicts) with a
        ``correct`` column added, or the ``scores.jsonl`` of ``extractconf evaluate``
        (``score="extractconf"``). Rows whose score is missing (None/NaN) are left out.
    by : sequence of str, default ("field",)
        Columns whose values define the cells; ``()`` = one cell of all rows.
    score, correct : str
        Column of the confidence (in [0, 1]) and of the 0/1 (or bool) correctness.
    threshold : float, str or None, default "threshold"
        Accept threshold: a number for all rows, or a column of per-row thresholds (None =
        review always, as in scored rows). None: accuracy above threshold is not computed.
    n_bins : int, default 15
        ECE bins.
    n_boot : int, default 1000
        Bootstrap resamples for the ECE and AUROC intervals.
    level : float, default 0.95
        Confidence level of every interval.
    random_state : int or None
        Seed of the bootstrap.

    Returns
    -------
    list of dict
        One per cell, sorted by ``by``: the ``by`` values, ``n``, ``n_correct``, ``ece``,
        ``ece_low``, ``ece_high``, ``auroc``, ``auroc_low``, ``auroc_high``, and with a threshold
        ``n_accepted``, ``coverage``, ``accuracy_accepted``, ``accuracy_low``, ``accuracy_high``
        (NaN where undefined).

    Examples
    --------
    >>> rows = [{"field": "total", "confidence": c, "correct": y, "threshold": 0.5}
    ...         for c, y in [(0.9, 1), (0.8, 1), (0.3, 0), (0.2, 1)]]
    >>> [r] = reliability(rows, n_boot=200)
    >>> r["n"], round(r["auroc"], 4), round(r["ece"], 4), r["n_accepted"], r["accuracy_accepted"]
    (4, 0.6667, 0.35, 2, 1.0)
    >>> round(r["accuracy_low"], 3), r["accuracy_high"]  # Clopper-Pearson for 2 out of 2
    (0.158, 1.0)
    """
    if not 0 < level < 1:
        raise ValueError(f"level={level}; pass a number between 0 and 1")
    if n_boot < 0:
        raise ValueError(f"n_boot={n_boot}; pass 0 (no bootstrap) or more")
    names = [*by, score, correct]
    if isinstance(threshold, str):
        names.append(threshold)
    cols = _columns(data, names)
    s = np.array([np.nan if v is None else float(v) for v in cols[score]], dtype=float)
    y = np.array([int(bool(v)) for v in cols[correct]], dtype=int)
    if isinstance(threshold, str):
        lam = np.array([np.inf if v is None else float(v) for v in cols[threshold]], dtype=float)
    elif threshold is not None:
        lam = np.full(len(s), float(threshold))
    else:
        lam = None
    keys = list(zip(*(cols[b] for b in by), strict=True)) if by else [()] * len(s)
    ok = ~np.isnan(s)
    rng = np.random.default_rng(random_state)
    cells: dict[tuple, list[int]] = {}
    for i in np.flatnonzero(ok):
        cells.setdefault(keys[i], []).append(int(i))
    out = []
    for key in sorted(cells, key=lambda k: tuple(str(v) for v in k)):
        idx = np.asarray(cells[key])
        row = dict(zip(by, key, strict=True))
        row.update(_cell(s[idx], y[idx], None if lam is None else lam[idx], n_bins, n_boot,
                         level, rng))  # fmt: skip
        out.append(row)
    return out


def _auroc(y: np.ndarray, s: np.ndarray) -> float:
    return float(roc_auc_score(y, s)) if 0 < y.sum() < len(y) else float("nan")


def _cell(s, y, lam, n_bins, n_boot, level, rng) -> dict[str, Any]:
    n = len(s)
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    out: dict[str, Any] = {"n": n, "n_correct": int(y.sum())}
    point = {"ece": ece(y, s, n_bins=n_bins), "auroc": _auroc(y, s)}
    boot: dict[str, list[float]] = {"ece": [], "auroc": []}
    for _ in range(n_boot):
        b = rng.integers(0, n, n)
        boot["ece"].append(ece(y[b], s[b], n_bins=n_bins))
        boot["auroc"].append(_auroc(y[b], s[b]))
    for name, value in point.items():
        vals = np.asarray(boot[name], dtype=float)
        vals = vals[~np.isnan(vals)]
        if len(vals) and value == value:
            low, high = np.percentile(vals, q)
            low, high = min(low, value), max(high, value)
        else:
            low = high = np.nan
        out.update({name: value, f"{name}_low": float(low), f"{name}_high": float(high)})
    if lam is not None:
        acc = s >= lam
        k, m = int(y[acc].sum()), int(acc.sum())
        ci = binomtest(k, m).proportion_ci(level, method="exact") if m else None
        out.update(
            {
                "n_accepted": m,
                "coverage": m / n,
                "accuracy_accepted": k / m if m else float("nan"),
                "accuracy_low": float(ci.low) if ci else float("nan"),
                "accuracy_high": float(ci.high) if ci else float("nan"),
            }
        )
    return out
