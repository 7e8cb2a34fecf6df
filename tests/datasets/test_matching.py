"""Type-aware correctness: parsers, normalisers and the is_correct / similarity rules."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.datasets.matching import (
    THRESHOLDS,
    infer_date_order,
    is_correct,
    normalize,
    parse_amount,
    parse_currency,
    parse_date,
    parse_percent,
    similarity,
)
from confidence.documents.normalize import is_empty
from confidence.documents.text import fold, fold_text
from confidence.schema import FIELD_TYPES

# ------------------------------------------------------------------------------ hand cases


@pytest.mark.parametrize(
    ("field_type", "predicted", "gold", "expected"),
    [
        # the two cases the shared-data README names
        ("date", "25/12/2018", "2018-12-25", True),
        ("amount", "€ 75 974,00", "75974.0", True),
        # dates
        ("date", "25.12.18", "25/12/2018", True),
        ("date", "20150418", "2015-04-18", True),
        ("date", "04 JUN 2018", "2018-06-04", True),
        ("date", "2018-12-26", "2018-12-25", False),
        ("date", "04/07/2015", "2015-04-07", False),  # day-first by default
        ("date", "not a date", "2018-12-25", False),
        ("date", "1 2 02", "1 2 02", True),  # unparseable both sides: equal text
        # amounts
        ("amount", "RM9.00", "9.00", True),
        ("amount", "$8.20", "8.2", True),
        ("amount", "9.01", "9.00", False),
        ("amount", "(12.00)", "12.00", True),  # sign ignored by default
        ("amount", "1.234", "1234.00", True),  # either reading of a lone "1.234"
        ("amount", "1,234", "1.234", True),
        ("amount", "12.34", "1234", False),
        # ids, currency, percent, email, iban
        ("id", "fa02 2015 020059", "FA02/2015/020059", True),
        ("id", "FA02/2015/020058", "FA02/2015/020059", False),
        ("currency", "$", "USD", True),
        ("currency", "EUR", "€", True),
        ("currency", "€", "$", False),
        ("currency", "RM", "MYR", True),
        ("percent", "19 %", "19.0%", True),
        ("percent", "0.19", "19%", True),
        ("percent", "7%", "19%", False),
        ("email", " Billing@Example.COM ", "billing@example.com", True),
        ("email", "mailto:a@b.org", "a@b.org", True),
        ("email", "a@b.org", "a@b.com", False),
        ("iban", "DE89 3704 0044 0532 0130 00", "IBAN: DE89370400440532013000", True),
        # text and addresses
        ("text", "BOOK TA.K (TAMAN DAYA) SDN BHD", "BOOK TA .K (TAMAN DAYA) SDN BHD", True),
        ("text", "abc ho trading", "ABC HO TRADING", True),
        ("text", "Marc Demo", "Deco Addict", False),
        ("text", "Etats Unis", "États-Unis", True),
        ("address", "NO.2&4, JALAN HARMONI 3/2\nTAMAN DESA HARMONI. 81100 JOHOR BAHRU JOHOR",
         "NO.2&4, JALAN HARMONI 3/2, TAMAN DESA HARMONI. 81100 JOHOR BAHRU JOHOR", True),
        ("address", "JOHOR", "NO.2&4, JALAN HARMONI 3/2, TAMAN DESA HARMONI, JOHOR", False),
    ],
)  # fmt: skip
def test_hand_cases(field_type, predicted, gold, expected):
    assert is_correct(field_type, predicted, gold) is expected


def test_sign_sensitive_option_for_credit_notes():
    assert is_correct("amount", "12.00 CR", "12.00")
    assert not is_correct("amount", "12.00 CR", "12.00", ignore_sign=False)
    assert is_correct("amount", "12.00 CR", "-12.00", ignore_sign=False)


def test_date_order_option():
    assert is_correct("date", "04/07/2015", "2015-04-07", date_order="mdy")
    assert not is_correct("date", "04/07/2015", "2015-04-07", date_order=None)
    # same printed string on both sides matches whatever the order
    assert is_correct("date", "04/07/2015", "04/07/2015", date_order=None)


@pytest.mark.parametrize("field_type", FIELD_TYPES)
@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (None, None, True),  # absent and nothing extracted
        ("", None, True),
        ("N/A", "  ", True),  # null markers and blanks are empty
        ("x1", None, False),  # a value for an absent field
        (None, "x1", False),  # nothing for a present field
        ("", "x1", False),
    ],
)
def test_absent_field_rules(field_type, predicted, gold, expected):
    assert is_correct(field_type, predicted, gold) is expected
    assert similarity(field_type, predicted, gold) == float(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("25/12/2018", date(2018, 12, 25)),
        ("2018-12-25", date(2018, 12, 25)),
        ("25.12.18", date(2018, 12, 25)),
        ("3 April 2025", date(2025, 4, 3)),
        ("April 3, 2025", date(2025, 4, 3)),
        ("03-Apr-2025", date(2025, 4, 3)),
        ("3. März 2025", date(2025, 3, 3)),
        ("3 avril 2025", date(2025, 4, 3)),
        ("1er févr. 2015", date(2015, 2, 1)),
        ("Jan 09, 2019", date(2019, 1, 9)),
        ("25th December 2018", date(2018, 12, 25)),
        ("3 de abril de 2025", date(2025, 4, 3)),
        ("12/25/2018", date(2018, 12, 25)),  # month-first because day-first is impossible
        ("DATE: 25/12/2018 8:13:39 PM", date(2018, 12, 25)),
        ("2025年3月3日", date(2025, 3, 3)),
        ("31/02/2018", None),
        ("Apr 2025", None),
        ("total 9.00", None),
    ],
)
def test_parse_date_formats(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.56", "1234.56"),
        ("1.234,56", "1234.56"),
        ("1 234,56", "1234.56"),
        ("1'234.56", "1234.56"),
        ("€ 75 974,00", "75974"),
        ("USD 1,000", "1000"),
        ("1.234.567", "1234567"),
        ("1,23,456.00", "123456"),
        ("-12.00", "-12"),
        ("(12.00)", "-12"),
        ("12.00-", "-12"),
        ("12.00 CR", "-12"),
        ("$-3.50", "-3.5"),
        ("TOTAL-RM 9.00", "9"),  # a hyphen inside a label is not a sign
        ("Total 6% GST 12.00", "12"),
        ("12,5", "12.5"),
        ("free", None),
    ],
)
def test_parse_amount_formats(text, expected):
    assert parse_amount(text) == (None if expected is None else Decimal(expected))


def test_currency_percent_and_normalize_forms():
    assert [parse_currency(s) for s in ("$", "US$", "S$", "£ 12", "euros", "CHF")] == [
        "USD", "USD", "SGD", "GBP", "EUR", "CHF"
    ]  # fmt: skip
    assert parse_percent("19,5 %") == Decimal("19.5")
    assert normalize("date", "25/12/2018") == "2018-12-25"
    assert normalize("amount", 75974.0) == Decimal("75974.0")
    assert normalize("date", date(2020, 1, 2)) == "2020-01-02"
    assert normalize("text", "  Hello,   WORLD! ") == "hello world"
    assert normalize("id", "--") is None


def test_non_string_values():
    assert is_correct("amount", 9, "9.00")
    assert is_correct("amount", Decimal("75974"), "€ 75 974,00")
    assert is_correct("date", date(2018, 12, 25), "25/12/2018")


def test_infer_date_order():
    assert infer_date_order(["01/25/2015", "04/07/2015"]) == "mdy"
    assert infer_date_order(["25/12/2018", "09/01/2019", None]) == "dmy"
    assert infer_date_order(["2018-12-25"], default=None) is None


def test_bad_options_name_the_fix():
    with pytest.raises(ValueError, match="use one of: text, id"):
        is_correct("money", "1", "1")
    with pytest.raises(ValueError, match="date_order"):
        is_correct("date", "1", "1", date_order="ymd")
    with pytest.raises(ValueError, match="prefer"):
        parse_date("25/12/2018", prefer="ydm")


def test_repeated_values_are_served_from_the_cache():
    from confidence.datasets.matching import _similarity

    pairs = [
        ("date", "25/12/2018", "2018-12-25"),
        ("amount", "RM9.00", "9.00"),
        ("text", "ABC HO TRADING", "abc ho trading"),
        ("id", "FA02/2015", "fa022015"),
    ]
    for t, p, g in pairs:
        is_correct(t, p, g)
    before = _similarity.cache_info()
    for _ in range(50):
        for t, p, g in pairs:
            is_correct(t, p, g)
    after = _similarity.cache_info()
    assert after.misses == before.misses  # repeats never recompute
    assert after.hits - before.hits >= 200


# ------------------------------------------------------------------------------ hypothesis

_DE_MONTHS = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
              "September", "Oktober", "November", "Dezember"]  # fmt: skip
_FR_MONTHS = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
              "septembre", "octobre", "novembre", "décembre"]  # fmt: skip
_DATE_FORMATS = [
    lambda d: d.isoformat(),
    lambda d: d.strftime("%d/%m/%Y"),
    lambda d: d.strftime("%d.%m.%y"),
    lambda d: d.strftime("%d-%m-%Y"),
    lambda d: d.strftime("%Y%m%d"),
    lambda d: d.strftime("%d %B %Y"),
    lambda d: d.strftime("%B %d, %Y"),
    lambda d: d.strftime("%d-%b-%Y").upper(),
    lambda d: d.strftime("%b %d, %Y"),
    lambda d: d.strftime("%A, %d %B %Y"),
    lambda d: f"{d.day}. {_DE_MONTHS[d.month - 1]} {d.year}",
    lambda d: f"{d.day} {_FR_MONTHS[d.month - 1]} {d.year}",
]
_dates = st.dates(min_value=date(1969, 1, 1), max_value=date(2068, 12, 31))


@given(_dates, st.sampled_from(_DATE_FORMATS))
def test_date_round_trip(d, fmt):
    text = fmt(d)
    assert parse_date(text) == d, text
    assert is_correct("date", text, d.isoformat())


@given(_dates)
def test_month_first_round_trip(d):
    assert parse_date(d.strftime("%m/%d/%Y"), prefer="mdy") == d


def _group(digits: str, sep: str) -> str:
    head = len(digits) % 3 or 3
    return sep.join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])


_STYLES = [  # (thousands separator, decimal separator)
    (",", "."), (".", ","), (" ", ","), ("'", "."), ("\u00a0", ","), ("", "."), ("", ","),
]  # fmt: skip
_WRAPS = [
    lambda s: s, lambda s: f"€ {s}", lambda s: f"{s} EUR", lambda s: f"RM{s}", lambda s: f"${s}",
    lambda s: f"USD {s}", lambda s: f"{s} €",
]  # fmt: skip
_NEGATIVES = [lambda s: f"-{s}", lambda s: f"({s})", lambda s: f"{s}-", lambda s: f"{s} CR"]


@given(
    st.integers(min_value=0, max_value=10**10),
    st.sampled_from(_STYLES),
    st.sampled_from(_WRAPS),
    st.one_of(st.none(), st.sampled_from(_NEGATIVES)),
)
def test_amount_round_trip(cents, style, wrap, negative):
    value = Decimal(cents).scaleb(-2)
    whole, frac = divmod(cents, 100)
    text = _group(str(whole), style[0]) + style[1] + f"{frac:02d}"
    text = negative(text) if negative else text
    parsed = parse_amount(wrap(text))
    assert parsed == (-value if negative and value else value), wrap(text)
    assert is_correct("amount", wrap(text), str(value))


@given(st.integers(min_value=1000, max_value=10**9), st.sampled_from([",", ".", " ", "'"]))
def test_whole_amounts_match_in_any_grouping(n, sep):
    assert is_correct("amount", _group(str(n), sep), f"{n}.00")


@given(st.text())
def test_id_normalisation_idempotent(s):
    once = fold(s)
    assert fold(once) == once
    assert fold_text(fold_text(s)) == fold_text(s)


@given(st.text(alphabet="ABCdef0123456789", min_size=1), st.sampled_from(["-", "/", " ", "."]))
def test_id_ignores_separators_and_case(s, sep):
    assert is_correct("id", sep.join(s).lower(), s.upper())


_any_value = st.one_of(
    st.none(),
    st.text(max_size=40),
    st.from_regex(r"[\d .,'()$€-]{1,20}", fullmatch=True),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300)
@given(st.sampled_from(FIELD_TYPES), _any_value, _any_value)
def test_never_raises_and_rules_are_consistent(field_type, a, b):
    score = similarity(field_type, a, b)
    assert 0.0 <= score <= 1.0
    assert is_correct(field_type, a, b) == (score >= THRESHOLDS[field_type])
    assert similarity(field_type, b, a) == pytest.approx(score)  # symmetric
    assert is_correct(field_type, a, a)  # reflexive
    normalize(field_type, a)
    parse_date(a)
    parse_amount(a)


@given(st.text(max_size=30))
def test_empty_means_none_everywhere(s):
    if is_empty(s):
        assert all(normalize(t, s) is None for t in FIELD_TYPES)
