"""Selective-prediction metrics for field confidence scores (numpy only, vectorised).

Every function takes ``y`` (1 = the extracted field is correct, 0 = wrong) and ``s`` (a score,
higher = more likely correct). The definitions mirror ``tools/referee.py`` exactly so the numbers in
``metrics.json`` can be reproduced independently:

* the risk-coverage curve is evaluated only at the *ends of ties*: fields with equal scores are
  accepted or rejected together, so the order of tied rows never changes a metric;
* AURC is the trapezoid area under (coverage, 1 - accuracy) plus the rectangle from coverage 0 to
  the first point;
* ``accuracy_at_coverage`` is the accuracy at the first tie-end whose coverage reaches the target;
* ``coverage_at_accuracy`` is the largest tie-end coverage whose accuracy reaches the target (0 if
  none);
* equal-width ECE puts ``s`` in bin ``min(int(s * n_bins), n_bins - 1)``;
* NaN scores count as ``-inf`` (least confident).

Equal-mass ECE (``strategy="quantile"``) is an extra the referee does not compute.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "accuracy_at_coverage",
    "aurc",
    "aurc_oracle",
    "auroc",
    "brier",
    "coverage_at_accuracy",
    "ece",
    "evaluate_scores",
    "risk_coverage_curve",
]

_ECE_STRATEGIES = ("uniform", "quantile")


def _check_pair(y, s) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y)
    s = np.asarray(s, dtype=float)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError("y and s must be 1-D arrays; pass one label and one score per field")
    if len(y) != len(s):
        raise ValueError(
            f"y has {len(y)} labels but s has {len(s)} scores; pass one score per label"
        )
    if y.dtype == bool:
        y = y.astype(int)
    if len(y) and not np.isin(y, (0, 1)).all():
        raise ValueError("y must hold 0/1 (or bool) correctness labels")
    # The referee treats a missing score as the least confident possible.
    s = np.where(np.isnan(s), -np.inf, s)
    return y.astype(int), s


def _check_probabilities(p: np.ndarray, name: str) -> None:
    if len(p) and (p.min() < 0 or p.max() > 1):
        raise ValueError(f"{name} needs probabilities in [0, 1]; calibrate the scores first")


def auroc(y, s) -> float:
    """Area under the ROC curve of ``s`` for separating correct from wrong fields.

    Ties get average ranks (a tie counts one half), as in the Mann-Whitney U statistic.

    Returns
    -------
    float
        AUROC, or NaN when only one class is present.

    Examples
    --------
    >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> auroc([0, 1], [0.5, 0.5])
    0.5
    """
    y, s = _check_pair(y, s)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    uniq, inv = np.unique(s, return_inverse=True)
    counts = np.bincount(inv, minlength=len(uniq))
    # Average rank of each group of tied scores: ranks run start+1 .. start+count.
    start = np.cumsum(counts) - counts
    avg_rank = start + (counts + 1) / 2.0
    rank_sum = avg_rank[inv][y == 1].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def risk_coverage_curve(y, s) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and accuracy of accepting the most confident fields first.

    Points are taken only at the ends of runs of tied scores.

    Returns
    -------
    coverage, accuracy : ndarray
        Increasing coverage in (0, 1] and the accuracy of the accepted fields at that coverage;
        risk is ``1 - accuracy``.

    Examples
    --------
    >>> cov, acc = risk_coverage_curve([1, 0, 1, 1], [0.9, 0.5, 0.5, 0.2])
    >>> cov.tolist(), acc.tolist()
    ([0.25, 0.75, 1.0], [1.0, 0.6666666666666666, 0.75])
    """
    y, s = _check_pair(y, s)
    return _curve(y, s)


def _curve(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-s, kind="mergesort")
    ys, ss = y[order], s[order]
    n = np.arange(1, len(y) + 1)
    acc = np.cumsum(ys) / n
    last = np.r_[ss[1:] != ss[:-1], True] if len(ss) else np.zeros(0, dtype=bool)
    return n[last] / len(y), acc[last]


def _trapezoid(yv: np.ndarray, xv: np.ndarray) -> float:
    # Same arithmetic as np.trapezoid (numpy >= 2 only), so results match the referee bit for bit.
    return float((np.diff(xv) * (yv[1:] + yv[:-1]) / 2.0).sum())


def aurc(y, s) -> float:
    """Area under the risk-coverage curve (lower is better).

    Examples
    --------
    >>> aurc([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.1])  # perfect ranking
    0.14583333333333334
    """
    y, s = _check_pair(y, s)
    cov, acc = _curve(y, s)
    if not len(cov):
        return float("nan")
    return _trapezoid(1 - acc, cov) + float((1 - acc[0]) * cov[0])


def aurc_oracle(y) -> float:
    """AURC of a perfect ranking: every correct field strictly above every wrong one.

    This is the floor of :func:`aurc` for any score without ties. It is *not* ``aurc(y, y)``:
    scoring by the labels themselves makes two big ties, and the curve is then interpolated
    linearly between their ends, below the true (concave) risk curve; with failure rate ``f``
    that gives ``f**2 / 2`` instead of about ``f - (1 - f) * ln(1 / (1 - f))``.

    Examples
    --------
    >>> aurc_oracle([1, 1, 0, 0])  # = aurc([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.1])
    0.14583333333333334
    >>> aurc([1, 1, 0, 0], [1, 1, 0, 0])  # the tied version is lower: not a floor
    0.125
    """
    y, _ = _check_pair(y, np.zeros(len(np.asarray(y))))
    n = len(y)
    if not n:
        return float("nan")
    # labels first, then distinct within-class scores: the order inside a class changes nothing
    return aurc(y, y.astype(float) + np.linspace(0.0, 0.5, n))


def accuracy_at_coverage(y, s, coverage: float = 0.8) -> float:
    """Accuracy of the accepted fields at the first tie-end reaching ``coverage``.

    Examples
    --------
    >>> accuracy_at_coverage([1, 1, 1, 0, 1], [5, 4, 3, 2, 1], 0.6)
    1.0
    """
    y, s = _check_pair(y, s)
    cov, acc = _curve(y, s)
    hit = acc[cov >= coverage]
    return float(hit[0]) if len(hit) else float("nan")


def coverage_at_accuracy(y, s, accuracy: float = 0.99) -> float:
    """Largest tie-end coverage whose accepted fields reach ``accuracy`` (0.0 if none does).

    Examples
    --------
    >>> coverage_at_accuracy([1, 1, 1, 0, 1], [5, 4, 3, 2, 1], 0.99)
    0.6
    """
    y, s = _check_pair(y, s)
    cov, acc = _curve(y, s)
    ok = cov[acc >= accuracy]
    return float(ok.max()) if len(ok) else 0.0


def ece(y, p, *, n_bins: int = 15, strategy: str = "uniform", sample_weight=None) -> float:
    """Expected calibration error of probabilities ``p`` of being correct.

    Parameters
    ----------
    y : array-like of 0/1
    p : array-like of float in [0, 1]
    n_bins : int, default=15
    strategy : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: equal-width bins (the referee's definition). ``"quantile"``: equal-mass bins
        with edges at quantiles of ``p`` (tied values share a bin, so bins can be unequal).
    sample_weight : array-like of float or None
        Row weights (e.g. inverse sampling probabilities of reviewed fields); uniform when None.

    Examples
    --------
    >>> round(ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6]), 6)
    0.2
    >>> round(ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], sample_weight=[1, 1, 1, 2]), 6)
    0.24
    """
    if strategy not in _ECE_STRATEGIES:
        raise ValueError(f"strategy={strategy!r}; valid values: {', '.join(_ECE_STRATEGIES)}")
    if n_bins < 1:
        raise ValueError(f"n_bins={n_bins}; pass a positive number of bins")
    y, p = _check_pair(y, p)
    _check_probabilities(p, "ece")
    if not len(p):
        return float("nan")
    if strategy == "uniform":
        bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    else:
        edges = np.quantile(p, np.linspace(0, 1, n_bins + 1))
        bins = np.searchsorted(edges[1:-1], p, side="right")
    w = np.ones(len(p)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if w.shape != p.shape or (w < 0).any() or not w.sum() > 0:
        raise ValueError("sample_weight needs one weight >= 0 per row, not all 0")
    counts = np.bincount(bins, weights=w, minlength=n_bins)
    used = counts > 0
    acc = np.bincount(bins, weights=w * y, minlength=n_bins)[used] / counts[used]
    conf = np.bincount(bins, weights=w * p, minlength=n_bins)[used] / counts[used]
    return float(np.sum(np.abs(acc - conf) * counts[used] / w.sum()))


def brier(y, p) -> float:
    """Mean squared error between probabilities ``p`` and outcomes ``y``.

    Examples
    --------
    >>> brier([1, 0], [0.75, 0.25])
    0.0625
    """
    y, p = _check_pair(y, p)
    _check_probabilities(p, "brier")
    return float(np.mean((p - y) ** 2)) if len(p) else float("nan")


def evaluate_scores(y, s, *, n_bins: int = 15) -> dict[str, float | int | None]:
    """All selective-prediction metrics of one score column, as written to ``metrics.json``.

    ``ece``, ``ece_equal_mass`` and ``brier`` are ``None`` when ``s`` is not a probability (some
    value outside [0, 1]), as the referee omits them then.

    Returns
    -------
    dict
        ``auroc``, ``aurc``, ``accuracy_at_coverage_0.8``, ``coverage_at_accuracy_0.99``, ``ece``,
        ``ece_equal_mass``, ``brier``, ``n_fields``, ``failure_rate``.

    Examples
    --------
    >>> m = evaluate_scores([1, 1, 0, 1], [0.9, 0.8, 0.2, 0.7])
    >>> m["auroc"], m["n_fields"], m["failure_rate"]
    (1.0, 4, 0.25)
    """
    y, s = _check_pair(y, s)
    if not len(y):
        raise ValueError("evaluate_scores got no fields; score at least one labelled field")
    is_prob = bool(s.min() >= 0 and s.max() <= 1)
    return {
        "auroc": auroc(y, s),
        "aurc": aurc(y, s),
        "accuracy_at_coverage_0.8": accuracy_at_coverage(y, s, 0.8),
        "coverage_at_accuracy_0.99": coverage_at_accuracy(y, s, 0.99),
        "ece": ece(y, s, n_bins=n_bins) if is_prob else None,
        "ece_equal_mass": ece(y, s, n_bins=n_bins, strategy="quantile") if is_prob else None,
        "brier": brier(y, s) if is_prob else None,
        "n_fields": len(y),
        "failure_rate": float(1 - y.mean()),
    }
