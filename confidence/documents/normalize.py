"""Parsers that turn printed field values into canonical, comparable forms.

Each field type has one canonical form (see :func:`normalize`): an ISO date string for ``date``,
a :class:`~decimal.Decimal` for ``amount`` and ``percent``, an ISO 4217 code for ``currency``, an
alphanumeric casefolded string for ``id`` / ``iban``, a casefolded address for ``email`` and folded
text (NFKC, casefold, accents and punctuation removed, whitespace collapsed) for ``text`` and
``address``. ``None`` means the value is empty or cannot be read as that type.

The regular expressions they read with are :mod:`confidence.documents.patterns` and the folds
:mod:`confidence.documents.text`. The string parsers are cached: an evaluation compares the same
few thousand printed values many times, and a cache hit costs well under a microsecond.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from confidence.documents.patterns import (
    CJK_DATE_MARKS,
    COMPACT_DATE,
    ISO_DATE,
    MONTH_NAMES,
    NAMED_DATES,
    NUMBER_RUN,
    NUMERIC_DATE,
    PAREN_BEFORE,
    SIGN_AFTER,
    SIGN_BEFORE,
    SPACED_NUMBER,
)
from confidence.documents.text import fold, fold_text, strip_accents

__all__ = [
    "DATE_ORDERS",
    "NULL_MARKERS",
    "infer_date_order",
    "is_empty",
    "normalize",
    "parse_amount",
    "parse_currency",
    "parse_date",
    "parse_percent",
]

DATE_ORDERS: tuple[str | None, ...] = ("dmy", "mdy", None)
"""Valid ``prefer`` values for :func:`parse_date` (``None``: refuse ambiguous dates)."""

NULL_MARKERS: frozenset[str] = frozenset({"null", "none", "n/a", "n.a.", "-", "--", "—", "–"})
"""Strings an extractor writes for "not on the page"; they count as empty, like ``""``."""

_CACHE = 1 << 16
_MIN_YEAR, _MAX_YEAR = 1900, 2100


def _text(value: Any) -> str:
    """The string form of a gold or predicted value (labels hold numbers and dates too)."""
    if isinstance(value, str):
        return value
    if isinstance(value, date):
        return value.isoformat()[:10]
    if isinstance(value, float):  # 75974.0 stays "75974.0"; 1e+20 is written out in full
        return format(Decimal(repr(value)), "f") if value == value else ""
    return str(value)


def is_empty(value: Any) -> bool:
    """True for ``None``, blank strings and the :data:`NULL_MARKERS`.

    Examples
    --------
    >>> is_empty(None), is_empty("  "), is_empty("N/A"), is_empty("0")
    (True, True, True, False)
    """
    if value is None:
        return True
    s = (value if isinstance(value, str) else _text(value)).strip()  # mostly strings: no call
    return not s or s.casefold() in NULL_MARKERS


# --------------------------------------------------------------------------------------- dates

_MONTHS = {name: m for m, names in MONTH_NAMES.items() for name in names}


@lru_cache(maxsize=1024)
def _month(token: str) -> int | None:
    """Month number of a (possibly abbreviated) month name; None when unknown or ambiguous."""
    if token in _MONTHS:
        return _MONTHS[token]
    if len(token) < 3:
        return None
    # An abbreviation is any prefix shared by one month only ("jui" is June or July: refuse).
    found = {m for name, m in _MONTHS.items() if name.startswith(token)}
    return found.pop() if len(found) == 1 else None


def _year(y: str) -> int:
    n = int(y)
    if len(y) == 2:  # the strptime %y pivot: 69-99 are 1900s, 00-68 are 2000s
        n += 1900 if n >= 69 else 2000
    return n


def _make(y: int, m: int, d: int) -> date | None:
    if not _MIN_YEAR <= y <= _MAX_YEAR:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _readings(first: int, second: int, year: int) -> tuple[date | None, date | None]:
    """(day-first reading, month-first reading) of ``first/second/year``."""
    return _make(year, second, first), _make(year, first, second)


def _pick(dmy: date | None, mdy: date | None, prefer: str | None) -> date | None:
    if dmy is None or mdy is None or dmy == mdy:
        return dmy or mdy  # only one reading is a real date: no ambiguity
    if prefer == "dmy":
        return dmy
    return mdy if prefer == "mdy" else None


def _numeric_date(t: str, prefer: str | None) -> tuple[int, date] | None:
    """(position, date) of the first numeric date in ``t``."""
    hits = []
    m = ISO_DATE.search(t)
    if m:
        y, a, b = int(m[1]), int(m[3]), int(m[4])
        hits.append((m.start(), _make(y, a, b) or _make(y, b, a)))  # y-d-m only if month > 12
    m = NUMERIC_DATE.search(t)
    if m:
        hits.append((m.start(), _pick(*_readings(int(m[1]), int(m[3]), _year(m[4])), prefer)))
    m = COMPACT_DATE.search(t)
    if m:
        n = m[1]
        found = _make(int(n[:4]), int(n[4:6]), int(n[6:]))
        found = found or _pick(*_readings(int(n[:2]), int(n[2:4]), int(n[4:])), prefer)
        hits.append((m.start(), found))
    hits = [h for h in hits if h[1] is not None]
    return min(hits, key=lambda h: h[0]) if hits else None


def _named_date(t: str) -> tuple[int, date] | None:
    """(position, date) of the first date written with a month name in ``t``."""
    best = None
    for pattern, di, mi, yi in NAMED_DATES:
        for m in pattern.finditer(t):
            month = _month(m[mi])
            found = _make(_year(m[yi]), month, int(m[di])) if month else None
            if found is not None:
                if best is None or m.start() < best[0]:
                    best = (m.start(), found)
                break
    return best


@lru_cache(maxsize=_CACHE)
def _parse_date(s: str, prefer: str | None) -> date | None:
    # CJK dates (2025年3月3日, 2025년 3월 3일) become ISO-like before the regexes run.
    t = strip_accents(CJK_DATE_MARKS.sub("-", s))
    has_letters = re.search(r"[a-z]", t) is not None
    hits = [h for h in (_numeric_date(t, prefer), _named_date(t) if has_letters else None) if h]
    if hits:
        return min(hits, key=lambda h: h[0])[1]  # the first date in the string
    if has_letters and re.search(r"\d", t):
        return _dateparser(s, prefer)
    return None


_LANGUAGES = ("en", "fr", "de", "es", "it", "nl", "pt")  # all languages: 10 s to load


@lru_cache(maxsize=4)
def _date_data_parser(order: str):
    """One reusable dateparser parser per day/month order (building one costs ~1 ms)."""
    from dateparser.date import DateDataParser  # a slow import, needed only for unusual strings

    settings = {
        "DATE_ORDER": order,
        "REQUIRE_PARTS": ["day", "month", "year"],
        "PARSERS": ["absolute-time"],
    }
    return DateDataParser(languages=list(_LANGUAGES), settings=settings)


def _dateparser(s: str, prefer: str | None) -> date | None:
    """Last resort for languages and layouts the regexes miss (cached above)."""
    try:
        found = _date_data_parser((prefer or "dmy").upper()).get_date_data(s[:200]).date_obj
    except Exception:  # dateparser raises assorted errors on garbage; garbage is "no date"
        return None
    return _make(found.year, found.month, found.day) if found else None


def parse_date(s: Any, *, prefer: str | None = "dmy") -> date | None:
    """Parse a printed date; ``None`` when there is none (or it is ambiguous and ``prefer=None``).

    Numeric forms (``25/12/2018``, ``2018-12-25``, ``25.12.18``, ``20181225``) go through fast
    regexes; month names in English, French, German, Spanish, Italian, Dutch and Portuguese
    (``3. März 2025``, ``Jan 09, 2019``, ``03-Apr-2025``) through a month table; anything else
    with letters through :mod:`dateparser`. The first date in the string wins, so OCR lines such
    as ``"DATE: 25/12/2018 8:13 PM"`` parse too. Two-digit years use the ``strptime`` pivot.

    Parameters
    ----------
    s : str
        The printed value (dates, datetimes and numbers are accepted and stringified).
    prefer : {"dmy", "mdy", None}
        Order used when both ``d/m`` and ``m/d`` are valid dates. When one reading is impossible
        (``12/25/2018``) the other is used whatever ``prefer`` says.

    Examples
    --------
    >>> parse_date("25/12/2018"), parse_date("12/25/2018")
    (datetime.date(2018, 12, 25), datetime.date(2018, 12, 25))
    >>> parse_date("04/07/2015"), parse_date("04/07/2015", prefer="mdy")
    (datetime.date(2015, 7, 4), datetime.date(2015, 4, 7))
    >>> parse_date("3. März 2025"), parse_date("no date here")
    (datetime.date(2025, 3, 3), None)
    """
    if prefer not in DATE_ORDERS:
        raise ValueError(f"prefer={prefer!r} is not a date order; use one of {DATE_ORDERS}")
    if s is None:
        return None
    if isinstance(s, date):
        return _make(s.year, s.month, s.day)
    return _parse_date(_text(s), prefer)


# ------------------------------------------------------------------------------------- amounts


def _number_readings(t: str) -> tuple[Decimal, ...]:
    """Readings of one digit run, most likely first (two only for ``1.234`` / ``1,234``)."""
    t = re.sub(r"\s*([.,])\s*", r"\1", t)  # OCR spaces around a separator: "65. 20"
    if SPACED_NUMBER.fullmatch(t):
        t = re.sub(r"[ '’\u00a0\u202f]", "", t)
    elif re.search(r"\s", t):
        t = re.split(r"\s", t)[-1]  # "2 12.50": separate numbers, the amount comes last
    t = t.replace("'", "").replace("’", "")
    if "," in t and "." in t:  # the later separator is the decimal point
        dec, grp = (".", ",") if t.rfind(".") > t.rfind(",") else (",", ".")
        return _decimals(t.replace(grp, "").replace(dec, "."))
    for sep in (",", "."):
        if sep in t:
            head, _, tail = t.rpartition(sep)
            grouped = head.replace(sep, "") + tail
            if t.count(sep) > 1:  # repeated: a thousands separator (1.234.567)
                return _decimals(grouped)
            decimal = head + "." + tail
            if len(tail) != 3:
                return _decimals(decimal)
            # "1,234" is read as grouping first, "1.234" as a decimal point first
            return _decimals(grouped, decimal) if sep == "," else _decimals(decimal, grouped)
    return _decimals(t)


def _decimals(*texts: str) -> tuple[Decimal, ...]:
    out = []
    for t in texts:
        try:
            out.append(Decimal(t))
        except InvalidOperation:
            pass
    return tuple(out)


def _negative(before: str, after: str) -> bool:
    """Accounting signs around a number: -12.00, $-12, (12.00), 12.00-, 12.00 CR."""
    if SIGN_BEFORE.search(before) or SIGN_AFTER.match(after):
        return True
    return bool(PAREN_BEFORE.search(before)) and after.lstrip().startswith(")")


@lru_cache(maxsize=_CACHE)
def _amount_readings(s: str) -> tuple[Decimal, ...]:
    runs = list(NUMBER_RUN.finditer(s))
    if not runs:
        return ()
    # With free text around the amount ("Total 6% GST 12.00") the amount is the last number with
    # decimals, else the last number.
    run = next((r for r in reversed(runs) if re.search(r"[.,]\d", r.group())), runs[-1])
    readings = _number_readings(run.group())
    if readings and _negative(s[: run.start()], s[run.end() :]):
        readings = tuple(-r for r in readings)
    return readings


def parse_amount(s: Any) -> Decimal | None:
    """Parse a printed money amount to a :class:`~decimal.Decimal`; ``None`` when there is none.

    Currency symbols and codes are ignored. Separators follow the rule "the later of ``,`` and
    ``.`` is the decimal point"; a lone separator followed by exactly three digits is read as
    grouping for ``,`` (``1,234`` = 1234) and as a decimal point for ``.`` (``1.234`` = 1.234),
    the English convention; :func:`confidence.datasets.matching.is_correct` accepts either
    reading of such a value. Negative forms: ``-12.00``, ``(12.00)``, ``12.00-``, ``12.00 CR``.

    Examples
    --------
    >>> parse_amount("€ 75 974,00"), parse_amount("1.234,56"), parse_amount("1'234.56")
    (Decimal('75974.00'), Decimal('1234.56'), Decimal('1234.56'))
    >>> parse_amount("RM7.70"), parse_amount("(12.00)"), parse_amount("12.00 CR")
    (Decimal('7.70'), Decimal('-12.00'), Decimal('-12.00'))
    >>> parse_amount("free") is None
    True
    """
    if s is None:
        return None
    if isinstance(s, Decimal):
        return s if s.is_finite() else None
    readings = _amount_readings(_text(s))
    return readings[0] if readings else None


# ------------------------------------------------------------------------- percent and currency


@lru_cache(maxsize=_CACHE)
def _percent_readings(s: str) -> tuple[Decimal, ...]:
    readings = _amount_readings(s)
    if not readings or "%" in s or "pct" in s.casefold() or "percent" in s.casefold():
        return readings
    # A bare fraction ("0.19") is usually a rate written as a fraction; keep both readings.
    return tuple(r * 100 for r in readings if 0 < abs(r) < 1) + readings


def parse_percent(s: Any) -> Decimal | None:
    """Parse a percentage to percentage points (``"19 %"`` and ``"0.19"`` both give 19).

    A bare number strictly between 0 and 1 without a percent sign is read as a fraction.

    Examples
    --------
    >>> parse_percent("19 %"), parse_percent("19,5%"), parse_percent("0.19")
    (Decimal('19'), Decimal('19.5'), Decimal('19.00'))
    """
    readings = _percent_readings(_text(s)) if s is not None else ()
    return readings[0] if readings else None


_SYMBOLS = (  # longest first: "US$" must win over "$"
    ("us$", "USD"), ("usd", "USD"), ("s$", "SGD"), ("a$", "AUD"), ("au$", "AUD"), ("c$", "CAD"),
    ("ca$", "CAD"), ("hk$", "HKD"), ("nz$", "NZD"), ("r$", "BRL"), ("mx$", "MXN"), ("$", "USD"),
    ("€", "EUR"), ("£", "GBP"), ("¥", "JPY"), ("₹", "INR"), ("₩", "KRW"), ("₽", "RUB"),
    ("₺", "TRY"), ("₪", "ILS"), ("฿", "THB"), ("₫", "VND"), ("₱", "PHP"), ("₦", "NGN"),
    ("zł", "PLN"), ("kč", "CZK"), ("rm", "MYR"), ("rp", "IDR"), ("fr.", "CHF"), ("sfr", "CHF"),
)  # fmt: skip
_NAMES = {
    "euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD", "us dollar": "USD",
    "us dollars": "USD", "pound": "GBP", "pounds": "GBP", "pound sterling": "GBP",
    "sterling": "GBP", "yen": "JPY", "ringgit": "MYR", "rupee": "INR", "rupees": "INR",
    "franc suisse": "CHF", "swiss franc": "CHF", "swiss francs": "CHF", "yuan": "CNY",
    "renminbi": "CNY", "rmb": "CNY", "zloty": "PLN", "forint": "HUF", "koruna": "CZK",
}  # fmt: skip


@lru_cache(maxsize=_CACHE)
def _currency(s: str) -> str | None:
    low = unicodedata.normalize("NFKC", s).casefold().strip()
    name = fold_text(low)
    if name in _NAMES:
        return _NAMES[name]
    # A three-letter word is taken as an ISO code ("EUR 12.00"); "rm" alone is not a code.
    code = re.search(r"(?<![a-z])[a-z]{3}(?![a-z])", name)
    if code:
        return _NAMES.get(code.group(), code.group().upper())
    for symbol, iso in _SYMBOLS:
        if symbol in low:
            return iso
    return fold(low).upper() or None


def parse_currency(s: Any) -> str | None:
    """ISO 4217 code of a currency symbol, code or name; unknown values are folded and upper-cased.

    ``$`` alone means USD (the data rarely says which dollar); ``¥`` means JPY; ``RM`` means MYR.

    Examples
    --------
    >>> parse_currency("$"), parse_currency("usd"), parse_currency("€"), parse_currency("Euro")
    ('USD', 'USD', 'EUR', 'EUR')
    >>> parse_currency("RM 7.70"), parse_currency("S$")
    ('MYR', 'SGD')
    """
    return None if is_empty(s) else _currency(_text(s))


# ---------------------------------------------------------------------------------- normalize


@lru_cache(maxsize=_CACHE)
def _normalize(field_type: str, s: str, prefer: str | None) -> Any:
    if field_type == "date":
        found = parse_date(s, prefer=prefer)
        return found.isoformat() if found else None
    if field_type == "amount":
        return parse_amount(s)
    if field_type == "percent":
        return parse_percent(s)
    if field_type == "currency":
        return _currency(s)
    if field_type in ("id", "iban"):
        t = re.sub(r"^\s*iban\b[:\s]*", "", s, flags=re.IGNORECASE) if field_type == "iban" else s
        return fold(t) or None
    if field_type == "email":
        t = re.sub(r"^\s*mailto:", "", unicodedata.normalize("NFKC", s).casefold())
        return "".join(t.split()).strip("<>.,;") or None
    return fold_text(s) or None  # text, address


def normalize(field_type: str, value: Any, *, date_order: str | None = "dmy") -> Any:
    """Canonical comparable form of ``value`` for ``field_type``; ``None`` if empty or unreadable.

    Examples
    --------
    >>> normalize("date", "25/12/2018"), normalize("amount", "€ 75 974,00")
    ('2018-12-25', Decimal('75974.00'))
    >>> normalize("id", "FA02/2015/020059"), normalize("currency", "€"), normalize("text", "N/A")
    ('fa022015020059', 'EUR', None)
    """
    from confidence.schema import FIELD_TYPES

    if field_type not in FIELD_TYPES:
        raise ValueError(f"unknown field type {field_type!r}; use one of: {', '.join(FIELD_TYPES)}")
    if date_order not in DATE_ORDERS:
        raise ValueError(f"date_order={date_order!r} is not valid; use one of {DATE_ORDERS}")
    if is_empty(value):
        return None
    return _normalize(field_type, _text(value), date_order)


def infer_date_order(values: Any, *, default: str | None = "dmy") -> str | None:
    """Guess whether a collection of printed dates is day-first or month-first.

    Only dates with a first or second number above 12 carry evidence (``25/12/2018`` is
    day-first, ``01/25/2015`` month-first); the majority wins, and ``default`` is returned
    without evidence. Use it on a dataset's gold dates to pick ``date_order`` for matching.

    Examples
    --------
    >>> infer_date_order(["01/25/2015", "04/07/2015", "2015-02-02"])
    'mdy'
    >>> infer_date_order(["25/12/2018", "09/01/2019"]), infer_date_order(["2018-12-25"])
    ('dmy', 'dmy')
    """
    if default not in DATE_ORDERS:
        raise ValueError(f"default={default!r} is not valid; use one of {DATE_ORDERS}")
    dmy = mdy = 0
    for value in values:
        if value is None:
            continue
        m = NUMERIC_DATE.search(_text(value))
        if m and not ISO_DATE.search(_text(value)):
            first, second = int(m[1]), int(m[3])
            dmy += first > 12 >= second
            mdy += second > 12 >= first
    if dmy == mdy:
        return default
    return "dmy" if dmy > mdy else "mdy"
