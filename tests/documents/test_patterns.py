"""Typed value patterns: one definition of what dates, amounts, ids, ... look like."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.documents.normalize import parse_amount, parse_date
from confidence.documents.patterns import (
    AMOUNT_PATTERN,
    AMOUNT_RE,
    BIC_RE,
    COUNTRY_ID_RE,
    CURRENCY_RE,
    DATE_RE,
    EMAIL_RE,
    GROUPED_ID_RE,
    IBAN_RE,
    ID_RE,
    NUMBER_WORD,
    PERCENT_RE,
    SPACED_ID_RE,
)


def _all(pattern, text):
    return [m.group(0) for m in pattern.finditer(text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Date: 25/12/2018 8:13 PM", ["25/12/2018"]),
        ("2018-12-25", ["2018-12-25"]),
        ("issued 3 Jan 2019, due Jan 9, 2019", ["3 Jan 2019", "Jan 9, 2019"]),
        ("12 février 2025", ["12 février 2025"]),
        # a day with a dot and a German month, a time after it (issue 12: 17 of 30 date misses)
        ("Beleg-Nr.: 341427 29. Mai 2017 17:08", ["29. Mai 2017"]),
        ("Datum: 31. März 2024 Zeit: 10:38", ["31. März 2024"]),
        ("15 Sept. 2019, 1er janvier 2020", ["15 Sept. 2019", "1er janvier 2020"]),
        ("3 marzo 2024 / 7 agosto 2021", ["3 marzo 2024", "7 agosto 2021"]),
        ("Bill No: 720107 May 5,. 2019 22:05", ["May 5,. 2019"]),  # OCR punctuation
        ("12 items 2019, Walmart 12, 2019, Total 12 mai", []),
        ("phone 012-345 6789", []),
    ],
)
def test_date_re(text, found):
    assert _all(DATE_RE, text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("TOTAL RM 1,234.50", ["1,234.50"]),
        ("Summe 1.234,50 EUR", ["1.234,50"]),
        ("CASH 2000.00 CHANGE -12.00", ["2000.00", "-12.00"]),
        ("QTY 3 x 12", []),
        ("75 974,00", ["75 974,00"]),
        ("TOTAL RM 65. 20", ["65. 20"]),  # OCR's space after the decimal point
        ("12. 2019", []),
    ],
)
def test_amount_re(text, found):
    assert _all(AMOUNT_RE, text) == found


def test_other_finders():
    assert _all(EMAIL_RE, "Mail: billing@acme.co.uk.") == ["billing@acme.co.uk"]
    # OCR sets a space beside the @; the email reader drops it
    assert _all(EMAIL_RE, "E-Mail: billing @acme.de Tel") == ["billing @acme.de"]
    assert _all(EMAIL_RE, "Net @ payer 70,00") == []
    assert _all(IBAN_RE, "IBAN DE89 3704 0044 0532 0130 00") == ["DE89 3704 0044 0532 0130 00"]
    assert _all(PERCENT_RE, "MwSt 19 % and 7,5%") == ["19 %", "7,5%"]
    assert _all(CURRENCY_RE, "RM 9.00 / EUR / €5 / EURO") == ["RM", "EUR", "€"]
    assert _all(ID_RE, "Invoice INV-2018/001") == ["Invoice", "INV-2018/001"]
    assert NUMBER_WORD.match("1,234.50") and not NUMBER_WORD.match("INV-001")
    assert SPACED_ID_RE.match("FR 65 501744252 (TVA)").group(0) == "FR 65 501744252"
    assert GROUPED_ID_RE.match("123 456 789 B01").group(0) == "123 456 789 B01"
    assert GROUPED_ID_RE.match("INV") is None


@pytest.mark.parametrize("good", ["1,234.50", "1.234,50", "-12", "100", "1 234 567.5"])
def test_amount_pattern_accepts(good):
    assert re.fullmatch(AMOUNT_PATTERN, good)


@pytest.mark.parametrize("bad", ["", "12.3456", "1234567890123456789", "12a", "1,2,3"])
def test_amount_pattern_rejects(bad):
    assert not re.fullmatch(AMOUNT_PATTERN, bad)


amounts = st.decimals(min_value=0, max_value=10**9, places=2, allow_nan=False)


@given(amounts, st.sampled_from([(",", "."), (".", ","), ("", "."), (" ", ",")]))
def test_found_amounts_parse_back(value, seps):
    """Every amount the finder proposes parses to the value that was printed."""
    group, point = seps
    whole, frac = f"{value:.2f}".split(".")
    grouped = f"{int(whole):,}".replace(",", group) if group else whole
    printed = f"{grouped}{point}{frac}"
    found = _all(AMOUNT_RE, f"Total {printed} EUR")
    assert found == [printed]
    assert parse_amount(found[0]) == Decimal(f"{value:.2f}")


@given(st.dates(min_value=date(1950, 1, 1), max_value=date(2099, 12, 31)), st.sampled_from("/.-"))
def test_found_dates_parse_back(d, sep):
    printed = f"{d.day:02d}{sep}{d.month:02d}{sep}{d.year}"
    found = _all(DATE_RE, f"Datum: {printed} 10:00")
    assert found == [printed]
    assert parse_date(found[0]) == d


# Month names as printed, accents included (a hand-made table, not the generator's).
_PRINTED_MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre "
    "diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre "
    "dicembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
}
_NAMED_FORMATS = (
    "{d}. {month} {yyyy}",
    "{d} {month} {yyyy}",
    "{month} {d}, {yyyy}",
    "{dd}-{mon}-{yyyy}",
)


@given(
    st.dates(min_value=date(1950, 1, 1), max_value=date(2099, 12, 31)),
    st.sampled_from(sorted(_PRINTED_MONTHS)),
    st.sampled_from(_NAMED_FORMATS),
    st.sampled_from(["", "Datum: ", "Bon 123456 "]),
    st.sampled_from(["", " 17:08", " Zeit: 10:38:23"]),
    st.booleans(),
)
def test_found_named_dates_parse_back(d, lang, fmt, before, after, upper):
    month = _PRINTED_MONTHS[lang].split()[d.month - 1]
    mon = month[: 3 if lang == "en" else 4]  # four letters keep "juin" and "juil" apart
    printed = fmt.format(d=d.day, dd=f"{d.day:02d}", month=month, mon=mon, yyyy=d.year)
    printed = printed.upper() if upper else printed
    found = _all(DATE_RE, f"{before}{printed}{after}")
    assert found == [printed]
    assert parse_date(found[0]) == d


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        (COUNTRY_ID_RE, "VAT registration: GB 382702240 SWIFT", ["GB 382702240"]),
        (COUNTRY_ID_RE, "N° TVA : FR 71 058712562", ["FR 71 058712562"]),
        (COUNTRY_ID_RE, "TEL 0681 1234, Rechnung 2024", []),
        (BIC_RE, "SWIFT/BIC XOQIGBUY, BIC QYBEFRS5JNX", ["XOQIGBUY", "QYBEFRS5JNX"]),
        (BIC_RE, "Swift Code, IBAN GB29 0266", []),
    ],
)
def test_id_shapes(pattern, text, found):
    assert _all(pattern, text) == found


def _iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


_BBAN = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=30, max_size=30)


@given(
    st.sampled_from([("GB", 22), ("DE", 22), ("FR", 27), ("NL", 18), ("NO", 15), ("MT", 31)]),
    _BBAN,
    st.lists(st.integers(min_value=1, max_value=30), min_size=0, max_size=4),
)
def test_an_iban_is_found_however_ocr_spaced_its_groups(country_length, bban, cuts):
    from confidence.documents.patterns import iban_checksum_ok, iban_values

    country, length = country_length
    iban = _iban(country, bban[: length - 4])
    assert iban_checksum_ok(iban)
    spaced = iban
    for c in sorted({c for c in cuts if 4 <= c < len(iban)}, reverse=True):
        spaced = spaced[:c] + " " + spaced[c:]
    found = iban_values(f"IBAN {spaced} BIC NWBKGB2L")
    assert iban in [v.replace(" ", "") for v in found]


@given(_BBAN, st.sampled_from(["GB", "DE", "FR", "NL"]))
def test_an_iban_of_the_wrong_length_for_its_country_is_none(bban, country):
    from confidence.documents.patterns import IBAN_LENGTHS, iban_checksum_ok

    short = _iban(country, bban[: IBAN_LENGTHS[country] - 5])  # valid mod 97, a character short
    assert not iban_checksum_ok(short)
    assert iban_checksum_ok(_iban(country, bban[: IBAN_LENGTHS[country] - 4]))


def test_a_broken_iban_checksum_is_not_joined():
    from confidence.documents.patterns import iban_values

    assert iban_values("IBAN GB82WEST123456987 65433") == ["GB82WEST123456987"]


def test_a_valid_iban_replaces_the_pattern_match_that_stops_inside_it():
    from confidence.documents.patterns import iban_values

    assert iban_values("IBAN GB82WEST123456987 65432") == ["GB82WEST123456987 65432"]
    # an OCR-damaged IBAN (no run passes the check) keeps the pattern's match
    assert iban_values("IBAN GB82WEST12345698765433") == ["GB82WEST12345698765433"]


# OCR letters for digits and digits for letters, as repair_iban undoes them
_MISREAD_DIGIT = {"0": "OQD", "1": "IL", "2": "Z", "5": "S", "6": "G", "7": "T", "8": "BS"}
_MISREAD_LETTER = {"O": "0", "D": "0", "I": "1", "Z": "2", "S": "5", "G": "6", "B": "8"}


@pytest.mark.parametrize(
    "printed, read",
    [
        ("GBS2 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32"),  # check digits
        ("GB82 VVEST 1234 5698 7654 32", None),  # a letter for a letter: not a shape error
        ("GB82 W3ST 1234 5698 7654 32", None),  # 3 is no letter OCR confuses
        ("GB82WEST12345698765432", "GB82WEST12345698765432"),  # already valid
        ("DE89 37O4 0044 O532 0130 00", "DE89 3704 0044 0532 0130 00"),  # digits-only BBAN
        ("GB82 WEST 1234 5698 7654 33", None),  # a digit misread as a digit: no shape error
        ("GB82 WEST 1234 5698 7654", None),  # too short for GB
        ("XX8S ABCD 1234", None),  # not a country's length, nor 15-34
    ],
)
def test_repair_iban_hand_cases(printed, read):
    from confidence.documents.patterns import repair_iban

    assert repair_iban(printed) == read


@given(
    st.sampled_from([("GB", 22), ("DE", 22), ("FR", 27), ("NL", 18), ("AT", 20)]),
    _BBAN,
    st.lists(st.integers(min_value=0, max_value=26), min_size=1, max_size=3),
    st.integers(min_value=0, max_value=2),
)
def test_a_misread_iban_is_repaired_to_itself_or_not_at_all(country_length, bban, spots, k):
    """Turning characters the structure rules out into their OCR look-alikes never yields a
    different valid IBAN: the repair gives the printed IBAN back, or nothing."""
    from confidence.documents.patterns import _iban_shape, iban_checksum_ok, repair_iban

    country, length = country_length
    shape = _iban_shape(country, length)
    bban = "".join(
        (ch if ch.isdigit() else str(ord(ch) % 10)) if kind == "n" else
        (ch if ch.isalpha() else "ABCDEFGHIJ"[int(ch)]) if kind == "a" else ch
        for ch, kind in zip(bban[: length - 4], shape[4:], strict=True)
    )  # fmt: skip
    iban = _iban(country, bban)
    assert iban_checksum_ok(iban)
    read = list(iban)
    for i in {s % length for s in spots}:
        table = _MISREAD_DIGIT if shape[i] == "n" else _MISREAD_LETTER if shape[i] == "a" else {}
        if iban[i] in table:
            alts = table[iban[i]]
            read[i] = alts[k % len(alts)]
    read = "".join(read)
    assert repair_iban(read) in (iban, None)
    if read == iban:
        assert repair_iban(read) == iban


def test_iban_values_offers_the_repair_in_place_of_the_misread_print():
    from confidence.documents.patterns import iban_values

    assert iban_values("IBAN GBS2 WEST 1234 5698 7654 32 BIC NWBKGB2L") == [
        "GB82 WEST 1234 5698 7654 32"
    ]
    iban = _iban("GB", "OBAN12345698765432")  # a bank code with a letter O
    misread = iban[:4] + "0" + iban[5:]  # ... printed as a zero
    assert iban_values(f"Bank {misread} Ltd") == [iban]
    assert iban_values("IBAN GB82 0EST 1234 5698 7654 32") == ["GB82 0EST 1234 5698 7654 32"]


@given(
    st.text(alphabet="0123456789", min_size=5, max_size=12), st.integers(0, 11), st.integers(0, 5)
)
def test_a_digit_misread_as_a_letter_inside_a_digit_run_is_read_back(digits, at, k):
    from confidence.documents.patterns import repair_digit_run

    i = 1 + at % (len(digits) - 2)  # strictly inside the run, four digits left
    look = {"0": "Oo", "1": "Il", "2": "Z"}
    digits = digits[:i] + "012"[k % 3] + digits[i + 1 :]
    misread = digits[:i] + look[digits[i]][k % len(look[digits[i]])] + digits[i + 1 :]
    assert repair_digit_run(f"INV-{misread}") == f"INV-{digits}"
    assert repair_digit_run(f"INV-{digits}") == f"INV-{digits}"  # nothing to repair


@pytest.mark.parametrize(
    "value",
    [
        "PO019817",
        "ORDO86122",
        "A1I2",
        "2015Q3",
        "RE-7S",
        "12B45678",
        "FR8S783884057",
        "ISO 9001",
        "XBJZGB48Z53",
    ],
)
def test_a_letter_that_is_not_between_two_digits_of_a_long_id_stays(value):
    from confidence.documents.patterns import repair_digit_run

    assert repair_digit_run(value) == value


@pytest.mark.parametrize(
    ("text", "found"),
    [("due aot 31,2015", "aot 31,2015"), ("paid jul02,2015 cash", "jul02,2015"),
     ("le 3 dcembre 2019", "3 dcembre 2019"), ("RA TF AOT41895", None), ("MAY52019", None)],
)  # fmt: skip
def test_month_names_ocr_dropped_an_accent_of_are_dates_and_a_day_run_into_a_year_is_not(
    text, found
):
    m = DATE_RE.search(text)
    assert (m.group(0) if m else None) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [("E-mail: billing@acme.co.uk", "billing@acme.co.uk"),
     ("Mail billing @acme .co.uk Leeds", "billing @acme .co.uk"),
     ("contact@atelier .fr IBAN", "contact@atelier .fr"),
     ("write to info@acme. Then call", None)],
)  # fmt: skip
def test_emails_ocr_spaced_beside_the_at_or_a_dot_are_found(text, found):
    from confidence.documents.normalize import normalize

    m = EMAIL_RE.search(text)
    assert (m.group(0) if m else None) == found
    if found:
        assert " " not in normalize("email", found)


@pytest.mark.parametrize(
    ("text", "found"),
    [("9. 94.00", ["94.00"]), ("Date 12.05.2018 total 12.50", ["12.50"]),
     ("CASH 65. 20", ["65. 20"]), ("RM 1,234.50.", ["1,234.50"]), ("1.234,50 EUR", ["1.234,50"])],
)  # fmt: skip
def test_an_amount_is_never_the_start_of_a_longer_number(text, found):
    """OCR's stray space after a decimal point (``65. 20``) must not turn ``9. 94.00`` into
    ``9. 94``, and a dotted date is no amount."""
    assert [m.group(0) for m in AMOUNT_RE.finditer(text)] == found
