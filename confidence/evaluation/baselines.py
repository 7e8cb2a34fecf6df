"""Baseline confidence scores computed from recorded runs, for side-by-side evaluation.

Every baseline is a score in [0, 1], higher = more likely correct, about the *reported value* (the
Hunter's, else the Mapper's; :func:`confidence.features.build.reported_value`):

================== =================================================================  =========
method             score                                                               LLM calls
================== =================================================================  =========
``logprob_mean``   ``exp(mean token logprob)`` of the Hunter's value tokens            Hunter
``logprob_min``    ``exp(min token logprob)`` of the Hunter's value tokens             Hunter
``agreement``      type-aware similarity of the Hunter's and Mapper's values           Hunter+Mapper
                   (:func:`confidence.datasets.matching.similarity`; both empty = 1)
``verbalized``     the model's own 0-100 confidence / 100 (``RunRecord.verbalized``)   Hunter+1
``self_consistency`` share of the Hunter and its extra samples whose value matches     Hunter+k
                   the reported value under the type-aware rule
================== =================================================================  =========

A baseline the run cannot give (no logprobs, an empty value has no value tokens, no verbalized
call, no samples) is NaN here; :func:`fill_missing` documents how evaluation fills it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from confidence.datasets import matching
from confidence.documents.normalize import is_empty
from confidence.readings import FieldReading, RunRecord
from confidence.schema import Field

__all__ = ["BASELINES", "MISSING_FILL", "baseline_scores", "fill_missing", "llm_calls"]

BASELINES: tuple[str, ...] = (
    "logprob_mean",
    "logprob_min",
    "agreement",
    "verbalized",
    "self_consistency",
)
"""Baseline methods, in report order."""

MISSING_FILL = 0.0
"""Score given to a field whose baseline is unavailable: the lowest possible (least confident).

JSON has no NaN or -inf, so ``scores.jsonl`` carries this value instead; metrics are computed on
the filled column, which is exactly what the referee recomputes."""


def _reading(call, name: str) -> FieldReading | None:
    if call is None or call.status == "error":
        return None
    return call.fields.get(name)


def _value(r: FieldReading | None) -> str | None:
    return None if r is None or is_empty(r.value) else r.value


def _logprob_scores(r: FieldReading | None) -> tuple[float, float]:
    if r is None or not r.tokens or _value(r) is None:
        return math.nan, math.nan
    lps = [t.logprob for t in r.tokens]
    return math.exp(sum(lps) / len(lps)), math.exp(min(lps))


def baseline_scores(record: RunRecord, field: Field) -> dict[str, float]:
    """The baseline scores of one field of one recorded run (NaN = unavailable).

    Examples
    --------
    >>> from confidence.llm.base import TokenLogprob
    >>> from confidence.readings import CallResult
    >>> h = CallResult("hunter", {"total": FieldReading("9.00", (TokenLogprob("9", -0.1),))})
    >>> m = CallResult("mapper", {"total": FieldReading("9.0")})
    >>> s = baseline_scores(RunRecord("d1", h, m), Field("total", "amount"))
    >>> round(s["logprob_mean"], 3), s["agreement"], s["verbalized"]
    (0.905, 1.0, nan)
    """
    name, ftype = field.name, field.type
    h, m = _reading(record.hunter, name), _reading(record.mapper, name)
    hv, mv = _value(h), _value(m)
    reported = hv if hv is not None else mv
    lp_mean, lp_min = _logprob_scores(h) if hv is not None else (math.nan, math.nan)
    if record.mapper is None or record.mapper.status == "error":
        agree = math.nan
    else:
        agree = matching.similarity(ftype, hv, mv)
    verb = math.nan
    if record.verbalized is not None and name in record.verbalized:
        v = float(record.verbalized[name])
        if math.isfinite(v):
            verb = min(1.0, max(0.0, v / 100.0))
    sc = math.nan
    samples = [s for s in record.samples if s.status != "error"]
    if samples:
        votes = [hv] + [_value(s.fields.get(name)) for s in samples]
        sc = sum(matching.is_correct(ftype, v, reported) for v in votes) / len(votes)
    return {
        "logprob_mean": lp_mean,
        "logprob_min": lp_min,
        "agreement": agree,
        "verbalized": verb,
        "self_consistency": sc,
    }


def llm_calls(record: RunRecord) -> dict[str, float]:
    """LLM calls each method needs for this document (what it would cost run on its own).

    ``extractconf`` and ``agreement`` need the Hunter and the Mapper, the logprob baselines only the
    Hunter, ``verbalized`` the Hunter plus one rating call, ``self_consistency`` the Hunter plus its
    ``k`` samples.

    Examples
    --------
    >>> from confidence.readings import CallResult
    >>> r = RunRecord("d", CallResult("hunter", {}), CallResult("mapper", {}, n_calls=2))
    >>> llm_calls(r)["extractconf"], llm_calls(r)["logprob_mean"]
    (3, 1)
    """
    hunter = record.hunter.n_calls if record.hunter is not None else 0
    mapper = record.mapper.n_calls if record.mapper is not None else 0
    samples = sum(s.n_calls for s in record.samples)
    return {
        "extractconf": hunter + mapper,
        "logprob_mean": hunter,
        "logprob_min": hunter,
        "agreement": hunter + mapper,
        "verbalized": hunter + 1,
        "self_consistency": hunter + samples,
    }


def fill_missing(scores: Mapping[str, Iterable[float]]) -> tuple[dict[str, np.ndarray], dict]:
    """Replace NaN baseline scores with :data:`MISSING_FILL`; drop methods never available.

    Returns the filled columns and, per method, the share of rows that were filled.

    Examples
    --------
    >>> cols, filled = fill_missing({"a": [0.5, float("nan")], "b": [float("nan")] * 2})
    >>> cols["a"].tolist(), "b" in cols, filled["a"]
    ([0.5, 0.0], False, 0.5)
    """
    out, share = {}, {}
    for k, v in scores.items():
        a = np.asarray(list(v) if not isinstance(v, np.ndarray) else v, dtype=float)
        miss = ~np.isfinite(a)
        if a.size == 0 or miss.all():
            continue
        out[k] = np.where(miss, MISSING_FILL, a)
        share[k] = float(miss.mean())
    return out, share
