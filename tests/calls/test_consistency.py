"""Joint choice of amounts and dates: hand-computed invoices, invariances, hypothesis."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.calls.consistency import JointChoice, choose_jointly, field_roles, relation_flags
from confidence.schema import Field, Schema

INVOICE = Schema(
    "invoice",
    (
        Field("vendor_name", "text"),
        Field("date_issue", "date", "Date the invoice was issued."),
        Field("date_due", "date", "Date by which the invoice must be paid."),
        Field("amount_total_net", "amount", "Total amount before tax."),
        Field("amount_total_tax", "amount", "Total tax amount."),
        Field("tax_rate", "percent", "Tax rate in percent."),
        Field("amount_total_gross", "amount", "Total amount including tax."),
        Field("amount_prepaid", "amount", "Deposit already paid."),
        Field("amount_due", "amount", "Amount still to be paid."),
    ),
)


def values(choices: dict[str, JointChoice]) -> dict[str, str | None]:
    return {k: c.value for k, c in choices.items()}


def test_roles_of_the_invoice_schema():
    assert field_roles(INVOICE) == {
        "date_issue": "issue_date",
        "date_due": "due_date",
        "amount_total_net": "net",
        "amount_total_tax": "tax",
        "tax_rate": "rate",
        "amount_total_gross": "gross",
        "amount_prepaid": "prepaid",
        "amount_due": "due",
    }


def test_two_fields_of_one_role_are_left_out():
    s = Schema("s", (Field("total", "amount"), Field("grand_total", "amount")))
    assert field_roles(s) == {}


def test_swapped_net_and_gross_are_put_right():
    # 1 250,00 + 19 % = 237,50 tax -> 1 487,50 gross; prepaid 487,50 -> 1 000,00 due.
    # Independently: net takes the gross (−0.2 > −0.6) and gross the net (−0.1 > −0.9).
    opts = {
        "amount_total_net": [("1 487,50", -0.2), ("1 250,00", -0.6)],
        "amount_total_tax": [("237,50", -0.1), ("19,00", -1.5)],
        "tax_rate": [("19 %", -0.05)],
        "amount_total_gross": [("1 250,00", -0.1), ("1 487,50", -0.9)],
        "amount_prepaid": [("-487,50", -0.3)],
        "amount_due": [("1 487,50", -0.4), ("1 000,00", -0.8)],
        "vendor_name": [("ACME GmbH", -0.2)],
    }
    got = choose_jointly(INVOICE, opts)
    assert values(got) == {
        "amount_total_net": "1 250,00",
        "amount_total_tax": "237,50",
        "tax_rate": "19 %",
        "amount_total_gross": "1 487,50",
        "amount_prepaid": "-487,50",
        "amount_due": "1 000,00",
        "vendor_name": "ACME GmbH",
    }
    assert got["amount_total_net"] == JointChoice("1 250,00", -0.6, True)
    assert got["vendor_name"].consistent is None


def test_subtotal_taken_for_the_total_on_a_receipt_like_invoice():
    # 84.00 + 6 % GST 5.04 = 89.04; the reading's top total is the subtotal.
    s = Schema(
        "r",
        (Field("subtotal", "amount"), Field("gst", "amount"), Field("total", "amount")),
    )
    opts = {
        "subtotal": [("84.00", -0.3)],
        "gst": [("5.04", -0.2), ("6.00", -1.0)],
        "total": [("84.00", -0.5), ("89.04", -1.9), ("100.00", -2.5)],
    }
    assert values(choose_jointly(s, opts))["total"] == "89.04"
    # Without the bonus the independent pick stays.
    assert values(choose_jointly(s, opts, bonus=0.0))["total"] == "84.00"


def test_much_worse_consistent_assignment_does_not_win():
    s = Schema("r", (Field("net", "amount"), Field("tax", "amount"), Field("total", "amount")))
    opts = {
        "net": [("100.00", -0.1)],
        "tax": [("19.00", -0.1)],
        "total": [("120.00", -0.1), ("119.00", -9.0)],
    }
    got = choose_jointly(s, opts)
    assert got["total"].value == "120.00"
    assert got["total"].consistent is False


def test_due_date_before_issue_date_is_put_right():
    opts = {
        "date_issue": [("15.03.2024", -0.2), ("01.03.2024", -0.9)],
        "date_due": [("01.03.2024", -0.3), ("31.03.2024", -1.0)],
    }
    got = choose_jointly(INVOICE, opts)
    assert values(got) == {"date_issue": "15.03.2024", "date_due": "31.03.2024"}
    assert got["date_due"].consistent is True


def test_absent_is_an_option_and_no_options_gives_none():
    opts = {"amount_total_net": [(None, -0.1), ("10.00", -2.0)], "amount_due": []}
    got = choose_jointly(INVOICE, opts)
    assert got["amount_total_net"] == JointChoice(None, -0.1, None)
    assert got["amount_due"].value is None and got["amount_due"].score == -math.inf


def test_relation_flags_of_one_reading():
    ok = {
        "amount_total_net": "100.00",
        "amount_total_tax": "19.00",
        "tax_rate": "19%",
        "amount_total_gross": "119.00",
        "amount_due": "119.00",
        "amount_prepaid": "0.00",
    }
    flags = relation_flags(INVOICE, ok)
    assert flags["amount_total_tax"] is True and flags["amount_due"] is True
    assert flags["vendor_name"] is None and flags["date_issue"] is None
    bad = dict(ok, amount_total_tax="21.00")
    flags = relation_flags(INVOICE, bad)
    assert flags["amount_total_tax"] is False
    assert flags["amount_total_net"] is False  # both of its relations fail
    assert flags["amount_total_gross"] is True  # gross - prepaid = due still holds


def test_due_equals_gross_only_without_a_prepaid_field():
    s = Schema("s", (Field("total", "amount"), Field("amount_due", "amount")))
    assert relation_flags(s, {"total": "5.00", "amount_due": "5.00"}) == {
        "total": True,
        "amount_due": True,
    }
    with_prepaid = Schema("s", (*s.fields, Field("deposit", "amount")))
    assert relation_flags(with_prepaid, {"total": "5.00", "amount_due": "5.00"})["total"] is None


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError, match="top_k"):
        choose_jointly(INVOICE, {}, top_k=0)


def test_option_order_does_not_matter():
    rng = random.Random(3)
    opts = {
        "amount_total_net": [("1 487,50", -0.2), ("1 250,00", -0.6), ("19", -0.6)],
        "amount_total_tax": [("237,50", -0.1), ("19,00", -0.1)],
        "amount_total_gross": [("1 250,00", -0.1), ("1 487,50", -0.9), ("237,50", -0.9)],
        "date_issue": [("15.03.2024", -0.2), ("01.03.2024", -0.2)],
        "date_due": [("01.03.2024", -0.3), ("31.03.2024", -0.3)],
    }
    want = choose_jointly(INVOICE, opts)
    for _ in range(20):
        shuffled = {k: rng.sample(v, len(v)) for k, v in rng.sample(list(opts.items()), len(opts))}
        assert choose_jointly(INVOICE, shuffled) == want


_value = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.decimals(min_value=-1000, max_value=1000, places=2).map(str),
    st.sampled_from(["19 %", "7%", "01.03.2024", "31/12/2023", "2024-02-30"]),
)
_score = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(-10, 0))


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*INVOICE.names, "unknown"]),
        st.lists(st.tuples(_value, _score), max_size=5),
        max_size=9,
    )
)
def test_never_raises_and_returns_one_of_the_options(opts):
    got = choose_jointly(INVOICE, opts)
    assert set(got) == set(opts)
    for name, c in got.items():
        if opts[name]:
            assert c.value in [v for v, _ in opts[name]]
        else:
            assert c.value is None


# --------------------------------------------------------------------------- cash rounding


def test_cash_rounded_total_hand_computed():
    from confidence.calls.consistency import cash_rounded

    cands = [("127.37", 10), ("150,00", 14), ("127.35", 12), ("-0.02", 11)]
    assert cash_rounded(("127.37", 10), cands) == ("127.35", 12)
    assert cash_rounded(("127.35", 12), cands) is None  # a multiple of 0.05 already
    assert cash_rounded(("127.37", 12), cands) is None  # the rounded amount is not under it
    assert cash_rounded(("127.37", 10), [("127.30", 12), ("127.25", 13)]) is None  # 0.07, 0.12
    # rounded down or up, the first in rank order within one step
    assert cash_rounded(("127.37", 10), [("127.30", 12), ("127.40", 13)]) == ("127.40", 13)
    assert cash_rounded(("14,38", 3), [("14,40", 5)]) == ("14,40", 5)  # decimal commas
    assert cash_rounded(("9.97", 3), [("10.00", 5)], step="0.10") == ("10.00", 5)
    assert cash_rounded((None, None), cands) is None
    assert cash_rounded(("12.37", 3), [("12.35", 5)], top_k=0) is None


@given(
    cents=st.integers(min_value=1, max_value=10**7),
    later=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_cash_rounded_returns_a_multiple_of_the_step_within_one_step(cents, later):
    from decimal import Decimal

    from confidence.calls.consistency import cash_rounded

    x = Decimal(cents) / 100
    y = (x * 20).quantize(Decimal(1)) / 20
    cands = [(f"{y:.2f}", 5 if later else 1), (f"{x + 1:.2f}", 6)]
    got = cash_rounded((f"{x:.2f}", 3), cands)
    if x % Decimal("0.05") == 0 or not later:
        assert got is None
    else:
        assert got == (f"{y:.2f}", 5)
        assert Decimal(got[0]) % Decimal("0.05") == 0 and abs(Decimal(got[0]) - x) < Decimal("0.05")
