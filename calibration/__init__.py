"""Calibration, metrics and guaranteed thresholds (``confidence.calibration``).

* :mod:`~confidence.calibration.calibrators` — fused score -> P(correct): isotonic, Platt, Lasso
  recalibration, chosen by name with :func:`make_calibrator`; saved through
  :mod:`confidence.persistence`.
* :mod:`~confidence.calibration.metrics` — AUROC, AURC, accuracy at coverage, coverage at accuracy,
  ECE, Brier; :func:`evaluate_scores` gives the ``metrics.json`` entry of one score column.
* :mod:`~confidence.calibration.thresholds` — :class:`ThresholdSelector`, per-field thresholds with
  a finite-sample accuracy guarantee (Learn then Test), optionally per document group; it owns
  the (field, group) -> field -> type -> global fallback (:meth:`ThresholdSelector.lookup`);
* :mod:`~confidence.calibration.sequential` — :class:`SequentialCertifier`, per-field thresholds
  certified by anytime-valid e-processes over reviews that keep arriving (progressive unlocking,
  inverse-probability weighted for audit sampling);
* :mod:`~confidence.calibration.groups` — :class:`Grouping`, a document's group (source, image
  quality tier, language, ``meta.KEY``) for group-conditional thresholds.
"""

from confidence.calibration.calibrators import (
    CALIBRATORS,
    IsotonicCalibrator,
    LassoRecalibrator,
    PlattCalibrator,
    make_calibrator,
)
from confidence.calibration.groups import Grouping
from confidence.calibration.metrics import (
    accuracy_at_coverage,
    aurc,
    aurc_oracle,
    auroc,
    brier,
    coverage_at_accuracy,
    ece,
    evaluate_scores,
    risk_coverage_curve,
)
from confidence.calibration.sequential import SequentialCertifier
from confidence.calibration.thresholds import REVIEW_ALL, ThresholdSelector, ltt_threshold

__all__ = [
    "CALIBRATORS",
    "REVIEW_ALL",
    "Grouping",
    "IsotonicCalibrator",
    "LassoRecalibrator",
    "PlattCalibrator",
    "SequentialCertifier",
    "ThresholdSelector",
    "accuracy_at_coverage",
    "aurc",
    "aurc_oracle",
    "auroc",
    "brier",
    "coverage_at_accuracy",
    "ece",
    "evaluate_scores",
    "ltt_threshold",
    "make_calibrator",
    "risk_coverage_curve",
]
