"""Reviewed fields -> recalibrated model, re-certified thresholds (``extractconf recalibrate``).

Reviewed fields are not a random sample of all fields: they are the ones below their threshold
(all of them) plus the audited share of the accepted ones. Both steps account for it with the
sampling probabilities :mod:`confidence.feedback.dataset` kept:

* **Calibration** (fused score -> P(correct)) is refitted with the model's own calibrator
  family (isotonic for the shipped model; Platt or Lasso when the model uses them), each
  reviewed field weighted by ``1 / p_sample`` (inverse-probability weighting), so the fit
  targets the population of all fields, not the low-confidence ones the review saw most.
* **Thresholds** are certified by :class:`~confidence.calibration.sequential.
  SequentialCertifier`: an anytime-valid e-process per field and candidate threshold on the
  fused score, fed with the IPW-weighted reviews. Its state is kept in the model folder
  (``unlocking.json``), so each run adds the new reviews to the same test and the guarantee
  survives any number of runs: a field is *unlocked* as soon as the evidence reaches the bar,
  and stays so. The certified fused-score threshold is turned into a confidence threshold
  through the (monotone) calibrator, so routing is ``confidence >= threshold`` as always.
  A field with no certified threshold (locked) is reviewed always, and so is a field never
  reviewed (no fallback to a type or global threshold: those were certified elsewhere).

Rows are fed in an order that depends only on (doc_id, field), not on labels or scores
(reviewers may work lowest-confidence first); a (doc_id, field) already used by an earlier run
is not counted twice.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from confidence import persistence
from confidence.calibration import ThresholdSelector, ece
from confidence.calibration.sequential import SequentialCertifier
from confidence.datasets.folder import Dataset
from confidence.engine import ConfidenceEngine
from confidence.errors import DatasetError, ModelError
from confidence.evaluation.table import LabelledTable
from confidence.feedback.dataset import REVIEW_META

__all__ = [
    "STATE_FILE",
    "Recalibration",
    "load_state",
    "locked",
    "recalibrate",
    "save_recalibrated",
    "status_lines",
]

STATE_FILE = "unlocking.json"
"""The sequential test's state in a model folder (listed in its manifest)."""


@dataclass
class Recalibration:
    """What :func:`recalibrate` did: the new engine, the updated certifier and a summary.

    ``fields``: per field the certifier's :meth:`~confidence.calibration.sequential.
    SequentialCertifier.status` plus ``threshold`` (on the calibrated confidence, None = review
    all) and ``new_reviews`` (reviews added by this run). ``calibration``: the calibrator kind,
    whether it was refitted, rows used and the weighted ECE on them before and after.
    """

    engine: ConfidenceEngine
    certifier: SequentialCertifier
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    calibration: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"fields": self.fields, "calibration": self.calibration}


def load_state(model_dir: str | Path | None) -> SequentialCertifier | None:
    """The certifier saved in a model folder by an earlier :func:`save_recalibrated`, or None."""
    if model_dir is None:
        return None
    path = Path(model_dir) / STATE_FILE
    return persistence.load(path, expect=SequentialCertifier) if path.is_file() else None


def _sampling(dataset: Dataset, doc_ids, fields) -> tuple[np.ndarray, np.ndarray]:
    meta = {r.doc_id: r.meta.get(REVIEW_META) or {} for r in dataset.records}
    p, floor = np.ones(len(doc_ids)), np.ones(len(doc_ids))
    for i, (d, f) in enumerate(zip(doc_ids, fields, strict=True)):
        m = meta.get(d, {}).get(f)
        if m is None:
            raise DatasetError(
                f"{dataset.path}: doc {d!r} field {f!r} is labelled but has no review record "
                f"(meta.{REVIEW_META}); build the dataset with `extractconf feedback`"
            )
        p[i], floor[i] = float(m["p_sample"]), float(m["p_floor"])
    return p, floor


def _order(doc_ids, fields) -> np.ndarray:
    """Arrival order of the rows: a hash of (doc_id, field), blind to labels and scores."""
    keys = [
        hashlib.blake2b(f"{d}\x1f{f}".encode(), digest_size=8).digest()
        for d, f in zip(doc_ids, fields, strict=True)
    ]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=int)


def _calibrator_kind(engine: ConfidenceEngine) -> str:
    return persistence.kind_of(engine.calibrator_).kind


def recalibrate(
    engine: ConfidenceEngine,
    table: LabelledTable,
    dataset: Dataset,
    *,
    certifier: SequentialCertifier | None = None,
    target_accuracy: float | None = None,
    confidence_level: float | None = None,
) -> Recalibration:
    """Refit the calibrator (IPW) and update the sequential thresholds from reviewed rows.

    Parameters
    ----------
    engine : ConfidenceEngine
        The model the reviewed batches were scored with (fusion stays frozen).
    table : LabelledTable
        :func:`confidence.evaluation.table.build_table` of ``dataset`` and its runs: one row
        per reviewed field, ``y`` = the engine's value matched the reviewer's.
    dataset : Dataset
        The folder :func:`~confidence.feedback.dataset.build_feedback_dataset` wrote.
    certifier : SequentialCertifier or None
        State of earlier runs (:func:`load_state`); a fresh one (review-all start) when None.
    target_accuracy, confidence_level : float or None
        The guarantee; must match ``certifier``'s when one is given. Default: the engine's.
    """
    if engine.calibrator_signals_:
        raise ModelError(
            "this model's calibrator re-weights signals beside the fused score, so a threshold "
            "on the fused score has no single confidence; recalibrate a model with an "
            "isotonic or platt calibrator"
        )
    tau = target_accuracy or engine.target_accuracy
    level = confidence_level or engine.confidence_level
    if certifier is None:
        certifier = SequentialCertifier(target_accuracy=tau, confidence_level=level)
    elif (target_accuracy, confidence_level) != (None, None) and (
        not math.isclose(certifier.target_accuracy, tau)
        or not math.isclose(certifier.confidence_level, level)
    ):
        raise DatasetError(
            f"the model's sequential test runs at target {certifier.target_accuracy} and level "
            f"{certifier.confidence_level}; its evidence cannot be reused at {tau}/{level}: "
            "start from the original model to change the guarantee"
        )
    if len(table) == 0:
        raise DatasetError(f"{dataset.path}: no reviewed field matches the runs; check --runs")
    r = table.rows
    p, floor = _sampling(dataset, r.doc_ids, r.fields)
    w = 1.0 / p
    s = engine.fused_scores(r.X)
    before = engine.predict_confidence(r.X)
    kind = _calibrator_kind(engine)
    refit = len(np.unique(table.y)) == 2  # a calibrator needs both right and wrong values
    new = (
        engine.recalibrate(r.X, table.y, groups=r.doc_ids, calibrator=kind, sample_weight=w)
        if refit
        else engine.with_thresholds(engine.thresholds_)
    )
    after = new.predict_confidence(r.X)
    # the sequential test, in an order blind to labels and scores
    seen = set(certifier.seen_) if hasattr(certifier, "seen_") else set()
    keys = np.array([f"{d}/{f}" for d, f in zip(r.doc_ids, r.fields, strict=True)], dtype=object)
    order = _order(r.doc_ids, r.fields)
    certifier.partial_fit(
        s[order],
        table.y[order],
        np.asarray(r.fields, dtype=object)[order],
        p_sample=p[order],
        p_floor=floor[order],
        keys=keys[order],
        field_types=np.asarray(r.field_types, dtype=object)[order],
    )
    new_reviews = {}
    for f, k in zip(r.fields, keys, strict=True):
        new_reviews[f] = new_reviews.get(f, 0) + (k not in seen)
    new.thresholds_ = _selector(new, certifier, s, np.asarray(r.fields), w)
    new.set_params(target_accuracy=certifier.target_accuracy,
                   confidence_level=certifier.confidence_level)  # fmt: skip
    new.schema_ = dataset.schema
    fields = {}
    for name, st in certifier.status().items():
        lam = new.thresholds_.thresholds_.get(name, math.inf)
        fields[name] = {
            **st,
            "threshold": lam if math.isfinite(lam) else None,
            "new_reviews": new_reviews.get(name, 0),
        }
    calibration = {
        "calibrator": kind,
        "refitted": refit,
        "n_reviews": len(table),
        "weighted_ece_before": float(ece(table.y, before, sample_weight=w)),
        "weighted_ece_after": float(ece(table.y, after, sample_weight=w)),
        # reviews drawn under a threshold without audits: the accepted side was never
        # reviewable, so they carry no evidence for the sequential test
        "n_without_evidence": int(
            sum(f == 0 and k not in seen for f, k in zip(floor, keys, strict=True))
        ),
    }
    new.metrics_ = {**new.metrics_, "recalibration": {"calibration": calibration}}
    return Recalibration(new, certifier, fields, calibration)


def _selector(engine, certifier, s, fields, w) -> ThresholdSelector:
    """A fitted ThresholdSelector holding the certified thresholds as confidences."""
    out: dict[str, Any] = {}
    status = certifier.status()
    for name, lam in certifier.score_thresholds().items():
        mine = fields == name
        conf = None
        if math.isfinite(lam):
            conf = float(engine.calibrator_.predict_proba(np.array([lam]))[0, 1])
        above = s[mine] >= lam
        wt = w[mine]
        cov = float(wt[above].sum() / wt.sum()) if mine.any() else 0.0
        st = status[name]
        out[name] = {
            "threshold": conf,
            "source": "field" if conf is not None else "none",
            "field_type": certifier.field_types_.get(name),
            "coverage": cov,
            "accuracy": None if math.isnan(st["accuracy"]) else st["accuracy"],
            "n_samples": st["n_reviews"],
        }
    return _fixed_selector(
        certifier.target_accuracy, certifier.confidence_level, certifier.min_reviews_, out
    )


def _fixed_selector(target, level, min_samples, fields) -> ThresholdSelector:
    """A fitted selector with the given per-field entries and no fallback (review the rest)."""
    return ThresholdSelector.from_dict(
        {
            "params": {
                "target_accuracy": target,
                "confidence_level": level,
                "min_samples": min_samples,
                "fallback": "none",
                "grid": None,
                "group_fallback": "field",
            },
            "min_samples": min_samples,
            "global_threshold": None,
            "global_available": False,
            "type_thresholds": {},
            "fields": fields,
            "grouping": None,
            "group_pools": {},
            "groups": {},
        }
    )


def locked(engine: ConfidenceEngine) -> ConfidenceEngine:
    """A copy of ``engine`` that reviews every field: the start in a new domain, where no
    threshold is certified yet (``extractconf tune`` on a few labelled documents gives the same).

    Examples
    --------
    >>> eng = locked(ConfidenceEngine.load())
    >>> eng.thresholds_.lookup("total", "amount")
    (inf, 'none')
    """
    return engine.with_thresholds(
        _fixed_selector(engine.target_accuracy, engine.confidence_level, 1, {})
    )


def save_recalibrated(result: Recalibration, out_dir: str | Path) -> Path:
    """Write the new model folder with the certifier's state (manifest recomputed)."""
    out = result.engine.save(out_dir)
    persistence.save(result.certifier, Path(out) / STATE_FILE)
    persistence.attach(out, STATE_FILE)
    return Path(out)


def status_lines(fields: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per field for the CLI: reviews, status, threshold, reviews likely to unlock."""
    lines = []
    for name, st in fields.items():
        need = st["reviews_to_unlock"]
        if st["status"] == "unlocked":
            more = "-"
        elif need is None:
            more = "unknown (no review yet)"
        elif math.isinf(need):
            more = "not at the current accuracy"
        else:
            more = f"~{math.ceil(need)} more reviews"
        thr = (
            "review all"
            if st["threshold"] is None
            else f"{st['threshold']:.3f} (fused >= {st['score_threshold']:.4g})"
        )
        acc = "-" if math.isnan(st["accuracy"]) else f"{st['accuracy']:.1%}"
        lines.append(
            f"  {name:24} {st['status']:8} reviews {st['n_reviews']:<5} (+{st['new_reviews']:<4}) "
            f"threshold {thr:>10}  accuracy {acc:>6}  to unlock: {more}"
        )
    return lines
