"""Hunter/Mapper disagreement features (``agree_*``).

The Hunter fills every schema slot (and so invents absent fields); the Mapper reports what the
page shows (and so misses small values). Whether and how their readings differ is the strongest
single signal. Type-aware comparisons use :mod:`confidence.datasets.matching`, the project's one
place for correctness rules.

A value counts as *present* unless it is None, blank or a null marker such as ``N/A`` or
``null`` (:func:`confidence.documents.normalize.is_empty`, the correctness rules' own test).
Comparisons that need both values are NaN unless both are present.
"""

from __future__ import annotations

import math

from rapidfuzz import fuzz

from confidence.datasets import matching
from confidence.documents.normalize import is_empty
from confidence.documents.page_index import Match
from confidence.documents.text import fold

__all__ = ["NAMES", "present", "values"]

NAMES: tuple[str, ...] = (
    "agree_both_present",
    "agree_hunter_only",
    "agree_mapper_only",
    "agree_both_empty",
    "agree_equal",
    "agree_similarity",
    "agree_string_sim",
    "agree_num_reldiff",
    "agree_date_diff_days",
    "agree_len_ratio",
    "agree_same_place",
    "agree_place_distance",
    "agree_mapper_has_label",
)
_NAN = math.nan


def present(value: str | None) -> bool:
    """Whether a reading's value counts as reported: not None, blank or a null marker (``N/A``).

    Examples
    --------
    >>> present("9.00"), present("  "), present("null"), present(None)
    (True, False, False, False)
    """
    return not is_empty(value)


def _match_distance(a: Match, b: Match) -> float:
    ax, ay = (a.bbox[0] + a.bbox[2]) / 2, (a.bbox[1] + a.bbox[3]) / 2
    bx, by = (b.bbox[0] + b.bbox[2]) / 2, (b.bbox[1] + b.bbox[3]) / 2
    # Different pages are farther apart than anything on one page: add one per page crossed.
    return math.hypot(ax - bx, ay - by) + abs(a.page - b.page)


def values(
    field_type: str,
    hunter: str | None,
    mapper: str | None,
    hunter_match: Match | None,
    mapper_match: Match | None,
    mapper_label: str | None = None,
) -> list[float]:
    """Feature values in :data:`NAMES` order.

    Examples
    --------
    >>> v = dict(zip(NAMES, values("amount", "1,234.50", "1234.5", None, None)))
    >>> v["agree_both_present"], v["agree_equal"], v["agree_num_reldiff"]
    (1.0, 1.0, 0.0)
    """
    h, m = present(hunter), present(mapper)
    out = [float(h and m), float(h and not m), float(m and not h), float(not h and not m)]
    if not (h and m):
        out += [_NAN] * 6
    else:
        assert hunter is not None and mapper is not None
        # is_correct is documented as similarity >= THRESHOLDS[type]: one comparison, not two.
        sim = float(matching.similarity(field_type, hunter, mapper))
        out.append(float(sim >= matching.THRESHOLDS[field_type]))
        out.append(sim)
        out.append(fuzz.ratio(fold(hunter), fold(mapper)) / 100.0)
        rel = _NAN
        if field_type in ("amount", "percent"):
            a, b = matching.parse_amount(hunter), matching.parse_amount(mapper)
            if a is not None and b is not None:
                scale = max(abs(a), abs(b))
                rel = 0.0 if scale == 0 else float(abs(a - b) / scale)
        out.append(rel)
        days = _NAN
        if field_type == "date":
            a, b = matching.parse_date(hunter), matching.parse_date(mapper)
            if a is not None and b is not None:
                days = float(abs((a - b).days))
        out.append(days)
        la, lb = len(hunter.strip()), len(mapper.strip())
        out.append(min(la, lb) / max(la, lb))
    if hunter_match is not None and mapper_match is not None:
        same = hunter_match.page == mapper_match.page and bool(
            set(hunter_match.indices) & set(mapper_match.indices)
        )
        out += [float(same), _match_distance(hunter_match, mapper_match)]
    else:
        out += [_NAN, _NAN]
    out.append(float(bool(mapper_label and mapper_label.strip())) if m else _NAN)
    return out
