r"""Typed value patterns: what a date, an amount, an id, an email, an IBAN, a percentage and a
currency look like when printed. The one place these regular expressions are defined.

Two kinds live here:

* *finders*, searched in page text to propose values (:data:`DATE_RE`, :data:`AMOUNT_RE`,
  :data:`ID_RE`, :data:`SPACED_ID_RE`, :data:`GROUPED_ID_RE`, :data:`EMAIL_RE`, :data:`IBAN_RE`,
  :data:`PERCENT_RE`, :data:`RATE_RE`, :data:`CURRENCY_RE`, :data:`NUMBER_WORD`), and
  :data:`AMOUNT_PATTERN`, the same idea as a bounded JSON-schema ``pattern`` for
  grammar-constrained decoding;
* *readers*, whose groups :mod:`confidence.documents.normalize` turns into canonical values
  (:data:`ISO_DATE`, :data:`NUMERIC_DATE`, :data:`COMPACT_DATE`, :data:`NAMED_DATES`,
  :data:`CJK_DATE_MARKS`, :data:`MONTH_NAMES`, :data:`NUMBER_RUN`, :data:`SPACED_NUMBER` and the
  accounting-sign patterns).

Examples
--------
>>> [m.group(0) for m in DATE_RE.finditer("Date: 25/12/2018, due 3 Jan 2019")]
['25/12/2018', '3 Jan 2019']
>>> [m.group(0) for m in AMOUNT_RE.finditer("TOTAL RM 1,234.50  CASH 2000.00")]
['1,234.50', '2000.00']
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product

__all__ = [
    "ACCENTED_MONTH_NAMES",
    "AMOUNT_PATTERN",
    "AMOUNT_RE",
    "BIC_RE",
    "CJK_DATE_MARKS",
    "COMPACT_DATE",
    "COUNTRY_ID_RE",
    "CURRENCY_RE",
    "DATE_RE",
    "EMAIL_RE",
    "GROUPED_ID_RE",
    "IBAN_LENGTHS",
    "IBAN_RE",
    "ID_RE",
    "ISO_DATE",
    "MONTH_NAMES",
    "MONTH_WORDS",
    "NAMED_DATES",
    "NUMBER_RUN",
    "NUMBER_WORD",
    "NUMERIC_DATE",
    "PAREN_BEFORE",
    "PERCENT_RE",
    "RATE_RE",
    "SIGN_AFTER",
    "SIGN_BEFORE",
    "SPACED_ID_RE",
    "SPACED_NUMBER",
    "find_read_as",
    "iban_checksum_ok",
    "iban_values",
    "repair_digit_run",
    "repair_iban",
]

# ------------------------------------------------------------------------------------- finders


AMOUNT_RE = re.compile(r"(?<![\d.,])-?\d{1,3}(?:(?:[ ,.']\d{3})+|\d*)[.,] ?\d{2}(?![\d]|[.,]\d)")
"""A money amount with two decimals (``1,234.50``, ``1.234,50``, ``-12.00``; OCR's stray space
after the decimal point, ``65. 20``, is kept: the amount reader drops it). Never the start of a
longer number: not ``12.05`` of the date ``12.05.2018``, not ``9. 94`` of ``9. 94.00`` (whose
amount is ``94.00``)."""

AMOUNT_PATTERN = r"^-?[0-9]{1,3}([ ,.']?[0-9]{3}){0,4}([.,][0-9]{1,2})?$"
"""A money amount as a bounded JSON-schema ``pattern`` (``1,234.50``, ``1.234,50``, ``-12``)."""

ID_RE = re.compile(r"(?<![\w])[A-Za-z0-9#][A-Za-z0-9/\-_.#:]{2,}(?![\w])")
"""An identifier-like token of three or more characters (``INV-2018/001``)."""

SPACED_ID_RE = re.compile(r"[A-Z]{2}(?: ?[A-Z0-9]{2,}){1,6}")
"""A tax id or reference printed in groups after a country code (``FR 65 501744252``)."""

COUNTRY_ID_RE = re.compile(r"(?<![\w])[A-Z]{2} ?\d{2,}(?: \d[\dA-Z]*){0,3}(?![\w])")
"""An id printed after a two-letter country code, digits in groups (``GB 382702240``,
``FR 71 058712562``): the space is part of the value (VAT ids)."""

BIC_RE = re.compile(r"(?<![\w])[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?(?![\w])")
"""The ISO 9362 shape of a bank identifier code: 8 or 11 capitals, often without any digit."""

GROUPED_ID_RE = re.compile(r"[\dA-Z][\d /A-Z-]{4,}\d")
"""Upper-case letters and digits in groups, ending in a digit (``DE 123 456 789``)."""

EMAIL_RE = re.compile(r"[\w.+-]+ ?@ ?[\w-]+(?: ?\.[\w-]+)+")
"""An e-mail address; OCR often sets a space beside the ``@`` or before a dot of the domain
(``billing @acme .co.uk``: the email reader drops them)."""
IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_IBAN_RUN = re.compile(r"\b[A-Z]{2}\d{2}[A-Z0-9]*(?: [A-Z0-9]+)*")


IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30,
    "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
"""IBAN length per country of the ISO 13616 (SWIFT) registry; other countries: 15-34."""


def iban_checksum_ok(text: str) -> bool:
    """Whether ``text`` (spaces ignored) is an IBAN by ISO 13616: its country's length (where
    :data:`IBAN_LENGTHS` knows the country) and the mod-97 check.

    Examples
    --------
    >>> ok = iban_checksum_ok
    >>> ok("GB82 WEST 1234 5698 7654 32"), ok("GB82 WEST 1234 5698 7654 33")
    (True, False)
    """
    s = text.replace(" ", "")
    if not 15 <= len(s) <= 34 or not s.isalnum() or not s.isascii():
        return False
    if IBAN_LENGTHS.get(s[:2], len(s)) != len(s):
        return False
    return int("".join(str(int(c, 36)) for c in s[4:] + s[:4])) % 97 == 1


# BBAN structures of the ISO 13616 registry for countries whose positions are fixed letters or
# digits ("n" digits, "a" capitals, "c" either), after the country code and check digits.
# Countries not listed are repaired in the check digits only.
_BBAN_SHAPES: dict[str, str] = {
    "AT": "n16", "BE": "n12", "CH": "n5c12", "CZ": "n20", "DE": "n18", "DK": "n14",
    "EE": "n16", "ES": "n20", "FI": "n14", "FR": "n10c11n2", "GB": "a4n14", "HR": "n17",
    "HU": "n24", "IE": "a4n14", "IT": "a1n10c12", "LT": "n16", "LU": "n3c13", "MC": "n10c11n2",
    "NL": "a4n10", "NO": "n11", "PL": "n24", "PT": "n21", "SE": "n20", "SI": "n15", "SK": "n20",
}  # fmt: skip
# What OCR prints for a digit it misread as a letter, and the other way round.
_AS_DIGIT = {"O": "0", "Q": "0", "D": "0", "U": "0", "I": "1", "L": "1", "Z": "2", "S": "589",
             "G": "6", "T": "7", "B": "8"}  # fmt: skip
_AS_LETTER = {"0": "OD", "1": "I", "2": "Z", "5": "S", "6": "G", "8": "B"}
_IBAN_LIKE = re.compile(r"\b[A-Z]{2}[0-9OQDUILZSGTB]{2}[A-Z0-9]*(?: [A-Z0-9]+)*")


def _iban_shape(country: str, length: int) -> str:
    """One class per position of a compact IBAN: ``a`` capital, ``n`` digit, ``c`` either."""
    spec = _BBAN_SHAPES.get(country)
    body = "".join(k * int(n) for k, n in re.findall(r"([anc])(\d+)", spec)) if spec else ""
    if len(body) != length - 4:
        body = "c" * (length - 4)
    return "aann" + body


def repair_iban(text: str) -> str | None:
    """``text`` read again as an IBAN whose OCR took some digits for letters or letters for
    digits (``GBS1``, ``GB51 0WGC``), or None.

    Only characters the IBAN's structure rules out are changed: a letter where the check digits
    or the country's BBAN (ISO 13616 registry) has a digit, a digit where it has a letter, each
    through the usual OCR confusions (``O`` for ``0``, ``S`` for ``5``, ...). A repair counts
    only when exactly one combination passes the mod-97 check (:func:`iban_checksum_ok`); the
    spacing of ``text`` is kept. Up to four characters are changed; an IBAN that passes with
    nothing ruled out is returned unchanged (one that passes only by chance with a letter among
    its digits is repaired like any other).

    Examples
    --------
    >>> repair_iban("GBS2 WEST 1234 5698 7654 32"), repair_iban("GB82 VVEST 1234 5698 7654 32")
    ('GB82 WEST 1234 5698 7654 32', None)
    >>> repair_iban("DE89 37O4 0044 O532 0130 00"), repair_iban("GB82 WEST 1234 5698 7654 33")
    ('DE89 3704 0044 0532 0130 00', None)
    """
    compact = text.replace(" ", "")
    country = compact[:2]
    length = IBAN_LENGTHS.get(country)
    if not (length or 15 <= len(compact) <= 34) or (length and len(compact) != length):
        return None
    if not country.isalpha() or not compact.isalnum() or not compact.isascii():
        return None
    shape = _iban_shape(country, len(compact))
    options: list[tuple[int, str]] = []
    for i, (ch, kind) in enumerate(zip(compact, shape, strict=True)):
        if kind == "n" and not ch.isdigit():
            alt = _AS_DIGIT.get(ch)
        elif kind == "a" and not ch.isalpha():
            alt = _AS_LETTER.get(ch)
        else:
            continue
        if not alt:
            return None
        options.append((i, alt))
    if not options:  # nothing the structure rules out: valid as printed, or not repairable
        return text if iban_checksum_ok(compact) else None
    if len(options) > 4:
        return None
    fits = []
    for combo in product(*(alt for _, alt in options)):
        chars = list(compact)
        for (i, _), ch in zip(options, combo, strict=True):
            chars[i] = ch
        if iban_checksum_ok("".join(chars)):
            fits.append(chars)
    if len(fits) != 1:
        return None
    fixed = iter(fits[0])
    return "".join(ch if ch == " " else next(fixed) for ch in text)


# a Q before a single last digit is a quarter ("2015Q3"), not a misread 0
_LETTER_IN_DIGITS = re.compile(r"(?<=\d)(?:[OoIlZ]|Q(?=\d\d))(?=\d)")
_LETTER_AS_DIGIT = str.maketrans("OoQIlZ", "000112")


def repair_digit_run(value: str) -> str:
    """``value`` with a letter OCR printed between two digits read as the digit it resembles
    (``O`` ``Q`` as 0, ``I`` ``l`` as 1, ``Z`` as 2), in an identifier of four digits or more;
    anything else is returned unchanged. A ``Q`` needs two digits after it (``2015Q3`` names a
    quarter), and a bank identifier code (:data:`BIC_RE`: ``XBJZGB48Z53``) has letters among
    its digits by design. An ``S`` stays: OCR prints it for a 5, an 8 or a 9, and a guess
    among them would hide the misreading from the confidence engine; :func:`repair_iban`,
    whose checksum decides, does read it.

    Examples
    --------
    >>> repair_digit_run("GB8Q31243367"), repair_digit_run("INV-2O24-0O17")
    ('GB8031243367', 'INV-2024-0017')
    >>> repair_digit_run("ORDO86122"), repair_digit_run("FR8S7838"), repair_digit_run("PO019817")
    ('ORDO86122', 'FR8S7838', 'PO019817')
    """
    if sum(c.isdigit() for c in value) < 4 or BIC_RE.fullmatch(value):
        return value
    return _LETTER_IN_DIGITS.sub(lambda m: m[0].translate(_LETTER_AS_DIGIT), value)


@lru_cache(maxsize=4096)
def _look_alike(value: str) -> re.Pattern[str]:
    alike: dict[str, set[str]] = {}
    for letter, digits in _AS_DIGIT.items():
        for d in digits:
            alike.setdefault(letter, set()).add(d)
            alike.setdefault(d, set()).add(letter)
    for d, letters in _AS_LETTER.items():
        for letter in letters:
            alike.setdefault(d, set()).add(letter)
            alike.setdefault(letter, set()).add(d)
    parts = [
        "[" + re.escape("".join(sorted({c, *alike[c]}))) + "]" if c in alike else re.escape(c)
        for c in value
    ]
    return re.compile("".join(parts))


def find_read_as(text: str, value: str) -> int:
    """Where ``value`` starts in ``text``: its exact position, else that of the first span that
    differs from it only by OCR look-alikes (a value repaired from a misread print, such as
    :func:`repair_iban`'s, is found where it was printed); -1 when neither is there.

    Examples
    --------
    >>> find_read_as("IBAN GBS2 WEST", "GB82 WEST"), find_read_as("Total 12.50", "12.50")
    (5, 6)
    >>> find_read_as("Total 12.50", "99.99")
    -1
    """
    i = text.find(value)
    if i >= 0 or not value:
        return i
    m = _look_alike(value).search(text)
    return m.start() if m else -1


def iban_values(text: str) -> list[str]:
    """IBANs in ``text``: :data:`IBAN_RE` matches, and the longest run of words after a country
    code that passes the mod-97 check, however OCR spaced its groups (it replaces a match that
    stops inside it).

    Examples
    --------
    >>> iban_values("IBAN GB82WEST123456987 65432 BIC NWBKGB2L")
    ['GB82WEST123456987 65432']
    """
    out = [m.group(0).strip() for m in IBAN_RE.finditer(text)]
    for m in _IBAN_RUN.finditer(text):
        words = m.group(0).split(" ")
        for k in range(len(words), 0, -1):
            run = " ".join(words[:k])
            if iban_checksum_ok(run):
                # a pattern match that stops inside a valid IBAN is a truncation of it
                out = [v for v in out if v == run or iban_checksum_ok(v) or not run.startswith(v)]
                if run not in out:
                    out.append(run)
                break
    for m in _IBAN_LIKE.finditer(text):
        words = m.group(0).split(" ")
        for k in range(len(words), 0, -1):
            run = " ".join(words[:k])
            fixed = repair_iban(run)
            if fixed is not None and fixed != run:
                # the misread print, and any match that stops inside it, gives way to the repair
                out = [v for v in out if iban_checksum_ok(v) or not run.startswith(v)]
                if fixed not in out:
                    out.append(fixed)
                break
    return out


PERCENT_RE = re.compile(r"\d{1,3}(?:[.,]\d+)?\s?%")
RATE_RE = re.compile(r"\d{1,2}(?:[.,]\d+)?%?")
"""A tax rate with or without its percent sign (``19``, ``7,5%``): never an identifier."""
CURRENCY_RE = re.compile(r"(?<![A-Za-z])(?:RM|EUR|USD|GBP|MYR|SGD|CHF|JPY|€|\$|£)(?![A-Za-z])")

NUMBER_WORD = re.compile(r"^[^\w]*[\d.,'’ -]*\d[\d.,'’ %-]*[^\w]*$")
"""A word that is a number, possibly with separators, sign, percent and punctuation around."""

# ------------------------------------------------------------------------------------- readers

ISO_DATE = re.compile(r"(?<!\d)(\d{4})\s*([-/.])\s*(\d{1,2})\s*\2\s*(\d{1,2})(?!\d)")
"""Year first: groups year, separator, month (or day), day (or month)."""

NUMERIC_DATE = re.compile(r"(?<!\d)(\d{1,2})\s*([-/.])\s*(\d{1,2})\s*\2\s*(\d{4}|\d{2})(?!\d)")
"""Year last: groups first number, separator, second number, year."""

CJK_DATE_MARKS = re.compile(r"\s*[年月日년월일]\s*")
COMPACT_DATE = re.compile(r"(?<!\d)(\d{8})(?!\d)")

_FILL = r"(?:\s+(?:de|of|del)\s+|[\s\-/.,]*)"
_DAY = r"(\d{1,2})(?!\d)(?:st|nd|rd|th|er|e|o|º)?\.?"
NAMED_DATES = (
    (re.compile(rf"(?<!\d){_DAY}{_FILL}([a-z]{{3,}})\.?{_FILL}(\d{{4}}|\d{{2}})(?!\d)"), 1, 2, 3),
    (re.compile(rf"([a-z]{{3,}})\.?[\s\-/.]*{_DAY}(?:,\s*|\s+|-)(\d{{4}}|\d{{2}})(?!\d)"), 2, 1, 3),
    (re.compile(rf"(?<!\d)(\d{{4}})[\s\-/.]+([a-z]{{3,}})\.?[\s\-/.]+{_DAY}"), 3, 2, 1),
)
"""Dates with a month name, on accent-free lower-case text: (pattern, day, month, year group)."""

MONTH_NAMES: dict[int, tuple[str, ...]] = {
    # English, French, German, Spanish, Italian, Dutch, Portuguese (accents already stripped)
    1: ("january", "janvier", "januar", "janner", "enero", "gennaio", "januari", "janeiro"),
    2: ("february", "fevrier", "februar", "febrero", "febbraio", "februari", "fevereiro"),
    3: ("march", "mars", "marz", "marzo", "maart", "marco", "mrz", "mrt"),
    4: ("april", "avril", "abril", "aprile"),
    5: ("may", "mai", "mayo", "maggio", "mei", "maio"),
    6: ("june", "juin", "juni", "junio", "giugno", "junho"),
    7: ("july", "juillet", "juli", "julio", "luglio", "julho", "juil"),
    8: ("august", "aout", "agosto", "augustus"),
    9: ("september", "septembre", "septiembre", "settembre", "setembro", "sept"),
    10: ("october", "octobre", "oktober", "octubre", "ottobre", "outubro"),
    11: ("november", "novembre", "noviembre", "novembro"),
    12: ("december", "decembre", "dezember", "diciembre", "dicembre", "dezembro"),
}
ACCENTED_MONTH_NAMES: dict[int, tuple[str, ...]] = {
    2: ("février",),
    3: ("märz", "março"),
    8: ("août",),
    12: ("décembre",),
}
"""Month names of :data:`MONTH_NAMES` printed with an accented letter. OCR run without the
page's language often drops that letter (``août`` read ``aot``, ``décembre`` read ``dcembre``),
so :data:`MONTH_NAMES` also holds each of them without it."""

MONTH_NAMES = {
    m: names
    + tuple(
        "".join(c for c in n if c.isascii())
        for n in ACCENTED_MONTH_NAMES.get(m, ())
        if "".join(c for c in n if c.isascii()) not in names
    )
    for m, names in MONTH_NAMES.items()
}
"""Month names by number, for :data:`NAMED_DATES` (any unambiguous prefix is read too)."""

# Accented letters a month name may carry on the page ("März", "février", "août"): the finder
# reads raw text, the reader (:data:`NAMED_DATES`) the accent-free fold.
_ACCENTED = {"a": "aàáâäã", "e": "eèéêë", "i": "iìíîï", "o": "oòóôöõ", "u": "uùúûü", "c": "cç"}


def _trie_pattern(words: set[str]) -> str:
    """One regex alternation matching exactly ``words``, as a prefix tree (fast to scan)."""
    tree: dict = {}
    for w in words:
        node = tree
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def walk(node: dict) -> str:
        alts = []
        for ch in sorted(node, key=lambda c: (c == "", c)):
            if ch == "":
                continue
            letter = f"[{_ACCENTED[ch]}]" if ch in _ACCENTED else re.escape(ch)
            alts.append(letter + walk(node[ch]))
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return f"(?:{body})?" if alts else ""
        return body

    return walk(tree)


def _month_words() -> set[str]:
    """Every month name of :data:`MONTH_NAMES` and each prefix of 3+ letters naming one month
    only (``"sept"``, ``"janv"``, ``"dez"``): what the reader's month table accepts."""
    words = {n for names in MONTH_NAMES.values() for n in names}
    owners: dict[str, set[int]] = {}
    for m, names in MONTH_NAMES.items():
        for n in names:
            for k in range(3, len(n) + 1):
                owners.setdefault(n[:k], set()).add(m)
    return words | {p for p, ms in owners.items() if len(ms) == 1}


MONTH_WORDS: frozenset[str] = frozenset(_month_words())
"""The words :data:`DATE_RE` reads as a month: :data:`MONTH_NAMES` and each prefix of 3+ letters
naming one month only."""

_MONTHS = _trie_pattern(MONTH_WORDS)
# Day-first (``29. Mai 2017``, ``3rd Jan 2019``, ``03-Apr-2025``) and month-first
# (``Dec 20, 2018``; OCR may add a stray ``.`` or ``,`` before the year: ``May 5,. 2019``;
# never a day run into the year: ``AOT41895`` is no date).
DATE_RE = re.compile(
    r"(?<![\d])(?:\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}|\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}|"
    rf"\d{{1,2}}(?:st|nd|rd|th|er)?\.?[ \-]?(?:{_MONTHS})(?![a-z])\.?[ ,\-]*\d{{2,4}}|"
    rf"(?<![a-z])(?:{_MONTHS})\.? ?\d{{1,2}}(?:st|nd|rd|th)?(?:[,.]{{1,2}} ?| )\d{{4}})(?![\d])",
    re.IGNORECASE,
)
"""A printed date (numeric, or with a month name of :data:`MONTH_NAMES`), as a whole."""

NUMBER_RUN = re.compile(r"\d(?:[\d.,'’\s\u00a0\u202f]*\d)?")
"""A run of digits with the separators printed inside numbers."""

SPACED_NUMBER = re.compile(r"\d{1,3}(?:[ '’\u00a0\u202f]\d{3})+(?:[.,]\d+)?")
"""A number grouped by spaces or apostrophes (``75 974,00``, ``1'234.56``)."""

_CURRENCY_MARK = r"(?:[^\w\s]{1,3}|[A-Za-z]{1,3})?"  # "$", "RM", "USD" between sign and digits
# "RM-9.00" and "- $ 9.00" are negative; "TOTAL-RM 9.00" is a label with a hyphen in it.
SIGN_BEFORE = re.compile(rf"(?:[-−–]|(?<![A-Za-z0-9])[-−–]\s*{_CURRENCY_MARK})\s*$")
PAREN_BEFORE = re.compile(rf"\(\s*{_CURRENCY_MARK}\s*$")
SIGN_AFTER = re.compile(r"\s*(?:[-−–](?!\s*\d)|cr\b|credit\b)", re.IGNORECASE)
