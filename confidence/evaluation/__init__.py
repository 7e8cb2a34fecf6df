"""Evaluation: labelled tables, baselines, cross-fitting, the metrics of ``extractconf evaluate``.

* :mod:`~confidence.evaluation.table` — :func:`build_table` joins datasets and recorded runs into
  a :class:`LabelledTable` (feature rows, correctness, baseline scores);
* :mod:`~confidence.evaluation.baselines` — the baseline confidences from recorded runs;
* :mod:`~confidence.evaluation.crossfit` — :func:`fit_engine`, :func:`cross_fit`;
* :mod:`~confidence.evaluation.tables` — :func:`evaluate_table` (``metrics.json`` /
  ``scores.jsonl`` content);
* :mod:`~confidence.evaluation.evaluate` — :func:`evaluate`, what the CLI runs;
* :mod:`~confidence.evaluation.reliability` — :func:`reliability`, ECE, AUROC and accuracy above
  threshold per field and group, each with an interval and its sample size.
"""

from confidence.evaluation.baselines import BASELINES, baseline_scores, fill_missing, llm_calls
from confidence.evaluation.crossfit import CrossFit, cross_fit, fit_engine
from confidence.evaluation.evaluate import Evaluation, evaluate
from confidence.evaluation.reliability import reliability
from confidence.evaluation.table import LabelledTable, build_table
from confidence.evaluation.tables import evaluate_table, routing_summary

__all__ = [
    "BASELINES",
    "CrossFit",
    "Evaluation",
    "LabelledTable",
    "baseline_scores",
    "build_table",
    "cross_fit",
    "evaluate",
    "evaluate_table",
    "fill_missing",
    "fit_engine",
    "llm_calls",
    "reliability",
    "routing_summary",
]
