"""Type-aware correctness of an extracted value against gold: the project's one matcher.

Rules (``docs/correctness.md`` has the full table):

* **absent / empty** — ``None``, blank and :data:`~confidence.documents.normalize.NULL_MARKERS`
  (``"N/A"``, ``"-"``, ...) are empty. Both empty: correct. A value for an absent field: wrong.
  An empty extraction of a present field: wrong.
* **date** — both sides parsed to a calendar date (``25/12/2018`` == ``2018-12-25``); ambiguous
  ``d/m`` vs ``m/d`` read with ``date_order`` (day-first by default).
* **amount** — both parsed to :class:`~decimal.Decimal` (``75974.0`` == ``€ 75 974,00``);
  the sign is ignored by default (credit notes are labelled both ways), ``ignore_sign=False``
  makes ``-12.00`` != ``12.00``. ``1.234`` / ``1,234`` match either of their two readings.
* **percent** — percentage points (``19 %`` == ``19.0%`` == ``0.19``).
* **currency** — ISO 4217 code (``$`` == ``USD``, ``€`` == ``EUR``, ``RM`` == ``MYR``).
* **id, iban** — letters and digits only, casefolded; **email** — casefolded, no spaces.
* **text** — folded text (NFKC, casefold, accents and punctuation removed) with
  ``rapidfuzz`` similarity >= 0.85; **address** — the best of plain and token-sorted
  similarity >= 0.85 (line order and line joins vary between labels and prints).

When a date, amount or percent cannot be parsed on either side, the two are correct only if
their folded texts are equal.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from confidence.documents.normalize import (
    DATE_ORDERS,
    _amount_readings,
    _normalize,
    _percent_readings,
    _text,
    infer_date_order,
    is_empty,
    normalize,
    parse_amount,
    parse_currency,
    parse_date,
    parse_percent,
)
from confidence.documents.text import fold_text
from confidence.schema import FIELD_TYPES

__all__ = [
    "THRESHOLDS",
    "infer_date_order",
    "is_correct",
    "normalize",
    "parse_amount",
    "parse_currency",
    "parse_date",
    "parse_percent",
    "similarity",
]

THRESHOLDS: dict[str, float] = {t: 1.0 for t in FIELD_TYPES} | {"text": 0.85, "address": 0.85}
"""Smallest :func:`similarity` that :func:`is_correct` accepts, per field type."""

# Below-threshold grades of exact types are scaled under 1 so that only a match reaches 1.0.
_NEAR_MISS = 0.99


def _check(field_type: str, date_order: str | None) -> None:
    if field_type not in FIELD_TYPES:
        raise ValueError(f"unknown field type {field_type!r}; use one of: {', '.join(FIELD_TYPES)}")
    if date_order not in DATE_ORDERS:
        raise ValueError(f"date_order={date_order!r} is not valid; use one of {DATE_ORDERS}")


def _ratio(a: str, b: str) -> float:
    return fuzz.ratio(a, b) / 100.0


def _canonical(d: Decimal) -> str:
    return format(d.normalize(), "f")


def _numbers_similarity(p: tuple[Decimal, ...], g: tuple[Decimal, ...], pt: str, gt: str) -> float:
    if p and g:
        if set(p) & set(g):
            return 1.0
        return _NEAR_MISS * _ratio(_canonical(p[0]), _canonical(g[0]))
    return _fallback(pt, gt)


def _fallback(p: str, g: str) -> float:
    """Unparseable value on either side: only an identical folded text counts as a match."""
    fp, fg = fold_text(p), fold_text(g)
    return 1.0 if fp == fg else _NEAR_MISS * _ratio(fp, fg)


@lru_cache(maxsize=1 << 17)
def _similarity(
    field_type: str, p: str, g: str, date_order: str | None, ignore_sign: bool
) -> float:
    if field_type in ("text", "address"):
        fp, fg = fold_text(p), fold_text(g)
        if field_type == "text":
            return _ratio(fp, fg)
        return max(fuzz.ratio(fp, fg), fuzz.token_sort_ratio(fp, fg)) / 100.0
    if field_type == "amount":
        pr, gr = _amount_readings(p), _amount_readings(g)
        if ignore_sign:
            pr, gr = tuple(abs(x) for x in pr), tuple(abs(x) for x in gr)
        return _numbers_similarity(pr, gr, p, g)
    if field_type == "percent":
        return _numbers_similarity(_percent_readings(p), _percent_readings(g), p, g)
    np_, ng = _normalize(field_type, p, date_order), _normalize(field_type, g, date_order)
    if np_ is None or ng is None:
        return _fallback(p, g)
    return 1.0 if np_ == ng else _NEAR_MISS * _ratio(np_, ng)


def similarity(
    field_type: str,
    predicted: Any,
    gold: Any,
    *,
    date_order: str | None = "dmy",
    ignore_sign: bool = True,
) -> float:
    """Graded agreement in [0, 1] of an extracted value with gold, by field type.

    1.0 means the values match exactly after normalisation; text and address give rapidfuzz
    similarities of folded text; for exact types a mismatch grades below 1 by how close the
    canonical forms are (``2018-12-25`` vs ``2018-12-26`` is about 0.89). Empty vs present
    is 0, both empty is 1. ``is_correct(...)`` is ``similarity(...) >= THRESHOLDS[field_type]``.

    Parameters
    ----------
    field_type : str
        One of :data:`confidence.schema.FIELD_TYPES`.
    predicted, gold : str, number, date or None
        The extracted value and the labelled value (``None`` = absent).
    date_order : {"dmy", "mdy", None}
        How to read dates valid both ways (``04/07/2015``); see :func:`infer_date_order`.
    ignore_sign : bool
        Compare amounts by absolute value (default), so ``12.00 CR`` matches ``12.00``.

    Examples
    --------
    >>> similarity("date", "25/12/2018", "2018-12-25")
    1.0
    >>> round(similarity("text", "ABC HO TRADING", "ABC H0 TRADING"), 3)
    0.929
    >>> similarity("amount", None, "9.00"), similarity("amount", None, None)
    (0.0, 1.0)
    """
    _check(field_type, date_order)
    p_empty, g_empty = is_empty(predicted), is_empty(gold)
    if p_empty or g_empty:
        return float(p_empty and g_empty)
    return _similarity(field_type, _text(predicted), _text(gold), date_order, bool(ignore_sign))


def is_correct(
    field_type: str,
    predicted: Any,
    gold: Any,
    *,
    date_order: str | None = "dmy",
    ignore_sign: bool = True,
) -> bool:
    """Whether an extracted value counts as correct against gold (rules in the module docstring).

    Examples
    --------
    >>> is_correct("date", "25/12/2018", "2018-12-25")
    True
    >>> is_correct("amount", "€ 75 974,00", "75974.0")
    True
    >>> is_correct("amount", "-12.00", "12.00")
    True
    >>> is_correct("amount", "-12.00", "12.00", ignore_sign=False)
    False
    >>> is_correct("currency", "$", "USD"), is_correct("id", "fa02-2015-020059", "FA02/2015/020059")
    (True, True)
    >>> is_correct("text", "Marc Demo", None), is_correct("text", None, None)
    (False, True)
    """
    score = similarity(field_type, predicted, gold, date_order=date_order, ignore_sign=ignore_sign)
    return score >= THRESHOLDS[field_type]
