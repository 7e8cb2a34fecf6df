"""Report figures as PNG bytes (matplotlib, Agg canvas).

Each function returns the bytes of one PNG, ready to inline as base64. matplotlib is imported
lazily: it is the ``report`` extra. Our own figures avoid pyplot's global state; shap's beeswarm
and waterfall plots draw on pyplot's current figure, which is closed right after.

Examples
--------
>>> png = risk_coverage_png([1, 0, 1, 1], {"extractconf": [0.9, 0.1, 0.8, 0.7]})
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np

from confidence.calibration import risk_coverage_curve

__all__ = [
    "beeswarm_png",
    "importance_png",
    "reliability_png",
    "risk_coverage_png",
    "shap_explanation",
    "waterfall_png",
]

_DPI = 100
# Colour-blind-safe palette (Okabe-Ito); extractconf always gets the first colour.
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000")


def _figure(width: float, height: float):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the evaluation report draws with matplotlib; pip install extractconf[report]"
        ) from e
    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def _bin_stats(y: np.ndarray, p: np.ndarray, n_bins: int):
    # Same binning as calibration.metrics.ece(strategy="uniform").
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    hits = np.bincount(bins, weights=y, minlength=n_bins)
    conf = np.bincount(bins, weights=p, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts, hits / counts, conf / counts


def reliability_png(
    y: Sequence[int], panels: Mapping[str, Sequence[float]], *, n_bins: int = 10
) -> bytes:
    """Reliability diagrams, one panel per score column, with the score histogram beneath.

    Parameters
    ----------
    y : 0/1 correctness
    panels : dict title -> probabilities in [0, 1] (e.g. before / after calibration)
    n_bins : int
        Equal-width bins.
    """
    y = np.asarray(y, dtype=float)
    k = max(len(panels), 1)
    fig = _figure(4.6 * k, 5.2)
    grid = fig.add_gridspec(2, k, height_ratios=(3, 1))
    edges = np.linspace(0, 1, n_bins + 1)
    width = 1.0 / n_bins
    for j, (title, p) in enumerate(panels.items()):
        p = np.asarray(p, dtype=float)
        ok = np.isfinite(p)
        counts, acc, conf = _bin_stats(y[ok], np.clip(p[ok], 0, 1), n_bins)
        used = counts > 0
        ax = fig.add_subplot(grid[0, j])
        centres = edges[:-1] + width / 2
        ax.bar(
            edges[:-1][used],
            acc[used],
            width=width,
            align="edge",
            color=_COLOURS[0],
            edgecolor="white",
            alpha=0.85,
            label="fraction correct in bin",
        )
        # The gap between mean confidence and accuracy is what ECE averages.
        ax.vlines(centres[used], acc[used], conf[used], color="#D55E00", lw=2)
        ax.plot(
            centres[used], conf[used], "D", color="#D55E00", ms=5, label="mean confidence in bin"
        )
        ax.plot([0, 1], [0, 1], color="#444", ls="--", lw=1, label="perfect calibration")
        ece = float(np.sum(np.abs(acc[used] - conf[used]) * counts[used]) / max(ok.sum(), 1))
        ax.set_title(f"{title}  (ECE {ece:.3f}, {n_bins} bins)", fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_ylabel("fraction correct")
        ax.tick_params(labelbottom=False)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        hx = fig.add_subplot(grid[1, j], sharex=ax)
        hx.bar(edges[:-1], counts, width=width, align="edge", color="#777", edgecolor="white")
        hx.set_yscale("symlog", linthresh=1)
        hx.set_xlabel("predicted P(correct)")
        hx.set_ylabel("fields")
    return _png(fig)


def risk_coverage_png(y: Sequence[int], scores: Mapping[str, Sequence[float]]) -> bytes:
    """Risk (1 - accuracy of accepted fields) against coverage, every method on one plot.

    The dotted *oracle* accepts every correct field first: the best any score could do.
    """
    y = np.asarray(y, dtype=int)
    fig = _figure(8.0, 4.8)
    ax = fig.add_subplot()
    for i, (name, s) in enumerate(scores.items()):
        cov, acc = risk_coverage_curve(y, np.asarray(s, dtype=float))
        ax.step(
            np.r_[0, cov],
            np.r_[1 - acc[0], 1 - acc],
            where="pre",
            color=_COLOURS[i % len(_COLOURS)],
            lw=2.4 if i == 0 else 1.4,
            label=name,
        )
    if len(y):
        # distinct scores, correct fields first: the true curve, not two interpolated ties
        cov, acc = risk_coverage_curve(y, y + np.linspace(0.0, 0.5, len(y)))
        ax.step(
            np.r_[0, cov],
            np.r_[1 - acc[0], 1 - acc],
            where="pre",
            color="#000",
            lw=1,
            ls=":",
            label="oracle",
        )
        ax.axhline(1 - y.mean(), color="#999", lw=0.8, ls="--")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("coverage (fraction of fields accepted, most confident first)")
    ax.set_ylabel("risk (error rate among accepted)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="upper left")
    return _png(fig)


def importance_png(importance: Mapping[str, float], *, top: int = 15) -> bytes:
    """Horizontal bars of the ``top`` features by mean |SHAP| (largest on top)."""
    items = sorted(importance.items(), key=lambda kv: -kv[1])[:top][::-1]
    fig = _figure(8.0, 0.32 * len(items) + 1.0)
    ax = fig.add_subplot()
    ax.barh([k for k, _ in items], [v for _, v in items], color=_COLOURS[0])
    ax.set_xlabel("mean |SHAP| (log-odds)")
    ax.tick_params(axis="y", labelsize=9)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def shap_explanation(d: Mapping[str, Sequence]):
    """A ``shap.Explanation`` from the content of ``shap.json`` (see :mod:`confidence.report`)."""
    import shap

    return shap.Explanation(
        values=np.asarray(d["values"], dtype=float),
        base_values=np.asarray(d["base_values"], dtype=float),
        data=np.asarray([[np.nan if v is None else v for v in row] for row in d["data"]], float),
        feature_names=list(d["feature_names"]),
    )


def _shap_png(draw) -> bytes:
    import matplotlib

    matplotlib.use("Agg")  # shap draws through pyplot; never open a window
    import matplotlib.pyplot as plt

    draw()
    fig = plt.gcf()
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight")
        return buf.getvalue()
    finally:
        plt.close(fig)


def beeswarm_png(explanation, *, top: int = 15) -> bytes:
    """shap's beeswarm plot: every field's contribution of the ``top`` features."""
    import shap

    return _shap_png(lambda: shap.plots.beeswarm(explanation, max_display=top, show=False))


def waterfall_png(row, *, top: int = 12) -> bytes:
    """shap's waterfall plot of one field (``explanation[i]``): from the base value to its
    log-odds, feature by feature."""
    import shap

    return _shap_png(lambda: shap.plots.waterfall(row, max_display=top, show=False))
