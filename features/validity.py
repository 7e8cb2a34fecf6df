"""Whether the reported value is well formed for its field type (``val_*``).

A value can be read with confidence and still be impossible: an OCR slip turns ``14/04/2018``
into ``44/04/2018``, ``2018`` into ``2618``, an IBAN digit into another. Each type with a
syntax says whether the reported value obeys it:

* ``date`` — every numeric form is a real calendar date in the parser's year range (both
  day-first and month-first readings are tried); other forms must parse
  (:func:`~confidence.documents.normalize.parse_date`);
* ``amount``, ``currency`` — they parse (:func:`~confidence.documents.normalize.parse_amount`,
  :func:`~confidence.documents.normalize.parse_currency`);
* ``percent`` — it parses to a rate between 0 and 100;
* ``iban`` — ISO 13616: country code, two check digits, 11-30 letters and digits, and the
  mod-97 check passes;
* ``email`` — ``local@domain.tld`` without spaces.

Types without a syntax (``text``, ``id``, ``address``) and empty values give NaN.

Three shape features describe any reported value, whatever its type, so the model can learn
what the values of a type look like: ``val_digit_share`` (digits among its letters and digits),
``val_lead_digit`` (1 if its first letter-or-digit is a digit: a street line or a postcode
reported as a name) and ``val_n_words`` (whitespace-separated words). Empty values give NaN.

``val_open_end`` is 1 when the value ends in a character that cannot end one: a comma, an
ampersand, a hyphen, a slash, a colon or an opening bracket. An address printed as a
comma-separated run over several lines, read one line short, ends in a comma
(``Unit 5, 12 Mill Lane,``); a name wrapped over two lines, read to its first line only, often ends
in ``&``. Empty values give NaN.
"""

from __future__ import annotations

import math
import re

from confidence.documents.normalize import (
    is_empty,
    parse_amount,
    parse_currency,
    parse_date,
    parse_percent,
)

__all__ = ["NAMES", "is_valid", "values"]

NAMES: tuple[str, ...] = (
    "val_valid",
    "val_digit_share",
    "val_lead_digit",
    "val_n_words",
    "val_open_end",
)
OPEN_ENDS = frozenset(",&-/:(")
"""Characters after which a value goes on: one ending in them was cut short."""

_NUMERIC_DATE = re.compile(r"^\D*?(\d{1,4})\s*[./\-]\s*(\d{1,2})\s*[./\-]\s*(\d{1,4})\D*$")
_IBAN = re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]{2,}$")


def _numeric_date_ok(a: str, b: str, c: str) -> bool:
    if len(a) == 4:  # year first: y-m-d (or y-d-m)
        return parse_date(f"{a}-{b.zfill(2)}-{c.zfill(2)}") is not None
    return parse_date(f"{a}/{b}/{c}", prefer="dmy") is not None


def _iban_ok(v: str) -> bool:
    s = re.sub(r"[\s\-]", "", v).upper()
    if not _IBAN.match(s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def is_valid(field_type: str, value: str | None) -> bool | None:
    """Whether ``value`` is well formed for ``field_type`` (None: empty, or no syntax to check).

    Examples
    --------
    >>> [is_valid("date", v) for v in ("14/04/2018", "44/04/2018", "24/16/2617")]
    [True, False, False]
    >>> is_valid("date", "12/25/2018"), is_valid("date", "3. März 2025")  # month-first; a name
    (True, True)
    >>> ok, bad = "DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 01"  # one digit off
    >>> is_valid("iban", ok), is_valid("iban", bad)
    (True, False)
    >>> is_valid("amount", "1.234,56"), is_valid("percent", "250"), is_valid("text", "ACME")
    (True, False, None)
    """
    if is_empty(value):
        return None
    v = str(value).strip()
    if field_type == "date":
        m = _NUMERIC_DATE.match(v)
        return _numeric_date_ok(*m.groups()) if m else parse_date(v) is not None
    if field_type == "amount":
        return parse_amount(v) is not None
    if field_type == "currency":
        return parse_currency(v) is not None
    if field_type == "percent":
        p = parse_percent(v)
        return p is not None and 0 <= p <= 100
    if field_type == "iban":
        return _iban_ok(v)
    if field_type == "email":
        return _EMAIL.match(v.replace("mailto:", "")) is not None
    return None


def values(field_type: str, value: str | None) -> list[float]:
    """Feature values in :data:`NAMES` order (``val_valid``: 1.0 well formed, 0.0 not, NaN
    unknown; then the value's shape).

    Examples
    --------
    >>> values("date", "28/48/2017")[0], values("amount", "65.20")[0]
    (0.0, 1.0)
    >>> values("text", "52 Alexander St")  # no syntax for text; 2 of 13 characters are digits
    [nan, 0.15384615384615385, 1.0, 3.0, 0.0]
    >>> values("address", "Unit 5, 12 Mill Lane, ")[-1], values("text", "HOME & GARDEN")[-1]
    (1.0, 0.0)
    >>> [math.isnan(v) for v in values("date", None)]
    [True, True, True, True, True]
    """
    if is_empty(value):
        return [math.nan] * len(NAMES)
    ok = is_valid(field_type, value)
    alnum = list(filter(str.isalnum, str(value)))
    digits = sum(map(str.isdigit, alnum))
    return [
        math.nan if ok is None else float(ok),
        digits / len(alnum) if alnum else math.nan,
        float(alnum[0].isdigit()) if alnum else math.nan,
        float(len(str(value).split())),
        float(str(value).rstrip()[-1] in OPEN_ENDS),
    ]
