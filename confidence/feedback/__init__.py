"""The feedback loop: reviewer decisions -> labelled data -> a recalibrated, re-certified model.

* :mod:`~confidence.feedback.dataset` — ``extractconf feedback``: the review log joined with the
  scored file becomes a dataset folder (reviewed fields labelled with the final value, the rest
  unlabelled) that keeps each field's sampling probability;
* :mod:`~confidence.feedback.recalibration` — ``extractconf recalibrate``: the calibrator refitted
  with inverse-probability weights and the per-field thresholds re-certified by an anytime-valid
  sequential test (:class:`~confidence.calibration.sequential.SequentialCertifier`) whose state
  stays in the model folder, so fields unlock as reviews accumulate.
"""

from confidence.feedback.dataset import REVIEW_META, FeedbackSummary, build_feedback_dataset
from confidence.feedback.recalibration import (
    STATE_FILE,
    Recalibration,
    load_state,
    recalibrate,
    save_recalibrated,
)

__all__ = [
    "REVIEW_META",
    "STATE_FILE",
    "FeedbackSummary",
    "Recalibration",
    "build_feedback_dataset",
    "load_state",
    "recalibrate",
    "save_recalibrated",
]
