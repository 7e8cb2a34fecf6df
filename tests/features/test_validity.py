"""Value well-formedness per field type (``val_valid``): hand cases, parser properties, rows."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.features.validity import NAMES, is_valid, values
from confidence.readings import FieldReading
from confidence.schema import Field


def _iban(country: str, bban: str) -> str:
    """A valid IBAN for ``bban`` (ISO 13616 check digits computed here)."""
    digits = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def test_hand_cases_per_type():
    cases = {
        ("date", "14/04/2018"): True,
        ("date", "44/04/2018"): False,  # an OCR slip: day 44
        ("date", "24/16/2617"): False,
        ("date", "64-05-2013"): False,
        ("date", "2018-04-14"): True,
        ("date", "05.22.95"): True,  # only month-first is a date
        ("date", "27 March, 2018"): True,
        ("date", "no date"): False,
        ("amount", "1.234,56"): True,
        ("amount", "RM7.70"): True,
        ("amount", "ABC"): False,
        ("percent", "19"): True,
        ("percent", "5,5"): True,
        ("percent", "190"): False,
        ("currency", "EUR"): True,
        ("currency", "€"): True,
        ("email", "info@acme.de"): True,
        ("email", "info acme.de"): False,
        ("iban", "DE89 3704 0044 0532 0130 00"): True,
        ("iban", "DE89 3704 0044 0532 0130 07"): False,
        ("iban", "GB82 WEST 1234 5698 7654 32"): True,
        ("text", "ACME"): None,
        ("id", "INV-7"): None,
        ("address", "1 Main St"): None,
        ("date", None): None,
        ("amount", "  "): None,
    }
    for (ftype, value), want in cases.items():
        assert is_valid(ftype, value) is want, (ftype, value)
    assert NAMES[0] == "val_valid"
    assert values("date", "44/04/2018")[0] == 0.0
    assert values("iban", "DE89370400440532013000")[0] == 1.0
    assert math.isnan(values("text", "x")[0])


@given(st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)))
def test_every_real_date_is_valid_in_the_usual_layouts(d):
    for fmt in ("%d/%m/%Y", "%Y-%m-%d", "%d.%m.%y", "%m/%d/%Y", "%d-%m-%Y"):
        assert is_valid("date", d.strftime(fmt)), d.strftime(fmt)


@given(st.integers(32, 99), st.integers(13, 99), st.integers(1900, 2100))
def test_a_day_and_a_month_out_of_range_is_never_a_date(day, month, year):
    assert is_valid("date", f"{day:02d}/{month:02d}/{year}") is False
    assert is_valid("date", f"{year}-{month:02d}-{day:02d}") is False


@given(
    st.sampled_from(("DE", "FR", "GB", "NL")),
    st.text("0123456789", min_size=18, max_size=18),
    st.integers(4, 21),
    st.integers(1, 9),
)
def test_iban_check_digits_catch_every_single_digit_error(country, bban, pos, delta):
    iban = _iban(country, bban)
    assert is_valid("iban", iban)
    wrong = iban[:pos] + str((int(iban[pos]) + delta) % 10) + iban[pos + 1 :]
    assert is_valid("iban", wrong) is False


def test_feature_rows_carry_it_with_and_without_the_page():
    from confidence.features.build import FEATURE_NAMES, feature_matrix, pageless_matrix
    from tests.features.test_features import make_doc

    col = FEATURE_NAMES.index("val_valid")
    doc = make_doc()
    f_date, f_name = Field("date", "date"), Field("name", "text")
    rows = [
        (f_date, doc, FieldReading("44/04/2018"), FieldReading("14/04/2018")),  # Hunter reported
        (f_date, doc, FieldReading("44/04/2018"), FieldReading("14/04/2018"), "mapper"),
        (f_name, doc, FieldReading("ACME"), None),
        (f_date, doc, None, None),
    ]
    for X in (feature_matrix(rows), pageless_matrix(rows)):
        got = X[:, col]
        assert got[:2].tolist() == [0.0, 1.0] and math.isnan(got[2]) and math.isnan(got[3])


def test_value_shape_hand_cases():
    assert values("text", "52 Alexander St")[1:4] == [2 / 13, 1.0, 3.0]
    assert values("text", "Studio 65q")[1:4] == [2 / 9, 0.0, 2.0]
    assert values("amount", "1.234,56")[1:4] == [1.0, 1.0, 1.0]
    share, lead, words = values("currency", "€")[1:4]  # no letter or digit
    assert math.isnan(share) and math.isnan(lead) and words == 1.0
    assert all(math.isnan(v) for v in values("text", None))


@given(st.text(min_size=1, max_size=40))
def test_value_shape_is_bounded_and_case_blind(s):
    share, lead, words = values("text", s)[1:4]
    same = values("text", s.swapcase())[1:4]
    if math.isnan(words):  # an empty value (blank or a null marker)
        assert math.isnan(share) and math.isnan(lead)
        return
    assert words >= 1 and words == len(s.split())
    assert math.isnan(share) or 0.0 <= share <= 1.0
    assert lead in (0.0, 1.0) or math.isnan(lead)
    if s.swapcase().lower() == s.lower() and len(s.swapcase()) == len(s):
        assert [x for x in same if not math.isnan(x)] == [
            x for x in (share, lead, words) if not math.isnan(x)
        ]


def test_shape_rows_with_and_without_the_page():
    from confidence.features.build import FEATURE_NAMES, feature_matrix, pageless_matrix
    from tests.features.test_features import make_doc

    cols = [FEATURE_NAMES.index(n) for n in NAMES[1:]]
    doc = make_doc()
    f = Field("customer", "text")
    rows = [(f, doc, FieldReading("52 Alexander St"), FieldReading("ACME Ltd"), "mapper")]
    for X in (feature_matrix(rows), pageless_matrix(rows)):
        assert X[0, cols].tolist() == [0.0, 0.0, 2.0, 0.0]  # the Mapper's value is reported


@pytest.mark.parametrize(
    ("value", "open_end"),
    [
        ("Unit 5, 12 Mill Lane,", 1.0),  # an address read one printed line short
        ("12 Mill Lane, ", 1.0),  # trailing blanks do not hide the comma
        ("NORTH COAST TIMBER &", 1.0),  # a wrapped name read to its first line
        ("Ref: ", 1.0),
        ("Unit 4 (", 1.0),
        ("12-", 1.0),
        ("12 Mill Lane, Leeds LS1 4AB", 0.0),
        ("HOME & GARDEN", 0.0),
        ("Smith & Co.", 0.0),
        ("(4006213-8)", 0.0),
        ("5.00", 0.0),
    ],
)
def test_a_value_ending_in_a_comma_or_connector_is_open(value, open_end):
    assert values("address", value)[NAMES.index("val_open_end")] == open_end


def test_open_end_is_nan_for_an_empty_value():
    assert math.isnan(values("address", "  ")[NAMES.index("val_open_end")])
